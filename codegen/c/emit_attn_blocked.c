/* emit_attn_blocked.c: f32 Attention in blocks of query rows, on the
 * shared micro-kernel (ukernel.h), for the nodes opt/attention.c's
 * ox_opt_attn_geo accepts (codegen/c/emit_attn.c keeps every other case).
 *
 * A task owns a slot of the node's scratch and takes heads (b, h) in turn:
 * it transposes the head's K into the slot (K^T is the kernel's B: rows of
 * Skv keys), then for each block of `rows` queries computes the block's
 * scores S = Q K^T (rows x Skv, in the slot), turns each row into
 * probabilities (scale, softcap, mask, causal, max, exp, sum: vectorized with
 * templates/vmath.c's exp), and writes Y = S V straight into the output
 * rows. The [Sq, Skv] matrix of a head is never stored whole. The product
 * order differs from the reference's (Q and K each scaled by sqrt(scale)):
 * f32 rounding, not a different result. Batch and sequence lengths may be
 * run-time dims: the scratch is sized for their tops, a run-time key count
 * T is a loop bound and the reduction of P V (kt and sc rows ktw floats
 * apart, ox_attngeo), the queries end in blocks of 2^j rows.
 */
#include "ukernel.h"
#include "../../opt/opt.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* C[rows x N] = A[rows x K] B[K x N] at indent lvl: groups of ocb column
 * vectors, the last narrower and with a partial last vector when N is not
 * a multiple of the vector width; the geometry struct `geo` has kc = K */
static void panel(ox_cg *cg, int lvl, int rows, int64_t N, long ar, long ws, long yr, const char *a, const char *w,
		  const char *y, const char *geo)
{
	static const ox_epi none;
	const int b = cg->g->target->vw, ocb = cg->g->target->nr_vecs;
	const int64_t mv = (N + b - 1) / b, ng = (mv + ocb - 1) / ocb, ocl = mv - (ng - 1) * ocb;
	const int tail = (int)(N % b);
	ox_ukshape full = {.rows = rows, .ocb = ocb, .ar = ar, .ac1 = 1, .ws = ws, .yr = yr, .yo_b = 1};
	ox_ukshape last = full;
	last.ocb = (int)ocl, last.tail = tail;
	char kf[96], kl[96];
	ox_cg_snprintf(kf, sizeof kf, "%s", ox_uk_kernel(cg, &full, &none));
	ox_cg_snprintf(kl, sizeof kl, "%s", ox_uk_kernel(cg, &last, &none));
	if (ng > 1) {
		ox_cg_line(cg, lvl, "for (long gi = 0; gi < %lld; gi++)", (long long)(ng - 1));
		ox_cg_line(cg, lvl + 1, "%s(%s, %s + gi * %d, %s + gi * %d, NULL, &%s);", kf, a, w, ocb * b, y, ocb * b, geo);
	}
	ox_cg_line(cg, lvl, "%s(%s, %s + %lld, %s + %lld, NULL, &%s);", kl, a, w, (long long)((ng - 1) * ocb * b), y,
		   (long long)((ng - 1) * ocb * b), geo);
}

/* C[rows x N] = A B for a run-time N (the C expression n): groups of the
 * kernel's full width only, ws and yr past N's top rounded up to whole
 * groups (ox_attngeo.ktw), so the last group computes columns past N that
 * nothing reads */
static void panel_rt(ox_cg *cg, int lvl, int rows, const char *n, long ar, long ws, long yr, const char *a,
		     const char *w, const char *y, const char *geo)
{
	static const ox_epi none;
	const int b = cg->g->target->vw, ocb = cg->g->target->nr_vecs;
	ox_ukshape full = {.rows = rows, .ocb = ocb, .ar = ar, .ac1 = 1, .ws = ws, .yr = yr, .yo_b = 1};
	char kf[96];
	ox_cg_snprintf(kf, sizeof kf, "%s", ox_uk_kernel(cg, &full, &none));
	ox_cg_line(cg, lvl, "for (long gi = 0; gi * %d < %s; gi++)", ocb * b, n);
	ox_cg_line(cg, lvl + 1, "%s(%s, %s + gi * %d, %s + gi * %d, NULL, &%s);", kf, a, w, ocb * b, y, ocb * b, geo);
}

