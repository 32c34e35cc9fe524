/* symshape.c: shape arithmetic the compiler already knows is not computed
 * when the program runs.
 *
 * With run-time dims an exporter's Shape -> Gather -> Mul -> Unsqueeze ->
 * Concat chains cannot fold to constants, but fold evaluates them on dim
 * expressions (ir/eval_sym.c), so a Reshape's target, an Expand's or a
 * ConstantOfShape's shape is often known element by element: the node's
 * output shape then says all that input says (an Expand's when each
 * element is a constant or the output's dim); so does a Slice from 0 by 1
 * on every axis whose ends are known (pe[:seq]), for its inputs past the
 * data. Such a node stops reading that input (it becomes absent) and gets
 * the attribute ox_symshape = 1:
 * "the target is the output's shape as inferred" (ir/infer_data.c keeps
 * it); dce then removes the chains nothing else reads. The nodes' code
 * reads only the output's dims, so the program computes nothing there (on
 * the GPU each chain node was a kernel launch of a few integers). Only
 * when every dim of the output is a constant or an expression of graph
 * input dims: a dim computed from data (another node's) is known only
 * once that node has run, which the chain, and no longer the node, would
 * wait for. Then a ConstantOfShape so detached that elementwise ops only
 * broadcast (each output's shape given by its other inputs) becomes a
 * scalar of its value: no tensor filled. And a Gather by Range(0, n, 1)
 * becomes such a Slice (gather_range). Requires: fold. Invalidates:
 * uses (refilled).
 */
#include "opt.h"
#include "../ir/family.h"
#include <stdio.h>
#include <string.h>

/* d is a constant, or an expression of bound symbols and graph input dims */
static int from_inputs(const ox_graph *g, ox_dim d)
{
	if (d >= 0)
		return 1;
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM)
		return e->value >= 0 || e->rt == OX_RT_INPUT;
	return from_inputs(g, e->a) && from_inputs(g, e->b);
}

/* an Expand's target says no more than its output's shape: each element
 * a constant or the output's dim there (so no run-time check that it
 * broadcasts is needed; the input's checks are the shapes' own) */
static int expand_known(ox_graph *g, const ox_node *n, const ox_shape *y)
{
	ox_sv sv[OX_MAX_RANK];
	int m = ox_in_svals(g, n, 1, sv, OX_MAX_RANK);
	if (m < 0 || m > y->rank)
		return 0;
	for (int k = 0; k < m; k++)
		if (!(sv[k].kind == OX_SV_CONST && sv[k].c >= 0) &&
		    !(sv[k].kind == OX_SV_DIM && sv[k].d == y->d[y->rank - m + k]))
			return 0;
	return 1;
}

/* is v, where node n reads it, a shape the others give already: n an
 * elementwise op whose output the broadcast of its other inputs has? */
static int broadcast_anyway(ox_graph *g, const ox_node *n, ox_id v)
{
	if (!(ox_ops[n->op].flags & OX_F_EW) || n->nout != 1 || n->out[0] < 0 || ox_attr_get(n, "broadcast"))
		return 0;
	ox_shape b = {0, {0}};
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && n->in[k] != v && ox_broadcast(g, &b, &g->vals[n->in[k]].shape, &b))
			return 0;
	const ox_shape *y = &g->vals[n->out[0]].shape;
	return b.rank == y->rank && !memcmp(b.d, y->d, (size_t)y->rank * sizeof *b.d);
}

/* A ConstantOfShape of a run-time shape (its input detached above) that
 * only elementwise ops read, each of which broadcasts it to a shape its
 * other inputs give (Where(mask, -inf, zeros of the mask's shape), as
 * PyTorch exports a masked fill): a scalar of its value instead, so no
 * kernel fills a tensor for it. */
static void splat(ox_graph *g)
{
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *c = &g->nodes[i];
		if (c->dead || c->op != OX_OP_ConstantOfShape || !ox_attr_int(c, "ox_symshape", 0) || c->out[0] < 0)
			continue;
		const ox_id v = c->out[0];
		int ok = !g->vals[v].is_output && g->vals[v].nuses > 0;
		for (int j = 0; j < g->nnodes && ok; j++)
			for (int k = 0; k < g->nodes[j].nin && ok; k++)
				if (g->nodes[j].in[k] == v && !g->nodes[j].dead)
					ok = broadcast_anyway(g, &g->nodes[j], v);
		if (!ok)
			continue;
		const int dt = g->vals[v].dtype;
		const ox_attr *a = ox_attr_get(c, "value");
		ox_tensor *t = ox_ir_new_tensor(g, dt, &(ox_shape){0, {0}});
		if (a)
			memcpy(t->data, a->t->data, ox_dtype_size(dt));
		char nm[600];
		snprintf(nm, sizeof nm, "%s/scalar", c->name[0] ? c->name : "ConstantOfShape");
		const ox_id s = ox_ir_add_const(g, nm, t);
		for (int j = 0; j < g->nnodes; j++)
			for (int k = 0; k < g->nodes[j].nin; k++)
				if (g->nodes[j].in[k] == v)
					g->nodes[j].in[k] = s;
	}
	ox_ir_fill_uses(g); /* (the ConstantOfShape nodes nothing reads: dce) */
}

/* a Slice from 0 by 1 on every axis, its ends known (pe[:seq]): the
 * output's shape says it all */
