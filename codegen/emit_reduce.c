/* emit_reduce.c: C for reductions (Reduce*, ArgMax/ArgMin), the softmax
 * family and LayerNormalization.
 *
 * Every kernel is loops with literal bounds: the axes a reduction keeps
 * become the outer loops (so the output is written in order), the axes it
 * reduces the inner ones; runs of adjacent axes of the same kind are merged
 * into one loop and size-1 axes vanish. f16/bf16 are computed in float,
 * f32 in float (sums in double), f64 in double; integer sums and products
 * wrap in uint64_t
 * (well defined, and equal to the narrow type's wrap-around). An empty
 * reduction yields the op's identity (Sum 0, Prod 1, Max -inf or the type's
 * lowest, LogSum(Exp) -inf, Mean NaN), as the spec's reference does.
 */
#include "cg.h"
#include "../ir/family.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* "for (size_t v = 0; v < n; v++) {" unless n == 1; returns the new depth */
static int open_loop(ox_cg *cg, int lvl, const char *var, int64_t n, int64_t from)
{
	if (from == 0 && n == 1)
		return lvl;
	ox_cg_line(cg, lvl, "for (size_t %s = %lld; %s < %lld; %s++) {", var, (long long)from, var,
	     (long long)n, var);
	return lvl + 1;
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

/* libm name for the compute type: expf for float, exp for double */
static const char *mfn(int cdt, const char *name)
{
	static char ring[8][16];
	static int at;
	if (cdt == OX_F64)
		return name;
	at = (at + 1) % 8;
	snprintf(ring[at], sizeof ring[at], "%sf", name);
	return ring[at];
}

static void header(ox_cg *cg, ox_graph *g, ox_node *n, const char *what)
{
	char s[256];
	const ox_value *x = ox_in(g, n, 0);
	ox_shape_str(g, &x->shape, s, sizeof s);
	ox_cg_line(cg, 1, "/* %s of %s%s%s */", n->optype, ox_dtype_name(x->dtype), s, what);
}

/* ---------------- Reduce* ---------------- */

/* a run of adjacent axes of one kind, walked by one loop */
typedef struct {
	int64_t n, stride; /* extent, input stride in elements */
} group;

static const char *int_limit(int dt, int lowest)
{
	switch (dt) {
	case OX_I8: return lowest ? "INT8_MIN" : "INT8_MAX";
	case OX_U8: return lowest ? "0" : "UINT8_MAX";
	case OX_I16: return lowest ? "INT16_MIN" : "INT16_MAX";
	case OX_U16: return lowest ? "0" : "UINT16_MAX";
	case OX_I32: return lowest ? "INT32_MIN" : "INT32_MAX";
	case OX_U32: return lowest ? "0" : "UINT32_MAX";
	case OX_I64: return lowest ? "INT64_MIN" : "INT64_MAX";
	case OX_U64: return lowest ? "0" : "UINT64_MAX";
	case OX_BOOL: return lowest ? "0" : "1";
	}
	return NULL;
}

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
		snprintf(var, sizeof var, "r%d", j);
		lvl = open_loop(cg, lvl, var, rg[j].n, 0);
	}
	return lvl;
}

