/* emit_data.c: C emitters for data movement and shape ops.
 *
 * Elements are moved in their storage type (f16/bf16 as uint16_t, bool as
 * uint8_t) without conversion, so every dtype takes the same path; only
 * Range computes values. Transpose, Slice, Expand, Tile and Pad print the
 * copy plan of ir/infer_data.c (ox_ir_data_plan) as nested loops, after
 * dropping unit axes and merging axes that are contiguous in both input
 * and output, with a memcpy for the innermost run when it is contiguous.
 * Sizes are printed with ox_cg_dim: literals when constant (a model with
 * fixed shapes gets the code it always got), else expressions over the
 * run's ox_d[] (docs/dynamic.md). A dim the node reads from data (a
 * Slice's starts, a Split's sizes, an Expand's shape, ...) is computed as
 * the ONNX spec says, checked, and written with ox_cg_set_dim before the
 * copy; such a node returns 2 on bad data (PREFIX_ERR_SHAPE). A Slice or
 * Pad whose parameters are data has no plan: it is printed as loops over
 * the indices computed when the program runs. Index arithmetic uses
 * ptrdiff_t.
 */
#include "../cg.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

#define TABS "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"

static void ind(ox_cg *cg, int depth)
{
	ox_cg_printf(cg, "%.*s", depth, TABS);
}

/* a dim's value when constant, else -1 */
static int64_t cdim(ox_graph *g, ox_dim d)
{
	return ox_dim_eval(g, d);
}

static ox_dim prod(ox_graph *g, const ox_shape *s, int from, int to)
{
	ox_dim p = 1;
	for (int k = from; k < to; k++)
		p = ox_dim_mul(g, p, s->d[k]);
	return p;
}

/* a dim as an element count: the literal, or the run-time expression
 * cast to size_t (for memcpy) */
static const char *count(ox_cg *cg, ox_dim d)
{
	return cdim(cg->g, d) >= 0 ? ox_cg_dim(cg, d) : ox_cg_text(cg, "(size_t)%s", ox_cg_dim(cg, d));
}

/* is d a data symbol that the producer of value id computes? */
static int defined_here(ox_graph *g, ox_dim d, ox_id id)
{
	return ox_dim_defined_by(g, d, id);
}

static int defines_any(ox_graph *g, ox_id id)
{
	const ox_shape *s = &g->vals[id].shape;
	for (int k = 0; k < s->rank; k++)
		if (defined_here(g, s->d[k], id))
			return 1;
	return 0;
}

/* "if (cond)\n\treturn 2;" at indent lvl: data that gives an invalid shape */
static void fail_if(ox_cg *cg, int lvl, const char *cond, const char *why)
{
	cg->fails_shape = 1;
	ox_cg_line(cg, lvl, "if (%s)", cond);
	ox_cg_line(cg, lvl + 1, "return 2; /* %s */", why);
}

/* The output dim d from the C expression v: set when the node defines it,
 * else checked to be what the compiler knows. */
static void set_or_check(ox_cg *cg, int lvl, ox_dim d, ox_id id, const char *v)
{
	char c[4400];
	if (defined_here(cg->g, d, id)) {
		ox_cg_set_dim(cg, lvl, d, v);
		return;
	}
	ox_cg_snprintf(c, sizeof c, "%s != %s", v, ox_cg_dim(cg, d));
	fail_if(cg, lvl, c, "not the shape the compiler inferred");
}

/* A value whose dims were read from data and that the user bounded (--max,
 * --max-elems: v->cap) tighter than its dims' tops: the node checks its
 * element count, which the memory was planned for. */
static void emit_cap(ox_cg *cg, ox_graph *g, ox_id id)
{
	const ox_value *v = &g->vals[id];
	int64_t top = ox_shape_max_numel(g, &v->shape);
	if (v->cap <= 0 || !ox_shape_is_rt(g, &v->shape) || (top >= 0 && top <= v->cap))
		return;
	ox_cg_helper(cg, "data/ox_numel_over",
		     "/* does the product of n dims (none negative) pass lim? */\n"
		     "OX_STATIC OX_UNUSED int ox_numel_over(const int64_t *d, int n, int64_t lim)\n{\n"
		     "\tint64_t t = 1;\n"
		     "\tfor (int k = 0; k < n; k++)\n\t\tif (d[k] == 0)\n\t\t\treturn 0;\n"
		     "\tfor (int k = 0; k < n; k++) {\n"
		     "\t\tif (d[k] > lim / t)\n\t\t\treturn 1;\n"
		     "\t\tt *= d[k];\n\t}\n\treturn 0;\n}\n");
	ox_buf b = {0};
	for (int k = 0; k < v->shape.rank; k++)
		ox_buf_printf(&b, "%s%s", k ? ", " : "", ox_cg_dim(cg, v->shape.d[k]));
	ox_cg_line(cg, 1, "{");
	ox_cg_line(cg, 2, "const int64_t dims[%d] = {%s};", v->shape.rank, b.s);
	char c[128];
	ox_cg_snprintf(c, sizeof c, "ox_numel_over(dims, %d, %lld)", v->shape.rank, (long long)v->cap);
	fail_if(cg, 2, c, "more elements than the memory was planned for (--max)");
	ox_cg_line(cg, 1, "}");
	ox_buf_free(&b);
}

/* A storage-type literal for element k of t: exact for every dtype (raw
 * bits for f16/bf16/f8, integers printed from integers). */
void ox_cg_lit_elem(const ox_tensor *t, int64_t k, char *buf, size_t n)
{
	const unsigned char *p = (const unsigned char *)t->data + k * ox_dtype_size(t->dtype);
	switch (t->dtype) {
	case OX_F32:
	case OX_F64:
		ox_cg_snprintf(buf, n, "%s", ox_cg_lit(t->dtype, ox_tensor_get_f64(t, k)));
		return;
	case OX_F16:
	case OX_BF16: {
		uint16_t h;
		memcpy(&h, p, 2);
		ox_cg_snprintf(buf, n, "0x%04x /* %s %.9g */", h, ox_dtype_name(t->dtype), ox_tensor_get_f64(t, k));
		return;
	}
	case OX_BOOL:
		ox_cg_snprintf(buf, n, "%d", p[0] != 0);
		return;
	case OX_U64: {
		uint64_t u;
		memcpy(&u, p, 8);
		ox_cg_snprintf(buf, n, "UINT64_C(%llu)", (unsigned long long)u);
		return;
	}
	case OX_I64: {
		int64_t v = ox_tensor_get_i64(t, k);
		if (v == INT64_MIN)
			ox_cg_snprintf(buf, n, "INT64_MIN");
		else if (v > INT32_MAX || v < -INT32_MAX)
			ox_cg_snprintf(buf, n, "INT64_C(%lld)", (long long)v);
		else
			ox_cg_snprintf(buf, n, "%lld", (long long)v);
		return;
	}
	case OX_U32:
		ox_cg_snprintf(buf, n, "%lluu", (unsigned long long)ox_tensor_get_i64(t, k));
		return;
	}
	if (ox_dtype_is_int(t->dtype))
		ox_cg_snprintf(buf, n, "%lld", (long long)ox_tensor_get_i64(t, k));
	else
		ox_cg_snprintf(buf, n, "0x%02x", p[0]); /* float8 kinds: the byte */
}

/* a literal of dtype for the value v (Pad's value attribute, Dropout's
 * mask); -1 for a float8 dtype with v != 0, which has no converter here */
