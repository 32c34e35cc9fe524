/* parse.c: read the IR text form (docs/ir.md) back into a graph.
 *
 * A hand-written recursive-descent reader over the text, one statement per
 * line (attribute lists and nested graph{...} bodies may span lines). Value
 * ids are kept: %7 in the text is value 7 of the graph (ids never mentioned
 * become unnamed, unused values), so dump(parse(dump(g))) == dump(g). Every
 * error is reported once, as "path: line N: message", and the partly built
 * graph (with all its subgraphs) is freed before NULL is returned.
 */
#include "ir.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ID (1 << 22) /* a sanity bound on %ids (values up to it are made) */

typedef struct {
	const char *s; /* cursor */
	int line;
	ox_graph *root; /* owns every subgraph made (freed with it on an error) */
	int failed;
} P;

/* per-graph state while its body is read */
typedef struct {
	ox_graph *g;
	char *def;     /* value id defined by an input/const/outer line or a node */
	int *useline;  /* line of the first use, 0 if unused */
	int cap;
	ox_id *ins; int nins, capins;
	ox_id *outs; const char **onames; int nouts, capouts;
} G;

static int parse_body(P *p, ox_graph *g);

static void *xgrow(void *ptr, int *cap, int need, size_t elsz)
{
	if (need <= *cap)
		return ptr;
	int c = *cap ? *cap : 8;
	while (c < need)
		c *= 2;
	ptr = realloc(ptr, (size_t)c * elsz);
	if (!ptr)
		ox_die("out of memory");
	*cap = c;
	return ptr;
}

__attribute__((format(printf, 2, 3)))
static int fail(P *p, const char *fmt, ...)
{
	if (p->failed)
		return -1;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	ox_error(p->root, NULL, "line %d: %s", p->line, buf);
	p->failed = 1;
	return -1;
}

