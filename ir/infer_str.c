/* infer_str.c: shape inference for the string ops (StringConcat,
 * StringSplit, StringNormalizer, RegexFullMatch) and the regex compiler.
 *
 * A string element is a pointer to NUL-terminated UTF-8 in the generated
 * code; bytes an op creates go into its scratch output (ox_ir_add_scratch),
 * g->string_capacity bytes per string, NUL included, and a result that would
 * not fit makes the run fail with a capacity error (never a truncation).
 * Outputs whose extent depends on the data (StringSplit's Y, a
 * StringNormalizer with stopwords) are bounded dyn values.
 * RegexFullMatch's pattern (RE2 syntax) is compiled here, once, into a
 * Thompson-NFA program (ox_re_prog) that emit_str.c prints as a table for
 * templates/regex.c; syntax outside the supported core is an error here.
 */
#include "ir.h"
#include "family.h"
#include <stdlib.h>
#include <string.h>

/* The regex program (ox_re_prog) is declared in ir/family.h. */

#define RE_MAXCODE 20000 /* instructions: bounds the matcher's work arrays */
#define RE_MAXDEPTH 200  /* nesting of groups */
#define RE_MAXREP 1000   /* RE2's limit on {m,n} */

/* The compiler state. Jump operands are relative (target - pc) while the
 * program is built, so a fragment can be copied (counted repetition) or have
 * an instruction inserted at its start without patching; ox_ir_regex makes
 * them absolute at the end. */
typedef struct {
	const char *s;     /* rest of the pattern */
	ox_re_inst *code; int n, cap;
	int32_t *rg; int nrg, caprg;
	int depth;
	const char *err;   /* first error, static text */
} re_c;

static int re_fail(re_c *c, const char *msg)
{
	if (!c->err)
		c->err = msg;
	return -1;
}

static int re_emit(re_c *c, int op, int32_t x, int32_t y)
{
	if (c->n >= RE_MAXCODE)
		return re_fail(c, "the pattern compiles to too many instructions");
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->code = realloc(c->code, (size_t)c->cap * sizeof *c->code);
		if (!c->code)
			ox_die("out of memory");
	}
	c->code[c->n] = (ox_re_inst){op, x, y};
	return c->n++;
}

/* insert one instruction at pc `at` (the start of the current fragment) */
static int re_insert(re_c *c, int at, int op, int32_t x, int32_t y)
{
	if (re_emit(c, op, 0, 0) < 0)
		return -1;
	memmove(c->code + at + 1, c->code + at, (size_t)(c->n - 1 - at) * sizeof *c->code);
	c->code[at] = (ox_re_inst){op, x, y};
	return 0;
}

/* one UTF-8 code point from *s (an invalid byte stands for itself) */
static int32_t re_utf8(const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	int32_t c = p[0];
	int len = 1;
	if (c >= 0xf0 && c < 0xf8)
		len = 4, c &= 7;
	else if (c >= 0xe0)
		len = c < 0xf0 ? 3 : 1, c = c < 0xf0 ? c & 15 : c;
	else if (c >= 0xc0)
		len = 2, c &= 31;
	for (int k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80) {
			len = 1, c = p[0];
			break;
		}
		c = c << 6 | (p[k] & 63);
	}
	*s += len;
	return c;
}

/* ---- character classes: a set of (lo, hi) ranges ---- */
typedef struct { int32_t r[512]; int n; } re_set; /* n ints: n/2 pairs */

