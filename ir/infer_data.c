/* infer_data.c: shape inference for data movement and shape ops (Reshape,
 * Transpose, Concat, Split, Slice, Gather, Pad, Range, ...).
 *
 * Inputs that define an output shape (Reshape's shape, Slice's starts,
 * Pad's pads, ...) are read as far as the compiler knows them
 * (docs/dynamic.md): constants and symbolic values (ox_in_svals) give
 * constant or symbolic dims; elements read from data when the program runs
 * give data symbols (ox_dim_data) the node computes, bounded where the op
 * bounds them (a Slice or a Split by its axis) and unbounded otherwise
 * (Range, Expand, Tile, Pad, ConstantOfShape: the bounds pass takes the
 * user's --max). The decoders and copy plans ox_ir_data_* (ir/family.h)
 * are shared with ir/eval_data.c and codegen/c/emit_data.c, so all three
 * layers read an op's attributes-or-inputs in exactly one way.
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

/* The same list as far as the compiler knows it: each element a constant,
 * a dim (a symbolic value's), or OX_SV_UNKNOWN when the input is computed
 * from data (its length must then be known). */
static int sv_list(ox_graph *g, const ox_node *n, int k, const char *attr,
		   ox_sv *v, int cap, const char *what)
{
	ox_value *iv = ox_in(g, n, k);
	if (!iv || ox_in_const(g, n, k)) {
		static int64_t c[4096];
		int m = int_list(g, n, k, attr, c, cap < 4096 ? cap : 4096, what);
		for (int i = 0; i < m; i++)
			v[i] = (ox_sv){OX_SV_CONST, c[i], 0};
		return m;
	}
	if (!ox_dtype_is_int(iv->dtype))
		return ox_error(g, n, "%s input '%s' has dtype %s, expected an integer type",
				what, iv->name, ox_dtype_name(iv->dtype));
	int m = ox_in_svals(g, n, k, v, cap);
	if (m >= 0)
		return m;
	if (!iv->has_shape || iv->shape.rank > 1 || !ox_shape_is_const(&iv->shape))
		return ox_error(g, n, "%s input '%s' is read when the program runs, and its length must be "
				"known when compiling", what, iv->name);
	int64_t c = ox_shape_numel(&iv->shape);
	if (c > cap)
		return ox_error(g, n, "%s input '%s' has %lld values, at most %d supported",
				what, iv->name, (long long)c, cap);
	for (int64_t i = 0; i < c; i++)
		v[i] = (ox_sv){OX_SV_UNKNOWN, 0, 0};
	return (int)c;
}

/* are the m elements constants? (then copied to c, when not NULL) */
static int sv_consts(const ox_sv *v, int m, int64_t *c)
{
	for (int i = 0; i < m; i++) {
		if (v[i].kind != OX_SV_CONST)
			return 0;
		if (c)
			c[i] = v[i].c;
	}
	return 1;
}

/* min(a, b) and max(a, b), or the operand the ranges of their symbols
 * show to be it always */
static ox_dim dmin(ox_graph *g, ox_dim a, ox_dim b)
{
	int64_t al, ah, bl, bh;
	if (!ox_dim_range(g, a, &al, &ah) && !ox_dim_range(g, b, &bl, &bh)) {
		if (ah >= 0 && ah <= bl)
			return a;
		if (bh >= 0 && bh <= al)
			return b;
	}
	return ox_dim_op(g, OX_DE_MIN, a, b);
}

static ox_dim dmax(ox_graph *g, ox_dim a, ox_dim b)
{
	int64_t al, ah, bl, bh;
	if (!ox_dim_range(g, a, &al, &ah) && !ox_dim_range(g, b, &bl, &bh)) {
		if (bh >= 0 && bh <= al)
			return a;
		if (ah >= 0 && ah <= bl)
			return b;
	}
	return ox_dim_op(g, OX_DE_MAX, a, b);
}

/* a - b for a dim b that is never more than a, with a - (a - x) written
 * x; where the ranges of their symbols cannot show the difference is not
 * negative (they forget that b <= a), written max(a - b, 0), the same
 * value, so that the bounds pass takes it */
static ox_dim dsub(ox_graph *g, ox_dim a, ox_dim b)
{
	if (b < 0 && -b - 1 < g->ndexprs) {
		const ox_dexpr *e = &g->dexprs[-b - 1];
		if (e->op == OX_DE_SUB && e->a == a)
			return e->b;
	}
	ox_dim r = ox_dim_sub(g, a, b);
	int64_t lo, hi;
	if (r < 0 && !ox_dim_range(g, r, &lo, &hi) && lo < 0)
		r = ox_dim_op(g, OX_DE_MAX, r, 0);
	return r;
}

/* ceil(a / q) for a constant q >= 1; past any axis's length (a + q - 1
 * would overflow) it is min(a, 1) */
