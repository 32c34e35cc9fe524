/* infer_quant.c: shape and dtype inference for the quantization ops.
 *
 * QuantizeLinear, DequantizeLinear (opsets 10..25: per-tensor, per-axis
 * and blocked scales, output_dtype, the float8 kinds), DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv. The scale layout
 * decoder ox_ir_quant_layout is shared with codegen/c/emit_quant.c (through
 * ir/family.h) so the emitted indexing and the checks here agree.
 * Scales and zero points may be run-time inputs: only their shapes matter
 * here. The sub-byte types (int4, uint4, int2, uint2, float4e2m1) are
 * quantized types like int8: the IR holds them one element per byte.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

static const char *dt_name(int dt)
{
	return ox_dtype_name(dt);
}

static int is_f8(int dt)
{
	return dt >= OX_F8E4M3FN && dt <= OX_F8E5M2FNUZ;
}

static int is_scale_type(int dt)
{
	return dt == OX_F32 || dt == OX_F16 || dt == OX_BF16;
}

/* the quantized types QuantizeLinear writes and DequantizeLinear reads */
static int check_qtype(ox_graph *g, const ox_node *n, int dt, const char *what)
{
	if (dt == OX_U8 || dt == OX_I8 || dt == OX_U16 || dt == OX_I16 || is_f8(dt))
		return 0;
	if (dt == OX_U4 || dt == OX_I4 || dt == OX_F4E2M1 || dt == OX_U2 || dt == OX_I2)
		return 0;
	return ox_error(g, n, "%s type %s is not supported", what, dt_name(dt));
}

static int is_byte_int(int dt)
{
	return dt == OX_U8 || dt == OX_I8;
}

static int dims_known(const ox_shape *s)
{
	return ox_shape_is_const(s);
}

/* Layout of input 1's scale (and input 2's zero point) against input 0:
 * OX_QL_TENSOR (one value), OX_QL_AXIS (a vector along *axis) or
 * OX_QL_BLOCK (x's rank, *block elements of *axis per value). -1 after an
 * error. Checks what the (possibly symbolic) shapes allow. */
int ox_ir_quant_layout(ox_graph *g, const ox_node *n, int *axis, int64_t *block)
{
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *z = ox_in(g, n, 2);
	const ox_shape *xs = &x->shape, *ss = &s->shape;
	int64_t b = ox_attr_int(n, "block_size", 0);
	int64_t a = ox_attr_int(n, "axis", 1);
	*axis = 0, *block = 0;
	if (z && z->shape.rank == ss->rank) {
		for (int i = 0; i < ss->rank; i++)
			if (z->shape.d[i] >= 0 && ss->d[i] >= 0 && z->shape.d[i] != ss->d[i])
				return ox_error(g, n, "zero point and scale shapes differ");
	} else if (z) {
		int64_t zn = ox_shape_numel(&z->shape), sn = ox_shape_numel(ss);
		if (zn < 0 || sn < 0 || zn != sn)
			return ox_error(g, n, "zero point has rank %d, scale has rank %d", z->shape.rank, ss->rank);
	}
	if (b < 0)
		return ox_error(g, n, "block_size = %lld is negative", (long long)b);
	if (b == 0) {
		int64_t sn = ox_shape_numel(ss);
		if (ss->rank == 0 || sn == 1)
			return OX_QL_TENSOR;
		if (ss->rank != 1)
			return ox_error(g, n, "scale of rank %d needs block_size (per-axis scales are 1-D)", ss->rank);
		int ax = ox_norm_axis(a, xs->rank);
		if (ax < 0)
			return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, xs->rank);
		if (ss->d[0] >= 0 && xs->d[ax] >= 0 && ss->d[0] != xs->d[ax])
			return ox_error(g, n, "%lld scales for axis %d of size %lld", (long long)ss->d[0], ax,
					(long long)xs->d[ax]);
		*axis = ax;
		return OX_QL_AXIS;
	}
	int ax = ox_norm_axis(a, xs->rank);
	if (ax < 0)
		return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, xs->rank);
	if (ss->rank != xs->rank)
		return ox_error(g, n, "blocked scale has rank %d, input has rank %d", ss->rank, xs->rank);
	for (int i = 0; i < xs->rank; i++) {
		if (xs->d[i] < 0 || ss->d[i] < 0)
			continue;
		int64_t want = i == ax ? (xs->d[i] + b - 1) / b : xs->d[i];
		if (ss->d[i] != want)
			return ox_error(g, n, "blocked scale dim %d is %lld, expected %lld", i, (long long)ss->d[i],
					(long long)want);
	}
	*axis = ax, *block = b;
	return OX_QL_BLOCK;
}

