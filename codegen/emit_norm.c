/* emit_norm.c: C bodies for the normalizations, the pooling variants and
 * spatial sampling (the rows of ir/ops.def that name emit_norm).
 *
 * Most kernels are loops with literal bounds printed inline; statistics
 * (means, variances, norms, window sums) accumulate in double whatever the
 * storage type, and f16/bf16 go through ox_cg_load / ox_cg_store. The data
 * dependent kernels (GridSample, RoiAlign) are templates/norm_*.c, reading
 * through ox_ld_S / ox_st_S defined here per dtype. Tables that
 * depend only on shapes (Upsample taps) are computed here and printed as
 * static const arrays. Attribute decoding shared with ir/infer_norm.c
 * goes through the ox_ir_norm_* decoders (prototypes repeated below).
 */
#include "cg.h"
#include "../ir/family.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAXSP (OX_MAX_RANK - 2)
typedef long long ll;

/* copies of the rotating-buffer helpers, safe to hold across calls */
static const char *ld(int dt, const char *e, char *buf, size_t n)
{
	snprintf(buf, n, "%s", ox_cg_load(dt, e));
	return buf;
}

/* storing double expression e into storage of dt, through the compute type */
static const char *st(int dt, const char *e, char *buf, size_t n)
{
	char c[600];
	snprintf(c, sizeof c, "(%s)(%s)", ox_cg_ntype(dt), e);
	snprintf(buf, n, "%s", ox_cg_store(dt, c));
	return buf;
}

static int64_t prod(const ox_shape *s, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++)
		p *= s->d[i];
	return p;
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
	int64_t N = x->shape.d[0], C = x->shape.d[1], sp = prod(&x->shape, 2, x->shape.rank);
	int64_t G = inst ? C : ox_attr_int(n, "num_groups", 1), cpg = C / G, gsz = cpg * sp;
	int per_group = !inst && n->opset < 21;
	double eps = ox_attr_float(n, "epsilon", 1e-5f);
	char b1[128], b2[128], b3[128], b4[700];
	ox_cg_line(cg, 1, "/* %s: %lld groups of %lld channels x %lld values; scale and bias per %s */", n->optype,
	     (ll)G, (ll)cpg, (ll)sp, per_group ? "group" : "channel");
	ox_cg_line(cg, 1, "for (long ng = 0; ng < %lld; ng++) {", (ll)(N * G));
	ox_cg_line(cg, 2, "const %s *p = in0 + ng * %lld;", ox_cg_ctype(dt), (ll)gsz);
	ox_cg_line(cg, 2, "%s *q = out0 + ng * %lld;", ox_cg_ctype(dt), (ll)gsz);
	ox_cg_line(cg, 2, "double sum = 0, var = 0;");
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++)", (ll)gsz);
	ox_cg_line(cg, 3, "sum += %s;", ld(dt, "p[i]", b1, sizeof b1));
	ox_cg_line(cg, 2, "const double mean = sum / %lld;", (ll)gsz);
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (ll)gsz);
	ox_cg_line(cg, 3, "const double d = %s - mean;", b1);
	ox_cg_line(cg, 3, "var += d * d;");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const double inv = 1 / sqrt(var / %lld + %s);", (ll)gsz, ox_cg_lit(OX_F64, eps));
	ox_cg_line(cg, 2, "for (long c = 0; c < %lld; c++) {", (ll)cpg);
	if (per_group)
		ox_cg_line(cg, 3, "const long k = ng %% %lld; /* the group */", (ll)G);
	else
		ox_cg_line(cg, 3, "const long k = ng %% %lld * %lld + c; /* the channel */", (ll)G, (ll)cpg);
	ox_cg_line(cg, 3, "const double a = %s * inv;", ld(dt, "in1[k]", b2, sizeof b2));
	ox_cg_line(cg, 3, "const double b = %s - mean * a;", ld(dt, "in2[k]", b3, sizeof b3));
	ox_cg_line(cg, 3, "for (long i = c * %lld; i < (c + 1) * %lld; i++)", (ll)sp, (ll)sp);
	char e[300];
	snprintf(e, sizeof e, "a * %s + b", b1);
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
	int64_t outer = prod(&x->shape, 0, a), len = x->shape.d[a], inner = prod(&x->shape, a + 1, r);
	char b1[128], b2[700];
	ox_cg_line(cg, 1, "/* LpNormalization p = %lld along axis %d: %lld x [%lld] x %lld */", (ll)p, a, (ll)outer,
	     (ll)len, (ll)inner);
	ox_cg_line(cg, 1, "for (long o = 0; o < %lld; o++)", (ll)outer);
	ox_cg_line(cg, 1, "for (long i = 0; i < %lld; i++) {", (ll)inner);
	ox_cg_line(cg, 2, "const %s *p = in0 + o * %lld + i;", ox_cg_ctype(dt), (ll)(len * inner));
	ox_cg_line(cg, 2, "%s *q = out0 + o * %lld + i;", ox_cg_ctype(dt), (ll)(len * inner));
	ox_cg_line(cg, 2, "const long step = %lld;", (ll)inner);
	ox_cg_line(cg, 2, "double s = 0;");
	ox_cg_line(cg, 2, "for (long k = 0; k < %lld; k++) {", (ll)len);
	ox_cg_line(cg, 3, "const double v = %s;", ld(dt, "p[k * step]", b1, sizeof b1));
	ox_cg_line(cg, 3, "s += %s;", p == 1 ? "fabs(v)" : "v * v");
	ox_cg_line(cg, 2, "}");
	if (p == 2)
		ox_cg_line(cg, 2, "s = sqrt(s);");
	/* a zero vector stays zero (the reference divides by a norm of 1) */
	ox_cg_line(cg, 2, "if (s == 0)");
	ox_cg_line(cg, 3, "s = 1;");
	ox_cg_line(cg, 2, "for (long k = 0; k < %lld; k++)", (ll)len);
	char e[300];
	snprintf(e, sizeof e, "%s / s", b1);
	ox_cg_line(cg, 3, "q[k * step] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 1, "}");
	(void)g;
	return 0;
}