static int emit_reduce_op(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, op = n->op, rank = x->shape.rank;
	int mask[OX_MAX_RANK];
	if (ox_reduce_axes(g, n, mask))
		return -1;
	char what[128] = " over axes {";
	int any = 0;
	for (int i = 0; i < rank; i++)
		if (mask[i])
			snprintf(what + strlen(what), sizeof what - strlen(what), "%s%d", any++ ? "," : "", i);
	strcat(what, "}");
	header(cg, g, n, what);
	int64_t ny = ox_shape_numel(&y->shape);
	if (ny == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}

	/* merge axes into groups, kept ones and reduced ones */
	int64_t stride[OX_MAX_RANK], count = 1, s = 1;
	for (int i = rank - 1; i >= 0; i--)
		stride[i] = s, s *= x->shape.d[i];
	group kg[OX_MAX_RANK], rg[OX_MAX_RANK];
	int nk = 0, nr = 0, last = -1; /* last: kind of the previous non-1 axis */
	for (int i = 0; i < rank; i++) {
		int64_t d = x->shape.d[i];
		if (mask[i])
			count *= d;
		if (d == 1)
			continue;
		group *gr = mask[i] ? rg : kg;
		int *ng = mask[i] ? &nr : &nk;
		if (last == mask[i])
			gr[*ng - 1].n *= d, gr[*ng - 1].stride = stride[i];
		else
			gr[(*ng)++] = (group){d, stride[i]};
		last = mask[i];
	}

	int isf = ox_dtype_is_float(dt), sgn = ox_dtype_is_signed(dt);
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	/* integer L2/LogSum/LogSumExp go through double, like numpy's */
	int viadbl = !isf && (op == OX_OP_ReduceL2 || op == OX_OP_ReduceLogSum ||
	                      op == OX_OP_ReduceLogSumExp);
	int cdt = isf ? (dt == OX_F64 ? OX_F64 : OX_F32) : viadbl ? OX_F64 : dt;
	int ismax = op == OX_OP_ReduceMax, ismin = op == OX_OP_ReduceMin;
	if (!isf && !viadbl && !ismax && !ismin && count == 0 && op == OX_OP_ReduceMean)
		return ox_error(g, n, "the mean of an empty set of integers is undefined");

	/* accumulator type and initial value */
	const char *A, *init;
	if (isf || viadbl) {
		/* float sums accumulate in double: thousands of terms in float
		 * drift past 1e-5 relative (numpy sums pairwise) */
		int sumlike = !ismax && !ismin && op != OX_OP_ReduceProd;
		A = isf && !sumlike ? C : "double";
		init = ox_cg_lit(cdt, op == OX_OP_ReduceProd ? 1 : ismax ? -INFINITY : ismin ? INFINITY : 0);
	} else if (ismax || ismin) {
		A = T;
		init = int_limit(dt, ismax);
		if (!init)
			return ox_error(g, n, "input type %s is not supported", ox_dtype_name(dt));
	} else {
		A = "uint64_t";
		init = op == OX_OP_ReduceProd ? "1u" : "0u";
	}

	/* loops over the kept groups, the output index, the input base */
	int lvl = 1;
	char oidx[256] = "", base[256] = "", var[16];
	for (int j = 0; j < nk; j++) {
		int64_t os = 1;
		for (int k = j + 1; k < nk; k++)
			os *= kg[k].n;
		snprintf(var, sizeof var, "i%d", j);
		ox_cg_term(oidx, sizeof oidx, var, kg[j].n, os);
		ox_cg_term(base, sizeof base, var, kg[j].n, kg[j].stride);
		lvl = open_loop(cg, lvl, var, kg[j].n, 0);
	}
	if (count > 0)
		ox_cg_line(cg, lvl, "const %s *x = in0%s%s;", T, *base ? " + " : "", base);

	/* the reduced loops around `body`, with v bound to the element */
	char ridx[256] = "";
	for (int j = 0; j < nr; j++) {
		snprintf(var, sizeof var, "r%d", j);
		ox_cg_term(ridx, sizeof ridx, var, rg[j].n, rg[j].stride);
	}
	char xe[300], load[340];
	snprintf(xe, sizeof xe, "x[%s]", or0(ridx));
	snprintf(load, sizeof load, "%s", ox_cg_load(dt, xe));
	const char *V = isf ? C : viadbl ? "double" : T;

	if (op == OX_OP_ReduceLogSumExp) {
		/* max first, then sum exp(v - max): exp cannot overflow, and a
		 * non-finite max (all -inf, or +inf) is left out of the shift */
		ox_cg_line(cg, lvl, "%s m = %s;", A, ox_cg_lit(cdt, -INFINITY));
		if (count > 0) {
			int l = open_reduced(cg, lvl, rg, nr);
			ox_cg_line(cg, l, "%s v = %s%s;", V, viadbl ? "(double)" : "", load);
			ox_cg_line(cg, l, "if (v > m || isnan(v))");
			ox_cg_line(cg, l + 1, "m = v;");
			close_loops(cg, l, lvl);
		}
		ox_cg_line(cg, lvl, "if (!isfinite(m))");
		ox_cg_line(cg, lvl + 1, "m = %s;", ox_cg_lit(cdt, 0));
	}
	ox_cg_line(cg, lvl, "%s acc = %s;", A, init);
	if (count > 0) {
		int l = open_reduced(cg, lvl, rg, nr);
		ox_cg_line(cg, l, "%s v = %s%s;", V, viadbl ? "(double)" : "", load);
		const char *U = "(uint64_t)v";
		switch (op) {
		case OX_OP_ReduceMax:
		case OX_OP_ReduceMin:
			ox_cg_line(cg, l, "if (v %s acc%s)", ismax ? ">" : "<", isf ? " || isnan(v)" : "");
			ox_cg_line(cg, l + 1, "acc = v;");
			break;
		case OX_OP_ReduceProd:
			ox_cg_line(cg, l, "acc *= %s;", isf ? "v" : U);
			break;
		case OX_OP_ReduceL1:
			if (isf)
				ox_cg_line(cg, l, "acc += %s(v);", mfn(cdt, "fabs"));
			else if (sgn)
				ox_cg_line(cg, l, "acc += v < 0 ? 0u - (uint64_t)v : (uint64_t)v;");
			else
				ox_cg_line(cg, l, "acc += v;");
			break;
		case OX_OP_ReduceL2:
		case OX_OP_ReduceSumSquare:
			ox_cg_line(cg, l, "acc += %s;", isf || viadbl ? "v * v" : "(uint64_t)v * (uint64_t)v");
			break;
		case OX_OP_ReduceLogSumExp:
			ox_cg_line(cg, l, "acc += %s(v - m);", mfn(cdt, "exp"));
			break;
		default: /* Sum, Mean, LogSum */
			ox_cg_line(cg, l, "acc += %s;", isf || viadbl ? "v" : U);
			break;
		}
		close_loops(cg, l, lvl);
	}

	/* finish and store */
	char r[256];
	switch (op) {
	case OX_OP_ReduceMean:
		if (isf)
			snprintf(r, sizeof r, count ? "acc / %s" : "%s", ox_cg_lit(cdt, count ? (double)count : NAN));
		else if (sgn)
			snprintf(r, sizeof r, "(int64_t)acc / %lld", (long long)count);
		else
			snprintf(r, sizeof r, "acc / %lluu", (unsigned long long)count);
		break;
	case OX_OP_ReduceL2: snprintf(r, sizeof r, "%s(acc)", mfn(cdt, "sqrt")); break;
	case OX_OP_ReduceLogSum: snprintf(r, sizeof r, "%s(acc)", mfn(cdt, "log")); break;
	case OX_OP_ReduceLogSumExp: snprintf(r, sizeof r, "m + %s(acc)", mfn(cdt, "log")); break;
	default: snprintf(r, sizeof r, "acc"); break;
	}
	if (isf || ismax || ismin)
		ox_cg_line(cg, lvl, "out0[%s] = %s;", or0(oidx), ox_cg_store(dt, r));
	else /* from the uint64_t or double accumulator */
		ox_cg_line(cg, lvl, "out0[%s] = (%s)(%s);", or0(oidx), T, r);
	close_loops(cg, lvl, 1);
	return 0;
}

