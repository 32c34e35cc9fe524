/* emit_nn.c: C bodies for the dense compute ops.
 *
 * Conv, ConvTranspose and the pools call templates/ kernels written for
 * 3 spatial axes (1-D and 2-D pass leading 1s); Gemm and each MatMul
 * batch call templates/gemm.c; BatchNormalization and the global pools
 * are short loops printed inline; DeformConv calls templates/deform_conv.c
 * (a plain loop nest: it is rare and small). Resize is turned into per-axis tap
 * tables (input offsets and weights) computed in double precision
 * following the ONNX reference (templates/resize_taps.c), so the generated
 * kernel only gathers and multiplies: here when the shapes and scales are
 * constants, by the node when it runs otherwise. Window and Resize
 * parameters come from the decoders in ir/infer_nn.c (ir/family.h) so
 * shapes and kernels agree. Templates read and write through ox_ld_S /
 * ox_st_S, defined here per dtype before a template is pulled in.
 * Sizes are printed with ox_cg_dim, so run-time dims (docs/dynamic.md)
 * reach the kernels as values of ox_d[]; what inference could compare
 * only on constants (channels, a C that broadcasts, a weight's kernel)
 * the node checks when it runs (returning 2, PREFIX_ERR_SHAPE). The
 * blocked, Winograd and packed-GEMM paths take constant shapes only.
 */
#include "../cg.h"
#include "../resize.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSP (OX_MAX_RANK - 2)

/* Pull in templates/NAME.c for dtype (ox_cg_use adds ox_ld_/ox_st_ first).
 * "vec" picks templates/vec8.c for 8-byte types (same helpers). */
static int use(ox_cg *cg, ox_graph *g, ox_node *n, const char *name, int dt)
{
	if (!strcmp(name, "vec") && ox_dtype_size(dt) == 8)
		name = "vec8";
	if (ox_cg_use(cg, name, dt))
		return ox_error(g, n, "kernel template templates/%s.c is missing", name);
	return 0;
}

static ox_value *val(ox_graph *g, ox_node *n, int k, int out)
{
	return out ? ox_out(g, n, k) : ox_in(g, n, k);
}

/* "[1,3,224,224]" into buf; a run-time dim as its expression over the
 * symbols, whose names may not close the comment */
static const char *shape_str(ox_graph *g, const ox_shape *s, char *buf, size_t n)
{
	ox_shape_str(g, s, buf, n);
	for (char *p = buf; (p = strstr(p, "*/"));)
		p[1] = '|';
	return buf;
}

/* "2x2" or "1,1,1,1" of v[0..m) */
static const char *list_str(const int64_t *v, int m, const char *sep, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < m && at < n; i++)
		at += (size_t)ox_cg_snprintf(buf + at, n - at, "%s%lld", i ? sep : "", (long long)v[i]);
	return buf;
}

void ox_cg_to3(const int64_t *v, int nsp, int64_t dflt, int64_t *o)
{
	for (int i = 0; i < 3; i++)
		o[i] = i < 3 - nsp ? dflt : v[i - (3 - nsp)];
}

/* the sizes are dims (ox_dim is int64_t): constants, or run-time dims */
void ox_cg_window_rows(ox_cg *cg, const int64_t *I3, const int64_t *O3, const int64_t *K3, const int64_t *S3)
{
	ox_cg_printf(cg, "\t\t%s, %s, %s, ", ox_cg_dim(cg, I3[0]), ox_cg_dim(cg, I3[1]), ox_cg_dim(cg, I3[2]));
	ox_cg_printf(cg, "%s, %s, %s, /* input, output sizes */\n", ox_cg_dim(cg, O3[0]), ox_cg_dim(cg, O3[1]),
		     ox_cg_dim(cg, O3[2]));
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld, /* kernel, strides */\n", (long long)K3[0],
		     (long long)K3[1], (long long)K3[2], (long long)S3[0], (long long)S3[1], (long long)S3[2]);
}

/* ---- checks of run-time dims ----
 * Inference compares dims only where both are constants; where one is a
 * run-time dim the node compares them when it runs and returns 2
 * (PREFIX_ERR_SHAPE) when they disagree. */

/* the checks printed for the current node (emit_nn clears them): each
 * pair of dims is compared once */
static struct {
	int kind;
	ox_dim a, b;
} checked[64];
static int nchecked;

static int check_once(int kind, ox_dim a, ox_dim b)
{
	for (int i = 0; i < nchecked; i++)
		if (checked[i].kind == kind && checked[i].a == a && checked[i].b == b)
			return 0;
	if (nchecked < 64)
		checked[nchecked].kind = kind, checked[nchecked].a = a, checked[nchecked++].b = b;
	return 1;
}

/* a must equal b */
static void rt_same(ox_cg *cg, ox_graph *g, ox_dim a, ox_dim b, const char *what)
{
	if (a == b || (!ox_dim_is_rt(g, a) && !ox_dim_is_rt(g, b)) || !check_once(0, a, b))
		return;
	ox_cg_line(cg, 1, "if (%s != %s)", ox_cg_dim(cg, a), ox_cg_dim(cg, b));
	ox_cg_line(cg, 2, "return 2; /* %s */", what);
	cg->fails_shape = 1;
}

/* a dim c that broadcasts to o must be 1 or o */
static void rt_bcast(ox_cg *cg, ox_graph *g, ox_dim c, ox_dim o, const char *what)
{
	if (c == 1 || c == o || (!ox_dim_is_rt(g, c) && !ox_dim_is_rt(g, o)) || !check_once(1, c, o))
		return;
	const char *cs = ox_cg_dim(cg, c);
	ox_cg_line(cg, 1, "if (%s != 1 && %s != %s)", cs, cs, ox_cg_dim(cg, o));
	ox_cg_line(cg, 2, "return 2; /* %s */", what);
	cg->fails_shape = 1;
}

/* the window of a run-time input size must fit it and its pads (the
 * constant case is an error of inference): unless its range shows it does */
static void rt_fits(ox_cg *cg, ox_graph *g, ox_dim in, int64_t pads, int64_t span, int ax)
{
	int64_t lo, hi;
	if (!ox_dim_is_rt(g, in) || (!ox_dim_range(g, in, &lo, &hi) && lo + pads >= span) ||
	    !check_once(2, in, span - pads))
		return;
	ox_cg_line(cg, 1, "if (%s + %lld < %lld)", ox_cg_dim(cg, in), (long long)pads, (long long)span);
	ox_cg_line(cg, 2, "return 2; /* the window does not fit spatial axis %d */", ax);
	cg->fails_shape = 1;
}

/* A value with run-time dims planned for fewer elements than its dims'
 * tops allow (v->cap: --max, --max-elems) must hold at most that many;
 * dims is the C array of its dims, or NULL to print them here. */
static void cap_check(ox_cg *cg, ox_graph *g, ox_value *v, const char *dims)
{
	int64_t top = 1, h;
	for (int d = 0; d < v->shape.rank && top >= 0; d++)
		top = (h = ox_dim_hi(g, v->shape.d[d])) < 0 || (top && h > INT64_MAX / top) ? -1 : top * h;
	if (v->cap <= 0 || (top >= 0 && top <= v->cap) || !v->shape.rank)
		return;
	ox_cg_helper(cg, "nn/over",
		     "/* does the product of d[0..r) exceed cap (no overflow on the way)? */\n"
		     "OX_STATIC int ox_over(const long *d, int r, long cap)\n{\n"
		     "\tlong m = 1;\n"
		     "\tfor (int k = 0; k < r; k++)\n"
		     "\t\tif (d[k] == 0)\n\t\t\treturn 0;\n"
		     "\tfor (int k = 0; k < r; k++) {\n"
		     "\t\tif (d[k] > cap / m)\n\t\t\treturn 1;\n"
		     "\t\tm *= d[k];\n\t}\n"
		     "\treturn 0;\n}\n");
	if (!dims) {
		ox_cg_printf(cg, "\tconst long dims[%d] = {", v->shape.rank);
		for (int d = 0; d < v->shape.rank; d++)
			ox_cg_printf(cg, "%s%s", d ? ", " : "", ox_cg_dim(cg, v->shape.d[d]));
		ox_cg_printf(cg, "};\n");
	}
	ox_cg_line(cg, 1, "if (ox_over(%s, %d, %lld))", dims ? dims : "dims", v->shape.rank, (long long)v->cap);
	ox_cg_line(cg, 2, "return 2; /* more elements than the code was planned for */");
	cg->fails_shape = 1;
}

/* Begin and end pads of spatial axis i as C expressions: the constants,
 * or for SAME_UPPER / SAME_LOWER on a run-time size ONNX's
 * total = max(0, (out - 1) * s + (k - 1) * d + 1 - in), split as it says,
 * computed when the program runs */
