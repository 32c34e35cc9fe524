/* eval_sym.c: shape arithmetic over run-time dims, at compile time.
 *
 * Exporters compute the targets of Reshape, Expand, Slice and kin from
 * the input's shape at run time: Shape -> Gather -> Unsqueeze -> Concat,
 * with Add/Mul/Div on the way. When the shape has run-time dims the fold
 * cannot turn that into constants, but every element is still known as a
 * dim expression (ox_sv): this file evaluates those ops on such symbolic
 * values, so that the ops they steer get symbolic output dims instead of
 * needing the tensor's data. Elements it cannot express (a negative
 * product, a division that is not a floor of non-negatives) are
 * OX_SV_UNKNOWN: read from data when the program runs. The nodes stay in
 * the graph (their outputs are still tensors something may read); a value
 * whose elements all turn out constant is folded by opt/fold.c.
 * Equal and Where too: PyTorch exports expand(n, -1, -1) as the shape
 * Where(Equal(s, -1), 1, s), and a dim is never -1.
 */
#include "ir.h"
#include <string.h>

static ox_sv unknown(void)
{
	return (ox_sv){OX_SV_UNKNOWN, 0, 0};
}

static ox_sv of_dim(ox_dim d)
{
	return d >= 0 ? (ox_sv){OX_SV_CONST, d, 0} : (ox_sv){OX_SV_DIM, 0, d};
}

/* the element as a dim, when it is a dim or a non-negative constant */
static int as_dim(ox_sv e, ox_dim *d)
{
	if (e.kind == OX_SV_DIM)
		*d = e.d;
	else if (e.kind == OX_SV_CONST && e.c >= 0)
		*d = e.c;
	else
		return 0;
	return 1;
}

/* ONNX integer a op b on known elements (C semantics: truncating division) */
static ox_sv binop(ox_graph *g, int op, ox_sv a, ox_sv b)
{
	if (a.kind == OX_SV_CONST && b.kind == OX_SV_CONST) {
		int64_t r, x = a.c, y = b.c;
		switch (op) {
		case OX_OP_Add: if (__builtin_add_overflow(x, y, &r)) return unknown(); break;
		case OX_OP_Sub: if (__builtin_sub_overflow(x, y, &r)) return unknown(); break;
		case OX_OP_Mul: if (__builtin_mul_overflow(x, y, &r)) return unknown(); break;
		case OX_OP_Div: if (y == 0 || (x == INT64_MIN && y == -1)) return unknown(); r = x / y; break;
		case OX_OP_Max: r = x > y ? x : y; break;
		case OX_OP_Min: r = x < y ? x : y; break;
		default: return unknown();
		}
		return (ox_sv){OX_SV_CONST, r, 0};
	}
	ox_dim x, y;
	if (!as_dim(a, &x) || !as_dim(b, &y))
		return unknown();
	switch (op) {
	case OX_OP_Add: return of_dim(ox_dim_add(g, x, y));
	case OX_OP_Sub:
		/* only where the result is a dim for certain: x - x, (y + c) - y */
		if (x == y)
			return (ox_sv){OX_SV_CONST, 0, 0};
		return unknown();
	case OX_OP_Mul: return of_dim(ox_dim_mul(g, x, y));
	case OX_OP_Div:
		if (y == 0)
			return unknown();
		return of_dim(ox_dim_div(g, x, y)); /* non-negatives: truncation is the floor */
	case OX_OP_Max: return of_dim(ox_dim_op(g, OX_DE_MAX, x, y));
	case OX_OP_Min: return of_dim(ox_dim_op(g, OX_DE_MIN, x, y));
	}
	return unknown();
}

/* a dim's range, its low end at least 0 (a dim is never negative); hi -1:
 * unbounded; 0, or -1 when not known */
static int dim_range(const ox_graph *g, ox_dim d, int64_t *lo, int64_t *hi)
{
	if (ox_dim_range(g, d, lo, hi))
		return -1;
	if (*lo < 0)
		*lo = 0;
	return 0;
}

