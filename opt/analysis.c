/* analysis.c: the analyses the passes and codegen share.
 *
 * What a pass decides and codegen must agree with is computed here, once,
 * and read by both: which shapes and types the fast kernels take (run-time
 * dims with a top, ox_opt_rt_ok; f16/bf16 on the GPU, ox_opt_fuse_type);
 * the Convs the channel-blocked kernels compute (opt/layout.c blocks them)
 * and the elementwise ops the vector renderer computes (opt/ewfuse.c fuses
 * them); a blocked Conv's geometry, tile and cost model (opt/pack.c packs
 * for it, opt/winograd.c compares the algorithms by it, codegen/c/emit_blocked.c
 * and emit_wino.c emit it) and Winograd's matrices; the packed GEMM's tile;
 * the blocked Attention's geometry. They read the graph; no pass lives
 * here (the passes: opt/pipeline.c).
 */
#include "opt.h"
#include "../ir/family.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- run-time dims and types ---- */

int64_t ox_opt_top(const ox_graph *g, ox_dim d)
{
	int64_t v = ox_dim_eval(g, d);
	return v >= 0 ? v : ox_dim_hi(g, d);
}

int ox_opt_fuse_type(const ox_graph *g, int dt)
{
	return dt == OX_F32 || (g->gpu && !g->parent && (dt == OX_F16 || dt == OX_BF16));
}

int ox_opt_rt_ok(const ox_graph *g, const ox_shape *s, unsigned axes)
{
	for (int i = 0; i < s->rank; i++)
		if (ox_dim_is_rt(g, s->d[i]) && (!(axes >> i & 1) || ox_dim_hi(g, s->d[i]) < 0))
			return 0;
	return 1;
}

int ox_opt_rt_window(const ox_graph *g, const ox_node *n)
{
	const ox_value *x = &g->vals[n->in[0]], *y = &g->vals[n->out[0]];
	const char *ap = ox_attr_str(n, "auto_pad", "NOTSET");
	return (!strcmp(ap, "NOTSET") || !strcmp(ap, "VALID")) && !ox_dim_is_rt(g, x->shape.d[1]) &&
	       !ox_dim_is_rt(g, y->shape.d[1]) && ox_opt_rt_ok(g, &x->shape, ~0u) && ox_opt_rt_ok(g, &y->shape, ~0u);
}

int ox_opt_is_perm(ox_graph *g, const ox_node *t, const int *p, int r)
{
	int perm[OX_MAX_RANK];
	if (!t || t->dead || t->op != OX_OP_Transpose || t->nin < 1 || g->vals[t->in[0]].shape.rank != r ||
	    ox_ir_data_perm(g, t, r, perm))
		return 0;
	return !memcmp(perm, p, (size_t)r * sizeof *p);
}

/* ---- the channel-blocked layout (opt/layout.c) ---- */

int ox_opt_is_f32(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].dtype == OX_F32;
}

int ox_opt_rank4(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].has_shape && g->vals[v].shape.rank == 4;
}

/* pads that depend on a run-time image size: SAME with a run-time H or W */
int ox_opt_rt_pads(ox_graph *g, const ox_node *n, const ox_shape *x)
{
	const char *ap = ox_attr_str(n, "auto_pad", "NOTSET");
	return (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) &&
	       (ox_dim_is_rt(g, x->d[2]) || ox_dim_is_rt(g, x->d[3]));
}

/* a Conv the blocked kernels compute: 2-D, f32, constant weights, group 1
 * or depthwise (group = C = M); N, H, W may be run-time dims */
int ox_opt_conv_blockable(ox_graph *g, const ox_node *n, int *depthwise)
{
	if (n->op != OX_OP_Conv || !ox_opt_rank4(g, n->in[0]) || !ox_opt_is_f32(g, n->in[0]) ||
	    !ox_opt_is_f32(g, n->out[0]))
		return 0;
	const ox_value *w = ox_in(g, n, 1);
	if (!w || w->kind != OX_V_CONST || w->shape.rank != 4)
		return 0;
	if (!ox_opt_rt_ok(g, &g->vals[n->in[0]].shape, OX_OPT_NHW) ||
	    !ox_opt_rt_ok(g, &g->vals[n->out[0]].shape, OX_OPT_NHW) || ox_opt_rt_pads(g, n, &g->vals[n->in[0]].shape))
		return 0;
	if (w->layout != OX_L_PLAIN && w->layout != OX_L_CONVW && w->layout != OX_L_DWW && w->layout != OX_L_WINOW)
		return 0; /* packed by opt/pack.c or opt/winograd.c: still this Conv's */
	if (n->nin > 2 && n->in[2] >= 0 && g->vals[n->in[2]].kind != OX_V_CONST)
		return 0;
	int64_t G = ox_attr_int(n, "group", 1), C = g->vals[n->in[0]].shape.d[1], M = w->shape.d[0];
	*depthwise = G > 1 && G == C && M == C && w->shape.d[1] == 1;
	return G == 1 || *depthwise;
}

/* ---- vector ops (opt/ewfuse.c) ---- */

/* Pow's exponent: a constant of one element the vector renderer has a
 * form for (x*x, x*x*x, x, sqrt, 1/x, 1/sqrt), copied into the body as a
 * constant rather than passed as an operand */
int ox_opt_pow_exponent(ox_graph *g, const ox_node *n, int k)
{
	if (n->op != OX_OP_Pow || k != 1)
		return 0;
	const ox_value *e = &g->vals[n->in[1]];
	if (e->kind != OX_V_CONST || ox_shape_numel(&e->shape) != 1 ||
	    (!ox_dtype_is_float(e->dtype) && !ox_dtype_is_int(e->dtype)))
		return 0;
	double p = ox_tensor_get_f64(e->data, 0);
	return p == 2 || p == 3 || p == 1 || p == 0.5 || p == -1 || p == -0.5;
}

/* Run-time dims (docs/dynamic.md): codegen/c/emit_fused.c walks them as
 * loop counts, so an operand's run-time dim must be the output's own (or
 * the operand is 1 there): two run-time dims that would only broadcast
 * when the program runs are left to emit_ew, which checks them */
