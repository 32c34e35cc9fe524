/* emit_rows.c: f32 kernels over rows of contiguous floats, on the target's
 * vectors (templates/vf.c, vmath.c): LayerNormalization and
 * RMSNormalization over trailing axes, Softmax and LogSoftmax over the last
 * axis (or the legacy 2-D coercion). A row of D floats is read a vector at a
 * time, two accumulators wide; the last D mod W floats are a partial vector
 * (ox_vf_load_n / ox_vf_store_n), and a partial vector's lanes enter a sum
 * or a maximum through a buffer that holds the reduction's identity
 * elsewhere, so no kernel relies on what a partial load puts past its end.
 * LayerNorm takes two passes for the variance (the mean, then the squared
 * deviations from it), as the reference does; softmax subtracts the row's
 * maximum before exp. Large outputs are split into parallel tasks over runs
 * of rows (the ox_parallel hook). Run-time dims (docs/dynamic.md) take the
 * same kernels: a run-time row count bounds the loop over rows (and the
 * tasks, fewer where the rows are few and short), a run-time row length makes the
 * split into full vectors and the tail run-time values (len, nf, tn) where
 * a constant length decides them when compiling. Other dtypes, layouts and
 * shapes keep the scalar emitters (codegen/c/emit_reduce.c, emit_attn.c):
 * ox_cg_rows_ok decides per node.
 */
#include "../cg.h"
#include <stdio.h>
#include <string.h>

/* a Scale/B operand over the normalized axes ax.. of x: 2 one value, 1 laid
 * out like a row (right-aligned, every normalized dim as x's), 0 neither */
static int row_kind(const ox_graph *g, const ox_value *x, const ox_value *p, int ax)
{
	if (!p)
		return 2;
	if (p->dtype != OX_F32 || p->layout)
		return 0;
	if (ox_shape_numel_dim((ox_graph *)g, &p->shape) == 1)
		return 2;
	int r = x->shape.rank, off = r - p->shape.rank;
	if (off < 0)
		return 0;
	for (int i = 0; i < r; i++) {
		int64_t d = i < off ? 1 : p->shape.d[i - off];
		if (d != (i < ax ? 1 : x->shape.d[i]))
			return 0;
	}
	return 1;
}

/* rows x D: the shape split at the first normalized axis */
static int split(const ox_graph *g, const ox_node *n, int *ax)
{
	const ox_value *x = ox_in((ox_graph *)g, n, 0);
	int r = x->shape.rank;
	switch (n->op) {
	case OX_OP_Softmax:
	case OX_OP_LogSoftmax: {
		int legacy = n->opset < 13;
		int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
		*ax = legacy && a == r ? r : ox_norm_axis(a, r);
		if (*ax < 0)
			return 0;
		for (int i = *ax + 1; i < r && !legacy; i++) /* contiguous rows: nothing inside the axis */
			if (x->shape.d[i] != 1)
				return 0;
		return 1;
	}
	case OX_OP_LayerNormalization:
	case OX_OP_RMSNormalization:
		*ax = ox_norm_axis(ox_attr_int(n, "axis", -1), r);
		return *ax >= 0 && ox_attr_int(n, "stash_type", OX_F32) == OX_F32;
	}
	return 0;
}

int ox_cg_rows_ok(ox_graph *g, const ox_node *n)
{
	int ax;
	if (!g->opt || !split(g, n, &ax))
		return 0;
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (x->dtype != OX_F32 || y->dtype != OX_F32 || x->layout || y->layout)
		return 0;
	if (n->op == OX_OP_LayerNormalization || n->op == OX_OP_RMSNormalization)
		return row_kind(g, x, ox_in(g, n, 1), ax) && row_kind(g, x, ox_in(g, n, 2), ax);
	return 1;
}

/* how the row's full vectors and its tail are walked */
typedef struct {
	ox_cg *cg;
	int64_t D, F; /* floats in a row, of them in full vectors */
	int W, n;     /* lanes, lanes of the partial last vector (0: none) */
	int rt;       /* D is a run-time dim: F and n are the variables nf, tn */
} row;

enum { R_ADD, R_SQ, R_MAX }; /* acc + t, acc + t * t, max(acc, t) */

