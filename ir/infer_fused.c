/* infer_fused.c: shape inference for onnxcc's own ops (ops.def's last
 * section, domain "onnxcc"), which the optimizing passes create after
 * inference has run; inference still runs on them when a test builds a
 * graph by hand in the text form. */
#include "ir.h"

/* Reorder: the same tensor in another layout (the output value's) */
int infer_reorder(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (!x || !x->has_shape)
		return 0;
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

/* Fused: elementwise ops as one node (opt/ewfuse.c); its type is the body's
 * output's */
int infer_fused(ox_graph *g, ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_body");
	if (!a || a->type != OX_AT_GRAPH || a->g[0]->noutputs != 1)
		return ox_error(g, n, "an onnxcc::Fused node needs an ox_body graph with one output");
	const ox_graph *b = a->g[0];
	const ox_value *y = &b->vals[b->outputs[0]];
	if (!y->has_shape)
		return 0;
	ox_set_out(g, n, 0, y->dtype, &y->shape);
	return 0;
}
