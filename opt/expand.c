/* expand.c: control flow, sequences and optionals, expanded at compile time.
 *
 * The C target has static shapes and no heap, so the ops of ops.def flagged
 * OX_F_EXPAND are replaced, while fold walks the graph, by the plain ops
 * they amount to for the values known at compile time:
 *   If        a constant condition inlines the branch taken; otherwise both
 *             branches are inlined and Where selects (same dtypes and shapes
 *             required: the C code computes both, which is correct because
 *             ONNX ops have no side effects)
 *   Loop      unrolled one iteration per visit while the trip count and the
 *             condition are constants (the condition the body computes must
 *             fold); scan outputs are stacked with Unsqueeze + Concat
 *   Scan      unrolled over the (static) scan axis, opset 8 batches too
 *   SequenceMap  the body inlined once per element
 *   sequences and optionals: OX_V_AGG values that list their parts, so
 *             SequenceAt / SequenceLength / OptionalHasElement ... resolve
 *             to parts and constants, ConcatFromSequence to Concat,
 *             SplitToSequence to Split
 *   FlexAttention  MatMul, Softmax and its score_mod / prob_mod bodies
 *   ONNX Runtime's contrib ops: FastGelu, BiasGelu, QuickGelu and the skip
 *             and simplified layer norms as Add, Gelu, Sigmoid, Mul,
 *             LayerNormalization and RMSNormalization
 * Subgraph bodies are inlined with ox_expand_inline: each body value gets
 * a fresh value; names the body captures from enclosing scopes resolve
 * through the chain of inlinings (ox_env) that produced the node, then the
 * top graph. An expansion appends nodes; fold re-sorts and walks again.
 * Unrolling stops at EXPAND_MAX_NODES nodes with an error, never silently.
 */
#include "expand.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#define EXPAND_MAX_NODES 200000

struct ox_env {
	struct ox_env *parent;
	ox_graph *body; /* the subgraph inlined */
	ox_id *map;     /* body value id -> value id in the top graph */
};

static int counter; /* suffix making inlined names unique (deterministic per run) */

/* ---- small builders ---- */

const char *ox_expand_name(ox_graph *g, const char *base)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%.400s~%d", base, ++counter);
	return ox_ir_strdup(g, buf);
}

ox_id ox_expand_value(ox_graph *g, const char *base)
{
	return ox_ir_add_value(g, ox_expand_name(g, base), OX_V_INTERNAL);
}

/* a node of op at the given opset; output k gets value out[k] or a fresh one */
ox_id ox_expand_add_node(ox_graph *g, int op, const char *name, int opset, int nin, const ox_id *in, int nout,
		      const ox_id *out)
{
	ox_id id = ox_ir_add_node(g, op, ox_ops[op].name, name, nin, nout);
	ox_node *n = &g->nodes[id];
	n->opset = opset;
	for (int k = 0; k < nin; k++)
		n->in[k] = in[k];
	for (int k = 0; k < nout; k++) {
		ox_id v = out && out[k] >= 0 ? out[k] : ox_expand_value(g, name);
		g->nodes[id].out[k] = v;
		g->vals[v].producer = id;
	}
	return id;
}

ox_id ox_expand_out(ox_graph *g, ox_id nid)
{
	return g->nodes[nid].out[0];
}

void ox_expand_attr_int(ox_graph *g, ox_id nid, const char *name, int64_t v)
{
	ox_ir_add_attr(g, &g->nodes[nid], name, OX_AT_INT)->i = v;
}

void ox_expand_attr_ints(ox_graph *g, ox_id nid, const char *name, const int64_t *v, int n)
{
	ox_attr *a = ox_ir_add_attr(g, &g->nodes[nid], name, OX_AT_INTS);
	a->n = n;
	a->ints = ox_ir_alloc(g, (n + 1) * sizeof *v);
	if (n)
		memcpy(a->ints, v, n * sizeof *v);
}

ox_id ox_expand_const_i64(ox_graph *g, const char *base, const int64_t *v, int n, int scalar)
{
	ox_shape s = {scalar ? 0 : 1, {n}};
	ox_tensor *t = ox_ir_new_tensor(g, OX_I64, &s);
	for (int i = 0; i < n; i++)
		ox_tensor_set_i64(t, i, v[i]);
	return ox_ir_add_const(g, ox_expand_name(g, base), t);
}

static ox_id const_bool(ox_graph *g, const char *base, int b)
{
	ox_shape s = {0, {0}};
	ox_tensor *t = ox_ir_new_tensor(g, OX_BOOL, &s);
	((uint8_t *)t->data)[0] = (uint8_t)!!b;
	return ox_ir_add_const(g, ox_expand_name(g, base), t);
}

/* out becomes what src is: an aggregate copy, or an Identity of a tensor */
static void alias(ox_graph *g, ox_id out, ox_id src, const char *name)
{
	if (out < 0)
		return;
	ox_value *s = &g->vals[src];
	if (s->kind == OX_V_AGG) {
		ox_ir_set_agg(g, out, s->agg, s->elems, s->nelems, s->elem_dtype);
		return;
	}
	ox_expand_add_node(g, OX_OP_Identity, name, 16, 1, &src, 1, &out);
}

static int is_agg(const ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].kind == OX_V_AGG;
}

/* the parts of sequence input k of n, or an error */
static int seq_in(ox_graph *g, ox_node *n, int k, ox_value **s)
{
	if (n->in[k] < 0 || !is_agg(g, n->in[k]) || g->vals[n->in[k]].agg != OX_AGG_SEQ)
		return ox_error(g, n, "input %d must be a sequence", k);
	*s = &g->vals[n->in[k]];
	return 0;
}

/* constant integer scalar input k (default dflt when omitted) */
static int const_pos(ox_graph *g, ox_node *n, int k, int64_t dflt, int64_t *pos)
{
	*pos = dflt;
	if (k >= n->nin || n->in[k] < 0)
		return 0;
	int64_t v[2];
	if (ox_in_ints(g, n, k, v, 2) != 1)
		return ox_need_const(g, n, k, "input %d (a position) must be a compile-time constant scalar", k);
	*pos = v[0];
	return 0;
}

static int check_budget(ox_graph *g, ox_node *n, int more)
{
	if (g->nnodes + more > EXPAND_MAX_NODES)
		return ox_error(g, n, "expanding this node would exceed %d nodes; loops are unrolled at "
				"compile time, and this one is too long for that", EXPAND_MAX_NODES);
	return 0;
}

/* ---- inlining a subgraph ---- */

static ox_id env_lookup(ox_graph *g, const struct ox_env *e, const char *name)
{
	for (; e; e = e->parent) {
		ox_id b = ox_ir_find_value(e->body, name);
		if (b >= 0 && e->map[b] >= 0)
			return e->map[b];
	}
	return ox_ir_find_value(g, name);
}

int ox_expand_inline(ox_graph *g, ox_node *site, ox_graph *body, const ox_id *bind, int nbind, ox_id *outs)
{
	if (nbind != body->ninputs)
		return ox_error(g, site, "the subgraph '%s' has %d inputs, %d given", body->name ? body->name : "",
				body->ninputs, nbind);
	if (check_budget(g, site, body->nnodes))
		return -1;
	struct ox_env *env = ox_ir_alloc(g, sizeof *env);
	env->parent = site->env;
	env->body = body;
	env->map = ox_ir_alloc(g, (body->nvals + 1) * sizeof *env->map);
	for (int i = 0; i < body->nvals; i++)
		env->map[i] = -1;
	for (int k = 0; k < nbind; k++)
		env->map[body->inputs[k]] = bind[k];
	const char *site_name = site->name[0] ? site->name : site->optype;
	char prefix[300];
	snprintf(prefix, sizeof prefix, "%.200s/%.80s", site_name, body->name ? body->name : "body");
	for (int i = 0; i < body->nvals; i++) {
		ox_value *bv = &body->vals[i];
		if (env->map[i] >= 0)
			continue;
		if (bv->kind == OX_V_CONST) {
			env->map[i] = ox_ir_add_const(g, ox_expand_name(g, bv->name), bv->data);
		} else if (bv->kind == OX_V_INPUT) {
			ox_id v = env_lookup(g, site->env, bv->name);
			if (v < 0)
				return ox_error(g, site, "the subgraph uses '%s', which no enclosing graph defines",
						bv->name);
			env->map[i] = v;
		}
	}
	for (int i = 0; i < body->nnodes; i++) {
		const ox_node *bn = &body->nodes[i];
		char nm[600];
		snprintf(nm, sizeof nm, "%s/%s", prefix, bn->name[0] ? bn->name : bn->optype);
		ox_id id = ox_ir_add_node(g, bn->op, bn->optype, nm, bn->nin, bn->nout);
		ox_node *n = &g->nodes[id];
		n->domain = bn->domain;
		n->opset = bn->opset;
		n->nattr = bn->nattr;
		n->attrs = bn->attrs;
		n->env = env;
		for (int k = 0; k < bn->nin; k++) {
			if (bn->in[k] < 0)
				continue;
			ox_id v = env->map[bn->in[k]];
			if (v < 0)
				return ox_error(g, site, "subgraph node '%s' reads '%s' before it is defined", nm,
						body->vals[bn->in[k]].name);
			g->nodes[id].in[k] = v;
		}
		for (int k = 0; k < bn->nout; k++) {
			if (bn->out[k] < 0)
				continue;
			ox_id v = ox_expand_value(g, body->vals[bn->out[k]].name);
			g->vals[v].producer = id;
			g->nodes[id].out[k] = v;
			env->map[bn->out[k]] = v;
		}
	}
	for (int k = 0; k < body->noutputs; k++) {
		outs[k] = env->map[body->outputs[k]];
		if (outs[k] < 0)
			return ox_error(g, site, "subgraph output '%s' is not defined", body->vals[body->outputs[k]].name);
	}
	return 0;
}

static ox_graph *graph_attr(ox_graph *g, ox_node *n, const char *name)
{
	const ox_attr *a = ox_attr_get(n, name);
	if (!a || a->type != OX_AT_GRAPH || !a->g || !a->g[0]) {
		ox_error(g, n, "attribute '%s' (a graph) is missing", name);
		return NULL;
	}
	return a->g[0];
}

/* ---- regions: the bodies of control nodes kept as C control flow ---- */

static int new_region(ox_graph *g, int kind)
{
	if (g->nregions == 0)
		g->nregions = 1; /* 0 is "no region" */
	g->regions = realloc(g->regions, (size_t)(g->nregions + 1) * sizeof *g->regions);
	if (!g->regions)
		ox_die("out of memory");
	int p = g->cur_region;
	g->regions[g->nregions] = (ox_region){kind, p, p ? g->regions[p].depth + 1 : 1, NULL};
	return g->nregions++;
}

static ox_ctrl *new_ctrl(ox_graph *g, int kind)
{
	ox_ctrl *c = ox_ir_alloc(g, sizeof *c);
	c->kind = kind;
	c->head = -1;
	return c;
}

/* a CtrlHead in the current region whose outputs have the given types
 * (dtypes dt[k], shapes s[k]); fills out[] with them */
static void ctrl_head(ox_graph *g, const char *name, int k, const int *dt, const ox_shape *s, ox_id *out)
{
	ox_id h = ox_expand_add_node(g, OX_OP_CtrlHead, name, 1, 0, NULL, k, NULL);
	for (int j = 0; j < k; j++) {
		out[j] = g->nodes[h].out[j];
		ox_value *v = &g->vals[out[j]];
		v->dtype = dt[j];
		v->has_shape = 1;
		v->shape = s[j];
	}
}

/* node nid waits for the outputs outs[0..n) of its bodies: they become
 * its inputs after its own nin0 */
static void wait_for(ox_graph *g, ox_id nid, const ox_id *outs, int n)
{
	ox_node *nd = &g->nodes[nid];
	ox_id *in = ox_ir_alloc(g, (size_t)(nd->nin + n + 1) * sizeof *in);
	memcpy(in, nd->in, (size_t)nd->nin * sizeof *in);
	memcpy(in + nd->nin, outs, (size_t)n * sizeof *in);
	nd->in = in;
	nd->nin += n;
}

/* Output k of a control node is a when both sides agree (an If's two
 * branches, or a loop-carried value before and after an iteration);
 * dims that differ become data dims of the output, at most the larger
 * (the node writes them when it runs). Only the If may differ. */
static int merge_out(ox_graph *g, ox_id nid, int k, const ox_value *a, const ox_value *b, const char *what)
{
	ox_node *n = &g->nodes[nid];
	char sa[200], sb[200];
	ox_shape_str(g, &a->shape, sa, sizeof sa);
	ox_shape_str(g, &b->shape, sb, sizeof sb);
	if (a->kind == OX_V_AGG || b->kind == OX_V_AGG || a->agg || b->agg)
		return ox_need_const(g, n, 0, "output %d is a sequence or optional and %s is known only at run time: "
				     "the C target needs that structure at compile time", k, what);
	if (a->dtype != b->dtype || a->shape.rank != b->shape.rank)
		return ox_need_const(g, n, 0, "output %d is %s%s one way and %s%s the other: the same dtype and "
				     "rank are needed when %s is known only at run time", k, ox_dtype_name(a->dtype),
				     sa, ox_dtype_name(b->dtype), sb, what);
	ox_shape o = a->shape;
	for (int d = 0; d < o.rank; d++) {
		if (a->shape.d[d] == b->shape.d[d])
			continue;
		int64_t ha = ox_dim_hi(g, a->shape.d[d]), hb = ox_dim_hi(g, b->shape.d[d]);
		o.d[d] = ox_dim_data(g, n->out[k], d, ha < 0 || hb < 0 ? -1 : ha > hb ? ha : hb);
	}
	ox_set_out(g, n, k, a->dtype, &o);
	if (ox_shape_is_rt(g, &o)) {
		int64_t ma = ox_value_max_storage(g, a), mb = ox_value_max_storage(g, b);
		if (ma >= 0 && mb >= 0)
			g->vals[n->out[k]].cap = ma > mb ? ma : mb;
	}
	return 0;
}

/* ---- If ---- */

/* If with a condition known only at run time: both branches are compiled,
 * as regions (the node waits for their outputs), and the node becomes a C
 * if/else over them (opt/outline.c, codegen/c/emit_ctrl.c) */
