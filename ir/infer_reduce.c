/* infer_reduce.c: shape inference for reductions, the softmax family and
 * LayerNormalization.
 *
 * ox_reduce_axes is the one place that decides which axes a Reduce* node
 * reduces (attribute before the opset that moved axes to an input, input
 * from then on, noop_with_empty_axes); eval_reduce.c and emit_reduce.c call
 * it too, so the three layers cannot disagree. An axes input known only
 * when the program runs (docs/dynamic.md) makes the output's dims data
 * symbols that the node computes: with keepdims each is 1 or the input's
 * dim, without it the rank is the input's less the axes tensor's length,
 * which must be a constant. Softmax-family and LayerNormalization outputs
 * keep the input's shape; LayerNormalization's Mean and InvStdDev keep the
 * normalized dims as 1.
 */
#include "ir.h"
#include "family.h"


/* The opset where `axes` became an input: 13 for ReduceSum, 18 for the rest. */
static int axes_is_input(const ox_node *n)
{
	return n->opset >= (n->op == OX_OP_ReduceSum ? 13 : 18);
}

/* Fill mask[0..rank) with 1 for each reduced axis of input 0. An empty axes
 * list reduces everything unless noop_with_empty_axes is set, in which case
 * the mask stays all zero: each output element then "reduces" exactly one
 * input element, which is what the spec asks (ReduceSumSquare acts as a
 * vanilla Square). Returns 0, 1 when the axes are an input read only when
 * the program runs (neither a constant nor a symbolic value of constants:
 * mask is not filled), or ox_error. */
int ox_reduce_axes(ox_graph *g, ox_node *n, int *mask)
{
	const ox_value *x = ox_in(g, n, 0);
	int rank = x->shape.rank;
	int64_t axes[OX_MAX_RANK + 1];
	int naxes = 0, noop = 0;
	if (axes_is_input(n)) {
		noop = (int)ox_attr_int(n, "noop_with_empty_axes", 0);
		const ox_value *a = ox_in(g, n, 1);
		if (a) {
			if (a->shape.rank != 1)
				return ox_error(g, n, "axes input '%s' must be 1-D", a->name);
			int64_t len = ox_dim_eval(g, a->shape.d[0]);
			if (len > rank)
				return ox_error(g, n, "%lld axes for a rank-%d input",
				                (long long)len, rank);
			if (!ox_dtype_is_int(a->dtype))
				return ox_error(g, n, "axes input '%s' has dtype %s, expected an integer type",
				                a->name, ox_dtype_name(a->dtype));
			/* an empty axes input needs no data: its shape says it all */
			if (len != 0) {
				ox_sv sv[OX_MAX_RANK + 1];
				naxes = ox_in_svals(g, n, 1, sv, OX_MAX_RANK + 1);
				for (int i = 0; i < naxes; i++) {
					if (sv[i].kind != OX_SV_CONST)
						return 1;
					axes[i] = sv[i].c;
				}
				if (naxes < 0)
					return 1;
			}
		}
	} else {
		const int64_t *v;
		naxes = ox_attr_ints(n, "axes", &v);
		if (naxes > rank)
			return ox_error(g, n, "%d axes for a rank-%d input", naxes, rank);
		for (int i = 0; i < naxes; i++)
			axes[i] = v[i];
	}
	for (int i = 0; i < rank; i++)
		mask[i] = naxes <= 0 && !noop;
	for (int i = 0; i < naxes; i++) {
		int ax = ox_norm_axis(axes[i], rank);
		if (ax < 0)
			return ox_error(g, n, "axis %lld is out of range for rank %d",
			                (long long)axes[i], rank);
		if (mask[ax])
			return ox_error(g, n, "axis %lld is repeated", (long long)axes[i]);
		mask[ax] = 1;
	}
	return 0;
}

static int reduce_dtype_ok(const ox_node *n, int dt)
{
	if (dt == OX_BOOL) /* bool was added to ReduceMax/Min only (opset 20) */
		return n->op == OX_OP_ReduceMax || n->op == OX_OP_ReduceMin;
	return ox_dtype_is_int(dt) || dt == OX_F32 || dt == OX_F64 || dt == OX_F16 ||
	       dt == OX_BF16;
}

/* The output of a reduction over axes read from data: with keepdims each
 * dim is 1 (reduced) or the input's (kept), at most the larger; without,
 * the kept dims in order, the j-th one of input dims j..j+naxes. The node
 * checks the axes and computes these (codegen/c/emit_reduce.c). */
