/* infer_ml.c: shape inference for the classical ML ops (ai.onnx.ml:
 * Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble,
 * TreeEnsembleRegressor, Scaler, Normalizer, LinearRegressor, Imputer) and
 * ai.onnx TfIdfVectorizer.
 *
 * Everything these ops learn from training lives in attributes, so the
 * attributes are validated here, once, and codegen/c/emit_ml.c prints them as
 * static const tables. Both tree-ensemble forms are decoded by
 * ox_ir_ml_trees into one flat layout (ox_ml_trees, ir/family.h). Strings (ox_str in the generated
 * code) are handled by LabelEncoder only; elsewhere they are a clear error.
 */
#include "ir.h"
#include "family.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared attribute readers ---- */

/* A float list from a FLOATS attribute `name` or a TENSOR attribute
 * `name_tensor` / `tname` (the ml opsets moved lists into tensors so that
 * doubles survive). Returns the count, -1 when absent. *v is arena memory. */
static int attr_f64s(ox_graph *g, const ox_node *n, const char *name, const char *tname, double **v)
{
	const ox_attr *a = tname ? ox_attr_get(n, tname) : NULL;
	if (a && a->type == OX_AT_TENSOR && a->t && a->t->dtype != OX_STRING) {
		int64_t m = ox_tensor_numel(a->t);
		*v = ox_ir_alloc(g, (size_t)(m ? m : 1) * sizeof **v);
		for (int64_t i = 0; i < m; i++)
			(*v)[i] = ox_tensor_get_f64(a->t, i);
		return (int)m;
	}
	a = name ? ox_attr_get(n, name) : NULL;
	if (a && (a->type == OX_AT_FLOATS || a->type == OX_AT_FLOAT || a->type == OX_AT_TENSOR)) {
		if (a->type == OX_AT_TENSOR) {
			if (!a->t || a->t->dtype == OX_STRING)
				return -1;
			return attr_f64s(g, n, NULL, name, v);
		}
		int m = a->type == OX_AT_FLOAT ? 1 : a->n;
		*v = ox_ir_alloc(g, (size_t)(m ? m : 1) * sizeof **v);
		for (int i = 0; i < m; i++)
			(*v)[i] = a->type == OX_AT_FLOAT ? a->f : a->floats[i];
		return m;
	}
	return -1;
}

/* An integer list from an INTS attribute or an integer TENSOR attribute. */
static int attr_i64s(ox_graph *g, const ox_node *n, const char *name, int64_t **v)
{
	const ox_attr *a = ox_attr_get(n, name);
	if (!a)
		return -1;
	if (a->type == OX_AT_TENSOR && a->t && a->t->dtype != OX_STRING) {
		int64_t m = ox_tensor_numel(a->t);
		*v = ox_ir_alloc(g, (size_t)(m ? m : 1) * sizeof **v);
		for (int64_t i = 0; i < m; i++)
			(*v)[i] = ox_tensor_get_i64(a->t, i);
		return (int)m;
	}
	if (a->type == OX_AT_INTS || a->type == OX_AT_INT) {
		int m = a->type == OX_AT_INT ? 1 : a->n;
		*v = ox_ir_alloc(g, (size_t)(m ? m : 1) * sizeof **v);
		for (int i = 0; i < m; i++)
			(*v)[i] = a->type == OX_AT_INT ? a->i : a->ints[i];
		return m;
	}
	return -1;
}

static int is_num(int dt, int ints, int f16)
{
	return dt == OX_F32 || dt == OX_F64 || (ints && (dt == OX_I64 || dt == OX_I32)) ||
	       (f16 && dt == OX_F16);
}

static int bad_dtype(ox_graph *g, const ox_node *n, const char *what, int dt)
{
	if (dt == OX_STRING)
		return ox_error(g, n, "%s is a string tensor: strings are not supported by the C target", what);
	return ox_error(g, n, "%s has dtype %s, which %s does not accept", what, ox_dtype_name(dt), n->optype);
}

/* ---- TfIdfVectorizer ---- */

/* The pool decoded: ngram k (in pool order) has length len[k], starts at
 * pool[start[k]] and counts into output column idx[k]. Shared with
 * emit_ml.c. */