static void window_pads(ox_cg *cg, ox_graph *g, int ap, int i, int nsp, ox_dim in, ox_dim out, int64_t k,
			int64_t s, int64_t d, const int64_t *pads, char *pb, char *pe, size_t cap)
{
	if ((ap != 1 && ap != 2) || !(ox_dim_is_rt(g, in) || ox_dim_is_rt(g, out))) {
		ox_cg_snprintf(pb, cap, "%lld", (long long)pads[i]);
		ox_cg_snprintf(pe, cap, "%lld", (long long)pads[i + nsp]);
		return;
	}
	ox_cg_line(cg, 1, "const long tot%d = (%s - 1) * %lld + %lld - %s; /* SAME padding of spatial axis %d */", i,
		   ox_cg_dim(cg, out), (long long)s, (long long)((k - 1) * d + 1), ox_cg_dim(cg, in), i);
	char half[32], rest[32];
	ox_cg_snprintf(half, sizeof half, "tot%d / 2", i);
	ox_cg_snprintf(rest, sizeof rest, "tot%d - tot%d / 2", i, i);
	ox_cg_snprintf(pb, cap, "(tot%d > 0 ? %s : 0)", i, ap == 1 ? half : rest);
	ox_cg_snprintf(pe, cap, "(tot%d > 0 ? %s : 0)", i, ap == 1 ? rest : half);
}

/* ---- Conv, ConvTranspose ---- */

/* ConvTranspose's begin pads on a run-time input size (ir/infer_nn.c):
 * with output_shape the total padding full - out depends on the input,
 * and ONNX gives its larger half to the begin but for SAME_UPPER */
static void convt_pads(ox_cg *cg, ox_node *n, int nsp, const ox_dim *in, const ox_dim *out,
		       const int64_t *k, const int64_t *s, const int64_t *d, int64_t *pads, int ap, char (*pb)[160])
{
	const int64_t *os;
	int m = ox_attr_ints(n, "output_shape", &os);
	int64_t op[MAXSP];
	const int64_t *opv;
	int mo = ox_attr_ints(n, "output_padding", &opv);
	for (int i = 0; i < nsp; i++) {
		op[i] = mo == nsp ? opv[i] : 0;
		int64_t extra = op[i] + (k[i] - 1) * d[i] + 1; /* full = s * (in - 1) + extra */
		if (m < 0 && ap != 1 && ap != 2) {
			ox_cg_snprintf(pb[i], sizeof pb[i], "%lld", (long long)(ap == 3 ? 0 : pads[i]));
			continue;
		}
		if (m < 0) { /* SAME: out = in * s, total = extra - s */
			int64_t total = extra - s[i];
			pads[i] = total < 0 ? 0 : ap == 1 ? total / 2 : total - total / 2;
			ox_cg_snprintf(pb[i], sizeof pb[i], "%lld", (long long)pads[i]);
			continue;
		}
		ox_cg_line(cg, 1, "const long tot%d = (%s - 1) * %lld + %lld - %s; /* padding of spatial axis %d */", i,
			   ox_cg_dim(cg, in[i]), (long long)s[i], (long long)extra, ox_cg_dim(cg, out[i]), i);
		ox_cg_snprintf(pb[i], sizeof pb[i], ap == 1 ? "(tot%d < 0 ? 0 : tot%d / 2)" : "(tot%d < 0 ? 0 : tot%d - tot%d / 2)",
			 i, i, i);
	}
}

static int emit_conv(ox_cg *cg, ox_graph *g, ox_node *n, int transpose)
{
	ox_value *x = val(g, n, 0, 0), *w = val(g, n, 1, 0), *y = val(g, n, 0, 1), *bias = ox_in(g, n, 2);
	int nsp = x->shape.rank - 2, dt = x->dtype, rt = 0;
	if (nsp > 3)
		return ox_error(g, n, "%d spatial axes are not supported (at most 3)", nsp);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < nsp; i++) {
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
		rt |= ox_dim_is_rt(g, in[i]) || ox_dim_is_rt(g, out[i]);
	}
	char pb[MAXSP][160], pe[MAXSP][160];
	if (!rt && transpose) {
		if (ox_ir_nn_convt(g, n, nsp, in, k, s, d, pads, ap, out))
			return -1;
	} else if (!rt) {
		ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	}
	int64_t G = ox_attr_int(n, "group", 1), I3[3], O3[3], K3[3], S3[3], D3[3];
	/* what inference could not compare */
	ox_dim C = x->shape.d[1], M = y->shape.d[1];
	for (int i = 0; i < nsp; i++)
		rt_same(cg, g, w->shape.d[i + 2], k[i], "the weights' kernel is kernel_shape");
	if (transpose) {
		rt_same(cg, g, C, w->shape.d[0], "the weights have one row per input channel");
		rt_same(cg, g, M, ox_dim_mul(g, w->shape.d[1], G), "output channels");
		if (G > 1 && ox_dim_is_rt(g, C)) {
			ox_cg_line(cg, 1, "if (%s %% %lld)", ox_cg_dim(cg, C), (long long)G);
			ox_cg_line(cg, 2, "return 2; /* the groups divide the input channels */");
			cg->fails_shape = 1;
		}
	} else {
		rt_same(cg, g, C, ox_dim_mul(g, w->shape.d[1], G), "the input channels are the weights' times the groups");
		rt_same(cg, g, M, w->shape.d[0], "output channels");
		if (G > 1 && ox_dim_is_rt(g, M)) {
			ox_cg_line(cg, 1, "if (%s %% %lld)", ox_cg_dim(cg, M), (long long)G);
			ox_cg_line(cg, 2, "return 2; /* the groups divide the output channels */");
			cg->fails_shape = 1;
		}
	}
	if (bias)
		rt_same(cg, g, bias->shape.d[0], M, "one bias per output channel");
	if (rt && transpose) {
		convt_pads(cg, n, nsp, in, out, k, s, d, pads, ap, pb);
		for (int i = 0; i < nsp; i++) {
			int64_t lo, hi;
			if (ox_dim_is_rt(g, out[i]) && (ox_dim_range(g, out[i], &lo, &hi) || lo < 1)) {
				ox_cg_line(cg, 1, "if (%s < 1)", ox_cg_dim(cg, out[i]));
				ox_cg_line(cg, 2, "return 2; /* an empty output */");
				cg->fails_shape = 1;
			}
		}
	} else {
		for (int i = 0; i < nsp; i++) {
			window_pads(cg, g, ap, i, nsp, in[i], out[i], k[i], s[i], d[i], pads, pb[i], pe[i], sizeof pb[i]);
			if (rt && ap != 1 && ap != 2)
				rt_fits(cg, g, in[i], ap == 3 ? 0 : pads[i] + pads[i + nsp], (k[i] - 1) * d[i] + 1, i);
		}
	}
	ox_cg_to3(in, nsp, 1, I3), ox_cg_to3(out, nsp, 1, O3), ox_cg_to3(k, nsp, 1, K3);
	ox_cg_to3(s, nsp, 1, S3), ox_cg_to3(d, nsp, 1, D3);
	const char *P3[3];
	for (int i = 0; i < 3; i++)
		P3[i] = i < 3 - nsp ? "0" : pb[i - (3 - nsp)];
	if (use(cg, g, n, "vec", dt) || use(cg, g, n, transpose ? "convtranspose" : "conv", dt))
		return -1;
	char b1[256], b2[256], b3[256], b4[64], b5[64], b6[128];
	if (rt && (ap == 1 || ap == 2 || (transpose && ox_attr_get(n, "output_shape"))))
		ox_cg_snprintf(b6, sizeof b6, "those of the run-time sizes");
	else
		list_str(pads, 2 * nsp, ",", b6, sizeof b6);
	ox_cg_printf(cg, "\t/* %s %d-D, group %lld: x %s, w %s -> %s; strides %s, pads %s, dilations ",
		     transpose ? "ConvTranspose" : "Conv", nsp, (long long)G, shape_str(g, &x->shape, b1, sizeof b1),
		     shape_str(g, &w->shape, b2, sizeof b2), shape_str(g, &y->shape, b3, sizeof b3),
		     list_str(s, nsp, "x", b4, sizeof b4), b6);
	ox_cg_printf(cg, "%s */\n",
		     list_str(d, nsp, "x", b5, sizeof b5));
	cap_check(cg, g, y, NULL);
	ox_cg_printf(cg, "\tox_%s_%s(in0, in1, %s, out0, ", transpose ? "convtranspose" : "conv", ox_cg_sfx(dt),
		     bias ? "in2" : "NULL");
	ox_cg_printf(cg, "%s, %s, ", ox_cg_dim(cg, x->shape.d[0]), ox_cg_dim(cg, C));
	ox_cg_printf(cg, "%s, %lld,\n", ox_cg_dim(cg, M), (long long)G);
	ox_cg_window_rows(cg, I3, O3, K3, S3);
	ox_cg_printf(cg, "\t\t%s, %s, %s, %lld, %lld, %lld); /* begin pads, dilations */\n", P3[0], P3[1], P3[2],
		     (long long)D3[0], (long long)D3[1], (long long)D3[2]);
	return 0;
}