/* one step: t = term(at offset off), stored to y when store, combined in
 * acc; the partial last vector goes through the buffer tb. Only if cond
 * holds, when cond is not NULL. */
static void step_if(const row *R, int lvl, const char *cond, const char *acc, const char *term, const char *off,
		    int op, const char *store, int part)
{
	char t[512];
	ox_cg_snprintf(t, sizeof t, term, part ? "ox_vf_load_n(" : "ox_vf_load(", off, part ? ", tn)" : ")");
	if (!part && !store && op != R_SQ) { /* t once: one line */
		if (cond)
			ox_cg_line(R->cg, lvl++, "if (%s)", cond);
		ox_cg_line(R->cg, lvl, "%s = %s(%s, %s);", acc, op == R_ADD ? "ox_vf_add" : "ox_vf_max", acc, t);
		return;
	}
	if (cond)
		ox_cg_line(R->cg, lvl, "if (%s) {", cond);
	else
		ox_cg_line(R->cg, lvl, "{");
	ox_cg_line(R->cg, lvl + 1, "%s t = %s;", part ? "ox_vf" : "const ox_vf", t);
	if (store)
		ox_cg_line(R->cg, lvl + 1, part ? "ox_vf_store_n(%s + %s, t, tn);" : "ox_vf_store(%s + %s, t);", store, off);
	if (part) { /* lanes past the row: the identity */
		ox_cg_line(R->cg, lvl + 1, "ox_vf_store(tb, %s);", op == R_MAX ? "ox_vf_set1(-INFINITY)" : "ox_vf_zero()");
		ox_cg_line(R->cg, lvl + 1, "ox_vf_store_n(tb, t, tn);");
		ox_cg_line(R->cg, lvl + 1, "t = ox_vf_load(tb);");
	}
	if (op == R_ADD)
		ox_cg_line(R->cg, lvl + 1, "%s = ox_vf_add(%s, t);", acc, acc);
	else if (op == R_SQ)
		ox_cg_line(R->cg, lvl + 1, "%s = ox_vf_fma(t, t, %s);", acc, acc);
	else
		ox_cg_line(R->cg, lvl + 1, "%s = ox_vf_max(%s, t);", acc, acc);
	ox_cg_line(R->cg, lvl, "}");
}

static void step(const row *R, int lvl, const char *acc, const char *term, const char *off, int op,
		 const char *store, int part)
{
	step_if(R, lvl, NULL, acc, term, off, op, store, part);
}

/* A reduction of the row into the float `res`: term is a format with %s
 * (the load call), %s (the offset), %s (its end) around a row pointer, e.g.
 * "ox_vf_sub(%sx + %s%s, mv)"; store: where t is also stored (or NULL). */
static void reduce(const row *R, int lvl, const char *res, const char *term, int op, const char *store)
{
	ox_cg *cg = R->cg;
	const char *id = op == R_MAX ? "ox_vf_set1(-INFINITY)" : "ox_vf_zero()";
	int64_t nv = R->F / R->W;
	char off[64], cond[32];
	if (R->rt) { /* the same steps, on the run-time nf and tn */
		ox_cg_line(cg, lvl, "ox_vf a0 = %s, a1 = %s;", id, id);
		ox_cg_line(cg, lvl, "for (long j = 0; j + %d <= nf; j += %d) {", 2 * R->W, 2 * R->W);
		step(R, lvl + 1, "a0", term, "j", op, store, 0);
		ox_cg_snprintf(off, sizeof off, "j + %d", R->W);
		step(R, lvl + 1, "a1", term, off, op, store, 0);
		ox_cg_line(cg, lvl, "}");
		/* an odd number of full vectors: the last one */
		ox_cg_snprintf(off, sizeof off, "nf - %d", R->W);
		ox_cg_snprintf(cond, sizeof cond, "nf %% %d", 2 * R->W);
		step_if(R, lvl, cond, "a0", term, off, op, store, 0);
		step_if(R, lvl, "tn", "a0", term, "nf", op, store, 1);
		nv = 2;
	} else if (nv >= 2) {
		ox_cg_line(cg, lvl, "ox_vf a0 = %s, a1 = %s;", id, id);
		ox_cg_line(cg, lvl, "for (long j = 0; j + %d <= %lld; j += %d) {", 2 * R->W, (long long)R->F, 2 * R->W);
		step(R, lvl + 1, "a0", term, "j", op, store, 0);
		ox_cg_snprintf(off, sizeof off, "j + %d", R->W);
		step(R, lvl + 1, "a1", term, off, op, store, 0);
		ox_cg_line(cg, lvl, "}");
	} else {
		ox_cg_line(cg, lvl, "ox_vf a0 = %s;", id);
	}
	if (!R->rt && nv % 2) {
		ox_cg_snprintf(off, sizeof off, "%lld", (long long)(R->F - R->W));
		step(R, lvl, "a0", term, off, op, store, 0);
	}
	if (!R->rt && R->n) {
		ox_cg_snprintf(off, sizeof off, "%lld", (long long)R->F);
		step(R, lvl, "a0", term, off, op, store, 1);
	}
	if (nv >= 2)
		ox_cg_line(cg, lvl, "a0 = %s(a0, a1);", op == R_MAX ? "ox_vf_max" : "ox_vf_add");
	ox_cg_line(cg, lvl, "const float %s = %s(a0);", res, op == R_MAX ? "ox_vf_hmax" : "ox_vf_hsum");
}

