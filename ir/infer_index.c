/* infer_index.c: shape inference for indexing, scatter/gather, cumulative,
 * TopK, OneHot, Compress, NonZero, NonMaxSuppression, Unique, EyeLike,
 * depth/space shuffles, the two loss ops and TensorScatter (the KV-cache
 * update).
 *
 * Every dim may be a run-time dim (docs/dynamic.md). A relation between
 * dims that the op requires (ScatterND's updates, a loss's target) is
 * checked here when the dims are constants, and by the emitted code
 * (returning _ERR_SHAPE) when one is known only at run time.
 *
 * Inputs that steer an output's shape are read with ox_in_svals: a
 * constant or a symbolic value fixes the dim, anything else is read when
 * the program runs and the dim is a data symbol (ox_dim_data) with the
 * tightest bound the op gives: TopK's k at most the axis, Compress's count
 * at most the axis and the condition, NonZero's count at most the element
 * count, NonMaxSuppression's at most batches x classes x boxes (per class
 * at most max_output_boxes_per_class when that is known), Unique's at most
 * the slices; OneHot's depth has none (-1: the bounds pass asks for --max).
 * CumSum's axis read at run time leaves the shape as it is; the kernel
 * computes its strides then. Inputs that only steer values (Trilu's k,
 * ReverseSequence's lengths, the scatter/gather indices) are read at run
 * time by the emitted code. ox_index_axis and ox_index_count are shared
 * with eval_index.c and emit_index.c so the three layers cannot disagree.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

/* the axis a node works along, normalised against input 0's rank; CumSum
 * and CumProd take it from their input 1: -1 when that is known only at
 * run time (the emitted code reads and checks it), the rest from "axis" */
