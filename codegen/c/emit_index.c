/* emit_index.c: C for indexing, scatter/gather, cumulative ops, TopK,
 * OneHot, Compress, NonZero, NonMaxSuppression and Unique (kernels in
 * templates/nms.c, templates/unique.c), EyeLike, DepthToSpace/SpaceToDepth,
 * ReverseSequence, Shrink, the NLL / softmax cross-entropy losses and
 * TensorScatter.
 *
 * Every kernel is loops whose bounds are printed with ox_cg_dim: literals
 * for a model of fixed shapes, expressions over the run's ox_d[] for
 * run-time dims (docs/dynamic.md). Elements that are only moved stay in
 * their storage type; arithmetic goes through ox_cg_load/store (f16/bf16 in
 * float), and the losses accumulate in double. Indices read at run time are
 * wrapped once when negative and then checked (index_dim): one still out of
 * range makes the node return 1 and the run PREFIX_ERR_INDEX, before any
 * access with it. Relations between run-time dims that the op needs
 * (check_dims) and counts read from data (TopK's k, OneHot's depth) that
 * are invalid or past what the code was planned for make it return 2
 * (PREFIX_ERR_SHAPE). The data symbols a node defines (infer_index.c) are
 * computed first, written with ox_cg_set_dim, and only then used.
 */
#include "../cg.h"
#include "../../ir/family.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define EXPR 2400 /* room for an expression over run-time dims */

static const ox_shape *shp(ox_graph *g, ox_id id)
{
	return &g->vals[id].shape;
}

static int dtype_of(ox_graph *g, ox_id id)
{
	return g->vals[id].dtype;
}

/* product of dims from..to-1: a constant, or an expression */
static ox_dim prod(ox_graph *g, const ox_shape *s, int from, int to)
{
	ox_dim p = 1;
	for (int k = from; k < to; k++)
		p = ox_dim_mul(g, p, s->d[k]);
	return p;
}

/* the C expression of dim d (ox_cg_dim's rotating buffer) */
static const char *D(ox_cg *cg, ox_dim d)
{
	return ox_cg_dim(cg, d);
}

/* "n * sizeof *p": bytes of n elements of p */
static const char *bytes_of(ox_cg *cg, ox_dim n, const char *p)
{
	static char buf[4][EXPR];
	static int at;
	char *r = buf[at = (at + 1) % 4];
	ox_cg_snprintf(r, EXPR, n >= 0 ? "%s * sizeof *%s" : "(size_t)%s * sizeof *%s", D(cg, n), p);
	return r;
}

/* "for (ptrdiff_t v = 0; v < n; v++) {", or nothing when n == 1 (then v is
 * defined as 0 so the index expressions stay valid); returns the new depth */
static int open_loop(ox_cg *cg, int lvl, const char *var, ox_dim n)
{
	if (n == 1) {
		ox_cg_line(cg, lvl, "{");
		ox_cg_line(cg, lvl + 1, "const ptrdiff_t %s = 0;", var);
		return lvl + 1;
	}
	ox_cg_line(cg, lvl, "for (ptrdiff_t %s = 0; %s < %s; %s++) {", var, var, D(cg, n), var);
	return lvl + 1;
}

static void close_loops(ox_cg *cg, int lvl, int to)
{
	while (lvl > to)
		ox_cg_line(cg, --lvl, "}");
}

/* append " + coordinate k of flat index v (in shape s) * stride" to b */
static void coord_term(ox_cg *cg, ox_buf *b, const char *v, const ox_shape *s, int k, ox_dim stride)
{
	ox_dim st = prod(cg->g, s, k + 1, s->rank);
	char c[EXPR];
	if (s->d[k] == 1 || stride == 0)
		return;
	if (k == 0 && st == 1)
		ox_cg_snprintf(c, sizeof c, "%s", v);
	else if (k == 0)
		ox_cg_snprintf(c, sizeof c, "%s / %s", v, D(cg, st));
	else if (st == 1)
		ox_cg_snprintf(c, sizeof c, "%s %% %s", v, D(cg, s->d[k]));
	else
		ox_cg_snprintf(c, sizeof c, "%s / %s %% %s", v, D(cg, st), D(cg, s->d[k]));
	if (stride == 1 && k == 0)
		ox_buf_printf(b, "%s%s", b->len ? " + " : "", c);
	else if (stride == 1)
		ox_buf_printf(b, "%s(%s)", b->len ? " + " : "", c);
	else
		ox_buf_printf(b, "%s(%s) * %s", b->len ? " + " : "", c, D(cg, stride));
}

/* "e * s" without the noise of "* 1"; rotating buffers, copy to keep */
static const char *mul(ox_cg *cg, const char *e, ox_dim s)
{
	static char buf[8][EXPR];
	static int at;
	char *r = buf[at = (at + 1) % 8];
	if (s == 1)
		ox_cg_snprintf(r, EXPR, "%s", e);
	else
		ox_cg_snprintf(r, EXPR, "%s * %s", e, D(cg, s));
	return r;
}

/* ox_cg_index for a count that may be a run-time dim */
static void index_dim(ox_cg *cg, int lvl, const char *var, const char *src, ox_dim n)
{
	if (n >= 0) {
		ox_cg_index(cg, lvl, var, src, n);
		return;
	}
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, lvl, "int64_t %s = (int64_t)%s;", var, src);
	ox_cg_line(cg, lvl, "if (%s < 0)", var);
	ox_cg_line(cg, lvl + 1, "%s += %s;", var, D(cg, n));
	ox_cg_line(cg, lvl, "if (%s < 0 || %s >= %s)", var, var, D(cg, n));
	ox_cg_line(cg, lvl + 1, "return 1; /* index out of range */");
}

/* The node returns 2 (PREFIX_ERR_SHAPE) unless a == b (le: a <= b) when
 * it runs; nothing when that is known now (infer_index.c refused the
 * constants that break it). */
static void check_dims(ox_cg *cg, ox_dim a, int le, ox_dim b, const char *what)
{
	int64_t alo, ahi, blo, bhi;
	if (a == b || (a >= 0 && b >= 0))
		return;
	if (le && !ox_dim_range(cg->g, a, &alo, &ahi) && !ox_dim_range(cg->g, b, &blo, &bhi) && ahi >= 0 &&
	    ahi <= blo)
		return;
	ox_cg_line(cg, 1, "if (%s %s %s)", D(cg, a), le ? ">" : "!=", D(cg, b));
	ox_cg_line(cg, 2, "return 2; /* %s */", what);
	cg->fails_shape = 1;
}

/* Is d a data symbol that node n computes? */
static int defines(ox_graph *g, const ox_node *n, ox_dim d)
{
	for (int k = 0; k < n->nout; k++)
		if (ox_dim_defined_by(g, d, n->out[k]))
			return 1;
	return 0;
}

/* After the data symbols of n are set: an output with one of them whose
 * element bound (ox_value.cap, --max) is tighter than its dims' must not
 * exceed it either (else 2, before anything is written) */
static void check_cap(ox_cg *cg, ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nout - n->scratch; k++) {
		const ox_value *v = ox_out(g, n, k);
		int mine = 0;
		for (int d = 0; v && d < v->shape.rank; d++)
			mine |= defines(g, n, v->shape.d[d]);
		int64_t top = mine ? ox_shape_max_numel(g, &v->shape) : -1;
		if (!mine || v->cap <= 0 || (top >= 0 && v->cap >= top))
			continue;
		ox_cg_line(cg, 1, "if (%s > %lld)", ox_cg_numel(cg, &v->shape), (long long)v->cap);
		ox_cg_line(cg, 2, "return 2; /* more than the code was planned for */");
		cg->fails_shape = 1;
	}
}