/* the vectors of the rows ptr[0..n-1] at offset off, loaded in full
 * ("ox_vf_load(x + j)") or, with tail, partly */
static void loads(char (*ld)[96], const char *const *ptr, int n, const char *off, int tail)
{
	for (int k = 0; k < n; k++)
		ox_cg_snprintf(ld[k], sizeof ld[k], tail ? "ox_vf_load_n(%s + %s, tn)" : "ox_vf_load(%s + %s)", ptr[k], off);
}

/* y[j] = out(the vectors at j) over the row, full vectors then the
 * partial one; out is a format with a %s for the vector of each row
 * ptr[0..nload-1] (at most 3), e.g. "ox_vf_mul(%s, iv)" of {"y"} */
static void map(const row *R, int lvl, const char *out, const char *const *ptr, int nload)
{
	char e[1024], off[64], ld[3][96] = {"", "", ""};
	if (R->rt || R->F > 0) {
		loads(ld, ptr, nload, "j", 0);
		ox_cg_snprintf(e, sizeof e, out, ld[0], ld[1], ld[2]);
		if (R->rt)
			ox_cg_line(R->cg, lvl, "for (long j = 0; j < nf; j += %d)", R->W);
		else
			ox_cg_line(R->cg, lvl, "for (long j = 0; j < %lld; j += %d)", (long long)R->F, R->W);
		ox_cg_line(R->cg, lvl + 1, "ox_vf_store(y + j, %s);", e);
	}
	if (R->rt || R->n) {
		if (R->rt)
			ox_cg_snprintf(off, sizeof off, "nf");
		else
			ox_cg_snprintf(off, sizeof off, "%lld", (long long)R->F);
		loads(ld, ptr, nload, off, 1);
		ox_cg_snprintf(e, sizeof e, out, ld[0], ld[1], ld[2]);
		if (R->rt)
			ox_cg_line(R->cg, lvl, "if (tn)");
		ox_cg_line(R->cg, lvl + R->rt, "ox_vf_store_n(y + %s, %s, tn);", off, e);
	}
}