int ox_ir_ml_tfidf(ox_graph *g, const ox_node *n, int64_t **pool, int64_t **start, int64_t **len,
		   int64_t **idx, int *nout)
{
	int64_t *counts, *ix, *p;
	int nc = attr_i64s(g, n, "ngram_counts", &counts);
	int ni = attr_i64s(g, n, "ngram_indexes", &ix);
	int np = attr_i64s(g, n, "pool_int64s", &p);
	if (np < 0 && ox_attr_get(n, "pool_strings"))
		return ox_error(g, n, "pool_strings: strings are not supported by the C target");
	if (nc < 0 || ni < 0 || np < 0)
		return ox_error(g, n, "ngram_counts, ngram_indexes and pool_int64s are required");
	int64_t maxg = ox_attr_int(n, "max_gram_length", 0), ming = ox_attr_int(n, "min_gram_length", 0);
	if (ming < 1 || maxg < ming)
		return ox_error(g, n, "min_gram_length %lld / max_gram_length %lld are invalid",
				(long long)ming, (long long)maxg);
	if (ox_attr_int(n, "max_skip_count", 0) < 0)
		return ox_error(g, n, "max_skip_count is negative");
	/* count the ngrams: level L (1-based) spans pool[counts[L-1] .. counts[L]) */
	int total = 0;
	for (int l = 0; l < nc; l++) {
		int64_t b = counts[l], e = l + 1 < nc ? counts[l + 1] : np;
		if (b < 0 || e < b || e > np || (e - b) % (l + 1))
			return ox_error(g, n, "ngram_counts[%d] = %lld does not split pool_int64s into %d-grams",
					l, (long long)b, l + 1);
		total += (int)((e - b) / (l + 1));
	}
	if (total != ni)
		return ox_error(g, n, "pool holds %d ngrams but ngram_indexes has %d entries", total, ni);
	int64_t mx = -1;
	for (int k = 0; k < ni; k++) {
		if (ix[k] < 0)
			return ox_error(g, n, "ngram_indexes[%d] = %lld is negative", k, (long long)ix[k]);
		if (ix[k] > mx)
			mx = ix[k];
	}
	if (mx >= (1 << 24))
		return ox_error(g, n, "output width %lld is too large", (long long)mx + 1);
	const ox_attr *w = ox_attr_get(n, "weights");
	if (w && w->type == OX_AT_FLOATS && w->n && w->n < mx + 1)
		return ox_error(g, n, "weights has %d entries, the output has %lld columns", w->n, (long long)mx + 1);
	if (pool) {
		*pool = p;
		*start = ox_ir_alloc(g, (size_t)(ni + 1) * sizeof(int64_t));
		*len = ox_ir_alloc(g, (size_t)(ni + 1) * sizeof(int64_t));
		*idx = ix;
		int k = 0;
		for (int l = 0; l < nc; l++) {
			int64_t b = counts[l], e = l + 1 < nc ? counts[l + 1] : np;
			for (int64_t s = b; s < e; s += l + 1, k++) {
				(*start)[k] = s;
				(*len)[k] = l + 1;
			}
		}
	}
	*nout = (int)(mx + 1);
	return ni;
}

static int infer_tfidf(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (x->dtype != OX_I32 && x->dtype != OX_I64)
		return bad_dtype(g, n, "input X", x->dtype);
	if (x->shape.rank != 1 && x->shape.rank != 2)
		return ox_error(g, n, "input has rank %d, expected 1 or 2", x->shape.rank);
	const char *mode = ox_attr_str(n, "mode", "");
	if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF"))
		return ox_error(g, n, "mode '%s' is not TF, IDF or TFIDF", mode);
	int nout;
	if (ox_ir_ml_tfidf(g, n, NULL, NULL, NULL, NULL, &nout) < 0)
		return -1;
	ox_shape o = x->shape;
	o.d[o.rank - 1] = nout;
	ox_set_out(g, n, 0, OX_F32, &o);
	return 0;
}

/* ---- LabelEncoder ---- */

/* A string list from a STRINGS attribute `name` or a string TENSOR
 * attribute `tname`; count, or -1 when neither is there. */
static int attr_strs(const ox_node *n, const char *name, const char *tname, const char ***s)
{
	const ox_attr *a = tname ? ox_attr_get(n, tname) : NULL;
	if (a && a->type == OX_AT_TENSOR && a->t && a->t->dtype == OX_STRING && a->t->strs) {
		*s = a->t->strs;
		return (int)ox_tensor_numel(a->t);
	}
	a = ox_attr_get(n, name);
	if (a && a->type == OX_AT_STRINGS) {
		*s = a->strs;
		return a->n;
	}
	return -1;
}

/* LabelEncoder's string sides, for a node ox_ir_ml_labels accepted: *ks /
 * *vs the key / value strings where that side is strings (else NULL), *ds
 * the default of string values. Shared with emit_ml.c. */
