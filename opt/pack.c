/* pack.c: weights laid out in the order the kernels read them, for the
 * tiles of the blocked convolutions and of the GEMM.
 *
 * For each Conv the layout pass blocked (its output is OX_L_BLOCKED), the
 * tile is chosen from the target's table (ir/target.h) by a small cost
 * model (ox_opt_conv_geo), and the weights become a new constant in that
 * tile's order: OX_L_CONVW (groups of `ocb` output vectors, the reduction
 * in the order the micro-kernel walks it) or OX_L_DWW for depthwise; the
 * bias becomes an OX_L_PADDED [M] vector (a zero one when there was none).
 * A Conv with pads gets scratch memory for a zero-bordered copy of its
 * input, so its kernels never test borders. A Conv opt/winograd.c gave
 * Winograd weights (OX_L_WINOW) keeps them; its geometry (tiles, blocks,
 * task slots) comes from the same function, and its scratch is the
 * slots'. A constant B of a Gemm or MatMul is packed for the tile of
 * ox_opt_gemm_geo. Those functions and the cost model of both algorithms
 * (ox_opt_conv_cycles, which opt/winograd.c compares) are shared analyses
 * in opt/analysis.c: codegen reads the same geometry through them, so the
 * two cannot disagree. Run-time sizes (batch, image, GEMM rows) are
 * weighed at their tops, and scratch is sized for them.
 * The integer kernels of int8 models (templates/qconv.c) get theirs too:
 * a QConv's weights as OX_L_QCONVW (or OX_L_QDWW, depthwise) and scratch
 * for its copied input (ox_opt_qconv_geo), a MatMulInteger's constant B
 * as OX_L_QGEMMB (ox_opt_qmm_geo). An f32 LSTM's W and R are transposed
 * (OX_L_RNNT, ox_opt_lstm_t) for templates/rnn_lstm_t.c. A MatMulNBits
 * of many rows keeps its packed weights and gets scratch for the panels
 * it dequantizes them into for the GEMM's tiles (ox_opt_mmnb_tile).
 * On the GPU (g->gpu) the kernels read plain values: only NonMaxSuppression's
 * scratch grows here, to what its CUDA kernels need.
 * Requires: the layout pass. Invalidates: nothing (constants are added,
 * the old ones are left for codegen to skip when unused); node positions
 * when a Cast is folded into a MatMulInteger (compacted), uses (refilled).
 */
#include "opt.h"
#include <string.h>

/* ---- packing ---- */

static ox_id new_const(ox_graph *g, int dtype, const char *name, const char *what, int64_t numel, const ox_shape *logical,
		       int layout, int p0, int p1, int p2)
{
	ox_tensor *t = ox_ir_new_tensor(g, dtype, &(ox_shape){1, {numel}});
	t->shape = *logical;
	char buf[256];
	snprintf(buf, sizeof buf, "%s@%s", name, what);
	ox_id id = ox_ir_add_const(g, buf, t);
	ox_value *v = &g->vals[id];
	v->layout = layout, v->lp[0] = p0, v->lp[1] = p1, v->lp[2] = p2;
	if (ox_value_storage_numel(v) != numel)
		ox_die("pack: %s holds %lld values, its layout %lld", buf, (long long)numel,
		       (long long)ox_value_storage_numel(v));
	return id;
}

/* the bias (or zeros) as an [M] vector padded to the vector width */
static ox_id pack_bias(ox_graph *g, ox_node *n, const ox_convgeo *cg)
{
	int64_t mp = (cg->M + cg->b - 1) / cg->b * cg->b;
	const ox_value *bv = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	const ox_tensor *bt = bv ? bv->data : NULL; /* new_const may move g->vals */
	ox_id id = new_const(g, OX_F32, bv ? bv->name : n->name, bv ? "blocked" : "zero bias", mp,
			     &(ox_shape){1, {cg->M}}, OX_L_PADDED, cg->b, 0, 0);
	float *dst = g->vals[id].data->data;
	for (int64_t m = 0; bt && m < cg->M; m++)
		dst[m] = (float)ox_tensor_get_f64(bt, m);
	return id;
}

