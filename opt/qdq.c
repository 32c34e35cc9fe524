/* qdq.c: int8 QDQ models onto integer kernels.
 *
 * A QDQ model (ONNX Runtime's quantize_static) computes each op in float
 * between DequantizeLinear (DQ) and QuantizeLinear (Q) nodes. This pass
 * rewrites the groups it recognizes into onnxcc's integer ops (ops.def's
 * last section, templates/qint.c): int8 / uint8 operands, int32 sums and
 * requantization by a fixed-point multiplier and shift computed here.
 *   Conv, MatMul, Gemm(x, w, b): x = DQ(8-bit x), w = DQ(constant 8-bit
 *       weights, per tensor or per output channel), b none, DQ(constant
 *       int32) or a float constant (re-quantized to scale s_x s_w);
 *       the output goes to one Q only, maybe through one Relu (the clamp's
 *       lower bound becomes the output zero point) -> QConv / QMatMul
 *       with M = s_x s_w / s_y per output channel
 *   Add(DQ(a), DQ(b)) -> [Relu] -> Q, equal shapes -> QAdd (TFLite's
 *       scheme: both operands shifted left 20 bits, each rescaled to
 *       the larger scale's half, the sum rescaled to the output's)
 *   AveragePool (no pads, no dilations), GlobalAveragePool of DQ(x)
 *       -> Q: QPool, the integer sum rescaled by s_x / (s_y count)
 *   Reshape, Flatten, MaxPool and Relu of DQ(x) (per tensor): the op on
 *       the 8-bit x, then DQ (exact: these commute with an increasing
 *       affine map; Relu becomes a clamp at x's zero point, QRescale)
 *   Q(DQ(x)), both per tensor: x itself when the parameters agree, else
 *       QRescale (s_x / s_y)
 *   QLinearConv, QLinearMatMul (the QOperator form) with constant scales,
 *       zero points and 8-bit weights -> QConv / QMatMul likewise
 *   Sigmoid, Tanh, Exp, Softplus, HardSigmoid, HardSwish, LeakyRelu, Elu
 *       of DQ(x) [-> Relu] -> Q, per tensor -> QLut: a 256-byte table
 *       (the C target)
 * What is not matched keeps its float DQ -> op -> Q form, which is exact;
 * the DQ of the graph's outputs and the Q of its float inputs stay.
 * Fixed point: M = m 2^(s - 31) with m in [2^30, 2^31) (gemmlowp's
 * QuantizeMultiplier); templates/qint.c rounds twice, so a result may be
 * one step off ONNX Runtime's rint(acc M) (docs/optimizer.md, qdq).
 * Runs with --opt 1, before layout (which leaves the integer ops plain).
 * Requires: constant shapes, dtypes. Invalidates: uses (refilled), node
 * positions (sorted, compacted).
 */
#include "opt.h"
#include "../ir/family.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QMAX 8192 /* most per-channel scales handled */

/* quantization parameters of a DQ or Q node (its scale and zero point) */
typedef struct {
	ox_id x;        /* DQ: its 8-bit input */
	int dt;         /* the 8-bit dtype */
	int axis;       /* per axis: the axis; -1 per tensor */
	int64_t n;      /* scales */
	double *s;      /* n scales */
	int64_t *z;     /* n zero points */
} qparams;

static int byte_int(int dt)
{
	return dt == OX_I8 || dt == OX_U8;
}

static void qrange(int dt, int64_t *lo, int64_t *hi)
{
	*lo = dt == OX_I8 ? -128 : 0;
	*hi = dt == OX_I8 ? 127 : 255;
}

/* cnt scales of constant s and zero points of z (or none) into p (its
 * other fields set by the caller); 0, else -1 (a scale not positive and
 * finite) */
static int read_params(ox_graph *g, const ox_value *s, const ox_value *z, int64_t cnt, qparams *p)
{
	p->n = cnt;
	p->s = ox_ir_alloc(g, (size_t)cnt * sizeof *p->s);
	p->z = ox_ir_alloc(g, (size_t)cnt * sizeof *p->z);
	for (int64_t i = 0; i < cnt; i++) {
		p->s[i] = ox_tensor_get_f64(s->data, i);
		p->z[i] = z ? ox_tensor_get_i64(z->data, i) : 0;
		if (!(p->s[i] > 0) || !isfinite(p->s[i]))
			return -1;
	}
	return 0;
}