static int if_real(ox_graph *g, ox_id nid, ox_graph *then_g, ox_graph *else_g)
{
	ox_node *n = &g->nodes[nid];
	int nout = n->nout;
	ox_ctrl *c = n->aux;
	if (!c) {
		ox_id *outs = calloc(2 * (size_t)nout + 1, sizeof *outs);
		int saved = g->cur_region, rc = -1;
		c = new_ctrl(g, OX_RG_THEN);
		c->nin0 = n->nin;
		c->r[0] = new_region(g, OX_RG_THEN);
		c->r[1] = new_region(g, OX_RG_ELSE);
		g->cur_region = c->r[0];
		if (!ox_expand_inline(g, &g->nodes[nid], then_g, NULL, 0, outs)) {
			g->cur_region = c->r[1];
			if (!ox_expand_inline(g, &g->nodes[nid], else_g, NULL, 0, outs + nout))
				rc = 0;
		}
		g->cur_region = saved;
		if (!rc) {
			g->nodes[nid].aux = c;
			wait_for(g, nid, outs, 2 * nout);
		}
		free(outs);
		return rc;
	}
	/* a branch that cannot be inferred for the shapes given (its test is
	 * for shapes they never have, as exporters' scripted code tests
	 * sizes) fails at run time if taken, as ONNX Runtime fails there;
	 * both failing is the model's error */
	const char *f[2] = {g->regions[c->r[0]].failed, g->regions[c->r[1]].failed};
	if (f[0] && f[1]) {
		ox_error(g, n, "neither branch can run with the shapes given:");
		ox_error(g, NULL, "then: %s", f[0]);
		return ox_error(g, NULL, "else: %s", f[1]);
	}
	for (int b = 0; b < 2; b++)
		if (f[b] && !ox_error_hold)
			fprintf(stderr, "%s: warning: node '%s' (If): its %s branch cannot run with the shapes given "
				"(%s); a run that takes it returns the _ERR_SHAPE code\n", g->path, n->name,
				b ? "else" : "then", f[b]);
	for (int k = 0; k < nout; k++) {
		n = &g->nodes[nid];
		const ox_value *a = &g->vals[n->in[c->nin0 + k]], *b = &g->vals[n->in[c->nin0 + nout + k]];
		if (f[0] || f[1]) {
			const ox_value *ok = f[0] ? b : a;
			ox_set_out(g, n, k, ok->dtype, &ok->shape);
			g->vals[n->out[k]].cap = ok->cap;
			if (ok->kind == OX_V_AGG || ok->agg)
				return ox_need_const(g, n, 0, "output %d is a sequence or optional and the condition is "
						     "known only at run time: the C target needs that structure at "
						     "compile time", k);
		} else if (merge_out(g, nid, k, a, b, "the condition")) {
			return -1;
		}
	}
	return 1;
}

static int expand_if(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_graph *then_g = graph_attr(g, n, "then_branch"), *else_g = graph_attr(g, n, "else_branch");
	if (!then_g || !else_g)
		return -1;
	int nout = n->nout;
	if (then_g->noutputs != nout || else_g->noutputs != nout)
		return ox_error(g, n, "the branches have %d and %d outputs, the node %d", then_g->noutputs,
				else_g->noutputs, nout);
	const ox_tensor *c = ox_in_const(g, n, 0);
	if (!c)
		return if_real(g, nid, then_g, else_g);
	/* a constant condition: the branch taken, inlined */
	ox_id *outs = calloc(nout + 1, sizeof *outs);
	int rc = -1;
	if (!ox_expand_inline(g, &g->nodes[nid], ox_tensor_get_i64(c, 0) ? then_g : else_g, NULL, 0, outs)) {
		g->nodes[nid].dead = 1;
		for (int k = 0; k < nout; k++)
			alias(g, g->nodes[nid].out[k], outs[k], g->nodes[nid].name);
		rc = 0;
	}
	free(outs);
	return rc;
}

/* ---- stacking per-step results: Unsqueeze each at axis, Concat ---- */

static int stack(ox_graph *g, ox_node *site, const ox_id *parts, int n, int64_t axis, int reverse, ox_id out)
{
	if (n == 0)
		return ox_error(g, site, "zero iterations: the stacked output's shape is unknown");
	ox_id *un = calloc(n + 1, sizeof *un);
	const char *name = site->name;
	ox_id ax = ox_expand_const_i64(g, "axes", &axis, 1, 0);
	for (int i = 0; i < n; i++) {
		ox_id in[2] = {parts[reverse ? n - 1 - i : i], ax};
		ox_id u = ox_expand_add_node(g, OX_OP_Unsqueeze, name, 13, 2, in, 1, NULL);
		un[i] = g->nodes[u].out[0];
	}
	ox_id c = ox_expand_add_node(g, OX_OP_Concat, name, 13, n, un, 1, &out);
	ox_expand_attr_int(g, c, "axis", axis);
	free(un);
	return 0;
}

/* ---- Loop ---- */

typedef struct {
	int kind;    /* 0 (an ox_ctrl, which shares n->aux, has its region kind here) */
	int64_t iter;
	int nscan;
	int *n, *cap;
	ox_id **acc; /* per scan output: the values of each iteration */
} loop_state;

/* does body output 0 (the condition) stay what it came in as, or a constant? */
static int cond_passes(const ox_graph *body)
{
	ox_id co = body->outputs[0], ci = body->ninputs > 1 ? body->inputs[1] : -1;
	if (co == ci || body->vals[co].kind == OX_V_CONST)
		return 1;
	for (int i = 0; i < body->nnodes; i++) {
		const ox_node *b = &body->nodes[i];
		if (b->nout == 1 && b->out[0] == co)
			return b->op == OX_OP_Identity && b->nin == 1 && b->in[0] == ci;
	}
	return 0;
}

/* Unroll this Loop (at compile time, one iteration per visit)? When its
 * trip count and condition are constants, the body does not compute a
 * new condition from data, and the copies stay within --unroll nodes;
 * otherwise it is a loop in the C code. */
static int loop_unrolls(ox_graph *g, const ox_node *n, const ox_graph *body)
{
	int64_t m = -1, v[2];
	if (n->in[0] >= 0 && ox_in_ints(g, n, 0, v, 2) != 1)
		return 0;
	if (n->in[0] >= 0)
		m = v[0];
	const ox_tensor *c = n->in[1] >= 0 ? ox_in_const(g, n, 1) : NULL;
	if (n->in[1] >= 0 && !c)
		return 0;
	if (c && !ox_tensor_get_i64(c, 0))
		return 1; /* no iteration */
	if (m < 0)
		return 0; /* runs until its body says stop */
	if (n->in[1] >= 0 && !cond_passes(body))
		return 0;
	/* a sequence or optional carried along: only unrolling knows its parts */
	for (int k = 2; k < n->nin; k++)
		if (n->in[k] >= 0 && (g->vals[n->in[k]].kind == OX_V_AGG || g->vals[n->in[k]].agg))
			return 1;
	return m * (body->nnodes + 4) <= ox_ir_root(g)->unroll;
}

/* Is carried value j of a Loop a sequence its body only appends to? It
 * starts empty (SequenceEmpty), and the body's input for it feeds one
 * SequenceInsert at the end (no position), whose result is the body's
 * output for it and nothing else's input (nor named by a nested body).
 * Such a sequence is a scan output: each iteration's element, stacked. */
static int appends_only(ox_graph *g, const ox_node *n, const ox_graph *body, int j)
{
	const ox_value *v0 = &g->vals[n->in[2 + j]];
	if (v0->kind != OX_V_AGG || v0->agg != OX_AGG_SEQ || v0->nelems != 0)
		return 0;
	ox_id in = body->inputs[2 + j], out = body->outputs[1 + j];
	int ins = 0, ok = 0;
	for (int i = 0; i < body->nnodes; i++) {
		const ox_node *b = &body->nodes[i];
		for (int k = 0; k < b->nin; k++) {
			if (b->in[k] == out)
				return 0;
			if (b->in[k] != in)
				continue;
			ins++;
			ok = b->op == OX_OP_SequenceInsert && k == 0 && (b->nin < 3 || b->in[2] < 0) && b->nout == 1 &&
			     b->out[0] == out;
		}
		for (int a = 0; a < b->nattr; a++)
			for (int s = 0; s < b->attrs[a].n && (b->attrs[a].type == OX_AT_GRAPH || b->attrs[a].type == OX_AT_GRAPHS); s++)
				if (ox_ir_find_value(b->attrs[a].g[s], body->vals[in].name) >= 0 ||
				    ox_ir_find_value(b->attrs[a].g[s], body->vals[out].name) >= 0)
					return 0;
	}
	for (int k = 0; k < body->noutputs; k++)
		if (k != 1 + j && body->outputs[k] == out)
			return 0;
	return ins == 1 && ok;
}

/* A Loop in the C code: its body is a region that starts each iteration
 * with the iteration number, the condition and the carried values (a
 * CtrlHead's outputs); the node waits for the body's outputs, then takes
 * the carried values' types (which may not change between iterations) and
 * stacks each scan output along a first dim, the iteration count, which
 * it computes (at most the trip count, when that has a bound). */
/* the input that makes Loop n's length a run-time one: its trip count, or
 * where that is a constant its condition (what a refusal hints at) */
static int loop_rt_input(const ox_graph *g, const ox_node *n)
{
	return n->in[0] >= 0 && g->vals[n->in[0]].kind != OX_V_CONST ? 0 : 1;
}

static int loop_real(ox_graph *g, ox_id nid, ox_graph *body)
{
	ox_node *n = &g->nodes[nid];
	ox_ctrl *c = n->aux;
	int ncarried = (c ? c->nin0 : n->nin) - 2, nscan = n->nout - ncarried;
	if (!c) {
		int nf = 2 + ncarried;
		int *dt = calloc((size_t)nf + 1, sizeof *dt);
		ox_shape *sh = calloc((size_t)nf + 1, sizeof *sh);
		ox_id *outs = calloc((size_t)body->noutputs + 1, sizeof *outs);
		int rc = -1;
		dt[0] = OX_I64, dt[1] = OX_BOOL;
		char *stacked = ox_ir_alloc(g, (size_t)ncarried + 1);
		for (int j = 0; j < ncarried; j++) {
			ox_value *v = &g->vals[n->in[2 + j]];
			if ((stacked[j] = (char)appends_only(g, n, body, j))) {
				dt[2 + j] = v->elem_dtype ? v->elem_dtype : OX_F32;
				continue;
			}
			if (v->kind == OX_V_AGG || v->agg) {
				ox_need_const(g, n, loop_rt_input(g, n), "carried value %d is a sequence or optional, and the "
					      "loop's length is known only at run time: the C target needs its structure at "
					      "compile time", j);
				goto out1;
			}
			dt[2 + j] = v->dtype;
			sh[2 + j] = v->shape;
		}
		c = new_ctrl(g, OX_RG_LOOP);
		c->nin0 = n->nin;
		c->r[0] = new_region(g, OX_RG_LOOP);
		c->nformal = nf;
		c->formal = ox_ir_alloc(g, (size_t)(nf + 1) * sizeof *c->formal);
		c->stacked = stacked;
		int saved = g->cur_region;
		g->cur_region = c->r[0];
		ctrl_head(g, g->nodes[nid].name, nf, dt, sh, c->formal);
		c->head = c->formal[0];
		/* an appended sequence starts each iteration empty: the append
		 * gives the iteration's element alone */
		ox_id *bind = calloc((size_t)nf + 1, sizeof *bind);
		memcpy(bind, c->formal, (size_t)nf * sizeof *bind);
		for (int j = 0; j < ncarried; j++)
			if (stacked[j])
				bind[2 + j] = ox_ir_add_agg(g, ox_expand_name(g, "appended"), OX_AGG_SEQ, NULL, 0, dt[2 + j]);
		rc = ox_expand_inline(g, &g->nodes[nid], body, bind, nf, outs);
		free(bind);
		g->cur_region = saved;
		if (!rc) {
			g->nodes[nid].aux = c;
			wait_for(g, nid, outs, body->noutputs);
		}
	out1:
		free(dt), free(sh), free(outs);
		return rc;
	}
	if (g->regions[c->r[0]].failed)
		return ox_error(g, n, "its body cannot run with the shapes given: %s", g->regions[c->r[0]].failed);
	const ox_id *outs = n->in + c->nin0;
	const ox_value *co = &g->vals[outs[0]];
	if (co->dtype != OX_BOOL || ox_shape_numel(&co->shape) != 1)
		return ox_error(g, n, "the body's condition output must be one bool");
	/* the iteration count: at most the trip count's top */
	int64_t hi = -1, v[2];
	ox_sv mv[2];
	if (n->in[0] >= 0 && ox_in_ints(g, n, 0, v, 2) == 1)
		hi = v[0] < 0 ? 0 : v[0];
	else if (n->in[0] >= 0 && ox_in_svals(g, n, 0, mv, 2) == 1 && mv[0].kind == OX_SV_DIM)
		hi = ox_dim_hi(g, mv[0].d);
	ox_dim t = 0;
	for (int j = 0; j < ncarried; j++) {
		n = &g->nodes[nid];
		if (c->stacked[j]) {
			/* the body's output is the iteration's element, the node's the
			 * sequence of them, stacked */
			ox_value *b = &g->vals[outs[1 + j]];
			if (b->kind != OX_V_AGG || b->nelems != 1)
				return ox_error(g, n, "carried sequence %d: the body's append did not give one element", j);
			n->in[c->nin0 + 1 + j] = b->elems[0];
			n->in[2 + j] = -1; /* it starts empty */
			const ox_value *y = &g->vals[b->elems[0]];
			if (y->shape.rank + 1 > OX_MAX_RANK)
				return ox_error(g, n, "carried sequence %d would have rank %d", j, y->shape.rank + 1);
			if (n->out[j] < 0)
				continue;
			if (!t)
				t = ox_dim_data(g, n->out[j], 0, hi);
			ox_shape sh = {y->shape.rank + 1, {t}};
			memcpy(sh.d + 1, y->shape.d, (size_t)y->shape.rank * sizeof *sh.d);
			ox_set_out(g, n, j, y->dtype, &sh);
			g->vals[n->out[j]].stacked = 1;
			continue;
		}
		const ox_value *a = &g->vals[n->in[2 + j]], *b = &g->vals[outs[1 + j]];
		int same = a->dtype == b->dtype && a->shape.rank == b->shape.rank;
		for (int d = 0; same && d < a->shape.rank; d++)
			same = a->shape.d[d] == b->shape.d[d];
		if (!same) {
			char sa[200], sb[200];
			ox_shape_str(g, &a->shape, sa, sizeof sa);
			ox_shape_str(g, &b->shape, sb, sizeof sb);
			return ox_need_const(g, n, loop_rt_input(g, n), "carried value %d is %s%s before an iteration and "
					     "%s%s after it: a loop whose trip count is known only at run time must keep "
					     "its values' types and shapes (one of constant length is unrolled)", j,
					     ox_dtype_name(a->dtype), sa, ox_dtype_name(b->dtype), sb);
		}
		ox_set_out(g, n, j, a->dtype, &a->shape);
		if (a->cap > 0 && n->out[j] >= 0)
			g->vals[n->out[j]].cap = a->cap;
	}
	for (int s = 0; s < nscan; s++) {
		n = &g->nodes[nid];
		ox_id o = n->out[ncarried + s];
		const ox_value *y = &g->vals[outs[1 + ncarried + s]];
		if (o < 0)
			continue;
		if (y->shape.rank + 1 > OX_MAX_RANK)
			return ox_error(g, n, "scan output %d would have rank %d", s, y->shape.rank + 1);
		if (!t)
			t = ox_dim_data(g, o, 0, hi);
		ox_shape sh = {y->shape.rank + 1, {t}};
		memcpy(sh.d + 1, y->shape.d, (size_t)y->shape.rank * sizeof *sh.d);
		ox_set_out(g, n, ncarried + s, y->dtype, &sh);
	}
	return 1;
}