static int lit_value(int dtype, double v, char *buf, size_t n)
{
	unsigned char bytes[16] = {0};
	ox_tensor t = {.dtype = dtype, .data = bytes, .nbytes = ox_dtype_size(dtype)};
	if (ox_dtype_is_int(dtype) || dtype == OX_BOOL || dtype == OX_F32 || dtype == OX_F64 ||
	    dtype == OX_F16 || dtype == OX_BF16)
		ox_tensor_set_f64(&t, 0, v);
	else if (v != 0)
		return -1;
	ox_cg_lit_elem(&t, 0, buf, n);
	return 0;
}

static void emit_fill(ox_cg *cg, const char *dst, ox_dim d, const char *v)
{
	int64_t m = cdim(cg->g, d);
	if (m < 0) {
		ox_cg_printf(cg, "\tfor (ptrdiff_t i = 0; i < %s; i++)\n\t\t%s[i] = %s;\n", ox_cg_dim(cg, d), dst, v);
		return;
	}
	if (m == 0)
		return;
	if (m == 1) {
		ox_cg_printf(cg, "\t%s[0] = %s;\n", dst, v);
		return;
	}
	ox_cg_printf(cg, "\tfor (ptrdiff_t i = 0; i < %lld; i++)\n\t\t%s[i] = %s;\n", (long long)m, dst, v);
}

static void emit_copy(ox_cg *cg, const char *dst, const char *src, ox_dim m)
{
	if (m > 0)
		ox_cg_printf(cg, "\tmemcpy(%s, %s, %lld * sizeof *%s);\n", dst, src, (long long)m, dst);
	else if (m < 0)
		ox_cg_printf(cg, "\tmemcpy(%s, %s, (size_t)%s * sizeof *%s);\n", dst, src, ox_cg_dim(cg, m), dst);
}

/* A Reshape whose target is read from data (ir/infer_data.c,
 * reshape_from_data): resolve its 0s and -1 as ONNX says, check that it
 * holds the input's elements, and set the run-time dims it defines (the
 * others must equal what the compiler knows). Returns 2 when invalid. */
static void emit_reshape_dims(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape, *ys = &g->vals[n->out[0]].shape;
	int m = ys->rank, allowzero = n->opset >= 14 ? (int)ox_attr_int(n, "allowzero", 0) : 0;
	cg->fails_shape = 1;
	ox_cg_line(cg, 1, "/* the target shape, read from the data */");
	ox_cg_line(cg, 1, "int64_t s[%d], known = 1, minus = -1, total = %s;", m, ox_cg_numel(cg, xs));
	for (int k = 0; k < m; k++) {
		ox_cg_line(cg, 1, "s[%d] = (int64_t)in1[%d];", k, k);
		if (allowzero)
			continue;
		ox_cg_line(cg, 1, "if (s[%d] == 0)", k);
		if (k < xs->rank)
			ox_cg_line(cg, 2, "s[%d] = %s; /* 0 copies the input's dim */", k, ox_cg_dim(cg, xs->d[k]));
		else
			ox_cg_line(cg, 2, "return 2;");
	}
	ox_cg_line(cg, 1, "for (int k = 0; k < %d; k++) {", m);
	ox_cg_line(cg, 2, "if (s[k] == -1 && minus < 0)");
	ox_cg_line(cg, 3, "minus = k;");
	ox_cg_line(cg, 2, "else if (s[k] < 0 || (s[k] && known > INT64_MAX / s[k]))");
	ox_cg_line(cg, 3, "return 2;");
	ox_cg_line(cg, 2, "else");
	ox_cg_line(cg, 3, "known *= s[k];");
	ox_cg_line(cg, 1, "}");
	ox_cg_line(cg, 1, "if (minus >= 0) {");
	ox_cg_line(cg, 2, "if (known == 0 || total %% known)");
	ox_cg_line(cg, 3, "return 2;");
	ox_cg_line(cg, 2, "s[minus] = total / known;");
	ox_cg_line(cg, 1, "} else if (known != total) {");
	ox_cg_line(cg, 2, "return 2;");
	ox_cg_line(cg, 1, "}");
	for (int k = 0; k < m; k++) {
		char v[16];
		ox_cg_snprintf(v, sizeof v, "s[%d]", k);
		if (ox_dim_defined_by(g, ys->d[k], n->out[0])) {
			ox_cg_set_dim(cg, 1, ys->d[k], v);
		} else {
			ox_cg_line(cg, 1, "if (s[%d] != %s)", k, ox_cg_dim(cg, ys->d[k]));
			ox_cg_line(cg, 2, "return 2;");
		}
	}
}

/* "prev + var * stride" without the noise of zeros and ones; neg: minus */
static void lin(char *buf, size_t n, const char *prev, const char *var, const char *stride, int neg)
{
	int p0 = !strcmp(prev, "0");
	if (!strcmp(stride, "0"))
		ox_cg_snprintf(buf, n, "%s", prev);
	else if (!strcmp(stride, "1"))
		ox_cg_snprintf(buf, n, p0 ? "%s%s%s" : "%s%s%s", p0 ? (neg ? "-" : "") : prev, p0 ? "" : neg ? " - " : " + ", var);
	else
		ox_cg_snprintf(buf, n, "%s%s%s * %s", p0 ? (neg ? "-" : "") : prev, p0 ? "" : neg ? " - " : " + ", var, stride);
}

/* "base + off", or base when off is "0" */
static void at(char *buf, size_t n, const char *base, const char *off)
{
	ox_cg_snprintf(buf, n, strcmp(off, "0") ? "%s + %s" : "%s", base, off);
}

/* the input stride of a plan row as C text; bc: it counts only when the
 * broadcast dim is not 1 */
static void in_stride(ox_cg *cg, const ox_plan_axis *a, char *buf, size_t n)
{
	if (!a->bc || a->is == 0)
		ox_cg_snprintf(buf, n, "%s", ox_cg_dim(cg, a->is));
	else if (a->is == 1)
		ox_cg_snprintf(buf, n, "(%s != 1)", ox_cg_dim(cg, a->bc));
	else
		ox_cg_snprintf(buf, n, "%s * (%s != 1)", ox_cg_dim(cg, a->is), ox_cg_dim(cg, a->bc));
}

/* the input index cD of padded axis d (a Pad kind), folded into [0, m) and
 * moved to lo, at indent lvl */