/* ---- lexing ---- */
static int is_word(int c)
{
	return c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int is_symch(int c) /* in symbol names: "?x:0#3" is an ox_dim_unknown name */
{
	return is_word(c) || c == '?' || c == '#' || c == ':';
}

static void sp(P *p) /* blanks within a line */
{
	while (*p->s == ' ' || *p->s == '\t' || *p->s == '\r')
		p->s++;
}

static void ws(P *p) /* blanks and newlines, inside brackets and braces */
{
	for (;;) {
		sp(p);
		if (*p->s != '\n')
			return;
		p->s++;
		p->line++;
	}
}

static int accept(P *p, char c)
{
	ws(p);
	if (*p->s != c)
		return 0;
	p->s++;
	return 1;
}

static int expect(P *p, char c)
{
	if (accept(p, c))
		return 0;
	if (!*p->s)
		return fail(p, "expected '%c', found end of text", c);
	return fail(p, "expected '%c', found '%c'", c, *p->s);
}

/* A run of characters ok() accepts into buf; 0 if there is none here. */
static int chars(P *p, char *buf, size_t cap, int (*ok)(int))
{
	size_t n = 0;
	while (ok((unsigned char)*p->s)) {
		if (n + 1 == cap) {
			fail(p, "name longer than %zu characters", cap - 1);
			break;
		}
		buf[n++] = *p->s++;
	}
	buf[n] = 0;
	return n > 0;
}

/* A bare word [A-Za-z0-9_.]+ */
static int word(P *p, char *buf, size_t cap)
{
	return chars(p, buf, cap, is_word);
}

/* Does the text continue with keyword kw (not followed by a word char)? */
static int keyword(P *p, const char *kw)
{
	size_t n = strlen(kw);
	if (strncmp(p->s, kw, n) || is_word((unsigned char)p->s[n]))
		return 0;
	p->s += n;
	return 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A quoted string with the escapes put_str writes; arena-allocated, NUL
 * terminated, its length (it may hold NULs) in *len. */
static int string(P *p, const char **out, size_t *len)
{
	sp(p);
	if (*p->s != '"')
		return fail(p, "expected a string");
	const char *q = ++p->s;
	size_t n = 0;
	for (; *q != '"'; q++, n++) { /* measure; the escapes are checked below */
		if (*q == '\\' && q[1] == 'x' && q[2] && q[3])
			q += 3;
		else if (*q == '\\' && q[1] && q[1] != '\n')
			q++;
		else if (!*q || *q == '\n' || *q == '\\')
			return fail(p, "unterminated string");
	}
	char *buf = ox_ir_alloc(p->root, n + 1);
	for (n = 0; *p->s != '"'; n++) {
		char c = *p->s++;
		if (c == '\\') {
			c = *p->s++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '"': case '\\': break;
			case 'x': {
				int hi = hexval((unsigned char)p->s[0]), lo = hi < 0 ? -1 : hexval((unsigned char)p->s[1]);
				if (lo < 0)
					return fail(p, "bad \\x escape in string");
				c = (char)(hi * 16 + lo);
				p->s += 2;
				break;
			}
			default:
				return fail(p, "unknown escape '\\%c' in string", c);
			}
		}
		buf[n] = c;
	}
	p->s++;
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

/* A number: *isf tells whether it is spelled as a float (has '.', an
 * exponent, inf or nan). Returns 1, 0 if no number starts here, -1 on error. */
static int number(P *p, int *isf, int64_t *iv, double *dv)
{
	const char *s = p->s;
	char c = *s;
	if (!(c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') ||
	      !strncmp(s, "inf", 3) || !strncmp(s, "nan", 3)))
		return 0;
	char *e1, *e2;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { /* hex: integers only (bytes[...]) */
		errno = 0;
		long long i = strtoll(s, &e1, 16);
		if (e1 == s + 2 || errno == ERANGE || is_symch((unsigned char)*e1))
			return fail(p, "malformed hex number");
		*isf = 0;
		*iv = i;
		*dv = (double)i;
		p->s = e1;
		return 1;
	}
	double d = strtod(s, &e1);
	if (e1 == s)
		return 0;
	errno = 0;
	long long i = strtoll(s, &e2, 10);
	if (e2 == e1) {
		if (errno == ERANGE)
			return fail(p, "integer out of range");
		*isf = 0;
		*iv = i;
		*dv = (double)i;
	} else {
		*isf = 1;
		*dv = d;
		*iv = 0;
	}
	if (is_symch((unsigned char)*e1))
		return fail(p, "malformed number");
	p->s = e1;
	return 1;
}

static int integer(P *p, int64_t *v)
{
	int isf;
	double d;
	ws(p);
	int r = number(p, &isf, v, &d);
	if (r < 0)
		return -1;
	if (!r || isf)
		return fail(p, "expected an integer");
	return 0;
}

/* ---- values ---- */
/* Make sure value id exists in g (ids are kept from the text). */
static int ensure(P *p, G *st, int64_t id)
{
	if (id < 0 || id >= MAX_ID)
		return fail(p, "value id %%%lld out of range", (long long)id);
	while (st->g->nvals <= id)
		ox_ir_add_value(st->g, "", OX_V_INTERNAL);
	if (id >= st->cap) {
		int old = st->cap;
		st->def = xgrow(st->def, &st->cap, (int)id + 1, 1);
		st->useline = realloc(st->useline, (size_t)st->cap * sizeof *st->useline);
		if (!st->useline)
			ox_die("out of memory");
		memset(st->def + old, 0, (size_t)(st->cap - old));
		memset(st->useline + old, 0, (size_t)(st->cap - old) * sizeof *st->useline);
	}
	return 0;
}

/* "%ID" or "_" (-1); with use, remember the line of the first use. */
static int value_ref(P *p, G *st, ox_id *id, int use)
{
	ws(p);
	if (*p->s == '_' && !is_word((unsigned char)p->s[1])) {
		p->s++;
		*id = -1;
		return 0;
	}
	if (*p->s != '%')
		return fail(p, "expected a value (%%N or _)");
	p->s++;
	if (!(*p->s >= '0' && *p->s <= '9'))
		return fail(p, "expected a value id after '%%'");
	int64_t v = 0;
	while (*p->s >= '0' && *p->s <= '9' && v < MAX_ID)
		v = v * 10 + (*p->s++ - '0');
	if (ensure(p, st, v))
		return -1;
	if (use && !st->useline[v])
		st->useline[v] = p->line;
	*id = (ox_id)v;
	return 0;
}

/* how: 1 by an input/const/outer line, 2 as a node output */
static int define(P *p, G *st, ox_id id, int how)
{
	if (st->def[id])
		return fail(p, "value %%%d defined twice", id);
	st->def[id] = (char)how;
	return 0;
}

/* ---- dims ---- */
static int dim_minmax(P *p, ox_graph *g, ox_dim *d);

/* ox_dim_op, refusing constant arithmetic that would overflow an int64 */
static int dim_op(P *p, ox_graph *g, int op, ox_dim *d, ox_dim b)
{
	ox_dim a = *d;
	if (a >= 0 && b >= 0 &&
	    (((op == OX_DE_ADD || op == OX_DE_CEILDIV) && a > INT64_MAX - b) ||
	     (op == OX_DE_MUL && b && a > INT64_MAX / b)))
		return fail(p, "dim arithmetic overflows");
	*d = ox_dim_op(g, op, a, b);
	return 0;
}

static int dim_atom(P *p, ox_graph *g, ox_dim *d)
{
	sp(p);
	char c = *p->s;
	if (c == '(') {
		p->s++;
		if (dim_minmax(p, g, d))
			return -1;
		sp(p);
		return expect(p, ')');
	}
	if (c >= '0' && c <= '9') {
		int64_t v;
		if (integer(p, &v))
			return -1;
		*d = v;
		return 0;
	}
	if (c == '"') {
		const char *s;
		if (string(p, &s, NULL))
			return -1;
		*d = ox_dim_sym(g, s);
		return 0;
	}
	if (c == '_' || c == '?' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
		char buf[256];
		if (chars(p, buf, sizeof buf, is_symch) && p->failed)
			return -1;
		if (!strcmp(buf, "?"))
			return fail(p, "'?' is not a dim (write a symbol name)");
		if (!strcmp(buf, "max") || !strcmp(buf, "min"))
			return fail(p, "expected a dim, found '%s'", buf);
		*d = ox_dim_sym(g, buf);
		return 0;
	}
	return fail(p, "expected a dim");
}

static int dim_mul(P *p, ox_graph *g, ox_dim *d)
{
	if (dim_atom(p, g, d))
		return -1;
	for (;;) {
		sp(p);
		int op;
		if (p->s[0] == '/' && p->s[1] == '^')
			op = OX_DE_CEILDIV, p->s += 2;
		else if (*p->s == '/')
			op = OX_DE_DIV, p->s++;
		else if (*p->s == '*')
			op = OX_DE_MUL, p->s++;
		else if (*p->s == '%')
			op = OX_DE_MOD, p->s++;
		else
			return 0;
		ox_dim b;
		if (dim_atom(p, g, &b) || dim_op(p, g, op, d, b))
			return -1;
	}
}

static int dim_add(P *p, ox_graph *g, ox_dim *d)
{
	if (dim_mul(p, g, d))
		return -1;
	for (;;) {
		sp(p);
		int op;
		if (*p->s == '+')
			op = OX_DE_ADD;
		else if (*p->s == '-')
			op = OX_DE_SUB;
		else
			return 0;
		p->s++;
		ox_dim b;
		if (dim_mul(p, g, &b) || dim_op(p, g, op, d, b))
			return -1;
	}
}

/* dim := sum (("max" | "min") sum)*, sum := prod (("+"|"-") prod)*,
 * prod := atom (("*" | "/" | "/^" | "%") atom)*; the dump parenthesizes
 * every operation, so precedence only matters for hand-written text */
static int dim_minmax(P *p, ox_graph *g, ox_dim *d)
{
	if (dim_add(p, g, d))
		return -1;
	for (;;) {
		sp(p);
		int op;
		if (keyword(p, "max"))
			op = OX_DE_MAX;
		else if (keyword(p, "min"))
			op = OX_DE_MIN;
		else
			return 0;
		ox_dim b;
		if (dim_add(p, g, &b) || dim_op(p, g, op, d, b))
			return -1;
	}
}

static int shape(P *p, ox_graph *g, ox_shape *s)
{
	if (expect(p, '['))
		return -1;
	s->rank = 0;
	if (accept(p, ']'))
		return 0;
	do {
		if (s->rank == OX_MAX_RANK)
			return fail(p, "more than %d dims", OX_MAX_RANK);
		if (dim_minmax(p, g, &s->d[s->rank++]))
			return -1;
	} while (accept(p, ','));
	return expect(p, ']');
}

static int dtype(P *p, int *dt)
{
	char buf[32];
	sp(p);
	if (!word(p, buf, sizeof buf))
		return fail(p, "expected a dtype");
	*dt = ox_dtype_from_name(buf);
	if (*dt < 0)
		return fail(p, "unknown dtype '%s'", buf);
	return 0;
}

/* Optional ":dtype[dims]" or ":dtype?" after a value id. */
static int value_type(P *p, ox_graph *g, ox_value *v)
{
	if (*p->s != ':')
		return 0;
	p->s++;
	if (dtype(p, &v->dtype))
		return -1;
	if (*p->s == '?') {
		p->s++;
		v->has_shape = 0;
		return 0;
	}
	if (*p->s != '[')
		return fail(p, "expected '[' or '?' after the dtype");
	v->has_shape = 1;
	if (shape(p, g, &v->shape))
		return -1;
	if (*p->s != '@')
		return 0;
	/* a layout: @name(p0,p1,...) */
	char buf[32];
	p->s++;
	if (!word(p, buf, sizeof buf))
		return fail(p, "expected a layout name after '@'");
	int l = 1;
	while (l < OX_NLAYOUTS && strcmp(ox_layout_names[l], buf))
		l++;
	if (l == OX_NLAYOUTS)
		return fail(p, "unknown layout '%s'", buf);
	v->layout = l;
	if (expect(p, '('))
		return -1;
	int np = 0;
	do {
		int64_t x;
		if (integer(p, &x))
			return -1;
		if (np == 3 || x < 0 || x > 1024)
			return fail(p, "bad layout parameters");
		v->lp[np++] = (int)x;
	} while (accept(p, ','));
	return expect(p, ')');
}

/* ---- tensor data ---- */
static int int_range(int dt, int64_t v)
{
	switch (dt) {
	case OX_BOOL: return v == 0 || v == 1;
	case OX_U8: return v >= 0 && v <= UINT8_MAX;
	case OX_I8: return v >= INT8_MIN && v <= INT8_MAX;
	case OX_U16: return v >= 0 && v <= UINT16_MAX;
	case OX_I16: return v >= INT16_MIN && v <= INT16_MAX;
	case OX_U32: return v >= 0 && v <= UINT32_MAX;
	case OX_I32: return v >= INT32_MIN && v <= INT32_MAX;
	}
	return 1;
}

static int numeric_dtype(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16 ||
	       ox_dtype_is_int(dt) || dt == OX_BOOL;
}

#define MAX_CONST_BYTES ((int64_t)1 << 36) /* zeros made for "<N bytes>": a sanity bound */

/* A tensor of dtype dt and constant shape s, its data read from
 * "[v, ...]", "bytes[0x.., ...]", "<N bytes>" or "<N strings>". The size
 * is checked before anything is allocated: a typo in a dim must not ask
 * for terabytes. */
static int tensor_data(P *p, ox_graph *g, int dt, const ox_shape *s, ox_tensor **out)
{
	int64_t n = 1;
	for (int k = 0; k < s->rank; k++) {
		if (s->d[k] && n > INT64_MAX / 16 / s->d[k])
			return fail(p, "a constant with the dims of this shape is too large");
		n *= s->d[k];
	}
	int64_t bytes = n * (int64_t)ox_dtype_size(dt);
	ws(p);
	if (*p->s == '<') {
		if (bytes > MAX_CONST_BYTES)
			return fail(p, "a constant of %lld bytes is too large", (long long)bytes);
	} else if (n > (int64_t)strlen(p->s)) { /* every value takes a character at least */
		return fail(p, "the shape has %lld elements, more than the text can hold", (long long)n);
	}
	ox_tensor *t = *out = ox_ir_new_tensor(g, dt, s);
	if (*p->s == '<') {
		p->s++;
		int64_t m;
		char unit[16];
		if (integer(p, &m))
			return -1;
		sp(p);
		word(p, unit, sizeof unit);
		if (expect(p, '>'))
			return -1;
		if (t->dtype == OX_STRING) {
			if (strcmp(unit, "strings") || m != n)
				return fail(p, "expected <%lld strings> for this string tensor", (long long)n);
			for (int64_t k = 0; k < n; k++)
				t->strs[k] = "";
			return 0;
		}
		if (strcmp(unit, "bytes") || m != (int64_t)t->nbytes)
			return fail(p, "expected <%zu bytes> for a %s tensor of %lld elements", t->nbytes,
				    ox_dtype_name(t->dtype), (long long)n);
		return 0;
	}
	if (keyword(p, "bytes")) {
		if (expect(p, '['))
			return -1;
		size_t k = 0;
		if (!accept(p, ']')) {
			do {
				int64_t b;
				if (integer(p, &b))
					return -1;
				if (b < 0 || b > 255)
					return fail(p, "byte value %lld out of range", (long long)b);
				if (k < t->nbytes)
					((unsigned char *)t->data)[k] = (unsigned char)b;
				k++;
			} while (accept(p, ','));
			if (expect(p, ']'))
				return -1;
		}
		if (k != t->nbytes)
			return fail(p, "%zu bytes given, the tensor has %zu", k, t->nbytes);
		return 0;
	}
	if (expect(p, '['))
		return -1;
	if (t->dtype != OX_STRING && !numeric_dtype(t->dtype))
		return fail(p, "%s data must be written as bytes[...] or <N bytes>", ox_dtype_name(t->dtype));
	int64_t k = 0;
	if (!accept(p, ']')) {
		do {
			ws(p);
			if (k >= n)
				return fail(p, "more than %lld values for a tensor of that shape", (long long)n);
			if (t->dtype == OX_STRING) {
				if (string(p, &t->strs[k], NULL))
					return -1;
			} else if (t->dtype == OX_U64) {
				char *e;
				errno = 0;
				unsigned long long u = strtoull(p->s, &e, 10);
				if (e == p->s || *p->s == '-' || errno == ERANGE || is_symch((unsigned char)*e))
					return fail(p, "expected a u64 value");
				p->s = e;
				uint64_t x = u;
				memcpy((unsigned char *)t->data + k * 8, &x, 8);
			} else {
				int isf, r;
				int64_t iv;
				double dv;
				if ((r = number(p, &isf, &iv, &dv)) <= 0)
					return r < 0 ? -1 : fail(p, "expected a number");
				if (ox_dtype_is_float(t->dtype)) {
					ox_tensor_set_f64(t, k, dv);
				} else {
					if (isf || !int_range(t->dtype, iv))
						return fail(p, "value out of range for %s", ox_dtype_name(t->dtype));
					ox_tensor_set_i64(t, k, iv);
				}
			}
			k++;
		} while (accept(p, ','));
		if (expect(p, ']'))
			return -1;
	}
	if (k != n)
		return fail(p, "%lld values given, the shape has %lld elements", (long long)k, (long long)n);
	return 0;
}

/* "tensor DTYPE[dims] DATA" (after the keyword); dims must be constants. */
static int tensor(P *p, ox_graph *g, ox_tensor **out)
{
	int dt;
	ox_shape s;
	if (dtype(p, &dt))
		return -1;
	if (*p->s != '[')
		return fail(p, "expected '[' after the tensor dtype");
	if (shape(p, g, &s))
		return -1;
	if (!ox_shape_is_const(&s))
		return fail(p, "a tensor needs constant dims");
	return tensor_data(p, g, dt, &s, out);
}

/* ---- attributes ---- */
static ox_graph *subgraph(P *p, ox_graph *g)
{
	ox_graph *sub = ox_ir_new_sub(g);
	if (expect(p, '{') || parse_body(p, sub))
		return NULL;
	return sub;
}

static int attr_value(P *p, ox_graph *g, ox_attr *a)
{
	ws(p);
	char c = *p->s;
	if (c == '"') {
		a->type = OX_AT_STRING;
		return string(p, &a->s, &a->slen);
	}
	if (c == '<')
		return fail(p, "attribute '%s': this kind of attribute cannot be read back", a->name);
	if (keyword(p, "tensor")) {
		a->type = OX_AT_TENSOR;
		a->n = 1;
		return tensor(p, g, &a->t);
	}
	if (keyword(p, "graph")) {
		a->type = OX_AT_GRAPH;
		a->n = 1;
		a->g = ox_ir_alloc(g, sizeof *a->g);
		return (a->g[0] = subgraph(p, g)) ? 0 : -1;
	}
	static const struct { const char *kw; int type; } empty[] = {
		{"ints", OX_AT_INTS}, {"floats", OX_AT_FLOATS}, {"strings", OX_AT_STRINGS},
		{"tensors", OX_AT_TENSORS}, {"graphs", OX_AT_GRAPHS},
	};
	for (size_t k = 0; k < sizeof empty / sizeof *empty; k++)
		if (keyword(p, empty[k].kw)) {
			a->type = empty[k].type;
			return expect(p, '[') || expect(p, ']') ? -1 : 0;
		}
	if (c != '[') {
		int isf, r;
		double d;
		if ((r = number(p, &isf, &a->i, &d)) <= 0)
			return r < 0 ? -1 : fail(p, "attribute '%s': expected a value", a->name);
		a->type = isf ? OX_AT_FLOAT : OX_AT_INT;
		a->f = (float)d;
		if (isf)
			a->i = 0;
		return 0;
	}

	/* a non-empty list: its first element decides the kind, except that
	 * one float among numbers makes them all floats */
	p->s++;
	ws(p);
	if (*p->s == ']') {
		p->s++;
		a->type = OX_AT_INTS;
		return 0;
	}
	int kind = *p->s == '"' ? OX_AT_STRINGS : !strncmp(p->s, "tensor", 6) ? OX_AT_TENSORS
		   : !strncmp(p->s, "graph", 5) ? OX_AT_GRAPHS : OX_AT_INTS;
	int n = 0, cap = 0, rc = 0, anyf = 0;
	int64_t *iv = NULL;
	double *dv = NULL;
	const char **sv = NULL;
	ox_tensor **tv = NULL;
	ox_graph **gv = NULL;
	do {
		ws(p);
		int oldcap = cap;
		switch (kind) {
		case OX_AT_STRINGS:
			sv = xgrow(sv, &cap, n + 1, sizeof *sv);
			rc = string(p, &sv[n], NULL);
			break;
		case OX_AT_TENSORS:
			tv = xgrow(tv, &cap, n + 1, sizeof *tv);
			rc = keyword(p, "tensor") ? tensor(p, g, &tv[n]) : fail(p, "expected 'tensor'");
			break;
		case OX_AT_GRAPHS:
			gv = xgrow(gv, &cap, n + 1, sizeof *gv);
			rc = !keyword(p, "graph") ? fail(p, "expected 'graph'") : (gv[n] = subgraph(p, g)) ? 0 : -1;
			break;
		default: {
			iv = xgrow(iv, &cap, n + 1, sizeof *iv);
			dv = xgrow(dv, &oldcap, n + 1, sizeof *dv);
			int isf, r = number(p, &isf, &iv[n], &dv[n]);
			rc = r < 0 ? -1 : r == 0 ? fail(p, "attribute '%s': expected a number", a->name) : 0;
			anyf |= r > 0 && isf;
		}
		}
		n++;
	} while (!rc && accept(p, ','));
	if (!rc)
		rc = expect(p, ']');
	if (!rc) {
		a->n = n;
		if (kind == OX_AT_INTS && anyf) {
			a->type = OX_AT_FLOATS;
			a->floats = ox_ir_alloc(g, (size_t)n * sizeof *a->floats);
			for (int k = 0; k < n; k++)
				a->floats[k] = (float)dv[k];
		} else if (kind == OX_AT_INTS) {
			a->type = OX_AT_INTS;
			a->ints = ox_ir_alloc(g, (size_t)n * sizeof *a->ints);
			memcpy(a->ints, iv, (size_t)n * sizeof *a->ints);
		} else if (kind == OX_AT_STRINGS) {
			a->type = OX_AT_STRINGS;
			a->strs = ox_ir_alloc(g, (size_t)n * sizeof *a->strs);
			memcpy(a->strs, sv, (size_t)n * sizeof *a->strs);
		} else if (kind == OX_AT_TENSORS) {
			a->type = OX_AT_TENSORS;
			a->t = ox_ir_alloc(g, (size_t)n * sizeof *a->t);
			for (int k = 0; k < n; k++)
				a->t[k] = *tv[k];
		} else {
			a->type = OX_AT_GRAPHS;
			a->g = ox_ir_alloc(g, (size_t)n * sizeof *a->g);
			memcpy(a->g, gv, (size_t)n * sizeof *a->g);
		}
	}
	free(iv);
	free(dv);
	free(sv);
	free(tv);
	free(gv);
	return rc;
}

/* ---- statements ---- */
/* After a statement: an optional comment, then the end of the line. */
static int end_of_line(P *p)
{
	sp(p);
	if (*p->s == '#')
		while (*p->s && *p->s != '\n')
			p->s++;
	if (*p->s == '\n') {
		p->s++;
		p->line++;
		return 0;
	}
	if (!*p->s)
		return 0;
	return fail(p, "unexpected '%c' at the end of a statement", *p->s);
}

/* OUTS = [domain::]Op[@opset](INS) [{attrs}] [# "name"] */
static int node_stmt(P *p, G *st)
{
	ox_graph *g = st->g;
	ox_id *outs = NULL, *ins = NULL;
	ox_attr *attrs = NULL;
	int nout = 0, capout = 0, nin = 0, capin = 0, nattr = 0, capattr = 0, rc = -1;
	char optype[256], domain[256] = "";
	int opset = g->opset;
	const char *name = "";

	sp(p);
	if (*p->s != '=') {
		do {
			outs = xgrow(outs, &capout, nout + 1, sizeof *outs);
			if (value_ref(p, st, &outs[nout], 0))
				goto out;
			if (outs[nout] >= 0 && (define(p, st, outs[nout], 2) ||
						value_type(p, g, &g->vals[outs[nout]])))
				goto out;
			sp(p);
			if (*p->s == '"') { /* a name, printed when a subgraph captures it */
				if (outs[nout] < 0 || string(p, &g->vals[outs[nout]].name, NULL)) {
					fail(p, "a name after '_'");
					goto out;
				}
				sp(p);
			}
			nout++;
		} while (*p->s == ',' && p->s++);
	}
	sp(p);
	if (*p->s != '=') {
		fail(p, "expected '=' after the node's outputs");
		goto out;
	}
	p->s++;
	sp(p);
	if (!word(p, optype, sizeof optype)) {
		fail(p, "expected an op type");
		goto out;
	}
	if (p->s[0] == ':' && p->s[1] == ':') {
		p->s += 2;
		strcpy(domain, optype);
		if (!word(p, optype, sizeof optype)) {
			fail(p, "expected an op type after '%s::'", domain);
			goto out;
		}
	}
	if (*p->s == '@') {
		int64_t v;
		p->s++;
		if (integer(p, &v))
			goto out;
		opset = (int)v;
	}
	if (expect(p, '('))
		goto out;
	if (!accept(p, ')')) {
		do {
			ins = xgrow(ins, &capin, nin + 1, sizeof *ins);
			if (value_ref(p, st, &ins[nin++], 1))
				goto out;
		} while (accept(p, ','));
		if (expect(p, ')'))
			goto out;
	}
	sp(p);
	if (*p->s == '{') {
		p->s++;
		if (!accept(p, '}')) {
			do {
				attrs = xgrow(attrs, &capattr, nattr + 1, sizeof *attrs);
				ox_attr *a = &attrs[nattr++];
				char an[256];
				memset(a, 0, sizeof *a);
				ws(p);
				if (*p->s == '"') {
					if (string(p, &a->name, NULL))
						goto out;
				} else if (word(p, an, sizeof an)) {
					a->name = ox_ir_strdup(g, an);
				} else {
					fail(p, "expected an attribute name");
					goto out;
				}
				for (int k = 0; k < nattr - 1; k++)
					if (!strcmp(attrs[k].name, a->name)) {
						fail(p, "attribute '%s' given twice", a->name);
						goto out;
					}
				if (expect(p, '=') || attr_value(p, g, a))
					goto out;
			} while (accept(p, ','));
			if (expect(p, '}'))
				goto out;
		}
	}
	sp(p);
	if (*p->s == '#') { /* the node name, if the comment starts with a string */
		p->s++;
		sp(p);
		if (*p->s == '"' && string(p, &name, NULL))
			goto out;
		while (*p->s && *p->s != '\n')
			p->s++;
	}

	ox_id id = ox_ir_add_node(g, ox_op_lookup(domain, optype), optype, name, nin, nout);
	ox_node *n = &g->nodes[id];
	n->domain = ox_ir_strdup(g, domain);
	n->opset = opset;
	if (nin)
		memcpy(n->in, ins, (size_t)nin * sizeof *ins);
	if (nout)
		memcpy(n->out, outs, (size_t)nout * sizeof *outs);
	n->nattr = nattr;
	if (nattr) {
		n->attrs = ox_ir_alloc(g, (size_t)nattr * sizeof *n->attrs);
		memcpy(n->attrs, attrs, (size_t)nattr * sizeof *attrs);
	}
	rc = 0;
out:
	free(outs);
	free(ins);
	free(attrs);
	return rc;
}

/* input/const/outer %ID[:TYPE] "name" (the const one followed by = DATA);
 * kind -1 is an outer value: captured from an enclosing graph by name, an
 * OX_V_INPUT that is not among the graph's inputs (as the frontend makes it) */
static int decl_stmt(P *p, G *st, int kind)
{
	ox_graph *g = st->g;
	ox_id id;
	const char *name = "";
	if (value_ref(p, st, &id, 0))
		return -1;
	if (id < 0)
		return fail(p, "expected a value id, not '_'");
	if (define(p, st, id, 1) || value_type(p, g, &g->vals[id]))
		return -1;
	sp(p);
	if (*p->s == '"' && string(p, &name, NULL))
		return -1;
	ox_value *v = &g->vals[id];
	v->name = name;
	if (kind < 0) {
		v->kind = OX_V_INPUT;
	} else if (kind == OX_V_INPUT) { /* outer values are OX_V_INPUT too, as the frontend makes them */
		v->kind = OX_V_INPUT;
		st->ins = xgrow(st->ins, &st->capins, st->nins + 1, sizeof *st->ins);
		st->ins[st->nins++] = id;
	} else if (kind == OX_V_CONST) {
		if (v->dtype == OX_UNDEF || !v->has_shape || !ox_shape_is_const(&v->shape))
			return fail(p, "a constant needs a dtype and constant dims");
		ox_tensor *t;
		/* a laid-out constant's data is its storage, shaped by its logical shape */
		ox_shape flat = {1, {ox_value_storage_numel(v)}}, logical = v->shape;
		if (expect(p, '=') || tensor_data(p, g, v->dtype, v->layout ? &flat : &v->shape, &t))
			return -1;
		t->shape = logical;
		int layout = v->layout;
		ox_ir_set_const(g, id, t);
		v->layout = layout;
	}
	return 0;
}

static int output_stmt(P *p, G *st)
{
	ox_id id;
	const char *name = NULL;
	if (value_ref(p, st, &id, 1))
		return -1;
	sp(p);
	if (*p->s == '"' && string(p, &name, NULL))
		return -1;
	int k = st->nouts++;
	st->outs = xgrow(st->outs, &st->capouts, st->nouts, sizeof *st->outs);
	st->onames = realloc(st->onames, (size_t)st->capouts * sizeof *st->onames);
	if (!st->onames)
		ox_die("out of memory");
	st->outs[k] = id;
	st->onames[k] = name;
	return 0;
}

static int header_stmt(P *p, ox_graph *g)
{
	const char *name;
	if (string(p, &name, NULL))
		return -1;
	g->name = name;
	for (;;) {
		int64_t v;
		sp(p);
		if (keyword(p, "opset")) {
			if (integer(p, &v))
				return -1;
			g->opset = (int)v;
		} else if (keyword(p, "ir")) {
			if (integer(p, &v))
				return -1;
			g->ir_version = v;
		} else {
			return 0;
		}
	}
}

static int bind_stmt(P *p, ox_graph *g)
{
	char buf[256];
	const char *sym = buf;
	int64_t v;
	sp(p);
	if (*p->s == '"') {
		if (string(p, &sym, NULL))
			return -1;
	} else if (!chars(p, buf, sizeof buf, is_symch)) {
		return fail(p, "expected a symbol name after 'bind'");
	}
	if (expect(p, '=') || integer(p, &v))
		return -1;
	if (v < 0)
		return fail(p, "a symbol binds to a value >= 0");
	ox_dim_sym(g, sym);
	ox_ir_bind(g, sym, v);
	return 0;
}

/* range SYM=LO..HI, a run-time symbol read from an input's shape;
 * range SYM=LO..HI data "NAME", one the producer of value NAME computes */
static int range_stmt(P *p, ox_graph *g)
{
	char buf[256];
	const char *sym = buf, *def = NULL;
	int64_t lo, hi;
	sp(p);
	if (*p->s == '"') {
		if (string(p, &sym, NULL))
			return -1;
	} else if (!chars(p, buf, sizeof buf, is_symch)) {
		return fail(p, "expected a symbol name after 'range'");
	}
	if (expect(p, '='))
		return -1;
	sp(p);
	char *end;
	if (!isdigit((unsigned char)*p->s))
		return fail(p, "expected LO..HI");
	lo = strtoll(p->s, &end, 10);
	p->s = end;
	if (p->s[0] != '.' || p->s[1] != '.')
		return fail(p, "expected LO..HI");
	p->s += 2;
	if (keyword(p, "inf")) {
		hi = -1; /* a data symbol without a bound yet */
	} else if (isdigit((unsigned char)*p->s)) {
		hi = strtoll(p->s, &end, 10);
		p->s = end;
	} else {
		return fail(p, "expected LO..HI");
	}
	if (lo < 0 || (hi < lo && hi != -1))
		return fail(p, "a range is LO..HI with 0 <= LO <= HI (or LO..inf)");
	sp(p);
	if (keyword(p, "data")) {
		sp(p);
		if (string(p, &def, NULL))
			return -1;
	}
	ox_dim d = ox_dim_sym(g, sym);
	ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	e->value = -1;
	e->rt = def ? OX_RT_DATA : OX_RT_INPUT;
	e->lo = lo;
	e->hi = hi;
	e->def = def ? ox_ir_strdup(g, def) : NULL;
	return 0;
}

/* Everything after the statements: every used value defined, the input and
 * output lists stored, names given to nameless node outputs. */
static int finish(P *p, G *st)
{
	ox_graph *g = st->g;
	for (int i = 0; i < g->nvals && i < st->cap; i++)
		if (st->useline[i] && !st->def[i]) {
			p->line = st->useline[i];
			return fail(p, "value %%%d is used but never defined (an 'outer' line "
				    "declares a value from an enclosing graph)", i);
		}
	for (int k = 0; k < st->nouts; k++) {
		ox_id o = st->outs[k];
		if (o >= 0 && !*g->vals[o].name && st->onames[k])
			g->vals[o].name = st->onames[k];
	}
	for (int i = 0; i < g->nvals && i < st->cap; i++)
		if (st->def[i] == 2 && !*g->vals[i].name) {
			char buf[32];
			snprintf(buf, sizeof buf, "%%%d", i);
			g->vals[i].name = ox_ir_strdup(g, buf);
		}
	g->ninputs = st->nins;
	g->inputs = ox_ir_alloc(g, ((size_t)st->nins + 1) * sizeof *g->inputs);
	if (st->nins)
		memcpy(g->inputs, st->ins, (size_t)st->nins * sizeof *st->ins);
	g->noutputs = st->nouts;
	g->outputs = ox_ir_alloc(g, ((size_t)st->nouts + 1) * sizeof *g->outputs);
	g->output_names = ox_ir_alloc(g, ((size_t)st->nouts + 1) * sizeof *g->output_names);
	for (int k = 0; k < st->nouts; k++) {
		ox_id o = st->outs[k];
		g->outputs[k] = o;
		g->output_names[k] = st->onames[k] ? st->onames[k] : o >= 0 ? g->vals[o].name : "";
	}
	ox_ir_fill_uses(g);
	return 0;
}

/* Statements until the end of the text (top level) or a '}' line (a
 * subgraph); the first one must be the graph header. */
static int parse_body(P *p, ox_graph *g)
{
	G st = {g, NULL, NULL, 0, NULL, 0, 0, NULL, NULL, 0, 0};
	int rc = -1, seen_header = 0, sub = g != p->root;
	for (;;) {
		ws(p);
		if (*p->s == '#') {
			end_of_line(p);
			continue;
		}
		if (!*p->s) {
			if (sub) {
				fail(p, "end of text inside graph{...}");
				break;
			}
			if (!seen_header) {
				fail(p, "expected a 'graph' header");
				break;
			}
			rc = finish(p, &st);
			break;
		}
		if (*p->s == '}' && sub) {
			p->s++;
			rc = seen_header ? finish(p, &st) : fail(p, "expected a 'graph' header");
			break;
		}
		int r;
		if (keyword(p, "graph")) {
			r = seen_header ? fail(p, "a second 'graph' header") : header_stmt(p, g);
			seen_header = 1;
		} else if (!seen_header) {
			r = fail(p, "expected a 'graph' header");
		} else if (keyword(p, "bind")) {
			r = bind_stmt(p, g);
		} else if (keyword(p, "range")) {
			r = range_stmt(p, g);
		} else if (keyword(p, "input")) {
			r = decl_stmt(p, &st, OX_V_INPUT);
		} else if (keyword(p, "const")) {
			r = decl_stmt(p, &st, OX_V_CONST);
		} else if (keyword(p, "outer")) {
			r = decl_stmt(p, &st, -1);
		} else if (keyword(p, "output")) {
			r = output_stmt(p, &st);
		} else if (*p->s == '%' || *p->s == '_' || *p->s == '=') {
			r = node_stmt(p, &st);
		} else {
			r = fail(p, "expected a statement (graph, bind, input, const, outer, output or a node)");
		}
		if (r || p->failed || end_of_line(p))
			break;
	}
	free(st.def);
	free(st.useline);
	free(st.ins);
	free(st.outs);
	free(st.onames);
	return p->failed ? -1 : rc;
}

ox_graph *ox_ir_parse(const char *text, const char *path)
{
	P p = {text ? text : "", 1, ox_ir_new(path), 0};
	if (parse_body(&p, p.root)) {
		ox_ir_free(p.root); /* and every subgraph made under it */
		return NULL;
	}
	return p.root;
}
