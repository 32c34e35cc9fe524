/* bounds.c: every dim constant or bounded before planning and codegen.
 *
 * Requires: inferred graph with symbols bound (--shape/--dim N) or given a
 * range (--dim N=LO..HI). Every value a live node or graph output touches
 * must have a dtype and dims that are constants or expressions over
 * run-time symbols (ir.h, OX_RT_*) whose range is known, so that the plan
 * can reserve its storage at the most it can hold. A run-time size with no
 * bound the compiler derived (a Range's length, a Resize to sizes read
 * from an input) takes the one the user gave (--max NAME=N, --max-elems N)
 * or is an error naming the value and those flags; an unbound symbol is an
 * error naming it, never a silent 1.
 */
#include "opt.h"
#include <stdlib.h>
#include <string.h>

/* the user's bound for value v's elements (--max NAME=N, then --max-elems), or -1 */
static int64_t user_cap(const ox_graph *g, const ox_value *v)
{
	for (int i = 0; i < g->ncaps; i++)
		if (!strcmp(g->caps[i].name, v->name))
			return g->caps[i].elems;
	return g->max_elems > 0 ? g->max_elems : -1;
}

/* a value of unbounded size gets the user's bound: its data symbols are
 * at most that many (the other dims are at least 1 when it holds any) */
static void apply_cap(ox_graph *g, ox_value *v, int64_t cap)
{
	for (int d = 0; d < v->shape.rank; d++) {
		const ox_dexpr *e = ox_dim_rtsym(g, v->shape.d[d]);
		if (e && e->rt == OX_RT_DATA && (e->hi < 0 || e->hi > cap))
			OX_DX(g)->dexprs[-v->shape.d[d] - 1].hi = cap;
	}
	if (v->cap <= 0 || v->cap > cap)
		v->cap = cap;
}

static int check_value(ox_graph *g, const ox_node *n, ox_id id)
{
	ox_value *v = &g->vals[id];
	if (!v->has_shape)
		return ox_error(g, n, "value '%s' has no known shape; give it with --shape %s=D0xD1x...",
				v->name, v->name);
	for (int d = 0; d < v->shape.rank; d++) {
		int64_t x = ox_dim_eval(g, v->shape.d[d]);
		if (x >= 0) {
			v->shape.d[d] = x;
			continue;
		}
		int64_t lo, hi;
		if (!ox_dim_range(g, v->shape.d[d], &lo, &hi)) {
			if (lo >= 0)
				continue; /* a run-time dim; its bound is checked below */
			char e[256];
			ox_dim_str(g, v->shape.d[d], e, sizeof e);
			return ox_error(g, n, "value '%s' dim %d (%s) is negative for some inputs in the ranges "
					"given: raise the smallest (--dim, --shape LO..HI)", v->name, d, e);
		}
		const char *sym = ox_dim_unbound(g, v->shape.d[d]);
		if (sym && sym[0] == '?')
			return ox_error(g, n, "value '%s' dim %d is unknown in the model; "
					"give the input shapes with --shape", v->name, d);
		return ox_error(g, n, "value '%s' dim %d depends on the unbound symbol '%s'; "
				"bind it with --dim %s=N or give it a range with --dim %s=LO..HI", v->name, d,
				sym ? sym : "?", sym ? sym : "?", sym ? sym : "?");
	}
	int64_t cap = user_cap(g, v);
	if (ox_shape_is_rt(g, &v->shape) && cap > 0) {
		int64_t m = ox_value_max_storage(g, v);
		if (m < 0 || m > cap)
			apply_cap(g, v, cap);
	}
	if (ox_shape_is_rt(g, &v->shape) && ox_value_max_storage(g, v) < 0) {
		char sh[256];
		ox_shape_str(g, &v->shape, sh, sizeof sh);
		return ox_error(g, n, "value '%s' (%s%s) has a size known only at run time, and the compiler "
				"cannot bound it; give its most elements with --max %s=N (or --max-elems N for "
				"every such value): a run that needs more returns the _ERR_SHAPE code",
				v->name, ox_dtype_name(v->dtype), sh, v->name);
	}
	/* symbols bound by --dim / --shape are checked here, like inferred
	 * shapes in ox_infer_node; run-time shapes at their most */
	int64_t most = ox_value_max_storage(g, v), es = ox_dtype_size(v->dtype) ? (int64_t)ox_dtype_size(v->dtype) : 8;
	if (ox_shape_is_const(&v->shape) ? ox_shape_too_big(&v->shape, v->dtype)
					 : most < 0 || most > OX_MAX_BYTES / es)
		return ox_error(g, n, "value '%s' is too large (2^48 bytes or more)", v->name);
	return 0;
}

int ox_opt_bounds(ox_graph *g)
{
	char *seen = calloc(g->nvals + 1, 1);
	int rc = 0;
	for (int k = 0; k < g->ninputs && !rc; k++) {
		seen[g->inputs[k]] = 1;
		rc = check_value(g, NULL, g->inputs[k]);
	}
	for (int i = 0; i < g->nnodes && !rc; i++) {
		ox_node *n = &g->nodes[i];
		for (int k = 0; k < n->nin + n->nout && !rc; k++) {
			ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
			if (id < 0 || seen[id])
				continue;
			seen[id] = 1;
			rc = check_value(g, n, id);
		}
	}
	for (int k = 0; k < g->noutputs && !rc; k++)
		if (!seen[g->outputs[k]])
			rc = check_value(g, NULL, g->outputs[k]);
	/* a run-time extent (v->dyn) is reported to the caller for graph
	 * outputs only: no node can read such a tensor */
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes && !rc; i++) {
		ox_node *n = &g->nodes[i];
		for (int k = 0; k < n->nin && !rc; k++) {
			ox_value *v = ox_in(g, n, k);
			if (!v || !v->dyn)
				continue;
			ox_node *p = v->producer >= 0 ? &g->nodes[v->producer] : NULL;
			rc = ox_error(g, n, "input %d '%s' has a size known only at run time (from %s '%s', at most "
				      "%lld along axis %d): only a graph output may; tensors of data-dependent size "
				      "cannot feed other ops in the C target yet", k, v->name, p ? p->optype : "?",
				      p ? p->name : "", (long long)v->shape.d[v->dyn - 1], v->dyn - 1);
		}
	}
	free(seen);
	return rc;
}
