/* emit_layout.c: C bodies for layout conversions (onnxcc::Reorder, made by
 * opt/layout.c at the edges of the channel-blocked regions).
 *
 * plain [N,C,H,W] -> blocked [N][C/b][H][W][b]: lanes past C are written
 * as 0, so a blocked value made here has defined padding; blocked ->
 * plain copies the C real channels back. A task per image and channel
 * block; b x b blocks (b positions of b channels) are transposed in
 * vector registers (templates/vf.c's ox_vf_transpose).
 */
#include "cg.h"

int emit_layout(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int tob = y->layout == OX_L_BLOCKED, fromb = x->layout == OX_L_BLOCKED;
	if (tob == fromb || x->shape.rank != 4 || (x->layout && !fromb) || (y->layout && !tob))
		return ox_error(g, n, "Reorder from %s to %s is not supported", ox_layout_names[x->layout],
				ox_layout_names[y->layout]);
	int64_t N = x->shape.d[0], C = x->shape.d[1], S = x->shape.d[2] * x->shape.d[3];
	int b = tob ? y->lp[0] : x->lp[0];
	int64_t CB = (C + b - 1) / b;
	ox_cg_printf(cg, "\t/* [%lld,%lld,%lld,%lld] %s -> %s, channel blocks of %d */\n", (long long)N,
		     (long long)C, (long long)x->shape.d[2], (long long)x->shape.d[3], ox_layout_names[x->layout],
		     ox_layout_names[y->layout], b);
	/* a task per image and channel block; b positions at a time, the b x b
	 * block transposed in registers (ox_vf_transpose), the rest of the
	 * positions one element at a time */
	ox_cg_use_vf(cg);
	ox_cg_tasks(cg, (long)(N * CB));
	ox_cg_line(cg, 1, "const long n = t / %lld, cb = t %% %lld;", (long long)CB, (long long)CB);
	ox_cg_line(cg, 1, "const long nc = %lld - cb * %d < %d ? %lld - cb * %d : %d;", (long long)C, b, b,
		   (long long)C, b, b);
	ox_cg_line(cg, 1, "const long p0 = (n * %lld + cb * %d) * %lld, q0 = (n * %lld + cb) * %lld;", (long long)C, b,
		   (long long)S, (long long)CB, (long long)(S * b));
	ox_cg_line(cg, 1, "for (long s0 = 0; s0 + %d <= %lld; s0 += %d) {", b, (long long)S, b);
	ox_cg_line(cg, 2, "ox_vf r[%d];", b);
	if (tob) {
		ox_cg_line(cg, 2, "for (long c = 0; c < %d; c++) /* the padding lanes: zero */", b);
		ox_cg_line(cg, 3, "r[c] = c < nc ? ox_vf_load(in0 + p0 + c * %lld + s0) : ox_vf_zero();", (long long)S);
		ox_cg_line(cg, 2, "ox_vf_transpose(r);");
		ox_cg_line(cg, 2, "for (long s = 0; s < %d; s++)", b);
		ox_cg_line(cg, 3, "ox_vf_store(out0 + q0 + (s0 + s) * %d, r[s]);", b);
		ox_cg_line(cg, 1, "}");
		ox_cg_line(cg, 1, "for (long s = %lld; s < %lld; s++)", (long long)(S - S % b), (long long)S);
		ox_cg_line(cg, 2, "for (long c = 0; c < %d; c++)", b);
		ox_cg_line(cg, 3, "out0[q0 + s * %d + c] = c < nc ? in0[p0 + c * %lld + s] : 0;", b, (long long)S);
	} else {
		ox_cg_line(cg, 2, "for (long s = 0; s < %d; s++)", b);
		ox_cg_line(cg, 3, "r[s] = ox_vf_load(in0 + q0 + (s0 + s) * %d);", b);
		ox_cg_line(cg, 2, "ox_vf_transpose(r);");
		ox_cg_line(cg, 2, "for (long c = 0; c < nc; c++)");
		ox_cg_line(cg, 3, "ox_vf_store(out0 + p0 + c * %lld + s0, r[c]);", (long long)S);
		ox_cg_line(cg, 1, "}");
		ox_cg_line(cg, 1, "for (long s = %lld; s < %lld; s++)", (long long)(S - S % b), (long long)S);
		ox_cg_line(cg, 2, "for (long c = 0; c < nc; c++)");
		ox_cg_line(cg, 3, "out0[p0 + c * %lld + s] = in0[q0 + s * %d + c];", (long long)S, b);
	}
	return 0;
}
