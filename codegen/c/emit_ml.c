/* emit_ml.c: C for the classical ML ops (ai.onnx.ml) and TfIdfVectorizer.
 *
 * What the model learned (n-gram pools, label maps, trees, coefficients)
 * is printed as static const tables inside the node function, followed by
 * a plain loop that reads them: an n-gram matcher, a linear key search, a
 * tree traversal. Tree thresholds and scores are kept in double (exact for
 * float and double models) and inputs are compared in double. The tables
 * are decoded and validated by ir/infer_ml.c (ox_ir_ml_*), so emission
 * only re-checks what depends on now-constant shapes.
 */
#include "../cg.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- tables ---- */

static void table_i64(ox_cg *cg, const char *ctype, const char *name, const int64_t *v, int64_t n)
{
	ox_cg_printf(cg, "\tstatic const %s %s[%lld] = {", ctype, name, (long long)n);
	for (int64_t i = 0; i < n; i++)
		ox_cg_printf(cg, "%s%lld%s", i % 16 ? " " : "\n\t\t", (long long)v[i], i + 1 < n ? "," : "");
	ox_cg_printf(cg, "\n\t};\n");
}

static void table_int(ox_cg *cg, const char *ctype, const char *name, const int *v, int64_t n)
{
	ox_cg_printf(cg, "\tstatic const %s %s[%lld] = {", ctype, name, (long long)n);
	for (int64_t i = 0; i < n; i++)
		ox_cg_printf(cg, "%s%d%s", i % 16 ? " " : "\n\t\t", v[i], i + 1 < n ? "," : "");
	ox_cg_printf(cg, "\n\t};\n");
}

/* values as literals of the compute type of dt (double tables use F64) */
static void table_f(ox_cg *cg, int dt, const char *name, const double *v, int64_t n)
{
	ox_cg_printf(cg, "\tstatic const %s %s[%lld] = {", ox_cg_ntype(dt), name, (long long)n);
	for (int64_t i = 0; i < n; i++)
		ox_cg_printf(cg, "%s%s%s", i % 6 ? " " : "\n\t\t", ox_cg_lit(dt, v[i]), i + 1 < n ? "," : "");
	ox_cg_printf(cg, "\n\t};\n");
}

static int64_t numel(ox_graph *g, ox_id id)
{
	return ox_shape_numel(&g->vals[id].shape);
}

static int64_t last_dim(const ox_value *v)
{
	return v->shape.rank ? v->shape.d[v->shape.rank - 1] : 1;
}

/* "x" converted from storage to double */
static const char *ld(int dt, const char *e)
{
	static char ring[4][256];
	static int at;
	at = (at + 1) % 4;
	ox_cg_snprintf(ring[at], sizeof ring[at], "(double)%s", ox_cg_load(dt, e));
	return ring[at];
}

/* ---- TfIdfVectorizer ---- */

