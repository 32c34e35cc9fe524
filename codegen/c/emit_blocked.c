/* emit_blocked.c: C bodies for ops on channel-blocked values (opt/layout.c):
 * the convolution micro-kernels, depthwise convolution, the pools.
 *
 * The convolution is a BLIS-style micro-kernel generated for its tile
 * (ox_opt_conv_geo): `rows` output positions x `ocb` vectors of output
 * channels, rows * ocb accumulators in registers. Each step of the
 * reduction loads ocb weight vectors (packed in the order of the walk)
 * and broadcasts one input element per position, rows * ocb multiply-adds.
 * The walk is three nested loops of runtime extents and strides (input
 * channel blocks, kernel rows, kernel columns) around a run of `kc`
 * reduction rows, so one kernel serves a blocked or a plain input, any
 * kernel size, stride or dilation; the position stride and the row step
 * are literals in its name. Pads were made into a zero-bordered copy of
 * the input before the tiles run, so no kernel tests a border. The loops
 * around the kernel (output rows, tiles along them, groups of output
 * channels) are the node's parallel tasks. Kernels are emitted once per
 * shape and shared by all nodes (ox_cg_helper). Needs templates/vf.c.
 */
#include "ukernel.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

/* depthwise micro-kernel: rows positions (ar floats apart) of one channel
 * block, a vector load per position and tap */
static const char *dw_kernel(ox_cg *cg, int rows, long ar, const ox_epi *E)
{
	static char name[64];
	int b = cg->g->target->vw;
	char es[16] = "";
	if (E->body)
		ox_cg_snprintf(es, sizeof es, "_e%d", E->id);
	ox_cg_snprintf(name, sizeof name, "ox_dk%d_a%ld%s", rows, ar, es);
	ox_buf t = {0};
	ox_buf_printf(&t, "/* depthwise micro-kernel: %d positions (%ld floats apart) of one channel block */\n", rows,
		      ar);
	ox_buf_printf(&t, "OX_STATIC OX_UNUSED void %s(const float *restrict a, const float *restrict w, float *restrict y,\n"
			  "\t\tconst float *restrict bias, long kh, long kw, long rs, long cs%s)\n{\n", name,
		      E->n ? ", const float *const *e" : "");
	if (E->n)
		ox_buf_puts(&t, "\t(void)e;\n");
	ox_buf_puts(&t, "\tox_vf s0_0 = ox_vf_load(bias)");
	for (int r = 1; r < rows; r++)
		ox_buf_printf(&t, ", s%d_0 = s0_0", r);
	ox_buf_puts(&t, ";\n\tfor (long i = 0; i < kh; i++)\n");
	ox_buf_printf(&t, "\t\tfor (long j = 0; j < kw; j++, w += %d) {\n", b);
	ox_buf_puts(&t, "\t\t\tconst ox_vf v = ox_vf_load(w);\n\t\t\tconst float *p = a + i * rs + j * cs;\n");
	for (int r = 0; r < rows; r++)
		ox_buf_printf(&t, "\t\t\ts%d_0 = ox_vf_fma(ox_vf_load(p + %ld), v, s%d_0);\n", r, r * ar, r);
	ox_buf_puts(&t, "\t\t}\n");
	ox_ukshape st = {.rows = rows, .ocb = 1, .ar = ar, .ac1 = 1, .ws = b, .yr = b, .bias = 1};
	ox_uk_store(cg, &t, E, &st);
	ox_buf_puts(&t, "}\n");
	return ox_cg_kernel_text(cg, "dk", name, &t);
}

/* depthwise at one output position whose window leaves the input: the
 * taps outside are skipped (they would multiply zero pads) */
static const char *dw_edge_kernel(ox_cg *cg, const ox_epi *E)
{
	static char name[64];
	int b = cg->g->target->vw;
	char es[16] = "";
	if (E->body)
		ox_cg_snprintf(es, sizeof es, "_e%d", E->id);
	ox_cg_snprintf(name, sizeof name, "ox_dke%s", es);
	ox_buf t = {0};
	ox_buf_puts(&t, "/* depthwise at one position near a border: taps outside the input skipped */\n");
	ox_buf_printf(&t, "OX_STATIC OX_UNUSED void %s(const float *restrict x, const float *restrict w, float *restrict y,\n"
			  "\t\tconst float *restrict bias, long ih0, long iw0, long ih, long iw, long kh, long kw, long dh, "
			  "long dw%s)\n{\n", name, E->n ? ", const float *const *e" : "");
	if (E->n)
		ox_buf_puts(&t, "\t(void)e;\n");
	ox_buf_puts(&t, "\tox_vf s0_0 = ox_vf_load(bias);\n");
	ox_buf_puts(&t, "\tfor (long i = 0; i < kh; i++) {\n\t\tconst long r = ih0 + i * dh;\n"
			"\t\tif (r < 0 || r >= ih)\n\t\t\tcontinue;\n"
			"\t\tfor (long j = 0; j < kw; j++) {\n\t\t\tconst long c = iw0 + j * dw;\n"
			"\t\t\tif (c >= 0 && c < iw)\n");
	ox_buf_printf(&t, "\t\t\t\ts0_0 = ox_vf_fma(ox_vf_load(x + (r * iw + c) * %d), ox_vf_load(w + (i * kw + j) * %d), s0_0);\n",
		      b, b);
	ox_buf_puts(&t, "\t\t}\n\t}\n");
	ox_ukshape st = {.rows = 1, .ocb = 1, .ac1 = 1, .ws = b, .yr = b, .bias = 1};
	ox_uk_store(cg, &t, E, &st);
	ox_buf_puts(&t, "}\n");
	return ox_cg_kernel_text(cg, "dk", name, &t);
}