void ox_ir_ml_label_strs(ox_graph *g, const ox_node *n, const char ***ks, const char ***vs, const char **ds)
{
	const ox_attr *dt = ox_attr_get(n, "default_tensor");
	*ks = *vs = NULL;
	*ds = ox_attr_str(n, "default_string", "_Unused");
	if (dt && dt->type == OX_AT_TENSOR && dt->t->dtype == OX_STRING && dt->t->strs && ox_tensor_numel(dt->t) > 0)
		*ds = dt->t->strs[0];
	if (ox_attr_get(n, "classes_strings")) {
		/* opset 1: strings map to their index, indices to their string */
		if (ox_in(g, n, 0)->dtype == OX_STRING)
			attr_strs(n, "classes_strings", NULL, ks);
		else
			attr_strs(n, "classes_strings", NULL, vs);
		return;
	}
	if (attr_strs(n, "keys_strings", "keys_tensor", ks) < 0)
		*ks = NULL;
	if (attr_strs(n, "values_strings", "values_tensor", vs) < 0)
		*vs = NULL;
}

/* Keys and values as doubles (exact for every int32 and for the int64
 * labels models use; checked below), the key and value dtypes and the
 * default. A string side (OX_STRING) has zeros here: its strings come from
 * ox_ir_ml_label_strs. Shared with emit_ml.c. */
int ox_ir_ml_labels(ox_graph *g, const ox_node *n, double **keys, double **vals, int *kdt, int *vdt, double *dflt)
{
	const ox_attr *kt = ox_attr_get(n, "keys_tensor"), *vt = ox_attr_get(n, "values_tensor");
	const char **strs;
	int nk = -1, nv = -1;
	/* opset 1 (classes_strings) maps strings to indices or back, as the
	 * input's dtype says; n->opset is not consulted, the attributes tell
	 * the forms apart */
	if ((nk = attr_strs(n, "classes_strings", NULL, &strs)) >= 0) {
		int in_str = ox_in(g, n, 0)->dtype == OX_STRING;
		double *idx = ox_ir_alloc(g, (size_t)(nk + 1) * sizeof *idx);
		for (int i = 0; i < nk; i++)
			idx[i] = i;
		*keys = *vals = idx;
		*kdt = in_str ? OX_STRING : OX_I64;
		*vdt = in_str ? OX_I64 : OX_STRING;
		*dflt = (double)ox_attr_int(n, "default_int64", -1);
		return nk;
	}
	if ((nk = attr_strs(n, "keys_strings", "keys_tensor", &strs)) >= 0) {
		*kdt = OX_STRING;
		*keys = ox_ir_alloc(g, (size_t)(nk + 1) * sizeof(double));
	} else if (kt && kt->type == OX_AT_TENSOR) {
		*kdt = kt->t->dtype;
		nk = attr_f64s(g, n, NULL, "keys_tensor", keys);
	} else if ((nk = attr_f64s(g, n, "keys_floats", NULL, keys)) >= 0) {
		*kdt = OX_F32;
	} else if (ox_attr_get(n, "keys_int64s")) {
		int64_t *iv;
		nk = attr_i64s(g, n, "keys_int64s", &iv);
		*keys = ox_ir_alloc(g, (size_t)(nk + 1) * sizeof(double));
		for (int i = 0; i < nk; i++) {
			(*keys)[i] = (double)iv[i];
			if ((int64_t)(*keys)[i] != iv[i])
				return ox_error(g, n, "key %lld is too large", (long long)iv[i]);
		}
		*kdt = OX_I64;
	}
	if ((nv = attr_strs(n, "values_strings", "values_tensor", &strs)) >= 0) {
		*vdt = OX_STRING;
		*vals = ox_ir_alloc(g, (size_t)(nv + 1) * sizeof(double));
	} else if (vt && vt->type == OX_AT_TENSOR) {
		*vdt = vt->t->dtype;
		nv = attr_f64s(g, n, NULL, "values_tensor", vals);
	} else if ((nv = attr_f64s(g, n, "values_floats", NULL, vals)) >= 0) {
		*vdt = OX_F32;
	} else if (ox_attr_get(n, "values_int64s")) {
		int64_t *iv;
		nv = attr_i64s(g, n, "values_int64s", &iv);
		*vals = ox_ir_alloc(g, (size_t)(nv + 1) * sizeof(double));
		for (int i = 0; i < nv; i++) {
			(*vals)[i] = (double)iv[i];
			if ((int64_t)(*vals)[i] != iv[i])
				return ox_error(g, n, "value %lld is too large", (long long)iv[i]);
		}
		*vdt = OX_I64;
	}
	if (nk < 0 || nv < 0)
		return ox_error(g, n, "keys and values attributes are required");
	if (nk != nv)
		return ox_error(g, n, "%d keys but %d values", nk, nv);
	int ok[] = {OX_F32, OX_F64, OX_I64, OX_I32, OX_I16, OX_STRING};
	int kok = 0, vok = 0;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		kok |= *kdt == ok[i];
		vok |= *vdt == ok[i];
	}
	if (!kok || !vok)
		return ox_error(g, n, "keys of %s / values of %s are not supported", ox_dtype_name(*kdt),
				ox_dtype_name(*vdt));
	/* the default: default_tensor (opset 4), else default_float/int64 */
	const ox_attr *dt = ox_attr_get(n, "default_tensor");
	if (*vdt == OX_STRING) {
		*dflt = 0; /* the default string: ox_ir_ml_label_strs */
	} else if (dt && dt->type == OX_AT_TENSOR) {
		if (dt->t->dtype == OX_STRING || ox_tensor_numel(dt->t) < 1)
			return ox_error(g, n, "default_tensor is not a numeric scalar");
		*dflt = ox_tensor_get_f64(dt->t, 0);
	} else if (ox_dtype_is_float(*vdt)) {
		*dflt = ox_attr_float(n, "default_float", -0.0f);
	} else {
		*dflt = (double)ox_attr_int(n, "default_int64", -1);
	}
	return nk;
}