int ox_cg_emit_rows(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int ax;
	if (!ox_cg_rows_ok(g, n) || !split(g, n, &ax))
		ox_die("codegen: node '%s' is not for the row kernels", n->name);
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *bv = ox_in(g, n, 2);
	ox_dim rows = 1, D = 1;
	for (int i = 0; i < x->shape.rank; i++)
		if (i < ax)
			rows = ox_dim_mul(g, rows, x->shape.d[i]);
		else
			D = ox_dim_mul(g, D, x->shape.d[i]);
	int W = g->target->vw, rt = ox_dim_is_rt(g, D);
	int64_t Dc = rt ? 0 : D; /* the constant D */
	row R = {cg, Dc, Dc / W * W, W, (int)(Dc % W), rt};
	int op = n->op, norm = op == OX_OP_LayerNormalization || op == OX_OP_RMSNormalization;
	double eps = ox_attr_float(n, "epsilon", 1e-5f);
	char what[160] = "", rs[128], ds[128];
	if (norm)
		ox_cg_snprintf(what, sizeof what, ", epsilon %s", ox_cg_lit(OX_F32, eps));
	ox_dim_str(g, rows, rs, sizeof rs);
	ox_dim_str(g, D, ds, sizeof ds);
	for (char *q = rs; (q = strstr(q, "*/"));) /* symbols' names must not end the comment */
		*q = '.';
	for (char *q = ds; (q = strstr(q, "*/"));)
		*q = '.';
	ox_cg_line(cg, 1, "/* %s of %s rows of %s floats, on %d-lane vectors%s */", n->optype, rs, ds, W, what);
	if (ox_dim_mul(g, rows, D) == 0)
		return 0;
	ox_cg_use_vf(cg);
	if (ox_cg_use(cg, "vmath", OX_F32))
		ox_die("templates/vmath.c is missing");

	/* tasks: runs of rows */
	if (!ox_dim_is_rt(g, rows) && !rt) {
		long ntasks = rows * D >= 16384 && rows > 1 ? (long)(rows < 64 ? rows : 64) : 0;
		if (ntasks > 1) {
			ox_cg_tasks(cg, ntasks);
			ox_cg_line(cg, 1, "const long i0 = t * %lld / %ld, i1 = (t + 1) * %lld / %ld;", (long long)rows,
				   ntasks, (long long)rows, ntasks);
		} else {
			ox_cg_line(cg, 1, "const long i0 = 0, i1 = %lld;", (long long)rows);
		}
	} else if (ox_dim_hi(g, ox_dim_mul(g, rows, D)) >= 16384 && ox_dim_hi(g, rows) > 1) {
		/* as many tasks as the constant case (64, at most one per row);
		 * where the size may be below its threshold and rows shorter
		 * than 256 floats, fewer: about one per 256 floats (a single one
		 * runs without the hook) */
		ox_dim total = ox_dim_mul(g, rows, D), nt = 64;
		int64_t lo, hi, dlo, dhi;
		if ((ox_dim_range(g, total, &lo, &hi) || lo < 16384) && (ox_dim_range(g, D, &dlo, &dhi) || dlo < 256))
			nt = ox_dim_op(g, OX_DE_MIN, ox_dim_add(g, ox_dim_div(g, total, 256), 1), 64);
		nt = ox_dim_op(g, OX_DE_MIN, rows, nt);
		ox_cg_tasks_dim(cg, nt);
		ox_cg_line(cg, 1, "const long rows = (long)%s, nt = (long)%s;", ox_cg_dim(cg, rows), ox_cg_dim(cg, nt));
		ox_cg_line(cg, 1, "const long i0 = t * rows / nt, i1 = (t + 1) * rows / nt;");
	} else {
		ox_cg_line(cg, 1, "const long i0 = 0, i1 = (long)%s;", ox_cg_dim(cg, rows));
	}
	if (rt) {
		ox_cg_line(cg, 1, "const long len = (long)%s, nf = len / %d * %d; /* floats in a row, of them in full vectors */",
			   ox_cg_dim(cg, D), W, W);
		ox_cg_line(cg, 1, "const int tn = (int)(len - nf); /* floats in the last, partial vector */");
		ox_cg_line(cg, 1, "float tb[%d];", W);
	}
	ox_cg_line(cg, 1, "for (long i = i0; i < i1; i++) {");
	if (rt) {
		ox_cg_line(cg, 2, "const float *x = in0 + i * len;");
		ox_cg_line(cg, 2, "float *y = out0 + i * len;");
	} else {
		ox_cg_line(cg, 2, "const float *x = in0 + i * %lld;", (long long)D);
		ox_cg_line(cg, 2, "float *y = out0 + i * %lld;", (long long)D);
	}
	if (R.n) {
		ox_cg_line(cg, 2, "const int tn = %d; /* floats in the last, partial vector */", R.n);
		ox_cg_line(cg, 2, "float tb[%d];", W);
	}
	int lvl = 2;
	switch (op) {
	case OX_OP_Softmax:
	case OX_OP_LogSoftmax:
		reduce(&R, lvl, "m", "%sx + %s%s", R_MAX, NULL);
		ox_cg_line(cg, lvl, "const ox_vf mv = ox_vf_set1(m);");
		ox_cg_line(cg, lvl, "{");
		/* Softmax keeps exp(x - m) in y for the last pass */
		reduce(&R, lvl + 1, "s", "ox_vf_exp(ox_vf_sub(%sx + %s%s, mv))", R_ADD, op == OX_OP_Softmax ? "y" : NULL);
		if (op == OX_OP_Softmax) {
			ox_cg_line(cg, lvl + 1, "const ox_vf iv = ox_vf_set1(1.0f / s);");
			map(&R, lvl + 1, "ox_vf_mul(%s, iv)", (const char *[]){"y"}, 1);
		} else { /* (x - m) - log(s): m + log(s) would round away small differences */
			ox_cg_line(cg, lvl + 1, "const ox_vf lv = ox_vf_set1(logf(s));");
			map(&R, lvl + 1, "ox_vf_sub(ox_vf_sub(%s, mv), lv)", (const char *[]){"x"}, 1);
		}
		ox_cg_line(cg, lvl, "}");
		break;
	case OX_OP_LayerNormalization:
	case OX_OP_RMSNormalization: {
		int ln = op == OX_OP_LayerNormalization;
		int wk = row_kind(g, x, w, ax), bk = ln && bv ? row_kind(g, x, bv, ax) : 0;
		char dl[64];
		ox_cg_snprintf(dl, sizeof dl, "%s", rt ? "(float)len" : ox_cg_lit(OX_F32, (double)D));
		if (ln) {
			reduce(&R, lvl, "sum", "%sx + %s%s", R_ADD, NULL);
			ox_cg_line(cg, lvl, "const float mean = sum / %s;", dl);
			ox_cg_line(cg, lvl, "const ox_vf mv = ox_vf_set1(mean);");
			ox_cg_line(cg, lvl, "{");
			reduce(&R, lvl + 1, "sq", "ox_vf_sub(%sx + %s%s, mv)", R_SQ, NULL);
		} else {
			ox_cg_line(cg, lvl, "{");
			reduce(&R, lvl + 1, "sq", "%sx + %s%s", R_SQ, NULL);
		}
		ox_cg_line(cg, lvl + 1, "const float inv = 1.0f / sqrtf(sq / %s + %s);", dl, ox_cg_lit(OX_F32, eps));
		if (ln && ox_out(g, n, 1))
			ox_cg_line(cg, lvl + 1, "out1[i] = mean;");
		if (ln && ox_out(g, n, 2))
			ox_cg_line(cg, lvl + 1, "out2[i] = inv;");
		ox_cg_line(cg, lvl + 1, "const ox_vf iv = ox_vf_set1(inv);");
		/* the scale and bias: a vector of the row, or one value splatted */
		char e[512];
		const char *ptr[3] = {"x"}, *ws = "%s", *bs = "%s";
		int nload = 1;
		const char *xv = ln ? "ox_vf_sub(%s, mv)" : "%s";
		if (wk == 2) {
			ox_cg_line(cg, lvl + 1, "const ox_vf wv = ox_vf_set1(in1[0]);");
			ws = "wv";
		} else {
			ptr[nload++] = "in1";
		}
		if (bk == 2) {
			ox_cg_line(cg, lvl + 1, "const ox_vf bv = ox_vf_set1(in2[0]);");
			bs = "bv";
		} else if (bk == 1) {
			ptr[nload++] = "in2";
		}
		if (bk)
			ox_cg_snprintf(e, sizeof e, "ox_vf_fma(ox_vf_mul(%s, iv), %s, %s)", xv, ws, bs);
		else
			ox_cg_snprintf(e, sizeof e, "ox_vf_mul(ox_vf_mul(%s, iv), %s)", xv, ws);
		map(&R, lvl + 1, e, ptr, nload);
		ox_cg_line(cg, lvl, "}");
		break;
	}
	default:
		ox_die("codegen: no row kernel for %s", n->optype);
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}