/* "(v / d0 % n0) * s0 + ..." : the offset of flat index v of the sub-space
 * made of the axes with mask[a] == want, into the full tensor. */
static void sub_offset(char *buf, size_t cap, const char *v, const ox_shape *s, const int *mask, int want)
{
	int64_t stride[OX_MAX_RANK], sub = 1;
	size_t at = 0;
	stride[s->rank - 1] = 1;
	for (int a = s->rank - 2; a >= 0; a--)
		stride[a] = stride[a + 1] * s->d[a + 1];
	buf[0] = 0;
	for (int a = s->rank - 1; a >= 0; a--) {
		if (mask[a] != want || s->d[a] == 1)
			continue;
		at += (size_t)snprintf(buf + at, at < cap ? cap - at : 0, "%s(%s / %lld %% %lld) * %lld",
				       at ? " + " : "", v, (ll)sub, (ll)s->d[a], (ll)stride[a]);
		sub *= s->d[a];
	}
	if (!at)
		snprintf(buf, cap, "0");
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
	int64_t K = 1, R = 1;
	for (int i = 0; i < r; i++)
		*(mask[i] ? &R : &K) *= x->shape.d[i];
	char kof[1024], rof[1024], b1[128], b2[700], e[300];
	sub_offset(kof, sizeof kof, "k", &x->shape, mask, 0);
	sub_offset(rof, sizeof rof, "i", &x->shape, mask, 1);
	ox_cg_line(cg, 1, "/* MeanVarianceNormalization: %lld groups of %lld values */", (ll)K, (ll)R);
	ox_cg_line(cg, 1, "for (long k = 0; k < %lld; k++) {", (ll)K);
	ox_cg_line(cg, 2, "const long base = %s;", kof);
	ox_cg_line(cg, 2, "double sum = 0, var = 0;");
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (ll)R);
	ox_cg_line(cg, 3, "const long at = base + %s;", rof);
	ox_cg_line(cg, 3, "sum += %s;", ld(dt, "in0[at]", b1, sizeof b1));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const double mean = sum / %lld;", (ll)R);
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (ll)R);
	ox_cg_line(cg, 3, "const long at = base + %s;", rof);
	ox_cg_line(cg, 3, "const double d = %s - mean;", b1);
	ox_cg_line(cg, 3, "var += d * d;");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const double sd = sqrt(var / %lld) + 1e-9;", (ll)R);
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (ll)R);
	ox_cg_line(cg, 3, "const long at = base + %s;", rof);
	snprintf(e, sizeof e, "(%s - mean) / sd", b1);
	ox_cg_line(cg, 3, "out0[at] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	(void)g;
	return 0;
}

