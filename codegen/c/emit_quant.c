/* emit_quant.c: C bodies for the quantization ops.
 *
 * QuantizeLinear / DequantizeLinear are loops printed inline, one shape per
 * scale layout (per tensor, per axis, blocked; decoded by
 * ox_ir_quant_layout in ir/infer_quant.c). Arithmetic follows the ONNX
 * reference's numpy precision: x / scale in the scale's float type, rint
 * (ties to even) then saturation for integer outputs, templates/quant_f8.c
 * for the float8 kinds, templates/quant_sub.c for float4e2m1. The sub-byte
 * kinds are one element per byte (int4 / int2 sign-extended, read through
 * int8_t whatever the buffer's C type). MatMulInteger and QLinearMatMul call
 * templates/quant_matmul.c per row, ConvInteger and QLinearConv call
 * templates/quant_conv.c; both take u8/i8 operands as bytes with a sign
 * flip (see those files), and requantize in double as the reference does
 * (int32 sums times a float32 multiplier promote to float64).
 */
#include "../quant.h"
#include "../../ir/family.h"
#include "../../opt/opt.h"
#include "ukernel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSP (OX_MAX_RANK - 2)

static const char qsat_text[] =
	"/* v clamped to [lo, hi] (NaN gives lo); v is integral or clamped first */\n"
	"OX_STATIC inline int32_t ox_qsat(double v, double lo, double hi)\n"
	"{\n\treturn v >= hi ? (int32_t)hi : v > lo ? (int32_t)v : (int32_t)lo;\n}\n";

void ox_cg_use_qsat(ox_cg *cg)
{
	ox_cg_helper(cg, "ox_qsat", qsat_text);
}

static int is_f8(int dt)
{
	return dt >= OX_F8E4M3FN && dt <= OX_F8E5M2FNUZ;
}

/* range of an integer quantized type */
void ox_cg_qrange(int dt, long *lo, long *hi)
{
	switch (dt) {
	case OX_I8: *lo = -128, *hi = 127; return;
	case OX_I4: *lo = -8, *hi = 7; return;
	case OX_U4: *lo = 0, *hi = 15; return;
	case OX_I2: *lo = -2, *hi = 1; return;
	case OX_U2: *lo = 0, *hi = 3; return;
	case OX_U16: *lo = 0, *hi = 65535; return;
	case OX_I16: *lo = -32768, *hi = 32767; return;
	default: *lo = 0, *hi = 255; return;
	}
}

static int use_f8(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (ox_cg_use(cg, "quant_f8", OX_F32))
		return ox_error(g, n, "kernel template templates/quant_f8.c is missing");
	return 0;
}

/* Expression for element e (storage of dtype dt) as a float. f8 kinds go
 * through templates/quant_f8.c. Writes into buf. */
static const char *as_float(int dt, const char *e, char *buf, size_t n)
{
	if (is_f8(dt))
		ox_cg_snprintf(buf, n, "ox_%s_to_f32(%s)", ox_cg_sfx(dt), e);
	else if (dt == OX_F4E2M1)
		ox_cg_snprintf(buf, n, "ox_f4e2m1_to_f32(%s)", e);
	else if (dt == OX_I4 || dt == OX_I2)
		ox_cg_snprintf(buf, n, "(float)(int8_t)%s", e);
	else if (dt == OX_F16 || dt == OX_BF16)
		ox_cg_snprintf(buf, n, "%s", ox_cg_load(dt, e));
	else if (dt == OX_F32)
		ox_cg_snprintf(buf, n, "%s", e);
	else
		ox_cg_snprintf(buf, n, "(float)%s", e);
	return buf;
}

static const char *shape_str(const ox_graph *g, const ox_shape *s, char *buf, size_t n)
{
	if (!ox_shape_is_const(s)) { /* run-time dims, as the IR spells them */
		ox_shape_str(g, s, buf, n);
		return buf;
	}
	size_t at = (size_t)ox_cg_snprintf(buf, n, "[");
	for (int i = 0; i < s->rank && at < n; i++)
		at += (size_t)ox_cg_snprintf(buf + at, n - at, "%s%lld", i ? "," : "", (long long)s->d[i]);
	if (at < n)
		ox_cg_snprintf(buf + at, n - at, "]");
	return buf;
}

/* ---- QuantizeLinear, DequantizeLinear ---- */

/* declare `s` and `z` (floats) for scale / zero point element idx */
void ox_cg_qdq_decl(ox_buf *b, ox_graph *g, ox_node *n, const char *ind, const char *idx, int zdt)
{
	char b1[128], b2[128], e[64];
	ox_value *s = ox_in(g, n, 1);
	ox_cg_snprintf(e, sizeof e, "in1[%s]", idx);
	ox_buf_printf(b, "%sconst float s = %s;\n", ind, as_float(s->dtype, e, b1, sizeof b1));
	if (n->nin > 2 && n->in[2] >= 0) {
		ox_cg_snprintf(e, sizeof e, "in2[%s]", idx);
		ox_buf_printf(b, "%sconst float z = %s;\n", ind, as_float(zdt, e, b2, sizeof b2));
	} else {
		ox_buf_printf(b, "%sconst float z = 0.0f;\n", ind);
	}
}

/* out0[k] = quantized or dequantized in0[k], using s and z */
void ox_cg_qdq_stmt(ox_buf *b, ox_graph *g, ox_node *n, const char *ind, int dq)
{
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	char b1[128], b2[256];
	if (dq) {
		ox_cg_snprintf(b2, sizeof b2, "(%s - z) * s", as_float(x->dtype, "in0[k]", b1, sizeof b1));
		ox_buf_printf(b, "%sout0[k] = %s;\n", ind, ox_cg_store(y->dtype, b2));
		return;
	}
	/* the quotient's precision: the precision attribute (opset 23), else
	 * numpy's promotion of x and the scale (f16 / f16 stays f16) */
	int prec = (int)ox_attr_int(n, "precision", 0);
	if (!prec)
		prec = x->dtype == OX_I32 ? OX_F64 : x->dtype == s->dtype ? x->dtype : OX_F32;
	char q[256];
	if (prec == OX_F64) {
		ox_cg_snprintf(q, sizeof q, "(double)%s / (double)s", x->dtype == OX_I32 ? "in0[k]" : as_float(x->dtype, "in0[k]", b1, sizeof b1));
	} else {
		ox_cg_snprintf(b2, sizeof b2, "%s / s", as_float(x->dtype, "in0[k]", b1, sizeof b1));
		if (prec == OX_F16 || prec == OX_BF16)
			ox_cg_snprintf(q, sizeof q, "%s", ox_cg_load(prec, ox_cg_store(prec, b2)));
		else
			ox_cg_snprintf(q, sizeof q, "%s", b2);
	}
	if (is_f8(y->dtype)) {
		int sat = (int)ox_attr_int(n, "saturate", 1) != 0;
		ox_buf_printf(b, "%sout0[k] = ox_f32_to_%s((float)(%s) + z, %d);\n", ind, ox_cg_sfx(y->dtype), q, sat);
		return;
	}
	if (y->dtype == OX_F4E2M1) {
		/* f4 has no infinity: it always saturates */
		ox_buf_printf(b, "%sout0[k] = ox_f4e2m1_from_f64((double)((float)(%s) + z));\n", ind, q);
		return;
	}
	long lo, hi;
	ox_cg_qrange(y->dtype, &lo, &hi);
	ox_buf_printf(b, "%sout0[k] = (%s)ox_qsat(%s(%s) + z, %ld, %ld);\n", ind, ox_cg_ctype(y->dtype),
		     prec == OX_F64 ? "rint" : "(double)rintf", q, lo, hi);
}

int ox_cg_qdq_use(ox_cg *cg, ox_graph *g, ox_node *n, int dq)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (is_f8(x->dtype) || is_f8(y->dtype))
		if (use_f8(cg, g, n))
			return -1;
	if ((x->dtype == OX_F4E2M1 || y->dtype == OX_F4E2M1) && ox_cg_use(cg, "quant_sub", OX_F32))
		return ox_error(g, n, "kernel template templates/quant_sub.c is missing");
	if (!dq && !is_f8(y->dtype) && y->dtype != OX_F4E2M1)
		ox_cg_helper(cg, "ox_qsat", qsat_text);
	return 0;
}

