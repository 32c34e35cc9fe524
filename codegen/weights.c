/* weights.c: the weights of a program, for codegen/c.c (weights.h): the
 * blob's layout, walking it into the files of each --weights mode, C
 * arrays, the external blob's check (PREFIX_init).
 */
#include "weights.h"
#include "codegen.h"
#include "../opt/opt.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const ox_tensor *ox_w_tensor(const wlayout *L, int k)
{
	return L->gs[L->e[k].spec]->vals[L->e[k].id].data;
}

int ox_w_walk(const wlayout *L, sink_fn fn, void *ctx)
{
	static const unsigned char zeros[64];
	size_t at = 0;
	for (int k = 0; k < L->ne; k++) {
		size_t off = (size_t)L->woff[L->e[k].spec][L->e[k].id];
		while (at < off) {
			size_t z = off - at < sizeof zeros ? off - at : sizeof zeros;
			if (fn(ctx, zeros, z))
				return -1;
			at += z;
		}
		const ox_tensor *t = ox_w_tensor(L, k);
		if (t->nbytes && fn(ctx, t->data, t->nbytes))
			return -1;
		at += t->nbytes;
	}
	return 0;
}

/* g and, recursively, the bodies of its control nodes, appended to L->gs */
static void add_graphs(wlayout *L, ox_graph *g)
{
	L->gs = realloc(L->gs, (size_t)(L->ngs + 1) * sizeof *L->gs);
	L->gs[L->ngs++] = g;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_attr *b = ox_attr_get(&g->nodes[i], "ox_bodies");
		for (int k = 0; b && b->type == OX_AT_GRAPHS && k < b->n; k++)
			add_graphs(L, b->g[k]);
	}
}

/* the index of graph g in L->gs */
static int wgraph(const wlayout *L, const ox_graph *g)
{
	for (int s = 0; s < L->ngs; s++)
		if (L->gs[s] == g)
			return s;
	ox_die("codegen: a graph the weights layout does not know");
}

/* The blob's layout: each constant that a node or an output of any
 * specialization or body uses, at a 64-byte aligned offset, once per
 * distinct bytes. -1 (after an error) on a string constant. */
int ox_w_layout(wlayout *L, ox_graph *const *specs, int nspecs)
{
	for (int s = 0; s < nspecs; s++)
		add_graphs(L, specs[s]);
	L->woff = calloc((size_t)L->ngs + 1, sizeof *L->woff);
	L->size = 0;
	L->ne = 0;
	int cap = 0;
	for (int s = 0; s < L->ngs; s++) {
		ox_graph *g = L->gs[s];
		ox_ir_fill_uses(g);
		L->woff[s] = calloc((size_t)g->nvals + 1, sizeof **L->woff);
		for (int i = 0; i < g->nvals; i++) {
			ox_value *v = &g->vals[i];
			L->woff[s][i] = -1;
			if (v->kind != OX_V_CONST || (!v->nuses && !v->is_output))
				continue;
			if (v->dtype == OX_STRING)
				return ox_error(g, NULL, "string constant '%s' is not supported by the C target", v->name);
			int dup = -1;
			for (int k = 0; k < L->ne && s > 0 && dup < 0; k++) {
				const ox_tensor *t = ox_w_tensor(L, k);
				if (L->e[k].spec != s && t->nbytes == v->data->nbytes &&
				    !memcmp(t->data, v->data->data, t->nbytes))
					dup = k;
			}
			if (dup >= 0) {
				L->woff[s][i] = L->woff[L->e[dup].spec][L->e[dup].id];
				continue;
			}
			if (L->ne == cap) {
				cap = cap ? 2 * cap : 64;
				L->e = realloc(L->e, (size_t)cap * sizeof *L->e);
			}
			L->e[L->ne++] = (wentry){s, i};
			L->size = (L->size + 63) & ~(size_t)63;
			L->woff[s][i] = (int64_t)L->size;
			L->size += v->data->nbytes;
		}
	}
	return 0;
}

void ox_w_free(wlayout *L)
{
	for (int s = 0; s < L->ngs && L->woff; s++)
		free(L->woff[s]);
	free(L->woff);
	free(L->e);
	free(L->gs);
}