/* dims as C (ox_cg_dim: a literal when constant) and their arithmetic */
#define D(d) ox_cg_dim(cg, (d))
#define MUL(a, b) ox_dim_mul(g, (a), (b))
#define ADD(a, b) ox_dim_add(g, (a), (b))

/* The zero-bordered copy of the input into the scratch (the node's last
 * output): a region of tasks before the convolution's, a plane of IH x IW
 * positions of e floats each. */
static void padded_copy(ox_cg *cg, const ox_node *n, const ox_convgeo *q, ox_dim planes, int e)
{
	ox_graph *g = cg->g;
	const ox_dim IH = q->dIH, IW = q->dIW, IHp = ADD(IH, q->pt + q->pb), IWp = ADD(IW, q->pl + q->pr);
	ox_cg_printf(cg, "\t/* the input with its pads, zero-bordered: %s planes of %sx%s */\n",
		     ox_uk_dimtext(cg, planes), ox_uk_dimtext(cg, IHp), ox_uk_dimtext(cg, IWp));
	ox_cg_tasks_dim(cg, planes);
	ox_cg_line(cg, 1, "float *d = (float *)out%d + t * %s;", n->nout - 1, D(MUL(MUL(IHp, IWp), e)));
	ox_cg_line(cg, 1, "const float *s = in0 + t * %s;", D(MUL(MUL(IH, IW), e)));
	if (q->pt)
		ox_cg_line(cg, 1, "memset(d, 0, %s);", D(MUL(IWp, q->pt * e * 4)));
	ox_cg_line(cg, 1, "for (long h = 0; h < %s; h++) {", D(IH));
	ox_cg_line(cg, 2, "float *r = d + (h + %lld) * %s;", (long long)q->pt, D(MUL(IWp, e)));
	if (q->pl)
		ox_cg_line(cg, 2, "memset(r, 0, %lld);", (long long)(q->pl * e * 4));
	ox_cg_line(cg, 2, "memcpy(r + %lld, s + h * %s, %s);", (long long)(q->pl * e), D(MUL(IW, e)), D(MUL(IW, e * 4)));
	if (q->pr)
		ox_cg_line(cg, 2, "memset(r + %s, 0, %lld);", D(MUL(ADD(IW, q->pl), e)), (long long)(q->pr * e * 4));
	ox_cg_line(cg, 1, "}");
	if (q->pb)
		ox_cg_line(cg, 1, "memset(d + %s, 0, %s);", D(MUL(MUL(ADD(IH, q->pt), IWp), e)),
			   D(MUL(IWp, q->pb * e * 4)));
}

/* the tiles of [p0, p1): ox_uk_loop, or with a run-time extent (prt)
 * ox_uk_loop_rt with the tail kernels kt of sizes tsz */
static void tiles(ox_cg *cg, int lvl, const ox_epi *E, int rows, int b, const char *kf, const char *ktail, int prt,
		  int nt, const int *tsz, char (*kt)[96], const char *args, const char *chan)
{
	if (prt)
		ox_uk_loop_rt(cg, lvl, E, rows, b, kf, nt, tsz, kt, args, chan);
	else
		ox_uk_loop(cg, lvl, E, rows, b, kf, ktail, args, chan);
}