static int emit_qdq(ox_cg *cg, ox_graph *g, ox_node *n, int dq)
{
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	int axis;
	int64_t block;
	int lay = ox_ir_quant_layout(g, n, &axis, &block);
	if (lay < 0)
		return -1;
	int zdt = dq ? x->dtype : y->dtype;
	if (ox_cg_qdq_use(cg, g, n, dq))
		return -1;
	/* sizes as dims: a run-time batch or sequence prints as an expression */
	ox_dim N = ox_shape_numel_dim(g, &x->shape), O = 1, D = 1, I = 1;
	for (int i = 0; i < x->shape.rank; i++) {
		ox_dim d = x->shape.d[i];
		if (lay == OX_QL_TENSOR)
			I = ox_dim_mul(g, I, d);
		else if (i < axis)
			O = ox_dim_mul(g, O, d);
		else if (i == axis)
			D = d;
		else
			I = ox_dim_mul(g, I, d);
	}
	char b1[256], b2[256];
	static const char *lname[] = {"per tensor", "per axis", "blocked"};
	ox_cg_printf(cg, "\t/* %s %s: %s %s -> %s", dq ? "DequantizeLinear" : "QuantizeLinear", lname[lay],
		     ox_cg_sfx(x->dtype), shape_str(g, &x->shape, b1, sizeof b1), ox_cg_sfx(y->dtype));
	if (lay != OX_QL_TENSOR)
		ox_cg_printf(cg, ", axis %d", axis);
	if (lay == OX_QL_BLOCK)
		ox_cg_printf(cg, ", blocks of %lld", (long long)block);
	ox_cg_printf(cg, "; scale %s %s */\n", ox_cg_sfx(s->dtype), shape_str(g, &s->shape, b2, sizeof b2));
	if (N == 0)
		return 0;
	char Ns[1100], Os[1100], Ds[1100], Is[1100];
	ox_cg_snprintf(Ns, sizeof Ns, "%s", ox_cg_dim(cg, N));
	ox_cg_snprintf(Os, sizeof Os, "%s", ox_cg_dim(cg, O));
	ox_cg_snprintf(Ds, sizeof Ds, "%s", ox_cg_dim(cg, D));
	ox_cg_snprintf(Is, sizeof Is, "%s", ox_cg_dim(cg, I));
	const ox_value *zv = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	if (lay == OX_QL_TENSOR && !cg->cuda && !cg->dev && s->dtype == OX_F32 && (!zv || zv->dtype == zdt) &&
	    (zdt == OX_I8 || zdt == OX_U8) && (dq ? y : x)->dtype == OX_F32 && (dq || ox_attr_int(n, "saturate", 1))) {
		/* f32 <-> 8 bits per tensor: templates/quant_dyn.c's loops (the
		 * same arithmetic as the statements below, vectors behind AVX-512) */
		ox_cg_use_qsat(cg); /* (quant_dyn.c's ox_quant_f32 calls it, a DequantizeLinear's node too) */
		if (ox_cg_use(cg, "quant_dyn", OX_U8))
			return ox_error(g, n, "kernel template templates/quant_dyn.c is missing");
		const char *z = zv ? (zdt == OX_I8 ? "(float)((const int8_t *)in2)[0]" : "(float)((const uint8_t *)in2)[0]") : "0.0f";
		if (dq)
			ox_cg_printf(cg, "\tox_dequant_f32((const uint8_t *)in0, %d, %s, in1[0], %s, out0);\n", zdt == OX_I8, Ns, z);
		else
			ox_cg_printf(cg, "\tox_quant_f32(in0, %s, in1[0], %s, %d, %d, (uint8_t *)out0);\n", Ns, z,
				     zdt == OX_I8 ? -128 : 0, zdt == OX_I8 ? 127 : 255);
		return 0;
	}
	if (lay == OX_QL_TENSOR) {
		ox_cg_printf(cg, "\t{\n");
		ox_cg_qdq_decl(&cg->body, g, n, "\t\t", "0", zdt);
		ox_cg_printf(cg, "\t\tfor (long k = 0; k < %s; k++)\n", Ns);
		ox_cg_qdq_stmt(&cg->body, g, n, "\t\t\t", dq);
		ox_cg_printf(cg, "\t}\n");
		return 0;
	}
	ox_cg_printf(cg, "\tfor (long o = 0; o < %s; o++)\n\tfor (long c = 0; c < %s; c++) {\n", Os, Ds);
	if (lay == OX_QL_AXIS) {
		ox_cg_qdq_decl(&cg->body, g, n, "\t\t", "c", zdt);
		ox_cg_printf(cg, "\t\tfor (long i = 0; i < %s; i++) {\n", Is);
		ox_cg_printf(cg, "\t\t\tconst long k = (o * %s + c) * %s + i;\n", Ds, Is);
	} else {
		ox_dim SD = ox_dim_ceildiv(g, D, block);
		ox_cg_printf(cg, "\t\tfor (long i = 0; i < %s; i++) {\n", Is);
		ox_cg_printf(cg, "\t\t\tconst long k = (o * %s + c) * %s + i, q = (o * %s + c / %lld) * %s + i;\n",
			     Ds, Is, ox_cg_dim(cg, SD), (long long)block, Is);
		ox_cg_qdq_decl(&cg->body, g, n, "\t\t\t", "q", zdt);
	}
	ox_cg_qdq_stmt(&cg->body, g, n, "\t\t\t", dq);
	ox_cg_printf(cg, "\t\t}\n\t}\n");
	return 0;
}

/* ---- DynamicQuantizeLinear ---- */
static int emit_dynq(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	char N[1100], b1[128];
	ox_cg_snprintf(N, sizeof N, "%s", ox_cg_numel(cg, &x->shape));
	ox_cg_helper(cg, "ox_qsat", qsat_text);
	/* the spec's formula: the range always includes 0; scale (max - min) / 255 */
	ox_cg_printf(cg, "\t/* DynamicQuantizeLinear %s %s -> u8 */\n", ox_cg_sfx(x->dtype),
		     shape_str(g, &x->shape, b1, sizeof b1));
	if (x->dtype == OX_F32) {
		if (ox_cg_use(cg, "quant_dyn", OX_U8))
			return ox_error(g, n, "kernel template templates/quant_dyn.c is missing");
		ox_cg_printf(cg, "\tox_dynq_f32(in0, %s, out0, out1, out2);\n", N);
		return 0;
	}
	ox_cg_printf(cg, "\tfloat lo = 0.0f, hi = 0.0f;\n");
	ox_cg_printf(cg, "\tfor (long k = 0; k < %s; k++) {\n", N);
	ox_cg_printf(cg, "\t\tconst float v = %s;\n", as_float(x->dtype, "in0[k]", b1, sizeof b1));
	ox_cg_printf(cg, "\t\tlo = v < lo ? v : lo;\n\t\thi = v > hi ? v : hi;\n\t}\n");
	ox_cg_printf(cg, "\tconst float s = (hi - lo) / 255.0f;\n");
	ox_cg_printf(cg, "\t/* all zeros: scale 0, every output the zero point 0 */\n");
	ox_cg_printf(cg, "\tconst float z = s > 0.0f ? (float)ox_qsat(rintf((0.0f - lo) / s), 0, 255) : 0.0f;\n");
	ox_cg_printf(cg, "\tout1[0] = s;\n\tout2[0] = (uint8_t)z;\n");
	ox_cg_printf(cg, "\tfor (long k = 0; k < %s; k++)\n", N);
	ox_cg_printf(cg, "\t\tout0[k] = s > 0.0f ? (uint8_t)ox_qsat(rintf(%s / s) + z, 0, 255) : (uint8_t)z;\n",
		     as_float(x->dtype, "in0[k]", b1, sizeof b1));
	return 0;
}

/* ---- shared by the integer matmuls and convs ---- */

/* `(const uint8_t *)inK` and the sign flip of a u8/i8 operand */
static int flip(int dt)
{
	return dt == OX_I8 ? 0x80 : 0;
}

/* zero point of input k at element idx, as the int32 the kernels subtract
 * (with the 128 an int8 flip adds); just that 128 (or 0) when omitted */
static const char *zexpr(ox_node *n, int k, int dt, const char *idx, char *buf, size_t sz)
{
	if (n->nin > k && n->in[k] >= 0 && flip(dt))
		ox_cg_snprintf(buf, sz, "(int32_t)in%d[%s] + %d", k, idx, flip(dt));
	else if (n->nin > k && n->in[k] >= 0)
		ox_cg_snprintf(buf, sz, "(int32_t)in%d[%s]", k, idx);
	else
		ox_cg_snprintf(buf, sz, "%d", flip(dt));
	return buf;
}

/* index of input k (one value, or a vector indexed by var) */
static const char *vidx(ox_graph *g, ox_node *n, int k, const char *var)
{
	ox_value *v = ox_in(g, n, k);
	return v && ox_shape_numel(&v->shape) > 1 ? var : "0";
}

/* ---- MatMulInteger, QLinearMatMul ---- */
/* `static const int32_t name[n] = {v...};` at file scope, 12 a line */
static void qi_array(ox_buf *t, const char *name, const int64_t *v, int64_t n)
{
	ox_buf_printf(t, "static const int32_t %s[%lld] = {", name, (long long)n);
	for (int64_t i = 0; i < n; i++)
		ox_buf_printf(t, "%s%s%lld", i ? "," : "", i % 12 ? " " : "\n\t", (long long)v[i]);
	ox_buf_puts(t, "\n};\n");
}