/* ---------------- ArgMax / ArgMin ---------------- */

/* the "take v over best" test: NaN wins (the first one, or the last one
 * with select_last_index), as numpy's argmax does */
static void better(char *buf, size_t cap, int isf, int max, int last)
{
	const char *gt = max ? ">" : "<";
	if (!isf)
		snprintf(buf, cap, "v %s%s best", gt, last ? "=" : "");
	else if (!last)
		snprintf(buf, cap, "v %s best || (isnan(v) && !isnan(best))", gt);
	else
		snprintf(buf, cap, "isnan(v) || (!isnan(best) && v %s= best)", gt);
}

/* outer x len x inner: the index space of a one-axis kernel */
typedef struct {
	int64_t outer, len, inner;
} span;

static span span_at(const ox_shape *s, int ax, int legacy)
{
	span p = {1, 1, 1};
	for (int i = 0; i < s->rank; i++) {
		if (i < ax)
			p.outer *= s->d[i];
		else if (i == ax || legacy)
			p.len *= s->d[i];
		else
			p.inner *= s->d[i];
	}
	return p;
}

/* open the outer/inner loops; sets the row base expression (input and
 * output share the layout) and returns the depth */
static int open_rows(ox_cg *cg, span p, int64_t out_len, char *base, size_t bcap, char *obase,
                     size_t ocap)
{
	int lvl = open_loop(cg, 1, "i", p.outer, 0);
	lvl = open_loop(cg, lvl, "j", p.inner, 0);
	base[0] = obase[0] = 0;
	ox_cg_term(base, bcap, "i", p.outer, p.len * p.inner);
	ox_cg_term(base, bcap, "j", p.inner, 1);
	ox_cg_term(obase, ocap, "i", p.outer, out_len * p.inner);
	ox_cg_term(obase, ocap, "j", p.inner, 1);
	return lvl;
}