/* the rows of one block of queries: scores -> probabilities -> Y. T is
 * the keys' count as C (a literal, or "T" when run-time: then the rows
 * of kt and sc are q->ktw floats apart) */
static void block(ox_cg *cg, const ox_attngeo *q, int rows, long qrs, long vrs, long yrs, char (*ms)[160],
		  int mask, const char *T)
{
	const int b = cg->g->target->vw;
	const int rt = ox_dim_is_rt(cg->g, q->dSkv);
	const long W = (long)q->ktw; /* floats between the rows of kt and sc */
	char qa[64], ya[64];
	ox_cg_snprintf(qa, sizeof qa, "qp + i0 * %ld", qrs);
	ox_cg_snprintf(ya, sizeof ya, "yp + i0 * %ld", yrs);
	ox_cg_line(cg, 3, "/* scores of %d queries */", rows);
	if (rt)
		panel_rt(cg, 3, rows, T, qrs, W, W, qa, "kt", "sc", "gqk");
	else
		panel(cg, 3, rows, q->Skv, qrs, W, W, qa, "kt", "sc", "gqk");
	ox_cg_line(cg, 3, "for (long r = 0; r < %d; r++) {", rows);
	ox_cg_line(cg, 4, "float *s = sc + r * %ld;", W);
	/* E: the keys the row computes; causal: those up to query i0 + r
	 * (tq), rounded up to whole vectors (the lanes past tq -inf, set in
	 * registers: a scalar store there would stall the vector loads after
	 * it), the probabilities past them 0: no exp of masked vectors */
	const char *E = T;
	if (q->causal) {
		ox_cg_line(cg, 4, "const long tq = i0 + r + 1 < %s ? i0 + r + 1 : %s;", T, T);
		ox_cg_line(cg, 4, "const long tr = (tq + %d) / %d * %d < %s ? (tq + %d) / %d * %d : %s;", b - 1, b, b, T,
			   b - 1, b, b, T);
		char iota[400];
		int at = 0;
		for (int l = 0; l < b; l++)
			at += ox_cg_snprintf(iota + at, sizeof iota - (size_t)at, "%s%d", l ? ", " : "", l);
		ox_cg_line(cg, 4, "static const float ox_lane[%d] = {%s};", b, iota);
		E = "tr";
	}
	if (mask)
		ox_cg_line(cg, 4, "const float *mr = in3 + b * %s + h * %s + (i0 + r) * %s;", ms[0], ms[1], ms[2]);
	ox_cg_line(cg, 4, "const ox_vf sv = ox_vf_set1(%s);", ox_cg_lit(OX_F32, q->scale));
	ox_cg_line(cg, 4, "ox_vf mx = ox_vf_set1(-INFINITY);");
	ox_cg_line(cg, 4, "long j = 0;");
	ox_cg_line(cg, 4, "for (; j + %d <= %s; j += %d) {", b, E, b);
	ox_cg_line(cg, 5, "ox_vf v = ox_vf_mul(ox_vf_load(s + j), sv);");
	/* softcap c: c tanh(score / c), before the mask (opset 23's order) */
	char cs[128] = "s[j] * ", ci[32] = "", cc[32] = "";
	if (q->softcap > 0) {
		ox_cg_snprintf(ci, sizeof ci, "%s", ox_cg_lit(OX_F32, 1.0 / q->softcap));
		ox_cg_snprintf(cc, sizeof cc, "%s", ox_cg_lit(OX_F32, q->softcap));
		ox_cg_line(cg, 5, "v = ox_vf_mul(ox_vf_tanh(ox_vf_mul(v, ox_vf_set1(%s))), ox_vf_set1(%s));", ci, cc);
		ox_cg_snprintf(cs, sizeof cs, "tanhf(s[j] * %s * %s) * ", ox_cg_lit(OX_F32, q->scale), ci);
	}
	if (mask)
		ox_cg_line(cg, 5, "v = ox_vf_add(v, ox_vf_load(mr + j));");
	if (q->causal) /* keys j >= tq come after query i0 + r */
		ox_cg_line(cg, 5, "if (j + %d > tq)\n\t\t\t\t\t\tv = ox_vf_select(ox_vf_lt(ox_vf_load(ox_lane), "
			   "ox_vf_set1((float)(tq - j))), v, ox_vf_set1(-INFINITY));", b);
	ox_cg_line(cg, 5, "ox_vf_store(s + j, v);");
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "for (; j < %s; j++)", E);
	const char *sj = q->softcap > 0 ? cc : ox_cg_lit(OX_F32, q->scale);
	if (q->causal)
		ox_cg_line(cg, 5, "s[j] = j < tq ? %s%s%s : -INFINITY;", cs, sj, mask ? " + mr[j]" : "");
	else
		ox_cg_line(cg, 5, "s[j] = %s%s%s;", cs, sj, mask ? " + mr[j]" : "");
	ox_cg_line(cg, 4, "for (j = 0; j + %d <= %s; j += %d)", b, E, b);
	ox_cg_line(cg, 5, "mx = ox_vf_max(ox_vf_load(s + j), mx);");
	ox_cg_line(cg, 4, "float m = ox_vf_hmax(mx);");
	ox_cg_line(cg, 4, "for (; j < %s; j++)", E);
	ox_cg_line(cg, 5, "m = s[j] > m || s[j] != s[j] ? s[j] : m;");
	ox_cg_line(cg, 4, "const ox_vf mv = ox_vf_set1(m);");
	ox_cg_line(cg, 4, "ox_vf sum = ox_vf_zero();");
	ox_cg_line(cg, 4, "for (j = 0; j + %d <= %s; j += %d) {", b, E, b);
	ox_cg_line(cg, 5, "const ox_vf e = ox_vf_exp(ox_vf_sub(ox_vf_load(s + j), mv));");
	ox_cg_line(cg, 5, "ox_vf_store(s + j, e);");
	ox_cg_line(cg, 5, "sum = ox_vf_add(sum, e);");
	ox_cg_line(cg, 4, "}");
	/* the last partial vector: E % b lanes (counted when the program runs) */
	char tl[64];
	if (rt || q->causal)
		ox_cg_snprintf(tl, sizeof tl, "(int)(%s - j)", E);
	else
		ox_cg_snprintf(tl, sizeof tl, "%d", (int)(q->Skv % b));
	ox_cg_line(cg, 4, "if (j < %s) {", E);
	ox_cg_line(cg, 5, "const ox_vf e = ox_vf_exp(ox_vf_sub(ox_vf_load_n(s + j, %s), mv));", tl);
	ox_cg_line(cg, 5, "ox_vf_store_n(s + j, e, %s);", tl);
	ox_cg_line(cg, 5, "float tail[%d] = {0};", b);
	ox_cg_line(cg, 5, "ox_vf_store_n(tail, e, %s);", tl);
	ox_cg_line(cg, 5, "sum = ox_vf_add(sum, ox_vf_load(tail));");
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "const float is = 1.0f / ox_vf_hsum(sum);");
	ox_cg_line(cg, 4, "const ox_vf inv = ox_vf_set1(is);");
	ox_cg_line(cg, 4, "for (j = 0; j + %d <= %s; j += %d)", b, E, b);
	ox_cg_line(cg, 5, "ox_vf_store(s + j, ox_vf_mul(ox_vf_load(s + j), inv));");
	ox_cg_line(cg, 4, "for (; j < %s; j++)", E);
	ox_cg_line(cg, 5, "s[j] = s[j] * is;");
	if (q->causal) { /* the keys after the query: probability 0 */
		ox_cg_line(cg, 4, "for (; j + %d <= %s; j += %d)", b, T, b);
		ox_cg_line(cg, 5, "ox_vf_store(s + j, ox_vf_zero());");
		ox_cg_line(cg, 4, "for (; j < %s; j++)", T);
		ox_cg_line(cg, 5, "s[j] = 0.0f;");
	}
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "/* times V, into the output rows */");
	panel(cg, 3, rows, q->Dv, W, vrs, yrs, "sc", "vp", ya, "gpv");
}

