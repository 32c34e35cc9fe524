/* cuda_nhwc.c: the CUDA kernels of NHWC values (--target cuda; opt/layout.c
 * makes Conv chains NHWC on the GPU: OX_L_BLOCKED with one block of all C
 * channels, [N][1][H][W][C]).
 *
 * - Conv, group 1: implicit GEMM per image on ox_cu_tile_loop's tiles,
 *   [P x K] windows x [K x O] weights, the reduction k = (kh, kw, c) with
 *   the channels innermost (the weights repacked [KH][KW][C][Op] by the
 *   layout pass, O rounded up to 4): a tile's loads of A run along an input
 *   pixel's channels, its loads of B and its stores along the output
 *   channels. An input's channels may be padded (C of Cp, lanes past C
 *   zero: the layout pass's gpu_pad): the reduction then runs over Cp
 *   channels a tap, the rows of B past C read as zero. An image of 1 to 3
 *   channels is read in place, NCHW (x plain: gpu_plain_images), a channel
 *   plane's element a load. A 1x1 stride-1 Conv is a plain GEMM [P x Cp] x
 *   [Cp x O]; a depthwise Conv it reads may be computed as it loads A
 *   (ox_dw, opt/dwpw.c). Split-K as the NCHW kernel's; a run-time batch
 *   (the grid's from the run's) without.
 * - Conv, depthwise; MaxPool: a thread per output, channels fastest (the
 *   weights [KH][KW][C]): ox_cu_emit_window, codegen/cuda/cuda_tile.c's for
 *   both layouts.
 * - GlobalAveragePool, GlobalMaxPool: blocks of 32 channels by 8 rows of
 *   pixels (neighbouring threads, neighbouring channels), the pixels split
 *   over blocks where few channels would leave the GPU idle.
 * - onnxcc::Reorder: NCHW <-> blocked by any b (the lanes past C written
 *   as zero).
 * Concat over the channels and the fused elementwise bodies read NHWC in
 * codegen/cuda/cuda_index.c, cuda_map.c (emit_concat, emit_fusedew: the values' physical
 * dims, ox_cu_phys).
 */
#include "cuda_kernels.h"
#include "../../ir/family.h"
#include "../../opt/opt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nhwc(const ox_value *v)
{
	return v && v->layout == OX_L_BLOCKED && v->shape.rank == 4 && v->lp[0] == v->shape.d[1];
}

/* an NHWC Conv input, its channels maybe rounded up to lp[0] (opt/layout.c's
 * gpu_pad) */
static int nhwc_in(const ox_value *v)
{
	return v && v->layout == OX_L_BLOCKED && v->shape.rank == 4 && v->lp[0] >= v->shape.d[1] &&
	       v->lp[0] < v->shape.d[1] + 4;
}

/* the input tap (ih, iw) of output pixel `pix` at (kh, kw) */
static void tap(char *buf, size_t sz, const ox_cu_win *q, const char *pix)
{
	ox_cg_snprintf(buf, sz, "const $I ih = %s / %lld * %lld - %lld + kh * %lld, ", pix, (long long)q->O[2],
		 (long long)q->S[1], (long long)q->P[1], (long long)q->D[1]);
	ox_cg_snappend(buf, sz, "iw = %s %% %lld * %lld - %lld + kw * %lld;\n", pix, (long long)q->O[2], (long long)q->S[2],
		 (long long)q->P[2], (long long)q->D[2]);
}

/* The grid's z of a kernel over the images (dN of them, N at the top): the
 * text of the count, and the launch's guard when it is the run's (a
 * batch of 0 launches nothing) */
static void batch_grid(ox_cg *cg, ox_graph *g, ox_dim dN, long long N, char *z, size_t zsz, char *guard, size_t gsz)
{
	guard[0] = 0;
	if (!ox_dim_is_rt(g, dN)) {
		ox_cg_snprintf(z, zsz, "%lld", N);
		return;
	}
	ox_cg_snprintf(z, zsz, "(unsigned)(%s)", ox_cg_dim(cg, dN));
	ox_cg_snprintf(guard, gsz, "if ((long)(%s) > 0)\n\t\t", ox_cg_dim(cg, dN));
}