/* "k * inner", "k", or "0" where there is no k loop (len 1) */
static const char *kidx(int64_t len, int64_t inner)
{
	static char buf[64];
	if (len == 1)
		return "0";
	if (inner == 1)
		return "k";
	snprintf(buf, sizeof buf, "k * %lld", (long long)inner);
	return buf;
}

static int emit_arg(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype;
	int ax = ox_norm_axis(ox_attr_int(n, "axis", 0), x->shape.rank);
	int last = ox_attr_int(n, "select_last_index", 0) != 0;
	char what[64];
	snprintf(what, sizeof what, " along axis %d%s", ax, last ? ", last index on ties" : "");
	header(cg, g, n, what);
	span p = span_at(&x->shape, ax, 0);
	if (p.outer * p.inner == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}
	char base[128], obase[128], cond[128];
	int lvl = open_rows(cg, p, 1, base, sizeof base, obase, sizeof obase);
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	if (p.len == 1) { /* one candidate: index 0 */
		ox_cg_line(cg, lvl, "out0[%s] = 0;", or0(obase));
		close_loops(cg, lvl, 1);
		return 0;
	}
	ox_cg_line(cg, lvl, "const %s *x = in0%s%s;", T, *base ? " + " : "", base);
	ox_cg_line(cg, lvl, "%s best = %s;", C, ox_cg_load(dt, "x[0]"));
	ox_cg_line(cg, lvl, "int64_t at = 0;");
	better(cond, sizeof cond, ox_dtype_is_float(dt), n->op == OX_OP_ArgMax, last);
	char e[96];
	snprintf(e, sizeof e, "x[%s]", kidx(p.len, p.inner));
	int l = open_loop(cg, lvl, "k", p.len, 1);
	ox_cg_line(cg, l, "%s v = %s;", C, ox_cg_load(dt, e));
	ox_cg_line(cg, l, "if (%s) {", cond);
	ox_cg_line(cg, l + 1, "best = v;");
	ox_cg_line(cg, l + 1, "at = (int64_t)k;");
	ox_cg_line(cg, l, "}");
	close_loops(cg, l, lvl);
	ox_cg_line(cg, lvl, "out0[%s] = at;", or0(obase));
	close_loops(cg, lvl, 1);
	return 0;
}