static void emit_fold(ox_cg *cg, ox_graph *g, const ox_plan_axis *a, int d, int lvl)
{
	long long A = cdim(g, a->a), M = cdim(g, a->m), L = cdim(g, a->lo);
	ind(cg, lvl);
	if (a->a)
		ox_cg_printf(cg, "ptrdiff_t c%d = i%d - %s;\n", d, d, ox_cg_dim(cg, a->a));
	else
		ox_cg_printf(cg, "ptrdiff_t c%d = i%d;\n", d, d);
	if (A >= 0 && M >= 0 && L >= 0) {
		long long P = 2 * (M - 1);
		ind(cg, lvl);
		if (a->kind == OX_PLAN_EDGE)
			ox_cg_printf(cg, "c%d = c%d < 0 ? 0 : c%d >= %lld ? %lld : c%d;\n", d, d, d, M, M - 1, d);
		else if (a->kind == OX_PLAN_WRAP)
			ox_cg_printf(cg, "c%d = (c%d %% %lld + %lld) %% %lld;\n", d, d, M, M, M);
		else if (M == 1)
			ox_cg_printf(cg, "c%d = 0;\n", d);
		else {
			ox_cg_printf(cg, "c%d = (c%d %% %lld + %lld) %% %lld; /* reflect: period %lld */\n",
				     d, d, P, P, P, P);
			ox_cg_printf(cg, "%.*sif (c%d >= %lld)\n",
				     lvl, TABS, d, M);
			ox_cg_printf(cg, "%.*s\tc%d = %lld - c%d;\n",
				     lvl, TABS, d, P, d);
		}
	} else {
		/* m is at least 1 (checked before the loops) */
		char m[2100], m1[2100], p[2100];
		ox_cg_snprintf(m, sizeof m, "%s", ox_cg_dim(cg, a->m));
		ox_cg_snprintf(m1, sizeof m1, "%s", ox_cg_dim(cg, ox_dim_sub(g, a->m, 1)));
		ox_cg_snprintf(p, sizeof p, "%s", ox_cg_dim(cg, ox_dim_mul(g, ox_dim_sub(g, a->m, 1), 2)));
		if (a->kind == OX_PLAN_EDGE) {
			ox_cg_line(cg, lvl, "c%d = c%d < 0 ? 0 : c%d >= %s ? %s : c%d;", d, d, d, m, m1, d);
		} else if (a->kind == OX_PLAN_WRAP) {
			ox_cg_line(cg, lvl, "c%d = (c%d %% %s + %s) %% %s;", d, d, m, m, m);
		} else {
			ox_cg_line(cg, lvl, "if (%s > 1) {", m);
			ox_cg_line(cg, lvl + 1, "c%d = (c%d %% %s + %s) %% %s; /* reflect */", d, d, p, p, p);
			ox_cg_line(cg, lvl + 1, "if (c%d >= %s)", d, m);
			ox_cg_line(cg, lvl + 2, "c%d = %s - c%d;", d, p, d);
			ox_cg_line(cg, lvl, "} else {");
			ox_cg_line(cg, lvl + 1, "c%d = 0;", d);
			ox_cg_line(cg, lvl, "}");
		}
	}
	if (a->lo) {
		ind(cg, lvl);
		ox_cg_printf(cg, "c%d += %s;\n", d, ox_cg_dim(cg, a->lo));
	}
}

/* the input stride of row a, signed where it matters for merging */
static int negs(const ox_plan_axis *a)
{
	return a->neg && a->is != 0;
}

/* Print a copy plan (see ox_ir_data_plan) as nested loops. */
static void emit_plan(ox_cg *cg, ox_plan *p)
{
	ox_graph *g = cg->g;
	ox_plan_axis *ax = p->ax;
	int r = 0;
	for (int k = 0; k < p->nax; k++) {
		ox_plan_axis *a = &ax[k];
		if (a->n == 0) {
			ox_cg_printf(cg, "\t/* nothing to copy: an extent is 0 */\n");
			return;
		}
		if (a->n == 1 && a->kind == OX_PLAN_LIN)
			continue;
		ox_plan_axis *q = r ? &ax[r - 1] : NULL;
		if (q && q->kind == OX_PLAN_LIN && a->kind == OX_PLAN_LIN && !q->bc && !a->bc && negs(q) == negs(a) &&
		    q->is == ox_dim_mul(g, a->n, a->is) && q->os == ox_dim_mul(g, a->n, a->os)) {
			q->n = ox_dim_mul(g, q->n, a->n), q->is = a->is, q->os = a->os, q->neg = a->neg;
			continue;
		}
		if (r != k)
			ax[r] = *a;
		r++;
	}
	const ox_plan_axis *last = r > 0 ? &ax[r - 1] : NULL;
	int run = last && last->kind == OX_PLAN_LIN && last->is == 1 && last->os == 1 && !last->neg && !last->bc;
	int loops = run ? r - 1 : r;
	char pe[4096], qe[4096], tmp[4096], var[32], st[2200];
	ox_cg_snprintf(pe, sizeof pe, "%s", ox_cg_dim(cg, p->ib));
	ox_cg_snprintf(qe, sizeof qe, "%s", ox_cg_dim(cg, p->ob));
	for (int d = 0; d < loops; d++) {
		const ox_plan_axis *a = &ax[d];
		ind(cg, d + 1);
		ox_cg_printf(cg, "for (ptrdiff_t i%d = 0; i%d < %s; i%d++) {\n", d, d, ox_cg_dim(cg, a->n), d);
		ox_cg_snprintf(var, sizeof var, "i%d", d);
		if (a->kind != OX_PLAN_LIN) {
			emit_fold(cg, g, a, d, d + 2);
			ox_cg_snprintf(var, sizeof var, "c%d", d);
		}
		in_stride(cg, a, st, sizeof st);
		lin(tmp, sizeof tmp, pe, var, st, a->neg);
		if (strcmp(tmp, pe)) {
			ind(cg, d + 2);
			ox_cg_printf(cg, "const ptrdiff_t p%d = %s;\n", d, tmp);
			ox_cg_snprintf(pe, sizeof pe, "p%d", d);
		}
		ox_cg_snprintf(var, sizeof var, "i%d", d);
		lin(tmp, sizeof tmp, qe, var, ox_cg_dim(cg, a->os), 0);
		if (strcmp(tmp, qe)) {
			ind(cg, d + 2);
			ox_cg_printf(cg, "const ptrdiff_t q%d = %s;\n", d, tmp);
			ox_cg_snprintf(qe, sizeof qe, "q%d", d);
		}
	}
	ind(cg, loops + 1);
	if (run) {
		char dst[4200], src[4200];
		at(dst, sizeof dst, "out0", qe);
		at(src, sizeof src, "in0", pe);
		ox_cg_printf(cg, "memcpy(%s, %s, %s * sizeof *out0);\n", dst, src, count(cg, last->n));
	} else {
		ox_cg_printf(cg, "out0[%s] = in0[%s];\n", qe, pe);
	}
	for (int d = loops - 1; d >= 0; d--) {
		ind(cg, d + 1);
		ox_cg_printf(cg, "}\n");
	}
}

/* Expand: the output dims read from the shape input, and the run-time
 * checks that input and shape broadcast (each is 1 or the output's dim) */
static void emit_expand_dims(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape, *ys = &g->vals[n->out[0]].shape;
	ox_sv sh[OX_MAX_RANK];
	int m = ox_in_svals(g, n, 1, sh, OX_MAX_RANK);
	if (!ox_in(g, n, 1)) { /* (opt/symshape.c: the target is the output's dims) */
		m = ys->rank;
		for (int k = 0; k < m; k++)
			sh[k] = ys->d[k] >= 0 ? (ox_sv){OX_SV_CONST, ys->d[k], 0} : (ox_sv){OX_SV_DIM, 0, ys->d[k]};
	} else if (m < 0) {
		m = (int)ox_shape_numel(&g->vals[n->in[1]].shape);
		for (int k = 0; k < m; k++)
			sh[k] = (ox_sv){OX_SV_UNKNOWN, 0, 0};
	}
	int r = ys->rank;
	char c[4400], sv[32], x[2100], y[2100];
	for (int i = 0; i < r; i++) {
		int j = i - (r - xs->rank), k = i - (r - m);
		ox_dim Y = ys->d[i], xd = j >= 0 ? xs->d[j] : 1;
		ox_cg_snprintf(x, sizeof x, "%s", ox_cg_dim(cg, xd));
		ox_cg_snprintf(y, sizeof y, "%s", ox_cg_dim(cg, Y));
		sv[0] = 0;
		if (k >= 0 && sh[k].kind == OX_SV_UNKNOWN) {
			ox_cg_snprintf(sv, sizeof sv, "s%d", i);
			ox_cg_line(cg, 1, "const int64_t s%d = (int64_t)in1[%d];", i, k);
		} else if (k >= 0 && sh[k].kind == OX_SV_DIM && sh[k].d != Y && ox_dim_is_rt(g, sh[k].d)) {
			ox_cg_snprintf(c, sizeof c, "%s != 1 && %s != %s", ox_cg_dim(cg, sh[k].d), ox_cg_dim(cg, sh[k].d), y);
			fail_if(cg, 1, c, "the shape does not broadcast");
		}
		if (defined_here(g, Y, n->out[0])) {
			/* the input's dim is 1, or may be 1 when the program runs */
			if (xd == 1) {
				ox_cg_set_dim(cg, 1, Y, sv);
				continue;
			}
			ox_cg_snprintf(c, sizeof c, "%s != 1 && %s != 1 && %s != %s", sv, x, sv, x);
			fail_if(cg, 1, c, "the shape does not broadcast");
			ox_cg_snprintf(c, sizeof c, "%s == 1 ? %s : %s", sv, x, sv);
			ox_cg_set_dim(cg, 1, Y, c);
			continue;
		}
		if (sv[0]) {
			ox_cg_snprintf(c, sizeof c, "%s != 1 && %s != %s", sv, sv, y);
			fail_if(cg, 1, c, "the shape does not broadcast");
		}
		if (xd != Y && ox_dim_is_rt(g, xd)) {
			ox_cg_snprintf(c, sizeof c, "%s != 1 && %s != %s", x, x, y);
			fail_if(cg, 1, c, "the input does not broadcast");
		}
	}
	emit_cap(cg, g, n->out[0]);
}