/* storage expression for the double/float expression e */
static const char *store_of(int dt, const char *e)
{
	static char buf[4][600];
	static int at;
	char *r = buf[at = (at + 1) % 4];
	if (dt == OX_F16 || dt == OX_BF16)
		ox_cg_snprintf(r, 600, "%s", ox_cg_store(dt, e));
	else
		ox_cg_snprintf(r, 600, "(%s)(%s)", ox_cg_ctype(dt), e);
	return r;
}

void ox_cg_combine(char *buf, size_t n, int dt, const char *red, const char *dst, const char *src)
{
	char a[256], b[256], e[1100];
	if (!strcmp(red, "none")) {
		ox_cg_snprintf(buf, n, "%s = %s;", dst, src);
		return;
	}
	ox_cg_snprintf(a, sizeof a, "%s", ox_cg_load(dt, dst));
	ox_cg_snprintf(b, sizeof b, "%s", ox_cg_load(dt, src));
	if (!strcmp(red, "add"))
		ox_cg_snprintf(e, sizeof e, "%s + %s", a, b);
	else if (!strcmp(red, "mul"))
		ox_cg_snprintf(e, sizeof e, "%s * %s", a, b);
	else if (!strcmp(red, "max"))
		ox_cg_snprintf(e, sizeof e, "%s > %s ? %s : %s", b, a, b, a);
	else
		ox_cg_snprintf(e, sizeof e, "%s < %s ? %s : %s", b, a, b, a);
	ox_cg_snprintf(buf, n, "%s = %s;", dst, store_of(dt, e));
}

/* dst = dst (reduction) src, both storage lvalues of dtype dt */
static void emit_combine(ox_cg *cg, int lvl, int dt, const char *red, const char *dst, const char *src)
{
	char st[2 * EXPR + 1200];
	ox_cg_combine(st, sizeof st, dt, red, dst, src);
	ox_cg_line(cg, lvl, "%s", st);
}

static const char *reduction(const ox_node *n)
{
	if (n->op == OX_OP_Scatter)
		return "none";
	return ox_attr_str(n, "reduction", "none");
}

/* GatherElements, and ScatterElements / Scatter (scatter != 0): one pass
 * over the indices, whose shape the output (gather) or updates share */
