/* eval_index.c: constant folding for the indexing family.
 *
 * NonZero of a constant folds to its table (of anything else its count is
 * a data symbol the emitted code computes).
 * GatherElements, GatherND, Trilu, Compress and EyeLike move whole elements
 * (bytes, exact for every dtype); CumSum/CumProd accumulate as the emitted
 * code does (integers in int64, wrapped to the type by the store; floats in
 * their compute type). Everything else returns -1 and is left to run time.
 */
#include "ir.h"
#include "family.h"
#include <string.h>


static int64_t prod(const ox_shape *s, int from, int to)
{
	int64_t p = 1;
	for (int k = from; k < to; k++)
		p *= s->d[k];
	return p;
}

/* index j of an axis of length n, wrapped; -1 when out of range */
static int64_t wrap(int64_t j, int64_t n)
{
	if (j < 0)
		j += n;
	return j < 0 || j >= n ? -1 : j;
}

static int fold_nonzero(const ox_tensor *x, ox_tensor *y)
{
	int r = x->shape.rank;
	int64_t m = ox_tensor_numel(x), cnt = y->shape.d[1], j = 0;
	for (int64_t i = 0; i < m; i++) {
		if (ox_tensor_get_f64(x, i) == 0)
			continue;
		if (j >= cnt)
			return -1; /* cannot happen: infer counted the same tensor */
		/* row-major coordinates of element i, last axis fastest */
		int64_t rest = i;
		for (int k = r - 1; k >= 0; k--) {
			ox_tensor_set_i64(y, (int64_t)k * cnt + j, rest % x->shape.d[k]);
			rest /= x->shape.d[k];
		}
		j++;
	}
	return j == cnt ? 0 : -1;
}

static int fold_gather_elements(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor *y)
{
	const ox_shape *xs = &in[0]->shape, *is = &in[1]->shape;
	size_t es = ox_dtype_size(y->dtype);
	int axis;
	if (ox_index_axis(g, n, &axis))
		return -1;
	int64_t m = ox_tensor_numel(in[1]);
	for (int64_t o = 0; o < m; o++) {
		int64_t j = wrap(ox_tensor_get_i64(in[1], o), xs->d[axis]), p = 0, rest = o;
		if (j < 0)
			return -1;
		for (int k = is->rank - 1; k >= 0; k--) {
			int64_t c = k == axis ? j : rest % is->d[k];
			rest /= is->d[k];
			p += c * prod(xs, k + 1, xs->rank);
		}
		memcpy((char *)y->data + o * es, (const char *)in[0]->data + p * es, es);
	}
	return 0;
}

static int fold_gathernd(ox_node *n, ox_tensor **in, ox_tensor *y)
{
	const ox_shape *xs = &in[0]->shape, *is = &in[1]->shape;
	size_t es = ox_dtype_size(y->dtype);
	int q = is->rank, r = xs->rank;
	int64_t b = ox_attr_int(n, "batch_dims", 0), last = is->d[q - 1];
	int64_t P = prod(is, 0, q - 1), G = prod(is, (int)b, q - 1), R = prod(xs, (int)(b + last), r);
	for (int64_t p = 0; p < P; p++) {
		int64_t off = G ? p / G * prod(xs, (int)b, r) : 0;
		for (int64_t k = 0; k < last; k++) {
			int ax = (int)(b + k);
			int64_t j = wrap(ox_tensor_get_i64(in[1], p * last + k), xs->d[ax]);
			if (j < 0)
				return -1;
			off += j * prod(xs, ax + 1, r);
		}
		memcpy((char *)y->data + p * R * es, (const char *)in[0]->data + off * es, R * es);
	}
	return 0;
}

static int fold_trilu(ox_node *n, ox_tensor **in, ox_tensor *y)
{
	const ox_shape *xs = &in[0]->shape;
	size_t es = ox_dtype_size(y->dtype);
	int64_t R = xs->d[xs->rank - 2], C = xs->d[xs->rank - 1], m = ox_tensor_numel(in[0]);
	int64_t k = n->nin > 1 && in[1] ? ox_tensor_get_i64(in[1], 0) : 0;
	int upper = ox_attr_int(n, "upper", 1) != 0;
	if (y->nbytes)
		memset(y->data, 0, y->nbytes);
	for (int64_t p = 0; p < m; p++) {
		int64_t i = p / C % R, j = p % C;
		if (upper ? j - i >= k : j - i <= k)
			memcpy((char *)y->data + p * es, (const char *)in[0]->data + p * es, es);
	}
	return 0;
}