static int emit_tfidf(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int64_t *pool, *start, *len, *idx;
	int ncol;
	int ng = ox_ir_ml_tfidf(g, n, &pool, &start, &len, &idx, &ncol);
	if (ng < 0)
		return -1;
	const ox_value *x = ox_in(g, n, 0);
	int64_t c = last_dim(x), rows = x->shape.rank == 2 ? x->shape.d[0] : 1;
	int64_t ming = ox_attr_int(n, "min_gram_length", 1), maxg = ox_attr_int(n, "max_gram_length", 1);
	int64_t skip = ox_attr_int(n, "max_skip_count", 0);
	const char *mode = ox_attr_str(n, "mode", "TF");
	/* keep only the ngrams of the lengths counted */
	int64_t *ks = ox_ir_alloc(g, (size_t)(ng + 1) * sizeof(int64_t)), *kl = ox_ir_alloc(g, (size_t)(ng + 1) * sizeof(int64_t));
	int64_t *kc = ox_ir_alloc(g, (size_t)(ng + 1) * sizeof(int64_t));
	int k = 0;
	int64_t npool = 0;
	for (int i = 0; i < ng; i++) {
		if (len[i] < ming || len[i] > maxg)
			continue;
		ks[k] = start[i];
		kl[k] = len[i];
		kc[k] = idx[i];
		if (start[i] + len[i] > npool)
			npool = start[i] + len[i];
		k++;
	}
	ox_cg_line(cg, 1, "/* TfIdfVectorizer %s: %lld rows of %lld tokens, %d ngrams of length %lld..%lld, skips 0..%lld, %d columns */",
		   mode, (long long)rows, (long long)c, k, (long long)ming, (long long)maxg, (long long)skip, ncol);
	if (k) {
		table_i64(cg, "int64_t", "pool", pool, npool);
		table_i64(cg, "int32_t", "gstart", ks, k);
		table_i64(cg, "int32_t", "glen", kl, k);
		table_i64(cg, "int32_t", "gcol", kc, k);
	}
	const ox_attr *w = ox_attr_get(n, "weights");
	int hasw = w && w->type == OX_AT_FLOATS && w->n > 0 && strcmp(mode, "TF");
	if (hasw) {
		double *wv = ox_ir_alloc(g, (size_t)ncol * sizeof(double));
		for (int i = 0; i < ncol; i++)
			wv[i] = w->floats[i];
		table_f(cg, OX_F32, "weight", wv, ncol);
	}
	ox_cg_line(cg, 1, "for (size_t r = 0; r < %lld; r++) {", (long long)rows);
	ox_cg_line(cg, 2, "const %s *x = in0 + r * %lld;", ox_cg_ctype(x->dtype), (long long)c);
	ox_cg_line(cg, 2, "float *y = out0 + r * %d;", ncol);
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++)", ncol);
	ox_cg_line(cg, 3, "y[j] = 0.0f;");
	if (k) {
		/* an ngram of length L with gap d covers tokens i, i+d, ..., i+(L-1)d;
		 * unigrams are counted once, not once per gap */
		ox_cg_line(cg, 2, "for (size_t i = 0; i < %lld; i++)", (long long)c);
		ox_cg_line(cg, 3, "for (size_t d = 1; d <= %lld; d++)", (long long)skip + 1);
		ox_cg_line(cg, 4, "for (size_t k = 0; k < %d; k++) {", k);
		ox_cg_line(cg, 5, "size_t len = (size_t)glen[k], e = 0;");
		ox_cg_line(cg, 5, "if ((len == 1 && d > 1) || i + (len - 1) * d >= %lld)", (long long)c);
		ox_cg_line(cg, 6, "continue;");
		ox_cg_line(cg, 5, "while (e < len && (int64_t)x[i + e * d] == pool[gstart[k] + (int32_t)e])");
		ox_cg_line(cg, 6, "e++;");
		ox_cg_line(cg, 5, "if (e == len)");
		ox_cg_line(cg, 6, "y[gcol[k]] += 1.0f;");
		ox_cg_line(cg, 4, "}");
	}
	if (!strcmp(mode, "IDF")) {
		ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++)", ncol);
		ox_cg_line(cg, 3, "y[j] = y[j] > 0.0f ? %s : 0.0f;", hasw ? "weight[j]" : "1.0f");
	} else if (!strcmp(mode, "TFIDF") && hasw) {
		ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++)", ncol);
		ox_cg_line(cg, 3, "y[j] *= weight[j];");
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- LabelEncoder ---- */

/* "static const char *const name[n] = {...};" of C string literals */
static void table_s(ox_cg *cg, const char *name, const char *const *v, int64_t n)
{
	ox_buf b = {0};
	ox_buf_printf(&b, "\tstatic const char *const %s[%lld] = {", name, (long long)n);
	for (int64_t i = 0; i < n; i++) {
		ox_buf_puts(&b, i % 6 ? " " : "\n\t\t");
		ox_cg_str_literal(&b, v[i]);
		ox_buf_puts(&b, i + 1 < n ? "," : "");
	}
	ox_buf_puts(&b, "\n\t};\n");
	ox_cg_printf(cg, "%s", b.s);
	ox_buf_free(&b);
}