static int emit_elements(ox_cg *cg, ox_graph *g, ox_node *n, int scatter)
{
	const ox_shape *xs = shp(g, n->in[0]), *is = shp(g, n->in[1]);
	int axis, dt = dtype_of(g, n->in[0]);
	if (ox_index_axis(g, n, &axis))
		return -1;
	ox_dim m = prod(g, is, 0, is->rank);
	for (int k = 0; k < xs->rank; k++)
		if (k != axis)
			check_dims(cg, is->d[k], 1, xs->d[k], "indices larger than the data");
	for (int k = 0; k < is->rank && scatter; k++)
		check_dims(cg, shp(g, n->in[2])->d[k], 0, is->d[k], "updates and indices differ");
	if (scatter)
		ox_cg_line(cg, 1, "memcpy(out0, in0, %s);", bytes_of(cg, prod(g, xs, 0, xs->rank), "out0"));
	if (m == 0)
		return 0;
	if (xs->d[axis] == 0)
		return ox_error(g, n, "indices into an empty axis");
	ox_cg_line(cg, 1, "for (ptrdiff_t o = 0; o < %s; o++) {", D(cg, m));
	index_dim(cg, 2, "j", "in1[o]", xs->d[axis]);
	ox_buf off = {0};
	for (int k = 0; k < xs->rank; k++) {
		ox_dim st = prod(g, xs, k + 1, xs->rank);
		if (k == axis && st == 1)
			ox_buf_printf(&off, "%sj", off.len ? " + " : "");
		else if (k == axis)
			ox_buf_printf(&off, "%sj * %s", off.len ? " + " : "", D(cg, st));
		else
			coord_term(cg, &off, "o", is, k, st);
	}
	ox_cg_line(cg, 2, "const ptrdiff_t p = %s;", off.s);
	ox_buf_free(&off);
	if (scatter)
		emit_combine(cg, 2, dt, reduction(n), "out0[p]", "in2[o]");
	else
		ox_cg_line(cg, 2, "out0[o] = in0[p];");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* GatherND and ScatterND: each index tuple picks a slice of R elements */
static int emit_nd(ox_cg *cg, ox_graph *g, ox_node *n, int scatter)
{
	const ox_shape *xs = shp(g, n->in[0]), *is = shp(g, n->in[1]);
	int dt = dtype_of(g, n->in[0]);
	int q = is->rank, r = xs->rank;
	int64_t b = scatter ? 0 : ox_attr_int(n, "batch_dims", 0);
	int64_t last = is->d[q - 1];
	if (q < 1 || last < 0 || b + last > r)
		return ox_error(g, n, "indices' last dim does not fit the data");
	ox_dim P = prod(g, is, 0, q - 1), G = prod(g, is, (int)b, q - 1), R = prod(g, xs, (int)(b + last), r);
	ox_dim BS = prod(g, xs, (int)b, r);
	for (int k = 0; k < b; k++)
		check_dims(cg, is->d[k], 0, xs->d[k], "batch dims differ");
	for (int k = 0; k < q - 1 + r - last && scatter; k++)
		check_dims(cg, shp(g, n->in[2])->d[k], 0, k < q - 1 ? is->d[k] : xs->d[k - (q - 1) + last],
			   "updates do not match indices and data");
	if (scatter)
		ox_cg_line(cg, 1, "memcpy(out0, in0, %s);", bytes_of(cg, prod(g, xs, 0, r), "out0"));
	if (P == 0 || R == 0)
		return 0;
	ox_cg_line(cg, 1, "for (ptrdiff_t p = 0; p < %s; p++) {", D(cg, P));
	if (G == P)
		ox_cg_line(cg, 2, "ptrdiff_t off = 0;");
	else
		ox_cg_line(cg, 2, "ptrdiff_t off = p / %s * %s;", D(cg, G), D(cg, BS));
	for (int64_t j = 0; j < last; j++) {
		char src[64], var[32];
		int ax = (int)(b + j);
		if (last == 1)
			ox_cg_snprintf(src, sizeof src, "in1[p]");
		else
			ox_cg_snprintf(src, sizeof src, "in1[p * %lld + %lld]", (long long)last, (long long)j);
		ox_cg_snprintf(var, sizeof var, "j%lld", (long long)j);
		if (xs->d[ax] == 0)
			return ox_error(g, n, "indices into an empty axis");
		ox_cg_line(cg, 2, "{");
		index_dim(cg, 3, var, src, xs->d[ax]);
		ox_cg_line(cg, 3, "off += %s;", mul(cg, var, prod(g, xs, ax + 1, r)));
		ox_cg_line(cg, 2, "}");
	}
	if (!scatter) {
		ox_cg_line(cg, 2, "memcpy(out0 + %s, in0 + off, %s);", mul(cg, "p", R), bytes_of(cg, R, "out0"));
	} else {
		char src[EXPR];
		ox_cg_snprintf(src, sizeof src, "in2[%s + i]", mul(cg, "p", R));
		ox_cg_line(cg, 2, "for (ptrdiff_t i = 0; i < %s; i++)", D(cg, R));
		emit_combine(cg, 3, dt, reduction(n), "out0[off + i]", src);
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_trilu(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	const int r = xs->rank, upper = ox_attr_int(n, "upper", 1) != 0;
	const ox_dim d[3] = {prod(g, xs, 0, r - 2), xs->d[r - 2], xs->d[r - 1]};
	/* keep the elements on and above (upper) or below (lower) diagonal k */
	char body[96];
	ox_cg_snprintf(body, sizeof body, "out0[i] = (int64_t)i2 - (int64_t)i1 %s k ? in0[i] : 0;\n", upper ? ">=" : "<=");
	return ox_cg_map(cg, g, d, 3,
			 n->nin > 1 && n->in[1] >= 0 ? "const int64_t k = (int64_t)in1[0];\n" : "const int64_t k = 0;\n", body);
}

/* one (outer i0, inner i1) pair's running sum or product over t < L of
 * the elements p = i0 * LI + t * I + i1 (rev: from the end), as
 * statements at their own indent (ox_cg_map's) */
static void cum_body(ox_buf *b, const ox_node *n, int dt, const char *L, const char *I, const char *LI)
{
	const int excl = ox_attr_int(n, "exclusive", 0) != 0, rev = ox_attr_int(n, "reverse", 0) != 0;
	const int sum = n->op == OX_OP_CumSum;
	const char *C = ox_cg_ntype(dt);
	char upd[300];
	ox_cg_snprintf(upd, sizeof upd, "\tacc = (%s)(acc %c %s);\n", C, sum ? '+' : '*', ox_cg_load(dt, "in0[p]"));
	ox_buf_printf(b, "%s acc = %s;\nfor ($I t = 0; t < %s; t++) {\n", C, sum ? "0" : "1", L);
	if (rev)
		ox_buf_printf(b, "\tconst $I p = i0 * %s + (%s - 1 - t) * %s + i1;\n", LI, L, I);
	else
		ox_buf_printf(b, "\tconst $I p = i0 * %s + t * %s + i1;\n", LI, I);
	ox_buf_printf(b, "%s\tout0[p] = %s;\n%s}\n", excl ? "" : upd, store_of(dt, "acc"), excl ? upd : "");
}

static int emit_cum(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int axis, dt = dtype_of(g, n->in[0]), r = xs->rank;
	if (ox_index_axis(g, n, &axis))
		return -1;
	if (prod(g, xs, 0, r) == 0)
		return 0;
	if (axis < 0) {
		if (r < 1)
			return ox_error(g, n, "the input has rank 0");
		ox_cg_line(cg, 1, "/* the axis, read from the data */");
		ox_cg_printf(cg, "\tconst int64_t dims[%d] = {", r);
		for (int k = 0; k < r; k++)
			ox_cg_printf(cg, "%s%s", k ? ", " : "", D(cg, xs->d[k]));
		ox_cg_printf(cg, "};\n");
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_cg_line(cg, 1, "int64_t a = (int64_t)in1[0];");
		ox_cg_line(cg, 1, "if (a < 0)");
		ox_cg_line(cg, 2, "a += %d;", r);
		ox_cg_line(cg, 1, "if (a < 0 || a >= %d)", r);
		ox_cg_line(cg, 2, "return 1; /* axis out of range */");
		ox_cg_line(cg, 1, "int64_t O = 1, I = 1;");
		ox_cg_line(cg, 1, "for (int64_t k = 0; k < %d; k++) {", r);
		ox_cg_line(cg, 2, "if (k < a)");
		ox_cg_line(cg, 3, "O *= dims[k];");
		ox_cg_line(cg, 2, "else if (k > a)");
		ox_cg_line(cg, 3, "I *= dims[k];");
		ox_cg_line(cg, 1, "}");
		ox_cg_line(cg, 1, "const int64_t L = dims[a], LI = L * I;");
		ox_buf body = {0};
		cum_body(&body, n, dt, "L", "I", "LI");
		ox_cg_line(cg, 1, "for (ptrdiff_t i0 = 0; i0 < O; i0++)");
		ox_cg_line(cg, 1, "for (ptrdiff_t i1 = 0; i1 < I; i1++) {");
		ox_cg_lines(cg, 2, body.s);
		ox_cg_line(cg, 1, "}");
		ox_buf_free(&body);
		return 0;
	}
	/* a constant axis: a map over (outer, inner), each running along L */
	const ox_dim L = xs->d[axis], I = prod(g, xs, axis + 1, r), d[2] = {prod(g, xs, 0, axis), I};
	ox_buf body = {0};
	cum_body(&body, n, dt, ox_cg_map_dim(cg, L), ox_cg_map_dim(cg, I), ox_cg_map_dim(cg, ox_dim_mul(g, L, I)));
	int rc = ox_cg_map(cg, g, d, 2, "", body.s);
	ox_buf_free(&body);
	return rc;
}

/* TopK by insertion into the k-long index list (out1): an element enters
 * only when strictly better than the one before it, so among equal values
 * the lower index comes first, as the spec asks. A k read from the data
 * is checked (0 <= k <= axis) and sets the outputs' axis. */
static int emit_topk(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int axis, dt = dtype_of(g, n->in[0]);
	if (ox_index_axis(g, n, &axis))
		return -1;
	ox_dim O = prod(g, xs, 0, axis), L = xs->d[axis], I = prod(g, xs, axis + 1, xs->rank);
	ox_dim K = shp(g, n->out[0] >= 0 ? n->out[0] : n->out[1])->d[axis];
	const char *better = ox_attr_int(n, "largest", 1) ? ">" : "<";
	if (defines(g, n, K)) {
		/* ox_cg_set_dim checks 0 <= k <= its bound, which is the axis
		 * unless that is a run-time dim */
		ox_cg_line(cg, 1, "const int64_t k = in1[0];");
		if (L < 0 || ox_dim_hi(g, K) > L) {
			ox_cg_line(cg, 1, "if (k > %s)", D(cg, L));
			ox_cg_line(cg, 2, "return 2; /* k is more than the axis */");
			cg->fails_shape = 1;
		}
		ox_cg_set_dim(cg, 1, K, "k");
		check_cap(cg, g, n);
	} else {
		check_dims(cg, K, 1, L, "k is more than the axis");
	}
	if (ox_dim_mul(g, ox_dim_mul(g, O, I), K) == 0)
		return 0;
	if (n->out[1] < 0)
		return ox_error(g, n, "the indices output is needed as scratch space; it is omitted");
	int lvl = open_loop(cg, 1, "o", O);
	if (I != 1)
		lvl = open_loop(cg, lvl, "i", I);
	ox_cg_line(cg, lvl, "const %s *x = in0 + %s%s;", ox_cg_ctype(dt), mul(cg, "o", ox_dim_mul(g, L, I)),
		   I != 1 ? " + i" : "");
	ox_cg_line(cg, lvl, "int64_t *ix = out1 + %s%s;", mul(cg, "o", ox_dim_mul(g, K, I)), I != 1 ? " + i" : "");
	ox_cg_line(cg, lvl, "ptrdiff_t m = 0; /* entries in ix so far */");
	ox_cg_line(cg, lvl, "for (ptrdiff_t t = 0; t < %s; t++) {", D(cg, L));
	char xt[EXPR];
	ox_cg_snprintf(xt, sizeof xt, "x[%s]", mul(cg, "t", I));
	ox_cg_line(cg, lvl + 1, "const %s v = %s;", ox_cg_ntype(dt), ox_cg_load(dt, xt));
	ox_cg_line(cg, lvl + 1, "ptrdiff_t s = m;");
	char w[EXPR];
	char ws[EXPR];
	ox_cg_snprintf(ws, sizeof ws, "ix[%s]", I == 1 ? "s - 1" : mul(cg, "(s - 1)", I));
	ox_cg_snprintf(w, sizeof w, "x[%s]", mul(cg, ws, I));
	ox_cg_line(cg, lvl + 1, "while (s > 0 && v %s %s)", better, ox_cg_load(dt, w));
	ox_cg_line(cg, lvl + 2, "s--;");
	ox_cg_line(cg, lvl + 1, "if (s >= %s)", D(cg, K));
	ox_cg_line(cg, lvl + 2, "continue;");
	if (K >= 0)
		ox_cg_line(cg, lvl + 1, "for (ptrdiff_t u = m < %lld ? m : %lld; u > s; u--)", (long long)K,
			   (long long)(K - 1));
	else
		ox_cg_line(cg, lvl + 1, "for (ptrdiff_t u = m < %s ? m : %s - 1; u > s; u--)", D(cg, K), D(cg, K));
	ox_cg_line(cg, lvl + 2, "ix[%s] = ix[%s];", mul(cg, "u", I), I == 1 ? "u - 1" : mul(cg, "(u - 1)", I));
	ox_cg_line(cg, lvl + 1, "ix[%s] = t;", mul(cg, "s", I));
	ox_cg_line(cg, lvl + 1, "if (m < %s)", D(cg, K));
	ox_cg_line(cg, lvl + 2, "m++;");
	ox_cg_line(cg, lvl, "}");
	ox_cg_line(cg, lvl, "for (ptrdiff_t u = 0; u < %s; u++)", D(cg, K));
	char xu[EXPR];
	ox_cg_snprintf(xu, sizeof xu, "ix[%s]", mul(cg, "u", I));
	char ou[EXPR];
	ox_cg_snprintf(ou, sizeof ou, "%s", mul(cg, "o", ox_dim_mul(g, K, I)));
	ox_cg_line(cg, lvl + 1, "out0[%s + %s%s] = x[%s];", ou, mul(cg, "u", I), I != 1 ? " + i" : "", mul(cg, xu, I));
	close_loops(cg, lvl, 1);
	return 0;
}

/* OneHot; a depth read from the data (any numeric type, converted as Cast
 * does) sets the output's axis */
static int emit_onehot(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *is = shp(g, n->in[0]);
	int axis, it = dtype_of(g, n->in[0]);
	if (ox_index_axis(g, n, &axis))
		return -1;
	ox_dim dep = shp(g, n->out[0])->d[axis], O = prod(g, is, 0, axis), I = prod(g, is, axis, is->rank);
	check_dims(cg, ox_shape_numel_dim(g, shp(g, n->in[2])), 0, 2, "values must have two elements");
	if (defines(g, n, dep)) {
		int ddt = dtype_of(g, n->in[1]);
		if (ox_dtype_is_float(ddt))
			ox_cg_line(cg, 1, "const int64_t depth = %s(%s);", ox_cg_f2i(cg, OX_I64), ox_cg_load(ddt, "in1[0]"));
		else
			ox_cg_line(cg, 1, "const int64_t depth = (int64_t)in1[0];");
		ox_cg_set_dim(cg, 1, dep, "depth"); /* which checks 0 <= depth */
		check_cap(cg, g, n);
	}
	if (ox_dim_mul(g, ox_dim_mul(g, O, dep), I) == 0)
		return 0;
	int lvl = open_loop(cg, 1, "o", O);
	lvl = open_loop(cg, lvl, "d", dep);
	lvl = open_loop(cg, lvl, "i", I);
	char src[EXPR];
	ox_cg_snprintf(src, sizeof src, "in0[o * %s + i]", D(cg, I));
	/* float indices truncate toward zero, as the reference's astype does
	 * (beyond int64 saturate, NaN is out of range: all off_value) */
	if (ox_dtype_is_float(it)) {
		ox_cg_line(cg, lvl, "const double v = %s;", ox_cg_load(it, src));
		ox_cg_line(cg, lvl, "int64_t j = v != v ? %s : %s(v);", D(cg, dep), ox_cg_f2i(cg, OX_I64));
	} else {
		ox_cg_line(cg, lvl, "int64_t j = (int64_t)%s;", ox_cg_load(it, src));
	}
	ox_cg_line(cg, lvl, "if (j < 0)");
	ox_cg_line(cg, lvl + 1, "j += %s;", D(cg, dep));
	ox_cg_line(cg, lvl, "out0[(o * %s + d) * %s + i] = j == d ? in2[1] : in2[0];", D(cg, dep), D(cg, I));
	close_loops(cg, lvl, 1);
	return 0;
}

/* a comma-separated list of integers, wrapped every 16 */
static void emit_table(ox_cg *cg, const char *name, const int64_t *v, int64_t m)
{
	ox_cg_printf(cg, "\tstatic const int64_t %s[%lld] = {", name, (long long)m);
	for (int64_t i = 0; i < m; i++)
		ox_cg_printf(cg, "%s%lld%s", i % 16 ? " " : "\n\t\t", (long long)v[i], i + 1 < m ? "," : "");
	ox_cg_printf(cg, "\n\t};\n");
}

/* Compress. A condition read at run time: count the selected positions,
 * set the output's axis, then copy the O x K x I result */
static int emit_compress(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]), *ys = shp(g, n->out[0]);
	const ox_tensor *c = ox_in_const(g, n, 1);
	ox_dim O = 1, L = prod(g, xs, 0, xs->rank), I = 1, Kd = ys->d[0];
	if (ox_attr_get(n, "axis")) {
		int axis;
		if (ox_index_axis(g, n, &axis))
			return -1;
		O = prod(g, xs, 0, axis), L = xs->d[axis], I = prod(g, xs, axis + 1, xs->rank), Kd = ys->d[axis];
	}
	if (defines(g, n, Kd)) {
		int cdt = dtype_of(g, n->in[1]);
		ox_dim lim = ox_dim_op(g, OX_DE_MIN, shp(g, n->in[1])->d[0], L);
		char t[64];
		ox_cg_snprintf(t, sizeof t, "%s != 0", ox_cg_load(cdt, "in1[i]"));
		ox_cg_line(cg, 1, "int64_t K = 0;");
		ox_cg_line(cg, 1, "for (int64_t i = 0; i < %s; i++)", D(cg, lim));
		ox_cg_line(cg, 2, "K += %s;", t);
		ox_cg_set_dim(cg, 1, Kd, "K");
		check_cap(cg, g, n);
		ox_cg_line(cg, 1, "for (int64_t o = 0, k = 0; o < %s; o++, k = 0)", D(cg, O));
		ox_cg_line(cg, 2, "for (int64_t i = 0; i < %s; i++)", D(cg, lim));
		ox_cg_line(cg, 3, "if (%s)", t);
		ox_cg_line(cg, 4, "memcpy(out0 + (o * K + k++) * %s, in0 + (o * %s + i) * %s, %s);", D(cg, I), D(cg, L),
			   D(cg, I), bytes_of(cg, I, "out0"));
		return 0;
	}
	/* a constant condition that selects the same positions whatever the
	 * run-time axis (infer_index.c): those below its least */
	int64_t lo, hi;
	if (!c || ox_dim_range(g, L, &lo, &hi))
		return ox_error(g, n, "the condition is not a constant");
	int64_t K = ox_index_count(c, lo), m = ox_tensor_numel(c), k = 0;
	if (ox_dim_mul(g, ox_dim_mul(g, O, K), I) == 0)
		return 0;
	int64_t *sel = ox_ir_alloc(g, (size_t)K * sizeof *sel);
	for (int64_t i = 0; i < m && i < lo; i++)
		if (ox_tensor_get_f64(c, i) != 0)
			sel[k++] = i;
	ox_cg_line(cg, 1, "/* the positions where the constant condition is true */");
	emit_table(cg, "sel", sel, K);
	int lvl = open_loop(cg, 1, "o", O);
	lvl = open_loop(cg, lvl, "s", K);
	if (I == 1)
		ox_cg_line(cg, lvl, "out0[o * %lld + s] = in0[o * %s + sel[s]];", (long long)K, D(cg, L));
	else
		ox_cg_line(cg, lvl, "memcpy(out0 + (o * %lld + s) * %s, in0 + (o * %s + sel[s]) * %s, %s);",
			   (long long)K, D(cg, I), D(cg, L), D(cg, I), bytes_of(cg, I, "out0"));
	close_loops(cg, lvl, 1);
	return 0;
}

/* NonZero: of a constant that constant folding left alone, a table
 * computed here; else count, set the output's dim, then write the
 * [rank, count] tensor */
static int emit_nonzero(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_tensor *x = ox_in_const(g, n, 0);
	if (!x) {
		const ox_shape *xs = shp(g, n->in[0]);
		ox_dim cd = shp(g, n->out[0])->d[1];
		int dt = dtype_of(g, n->in[0]), r = xs->rank;
		ox_dim m = prod(g, xs, 0, r);
		if (cd == 0)
			return 0; /* an empty input */
		char nz[64];
		ox_cg_snprintf(nz, sizeof nz, "%s != 0", ox_cg_load(dt, "in0[i]"));
		ox_cg_line(cg, 1, "int64_t cnt = 0, j = 0;");
		ox_cg_line(cg, 1, "for (int64_t i = 0; i < %s; i++)", D(cg, m));
		ox_cg_line(cg, 2, "cnt += %s;", nz);
		ox_cg_set_dim(cg, 1, cd, "cnt");
		check_cap(cg, g, n);
		ox_cg_line(cg, 1, "for (int64_t i = 0; i < %s; i++) {", D(cg, m));
		ox_cg_line(cg, 2, "if (!(%s))", nz);
		ox_cg_line(cg, 3, "continue;");
		ox_cg_line(cg, 2, r ? "int64_t rest = i;" : "(void)i;");
		for (int k = r - 1; k >= 0; k--) {
			ox_cg_line(cg, 2, "out0[%d * cnt + j] = rest %% %s;", k, D(cg, xs->d[k]));
			if (k)
				ox_cg_line(cg, 2, "rest /= %s;", D(cg, xs->d[k]));
		}
		ox_cg_line(cg, 2, "j++;");
		ox_cg_line(cg, 1, "}");
		return 0;
	}
	int r = x->shape.rank;
	int64_t m = ox_tensor_numel(x), cnt = ox_index_count(x, -1), j = 0;
	if (cnt * r == 0)
		return 0;
	int64_t *v = ox_ir_alloc(g, (size_t)(cnt * r) * sizeof *v);
	for (int64_t i = 0; i < m; i++) {
		if (ox_tensor_get_f64(x, i) == 0)
			continue;
		int64_t rest = i;
		for (int k = r - 1; k >= 0; k--) {
			v[k * cnt + j] = rest % x->shape.d[k];
			rest /= x->shape.d[k];
		}
		j++;
	}
	emit_table(cg, "nz", v, cnt * r);
	ox_cg_line(cg, 1, "memcpy(out0, nz, sizeof nz);");
	return 0;
}

/* Pull in templates/NAME.c for dt */
static int use_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, const char *name, int dt)
{
	if (ox_cg_use(cg, name, dt))
		return ox_error(g, n, "kernel template templates/%s.c is missing", name);
	return 0;
}