/* A pointwise Conv's LOADA of the depthwise Conv it computes (ox_dw,
 * opt/dwpw.c): the element (pixel m of image nb, channels k .. k + va - 1)
 * of the depthwise's output, from its input xn (this image's: D's input is
 * the node's in[0]), its weights dw [KH][KW][C] and bias db, in
 * ox_cu_emit_window's order, through D's epilogue (operands d<j>); the
 * tile rounds it to OX_T as it stores A (f16, bf16: ox_cu_tile_loop), as
 * D's stored output was */
static int dw_load(ox_cg *cg, ox_graph *g, ox_node *n, const ox_value *x, long long OW, long long P, int va,
		   ox_buf *la)
{
	const int64_t *q = ox_attr_get(n, "ox_dw")->ints; /* {w, b, e, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR} */
	const long long C = x->shape.d[1], IH = x->shape.d[2], IW = x->shape.d[3];
	char xe[96], we[96];
	ox_cg_snprintf(xe, sizeof xe, "xn[(ih * %lld + iw) * %lld + k]", IW, C);
	ox_cg_snprintf(we, sizeof we, "dw[(kh * %lld + kw) * %lld + k]", (long long)q[4], C);
	ox_buf_printf(la, "\t\t\t\tconst $I oh = m / %lld, ow = m %% %lld;\n"
			  "\t\t\t\tfloat dv[%d];\n"
			  "\t\t\t\tfor (int u = 0; u < %d; u++)\n\t\t\t\t\tdv[u] = %s;\n",
		      OW, OW, va, va, q[1] >= 0 ? "OX_LD(db[k + u])" : "0.0f");
	char ih[32], iw[32];
	ox_cg_snprintf(ih, sizeof ih, "%lld", IH), ox_cg_snprintf(iw, sizeof iw, "%lld", IW);
	ox_cu_taps(la, 4, q + 3, q + 5, q + 9, q + 7, ih, iw);
	if (va == 4)
		ox_buf_printf(la, "\t\t\t\t\t\tOX_T xh[4], wh[4];\n"
				  "\t\t\t\t\t\tox_ld4(&%s, xh);\n\t\t\t\t\t\tox_ld4(&%s, wh);\n"
				  "\t\t\t\t\t\tfor (int u = 0; u < 4; u++)\n"
				  "\t\t\t\t\t\t\tdv[u] = fmaf(OX_LD(xh[u]), OX_LD(wh[u]), dv[u]);\n",
			      xe, we);
	else
		ox_buf_printf(la, "\t\t\t\t\t\tdv[0] = fmaf(OX_LD(%s), OX_LD(%s), dv[0]);\n", xe, we);
	ox_buf_printf(la, "\t\t\t\t\t}\n\t\t\t\t}\n\t\t\t\tfor (int u = 0; u < %d; u++) {\n\t\t\t\t\tfloat v = dv[u];\n",
		      va);
	const ox_attr *e = ox_attr_get(n, "ox_dw_epilogue");
	if (e) {
		char full[96];
		ox_cg_snprintf(full, sizeof full, "((nb * %lld + m) * %lld + k + u)", P, C);
		if (ox_cu_epilogue_of(cg, g, n, e->g[0], (int)q[2], 'd', &e->g[0]->vals[e->g[0]->inputs[0]].shape, la,
				      "(k + u)", full, 5))
			return -1;
	}
	ox_buf_puts(la, "\t\t\t\t\ta[u] = v;\n\t\t\t\t}\n");
	return 0;
}