static int infer_q(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *z = ox_in(g, n, 2);
	int64_t odt = ox_attr_int(n, "output_dtype", 0);
	int axis;
	int64_t block;
	if (x->dtype != OX_F32 && x->dtype != OX_F16 && x->dtype != OX_BF16 && x->dtype != OX_I32)
		return ox_error(g, n, "input type %s is not supported", dt_name(x->dtype));
	if (!is_scale_type(s->dtype))
		return ox_error(g, n, "scale type %s is not supported", dt_name(s->dtype));
	int ydt = z ? z->dtype : odt ? (int)odt : OX_U8;
	if (z && odt && odt != z->dtype)
		return ox_error(g, n, "output_dtype %s differs from the zero point's type %s", dt_name((int)odt),
				dt_name(z->dtype));
	if (check_qtype(g, n, ydt, "output"))
		return -1;
	int64_t prec = ox_attr_int(n, "precision", 0);
	if (prec && prec != OX_F32 && prec != OX_F16 && prec != OX_BF16 && prec != OX_F64)
		return ox_error(g, n, "precision %s is not supported", dt_name((int)prec));
	if (ox_ir_quant_layout(g, n, &axis, &block) < 0)
		return -1;
	ox_set_out(g, n, 0, ydt, &x->shape);
	return 0;
}

static int infer_dq(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *z = ox_in(g, n, 2);
	int64_t odt = ox_attr_int(n, "output_dtype", 0);
	int axis;
	int64_t block;
	if (x->dtype != OX_I32 && check_qtype(g, n, x->dtype, "input"))
		return -1;
	if (z && z->dtype != x->dtype)
		return ox_error(g, n, "zero point type %s differs from the input's %s", dt_name(z->dtype),
				dt_name(x->dtype));
	if (!is_scale_type(s->dtype))
		return ox_error(g, n, "scale type %s is not supported", dt_name(s->dtype));
	int ydt = odt ? (int)odt : s->dtype;
	if (!is_scale_type(ydt))
		return ox_error(g, n, "output type %s is not supported", dt_name(ydt));
	if (ox_ir_quant_layout(g, n, &axis, &block) < 0)
		return -1;
	ox_set_out(g, n, 0, ydt, &x->shape);
	return 0;
}

static int infer_dynq(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (!is_scale_type(x->dtype))
		return ox_error(g, n, "input type %s is not supported", dt_name(x->dtype));
	ox_shape scalar = {0, {0}};
	ox_set_out(g, n, 0, OX_U8, &x->shape);
	ox_set_out(g, n, 1, OX_F32, &scalar);
	ox_set_out(g, n, 2, OX_U8, &scalar);
	return 0;
}

/* a zero point or scale that is per tensor (one value) or a vector of
 * `len` values (any shape with that many elements: [M], [M,1], [1,N]) */
static int check_vec(ox_graph *g, ox_node *n, int k, ox_dim len, const char *what)
{
	ox_value *v = ox_in(g, n, k);
	if (!v || !dims_known(&v->shape))
		return 0;
	int64_t c = ox_shape_numel(&v->shape);
	if (c == 1 || (len >= 0 && c == len))
		return 0;
	return ox_error(g, n, "%s has %lld values, expected 1 or %lld", what, (long long)c, (long long)len);
}