/* parameters of live Q / DQ node n with constant float32 scale and zero
 * point, 8-bit (or a DQ of int32: a bias); 0, else -1 */
static int params_of(ox_graph *g, const ox_node *n, qparams *p)
{
	if (n->dead || (n->op != OX_OP_DequantizeLinear && n->op != OX_OP_QuantizeLinear))
		return -1;
	int dq = n->op == OX_OP_DequantizeLinear;
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *z = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int dt = dq ? x->dtype : y->dtype;
	if (!(byte_int(dt) || (dq && dt == OX_I32)) || !s || s->kind != OX_V_CONST || s->dtype != OX_F32 || (dq ? y : x)->dtype != OX_F32 ||
	    (z && z->kind != OX_V_CONST) || (!dq && ox_attr_int(n, "saturate", 1) != 1))
		return -1;
	int axis;
	int64_t block;
	int lay = ox_ir_quant_layout(g, n, &axis, &block);
	if (lay != OX_QL_TENSOR && lay != OX_QL_AXIS)
		return -1;
	int64_t cnt = ox_shape_numel(&s->shape);
	if (cnt < 1 || cnt > QMAX)
		return -1;
	p->x = n->in[0], p->dt = dt, p->axis = lay == OX_QL_AXIS ? axis : -1;
	return read_params(g, s, z, cnt, p);
}

/* value v is DQ's output, per tensor: 0 and p, else -1 */
static int dq_tensor(ox_graph *g, ox_id v, qparams *p)
{
	ox_id pr = g->vals[v].producer;
	if (pr < 0 || g->nodes[pr].op != OX_OP_DequantizeLinear || params_of(g, &g->nodes[pr], p) || p->axis >= 0 ||
	    !byte_int(p->dt))
		return -1;
	return 0;
}

/* real multiplier M as m 2^(s - 31), m in [2^30, 2^31); -1 if too large */
static int fixed_point(double M, int64_t *m, int64_t *s)
{
	int e;
	double q = frexp(M, &e);
	int64_t mm = llround(q * 2147483648.0);
	if (mm == ((int64_t)1 << 31))
		mm /= 2, e++;
	if (e > 30)
		return -1;
	if (e < -62)
		mm = 0, e = 0;
	*m = mm, *s = e;
	return 0;
}

/* Per node: the node that reads value v when it is its only reader (not a
 * graph output), else -1 */
static int *sole;

static void fill_sole(ox_graph *g)
{
	ox_ir_fill_uses(g);
	free(sole);
	sole = malloc((size_t)(g->nvals + 1) * sizeof *sole);
	for (int i = 0; i < g->nvals; i++)
		sole[i] = -1;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nin; k++) {
			ox_id v = g->nodes[i].in[k];
			if (v >= 0 && g->vals[v].nuses == 1 && !g->vals[v].is_output)
				sole[v] = i;
		}
}

/* The Q that alone reads v, maybe through a Relu (*relu: its node, or -1);
 * its parameters per tensor in q. Its node, or -1. */
static int sole_q(ox_graph *g, ox_id v, int *relu, qparams *q)
{
	int c = sole[v];
	*relu = -1;
	if (c >= 0 && !g->nodes[c].dead && g->nodes[c].op == OX_OP_Relu) {
		*relu = c;
		c = sole[g->nodes[c].out[0]];
	}
	if (c < 0 || g->nodes[c].dead || g->nodes[c].op != OX_OP_QuantizeLinear || g->nodes[c].in[0] < 0 ||
	    params_of(g, &g->nodes[c], q) || q->axis >= 0)
		return -1;
	return c;
}