/* Conv, group 1: implicit GEMM */
static int emit_conv(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (w && w->layout == OX_L_DWW)
		return ox_cu_emit_window(cg, g, n); /* depthwise */
	/* (x plain: an image read in place, NCHW, opt/layout.c gpu_plain_images) */
	const int plain = x && x->layout == OX_L_PLAIN && x->shape.rank == 4;
	if (!(plain || nhwc_in(x)) || !nhwc(y) || !ox_cu_ftype(y->dtype) || x->dtype != y->dtype ||
	    w->dtype != y->dtype || w->layout != OX_L_CONVW || w->lp[0] < y->shape.d[1] || w->lp[1] != 1 ||
	    w->lp[2] != x->shape.d[1])
		return 1;
	const ox_attr *dwa = ox_attr_get(n, "ox_dw"); /* (x: the depthwise's input) */
	ox_cu_win q;
	if (ox_cu_window(g, n, x, w, y, &q))
		return -1;
	/* C channels of Cp to an input pixel; O outputs of Op to a weights row */
	/* (a run-time batch: the grid's from the run's, no split-K, the tiles
	 * chosen for its top) */
	const ox_dim dN = x->shape.d[0];
	const int rtn = ox_dim_is_rt(g, dN);
	const long long N = ox_opt_top(g, dN), C = x->shape.d[1], Cp = plain ? C : x->lp[0], O = y->shape.d[1];
	const long long Op = w->lp[0];
	const long long KH = q.K[1], KW = q.K[2], IH = q.I[1], IW = q.I[2], OH = q.O[1], OW = q.O[2];
	const long long P = OH * OW, K = Cp * KH * KW;
	const int hasb = n->nin > 2 && n->in[2] >= 0;
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n), params = {0}, args = {0}, la = {0};
	if (dwa) { /* (the depthwise's weights and bias before the epilogue's operands) */
		ox_buf_puts(&params, ", const OX_T *__restrict__ dw, const OX_T *__restrict__ db");
		ox_buf_printf(&args, ", in%lld, %s", (long long)dwa->ints[0], dwa->ints[1] >= 0 ? "" : "nullptr");
		if (dwa->ints[1] >= 0)
			ox_buf_printf(&args, "in%lld", (long long)dwa->ints[1]);
		const ox_attr *e = ox_attr_get(n, "ox_dw_epilogue");
		if (e)
			ox_cu_epi_params_of(g, n, e->g[0], (int)dwa->ints[2], 'd', &params, &args);
	}
	ox_cu_epi_params(g, n, &params, &args);
	char xs[128], ys[128];
	ox_shape_str(g, &x->shape, xs, sizeof xs), ox_shape_str(g, &y->shape, ys, sizeof ys);
	char padded[64] = "", dws[160] = "";
	if (Cp != C)
		ox_cg_snprintf(padded, sizeof padded, " (channels padded to %lld)", Cp);
	if (plain)
		ox_cg_snprintf(padded, sizeof padded, " (its planes read in place: NCHW)");
	if (dwa)
		ox_cg_snprintf(dws, sizeof dws, " of a depthwise %lldx%lld, stride %lldx%lld, dilation %lldx%lld, pads %lld,%lld, computed as loaded",
			 (long long)dwa->ints[3], (long long)dwa->ints[4], (long long)dwa->ints[5], (long long)dwa->ints[6],
			 (long long)dwa->ints[7], (long long)dwa->ints[8], (long long)dwa->ints[9], (long long)dwa->ints[10]);
	ox_buf_printf(&t, "/* %s: Conv %lldx%lld, stride %lldx%lld, dilation %lldx%lld, pads %lld,",
		      cg->fname, KH, KW, (long long)q.S[1], (long long)q.S[2], (long long)q.D[1], (long long)q.D[2],
		      (long long)q.P[1]);
	ox_buf_printf(&t, "%lld%s, NHWC: %s%s -> %s */\n",
		      (long long)q.P[2], dws, xs, padded, ys);
	/* [P x K] x [K x O] per image */
	const int T = ox_cu_tile_of(P, O, N);
	const int64_t tiles = (P + T - 1) / T * ((O + T - 1) / T) * N;
	int S = ox_cu_split_of(tiles, K);
	if (S * N * P * O >= ((int64_t)1 << 30) || rtn)
		S = 1;
	/* (split: the parts go to the workspace) */
	ox_buf_printf(&t, "__global__ void %s(const OX_T *__restrict__ x, const OX_T *__restrict__ w,\n"
			  "\t\tconst OX_T *__restrict__ bias, OX_T *__restrict__ y%s%s)\n{\n",
		      kname, ox_cu_ws_params(cg, S, tiles), params.s ? params.s : "");
	const long long KS = (long long)ox_cu_split_len(K, S);
	if (S > 1 && (int64_t)S * N * P * O * 4 > cg->cu_ws)
		cg->cu_ws = (int64_t)S * N * P * O * 4;
	/* A along an input pixel's channels and B along the output channels,
	 * four at a time where the rows come in fours and are aligned; with
	 * padded channels the reduction runs over Cp channels a tap: A's lanes
	 * past C are zero (the Reorder that makes x writes them), B's rows past
	 * C read as zero */
	const int es = (int)ox_dtype_size(y->dtype);
	const int va = !plain && Cp % 4 == 0 && ox_cu_align(g, n->in[0]) >= 4 * es &&
				       (!dwa || ox_cu_align(g, n->in[dwa->ints[0]]) >= 4 * es) ? 4 : 1;
	const int vb = Op % 4 == 0 && ox_cu_align(g, n->in[1]) >= 4 * es ? 4 : 1;
	char lt[1024], lb[512], ld[256], M_[32], N_[32];
	const int pointwise = KH == 1 && KW == 1 && q.S[1] == 1 && q.S[2] == 1 && q.P[1] == 0 && q.P[2] == 0;
	char e[96];
	if (dwa && (!pointwise || Cp != C || plain)) {
		ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args);
		return ox_error(g, n, "ox_dw on a Conv that is not pointwise of unpadded channels (opt/dwpw.c)");
	}
	if (dwa) {
		if (dw_load(cg, g, n, x, OW, P, va, &la))
			goto fail;
	} else if (pointwise && !plain) {
		ox_cg_snprintf(e, sizeof e, "xn[m * %lld + k]", Cp);
		ox_cu_tile_ld(lt, sizeof lt, 4, "a", va, e);
		ox_buf_puts(&la, lt);
	} else {
		char tm[512];
		tap(tm, sizeof tm, &q, "m");
		if (plain) /* channel c's plane */
			ox_cg_snprintf(e, sizeof e, "xn[(c * %lld + ih) * %lld + iw]", IH, IW);
		else
			ox_cg_snprintf(e, sizeof e, "xn[(ih * %lld + iw) * %lld + c]", IW, Cp);
		ox_cu_tile_ld(ld, sizeof ld, 5, "a", va, e);
		ox_buf_printf(&la,
			      "\t\t\t\tconst $I c = k %% %lld, r = k / %lld, kh = r / %lld, kw = r %% %lld;\n"
			      "\t\t\t\t%s"
			      "\t\t\t\tif (ih >= 0 && ih < %lld && iw >= 0 && iw < %lld) {\n%s\t\t\t\t}\n",
			      Cp, Cp, KW, KW, tm, IH, IW, ld);
	}
	if (Cp != C) { /* row k: tap k / Cp, channel k % Cp */
		ox_cg_snprintf(e, sizeof e, "w[(k / %lld * %lld + c) * %lld + p]", Cp, C, Op);
		ox_cu_tile_ld(ld, sizeof ld, 5, "b", vb, e);
		ox_cg_snprintf(lb, sizeof lb, "\t\t\t\tconst $I c = k %% %lld;\n\t\t\t\tif (c < %lld) {\n%s\t\t\t\t}\n", Cp,
			 C, ld);
	} else {
		ox_cg_snprintf(e, sizeof e, "w[k * %lld + p]", Op);
		ox_cu_tile_ld(lb, sizeof lb, 4, "b", vb, e);
	}
	ox_cg_snprintf(M_, sizeof M_, "%lld", P);
	ox_cg_snprintf(N_, sizeof N_, "%lld", O);
	ox_buf_printf(&t, "\tconst $I nb = blockIdx.z / %d, ks0 = blockIdx.z %% %d * %lld$L;\n"
			  "\tconst $I ks1 = ks0 + %lld < %lld ? ks0 + %lld : %lld;\n"
			  "\tconst OX_T *xn = x + nb * %lld;\n",
		      S, S, KS, KS, K, KS, K, IH * IW * Cp);
	ox_cu_tile geo;
	ox_cu_tile_loop(&t, T, T, M_, N_, la.s, va, lb, vb, ox_cu_tile_kind(cg, y->dtype), tiles * S, &geo);
	ox_buf_printf(&t, "\tOX_UNROLL\n\tfor (int e = 0; e < %d; e++) {\n"
			  "\t\tconst $I m = m0 + %s, p = p0 + %s;\n"
			  "\t\tif (m >= %lld || p >= %lld)\n\t\t\tcontinue;\n",
		      geo.ne, geo.row, geo.col, P, O);
	if (S > 1) {
		/* split blockIdx.z % S's part, into the workspace [N*S][P][O] */
		ox_buf_printf(&t, "\t\tws[(($I)blockIdx.z * %lld + m) * %lld + p] = acc[e];\n\t}\n", P, O);
		ox_cu_split_arrive(&t, S);
		/* the tile's sums of the parts, bias and epilogue */
		ox_buf_printf(&t, "\tOX_UNROLL\n"
				  "\tfor (int e = 0; e < %d; e++) {\n"
				  "\t\tconst $I m = m0 + %s, p = p0 + %s;\n"
				  "\t\tif (m >= %lld || p >= %lld)\n"
				  "\t\t\tcontinue;\n"
				  "\t\tconst $I yi = (nb * %lld + m) * %lld + p;\n"
				  "\t\tfloat v = %s;\n",
			      geo.ne, geo.row, geo.col, P, O, P, O, hasb ? "OX_LD(bias[p])" : "0.0f");
		ox_buf_printf(&t, "\t\tfor (int s = 0; s < %d; s++)\n"
				  "\t\t\tv += ox_ldcg(&ws[((nb * %d + s) * %lld + m) * %lld + p]);\n",
			      S, S, P, O);
		if (ox_cu_epilogue(cg, g, n, &t, "p", "yi", 2))
			goto fail;
		ox_buf_puts(&t, "\t\ty[yi] = OX_ST(v);\n\t}\n}\n\n");
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %lld, %lld), %d, 0, ox_st, in0, in1, %s, out0, ox_cu_ws, ox_cu_ctr%s);\n",
			     kname, (O + T - 1) / T, (P + T - 1) / T, N * S, geo.nt, hasb ? "in2" : "nullptr",
			     args.s ? args.s : "");
	} else {
		ox_buf_printf(&t, "\t\tconst $I yi = (nb * %lld + m) * %lld + p;\n"
				  "\t\tfloat v = acc[e]%s;\n",
			      P, O, hasb ? " + OX_LD(bias[p])" : "");
		if (ox_cu_epilogue(cg, g, n, &t, "p", "yi", 2))
			goto fail;
		ox_buf_puts(&t, "\t\ty[yi] = OX_ST(v);\n\t}\n}\n\n");
		char z[320], guard[360];
		batch_grid(cg, g, dN, N, z, sizeof z, guard, sizeof guard);
		ox_cg_printf(cg, "\t%sOX_LAUNCH(%s, dim3(%lld, %lld, %s), %d, 0, ox_st, in0, in1, %s, out0%s);\n", guard,
			     kname, (O + T - 1) / T, (P + T - 1) / T, z, geo.nt, hasb ? "in2" : "nullptr", args.s ? args.s : "");
	}
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&args), ox_buf_free(&la);
	return 0;