int64_t ox_cg_most(ox_graph *g, const ox_node *n, ox_dim d, ox_dim *rest, int64_t *caps, int *nrest)
{
	int64_t most = ox_dim_hi(g, d);
	*nrest = 0;
	for (int k = 0; k < n->nout - n->scratch; k++) {
		const ox_value *v = ox_out(g, n, k);
		if (!v || v->cap <= 0)
			continue;
		ox_dim other = 1;
		int has = 0;
		for (int j = 0; j < v->shape.rank; j++)
			if (v->shape.d[j] == d && !has)
				has = 1;
			else
				other = ox_dim_mul(g, other, v->shape.d[j]);
		if (!has || other == 0)
			continue;
		if (other > 0 && v->cap / other < most)
			most = v->cap / other;
		else if (other < 0 && *nrest < OX_CG_MOST_REST)
			rest[*nrest] = other, caps[(*nrest)++] = v->cap;
	}
	return most;
}

/* "int64_t most = ...;": ox_cg_most's count, less where an output whose
 * other dims are run-time ones holds fewer (what a kernel that writes them
 * directly may write). Returns 1 when it may be less than d's bound, so
 * that the count must be checked against it, not only against the bound. */
static int emit_most(ox_cg *cg, ox_graph *g, const ox_node *n, ox_dim d)
{
	ox_dim rest[OX_CG_MOST_REST];
	int64_t caps[OX_CG_MOST_REST];
	int nrest;
	const int64_t most = ox_cg_most(g, n, d, rest, caps, &nrest);
	ox_cg_line(cg, 1, "%sint64_t most = %lld;", nrest ? "" : "const ", (long long)most);
	for (int k = 0; k < nrest; k++) {
		const char *o = D(cg, rest[k]);
		ox_cg_line(cg, 1, "if (%s > 0 && most > %lld / %s)", o, (long long)caps[k], o);
		ox_cg_line(cg, 2, "most = %lld / %s;", (long long)caps[k], o);
	}
	return nrest || most < ox_dim_hi(g, d);
}