static ox_attr *ints_attr(ox_graph *g, int nid, const char *name, const int64_t *v, int n)
{
	ox_attr *a = ox_ir_add_attr(g, &g->nodes[nid], name, OX_AT_INTS);
	a->n = n;
	a->ints = ox_ir_alloc(g, (size_t)(n + 1) * sizeof *a->ints);
	memcpy(a->ints, v, (size_t)n * sizeof *v);
	return a;
}

/* A new integer node op(in[0..nin-1]) named after node `like`, writing
 * value out; copies like's attributes when copy is set. Its id. */
static int new_node(ox_graph *g, int op, int like, const ox_id *in, int nin, ox_id out, int copy)
{
	int nid = ox_ir_add_node(g, op, ox_ops[op].name, g->nodes[like].name, nin, 1);
	ox_node *n = &g->nodes[nid];
	n->domain = ox_op_domain(op);
	n->opset = g->nodes[like].opset;
	memcpy(n->in, in, (size_t)nin * sizeof *in);
	n->out[0] = out;
	if (copy)
		for (int i = 0; i < g->nodes[like].nattr; i++) {
			const ox_attr *a = &g->nodes[like].attrs[i];
			*ox_ir_add_attr(g, &g->nodes[nid], a->name, a->type) = *a;
		}
	return nid;
}

/* the output dtype, zero points, clamp and the ONNX nodes an integer node
 * covers (m[0..k-1], the last the Q; -1 for one absent, such as no Relu) */
static void finish(ox_graph *g, int nid, const qparams *q, int relu, const int64_t *zp, int nzp, const int *m, int k)
{
	int64_t lo, hi;
	qrange(q->dt, &lo, &hi);
	if (relu >= 0 && q->z[0] > lo)
		lo = q->z[0];
	int64_t clip[2] = {lo, hi};
	ox_ir_add_attr(g, &g->nodes[nid], "ox_dtype", OX_AT_INT)->i = q->dt;
	ints_attr(g, nid, "ox_zp", zp, nzp);
	ints_attr(g, nid, "ox_clip", clip, 2);
	ox_node *cov[4];
	int nc = 0;
	for (int i = 0; i < k; i++)
		if (m[i] >= 0)
			cov[nc++] = &g->nodes[m[i]];
	ox_ir_set_fused(g, &g->nodes[nid], cov, nc);
	for (int i = 0; i < k; i++)
		if (m[i] >= 0)
			g->nodes[m[i]].dead = 1;
}

