/* emit_str.c: C for the string ops: StringConcat, StringSplit,
 * StringNormalizer and RegexFullMatch (kernels in templates/str_split.c and
 * templates/regex.c), and the C string literal printer that emit_ml.c
 * shares (LabelEncoder tables).
 *
 * An element is an ox_str (const char *). An output points into an input,
 * at a string literal, or into the node's scratch output, where each new
 * string owns string_capacity bytes (NUL included); a result that would not
 * fit is detected before anything is written and makes the node return 1
 * (the run then fails with PREFIX_ERR_CAPACITY). Case mapping is ASCII:
 * other bytes (UTF-8 sequences) are left as they are.
 */
#include "../cg.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

/* s as a C string literal: printable ASCII as is, everything else as a
 * three-digit octal escape (so a following digit cannot join it); '/' is
 * escaped too, so the text is also safe inside a comment, and a '?' before
 * another '?' so no trigraph forms */
void ox_cg_str_literal(ox_buf *b, const char *s)
{
	ox_buf_puts(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int c = *p;
		if (c == '"' || c == '\\')
			ox_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f || c == '/' || (c == '?' && p[1] == '?'))
			ox_buf_printf(b, "\\%03o", c);
		else
			ox_buf_printf(b, "%c", c);
	}
	ox_buf_puts(b, "\"");
}

/* print "static const char *const name[] = {...};" for m strings */
static void str_table(ox_cg *cg, const char *name, const char *const *s, int m)
{
	ox_buf b = {0};
	ox_buf_printf(&b, "\tstatic const char *const %s[%d] = {", name, m);
	for (int i = 0; i < m; i++) {
		ox_buf_puts(&b, i ? ", " : "");
		ox_cg_str_literal(&b, s[i]);
	}
	ox_buf_puts(&b, "};\n");
	ox_cg_printf(cg, "%s", b.s);
	ox_buf_free(&b);
}

static int use_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, const char *name)
{
	/* the kernels are dtype-free; u8 names the one instance */
	if (ox_cg_use(cg, name, OX_U8))
		return ox_error(g, n, "template %s.c is missing", name);
	return 0;
}

/* the scratch output's C name, or NULL (and an error) when infer made none */
static const char *scratch(ox_graph *g, ox_node *n)
{
	static char name[16];
	if (!n->scratch) {
		ox_error(g, n, "no scratch memory was planned for this node");
		return NULL;
	}
	ox_cg_snprintf(name, sizeof name, "out%d", n->nout - 1);
	return name;
}

/* the flat index into input k (shape s) for flat output index "i" of shape
 * o, by numpy broadcasting; into buf */
static void bcast_index(char *buf, size_t cap, const ox_shape *s, const ox_shape *o)
{
	int same = s->rank == o->rank;
	for (int k = 0; same && k < o->rank; k++)
		same = s->d[k] == o->d[k];
	if (same) {
		ox_cg_snprintf(buf, cap, "i");
		return;
	}
	size_t len = 0;
	buf[0] = 0;
	int64_t ist = 1, ost = 1;
	for (int k = o->rank - 1; k >= 0; k--) {
		int ks = k - (o->rank - s->rank);
		int64_t od = o->d[k];
		if (ks >= 0 && s->d[ks] != 1 && od != 1) {
			char c[96];
			if (k == 0)
				ox_cg_snprintf(c, sizeof c, "i / %lld", (long long)ost);
			else
				ox_cg_snprintf(c, sizeof c, "i / %lld %% %lld", (long long)ost, (long long)od);
			len += (size_t)ox_cg_snprintf(buf + len, cap - len, "%s(%s) * %lld", len ? " + " : "", c,
						(long long)ist);
		}
		if (ks >= 0)
			ist *= s->d[ks];
		ost *= od;
	}
	if (!len)
		ox_cg_snprintf(buf, cap, "0");
}

/* ---- StringConcat ---- */