/* NonMaxSuppression (templates/nms.c): the selected rows go compacted to
 * out0 and set its first dim; the last output is the kernel's scratch */
static int emit_nms(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *bs = shp(g, n->in[0]), *ss = shp(g, n->in[1]);
	int dt = dtype_of(g, n->in[0]);
	ox_dim B = bs->d[0], N = bs->d[1], C = ss->d[1];
	if (n->out[0] < 0 || !n->scratch)
		return ox_error(g, n, "selected_indices is omitted or the scratch memory is missing");
	ox_dim num = shp(g, n->out[0])->d[0];
	check_dims(cg, bs->d[2], 0, 4, "boxes are not [B, N, 4]");
	check_dims(cg, ss->d[0], 0, B, "scores are not [B, C, N]");
	check_dims(cg, ss->d[2], 0, N, "scores are not [B, C, N]");
	if (num == 0) {
		ox_cg_line(cg, 1, "/* max_output_boxes_per_class is 0, or there are no boxes: nothing selected */");
		return 0;
	}
	if (use_tmpl(cg, g, n, "msort", OX_I64) || use_tmpl(cg, g, n, "nms", dt))
		return -1;
	int has_iou = n->nin > 3 && n->in[3] >= 0, has_sthr = n->nin > 4 && n->in[4] >= 0;
	const ox_tensor *t = ox_in_const(g, n, 2);
	char per[EXPR];
	if (t) {
		int64_t mo = ox_tensor_get_i64(t, 0);
		ox_cg_snprintf(per, sizeof per, "%s", D(cg, ox_dim_op(g, OX_DE_MIN, mo > 0 ? mo : 0, N)));
	} else {
		/* read when it runs: a negative count selects nothing, as onnxruntime */
		ox_cg_line(cg, 1, "int64_t per = (int64_t)in2[0];");
		ox_cg_line(cg, 1, "per = per < 0 ? 0 : per > %s ? %s : per;", D(cg, N), D(cg, N));
		ox_cg_snprintf(per, sizeof per, "per");
	}
	int less = emit_most(cg, g, n, num);
	ox_cg_line(cg, 1, "/* boxes [%s, %s, 4], scores [%s, %s, %s]%s%s%s */", D(cg, B), D(cg, N), D(cg, B), D(cg, C),
		   D(cg, N), t ? ", at most " : "", t ? per : "", t ? " per class" : "");
	ox_cg_lstart(cg, 1, "const int64_t cnt = ox_nms_%s(in0, in1, %s, %s, %s, %s, %d, %s, %d, ",
		   ox_cg_sfx(dt), D(cg, B), D(cg, C), D(cg, N), per, ox_attr_int(n, "center_point_box", 0) != 0,
		   has_iou ? "in3[0]" : "0.0f", has_sthr);
	ox_cg_printf(cg, "%s, out0, most, "
		   "(int64_t *)(void *)out%d);\n",
		   has_sthr ? "in4[0]" : "0.0f", n->nout - 1);
	if (less) {
		ox_cg_line(cg, 1, "if (cnt > most)");
		ox_cg_line(cg, 2, "return 2; /* more than the code was planned for */");
		cg->fails_shape = 1;
	}
	ox_cg_set_dim(cg, 1, num, "cnt");
	return 0;
}

