/* emit_reduce.c: C for reductions (Reduce*, ArgMax/ArgMin), the softmax
 * family and LayerNormalization.
 *
 * Every kernel is loops with literal bounds, or bounds over ox_d[] where a
 * dim is a run-time dim (docs/dynamic.md): the axes a reduction keeps
 * become the outer loops (so the output is written in order), the axes it
 * reduces the inner ones; runs of adjacent axes of the same kind are merged
 * into one loop and size-1 axes vanish. Special cases for a size (a row of
 * one, an empty reduction) are taken only when it is a constant. Axes read
 * from data when the program runs get one generic loop nest with run-time
 * extents and strides (emit_reduce_rt), which also computes the output's
 * dims. What each element adds and in which types (reduction.h) is the
 * description the CUDA target renders too.
 */
#include "../reduction.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* "for (size_t v = from; v < n; v++) {" unless it is one pass (from 0, n
 * the constant 1); a run-time n is cast to size_t. Returns the new depth. */
static int open_loop(ox_cg *cg, int lvl, const char *var, ox_dim n, int64_t from)
{
	if (from == 0 && n == 1)
		return lvl;
	ox_cg_line(cg, lvl, "for (size_t %s = %lld; %s < %s%s; %s++) {", var, (long long)from, var,
		   ox_dim_is_rt(cg->g, n) ? "(size_t)" : "", ox_cg_dim(cg, n), var);
	return lvl + 1;
}

/* ox_cg_term over dims: "var * stride" appended to an index sum, nothing
 * where the loop does not exist (n the constant 1) or the stride is 0 */
static void term(ox_cg *cg, char *buf, size_t cap, const char *var, ox_dim n, ox_dim stride)
{
	size_t len = strlen(buf);
	if (n >= 0 && stride >= 0)
		ox_cg_term(buf, cap, var, n, stride);
	else if (n == 1 || stride == 0)
		return;
	else if (stride == 1)
		ox_cg_snprintf(buf + len, cap - len, "%s%s", len ? " + " : "", var);
	else
		ox_cg_snprintf(buf + len, cap - len, "%s%s * %s", len ? " + " : "", var, ox_cg_dim(cg, stride));
	if (strlen(buf) + 1 >= cap)
		ox_die("emit_reduce: index expression too long");
}

/* more than one: a constant > 1, or a run-time dim (a loop is kept) */
static int more1(ox_dim d)
{
	return d < 0 || d > 1;
}

/* d as a double / a float literal when constant, else a cast of its expression */
static const char *flen(ox_cg *cg, int dt, ox_dim d)
{
	static char ring[4][600];
	static int at;
	if (d >= 0)
		return ox_cg_lit(dt, (double)d);
	at = (at + 1) % 4;
	ox_cg_snprintf(ring[at], sizeof ring[at], "(%s)%s", dt == OX_F64 ? "double" : "float", ox_cg_dim(cg, d));
	return ring[at];
}

/* can d be 0 when the program runs (a constant 0 is handled at compile time)? */
static int maybe0(ox_graph *g, ox_dim d)
{
	int64_t lo, hi;
	return ox_dim_is_rt(g, d) && (ox_dim_range(g, d, &lo, &hi) || lo <= 0);
}

static void close_loops(ox_cg *cg, int lvl, int to)
{
	while (lvl > to)
		ox_cg_line(cg, --lvl, "}");
}

static const char *or0(const char *s)
{
	return *s ? s : "0";
}

static void header(ox_cg *cg, ox_graph *g, ox_node *n, const char *what)
{
	char s[256];
	const ox_value *x = ox_in(g, n, 0);
	ox_shape_str(g, &x->shape, s, sizeof s);
	for (char *p = s; (p = strstr(p, "*/"));) /* a symbol's name must not end the comment */
		*p = '.';
	ox_cg_line(cg, 1, "/* %s of %s%s%s */", n->optype, ox_dtype_name(x->dtype), s, what);
}

/* ---------------- Reduce* ---------------- */

/* a run of adjacent axes of one kind, walked by one loop */
typedef struct {
	ox_dim n, stride; /* extent, input stride in elements */
} group;

/* the loops over the reduced groups r0, r1, ...; with none (every reduced
 * axis has size 1, or noop_with_empty_axes) a plain block, so the body's
 * declarations stay local all the same */
