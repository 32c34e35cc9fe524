/* cuda_rnn.c: CUDA kernels of the recurrent ops LSTM, GRU and RNN
 * (--target cuda), computing what templates/rnn_lstm.c, rnn_gru.c and
 * rnn_simple.c compute for the C target (codegen/c/emit_rnn.c), f32; the
 * sequence length and the batch may be run-time dims (kernel parameters,
 * the grids from the host's dims, the workspace for their tops). Three
 * kernels per node, in order on the stream:
 * 1. _proj: X W^T + Wb for every step, batch row and direction at once, a
 *    GEMM on 32 x 32 tiles into the workspace (ox_cu_ws);
 * 2. _rt (only when R does not fit in shared memory): R transposed into
 *    the workspace, [dir][gate][k][unit], so a warp's loads are contiguous;
 * 3. _kernel: the recurrence, a block per (batch row, direction) walking
 *    that row's own length as the C target does (reverse from its last
 *    valid step; Y past the length zero, Y_h / Y_c its last state, zeros
 *    for length 0). H (and C) live in shared memory, a thread per hidden
 *    unit; H is double-buffered so one barrier a step separates the read
 *    of H_{t-1} from the write of H_t (GRU with linear_before_reset 0
 *    needs all of r . H_{t-1} first: a second barrier).
 * Declined (the C function runs on the device): other dtypes, other
 * run-time dims, a sequence_lens that is not a constant (the C function checks
 * it at run time and fails with _ERR_INDEX, which a kernel cannot report)
 * or is out of range, a clip that is not positive, a state too large for
 * shared memory, a workspace over 1 GiB.
 */
#include "cuda_kernels.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

/* shared memory of a block: the state, and R when it fits too */
#define RNN_SMEM (48 * 1024)
/* the workspace in floats: X W^T (+ R transposed), 32-bit indices */
#define RNN_MAX_WS ((int64_t)1 << 28)

/* "return f(x);" for activation code (ir/infer_rnn.c's order) with alpha
 * a, beta b: templates/rnn.c's ox_rnn_act_f32, the C target's own
 * function (constant arguments: the compiler folds its switch) */
static void act_stmt(ox_buf *t, int lvl, int code, float a, float b)
{
	for (int i = 0; i < lvl; i++)
		ox_buf_puts(t, "\t");
	ox_buf_printf(t, "return ox_rnn_act_f32(%d, x, %s, ", code, ox_cg_lit(OX_F32, a));
	ox_buf_printf(t, "%s);\n", ox_cg_lit(OX_F32, b));
}

/* the tiled GEMM of step 1: p[d][r][c] = X row r . W[d] row c + Wb[d][c],
 * rows r = t * N + b over all steps and batch rows */
static void emit_proj(ox_buf *t, const char *kname, const char *M, long long GH, long long I, const char *S,
		      const char *N, int layout, int hasb, const char *rtp)
{
	char xrow[200], wb[64];
	if (layout) /* X [batch][seq][input] */
		ox_cg_snprintf(xrow, sizeof xrow, "(r %% %s * %s + r / %s) * %lld", N, S, N, I);
	else
		ox_cg_snprintf(xrow, sizeof xrow, "r * %lld", I);
	ox_cg_snprintf(wb, sizeof wb, hasb ? "bias[d * %lld + c]" : "0.0f", 2 * GH);
	ox_buf_printf(t, "__global__ void __launch_bounds__(256) %s_proj(const float *__restrict__ x, const float *__restrict__ w,\n"
			 "\t\tconst float *__restrict__ bias, float *__restrict__ p%s)\n"
			 "{\n"
			 "\t__shared__ float xs[32][33], wsh[32][33];\n"
			 "\tconst int tx = threadIdx.x %% 32, ty = threadIdx.x / 32;\n"
			 "\tconst $I r0 = ($I)blockIdx.x * 32, c0 = ($I)blockIdx.y * 32, d = blockIdx.z;\n"
			 "\tconst float *wd = w + d * %lld$L;\n"
			 "\tfloat acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
			 "\tfor ($I k0 = 0; k0 < %lld; k0 += 32) {\n"
			 "\t\tfor (int i = ty; i < 32; i += 8) {\n"
			 "\t\t\tconst $I r = r0 + i, c = c0 + i, k = k0 + tx;\n"
			 "\t\t\txs[i][tx] = r < %s && k < %lld ? x[%s + k] : 0.0f;\n",
		      kname, rtp, GH * I, I, M, I, xrow);
	ox_buf_printf(t, "\t\t\twsh[i][tx] = c < %lld && k < %lld ? wd[c * %lld + k] : 0.0f;\n"
			 "\t\t}\n"
			 "\t\t__syncthreads();\n"
			 "\t\tfor (int kk = 0; kk < 32; kk++) {\n"
			 "\t\t\tconst float wv = wsh[tx][kk];\n"
			 "\t\t\tfor (int i = 0; i < 4; i++)\n"
			 "\t\t\t\tacc[i] = fmaf(xs[ty + 8 * i][kk], wv, acc[i]);\n"
			 "\t\t}\n"
			 "\t\t__syncthreads();\n"
			 "\t}\n"
			 "\tconst $I c = c0 + tx;\n"
			 "\tif (c >= %lld)\n"
			 "\t\treturn;\n"
			 "\tconst float wb = %s;\n"
			 "\tfor (int i = 0; i < 4; i++) {\n"
			 "\t\tconst $I r = r0 + ty + 8 * i;\n"
			 "\t\tif (r < %s)\n"
			 "\t\t\tp[(d * %s + r) * %lld + c] = acc[i] + wb;\n"
			 "\t}\n"
			 "}\n"
			 "\n",
		      GH, I, I, GH, wb, M, M, GH);
}