static int rt_ok(ox_graph *g, const ox_node *n)
{
	const ox_shape *o = &g->vals[n->out[0]].shape;
	if (!ox_opt_rt_ok(g, o, ~0u))
		return 0;
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0)
			continue;
		const ox_shape *s = &g->vals[n->in[k]].shape;
		int off = o->rank - s->rank;
		if (off < 0)
			return 0;
		for (int i = 0; i < s->rank; i++)
			if (s->d[i] != 1 && s->d[i] != o->d[i + off] &&
			    (ox_dim_is_rt(g, s->d[i]) || ox_dim_is_rt(g, o->d[i + off])))
				return 0;
	}
	return 1;
}

/* A QuantizeLinear or DequantizeLinear a fused body computes (the C
 * target's vector renderer: codegen/c/emit_vec.c, emit_fused.c): per
 * tensor between f32 and int8 or uint8, the scale an f32 constant and the
 * zero point a constant of one element, saturating, in f32. Its 8-bit side
 * is an operand or the output of the fused node, loaded into and stored
 * from f32 lanes; scale and zero point are constants of the body. */
int ox_opt_fused_qdq(ox_graph *g, const ox_node *n)
{
	if ((n->op != OX_OP_QuantizeLinear && n->op != OX_OP_DequantizeLinear) || g->gpu || n->nout != 1 ||
	    n->out[0] < 0 || n->nin < 2 || n->in[1] < 0)
		return 0;
	const int dq = n->op == OX_OP_DequantizeLinear;
	const ox_value *x = &g->vals[n->in[0]], *y = &g->vals[n->out[0]], *s = &g->vals[n->in[1]];
	const ox_value *z = n->nin > 2 && n->in[2] >= 0 ? &g->vals[n->in[2]] : NULL;
	const int q = dq ? x->dtype : y->dtype, f = dq ? y->dtype : x->dtype;
	if ((q != OX_I8 && q != OX_U8) || f != OX_F32 || s->dtype != OX_F32 || s->kind != OX_V_CONST || !s->data ||
	    ox_shape_numel(&s->shape) != 1)
		return 0;
	if (z && (z->dtype != q || z->kind != OX_V_CONST || !z->data || ox_shape_numel(&z->shape) != 1))
		return 0;
	const int64_t prec = ox_attr_int(n, "precision", 0);
	if (!dq && (!ox_attr_int(n, "saturate", 1) || (prec && prec != OX_F32)))
		return 0;
	return !ox_node_rt(g, n) || rt_ok(g, n);
}

/* operand k of n is copied into a fused body as a constant rather than
 * passed as an operand: Pow's exponent, a fused QuantizeLinear's or
 * DequantizeLinear's scale and zero point */
int ox_opt_body_const(ox_graph *g, const ox_node *n, int k)
{
	return ox_opt_pow_exponent(g, n, k) || (k >= 1 && ox_opt_fused_qdq(g, n));
}

/* the ops codegen renders on vectors, f32 (as ox_cg_vbody_ok; opt cannot
 * include codegen, so the list is kept here and checked by emit_fused) */
int ox_opt_vector_op(ox_graph *g, const ox_node *n)
{
	if (n->nout != 1 || n->out[0] < 0 || (ox_node_rt(g, n) && !rt_ok(g, n)))
		return 0;
	switch (n->op) {
	case OX_OP_Relu: case OX_OP_LeakyRelu: case OX_OP_Sigmoid: case OX_OP_HardSigmoid:
	case OX_OP_HardSwish: case OX_OP_Tanh: case OX_OP_Erf: case OX_OP_Exp: case OX_OP_Neg:
	case OX_OP_Abs: case OX_OP_Sqrt: case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div:
	case OX_OP_PRelu: case OX_OP_Gelu: case OX_OP_Reciprocal:
		break;
	case OX_OP_Pow:
		if (!ox_opt_pow_exponent(g, n, 1))
			return 0;
		break;
	case OX_OP_Clip:
		for (int k = 1; k < n->nin; k++)
			if (n->in[k] >= 0 && (g->vals[n->in[k]].kind != OX_V_CONST ||
					      ox_shape_numel(&g->vals[n->in[k]].shape) != 1))
				return 0;
		break;
	default:
		return 0;
	}
	const int dt = g->vals[n->out[0]].dtype;
	if (!ox_opt_fuse_type(g, dt) || (dt != OX_F32 && ox_node_rt(g, n))) /* (f16: codegen/cuda/cuda_map.c's, constant shapes) */
		return 0;
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && g->vals[n->in[k]].dtype != dt && !ox_opt_pow_exponent(g, n, k))
			return 0;
	return 1;
}

/* ---- Winograd's matrices and the Convs it takes (opt/winograd.c, codegen/c/emit_wino.c) ---- */

/* interpolation points 0, 1, -1 (and infinity) */
static const double bt2[16] = {
	1, 0, -1, 0,
	0, 1, 1, 0,
	0, -1, 1, 0,
	0, 1, 0, -1,
};
static const double g2[12] = {
	1, 0, 0,
	0.5, 0.5, 0.5,
	0.5, -0.5, 0.5,
	0, 0, 1,
};
static const double at2[8] = {
	1, 1, 1, 0,
	0, 1, -1, -1,
};
/* interpolation points 0, 1, -1, 2, -2 (and infinity) */
static const double bt4[36] = {
	4, 0, -5, 0, 1, 0,
	0, -4, -4, 1, 1, 0,
	0, 4, -4, -1, 1, 0,
	0, -2, -1, 2, 1, 0,
	0, 2, -1, -2, 1, 0,
	0, 4, 0, -5, 0, 1,
};
static const double g4[18] = {
	1.0 / 4, 0, 0,
	-1.0 / 6, -1.0 / 6, -1.0 / 6,
	-1.0 / 6, 1.0 / 6, -1.0 / 6,
	1.0 / 24, 1.0 / 12, 1.0 / 6,
	1.0 / 24, -1.0 / 12, 1.0 / 6,
	0, 0, 1,
};
static const double at4[24] = {
	1, 1, 1, 1, 1, 0,
	0, 1, -1, 2, -2, 0,
	0, 1, 1, 4, 4, 0,
	0, 1, -1, 8, -8, 1,
};
static const ox_winomats mats[2] = {{2, 4, bt2, g2, at2}, {4, 6, bt4, g4, at4}};

