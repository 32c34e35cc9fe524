/* eval_data.c: compile-time evaluation of data movement and shape ops.
 *
 * These ops move elements without looking at them, so everything here is
 * generic on the element size (memcpy of es bytes); only Shape, Size and
 * Range compute values. Index arithmetic comes from the decoders and copy
 * plans in ir/infer_data.c, the same ones codegen/c/emit_data.c prints, so a
 * folded constant and the generated code cannot disagree. out[k] arrives
 * allocated with the inferred dtype and (constant) shape.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

/* A plan row with constant fields (see ox_ir_data_plan): the extent, the
 * strides (the input's signed) and the Pad kind's a, m, lo */
typedef struct {
	int64_t n, is, os, a, m, lo;
	int kind;
} crow;

/* c(i) of a plan row */
static int64_t coord(const crow *a, int64_t i)
{
	int64_t t = i - a->a, m = a->m;
	switch (a->kind) {
	case OX_PLAN_EDGE:
		t = t < 0 ? 0 : t >= m ? m - 1 : t;
		break;
	case OX_PLAN_WRAP:
		t = (t % m + m) % m;
		break;
	case OX_PLAN_REFLECT:
		if (m == 1) {
			t = 0;
		} else {
			int64_t p = 2 * (m - 1);
			t = (t % p + p) % p;
			if (t >= m)
				t = p - t;
		}
		break;
	default:
		return i;
	}
	return a->lo + t;
}

static void run_plan(const crow *ax, int nax, const unsigned char *src, int64_t ib,
		     unsigned char *dst, int64_t ob, size_t es)
{
	if (nax == 0) {
		memcpy(dst + ob * es, src + ib * es, es);
		return;
	}
	for (int64_t i = 0; i < ax[0].n; i++)
		run_plan(ax + 1, nax - 1, src, ib + coord(ax, i) * ax[0].is, dst, ob + i * ax[0].os, es);
}

/* fill t with copies of the es-byte element at v */
static void fill(ox_tensor *t, const void *v, size_t es)
{
	int64_t m = ox_tensor_numel(t);
	for (int64_t i = 0; i < m; i++)
		memcpy((unsigned char *)t->data + i * es, v, es);
}

static int64_t prod(const ox_shape *s, int from, int to)
{
	int64_t p = 1;
	for (int k = from; k < to; k++)
		p *= s->d[k];
	return p;
}

static int eval_plan(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out, size_t es)
{
	ox_plan p;
	crow ax[2 * OX_MAX_RANK];
	if (ox_ir_data_plan(g, n, &p))
		return -1;
	/* constant shapes give constant fields (a dim past 2^63 would not be) */
	if (p.ib < 0 || p.ob < 0)
		return -1;
	for (int k = 0; k < p.nax; k++) {
		const ox_plan_axis *a = &p.ax[k];
		if (a->n < 0 || a->is < 0 || a->os < 0 || a->a < 0 || a->m < 0 || a->lo < 0 || a->bc)
			return -1;
		ax[k] = (crow){a->n, a->neg ? -a->is : a->is, a->os, a->a, a->m, a->lo, a->kind};
	}
	if (n->op == OX_OP_Pad && !strcmp(ox_attr_str(n, "mode", "constant"), "constant")) {
		unsigned char v[16] = {0};
		if (n->nin > 2 && in[2] && ox_tensor_numel(in[2]) == 1)
			memcpy(v, in[2]->data, es);
		else if (n->opset < 11) {
			ox_tensor t = {.dtype = out[0]->dtype, .data = v, .nbytes = es};
			ox_tensor_set_f64(&t, 0, ox_attr_float(n, "value", 0));
		}
		fill(out[0], v, es);
	}
	run_plan(ax, p.nax, in[0]->data, p.ib, out[0]->data, p.ob, es);
	return 0;
}

static int eval_range(ox_tensor **in, ox_tensor *y)
{
	int64_t m = ox_tensor_numel(y);
	if (y->dtype == OX_F64) {
		double s = ox_tensor_get_f64(in[0], 0), d = ox_tensor_get_f64(in[2], 0);
		for (int64_t i = 0; i < m; i++)
			ox_tensor_set_f64(y, i, s + (double)i * d);
	} else if (ox_dtype_is_float(y->dtype)) {
		/* in float, as the generated code computes it */
		float s = (float)ox_tensor_get_f64(in[0], 0), d = (float)ox_tensor_get_f64(in[2], 0);
		for (int64_t i = 0; i < m; i++)
			ox_tensor_set_f64(y, i, s + (float)i * d);
	} else {
		/* unsigned arithmetic: wraps like the dtype instead of overflowing */
		uint64_t s = (uint64_t)ox_tensor_get_i64(in[0], 0), d = (uint64_t)ox_tensor_get_i64(in[2], 0);
		for (int64_t i = 0; i < m; i++)
			ox_tensor_set_i64(y, i, (int64_t)(s + (uint64_t)i * d));
	}
	return 0;
}