/* Tile: the output dims read from the repeats input */
static void emit_tile_dims(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape, *ys = &g->vals[n->out[0]].shape;
	char c[2200], x[2100];
	for (int k = 0; k < ys->rank; k++) {
		if (!defined_here(g, ys->d[k], n->out[0]))
			continue;
		ox_cg_snprintf(x, sizeof x, "%s", ox_cg_dim(cg, xs->d[k]));
		ox_cg_line(cg, 1, "const int64_t r%d = (int64_t)in1[%d];", k, k);
		ox_cg_snprintf(c, sizeof c, "r%d < 0 || (r%d && %s > INT64_MAX / r%d)", k, k, x, k);
		fail_if(cg, 1, c, "a negative or too large repeat");
		ox_cg_snprintf(c, sizeof c, "%s * r%d", x, k);
		ox_cg_set_dim(cg, 1, ys->d[k], xs->d[k] == 1 ? c + 4 : c);
	}
	emit_cap(cg, g, n->out[0]);
}

/* Pad with run-time dims: what is left of an axis after its crops must
 * not be negative, nor empty where edge/reflect/wrap read it */
static void emit_pad_checks(ox_cg *cg, ox_graph *g, const ox_plan *p)
{
	char c[4400];
	for (int k = 0; k < p->nax; k++) {
		const ox_plan_axis *a = &p->ax[k];
		ox_dim m = a->kind == OX_PLAN_LIN ? a->n : a->m;
		int64_t lo, hi;
		if (ox_dim_range(g, m, &lo, &hi) || lo < 0) {
			ox_cg_snprintf(c, sizeof c, "%s < 0", ox_cg_dim(cg, m));
			fail_if(cg, 1, c, "the pads crop more than the axis holds");
		}
		if (a->kind != OX_PLAN_LIN && (ox_dim_range(g, m, &lo, &hi) || lo < 1)) {
			ox_cg_snprintf(c, sizeof c, "%s < 1 && %s > 0", ox_cg_dim(cg, m), ox_cg_dim(cg, a->n));
			fail_if(cg, 1, c, "nothing left to pad from");
		}
	}
}

/* Pad's value as a storage-type literal or in2[0]; -1 if it cannot be spelt */
static int pad_value(ox_graph *g, ox_node *n, char *v, size_t len)
{
	if (n->nin > 2 && n->in[2] >= 0) {
		ox_cg_snprintf(v, len, "in2[0]");
		return 0;
	}
	if (lit_value(g->vals[n->out[0]].dtype, n->opset < 11 ? ox_attr_float(n, "value", 0) : 0, v, len))
		return ox_error(g, n, "cannot spell the pad value as %s", ox_dtype_name(g->vals[n->out[0]].dtype));
	return 0;
}

/* the strides of shape s as a C array `name` (for the loops below) */
static void emit_strides(ox_cg *cg, const char *name, const ox_shape *s)
{
	ox_buf b = {0};
	const char *e[OX_MAX_RANK];
	ox_dim p = 1;
	for (int k = s->rank - 1; k >= 0; k--) {
		e[k] = ox_cg_dim(cg, p); /* the ring holds 32 */
		p = ox_dim_mul(cg->g, p, s->d[k]);
	}
	for (int k = 0; k < s->rank; k++)
		ox_buf_printf(&b, "%s%s", k ? ", " : "", e[k]);
	ox_cg_line(cg, 1, "const int64_t %s[%d] = {%s};", name, s->rank ? s->rank : 1, s->rank ? b.s : "1");
	ox_buf_free(&b);
}

/* "int64_t name[r] = {dims of s};" */
static void emit_dims_array(ox_cg *cg, const char *name, const ox_shape *s, int cnst)
{
	ox_buf b = {0};
	for (int k = 0; k < s->rank; k++)
		ox_buf_printf(&b, "%s%s", k ? ", " : "", ox_cg_dim(cg, s->d[k]));
	ox_cg_line(cg, 1, "%sint64_t %s[%d] = {%s};", cnst ? "const " : "", name, s->rank ? s->rank : 1,
		   s->rank ? b.s : "0");
	ox_buf_free(&b);
}

/* A Slice whose starts, ends, axes or steps are read from data: each
 * axis's first index st[], step sp[] and length ln[] computed as the
 * ONNX spec says, the output dims set (or checked), then one loop per
 * axis in output order. */