const ox_winomats *ox_opt_wino_mats(int m)
{
	return m == 2 ? &mats[0] : m == 4 ? &mats[1] : NULL;
}

int ox_opt_wino_eligible(ox_graph *g, const ox_node *n)
{
	int dw;
	if (!ox_opt_conv_blockable(g, n, &dw) || dw || ox_attr_int(n, "group", 1) != 1)
		return 0;
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (x->layout != OX_L_BLOCKED || y->layout != OX_L_BLOCKED || w->shape.d[2] != 3 || w->shape.d[3] != 3)
		return 0;
	int64_t k[2], s[2], d[2], pads[4];
	int ap;
	if (ox_ir_nn_window(g, n, 2, &w->shape, k, s, d, pads, &ap))
		return 0;
	return s[0] == 1 && s[1] == 1 && d[0] == 1 && d[1] == 1;
}

/* ---- a blocked Conv's geometry, tile and cost (opt/pack.c packs for it, codegen emits it) ---- */

/* cycles per reduction step of a rows x ocb tile: FMAs on two pipes,
 * loads (ocb weight vectors, rows broadcasts) on two ports, and at least
 * the FMA latency, each accumulator being updated once per step */
static double step_cost(int rows, int ocb)
{
	double fma = rows * ocb / 2.0, ld = (rows + ocb) / 2.0, c = fma > ld ? fma : ld;
	return c > 4 ? c : 4;
}

/* cost of all tiles of p positions in tiles of `rows` (a shorter last one)
 * and mv output vectors in groups of `ocb` (a narrower last one) */
static double tiling_cost(int64_t p, int rows, int64_t mv, int ocb)
{
	int64_t full = p / rows, tail = p % rows, gf = mv / ocb, gt = mv % ocb;
	double c = (double)gf * ((double)full * step_cost(rows, ocb) + (tail ? step_cost((int)tail, ocb) : 0));
	if (gt)
		c += (double)full * step_cost(rows, (int)gt) + (tail ? step_cost((int)tail, (int)gt) : 0);
	return c;
}

/* the row count of a tile of ocb vectors over m rows */
static int t_rows(const ox_target *t, int ocb, int64_t m)
{
	int r = t->conv_rows[ocb - 1];
	return (int)(m < r ? m : r);
}

/* ---- Winograd (opt/winograd.c chooses it) ---- */

/* A block's transformed input should stay in L2 (a quarter of it) while
 * it is read once per group of output vectors; up to WINO_SLOTS task
 * slots, each with its own scratch (one slot reused block after block is
 * the fastest on one thread: its lines stay in the caches) */
#define WINO_V_BYTES (256 << 10)
#define WINO_SLOTS 4
#define L2_BYTES (1 << 20)

/* n floats rounded up to whole 64-byte lines, an odd number of them from
 * 1 KB on (36 smaller planes fit in L1 whatever their sets) */
static int64_t odd_lines(int64_t n)
{
	int64_t l = (n + 15) / 16;
	return (l < 16 ? l : l | 1) * 16;
}

/* Modeled cycles of the GEMMs of F(wm x wm) in blocks of nt tiles with
 * tiles of rows x ocb, and of the traffic: when the weights and a block's
 * transformed input and products pass L2, every pass over the weights
 * after the first (one a block) comes from L3, and when the transformed
 * input passes WINO_V_BYTES it comes from L3 for every group after the
 * first. *traffic gets the bytes' cycles, the result the GEMMs' */
static double wino_gemm(const ox_target *t, const ox_convgeo *cg, int64_t mv, int rows, int ocb, int64_t nt,
			double *traffic)
{
	int64_t T2 = (cg->wm + 2) * (cg->wm + 2), cp = (cg->C + cg->b - 1) / cg->b * cg->b;
	int64_t tiles = cg->N * cg->th * cg->tw, nblk = (tiles + nt - 1) / nt, last = tiles - (nblk - 1) * nt;
	double c = (double)(nblk - 1) * tiling_cost(nt, rows, mv, ocb) + tiling_cost(last, rows, mv, ocb);
	double ub = (double)(T2 * cg->C * mv * cg->b * 4), vb = (double)(T2 * nt * cp * 4);
	double pb = (double)(T2 * nt * ocb * cg->b * 4);
	*traffic = 0;
	if (ub + vb + pb > L2_BYTES)
		*traffic += (double)(nblk - 1) * ub / t->l3_bpc;
	if (vb > WINO_V_BYTES)
		*traffic += (double)((mv + ocb - 1) / ocb - 1) * vb / t->l3_bpc;
	return c * (double)(T2 * cg->C);
}

/* the GEMMs' tile (rows x ocb) and block (nt tiles, a multiple of rows
 * unless it holds them all) of the least modeled cycles; the smaller
 * block of equal ones */
static void wino_geo(const ox_target *t, ox_convgeo *cg, int wm, int64_t mv)
{
	int64_t T2 = (wm + 2) * (wm + 2), cp = (cg->C + cg->b - 1) / cg->b * cg->b;
	cg->wm = wm;
	cg->th = (cg->OH + wm - 1) / wm, cg->tw = (cg->OW + wm - 1) / wm;
	int64_t tiles = cg->N * cg->th * cg->tw;
	/* the tile of 2 vectors (1 when the output has one): measured the
	 * fastest on every layer tried; 1 reads the transformed input twice
	 * as often and loads as much as it multiplies, the table's 4-vector
	 * tiles leave no register for the broadcast (30% slower), 3 vectors
	 * split the usual channel counts unevenly */
	int o = mv > 1 ? 2 : 1, rmax = t->conv_rows[o - 1];
	double best = -1;
	cg->ocb = o;
	cg->rows = (int)(tiles < rmax ? tiles : rmax);
	for (int64_t k = cg->rows; k < tiles + cg->rows; k += cg->rows) {
		int64_t nt = k < tiles ? k : tiles; /* one block: all tiles */
		if (nt > cg->rows && T2 * nt * cp * 4 > L2_BYTES)
			break;
		double tr, c = wino_gemm(t, cg, mv, cg->rows, o, nt, &tr);
		if (best < 0 || c + tr < best * (1 - 1e-9))
			best = c + tr, cg->wnt = nt;
	}
	int64_t nblk = (tiles + cg->wnt - 1) / cg->wnt, ng = (mv + cg->ocb - 1) / cg->ocb, par = nblk > 1 ? nblk : ng;
	cg->wslots = (int)(par < WINO_SLOTS ? par : WINO_SLOTS);
	cg->wvs = odd_lines(cg->wnt * cp), cg->wps = odd_lines(cg->wnt * cg->ocb * cg->b);
	if (nblk > 1)
		cg->wslot = T2 * (cg->wvs + cg->wps), cg->wscratch = cg->wslots * cg->wslot;
	else
		cg->wslot = T2 * cg->wps, cg->wscratch = T2 * cg->wvs + cg->wslots * cg->wslot;
}