static int infer_label_encoder(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	double *k, *v, d;
	int kdt = OX_UNDEF, vdt = OX_UNDEF;
	if (ox_ir_ml_labels(g, n, &k, &v, &kdt, &vdt, &d) < 0)
		return -1;
	if (kdt != x->dtype && !(kdt == OX_I64 && ox_dtype_is_int(x->dtype)) &&
	    !(ox_dtype_is_float(kdt) && ox_dtype_is_float(x->dtype)))
		return ox_error(g, n, "input X has dtype %s but the keys are %s", ox_dtype_name(x->dtype),
				ox_dtype_name(kdt));
	ox_set_out(g, n, 0, vdt, &x->shape);
	return 0;
}

/* ---- tree ensembles ---- */


/* Every path from a root must end in a leaf: reject cycles (the generated
 * traversal would never stop) with a colouring DFS over internal nodes. */
static int check_acyclic(ox_graph *g, const ox_node *n, const ox_ml_trees *t)
{
	char *state = ox_ir_alloc(g, (size_t)t->nnodes + 1);
	int64_t *stack = ox_ir_alloc(g, (size_t)(2 * t->nnodes + 2) * sizeof(int64_t));
	for (int s = 0; s < t->nnodes; s++) {
		if (state[s])
			continue;
		int sp = 0;
		stack[sp++] = s;
		while (sp) {
			int64_t i = stack[sp - 1];
			if (state[i] == 0) {
				state[i] = 1;
				for (int b = 0; b < 2; b++) {
					int64_t c = t->next[2 * i + b];
					if (c < 0)
						continue;
					if (state[c] == 1)
						return ox_error(g, n, "the trees have a cycle through node %lld", (long long)c);
					if (state[c] == 0)
						stack[sp++] = c;
				}
			} else {
				if (state[i] == 1)
					state[i] = 2;
				sp--;
			}
		}
	}
	return 0;
}

static int post_code(ox_graph *g, const ox_node *n, const char *s)
{
	static const char *names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i]))
			return i;
	return ox_error(g, n, "post_transform '%s' is unknown", s);
}

