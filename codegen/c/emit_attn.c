/* emit_attn.c: C for Attention, RMSNormalization and RotaryEmbedding.
 *
 * The kernels are loops with literal bounds written straight into the node
 * function; the only scratch memory is a few stack arrays sized by the
 * model (one row of scores, one row of output). The arithmetic follows the
 * ONNX function bodies step by step, so that f16/bf16 results round where
 * the reference rounds: `rnd` wraps each step that the reference computes
 * in the input type (an identity for f32/f64). Attention follows the
 * opset-23/24 order: scale Q and K by sqrt(scale), QK^T, softcap, add the
 * bias (mask, causal, padding), softmax, times V.
 */
#include "../cg.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* "for (size_t v = 0; v < n; v++) {" unless n == 1 (then v is a constant 0
 * in a plain block, so the body can still name it); returns the new depth */
static int open_loop(ox_cg *cg, int lvl, const char *var, int64_t n)
{
	if (n == 1) { /* (a term of a dim of 1 does not read it) */
		ox_cg_line(cg, lvl, "{");
		ox_cg_line(cg, lvl + 1, "const size_t %s = 0;", var);
		ox_cg_line(cg, lvl + 1, "(void)%s;", var);
		return lvl + 1;
	}
	ox_cg_line(cg, lvl, "for (size_t %s = 0; %s < %lld; %s++) {", var, var, (long long)n, var);
	return lvl + 1;
}

static void close_loops(ox_cg *cg, int lvl, int to)
{
	while (lvl > to)
		ox_cg_line(cg, --lvl, "}");
}

/* round a compute-type expression through the storage type of dt: the
 * identity unless dt is f16/bf16. Rotating buffer, like ox_cg_load. */
static const char *rnd(int dt, const char *e)
{
	static char ring[8][1024];
	static int at;
	if (dt != OX_F16 && dt != OX_BF16)
		return e;
	at = (at + 1) % 8;
	ox_cg_snprintf(ring[at], sizeof ring[at], "%s", ox_cg_load(dt, ox_cg_store(dt, e)));
	return ring[at];
}

/* libm name for the compute type: expf for float, exp for double */
static const char *mfn(int cdt, const char *name)
{
	static char ring[8][16];
	static int at;
	at = (at + 1) % 8;
	ox_cg_snprintf(ring[at], sizeof ring[at], "%s%s", name, cdt == OX_F64 ? "" : "f");
	return ring[at];
}

static int64_t cdim(const ox_graph *g, ox_dim d)
{
	return ox_dim_eval(g, d);
}

/* ---------------- Attention ---------------- */

/* Row pointer expressions for Q/K/V/Y in their own layouts: 4-D
 * [B, H, S, D] rows are ((b*H + h)*S + s)*D, 3-D [B, S, H*D] rows are
 * (b*S + s)*H*D + h*D, sequence-first [S, B, H*D] ones (rank 3 and sb, the
 * batch count B, not 0: ox_seq_first) (s*B + b)*H*D + h*D. */
static void rowexpr(char *buf, size_t cap, const char *base, int rank, int64_t sb, int64_t H, int64_t S,
                    int64_t D, const char *h, const char *s)
{
	if (rank == 3 && sb)
		ox_cg_snprintf(buf, cap, "%s + (%s * %lld + b) * %lld + %s * %lld", base, s, (long long)sb,
		         (long long)(H * D), h, (long long)D);
	else if (rank == 4)
		ox_cg_snprintf(buf, cap, "%s + ((b * %lld + %s) * %lld + %s) * %lld", base, (long long)H, h,
		         (long long)S, s, (long long)D);
	else
		ox_cg_snprintf(buf, cap, "%s + (b * %lld + %s) * %lld + %s * %lld", base, (long long)S, s,
		         (long long)(H * D), h, (long long)D);
}

/* `const T *var = ` the row of the concatenated past+new keys (or values)
 * for kv head hk and position `j` (a C expression). */