static ox_dim ceil_div(ox_graph *g, ox_dim a, int64_t q)
{
	if (q >= OX_MAX_BYTES)
		return dmin(g, a, 1);
	return ox_dim_ceildiv(g, a, q);
}

/* the largest of the tops of s's dims (at least 1), -1 if one is unbounded */
static int64_t max_dim_hi(ox_graph *g, const ox_shape *s)
{
	int64_t m = 1;
	for (int k = 0; k < s->rank; k++) {
		int64_t h = ox_dim_hi(g, s->d[k]);
		if (h < 0)
			return -1;
		if (h > m)
			m = h;
	}
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

/* the ratio a Dropout reads, when it is a constant (*r set; the spec's 0.5
 * when input 1 is omitted); 0 when it is read from data */
static int dropout_ratio(ox_graph *g, const ox_node *n, double *r)
{
	*r = 0.5;
	if (!ox_in(g, n, 1))
		return 1;
	const ox_tensor *t = ox_in_const(g, n, 1);
	if (!t)
		return 0;
	*r = ox_tensor_numel(t) > 0 ? ox_tensor_get_f64(t, 0) : 0.5;
	return 1;
}

int ox_ir_data_dropout_checks(ox_graph *g, const ox_node *n)
{
	if (!ox_in(g, n, 2))
		return 0; /* inference */
	const ox_tensor *t = ox_in_const(g, n, 2);
	if (t && !(ox_tensor_numel(t) > 0 && ox_tensor_get_i64(t, 0)))
		return 0; /* training_mode false */
	double r;
	return !dropout_ratio(g, n, &r) || r != 0;
}

int infer_dropout(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	const ox_tensor *t = ox_in(g, n, 2) ? ox_in_const(g, n, 2) : NULL;
	double ratio;
	if (t && ox_tensor_numel(t) > 0 && ox_tensor_get_i64(t, 0) && dropout_ratio(g, n, &ratio) && ratio != 0)
		/* training with ratio 0 drops nothing: the identity with an
		 * all-true mask, exactly. Any other ratio needs random numbers
		 * that cannot reproduce the reference's RNG. A training_mode or
		 * ratio read from data is checked when the program runs. */
		return ox_error(g, n, "training_mode is true with ratio %g: random dropout is not supported "
				"(only ratio 0, the identity, is)", ratio);
	for (int k = 1; k < 3; k++) {
		ox_value *v = ox_in(g, n, k);
		if (v && !ox_in_const(g, n, k) && (!v->has_shape || ox_shape_numel(&v->shape) != 1))
			return ox_error(g, n, "input %d '%s' must be a scalar", k, v->name);
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

/* a node whose shape input opt/symshape.c detached (ox_symshape): its
 * output's shape, inferred from that input's known elements, stays; 1
 * when it is such a node (-1 after an error) */
static int symshape_kept(ox_graph *g, ox_node *n, int k)
{
	if (!ox_attr_int(n, "ox_symshape", 0))
		return 0;
	const ox_value *y = ox_out(g, n, 0);
	if (ox_in(g, n, k) || !y || !y->has_shape)
		return ox_error(g, n, "ox_symshape without its inferred output shape");
	return 1;
}

int infer_reshape(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int kept = symshape_kept(g, n, 1);
	if (kept)
		return kept < 0 ? -1 : 0;
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

/* Squeeze or Unsqueeze with axes read from data: the rank is the axes
 * list's length off or on, and every output dim a data symbol the node
 * computes (Squeeze: one of the input's dims, Unsqueeze: one of them or
 * 1), at most the input's largest dim; the output holds the input's
 * elements. */
static int squeeze_from_data(ox_graph *g, ox_node *n, ox_value *x, int m)
{
	int r = n->op == OX_OP_Squeeze ? x->shape.rank - m : x->shape.rank + m;
	if (r < 0)
		return ox_error(g, n, "squeezing %d axes of a rank %d input", m, x->shape.rank);
	if (r > OX_MAX_RANK)
		return ox_error(g, n, "output rank %d exceeds %d", r, OX_MAX_RANK);
	ox_shape o = {r, {0}};
	int64_t hi = max_dim_hi(g, &x->shape);
	for (int k = 0; k < r; k++)
		o.d[k] = ox_dim_data(g, n->out[0], k, hi);
	ox_set_out(g, n, 0, x->dtype, &o);
	int64_t top = ox_shape_max_numel(g, &x->shape);
	if (top >= 0)
		ox_out(g, n, 0)->cap = top > 0 ? top : 1; /* cap 0 is "none" */
	return 0;
}

int infer_squeeze(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t axes[OX_MAX_RANK];
	ox_sv sv[OX_MAX_RANK];
	int m = sv_list(g, n, 1, "axes", sv, OX_MAX_RANK, "axes");
	if (m == -1)
		return -1;
	if (m > 0 && !sv_consts(sv, m, axes))
		return squeeze_from_data(g, n, x, m);
	char drop[OX_MAX_RANK] = {0};
	if (m == -2 || m == 0) { /* no axes (or an empty list, as ORT reads it): every 1 goes */
		for (int k = 0; k < r; k++) {
			ox_dim d = x->shape.d[k];
			int64_t lo, hi;
			if (d >= 0) {
				drop[k] = d == 1;
				continue;
			}
			if (!ox_dim_range(g, d, &lo, &hi) && (lo > 1 || hi == 0))
				continue; /* a run-time dim that is never 1 */
			if (ox_dim_range(g, d, &lo, &hi))
				return ox_error(g, n, "no axes given and dim %d depends on the unbound symbol '%s'",
						k, ox_dim_unbound(g, d));
			/* the hint names the small graph inputs the dim comes from */
			return ox_need_const(g, n, 0, "no axes given and dim %d, known only at run time, may be 1 "
					     "(%lld..%lld): give the axes", k, (long long)lo, (long long)hi);
		}
	} else {
		if (norm_axes(g, n, axes, m, r, "squeeze"))
			return -1;
		for (int i = 0; i < m; i++) {
			ox_dim d = x->shape.d[axes[i]];
			if (d >= 0 && d != 1)
				return ox_error(g, n, "cannot squeeze axis %lld of size %lld", (long long)axes[i], (long long)d);
			/* a run-time dim squeezed would have to be 1, which a view
			 * (no code) cannot check when the program runs */
			if (ox_dim_is_rt(g, d)) {
				char e[256];
				ox_dim_str(g, d, e, sizeof e);
				return ox_error(g, n, "cannot squeeze axis %lld, whose size %s is known only at run time "
						"(it must be 1: fix it with --shape or --dim)", (long long)axes[i], e);
			}
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
	ox_sv sv[OX_MAX_RANK];
	int m = sv_list(g, n, 1, "axes", sv, OX_MAX_RANK, "axes");
	if (m == -1)
		return -1;
	if (m == -2)
		return ox_error(g, n, "no axes given");
	if (!sv_consts(sv, m, axes))
		return squeeze_from_data(g, n, x, m);
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
	static ox_sv sp[MAX_SPLIT];
	int m = sv_list(g, n, 1, "split", sp, MAX_SPLIT, "split");
	if (m == -1)
		return -1;
	if (m >= 0) {
		if (m != nout)
			return ox_error(g, n, "split has %d sizes for %d outputs", m, nout);
		int64_t sum = 0;
		int consts = 1, data = 0;
		for (int k = 0; k < m; k++) {
			if (sp[k].kind == OX_SV_UNKNOWN) {
				/* read from data: at most the axis (the node checks the sum) */
				sizes[k] = n->out[k] >= 0 ? ox_dim_data(g, n->out[k], *axis, ox_dim_hi(g, d)) : 0;
				consts = 0, data = 1;
				continue;
			}
			if (sp[k].kind == OX_SV_DIM) {
				sizes[k] = sp[k].d;
				consts = 0;
				continue;
			}
			if (sp[k].c < 0)
				return ox_error(g, n, "split size %lld is negative", (long long)sp[k].c);
			sizes[k] = sp[k].c;
			sum += sp[k].c;
		}
		if (consts && d >= 0 && sum != d)
			return ox_error(g, n, "split sizes add up to %lld, the axis has %lld", (long long)sum, (long long)d);
		return data;
	}
	const ox_attr *no = ox_attr_get(n, "num_outputs");
	if (no && n->opset >= 18) {
		int64_t parts = no->i;
		if (parts != nout)
			return ox_error(g, n, "num_outputs is %lld but the node has %d outputs", (long long)parts, nout);
		if (parts < 1)
			return ox_error(g, n, "num_outputs must be positive");
		if (d < 0) {
			/* the last chunk is what is left, which must not be
			 * negative: the node checks that the sizes add up */
			ox_dim c = ox_dim_ceildiv(g, d, parts);
			for (int k = 0; k < nout - 1; k++)
				sizes[k] = c;
			sizes[nout - 1] = dmax(g, ox_dim_sub(g, d, ox_dim_mul(g, c, parts - 1)), 0);
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
	/* equal parts: the node checks that a run-time axis divides */
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
	if (ox_ir_data_split(g, n, &axis, sizes) < 0)
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

/* A start or end s of a forward slice of an axis of d elements, clamped
 * to [0, d] (a negative constant counts from the end), as a dim */
static ox_dim fwd_index(ox_graph *g, ox_dim d, ox_sv s)
{
	if (s.kind == OX_SV_DIM)
		return dmin(g, d, s.d);
	if (s.c >= BIG_END)
		return d;
	if (s.c >= 0)
		return s.c == 0 ? 0 : dmin(g, d, s.c);
	if (s.c <= -BIG_END)
		return 0;
	return dsub(g, d, dmin(g, d, -s.c));
}

/* The same for a backward slice, plus one: a start clamped to [0, d - 1]
 * or an end clamped to [-1, d - 1] is one less than the dim returned, which
 * is in [0, d] (a start on an empty axis gives 0, so the slice is empty) */
static ox_dim back_index(ox_graph *g, ox_dim d, ox_sv s, int start)
{
	if (s.kind == OX_SV_DIM)
		return dmin(g, d, ox_dim_add(g, s.d, 1));
	if (s.c >= BIG_END)
		return d;
	if (s.c >= 0)
		return dmin(g, d, s.c + 1);
	if (s.c <= -BIG_END)
		return start ? dmin(g, d, 1) : 0;
	ox_dim u = dsub(g, d, dmin(g, d, -s.c - 1)); /* d + s + 1, at least 0 */
	return start && u != d ? dmin(g, d, dmax(g, u, 1)) : u;
}

/* One axis of a Slice whose size or bounds are dims (ONNX's clamping,
 * written so that no sub-expression is ever negative): the first index
 * and the length. */
static void slice_dims(ox_graph *g, ox_dim d, ox_sv s, ox_sv e, int64_t p, ox_dim *start, ox_dim *len)
{
	int64_t lo, hi;
	if (p > 0) {
		ox_dim ds = fwd_index(g, d, s), de = fwd_index(g, d, e), span;
		if (ds == 0)
			span = de;
		else if (de == d) /* ds <= d */
			span = dsub(g, d, ds);
		else
			span = dsub(g, de, dmin(g, de, ds));
		*start = ds;
		*len = ceil_div(g, span, p);
		return;
	}
	ox_dim S = back_index(g, d, s, 1), E = back_index(g, d, e, 0);
	ox_dim span = E == 0 ? S : dsub(g, S, dmin(g, S, E));
	*len = ceil_div(g, span, p == INT64_MIN ? INT64_MAX : -p);
	if (!ox_dim_range(g, S, &lo, &hi) && lo >= 1)
		*start = ox_dim_sub(g, S, 1);
	else
		*start = dsub(g, S, dmin(g, S, 1)); /* 0 for an empty axis */
}

int ox_ir_data_slice(ox_graph *g, const ox_node *n, const ox_shape *in,
		     ox_dim *start, int64_t *step, ox_dim *len, char *rt)
{
	int r = in->rank;
	if (ox_attr_int(n, "ox_symshape", 0)) {
		/* (opt/symshape.c: from 0 by 1, as long as the output) */
		const ox_value *y = ox_out(g, n, 0);
		for (int k = 0; k < r; k++) {
			start[k] = 0, step[k] = 1, len[k] = y->shape.d[k];
			if (rt)
				rt[k] = 0;
		}
		return 0;
	}
	ox_sv st[OX_MAX_RANK], en[OX_MAX_RANK], ax[OX_MAX_RANK], sp[OX_MAX_RANK];
	int ns, ne, na, nsp;
	if (n->opset < 10) {
		/* starts/ends/axes are attributes; no steps */
		ns = sv_list(g, n, 99, "starts", st, OX_MAX_RANK, "starts");
		ne = sv_list(g, n, 99, "ends", en, OX_MAX_RANK, "ends");
		na = sv_list(g, n, 99, "axes", ax, OX_MAX_RANK, "axes");
		nsp = -2;
	} else {
		ns = sv_list(g, n, 1, NULL, st, OX_MAX_RANK, "starts");
		ne = sv_list(g, n, 2, NULL, en, OX_MAX_RANK, "ends");
		na = sv_list(g, n, 3, NULL, ax, OX_MAX_RANK, "axes");
		nsp = sv_list(g, n, 4, NULL, sp, OX_MAX_RANK, "steps");
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
			ax[i] = (ox_sv){OX_SV_CONST, i, 0};
	}
	if (nsp == -2) {
		nsp = ns;
		for (int i = 0; i < nsp; i++)
			sp[i] = (ox_sv){OX_SV_CONST, 1, 0};
	}
	if (na != ns || nsp != ns)
		return ox_error(g, n, "starts, ends, axes and steps differ in length (%d, %d, %d, %d)", ns, ne, na, nsp);
	char rt0[OX_MAX_RANK];
	if (!rt)
		rt = rt0;
	for (int k = 0; k < r; k++) {
		start[k] = 0;
		step[k] = 1;
		len[k] = in->d[k];
		rt[k] = 0;
	}
	int64_t axi[OX_MAX_RANK];
	if (!sv_consts(ax, na, axi)) {
		/* which axes are sliced is read from data */
		if (na > r)
			return ox_error(g, n, "%d axes for rank %d", na, r);
		for (int k = 0; k < r; k++)
			rt[k] = na > 0;
		return na > 0;
	}
	if (norm_axes(g, n, axi, na, r, "slice"))
		return -1;
	int any = 0;
	for (int i = 0; i < na; i++) {
		int k = (int)axi[i];
		ox_sv s = st[i], e = en[i];
		ox_dim d = in->d[k];
		if (sp[i].kind == OX_SV_CONST && sp[i].c == 0)
			return ox_error(g, n, "step 0 on axis %d", k);
		if (sp[i].kind != OX_SV_CONST || s.kind == OX_SV_UNKNOWN || e.kind == OX_SV_UNKNOWN) {
			rt[k] = 1, any = 1;
			continue;
		}
		int64_t p = sp[i].c;
		step[k] = p;
		if (d < 0 || s.kind == OX_SV_DIM || e.kind == OX_SV_DIM) {
			slice_dims(g, d, s, e, p, &start[k], &len[k]);
			continue;
		}
		int64_t sc = s.c, ec = e.c;
		if (sc < 0)
			sc += d;
		if (ec < 0)
			ec += d;
		if (p > 0) {
			sc = clamp64(sc, 0, d);
			ec = clamp64(ec, 0, d);
			len[k] = ec > sc ? (ec - sc + p - 1) / p : 0;
		} else {
			sc = clamp64(sc, 0, d - 1);
			ec = clamp64(ec, -1, d - 1);
			len[k] = d > 0 && sc > ec ? (sc - ec + (-p) - 1) / (-p) : 0;
		}
		start[k] = sc > 0 ? sc : 0;
	}
	return any;
}

int infer_slice(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int kept = symshape_kept(g, n, 1);
	if (kept)
		return kept < 0 ? -1 : 0;
	ox_dim start[OX_MAX_RANK], len[OX_MAX_RANK];
	int64_t step[OX_MAX_RANK];
	char rt[OX_MAX_RANK];
	ox_shape o = {x->shape.rank, {0}};
	if (ox_ir_data_slice(g, n, &x->shape, start, step, len, rt) < 0)
		return -1;
	/* a length read from data: at most the axis */
	for (int k = 0; k < o.rank; k++)
		o.d[k] = rt[k] ? ox_dim_data(g, n->out[0], k, ox_dim_hi(g, x->shape.d[k])) : len[k];
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
	int kept = symshape_kept(g, n, 0);
	if (kept)
		return kept < 0 ? -1 : 0;
	if (!ox_in(g, n, 0))
		return ox_error(g, n, "input 0 is required but omitted");
	ox_sv sh[OX_MAX_RANK];
	int m = sv_list(g, n, 0, NULL, sh, OX_MAX_RANK, "shape");
	if (m < 0)
		return -1;
	ox_shape o = {m, {0}};
	for (int k = 0; k < m; k++) {
		if (sh[k].kind == OX_SV_CONST && sh[k].c < 0)
			return ox_error(g, n, "shape value %lld is negative", (long long)sh[k].c);
		/* read from data: no bound (the bounds pass takes the user's) */
		o.d[k] = sh[k].kind == OX_SV_CONST ? sh[k].c
		       : sh[k].kind == OX_SV_DIM ? sh[k].d : ox_dim_data(g, n->out[0], k, -1);
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
	int kept = symshape_kept(g, n, 1);
	if (kept)
		return kept < 0 ? -1 : 0;
	if (!ox_in(g, n, 1))
		return ox_error(g, n, "input 1 is required but omitted");
	ox_sv sh[OX_MAX_RANK];
	int m = sv_list(g, n, 1, NULL, sh, OX_MAX_RANK, "shape");
	if (m < 0)
		return -1;
	ox_shape s = {m, {0}}, o;
	for (int k = 0; k < m; k++) {
		if (sh[k].kind == OX_SV_CONST && sh[k].c < 0)
			return ox_error(g, n, "shape value %lld is negative", (long long)sh[k].c);
		/* an element read from data broadcasts like a 1 here, then
		 * below gets its dim */
		s.d[k] = sh[k].kind == OX_SV_CONST ? sh[k].c : sh[k].kind == OX_SV_DIM ? sh[k].d : 1;
	}
	if (ox_broadcast(g, &x->shape, &s, &o)) {
		char a[256], b[256];
		ox_shape_str(g, &x->shape, a, sizeof a);
		ox_shape_str(g, &s, b, sizeof b);
		return ox_error(g, n, "cannot broadcast %s to %s", a, b);
	}
	for (int k = 0; k < m; k++) {
		if (sh[k].kind != OX_SV_UNKNOWN)
			continue;
		/* against a dim that is never 1 the element must be 1 or it (the
		 * node checks); else the output's dim is read from data */
		int i = k + o.rank - m, j = i - (o.rank - x->shape.rank);
		ox_dim xd = j >= 0 ? x->shape.d[j] : 1;
		int64_t lo, hi;
		if (xd >= 0 ? xd != 1 : !ox_dim_range(g, xd, &lo, &hi) && (lo > 1 || hi == 0))
			o.d[i] = xd;
		else
			o.d[i] = ox_dim_data(g, n->out[0], i, -1);
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
	ox_sv rep[OX_MAX_RANK];
	int m = sv_list(g, n, 1, NULL, rep, OX_MAX_RANK, "repeats");
	if (m < 0)
		return -1;
	if (m != r)
		return ox_error(g, n, "repeats has %d values for rank %d", m, r);
	ox_shape o = {r, {0}};
	for (int k = 0; k < r; k++) {
		if (rep[k].kind == OX_SV_CONST && rep[k].c < 0)
			return ox_error(g, n, "repeats value %lld is negative", (long long)rep[k].c);
		ox_dim d = x->shape.d[k];
		if (rep[k].kind != OX_SV_UNKNOWN)
			o.d[k] = ox_dim_mul(g, d, rep[k].kind == OX_SV_CONST ? rep[k].c : rep[k].d);
		else /* read from data: no bound */
			o.d[k] = d == 0 ? 0 : ox_dim_data(g, n->out[0], k, -1);
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Pad ---- */

int ox_ir_data_pads(ox_graph *g, const ox_node *n, int rank, ox_sv *pads)
{
	ox_sv p[2 * OX_MAX_RANK], ax[OX_MAX_RANK];
	int m = n->opset < 11 ? sv_list(g, n, 99, "pads", p, 2 * OX_MAX_RANK, "pads")
			      : sv_list(g, n, 1, NULL, p, 2 * OX_MAX_RANK, "pads");
	if (m == -1)
		return -1;
	if (m == -2)
		return ox_error(g, n, "no pads given");
	int na = n->opset >= 18 ? sv_list(g, n, 3, NULL, ax, OX_MAX_RANK, "axes") : -2;
	if (na == -1)
		return -1;
	int64_t axi[OX_MAX_RANK];
	int data = 0;
	if (na == -2) {
		na = rank;
		for (int k = 0; k < rank; k++)
			axi[k] = k;
	} else if (!sv_consts(ax, na, axi)) {
		/* which axes are padded is read from data: any may be */
		if (na > rank)
			return ox_error(g, n, "%d axes for rank %d", na, rank);
		data = 1;
	} else if (norm_axes(g, n, axi, na, rank, "pad")) {
		return -1;
	}
	if (m != 2 * na)
		return ox_error(g, n, "pads has %d values for %d axes", m, na);
	for (int k = 0; k < 2 * rank; k++)
		pads[k] = (ox_sv){data && na ? OX_SV_UNKNOWN : OX_SV_CONST, 0, 0};
	if (data)
		return na > 0;
	for (int i = 0; i < na; i++) {
		pads[axi[i]] = p[i];
		pads[rank + axi[i]] = p[na + i];
		data |= p[i].kind == OX_SV_UNKNOWN || p[na + i].kind == OX_SV_UNKNOWN;
	}
	return data;
}

int infer_pad(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	ox_sv pads[2 * OX_MAX_RANK];
	if (ox_ir_data_pads(g, n, r, pads) < 0)
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
		ox_sv bs = pads[k], es = pads[r + k];
		if (bs.kind == OX_SV_UNKNOWN || es.kind == OX_SV_UNKNOWN) {
			/* read from data: no bound */
			o.d[k] = ox_dim_data(g, n->out[0], k, -1);
			continue;
		}
		if (d >= 0 && bs.kind == OX_SV_CONST && es.kind == OX_SV_CONST) {
			int64_t b = bs.c, e = es.c;
			if (d + b + e < 0 || d + b < 0 || d + e < 0)
				return ox_error(g, n, "pads %lld,%lld crop more than the %lld elements of axis %d",
						(long long)b, (long long)e, (long long)d, k);
			/* the input that is left after negative pads must not be
			 * empty if edge/reflect/wrap have to read from it */
			int64_t left = d + (b < 0 ? b : 0) + (e < 0 ? e : 0);
			if (edgy && left == 0 && (b > 0 || e > 0))
				return ox_error(g, n, "mode '%s' cannot pad an empty axis %d", mode, k);
			o.d[k] = d + b + e;
			continue;
		}
		/* dims: what is left after the crops (negative constants), plus
		 * the pads; the node checks that the crops fit */
		ox_dim v = d;
		for (int j = 0; j < 2; j++) {
			ox_sv p = j ? es : bs;
			if (p.kind == OX_SV_DIM)
				v = ox_dim_add(g, v, p.d);
			else
				v = dim_add_const(g, v, p.c);
		}
		o.d[k] = v;
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

/* ---- Range ---- */

/* max(a - b, 0) for integer elements known as constants or dims, as the
 * dim *r; 0 when it cannot be written as one */
static int sv_span(ox_graph *g, ox_sv a, ox_sv b, ox_dim *r)
{
	int ad = a.kind == OX_SV_DIM || a.c >= 0, bd = b.kind == OX_SV_DIM || b.c >= 0;
	int64_t c;
	if (a.kind == OX_SV_CONST && b.kind == OX_SV_CONST) {
		if (__builtin_sub_overflow(a.c, b.c, &c))
			return 0;
		*r = c > 0 ? c : 0;
		return 1;
	}
	if (!ad) {
		*r = 0; /* a negative constant less a dim */
		return 1;
	}
	ox_dim x = a.kind == OX_SV_DIM ? a.d : a.c;
	if (!bd) {
		if (b.c == INT64_MIN)
			return 0;
		*r = ox_dim_add(g, x, -b.c);
		return 1;
	}
	ox_dim y = b.kind == OX_SV_DIM ? b.d : b.c;
	*r = y == 0 ? x : dsub(g, x, dmin(g, x, y));
	return 1;
}

/* Range's length from integer start, limit and delta known as constants
 * or dims (ceil((limit - start) / delta), at least 0) as *len; 0 when
 * it cannot be written as a dim */
static int range_dims(ox_graph *g, const ox_sv *v, ox_dim *len)
{
	ox_dim span;
	if (v[2].kind != OX_SV_CONST || v[2].c == 0 || v[2].c == INT64_MIN ||
	    v[0].kind == OX_SV_UNKNOWN || v[1].kind == OX_SV_UNKNOWN)
		return 0;
	int64_t dl = v[2].c;
	if (!(dl > 0 ? sv_span(g, v[1], v[0], &span) : sv_span(g, v[0], v[1], &span)))
		return 0;
	*len = ceil_div(g, span, dl > 0 ? dl : -dl);
	return 1;
}

int infer_range(ox_graph *g, ox_node *n)
{
	const ox_tensor *t[3];
	int known = 1;
	for (int k = 0; k < 3; k++) {
		ox_value *v = ox_in(g, n, k);
		if (!v)
			return ox_error(g, n, "input %d is required", k);
		if (v->dtype != ox_in(g, n, 0)->dtype)
			return ox_error(g, n, "inputs differ in dtype");
		if (!v->has_shape || ox_shape_numel(&v->shape) != 1)
			return ox_error(g, n, "input %d must be a scalar", k);
		t[k] = ox_in_const(g, n, k);
		known &= t[k] != NULL;
	}
	int dt = ox_in(g, n, 0)->dtype;
	int64_t count;
	if (!known) {
		/* read from data (the node computes the length), or symbolic */
		ox_sv v[3];
		ox_dim len;
		if (!ox_dtype_is_int(dt) && !ox_dtype_is_float(dt))
			return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(dt));
		for (int k = 0; k < 3 && ox_dtype_is_int(dt); k++)
			if (ox_in_svals(g, n, k, &v[k], 1) != 1)
				v[k] = (ox_sv){OX_SV_UNKNOWN, 0, 0};
		if (!ox_dtype_is_int(dt) || !range_dims(g, v, &len))
			len = ox_dim_data(g, n->out[0], 0, -1);
		ox_shape o = {1, {len}};
		ox_set_out(g, n, 0, dt, &o);
		return 0;
	}
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
 * A plan is a box of axes (ox_plan, ir/family.h) with dims for extents,
 * strides and offsets: constants when the shapes are, which the evaluator
 * runs, else expressions over run-time dims the emitter prints. For Pad
 * in constant mode the plan copies the input into the interior; the
 * caller fills the output with the value first. Eval and emit both run
 * plans, so each op's index arithmetic is written once, here.
 */

static void strides(ox_graph *g, const ox_shape *s, ox_dim *st)
{
	ox_dim p = 1;
	for (int k = s->rank - 1; k >= 0; k--) {
		st[k] = p;
		p = ox_dim_mul(g, p, s->d[k]);
	}
}

static ox_plan_axis row(ox_dim n, ox_dim is, ox_dim os)
{
	return (ox_plan_axis){.n = n, .is = is, .os = os, .kind = OX_PLAN_LIN};
}

/* a divisor that is never 0: d, or max(d, 1) when d may be 0 at run time
 * (the quotient is then of an empty axis) */
static ox_dim nonzero(ox_graph *g, ox_dim d)
{
	int64_t lo, hi;
	if (d >= 0 || (!ox_dim_range(g, d, &lo, &hi) && lo > 0))
		return d;
	return ox_dim_op(g, OX_DE_MAX, d, 1);
}

int ox_ir_data_plan(ox_graph *g, const ox_node *n, ox_plan *p)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	const ox_shape *xs = &x->shape, *ys = &y->shape;
	ox_dim xst[OX_MAX_RANK], yst[OX_MAX_RANK];
	strides(g, xs, xst);
	strides(g, ys, yst);
	int r = ys->rank;
	p->ib = p->ob = 0;
	p->nax = r;
	switch (n->op) {
	case OX_OP_Transpose: {
		int perm[OX_MAX_RANK];
		if (ox_ir_data_perm(g, n, xs->rank, perm))
			return -1;
		for (int k = 0; k < r; k++)
			p->ax[k] = row(ys->d[k], xst[perm[k]], yst[k]);
		return 0;
	}
	case OX_OP_Slice: {
		ox_dim start[OX_MAX_RANK], len[OX_MAX_RANK];
		int64_t step[OX_MAX_RANK];
		int rc = ox_ir_data_slice(g, n, xs, start, step, len, NULL);
		if (rc)
			return rc;
		for (int k = 0; k < r; k++) {
			p->ax[k] = row(len[k], ox_dim_mul(g, step[k] > 0 ? step[k] : step[k] == INT64_MIN ? INT64_MAX
							: -step[k], xst[k]), yst[k]);
			p->ax[k].neg = step[k] < 0;
			p->ib = ox_dim_add(g, p->ib, ox_dim_mul(g, start[k], xst[k]));
		}
		return 0;
	}
	case OX_OP_Expand:
		for (int k = 0; k < r; k++) {
			int j = k - (r - xs->rank);
			ox_dim xd = j >= 0 ? xs->d[j] : 1;
			p->ax[k] = row(ys->d[k], xd != 1 ? xst[j] : 0, yst[k]);
			if (xd != 1 && xd != ys->d[k] && ox_dim_is_rt(g, xd))
				p->ax[k].bc = xd; /* 1 or ys->d[k] when it runs */
		}
		return 0;
	case OX_OP_Tile:
		/* output axis k = (repeat, input index) pairs, both linear */
		for (int k = 0; k < r; k++) {
			ox_dim d = xs->d[k], rep = d == 0 ? 0 : ox_dim_div(g, ys->d[k], nonzero(g, d));
			p->ax[2 * k] = row(rep, 0, ox_dim_mul(g, d, yst[k]));
			p->ax[2 * k + 1] = row(d, xst[k], yst[k]);
		}
		p->nax = 2 * r;
		return 0;
	case OX_OP_Pad: {
		ox_sv pads[2 * OX_MAX_RANK];
		int rc = ox_ir_data_pads(g, n, r, pads);
		if (rc)
			return rc;
		const char *mode = ox_attr_str(n, "mode", "constant");
		int kind = !strcmp(mode, "edge") ? OX_PLAN_EDGE : !strcmp(mode, "reflect") ? OX_PLAN_REFLECT
			 : !strcmp(mode, "wrap") ? OX_PLAN_WRAP : OX_PLAN_LIN;
		for (int k = 0; k < r; k++) {
			/* negative pads (constants) crop first; the rest pads what
			 * is left: m elements from lo, placed at a */
			ox_sv b = pads[k], e = pads[r + k];
			ox_dim lo = b.kind == OX_SV_CONST && b.c < 0 ? -b.c : 0;
			ox_dim m = ox_dim_sub(g, ox_dim_sub(g, xs->d[k], lo), e.kind == OX_SV_CONST && e.c < 0 ? -e.c : 0);
			ox_dim a = b.kind == OX_SV_DIM ? b.d : b.c > 0 ? b.c : 0;
			int pads_any = b.kind == OX_SV_DIM || e.kind == OX_SV_DIM || b.c > 0 || e.c > 0;
			if (kind == OX_PLAN_LIN || !pads_any) {
				/* constant mode, or only cropping: a shifted copy (a, m,
				 * lo kept: the CUDA target's Pad reads them) */
				p->ax[k] = row(m, xst[k], yst[k]);
				p->ax[k].a = a, p->ax[k].m = m, p->ax[k].lo = lo;
				p->ib = ox_dim_add(g, p->ib, ox_dim_mul(g, lo, xst[k]));
				p->ob = ox_dim_add(g, p->ob, ox_dim_mul(g, a, yst[k]));
			} else {
				p->ax[k] = row(ys->d[k], xst[k], yst[k]);
				p->ax[k].kind = kind, p->ax[k].a = a, p->ax[k].m = m, p->ax[k].lo = lo;
			}
		}
		return 0;
	}
	}
	return ox_error(g, n, "no copy plan for this op");
}