/* Keys and values in tables, a linear search per element; strings (keys or
 * values) are ox_str, compared with strcmp, and string outputs point at the
 * tables' literals. */
static int emit_label_encoder(ox_cg *cg, ox_graph *g, ox_node *n)
{
	double *keys, *vals, dflt;
	const char **ks, **vs, *ds;
	int kdt = OX_UNDEF, vdt = OX_UNDEF;
	int nk = ox_ir_ml_labels(g, n, &keys, &vals, &kdt, &vdt, &dflt);
	if (nk < 0)
		return -1;
	ox_ir_ml_label_strs(g, n, &ks, &vs, &ds);
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int xdt = x->dtype, ydt = y->dtype;
	ox_buf d = {0};
	if (ydt == OX_STRING)
		ox_cg_str_literal(&d, ds);
	else
		ox_buf_printf(&d, "%.17g", dflt);
	ox_cg_line(cg, 1, "/* LabelEncoder: %d %s keys to %s values, default %s */", nk, ox_dtype_name(kdt),
		   ox_dtype_name(vdt), d.s);
	if (nk) {
		if (xdt == OX_STRING)
			table_s(cg, "keys", ks, nk);
		else
			table_f(cg, xdt, "keys", keys, nk);
		if (ydt == OX_STRING)
			table_s(cg, "vals", vs, nk);
		else
			table_f(cg, ydt, "vals", vals, nk);
	}
	ox_cg_line(cg, 1, "for (size_t i = 0; i < %lld; i++) {", (long long)numel(g, n->in[0]));
	if (xdt == OX_STRING)
		ox_cg_line(cg, 2, "const char *x = in0[i];");
	else
		ox_cg_line(cg, 2, "%s x = %s;", ox_cg_ntype(xdt), ox_cg_load(xdt, "in0[i]"));
	if (ydt == OX_STRING)
		ox_cg_line(cg, 2, "const char *v = %s;", d.s);
	else
		ox_cg_line(cg, 2, "%s v = %s;", ox_cg_ntype(ydt), ox_cg_lit(ydt, dflt));
	ox_buf_free(&d);
	if (nk) {
		ox_cg_line(cg, 2, "for (size_t k = 0; k < %d; k++)", nk);
		/* a NaN key matches a NaN input, as onnxruntime does */
		if (xdt == OX_STRING)
			ox_cg_line(cg, 3, "if (strcmp(x, keys[k]) == 0) {");
		else if (ox_dtype_is_float(xdt))
			ox_cg_line(cg, 3, "if (x == keys[k] || (isnan(x) && isnan(keys[k]))) {");
		else
			ox_cg_line(cg, 3, "if (x == keys[k]) {");
		ox_cg_line(cg, 4, "v = vals[k];");
		ox_cg_line(cg, 4, "break;");
		ox_cg_line(cg, 3, "}");
	}
	if (ydt == OX_STRING)
		ox_cg_line(cg, 2, "out0[i] = v;");
	else
		ox_cg_line(cg, 2, "out0[i] = %s;", ox_cg_store(ydt, "v"));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- tree ensembles ---- */

/* Scores s[0..nt) of one row, post-transformed in place (double). */
static void emit_post(ox_cg *cg, int post, int nt)
{
	switch (post) {
	case OX_ML_LOGISTIC:
		ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++)", nt);
		ox_cg_line(cg, 3, "s[j] = 1.0 / (1.0 + exp(-s[j]));");
		break;
	case OX_ML_SOFTMAX:
	case OX_ML_SOFTMAX_ZERO: {
		/* SOFTMAX_ZERO leaves exact zeros at zero and normalizes the rest */
		int z = post == OX_ML_SOFTMAX_ZERO;
		ox_cg_line(cg, 2, "{");
		ox_cg_line(cg, 3, "double mx = -INFINITY, sum = 0.0;");
		ox_cg_line(cg, 3, "for (size_t j = 0; j < %d; j++)", nt);
		ox_cg_line(cg, 4, "if (%ss[j] > mx)", z ? "s[j] != 0.0 && " : "");
		ox_cg_line(cg, 5, "mx = s[j];");
		ox_cg_line(cg, 3, "for (size_t j = 0; j < %d; j++) {", nt);
		ox_cg_line(cg, 4, "s[j] = %sexp(s[j] - mx);", z ? "s[j] == 0.0 ? 0.0 : " : "");
		ox_cg_line(cg, 4, "sum += s[j];");
		ox_cg_line(cg, 3, "}");
		ox_cg_line(cg, 3, "for (size_t j = 0; j < %d; j++)", nt);
		ox_cg_line(cg, 4, "s[j] = %ss[j] / sum;", z ? "sum == 0.0 ? 0.0 : " : "");
		ox_cg_line(cg, 2, "}");
		break;
	}
	}
}