int ox_cu_emit_rnn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int ndir, reverse, act[6];
	float alpha[6], beta[6];
	ox_dim hidden;
	if (ox_ir_rnn_decode(g, n, &ndir, &reverse, &hidden, act, alpha, beta))
		return -1;
	const int lstm = n->op == OX_OP_LSTM, gru = n->op == OX_OP_GRU;
	const int G = lstm ? 4 : gru ? 3 : 1, na = lstm ? 3 : gru ? 2 : 1;
	const int layout = n->opset >= 14 && ox_attr_int(n, "layout", 0) == 1;
	ox_value *x = ox_in(g, n, 0);
	if (x->shape.rank != 3 || ox_dim_is_rt(g, hidden) || hidden <= 0 || ox_dim_is_rt(g, x->shape.d[2]))
		return 1;
	/* every value f32 (sequence_lens i32), plain; run-time dims only the
	 * sequence length dS and the batch dN (their tops S and N size the
	 * workspace, R makes them the kernels' parameters) */
	const ox_dim dS = x->shape.d[layout ? 1 : 0], dN = x->shape.d[layout ? 0 : 1];
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id < 0)
			continue;
		const ox_value *v = &g->vals[id];
		if (v->layout || v->dtype != (k == 4 && k < n->nin ? OX_I32 : OX_F32))
			return 1;
		for (int i = 0; i < v->shape.rank; i++)
			if (ox_dim_is_rt(g, v->shape.d[i]) && v->shape.d[i] != dS && v->shape.d[i] != dN)
				return 1;
	}
	const long long H = hidden, I = x->shape.d[2];
	const long long S = ox_dim_is_rt(g, dS) ? ox_dim_hi(g, dS) : dS, N = ox_dim_is_rt(g, dN) ? ox_dim_hi(g, dN) : dN;
	if (S < 0 || N < 0)
		return 1;
	const long long GH = G * H, GHH = GH * H, M = S * N;
	ox_cu_rt R = {g, 0, {0}};
	char sS[32], sN[32], sM[80], rtp[256] = "";
	if (!ox_cu_rt_dim(&R, dS, sS, sizeof sS) || !ox_cu_rt_dim(&R, dN, sN, sizeof sN))
		return 1;
	if (R.n)
		ox_cg_snprintf(sM, sizeof sM, "(%s * %s)", sS, sN);
	else
		ox_cg_snprintf(sM, sizeof sM, "%lld", M);
	ox_buf rtpb = {0};
	ox_cu_rt_params(cg, &R, &rtpb, NULL);
	ox_cg_snprintf(rtp, sizeof rtp, "%s", rtpb.s ? rtpb.s : "");
	ox_buf_free(&rtpb);
	double clip = 0;
	if (ox_attr_get(n, "clip")) {
		clip = ox_attr_float(n, "clip", 0);
		if (!(clip > 0))
			return 1; /* the C emitter says why */
	}
	const int lbr = gru && ox_attr_int(n, "linear_before_reset", 0) != 0;
	const int input_forget = lstm && ox_attr_int(n, "input_forget", 0) != 0;