static void pack_conv(ox_graph *g, ox_node *n, const ox_convgeo *cg)
{
	const ox_value *wv = ox_in(g, n, 1);
	const float *w = wv->data->data;
	int b = cg->b;
	int64_t M = cg->M, KH = cg->KH, KW = cg->KW, taps = KH * KW;
	int64_t mv = (M + b - 1) / b, mp = mv * b;
	ox_id id;
	if (cg->wm) {
		id = n->in[1]; /* transformed and packed by opt/winograd.c */
	} else if (cg->depthwise) {
		/* [C/b][KH][KW][b] */
		id = new_const(g, OX_F32, wv->name, "dww", mp * taps, &wv->shape, OX_L_DWW, b, 0, 0);
		float *dst = g->vals[id].data->data;
		for (int64_t m = 0; m < M; m++)
			for (int64_t t = 0; t < taps; t++)
				dst[(m / b * taps + t) * b + m % b] = w[m * taps + t];
	} else {
		/* groups of ocb output vectors; in each, the reduction as the
		 * kernel walks it: [C/b][KH][KW][b rows] for a blocked input,
		 * [KH][KW][C] for a plain one; a row holds the group's width */
		int64_t C = cg->C, ib = cg->inblocked ? b : 0;
		id = new_const(g, OX_F32, wv->name, "convw", mp * C * taps, &wv->shape, OX_L_CONVW, b, cg->ocb, (int)ib);
		float *dst = g->vals[id].data->data;
		int64_t at = 0;
		for (int64_t g0 = 0; g0 < mv; g0 += cg->ocb) {
			int64_t gw = (mv - g0 < cg->ocb ? mv - g0 : cg->ocb) * b;
			for (int64_t r = 0; r < C * taps; r++) {
				/* row r of the walk -> input channel c, tap t */
				int64_t c, t;
				if (ib) {
					int64_t cb = r / (b * taps), rest = r % (b * taps), blk = C - cb * b < b ? C - cb * b : b;
					/* within block cb: taps outer, the block's channels inner */
					if (cb * b * taps + blk * taps <= r)
						ox_die("pack: row %lld past the walk", (long long)r);
					t = rest / blk, c = cb * b + rest % blk;
				} else {
					t = r / C, c = r % C;
				}
				for (int64_t j = 0; j < gw; j++) {
					int64_t m = g0 * b + j;
					dst[at++] = m < M ? w[(m * C + c) * taps + t] : 0;
				}
			}
		}
		if (at != mp * C * taps)
			ox_die("pack: wrote %lld of %lld floats", (long long)at, (long long)(mp * C * taps));
	}
	n->in[1] = id;
	ox_id bias = pack_bias(g, n, cg);
	if (n->nin < 3) { /* room for the bias input */
		ox_id *in = ox_ir_alloc(g, 4 * sizeof *in);
		memcpy(in, n->in, (size_t)n->nin * sizeof *in);
		n->in = in;
		n->nin = 3;
	}
	n->in[2] = bias;
	if (cg->copy) {
		int64_t cs = cg->inblocked ? (cg->C + b - 1) / b * b : cg->C;
		ox_ir_add_scratch(g, n, cg->N * cs * cg->IHp * cg->IWp * 4);
	}
	if (cg->wm)
		ox_ir_add_scratch(g, n, cg->wscratch * 4);
}

/* B as [N/(ocb b)][K][group width] (the last group narrower), columns
 * past N zero; Gemm's transB and alpha are applied here, its C becomes a
 * bias vector (beta C, padded), and the node says transB 0, alpha 1 */
