/* emit_data.c: C emitters for data movement and shape ops.
 *
 * Elements are moved in their storage type (f16/bf16 as uint16_t, bool as
 * uint8_t) without conversion, so every dtype takes the same path; only
 * Range computes values. Transpose, Slice, Expand, Tile and Pad print the
 * copy plan of ir/infer_data.c (ox_ir_data_plan) as nested loops over
 * literal bounds, after dropping unit axes and merging axes that are
 * contiguous in both input and output, with a memcpy for the innermost
 * run when it is contiguous. Index arithmetic uses ptrdiff_t.
 */
#include "cg.h"
#include "../ir/family.h"
#include <stdio.h>
#include <string.h>

static void ind(ox_cg *cg, int depth)
{
	ox_cg_printf(cg, "%.*s", depth, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t");
}

static int64_t numel(ox_graph *g, ox_id id)
{
	return ox_shape_numel(&g->vals[id].shape);
}

static int64_t prod(const ox_shape *s, int from, int to)
{
	int64_t p = 1;
	for (int k = from; k < to; k++)
		p *= s->d[k];
	return p;
}

/* A storage-type literal for element k of t: exact for every dtype (raw
 * bits for f16/bf16/f8, integers printed from integers). */
static void lit_elem(const ox_tensor *t, int64_t k, char *buf, size_t n)
{
	const unsigned char *p = (const unsigned char *)t->data + k * ox_dtype_size(t->dtype);
	switch (t->dtype) {
	case OX_F32:
	case OX_F64:
		snprintf(buf, n, "%s", ox_cg_lit(t->dtype, ox_tensor_get_f64(t, k)));
		return;
	case OX_F16:
	case OX_BF16: {
		uint16_t h;
		memcpy(&h, p, 2);
		snprintf(buf, n, "0x%04x /* %s %.9g */", h, ox_dtype_name(t->dtype), ox_tensor_get_f64(t, k));
		return;
	}
	case OX_BOOL:
		snprintf(buf, n, "%d", p[0] != 0);
		return;
	case OX_U64: {
		uint64_t u;
		memcpy(&u, p, 8);
		snprintf(buf, n, "UINT64_C(%llu)", (unsigned long long)u);
		return;
	}
	case OX_I64: {
		int64_t v = ox_tensor_get_i64(t, k);
		if (v == INT64_MIN)
			snprintf(buf, n, "INT64_MIN");
		else if (v > INT32_MAX || v < -INT32_MAX)
			snprintf(buf, n, "INT64_C(%lld)", (long long)v);
		else
			snprintf(buf, n, "%lld", (long long)v);
		return;
	}
	case OX_U32:
		snprintf(buf, n, "%lluu", (unsigned long long)ox_tensor_get_i64(t, k));
		return;
	}
	if (ox_dtype_is_int(t->dtype))
		snprintf(buf, n, "%lld", (long long)ox_tensor_get_i64(t, k));
	else
		snprintf(buf, n, "0x%02x", p[0]); /* float8 kinds: the byte */
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
	lit_elem(&t, 0, buf, n);
	return 0;
}

static void emit_fill(ox_cg *cg, const char *dst, int64_t m, const char *v)
{
	if (m <= 0)
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
		snprintf(v, sizeof v, "s[%d]", k);
		if (ox_dim_defined_by(g, ys->d[k], n->out[0])) {
			ox_cg_set_dim(cg, 1, ys->d[k], v);
		} else {
			ox_cg_line(cg, 1, "if (s[%d] != %s)", k, ox_cg_dim(cg, ys->d[k]));
			ox_cg_line(cg, 2, "return 2;");
		}
	}
}

/* "prev + var * stride" without the noise of zeros and ones */
static void lin(char *buf, size_t n, const char *prev, const char *var, int64_t stride)
{
	int p0 = !strcmp(prev, "0");
	if (stride == 0)
		snprintf(buf, n, "%s", prev);
	else if (stride == 1)
		snprintf(buf, n, p0 ? "%s%s" : "%s + %s", p0 ? "" : prev, var);
	else if (stride == -1)
		snprintf(buf, n, p0 ? "-%s%s" : "%s - %s", p0 ? "" : prev, var);
	else if (stride < 0)
		snprintf(buf, n, p0 ? "-%s%s * %lld" : "%s - %s * %lld", p0 ? "" : prev, var, (long long)-stride);
	else
		snprintf(buf, n, p0 ? "%s%s * %lld" : "%s + %s * %lld", p0 ? "" : prev, var, (long long)stride);
}

