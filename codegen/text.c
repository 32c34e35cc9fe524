/* text.c: the helpers every emitter prints code with: growable buffers
 * (ox_buf), the node body's printers (ox_cg_printf, ox_cg_line), texts that
 * live as long as the emitter (ox_cg_text), the templates and helpers of
 * the kernels section (ox_cg_use, ox_cg_helper), C types, conversions and
 * literals of the dtypes (ox_cg_ctype, ox_cg_load, ox_cg_lit). It calls no
 * emitter and not the driver (codegen/c.c): everything in codegen/ may use
 * it.
 */
#include "cg.h"
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* templates.gen.c (made by the Makefile from templates/ and runtime_min/) */
extern const char *const ox_tmpl_names[];
extern const char *const ox_tmpl_texts[];

/* ---- buffers ---- */
static void buf_grow(ox_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->s = realloc(b->s, cap);
	if (!b->s)
		ox_die("out of memory");
	b->cap = cap;
}

static void buf_put(ox_buf *b, const char *s, size_t n)
{
	buf_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->s[b->len += n] = 0;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* s[0..n) into b with b's fields filled (cg.h, ox_buf) */
static void put_fields(ox_buf *b, const char *s, size_t n)
{
	const char *p = s, *end = s + n, *run = s;
	while (p < end) {
		const char *val = NULL;
		size_t skip = 0;
		if (b->ix && p[0] == '$' && (p[1] == 'I' || p[1] == 'L') && !ident_char(p[2])) {
			val = p[1] == 'I' ? b->ix : strcmp(b->ix, "long") ? "" : "L";
			skip = 2;
		} else if (b->dt && !strncmp(p, "OX_T", 4) && !ident_char(p[4])) {
			val = ox_cg_ctype(b->dt);
			skip = 4;
		} else if (b->dt && (!strncmp(p, "OX_LD(", 6) || !strncmp(p, "OX_ST(", 6))) {
			const char *q = p + 6;
			for (int depth = 1; depth; q++) {
				if (q == end)
					ox_die("codegen: a kernel text printed %.6s without its closing parenthesis in the "
					       "same piece (a limit of the code generator: please report it)", p);
				depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
			}
			ox_buf in = {.ix = b->ix, .dt = b->dt};
			put_fields(&in, p + 6, (size_t)(q - 1 - (p + 6)));
			val = p[3] == 'L' ? ox_cg_load(b->dt, in.s ? in.s : "") : ox_cg_store(b->dt, in.s ? in.s : "");
			buf_put(b, run, (size_t)(p - run));
			buf_put(b, val, strlen(val));
			free(in.s);
			p = run = q;
			continue;
		}
		if (val && (p == s || !ident_char(p[-1]) || p[0] == '$')) {
			buf_put(b, run, (size_t)(p - run));
			buf_put(b, val, strlen(val));
			p = run = p + skip;
		} else {
			p++;
		}
	}
	buf_put(b, run, (size_t)(end - run));
}

static void buf_vprintf(ox_buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (b->ix || b->dt) {
		char *t = malloc((size_t)n + 1);
		if (!t)
			ox_die("out of memory");
		vsnprintf(t, (size_t)n + 1, fmt, ap);
		put_fields(b, t, (size_t)n);
		free(t);
		return;
	}
	buf_grow(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void ox_buf_lines(ox_buf *b, int lvl, const char *text)
{
	for (const char *l = text; l && *l;) {
		const char *e = strchr(l, '\n');
		const size_t n = e ? (size_t)(e - l) : strlen(l);
		for (int k = 0; n && k < lvl; k++)
			ox_buf_puts(b, "\t");
		ox_buf_printf(b, "%.*s\n", (int)n, l);
		l += n + (e != NULL);
	}
}

void ox_buf_vprintf(ox_buf *b, const char *fmt, va_list ap)
{
	buf_vprintf(b, fmt, ap);
}

const char *ox_cg_fields_left(const char *text)
{
	for (const char *p = text; p && *p; p++) {
		if (p[0] == '/' && p[1] == '*') { /* (comments and literals may quote a model's names) */
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 1 : p + strlen(p) - 1;
		} else if (*p == '"' || *p == '\'') {
			const char q = *p;
			while (p[1] && p[1] != q)
				p += p[1] == '\\' && p[2] ? 2 : 1;
			if (p[1])
				p++;
		} else if ((p[0] == '$' && (p[1] == 'I' || p[1] == 'L') && !ident_char(p[2])) ||
			   ((p == text || !ident_char(p[-1])) &&
			    ((!strncmp(p, "OX_T", 4) && !ident_char(p[4])) || !strncmp(p, "OX_LD(", 6) ||
			     !strncmp(p, "OX_ST(", 6) || (!strncmp(p, "OX_STATIC", 9) && !ident_char(p[9]))))) {
			return p;
		}
	}
	return NULL;
}

void ox_buf_printf(ox_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

int ox_cg_snprintf_at(const char *file, int line, char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= n)
		ox_die_at(file, line, "a text of %d bytes for a buffer of %zu (a limit of the code generator, not of "
			  "the model: please report it)", k, n);
	return k;
}

const char *ox_cg_text(ox_cg *cg, const char *fmt, ...)
{
	ox_buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	const int n = cg->ntexts;
	if (n >= 16 && !(n & (n - 1))) { /* full at 16, 32, 64, ...: twice the room */
		char **a = realloc(cg->texts, (size_t)n * 2 * sizeof *a);
		if (!a)
			ox_die("out of memory");
		cg->texts = a;
	} else if (!n && !(cg->texts = malloc(16 * sizeof *cg->texts))) {
		ox_die("out of memory");
	}
	char *r = strdup(b.s);
	if (!r)
		ox_die("out of memory");
	ox_buf_free(&b);
	return cg->texts[cg->ntexts++] = r;
}

void ox_buf_puts(ox_buf *b, const char *s)
{
	if (b->ix || b->dt)
		put_fields(b, s, strlen(s));
	else
		buf_put(b, s, strlen(s));
}

void ox_buf_free(ox_buf *b)
{
	free(b->s);
	b->s = NULL, b->len = b->cap = 0; /* (its fields stay) */
}

void ox_cg_printf(ox_cg *cg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&cg->body, fmt, ap);
	va_end(ap);
}

/* lvl tabs, then fmt */
static void lstart(ox_cg *cg, int lvl, const char *fmt, va_list ap)
{
	for (int i = 0; i < lvl; i++)
		ox_cg_printf(cg, "\t");
	buf_vprintf(&cg->body, fmt, ap);
}

void ox_cg_line(ox_cg *cg, int lvl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lstart(cg, lvl, fmt, ap);
	va_end(ap);
	ox_cg_printf(cg, "\n");
}

void ox_cg_lstart(ox_cg *cg, int lvl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lstart(cg, lvl, fmt, ap);
	va_end(ap);
}

int ox_cg_intern(ox_cg *cg, const char *key)
{
	for (int i = 0; i < cg->ninterned; i++)
		if (!strcmp(cg->interned[i], key))
			return i;
	cg->interned = realloc(cg->interned, (size_t)(cg->ninterned + 1) * sizeof *cg->interned);
	cg->interned[cg->ninterned] = strdup(key);
	return cg->ninterned++;
}

void ox_cg_tasks_dim(ox_cg *cg, ox_dim n)
{
	if (cg->nregions == 4)
		ox_die("codegen: more than 4 regions of tasks in one node");
	cg->region_at[cg->nregions] = cg->body.len;
	cg->region_n[cg->nregions++] = n;
}

void ox_cg_tasks(ox_cg *cg, long n)
{
	ox_cg_tasks_dim(cg, n);
}

void ox_cg_term(char *buf, size_t cap, const char *var, int64_t n, int64_t stride)
{
	size_t len = strlen(buf);
	if (n == 1 || stride == 0)
		return;
	if (stride == 1)
		ox_cg_snprintf(buf + len, cap - len, "%s%s", len ? " + " : "", var);
	else
		ox_cg_snprintf(buf + len, cap - len, "%s%s * %lld", len ? " + " : "", var, (long long)stride);
}

/* ---- templates ---- */
const char *ox_cg_template(const char *name)
{
	for (int i = 0; ox_tmpl_names[i]; i++)
		if (!strcmp(ox_tmpl_names[i], name))
			return ox_tmpl_texts[i];
	return NULL;
}

void ox_cg_free(ox_cg *cg)
{
	ox_buf_free(&cg->body), ox_buf_free(&cg->kernels), ox_buf_free(&cg->cu_bodies), ox_buf_free(&cg->cu_bslow);
	ox_buf_free(&cg->cu_hkernels);
	for (int i = 0; i < cg->nused; i++)
		free(cg->used[i]);
	free(cg->used);
	for (int i = 0; i < cg->ninterned; i++)
		free(cg->interned[i]);
	free(cg->interned);
	for (int i = 0; i < cg->ntexts; i++)
		free(cg->texts[i]);
	free(cg->texts);
}

static int mark_used(ox_cg *cg, const char *key)
{
	for (int i = 0; i < cg->nused; i++)
		if (!strcmp(cg->used[i], key))
			return 1;
	cg->used = realloc(cg->used, (cg->nused + 1) * sizeof *cg->used);
	cg->used[cg->nused++] = strdup(key);
	return 0;
}

/* copy text replacing each key[i] by val[i] */
void ox_cg_substitute(ox_buf *b, const char *text, const char *const *key, const char *const *val, int nkeys)
{
	for (const char *p = text; *p;) {
		int hit = -1;
		for (int i = 0; i < nkeys; i++)
			if (!strncmp(p, key[i], strlen(key[i]))) {
				hit = i;
				break;
			}
		if (hit >= 0) {
			ox_buf_puts(b, val[hit]);
			p += strlen(key[hit]);
		} else {
			buf_grow(b, 1);
			b->s[b->len++] = *p++;
			b->s[b->len] = 0;
		}
	}
}

/* A template names the templates whose functions it calls in lines
 * " * @needs NAME" (templates/qint.c: quant_conv_sums); ox_cg_use emits
 * them first, for the same dtype. */
static int use_needs(ox_cg *cg, const char *text, int dtype)
{
	static const char tag[] = "@needs ";
	for (const char *p = strstr(text, tag); p; p = strstr(p + 1, tag)) {
		const char *b = p + sizeof tag - 1;
		size_t n = strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789_");
		char *dep = strndup(b, n);
		int rc = n ? ox_cg_use(cg, dep, dtype) : -1;
		free(dep);
		if (rc)
			return -1;
	}
	return 0;
}

int ox_cg_use(ox_cg *cg, const char *name, int dtype)
{
	char key[128];
	ox_cg_snprintf(key, sizeof key, "templates/%s.c", name);
	const char *text = ox_cg_template(key);
	if (!text)
		return -1;
	char ukey[160];
	ox_cg_snprintf(ukey, sizeof ukey, "%s/%s", name, ox_cg_sfx(dtype));
	if (cg->cu_host) /* (a host node's: host functions of their own) */
		ox_cg_snprintf(ukey, sizeof ukey, "host:%s/%s", name, ox_cg_sfx(dtype));
	if (mark_used(cg, ukey))
		return 0;
	if (use_needs(cg, text, dtype))
		return -1;
	/* every template may load and store its dtype through these */
	char ldkey[64], ldst[512];
	ox_cg_snprintf(ldkey, sizeof ldkey, "ldst/%s", ox_cg_sfx(dtype));
	ox_cg_snprintf(ldst, sizeof ldst,
		 "OX_STATIC inline OX_UNUSED %s ox_ld_%s(%s v) { return %s; }\n"
		 "OX_STATIC inline OX_UNUSED %s ox_st_%s(%s v) { return %s; }\n",
		 ox_cg_ntype(dtype), ox_cg_sfx(dtype), ox_cg_ctype(dtype), ox_cg_load(dtype, "v"),
		 ox_cg_ctype(dtype), ox_cg_sfx(dtype), ox_cg_ntype(dtype), ox_cg_store(dtype, "v"));
	ox_cg_helper(cg, ldkey, ldst);
	const char *keys[] = {"$T", "$C", "$S", "OX_STATIC"};
	const char *vals[] = {ox_cg_ctype(dtype), ox_cg_ntype(dtype), ox_cg_sfx(dtype), ox_cg_static(cg)};
	ox_buf *kb = cg->cu_host ? &cg->cu_hkernels : &cg->kernels;
	ox_buf_printf(kb, "/* templates/%s.c for %s */\n", name, ox_cg_sfx(dtype));
	ox_cg_substitute(kb, text, keys, vals, 4);
	ox_buf_puts(kb, "\n");
	return 0;
}

void ox_cg_helper(ox_cg *cg, const char *key, const char *text)
{
	char hkey[512];
	if (cg->cu_host) /* (a host node's: host functions of their own) */
		ox_cg_snprintf(hkey, sizeof hkey, "host:%s", key), key = hkey;
	if (mark_used(cg, key))
		return;
	ox_buf *kb = cg->cu_host ? &cg->cu_hkernels : &cg->kernels;
	const size_t at = kb->len;
	const char *key_s[] = {"OX_STATIC"}, *val_s[] = {ox_cg_static(cg)};
	ox_cg_substitute(kb, text, key_s, val_s, 1);
	const char *left = ox_cg_fields_left(kb->s + at);
	if (left)
		ox_die("codegen: the text of %s has a field left unfilled at \"%.24s\" (a bug of the code generator: "
		       "please report it)", key, left);
	ox_buf_puts(kb, "\n");
}

const char *ox_cg_static(const ox_cg *cg)
{
	return (cg->cuda || cg->dev) && !cg->cu_host ? "[[maybe_unused]] static __device__" : "static";
}

void ox_cg_fails(ox_cg *cg, int kind)
{
	if (cg->can_fail && cg->can_fail != kind)
		ox_die("codegen: a node with two kinds of run-time failure");
	cg->can_fail = kind;
}

void ox_cg_index(ox_cg *cg, int lvl, const char *var, const char *src, int64_t n)
{
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, lvl, "int64_t %s = (int64_t)%s;", var, src);
	ox_cg_line(cg, lvl, "if (%s < 0)", var);
	ox_cg_line(cg, lvl + 1, "%s += %lld;", var, (long long)n);
	ox_cg_line(cg, lvl, "if ((uint64_t)%s >= %lld)", var, (long long)n);
	ox_cg_line(cg, lvl + 1, "return 1; /* index out of range */");
}

const char *ox_cg_f2i(ox_cg *cg, int to)
{
	static char name[8][32];
	static int at;
	char *r = name[at = (at + 1) % 8], text[512];
	int bits = (int)ox_dtype_size(to) * 8;
	int sgn = to == OX_I8 || to == OX_I16 || to == OX_I32 || to == OX_I64;
	const char *T = ox_cg_ctype(to);
	char max[16];
	ox_cg_snprintf(max, sizeof max, "%sINT%d_MAX", sgn ? "" : "U", bits);
	ox_cg_snprintf(r, 32, "ox_f2i_%s", ox_cg_sfx(to));
	if (sgn) {
		ox_cg_snprintf(text, sizeof text, "/* double -> %s: truncated, saturated, NaN -> 0 (C leaves those undefined) */\n"
			 "OX_STATIC inline OX_UNUSED %s %s(double v)\n"
			 "{\n",
			 T, T, r);
		ox_cg_snappend(text, sizeof text, "\treturn v != v ? 0 : v < -0x1p%d ? (%s)(-%s - 1) : v >= 0x1p%d ? %s : (%s)v;\n"
			 "}\n",
			 bits - 1, T, max, bits - 1, max, T);
	} else
		ox_cg_snprintf(text, sizeof text,
			 "/* double -> %s: truncated, saturated, NaN -> 0 (C leaves those undefined) */\n"
			 "OX_STATIC inline OX_UNUSED %s %s(double v)\n{\n"
			 "\treturn v != v || v <= 0 ? 0 : v >= 0x1p%d ? %s : (%s)v;\n}\n",
			 T, T, r, bits, max, T);
	ox_cg_helper(cg, r, text);
	return r;
}

const char *ox_cg_kernel_text(ox_cg *cg, const char *family, const char *name, ox_buf *t)
{
	char key[160];
	ox_cg_snprintf(key, sizeof key, "%s/%s", family, name);
	ox_cg_helper(cg, key, t->s);
	ox_buf_free(t);
	return name;
}

/* ---- C spellings ---- */
const char *ox_cg_ctype(int dt)
{
	switch (dt) {
	case OX_F32: return "float";
	case OX_F64: return "double";
	case OX_F16: case OX_BF16: case OX_U16: return "uint16_t";
	case OX_I8: case OX_I4: case OX_I2: return "int8_t";
	case OX_U8: case OX_BOOL: return "uint8_t";
	case OX_I16: return "int16_t";
	case OX_I32: return "int32_t";
	case OX_U32: return "uint32_t";
	case OX_I64: return "int64_t";
	case OX_U64: return "uint64_t";
	case OX_STRING: return "ox_str";
	}
	return "uint8_t"; /* float8 kinds, u4/u2 and the f4e2m1 code: bytes */
}

const char *ox_cg_ntype(int dt)
{
	return dt == OX_F16 || dt == OX_BF16 ? "float" : ox_cg_ctype(dt);
}

const char *ox_cg_sfx(int dt)
{
	return ox_dtype_name(dt);
}

/* the next of 16 texts, formatted to fit (buf_vprintf; its buffers keep
 * room for a short suffix): valid until 16 more calls */
static char *rot_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *rot_printf(const char *fmt, ...)
{
	static ox_buf ring[16];
	static int at;
	ox_buf *b = &ring[at = (at + 1) % 16];
	b->len = 0;
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
	buf_grow(b, 8); /* (ox_cg_lit's suffixes) */
	return b->s;
}

const char *ox_cg_load(int dt, const char *e)
{
	if (dt != OX_F16 && dt != OX_BF16)
		return e;
	return rot_printf("%s(%s)", dt == OX_F16 ? "ox_f16_to_f32" : "ox_bf16_to_f32", e);
}

const char *ox_cg_store(int dt, const char *e)
{
	if (dt != OX_F16 && dt != OX_BF16)
		return e;
	return rot_printf("%s(%s)", dt == OX_F16 ? "ox_f32_to_f16" : "ox_f32_to_bf16", e);
}

const char *ox_cg_lit(int dt, double v)
{
	int isf = ox_dtype_is_float(dt);
	if (isf && isnan(v))
		return dt == OX_F64 ? "(double)NAN" : "NAN";
	if (isf && isinf(v))
		return v > 0 ? (dt == OX_F64 ? "(double)INFINITY" : "INFINITY")
			     : (dt == OX_F64 ? "(-(double)INFINITY)" : "(-INFINITY)");
	if (dt == OX_F64) {
		char *r = rot_printf("%.17g", v);
		if (!strpbrk(r, ".en"))
			strcat(r, ".0");
		return r;
	}
	if (isf) {
		char *r = rot_printf("%.9g", (double)(float)v);
		if (!strpbrk(r, ".en"))
			strcat(r, ".0");
		strcat(r, "f");
		return r;
	}
	if (dt == OX_U64)
		return rot_printf("%lluu", (unsigned long long)v);
	if (dt == OX_I64 && v <= -9223372036854775807.0)
		return "INT64_MIN";
	char *r = rot_printf("%lld", (long long)v);
	if (dt == OX_I64 || dt == OX_U32)
		strcat(r, dt == OX_U32 ? "u" : "ll");
	return r;
}

/* does the C text mention identifier `name` (as a whole token)? */
int ox_cg_uses_name(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text ? strstr(text, name) : NULL; p; p = strstr(p + 1, name)) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}


void ox_cg_comment_safe(ox_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '*' && s[1] == '/')
			ox_buf_puts(b, "* /");
		else if (*s == '\n' || (unsigned char)*s < 32)
			ox_buf_puts(b, " ");
		else {
			char c[2] = {*s, 0};
			ox_buf_puts(b, c);
		}
	}
}