static void kvrow(ox_cg *cg, int lvl, const char *T, const char *var, int past_in, int new_in,
                  int rank, int64_t sb, int64_t Hkv, int64_t P, int64_t S, int64_t D, const char *j)
{
	char nb[16], pr[256], nr[256], jn[64];
	ox_cg_snprintf(nb, sizeof nb, "in%d", new_in);
	if (P == 0) {
		rowexpr(nr, sizeof nr, nb, rank, sb, Hkv, S, D, "hk", j);
		ox_cg_line(cg, lvl, "const %s *%s = %s;", T, var, nr);
		return;
	}
	ox_cg_snprintf(pr, sizeof pr, "in%d + ((b * %lld + hk) * %lld + %s) * %lld", past_in, (long long)Hkv,
	         (long long)P, j, (long long)D);
	ox_cg_snprintf(jn, sizeof jn, "(%s - %lld)", j, (long long)P);
	rowexpr(nr, sizeof nr, nb, rank, sb, Hkv, S, D, "hk", jn);
	ox_cg_line(cg, lvl, "const %s *%s = %s < %lld ? %s : %s;", T, var, j, (long long)P, pr, nr);
}

static int emit_attention(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_attn_geom a;
	if (ox_attn_dims(g, n, &a))
		return -1;
	const ox_value *q = ox_in(g, n, 0), *m = ox_in(g, n, 3);
	int dt = q->dtype, rank = a.rank;
	int64_t B = cdim(g, a.b), Sq = cdim(g, a.sq), Skv = cdim(g, a.skv), P = cdim(g, a.past);
	int64_t Hq = cdim(g, a.hq), Hkv = cdim(g, a.hkv), Dk = cdim(g, a.dk), Dv = cdim(g, a.dv);
	int64_t T = P + Skv;
	if (B < 0 || Sq < 0 || Skv < 0 || P < 0 || Hq < 0 || Hkv <= 0 || Dk < 0 || Dv < 0)
		return ox_error(g, n, "shapes are not constant");
	const int64_t sb = a.seq ? B : 0; /* (sequence first: rows B apart) */
	int64_t R = Hq / Hkv;
	int causal = ox_attr_int(n, "is_causal", 0) != 0;
	int mode = (int)ox_attr_int(n, "qk_matmul_output_mode", 0);
	int sp = (int)ox_attr_int(n, "softmax_precision", 0);
	double softcap = ox_attr_float(n, "softcap", 0);
	const ox_attr *sa = ox_attr_get(n, "scale");
	double scale = sa ? sa->f : 1.0 / sqrt((double)Dk);
	int has_np = n->nin > 6 && n->in[6] >= 0;
	int want_pk = ox_out(g, n, 1) != NULL, want_pv = ox_out(g, n, 2) != NULL;
	int want_qk = ox_out(g, n, 3) != NULL;

	/* C: the matmuls' type; SM: the softmax's (softmax_precision, else Q's);
	 * rdt / srdt: the storage types their steps round through */
	int cdt = dt == OX_F64 ? OX_F64 : OX_F32;
	int smdt = sp ? sp : dt;
	int scdt = smdt == OX_F64 ? OX_F64 : OX_F32;
	const char *Ty = ox_cg_ctype(dt), *C = ox_cg_ntype(cdt), *SM = ox_cg_ntype(scdt);
	char e[1024], e2[1024];

	/* mask: strides of [B, Hq, Sq, T] in the mask, 0 where it broadcasts */
	int64_t ms[4] = {0, 0, 0, 0}, M = T;
	if (m) {
		int r = m->shape.rank;
		int64_t want[4] = {B, Hq, Sq, T}, st = 1;
		for (int i = r - 1; i >= 0; i--) {
			int64_t d = cdim(g, m->shape.d[i]);
			int ax = 4 - r + i;
			if (d < 0)
				return ox_error(g, n, "attn_mask shape is not constant");
			if (ax == 3 ? d > T : (d != 1 && d != want[ax]))
				return ox_error(g, n, "attn_mask dim %d (%lld) does not broadcast to %lld", i,
				                (long long)d, (long long)want[ax]);
			ms[ax] = ax == 3 ? 1 : d == 1 ? 0 : st;
			if (ax == 3)
				M = d;
			st *= d;
		}
	}

	char qs[64];
	ox_cg_snprintf(qs, sizeof qs, "%s", ox_cg_lit(cdt, scale));
	ox_cg_lstart(cg, 1, "/* Attention: %lld query heads over %lld kv heads, q_len %lld, kv_len %lld ",
	     (long long)Hq, (long long)Hkv, (long long)Sq, (long long)T);
	ox_cg_printf(cg, "(past %lld), head sizes %lld/%lld, scale %s%s */\n",
	     (long long)P, (long long)Dk, (long long)Dv, qs, causal ? ", causal" : "");

	/* present_key / present_value: past then new, always 4-D */
	for (int k = 0; k < 2; k++) {
		if (!(k ? want_pv : want_pk) || B * Hkv * T == 0)
			continue;
		int64_t D = k ? Dv : Dk;
		if (D == 0)
			continue;
		int lvl = open_loop(cg, 1, "b", B);
		lvl = open_loop(cg, lvl, "hk", Hkv);
		lvl = open_loop(cg, lvl, "j", T);
		kvrow(cg, lvl, Ty, "src", 4 + k, 1 + k, rank, sb, Hkv, P, Skv, D, "j");
		ox_cg_line(cg, lvl, "memcpy(out%d + ((b * %lld + hk) * %lld + j) * %lld, src, %lld * sizeof *src);",
		     1 + k, (long long)Hkv, (long long)T, (long long)D, (long long)D);
		close_loops(cg, lvl, 1);
	}
	if (B * Hq * Sq == 0)
		return 0;

	/* sqrt(scale) applied to Q and to K, as the reference does; rounded to
	 * Q's type like the function body's Cast */
	double rs = sqrt(scale);
	if (dt == OX_F16)
		rs = ox_f16_to_f32(ox_f32_to_f16((float)rs));
	else if (dt == OX_BF16)
		rs = ox_bf16_to_f32(ox_f32_to_bf16((float)rs));
	char rss[64];
	ox_cg_snprintf(rss, sizeof rss, "%s", ox_cg_lit(cdt, rs));

	int lvl = open_loop(cg, 1, "b", B);
	lvl = open_loop(cg, lvl, "h", Hq);
	ox_cg_line(cg, lvl, "const size_t hk = h / %lld;", (long long)R);
	lvl = open_loop(cg, lvl, "i", Sq);
	char row[256];
	rowexpr(row, sizeof row, "in0", rank, sb, Hq, Sq, Dk, "h", "i");
	ox_cg_line(cg, lvl, "const %s *qr = %s;", Ty, row);
	rowexpr(row, sizeof row, "out0", rank, sb, Hq, Sq, Dv, "h", "i");
	ox_cg_line(cg, lvl, "%s *yr = %s;", Ty, row);
	if (want_qk)
		ox_cg_line(cg, lvl, "%s *qk = out3 + ((b * %lld + h) * %lld + i) * %lld;", Ty, (long long)Hq,
		     (long long)Sq, (long long)T);
	if (T == 0) {
		/* no key at all: an empty weighted sum */
		int l = open_loop(cg, lvl, "d", Dv);
		ox_cg_line(cg, l, "yr[d] = %s;", ox_cg_store(dt, ox_cg_lit(cdt, 0)));
		close_loops(cg, l, 1);
		return 0;
	}
	if (Dk > 0) {
		ox_cg_line(cg, lvl, "%s qs[%lld];", C, (long long)Dk);
		ox_cg_line(cg, lvl, "for (size_t d = 0; d < %lld; d++)", (long long)Dk);
		ox_cg_snprintf(e, sizeof e, "%s * %s", ox_cg_load(dt, "qr[d]"), rss);
		ox_cg_line(cg, lvl + 1, "qs[d] = %s;", rnd(dt, e));
	}
	ox_cg_line(cg, lvl, "%s s[%lld];", SM, (long long)T);

	/* scores */
	int l = open_loop(cg, lvl, "j", T);
	kvrow(cg, l, Ty, "kr", 4, 1, rank, sb, Hkv, P, Skv, Dk, "j");
	ox_cg_line(cg, l, "%s acc = %s;", C, ox_cg_lit(cdt, 0));
	if (Dk > 0) {
		ox_cg_line(cg, l, "for (size_t d = 0; d < %lld; d++)", (long long)Dk);
		ox_cg_snprintf(e, sizeof e, "%s * %s", ox_cg_load(dt, "kr[d]"), rss);
		ox_cg_line(cg, l + 1, "acc += qs[d] * (%s);", rnd(dt, e));
	}
	if (Dk == 0)
		ox_cg_line(cg, l, "(void)kr;");
	if (dt == OX_F16 || dt == OX_BF16)
		ox_cg_line(cg, l, "acc = %s;", rnd(dt, "acc"));
	if (want_qk && mode == 0)
		ox_cg_line(cg, l, "qk[j] = %s;", ox_cg_store(dt, "acc"));
	if (softcap > 0) {
		const char *cl = ox_cg_lit(cdt, softcap);
		ox_cg_snprintf(e, sizeof e, "acc / %s", cl);
		ox_cg_snprintf(e2, sizeof e2, "%s(%s)", mfn(cdt, "tanh"), rnd(dt, e));
		ox_cg_snprintf(e, sizeof e, "%s * %s", rnd(dt, e2), ox_cg_lit(cdt, softcap));
		ox_cg_line(cg, l, "acc = %s;", rnd(dt, e));
	}
	if (want_qk && mode == 1)
		ox_cg_line(cg, l, "qk[j] = %s;", ox_cg_store(dt, "acc"));

	/* bias: mask value (keys past the mask's end are masked out), then
	 * -inf for causal and padded positions; -inf added, not assigned, so a
	 * +inf or NaN in the mask behaves as in the reference */
	int anybias = m || causal || has_np;
	if (anybias) {
		const char *ninf = ox_cg_lit(cdt, -INFINITY);
		if (m) {
			char mi[256] = "";
			const char *vars[4] = {"b", "h", "i", "j"};
			for (int k = 0; k < 4; k++) {
				if (!ms[k])
					continue;
				size_t len = strlen(mi);
				if (ms[k] == 1)
					ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s", len ? " + " : "", vars[k]);
				else
					ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s * %lld", len ? " + " : "",
					         vars[k], (long long)ms[k]);
			}
			if (!*mi)
				strcpy(mi, "0");
			char mv[300];
			ox_cg_snprintf(mv, sizeof mv, "in3[%s]", mi);
			const char *val = m->dtype == OX_BOOL ? NULL : ox_cg_load(m->dtype, mv);
			if (val)
				ox_cg_snprintf(e, sizeof e, "%s", val);
			else
				ox_cg_snprintf(e, sizeof e, "(%s ? %s : %s)", mv, ox_cg_lit(cdt, 0), ninf);
			if (M < T)
				ox_cg_line(cg, l, "%s bias = j < %lld ? %s : %s;", C, (long long)M, e, ninf);
			else
				ox_cg_line(cg, l, "%s bias = %s;", C, e);
		} else {
			ox_cg_line(cg, l, "%s bias = %s;", C, ox_cg_lit(cdt, 0));
		}
		if (causal) {
			/* query i sits at position i + offset among the keys */
			if (P == 0 && has_np)
				ox_cg_line(cg, l, "if ((int64_t)j - (int64_t)i + %lld > in6[b]) /* no overflow */", (long long)Sq);
			else
				ox_cg_line(cg, l, "if (j > i + %lld)", (long long)P);
			ox_cg_line(cg, l + 1, "bias += %s;", ninf);
		}
		if (has_np) {
			ox_cg_line(cg, l, "if ((int64_t)j >= in6[b])");
			ox_cg_line(cg, l + 1, "bias += %s;", ninf);
		}
		ox_cg_line(cg, l, "acc = %s;", rnd(dt, "acc + bias"));
	}
	if (want_qk && mode == 2)
		ox_cg_line(cg, l, "qk[j] = %s;", ox_cg_store(dt, "acc"));
	ox_cg_snprintf(e, sizeof e, "(%s)acc", SM);
	ox_cg_line(cg, l, "s[j] = %s;", rnd(smdt, scdt == cdt ? "acc" : e));
	close_loops(cg, l, lvl);

	/* softmax along j */
	ox_cg_line(cg, lvl, "%s mx = %s;", SM, ox_cg_lit(scdt, -INFINITY));
	ox_cg_line(cg, lvl, "for (size_t j = 0; j < %lld; j++)", (long long)T);
	ox_cg_line(cg, lvl + 1, "mx = s[j] > mx ? s[j] : mx;");
	ox_cg_line(cg, lvl, "%s sum = %s;", SM, ox_cg_lit(scdt, 0));
	ox_cg_line(cg, lvl, "for (size_t j = 0; j < %lld; j++) {", (long long)T);
	ox_cg_snprintf(e, sizeof e, "%s(%s)", mfn(scdt, "exp"), rnd(smdt, "s[j] - mx"));
	ox_cg_line(cg, lvl + 1, "s[j] = %s;", rnd(smdt, e));
	ox_cg_line(cg, lvl + 1, "sum += s[j];");
	ox_cg_line(cg, lvl, "}");
	if (smdt == OX_F16 || smdt == OX_BF16)
		ox_cg_line(cg, lvl, "sum = %s;", rnd(smdt, "sum"));
	ox_cg_snprintf(e, sizeof e, "(%s)s[j]", C);
	ox_cg_line(cg, lvl, "for (size_t j = 0; j < %lld; j++) {", (long long)T);
	ox_cg_line(cg, lvl + 1, "s[j] = %s;", rnd(smdt, "s[j] / sum"));
	if (want_qk && mode == 3)
		ox_cg_line(cg, lvl + 1, "qk[j] = %s;", ox_cg_store(dt, scdt == cdt ? "s[j]" : e));
	ox_cg_line(cg, lvl, "}");

	/* Y row = probabilities (in Q's type) times V */
	if (Dv > 0) {
		ox_cg_line(cg, lvl, "%s y[%lld];", C, (long long)Dv);
		ox_cg_line(cg, lvl, "for (size_t d = 0; d < %lld; d++)", (long long)Dv);
		ox_cg_line(cg, lvl + 1, "y[d] = %s;", ox_cg_lit(cdt, 0));
		l = open_loop(cg, lvl, "j", T);
		kvrow(cg, l, Ty, "vr", 5, 2, rank, sb, Hkv, P, Skv, Dv, "j");
		ox_cg_snprintf(e, sizeof e, "(%s)s[j]", C);
		ox_cg_line(cg, l, "const %s p = %s;", C, smdt == dt ? "s[j]" : rnd(dt, e));
		ox_cg_line(cg, l, "for (size_t d = 0; d < %lld; d++)", (long long)Dv);
		ox_cg_line(cg, l + 1, "y[d] += p * %s;", ox_cg_load(dt, "vr[d]"));
		close_loops(cg, l, lvl);
		ox_cg_line(cg, lvl, "for (size_t d = 0; d < %lld; d++)", (long long)Dv);
		ox_cg_line(cg, lvl + 1, "yr[d] = %s;", ox_cg_store(dt, "y[d]"));
	}
	else
		ox_cg_line(cg, lvl, "(void)yr;");
	close_loops(cg, lvl, 1);
	return 0;
}