/* a running sum or product in the type the emitted code uses */
typedef struct {
	int kind; /* 0: float (f32, f16, bf16), 1: double, 2: integer */
	float f;
	double d;
	uint64_t i; /* wraps like the narrow type once stored */
} cum_acc;

static void cum_update(cum_acc *a, const ox_tensor *x, int64_t p, int sum)
{
	if (a->kind == 0) {
		float v = (float)ox_tensor_get_f64(x, p);
		a->f = sum ? a->f + v : a->f * v;
	} else if (a->kind == 1) {
		double v = ox_tensor_get_f64(x, p);
		a->d = sum ? a->d + v : a->d * v;
	} else {
		uint64_t v = (uint64_t)ox_tensor_get_i64(x, p);
		a->i = sum ? a->i + v : a->i * v;
	}
}

static void cum_store(const cum_acc *a, ox_tensor *y, int64_t p)
{
	if (a->kind == 0)
		ox_tensor_set_f64(y, p, a->f);
	else if (a->kind == 1)
		ox_tensor_set_f64(y, p, a->d);
	else
		ox_tensor_set_i64(y, p, (int64_t)a->i);
}

static int fold_cum(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor *y)
{
	const ox_shape *xs = &in[0]->shape;
	int axis, dt = y->dtype, sum = n->op == OX_OP_CumSum;
	if (ox_index_axis(g, n, &axis) || axis < 0)
		return -1;
	int kind = dt == OX_F32 || dt == OX_F16 || dt == OX_BF16 ? 0 : dt == OX_F64 ? 1 : 2;
	if (kind == 2 && !ox_dtype_is_int(dt))
		return -1;
	int64_t O = prod(xs, 0, axis), L = xs->d[axis], I = prod(xs, axis + 1, xs->rank);
	int excl = ox_attr_int(n, "exclusive", 0) != 0, rev = ox_attr_int(n, "reverse", 0) != 0;
	for (int64_t o = 0; o < O; o++)
		for (int64_t i = 0; i < I; i++) {
			cum_acc a = {kind, sum ? 0.0f : 1.0f, sum ? 0.0 : 1.0, sum ? 0 : 1};
			for (int64_t t = 0; t < L; t++) {
				int64_t p = o * L * I + (rev ? L - 1 - t : t) * I + i;
				if (excl)
					cum_store(&a, y, p);
				cum_update(&a, in[0], p, sum);
				if (!excl)
					cum_store(&a, y, p);
			}
		}
	return 0;
}

static int fold_compress(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor *y)
{
	const ox_shape *xs = &in[0]->shape;
	size_t es = ox_dtype_size(y->dtype);
	int64_t O = 1, L = ox_tensor_numel(in[0]), I = 1, k = 0;
	if (ox_attr_get(n, "axis")) {
		int axis;
		if (ox_index_axis(g, n, &axis))
			return -1;
		O = prod(xs, 0, axis), L = xs->d[axis], I = prod(xs, axis + 1, xs->rank);
	}
	int64_t K = ox_tensor_numel(y) / (O * I > 0 ? O * I : 1), mc = ox_tensor_numel(in[1]);
	for (int64_t s = 0; s < L && s < mc; s++) {
		if (ox_tensor_get_f64(in[1], s) == 0)
			continue;
		if (k >= K)
			return -1;
		for (int64_t o = 0; o < O; o++)
			memcpy((char *)y->data + ((o * K + k) * I) * es, (const char *)in[0]->data + ((o * L + s) * I) * es,
			       I * es);
		k++;
	}
	return k == K ? 0 : -1;
}

int eval_index(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out)
{
	ox_tensor *y = out[0];
	if (n->op != OX_OP_NonZero && !ox_dtype_size(y->dtype))
		return -1;
	switch (n->op) {
	case OX_OP_NonZero:
		return fold_nonzero(in[0], y);
	case OX_OP_GatherElements:
		return fold_gather_elements(g, n, in, y);
	case OX_OP_GatherND:
		return fold_gathernd(n, in, y);
	case OX_OP_Trilu:
		return fold_trilu(n, in, y);
	case OX_OP_CumSum:
	case OX_OP_CumProd:
		return fold_cum(g, n, in, y);
	case OX_OP_Compress:
		return fold_compress(g, n, in, y);
	case OX_OP_EyeLike: {
		int64_t R = y->shape.d[0], C = y->shape.d[1], k = ox_attr_int(n, "k", 0);
		if (y->nbytes)
		memset(y->data, 0, y->nbytes);
		for (int64_t i = 0; i < R; i++)
			if (i + k >= 0 && i + k < C)
				ox_tensor_set_f64(y, i * C + i + k, 1);
		return 0;
	}
	}
	return -1;
}