/* ---- LRN: x / (bias + alpha / size * sum of squares over nearby channels)^beta ---- */
static int emit_lrn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int dt = x->dtype;
	int64_t N = x->shape.d[0], C = x->shape.d[1], sp = prod(&x->shape, 2, x->shape.rank);
	int64_t size = ox_attr_int(n, "size", 1), c1 = (size - 1) / 2, c2 = size / 2 + 1;
	double alpha = ox_attr_float(n, "alpha", 1e-4f), beta = ox_attr_float(n, "beta", 0.75f);
	double bias = ox_attr_float(n, "bias", 1.0f);
	char b1[128], b2[700], e[300];
	ox_cg_line(cg, 1, "/* LRN over %lld channels, size %lld */", (ll)C, (ll)size);
	ox_cg_line(cg, 1, "for (long nn = 0; nn < %lld; nn++)", (ll)N);
	ox_cg_line(cg, 1, "for (long c = 0; c < %lld; c++) {", (ll)C);
	ox_cg_line(cg, 2, "const long lo = c - %lld < 0 ? 0 : c - %lld, hi = c + %lld > %lld ? %lld : c + %lld;", (ll)c1,
	     (ll)c1, (ll)c2, (ll)C, (ll)C, (ll)c2);
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (ll)sp);
	ox_cg_line(cg, 3, "double s = 0;");
	ox_cg_line(cg, 3, "for (long cc = lo; cc < hi; cc++) {");
	snprintf(e, sizeof e, "in0[(nn * %lld + cc) * %lld + i]", (ll)C, (ll)sp);
	ox_cg_line(cg, 4, "const double v = %s;", ld(dt, e, b1, sizeof b1));
	ox_cg_line(cg, 4, "s += v * v;");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "const long at = (nn * %lld + c) * %lld + i;", (ll)C, (ll)sp);
	snprintf(e, sizeof e, "%s / pow(%s + %s * s, %s)", ox_cg_load(dt, "in0[at]"), ox_cg_lit(OX_F64, bias),
		 ox_cg_lit(OX_F64, alpha / (double)size), ox_cg_lit(OX_F64, beta));
	ox_cg_line(cg, 3, "out0[at] = %s;", st(dt, e, b2, sizeof b2));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	(void)g;
	return 0;
}

