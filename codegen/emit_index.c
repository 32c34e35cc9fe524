/* emit_index.c: C for indexing, scatter/gather, cumulative ops, TopK,
 * OneHot, Compress, NonZero, NonMaxSuppression and Unique (kernels in
 * templates/nms.c, templates/unique.c), EyeLike, DepthToSpace/SpaceToDepth,
 * ReverseSequence, Shrink, the NLL / softmax cross-entropy losses and
 * TensorScatter.
 *
 * Every kernel is loops over literal bounds. Elements that are only moved
 * stay in their storage type; arithmetic goes through ox_cg_load/store
 * (f16/bf16 in float), and the losses accumulate in double. Indices read at
 * run time are wrapped once when negative and then checked (ox_cg_index):
 * one still out of range makes the node return 1 and the run
 * PREFIX_ERR_INDEX, before any access with it. Shape-steering inputs (k,
 * depth, condition, axis) are constants here; infer_index.c made sure of
 * it.
 */
#include "cg.h"
#include "../ir/family.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const ox_shape *shp(ox_graph *g, ox_id id)
{
	return &g->vals[id].shape;
}

static int dtype_of(ox_graph *g, ox_id id)
{
	return g->vals[id].dtype;
}

static int64_t prod(const ox_shape *s, int from, int to)
{
	int64_t p = 1;
	for (int k = from; k < to; k++)
		p *= s->d[k];
	return p;
}

/* "for (ptrdiff_t v = 0; v < n; v++) {", or nothing when n == 1 (then v is
 * defined as 0 so the index expressions stay valid); returns the new depth */
static int open_loop(ox_cg *cg, int lvl, const char *var, int64_t n)
{
	if (n == 1) {
		ox_cg_line(cg, lvl, "{");
		ox_cg_line(cg, lvl + 1, "const ptrdiff_t %s = 0;", var);
		return lvl + 1;
	}
	ox_cg_line(cg, lvl, "for (ptrdiff_t %s = 0; %s < %lld; %s++) {", var, var, (long long)n, var);
	return lvl + 1;
}

static void close_loops(ox_cg *cg, int lvl, int to)
{
	while (lvl > to)
		ox_cg_line(cg, --lvl, "}");
}

/* append " + coordinate k of flat index v (in shape s) * stride" to buf */
static void coord_term(char *buf, size_t cap, const char *v, const ox_shape *s, int k, int64_t stride)
{
	size_t len = strlen(buf);
	int64_t st = prod(s, k + 1, s->rank);
	char c[96];
	if (s->d[k] == 1 || stride == 0)
		return;
	if (k == 0 && st == 1)
		snprintf(c, sizeof c, "%s", v);
	else if (k == 0)
		snprintf(c, sizeof c, "%s / %lld", v, (long long)st);
	else if (st == 1)
		snprintf(c, sizeof c, "%s %% %lld", v, (long long)s->d[k]);
	else
		snprintf(c, sizeof c, "%s / %lld %% %lld", v, (long long)st, (long long)s->d[k]);
	if (stride == 1 && k == 0)
		snprintf(buf + len, cap - len, "%s%s", len ? " + " : "", c);
	else if (stride == 1)
		snprintf(buf + len, cap - len, "%s(%s)", len ? " + " : "", c);
	else
		snprintf(buf + len, cap - len, "%s(%s) * %lld", len ? " + " : "", c, (long long)stride);
}

/* "e * s" without the noise of "* 1"; rotating buffers, copy to keep */
static const char *mul(const char *e, int64_t s)
{
	static char buf[8][128];
	static int at;
	char *r = buf[at = (at + 1) % 8];
	if (s == 1)
		snprintf(r, 128, "%s", e);
	else
		snprintf(r, 128, "%s * %lld", e, (long long)s);
	return r;
}


/* storage expression for the double/float expression e */
static const char *store_of(int dt, const char *e)
{
	static char buf[4][600];
	static int at;
	char *r = buf[at = (at + 1) % 4];
	if (dt == OX_F16 || dt == OX_BF16)
		snprintf(r, 600, "%s", ox_cg_store(dt, e));
	else
		snprintf(r, 600, "(%s)(%s)", ox_cg_ctype(dt), e);
	return r;
}

