/* emit_layout.c: C bodies for layout conversions (onnxcc::Reorder, made by
 * opt/layout.c at the edges of the channel-blocked regions).
 *
 * plain [N,C,H,W] -> blocked [N][C/b][H][W][b]: lanes past C are written
 * as 0, so a blocked value made here has defined padding; blocked ->
 * plain copies the C real channels back. A task per image and channel
 * block; b x b blocks (b positions of b channels) are transposed in
 * vector registers (templates/vf.c's ox_vf_transpose). N, H and W may be
 * run-time dims (the channels are constant).
 */
#include "ukernel.h"

int emit_layout(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (ox_attr_int(n, "ox_nhwc", 0)) /* (opt/plan.c makes it a view) */
		return ox_error(g, n, "a channels-last Reorder that is not a view");
	int tob = y->layout == OX_L_BLOCKED, fromb = x->layout == OX_L_BLOCKED;
	if (tob == fromb || x->shape.rank != 4 || (x->layout && !fromb) || (y->layout && !tob))
		return ox_error(g, n, "Reorder from %s to %s is not supported", ox_layout_names[x->layout],
				ox_layout_names[y->layout]);
	if (ox_dim_is_rt(g, x->shape.d[1]))
		return ox_error(g, n, "Reorder of a run-time channel count is not supported");
	const ox_dim N = x->shape.d[0], S = ox_dim_mul(g, x->shape.d[2], x->shape.d[3]);
	const int64_t C = x->shape.d[1];
	int b = tob ? y->lp[0] : x->lp[0];
	int64_t CB = (C + b - 1) / b;
	ox_cg_printf(cg, "\t/* [%s,%lld,%s,%s] %s -> %s, channel blocks of %d */\n", ox_uk_dimtext(cg, N),
		     (long long)C, ox_uk_dimtext(cg, x->shape.d[2]), ox_uk_dimtext(cg, x->shape.d[3]),
		     ox_layout_names[x->layout], ox_layout_names[y->layout], b);
	/* a task per image and channel block; b positions at a time, the b x b
	 * block transposed in registers (ox_vf_transpose), the rest of the
	 * positions one element at a time */
	ox_cg_use_vf(cg);
	ox_cg_tasks_dim(cg, ox_dim_mul(g, N, CB));
	ox_cg_line(cg, 1, "const long n = t / %lld, cb = t %% %lld;", (long long)CB, (long long)CB);
	ox_cg_line(cg, 1, "const long nc = %lld - cb * %d < %d ? %lld - cb * %d : %d;", (long long)C, b, b,
		   (long long)C, b, b);
	/* S, the positions, as C: a literal, or a variable when run-time */
	char Sx[64], Sb[64], Sr[64];
	if (ox_dim_is_rt(g, S)) {
		ox_cg_line(cg, 1, "const long S = %s; /* positions */", ox_cg_dim(cg, S));
		ox_cg_snprintf(Sx, sizeof Sx, "S");
		ox_cg_snprintf(Sb, sizeof Sb, "S * %d", b);
		ox_cg_snprintf(Sr, sizeof Sr, "S - S %% %d", b);
	} else {
		int64_t sv = ox_dim_eval(g, S);
		ox_cg_snprintf(Sx, sizeof Sx, "%lld", (long long)sv);
		ox_cg_snprintf(Sb, sizeof Sb, "%lld", (long long)(sv * b));
		ox_cg_snprintf(Sr, sizeof Sr, "%lld", (long long)(sv - sv % b));
	}
	ox_cg_line(cg, 1, "const long p0 = (n * %lld + cb * %d) * %s, q0 = (n * %lld + cb) * %s;", (long long)C, b,
		   Sx, (long long)CB, Sb);
	ox_cg_line(cg, 1, "for (long s0 = 0; s0 + %d <= %s; s0 += %d) {", b, Sx, b);
	ox_cg_line(cg, 2, "ox_vf r[%d];", b);
	if (tob) {
		ox_cg_line(cg, 2, "for (long c = 0; c < %d; c++) /* the padding lanes: zero */", b);
		ox_cg_line(cg, 3, "r[c] = c < nc ? ox_vf_load(in0 + p0 + c * %s + s0) : ox_vf_zero();", Sx);
		ox_cg_line(cg, 2, "ox_vf_transpose(r);");
		ox_cg_line(cg, 2, "for (long s = 0; s < %d; s++)", b);
		ox_cg_line(cg, 3, "ox_vf_store(out0 + q0 + (s0 + s) * %d, r[s]);", b);
		ox_cg_line(cg, 1, "}");
		ox_cg_line(cg, 1, "for (long s = %s; s < %s; s++)", Sr, Sx);
		ox_cg_line(cg, 2, "for (long c = 0; c < %d; c++)", b);
		ox_cg_line(cg, 3, "out0[q0 + s * %d + c] = c < nc ? in0[p0 + c * %s + s] : 0;", b, Sx);
	} else {
		ox_cg_line(cg, 2, "for (long s = 0; s < %d; s++)", b);
		ox_cg_line(cg, 3, "r[s] = ox_vf_load(in0 + q0 + (s0 + s) * %d);", b);
		ox_cg_line(cg, 2, "ox_vf_transpose(r);");
		ox_cg_line(cg, 2, "for (long c = 0; c < nc; c++)");
		ox_cg_line(cg, 3, "ox_vf_store(out0 + p0 + c * %s + s0, r[c]);", Sx);
		ox_cg_line(cg, 1, "}");
		ox_cg_line(cg, 1, "for (long s = %s; s < %s; s++)", Sr, Sx);
		ox_cg_line(cg, 2, "for (long c = 0; c < nc; c++)");
		ox_cg_line(cg, 3, "out0[p0 + c * %s + s] = in0[q0 + s * %d + c];", Sx, b);
	}
	return 0;
}
