/* infer_data.c: shape inference for data movement and shape ops (Reshape,
 * Transpose, Concat, Split, Slice, Gather, Pad, Range, ...).
 *
 * Inputs that define an output shape (Reshape's shape, Slice's starts,
 * Pad's pads, ...) must be constants here: the fold pass has already turned
 * exporters' shape arithmetic into constants. The decoders and copy plans
 * ox_ir_data_* are shared with ir/eval_data.c and codegen/emit_data.c
 * (which repeat their prototypes: ir.h is not ours to extend), so all
 * three layers read an op's attributes-or-inputs in exactly one way.
 */
#include "ir.h"
#include "family.h"
#include <math.h>
#include <string.h>


/* Symbolic dims at or above this are treated as "to the end" by Slice: an
 * exporter's INT32_MAX/INT64_MAX end. No real axis is that long. */
#define BIG_END (((int64_t)1 << 31) - 1)

/* Integer list from input k when present, else from attribute attr (the
 * opsets move these from attributes to inputs; reading whichever is there
 * accepts both). Returns the count, -2 when neither is present, or -1
 * after an error (input not constant, too many values). */
static int int_list(ox_graph *g, const ox_node *n, int k, const char *attr,
		    int64_t *v, int cap, const char *what)
{
	ox_value *iv = ox_in(g, n, k);
	if (iv) {
		const ox_tensor *t = ox_in_const(g, n, k);
		if (!t)
			return ox_need_const(g, n, k, "%s input %d '%s' is not a constant", what, k, iv->name);
		if (!ox_dtype_is_int(t->dtype))
			return ox_error(g, n, "%s input '%s' has dtype %s, expected an integer type",
					what, iv->name, ox_dtype_name(t->dtype));
		int64_t m = ox_tensor_numel(t);
		if (m > cap)
			return ox_error(g, n, "%s input '%s' has %lld values, at most %d supported",
					what, iv->name, (long long)m, cap);
		for (int64_t i = 0; i < m; i++)
			v[i] = ox_tensor_get_i64(t, i);
		return (int)m;
	}
	const int64_t *a;
	int m = attr ? ox_attr_ints(n, attr, &a) : -1;
	if (m < 0)
		return -2;
	if (m > cap)
		return ox_error(g, n, "%s attribute has %d values, at most %d supported", what, m, cap);
	if (m)
		memcpy(v, a, (size_t)m * sizeof *v);
	return m;
}

/* Normalize a list of axes against rank; rejects out-of-range and repeats. */
static int norm_axes(ox_graph *g, const ox_node *n, int64_t *axes, int m, int rank, const char *what)
{
	for (int i = 0; i < m; i++) {
		int a = ox_norm_axis(axes[i], rank);
		if (a < 0)
			return ox_error(g, n, "%s axis %lld out of range for rank %d", what, (long long)axes[i], rank);
		for (int j = 0; j < i; j++)
			if (axes[j] == a)
				return ox_error(g, n, "%s axis %lld repeated", what, (long long)axes[i]);
		axes[i] = a;
	}
	return 0;
}