/* Conv, MatMul, Gemm -> QConv, QMatMul */
static int rewrite_linear(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	int op = n->op;
	if (n->nin < 2 || n->in[1] < 0)
		return 0;
	qparams qx, qw, qy, qb;
	int relu;
	int qi = sole_q(g, n->out[0], &relu, &qy);
	if (qi < 0 || dq_tensor(g, n->in[0], &qx))
		return 0;
	ox_id wid = n->in[1];
	ox_id wpr = g->vals[wid].producer;
	if (wpr < 0 || params_of(g, &g->nodes[wpr], &qw) || !byte_int(qw.dt) || g->vals[qw.x].kind != OX_V_CONST)
		return 0;
	ox_value *w = &g->vals[qw.x];
	int64_t M, K;  /* output channels, reduction */
	int transb = 0, waxis;
	if (op == OX_OP_Conv) {
		M = w->shape.d[0], K = ox_shape_numel(&w->shape) / (M ? M : 1), waxis = 0;
	} else {
		if (w->shape.rank != 2)
			return 0;
		if (op == OX_OP_Gemm) {
			if (ox_attr_int(n, "transA", 0) || ox_attr_float(n, "alpha", 1) != 1 ||
			    ox_attr_float(n, "beta", 1) != 1 || g->vals[n->in[0]].shape.rank != 2)
				return 0;
			transb = (int)ox_attr_int(n, "transB", 0);
		}
		M = w->shape.d[transb ? 0 : 1], K = w->shape.d[transb ? 1 : 0], waxis = transb ? 0 : 1;
	}
	if (M < 1 || M > QMAX || (qw.axis >= 0 && qw.axis != waxis))
		return 0;
	/* the bias as float, per output channel */
	double *bf = calloc((size_t)M, sizeof *bf);
	int bi = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1, ok = 1;
	if (bi >= 0) {
		ox_id bpr = g->vals[bi].producer;
		ox_value *b = &g->vals[bi];
		if (bpr >= 0 && !params_of(g, &g->nodes[bpr], &qb) && g->vals[qb.x].kind == OX_V_CONST &&
		    ox_shape_numel(&g->vals[qb.x].shape) == M) {
			for (int64_t i = 0; i < M; i++) {
				int64_t j = qb.n == 1 ? 0 : i;
				bf[i] = (double)(ox_tensor_get_i64(g->vals[qb.x].data, i) - qb.z[j]) * qb.s[j];
			}
		} else if (b->kind == OX_V_CONST && b->dtype == OX_F32 &&
			   (ox_shape_numel(&b->shape) == M || ox_shape_numel(&b->shape) == 1)) {
			for (int64_t i = 0; i < M; i++)
				bf[i] = ox_tensor_get_f64(b->data, ox_shape_numel(&b->shape) == 1 ? 0 : i);
		} else {
			ok = 0;
		}
	}
	int64_t *mm = malloc((size_t)(3 * M) * sizeof *mm), *ms = mm + M, *wz = mm + 2 * M;
	ox_shape bs = {1, {M}};
	ox_tensor *bt = ox_ir_new_tensor(g, OX_I32, &bs);
	for (int64_t i = 0; i < M && ok; i++) {
		int64_t j = qw.n == 1 ? 0 : i;
		double sxw = (double)(float)(qx.s[0] * qw.s[j]);
		double bq = nearbyint(bf[i] / sxw);
		wz[i] = qw.z[j];
		if (fixed_point(qx.s[0] * qw.s[j] / qy.s[0], &mm[i], &ms[i]) || fabs(bq) > 2147483647.0)
			ok = 0;
		else
			ox_tensor_set_i64(bt, i, (int64_t)bq);
	}
	free(bf);
	if (!ok) {
		free(mm);
		return 0;
	}
	ox_id wv = qw.x;
	if (transb) {
		/* [N, K] -> [K, N] */
		ox_shape ts = {2, {K, M}};
		ox_tensor *t = ox_ir_new_tensor(g, w->dtype, &ts);
		const uint8_t *src = w->data->data;
		uint8_t *dst = t->data;
		for (int64_t i = 0; i < M; i++)
			for (int64_t k = 0; k < K; k++)
				dst[k * M + i] = src[i * K + k];
		char name[256];
		snprintf(name, sizeof name, "%s@kn", g->vals[wv].name);
		wv = ox_ir_add_const(g, name, t);
	}
	char name[256];
	snprintf(name, sizeof name, "%s@i32", n->name[0] ? n->name : "bias");
	ox_id in[3] = {qx.x, wv, ox_ir_add_const(g, name, bt)};
	ox_id out = g->nodes[qi].out[0];
	int nid = new_node(g, op == OX_OP_Conv ? OX_OP_QConv : OX_OP_QMatMul, ni, in, 3, out, op == OX_OP_Conv);
	ints_attr(g, nid, "ox_wz", wz, (int)M);
	ints_attr(g, nid, "ox_m", mm, (int)M);
	ints_attr(g, nid, "ox_s", ms, (int)M);
	free(mm);
	int64_t zp[2] = {qx.z[0], qy.z[0]};
	int cov[3] = {ni, relu, qi};
	finish(g, nid, &qy, relu, zp, 2, cov, 3);
	return 1;
}

/* the constant scale sv and zero point zv (or none) of a QOperator
 * node's operand of dtype dt, 1 or cnt values (float32 scales): 0 and p,
 * else -1 */