/* dims as C (ox_cg_dim: a literal when constant) */
#define D(d) ox_cg_dim(cg, (d))
#define MUL(a, b) ox_dim_mul(g, (a), (b))

int ox_cg_emit_attn_blocked(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_attngeo q;
	if (ox_opt_attn_geo(g, n, &q) || !n->scratch)
		ox_die("codegen: Attention '%s' is not for the blocked kernel", n->name);
	ox_uk_use(cg);
	if (ox_cg_use(cg, "vmath", OX_F32))
		ox_die("templates/vmath.c is missing");
	const ox_value *m = ox_in(g, n, 3);
	int64_t R = q.Hq / q.Hkv;
	/* batch and sequence lengths as dims (run-time ones over ox_d[]) */
	const ox_dim B = q.dB, Sq = q.dSq, Skv = q.dSkv;
	long qrs, krs, vrs, yrs;
	char qb[256], kb[256], vb[256], yb[256];
	if (q.rank == 4) {
		qrs = (long)q.Dk, krs = (long)q.Dk, vrs = (long)q.Dv, yrs = (long)q.Dv;
		ox_cg_snprintf(qb, sizeof qb, "(b * %lld + h) * %s", (long long)q.Hq, D(MUL(Sq, q.Dk)));
		ox_cg_snprintf(kb, sizeof kb, "(b * %lld + hk) * %s", (long long)q.Hkv, D(MUL(Skv, q.Dk)));
		ox_cg_snprintf(vb, sizeof vb, "(b * %lld + hk) * %s", (long long)q.Hkv, D(MUL(Skv, q.Dv)));
		ox_cg_snprintf(yb, sizeof yb, "(b * %lld + h) * %s", (long long)q.Hq, D(MUL(Sq, q.Dv)));
	} else {
		qrs = (long)(q.Hq * q.Dk), krs = (long)(q.Hkv * q.Dk), vrs = (long)(q.Hkv * q.Dv), yrs = (long)(q.Hq * q.Dv);
		ox_cg_snprintf(qb, sizeof qb, "b * %s + h * %lld", D(MUL(Sq, qrs)), (long long)q.Dk);
		ox_cg_snprintf(kb, sizeof kb, "b * %s + hk * %lld", D(MUL(Skv, krs)), (long long)q.Dk);
		ox_cg_snprintf(vb, sizeof vb, "b * %s + hk * %lld", D(MUL(Skv, vrs)), (long long)q.Dv);
		ox_cg_snprintf(yb, sizeof yb, "b * %s + h * %lld", D(MUL(Sq, yrs)), (long long)q.Dv);
	}
	/* the mask's strides over [B, Hq, Sq, Skv] (0 where it broadcasts) */
	char ms[4][160];
	{
		ox_dim st = 1, mst[4] = {0, 0, 0, 0}, want[4] = {B, q.Hq, Sq, Skv};
		for (int i = m ? m->shape.rank - 1 : -1; i >= 0; i--) {
			int ax = 4 - m->shape.rank + i;
			mst[ax] = m->shape.d[i] == 1 && want[ax] != 1 ? 0 : st;
			st = MUL(st, m->shape.d[i]);
		}
		for (int k = 0; k < 4; k++)
			ox_cg_snprintf(ms[k], sizeof ms[k], "%s", D(mst[k]));
	}
	ox_cg_printf(cg, "\t/* Attention: %s x %lld query heads (%lld kv heads), %s queries over %s keys, head ",
		     ox_uk_dimtext(cg, B), (long long)q.Hq, (long long)q.Hkv, ox_uk_dimtext(cg, Sq),
		     ox_uk_dimtext(cg, Skv));
	ox_cg_printf(cg, "sizes %lld/%lld, scale %s%s%s;\n"
			 "\t * blocks of %d queries, %d task slots */\n",
		     (long long)q.Dk, (long long)q.Dv, ox_cg_lit(OX_F32, q.scale), m ? ", masked" : "",
		     q.causal ? ", causal" : "", q.rows, q.slots);
	ox_cg_tasks(cg, q.slots);
	ox_cg_line(cg, 1, "static const ox_ukgeo gqk = {1, 0, 1, 0, 1, 0, %lld, %lld, 1, 0, 0};", (long long)q.Dk,
		   (long long)q.Dk);
	if (ox_dim_is_rt(g, Skv))
		ox_cg_line(cg, 1, "const ox_ukgeo gpv = {1, 0, 1, 0, 1, 0, %s, %s, 1, 0, 0};", D(Skv), D(Skv));
	else
		ox_cg_line(cg, 1, "static const ox_ukgeo gpv = {1, 0, 1, 0, 1, 0, %lld, %lld, 1, 0, 0};", (long long)q.Skv,
			   (long long)q.Skv);
	ox_cg_line(cg, 1, "float *kt = (float *)out%d + t * %lld, *sc = kt + %lld;", n->nout - 1,
		   (long long)q.slot_floats, (long long)(q.Dk * q.ktw));
	/* the keys' count: a literal, or T when the program runs */
	char T[32];
	if (ox_dim_is_rt(g, Skv)) {
		ox_cg_line(cg, 1, "const long T = %s; /* keys */", D(Skv));
		ox_cg_snprintf(T, sizeof T, "T");
	} else {
		ox_cg_snprintf(T, sizeof T, "%lld", (long long)q.Skv);
	}
	ox_cg_line(cg, 1, "for (long bh = t; bh < %s; bh += %d) {", D(MUL(B, q.Hq)), q.slots);
	ox_cg_line(cg, 2, "const long b = bh / %lld, h = bh %% %lld, hk = h / %lld;", (long long)q.Hq, (long long)q.Hq,
		   (long long)R);
	ox_cg_line(cg, 2, "(void)b, (void)hk;");
	ox_cg_line(cg, 2, "const float *qp = in0 + %s, *kp = in1 + %s, *vp = in2 + %s;", qb, kb, vb);
	ox_cg_line(cg, 2, "float *yp = out0 + %s;", yb);
	ox_cg_line(cg, 2, "for (long j = 0; j < %s; j++) /* K^T of the head */", T);
	ox_cg_line(cg, 3, "for (long d = 0; d < %lld; d++)", (long long)q.Dk);
	ox_cg_line(cg, 4, "kt[d * %lld + j] = kp[j * %ld + d];", (long long)q.ktw, krs);
	ox_cg_line(cg, 2, "long i0 = 0;");
	if (ox_dim_is_rt(g, Sq)) {
		/* the queries: blocks of rows, then of 2^j rows for the rest */
		int tsz[OX_UK_MAXTAILS], nt = ox_uk_tails(q.rows, tsz);
		ox_cg_line(cg, 2, "for (; i0 + %d <= %s; i0 += %d) {", q.rows, D(Sq), q.rows);
		block(cg, &q, q.rows, qrs, vrs, yrs, ms, m != NULL, T);
		ox_cg_line(cg, 2, "}");
		for (int j = 0; j < nt; j++) {
			ox_cg_line(cg, 2, "if (i0 + %d <= %s) {", tsz[j], D(Sq));
			block(cg, &q, tsz[j], qrs, vrs, yrs, ms, m != NULL, T);
			if (j < nt - 1)
				ox_cg_line(cg, 3, "i0 += %d;", tsz[j]);
			ox_cg_line(cg, 2, "}");
		}
		ox_cg_line(cg, 1, "}");
		return 0;
	}
	int full = (int)(q.Sq / q.rows), tail = (int)(q.Sq % q.rows);
	if (full) {
		ox_cg_line(cg, 2, "for (; i0 + %d <= %lld; i0 += %d) {", q.rows, (long long)q.Sq, q.rows);
		block(cg, &q, q.rows, qrs, vrs, yrs, ms, m != NULL, T);
		ox_cg_line(cg, 2, "}");
	}
	if (tail) {
		ox_cg_line(cg, 2, "{");
		block(cg, &q, tail, qrs, vrs, yrs, ms, m != NULL, T);
		ox_cg_line(cg, 2, "}");
	}
	ox_cg_line(cg, 1, "}");
	return 0;
}