int eval_data(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out)
{
	ox_tensor *y = out[0];
	size_t es = ox_dtype_size(y->dtype);
	if (!es || y->dtype == OX_STRING)
		return -1;
	switch (n->op) {
	case OX_OP_Identity:
	case OX_OP_Reshape:
	case OX_OP_Flatten:
	case OX_OP_Squeeze:
	case OX_OP_Unsqueeze:
		if (in[0]->nbytes != y->nbytes)
			return -1;
		memcpy(y->data, in[0]->data, y->nbytes);
		return 0;
	case OX_OP_Transpose:
	case OX_OP_Slice:
	case OX_OP_Expand:
	case OX_OP_Tile:
	case OX_OP_Pad:
		return eval_plan(g, n, in, out, es);
	case OX_OP_Concat: {
		const ox_shape *ys = &y->shape;
		int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), ys->rank);
		int64_t outer = prod(ys, 0, axis), row = prod(ys, axis, ys->rank) * (int64_t)es, at = 0;
		for (int k = 0; k < n->nin; k++) {
			if (!in[k])
				continue;
			int64_t blk = prod(&in[k]->shape, axis, ys->rank) * (int64_t)es;
			for (int64_t o = 0; o < outer && blk; o++)
				memcpy((unsigned char *)y->data + o * row + at,
				       (unsigned char *)in[k]->data + o * blk, (size_t)blk);
			at += blk;
		}
		return 0;
	}
	case OX_OP_Split: {
		int axis;
		static ox_dim sizes[4096];
		if (n->nout > 4096 || ox_ir_data_split(g, n, &axis, sizes) != 0)
			return -1;
		const ox_shape *xs = &in[0]->shape;
		int64_t outer = prod(xs, 0, axis), inner = prod(xs, axis + 1, xs->rank) * (int64_t)es;
		int64_t row = xs->d[axis] * inner, at = 0;
		for (int k = 0; k < n->nout; k++) {
			int64_t blk = sizes[k] * inner;
			for (int64_t o = 0; out[k] && o < outer && blk; o++)
				memcpy((unsigned char *)out[k]->data + o * blk,
				       (unsigned char *)in[0]->data + o * row + at, (size_t)blk);
			at += blk;
		}
		return 0;
	}
	case OX_OP_Gather: {
		const ox_shape *xs = &in[0]->shape;
		int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), xs->rank);
		int64_t outer = prod(xs, 0, axis), d = xs->d[axis];
		int64_t inner = prod(xs, axis + 1, xs->rank) * (int64_t)es, m = ox_tensor_numel(in[1]);
		for (int64_t j = 0; j < m; j++) {
			int64_t k = ox_tensor_get_i64(in[1], j);
			if (k < 0)
				k += d;
			if (k < 0 || k >= d)
				return -1;
			for (int64_t o = 0; o < outer && inner; o++)
				memcpy((unsigned char *)y->data + (o * m + j) * inner,
				       (unsigned char *)in[0]->data + (o * d + k) * inner, (size_t)inner);
		}
		return 0;
	}
	case OX_OP_Shape: {
		/* the output length was clamped by infer; its start is recomputed */
		const ox_shape *xs = &in[0]->shape;
		int64_t s = n->opset >= 15 ? ox_attr_int(n, "start", 0) : 0;
		if (s < 0)
			s += xs->rank;
		if (s < 0)
			s = 0;
		for (int64_t i = 0; i < y->shape.d[0]; i++)
			ox_tensor_set_i64(y, i, xs->d[s + i]);
		return 0;
	}
	case OX_OP_Size:
		ox_tensor_set_i64(y, 0, ox_shape_numel(&in[0]->shape));
		return 0;
	case OX_OP_ConstantOfShape: {
		const ox_attr *a = ox_attr_get(n, "value");
		unsigned char zero[16] = {0};
		fill(y, a ? a->t->data : zero, es);
		return 0;
	}
	case OX_OP_Range:
		return eval_range(in, y);
	}
	return -1;
}