/* ---------------- RMSNormalization ---------------- */

static int emit_rmsnorm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1);
	int xdt = x->dtype, wdt = w->dtype, rank = x->shape.rank;
	int ax = ox_norm_axis(ox_attr_int(n, "axis", -1), rank);
	int stash = (int)ox_attr_int(n, "stash_type", OX_F32);
	double eps = ox_attr_float(n, "epsilon", 1e-5f);
	int64_t d[OX_MAX_RANK], xs[OX_MAX_RANK], ws[OX_MAX_RANK], st = 1, outer = 1, len = 1;
	for (int i = rank - 1; i >= 0; i--) {
		d[i] = x->shape.d[i];
		const int64_t di = d[i] >= 0 ? d[i] : 1; /* (a run-time dim, < 0, multiplies nothing) */
		xs[i] = st, st *= di;
		if (i < ax)
			outer *= di;
		else
			len *= di;
	}
	if (ox_shape_is_rt(g, &w->shape))
		return ox_error(g, n, "a scale of run-time dims: not supported");
	st = 1;
	for (int i = rank - 1; i >= 0; i--) {
		int wi = i - (rank - w->shape.rank);
		int64_t wd = wi >= 0 ? w->shape.d[wi] : 1;
		ws[i] = wd == 1 ? 0 : st;
		st *= wd;
	}
	ox_cg_line(cg, 1, "/* RMSNormalization over axes %d..%d, epsilon %s */", ax, rank - 1,
	     ox_cg_lit(OX_F32, eps));
	/* run-time leading dims (the normalized ones are constants): the rows
	 * as one loop, the scale over the normalized axes only */
	const int rt = ox_shape_is_rt(g, &x->shape);
	ox_dim rows = 1;
	for (int i = 0; i < ax && rt; i++) {
		rows = ox_dim_mul(g, rows, x->shape.d[i]);
		if (ws[i])
			return ox_error(g, n, "a scale that varies along axis %d, before the normalized ones, with run-time "
					      "dims: not supported", i);
	}
	for (int i = ax; i < rank && rt; i++)
		if (ox_dim_is_rt(g, x->shape.d[i]))
			return ox_error(g, n, "normalized axis %d is a run-time dim: not supported", i);
	if (!rt && outer * len == 0)
		return 0;
	const char *S = ox_cg_ctype(stash), *C = ox_cg_ntype(wdt == OX_F64 ? OX_F64 : OX_F32);
	char xi[512] = "", wi[512] = "", var[16], e[4096], xe[600], we[600];

	/* outer loops, then the sum of squares over the normalized block */
	int lvl = 1;
	if (rt) {
		ox_cg_line(cg, lvl++, "for (size_t o = 0; o < (size_t)%s; o++) {", ox_cg_dim(cg, rows));
		ox_cg_snprintf(xi, sizeof xi, "o * %lld", (long long)len);
	}
	for (int i = 0; i < ax && !rt; i++) {
		ox_cg_snprintf(var, sizeof var, "o%d", i);
		lvl = open_loop(cg, lvl, var, d[i]);
		ox_cg_term(xi, sizeof xi, var, d[i], xs[i]);
		ox_cg_term(wi, sizeof wi, var, d[i], ws[i]);
	}
	ox_cg_line(cg, lvl, "const %s *x = in0%s%s;", ox_cg_ctype(xdt), *xi ? " + " : "", xi);
	ox_cg_line(cg, lvl, "%s *y = out0%s%s;", ox_cg_ctype(wdt), *xi ? " + " : "", xi);
	ox_cg_line(cg, lvl, "%s sum = %s;", S, ox_cg_lit(stash, 0));
	ox_cg_line(cg, lvl, "for (size_t k = 0; k < %lld; k++) {", (long long)len);
	ox_cg_line(cg, lvl + 1, "const %s v = (%s)%s;", S, S, ox_cg_load(xdt, "x[k]"));
	ox_cg_line(cg, lvl + 1, "sum += v * v;");
	ox_cg_line(cg, lvl, "}");
	ox_cg_line(cg, lvl, "const %s rms = %s(sum / %s + %s);", S, mfn(stash, "sqrt"),
	     ox_cg_lit(stash, (double)len), ox_cg_lit(stash, eps));

	/* y = (X's type)(x / rms) * scale, scale broadcast over the block */
	char yi[512] = "";
	int l = lvl;
	for (int i = ax; i < rank; i++) {
		ox_cg_snprintf(var, sizeof var, "k%d", i - ax);
		l = open_loop(cg, l, var, d[i]);
		ox_cg_term(yi, sizeof yi, var, d[i], xs[i]);
		ox_cg_term(wi, sizeof wi, var, d[i], ws[i]);
	}
	ox_cg_snprintf(xe, sizeof xe, "x[%s]", *yi ? yi : "0");
	ox_cg_snprintf(we, sizeof we, "in1[%s]", *wi ? wi : "0");
	char q[700], nrm[1200];
	ox_cg_snprintf(q, sizeof q, "(%s)%s / rms", S, ox_cg_load(xdt, xe));
	if (xdt == OX_F16 || xdt == OX_BF16)
		ox_cg_snprintf(nrm, sizeof nrm, "%s", rnd(xdt, q));
	else
		ox_cg_snprintf(nrm, sizeof nrm, "(%s)(%s)", ox_cg_ntype(xdt), q);
	ox_cg_snprintf(e, sizeof e, "(%s)%s * %s", C, nrm, ox_cg_load(wdt, we));
	ox_cg_line(cg, l, "y[%s] = %s;", *yi ? yi : "0", ox_cg_store(wdt, e));
	close_loops(cg, l, 1);
	return 0;
}