static int expand_loop(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_graph *body = graph_attr(g, n, "body");
	if (!body)
		return -1;
	loop_state *st0 = n->aux;
	if (st0 && st0->kind) /* a loop in the C code, waiting for its body */
		return loop_real(g, nid, body);
	int ncarried = n->nin - 2;
	int nscan = n->nout - ncarried;
	if (nscan < 0 || body->ninputs != 2 + ncarried || body->noutputs != 1 + ncarried + nscan)
		return ox_error(g, n, "the body has %d inputs and %d outputs; the node carries %d values",
				body->ninputs, body->noutputs, ncarried);
	loop_state *st = n->aux;
	if (!st && !loop_unrolls(g, n, body))
		return loop_real(g, nid, body);
	if (!st) {
		st = ox_ir_alloc(g, sizeof *st);
		st->nscan = nscan;
		st->n = ox_ir_alloc(g, (nscan + 1) * sizeof *st->n);
		st->cap = ox_ir_alloc(g, (nscan + 1) * sizeof *st->cap);
		st->acc = ox_ir_alloc(g, (nscan + 1) * sizeof *st->acc);
		n->aux = st;
	}
	int64_t m = -1;
	if (n->in[0] >= 0) {
		int64_t v[2];
		if (ox_in_ints(g, n, 0, v, 2) != 1)
			return ox_need_const(g, n, 0, "the trip count must be a compile-time constant: loops are "
					     "unrolled");
		m = v[0];
	}
	int go = 1;
	if (n->in[1] >= 0) {
		const ox_tensor *c = ox_in_const(g, n, 1);
		if (!c) {
			if (st->iter == 0)
				return ox_need_const(g, n, 1, "the loop condition must be a compile-time constant: "
						     "loops are unrolled");
			return ox_error(g, n, "the condition computed by iteration %lld is not a compile-time "
					"constant: loops whose exit depends on data are not supported",
					(long long)st->iter - 1);
		}
		go = ox_tensor_get_i64(c, 0) != 0;
	} else if (m < 0) {
		return ox_error(g, n, "a loop with neither a trip count nor a condition never ends");
	}
	if (m >= 0 && st->iter >= m)
		go = 0;
	if (!go) {
		n->dead = 1;
		for (int j = 0; j < ncarried; j++)
			alias(g, g->nodes[nid].out[j], g->nodes[nid].in[2 + j], g->nodes[nid].name);
		for (int s = 0; s < nscan; s++) {
			n = &g->nodes[nid];
			if (n->out[ncarried + s] >= 0 &&
			    stack(g, n, st->acc[s], st->n[s], 0, 0, n->out[ncarried + s]))
				return -1;
		}
		return 0;
	}
	ox_id *bind = calloc(2 + ncarried + 1, sizeof *bind), *outs = calloc(body->noutputs + 1, sizeof *outs);
	int rc = -1;
	bind[0] = ox_expand_const_i64(g, "iter", &st->iter, 1, 1);
	n = &g->nodes[nid];
	bind[1] = n->in[1] >= 0 ? n->in[1] : const_bool(g, "cond", 1);
	for (int j = 0; j < ncarried; j++)
		bind[2 + j] = g->nodes[nid].in[2 + j];
	if (ox_expand_inline(g, &g->nodes[nid], body, bind, 2 + ncarried, outs))
		goto out;
	n = &g->nodes[nid];
	if (n->in[1] >= 0)
		n->in[1] = outs[0];
	for (int j = 0; j < ncarried; j++)
		n->in[2 + j] = outs[1 + j];
	for (int s = 0; s < nscan; s++) {
		if (st->n[s] == st->cap[s]) {
			int cap = st->cap[s] ? 2 * st->cap[s] : 8;
			ox_id *a = ox_ir_alloc(g, cap * sizeof *a);
			if (st->n[s])
				memcpy(a, st->acc[s], st->n[s] * sizeof *a);
			st->acc[s] = a;
			st->cap[s] = cap;
		}
		st->acc[s][st->n[s]++] = outs[1 + ncarried + s];
	}
	st->iter++;
	rc = 0;
out:
	free(bind);
	free(outs);
	return rc;
}

/* ---- Scan ---- */

static int64_t attr_at(const ox_node *n, const char *name, int k, int64_t dflt)
{
	const int64_t *v;
	int c = ox_attr_ints(n, name, &v);
	return c > k ? v[k] : dflt;
}

/* element idx of x along axis, the axis removed (Gather with a scalar index) */
static ox_id take(ox_graph *g, ox_node *site, ox_id x, int64_t axis, int64_t idx)
{
	ox_id in[2] = {x, ox_expand_const_i64(g, "idx", &idx, 1, 1)};
	ox_id gn = ox_expand_add_node(g, OX_OP_Gather, site->name, 13, 2, in, 1, NULL);
	ox_expand_attr_int(g, gn, "axis", axis);
	return g->nodes[gn].out[0];
}

/* one pass of the body over scan inputs xs (already without a batch axis) */
static int scan_run(ox_graph *g, ox_id nid, ox_graph *body, int nstate, int nx, ox_id *state, const ox_id *xs,
		    const int64_t *in_axes, int64_t len, ox_id **scan_parts)
{
	int nscan = body->noutputs - nstate;
	ox_id *bind = calloc(nstate + nx + 1, sizeof *bind), *outs = calloc(body->noutputs + 1, sizeof *outs);
	int rc = -1;
	for (int64_t t = 0; t < len; t++) {
		memcpy(bind, state, nstate * sizeof *bind);
		for (int k = 0; k < nx; k++) {
			/* take() adds nodes, which may move g->nodes: n is read
			 * again after each */
			int rev = (int)attr_at(&g->nodes[nid],
					       g->nodes[nid].opset >= 9 ? "scan_input_directions" : "directions", k, 0);
			bind[nstate + k] = take(g, &g->nodes[nid], xs[k], in_axes[k], rev ? len - 1 - t : t);
		}
		if (ox_expand_inline(g, &g->nodes[nid], body, bind, nstate + nx, outs))
			goto out;
		memcpy(state, outs, nstate * sizeof *state);
		for (int s = 0; s < nscan; s++)
			scan_parts[s][t] = outs[nstate + s];
	}
	rc = 0;
out:
	free(bind);
	free(outs);
	return rc;
}

/* A Scan (opset 9 on) in the C code: its body is a region that starts
 * each step with the states and a slice of each scan input (a CtrlHead's
 * outputs); the node waits for the body's outputs, keeps the states'
 * types and stacks each scan output along its axis, as long as the scan
 * inputs' axis (a dim, maybe a run-time one). */
static int scan_real(ox_graph *g, ox_id nid, ox_graph *body, int nstate, int nx)
{
	ox_node *n = &g->nodes[nid];
	int nscan = n->nout - nstate;
	ox_ctrl *c = n->aux;
	if (!c) {
		int nf = nstate + nx, rc = -1;
		int *dt = calloc((size_t)nf + 1, sizeof *dt);
		ox_shape *sh = calloc((size_t)nf + 1, sizeof *sh);
		ox_id *outs = calloc((size_t)body->noutputs + 1, sizeof *outs);
		ox_dim len = -1;
		for (int j = 0; j < nf; j++) {
			ox_value *v = &g->vals[n->in[j]];
			if (v->kind == OX_V_AGG || v->agg) {
				ox_error(g, n, "input %d is a sequence or optional", j);
				goto out1;
			}
			dt[j] = v->dtype;
			sh[j] = v->shape;
			if (j < nstate)
				continue;
			int a = ox_norm_axis(attr_at(n, "scan_input_axes", j - nstate, 0), v->shape.rank);
			if (a < 0) {
				ox_error(g, n, "scan input %d: axis out of range", j - nstate);
				goto out1;
			}
			if (len != -1 && v->shape.d[a] != len) {
				ox_error(g, n, "the scan inputs must have one length along their scan axes");
				goto out1;
			}
			len = v->shape.d[a];
			sh[j].rank--;
			memmove(sh[j].d + a, sh[j].d + a + 1, (size_t)(sh[j].rank - a) * sizeof *sh[j].d);
		}
		c = new_ctrl(g, OX_RG_SCAN);
		c->nin0 = n->nin;
		c->r[0] = new_region(g, OX_RG_SCAN);
		c->nformal = nf;
		c->formal = ox_ir_alloc(g, (size_t)(nf + 1) * sizeof *c->formal);
		int saved = g->cur_region;
		g->cur_region = c->r[0];
		ctrl_head(g, g->nodes[nid].name, nf, dt, sh, c->formal);
		c->head = c->formal[0];
		rc = ox_expand_inline(g, &g->nodes[nid], body, c->formal, nf, outs);
		g->cur_region = saved;
		if (!rc) {
			g->nodes[nid].aux = c;
			wait_for(g, nid, outs, body->noutputs);
		}
	out1:
		free(dt), free(sh), free(outs);
		return rc;
	}
	if (g->regions[c->r[0]].failed)
		return ox_error(g, n, "its body cannot run with the shapes given: %s", g->regions[c->r[0]].failed);
	const ox_id *outs = n->in + c->nin0;
	ox_dim len = -1;
	for (int j = 0; j < nstate; j++) {
		n = &g->nodes[nid];
		const ox_value *a = &g->vals[n->in[j]], *b = &g->vals[outs[j]];
		int same = a->dtype == b->dtype && a->shape.rank == b->shape.rank;
		for (int d = 0; same && d < a->shape.rank; d++)
			same = a->shape.d[d] == b->shape.d[d];
		if (!same)
			return ox_error(g, n, "state %d changes its type or shape between steps", j);
		ox_set_out(g, n, j, a->dtype, &a->shape);
	}
	n = &g->nodes[nid];
	const ox_value *x0 = &g->vals[n->in[nstate]];
	len = x0->shape.d[ox_norm_axis(attr_at(n, "scan_input_axes", 0, 0), x0->shape.rank)];
	for (int s = 0; s < nscan; s++) {
		n = &g->nodes[nid];
		const ox_value *y = &g->vals[outs[nstate + s]];
		if (n->out[nstate + s] < 0)
			continue;
		if (y->shape.rank + 1 > OX_MAX_RANK)
			return ox_error(g, n, "scan output %d would have rank %d", s, y->shape.rank + 1);
		int a = ox_norm_axis(attr_at(n, "scan_output_axes", s, 0), y->shape.rank + 1);
		if (a < 0)
			return ox_error(g, n, "scan output %d: axis out of range", s);
		ox_shape sh = {y->shape.rank + 1, {0}};
		for (int d = 0, k = 0; d < sh.rank; d++)
			sh.d[d] = d == a ? len : y->shape.d[k++];
		ox_set_out(g, n, nstate + s, y->dtype, &sh);
	}
	return 1;
}

static int expand_scan(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_graph *body = graph_attr(g, n, "body");
	if (!body)
		return -1;
	int v8 = n->opset < 9, first = v8 ? 1 : 0;
	int nx = (int)ox_attr_int(n, "num_scan_inputs", 0);
	ox_ctrl *c = n->aux;
	int nstate = (c ? c->nin0 : n->nin) - first - nx, nscan = n->nout - nstate;
	/* a loop in the C code waiting for its body */
	if (!v8 && c)
		return scan_real(g, nid, body, nstate, nx);
	if (nx < 1 || nstate < 0 || nscan < 0 || body->ninputs != nstate + nx || body->noutputs != nstate + nscan)
		return ox_error(g, n, "num_scan_inputs %d does not fit the node and its body", nx);
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && !g->vals[n->in[k]].has_shape)
			return ox_error(g, n, "input %d has no known shape", k);
	/* a loop in the C code unless its length is a constant small enough
	 * to unroll (opset 8's batched form is always unrolled) */
	if (!v8) {
		ox_value *x = &g->vals[n->in[nstate]];
		int a = ox_norm_axis(attr_at(n, "scan_input_axes", 0, 0), x->shape.rank);
		int64_t l = a >= 0 ? x->shape.d[a] : 0;
		if (l < 0 || l * (body->nnodes + 2 * nx + 4) > ox_ir_root(g)->unroll)
			return scan_real(g, nid, body, nstate, nx);
	}
	int64_t *axes = calloc(nx + 1, sizeof *axes);
	ox_id *state = calloc(nstate + 1, sizeof *state), *xs = calloc(nx + 1, sizeof *xs);
	ox_id **parts = calloc(nscan + 1, sizeof *parts);
	ox_id **bparts = calloc(nstate + nscan + 1, sizeof *bparts);
	int rc = -1;
	int64_t len = -1, batch = 1;
	for (int k = 0; k < nx; k++) {
		ox_value *x = &g->vals[n->in[first + nstate + k]];
		int64_t a = v8 ? 1 : attr_at(n, "scan_input_axes", k, 0);
		if (a < 0)
			a += x->shape.rank;
		if (a < 0 || a >= x->shape.rank) {
			ox_error(g, n, "scan input %d: axis out of range", k);
			goto out;
		}
		axes[k] = v8 ? 0 : a;
		int64_t l = x->shape.d[a];
		if (l < 0 || (len >= 0 && l != len)) {
			ox_error(g, n, "the scan inputs must have one static length along their scan axes");
			goto out;
		}
		len = l;
		if (v8)
			batch = x->shape.d[0];
	}
	if (v8 && n->in[0] >= 0) {
		int64_t sl[4096];
		int c = ox_in_ints(g, n, 0, sl, 4096);
		if (c < 0) {
			ox_need_const(g, n, 0, "sequence_lens must be a compile-time constant");
			goto out;
		}
		for (int i = 0; i < c; i++)
			if (sl[i] != len) {
				ox_error(g, n, "sequence_lens shorter than the scan length are not supported");
				goto out;
			}
	}
	if (check_budget(g, n, (int)(batch * len * (body->nnodes + 2 * nx + 4))))
		goto out;
	for (int s = 0; s < nscan; s++)
		parts[s] = calloc(len + 1, sizeof **parts);
	for (int j = 0; j < nstate + nscan; j++)
		bparts[j] = calloc(batch + 1, sizeof **bparts);
	for (int64_t b = 0; b < batch; b++) {
		for (int j = 0; j < nstate; j++) {
			ox_id s0 = g->nodes[nid].in[first + j];
			state[j] = v8 ? take(g, &g->nodes[nid], s0, 0, b) : s0;
		}
		for (int k = 0; k < nx; k++) {
			ox_id x = g->nodes[nid].in[first + nstate + k];
			xs[k] = v8 ? take(g, &g->nodes[nid], x, 0, b) : x;
		}
		if (scan_run(g, nid, body, nstate, nx, state, xs, axes, len, parts))
			goto out;
		for (int j = 0; j < nstate; j++)
			bparts[j][b] = state[j];
		for (int s = 0; s < nscan; s++) {
			n = &g->nodes[nid];
			ox_id dst = v8 ? ox_expand_value(g, n->name) : n->out[nstate + s];
			if (dst < 0)
				continue;
			int64_t oa = v8 ? 0 : attr_at(n, "scan_output_axes", s, 0);
			/* opset 8's directions apply to the inputs only */
			int rev = v8 ? 0 : (int)attr_at(n, "scan_output_directions", s, 0);
			/* a negative axis means the same to Unsqueeze and Concat (rank + 1) */
			if (stack(g, &g->nodes[nid], parts[s], (int)len, oa, rev, dst))
				goto out;
			bparts[nstate + s][b] = dst;
		}
	}
	n = &g->nodes[nid];
	n->dead = 1;
	for (int j = 0; j < nstate + nscan; j++) {
		ox_id out = g->nodes[nid].out[j];
		if (out < 0 || (!v8 && j >= nstate))
			continue;
		if (v8) {
			if (stack(g, &g->nodes[nid], bparts[j], (int)batch, 0, 0, out))
				goto out;
		} else {
			alias(g, out, bparts[j][0], g->nodes[nid].name);
		}
	}
	rc = 0;
out:
	for (int s = 0; s < nscan; s++)
		free(parts[s]);
	for (int j = 0; j < nstate + nscan; j++)
		free(bparts[j]);
	free(parts);
	free(bparts);
	free(axes);
	free(state);
	free(xs);
	return rc;
}