/* CRC-32 (IEEE 802.3, as zlib), four bits at a time: the generated
 * PREFIX_init has the same 16-entry table. */
static const uint32_t crc_tab[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
	0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

int ox_w_crc_sink(void *ctx, const unsigned char *p, size_t n)
{
	uint32_t c = ~*(uint32_t *)ctx;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		c = (c >> 4) ^ crc_tab[c & 15];
		c = (c >> 4) ^ crc_tab[c & 15];
	}
	*(uint32_t *)ctx = ~c;
	return 0;
}

int ox_w_dec_sink(void *ctx, const unsigned char *p, size_t n)
{
	static char num[256][5];
	static unsigned char len[256];
	if (!len[0])
		for (int b = 0; b < 256; b++)
			len[b] = (unsigned char)ox_cg_snprintf(num[b], sizeof num[b], "%d,", b);
	dec_state *d = ctx;
	char line[24 * 4 + 8];
	for (size_t i = 0; i < n;) {
		size_t at = 0;
		do {
			if (d->at % 24 == 0)
				line[at++] = '\t';
			memcpy(line + at, num[p[i]], len[p[i]]);
			at += len[p[i]];
			d->at++;
			i++;
			if (d->at % 24 == 0)
				line[at++] = '\n';
		} while (i < n && d->at % 24);
		if (fwrite(line, 1, at, d->f) != at)
			return -1;
	}
	return 0;
}