static int open_reduced(ox_cg *cg, int lvl, const group *rg, int nr)
{
	char var[16];
	if (nr == 0) {
		ox_cg_line(cg, lvl, "{");
		return lvl + 1;
	}
	for (int j = 0; j < nr; j++) {
		ox_cg_snprintf(var, sizeof var, "r%d", j);
		lvl = open_loop(cg, lvl, var, rg[j].n, 0);
	}
	return lvl;
}

/* "V v = element;" and, for the first pass of LogSumExp (max), the
 * running maximum m, else the accumulation into acc */
static void reduce_step(ox_cg *cg, const ox_reduction *k, int l, const char *load, int maxpass)
{
	ox_cg_line(cg, l, "%s v = %s%s;", k->V, k->viadbl ? "(double)" : "", load);
	const char *cond, *stmt = ox_red_join(cg, k, "v", 1, maxpass, &cond);
	if (cond)
		ox_cg_line(cg, l++, "if (%s)", cond);
	ox_cg_line(cg, l, "%s", stmt);
}

/* "out0[oidx] = result;" from acc (and m); count is the number of reduced
 * elements: a constant, or the C expression cnt of its run-time value */
static void reduce_store(ox_cg *cg, const ox_reduction *k, int lvl, const char *oidx, int64_t count, const char *cnt)
{
	ox_cg_line(cg, lvl, "out0[%s] = %s;", or0(oidx), ox_red_stored(cg, k, ox_red_result(cg, k, count, cnt)));
}

/* the next element of an odometer over nd axes, innermost (index 0) first:
 * position pos moves by the strides st[] over the extents ext[] */
static void odometer(ox_cg *cg, int lvl, const char *nd, const char *idx, const char *pos, const char *st,
		     const char *ext)
{
	ox_cg_line(cg, lvl, "for (int k = 0; k < %s; k++) {", nd);
	ox_cg_line(cg, lvl + 1, "%s += %s[k];", pos, st);
	ox_cg_line(cg, lvl + 1, "if (++%s[k] < %s[k])", idx, ext);
	ox_cg_line(cg, lvl + 2, "break;");
	ox_cg_line(cg, lvl + 1, "%s -= %s[k] * %s[k];", pos, st, ext);
	ox_cg_line(cg, lvl + 1, "%s[k] = 0;", idx);
	ox_cg_line(cg, lvl, "}");
}

/* one pass over the reduced elements of output o (x[off])
 * with reduce_step's body */
static void rt_pass(ox_cg *cg, const ox_reduction *k, int lvl, int rank, int maxpass)
{
	ox_cg_line(cg, lvl, "{");
	ox_cg_line(cg, lvl + 1, "int64_t ri[%d] = {0}, off = 0;", rank);
	ox_cg_line(cg, lvl + 1, "for (int64_t c = 0; c < cnt; c++) {");
	reduce_step(cg, k, lvl + 2, ox_cg_load(k->dt, "x[off]"), maxpass);
	odometer(cg, lvl + 2, "nr", "ri", "off", "rs", "rn");
	ox_cg_line(cg, lvl + 1, "}");
	ox_cg_line(cg, lvl, "}");
}

/* A reduction over axes read from input 1 when the program runs
 * (ir/infer_reduce.c, infer_reduce_rt): check them (in range, none
 * repeated, else return 2) as ONNX says (negative from the end, none: all
 * or, with noop_with_empty_axes, none), compute the output's dims, then walk
 * the input with run-time extents and strides: the kept axes in order (the
 * output's), for each the reduced ones. */
