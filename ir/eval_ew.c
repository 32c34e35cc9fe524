/* eval_ew.c: compile-time evaluation of the elementwise family.
 *
 * Used by constant folding, mostly on exporters' shape arithmetic, so
 * integers are computed exactly in int64 (wrapping like the generated code,
 * truncating division like C) and floats in double, then stored in the
 * output dtype. Inputs broadcast numpy-style onto the output shape. Anything
 * this file cannot reproduce exactly as the generated code would (integer
 * division by zero, float-to-int overflow, sign-sensitive u64 arithmetic,
 * more than MAXIN inputs, casts to or from float8 or the sub-byte kinds)
 * returns -1 and is left to run time. BitCast copies the bytes.
 */
#include "ir.h"
#include <math.h>
#include <string.h>

#define MAXIN 32

static int is_fp(int dt)
{
	return dt == OX_F16 || dt == OX_BF16 || dt == OX_F32 || dt == OX_F64;
}

static int supported(int dt)
{
	return is_fp(dt) || ox_dtype_is_int(dt) || dt == OX_BOOL;
}

/* attributes and scalar bounds, read once per node */
typedef struct {
	double alpha, beta, gamma;
	int gelu_tanh, fmod, shift_left, pos, neg;
	int has_lo, has_hi;
	double lo, hi;     /* Clip bounds, float domain */
	int64_t ilo, ihi;  /* Clip bounds, integer domain */
} params;

/* ops computed in double even for integer inputs (only Erf is allowed on
 * integers among them by the spec; the rest arrive here as floats) */
static int float_only(int op)
{
	switch (op) {
	case OX_OP_Abs: case OX_OP_Neg: case OX_OP_Sign: case OX_OP_Relu: case OX_OP_Clip:
	case OX_OP_Not: case OX_OP_BitwiseNot:
	case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div: case OX_OP_Pow:
	case OX_OP_Mod: case OX_OP_PRelu: case OX_OP_Equal: case OX_OP_Less:
	case OX_OP_LessOrEqual: case OX_OP_Greater: case OX_OP_GreaterOrEqual:
	case OX_OP_And: case OX_OP_Or: case OX_OP_Xor: case OX_OP_BitShift:
	case OX_OP_BitwiseAnd: case OX_OP_BitwiseOr: case OX_OP_BitwiseXor:
	case OX_OP_Min: case OX_OP_Max: case OX_OP_Sum: case OX_OP_Mean: case OX_OP_Where:
		return 0;
	}
	return 1;
}

/* integer ops whose result does not depend on reading u64 as signed */
static int u64_safe(int op)
{
	switch (op) {
	case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Sum: case OX_OP_Equal: case OX_OP_Where:
	case OX_OP_BitwiseAnd: case OX_OP_BitwiseOr: case OX_OP_BitwiseXor: case OX_OP_BitwiseNot:
		return 1;
	case OX_OP_BitShift:
		return 1; /* right shifts are refused separately */
	}
	return 0;
}

/* store a double into t[k]; integer targets need a representable value
 * (C leaves NaN and out-of-range conversions undefined) */
static int put_f(ox_tensor *t, int64_t k, double v)
{
	if (!is_fp(t->dtype) && t->dtype != OX_BOOL) {
		if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0))
			return -1;
		if (t->dtype == OX_U64 && v < 0)
			return -1;
		v = trunc(v);
	}
	ox_tensor_set_f64(t, k, v);
	return 0;
}

/* ---- scalar kernels ---- */

static int is_variadic(int op)
{
	return op == OX_OP_Min || op == OX_OP_Max || op == OX_OP_Sum || op == OX_OP_Mean;
}