/* ---------------- RotaryEmbedding ---------------- */

void ox_cg_rope_pair(int dt, char *y1, char *y2, size_t n)
{
	char a1[512], a2[512], e[1100];
	ox_cg_snprintf(a1, sizeof a1, "%s", rnd(dt, "co * x1"));
	ox_cg_snprintf(a2, sizeof a2, "%s", rnd(dt, "si * x2"));
	ox_cg_snprintf(e, sizeof e, "%s - %s", a1, a2);
	ox_cg_snprintf(y1, n, "%s", ox_cg_store(dt, e));
	ox_cg_snprintf(a1, sizeof a1, "%s", rnd(dt, "si * x1"));
	ox_cg_snprintf(a2, sizeof a2, "%s", rnd(dt, "co * x2"));
	ox_cg_snprintf(e, sizeof e, "%s + %s", a1, a2);
	ox_cg_snprintf(y2, n, "%s", ox_cg_store(dt, e));
}

static int emit_rope(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *c = ox_in(g, n, 1), *p = ox_in(g, n, 3);
	int dt = x->dtype, rank = x->shape.rank;
	int interleaved = ox_attr_int(n, "interleaved", 0) != 0;
	int64_t H, D, rot;
	if (ox_rope_dims(g, n, &H, &D, &rot))
		return -1;
	/* batch and sequence may be run-time dims (heads and head size not) */
	ox_dim B = x->shape.d[0], S = x->shape.d[rank == 4 ? 2 : 1];
	int64_t half = rot / 2, cols = c->shape.d[c->shape.rank - 1];
	if (H < 0 || D < 0 || ox_dim_is_rt(g, cols) || (p && ox_dim_is_rt(g, c->shape.d[0])))
		return ox_error(g, n, "the heads, head size and caches must have sizes known at compile time");
	if (p && (p->shape.d[0] != B || p->shape.d[1] != S))
		return ox_error(g, n, "position_ids must be the input's [batch, sequence]");
	if (!p && (c->shape.d[0] != B || c->shape.d[1] != S))
		return ox_error(g, n, "without position_ids the caches must be the input's [batch, sequence, ...]");
	ox_cg_line(cg, 1, "/* RotaryEmbedding: %lld heads of %lld, rotating %lld%s */", (long long)H,
	     (long long)D, (long long)rot, interleaved ? " (interleaved pairs)" : " (two halves)");
	if ((!ox_dim_is_rt(g, B) && !B) || (!ox_dim_is_rt(g, S) && !S) || H * D == 0)
		return 0;
	char Bs[1100], Ss[1100];
	ox_cg_snprintf(Bs, sizeof Bs, "%s", ox_cg_dim(cg, B));
	ox_cg_snprintf(Ss, sizeof Ss, "%s", ox_cg_dim(cg, S));
	const char *Ty = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	int lvl = ox_dim_is_rt(g, B) ? (ox_cg_line(cg, 1, "for (size_t b = 0; b < (size_t)%s; b++) {", Bs), 2)
				     : open_loop(cg, 1, "b", B);
	lvl = ox_dim_is_rt(g, S) ? (ox_cg_line(cg, lvl, "for (size_t s = 0; s < (size_t)%s; s++) {", Ss), lvl + 1)
				 : open_loop(cg, lvl, "s", S);
	if (p) {
		/* a negative id counts from the end, as Gather's; an id outside
		 * the cache is an index out of range */
		int64_t np = c->shape.d[0];
		char src[1200];
		ox_cg_snprintf(src, sizeof src, "in3[b * %s + s]", Ss);
		ox_cg_index(cg, lvl, "pos", src, np);
		ox_cg_line(cg, lvl, "const %s *cr = in1 + pos * %lld, *sr = in2 + pos * %lld;", Ty,
		     (long long)cols, (long long)cols);
	} else {
		ox_cg_line(cg, lvl, "const %s *cr = in1 + (b * %s + s) * %lld, *sr = in2 + (b * %s + s) * %lld;",
		     Ty, Ss, (long long)cols, Ss, (long long)cols);
	}
	int l = open_loop(cg, lvl, "h", H);
	char row[2400];
	if (rank == 4)
		ox_cg_snprintf(row, sizeof row, "((b * %lld + h) * %s + s) * %lld", (long long)H, Ss, (long long)D);
	else
		ox_cg_snprintf(row, sizeof row, "((b * %s + s) * %lld + h) * %lld", Ss, (long long)H, (long long)D);
	ox_cg_line(cg, l, "const %s *xr = in0 + %s;", Ty, row);
	ox_cg_line(cg, l, "%s *yr = out0 + %s;", Ty, row);
	if (half > 0) {
		const char *i1 = interleaved ? "2 * k" : "k";
		char i2[32];
		if (interleaved)
			ox_cg_snprintf(i2, sizeof i2, "2 * k + 1");
		else
			ox_cg_snprintf(i2, sizeof i2, "k + %lld", (long long)half);
		char x1[64], x2[64], y1[1200], y2[1200];
		ox_cg_line(cg, l, "for (size_t k = 0; k < %lld; k++) {", (long long)half);
		ox_cg_line(cg, l + 1, "const %s co = %s, si = %s;", C, ox_cg_load(dt, "cr[k]"),
		     ox_cg_load(dt, "sr[k]"));
		ox_cg_snprintf(x1, sizeof x1, "xr[%s]", i1);
		ox_cg_snprintf(x2, sizeof x2, "xr[%s]", i2);
		ox_cg_line(cg, l + 1, "const %s x1 = %s, x2 = %s;", C, ox_cg_load(dt, x1), ox_cg_load(dt, x2));
		ox_cg_rope_pair(dt, y1, y2, sizeof y1);
		ox_cg_line(cg, l + 1, "yr[%s] = %s;", i1, y1);
		ox_cg_line(cg, l + 1, "yr[%s] = %s;", i2, y2);
		ox_cg_line(cg, l, "}");
	}
	if (rot < D)
		ox_cg_line(cg, l, "memcpy(yr + %lld, xr + %lld, %lld * sizeof *xr);", (long long)rot,
		     (long long)rot, (long long)(D - rot));
	close_loops(cg, l, 1);
	return 0;
}

int emit_attn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_Attention: {
		ox_attngeo q;
		if (!ox_opt_attn_geo(g, n, &q) && n->scratch)
			return ox_cg_emit_attn_blocked(cg, g, n);
		return emit_attention(cg, g, n);
	}
	case OX_OP_RMSNormalization:
		if (ox_cg_rows_ok(g, n)) /* f32 rows on vectors */
			return ox_cg_emit_rows(cg, g, n);
		return emit_rmsnorm(cg, g, n);
	case OX_OP_RotaryEmbedding:
		return emit_rope(cg, g, n);
	}
	return ox_error(g, n, "not an attention-family op");
}