static int emit_slice_rt(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape, *ys = &g->vals[n->out[0]].shape;
	int r = xs->rank, m = (int)ox_shape_numel(&g->vals[n->in[1]].shape);
	int R = r ? r : 1;
	ox_cg_line(cg, 1, "/* the slice, read from the data: first index, step and length per axis */");
	emit_dims_array(cg, "d", xs, 1);
	ox_cg_line(cg, 1, "int64_t st[%d], sp[%d], ln[%d];", R, R, R);
	ox_cg_line(cg, 1, "for (int k = 0; k < %d; k++)", r);
	ox_cg_line(cg, 2, "st[k] = 0, sp[k] = 1, ln[k] = d[k];");
	if (m > 0) {
		int has_axes = n->nin > 3 && n->in[3] >= 0, has_steps = n->nin > 4 && n->in[4] >= 0;
		cg->fails_shape = 1;
		ox_cg_line(cg, 1, "unsigned seen = 0;");
		ox_cg_line(cg, 1, "for (int i = 0; i < %d; i++) {", m);
		ox_cg_line(cg, 2, "int64_t a = %s;", has_axes ? "(int64_t)in3[i]" : "i");
		if (has_axes) {
			ox_cg_line(cg, 2, "if (a < 0)");
			ox_cg_line(cg, 3, "a += %d;", r);
		}
		ox_cg_line(cg, 2, "int64_t s = (int64_t)in1[i], e = (int64_t)in2[i], p = %s, n = d[a];",
			   has_steps ? "(int64_t)in4[i]" : "1");
		ox_cg_line(cg, 2, "if (a < 0 || a >= %d || (seen >> a & 1) || p == 0)", r);
		ox_cg_line(cg, 3, "return 2; /* an axis out of range or repeated, or a step of 0 */");
		ox_cg_line(cg, 2, "seen |= 1u << a;");
		ox_cg_line(cg, 2, "if (s < 0)");
		ox_cg_line(cg, 3, "s += n;");
		ox_cg_line(cg, 2, "if (e < 0)");
		ox_cg_line(cg, 3, "e += n;");
		ox_cg_line(cg, 2, "if (p > 0) {");
		ox_cg_line(cg, 3, "s = s < 0 ? 0 : s > n ? n : s;");
		ox_cg_line(cg, 3, "e = e < 0 ? 0 : e > n ? n : e;");
		ox_cg_line(cg, 3, "ln[a] = e > s ? (e - s - 1) / p + 1 : 0;");
		ox_cg_line(cg, 2, "} else {");
		ox_cg_line(cg, 3, "s = s < 0 ? 0 : s > n - 1 ? n - 1 : s;");
		ox_cg_line(cg, 3, "e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;");
		ox_cg_line(cg, 3, "ln[a] = n > 0 && s > e ? (p == INT64_MIN ? 1 : (s - e - 1) / -p + 1) : 0;");
		ox_cg_line(cg, 2, "}");
		ox_cg_line(cg, 2, "st[a] = s > 0 ? s : 0, sp[a] = p;");
		ox_cg_line(cg, 1, "}");
	}
	for (int k = 0; k < r; k++) {
		char v[32];
		ox_cg_snprintf(v, sizeof v, "ln[%d]", k);
		set_or_check(cg, 1, ys->d[k], n->out[0], v);
	}
	emit_cap(cg, g, n->out[0]);
	emit_strides(cg, "xs", xs);
	if (r == 0) {
		ox_cg_line(cg, 1, "out0[0] = in0[0];");
		return 0;
	}
	ox_cg_line(cg, 1, "ptrdiff_t o = 0;");
	for (int k = 0; k < r; k++) {
		ox_cg_line(cg, k + 1, "for (ptrdiff_t i%d = 0; i%d < ln[%d]; i%d++) {", k, k, k, k);
		if (k)
			ox_cg_line(cg, k + 2, "const ptrdiff_t p%d = p%d + (st[%d] + i%d * sp[%d]) * xs[%d];", k, k - 1, k, k, k, k);
		else
			ox_cg_line(cg, k + 2, "const ptrdiff_t p0 = (st[0] + i0 * sp[0]) * xs[0];");
	}
	ox_cg_line(cg, r + 1, "out0[o++] = in0[p%d];", r - 1);
	for (int k = r - 1; k >= 0; k--)
		ox_cg_line(cg, k + 1, "}");
	return 0;
}

/* A Pad whose pads (or axes) are read from data: the begin and end pads
 * b[], e[] of every axis, the output dims set (or checked) and the
 * ONNX conditions checked; in constant mode the output filled with the
 * value and the part of the input that is left copied inside, else every
 * output element read from its folded input coordinate. */
static int emit_pad_rt(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape, *ys = &g->vals[n->out[0]].shape;
	int r = xs->rank, R = r ? r : 1;
	const char *mode = ox_attr_str(n, "mode", "constant");
	int kind = !strcmp(mode, "edge") ? OX_PLAN_EDGE : !strcmp(mode, "reflect") ? OX_PLAN_REFLECT
		 : !strcmp(mode, "wrap") ? OX_PLAN_WRAP : OX_PLAN_LIN;
	int has_axes = n->nin > 3 && n->in[3] >= 0;
	int na = has_axes ? (int)ox_shape_numel(&g->vals[n->in[3]].shape) : r;
	char v[128];
	if (kind == OX_PLAN_LIN && pad_value(g, n, v, sizeof v))
		return -1;
	cg->fails_shape = 1;
	ox_cg_line(cg, 1, "/* the pads, read from the data: b[k] before and e[k] after axis k (negative crops) */");
	emit_dims_array(cg, "d", xs, 1);
	ox_cg_line(cg, 1, "int64_t b[%d] = {0}, e[%d] = {0}, o[%d];", R, R, R);
	if (has_axes) {
		ox_cg_line(cg, 1, "unsigned seen = 0;");
		ox_cg_line(cg, 1, "for (int i = 0; i < %d; i++) {", na);
		ox_cg_line(cg, 2, "int64_t a = (int64_t)in3[i];");
		ox_cg_line(cg, 2, "if (a < 0)");
		ox_cg_line(cg, 3, "a += %d;", r);
		ox_cg_line(cg, 2, "if (a < 0 || a >= %d || (seen >> a & 1))", r);
		ox_cg_line(cg, 3, "return 2; /* an axis out of range or repeated */");
		ox_cg_line(cg, 2, "seen |= 1u << a;");
		ox_cg_line(cg, 2, "b[a] = (int64_t)in1[i], e[a] = (int64_t)in1[%d + i];", na);
		ox_cg_line(cg, 1, "}");
	} else {
		ox_cg_line(cg, 1, "for (int k = 0; k < %d; k++)", r);
		ox_cg_line(cg, 2, "b[k] = (int64_t)in1[k], e[k] = (int64_t)in1[%d + k];", r);
	}
	ox_cg_line(cg, 1, "for (int k = 0; k < %d; k++) {", r);
	ox_cg_line(cg, 2, "if (b[k] < -d[k] || e[k] < -d[k] || b[k] > INT64_C(1) << 48 || e[k] > INT64_C(1) << 48)");
	ox_cg_line(cg, 3, "return 2; /* crops more than the axis holds, or a pad past any size */");
	ox_cg_line(cg, 2, "o[k] = d[k] + b[k] + e[k];");
	ox_cg_line(cg, 2, "if (o[k] < 0)");
	ox_cg_line(cg, 3, "return 2;");
	if (kind != OX_PLAN_LIN) {
		ox_cg_line(cg, 2, "if (o[k] > 0 && d[k] + (b[k] < 0 ? b[k] : 0) + (e[k] < 0 ? e[k] : 0) == 0)");
		ox_cg_line(cg, 3, "return 2; /* %s cannot pad an empty axis */", mode);
	}
	ox_cg_line(cg, 1, "}");
	for (int k = 0; k < r; k++) {
		char o[32];
		ox_cg_snprintf(o, sizeof o, "o[%d]", k);
		set_or_check(cg, 1, ys->d[k], n->out[0], o);
	}
	emit_cap(cg, g, n->out[0]);
	if (kind == OX_PLAN_LIN)
		emit_fill(cg, "out0", ox_shape_numel_dim(g, ys), v);
	emit_strides(cg, "xs", xs);
	emit_strides(cg, "ys", ys);
	if (r == 0) {
		ox_cg_line(cg, 1, "out0[0] = in0[0];");
		return 0;
	}
	/* per axis: m elements of the input from lo, placed at a */
	ox_cg_line(cg, 1, "int64_t lo[%d], m[%d], a[%d];", R, R, R);
	ox_cg_line(cg, 1, "for (int k = 0; k < %d; k++) {", r);
	ox_cg_line(cg, 2, "lo[k] = b[k] < 0 ? -b[k] : 0, a[k] = b[k] > 0 ? b[k] : 0;");
	ox_cg_line(cg, 2, "m[k] = d[k] - lo[k] - (e[k] < 0 ? -e[k] : 0);");
	ox_cg_line(cg, 1, "}");
	for (int k = 0; k < r; k++) {
		char pp[16] = "", qq[16] = "";
		if (k) {
			ox_cg_snprintf(pp, sizeof pp, "p%d + ", k - 1);
			ox_cg_snprintf(qq, sizeof qq, "q%d + ", k - 1);
		}
		if (kind == OX_PLAN_LIN) {
			ox_cg_line(cg, k + 1, "for (ptrdiff_t i%d = 0; i%d < m[%d]; i%d++) {", k, k, k, k);
			ox_cg_lstart(cg, k + 2, "const ptrdiff_t p%d = %s(lo[%d] + i%d) * xs[%d], ", k, pp, k, k, k);
			ox_cg_printf(cg, "q%d = %s(a[%d] + i%d) * ys[%d];\n", k, qq, k, k, k);
			continue;
		}
		ox_cg_line(cg, k + 1, "for (ptrdiff_t i%d = 0; i%d < o[%d]; i%d++) {", k, k, k, k);
		ox_cg_line(cg, k + 2, "ptrdiff_t c%d = i%d - a[%d];", k, k, k);
		if (kind == OX_PLAN_EDGE) {
			ox_cg_line(cg, k + 2, "c%d = c%d < 0 ? 0 : c%d >= m[%d] ? m[%d] - 1 : c%d;", k, k, k, k, k, k);
		} else if (kind == OX_PLAN_WRAP) {
			ox_cg_line(cg, k + 2, "c%d = (c%d %% m[%d] + m[%d]) %% m[%d];", k, k, k, k, k);
		} else {
			ox_cg_line(cg, k + 2, "if (m[%d] > 1) {", k);
			ox_cg_line(cg, k + 3, "const ptrdiff_t period = 2 * (m[%d] - 1);", k);
			ox_cg_line(cg, k + 3, "c%d = (c%d %% period + period) %% period;", k, k);
			ox_cg_line(cg, k + 3, "if (c%d >= m[%d])", k, k);
			ox_cg_line(cg, k + 4, "c%d = period - c%d;", k, k);
			ox_cg_line(cg, k + 2, "} else {");
			ox_cg_line(cg, k + 3, "c%d = 0;", k);
			ox_cg_line(cg, k + 2, "}");
		}
		ox_cg_lstart(cg, k + 2, "const ptrdiff_t p%d = %s(lo[%d] + c%d) * xs[%d], ", k, pp, k, k, k);
		ox_cg_printf(cg, "q%d = %si%d * ys[%d];\n", k, qq, k, k);
	}
	ox_cg_line(cg, r + 1, "out0[q%d] = in0[p%d];", r - 1, r - 1);
	for (int k = r - 1; k >= 0; k--)
		ox_cg_line(cg, k + 1, "}");
	return 0;
}