int ox_opt_conv_geo(ox_graph *g, const ox_node *n, ox_convgeo *cg)
{
	const ox_value *w = ox_in(g, n, 1);
	int wm = w && w->layout == OX_L_WINOW ? w->lp[1] : 0;
	if (ox_opt_conv_geo_as(g, n, wm, cg))
		return -1;
	if (wm && cg->ocb != w->lp[2])
		ox_die("pack: Conv '%s': Winograd weights packed for %d vectors, the tile has %d", n->name, w->lp[2],
		       cg->ocb);
	return 0;
}

int ox_opt_conv_geo_as(ox_graph *g, const ox_node *n, int wm, ox_convgeo *cg)
{
	memset(cg, 0, sizeof *cg);
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (!ox_opt_conv_blockable(g, n, &cg->depthwise) || y->layout != OX_L_BLOCKED)
		return -1;
	if (wm && !ox_opt_wino_eligible(g, n))
		return -1;
	/* run-time sizes at their tops: the tile is chosen for the largest */
	int64_t k[2], s[2], d[2], pads[4], in[2] = {ox_opt_top(g, x->shape.d[2]), ox_opt_top(g, x->shape.d[3])};
	int64_t out[2] = {ox_opt_top(g, y->shape.d[2]), ox_opt_top(g, y->shape.d[3])};
	int ap;
	if (ox_ir_nn_window(g, n, 2, &w->shape, k, s, d, pads, &ap))
		return -1;
	ox_ir_nn_same_pads(ap, 2, in, out, k, s, d, pads);
	const ox_target *t = g->target;
	cg->b = y->lp[0];
	cg->inblocked = x->layout == OX_L_BLOCKED;
	cg->N = ox_opt_top(g, x->shape.d[0]), cg->C = x->shape.d[1], cg->M = y->shape.d[1];
	cg->dN = x->shape.d[0], cg->dIH = x->shape.d[2], cg->dIW = x->shape.d[3];
	cg->dOH = y->shape.d[2], cg->dOW = y->shape.d[3];
	cg->rt = ox_shape_is_rt(g, &x->shape) || ox_shape_is_rt(g, &y->shape);
	cg->IH = in[0], cg->IW = in[1], cg->OH = out[0], cg->OW = out[1];
	cg->KH = k[0], cg->KW = k[1], cg->SH = s[0], cg->SW = s[1], cg->DH = d[0], cg->DW = d[1];
	cg->pt = pads[0], cg->pl = pads[1], cg->pb = pads[2], cg->pr = pads[3];
	cg->padded = pads[0] || pads[1] || pads[2] || pads[3];
	cg->copy = cg->padded && !cg->depthwise;
	cg->IHp = cg->IH + cg->pt + cg->pb, cg->IWp = cg->IW + cg->pl + cg->pr;
	cg->flat = !cg->padded && cg->KH == 1 && cg->KW == 1 && cg->SH == 1 && cg->SW == 1;
	int64_t p = cg->flat ? cg->OH * cg->OW : cg->OW, mv = (cg->M + cg->b - 1) / cg->b;
	if (wm) {
		cg->copy = 0; /* border tiles are read with their bounds tested */
		wino_geo(t, cg, wm, mv);
		return 0;
	}
	if (cg->depthwise) {
		/* one weight vector a tap, a vector load per position */
		int r = t->nregs - 4;
		cg->ocb = 1;
		cg->rows = (int)(p < r ? p : r);
		return 0;
	}
	/* the cost over all positions; rows shorter than a tile are taken
	 * `span` at a time (a tile's positions then continue on the next row) */
	double best = -1;
	for (int o = 1; o <= 4; o++) {
		int rmax = t->conv_rows[o - 1], span = 1;
		if (o > mv || rmax < 1)
			continue;
		int r = (int)(p < rmax ? p : rmax);
		double c;
		if (cg->flat) {
			c = tiling_cost(p, r, mv, o);
		} else if (cg->OW < rmax && cg->OH > 1 && !ox_dim_is_rt(g, cg->dOH) && !ox_dim_is_rt(g, cg->dOW)) {
			span = rmax / (int)cg->OW;
			if (span > cg->OH)
				span = (int)cg->OH;
			r = span * (int)cg->OW;
			c = tiling_cost(cg->OH * cg->OW, r, mv, o);
		} else {
			c = (double)cg->OH * tiling_cost(p, r, mv, o);
		}
		if (best < 0 || c < best)
			best = c, cg->rows = r, cg->ocb = o, cg->span = span;
	}
	/* chunks of about 128 KB of weights */
	int64_t cb = (cg->C + cg->b - 1) / cg->b, blk = cg->KH * cg->KW * cg->b * cg->ocb * cg->b * 4;
	if (cg->inblocked && cb > 1 && cb * blk > (256 << 10)) {
		cg->kb = (128 << 10) / blk;
		cg->kb = cg->kb < 1 ? 1 : cg->kb > cb ? cb : cg->kb;
	}
	return 0;
}

/* ---- the cost model ---- */