static int set_add(re_c *c, re_set *st, int32_t lo, int32_t hi)
{
	if (st->n + 2 > (int)(sizeof st->r / sizeof st->r[0]))
		return re_fail(c, "character class too complex");
	st->r[st->n++] = lo;
	st->r[st->n++] = hi;
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* sort and merge into disjoint ascending ranges, complement if neg */
static void set_norm(re_set *st, int neg)
{
	int m = 0;
	qsort(st->r, (size_t)st->n / 2, 2 * sizeof st->r[0], cmp_pair);
	for (int i = 0; i < st->n; i += 2) {
		if (m && st->r[i] <= st->r[m - 1] + 1) {
			if (st->r[i + 1] > st->r[m - 1])
				st->r[m - 1] = st->r[i + 1];
		} else {
			st->r[m++] = st->r[i];
			st->r[m++] = st->r[i + 1];
		}
	}
	st->n = m;
	if (!neg)
		return;
	re_set o = {.n = 0};
	int32_t next = 0;
	for (int i = 0; i < m; i += 2) {
		if (st->r[i] > next)
			o.r[o.n++] = next, o.r[o.n++] = st->r[i] - 1;
		next = st->r[i + 1] + 1;
	}
	if (next <= 0x10ffff)
		o.r[o.n++] = next, o.r[o.n++] = 0x10ffff;
	*st = o;
}

/* \d \w \s and their negations (RE2: ASCII only); 0 if k is none of them */
static int perl_class(re_c *c, re_set *st, char k)
{
	re_set t = {.n = 0};
	switch (k == 'D' || k == 'W' || k == 'S' ? k + 32 : k) {
	case 'd':
		set_add(c, &t, '0', '9');
		break;
	case 'w':
		set_add(c, &t, '0', '9'), set_add(c, &t, 'A', 'Z'), set_add(c, &t, 'a', 'z');
		set_add(c, &t, '_', '_');
		break;
	case 's':
		set_add(c, &t, '\t', '\n'), set_add(c, &t, '\f', '\r'), set_add(c, &t, ' ', ' ');
		break;
	default:
		return 0;
	}
	set_norm(&t, k >= 'A' && k <= 'Z');
	for (int i = 0; i < t.n; i += 2)
		set_add(c, st, t.r[i], t.r[i + 1]);
	return 1;
}

static int hexval(char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	if ((h | 32) >= 'a' && (h | 32) <= 'f')
		return (h | 32) - 'a' + 10;
	return -1;
}

/* the code point of a one-character escape after '\' (c->s is past it);
 * -1 with c->err set when it is not one */
static int32_t re_escape_char(re_c *c, char k)
{
	switch (k) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'a': return 7;
	case 'x': {
		int32_t v = 0;
		if (*c->s == '{') {
			int nd = 0;
			for (c->s++; hexval(*c->s) >= 0 && nd < 8; c->s++, nd++)
				v = v * 16 + hexval(*c->s);
			if (*c->s != '}' || !nd || v > 0x10ffff)
				return re_fail(c, "bad \\x{...} escape");
			c->s++;
			return v;
		}
		if (hexval(c->s[0]) < 0 || hexval(c->s[1]) < 0)
			return re_fail(c, "bad \\x escape");
		v = hexval(c->s[0]) * 16 + hexval(c->s[1]);
		c->s += 2;
		return v;
	}
	case '0': {
		int32_t v = 0;
		for (int nd = 0; nd < 2 && *c->s >= '0' && *c->s <= '7'; nd++)
			v = v * 8 + (*c->s++ - '0');
		return v;
	}
	}
	if (k >= '1' && k <= '9')
		return re_fail(c, "backreferences are not supported (RE2 has none)");
	if (k && !((k >= '0' && k <= '9') || (k >= 'A' && k <= 'Z') || (k >= 'a' && k <= 'z') || k == '_') &&
	    (unsigned char)k < 0x80)
		return (unsigned char)k; /* escaped punctuation */
	if (!k)
		return re_fail(c, "trailing backslash");
	return re_fail(c, "unsupported escape (\\p, \\Q, \\C, \\z-like and flag escapes are not supported)");
}

static int emit_class(re_c *c, re_set *st)
{
	if (c->nrg + st->n > c->caprg) {
		c->caprg = 2 * (c->nrg + st->n) + 64;
		c->rg = realloc(c->rg, (size_t)c->caprg * sizeof *c->rg);
		if (!c->rg)
			ox_die("out of memory");
	}
	memcpy(c->rg + c->nrg, st->r, (size_t)st->n * sizeof *st->r);
	int at = re_emit(c, OX_RE_CLASS, c->nrg / 2, st->n / 2);
	c->nrg += st->n;
	return at < 0 ? -1 : 0;
}

