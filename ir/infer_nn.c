/* infer_nn.c: shape inference for the dense compute ops.
 *
 * Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool,
 * GlobalMaxPool, BatchNormalization, Gemm, MatMul, Resize, DeformConv. The window
 * decoder (kernel, strides, dilations, pads, auto_pad) and the Resize
 * decoder (output sizes and scales from scales/sizes/axes/policy, every
 * opset) are shared with codegen/c/emit_nn.c (ir/family.h), so the
 * emitted kernel and the inferred shape can never disagree about a window
 * or a scale. Every dim but a kernel size may be a run-time dim
 * (docs/dynamic.md): output sizes are dims (ceil_mode's too), consistency
 * between two dims is checked here only when both are constants, and by
 * the node when it runs otherwise. A Resize with a run-time dim, or scales,
 * sizes or a tf_crop_and_resize roi read from data, computes its sizes
 * and tap tables when it runs (infer_resize_rt: dims where the scale is
 * constant, else data symbols; a scratch output for the tables).
 */
#include "ir.h"
#include "family.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXSP (OX_MAX_RANK - 2)

/* the float types the kernels compute in (f16/bf16 through float); the
 * float8 kinds are stored as bytes with no arithmetic type */
static int nn_float(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16;
}

static int autopad_code(ox_graph *g, const ox_node *n, int *code)
{
	const char *a = ox_attr_str(n, "auto_pad", "NOTSET");
	if (!strcmp(a, "NOTSET") || !*a)
		*code = 0;
	else if (!strcmp(a, "SAME_UPPER"))
		*code = 1;
	else if (!strcmp(a, "SAME_LOWER"))
		*code = 2;
	else if (!strcmp(a, "VALID"))
		*code = 3;
	else
		return ox_error(g, n, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", a);
	return 0;
}

/* An INTS attribute of nsp positive values, or dflt everywhere when absent. */
static int spatial_ints(ox_graph *g, const ox_node *n, const char *name, int nsp, int64_t dflt,
			int64_t min, int64_t *v)
{
	const int64_t *a;
	int m = ox_attr_ints(n, name, &a);
	if (m < 0) {
		for (int i = 0; i < nsp; i++)
			v[i] = dflt;
		return 0;
	}
	if (m != nsp)
		return ox_error(g, n, "%s has %d values, expected %d (one per spatial axis)", name, m, nsp);
	for (int i = 0; i < nsp; i++) {
		if (a[i] < min)
			return ox_error(g, n, "%s[%d] = %lld must be at least %lld", name, i, (long long)a[i],
					(long long)min);
		v[i] = a[i];
	}
	return 0;
}

int ox_ir_nn_window(ox_graph *g, const ox_node *n, int nsp, const ox_shape *w, int64_t *k,
		    int64_t *s, int64_t *d, int64_t *pads, int *autopad)
{
	if (nsp < 1 || nsp > MAXSP)
		return ox_error(g, n, "%d spatial axes are not supported", nsp);
	if (autopad_code(g, n, autopad))
		return -1;
	const int64_t *a;
	int m = ox_attr_ints(n, "kernel_shape", &a);
	if (m >= 0) {
		if (spatial_ints(g, n, "kernel_shape", nsp, 1, 1, k))
			return -1;
		if (w)
			for (int i = 0; i < nsp; i++)
				if (w->d[i + 2] >= 0 && w->d[i + 2] != k[i])
					return ox_error(g, n, "kernel_shape[%d] = %lld but the weights have %lld", i,
							(long long)k[i], (long long)w->d[i + 2]);
	} else if (w) {
		for (int i = 0; i < nsp; i++) {
			if (w->d[i + 2] < 0)
				return ox_error(g, n, "kernel size %d is not a constant (a run-time dim): give "
						"kernel_shape, or the weights' shape", i);
			if (w->d[i + 2] == 0)
				return ox_error(g, n, "kernel size %d is 0: the weights have an empty window", i);
			k[i] = w->d[i + 2];
		}
	} else {
		return ox_error(g, n, "kernel_shape is required");
	}
	if (spatial_ints(g, n, "strides", nsp, 1, 1, s) || spatial_ints(g, n, "dilations", nsp, 1, 1, d))
		return -1;
	m = ox_attr_ints(n, "pads", &a);
	if (m >= 0 && m != 2 * nsp)
		return ox_error(g, n, "pads has %d values, expected %d", m, 2 * nsp);
	for (int i = 0; i < 2 * nsp; i++) {
		pads[i] = m >= 0 && *autopad == 0 ? a[i] : 0;
		if (pads[i] < 0)
			return ox_error(g, n, "negative pads are not supported");
	}
	return 0;
}

/* Actual pads for SAME_* (constant shapes); NOTSET and VALID keep pads. */
void ox_ir_nn_same_pads(int autopad, int nsp, const int64_t *in, const int64_t *out, const int64_t *k,
			const int64_t *s, const int64_t *d, int64_t *pads)
{
	if (autopad != 1 && autopad != 2)
		return;
	for (int i = 0; i < nsp; i++) {
		int64_t total = (out[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i];
		if (total < 0)
			total = 0;
		pads[i] = autopad == 1 ? total / 2 : total - total / 2;
		pads[i + nsp] = total - pads[i];
	}
}

/* One output spatial dim of a sliding window (Conv and the pools).
 * ceil: pool ceil_mode, where the last window must start inside the
 * input or its begin padding (the ONNX reference drops it otherwise). */
static int window_out(ox_graph *g, const ox_node *n, int ax, ox_dim in, int64_t k, int64_t s, int64_t d,
		      int64_t pb, int64_t pe, int autopad, int ceil, ox_dim *out)
{
	int64_t span, sum;
	/* attributes are any int64: a window or pads past 2^63 is an error */
	if (__builtin_mul_overflow(k - 1, d, &span) || __builtin_add_overflow(span, 1, &span) ||
	    __builtin_add_overflow(pb, pe, &sum) || (in >= 0 && __builtin_add_overflow(sum, in, &sum)))
		return ox_error(g, n, "spatial axis %d: window or pads too large", ax);
	if (autopad == 1 || autopad == 2) {
		*out = ox_dim_ceildiv(g, in, s);
		return 0;
	}
	if (autopad == 3)
		pb = pe = 0;
	if (in >= 0) {
		int64_t room = in + pb + pe - span;
		if (room < 0)
			return ox_error(g, n, "spatial axis %d: window of %lld does not fit input %lld + pads %lld",
					ax, (long long)span, (long long)in, (long long)(pb + pe));
		int64_t o = room / s + 1;
		if (ceil && autopad == 0) {
			o = (room + s - 1) / s + 1;
			if ((o - 1) * s >= in + pb)
				o--;
		}
		*out = o;
		return 0;
	}
	ox_dim room = ox_dim_sub(g, ox_dim_add(g, in, pb + pe), span);
	if (!ceil || autopad != 0) {
		*out = ox_dim_add(g, ox_dim_div(g, room, s), 1);
		return 0;
	}
	/* ceil_mode on a run-time size: o = q + 1 - [q * s >= in + pb] with
	 * q = ceil(room / s), the test written min(1, (q * s + 1) / (in + pb + 1))
	 * so that every term stays non-negative; it never holds when
	 * q * s < room + s <= in + pb, i.e. pe + s <= span */
	ox_dim q = ox_dim_ceildiv(g, room, s), o = ox_dim_add(g, q, 1);
	if (pe + s > span) {
		ox_dim t = ox_dim_div(g, ox_dim_add(g, ox_dim_mul(g, q, s), 1), ox_dim_add(g, in, pb + 1));
		o = ox_dim_sub(g, o, ox_dim_op(g, OX_DE_MIN, t, 1));
	}
	*out = o;
	return 0;
}

/* Conv output shape from x and w (window attributes, groups): shared with
 * the integer convolutions of ir/infer_quant.c. */
int ox_ir_conv_shape(ox_graph *g, const ox_node *n, const ox_value *x, const ox_value *w, ox_shape *o)
{
	int nsp = x->shape.rank - 2;
	if (nsp < 1)
		return ox_error(g, n, "input has rank %d, expected at least 3", x->shape.rank);
	if (w->shape.rank != x->shape.rank)
		return ox_error(g, n, "weights have rank %d, input has rank %d", w->shape.rank, x->shape.rank);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap))
		return -1;
	int64_t group = ox_attr_int(n, "group", 1);
	ox_dim C = x->shape.d[1], M = w->shape.d[0], Cg = w->shape.d[1];
	if (group < 1)
		return ox_error(g, n, "group = %lld must be positive", (long long)group);
	if (M >= 0 && M % group)
		return ox_error(g, n, "%lld output channels do not divide into %lld groups", (long long)M,
				(long long)group);
	if (C >= 0 && Cg >= 0 && C != Cg * group)
		return ox_error(g, n, "input has %lld channels, weights expect %lld x %lld groups",
				(long long)C, (long long)Cg, (long long)group);
	*o = (ox_shape){x->shape.rank, {x->shape.d[0], M}};
	for (int i = 0; i < nsp; i++)
		if (window_out(g, n, i, x->shape.d[i + 2], k[i], s[i], d[i], pads[i], pads[i + nsp], ap, 0,
			       &o->d[i + 2]))
			return -1;
	return 0;
}