int ox_index_axis(ox_graph *g, ox_node *n, int *axis)
{
	int rank = ox_in(g, n, 0)->shape.rank;
	int64_t a;
	if (n->op == OX_OP_CumSum || n->op == OX_OP_CumProd) {
		ox_sv sv;
		if (ox_in_ints(g, n, 1, &a, 1) == 1) {
			/* a constant */
		} else if (ox_in_svals(g, n, 1, &sv, 1) == 1 && sv.kind == OX_SV_CONST) {
			a = sv.c;
		} else {
			const ox_value *v = ox_in(g, n, 1);
			if (ox_in_const(g, n, 1) || v->shape.rank > 1 || ox_shape_numel(&v->shape) != 1)
				return ox_error(g, n, "axis input '%s' must have one element", v->name);
			if (v->dtype != OX_I64 && v->dtype != OX_I32)
				return ox_error(g, n, "axis input '%s' must be int32 or int64, not %s", v->name,
						ox_dtype_name(v->dtype));
			*axis = -1;
			return 0;
		}
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

/* can a <= b hold? (likewise) */
static int may_le(const ox_graph *g, ox_dim a, ox_dim b)
{
	int64_t alo, ahi, blo, bhi;
	if (a == b)
		return 1;
	if (ox_dim_range(g, a, &alo, &ahi) || ox_dim_range(g, b, &blo, &bhi))
		return 1;
	return bhi < 0 || alo <= bhi;
}

/* the first output present: a data symbol of a node's outputs is named
 * after it (ox_dim_data) */
static ox_id first_out(const ox_node *n)
{
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0)
			return n->out[k];
	return -1;
}

static int infer_gathernd(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1);
	int64_t b = ox_attr_int(n, "batch_dims", 0);
	int r = x->shape.rank, q = ix->shape.rank;
	if (q < 1 || b < 0 || b >= q || b >= r)
		return ox_error(g, n, "batch_dims %lld does not fit ranks %d and %d", (long long)b, r, q);
	int64_t last = ox_dim_eval(g, ix->shape.d[q - 1]);
	if (last < 0 || b + last > r)
		return ox_error(g, n, "indices' last dim must be a constant <= %lld", (long long)(r - b));
	for (int k = 0; k < b; k++)
		if (!ox_dim_may_equal(g, x->shape.d[k], ix->shape.d[k]))
			return ox_error(g, n, "batch dim %d differs between data and indices", k);
	if (n->op == OX_OP_ScatterND) {
		/* updates: indices' shape without its last dim, then data's shape
		 * past the indexed dims */
		const ox_value *u = ox_in(g, n, 2);
		int ur = q - 1 + r - (int)last;
		if (u->shape.rank != ur)
			return ox_error(g, n, "updates must have rank %d", ur);
		for (int k = 0; k < ur; k++)
			if (!ox_dim_may_equal(g, u->shape.d[k], k < q - 1 ? ix->shape.d[k] : x->shape.d[k - (q - 1) + last]))
				return ox_error(g, n, "updates dim %d does not match indices and data", k);
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	}
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

/* TopK: k from the attribute (opset < 10) or input 1, a constant or a
 * symbolic value; else read when the program runs: the output's axis is
 * then a data symbol, at most the input's axis (the node checks 0 <= k <=
 * axis) */
static int infer_topk(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int axis, known = 1;
	int64_t c = -1;
	ox_dim k;
	ox_sv sv;
	if (ox_index_axis(g, n, &axis))
		return -1;
	ox_dim len = x->shape.d[axis];
	if (n->opset < 10)
		c = ox_attr_int(n, "k", -1);
	else if (ox_in_ints(g, n, 1, &c, 1) == 1)
		;
	else if (ox_in_svals(g, n, 1, &sv, 1) == 1 && sv.kind == OX_SV_CONST)
		c = sv.c;
	else
		known = 0;
	if (known) {
		int64_t l = ox_dim_eval(g, len);
		if (c < 0 || (l >= 0 && c > l))
			return ox_error(g, n, "k = %lld is out of range for an axis of %lld", (long long)c, (long long)l);
		k = c;
	} else if (ox_in_svals(g, n, 1, &sv, 1) == 1 && sv.kind == OX_SV_DIM) {
		k = sv.d;
	} else {
		const ox_value *v = ox_in(g, n, 1);
		if (!v || ox_in_const(g, n, 1) || v->shape.rank > 1 || ox_shape_numel(&v->shape) != 1)
			return ox_error(g, n, "k must have one element");
		if (v->dtype != OX_I64)
			return ox_error(g, n, "k must be int64, not %s", ox_dtype_name(v->dtype));
		k = ox_dim_data(g, first_out(n), axis, ox_dim_hi(g, len));
	}
	/* with a run-time k or axis the node checks k <= axis */
	if (!may_le(g, k, len)) {
		char a[64], b[64];
		ox_dim_str(g, k, a, sizeof a);
		ox_dim_str(g, len, b, sizeof b);
		return ox_error(g, n, "k = %s is more than the axis (%s) can be", a, b);
	}
	ox_shape s = x->shape;
	s.d[axis] = k;
	ox_set_out(g, n, 0, x->dtype, &s);
	ox_set_out(g, n, 1, OX_I64, &s);
	return 0;
}

/* OneHot: depth a constant (of any numeric type) or a symbolic value; else
 * read when the program runs: the output's axis is then a data symbol the
 * op gives no bound for (the bounds pass asks for --max) */
static int infer_onehot(ox_graph *g, ox_node *n)
{
	const ox_value *ix = ox_in(g, n, 0), *dv = ox_in(g, n, 1), *vals = ox_in(g, n, 2);
	const ox_tensor *dt = ox_in_const(g, n, 1);
	int axis;
	ox_sv sv;
	if (dt ? ox_tensor_numel(dt) != 1 : dv->shape.rank > 1 || ox_shape_numel(&dv->shape) != 1)
		return ox_error(g, n, "depth must have one element");
	if (ix->shape.rank + 1 > OX_MAX_RANK)
		return ox_error(g, n, "output rank is too big");
	if (ox_index_axis(g, n, &axis))
		return -1;
	if (!ox_dim_may_equal(g, ox_shape_numel_dim(g, &vals->shape), 2))
		return ox_error(g, n, "values must have two elements (off_value, on_value)");
	int svk = dt ? -1 : ox_in_svals(g, n, 1, &sv, 1) == 1 ? sv.kind : OX_SV_UNKNOWN;
	ox_dim depth;
	if (dt || svk == OX_SV_CONST) {
		int64_t d = dt ? (int64_t)ox_tensor_get_f64(dt, 0) : sv.c;
		if (d < 0)
			return ox_error(g, n, "depth %lld is negative", (long long)d);
		depth = d;
	} else if (svk == OX_SV_DIM) {
		depth = sv.d;
	} else {
		depth = ox_dim_data(g, first_out(n), axis, -1);
	}
	ox_shape s = {.rank = ix->shape.rank + 1};
	for (int k = 0, j = 0; k < s.rank; k++)
		s.d[k] = k == axis ? depth : ix->shape.d[j++];
	ox_set_out(g, n, 0, vals->dtype, &s);
	return 0;
}

/* Compress: a constant condition fixes the size when the positions it
 * counts do not depend on a run-time axis; otherwise the count is a data
 * symbol, at most the axis (the element count without one) and the
 * condition's length */
static int infer_compress(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *cv = ox_in(g, n, 1);
	const ox_tensor *c = ox_in_const(g, n, 1);
	if (cv->shape.rank != 1)
		return ox_error(g, n, "condition must be a 1-D tensor");
	ox_shape s = x->shape;
	int axis = 0;
	ox_dim len;
	if (ox_attr_get(n, "axis")) {
		if (ox_index_axis(g, n, &axis))
			return -1;
		len = x->shape.d[axis];
	} else {
		len = ox_shape_numel_dim(g, &x->shape);
		s.rank = 1;
	}
	int64_t lo, hi;
	if (ox_dim_range(g, len, &lo, &hi))
		lo = 0, hi = -1;
	if (c && ox_index_count(c, lo) == ox_index_count(c, hi)) {
		s.d[axis] = ox_index_count(c, lo);
	} else {
		int64_t ch = ox_dim_hi(g, cv->shape.d[0]);
		s.d[axis] = ox_dim_data(g, first_out(n), axis, hi < 0 ? ch : ch < 0 || hi < ch ? hi : ch);
	}
	ox_set_out(g, n, 0, x->dtype, &s);
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
	for (int k = 0; k < t->shape.rank; k++)
		if (!ox_dim_may_equal(g, t->shape.d[k], x->shape.d[k ? k + 1 : 0]))
			return ox_error(g, n, "target dim %d differs from the input's", k);
	if (w && !ox_dim_may_equal(g, w->shape.d[0], x->shape.d[1]))
		return ox_error(g, n, "weight must have one element per class");
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
		/* a run-time dim that is no multiple: the node returns _ERR_SHAPE */
		if (ox_dim_eval(g, x->shape.d[1]) >= 0 && ox_dim_eval(g, x->shape.d[1]) % bb)
			return ox_error(g, n, "channels are not a multiple of blocksize^2");
		s.d[1] = ox_dim_div(g, x->shape.d[1], bb);
		s.d[2] = ox_dim_mul(g, x->shape.d[2], b);
		s.d[3] = ox_dim_mul(g, x->shape.d[3], b);
	} else {
		for (int k = 2; k < 4; k++)
			if (ox_dim_eval(g, x->shape.d[k]) >= 0 && ox_dim_eval(g, x->shape.d[k]) % b)
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
	/* run-time dims: the node checks these */
	for (int k = 0; k < x->shape.rank; k++) {
		ox_dim a = x->shape.d[k], b = u->shape.d[k];
		if (k != axis && !ox_dim_may_equal(g, a, b))
			return ox_error(g, n, "update differs from past_cache on axis %d", k);
		if (k == axis && !may_le(g, b, a))
			return ox_error(g, n, "update has %lld steps, more than the cache's %lld", (long long)b,
					(long long)a);
	}
	if (wi && (wi->shape.rank != 1 || !ox_dim_may_equal(g, wi->shape.d[0], x->shape.d[0])))
		return ox_error(g, n, "write_indices must be a vector of the batch size");
	if (need_int(g, n, 2, "write_indices"))
		return -1;
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

/* NonMaxSuppression (opsets 10, 11): selected_indices [num, 3] of int64
 * (batch, class, box), num a data symbol at most B * C * min(max_output_
 * boxes_per_class, N) (that input's value when known, else N). The
 * thresholds are read at run time. Scratch: the sort order and its merge
 * buffer (2 * N) and the boxes kept for one class, at their most (the CUDA
 * kernels' may be more: opt/pack.c grows it). */
static int infer_nms(ox_graph *g, ox_node *n)
{
	const ox_value *bx = ox_in(g, n, 0), *sc = ox_in(g, n, 1);
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
	if (bx->shape.rank != 3 || sc->shape.rank != 3)
		return ox_error(g, n, "boxes and scores must be rank 3");
	ox_dim B = bx->shape.d[0], N = bx->shape.d[1], C = sc->shape.d[1];
	/* run-time dims: the node checks these */
	if (!ox_dim_may_equal(g, bx->shape.d[2], 4) || !ox_dim_may_equal(g, sc->shape.d[0], B) || !ox_dim_may_equal(g, sc->shape.d[2], N))
		return ox_error(g, n, "boxes must be [B, N, 4] and scores [B, C, N]");
	ox_dim per = N; /* at most this many per class */
	if (ox_in(g, n, 2)) {
		const ox_tensor *t = ox_in_const(g, n, 2);
		const ox_value *v = ox_in(g, n, 2);
		if (t ? ox_tensor_numel(t) != 1 : v->shape.rank > 1 || ox_shape_numel(&v->shape) != 1)
			return ox_error(g, n, "max_output_boxes_per_class must have one element");
		if (t) {
			int64_t maxout = ox_tensor_get_i64(t, 0);
			if (maxout < 0)
				maxout = 0; /* as onnxruntime: a negative count selects nothing */
			per = ox_dim_op(g, OX_DE_MIN, maxout, N);
		} else if (v->dtype != OX_I64) {
			return ox_error(g, n, "max_output_boxes_per_class must be int64, not %s", ox_dtype_name(v->dtype));
		}
	} else {
		per = 0;
	}
	int64_t nh = ox_dim_hi(g, N), ph = ox_dim_hi(g, per);
	int64_t most = ox_dim_hi(g, ox_dim_mul(g, ox_dim_mul(g, B, C), per));
	if (nh < 0 || most < 0)
		return ox_error(g, n, "boxes and scores have no bound on their size; give one with --max");
	ox_shape s = {.rank = 2, .d = {most ? ox_dim_data(g, first_out(n), 0, most) : 0, 3}};
	ox_set_out(g, n, 0, OX_I64, &s);
	int64_t bytes = (2 * nh + ph) * 8;
	ox_ir_add_scratch(g, n, bytes);
	return 0;
}

/* Unique (opset 11): outputs Y, indices, inverse_indices, counts, each
 * optional. u, the number of unique elements (slices along axis), is a
 * data symbol at most the count L of elements (slices): Y's axis (or its
 * only axis), indices and counts have u entries, inverse_indices L.
 * Scratch: 6 * L int64 at its most (templates/unique.c). */
static int infer_unique(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int nout = n->nout - n->scratch, axis = 0;
	if (x->dtype == OX_STRING || x->dtype == OX_C64 || x->dtype == OX_C128 || x->dtype > OX_BF16)
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	ox_shape ys = x->shape;
	ox_dim L;
	if (ox_attr_get(n, "axis")) {
		int64_t a = ox_attr_int(n, "axis", 0);
		axis = ox_norm_axis(a, x->shape.rank);
		if (axis < 0)
			return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, x->shape.rank);
		L = x->shape.d[axis];
	} else {
		L = ox_shape_numel_dim(g, &x->shape);
		ys.rank = 1;
	}
	int64_t lh = ox_dim_hi(g, L);
	if (lh < 0)
		return ox_error(g, n, "the input has no bound on its size; give one with --max");
	/* u is named after the first output that has it */
	ox_id def = -1;
	for (int k = 0; k < nout && def < 0; k++)
		if (k != 2 && n->out[k] >= 0)
			def = n->out[k];
	ox_dim u = lh && def >= 0 ? ox_dim_data(g, def, def == n->out[0] ? axis : 0, lh) : 0;
	ys.d[axis] = u;
	ox_shape us = {.rank = 1, .d = {u}}, ls = {.rank = 1, .d = {L}};
	for (int k = 0; k < nout; k++)
		ox_set_out(g, n, k, k ? OX_I64 : x->dtype, k == 0 ? &ys : k == 2 ? &ls : &us);
	ox_ir_add_scratch(g, n, 6 * lh * 8);
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
	case OX_OP_GatherElements:
	case OX_OP_Scatter:
	case OX_OP_ScatterElements: {
		/* the indices (and updates) address the data along axis; on the
		 * other axes they are at most the data's (run-time dims: the node
		 * checks) */
		const ox_value *ix = ox_in(g, n, 1), *u = ox_in(g, n, 2);
		if (ix->shape.rank != x->shape.rank)
			return ox_error(g, n, "indices must have the data's rank");
		if (ox_index_axis(g, n, &axis) || need_int(g, n, 1, "indices"))
			return -1;
		for (int k = 0; k < x->shape.rank; k++)
			if (k != axis && !may_le(g, ix->shape.d[k], x->shape.d[k]))
				return ox_error(g, n, "indices dim %d is larger than the data's", k);
		if (n->op == OX_OP_GatherElements) {
			ox_set_out(g, n, 0, x->dtype, &ix->shape);
			return 0;
		}
		if (u->shape.rank != ix->shape.rank)
			return ox_error(g, n, "updates must have the shape of indices");
		for (int k = 0; k < ix->shape.rank; k++)
			if (!ox_dim_may_equal(g, u->shape.d[k], ix->shape.d[k]))
				return ox_error(g, n, "updates must have the shape of indices");
	}
		/* fall through */
	case OX_OP_ScatterND:
	case OX_OP_GatherND: {
		const char *red = ox_attr_str(n, "reduction", "none");
		if (n->op != OX_OP_GatherND && strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") &&
		    strcmp(red, "max") && strcmp(red, "min"))
			return ox_error(g, n, "reduction '%s' is not supported", red);
		if (need_int(g, n, 1, "indices"))
			return -1;
		if (n->op == OX_OP_GatherND || n->op == OX_OP_ScatterND)
			return infer_gathernd(g, n);
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
		/* [rank, count]: of a constant, the count; else a data symbol, at
		 * most the element count */
		const ox_tensor *t = ox_in_const(g, n, 0);
		ox_shape s = {.rank = 2, .d = {x->shape.rank, 0}};
		if (t) {
			s.d[1] = ox_index_count(t, -1);
		} else {
			int64_t m = ox_dim_hi(g, ox_shape_numel_dim(g, &x->shape));
			s.d[1] = m ? ox_dim_data(g, n->out[0], 1, m) : 0;
		}
		ox_set_out(g, n, 0, OX_I64, &s);
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
		const ox_value *sl = ox_in(g, n, 1);
		if (sl->shape.rank != 1 || !ox_dim_may_equal(g, sl->shape.d[0], x->shape.d[ba]))
			return ox_error(g, n, "sequence_lens must have one element per batch");
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