#define HAS_IN(k) (n->nin > (k) && n->in[k] >= 0)
#define HAS_OUT(k) (n->nout > (k) && n->out[k] >= 0)
	const int hasb = HAS_IN(3), haslen = HAS_IN(4), hash0 = HAS_IN(5), hasc0 = lstm && HAS_IN(6);
	const int hasp = lstm && HAS_IN(7), hasy = HAS_OUT(0), hasyh = HAS_OUT(1), hasyc = lstm && HAS_OUT(2);
	if (haslen) {
		/* a constant within [0, seq]: the C target checks a run-time one
		 * and fails, which a kernel cannot (the C emitter refuses a bad
		 * constant) */
		const ox_tensor *sl = ox_in_const(g, n, 4);
		if (!sl || R.n)
			return 1;
		for (long long b = 0; b < N; b++)
			if (ox_tensor_get_i64(sl, b) < 0 || ox_tensor_get_i64(sl, b) > S)
				return 1;
	}
	/* shared memory: H double-buffered; C (LSTM); z and r . H (GRU, lbr 0) */
	const long long state = (lstm ? 3 : gru && !lbr ? 4 : 2) * H;
	if (state * 4 > RNN_SMEM)
		return 1;
	const int rsmem = (state + GHH) * 4 <= RNN_SMEM;
	const long long PE = ndir * M * GH, RTE = rsmem ? 0 : ndir * GHH;
	if (PE + RTE > RNN_MAX_WS || (GH + 31) / 32 > 65535)
		return 1;
	if (N == 0)
		return 0; /* no batch row: every output is empty */
	if ((PE + RTE) * 4 > cg->cu_ws)
		cg->cu_ws = (PE + RTE) * 4;
	const int NT = H >= 512 ? 512 : (int)((H + 31) / 32 * 32);

	char kname[200], ca[64];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s, %s, hidden %lld: seq %s, batch %s, input %lld, layout %d",
		      cg->fname, n->optype, ndir == 2 ? "bidirectional" : reverse ? "reverse" : "forward", H, sS, sN,
		      I, layout);
	ox_buf_printf(&t, "%s%s%s */\n",
		      haslen ? ", sequence_lens" : "", gru ? (lbr ? ", linear_before_reset" : "") : "",
		      input_forget ? ", input_forget" : "");
	/* the activations: f (gates), g (cell / hidden), h (LSTM output), per
	 * direction when they differ */
	static const char *const aname[3] = {"f", "g", "h"};
	if (ox_cg_use(cg, "rnn", OX_F32)) /* (ox_rnn_act_f32) */
		return -1;
	for (int k = 0; k < na; k++) {
		ox_buf_printf(&t, "static __device__ __forceinline__ float %s_%s(int d, float x)\n{\n", kname, aname[k]);
		int differ = ndir == 2 && (act[k] != act[na + k] || alpha[k] != alpha[na + k] || beta[k] != beta[na + k]);
		if (differ) {
			ox_buf_puts(&t, "\tif (d == 1) {\n");
			act_stmt(&t, 2, act[na + k], alpha[na + k], beta[na + k]);
			ox_buf_puts(&t, "\t}\n");
		} else {
			ox_buf_puts(&t, "\t(void)d;\n");
		}
		act_stmt(&t, 1, act[k], alpha[k], beta[k]);
		ox_buf_puts(&t, "}\n\n");
	}
	/* clip bounds every gate's input before its activation */
	ox_cg_snprintf(ca, sizeof ca, "%s", ox_cg_lit(OX_F32, clip));
	ox_buf_printf(&t, "static __device__ __forceinline__ float %s_clip(float x)\n{\n", kname);
	if (clip > 0)
		ox_buf_printf(&t, "\treturn x > %s ? %s : x < -%s ? -%s : x;\n}\n\n", ca, ca, ca, ca);
	else
		ox_buf_puts(&t, "\treturn x; /* no clip */\n}\n\n");

	ox_buf_printf(&t, "/* %s_proj: X W^T + Wb, [%s x %lld] x [%lld x %lld] per direction, 32 x 32 tiles */\n", kname,
		      sM, I, I, GH);
	emit_proj(&t, kname, sM, GH, I, sS, sN, layout, hasb, rtp);
	if (!rsmem) {
		ox_buf_printf(&t, "/* %s_rt: R transposed, [dir][gate][k][unit] */\n"
				  "__global__ void __launch_bounds__(256) %s_rt(const float *__restrict__ R, float *__restrict__ rt)\n"
				  "{\n"
				  "\tconst $I i = ($I)blockIdx.x * 256 + threadIdx.x;\n"
				  "\tif (i >= %lld$L)\n"
				  "\t\treturn;\n"
				  "\tconst $I k = i %% %lld, row = i / %lld %% %lld, d = i / %lld;\n",
			      kname, kname, ndir * GHH, H, H, GH, GHH);
		ox_buf_printf(&t, "\trt[((d * %d + row / %lld) * %lld + k) * %lld + row %% %lld] = R[i];\n"
				  "}\n"
				  "\n",
			      G, H, H, H, H);
	}

	/* the recurrence */
	ox_buf_printf(&t, "/* %s: the recurrence, a block per (batch row, direction), a thread per hidden unit;\n"
			  " * R%s */\n",
		      kname, rsmem ? " in shared memory" : " transposed by _rt");
	/* (NT, 1): with NT alone ptxas caps the registers for full occupancy
	 * and spills; the blocks are few anyway */
	ox_buf_printf(&t, "__global__ void __launch_bounds__(%d, 1) %s(const float *__restrict__ p, const float *__restrict__ R,\n"
			  "\t\tconst float *__restrict__ B, const int *__restrict__ lens, const float *__restrict__ h0,\n",
		      NT, kname);
	if (lstm)
		ox_buf_puts(&t, "\t\tconst float *__restrict__ c0, const float *__restrict__ P,\n");
	ox_buf_printf(&t, "\t\tfloat *__restrict__ y, float *__restrict__ yh%s%s)\n{\n", lstm ? ", float *__restrict__ yc" : "",
		      rtp);
	ox_buf_printf(&t, "\t__shared__ float hs[2][%lld]", H);
	if (lstm)
		ox_buf_printf(&t, ", cs[%lld]", H);
	if (gru && !lbr)
		ox_buf_printf(&t, ", zs[%lld], rh[%lld]", H, H);
	if (rsmem)
		ox_buf_printf(&t, ", rs[%lld]", GHH);
	ox_buf_puts(&t, ";\n\tconst int tid = threadIdx.x;\n\tconst $I b = blockIdx.x, d = blockIdx.y;\n");
	if (rsmem) {
		ox_buf_printf(&t, "\tfor ($I i = tid; i < %lld$L; i += %d) {\n"
				  "\t\tconst $I k = i %% %lld, row = i / %lld;\n",
			      GHH, NT, H, H);
		ox_buf_printf(&t, "\t\trs[(row / %lld * %lld + k) * %lld + row %% %lld] = R[d * %lld$L + i];\n"
				  "\t}\n"
				  "\tconst float *rt = rs;\n",
			      H, H, H, H, GHH);
	} else
		ox_buf_printf(&t, "\tconst float *rt = R + d * %lld$L;\n", GHH);
	/* offsets of this (batch row, direction): state [d][b] or [b][d], Y
	 * [t][d][b] or [b][t][d] (layout 1) */
	if (hash0 || hasc0 || hasyh || hasyc)
	{
		if (layout)
			ox_buf_printf(&t, "\tconst $I so = (b * %d + d) * %lld;\n", ndir, H);
		else
			ox_buf_printf(&t, "\tconst $I so = (d * %s + b) * %lld;\n", sN, H);
	}
	char sd[96];
	if (hasy && layout) {
		if (ox_dim_is_rt(g, dS))
			ox_cg_snprintf(sd, sizeof sd, "%s * %d", sS, ndir);
		else
			ox_cg_snprintf(sd, sizeof sd, "%lld", S * ndir);
		ox_buf_printf(&t, "\tconst $I yb = (b * %s + d) * %lld, yt = %lld;\n", sd, H, ndir * H);
	} else if (hasy) {
		if (ox_dim_is_rt(g, dN))
			ox_cg_snprintf(sd, sizeof sd, "%lld * %s", ndir * H, sN);
		else
			ox_cg_snprintf(sd, sizeof sd, "%lld", ndir * N * H);
		ox_buf_printf(&t, "\tconst $I yb = (d * %s + b) * %lld, yt = %s;\n", sN, H, sd);
	}
	if (hasb)
		ox_buf_printf(&t, "\tconst float *rb = B + d * %lld + %lld; /* Rb */\n", 2 * GH, GH);
	if (hasp)
		ox_buf_printf(&t, "\tconst float *pp = P + d * %lld; /* peepholes i, o, f */\n", 3 * H);
	if (haslen)
		ox_buf_printf(&t, "\tconst int l = lens[b];\n\tconst $I len = l < 0 ? 0 : l > %s ? %s : l;\n", sS, sS);
	else
		ox_buf_printf(&t, "\tconst $I len = %s;\n", sS);
	ox_buf_printf(&t, "\tfor ($I j = tid; j < %lld; j += %d) {\n\t\ths[0][j] = %s;\n", H, NT,
		      hash0 ? "h0[so + j]" : "0.0f");
	if (lstm)
		ox_buf_printf(&t, "\t\tcs[j] = %s;\n", hasc0 ? "c0[so + j]" : "0.0f");
	ox_buf_puts(&t, "\t}\n\t__syncthreads();\n");
	/* the steps: time t = s, or len - 1 - s walking backwards */
	const char *tof = ndir == 2 ? "d == 1 ? len - 1 - s : s" : reverse ? "len - 1 - s" : "s";
	ox_buf_printf(&t, "\tfor ($I s = 0; s < len; s++) {\n"
			  "\t\tconst $I t = %s;\n"
			  "\t\tconst float *hp = hs[s %% 2];\n\t\tfloat *hn = hs[(s + 1) %% 2];\n"
			  "\t\tconst float *pt = p + ((d * %s + t) * %s + b) * %lld;\n",
		      tof, sS, sN, GH);
	ox_buf_printf(&t, "\t\tfor ($I j = tid; j < %lld; j += %d) {\n", H, NT);
	char rbv[4][48];
	for (int q = 0; q < G; q++)
		ox_cg_snprintf(rbv[q], sizeof rbv[q], !hasb ? "0.0f" : q ? "rb[%lld + j]" : "rb[j]", q * H);
	if (lstm) {
		/* gates i, o, f, c */
		ox_buf_printf(&t, "\t\t\tfloat a0 = pt[j] + %s, a1 = pt[%lld + j] + %s;\n"
				  "\t\t\tfloat a2 = pt[%lld + j] + %s, a3 = pt[%lld + j] + %s;\n",
			      rbv[0], H, rbv[1], 2 * H, rbv[2], 3 * H, rbv[3]);
		ox_buf_printf(&t, "\t\t\tfor ($I k = 0; k < %lld; k++) {\n\t\t\t\tconst float hk = hp[k];\n"
				  "\t\t\t\ta0 = fmaf(rt[k * %lld + j], hk, a0);\n"
				  "\t\t\t\ta1 = fmaf(rt[%lld + k * %lld + j], hk, a1);\n"
				  "\t\t\t\ta2 = fmaf(rt[%lld + k * %lld + j], hk, a2);\n"
				  "\t\t\t\ta3 = fmaf(rt[%lld + k * %lld + j], hk, a3);\n\t\t\t}\n",
			      H, H, H * H, H, 2 * H * H, H, 3 * H * H, H);
		char pi[64] = "", po[64] = "", pf[64] = "";
		if (hasp) {
			ox_cg_snprintf(pi, sizeof pi, " + pp[j] * cp");
			ox_cg_snprintf(po, sizeof po, " + pp[%lld + j] * cn", H);
			ox_cg_snprintf(pf, sizeof pf, " + pp[%lld + j] * cp", 2 * H);
		}
		ox_buf_puts(&t, "\t\t\tconst float cp = cs[j];\n");
		ox_buf_printf(&t, "\t\t\tconst float gi = %s_f(d, %s_clip(a0%s));\n", kname, kname, pi);
		if (input_forget)
			ox_buf_puts(&t, "\t\t\tconst float gf = 1.0f - gi;\n\t\t\t(void)a2;\n");
		else
			ox_buf_printf(&t, "\t\t\tconst float gf = %s_f(d, %s_clip(a2%s));\n", kname, kname, pf);
		ox_buf_printf(&t, "\t\t\tconst float gc = %s_g(d, %s_clip(a3));\n"
				  "\t\t\tconst float cn = gf * cp + gi * gc;\n"
				  "\t\t\tconst float go = %s_f(d, %s_clip(a1%s));\n"
				  "\t\t\tconst float hv = go * %s_h(d, cn);\n"
				  "\t\t\tcs[j] = cn;\n",
			      kname, kname, kname, kname, po, kname);
	} else if (gru && !lbr) {
		/* z and r of every unit first: the h gate reads all of r . H */
		ox_buf_printf(&t, "\t\t\tfloat az = pt[j] + %s, ar = pt[%lld + j] + %s;\n", rbv[0], H, rbv[1]);
		ox_buf_printf(&t, "\t\t\tfor ($I k = 0; k < %lld; k++) {\n\t\t\t\tconst float hk = hp[k];\n"
				  "\t\t\t\taz = fmaf(rt[k * %lld + j], hk, az);\n"
				  "\t\t\t\tar = fmaf(rt[%lld + k * %lld + j], hk, ar);\n\t\t\t}\n",
			      H, H, H * H, H);
		ox_buf_printf(&t, "\t\t\tzs[j] = %s_f(d, %s_clip(az));\n"
				  "\t\t\trh[j] = %s_f(d, %s_clip(ar)) * hp[j];\n"
				  "\t\t}\n\t\t__syncthreads();\n",
			      kname, kname, kname, kname);
		ox_buf_printf(&t, "\t\tfor ($I j = tid; j < %lld; j += %d) {\n\t\t\tfloat ah = %s;\n", H, NT, rbv[2]);
		ox_buf_printf(&t, "\t\t\tfor ($I k = 0; k < %lld; k++)\n\t\t\t\tah = fmaf(rt[%lld + k * %lld + j], rh[k], ah);\n",
			      H, 2 * H * H, H);
		ox_buf_printf(&t, "\t\t\tconst float z = zs[j], hh = %s_g(d, %s_clip(pt[%lld + j] + ah));\n"
				  "\t\t\tconst float hv = (1.0f - z) * hh + z * hp[j];\n",
			      kname, kname, 2 * H);
	} else if (gru) {
		/* linear_before_reset: r scales H R_h^T + Rb_h */
		ox_buf_printf(&t, "\t\t\tfloat az = pt[j] + %s, ar = pt[%lld + j] + %s, ah = %s;\n", rbv[0], H, rbv[1], rbv[2]);
		ox_buf_printf(&t, "\t\t\tfor ($I k = 0; k < %lld; k++) {\n\t\t\t\tconst float hk = hp[k];\n"
				  "\t\t\t\taz = fmaf(rt[k * %lld + j], hk, az);\n"
				  "\t\t\t\tar = fmaf(rt[%lld + k * %lld + j], hk, ar);\n"
				  "\t\t\t\tah = fmaf(rt[%lld + k * %lld + j], hk, ah);\n\t\t\t}\n",
			      H, H, H * H, H, 2 * H * H, H);
		ox_buf_printf(&t, "\t\t\tconst float z = %s_f(d, %s_clip(az)), r = %s_f(d, %s_clip(ar));\n"
				  "\t\t\tconst float hh = %s_g(d, %s_clip(pt[%lld + j] + r * ah));\n"
				  "\t\t\tconst float hv = (1.0f - z) * hh + z * hp[j];\n",
			      kname, kname, kname, kname, kname, kname, 2 * H);
	} else {
		ox_buf_printf(&t, "\t\t\tfloat a = pt[j] + %s;\n", rbv[0]);
		ox_buf_printf(&t, "\t\t\tfor ($I k = 0; k < %lld; k++)\n\t\t\t\ta = fmaf(rt[k * %lld + j], hp[k], a);\n", H, H);
		ox_buf_printf(&t, "\t\t\tconst float hv = %s_f(d, %s_clip(a));\n", kname, kname);
	}
	ox_buf_printf(&t, "\t\t\thn[j] = hv;\n%s\t\t}\n\t\t__syncthreads();\n\t}\n", hasy ? "\t\t\ty[t * yt + yb + j] = hv;\n" : "");
	/* the last state (zeros for length 0), Y past the length zero */
	if (hasyh)
		ox_buf_puts(&t, "\tconst float *hf = hs[len % 2];\n");
	if (hasyh || hasyc || (hasy && haslen)) {
		ox_buf_printf(&t, "\tfor ($I j = tid; j < %lld; j += %d) {\n", H, NT);
		if (hasyh)
			ox_buf_puts(&t, "\t\tyh[so + j] = len ? hf[j] : 0.0f;\n");
		if (hasyc)
			ox_buf_puts(&t, "\t\tyc[so + j] = len ? cs[j] : 0.0f;\n");
		if (hasy && haslen)
			ox_buf_printf(&t, "\t\tfor ($I t = len; t < %s; t++)\n\t\t\ty[t * yt + yb + j] = 0.0f;\n", sS);
		ox_buf_puts(&t, "\t}\n");
	}
	ox_buf_puts(&t, "}\n\n");

	/* the launches */
	ox_cg_printf(cg, "\t/* %s %s: X W^T + Wb of every step into the workspace, then the recurrence */\n", n->optype,
		     ndir == 2 ? "bidirectional" : reverse ? "reverse" : "forward");
	/* the run's S and N (host text) when they are run-time dims */
	ox_buf rta = {0};
	ox_cu_rt_params(cg, &R, NULL, &rta);
	const char *ra = rta.s ? rta.s : "";
	const char *hS = ox_cg_dim(cg, dS), *hN = ox_cg_dim(cg, dN);
	if (R.n) {
		ox_cg_printf(cg, "\tif ((long)(%s) * (long)(%s) > 0)\n"
				 "\t\tOX_LAUNCH(%s_proj, dim3((unsigned)(((long)(%s) * (long)(%s) + 31) / 32), ",
			     hS, hN, kname, hS, hN);
		ox_cg_printf(cg, "%lld, %d), 256, 0, ox_st, in0, in1, %s, ox_cu_ws%s);\n",
			     (GH + 31) / 32, ndir, hasb ? "in3" : "nullptr", ra);
	} else if (M > 0)
		ox_cg_printf(cg, "\tOX_LAUNCH(%s_proj, dim3(%lld, %lld, %d), 256, 0, ox_st, in0, in1, %s, ox_cu_ws);\n", kname,
			     (M + 31) / 32, (GH + 31) / 32, ndir, hasb ? "in3" : "nullptr");
	if (!rsmem)
		ox_cg_printf(cg, "\tOX_LAUNCH(%s_rt, %lld, 256, 0, ox_st, in2, ox_cu_ws + %lld);\n", kname,
			     (ndir * GHH + 255) / 256, PE);
	char rarg[64];
	ox_cg_snprintf(rarg, sizeof rarg, rsmem ? "in2" : "ox_cu_ws + %lld", PE);
	if (ox_dim_is_rt(g, dN)) { /* (a run with no batch row: nothing to do) */
		ox_cg_printf(cg, "\tif ((long)(%s) > 0)\n",
			     hN);
		ox_cg_printf(cg, "\t\tOX_LAUNCH(%s, dim3((unsigned)(%s), %d), %d, 0, ox_st, ox_cu_ws, %s, %s, %s, %s",
			     kname, hN, ndir, NT, rarg, hasb ? "in3" : "nullptr", haslen ? "in4" : "nullptr",
			     hash0 ? "in5" : "nullptr");
	} else
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %d), %d, 0, ox_st, ox_cu_ws, %s, %s, %s, %s", kname, N, ndir, NT, rarg,
			     hasb ? "in3" : "nullptr", haslen ? "in4" : "nullptr", hash0 ? "in5" : "nullptr");
	if (lstm)
		ox_cg_printf(cg, ", %s, %s", hasc0 ? "in6" : "nullptr", hasp ? "in7" : "nullptr");
	ox_cg_printf(cg, ", %s, %s", hasy ? "out0" : "nullptr", hasyh ? "out1" : "nullptr");
	if (lstm)
		ox_cg_printf(cg, ", %s", hasyc ? "out2" : "nullptr");
	ox_cg_printf(cg, "%s);\n", ra);
	ox_buf_free(&rta);
	ox_cu_finish(cg, kname, &t);
	return 0;
#undef HAS_IN
#undef HAS_OUT
}
