/* infer_index.c: shape inference for indexing, scatter/gather, cumulative,
 * TopK, OneHot, Compress, NonZero, NonMaxSuppression, Unique, EyeLike,
 * depth/space shuffles, the two loss ops and TensorScatter (the KV-cache
 * update). NonZero, NonMaxSuppression and Unique may have an output whose
 * extent along one axis is known only at run time (value->dyn, bounded).
 *
 * Inputs that steer an output's shape (TopK's k, OneHot's depth, Compress's
 * condition, NonZero's data, CumSum's axis) must be constants: when they
 * are graph inputs ox_need_const names them so --const can freeze them.
 * Inputs that only steer values (Trilu's k, ReverseSequence's lengths, the
 * scatter/gather indices) are read at run time by the emitted code.
 * ox_index_axis and ox_index_count are shared with eval_index.c and
 * emit_index.c so the three layers cannot disagree.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

/* the axis a node works along, normalised against input 0's rank; CumSum
 * and CumProd take it from a constant input, the rest from "axis" */
int ox_index_axis(ox_graph *g, ox_node *n, int *axis)
{
	int rank = ox_in(g, n, 0)->shape.rank;
	int64_t a;
	if (n->op == OX_OP_CumSum || n->op == OX_OP_CumProd) {
		if (ox_in_ints(g, n, 1, &a, 1) != 1)
			return ox_need_const(g, n, 1, "axis input '%s' is not a constant", ox_in(g, n, 1)->name);
	} else if (n->op == OX_OP_TensorScatter) {
		a = ox_attr_int(n, "axis", -2); /* the sequence axis */
	} else if (n->op == OX_OP_TopK || n->op == OX_OP_OneHot) {
		a = ox_attr_int(n, "axis", -1);
		if (n->op == OX_OP_OneHot)
			rank++; /* the axis counts in the output */
	} else {
		a = ox_attr_int(n, "axis", 0);
	}
	*axis = ox_norm_axis(a, rank);
	if (*axis < 0)
		return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, rank);
	return 0;
}

/* number of non-zero elements among the first `limit` of t (all if < 0) */
int64_t ox_index_count(const ox_tensor *t, int64_t limit)
{
	int64_t m = ox_tensor_numel(t), c = 0;
	if (limit >= 0 && limit < m)
		m = limit;
	for (int64_t i = 0; i < m; i++)
		c += ox_tensor_get_f64(t, i) != 0;
	return c;
}

static int need_int(ox_graph *g, ox_node *n, int k, const char *what)
{
	const ox_value *v = ox_in(g, n, k);
	if (v && v->dtype != OX_I64 && v->dtype != OX_I32)
		return ox_error(g, n, "%s must be int32 or int64, not %s", what, ox_dtype_name(v->dtype));
	return 0;
}

static int infer_gathernd(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1);
	int64_t b = ox_attr_int(n, "batch_dims", 0);
	int r = x->shape.rank, q = ix->shape.rank;
	if (q < 1 || b < 0 || b >= q || b >= r)
		return ox_error(g, n, "batch_dims %lld does not fit ranks %d and %d", (long long)b, r, q);
	int64_t last = ix->shape.d[q - 1];
	if (last < 0 || b + last > r)
		return ox_error(g, n, "indices' last dim must be a constant <= %lld", (long long)(r - b));
	ox_shape s = {0};
	for (int k = 0; k < q - 1; k++)
		s.d[s.rank++] = ix->shape.d[k];
	for (int64_t k = b + last; k < r; k++)
		s.d[s.rank++] = x->shape.d[k];
	if (s.rank > OX_MAX_RANK)
		return ox_error(g, n, "output rank %d is too big", s.rank);
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

static int infer_topk(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int axis;
	int64_t k;
	if (ox_index_axis(g, n, &axis))
		return -1;
	if (n->opset < 10)
		k = ox_attr_int(n, "k", -1);
	else if (ox_in_ints(g, n, 1, &k, 1) != 1)
		return ox_need_const(g, n, 1, "k input '%s' is not a constant", ox_in(g, n, 1)->name);
	int64_t len = ox_dim_eval(g, x->shape.d[axis]);
	if (k < 0 || (len >= 0 && k > len))
		return ox_error(g, n, "k = %lld is out of range for an axis of %lld", (long long)k, (long long)len);
	ox_shape s = x->shape;
	s.d[axis] = k;
	ox_set_out(g, n, 0, x->dtype, &s);
	ox_set_out(g, n, 1, OX_I64, &s);
	return 0;
}