static int emit_trees(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_ml_trees t;
	if (ox_ir_ml_trees(g, n, &t) < 0)
		return -1;
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int64_t f = last_dim(x), rows = x->shape.rank == 2 ? x->shape.d[0] : 1;
	int nt = t.ntargets;
	if (nt > 65536)
		return ox_error(g, n, "n_targets %d is too large for a stack array of scores", nt);
	for (int i = 0; i < t.nnodes; i++)
		if (t.feat[i] >= f)
			return ox_error(g, n, "node %d reads feature %lld but the input has %lld", i,
					(long long)t.feat[i], (long long)f);
	static const char *aggs[] = {"AVERAGE", "SUM", "MIN", "MAX"};
	static const char *posts[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
	ox_cg_line(cg, 1, "/* %s: %d trees, %d branch nodes, %d leaves, %d targets, %s, post_transform %s */",
		   n->optype, t.ntrees, t.nnodes, t.nleaves, nt, aggs[t.agg], posts[t.post]);
	int anymiss = 0, anymember = 0;
	for (int i = 0; i < t.nnodes; i++) {
		anymiss |= t.missing_true[i];
		anymember |= t.mode[i] == OX_ML_MEMBER;
	}
	table_i64(cg, "int32_t", "roots", t.roots, t.ntrees);
	if (t.nnodes) {
		table_i64(cg, "int32_t", "feat", t.feat, t.nnodes);
		table_int(cg, "uint8_t", "mode", t.mode, t.nnodes);
		table_f(cg, OX_F64, "split", t.split, t.nnodes);
		ox_cg_line(cg, 1, "/* next[2i] / next[2i+1]: where a true / false test at node i goes; -(v+1) is leaf v */");
		table_i64(cg, "int32_t", "next", t.next, 2 * (int64_t)t.nnodes);
		if (anymiss)
			table_int(cg, "uint8_t", "nan_true", t.missing_true, t.nnodes);
		if (anymember) {
			table_i64(cg, "int32_t", "mstart", t.mstart, t.nnodes + 1);
			table_f(cg, OX_F64, "members", t.members, t.nmembers ? t.nmembers : 1);
		}
	}
	if (t.nentries) {
		table_i64(cg, "int32_t", "lstart", t.lstart, t.nleaves + 1);
		table_i64(cg, "int32_t", "ltarget", t.ltarget, t.nentries);
		table_f(cg, OX_F64, "lweight", t.lweight, t.nentries);
	}
	if (t.base)
		table_f(cg, OX_F64, "base", t.base, nt);
	int minmax = t.agg == OX_ML_MIN || t.agg == OX_ML_MAX;
	ox_cg_line(cg, 1, "for (size_t r = 0; r < %lld; r++) {", (long long)rows);
	ox_cg_line(cg, 2, "const %s *x = in0 + r * %lld;", ox_cg_ctype(x->dtype), (long long)f);
	ox_cg_line(cg, 2, "double s[%d];", nt);
	if (minmax)
		ox_cg_line(cg, 2, "uint8_t hit[%d];", nt);
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++) {", nt);
	ox_cg_line(cg, 3, "s[j] = 0.0;");
	if (minmax)
		ox_cg_line(cg, 3, "hit[j] = 0;");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "for (size_t t = 0; t < %d; t++) {", t.ntrees);
	ox_cg_line(cg, 3, "int32_t i = roots[t];");
	if (t.nnodes) {
		ox_cg_line(cg, 3, "while (i >= 0) {");
		ox_cg_line(cg, 4, "double v = %s;", ld(x->dtype, "x[feat[i]]"));
		ox_cg_line(cg, 4, "int c = 0;");
		ox_cg_line(cg, 4, "switch (mode[i]) {");
		static const char *ops[] = {"<=", "<", ">=", ">", "==", "!="};
		for (int m = 0; m < 6; m++)
			ox_cg_line(cg, 4, "case %d: c = v %s split[i]; break;", m, ops[m]);
		if (anymember) {
			ox_cg_line(cg, 4, "case %d:", OX_ML_MEMBER);
			ox_cg_line(cg, 5, "for (int32_t m = mstart[i]; m < mstart[i + 1] && !c; m++)");
			ox_cg_line(cg, 6, "c = v == members[m];");
			ox_cg_line(cg, 5, "break;");
		}
		ox_cg_line(cg, 4, "}");
		if (anymiss) {
			ox_cg_line(cg, 4, "if (isnan(v) && nan_true[i])");
			ox_cg_line(cg, 5, "c = 1;");
		}
		ox_cg_line(cg, 4, "i = next[2 * i + !c];");
		ox_cg_line(cg, 3, "}");
	}
	if (t.nentries) {
		ox_cg_line(cg, 3, "for (int32_t e = lstart[-i - 1]; e < lstart[-i]; e++) {");
		switch (t.agg) {
		case OX_ML_AVERAGE:
		case OX_ML_SUM:
			ox_cg_line(cg, 4, "s[ltarget[e]] += lweight[e];");
			break;
		case OX_ML_MIN:
		case OX_ML_MAX:
			ox_cg_line(cg, 4, "if (!hit[ltarget[e]] || lweight[e] %s s[ltarget[e]])", t.agg == OX_ML_MIN ? "<" : ">");
			ox_cg_line(cg, 5, "s[ltarget[e]] = lweight[e];");
			ox_cg_line(cg, 4, "hit[ltarget[e]] = 1;");
			break;
		}
		ox_cg_line(cg, 3, "}");
	} else {
		ox_cg_line(cg, 3, "(void)i; /* no leaf votes */");
	}
	ox_cg_line(cg, 2, "}");
	if (t.agg == OX_ML_AVERAGE || t.base) {
		ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++)", nt);
		char avg[64] = "";
		if (t.agg == OX_ML_AVERAGE)
			ox_cg_snprintf(avg, sizeof avg, " / %d.0", t.ntrees);
		ox_cg_line(cg, 3, "s[j] = s[j]%s%s;", avg, t.base ? " + base[j]" : "");
	}
	emit_post(cg, t.post, nt);
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %d; j++)", nt);
	char e[64];
	ox_cg_snprintf(e, sizeof e, "(%s)s[j]", ox_cg_ntype(y->dtype));
	ox_cg_line(cg, 3, "out0[r * %d + j] = %s;", nt, ox_cg_store(y->dtype, e));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- the small ones ---- */