/* MatMulInteger with B packed as OX_L_QGEMMB (opt/pack.c): templates/
 * qconv.c's ox_qg_mm over 8 tasks of rows (any rows, run-time ones too),
 * storing floats when the Cast after it was folded in (ox_f32);
 * B's column sums and zero points are file-scope tables named after the
 * node's function */
static int emit_mmi_packed(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_qmmgeo q;
	if (ox_opt_qmm_geo(g, n, &q))
		return ox_error(g, n, "packed B but not the packed integer GEMM's product");
	if (ox_cg_use(cg, "qconv", OX_U8))
		return ox_error(g, n, "kernel template templates/qconv.c is missing");
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	const ox_value *zb = n->nin > 3 && n->in[3] >= 0 ? ox_in(g, n, 3) : NULL;
	const int8_t *bd = b->data->data;
	const int64_t K4 = (q.K + 3) / 4;
	const char *f = cg->fname;
	ox_buf t = {0};
	int anyz = 0;
	ox_buf_printf(&t, "/* %s: the packed B's column sums and zero points (templates/qconv.c) */\n", f);
	int64_t *bs = malloc(2 * (size_t)q.N * sizeof *bs), *bz = bs + q.N;
	for (int64_t j = 0; j < q.N; j++) {
		bs[j] = 0;
		for (int64_t k = 0; k < q.K; k++)
			bs[j] += bd[((j / 16 * K4 + k / 4) * 16 + j % 16) * 4 + k % 4];
		bz[j] = zb ? (int64_t)ox_tensor_get_f64(zb->data, ox_shape_numel(&zb->shape) == 1 ? 0 : j) - b->lp[0] : 0;
		anyz |= bz[j] != 0;
	}
	qi_array(&t, ox_cg_text(cg, "%s_bs", f), bs, q.N);
	qi_array(&t, ox_cg_text(cg, "%s_bz", f), bz, q.N);
	free(bs);
	ox_cg_helper(cg, ox_cg_text(cg, "%s_bs", f), t.s);
	ox_buf_free(&t);
	ox_shape rows = a->shape;
	rows.rank--;
	char b1[256], b2[256], za[128];
	ox_cg_printf(cg, "\t/* MatMulInteger %s %s x packed %s -> %s %s: 8 tasks of rows */\n", ox_cg_sfx(a->dtype),
		     shape_str(g, &a->shape, b1, sizeof b1), shape_str(g, &b->shape, b2, sizeof b2), ox_cg_sfx(y->dtype),
		     shape_str(g, &y->shape, b1, sizeof b1));
	ox_cg_tasks(cg, 8);
	ox_cg_line(cg, 1, "const long R = %s, r0 = R * t / 8, r1 = R * (t + 1) / 8;", rows.rank ? ox_cg_numel(cg, &rows) : "1");
	ox_cg_line(cg, 1, "ox_qg_mm((const uint8_t *)in0, (const int8_t *)in1, %s_bs, %s, %s, %d,", f,
		   anyz ? ox_cg_text(cg, "%s_bz", f) : "NULL", zexpr(n, 2, a->dtype, "0", za, sizeof za), flip(a->dtype));
	ox_cg_line(cg, 2, "%lld, %lld, r0, r1, out0, %d);", (long long)q.K, (long long)q.N, y->dtype == OX_F32);
	return 0;
}

/* MatMulInteger with run-time dims and a constant 2-D B, unpacked (the
 * CUDA target's device code, --opt 0): rows of A (all its dims but the
 * last, at run time) one at a time through templates/quant_matmul.c */
static int emit_mmi_rt(ox_cg *cg, ox_graph *g, ox_node *n, int ql)
{
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1);
	const ox_value *za = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	if (ql || b->shape.rank != 2 || !ox_shape_is_const(&b->shape) || a->shape.rank < 1 ||
	    (za && ox_shape_numel(&za->shape) != 1))
		return ox_error(g, n, "run-time dims need MatMulInteger with a constant 2-D B and one zero point for A");
	if (ox_cg_use(cg, "quant_matmul", OX_U8))
		return ox_error(g, n, "kernel template templates/quant_matmul.c is missing");
	long long K = b->shape.d[0], N = b->shape.d[1];
	ox_shape rows = a->shape;
	rows.rank--;
	char b1[128];
	ox_cg_printf(cg, "\t/* MatMulInteger %s, run-time rows x %s [%lld, %lld] -> i32 */\n", ox_cg_sfx(a->dtype),
		     ox_cg_sfx(b->dtype), K, N);
	ox_cg_printf(cg, "\tint32_t bz[%lld];\n\tfor (long j = 0; j < %lld; j++)\n\t\tbz[j] = %s;\n", N, N,
		     zexpr(n, 3, b->dtype, vidx(g, n, 3, "j"), b1, sizeof b1));
	ox_cg_printf(cg, "\tconst int32_t az = %s;\n", zexpr(n, 2, a->dtype, "0", b1, sizeof b1));
	ox_cg_printf(cg, "\tfor (long i = 0; i < %s; i++)\n", rows.rank ? ox_cg_numel(cg, &rows) : "1");
	ox_cg_printf(cg, "\t\tox_qmm_row((const uint8_t *)in0 + i * %lld, (const uint8_t *)in1, out0 + i * %lld, %lld, %lld, "
		     "0, %lld, %d, az, %d, bz);\n", K, N, K, N, N, flip(a->dtype), flip(b->dtype));
	return 0;
}