/* ---- LpPool: (sum of |x|^p over the window)^(1/p); pads add nothing ---- */
static int emit_lppool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int nsp = x->shape.rank - 2, dt = x->dtype;
	if (nsp > 3)
		return ox_error(g, n, "%d spatial axes are not supported (at most 3)", nsp);
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, NULL, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	/* widen to 3 axes: leading 1s */
	int64_t I[3], O[3], K[3], S[3], P[3], D[3];
	for (int i = 0; i < 3; i++) {
		int j = i - (3 - nsp);
		I[i] = j < 0 ? 1 : in[j], O[i] = j < 0 ? 1 : out[j], K[i] = j < 0 ? 1 : k[j];
		S[i] = j < 0 ? 1 : s[j], P[i] = j < 0 ? 0 : pads[j], D[i] = j < 0 ? 1 : d[j];
	}
	int64_t p = ox_attr_int(n, "p", 2);
	char b1[128], b2[700];
	ox_cg_line(cg, 1, "/* LpPool p = %lld, %d-D: kernel %lldx%lldx%lld, strides %lldx%lldx%lld, begin pads %lld,%lld,%lld */",
	     (ll)p, nsp, (ll)K[0], (ll)K[1], (ll)K[2], (ll)S[0], (ll)S[1], (ll)S[2], (ll)P[0], (ll)P[1], (ll)P[2]);
	ox_cg_line(cg, 1, "long o = 0;");
	ox_cg_line(cg, 1, "for (long nc = 0; nc < %lld; nc++) {", (ll)(x->shape.d[0] * x->shape.d[1]));
	ox_cg_line(cg, 2, "const %s *xc = in0 + nc * %lld;", ox_cg_ctype(dt), (ll)(I[0] * I[1] * I[2]));
	ox_cg_line(cg, 2, "for (long od = 0; od < %lld; od++)", (ll)O[0]);
	ox_cg_line(cg, 2, "for (long oh = 0; oh < %lld; oh++)", (ll)O[1]);
	ox_cg_line(cg, 2, "for (long ow = 0; ow < %lld; ow++, o++) {", (ll)O[2]);
	ox_cg_line(cg, 3, "double sum = 0;");
	static const char *const ax[3] = {"d", "h", "w"};
	for (int i = 0; i < 3; i++) {
		ox_cg_line(cg, 3 + i, "for (long k%s = 0; k%s < %lld; k%s++) {", ax[i], ax[i], (ll)K[i], ax[i]);
		ox_cg_line(cg, 4 + i, "const long i%s = o%s * %lld - %lld + k%s * %lld;", ax[i], ax[i], (ll)S[i], (ll)P[i],
		     ax[i], (ll)D[i]);
		ox_cg_line(cg, 4 + i, "if (i%s < 0 || i%s >= %lld)", ax[i], ax[i], (ll)I[i]);
		ox_cg_line(cg, 5 + i, "continue;");
	}
	char e[200];
	snprintf(e, sizeof e, "xc[(id * %lld + ih) * %lld + iw]", (ll)I[1], (ll)I[2]);
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
		snprintf(e, sizeof e, "sum");
	else if (p == 2)
		snprintf(e, sizeof e, "sqrt(sum)");
	else
		snprintf(e, sizeof e, "pow(sum, 1.0 / %lld)", (ll)p);
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
	int64_t in[MAXSP], k[MAXSP], s[MAXSP], pads[2 * MAXSP], sp[MAXSP];
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2];
	if (ox_ir_norm_unpool(g, n, nsp, in, k, s, pads, sp))
		return -1;
	ox_shape u = {r, {x->shape.d[0], x->shape.d[1]}};
	int same = 1;
	for (int i = 0; i < nsp; i++)
		u.d[i + 2] = sp[i], same &= sp[i] == y->shape.d[i + 2];
	same &= u.d[0] == y->shape.d[0] && u.d[1] == y->shape.d[1];
	int64_t total = prod(&u, 0, r);
	ox_cg_line(cg, 1, "/* MaxUnpool: indices address the %lld elements of the unpooled tensor%s */", (ll)total,
	     same ? "" : ", placed at the start of each axis of the larger output_shape");
	ox_cg_line(cg, 1, "memset(out0, 0, sizeof *out0 * %lld);", (ll)prod(&y->shape, 0, r));
	ox_cg_line(cg, 1, "for (long i = 0; i < %lld; i++) {", (ll)prod(&x->shape, 0, r));
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, 2, "const int64_t k = in1[i];");
	ox_cg_line(cg, 2, "if ((uint64_t)k >= %lld)", (ll)total);
	ox_cg_line(cg, 3, "return 1; /* not an index MaxPool could give */");
	if (same) {
		ox_cg_line(cg, 2, "out0[k] = in0[i];");
	} else {
		ox_cg_line(cg, 2, "long at = 0, rest = (long)k;");
		int64_t ost = 1;
		for (int a = r - 1; a >= 0; a--) {
			ox_cg_line(cg, 2, "at += rest %% %lld * %lld, rest /= %lld;", (ll)u.d[a], (ll)ost, (ll)u.d[a]);
			ost *= y->shape.d[a];
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
	int64_t N = x->shape.d[0], C = x->shape.d[1], H = x->shape.d[2], W = x->shape.d[3];
	int64_t R = y->shape.d[0], PH = y->shape.d[2], PW = y->shape.d[3];
	double scale = ox_attr_float(n, "spatial_scale", 1.0f);
	char b1[128], b2[128], b3[128], b4[128], b5[128], b6[700];
	ox_cg_line(cg, 1, "/* MaxRoiPool: %lld ROIs -> %lldx%lld bins over a %lldx%lld map */", (ll)R, (ll)PH, (ll)PW,
	     (ll)H, (ll)W);
	ox_cg_line(cg, 1, "for (long r = 0; r < %lld; r++) {", (ll)R);
	ox_cg_line(cg, 2, "const %s *roi = in1 + r * 5;", ox_cg_ctype(dt));
	/* the batch index is checked; the corners convert saturated to int32
	 * (NaN -> 0), so the sums below cannot overflow */
	const char *i32 = ox_cg_f2i(cg, OX_I32);
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_cg_line(cg, 2, "const int64_t b = %s(%s);", ox_cg_f2i(cg, OX_I64), ld(dt, "roi[0]", b1, sizeof b1));
	ox_cg_line(cg, 2, "if ((uint64_t)b >= %lld)", (ll)N);
	ox_cg_line(cg, 3, "return 1; /* a batch index out of range */");
	ox_cg_line(cg, 2, "const %s sc = %s;", ct, ox_cg_lit(dt, scale));
	ox_cg_line(cg, 2, "const int64_t sw = %s(round(%s * sc)), sh = %s(round(%s * sc));", i32,
	     ld(dt, "roi[1]", b2, sizeof b2), i32, ld(dt, "roi[2]", b3, sizeof b3));
	ox_cg_line(cg, 2, "const int64_t ew = %s(round(%s * sc)), eh = %s(round(%s * sc));", i32,
	     ld(dt, "roi[3]", b4, sizeof b4), i32, ld(dt, "roi[4]", b5, sizeof b5));
	ox_cg_line(cg, 2, "const int64_t rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1, rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1;");
	ox_cg_line(cg, 2, "const %s bh = (%s)rh / (%s)%lld, bw = (%s)rw / (%s)%lld;", ct, ct, ct, (ll)PH, ct, ct, (ll)PW);
	ox_cg_line(cg, 2, "for (long c = 0; c < %lld; c++) {", (ll)C);
	ox_cg_line(cg, 3, "const %s *xc = in0 + (b * %lld + c) * %lld;", ox_cg_ctype(dt), (ll)C, (ll)(H * W));
	ox_cg_line(cg, 3, "%s *yc = out0 + (r * %lld + c) * %lld;", ox_cg_ctype(dt), (ll)C, (ll)(PH * PW));
	ox_cg_line(cg, 3, "for (long ph = 0; ph < %lld; ph++)", (ll)PH);
	ox_cg_line(cg, 3, "for (long pw = 0; pw < %lld; pw++) {", (ll)PW);
	ox_cg_line(cg, 4, "int64_t hs = (int64_t)floor((%s)ph * bh) + sh, he = (int64_t)ceil((%s)(ph + 1) * bh) + sh;", ct, ct);
	ox_cg_line(cg, 4, "int64_t ws = (int64_t)floor((%s)pw * bw) + sw, we = (int64_t)ceil((%s)(pw + 1) * bw) + sw;", ct, ct);
	ox_cg_line(cg, 4, "hs = hs < 0 ? 0 : hs > %lld ? %lld : hs, he = he < 0 ? 0 : he > %lld ? %lld : he;", (ll)H, (ll)H,
	     (ll)H, (ll)H);
	ox_cg_line(cg, 4, "ws = ws < 0 ? 0 : ws > %lld ? %lld : ws, we = we < 0 ? 0 : we > %lld ? %lld : we;", (ll)W, (ll)W,
	     (ll)W, (ll)W);
	ox_cg_line(cg, 4, "double m = 0;");
	ox_cg_line(cg, 4, "if (he > hs && we > ws) {");
	ox_cg_line(cg, 5, "m = -INFINITY;");
	ox_cg_line(cg, 5, "for (int64_t h = hs; h < he; h++)");
	ox_cg_line(cg, 5, "for (int64_t w = ws; w < we; w++) {");
	char e[100];
	snprintf(e, sizeof e, "xc[h * %lld + w]", (ll)W);
	ox_cg_line(cg, 6, "const double v = %s;", ld(dt, e, b1, sizeof b1));
	ox_cg_line(cg, 6, "m = v > m ? v : m;");
	ox_cg_line(cg, 5, "}");
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "yc[ph * %lld + pw] = %s;", (ll)PW, st(dt, "m", b6, sizeof b6));
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	(void)g;
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
	ox_cg_line(cg, 1, "/* RoiAlign %s, %s, sampling_ratio %lld */", maxmode ? "max" : "avg", ct, (ll)ratio);
	if (y->shape.d[0] > 0) {
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_cg_line(cg, 1, "for (long r = 0; r < %lld; r++)", (ll)y->shape.d[0]);
		ox_cg_line(cg, 2, "if ((uint64_t)in2[r] >= %lld)", (ll)x->shape.d[0]);
		ox_cg_line(cg, 3, "return 1; /* a batch index out of range */");
	}
	ox_cg_line(cg, 1, "ox_roialign_%s(in0, in1, in2, out0, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %s, %lld, %d, %d);",
	     ox_cg_sfx(dt), (ll)x->shape.d[0], (ll)y->shape.d[0], (ll)x->shape.d[1], (ll)x->shape.d[2],
	     (ll)x->shape.d[3], (ll)y->shape.d[2], (ll)y->shape.d[3], ox_cg_lit(OX_F64, scale), (ll)ratio, half,
	     maxmode);
	return 0;
}