/* FLOATS attribute as doubles; count, or 0 when absent */
static int floats(const ox_node *n, const char *name, double *v, int cap)
{
	const ox_attr *a = ox_attr_get(n, name);
	if (!a)
		return 0;
	if (a->type == OX_AT_FLOAT) {
		v[0] = a->f;
		return 1;
	}
	if (a->type != OX_AT_FLOATS)
		return 0;
	for (int i = 0; i < a->n && i < cap; i++)
		v[i] = a->floats[i];
	return a->n;
}

/* a per-column list (length 1, broadcast, or one per column c) as a table */
static int column_table(ox_cg *cg, ox_graph *g, ox_node *n, const char *attr, const char *name, int dt,
			int64_t c, double dflt, char *ref, size_t refn)
{
	const ox_attr *a = ox_attr_get(n, attr);
	int m = a ? (a->type == OX_AT_FLOATS || a->type == OX_AT_INTS ? a->n : 1) : 0;
	double *v = ox_ir_alloc(g, (size_t)(m + 1) * sizeof(double));
	for (int i = 0; i < m; i++)
		v[i] = a->type == OX_AT_FLOATS ? a->floats[i] : a->type == OX_AT_INTS ? (double)a->ints[i]
				: a->type == OX_AT_FLOAT ? a->f : (double)a->i;
	if (m == 0) {
		ox_cg_snprintf(ref, refn, "%s", ox_cg_lit(dt, dflt));
		return 0;
	}
	if (m == 1) {
		ox_cg_snprintf(ref, refn, "%s", ox_cg_lit(dt, v[0]));
		return 0;
	}
	if (m != c)
		return ox_error(g, n, "%s has %d values but the input has %lld columns", attr, m, (long long)c);
	table_f(cg, dt, name, v, m);
	ox_cg_snprintf(ref, refn, "%s[j]", name);
	return 0;
}