static int const_params(ox_graph *g, ox_id sv, ox_id zv, int dt, int64_t cnt, qparams *p)
{
	ox_value *s = sv >= 0 ? &g->vals[sv] : NULL, *z = zv >= 0 ? &g->vals[zv] : NULL;
	if (!s || s->kind != OX_V_CONST || s->dtype != OX_F32 || (z && (z->kind != OX_V_CONST || z->dtype != dt)))
		return -1;
	int64_t n = ox_shape_numel(&s->shape);
	if ((n != 1 && n != cnt) || n > QMAX || (z && ox_shape_numel(&z->shape) != n))
		return -1;
	p->dt = dt, p->axis = n == 1 ? -1 : 0;
	return read_params(g, s, z, n, p);
}

/* QLinearConv, QLinearMatMul (the QOperator form of quantize_static) with
 * constant scales, zero points and 8-bit weights -> QConv / QMatMul, the
 * same integer kernels as the QDQ form: x (0), x_scale, x_zp, w (3),
 * w_scale, w_zp (per tensor or per output channel), y_scale, y_zp, and
 * QLinearConv's int32 bias B (scale x_scale w_scale, zero point 0) */
static int rewrite_qlinear(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	const int conv = n->op == OX_OP_QLinearConv;
	if (n->nin < 8 || n->in[3] < 0 || n->in[0] < 0)
		return 0;
	ox_value *x = &g->vals[n->in[0]], *w = &g->vals[n->in[3]], *y = &g->vals[n->out[0]];
	if (!byte_int(x->dtype) || !byte_int(w->dtype) || !byte_int(y->dtype) || w->kind != OX_V_CONST || !w->data)
		return 0;
	if (!conv && w->shape.rank != 2)
		return 0;
	int64_t M = conv ? w->shape.d[0] : w->shape.d[1];
	if (M < 1 || M > QMAX)
		return 0;
	qparams qx, qw, qy;
	if (const_params(g, n->in[1], n->in[2], x->dtype, 1, &qx) || const_params(g, n->in[4], n->in[5], w->dtype, M, &qw) ||
	    const_params(g, n->in[6], n->in[7], y->dtype, 1, &qy))
		return 0;
	ox_id bias = -1;
	if (conv && n->nin > 8 && n->in[8] >= 0) {
		ox_value *b = &g->vals[n->in[8]];
		if (b->kind != OX_V_CONST || b->dtype != OX_I32 || ox_shape_numel(&b->shape) != M)
			return 0;
		bias = n->in[8];
	}
	int64_t *mm = malloc((size_t)(3 * M) * sizeof *mm), *ms = mm + M, *wz = mm + 2 * M;
	for (int64_t i = 0; i < M; i++) {
		int64_t j = qw.n == 1 ? 0 : i;
		wz[i] = qw.z[j];
		if (fixed_point(qx.s[0] * qw.s[j] / qy.s[0], &mm[i], &ms[i])) {
			free(mm);
			return 0;
		}
	}
	ox_id in[3] = {n->in[0], n->in[3], bias};
	int nid = new_node(g, conv ? OX_OP_QConv : OX_OP_QMatMul, ni, in, bias >= 0 ? 3 : 2, n->out[0], conv);
	ints_attr(g, nid, "ox_wz", wz, (int)M);
	ints_attr(g, nid, "ox_m", mm, (int)M);
	ints_attr(g, nid, "ox_s", ms, (int)M);
	free(mm);
	int64_t zp[2] = {qx.z[0], qy.z[0]};
	int cov[1] = {ni};
	finish(g, nid, &qy, -1, zp, 2, cov, 1);
	return 1;
}

/* op of unary f32 op n at x, in double (the ONNX definitions, the
 * attributes' defaults); 0 and *y, else -1 (an op the table does not take) */
static int unary_at(const ox_node *n, double x, double *y)
{
	switch (n->op) {
	case OX_OP_Sigmoid: *y = 1 / (1 + exp(-x)); return 0;
	case OX_OP_Tanh: *y = tanh(x); return 0;
	case OX_OP_Exp: *y = exp(x); return 0;
	case OX_OP_Softplus: *y = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); return 0;
	case OX_OP_HardSigmoid: {
		double a = ox_attr_float(n, "alpha", 0.2f), b = ox_attr_float(n, "beta", 0.5f), v = a * x + b;
		*y = v < 0 ? 0 : v > 1 ? 1 : v;
		return 0;
	}
	case OX_OP_HardSwish: {
		double v = x / 6 + 0.5;
		*y = x * (v < 0 ? 0 : v > 1 ? 1 : v);
		return 0;
	}
	case OX_OP_LeakyRelu: *y = x >= 0 ? x : ox_attr_float(n, "alpha", 0.01f) * x; return 0;
	case OX_OP_Elu: *y = x >= 0 ? x : ox_attr_float(n, "alpha", 1.0f) * expm1(x); return 0;
	}
	return -1;
}