/* ---- MaxPool, AveragePool ---- */
static int emit_pool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	int nsp = x->shape.rank - 2, dt = x->dtype, ismax = n->op == OX_OP_MaxPool, rt = 0;
	if (nsp > 3)
		return ox_error(g, n, "%d spatial axes are not supported (at most 3)", nsp);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, NULL, k, s, d, pads, &ap))
		return -1;
	if (!ismax && n->opset < 19 && ox_attr_get(n, "dilations"))
		for (int i = 0; i < nsp; i++)
			if (d[i] != 1)
				return ox_error(g, n, "dilations need AveragePool opset 19");
	for (int i = 0; i < nsp; i++) {
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
		rt |= ox_dim_is_rt(g, in[i]) || ox_dim_is_rt(g, out[i]);
	}
	if (!rt)
		ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	char pb[MAXSP][160], pe[MAXSP][160];
	for (int i = 0; i < nsp; i++) {
		window_pads(cg, g, ap, i, nsp, in[i], out[i], k[i], s[i], d[i], pads, pb[i], pe[i], sizeof pb[i]);
		if (rt && ap != 1 && ap != 2)
			rt_fits(cg, g, in[i], ap == 3 ? 0 : pads[i] + pads[i + nsp], (k[i] - 1) * d[i] + 1, i);
	}
	int64_t I3[3], O3[3], K3[3], S3[3], D3[3];
	ox_cg_to3(in, nsp, 1, I3), ox_cg_to3(out, nsp, 1, O3), ox_cg_to3(k, nsp, 1, K3);
	ox_cg_to3(s, nsp, 1, S3), ox_cg_to3(d, nsp, 1, D3);
	const char *P3[3], *E3[3];
	for (int i = 0; i < 3; i++) {
		P3[i] = i < 3 - nsp ? "0" : pb[i - (3 - nsp)];
		E3[i] = i < 3 - nsp ? "0" : pe[i - (3 - nsp)];
	}
	if (use(cg, g, n, ismax ? "maxpool" : "avgpool", dt))
		return -1;
	char b1[256], b3[256], b4[64], b5[64], b6[128];
	int incl = (int)ox_attr_int(n, "count_include_pad", 0);
	if (rt && (ap == 1 || ap == 2))
		ox_cg_snprintf(b6, sizeof b6, "those of the run-time sizes");
	else
		list_str(pads, 2 * nsp, ",", b6, sizeof b6);
	ox_cg_printf(cg, "\t/* %s %d-D: %s -> %s; kernel %s, strides %s, pads %s%s */\n", n->optype, nsp,
		     shape_str(g, &x->shape, b1, sizeof b1), shape_str(g, &y->shape, b3, sizeof b3),
		     list_str(k, nsp, "x", b4, sizeof b4), list_str(s, nsp, "x", b5, sizeof b5), b6,
		     !ismax && incl ? ", pads counted" : "");
	cap_check(cg, g, y, NULL);
	const char *nc = ox_cg_dim(cg, ox_dim_mul(g, x->shape.d[0], x->shape.d[1]));
	if (ismax)
		ox_cg_printf(cg, "\tox_maxpool_%s(in0, out0, %s, %s,\n", ox_cg_sfx(dt), ox_out(g, n, 1) ? "out1" : "NULL",
			     nc);
	else
		ox_cg_printf(cg, "\tox_avgpool_%s(in0, out0, %s,\n", ox_cg_sfx(dt), nc);
	ox_cg_window_rows(cg, I3, O3, K3, S3);
	ox_cg_printf(cg, "\t\t%s, %s, %s, /* begin pads */\n", P3[0], P3[1], P3[2]);
	if (!ismax)
		ox_cg_printf(cg, "\t\t%s, %s, %s, /* end pads */\n", E3[0], E3[1], E3[2]);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %d); /* dilations, %s */\n", (long long)D3[0],
		     (long long)D3[1], (long long)D3[2],
		     ismax ? (int)ox_attr_int(n, "storage_order", 0) : incl,
		     ismax ? "column-major indices" : "count pads");
	return 0;
}

/* ---- GlobalAveragePool, GlobalMaxPool ---- */
static int emit_globalpool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0);
	int dt = x->dtype, ismax = n->op == OX_OP_GlobalMaxPool;
	ox_dim nc = ox_dim_mul(g, x->shape.d[0], x->shape.d[1]), sp = 1;
	for (int i = 2; i < x->shape.rank; i++)
		sp = ox_dim_mul(g, sp, x->shape.d[i]);
	const char *ct = ox_cg_ntype(dt);
	const char *spc = ox_cg_dim(cg, sp), *ncc = ox_cg_dim(cg, nc);
	if (ox_dim_is_rt(g, sp) || ox_dim_is_rt(g, nc)) {
		char b1[256];
		ox_cg_printf(cg, "\t/* %s of %s, over the spatial values for each channel */\n", n->optype,
			     shape_str(g, &x->shape, b1, sizeof b1));
	} else {
		ox_cg_printf(cg, "\t/* %s over %s values for each of %s channels */\n", n->optype, spc, ncc);
	}
	ox_cg_printf(cg, "\tfor (long c = 0; c < %s; c++) {\n", ncc);
	ox_cg_printf(cg, "\t\tconst %s *p = in0 + c * %s;\n", ox_cg_ctype(dt), spc);
	if (ismax) {
		ox_cg_printf(cg, "\t\t%s m = %s;\n", ct, ox_cg_load(dt, "p[0]"));
		ox_cg_printf(cg, "\t\tfor (long i = 1; i < %s; i++) {\n", spc);
		ox_cg_printf(cg, "\t\t\t%s v = %s;\n", ct, ox_cg_load(dt, "p[i]"));
		ox_cg_printf(cg, "\t\t\tm = v > m ? v : m;\n\t\t}\n");
		ox_cg_printf(cg, "\t\tout0[c] = %s;\n\t}\n", ox_cg_store(dt, "m"));
	} else {
		/* double sums: a global average often spans thousands of values */
		ox_cg_printf(cg, "\t\tdouble s = 0;\n");
		ox_cg_printf(cg, "\t\tfor (long i = 0; i < %s; i++)\n", spc);
		ox_cg_printf(cg, "\t\t\ts += %s;\n", ox_cg_load(dt, "p[i]"));
		char e[2200];
		ox_cg_snprintf(e, sizeof e, "(%s)(s / %s)", ct, spc);
		ox_cg_printf(cg, "\t\tout0[c] = %s;\n\t}\n", ox_cg_store(dt, e));
	}
	return 0;
}

