/* emit_gemm.c: Gemm and MatMul on the shared micro-kernel (ukernel.h).
 *
 * A tile is `rows` rows of A x `ocb` vectors of output columns: each step
 * broadcasts A[r][k] and multiply-adds it with a row of B. A constant B
 * was packed at compile time (opt/pack.c: [N/(ocb b)][K][group width],
 * Gemm's transB and alpha applied, its C a bias vector); a runtime B is
 * read in place, row by row (N floats apart). The output is row-major, so
 * where N is not a multiple of the vector width the last vector of a row
 * is loaded and stored lane by lane. Tasks: (product, group of columns,
 * rows of A); epilogues (opt/epilogue.c) are applied in the tile. The
 * rows (batch x sequence), the batch and a product of activations' K may
 * be run-time dims; N, the columns, is a constant (ox_opt_gemm_geo).
 */
#include "ukernel.h"
#include "../../opt/opt.h"
#include <stdio.h>
#include <string.h>

/* the batch offsets of A and B (in floats) of product bt, as C expressions:
 * batch dims broadcast like numpy (codegen/c/emit_nn.c's MatMul); a run-time
 * batch dim is its operand's own (ox_opt_gemm_geo: the other is it or 1) */
static void batch_offsets(ox_cg *cg, ox_graph *g, ox_node *n, const ox_gemmgeo *q, char *ao, char *bo, size_t cap)
{
	const ox_shape *sa = &ox_in(g, n, 0)->shape, *sb = &ox_in(g, n, 1)->shape;
	int nb = (sa->rank > sb->rank ? sa->rank : sb->rank) - 2;
	ox_dim sta = ox_dim_mul(g, q->dM, q->dK), stb = ox_dim_mul(g, q->dK, q->N), inner = 1;
	ao[0] = bo[0] = 0;
	for (int i = nb - 1; i >= 0; i--) {
		int ia = i - (nb - (sa->rank - 2)), ib = i - (nb - (sb->rank - 2));
		ox_dim da = ia >= 0 ? sa->d[ia] : 1, db = ib >= 0 ? sb->d[ib] : 1;
		ox_dim od = da == 1 ? db : db == 1 ? da : da > db ? da : db;
		int ra = ox_dim_is_rt(g, da), rb = ox_dim_is_rt(g, db);
		if (ra || da > 1)
			ox_cg_snprintf(ao + strlen(ao), cap - strlen(ao), "%s(bt / %s %% %s) * %s", *ao ? " + " : "",
				 ox_cg_dim(cg, inner), ox_cg_dim(cg, od), ox_cg_dim(cg, sta));
		if (rb || db > 1)
			ox_cg_snprintf(bo + strlen(bo), cap - strlen(bo), "%s(bt / %s %% %s) * %s", *bo ? " + " : "",
				 ox_cg_dim(cg, inner), ox_cg_dim(cg, od), ox_cg_dim(cg, stb));
		sta = ox_dim_mul(g, sta, da), stb = ox_dim_mul(g, stb, db), inner = ox_dim_mul(g, inner, od);
	}
	if (!*ao)
		ox_cg_snprintf(ao, cap, "0");
	if (!*bo)
		ox_cg_snprintf(bo, cap, "0");
}

/* dims as C (ox_cg_dim: a literal when constant) */
#define D(d) ox_cg_dim(cg, (d))

/* the tiles of [p0, p1): with a run-time extent (rt) the rest after the
 * full tiles in tiles of 2^j rows */
static void tiles(ox_cg *cg, int lvl, const ox_epi *E, int rows, long yr, const char *kf, const char *ktail, int rt,
		  int nt, const int *tsz, char (*kt)[96], const char *args, const char *chan)
{
	if (rt)
		ox_uk_loop_rt(cg, lvl, E, rows, yr, kf, nt, tsz, kt, args, chan);
	else
		ox_uk_loop(cg, lvl, E, rows, yr, kf, ktail, args, chan);
}

/* The chunked reduction (q->kchunk rows of B a chunk) of column group gi
 * (a variable in scope) over all rows: kernels that keep the sums in the
 * output between chunks (ukernel.h's acc, raw), E applied in the last.
 * bias: the group's bias (NULL: none); pre: a line printed at the start
 * of chunk ch (NULL: none); panel: chunk ch's weights, [kc][group width
 * gw] floats; pf: prefetch the next chunk's panel (it is in memory). */
