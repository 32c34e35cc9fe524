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
