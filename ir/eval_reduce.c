/* eval_reduce.c: compile-time evaluation of Reduce* and ArgMax/ArgMin for
 * constant folding.
 *
 * Floats are reduced in double; integers and bool in 64-bit integers with
 * wrap-around (so int8 sums wrap exactly as at run time), except L2, LogSum
 * and LogSumExp, which go through double and truncate like the reference.
 * Anything doubtful (a non-finite result for an integer output, an empty
 * integer reduction, an unknown dtype) returns -1: the node then runs at
 * run time, where emit_reduce.c decides. The softmax family and
 * LayerNormalization are never folded (eval_none in ops.def).
 */
#include "ir.h"
#include "family.h"
#include <math.h>
#include <stdlib.h>


static int foldable(int dt)
{
	return ox_dtype_is_int(dt) || dt == OX_BOOL || dt == OX_F32 || dt == OX_F64 ||
	       dt == OX_F16 || dt == OX_BF16;
}

/* ArgMax/ArgMin: NaN wins like numpy's argmax (the first NaN, or the last
 * with select_last_index). */
static int eval_arg(ox_graph *g, ox_node *n, ox_tensor *x, ox_tensor *y)
{
	(void)g;
	int rank = x->shape.rank;
	int ax = ox_norm_axis(ox_attr_int(n, "axis", 0), rank);
	int last = ox_attr_int(n, "select_last_index", 0) != 0;
	int isfloat = ox_dtype_is_float(x->dtype), isu64 = x->dtype == OX_U64;
	int max = n->op == OX_OP_ArgMax;
	if (ax < 0 || !foldable(x->dtype))
		return -1;
	int64_t outer = 1, len = x->shape.d[ax], inner = 1;
	for (int i = 0; i < ax; i++)
		outer *= x->shape.d[i];
	for (int i = ax + 1; i < rank; i++)
		inner *= x->shape.d[i];
	if (len <= 0)
		return -1;
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t j = 0; j < inner; j++) {
			int64_t best = 0, base = o * len * inner + j;
			for (int64_t k = 1; k < len; k++) {
				int64_t a = base + k * inner, b = base + best * inner;
				int take;
				if (isfloat) {
					double va = ox_tensor_get_f64(x, a), vb = ox_tensor_get_f64(x, b);
					if (isnan(vb))
						take = last && isnan(va);
					else if (isnan(va))
						take = 1;
					else
						take = max ? (va > vb || (last && va == vb))
						           : (va < vb || (last && va == vb));
				} else if (isu64) {
					uint64_t va = (uint64_t)ox_tensor_get_i64(x, a);
					uint64_t vb = (uint64_t)ox_tensor_get_i64(x, b);
					take = max ? (va > vb || (last && va == vb)) : (va < vb || (last && va == vb));
				} else {
					int64_t va = ox_tensor_get_i64(x, a), vb = ox_tensor_get_i64(x, b);
					take = max ? (va > vb || (last && va == vb)) : (va < vb || (last && va == vb));
				}
				if (take)
					best = k;
			}
			ox_tensor_set_i64(y, o * inner + j, best);
		}
	}
	return 0;
}

/* the output element that input element k contributes to */
static int64_t out_index(const ox_shape *s, const int *mask, int64_t k)
{
	int64_t o = 0, stride = 1;
	for (int i = s->rank - 1; i >= 0; i--) {
		int64_t d = s->d[i], idx = k % d;
		k /= d;
		if (!mask[i]) {
			o += idx * stride;
			stride *= d;
		}
	}
	return o;
}

static int eval_float(int op, ox_tensor *x, ox_tensor *y, const int *mask, int64_t count)
{
	int64_t nx = ox_tensor_numel(x), ny = ox_tensor_numel(y);
	double *acc = malloc(sizeof(double) * (size_t)(2 * ny + 1)), *m = acc + ny;
	if (!acc)
		return -1;
	double init = op == OX_OP_ReduceProd ? 1 : op == OX_OP_ReduceMax ? -INFINITY :
	              op == OX_OP_ReduceMin ? INFINITY : 0;
	for (int64_t o = 0; o < ny; o++)
		acc[o] = init, m[o] = -INFINITY;
	if (op == OX_OP_ReduceLogSumExp) { /* max first, so exp cannot overflow */
		for (int64_t k = 0; k < nx; k++) {
			int64_t o = out_index(&x->shape, mask, k);
			double v = ox_tensor_get_f64(x, k);
			if (v > m[o] || isnan(v))
				m[o] = v;
		}
		for (int64_t o = 0; o < ny; o++)
			if (!isfinite(m[o]))
				m[o] = 0;
	}
	for (int64_t k = 0; k < nx; k++) {
		int64_t o = out_index(&x->shape, mask, k);
		double v = ox_tensor_get_f64(x, k);
		switch (op) {
		case OX_OP_ReduceMax: if (v > acc[o] || isnan(v)) acc[o] = v; break;
		case OX_OP_ReduceMin: if (v < acc[o] || isnan(v)) acc[o] = v; break;
		case OX_OP_ReduceProd: acc[o] *= v; break;
		case OX_OP_ReduceL1: acc[o] += fabs(v); break;
		case OX_OP_ReduceL2: case OX_OP_ReduceSumSquare: acc[o] += v * v; break;
		case OX_OP_ReduceLogSumExp: acc[o] += exp(v - m[o]); break;
		default: acc[o] += v; break; /* Sum, Mean, LogSum */
		}
	}
	for (int64_t o = 0; o < ny; o++) {
		double r = acc[o];
		switch (op) {
		case OX_OP_ReduceMean: r = count ? r / (double)count : NAN; break;
		case OX_OP_ReduceL2: r = sqrt(r); break;
		case OX_OP_ReduceLogSum: r = log(r); break;
		case OX_OP_ReduceLogSumExp: r = m[o] + log(r); break;
		}
		ox_tensor_set_f64(y, o, r);
	}
	free(acc);
	return 0;
}