void ox_cg_gemm_chunks(ox_cg *cg, ox_graph *g, const ox_gemmgeo *q, const ox_epi *E, int lvl, const char *bias,
		       const char *pre, const char *panel, int pf)
{
	static const ox_epi none;
	const int b = q->b, mrt = ox_dim_is_rt(g, q->dM);
	const int64_t mv = (q->N + b - 1) / b, ng = (mv + q->ocb - 1) / q->ocb, ocl = mv - (ng - 1) * q->ocb;
	const int tail = (int)(q->N % b), rt = mrt ? 0 : (int)(q->M % q->rows);
	int tsz[OX_UK_MAXTAILS];
	const int nt = mrt ? ox_uk_tails(q->rows, tsz) : 0;
	const int64_t kc = q->kchunk, nch = (q->K + kc - 1) / kc, lastk = q->K - (nch - 1) * kc;
	/* phases: the first chunk (from 0 or the bias), a middle one, the last
	 * (through E); one chunk: first and last */
	static const int acc[4] = {0, 1, 1, 0}, raw[4] = {1, 1, 0, 0};
	char kk[4][4][96], kkt[4][2][OX_UK_MAXTAILS][96];
	for (int ph = 0; ph < 4; ph++) {
		if (nch == 1 ? ph != 3 : ph == 3)
			continue;
		for (int j = 0; j < 4; j++) {
			int last = j & 2;
			ox_ukshape us = {.rows = j & 1 ? rt : q->rows, .ocb = last ? (int)ocl : q->ocb, .ar = (long)q->K,
					 .ac1 = 1, .yr = (long)q->N, .yo_b = 1, .tail = last ? tail : 0,
					 .bias = bias != NULL, .pf = pf, .acc = acc[ph], .raw = raw[ph]};
			us.ws = (long)us.ocb * b;
			const ox_epi *pe = raw[ph] ? &none : E;
			ox_cg_snprintf(kk[ph][j], sizeof kk[ph][j], "%s", us.rows ? ox_uk_kernel(cg, &us, pe) : "");
			for (int t = 0; t < nt && !(j & 1) && (!last || ocl != q->ocb || tail); t++) {
				us.rows = tsz[t];
				ox_cg_snprintf(kkt[ph][j / 2][t], sizeof kkt[ph][j / 2][t], "%s", ox_uk_kernel(cg, &us, pe));
			}
		}
	}
	for (int l = 0; l < 2; l++)
		ox_cg_line(cg, lvl, "static const ox_ukgeo q%d = {1, 0, 1, 0, 1, 0, %lld, %lld, 1, 0, %lld};", l,
			   (long long)(l ? lastk : kc), (long long)(l ? lastk : kc), (long long)(pf ? kc * q->ocb * b : 0));
	ox_cg_line(cg, lvl, "const long gw = gi < %lld ? %d : %lld; /* the group's width in floats */", (long long)(ng - 1),
		   q->ocb * b, (long long)(ocl * b));
	ox_cg_line(cg, lvl, "const float *bg = %s;", bias ? bias : "NULL");
	ox_cg_line(cg, lvl, "float *y = out0 + gi * %d;", q->ocb * b);
	ox_cg_line(cg, lvl, "const long p0 = 0, p1 = %s;", D(q->dM));
	ox_cg_line(cg, lvl, "for (long ch = 0; ch < %lld; ch++) {", (long long)nch);
	if (pre)
		ox_cg_line(cg, lvl + 1, "%s", pre);
	ox_cg_line(cg, lvl + 1, "const ox_ukgeo *qc = ch < %lld ? &q0 : &q1;", (long long)(nch - 1));
	ox_cg_line(cg, lvl + 1, "const float *a = in0 + ch * %lld;", (long long)kc);
	ox_cg_line(cg, lvl + 1, "const float *wg = %s;", panel);
	char args[160], chan[64];
	ox_cg_snprintf(args, sizeof args, "a + i * %lld, wg, y + i * %lld, bg, qc", (long long)q->K, (long long)q->N);
	ox_cg_snprintf(chan, sizeof chan, "gi * %d", q->ocb * b);
	for (int ph = 0; ph < 4; ph++) {
		if (nch == 1 ? ph != 3 : ph == 3)
			continue;
		if (nch > 1)
			ox_cg_line(cg, lvl + 1, ph == 0 ? "if (ch == 0) {" : ph == 1 ? "} else if (ch < %lld) {" : "} else {",
				   (long long)(nch - 1));
		int l = nch > 1 ? lvl + 2 : lvl + 1;
		const ox_epi *pe = raw[ph] ? &none : E;
		if (ocl == q->ocb && !tail) {
			tiles(cg, l, pe, q->rows, (long)q->N, kk[ph][0], kk[ph][1], mrt, nt, tsz, kkt[ph][0], args, chan);
		} else {
			ox_cg_line(cg, l, "if (gi < %lld) {", (long long)(ng - 1));
			tiles(cg, l + 1, pe, q->rows, (long)q->N, kk[ph][0], kk[ph][1], mrt, nt, tsz, kkt[ph][0], args, chan);
			ox_cg_line(cg, l, "} else {");
			tiles(cg, l + 1, pe, q->rows, (long)q->N, kk[ph][2], kk[ph][3], mrt, nt, tsz, kkt[ph][1], args, chan);
			ox_cg_line(cg, l, "}");
		}
	}
	if (nch > 1)
		ox_cg_line(cg, lvl + 1, "}");
	ox_cg_line(cg, lvl, "}");
}