/* DQ(x) -> a unary f32 op [-> Relu] -> Q, per tensor -> QLut: the output
 * byte of each of the 256 input bytes, computed here as the float model
 * computes it (dequantize in float, the op, quantize: rint of the float
 * quotient, ties to even, saturated). The C target only (the GPU keeps
 * the float form). */
static int rewrite_lut(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	qparams qx, qy;
	int relu;
	double probe;
	if (g->gpu || n->nin != 1 || unary_at(n, 0, &probe) || dq_tensor(g, n->in[0], &qx))
		return 0;
	int qi = sole_q(g, n->out[0], &relu, &qy);
	if (qi < 0 || !byte_int(qy.dt))
		return 0;
	int64_t lut[256], lo, hi;
	qrange(qy.dt, &lo, &hi);
	for (int b = 0; b < 256; b++) {
		const int v = qx.dt == OX_I8 ? (int)(int8_t)b : b;
		const float x = (float)(v - qx.z[0]) * (float)qx.s[0];
		double y;
		unary_at(n, x, &y);
		float f = (float)y;
		if (relu >= 0 && !(f > 0))
			f = f != f ? f : 0.0f;
		const float t = f / (float)qy.s[0];
		double r = t != t ? 0 : nearbyint(t) + (double)qy.z[0];
		const int64_t q = r < lo ? lo : r > hi ? hi : (int64_t)r;
		lut[b] = qy.dt == OX_I8 ? (int64_t)(uint8_t)(int8_t)q : q; /* the byte */
	}
	ox_id in[1] = {qx.x};
	int nid = new_node(g, OX_OP_QLut, ni, in, 1, g->nodes[qi].out[0], 0);
	ints_attr(g, nid, "ox_lut", lut, 256);
	int64_t zp[2] = {qx.z[0], qy.z[0]};
	int cov[3] = {ni, relu, qi};
	finish(g, nid, &qy, -1, zp, 2, cov, 3);
	return 1;
}

/* Add(DQ(a), DQ(b)) [-> Relu] -> Q -> QAdd */
static int rewrite_add(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	qparams qa, qb, qy;
	int relu;
	int qi = sole_q(g, n->out[0], &relu, &qy);
	if (qi < 0 || dq_tensor(g, n->in[0], &qa) || dq_tensor(g, n->in[1], &qb))
		return 0;
	ox_value *a = &g->vals[qa.x], *b = &g->vals[qb.x];
	if (a->shape.rank != b->shape.rank || memcmp(a->shape.d, b->shape.d, (size_t)a->shape.rank * sizeof(ox_dim)))
		return 0;
	const int L = 20;
	double twice = 2 * (qa.s[0] > qb.s[0] ? qa.s[0] : qb.s[0]);
	int64_t m[3], s[3];
	if (fixed_point(qa.s[0] / twice, &m[0], &s[0]) || fixed_point(qb.s[0] / twice, &m[1], &s[1]) ||
	    fixed_point(twice / ((double)(1 << L) * qy.s[0]), &m[2], &s[2]))
		return 0;
	ox_id in[2] = {qa.x, qb.x};
	int nid = new_node(g, OX_OP_QAdd, ni, in, 2, g->nodes[qi].out[0], 0);
	ox_ir_add_attr(g, &g->nodes[nid], "ox_lshift", OX_AT_INT)->i = L;
	ints_attr(g, nid, "ox_m", m, 3);
	ints_attr(g, nid, "ox_s", s, 3);
	int64_t zp[3] = {qa.z[0], qb.z[0], qy.z[0]};
	int cov[3] = {ni, relu, qi};
	finish(g, nid, &qy, relu, zp, 3, cov, 3);
	return 1;
}