/* Unique (templates/unique.c): the outputs present are written compacted;
 * the unique count u sets the dim of Y, indices and counts */
static int emit_unique(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int dt = dtype_of(g, n->in[0]), nout = n->nout - n->scratch;
	ox_dim O = 1, L = prod(g, xs, 0, xs->rank), I = 1, u = 0;
	int has_u = 0; /* an output has u (ids of dims are negative: no sentinel) */
	if (!n->scratch)
		return ox_error(g, n, "the scratch memory is missing");
	int axis = 0;
	if (ox_attr_get(n, "axis")) {
		axis = ox_norm_axis(ox_attr_int(n, "axis", 0), xs->rank);
		if (axis < 0)
			return ox_error(g, n, "axis is out of range");
		O = prod(g, xs, 0, axis), L = xs->d[axis], I = prod(g, xs, axis + 1, xs->rank);
	}
	for (int k = 0; k < nout && !has_u; k++)
		if (k != 2 && n->out[k] >= 0)
			u = shp(g, n->out[k])->d[k ? 0 : axis], has_u = 1;
	char nan[160], key[32];
	ox_cg_snprintf(key, sizeof key, "uq_nan/%s", ox_cg_sfx(dt));
	if (ox_dtype_is_float(dt))
		ox_cg_snprintf(nan, sizeof nan, "OX_STATIC inline int ox_uq_nan_%s(%s v) { return v != v; }\n", ox_cg_sfx(dt),
			 ox_cg_ntype(dt));
	else
		ox_cg_snprintf(nan, sizeof nan, "OX_STATIC inline int ox_uq_nan_%s(%s v) { (void)v; return 0; }\n", ox_cg_sfx(dt),
			 ox_cg_ntype(dt));
	ox_cg_helper(cg, key, nan);
	if (use_tmpl(cg, g, n, "msort", OX_I64) || use_tmpl(cg, g, n, "unique", dt))
		return -1;
	char arg[4][16];
	for (int k = 0; k < 4; k++)
		ox_cg_snprintf(arg[k], sizeof arg[k], k < nout && n->out[k] >= 0 ? "out%d" : "NULL", k);
	int set = has_u && defines(g, n, u), less = 0;
	if (set)
		less = emit_most(cg, g, n, u);
	else
		ox_cg_line(cg, 1, "const int64_t most = %s; /* u is at most this */", D(cg, L));
	ox_cg_lstart(cg, 1, "const int64_t u = ox_unique_%s(in0, %s, %s, %s, %d, most, (int64_t *)(void *)out%d, %s, %s, ",
		   ox_cg_sfx(dt), D(cg, O), D(cg, L), D(cg, I), ox_attr_int(n, "sorted", 1) != 0, n->nout - 1, arg[0],
		   arg[1]);
	ox_cg_printf(cg, "%s, %s);\n",
		   arg[2], arg[3]);
	if (less) {
		ox_cg_line(cg, 1, "if (u > most)");
		ox_cg_line(cg, 2, "return 2; /* more than the code was planned for */");
		cg->fails_shape = 1;
	}
	if (set) {
		ox_cg_set_dim(cg, 1, u, "u");
	} else {
		ox_cg_line(cg, 1, "(void)u;");
	}
	return 0;
}

static int emit_eyelike(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *ys = shp(g, n->out[0]);
	int dt = dtype_of(g, n->out[0]);
	ox_dim R = ys->d[0], C = ys->d[1];
	int64_t k = ox_attr_int(n, "k", 0);
	char one[32];
	if (dt == OX_F16 || dt == OX_BF16)
		ox_cg_snprintf(one, sizeof one, "0x%04x", dt == OX_F16 ? ox_f32_to_f16(1.0f) : ox_f32_to_bf16(1.0f));
	else
		ox_cg_snprintf(one, sizeof one, "%s", ox_cg_lit(dt, 1));
	if (ox_dim_mul(g, R, C) == 0)
		return 0;
	ox_cg_line(cg, 1, "memset(out0, 0, %s);", bytes_of(cg, ox_dim_mul(g, R, C), "out0"));
	int64_t i0 = k < 0 ? -k : 0;
	if (R >= 0 && C >= 0) {
		int64_t i1 = C - k < R ? C - k : R;
		if (i0 < i1)
			ox_cg_line(cg, 1, "for (ptrdiff_t i = %lld; i < %lld; i++)\n\t\tout0[i * %lld + i + %lld] = %s;",
				   (long long)i0, (long long)i1, (long long)C, (long long)k, one);
		return 0;
	}
	/* the diagonal's end, i < R and i + k < C, when it runs */
	ox_cg_line(cg, 1, "for (ptrdiff_t i = %lld; i < %s && i + %lld < %s; i++)", (long long)i0, D(cg, R),
		   (long long)k, D(cg, C));
	ox_cg_line(cg, 2, "out0[i * %s + i + %lld] = %s;", D(cg, C), (long long)k, one);
	return 0;
}

/* DepthToSpace / SpaceToDepth, looping in output order */
static int emit_space(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]), *ys = shp(g, n->out[0]);
	int64_t b = ox_attr_int(n, "blocksize", 1);
	ox_dim N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	/* run-time dims the blocks must divide */
	if (n->op == OX_OP_DepthToSpace && C < 0)
		check_dims(cg, ox_dim_mul(g, ys->d[1], b * b), 0, C, "channels are not a multiple of blocksize^2");
	for (int k = 2; k < 4 && n->op == OX_OP_SpaceToDepth; k++)
		if (xs->d[k] < 0)
			check_dims(cg, ox_dim_mul(g, ys->d[k], b), 0, xs->d[k], "a spatial dim is not a multiple of blocksize");
	if (prod(g, xs, 0, 4) == 0)
		return 0;
	ox_cg_line(cg, 1, "%s *q = out0;", ox_cg_ctype(dtype_of(g, n->out[0])));
	if (n->op == OX_OP_DepthToSpace) {
		ox_dim Co = ys->d[1];
		int crd = !strcmp(ox_attr_str(n, "mode", "DCR"), "CRD");
		int lvl = open_loop(cg, 1, "n", N);
		lvl = open_loop(cg, lvl, "c", Co);
		lvl = open_loop(cg, lvl, "h", H);
		lvl = open_loop(cg, lvl, "i", b);
		lvl = open_loop(cg, lvl, "w", W);
		lvl = open_loop(cg, lvl, "j", b);
		if (crd)
			ox_cg_line(cg, lvl, "*q++ = in0[((n * %s + c * %lld + i * %lld + j) * %s + h) * %s + w];", D(cg, C),
				   (long long)(b * b), (long long)b, D(cg, H), D(cg, W));
		else
			ox_cg_line(cg, lvl, "*q++ = in0[((n * %s + (i * %lld + j) * %s + c) * %s + h) * %s + w];", D(cg, C),
				   (long long)b, D(cg, Co), D(cg, H), D(cg, W));
		close_loops(cg, lvl, 1);
	} else {
		int lvl = open_loop(cg, 1, "n", N);
		lvl = open_loop(cg, lvl, "i", b);
		lvl = open_loop(cg, lvl, "j", b);
		lvl = open_loop(cg, lvl, "c", C);
		lvl = open_loop(cg, lvl, "h", ys->d[2]);
		lvl = open_loop(cg, lvl, "w", ys->d[3]);
		ox_cg_line(cg, lvl, "*q++ = in0[((n * %s + c) * %s + h * %lld + i) * %s + w * %lld + j];", D(cg, C),
			   D(cg, H), (long long)b, D(cg, W), (long long)b);
		close_loops(cg, lvl, 1);
	}
	return 0;
}