static int emit_reduce_rt(ox_cg *cg, ox_graph *g, ox_node *n, const ox_reduction *k)
{
	const ox_value *x = ox_in(g, n, 0), *a = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	int rank = x->shape.rank, R = rank > 0 ? rank : 1;
	int keep = ox_attr_int(n, "keepdims", 1) != 0, noop = (int)ox_attr_int(n, "noop_with_empty_axes", 0);
	header(cg, g, n, " over the axes in input 1, read when the program runs");
	cg->fails_shape = 1;
	char xd[1024] = "";
	for (int i = 0; i < rank; i++)
		ox_cg_snprintf(xd + strlen(xd), sizeof xd - strlen(xd), "%s%s", i ? ", " : "", ox_cg_dim(cg, x->shape.d[i]));
	if (strlen(xd) + 1 >= sizeof xd)
		return ox_error(g, n, "the input's dims are too long an expression");
	ox_cg_line(cg, 1, "const int64_t xd[%d] = {%s}, na = %s;", R, rank ? xd : "1", ox_cg_dim(cg, a->shape.d[0]));
	ox_cg_line(cg, 1, "int red[%d] = {0};", R);
	ox_cg_line(cg, 1, "for (int64_t k = 0; k < na; k++) {");
	ox_cg_line(cg, 2, "int64_t ax = (int64_t)in1[k];");
	ox_cg_line(cg, 2, "if (ax < 0)");
	ox_cg_line(cg, 3, "ax += %d;", rank);
	ox_cg_line(cg, 2, "if (ax < 0 || ax >= %d || red[ax])", rank);
	ox_cg_line(cg, 3, "return 2; /* an axis out of range, or repeated */");
	ox_cg_line(cg, 2, "red[ax] = 1;");
	ox_cg_line(cg, 1, "}");
	if (!noop && a->shape.d[0] < 0) {
		ox_cg_line(cg, 1, "if (na == 0) /* no axes: all of them */");
		ox_cg_line(cg, 2, "for (int k = 0; k < %d; k++)", rank);
		ox_cg_line(cg, 3, "red[k] = 1;");
	}

	/* the output's dims: data symbols, but where the input's dim(s) there are 1 */
	int data[OX_MAX_RANK], ndata = 0;
	for (int j = 0; j < y->shape.rank; j++) {
		data[j] = ox_dim_defined_by(g, y->shape.d[j], n->out[0]);
		ndata += data[j];
	}
	if (!keep && ndata) {
		ox_cg_line(cg, 1, "int64_t yd[%d];", R);
		ox_cg_line(cg, 1, "for (int k = 0, j = 0; k < %d; k++)", rank);
		ox_cg_line(cg, 2, "if (!red[k])");
		ox_cg_line(cg, 3, "yd[j++] = xd[k];");
	}
	for (int j = 0; j < y->shape.rank; j++) {
		char v[64];
		if (!data[j])
			continue;
		if (keep)
			ox_cg_snprintf(v, sizeof v, "red[%d] ? 1 : xd[%d]", j, j);
		else
			ox_cg_snprintf(v, sizeof v, "yd[%d]", j);
		ox_cg_set_dim(cg, 1, y->shape.d[j], v);
	}

	/* the kept and the reduced axes, innermost first */
	ox_cg_line(cg, 1, "int64_t kn[%d], ks[%d], rn[%d], rs[%d], ny = 1, cnt = 1, s = 1;", R, R, R, R);
	ox_cg_line(cg, 1, "int nk = 0, nr = 0;");
	ox_cg_line(cg, 1, "for (int k = %d; k >= 0; k--) {", rank - 1);
	ox_cg_line(cg, 2, "if (red[k])");
	ox_cg_line(cg, 3, "rn[nr] = xd[k], rs[nr++] = s, cnt *= xd[k];");
	ox_cg_line(cg, 2, "else");
	ox_cg_line(cg, 3, "kn[nk] = xd[k], ks[nk++] = s, ny *= xd[k];");
	ox_cg_line(cg, 2, "s *= xd[k];");
	ox_cg_line(cg, 1, "}");
	if (ox_red_int_mean(k)) {
		ox_cg_line(cg, 1, "if (cnt == 0 && ny != 0)");
		ox_cg_line(cg, 2, "return 2; /* the mean of no integers */");
	}
	ox_cg_line(cg, 1, "int64_t ki[%d] = {0}, base = 0;", R);
	ox_cg_line(cg, 1, "for (int64_t o = 0; o < ny; o++) {");
	ox_cg_line(cg, 2, "const %s *x = in0 + base;", k->T);
	if (k->op == OX_OP_ReduceLogSumExp) {
		ox_cg_line(cg, 2, "%s m = %s;", k->A, ox_cg_lit(k->cdt, -INFINITY));
		rt_pass(cg, k, 2, R, 1);
		ox_cg_line(cg, 2, "if (!isfinite(m))");
		ox_cg_line(cg, 3, "m = %s;", ox_cg_lit(k->cdt, 0));
	}
	ox_cg_line(cg, 2, "%s acc = %s;", k->A, k->init);
	rt_pass(cg, k, 2, R, 0);
	reduce_store(cg, k, 2, "o", -1, "cnt");
	odometer(cg, 2, "nk", "ki", "base", "ks", "kn");
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_reduce_op(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int rank = x->shape.rank;
	int mask[OX_MAX_RANK], rc = ox_reduce_axes(g, n, mask);
	ox_reduction k;
	if (rc < 0 || ox_reduction_of(g, n, &k))
		return -1;
	if (rc == 1)
		return emit_reduce_rt(cg, g, n, &k);
	char what[128] = " over axes {";
	int any = 0;
	for (int i = 0; i < rank; i++)
		if (mask[i])
			ox_cg_snprintf(what + strlen(what), sizeof what - strlen(what), "%s%d", any++ ? "," : "", i);
	strcat(what, "}");
	header(cg, g, n, what);
	if (ox_shape_numel_dim(g, &y->shape) == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}

	/* merge axes into groups, kept ones and reduced ones */
	ox_dim stride[OX_MAX_RANK], count = 1, s = 1;
	for (int i = rank - 1; i >= 0; i--)
		stride[i] = s, s = ox_dim_mul(g, s, x->shape.d[i]);
	group kg[OX_MAX_RANK], rg[OX_MAX_RANK];
	int nk = 0, nr = 0, last = -1; /* last: kind of the previous non-1 axis */
	for (int i = 0; i < rank; i++) {
		ox_dim d = x->shape.d[i];
		if (mask[i])
			count = ox_dim_mul(g, count, d);
		if (d == 1)
			continue;
		group *gr = mask[i] ? rg : kg;
		int *ng = mask[i] ? &nr : &nk;
		if (last == mask[i])
			gr[*ng - 1].n = ox_dim_mul(g, gr[*ng - 1].n, d), gr[*ng - 1].stride = stride[i];
		else
			gr[(*ng)++] = (group){d, stride[i]};
		last = mask[i];
	}
	/* count != 0: some element to reduce (or a run-time count) */
	if (ox_red_int_mean(&k) && count == 0)
		return ox_error(g, n, "the mean of an empty set of integers is undefined");
	if (ox_red_int_mean(&k) && maybe0(g, count)) {
		cg->fails_shape = 1;
		ox_cg_line(cg, 1, "if (%s == 0)", ox_cg_dim(cg, count));
		ox_cg_line(cg, 2, "return 2; /* the mean of no integers */");
	}

	/* loops over the kept groups, the output index, the input base */
	int lvl = 1;
	char oidx[512] = "", base[512] = "", var[16];
	for (int j = 0; j < nk; j++) {
		ox_dim os = 1;
		for (int q = j + 1; q < nk; q++)
			os = ox_dim_mul(g, os, kg[q].n);
		ox_cg_snprintf(var, sizeof var, "i%d", j);
		term(cg, oidx, sizeof oidx, var, kg[j].n, os);
		term(cg, base, sizeof base, var, kg[j].n, kg[j].stride);
		lvl = open_loop(cg, lvl, var, kg[j].n, 0);
	}
	if (count != 0)
		ox_cg_line(cg, lvl, "const %s *x = in0%s%s;", k.T, *base ? " + " : "", base);

	/* the reduced loops around the step, with v bound to the element */
	char ridx[512] = "";
	for (int j = 0; j < nr; j++) {
		ox_cg_snprintf(var, sizeof var, "r%d", j);
		term(cg, ridx, sizeof ridx, var, rg[j].n, rg[j].stride);
	}
	char xe[600], load[640];
	ox_cg_snprintf(xe, sizeof xe, "x[%s]", or0(ridx));
	ox_cg_snprintf(load, sizeof load, "%s", ox_cg_load(k.dt, xe));

	if (k.op == OX_OP_ReduceLogSumExp) {
		/* max first, then sum exp(v - max): exp cannot overflow, and a
		 * non-finite max (all -inf, or +inf) is left out of the shift */
		ox_cg_line(cg, lvl, "%s m = %s;", k.A, ox_cg_lit(k.cdt, -INFINITY));
		if (count != 0) {
			int l = open_reduced(cg, lvl, rg, nr);
			reduce_step(cg, &k, l, load, 1);
			close_loops(cg, l, lvl);
		}
		ox_cg_line(cg, lvl, "if (!isfinite(m))");
		ox_cg_line(cg, lvl + 1, "m = %s;", ox_cg_lit(k.cdt, 0));
	}
	ox_cg_line(cg, lvl, "%s acc = %s;", k.A, k.init);
	if (count != 0) {
		int l = open_reduced(cg, lvl, rg, nr);
		reduce_step(cg, &k, l, load, 0);
		close_loops(cg, l, lvl);
	}
	reduce_store(cg, &k, lvl, oidx, count >= 0 ? count : -1, count >= 0 ? NULL : ox_cg_dim(cg, count));
	close_loops(cg, lvl, 1);
	return 0;
}

/* ---------------- ArgMax / ArgMin ---------------- */

/* outer x len x inner: the index space of a one-axis kernel */
typedef struct {
	ox_dim outer, len, inner;
} span;

static span span_at(ox_graph *g, const ox_shape *s, int ax, int legacy)
{
	span p = {1, 1, 1};
	for (int i = 0; i < s->rank; i++) {
		if (i < ax)
			p.outer = ox_dim_mul(g, p.outer, s->d[i]);
		else if (i == ax || legacy)
			p.len = ox_dim_mul(g, p.len, s->d[i]);
		else
			p.inner = ox_dim_mul(g, p.inner, s->d[i]);
	}
	return p;
}

/* ArgMax/ArgMin: a map over (outer, inner), each element the index of
 * the best of its run of len along the axis (ox_red_better's test) */
static int emit_arg(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype;
	int ax = ox_norm_axis(ox_attr_int(n, "axis", 0), x->shape.rank);
	int last = ox_attr_int(n, "select_last_index", 0) != 0;
	span p = span_at(g, &x->shape, ax, 0);
	if (!cg->map) {
		char what[64];
		ox_cg_snprintf(what, sizeof what, " along axis %d%s", ax, last ? ", last index on ties" : "");
		header(cg, g, n, what);
		if (ox_dim_mul(g, p.outer, p.inner) == 0) {
			ox_cg_line(cg, 1, "/* the output is empty */");
			return 0;
		}
		if (maybe0(g, p.len)) { /* infer_argreduce refuses a constant 0 */
			cg->fails_shape = 1;
			ox_cg_line(cg, 1, "if (%s == 0)", ox_cg_dim(cg, p.len));
			ox_cg_line(cg, 2, "return 2; /* no element to pick */");
		}
	} else if (ox_dim_mul(g, p.outer, p.inner) == 0 || maybe0(g, p.len)) {
		return 0; /* (no map: the C function checks the length) */
	}
	const ox_dim d[2] = {p.outer, p.inner};
	if (p.len == 1) /* one candidate: index 0 */
		return ox_cg_map(cg, g, d, 2, "", "out0[i] = 0;\n");
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	const char *L = ox_cg_map_dim(cg, p.len), *I = ox_cg_map_dim(cg, p.inner);
	const char *LI = ox_cg_map_dim(cg, ox_dim_mul(g, p.len, p.inner));
	ox_buf body = {0};
	/* (the stride named once: a load expression may repeat its argument) */
	ox_buf_printf(&body, "const $I inner_ = %s;\nconst %s *x = in0 + i0 * %s + i1;\n%s best = %s;\n", I, T, LI, C,
		      ox_cg_load(dt, "x[0]"));
	ox_buf_printf(&body, "$I at = 0;\nfor ($I k = 1; k < %s; k++) {\n\tconst %s v = %s;\n", L, C,
		      ox_cg_load(dt, "x[k * inner_]"));
	ox_buf_printf(&body, "\tif (%s) {\n\t\tbest = v;\n\t\tat = k;\n\t}\n}\nout0[i] = (int64_t)at;\n",
		      ox_red_better(cg, ox_dtype_is_float(dt), n->op == OX_OP_ArgMax, last));
	int rc = ox_cg_map(cg, g, d, 2, "", body.s);
	ox_buf_free(&body);
	return rc;
}

/* ---------------- Softmax, LogSoftmax, Hardmax ---------------- */

/* Softmax, LogSoftmax, Hardmax: a map over (outer, inner), each element
 * its run of len along the axis (the legacy form: the axes from it on, as
 * 2-D), x and y that run's first element, k * inner_ its k-th */
static int emit_softmax(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, rank = x->shape.rank, legacy = n->opset < 13;
	int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
	int ax = legacy && a == rank ? rank : ox_norm_axis(a, rank);
	span p = span_at(g, &x->shape, ax, legacy);
	const int empty = ox_dim_mul(g, ox_dim_mul(g, p.outer, p.inner), p.len) == 0;
	if (cg->map && (empty || maybe0(g, p.len)))
		return 0; /* (no map: the C function checks the length) */
	if (!cg->map) {
		char what[64];
		ox_cg_snprintf(what, sizeof what, legacy ? " over axes %d.. (as 2-D)" : " along axis %d", ax);
		header(cg, g, n, what);
		if (empty) {
			ox_cg_line(cg, 1, "/* the output is empty */");
			return 0;
		}
		if (maybe0(g, p.len)) { /* rows of none: x[0] is not there */
			ox_cg_line(cg, 1, "if (%s == 0)", ox_cg_dim(cg, p.len));
			ox_cg_line(cg, 2, "return; /* the output is empty */");
		}
	}
	const ox_dim d[2] = {p.outer, p.inner};
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt), *L = ox_cg_map_dim(cg, p.len);
	const int cdt = dt == OX_F64 ? OX_F64 : OX_F32;
	char one[64], zero[64], xv[96], ev[160];
	ox_cg_snprintf(one, sizeof one, "%s", ox_cg_store(dt, ox_cg_lit(dt, 1)));
	ox_cg_snprintf(zero, sizeof zero, "%s", ox_cg_store(dt, ox_cg_lit(dt, 0)));
	ox_cg_snprintf(xv, sizeof xv, "%s", ox_cg_load(dt, "x[k * inner_]"));
	ox_cg_snprintf(ev, sizeof ev, "%s(%s - m)", ox_red_fn(cg, cdt, "exp"), xv);
	ox_buf b = {0};
	const char *LI = ox_cg_map_dim(cg, ox_dim_mul(g, p.len, p.inner));
	ox_buf_printf(&b, "const $I inner_ = %s;\nconst %s *x = in0 + i0 * %s + i1;\n%s *y = out0 + i0 * %s + i1;\n",
		      ox_cg_map_dim(cg, p.inner), T, LI, T, LI);
	if (n->op == OX_OP_Hardmax) {
		/* one-hot at the first maximum (ArgMax's rule, NaN included) */
		ox_buf_printf(&b, "%s best = %s;\n$I at = 0;\nfor ($I k = 1; k < %s; k++) {\n\tconst %s v = %s;\n", C,
			      ox_cg_load(dt, "x[0]"), L, C, xv);
		ox_buf_printf(&b, "\tif (%s) {\n\t\tbest = v;\n\t\tat = k;\n\t}\n}\n", ox_red_better(cg, 1, 1, 0));
		ox_buf_printf(&b, "for ($I k = 0; k < %s; k++)\n\ty[k * inner_] = k == at ? %s : %s;\n", L, one, zero);
	} else {
		/* subtract the run's maximum so exp cannot overflow; a NaN
		 * anywhere makes the sum NaN and so the whole run, as in the
		 * reference. Where storage is the compute type, exp(v - m) is
		 * kept in y for the last pass; f16/bf16 would round it, so they
		 * compute it again. */
		const int keep = n->op == OX_OP_Softmax && dt != OX_F16 && dt != OX_BF16;
		ox_buf_printf(&b, "%s m = %s;\nfor ($I k = 1; k < %s; k++) {\n\tconst %s v = %s;\n\tif (v > m)\n\t\tm = v;\n}\n",
			      C, ox_cg_load(dt, "x[0]"), L, C, xv);
		ox_buf_printf(&b, "%s s = %s;\nfor ($I k = 0; k < %s; k++) {\n", C, ox_cg_lit(cdt, 0), L);
		if (keep)
			ox_buf_printf(&b, "\tconst %s e = %s;\n\ty[k * inner_] = e;\n\ts += e;\n}\n", C, ev);
		else
			ox_buf_printf(&b, "\ts += %s;\n}\n", ev);
		char q[192];
		if (n->op == OX_OP_LogSoftmax) {
			ox_buf_printf(&b, "const %s ls = %s(s);\nfor ($I k = 0; k < %s; k++) {\n\tconst %s v = %s;\n", C,
				      ox_red_fn(cg, cdt, "log"), L, C, xv);
			ox_buf_printf(&b, "\ty[k * inner_] = %s;\n}\n", ox_cg_store(dt, "(v - m) - ls"));
		} else if (keep) {
			ox_buf_printf(&b, "for ($I k = 0; k < %s; k++)\n\ty[k * inner_] /= s;\n", L);
		} else {
			ox_cg_snprintf(q, sizeof q, "%s / s", ev);
			ox_buf_printf(&b, "for ($I k = 0; k < %s; k++)\n\ty[k * inner_] = %s;\n", L, ox_cg_store(dt, q));
		}
	}
	int rc = ox_cg_map(cg, g, d, 2, "", b.s);
	ox_buf_free(&b);
	return rc;
}