static void pack_gemm(ox_graph *g, ox_node *n, const ox_gemmgeo *q)
{
	/* new_const may move g->vals: keep the (arena) tensors, not values */
	const ox_tensor *bt = ox_in(g, n, 1)->data;
	int b = q->b, tb = n->op == OX_OP_Gemm && ox_attr_int(n, "transB", 0);
	double alpha = n->op == OX_OP_Gemm ? ox_attr_float(n, "alpha", 1.0f) : 1.0;
	int64_t K = q->K, N = q->N, mv = (N + b - 1) / b;
	ox_id id = new_const(g, OX_F32, ox_in(g, n, 1)->name, "gemmb", K * mv * b, &(ox_shape){2, {K, N}}, OX_L_GEMMB,
			     b, q->ocb, 0);
	float *dst = g->vals[id].data->data;
	int64_t at = 0;
	for (int64_t g0 = 0; g0 < mv; g0 += q->ocb) {
		int64_t gw = (mv - g0 < q->ocb ? mv - g0 : q->ocb) * b;
		for (int64_t k = 0; k < K; k++)
			for (int64_t j = 0; j < gw; j++) {
				int64_t c = g0 * b + j;
				double v = c < N ? ox_tensor_get_f64(bt, tb ? c * K + k : k * N + c) : 0;
				dst[at++] = (float)(alpha * v);
			}
	}
	n->in[1] = id;
	if (n->op != OX_OP_Gemm)
		return;
	const ox_value *c = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	const ox_tensor *ct = c ? c->data : NULL;
	double beta = ox_attr_float(n, "beta", 1.0f);
	ox_id bias = new_const(g, OX_F32, c ? c->name : n->name, "bias", mv * b, &(ox_shape){1, {N}}, OX_L_PADDED, b, 0, 0);
	float *bd = g->vals[bias].data->data;
	for (int64_t j = 0; ct && j < N; j++)
		bd[j] = (float)(beta * ox_tensor_get_f64(ct, ox_tensor_numel(ct) == 1 ? 0 : j));
	if (n->nin < 3) {
		ox_id *in = ox_ir_alloc(g, 4 * sizeof *in);
		memcpy(in, n->in, (size_t)n->nin * sizeof *in);
		n->in = in;
		n->nin = 3;
	}
	n->in[2] = bias;
	/* the attributes now describe the packed operands */
	ox_attr *at2 = ox_ir_alloc(g, (size_t)(n->nattr + 1) * sizeof *at2);
	int na = 0;
	for (int i = 0; i < n->nattr; i++)
		if (strcmp(n->attrs[i].name, "transB") && strcmp(n->attrs[i].name, "alpha") &&
		    strcmp(n->attrs[i].name, "beta"))
			at2[na++] = n->attrs[i];
	n->attrs = at2;
	n->nattr = na;
}

/* NonMaxSuppression's scratch (ir/infer_index.c sizes the C function's)
 * grown to what its CUDA kernels need (constant shapes: codegen/cuda/
 * cuda_index.c), when that is more and at most 1 GiB */
static void nms_gpu_scratch(ox_graph *g, ox_node *n)
{
	const ox_value *bx = ox_in(g, n, 0), *sc = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (!n->scratch || !y || bx->shape.rank != 3 || sc->shape.rank != 3)
		return;
	const ox_dim B = bx->shape.d[0], N = bx->shape.d[1], C = sc->shape.d[1];
	if (B < 0 || C < 0 || N <= 0)
		return;
	/* (y's rows are at most B * C * the boxes kept a pair) */
	const int64_t most = ox_dim_hi(g, y->shape.d[0]), K = B * C > 0 ? most / (B * C) : 0;
	int64_t ko, co, oo;
	const int64_t bytes = ox_opt_nms_gpu_scratch(B * C, N, K, &ko, &co, &oo);
	if (bytes > g->vals[n->out[n->nout - 1]].shape.d[0] && bytes <= ((int64_t)1 << 30))
		ox_ir_add_scratch(g, n, bytes);
}

/* A QConv's 8-bit weights as OX_L_QCONVW (ir.h) for the packed integer
 * convolution: signed bytes, blocks of 8 output channels, the taps outer
 * and input channels in fours inner, as the kernel walks them; the ones
 * block after them when a weight zero point is not 0. uint8 weights less
 * 128 and their zero points (ox_wz) too: the node then reads int8 weights */