static int emit_mmi(ox_cg *cg, ox_graph *g, ox_node *n, int ql)
{
	if (!ql && ox_in(g, n, 1)->layout == OX_L_QGEMMB)
		return emit_mmi_packed(cg, g, n);
	if (ox_node_rt(g, n))
		return emit_mmi_rt(cg, g, n, ql);
	int ib = ql ? 3 : 1, iza = 2, izb = ql ? 5 : 3;
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, ib), *y = ox_out(g, n, 0);
	ox_shape sa = a->shape, sb = b->shape;
	if (sa.rank == 1)
		sa = (ox_shape){2, {1, a->shape.d[0]}};
	if (sb.rank == 1)
		sb = (ox_shape){2, {b->shape.d[0], 1}};
	long long M = sa.d[sa.rank - 2], K = sa.d[sa.rank - 1], N = sb.d[sb.rank - 1];
	/* batch dims, right-aligned against the output's */
	int rb = y->shape.rank - (a->shape.rank > 1) - (b->shape.rank > 1);
	long long bd[OX_MAX_RANK], as[OX_MAX_RANK], bs[OX_MAX_RANK], nb = 1;
	long long ast = M * K, bst = K * N;
	for (int i = rb - 1; i >= 0; i--) {
		int ia = i - (rb - (sa.rank - 2)), ibb = i - (rb - (sb.rank - 2));
		long long da = ia >= 0 ? sa.d[ia] : 1, db = ibb >= 0 ? sb.d[ibb] : 1;
		bd[i] = y->shape.d[i];
		as[i] = da == 1 ? 0 : ast;
		bs[i] = db == 1 ? 0 : bst;
		ast *= da, bst *= db, nb *= bd[i];
	}
	if (ox_cg_use(cg, "quant_matmul", OX_U8))
		return ox_error(g, n, "kernel template templates/quant_matmul.c is missing");
	char b1[128], b2[128], b3[128];
	ox_cg_printf(cg, "\t/* %s %s %s x %s %s -> %s %s */\n", ql ? "QLinearMatMul" : "MatMulInteger",
		     ox_cg_sfx(a->dtype), shape_str(g, &a->shape, b1, sizeof b1), ox_cg_sfx(b->dtype),
		     shape_str(g, &b->shape, b2, sizeof b2), ox_cg_sfx(y->dtype), shape_str(g, &y->shape, b3, sizeof b3));
	if (nb * M * N == 0)
		return 0;
	ox_cg_printf(cg, "\tint32_t bz[%lld];\n\tfor (long j = 0; j < %lld; j++)\n\t\tbz[j] = %s;\n", N, N,
		     zexpr(n, izb, b->dtype, vidx(g, n, izb, "j"), b1, sizeof b1));
	if (ql) {
		ox_value *asv = ox_in(g, n, 1);
		int sdt = asv->dtype;
		ox_cg_helper(cg, "ox_qsat", qsat_text);
		char e[64];
		ox_cg_printf(cg, "\tconst float ys = %s;\n", ox_cg_load(sdt, "in6[0]"));
		ox_cg_printf(cg, "\tconst double yz = (double)in7[0];\n");
		ox_cg_snprintf(e, sizeof e, "in4[%s]", vidx(g, n, 4, "j"));
		ox_cg_printf(cg, "\tfloat bsc[%lld];\n\tfor (long j = 0; j < %lld; j++)\n\t\tbsc[j] = %s;\n", N, N,
			     ox_cg_load(sdt, e));
	}
	ox_cg_printf(cg, "\tfor (long t = 0; t < %lld; t++) {\n", nb);
	/* operand offsets of batch t, broadcast dims stepping 0 */
	ox_cg_printf(cg, "\t\tlong ao = 0, bo = 0, r = t;\n");
	for (int i = rb - 1; i >= 0; i--)
		if (as[i] || bs[i])
			ox_cg_printf(cg, "\t\tao += r %% %lld * %lld, bo += r %% %lld * %lld, r /= %lld;\n", bd[i], as[i],
				     bd[i], bs[i], bd[i]);
		else
			ox_cg_printf(cg, "\t\tr /= %lld;\n", bd[i]);
	ox_cg_printf(cg, "\t\t(void)r;\n");
	ox_cg_printf(cg, "\t\tfor (long i = 0; i < %lld; i++) {\n", M);
	ox_cg_printf(cg, "\t\t\tconst int32_t az = %s;\n", zexpr(n, iza, a->dtype, vidx(g, n, iza, "i"), b1, sizeof b1));
	if (!ql) {
		ox_cg_printf(cg, "\t\t\tox_qmm_row((const uint8_t *)in0 + ao + i * %lld, (const uint8_t *)in1 + bo, "
			     "out0 + (t * %lld + i) * %lld, %lld, %lld, 0, %lld, %d, az, %d, bz);\n",
			     K, M, N, K, N, N, flip(a->dtype), flip(b->dtype));
		ox_cg_printf(cg, "\t\t}\n\t}\n");
		return 0;
	}
	/* requantize: C * (a_scale * b_scale / y_scale) + y_zero_point, the
	 * multiplier rounded in the scales' type as numpy does */
	int sdt = ox_in(g, n, 1)->dtype;
	long lo, hi;
	ox_cg_qrange(y->dtype, &lo, &hi);
	char e[64];
	ox_cg_snprintf(e, sizeof e, "in1[%s]", vidx(g, n, 1, "i"));
	ox_cg_printf(cg, "\t\t\tconst float asc = %s;\n", ox_cg_load(sdt, e));
	ox_cg_printf(cg, "\t\t\tfor (long j0 = 0; j0 < %lld; j0 += 256) {\n", N);
	ox_cg_printf(cg, "\t\t\t\tconst long nj = %lld - j0 < 256 ? %lld - j0 : 256;\n", N, N);
	ox_cg_printf(cg, "\t\t\t\tint32_t acc[256];\n");
	ox_cg_printf(cg, "\t\t\t\tox_qmm_row((const uint8_t *)in0 + ao + i * %lld, (const uint8_t *)in3 + bo, acc, "
		     "%lld, %lld, j0, nj, %d, az, %d, bz);\n", K, K, N, flip(a->dtype), flip(b->dtype));
	ox_cg_printf(cg, "\t\t\t\tfor (long j = 0; j < nj; j++) {\n");
	if (sdt == OX_F32) {
		ox_cg_printf(cg, "\t\t\t\t\tconst float mu = asc * bsc[j0 + j] / ys;\n");
	} else {
		char m1[256];
		ox_cg_snprintf(m1, sizeof m1, "%s / ys", ox_cg_load(sdt, ox_cg_store(sdt, "asc * bsc[j0 + j]")));
		ox_cg_printf(cg, "\t\t\t\t\tconst float mu = %s;\n", ox_cg_load(sdt, ox_cg_store(sdt, m1)));
	}
	ox_cg_printf(cg, "\t\t\t\t\tout0[(t * %lld + i) * %lld + j0 + j] = (%s)ox_qsat(rint((double)acc[j] * mu + yz), "
		     "%ld, %ld);\n", M, N, ox_cg_ctype(y->dtype), lo, hi);
	ox_cg_printf(cg, "\t\t\t\t}\n\t\t\t}\n\t\t}\n\t}\n");
	return 0;
}

/* ---- ConvInteger, QLinearConv ---- */

/* The window of an integer Conv of nsp (1 to 3) spatial axes (x, w, y: its
 * input, weights and output) widened to the kernels' 3 axes, leading axes
 * of extent 1: input, output, kernel, strides, begin pads, dilations.
 * 0, or -1 after a message. */
static int qconv_window(ox_graph *g, ox_node *n, int nsp, const ox_value *x, const ox_value *w, const ox_value *y,
			int64_t I3[3], int64_t O3[3], int64_t K3[3], int64_t S3[3], int64_t P3[3], int64_t D3[3])
{
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	ox_cg_to3(in, nsp, 1, I3), ox_cg_to3(out, nsp, 1, O3), ox_cg_to3(k, nsp, 1, K3);
	ox_cg_to3(s, nsp, 1, S3), ox_cg_to3(pads, nsp, 0, P3), ox_cg_to3(d, nsp, 1, D3);
	return 0;
}

static int emit_convi(ox_cg *cg, ox_graph *g, ox_node *n, int ql)
{
	int iw = ql ? 3 : 1, izx = 2, izw = ql ? 5 : 3;
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, iw), *y = ox_out(g, n, 0);
	int nsp = x->shape.rank - 2;
	if (nsp > 3)
		return ox_error(g, n, "%d spatial axes are not supported (at most 3)", nsp);
	int64_t G = ox_attr_int(n, "group", 1), I3[3], O3[3], K3[3], S3[3], P3[3], D3[3];
	if (qconv_window(g, n, nsp, x, w, y, I3, O3, K3, S3, P3, D3))
		return -1;
	long long M = w->shape.d[0];
	ox_cg_helper(cg, "ox_qsat", qsat_text);
	if (ox_cg_use(cg, "quant_conv", OX_U8))
		return ox_error(g, n, "kernel template templates/quant_conv.c is missing");
	char b1[256], b2[256], b3[256];
	ox_cg_printf(cg, "\t/* %s %d-D, group %lld: x %s %s, w %s %s -> %s ",
		     ql ? "QLinearConv" : "ConvInteger", nsp, (long long)G, ox_cg_sfx(x->dtype),
		     shape_str(g, &x->shape, b1, sizeof b1), ox_cg_sfx(w->dtype),
		     shape_str(g, &w->shape, b2, sizeof b2), ox_cg_sfx(y->dtype));
	ox_cg_printf(cg, "%s */\n",
		     shape_str(g, &y->shape, b3, sizeof b3));
	if (ox_shape_numel(&y->shape) == 0)
		return 0;
	ox_cg_printf(cg, "\tint32_t wz[%lld];\n", M);
	if (ql)
		ox_cg_printf(cg, "\tfloat mult[%lld];\n", M);
	ox_cg_printf(cg, "\tfor (long m = 0; m < %lld; m++) {\n", M);
	ox_cg_printf(cg, "\t\twz[m] = %s;\n", zexpr(n, izw, w->dtype, vidx(g, n, izw, "m"), b1, sizeof b1));
	if (ql)
		ox_cg_printf(cg, "\t\tmult[m] = in1[0] * in4[%s] / in6[0];\n", vidx(g, n, 4, "m"));
	ox_cg_printf(cg, "\t}\n");
	long lo = 0, hi = 0;
	if (ql)
		ox_cg_qrange(y->dtype, &lo, &hi);
	ox_cg_printf(cg, "\tox_qconv((const uint8_t *)in0, (const uint8_t *)in%d, %s, %s, %s, %s, %s, %ld, %ld,\n", iw,
		     ql && n->nin > 8 && n->in[8] >= 0 ? "in8" : "NULL", ql ? "NULL" : "out0",
		     ql ? "(uint8_t *)out0" : "NULL", ql ? "mult" : "NULL", ql ? "(int32_t)in7[0]" : "0", lo, hi);
	ox_cg_printf(cg, "\t\t%d, %s, %d, wz, %lld, %lld, %lld, %lld,\n", flip(x->dtype),
		     zexpr(n, izx, x->dtype, "0", b1, sizeof b1), flip(w->dtype), (long long)x->shape.d[0],
		     (long long)x->shape.d[1], M, (long long)G);
	ox_cg_window_rows(cg, I3, O3, K3, S3);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld); /* begin pads, dilations */\n", (long long)P3[0],
		     (long long)P3[1], (long long)P3[2], (long long)D3[0], (long long)D3[1], (long long)D3[2]);
	return 0;
}

/* ---- onnxcc::QConv, QMatMul, QAdd, QRescale, QPool (opt/qdq.c) ----
 * Integer only: templates/qint.c's ox_qi_rq requantizes with the
 * multipliers and shifts the pass computed; the tables are static const
 * data in the node's function. */

/* attribute list a as `ST const int32_t name[len]` (one value repeated
 * when the list has one), each plus add, at indent ind; st its storage
 * class ("static" in a function, ox_cg_static's at file scope) */