static int prefix_slice(ox_graph *g, const ox_node *n, const ox_shape *y)
{
	ox_dim start[OX_MAX_RANK], len[OX_MAX_RANK];
	int64_t step[OX_MAX_RANK];
	const ox_value *x = ox_in(g, n, 0);
	if (n->opset < 10 || !x || x->shape.rank != y->rank || ox_ir_data_slice(g, n, &x->shape, start, step, len, NULL))
		return 0;
	for (int k = 0; k < y->rank; k++)
		if (start[k] != 0 || step[k] != 1 || len[k] != y->d[k])
			return 0;
	return 1;
}

/* the first of n's inputs that its output's shape makes needless (those
 * from it on: a Reshape's or an Expand's shape, a ConstantOfShape's, a
 * prefix Slice's starts, ends, axes and steps), else -1 */
static int needless_from(ox_graph *g, const ox_node *n)
{
	const ox_value *y = n->out[0] >= 0 ? &g->vals[n->out[0]] : NULL;
	if (n->dead || !y || !y->has_shape)
		return -1;
	switch (n->op) {
	case OX_OP_Reshape:
		return 1;
	case OX_OP_Expand:
		return expand_known(g, n, &y->shape) ? 1 : -1;
	case OX_OP_ConstantOfShape:
		return 0;
	case OX_OP_Slice:
		return prefix_slice(g, n, &y->shape) ? 1 : -1;
	}
	return -1;
}

/* Gather(x, Range(0, n, 1)) along an axis of x at least n's top long (a
 * position embedding's rows for positions 0..n-1, n a run-time length;
 * the indices possibly Unsqueezed to [1, n]): a Slice from 0 whose ends
 * its output's shape says (ox_symshape, as above), a view of x where the
 * axis is the first, then a Reshape (a view) for the leading 1s; the Range
 * and what computed n die in dce. Only when n is an expression of graph
 * input dims (the Range would define a data dim otherwise). */
static void gather_range(ox_graph *g, int i)
{
	ox_node *n = &g->nodes[i];
	if (n->dead || n->op != OX_OP_Gather || n->opset < 10 || n->nin < 2 || n->in[1] < 0 || n->out[0] < 0)
		return;
	ox_id idx = n->in[1];
	const ox_node *r = NULL;
	for (;;) { /* (through Unsqueezes and Reshapes that only add leading 1s) */
		const ox_id p = g->vals[idx].producer;
		r = p >= 0 && !g->nodes[p].dead ? &g->nodes[p] : NULL;
		if (!r || (r->op != OX_OP_Unsqueeze && r->op != OX_OP_Reshape) || r->in[0] < 0)
			break;
		idx = r->in[0];
	}
	const ox_shape *is = &g->vals[n->in[1]].shape;
	ox_sv start, delta;
	if (!r || r->op != OX_OP_Range || ox_in_svals(g, r, 0, &start, 1) != 1 || ox_in_svals(g, r, 2, &delta, 1) != 1 ||
	    start.kind != OX_SV_CONST || start.c != 0 || delta.kind != OX_SV_CONST || delta.c != 1 ||
	    g->vals[idx].shape.rank != 1 || is->rank < 1 || is->d[is->rank - 1] != g->vals[idx].shape.d[0])
		return;
	for (int k = 0; k + 1 < is->rank; k++)
		if (is->d[k] != 1)
			return;
	const ox_value *x = ox_in(g, n, 0);
	const ox_dim len = g->vals[idx].shape.d[0];
	const int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), x->shape.rank);
	if (axis < 0 || !from_inputs(g, len) || x->shape.d[axis] < 0 || ox_opt_top(g, len) < 0 ||
	    ox_opt_top(g, len) > x->shape.d[axis])
		return;
	const ox_id y = n->out[0];
	ox_id z = y;
	if (is->rank > 1) { /* the Slice's [.., n, ..], then the leading 1s by a Reshape */
		char nm[600];
		snprintf(nm, sizeof nm, "%s/rows", n->name[0] ? n->name : "Gather");
		z = ox_ir_add_value(g, nm, OX_V_INTERNAL);
		ox_value *zv = &g->vals[z];
		zv->dtype = g->vals[y].dtype, zv->has_shape = 1, zv->shape = g->vals[n->in[0]].shape;
		zv->shape.d[axis] = len;
		ox_ir_add_reshape(g, z, y, &g->vals[y].shape, nm);
		ox_ir_move_node(g, g->nnodes - 1, i + 1);
		n = &g->nodes[i];
	}
	ox_id *in = ox_ir_alloc(g, 5 * sizeof *in);
	in[0] = n->in[0], in[1] = in[2] = in[3] = in[4] = -1;
	n->in = in, n->nin = 5, n->out[0] = z;
	n->op = OX_OP_Slice, n->optype = "Slice";
	ox_ir_del_attr(n, "axis");
	ox_ir_add_attr(g, n, "ox_symshape", OX_AT_INT)->i = 1;
	ox_ir_fill_uses(g); /* (the producers: the Reshape moved the nodes after it) */
}

int ox_opt_symshape(ox_graph *g)
{
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++)
		gather_range(g, i);
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		const int from = needless_from(g, n);
		/* (an input computed when the program runs, not a constant) */
		int computed = 0;
		for (int k = from < 0 ? n->nin : from; k < n->nin; k++)
			computed |= n->in[k] >= 0 && g->vals[n->in[k]].kind != OX_V_CONST;
		if (!computed)
			continue;
		const ox_shape *y = &g->vals[n->out[0]].shape;
		int known = 1;
		for (int d = 0; d < y->rank && known; d++)
			known = from_inputs(g, y->d[d]);
		if (!known)
			continue;
		for (int k = from; k < n->nin; k++)
			n->in[k] = -1;
		ox_ir_add_attr(g, n, "ox_symshape", OX_AT_INT)->i = 1;
	}
	splat(g);
	return 0;
}