double ox_opt_conv_cycles(const ox_graph *g, const ox_convgeo *cg)
{
	const ox_target *t = g->target;
	int64_t mv = (cg->M + cg->b - 1) / cg->b, cb = (cg->C + cg->b - 1) / cg->b;
	if (!cg->wm) {
		/* the micro-kernel's steps, the weights brought from memory once */
		int64_t taps = cg->KH * cg->KW, p = cg->flat ? cg->OH * cg->OW : cg->OW;
		double steps = cg->flat ? tiling_cost(p, cg->rows, mv, cg->ocb)
				: cg->span > 1 ? tiling_cost(cg->OH * cg->OW, cg->rows, mv, cg->ocb)
				: (double)cg->OH * tiling_cost(p, cg->rows, mv, cg->ocb);
		double c = (double)cg->N * steps * (double)(cg->C * taps), mem = (double)(mv * cg->b * cg->C * taps * 4) / t->mem_bpc;
		return c > mem ? c : mem;
	}
	/* the GEMMs, the transforms, and the weights' traffic (from memory
	 * once), which runs beside them */
	int64_t T2 = (cg->wm + 2) * (cg->wm + 2), tiles = cg->N * cg->th * cg->tw;
	double tr, c = wino_gemm(t, cg, mv, cg->rows, cg->ocb, cg->wnt, &tr);
	c += (double)tiles * ((double)cb * t->wino_in[cg->wm / 4] + (double)mv * t->wino_out[cg->wm / 4]);
	tr += (double)(T2 * cg->C * mv * cg->b * 4) / t->mem_bpc;
	return c > tr ? c : tr;
}

/* ---- GEMM ---- */

/* chunks of about 128 KB of a constant B's group panel, when it passes a
 * quarter of L2 and more than one tile of rows reads it */
static void gemm_chunk(ox_gemmgeo *q)
{
	int64_t rowbytes = (int64_t)q->ocb * q->b * 4;
	q->kchunk = 0;
	if (q->constb && q->batch == 1 && !q->transA && q->M > q->rows && q->K * rowbytes > (256 << 10))
		q->kchunk = (128 << 10) / rowbytes;
}

/* the tile, by the conv's cost model: rows of A as positions */
static void gemm_tile(ox_graph *g, ox_gemmgeo *q)
{
	const ox_target *t = g->target;
	int64_t mv = (q->N + q->b - 1) / q->b;
	double best = -1;
	for (int o = 1; o <= 4; o++) {
		int rmax = t->conv_rows[o - 1];
		if (o > mv || rmax < 1)
			continue;
		int r = (int)(q->M < rmax ? q->M : rmax);
		double c = tiling_cost(q->M, r, mv, o);
		if (best < 0 || c < best)
			best = c, q->rows = r, q->ocb = o;
	}
}

int ox_opt_gemm_geo(ox_graph *g, const ox_node *n, ox_gemmgeo *q)
{
	memset(q, 0, sizeof *q);
	/* (a MatMulSplit, opt/siblings.c, as the MatMul of all its columns) */
	if ((n->op != OX_OP_MatMul && n->op != OX_OP_Gemm && n->op != OX_OP_MatMulSplit) || n->nout < 1 || n->out[0] < 0 ||
	    !g->opt)
		return -1;
	const ox_value *a = ox_in(g, n, 0), *bv = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (!a || !bv || !ox_opt_fuse_type(g, y->dtype) || a->dtype != y->dtype || bv->dtype != y->dtype || a->layout ||
	    y->layout)
		return -1;
	if (a->shape.rank < 2 || bv->shape.rank < 2)
		return -1;
	/* run-time dims (with a top) but N, the columns: they shape the kernel
	 * (on the GPU a MatMul of two values takes a run-time N too) */
	const int rtn = ox_dim_is_rt(g, y->shape.d[y->shape.rank - 1]);
	if (!ox_opt_rt_ok(g, &a->shape, ~0u) || !ox_opt_rt_ok(g, &bv->shape, ~0u) ||
	    !ox_opt_rt_ok(g, &y->shape, ~0u) ||
	    (rtn && (!g->gpu || n->op != OX_OP_MatMul || bv->kind == OX_V_CONST || bv->layout)))
		return -1;
	q->b = g->target->vw;
	q->constb = bv->kind == OX_V_CONST && bv->shape.rank == 2;
	if (bv->layout && !(bv->layout == OX_L_GEMMB && q->constb))
		return -1;
	if (n->op == OX_OP_Gemm) {
		/* B constant (its transpose and alpha are packed in); C constant per
		 * column or absent. On the GPU, whose kernel reads them as they are
		 * (codegen/cuda/cuda_tile.c), B and C may be values, C also per row or
		 * of the output's shape. */
		if (!q->constb && !g->gpu)
			return -1;
		const ox_value *c = ox_in(g, n, 2);
		q->transA = ox_attr_int(n, "transA", 0) != 0;
		q->dM = a->shape.d[q->transA], q->dK = a->shape.d[!q->transA];
		q->N = q->dN = y->shape.d[1];
		if (c && ((c->kind != OX_V_CONST && !g->gpu) || c->dtype != y->dtype))
			return -1;
		int64_t cn = c ? ox_shape_numel(&c->shape) : 0;
		const int rows = g->gpu && c && c->shape.rank == 2 && (c->shape.d[0] == q->dM || c->shape.d[0] == 1) &&
				 (c->shape.d[1] == q->N || c->shape.d[1] == 1);
		if (c && cn != 1 && !(cn == q->N && c->shape.d[c->shape.rank - 1] == q->N) && !rows)
			return -1;
		if (c && c->layout && c->layout != OX_L_PADDED)
			return -1;
		q->dbatch = 1;
	} else {
		q->dK = a->shape.d[a->shape.rank - 1];
		q->dN = bv->shape.d[bv->shape.rank - 1];
		q->N = ox_opt_top(g, q->dN);
		if (q->constb) { /* every batch of A is more rows */
			q->dM = ox_dim_div(g, ox_shape_numel_dim(g, &a->shape), q->dK ? q->dK : 1);
			q->dbatch = 1;
		} else {
			/* batch dims: equal, or one of them 1 (a run-time one that
			 * might broadcast only when the program runs is not taken) */
			const ox_shape *sa = &a->shape, *sb = &bv->shape;
			int nb = (sa->rank > sb->rank ? sa->rank : sb->rank) - 2;
			for (int i = 0; i < nb; i++) {
				int ia = i - (nb - (sa->rank - 2)), ib = i - (nb - (sb->rank - 2));
				ox_dim da = ia >= 0 ? sa->d[ia] : 1, db = ib >= 0 ? sb->d[ib] : 1;
				if (da != db && da != 1 && db != 1)
					return -1;
			}
			q->dM = a->shape.d[a->shape.rank - 2];
			ox_dim mn = ox_dim_mul(g, q->dM, q->dN);
			q->dbatch = mn ? ox_dim_div(g, ox_shape_numel_dim(g, &y->shape), mn) : 0;
		}
	}
	q->rt = ox_dim_is_rt(g, q->dM) || ox_dim_is_rt(g, q->dK) || ox_dim_is_rt(g, q->dbatch) || rtn;
	q->M = ox_opt_top(g, q->dM), q->K = ox_opt_top(g, q->dK), q->batch = ox_opt_top(g, q->dbatch);
	if (!q->M || !q->N || !q->K || q->M < 0 || q->K < 0 || q->batch < 0)
		return -1;
	if (q->constb && bv->layout == OX_L_GEMMB) {
		q->rows = t_rows(g->target, bv->lp[1], q->M);
		q->ocb = bv->lp[1];
		gemm_chunk(q);
		return 0;
	}
	gemm_tile(g, q);
	gemm_chunk(q);
	return 0;
}