/* ---- SequenceMap ---- */

static int expand_seqmap(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_graph *body = graph_attr(g, n, "body");
	ox_value *s0 = NULL;
	if (!body || seq_in(g, n, 0, &s0))
		return -1;
	int len = s0->nelems, nin = n->nin, nout = n->nout;
	if (body->ninputs != nin || body->noutputs != nout)
		return ox_error(g, n, "the body has %d inputs and %d outputs, the node %d and %d", body->ninputs,
				body->noutputs, nin, nout);
	for (int k = 1; k < nin; k++)
		if (is_agg(g, n->in[k]) && g->vals[n->in[k]].nelems != len)
			return ox_error(g, n, "input %d is a sequence of %d, input 0 of %d", k,
					g->vals[n->in[k]].nelems, len);
	ox_id *bind = calloc(nin + 1, sizeof *bind), *outs = calloc(nout + 1, sizeof *outs);
	ox_id *res = calloc((size_t)nout * len + 1, sizeof *res);
	int rc = -1;
	for (int i = 0; i < len; i++) {
		n = &g->nodes[nid];
		for (int k = 0; k < nin; k++) {
			ox_id v = n->in[k];
			bind[k] = is_agg(g, v) ? g->vals[v].elems[i] : v;
		}
		if (ox_expand_inline(g, &g->nodes[nid], body, bind, nin, outs))
			goto out;
		for (int k = 0; k < nout; k++)
			res[(size_t)k * len + i] = outs[k];
	}
	n = &g->nodes[nid];
	n->dead = 1;
	for (int k = 0; k < nout; k++)
		if (n->out[k] >= 0)
			ox_ir_set_agg(g, n->out[k], OX_AGG_SEQ, res + (size_t)k * len, len, 0);
	rc = 0;
out:
	free(bind);
	free(outs);
	free(res);
	return rc;
}

/* ---- sequence and optional ops ---- */

static int norm_pos(ox_graph *g, ox_node *n, int64_t pos, int len, int insert)
{
	int64_t hi = insert ? len : len - 1;
	if (pos < 0)
		pos += len;
	if (pos < 0 || pos > hi)
		return ox_error(g, n, "position %lld is outside the sequence of %d", (long long)pos, len), -1;
	return (int)pos;
}

/* A sequence a loop appended to, held stacked ([T, elem...], ox_value.
 * stacked): ConcatFromSequence, SequenceLength and SequenceAt read it as
 * tensor ops; nothing else can. */
static int stacked_op(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_id s = n->in[0], out = n->out[0];
	const ox_value *sv = &g->vals[s];
	int r = sv->shape.rank; /* 1 + the elements' rank */
	const char *name = n->name;
	switch (n->op) {
	case OX_OP_ConcatFromSequence: {
		int64_t newax = ox_attr_int(n, "new_axis", 0);
		int64_t a = ox_attr_int(n, "axis", 0);
		a = a < 0 ? a + (newax ? r : r - 1) : a;
		if (a < 0 || a >= (newax ? r : r - 1))
			return ox_error(g, n, "axis %lld out of range", (long long)ox_attr_int(n, "axis", 0));
		int64_t perm[OX_MAX_RANK];
		/* the stacking axis moves to a (new_axis) or next to element axis a */
		int at = newax ? (int)a : (int)a;
		for (int i = 0, k = 1; i < r; i++)
			perm[i] = i == at ? 0 : k++;
		ox_id x = s;
		if (at) {
			ox_id tr = ox_expand_add_node(g, OX_OP_Transpose, name, 13, 1, &s, 1, newax ? &out : NULL);
			ox_expand_attr_ints(g, tr, "perm", perm, r);
			x = g->nodes[tr].out[0];
		}
		g->nodes[nid].dead = 1;
		if (newax) {
			if (!at)
				alias(g, out, s, name);
			return 0;
		}
		/* concatenate along a: [.., T, d_a, ..] merged into [.., T * d_a, ..],
		 * the target from the shape (shape arithmetic, folded or symbolic) */
		ox_id shp = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Shape, name, 13, 1, &x, 1, NULL));
		int64_t bounds[4] = {0, a, a + 2, r};
		ox_id piece[3];
		for (int p = 0; p < 3; p++) {
			int64_t st = p == 1 ? a : bounds[p], en = p == 1 ? a + 1 : p == 0 ? a : r;
			if (p == 2)
				st = a + 2;
			ox_id in[3] = {shp, ox_expand_const_i64(g, "starts", &st, 1, 0), ox_expand_const_i64(g, "ends", &en, 1, 0)};
			piece[p] = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Slice, name, 13, 3, in, 1, NULL));
		}
		int64_t next = a + 1, after = a + 2;
		ox_id in2[3] = {shp, ox_expand_const_i64(g, "starts", &next, 1, 0), ox_expand_const_i64(g, "ends", &after, 1, 0)};
		ox_id da = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Slice, name, 13, 3, in2, 1, NULL));
		ox_id mul_in[2] = {piece[1], da};
		piece[1] = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Mul, name, 13, 2, mul_in, 1, NULL));
		ox_id cat = ox_expand_add_node(g, OX_OP_Concat, name, 13, 3, piece, 1, NULL);
		ox_expand_attr_int(g, cat, "axis", 0);
		ox_id rin[2] = {x, g->nodes[cat].out[0]};
		ox_expand_add_node(g, OX_OP_Reshape, name, 13, 2, rin, 1, &out);
		return 0;
	}
	case OX_OP_SequenceLength: {
		ox_id sh = ox_expand_add_node(g, OX_OP_Shape, name, 13, 1, &s, 1, NULL);
		int64_t zero = 0;
		ox_id in[2] = {g->nodes[sh].out[0], ox_expand_const_i64(g, "first", &zero, 1, 1)};
		ox_expand_add_node(g, OX_OP_Gather, name, 13, 2, in, 1, &out);
		g->nodes[nid].dead = 1;
		return 0;
	}
	case OX_OP_SequenceAt: {
		ox_id in[2] = {s, n->in[1]};
		ox_id ga = ox_expand_add_node(g, OX_OP_Gather, name, 13, 2, in, 1, &out);
		ox_expand_attr_int(g, ga, "axis", 0);
		g->nodes[nid].dead = 1;
		return 0;
	}
	}
	return ox_error(g, n, "input 0 is a sequence a loop built with a run-time trip count: only "
			"ConcatFromSequence, SequenceAt and SequenceLength can read it");
}

static int expand_seq_op(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_id out = n->out[0];
	ox_value *s = NULL;
	int64_t pos;
	if (n->nin > 0 && n->in[0] >= 0 && g->vals[n->in[0]].stacked)
		return stacked_op(g, nid);
	switch (n->op) {
	case OX_OP_SequenceConstruct:
		for (int k = 1; k < n->nin; k++)
			if (g->vals[n->in[k]].dtype != g->vals[n->in[0]].dtype)
				return ox_error(g, n, "the tensors of a sequence must have one dtype");
		n->dead = 1;
		ox_ir_set_agg(g, out, OX_AGG_SEQ, n->in, n->nin, g->vals[n->in[0]].dtype);
		return 0;
	case OX_OP_SequenceEmpty:
		n->dead = 1;
		ox_ir_set_agg(g, out, OX_AGG_SEQ, NULL, 0, (int)ox_attr_int(n, "dtype", OX_F32));
		return 0;
	case OX_OP_SequenceInsert: {
		if (seq_in(g, n, 0, &s) || const_pos(g, n, 2, s->nelems, &pos))
			return -1;
		int p = norm_pos(g, n, pos, s->nelems, 1);
		if (p < 0)
			return -1;
		if (s->nelems && g->vals[n->in[1]].dtype != s->elem_dtype && s->elem_dtype)
			return ox_error(g, n, "inserting %s into a sequence of %s", ox_dtype_name(g->vals[n->in[1]].dtype),
					ox_dtype_name(s->elem_dtype));
		ox_id *e = calloc(s->nelems + 2, sizeof *e);
		memcpy(e, s->elems, p * sizeof *e);
		e[p] = n->in[1];
		memcpy(e + p + 1, s->elems + p, (s->nelems - p) * sizeof *e);
		n->dead = 1;
		ox_ir_set_agg(g, out, OX_AGG_SEQ, e, s->nelems + 1, g->vals[n->in[1]].dtype);
		free(e);
		return 0;
	}
	case OX_OP_SequenceErase: {
		if (seq_in(g, n, 0, &s) || const_pos(g, n, 1, -1, &pos))
			return -1;
		int p = norm_pos(g, n, pos, s->nelems, 0);
		if (p < 0)
			return -1;
		ox_id *e = calloc(s->nelems + 1, sizeof *e);
		memcpy(e, s->elems, p * sizeof *e);
		memcpy(e + p, s->elems + p + 1, (s->nelems - p - 1) * sizeof *e);
		n->dead = 1;
		ox_ir_set_agg(g, out, OX_AGG_SEQ, e, s->nelems - 1, s->elem_dtype);
		free(e);
		return 0;
	}
	case OX_OP_SequenceAt: {
		if (seq_in(g, n, 0, &s) || const_pos(g, n, 1, 0, &pos))
			return -1;
		int p = norm_pos(g, n, pos, s->nelems, 0);
		if (p < 0)
			return -1;
		n->dead = 1;
		alias(g, out, s->elems[p], n->name);
		return 0;
	}
	case OX_OP_SequenceLength: {
		if (seq_in(g, n, 0, &s))
			return -1;
		int64_t len = s->nelems;
		ox_shape sh = {0, {0}};
		ox_tensor *t = ox_ir_new_tensor(g, OX_I64, &sh);
		ox_tensor_set_i64(t, 0, len);
		n->dead = 1;
		ox_ir_set_const(g, out, t);
		g->vals[out].producer = -1;
		return 0;
	}
	case OX_OP_ConcatFromSequence: {
		if (seq_in(g, n, 0, &s))
			return -1;
		if (!s->nelems)
			return ox_error(g, n, "the sequence is empty: there is nothing to concatenate");
		int64_t axis = ox_attr_int(n, "axis", 0), newax = ox_attr_int(n, "new_axis", 0);
		int len = s->nelems;
		ox_id *e = calloc(len + 1, sizeof *e);
		memcpy(e, s->elems, len * sizeof *e);
		n->dead = 1;
		if (newax) {
			ox_node site = *n;
			if (stack(g, &site, e, len, axis, 0, out)) {
				free(e);
				return -1;
			}
		} else {
			ox_id c = ox_expand_add_node(g, OX_OP_Concat, n->name, 13, len, e, 1, &out);
			ox_expand_attr_int(g, c, "axis", axis);
		}
		free(e);
		return 0;
	}
	case OX_OP_SplitToSequence: {
		ox_value *x = &g->vals[n->in[0]];
		if (!x->has_shape || !ox_shape_is_const(&x->shape))
			return ox_error(g, n, "the input's shape must be static");
		int64_t axis = ox_attr_int(n, "axis", 0), keep = ox_attr_int(n, "keepdims", 1);
		if (axis < 0)
			axis += x->shape.rank;
		if (axis < 0 || axis >= x->shape.rank)
			return ox_error(g, n, "axis out of range");
		int64_t dim = x->shape.d[axis], sizes[4096];
		int m = 0, has_split = n->nin > 1 && n->in[1] >= 0;
		if (has_split) {
			int c = ox_in_ints(g, n, 1, sizes, 4096);
			if (c < 0)
				return ox_need_const(g, n, 1, "split must be a compile-time constant");
			if (g->vals[n->in[1]].shape.rank == 0) {
				int64_t chunk = sizes[0];
				if (chunk <= 0)
					return ox_error(g, n, "split must be positive");
				for (int64_t done = 0; done < dim; done += chunk)
					sizes[m++] = done + chunk <= dim ? chunk : dim - done;
			} else {
				m = c;
			}
		} else {
			for (int64_t i = 0; i < dim && m < 4096; i++)
				sizes[m++] = 1;
		}
		if (m <= 0 || m >= 4096)
			return ox_error(g, n, "splitting into %d parts is not supported", m);
		ox_id in[2] = {n->in[0], ox_expand_const_i64(g, "split", sizes, m, 0)};
		ox_id sp = ox_expand_add_node(g, OX_OP_Split, g->nodes[nid].name, 18, 2, in, m, NULL);
		ox_expand_attr_int(g, sp, "axis", axis);
		ox_id *parts = calloc(m + 1, sizeof *parts);
		for (int i = 0; i < m; i++)
			parts[i] = g->nodes[sp].out[i];
		if (!has_split && !keep) {
			ox_id ax = ox_expand_const_i64(g, "axes", &axis, 1, 0);
			for (int i = 0; i < m; i++) {
				ox_id sin[2] = {parts[i], ax};
				ox_id q = ox_expand_add_node(g, OX_OP_Squeeze, g->nodes[nid].name, 13, 2, sin, 1, NULL);
				parts[i] = g->nodes[q].out[0];
			}
		}
		n = &g->nodes[nid];
		n->dead = 1;
		ox_ir_set_agg(g, n->out[0], OX_AGG_SEQ, parts, m, g->vals[n->in[0]].dtype);
		free(parts);
		return 0;
	}
	case OX_OP_Optional:
		n->dead = 1;
		if (n->nin > 0 && n->in[0] >= 0)
			ox_ir_set_agg(g, out, OX_AGG_OPT, n->in, 1, 0);
		else
			ox_ir_set_agg(g, out, OX_AGG_OPT, NULL, 0, 0);
		return 0;
	case OX_OP_OptionalHasElement: {
		ox_id v = n->nin > 0 ? n->in[0] : -1;
		int has = v >= 0 && !(is_agg(g, v) && g->vals[v].agg == OX_AGG_OPT && g->vals[v].nelems == 0);
		ox_shape sh = {0, {0}};
		ox_tensor *t = ox_ir_new_tensor(g, OX_BOOL, &sh);
		((uint8_t *)t->data)[0] = (uint8_t)has;
		n->dead = 1;
		ox_ir_set_const(g, out, t);
		g->vals[out].producer = -1;
		return 0;
	}
	case OX_OP_OptionalGetElement: {
		ox_id v = n->in[0];
		if (is_agg(g, v) && g->vals[v].agg == OX_AGG_OPT) {
			if (!g->vals[v].nelems)
				return ox_error(g, n, "the optional is empty");
			v = g->vals[v].elems[0];
		}
		n->dead = 1;
		alias(g, out, v, n->name);
		return 0;
	}
	}
	return ox_error(g, n, "no expansion for this op");
}

/* ---- FlexAttention (ai.onnx.preview) ----
 * Y = prob_mod(Softmax(score_mod((Q @ K^T) * scale))) @ V, the bodies
 * inlined on the whole [B, H, L, S] tensors; GQA repeats each K/V head for
 * its contiguous group of query heads (Unsqueeze, Expand, Reshape). */

static ox_id repeat_heads(ox_graph *g, ox_node *site, ox_id x, const ox_value *xv, int64_t group)
{
	int64_t ax = 2, b = xv->shape.d[0], h = xv->shape.d[1], s = xv->shape.d[2], e = xv->shape.d[3];
	int64_t full[5] = {b, h, group, s, e}, flat[4] = {b, h * group, s, e};
	ox_id in[2] = {x, ox_expand_const_i64(g, "axes", &ax, 1, 0)};
	ox_id u = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Unsqueeze, site->name, 13, 2, in, 1, NULL));
	ox_id ein[2] = {u, ox_expand_const_i64(g, "shape", full, 5, 0)};
	ox_id ex = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Expand, site->name, 13, 2, ein, 1, NULL));
	ox_id rin[2] = {ex, ox_expand_const_i64(g, "shape", flat, 4, 0)};
	return ox_expand_out(g, ox_expand_add_node(g, OX_OP_Reshape, site->name, 14, 2, rin, 1, NULL));
}