/* ---- GridSample (templates/norm_gridsample.c) ---- */
static int emit_gridsample(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, nsp = x->shape.rank - 2;
	const char *m = ox_attr_str(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
	const char *p = ox_attr_str(n, "padding_mode", "zeros");
	int mode = -1, pad = -1;
	if (!strcmp(m, "nearest"))
		mode = 0;
	else if (!strcmp(m, n->opset >= 20 ? "linear" : "bilinear"))
		mode = 1;
	else if (!strcmp(m, n->opset >= 20 ? "cubic" : "bicubic"))
		mode = 2;
	if (!strcmp(p, "zeros"))
		pad = 0;
	else if (!strcmp(p, "border"))
		pad = 1;
	else if (!strcmp(p, "reflection"))
		pad = 2;
	if (mode < 0 || pad < 0)
		return ox_error(g, n, "mode '%s' / padding_mode '%s' is not supported at opset %d", m, p, n->opset);
	int align = ox_attr_int(n, "align_corners", 0) != 0;
	if (use(cg, g, n, "norm_gridsample", dt))
		return -1;
	ox_cg_line(cg, 1, "/* GridSample %s, padding %s%s */", m, p, align ? ", align_corners" : "");
	ox_cg_printf(cg, "\tstatic const long in[%d] = {", nsp);
	for (int i = 0; i < nsp; i++)
		ox_cg_printf(cg, "%s%lld", i ? ", " : "", (ll)x->shape.d[i + 2]);
	ox_cg_printf(cg, "};\n");
	ox_cg_line(cg, 1, "ox_gridsample_%s(in0, in1, out0, %lld, %lld, %d, in, %lld, %d, %d, %d);", ox_cg_sfx(dt),
	     (ll)x->shape.d[0], (ll)x->shape.d[1], nsp, (ll)prod(&y->shape, 2, y->shape.rank), mode, pad, align);
	return 0;
}

/* ---- Upsample: Resize with asymmetric coordinates, nearest (floor) or linear ---- */
static int emit_upsample(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	int linear = strcmp(ox_attr_str(n, "mode", "nearest"), "nearest") != 0;
	if (linear && !ox_dtype_is_float(dt))
		return ox_error(g, n, "linear mode needs a float input");
	double sc[OX_MAX_RANK];
	if (ox_ir_norm_upsample_scales(g, n, r, sc))
		return -1;
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
		snprintf(name, sizeof name, "a%d", a);
		print_longs(cg, name, o0, out);
		if (two[a]) {
			snprintf(name, sizeof name, "b%d", a);
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
	int64_t D = nsp == 3 ? y->shape.d[1] : 1, H = y->shape.d[nsp - 1], W = y->shape.d[nsp];
	char b1[128], b2[700], e[300];
	ox_cg_line(cg, 1, "/* AffineGrid %d-D%s: base coordinates as the reference's arange */", nsp,
	     align ? ", align_corners" : "");
	/* align: -1 + i * 2/(L-1) (just -1 when L = 1); else (-1 + 1/L) + i * 2/L */
	static const char *const ax[3] = {"d", "h", "w"};
	const int64_t L[3] = {D, H, W};
	ox_cg_line(cg, 1, "for (long nn = 0; nn < %lld; nn++) {", (ll)y->shape.d[0]);
	ox_cg_line(cg, 2, "const %s *t = in0 + nn * %d;", ox_cg_ctype(dt), nsp * (nsp + 1));
	ox_cg_line(cg, 2, "double th[%d];", nsp * (nsp + 1));
	ox_cg_line(cg, 2, "for (int k = 0; k < %d; k++)", nsp * (nsp + 1));
	ox_cg_line(cg, 3, "th[k] = %s;", ld(dt, "t[k]", b1, sizeof b1));
	ox_cg_line(cg, 2, "%s *q = out0 + nn * %lld;", ox_cg_ctype(dt), (ll)(D * H * W * nsp));
	for (int i = 3 - nsp; i < 3; i++)
		ox_cg_line(cg, 2 + i - (3 - nsp), "for (long %s = 0; %s < %lld; %s++) {", ax[i], ax[i], (ll)L[i], ax[i]);
	int lvl = 2 + nsp;
	for (int i = 3 - nsp; i < 3; i++) {
		if (align && L[i] == 1)
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
			snprintf(e, sizeof e, "th[%d] * cw + th[%d] * ch + th[%d]", b, b + 1, b + 2);
		else
			snprintf(e, sizeof e, "th[%d] * cw + th[%d] * ch + th[%d] * cd + th[%d]", b, b + 1, b + 2, b + 3);
		ox_cg_line(cg, lvl, "*q++ = %s;", st(dt, e, b2, sizeof b2));
	}
	for (int i = nsp; i > 0; i--)
		ox_cg_line(cg, 1 + i, "}");
	ox_cg_line(cg, 1, "}");
	(void)g;
	return 0;
}

/* ---- Col2Im: sum the columns back into the image ---- */
static int emit_col2im(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, nsp = y->shape.rank - 2;
	int64_t img[MAXSP], blk[MAXSP], dil[MAXSP], pads[2 * MAXSP], str[MAXSP], ncol[MAXSP], ist[MAXSP];
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
	snprintf(xe, sizeof xe, "xi[k * %lld + l]", (ll)L);
	snprintf(e, sizeof e, "%s + %s", ld(dt, "yo[at]", b1, sizeof b1), ld(dt, xe, b2, sizeof b2));
	ox_cg_line(cg, 4, "yo[at] = %s;", st(dt, e, b3, sizeof b3));
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---- CenterCropPad: zero, then copy the centered overlap ---- */
static int emit_centercroppad(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int r = x->shape.rank;
	int64_t cnt[OX_MAX_RANK], is[OX_MAX_RANK], os[OX_MAX_RANK], ist[OX_MAX_RANK], ost[OX_MAX_RANK];
	int64_t a1 = 1, a2 = 1;
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