fail:
	ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args), ox_buf_free(&la);
	return -1;
}

/* GlobalAveragePool / GlobalMaxPool: blocks of 32 channels (a warp's
 * lanes, neighbouring channels) by 8 rows of pixels, each thread down its
 * channel every 8th pixel of its part; the 8 rows combined in order in
 * shared memory. Few channels over many pixels (an SE block's pool over a
 * large image) split the pixels into S parts, a block each, until the
 * blocks give each SM two or a thread has 16 pixels: each part to the
 * workspace, the last block of a channel group to arrive (ox_split_last)
 * combining the S parts in order. A run-time batch: the grid's z. */
static int emit_globalpool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!nhwc(x) || !nhwc(y) || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || !ox_opt_rt_ok(g, &x->shape, 1u))
		return 1;
	const int ismax = n->op == OX_OP_GlobalMaxPool;
	const ox_dim dN = x->shape.d[0];
	const int rtn = ox_dim_is_rt(g, dN);
	const long long N = ox_opt_top(g, dN), C = x->shape.d[1], P = x->shape.d[2] * x->shape.d[3];
	const long long G = (C + 31) / 32;
	int S = 1;
	if (!rtn)
		while (S < 1024 && N * G * S < 2 * OX_CU_SMS && P / (S * 2) >= 8 * 16)
			S *= 2;
	const long long CH = (P + S - 1) / S;
	const char *init = ismax ? "-INFINITY" : "0.0f";
	const char *comb = ismax ? "a = b > a || b != b ? b : a" : "a += b";
	char fin[64] = "a";
	if (!ismax)
		ox_cg_snprintf(fin, sizeof fin, "a / (float)%lld", P);
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	char xs[128];
	ox_shape_str(g, &x->shape, xs, sizeof xs);
	ox_buf_printf(&t, "/* %s: %s, NHWC: %s, blocks of 32 channels by 8 rows of pixels, %d part%s */\n"
			  "__global__ void __launch_bounds__(256) %s(const OX_T *__restrict__ x, OX_T *__restrict__ y%s)\n"
			  "{\n"
			  "\t__shared__ float part[8][32];\n"
			  "\tconst int tid = threadIdx.x, cx = tid %% 32, ry = tid / 32;\n"
			  "\tconst $I c = ($I)blockIdx.x * 32 + cx, nb = blockIdx.z, p0 = ($I)blockIdx.y * %lld;\n",
		      cg->fname, n->optype, xs, S, S > 1 ? "s of the pixels" : "", kname,
		      S > 1 ? ", float *__restrict__ ws, unsigned int *__restrict__ ctr" : "", CH);
	ox_buf_printf(&t, "\tconst $I p1 = p0 + %lld < %lld ? p0 + %lld : %lld;\n"
			  "\tfloat a = %s;\n"
			  "\tif (c < %lld)\n"
			  "\t\tfor ($I p = p0 + ry; p < p1; p += 8) {\n"
			  "\t\t\tconst float b = OX_LD(x[(nb * %lld + p) * %lld + c]);\n",
		      CH, P, CH, P, init, C, P, C);
	ox_buf_printf(&t, "\t\t\t%s;\n"
			  "\t\t}\n"
			  "\tpart[ry][cx] = a;\n"
			  "\t__syncthreads();\n"
			  "\tif (ry == 0) {\n"
			  "\t\tfor (int w = 1; w < 8; w++) {\n"
			  "\t\t\tconst float b = part[w][cx];\n"
			  "\t\t\t%s;\n"
			  "\t\t}\n",
		      comb, comb);
	if (S == 1) {
		ox_buf_printf(&t, "\t\tif (c < %lld)\n\t\t\ty[nb * %lld + c] = OX_ST(%s);\n\t}\n}\n\n", C, C, fin);
	} else {
		if (N * G * S * 32 * 4 > cg->cu_ws)
			cg->cu_ws = N * G * S * 32 * 4;
		if (N * G > cg->cu_ctr)
			cg->cu_ctr = N * G;
		ox_buf_printf(&t, "\t\tws[((nb * %lld + blockIdx.x) * %d + blockIdx.y) * 32 + cx] = a;\n"
				  "\t}\n"
				  "\t/* the channel group's last block to arrive combines the %d parts in order */\n"
				  "\tif (!ox_split_last(ctr + nb * %lld + blockIdx.x, %d) || ry)\n"
				  "\t\treturn;\n"
				  "\ta = %s;\n"
				  "\tfor (int s = 0; s < %d; s++) {\n",
			      G, S, S, G, S, init, S);
		ox_buf_printf(&t, "\t\tconst float b = ox_ldcg(&ws[((nb * %lld + blockIdx.x) * %d + s) * 32 + cx]);\n"
				  "\t\t%s;\n"
				  "\t}\n"
				  "\tif (c < %lld)\n"
				  "\t\ty[nb * %lld + c] = OX_ST(%s);\n"
				  "}\n"
				  "\n",
			      G, S, comb, C, C, fin);
	}
	char z[320], guard[360];
	batch_grid(cg, g, dN, N, z, sizeof z, guard, sizeof guard);
	ox_cg_printf(cg, "\t%sOX_LAUNCH(%s, dim3(%lld, %d, %s), 256, 0, ox_st, in0, out0%s);\n", guard, kname, G, S, z,
		     S > 1 ? ", ox_cu_ws, ox_cu_ctr" : "");
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* onnxcc::Reorder between plain [N,C,H,W] and blocked [N][C/b][H][W][b],
 * any b (NHWC on the GPU): a thread per element of the blocked side's
 * storage when making it (lanes past C zero), of the plain one otherwise */