static int infer_onehot(ox_graph *g, ox_node *n)
{
	const ox_value *ix = ox_in(g, n, 0), *vals = ox_in(g, n, 2);
	const ox_tensor *dt = ox_in_const(g, n, 1);
	int axis;
	if (!dt)
		return ox_need_const(g, n, 1, "depth input '%s' is not a constant", ox_in(g, n, 1)->name);
	if (ox_tensor_numel(dt) != 1)
		return ox_error(g, n, "depth must have one element");
	if (ix->shape.rank + 1 > OX_MAX_RANK)
		return ox_error(g, n, "output rank is too big");
	if (ox_index_axis(g, n, &axis))
		return -1;
	int64_t depth = (int64_t)ox_tensor_get_f64(dt, 0);
	if (depth < 0)
		return ox_error(g, n, "depth %lld is negative", (long long)depth);
	ox_shape s = {.rank = ix->shape.rank + 1};
	for (int k = 0, j = 0; k < s.rank; k++)
		s.d[k] = k == axis ? depth : ix->shape.d[j++];
	ox_set_out(g, n, 0, vals->dtype, &s);
	return 0;
}

static int infer_compress(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *cv = ox_in(g, n, 1);
	const ox_tensor *c = ox_in_const(g, n, 1);
	int64_t clen = ox_shape_numel(&cv->shape);
	if (cv->shape.rank != 1 || clen < 0)
		return ox_error(g, n, "condition must be a 1-D tensor of static length");
	ox_shape s = x->shape;
	int axis = 0;
	int64_t len;
	if (ox_attr_get(n, "axis")) {
		if (ox_index_axis(g, n, &axis))
			return -1;
		len = ox_dim_eval(g, x->shape.d[axis]);
		if (len < 0)
			return ox_error(g, n, "the compressed axis must have a constant size");
	} else {
		len = ox_shape_numel(&x->shape);
		if (len < 0)
			return ox_error(g, n, "the input must have a constant shape");
		s.rank = 1;
	}
	/* a constant condition fixes the size; otherwise it is known at run
	 * time, at most min(len, condition length) along the axis */
	s.d[axis] = c ? ox_index_count(c, len) : (clen < len ? clen : len);
	ox_set_out(g, n, 0, x->dtype, &s);
	ox_out(g, n, 0)->dyn = c ? 0 : axis + 1;
	return 0;
}

static int infer_loss(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *t = ox_in(g, n, 1), *w = ox_in(g, n, 2);
	const char *red = ox_attr_str(n, "reduction", "mean");
	if (x->shape.rank < 2 || t->shape.rank != x->shape.rank - 1)
		return ox_error(g, n, "input must be [N, C, d...] and target [N, d...]");
	if (w && w->shape.rank != 1)
		return ox_error(g, n, "weight must be 1-D");
	if (!ox_dtype_is_float(x->dtype) || x->dtype > OX_BF16)
		return ox_error(g, n, "input dtype %s is not supported", ox_dtype_name(x->dtype));
	if (need_int(g, n, 1, "target"))
		return -1;
	ox_shape s = {0};
	if (!strcmp(red, "none"))
		s = t->shape;
	else if (strcmp(red, "sum") && strcmp(red, "mean"))
		return ox_error(g, n, "reduction '%s' is not supported", red);
	ox_set_out(g, n, 0, x->dtype, &s);
	ox_set_out(g, n, 1, x->dtype, &x->shape);
	return 0;
}