/* [...] with c->s just past '[' */
static int re_class(re_c *c)
{
	re_set st = {.n = 0};
	int neg = *c->s == '^', first = 1;
	if (neg)
		c->s++;
	while (*c->s && (*c->s != ']' || first)) {
		first = 0;
		if (c->s[0] == '[' && c->s[1] == ':')
			return re_fail(c, "POSIX classes [:name:] are not supported");
		int32_t lo;
		if (*c->s == '\\') {
			char k = c->s[1];
			c->s += 2;
			if (perl_class(c, &st, k)) {
				if (c->s[0] == '-' && c->s[1] && c->s[1] != ']')
					return re_fail(c, "bad character class range");
				continue;
			}
			if (k == 'b' || k == 'B')
				return re_fail(c, "\\b inside a class is not supported");
			if ((lo = re_escape_char(c, k)) < 0)
				return -1;
		} else {
			lo = re_utf8(&c->s);
		}
		int32_t hi = lo;
		if (c->s[0] == '-' && c->s[1] && c->s[1] != ']') {
			c->s++;
			if (*c->s == '\\') {
				char k = c->s[1];
				c->s += 2;
				if (strchr("dDwWsSbB", k) || (hi = re_escape_char(c, k)) < 0)
					return re_fail(c, "bad range end in a character class");
			} else {
				hi = re_utf8(&c->s);
			}
			if (hi < lo)
				return re_fail(c, "bad character class range");
		}
		if (set_add(c, &st, lo, hi))
			return -1;
	}
	if (*c->s != ']')
		return re_fail(c, "missing ] in a character class");
	c->s++;
	set_norm(&st, neg);
	return emit_class(c, &st); /* an empty set ([^\x00-\x{10FFFF}]) matches nothing */
}

static int re_alt(re_c *c);

/* one atom; 1 if it was an assertion (not repeatable), 0, or -1 */
static int re_atom(re_c *c)
{
	char ch = *c->s;
	switch (ch) {
	case '(': {
		c->s++;
		if (*c->s == '?') {
			if (c->s[1] == ':') {
				c->s += 2;
			} else if ((c->s[1] == 'P' && c->s[2] == '<') || c->s[1] == '<') {
				/* a named group: only its capture differs, and nothing is captured */
				const char *e = strchr(c->s, '>');
				if (!e)
					return re_fail(c, "bad named group");
				c->s = e + 1;
			} else {
				return re_fail(c, "flags and special groups (?...) are not supported");
			}
		}
		if (++c->depth > RE_MAXDEPTH)
			return re_fail(c, "groups nested too deeply");
		if (re_alt(c))
			return -1;
		c->depth--;
		if (*c->s != ')')
			return re_fail(c, "missing )");
		c->s++;
		return 0;
	}
	case '[':
		c->s++;
		return re_class(c);
	case '.':
		c->s++;
		return re_emit(c, OX_RE_ANYNL, 0, 0) < 0 ? -1 : 0;
	case '^':
		c->s++;
		return re_emit(c, OX_RE_BOT, 0, 0) < 0 ? -1 : 1;
	case '$':
		c->s++;
		return re_emit(c, OX_RE_EOT, 0, 0) < 0 ? -1 : 1;
	case '*': case '+': case '?':
		return re_fail(c, "missing argument to a repetition operator");
	case ')':
		return re_fail(c, "unexpected )");
	case '\\': {
		char k = c->s[1];
		c->s += 2;
		re_set st = {.n = 0};
		if (perl_class(c, &st, k)) {
			set_norm(&st, 0);
			return emit_class(c, &st);
		}
		if (k == 'b' || k == 'B')
			return re_emit(c, k == 'b' ? OX_RE_WORDB : OX_RE_NWORDB, 0, 0) < 0 ? -1 : 1;
		if (k == 'A')
			return re_emit(c, OX_RE_BOT, 0, 0) < 0 ? -1 : 1;
		if (k == 'z')
			return re_emit(c, OX_RE_EOT, 0, 0) < 0 ? -1 : 1;
		int32_t v = re_escape_char(c, k);
		if (v < 0)
			return -1;
		return re_emit(c, OX_RE_CHAR, v, 0) < 0 ? -1 : 0;
	}
	}
	int32_t v = re_utf8(&c->s);
	return re_emit(c, OX_RE_CHAR, v, 0) < 0 ? -1 : 0;
}