/* Integers: exact in 64 bits with wrap-around (unsigned arithmetic, so no
 * signed overflow here). Max/Min/Mean compare and divide by signedness. */
static int eval_int(int op, ox_tensor *x, ox_tensor *y, const int *mask, int64_t count)
{
	int64_t nx = ox_tensor_numel(x), ny = ox_tensor_numel(y);
	int sgn = ox_dtype_is_signed(x->dtype);
	if (count == 0 && ny > 0)
		return -1; /* identities like "lowest int8" are left to emit_reduce.c */
	if (op == OX_OP_ReduceL2 || op == OX_OP_ReduceLogSum || op == OX_OP_ReduceLogSumExp) {
		ox_tensor t = *x;
		/* reduce a double copy, then truncate like astype(int) */
		ox_shape ys = y->shape;
		double *dx = malloc(sizeof(double) * (size_t)(nx + ny + 1));
		if (!dx)
			return -1;
		for (int64_t k = 0; k < nx; k++)
			dx[k] = ox_tensor_get_f64(x, k);
		t.dtype = OX_F64, t.data = dx;
		ox_tensor r = {OX_F64, ys, dx + nx, 0, NULL};
		int rc = eval_float(op, &t, &r, mask, count);
		for (int64_t o = 0; !rc && o < ny; o++) {
			double v = dx[nx + o];
			if (!isfinite(v) || fabs(v) > 9.2e18)
				rc = -1;
			else
				ox_tensor_set_i64(y, o, (int64_t)v);
		}
		free(dx);
		return rc;
	}
	uint64_t *acc = malloc(sizeof(uint64_t) * (size_t)(ny + 1));
	char *seen = calloc((size_t)ny + 1, 1);
	if (!acc || !seen) {
		free(acc), free(seen);
		return -1;
	}
	for (int64_t o = 0; o < ny; o++)
		acc[o] = op == OX_OP_ReduceProd ? 1 : 0;
	for (int64_t k = 0; k < nx; k++) {
		int64_t o = out_index(&x->shape, mask, k);
		int64_t v = ox_tensor_get_i64(x, k);
		uint64_t u = (uint64_t)v;
		switch (op) {
		case OX_OP_ReduceMax: case OX_OP_ReduceMin: {
			int gt = sgn ? v > (int64_t)acc[o] : u > acc[o];
			if (!seen[o] || (op == OX_OP_ReduceMax ? gt : (u != acc[o] && !gt)))
				acc[o] = u;
			seen[o] = 1;
			break;
		}
		case OX_OP_ReduceProd: acc[o] *= u; break;
		case OX_OP_ReduceL1: acc[o] += sgn && v < 0 ? 0 - u : u; break;
		case OX_OP_ReduceSumSquare: acc[o] += u * u; break;
		default: acc[o] += u; break; /* Sum, Mean */
		}
	}
	for (int64_t o = 0; o < ny; o++) {
		uint64_t r = acc[o];
		if (op == OX_OP_ReduceMean)
			r = sgn ? (uint64_t)((int64_t)r / count) : r / (uint64_t)count;
		ox_tensor_set_i64(y, o, (int64_t)r);
	}
	free(acc), free(seen);
	return 0;
}

int eval_reduce(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out)
{
	ox_tensor *x = in[0], *y = out[0];
	if (!foldable(x->dtype) || !ox_shape_is_const(&x->shape))
		return -1;
	if (n->op == OX_OP_ArgMax || n->op == OX_OP_ArgMin)
		return eval_arg(g, n, x, y);
	int mask[OX_MAX_RANK];
	if (ox_reduce_axes(g, n, mask))
		return -1;
	int64_t count = 1;
	for (int i = 0; i < x->shape.rank; i++)
		if (mask[i])
			count *= x->shape.d[i];
	if (ox_dtype_is_float(x->dtype))
		return eval_float(n->op, x, y, mask, count);
	return eval_int(n->op, x, y, mask, count);
}
