/* fold.c: shape/type inference with constant folding, in one walk.
 *
 * Requires: nodes reachable in a topological order (sorted here), inputs
 * typed (import or --shape). Visits nodes in order, infers each node's
 * outputs, and evaluates the node at compile time (the eval column of
 * ops.def) when every input is a constant, or for shape-only ops
 * (OX_F_SHAPEOP) when the input shape is constant; then its outputs become
 * constants and the node dies. This is what turns exporters'
 * Shape/Gather/Unsqueeze/Concat chains into constant Reshape shapes; on
 * run-time dims the same chains get symbolic values (ir/eval_sym.c),
 * which the ops they steer read as dims.
 * Invalidates: node positions (compacts).
 */
#include "expand.h"
#include <string.h>

#define FOLD_MAX_BYTES ((size_t)64 << 20)

int ox_opt_fold_node(ox_graph *g, ox_node *n)
{
	const ox_opinfo *oi = &ox_ops[n->op];
	if (oi->eval == eval_none)
		return -1;
	ox_tensor *in[n->nin + 1], shapeonly[n->nin + 1];
	for (int k = 0; k < n->nin; k++) {
		ox_value *v = ox_in(g, n, k);
		in[k] = NULL;
		if (!v)
			continue;
		if (v->kind == OX_V_CONST) {
			in[k] = v->data;
		} else if ((oi->flags & OX_F_SHAPEOP) && ox_shape_is_const(&v->shape)) {
			memset(&shapeonly[k], 0, sizeof shapeonly[k]);
			shapeonly[k].dtype = v->dtype;
			shapeonly[k].shape = v->shape;
			in[k] = &shapeonly[k];
		} else {
			return -1;
		}
	}
	size_t bytes = 0;
	for (int k = 0; k < n->nout; k++) {
		ox_value *v = ox_out(g, n, k);
		if (!v)
			continue;
		if (!ox_shape_is_const(&v->shape) || v->dtype == OX_STRING || !ox_dtype_size(v->dtype))
			return -1;
		bytes += (size_t)ox_shape_numel(&v->shape) * ox_dtype_size(v->dtype);
	}
	if (bytes > FOLD_MAX_BYTES)
		return -1;
	ox_tensor *out[n->nout + 1];
	for (int k = 0; k < n->nout; k++) {
		ox_value *v = ox_out(g, n, k);
		out[k] = v ? ox_ir_new_tensor(g, v->dtype, &v->shape) : NULL;
	}
	if (oi->eval(g, n, in, out))
		return -1;
	for (int k = 0; k < n->nout; k++)
		if (out[k])
			ox_ir_set_const(g, n->out[k], out[k]);
	n->dead = 1;
	return 0;
}

/* Shape arithmetic over run-time dims (ir/eval_sym.c): its result is the
 * output's symbolic value, or a constant when every element is one. */
static void fold_sym(ox_graph *g, ox_node *n)
{
	if (!ox_eval_sym(g, n))
		return;
	ox_value *y = ox_out(g, n, 0);
	for (int i = 0; i < y->nsv; i++)
		if (y->sv[i].kind != OX_SV_CONST)
			return;
	ox_tensor *t = ox_ir_new_tensor(g, y->dtype, &y->shape);
	for (int i = 0; i < y->nsv; i++)
		ox_tensor_set_i64(t, i, y->sv[i].c);
	ox_ir_set_const(g, n->out[0], t);
	n->dead = 1;
}

/* An input of n that is an aggregate, where n wants tensors: -1 if none. */
static int agg_input(const ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && (g->vals[n->in[k]].kind == OX_V_AGG || g->vals[n->in[k]].agg))
			return k;
	return -1;
}

/* One node of the walk: 0 done, 1 an expansion added nodes (walk again),
 * -1 an error. */
static int visit(ox_graph *g, int i)
{
	ox_node *n = &g->nodes[i];
	/* a control node waiting for its bodies (opt/expand.c) judges a
	 * branch that failed itself */
	int waiting = n->aux && (n->op == OX_OP_If || n->op == OX_OP_Loop || n->op == OX_OP_Scan);
	for (int k = 0; k < n->nin && !waiting; k++) {
		ox_value *v = ox_in(g, n, k);
		if (v && v->kind == OX_V_INTERNAL && v->producer >= 0 && !v->has_shape)
			return -1; /* an earlier node failed: do not cascade */
	}
	if (ox_expand_wanted(g, n)) {
		n->folded = 0;
		int r = ox_expand_node(g, i);
		if (!r)
			return 1;
		/* an error, or a control node now inferred (opt/outline.c) */
		g->nodes[i].folded = 1;
		return r < 0 ? -1 : 0;
	}
	int k = agg_input(g, n);
	if (k >= 0)
		return ox_error(g, n, "input %d is a sequence or an optional; this op takes tensors", k);
	if (ox_infer_node(g, n))
		return -1;
	for (int k = 0; k < n->nout; k++) {
		ox_value *v = ox_out(g, n, k);
		if (!v)
			continue;
		for (int d = 0; d < v->shape.rank; d++) {
			int64_t x = ox_dim_eval(g, v->shape.d[d]);
			if (x >= 0)
				v->shape.d[d] = x;
		}
	}
	if (ox_opt_fold_node(g, n))
		fold_sym(g, n);
	return 0;
}

int ox_opt_fold(ox_graph *g)
{
	if (ox_expand_check_inputs(g) || ox_gradient_prepare(g))
		return -1;
	ox_ir_resolve_dims(g);
	for (int i = 0; i < g->nnodes; i++)
		g->nodes[i].folded = 0;
	int errors = 0;
	/* Walk in topological order; an expansion appends nodes, so the walk
	 * re-sorts and starts again, skipping the nodes already done. A node
	 * of a region (an If's branch, a loop's body) that cannot be inferred
	 * fails its region rather than the model: its control node decides
	 * (a branch the shapes given cannot take compiles to a run-time error,
	 * opt/expand.c), so its message is held. */
	for (int again = 1; again;) {
		again = 0;
		if (ox_ir_toposort(g))
			return ox_error(g, NULL, "the graph has a cycle or uses a value before it is defined");
		for (int i = 0; i < g->nnodes && !again; i++) {
			ox_node *n = &g->nodes[i];
			if (n->dead || n->folded)
				continue;
			n->folded = 1;
			int rg = n->region, held = ox_error_hold;
			ox_error_hold = rg != 0;
			ox_error_held[0] = 0;
			int r = visit(g, i);
			ox_error_hold = held;
			if (r == 1)
				again = 1;
			else if (r < 0 && !rg)
				errors++;
			else if (r < 0 && !g->regions[rg].failed)
				g->regions[rg].failed = ox_ir_strdup(g, ox_error_held[0] ? ox_error_held : "an input failed");
		}
	}
	if (errors)
		return -1;
	ox_ir_compact(g);
	return ox_expand_ports(g);
}