int infer_conv(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *b = ox_in(g, n, 2);
	if (!nn_float(x->dtype) || w->dtype != x->dtype)
		return ox_error(g, n, "dtypes %s, %s are not supported (float types only)",
				ox_dtype_name(x->dtype), ox_dtype_name(w->dtype));
	ox_shape o;
	if (ox_ir_conv_shape(g, n, x, w, &o))
		return -1;
	ox_dim M = o.d[1];
	if (b && (b->shape.rank != 1 || (b->shape.d[0] >= 0 && M >= 0 && b->shape.d[0] != M)))
		return ox_error(g, n, "bias must be a vector of the %lld output channels", (long long)M);
	if (b && b->dtype != x->dtype)
		return ox_error(g, n, "the bias is %s, the input %s (Conv takes one type T)", ox_dtype_name(b->dtype),
				ox_dtype_name(x->dtype));
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ConvTranspose output size and pads (constant input dims): output_shape
 * when given (pads derived from it), else the stride formula with pads or
 * auto_pad. The total padding's odd unit goes to the end for SAME_UPPER
 * and to the begin otherwise, as the ONNX spec writes it. */
int ox_ir_nn_convt(ox_graph *g, const ox_node *n, int nsp, const int64_t *in, const int64_t *k,
		   const int64_t *s, const int64_t *d, int64_t *pads, int autopad, int64_t *out)
{
	int64_t op[MAXSP];
	if (spatial_ints(g, n, "output_padding", nsp, 0, 0, op))
		return -1;
	const int64_t *os;
	int m = ox_attr_ints(n, "output_shape", &os);
	if (m > nsp)   /* some exporters give the full N, C, ... shape */
		os += m - nsp, m = nsp;
	if (m >= 0 && m != nsp)
		return ox_error(g, n, "output_shape has %d values, expected %d", m, nsp);
	for (int i = 0; i < nsp; i++) {
		int64_t full = s[i] * (in[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1;
		if (m >= 0 || autopad == 1 || autopad == 2) {
			out[i] = m >= 0 ? os[i] : in[i] * s[i];
			/* a larger output_shape than the input gives: the rest is bias
			 * only (negative end pad), as the ONNX reference computes it */
			int64_t total = full - out[i];
			pads[i] = total < 0 ? 0 : autopad == 1 ? total / 2 : total - total / 2;
			pads[i + nsp] = total - pads[i];
		} else {
			if (autopad == 3)
				pads[i] = pads[i + nsp] = 0;
			out[i] = full - pads[i] - pads[i + nsp];
			if (out[i] < 1)
				return ox_error(g, n, "output size %lld on spatial axis %d", (long long)out[i], i);
		}
		if (op[i] >= s[i] && op[i] >= d[i])
			return ox_error(g, n, "output_padding[%d] = %lld must be smaller than the stride or dilation",
					i, (long long)op[i]);
	}
	return 0;
}

int infer_convtranspose(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *b = ox_in(g, n, 2);
	int nsp = x->shape.rank - 2;
	if (nsp < 1)
		return ox_error(g, n, "input has rank %d, expected at least 3", x->shape.rank);
	if (w->shape.rank != x->shape.rank)
		return ox_error(g, n, "weights have rank %d, input has rank %d", w->shape.rank, x->shape.rank);
	if (!nn_float(x->dtype) || w->dtype != x->dtype)
		return ox_error(g, n, "dtypes %s, %s are not supported (float types only)",
				ox_dtype_name(x->dtype), ox_dtype_name(w->dtype));
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap))
		return -1;
	int64_t group = ox_attr_int(n, "group", 1);
	if (group < 1)
		return ox_error(g, n, "group = %lld must be positive", (long long)group);
	ox_dim C = x->shape.d[1], M = ox_dim_mul(g, w->shape.d[1], group);
	if (C >= 0 && w->shape.d[0] >= 0 && (C != w->shape.d[0] || C % group))
		return ox_error(g, n, "input has %lld channels, weights have %lld (group %lld)", (long long)C,
				(long long)w->shape.d[0], (long long)group);
	if (b && b->shape.rank != 1)
		return ox_error(g, n, "bias must be a vector of the output channels");
	ox_shape o = {x->shape.rank, {x->shape.d[0], M}};
	int sym = 0;
	for (int i = 0; i < nsp; i++) {
		in[i] = x->shape.d[i + 2];
		sym |= in[i] < 0;
	}
	if (!sym) {
		if (ox_ir_nn_convt(g, n, nsp, in, k, s, d, pads, ap, out))
			return -1;
		for (int i = 0; i < nsp; i++)
			o.d[i + 2] = out[i];
	} else {
		/* run-time input sizes: output_shape fixes the output (the pads
		 * then depend on the input, codegen computes them when the program
		 * runs), SAME makes it in * s (constant pads), else the stride
		 * formula */
		const int64_t *os;
		int m = ox_attr_ints(n, "output_shape", &os);
		if (m > nsp)
			os += m - nsp, m = nsp;
		if (m >= 0 && m != nsp)
			return ox_error(g, n, "output_shape has %d values, expected %d", m, nsp);
		int64_t op[MAXSP];
		if (spatial_ints(g, n, "output_padding", nsp, 0, 0, op))
			return -1;
		for (int i = 0; i < nsp; i++) {
			if (op[i] >= s[i] && op[i] >= d[i])
				return ox_error(g, n, "output_padding[%d] = %lld must be smaller than the stride or dilation",
						i, (long long)op[i]);
			if (m >= 0 && os[i] < 0)
				return ox_error(g, n, "output_shape[%d] = %lld is negative", i, (long long)os[i]);
			if (m >= 0) {
				o.d[i + 2] = os[i];
				continue;
			}
			if (ap == 1 || ap == 2) {
				o.d[i + 2] = ox_dim_mul(g, in[i], s[i]);
				continue;
			}
			int64_t extra = op[i] + (k[i] - 1) * d[i] + 1 - (ap == 3 ? 0 : pads[i] + pads[i + nsp]);
			ox_dim t = ox_dim_mul(g, ox_dim_sub(g, in[i], 1), s[i]);
			o.d[i + 2] = extra >= 0 ? ox_dim_add(g, t, extra) : ox_dim_sub(g, t, -extra);
		}
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

int infer_pool(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int nsp = x->shape.rank - 2;
	if (nsp < 1)
		return ox_error(g, n, "input has rank %d, expected at least 3", x->shape.rank);
	int ismax = n->op == OX_OP_MaxPool;
	if (!nn_float(x->dtype) && !(ismax && (x->dtype == OX_U8 || x->dtype == OX_I8)))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, NULL, k, s, d, pads, &ap))
		return -1;
	if (ismax && ox_attr_int(n, "storage_order", 0) != 0 && ox_attr_int(n, "storage_order", 0) != 1)
		return ox_error(g, n, "storage_order must be 0 or 1");
	int ceil = (int)ox_attr_int(n, "ceil_mode", 0);
	ox_shape o = x->shape;
	for (int i = 0; i < nsp; i++)
		if (window_out(g, n, i, x->shape.d[i + 2], k[i], s[i], d[i], pads[i], pads[i + nsp], ap, ceil,
			       &o.d[i + 2]))
			return -1;
	ox_set_out(g, n, 0, x->dtype, &o);
	if (ismax)
		ox_set_out(g, n, 1, OX_I64, &o);
	return 0;
}

int infer_globalpool(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (x->shape.rank < 2)
		return ox_error(g, n, "input has rank %d, expected at least 2", x->shape.rank);
	if (!nn_float(x->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	ox_shape o = x->shape;
	for (int i = 2; i < o.rank; i++)
		o.d[i] = 1;
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* Inference mode, or training mode (opset 14+, training_mode = 1) where
 * the batch statistics normalize and the running stats are outputs 1, 2.
 * Opsets before 14 signal training by asking for the extra outputs; those
 * (saved mean/var) are not supported. spatial = 0 (opsets 6-8) means the
 * parameters have one value per (C, D1, ...) element instead of per C. */
int infer_batchnorm(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (x->shape.rank < 2)
		return ox_error(g, n, "input has rank %d, expected at least 2", x->shape.rank);
	if (!nn_float(x->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	int training = n->opset >= 14 && ox_attr_int(n, "training_mode", 0);
	int extra = ox_out(g, n, 1) || ox_out(g, n, 2) || (n->nout > 3);
	for (int k = 3; k < n->nout; k++)
		extra |= n->out[k] >= 0;
	if (extra && !training)
		return ox_error(g, n, "training outputs (mean, var, saved stats) are only supported with "
				"training_mode = 1 (opset 14+)");
	if (training && n->nout > 3)
		return ox_error(g, n, "%d outputs, expected at most 3", n->nout);
	int64_t per = 1;
	int spatial = n->opset < 9 ? (int)ox_attr_int(n, "spatial", 1) : 1;
	for (int k = 1; k < 5; k++) {
		ox_value *p = ox_in(g, n, k);
		int64_t m = ox_shape_numel(&p->shape);
		if (!nn_float(p->dtype))
			return ox_error(g, n, "parameter %d has dtype %s", k, ox_dtype_name(p->dtype));
		if (x->shape.d[1] >= 0 && m >= 0 && m != x->shape.d[1]) {
			ox_shape t = x->shape;
			t.d[0] = 1;
			if (spatial || m != ox_shape_numel(&t))
				return ox_error(g, n, "parameter %d has %lld values, expected one per channel", k,
						(long long)m);
			per = 0;
		}
	}
	if (!per && training)
		return ox_error(g, n, "per-element parameters are not supported in training mode");
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	ox_shape c = {1, {x->shape.d[1]}};
	for (int k = 1; k < 3; k++)
		ox_set_out(g, n, k, ox_in(g, n, k + 2)->dtype, &c);
	return 0;
}

static int numeric(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16 || dt == OX_I32 ||
	       dt == OX_I64 || dt == OX_U32 || dt == OX_U64;
}

/* a GEMM's out[1]: the norm of its rows that opt/gemmnorm.c computes in it
 * (ox_norm), of out[0]'s type; an ONNX Gemm or MatMul has one output */
static int norm_out(ox_graph *g, ox_node *n)
{
	if (n->nout < 2 || n->out[1] < 0)
		return 0;
	if (!ox_attr_get(n, "ox_norm"))
		return ox_error(g, n, "%s has one output, not %d", n->optype, n->nout);
	const ox_value *y = ox_out(g, n, 0);
	ox_set_out(g, n, 1, y->dtype, &y->shape);
	return 0;
}

int infer_gemm(ox_graph *g, ox_node *n)
{
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1), *c = ox_in(g, n, 2);
	if (a->shape.rank != 2 || b->shape.rank != 2)
		return ox_error(g, n, "A and B must be matrices (ranks %d, %d)", a->shape.rank, b->shape.rank);
	if (!numeric(a->dtype) || b->dtype != a->dtype || (c && c->dtype != a->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(a->dtype));
	int ta = ox_attr_int(n, "transA", 0) != 0, tb = ox_attr_int(n, "transB", 0) != 0;
	ox_dim M = a->shape.d[ta], K = a->shape.d[!ta], K2 = b->shape.d[tb], N = b->shape.d[!tb];
	if (K >= 0 && K2 >= 0 && K != K2)
		return ox_error(g, n, "inner dims differ: %lld and %lld", (long long)K, (long long)K2);
	ox_shape o = {2, {M, N}};
	if (c) {
		/* C broadcasts one way to (M, N) */
		if (c->shape.rank > 2)
			return ox_error(g, n, "C has rank %d, expected at most 2", c->shape.rank);
		for (int i = 0; i < c->shape.rank; i++) {
			ox_dim cd = c->shape.d[c->shape.rank - 1 - i], od = o.d[1 - i];
			if (cd != 1 && cd >= 0 && od >= 0 && cd != od)
				return ox_error(g, n, "C of shape dim %lld does not broadcast to %lld", (long long)cd,
						(long long)od);
		}
	}
	ox_set_out(g, n, 0, a->dtype, &o);
	return norm_out(g, n);
}

/* numpy matmul shape of a x b (1-D operands promoted, the added dim
 * dropped after): shared with the integer matmuls of ir/infer_quant.c */
int ox_ir_matmul_shape(ox_graph *g, const ox_node *n, const ox_value *a, const ox_value *b, ox_shape *o)
{
	int ra = a->shape.rank, rb = b->shape.rank;
	if (ra < 1 || rb < 1)
		return ox_error(g, n, "matrix product of a scalar");
	ox_shape sa = a->shape, sb = b->shape;
	if (ra == 1)
		sa = (ox_shape){2, {1, a->shape.d[0]}};
	if (rb == 1)
		sb = (ox_shape){2, {b->shape.d[0], 1}};
	ox_dim K = sa.d[sa.rank - 1], K2 = sb.d[sb.rank - 2];
	if (K >= 0 && K2 >= 0 && K != K2)
		return ox_error(g, n, "inner dims differ: %lld and %lld", (long long)K, (long long)K2);
	ox_shape ba = {sa.rank - 2, {0}}, bb = {sb.rank - 2, {0}};
	memcpy(ba.d, sa.d, (size_t)ba.rank * sizeof(ox_dim));
	memcpy(bb.d, sb.d, (size_t)bb.rank * sizeof(ox_dim));
	if (ox_broadcast(g, &ba, &bb, o))
		return ox_error(g, n, "batch dims do not broadcast");
	if (ra > 1)
		o->d[o->rank++] = sa.d[sa.rank - 2];
	if (rb > 1)
		o->d[o->rank++] = sb.d[sb.rank - 1];
	return 0;
}

int infer_matmul(ox_graph *g, ox_node *n)
{
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1);
	if (!numeric(a->dtype) || b->dtype != a->dtype)
		return ox_error(g, n, "dtypes %s, %s are not supported", ox_dtype_name(a->dtype),
				ox_dtype_name(b->dtype));
	ox_shape o;
	if (ox_ir_matmul_shape(g, n, a, b, &o))
		return -1;
	if (ox_attr_get(n, "ox_glu")) /* (gate and up columns in pairs: opt/siblings.c) */
		o.d[o.rank - 1] /= 2;
	ox_set_out(g, n, 0, a->dtype, &o);
	return norm_out(g, n);
}

/* ---- Resize ---- */

/* Float values of constant input k into v (cap values); count, -2 when
 * the input is omitted or empty, -1 after an error. */
static int const_floats(ox_graph *g, const ox_node *n, int k, double *v, int cap, const char *what)
{
	ox_value *iv = ox_in(g, n, k);
	if (!iv)
		return -2;
	const ox_tensor *t = ox_in_const(g, n, k);
	if (!t) {
		if (iv->has_shape && ox_shape_numel(&iv->shape) == 0)
			return -2;
		return ox_need_const(g, n, k, "%s input '%s' is not a constant (it must be known at compile time)",
				     what, iv->name);
	}
	int64_t m = ox_tensor_numel(t);
	if (m == 0)
		return -2;
	if (m > cap)
		return ox_error(g, n, "%s has %lld values, expected at most %d", what, (long long)m, cap);
	for (int64_t i = 0; i < m; i++)
		v[i] = ox_tensor_get_f64(t, i);
	return (int)m;
}

/* the axes attribute (opset 18+), else every axis */
static int resize_axes(ox_graph *g, const ox_node *n, int r, int *axes, int *naxes)
{
	*naxes = r;
	for (int i = 0; i < r; i++)
		axes[i] = i;
	const int64_t *av;
	int m = n->opset >= 18 ? ox_attr_ints(n, "axes", &av) : -1;
	if (m >= 0) {
		if (m > r)
			return ox_error(g, n, "axes has %d values for rank %d", m, r);
		for (int i = 0; i < m; i++) {
			axes[i] = ox_norm_axis(av[i], r);
			if (axes[i] < 0)
				return ox_error(g, n, "axis %lld out of range", (long long)av[i]);
			for (int j = 0; j < i; j++)
				if (axes[j] == axes[i])
					return ox_error(g, n, "axis %lld repeated", (long long)av[i]);
		}
		*naxes = m;
	}
	return 0;
}

static int resize_policy(ox_graph *g, const ox_node *n, int *policy)
{
	const char *pol = n->opset >= 18 ? ox_attr_str(n, "keep_aspect_ratio_policy", "stretch") : "stretch";
	*policy = !strcmp(pol, "stretch") ? 0 : !strcmp(pol, "not_larger") ? 1 : !strcmp(pol, "not_smaller") ? 2 : -1;
	if (*policy < 0)
		return ox_error(g, n, "keep_aspect_ratio_policy '%s' is not supported", pol);
	return 0;
}

/* Output sizes, per-axis scales (as the coordinate transform uses them)
 * and the full-rank roi ([starts..., ends...], default [0.., 1..]).
 * Opset 10: inputs (X, scales). 11+: (X, roi, scales, sizes); 18+ adds
 * axes and keep_aspect_ratio_policy. Scales are read as float, as the
 * tensor holds them; the output size is floor(in * scale). */
int ox_ir_nn_resize(ox_graph *g, const ox_node *n, const ox_shape *x, ox_dim *osize, double *scale,
		    double *roi)
{
	int r = x->rank;
	int axes[OX_MAX_RANK], naxes;
	if (resize_axes(g, n, r, axes, &naxes))
		return -1;
	for (int i = 0; i < r; i++) {
		osize[i] = x->d[i];
		scale[i] = 1.0;
		roi[i] = 0.0;
		roi[i + r] = 1.0;
	}
	double sc[OX_MAX_RANK], sz[OX_MAX_RANK], rv[2 * OX_MAX_RANK];
	int nsc, nsz = -2, nroi = -2;
	if (n->opset < 11) {
		nsc = const_floats(g, n, 1, sc, OX_MAX_RANK, "scales");
	} else {
		nsc = const_floats(g, n, 2, sc, OX_MAX_RANK, "scales");
		if (nsc == -1)
			return -1;
		nsz = const_floats(g, n, 3, sz, OX_MAX_RANK, "sizes");
		const char *ctm = ox_attr_str(n, "coordinate_transformation_mode", "half_pixel");
		if (!strcmp(ctm, "tf_crop_and_resize"))
			nroi = const_floats(g, n, 1, rv, 2 * OX_MAX_RANK, "roi");
	}
	if (nsc == -1 || nsz == -1 || nroi == -1)
		return -1;
	if (nsc >= 0 && nsz >= 0)
		return ox_error(g, n, "only one of scales and sizes may be given");
	if (nsc < 0 && nsz < 0)
		return ox_error(g, n, "one of scales and sizes is required");
	int cnt = nsc >= 0 ? nsc : nsz;
	if (cnt != naxes)
		return ox_error(g, n, "%s has %d values, expected %d", nsc >= 0 ? "scales" : "sizes", cnt, naxes);
	if (nroi >= 0) {
		if (nroi != 2 * naxes)
			return ox_error(g, n, "roi has %d values, expected %d", nroi, 2 * naxes);
		for (int i = 0; i < naxes; i++) {
			roi[axes[i]] = rv[i];
			roi[axes[i] + r] = rv[i + naxes];
		}
	}
	if (nsc >= 0) {
		for (int i = 0; i < naxes; i++) {
			int a = axes[i];
			double s = (double)(float)sc[i];
			if (!(s > 0))
				return ox_error(g, n, "scale %g must be positive", s);
			if (!(s * (double)(x->d[a] < 1 ? 1 : x->d[a]) < 0x1p62))
				return ox_error(g, n, "scale %g makes axis %d too long", s, a);
			scale[a] = s;
			if (x->d[a] >= 0)
				osize[a] = (int64_t)floor((double)x->d[a] * s);
			else if (s == floor(s))
				osize[a] = ox_dim_mul(g, x->d[a], (int64_t)s);
			else
				return ox_error(g, n, "scale %g on symbolic axis %d needs a constant size", s, a);
			if (osize[a] == 0)
				return ox_error(g, n, "scale %g makes axis %d empty", s, a);
		}
		return 0;
	}
	int policy;
	if (resize_policy(g, n, &policy))
		return -1;
	for (int i = 0; i < naxes; i++) {
		if (x->d[axes[i]] < 0)
			return ox_error(g, n, "sizes on symbolic axis %d need a constant input size", axes[i]);
		if (sz[i] < 1)
			return ox_error(g, n, "sizes[%d] = %g must be positive", i, sz[i]);
	}
	if (policy == 0) {
		for (int i = 0; i < naxes; i++) {
			osize[axes[i]] = (int64_t)sz[i];
			scale[axes[i]] = sz[i] / (double)x->d[axes[i]];
		}
		return 0;
	}
	double s = policy == 1 ? INFINITY : 0;
	for (int i = 0; i < naxes; i++) {
		double t = sz[i] / (double)x->d[axes[i]];
		s = policy == 1 ? fmin(s, t) : fmax(s, t);
	}
	for (int i = 0; i < naxes; i++) {
		scale[axes[i]] = s;
		osize[axes[i]] = (int64_t)(s * (double)x->d[axes[i]] + 0.5);
	}
	return 0;
}

/* A Resize the blocked kernel computes (opt/layout.c, codegen/c/emit_nn.c):
 * f32 of rank 4 whose N and C stay (scale 1, so their taps are the
 * identity in every mode), H and W resized in any mode but
 * tf_crop_and_resize (whose outputs outside the roi take a value) */
int ox_ir_nn_resize_blockable(ox_graph *g, const ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || x->dtype != OX_F32 || !x->has_shape || x->shape.rank != 4 || !y->has_shape ||
	    y->shape.rank != 4)
		return 0;
	if (n->opset >= 11 && !strcmp(ox_attr_str(n, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize"))
		return 0;
	ox_dim o[OX_MAX_RANK];
	double scale[OX_MAX_RANK], roi[2 * OX_MAX_RANK];
	if (ox_ir_nn_resize(g, n, &x->shape, o, scale, roi))
		return 0;
	return scale[0] == 1 && scale[1] == 1 && y->shape.d[0] == x->shape.d[0] && y->shape.d[1] == x->shape.d[1];
}

/* ---- Resize with run-time sizes (docs/dynamic.md) ---- */

/* input k holds values: present and not empty (an empty scales or sizes
 * stands for an omitted one) */
static int resize_given(ox_graph *g, const ox_node *n, int k)
{
	ox_value *v = ox_in(g, n, k);
	if (!v)
		return 0;
	const ox_tensor *t = ox_in_const(g, n, k);
	if (t)
		return ox_tensor_numel(t) > 0;
	return !(v->has_shape && ox_shape_numel(&v->shape) == 0);
}

static int resize_tfcrop(const ox_node *n)
{
	return n->opset >= 11 &&
	       !strcmp(ox_attr_str(n, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize");
}

int ox_ir_nn_resize_static(ox_graph *g, const ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	for (int a = 0; a < x->shape.rank; a++)
		if (ox_dim_eval(g, x->shape.d[a]) < 0)
			return 0;
	int ks = n->opset < 11 ? 1 : 2;
	if (resize_given(g, n, ks) && !ox_in_const(g, n, ks))
		return 0;
	if (n->opset >= 11 && resize_given(g, n, 3) && !ox_in_const(g, n, 3))
		return 0;
	return !(resize_tfcrop(n) && resize_given(g, n, 1) && !ox_in_const(g, n, 1));
}

/* a 1-D tensor of count values, its length a constant or a run-time dim
 * (which the node checks when it runs) */
static int resize_vector(ox_graph *g, const ox_node *n, int k, const char *what, int count)
{
	ox_value *v = ox_in(g, n, k);
	if (!v->has_shape || v->shape.rank != 1)
		return ox_error(g, n, "%s input '%s' must be a vector", what, v->name);
	ox_dim d = v->shape.d[0];
	if (ox_dim_is_rt(g, d))
		return 0;
	if (ox_dim_eval(g, d) != count)
		return ox_error(g, n, "%s has %lld values, expected %d", what, (long long)ox_dim_eval(g, d), count);
	return 0;
}

int ox_ir_nn_resize_rt(ox_graph *g, const ox_node *n, int r, ox_resize_rt *rz)
{
	memset(rz, 0, sizeof *rz);
	if (resize_axes(g, n, r, rz->axes, &rz->naxes) || resize_policy(g, n, &rz->policy))
		return -1;
	int ks = n->opset < 11 ? 1 : 2, hs = resize_given(g, n, ks), hz = n->opset >= 11 && resize_given(g, n, 3);
	if (hs && hz)
		return ox_error(g, n, "only one of scales and sizes may be given");
	if (!hs && !hz)
		return ox_error(g, n, "one of scales and sizes is required");
	rz->sizes = hz;
	rz->in = hz ? 3 : ks;
	const char *what = hz ? "sizes" : "scales";
	ox_value *v = ox_in(g, n, rz->in);
	if (hz ? !ox_dtype_is_int(v->dtype) : !ox_dtype_is_float(v->dtype) || !ox_dtype_size(v->dtype))
		return ox_error(g, n, "%s input '%s' has dtype %s", what, v->name, ox_dtype_name(v->dtype));
	const ox_tensor *t = ox_in_const(g, n, rz->in);
	if (t) {
		if (ox_tensor_numel(t) != rz->naxes)
			return ox_error(g, n, "%s has %lld values, expected %d", what, (long long)ox_tensor_numel(t),
					rz->naxes);
		rz->known = 1;
		for (int i = 0; i < rz->naxes; i++)
			rz->v[i] = ox_tensor_get_f64(t, i);
	} else if (resize_vector(g, n, rz->in, what, rz->naxes)) {
		return -1;
	}
	for (int i = 0; i < r; i++)
		rz->r[i] = 0, rz->r[i + r] = 1;
	rz->roi = -1;
	if (!resize_tfcrop(n) || !resize_given(g, n, 1))
		return 0;
	ox_value *rv = ox_in(g, n, 1);
	if (!ox_dtype_is_float(rv->dtype) || !ox_dtype_size(rv->dtype))
		return ox_error(g, n, "roi input '%s' has dtype %s", rv->name, ox_dtype_name(rv->dtype));
	t = ox_in_const(g, n, 1);
	if (!t) {
		rz->roi = 1;
		return resize_vector(g, n, 1, "roi", 2 * rz->naxes);
	}
	if (ox_tensor_numel(t) != 2 * rz->naxes)
		return ox_error(g, n, "roi has %lld values, expected %d", (long long)ox_tensor_numel(t), 2 * rz->naxes);
	for (int i = 0; i < rz->naxes; i++) {
		rz->r[rz->axes[i]] = ox_tensor_get_f64(t, i);
		rz->r[rz->axes[i] + r] = ox_tensor_get_f64(t, i + rz->naxes);
	}
	return 0;
}

/* s = p / q exactly, q a power of 2 (then floor(in * s) is (in * p) / q) */
static int dyadic(double s, int64_t *p, int64_t *q)
{
	for (int j = 0; j <= 30; j++) {
		double t = ldexp(s, j);
		if (t == floor(t) && t < (double)(1 << 30)) {
			*p = (int64_t)t, *q = (int64_t)1 << j;
			return 1;
		}
	}
	return 0;
}

/* Output dims of a Resize computed when the program runs: from constant
 * scales, floor(in * s) as the dim (in * p) / 2^j, exact, since a float32
 * scale is p / 2^j (2, 0.5, 1.5; 0.6 is 5033165 / 2^23), else (j or p
 * past 2^30) a data symbol of at most floor(top * s); from constant (or
 * symbolic) sizes, the sizes; else data symbols the node computes, with
 * no bound the op gives but not_larger's (the bounds pass asks for
 * --max). The scratch holds the tap tables templates/resize_rt.c fills:
 * 12 bytes per tap, at most 1, 2 or 4 taps per output (nearest, linear,
 * cubic), with antialias the footprint of a downscale, at most 4 in + 2
 * (8 in + 2 cubic) since an axis that is not empty has scale >= 1 / (2 in);
 * and 32 bytes per axis, the header the CUDA target's gather kernel reads
 * (codegen/c/emit_nn.c, emit_resize_rt). */
static int infer_resize_rt(ox_graph *g, ox_node *n, ox_value *x, ox_shape *o)
{
	ox_resize_rt rz;
	int r = x->shape.rank;
	if (ox_ir_nn_resize_rt(g, n, r, &rz))
		return -1;
	*o = x->shape;
	double scale[OX_MAX_RANK];
	int scale_known[OX_MAX_RANK];
	for (int a = 0; a < r; a++)
		scale[a] = 1, scale_known[a] = 1;
	ox_sv sv[OX_MAX_RANK];
	int nsv = rz.sizes && !rz.known ? ox_in_svals(g, n, rz.in, sv, OX_MAX_RANK) : -1;
	if (rz.known)
		for (int i = 0; i < rz.naxes; i++)
			sv[i] = (ox_sv){OX_SV_CONST, (int64_t)rz.v[i], 0};
	else if (nsv != rz.naxes)
		for (int i = 0; i < rz.naxes; i++)
			sv[i].kind = OX_SV_UNKNOWN;
	for (int i = 0; i < rz.naxes && rz.sizes; i++)
		if (sv[i].kind == OX_SV_CONST && sv[i].c < 1)
			return ox_error(g, n, "sizes[%d] = %lld must be positive", i, (long long)sv[i].c);
	/* keep_aspect_ratio_policy: one scale for every axis, known when the
	 * sizes and the input dims are */
	double pol = rz.policy == 1 ? INFINITY : 0;
	int polknown = rz.sizes && rz.policy;
	for (int i = 0; i < rz.naxes && polknown; i++) {
		int64_t in = ox_dim_eval(g, x->shape.d[rz.axes[i]]);
		polknown = sv[i].kind == OX_SV_CONST && in > 0;
		if (polknown)
			pol = rz.policy == 1 ? fmin(pol, (double)sv[i].c / (double)in) : fmax(pol, (double)sv[i].c / (double)in);
	}
	for (int i = 0; i < rz.naxes; i++) {
		int a = rz.axes[i];
		ox_dim in = x->shape.d[a], *od = &o->d[a];
		int64_t iv = ox_dim_eval(g, in), ihi = ox_dim_hi(g, in);
		scale_known[a] = 0;
		if (!rz.sizes && rz.known) {
			double s = (double)(float)rz.v[i];
			int64_t p, q;
			if (!(s > 0))
				return ox_error(g, n, "scale %g must be positive", s);
			scale[a] = s, scale_known[a] = 1;
			if (iv >= 0) {
				if (!(s * (double)(iv < 1 ? 1 : iv) < 0x1p62))
					return ox_error(g, n, "scale %g makes axis %d too long", s, a);
				*od = (int64_t)floor((double)iv * s);
				if (*od == 0)
					return ox_error(g, n, "scale %g makes axis %d empty", s, a);
			} else if (dyadic(s, &p, &q)) {
				*od = ox_dim_div(g, ox_dim_mul(g, in, p), q);
			} else {
				*od = ox_dim_data(g, n->out[0], a, ihi >= 0 && ihi * s < 0x1p62 ? (int64_t)floor((double)ihi * s) : -1);
			}
		} else if (!rz.sizes) {
			*od = ox_dim_data(g, n->out[0], a, -1);
		} else if (rz.policy == 0 && sv[i].kind == OX_SV_CONST) {
			*od = sv[i].c;
			if (iv > 0)
				scale[a] = (double)sv[i].c / (double)iv, scale_known[a] = 1;
		} else if (rz.policy == 0 && sv[i].kind == OX_SV_DIM) {
			*od = sv[i].d;
		} else if (polknown) {
			*od = (int64_t)(pol * (double)iv + 0.5);
			scale[a] = pol, scale_known[a] = 1;
		} else {
			int64_t hi = rz.policy == 1 && sv[i].kind == OX_SV_CONST ? sv[i].c : -1;
			*od = ox_dim_data(g, n->out[0], a, rz.policy == 0 ? -1 : hi);
		}
	}
	/* the tap tables */
	const char *mode = ox_attr_str(n, "mode", "nearest");
	int m = !strcmp(mode, "nearest") ? 1 : !strcmp(mode, "linear") ? 2 : 4;
	int anti = m > 1 && n->opset >= 18 && ox_attr_int(n, "antialias", 0);
	ox_dim taps = 0;
	for (int a = 0; a < r; a++) {
		ox_dim t = m;
		if (anti && (!scale_known[a] || !(scale[a] > 0x1p-20)))
			t = ox_dim_add(g, ox_dim_mul(g, x->shape.d[a], 2 * m), 2);
		else if (anti && scale[a] < 1 && scale[a] > 0x1p-20)
			t = 2 - 2 * ((int64_t)floor((m == 2 ? -1 : -2) / scale[a]) + 1);
		taps = ox_dim_add(g, taps, ox_dim_mul(g, o->d[a], t));
	}
	/* (two statements: adding the scratch may move g->vals, and in
	 * &g->vals[add()] the old g->vals may be read first) */
	const ox_id sid = ox_ir_add_scratch(g, n, 1);
	g->vals[sid].shape.d[0] = ox_dim_add(g, ox_dim_mul(g, taps, 12), 32 * r);
	return 0;
}

int infer_resize(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (x->dtype == OX_STRING || !ox_dtype_size(x->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	if (x->shape.rank < 1)
		return ox_error(g, n, "Resize of a scalar");
	const char *mode = ox_attr_str(n, "mode", "nearest");
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic"))
		return ox_error(g, n, "mode '%s' is not supported", mode);
	if (strcmp(mode, "nearest") && !nn_float(x->dtype) && !ox_dtype_is_int(x->dtype))
		return ox_error(g, n, "%s mode on dtype %s is not supported", mode, ox_dtype_name(x->dtype));
	ox_shape o = {x->shape.rank, {0}};
	if (!ox_ir_nn_resize_static(g, n)) {
		const int dt = x->dtype; /* (the scratch infer_resize_rt adds may move g->vals) */
		if (infer_resize_rt(g, n, x, &o))
			return -1;
		ox_set_out(g, n, 0, dt, &o);
		return 0;
	}
	double scale[OX_MAX_RANK], roi[2 * OX_MAX_RANK];
	if (ox_ir_nn_resize(g, n, &x->shape, o.d, scale, roi))
		return -1;
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* DeformConv (opset 19): 2-D only, like the ONNX reference. The output
 * shape is Conv's; offset must be (N, offset_group*2*KH*KW, OH, OW) and
 * the mask (N, offset_group*KH*KW, OH, OW). */
static int want_shape(ox_graph *g, const ox_node *n, int k, const char *what, const ox_dim *d, int rank)
{
	ox_value *v = ox_in(g, n, k);
	int ok = v->shape.rank == rank;
	for (int i = 0; ok && i < rank; i++)
		ok = v->shape.d[i] == d[i] || v->shape.d[i] < 0 || d[i] < 0;
	if (ok)
		return 0;
	char have[128], want[128];
	ox_shape ws = {rank, {0}};
	for (int i = 0; i < rank; i++)
		ws.d[i] = d[i];
	ox_shape_str(g, &v->shape, have, sizeof have);
	ox_shape_str(g, &ws, want, sizeof want);
	return ox_error(g, n, "%s has shape %s, expected %s", what, have, want);
}

int infer_deformconv(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1);
	ox_value *b = ox_in(g, n, 3), *mask = ox_in(g, n, 4);
	if (!nn_float(x->dtype))
		return ox_error(g, n, "dtype %s is not supported (float types only)", ox_dtype_name(x->dtype));
	for (int k = 1; k < 5; k++)
		if (ox_in(g, n, k) && ox_in(g, n, k)->dtype != x->dtype)
			return ox_error(g, n, "input %d has dtype %s, X has %s", k, ox_dtype_name(ox_in(g, n, k)->dtype),
					ox_dtype_name(x->dtype));
	if (x->shape.rank != 4)
		return ox_error(g, n, "input has rank %d: only 2-D DeformConv (rank 4) is supported", x->shape.rank);
	ox_shape o;
	if (ox_ir_conv_shape(g, n, x, w, &o))
		return -1;
	int64_t og = ox_attr_int(n, "offset_group", 1);
	if (og < 1 || (x->shape.d[1] >= 0 && x->shape.d[1] % og))
		return ox_error(g, n, "offset_group = %lld does not divide the input channels", (long long)og);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, 2, &w->shape, k, s, d, pads, &ap))
		return -1;
	int64_t kk = k[0] * k[1];
	ox_dim od[4] = {o.d[0], og * 2 * kk, o.d[2], o.d[3]};
	if (want_shape(g, n, 2, "offset", od, 4))
		return -1;
	if (b) {
		ox_dim bd[1] = {o.d[1]};
		if (want_shape(g, n, 3, "bias", bd, 1))
			return -1;
	}
	if (mask) {
		ox_dim md[4] = {o.d[0], og * kk, o.d[2], o.d[3]};
		if (want_shape(g, n, 4, "mask", md, 4))
			return -1;
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}