/* "base + off", or base when off is "0" */
static void at(char *buf, size_t n, const char *base, const char *off)
{
	snprintf(buf, n, strcmp(off, "0") ? "%s + %s" : "%s", base, off);
}

/* Print a copy plan (see ox_ir_data_plan) as nested loops. */
static void emit_plan(ox_cg *cg, int64_t (*ax)[7], int nax, int64_t ib, int64_t ob)
{
	int r = 0;
	for (int k = 0; k < nax; k++) {
		int64_t *a = ax[k];
		if (a[0] == 0) {
			ox_cg_printf(cg, "\t/* nothing to copy: an extent is 0 */\n");
			return;
		}
		if (a[0] == 1 && a[3] == OX_PLAN_LIN)
			continue;
		int64_t *p = r ? ax[r - 1] : NULL;
		if (p && p[3] == OX_PLAN_LIN && a[3] == OX_PLAN_LIN && p[1] == a[0] * a[1] && p[2] == a[0] * a[2]) {
			p[0] *= a[0], p[1] = a[1], p[2] = a[2];
			continue;
		}
		if (r != k)
			memcpy(ax[r], a, sizeof ax[r]);
		r++;
	}
	int run = r > 0 && ax[r - 1][3] == OX_PLAN_LIN && ax[r - 1][1] == 1 && ax[r - 1][2] == 1;
	int loops = run ? r - 1 : r;
	char pe[128], qe[128], tmp[160], var[32];
	snprintf(pe, sizeof pe, "%lld", (long long)ib);
	snprintf(qe, sizeof qe, "%lld", (long long)ob);
	for (int d = 0; d < loops; d++) {
		int64_t *a = ax[d];
		ind(cg, d + 1);
		ox_cg_printf(cg, "for (ptrdiff_t i%d = 0; i%d < %lld; i%d++) {\n", d, d, (long long)a[0], d);
		snprintf(var, sizeof var, "i%d", d);
		if (a[3] != OX_PLAN_LIN) {
			/* the input index of a padded axis: t in [0, m) after folding */
			long long A = a[4], M = a[5], P = 2 * (M - 1);
			ind(cg, d + 2);
			if (A)
				ox_cg_printf(cg, "ptrdiff_t c%d = i%d - %lld;\n", d, d, A);
			else
				ox_cg_printf(cg, "ptrdiff_t c%d = i%d;\n", d, d);
			ind(cg, d + 2);
			if (a[3] == OX_PLAN_EDGE)
				ox_cg_printf(cg, "c%d = c%d < 0 ? 0 : c%d >= %lld ? %lld : c%d;\n", d, d, d, M, M - 1, d);
			else if (a[3] == OX_PLAN_WRAP)
				ox_cg_printf(cg, "c%d = (c%d %% %lld + %lld) %% %lld;\n", d, d, M, M, M);
			else if (M == 1)
				ox_cg_printf(cg, "c%d = 0;\n", d);
			else
				ox_cg_printf(cg, "c%d = (c%d %% %lld + %lld) %% %lld; /* reflect: period %lld */\n"
					     "%.*sif (c%d >= %lld)\n%.*s\tc%d = %lld - c%d;\n",
					     d, d, P, P, P, P, d + 2, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
					     d, M, d + 2, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t", d, P, d);
			if (a[6]) {
				ind(cg, d + 2);
				ox_cg_printf(cg, "c%d += %lld;\n", d, (long long)a[6]);
			}
			snprintf(var, sizeof var, "c%d", d);
		}
		lin(tmp, sizeof tmp, pe, var, a[1]);
		if (strcmp(tmp, pe)) {
			ind(cg, d + 2);
			ox_cg_printf(cg, "const ptrdiff_t p%d = %s;\n", d, tmp);
			snprintf(pe, sizeof pe, "p%d", d);
		}
		snprintf(var, sizeof var, "i%d", d);
		lin(tmp, sizeof tmp, qe, var, a[2]);
		if (strcmp(tmp, qe)) {
			ind(cg, d + 2);
			ox_cg_printf(cg, "const ptrdiff_t q%d = %s;\n", d, tmp);
			snprintf(qe, sizeof qe, "q%d", d);
		}
	}
	ind(cg, loops + 1);
	if (run) {
		char dst[160], src[160];
		at(dst, sizeof dst, "out0", qe);
		at(src, sizeof src, "in0", pe);
		ox_cg_printf(cg, "memcpy(%s, %s, %lld * sizeof *out0);\n", dst, src, (long long)ax[r - 1][0]);
	} else {
		ox_cg_printf(cg, "out0[%s] = in0[%s];\n", qe, pe);
	}
	for (int d = loops - 1; d >= 0; d--) {
		ind(cg, d + 1);
		ox_cg_printf(cg, "}\n");
	}
}

static int emit_plan_op(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int64_t ax[2 * OX_MAX_RANK][7], ib, ob;
	int nax;
	if (ox_ir_data_plan(g, n, ax, &nax, &ib, &ob))
		return -1;
	if (n->op == OX_OP_Pad && !strcmp(ox_attr_str(n, "mode", "constant"), "constant")) {
		ox_value *y = ox_out(g, n, 0);
		char v[128];
		if (n->nin > 2 && n->in[2] >= 0)
			snprintf(v, sizeof v, "in2[0]");
		else if (lit_value(y->dtype, n->opset < 11 ? ox_attr_float(n, "value", 0) : 0, v, sizeof v))
			return ox_error(g, n, "cannot spell the pad value as %s", ox_dtype_name(y->dtype));
		emit_fill(cg, "out0", numel(g, n->out[0]), v);
	}
	emit_plan(cg, ax, nax, ib, ob);
	return 0;
}

static int emit_concat(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *ys = &g->vals[n->out[0]].shape;
	int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), ys->rank);
	int64_t outer = prod(ys, 0, axis), row = prod(ys, axis, ys->rank), off = 0;
	if (outer == 0 || row == 0)
		return 0;
	if (outer > 1)
		ox_cg_printf(cg, "\tfor (ptrdiff_t o = 0; o < %lld; o++) {\n", (long long)outer);
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0)
			continue;
		int64_t blk = prod(&g->vals[n->in[k]].shape, axis, ys->rank);
		if (!blk)
			continue;
		if (outer > 1)
			ox_cg_printf(cg, "\t\tmemcpy(out0 + o * %lld + %lld, in%d + o * %lld, %lld * sizeof *out0);\n",
				     (long long)row, (long long)off, k, (long long)blk, (long long)blk);
		else
			ox_cg_printf(cg, "\tmemcpy(out0 + %lld, in%d, %lld * sizeof *out0);\n",
				     (long long)off, k, (long long)blk);
		off += blk;
	}
	if (outer > 1)
		ox_cg_printf(cg, "\t}\n");
	return 0;
}