/* ---- BatchNormalization ---- */
static int emit_batchnorm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0);
	int dt = x->dtype, training = n->opset >= 14 && ox_attr_int(n, "training_mode", 0);
	const char *ct = dt == OX_F64 ? "double" : "float", *sq = dt == OX_F64 ? "sqrt" : "sqrtf";
	ox_dim N = x->shape.d[0], C = x->shape.d[1], S = 1;
	for (int i = 2; i < x->shape.rank; i++)
		S = ox_dim_mul(g, S, x->shape.d[i]);
	/* one parameter per channel, or (opsets before 9, spatial = 0) per
	 * element of a sample; a run-time count is a channel's (checked) */
	int per = -1, spatial = n->opset < 9 ? (int)ox_attr_int(n, "spatial", 1) : 1;
	for (int k = 1; k < 5; k++) {
		ox_dim m = ox_shape_numel_dim(g, &ox_in(g, n, k)->shape);
		int pk = m == C;
		if (!pk && !spatial && m == ox_dim_mul(g, C, S))
			pk = 0;
		else if (!pk && (ox_dim_is_rt(g, m) || ox_dim_is_rt(g, C)) && !spatial)
			return ox_error(g, n, "parameters of run-time size with spatial = 0");
		else if (!pk && (ox_dim_is_rt(g, m) || ox_dim_is_rt(g, C)))
			pk = 1;
		if (per >= 0 && pk != per)
			return ox_error(g, n, "parameters mix per-channel and per-element shapes");
		per = pk;
	}
	for (int k = 1; k < 5 && per; k++)
		rt_same(cg, g, ox_shape_numel_dim(g, &ox_in(g, n, k)->shape), C, "one parameter per channel");
	double eps = ox_attr_float(n, "epsilon", 1e-5f), mom = ox_attr_float(n, "momentum", 0.9f);
	char ps[4][64];
	const char *pidx = per ? "c" : "c * S + i";
	for (int k = 1; k < 5; k++) {
		char e[32];
		ox_cg_snprintf(e, sizeof e, "in%d[%s]", k, pidx);
		ox_cg_snprintf(ps[k - 1], sizeof ps[k - 1], "%s", ox_cg_load(ox_in(g, n, k)->dtype, e));
	}
	ox_cg_printf(cg, "\t/* BatchNormalization%s: y = (x - mean) / sqrt(var + %s) * scale + bias, per %s */\n",
		     training ? " (training: batch statistics)" : "", ox_cg_lit(OX_F32, eps),
		     per ? "channel" : "element");
	ox_cg_printf(cg, "\tconst long N = %s, ", ox_cg_dim(cg, N));
	ox_cg_printf(cg, "C = %s, ", ox_cg_dim(cg, C));
	ox_cg_printf(cg, "S = %s;\n", ox_cg_dim(cg, S));
	ox_cg_printf(cg, "\tfor (long c = 0; c < C; c++) {\n");
	if (training) {
		/* mean and biased variance over N and the spatial axes, in double */
		ox_cg_printf(cg, "\t\tdouble sum = 0, sq = 0;\n");
		ox_cg_printf(cg, "\t\tfor (long n = 0; n < N; n++)\n\t\t\tfor (long i = 0; i < S; i++)\n");
		ox_cg_printf(cg, "\t\t\t\tsum += %s;\n", ox_cg_load(dt, "in0[(n * C + c) * S + i]"));
		ox_cg_printf(cg, "\t\tconst double mean = sum / (double)(N * S);\n");
		ox_cg_printf(cg, "\t\tfor (long n = 0; n < N; n++)\n\t\t\tfor (long i = 0; i < S; i++) {\n");
		ox_cg_printf(cg, "\t\t\t\tdouble v = %s - mean;\n", ox_cg_load(dt, "in0[(n * C + c) * S + i]"));
		ox_cg_printf(cg, "\t\t\t\tsq += v * v;\n\t\t\t}\n");
		ox_cg_printf(cg, "\t\tconst double var = sq / (double)(N * S);\n");
		ox_cg_printf(cg, "\t\tconst %s a = (%s)(%s / sqrt(var + %s));\n", ct, ct, ps[0], ox_cg_lit(OX_F64, eps));
		ox_cg_printf(cg, "\t\tconst %s b = (%s)(%s - mean * a);\n", ct, ct, ps[1]);
		for (int k = 1; k < 3; k++) {
			ox_value *o = ox_out(g, n, k);
			if (!o)
				continue;
			char e[256];
			ox_cg_snprintf(e, sizeof e, "(%s)(%s * %s + %s * %s)", ox_cg_ntype(o->dtype), ps[k + 1],
				 ox_cg_lit(OX_F64, mom), k == 1 ? "mean" : "var", ox_cg_lit(OX_F64, 1 - mom));
			ox_cg_printf(cg, "\t\tout%d[c] = %s;\n", k, ox_cg_store(o->dtype, e));
		}
	} else if (per) {
		ox_cg_printf(cg, "\t\tconst %s a = %s / %s(%s + %s);\n", ct, ps[0], sq, ps[3], ox_cg_lit(dt == OX_F64 ? OX_F64 : OX_F32, eps));
		ox_cg_printf(cg, "\t\tconst %s b = %s - %s * a;\n", ct, ps[1], ps[2]);
	}
	ox_cg_printf(cg, "\t\tfor (long n = 0; n < N; n++) {\n");
	ox_cg_printf(cg, "\t\t\tconst %s *xp = in0 + (n * C + c) * S;\n", ox_cg_ctype(dt));
	ox_cg_printf(cg, "\t\t\t%s *yp = out0 + (n * C + c) * S;\n", ox_cg_ctype(dt));
	ox_cg_printf(cg, "\t\t\tfor (long i = 0; i < S; i++) {\n");
	if (!per && !training) {
		ox_cg_printf(cg, "\t\t\t\tconst %s a = %s / %s(%s + %s);\n", ct, ps[0], sq, ps[3],
			     ox_cg_lit(dt == OX_F64 ? OX_F64 : OX_F32, eps));
		ox_cg_printf(cg, "\t\t\t\tconst %s b = %s - %s * a;\n", ct, ps[1], ps[2]);
	}
	char e[128];
	ox_cg_snprintf(e, sizeof e, "%s * a + b", ox_cg_load(dt, "xp[i]"));
	ox_cg_printf(cg, "\t\t\t\typ[i] = %s;\n\t\t\t}\n\t\t}\n\t}\n", ox_cg_store(dt, e));
	return 0;
}

/* ---- Gemm, MatMul ---- */
static int emit_gemm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *a = val(g, n, 0, 0), *b = val(g, n, 1, 0), *c = ox_in(g, n, 2);
	int dt = a->dtype;
	int ta = ox_attr_int(n, "transA", 0) != 0, tb = ox_attr_int(n, "transB", 0) != 0;
	double alpha = ox_attr_float(n, "alpha", 1.0f), beta = ox_attr_float(n, "beta", 1.0f);
	if (!ox_dtype_is_float(dt) && (alpha != floor(alpha) || beta != floor(beta)))
		return ox_error(g, n, "fractional alpha/beta with integer dtype %s", ox_dtype_name(dt));
	ox_dim M = a->shape.d[ta], K = a->shape.d[!ta], N = b->shape.d[!tb];
	rt_same(cg, g, K, b->shape.d[tb], "the inner dims agree");
	/* C's strides: 0 along a dim it broadcasts, a run-time dim may be 1 */
	char ci[2100] = "0", cj[2100] = "0";
	if (c && beta != 0) {
		int r = c->shape.rank;
		ox_dim cn = r >= 1 ? c->shape.d[r - 1] : 1, cm = r >= 2 ? c->shape.d[r - 2] : 1;
		rt_bcast(cg, g, cn, N, "C broadcasts to the output");
		rt_bcast(cg, g, cm, M, "C broadcasts to the output");
		if (cn == 1)
			ox_cg_snprintf(cj, sizeof cj, "0");
		else if (cn == N || !ox_dim_is_rt(g, cn))
			ox_cg_snprintf(cj, sizeof cj, "1");
		else
			ox_cg_snprintf(cj, sizeof cj, "(%s != 1)", ox_cg_dim(cg, cn));
		if (cm == 1)
			ox_cg_snprintf(ci, sizeof ci, "0");
		else if (cm == M || !ox_dim_is_rt(g, cm))
			ox_cg_snprintf(ci, sizeof ci, "%s", ox_cg_dim(cg, cn));
		else
			ox_cg_snprintf(ci, sizeof ci, "(%s != 1) * %s", ox_cg_dim(cg, cm), ox_cg_dim(cg, cn));
	}
	if (use(cg, g, n, "vec", dt) || use(cg, g, n, "gemm", dt))
		return -1;
	const char *ms = ox_cg_dim(cg, M), *ks = ox_cg_dim(cg, K), *ns = ox_cg_dim(cg, N);
	if (ox_dim_is_rt(g, M) || ox_dim_is_rt(g, K) || ox_dim_is_rt(g, N)) {
		char b1[256], b2[256];
		ox_cg_printf(cg, "\t/* Gemm: %s%s x %s%s, alpha %g, beta %g%s */\n", shape_str(g, &a->shape, b1, sizeof b1),
			     ta ? " (transposed)" : "", shape_str(g, &b->shape, b2, sizeof b2), tb ? " (transposed)" : "",
			     alpha, beta, c && beta != 0 ? "" : ", no C");
	} else {
		ox_cg_printf(cg, "\t/* Gemm: [%s x %s]%s x [%s x %s]%s, alpha %g, beta %g",
			     ms, ks, ta ? " (A transposed)" : "", ks, ns, tb ? " (B transposed)" : "", alpha, beta);
		ox_cg_printf(cg, "%s */\n",
			     c && beta != 0 ? "" : ", no C");
	}
	cap_check(cg, g, ox_out(g, n, 0), NULL);
	ox_cg_printf(cg, "\tox_gemm_%s(in0, in1, %s, out0, %s, %s, %s, %s, %s, %s, ",
		     ox_cg_sfx(dt), c && beta != 0 ? "in2" : "NULL", ms, ns, ks, ta ? "1" : ks, ta ? ms : "1",
		     tb ? "1" : ns);
	ox_cg_printf(cg, "%s, %s, ",
		     tb ? ks : "1", ox_cg_lit(dt, alpha));
	ox_cg_printf(cg, "%s, %s, %s);\n", ox_cg_lit(dt, beta), ci, cj);
	return 0;
}