/* ---------------- Softmax, LogSoftmax, Hardmax ---------------- */

static int emit_softmax(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, rank = x->shape.rank, legacy = n->opset < 13;
	int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
	int ax = legacy && a == rank ? rank : ox_norm_axis(a, rank);
	char what[64];
	snprintf(what, sizeof what, legacy ? " over axes %d.. (as 2-D)" : " along axis %d", ax);
	header(cg, g, n, what);
	span p = span_at(&x->shape, ax, legacy);
	if (p.outer * p.inner * p.len == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	int cdt = dt == OX_F64 ? OX_F64 : OX_F32;
	char base[128], obase[128], xe[96], ye[96];
	int lvl = open_rows(cg, p, p.len, base, sizeof base, obase, sizeof obase);
	snprintf(xe, sizeof xe, "x[%s]", kidx(p.len, p.inner));
	snprintf(ye, sizeof ye, "y[%s]", kidx(p.len, p.inner));
	if (n->op == OX_OP_Hardmax && p.len == 1) { /* a row of one: 1 */
		ox_cg_line(cg, lvl, "out0[%s] = %s;", or0(obase), ox_cg_store(dt, ox_cg_lit(dt, 1)));
		close_loops(cg, lvl, 1);
		return 0;
	}
	ox_cg_line(cg, lvl, "const %s *x = in0%s%s;", T, *base ? " + " : "", base);
	ox_cg_line(cg, lvl, "%s *y = out0%s%s;", T, *base ? " + " : "", base);

	if (n->op == OX_OP_Hardmax) {
		/* one-hot at the first maximum (ArgMax's rule, NaN included) */
		char cond[128], one[64], zero[64];
		snprintf(one, sizeof one, "%s", ox_cg_store(dt, ox_cg_lit(dt, 1)));
		snprintf(zero, sizeof zero, "%s", ox_cg_store(dt, ox_cg_lit(dt, 0)));
		better(cond, sizeof cond, 1, 1, 0);
		ox_cg_line(cg, lvl, "%s best = %s;", C, ox_cg_load(dt, "x[0]"));
		ox_cg_line(cg, lvl, "size_t at = 0;");
		int l = open_loop(cg, lvl, "k", p.len, 1);
		ox_cg_line(cg, l, "%s v = %s;", C, ox_cg_load(dt, xe));
		ox_cg_line(cg, l, "if (%s) {", cond);
		ox_cg_line(cg, l + 1, "best = v;");
		ox_cg_line(cg, l + 1, "at = k;");
		ox_cg_line(cg, l, "}");
		close_loops(cg, l, lvl);
		l = open_loop(cg, lvl, "k", p.len, 0);
		ox_cg_line(cg, l, "%s = k == at ? %s : %s;", ye, one, zero);
		close_loops(cg, l, lvl);
		close_loops(cg, lvl, 1);
		return 0;
	}

	/* subtract the row maximum so exp cannot overflow; a NaN anywhere makes
	 * the sum NaN and so the whole row, as in the reference */
	int l;
	ox_cg_line(cg, lvl, "%s m = %s;", C, ox_cg_load(dt, "x[0]"));
	if (p.len > 1) {
		l = open_loop(cg, lvl, "k", p.len, 1);
		ox_cg_line(cg, l, "%s v = %s;", C, ox_cg_load(dt, xe));
		ox_cg_line(cg, l, "if (v > m)");
		ox_cg_line(cg, l + 1, "m = v;");
		close_loops(cg, l, lvl);
	}
	ox_cg_line(cg, lvl, "%s s = %s;", C, ox_cg_lit(cdt, 0));
	/* where storage is the compute type, keep exp(v - m) in y for the
	 * last pass; f16/bf16 would round it, so they recompute it */
	int keep = n->op == OX_OP_Softmax && dt != OX_F16 && dt != OX_BF16;
	char xv[96], ev[160];
	snprintf(xv, sizeof xv, "%s", ox_cg_load(dt, xe));
	snprintf(ev, sizeof ev, "%s(%s - m)", mfn(cdt, "exp"), xv);
	l = open_loop(cg, lvl, "k", p.len, 0);
	if (keep) {
		ox_cg_line(cg, l, "%s e = %s;", C, ev);
		ox_cg_line(cg, l, "%s = e;", ye);
		ox_cg_line(cg, l, "s += e;");
	} else {
		ox_cg_line(cg, l, "s += %s;", ev);
	}
	close_loops(cg, l, lvl);
	char r[256];
	if (n->op == OX_OP_LogSoftmax) {
		ox_cg_line(cg, lvl, "%s ls = %s(s);", C, mfn(cdt, "log"));
		snprintf(r, sizeof r, "%s", ox_cg_store(dt, "(v - m) - ls"));
		l = open_loop(cg, lvl, "k", p.len, 0);
		ox_cg_line(cg, l, "%s v = %s;", C, xv);
		ox_cg_line(cg, l, "%s = %s;", ye, r);
	} else if (keep) {
		l = open_loop(cg, lvl, "k", p.len, 0);
		ox_cg_line(cg, l, "%s /= s;", ye);
	} else {
		char q[192];
		snprintf(q, sizeof q, "%s / s", ev);
		l = open_loop(cg, lvl, "k", p.len, 0);
		ox_cg_line(cg, l, "%s = %s;", ye, ox_cg_store(dt, q));
	}
	close_loops(cg, l, lvl);
	close_loops(cg, lvl, 1);
	return 0;
}

/* ---------------- LayerNormalization ---------------- */

/* Strides of Scale/B over the normalized axes ax..rank-1 of X, numpy's
 * right-aligned broadcasting, 0 where they broadcast. -1 if the operand
 * varies along a leading (non-normalized) axis, which we do not compile. */
static int param_strides(const ox_value *x, const ox_value *p, int ax, int64_t *st)
{
	int rank = x->shape.rank, off = rank - p->shape.rank;
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		int pi = i - off;
		int64_t d = pi >= 0 ? p->shape.d[pi] : 1;
		if (i < ax && d != 1)
			return -1;
		if (i >= ax)
			st[i] = d == 1 ? 0 : s;
		s *= d;
	}
	return 0;
}