int ox_cg_emit_conv_blocked(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (ox_in(g, n, 1)->layout == OX_L_WINOW)
		return ox_cg_emit_conv_wino(cg, g, n);
	ox_convgeo q;
	if (ox_opt_conv_geo(g, n, &q))
		return ox_error(g, n, "the blocked Conv's geometry is not supported");
	const ox_value *w = ox_in(g, n, 1);
	if (q.depthwise ? w->layout != OX_L_DWW
			: w->layout != OX_L_CONVW || w->lp[1] != q.ocb || w->lp[2] != (q.inblocked ? q.b : 0))
		ox_die("codegen: Conv '%s': weights not packed for its tile", n->name);
	ox_epi E;
	if (ox_uk_epi(cg, g, n, &E))
		return -1;
	ox_uk_use(cg);
	const int b = q.b, e = q.inblocked ? b : 1;
	const int64_t cb = (q.C + b - 1) / b, mv = (q.M + b - 1) / b;
	/* batch and image sizes as dims (run-time ones over ox_d[]; the int64
	 * fields of q hold their tops, which the tile was chosen for) */
	const ox_dim N = q.dN, IH = q.dIH, IW = q.dIW, OH = q.dOH, OW = q.dOW;
	const ox_dim planes = MUL(N, q.inblocked ? cb : q.C);
	const ox_dim ih = q.copy ? ADD(IH, q.pt + q.pb) : IH, iw = q.copy ? ADD(IW, q.pl + q.pr) : IW;
	/* the image's sizes are run-time: walks in non-static geometry structs */
	const int hwrt = ox_dim_is_rt(g, IH) || ox_dim_is_rt(g, IW) || ox_dim_is_rt(g, OH) || ox_dim_is_rt(g, OW);
	const char *geo_static = hwrt ? "" : "static ";
	ox_cg_printf(cg, "\t/* Conv %lldx%lld%s, stride %lldx%lld, dilation %lldx%lld, pads %lld,",
		     (long long)q.KH, (long long)q.KW, q.depthwise ? " depthwise" : "", (long long)q.SH,
		     (long long)q.SW, (long long)q.DH, (long long)q.DW, (long long)q.pt);
	ox_cg_printf(cg, "%lld,%lld,%lld: ",
		     (long long)q.pl, (long long)q.pb, (long long)q.pr);
	ox_cg_printf(cg, "[%s,%lld,%s,%s] %s -> [%s,%lld,%s,",
		     ox_uk_dimtext(cg, N), (long long)q.C, ox_uk_dimtext(cg, IH), ox_uk_dimtext(cg, IW),
		     q.inblocked ? "blocked" : "plain", ox_uk_dimtext(cg, N), (long long)q.M, ox_uk_dimtext(cg, OH));
	ox_cg_printf(cg, "%s] blocked by %d;\n"
			 "\t * tiles of %d positions x %d vectors of %d output channels%s */\n",
		     ox_uk_dimtext(cg, OW), b, q.rows, q.depthwise ? 1 : q.ocb, b, E.body ? "; epilogue fused" : "");
	if (q.copy)
		padded_copy(cg, n, &q, planes, e);
	const char *X = q.copy ? "xs" : "in0";
	const ox_dim xn = MUL(MUL(ih, iw), q.inblocked ? cb * b : q.C); /* floats per image */
	const ox_dim osz = MUL(OH, OW);
	char args[4096], chan[64];
	int tsz[OX_UK_MAXTAILS];

	if (q.depthwise) {
		/* the input as it is: rows and columns whose window leaves it go
		 * through the edge kernel, the others through the tiles; with a
		 * run-time width (wrt) those columns are computed when it runs */
		long ar = (long)(q.SW * b);
		const int wrt = ox_dim_is_rt(g, IW) || ox_dim_is_rt(g, OW);
		int64_t lo = (q.pl + q.SW - 1) / q.SW, hi = 0, span = 0;
		int rows = q.rows, tail = 0, nt = 0;
		if (!wrt) {
			hi = (q.IW - 1 - (q.KW - 1) * q.DW + q.pl) / q.SW + 1;
			if (q.IW - 1 - (q.KW - 1) * q.DW + q.pl < 0)
				hi = 0;
			if (hi > q.OW)
				hi = q.OW;
			if (lo > hi)
				lo = hi;
			span = hi - lo;
			rows = q.rows < span ? q.rows : (int)(span > 0 ? span : 1);
			tail = span > 0 ? (int)(span % rows) : 0;
		} else {
			nt = ox_uk_tails(rows, tsz);
		}
		char kn[64], ktn[64], ke[64], kt[OX_UK_MAXTAILS][96]; /* the kernel names are static buffers */
		ox_cg_snprintf(kn, sizeof kn, "%s", dw_kernel(cg, rows, ar, &E));
		ox_cg_snprintf(ktn, sizeof ktn, "%s", tail ? dw_kernel(cg, tail, ar, &E) : "");
		for (int j = 0; j < nt; j++)
			ox_cg_snprintf(kt[j], sizeof kt[j], "%s", dw_kernel(cg, tsz[j], ar, &E));
		ox_cg_snprintf(ke, sizeof ke, "%s", dw_edge_kernel(cg, &E));
		ox_cg_tasks_dim(cg, MUL(MUL(N, cb), OH));
		ox_cg_line(cg, 1, "const long c = t / %s, oh = t %% %s; /* image x channel block, output row */", D(OH),
			   D(OH));
		ox_cg_line(cg, 1, "const long ih0 = oh * %lld - %lld;", (long long)q.SH, (long long)q.pt);
		ox_cg_line(cg, 1, "const float *x = in0 + c * %s;", D(MUL(MUL(IH, IW), b)));
		ox_cg_line(cg, 1, "const float *wc = in1 + (c %% %lld) * %lld, *bc = in2 + (c %% %lld) * %d;", (long long)cb,
			   (long long)(q.KH * q.KW * b), (long long)cb, b);
		ox_cg_line(cg, 1, "float *y = out0 + (c * %s + oh * %s) * %d;", D(osz), D(OW), b);
		ox_cg_snprintf(chan, sizeof chan, "(c %% %lld) * %d", (long long)cb, b);
		ox_cg_snprintf(args, sizeof args, "x, wc, y + i * %d, bc, ih0, i * %lld - %lld, %s, %s, %lld, %lld, %lld, ",
			 b, (long long)q.SW, (long long)q.pl, D(IH), D(IW), (long long)q.KH, (long long)q.KW,
			 (long long)q.DH);
		ox_cg_snappend(args, sizeof args, "%lld",
			 (long long)q.DW);
		ox_cg_line(cg, 1, "if (ih0 < 0 || ih0 + %lld >= %s) {", (long long)((q.KH - 1) * q.DH), D(IH));
		ox_cg_line(cg, 2, "for (long i = 0; i < %s; i++) {", D(OW));
		ox_uk_call(cg, 3, &E, b, ke, args, chan);
		ox_cg_line(cg, 2, "}");
		ox_cg_line(cg, 2, "continue;");
		ox_cg_line(cg, 1, "}");
		if (wrt) {
			/* [p0, p1): the columns whose window is inside the input */
			int64_t c1 = q.pl - 1 - (q.KW - 1) * q.DW;
			ox_cg_line(cg, 1, "const long hx = %s %c %lld;", D(IW), c1 < 0 ? '-' : '+',
				   (long long)(c1 < 0 ? -c1 : c1));
			ox_cg_line(cg, 1, "long p1 = hx < 0 ? 0 : hx / %lld + 1;", (long long)q.SW);
			ox_cg_line(cg, 1, "if (p1 > %s)", D(OW));
			ox_cg_line(cg, 2, "p1 = %s;", D(OW));
			ox_cg_line(cg, 1, "const long p0 = %lld < p1 ? %lld : p1;", (long long)lo, (long long)lo);
			ox_cg_line(cg, 1, "for (long i = 0; i < %s; i++) {", D(OW));
			ox_cg_line(cg, 2, "if (i == p0)");
			ox_cg_line(cg, 3, "i = p1;");
			ox_cg_line(cg, 2, "if (i >= %s)", D(OW));
			ox_cg_line(cg, 3, "break;");
			ox_uk_call(cg, 2, &E, b, ke, args, chan);
			ox_cg_line(cg, 1, "}");
			ox_cg_line(cg, 1, "const float *a = x + (ih0 * %s - %lld) * %d;", D(IW), (long long)q.pl, b);
			ox_cg_snprintf(args, sizeof args, "a + i * %ld, wc, y + i * %d, bc, %lld, %lld, %s, %lld", ar, b,
				 (long long)q.KH, (long long)q.KW, D(MUL(IW, q.DH * b)), (long long)(q.DW * b));
			ox_uk_loop_rt(cg, 1, &E, rows, b, kn, nt, tsz, kt, args, chan);
			return 0;
		}
		if (lo > 0 || hi < q.OW) {
			ox_cg_line(cg, 1, "for (long i = 0; i < %s; i++) {", D(OW));
			ox_cg_line(cg, 2, "if (i == %lld)", (long long)lo);
			ox_cg_line(cg, 3, "i = %lld;", (long long)hi);
			ox_cg_line(cg, 2, "if (i >= %s)", D(OW));
			ox_cg_line(cg, 3, "break;");
			ox_uk_call(cg, 2, &E, b, ke, args, chan);
			ox_cg_line(cg, 1, "}");
		}
		if (span > 0) {
			ox_cg_line(cg, 1, "const float *a = x + (ih0 * %s - %lld) * %d;", D(IW), (long long)q.pl, b);
			ox_cg_line(cg, 1, "const long p0 = %lld, p1 = %lld;", (long long)lo, (long long)hi);
			ox_cg_snprintf(args, sizeof args, "a + i * %ld, wc, y + i * %d, bc, %lld, %lld, %s, %lld", ar, b,
				 (long long)q.KH, (long long)q.KW, D(MUL(IW, q.DH * b)), (long long)(q.DW * b));
			ox_uk_loop(cg, 1, &E, rows, b, kn, ktn, args, chan);
		}
		return 0;
	}

	/* group 1: tasks are (image, group of ocb output vectors, rows) */
	const int64_t ng = (mv + q.ocb - 1) / q.ocb, ocl = mv - (ng - 1) * q.ocb; /* the last group's width */
	const long ar = (long)(q.flat ? e : q.SW * e);
	const int64_t p = q.flat ? q.OH * q.OW : q.OW; /* positions a task row covers (at the top) */
	/* a run-time count of them: tiles of any size at the end (ox_uk_loop_rt) */
	const int prt = q.flat ? ox_dim_is_rt(g, osz) : ox_dim_is_rt(g, OW);
	/* span > 1 (constant sizes): a unit of work is span output rows, one tile */
	const ox_dim nunit = q.span > 1 ? (q.OH + q.span - 1) / q.span : OH;
	const int lastspan = q.span > 1 ? (int)(q.OH - (nunit - 1) * q.span) : 0;
	const int tail = prt ? 0 : q.span > 1 ? (lastspan < q.span ? lastspan * (int)q.OW : 0) : (int)(p % q.rows);
	const int nt = prt ? ox_uk_tails(q.rows, tsz) : 0;
	const int rw = q.span > 1 ? (int)q.OW : 0;
	const long rs = (long)(q.SH * ox_opt_top(g, iw) * e); /* read by the kernel only when rw > 0 */
	/* weights past L2 stream from memory: prefetch a group ahead */
	const int64_t gstride = (int64_t)q.ocb * b * q.C * q.KH * q.KW;
	const int pf = mv * b * q.C * q.KH * q.KW * 4 > (1 << 20);
	char k[4][96]; /* [full group, last group] x [full tile, tail tile] */
	char kt[2][OX_UK_MAXTAILS][96]; /* with prt: [full group, last group] x the tails */
	for (int j = 0; j < 4; j++) {
		ox_ukshape us = {.rows = j & 1 ? tail : q.rows, .ocb = j & 2 ? (int)ocl : q.ocb, .ar = ar,
				 .rw = rw, .rs = rs, .ac1 = q.inblocked, .yr = b, .bias = 1, .pf = pf};
		us.ws = (long)us.ocb * b;
		ox_cg_snprintf(k[j], sizeof k[j], "%s", us.rows ? ox_uk_kernel(cg, &us, &E) : "");
		for (int t = 0; t < nt && !(j & 1) && (!(j & 2) || ocl != q.ocb); t++) {
			us.rows = tsz[t];
			ox_cg_snprintf(kt[j / 2][t], sizeof kt[j / 2][t], "%s", ox_uk_kernel(cg, &us, &E));
		}
	}
	/* A group's weights past a quarter of L2 stream from memory for every
	 * row task: instead a task is a whole group, its reduction cut into
	 * chunks of input blocks that stay in L2 while every row uses them
	 * (the sums go to y between chunks; the epilogue runs on the last). */
	const int64_t taps = q.KH * q.KW, kb = q.kb;
	if (kb) {
		const int64_t nch = (cb + kb - 1) / kb, lastkb = cb - (nch - 1) * kb;
		static const ox_epi none;
		/* kernels: [phase: first, middle, last][group: full, last][tile: full, tail] */
		char kk[3][4][96], kkt[3][2][OX_UK_MAXTAILS][96];
		for (int ph = 0; ph < 3; ph++)
			for (int j = 0; j < 4; j++) {
				ox_ukshape us = {.rows = j & 1 ? tail : q.rows, .ocb = j & 2 ? (int)ocl : q.ocb, .ar = ar,
						 .rw = rw, .rs = rs, .ac1 = 1, .yr = b, .bias = 1, .pf = 1, .acc = ph > 0,
						 .raw = ph < 2};
				us.ws = (long)us.ocb * b;
				ox_cg_snprintf(kk[ph][j], sizeof kk[ph][j], "%s", us.rows ? ox_uk_kernel(cg, &us, ph < 2 ? &none : &E) : "");
				for (int t = 0; t < nt && !(j & 1) && (!(j & 2) || ocl != q.ocb); t++) {
					us.rows = tsz[t];
					ox_cg_snprintf(kkt[ph][j / 2][t], sizeof kkt[ph][j / 2][t], "%s",
						 ox_uk_kernel(cg, &us, ph < 2 ? &none : &E));
				}
			}
		ox_cg_tasks_dim(cg, MUL(N, ng));
		if (q.copy)
			ox_cg_line(cg, 1, "const float *xs = (const float *)out%d;", n->nout - 1);
		for (int l = 0; l < 2; l++) {
			ox_cg_lstart(cg, 1, "%sconst ox_ukgeo q%d = {%lld, %s, %lld, %s, %lld, %lld, ",
				   geo_static, l, (long long)(l ? lastkb : kb), D(MUL(MUL(ih, iw), b)), (long long)q.KH,
				   D(MUL(iw, q.DH * b)), (long long)q.KW, (long long)(q.DW * b));
			ox_cg_printf(cg, "%d, %lld, 1, %s, %lld};\n",
				   b, (long long)(l ? q.C - (cb - 1) * b : b), D(MUL(osz, b)),
				   (long long)(kb * taps * b * q.ocb * b));
		} /* prefetch: the next chunk */
		ox_cg_line(cg, 1, "const long gi = t %% %lld, ni = t / %lld;", (long long)ng, (long long)ng);
		ox_cg_line(cg, 1, "const long gw = gi < %lld ? %d : %lld; /* the group's width in floats */", (long long)(ng - 1),
			   q.ocb * b, (long long)(ocl * b));
		ox_cg_line(cg, 1, "const float *bg = in2 + gi * %d;", q.ocb * b);
		ox_cg_line(cg, 1, "for (long ch = 0; ch < %lld; ch++) {", (long long)nch);
		ox_cg_line(cg, 2, "const ox_ukgeo *qc = ch < %lld ? &q0 : &q1;", (long long)(nch - 1));
		ox_cg_line(cg, 2, "const float *wg = in1 + gi * %lld + ch * %lld * gw;", (long long)gstride,
			   (long long)(kb * taps * b));
		ox_cg_line(cg, 2, "const float *ac = %s + ni * %s + ch * %s;", X, D(xn), D(MUL(MUL(ih, iw), kb * b)));
		ox_cg_line(cg, 2, "for (long r = 0; r < %s; r++) {", D(q.flat ? 1 : nunit));
		if (q.flat) {
			ox_cg_line(cg, 3, "const long p0 = 0, p1 = %s;", D(osz));
			ox_cg_line(cg, 3, "const float *a = ac;");
			ox_cg_line(cg, 3, "float *y = out0 + (ni * %lld + gi * %d) * %s;", (long long)mv, q.ocb, D(MUL(osz, b)));
		} else {
			if (q.span > 1)
				ox_cg_line(cg, 3, "const long p0 = 0, p1 = r < %lld ? %lld : %lld; /* %d rows a tile */",
					   (long long)(nunit - 1), (long long)(q.span * q.OW), (long long)(lastspan * q.OW), q.span);
			else
				ox_cg_line(cg, 3, "const long p0 = 0, p1 = %s;", D(OW));
			ox_cg_line(cg, 3, "const float *a = ac + r * %s;", D(MUL(iw, q.span * q.SH * b)));
			ox_cg_line(cg, 3, "float *y = out0 + ((ni * %lld + gi * %d) * %s + r * %s) * %d;", (long long)mv,
				   q.ocb, D(osz), D(MUL(OW, q.span)), b);
		}
		ox_cg_snprintf(args, sizeof args, "a + i * %ld, wg, y + i * %d, bg, qc", ar, b);
		ox_cg_snprintf(chan, sizeof chan, "gi * %d", q.ocb * b);
		for (int ph = 0; ph < 3; ph++) {
			if (nch == 1 && ph < 2)
				continue;
			if (nch > 1)
				ox_cg_line(cg, 3, ph == 0 ? "if (ch == 0) {" : ph == 1 ? "} else if (ch < %lld) {" : "} else {",
					   (long long)(nch - 1));
			int lvl = nch > 1 ? 4 : 3;
			const ox_epi *pe = ph < 2 ? &none : &E;
			if (ocl == q.ocb) {
				tiles(cg, lvl, pe, q.rows, b, kk[ph][0], kk[ph][1], prt, nt, tsz, kkt[ph][0], args, chan);
			} else {
				ox_cg_line(cg, lvl, "if (gi < %lld) {", (long long)(ng - 1));
				tiles(cg, lvl + 1, pe, q.rows, b, kk[ph][0], kk[ph][1], prt, nt, tsz, kkt[ph][0], args, chan);
				ox_cg_line(cg, lvl, "} else {");
				tiles(cg, lvl + 1, pe, q.rows, b, kk[ph][2], kk[ph][3], prt, nt, tsz, kkt[ph][1], args, chan);
				ox_cg_line(cg, lvl, "}");
			}
		}
		if (nch > 1)
			ox_cg_line(cg, 3, "}");
		ox_cg_line(cg, 2, "}");
		ox_cg_line(cg, 1, "}");
		return 0;
	}

	/* a flat task covers about an output row's worth of tiles (of the
	 * top's rows when the image size is run-time) */
	const int64_t per = q.flat ? ((q.OW + q.rows - 1) / q.rows) * q.rows : p;
	const ox_dim nrow = q.flat ? ox_dim_ceildiv(g, osz, per) : nunit;
	ox_cg_tasks_dim(cg, MUL(MUL(N, ng), nrow));
	if (q.copy)
		ox_cg_line(cg, 1, "const float *xs = (const float *)out%d;", n->nout - 1);
	if (q.inblocked) {
		ox_cg_lstart(cg, 1, "%sconst ox_ukgeo q = {%lld, %s, %lld, %s, %lld, %lld, %d, ",
			   geo_static, (long long)cb, D(MUL(MUL(ih, iw), b)), (long long)q.KH, D(MUL(iw, q.DH * b)),
			   (long long)q.KW, (long long)(q.DW * b), b);
		ox_cg_printf(cg, "%lld, 1, %s, %lld};\n",
			   (long long)(q.C - (cb - 1) * b), D(MUL(osz, b)), (long long)(pf ? gstride : 0));
	} else {
		ox_cg_lstart(cg, 1, "%sconst ox_ukgeo q = {1, 0, %lld, %s, %lld, %lld, %lld, %lld, %s, ",
			   geo_static, (long long)q.KH, D(MUL(iw, q.DH)), (long long)q.KW, (long long)q.DW,
			   (long long)q.C, (long long)q.C, D(MUL(ih, iw)));
		ox_cg_printf(cg, "%s, %lld};\n",
			   D(MUL(osz, b)), (long long)(pf ? gstride : 0));
	}
	ox_cg_line(cg, 1, "const long r = t %% %s, gi = t / %s %% %lld, ni = t / %s;", D(nrow), D(nrow), (long long)ng,
		   D(MUL(nrow, ng)));
	ox_cg_line(cg, 1, "const float *wg = in1 + gi * %lld, *bg = in2 + gi * %d;",
		   (long long)(q.ocb * b * q.C * q.KH * q.KW), q.ocb * b);
	if (q.flat) {
		ox_cg_line(cg, 1, "const long p0 = r * %lld, p1 = p0 + %lld < %s ? p0 + %lld : %s;", (long long)per,
			   (long long)per, D(osz), (long long)per, D(osz));
		ox_cg_line(cg, 1, "const float *a = %s + ni * %s;", X, D(xn));
		ox_cg_line(cg, 1, "float *y = out0 + (ni * %lld + gi * %d) * %s;", (long long)mv, q.ocb, D(MUL(osz, b)));
	} else {
		if (q.span > 1)
			ox_cg_line(cg, 1, "const long p0 = 0, p1 = r < %lld ? %lld : %lld; /* %d rows a tile */",
				   (long long)(nunit - 1), (long long)(q.span * q.OW), (long long)(lastspan * q.OW), q.span);
		else
			ox_cg_line(cg, 1, "const long p0 = 0, p1 = %s;", D(OW));
		ox_cg_line(cg, 1, "const float *a = %s + ni * %s + r * %s;", X, D(xn), D(MUL(iw, q.span * q.SH * e)));
		ox_cg_line(cg, 1, "float *y = out0 + ((ni * %lld + gi * %d) * %s + r * %s) * %d;", (long long)mv,
			   q.ocb, D(osz), D(MUL(OW, q.span)), b);
	}
	ox_cg_snprintf(args, sizeof args, "a + i * %ld, wg, y + i * %d, bg, &q", ar, b);
	ox_cg_snprintf(chan, sizeof chan, "gi * %d", q.ocb * b);
	if (ocl == q.ocb) {
		tiles(cg, 1, &E, q.rows, b, k[0], k[1], prt, nt, tsz, kt[0], args, chan);
	} else {
		ox_cg_line(cg, 1, "if (gi < %lld) {", (long long)(ng - 1));
		tiles(cg, 2, &E, q.rows, b, k[0], k[1], prt, nt, tsz, kt[0], args, chan);
		ox_cg_line(cg, 1, "} else {");
		tiles(cg, 2, &E, q.rows, b, k[2], k[3], prt, nt, tsz, kt[1], args, chan);
		ox_cg_line(cg, 1, "}");
	}
	return 0;
}