void ox_cg_qi_table(ox_buf *b, const ox_node *n, const char *attr, const char *ind, const char *st, const char *name,
		    long long len, int add)
{
	const int64_t *v = NULL;
	int nv = ox_attr_ints(n, attr, &v);
	ox_buf_printf(b, "%s%s const int32_t %s[%lld] = {", ind, st, name, len);
	for (long long i = 0; i < len; i++)
		ox_buf_printf(b, "%s%s%s%s%lld", i ? "," : "", i % 16 ? " " : "\n", i % 16 ? "" : ind, i % 16 ? "" : "\t",
			      (long long)(nv > 0 ? v[nv == 1 ? 0 : i] : 0) + add);
	ox_buf_printf(b, "\n%s};\n", ind);
}

/* element i of an INTS attribute (0 when absent) */
long long ox_cg_qi_at(const ox_node *n, const char *attr, int i)
{
	const int64_t *v = NULL;
	int nv = ox_attr_ints(n, attr, &v);
	return i < nv ? (long long)v[i] : 0;
}

/* the requantized expression of int32 expression e by multiplier k of the
 * node's ox_m / ox_s, clamped to ox_clip, plus the output zero point zy */
void ox_cg_qi_out(char *buf, size_t sz, const ox_node *n, const char *e, const char *m, const char *s, int yzi)
{
	ox_cg_snprintf(buf, sz, "ox_qi_clamp(%lld + ox_qi_rq(%s, %s, %s), %lld, %lld)", ox_cg_qi_at(n, "ox_zp", yzi), e, m, s,
		 ox_cg_qi_at(n, "ox_clip", 0), ox_cg_qi_at(n, "ox_clip", 1));
}

/* onnxcc::QAdd, QRescale: the statements of output element k (operands
 * of the output's shape), at indent ind; the C loop and the CUDA kernel
 * (codegen/cuda/cuda_quant.c) both print them */
int ox_cg_qi_elem(ox_buf *b, ox_graph *g, ox_node *n, const char *ind)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	const char *yt = ox_cg_ctype(y->dtype);
	long long N = ox_shape_numel(&y->shape);
	char b1[64], b2[64], e[512];
	if (n->op == OX_OP_QAdd) {
		ox_value *bv = ox_in(g, n, 1);
		if (ox_shape_numel(&x->shape) != N || ox_shape_numel(&bv->shape) != N)
			return ox_error(g, n, "operands of different shapes are not supported");
		long long L = ox_attr_int(n, "ox_lshift", 0);
		ox_buf_printf(b, "%sconst int32_t a = ((int32_t)in0[k] - %lld) * %lld, b = ((int32_t)in1[k] - %lld) * %lld;\n",
			      ind, ox_cg_qi_at(n, "ox_zp", 0), 1LL << L, ox_cg_qi_at(n, "ox_zp", 1), 1LL << L);
		ox_buf_printf(b, "%sconst int32_t s = ox_qi_rq(a, %lld, %lld) + ox_qi_rq(b, %lld, %lld);\n", ind,
			      ox_cg_qi_at(n, "ox_m", 0), ox_cg_qi_at(n, "ox_s", 0), ox_cg_qi_at(n, "ox_m", 1),
			      ox_cg_qi_at(n, "ox_s", 1));
		ox_cg_snprintf(b1, sizeof b1, "%lld", ox_cg_qi_at(n, "ox_m", 2));
		ox_cg_snprintf(b2, sizeof b2, "%lld", ox_cg_qi_at(n, "ox_s", 2));
		ox_cg_qi_out(e, sizeof e, n, "s", b1, b2, 2);
	} else {
		ox_buf_printf(b, "%sconst int32_t v = (int32_t)in0[k] - %lld;\n", ind, ox_cg_qi_at(n, "ox_zp", 0));
		if (ox_attr_ints(n, "ox_m", &(const int64_t *){0}) > 0) {
			ox_cg_snprintf(b1, sizeof b1, "%lld", ox_cg_qi_at(n, "ox_m", 0));
			ox_cg_snprintf(b2, sizeof b2, "%lld", ox_cg_qi_at(n, "ox_s", 0));
			ox_cg_qi_out(e, sizeof e, n, "v", b1, b2, 1);
		} else {
			ox_cg_snprintf(e, sizeof e, "ox_qi_clamp(%lld + v, %lld, %lld)", ox_cg_qi_at(n, "ox_zp", 1),
				 ox_cg_qi_at(n, "ox_clip", 0), ox_cg_qi_at(n, "ox_clip", 1));
		}
	}
	ox_buf_printf(b, "%sout0[k] = (%s)%s;\n", ind, yt, e);
	return 0;
}

/* onnxcc::QPool: its index space d = {N C, OH, OW} and the statements of
 * output (c, oh, ow), at indent ind (for both targets, as above; b's
 * index type, $I, for the window's loops) */
int ox_cg_qpool(ox_buf *b, ox_graph *g, ox_node *n, const char *ind, int64_t d[3])
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (x->shape.rank != 4)
		return ox_error(g, n, "only 2-D pooling is supported");
	long long NC = x->shape.d[0] * x->shape.d[1], IH = x->shape.d[2], IW = x->shape.d[3];
	long long OH = y->shape.d[2], OW = y->shape.d[3], KH = IH, KW = IW, SH = 1, SW = 1;
	if (!ox_attr_int(n, "ox_global", 0)) {
		KH = ox_cg_qi_at(n, "kernel_shape", 0), KW = ox_cg_qi_at(n, "kernel_shape", 1);
		const int64_t *st = NULL;
		if (ox_attr_ints(n, "strides", &st) == 2)
			SH = st[0], SW = st[1];
	}
	char b1[64], b2[64], e[512];
	ox_cg_snprintf(b1, sizeof b1, "%lld", ox_cg_qi_at(n, "ox_m", 0));
	ox_cg_snprintf(b2, sizeof b2, "%lld", ox_cg_qi_at(n, "ox_s", 0));
	ox_cg_qi_out(e, sizeof e, n, "s", b1, b2, 1);
	d[0] = NC, d[1] = OH, d[2] = OW;
	ox_buf_printf(b, "%sint32_t s = 0;\n", ind);
	ox_buf_printf(b, "%sfor ($I kh = 0; kh < %lld; kh++)\n%sfor ($I kw = 0; kw < %lld; kw++)\n", ind, KH, ind, KW);
	ox_buf_printf(b, "%s\ts += (int32_t)in0[(c * %lld + oh * %lld + kh) * %lld + ow * %lld + kw] - %lld;\n", ind, IH,
		      SH, IW, SW, ox_cg_qi_at(n, "ox_zp", 0));
	ox_buf_printf(b, "%sout0[(c * %lld + oh) * %lld + ow] = (%s)%s;\n", ind, OH, OW, ox_cg_ctype(y->dtype), e);
	return 0;
}

/* the struct ox_qgeo of a packed or depthwise QConv (its tables, named
 * after the node's function f, printed before it), into t */
static void qgeo_struct(ox_cg *cg, ox_buf *t, ox_graph *g, ox_node *n, const ox_qconvgeo *q, const char *f)
{
	const ox_value *x = ox_in(g, n, 0);
	const int xf = flip(x->dtype), xz = (int)ox_cg_qi_at(n, "ox_zp", 0) + xf;
	const int64_t geo[] = {q->Cg, q->IH, q->IW, q->SH, q->SW, q->PH, q->PW, q->R, q->W};
	ox_buf_printf(t, "static const ox_qgeo %s_q = {\n\t", f);
	for (int i = 0; i < 9; i++)
		ox_buf_printf(t, "%lld, ", (long long)geo[i]);
	ox_buf_puts(t, "/* Cg, IH, IW, SH, SW, PH, PW, R, W */\n");
	ox_buf_printf(t, "\t%lld, %lld, %lld, %s_off, /* taps, fours, bytes between fours */\n", (long long)(q->KH * q->KW),
		      (long long)q->C4, (long long)(q->gbytes / q->C4), f);
	ox_buf_printf(t, "\t%lld, %lld, %lld, %lld, %lld, /* pixels walked, OW, plane, Mg, blocks */\n", (long long)q->P,
		      (long long)q->OW, (long long)(q->OH * q->OW), (long long)q->Mg, (long long)q->MB);
	ox_buf_printf(t, "\t%d, %d, %lld, %lld, %lld, /* x flip and zero point, y zero point and clamp */\n", xf, xz,
		      ox_cg_qi_at(n, "ox_zp", 1), ox_cg_qi_at(n, "ox_clip", 0), ox_cg_qi_at(n, "ox_clip", 1));
	ox_buf_printf(t, "\t%s_cm, %s_zw, %s_rm, %s_rs, %s\n};\n", f, f, f, f, q->dw ? "NULL" : ox_cg_text(cg, "%s_ws", f));
}