static int infer_mmi(ox_graph *g, ox_node *n, int qlinear)
{
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, qlinear ? 3 : 1);
	ox_shape o;
	if (!is_byte_int(a->dtype) || !is_byte_int(b->dtype))
		return ox_error(g, n, "input types %s, %s are not supported (uint8 and int8 only)",
				dt_name(a->dtype), dt_name(b->dtype));
	if (ox_ir_matmul_shape(g, n, a, b, &o))
		return -1;
	ox_dim M = a->shape.rank > 1 ? a->shape.d[a->shape.rank - 2] : 1;
	ox_dim N = b->shape.rank > 1 ? b->shape.d[b->shape.rank - 1] : 1;
	int za = 2, zb = qlinear ? 5 : 3;
	ox_value *zav = ox_in(g, n, za), *zbv = ox_in(g, n, zb);
	/* (B packed by opt/pack.c is int8 whatever its zero point's type) */
	if ((zav && zav->dtype != a->dtype) || (zbv && zbv->dtype != b->dtype && b->layout != OX_L_QGEMMB))
		return ox_error(g, n, "zero point types differ from their inputs'");
	if (check_vec(g, n, za, M, "a_zero_point") || check_vec(g, n, zb, N, "b_zero_point"))
		return -1;
	/* ox_f32: the Cast to float that read the product is folded in (opt/pack.c) */
	int ydt = ox_attr_int(n, "ox_f32", 0) ? OX_F32 : OX_I32;
	if (qlinear) {
		ox_value *as = ox_in(g, n, 1), *bs = ox_in(g, n, 4), *ys = ox_in(g, n, 6), *yz = ox_in(g, n, 7);
		if (!is_scale_type(as->dtype) || bs->dtype != as->dtype || ys->dtype != as->dtype)
			return ox_error(g, n, "scale types %s, %s, %s are not supported", dt_name(as->dtype),
					dt_name(bs->dtype), dt_name(ys->dtype));
		if (check_vec(g, n, 1, M, "a_scale") || check_vec(g, n, 4, N, "b_scale") ||
		    check_vec(g, n, 6, 1, "y_scale") || check_vec(g, n, 7, 1, "y_zero_point"))
			return -1;
		if (!is_byte_int(yz->dtype))
			return ox_error(g, n, "output type %s is not supported", dt_name(yz->dtype));
		ydt = yz->dtype;
	}
	ox_set_out(g, n, 0, ydt, &o);
	return 0;
}

static int infer_convi(ox_graph *g, ox_node *n, int qlinear)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, qlinear ? 3 : 1);
	ox_shape o;
	if (!is_byte_int(x->dtype) || !is_byte_int(w->dtype))
		return ox_error(g, n, "input types %s, %s are not supported (uint8 and int8 only)",
				dt_name(x->dtype), dt_name(w->dtype));
	if (ox_ir_conv_shape(g, n, x, w, &o))
		return -1;
	ox_dim M = w->shape.d[0];
	int zx = 2, zw = qlinear ? 5 : 3;
	ox_value *zxv = ox_in(g, n, zx), *zwv = ox_in(g, n, zw);
	if ((zxv && zxv->dtype != x->dtype) || (zwv && zwv->dtype != w->dtype))
		return ox_error(g, n, "zero point types differ from their inputs'");
	if (check_vec(g, n, zx, 1, "x_zero_point") || check_vec(g, n, zw, M, "w_zero_point"))
		return -1;
	int ydt = OX_I32;
	if (qlinear) {
		ox_value *xs = ox_in(g, n, 1), *ws = ox_in(g, n, 4), *ys = ox_in(g, n, 6), *yz = ox_in(g, n, 7);
		ox_value *b = ox_in(g, n, 8);
		if (xs->dtype != OX_F32 || ws->dtype != OX_F32 || ys->dtype != OX_F32)
			return ox_error(g, n, "scale types %s, %s, %s are not supported (float only)",
					dt_name(xs->dtype), dt_name(ws->dtype), dt_name(ys->dtype));
		if (check_vec(g, n, 1, 1, "x_scale") || check_vec(g, n, 4, M, "w_scale") ||
		    check_vec(g, n, 6, 1, "y_scale") || check_vec(g, n, 7, 1, "y_zero_point"))
			return -1;
		if (!is_byte_int(yz->dtype))
			return ox_error(g, n, "output type %s is not supported", dt_name(yz->dtype));
		if (b && (b->dtype != OX_I32 || b->shape.rank != 1 ||
			  (b->shape.d[0] >= 0 && M >= 0 && b->shape.d[0] != M)))
			return ox_error(g, n, "bias must be an int32 vector of the output channels");
		ydt = yz->dtype;
	}
	ox_set_out(g, n, 0, ydt, &o);
	return 0;
}