static int emit_matmul(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *a = val(g, n, 0, 0), *b = val(g, n, 1, 0), *y = val(g, n, 0, 1);
	int dt = a->dtype;
	ox_shape sa = a->shape, sb = b->shape;
	if (sa.rank == 1)
		sa = (ox_shape){2, {1, a->shape.d[0]}};
	if (sb.rank == 1)
		sb = (ox_shape){2, {b->shape.d[0], 1}};
	ox_dim M = sa.d[sa.rank - 2], K = sa.d[sa.rank - 1], N = sb.d[sb.rank - 1];
	rt_same(cg, g, K, sb.d[sb.rank - 2], "the inner dims agree");
	/* output batch dims (the output's) and each operand's element stride
	 * along them: 0 where it broadcasts, and where a run-time dim of it
	 * may be 1 when the output's is not, times (dim != 1) (bca, bcb) */
	int nb = (sa.rank > sb.rank ? sa.rank : sb.rank) - 2;
	ox_dim od[OX_MAX_RANK], as[OX_MAX_RANK], bs[OX_MAX_RANK], bca[OX_MAX_RANK], bcb[OX_MAX_RANK], nbatch = 1;
	ox_dim sta = ox_dim_mul(g, M, K), stb = ox_dim_mul(g, K, N);
	for (int i = nb - 1; i >= 0; i--) {
		int ia = i - (nb - (sa.rank - 2)), ib = i - (nb - (sb.rank - 2));
		ox_dim da = ia >= 0 ? sa.d[ia] : 1, db = ib >= 0 ? sb.d[ib] : 1;
		od[i] = ox_dim_is_rt(g, da) || ox_dim_is_rt(g, db) ? y->shape.d[i] : da > db ? da : db;
		as[i] = da == 1 ? 0 : sta;
		bs[i] = db == 1 ? 0 : stb;
		bca[i] = da != 1 && da != od[i] && ox_dim_is_rt(g, da) ? da : 0;
		bcb[i] = db != 1 && db != od[i] && ox_dim_is_rt(g, db) ? db : 0;
		rt_bcast(cg, g, da, od[i], "the batch dims broadcast");
		rt_bcast(cg, g, db, od[i], "the batch dims broadcast");
		sta = ox_dim_mul(g, sta, da), stb = ox_dim_mul(g, stb, db);
		nbatch = ox_dim_mul(g, nbatch, od[i]);
	}
	if (use(cg, g, n, "vec", dt) || use(cg, g, n, "gemm", dt))
		return -1;
	char b1[256], b2[256], b3[256];
	ox_cg_printf(cg, "\t/* MatMul %s x %s -> %s */\n", shape_str(g, &a->shape, b1, sizeof b1),
		     shape_str(g, &b->shape, b2, sizeof b2), shape_str(g, &y->shape, b3, sizeof b3));
	int a_full = 1, b_none = 1;
	for (int i = 0; i < nb; i++) {
		a_full &= (as[i] != 0 && !bca[i]) || od[i] == 1;
		b_none &= bs[i] == 0;
	}
	const char *ms = ox_cg_dim(cg, M), *ks = ox_cg_dim(cg, K), *ns = ox_cg_dim(cg, N);
	cap_check(cg, g, y, NULL);
	const char *one = ox_cg_lit(dt, 1), *zero = ox_cg_lit(dt, 0);
	if (nbatch == 1 || (a_full && b_none)) {
		/* one B for every batch: the batches of A are just more rows */
		ox_cg_printf(cg, "\tox_gemm_%s(in0, in1, NULL, out0, %s, %s, %s, %s, 1, %s, 1, %s, %s, 0, 0);\n",
			     ox_cg_sfx(dt), ox_cg_dim(cg, ox_dim_mul(g, M, nbatch)), ns, ks, ks, ns, one, zero);
		return 0;
	}
	ox_cg_printf(cg, "\tfor (long t = 0; t < %s; t++) {\n", ox_cg_dim(cg, nbatch));
	for (int pass = 0; pass < 2; pass++) {
		const ox_dim *st = pass ? bs : as, *bc = pass ? bcb : bca;
		ox_buf e = {0};
		ox_dim inner = 1;
		for (int i = nb - 1; i >= 0; i--) {
			if (st[i] && (od[i] > 1 || ox_dim_is_rt(g, od[i]))) {
				ox_buf_printf(&e, "%s(t / %s", e.len ? " + " : "", ox_cg_dim(cg, inner));
				ox_buf_printf(&e, " %% %s)", ox_cg_dim(cg, od[i]));
				ox_buf_printf(&e, " * %s", ox_cg_dim(cg, st[i]));
				if (bc[i])
					ox_buf_printf(&e, " * (%s != 1)", ox_cg_dim(cg, bc[i]));
			}
			inner = ox_dim_mul(g, inner, od[i]);
		}
		ox_cg_printf(cg, "\t\tconst long %s = %s;\n", pass ? "bo" : "ao", e.len ? e.s : "0");
		ox_buf_free(&e);
	}
	ox_cg_printf(cg, "\t\tox_gemm_%s(in0 + ao, in1 + bo, NULL, out0 + t * %s, %s, %s, %s, %s, 1, %s, 1, %s, ",
		     ox_cg_sfx(dt), ox_cg_dim(cg, ox_dim_mul(g, M, N)), ms, ns, ks, ks, ns, one);
	ox_cg_printf(cg, "%s, 0, 0);\n",
		     zero);
	ox_cg_printf(cg, "\t}\n");
	return 0;
}

/* ---- Resize ---- */


int ox_cg_resize_axis(const ox_rz_opts *ro, int64_t in, int64_t out, double scale, double r0, double r1,
		      int64_t stride, int *ntap, long **offp, float **wp)
{
	int cap = ox_rz_cap(ro, scale);
	/* the tables are static data in the generated code: refuse what no
	 * build would hold (and what a hostile model asks for) */
	if (cap < 0 || (double)out * cap > (double)(1 << 22))
		return -1;
	size_t total = (size_t)out * (size_t)cap;
	long *off = calloc(total, sizeof *off);
	float *w = calloc(total, sizeof *w);
	int maxn = 1;
	for (int64_t o = 0; o < out; o++) {
		int k = ox_rz_taps(ro, (long)in, (long)out, scale, r0, r1, (long)o, (long)stride, off + o * cap,
				   w + o * cap, cap);
		if (ro->mode && k > maxn)
			maxn = k;
	}
	/* compact to maxn taps per output (zero-weight taps point at offset 0) */
	total = (size_t)out * (size_t)maxn;
	long *co = calloc(total, sizeof *co);
	float *cw = calloc(total, sizeof *cw);
	for (int64_t o = 0; o < out; o++)
		for (int t = 0; t < maxn; t++) {
			co[o * maxn + t] = t < cap ? off[o * cap + t] : 0;
			cw[o * maxn + t] = t < cap ? w[o * cap + t] : 0;
			if (t > 0 && co[o * maxn] < 0)
				co[o * maxn + t] = 0;
		}
	free(off), free(w);
	*ntap = ro->mode == 0 ? 1 : maxn;
	*offp = co;
	*wp = cw;
	return 0;
}

void ox_cg_table(ox_buf *t, const char *decl, const long *iv, const float *fv, int64_t cnt, const char *ind)
{
	ox_buf_printf(t, "%s%s = {", ind, decl);
	for (int64_t i = 0; i < cnt; i++) {
		if (i % 16)
			ox_buf_puts(t, " ");
		else
			ox_buf_printf(t, "\n%s\t", ind);
		if (iv)
			ox_buf_printf(t, "%lld,", (long long)iv[i]);
		else
			ox_buf_printf(t, "%s,", ox_cg_lit(OX_F32, fv[i]));
	}
	ox_buf_printf(t, "\n%s};\n", ind);
}

static void print_table(ox_cg *cg, const char *decl, const long *iv, const float *fv, int64_t cnt)
{
	ox_buf t = {0};
	ox_cg_table(&t, decl, iv, fv, cnt, "\t");
	ox_cg_printf(cg, "%s", t.s);
	ox_buf_free(&t);
}

/* A channel-blocked Resize (opt/layout.c, ox_ir_nn_resize_blockable):
 * N and C kept, so only H and W have taps, their offsets in floats of the
 * blocked layout; templates/resize_blocked.c sums the taps' vectors. */