static int emit_plan_op(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_plan p;
	int rc = ox_ir_data_plan(g, n, &p);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return n->op == OX_OP_Slice ? emit_slice_rt(cg, g, n) : emit_pad_rt(cg, g, n);
	if (n->op == OX_OP_Expand)
		emit_expand_dims(cg, g, n);
	else if (n->op == OX_OP_Tile)
		emit_tile_dims(cg, g, n);
	else if (n->op == OX_OP_Pad && ox_node_rt(g, n))
		emit_pad_checks(cg, g, &p);
	if (n->op == OX_OP_Pad && !strcmp(ox_attr_str(n, "mode", "constant"), "constant")) {
		char v[128];
		if (pad_value(g, n, v, sizeof v))
			return -1;
		emit_fill(cg, "out0", ox_shape_numel_dim(g, &g->vals[n->out[0]].shape), v);
	}
	emit_plan(cg, &p);
	return 0;
}

static int emit_concat(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *ys = &g->vals[n->out[0]].shape;
	int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), ys->rank);
	/* dims off the axis that inference took on trust: equal when it runs */
	for (int k = 0; k < n->nin; k++)
		for (int d = 0; d < ys->rank && n->in[k] >= 0; d++)
			if (d != axis)
				ox_cg_check_eq(cg, g->vals[n->in[k]].shape.d[d], ys->d[d], "the inputs' dims differ");
	ox_dim outer = prod(g, ys, 0, axis), row = prod(g, ys, axis, ys->rank), off = 0;
	if (outer == 0 || row == 0)
		return 0;
	int loop = outer != 1;
	char o[2100], w[2100];
	if (loop)
		ox_cg_printf(cg, "\tfor (ptrdiff_t o = 0; o < %s; o++) {\n", ox_cg_dim(cg, outer));
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0)
			continue;
		ox_dim blk = prod(g, &g->vals[n->in[k]].shape, axis, ys->rank);
		if (!blk)
			continue;
		ox_cg_snprintf(o, sizeof o, "%s", ox_cg_dim(cg, off));
		ox_cg_snprintf(w, sizeof w, "%s", ox_cg_dim(cg, row));
		if (loop)
			ox_cg_printf(cg, "\t\tmemcpy(out0 + o * %s + %s, in%d + o * %s, %s * sizeof *out0);\n",
				     w, o, k, ox_cg_dim(cg, blk), count(cg, blk));
		else
			ox_cg_printf(cg, "\tmemcpy(out0 + %s, in%d, %s * sizeof *out0);\n", o, k, count(cg, blk));
		off = ox_dim_add(g, off, blk);
	}
	if (loop)
		ox_cg_printf(cg, "\t}\n");
	return 0;
}

static int emit_split(ox_cg *cg, ox_graph *g, ox_node *n)
{
	static ox_dim sizes[4096];
	int axis;
	if (n->nout > 4096)
		return ox_error(g, n, "too many outputs");
	int rc = ox_ir_data_split(g, n, &axis, sizes);
	if (rc < 0)
		return -1;
	const ox_shape *xs = &g->vals[n->in[0]].shape;
	ox_dim outer = prod(g, xs, 0, axis), inner = prod(g, xs, axis + 1, xs->rank), D = xs->d[axis];
	ox_dim row = ox_dim_mul(g, D, inner), off = 0;
	char in[2100], o[2100], w[2100], b[2100];
	ox_cg_snprintf(in, sizeof in, "%s", ox_cg_dim(cg, inner));
	if (rc > 0) {
		/* the sizes, read from the data: at[k] is where piece k starts */
		ox_cg_line(cg, 1, "/* the sizes, read from the data */");
		ox_cg_line(cg, 1, "int64_t at[%d];", n->nout + 1);
		ox_cg_line(cg, 1, "at[0] = 0;");
		ox_cg_line(cg, 1, "for (int k = 0; k < %d; k++) {", n->nout);
		ox_cg_line(cg, 2, "const int64_t s = (int64_t)in1[k];");
		ox_cg_snprintf(b, sizeof b, "s < 0 || s > %s - at[k]", ox_cg_dim(cg, D));
		fail_if(cg, 2, b, "the sizes do not add up to the axis");
		ox_cg_line(cg, 2, "at[k + 1] = at[k] + s;");
		ox_cg_line(cg, 1, "}");
		ox_cg_snprintf(b, sizeof b, "at[%d] != %s", n->nout, ox_cg_dim(cg, D));
		fail_if(cg, 1, b, "the sizes do not add up to the axis");
		for (int k = 0; k < n->nout; k++) {
			if (n->out[k] < 0)
				continue;
			ox_cg_snprintf(b, sizeof b, "at[%d] - at[%d]", k + 1, k);
			set_or_check(cg, 1, sizes[k], n->out[k], b);
			emit_cap(cg, g, n->out[k]);
		}
	} else {
		ox_dim sum = 0;
		for (int k = 0; k < n->nout; k++)
			sum = ox_dim_add(g, sum, sizes[k]);
		ox_cg_check_eq(cg, sum, D, "the sizes do not add up to the axis");
	}
	if (outer == 0 || row == 0)
		return 0;
	int loop = outer != 1;
	if (loop)
		ox_cg_printf(cg, "\tfor (ptrdiff_t o = 0; o < %s; o++) {\n", ox_cg_dim(cg, outer));
	for (int k = 0; k < n->nout; k++) {
		ox_dim blk = ox_dim_mul(g, sizes[k], inner);
		if (rc > 0)
			ox_cg_snprintf(o, sizeof o, inner == 1 ? "at[%d]" : "at[%d] * %s", k, in);
		else
			ox_cg_snprintf(o, sizeof o, "%s", ox_cg_dim(cg, off));
		if (n->out[k] >= 0 && blk) {
			ox_cg_snprintf(w, sizeof w, "%s", ox_cg_dim(cg, row));
			if (loop)
				ox_cg_printf(cg, "\t\tmemcpy(out%d + o * %s, in0 + o * %s + %s, %s * sizeof *out%d);\n",
					     k, ox_cg_dim(cg, blk), w, o, count(cg, blk), k);
			else
				ox_cg_printf(cg, "\tmemcpy(out%d, in0 + %s, %s * sizeof *out%d);\n", k, o, count(cg, blk), k);
		}
		off = ox_dim_add(g, off, blk);
	}
	if (loop)
		ox_cg_printf(cg, "\t}\n");
	return 0;
}