static int emit_binarizer(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype;
	/* onnxruntime compares against the threshold converted to T */
	double thr = ox_attr_float(n, "threshold", 0.0f);
	if (!ox_dtype_is_float(dt))
		thr = trunc(thr);
	ox_cg_line(cg, 1, "/* Binarizer: x > %s */", ox_cg_lit(dt, thr));
	ox_cg_line(cg, 1, "for (size_t i = 0; i < %lld; i++)", (long long)numel(g, n->in[0]));
	ox_cg_line(cg, 2, "out0[i] = %s > %s ? %s : %s;", ox_cg_load(dt, "in0[i]"), ox_cg_lit(dt, thr),
		   ox_cg_store(dt, ox_cg_lit(dt, 1)), ox_cg_store(dt, ox_cg_lit(dt, 0)));
	return 0;
}

static int emit_afe(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int64_t c = last_dim(x), outer = numel(g, n->in[0]) / (c ? c : 1), m = numel(g, n->in[1]);
	if (!c)
		outer = numel(g, n->out[0]) / (m ? m : 1);
	const ox_tensor *it = ox_in_const(g, n, 1);
	for (int64_t j = 0; it && j < m; j++)
		if (ox_tensor_get_i64(it, j) < 0 || ox_tensor_get_i64(it, j) >= c)
			return ox_error(g, n, "index %lld is out of range for %lld columns",
					(long long)ox_tensor_get_i64(it, j), (long long)c);
	ox_cg_line(cg, 1, "/* ArrayFeatureExtractor: %lld of %lld columns */", (long long)m, (long long)c);
	if (!it && outer * m > 0) {
		/* as onnxruntime: an index out of range fails the run (no wrap) */
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_cg_line(cg, 1, "for (size_t j = 0; j < %lld; j++)", (long long)m);
		ox_cg_line(cg, 2, "if ((uint64_t)in1[j] >= %lld)", (long long)c);
		ox_cg_line(cg, 3, "return 1; /* index out of range */");
	}
	ox_cg_line(cg, 1, "for (size_t r = 0; r < %lld; r++)", (long long)outer);
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %lld; j++)", (long long)m);
	ox_cg_line(cg, 3, "out0[r * %lld + j] = in0[r * %lld + (size_t)in1[j]];", (long long)m, (long long)c);
	return 0;
}