static int expand_flex(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	ox_value *q = ox_in(g, n, 0), *k = ox_in(g, n, 1), *v = ox_in(g, n, 2);
	if (!q || !k || !v)
		return ox_error(g, n, "Q, K and V are required");
	if (q->shape.rank != 4 || k->shape.rank != 4 || v->shape.rank != 4 || !ox_shape_is_const(&q->shape) ||
	    !ox_shape_is_const(&k->shape) || !ox_shape_is_const(&v->shape))
		return ox_error(g, n, "Q, K and V must be rank-4 tensors of static shape");
	if (!ox_dtype_is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
		return ox_error(g, n, "Q, K and V must have one floating-point dtype");
	int64_t hq = q->shape.d[1], hkv = k->shape.d[1];
	if (v->shape.d[1] != hkv || hkv <= 0 || hq % hkv)
		return ox_error(g, n, "q_num_heads (%lld) must be a multiple of kv_num_heads (%lld)", (long long)hq,
				(long long)hkv);
	const ox_attr *sa = ox_attr_get(n, "scale");
	double scale = sa ? sa->f : 1.0 / sqrt((double)q->shape.d[3]);
	int dt = q->dtype;
	ox_id kk = n->in[1], vv = n->in[2], qq = n->in[0];
	if (hq != hkv) {
		ox_value kc = *k, vc = *v;
		kk = repeat_heads(g, &g->nodes[nid], kk, &kc, hq / hkv);
		vv = repeat_heads(g, &g->nodes[nid], vv, &vc, hq / hkv);
	}
	const char *nm = g->nodes[nid].name;
	ox_id kt = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Transpose, nm, 13, 1, &kk, 1, NULL));
	ox_expand_attr_ints(g, g->vals[kt].producer, "perm", (int64_t[]){0, 1, 3, 2}, 4);
	ox_id min[2] = {qq, kt};
	ox_id sc = ox_expand_out(g, ox_expand_add_node(g, OX_OP_MatMul, nm, 13, 2, min, 1, NULL));
	ox_shape s0 = {0, {0}};
	ox_tensor *st = ox_ir_new_tensor(g, dt, &s0);
	ox_tensor_set_f64(st, 0, scale);
	ox_id mulin[2] = {sc, ox_ir_add_const(g, ox_expand_name(g, "scale"), st)};
	ox_id cur = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Mul, nm, 14, 2, mulin, 1, NULL));
	const char *mods[2] = {"score_mod", "prob_mod"};
	for (int m = 0; m < 2; m++) {
		if (m == 1) {
			ox_id sm = ox_expand_add_node(g, OX_OP_Softmax, nm, 13, 1, &cur, 1, NULL);
			ox_expand_attr_int(g, sm, "axis", -1);
			cur = g->nodes[sm].out[0];
		}
		const ox_attr *a = ox_attr_get(&g->nodes[nid], mods[m]);
		if (!a)
			continue;
		if (a->type != OX_AT_GRAPH || !a->g || !a->g[0] || a->g[0]->noutputs != 1)
			return ox_error(g, &g->nodes[nid], "%s must be a graph with one input and one output", mods[m]);
		ox_id o;
		if (ox_expand_inline(g, &g->nodes[nid], a->g[0], &cur, 1, &o))
			return -1;
		cur = o;
	}
	n = &g->nodes[nid];
	n->dead = 1;
	ox_id pin[2] = {cur, vv};
	ox_expand_add_node(g, OX_OP_MatMul, nm, 13, 2, pin, 1, &n->out[0]);
	return 0;
}

/* ---- ONNX Runtime's contrib ops (com.microsoft) ----
 * Each as the standard ops its ONNX Runtime documentation computes:
 *   FastGelu(X, bias?)        Gelu(X + bias, approximate tanh)
 *   BiasGelu(A, B)            Gelu(A + B)
 *   QuickGelu(X; alpha)       X Sigmoid(alpha X)
 *   SkipLayerNormalization(input, skip, gamma, beta?, bias?; epsilon)
 *       s = input + skip (+ bias); LayerNormalization(s, gamma, beta) over
 *       the last axis: output, mean, inv_std_var; s is output 3
 *   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?; epsilon)
 *       the same with RMSNormalization (output 3: s; mean and inv_std_var
 *       are refused)
 *   SimplifiedLayerNormalization(X, scale; axis, epsilon, stash_type)
 *       RMSNormalization (inv_std_var refused)
 *   RotaryEmbedding(input, position_ids, cos_cache, sin_cache)
 *       ai.onnx's RotaryEmbedding (position ids last); [batch, sequence]
 *       position ids only, no packed batching, scale 1
 *   MultiHeadAttention, Attention: ai.onnx's Attention (expand_mha)
 *   EmbedLayerNormalization: Gathers, Add, LayerNormalization (expand_embed)
 *   MatMulIntegerToFloat, DynamicQuantizeMatMul: [DynamicQuantizeLinear,]
 *             MatMulInteger, Cast, Mul, Add (expand_mmitf)
 *   GroupQueryAttention: RotaryEmbedding, Concat, Attention (expand_gqa)
 *   GatherBlockQuantized: Gathers, [BitShift, BitwiseAnd, Concat,]
 *             DequantizeLinear (expand_gbq)
 *   BiasAdd, BiasSplitGelu: Add; Add, Slice, Gelu, Mul (expand_bias)
 * The skip norms' epsilon defaults to 1e-12, the others' to 1e-5, as in
 * ONNX Runtime. */

static ox_id contrib_node(ox_graph *g, int op, const char *nm, int opset, ox_id a, ox_id b, ox_id out)
{
	ox_id in[2] = {a, b}, o[1] = {out};
	return ox_expand_add_node(g, op, nm, opset, b >= 0 ? 2 : 1, in, 1, out >= 0 ? o : NULL);
}

static void attr_float(ox_graph *g, ox_id nid, const char *name, float v)
{
	ox_ir_add_attr(g, &g->nodes[nid], name, OX_AT_FLOAT)->f = v;
}

/* ai.onnx's Attention of 3-D q, k, v ([batch, sequence, heads x head]) as
 * ONNX Runtime's MultiHeadAttention and Attention compute it: keymask, a
 * [batch, total] of 1s and 0s, an additive mask of fill [batch, 1, 1,
 * total] added to abias; with a cache (pk, pv or out[1], out[2]) the
 * values split into heads ([batch, heads, sequence, head]), the presents
 * out[1], out[2] the Concat of the past and the new K, V (the C target's
 * Attention takes no past of run-time length itself), Attention of those
 * and the output back to 3-D. dt: their dtype (the values may not be
 * inferred yet); scale: the attribute, or NULL. */
/* the additive causal mask of a cached attention, its rows aligned to
 * the keys' end (ONNX Runtime's unidirectional; ai.onnx's is_causal
 * aligns them to the start): fill where key j > query i + (T - S), S the
 * queries of q4 [batch, heads, S, head], T the keys of k4; plus mask */
/* x [batch, seq, heads x head] as [batch, heads, seq, head] */
static ox_id heads4(ox_graph *g, const char *nm, ox_id x, int64_t heads)
{
	const int64_t split[4] = {0, 0, heads, -1}, perm[4] = {0, 2, 1, 3};
	ox_id r = ox_expand_out(g, contrib_node(g, OX_OP_Reshape, nm, 14, x, ox_expand_const_i64(g, "shape", split, 4, 0), -1));
	ox_id tr = contrib_node(g, OX_OP_Transpose, nm, 13, r, -1, -1);
	ox_expand_attr_ints(g, tr, "perm", perm, 4);
	return ox_expand_out(g, tr);
}

/* y4 [batch, heads, seq, head] back to [batch, seq, heads x head] as out (or fresh) */
static void merge3(ox_graph *g, const char *nm, ox_id y4, ox_id out)
{
	const int64_t perm[4] = {0, 2, 1, 3}, merge[3] = {0, 0, -1};
	ox_id tr = contrib_node(g, OX_OP_Transpose, nm, 13, y4, -1, -1);
	ox_expand_attr_ints(g, tr, "perm", perm, 4);
	contrib_node(g, OX_OP_Reshape, nm, 14, ox_expand_out(g, tr), ox_expand_const_i64(g, "shape", merge, 3, 0), out);
}

/* Unsqueeze(x, axes[0..n)) */
static ox_id unsqueeze(ox_graph *g, const char *nm, ox_id x, const int64_t *axes, int n)
{
	return ox_expand_out(g, contrib_node(g, OX_OP_Unsqueeze, nm, 13, x, ox_expand_const_i64(g, "axes", axes, n, 0), -1));
}

/* the int64 scalar x.shape[axis], and 0, 1, ..., n - 1 of an int64 scalar n */
static ox_id dim_of(ox_graph *g, const char *nm, ox_id x, int64_t axis)
{
	ox_id sh = ox_expand_out(g, contrib_node(g, OX_OP_Shape, nm, 15, x, -1, -1));
	ox_id ga = contrib_node(g, OX_OP_Gather, nm, 13, sh, ox_expand_const_i64(g, "index", &axis, 1, 1), -1);
	ox_expand_attr_int(g, ga, "axis", 0);
	return g->nodes[ga].out[0];
}

static ox_id iota(ox_graph *g, const char *nm, ox_id n)
{
	const int64_t zero = 0, one = 1;
	ox_id rin[3] = {ox_expand_const_i64(g, "start", &zero, 1, 1), n, ox_expand_const_i64(g, "delta", &one, 1, 1)};
	return ox_expand_out(g, ox_expand_add_node(g, OX_OP_Range, nm, 11, 3, rin, 1, NULL));
}

/* Where(c, fill, 0) of dt, Unsqueezed at axes (or not: naxes 0), plus mask */
static ox_id fill_where(ox_graph *g, const char *nm, int dt, ox_id c, float fill, const int64_t *axes, int naxes,
			ox_id mask)
{
	ox_shape s0 = {0, {0}};
	ox_tensor *f = ox_ir_new_tensor(g, dt, &s0), *z = ox_ir_new_tensor(g, dt, &s0);
	ox_tensor_set_f64(f, 0, fill), ox_tensor_set_f64(z, 0, 0);
	ox_id win[3] = {c, ox_ir_add_const(g, ox_expand_name(g, "fill"), f), ox_ir_add_const(g, ox_expand_name(g, "zero"), z)};
	ox_id m = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Where, nm, 16, 3, win, 1, NULL));
	if (naxes)
		m = unsqueeze(g, nm, m, axes, naxes);
	return mask >= 0 ? ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, mask, m, -1)) : m;
}

/* a key padding mask as an additive one [batch, 1, 1, T], plus mask:
 * [batch, T] 1s and 0s (fill where 0), or [batch] lengths (fill from the
 * length on; T the keys, k.shape[kaxis]) */
static ox_id key_mask(ox_graph *g, const char *nm, int dt, ox_id keymask, ox_id k, int64_t kaxis, float fill, ox_id mask)
{
	const int64_t axes[2] = {1, 2};
	ox_shape s0 = {0, {0}};
	if (g->vals[keymask].shape.rank == 2) {
		ox_tensor *z = ox_ir_new_tensor(g, g->vals[keymask].dtype, &s0);
		ox_tensor_set_f64(z, 0, 0);
		ox_id eq = ox_expand_out(g, contrib_node(g, OX_OP_Equal, nm, 13, keymask, ox_ir_add_const(g, ox_expand_name(g, "zero"), z),
						 -1));
		return fill_where(g, nm, dt, eq, fill, axes, 2, mask);
	}
	const int64_t ax1 = 1;
	ox_id cols = iota(g, nm, dim_of(g, nm, k, kaxis));
	ox_id cast = contrib_node(g, OX_OP_Cast, nm, 13, keymask, -1, -1);
	ox_expand_attr_int(g, cast, "to", OX_I64);
	ox_id len = unsqueeze(g, nm, g->nodes[cast].out[0], &ax1, 1);
	ox_id ge = ox_expand_out(g, contrib_node(g, OX_OP_GreaterOrEqual, nm, 16, cols, len, -1));
	return fill_where(g, nm, dt, ge, fill, axes, 2, mask);
}

static ox_id causal_mask(ox_graph *g, const char *nm, int dt, ox_id q4, ox_id k4, float fill, ox_id mask)
{
	ox_id len[2] = {dim_of(g, nm, q4, 2), dim_of(g, nm, k4, 2)};
	const int64_t ax0 = 0, ax1 = 1;
	ox_id r[2] = {iota(g, nm, len[0]), iota(g, nm, len[1])};
	ox_id past = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, len[1], len[0], -1));
	ox_id rows = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, r[0], past, -1));
	rows = unsqueeze(g, nm, rows, &ax1, 1);
	ox_id cols = unsqueeze(g, nm, r[1], &ax0, 1);
	ox_id gt = ox_expand_out(g, contrib_node(g, OX_OP_Greater, nm, 13, cols, rows, -1));
	return fill_where(g, nm, dt, gt, fill, NULL, 0, mask);
}

/* ai.onnx Attention (opset 23) of ain[0..nin) (q, k, v, an additive
 * mask), its output out (or fresh: -1); *at the node, for attributes.
 * f16 and bf16 values on the C target are cast to f32 and the output
 * back: the contrib ops prescribe no rounding of their steps, and the C
 * target's Attention of f16 needs constant shapes (its blocked kernel,
 * run-time lengths included, is f32; ox_opt_fuse_type). */
static ox_id contrib_attention(ox_graph *g, const char *nm, int dt, const ox_id *ain, int nin, ox_id out, ox_id *at)
{
	const int up = !ox_opt_fuse_type(g, dt) && (dt == OX_F16 || dt == OX_BF16);
	ox_id in[4], o[1] = {out};
	for (int k = 0; k < nin; k++) {
		in[k] = ain[k];
		if (up) {
			const ox_id c = contrib_node(g, OX_OP_Cast, nm, 13, ain[k], -1, -1);
			ox_expand_attr_int(g, c, "to", OX_F32);
			in[k] = ox_expand_out(g, c);
		}
	}
	*at = ox_expand_add_node(g, OX_OP_Attention, nm, 23, nin, in, 1, up || out < 0 ? NULL : o);
	const ox_id y = ox_expand_out(g, *at);
	if (!up)
		return y;
	const ox_id c = contrib_node(g, OX_OP_Cast, nm, 13, y, -1, out);
	ox_expand_attr_int(g, c, "to", dt);
	return ox_expand_out(g, c);
}