static int emit_revseq(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int ta = (int)ox_attr_int(n, "time_axis", 0);
	ox_dim T = xs->d[ta], B = xs->d[1 - ta], I = prod(g, xs, 2, xs->rank);
	check_dims(cg, shp(g, n->in[1])->d[0], 0, B, "sequence_lens has not one length per batch");
	if (ox_dim_mul(g, ox_dim_mul(g, T, B), I) == 0)
		return 0;
	char pos[2][EXPR];
	for (int s = 0; s < 2; s++) {
		const char *t = s ? "u" : "t";
		if (ta == 0)
			ox_cg_snprintf(pos[s], sizeof pos[s], "(%s * %s + b) * %s", t, D(cg, B), D(cg, I));
		else
			ox_cg_snprintf(pos[s], sizeof pos[s], "(b * %s + %s) * %s", D(cg, T), t, D(cg, I));
	}
	int lvl = open_loop(cg, 1, "b", B);
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, lvl, "const int64_t len = (int64_t)in1[b];");
	ox_cg_line(cg, lvl, "if (len < 0 || len > %s)", D(cg, T));
	ox_cg_line(cg, lvl + 1, "return 1; /* a sequence length out of range */");
	lvl = open_loop(cg, lvl, "t", T);
	ox_cg_line(cg, lvl, "const ptrdiff_t u = t < len ? (ptrdiff_t)len - 1 - t : t;");
	ox_cg_line(cg, lvl, "memcpy(out0 + %s, in0 + %s, %s);", pos[0], pos[1], bytes_of(cg, I, "out0"));
	close_loops(cg, lvl, 1);
	return 0;
}