/* {m}, {m,}, {m,n} at c->s: 1 and the bounds (max -1: none), or 0 when the
 * text is not a repetition (RE2 then reads '{' as a literal) */
static int re_braces(const char *s, int *mn, int *mx, const char **end)
{
	long a = 0, b;
	if (*s++ != '{' || *s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9' && a <= RE_MAXREP)
		a = a * 10 + (*s++ - '0');
	b = a;
	if (*s == ',') {
		s++;
		if (*s == '}') {
			b = -1;
		} else {
			if (*s < '0' || *s > '9')
				return 0;
			for (b = 0; *s >= '0' && *s <= '9' && b <= RE_MAXREP;)
				b = b * 10 + (*s++ - '0');
		}
	}
	if (*s != '}')
		return 0;
	*mn = (int)a, *mx = (int)b, *end = s + 1;
	return 1;
}

/* apply the quantifier at c->s (if any) to the fragment [at, c->n) */
static int re_repeat(re_c *c, int at)
{
	for (;;) {
		int mn, mx, len = c->n - at;
		const char *end;
		char q = *c->s;
		if (q == '*' || q == '+' || q == '?') {
			c->s++;
			mn = q == '+', mx = q == '?' ? 1 : -1;
		} else if (re_braces(c->s, &mn, &mx, &end)) {
			c->s = end;
			if (mn > RE_MAXREP || mx > RE_MAXREP || (mx >= 0 && mx < mn))
				return re_fail(c, "bad repetition count (RE2 allows at most 1000)");
		} else {
			return 0;
		}
		if (*c->s == '?') /* non-greedy: the same language, and only the match counts */
			c->s++;
		if (*c->s == '*' || *c->s == '+' || *c->s == '?')
			return re_fail(c, "bad repetition operator (double quantifier)");
		if (q == '*') {
			/* L: SPLIT L+1, out; frag; JMP L */
			if (re_insert(c, at, OX_RE_SPLIT, 1, len + 2) || re_emit(c, OX_RE_JMP, -(len + 1), 0) < 0)
				return -1;
		} else if (q == '+') {
			if (re_emit(c, OX_RE_SPLIT, -len, 1) < 0)
				return -1;
		} else if (q == '?') {
			if (re_insert(c, at, OX_RE_SPLIT, 1, len + 1))
				return -1;
		} else {
			/* frag{m,n}: m copies, then n-m optional ones (or a star) */
			ox_re_inst *frag = malloc((size_t)(len ? len : 1) * sizeof *frag);
			if (!frag)
				ox_die("out of memory");
			memcpy(frag, c->code + at, (size_t)len * sizeof *frag);
			c->n = at;
			int nopt = mx < 0 ? 1 : mx - mn, rc = 0;
			int64_t total = (int64_t)len * (mn + nopt) + 2 * nopt;
			if (total + c->n > RE_MAXCODE) {
				free(frag);
				return re_fail(c, "the pattern compiles to too many instructions");
			}
			for (int k = 0; k < mn; k++)
				for (int i = 0; i < len; i++)
					re_emit(c, frag[i].op, frag[i].x, frag[i].y);
			if (mx < 0) {
				int l = c->n;
				re_emit(c, OX_RE_SPLIT, 1, len + 2);
				for (int i = 0; i < len; i++)
					re_emit(c, frag[i].op, frag[i].x, frag[i].y);
				re_emit(c, OX_RE_JMP, l - c->n, 0);
			} else {
				/* each optional copy may skip to the very end */
				int start = c->n;
				int64_t endpc = start + (int64_t)nopt * (len + 1);
				for (int k = 0; k < nopt; k++) {
					int pc = c->n;
					re_emit(c, OX_RE_SPLIT, 1, (int32_t)(endpc - pc));
					for (int i = 0; i < len; i++)
						re_emit(c, frag[i].op, frag[i].x, frag[i].y);
				}
			}
			free(frag);
			if (c->err)
				rc = -1;
			if (rc)
				return rc;
		}
	}
}

/* a concatenation, up to '|' or ')' or the end */
static int re_cat(re_c *c)
{
	while (*c->s && *c->s != '|' && *c->s != ')') {
		int at = c->n, rc = re_atom(c);
		if (rc < 0)
			return -1;
		/* a repeated assertion (^*) is accepted as RE2 does: the loop
		 * over an empty-width fragment is harmless in the NFA */
		if (re_repeat(c, at))
			return -1;
	}
	return 0;
}

/* a|b|...: SPLIT +1, L2; a; JMP end; L2: (b|...) */
static int re_alt(re_c *c)
{
	int at = c->n;
	if (re_cat(c))
		return -1;
	if (*c->s != '|')
		return 0;
	c->s++;
	int len = c->n - at;
	if (re_insert(c, at, OX_RE_SPLIT, 1, len + 2))
		return -1;
	int j = re_emit(c, OX_RE_JMP, 0, 0);
	if (j < 0 || re_alt(c))
		return -1;
	c->code[j].x = c->n - j;
	return 0;
}

/* Compile n's pattern attribute (arena memory in *p); -1 and a message when
 * it is not valid or uses unsupported syntax. */
int ox_ir_regex(ox_graph *g, const ox_node *n, ox_re_prog *p)
{
	const ox_attr *a = ox_attr_get(n, "pattern");
	if (!a || a->type != OX_AT_STRING)
		return ox_error(g, n, "the pattern attribute is required");
	if (strlen(a->s) != a->slen)
		return ox_error(g, n, "the pattern contains a NUL byte");
	re_c c = {.s = a->s};
	int rc = re_alt(&c);
	if (!rc && *c.s)
		rc = re_fail(&c, "unexpected )");
	if (!rc)
		re_emit(&c, OX_RE_MATCH, 0, 0);
	if (c.err) {
		free(c.code), free(c.rg);
		return ox_error(g, n, "pattern \"%s\": %s (at offset %d)", a->s, c.err, (int)(c.s - a->s));
	}
	p->n = c.n;
	p->code = ox_ir_alloc(g, (size_t)c.n * sizeof *p->code);
	for (int i = 0; i < c.n; i++) {
		p->code[i] = c.code[i];
		if (c.code[i].op == OX_RE_JMP)
			p->code[i].x += i;
		if (c.code[i].op == OX_RE_SPLIT)
			p->code[i].x += i, p->code[i].y += i;
	}
	p->nranges = c.nrg / 2;
	p->ranges = ox_ir_alloc(g, (size_t)(c.nrg + 2) * sizeof *p->ranges);
	if (c.nrg)
		memcpy(p->ranges, c.rg, (size_t)c.nrg * sizeof *p->ranges);
	free(c.code), free(c.rg);
	return 0;
}

/* ---- shapes ---- */

/* bytes one string element may take, its NUL included */
int64_t ox_str_capacity(const ox_graph *g)
{
	return g->string_capacity > 1 ? g->string_capacity : 1;
}

/* Most tokens StringSplit can produce from one input string that fits the
 * capacity (so a count above it is a capacity error): whitespace-separated
 * tokens need two bytes each; a delimiter of d bytes makes at most
 * (len / d) + 1 tokens; maxsplit m at most m + 1. */
int64_t ox_str_split_bound(ox_graph *g, const ox_node *n)
{
	const char *d = ox_attr_str(n, "delimiter", "");
	int64_t cap = ox_str_capacity(g), len = cap - 1;
	int64_t b = d[0] ? len / (int64_t)strlen(d) + 1 : (len + 1) / 2;
	const ox_attr *ms = ox_attr_get(n, "maxsplit");
	if (ms && ms->type == OX_AT_INT && ms->i >= 0 && ms->i + 1 < b)
		b = ms->i + 1;
	return b > 0 ? b : 1;
}

static int need_strings(ox_graph *g, ox_node *n, int k)
{
	ox_value *v = ox_in(g, n, k);
	if (v->dtype != OX_STRING)
		return ox_error(g, n, "input %d has dtype %s, expected string", k, ox_dtype_name(v->dtype));
	return 0;
}

/* the element count of input k, which must be static (scratch is sized by it) */
static int64_t static_numel(ox_graph *g, ox_node *n, const ox_shape *s)
{
	int64_t m = ox_shape_numel(s);
	if (m < 0)
		ox_error(g, n, "string ops need static shapes (fix them with --shape or --dim)");
	return m;
}

static int infer_concat(ox_graph *g, ox_node *n)
{
	if (need_strings(g, n, 0) || need_strings(g, n, 1))
		return -1;
	ox_shape s;
	if (ox_broadcast(g, &ox_in(g, n, 0)->shape, &ox_in(g, n, 1)->shape, &s))
		return ox_error(g, n, "the inputs' shapes cannot be broadcast");
	int64_t m = static_numel(g, n, &s);
	if (m < 0)
		return -1;
	ox_set_out(g, n, 0, OX_STRING, &s);
	ox_ir_add_scratch(g, n, m * ox_str_capacity(g));
	return 0;
}

/* Y: X's shape + [bound] with a run-time last extent; Z: int64 counts.
 * Scratch: one capacity per input string holds all its tokens (they and
 * their NULs never take more bytes than the string and its NUL). */
static int infer_split(ox_graph *g, ox_node *n)
{
	if (need_strings(g, n, 0))
		return -1;
	ox_value *x = ox_in(g, n, 0);
	if (x->shape.rank >= OX_MAX_RANK)
		return ox_error(g, n, "input rank %d is too large", x->shape.rank);
	int64_t m = static_numel(g, n, &x->shape);
	if (m < 0)
		return -1;
	ox_shape y = x->shape;
	y.d[y.rank++] = ox_str_split_bound(g, n);
	ox_set_out(g, n, 0, OX_STRING, &y);
	ox_out(g, n, 0)->dyn = y.rank;
	if (n->nout - n->scratch > 1 && ox_out(g, n, 1))
		ox_set_out(g, n, 1, OX_I64, &x->shape);
	ox_ir_add_scratch(g, n, m * ox_str_capacity(g));
	return 0;
}

static int infer_normalizer(ox_graph *g, ox_node *n)
{
	if (need_strings(g, n, 0))
		return -1;
	ox_value *x = ox_in(g, n, 0);
	const char *cc = ox_attr_str(n, "case_change_action", "NONE");
	if (strcmp(cc, "NONE") && strcmp(cc, "LOWER") && strcmp(cc, "UPPER"))
		return ox_error(g, n, "case_change_action '%s' is not NONE, LOWER or UPPER", cc);
	if (!(x->shape.rank == 1 || (x->shape.rank == 2 && x->shape.d[0] == 1)))
		return ox_error(g, n, "the input must have shape [C] or [1, C]");
	int64_t c = static_numel(g, n, &x->shape);
	if (c < 0)
		return -1;
	const ox_attr *sw = ox_attr_get(n, "stopwords");
	int nsw = sw && sw->type == OX_AT_STRINGS ? sw->n : 0;
	ox_shape y = x->shape;
	/* with no stopword and C > 0 nothing is dropped: a static shape;
	 * otherwise up to C kept, or one "" when all are dropped */
	y.d[y.rank - 1] = c > 0 ? c : 1;
	ox_set_out(g, n, 0, OX_STRING, &y);
	if (nsw || c == 0)
		ox_out(g, n, 0)->dyn = y.rank;
	if (strcmp(cc, "NONE"))
		ox_ir_add_scratch(g, n, c * ox_str_capacity(g));
	return 0;
}

static int infer_regex(ox_graph *g, ox_node *n)
{
	if (need_strings(g, n, 0))
		return -1;
	ox_re_prog p;
	if (ox_ir_regex(g, n, &p))
		return -1;
	ox_set_out(g, n, 0, OX_BOOL, &ox_in(g, n, 0)->shape);
	ox_ir_add_scratch(g, n, 4 * (int64_t)p.n * (int64_t)sizeof(int32_t));
	return 0;
}

int infer_str(ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_StringConcat:
		return infer_concat(g, n);
	case OX_OP_StringSplit:
		return infer_split(g, n);
	case OX_OP_StringNormalizer:
		return infer_normalizer(g, n);
	case OX_OP_RegexFullMatch:
		return infer_regex(g, n);
	}
	return ox_error(g, n, "not a string op");
}