static int emit_resize_blocked(ox_cg *cg, ox_graph *g, ox_node *n, const ox_rz_opts *ro, const double *scale,
			       const double *roi)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	int b = x->lp[0];
	if (y->layout != OX_L_BLOCKED || y->lp[0] != b || b != cg->g->target->vw || scale[0] != 1 || scale[1] != 1)
		ox_die("emit_resize_blocked: %s is not a blocked Resize over H and W", n->name);
	int64_t IH = x->shape.d[2], IW = x->shape.d[3], OH = y->shape.d[2], OW = y->shape.d[3];
	int64_t CB = (x->shape.d[1] + b - 1) / b, rows = y->shape.d[0] * CB * OH;
	int nt[2];
	long *offs[2] = {0};
	float *wts[2] = {0};
	int rc = ox_cg_resize_axis(ro, IH, OH, scale[2], roi[2], roi[6], IW * b, &nt[0], &offs[0], &wts[0]);
	if (!rc)
		rc = ox_cg_resize_axis(ro, IW, OW, scale[3], roi[3], roi[7], b, &nt[1], &offs[1], &wts[1]);
	if (rc) {
		free(offs[0]), free(wts[0]), free(offs[1]), free(wts[1]);
		return ox_error(g, n, "the resize tables (output length x taps, over 2^22 entries) are too large");
	}
	ox_cg_use_vf(cg);
	if (ox_cg_use(cg, "resize_blocked", OX_F32))
		ox_die("templates/resize_blocked.c is missing");
	ox_cg_printf(cg, "	/* Resize %s over H and W, blocked by %d: [%lld,%lld,%lld,%lld] -> %lldx%lld, ",
		     ro->mode == 0 ? "nearest" : ro->mode == 1 ? "linear" : "cubic", b, (long long)x->shape.d[0],
		     (long long)x->shape.d[1], (long long)IH, (long long)IW, (long long)OH, (long long)OW);
	ox_cg_printf(cg, "%d x %d taps */\n",
		     nt[0], nt[1]);
	int64_t ntask = rows < 64 ? rows : 64;
	ox_cg_tasks(cg, (long)ntask);
	static const char *const ax[2] = {"h", "w"};
	for (int a = 0; a < 2; a++) {
		char decl[64];
		int64_t cnt = (a ? OW : OH) * nt[a];
		ox_cg_snprintf(decl, sizeof decl, "static const long off%s[%lld]", ax[a], (long long)cnt);
		print_table(cg, decl, offs[a], NULL, cnt);
		if (ro->mode) {
			ox_cg_snprintf(decl, sizeof decl, "static const float wt%s[%lld]", ax[a], (long long)cnt);
			print_table(cg, decl, NULL, wts[a], cnt);
		}
	}
	free(offs[0]), free(wts[0]), free(offs[1]), free(wts[1]);
	ox_cg_printf(cg, "\tox_resize_blocked(in0, out0, %lld, %lld, %lld, %d, %d, offh, %s, offw, %s, ",
		     (long long)(IH * IW * b), (long long)OH, (long long)OW, nt[0], nt[1], ro->mode ? "wth" : "NULL",
		     ro->mode ? "wtw" : "NULL");
	ox_cg_printf(cg, "t * %lld / %lld, (t + 1) * %lld / %lld);\n", (long long)rows, (long long)ntask, (long long)rows,
		     (long long)ntask);
	return 0;
}

int ox_cg_resize_opts(ox_graph *g, ox_node *n, ox_rz_opts *ro, const char **ctmp, const char **nmp)
{
	memset(ro, 0, sizeof *ro);
	const char *mode = ox_attr_str(n, "mode", "nearest");
	ro->mode = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "cubic") ? 2 : 1;
	const char *ctm = n->opset >= 11 ? ox_attr_str(n, "coordinate_transformation_mode", "half_pixel") : "asymmetric";
	static const char *const ctms[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
					   "tf_crop_and_resize", "half_pixel_symmetric", "tf_half_pixel_for_nn"};
	ro->ctm = -1;
	for (int i = 0; i < 7; i++)
		if (!strcmp(ctm, ctms[i]))
			ro->ctm = i;
	if (ro->ctm < 0 || (ro->ctm == OX_RZ_TFNN && n->opset >= 13) || (ro->ctm == OX_RZ_SYMM && n->opset < 19))
		return ox_error(g, n, "coordinate_transformation_mode '%s' is not supported at opset %d", ctm,
				n->opset);
	const char *nm = ox_attr_str(n, "nearest_mode", "round_prefer_floor");
	static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
	ro->nearest = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(nm, nms[i]))
			ro->nearest = i;
	if (ro->nearest < 0)
		return ox_error(g, n, "nearest_mode '%s' is not supported", nm);
	if (n->opset < 11)
		ro->nearest = 4;
	ro->antialias = n->opset >= 18 && ox_attr_int(n, "antialias", 0);
	ro->exclude = ox_attr_int(n, "exclude_outside", 0) != 0;
	ro->cubic_a = ox_attr_float(n, "cubic_coeff_a", -0.75f);
	*ctmp = ctm, *nmp = nm;
	return 0;
}

/* A Resize whose sizes, scales or roi are known only when the program
 * runs (ir/infer_nn.c, infer_resize_rt): the node reads the scales or
 * sizes, computes the output dims and scales as the reference does
 * (templates/resize_rt.c, ox_rz_shape), sets the data dims it defines and
 * checks the others, fills the tap tables of templates/resize_taps.c into
 * its scratch (ox_rz_tables) and gathers with the kernels of the
 * constant case. Returns 2 on shapes it cannot take. With plan (the CUDA
 * target's, ox_cg_resize_rt_plan) it stops after the tables, which follow
 * a header of 4 longs per axis (od, nt, the offsets of the axis' off and
 * wt tables from the header's end) that the gather kernel reads. */