static int emit_concat(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *a = &ox_in(g, n, 0)->shape, *b = &ox_in(g, n, 1)->shape, *o = &ox_out(g, n, 0)->shape;
	int64_t m = ox_shape_numel(o), cap = ox_str_capacity(g);
	const char *sc = scratch(g, n);
	char ia[512], ib[512];
	if (!sc)
		return -1;
	if (m == 0) {
		ox_cg_line(cg, 1, "/* empty output: nothing to do */");
		return 0;
	}
	ox_cg_fails(cg, OX_CG_FAIL_CAPACITY);
	bcast_index(ia, sizeof ia, a, o);
	bcast_index(ib, sizeof ib, b, o);
	ox_cg_line(cg, 1, "char *buf = (char *)%s; /* %lld bytes per result */", sc, (long long)cap);
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++) {", (long long)m);
	ox_cg_line(cg, 2, "const char *a = in0[%s], *b = in1[%s];", ia, ib);
	ox_cg_line(cg, 2, "size_t la = strlen(a), lb = strlen(b);");
	ox_cg_line(cg, 2, "if (la + lb >= %lld)", (long long)cap);
	ox_cg_line(cg, 3, "return 1; /* over the string capacity */");
	ox_cg_line(cg, 2, "char *d = buf + i * %lld;", (long long)cap);
	ox_cg_line(cg, 2, "memcpy(d, a, la);");
	ox_cg_line(cg, 2, "memcpy(d + la, b, lb + 1);");
	ox_cg_line(cg, 2, "out0[i] = d;");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- StringSplit ---- */

static int emit_split(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &ox_in(g, n, 0)->shape;
	int64_t m = ox_shape_numel(xs), cap = ox_str_capacity(g), bound = ox_str_split_bound(g, n);
	const char *delim = ox_attr_str(n, "delimiter", "");
	const ox_attr *ms = ox_attr_get(n, "maxsplit");
	int64_t maxsplit = ms && ms->type == OX_AT_INT && ms->i >= 0 ? ms->i : -1;
	int has_z = n->nout - n->scratch > 1 && n->out[1] >= 0;
	const char *sc = scratch(g, n);
	if (!sc || use_tmpl(cg, g, n, "str_split"))
		return -1;
	ox_cg_fails(cg, OX_CG_FAIL_CAPACITY);
	ox_buf d = {0};
	ox_cg_str_literal(&d, delim);
	ox_cg_line(cg, 1, "/* %s, maxsplit %lld (-1: none); at most %lld tokens per string */",
		   delim[0] ? "split at the delimiter" : "split at runs of whitespace", (long long)maxsplit,
		   (long long)bound);
	ox_cg_line(cg, 1, "static const char delim[] = %s;", d.s);
	ox_buf_free(&d);
	ox_cg_line(cg, 1, "char *buf = (char *)%s; /* %lld bytes per input string */", sc, (long long)cap);
	ox_cg_line(cg, 1, "int64_t most = 0;");
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++) {", (long long)m);
	ox_cg_line(cg, 2, "if (strlen(in0[i]) >= %lld)", (long long)cap);
	ox_cg_line(cg, 3, "return 1; /* over the string capacity */");
	ox_cg_line(cg, 2, "int64_t cnt = ox_split(in0[i], delim, %lld, 0, 0, 0);", (long long)maxsplit);
	if (has_z)
		ox_cg_line(cg, 2, "out1[i] = cnt;");
	ox_cg_line(cg, 2, "most = cnt > most ? cnt : most;");
	ox_cg_line(cg, 1, "}");
	ox_cg_line(cg, 1, "if (most > %lld)", (long long)bound);
	ox_cg_line(cg, 2, "return 1;");
	ox_cg_line(cg, 1, "/* Y compacted to [..., most] */");
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++)", (long long)m);
	ox_cg_line(cg, 2, "ox_split(in0[i], delim, %lld, out0 + i * most, most, buf + i * %lld);", (long long)maxsplit,
		   (long long)cap);
	ox_cg_line(cg, 1, "*ext0 = most;");
	return 0;
}

/* ---- StringNormalizer ---- */