/* com.microsoft MatMulNBits: Y[..., N] = A[..., K] W^T (+ bias), W [N, K]
 * stored as blocks of block_size 4- or 8-bit values along K (B uint8 [N,
 * blocks, block_size bits / 8], the first value in the low nibble), each
 * block (q - zero point) scale (scales [N blocks] of A's type, f32 or
 * f16; zero points none (2^(bits-1)), uint8 packed like B, or [N blocks]
 * of A's type); the bias and Y of A's type too */
int ox_mmnb_geo(ox_graph *g, ox_node *n, int64_t *K, int64_t *N, int64_t *bits, int64_t *bs, int64_t *nb)
{
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1), *sc = ox_in(g, n, 2), *zp = ox_in(g, n, 3);
	*K = ox_attr_int(n, "K", 0), *N = ox_attr_int(n, "N", 0), *bits = ox_attr_int(n, "bits", 4);
	*bs = ox_attr_int(n, "block_size", 0);
	if (*K <= 0 || *N <= 0 || (*bits != 4 && *bits != 8) || *bs < 16 || (*bs & (*bs - 1)))
		return ox_error(g, n, "K, N, bits (4 or 8 here) and block_size (a power of 2, 16 or more) are required");
	*nb = (*K + *bs - 1) / *bs;
	if ((a->dtype != OX_F32 && a->dtype != OX_F16) || sc->dtype != a->dtype)
		return ox_error(g, n, "A and scales of %s, %s: f32 or f16, both the same, are supported", dt_name(a->dtype),
				dt_name(sc->dtype));
	if (a->shape.rank < 1 || a->shape.d[a->shape.rank - 1] != *K)
		return ox_error(g, n, "A's last dim is not K = %lld", (long long)*K);
	const int64_t blob = *bs * *bits / 8;
	if (b->dtype != OX_U8 || b->shape.rank != 3 || b->shape.d[0] != *N || b->shape.d[1] != *nb || b->shape.d[2] != blob)
		return ox_error(g, n, "B must be uint8 [%lld, %lld, %lld]", (long long)*N, (long long)*nb, (long long)blob);
	if (ox_shape_numel(&sc->shape) != *N * *nb)
		return ox_error(g, n, "scales must hold N x blocks = %lld values", (long long)(*N * *nb));
	if (zp && !((zp->dtype == OX_U8 && ox_shape_numel(&zp->shape) == *N * ((*nb * *bits + 7) / 8)) ||
		    (zp->dtype == a->dtype && ox_shape_numel(&zp->shape) == *N * *nb)))
		return ox_error(g, n, "zero_points must be uint8 [N x ceil(blocks x bits / 8)] or %s [N x blocks]",
				dt_name(a->dtype));
	if (n->nin > 4 && n->in[4] >= 0)
		return ox_error(g, n, "g_idx is not supported");
	const ox_value *bias = n->nin > 5 && n->in[5] >= 0 ? ox_in(g, n, 5) : NULL;
	if (bias && (bias->dtype != a->dtype || ox_shape_numel(&bias->shape) != *N))
		return ox_error(g, n, "bias must be %s [N]", dt_name(a->dtype));
	return 0;
}

static int infer_mmnb(ox_graph *g, ox_node *n)
{
	int64_t K, N, bits, bs, nb;
	if (ox_mmnb_geo(g, n, &K, &N, &bits, &bs, &nb))
		return -1;
	ox_shape o = ox_in(g, n, 0)->shape;
	o.d[o.rank - 1] = N;
	ox_set_out(g, n, 0, ox_in(g, n, 0)->dtype, &o);
	return 0;
}

int infer_quant(ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_MatMulNBits:
		return infer_mmnb(g, n);
	case OX_OP_QuantizeLinear:
		return infer_q(g, n);
	case OX_OP_DequantizeLinear:
		return infer_dq(g, n);
	case OX_OP_DynamicQuantizeLinear:
		return infer_dynq(g, n);
	case OX_OP_MatMulInteger:
		return infer_mmi(g, n, 0);
	case OX_OP_QLinearMatMul:
		return infer_mmi(g, n, 1);
	case OX_OP_ConvInteger:
		return infer_convi(g, n, 0);
	case OX_OP_QLinearConv:
		return infer_convi(g, n, 1);
	}
	return ox_error(g, n, "not a quantization op");
}
