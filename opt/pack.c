/* pack.c: weights laid out in the order the kernels read them, and the
 * tiles of the blocked convolutions.
 *
 * For each Conv the layout pass blocked (its output is OX_L_BLOCKED), the
 * tile is chosen here from the target's table (ir/target.h) by a small
 * cost model, and the weights become a new constant in that tile's order:
 * OX_L_CONVW (groups of `ocb` output vectors, the reduction in the order
 * the micro-kernel walks it) or OX_L_DWW for depthwise; the bias becomes
 * an OX_L_PADDED [M] vector (a zero one when there was none).
 * A Conv with pads gets scratch memory for a zero-bordered copy of its
 * input, so its kernels never test borders. A Conv opt/winograd.c gave
 * Winograd weights (OX_L_WINOW) keeps them; its geometry (tiles, blocks,
 * task slots) is chosen here too, and its scratch is the slots'. The cost
 * model of both algorithms, which opt/winograd.c compares, is here
 * (ox_opt_conv_cycles). Codegen reads the same geometry through
 * ox_opt_conv_geo, so the two cannot disagree. Run-time sizes (batch,
 * image, GEMM rows) are weighed at their tops, and scratch is sized for
 * them.
 * Requires: the layout pass. Invalidates: nothing (constants are added,
 * the old ones are left for codegen to skip when unused).
 */
#include "opt.h"
#include "../ir/family.h"
#include <string.h>

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
	/* the tile, by the conv's cost model: rows of A as positions */
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
	gemm_chunk(q);
	return 0;
}

/* ---- packing ---- */

static ox_id new_const(ox_graph *g, const char *name, const char *what, int64_t numel, const ox_shape *logical,
		       int layout, int p0, int p1, int p2)
{
	ox_tensor *t = ox_ir_new_tensor(g, OX_F32, &(ox_shape){1, {numel}});
	t->shape = *logical;
	char buf[256];
	snprintf(buf, sizeof buf, "%s@%s", name, what);
	ox_id id = ox_ir_add_const(g, buf, t);
	ox_value *v = &g->vals[id];
	v->layout = layout, v->lp[0] = p0, v->lp[1] = p1, v->lp[2] = p2;
	if (ox_value_storage_numel(v) != numel)
		ox_die("pack: %s holds %lld floats, its layout %lld", buf, (long long)numel,
		       (long long)ox_value_storage_numel(v));
	return id;
}

/* the bias (or zeros) as an [M] vector padded to the vector width */
static ox_id pack_bias(ox_graph *g, ox_node *n, const ox_convgeo *cg)
{
	int64_t mp = (cg->M + cg->b - 1) / cg->b * cg->b;
	const ox_value *bv = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	const ox_tensor *bt = bv ? bv->data : NULL; /* new_const may move g->vals */
	ox_id id = new_const(g, bv ? bv->name : n->name, bv ? "blocked" : "zero bias", mp,
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
		id = new_const(g, wv->name, "dww", mp * taps, &wv->shape, OX_L_DWW, b, 0, 0);
		float *dst = g->vals[id].data->data;
		for (int64_t m = 0; m < M; m++)
			for (int64_t t = 0; t < taps; t++)
				dst[(m / b * taps + t) * b + m % b] = w[m * taps + t];
	} else {
		/* groups of ocb output vectors; in each, the reduction as the
		 * kernel walks it: [C/b][KH][KW][b rows] for a blocked input,
		 * [KH][KW][C] for a plain one; a row holds the group's width */
		int64_t C = cg->C, ib = cg->inblocked ? b : 0;
		id = new_const(g, wv->name, "convw", mp * C * taps, &wv->shape, OX_L_CONVW, b, cg->ocb, (int)ib);
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
	ox_id id = new_const(g, ox_in(g, n, 1)->name, "gemmb", K * mv * b, &(ox_shape){2, {K, N}}, OX_L_GEMMB,
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
	ox_id bias = new_const(g, c ? c->name : n->name, "bias", mv * b, &(ox_shape){1, {N}}, OX_L_PADDED, b, 0, 0);
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

int ox_opt_pack(ox_graph *g)
{
	if (g->gpu) /* the CUDA kernels read plain values (ir.h, gpu) */
		return 0;
	if (!g->opt)
		return 0;
	int nn = g->nnodes;
	for (int i = 0; i < nn; i++) {
		ox_node *n = &g->nodes[i];
		ox_convgeo cg;
		if (n->op == OX_OP_Conv && n->nout >= 1 && n->out[0] >= 0 && g->vals[n->out[0]].layout == OX_L_BLOCKED) {
			if (ox_opt_conv_geo(g, n, &cg))
				return -1;
			pack_conv(g, n, &cg);
		}
		ox_attngeo aq;
		if (n->op == OX_OP_Attention && !ox_opt_attn_geo(g, n, &aq))
			ox_ir_add_scratch(g, n, aq.slots * aq.slot_floats * 4);
		ox_gemmgeo gq;
		if ((n->op == OX_OP_MatMul || n->op == OX_OP_Gemm) && !ox_opt_gemm_geo(g, n, &gq) && gq.constb &&
		    !g->vals[n->in[1]].layout)
			pack_gemm(g, n, &gq);
	}
	ox_ir_fill_uses(g);
	return 0;
}
