/* emit_norm.c: C bodies for the normalizations, the pooling variants and
 * spatial sampling (the rows of ir/ops.def that name emit_norm).
 *
 * Most kernels are loops with their bounds printed inline (ox_cg_dim: a
 * literal, or an expression over ox_d[] for a run-time dim); statistics
 * (means, variances, norms, window sums) accumulate in double whatever the
 * storage type, and f16/bf16 go through ox_cg_load / ox_cg_store. The data
 * dependent kernels (GridSample, RoiAlign) are templates/norm_*.c, reading
 * through ox_ld_S / ox_st_S defined here per dtype. Tables that depend
 * only on shapes (Upsample taps, Col2Im's geometry) are computed here and
 * printed as static const arrays when the shapes are constants; with
 * run-time dims or shapes read from data the code computes them when it
 * runs, writes the data dims the node defines (ox_cg_set_dim) and checks
 * what the inference could only accept as possible (check_eq: the node
 * returns 2, PREFIX_ERR_SHAPE). Attribute decoding shared with
 * ir/infer_norm.c goes through the ox_ir_norm_* decoders (ir/family.h).
 */
#include "../cg.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAXSP (OX_MAX_RANK - 2)
typedef long long ll;

/* copies of the rotating-buffer helpers, safe to hold across calls */
static const char *ld(int dt, const char *e, char *buf, size_t n)
{
	if ((size_t)ox_cg_snprintf(buf, n, "%s", ox_cg_load(dt, e)) >= n || strlen(e) > 400)
		ox_die("emit_norm: expression too long");
	return buf;
}

/* storing double expression e into storage of dt, through the compute type */
static const char *st(int dt, const char *e, char *buf, size_t n)
{
	char c[600];
	if ((size_t)ox_cg_snprintf(c, sizeof c, "(%s)(%s)", ox_cg_ntype(dt), e) >= 400 ||
	    (size_t)ox_cg_snprintf(buf, n, "%s", ox_cg_store(dt, c)) >= n)
		ox_die("emit_norm: expression too long");
	return buf;
}

/* the product of dims from..to-1 of s (a constant, or a run-time dim) */
static ox_dim prod(ox_graph *g, const ox_shape *s, int from, int to)
{
	ox_dim p = 1;
	for (int i = from; i < to; i++)
		p = ox_dim_mul(g, p, s->d[i]);
	return p;
}

/* d as C, cast to an unsigned type when it is a run-time dim (a count of
 * bytes, a bound an unsigned value is compared with) */
static const char *dimu(ox_cg *cg, ox_dim d, const char *type)
{
	return d >= 0 ? ox_cg_dim(cg, d) : ox_cg_text(cg, "(%s)%s", type, ox_cg_dim(cg, d));
}

/* Pull in templates/NAME.c for dt (ox_cg_use adds ox_ld_/ox_st_ first). */
static int use(ox_cg *cg, ox_graph *g, ox_node *n, const char *name, int dt)
{
	if (ox_cg_use(cg, name, dt))
		return ox_error(g, n, "kernel template templates/%s.c is missing", name);
	return 0;
}

static void print_longs(ox_cg *cg, const char *name, const int64_t *v, int64_t m)
{
	ox_cg_printf(cg, "\tstatic const long %s[%lld] = {", name, (ll)(m ? m : 1));
	for (int64_t i = 0; i < m; i++)
		ox_cg_printf(cg, "%s%s%lld", i ? "," : "", i % 16 || !i ? (i ? " " : "") : "\n\t\t", (ll)v[i]);
	ox_cg_printf(cg, "%s};\n", m ? "" : "0");
}