int ox_w_str_sink(void *ctx, const unsigned char *p, size_t n)
{
	str_state *s = ctx;
	ox_buf *b = s->b;
	for (size_t i = 0; i < n; i++, s->at++) {
		unsigned char c = p[i];
		if (s->at && s->at % 64 == 0)
			ox_buf_puts(b, "\"\n\"");
		if (c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?')
			ox_buf_printf(b, "%c", c);
		else
			ox_buf_printf(b, "\\%03o", c);
	}
	return 0;
}

void ox_w_put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A tensor as a typed C array (--weights c). Floats print with ox_cg_lit
 * (%.9g / %.17g: exact round trips); a NaN other than the default one has
 * no C spelling, so such a tensor is written as its bytes instead. */
/* elements stored: a laid-out constant (packed weights, padded biases,
 * opt/pack.c) holds more than its logical shape says */
static int64_t stored_elems(const ox_tensor *t)
{
	size_t es = ox_dtype_size(t->dtype);
	return t->dtype != OX_STRING && es ? (int64_t)(t->nbytes / es) : ox_tensor_numel(t);
}

static int canonical_nans(const ox_tensor *t)
{
	int64_t m = stored_elems(t);
	for (int64_t i = 0; i < m; i++) {
		if (t->dtype == OX_F32) {
			uint32_t u;
			memcpy(&u, (const unsigned char *)t->data + 4 * i, 4);
			if ((u & 0x7f800000) == 0x7f800000 && (u & 0x7fffff) && u != 0x7fc00000)
				return 0;
		} else if (t->dtype == OX_F64) {
			uint64_t u;
			memcpy(&u, (const unsigned char *)t->data + 8 * i, 8);
			if ((u >> 52 & 0x7ff) == 0x7ff && (u & 0xfffffffffffffull) && u != 0x7ff8000000000000ull)
				return 0;
		}
	}
	return 1;
}

/* written as bytes rather than typed elements? */
int ox_w_as_bytes(const ox_tensor *t)
{
	int dt = t->dtype;
	int typed = dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16 || dt == OX_BOOL ||
		    (ox_dtype_is_int(dt) && ox_dtype_size(dt) > 0);
	return !typed || !canonical_nans(t);
}

/* the C array of blob entry k (--weights c): PREFIX_wID, PREFIX_wS_ID for
 * a later specialization's */
const char *ox_w_array(const wlayout *L, int k)
{
	static char r[4][64];
	static int at;
	at = (at + 1) % 4;
	if (L->e[k].spec)
		ox_cg_snprintf(r[at], sizeof r[at], "%s_w%d_%d", L->prefix, L->e[k].spec, L->e[k].id);
	else
		ox_cg_snprintf(r[at], sizeof r[at], "%s_w%d", L->prefix, L->e[k].id);
	return r[at];
}

/* the blob entry holding value id of graph s (an index of L->gs) */
static int wentry_of(const wlayout *L, int s, ox_id id)
{
	for (int k = 0; k < L->ne; k++)
		if (L->woff[L->e[k].spec][L->e[k].id] == L->woff[s][id])
			return k;
	ox_die("codegen: constant %d has no place in the weights", id);
}

void ox_w_c_array(ox_buf *b, const wlayout *L, int k)
{
	ox_graph *g = L->gs[L->e[k].spec];
	const ox_value *v = &g->vals[L->e[k].id];
	const ox_tensor *t = v->data;
	int64_t m = stored_elems(t);
	int dt = t->dtype, bytes = ox_w_as_bytes(t);
	char shape[256];
	ox_shape_str(g, &t->shape, shape, sizeof shape);
	ox_buf_puts(b, "/* ");
	ox_cg_comment_safe(b, v->name);
	ox_buf_printf(b, ": %s%s */\n", ox_dtype_name(dt), shape);
	if (bytes) {
		m = (int64_t)t->nbytes;
		ox_buf_printf(b, "_Alignas(8) const unsigned char %s[%lld] = {", ox_w_array(L, k), (long long)(m ? m : 1));
	} else {
		ox_buf_printf(b, "const %s %s[%lld] = {", ox_cg_ctype(dt), ox_w_array(L, k), (long long)(m ? m : 1));
	}
	if (!m)
		ox_buf_puts(b, "0");
	for (int64_t i = 0; i < m; i++) {
		ox_buf_puts(b, i % 8 ? " " : "\n\t");
		const unsigned char *p = (const unsigned char *)t->data;
		if (bytes) {
			ox_buf_printf(b, "%u,", p[i]);
			continue;
		}
		switch (dt) {
		case OX_F32: case OX_F64:
			ox_buf_printf(b, "%s,", ox_cg_lit(dt, ox_tensor_get_f64(t, i)));
			break;
		case OX_F16: case OX_BF16: case OX_U16: {
			uint16_t u;
			memcpy(&u, p + 2 * i, 2);
			ox_buf_printf(b, "0x%04x,", u);
			break;
		}
		case OX_I64: {
			int64_t x = ox_tensor_get_i64(t, i);
			if (x == INT64_MIN)
				ox_buf_puts(b, "INT64_MIN,");
			else
				ox_buf_printf(b, "%lldll,", (long long)x);
			break;
		}
		case OX_U64: {
			uint64_t u;
			memcpy(&u, p + 8 * i, 8);
			ox_buf_printf(b, "%lluull,", (unsigned long long)u);
			break;
		}
		case OX_U32: {
			uint32_t u;
			memcpy(&u, p + 4 * i, 4);
			ox_buf_printf(b, "%luul,", (unsigned long)u);
			break;
		}
		case OX_I32:
			ox_buf_printf(b, "%ld,", (long)ox_tensor_get_i64(t, i));
			break;
		default: /* 8 and 16-bit integers, bool, float8 bytes */
			ox_buf_printf(b, "%lld,", (long long)ox_tensor_get_i64(t, i));
		}
	}
	ox_buf_puts(b, "\n};\n\n");
}

/* Where value id of graph g lives, as a C pointer expression of its
 * storage type: a graph input, the weights, or the arena. A view
 * (opt/plan.c) is its root's bytes at an offset: the root decides the
 * place. */
const char *ox_w_vptr(ox_graph *g, ox_id id, int cnst, char *buf, size_t n, const wlayout *L)
{
	int s = wgraph(L, g);
	ox_value *v = &g->vals[id];
	const char *t = ox_cg_ctype(v->dtype);
	int64_t off;
	ox_id r = ox_plan_storage(g, id, &off);
	ox_value *rv = &g->vals[r];
	if (rv->kind == OX_V_INPUT) {
		int k = 0;
		while (k < g->ninputs && g->inputs[k] != r)
			k++;
		if (off)
			ox_cg_snprintf(buf, n, "(const %s *)((const unsigned char *)inputs[%d] + %lld)", t, k, (long long)off);
		else
			ox_cg_snprintf(buf, n, "(const %s *)inputs[%d]", t, k);
	} else if (rv->kind == OX_V_CONST && L->mode == OX_CG_WEIGHTS_C) {
		int k = wentry_of(L, s, r);
		if (off || rv->dtype != v->dtype || ox_w_as_bytes(rv->data))
			ox_cg_snprintf(buf, n, "(const %s *)((const unsigned char *)%s + %lld)", t, ox_w_array(L, k), (long long)off);
		else
			ox_cg_snprintf(buf, n, "%s", ox_w_array(L, k));
	} else if (rv->kind == OX_V_CONST) {
		ox_cg_snprintf(buf, n, "(const %s *)(W + %lld)", t, (long long)(L->woff[s][r] + off));
	} else {
		if (v->offset < 0)
			ox_die("codegen: value %%%d '%s' has no place in the arena", id, v->name);
		ox_cg_snprintf(buf, n, "(%s%s *)(A + %lld)", cnst ? "const " : "", t, (long long)v->offset);
	}
	return buf;
}

/* OUT_weights.c for the default mode with a blob file beside it. The size
 * check after .incbin needs GNU as: LLVM's assembler cannot evaluate it.
 * A compiler with neither .incbin (on ELF) nor #embed stops at an #error
 * that names --weights array, which writes the blob as a C array. */
void ox_w_embed(ox_buf *w, const char *P, const char *PU, const char *wname, size_t wsize)
{
	ox_buf_printf(w, " * kept byte for byte in %s.bin. GCC and clang on ELF targets pull that\n"
			 " * file in with the assembler's .incbin, found through __FILE__, so the\n"
			 " * .bin must stay beside this file (or -D%s_WEIGHTS_BIN='\"path\"'); other\n"
			 " * compilers use C23 #embed where they have it. -D%s_WEIGHTS_NO_INCBIN\n"
			 " * skips the assembler. A compiler with neither: onnxcc --weights array. */\n",
		      wname, PU, PU);
	ox_buf_printf(w, "#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__) && !defined(%s_WEIGHTS_NO_INCBIN)\n", PU);
	ox_buf_printf(w, "#ifndef %s_WEIGHTS_BIN\n#define %s_WEIGHTS_BIN __FILE__ \".bin\"\n#endif\n", PU, PU);
	ox_buf_printf(w, "#ifdef __clang__\n#define %s_WEIGHTS_CHECK \"\"\n#else\n"
			 "#define %s_WEIGHTS_CHECK \"\\t.if . - %s_weights - %zu\\n\" \\\n"
			 "\t\"\\t.error \\\"%s.bin does not hold the %zu bytes %s expects: regenerate both\\\"\\n\" \\\n"
			 "\t\"\\t.endif\\n\"\n#endif\n",
		      PU, PU, P, wsize, wname, wsize, wname);
	ox_buf_printf(w, "__asm__(\"\\t.pushsection .rodata.%s_weights, \\\"a\\\"\\n\"\n"
			 "\t\"\\t.balign 64\\n\"\n"
			 "\t\"\\t.globl %s_weights\\n\"\n"
			 "\t\"\\t.type %s_weights, %%object\\n\"\n"
			 "\t\"%s_weights:\\n\"\n"
			 "\t\"\\t.incbin \\\"\" %s_WEIGHTS_BIN \"\\\"\\n\"\n"
			 "\t\"\\t.size %s_weights, . - %s_weights\\n\"\n"
			 "\t%s_WEIGHTS_CHECK\n"
			 "\t\"\\t.popsection\\n\");\n",
		      P, P, P, P, PU, P, P, PU);
	ox_buf_printf(w, "#elif defined(__has_embed)\n#if __has_embed(\"%s.bin\")\n"
			 "_Alignas(64) const unsigned char %s_weights[%zu] = {\n#embed \"%s.bin\"\n};\n"
			 "#else\n#error \"%s.bin is not found by #embed: is it beside %s?\"\n#endif\n"
			 "#else\n#error \"this compiler has neither .incbin (GCC or clang, ELF) nor #embed: "
			 "run onnxcc with --weights array (the weights as a C array) or --weights external\"\n#endif\n",
		      wname, P, wsize, wname, wname, wname);
}

void ox_w_init_fn(ox_buf *c, const char *P, const char *PU, int cuda)
{
	ox_buf_printf(c, "/* ---- weights: --weights external (docs/api.md) ---- */\n"
			 "static const unsigned char *%s_W; /* the blob's tensor bytes, set by %s_init */\n\n",
		      P, P);
	ox_buf_printf(c, "static uint32_t %s_crc32(const unsigned char *p, size_t n)\n{\n"
			 "\tstatic const uint32_t tab[16] = {\n", P);
	for (int i = 0; i < 16; i++)
		ox_buf_printf(c, "%s0x%08xu,%s", i % 8 ? " " : "\t\t", (unsigned)crc_tab[i], i % 8 == 7 ? "\n" : "");
	ox_buf_printf(c, "\t};\n\tuint32_t c = 0xffffffffu;\n"
			 "\tfor (size_t i = 0; i < n; i++) {\n\t\tc ^= p[i];\n"
			 "\t\tc = (c >> 4) ^ tab[c & 15];\n\t\tc = (c >> 4) ^ tab[c & 15];\n\t}\n"
			 "\treturn ~c;\n}\n\n");
	ox_buf_printf(c, "static uint64_t %s_le(const unsigned char *p, int n)\n{\n\tuint64_t v = 0;\n"
			 "\tfor (int i = n - 1; i >= 0; i--)\n\t\tv = v << 8 | p[i];\n\treturn v;\n}\n\n", P);
	/* the head: PREFIX_init on the C target; on the CUDA target
	 * PREFIX_check_blob, which its PREFIX_init calls before the upload */
	if (cuda)
		ox_buf_printf(c, "static int %s_check_blob(const void *blob, size_t size)\n{\n", P);
	else
		ox_buf_printf(c, "int %s_init(const void *blob, size_t size)\n{\n", P);
	ox_buf_printf(c, "\tconst unsigned char *b = (const unsigned char *)blob; /* (C++ too: --target cuda) */\n"
			 "\t%s_W = NULL;\n\tif (!b)\n\t\treturn %s_ERR_ARG;\n"
			 "\tif ((uintptr_t)b %% 8)\n\t\treturn %s_ERR_ALIGN;\n", P, PU, PU);
	ox_buf_printf(c, "\tif (size < %d)\n\t\treturn %s_ERR_SIZE;\n"
			 "\tif (memcmp(b, \"%s\", 8))\n\t\treturn %s_ERR_MAGIC;\n", BLOB_HEADER, PU, BLOB_MAGIC, PU);
	ox_buf_printf(c, "\tif (%s_le(b + 8, 4) != %d || %s_le(b + 12, 4) != %d)\n\t\treturn %s_ERR_VERSION;\n",
		      P, BLOB_VERSION, P, BLOB_HEADER, PU);
	ox_buf_printf(c, "\tif (%s_le(b + 16, 8) != size - %d)\n\t\treturn %s_ERR_SIZE;\n", P, BLOB_HEADER, PU);
	ox_buf_printf(c, "\tif (%s_le(b + 16, 8) != %s_WEIGHTS_SIZE || %s_le(b + 24, 4) != %s_WEIGHTS_CRC32)\n"
			 "\t\treturn %s_ERR_MODEL;\n", P, PU, P, PU, PU);
	ox_buf_printf(c, "\tif (%s_crc32(b + %d, size - %d) != %s_WEIGHTS_CRC32)\n\t\treturn %s_ERR_CHECKSUM;\n",
		      P, BLOB_HEADER, BLOB_HEADER, PU, PU);
	ox_buf_printf(c, "\t%s_W = b + %d;\n\treturn 0;\n}\n\n", P, BLOB_HEADER);
}