static int emit_scaler(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int64_t c = last_dim(x), total = numel(g, n->in[0]);
	char off[256], sc[256];
	if (column_table(cg, g, n, "offset", "offset", OX_F32, c, 0.0, off, sizeof off) < 0 ||
	    column_table(cg, g, n, "scale", "scale", OX_F32, c, 1.0, sc, sizeof sc) < 0)
		return -1;
	ox_cg_line(cg, 1, "/* Scaler: (x - offset) * scale, in float */");
	ox_cg_line(cg, 1, "for (size_t i = 0; i < %lld; i++) {", (long long)(c ? total / c : 0));
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %lld; j++)", (long long)c);
	char e[64];
	ox_cg_snprintf(e, sizeof e, "in0[i * %lld + j]", (long long)c);
	ox_cg_line(cg, 3, "out0[i * %lld + j] = ((float)%s - %s) * %s;", (long long)c, ox_cg_load(x->dtype, e), off, sc);
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_normalizer(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int64_t c = last_dim(x), rows = x->shape.rank == 2 ? x->shape.d[0] : 1;
	const char *norm = ox_attr_str(n, "norm", "MAX");
	ox_cg_line(cg, 1, "/* Normalizer %s over rows of %lld, in float; a zero norm leaves the row as is */", norm,
		   (long long)c);
	ox_cg_line(cg, 1, "for (size_t r = 0; r < %lld; r++) {", (long long)rows);
	ox_cg_line(cg, 2, "const %s *x = in0 + r * %lld;", ox_cg_ctype(x->dtype), (long long)c);
	ox_cg_line(cg, 2, "float *y = out0 + r * %lld;", (long long)c);
	const char *xj = ox_cg_load(x->dtype, "x[j]");
	char xf[128];
	ox_cg_snprintf(xf, sizeof xf, "(float)%s", xj);
	if (!strcmp(norm, "MAX")) {
		ox_cg_line(cg, 2, "float s = -3.40282347e+38f; /* the lowest float, as onnxruntime starts */");
		ox_cg_line(cg, 2, "for (size_t j = 0; j < %lld; j++)", (long long)c);
		ox_cg_line(cg, 3, "if (%s > s)", xf);
		ox_cg_line(cg, 4, "s = %s;", xf);
	} else {
		ox_cg_line(cg, 2, "float s = 0.0f;");
		ox_cg_line(cg, 2, "for (size_t j = 0; j < %lld; j++)", (long long)c);
		if (!strcmp(norm, "L1"))
			ox_cg_line(cg, 3, "s += fabsf(%s);", xf);
		else
			ox_cg_line(cg, 3, "s += %s * %s;", xf, xf);
		if (!strcmp(norm, "L2"))
			ox_cg_line(cg, 2, "s = sqrtf(s);");
	}
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %lld; j++)", (long long)c);
	ox_cg_line(cg, 3, "y[j] = s != 0.0f ? %s / s : %s;", xf, xf);
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_linear(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int64_t c = last_dim(x), rows = x->shape.rank == 2 ? x->shape.d[0] : 1;
	int64_t tg = ox_attr_int(n, "targets", 1);
	const ox_attr *ca = ox_attr_get(n, "coefficients");
	if (!ca || ca->type != OX_AT_FLOATS || ca->n != tg * c)
		return ox_error(g, n, "coefficients has %d values, expected targets %lld x %lld columns",
				ca ? ca->n : 0, (long long)tg, (long long)c);
	double *cv = ox_ir_alloc(g, (size_t)ca->n * sizeof(double));
	for (int i = 0; i < ca->n; i++)
		cv[i] = ca->floats[i];
	double *bv = ox_ir_alloc(g, (size_t)tg * sizeof(double));
	int nb = floats(n, "intercepts", bv, (int)tg);
	int post = 0;
	static const char *posts[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(ox_attr_str(n, "post_transform", "NONE"), posts[i]))
			post = i;
	ox_cg_line(cg, 1, "/* LinearRegressor: %lld targets over %lld columns, post_transform %s */", (long long)tg,
		   (long long)c, posts[post]);
	table_f(cg, OX_F32, "coef", cv, ca->n);
	if (nb)
		table_f(cg, OX_F32, "bias", bv, tg);
	ox_cg_line(cg, 1, "for (size_t r = 0; r < %lld; r++) {", (long long)rows);
	ox_cg_line(cg, 2, "const %s *x = in0 + r * %lld;", ox_cg_ctype(x->dtype), (long long)c);
	ox_cg_line(cg, 2, "double s[%lld];", (long long)tg);
	ox_cg_line(cg, 2, "for (size_t t = 0; t < %lld; t++) {", (long long)tg);
	ox_cg_line(cg, 3, "double a = %s;", nb ? "bias[t]" : "0.0");
	ox_cg_line(cg, 3, "for (size_t j = 0; j < %lld; j++)", (long long)c);
	ox_cg_line(cg, 4, "a += %s * coef[t * %lld + j];", ld(x->dtype, "x[j]"), (long long)c);
	ox_cg_line(cg, 3, "s[t] = a;");
	ox_cg_line(cg, 2, "}");
	emit_post(cg, post, (int)tg);
	ox_cg_line(cg, 2, "for (size_t t = 0; t < %lld; t++)", (long long)tg);
	ox_cg_line(cg, 3, "out0[r * %lld + t] = (float)s[t];", (long long)tg);
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_imputer(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, isf = ox_dtype_is_float(dt);
	int64_t c = last_dim(x), total = numel(g, n->in[0]);
	char val[256];
	if (column_table(cg, g, n, isf ? "imputed_value_floats" : "imputed_value_int64s", "imputed", dt, c, 0.0,
			 val, sizeof val) < 0)
		return -1;
	double rep = isf ? ox_attr_float(n, "replaced_value_float", 0.0f) : (double)ox_attr_int(n, "replaced_value_int64", 0);
	char test[128];
	if (isf && isnan(rep))
		ox_cg_snprintf(test, sizeof test, "isnan(v)");
	else
		ox_cg_snprintf(test, sizeof test, "v == %s", ox_cg_lit(dt, rep));
	ox_cg_line(cg, 1, "/* Imputer: %s is replaced */", test);
	ox_cg_line(cg, 1, "for (size_t i = 0; i < %lld; i++)", (long long)(c ? total / c : 0));
	ox_cg_line(cg, 2, "for (size_t j = 0; j < %lld; j++) {", (long long)c);
	char e[64];
	ox_cg_snprintf(e, sizeof e, "in0[i * %lld + j]", (long long)c);
	ox_cg_line(cg, 3, "%s v = %s;", ox_cg_ntype(dt), ox_cg_load(dt, e));
	ox_cg_line(cg, 3, "out0[i * %lld + j] = %s ? %s : %s;", (long long)c, test, ox_cg_store(dt, val), e);
	ox_cg_line(cg, 2, "}");
	return 0;
}

int emit_ml(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_TfIdfVectorizer:
		return emit_tfidf(cg, g, n);
	case OX_OP_LabelEncoder:
		return emit_label_encoder(cg, g, n);
	case OX_OP_TreeEnsemble:
	case OX_OP_TreeEnsembleRegressor:
		return emit_trees(cg, g, n);
	case OX_OP_Binarizer:
		return emit_binarizer(cg, g, n);
	case OX_OP_ArrayFeatureExtractor:
		return emit_afe(cg, g, n);
	case OX_OP_Scaler:
		return emit_scaler(cg, g, n);
	case OX_OP_Normalizer:
		return emit_normalizer(cg, g, n);
	case OX_OP_LinearRegressor:
		return emit_linear(cg, g, n);
	case OX_OP_Imputer:
		return emit_imputer(cg, g, n);
	}
	return ox_error(g, n, "not an ML op");
}