/* Equal of two elements: 1, 0, or unknown. Equal when they are the same
 * expression (or constant); not equal when a dim's range excludes the
 * other side (a dim is never negative: PyTorch's expand(n, -1) tests
 * Equal(s, -1); a run-time width of 32..1280 is never 0, as exporters
 * test before a Reshape) or two dims' ranges do not meet; else not known. */
ox_sv ox_sv_equal(const ox_graph *g, ox_sv a, ox_sv b)
{
	const ox_sv no = {OX_SV_CONST, 0, 0}, yes = {OX_SV_CONST, 1, 0};
	if (a.kind == OX_SV_UNKNOWN || b.kind == OX_SV_UNKNOWN)
		return unknown();
	if (a.kind == OX_SV_CONST && b.kind == OX_SV_CONST)
		return a.c == b.c ? yes : no;
	if (a.kind == OX_SV_DIM && b.kind == OX_SV_DIM && a.d == b.d)
		return yes;
	int64_t alo, ahi, blo, bhi;
	if (a.kind == OX_SV_DIM && b.kind == OX_SV_DIM) {
		if (dim_range(g, a.d, &alo, &ahi) || dim_range(g, b.d, &blo, &bhi))
			return unknown();
		return (ahi >= 0 && ahi < blo) || (bhi >= 0 && bhi < alo) ? no : unknown();
	}
	const int64_t c = a.kind == OX_SV_CONST ? a.c : b.c;
	const ox_dim d = a.kind == OX_SV_DIM ? a.d : b.d;
	if (c < 0)
		return no;
	if (dim_range(g, d, &alo, &ahi))
		return unknown();
	if (c < alo || (ahi >= 0 && c > ahi))
		return no;
	return alo == ahi && alo == c ? yes : unknown();
}

/* every element: k input values with their counts (a count of 1 broadcasts) */
static int elementwise(ox_graph *g, ox_node *n, ox_sv *out, int *nout)
{
	ox_sv in[8][OX_MAX_SV];
	int cnt[8], m = 1;
	if (n->nin > 8 || n->nin < 1)
		return -1;
	for (int k = 0; k < n->nin; k++) {
		cnt[k] = ox_in_svals(g, n, k, in[k], OX_MAX_SV);
		if (cnt[k] < 0)
			return -1;
		if (cnt[k] != 1 && m != 1 && cnt[k] != m)
			return -1;
		if (cnt[k] != 1)
			m = cnt[k];
	}
	for (int i = 0; i < m; i++) {
		const ox_sv *e[8];
		for (int k = 0; k < n->nin; k++)
			e[k] = &in[k][cnt[k] == 1 ? 0 : i];
		if (n->op == OX_OP_Equal) {
			out[i] = ox_sv_equal(g, *e[0], *e[1]);
		} else if (n->op == OX_OP_Where) { /* a known condition picks */
			out[i] = e[0]->kind != OX_SV_CONST ? unknown() : *e[e[0]->c ? 1 : 2];
		} else {
			out[i] = *e[0];
			for (int k = 1; k < n->nin; k++)
				out[i] = binop(g, n->op, out[i], *e[k]);
		}
	}
	*nout = m;
	return 0;
}

