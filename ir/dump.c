/* dump.c: print a graph in the IR text form that ir/parse.c reads back.
 *
 * The grammar is in docs/ir.md. The invariant that matters: for any graph,
 * dump(parse(dump(g))) == dump(g) byte for byte, so value ids are printed as
 * they are (the parser recreates them at the same ids), lines come in a
 * fixed order (header, binds, inputs, consts, outer values, live nodes in
 * their current order, outputs) and nothing depends on addresses or hashing.
 * Only what a live node or a graph output refers to is printed: dead nodes
 * and orphaned constants are left out.
 */
#include "ir.h"
#include <stdlib.h>
#include <string.h>

#define INLINE_MAX 16 /* constants with more elements print as <N bytes> */

static void dump_graph(ox_graph *g, FILE *f, int indent);

static void put_indent(FILE *f, int indent)
{
	for (int i = 0; i < indent; i++)
		fputc(' ', f);
}

/* A C-like string literal; bytes >= 0x80 pass through so UTF-8 stays legible. */
static void put_str(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_cstr(FILE *f, const char *s)
{
	if (!s)
		s = "";
	put_str(f, s, strlen(s));
}

/* Symbol names print bare when the parser can read them back bare
 * (the names ox_dim_unknown makes, "?hint#3", included); others are quoted. */
static int is_plain_sym(const char *s)
{
	if (!s || !*s || !strcmp(s, "max") || !strcmp(s, "min"))
		return 0;
	if (!(s[0] == '_' || s[0] == '?' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return 0;
	if (!strcmp(s, "?"))
		return 0;
	for (const char *p = s; *p; p++) {
		char c = *p;
		if (!(c == '_' || c == '?' || c == '#' || c == '.' || c == ':' || (c >= 'A' && c <= 'Z') ||
		      (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

static void put_sym(FILE *f, const char *s)
{
	if (is_plain_sym(s))
		fputs(s, f);
	else
		put_cstr(f, s);
}

/* Same spelling as ox_dim_str, but without its fixed buffers and with odd
 * symbol names quoted. */
static void put_dim(const ox_graph *g, FILE *f, ox_dim d)
{
	static const char *ops[] = {"", "+", "-", "*", "/", "/^", "%", " max ", " min "};
	if (d >= 0) {
		fprintf(f, "%lld", (long long)d);
		return;
	}
	if (-d - 1 >= OX_DX(g)->ndexprs) {
		fprintf(f, "<bad dim %lld>", (long long)d);
		return;
	}
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM) {
		put_sym(f, e->sym);
		return;
	}
	fputc('(', f);
	put_dim(g, f, e->a);
	fputs(e->op > 0 && e->op <= OX_DE_MIN ? ops[e->op] : " ?op ", f);
	put_dim(g, f, e->b);
	fputc(')', f);
}

static void put_shape(const ox_graph *g, FILE *f, const ox_shape *s)
{
	fputc('[', f);
	for (int k = 0; k < s->rank; k++) {
		if (k)
			fputc(',', f);
		put_dim(g, f, s->d[k]);
	}
	fputc(']', f);
}

/* %id, then :dtype[dims] (or :dtype? when the shape is unknown); nothing
 * after the id when neither dtype nor shape is known yet. */
static void put_value(const ox_graph *g, FILE *f, ox_id id)
{
	if (id < 0) {
		fputc('_', f);
		return;
	}
	fprintf(f, "%%%d", id);
	if (id >= g->nvals) { /* a broken graph is still dumped, for its verifier message */
		fputs("<bad id>", f);
		return;
	}
	const ox_value *v = &g->vals[id];
	if (v->dtype == OX_UNDEF && !v->has_shape)
		return;
	fprintf(f, ":%s", ox_dtype_name(v->dtype));
	if (v->has_shape)
		put_shape(g, f, &v->shape);
	else
		fputc('?', f);
	if (v->layout) {
		int np = ox_layout_nparams(v->layout);
		fprintf(f, "@%s(", ox_layout_names[v->layout]);
		for (int i = 0; i < np; i++)
			fprintf(f, "%s%d", i ? "," : "", v->lp[i]);
		fputc(')', f);
	}
}

/* %.9g (or %.17g for doubles); with mark, an integral result gets ".0" so
 * the parser reads a float attribute back as a float, not an int. */
static void put_float(FILE *f, double x, int prec, int mark)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.*g", prec, x);
	fputs(buf, f);
	if (mark && !strpbrk(buf, ".eEn")) /* n: inf, nan */
		fputs(".0", f);
}

static int elem_printable(int dt)
{
	return ox_dtype_is_float(dt) ? (dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16)
				     : (ox_dtype_is_int(dt) || dt == OX_BOOL);
}

/* Tensor data: "[1, 2, 3]" when small; "<N bytes>" (or "<N strings>") when
 * large, which the parser turns back into zeros; "bytes[0x38, ...]" for
 * element types without a numeric spelling (f8, complex). */
static void put_data(FILE *f, const ox_tensor *t)
{
	if (!t) {
		fputs("<missing>", f);
		return;
	}
	int64_t n = ox_tensor_numel(t);
	if (t->dtype == OX_STRING) {
		if (n > INLINE_MAX) {
			fprintf(f, "<%lld strings>", (long long)n);
			return;
		}
		fputc('[', f);
		for (int64_t k = 0; k < n; k++) {
			if (k)
				fputs(", ", f);
			put_cstr(f, t->strs ? t->strs[k] : "");
		}
		fputc(']', f);
		return;
	}
	size_t es = ox_dtype_size(t->dtype);
	if (n < 0 || n > INLINE_MAX || !es || !t->data || t->nbytes != (size_t)n * es) {
		fprintf(f, "<%zu bytes>", t->nbytes);
		return;
	}
	if (!elem_printable(t->dtype)) {
		fputs("bytes[", f);
		for (size_t k = 0; k < t->nbytes; k++)
			fprintf(f, k ? ", 0x%02x" : "0x%02x", ((const unsigned char *)t->data)[k]);
		fputc(']', f);
		return;
	}
	fputc('[', f);
	for (int64_t k = 0; k < n; k++) {
		if (k)
			fputs(", ", f);
		if (ox_dtype_is_float(t->dtype)) {
			put_float(f, ox_tensor_get_f64(t, k), t->dtype == OX_F64 ? 17 : 9, 0);
		} else if (t->dtype == OX_U64) {
			uint64_t u;
			memcpy(&u, (const unsigned char *)t->data + k * 8, 8);
			fprintf(f, "%llu", (unsigned long long)u);
		} else {
			fprintf(f, "%lld", (long long)ox_tensor_get_i64(t, k));
		}
	}
	fputc(']', f);
}

static void put_tensor(const ox_graph *g, FILE *f, const ox_tensor *t)
{
	if (!t) {
		fputs("<missing>", f);
		return;
	}
	fprintf(f, "tensor %s", ox_dtype_name(t->dtype));
	put_shape(g, f, &t->shape);
	fputc(' ', f);
	put_data(f, t);
}

static void put_attr(FILE *f, const ox_graph *g, const ox_attr *a, int indent)
{
	put_sym(f, a->name);
	fputc('=', f);
	switch (a->type) {
	case OX_AT_INT:
		fprintf(f, "%lld", (long long)a->i);
		break;
	case OX_AT_FLOAT:
		put_float(f, a->f, 9, 1);
		break;
	case OX_AT_STRING:
		put_str(f, a->s ? a->s : "", a->slen ? a->slen : (a->s ? strlen(a->s) : 0));
		break;
	case OX_AT_INTS:
		fputc('[', f);
		for (int k = 0; k < a->n; k++)
			fprintf(f, k ? ",%lld" : "%lld", (long long)a->ints[k]);
		fputc(']', f);
		break;
	case OX_AT_FLOATS:
		fputs(a->n ? "[" : "floats[", f);
		for (int k = 0; k < a->n; k++) {
			if (k)
				fputc(',', f);
			put_float(f, a->floats[k], 9, 1);
		}
		fputc(']', f);
		break;
	case OX_AT_STRINGS:
		fputs(a->n ? "[" : "strings[", f);
		for (int k = 0; k < a->n; k++) {
			if (k)
				fputs(", ", f);
			put_cstr(f, a->strs[k]);
		}
		fputc(']', f);
		break;
	case OX_AT_TENSOR:
		put_tensor(g, f, a->t);
		break;
	case OX_AT_TENSORS:
		fputs(a->n ? "[" : "tensors[", f);
		for (int k = 0; k < a->n; k++) {
			if (k)
				fputs(", ", f);
			put_tensor(g, f, &a->t[k]);
		}
		fputc(']', f);
		break;
	case OX_AT_GRAPH:
	case OX_AT_GRAPHS: {
		int n = a->type == OX_AT_GRAPH ? 1 : a->n;
		if (a->type == OX_AT_GRAPHS)
			fputs(n ? "[" : "graphs[", f);
		for (int k = 0; k < n; k++) {
			if (k)
				fputs(", ", f);
			fputs("graph{\n", f);
			dump_graph(a->g[k], f, indent + 2);
			put_indent(f, indent);
			fputc('}', f);
		}
		if (a->type == OX_AT_GRAPHS)
			fputc(']', f);
		break;
	}
	case OX_AT_SPARSE:
		fputs("<sparse>", f); /* not readable back: ox_ir_parse reports it */
		break;
	case OX_AT_TYPE:
		fputs("<type>", f);
		break;
	default:
		fputs("<undef>", f);
	}
}

/* Names that subgraphs (at any depth) capture from outside themselves. */
typedef struct {
	const char **v;
	int n, cap;
} names;

static int has_name(const names *ns, const char *s)
{
	for (int i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return 1;
	return 0;
}

/* Per value of g: referenced (by a live node or an output), produced by a
 * live node, a graph input. Computed here rather than trusting nuses and
 * producer, which may be stale when a pass dumps. */
static void scan(const ox_graph *g, char **used, char **made, char **isin)
{
	*used = calloc((size_t)g->nvals + 1, 1);
	*made = calloc((size_t)g->nvals + 1, 1);
	*isin = calloc((size_t)g->nvals + 1, 1);
	if (!*used || !*made || !*isin)
		ox_die("out of memory");
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && n->in[k] < g->nvals)
				(*used)[n->in[k]] = 1;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && n->out[k] < g->nvals)
				(*made)[n->out[k]] = 1;
	}
	for (int k = 0; k < g->noutputs; k++)
		if (g->outputs[k] >= 0 && g->outputs[k] < g->nvals)
			(*used)[g->outputs[k]] = 1;
	for (int k = 0; k < g->ninputs; k++)
		if (g->inputs[k] >= 0 && g->inputs[k] < g->nvals)
			(*isin)[g->inputs[k]] = 1;
}

static int is_outer(const ox_value *v, int used, int made, int isin)
{
	return used && !made && !isin && v->kind != OX_V_CONST;
}

static void collect_outer(const ox_graph *g, names *ns, int self)
{
	if (self) {
		char *used, *made, *isin;
		scan(g, &used, &made, &isin);
		for (int i = 0; i < g->nvals; i++)
			if (is_outer(&g->vals[i], used[i], made[i], isin[i]) && !has_name(ns, g->vals[i].name)) {
				if (ns->n == ns->cap) {
					ns->cap = ns->cap ? 2 * ns->cap : 16;
					ns->v = realloc(ns->v, (size_t)ns->cap * sizeof *ns->v);
					if (!ns->v)
						ox_die("out of memory");
				}
				ns->v[ns->n++] = g->vals[i].name;
			}
		free(used);
		free(made);
		free(isin);
	}
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		for (int a = 0; !n->dead && a < n->nattr; a++) {
			const ox_attr *at = &n->attrs[a];
			if (at->type == OX_AT_GRAPH || at->type == OX_AT_GRAPHS)
				for (int k = 0; k < (at->type == OX_AT_GRAPH ? 1 : at->n); k++)
					collect_outer(at->g[k], ns, 1);
		}
	}
}

static void put_node(FILE *f, const ox_graph *g, const ox_node *n, int indent, const names *captured)
{
	put_indent(f, indent);
	for (int k = 0; k < n->nout; k++) {
		if (k)
			fputs(", ", f);
		put_value(g, f, n->out[k]);
		/* the name only matters, and only prints, where a subgraph refers to it */
		if (n->out[k] >= 0 && n->out[k] < g->nvals && has_name(captured, g->vals[n->out[k]].name)) {
			fputc(' ', f);
			put_cstr(f, g->vals[n->out[k]].name);
		}
	}
	fputs(n->nout ? " = " : "= ", f);
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		fprintf(f, "%s::", n->domain);
	fputs(n->optype, f);
	if (n->opset != g->opset)
		fprintf(f, "@%d", n->opset);
	fputc('(', f);
	for (int k = 0; k < n->nin; k++) {
		if (k)
			fputs(", ", f);
		if (n->in[k] < 0)
			fputc('_', f);
		else
			fprintf(f, "%%%d", n->in[k]);
	}
	fputc(')', f);
	if (n->nattr) {
		fputs(" {", f);
		for (int k = 0; k < n->nattr; k++) {
			if (k)
				fputs(", ", f);
			put_attr(f, g, &n->attrs[k], indent);
		}
		fputc('}', f);
	}
	if (n->name && *n->name) {
		fputs("  # ", f);
		put_cstr(f, n->name);
	}
	fputc('\n', f);
}

static int cmp_sym(const void *a, const void *b)
{
	return strcmp((*(const ox_dexpr *const *)a)->sym, (*(const ox_dexpr *const *)b)->sym);
}

static void dump_graph(ox_graph *g, FILE *f, int indent)
{
	char *used, *made, *isin;
	scan(g, &used, &made, &isin);
	names captured = {NULL, 0, 0};
	collect_outer(g, &captured, 0);

	put_indent(f, indent);
	fputs("graph ", f);
	put_cstr(f, g->name);
	fprintf(f, " opset %d", g->opset);
	if (g->ir_version)
		fprintf(f, " ir %lld", (long long)g->ir_version);
	fputc('\n', f);

	/* bound symbols, by name so the order does not depend on dexpr ids */
	const ox_dexpr **syms = malloc(((size_t)OX_DX(g)->ndexprs + 1) * sizeof *syms);
	if (!syms)
		ox_die("out of memory");
	int nsyms = 0;
	for (int i = 0; i < OX_DX(g)->ndexprs && !g->parent; i++) /* the root's table, printed once */
		if (OX_DX(g)->dexprs[i].op == OX_DE_SYM && (OX_DX(g)->dexprs[i].value >= 0 || OX_DX(g)->dexprs[i].rt))
			syms[nsyms++] = &OX_DX(g)->dexprs[i];
	qsort(syms, (size_t)nsyms, sizeof *syms, cmp_sym);
	for (int i = 0; i < nsyms; i++) {
		put_indent(f, indent);
		fputs(syms[i]->value >= 0 ? "bind " : "range ", f);
		put_sym(f, syms[i]->sym);
		if (syms[i]->value >= 0) {
			fprintf(f, "=%lld\n", (long long)syms[i]->value);
			continue;
		}
		if (syms[i]->hi < 0)
			fprintf(f, "=%lld..inf", (long long)syms[i]->lo);
		else
			fprintf(f, "=%lld..%lld", (long long)syms[i]->lo, (long long)syms[i]->hi);
		if (syms[i]->rt == OX_RT_DATA) {
			fputs(" data ", f);
			put_cstr(f, syms[i]->def);
		}
		fputc('\n', f);
	}
	free(syms);

	for (int k = 0; k < g->ninputs; k++) {
		put_indent(f, indent);
		fputs("input ", f);
		put_value(g, f, g->inputs[k]);
		fputc(' ', f);
		put_cstr(f, g->inputs[k] >= 0 && g->inputs[k] < g->nvals ? g->vals[g->inputs[k]].name : "");
		fputc('\n', f);
	}
	for (int i = 0; i < g->nvals; i++) {
		const ox_value *v = &g->vals[i];
		if (v->kind != OX_V_CONST || !used[i] || isin[i] || made[i])
			continue;
		put_indent(f, indent);
		fputs("const ", f);
		put_value(g, f, i);
		fputc(' ', f);
		put_cstr(f, v->name);
		fputs(" = ", f);
		put_data(f, v->data);
		fputc('\n', f);
	}
	/* referenced but defined nowhere here: captured from an enclosing graph
	 * (or, in a broken graph, produced by a dead node) */
	for (int i = 0; i < g->nvals; i++) {
		const ox_value *v = &g->vals[i];
		if (!is_outer(v, used[i], made[i], isin[i]))
			continue;
		put_indent(f, indent);
		fputs("outer ", f);
		put_value(g, f, i);
		fputc(' ', f);
		put_cstr(f, v->name);
		fputc('\n', f);
	}
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead)
			put_node(f, g, &g->nodes[i], indent, &captured);
	for (int k = 0; k < g->noutputs; k++) {
		ox_id o = g->outputs[k];
		const char *name = g->output_names && g->output_names[k] ? g->output_names[k]
				   : o >= 0 && o < g->nvals ? g->vals[o].name : "";
		put_indent(f, indent);
		if (o >= 0)
			fprintf(f, "output %%%d ", o);
		else
			fputs("output _ ", f);
		put_cstr(f, name);
		fputc('\n', f);
	}
	free(used);
	free(made);
	free(isin);
	free(captured.v);
}

void ox_ir_dump(ox_graph *g, FILE *f)
{
	dump_graph(g, f, 0);
}