/* AveragePool, GlobalAveragePool of DQ(x) -> Q: QPool */
static int rewrite_pool(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	qparams qx, qy;
	int relu;
	int qi = sole_q(g, n->out[0], &relu, &qy);
	if (qi < 0 || relu >= 0 || dq_tensor(g, n->in[0], &qx) || g->vals[qx.x].shape.rank != 4)
		return 0;
	int global = n->op == OX_OP_GlobalAveragePool;
	const ox_value *x = &g->vals[qx.x];
	int64_t cnt = x->shape.d[2] * x->shape.d[3];
	if (!global) {
		const int64_t *v;
		int nk = ox_attr_ints(n, "kernel_shape", &v);
		if (nk != 2 || ox_attr_int(n, "ceil_mode", 0))
			return 0;
		cnt = v[0] * v[1];
		const char *ap = ox_attr_str(n, "auto_pad", "NOTSET");
		if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
			return 0;
		int np = ox_attr_ints(n, "pads", &v);
		for (int i = 0; i < np; i++)
			if (v[i])
				return 0;
		int nd = ox_attr_ints(n, "dilations", &v);
		for (int i = 0; i < nd; i++)
			if (v[i] != 1)
				return 0;
	}
	int64_t m, s;
	if (cnt < 1 || cnt > (1 << 22) || fixed_point(qx.s[0] / (qy.s[0] * (double)cnt), &m, &s))
		return 0;
	ox_id in[1] = {qx.x};
	int nid = new_node(g, OX_OP_QPool, ni, in, 1, g->nodes[qi].out[0], 0);
	if (global) {
		ox_ir_add_attr(g, &g->nodes[nid], "ox_global", OX_AT_INT)->i = 1;
	} else {
		const int64_t *v;
		int nk = ox_attr_ints(&g->nodes[ni], "kernel_shape", &v);
		ints_attr(g, nid, "kernel_shape", v, nk);
		int ns = ox_attr_ints(&g->nodes[ni], "strides", &v);
		if (ns == 2)
			ints_attr(g, nid, "strides", v, 2);
	}
	ints_attr(g, nid, "ox_m", &m, 1);
	ints_attr(g, nid, "ox_s", &s, 1);
	int64_t zp[2] = {qx.z[0], qy.z[0]};
	int cov[2] = {ni, qi};
	finish(g, nid, &qy, -1, zp, 2, cov, 2);
	return 1;
}

/* a new value like v with dtype dt */
static ox_id value_like(ox_graph *g, ox_id v, int dt)
{
	char name[256];
	snprintf(name, sizeof name, "%s@q", g->vals[v].name);
	ox_id id = ox_ir_add_value(g, name, OX_V_INTERNAL);
	g->vals[id].dtype = dt;
	g->vals[id].has_shape = 1;
	g->vals[id].shape = g->vals[v].shape;
	g->vals[id].offset = -1;
	return id;
}

/* op(DQ(x)) -> DQ(op(x)) for Reshape, Flatten, MaxPool, Relu */
static int push_down(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	qparams qx;
	if (n->in[0] < 0 || dq_tensor(g, n->in[0], &qx))
		return 0;
	if (n->op == OX_OP_MaxPool && n->nout > 1 && n->out[1] >= 0 &&
	    (g->vals[n->out[1]].nuses || g->vals[n->out[1]].is_output))
		return 0;
	int dqn = g->vals[n->in[0]].producer;
	ox_id y = n->out[0], yq = value_like(g, y, qx.dt);
	int nid;
	if (n->op == OX_OP_Relu) {
		nid = new_node(g, OX_OP_QRescale, ni, &qx.x, 1, yq, 0);
		int64_t lo, hi;
		qrange(qx.dt, &lo, &hi);
		int64_t zp[2] = {qx.z[0], qx.z[0]}, clip[2] = {qx.z[0] > lo ? qx.z[0] : lo, hi};
		ox_ir_add_attr(g, &g->nodes[nid], "ox_dtype", OX_AT_INT)->i = qx.dt;
		ints_attr(g, nid, "ox_zp", zp, 2);
		ints_attr(g, nid, "ox_clip", clip, 2);
	} else {
		ox_id in[2] = {qx.x, n->nin > 1 ? n->in[1] : -1};
		nid = new_node(g, n->op, ni, in, n->nin > 1 ? 2 : 1, yq, 1);
		g->nodes[nid].optype = g->nodes[ni].optype;
		g->nodes[nid].domain = g->nodes[ni].domain;
	}
	ox_id din[3] = {yq, g->nodes[dqn].in[1], g->nodes[dqn].nin > 2 ? g->nodes[dqn].in[2] : -1};
	int d = new_node(g, OX_OP_DequantizeLinear, dqn, din, 3, y, 1);
	g->nodes[d].optype = "DequantizeLinear";
	g->nodes[ni].dead = 1;
	return 1;
}