static void pack_qconv(ox_graph *g, ox_node *n, const ox_qconvgeo *q)
{
	const ox_value *wv = ox_in(g, n, 1);
	const uint8_t *w = wv->data->data;
	int sub = wv->dtype == OX_U8 ? 128 : 0;
	int64_t taps = q->KH * q->KW, blk = taps * q->C4 * 32, numel = (q->G * q->MB + q->ones) * blk;
	ox_id id = new_const(g, OX_I8, wv->name, "qconvw", numel, &wv->shape, OX_L_QCONVW, (int)q->G, q->ones, 0);
	int8_t *dst = g->vals[id].data->data; /* (zeros past the channels) */
	for (int64_t m = 0; m < q->M; m++) {
		int64_t gi = m / q->Mg, mg = m % q->Mg, b = gi * q->MB + mg / 8;
		for (int64_t c = 0; c < q->Cg; c++)
			for (int64_t tp = 0; tp < taps; tp++)
				dst[b * blk + ((tp * q->C4 + c / 4) * 8 + mg % 8) * 4 + c % 4] =
					(int8_t)((int)w[(m * q->Cg + c) * taps + tp] - sub);
	}
	if (q->ones)
		for (int64_t r = 0; r < taps * q->C4; r++)
			memset(dst + q->G * q->MB * blk + r * 32, 1, 4);
	n->in[1] = id;
	/* the weights' zero points, in the signed bytes' domain */
	for (int i = 0; i < n->nattr && sub; i++)
		if (!strcmp(n->attrs[i].name, "ox_wz") && n->attrs[i].type == OX_AT_INTS) {
			int64_t *z = ox_ir_alloc(g, (size_t)(n->attrs[i].n + 1) * sizeof *z);
			for (int k = 0; k < n->attrs[i].n; k++)
				z[k] = n->attrs[i].ints[k] - sub;
			n->attrs[i].ints = z;
		}
	ox_ir_add_scratch(g, n, q->scratch);
}

/* A depthwise QConv's 8-bit weights as OX_L_QDWW: int16, each less its
 * zero point (so the kernel's sums need no correction) */
static void pack_qdw(ox_graph *g, ox_node *n, const ox_qconvgeo *q)
{
	const ox_value *wv = ox_in(g, n, 1);
	const void *w = wv->data->data;
	int u8 = wv->dtype == OX_U8;
	int64_t taps = q->KH * q->KW;
	const int64_t *wz = NULL;
	int nz = ox_attr_ints(n, "ox_wz", &wz);
	ox_id id = new_const(g, OX_I16, wv->name, "qdww", q->M * taps, &wv->shape, OX_L_QDWW, 0, 0, 0);
	int16_t *dst = g->vals[id].data->data;
	for (int64_t m = 0; m < q->M; m++)
		for (int64_t k = 0; k < taps; k++) {
			int64_t v = u8 ? ((const uint8_t *)w)[m * taps + k] : ((const int8_t *)w)[m * taps + k];
			dst[m * taps + k] = (int16_t)(v - (nz > 0 ? wz[nz == 1 ? 0 : m] : 0));
		}
	n->in[1] = id;
	ox_ir_add_scratch(g, n, q->scratch);
}

/* A MatMulInteger's constant B as OX_L_QGEMMB: signed bytes (uint8 less
 * 128, said in lp[0]) in blocks of 16 columns, rows in fours */
static void pack_qmm(ox_graph *g, ox_node *n, const ox_qmmgeo *q)
{
	const ox_value *bv = ox_in(g, n, 1);
	const uint8_t *b = bv->data->data;
	int sub = bv->dtype == OX_U8 ? 128 : 0;
	int64_t K4 = (q->K + 3) / 4, NB = (q->N + 15) / 16;
	ox_id id = new_const(g, OX_I8, bv->name, "qgemmb", NB * K4 * 64, &bv->shape, OX_L_QGEMMB, sub, 0, 0);
	int8_t *dst = g->vals[id].data->data;
	for (int64_t k = 0; k < q->K; k++)
		for (int64_t j = 0; j < q->N; j++)
			dst[((j / 16 * K4 + k / 4) * 16 + j % 16) * 4 + k % 4] = (int8_t)((int)b[k * q->N + j] - sub);
	n->in[1] = id;
	/* a Cast to float that alone reads the product (quantize_dynamic's
	 * form) is folded in: the kernel stores floats (ox_f32) */
	ox_node *c = ox_ir_sole_reader(g, n->out[0]);
	if (c && c->op == OX_OP_Cast && c->nout == 1 && g->vals[c->out[0]].dtype == OX_F32) {
		n->out[0] = c->out[0];
		g->vals[n->out[0]].producer = (ox_id)(n - g->nodes);
		c->dead = 1;
		ox_attr *at = ox_ir_add_attr(g, n, "ox_f32", OX_AT_INT);
		at->i = 1;
	}
}

