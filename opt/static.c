/* static.c: require constant shapes before planning and codegen.
 *
 * Requires: inferred graph with symbols bound (--shape/--dim). Every
 * value a live node or graph output touches must have a dtype and only
 * constant dims; otherwise the error names the value and the unbound
 * symbol, never a silent 1.
 */
#include "opt.h"
#include <stdlib.h>

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
		const char *sym = ox_dim_unbound(g, v->shape.d[d]);
		if (sym && sym[0] == '?')
			return ox_error(g, n, "value '%s' dim %d is unknown in the model; "
					"give the input shapes with --shape", v->name, d);
		return ox_error(g, n, "value '%s' dim %d depends on the unbound symbol '%s'; "
				"bind it with --dim %s=N", v->name, d, sym ? sym : "?", sym ? sym : "?");
	}
	/* symbols bound by --dim / --shape are checked here, like inferred
	 * shapes in ox_infer_node */
	if (ox_shape_too_big(&v->shape, v->dtype))
		return ox_error(g, n, "value '%s' is too large (2^48 bytes or more)", v->name);
	return 0;
}

int ox_opt_static(ox_graph *g)
{
	char *seen = calloc(g->nvals + 1, 1);
	int rc = 0;
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
	for (int k = 0; k < g->ninputs && !rc; k++)
		rc = check_value(g, NULL, g->inputs[k]);
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