int ox_eval_sym(ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	if (!y || n->nout != 1 || !y->has_shape || y->shape.rank > 1 ||
	    !(ox_dtype_is_int(y->dtype) || (y->dtype == OX_BOOL && n->op == OX_OP_Equal)) ||
	    !ox_shape_is_const(&y->shape) || ox_shape_numel(&y->shape) > OX_MAX_SV)
		return 0;
	ox_sv out[OX_MAX_SV], a[OX_MAX_SV];
	int m = -1, na;
	int64_t want = ox_shape_numel(&y->shape);
	switch (n->op) {
	case OX_OP_Shape: {
		ox_value *x = ox_in(g, n, 0);
		int r = x->shape.rank;
		int64_t s = n->opset >= 15 ? ox_attr_int(n, "start", 0) : 0;
		int64_t e = n->opset >= 15 ? ox_attr_int(n, "end", r) : r;
		s = s < 0 ? s + r : s;
		e = e < 0 ? e + r : e;
		s = s < 0 ? 0 : s > r ? r : s;
		e = e < 0 ? 0 : e > r ? r : e;
		m = 0;
		for (int64_t i = s; i < e; i++)
			out[m++] = of_dim(x->shape.d[i]);
		break;
	}
	case OX_OP_Size:
		out[0] = of_dim(ox_shape_numel_dim(g, &ox_in(g, n, 0)->shape));
		m = 1;
		break;
	case OX_OP_Identity: case OX_OP_Reshape: case OX_OP_Flatten: case OX_OP_Squeeze: case OX_OP_Unsqueeze:
	case OX_OP_Cast:
		if (n->op == OX_OP_Cast && !ox_dtype_is_int(ox_in(g, n, 0)->dtype))
			return 0;
		m = ox_in_svals(g, n, 0, out, OX_MAX_SV);
		break;
	case OX_OP_Gather: {
		int64_t idx[OX_MAX_SV];
		na = ox_in_svals(g, n, 0, a, OX_MAX_SV);
		int ni = ox_in_ints(g, n, 1, idx, OX_MAX_SV);
		if (na < 0 || ni < 0 || ox_in(g, n, 0)->shape.rank != 1 || ox_attr_int(n, "axis", 0) != 0)
			return 0;
		m = 0;
		for (int i = 0; i < ni; i++) {
			int64_t j = idx[i] < 0 ? idx[i] + na : idx[i];
			if (j < 0 || j >= na)
				return 0;
			out[m++] = a[j];
		}
		break;
	}
	case OX_OP_Slice: {
		int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
		na = ox_in_svals(g, n, 0, a, OX_MAX_SV);
		if (na < 0 || ox_in(g, n, 0)->shape.rank != 1 || n->opset < 10 || ox_in_ints(g, n, 1, st, 1) != 1 ||
		    ox_in_ints(g, n, 2, en, 1) != 1 || (n->nin > 3 && n->in[3] >= 0 && ox_in_ints(g, n, 3, ax, 1) != 1) ||
		    (n->nin > 4 && n->in[4] >= 0 && ox_in_ints(g, n, 4, sp, 1) != 1) || sp[0] == 0 ||
		    (ax[0] != 0 && ax[0] != -1))
			return 0;
		int64_t s = st[0] < 0 ? st[0] + na : st[0], e = en[0] < 0 ? en[0] + na : en[0];
		m = 0;
		if (sp[0] > 0) {
			s = s < 0 ? 0 : s > na ? na : s;
			e = e < 0 ? 0 : e > na ? na : e;
			for (int64_t i = s; i < e; i += sp[0])
				out[m++] = a[i];
		} else {
			s = s < 0 ? 0 : s > na - 1 ? na - 1 : s;
			e = e < -1 ? -1 : e > na - 1 ? na - 1 : e;
			for (int64_t i = s; i > e; i += sp[0])
				out[m++] = a[i];
		}
		break;
	}
	case OX_OP_Concat:
		m = 0;
		for (int k = 0; k < n->nin; k++) {
			na = ox_in_svals(g, n, k, a, OX_MAX_SV);
			if (na < 0 || m + na > OX_MAX_SV)
				return 0;
			memcpy(out + m, a, (size_t)na * sizeof *a);
			m += na;
		}
		break;
	case OX_OP_Equal:
		if (n->nin != 2 || !ox_dtype_is_int(ox_in(g, n, 0)->dtype))
			return 0;
		if (elementwise(g, n, out, &m))
			return 0;
		break;
	case OX_OP_Where:
		if (n->nin != 3 || ox_in(g, n, 0)->dtype != OX_BOOL)
			return 0;
		/* fall through */
	case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div: case OX_OP_Max: case OX_OP_Min:
		if (elementwise(g, n, out, &m))
			return 0;
		break;
	default:
		return 0;
	}
	if (m != want)
		return 0;
	int known = 0;
	for (int i = 0; i < m; i++)
		known |= out[i].kind != OX_SV_UNKNOWN;
	if (!known && m)
		return 0;
	y->sv = ox_ir_alloc(g, (size_t)(m + 1) * sizeof *y->sv);
	memcpy(y->sv, out, (size_t)m * sizeof *out);
	y->nsv = m;
	return 1;
}