/* the checked index k from in1[j] on an axis of d elements (run-time d:
 * ox_cg_index's check with the dim's expression) */
static void emit_gather_index(ox_cg *cg, int lvl, ox_dim d)
{
	if (cdim(cg->g, d) >= 0) {
		ox_cg_index(cg, lvl, "k", "in1[j]", cdim(cg->g, d));
		return;
	}
	const char *D = ox_cg_dim(cg, d);
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, lvl, "int64_t k = (int64_t)in1[j];");
	ox_cg_line(cg, lvl, "if (k < 0)");
	ox_cg_line(cg, lvl + 1, "k += %s;", D);
	ox_cg_line(cg, lvl, "if (k < 0 || k >= %s)", D);
	ox_cg_line(cg, lvl + 1, "return 1; /* index out of range */");
}

static int emit_gather(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape;
	int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), xs->rank);
	ox_dim outer = prod(g, xs, 0, axis), d = xs->d[axis], inner = prod(g, xs, axis + 1, xs->rank);
	ox_dim m = ox_shape_numel_dim(g, &g->vals[n->in[1]].shape);
	if (outer == 0 || m == 0 || inner == 0)
		return 0;
	if (d == 0)
		return ox_error(g, n, "gathering from an empty axis");
	int t = 1; /* indentation */
	if (outer != 1) {
		ox_cg_printf(cg, "\tfor (ptrdiff_t o = 0; o < %s; o++) {\n", ox_cg_dim(cg, outer));
		t = 2;
	}
	ind(cg, t);
	ox_cg_printf(cg, "for (ptrdiff_t j = 0; j < %s; j++) {\n", ox_cg_dim(cg, m));
	const ox_tensor *ci = ox_in_const(g, n, 1);
	if (ci && cdim(g, d) >= 0) {
		/* constant indices: checked here, once */
		long long D = cdim(g, d);
		for (int64_t j = 0; j < ox_tensor_numel(ci); j++) {
			int64_t k = (int64_t)ox_tensor_get_f64(ci, j);
			if (k < -D || k >= D)
				return ox_error(g, n, "index %lld is out of range for an axis of %lld", (long long)k, D);
		}
		ind(cg, t + 1);
		ox_cg_printf(cg, "int64_t k = (int64_t)in1[j];\n");
		ind(cg, t + 1);
		ox_cg_printf(cg, "if (k < 0)\n");
		ind(cg, t + 2);
		ox_cg_printf(cg, "k += %lld; /* the constant indices are in range (checked by onnxcc) */\n", D);
	} else {
		emit_gather_index(cg, t + 1, d);
	}
	char dst[4400], src[4400], M[2100], Dd[2100], I[2100];
	ox_cg_snprintf(M, sizeof M, "%s", ox_cg_dim(cg, m));
	ox_cg_snprintf(Dd, sizeof Dd, "%s", ox_cg_dim(cg, d));
	ox_cg_snprintf(I, sizeof I, "%s", ox_cg_dim(cg, inner));
	if (outer != 1) {
		ox_cg_snprintf(dst, sizeof dst, inner != 1 ? "(o * %s + j)" : "o * %s + j", M);
		ox_cg_snprintf(src, sizeof src, inner != 1 ? "(o * %s + k)" : "o * %s + k", Dd);
	} else {
		ox_cg_snprintf(dst, sizeof dst, "j");
		ox_cg_snprintf(src, sizeof src, "k");
	}
	ind(cg, t + 1);
	if (inner == 1)
		ox_cg_printf(cg, "out0[%s] = in0[%s];\n", dst, src);
	else
		ox_cg_printf(cg, "memcpy(out0 + %s * %s, in0 + %s * %s, %s * sizeof *out0);\n",
			     dst, I, src, I, count(cg, inner));
	ind(cg, t);
	ox_cg_printf(cg, "}\n");
	if (outer != 1)
		ox_cg_printf(cg, "\t}\n");
	return 0;
}

/* Range's length read from data: ceil((limit - start) / delta), at least
 * 0, computed as ir/infer_data.c does for constants */
static void emit_range_len(ox_cg *cg, ox_graph *g, ox_node *n, ox_dim len)
{
	int dt = g->vals[n->in[0]].dtype;
	ox_cg_line(cg, 1, "/* the length, read from the data: ceil((limit - start) / delta), at least 0 */");
	if (ox_dtype_is_float(dt)) {
		char s[3][64];
		for (int k = 0; k < 3; k++) {
			char e[16];
			ox_cg_snprintf(e, sizeof e, "in%d[0]", k);
			ox_cg_snprintf(s[k], sizeof s[k], "%s", ox_cg_load(dt, e));
		}
		ox_cg_line(cg, 1, "const double s = (double)%s, l = (double)%s, dl = (double)%s;", s[0], s[1], s[2]);
		fail_if(cg, 1, "dl == 0 || s != s || l != l || dl != dl", "a delta of 0, or NaN");
		ox_cg_line(cg, 1, "const double c = ceil((l - s) / dl);");
		fail_if(cg, 1, "c > 0x1p40", "too long");
		ox_cg_set_dim(cg, 1, len, "c > 0 ? (int64_t)c : 0");
		return;
	}
	/* in unsigned steps that cannot overflow, for either sign */
	ox_cg_line(cg, 1, "const int64_t s = (int64_t)in0[0], l = (int64_t)in1[0], dl = (int64_t)in2[0];");
	fail_if(cg, 1, "dl == 0", "a delta of 0");
	ox_cg_line(cg, 1, "uint64_t c = 0;");
	ox_cg_line(cg, 1, "if ((dl > 0 && l > s) || (dl < 0 && l < s)) {");
	ox_cg_line(cg, 2, "const uint64_t span = dl > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;");
	ox_cg_line(cg, 2, "const uint64_t ad = dl > 0 ? (uint64_t)dl : 0u - (uint64_t)dl;");
	ox_cg_line(cg, 2, "c = span / ad + (span %% ad != 0);");
	ox_cg_line(cg, 1, "}");
	fail_if(cg, 1, "c > (uint64_t)INT64_MAX", "too long");
	ox_cg_set_dim(cg, 1, len, "(int64_t)c");
}