/* ---- InstanceNormalization, GroupNormalization ---- */
static int emit_chan_norm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, inst = n->op == OX_OP_InstanceNormalization;
	ox_dim N = x->shape.d[0], C = x->shape.d[1], sp = prod(g, &x->shape, 2, x->shape.rank);
	ox_dim G = inst ? C : ox_attr_int(n, "num_groups", 1), cpg = ox_dim_div(g, C, G), gsz = ox_dim_mul(g, cpg, sp);
	int per_group = !inst && n->opset < 21;
	double eps = ox_attr_float(n, "epsilon", 1e-5f);
	char b1[512], b2[512], b3[512], b4[700];
	if (!inst && C < 0) {
		ox_cg_line(cg, 1, "if (%s %% %s)", ox_cg_dim(cg, C), ox_cg_dim(cg, G));
		ox_cg_line(cg, 2, "return 2; /* the channels do not divide into the groups */");
		cg->fails_shape = 1;
	}
	ox_cg_check_eq(cg, ox_in(g, n, 1)->shape.d[0], per_group ? G : C, "a scale per channel");
	ox_cg_check_eq(cg, ox_in(g, n, 2)->shape.d[0], per_group ? G : C, "a bias per channel");
	ox_cg_line(cg, 1, "/* %s: %s groups of %s channels x %s values; scale and bias per %s */", n->optype,
	     ox_cg_dim(cg, G), ox_cg_dim(cg, cpg), ox_cg_dim(cg, sp), per_group ? "group" : "channel");
	ox_cg_line(cg, 1, "for (long ng = 0; ng < %s; ng++) {", ox_cg_dim(cg, ox_dim_mul(g, N, G)));
	ox_cg_line(cg, 2, "const %s *p = in0 + ng * %s;", ox_cg_ctype(dt), ox_cg_dim(cg, gsz));
	ox_cg_line(cg, 2, "%s *q = out0 + ng * %s;", ox_cg_ctype(dt), ox_cg_dim(cg, gsz));
	ox_cg_line(cg, 2, "double sum = 0, var = 0;");
	ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++)", ox_cg_dim(cg, gsz));
	ox_cg_line(cg, 3, "sum += %s;", ld(dt, "p[i]", b1, sizeof b1));
	ox_cg_line(cg, 2, "const double mean = sum / %s;", ox_cg_dim(cg, gsz));
	ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++) {", ox_cg_dim(cg, gsz));
	ox_cg_line(cg, 3, "const double d = %s - mean;", b1);
	ox_cg_line(cg, 3, "var += d * d;");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const double inv = 1 / sqrt(var / %s + %s);", ox_cg_dim(cg, gsz), ox_cg_lit(OX_F64, eps));
	ox_cg_line(cg, 2, "for (long c = 0; c < %s; c++) {", ox_cg_dim(cg, cpg));
	if (per_group)
		ox_cg_line(cg, 3, "const long k = ng %% %s; /* the group */", ox_cg_dim(cg, G));
	else
		ox_cg_line(cg, 3, "const long k = ng %% %s * %s + c; /* the channel */", ox_cg_dim(cg, G),
			   ox_cg_dim(cg, cpg));
	ox_cg_line(cg, 3, "const double a = %s * inv;", ld(dt, "in1[k]", b2, sizeof b2));
	ox_cg_line(cg, 3, "const double b = %s - mean * a;", ld(dt, "in2[k]", b3, sizeof b3));
	ox_cg_line(cg, 3, "for (long i = c * %s; i < (c + 1) * %s; i++)", ox_cg_dim(cg, sp), ox_cg_dim(cg, sp));
	char e[600];
	ox_cg_snprintf(e, sizeof e, "a * %s + b", b1);
	ox_cg_line(cg, 4, "q[i] = %s;", st(dt, e, b4, sizeof b4));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- LpNormalization ---- */
static int emit_lpnorm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	int a = ox_norm_axis(ox_attr_int(n, "axis", -1), r);
	int64_t p = ox_attr_int(n, "p", 2);
	ox_dim outer = prod(g, &x->shape, 0, a), len = x->shape.d[a], inner = prod(g, &x->shape, a + 1, r);
	ox_dim span = ox_dim_mul(g, len, inner);
	char b1[512], b2[700];
	ox_cg_line(cg, 1, "/* LpNormalization p = %lld along axis %d: %s x [%s] x %s */", (ll)p, a, ox_cg_dim(cg, outer),
	     ox_cg_dim(cg, len), ox_cg_dim(cg, inner));
	ox_cg_line(cg, 1, "for (long o = 0; o < %s; o++)", ox_cg_dim(cg, outer));
	ox_cg_line(cg, 1, "for (long i = 0; i < %s; i++) {", ox_cg_dim(cg, inner));
	ox_cg_line(cg, 2, "const %s *p = in0 + o * %s + i;", ox_cg_ctype(dt), ox_cg_dim(cg, span));
	ox_cg_line(cg, 2, "%s *q = out0 + o * %s + i;", ox_cg_ctype(dt), ox_cg_dim(cg, span));
	ox_cg_line(cg, 2, "const long step = %s;", ox_cg_dim(cg, inner));
	ox_cg_line(cg, 2, "double s = 0;");
	ox_cg_line(cg, 2, "for (long k = 0; k < %s; k++) {", ox_cg_dim(cg, len));
	ox_cg_line(cg, 3, "const double v = %s;", ld(dt, "p[k * step]", b1, sizeof b1));
	ox_cg_line(cg, 3, "s += %s;", p == 1 ? "fabs(v)" : "v * v");
	ox_cg_line(cg, 2, "}");
	if (p == 2)
		ox_cg_line(cg, 2, "s = sqrt(s);");
	/* a zero vector stays zero (the reference divides by a norm of 1) */
	ox_cg_line(cg, 2, "if (s == 0)");
	ox_cg_line(cg, 3, "s = 1;");
	ox_cg_line(cg, 2, "for (long k = 0; k < %s; k++)", ox_cg_dim(cg, len));
	char e[600];
	ox_cg_snprintf(e, sizeof e, "%s / s", b1);
	ox_cg_line(cg, 3, "q[k * step] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* "(v / d0 % n0) * s0 + ..." : the offset of flat index v of the sub-space
 * made of the axes with mask[a] == want, into the full tensor. */
static void sub_offset(ox_cg *cg, ox_graph *g, char *buf, size_t cap, const char *v, const ox_shape *s,
		       const int *mask, int want)
{
	ox_dim stride[OX_MAX_RANK], sub = 1;
	size_t at = 0;
	stride[s->rank - 1] = 1;
	for (int a = s->rank - 2; a >= 0; a--)
		stride[a] = ox_dim_mul(g, stride[a + 1], s->d[a + 1]);
	buf[0] = 0;
	for (int a = s->rank - 1; a >= 0; a--) {
		if (mask[a] != want || s->d[a] == 1)
			continue;
		at += (size_t)ox_cg_snprintf(buf + at, at < cap ? cap - at : 0, "%s(%s / %s %% %s) * %s", at ? " + " : "", v,
				       ox_cg_dim(cg, sub), ox_cg_dim(cg, s->d[a]), ox_cg_dim(cg, stride[a]));
		sub = ox_dim_mul(g, sub, s->d[a]);
	}
	if (at >= cap)
		ox_die("emit_norm: offset expression too long");
	if (!at)
		ox_cg_snprintf(buf, cap, "0");
}

/* ---- MeanVarianceNormalization: (x - mean) / (std + 1e-9) over axes ---- */
static int emit_mvn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype, r = x->shape.rank, mask[OX_MAX_RANK] = {0};
	const int64_t *a;
	int m = ox_ir_norm_mvn_axes(n, &a);
	for (int i = 0; i < m; i++)
		mask[ox_norm_axis(a[i], r)] = 1;
	ox_dim K = 1, R = 1;
	for (int i = 0; i < r; i++) {
		if (mask[i])
			R = ox_dim_mul(g, R, x->shape.d[i]);
		else
			K = ox_dim_mul(g, K, x->shape.d[i]);
	}
	char kof[4096], rof[4096], b1[512], b2[700], e[600];
	sub_offset(cg, g, kof, sizeof kof, "k", &x->shape, mask, 0);
	sub_offset(cg, g, rof, sizeof rof, "i", &x->shape, mask, 1);
	ox_cg_line(cg, 1, "/* MeanVarianceNormalization: %s groups of %s values */", ox_cg_dim(cg, K), ox_cg_dim(cg, R));
	ox_cg_line(cg, 1, "for (long k = 0; k < %s; k++) {", ox_cg_dim(cg, K));
	ox_cg_line(cg, 2, "const long base = %s;", kof);
	ox_cg_line(cg, 2, "double sum = 0, var = 0;");
	ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++) {", ox_cg_dim(cg, R));
	ox_cg_line(cg, 3, "const long at = base + %s;", rof);
	ox_cg_line(cg, 3, "sum += %s;", ld(dt, "in0[at]", b1, sizeof b1));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const double mean = sum / %s;", ox_cg_dim(cg, R));
	ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++) {", ox_cg_dim(cg, R));
	ox_cg_line(cg, 3, "const long at = base + %s;", rof);
	ox_cg_line(cg, 3, "const double d = %s - mean;", b1);
	ox_cg_line(cg, 3, "var += d * d;");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const double sd = sqrt(var / %s) + 1e-9;", ox_cg_dim(cg, R));
	ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++) {", ox_cg_dim(cg, R));
	ox_cg_line(cg, 3, "const long at = base + %s;", rof);
	ox_cg_snprintf(e, sizeof e, "(%s - mean) / sd", b1);
	ox_cg_line(cg, 3, "out0[at] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- LRN: x / (bias + alpha / size * sum of squares over nearby channels)^beta ---- */
static int emit_lrn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype;
	ox_dim N = x->shape.d[0], C = x->shape.d[1], sp = prod(g, &x->shape, 2, x->shape.rank);
	int64_t size = ox_attr_int(n, "size", 1), c1 = (size - 1) / 2, c2 = size / 2 + 1;
	double alpha = ox_attr_float(n, "alpha", 1e-4f), beta = ox_attr_float(n, "beta", 0.75f);
	double bias = ox_attr_float(n, "bias", 1.0f);
	char b1[512], b2[700], e[600];
	const char *Cs = ox_cg_dim(cg, C), *sps = ox_cg_dim(cg, sp);
	ox_cg_line(cg, 1, "/* LRN over %s channels, size %lld */", Cs, (ll)size);
	ox_cg_line(cg, 1, "for (long nn = 0; nn < %s; nn++)", ox_cg_dim(cg, N));
	ox_cg_line(cg, 1, "for (long c = 0; c < %s; c++) {", Cs);
	ox_cg_line(cg, 2, "const long lo = c - %lld < 0 ? 0 : c - %lld, hi = c + %lld > %s ? %s : c + %lld;", (ll)c1,
	     (ll)c1, (ll)c2, Cs, Cs, (ll)c2);
	ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++) {", sps);
	ox_cg_line(cg, 3, "double s = 0;");
	ox_cg_line(cg, 3, "for (long cc = lo; cc < hi; cc++) {");
	ox_cg_snprintf(e, sizeof e, "in0[(nn * %s + cc) * %s + i]", Cs, sps);
	ox_cg_line(cg, 4, "const double v = %s;", ld(dt, e, b1, sizeof b1));
	ox_cg_line(cg, 4, "s += v * v;");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "const long at = (nn * %s + c) * %s + i;", Cs, sps);
	ox_cg_snprintf(e, sizeof e, "%s / pow(%s + %s * s, %s)", ox_cg_load(dt, "in0[at]"), ox_cg_lit(OX_F64, bias),
		 ox_cg_lit(OX_F64, alpha / (double)size), ox_cg_lit(OX_F64, beta));
	ox_cg_line(cg, 3, "out0[at] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- LpPool: (sum of |x|^p over the window)^(1/p); pads add nothing ---- */
static int emit_lppool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int nsp = x->shape.rank - 2, dt = x->dtype;
	if (nsp > 3)
		return ox_error(g, n, "%d spatial axes are not supported (at most 3)", nsp);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP];
	ox_dim in[MAXSP], out[MAXSP];
	int ap, rtsp = 0;
	if (ox_ir_nn_window(g, n, nsp, NULL, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < nsp; i++) {
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
		rtsp |= in[i] < 0 || out[i] < 0;
	}
	/* SAME pads of run-time sizes are computed when the program runs (below) */
	if (!rtsp)
		ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	int same = rtsp && (ap == 1 || ap == 2);
	/* widen to 3 axes: leading 1s */
	ox_dim I[3], O[3];
	int64_t K[3], S[3], D[3];
	char P[3][32];
	static const char *const ax[3] = {"d", "h", "w"};
	for (int i = 0; i < 3; i++) {
		int j = i - (3 - nsp);
		I[i] = j < 0 ? 1 : in[j], O[i] = j < 0 ? 1 : out[j], K[i] = j < 0 ? 1 : k[j];
		S[i] = j < 0 ? 1 : s[j], D[i] = j < 0 ? 1 : d[j];
		if (j >= 0 && same)
			ox_cg_snprintf(P[i], sizeof P[i], "p%s", ax[i]);
		else
			ox_cg_snprintf(P[i], sizeof P[i], "%lld", (ll)(j < 0 ? 0 : pads[j]));
	}
	int64_t p = ox_attr_int(n, "p", 2);
	char b1[512], b2[700];
	ox_cg_lstart(cg, 1, "/* LpPool p = %lld, %d-D: kernel %lldx%lldx%lld, strides %lldx%lldx%lld, ",
	     (ll)p, nsp, (ll)K[0], (ll)K[1], (ll)K[2], (ll)S[0], (ll)S[1], (ll)S[2]);
	ox_cg_printf(cg, "begin pads %s,%s,%s */\n",
	     P[0], P[1], P[2]);
	for (int i = 3 - nsp; i < 3 && same; i++) {
		/* SAME_UPPER puts the odd pad at the end, SAME_LOWER at the start */
		ox_cg_line(cg, 1, "const long t%s = (long)((%s - 1) * %lld + %lld - %s);", ax[i], ox_cg_dim(cg, O[i]),
			   (ll)S[i], (ll)((K[i] - 1) * D[i] + 1), ox_cg_dim(cg, I[i]));
		if (ap == 1)
			ox_cg_line(cg, 1, "const long p%s = t%s <= 0 ? 0 : t%s / 2;", ax[i], ax[i], ax[i]);
		else
			ox_cg_line(cg, 1, "const long p%s = t%s <= 0 ? 0 : t%s - t%s / 2;", ax[i], ax[i], ax[i], ax[i]);
	}
	ox_cg_line(cg, 1, "long o = 0;");
	ox_cg_line(cg, 1, "for (long nc = 0; nc < %s; nc++) {", ox_cg_dim(cg, ox_dim_mul(g, x->shape.d[0], x->shape.d[1])));
	ox_cg_line(cg, 2, "const %s *xc = in0 + nc * %s;", ox_cg_ctype(dt),
		   ox_cg_dim(cg, ox_dim_mul(g, ox_dim_mul(g, I[0], I[1]), I[2])));
	ox_cg_line(cg, 2, "for (long od = 0; od < %s; od++)", ox_cg_dim(cg, O[0]));
	ox_cg_line(cg, 2, "for (long oh = 0; oh < %s; oh++)", ox_cg_dim(cg, O[1]));
	ox_cg_line(cg, 2, "for (long ow = 0; ow < %s; ow++, o++) {", ox_cg_dim(cg, O[2]));
	ox_cg_line(cg, 3, "double sum = 0;");
	for (int i = 0; i < 3; i++) {
		ox_cg_line(cg, 3 + i, "for (long k%s = 0; k%s < %lld; k%s++) {", ax[i], ax[i], (ll)K[i], ax[i]);
		ox_cg_line(cg, 4 + i, "const long i%s = o%s * %lld - %s + k%s * %lld;", ax[i], ax[i], (ll)S[i], P[i],
		     ax[i], (ll)D[i]);
		ox_cg_line(cg, 4 + i, "if (i%s < 0 || i%s >= %s)", ax[i], ax[i], ox_cg_dim(cg, I[i]));
		ox_cg_line(cg, 5 + i, "continue;");
	}
	char e[600];
	ox_cg_snprintf(e, sizeof e, "xc[(id * %s + ih) * %s + iw]", ox_cg_dim(cg, I[1]), ox_cg_dim(cg, I[2]));
	ox_cg_line(cg, 6, "const double v = fabs(%s);", ld(dt, e, b1, sizeof b1));
	if (p == 1)
		ox_cg_line(cg, 6, "sum += v;");
	else if (p == 2)
		ox_cg_line(cg, 6, "sum += v * v;");
	else
		ox_cg_line(cg, 6, "sum += pow(v, %lld);", (ll)p);
	for (int i = 2; i >= 0; i--)
		ox_cg_line(cg, 3 + i, "}");
	if (p == 1)
		ox_cg_snprintf(e, sizeof e, "sum");
	else if (p == 2)
		ox_cg_snprintf(e, sizeof e, "sqrt(sum)");
	else
		ox_cg_snprintf(e, sizeof e, "pow(sum, 1.0 / %lld)", (ll)p);
	ox_cg_line(cg, 3, "out0[o] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- MaxUnpool: scatter x to the flat indices of the unpooled tensor ---- */
static int emit_maxunpool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int r = x->shape.rank, nsp = r - 2;
	ox_dim in[MAXSP], sp[MAXSP];
	int64_t k[MAXSP], s[MAXSP], pads[2 * MAXSP];
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2];
	if (ox_ir_norm_unpool(g, n, nsp, in, k, s, pads, sp))
		return -1;
	ox_shape u = {r, {x->shape.d[0], x->shape.d[1]}};
	int same = 1;
	for (int i = 0; i < nsp; i++)
		u.d[i + 2] = sp[i], same &= sp[i] == y->shape.d[i + 2];
	same &= u.d[0] == y->shape.d[0] && u.d[1] == y->shape.d[1];
	for (int i = 0; i < r; i++)
		ox_cg_check_eq(cg, ox_in(g, n, 1)->shape.d[i], x->shape.d[i], "indices of the input's shape");
	/* an output_shape read when the program runs: its data dims, the
	 * others as the compiler knows them; each at least the unpooled dim */
	int read = n->nin > 2 && n->in[2] >= 0 && !ox_in_const(g, n, 2);
	for (int i = 0; i < r; i++) {
		ox_dim d = y->shape.d[i];
		char v[32];
		ox_cg_snprintf(v, sizeof v, "in2[%d]", i);
		if (read && ox_dim_defined_by(g, d, n->out[0])) {
			ox_cg_set_dim(cg, 1, d, v);
		} else if (read) {
			ox_cg_line(cg, 1, "if (%s != %s)", v, ox_cg_dim(cg, d));
			ox_cg_line(cg, 2, "return 2; /* not the output_shape the compiler knows */");
			cg->fails_shape = 1;
		}
		if (d != u.d[i] && (d < 0 || u.d[i] < 0)) {
			ox_cg_line(cg, 1, "if (%s < %s)", ox_cg_dim(cg, d), ox_cg_dim(cg, u.d[i]));
			ox_cg_line(cg, 2, "return 2; /* output_shape is smaller than the unpooled size */");
			cg->fails_shape = 1;
		}
	}
	ox_cg_check_cap(cg, g, n, 0);
	ox_dim total = prod(g, &u, 0, r);
	ox_cg_line(cg, 1, "/* MaxUnpool: indices address the %s elements of the unpooled tensor%s */", ox_cg_dim(cg, total),
	     same ? "" : ", placed at the start of each axis of the larger output_shape");
	ox_cg_line(cg, 1, "memset(out0, 0, sizeof *out0 * %s);", dimu(cg, prod(g, &y->shape, 0, r), "size_t"));
	ox_cg_line(cg, 1, "for (long i = 0; i < %s; i++) {", ox_cg_dim(cg, prod(g, &x->shape, 0, r)));
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, 2, "const int64_t k = in1[i];");
	ox_cg_line(cg, 2, "if ((uint64_t)k >= %s)", dimu(cg, total, "uint64_t"));
	ox_cg_line(cg, 3, "return 1; /* not an index MaxPool could give */");
	if (same) {
		ox_cg_line(cg, 2, "out0[k] = in0[i];");
	} else {
		ox_cg_line(cg, 2, "long at = 0, rest = (long)k;");
		ox_dim ost = 1;
		for (int a = r - 1; a >= 0; a--) {
			ox_cg_line(cg, 2, "at += rest %% %s * %s, rest /= %s;", ox_cg_dim(cg, u.d[a]), ox_cg_dim(cg, ost),
				   ox_cg_dim(cg, u.d[a]));
			ost = ox_dim_mul(g, ost, y->shape.d[a]);
		}
		ox_cg_line(cg, 2, "out0[at] = in0[i];");
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- MaxRoiPool: max over the bins of rounded, scaled ROIs ---- */
static int emit_maxroipool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype;
	const char *ct = ox_cg_ntype(dt); /* the reference computes bins in the input's float type */
	ox_dim N = x->shape.d[0], C = x->shape.d[1], H = x->shape.d[2], W = x->shape.d[3], R = y->shape.d[0];
	int64_t PH = y->shape.d[2], PW = y->shape.d[3];
	double scale = ox_attr_float(n, "spatial_scale", 1.0f);
	char b1[512], b2[128], b3[128], b4[128], b5[128], b6[700];
	char Hs[300], Ws[300];
	ox_cg_snprintf(Hs, sizeof Hs, "%s", ox_cg_dim(cg, H));
	ox_cg_snprintf(Ws, sizeof Ws, "%s", ox_cg_dim(cg, W));
	ox_cg_check_eq(cg, ox_in(g, n, 1)->shape.d[1], 5, "ROIs of 5 values");
	ox_cg_line(cg, 1, "/* MaxRoiPool: %s ROIs -> %lldx%lld bins over a %sx%s map */", ox_cg_dim(cg, R), (ll)PH, (ll)PW,
	     Hs, Ws);
	ox_cg_line(cg, 1, "for (long r = 0; r < %s; r++) {", ox_cg_dim(cg, R));
	ox_cg_line(cg, 2, "const %s *roi = in1 + r * 5;", ox_cg_ctype(dt));
	/* the batch index is checked; the corners convert saturated to int32
	 * (NaN -> 0), so the sums below cannot overflow */
	const char *i32 = ox_cg_f2i(cg, OX_I32);
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, 2, "const int64_t b = %s(%s);", ox_cg_f2i(cg, OX_I64), ld(dt, "roi[0]", b1, sizeof b1));
	ox_cg_line(cg, 2, "if ((uint64_t)b >= %s)", dimu(cg, N, "uint64_t"));
	ox_cg_line(cg, 3, "return 1; /* a batch index out of range */");
	ox_cg_line(cg, 2, "const %s sc = %s;", ct, ox_cg_lit(dt, scale));
	ox_cg_line(cg, 2, "const int64_t sw = %s(round(%s * sc)), sh = %s(round(%s * sc));", i32,
	     ld(dt, "roi[1]", b2, sizeof b2), i32, ld(dt, "roi[2]", b3, sizeof b3));
	ox_cg_line(cg, 2, "const int64_t ew = %s(round(%s * sc)), eh = %s(round(%s * sc));", i32,
	     ld(dt, "roi[3]", b4, sizeof b4), i32, ld(dt, "roi[4]", b5, sizeof b5));
	ox_cg_line(cg, 2, "const int64_t rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1, rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1;");
	ox_cg_line(cg, 2, "const %s bh = (%s)rh / (%s)%lld, bw = (%s)rw / (%s)%lld;", ct, ct, ct, (ll)PH, ct, ct, (ll)PW);
	ox_cg_line(cg, 2, "for (long c = 0; c < %s; c++) {", ox_cg_dim(cg, C));
	ox_cg_line(cg, 3, "const %s *xc = in0 + (b * %s + c) * %s;", ox_cg_ctype(dt), ox_cg_dim(cg, C),
		   ox_cg_dim(cg, ox_dim_mul(g, H, W)));
	ox_cg_line(cg, 3, "%s *yc = out0 + (r * %s + c) * %lld;", ox_cg_ctype(dt), ox_cg_dim(cg, C), (ll)(PH * PW));
	ox_cg_line(cg, 3, "for (long ph = 0; ph < %lld; ph++)", (ll)PH);
	ox_cg_line(cg, 3, "for (long pw = 0; pw < %lld; pw++) {", (ll)PW);
	ox_cg_line(cg, 4, "int64_t hs = (int64_t)floor((%s)ph * bh) + sh, he = (int64_t)ceil((%s)(ph + 1) * bh) + sh;", ct, ct);
	ox_cg_line(cg, 4, "int64_t ws = (int64_t)floor((%s)pw * bw) + sw, we = (int64_t)ceil((%s)(pw + 1) * bw) + sw;", ct, ct);
	ox_cg_line(cg, 4, "hs = hs < 0 ? 0 : hs > %s ? %s : hs, he = he < 0 ? 0 : he > %s ? %s : he;", Hs, Hs, Hs, Hs);
	ox_cg_line(cg, 4, "ws = ws < 0 ? 0 : ws > %s ? %s : ws, we = we < 0 ? 0 : we > %s ? %s : we;", Ws, Ws, Ws, Ws);
	ox_cg_line(cg, 4, "double m = 0;");
	ox_cg_line(cg, 4, "if (he > hs && we > ws) {");
	ox_cg_line(cg, 5, "m = -INFINITY;");
	ox_cg_line(cg, 5, "for (int64_t h = hs; h < he; h++)");
	ox_cg_line(cg, 5, "for (int64_t w = ws; w < we; w++) {");
	char e[400];
	ox_cg_snprintf(e, sizeof e, "xc[h * %s + w]", Ws);
	ox_cg_line(cg, 6, "const double v = %s;", ld(dt, e, b1, sizeof b1));
	ox_cg_line(cg, 6, "m = v > m ? v : m;");
	ox_cg_line(cg, 5, "}");
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "yc[ph * %lld + pw] = %s;", (ll)PW, st(dt, "m", b6, sizeof b6));
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- RoiAlign (templates/norm_roialign.c) ---- */
static int emit_roialign(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *bi = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int dt = x->dtype;
	if (bi->dtype != OX_I64)
		return ox_error(g, n, "batch_indices of dtype %s are not supported (i64 only)", ox_dtype_name(bi->dtype));
	/* opset 10 has no transform attribute: it behaves as output_half_pixel */
	const char *ct = n->opset >= 16 ? ox_attr_str(n, "coordinate_transformation_mode", "half_pixel")
					: "output_half_pixel";
	int half = !strcmp(ct, "half_pixel"), maxmode = !strcmp(ox_attr_str(n, "mode", "avg"), "max");
	int64_t ratio = ox_attr_int(n, "sampling_ratio", 0);
	double scale = ox_attr_float(n, "spatial_scale", 1.0f);
	if (use(cg, g, n, "norm_roialign", dt))
		return -1;
	ox_cg_check_eq(cg, ox_in(g, n, 1)->shape.d[1], 4, "ROIs of 4 values");
	ox_cg_check_eq(cg, bi->shape.d[0], ox_in(g, n, 1)->shape.d[0], "a batch index per ROI");
	ox_cg_line(cg, 1, "/* RoiAlign %s, %s, sampling_ratio %lld */", maxmode ? "max" : "avg", ct, (ll)ratio);
	if (y->shape.d[0] != 0) {
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_cg_line(cg, 1, "for (long r = 0; r < %s; r++)", ox_cg_dim(cg, y->shape.d[0]));
		ox_cg_line(cg, 2, "if ((uint64_t)in2[r] >= %s)", dimu(cg, x->shape.d[0], "uint64_t"));
		ox_cg_line(cg, 3, "return 1; /* a batch index out of range */");
	}
	ox_cg_lstart(cg, 1, "ox_roialign_%s(in0, in1, in2, out0, %s, %s, %s, %s, %s, %lld, %lld, ",
	     ox_cg_sfx(dt), ox_cg_dim(cg, x->shape.d[0]), ox_cg_dim(cg, y->shape.d[0]), ox_cg_dim(cg, x->shape.d[1]),
	     ox_cg_dim(cg, x->shape.d[2]), ox_cg_dim(cg, x->shape.d[3]), (ll)y->shape.d[2], (ll)y->shape.d[3]);
	ox_cg_printf(cg, "%s, %lld, %d, %d);\n",
	     ox_cg_lit(OX_F64, scale), (ll)ratio, half, maxmode);
	return 0;
}

/* ---- GridSample (templates/norm_gridsample.c) ---- */
int ox_cg_gridsample_opts(ox_graph *g, ox_node *n, ox_gs_opts *o)
{
	o->m = ox_attr_str(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
	o->p = ox_attr_str(n, "padding_mode", "zeros");
	o->mode = o->pad = -1;
	if (!strcmp(o->m, "nearest"))
		o->mode = 0;
	else if (!strcmp(o->m, n->opset >= 20 ? "linear" : "bilinear"))
		o->mode = 1;
	else if (!strcmp(o->m, n->opset >= 20 ? "cubic" : "bicubic"))
		o->mode = 2;
	if (!strcmp(o->p, "zeros"))
		o->pad = 0;
	else if (!strcmp(o->p, "border"))
		o->pad = 1;
	else if (!strcmp(o->p, "reflection"))
		o->pad = 2;
	if (o->mode < 0 || o->pad < 0)
		return ox_error(g, n, "mode '%s' / padding_mode '%s' is not supported at opset %d", o->m, o->p, n->opset);
	o->align = ox_attr_int(n, "align_corners", 0) != 0;
	return 0;
}

static int emit_gridsample(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, nsp = x->shape.rank - 2;
	ox_gs_opts o;
	if (ox_cg_gridsample_opts(g, n, &o) || use(cg, g, n, "norm_gridsample", dt))
		return -1;
	ox_value *gr = ox_in(g, n, 1);
	ox_cg_check_eq(cg, gr->shape.d[0], x->shape.d[0], "a grid per batch");
	ox_cg_check_eq(cg, gr->shape.d[nsp + 1], nsp, "a coordinate per spatial axis");
	ox_cg_line(cg, 1, "/* GridSample %s, padding %s%s */", o.m, o.p, o.align ? ", align_corners" : "");
	ox_cg_printf(cg, "\t%sconst long in[%d] = {", ox_shape_is_rt(g, &x->shape) ? "" : "static ", nsp);
	for (int i = 0; i < nsp; i++)
		ox_cg_printf(cg, "%s%s", i ? ", " : "", ox_cg_dim(cg, x->shape.d[i + 2]));
	ox_cg_printf(cg, "};\n");
	ox_cg_line(cg, 1, "ox_gridsample_%s(in0, in1, out0, %s, %s, %d, in, %s, %d, %d, %d);", ox_cg_sfx(dt),
	     ox_cg_dim(cg, x->shape.d[0]), ox_cg_dim(cg, x->shape.d[1]), nsp,
	     ox_cg_dim(cg, prod(g, &y->shape, 2, y->shape.rank)), o.mode, o.pad, o.align);
	return 0;
}

/* ---- Upsample: Resize with asymmetric coordinates, nearest (floor) or linear ---- */

/* Upsample of run-time sizes or scales read from data: the taps of each
 * axis computed in its loop as the tables below would hold them (the
 * weights rounded to float likewise); an axis whose scale is the constant
 * 1, or whose input has one element, reads one tap. */
static int emit_upsample_rt(ox_cg *cg, ox_graph *g, ox_node *n, int rts, const double *sc, int linear)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	int two[OX_MAX_RANK], ntwo = 0;
	for (int a = 0; a < r; a++)
		ntwo += two[a] = linear && (rts || sc[a] != 1) && x->shape.d[a] != 1;
	if (ntwo > 4)
		return ox_error(g, n, "linear upsampling of %d axes is not supported (at most 4)", ntwo);
	ox_cg_line(cg, 1, "/* Upsample %s, sizes known when the program runs: per axis the first tap's offset%s */",
		   linear ? "linear" : "nearest", linear ? ", the second's and its weight" : "");
	if (rts) {
		ox_value *s = ox_in(g, n, 1);
		ox_cg_line(cg, 1, "double sc[%d];", r);
		for (int a = 0; a < r; a++) {
			char e[32];
			ox_cg_snprintf(e, sizeof e, "in1[%d]", a);
			ox_cg_line(cg, 1, "sc[%d] = (float)%s;", a, ox_cg_load(s->dtype, e));
		}
		ox_cg_line(cg, 1, "for (int a = 0; a < %d; a++)", r);
		ox_cg_line(cg, 2, "if (!(sc[a] >= 1))");
		ox_cg_line(cg, 3, "return 2; /* Upsample only enlarges */");
		cg->fails_shape = 1;
	} else {
		ox_cg_printf(cg, "\tconst double sc[%d] = {", r);
		for (int a = 0; a < r; a++)
			ox_cg_printf(cg, "%s%s", a ? ", " : "", ox_cg_lit(OX_F64, sc[a]));
		ox_cg_printf(cg, "};\n");
	}
	/* the output dims the node defines: floor(in * scale) */
	for (int a = 0; a < r; a++) {
		if (!ox_dim_defined_by(g, y->shape.d[a], n->out[0]))
			continue;
		ox_cg_line(cg, 1, "const double n%d = floor((double)%s * sc[%d]);", a, ox_cg_dim(cg, x->shape.d[a]), a);
		ox_cg_line(cg, 1, "if (!(n%d < 0x1p62))", a);
		ox_cg_line(cg, 2, "return 2;");
		char v[32];
		ox_cg_snprintf(v, sizeof v, "(int64_t)n%d", a);
		ox_cg_set_dim(cg, 1, y->shape.d[a], v);
	}
	ox_cg_check_cap(cg, g, n, 0);
	ox_dim stride[OX_MAX_RANK];
	stride[r - 1] = 1;
	for (int a = r - 2; a >= 0; a--)
		stride[a] = ox_dim_mul(g, stride[a + 1], x->shape.d[a + 1]);
	ox_cg_line(cg, 1, "long o = 0;");
	for (int a = 0; a < r; a++) {
		int l = 1 + a;
		const char *in = ox_cg_dim(cg, x->shape.d[a]);
		ox_cg_line(cg, l, "for (long i%d = 0; i%d < %s; i%d++) {", a, a, ox_cg_dim(cg, y->shape.d[a]), a);
		ox_cg_line(cg, l + 1, "const double c%d = (double)i%d / sc[%d], f%d = floor(c%d);", a, a, a, a, a);
		ox_cg_line(cg, l + 1, "const long j%d = (long)f%d < %s - 1 ? (long)f%d : %s - 1;", a, a, in, a, in);
		ox_cg_line(cg, l + 1, "const long a%d = j%d * %s;", a, a, ox_cg_dim(cg, stride[a]));
		if (two[a]) {
			ox_cg_line(cg, l + 1, "const long b%d = (j%d + 1 < %s - 1 ? j%d + 1 : %s - 1) * %s;", a, a, in, a, in,
				   ox_cg_dim(cg, stride[a]));
			ox_cg_line(cg, l + 1, "const float w%d = (float)(c%d - f%d);", a, a, a);
		}
	}
	if (!ntwo) {
		ox_buf e = {0};
		for (int a = 0; a < r; a++)
			ox_buf_printf(&e, "%sa%d", a ? " + " : "", a);
		ox_cg_line(cg, r + 1, "out0[o++] = in0[%s];", e.s);
		ox_buf_free(&e);
	} else {
		/* the sum over the 2^ntwo corners, in the order of the tables' */
		ox_buf e = {0};
		for (int comb = 0; comb < 1 << ntwo; comb++) {
			ox_buf idx = {0}, wt = {0};
			int bit = 0;
			for (int a = 0; a < r; a++) {
				int hi = two[a] && (comb >> bit++ & 1);
				if (!two[a])
					bit--;
				ox_buf_printf(&idx, "%s%c%d", a ? " + " : "", hi ? 'b' : 'a', a);
				if (two[a])
					ox_buf_printf(&wt, "%s%sw%d", wt.len ? " * " : "", hi ? "" : "(1 - ", a),
						ox_buf_puts(&wt, hi ? "" : ")");
			}
			ox_buf ix = {0};
			ox_buf_printf(&ix, "in0[%s]", idx.s);
			ox_buf_printf(&e, "%s\n%.*s%s * %s", comb ? " +" : "", r + 3, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
				      wt.s, ox_cg_load(dt, ix.s));
			ox_buf_free(&ix);
			ox_buf_free(&idx), ox_buf_free(&wt);
		}
		char b[64];
		ox_cg_line(cg, r + 1, "const double v =%s;", e.s);
		ox_cg_line(cg, r + 1, "out0[o++] = %s;", st(dt, "v", b, sizeof b));
		ox_buf_free(&e);
	}
	for (int a = r - 1; a >= 0; a--)
		ox_cg_line(cg, 1 + a, "}");
	return 0;
}

static int emit_upsample(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	int linear = strcmp(ox_attr_str(n, "mode", "nearest"), "nearest") != 0;
	if (linear && !ox_dtype_is_float(dt))
		return ox_error(g, n, "linear mode needs a float input");
	double sc[OX_MAX_RANK];
	int rts = ox_ir_norm_upsample_scales(g, n, r, sc);
	if (rts < 0)
		return -1;
	if (rts || ox_node_rt(g, n))
		return emit_upsample_rt(cg, g, n, rts, sc, linear);
	int two[OX_MAX_RANK];
	int64_t stride = 1;
	char name[32];
	ox_cg_line(cg, 1, "/* Upsample %s: per axis the first tap's offset%s */", linear ? "linear" : "nearest",
	     linear ? ", the second's and its weight" : "");
	for (int a = r - 1; a >= 0; a--) {
		int64_t in = x->shape.d[a], out = y->shape.d[a];
		int64_t o0[out ? out : 1], o1[out ? out : 1];
		double w[out ? out : 1];
		two[a] = 0;
		for (int64_t o = 0; o < out; o++) {
			double c = (double)o / sc[a], f = floor(c);
			int64_t i0 = (int64_t)f < in - 1 ? (int64_t)f : in - 1;
			int64_t i1 = i0 + 1 < in - 1 ? i0 + 1 : in - 1;
			o0[o] = i0 * stride, o1[o] = i1 * stride, w[o] = linear ? c - f : 0;
			if (w[o] != 0 && i1 != i0)
				two[a] = 1;
		}
		ox_cg_snprintf(name, sizeof name, "a%d", a);
		print_longs(cg, name, o0, out);
		if (two[a]) {
			ox_cg_snprintf(name, sizeof name, "b%d", a);
			print_longs(cg, name, o1, out);
			ox_cg_printf(cg, "\tstatic const float w%d[%lld] = {", a, (ll)out);
			for (int64_t o = 0; o < out; o++)
				ox_cg_printf(cg, "%s%s", o ? ", " : "", ox_cg_lit(OX_F32, w[o]));
			ox_cg_printf(cg, "};\n");
		}
		stride *= in;
	}
	ox_cg_line(cg, 1, "long o = 0;");
	for (int a = 0; a < r; a++)
		ox_cg_line(cg, 1, "for (long i%d = 0; i%d < %lld; i%d++)", a, a, (ll)y->shape.d[a], a);
	int ntwo = 0;
	for (int a = 0; a < r; a++)
		ntwo += two[a];
	if (!ntwo) {
		ox_buf e = {0};
		for (int a = 0; a < r; a++)
			ox_buf_printf(&e, "%sa%d[i%d]", a ? " + " : "", a, a);
		ox_cg_line(cg, 2, "out0[o++] = in0[%s];", e.s);
		ox_buf_free(&e);
		return 0;
	}
	if (ntwo > 4)
		return ox_error(g, n, "linear upsampling of %d axes is not supported (at most 4)", ntwo);
	/* sum over the 2^ntwo corners */
	ox_buf e = {0};
	for (int comb = 0; comb < 1 << ntwo; comb++) {
		ox_buf idx = {0}, wt = {0};
		int bit = 0;
		for (int a = 0; a < r; a++) {
			int hi = two[a] && (comb >> bit++ & 1);
			if (!two[a])
				bit--;
			ox_buf_printf(&idx, "%s%c%d[i%d]", a ? " + " : "", hi ? 'b' : 'a', a, a);
			if (two[a])
				ox_buf_printf(&wt, "%s%sw%d[i%d]", wt.len ? " * " : "", hi ? "" : "(1 - ", a, a),
					ox_buf_puts(&wt, hi ? "" : ")");
		}
		ox_buf ix = {0};
		ox_buf_printf(&ix, "in0[%s]", idx.s);
		ox_buf_printf(&e, "%s\n\t\t\t%s * %s", comb ? " +" : "", wt.s, ox_cg_load(dt, ix.s));
		ox_buf_free(&ix);
		ox_buf_free(&idx), ox_buf_free(&wt);
	}
	char b[64];
	ox_cg_line(cg, 1, "{");
	ox_cg_line(cg, 2, "const double v =%s;", e.s);
	ox_cg_line(cg, 2, "out0[o++] = %s;", st(dt, "v", b, sizeof b));
	ox_cg_line(cg, 1, "}");
	ox_buf_free(&e);
	return 0;
}

/* ---- AffineGrid: theta times the homogeneous base grid ---- */
static int emit_affinegrid(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *th = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = th->dtype, nsp = y->shape.rank - 2, align = ox_attr_int(n, "align_corners", 0) != 0;
	ox_dim D = nsp == 3 ? y->shape.d[1] : 1, H = y->shape.d[nsp - 1], W = y->shape.d[nsp];
	char b1[128], b2[700], e[300];
	ox_cg_check_eq(cg, th->shape.d[1], nsp, "theta of [N, 2, 3] or [N, 3, 4]");
	ox_cg_check_eq(cg, th->shape.d[2], nsp + 1, "theta of [N, 2, 3] or [N, 3, 4]");
	if (ox_in_const(g, n, 1))
		ox_cg_check_eq(cg, y->shape.d[0], ox_tensor_get_i64(ox_in_const(g, n, 1), 0), "size's N is not theta's");
	else {
		/* size (N, C, (D,) H, W) read when the program runs: N must be
		 * theta's; C is not used */
		ox_cg_line(cg, 1, "if (in1[0] != %s)", ox_cg_dim(cg, y->shape.d[0]));
		ox_cg_line(cg, 2, "return 2; /* size's N is not theta's */");
		cg->fails_shape = 1;
		for (int i = 1; i <= nsp; i++) {
			char v[32];
			ox_cg_snprintf(v, sizeof v, "in1[%d]", i + 1);
			if (ox_dim_defined_by(g, y->shape.d[i], n->out[0])) {
				ox_cg_set_dim(cg, 1, y->shape.d[i], v);
			} else {
				ox_cg_line(cg, 1, "if (%s != %s)", v, ox_cg_dim(cg, y->shape.d[i]));
				ox_cg_line(cg, 2, "return 2; /* not the size the compiler knows */");
			}
		}
	}
	ox_cg_check_cap(cg, g, n, 0);
	ox_cg_line(cg, 1, "/* AffineGrid %d-D%s: base coordinates as the reference's arange */", nsp,
	     align ? ", align_corners" : "");
	/* align: -1 + i * 2/(L-1) (just -1 when L = 1); else (-1 + 1/L) + i * 2/L */
	static const char *const ax[3] = {"d", "h", "w"};
	const ox_dim L[3] = {D, H, W};
	ox_cg_line(cg, 1, "for (long nn = 0; nn < %s; nn++) {", ox_cg_dim(cg, y->shape.d[0]));
	ox_cg_line(cg, 2, "const %s *t = in0 + nn * %d;", ox_cg_ctype(dt), nsp * (nsp + 1));
	ox_cg_line(cg, 2, "double th[%d];", nsp * (nsp + 1));
	ox_cg_line(cg, 2, "for (int k = 0; k < %d; k++)", nsp * (nsp + 1));
	ox_cg_line(cg, 3, "th[k] = %s;", ld(dt, "t[k]", b1, sizeof b1));
	ox_cg_line(cg, 2, "%s *q = out0 + nn * %s;", ox_cg_ctype(dt),
		   ox_cg_dim(cg, ox_dim_mul(g, ox_dim_mul(g, ox_dim_mul(g, D, H), W), nsp)));
	for (int i = 3 - nsp; i < 3; i++)
		ox_cg_line(cg, 2 + i - (3 - nsp), "for (long %s = 0; %s < %s; %s++) {", ax[i], ax[i], ox_cg_dim(cg, L[i]),
			   ax[i]);
	int lvl = 2 + nsp;
	for (int i = 3 - nsp; i < 3; i++) {
		const char *l = ox_cg_dim(cg, L[i]);
		if (L[i] < 0 && align)
			ox_cg_line(cg, lvl, "const double c%s = %s > 1 ? -1.0 + (double)%s * (2.0 / (double)(%s - 1)) : -1.0;",
				   ax[i], l, ax[i], l);
		else if (L[i] < 0)
			ox_cg_line(cg, lvl, "const double c%s = (-1.0 + 1.0 / (double)%s) + (double)%s * (2.0 / (double)%s);",
				   ax[i], l, ax[i], l);
		else if (align && L[i] == 1)
			ox_cg_line(cg, lvl, "const double %s%s = -1.0;", "c", ax[i]);
		else if (align)
			ox_cg_line(cg, lvl, "const double c%s = -1.0 + (double)%s * (2.0 / %lld);", ax[i], ax[i], (ll)(L[i] - 1));
		else
			ox_cg_line(cg, lvl, "const double c%s = (-1.0 + 1.0 / %lld) + (double)%s * (2.0 / %lld);", ax[i], (ll)L[i],
			     ax[i], (ll)L[i]);
	}
	for (int rr = 0; rr < nsp; rr++) {
		int b = rr * (nsp + 1);
		if (nsp == 2)
			ox_cg_snprintf(e, sizeof e, "th[%d] * cw + th[%d] * ch + th[%d]", b, b + 1, b + 2);
		else
			ox_cg_snprintf(e, sizeof e, "th[%d] * cw + th[%d] * ch + th[%d] * cd + th[%d]", b, b + 1, b + 2, b + 3);
		ox_cg_line(cg, lvl, "*q++ = %s;", st(dt, e, b2, sizeof b2));
	}
	for (int i = nsp; i > 0; i--)
		ox_cg_line(cg, 1 + i, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- Col2Im: sum the columns back into the image ---- */

/* Col2Im with shapes read from data or run-time dims: the geometry
 * computed when the program runs, as ir/infer_norm.c does at compile time,
 * with the checks it does there (the node returns 2 when they fail). */
static int emit_col2im_rt(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, nsp = y->shape.rank - 2;
	int64_t dil[MAXSP], pads[2 * MAXSP], str[MAXSP];
	if (ox_ir_norm_col2im_attrs(g, n, nsp, dil, pads, str))
		return -1;
	char b1[512], b2[512], b3[700], e[600], X1[300];
	ox_cg_snprintf(X1, sizeof X1, "%s", ox_cg_dim(cg, x->shape.d[1]));
	ox_cg_line(cg, 1, "/* Col2Im %d-D, its shapes known when the program runs */", nsp);
	ox_cg_line(cg, 1, "long img[%d], blk[%d], ncol[%d], ist[%d], bl = 1, L = 1, isz = 1;", nsp, nsp, nsp, nsp);
	print_longs(cg, "dil", dil, nsp);
	print_longs(cg, "pad", pads, 2 * nsp);
	print_longs(cg, "str", str, nsp);
	cg->fails_shape = 1;
	for (int a = 0; a < nsp; a++) {
		char v[32];
		ox_cg_snprintf(v, sizeof v, "in1[%d]", a);
		if (ox_dim_defined_by(g, y->shape.d[a + 2], n->out[0])) {
			ox_cg_set_dim(cg, 1, y->shape.d[a + 2], v);
		} else {
			ox_cg_line(cg, 1, "if (%s != %s)", v, ox_cg_dim(cg, y->shape.d[a + 2]));
			ox_cg_line(cg, 2, "return 2; /* not the image_shape the compiler knows */");
		}
		ox_cg_line(cg, 1, "img[%d] = (long)in1[%d], blk[%d] = (long)in2[%d];", a, a, a, a);
	}
	ox_cg_line(cg, 1, "for (int a = %d; a >= 0; a--) {", nsp - 1);
	ox_cg_line(cg, 2, "if (img[a] < 1 || blk[a] < 1 || blk[a] > %s / bl)", X1);
	ox_cg_line(cg, 3, "return 2; /* not positive, or more block elements than the input has */");
	ox_cg_line(cg, 2, "const long room = img[a] + pad[a] + pad[a + %d] - (dil[a] * (blk[a] - 1) + 1);", nsp);
	ox_cg_line(cg, 2, "if (room < 0)");
	ox_cg_line(cg, 3, "return 2; /* the block does not fit the padded image */");
	ox_cg_line(cg, 2, "ncol[a] = room / str[a] + 1;");
	ox_cg_line(cg, 2, "if (L > %s / ncol[a])", ox_cg_dim(cg, x->shape.d[2]));
	ox_cg_line(cg, 3, "return 2; /* more blocks than the input has */");
	ox_cg_line(cg, 2, "bl *= blk[a], L *= ncol[a], ist[a] = isz, isz *= img[a];");
	ox_cg_line(cg, 1, "}");
	ox_cg_line(cg, 1, "if (L != %s || %s %% bl)", ox_cg_dim(cg, x->shape.d[2]), X1);
	ox_cg_line(cg, 2, "return 2; /* the blocks do not give the input's shape */");
	ox_cg_snprintf(e, sizeof e, "%s / bl", X1);
	if (ox_dim_defined_by(g, y->shape.d[1], n->out[0])) {
		ox_cg_set_dim(cg, 1, y->shape.d[1], e);
	} else {
		ox_cg_line(cg, 1, "if (%s != %s)", e, ox_cg_dim(cg, y->shape.d[1]));
		ox_cg_line(cg, 2, "return 2; /* not the channels the compiler knows */");
	}
	ox_cg_check_cap(cg, g, n, 0);
	ox_cg_line(cg, 1, "for (long nc = 0; nc < %s; nc++) {", ox_cg_dim(cg, ox_dim_mul(g, y->shape.d[0], y->shape.d[1])));
	ox_cg_line(cg, 2, "%s *yo = out0 + nc * isz;", ox_cg_ctype(dt));
	ox_cg_line(cg, 2, "const %s *xi = in0 + nc * bl * L;", ox_cg_ctype(dt));
	ox_cg_line(cg, 2, "for (long i = 0; i < isz; i++)");
	ox_cg_line(cg, 3, "yo[i] = %s;", st(dt, "0", b3, sizeof b3));
	ox_cg_line(cg, 2, "for (long k = 0; k < bl; k++)");
	ox_cg_line(cg, 2, "for (long l = 0; l < L; l++) {");
	ox_cg_line(cg, 3, "long at = 0, rk = k, rl = l;");
	ox_cg_line(cg, 3, "int in = 1;");
	ox_cg_line(cg, 3, "for (int a = %d; a >= 0 && in; a--) {", nsp - 1);
	ox_cg_line(cg, 4, "const long p = rl %% ncol[a] * str[a] - pad[a] + rk %% blk[a] * dil[a];");
	ox_cg_line(cg, 4, "rk /= blk[a], rl /= ncol[a];");
	ox_cg_line(cg, 4, "in = p >= 0 && p < img[a];");
	ox_cg_line(cg, 4, "at += p * ist[a];");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "if (in)");
	ox_cg_snprintf(e, sizeof e, "%s + %s", ld(dt, "yo[at]", b1, sizeof b1), ld(dt, "xi[k * L + l]", b2, sizeof b2));
	ox_cg_line(cg, 4, "yo[at] = %s;", st(dt, e, b3, sizeof b3));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_col2im(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, nsp = y->shape.rank - 2;
	int64_t img[MAXSP], blk[MAXSP], dil[MAXSP], pads[2 * MAXSP], str[MAXSP], ncol[MAXSP], ist[MAXSP];
	if (!ox_in_const(g, n, 1) || !ox_in_const(g, n, 2) || ox_node_rt(g, n))
		return emit_col2im_rt(cg, g, n);
	if (ox_ir_norm_col2im(g, n, nsp, img, blk, dil, pads, str, ncol))
		return -1;
	int64_t bl = 1, L = 1, isz = 1;
	for (int i = nsp - 1; i >= 0; i--)
		bl *= blk[i], L *= ncol[i], ist[i] = isz, isz *= img[i];
	char b1[128], b2[128], b3[700], e[300];
	ox_cg_line(cg, 1, "/* Col2Im %d-D: %lld block positions x %lld blocks per channel */", nsp, (ll)bl, (ll)L);
	print_longs(cg, "img", img, nsp);
	print_longs(cg, "blk", blk, nsp);
	print_longs(cg, "dil", dil, nsp);
	print_longs(cg, "pad", pads, nsp);
	print_longs(cg, "str", str, nsp);
	print_longs(cg, "ncol", ncol, nsp);
	print_longs(cg, "ist", ist, nsp);
	ox_cg_line(cg, 1, "for (long nc = 0; nc < %lld; nc++) {", (ll)(y->shape.d[0] * y->shape.d[1]));
	ox_cg_line(cg, 2, "%s *yo = out0 + nc * %lld;", ox_cg_ctype(dt), (ll)isz);
	ox_cg_line(cg, 2, "const %s *xi = in0 + nc * %lld;", ox_cg_ctype(dt), (ll)(bl * L));
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++)", (ll)isz);
	ox_cg_line(cg, 3, "yo[i] = %s;", st(dt, "0", b3, sizeof b3));
	ox_cg_line(cg, 2, "for (long k = 0; k < %lld; k++)", (ll)bl);
	ox_cg_line(cg, 2, "for (long l = 0; l < %lld; l++) {", (ll)L);
	ox_cg_line(cg, 3, "long at = 0, rk = k, rl = l;");
	ox_cg_line(cg, 3, "int in = 1;");
	ox_cg_line(cg, 3, "for (int a = %d; a >= 0 && in; a--) {", nsp - 1);
	ox_cg_line(cg, 4, "const long p = rl %% ncol[a] * str[a] - pad[a] + rk %% blk[a] * dil[a];");
	ox_cg_line(cg, 4, "rk /= blk[a], rl /= ncol[a];");
	ox_cg_line(cg, 4, "in = p >= 0 && p < img[a];");
	ox_cg_line(cg, 4, "at += p * ist[a];");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "if (in)");
	char xe[64];
	ox_cg_snprintf(xe, sizeof xe, "xi[k * %lld + l]", (ll)L);
	ox_cg_snprintf(e, sizeof e, "%s + %s", ld(dt, "yo[at]", b1, sizeof b1), ld(dt, xe, b2, sizeof b2));
	ox_cg_line(cg, 4, "yo[at] = %s;", st(dt, e, b3, sizeof b3));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- CenterCropPad: zero, then copy the centered overlap ---- */

/* CenterCropPad of run-time dims or a shape read from data: the overlap
 * per axis computed when the program runs */
static int emit_centercroppad_rt(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int r = x->shape.rank;
	if (!ox_in_const(g, n, 1)) {
		/* the shape, one value per axis given (all by default) */
		const int64_t *a;
		int na = ox_attr_ints(n, "axes", &a);
		for (int i = 0; i < (na < 0 ? r : na); i++) {
			int ax = na < 0 ? i : ox_norm_axis(a[i], r);
			char v[32];
			ox_cg_snprintf(v, sizeof v, "in1[%d]", i);
			if (ox_dim_defined_by(g, y->shape.d[ax], n->out[0])) {
				ox_cg_set_dim(cg, 1, y->shape.d[ax], v);
			} else {
				ox_cg_line(cg, 1, "if (%s != %s)", v, ox_cg_dim(cg, y->shape.d[ax]));
				ox_cg_line(cg, 2, "return 2; /* not the shape the compiler knows */");
				cg->fails_shape = 1;
			}
		}
	}
	ox_cg_check_cap(cg, g, n, 0);
	ox_cg_line(cg, 1, "/* CenterCropPad: the centered overlap of input and output, zeros around */");
	ox_cg_printf(cg, "\tconst int64_t xd[%d] = {", r);
	for (int a = 0; a < r; a++)
		ox_cg_printf(cg, "%s%s", a ? ", " : "", ox_cg_dim(cg, x->shape.d[a]));
	ox_cg_printf(cg, "}, yd[%d] = {", r);
	for (int a = 0; a < r; a++)
		ox_cg_printf(cg, "%s%s", a ? ", " : "", ox_cg_dim(cg, y->shape.d[a]));
	ox_cg_printf(cg, "};\n");
	ox_cg_line(cg, 1, "int64_t cnt[%d], is[%d], os[%d], ist[%d], ost[%d], a1 = 1, a2 = 1;", r, r, r, r, r);
	ox_cg_line(cg, 1, "for (int a = %d; a >= 0; a--) {", r - 1);
	ox_cg_line(cg, 2, "cnt[a] = xd[a] < yd[a] ? xd[a] : yd[a];");
	ox_cg_line(cg, 2, "is[a] = xd[a] > yd[a] ? (xd[a] - yd[a]) / 2 : 0; /* crop: the extra odd element goes at the end */");
	ox_cg_line(cg, 2, "os[a] = yd[a] > xd[a] ? (yd[a] - xd[a]) / 2 : 0;");
	ox_cg_line(cg, 2, "ist[a] = a1, ost[a] = a2;");
	ox_cg_line(cg, 2, "a1 *= xd[a], a2 *= yd[a];");
	ox_cg_line(cg, 1, "}");
	ox_cg_line(cg, 1, "memset(out0, 0, sizeof *out0 * (size_t)a2);");
	ox_cg_line(cg, 1, "if (a1 > 0 && a2 > 0) {");
	ox_buf ie = {0}, oe = {0};
	int lvl = 2;
	for (int a = 0; a < r - 1; a++) {
		ox_cg_line(cg, lvl++, "for (int64_t i%d = 0; i%d < cnt[%d]; i%d++)", a, a, a, a);
		ox_buf_printf(&ie, " + (i%d + is[%d]) * ist[%d]", a, a, a);
		ox_buf_printf(&oe, " + (i%d + os[%d]) * ost[%d]", a, a, a);
	}
	ox_cg_line(cg, lvl, "memcpy(out0 + os[%d]%s, in0 + is[%d]%s, sizeof *out0 * (size_t)cnt[%d]);", r - 1,
		   oe.len ? oe.s : "", r - 1, ie.len ? ie.s : "", r - 1);
	ox_cg_line(cg, 1, "}");
	ox_buf_free(&ie), ox_buf_free(&oe);
	return 0;
}

static int emit_centercroppad(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int r = x->shape.rank;
	int64_t cnt[OX_MAX_RANK], is[OX_MAX_RANK], os[OX_MAX_RANK], ist[OX_MAX_RANK], ost[OX_MAX_RANK];
	int64_t a1 = 1, a2 = 1;
	if (!ox_in_const(g, n, 1) || ox_node_rt(g, n))
		return emit_centercroppad_rt(cg, g, n);
	for (int a = r - 1; a >= 0; a--) {
		int64_t in = x->shape.d[a], out = y->shape.d[a];
		cnt[a] = in < out ? in : out;
		is[a] = in > out ? (in - out) / 2 : 0; /* crop: the extra odd element goes at the end */
		os[a] = out > in ? (out - in) / 2 : 0;
		ist[a] = a1, ost[a] = a2;
		a1 *= in, a2 *= out;
	}
	ox_cg_line(cg, 1, "/* CenterCropPad: the centered overlap of input and output, zeros around */");
	if (a2 == 0)
		return 0;
	ox_cg_line(cg, 1, "memset(out0, 0, sizeof *out0 * %lld);", (ll)a2);
	if (a1 == 0)
		return 0;
	ox_buf ie = {0}, oe = {0};
	int lvl = 1;
	for (int a = 0; a < r - 1; a++) {
		ox_cg_line(cg, lvl++, "for (long i%d = 0; i%d < %lld; i%d++)", a, a, (ll)cnt[a], a);
		ox_buf_printf(&ie, " + (i%d + %lld) * %lld", a, (ll)is[a], (ll)ist[a]);
		ox_buf_printf(&oe, " + (i%d + %lld) * %lld", a, (ll)os[a], (ll)ost[a]);
	}
	ox_cg_line(cg, lvl, "memcpy(out0 + %lld%s, in0 + %lld%s, sizeof *out0 * %lld);", (ll)os[r - 1], oe.len ? oe.s : "",
	     (ll)is[r - 1], ie.len ? ie.s : "", (ll)cnt[r - 1]);
	ox_buf_free(&ie), ox_buf_free(&oe);
	(void)g, (void)n;
	return 0;
}

int emit_norm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_InstanceNormalization:
	case OX_OP_GroupNormalization:
		return emit_chan_norm(cg, g, n);
	case OX_OP_LpNormalization:
		return emit_lpnorm(cg, g, n);
	case OX_OP_MeanVarianceNormalization:
		return emit_mvn(cg, g, n);
	case OX_OP_LRN:
		return emit_lrn(cg, g, n);
	case OX_OP_LpPool:
		return emit_lppool(cg, g, n);
	case OX_OP_MaxUnpool:
		return emit_maxunpool(cg, g, n);
	case OX_OP_MaxRoiPool:
		return emit_maxroipool(cg, g, n);
	case OX_OP_RoiAlign:
		return emit_roialign(cg, g, n);
	case OX_OP_Upsample:
		return emit_upsample(cg, g, n);
	case OX_OP_GridSample:
		return emit_gridsample(cg, g, n);
	case OX_OP_AffineGrid:
		return emit_affinegrid(cg, g, n);
	case OX_OP_Col2Im:
		return emit_col2im(cg, g, n);
	case OX_OP_CenterCropPad:
		return emit_centercroppad(cg, g, n);
	}
	return ox_error(g, n, "not a normalization or sampling op");
}