static int emit_reorder(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (ox_attr_int(n, "ox_nhwc", 0)) /* (opt/plan.c makes it a view) */
		return ox_error(g, n, "a channels-last Reorder that is not a view");
	const int tob = y->layout == OX_L_BLOCKED;
	const ox_value *bv = tob ? y : x, *pv = tob ? x : y;
	/* (a run-time batch: the index space's first dim the kernel's parameter) */
	if (x->shape.rank != 4 || bv->layout != OX_L_BLOCKED || pv->layout || !ox_opt_rt_ok(g, &x->shape, 1u) ||
	    x->dtype != y->dtype)
		return 1;
	const ox_dim dN = x->shape.d[0];
	const long long C = x->shape.d[1], S = x->shape.d[2] * x->shape.d[3], b = bv->lp[0];
	const long long CB = (C + b - 1) / b;
	const char *ty = ox_cg_ctype(x->dtype);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", ty, ty);
	ox_buf t = ox_cu_kbuf(g, n), body = {0};
	char xs[128];
	ox_shape_str(g, &x->shape, xs, sizeof xs);
	ox_buf_printf(&t, "/* %s: %s %s -> %s, channel blocks of %lld */\n", cg->fname, xs, ox_layout_names[x->layout],
		      ox_layout_names[y->layout], b);
	if (tob) /* i0..i3: image, channel block, position, lane */
		ox_buf_printf(&body, "\tconst $I c = i1 * %lld + i3;\n"
				     "\ty[i] = c < %lld ? x[(i0 * %lld + c) * %lld + i2] : (%s)0;\n",
			      b, C, C, S, ty);
	else /* i0..i2: image, channel, position */
		ox_buf_printf(&body, "\ty[i] = x[((i0 * %lld + i1 / %lld) * %lld + i2) * %lld + i1 %% %lld];\n", CB, b, S, b,
			      b);
	const ox_dim dims[4] = {dN, tob ? CB : C, S, b};
	ox_cu_rt R = {g, 0, {0}}, *Rp = ox_dim_is_rt(g, dN) ? &R : NULL;
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, tob ? 4 : 3, body.s, Rp)) {
		ox_buf_free(&t), ox_buf_free(&body);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, tob ? 4 : 3, "in0, out0", Rp);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&body);
	return 0;
}

int ox_cu_emit_nhwc(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_Reorder:
		return emit_reorder(cg, g, n);
	case OX_OP_Conv:
		return emit_conv(cg, g, n);
	case OX_OP_MaxPool:
		return ox_cu_emit_window(cg, g, n);
	case OX_OP_GlobalAveragePool:
	case OX_OP_GlobalMaxPool:
		return emit_globalpool(cg, g, n);
	}
	return 1;
}