/* the taps' offsets in the phases' planes ([SH SW][R][W]), times unit */
static void qgeo_taps(ox_buf *t, const ox_qconvgeo *q, const char *f, int unit)
{
	ox_buf_printf(t, "static const long %s_off[%lld] = {", f, (long long)(q->KH * q->KW));
	for (int64_t kh = 0; kh < q->KH; kh++)
		for (int64_t kw = 0; kw < q->KW; kw++) {
			const int64_t ph = (kh * q->DH % q->SH) * q->SW + kw * q->DW % q->SW;
			const int64_t o = ((ph * q->R + kh * q->DH / q->SH) * q->W + kw * q->DW / q->SW) * unit;
			ox_buf_printf(t, "%s%lld", kh || kw ? ", " : "", (long long)o);
		}
	ox_buf_puts(t, "};\n");
}

/* onnxcc::QConv depthwise on OX_L_QDWW weights: templates/qconv.c's
 * ox_qg_dw, slots of scratch taking every slots-th output channel */
static int emit_qdw(ox_cg *cg, ox_graph *g, ox_node *n, const ox_qconvgeo *q)
{
	ox_value *bv = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	if (bv && (bv->kind != OX_V_CONST || !bv->data || bv->dtype != OX_I32))
		return ox_error(g, n, "the bias is not a constant int32 vector");
	const char *f = cg->fname;
	ox_buf t = {0};
	ox_buf_printf(&t, "/* %s: the depthwise convolution's constants (templates/qconv.c) */\n", f);
	int64_t *bias = malloc((size_t)q->M * sizeof *bias); /* the constant term: the bias */
	for (int64_t m = 0; m < q->M; m++)
		bias[m] = bv ? ((const int32_t *)bv->data->data)[ox_tensor_numel(bv->data) > 1 ? m : 0] : 0;
	qi_array(&t, ox_cg_text(cg, "%s_cm", f), bias, q->M);
	free(bias);
	ox_cg_qi_table(&t, n, "ox_wz", "", "static", ox_cg_text(cg, "%s_zw", f), q->M, 0);
	ox_cg_qi_table(&t, n, "ox_m", "", "static", ox_cg_text(cg, "%s_rm", f), q->M, 0);
	ox_cg_qi_table(&t, n, "ox_s", "", "static", ox_cg_text(cg, "%s_rs", f), q->M, 0);
	ox_buf_printf(&t, "static const long %s_off[%lld] = {", f, (long long)(q->KH * q->KW));
	for (int64_t kh = 0; kh < q->KH; kh++)
		for (int64_t kw = 0; kw < q->KW; kw++)
			ox_buf_printf(&t, "%s%lld", kh || kw ? ", " : "", (long long)(kh * q->DH * q->W + kw * q->DW));
	ox_buf_puts(&t, "};\n");
	qgeo_struct(cg, &t, g, n, q, f);
	ox_cg_helper(cg, ox_cg_text(cg, "%s_q", f), t.s);
	ox_buf_free(&t);
	ox_cg_printf(cg, "\t/* onnxcc::QConv depthwise %s -> %s: %lld slots of scratch */\n", ox_cg_sfx(ox_in(g, n, 0)->dtype),
		     ox_cg_sfx(ox_out(g, n, 0)->dtype), (long long)q->slots);
	ox_cg_tasks(cg, (long)q->slots);
	ox_cg_line(cg, 1, "for (long k = t; k < %lld; k += %lld) { /* image and output channel */",
		   (long long)(q->N * q->M), (long long)q->slots);
	ox_cg_line(cg, 2, "const long m = k %% %lld;", (long long)q->M);
	ox_cg_line(cg, 2, "ox_qg_dw(&%s_q, (const uint8_t *)in0 + (k / %lld * %lld + m / %lld) * %lld, (const int16_t *)in1 + m * %lld,",
		   f, (long long)q->M, (long long)q->C, (long long)q->Mg, (long long)(q->IH * q->IW),
		   (long long)(q->KH * q->KW));
	ox_cg_line(cg, 3, "m, (uint8_t *)out0 + k * %lld, (int16_t *)((uint8_t *)out%d + t * %lld));",
		   (long long)(q->OH * q->OW), n->nout - 1, (long long)q->slot);
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* onnxcc::QConv on weights packed as OX_L_QCONVW (opt/pack.c):
 * templates/qconv.c's kernel. Its constants (ox_qgeo, the tap offsets,
 * the per-channel tables) are file-scope data named after the node's
 * function; the tasks copy the input's fours of channels into the
 * scratch, then compute the tiles. */
static int emit_qconv_packed(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_qconvgeo q;
	if (ox_opt_qconv_geo(g, n, &q))
		return ox_error(g, n, "packed weights but not the packed kernel's convolution");
	if (ox_cg_use(cg, "qconv", OX_U8))
		return ox_error(g, n, "kernel template templates/qconv.c is missing");
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *bv = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	if (bv && (bv->kind != OX_V_CONST || !bv->data || bv->dtype != OX_I32))
		return ox_error(g, n, "the bias is not a constant int32 vector");
	if (q.dw)
		return emit_qdw(cg, g, n, &q);
	const int8_t *wd = w->data->data;
	const int64_t taps = q.KH * q.KW, blk = taps * q.C4 * 32, K = q.Cg * taps;
	const int xf = flip(x->dtype), xz = (int)ox_cg_qi_at(n, "ox_zp", 0) + xf;
	const char *f = cg->fname;
	ox_buf t = {0};
	/* per output channel m: the constant term bias - zx sum w + K zx zw
	 * (modulo 2^32), the weights' zero point in the signed domain */
	ox_buf_printf(&t, "/* %s: the packed convolution's constants (templates/qconv.c) */\n", f);
	int64_t *cm = malloc(2 * (size_t)q.M * sizeof *cm), *ws = cm + q.M; /* ws: the packed weights' sums */
	for (int64_t m = 0; m < q.M; m++) {
		const int64_t b = m / q.Mg * q.MB + m % q.Mg / 8;
		ws[m] = 0;
		for (int64_t r = 0; r < taps * q.C4; r++)
			for (int k = 0; k < 4; k++)
				ws[m] += wd[b * blk + (r * 8 + m % q.Mg % 8) * 4 + k];
		const int64_t zw = ox_cg_qi_at(n, "ox_wz", ox_attr_ints(n, "ox_wz", &(const int64_t *){0}) > 1 ? (int)m : 0);
		const int64_t bias = bv ? ((const int32_t *)bv->data->data)[ox_tensor_numel(bv->data) > 1 ? m : 0] : 0;
		cm[m] = (int32_t)((uint32_t)bias - (uint32_t)xz * (uint32_t)ws[m] + (uint32_t)K * (uint32_t)xz * (uint32_t)zw);
	}
	qi_array(&t, ox_cg_text(cg, "%s_cm", f), cm, q.M);
	qi_array(&t, ox_cg_text(cg, "%s_ws", f), ws, q.M);
	free(cm);
	ox_cg_qi_table(&t, n, "ox_wz", "", "static", ox_cg_text(cg, "%s_zw", f), q.M, 0);
	ox_cg_qi_table(&t, n, "ox_m", "", "static", ox_cg_text(cg, "%s_rm", f), q.M, 0);
	ox_cg_qi_table(&t, n, "ox_s", "", "static", ox_cg_text(cg, "%s_rs", f), q.M, 0);
	qgeo_taps(&t, &q, f, 4);
	qgeo_struct(cg, &t, g, n, &q, f);
	ox_cg_helper(cg, ox_cg_text(cg, "%s_q", f), t.s);
	ox_buf_free(&t);
	const long long isz = q.IH * q.IW, plane = q.OH * q.OW, G = q.G;
	ox_cg_printf(cg, "\t/* onnxcc::QConv %s -> %s, group %lld: the packed integer convolution, %lld tiles of %d "
		     "pixels per image and group */\n", ox_cg_sfx(x->dtype), ox_cg_sfx(ox_out(g, n, 0)->dtype), G,
		     (long long)q.tiles, OX_QG_NR);
	ox_cg_tasks(cg, (long)(q.N * G * q.C4)); /* the copies */
	ox_cg_line(cg, 1, "const long ng = t / %lld; /* image and group */", (long long)q.C4);
	ox_cg_line(cg, 1, "ox_qg_copy(&%s_q, (const uint8_t *)in0 + ng * %lld, (uint8_t *)out%d + ng * %lld, t %% %lld);",
		   f, (long long)q.Cg * isz, n->nout - 1, (long long)q.gbytes, (long long)q.C4);
	/* tasks: image and group, a chunk of blocks of output channels whose
	 * weights take at most 256 KB (kept in L2 over the tiles), a tile */
	int64_t per = (256 << 10) / blk < 1 ? 1 : (256 << 10) / blk, nch = (q.MB + per - 1) / per;
	per = (q.MB + nch - 1) / nch;
	ox_cg_tasks(cg, (long)(q.N * G * nch * q.tiles));
	ox_cg_line(cg, 1, "const long ng = t / %lld, gi = ng %% %lld, ch = t / %lld %% %lld, tl = t %% %lld;",
		   (long long)(nch * q.tiles), G, (long long)q.tiles, (long long)nch, (long long)q.tiles);
	ox_cg_line(cg, 1, "const long b0 = ch * %lld, b1 = b0 + %lld < %lld ? b0 + %lld : %lld; /* blocks of 8 channels */",
		   (long long)per, (long long)per, (long long)q.MB, (long long)per, (long long)q.MB);
	ox_cg_line(cg, 1, "ox_qg_tile(&%s_q, (const uint8_t *)out%d + ng * %lld, (const int8_t *)in1 + gi * %lld, %s,", f,
		   n->nout - 1, (long long)q.gbytes, (long long)(q.MB * blk),
		   q.ones ? ox_cg_text(cg, "(const int8_t *)in1 + %lld", (long long)(G * q.MB * blk)) : "NULL");
	ox_cg_line(cg, 2, "(uint8_t *)out0 + ng / %lld * %lld, gi * %lld, tl, b0, b1);", G, (long long)(q.M * plane),
		   (long long)q.Mg);
	return 0;
}