/* TreeEnsemble (ai.onnx.ml opset 5): nodes and leaves are separate lists. */
static int trees_v5(ox_graph *g, const ox_node *n, ox_ml_trees *t)
{
	int64_t *fn, *tn, *fl, *tl, *feat, *modes, *roots, *lt, *miss = NULL;
	double *splits, *lw, *mv = NULL;
	int nn = attr_i64s(g, n, "nodes_featureids", &feat);
	if (nn < 0 || attr_i64s(g, n, "nodes_falsenodeids", &fn) != nn ||
	    attr_i64s(g, n, "nodes_truenodeids", &tn) != nn || attr_i64s(g, n, "nodes_falseleafs", &fl) != nn ||
	    attr_i64s(g, n, "nodes_trueleafs", &tl) != nn || attr_i64s(g, n, "nodes_modes", &modes) != nn ||
	    attr_f64s(g, n, NULL, "nodes_splits", &splits) != nn)
		return ox_error(g, n, "the nodes_* attributes are missing or have different lengths");
	int nmiss = attr_i64s(g, n, "nodes_missing_value_tracks_true", &miss);
	if (nmiss >= 0 && nmiss != nn)
		return ox_error(g, n, "nodes_missing_value_tracks_true has %d entries, expected %d", nmiss, nn);
	int nl = attr_i64s(g, n, "leaf_targetids", &lt);
	if (nl < 0 || attr_f64s(g, n, NULL, "leaf_weights", &lw) != nl)
		return ox_error(g, n, "leaf_targetids and leaf_weights are missing or have different lengths");
	int nr = attr_i64s(g, n, "tree_roots", &roots);
	if (nr < 1)
		return ox_error(g, n, "tree_roots is missing or empty");
	int nm = attr_f64s(g, n, NULL, "membership_values", &mv);
	t->nnodes = nn;
	t->nleaves = t->nentries = nl;
	t->ntrees = nr;
	t->feat = feat;
	t->mode = ox_ir_alloc(g, (size_t)(nn + 1) * sizeof(int));
	t->split = splits;
	t->missing_true = ox_ir_alloc(g, (size_t)(nn + 1) * sizeof(int));
	t->next = ox_ir_alloc(g, (size_t)(2 * nn + 2) * sizeof(int64_t));
	t->mstart = ox_ir_alloc(g, (size_t)(nn + 2) * sizeof(int64_t));
	t->members = ox_ir_alloc(g, (size_t)(nm > 0 ? nm : 1) * sizeof(double));
	int nmem = 0, mpos = 0;
	for (int i = 0; i < nn; i++) {
		if (modes[i] < OX_ML_LEQ || modes[i] > OX_ML_MEMBER)
			return ox_error(g, n, "nodes_modes[%d] = %lld is unknown", i, (long long)modes[i]);
		t->mode[i] = (int)modes[i];
		t->missing_true[i] = miss && miss[i];
		t->mstart[i] = nmem;
		if (modes[i] == OX_ML_MEMBER) {
			/* the next set of membership_values, NaN-terminated */
			if (nm < 0 || mpos >= nm)
				return ox_error(g, n, "node %d is a set-membership split but membership_values has no set left", i);
			while (mpos < nm && !isnan(mv[mpos]))
				t->members[nmem++] = mv[mpos++];
			mpos++;
		}
		t->mstart[i + 1] = nmem;
		int64_t c[2] = {tn[i], fn[i]};
		int64_t leaf[2] = {tl[i], fl[i]};
		for (int b = 0; b < 2; b++) {
			int64_t lim = leaf[b] ? nl : nn;
			if (c[b] < 0 || c[b] >= lim)
				return ox_error(g, n, "node %d: %s %s id %lld is out of range", i, b ? "false" : "true",
						leaf[b] ? "leaf" : "node", (long long)c[b]);
			t->next[2 * i + b] = leaf[b] ? -(c[b] + 1) : c[b];
		}
	}
	t->nmembers = nmem;
	t->mstart[nn] = nmem;
	for (int r = 0; r < nr; r++)
		if (roots[r] < 0 || roots[r] >= nn)
			return ox_error(g, n, "tree_roots[%d] = %lld is out of range", r, (long long)roots[r]);
	t->roots = roots;
	t->lstart = ox_ir_alloc(g, (size_t)(nl + 1) * sizeof(int64_t));
	for (int j = 0; j <= nl; j++)
		t->lstart[j] = j;
	t->ltarget = lt;
	t->lweight = lw;
	t->base = NULL;
	int64_t agg = ox_attr_int(n, "aggregate_function", 1), post = ox_attr_int(n, "post_transform", 0);
	if (agg < 0 || agg > 3)
		return ox_error(g, n, "aggregate_function %lld is unknown", (long long)agg);
	if (post < 0 || post > 4)
		return ox_error(g, n, "post_transform %lld is unknown", (long long)post);
	t->agg = (int)agg;
	t->post = (int)post;
	return 0;
}

/* (tree id, node id) -> row, sorted for bsearch */
typedef struct {
	int64_t tree, node, row;
} tnkey;

static int tnkey_cmp(const void *a, const void *b)
{
	const tnkey *x = a, *y = b;
	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return 0;
}

static int64_t tn_find(const tnkey *keys, int nn, int64_t tree, int64_t node)
{
	tnkey k = {tree, node, 0};
	const tnkey *f = bsearch(&k, keys, (size_t)nn, sizeof k, tnkey_cmp);
	return f ? f->row : -1;
}

/* TreeEnsembleRegressor (ai.onnx.ml opsets 1 and 3): nodes are rows
 * (treeid, nodeid, mode, ...) with leaves among them; votes are
 * (treeid, nodeid, target, weight) rows. As onnxruntime does, the first
 * row of each tree id is its root. */
