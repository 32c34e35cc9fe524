/* infer_fused.c: shape inference for onnxcc's own ops (ops.def's last
 * section, domain "onnxcc"), which the optimizing passes create after
 * inference has run; inference still runs on them when a test builds a
 * graph by hand in the text form. */
#include "ir.h"
#include "family.h"

/* Reorder: the same tensor in another layout (the output value's); with
 * ox_nhwc, a 4-D [N, C, H, W] as plain channels last, [N, H, W, C]
 * (opt/layout.c channels_last) */
int infer_reorder(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (!x || !x->has_shape)
		return 0;
	ox_shape s = x->shape;
	if (ox_attr_int(n, "ox_nhwc", 0)) {
		if (s.rank != 4)
			return ox_error(g, n, "a channels-last Reorder of a rank %d tensor", s.rank);
		s = (ox_shape){4, {x->shape.d[0], x->shape.d[2], x->shape.d[3], x->shape.d[1]}};
	}
	ox_set_out(g, n, 0, x->dtype, &s);
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

/* MatMulSplit: MatMul(A, B) with B a rank-2 [K, N], its columns split into
 * the outputs by the attribute split (opt/siblings.c): output i is A's
 * shape with split[i] columns; the epilogue, if any, acts on the whole
 * product before the split */
int infer_matmul_split(ox_graph *g, ox_node *n)
{
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1);
	if (!a || !b || !a->has_shape || !b->has_shape)
		return 0;
	const int64_t *split;
	int ns = ox_attr_ints(n, "split", &split);
	if (a->shape.rank < 2 || b->shape.rank != 2 || a->dtype != b->dtype || ns != n->nout)
		return ox_error(g, n, "an onnxcc::MatMulSplit needs A of rank 2 or more, B [K, N] of its dtype "
				      "and a split per output");
	int64_t tot = 0;
	for (int i = 0; i < ns; i++)
		tot += split[i] > 0 ? split[i] : -((int64_t)1 << 40);
	if (a->shape.d[a->shape.rank - 1] != b->shape.d[0] || tot != b->shape.d[1])
		return ox_error(g, n, "MatMulSplit: A's columns are not B's rows or the split does not sum to B's columns");
	for (int i = 0; i < ns; i++) {
		ox_shape o = a->shape;
		o.d[o.rank - 1] = split[i];
		ox_set_out(g, n, i, a->dtype, &o);
	}
	return 0;
}

/* The integer kernels of QDQ models (opt/qdq.c). Attributes:
 *   ox_dtype  INT: the output's dtype (u8 or i8)
 *   ox_lut    INTS: QLut: the output byte of each input byte (256)
 *   ox_zp     INTS: zero points: QConv, QMatMul, QRescale, QPool [x, y];
 *             QAdd [a, b, y]
 *   ox_wz     INTS: QConv, QMatMul: the weights' zero points (1 or one per
 *             output channel)
 *   ox_m, ox_s  INTS: fixed-point multipliers and shifts (templates/qint.c,
 *             ox_qi_rq): QConv, QMatMul one or one per output channel;
 *             QAdd [a, b, y] after a left shift by ox_lshift; QRescale and
 *             QPool one (QRescale without them: multiplier 1)
 *   ox_clip   INTS: [lo, hi], the output's clamp
 *   ox_global INT: QPool: a global average (else kernel_shape, strides)
 * QConv keeps Conv's window attributes; QMatMul's weights are [K, N]. */
int infer_qint(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (!x || !x->has_shape)
		return 0;
	int dt = (int)ox_attr_int(n, "ox_dtype", OX_I8);
	ox_shape o = x->shape;
	switch (n->op) {
	case OX_OP_QConv:
		if (ox_ir_conv_shape(g, n, x, ox_in(g, n, 1), &o))
			return -1;
		break;
	case OX_OP_QMatMul:
		if (ox_ir_matmul_shape(g, n, x, ox_in(g, n, 1), &o))
			return -1;
		break;
	case OX_OP_QAdd:
		if (ox_broadcast(g, &x->shape, &ox_in(g, n, 1)->shape, &o))
			return ox_error(g, n, "shapes do not broadcast");
		break;
	case OX_OP_QPool: {
		const int64_t *k = NULL, *st = NULL;
		int nk = ox_attr_ints(n, "kernel_shape", &k), ns = ox_attr_ints(n, "strides", &st);
		for (int i = 2; i < o.rank; i++) {
			if (ox_attr_int(n, "ox_global", 0))
				o.d[i] = 1;
			else if (i - 2 < nk && o.d[i] >= 0)
				o.d[i] = (o.d[i] - k[i - 2]) / (i - 2 < ns ? st[i - 2] : 1) + 1;
		}
		break;
	}
	default:
		break;
	}
	ox_set_out(g, n, 0, dt, &o);
	return 0;
}