/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on blocked values:
 * a task per image x channel block (x output row), a vector per output
 * position; windows are clipped to the input (pads are not materialized).
 * A NaN in a max window stays; averages divide as templates/avgpool.c. */
int ox_cg_emit_pool_blocked(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int b = y->lp[0];
	/* N, H, W may be run-time dims (their tops for the window's clipping
	 * decisions, which are then made when the program runs) */
	const ox_dim N = x->shape.d[0], IH = x->shape.d[2], IW = x->shape.d[3], OH = y->shape.d[2], OW = y->shape.d[3];
	int64_t C = x->shape.d[1], cb = (C + b - 1) / b;
	int ismax = n->op == OX_OP_MaxPool || n->op == OX_OP_GlobalMaxPool;
	ox_cg_use_vf(cg);
	if (n->op == OX_OP_GlobalAveragePool || n->op == OX_OP_GlobalMaxPool) {
		const ox_dim hw = MUL(IH, IW);
		ox_cg_printf(cg, "\t/* %s of [%s,%lld,%s,%s] blocked by %d: a vector per channel block */\n",
			     n->optype, ox_uk_dimtext(cg, N), (long long)C, ox_uk_dimtext(cg, IH), ox_uk_dimtext(cg, IW), b);
		ox_cg_tasks_dim(cg, MUL(N, cb));
		ox_cg_line(cg, 1, "const float *p = in0 + t * %s;", D(MUL(hw, b)));
		if (ismax) {
			ox_cg_line(cg, 1, "ox_vf m = ox_vf_load(p);");
			ox_cg_line(cg, 1, "for (long i = 1; i < %s; i++) {", D(hw));
			ox_cg_line(cg, 2, "const ox_vf v = ox_vf_load(p + i * %d);", b);
			ox_cg_line(cg, 2, "m = ox_vf_select(ox_vm_or(ox_vf_gt(v, m), ox_vm_not(ox_vf_eq(v, v))), v, m);");
			ox_cg_line(cg, 1, "}");
			ox_cg_line(cg, 1, "ox_vf_store(out0 + t * %d, m);", b);
		} else {
			/* four partial sums: shorter chains, a little less rounding */
			ox_cg_line(cg, 1, "ox_vf s0 = ox_vf_zero(), s1 = s0, s2 = s0, s3 = s0;");
			ox_cg_line(cg, 1, "long i = 0;");
			ox_cg_line(cg, 1, "for (; i + 4 <= %s; i += 4) {", D(hw));
			for (int k = 0; k < 4; k++)
				ox_cg_line(cg, 2, "s%d = ox_vf_add(s%d, ox_vf_load(p + (i + %d) * %d));", k, k, k, b);
			ox_cg_line(cg, 1, "}");
			ox_cg_line(cg, 1, "for (; i < %s; i++)", D(hw));
			ox_cg_line(cg, 2, "s0 = ox_vf_add(s0, ox_vf_load(p + i * %d));", b);
			/* 1 / (H W) rounded once to float, as the literal of a constant size */
			char inv[2200];
			if (ox_dim_is_rt(g, hw))
				ox_cg_snprintf(inv, sizeof inv, "(float)(1.0 / (double)%s)", D(hw));
			else
				ox_cg_snprintf(inv, sizeof inv, "%s", ox_cg_lit(OX_F32, 1.0 / (double)ox_dim_eval(g, hw)));
			ox_cg_line(cg, 1, "ox_vf_store(out0 + t * %d, ox_vf_mul(ox_vf_add(ox_vf_add(s0, s1), ox_vf_add(s2, s3)), "
				   "ox_vf_set1(%s)));", b, inv);
		}
		return 0;
	}
	int64_t k[2], s[2], d[2], pads[4], in[2] = {ox_opt_top(g, IH), ox_opt_top(g, IW)};
	int64_t out[2] = {ox_opt_top(g, OH), ox_opt_top(g, OW)};
	int ap;
	if (ox_ir_nn_window(g, n, 2, NULL, k, s, d, pads, &ap))
		return -1;
	ox_ir_nn_same_pads(ap, 2, in, out, k, s, d, pads); /* (SAME: constant sizes, opt/layout.c) */
	int incl = !ismax && ox_attr_int(n, "count_include_pad", 0);
	ox_cg_printf(cg, "\t/* %s %lldx%lld, stride %lldx%lld, pads %lld,%lld,%lld,",
		     n->optype, (long long)k[0], (long long)k[1], (long long)s[0], (long long)s[1], (long long)pads[0],
		     (long long)pads[1], (long long)pads[2]);
	ox_cg_printf(cg, "%lld%s: [%s,%lld,%s,%s] -> ",
		     (long long)pads[3], incl ? ", pads counted" : "", ox_uk_dimtext(cg, N), (long long)C,
		     ox_uk_dimtext(cg, IH), ox_uk_dimtext(cg, IW));
	ox_cg_printf(cg, "%sx%s, blocked by %d */\n",
		     ox_uk_dimtext(cg, OH), ox_uk_dimtext(cg, OW), b);
	ox_cg_tasks_dim(cg, MUL(MUL(N, cb), OH));
	ox_cg_line(cg, 1, "const long c = t / %s, oh = t %% %s;", D(OH), D(OH));
	ox_cg_line(cg, 1, "const float *xc = in0 + c * %s;", D(MUL(MUL(IH, IW), b)));
	ox_cg_line(cg, 1, "float *yr = out0 + (c * %s + oh) * %s;", D(OH), D(MUL(OW, b)));
	ox_cg_line(cg, 1, "const long h0 = oh * %lld - %lld;", (long long)s[0], (long long)pads[0]);
	/* [lo, hi): output columns whose window is inside the input; on rows
	 * whose window is inside too, those take a loop without tests (with a
	 * run-time width, hi is computed when the program runs) */
	const int wrt = ox_dim_is_rt(g, IW) || ox_dim_is_rt(g, OW);
	int64_t lo = (pads[1] + s[1] - 1) / s[1], hi = 0;
	char his[160];
	if (!wrt) {
		hi = (in[1] - 1 - (k[1] - 1) * d[1] + pads[1]) / s[1] + 1;
		if (in[1] - 1 - (k[1] - 1) * d[1] + pads[1] < 0)
			hi = 0;
		hi = hi > out[1] ? out[1] : hi;
		lo = lo > hi ? hi : lo;
		ox_cg_snprintf(his, sizeof his, "%lld", (long long)hi);
	} else {
		int64_t c1 = pads[1] - 1 - (k[1] - 1) * d[1];
		ox_cg_line(cg, 1, "const long hx = %s %c %lld;", D(IW), c1 < 0 ? '-' : '+', (long long)(c1 < 0 ? -c1 : c1));
		ox_cg_line(cg, 1, "long hi = hx < 0 ? 0 : hx / %lld + 1;", (long long)s[1]);
		ox_cg_line(cg, 1, "if (hi > %s)", D(OW));
		ox_cg_line(cg, 2, "hi = %s;", D(OW));
		ox_cg_line(cg, 1, "const long lo = %lld < hi ? %lld : hi;", (long long)lo, (long long)lo);
		ox_cg_snprintf(his, sizeof his, "hi");
	}
	ox_cg_line(cg, 1, "for (long ow = 0; ow < %s; ow++) {", D(OW));
	if (wrt || hi > lo) {
		if (wrt)
			ox_cg_line(cg, 2, "if (ow == lo && lo < hi && h0 >= 0 && h0 + %lld < %s) {", (long long)((k[0] - 1) * d[0]),
				   D(IH));
		else
			ox_cg_line(cg, 2, "if (ow == %lld && h0 >= 0 && h0 + %lld < %s) {", (long long)lo,
				   (long long)((k[0] - 1) * d[0]), D(IH));
		ox_cg_line(cg, 3, "for (; ow < %s; ow++) {", his);
		ox_cg_line(cg, 4, "const float *p = xc + (h0 * %s + ow * %lld - %lld) * %d;", D(IW), (long long)s[1],
			   (long long)pads[1], b);
		ox_cg_line(cg, 4, "ox_vf m = ox_vf_load(p);");
		ox_cg_line(cg, 4, "for (long i = 0; i < %lld; i++)", (long long)k[0]);
		ox_cg_line(cg, 5, "for (long j = i ? 0 : 1; j < %lld; j++) {", (long long)k[1]);
		ox_cg_line(cg, 6, "const ox_vf v = ox_vf_load(p + (i * %s + j * %lld) * %d);", D(MUL(IW, d[0])),
			   (long long)d[1], b);
		if (ismax)
			ox_cg_line(cg, 6, "m = ox_vf_select(ox_vm_or(ox_vf_gt(v, m), ox_vm_not(ox_vf_eq(v, v))), v, m);");
		else
			ox_cg_line(cg, 6, "m = ox_vf_add(m, v);");
		ox_cg_line(cg, 5, "}");
		if (ismax)
			ox_cg_line(cg, 4, "ox_vf_store(yr + ow * %d, m);", b);
		else
			ox_cg_line(cg, 4, "ox_vf_store(yr + ow * %d, ox_vf_div(m, ox_vf_set1(%s)));", b,
				   ox_cg_lit(OX_F32, (double)(k[0] * k[1])));
		ox_cg_line(cg, 3, "}");
		ox_cg_line(cg, 3, "if (ow >= %s)", D(OW));
		ox_cg_line(cg, 4, "break;");
		ox_cg_line(cg, 2, "}");
	}
	ox_cg_line(cg, 2, "const long w0 = ow * %lld - %lld;", (long long)s[1], (long long)pads[1]);
	ox_cg_line(cg, 2, ismax ? "ox_vf m = ox_vf_set1(-INFINITY);" : "ox_vf m = ox_vf_zero();");
	if (!ismax) {
		/* taps inside the input, or with incl inside the padded extent */
		ox_cg_line(cg, 2, "long nh = 0, nw = 0;");
		ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (long long)k[0]);
		ox_cg_line(cg, 3, "const long ih = h0 + i * %lld;", (long long)d[0]);
		if (incl)
			ox_cg_line(cg, 3, "nh += ih >= %lld && ih < %s;", (long long)-pads[0], D(ADD(IH, pads[2])));
		else
			ox_cg_line(cg, 3, "nh += ih >= 0 && ih < %s;", D(IH));
		ox_cg_line(cg, 2, "}");
		ox_cg_line(cg, 2, "for (long j = 0; j < %lld; j++) {", (long long)k[1]);
		ox_cg_line(cg, 3, "const long iw = w0 + j * %lld;", (long long)d[1]);
		if (incl)
			ox_cg_line(cg, 3, "nw += iw >= %lld && iw < %s;", (long long)-pads[1], D(ADD(IW, pads[3])));
		else
			ox_cg_line(cg, 3, "nw += iw >= 0 && iw < %s;", D(IW));
		ox_cg_line(cg, 2, "}");
	}
	ox_cg_line(cg, 2, "for (long i = 0; i < %lld; i++) {", (long long)k[0]);
	ox_cg_line(cg, 3, "const long ih = h0 + i * %lld;", (long long)d[0]);
	ox_cg_line(cg, 3, "if (ih < 0 || ih >= %s)", D(IH));
	ox_cg_line(cg, 4, "continue;");
	ox_cg_line(cg, 3, "for (long j = 0; j < %lld; j++) {", (long long)k[1]);
	ox_cg_line(cg, 4, "const long iw = w0 + j * %lld;", (long long)d[1]);
	ox_cg_line(cg, 4, "if (iw < 0 || iw >= %s)", D(IW));
	ox_cg_line(cg, 5, "continue;");
	ox_cg_line(cg, 4, "const ox_vf v = ox_vf_load(xc + (ih * %s + iw) * %d);", D(IW), b);
	if (ismax)
		ox_cg_line(cg, 4, "m = ox_vf_select(ox_vm_or(ox_vf_gt(v, m), ox_vm_not(ox_vf_eq(v, v))), v, m);");
	else
		ox_cg_line(cg, 4, "m = ox_vf_add(m, v);");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	if (ismax)
		ox_cg_line(cg, 2, "ox_vf_store(yr + ow * %d, m);", b);
	else /* an empty window divides 0 by 0: NaN, as the reference gives */
		ox_cg_line(cg, 2, "ox_vf_store(yr + ow * %d, ox_vf_div(m, ox_vf_set1((float)(nh * nw))));", b);
	ox_cg_line(cg, 1, "}");
	return 0;
}