/* ---------------- LayerNormalization ---------------- */

/* Strides of Scale/B (input k) over the normalized axes ax..rank-1 of X,
 * numpy's right-aligned broadcasting, 0 where they broadcast. -1 if the
 * operand varies along a leading (non-normalized) axis, which we do not
 * compile. A run-time dim of the operand that is not X's own (the
 * inference could not compare them) must equal X's when the program runs:
 * the node checks it (returns 2 otherwise) and strides by X's. */
static int param_strides(ox_cg *cg, const ox_value *x, const ox_value *p, int k, int ax, ox_dim *st)
{
	ox_graph *g = cg->g;
	int rank = x->shape.rank, off = rank - p->shape.rank;
	ox_dim s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		int pi = i - off;
		ox_dim d = pi >= 0 ? p->shape.d[pi] : 1;
		if (i < ax && d != 1)
			return -1;
		if (d != 1 && d != x->shape.d[i] && (ox_dim_is_rt(g, d) || ox_dim_is_rt(g, x->shape.d[i]))) {
			cg->fails_shape = 1;
			ox_cg_line(cg, 1, "if (%s != %s)", ox_cg_dim(cg, x->shape.d[i]), ox_cg_dim(cg, d));
			ox_cg_line(cg, 2, "return 2; /* input %d's dim %d is not X's */", k, pi);
			d = x->shape.d[i];
		}
		if (i >= ax)
			st[i] = d == 1 ? 0 : s;
		s = ox_dim_mul(g, s, d);
	}
	return 0;
}