/* An LSTM's W and R transposed per direction (OX_L_RNNT) */
static void pack_lstm(ox_graph *g, ox_node *n)
{
	for (int k = 1; k <= 2; k++) {
		const ox_value *v = ox_in(g, n, k);
		const float *src = v->data->data;
		const int64_t D = v->shape.d[0], G = v->shape.d[1], K = v->shape.d[2];
		ox_id id = new_const(g, OX_F32, v->name, "rnnt", D * G * K, &v->shape, OX_L_RNNT, 0, 0, 0);
		float *dst = g->vals[id].data->data;
		for (int64_t d = 0; d < D; d++)
			for (int64_t j = 0; j < G; j++)
				for (int64_t i = 0; i < K; i++)
					dst[(d * K + i) * G + j] = src[(d * G + j) * K + i];
		n->in[k] = id;
	}
}

int ox_opt_pack(ox_graph *g)
{
	if (g->gpu) { /* the CUDA kernels read plain values (ir.h, gpu); NonMaxSuppression's take scratch */
		for (int i = 0; i < g->nnodes; i++)
			if (!g->nodes[i].dead && g->nodes[i].op == OX_OP_NonMaxSuppression)
				nms_gpu_scratch(g, &g->nodes[i]);
		return 0;
	}
	if (!g->opt)
		return 0;
	int nn = g->nnodes;
	ox_ir_fill_uses(g); /* (pack_qmm asks who reads a product) */
	for (int i = 0; i < nn; i++) {
		ox_node *n = &g->nodes[i];
		ox_convgeo cg;
		if (n->op == OX_OP_Conv && n->nout >= 1 && n->out[0] >= 0 && g->vals[n->out[0]].layout == OX_L_BLOCKED) {
			if (ox_opt_conv_geo(g, n, &cg))
				return -1;
			pack_conv(g, n, &cg);
		}
		ox_qconvgeo qq;
		if (n->op == OX_OP_QConv && !ox_opt_qconv_geo(g, n, &qq)) {
			if (qq.dw)
				pack_qdw(g, n, &qq);
			else
				pack_qconv(g, n, &qq);
		}
		if (n->op == OX_OP_LSTM && !g->vals[n->in[1]].layout && ox_opt_lstm_t(g, n))
			pack_lstm(g, n);
		ox_qmmgeo qm;
		if (n->op == OX_OP_MatMulInteger && !ox_opt_qmm_geo(g, n, &qm) && !g->vals[n->in[1]].layout)
			pack_qmm(g, n, &qm);
		ox_attngeo aq;
		if (n->op == OX_OP_Attention && !ox_opt_attn_geo(g, n, &aq))
			ox_ir_add_scratch(g, n, aq.slots * aq.slot_floats * 4);
		ox_gemmgeo gq;
		int slots;
		int64_t panels = ox_opt_mmnb_tile(g, n, &gq, &slots);
		if (panels)
			ox_ir_add_scratch(g, n, panels);
		if ((n->op == OX_OP_MatMul || n->op == OX_OP_Gemm) && !ox_opt_gemm_geo(g, n, &gq) && gq.constb &&
		    !g->vals[n->in[1]].layout)
			pack_gemm(g, n, &gq);
	}
	ox_ir_compact(g);
	ox_ir_fill_uses(g);
	return 0;
}
