/* emit_nn.c: C bodies for the dense compute ops.
 *
 * Conv, ConvTranspose and the pools call templates/ kernels written for
 * 3 spatial axes (1-D and 2-D pass leading 1s); Gemm and each MatMul
 * batch call templates/gemm.c; BatchNormalization and the global pools
 * are short loops printed inline; DeformConv calls templates/deform_conv.c
 * (a plain loop nest: it is rare and small). Resize is turned into per-axis tap
 * tables (input offsets and weights) computed here in double precision
 * following the ONNX reference, so the generated kernel only gathers
 * and multiplies. Window and Resize parameters come from the decoders
 * in ir/infer_nn.c (prototypes repeated below) so shapes and kernels
 * agree. Templates read and write through ox_ld_S / ox_st_S,
 * defined here per dtype before a template is pulled in.
 */
#include "cg.h"
#include "../opt/opt.h"
#include "../ir/family.h"
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

/* "[1,3,224,224]" into buf */
static const char *shape_str(const ox_shape *s, char *buf, size_t n)
{
	size_t at = 0;
	at += (size_t)snprintf(buf + at, n - at, "[");
	for (int i = 0; i < s->rank && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? "," : "", (long long)s->d[i]);
	if (at < n)
		snprintf(buf + at, n - at, "]");
	return buf;
}

/* "2x2" or "1,1,1,1" of v[0..m) */
static const char *list_str(const int64_t *v, int m, const char *sep, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < m && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? sep : "", (long long)v[i]);
	return buf;
}

void ox_cg_to3(const int64_t *v, int nsp, int64_t dflt, int64_t *o)
{
	for (int i = 0; i < 3; i++)
		o[i] = i < 3 - nsp ? dflt : v[i - (3 - nsp)];
}

void ox_cg_window_rows(ox_cg *cg, const int64_t *I3, const int64_t *O3, const int64_t *K3, const int64_t *S3)
{
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld, /* input, output sizes */\n",
		     (long long)I3[0], (long long)I3[1], (long long)I3[2], (long long)O3[0], (long long)O3[1],
		     (long long)O3[2]);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld, /* kernel, strides */\n", (long long)K3[0],
		     (long long)K3[1], (long long)K3[2], (long long)S3[0], (long long)S3[1], (long long)S3[2]);
}

/* ---- Conv, ConvTranspose ---- */
static int emit_conv(ox_cg *cg, ox_graph *g, ox_node *n, int transpose)
{
	ox_value *x = val(g, n, 0, 0), *w = val(g, n, 1, 0), *y = val(g, n, 0, 1);
	int nsp = x->shape.rank - 2, dt = x->dtype;
	if (nsp > 3)
		return ox_error(g, n, "%d spatial axes are not supported (at most 3)", nsp);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	if (transpose) {
		if (ox_ir_nn_convt(g, n, nsp, in, k, s, d, pads, ap, out))
			return -1;
	} else {
		ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	}
	int64_t G = ox_attr_int(n, "group", 1), I3[3], O3[3], K3[3], S3[3], P3[3], D3[3];
	ox_cg_to3(in, nsp, 1, I3), ox_cg_to3(out, nsp, 1, O3), ox_cg_to3(k, nsp, 1, K3);
	ox_cg_to3(s, nsp, 1, S3), ox_cg_to3(pads, nsp, 0, P3), ox_cg_to3(d, nsp, 1, D3);
	if (use(cg, g, n, "vec", dt) || use(cg, g, n, transpose ? "convtranspose" : "conv", dt))
		return -1;
	char b1[256], b2[256], b3[256], b4[64], b5[64], b6[128];
	ox_cg_printf(cg, "\t/* %s %d-D, group %lld: x %s, w %s -> %s; strides %s, pads %s, dilations %s */\n",
		     transpose ? "ConvTranspose" : "Conv", nsp, (long long)G, shape_str(&x->shape, b1, sizeof b1),
		     shape_str(&w->shape, b2, sizeof b2), shape_str(&y->shape, b3, sizeof b3),
		     list_str(s, nsp, "x", b4, sizeof b4), list_str(pads, 2 * nsp, ",", b6, sizeof b6),
		     list_str(d, nsp, "x", b5, sizeof b5));
	ox_cg_printf(cg, "\tox_%s_%s(in0, in1, %s, out0, %lld, %lld, %lld, %lld,\n", transpose ? "convtranspose" : "conv",
		     ox_cg_sfx(dt), n->nin > 2 && n->in[2] >= 0 ? "in2" : "NULL", (long long)x->shape.d[0],
		     (long long)x->shape.d[1], (long long)y->shape.d[1], (long long)G);
	ox_cg_window_rows(cg, I3, O3, K3, S3);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld); /* begin pads, dilations */\n",
		     (long long)P3[0], (long long)P3[1], (long long)P3[2], (long long)D3[0], (long long)D3[1],
		     (long long)D3[2]);
	return 0;
}