int ox_cg_emit_gemm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_gemmgeo q;
	if (ox_opt_gemm_geo(g, n, &q))
		ox_die("codegen: '%s' is not for the GEMM", n->name);
	if (q.constb && ox_in(g, n, 1)->layout != OX_L_GEMMB)
		ox_die("codegen: '%s': B not packed", n->name);
	ox_epi E;
	if (ox_uk_epi(cg, g, n, &E))
		return -1;
	ox_uk_use(cg);
	const int b = q.b;
	const int64_t mv = (q.N + b - 1) / b, ng = (mv + q.ocb - 1) / q.ocb, ocl = mv - (ng - 1) * q.ocb;
	/* run-time rows (mrt): the last tiles of any size; a run-time
	 * reduction (krt, a product of activations): A's rows are K floats
	 * apart, a stride the kernel reads from q->s1 (.arq) */
	const ox_dim M = q.dM, K = q.dK;
	const int mrt = ox_dim_is_rt(g, M), krt = ox_dim_is_rt(g, K) && !q.transA;
	int tsz[OX_UK_MAXTAILS];
	const int nt = mrt ? ox_uk_tails(q.rows, tsz) : 0;
	const int tail = (int)(q.N % b), rt = mrt ? 0 : (int)(q.M % q.rows);
	int hasbias = n->op == OX_OP_Gemm;
	ox_cg_printf(cg, "\t/* %s: %s x [%s x %s] x [%s x %lld]%s%s; tiles of ",
		     n->optype, ox_uk_dimtext(cg, q.dbatch), ox_uk_dimtext(cg, M), ox_uk_dimtext(cg, K),
		     ox_uk_dimtext(cg, K), (long long)q.N, q.constb ? " (B packed)" : "",
		     q.transA ? " (A transposed)" : "");
	ox_cg_printf(cg, "%d rows x %d vectors of %d "
			 "columns%s */\n",
		     q.rows, q.ocb, b, E.body ? "; epilogue fused" : "");
	/* [full group, last group] x [full tile, tail tile] */
	char k[4][96], kt[2][OX_UK_MAXTAILS][96];
	for (int j = 0; j < 4; j++) {
		int last = j & 2;
		ox_ukshape us = {.rows = j & 1 ? rt : q.rows, .ocb = last ? (int)ocl : q.ocb, .ar = q.transA ? 1 : (long)q.K,
				 .ac1 = !q.transA, .yr = (long)q.N, .yo_b = 1, .tail = last ? tail : 0, .bias = hasbias,
				 .arq = krt};
		us.ws = q.constb ? (long)us.ocb * b : (long)q.N;
		if (krt)
			us.ar = 0;
		ox_cg_snprintf(k[j], sizeof k[j], "%s", us.rows ? ox_uk_kernel(cg, &us, &E) : "");
		for (int t = 0; t < nt && !(j & 1) && (!last || ocl != q.ocb || tail); t++) {
			us.rows = tsz[t];
			ox_cg_snprintf(kt[j / 2][t], sizeof kt[j / 2][t], "%s", ox_uk_kernel(cg, &us, &E));
		}
	}
	if (q.kchunk) {
		ox_cg_tasks(cg, (long)ng);
		ox_cg_line(cg, 1, "const long gi = t;");
		char bias2[64], panel[96];
		ox_cg_snprintf(bias2, sizeof bias2, "in2 + gi * %d", q.ocb * b);
		ox_cg_snprintf(panel, sizeof panel, "in1 + gi * %lld + ch * %lld * gw", (long long)(q.ocb * b * q.K),
			       (long long)q.kchunk);
		ox_cg_gemm_chunks(cg, g, &q, &E, 1, hasbias ? bias2 : NULL, NULL, panel, 1);
		return 0;
	}
	/* a task: 2 tiles of rows (or the whole when short) of one group of one product */
	const int64_t per = 2 * (int64_t)q.rows;
	const ox_dim nrow = ox_dim_ceildiv(g, M, per);
	ox_cg_tasks_dim(cg, ox_dim_mul(g, ox_dim_mul(g, q.dbatch, ng), nrow));
	/* the walk: K as the run (q->s1 A's row stride when K is run-time) */
	if (q.rt && (krt || (q.transA && mrt)))
		ox_cg_line(cg, 1, "const ox_ukgeo q = {1, %s, 1, 0, 1, 0, %s, %s, %s, 0, 0};", krt ? D(K) : "0", D(K), D(K),
			   q.transA ? D(M) : "1");
	else
		ox_cg_line(cg, 1, "static const ox_ukgeo q = {1, 0, 1, 0, 1, 0, %lld, %lld, %lld, 0, 0};", (long long)q.K,
			   (long long)q.K, (long long)(q.transA ? q.M : 1));
	ox_cg_line(cg, 1, "const long r = t %% %s, gi = t / %s %% %lld, bt = t / %s;", D(nrow), D(nrow), (long long)ng,
		   D(ox_dim_mul(g, nrow, ng)));
	char ao[2048], bo[2048];
	batch_offsets(cg, g, n, &q, ao, bo, sizeof ao);
	if (q.dbatch == 1)
		ox_cg_snprintf(ao, sizeof ao, "0"), ox_cg_snprintf(bo, sizeof bo, "0");
	ox_cg_line(cg, 1, "const long p0 = r * %lld, p1 = p0 + %lld < %s ? p0 + %lld : %s;", (long long)per,
		   (long long)per, D(M), (long long)per, D(M));
	ox_cg_line(cg, 1, "const float *a = in0 + %s;", ao);
	if (q.constb)
		ox_cg_line(cg, 1, "const float *wg = in1 + gi * %lld;", (long long)(q.ocb * b * q.K));
	else
		ox_cg_line(cg, 1, "const float *wg = in1 + %s + gi * %d;", bo, q.ocb * b);
	char bias[64];
	ox_cg_snprintf(bias, sizeof bias, "in2 + gi * %d", q.ocb * b);
	ox_cg_line(cg, 1, "const float *bg = %s;", hasbias ? bias : "NULL");
	ox_cg_line(cg, 1, "float *y = out0 + bt * %s + gi * %d;", D(ox_dim_mul(g, M, q.N)), q.ocb * b);
	char args[2200], chan[64];
	ox_cg_snprintf(args, sizeof args, "a + i * %s, wg, y + i * %lld, bg, &q", q.transA ? "1" : D(K), (long long)q.N);
	ox_cg_snprintf(chan, sizeof chan, "gi * %d", q.ocb * b);
	if (ocl == q.ocb && !tail) {
		tiles(cg, 1, &E, q.rows, (long)q.N, k[0], k[1], mrt, nt, tsz, kt[0], args, chan);
	} else {
		ox_cg_line(cg, 1, "if (gi < %lld) {", (long long)(ng - 1));
		tiles(cg, 2, &E, q.rows, (long)q.N, k[0], k[1], mrt, nt, tsz, kt[0], args, chan);
		ox_cg_line(cg, 1, "} else {");
		tiles(cg, 2, &E, q.rows, (long)q.N, k[2], k[3], mrt, nt, tsz, kt[1], args, chan);
		ox_cg_line(cg, 1, "}");
	}
	return 0;
}