static double unary_f(int op, double x, const params *p)
{
	switch (op) {
	case OX_OP_Abs: return fabs(x);
	case OX_OP_Neg: return -x;
	case OX_OP_Reciprocal: return 1 / x;
	case OX_OP_Sqrt: return sqrt(x);
	case OX_OP_Exp: return exp(x);
	case OX_OP_Log: return log(x);
	case OX_OP_Floor: return floor(x);
	case OX_OP_Ceil: return ceil(x);
	case OX_OP_Round: return nearbyint(x);
	case OX_OP_Sign: return x > 0 ? 1 : x < 0 ? -1 : x;
	case OX_OP_Sin: return sin(x);
	case OX_OP_Cos: return cos(x);
	case OX_OP_Tan: return tan(x);
	case OX_OP_Asin: return asin(x);
	case OX_OP_Acos: return acos(x);
	case OX_OP_Atan: return atan(x);
	case OX_OP_Sinh: return sinh(x);
	case OX_OP_Cosh: return cosh(x);
	case OX_OP_Asinh: return asinh(x);
	case OX_OP_Acosh: return acosh(x);
	case OX_OP_Atanh: return atanh(x);
	case OX_OP_Erf: return erf(x);
	case OX_OP_Relu: return x < 0 ? 0 : x;
	case OX_OP_LeakyRelu: return x < 0 ? p->alpha * x : x;
	case OX_OP_Sigmoid: return 1 / (1 + exp(-x));
	case OX_OP_HardSigmoid: return fmax(0, fmin(1, p->alpha * x + p->beta));
	case OX_OP_HardSwish: return x * fmax(0, fmin(1, x / 6 + 0.5));
	case OX_OP_Tanh: return tanh(x);
	case OX_OP_Gelu:
		if (p->gelu_tanh)
			return 0.5 * x * (1 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
		return 0.5 * x * (1 + erf(x / sqrt(2)));
	case OX_OP_Elu: return x < 0 ? p->alpha * expm1(x) : x;
	case OX_OP_Selu: return x > 0 ? p->gamma * x : p->gamma * p->alpha * expm1(x);
	case OX_OP_Celu: return fmax(0, x) + fmin(0, p->alpha * expm1(x / p->alpha));
	case OX_OP_ThresholdedRelu: return x > p->alpha ? x : 0;
	case OX_OP_Softplus: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
	case OX_OP_Softsign: return x / (1 + fabs(x));
	case OX_OP_Mish: return x * tanh(log1p(exp(x)));
	case OX_OP_Swish: return x / (1 + exp(-p->alpha * x));
	case OX_OP_IsNaN: return isnan(x);
	case OX_OP_IsInf: return isinf(x) && ((x > 0 && p->pos) || (x < 0 && p->neg));
	case OX_OP_Clip:
		if (p->has_lo && x < p->lo)
			x = p->lo;
		if (p->has_hi && x > p->hi)
			x = p->hi;
		return x;
	}
	ox_die("eval_ew: op %d is not a float unary op", op);
}

/* wrapping int64 arithmetic, as the generated code's fixed-width types do */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* 0 and *r, or -1 to leave the node to run time */
static int unary_i(int op, int64_t x, int is_unsigned, const params *p, int64_t *r)
{
	switch (op) {
	case OX_OP_Abs: *r = is_unsigned || x >= 0 ? x : wrap_sub(0, x); return 0;
	case OX_OP_Neg: *r = wrap_sub(0, x); return 0;
	case OX_OP_Sign: *r = (x > 0) - (x < 0); return 0;
	case OX_OP_Relu: *r = x < 0 ? 0 : x; return 0;
	case OX_OP_Not: *r = !x; return 0;
	case OX_OP_BitwiseNot: *r = ~x; return 0;
	case OX_OP_Clip:
		if (p->has_lo && x < p->ilo)
			x = p->ilo;
		if (p->has_hi && x > p->ihi)
			x = p->ihi;
		*r = x;
		return 0;
	}
	return -1;
}

static double binary_f(int op, double a, double b, const params *p)
{
	switch (op) {
	case OX_OP_Add: case OX_OP_Sum: case OX_OP_Mean: return a + b;
	case OX_OP_Sub: return a - b;
	case OX_OP_Mul: return a * b;
	case OX_OP_Div: return a / b;
	case OX_OP_Pow: return pow(a, b);
	case OX_OP_Mod: {
		double m = fmod(a, b);
		if (!p->fmod && m != 0 && (m < 0) != (b < 0))
			m += b; /* Python's %: the sign of the divisor */
		return m;
	}
	case OX_OP_PRelu: return a < 0 ? b * a : a;
	case OX_OP_Equal: return a == b;
	case OX_OP_Less: return a < b;
	case OX_OP_LessOrEqual: return a <= b;
	case OX_OP_Greater: return a > b;
	case OX_OP_GreaterOrEqual: return a >= b;
	case OX_OP_Min: return isnan(a) || a < b ? a : b;
	case OX_OP_Max: return isnan(a) || a > b ? a : b;
	}
	ox_die("eval_ew: op %d is not a float binary op", op);
}

static int64_t ipow(int64_t a, int64_t e)
{
	if (e < 0)
		return a == 1 ? 1 : a == -1 ? (e & 1 ? -1 : 1) : 0;
	int64_t r = 1;
	while (e) {
		if (e & 1)
			r = wrap_mul(r, a);
		a = wrap_mul(a, a);
		e >>= 1;
	}
	return r;
}

static int binary_i(int op, int64_t a, int64_t b, int bits, const params *p, int64_t *r)
{
	switch (op) {
	case OX_OP_Add: case OX_OP_Sum: *r = wrap_add(a, b); return 0;
	case OX_OP_Sub: *r = wrap_sub(a, b); return 0;
	case OX_OP_Mul: *r = wrap_mul(a, b); return 0;
	case OX_OP_Div:
		if (b == 0)
			return -1;
		*r = b == -1 ? wrap_sub(0, a) : a / b;
		return 0;
	case OX_OP_Mod:
		if (b == 0)
			return -1;
		*r = b == -1 ? 0 : a % b;
		if (!p->fmod && *r != 0 && (*r < 0) != (b < 0))
			*r += b;
		return 0;
	case OX_OP_Pow: *r = ipow(a, b); return 0;
	case OX_OP_PRelu: *r = a < 0 ? wrap_mul(a, b) : a; return 0;
	case OX_OP_Equal: *r = a == b; return 0;
	case OX_OP_Less: *r = a < b; return 0;
	case OX_OP_LessOrEqual: *r = a <= b; return 0;
	case OX_OP_Greater: *r = a > b; return 0;
	case OX_OP_GreaterOrEqual: *r = a >= b; return 0;
	case OX_OP_And: *r = a && b; return 0;
	case OX_OP_Or: *r = a || b; return 0;
	case OX_OP_Xor: *r = !a != !b; return 0;
	case OX_OP_BitwiseAnd: *r = a & b; return 0;
	case OX_OP_BitwiseOr: *r = a | b; return 0;
	case OX_OP_BitwiseXor: *r = a ^ b; return 0;
	case OX_OP_BitShift:
		if (b < 0 || b >= bits)
			*r = 0;
		else
			*r = p->shift_left ? (int64_t)((uint64_t)a << b) : a >> b;
		return 0;
	case OX_OP_Min: *r = a < b ? a : b; return 0;
	case OX_OP_Max: *r = a > b ? a : b; return 0;
	}
	return -1;
}

/* ---- whole-tensor drivers ---- */

static int eval_cast(ox_tensor *x, ox_tensor *o)
{
	int64_t m = ox_tensor_numel(o);
	for (int64_t k = 0; k < m; k++) {
		if (is_fp(o->dtype)) {
			ox_tensor_set_f64(o, k, ox_tensor_get_f64(x, k));
		} else if (is_fp(x->dtype)) {
			double v = ox_tensor_get_f64(x, k);
			if (o->dtype == OX_BOOL)
				ox_tensor_set_i64(o, k, v != 0);
			else if (put_f(o, k, v))
				return -1;
		} else if (o->dtype == OX_BOOL) {
			ox_tensor_set_i64(o, k, ox_tensor_get_i64(x, k) != 0);
		} else {
			ox_tensor_set_i64(o, k, ox_tensor_get_i64(x, k));
		}
	}
	return 0;
}

static void read_params(ox_graph *g, ox_node *n, ox_tensor **in, params *p)
{
	(void)g;
	memset(p, 0, sizeof *p);
	switch (n->op) {
	case OX_OP_LeakyRelu: p->alpha = ox_attr_float(n, "alpha", 0.01f); break;
	case OX_OP_Elu: case OX_OP_Celu: case OX_OP_ThresholdedRelu: case OX_OP_Swish:
		p->alpha = ox_attr_float(n, "alpha", 1.0f);
		break;
	case OX_OP_Selu:
		p->alpha = ox_attr_float(n, "alpha", 1.67326319217681884765625f);
		p->gamma = ox_attr_float(n, "gamma", 1.05070102214813232421875f);
		break;
	case OX_OP_HardSigmoid:
		p->alpha = ox_attr_float(n, "alpha", 0.2f);
		p->beta = ox_attr_float(n, "beta", 0.5f);
		break;
	case OX_OP_Gelu: p->gelu_tanh = !strcmp(ox_attr_str(n, "approximate", "none"), "tanh"); break;
	case OX_OP_Mod: p->fmod = (int)ox_attr_int(n, "fmod", 0); break;
	case OX_OP_BitShift: p->shift_left = !strcmp(ox_attr_str(n, "direction", ""), "LEFT"); break;
	case OX_OP_IsInf:
		p->pos = (int)ox_attr_int(n, "detect_positive", 1);
		p->neg = (int)ox_attr_int(n, "detect_negative", 1);
		break;
	case OX_OP_Clip:
		if (n->opset < 11) {
			/* the attributes default to the float range's ends */
			p->has_lo = p->has_hi = 1;
			p->lo = ox_attr_float(n, "min", -3.402823466e+38f);
			p->hi = ox_attr_float(n, "max", 3.402823466e+38f);
		} else {
			for (int k = 1; k < 3 && k < n->nin; k++) {
				if (n->in[k] < 0 || !in[k])
					continue;
				double v = ox_tensor_get_f64(in[k], 0);
				int64_t iv = is_fp(in[k]->dtype) ? 0 : ox_tensor_get_i64(in[k], 0);
				if (k == 1)
					p->has_lo = 1, p->lo = v, p->ilo = iv;
				else
					p->has_hi = 1, p->hi = v, p->ihi = iv;
			}
		}
		break;
	}
}

int eval_ew(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out)
{
	ox_tensor *o = out[0];
	int nin = n->nin;
	if (n->op == OX_OP_BitCast) {
		/* equal element sizes (infer checked): the bytes carry over */
		if (!in[0] || !in[0]->data || ox_dtype_size(in[0]->dtype) != ox_dtype_size(o->dtype))
			return -1;
		memcpy(o->data, in[0]->data, (size_t)ox_tensor_numel(o) * ox_dtype_size(o->dtype));
		return 0;
	}
	while (nin > 0 && (n->in[nin - 1] < 0 || !in[nin - 1]))
		nin--;
	if (nin > MAXIN || !supported(o->dtype))
		return -1;
	for (int k = 0; k < nin; k++)
		if (n->in[k] >= 0 && (!in[k] || !in[k]->data || !supported(in[k]->dtype)))
			return -1;
	if (n->op == OX_OP_Cast || n->op == OX_OP_CastLike)
		return eval_cast(in[0], o);

	params p;
	read_params(g, n, in, &p);
	int nbc = n->op == OX_OP_Clip ? 1 : nin; /* Clip's bounds are scalars, read above */

	/* domain: the dtype arithmetic happens in (Where: its values) */
	int dom = in[n->op == OX_OP_Where ? 1 : 0]->dtype;
	int fdom = is_fp(dom) || float_only(n->op);
	int isu = dom == OX_U8 || dom == OX_U16 || dom == OX_U32 || dom == OX_U64;
	if (n->op == OX_OP_Pow && !is_fp(dom) && is_fp(in[1]->dtype))
		fdom = 1; /* int ** float: computed in double, then truncated */
	if (!fdom && dom == OX_U64 && !u64_safe(n->op))
		return -1;
	if (n->op == OX_OP_Pow && !fdom && in[1]->dtype == OX_U64)
		return -1;
	if (n->op == OX_OP_BitShift && dom == OX_U64 && !p.shift_left)
		return -1;
	int bits = (int)ox_dtype_size(dom) * 8;

	/* broadcast strides of each input over the output dims */
	int r = o->shape.rank;
	int64_t st[MAXIN][OX_MAX_RANK], off[MAXIN] = {0}, idx[OX_MAX_RANK] = {0};
	for (int k = 0; k < nbc; k++) {
		const ox_shape *s = &in[k]->shape;
		if (s->rank > r)
			return -1;
		int64_t stride = 1;
		for (int d = r - 1; d >= 0; d--) {
			int j = d - (r - s->rank);
			if (j < 0 || s->d[j] == 1) {
				st[k][d] = 0;
			} else {
				st[k][d] = stride;
				stride *= s->d[j];
			}
		}
	}

	int64_t m = ox_tensor_numel(o);
	for (int64_t e = 0; e < m; e++) {
		if (n->op == OX_OP_Where) {
			ox_tensor *src = ox_tensor_get_i64(in[0], off[0]) ? in[1] : in[2];
			size_t es = ox_dtype_size(o->dtype);
			memcpy((char *)o->data + e * es, (char *)src->data + off[src == in[1] ? 1 : 2] * es, es);
		} else if (fdom) {
			double v = ox_tensor_get_f64(in[0], off[0]);
			if (nbc == 1 && !is_variadic(n->op))
				v = unary_f(n->op, v, &p);
			for (int k = 1; k < nbc; k++)
				v = binary_f(n->op, v, ox_tensor_get_f64(in[k], off[k]), &p);
			if (n->op == OX_OP_Mean)
				v /= nbc;
			if (put_f(o, e, v))
				return -1;
		} else {
			int64_t v = ox_tensor_get_i64(in[0], off[0]);
			if (nbc == 1 && !is_variadic(n->op) && unary_i(n->op, v, isu, &p, &v))
				return -1;
			for (int k = 1; k < nbc; k++)
				if (binary_i(n->op, v, ox_tensor_get_i64(in[k], off[k]), bits, &p, &v))
					return -1;
			ox_tensor_set_i64(o, e, v);
		}
		/* step the output multi-index and every input offset */
		for (int d = r - 1; d >= 0; d--) {
			idx[d]++;
			for (int k = 0; k < nbc; k++)
				off[k] += st[k][d];
			if (idx[d] < o->shape.d[d])
				break;
			for (int k = 0; k < nbc; k++)
				off[k] -= st[k][d] * idx[d];
			idx[d] = 0;
		}
	}
	return 0;
}