int64_t ox_opt_mmnb_tile(ox_graph *g, ox_node *n, ox_gemmgeo *q, int *slots)
{
	int64_t K, N, bits, bs, nb;
	memset(q, 0, sizeof *q);
	if (n->op != OX_OP_MatMulNBits || g->gpu || !g->opt || ox_mmnb_geo(g, n, &K, &N, &bits, &bs, &nb))
		return 0;
	const ox_value *a = ox_in(g, n, 0), *sc = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	if (a->dtype != OX_F32 || sc->dtype != OX_F32 || y->dtype != OX_F32 || a->layout || y->layout ||
	    !ox_opt_rt_ok(g, &a->shape, ~0u))
		return 0;
	q->b = g->target->vw, q->batch = 1, q->constb = 1;
	q->K = K, q->N = N, q->dK = K, q->dN = N, q->dbatch = 1;
	q->dM = ox_dim_div(g, ox_shape_numel_dim(g, &a->shape), K);
	q->M = ox_opt_top(g, q->dM), q->rt = ox_dim_is_rt(g, q->dM);
	if (q->M < OX_MMNB_PANEL_ROWS)
		return 0;
	gemm_tile(g, q);
	/* a panel of about 32 KB (L1), whole blocks */
	int64_t kc = (32 << 10) / ((int64_t)q->ocb * q->b * 4) / bs * bs;
	q->kchunk = kc < bs ? bs : kc > K ? K : kc;
	const int64_t mv = (q->N + q->b - 1) / q->b, ng = (mv + q->ocb - 1) / q->ocb;
	*slots = (int)(ng < 16 ? ng : 16);
	return *slots * q->kchunk * q->ocb * q->b * 4;
}

/* ---- Attention: the fast path's geometry (codegen/c/emit_attn.c, scratch from opt/pack.c) ---- */

/* ext: past K/V with both present outputs, present outputs,
 * nonpad_kv_seqlen */
static int attn_geo(ox_graph *g, const ox_node *n, ox_attngeo *q, int ext)
{
	memset(q, 0, sizeof *q);
	if (n->op != OX_OP_Attention || !g->opt || n->nout < 1)
		return -1;
	for (int k = 0; k < n->nin && k < (ext ? 6 : 4); k++) /* run-time dims with a top */
		if (n->in[k] >= 0 && !ox_opt_rt_ok(g, &g->vals[n->in[k]].shape, ~0u))
			return -1;
	for (int k = 1; k < n->nout; k++)
		if (n->out[k] >= 0 && !(n->scratch && k == n->nout - 1) && !(ext && k <= 2))
			return -1; /* present K/V, qk output */
	for (int k = 4; k < n->nin; k++)
		if (n->in[k] >= 0 && !(ext && k <= 6))
			return -1; /* past K/V, nonpad lengths */
	const ox_value *np = ox_in(g, n, 6); /* (ext: int64 [B]) */
	if (np && (np->dtype != OX_I64 || np->layout || np->shape.rank != 1 || np->shape.d[0] != g->vals[n->in[0]].shape.d[0]))
		return -1;
	q->softcap = ox_attr_float(n, "softcap", 0);
	if (q->softcap < 0 || ox_attr_int(n, "softmax_precision", 0) > 1)
		return -1;
	const ox_value *qv = ox_in(g, n, 0), *kv = ox_in(g, n, 1), *vv = ox_in(g, n, 2), *m = ox_in(g, n, 3);
	const int dt = qv->dtype; /* f32; f16, bf16 on the GPU (ox_opt_fuse_type) */
	if (!ox_opt_fuse_type(g, dt) || kv->dtype != dt || vv->dtype != dt || ox_out(g, n, 0)->dtype != dt ||
	    qv->layout || kv->layout || vv->layout)
		return -1;
	for (int k = 1; k <= 2 && ext; k++) { /* present K/V: both or none, past K/V only with them */
		const ox_value *o = ox_out(g, n, k), *p = ox_in(g, n, 3 + k);
		if ((o && (o->dtype != dt || o->layout || !ox_out(g, n, 3 - k))) || (p && (!o || p->dtype != dt || p->layout)))
			return -1;
		q->present = o != NULL;
	}
	/* (a mask of bools on the GPU: the CUDA kernels read it, 0 or -inf) */
	if (m && ((m->dtype != dt && !(g->gpu && m->dtype == OX_BOOL)) || m->layout))
		return -1;
	ox_attn_geom a;
	if (ox_attn_dims(g, (ox_node *)n, &a) || (a.seq && !g->gpu))
		return -1;
	q->rank = a.rank, q->seq = a.seq;
	/* batch and sequence lengths may be run-time (their tops here, the
	 * dims in dB, dSq, dSkv); heads and head sizes not */
	if (ox_dim_is_rt(g, a.hq) || ox_dim_is_rt(g, a.hkv) || ox_dim_is_rt(g, a.dk) || ox_dim_is_rt(g, a.dv))
		return -1;
	q->dP = a.past, q->dSnew = a.skv;
	if (a.past != 0) /* (past K/V: ext only) */
		a.skv = ox_dim_add(g, a.past, a.skv);
	q->dB = a.b, q->dSq = a.sq, q->dSkv = a.skv;
	q->rt = ox_dim_is_rt(g, a.b) || ox_dim_is_rt(g, a.sq) || ox_dim_is_rt(g, a.skv);
	q->B = ox_opt_top(g, a.b), q->Sq = ox_opt_top(g, a.sq), q->Skv = ox_opt_top(g, a.skv);
	q->Hq = ox_dim_eval(g, a.hq), q->Hkv = ox_dim_eval(g, a.hkv), q->Dk = ox_dim_eval(g, a.dk);
	q->Dv = ox_dim_eval(g, a.dv);
	if (q->B <= 0 || q->Sq <= 0 || q->Skv <= 0 || q->Hq <= 0 || q->Hkv <= 0 || q->Dk <= 0 || q->Dv <= 0)
		return -1;
	if (m) { /* the mask has a value per key (its last axis is Skv, not 1 or
		  * shorter), or, ext, constant dims and fewer keys (the missing
		  * ones masked out: the CUDA kernels) */
		const ox_dim last = m->shape.rank < 1 ? -1 : m->shape.d[m->shape.rank - 1];
		const int fewer = ext && last >= 1 && !ox_dim_is_rt(g, a.skv) && last < a.skv;
		if (m->shape.rank < 1 || (last != a.skv && !fewer))
			return -1;
		for (int i = 0; i < m->shape.rank; i++) {
			int ax = 4 - m->shape.rank + i;
			ox_dim want[4] = {a.b, a.hq, a.sq, a.skv};
			if (ax < 0 || (ax == 3 ? m->shape.d[i] != last : m->shape.d[i] != 1 && m->shape.d[i] != want[ax]))
				return -1;
		}
	}
	const ox_attr *sa = ox_attr_get(n, "scale");
	q->scale = sa ? sa->f : 1.0 / sqrt((double)q->Dk);
	q->causal = ox_attr_int(n, "is_causal", 0) != 0;
	q->rows = g->target->conv_rows[1];
	if (q->rows > q->Sq)
		q->rows = (int)q->Sq;
	int64_t bh = q->B * q->Hq;
	q->slots = bh < 16 ? (int)bh : 16;
	/* a slot's K^T and scores: rows of Skv floats; with a run-time Skv of
	 * its top rounded up to whole groups of the kernel's columns, which the
	 * scores are then computed in (the columns past Skv never read) */
	int64_t grp = (int64_t)g->target->nr_vecs * g->target->vw;
	q->ktw = ox_dim_is_rt(g, a.skv) ? (q->Skv + grp - 1) / grp * grp : q->Skv;
	q->slot_floats = q->Dk * q->ktw + (int64_t)q->rows * q->ktw;
	return 0;
}