static int check_nonstring(ox_graph *g, const ox_node *n, int dtype)
{
	if (dtype == OX_STRING || !ox_dtype_size(dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(dtype));
	return 0;
}

static ox_dim dims_product(ox_graph *g, const ox_shape *s, int from, int to)
{
	ox_dim p = 1;
	for (int k = from; k < to; k++)
		p = ox_dim_mul(g, p, s->d[k]);
	return p;
}

/* a dim plus a possibly negative constant (negative constants are not dims) */
static ox_dim dim_add_const(ox_graph *g, ox_dim d, int64_t c)
{
	return c >= 0 ? ox_dim_add(g, d, c) : ox_dim_sub(g, d, -c);
}

/* ---- Identity, Dropout, Constant ---- */

int infer_identity(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

int infer_dropout(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	ox_value *tm = ox_in(g, n, 2);
	if (tm) {
		const ox_tensor *t = ox_in_const(g, n, 2);
		if (!t)
			return ox_need_const(g, n, 2, "training_mode input '%s' is not a constant; only inference is supported", tm->name);
		if (ox_tensor_numel(t) > 0 && ox_tensor_get_i64(t, 0)) {
			/* training with ratio 0 drops nothing: the identity with an
			 * all-true mask, exactly. Any other ratio needs random numbers
			 * that cannot reproduce the reference's RNG. */
			double ratio = 0.5; /* the spec's default when input 1 is omitted */
			if (ox_in(g, n, 1)) {
				const ox_tensor *r = ox_in_const(g, n, 1);
				if (!r)
					return ox_need_const(g, n, 1, "ratio input '%s' is not a constant; training-mode Dropout needs ratio 0",
					                     ox_in(g, n, 1)->name);
				ratio = ox_tensor_numel(r) > 0 ? ox_tensor_get_f64(r, 0) : 0.5;
			}
			if (ratio != 0)
				return ox_error(g, n, "training_mode is true with ratio %g: random dropout is not supported "
				                "(only ratio 0, the identity, is)", ratio);
		}
	}
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	/* the mask is T before opset 10, bool after */
	ox_set_out(g, n, 1, n->opset < 10 ? x->dtype : OX_BOOL, &x->shape);
	return 0;
}

int infer_constant(ox_graph *g, ox_node *n)
{
	/* the frontend turns Constant nodes into constant values; this is
	 * only reached for a Constant built some other way */
	ox_shape s = {0, {0}};
	int dtype = OX_UNDEF;
	const ox_attr *a;
	if ((a = ox_attr_get(n, "value")) && a->type == OX_AT_TENSOR) {
		dtype = a->t->dtype;
		s = a->t->shape;
	} else if ((a = ox_attr_get(n, "value_float"))) {
		dtype = OX_F32;
	} else if ((a = ox_attr_get(n, "value_int"))) {
		dtype = OX_I64;
	} else if ((a = ox_attr_get(n, "value_floats"))) {
		dtype = OX_F32;
		s = (ox_shape){1, {a->n}};
	} else if ((a = ox_attr_get(n, "value_ints"))) {
		dtype = OX_I64;
		s = (ox_shape){1, {a->n}};
	} else if ((a = ox_attr_get(n, "value_string"))) {
		dtype = OX_STRING;
	} else if ((a = ox_attr_get(n, "value_strings"))) {
		dtype = OX_STRING;
		s = (ox_shape){1, {a->n}};
	} else {
		return ox_error(g, n, "Constant without a supported value attribute");
	}
	ox_set_out(g, n, 0, dtype, &s);
	return 0;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ---- */

/* Numel(in) / product(known), cancelling equal symbolic factors so that
 * [N,3,4] -> [0,-1] gives 12 rather than (N*12)/N. Returns -1 with *sym
 * set when a symbolic factor of the divisor is left over. */
static ox_dim infer_minus_one(ox_graph *g, const ox_shape *in, const ox_dim *known, int nknown,
			      const char **sym, int *inexact)
{
	ox_dim num[OX_MAX_RANK], den[OX_MAX_RANK];
	int nn = 0, nd = 0;
	int64_t cn = 1, cd = 1;
	*sym = NULL;
	*inexact = 0;
	for (int k = 0; k < in->rank; k++) {
		if (in->d[k] >= 0 && __builtin_mul_overflow(cn, in->d[k], &cn)) {
			*inexact = 1; /* the input has more elements than any tensor */
			return -1;
		} else if (in->d[k] < 0)
			num[nn++] = in->d[k];
	}
	for (int k = 0; k < nknown; k++) {
		if (known[k] >= 0 && __builtin_mul_overflow(cd, known[k], &cd)) {
			*inexact = 1; /* more elements than any tensor has */
			return -1;
		} else if (known[k] < 0)
			den[nd++] = known[k];
	}
	for (int j = 0; j < nd; j++) {
		int i;
		for (i = 0; i < nn && num[i] != den[j]; i++)
			;
		if (i == nn) {
			*sym = ox_dim_unbound(g, den[j]);
			if (!*sym)
				*sym = "?";
			return -1;
		}
		num[i] = num[--nn];
	}
	if (cd == 0) {
		*inexact = 1;
		return -1;
	}
	/* reduce the constant fraction */
	int64_t a = cn, b = cd;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	if (a) {
		cn /= a;
		cd /= a;
	}
	ox_dim r = cn;
	for (int i = 0; i < nn; i++)
		r = ox_dim_mul(g, r, num[i]);
	if (cd != 1) {
		if (r >= 0) {
			*inexact = 1;
			return -1;
		}
		r = ox_dim_div(g, r, cd);
	}
	return r;
}

/* A Reshape whose target is read from data when the program runs (a
 * graph input, a tensor computed from one): its rank is the target's
 * length, every dim a run-time symbol the node computes (codegen checks
 * the product), none past the input's element count, which bounds the
 * whole output too. */
static int reshape_from_data(ox_graph *g, ox_node *n, ox_value *x)
{
	ox_value *t = ox_in(g, n, 1);
	if (!t || t->shape.rank != 1 || !ox_shape_is_const(&t->shape))
		return ox_error(g, n, "the target shape's length must be known at compile time");
	int64_t m = t->shape.d[0];
	if (m > OX_MAX_RANK)
		return ox_error(g, n, "a target of %lld dims, at most %d supported", (long long)m, OX_MAX_RANK);
	if (!ox_dtype_is_int(t->dtype))
		return ox_error(g, n, "shape input '%s' has dtype %s, expected an integer type", t->name,
				ox_dtype_name(t->dtype));
	int64_t top = ox_shape_max_numel(g, &x->shape), lo, hi, dimtop = top;
	/* of an empty tensor (with allowzero) a dim can be anything */
	if (ox_dim_range(g, ox_shape_numel_dim(g, &x->shape), &lo, &hi) || lo == 0)
		dimtop = INT32_MAX;
	ox_sv sv[OX_MAX_RANK];
	int known = t->sv && t->nsv == m;
	if (known)
		memcpy(sv, t->sv, (size_t)m * sizeof *sv);
	ox_shape o = {(int)m, {0}};
	int allowzero = n->opset >= 14 ? (int)ox_attr_int(n, "allowzero", 0) : 0;
	for (int k = 0; k < m; k++) {
		/* a known dim that cannot be 0 (copy) or -1 stays what it is */
		if (known && sv[k].kind == OX_SV_DIM && !ox_dim_range(g, sv[k].d, &lo, &hi) && (lo > 0 || allowzero))
			o.d[k] = sv[k].d;
		else if (known && sv[k].kind == OX_SV_CONST && sv[k].c > 0)
			o.d[k] = sv[k].c;
		else
			o.d[k] = ox_dim_data(g, n->out[0], k, dimtop);
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	if (top >= 0 && ox_shape_is_rt(g, &o))
		ox_out(g, n, 0)->cap = top > 0 ? top : 1; /* cap 0 is "none" */
	return 0;
}

int infer_reshape(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int64_t sh[OX_MAX_RANK];
	ox_sv sv[OX_MAX_RANK];
	int m = -2;
	if (n->nin > 1 && n->in[1] >= 0) {
		/* from a constant, else a symbolic value with every element known */
		m = ox_in_svals(g, n, 1, sv, OX_MAX_RANK);
		for (int k = 0; k < m; k++)
			if (sv[k].kind == OX_SV_UNKNOWN)
				m = -1;
		if (m < 0)
			return reshape_from_data(g, n, x);
	} else if ((m = int_list(g, n, 1, "shape", sh, OX_MAX_RANK, "shape")) >= 0) {
		for (int k = 0; k < m; k++)
			sv[k] = (ox_sv){OX_SV_CONST, sh[k], 0};
	}
	if (m == -1)
		return -1;
	if (m == -2)
		return ox_error(g, n, "no shape input");
	int allowzero = n->opset >= 14 ? (int)ox_attr_int(n, "allowzero", 0) : 0;
	ox_shape o = {m, {0}};
	ox_dim known[OX_MAX_RANK];
	int nknown = 0, minus = -1;
	for (int k = 0; k < m; k++) {
		if (sv[k].kind == OX_SV_DIM) {
			/* a run-time dim that may be 0 means "copy" without allowzero */
			int64_t lo, hi;
			if (!allowzero && (ox_dim_range(g, sv[k].d, &lo, &hi) || lo == 0))
				return reshape_from_data(g, n, x);
			o.d[k] = sv[k].d;
			known[nknown++] = o.d[k];
			continue;
		}
		sh[k] = sv[k].c;
		if (sh[k] == -1) {
			if (minus >= 0)
				return ox_error(g, n, "shape has more than one -1");
			minus = k;
			continue;
		}
		if (sh[k] < -1)
			return ox_error(g, n, "shape value %lld is invalid", (long long)sh[k]);
		if (sh[k] == 0 && !allowzero) {
			if (k >= x->shape.rank)
				return ox_error(g, n, "shape[%d] is 0 (copy) but the input has rank %d", k, x->shape.rank);
			o.d[k] = x->shape.d[k];
		} else {
			o.d[k] = sh[k];
		}
		known[nknown++] = o.d[k];
	}
	if (minus >= 0) {
		const char *sym;
		int inexact;
		ox_dim d = infer_minus_one(g, &x->shape, known, nknown, &sym, &inexact);
		if (sym)
			return ox_error(g, n, "cannot infer the -1 dim: it depends on the unbound symbol '%s'", sym);
		if (inexact)
			return ox_error(g, n, "input has no whole number of elements for the -1 dim of the new shape");
		o.d[minus] = d;
	}
	int64_t ni = ox_shape_numel(&x->shape), no = ox_shape_numel(&o);
	if (ni >= 0 && no >= 0 && ni != no) {
		char a[256], b[256];
		ox_shape_str(g, &x->shape, a, sizeof a);
		ox_shape_str(g, &o, b, sizeof b);
		return ox_error(g, n, "cannot reshape %s (%lld elements) to %s (%lld)", a, (long long)ni, b, (long long)no);
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

int infer_flatten(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t axis = ox_attr_int(n, "axis", 1);
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis > r)
		return ox_error(g, n, "axis %lld out of range for rank %d", (long long)ox_attr_int(n, "axis", 1), r);
	ox_shape o = {2, {dims_product(g, &x->shape, 0, (int)axis), dims_product(g, &x->shape, (int)axis, r)}};
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

int infer_squeeze(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t axes[OX_MAX_RANK];
	int m = int_list(g, n, 1, "axes", axes, OX_MAX_RANK, "axes");
	if (m == -1)
		return -1;
	char drop[OX_MAX_RANK] = {0};
	if (m == -2 || m == 0) { /* no axes (or an empty list, as ORT reads it): every 1 goes */
		for (int k = 0; k < r; k++) {
			if (x->shape.d[k] < 0)
				return ox_error(g, n, "no axes given and dim %d depends on the unbound symbol '%s'",
						k, ox_dim_unbound(g, x->shape.d[k]));
			drop[k] = x->shape.d[k] == 1;
		}
	} else {
		if (norm_axes(g, n, axes, m, r, "squeeze"))
			return -1;
		for (int i = 0; i < m; i++) {
			ox_dim d = x->shape.d[axes[i]];
			if (d >= 0 && d != 1)
				return ox_error(g, n, "cannot squeeze axis %lld of size %lld", (long long)axes[i], (long long)d);
			drop[axes[i]] = 1;
		}
	}
	ox_shape o = {0, {0}};
	for (int k = 0; k < r; k++)
		if (!drop[k])
			o.d[o.rank++] = x->shape.d[k];
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

int infer_unsqueeze(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int64_t axes[OX_MAX_RANK];
	int m = int_list(g, n, 1, "axes", axes, OX_MAX_RANK, "axes");
	if (m == -1)
		return -1;
	if (m == -2)
		return ox_error(g, n, "no axes given");
	int r = x->shape.rank + m;
	if (r > OX_MAX_RANK)
		return ox_error(g, n, "output rank %d exceeds %d", r, OX_MAX_RANK);
	if (norm_axes(g, n, axes, m, r, "unsqueeze"))
		return -1;
	char ins[OX_MAX_RANK] = {0};
	for (int i = 0; i < m; i++)
		ins[axes[i]] = 1;
	ox_shape o = {r, {0}};
	for (int k = 0, j = 0; k < r; k++)
		o.d[k] = ins[k] ? 1 : x->shape.d[j++];
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Transpose ---- */

int ox_ir_data_perm(ox_graph *g, const ox_node *n, int rank, int *perm)
{
	const int64_t *p;
	int m = ox_attr_ints(n, "perm", &p);
	if (m < 0) {
		for (int k = 0; k < rank; k++)
			perm[k] = rank - 1 - k;
		return 0;
	}
	if (m != rank)
		return ox_error(g, n, "perm has %d entries for rank %d", m, rank);
	char seen[OX_MAX_RANK] = {0};
	for (int k = 0; k < rank; k++) {
		int a = ox_norm_axis(p[k], rank);
		if (a < 0 || seen[a])
			return ox_error(g, n, "perm is not a permutation of 0..%d", rank - 1);
		seen[a] = 1;
		perm[k] = a;
	}
	return 0;
}

int infer_transpose(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int perm[OX_MAX_RANK];
	if (ox_ir_data_perm(g, n, x->shape.rank, perm))
		return -1;
	ox_shape o = {x->shape.rank, {0}};
	for (int k = 0; k < o.rank; k++)
		o.d[k] = x->shape.d[perm[k]];
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Concat, Split ---- */

int infer_concat(ox_graph *g, ox_node *n)
{
	ox_value *x0 = NULL;
	for (int k = 0; k < n->nin && !x0; k++)
		x0 = ox_in(g, n, k);
	if (!x0)
		return ox_error(g, n, "no inputs");
	const ox_attr *aa = ox_attr_get(n, "axis");
	if (!aa && n->opset >= 4)
		return ox_error(g, n, "missing the axis attribute");
	int r = x0->shape.rank;
	int64_t axis0 = aa ? aa->i : 1;
	int axis = ox_norm_axis(axis0, r);
	if (axis < 0)
		return ox_error(g, n, "axis %lld out of range for rank %d", (long long)axis0, r);
	ox_shape o = x0->shape;
	o.d[axis] = 0;
	for (int k = 0; k < n->nin; k++) {
		ox_value *x = ox_in(g, n, k);
		if (!x)
			continue;
		if (x->dtype != x0->dtype)
			return ox_error(g, n, "input %d has dtype %s, input 0 %s", k,
					ox_dtype_name(x->dtype), ox_dtype_name(x0->dtype));
		if (x->shape.rank != r)
			return ox_error(g, n, "input %d has rank %d, input 0 rank %d", k, x->shape.rank, r);
		for (int d = 0; d < r; d++) {
			if (d == axis)
				continue;
			ox_dim a = x->shape.d[d], b = o.d[d];
			if (a >= 0 && b >= 0 && a != b)
				return ox_error(g, n, "input %d dim %d is %lld, input 0 has %lld", k, d,
						(long long)a, (long long)b);
			if (b < 0 && a >= 0)
				o.d[d] = a; /* a constant beats a symbol that must equal it */
		}
		o.d[axis] = ox_dim_add(g, o.d[axis], x->shape.d[axis]);
	}
	ox_set_out(g, n, 0, x0->dtype, &o);
	return 0;
}

#define MAX_SPLIT 4096

int ox_ir_data_split(ox_graph *g, const ox_node *n, int *axis, ox_dim *sizes)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t a0 = ox_attr_int(n, "axis", 0);
	*axis = ox_norm_axis(a0, r);
	if (*axis < 0)
		return ox_error(g, n, "axis %lld out of range for rank %d", (long long)a0, r);
	ox_dim d = x->shape.d[*axis];
	int nout = n->nout;
	if (nout > MAX_SPLIT)
		return ox_error(g, n, "%d outputs, at most %d supported", nout, MAX_SPLIT);
	static int64_t sp[MAX_SPLIT];
	int m = int_list(g, n, 1, "split", sp, MAX_SPLIT, "split");
	if (m == -1)
		return -1;
	if (m >= 0) {
		if (m != nout)
			return ox_error(g, n, "split has %d sizes for %d outputs", m, nout);
		int64_t sum = 0;
		for (int k = 0; k < m; k++) {
			if (sp[k] < 0)
				return ox_error(g, n, "split size %lld is negative", (long long)sp[k]);
			sizes[k] = sp[k];
			sum += sp[k];
		}
		if (d >= 0 && sum != d)
			return ox_error(g, n, "split sizes add up to %lld, the axis has %lld", (long long)sum, (long long)d);
		return 0;
	}
	const ox_attr *no = ox_attr_get(n, "num_outputs");
	if (no && n->opset >= 18) {
		int64_t parts = no->i;
		if (parts != nout)
			return ox_error(g, n, "num_outputs is %lld but the node has %d outputs", (long long)parts, nout);
		if (parts < 1)
			return ox_error(g, n, "num_outputs must be positive");
		if (d < 0) {
			ox_dim c = ox_dim_ceildiv(g, d, parts);
			for (int k = 0; k < nout - 1; k++)
				sizes[k] = c;
			sizes[nout - 1] = ox_dim_sub(g, d, ox_dim_mul(g, c, parts - 1));
			return 0;
		}
		/* every chunk ceil(d/n) long, the last one what is left */
		int64_t c = (d + parts - 1) / parts, last = d - c * (parts - 1);
		if (last < 0)
			return ox_error(g, n, "axis of size %lld cannot be split into %lld chunks of %lld",
					(long long)d, (long long)parts, (long long)c);
		for (int k = 0; k < nout; k++)
			sizes[k] = k < nout - 1 ? c : last;
		return 0;
	}
	if (d >= 0 && d % nout)
		return ox_error(g, n, "axis of size %lld does not split into %d equal parts", (long long)d, nout);
	for (int k = 0; k < nout; k++)
		sizes[k] = ox_dim_div(g, d, nout);
	return 0;
}

int infer_split(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	static ox_dim sizes[MAX_SPLIT];
	int axis;
	if (ox_ir_data_split(g, n, &axis, sizes))
		return -1;
	for (int k = 0; k < n->nout; k++) {
		ox_shape o = x->shape;
		o.d[axis] = sizes[k];
		ox_set_out(g, n, k, x->dtype, &o);
	}
	return 0;
}

/* ---- Slice ---- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Slice length on a symbolic dim d with step 1: clamp as the spec does,
 * written so that no sub-expression is ever negative. */
static ox_dim slice_sym(ox_graph *g, ox_dim d, int64_t s, int64_t e)
{
	ox_dim ds, de;
	if (s < 0)
		ds = ox_dim_sub(g, d, ox_dim_op(g, OX_DE_MIN, d, -s));
	else
		ds = s == 0 ? 0 : ox_dim_op(g, OX_DE_MIN, d, s);
	if (e < 0)
		de = ox_dim_sub(g, d, ox_dim_op(g, OX_DE_MIN, d, -e));
	else
		de = e >= BIG_END ? d : ox_dim_op(g, OX_DE_MIN, d, e);
	if (ds == 0)
		return de;
	if (de == d) /* ds <= d */
		return ox_dim_sub(g, d, ds);
	return ox_dim_sub(g, de, ox_dim_op(g, OX_DE_MIN, de, ds));
}

int ox_ir_data_slice(ox_graph *g, const ox_node *n, const ox_shape *in,
		     int64_t *start, int64_t *step, ox_dim *len)
{
	int r = in->rank;
	int64_t st[OX_MAX_RANK], en[OX_MAX_RANK], ax[OX_MAX_RANK], sp[OX_MAX_RANK];
	int ns, ne, na, nsp;
	if (n->opset < 10) {
		/* starts/ends/axes are attributes; no steps */
		ns = int_list(g, n, 99, "starts", st, OX_MAX_RANK, "starts");
		ne = int_list(g, n, 99, "ends", en, OX_MAX_RANK, "ends");
		na = int_list(g, n, 99, "axes", ax, OX_MAX_RANK, "axes");
		nsp = -2;
	} else {
		ns = int_list(g, n, 1, NULL, st, OX_MAX_RANK, "starts");
		ne = int_list(g, n, 2, NULL, en, OX_MAX_RANK, "ends");
		na = int_list(g, n, 3, NULL, ax, OX_MAX_RANK, "axes");
		nsp = int_list(g, n, 4, NULL, sp, OX_MAX_RANK, "steps");
	}
	if (ns == -1 || ne == -1 || na == -1 || nsp == -1)
		return -1;
	if (ns < 0 || ne < 0)
		return ox_error(g, n, "starts and ends are required");
	if (ns != ne)
		return ox_error(g, n, "%d starts but %d ends", ns, ne);
	if (na == -2) {
		na = ns;
		for (int i = 0; i < na; i++)
			ax[i] = i;
	}
	if (nsp == -2) {
		nsp = ns;
		for (int i = 0; i < nsp; i++)
			sp[i] = 1;
	}
	if (na != ns || nsp != ns)
		return ox_error(g, n, "starts, ends, axes and steps differ in length (%d, %d, %d, %d)", ns, ne, na, nsp);
	if (norm_axes(g, n, ax, na, r, "slice"))
		return -1;
	for (int k = 0; k < r; k++) {
		start[k] = 0;
		step[k] = 1;
		len[k] = in->d[k];
	}
	for (int i = 0; i < na; i++) {
		int k = (int)ax[i];
		int64_t s = st[i], e = en[i], p = sp[i];
		ox_dim d = in->d[k];
		if (p == 0)
			return ox_error(g, n, "step 0 on axis %d", k);
		step[k] = p;
		if (d < 0) {
			if (p != 1)
				return ox_error(g, n, "a step of %lld on axis %d needs its size, which depends on "
						"the unbound symbol '%s'", (long long)p, k, ox_dim_unbound(g, d));
			start[k] = s; /* unclamped: the caller only uses len here */
			len[k] = slice_sym(g, d, s, e);
			continue;
		}
		if (s < 0)
			s += d;
		if (e < 0)
			e += d;
		if (p > 0) {
			s = clamp64(s, 0, d);
			e = clamp64(e, 0, d);
			len[k] = e > s ? (e - s + p - 1) / p : 0;
		} else {
			s = clamp64(s, 0, d - 1);
			e = clamp64(e, -1, d - 1);
			len[k] = s > e ? (s - e + (-p) - 1) / (-p) : 0;
		}
		start[k] = s;
	}
	return 0;
}

int infer_slice(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int64_t start[OX_MAX_RANK], step[OX_MAX_RANK];
	ox_shape o = {x->shape.rank, {0}};
	if (ox_ir_data_slice(g, n, &x->shape, start, step, o.d))
		return -1;
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Gather ---- */

int infer_gather(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1);
	int r = x->shape.rank;
	int64_t a0 = ox_attr_int(n, "axis", 0);
	int axis = ox_norm_axis(a0, r);
	if (axis < 0)
		return ox_error(g, n, "axis %lld out of range for rank %d", (long long)a0, r);
	if (ix->dtype != OX_I32 && ix->dtype != OX_I64)
		return ox_error(g, n, "indices have dtype %s, expected i32 or i64", ox_dtype_name(ix->dtype));
	if (r - 1 + ix->shape.rank > OX_MAX_RANK)
		return ox_error(g, n, "output rank exceeds %d", OX_MAX_RANK);
	ox_dim d = x->shape.d[axis];
	const ox_tensor *it = ox_in_const(g, n, 1);
	if (it && d >= 0) {
		int64_t m = ox_tensor_numel(it);
		for (int64_t i = 0; i < m; i++) {
			int64_t v = ox_tensor_get_i64(it, i);
			if (v < -d || v >= d)
				return ox_error(g, n, "index %lld out of range for an axis of size %lld",
						(long long)v, (long long)d);
		}
	}
	ox_shape o = {0, {0}};
	for (int k = 0; k < axis; k++)
		o.d[o.rank++] = x->shape.d[k];
	for (int k = 0; k < ix->shape.rank; k++)
		o.d[o.rank++] = ix->shape.d[k];
	for (int k = axis + 1; k < r; k++)
		o.d[o.rank++] = x->shape.d[k];
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Shape, Size, ConstantOfShape ---- */

int infer_shape(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t s = ox_attr_int(n, "start", 0), e = ox_attr_int(n, "end", r);
	if (n->opset < 15)
		s = 0, e = r;
	if (s < 0)
		s += r;
	if (e < 0)
		e += r;
	s = clamp64(s, 0, r);
	e = clamp64(e, 0, r);
	ox_shape o = {1, {e > s ? e - s : 0}};
	ox_set_out(g, n, 0, OX_I64, &o);
	return 0;
}

int infer_size(ox_graph *g, ox_node *n)
{
	ox_shape o = {0, {0}};
	ox_set_out(g, n, 0, OX_I64, &o);
	return 0;
}

int infer_constantofshape(ox_graph *g, ox_node *n)
{
	int64_t sh[OX_MAX_RANK + 1];
	int m = int_list(g, n, 0, NULL, sh, OX_MAX_RANK, "shape");
	if (m < 0)
		return -1;
	ox_shape o = {m, {0}};
	for (int k = 0; k < m; k++) {
		if (sh[k] < 0)
			return ox_error(g, n, "shape value %lld is negative", (long long)sh[k]);
		o.d[k] = sh[k];
	}
	int dtype = OX_F32;
	const ox_attr *a = ox_attr_get(n, "value");
	if (a) {
		if (a->type != OX_AT_TENSOR || ox_tensor_numel(a->t) != 1)
			return ox_error(g, n, "value must be a one-element tensor");
		dtype = a->t->dtype;
		if (check_nonstring(g, n, dtype))
			return -1;
	}
	ox_set_out(g, n, 0, dtype, &o);
	return 0;
}

/* ---- Expand, Tile ---- */

int infer_expand(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int64_t sh[OX_MAX_RANK];
	int m = int_list(g, n, 1, NULL, sh, OX_MAX_RANK, "shape");
	if (m < 0)
		return -1;
	ox_shape s = {m, {0}}, o;
	for (int k = 0; k < m; k++) {
		if (sh[k] < 0)
			return ox_error(g, n, "shape value %lld is negative", (long long)sh[k]);
		s.d[k] = sh[k];
	}
	if (ox_broadcast(g, &x->shape, &s, &o)) {
		char a[256], b[256];
		ox_shape_str(g, &x->shape, a, sizeof a);
		ox_shape_str(g, &s, b, sizeof b);
		return ox_error(g, n, "cannot broadcast %s to %s", a, b);
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

int infer_tile(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (n->opset < 6)
		return ox_error(g, n, "Tile before opset 6 is not supported");
	int r = x->shape.rank;
	int64_t rep[OX_MAX_RANK];
	int m = int_list(g, n, 1, NULL, rep, OX_MAX_RANK, "repeats");
	if (m < 0)
		return -1;
	if (m != r)
		return ox_error(g, n, "repeats has %d values for rank %d", m, r);
	ox_shape o = {r, {0}};
	for (int k = 0; k < r; k++) {
		if (rep[k] < 0)
			return ox_error(g, n, "repeats value %lld is negative", (long long)rep[k]);
		o.d[k] = ox_dim_mul(g, x->shape.d[k], rep[k]);
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Pad ---- */

/* pads[0..rank) are the begin pads, pads[rank..2*rank) the end pads, for
 * every axis (zero where the node's axes leave one out). */
int ox_ir_data_pads(ox_graph *g, const ox_node *n, int rank, int64_t *pads)
{
	int64_t p[2 * OX_MAX_RANK], ax[OX_MAX_RANK];
	int m = n->opset < 11 ? int_list(g, n, 99, "pads", p, 2 * OX_MAX_RANK, "pads")
			      : int_list(g, n, 1, NULL, p, 2 * OX_MAX_RANK, "pads");
	if (m == -1)
		return -1;
	if (m == -2)
		return ox_error(g, n, "no pads given");
	int na = n->opset >= 18 ? int_list(g, n, 3, NULL, ax, OX_MAX_RANK, "axes") : -2;
	if (na == -1)
		return -1;
	if (na == -2) {
		na = rank;
		for (int k = 0; k < rank; k++)
			ax[k] = k;
	} else if (norm_axes(g, n, ax, na, rank, "pad")) {
		return -1;
	}
	if (m != 2 * na)
		return ox_error(g, n, "pads has %d values for %d axes", m, na);
	for (int k = 0; k < 2 * rank; k++)
		pads[k] = 0;
	for (int i = 0; i < na; i++) {
		pads[ax[i]] = p[i];
		pads[rank + ax[i]] = p[na + i];
	}
	return 0;
}

int infer_pad(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t pads[2 * OX_MAX_RANK];
	if (ox_ir_data_pads(g, n, r, pads))
		return -1;
	const char *mode = ox_attr_str(n, "mode", "constant");
	int edgy = !strcmp(mode, "reflect") || !strcmp(mode, "edge") || !strcmp(mode, "wrap");
	if (!edgy && strcmp(mode, "constant"))
		return ox_error(g, n, "mode '%s' is not supported", mode);
	ox_value *cv = ox_in(g, n, 2);
	if (cv && ox_shape_numel(&cv->shape) > 1)
		return ox_error(g, n, "constant_value must be a scalar");
	if (cv && cv->dtype != x->dtype)
		return ox_error(g, n, "constant_value has dtype %s, data %s",
				ox_dtype_name(cv->dtype), ox_dtype_name(x->dtype));
	ox_shape o = {r, {0}};
	for (int k = 0; k < r; k++) {
		ox_dim d = x->shape.d[k];
		int64_t b = pads[k], e = pads[r + k];
		if (d >= 0) {
			if (d + b + e < 0 || d + b < 0 || d + e < 0)
				return ox_error(g, n, "pads %lld,%lld crop more than the %lld elements of axis %d",
						(long long)b, (long long)e, (long long)d, k);
			/* the input that is left after negative pads must not be
			 * empty if edge/reflect/wrap have to read from it */
			int64_t left = d + (b < 0 ? b : 0) + (e < 0 ? e : 0);
			if (edgy && left == 0 && (b > 0 || e > 0))
				return ox_error(g, n, "mode '%s' cannot pad an empty axis %d", mode, k);
			o.d[k] = d + b + e;
		} else {
			o.d[k] = dim_add_const(g, d, b + e);
		}
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Range ---- */

int infer_range(ox_graph *g, ox_node *n)
{
	const ox_tensor *t[3];
	for (int k = 0; k < 3; k++) {
		ox_value *v = ox_in(g, n, k);
		t[k] = ox_in_const(g, n, k);
		if (!t[k])
			return ox_need_const(g, n, k, "input %d '%s' is not a constant: the output length depends on it",
					k, v ? v->name : "");
		if (ox_tensor_numel(t[k]) != 1)
			return ox_error(g, n, "input %d must be a scalar", k);
		if (t[k]->dtype != t[0]->dtype)
			return ox_error(g, n, "inputs differ in dtype");
	}
	int dt = t[0]->dtype;
	int64_t count;
	if (dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16) {
		double s = ox_tensor_get_f64(t[0], 0), l = ox_tensor_get_f64(t[1], 0), d = ox_tensor_get_f64(t[2], 0);
		if (d == 0 || s != s || l != l || d != d)
			return ox_error(g, n, "delta is zero or an input is NaN");
		double c = ceil((l - s) / d);
		if (c > (double)((int64_t)1 << 40))
			return ox_error(g, n, "range of %g elements is too long", c);
		count = c > 0 ? (int64_t)c : 0;
	} else if (ox_dtype_is_int(dt)) {
		int64_t s = ox_tensor_get_i64(t[0], 0), l = ox_tensor_get_i64(t[1], 0), d = ox_tensor_get_i64(t[2], 0);
		if (d == 0)
			return ox_error(g, n, "delta is zero");
		/* ceil((l - s) / d) for either sign, in 128-bit-safe steps */
		if ((d > 0 && l <= s) || (d < 0 && l >= s)) {
			count = 0;
		} else {
			uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
			uint64_t ad = d > 0 ? (uint64_t)d : -(uint64_t)d;
			count = (int64_t)((span + ad - 1) / ad);
		}
	} else {
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(dt));
	}
	ox_shape o = {1, {count}};
	ox_set_out(g, n, 0, dt, &o);
	return 0;
}

/* ---- copy plans for Transpose, Slice, Expand, Tile, Pad ----
 *
 * A plan is a box of axes, each a row {n, is, os, kind, a, m, lo}: for
 * every index vector i in the box,
 *     out[ob + sum_k i_k*os_k] = in[ib + sum_k c_k(i_k)*is_k]
 * where c_k(i) = i for kind OX_PLAN_LIN and, for the Pad kinds,
 * c_k(i) = lo + f(i - a) with f folding an index into [0, m) by edge
 * clamping, reflection or wraparound. Strides count elements. For Pad
 * in constant mode the plan copies the input into the interior; the
 * caller fills the output with the value first. Eval and emit both run
 * plans, so each op's index arithmetic is written once, here.
 */

static void strides(const ox_shape *s, int64_t *st)
{
	int64_t p = 1;
	for (int k = s->rank - 1; k >= 0; k--) {
		st[k] = p;
		p *= s->d[k];
	}
}

static void row(int64_t *r, int64_t n, int64_t is, int64_t os)
{
	r[0] = n, r[1] = is, r[2] = os, r[3] = OX_PLAN_LIN, r[4] = r[5] = r[6] = 0;
}

int ox_ir_data_plan(ox_graph *g, const ox_node *n, int64_t (*ax)[7], int *nax, int64_t *ib, int64_t *ob)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!ox_shape_is_const(&x->shape) || !ox_shape_is_const(&y->shape))
		return ox_error(g, n, "shapes are not constant");
	const ox_shape *xs = &x->shape, *ys = &y->shape;
	int64_t xst[OX_MAX_RANK], yst[OX_MAX_RANK];
	strides(xs, xst);
	strides(ys, yst);
	int r = ys->rank;
	*ib = *ob = 0;
	*nax = r;
	switch (n->op) {
	case OX_OP_Transpose: {
		int perm[OX_MAX_RANK];
		if (ox_ir_data_perm(g, n, xs->rank, perm))
			return -1;
		for (int k = 0; k < r; k++)
			row(ax[k], ys->d[k], xst[perm[k]], yst[k]);
		return 0;
	}
	case OX_OP_Slice: {
		int64_t start[OX_MAX_RANK], step[OX_MAX_RANK];
		ox_dim len[OX_MAX_RANK];
		if (ox_ir_data_slice(g, n, xs, start, step, len))
			return -1;
		for (int k = 0; k < r; k++) {
			row(ax[k], len[k], step[k] * xst[k], yst[k]);
			*ib += start[k] * xst[k];
		}
		return 0;
	}
	case OX_OP_Expand:
		for (int k = 0; k < r; k++) {
			int j = k - (r - xs->rank);
			int64_t is = j >= 0 && xs->d[j] != 1 ? xst[j] : 0;
			row(ax[k], ys->d[k], is, yst[k]);
		}
		return 0;
	case OX_OP_Tile:
		/* output axis k = (repeat, input index) pairs, both linear */
		for (int k = 0; k < r; k++) {
			int64_t d = xs->d[k], rep = d ? ys->d[k] / d : 0;
			row(ax[2 * k], rep, 0, d * yst[k]);
			row(ax[2 * k + 1], d, xst[k], yst[k]);
		}
		*nax = 2 * r;
		return 0;
	case OX_OP_Pad: {
		int64_t pads[2 * OX_MAX_RANK];
		if (ox_ir_data_pads(g, n, r, pads))
			return -1;
		const char *mode = ox_attr_str(n, "mode", "constant");
		int kind = !strcmp(mode, "edge") ? OX_PLAN_EDGE : !strcmp(mode, "reflect") ? OX_PLAN_REFLECT
			 : !strcmp(mode, "wrap") ? OX_PLAN_WRAP : OX_PLAN_LIN;
		for (int k = 0; k < r; k++) {
			/* negative pads crop first; the rest pads what is left */
			int64_t b = pads[k], e = pads[r + k];
			int64_t lo = b < 0 ? -b : 0, m = xs->d[k] - lo - (e < 0 ? -e : 0);
			int64_t a = b > 0 ? b : 0;
			if (kind == OX_PLAN_LIN || (b <= 0 && e <= 0)) {
				/* constant mode, or only cropping: a shifted copy */
				row(ax[k], m, xst[k], yst[k]);
				*ib += lo * xst[k];
				*ob += a * yst[k];
			} else {
				row(ax[k], ys->d[k], xst[k], yst[k]);
				ax[k][3] = kind, ax[k][4] = a, ax[k][5] = m, ax[k][6] = lo;
			}
		}
		return 0;
	}
	}
	return ox_error(g, n, "no copy plan for this op");
}