static int emit_resize_rt(ox_cg *cg, ox_graph *g, ox_node *n, ox_rz_opts *ro, const char *what, const char *ctm,
			  int plan)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	ox_value *scr = ox_out(g, n, n->nout - 1);
	int r = x->shape.rank, dt = x->dtype;
	if (!n->scratch || !scr || r > 16)
		ox_die("emit_resize_rt: %s has no scratch for its tables", n->name);
	if (x->layout != OX_L_PLAIN || y->layout != OX_L_PLAIN)
		return ox_error(g, n, "a channel-blocked Resize with run-time sizes");
	ox_resize_rt rz;
	if (ox_ir_nn_resize_rt(g, n, r, &rz))
		return -1;
	ro->scales_given = !rz.sizes;
	double extrap = ox_attr_float(n, "extrapolation_value", 0.0f);
	if (ox_cg_use(cg, "resize_taps", OX_F32) || ox_cg_use(cg, "resize_rt", OX_F32) ||
	    (!plan && use(cg, g, n, ro->mode ? "resize" : "resize_nearest", dt)))
		return -1;
	cg->fails_shape = 1;
	char b1[256], b2[256];
	ox_cg_printf(cg, "\t/* Resize %s, %s, %s%s: %s -> %s */\n", what, ctm, rz.sizes ? "sizes" : "scales",
		     rz.known ? "" : " read when the program runs", shape_str(g, &x->shape, b1, sizeof b1),
		     shape_str(g, &y->shape, b2, sizeof b2));
	ox_cg_printf(cg, "\tconst long in[%d] = {", r);
	for (int a = 0; a < r; a++)
		ox_cg_printf(cg, "%s%s", a ? ", " : "", ox_cg_dim(cg, x->shape.d[a]));
	ox_cg_printf(cg, "};\n\tstatic const int axes[%d] = {", rz.naxes);
	for (int i = 0; i < rz.naxes; i++)
		ox_cg_printf(cg, "%s%d", i ? ", " : "", rz.axes[i]);
	ox_cg_printf(cg, "};\n");
	/* the scales or sizes, and the roi */
	ox_value *sv = ox_in(g, n, rz.in);
	if (rz.known) {
		ox_cg_printf(cg, "\tstatic const double v[%d] = {", rz.naxes);
		for (int i = 0; i < rz.naxes; i++)
			ox_cg_printf(cg, "%s%s", i ? ", " : "", ox_cg_lit(OX_F64, rz.v[i]));
		ox_cg_printf(cg, "};\n");
	} else {
		if (ox_dim_is_rt(g, sv->shape.d[0])) {
			ox_cg_line(cg, 1, "if (%s != %d)", ox_cg_dim(cg, sv->shape.d[0]), rz.naxes);
			ox_cg_line(cg, 2, "return 2; /* %s has one value per axis */", rz.sizes ? "sizes" : "scales");
		}
		char e[32];
		ox_cg_snprintf(e, sizeof e, "in%d[i]", rz.in);
		ox_cg_line(cg, 1, "double v[%d];", rz.naxes);
		ox_cg_line(cg, 1, "for (int i = 0; i < %d; i++)", rz.naxes);
		ox_cg_line(cg, 2, "v[i] = (double)%s;", ox_cg_load(sv->dtype, e));
	}
	if (rz.roi < 0) {
		ox_cg_printf(cg, "\tstatic const double roi[%d] = {", 2 * r);
		for (int i = 0; i < 2 * r; i++)
			ox_cg_printf(cg, "%s%s", i ? ", " : "", ox_cg_lit(OX_F64, rz.r[i]));
		ox_cg_printf(cg, "};\n");
	} else {
		ox_value *rv = ox_in(g, n, rz.roi);
		if (ox_dim_is_rt(g, rv->shape.d[0])) {
			ox_cg_line(cg, 1, "if (%s != %d)", ox_cg_dim(cg, rv->shape.d[0]), 2 * rz.naxes);
			ox_cg_line(cg, 2, "return 2; /* roi has a start and an end per axis */");
		}
		ox_cg_printf(cg, "\tdouble roi[%d] = {", 2 * r);
		for (int i = 0; i < 2 * r; i++)
			ox_cg_printf(cg, "%s%d", i ? ", " : "", i >= r);
		ox_cg_printf(cg, "}; /* the roi read, at the axes it names */\n");
		ox_cg_line(cg, 1, "for (int i = 0; i < %d; i++) {", rz.naxes);
		ox_cg_line(cg, 2, "roi[axes[i]] = (double)%s;", ox_cg_load(rv->dtype, "in1[i]"));
		char e[32];
		ox_cg_snprintf(e, sizeof e, "in1[i + %d]", rz.naxes);
		ox_cg_line(cg, 2, "roi[axes[i] + %d] = (double)%s;", r, ox_cg_load(rv->dtype, e));
		ox_cg_line(cg, 1, "}");
	}
	/* output dims and scales, as the reference computes them */
	ox_cg_line(cg, 1, "long od[%d];", r);
	ox_cg_line(cg, 1, "double sc[%d];", r);
	ox_cg_line(cg, 1, "if (ox_rz_shape(%d, in, %d, axes, %d, v, %d, od, sc))", r, rz.naxes, rz.sizes, rz.policy);
	ox_cg_line(cg, 2, "return 2;");
	for (int i = 0; i < rz.naxes; i++) {
		int a = rz.axes[i];
		ox_dim d = y->shape.d[a];
		char v[16];
		ox_cg_snprintf(v, sizeof v, "od[%d]", a);
		if (ox_dim_defined_by(g, d, n->out[0])) {
			ox_cg_set_dim(cg, 1, d, v);
		} else {
			ox_cg_line(cg, 1, "if (od[%d] != %s)", a, ox_cg_dim(cg, d));
			ox_cg_line(cg, 2, "return 2;");
		}
	}
	cap_check(cg, g, y, "od");
	/* the tap tables in the scratch, then the kernel of the constant case */
	ox_cg_line(cg, 1, "static const ox_rz_opts ro = {%d, %d, %d, %d, %d, %s, %d};", ro->mode, ro->ctm, ro->nearest,
		   ro->antialias, ro->exclude, ox_cg_lit(OX_F64, ro->cubic_a), ro->scales_given);
	ox_cg_line(cg, 1, "int nt[%d];", r);
	ox_cg_line(cg, 1, "const long *off[%d];", r);
	ox_cg_line(cg, 1, "const float *wt[%d];", r);
	const long long cap = (long long)ox_value_max_storage(g, scr), hdr = 32LL * r;
	if (plan) {
		ox_cg_line(cg, 1, "if (ox_rz_tables(&ro, %d, in, od, sc, roi, out%d + %lld, %lld, nt, off, wt))", r,
			   n->nout - 1, hdr, cap - hdr);
		ox_cg_line(cg, 2, "return 2; /* more taps than the code was planned for */");
		/* the header the gather kernel reads: od, nt, where the tables are */
		ox_cg_line(cg, 1, "long *h = (long *)out%d;", n->nout - 1);
		ox_cg_line(cg, 1, "for (int a = 0; a < %d; a++) {", r);
		ox_cg_line(cg, 2, "h[a] = od[a], h[%d + a] = nt[a];", r);
		ox_cg_line(cg, 2, "h[%d + a] = off[a] - (const long *)(h + %d), h[%d + a] = wt[a] - (const float *)(h + %d);",
			   2 * r, 4 * r, 3 * r, 4 * r);
		ox_cg_line(cg, 1, "}");
		return 0;
	}
	ox_cg_line(cg, 1, "if (ox_rz_tables(&ro, %d, in, od, sc, roi, out%d, %lld, nt, off, wt))", r, n->nout - 1, cap);
	ox_cg_line(cg, 2, "return 2; /* more taps than the code was planned for */");
	ox_buf rows = {0};
	for (int a = 0; a < r - 1; a++)
		ox_buf_printf(&rows, "%sod[%d]", a ? " * " : "", a);
	if (ro->mode)
		ox_cg_line(cg, 1, "ox_resize_%s(in0, out0, %d, od, nt, off, wt, %s, 0, %s);", ox_cg_sfx(dt), r,
			   ox_cg_lit(dt, extrap), rows.len ? rows.s : "1");
	else
		ox_cg_line(cg, 1, "ox_resize_nearest_%s(in0, out0, %d, od, off, %s, 0, %s);", ox_cg_sfx(dt), r,
			   ox_cg_store(dt, ox_cg_lit(dt, extrap)), rows.len ? rows.s : "1");
	ox_buf_free(&rows);
	return 0;
}

void ox_cg_resize_what(const ox_rz_opts *ro, const ox_node *n, const char *nm, char *buf, size_t sz)
{
	if (ro->mode)
		ox_cg_snprintf(buf, sz, "%s%s", ro->mode == 1 ? "linear" : "cubic", ro->antialias ? " (antialias)" : "");
	else
		ox_cg_snprintf(buf, sz, "nearest (%s)", n->opset < 11 ? "opset-10 rounding" : nm);
}

int ox_cg_resize_rt_plan(ox_cg *cg, ox_graph *g, ox_node *n, ox_rz_opts *ro, const char *what, const char *ctm)
{
	return emit_resize_rt(cg, g, n, ro, what, ctm, 1);
}

static int emit_resize(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	int r = x->shape.rank, dt = x->dtype;
	ox_rz_opts ro;
	const char *ctm = "", *nm = "";
	if (ox_cg_resize_opts(g, n, &ro, &ctm, &nm))
		return -1;
	char what[96];
	ox_cg_resize_what(&ro, n, nm, what, sizeof what);
	if (n->scratch)
		return emit_resize_rt(cg, g, n, &ro, what, ctm, 0);
	double extrap = ox_attr_float(n, "extrapolation_value", 0.0f);
	ox_dim osz[OX_MAX_RANK];
	double scale[OX_MAX_RANK], roi[2 * OX_MAX_RANK];
	if (ox_ir_nn_resize(g, n, &x->shape, osz, scale, roi))
		return -1;
	const ox_tensor *sc = ox_in_const(g, n, n->opset < 11 ? 1 : 2);
	ro.scales_given = sc && ox_tensor_numel(sc) > 0;
	if (x->layout == OX_L_BLOCKED)
		return emit_resize_blocked(cg, g, n, &ro, scale, roi);
	int nt[OX_MAX_RANK];
	long *offs[OX_MAX_RANK] = {0};
	float *wts[OX_MAX_RANK] = {0};
	int64_t stride = 1;
	int rc = 0;
	for (int a = r - 1; a >= 0 && !rc; a--) {
		rc = ox_cg_resize_axis(&ro, x->shape.d[a], y->shape.d[a], scale[a], roi[a], roi[a + r], stride, &nt[a],
				 &offs[a], &wts[a]);
		stride *= x->shape.d[a];
	}
	if (rc) {
		for (int a = 0; a < r; a++)
			free(offs[a]), free(wts[a]);
		return ox_error(g, n, "the resize tables (output length x taps, over 2^22 entries) are too large");
	}
	if (use(cg, g, n, ro.mode ? "resize" : "resize_nearest", dt)) {
		for (int a = 0; a < r; a++)
			free(offs[a]), free(wts[a]);
		return -1;
	}
	char b1[256], b2[256];
	ox_cg_printf(cg, "\t/* Resize %s, %s: %s -> %s */\n", what, ctm, shape_str(g, &x->shape, b1, sizeof b1),
		     shape_str(g, &y->shape, b2, sizeof b2));
	/* tasks: runs of output rows (every axis but the last) */
	int64_t rows = 1;
	for (int a = 0; a < r - 1; a++)
		rows *= y->shape.d[a];
	int64_t ntask = rows < 64 ? rows : 64;
	if (ntask < 1)
		ntask = 1;
	ox_cg_tasks(cg, (long)ntask);
	ox_cg_printf(cg, "\tstatic const long od[%d] = {", r);
	for (int a = 0; a < r; a++)
		ox_cg_printf(cg, "%s%lld", a ? ", " : "", (long long)y->shape.d[a]);
	ox_cg_printf(cg, "};\n");
	if (ro.mode) {
		ox_cg_printf(cg, "\tstatic const int nt[%d] = {", r);
		for (int a = 0; a < r; a++)
			ox_cg_printf(cg, "%s%d", a ? ", " : "", nt[a]);
		ox_cg_printf(cg, "}; /* taps per axis */\n");
	}
	for (int a = 0; a < r; a++) {
		char decl[64];
		ox_cg_snprintf(decl, sizeof decl, "static const long off%d[%lld]", a, (long long)(y->shape.d[a] * nt[a]));
		print_table(cg, decl, offs[a], NULL, y->shape.d[a] * nt[a]);
		if (ro.mode) {
			ox_cg_snprintf(decl, sizeof decl, "static const float wt%d[%lld]", a, (long long)(y->shape.d[a] * nt[a]));
			print_table(cg, decl, NULL, wts[a], y->shape.d[a] * nt[a]);
		}
	}
	for (int a = 0; a < r; a++)
		free(offs[a]), free(wts[a]);
	ox_cg_printf(cg, "\tstatic const long *const off[%d] = {", r);
	for (int a = 0; a < r; a++)
		ox_cg_printf(cg, "%soff%d", a ? ", " : "", a);
	ox_cg_printf(cg, "};\n");
	if (ro.mode) {
		ox_cg_printf(cg, "\tstatic const float *const wt[%d] = {", r);
		for (int a = 0; a < r; a++)
			ox_cg_printf(cg, "%swt%d", a ? ", " : "", a);
		ox_cg_printf(cg, "};\n");
		ox_cg_printf(cg, "\tox_resize_%s(in0, out0, %d, od, nt, off, wt, %s, t * %lld / %lld, (t + 1) * %lld / %lld);\n",
			     ox_cg_sfx(dt), r, ox_cg_lit(dt, extrap), (long long)rows, (long long)ntask, (long long)rows,
			     (long long)ntask);
	} else {
		ox_cg_printf(cg, "\tox_resize_nearest_%s(in0, out0, %d, od, off, %s, t * %lld / %lld, (t + 1) * %lld / %lld);\n",
			     ox_cg_sfx(dt), r, ox_cg_store(dt, ox_cg_lit(dt, extrap)), (long long)rows, (long long)ntask,
			     (long long)rows, (long long)ntask);
	}
	return 0;
}