static void attend(ox_graph *g, const char *nm, int dt, const ox_id *qkv, ox_id keymask, ox_id abias, ox_id pk,
		   ox_id pv, int whole, const ox_id *out, int64_t heads, int causal, float fill, const ox_attr *scale)
{
	ox_id mask = abias;
	ox_id at;
	if (out[1] < 0 && !whole) { /* no cache: Attention of the 3-D values */
		if (keymask >= 0)
			mask = key_mask(g, nm, dt, keymask, qkv[1], 1, fill, mask);
		ox_id ain[4] = {qkv[0], qkv[1], qkv[2], mask};
		contrib_attention(g, nm, dt, ain, mask >= 0 ? 4 : 3, out[0], &at);
		ox_expand_attr_int(g, at, "q_num_heads", heads);
		ox_expand_attr_int(g, at, "kv_num_heads", heads);
	} else {
		ox_id h4[3] = {heads4(g, nm, qkv[0], heads), heads4(g, nm, qkv[1], heads), heads4(g, nm, qkv[2], heads)};
		for (int t = 1; t <= 2; t++) {
			if (whole) { /* (the caller's keys and values, past and new) */
				h4[t] = t == 1 ? pk : pv;
				continue;
			}
			if (pk < 0) { /* (presents alone: the new K and V) */
				h4[t] = ox_expand_out(g, contrib_node(g, OX_OP_Identity, nm, 16, h4[t], -1, out[t]));
				continue;
			}
			ox_id cin[2] = {t == 1 ? pk : pv, h4[t]}, o[1] = {out[t]};
			ox_id c = ox_expand_add_node(g, OX_OP_Concat, nm, 13, 2, cin, 1, o);
			ox_expand_attr_int(g, c, "axis", 2);
			h4[t] = g->nodes[c].out[0];
		}
		if (keymask >= 0)
			mask = key_mask(g, nm, dt, keymask, h4[1], 2, fill, mask);
		if (causal && pk >= 0) { /* query i sees keys j <= i + past: fill above that, [S, T] */
			mask = causal_mask(g, nm, dt, h4[0], h4[1], fill, mask);
			causal = 0;
		}
		ox_id ain[4] = {h4[0], h4[1], h4[2], mask};
		merge3(g, nm, contrib_attention(g, nm, dt, ain, mask >= 0 ? 4 : 3, -1, &at), out[0]);
	}
	if (causal)
		ox_expand_attr_int(g, at, "is_causal", 1);
	if (scale)
		attr_float(g, at, "scale", scale->f);
}

/* x's [off, off + w) along axis */
static ox_id slice_on(ox_graph *g, const char *nm, ox_id x, int64_t axis, int64_t off, int64_t w)
{
	const int64_t end = off + w;
	ox_id sin[4] = {x, ox_expand_const_i64(g, "start", &off, 1, 0), ox_expand_const_i64(g, "end", &end, 1, 0),
			ox_expand_const_i64(g, "axes", &axis, 1, 0)};
	return ox_expand_out(g, ox_expand_add_node(g, OX_OP_Slice, nm, 13, 4, sin, 1, NULL));
}

/* MultiHeadAttention(query, key, value, bias?, key_padding_mask?,
 * attention_bias?, past_key?, past_value?; num_heads, scale,
 * mask_filter_value, unidirectional): attend() of the 3-D query, key and
 * value, bias added by thirds. Attention(input, weights, bias?,
 * mask_index?, past?, attention_bias?; num_heads, qkv_hidden_sizes, ...):
 * the same of input x weights + bias split by qkv_hidden_sizes (thirds by
 * default), past [2, batch, heads, past, head] and present likewise.
 * unidirectional: is_causal, or with a past causal_mask(). The packed and
 * 4-D forms, length masks (mask_index [batch]), past lengths,
 * cache_indirection, rotary inside, a shared past/present buffer and the
 * qk output are refused. */
static int expand_mha(ox_graph *g, ox_id nid, ox_id *in, int nin, const ox_id *out)
{
	ox_node *n = &g->nodes[nid];
	const char *nm = n->name;
	const int mha = n->op == OX_OP_MultiHeadAttention;
	const int64_t heads = ox_attr_int(n, "num_heads", 0), causal = ox_attr_int(n, "unidirectional", 0);
	const float fill = ox_attr_float(n, "mask_filter_value", -10000.0f);
	const ox_attr *sa = ox_attr_get(n, "scale");
	const ox_id keymask = mha ? in[4] : in[3], abias = in[5]; /* (attention_bias: input 5 of both) */
	ox_id pk = mha ? in[6] : -1, pv = mha ? in[7] : -1, pres[3] = {out[0], out[1], out[2]};
	for (int k = mha ? 8 : 6; k < nin; k++)
		if (in[k] >= 0)
			return ox_error(g, n, "input %d (past_sequence_length, cache_indirection) is not supported", k);
	if (heads <= 0)
		return ox_error(g, n, "num_heads must be positive");
	if ((mha && out[3] >= 0) || ox_attr_int(n, "do_rotary", 0) || ox_attr_int(n, "past_present_share_buffer", 0))
		return ox_error(g, n, "the qk output, do_rotary and past_present_share_buffer are not supported");
	if (keymask >= 0 && g->vals[keymask].shape.rank != 2 && g->vals[keymask].shape.rank != 1)
		return ox_error(g, n, "only a key padding mask of [batch, total sequence] 1s and 0s or [batch] lengths is supported");
	if (g->vals[in[0]].shape.rank != 3 || (mha && (in[1] < 0 || in[2] < 0 || g->vals[in[1]].shape.rank != 3 ||
						       g->vals[in[2]].shape.rank != 3)))
		return ox_error(g, n, "only 3-D query, key and value are supported (not the packed or 4-D forms)");
	if (mha && ((pk >= 0) != (pv >= 0) || (out[1] >= 0) != (out[2] >= 0) || (pk >= 0 && out[1] < 0)))
		return ox_error(g, n, "past_key, past_value, present_key and present_value must come together "
				      "(or the presents alone)");
	ox_id qkv[3] = {in[0], in[1], in[2]};
	int64_t w[3];
	if (mha) {
		for (int t = 0; t < 3; t++)
			w[t] = ox_dim_eval(g, g->vals[qkv[t]].shape.d[2]);
	} else {
		const ox_value *wt = in[1] >= 0 ? &g->vals[in[1]] : NULL;
		const int64_t *hs = NULL;
		if (!wt || wt->shape.rank != 2 || ox_dim_is_rt(g, wt->shape.d[1]))
			return ox_error(g, n, "weights must be a 2-D [input hidden, 3 x hidden] of constant size");
		if (ox_attr_ints(n, "qkv_hidden_sizes", &hs) == 3)
			memcpy(w, hs, sizeof w);
		else
			w[0] = w[1] = w[2] = wt->shape.d[1] / 3;
		if (w[0] + w[1] + w[2] != wt->shape.d[1] || w[0] != w[1])
			return ox_error(g, n, "qkv_hidden_sizes must add up to the weights' columns, Q's equal to K's");
	}
	for (int t = 0; t < 3; t++)
		if (w[t] < 0)
			return ox_error(g, n, "the hidden sizes must be known at compile time");
	if (!mha && (in[4] >= 0 || out[1] >= 0)) { /* past / present [2, batch, heads, sequence, head] */
		if (in[4] >= 0 && out[1] < 0)
			return ox_error(g, n, "a past needs the present output");
		pres[1] = ox_expand_value(g, "present_key"), pres[2] = ox_expand_value(g, "present_value");
	}
	/* the bias (and Attention's product by the weights), by thirds */
	ox_id x = in[0];
	if (!mha) {
		x = ox_expand_out(g, contrib_node(g, OX_OP_MatMul, nm, 13, in[0], in[1], -1));
		if (in[2] >= 0)
			x = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, x, in[2], -1));
	}
	const ox_id bias = mha ? in[3] : -1;
	for (int t = 0, off = 0; t < 3; off += (int)w[t], t++) {
		if (!mha)
			qkv[t] = slice_on(g, nm, x, -1, off, w[t]);
		else if (bias >= 0) {
			qkv[t] = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, qkv[t], slice_on(g, nm, bias, -1, off, w[t]), -1));
		}
	}
	if (!mha && in[4] >= 0) {
		/* the present first, past [2, batch, heads, past, head] and the new
		 * keys and values stacked, its halves the keys and values
		 * attended to: the past copied once (its first half's Gather a
		 * view) */
		const int64_t ax = 0;
		ox_id u[2];
		for (int t = 0; t < 2; t++)
			u[t] = unsqueeze(g, nm, heads4(g, nm, qkv[1 + t], heads), &ax, 1);
		ox_id c = ox_expand_add_node(g, OX_OP_Concat, nm, 13, 2, u, 1, NULL);
		ox_expand_attr_int(g, c, "axis", 0);
		ox_id pin[2] = {in[4], ox_expand_out(g, c)}, po[1] = {out[1]};
		c = ox_expand_add_node(g, OX_OP_Concat, nm, 13, 2, pin, 1, po);
		ox_expand_attr_int(g, c, "axis", 3);
		for (int t = 0; t < 2; t++) {
			const int64_t ix = t;
			ox_id gin[2] = {out[1], ox_expand_const_i64(g, "index", &ix, 1, 1)};
			ox_id ga = ox_expand_add_node(g, OX_OP_Gather, nm, 13, 2, gin, 1, NULL);
			ox_expand_attr_int(g, ga, "axis", 0);
			*(t ? &pv : &pk) = ox_expand_out(g, ga);
		}
		attend(g, nm, g->vals[in[0]].dtype, qkv, keymask, abias, pk, pv, 1, pres, heads, (int)causal, fill, sa);
		return 0;
	}
	attend(g, nm, g->vals[in[0]].dtype, qkv, keymask, abias, pk, pv, 0, pres, heads, (int)causal, fill, sa);
	if (!mha && out[1] >= 0) { /* present: the two stacked */
		const int64_t ax = 0;
		ox_id u[2];
		for (int t = 0; t < 2; t++)
			u[t] = unsqueeze(g, nm, pres[1 + t], &ax, 1);
		ox_id o[1] = {out[1]};
		ox_id c = ox_expand_add_node(g, OX_OP_Concat, nm, 13, 2, u, 1, o);
		ox_expand_attr_int(g, c, "axis", 0);
	}
	return 0;
}

/* EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
 * position_embedding, segment_embedding?, gamma, beta, mask?,
 * position_ids?; epsilon): the Gathers' sum (positions 0.. S-1 without
 * position ids) embedding_sum, LayerNormalization of it output, the count
 * of each row's nonzero mask values mask_index (zeros without a mask) */
static int expand_embed(ox_graph *g, ox_id nid, const ox_id *in, const ox_id *out)
{
	ox_node *n = &g->nodes[nid];
	const char *nm = n->name;
	const float eps = ox_attr_float(n, "epsilon", 1e-12f);
	if (in[0] < 0 || in[2] < 0 || in[3] < 0 || in[5] < 0 || in[6] < 0 || (in[1] >= 0) != (in[4] >= 0))
		return ox_error(g, n, "input_ids, the word and position embeddings, gamma and beta are required, "
				      "segment_ids with segment_embedding");
	ox_id pos = in[8];
	if (pos < 0)
		pos = iota(g, nm, dim_of(g, nm, in[0], 1));
	ox_id e[3] = {in[0], pos, in[1]}, t[3] = {in[2], in[3], in[4]}, sum = -1;
	for (int k = 0; k < 3; k++) {
		if (e[k] < 0)
			continue;
		ox_id ga = contrib_node(g, OX_OP_Gather, nm, 13, t[k], e[k], -1);
		ox_expand_attr_int(g, ga, "axis", 0);
		const ox_id v = g->nodes[ga].out[0];
		const int last = k == 2 || (k == 1 && in[1] < 0);
		sum = sum < 0 ? v : ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, sum, v, last ? out[2] : -1));
	}
	ox_id lin[3] = {sum, in[5], in[6]};
	ox_id ln = ox_expand_add_node(g, OX_OP_LayerNormalization, nm, 17, 3, lin, 1, out);
	ox_expand_attr_int(g, ln, "axis", -1);
	attr_float(g, ln, "epsilon", eps);
	if (out[1] >= 0) {
		ox_shape s0 = {0, {0}};
		const int64_t ax1 = 1;
		ox_id nz;
		if (in[7] >= 0) { /* Cast(mask != 0) summed over the row */
			ox_tensor *z = ox_ir_new_tensor(g, g->vals[in[7]].dtype, &s0);
			ox_tensor_set_f64(z, 0, 0);
			ox_id eq = ox_expand_out(g, contrib_node(g, OX_OP_Equal, nm, 13, in[7], ox_ir_add_const(g, ox_expand_name(g, "zero"), z),
							 -1));
			nz = ox_expand_out(g, contrib_node(g, OX_OP_Not, nm, 1, eq, -1, -1));
		} else { /* (no mask: zeros, ids - ids) */
			nz = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, in[0], in[0], -1));
		}
		/* (counted in f32, exact below 2^24: the float reductions' kernels) */
		ox_id cast = contrib_node(g, OX_OP_Cast, nm, 13, nz, -1, -1);
		ox_expand_attr_int(g, cast, "to", OX_F32);
		ox_id rs = contrib_node(g, OX_OP_ReduceSum, nm, 13, g->nodes[cast].out[0], ox_expand_const_i64(g, "axes", &ax1, 1, 0),
					-1);
		ox_expand_attr_int(g, rs, "keepdims", 0);
		ox_id back = contrib_node(g, OX_OP_Cast, nm, 13, g->nodes[rs].out[0], -1, out[1]);
		ox_expand_attr_int(g, back, "to", OX_I32);
	}
	return 0;
}

/* MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?,
 * b_zero_point?, bias?): Cast(MatMulInteger(A, B, zero points)) times
 * a_scale b_scale, plus bias; DynamicQuantizeMatMul(A, B, b_scale,
 * b_zero_point?, bias?): the same of DynamicQuantizeLinear(A) (the packed
 * integer GEMM takes the product, the Cast folded into its store) */
static int expand_mmitf(ox_graph *g, ox_id nid, const ox_id *in, const ox_id *out)
{
	ox_node *n = &g->nodes[nid];
	const char *nm = n->name;
	const int dyn = n->op == OX_OP_DynamicQuantizeMatMul;
	ox_id a = in[0], as = dyn ? -1 : in[2], bs = dyn ? in[2] : in[3], az = dyn ? -1 : in[4], bz = dyn ? in[3] : in[5];
	const ox_id bias = dyn ? in[4] : in[6];
	if (dyn) {
		ox_id q = ox_expand_add_node(g, OX_OP_DynamicQuantizeLinear, nm, 11, 1, &a, 3, NULL);
		a = g->nodes[q].out[0], as = g->nodes[q].out[1], az = g->nodes[q].out[2];
	}
	ox_id min[4] = {a, in[1], az, bz};
	const int nmin = bz >= 0 ? 4 : az >= 0 ? 3 : 2;
	ox_id p = ox_expand_out(g, ox_expand_add_node(g, OX_OP_MatMulInteger, nm, 10, nmin, min, 1, NULL));
	ox_id c = contrib_node(g, OX_OP_Cast, nm, 13, p, -1, -1);
	ox_expand_attr_int(g, c, "to", OX_F32);
	ox_id scale = ox_expand_out(g, contrib_node(g, OX_OP_Mul, nm, 14, as, bs, -1));
	ox_id y = ox_expand_out(g, contrib_node(g, OX_OP_Mul, nm, 14, ox_expand_out(g, c), scale, bias >= 0 ? -1 : out[0]));
	if (bias >= 0)
		contrib_node(g, OX_OP_Add, nm, 14, y, bias, out[0]);
	return 0;
}

/* a scalar constant of dtype dt */
static ox_id scalar(ox_graph *g, int dt, double v)
{
	ox_shape s0 = {0, {0}};
	ox_tensor *t = ox_ir_new_tensor(g, dt, &s0);
	ox_tensor_set_f64(t, 0, v);
	return ox_ir_add_const(g, ox_expand_name(g, "c"), t);
}