/* how k, the flat index in a normalized row, reaches a Scale/B element:
 * 2 the operand is one value (index 0), 1 it is laid out like the row
 * (index k), 0 neither (nested loops with broadcast strides) */
static int param_kind(const ox_value *x, const int64_t *st, const int64_t *xs, int ax)
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
	snprintf(what, sizeof what, " over axes %d..%d", ax, rank - 1);
	header(cg, g, n, what);
	span p = span_at(&x->shape, ax, 1);
	if (p.outer == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}
	/* stage 1 (mean, variance, normalization) in the stash type; stage 2
	 * (scale and bias) in X's compute type */
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt), *S = ox_cg_ctype(stash);
	int64_t sst[OX_MAX_RANK], bst[OX_MAX_RANK];
	const ox_value *w = ox_in(g, n, 1), *b = ox_in(g, n, 2);
	if (param_strides(x, w, ax, sst) || (b && param_strides(x, b, ax, bst)))
		return ox_error(g, n, "Scale or B varies along a non-normalized axis: not supported");
	int64_t xs[OX_MAX_RANK], st = 1;
	for (int i = rank - 1; i >= ax; i--)
		xs[i] = st, st *= x->shape.d[i];
	int wk = param_kind(x, sst, xs, ax), bk = b ? param_kind(x, bst, xs, ax) : 2;
	int flat = wk && bk;
	char xl[64], rowx[64];
	snprintf(rowx, sizeof rowx, "in0%s", p.outer > 1 ? " + i * " : "");
	if (p.outer > 1)
		snprintf(rowx + strlen(rowx), sizeof rowx - strlen(rowx), "%lld", (long long)p.len);
	int lvl = open_loop(cg, 1, "i", p.outer, 0);
	ox_cg_line(cg, lvl, "const %s *x = %s;", T, rowx);
	ox_cg_line(cg, lvl, "%s *y = out0%s;", T, rowx + 3);
	snprintf(xl, sizeof xl, "%s%s", strcmp(C, S) ? (stash == OX_F64 ? "(double)" : "(float)") : "",
	         ox_cg_load(dt, "x[k]"));
	ox_cg_line(cg, lvl, "%s sum = %s;", S, ox_cg_lit(stash, 0));
	int l = open_loop(cg, lvl, "k", p.len, 0);
	ox_cg_line(cg, l, "sum += %s;", xl);
	close_loops(cg, l, lvl);
	ox_cg_line(cg, lvl, "%s mean = sum / %s;", S, ox_cg_lit(stash, (double)p.len));
	ox_cg_line(cg, lvl, "%s sq = %s;", S, ox_cg_lit(stash, 0));
	l = open_loop(cg, lvl, "k", p.len, 0);
	ox_cg_line(cg, l, "%s d = %s - mean;", S, xl);
	ox_cg_line(cg, l, "sq += d * d;");
	close_loops(cg, l, lvl);
	ox_cg_line(cg, lvl, "%s inv = %s / %s(sq / %s + %s);", S, ox_cg_lit(stash, 1), mfn(stash, "sqrt"),
	     ox_cg_lit(stash, (double)p.len), ox_cg_lit(stash, eps));
	const char *oi = p.outer > 1 ? "i" : "0";
	if (ox_out(g, n, 1))
		ox_cg_line(cg, lvl, "out1[%s] = mean;", oi);
	if (ox_out(g, n, 2))
		ox_cg_line(cg, lvl, "out2[%s] = inv;", oi);

	/* y = (C)((x - mean) * inv) * scale + bias */
	char widx[256] = "", bidx[256] = "", yidx[256] = "", var[16];
	if (flat) {
		l = open_loop(cg, lvl, "k", p.len, 0);
		ox_cg_term(yidx, sizeof yidx, "k", p.len, 1);
		ox_cg_term(widx, sizeof widx, "k", p.len, wk == 2 ? 0 : 1);
		ox_cg_term(bidx, sizeof bidx, "k", p.len, bk == 2 ? 0 : 1);
	} else {
		l = lvl;
		for (int i = ax; i < rank; i++) {
			snprintf(var, sizeof var, "k%d", i - ax);
			l = open_loop(cg, l, var, x->shape.d[i], 0);
			ox_cg_term(yidx, sizeof yidx, var, x->shape.d[i], xs[i]);
			ox_cg_term(widx, sizeof widx, var, x->shape.d[i], sst[i]);
			if (b)
				ox_cg_term(bidx, sizeof bidx, var, x->shape.d[i], bst[i]);
		}
	}
	char e[1200], ws[272], bs[272], xe[272], cs[32] = "", cc[32] = "";
	snprintf(ws, sizeof ws, "in1[%s]", or0(widx));
	snprintf(bs, sizeof bs, "in2[%s]", or0(bidx));
	snprintf(xe, sizeof xe, "x[%s]", or0(yidx));
	if (strcmp(C, S)) /* a cast only where the types differ */
		snprintf(cs, sizeof cs, "(%s)", S), snprintf(cc, sizeof cc, "(%s)", C);
	snprintf(e, sizeof e, "%s((%s%s - mean) * inv) * %s", cc, cs, ox_cg_load(dt, xe),
	         ox_cg_load(dt, ws));
	if (b)
		snprintf(e + strlen(e), sizeof e - strlen(e), " + %s", ox_cg_load(dt, bs));
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