static int emit_split(ox_cg *cg, ox_graph *g, ox_node *n)
{
	static ox_dim sizes[4096];
	int axis;
	if (n->nout > 4096)
		return ox_error(g, n, "too many outputs");
	if (ox_ir_data_split(g, n, &axis, sizes))
		return -1;
	const ox_shape *xs = &g->vals[n->in[0]].shape;
	int64_t outer = prod(xs, 0, axis), inner = prod(xs, axis + 1, xs->rank);
	int64_t row = xs->d[axis] * inner, off = 0;
	if (outer == 0 || row == 0)
		return 0;
	if (outer > 1)
		ox_cg_printf(cg, "\tfor (ptrdiff_t o = 0; o < %lld; o++) {\n", (long long)outer);
	for (int k = 0; k < n->nout; k++) {
		int64_t blk = sizes[k] * inner;
		if (n->out[k] >= 0 && blk) {
			if (outer > 1)
				ox_cg_printf(cg, "\t\tmemcpy(out%d + o * %lld, in0 + o * %lld + %lld, %lld * sizeof *out%d);\n",
					     k, (long long)blk, (long long)row, (long long)off, (long long)blk, k);
			else
				ox_cg_printf(cg, "\tmemcpy(out%d, in0 + %lld, %lld * sizeof *out%d);\n",
					     k, (long long)off, (long long)blk, k);
		}
		off += blk;
	}
	if (outer > 1)
		ox_cg_printf(cg, "\t}\n");
	return 0;
}