static int emit_qint(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (ox_cg_use(cg, "qint", OX_U8))
		return ox_error(g, n, "kernel template templates/qint.c is missing");
	const char *yt = ox_cg_ctype(y->dtype);
	long long N = ox_shape_numel(&y->shape);
	char b1[256], b2[256], e[512];
	ox_cg_printf(cg, "\t/* onnxcc::%s %s %s -> %s %s, integer only */\n", ox_ops[n->op].name, ox_cg_sfx(x->dtype),
		     shape_str(g, &x->shape, b1, sizeof b1), ox_cg_sfx(y->dtype), shape_str(g, &y->shape, b2, sizeof b2));
	if (N == 0)
		return 0;
	switch (n->op) {
	case OX_OP_QConv: {
		ox_value *w = ox_in(g, n, 1);
		if (w->layout == OX_L_QCONVW || w->layout == OX_L_QDWW)
			return emit_qconv_packed(cg, g, n);
		int nsp = x->shape.rank - 2;
		if (nsp < 1 || nsp > 3)
			return ox_error(g, n, "%d spatial axes are not supported (1 to 3)", nsp);
		int64_t G = ox_attr_int(n, "group", 1), I3[3], O3[3], K3[3], S3[3], P3[3], D3[3];
		if (qconv_window(g, n, nsp, x, w, y, I3, O3, K3, S3, P3, D3))
			return -1;
		long long M = w->shape.d[0];
		ox_cg_qi_table(&cg->body, n, "ox_wz", "\t", "static", "wz", M, flip(w->dtype));
		ox_cg_qi_table(&cg->body, n, "ox_m", "\t", "static", "rm", M, 0);
		ox_cg_qi_table(&cg->body, n, "ox_s", "\t", "static", "rs", M, 0);
		/* int8 constant weights: each output channel's weight sum, for
		 * the kernel's fast path (templates/qint.c) */
		int fast = w->dtype == OX_I8 && w->kind == OX_V_CONST && w->data && w->data->data && M > 0 &&
			   w->data->nbytes == (size_t)ox_shape_numel(&w->shape);
		if (fast) {
			const int8_t *wd = w->data->data;
			long long per = (long long)w->data->nbytes / M;
			ox_cg_printf(cg, "\tstatic const int32_t ws[%lld] = {", M);
			for (long long m = 0; m < M; m++) {
				long long sum = 0;
				for (long long k = 0; k < per; k++)
					sum += wd[m * per + k];
				ox_cg_printf(cg, "%s%s%lld", m ? "," : "", m % 16 ? " " : "\n\t\t", sum);
			}
			ox_cg_printf(cg, "\n\t};\n");
		}
		ox_cg_printf(cg, "\tox_qi_conv((const uint8_t *)in0, (const uint8_t *)in1, %s, (uint8_t *)out0, rm, rs, "
			     "%lld, %lld, %lld,\n", n->nin > 2 && n->in[2] >= 0 ? "in2" : "NULL", ox_cg_qi_at(n, "ox_zp", 1),
			     ox_cg_qi_at(n, "ox_clip", 0), ox_cg_qi_at(n, "ox_clip", 1));
		ox_cg_printf(cg, "\t\t%d, %lld, %d, wz, %s, %lld, %lld, %lld, %lld,\n", flip(x->dtype),
			     ox_cg_qi_at(n, "ox_zp", 0) + flip(x->dtype), flip(w->dtype), fast ? "ws" : "NULL", (long long)x->shape.d[0],
			     (long long)x->shape.d[1], M, (long long)G);
		ox_cg_window_rows(cg, I3, O3, K3, S3);
		ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld); /* begin pads, dilations */\n",
			     (long long)P3[0], (long long)P3[1], (long long)P3[2], (long long)D3[0], (long long)D3[1],
			     (long long)D3[2]);
		return 0;
	}
	case OX_OP_QMatMul: {
		ox_value *w = ox_in(g, n, 1);
		if (w->shape.rank != 2 || x->shape.rank < 1)
			return ox_error(g, n, "weights must be a [K, N] matrix");
		long long K = w->shape.d[0], NN = w->shape.d[1], R = ox_shape_numel(&x->shape) / (K ? K : 1);
		int fast = w->dtype == OX_I8 && w->kind == OX_V_CONST && w->data && w->data->data &&
			   w->data->nbytes == (size_t)(K * NN);
		if (!fast && ox_cg_use(cg, "quant_matmul", OX_U8))
			return ox_error(g, n, "kernel template templates/quant_matmul.c is missing");
		ox_cg_qi_table(&cg->body, n, "ox_wz", "\t", "static", "wz", NN, flip(w->dtype));
		ox_cg_qi_table(&cg->body, n, "ox_m", "\t", "static", "rm", NN, 0);
		ox_cg_qi_table(&cg->body, n, "ox_s", "\t", "static", "rs", NN, 0);
		/* int8 constant weights: their column sums, for templates/qint.c's
		 * ox_qi_mm (the zero points hoisted out of the sums) */
		if (fast) {
			const int8_t *wd = w->data->data;
			ox_cg_printf(cg, "\tstatic const int32_t ws[%lld] = {", NN);
			for (long long j = 0; j < NN; j++) {
				long long sum = 0;
				for (long long k = 0; k < K; k++)
					sum += wd[k * NN + j];
				ox_cg_printf(cg, "%s%s%lld", j ? "," : "", j % 16 ? " " : "\n\t\t", sum);
			}
			ox_cg_printf(cg, "\n\t};\n");
		}
		int bias = n->nin > 2 && n->in[2] >= 0;
		ox_cg_printf(cg, "\tfor (long i = 0; i < %lld; i++)\n", R);
		ox_cg_printf(cg, "\tfor (long j0 = 0; j0 < %lld; j0 += 256) {\n", NN);
		ox_cg_printf(cg, "\t\tconst long nj = %lld - j0 < 256 ? %lld - j0 : 256;\n\t\tint32_t acc[256];\n", NN, NN);
		if (fast)
			ox_cg_printf(cg, "\t\tox_qi_mm((const uint8_t *)in0 + i * %lld, (const int8_t *)in1, acc, %lld, %lld, j0, "
				     "nj, %d, %lld, wz, ws);\n", K, K, NN, flip(x->dtype), ox_cg_qi_at(n, "ox_zp", 0) + flip(x->dtype));
		else
			ox_cg_printf(cg, "\t\tox_qmm_row((const uint8_t *)in0 + i * %lld, (const uint8_t *)in1, acc, %lld, %lld, j0, "
				     "nj, %d, %lld, %d, wz);\n", K, K, NN, flip(x->dtype), ox_cg_qi_at(n, "ox_zp", 0) + flip(x->dtype),
				     flip(w->dtype));
		ox_cg_printf(cg, "\t\tfor (long j = 0; j < nj; j++) {\n");
		ox_cg_printf(cg, "\t\t\tconst int32_t a = %s;\n",
			     bias ? "(int32_t)((uint32_t)acc[j] + (uint32_t)in2[j0 + j])" : "acc[j]");
		ox_cg_qi_out(e, sizeof e, n, "a", "rm[j0 + j]", "rs[j0 + j]", 1);
		ox_cg_printf(cg, "\t\t\tout0[i * %lld + j0 + j] = (%s)%s;\n\t\t}\n\t}\n", NN, yt, e);
		return 0;
	}
	case OX_OP_QLut: { /* the table as the output's bytes; templates/qconv.c's lookup */
		if (ox_cg_use(cg, "qconv", OX_U8))
			return ox_error(g, n, "kernel template templates/qconv.c is missing");
		ox_cg_printf(cg, "\tstatic const uint8_t lut[256] = {");
		for (int i = 0; i < 256; i++)
			ox_cg_printf(cg, "%s%s%lld", i ? "," : "", i % 16 ? " " : "\n\t\t", ox_cg_qi_at(n, "ox_lut", i) & 255);
		ox_cg_printf(cg, "\n\t};\n\tox_qg_lut((const uint8_t *)in0, %lld, lut, (uint8_t *)out0);\n", N);
		return 0;
	}
	case OX_OP_QAdd:
	case OX_OP_QRescale: {
		ox_buf b = {0};
		if (ox_cg_qi_elem(&b, g, n, "\t\t")) {
			ox_buf_free(&b);
			return -1;
		}
		const char *k0 = "0";
		if (n->op == OX_OP_QAdd) { /* templates/qconv.c's vectors first, the statements after them */
			if (ox_cg_use(cg, "qconv", OX_U8)) {
				ox_buf_free(&b);
				return ox_error(g, n, "kernel template templates/qconv.c is missing");
			}
			const long long qp[12] = {ox_cg_qi_at(n, "ox_zp", 0), ox_cg_qi_at(n, "ox_zp", 1),
						  (long long)ox_attr_int(n, "ox_lshift", 0), ox_cg_qi_at(n, "ox_m", 0),
						  ox_cg_qi_at(n, "ox_s", 0), ox_cg_qi_at(n, "ox_m", 1), ox_cg_qi_at(n, "ox_s", 1),
						  ox_cg_qi_at(n, "ox_m", 2), ox_cg_qi_at(n, "ox_s", 2), ox_cg_qi_at(n, "ox_zp", 2),
						  ox_cg_qi_at(n, "ox_clip", 0), ox_cg_qi_at(n, "ox_clip", 1)};
			ox_cg_printf(cg, "\tstatic const int32_t qp[12] = {");
			for (int i = 0; i < 12; i++)
				ox_cg_printf(cg, "%s%lld", i ? ", " : "", qp[i]);
			ox_cg_printf(cg, "};\n");
			ox_cg_printf(cg, "\tconst long k0 = ox_qg_add((const uint8_t *)in0, %d, (const uint8_t *)in1, %d, (uint8_t *)out0, %lld, qp);\n",
				     ox_in(g, n, 0)->dtype == OX_I8, ox_in(g, n, 1)->dtype == OX_I8, N);
			k0 = "k0";
		}
		ox_cg_printf(cg, "\tfor (long k = %s; k < %lld; k++) {\n%s\t}\n", k0, N, b.s);
		ox_buf_free(&b);
		return 0;
	}
	case OX_OP_QPool: {
		ox_buf b = {.ix = "long"};
		int64_t d[3];
		if (ox_cg_qpool(&b, g, n, "\t\t", d)) {
			ox_buf_free(&b);
			return -1;
		}
		ox_cg_printf(cg, "\tfor (long c = 0; c < %lld; c++)\n\tfor (long oh = 0; oh < %lld; oh++)\n", (long long)d[0],
			     (long long)d[1]);
		ox_cg_printf(cg, "\tfor (long ow = 0; ow < %lld; ow++) {\n%s\t}\n", (long long)d[2], b.s);
		ox_buf_free(&b);
		return 0;
	}
	}
	return ox_error(g, n, "not an integer kernel");
}

