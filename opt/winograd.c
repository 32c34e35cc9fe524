/* winograd.c: Winograd F(m x m, 3 x 3) for the 3x3 convolutions where it
 * pays (Lavin & Gray 2016).
 *
 * A blocked f32 Conv 3x3, stride 1, dilation 1, group 1 on a blocked
 * input, any pads, can compute each m x m tile of its output from the
 * (m+2) x (m+2) window of input under it with (m+2)^2 multiplies per
 * input and output channel instead of 9 m^2: the window transformed
 * (V = B^T d B), then for each of the (m+2)^2 points a GEMM
 * [tiles x C] x [C x M] with the transformed weights U = G g G^T, then
 * the output transform (Y = A^T M A), bias and epilogue
 * (codegen/c/emit_wino.c). F(4x4) does 4x fewer multiplies than the direct
 * kernels, F(2x2) 2.25x; the transforms cost adds, the weights are 4x and
 * 1.8x bigger, and F(4x4)'s rounding error is bigger (F(2x2)'s is not;
 * docs/optimizer.md states both). Here, per Conv: F(4x4), F(2x2) or the
 * direct kernels, whichever the cost model (ox_opt_conv_cycles,
 * calibrated by measurement) says is fastest, F(4x4) only by a margin
 * over F(2x2); then U in double precision, rounded once, packed for the
 * micro-kernel's tile as OX_L_WINOW. pack.c pads the bias and sizes the
 * scratch from the same geometry (ox_opt_conv_geo). Which Convs can use
 * it (ox_opt_wino_eligible), the transforms' matrices (ox_opt_wino_mats,
 * which codegen/c/emit_wino.c checks its printed transforms against), the
 * geometry and the cost model are shared analyses, in opt/analysis.c.
 * Off with --opt 0 and with --winograd off (g->winograd = 0).
 * Requires: layout (blocked values). Invalidates: nothing (a constant is
 * added, the old weights are left for codegen to skip when unused).
 */
#include "opt.h"
#include <stdlib.h>
#include <string.h>

/* U = G g G^T of every (output, input) channel pair in double, rounded
 * once, as [groups of ocb vectors][T^2][C][group width]; lanes past M zero */
static ox_id transform(ox_graph *g, const ox_node *n, const ox_convgeo *q)
{
	const ox_winomats *W = ox_opt_wino_mats(q->wm);
	const ox_value *wv = ox_in(g, n, 1);
	const int T = W->T, b = q->b;
	const int64_t C = q->C, M = q->M, mv = (M + b - 1) / b, T2 = T * T;
	ox_tensor *t = ox_ir_new_tensor(g, OX_F32, &(ox_shape){1, {T2 * C * mv * b}});
	t->shape = wv->shape;
	char name[256];
	snprintf(name, sizeof name, "%s@winow%d", wv->name, q->wm);
	const ox_tensor *wt = wv->data; /* adding a value may move g->vals */
	wv = NULL;
	ox_id id = ox_ir_add_const(g, name, t);
	ox_value *v = &g->vals[id];
	v->layout = OX_L_WINOW, v->lp[0] = b, v->lp[1] = q->wm, v->lp[2] = q->ocb;
	if (ox_value_storage_numel(v) != T2 * C * mv * b)
		ox_die("winograd: %s holds %lld floats, its layout %lld", name, (long long)(T2 * C * mv * b),
		       (long long)ox_value_storage_numel(v));
	float *dst = t->data;
	for (int64_t g0 = 0; g0 < mv; g0 += q->ocb) {
		int64_t gw = (mv - g0 < q->ocb ? mv - g0 : q->ocb) * b;
		float *grp = dst + g0 * b * T2 * C;
		for (int64_t j = 0; j < gw; j++) {
			int64_t m = g0 * b + j;
			for (int64_t c = 0; c < C; c++) {
				double gk[9], u[64], tmp[24];
				for (int k = 0; k < 9; k++)
					gk[k] = m < M ? ox_tensor_get_f64(wt, (m * C + c) * 9 + k) : 0;
				for (int i = 0; i < T; i++) /* G g: T x 3 */
					for (int l = 0; l < 3; l++)
						tmp[i * 3 + l] = W->g[i * 3] * gk[l] + W->g[i * 3 + 1] * gk[3 + l] +
								 W->g[i * 3 + 2] * gk[6 + l];
				for (int i = 0; i < T; i++) /* (G g) G^T: T x T */
					for (int l = 0; l < T; l++)
						u[i * T + l] = tmp[i * 3] * W->g[l * 3] + tmp[i * 3 + 1] * W->g[l * 3 + 1] +
							       tmp[i * 3 + 2] * W->g[l * 3 + 2];
				for (int64_t xi = 0; xi < T2; xi++)
					grp[(xi * C + c) * gw + j] = (float)u[xi];
			}
		}
	}
	return id;
}

#define F4_GAIN 1.15

/* the algorithm for n: 4, 2 or 0 (direct), by the modeled cycles */
static int choose(ox_graph *g, const ox_node *n)
{
	if (g->winograd == 2 || g->winograd == 4)
		return g->winograd;
	/* under a megaflop (the layers codegen runs without the parallel-for
	 * hook), the microseconds won are not worth the scratch and the bigger
	 * weights: a small network's arena doubled (examples/digits) */
	if (ox_ir_flops(g, n) < 1000000) {
		ox_note("winograd: Conv '%s': under a megaflop: modeled Mcycles direct -, F(2x2) -, F(4x4) -: direct",
			n->name);
		return 0;
	}
	ox_convgeo d, w;
	if (ox_opt_conv_geo_as(g, n, 0, &d))
		return 0;
	double c[3] = {ox_opt_conv_cycles(g, &d), -1, -1};
	for (int wm = 2; wm <= 4; wm += 2)
		if (!ox_opt_conv_geo_as(g, n, wm, &w))
			c[wm / 2] = ox_opt_conv_cycles(g, &w);
	/* F(2x2) where it is faster than the direct kernels; F(4x4) where it
	 * is faster than both and by F4_GAIN than F(2x2), the price of its
	 * rounding error (2-11x the direct kernels', F(2x2)'s at or below theirs) */
	int m = 0;
	if (c[1] >= 0 && c[1] < c[0])
		m = 2;
	if (c[2] >= 0 && c[2] < c[0] && (m == 0 || c[2] * F4_GAIN < c[1]))
		m = 4;
	ox_note("winograd: Conv '%s' [%lld,%lld,%lld,%lld] -> %lld channels: modeled Mcycles direct %.3f, F(2x2) %.3f, "
		"F(4x4) %.3f: %s", n->name, (long long)d.N, (long long)d.C, (long long)d.IH, (long long)d.IW,
		(long long)d.M, c[0] / 1e6, c[1] / 1e6, c[2] / 1e6, m == 4 ? "F(4x4)" : m == 2 ? "F(2x2)" : "direct");
	return m;
}

int ox_opt_winograd(ox_graph *g)
{
	if (g->gpu) /* the CUDA kernels read plain values (ir.h, gpu) */
		return 0;
	if (!g->opt || !g->winograd)
		return 0;
	int nn = g->nnodes;
	for (int i = 0; i < nn; i++) {
		ox_node *n = &g->nodes[i];
		if (n->op != OX_OP_Conv || !ox_opt_wino_eligible(g, n))
			continue;
		int m = choose(g, n);
		ox_convgeo q;
		if (!m || ox_opt_conv_geo_as(g, n, m, &q))
			continue;
		n->in[1] = transform(g, n, &q);
	}
	ox_ir_fill_uses(g);
	return 0;
}