int ox_opt_attn_geo(ox_graph *g, const ox_node *n, ox_attngeo *q)
{
	return attn_geo(g, n, q, 0);
}

int ox_opt_attn_geo_ext(ox_graph *g, const ox_node *n, ox_attngeo *q)
{
	return attn_geo(g, n, q, 1);
}

/* ---- NonMaxSuppression's CUDA kernels' scratch (codegen/cuda/cuda_index.c; opt/pack.c sizes it) ---- */

int64_t ox_opt_nms_gpu_scratch(int64_t P, int64_t N, int64_t K, int64_t *kofs, int64_t *cofs, int64_t *oofs)
{
	int64_t np2 = 1; /* (the sort keys of a pair: N rounded up to a power of 2) */
	while (np2 < N)
		np2 <<= 1;
	*kofs = P * np2 * 8, *cofs = *kofs + (P * K * 4 + 7) / 8 * 8, *oofs = *cofs + P * 4;
	return *oofs + (P + 1) * 4;
}

/* ---- the packed integer convolution (opt.h, ox_qconvgeo) ---- */

int ox_opt_qconv_geo(ox_graph *g, const ox_node *n, ox_qconvgeo *q)
{
	memset(q, 0, sizeof *q);
	if (g->gpu || n->op != OX_OP_QConv || n->nin < 2)
		return -1;
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	int nsp = x->shape.rank - 2;
	if (nsp < 1 || nsp > 2 || w->kind != OX_V_CONST || !w->data || (w->dtype != OX_I8 && w->dtype != OX_U8 && w->layout != OX_L_QDWW) ||
	    !ox_shape_is_const(&x->shape) || !ox_shape_is_const(&y->shape) || w->shape.rank != x->shape.rank)
		return -1;
	int64_t k[2], s[2], d[2], pads[4], in[2], out[2];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	int o = 2 - nsp; /* 1-D: the width alone, one row */
	q->IH = q->OH = q->KH = q->SH = q->DH = 1;
	for (int i = 0; i < nsp; i++) {
		int64_t *dst[] = {&q->IH, &q->IW}, *od[] = {&q->OH, &q->OW}, *kd[] = {&q->KH, &q->KW};
		int64_t *sd[] = {&q->SH, &q->SW}, *dd[] = {&q->DH, &q->DW}, *pd[] = {&q->PH, &q->PW};
		*dst[i + o] = in[i], *od[i + o] = out[i], *kd[i + o] = k[i], *sd[i + o] = s[i], *dd[i + o] = d[i];
		*pd[i + o] = pads[i];
	}
	q->N = x->shape.d[0], q->C = x->shape.d[1], q->M = w->shape.d[0], q->G = ox_attr_int(n, "group", 1);
	if (q->G < 1 || q->C % q->G || q->M % q->G || w->shape.d[1] != q->C / q->G)
		return -1;
	q->Cg = q->C / q->G, q->Mg = q->M / q->G;
	q->dw = q->G > 1 && q->Cg == 1;
	if (q->G > 1 && q->Cg < 4 && !q->dw)
		return -1; /* tiny groups: most of the tile would be padding */
	q->C4 = (q->Cg + 3) / 4, q->MB = (q->Mg + 7) / 8;
	q->R = q->OH + (q->KH - 1) * q->DH / q->SH, q->W = q->OW + (q->KW - 1) * q->DW / q->SW;
	q->P = q->OH * q->W;
	q->tiles = (q->P + OX_QG_NR - 1) / OX_QG_NR;
	q->gbytes = q->C4 * q->SH * q->SW * q->R * q->W * 4;
	q->scratch = q->N * q->G * q->gbytes + OX_QG_NR * 4;
	if (q->dw) {
		/* a channel's phases and 16 values of overrun (int16), a row of sums */
		q->slots = q->N * q->M < 16 ? q->N * q->M : 16;
		q->R = (q->OH - 1) * q->SH + (q->KH - 1) * q->DH + 1;
		q->W = (q->OW + 15) / 16 * 16 * q->SW + (q->KW - 1) * q->DW;
		q->P = q->OH * q->OW;
		q->slot = ((q->R * q->W + 64) * 2 + 63) / 64 * 64;
		q->scratch = q->slots * q->slot;
	}
	const int64_t *wz = NULL;
	int nz = ox_attr_ints(n, "ox_wz", &wz);
	for (int i = 0; i < nz; i++)
		q->ones |= wz[i] - (w->dtype == OX_U8 ? 128 : 0) != 0;
	return q->N * q->OH * q->OW > 0 ? 0 : -1;
}