/* com.microsoft MatMulNBits (templates/mmnb.c): A's rows, the columns
 * in tasks */
static int emit_mmnb(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int64_t K, N, bits, bs, nb;
	if (ox_mmnb_geo(g, n, &K, &N, &bits, &bs, &nb))
		return -1;
	const ox_value *a = ox_in(g, n, 0), *zp = n->nin > 3 && n->in[3] >= 0 ? ox_in(g, n, 3) : NULL;
	const int hasbias = n->nin > 5 && n->in[5] >= 0;
	if (ox_cg_use(cg, "mmnb", a->dtype))
		return ox_error(g, n, "kernel template templates/mmnb.c is missing");
	ox_shape rows = a->shape;
	rows.rank--;
	char M[1100];
	ox_cg_snprintf(M, sizeof M, "%s", rows.rank ? ox_cg_numel(cg, &rows) : "1");
	ox_cg_printf(cg, "\t/* MatMulNBits: rows of %lld x %lld-bit [%lld, %lld] in blocks of %lld, %s zero points%s */\n",
		     (long long)K, (long long)bits, (long long)N, (long long)K, (long long)bs,
		     !zp ? "default" : zp->dtype == OX_U8 ? "packed" : ox_dtype_name(zp->dtype), hasbias ? ", bias" : "");
	const char *wts = ox_cg_text(cg, "in1, in2, %s, %s", zp && zp->dtype == OX_U8 ? "in3" : "NULL",
				     zp && zp->dtype != OX_U8 ? "in3" : "NULL");
	/* ox_mmnb_rows's call up to its columns */
	const char *rowsf = ox_cg_text(cg, "ox_mmnb_rows_%s(in0, %s, %lld, %lld, %lld, %d, %s, %s, ", ox_cg_sfx(a->dtype), M,
				       (long long)K, (long long)N, (long long)bs, (int)bits, wts, hasbias ? "in5" : "NULL");
	ox_gemmgeo q;
	int slots;
	if (!n->scratch || !ox_opt_mmnb_tile(g, n, &q, &slots)) {
		const long T = N >= 64 * 16 ? 64 : (long)(N + 15) / 16;
		ox_cg_tasks(cg, T);
		ox_cg_line(cg, 1, "%st * %lld / %ld, (t + 1) * %lld / %ld, out0);", rowsf, (long long)N, T, (long long)N, T);
		return 0;
	}
	/* many rows (a prefill): per group of the GEMM's columns, the weights
	 * dequantized a chunk of K at a time into the task slot's panel, the
	 * tiles' sums kept in the output between chunks */
	static const ox_epi none;
	ox_uk_use(cg);
	const int64_t gw = (int64_t)q.ocb * q.b, ng = ((q.N + q.b - 1) / q.b + q.ocb - 1) / q.ocb, kc = q.kchunk;
	const int64_t nch = (K + kc - 1) / kc;
	ox_cg_tasks(cg, slots);
	ox_cg_line(cg, 1, "if (%s < %d) { /* a few rows: the blocks as they lie, groups of %lld columns */", M,
		   OX_MMNB_PANEL_ROWS, (long long)gw);
	ox_cg_line(cg, 2, "for (long gi = t; gi < %lld; gi += %d)", (long long)ng, slots);
	ox_cg_line(cg, 3, "%sgi * %lld, gi < %lld ? gi * %lld + %lld : %lld, out0);", rowsf, (long long)gw, (long long)(ng - 1),
		   (long long)gw, (long long)gw, (long long)N);
	ox_cg_line(cg, 1, "} else { /* %d slots of a panel of %lld x %lld floats */", slots, (long long)kc, (long long)gw);
	ox_cg_line(cg, 2, "float *P = (float *)out%d + t * %lld;", n->nout - 1, (long long)(kc * gw));
	ox_cg_line(cg, 2, "for (long gi = t; gi < %lld; gi += %d) {", (long long)ng, slots);
	const char *kn = nch > 1 ? ox_cg_text(cg, "ch < %lld ? %lld : %lld", (long long)(nch - 1), (long long)kc,
					      (long long)(K - (nch - 1) * kc))
				 : ox_cg_text(cg, "%lld", (long long)K);
	const char *pre = ox_cg_text(cg, "ox_mmnb_panel(%s, %lld, %lld, %lld, %d, gi * %lld, gw, ch * %lld, %s, P);", wts,
				     (long long)N, (long long)K, (long long)bs, (int)bits, (long long)gw, (long long)kc, kn);
	const char *bias = ox_cg_text(cg, "in5 + gi * %lld", (long long)gw);
	ox_cg_gemm_chunks(cg, g, &q, &none, 3, hasbias ? bias : NULL, pre, "P", 0);
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

int emit_quant(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_MatMulNBits:
		return emit_mmnb(cg, g, n);
	case OX_OP_QConv:
	case OX_OP_QMatMul:
	case OX_OP_QAdd:
	case OX_OP_QRescale:
	case OX_OP_QPool:
	case OX_OP_QLut:
		return emit_qint(cg, g, n);
	case OX_OP_QuantizeLinear:
		return emit_qdq(cg, g, n, 0);
	case OX_OP_DequantizeLinear:
		return emit_qdq(cg, g, n, 1);
	case OX_OP_DynamicQuantizeLinear:
		return emit_dynq(cg, g, n);
	case OX_OP_MatMulInteger:
		return emit_mmi(cg, g, n, 0);
	case OX_OP_QLinearMatMul:
		return emit_mmi(cg, g, n, 1);
	case OX_OP_ConvInteger:
		return emit_convi(cg, g, n, 0);
	case OX_OP_QLinearConv:
		return emit_convi(cg, g, n, 1);
	}
	return ox_error(g, n, "not a quantization op");
}