/* Q(DQ(x)), both per tensor: x, or QRescale */
static int requant(ox_graph *g, int ni)
{
	ox_node *n = &g->nodes[ni];
	qparams qx, qy;
	if (dq_tensor(g, n->in[0], &qx) || params_of(g, n, &qy) || qy.axis >= 0)
		return 0;
	ox_id y = n->out[0];
	if (qx.dt == qy.dt && qx.s[0] == qy.s[0] && qx.z[0] == qy.z[0] && !g->vals[y].is_output) {
		ox_ir_replace_uses(g, y, qx.x);
		n->dead = 1;
		return 1;
	}
	int64_t m, s;
	if (fixed_point(qx.s[0] / qy.s[0], &m, &s))
		return 0;
	int nid = new_node(g, OX_OP_QRescale, ni, &qx.x, 1, y, 0);
	ints_attr(g, nid, "ox_m", &m, 1);
	ints_attr(g, nid, "ox_s", &s, 1);
	int64_t zp[2] = {qx.z[0], qy.z[0]};
	int cov[1] = {ni};
	finish(g, nid, &qy, -1, zp, 2, cov, 1);
	return 1;
}

int ox_opt_qdq(ox_graph *g)
{
	if (!g->opt)
		return 0;
	int any = 0;
	for (int changed = 1; changed;) {
		changed = 0;
		fill_sole(g);
		int nn = g->nnodes;
		for (int i = 0; i < nn; i++) {
			if (g->nodes[i].dead || g->nodes[i].nout < 1 || g->nodes[i].out[0] < 0 ||
			    ox_node_rt(g, &g->nodes[i]))
				continue;
			switch (g->nodes[i].op) {
			case OX_OP_Conv:
			case OX_OP_MatMul:
			case OX_OP_Gemm:
				changed |= rewrite_linear(g, i);
				break;
			case OX_OP_Add:
				changed |= rewrite_add(g, i);
				break;
			case OX_OP_QLinearConv:
			case OX_OP_QLinearMatMul:
				changed |= rewrite_qlinear(g, i);
				break;
			case OX_OP_Sigmoid: case OX_OP_Tanh: case OX_OP_Exp: case OX_OP_Softplus:
			case OX_OP_HardSigmoid: case OX_OP_HardSwish: case OX_OP_LeakyRelu: case OX_OP_Elu:
				changed |= rewrite_lut(g, i);
				break;
			case OX_OP_AveragePool:
			case OX_OP_GlobalAveragePool:
				changed |= rewrite_pool(g, i);
				break;
			case OX_OP_Reshape:
			case OX_OP_Flatten:
			case OX_OP_MaxPool:
			case OX_OP_Relu:
				changed |= push_down(g, i);
				break;
			case OX_OP_QuantizeLinear:
				changed |= requant(g, i);
				break;
			}
		}
		if (changed) {
			any = 1;
			if (ox_ir_toposort(g))
				ox_die("qdq: the rewrite made a cycle");
			ox_opt_dce(g);
		}
	}
	free(sole);
	sole = NULL;
	if (any)
		ox_ir_fill_uses(g);
	return 0;
}