static int infer_space(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int64_t b = ox_attr_int(n, "blocksize", 0);
	if (x->shape.rank != 4 || b < 1)
		return ox_error(g, n, "needs a rank-4 input and blocksize >= 1");
	ox_shape s = x->shape;
	ox_dim bb = b * b;
	if (n->op == OX_OP_DepthToSpace) {
		const char *mode = ox_attr_str(n, "mode", "DCR");
		if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
			return ox_error(g, n, "mode '%s' is not supported", mode);
		if (x->shape.d[1] >= 0 && x->shape.d[1] % bb)
			return ox_error(g, n, "channels are not a multiple of blocksize^2");
		s.d[1] = ox_dim_div(g, x->shape.d[1], bb);
		s.d[2] = ox_dim_mul(g, x->shape.d[2], b);
		s.d[3] = ox_dim_mul(g, x->shape.d[3], b);
	} else {
		for (int k = 2; k < 4; k++)
			if (x->shape.d[k] >= 0 && x->shape.d[k] % b)
				return ox_error(g, n, "spatial dims are not multiples of blocksize");
		s.d[1] = ox_dim_mul(g, x->shape.d[1], bb);
		s.d[2] = ox_dim_div(g, x->shape.d[2], b);
		s.d[3] = ox_dim_div(g, x->shape.d[3], b);
	}
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

/* TensorScatter (opset 24): update (B, ..., S, ...) is written into a copy
 * of past_cache (B, ..., max S, ...) along the sequence axis (not the
 * batch axis 0) at write_indices[b] (int64, default 0), wrapping in
 * "circular" mode. */
static int infer_tensorscatter(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *u = ox_in(g, n, 1), *wi = ox_in(g, n, 2);
	const char *mode = ox_attr_str(n, "mode", "linear");
	int axis;
	if (strcmp(mode, "linear") && strcmp(mode, "circular"))
		return ox_error(g, n, "mode '%s' is not 'linear' or 'circular'", mode);
	if (x->shape.rank < 2)
		return ox_error(g, n, "past_cache must have rank >= 2 (batch and sequence axes)");
	if (ox_index_axis(g, n, &axis))
		return -1;
	if (axis == 0)
		return ox_error(g, n, "axis is the batch axis 0");
	if (u->dtype != x->dtype)
		return ox_error(g, n, "update has dtype %s, past_cache has %s", ox_dtype_name(u->dtype),
				ox_dtype_name(x->dtype));
	if (u->shape.rank != x->shape.rank)
		return ox_error(g, n, "update must have past_cache's rank");
	for (int k = 0; k < x->shape.rank; k++) {
		ox_dim a = x->shape.d[k], b = u->shape.d[k];
		if (k != axis && a != b && a >= 0 && b >= 0)
			return ox_error(g, n, "update differs from past_cache on axis %d", k);
		if (k == axis && a >= 0 && b >= 0 && b > a)
			return ox_error(g, n, "update has %lld steps, more than the cache's %lld", (long long)b,
					(long long)a);
	}
	if (wi && (wi->shape.rank != 1 || (wi->shape.d[0] >= 0 && x->shape.d[0] >= 0 && wi->shape.d[0] != x->shape.d[0])))
		return ox_error(g, n, "write_indices must be a vector of the batch size");
	if (need_int(g, n, 2, "write_indices"))
		return -1;
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

/* NonMaxSuppression (opsets 10, 11): selected_indices [num, 3] of int64
 * (batch, class, box), num known only at run time and bounded by
 * B * C * min(max_output_boxes_per_class, N): the bound needs that input
 * as a constant. The thresholds are read at run time. Scratch: the sort
 * order and its merge buffer (2 * N) and the boxes kept for one class. */
static int infer_nms(ox_graph *g, ox_node *n)
{
	const ox_value *bx = ox_in(g, n, 0), *sc = ox_in(g, n, 1);
	int64_t maxout = 0;
	if (bx->dtype != OX_F32 && bx->dtype != OX_F16 && bx->dtype != OX_BF16 && bx->dtype != OX_F64)
		return ox_error(g, n, "boxes have dtype %s, expected a float type", ox_dtype_name(bx->dtype));
	if (sc->dtype != bx->dtype)
		return ox_error(g, n, "scores have dtype %s, boxes %s", ox_dtype_name(sc->dtype), ox_dtype_name(bx->dtype));
	for (int k = 3; k < 5; k++) {
		const ox_value *t = ox_in(g, n, k);
		if (t && (t->dtype != OX_F32 || ox_shape_numel(&t->shape) != 1))
			return ox_error(g, n, "input %d must be one float, not %s with %lld elements", k,
					ox_dtype_name(t->dtype), (long long)ox_shape_numel(&t->shape));
	}
	if (bx->shape.rank != 3 || sc->shape.rank != 3 || !ox_shape_is_const(&bx->shape) ||
	    !ox_shape_is_const(&sc->shape))
		return ox_error(g, n, "boxes and scores must be rank 3 with static shapes");
	int64_t B = bx->shape.d[0], N = bx->shape.d[1], C = sc->shape.d[1];
	if (bx->shape.d[2] != 4 || sc->shape.d[0] != B || sc->shape.d[2] != N)
		return ox_error(g, n, "boxes must be [B, N, 4] and scores [B, C, N]");
	if (ox_in(g, n, 2)) {
		const ox_tensor *t = ox_in_const(g, n, 2);
		if (!t)
			return ox_need_const(g, n, 2, "max_output_boxes_per_class input '%s' is not a constant "
					     "(it bounds the output size)", ox_in(g, n, 2)->name);
		if (ox_tensor_numel(t) != 1)
			return ox_error(g, n, "max_output_boxes_per_class must have one element");
		maxout = ox_tensor_get_i64(t, 0);
	}
	if (maxout < 0)
		maxout = 0; /* as onnxruntime: a negative count selects nothing */
	if (maxout > N)
		maxout = N;
	ox_shape s = {.rank = 2, .d = {B * C * maxout, 3}};
	ox_set_out(g, n, 0, OX_I64, &s);
	ox_out(g, n, 0)->dyn = 1;
	ox_ir_add_scratch(g, n, (2 * N + maxout) * 8);
	return 0;
}

/* Unique (opset 11): outputs Y, indices, inverse_indices, counts, each
 * optional. u, the number of unique elements (slices along axis), is
 * known only at run time: Y (along axis, or its only axis), indices and
 * counts are bounded by the count L of elements (slices); inverse_indices
 * has L entries. Scratch: 6 * L int64 (templates/unique.c). */
static int infer_unique(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int nout = n->nout - n->scratch, axis = 0;
	if (!ox_shape_is_const(&x->shape))
		return ox_error(g, n, "the input's shape must be static");
	if (x->dtype == OX_STRING || x->dtype == OX_C64 || x->dtype == OX_C128 || x->dtype > OX_BF16)
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	ox_shape ys = x->shape;
	int64_t L;
	if (ox_attr_get(n, "axis")) {
		int64_t a = ox_attr_int(n, "axis", 0);
		axis = ox_norm_axis(a, x->shape.rank);
		if (axis < 0)
			return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, x->shape.rank);
		L = x->shape.d[axis];
	} else {
		L = ox_shape_numel(&x->shape);
		ys.rank = 1;
		ys.d[0] = L;
	}
	ox_shape vs = {.rank = 1, .d = {L}};
	for (int k = 0; k < nout; k++) {
		ox_set_out(g, n, k, k ? OX_I64 : x->dtype, k ? &vs : &ys);
		if (ox_out(g, n, k))
			ox_out(g, n, k)->dyn = k == 0 ? 1 + axis : k == 2 ? 0 : 1;
	}
	ox_ir_add_scratch(g, n, 6 * L * 8);
	return 0;
}

int infer_index(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int axis;
	/* every emitter indexes flat arrays of fixed-size elements */
	for (int k = 0; k < n->nin; k++) {
		const ox_value *v = ox_in(g, n, k);
		if (v && (!ox_dtype_size(v->dtype) || v->dtype == OX_STRING || v->dtype == OX_C64 || v->dtype == OX_C128))
			return ox_error(g, n, "input %d has dtype %s, which is not supported", k, ox_dtype_name(v->dtype));
	}
	switch (n->op) {
	case OX_OP_GatherElements: {
		const ox_value *ix = ox_in(g, n, 1);
		if (ix->shape.rank != x->shape.rank)
			return ox_error(g, n, "indices must have the data's rank");
		if (ox_index_axis(g, n, &axis) || need_int(g, n, 1, "indices"))
			return -1;
		ox_set_out(g, n, 0, x->dtype, &ix->shape);
		return 0;
	}
	case OX_OP_GatherND:
		if (need_int(g, n, 1, "indices"))
			return -1;
		return infer_gathernd(g, n);
	case OX_OP_Scatter:
	case OX_OP_ScatterElements:
		if (ox_in(g, n, 1)->shape.rank != x->shape.rank)
			return ox_error(g, n, "indices must have the data's rank");
		if (ox_index_axis(g, n, &axis) || need_int(g, n, 1, "indices"))
			return -1;
		/* fall through */
	case OX_OP_ScatterND: {
		const char *red = ox_attr_str(n, "reduction", "none");
		if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") &&
		    strcmp(red, "min"))
			return ox_error(g, n, "reduction '%s' is not supported", red);
		if (need_int(g, n, 1, "indices"))
			return -1;
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	}
	case OX_OP_Trilu:
		if (x->shape.rank < 2)
			return ox_error(g, n, "input must have rank >= 2");
		if (need_int(g, n, 1, "k"))
			return -1;
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	case OX_OP_CumSum:
	case OX_OP_CumProd:
		if (ox_index_axis(g, n, &axis))
			return -1;
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	case OX_OP_TopK:
		return infer_topk(g, n);
	case OX_OP_OneHot:
		return infer_onehot(g, n);
	case OX_OP_Compress:
		return infer_compress(g, n);
	case OX_OP_NonZero: {
		const ox_tensor *t = ox_in_const(g, n, 0);
		if (!t) {
			/* data-dependent count: bounded by the element count, reported at run time */
			int64_t m = ox_shape_numel(&x->shape);
			if (m < 0)
				return ox_error(g, n, "the input's shape must be static");
			ox_shape s = {.rank = 2, .d = {x->shape.rank, m}};
			ox_set_out(g, n, 0, OX_I64, &s);
			ox_out(g, n, 0)->dyn = 2;
			return 0;
		}
		ox_shape s = {.rank = 2, .d = {x->shape.rank, ox_index_count(t, -1)}};
		ox_set_out(g, n, 0, OX_I64, &s);
		ox_out(g, n, 0)->dyn = 0;
		return 0;
	}
	case OX_OP_NonMaxSuppression:
		return infer_nms(g, n);
	case OX_OP_Unique:
		return infer_unique(g, n);
	case OX_OP_EyeLike: {
		int dt = (int)ox_attr_int(n, "dtype", x->dtype);
		if (x->shape.rank != 2)
			return ox_error(g, n, "input must be 2-D");
		if (!ox_dtype_size(dt) || dt == OX_STRING || dt == OX_C64 || dt == OX_C128 || dt > OX_BF16)
			return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(dt));
		ox_set_out(g, n, 0, dt, &x->shape);
		return 0;
	}
	case OX_OP_DepthToSpace:
	case OX_OP_SpaceToDepth:
		return infer_space(g, n);
	case OX_OP_ReverseSequence: {
		int64_t ta = ox_attr_int(n, "time_axis", 0), ba = ox_attr_int(n, "batch_axis", 1);
		if (x->shape.rank < 2 || (ta != 0 && ta != 1) || ba + ta != 1)
			return ox_error(g, n, "time_axis and batch_axis must be 0 and 1 of a rank >= 2 input");
		if (need_int(g, n, 1, "sequence_lens"))
			return -1;
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	}
	case OX_OP_Shrink:
		if (!ox_dtype_is_int(x->dtype) && x->dtype != OX_F32 && x->dtype != OX_F64 && x->dtype != OX_F16 &&
		    x->dtype != OX_BF16)
			return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	case OX_OP_NegativeLogLikelihoodLoss:
	case OX_OP_SoftmaxCrossEntropyLoss:
		return infer_loss(g, n);
	case OX_OP_TensorScatter:
		return infer_tensorscatter(g, n);
	}
	return ox_error(g, n, "no shape inference for this op");
}
