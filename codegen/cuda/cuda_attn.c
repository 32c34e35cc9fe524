/* cuda_attn.c: attention on the GPU (--target cuda): the ONNX Attention
 * node opt/attention.c makes from exporters' forms, a tiled kernel for
 * heads up to 128 wide (scores in registers, the softmax online, keys split
 * over blocks when the queries are few), a block per row otherwise, the
 * KV cache's present outputs; and RotaryEmbedding. The families attention
 * and rope of ir/ops.def's cuda column.
 */
#include "cuda_kernels.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Attention, tiled (flash-style): a block of 128 threads per 16 query
 * rows, head and batch, over the keys in tiles of 32 staged in shared
 * memory with their values: the 16 x 32 scores (a thread 4), then the
 * online softmax (each row's running max and sum kept by the row's 8
 * threads, its outputs rescaled when the max grows), then the outputs
 * (a thread a row's columns c, c + 8, ...). Keys past SKV are -inf
 * (assigned); the causal mask and the key mask are added as the C target
 * adds them, so a NaN score stays NaN. Dk, Dv <= 128. A row's 8 threads
 * pass its probabilities through shared memory behind a __syncwarp (one
 * warp's lanes), a barrier the emulation cannot prove needed: its
 * shuffles just before already gather the warp. */
/* floats a query row of one part of the keys keeps in the workspace
 * (split keys): its outputs, Dv rounded up to 8, then max and sum */
static long long attn_part_row(long long Dv)
{
	return (Dv + 7) / 8 * 8 + 2;
}

static void attention_tiled(ox_buf *t, const char *kname, long long G, long long Dk, long long Dv, const char *sc,
			    const char *mask, const char *mt, int mask_s, const char *tests, const char *np, const char *qo,
			    const char *ko, const char *vo, const char *yo, int S)
{
	const long long NC = (Dv + 7) / 8, W = attn_part_row(Dv);
	char guard[64], guard2[64]; /* (the columns past Dv when it is not a multiple of 8) */
	ox_cg_snprintf(guard, sizeof guard, "if (c + u * 8 < %lld)\n\t\t\t\t\t", Dv);
	ox_cg_snprintf(guard2, sizeof guard2, "if (c + u * 8 < %lld)\n\t\t\t", Dv);
	if (Dv % 8 == 0)
		guard[0] = guard2[0] = 0;
	/* S > 1: the keys in S parts, blockIdx.z = b * S + the part (below) */
	char split_params[96] = "", bz[48] = "blockIdx.z", krange[200] = "const $I klo = 0, khi = SKV;\n";
	if (S > 1) {
		ox_cg_snprintf(split_params, sizeof split_params, ", float *__restrict__ ws, unsigned int *__restrict__ ctr");
		ox_cg_snprintf(bz, sizeof bz, "blockIdx.z / %d, sp = blockIdx.z %% %d", S, S);
		ox_cg_snprintf(krange, sizeof krange,
			 "/* this block's part of the keys: whole tiles of 32 */\n"
			 "\tconst $I kc = ((SKV + 31) / 32 + %d) / %d * 32, klo = sp * kc, khi = klo + kc < SKV ? klo + kc : SKV;\n",
			 S - 1, S);
	}
	ox_buf_printf(t, "__global__ void __launch_bounds__(128) %s(const OX_T *__restrict__ Q, const OX_T *__restrict__ K,\n"
			 "\t\tconst OX_T *__restrict__ V, const %s *__restrict__ M, OX_T *__restrict__ Y, $I SQ, $I SKV%s%s)\n"
			 "{\n"
			 "\t__shared__ float qs[16][%lld], ks[32][%lld], vs[32][%lld], ps[16][33];\n",
		      kname, mt, np, split_params, Dk, Dk + 1, Dv);
	ox_buf_printf(t, "\tconst $I s0 = ($I)blockIdx.x * 16, h = blockIdx.y, b = %s, hk = h / %lld;\n"
			 "\t%s"
			 "\tconst int tid = threadIdx.x, r = tid / 8, c = tid %% 8;\n"
			 "\tfor (int i = tid; i < %lld; i += 128) {\n"
			 "\t\tconst $I s = s0 + i / %lld;\n",
		      bz, G, krange, 16 * Dk, Dk);
	ox_buf_printf(t, "\t\tqs[i / %lld][i %% %lld] = s < SQ ? OX_LD(Q[%s + i %% %lld]) : 0.0f;\n"
			 "\t}\n"
			 "\t/* row r's running max and sum (the same in its 8 threads), its outputs */\n"
			 "\tfloat mr = -INFINITY, lr = 0.0f, o[%lld];\n"
			 "\tOX_UNROLL\n"
			 "\tfor (int j = 0; j < %lld; j++)\n"
			 "\t\to[j] = 0.0f;\n"
			 "\tfor ($I k0 = klo; k0 < khi; k0 += 32) {\n"
			 "\t\t__syncthreads(); /* (the last tile's reads done) */\n"
			 "\t\tfor (int i = tid; i < %lld; i += 128) {\n"
			 "\t\t\tconst $I k = k0 + i / %lld;\n",
		      Dk, Dk, qo, Dk, NC, NC, 32 * Dk, Dk);
	ox_buf_printf(t, "\t\t\tks[i / %lld][i %% %lld] = k < SKV ? OX_LD(K[%s + i %% %lld]) : 0.0f;\n"
			 "\t\t}\n"
			 "\t\tfor (int i = tid; i < %lld; i += 128) {\n"
			 "\t\t\tconst $I k = k0 + i / %lld;\n",
		      Dk, Dk, ko, Dk, 32 * Dv, Dv);
	ox_buf_printf(t, "\t\t\tvs[i / %lld][i %% %lld] = k < SKV ? OX_LD(V[%s + i %% %lld]) : 0.0f;\n"
			 "\t\t}\n"
			 "\t\t__syncthreads();\n",
		      Dv, Dv, vo, Dv);
	ox_buf_printf(t, "\t\t/* the scores, a warp per row */\n"
			 "\t\tfor (int e = tid; e < 512; e += 128) {\n"
			 "\t\t\tconst int rr = e / 32, j = e %% 32;\n"
			 "\t\t\tconst $I k = k0 + j%s;\n"
			 "\t\t\tfloat a = -INFINITY;\n"
			 "\t\t\tif (k < SKV) {\n"
			 "\t\t\t\tfloat d0 = 0.0f;\n"
			 "\t\t\t\tfor (int d = 0; d < %lld; d++)\n\t\t\t\t\td0 = fmaf(qs[rr][d], ks[j][d], d0);\n"
			 "\t\t\t\ta = %s%s;\n"
			 "%s"
			 "\t\t\t}\n"
			 "\t\t\tps[rr][j] = a;\n"
			 "\t\t}\n\t\t__syncthreads();\n",
		      ox_cg_uses_name(tests, "s") || mask_s ? ", s = s0 + rr" : "", Dk, sc, mask, tests);
	ox_buf_printf(t, "\t\t/* the online softmax: row r's 8 threads, 4 scores each */\n"
			 "\t\tfloat mx = -INFINITY, sum = 0.0f;\n"
			 "\t\tfor (int j = c; j < 32; j += 8)\n\t\t\tmx = fmaxf(mx, ps[r][j]);\n"
			 "\t\tfor (int w = 4; w > 0; w /= 2)\n\t\t\tmx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, w));\n"
			 "\t\tconst float mn = fmaxf(mr, mx), al = mr == -INFINITY ? 0.0f : expf(mr - mn);\n"
			 "\t\tfor (int j = c; j < 32; j += 8) {\n"
			 "\t\t\tconst float p = mn == -INFINITY ? 0.0f : expf(ps[r][j] - mn);\n"
			 "\t\t\tps[r][j] = p;\n\t\t\tsum += p;\n\t\t}\n"
			 "\t\tfor (int w = 4; w > 0; w /= 2)\n\t\t\tsum += __shfl_xor_sync(0xffffffffu, sum, w);\n"
			 "\t\tlr = lr * al + sum, mr = mn;\n"
			 "\t\t__syncwarp(); /* (the row's probabilities: its 8 threads are one warp's) */\n"
			 "\t\tOX_UNROLL\n\t\tfor (int j = 0; j < %lld; j++)\n\t\t\to[j] *= al;\n"
			 "\t\tfor (int j = 0; j < 32; j++) {\n"
			 "\t\t\tconst float p = ps[r][j];\n"
			 "\t\t\tOX_UNROLL\n\t\t\tfor (int u = 0; u < %lld; u++)\n"
			 "\t\t\t\t%so[u] = fmaf(p, vs[j][c + u * 8], o[u]);\n"
			 "\t\t}\n\t}\n",
		      NC, NC, guard);
	if (S > 1) { /* each part's row sums, maximum and outputs; the last to arrive adds them up in order */
		ox_buf_printf(t, "\tconst $I tile = (($I)b * gridDim.y + h) * gridDim.x + blockIdx.x;\n"
				 "\tfloat *wp = ws + ((tile * %d + sp) * 16 + r) * %lld;\n"
				 "\tOX_UNROLL\n"
				 "\tfor (int u = 0; u < %lld; u++)\n"
				 "\t\twp[c + u * 8] = o[u];\n"
				 "\tif (c == 0)\n"
				 "\t\twp[%lld] = mr, wp[%lld] = lr;\n"
				 "\tif (!ox_split_last(ctr + tile, %d))\n"
				 "\t\treturn;\n"
				 "\tmr = -INFINITY, lr = 0.0f;\n"
				 "\tfor (int p = 0; p < %d; p++)\n",
			      S, W, NC, W - 2, W - 1, S, S);
		ox_buf_printf(t, "\t\tmr = fmaxf(mr, ox_ldcg(&ws[((tile * %d + p) * 16 + r) * %lld + %lld]));\n"
				 "\tOX_UNROLL\n"
				 "\tfor (int u = 0; u < %lld; u++)\n"
				 "\t\to[u] = 0.0f;\n"
				 "\tfor (int p = 0; p < %d; p++) {\n"
				 "\t\tconst float *pp = ws + ((tile * %d + p) * 16 + r) * %lld, mp = ox_ldcg(&pp[%lld]);\n"
				 "\t\tconst float w = mp == -INFINITY ? 0.0f : expf(mp - mr);\n",
			      S, W, W - 2, NC, S, S, W, W - 2);
		ox_buf_printf(t, "\t\tlr += w * ox_ldcg(&pp[%lld]);\n"
				 "\t\tOX_UNROLL\n"
				 "\t\tfor (int u = 0; u < %lld; u++)\n"
				 "\t\t\to[u] += w * ox_ldcg(&pp[c + u * 8]);\n"
				 "\t}\n",
			      W - 1, NC);
	}
	ox_buf_printf(t, "\tconst $I s = s0 + r;\n"
			 "\tif (s >= SQ)\n\t\treturn;\n"
			 "\tOX_UNROLL\n\tfor (int u = 0; u < %lld; u++)\n"
			 "\t\t%sY[%s + c + u * 8] = OX_ST(o[u] / lr);\n}\n\n",
		      NC, guard2, yo);
}

/* present_key and present_value (4-D [B, Hkv, past + new, D]): a kernel
 * each, a thread per element, from past_key/value (when given) and K/V (3-D
 * [B, S, Hkv*D] or 4-D); run-time dims as parameters. 1 when they are too
 * many. */
static int present_kernels(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attngeo *q)
{
	const int rank = ox_in(g, n, 1)->shape.rank;
	for (int k = 0; k < 2; k++) {
		const int64_t D = k ? q->Dv : q->Dk;
		const ox_dim dims[4] = {q->dB, q->Hkv, q->dSkv, D};
		ox_cu_rt R = {g, 0, {0}};
		char P[32], S[32], kname[220], params[256], nw[200];
		if (!ox_cu_rt_dim(&R, q->dP, P, sizeof P) || !ox_cu_rt_dim(&R, q->dSnew, S, sizeof S))
			return 1;
		if (rank == 3)
			ox_cg_snprintf(nw, sizeof nw, "x[((i0 * %s + (i2 - %s)) * %lld$L + i1) * %lld$L + i3]", S, P, (long long)q->Hkv,
				 (long long)D);
		else
			ox_cg_snprintf(nw, sizeof nw, "x[((i0 * %lld$L + i1) * %s + (i2 - %s)) * %lld$L + i3]", (long long)q->Hkv, S, P,
				 (long long)D);
		ox_buf body = {0}, t = ox_cu_kbuf(g, n);
		if (q->dP)
			ox_buf_printf(&body, "\ty[i] = i2 < %s ? p[((i0 * %lld$L + i1) * %s + i2) * %lld$L + i3] : %s;\n", P,
				      (long long)q->Hkv, P, (long long)D, nw);
		else
			ox_buf_printf(&body, "\ty[i] = %s;\n", nw);
		ox_cg_snprintf(kname, sizeof kname, "%s_present%d", cg->fname, k);
		const char *ty = ox_cg_ctype(ox_out(g, n, 0)->dtype);
		ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ p, %s *__restrict__ y", ty,
			 ty, ty);
		ox_buf_printf(&t, "/* %s: present_%s, past then new: a thread per element */\n", kname, k ? "value" : "key");
		if (ox_cu_index_kernel_rt(&t, kname, params, dims, 4, body.s, &R)) {
			ox_buf_free(&body), ox_buf_free(&t);
			return 1;
		}
		ox_buf_free(&body);
		char ptrs[64];
		ox_cg_snprintf(ptrs, sizeof ptrs, "in%d, %s, out%d", 1 + k, q->dP ? (k ? "in5" : "in4") : "nullptr", 1 + k);
		ox_cu_index_launch(cg, kname, dims, 4, ptrs, &R);
		ox_cg_helper(cg, kname, t.s);
		ox_buf_free(&t);
	}
	return 0;
}

/* Attention (ONNX, as opt/attention.c makes it from exporters' forms):
 * attention_tiled for heads up to 128 wide, else a block per (query row,
 * head, batch): the scores in shared memory, the softmax by block
 * reductions, then each thread an output column */
int ox_cu_emit_attention(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_attngeo q;
	if (ox_opt_attn_geo_ext(g, n, &q) || q.Hq % q.Hkv)
		return 1;
	/* causal: query s sits at position s + past among the keys, the past
	 * a constant or, when the new keys are as many as the queries (the
	 * same dim), SKV - SQ; with the padding lengths (NP) and no past at
	 * NP[b] - SQ + s; keys from NP[b] on are padding. -inf added, not
	 * assigned, as the C target (a NaN stays). */
	char causal[64] = "";
	const int np = n->nin > 6 && n->in[6] >= 0;
	if (q.causal && !ox_dim_is_rt(g, q.dP) && q.dP)
		ox_cg_snprintf(causal, sizeof causal, "k > s + %lld$L", (long long)q.dP);
	else if (q.causal && q.dP && q.dSnew == q.dSq)
		ox_cg_snprintf(causal, sizeof causal, "k > s + (SKV - SQ)");
	else if (q.causal && q.dP)
		return 1;
	else if (q.causal && np)
		ox_cg_snprintf(causal, sizeof causal, "k - s + SQ > NP[b]");
	else if (q.causal)
		ox_cg_snprintf(causal, sizeof causal, "k > s");
	char tests[2][300] = {"", ""}; /* (indented for the tiled kernel, then the other) */
	for (int k = 0; k < 2; k++) {
		const char *in = k ? "\t\t" : "\t\t\t\t";
		if (*causal)
			ox_cg_snprintf(tests[k], sizeof tests[k], "%sif (%s)\n%s\ta += -INFINITY;\n", in, causal, in);
		if (np)
			ox_cg_snprintf(tests[k] + strlen(tests[k]), sizeof tests[k] - strlen(tests[k]),
				 "%sif (k >= NP[b])\n%s\ta += -INFINITY;\n", in, in);
	}
	/* the tiled kernel for heads up to 128 wide, else a block per query row
	 * with its scores in shared memory */
	const int tiled = q.Dk <= 128 && q.Dv <= 128;
	if (!tiled && (q.Skv > 4096 || q.Dk > 1024))
		return 1;
	ox_value *m = ox_in(g, n, 3), *y = ox_out(g, n, 0);
	const int dt = y->dtype;
	if (!ox_cu_ftype(dt) || ox_in(g, n, 0)->dtype != dt || ox_in(g, n, 1)->dtype != dt || ox_in(g, n, 2)->dtype != dt)
		return 1;
	/* the mask: of the scores' type or bools (false: -inf), added as the C
	 * target adds it (codegen/c/emit_attn.c): its strides over [B, Hq, Sq,
	 * Skv], 0 where it broadcasts, keys past its last dim masked out; with
	 * run-time lengths and constant mask dims one value per key only; a
	 * mask of run-time dims has each dim 1 or the attention's own */
	char mask[400] = "", mt[16] = "OX_T";
	int mask_s = 0;
	if (m) {
		const int r = m->shape.rank;
		if ((m->dtype != dt && m->dtype != OX_BOOL) || r > 4 || r < 1)
			return 1;
		if (m->dtype == OX_BOOL)
			ox_cg_snprintf(mt, sizeof mt, "%s", ox_cg_ctype(OX_BOOL));
		int64_t ms[4] = {0, 0, 0, 0}, want[4] = {q.B, q.Hq, q.Sq, q.Skv}, st = 1, Mk = q.Skv;
		char mi[200] = "";
		const char *vars[4] = {"b", "h", "s", "k"};
		if (ox_shape_is_rt(g, &m->shape)) {
			/* run-time dims (the padding mask [B, 1, 1, Skv] of a dynamic
			 * batch and sequence): each dim 1 or the attention's own, the
			 * keys' always; the strides over the kernel's SQ and SKV */
			const ox_dim wd[4] = {q.dB, q.Hq, q.dSq, q.dSkv};
			char str[96] = ""; /* the stride so far ("": 1) */
			for (int i = r - 1; i >= 0; i--) {
				const ox_dim d = m->shape.d[i];
				const int ax = 4 - r + i;
				if (d == 1 && ax != 3)
					continue;
				if (d != wd[ax])
					return 1;
				size_t len = strlen(mi);
				ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s%s%s", len ? " + " : "", vars[ax], *str ? " * " : "", str);
				char f[32], nx[96];
				if (ax == 1)
					ox_cg_snprintf(f, sizeof f, "%lld$L", (long long)q.Hq);
				else
					ox_cg_snprintf(f, sizeof f, "%s", ax == 3 ? "SKV" : "SQ");
				ox_cg_snprintf(nx, sizeof nx, "%s%s%s", str, *str ? " * " : "", f);
				ox_cg_snprintf(str, sizeof str, "%s", nx);
				mask_s |= ax == 2;
			}
		} else {
			for (int i = r - 1; i >= 0; i--) {
				const int64_t d = m->shape.d[i];
				const int ax = 4 - r + i;
				if (ax == 3 ? d > q.Skv : (d != 1 && d != want[ax]))
					return 1; /* (the C target's error) */
				/* with run-time dims: a dim of the mask's that meets a
				 * run-time one of the attention's is 1 (a constant mask
				 * [Sq, Skv] serves a run-time batch) */
				const ox_dim rd[4] = {q.dB, 1, q.dSq, q.dSkv};
				if (q.rt && (ax == 3 ? d != q.Skv || ox_dim_is_rt(g, q.dSkv) : d != 1 && ox_dim_is_rt(g, rd[ax])))
					return 1;
				ms[ax] = ax == 3 ? 1 : d == 1 ? 0 : st;
				if (ax == 3)
					Mk = d;
				st *= d;
			}
			for (int k = 0; k < 4; k++) {
				size_t len = strlen(mi);
				if (ms[k] == 1)
					ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s", len ? " + " : "", vars[k]);
				else if (ms[k])
					ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s * %lld$L", len ? " + " : "", vars[k], (long long)ms[k]);
			}
			mask_s = ms[2] != 0;
		}
		char val[300];
		if (m->dtype == OX_BOOL)
			ox_cg_snprintf(val, sizeof val, "(M[%s] ? 0.0f : -INFINITY)", *mi ? mi : "0");
		else
			ox_cg_snprintf(val, sizeof val, "OX_LD(M[%s])", *mi ? mi : "0");
		if (Mk < q.Skv)
			ox_cg_snprintf(mask, sizeof mask, " + (k < %lld ? %s : -INFINITY)", (long long)Mk, val);
		else
			ox_cg_snprintf(mask, sizeof mask, " + %s", val);
	}
	/* batch and sequence lengths may be run-time dims (kernel arguments),
	 * scores sized for the top of the keys */
	for (int k = q.present ? 3 : 1; k < n->nout; k++)
		if (n->out[k] >= 0)
			return 1;
	char kname[200], qo[200], ko[200], vo[200], yo[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const long long B = q.B, Sq = q.Sq, Skv = q.Skv, Hq = q.Hq, Hkv = q.Hkv, Dk = q.Dk, Dv = q.Dv;
	(void)Sq;
	/* split the keys when the blocks (16 query rows of a head) are too
	 * few for the GPU: each part of whole tiles of 32 keys, a block each,
	 * the last to arrive combining their softmax sums (flash-decoding);
	 * counted at the dims' tops */
	int S = 1;
	const int64_t blocks = (ox_opt_top(g, q.dSq) + 15) / 16 * Hq * ox_opt_top(g, q.dB),
		      ktiles = (ox_opt_top(g, q.dSkv) + 31) / 32;
	if (tiled)
		while (S < 8 && blocks * S * 2 <= OX_CU_SMS && ktiles >= 2 * S)
			S *= 2;
	if (q.seq) { /* [S, B, H*D]: rows NB apart, the batch count (blockIdx.z's, over the S parts) */
		char nb[48];
		ox_cg_snprintf(nb, sizeof nb, S > 1 ? "(($I)gridDim.z / %d)" : "($I)gridDim.z", S);
		ox_cg_snprintf(qo, sizeof qo, "(s * %s + b) * %lld + h * %lld", nb, Hq * Dk, Dk);
		ox_cg_snprintf(ko, sizeof ko, "(k * %s + b) * %lld + hk * %lld", nb, Hkv * Dk, Dk);
		ox_cg_snprintf(vo, sizeof vo, "(k * %s + b) * %lld + hk * %lld", nb, Hkv * Dv, Dv);
		ox_cg_snprintf(yo, sizeof yo, "(s * %s + b) * %lld + h * %lld", nb, Hq * Dv, Dv);
	} else if (q.rank == 3) { /* [B, S, H*D] */
		ox_cg_snprintf(qo, sizeof qo, "(b * SQ + s) * %lld + h * %lld", Hq * Dk, Dk);
		ox_cg_snprintf(ko, sizeof ko, "(b * SKV + k) * %lld + hk * %lld", Hkv * Dk, Dk);
		ox_cg_snprintf(vo, sizeof vo, "(b * SKV + k) * %lld + hk * %lld", Hkv * Dv, Dv);
		ox_cg_snprintf(yo, sizeof yo, "(b * SQ + s) * %lld + h * %lld", Hq * Dv, Dv);
	} else { /* [B, H, S, D] */
		ox_cg_snprintf(qo, sizeof qo, "((b * %lld$L + h) * SQ + s) * %lld", Hq, Dk);
		ox_cg_snprintf(ko, sizeof ko, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dk);
		ox_cg_snprintf(vo, sizeof vo, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dv);
		ox_cg_snprintf(yo, sizeof yo, "((b * %lld$L + h) * SQ + s) * %lld", Hq, Dv);
	}
	if (q.present) { /* the keys and values from present_key/value: 4-D */
		ox_cg_snprintf(ko, sizeof ko, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dk);
		ox_cg_snprintf(vo, sizeof vo, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dv);
		if (present_kernels(cg, g, n, &q))
			return 1;
	}
	/* the score from the dot product d: scaled, then softcap's tanh */
	char score[160], sl[48];
	ox_cg_snprintf(sl, sizeof sl, "%s", ox_cg_lit(OX_F32, q.scale));
	if (q.softcap > 0) {
		char cl[48];
		ox_cg_snprintf(cl, sizeof cl, "%s", ox_cg_lit(OX_F32, q.softcap));
		ox_cg_snprintf(score, sizeof score, "tanhf(%%s * %s / %s) * %s", sl, cl, cl);
	} else {
		ox_cg_snprintf(score, sizeof score, "%%s * %s", sl);
	}
	ox_buf t = ox_cu_kbuf(g, n);
	char pastc[64] = "";
	if (q.dP)
		ox_cg_snprintf(pastc, sizeof pastc, ", past %lld%s", (long long)ox_opt_top(g, q.dP),
			 ox_dim_is_rt(g, q.dP) ? " at most" : "");
	ox_buf_printf(&t, "/* %s: Attention B %lld, heads %lld/%lld, Sq %lld, Skv %lld%s, Dk %lld, Dv ",
		      cg->fname, B, Hq, Hkv, Sq, Skv, pastc, Dk);
	ox_buf_printf(&t, "%lld, scale %g%s%s%s%s%s */\n",
		      Dv, q.scale, m ? ", a mask" : "", q.causal ? ", causal" : "", q.softcap > 0 ? ", softcap" : "",
		      q.present ? ", present K/V" : "", tiled ? ", tiled" : "");
	char sc[200];
	ox_cg_snprintf(sc, sizeof sc, score, tiled ? "d0" : "a");
	if (S > 1) {
		const int64_t bytes = blocks * S * 16 * attn_part_row(Dv) * 4;
		if (bytes > cg->cu_ws)
			cg->cu_ws = bytes;
		if (blocks > cg->cu_ctr)
			cg->cu_ctr = blocks;
	}
	if (tiled)
		attention_tiled(&t, kname, Hq / Hkv, Dk, Dv, sc, mask, mt, mask_s, tests[0],
				np ? ", const int64_t *__restrict__ NP" : "", qo, ko, vo, yo, S);
	else {
		ox_buf_printf(&t, "__global__ void __launch_bounds__(128) %s(const OX_T *__restrict__ Q, const OX_T *__restrict__ K,\n"
			  "\t\tconst OX_T *__restrict__ V, const %s *__restrict__ M, OX_T *__restrict__ Y, $I SQ, $I SKV%s)\n"
			  "{\n"
			  "\t__shared__ float qs[%lld], sc[%lld], red[4];\n"
			  "\tconst $I s = blockIdx.x, h = blockIdx.y, b = blockIdx.z, hk = h / %lld;\n"
			  "\tconst int tid = threadIdx.x, lane = tid %% 32, wp = tid / 32;\n"
			  "\tfor (int d = tid; d < %lld; d += 128)\n"
			  "\t\tqs[d] = OX_LD(Q[%s + d]);\n"
			  "\t__syncthreads();\n"
			  "\tfloat mx = -INFINITY;\n"
			  "\tfor (int k = tid; k < SKV; k += 128) {\n",
		      kname, mt, np ? ", const int64_t *__restrict__ NP" : "", Dk, Skv, Hq / Hkv, Dk, qo);
		ox_buf_printf(&t, "\t\tconst OX_T *kr = K + %s;\n"
			  "\t\tfloat a = 0.0f;\n"
			  "\t\tfor (int d = 0; d < %lld; d++)\n"
			  "\t\t\ta = fmaf(qs[d], OX_LD(kr[d]), a);\n"
			  "\t\ta = %s%s;\n"
			  "%s"
			  "\t\tsc[k] = a;\n"
			  "\t\tmx = fmaxf(mx, a);\n"
			  "\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n"
			  "\t\tmx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n"
			  "\tif (lane == 0)\n"
			  "\t\tred[wp] = mx;\n"
			  "\t__syncthreads();\n"
			  "\tmx = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));\n"
			  "\t__syncthreads();\n"
			  "\tfloat sum = 0.0f;\n"
			  "\tfor (int k = tid; k < SKV; k += 128) {\n"
			  "\t\tconst float e = mx == -INFINITY ? 0.0f : expf(sc[k] - mx);\n"
			  "\t\tsc[k] = e;\n"
			  "\t\tsum += e;\n"
			  "\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n"
			  "\t\tsum += __shfl_xor_sync(0xffffffffu, sum, o);\n"
			  "\tif (lane == 0)\n"
			  "\t\tred[wp] = sum;\n"
			  "\t__syncthreads();\n"
			  "\tsum = red[0] + red[1] + red[2] + red[3];\n"
			  "\tfor (int d = tid; d < %lld; d += 128) {\n"
			  "\t\tfloat a = 0.0f;\n"
			  "\t\tfor (int k = 0; k < SKV; k++)\n"
			  "\t\t\ta = fmaf(sc[k], OX_LD(V[%s + d]), a);\n"
			  "\t\tY[%s + d] = OX_ST(a / sum);\n"
			  "\t}\n"
			  "}\n"
			  "\n",
		      ko, Dk, sc, mask, tests[1], Dv, vo, yo);
	}
	const char *dsq = ox_cg_dim(cg, q.dSq), *dskv = ox_cg_dim(cg, q.dSkv), *db = ox_cg_dim(cg, q.dB);
	char rows[96]; /* (blocks of 16 query rows, or one each) */
	ox_cg_snprintf(rows, sizeof rows, tiled ? "((%s) + 15) / 16" : "%s", dsq);
	char gz[96];
	ox_cg_snprintf(gz, sizeof gz, S > 1 ? "(unsigned)(%s) * %d" : "(unsigned)%s", db, S);
	ox_cg_printf(cg, "\tif (%s > 0 && %s > 0)\n",
		     dsq, db);
	ox_cg_printf(cg, "\t\tOX_LAUNCH(%s, dim3((unsigned)(%s), %lld, %s), 128, 0, ox_st, in0, %s, %s, out0, %s, %s",
		     kname, rows, Hq, gz, q.present ? "out1, out2" : "in1, in2", m ? "in3" : "nullptr", dsq, dskv);
	ox_cg_printf(cg, "%s%s);\n",
		     np ? ", in6" : "", S > 1 ? ", ox_cu_ws, ox_cu_ctr" : "");
	(void)B;
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* RotaryEmbedding (constant shapes): a thread per output element, its pair
 * rotated as the C target rotates it (ox_cg_rope_pair: the same products
 * and roundings), the elements past rotary_embedding_dim copied; a
 * position id wrapped once when negative and checked as the C target
 * checks it (out of range: the status word, _ERR_INDEX) */
int ox_cu_emit_rope(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *c = ox_in(g, n, 1), *p = ox_in(g, n, 3), *y = ox_out(g, n, 0);
	int64_t H, D, rot;
	/* batch and sequence may be run-time dims: kernel parameters (ox_cu_rt) */
	if (!x || !c || !y || x->layout || y->layout || c->layout || ox_shape_is_rt(g, &c->shape) ||
	    (p && (p->layout || p->dtype != OX_I64)) || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype ||
	    ox_rope_dims(g, n, &H, &D, &rot) || H < 0 || D < 0)
		return 1;
	const int dt = x->dtype, rank = x->shape.rank, il = ox_attr_int(n, "interleaved", 0) != 0;
	const ox_dim B = x->shape.d[0], S = x->shape.d[rank == 4 ? 2 : 1];
	const int64_t half = rot / 2, cols = c->shape.d[c->shape.rank - 1];
	if ((!ox_shape_is_rt(g, &x->shape) && !ox_shape_numel(&x->shape)) || (p && (p->shape.d[0] != B || p->shape.d[1] != S)) ||
	    (!p && (c->shape.d[0] != B || c->shape.d[1] != S)))
		return 1; /* (nothing to do, or the C target's error) */
	/* the index space in x's order: [B, S, H, D] (3-D) or [B, H, S, D] */
	const ox_dim dims[4] = {B, rank == 4 ? H : S, rank == 4 ? S : H, D};
	const char *sv = rank == 4 ? "i2" : "i1";
	const char *C = ox_cg_ntype(dt);
	ox_cu_rt R = {g, 0, {0}};
	char Ss[32];
	if (!ox_cu_rt_dim(&R, S, Ss, sizeof Ss))
		return 1;
	ox_buf body = {0};
	ox_buf_printf(&body, "\tconst OX_T *xr = x + (i - i3);\n\tif (i3 >= %lld) {\n\t\ty[i] = xr[i3];\n\t\treturn;\n\t}\n",
		      (long long)rot);
	if (p) {
		char src[96], np[32];
		ox_cg_snprintf(src, sizeof src, "ind[i0 * %s + %s]", Ss, sv);
		ox_cg_snprintf(np, sizeof np, "%lld$L", (long long)c->shape.d[0]);
		ox_cu_index_check(cg, &body, 1, "pos", src, np);
	} else {
		ox_buf_printf(&body, "\tconst $I pos = i0 * %s + %s;\n", Ss, sv);
	}
	char y1[1200], y2[1200];
	ox_cg_rope_pair(dt, y1, y2, sizeof y1);
	/* element i3 of the head: pair k, its first or second */
	if (il)
		ox_buf_puts(&body, "\tconst $I k = i3 / 2, first = i3 % 2 == 0;\n");
	else
		ox_buf_printf(&body, "\tconst $I k = i3 %% %lld, first = i3 < %lld;\n", (long long)half, (long long)half);
	char cr[64], sr[64];
	ox_cg_snprintf(cr, sizeof cr, "cs[pos * %lld$L + k]", (long long)cols);
	ox_cg_snprintf(sr, sizeof sr, "sn[pos * %lld$L + k]", (long long)cols);
	ox_buf_printf(&body, "\tconst %s co = %s, si = %s;\n", C, ox_cg_load(dt, cr), ox_cg_load(dt, sr));
	char x1[64], x2[64];
	ox_cg_snprintf(x1, sizeof x1, il ? "xr[2 * k]" : "xr[k]");
	if (il)
		ox_cg_snprintf(x2, sizeof x2, "xr[2 * k + 1]");
	else
		ox_cg_snprintf(x2, sizeof x2, "xr[k + %lld]", (long long)half);
	ox_buf_printf(&body, "\tconst %s x1 = %s, x2 = %s;\n\ty[i] = first ? %s : %s;\n", C, ox_cg_load(dt, x1),
		      ox_cg_load(dt, x2), y1, y2);
	char kname[200], params[320];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params,
		 "const OX_T *__restrict__ x, const OX_T *__restrict__ cs, const OX_T *__restrict__ sn, const int64_t *__restrict__ ind, OX_T *__restrict__ y%s",
		 p ? ", int *st" : "");
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: RotaryEmbedding, %lld heads of %lld, rotating %lld%s: a thread per element */\n",
		      cg->fname, (long long)H, (long long)D, (long long)rot, il ? " (interleaved pairs)" : " (two halves)");
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, 4, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&body);
		return 1;
	}
	ox_buf_free(&body);
	ox_cu_index_launch(cg, kname, dims, 4, p ? "in0, in1, in2, in3, out0, ox_status" : "in0, in1, in2, nullptr, out0", &R);
	ox_cu_finish(cg, kname, &t);
	return 0;
}
