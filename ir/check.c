/* check.c: the IR verifier (QBE ssacheck style), run after every pass.
 *
 * Checks the invariants ir.h states: ids in range, one producer per
 * value, topological order, constants carry data of the right size,
 * node arity within the op table's bounds, blocked values only at ops
 * that take them, Winograd weights (@winow) only as the weights of the
 * 3x3 Conv they were made for, a float Conv's inputs of its dtype. A
 * failure is a compiler bug:
 * it dies naming the pass that broke the graph.
 */
#include "ir.h"
#include <stdlib.h>

int ox_ir_check(ox_graph *g, const char *after)
{
	char *defined = calloc(g->nvals + 1, 1);
	for (int i = 0; i < g->nvals; i++) {
		ox_value *v = &g->vals[i];
		if (v->kind == OX_V_CONST) {
			if (!v->data)
				ox_die("after %s: constant %%%d '%s' has no data", after, i, v->name);
			if (v->dtype != OX_STRING &&
			    v->data->nbytes != (size_t)ox_value_storage_numel(v) * ox_dtype_size(v->dtype))
				ox_die("after %s: constant %%%d '%s' has %zu bytes", after, i, v->name,
				       v->data->nbytes);
			defined[i] = 1;
		}
		if (v->kind == OX_V_INPUT)
			defined[i] = 1;
		if (v->has_shape && (v->shape.rank < 0 || v->shape.rank > OX_MAX_RANK))
			ox_die("after %s: value %%%d has rank %d", after, i, v->shape.rank);
	}
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (n->dead)
			ox_die("after %s: dead node %d left in the graph", after, i);
		if (n->op < 0 || n->op > OX_NOPS)
			ox_die("after %s: node %d has op %d", after, i, n->op);
		/* channel-blocked values only flow through ops whose emitters take them */
		for (int k = 0; k < n->nin + n->nout && n->op < OX_NOPS; k++) {
			ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
			if (v >= 0 && v < g->nvals && g->vals[v].layout == OX_L_BLOCKED &&
			    !(ox_ops[n->op].flags & OX_F_BLOCKED))
				ox_die("after %s: node %d '%s' (%s) reads or writes the blocked %%%d", after, i,
				       n->name, ox_ops[n->op].name, v);
		}
		for (int k = 0; k < n->nin; k++) {
			ox_id v = n->in[k];
			if (v < -1 || v >= g->nvals)
				ox_die("after %s: node %d input %d is %%%d", after, i, k, v);
			/* a float Conv's image, weights and bias are of one type (a
			 * folded bias once came out f32 beside f16 weights) */
			if (n->op == OX_OP_Conv && k < 3 && v >= 0 && n->nout && n->out[0] >= 0 &&
			    ox_dtype_is_float(g->vals[n->out[0]].dtype) && g->vals[v].dtype != g->vals[n->out[0]].dtype)
				ox_die("after %s: node %d '%s' (Conv, %s) reads the %s %%%d as input %d", after, i, n->name,
				       ox_dtype_name(g->vals[n->out[0]].dtype), ox_dtype_name(g->vals[v].dtype), v, k);
			/* Winograd weights: only the 3x3 Conv they were transformed for reads them */
			const ox_value *x = v >= 0 ? &g->vals[v] : NULL;
			if (x && x->layout == OX_L_WINOW &&
			    (n->op != OX_OP_Conv || k != 1 || x->shape.rank != 4 || x->shape.d[2] != 3 ||
			     x->shape.d[3] != 3 || (x->lp[1] != 2 && x->lp[1] != 4) || x->lp[2] < 1 || x->lp[2] > 4 ||
			     x->lp[0] < 1))
				ox_die("after %s: node %d '%s' (%s) reads the Winograd weights %%%d as input %d", after, i,
				       n->name, ox_ops[n->op].name, v, k);
			if (v >= 0 && !defined[v])
				ox_die("after %s: node %d '%s' uses %%%d '%s' before its definition", after,
				       i, n->name, v, g->vals[v].name);
		}
		for (int k = 0; k < n->nout; k++) {
			ox_id v = n->out[k];
			if (v < -1 || v >= g->nvals)
				ox_die("after %s: node %d output %d is %%%d", after, i, k, v);
			if (v < 0)
				continue;
			if (g->vals[v].kind != OX_V_INTERNAL)
				ox_die("after %s: node %d writes the %s %%%d", after, i,
				       g->vals[v].kind == OX_V_CONST ? "constant" : "input", v);
			if (defined[v])
				ox_die("after %s: %%%d '%s' is defined twice", after, v, g->vals[v].name);
			defined[v] = 1;
		}
	}
	for (int k = 0; k < g->noutputs; k++) {
		if (g->outputs[k] < 0 || g->outputs[k] >= g->nvals || !defined[g->outputs[k]])
			ox_die("after %s: graph output %d is undefined", after, k);
		if (g->vals[g->outputs[k]].layout)
			ox_die("after %s: graph output %d is not plain", after, k);
	}
	for (int k = 0; k < g->ninputs; k++)
		if (g->inputs[k] >= 0 && g->inputs[k] < g->nvals && g->vals[g->inputs[k]].layout)
			ox_die("after %s: graph input %d is not plain", after, k);
	free(defined);
	return 0;
}