/* ---- MaxPool, AveragePool ---- */
static int emit_pool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	int nsp = x->shape.rank - 2, dt = x->dtype, ismax = n->op == OX_OP_MaxPool;
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
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	int64_t I3[3], O3[3], K3[3], S3[3], P3[3], E3[3], D3[3];
	ox_cg_to3(in, nsp, 1, I3), ox_cg_to3(out, nsp, 1, O3), ox_cg_to3(k, nsp, 1, K3);
	ox_cg_to3(s, nsp, 1, S3), ox_cg_to3(pads, nsp, 0, P3), ox_cg_to3(pads + nsp, nsp, 0, E3);
	ox_cg_to3(d, nsp, 1, D3);
	if (use(cg, g, n, ismax ? "maxpool" : "avgpool", dt))
		return -1;
	char b1[256], b3[256], b4[64], b5[64], b6[128];
	int incl = (int)ox_attr_int(n, "count_include_pad", 0);
	ox_cg_printf(cg, "\t/* %s %d-D: %s -> %s; kernel %s, strides %s, pads %s%s */\n", n->optype, nsp,
		     shape_str(&x->shape, b1, sizeof b1), shape_str(&y->shape, b3, sizeof b3),
		     list_str(k, nsp, "x", b4, sizeof b4), list_str(s, nsp, "x", b5, sizeof b5),
		     list_str(pads, 2 * nsp, ",", b6, sizeof b6), !ismax && incl ? ", pads counted" : "");
	if (ismax)
		ox_cg_printf(cg, "\tox_maxpool_%s(in0, out0, %s, %lld,\n", ox_cg_sfx(dt),
			     ox_out(g, n, 1) ? "out1" : "NULL", (long long)(x->shape.d[0] * x->shape.d[1]));
	else
		ox_cg_printf(cg, "\tox_avgpool_%s(in0, out0, %lld,\n", ox_cg_sfx(dt),
			     (long long)(x->shape.d[0] * x->shape.d[1]));
	ox_cg_window_rows(cg, I3, O3, K3, S3);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, /* begin pads */\n", (long long)P3[0], (long long)P3[1],
		     (long long)P3[2]);
	if (!ismax)
		ox_cg_printf(cg, "\t\t%lld, %lld, %lld, /* end pads */\n", (long long)E3[0], (long long)E3[1],
			     (long long)E3[2]);
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
	int64_t nc = x->shape.d[0] * x->shape.d[1], sp = 1;
	for (int i = 2; i < x->shape.rank; i++)
		sp *= x->shape.d[i];
	const char *ct = ox_cg_ntype(dt);
	ox_cg_printf(cg, "\t/* %s over %lld values for each of %lld channels */\n", n->optype, (long long)sp,
		     (long long)nc);
	ox_cg_printf(cg, "\tfor (long c = 0; c < %lld; c++) {\n", (long long)nc);
	ox_cg_printf(cg, "\t\tconst %s *p = in0 + c * %lld;\n", ox_cg_ctype(dt), (long long)sp);
	if (ismax) {
		ox_cg_printf(cg, "\t\t%s m = %s;\n", ct, ox_cg_load(dt, "p[0]"));
		ox_cg_printf(cg, "\t\tfor (long i = 1; i < %lld; i++) {\n", (long long)sp);
		ox_cg_printf(cg, "\t\t\t%s v = %s;\n", ct, ox_cg_load(dt, "p[i]"));
		ox_cg_printf(cg, "\t\t\tm = v > m ? v : m;\n\t\t}\n");
		ox_cg_printf(cg, "\t\tout0[c] = %s;\n\t}\n", ox_cg_store(dt, "m"));
	} else {
		/* double sums: a global average often spans thousands of values */
		ox_cg_printf(cg, "\t\tdouble s = 0;\n");
		ox_cg_printf(cg, "\t\tfor (long i = 0; i < %lld; i++)\n", (long long)sp);
		ox_cg_printf(cg, "\t\t\ts += %s;\n", ox_cg_load(dt, "p[i]"));
		char e[64];
		snprintf(e, sizeof e, "(%s)(s / %lld)", ct, (long long)sp);
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
	int64_t N = x->shape.d[0], C = x->shape.d[1], S = 1;
	for (int i = 2; i < x->shape.rank; i++)
		S *= x->shape.d[i];
	int per = ox_shape_numel(&ox_in(g, n, 1)->shape) == C;
	for (int k = 2; k < 5; k++)
		if ((ox_shape_numel(&ox_in(g, n, k)->shape) == C) != per)
			return ox_error(g, n, "parameters mix per-channel and per-element shapes");
	double eps = ox_attr_float(n, "epsilon", 1e-5f), mom = ox_attr_float(n, "momentum", 0.9f);
	char ps[4][64];
	const char *pidx = per ? "c" : "c * S + i";
	for (int k = 1; k < 5; k++) {
		char e[32];
		snprintf(e, sizeof e, "in%d[%s]", k, pidx);
		snprintf(ps[k - 1], sizeof ps[k - 1], "%s", ox_cg_load(ox_in(g, n, k)->dtype, e));
	}
	ox_cg_printf(cg, "\t/* BatchNormalization%s: y = (x - mean) / sqrt(var + %s) * scale + bias, per %s */\n",
		     training ? " (training: batch statistics)" : "", ox_cg_lit(OX_F32, eps),
		     per ? "channel" : "element");
	ox_cg_printf(cg, "\tconst long N = %lld, C = %lld, S = %lld;\n", (long long)N, (long long)C, (long long)S);
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
			snprintf(e, sizeof e, "(%s)(%s * %s + %s * %s)", ox_cg_ntype(o->dtype), ps[k + 1],
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
	snprintf(e, sizeof e, "%s * a + b", ox_cg_load(dt, "xp[i]"));
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
	int64_t M = a->shape.d[ta], K = a->shape.d[!ta], N = b->shape.d[!tb];
	int64_t ci = 0, cj = 0;
	if (c && beta != 0) {
		int r = c->shape.rank;
		int64_t cn = r >= 1 ? c->shape.d[r - 1] : 1, cm = r >= 2 ? c->shape.d[r - 2] : 1;
		cj = cn == 1 ? 0 : 1;
		ci = cm == 1 ? 0 : cn;
	}
	if (use(cg, g, n, "vec", dt) || use(cg, g, n, "gemm", dt))
		return -1;
	ox_cg_printf(cg, "\t/* Gemm: [%lld x %lld]%s x [%lld x %lld]%s, alpha %g, beta %g%s */\n", (long long)M,
		     (long long)K, ta ? " (A transposed)" : "", (long long)K, (long long)N,
		     tb ? " (B transposed)" : "", alpha, beta, c && beta != 0 ? "" : ", no C");
	ox_cg_printf(cg, "\tox_gemm_%s(in0, in1, %s, out0, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %s, ",
		     ox_cg_sfx(dt), c && beta != 0 ? "in2" : "NULL", (long long)M, (long long)N, (long long)K,
		     (long long)(ta ? 1 : K), (long long)(ta ? M : 1), (long long)(tb ? 1 : N),
		     (long long)(tb ? K : 1), ox_cg_lit(dt, alpha));
	ox_cg_printf(cg, "%s, %lld, %lld);\n", ox_cg_lit(dt, beta), (long long)ci, (long long)cj);
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
	int64_t M = sa.d[sa.rank - 2], K = sa.d[sa.rank - 1], N = sb.d[sb.rank - 1];
	/* output batch dims and each operand's element stride along them (0: broadcast) */
	int nb = (sa.rank > sb.rank ? sa.rank : sb.rank) - 2;
	int64_t od[OX_MAX_RANK], as[OX_MAX_RANK], bs[OX_MAX_RANK], nbatch = 1;
	int64_t sta = M * K, stb = K * N;
	for (int i = nb - 1; i >= 0; i--) {
		int ia = i - (nb - (sa.rank - 2)), ib = i - (nb - (sb.rank - 2));
		int64_t da = ia >= 0 ? sa.d[ia] : 1, db = ib >= 0 ? sb.d[ib] : 1;
		od[i] = da > db ? da : db;
		as[i] = da == 1 ? 0 : sta;
		bs[i] = db == 1 ? 0 : stb;
		sta *= da, stb *= db;
		nbatch *= od[i];
	}
	if (use(cg, g, n, "vec", dt) || use(cg, g, n, "gemm", dt))
		return -1;
	char b1[256], b2[256], b3[256];
	ox_cg_printf(cg, "\t/* MatMul %s x %s -> %s */\n", shape_str(&a->shape, b1, sizeof b1),
		     shape_str(&b->shape, b2, sizeof b2), shape_str(&y->shape, b3, sizeof b3));
	int a_full = 1, b_none = 1;
	for (int i = 0; i < nb; i++) {
		a_full &= as[i] != 0 || od[i] == 1;
		b_none &= bs[i] == 0;
	}
	const char *one = ox_cg_lit(dt, 1), *zero = ox_cg_lit(dt, 0);
	if (nbatch == 1 || (a_full && b_none)) {
		/* one B for every batch: the batches of A are just more rows */
		ox_cg_printf(cg, "\tox_gemm_%s(in0, in1, NULL, out0, %lld, %lld, %lld, %lld, 1, %lld, 1, %s, %s, 0, 0);\n",
			     ox_cg_sfx(dt), (long long)(M * nbatch), (long long)N, (long long)K, (long long)K,
			     (long long)N, one, zero);
		return 0;
	}
	ox_cg_printf(cg, "\tfor (long t = 0; t < %lld; t++) {\n", (long long)nbatch);
	for (int pass = 0; pass < 2; pass++) {
		const int64_t *st = pass ? bs : as;
		ox_buf e = {0};
		int64_t inner = 1;
		for (int i = nb - 1; i >= 0; i--) {
			if (st[i] && od[i] > 1)
				ox_buf_printf(&e, "%s(t / %lld %% %lld) * %lld", e.len ? " + " : "", (long long)inner,
					      (long long)od[i], (long long)st[i]);
			inner *= od[i];
		}
		ox_cg_printf(cg, "\t\tconst long %s = %s;\n", pass ? "bo" : "ao", e.len ? e.s : "0");
		ox_buf_free(&e);
	}
	ox_cg_printf(cg, "\t\tox_gemm_%s(in0 + ao, in1 + bo, NULL, out0 + t * %lld, %lld, %lld, %lld, %lld, 1, %lld, 1, %s, %s, 0, 0);\n",
		     ox_cg_sfx(dt), (long long)(M * N), (long long)M, (long long)N, (long long)K, (long long)K,
		     (long long)N, one, zero);
	ox_cg_printf(cg, "\t}\n");
	return 0;
}

/* ---- Resize ---- */

/* Coefficients for one output coordinate, as the ONNX reference's
 * get_coeffs: ratio in (0, 1] is the distance past floor(x) (1 when x is
 * an integer), s the axis scale. Returns the count. */
static int resize_coeffs(int mode, int antialias, double a, double ratio, double s, double *c, int cap)
{
	int m = 0;
	if (mode == 0) { /* nearest: decided by the caller */
		c[0] = 0, c[1] = 1;
		return 2;
	}
	if (!antialias) {
		if (mode == 1) {
			c[0] = 1 - ratio, c[1] = ratio;
			return 2;
		}
		double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
		c[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
		c[1] = ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
		c[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
		c[3] = ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a;
		return 4;
	}
	s = s < 1 ? s : 1;
	double sum = 0;
	if (mode == 1) {
		int64_t start = (int64_t)floor(-1 / s) + 1, foot = 2 - 2 * start;
		for (int64_t i = 0; i < foot && m < cap; i++) {
			double t = fabs(((double)(start + i) - ratio) * s);
			c[m] = t < 1 ? 1 - t : 0;
			sum += c[m++];
		}
	} else {
		int64_t i0 = (int64_t)floor(-2 / s) + 1, i1 = 2 - i0;
		for (int64_t i = i0; i < i1 && m < cap; i++) {
			double t = fabs(s * ((double)i - ratio)), t2 = t * t, t3 = t2 * t;
			c[m] = t <= 1 ? (a + 2) * t3 - (a + 3) * t2 + 1 : t < 2 ? a * t3 - 5 * a * t2 + 8 * a * t - 4 * a : 0;
			sum += c[m++];
		}
	}
	for (int i = 0; i < m; i++)
		c[i] /= sum;
	return m;
}

static int cmp_near(const void *p, const void *q)
{
	const double *a = p, *b = q; /* {distance, index} */
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

static int cmp_i64(const void *p, const void *q)
{
	int64_t a = *(const int64_t *)p, b = *(const int64_t *)q;
	return a < b ? -1 : a > b;
}

/* The m integers nearest to x within [-pw, in + pw), pw = ceil(m/2),
 * ties to the smaller, ascending: the reference's neighbours in its
 * edge-padded copy of the axis. */
static void resize_neighbours(double x, int m, int64_t in, int64_t *idx)
{
	int64_t pw = (m + 1) / 2, lo = -pw, hi = in + pw - 1;
	int64_t c = (int64_t)floor(x);
	c = c < lo ? lo : c > hi ? hi : c;
	int64_t a = c - m - 1 < lo ? lo : c - m - 1, b = c + m + 1 > hi ? hi : c + m + 1;
	int cnt = (int)(b - a + 1);
	double *cand = malloc(sizeof(double) * 2 * (size_t)cnt);
	for (int i = 0; i < cnt; i++)
		cand[2 * i] = fabs(x - (double)(a + i)), cand[2 * i + 1] = (double)(a + i);
	qsort(cand, (size_t)cnt, 2 * sizeof(double), cmp_near);
	for (int i = 0; i < m; i++)
		idx[i] = (int64_t)cand[2 * i + 1];
	qsort(idx, (size_t)m, sizeof *idx, cmp_i64);
	free(cand);
}

enum { CT_HALF, CT_ASYM, CT_ALIGN, CT_PYTORCH, CT_TFCROP, CT_SYMM, CT_TFNN };

typedef struct {
	int mode;          /* 0 nearest, 1 linear, 2 cubic */
	int ctm;           /* CT_* */
	int nearest;       /* 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 opset-10 simple */
	int antialias, exclude;
	double cubic_a;
	int scales_given;  /* scales came from the scales input (float32 output width) */
} resize_opts;

/* Taps of one axis: nt per output index, offsets (index * stride, or -1
 * in tap 0 outside the input) and weights. */
static int resize_axis(const resize_opts *ro, int64_t in, int64_t out, double scale, double r0, double r1,
		       int64_t stride, int *ntap, int64_t **offp, double **wp)
{
	int cap = 4;
	if (ro->mode && ro->antialias && scale < 1) {
		double s = scale;
		cap = ro->mode == 1 ? (int)(2 - 2 * ((int64_t)floor(-1 / s) + 1)) : (int)(2 - 2 * ((int64_t)floor(-2 / s) + 1));
		if (cap < 1 || cap > 1 << 20)
			return -1;
	}
	/* the tables are static data in the generated code: refuse what no
	 * build would hold (and what a hostile model asks for) */
	if ((double)out * cap > (double)(1 << 26))
		return -1;
	size_t total = (size_t)out * (size_t)cap;
	int64_t *off = calloc(total, sizeof *off), *idx = calloc((size_t)cap, sizeof *idx);
	double *w = calloc(total, sizeof *w), *c = calloc((size_t)cap, sizeof *c);
	int maxn = 1;
	/* the reference's resized length: scale * in, in float32 when the scale is a float32 input */
	double lw = ro->scales_given ? (double)((float)scale * (float)in) : scale * (double)in;
	for (int64_t o = 0; o < out; o++) {
		double x = (double)o, xo;
		int oob = 0;
		switch (ro->ctm) {
		case CT_ALIGN:
			xo = lw == 1 ? 0 : x * (double)(in - 1) / (lw - 1);
			break;
		case CT_ASYM:
			xo = x / scale;
			break;
		case CT_TFCROP:
			xo = lw == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (lw - 1);
			xo += r0 * (double)(in - 1);
			oob = xo < 0 || xo > (double)(in - 1);
			break;
		case CT_PYTORCH:
			xo = lw == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
			break;
		case CT_SYMM: {
			double adj = (double)out / lw, center = (double)in / 2;
			xo = center * (1 - adj) + (x + 0.5) / scale - 0.5;
			break;
		}
		case CT_TFNN:
			xo = (x + 0.5) / scale;
			break;
		default:
			xo = (x + 0.5) / scale - 0.5;
		}
		int64_t *ot = off + o * cap;
		double *wt = w + o * cap;
		if (oob) {
			ot[0] = -1;
			continue;
		}
		double fl = floor(xo), ratio = xo == fl ? 1 : xo - fl;
		if (ro->mode == 0) {
			/* nearest: one tap */
			int64_t i;
			if (xo == fl)
				i = (int64_t)xo;
			else if (ro->nearest == 0)
				i = ratio <= 0.5 ? (int64_t)fl : (int64_t)fl + 1;
			else if (ro->nearest == 1)
				i = ratio < 0.5 ? (int64_t)fl : (int64_t)fl + 1;
			else if (ro->nearest == 2)
				i = (int64_t)fl;
			else if (ro->nearest == 3)
				i = (int64_t)fl + 1;
			else /* opset 10: floor upsampling, ceil downsampling */
				i = scale >= 1 ? (int64_t)fl : (int64_t)fl + 1;
			i = i < 0 ? 0 : i >= in ? in - 1 : i;
			ot[0] = i * stride;
			wt[0] = 1;
			continue;
		}
		int m = resize_coeffs(ro->mode, ro->antialias, ro->cubic_a, ratio, scale, c, cap);
		resize_neighbours(xo, m, in, idx);
		if (ro->exclude) {
			double sum = 0;
			for (int t = 0; t < m; t++) {
				if (idx[t] < 0 || idx[t] >= in)
					c[t] = 0;
				sum += c[t];
			}
			for (int t = 0; t < m; t++)
				c[t] /= sum;
		}
		/* keep the nonzero taps, clamped to the edge as the reference pads */
		int k = 0;
		for (int t = 0; t < m; t++) {
			if (c[t] == 0)
				continue;
			int64_t i = idx[t] < 0 ? 0 : idx[t] >= in ? in - 1 : idx[t];
			ot[k] = i * stride;
			wt[k++] = c[t];
		}
		if (k > maxn)
			maxn = k;
	}
	/* compact to maxn taps per output (zero-weight taps point at offset 0) */
	total = (size_t)out * (size_t)maxn;
	int64_t *co = calloc(total, sizeof *co);
	double *cw = calloc(total, sizeof *cw);
	for (int64_t o = 0; o < out; o++)
		for (int t = 0; t < maxn; t++) {
			co[o * maxn + t] = t < cap ? off[o * cap + t] : 0;
			cw[o * maxn + t] = t < cap ? w[o * cap + t] : 0;
			if (t > 0 && co[o * maxn] < 0)
				co[o * maxn + t] = 0;
		}
	free(off), free(w), free(idx), free(c);
	*ntap = ro->mode == 0 ? 1 : maxn;
	*offp = co;
	*wp = cw;
	return 0;
}

static void print_table(ox_cg *cg, const char *decl, const int64_t *iv, const double *dv, int64_t cnt)
{
	ox_cg_printf(cg, "\t%s = {", decl);
	for (int64_t i = 0; i < cnt; i++) {
		ox_cg_printf(cg, "%s", i % 16 ? " " : "\n\t\t");
		if (iv)
			ox_cg_printf(cg, "%lld,", (long long)iv[i]);
		else
			ox_cg_printf(cg, "%s,", ox_cg_lit(OX_F32, dv[i]));
	}
	ox_cg_printf(cg, "\n\t};\n");
}

/* A channel-blocked Resize (opt/layout.c, ox_ir_nn_resize_blockable):
 * N and C kept, so only H and W have taps, their offsets in floats of the
 * blocked layout; templates/resize_blocked.c sums the taps' vectors. */
static int emit_resize_blocked(ox_cg *cg, ox_graph *g, ox_node *n, const resize_opts *ro, const double *scale,
			       const double *roi)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	int b = x->lp[0];
	if (y->layout != OX_L_BLOCKED || y->lp[0] != b || b != cg->g->target->vw || scale[0] != 1 || scale[1] != 1)
		ox_die("emit_resize_blocked: %s is not a blocked Resize over H and W", n->name);
	int64_t IH = x->shape.d[2], IW = x->shape.d[3], OH = y->shape.d[2], OW = y->shape.d[3];
	int64_t CB = (x->shape.d[1] + b - 1) / b, rows = y->shape.d[0] * CB * OH;
	int nt[2];
	int64_t *offs[2] = {0};
	double *wts[2] = {0};
	int rc = resize_axis(ro, IH, OH, scale[2], roi[2], roi[6], IW * b, &nt[0], &offs[0], &wts[0]);
	if (!rc)
		rc = resize_axis(ro, IW, OW, scale[3], roi[3], roi[7], b, &nt[1], &offs[1], &wts[1]);
	if (rc) {
		free(offs[0]), free(wts[0]), free(offs[1]), free(wts[1]);
		return ox_error(g, n, "the resize tables (output length x taps, over 2^26 entries) are too large");
	}
	ox_cg_use_vf(cg);
	if (ox_cg_use(cg, "resize_blocked", OX_F32))
		ox_die("templates/resize_blocked.c is missing");
	ox_cg_printf(cg, "	/* Resize %s over H and W, blocked by %d: [%lld,%lld,%lld,%lld] -> %lldx%lld, %d x %d taps */\n",
		     ro->mode == 0 ? "nearest" : ro->mode == 1 ? "linear" : "cubic", b, (long long)x->shape.d[0],
		     (long long)x->shape.d[1], (long long)IH, (long long)IW, (long long)OH, (long long)OW, nt[0], nt[1]);
	int64_t ntask = rows < 64 ? rows : 64;
	ox_cg_tasks(cg, (long)ntask);
	static const char *const ax[2] = {"h", "w"};
	for (int a = 0; a < 2; a++) {
		char decl[64];
		int64_t cnt = (a ? OW : OH) * nt[a];
		snprintf(decl, sizeof decl, "static const long off%s[%lld]", ax[a], (long long)cnt);
		print_table(cg, decl, offs[a], NULL, cnt);
		if (ro->mode) {
			snprintf(decl, sizeof decl, "static const float wt%s[%lld]", ax[a], (long long)cnt);
			print_table(cg, decl, NULL, wts[a], cnt);
		}
	}
	free(offs[0]), free(wts[0]), free(offs[1]), free(wts[1]);
	ox_cg_printf(cg, "	ox_resize_blocked(in0, out0, %lld, %lld, %lld, %d, %d, offh, %s, offw, %s, t * %lld / %lld, (t + 1) * %lld / %lld);\n",
		     (long long)(IH * IW * b), (long long)OH, (long long)OW, nt[0], nt[1], ro->mode ? "wth" : "NULL",
		     ro->mode ? "wtw" : "NULL", (long long)rows, (long long)ntask, (long long)rows, (long long)ntask);
	return 0;
}

static int emit_resize(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = val(g, n, 0, 0), *y = val(g, n, 0, 1);
	int r = x->shape.rank, dt = x->dtype;
	resize_opts ro = {0};
	const char *mode = ox_attr_str(n, "mode", "nearest");
	ro.mode = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "cubic") ? 2 : 1;
	const char *ctm = n->opset >= 11 ? ox_attr_str(n, "coordinate_transformation_mode", "half_pixel") : "asymmetric";
	static const char *const ctms[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
					   "tf_crop_and_resize", "half_pixel_symmetric", "tf_half_pixel_for_nn"};
	ro.ctm = -1;
	for (int i = 0; i < 7; i++)
		if (!strcmp(ctm, ctms[i]))
			ro.ctm = i;
	if (ro.ctm < 0 || (ro.ctm == CT_TFNN && n->opset >= 13) || (ro.ctm == CT_SYMM && n->opset < 19))
		return ox_error(g, n, "coordinate_transformation_mode '%s' is not supported at opset %d", ctm,
				n->opset);
	const char *nm = ox_attr_str(n, "nearest_mode", "round_prefer_floor");
	static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
	ro.nearest = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(nm, nms[i]))
			ro.nearest = i;
	if (ro.nearest < 0)
		return ox_error(g, n, "nearest_mode '%s' is not supported", nm);
	if (n->opset < 11)
		ro.nearest = 4;
	ro.antialias = n->opset >= 18 && ox_attr_int(n, "antialias", 0);
	ro.exclude = ox_attr_int(n, "exclude_outside", 0) != 0;
	ro.cubic_a = ox_attr_float(n, "cubic_coeff_a", -0.75f);
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
	int64_t *offs[OX_MAX_RANK] = {0};
	double *wts[OX_MAX_RANK] = {0};
	int64_t stride = 1;
	int rc = 0;
	for (int a = r - 1; a >= 0 && !rc; a--) {
		rc = resize_axis(&ro, x->shape.d[a], y->shape.d[a], scale[a], roi[a], roi[a + r], stride, &nt[a],
				 &offs[a], &wts[a]);
		stride *= x->shape.d[a];
	}
	if (rc) {
		for (int a = 0; a < r; a++)
			free(offs[a]), free(wts[a]);
		return ox_error(g, n, "the resize tables (output length x taps, over 2^26 entries) are too large");
	}
	if (use(cg, g, n, ro.mode ? "resize" : "resize_nearest", dt)) {
		for (int a = 0; a < r; a++)
			free(offs[a]), free(wts[a]);
		return -1;
	}
	char b1[256], b2[256], what[96];
	if (ro.mode)
		snprintf(what, sizeof what, "%s%s", mode, ro.antialias ? " (antialias)" : "");
	else
		snprintf(what, sizeof what, "nearest (%s)", n->opset < 11 ? "opset-10 rounding" : nm);
	ox_cg_printf(cg, "\t/* Resize %s, %s: %s -> %s */\n", what, ctm, shape_str(&x->shape, b1, sizeof b1),
		     shape_str(&y->shape, b2, sizeof b2));
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
		snprintf(decl, sizeof decl, "static const long off%d[%lld]", a, (long long)(y->shape.d[a] * nt[a]));
		print_table(cg, decl, offs[a], NULL, y->shape.d[a] * nt[a]);
		if (ro.mode) {
			snprintf(decl, sizeof decl, "static const float wt%d[%lld]", a, (long long)(y->shape.d[a] * nt[a]));
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
	int dt = x->dtype;
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, 2, &w->shape, k, s, d, pads, &ap))
		return -1;
	if (ap != 0)
		return ox_error(g, n, "auto_pad is not a DeformConv attribute");
	if (use(cg, g, n, "deform_conv", dt))
		return -1;
	char b1[128], b2[128], b3[128], b4[64], b5[64], b6[128];
	int64_t G = ox_attr_int(n, "group", 1), OG = ox_attr_int(n, "offset_group", 1);
	ox_cg_printf(cg, "\t/* DeformConv group %lld, offset_group %lld: x %s, w %s -> %s; strides %s, pads %s, dilations %s */\n",
		     (long long)G, (long long)OG, shape_str(&x->shape, b1, sizeof b1), shape_str(&w->shape, b2, sizeof b2),
		     shape_str(&y->shape, b3, sizeof b3), list_str(s, 2, "x", b4, sizeof b4),
		     list_str(pads, 4, ",", b6, sizeof b6), list_str(d, 2, "x", b5, sizeof b5));
	ox_cg_printf(cg, "\tox_deform_conv_%s(in0, in1, in2, %s, %s, out0,\n", ox_cg_sfx(dt),
		     n->nin > 3 && n->in[3] >= 0 ? "in3" : "NULL", n->nin > 4 && n->in[4] >= 0 ? "in4" : "NULL");
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld, %lld, /* N, C, H, W, M, group, offset_group */\n",
		     (long long)x->shape.d[0], (long long)x->shape.d[1], (long long)x->shape.d[2],
		     (long long)x->shape.d[3], (long long)y->shape.d[1], (long long)G, (long long)OG);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, /* kernel, output size */\n", (long long)k[0], (long long)k[1],
		     (long long)y->shape.d[2], (long long)y->shape.d[3]);
	ox_cg_printf(cg, "\t\t%lld, %lld, %lld, %lld, %lld, %lld); /* strides, begin pads, dilations */\n",
		     (long long)s[0], (long long)s[1], (long long)pads[0], (long long)pads[1], (long long)d[0],
		     (long long)d[1]);
	return 0;
}

int emit_nn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y0 = ox_out(g, n, 0);
	ox_gemmgeo gq;
	if ((n->op == OX_OP_Gemm || n->op == OX_OP_MatMul) && !ox_opt_gemm_geo(g, n, &gq))
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
	case OX_OP_Resize:
		return emit_resize(cg, g, n);
	case OX_OP_DeformConv:
		return emit_deformconv(cg, g, n);
	}
	return ox_error(g, n, "not a dense compute op");
}