static int emit_normalizer(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int64_t c = ox_shape_numel(&x->shape), cap = ox_str_capacity(g);
	const char *cc = ox_attr_str(n, "case_change_action", "NONE");
	int sens = (int)ox_attr_int(n, "is_case_sensitive", 0), change = strcmp(cc, "NONE") != 0;
	const ox_attr *sw = ox_attr_get(n, "stopwords");
	int nsw = sw && sw->type == OX_AT_STRINGS ? sw->n : 0;
	const char *sc = change ? scratch(g, n) : NULL;
	if (change && !sc)
		return -1;
	if (change || nsw)
		ox_cg_line(cg, 1, "/* %s%s%s (ASCII case mapping; other bytes unchanged) */",
			   nsw ? (sens ? "drop the stopwords (case-sensitive)" : "drop the stopwords (ASCII case-insensitive)") : "",
			   nsw && change ? ", then " : "", change ? (cc[0] == 'L' ? "lower-case" : "upper-case") : "");
	if (nsw)
		str_table(cg, "stop", sw->strs, nsw);
	if (nsw && !sens)
		ox_cg_helper(cg, "str_ieq",
			     "/* equal up to ASCII case */\n"
			     "OX_STATIC int ox_str_ieq(const char *a, const char *b)\n"
			     "{\n"
			     "\tfor (;; a++, b++) {\n"
			     "\t\tint x = *a >= 'A' && *a <= 'Z' ? *a + 32 : *a;\n"
			     "\t\tint y = *b >= 'A' && *b <= 'Z' ? *b + 32 : *b;\n"
			     "\t\tif (x != y)\n"
			     "\t\t\treturn 0;\n"
			     "\t\tif (!x)\n"
			     "\t\t\treturn 1;\n"
			     "\t}\n"
			     "}\n\n");
	if (change)
		ox_cg_line(cg, 1, "char *buf = (char *)%s; /* %lld bytes per result */", sc, (long long)cap);
	ox_cg_line(cg, 1, "int64_t kept = 0;");
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++) {", (long long)c);
	ox_cg_line(cg, 2, "const char *s = in0[i];");
	if (nsw) {
		ox_cg_line(cg, 2, "int drop = 0;");
		ox_cg_line(cg, 2, "for (int k = 0; k < %d && !drop; k++)", nsw);
		ox_cg_line(cg, 3, "drop = %s;", sens ? "strcmp(s, stop[k]) == 0" : "ox_str_ieq(s, stop[k])");
		ox_cg_line(cg, 2, "if (drop)");
		ox_cg_line(cg, 3, "continue;");
	}
	if (change) {
		int up = cc[0] == 'U';
		ox_cg_fails(cg, OX_CG_FAIL_CAPACITY);
		ox_cg_line(cg, 2, "size_t len = strlen(s);");
		ox_cg_line(cg, 2, "if (len >= %lld)", (long long)cap);
		ox_cg_line(cg, 3, "return 1; /* over the string capacity */");
		ox_cg_line(cg, 2, "char *d = buf + kept * %lld;", (long long)cap);
		ox_cg_line(cg, 2, "for (size_t j = 0; j <= len; j++)");
		ox_cg_line(cg, 3, "d[j] = (char)(s[j] >= '%c' && s[j] <= '%c' ? s[j] %s 32 : s[j]);", up ? 'a' : 'A',
			   up ? 'z' : 'Z', up ? "-" : "+");
		ox_cg_line(cg, 2, "out0[kept++] = d;");
	} else {
		ox_cg_line(cg, 2, "out0[kept++] = s;");
	}
	ox_cg_line(cg, 1, "}");
	if (y->dyn) {
		ox_cg_line(cg, 1, "if (!kept) /* all dropped: one empty string, as the spec says */");
		ox_cg_line(cg, 2, "out0[kept++] = \"\";");
		ox_cg_line(cg, 1, "*ext0 = kept;");
	} else {
		ox_cg_line(cg, 1, "(void)kept;");
	}
	return 0;
}

/* ---- RegexFullMatch ---- */

static const char *const re_ops[] = {"OX_RE_CHAR", "OX_RE_ANY", "OX_RE_ANYNL", "OX_RE_CLASS", "OX_RE_SPLIT",
				     "OX_RE_JMP", "OX_RE_BOT", "OX_RE_EOT", "OX_RE_WORDB", "OX_RE_NWORDB",
				     "OX_RE_MATCH"};

static int emit_regex(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_re_prog p;
	int64_t m = ox_shape_numel(&ox_in(g, n, 0)->shape);
	const char *sc = scratch(g, n);
	if (!sc || ox_ir_regex(g, n, &p) || use_tmpl(cg, g, n, "regex"))
		return -1;
	ox_buf b = {0};
	ox_buf_puts(&b, "\t/* full match of ");
	ox_cg_str_literal(&b, ox_attr_str(n, "pattern", ""));
	ox_buf_printf(&b, " (RE2 syntax), compiled to a Thompson NFA */\n");
	ox_buf_printf(&b, "\tstatic const ox_re_inst prog[%d] = {\n", p.n);
	for (int i = 0; i < p.n; i++) {
		const ox_re_inst *in = &p.code[i];
		ox_buf_printf(&b, "\t\t{%s, ", re_ops[in->op]);
		if (in->op == OX_RE_CHAR && in->x >= 0x20 && in->x < 0x7f && in->x != '\'' && in->x != '\\')
			ox_buf_printf(&b, "'%c'", (char)in->x);
		else
			ox_buf_printf(&b, "%d", (int)in->x);
		ox_buf_printf(&b, ", %d}, /* %d */\n", (int)in->y, i);
	}
	ox_buf_puts(&b, "\t};\n");
	ox_buf_printf(&b, "\tstatic const int32_t ranges[%d] = {", 2 * (p.nranges ? p.nranges : 1));
	for (int i = 0; i < 2 * p.nranges; i++)
		ox_buf_printf(&b, "%s%s0x%x", i ? "," : "", i % 16 ? " " : "\n\t\t", (unsigned)p.ranges[i]);
	ox_buf_puts(&b, p.nranges ? "\n\t};\n" : "0, 0};\n");
	ox_cg_printf(cg, "%s", b.s);
	ox_buf_free(&b);
	ox_cg_line(cg, 1, "int32_t *work = (int32_t *)(void *)%s;", sc);
	ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++)", (long long)m);
	ox_cg_line(cg, 2, "out0[i] = ox_re_full(prog, %d, ranges, in0[i], work);", p.n);
	return 0;
}

int emit_str(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_StringConcat:
		return emit_concat(cg, g, n);
	case OX_OP_StringSplit:
		return emit_split(cg, g, n);
	case OX_OP_StringNormalizer:
		return emit_normalizer(cg, g, n);
	case OX_OP_RegexFullMatch:
		return emit_regex(cg, g, n);
	}
	return ox_error(g, n, "no C emitter for this op");
}