static int emit_range(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	ox_dim len = y->shape.d[0];
	int dt = y->dtype;
	if (!ox_dtype_is_float(dt) && !ox_dtype_is_int(dt))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(dt));
	if (defined_here(g, len, n->out[0])) {
		emit_range_len(cg, g, n, len);
		emit_cap(cg, g, n->out[0]);
	}
	if (len == 0)
		return 0;
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	char body[400];
	if (ox_dtype_is_float(dt)) {
		char s[64], d[64];
		ox_cg_snprintf(s, sizeof s, "%s", ox_cg_load(dt, "in0[0]"));
		ox_cg_snprintf(d, sizeof d, "%s", ox_cg_load(dt, "in2[0]"));
		char e[200];
		ox_cg_snprintf(e, sizeof e, "%s + (%s)i * %s", s, C, d);
		ox_cg_snprintf(body, sizeof body, "out0[i] = %s;\n", ox_cg_store(dt, e));
	} else {
		/* in uint64, which wraps: start and delta come at run time and may
		 * not be the ones the length was computed from */
		ox_cg_snprintf(body, sizeof body, "out0[i] = (%s)((uint64_t)in0[0] + (uint64_t)i * (uint64_t)in2[0]);\n", T);
	}
	return ox_cg_map(cg, g, &len, 1, "", body);
}

/* Squeeze or Unsqueeze whose axes are read from data (ir/infer_data.c,
 * squeeze_from_data): the axes checked as ONNX says (Squeeze: in range,
 * no repeats, dims of 1), the output dims set. */
static void emit_squeeze_dims(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape, *ys = &g->vals[n->out[0]].shape;
	int sq = n->op == OX_OP_Squeeze, m = (int)ox_shape_numel(&g->vals[n->in[1]].shape);
	int r = sq ? xs->rank : ys->rank;
	ox_cg_line(cg, 1, "/* the axes, read from the data */");
	emit_dims_array(cg, "d", xs, 1);
	ox_cg_line(cg, 1, "int64_t o[%d];", ys->rank ? ys->rank : 1);
	ox_cg_line(cg, 1, "unsigned mark = 0;");
	ox_cg_line(cg, 1, "for (int i = 0; i < %d; i++) {", m);
	ox_cg_line(cg, 2, "int64_t a = (int64_t)in1[i];");
	ox_cg_line(cg, 2, "if (a < 0)");
	ox_cg_line(cg, 3, "a += %d;", r);
	char c[128];
	ox_cg_snprintf(c, sizeof c, "a < 0 || a >= %d || (mark >> a & 1)%s", r, sq ? " || d[a] != 1" : "");
	fail_if(cg, 2, c, sq ? "an axis out of range, repeated, or not of size 1" : "an axis out of range or repeated");
	ox_cg_line(cg, 2, "mark |= 1u << a;");
	ox_cg_line(cg, 1, "}");
	if (sq) {
		ox_cg_line(cg, 1, "for (int k = 0, j = 0; k < %d; k++)", xs->rank);
		ox_cg_line(cg, 2, "if (!(mark >> k & 1))");
		ox_cg_line(cg, 3, "o[j++] = d[k];");
	} else {
		ox_cg_line(cg, 1, "for (int k = 0, j = 0; k < %d; k++)", ys->rank);
		ox_cg_line(cg, 2, "o[k] = mark >> k & 1 ? 1 : d[j++];");
	}
	for (int k = 0; k < ys->rank; k++) {
		char v[32];
		ox_cg_snprintf(v, sizeof v, "o[%d]", k);
		set_or_check(cg, 1, ys->d[k], n->out[0], v);
	}
}

int emit_data(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	if (!y)
		return ox_error(g, n, "output 0 is omitted");
	int dt = y->dtype;
	if (dt == OX_STRING || !ox_dtype_size(dt))
		return ox_error(g, n, "dtype %s is not supported by the C target", ox_dtype_name(dt));
	char v[128];
	switch (n->op) {
	case OX_OP_Identity:
	case OX_OP_Reshape:
	case OX_OP_Flatten:
	case OX_OP_Squeeze:
	case OX_OP_Unsqueeze:
		if (defines_any(g, n->out[0])) {
			if (n->op == OX_OP_Reshape)
				emit_reshape_dims(cg, g, n);
			else
				emit_squeeze_dims(cg, g, n);
		}
		if (!cg->dims_only)
			emit_copy(cg, "out0", "in0", ox_shape_numel_dim(g, &y->shape));
		return 0;
	case OX_OP_Dropout:
		if (ox_ir_data_dropout_checks(g, n)) {
			/* training mode (read from data) with a ratio other than 0
			 * drops elements at random, which this code cannot do */
			char c[128];
			if (n->nin > 1 && n->in[1] >= 0)
				ox_cg_snprintf(c, sizeof c, "%s != 0", ox_cg_load(g->vals[n->in[1]].dtype, "in1[0]"));
			else
				ox_cg_snprintf(c, sizeof c, "1");
			ox_cg_fails(cg, OX_CG_FAIL_UNSUPPORTED);
			ox_cg_line(cg, 1, "if (in2[0] && %s)", c);
			ox_cg_line(cg, 2, "return 1; /* training with a ratio other than 0: random dropout is not supported */");
		}
		/* otherwise the identity; the mask says every element was kept */
		emit_copy(cg, "out0", "in0", ox_shape_numel_dim(g, &y->shape));
		if (n->nout > 1 && n->out[1] >= 0) {
			if (lit_value(g->vals[n->out[1]].dtype, 1, v, sizeof v))
				return ox_error(g, n, "cannot spell a mask of dtype %s", ox_dtype_name(g->vals[n->out[1]].dtype));
			emit_fill(cg, "out1", ox_shape_numel_dim(g, &g->vals[n->out[1]].shape), v);
		}
		return 0;
	case OX_OP_Constant:
		return ox_error(g, n, "Constant node was not folded into a constant value");
	case OX_OP_Transpose:
	case OX_OP_Slice:
	case OX_OP_Expand:
	case OX_OP_Tile:
	case OX_OP_Pad:
		return emit_plan_op(cg, g, n);
	case OX_OP_Concat:
		return emit_concat(cg, g, n);
	case OX_OP_Split:
		return emit_split(cg, g, n);
	case OX_OP_Gather:
		return emit_gather(cg, g, n);
	case OX_OP_Shape: {
		const ox_shape *xs = &g->vals[n->in[0]].shape;
		int64_t s = n->opset >= 15 ? ox_attr_int(n, "start", 0) : 0;
		if (s < 0)
			s += xs->rank;
		if (s < 0)
			s = 0;
		for (int64_t i = 0; i < y->shape.d[0]; i++)
			ox_cg_printf(cg, "\tout0[%lld] = %s;\n", (long long)i, ox_cg_dim(cg, xs->d[s + i]));
		return 0;
	}
	case OX_OP_Size:
		ox_cg_printf(cg, "\tout0[0] = %s;\n", ox_cg_numel(cg, &g->vals[n->in[0]].shape));
		return 0;
	case OX_OP_ConstantOfShape: {
		const ox_attr *a = ox_attr_get(n, "value");
		if (a)
			ox_cg_lit_elem(a->t, 0, v, sizeof v);
		else
			lit_value(dt, 0, v, sizeof v); /* the default value is f32 0 */
		if (defines_any(g, n->out[0])) {
			ox_cg_line(cg, 1, "/* the shape, read from the data */");
			for (int k = 0; k < y->shape.rank; k++) {
				char e[32];
				if (!defined_here(g, y->shape.d[k], n->out[0]))
					continue;
				ox_cg_snprintf(e, sizeof e, "(int64_t)in0[%d]", k);
				ox_cg_set_dim(cg, 1, y->shape.d[k], e);
			}
			emit_cap(cg, g, n->out[0]);
		}
		const ox_dim m = ox_shape_numel_dim(g, &y->shape);
		char body[160];
		ox_cg_snprintf(body, sizeof body, "out0[i] = %s;\n", v);
		return ox_cg_map(cg, g, &m, 1, "", body);
	}
	case OX_OP_Range:
		return emit_range(cg, g, n);
	}
	return ox_error(g, n, "no C emitter for this op");
}