/* GroupQueryAttention(query, key?, value?, past_key?, past_value?,
 * seqlens_k, total_sequence_length, cos_cache?, sin_cache?, position_ids?,
 * attention_bias?; num_heads, kv_num_heads, scale, do_rotary,
 * rotary_interleaved), as ONNX Runtime GenAI's models use it with past and
 * present apart (not one shared buffer). Batch b's past is its first
 * past_b = max(seqlens_k[b] + 1 - S, 0) rows of past_key / past_value
 * (right-padded batches: fewer than the past's rows). Q, K, V (or the
 * packed QKV split), rotated at positions past_b + i (or position_ids)
 * where do_rotary, split into heads; each present the past's first past_b
 * rows, then the new K, V (a GatherElements of their Concat), then zeros,
 * as ONNX Runtime writes it;
 * Attention of those with an additive mask: query i sees keys j <= past_b
 * + i and j <= seqlens_k[b], and with local_window_size w > 0 only j >
 * min(past_b + i, seqlens_k[b]) - w (ONNX Runtime's CPU kernel: w keys,
 * the query's own included; a padded query's window ends at the batch's
 * last key); softcap the Attention's, applied to the scaled scores before
 * the mask and attention_bias as in ONNX Runtime. smooth_softmax and
 * head_sink are refused. */
static int expand_gqa(ox_graph *g, ox_id nid, const ox_id *in, const ox_id *out)
{
	ox_node *n = &g->nodes[nid];
	const char *nm = n->name;
	const int64_t hq = ox_attr_int(n, "num_heads", 0), hkv = ox_attr_int(n, "kv_num_heads", 0);
	const int rotary = ox_attr_int(n, "do_rotary", 0) != 0, il = ox_attr_int(n, "rotary_interleaved", 0) != 0;
	const ox_attr *sa = ox_attr_get(n, "scale");
	if (hq <= 0 || hkv <= 0 || hq % hkv)
		return ox_error(g, n, "num_heads must be a positive multiple of kv_num_heads");
	const int64_t win = ox_attr_int(n, "local_window_size", -1);
	const float cap = ox_attr_float(n, "softcap", 0);
	if (ox_attr_int(n, "smooth_softmax", 0) || in[11] >= 0)
		return ox_error(g, n, "smooth_softmax and head_sink are not supported");
	if (win == 0 || win < -1 || cap < 0)
		return ox_error(g, n, "local_window_size must be -1 (none) or positive, softcap 0 (none) or positive");
	if (in[5] < 0 || (in[3] >= 0) != (in[4] >= 0) || (out[1] >= 0) != (out[2] >= 0) || (in[3] >= 0 && out[1] < 0))
		return ox_error(g, n, "seqlens_k is required; past_key, past_value, present_key and present_value together "
				      "(or the presents alone)");
	if (rotary && (in[7] < 0 || in[8] < 0))
		return ox_error(g, n, "do_rotary needs cos_cache and sin_cache");
	const ox_value *q = &g->vals[in[0]];
	const int dt = q->dtype;
	if (q->shape.rank != 3 || (in[1] >= 0 && g->vals[in[1]].shape.rank != 3) || ox_dim_is_rt(g, q->shape.d[2]))
		return ox_error(g, n, "query (and key, value) must be 3-D, their hidden size known at compile time");
	ox_id qkv[3] = {in[0], in[1], in[2]};
	if (in[1] < 0) { /* packed [batch, seq, (num_heads + 2 kv_num_heads) head] */
		const int64_t d = q->shape.d[2] / (hq + 2 * hkv);
		if (d * (hq + 2 * hkv) != q->shape.d[2])
			return ox_error(g, n, "a packed QKV's hidden size is not a multiple of num_heads + 2 kv_num_heads");
		qkv[0] = slice_on(g, nm, in[0], -1, 0, hq * d);
		qkv[1] = slice_on(g, nm, in[0], -1, hq * d, hkv * d);
		qkv[2] = slice_on(g, nm, in[0], -1, (hq + hkv) * d, hkv * d);
	}
	/* past_b, int64 [batch, 1] */
	const int64_t ax1 = 1, ax13[2] = {1, 3};
	ox_id sq = dim_of(g, nm, in[0], 1);
	ox_id c64 = contrib_node(g, OX_OP_Cast, nm, 13, in[5], -1, -1);
	ox_expand_attr_int(g, c64, "to", OX_I64);
	ox_id pastb = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, ox_expand_out(g, c64), scalar(g, OX_I64, 1), -1));
	pastb = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, pastb, sq, -1));
	pastb = ox_expand_out(g, contrib_node(g, OX_OP_Max, nm, 13, pastb, scalar(g, OX_I64, 0), -1));
	pastb = unsqueeze(g, nm, pastb, &ax1, 1);
	ox_id rows = iota(g, nm, sq);							/* [S] */
	ox_id last = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, pastb, rows, -1));	/* past_b + i, [B, S] */
	if (rotary) {
		const ox_id pos = in[9] >= 0 ? in[9] : last;
		for (int t = 0; t < 2; t++) {
			ox_id rin[4] = {qkv[t], in[7], in[8], pos};
			ox_id re = ox_expand_add_node(g, OX_OP_RotaryEmbedding, nm, 23, 4, rin, 1, NULL);
			ox_expand_attr_int(g, re, "interleaved", il);
			ox_expand_attr_int(g, re, "num_heads", t ? hkv : hq);
			qkv[t] = ox_expand_out(g, re);
		}
	}
	ox_id h4[3] = {heads4(g, nm, qkv[0], hq), heads4(g, nm, qkv[1], hkv), heads4(g, nm, qkv[2], hkv)};
	for (int t = 1; t <= 2; t++) {
		if (in[3] < 0) {
			if (out[t] >= 0)
				h4[t] = ox_expand_out(g, contrib_node(g, OX_OP_Identity, nm, 16, h4[t], -1, out[t]));
			continue;
		}
		/* one batch (a constant 1): a row of zeros after the new rows,
		 * which the Gather below takes for the rows past the total */
		const int one = !ox_dim_is_rt(g, q->shape.d[0]) && q->shape.d[0] == 1;
		ox_id cin[3] = {in[2 + t], h4[t], -1};
		if (one) {
			ox_id fin[3] = {scalar(g, OX_BOOL, 0), slice_on(g, nm, h4[t], 2, 0, 1), scalar(g, dt, 0)};
			cin[2] = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Where, nm, 16, 3, fin, 1, NULL));
		}
		ox_id c = ox_expand_add_node(g, OX_OP_Concat, nm, 13, 2 + one, cin, 1, NULL);
		ox_expand_attr_int(g, c, "axis", 2);
		const ox_id cat = ox_expand_out(g, c);
		/* row j of batch b: j < past_b ? j : j + P - past_b, at most T - 1 */
		ox_id tot = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, dim_of(g, nm, in[2 + t], 2), sq, -1));
		ox_id P = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, tot, sq, -1));
		ox_id j = iota(g, nm, tot);
		ox_id inp = ox_expand_out(g, contrib_node(g, OX_OP_Less, nm, 13, j, pastb, -1));		/* [B, T] */
		ox_id sh = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, P, pastb, -1));
		ox_id jn = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, j, sh, -1));
		ox_id win[3] = {inp, j, jn};
		ox_id idx = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Where, nm, 16, 3, win, 1, NULL));
		ox_id tm1 = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, tot, scalar(g, OX_I64, 1), -1));
		idx = ox_expand_out(g, contrib_node(g, OX_OP_Min, nm, 13, idx, tm1, -1));
		/* rows past the batch's total (past_b + S) zero, as ONNX Runtime
		 * writes them */
		ox_id totb = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, pastb, sq, -1));
		ox_id in_b = ox_expand_out(g, contrib_node(g, OX_OP_Less, nm, 13, j, totb, -1));	/* [B, T] */
		if (one) { /* the rows by a [T] index: no index of the present's size */
			ox_id zin[3] = {in_b, idx, tot};
			idx = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Where, nm, 16, 3, zin, 1, NULL));
			const int64_t ax0 = 0;
			ox_id ga = contrib_node(g, OX_OP_Gather, nm, 13, cat,
						ox_expand_out(g, contrib_node(g, OX_OP_Squeeze, nm, 13, idx,
									      ox_expand_const_i64(g, "axes", &ax0, 1, 0), -1)),
						out[t]);
			ox_expand_attr_int(g, ga, "axis", 2);
			h4[t] = ox_expand_out(g, ga);
			continue;
		}
		idx = unsqueeze(g, nm, idx, ax13, 2);
		idx = ox_expand_out(g, contrib_node(g, OX_OP_Expand, nm, 13, idx,
						   ox_expand_out(g, contrib_node(g, OX_OP_Shape, nm, 15, cat, -1, -1)), -1));
		ox_id ge = contrib_node(g, OX_OP_GatherElements, nm, 13, cat, idx, -1);
		ox_expand_attr_int(g, ge, "axis", 2);
		in_b = unsqueeze(g, nm, in_b, ax13, 2);
		ox_id zin[3] = {in_b, ox_expand_out(g, ge), scalar(g, dt, 0)}, zo[1] = {out[t]};
		h4[t] = ox_expand_out(g, ox_expand_add_node(g, OX_OP_Where, nm, 16, 3, zin, 1, zo));
	}
	/* the mask [batch, 1, S, T]: key j > past_b + i masked */
	ox_id cols = iota(g, nm, dim_of(g, nm, h4[1], 2));
	const int64_t ax2 = 2;
	ox_id lim = unsqueeze(g, nm, last, &ax2, 1);
	ox_id bad = ox_expand_out(g, contrib_node(g, OX_OP_Greater, nm, 13, cols, lim, -1));		/* [B, S, T] */
	/* nor past the batch's total (a padded prompt's rows): j > seqlens_k */
	const int64_t ax12[2] = {1, 2};
	ox_id sl = unsqueeze(g, nm, ox_expand_out(g, c64), ax12, 2);
	bad = ox_expand_out(g, contrib_node(g, OX_OP_Or, nm, 7, bad,
					    ox_expand_out(g, contrib_node(g, OX_OP_Greater, nm, 13, cols, sl, -1)), -1));
	if (win > 0) { /* the sliding window: nor keys j <= min(past_b + i, seqlens_k) - local_window_size */
		ox_id lo = ox_expand_out(g, contrib_node(g, OX_OP_Min, nm, 13, lim, sl, -1));
		lo = ox_expand_out(g, contrib_node(g, OX_OP_Sub, nm, 14, lo, scalar(g, OX_I64, (double)win), -1));
		bad = ox_expand_out(g, contrib_node(g, OX_OP_Or, nm, 7, bad,
						    ox_expand_out(g, contrib_node(g, OX_OP_LessOrEqual, nm, 16, cols, lo, -1)), -1));
	}
	ox_id mask = fill_where(g, nm, dt, bad, -3.4028234663852886e38f, &ax1, 1, in[10]);
	ox_id ain[4] = {h4[0], h4[1], h4[2], mask}, at;
	const ox_id y = contrib_attention(g, nm, dt, ain, 4, -1, &at);
	if (sa)
		attr_float(g, at, "scale", sa->f);
	if (cap > 0) /* (before the mask, as ONNX Runtime: Attention's order) */
		attr_float(g, at, "softcap", cap);
	merge3(g, nm, y, out[0]);
	return 0;
}

/* GatherBlockQuantized(data, indices, scales, zero_points?; bits,
 * block_size, gather_axis, quantize_axis), as ONNX Runtime's CPU kernel
 * computes it: the slices of data, scales and zero points that indices
 * pick along gather_axis (Gathers: only the rows asked for are
 * dequantized, an embedding table stays packed), then DequantizeLinear in
 * blocks of block_size along the quantize axis. uint8 data (gather_axis
 * 0, quantize_axis the last, as ONNX Runtime requires) holds 8 / bits
 * values a byte, the first in the low bits, and so do its zero points
 * along the blocks: unpacked by gbq_unpack; without zero points they are
 * 2^(bits - 1). int4 / uint4 data (one value an element in the IR) needs
 * no unpacking; its zero points default to 0. An index out of range is
 * what Gather makes of it (ONNX Runtime writes zeros). */
static ox_id gbq_unpack(ox_graph *g, const char *nm, ox_id x, int rank, int64_t bits)
{
	const int c = (int)(8 / bits);
	const int64_t last = -1;
	ox_id part[4];
	for (int k = 0; k < c; k++) {
		ox_id p = x;
		if (k) {
			ox_id sh = contrib_node(g, OX_OP_BitShift, nm, 11, x, scalar(g, OX_U8, (double)(bits * k)), -1);
			ox_attr *a = ox_ir_add_attr(g, &g->nodes[sh], "direction", OX_AT_STRING);
			a->s = "RIGHT", a->slen = 5;
			p = ox_expand_out(g, sh);
		}
		if (k < c - 1)
			p = ox_expand_out(g, contrib_node(g, OX_OP_BitwiseAnd, nm, 18, p, scalar(g, OX_U8, (double)((1 << bits) - 1)), -1));
		part[k] = unsqueeze(g, nm, p, &last, 1);
	}
	ox_id cat = ox_expand_add_node(g, OX_OP_Concat, nm, 13, c, part, 1, NULL);
	ox_expand_attr_int(g, cat, "axis", -1);
	int64_t shape[OX_MAX_RANK + 1];
	for (int i = 0; i < rank - 1; i++)
		shape[i] = 0;
	shape[rank - 1] = -1;
	return ox_expand_out(g, contrib_node(g, OX_OP_Reshape, nm, 14, ox_expand_out(g, cat),
					     ox_expand_const_i64(g, "shape", shape, rank, 0), -1));
}