int ox_opt_qmm_geo(ox_graph *g, const ox_node *n, ox_qmmgeo *q)
{
	memset(q, 0, sizeof *q);
	if (g->gpu || n->op != OX_OP_MatMulInteger)
		return -1;
	const ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1);
	const ox_value *za = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	const ox_value *zb = n->nin > 3 && n->in[3] >= 0 ? ox_in(g, n, 3) : NULL;
	int packed = b->layout == OX_L_QGEMMB;
	if (b->kind != OX_V_CONST || !b->data || b->shape.rank != 2 || a->shape.rank < 1 ||
	    (!packed && b->dtype != OX_I8 && b->dtype != OX_U8) || (a->dtype != OX_I8 && a->dtype != OX_U8) ||
	    !ox_shape_is_const(&b->shape))
		return -1;
	q->K = b->shape.d[0], q->N = b->shape.d[1];
	if (a->shape.d[a->shape.rank - 1] != q->K || q->K < 1 || q->N < 1)
		return -1;
	if (za && (!ox_shape_is_const(&za->shape) || ox_shape_numel(&za->shape) != 1))
		return -1;
	if (zb && (zb->kind != OX_V_CONST || !zb->data ||
		   (ox_shape_numel(&zb->shape) != 1 && (zb->shape.rank != 1 || zb->shape.d[0] != q->N))))
		return -1;
	return 0;
}

/* ---- buckets from If conditions (ox_opt_if_splits) ---- */

/* the Equal node whose result cond of graph g is, through ops that keep
 * its truth (or flip it); NULL when there is none */
static const ox_node *cond_equal(ox_graph *g, ox_id cond)
{
	for (int depth = 0; depth < 8 && cond >= 0 && cond < g->nvals; depth++) {
		ox_id p = g->vals[cond].producer;
		if (p < 0 || p >= g->nnodes || g->nodes[p].dead)
			return NULL;
		const ox_node *n = &g->nodes[p];
		switch (n->op) {
		case OX_OP_Equal:
			return n;
		case OX_OP_Cast: case OX_OP_Not: case OX_OP_Squeeze: case OX_OP_Unsqueeze: case OX_OP_Reshape:
		case OX_OP_Identity: case OX_OP_Flatten:
			cond = n->in[0];
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

int ox_opt_if_splits(ox_graph *g, const char *sym, int64_t lo, int64_t hi, int64_t *tops, int max)
{
	enum { SPAN = 4096 };
	if (hi <= lo || hi - lo >= SPAN || max < 1) {
		tops[0] = hi;
		return 1;
	}
	int64_t n = hi - lo + 1;
	unsigned char *cut = calloc((size_t)n, 1); /* cut[v - lo]: a bucket ends at v */
	signed char *val = malloc((size_t)n);
	int ng = 1 + g->nsubs;
	for (int gi = 0; gi < ng; gi++) {
		ox_graph *G = gi ? g->subs[gi - 1] : g;
		for (int i = 0; i < G->nnodes; i++) {
			const ox_node *f = &G->nodes[i];
			if (f->dead || f->op != OX_OP_If || f->nin < 1)
				continue;
			const ox_node *eq = cond_equal(G, f->in[0]);
			ox_sv a, b;
			if (!eq || ox_in_svals(G, eq, 0, &a, 1) != 1 || ox_in_svals(G, eq, 1, &b, 1) != 1 ||
			    ox_sv_equal(G, a, b).kind != OX_SV_UNKNOWN)
				continue;
			int known = 1;
			for (int64_t v = lo; v <= hi && known; v++) {
				ox_ir_set_range(g, sym, v, v);
				ox_sv e = ox_sv_equal(G, a, b);
				known = e.kind == OX_SV_CONST;
				val[v - lo] = (signed char)(known ? e.c : -1);
			}
			ox_ir_set_range(g, sym, lo, hi);
			for (int64_t v = lo; v < hi && known; v++)
				if (val[v - lo] != val[v + 1 - lo])
					cut[v - lo] = 1;
		}
	}
	int nt = 0;
	for (int64_t v = lo; v < hi; v++)
		if (cut[v - lo] && nt < max - 1)
			tops[nt++] = v;
	tops[nt++] = hi;
	free(cut), free(val);
	return nt;
}

int ox_opt_lstm_t(ox_graph *g, const ox_node *n)
{
	int ndir, reverse, act[6];
	float alpha[6], beta[6];
	ox_dim hidden;
	if (g->gpu || n->op != OX_OP_LSTM || n->nin < 3 || !g->target || g->target->vw < 1)
		return 0;
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *r = ox_in(g, n, 2);
	if (x->dtype != OX_F32 || w->kind != OX_V_CONST || r->kind != OX_V_CONST || !w->data || !r->data ||
	    w->dtype != OX_F32 || r->dtype != OX_F32 || w->shape.rank != 3 || r->shape.rank != 3 ||
	    (n->nin > 4 && n->in[4] >= 0) || (n->nin > 7 && n->in[7] >= 0) || ox_attr_get(n, "clip") ||
	    ox_attr_int(n, "input_forget", 0))
		return 0;
	if (ox_ir_rnn_decode(g, n, &ndir, &reverse, &hidden, act, alpha, beta) || hidden < 1 || hidden % g->target->vw)
		return 0;
	for (int d = 0; d < ndir; d++)
		if (act[3 * d] != 2 || act[3 * d + 1] != 1 || act[3 * d + 2] != 1) /* Sigmoid, Tanh, Tanh */
			return 0;
	return 1;
}