static int emit_shrink(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int dt = dtype_of(g, n->in[0]);
	ox_dim m = prod(g, shp(g, n->in[0]), 0, shp(g, n->in[0])->rank);
	double lam = ox_attr_float(n, "lambd", 0.5f), bias = ox_attr_float(n, "bias", 0.0f);
	char lam_s[64], mlam_s[64], bias_s[64];
	ox_cg_snprintf(lam_s, sizeof lam_s, "%s", ox_cg_lit(OX_F64, lam));
	ox_cg_snprintf(mlam_s, sizeof mlam_s, "%s", ox_cg_lit(OX_F64, -lam));
	ox_cg_snprintf(bias_s, sizeof bias_s, "%s", ox_cg_lit(OX_F64, bias));
	if (m == 0)
		return 0;
	/* in double: each result is one rounding of the exact value, as in the
	 * input's own precision */
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %s; i++) {", D(cg, m));
	ox_cg_line(cg, 2, "const double v = %s;", ox_cg_load(dt, "in0[i]"));
	char e[512];
	ox_cg_snprintf(e, sizeof e, "v < %s ? v + %s : v > %s ? v - %s : 0.0", mlam_s, bias_s, lam_s, bias_s);
	if (dt == OX_F16 || dt == OX_BF16) {
		ox_cg_line(cg, 2, "const float r = (float)(%s);", e);
		ox_cg_line(cg, 2, "out0[i] = %s;", ox_cg_store(dt, "r"));
	} else {
		ox_cg_line(cg, 2, "out0[i] = (%s)(%s);", ox_cg_ctype(dt), e);
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* NegativeLogLikelihoodLoss, and SoftmaxCrossEntropyLoss (sce != 0), which
 * is the same on the log-softmax over C, computed per (n, d) position */
static int emit_loss(ox_cg *cg, ox_graph *g, ox_node *n, int sce)
{
	const ox_shape *xs = shp(g, n->in[0]), *ts = shp(g, n->in[1]);
	int dt = dtype_of(g, n->in[0]);
	ox_dim N = xs->d[0], C = xs->d[1], S = prod(g, xs, 2, xs->rank);
	const char *red = ox_attr_str(n, "reduction", "mean");
	int none = !strcmp(red, "none"), mean = !strcmp(red, "mean");
	int weighted = n->nin > 2 && n->in[2] >= 0, logp = sce && n->nout > 1 && n->out[1] >= 0;
	const ox_attr *ii = ox_attr_get(n, "ignore_index");
	char xe[EXPR], pos[EXPR]; /* input element (n, c, d); position (n, d) */
	for (int k = 0; k < ts->rank; k++)
		check_dims(cg, ts->d[k], 0, xs->d[k ? k + 1 : 0], "the target's dims are not the input's");
	if (weighted)
		check_dims(cg, shp(g, n->in[2])->d[0], 0, C, "the weight has not one element per class");
	if (S == 1) {
		ox_cg_snprintf(xe, sizeof xe, "in0[n * %s + c]", D(cg, C));
		ox_cg_snprintf(pos, sizeof pos, "n");
	} else {
		ox_cg_snprintf(xe, sizeof xe, "in0[(n * %s + c) * %s + d]", D(cg, C), D(cg, S));
		ox_cg_snprintf(pos, sizeof pos, "n * %s + d", D(cg, S));
	}
	/* a class c out of range (C may be a run-time dim) */
	char cbad[EXPR];
	if (C >= 0)
		ox_cg_snprintf(cbad, sizeof cbad, "(uint64_t)c >= %lld", (long long)C);
	else
		ox_cg_snprintf(cbad, sizeof cbad, "(c < 0 || c >= %s)", D(cg, C));
	if (!none)
		ox_cg_line(cg, 1, "double sum = 0, wsum = 0;");
	int lvl = 1;
	if (ox_dim_mul(g, N, S) != 0) {
		lvl = open_loop(cg, lvl, "n", N);
		if (S != 1)
			lvl = open_loop(cg, lvl, "d", S);
		if (sce) {
			/* log-sum-exp over the classes, shifted by the max */
			ox_cg_line(cg, lvl, "double mx = -INFINITY, se = 0;");
			ox_cg_line(cg, lvl, "for (ptrdiff_t c = 0; c < %s; c++)", D(cg, C));
			ox_cg_line(cg, lvl + 1, "mx = %s > mx ? %s : mx;", ox_cg_load(dt, xe), ox_cg_load(dt, xe));
			ox_cg_line(cg, lvl, "for (ptrdiff_t c = 0; c < %s; c++)", D(cg, C));
			ox_cg_line(cg, lvl + 1, "se += exp(%s - mx);", ox_cg_load(dt, xe));
			ox_cg_line(cg, lvl, "const double lse = mx + log(se);");
			if (logp) {
				char e[EXPR], o[EXPR + 8];
				ox_cg_snprintf(e, sizeof e, "%s - lse", ox_cg_load(dt, xe));
				ox_cg_snprintf(o, sizeof o, "out1%s", xe + 3);
				ox_cg_line(cg, lvl, "for (ptrdiff_t c = 0; c < %s; c++) {", D(cg, C));
				ox_cg_line(cg, lvl + 1, "const double lp = %s;", e);
				if (dt == OX_F16 || dt == OX_BF16)
					ox_cg_line(cg, lvl + 1, "%s = %s;", o, ox_cg_store(dt, "(float)(lp)"));
				else
					ox_cg_line(cg, lvl + 1, "%s = (%s)lp;", o, ox_cg_ctype(dt));
				ox_cg_line(cg, lvl, "}");
			}
		}
		ox_cg_line(cg, lvl, "const int64_t c = (int64_t)in1[%s];", pos);
		ox_cg_line(cg, lvl, "double l = 0, w = 0;");
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		if (ii) {
			ox_cg_line(cg, lvl, "if (c != %lld && %s)", (long long)ii->i, cbad);
			ox_cg_line(cg, lvl + 1, "return 1; /* a class out of range */");
			ox_cg_line(cg, lvl, "if (c != %lld) {", (long long)ii->i);
		} else {
			ox_cg_line(cg, lvl, "if (%s)", cbad);
			ox_cg_line(cg, lvl + 1, "return 1; /* a class out of range */");
			ox_cg_line(cg, lvl, "{");
		}
		ox_cg_line(cg, lvl + 1, "w = %s;", weighted ? ox_cg_load(dt, "in2[c]") : "1.0");
		ox_cg_line(cg, lvl + 1, "l = -(%s%s) * w;", ox_cg_load(dt, xe), sce ? " - lse" : "");
		ox_cg_line(cg, lvl, "}");
		if (none) {
			char o[EXPR + 8];
			ox_cg_snprintf(o, sizeof o, "out0[%s]", pos);
			if (dt == OX_F16 || dt == OX_BF16)
				ox_cg_line(cg, lvl, "%s = %s;", o, ox_cg_store(dt, "(float)l"));
			else
				ox_cg_line(cg, lvl, "%s = (%s)l;", o, ox_cg_ctype(dt));
		} else {
			ox_cg_line(cg, lvl, "sum += l;");
			ox_cg_line(cg, lvl, "wsum += w;");
		}
		close_loops(cg, lvl, 1);
	}
	if (!none) {
		/* mean divides by the summed weights (0/0 = NaN when all are ignored) */
		const char *e = mean ? "(float)(sum / wsum)" : "(float)sum";
		if (dt == OX_F16 || dt == OX_BF16)
			ox_cg_line(cg, 1, "out0[0] = %s;", ox_cg_store(dt, e));
		else
			ox_cg_line(cg, 1, "out0[0] = (%s)(%s);", ox_cg_ctype(dt), mean ? "sum / wsum" : "sum");
	}
	return 0;
}

/* ---- TensorScatter: copy the cache, then each batch's update rows land
 * at write_indices[b] + s along the sequence axis (mod its size when
 * circular; a linear write past the end is an index out of range). */
static int emit_tensorscatter(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]), *us = shp(g, n->in[1]);
	int axis, circ = !strcmp(ox_attr_str(n, "mode", "linear"), "circular");
	if (ox_index_axis(g, n, &axis))
		return -1;
	ox_dim B = xs->d[0], mid = prod(g, xs, 1, axis), L = xs->d[axis], S = us->d[axis];
	ox_dim inner = prod(g, xs, axis + 1, xs->rank);
	for (int k = 0; k < xs->rank; k++)
		check_dims(cg, us->d[k], k == axis, xs->d[k], "the update does not fit the cache");
	if (n->nin > 2 && n->in[2] >= 0)
		check_dims(cg, shp(g, n->in[2])->d[0], 0, B, "write_indices has not one index per batch");
	ox_cg_line(cg, 1, "memcpy(out0, in0, %s);", bytes_of(cg, prod(g, xs, 0, xs->rank), "out0"));
	if (prod(g, us, 0, us->rank) == 0)
		return 0;
	int lvl = open_loop(cg, 1, "b", B);
	if (n->nin > 2 && n->in[2] >= 0)
		ox_cg_line(cg, lvl, "const int64_t w0 = (int64_t)in2[b];");
	else
		ox_cg_line(cg, lvl, "const int64_t w0 = 0; /* write_indices omitted */");
	if (circ && L >= 0) {
		ox_cg_line(cg, lvl, "const int64_t w = w0 %% %lld; /* w0 + s cannot overflow */", (long long)L);
	} else if (circ) {
		/* an empty cache takes no update (S <= L) */
		ox_cg_line(cg, lvl, "const int64_t w = %s ? w0 %% %s : 0; /* w0 + s cannot overflow */", D(cg, L), D(cg, L));
	} else if (n->nin > 2 && n->in[2] >= 0) {
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_cg_line(cg, lvl, "if (w0 < 0 || w0 > %s)", D(cg, ox_dim_sub(g, L, S)));
		ox_cg_line(cg, lvl + 1, "return 1; /* a write past the cache */");
	}
	lvl = open_loop(cg, lvl, "o", mid);
	lvl = open_loop(cg, lvl, "s", S);
	if (circ) {
		ox_cg_line(cg, lvl, "int64_t t = (w + s) %% %s;", D(cg, L));
		ox_cg_line(cg, lvl, "if (t < 0)");
		ox_cg_line(cg, lvl + 1, "t += %s;", D(cg, L));
	} else {
		ox_cg_line(cg, lvl, "const int64_t t = w0 + s;");
	}
	ox_cg_line(cg, lvl, "memcpy(out0 + ((b * %s + o) * %s + t) * %s, in1 + ((b * %s + o) * %s + s) * %s, "
		   "%s);", D(cg, mid), D(cg, L), D(cg, inner), D(cg, mid), D(cg, S), D(cg, inner),
		   bytes_of(cg, inner, "out0"));
	close_loops(cg, lvl, 1);
	return 0;
}

int emit_index(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_GatherElements:
		return emit_elements(cg, g, n, 0);
	case OX_OP_ScatterElements:
	case OX_OP_Scatter:
		return emit_elements(cg, g, n, 1);
	case OX_OP_GatherND:
		return emit_nd(cg, g, n, 0);
	case OX_OP_ScatterND:
		return emit_nd(cg, g, n, 1);
	case OX_OP_Trilu:
		return emit_trilu(cg, g, n);
	case OX_OP_CumSum:
	case OX_OP_CumProd:
		return emit_cum(cg, g, n);
	case OX_OP_TopK:
		return emit_topk(cg, g, n);
	case OX_OP_OneHot:
		return emit_onehot(cg, g, n);
	case OX_OP_Compress:
		return emit_compress(cg, g, n);
	case OX_OP_NonZero:
		return emit_nonzero(cg, g, n);
	case OX_OP_NonMaxSuppression:
		return emit_nms(cg, g, n);
	case OX_OP_Unique:
		return emit_unique(cg, g, n);
	case OX_OP_EyeLike:
		return emit_eyelike(cg, g, n);
	case OX_OP_DepthToSpace:
	case OX_OP_SpaceToDepth:
		return emit_space(cg, g, n);
	case OX_OP_ReverseSequence:
		return emit_revseq(cg, g, n);
	case OX_OP_Shrink:
		return emit_shrink(cg, g, n);
	case OX_OP_NegativeLogLikelihoodLoss:
		return emit_loss(cg, g, n, 0);
	case OX_OP_SoftmaxCrossEntropyLoss:
		return emit_loss(cg, g, n, 1);
	case OX_OP_TensorScatter:
		return emit_tensorscatter(cg, g, n);
	}
	return ox_error(g, n, "no C emitter for this op");
}