/* dst = dst (reduction) src, both storage lvalues of dtype dt */
static void emit_combine(ox_cg *cg, int lvl, int dt, const char *red, const char *dst, const char *src)
{
	char a[256], b[256], e[1100];
	if (!strcmp(red, "none")) {
		ox_cg_line(cg, lvl, "%s = %s;", dst, src);
		return;
	}
	snprintf(a, sizeof a, "%s", ox_cg_load(dt, dst));
	snprintf(b, sizeof b, "%s", ox_cg_load(dt, src));
	if (!strcmp(red, "add"))
		snprintf(e, sizeof e, "%s + %s", a, b);
	else if (!strcmp(red, "mul"))
		snprintf(e, sizeof e, "%s * %s", a, b);
	else if (!strcmp(red, "max"))
		snprintf(e, sizeof e, "%s > %s ? %s : %s", b, a, b, a);
	else
		snprintf(e, sizeof e, "%s < %s ? %s : %s", b, a, b, a);
	ox_cg_line(cg, lvl, "%s = %s;", dst, store_of(dt, e));
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
	int64_t m = prod(is, 0, is->rank);
	if (scatter)
		ox_cg_line(cg, 1, "memcpy(out0, in0, %lld * sizeof *out0);", (long long)prod(xs, 0, xs->rank));
	if (m == 0)
		return 0;
	if (xs->d[axis] == 0)
		return ox_error(g, n, "indices into an empty axis");
	ox_cg_line(cg, 1, "for (ptrdiff_t o = 0; o < %lld; o++) {", (long long)m);
	ox_cg_index(cg, 2, "j", "in1[o]", xs->d[axis]);
	char off[512] = "";
	for (int k = 0; k < xs->rank; k++) {
		int64_t st = prod(xs, k + 1, xs->rank);
		if (k == axis) {
			size_t len = strlen(off);
			if (st == 1)
				snprintf(off + len, sizeof off - len, "%sj", len ? " + " : "");
			else
				snprintf(off + len, sizeof off - len, "%sj * %lld", len ? " + " : "", (long long)st);
		} else {
			coord_term(off, sizeof off, "o", is, k, st);
		}
	}
	ox_cg_line(cg, 2, "const ptrdiff_t p = %s;", off);
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
	int64_t P = prod(is, 0, q - 1), G = prod(is, (int)b, q - 1), R = prod(xs, (int)(b + last), r);
	int64_t BS = prod(xs, (int)b, r);
	if (scatter)
		ox_cg_line(cg, 1, "memcpy(out0, in0, %lld * sizeof *out0);", (long long)prod(xs, 0, r));
	if (P == 0 || R == 0)
		return 0;
	ox_cg_line(cg, 1, "for (ptrdiff_t p = 0; p < %lld; p++) {", (long long)P);
	if (G == P)
		ox_cg_line(cg, 2, "ptrdiff_t off = 0;");
	else
		ox_cg_line(cg, 2, "ptrdiff_t off = p / %lld * %lld;", (long long)G, (long long)BS);
	for (int64_t j = 0; j < last; j++) {
		char src[64], var[32];
		int ax = (int)(b + j);
		if (last == 1)
			snprintf(src, sizeof src, "in1[p]");
		else
			snprintf(src, sizeof src, "in1[p * %lld + %lld]", (long long)last, (long long)j);
		snprintf(var, sizeof var, "j%lld", (long long)j);
		if (xs->d[ax] == 0)
			return ox_error(g, n, "indices into an empty axis");
		ox_cg_line(cg, 2, "{");
		ox_cg_index(cg, 3, var, src, xs->d[ax]);
		ox_cg_line(cg, 3, "off += %s;", mul(var, prod(xs, ax + 1, r)));
		ox_cg_line(cg, 2, "}");
	}
	if (!scatter) {
		ox_cg_line(cg, 2, "memcpy(out0 + %s, in0 + off, %lld * sizeof *out0);", mul("p", R), (long long)R);
	} else {
		char src[64];
		snprintf(src, sizeof src, "in2[%s + i]", mul("p", R));
		ox_cg_line(cg, 2, "for (ptrdiff_t i = 0; i < %lld; i++)", (long long)R);
		emit_combine(cg, 3, dt, reduction(n), "out0[off + i]", src);
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_trilu(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int r = xs->rank;
	int64_t B = prod(xs, 0, r - 2), R = xs->d[r - 2], C = xs->d[r - 1];
	int upper = ox_attr_int(n, "upper", 1) != 0;
	if (B * R * C == 0)
		return 0;
	if (n->nin > 1 && n->in[1] >= 0)
		ox_cg_line(cg, 1, "const int64_t k = (int64_t)in1[0];");
	else
		ox_cg_line(cg, 1, "const int64_t k = 0;");
	int lvl = open_loop(cg, 1, "b", B);
	lvl = open_loop(cg, lvl, "i", R);
	lvl = open_loop(cg, lvl, "j", C);
	ox_cg_line(cg, lvl, "const ptrdiff_t p = (b * %lld + i) * %lld + j;", (long long)R, (long long)C);
	/* keep the elements on and above (upper) or below (lower) diagonal k */
	ox_cg_line(cg, lvl, "out0[p] = (int64_t)j - (int64_t)i %s k ? in0[p] : 0;", upper ? ">=" : "<=");
	close_loops(cg, lvl, 1);
	return 0;
}

static int emit_cum(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int axis, dt = dtype_of(g, n->in[0]);
	if (ox_index_axis(g, n, &axis))
		return -1;
	int64_t O = prod(xs, 0, axis), L = xs->d[axis], I = prod(xs, axis + 1, xs->rank);
	int excl = ox_attr_int(n, "exclusive", 0) != 0, rev = ox_attr_int(n, "reverse", 0) != 0;
	int sum = n->op == OX_OP_CumSum;
	if (O * L * I == 0)
		return 0;
	int lvl = open_loop(cg, 1, "o", O);
	lvl = open_loop(cg, lvl, "i", I);
	ox_cg_line(cg, lvl, "%s acc = %s;", ox_cg_ntype(dt), sum ? "0" : "1");
	ox_cg_line(cg, lvl, "for (ptrdiff_t t = 0; t < %lld; t++) {", (long long)L);
	if (rev)
		ox_cg_line(cg, lvl + 1, "const ptrdiff_t p = o * %lld + (%lld - t) * %lld + i;", (long long)(L * I),
		     (long long)(L - 1), (long long)I);
	else
		ox_cg_line(cg, lvl + 1, "const ptrdiff_t p = o * %lld + t * %lld + i;", (long long)(L * I), (long long)I);
	char upd[300];
	snprintf(upd, sizeof upd, "acc = (%s)(acc %c %s);", ox_cg_ntype(dt), sum ? '+' : '*', ox_cg_load(dt, "in0[p]"));
	if (!excl)
		ox_cg_line(cg, lvl + 1, "%s", upd);
	ox_cg_line(cg, lvl + 1, "out0[p] = %s;", store_of(dt, "acc"));
	if (excl)
		ox_cg_line(cg, lvl + 1, "%s", upd);
	ox_cg_line(cg, lvl, "}");
	close_loops(cg, lvl, 1);
	return 0;
}

/* TopK by insertion into the k-long index list (out1): an element enters
 * only when strictly better than the one before it, so among equal values
 * the lower index comes first, as the spec asks. */
static int emit_topk(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int axis, dt = dtype_of(g, n->in[0]);
	if (ox_index_axis(g, n, &axis))
		return -1;
	int64_t O = prod(xs, 0, axis), L = xs->d[axis], I = prod(xs, axis + 1, xs->rank);
	int64_t K = shp(g, n->out[0])->d[axis];
	const char *better = ox_attr_int(n, "largest", 1) ? ">" : "<";
	if (O * I * K == 0)
		return 0;
	if (n->out[1] < 0)
		return ox_error(g, n, "the indices output is needed as scratch space; it is omitted");
	int lvl = open_loop(cg, 1, "o", O);
	if (I > 1)
		lvl = open_loop(cg, lvl, "i", I);
	ox_cg_line(cg, lvl, "const %s *x = in0 + %s%s;", ox_cg_ctype(dt), mul("o", L * I), I > 1 ? " + i" : "");
	ox_cg_line(cg, lvl, "int64_t *ix = out1 + %s%s;", mul("o", K * I), I > 1 ? " + i" : "");
	ox_cg_line(cg, lvl, "ptrdiff_t m = 0; /* entries in ix so far */");
	ox_cg_line(cg, lvl, "for (ptrdiff_t t = 0; t < %lld; t++) {", (long long)L);
	char xt[64];
	snprintf(xt, sizeof xt, "x[%s]", mul("t", I));
	ox_cg_line(cg, lvl + 1, "const %s v = %s;", ox_cg_ntype(dt), ox_cg_load(dt, xt));
	ox_cg_line(cg, lvl + 1, "ptrdiff_t s = m;");
	char w[128];
	char ws[64];
	snprintf(ws, sizeof ws, "ix[%s]", I == 1 ? "s - 1" : mul("(s - 1)", I));
	snprintf(w, sizeof w, "x[%s]", mul(ws, I));
	ox_cg_line(cg, lvl + 1, "while (s > 0 && v %s %s)", better, ox_cg_load(dt, w));
	ox_cg_line(cg, lvl + 2, "s--;");
	ox_cg_line(cg, lvl + 1, "if (s >= %lld)", (long long)K);
	ox_cg_line(cg, lvl + 2, "continue;");
	ox_cg_line(cg, lvl + 1, "for (ptrdiff_t u = m < %lld ? m : %lld; u > s; u--)", (long long)K, (long long)(K - 1));
	ox_cg_line(cg, lvl + 2, "ix[%s] = ix[%s];", mul("u", I), I == 1 ? "u - 1" : mul("(u - 1)", I));
	ox_cg_line(cg, lvl + 1, "ix[%s] = t;", mul("s", I));
	ox_cg_line(cg, lvl + 1, "if (m < %lld)", (long long)K);
	ox_cg_line(cg, lvl + 2, "m++;");
	ox_cg_line(cg, lvl, "}");
	ox_cg_line(cg, lvl, "for (ptrdiff_t u = 0; u < %lld; u++)", (long long)K);
	char xu[64];
	snprintf(xu, sizeof xu, "ix[%s]", mul("u", I));
	ox_cg_line(cg, lvl + 1, "out0[%s + %s%s] = x[%s];", mul("o", K * I), mul("u", I), I > 1 ? " + i" : "", mul(xu, I));
	close_loops(cg, lvl, 1);
	return 0;
}

static int emit_onehot(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *is = shp(g, n->in[0]);
	int axis, it = dtype_of(g, n->in[0]);
	if (ox_index_axis(g, n, &axis))
		return -1;
	int64_t D = shp(g, n->out[0])->d[axis], O = prod(is, 0, axis), I = prod(is, axis, is->rank);
	if (O * D * I == 0)
		return 0;
	int lvl = open_loop(cg, 1, "o", O);
	lvl = open_loop(cg, lvl, "d", D);
	lvl = open_loop(cg, lvl, "i", I);
	char src[64];
	snprintf(src, sizeof src, "in0[o * %lld + i]", (long long)I);
	/* float indices truncate toward zero, as the reference's astype does
	 * (beyond int64 saturate, NaN is out of range: all off_value) */
	if (ox_dtype_is_float(it)) {
		ox_cg_line(cg, lvl, "const double v = %s;", ox_cg_load(it, src));
		ox_cg_line(cg, lvl, "int64_t j = v != v ? %lld : %s(v);", (long long)D, ox_cg_f2i(cg, OX_I64));
	} else {
		ox_cg_line(cg, lvl, "int64_t j = (int64_t)%s;", ox_cg_load(it, src));
	}
	ox_cg_line(cg, lvl, "if (j < 0)");
	ox_cg_line(cg, lvl + 1, "j += %lld;", (long long)D);
	ox_cg_line(cg, lvl, "out0[(o * %lld + d) * %lld + i] = j == d ? in2[1] : in2[0];", (long long)D, (long long)I);
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

static int emit_compress(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	const ox_tensor *c = ox_in_const(g, n, 1);
	int64_t O = 1, L = prod(xs, 0, xs->rank), I = 1;
	if (ox_attr_get(n, "axis")) {
		int axis;
		if (ox_index_axis(g, n, &axis))
			return -1;
		O = prod(xs, 0, axis), L = xs->d[axis], I = prod(xs, axis + 1, xs->rank);
	}
	if (!c) {
		/* a run-time condition: count the selected positions, then copy
		 * the O x K x I result compacted (K known only now) */
		int cdt = dtype_of(g, n->in[1]);
		int64_t m = prod(shp(g, n->in[1]), 0, 1), lim = m < L ? m : L;
		char t[64];
		snprintf(t, sizeof t, "%s != 0", ox_cg_load(cdt, "in1[i]"));
		ox_cg_line(cg, 1, "int64_t K = 0;");
		ox_cg_line(cg, 1, "for (int64_t i = 0; i < %lld; i++)", (long long)lim);
		ox_cg_line(cg, 2, "K += %s;", t);
		ox_cg_line(cg, 1, "for (int64_t o = 0, k = 0; o < %lld; o++, k = 0)", (long long)O);
		ox_cg_line(cg, 2, "for (int64_t i = 0; i < %lld; i++)", (long long)lim);
		ox_cg_line(cg, 3, "if (%s)", t);
		ox_cg_line(cg, 4, "memcpy(out0 + (o * K + k++) * %lld, in0 + (o * %lld + i) * %lld, %lld * sizeof *out0);",
			   (long long)I, (long long)L, (long long)I, (long long)I);
		ox_cg_line(cg, 1, "*ext0 = K;");
		return 0;
	}
	int64_t K = ox_index_count(c, L), m = ox_tensor_numel(c), k = 0;
	if (O * K * I == 0)
		return 0;
	int64_t *sel = ox_ir_alloc(g, (size_t)K * sizeof *sel);
	for (int64_t i = 0; i < m && i < L; i++)
		if (ox_tensor_get_f64(c, i) != 0)
			sel[k++] = i;
	ox_cg_line(cg, 1, "/* the positions where the constant condition is true */");
	emit_table(cg, "sel", sel, K);
	int lvl = open_loop(cg, 1, "o", O);
	lvl = open_loop(cg, lvl, "s", K);
	if (I == 1)
		ox_cg_line(cg, lvl, "out0[o * %lld + s] = in0[o * %lld + sel[s]];", (long long)K, (long long)L);
	else
		ox_cg_line(cg, lvl, "memcpy(out0 + (o * %lld + s) * %lld, in0 + (o * %lld + sel[s]) * %lld, %lld * sizeof *out0);",
		     (long long)K, (long long)I, (long long)L, (long long)I, (long long)I);
	close_loops(cg, lvl, 1);
	return 0;
}

/* NonZero of a constant that constant folding left alone: the answer is a
 * table computed here */
static int emit_nonzero(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_tensor *x = ox_in_const(g, n, 0);
	if (!x) {
		/* count, then write the [rank, count] tensor compacted; report count */
		const ox_shape *xs = shp(g, n->in[0]);
		int dt = dtype_of(g, n->in[0]), r = xs->rank;
		int64_t m = ox_shape_numel(xs);
		char nz[64];
		snprintf(nz, sizeof nz, "%s != 0", ox_cg_load(dt, "in0[i]"));
		ox_cg_line(cg, 1, "int64_t cnt = 0, j = 0;");
		ox_cg_line(cg, 1, "for (int64_t i = 0; i < %lld; i++)", (long long)m);
		ox_cg_line(cg, 2, "cnt += %s;", nz);
		ox_cg_line(cg, 1, "for (int64_t i = 0; i < %lld; i++) {", (long long)m);
		ox_cg_line(cg, 2, "if (!(%s))", nz);
		ox_cg_line(cg, 3, "continue;");
		ox_cg_line(cg, 2, "int64_t rest = i;");
		for (int k = r - 1; k >= 0; k--) {
			ox_cg_line(cg, 2, "out0[%d * cnt + j] = rest %% %lld;", k, (long long)xs->d[k]);
			if (k)
				ox_cg_line(cg, 2, "rest /= %lld;", (long long)xs->d[k]);
		}
		ox_cg_line(cg, 2, "j++;");
		ox_cg_line(cg, 1, "}");
		ox_cg_line(cg, 1, "*ext0 = cnt;");
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

/* NonMaxSuppression (templates/nms.c): the selected rows go compacted to
 * out0, their count to *ext0; the last output is the kernel's scratch */
static int emit_nms(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *bs = shp(g, n->in[0]), *ss = shp(g, n->in[1]);
	int dt = dtype_of(g, n->in[0]);
	int64_t B = bs->d[0], N = bs->d[1], C = ss->d[1];
	if (n->out[0] < 0 || !n->scratch)
		return ox_error(g, n, "selected_indices is omitted or the scratch memory is missing");
	int64_t bound = shp(g, n->out[0])->d[0];
	if (bound == 0) {
		ox_cg_line(cg, 1, "*ext0 = 0; /* max_output_boxes_per_class is 0, or there are no boxes */");
		return 0;
	}
	if (use_tmpl(cg, g, n, "msort", OX_I64) || use_tmpl(cg, g, n, "nms", dt))
		return -1;
	int has_iou = n->nin > 3 && n->in[3] >= 0, has_sthr = n->nin > 4 && n->in[4] >= 0;
	ox_cg_line(cg, 1, "/* boxes [%lld, %lld, 4], scores [%lld, %lld, %lld], at most %lld per class */", (long long)B,
		   (long long)N, (long long)B, (long long)C, (long long)N, (long long)(bound / (B * C)));
	ox_cg_line(cg, 1, "*ext0 = ox_nms_%s(in0, in1, %lld, %lld, %lld, %lld, %d, %s, %d, %s, out0, (int64_t *)(void *)out%d);",
		   ox_cg_sfx(dt), (long long)B, (long long)C, (long long)N, (long long)(bound / (B * C)),
		   ox_attr_int(n, "center_point_box", 0) != 0, has_iou ? "in3[0]" : "0.0f", has_sthr,
		   has_sthr ? "in4[0]" : "0.0f", n->nout - 1);
	return 0;
}

/* Unique (templates/unique.c): the outputs present are written compacted;
 * Y, indices and counts report the unique count u through their extK */
static int emit_unique(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int dt = dtype_of(g, n->in[0]), nout = n->nout - n->scratch;
	int64_t O = 1, L = prod(xs, 0, xs->rank), I = 1;
	if (!n->scratch)
		return ox_error(g, n, "the scratch memory is missing");
	if (ox_attr_get(n, "axis")) {
		int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), xs->rank);
		if (axis < 0)
			return ox_error(g, n, "axis is out of range");
		O = prod(xs, 0, axis), L = xs->d[axis], I = prod(xs, axis + 1, xs->rank);
	}
	char nan[160], key[32];
	snprintf(key, sizeof key, "uq_nan/%s", ox_cg_sfx(dt));
	if (ox_dtype_is_float(dt))
		snprintf(nan, sizeof nan, "static inline int ox_uq_nan_%s(%s v) { return v != v; }\n", ox_cg_sfx(dt),
			 ox_cg_ntype(dt));
	else
		snprintf(nan, sizeof nan, "static inline int ox_uq_nan_%s(%s v) { (void)v; return 0; }\n", ox_cg_sfx(dt),
			 ox_cg_ntype(dt));
	ox_cg_helper(cg, key, nan);
	if (use_tmpl(cg, g, n, "msort", OX_I64) || use_tmpl(cg, g, n, "unique", dt))
		return -1;
	char arg[4][16];
	for (int k = 0; k < 4; k++)
		snprintf(arg[k], sizeof arg[k], k < nout && n->out[k] >= 0 ? "out%d" : "NULL", k);
	ox_cg_line(cg, 1, "const int64_t u = ox_unique_%s(in0, %lld, %lld, %lld, %d, (int64_t *)(void *)out%d, %s, %s, %s, %s);",
		   ox_cg_sfx(dt), (long long)O, (long long)L, (long long)I, ox_attr_int(n, "sorted", 1) != 0,
		   n->nout - 1, arg[0], arg[1], arg[2], arg[3]);
	int used = 0;
	for (int k = 0; k < nout; k++)
		if (k != 2 && n->out[k] >= 0) {
			ox_cg_line(cg, 1, "*ext%d = u;", k);
			used = 1;
		}
	if (!used)
		ox_cg_line(cg, 1, "(void)u;");
	return 0;
}

static int emit_eyelike(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *ys = shp(g, n->out[0]);
	int dt = dtype_of(g, n->out[0]);
	int64_t R = ys->d[0], C = ys->d[1], k = ox_attr_int(n, "k", 0);
	char one[32];
	if (dt == OX_F16 || dt == OX_BF16)
		snprintf(one, sizeof one, "0x%04x", dt == OX_F16 ? ox_f32_to_f16(1.0f) : ox_f32_to_bf16(1.0f));
	else
		snprintf(one, sizeof one, "%s", ox_cg_lit(dt, 1));
	if (R * C == 0)
		return 0;
	ox_cg_line(cg, 1, "memset(out0, 0, %lld * sizeof *out0);", (long long)(R * C));
	int64_t i0 = k < 0 ? -k : 0, i1 = C - k < R ? C - k : R;
	if (i0 < i1)
		ox_cg_line(cg, 1, "for (ptrdiff_t i = %lld; i < %lld; i++)\n\t\tout0[i * %lld + i + %lld] = %s;", (long long)i0,
		     (long long)i1, (long long)C, (long long)k, one);
	return 0;
}

/* DepthToSpace / SpaceToDepth, looping in output order */
static int emit_space(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int64_t b = ox_attr_int(n, "blocksize", 1);
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	if (N * C * H * W == 0)
		return 0;
	ox_cg_line(cg, 1, "%s *q = out0;", ox_cg_ctype(dtype_of(g, n->out[0])));
	if (n->op == OX_OP_DepthToSpace) {
		int64_t Co = C / (b * b);
		int crd = !strcmp(ox_attr_str(n, "mode", "DCR"), "CRD");
		int lvl = open_loop(cg, 1, "n", N);
		lvl = open_loop(cg, lvl, "c", Co);
		lvl = open_loop(cg, lvl, "h", H);
		lvl = open_loop(cg, lvl, "i", b);
		lvl = open_loop(cg, lvl, "w", W);
		lvl = open_loop(cg, lvl, "j", b);
		if (crd)
			ox_cg_line(cg, lvl, "*q++ = in0[((n * %lld + c * %lld + i * %lld + j) * %lld + h) * %lld + w];", (long long)C,
			     (long long)(b * b), (long long)b, (long long)H, (long long)W);
		else
			ox_cg_line(cg, lvl, "*q++ = in0[((n * %lld + (i * %lld + j) * %lld + c) * %lld + h) * %lld + w];", (long long)C,
			     (long long)b, (long long)Co, (long long)H, (long long)W);
		close_loops(cg, lvl, 1);
	} else {
		int lvl = open_loop(cg, 1, "n", N);
		lvl = open_loop(cg, lvl, "i", b);
		lvl = open_loop(cg, lvl, "j", b);
		lvl = open_loop(cg, lvl, "c", C);
		lvl = open_loop(cg, lvl, "h", H / b);
		lvl = open_loop(cg, lvl, "w", W / b);
		ox_cg_line(cg, lvl, "*q++ = in0[((n * %lld + c) * %lld + h * %lld + i) * %lld + w * %lld + j];", (long long)C,
		     (long long)H, (long long)b, (long long)W, (long long)b);
		close_loops(cg, lvl, 1);
	}
	return 0;
}

static int emit_revseq(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = shp(g, n->in[0]);
	int ta = (int)ox_attr_int(n, "time_axis", 0);
	int64_t T = xs->d[ta], B = xs->d[1 - ta], I = prod(xs, 2, xs->rank);
	if (T * B * I == 0)
		return 0;
	char pos[2][96];
	for (int s = 0; s < 2; s++) {
		const char *t = s ? "u" : "t";
		if (ta == 0)
			snprintf(pos[s], sizeof pos[s], "(%s * %lld + b) * %lld", t, (long long)B, (long long)I);
		else
			snprintf(pos[s], sizeof pos[s], "(b * %lld + %s) * %lld", (long long)T, t, (long long)I);
	}
	int lvl = open_loop(cg, 1, "b", B);
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, lvl, "const int64_t len = (int64_t)in1[b];");
	ox_cg_line(cg, lvl, "if (len < 0 || len > %lld)", (long long)T);
	ox_cg_line(cg, lvl + 1, "return 1; /* a sequence length out of range */");
	lvl = open_loop(cg, lvl, "t", T);
	ox_cg_line(cg, lvl, "const ptrdiff_t u = t < len ? (ptrdiff_t)len - 1 - t : t;");
	ox_cg_line(cg, lvl, "memcpy(out0 + %s, in0 + %s, %lld * sizeof *out0);", pos[0], pos[1], (long long)I);
	close_loops(cg, lvl, 1);
	return 0;
}

static int emit_shrink(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int dt = dtype_of(g, n->in[0]);
	int64_t m = prod(shp(g, n->in[0]), 0, shp(g, n->in[0])->rank);
	double lam = ox_attr_float(n, "lambd", 0.5f), bias = ox_attr_float(n, "bias", 0.0f);
	char lam_s[64], mlam_s[64], bias_s[64];
	snprintf(lam_s, sizeof lam_s, "%s", ox_cg_lit(OX_F64, lam));
	snprintf(mlam_s, sizeof mlam_s, "%s", ox_cg_lit(OX_F64, -lam));
	snprintf(bias_s, sizeof bias_s, "%s", ox_cg_lit(OX_F64, bias));
	if (m == 0)
		return 0;
	/* in double: each result is one rounding of the exact value, as in the
	 * input's own precision */
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++) {", (long long)m);
	ox_cg_line(cg, 2, "const double v = %s;", ox_cg_load(dt, "in0[i]"));
	char e[512];
	snprintf(e, sizeof e, "v < %s ? v + %s : v > %s ? v - %s : 0.0", mlam_s, bias_s, lam_s, bias_s);
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
	const ox_shape *xs = shp(g, n->in[0]);
	int dt = dtype_of(g, n->in[0]);
	int64_t N = xs->d[0], C = xs->d[1], S = prod(xs, 2, xs->rank);
	const char *red = ox_attr_str(n, "reduction", "mean");
	int none = !strcmp(red, "none"), mean = !strcmp(red, "mean");
	int weighted = n->nin > 2 && n->in[2] >= 0, logp = sce && n->nout > 1 && n->out[1] >= 0;
	const ox_attr *ii = ox_attr_get(n, "ignore_index");
	char xe[96], pos[64]; /* input element (n, c, d); position (n, d) */
	if (S == 1) {
		snprintf(xe, sizeof xe, "in0[n * %lld + c]", (long long)C);
		snprintf(pos, sizeof pos, "n");
	} else {
		snprintf(xe, sizeof xe, "in0[(n * %lld + c) * %lld + d]", (long long)C, (long long)S);
		snprintf(pos, sizeof pos, "n * %lld + d", (long long)S);
	}
	if (!none)
		ox_cg_line(cg, 1, "double sum = 0, wsum = 0;");
	int lvl = 1;
	if (N * S > 0) {
		lvl = open_loop(cg, lvl, "n", N);
		if (S > 1)
			lvl = open_loop(cg, lvl, "d", S);
		if (sce) {
			/* log-sum-exp over the classes, shifted by the max */
			ox_cg_line(cg, lvl, "double mx = -INFINITY, se = 0;");
			ox_cg_line(cg, lvl, "for (ptrdiff_t c = 0; c < %lld; c++)", (long long)C);
			ox_cg_line(cg, lvl + 1, "mx = %s > mx ? %s : mx;", ox_cg_load(dt, xe), ox_cg_load(dt, xe));
			ox_cg_line(cg, lvl, "for (ptrdiff_t c = 0; c < %lld; c++)", (long long)C);
			ox_cg_line(cg, lvl + 1, "se += exp(%s - mx);", ox_cg_load(dt, xe));
			ox_cg_line(cg, lvl, "const double lse = mx + log(se);");
			if (logp) {
				char e[160], o[128];
				snprintf(e, sizeof e, "%s - lse", ox_cg_load(dt, xe));
				snprintf(o, sizeof o, "out1%s", xe + 3);
				ox_cg_line(cg, lvl, "for (ptrdiff_t c = 0; c < %lld; c++) {", (long long)C);
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
			ox_cg_line(cg, lvl, "if (c != %lld && (uint64_t)c >= %lld)", (long long)ii->i, (long long)C);
			ox_cg_line(cg, lvl + 1, "return 1; /* a class out of range */");
			ox_cg_line(cg, lvl, "if (c != %lld) {", (long long)ii->i);
		} else {
			ox_cg_line(cg, lvl, "if ((uint64_t)c >= %lld)", (long long)C);
			ox_cg_line(cg, lvl + 1, "return 1; /* a class out of range */");
			ox_cg_line(cg, lvl, "{");
		}
		ox_cg_line(cg, lvl + 1, "w = %s;", weighted ? ox_cg_load(dt, "in2[c]") : "1.0");
		ox_cg_line(cg, lvl + 1, "l = -(%s%s) * w;", ox_cg_load(dt, xe), sce ? " - lse" : "");
		ox_cg_line(cg, lvl, "}");
		if (none) {
			char o[96];
			snprintf(o, sizeof o, "out0[%s]", pos);
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
	int64_t B = xs->d[0], mid = prod(xs, 1, axis), L = xs->d[axis], S = us->d[axis];
	int64_t inner = prod(xs, axis + 1, xs->rank);
	ox_cg_line(cg, 1, "memcpy(out0, in0, %lld * sizeof *out0);", (long long)prod(xs, 0, xs->rank));
	if (prod(us, 0, us->rank) == 0)
		return 0;
	int lvl = open_loop(cg, 1, "b", B);
	if (n->nin > 2 && n->in[2] >= 0)
		ox_cg_line(cg, lvl, "const int64_t w0 = (int64_t)in2[b];");
	else
		ox_cg_line(cg, lvl, "const int64_t w0 = 0; /* write_indices omitted */");
	if (circ) {
		ox_cg_line(cg, lvl, "const int64_t w = w0 %% %lld; /* w0 + s cannot overflow */", (long long)L);
	} else if (n->nin > 2 && n->in[2] >= 0) {
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_cg_line(cg, lvl, "if (w0 < 0 || w0 > %lld)", (long long)(L - S));
		ox_cg_line(cg, lvl + 1, "return 1; /* a write past the cache */");
	}
	lvl = open_loop(cg, lvl, "o", mid);
	lvl = open_loop(cg, lvl, "s", S);
	if (circ) {
		ox_cg_line(cg, lvl, "int64_t t = (w + s) %% %lld;", (long long)L);
		ox_cg_line(cg, lvl, "if (t < 0)");
		ox_cg_line(cg, lvl + 1, "t += %lld;", (long long)L);
	} else {
		ox_cg_line(cg, lvl, "const int64_t t = w0 + s;");
	}
	ox_cg_line(cg, lvl, "memcpy(out0 + ((b * %lld + o) * %lld + t) * %lld, in1 + ((b * %lld + o) * %lld + s) * %lld, "
		   "%lld * sizeof *out0);", (long long)mid, (long long)L, (long long)inner, (long long)mid,
		   (long long)S, (long long)inner, (long long)inner);
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