static int expand_gbq(ox_graph *g, ox_id nid, const ox_id *in, const ox_id *out)
{
	ox_node *n = &g->nodes[nid];
	const char *nm = n->name;
	const ox_value *data = &g->vals[in[0]], *sc = &g->vals[in[2]];
	const int r = data->shape.rank, ri = g->vals[in[1]].shape.rank, u8 = data->dtype == OX_U8;
	const int64_t bits = ox_attr_int(n, "bits", 4), bs = ox_attr_int(n, "block_size", 128);
	const int ga = ox_norm_axis(ox_attr_int(n, "gather_axis", 0), r), qa = ox_norm_axis(ox_attr_int(n, "quantize_axis", 1), r);
	if (!u8 && data->dtype != OX_U4 && data->dtype != OX_I4)
		return ox_error(g, n, "data of type %s: only uint8, uint4 and int4 are supported", ox_dtype_name(data->dtype));
	if (sc->dtype != OX_F32)
		return ox_error(g, n, "scales of type %s: only float32 is supported", ox_dtype_name(sc->dtype));
	if (bs < 16 || (bs & (bs - 1)))
		return ox_error(g, n, "block_size %lld: it must be a power of 2, 16 or more", (long long)bs);
	if (u8 ? bits != 4 && bits != 8 : bits != 4)
		return ox_error(g, n, "bits %lld: only 4 and 8 for uint8 data, 4 for int4 and uint4", (long long)bits);
	if (ga < 0 || qa < 0 || ga == qa)
		return ox_error(g, n, "gather_axis and quantize_axis must be two different axes of data");
	if (u8 && (ga != 0 || qa != r - 1))
		return ox_error(g, n, "uint8 data: gather_axis must be 0 and quantize_axis the last axis");
	if (sc->shape.rank != r || (in[3] >= 0 && g->vals[in[3]].shape.rank != r) || ox_dim_is_rt(g, sc->shape.d[qa]))
		return ox_error(g, n, "scales (and zero_points) must have data's rank, their blocks known at compile time");
	ox_id pick[3] = {in[0], in[2], in[3]};
	for (int t = 0; t < 3; t++) {
		if (pick[t] < 0)
			continue;
		ox_id ga_n = contrib_node(g, OX_OP_Gather, nm, 13, pick[t], in[1], -1);
		ox_expand_attr_int(g, ga_n, "axis", ga);
		pick[t] = ox_expand_out(g, ga_n);
	}
	const int ro = r - 1 + ri;
	ox_id q = pick[0], s = pick[1], z = pick[2];
	if (u8 && bits < 8) {
		q = gbq_unpack(g, nm, q, ro, bits);
		if (z >= 0) {
			z = gbq_unpack(g, nm, z, ro, bits);
			if (sc->shape.d[qa] % (8 / bits))
				z = slice_on(g, nm, z, -1, 0, sc->shape.d[qa]);
		}
	}
	if (u8 && z < 0) /* 2^(bits - 1), one per block */
		z = ox_expand_out(g, contrib_node(g, OX_OP_Expand, nm, 13, scalar(g, OX_U8, (double)(1 << (bits - 1))),
						   ox_expand_out(g, contrib_node(g, OX_OP_Shape, nm, 15, s, -1, -1)), -1));
	ox_id din[3] = {q, s, z};
	ox_id dq = ox_expand_add_node(g, OX_OP_DequantizeLinear, nm, 21, z >= 0 ? 3 : 2, din, 1, out);
	ox_expand_attr_int(g, dq, "axis", qa < ga ? qa : qa + ri - 1);
	ox_expand_attr_int(g, dq, "block_size", bs);
	return 0;
}

/* BiasAdd(X, bias, skip): X + bias + skip (X and skip [N, S, C], bias
 * [C]); BiasSplitGelu(X, bias): X + bias ([N, S, D], bias [D]) cut in
 * halves along the last axis, the left times Gelu of the right (the erf
 * form) [N, S, D / 2]. ONNX Runtime has them on CUDA only (Stable
 * Diffusion's UNet). */
static int expand_bias(ox_graph *g, ox_id nid, const ox_id *in, const ox_id *out)
{
	ox_node *n = &g->nodes[nid];
	const char *nm = n->name;
	const ox_value *x = &g->vals[in[0]];
	if (n->op == OX_OP_BiasAdd) {
		ox_id xb = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, in[0], in[1], -1));
		contrib_node(g, OX_OP_Add, nm, 14, xb, in[2], out[0]);
		return 0;
	}
	const int64_t d = x->shape.rank == 3 ? ox_dim_eval(g, x->shape.d[2]) : -1;
	if (d < 0 || d % 2)
		return ox_error(g, n, "X must be 3-D, its last dim even and known at compile time");
	ox_id xb = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, in[0], in[1], -1));
	ox_id ge = ox_expand_out(g, contrib_node(g, OX_OP_Gelu, nm, 20, slice_on(g, nm, xb, -1, d / 2, d / 2), -1, -1));
	contrib_node(g, OX_OP_Mul, nm, 14, slice_on(g, nm, xb, -1, 0, d / 2), ge, out[0]);
	return 0;
}

static int expand_contrib(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	const int op = n->op;
	const char *nm = n->name;
	ox_id in[12], out[4] = {-1, -1, -1, -1};
	for (int k = 0; k < 12; k++)
		in[k] = -1;
	for (int k = 0; k < n->nin && k < 12; k++)
		in[k] = n->in[k];
	for (int k = 0; k < n->nout && k < 4; k++)
		out[k] = n->out[k];
	const int skip = op == OX_OP_SkipLayerNormalization || op == OX_OP_SkipSimplifiedLayerNormalization;
	const float eps = ox_attr_float(n, "epsilon", skip ? 1e-12f : 1e-5f), alpha = ox_attr_float(n, "alpha", 1.702f);
	const int64_t axis = ox_attr_int(n, "axis", -1), stash = ox_attr_int(n, "stash_type", 1);
	const int rms = op != OX_OP_SkipLayerNormalization;
	if ((op == OX_OP_SkipSimplifiedLayerNormalization && (out[1] >= 0 || out[2] >= 0)) ||
	    (op == OX_OP_SimplifiedLayerNormalization && out[1] >= 0))
		return ox_error(g, n, "its mean and inv_std_var outputs are not supported (RMSNormalization has none)");
	const int dt = in[0] >= 0 ? g->vals[in[0]].dtype : OX_F32;
	n->dead = 1;
	switch (op) {
	case OX_OP_FastGelu:
	case OX_OP_BiasGelu: {
		ox_id x = in[0];
		if (in[1] >= 0)
			x = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, x, in[1], -1));
		ox_id ge = contrib_node(g, OX_OP_Gelu, nm, 20, x, -1, out[0]);
		if (op == OX_OP_FastGelu) {
			ox_attr *a = ox_ir_add_attr(g, &g->nodes[ge], "approximate", OX_AT_STRING);
			a->s = "tanh", a->slen = 4;
		}
		return 0;
	}
	case OX_OP_QuickGelu: {
		ox_shape s0 = {0, {0}};
		ox_tensor *t = ox_ir_new_tensor(g, dt, &s0);
		ox_tensor_set_f64(t, 0, alpha);
		ox_id ax = ox_expand_out(g, contrib_node(g, OX_OP_Mul, nm, 14, in[0], ox_ir_add_const(g, ox_expand_name(g, "alpha"), t),
						 -1));
		ox_id sg = ox_expand_out(g, contrib_node(g, OX_OP_Sigmoid, nm, 13, ax, -1, -1));
		contrib_node(g, OX_OP_Mul, nm, 14, in[0], sg, out[0]);
		return 0;
	}
	case OX_OP_MsRotaryEmbedding: {
		const ox_value *pos = &g->vals[in[1]];
		if (ox_attr_int(n, "is_packed_batching", 0) || ox_attr_float(n, "scale", 1.0f) != 1.0f)
			return ox_error(g, n, "is_packed_batching and a scale other than 1 are not supported");
		if (pos->shape.rank != 2)
			return ox_error(g, n, "position_ids of rank %d: only [batch, sequence] ones are supported", pos->shape.rank);
		ox_id rin[4] = {in[0], in[2], in[3], in[1]};
		ox_id re = ox_expand_add_node(g, OX_OP_RotaryEmbedding, nm, 23, 4, rin, 1, out);
		ox_expand_attr_int(g, re, "interleaved", ox_attr_int(n, "interleaved", 0));
		ox_expand_attr_int(g, re, "num_heads", ox_attr_int(n, "num_heads", 0));
		ox_expand_attr_int(g, re, "rotary_embedding_dim", ox_attr_int(n, "rotary_embedding_dim", 0));
		return 0;
	}
	case OX_OP_MultiHeadAttention:
	case OX_OP_MsAttention:
		return expand_mha(g, nid, in, n->nin < 10 ? n->nin : 10, out);
	case OX_OP_EmbedLayerNormalization:
		return expand_embed(g, nid, in, out);
	case OX_OP_MatMulIntegerToFloat:
	case OX_OP_DynamicQuantizeMatMul:
		return expand_mmitf(g, nid, in, out);
	case OX_OP_GroupQueryAttention:
		return expand_gqa(g, nid, in, out);
	case OX_OP_GatherBlockQuantized:
		return expand_gbq(g, nid, in, out);
	case OX_OP_BiasAdd:
	case OX_OP_BiasSplitGelu:
		return expand_bias(g, nid, in, out);
	case OX_OP_SkipLayerNormalization:
	case OX_OP_SkipSimplifiedLayerNormalization:
	case OX_OP_SimplifiedLayerNormalization: {
		ox_id x = in[0], scale = in[1];
		if (skip) {
			const ox_id bias = op == OX_OP_SkipLayerNormalization ? in[4] : in[3];
			x = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, in[0], in[1], bias >= 0 ? -1 : out[3]));
			if (bias >= 0)
				x = ox_expand_out(g, contrib_node(g, OX_OP_Add, nm, 14, x, bias, out[3]));
			scale = in[2];
		}
		ox_id ln;
		if (rms) {
			ln = contrib_node(g, OX_OP_RMSNormalization, nm, 23, x, scale, out[0]);
		} else {
			ox_id lin[3] = {x, scale, in[3]};
			ln = ox_expand_add_node(g, OX_OP_LayerNormalization, nm, 17, in[3] >= 0 ? 3 : 2, lin, 3, out);
		}
		ox_expand_attr_int(g, ln, "axis", skip ? -1 : axis);
		attr_float(g, ln, "epsilon", eps);
		if (!skip)
			ox_expand_attr_int(g, ln, "stash_type", stash);
		return 0;
	}
	}
	return ox_error(g, n, "not a contrib op onnxcc expands");
}

/* ---- entry points ---- */

int ox_expand_wanted(const ox_graph *g, const ox_node *n)
{
	if (ox_ops[n->op].flags & OX_F_EXPAND)
		return 1;
	if (n->op == OX_OP_Identity && n->nin == 1 && is_agg(g, n->in[0]))
		return 1;
	return 0;
}

static int expand_node(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	for (int k = 0; k < n->nin; k++) {
		ox_id v = n->in[k];
		if (v >= 0 && g->vals[v].kind == OX_V_INPUT && g->vals[v].agg && g->vals[v].nelems < 0)
			return -1; /* reported once by ox_expand_check_inputs */
	}
	switch (n->op) {
	case OX_OP_If:
		return expand_if(g, nid);
	case OX_OP_Loop:
		return expand_loop(g, nid);
	case OX_OP_Scan:
		return expand_scan(g, nid);
	case OX_OP_SequenceMap:
		return expand_seqmap(g, nid);
	case OX_OP_Identity:
		n->dead = 1;
		alias(g, n->out[0], n->in[0], n->name);
		return 0;
	case OX_OP_FlexAttention:
		return expand_flex(g, nid);
	case OX_OP_FastGelu:
	case OX_OP_BiasGelu:
	case OX_OP_QuickGelu:
	case OX_OP_SkipLayerNormalization:
	case OX_OP_SkipSimplifiedLayerNormalization:
	case OX_OP_SimplifiedLayerNormalization:
	case OX_OP_MsRotaryEmbedding:
	case OX_OP_MultiHeadAttention:
	case OX_OP_MsAttention:
	case OX_OP_EmbedLayerNormalization:
	case OX_OP_MatMulIntegerToFloat:
	case OX_OP_DynamicQuantizeMatMul:
	case OX_OP_GroupQueryAttention:
	case OX_OP_GatherBlockQuantized:
	case OX_OP_BiasAdd:
	case OX_OP_BiasSplitGelu:
		return expand_contrib(g, nid);
	case OX_OP_Gradient:
		return ox_expand_gradient(g, nid);
	}
	return expand_seq_op(g, nid);
}

/* the nodes an expansion makes are in the region of the node it expands */
int ox_expand_node(ox_graph *g, ox_id nid)
{
	int saved = g->cur_region;
	g->cur_region = g->nodes[nid].region;
	int rc = expand_node(g, nid);
	g->cur_region = saved;
	return rc;
}

static void like_hint(ox_graph *g, int i, const char *name)
{
	fprintf(stderr, "%s: hint: graph input #%d '%s' needs an example; to compile for the structure of "
		"one value pass --like %s=FILE\n", g->path, i, name, name);
}

int ox_expand_check_inputs(ox_graph *g)
{
	int bad = 0;
	for (int i = 0; i < g->ninputs; i++) {
		ox_value *v = &g->vals[g->inputs[i]];
		if (v->kind == OX_V_INPUT && v->agg && v->nelems < 0) {
			ox_error(g, NULL, "graph input #%d '%s' is %s: how many tensors it holds, and their "
				 "types and shapes, must be known at compile time", i, v->name,
				 v->agg == OX_AGG_SEQ ? "a sequence" : "an optional");
			like_hint(g, i, v->name);
			bad = 1;
			continue;
		}
		/* a dim nothing binds or ranges (--shape, --dim) would stop the
		 * bounds pass later anyway: say it here, where an example can
		 * still fix it */
		for (int d = 0; !g->symbolic_ok && v->kind == OX_V_INPUT && v->has_shape && d < v->shape.rank; d++) {
			int64_t lo, hi;
			if (ox_dim_eval(g, v->shape.d[d]) >= 0 || !ox_dim_range(g, v->shape.d[d], &lo, &hi))
				continue;
			const char *sym = ox_dim_unbound(g, v->shape.d[d]);
			ox_error(g, NULL, "graph input #%d '%s': dim %d (%s) is not bound; give it with --shape, "
				 "--dim or --like", i, v->name, d, sym && sym[0] != '?' ? sym : "unknown");
			like_hint(g, i, v->name);
			bad = 1;
			break;
		}
	}
	return bad ? -1 : 0;
}

/* Graph inputs and outputs that are aggregates become their tensors, in
 * order; g->in_ports / g->out_ports record the grouping for codegen. */
static int flatten(ox_graph *g, ox_id **list, int *nlist, const char ***names, ox_port **ports, int *nports)
{
	int n = *nlist, cap = 0, m = 0;
	for (int i = 0; i < n; i++) {
		ox_value *v = &g->vals[(*list)[i]];
		cap += v->kind == OX_V_AGG ? v->nelems + 64 : 1;
	}
	ox_id *out = ox_ir_alloc(g, (cap + 1) * sizeof *out);
	const char **onames = ox_ir_alloc(g, (cap + 1) * sizeof *onames);
	ox_port *p = ox_ir_alloc(g, (n + 1) * sizeof *p);
	for (int i = 0; i < n; i++) {
		ox_id id = (*list)[i];
		ox_value *v = &g->vals[id];
		const char *nm = names ? (*names)[i] : v->name;
		p[i].name = nm;
		p[i].first = m;
		if (v->kind != OX_V_AGG) {
			onames[m] = nm;
			out[m++] = id;
			p[i].n = 1;
			continue;
		}
		p[i].agg = v->agg;
		ox_value *inner = v;
		if (v->agg == OX_AGG_OPT && v->nelems == 1 && is_agg(g, v->elems[0])) {
			inner = &g->vals[v->elems[0]];
			if (inner->agg != OX_AGG_SEQ)
				return ox_error(g, NULL, "'%s': an optional of an optional is not supported", nm);
			p[i].seq = 1;
		}
		for (int e = 0; e < inner->nelems; e++) {
			if (is_agg(g, inner->elems[e]))
				return ox_error(g, NULL, "'%s': nested sequences are not supported", nm);
			char buf[600];
			snprintf(buf, sizeof buf, "%s[%d]", nm, e);
			onames[m] = ox_ir_strdup(g, inner == v && v->agg == OX_AGG_OPT ? nm : buf);
			out[m++] = inner->elems[e];
		}
		p[i].n = m - p[i].first;
	}
	*list = out;
	*nlist = m;
	if (names)
		*names = onames;
	*ports = p;
	*nports = n;
	return 0;
}

int ox_expand_ports(ox_graph *g)
{
	if (flatten(g, &g->inputs, &g->ninputs, NULL, &g->in_ports, &g->nin_ports) ||
	    flatten(g, &g->outputs, &g->noutputs, &g->output_names, &g->out_ports, &g->nout_ports))
		return -1;
	return 0;
}