static int infer_reduce_rt(ox_graph *g, ox_node *n, const ox_value *x, int keep)
{
	const ox_value *a = ox_in(g, n, 1);
	int rank = x->shape.rank;
	ox_shape s = {0, {0}};
	if (keep) {
		s.rank = rank;
		for (int i = 0; i < rank; i++) {
			int64_t hi = ox_dim_hi(g, x->shape.d[i]);
			s.d[i] = x->shape.d[i] == 1 ? 1 : ox_dim_data(g, n->out[0], i, hi < 0 ? -1 : hi > 1 ? hi : 1);
		}
	} else {
		int64_t len = ox_dim_eval(g, a->shape.d[0]);
		if (len < 0)
			return ox_error(g, n, "axes input '%s' has a length known only at run time: with "
			                "keepdims=0 the output's rank depends on it", a->name);
		s.rank = rank - (int)len;
		for (int j = 0; j < s.rank; j++) {
			int64_t hi = 0, one = 1;
			for (int i = j; i <= j + len && hi >= 0; i++) {
				int64_t h = ox_dim_hi(g, x->shape.d[i]);
				hi = h < 0 ? -1 : h > hi ? h : hi;
				one &= x->shape.d[i] == 1;
			}
			s.d[j] = one ? 1 : ox_dim_data(g, n->out[0], j, hi);
		}
	}
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

int infer_reduce(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	if (!reduce_dtype_ok(n, x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	int mask[OX_MAX_RANK], rc = ox_reduce_axes(g, n, mask);
	if (rc == 1)
		return infer_reduce_rt(g, n, x, ox_attr_int(n, "keepdims", 1) != 0);
	if (rc)
		return -1;
	int keep = ox_attr_int(n, "keepdims", 1) != 0;
	ox_shape s = {0, {0}};
	for (int i = 0; i < x->shape.rank; i++) {
		if (!mask[i])
			s.d[s.rank++] = x->shape.d[i];
		else if (keep)
			s.d[s.rank++] = 1;
	}
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

int infer_argreduce(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	if (!ox_dtype_is_int(x->dtype) && x->dtype != OX_F32 && x->dtype != OX_F64 &&
	    x->dtype != OX_F16 && x->dtype != OX_BF16)
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	int64_t a = ox_attr_int(n, "axis", 0);
	int ax = ox_norm_axis(a, x->shape.rank);
	if (ax < 0)
		return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a,
		                x->shape.rank);
	if (ox_dim_eval(g, x->shape.d[ax]) == 0)
		return ox_error(g, n, "axis %d has size 0: no element to pick", ax);
	int keep = ox_attr_int(n, "keepdims", 1) != 0;
	ox_shape s = {0, {0}};
	for (int i = 0; i < x->shape.rank; i++) {
		if (i != ax)
			s.d[s.rank++] = x->shape.d[i];
		else if (keep)
			s.d[s.rank++] = 1;
	}
	ox_set_out(g, n, 0, OX_I64, &s);
	return 0;
}

/* Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D
 * at `axis` (default 1), and axis == rank is legal (an empty trailing
 * product); from 13 on the op works along one axis (default -1). */
int infer_softmax(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	if (x->dtype != OX_F32 && x->dtype != OX_F64 && x->dtype != OX_F16 && x->dtype != OX_BF16)
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	int rank = x->shape.rank;
	int legacy = n->opset < 13;
	int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
	int ax = legacy && (a == rank) ? rank : ox_norm_axis(a, rank);
	if (ax < 0)
		return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, rank);
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

/* LayerNormalization (opset 17). Scale and B broadcast to X (numpy rules).
 * Mean and InvStdDev have X's leading dims and 1 for each normalized dim,
 * of the stash_type (float unless told otherwise). */
int infer_layernorm(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	if (x->dtype != OX_F32 && x->dtype != OX_F64 && x->dtype != OX_F16 && x->dtype != OX_BF16)
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	int rank = x->shape.rank;
	int64_t a = ox_attr_int(n, "axis", -1);
	int ax = ox_norm_axis(a, rank);
	if (ax < 0)
		return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, rank);
	int stash = (int)ox_attr_int(n, "stash_type", OX_F32);
	if (stash != OX_F32 && stash != OX_F64)
		return ox_error(g, n, "stash_type %s is not supported (f32 and f64 are)",
		                ox_dtype_name(stash));
	for (int k = 1; k <= 2; k++) {
		const ox_value *p = ox_in(g, n, k);
		ox_shape b;
		if (!p)
			continue;
		if (p->dtype != x->dtype)
			return ox_error(g, n, "input %d is %s, X is %s", k, ox_dtype_name(p->dtype),
			                ox_dtype_name(x->dtype));
		int bad = p->shape.rank > rank || ox_broadcast(g, &x->shape, &p->shape, &b);
		for (int i = 0; !bad && i < rank; i++)
			bad = b.d[i] >= 0 && x->shape.d[i] >= 0 && b.d[i] != x->shape.d[i];
		if (bad)
			return ox_error(g, n, "input %d '%s' does not broadcast to X", k, p->name);
	}
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	ox_shape s = x->shape;
	for (int i = ax; i < rank; i++)
		s.d[i] = 1;
	ox_set_out(g, n, 1, stash, &s);
	ox_set_out(g, n, 2, stash, &s);
	return 0;
}