static int emit_gather(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_shape *xs = &g->vals[n->in[0]].shape;
	int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), xs->rank);
	long long outer = prod(xs, 0, axis), d = xs->d[axis], inner = prod(xs, axis + 1, xs->rank);
	long long m = numel(g, n->in[1]);
	if (outer == 0 || m == 0 || inner == 0)
		return 0;
	if (d == 0)
		return ox_error(g, n, "gathering from an empty axis");
	int t = 1; /* indentation */
	if (outer > 1) {
		ox_cg_printf(cg, "\tfor (ptrdiff_t o = 0; o < %lld; o++) {\n", outer);
		t = 2;
	}
	ind(cg, t);
	ox_cg_printf(cg, "for (ptrdiff_t j = 0; j < %lld; j++) {\n", m);
	const ox_tensor *ci = ox_in_const(g, n, 1);
	if (ci) {
		/* constant indices: checked here, once */
		for (int64_t j = 0; j < m; j++) {
			int64_t k = (int64_t)ox_tensor_get_f64(ci, j);
			if (k < -d || k >= d)
				return ox_error(g, n, "index %lld is out of range for an axis of %lld", (long long)k, d);
		}
		ind(cg, t + 1);
		ox_cg_printf(cg, "int64_t k = (int64_t)in1[j];\n");
		ind(cg, t + 1);
		ox_cg_printf(cg, "if (k < 0)\n");
		ind(cg, t + 2);
		ox_cg_printf(cg, "k += %lld; /* the constant indices are in range (checked by onnxcc) */\n", d);
	} else {
		ox_cg_index(cg, t + 1, "k", "in1[j]", d);
	}
	char dst[128], src[128];
	if (outer > 1) {
		snprintf(dst, sizeof dst, inner > 1 ? "(o * %lld + j)" : "o * %lld + j", m);
		snprintf(src, sizeof src, inner > 1 ? "(o * %lld + k)" : "o * %lld + k", d);
	} else {
		snprintf(dst, sizeof dst, "j");
		snprintf(src, sizeof src, "k");
	}
	ind(cg, t + 1);
	if (inner == 1)
		ox_cg_printf(cg, "out0[%s] = in0[%s];\n", dst, src);
	else
		ox_cg_printf(cg, "memcpy(out0 + %s * %lld, in0 + %s * %lld, %lld * sizeof *out0);\n",
			     dst, inner, src, inner, inner);
	ind(cg, t);
	ox_cg_printf(cg, "}\n");
	if (outer > 1)
		ox_cg_printf(cg, "\t}\n");
	return 0;
}

static int emit_range(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	long long m = numel(g, n->out[0]);
	if (m <= 0)
		return 0;
	int dt = y->dtype;
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	ox_cg_printf(cg, "\tfor (ptrdiff_t i = 0; i < %lld; i++)\n", m);
	if (ox_dtype_is_float(dt)) {
		char s[64], d[64];
		snprintf(s, sizeof s, "%s", ox_cg_load(dt, "in0[0]"));
		snprintf(d, sizeof d, "%s", ox_cg_load(dt, "in2[0]"));
		char e[200];
		snprintf(e, sizeof e, "%s + (%s)i * %s", s, C, d);
		ox_cg_printf(cg, "\t\tout0[i] = %s;\n", ox_cg_store(dt, e));
	} else if (ox_dtype_is_int(dt)) {
		/* in uint64, which wraps: start and delta come at run time and may
		 * not be the ones the length was computed from */
		ox_cg_printf(cg, "\t\tout0[i] = (%s)((uint64_t)in0[0] + (uint64_t)i * (uint64_t)in2[0]);\n", T);
	} else {
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(dt));
	}
	return 0;
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
		for (int k = 0; k < y->shape.rank && n->op == OX_OP_Reshape; k++) {
			if (ox_dim_defined_by(g, y->shape.d[k], n->out[0])) {
				emit_reshape_dims(cg, g, n);
				break;
			}
		}
		if (!cg->dims_only)
			emit_copy(cg, "out0", "in0", ox_shape_numel_dim(g, &y->shape));
		return 0;
	case OX_OP_Dropout:
		/* inference: the identity; the mask says every element was kept */
		emit_copy(cg, "out0", "in0", numel(g, n->out[0]));
		if (n->nout > 1 && n->out[1] >= 0) {
			if (lit_value(g->vals[n->out[1]].dtype, 1, v, sizeof v))
				return ox_error(g, n, "cannot spell a mask of dtype %s", ox_dtype_name(g->vals[n->out[1]].dtype));
			emit_fill(cg, "out1", numel(g, n->out[1]), v);
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
			lit_elem(a->t, 0, v, sizeof v);
		else
			lit_value(dt, 0, v, sizeof v); /* the default value is f32 0 */
		emit_fill(cg, "out0", numel(g, n->out[0]), v);
		return 0;
	}
	case OX_OP_Range:
		return emit_range(cg, g, n);
	}
	return ox_error(g, n, "no C emitter for this op");
}