/* how k, the flat index in a normalized row, reaches a Scale/B element:
 * 2 the operand is one value (index 0), 1 it is laid out like the row
 * (index k), 0 neither (nested loops with broadcast strides) */
static int param_kind(const ox_value *x, const ox_dim *st, const ox_dim *xs, int ax)
{
	int scalar = 1, same = 1;
	for (int i = ax; i < x->shape.rank; i++) {
		if (x->shape.d[i] == 1)
			continue;
		scalar &= st[i] == 0;
		same &= st[i] == xs[i];
	}
	return scalar ? 2 : same;
}

static int emit_layernorm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, rank = x->shape.rank;
	int ax = ox_norm_axis(ox_attr_int(n, "axis", -1), rank);
	int stash = (int)ox_attr_int(n, "stash_type", OX_F32);
	double eps = ox_attr_float(n, "epsilon", 1e-5f);
	char what[64];
	ox_cg_snprintf(what, sizeof what, " over axes %d..%d", ax, rank - 1);
	header(cg, g, n, what);
	span p = span_at(g, &x->shape, ax, 1);
	if (p.outer == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}
	/* stage 1 (mean, variance, normalization) in the stash type; stage 2
	 * (scale and bias) in X's compute type */
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt), *S = ox_cg_ctype(stash);
	ox_dim sst[OX_MAX_RANK], bst[OX_MAX_RANK];
	const ox_value *w = ox_in(g, n, 1), *b = ox_in(g, n, 2);
	if (param_strides(cg, x, w, 1, ax, sst) || (b && param_strides(cg, x, b, 2, ax, bst)))
		return ox_error(g, n, "Scale or B varies along a non-normalized axis: not supported");
	ox_dim xs[OX_MAX_RANK], st = 1;
	for (int i = rank - 1; i >= ax; i--)
		xs[i] = st, st = ox_dim_mul(g, st, x->shape.d[i]);
	int wk = param_kind(x, sst, xs, ax), bk = b ? param_kind(x, bst, xs, ax) : 2;
	int flat = wk && bk;
	char xl[64], rowx[600];
	ox_cg_snprintf(rowx, sizeof rowx, "in0%s", more1(p.outer) ? " + i * " : "");
	if (more1(p.outer))
		ox_cg_snprintf(rowx + strlen(rowx), sizeof rowx - strlen(rowx), "%s", ox_cg_dim(cg, p.len));
	int lvl = open_loop(cg, 1, "i", p.outer, 0);
	ox_cg_line(cg, lvl, "const %s *x = %s;", T, rowx);
	ox_cg_line(cg, lvl, "%s *y = out0%s;", T, rowx + 3);
	/* x[k] in the loops over the row; x[0] where a row of one element has
	 * no loop (open_loop) */
	ox_cg_snprintf(xl, sizeof xl, "%s%s", strcmp(C, S) ? (stash == OX_F64 ? "(double)" : "(float)") : "",
	         ox_cg_load(dt, more1(p.len) ? "x[k]" : "x[0]"));
	ox_cg_line(cg, lvl, "%s sum = %s;", S, ox_cg_lit(stash, 0));
	int l = open_loop(cg, lvl, "k", p.len, 0);
	ox_cg_line(cg, l, "sum += %s;", xl);
	close_loops(cg, l, lvl);
	ox_cg_line(cg, lvl, "%s mean = sum / %s;", S, flen(cg, stash, p.len));
	ox_cg_line(cg, lvl, "%s sq = %s;", S, ox_cg_lit(stash, 0));
	l = open_loop(cg, lvl, "k", p.len, 0);
	ox_cg_line(cg, l, "%s d = %s - mean;", S, xl);
	ox_cg_line(cg, l, "sq += d * d;");
	close_loops(cg, l, lvl);
	ox_cg_line(cg, lvl, "%s inv = %s / %s(sq / %s + %s);", S, ox_cg_lit(stash, 1), ox_red_fn(cg, stash, "sqrt"),
	     flen(cg, stash, p.len), ox_cg_lit(stash, eps));
	const char *oi = more1(p.outer) ? "i" : "0";
	if (ox_out(g, n, 1))
		ox_cg_line(cg, lvl, "out1[%s] = mean;", oi);
	if (ox_out(g, n, 2))
		ox_cg_line(cg, lvl, "out2[%s] = inv;", oi);

	/* y = (C)((x - mean) * inv) * scale + bias */
	char widx[256] = "", bidx[256] = "", yidx[256] = "", var[16];
	if (flat) {
		l = open_loop(cg, lvl, "k", p.len, 0);
		term(cg, yidx, sizeof yidx, "k", p.len, 1);
		term(cg, widx, sizeof widx, "k", p.len, wk == 2 ? 0 : 1);
		term(cg, bidx, sizeof bidx, "k", p.len, bk == 2 ? 0 : 1);
	} else {
		l = lvl;
		for (int i = ax; i < rank; i++) {
			ox_cg_snprintf(var, sizeof var, "k%d", i - ax);
			l = open_loop(cg, l, var, x->shape.d[i], 0);
			term(cg, yidx, sizeof yidx, var, x->shape.d[i], xs[i]);
			term(cg, widx, sizeof widx, var, x->shape.d[i], sst[i]);
			if (b)
				term(cg, bidx, sizeof bidx, var, x->shape.d[i], bst[i]);
		}
	}
	char e[1200], ws[272], bs[272], xe[272], cs[32] = "", cc[32] = "";
	ox_cg_snprintf(ws, sizeof ws, "in1[%s]", or0(widx));
	ox_cg_snprintf(bs, sizeof bs, "in2[%s]", or0(bidx));
	ox_cg_snprintf(xe, sizeof xe, "x[%s]", or0(yidx));
	if (strcmp(C, S)) /* a cast only where the types differ */
		ox_cg_snprintf(cs, sizeof cs, "(%s)", S), ox_cg_snprintf(cc, sizeof cc, "(%s)", C);
	ox_cg_snprintf(e, sizeof e, "%s((%s%s - mean) * inv) * %s", cc, cs, ox_cg_load(dt, xe),
	         ox_cg_load(dt, ws));
	if (b)
		ox_cg_snprintf(e + strlen(e), sizeof e - strlen(e), " + %s", ox_cg_load(dt, bs));
	ox_cg_line(cg, l, "y[%s] = %s;", or0(yidx), ox_cg_store(dt, e));
	close_loops(cg, l, lvl);
	close_loops(cg, lvl, 1);
	return 0;
}

int emit_reduce(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (ox_cg_rows_ok(g, n)) /* f32 rows on vectors */
		return ox_cg_emit_rows(cg, g, n);
	switch (n->op) {
	case OX_OP_ArgMax:
	case OX_OP_ArgMin:
		return emit_arg(cg, g, n);
	case OX_OP_Softmax:
	case OX_OP_LogSoftmax:
	case OX_OP_Hardmax:
		return emit_softmax(cg, g, n);
	case OX_OP_LayerNormalization:
		return emit_layernorm(cg, g, n);
	default:
		return emit_reduce_op(cg, g, n);
	}
}