/* ---- DeformConv (2-D, checked by infer_deformconv) ---- */
static int emit_deformconv(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0), *w = val(g, n, 1, 0), *y = val(g, n, 0, 1);
	ox_value *off = ox_in(g, n, 2), *bias = ox_in(g, n, 3), *mask = ox_in(g, n, 4);
	int dt = x->dtype;
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, 2, &w->shape, k, s, d, pads, &ap))
		return -1;
	if (ap != 0)
		return ox_error(g, n, "auto_pad is not a DeformConv attribute");
	if (use(cg, g, n, "deform_conv", dt))
		return -1;
	int64_t G = ox_attr_int(n, "group", 1), OG = ox_attr_int(n, "offset_group", 1);
	/* what inference could not compare */
	ox_dim N = x->shape.d[0], C = x->shape.d[1], M = y->shape.d[1], OH = y->shape.d[2], OW = y->shape.d[3];
	for (int i = 0; i < 2; i++) {
		rt_same(cg, g, w->shape.d[i + 2], k[i], "the weights' kernel is kernel_shape");
		rt_fits(cg, g, x->shape.d[i + 2], pads[i] + pads[i + 2], (k[i] - 1) * d[i] + 1, i);
	}
	rt_same(cg, g, C, ox_dim_mul(g, w->shape.d[1], G), "the input channels are the weights' times the groups");
	rt_same(cg, g, M, w->shape.d[0], "output channels");
	if (ox_dim_is_rt(g, C) || ox_dim_is_rt(g, M)) {
		ox_cg_line(cg, 1, "if (%s %% %lld || %s %% %lld)", ox_cg_dim(cg, M), (long long)G, ox_cg_dim(cg, C),
			   (long long)OG);
		ox_cg_line(cg, 2, "return 2; /* the groups divide the channels */");
		cg->fails_shape = 1;
	}
	ox_dim want[4] = {N, OG * 2 * k[0] * k[1], OH, OW};
	for (int i = 0; i < 4; i++)
		rt_same(cg, g, off->shape.d[i], want[i], "the offsets' shape");
	want[1] = OG * k[0] * k[1];
	for (int i = 0; i < 4 && mask; i++)
		rt_same(cg, g, mask->shape.d[i], want[i], "the mask's shape");
	if (bias)
		rt_same(cg, g, bias->shape.d[0], M, "one bias per output channel");
	cap_check(cg, g, y, NULL);
	char b1[128], b2[128], b3[128], b4[64], b5[64], b6[128];
	ox_cg_printf(cg, "\t/* DeformConv group %lld, offset_group %lld: x %s, w %s -> %s; strides %s, pads %s, dilations %s */\n",
		     (long long)G, (long long)OG, shape_str(g, &x->shape, b1, sizeof b1), shape_str(g, &w->shape, b2, sizeof b2),
		     shape_str(g, &y->shape, b3, sizeof b3), list_str(s, 2, "x", b4, sizeof b4),
		     list_str(pads, 4, ",", b6, sizeof b6), list_str(d, 2, "x", b5, sizeof b5));
	ox_cg_printf(cg, "\tox_deform_conv_%s(in0, in1, in2, %s, %s, out0,\n", ox_cg_sfx(dt), bias ? "in3" : "NULL",
		     mask ? "in4" : "NULL");
	ox_cg_printf(cg, "\t\t%s, ", ox_cg_dim(cg, N));
	ox_cg_printf(cg, "%s, ", ox_cg_dim(cg, C));
	ox_cg_printf(cg, "%s, ", ox_cg_dim(cg, x->shape.d[2]));
	ox_cg_printf(cg, "%s, ", ox_cg_dim(cg, x->shape.d[3]));
	ox_cg_printf(cg, "%s, %lld, %lld, /* N, C, H, W, M, group, offset_group */\n", ox_cg_dim(cg, M), (long long)G,
		     (long long)OG);
	ox_cg_printf(cg, "\t\t%lld, %lld, %s, ", (long long)k[0], (long long)k[1], ox_cg_dim(cg, OH));
	ox_cg_printf(cg, "%s, /* kernel, output size */\n", ox_cg_dim(cg, OW));
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld); /* strides, begin pads, dilations */\n",
		     (long long)s[0], (long long)s[1], (long long)pads[0], (long long)pads[1], (long long)d[0],
		     (long long)d[1]);
	return 0;
}

int emit_nn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y0 = ox_out(g, n, 0);
	nchecked = 0;
	if (ox_attr_get(n, "ox_norm") || ox_attr_get(n, "ox_glu") || ox_attr_get(n, "ox_dw")) /* the CUDA kernel takes every one */
		ox_die("codegen: '%s' computes a norm (ox_norm), a gated MLP (ox_glu) or a depthwise Conv (ox_dw) but "
		       "reached the C emitter: opt/gemmnorm.c, siblings.c and dwpw.c make them for the CUDA target only",
		       n->name);
	ox_gemmgeo gq;
	/* (with --target cuda, B is not packed: codegen/cuda/cuda_gemm.c, or the plain loops) */
	if ((n->op == OX_OP_Gemm || n->op == OX_OP_MatMul) && !g->gpu && !ox_opt_gemm_geo(g, n, &gq))
		return ox_cg_emit_gemm(cg, g, n);
	if (y0 && y0->layout == OX_L_BLOCKED && n->op != OX_OP_Resize)
		return n->op == OX_OP_Conv ? ox_cg_emit_conv_blocked(cg, g, n) : ox_cg_emit_pool_blocked(cg, g, n);
	switch (n->op) {
	case OX_OP_Conv:
		return emit_conv(cg, g, n, 0);
	case OX_OP_ConvTranspose:
		return emit_conv(cg, g, n, 1);
	case OX_OP_MaxPool:
	case OX_OP_AveragePool:
		return emit_pool(cg, g, n);
	case OX_OP_GlobalAveragePool:
	case OX_OP_GlobalMaxPool:
		return emit_globalpool(cg, g, n);
	case OX_OP_BatchNormalization:
		return emit_batchnorm(cg, g, n);
	case OX_OP_Gemm:
		return emit_gemm(cg, g, n);
	case OX_OP_MatMul:
		return emit_matmul(cg, g, n);
	case OX_OP_MatMulSplit: /* the CUDA kernel takes every one (codegen/cuda/cuda_tile.c) */
		ox_die("codegen: MatMulSplit '%s' reached the C emitter: opt/siblings.c makes it for the CUDA target only",
		       n->name);
	case OX_OP_Resize:
		return emit_resize(cg, g, n);
	case OX_OP_DeformConv:
		return emit_deformconv(cg, g, n);
	}
	return ox_error(g, n, "not a dense compute op");
}