static int trees_regressor(ox_graph *g, const ox_node *n, ox_ml_trees *t)
{
	int64_t *tids, *nids, *feat, *tn, *fn, *miss = NULL, *ttree, *tnode, *tid;
	double *vals, *tw;
	const ox_attr *ma = ox_attr_get(n, "nodes_modes");
	int nn = attr_i64s(g, n, "nodes_treeids", &tids);
	if (nn < 0 || !ma || ma->type != OX_AT_STRINGS || ma->n != nn ||
	    attr_i64s(g, n, "nodes_nodeids", &nids) != nn || attr_i64s(g, n, "nodes_featureids", &feat) != nn ||
	    attr_i64s(g, n, "nodes_truenodeids", &tn) != nn || attr_i64s(g, n, "nodes_falsenodeids", &fn) != nn ||
	    attr_f64s(g, n, "nodes_values", "nodes_values_as_tensor", &vals) != nn)
		return ox_error(g, n, "the nodes_* attributes are missing or have different lengths");
	int nmiss = attr_i64s(g, n, "nodes_missing_value_tracks_true", &miss);
	if (nmiss >= 0 && nmiss != nn)
		return ox_error(g, n, "nodes_missing_value_tracks_true has %d entries, expected %d", nmiss, nn);
	int ne = attr_i64s(g, n, "target_treeids", &ttree);
	if (ne < 0)
		ne = 0;
	if ((ne && (attr_i64s(g, n, "target_nodeids", &tnode) != ne || attr_i64s(g, n, "target_ids", &tid) != ne ||
		    attr_f64s(g, n, "target_weights", "target_weights_as_tensor", &tw) != ne)))
		return ox_error(g, n, "the target_* attributes have different lengths");
	static const char *mnames[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
	tnkey *keys = ox_ir_alloc(g, (size_t)(nn + 1) * sizeof *keys);
	int64_t *slot = ox_ir_alloc(g, (size_t)(nn + 1) * sizeof(int64_t)); /* row -> node / -(leaf+1) */
	int *rmode = ox_ir_alloc(g, (size_t)(nn + 1) * sizeof(int));
	int ni = 0, nl = 0;
	for (int r = 0; r < nn; r++) {
		const char *m = ma->strs[r];
		rmode[r] = -1;
		for (int k = 0; k < 6; k++)
			if (!strcmp(m, mnames[k]))
				rmode[r] = k;
		if (rmode[r] < 0 && strcmp(m, "LEAF"))
			return ox_error(g, n, "nodes_modes[%d] = '%s' is unknown", r, m);
		slot[r] = rmode[r] < 0 ? -(nl++ + 1) : ni++;
		keys[r] = (tnkey){tids[r], nids[r], r};
	}
	qsort(keys, (size_t)nn, sizeof *keys, tnkey_cmp);
	for (int r = 1; r < nn; r++)
		if (!tnkey_cmp(&keys[r - 1], &keys[r]))
			return ox_error(g, n, "node %lld of tree %lld appears twice", (long long)keys[r].node,
					(long long)keys[r].tree);
	t->nnodes = ni;
	t->nleaves = nl;
	t->feat = ox_ir_alloc(g, (size_t)(ni + 1) * sizeof(int64_t));
	t->mode = ox_ir_alloc(g, (size_t)(ni + 1) * sizeof(int));
	t->split = ox_ir_alloc(g, (size_t)(ni + 1) * sizeof(double));
	t->missing_true = ox_ir_alloc(g, (size_t)(ni + 1) * sizeof(int));
	t->next = ox_ir_alloc(g, (size_t)(2 * ni + 2) * sizeof(int64_t));
	t->mstart = ox_ir_alloc(g, (size_t)(ni + 2) * sizeof(int64_t));
	t->members = ox_ir_alloc(g, sizeof(double));
	t->nmembers = 0;
	for (int r = 0; r < nn; r++) {
		if (slot[r] < 0)
			continue;
		int64_t i = slot[r];
		t->feat[i] = feat[r];
		t->mode[i] = rmode[r];
		t->split[i] = vals[r];
		t->missing_true[i] = miss && miss[r];
		int64_t c[2] = {tn[r], fn[r]};
		for (int b = 0; b < 2; b++) {
			int64_t row = tn_find(keys, nn, tids[r], c[b]);
			if (row < 0)
				return ox_error(g, n, "node %lld of tree %lld: %s child %lld does not exist",
						(long long)nids[r], (long long)tids[r], b ? "false" : "true", (long long)c[b]);
			t->next[2 * i + b] = slot[row];
		}
	}
	/* votes, grouped by leaf in attribute order */
	int64_t *cnt = ox_ir_alloc(g, (size_t)(nl + 2) * sizeof(int64_t));
	int64_t *eleaf = ox_ir_alloc(g, (size_t)(ne + 1) * sizeof(int64_t));
	for (int e = 0; e < ne; e++) {
		int64_t row = tn_find(keys, nn, ttree[e], tnode[e]);
		if (row < 0 || slot[row] >= 0)
			return ox_error(g, n, "target %d names node %lld of tree %lld, which is not a leaf", e,
					(long long)tnode[e], (long long)ttree[e]);
		eleaf[e] = -slot[row] - 1;
		cnt[eleaf[e] + 1]++;
	}
	t->lstart = ox_ir_alloc(g, (size_t)(nl + 1) * sizeof(int64_t));
	for (int v = 0; v < nl; v++)
		t->lstart[v + 1] = t->lstart[v] + cnt[v + 1];
	t->nentries = ne;
	t->ltarget = ox_ir_alloc(g, (size_t)(ne + 1) * sizeof(int64_t));
	t->lweight = ox_ir_alloc(g, (size_t)(ne + 1) * sizeof(double));
	int64_t *fill = ox_ir_alloc(g, (size_t)(nl + 1) * sizeof(int64_t));
	for (int e = 0; e < ne; e++) {
		int64_t at = t->lstart[eleaf[e]] + fill[eleaf[e]]++;
		t->ltarget[at] = tid[e];
		t->lweight[at] = tw[e];
	}
	/* roots: the first row of each tree id, trees in order of appearance */
	t->roots = ox_ir_alloc(g, (size_t)(nn + 1) * sizeof(int64_t));
	t->ntrees = 0;
	for (int r = 0; r < nn; r++) {
		int seen = 0;
		for (int q = 0; q < r && !seen; q++)
			seen = tids[q] == tids[r];
		if (!seen)
			t->roots[t->ntrees++] = slot[r];
	}
	if (!t->ntrees)
		return ox_error(g, n, "the ensemble has no trees");
	int nb = attr_f64s(g, n, "base_values", "base_values_as_tensor", &t->base);
	if (nb >= 0 && nb != t->ntargets && nb != 0)
		return ox_error(g, n, "base_values has %d entries, n_targets is %d", nb, t->ntargets);
	if (nb <= 0)
		t->base = NULL;
	static const char *aggs[] = {"AVERAGE", "SUM", "MIN", "MAX"};
	const char *a = ox_attr_str(n, "aggregate_function", "SUM");
	t->agg = -1;
	for (int k = 0; k < 4; k++)
		if (!strcmp(a, aggs[k]))
			t->agg = k;
	if (t->agg < 0)
		return ox_error(g, n, "aggregate_function '%s' is unknown", a);
	t->post = post_code(g, n, ox_attr_str(n, "post_transform", "NONE"));
	return t->post < 0 ? -1 : 0;
}

/* Decode either form into *t and validate it. Shared with emit_ml.c. */
int ox_ir_ml_trees(ox_graph *g, const ox_node *n, void *out)
{
	ox_ml_trees *t = out;
	memset(t, 0, sizeof *t);
	int64_t nt = ox_attr_int(n, "n_targets", -1);
	if (nt < 1 || nt > (1 << 20))
		return ox_error(g, n, "n_targets is missing or invalid");
	t->ntargets = (int)nt;
	if ((n->op == OX_OP_TreeEnsemble ? trees_v5(g, n, t) : trees_regressor(g, n, t)) < 0)
		return -1;
	for (int e = 0; e < t->nentries; e++)
		if (t->ltarget[e] < 0 || t->ltarget[e] >= nt)
			return ox_error(g, n, "leaf target id %lld is out of range for n_targets %lld",
					(long long)t->ltarget[e], (long long)nt);
	for (int i = 0; i < t->nnodes; i++)
		if (t->feat[i] < 0)
			return ox_error(g, n, "node %d has a negative feature id", i);
	if (t->post == OX_ML_PROBIT)
		return ox_error(g, n, "post_transform PROBIT is not supported");
	return check_acyclic(g, n, t);
}

static int infer_trees(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int v5 = n->op == OX_OP_TreeEnsemble;
	if (!is_num(x->dtype, !v5, v5))
		return bad_dtype(g, n, "input X", x->dtype);
	if (x->shape.rank != 1 && x->shape.rank != 2)
		return ox_error(g, n, "input has rank %d, expected 1 or 2", x->shape.rank);
	ox_ml_trees t;
	if (ox_ir_ml_trees(g, n, &t) < 0)
		return -1;
	ox_shape o = {2, {x->shape.rank == 2 ? x->shape.d[0] : 1, t.ntargets}};
	ox_set_out(g, n, 0, v5 ? x->dtype : OX_F32, &o);
	return 0;
}

/* ---- the small ones ---- */

static int infer_linear(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (!is_num(x->dtype, 1, 0))
		return bad_dtype(g, n, "input X", x->dtype);
	if (x->shape.rank != 1 && x->shape.rank != 2)
		return ox_error(g, n, "input has rank %d, expected 1 or 2", x->shape.rank);
	int64_t tg = ox_attr_int(n, "targets", 1);
	double *c, *b;
	int nc = attr_f64s(g, n, "coefficients", NULL, &c);
	int nb = attr_f64s(g, n, "intercepts", NULL, &b);
	if (tg < 1 || nc < 1 || nc % tg)
		return ox_error(g, n, "coefficients (%d) are not a multiple of targets (%lld)", nc, (long long)tg);
	if (nb >= 0 && nb != tg && nb != 0)
		return ox_error(g, n, "intercepts has %d entries, targets is %lld", nb, (long long)tg);
	if (post_code(g, n, ox_attr_str(n, "post_transform", "NONE")) < 0)
		return -1;
	if (!strcmp(ox_attr_str(n, "post_transform", "NONE"), "PROBIT"))
		return ox_error(g, n, "post_transform PROBIT is not supported");
	ox_shape o = {2, {x->shape.rank == 2 ? x->shape.d[0] : 1, tg}};
	ox_set_out(g, n, 0, OX_F32, &o);
	return 0;
}

int infer_ml(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	double *v;
	switch (n->op) {
	case OX_OP_TfIdfVectorizer:
		return infer_tfidf(g, n);
	case OX_OP_LabelEncoder:
		return infer_label_encoder(g, n);
	case OX_OP_TreeEnsemble:
	case OX_OP_TreeEnsembleRegressor:
		return infer_trees(g, n);
	case OX_OP_LinearRegressor:
		return infer_linear(g, n);
	case OX_OP_Binarizer:
		if (!is_num(x->dtype, 1, 0))
			return bad_dtype(g, n, "input X", x->dtype);
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	case OX_OP_ArrayFeatureExtractor: {
		ox_value *y = ox_in(g, n, 1);
		if (!is_num(x->dtype, 1, 0))
			return bad_dtype(g, n, "input X", x->dtype);
		if (y->dtype != OX_I64)
			return bad_dtype(g, n, "indices Y", y->dtype);
		if (x->shape.rank < 1)
			return ox_error(g, n, "input X is a scalar");
		ox_dim m = 1;
		for (int k = 0; k < y->shape.rank; k++)
			m = ox_dim_mul(g, m, y->shape.d[k]);
		ox_shape o = x->shape;
		if (o.rank == 1)
			o = (ox_shape){2, {1, m}};
		else
			o.d[o.rank - 1] = m;
		ox_set_out(g, n, 0, x->dtype, &o);
		return 0;
	}
	case OX_OP_Scaler:
		if (!is_num(x->dtype, 1, 0))
			return bad_dtype(g, n, "input X", x->dtype);
		if (attr_f64s(g, n, "scale", NULL, &v) == 0 || attr_f64s(g, n, "offset", NULL, &v) == 0)
			return ox_error(g, n, "scale or offset is empty");
		ox_set_out(g, n, 0, OX_F32, &x->shape);
		return 0;
	case OX_OP_Normalizer: {
		const char *m = ox_attr_str(n, "norm", "MAX");
		if (!is_num(x->dtype, 1, 0))
			return bad_dtype(g, n, "input X", x->dtype);
		if (strcmp(m, "MAX") && strcmp(m, "L1") && strcmp(m, "L2"))
			return ox_error(g, n, "norm '%s' is not MAX, L1 or L2", m);
		if (x->shape.rank != 1 && x->shape.rank != 2)
			return ox_error(g, n, "input has rank %d, expected 1 or 2", x->shape.rank);
		ox_set_out(g, n, 0, OX_F32, &x->shape);
		return 0;
	}
	case OX_OP_Imputer: {
		int64_t *iv;
		if (!is_num(x->dtype, 1, 0))
			return bad_dtype(g, n, "input X", x->dtype);
		int nv = ox_dtype_is_float(x->dtype) ? attr_f64s(g, n, "imputed_value_floats", NULL, &v)
						     : attr_i64s(g, n, "imputed_value_int64s", &iv);
		if (nv < 1)
			return ox_error(g, n, "imputed_value_%s is missing or empty for input of %s",
					ox_dtype_is_float(x->dtype) ? "floats" : "int64s", ox_dtype_name(x->dtype));
		if (x->shape.rank < 1 && nv != 1)
			return ox_error(g, n, "a scalar input needs exactly one imputed value");
		ox_set_out(g, n, 0, x->dtype, &x->shape);
		return 0;
	}
	}
	return ox_error(g, n, "not an ML op");
}
