/* cuda_nn.c: CUDA kernels of ConvTranspose, Resize and AveragePool
 * (--target cuda), one thread per output element, plain layout.
 * ConvTranspose (f32; a run-time batch and spatial size as parameters) gathers: output o of a kernel tap reads input
 * (o + pad - k * dil) / stride when that divides exactly, in the C
 * target's order of taps and channels (templates/convtranspose.c).
 * Resize reads the per-axis tap tables that the C target prints
 * (templates/resize_taps.c, the same text codegen/c/emit_nn.c includes),
 * here as device arrays, and sums them in the C target's order and
 * precision (templates/resize.c). AveragePool (f32, f16, bf16; a
 * run-time batch) sums the taps and counts them as templates/avgpool.c.
 * GridSample calls the C target's function of one output position
 * (templates/norm_gridsample.c) from a thread each.
 * Anything else declines: the C target's function runs on the device
 * then.
 */
#include "cuda_kernels.h"
#include "../resize.h"
#include "../../ir/family.h"
#include <math.h>
#include "../../opt/opt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define MAXSP (OX_MAX_RANK - 2)

/* every operand f32, plain, of constant shape */
static int plain_f32(ox_graph *g, const ox_value *v)
{
	return v && v->dtype == OX_F32 && !v->layout && v->has_shape && !ox_shape_is_rt(g, &v->shape);
}

/* ---- ConvTranspose ---- */

/* " LABEL v0SEPv1..." into a kernel's comment */
static void join(ox_buf *t, const char *label, const int64_t *v, int n, const char *sep)
{
	ox_buf_puts(t, label);
	for (int i = 0; i < n; i++)
		ox_buf_printf(t, "%s%lld", i ? sep : " ", (long long)v[i]);
}

static int emit_convtranspose(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *b = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	/* f32, plain; x and y may have a run-time batch and spatial size
	 * (explicit pads: the kernel's parameters) */
	const int rt = x && y && x->has_shape && y->has_shape && (ox_shape_is_rt(g, &x->shape) || ox_shape_is_rt(g, &y->shape));
	if (!x || !y || x->dtype != OX_F32 || y->dtype != OX_F32 || x->layout || y->layout || !x->has_shape ||
	    !y->has_shape || !plain_f32(g, w) || (b && !plain_f32(g, b)))
		return 1;
	const int nsp = x->shape.rank - 2;
	if (nsp < 1 || nsp > 3 || w->shape.rank != x->shape.rank || y->shape.rank != x->shape.rank)
		return 1;
	if (rt && (ox_dim_is_rt(g, x->shape.d[1]) || ox_dim_is_rt(g, y->shape.d[1]) ||
		   strcmp(ox_attr_str(n, "auto_pad", "NOTSET"), "NOTSET") || ox_attr_get(n, "output_shape")))
		return 1;
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	for (int i = 0; i < nsp; i++)
		in[i] = ox_opt_top(g, x->shape.d[i + 2]);
	/* the C target's decoding (codegen/c/emit_nn.c); a failure is reported as it would be there */
	if (ox_ir_nn_window(g, n, nsp, &w->shape, k, s, d, pads, &ap) ||
	    ox_ir_nn_convt(g, n, nsp, in, k, s, d, pads, ap, out))
		return -1;
	const int64_t N = ox_opt_top(g, x->shape.d[0]), C = x->shape.d[1], M = y->shape.d[1], G = ox_attr_int(n, "group", 1);
	if (N < 0 || G < 1 || C % G || M % G || w->shape.d[0] != C || w->shape.d[1] * G != M ||
	    (b && ox_shape_numel(&b->shape) != M))
		return 1;
	int64_t isz = 1, osz = 1, ksz = 1;
	for (int i = 0; i < nsp; i++) {
		if ((!rt && out[i] != y->shape.d[i + 2]) || w->shape.d[i + 2] != k[i] || s[i] < 1 || d[i] < 1)
			return 1;
		isz *= in[i], osz *= out[i], ksz *= k[i];
	}
	const int64_t Cg = C / G, Mg = M / G, tot = N * M * osz;
	if (tot <= 0 || isz <= 0 || Cg <= 0)
		return 1;
	/* the dims and their products as the kernel's text: constants, or R's
	 * parameters (all of them before the kernel's head is printed);
	 * below[a], ist[a]: the output's and the input's spatial size past axis a */
	ox_cu_rt R = {g, 0, {0}};
	char ins[MAXSP][32], outs[MAXSP][32], below[MAXSP][32], ist[MAXSP][32], iszs[32], oszs[32], tots[32], mos[32],
		cis[32];
	ox_dim isz_d = 1, osz_d = 1;
	for (int i = nsp - 1; i >= 0; i--) {
		if (!ox_cu_rt_dim(&R, x->shape.d[i + 2], ins[i], sizeof ins[i]) ||
		    !ox_cu_rt_dim(&R, y->shape.d[i + 2], outs[i], sizeof outs[i]) ||
		    !ox_cu_rt_dim(&R, osz_d, below[i], sizeof below[i]) || !ox_cu_rt_dim(&R, isz_d, ist[i], sizeof ist[i]))
			return 1;
		isz_d = ox_dim_mul(g, isz_d, x->shape.d[i + 2]), osz_d = ox_dim_mul(g, osz_d, y->shape.d[i + 2]);
	}
	const ox_dim tot_d = ox_dim_mul(g, ox_dim_mul(g, x->shape.d[0], M), osz_d);
	if (!ox_cu_rt_dim(&R, isz_d, iszs, sizeof iszs) || !ox_cu_rt_dim(&R, osz_d, oszs, sizeof oszs) ||
	    !ox_cu_rt_dim(&R, tot_d, tots, sizeof tots) || !ox_cu_rt_dim(&R, ox_dim_mul(g, osz_d, M), mos, sizeof mos) ||
	    !ox_cu_rt_dim(&R, ox_dim_mul(g, C, isz_d), cis, sizeof cis))
		return 1;
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: ConvTranspose %d-D, group %lld: [%lld,%lld", cg->fname, nsp, (long long)G, (long long)N,
		      (long long)C);
	for (int i = 0; i < nsp; i++)
		ox_buf_printf(&t, ",%lld", (long long)in[i]);
	ox_buf_printf(&t, "] -> [%lld,%lld", (long long)N, (long long)M);
	for (int i = 0; i < nsp; i++)
		ox_buf_printf(&t, ",%lld", (long long)out[i]);
	join(&t, "], kernel", k, nsp, "x");
	join(&t, ", stride", s, nsp, "x");
	join(&t, ", dilation", d, nsp, "x");
	join(&t, ", begin pads", pads, nsp, ",");
	ox_buf_printf(&t, "; a thread per output%s */\n", R.n ? "; at most: run-time dims" : "");
	ox_buf rtp = {0};
	ox_cu_rt_params(NULL, &R, &rtp, NULL);
	ox_buf_printf(&t, "__global__ void __launch_bounds__(256) %s(const float *__restrict__ x, const float *__restrict__ w,\n"
			  "\t\tconst float *__restrict__ bias, float *__restrict__ y%s)\n{\n"
			  "\tconst $I i = ($I)blockIdx.x * 256 + threadIdx.x;\n\tif (i >= %s%s)\n\t\treturn;\n",
		      kname, rtp.s ? rtp.s : "", tots, ox_dim_is_rt(g, tot_d) ? "" : "$L");
	ox_buf_free(&rtp);
	/* the output's index: o<a> per spatial axis, channel m, image nb */
	for (int a = nsp - 1; a >= 0; a--) {
		if (a == nsp - 1)
			ox_buf_printf(&t, "\tconst $I o%d = i %% %s;\n", a, outs[a]);
		else
			ox_buf_printf(&t, "\tconst $I o%d = i / %s %% %s;\n", a, below[a], outs[a]);
	}
	ox_buf_printf(&t, "\tconst $I m = i / %s %% %lld, nb = i / %s;\n", oszs, (long long)M, mos);
	/* weights [C, M/G, k...]: input channel c of the group steps by Mg * ksz */
	if (G > 1)
		ox_buf_printf(&t, "\tconst $I gi = m / %lld;\n"
				  "\tconst float *xg = x + (nb * %lld + gi * %lld) * %s;\n"
				  "\tconst float *wm = w + (gi * %lld + m %% %lld) * %lld;\n",
			      (long long)Mg, (long long)C, (long long)Cg, iszs, (long long)(Cg * Mg), (long long)Mg,
			      (long long)ksz);
	else
		ox_buf_printf(&t, "\tconst float *xg = x + nb * %s;\n\tconst float *wm = w + m * %lld;\n", cis,
			      (long long)ksz);
	ox_buf_printf(&t, "\tfloat v = %s;\n", b ? "bias[m]" : "0.0f");
	/* taps: the last axis outermost, then the others, channels innermost,
	 * as the C target sums them */
	int lvl = 1;
	for (int j = 0; j < nsp; j++) {
		int a = j == 0 ? nsp - 1 : j - 1;
		char ind[16];
		memset(ind, '\t', sizeof ind);
		ind[lvl] = 0;
		ox_buf_printf(&t, "%sfor (int k%d = 0; k%d < %lld; k%d++) {\n", ind, a, a, (long long)k[a], a);
		ox_buf_printf(&t, "%s\tconst $I q%d = o%d", ind, a, a);
		if (pads[a])
			ox_buf_printf(&t, " %c %lld", pads[a] < 0 ? '-' : '+', (long long)llabs(pads[a]));
		ox_buf_printf(&t, " - k%d", a);
		if (d[a] > 1)
			ox_buf_printf(&t, " * %lld", (long long)d[a]);
		ox_buf_puts(&t, ";\n");
		if (s[a] == 1)
			ox_buf_printf(&t, "%s\tif (q%d < 0 || q%d >= %s)\n", ind, a, a, ins[a]);
		else
			ox_buf_printf(&t, "%s\tif (q%d < 0 || q%d %% %lld || q%d / %lld >= %s)\n", ind, a, a,
				      (long long)s[a], a, (long long)s[a], ins[a]);
		ox_buf_printf(&t, "%s\t\tcontinue;\n", ind);
		lvl++;
	}
	/* the input's and the weight's offsets of the tap */
	ox_buf xo = {0}, wo = {0};
	int64_t kst = 1;
	for (int a = nsp - 1; a >= 0; a--) {
		if (s[a] == 1)
			ox_buf_printf(&xo, "%sq%d", xo.len ? " + " : "", a);
		else
			ox_buf_printf(&xo, "%sq%d / %lld", xo.len ? " + " : "", a, (long long)s[a]);
		if (a < nsp - 1)
			ox_buf_printf(&xo, " * %s", ist[a]);
		ox_buf_printf(&wo, "%sk%d", wo.len ? " + " : "", a);
		if (kst > 1)
			ox_buf_printf(&wo, " * %lld", (long long)kst);
		kst *= k[a];
	}
	char ind[16];
	memset(ind, '\t', sizeof ind);
	ind[lvl] = 0;
	ox_buf_printf(&t, "%sconst float *xp = xg + %s, *wp = wm + %s;\n"
			  "%sfor ($I c = 0; c < %lld; c++)\n"
			  "%s\tv = fmaf(xp[c * %s], wp[c * %lld], v);\n",
		      ind, xo.s, wo.s, ind, (long long)Cg, ind, iszs, (long long)(Mg * ksz));
	ox_buf_free(&xo), ox_buf_free(&wo);
	while (--lvl >= 1) {
		ind[lvl] = 0;
		ox_buf_printf(&t, "%s}\n", ind);
	}
	ox_buf_puts(&t, "\ty[i] = v;\n}\n\n");
	if (R.n) {
		ox_buf a = {0};
		ox_buf_printf(&a, "in0, in1, %s, out0", b ? "in2" : "nullptr");
		ox_cu_rt_params(cg, &R, NULL, &a);
		ox_cu_launch_rt(cg, kname, tot_d, 256, 256, a.s); /* (N * M * the output's spatial size) */
		ox_buf_free(&a);
	} else {
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, 256, 0, ox_st, in0, in1, %s, out0);\n", kname,
			     (long long)((tot + 255) / 256), b ? "in2" : "nullptr");
	}
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* ---- Resize ---- */

/* A Resize with run-time sizes or scales (n->scratch): one thread runs
 * the C target's text up to the tap tables (ox_cg_resize_rt_plan:
 * ox_rz_shape, the checks of the dims, ox_rz_tables into the scratch
 * after a header), then a thread per output element sums the taps as
 * templates/resize.c and resize_nearest.c do (the same products and sums
 * in the same order). The output's dims must be the host's (ox_d) before
 * the node runs, or the node's own from the data (scales or sizes a graph
 * input): the host then reads them back between the two kernels (a wait,
 * no CUDA Graph) and the run returns a failed check's _ERR_SHAPE; else a
 * failed check sets the run's status (no wait: PREFIX_sync returns it) and
 * the gather writes nothing. f32, f16, bf16; nearest of any type. */
static int emit_resize_rt(ox_cg *cg, ox_graph *g, ox_node *n, ox_rz_opts *ro, const char *what, const char *ctm)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || n->nout != 2)
		return 1;
	const int r = x->shape.rank, dt = y->dtype;
	if (x->layout || y->layout || r < 1 || r > 8 || y->shape.rank != r || x->dtype != dt || !ox_dtype_size(dt) ||
	    (ro->mode && dt != OX_F32 && dt != OX_F16 && dt != OX_BF16))
		return 1;
	/* dims the node defines from the data: the host waits for them
	 * between the two kernels (no CUDA Graph then) */
	int defines = 0;
	for (int a = 0; a < r; a++)
		defines |= ox_dim_defined_by(g, y->shape.d[a], n->out[0]);
	/* the plan: the C target's text, a function of its own on one thread */
	ox_buf saved = cg->body;
	memset(&cg->body, 0, sizeof cg->body);
	int rc = ox_cg_resize_rt_plan(cg, g, n, ro, what, ctm);
	ox_buf plan = cg->body;
	cg->body = saved;
	if (rc) {
		ox_buf_free(&plan);
		return -1;
	}
	char kname[200], pname[220];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(pname, sizeof pname, "%s_plan", cg->fname);
	ox_buf t = {.ix = "long"}, params = {0}, names = {0}, unused = {0};
	for (int k = 0; k < n->nin + n->nout; k++) {
		const int isin = k < n->nin;
		const ox_id id = isin ? n->in[k] : n->out[k - n->nin];
		char nm[16];
		ox_cg_snprintf(nm, sizeof nm, "%s%d", isin ? "in" : "out", isin ? k : k - n->nin);
		ox_buf_printf(&params, ", %s%s *%s", isin ? "const " : "", id < 0 ? "void" : ox_cg_ctype(g->vals[id].dtype), nm);
		ox_buf_printf(&names, ", %s", nm);
		if (!ox_cg_uses_name(plan.s, nm))
			ox_buf_printf(&unused, "\t(void)%s;\n", nm);
	}
	ox_buf_printf(&t, "/* %s: the Resize's output dims checked, its tap tables, on one thread */\n"
			  "OX_STATIC int %s_f(int64_t *ox_d%s)\n{\n\t(void)ox_d;\n%s%s\treturn 0;\n}\n\n",
		      pname, pname, params.s, unused.s ? unused.s : "", plan.s ? plan.s : "");
	ox_buf_printf(&t, "__global__ void %s(int *ox_status, int64_t *ox_d%s)\n{\n"
			  "\tif (!*ox_status && %s_f(ox_d%s))\n\t\t*ox_status = %s_ERR_SHAPE;\n}\n\n",
		      pname, params.s, pname, names.s, cg->prefix_upper);
	ox_buf_free(&plan), ox_buf_free(&unused);
	/* the gather: axis a's taps at ot + h[2r + a] (offsets) and at
	 * wb + h[3r + a] (weights), h[r + a] of them per output index */
	ox_buf body = {0};
	ox_buf_printf(&body, "\tif (*st)\n\t\treturn; /* the plan failed: _ERR_SHAPE */\n"
			     "\tconst int64_t *h = (const int64_t *)sc, *ot = h + %d;\n", 4 * r);
	for (int a = 0; a < r; a++) {
		if (ro->mode)
			ox_buf_printf(&body, "\tconst int64_t *o%d = ot + h[%d] + i%d * h[%d];\n", a, 2 * r + a, a, r + a);
		else /* (one tap) */
			ox_buf_printf(&body, "\tconst int64_t *o%d = ot + h[%d] + i%d;\n", a, 2 * r + a, a);
	}
	/* outside the input (tf_crop_and_resize): extrapolation_value */
	const double extrap = ox_attr_float(n, "extrapolation_value", 0.0f);
	ox_buf_puts(&body, "\tif (");
	for (int a = 0; a < r; a++)
		ox_buf_printf(&body, "%so%d[0] < 0", a ? " || " : "", a);
	ox_buf_printf(&body, ") {\n\t\ty[i] = %s;\n\t\treturn;\n\t}\n", ox_cg_store(dt, ox_cg_lit(dt, extrap)));
	if (!ro->mode) {
		ox_buf_puts(&body, "\ty[i] = x[");
		for (int a = 0; a < r; a++)
			ox_buf_printf(&body, "%so%d[0]", a ? " + " : "", a);
		ox_buf_puts(&body, "];\n");
	} else {
		ox_buf_puts(&body, "\tconst float *wb = (const float *)ot;\n");
		for (int a = 0; a < r; a++)
			ox_buf_printf(&body, "\tconst float *w%d = wb + h[%d] + i%d * h[%d];\n", a, 3 * r + a, a, r + a);
		/* (the counts in registers: read in the loop tests, ptxas spills) */
		ox_buf_puts(&body, "\tconst int ");
		for (int a = 0; a < r; a++)
			ox_buf_printf(&body, "%sn%d = (int)h[%d]", a ? ", " : "", a, r + a);
		ox_buf_puts(&body, ";\n\tdouble acc = 0.0;\n");
		/* the outer axes' tap combinations, the last of them fastest */
		char ind[16] = "\t";
		for (int a = 0; a < r - 1; a++) {
			ox_buf_printf(&body, "%sfor (int t%d = 0; t%d < n%d; t%d++) {\n", ind, a, a, a, a);
			strcat(ind, "\t");
		}
		if (r > 1) {
			/* the C target's weight: 1 * w[r-2] * ... * w[0], in double */
			ox_buf_printf(&body, "%sconst double wc = (double)w%d[t%d]", ind, r - 2, r - 2);
			for (int a = r - 3; a >= 0; a--)
				ox_buf_printf(&body, " * w%d[t%d]", a, a);
			ox_buf_printf(&body, ";\n%sif (wc == 0.0)\n%s\tcontinue;\n%sconst int64_t bc = ", ind, ind, ind);
			for (int a = 0; a < r - 1; a++)
				ox_buf_printf(&body, "%so%d[t%d]", a ? " + " : "", a, a);
			ox_buf_puts(&body, ";\n");
		}
		char xe[64];
		ox_cg_snprintf(xe, sizeof xe, "x[%so%d[t%d]]", r > 1 ? "bc + " : "", r - 1, r - 1);
		ox_buf_printf(&body, "%sdouble s = 0.0;\n%sfor (int t%d = 0; t%d < n%d; t%d++)\n", ind, ind, r - 1, r - 1,
			      r - 1, r - 1);
		ox_buf_printf(&body, "%s\ts += w%d[t%d] * (double)%s;\n", ind, r - 1, r - 1, ox_cg_load(dt, xe));
		ox_buf_printf(&body, "%sacc += %s;\n", ind, r > 1 ? "wc * s" : "s");
		for (int a = r - 2; a >= 0; a--) {
			ind[strlen(ind) - 1] = 0;
			ox_buf_printf(&body, "%s}\n", ind);
		}
		ox_buf_printf(&body, "\ty[i] = %s;\n", ox_cg_store(dt, "(float)acc"));
	}
	ox_cu_rt R = {g, 0, {0}};
	const char *ty = ox_cg_ctype(dt);
	char kp[256];
	ox_cg_snprintf(kp, sizeof kp,
		 "const int *__restrict__ st, const %s *__restrict__ x, %s *__restrict__ y, const uint8_t *__restrict__ sc", ty,
		 ty);
	ox_buf_printf(&t, "/* %s: Resize %s, %s, sizes or scales read when the program runs: a thread\n"
			  " * per output element, the taps from the tables %s wrote */\n",
		      kname, what, ctm, pname);
	rc = ox_cu_index_kernel_rt(&t, kname, kp, y->shape.d, r, body.s, &R);
	if (!rc) {
		ox_cg_printf(cg, "%s\tOX_LAUNCH(%s, 1, 1, 0, ox_st, ox_status, ox_dd%s);\n", defines ? "\tint rc;\n" : "", pname,
			     names.s);
		if (defines) /* (the dims, or the plan's failure, on the host) */
			ox_cg_printf(cg, "\tif ((rc = ox_sync_dims(ox_st)))\n\t\treturn rc;\n");
		ox_cu_index_launch(cg, kname, y->shape.d, r, "ox_status, in0, out0, out1", &R);
		if (defines)
			ox_cg_printf(cg, "\treturn 0;\n");
		cg->cu_rc = cg->cu_sync = defines;
		ox_cg_helper(cg, kname, t.s);
	}
	ox_buf_free(&t), ox_buf_free(&body), ox_buf_free(&params), ox_buf_free(&names);
	return rc ? 1 : 0;
}

static int emit_resize(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	ox_rz_opts ro;
	const char *ctm = "", *nm = "";
	if (n->scratch) {
		if (ox_cg_resize_opts(g, n, &ro, &ctm, &nm))
			return -1; /* (reported, as the C target does) */
		char what[96];
		ox_cg_resize_what(&ro, n, nm, what, sizeof what);
		return emit_resize_rt(cg, g, n, &ro, what, ctm);
	}
	if (!plain_f32(g, x) || !plain_f32(g, y) || n->nout != 1)
		return 1;
	const int r = x->shape.rank;
	if (r < 1 || y->shape.rank != r || ox_shape_numel(&x->shape) <= 0 || ox_shape_numel(&y->shape) <= 0)
		return 1;
	if (ox_cg_resize_opts(g, n, &ro, &ctm, &nm))
		return -1; /* (reported, as the C target does) */
	(void)ctm, (void)nm;
	if (!ox_ir_nn_resize_static(g, n))
		return 1;
	ox_dim osz[OX_MAX_RANK];
	double scale[OX_MAX_RANK], roi[2 * OX_MAX_RANK];
	if (ox_ir_nn_resize(g, n, &x->shape, osz, scale, roi))
		return -1;
	for (int a = 0; a < r; a++)
		if (osz[a] != y->shape.d[a])
			return 1;
	const ox_tensor *sct = ox_in_const(g, n, n->opset < 11 ? 1 : 2);
	ro.scales_given = sct && ox_tensor_numel(sct) > 0;
	const double extrap = ox_attr_float(n, "extrapolation_value", 0.0f);
	/* the tables, from the last axis (stride 1) */
	int nt[OX_MAX_RANK];
	long *offs[OX_MAX_RANK] = {0};
	float *wts[OX_MAX_RANK] = {0};
	int64_t stride[OX_MAX_RANK], st = 1;
	int rc = 0;
	for (int a = r - 1; a >= 0 && !rc; a--) {
		stride[a] = st;
		rc = ox_cg_resize_axis(&ro, x->shape.d[a], y->shape.d[a], scale[a], roi[a], roi[a + r], st, &nt[a], &offs[a],
				 &wts[a]);
		st *= x->shape.d[a];
	}
	if (rc) {
		for (int a = 0; a < r; a++)
			free(offs[a]), free(wts[a]);
		return 1;
	}
	/* an axis whose taps are the identity (one of weight 1 at its own
	 * index: N and C, usually) needs no table; one with -1 in tap 0 has
	 * outputs outside the input (tf_crop_and_resize) */
	int ident[OX_MAX_RANK], neg[OX_MAX_RANK];
	for (int a = 0; a < r; a++) {
		ident[a] = nt[a] == 1 && x->shape.d[a] == y->shape.d[a];
		neg[a] = 0;
		for (int64_t o = 0; o < y->shape.d[a]; o++) {
			if (offs[a][o * nt[a]] != o * stride[a] || (ro.mode && wts[a][o * nt[a]] != 1.0f))
				ident[a] = 0;
			neg[a] |= offs[a][o * nt[a]] < 0;
		}
	}
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n), body = {0};
	ox_buf_printf(&t, "/* %s: Resize %s, %s: [", cg->fname,
		      ro.mode == 0 ? "nearest" : ro.mode == 1 ? "linear" : "cubic",
		      n->opset >= 11 ? ox_attr_str(n, "coordinate_transformation_mode", "half_pixel") : "asymmetric");
	for (int a = 0; a < r; a++)
		ox_buf_printf(&t, "%s%lld", a ? "," : "", (long long)x->shape.d[a]);
	ox_buf_puts(&t, "] -> [");
	for (int a = 0; a < r; a++)
		ox_buf_printf(&t, "%s%lld", a ? "," : "", (long long)y->shape.d[a]);
	ox_buf_puts(&t, "], taps ");
	for (int a = 0; a < r; a++)
		ox_buf_printf(&t, "%s%d", a ? "x" : "", nt[a]);
	ox_buf_puts(&t, "; a thread per output */\n");
	for (int a = 0; a < r; a++) {
		if (ident[a])
			continue;
		char decl[300];
		const int64_t cnt = y->shape.d[a] * nt[a];
		ox_cg_snprintf(decl, sizeof decl, "static __device__ const $I %s_off%d[%lld]", kname, a, (long long)cnt);
		ox_cg_table(&t, decl, offs[a], NULL, cnt, "");
		if (ro.mode) {
			ox_cg_snprintf(decl, sizeof decl, "static __device__ const float %s_wt%d[%lld]", kname, a, (long long)cnt);
			ox_cg_table(&t, decl, NULL, wts[a], cnt, "");
		}
		/* this output's taps */
		ox_buf_printf(&body, "\tconst $I *o%d = %s_off%d + i%d", a, kname, a, a);
		if (nt[a] > 1)
			ox_buf_printf(&body, " * %d", nt[a]);
		ox_buf_puts(&body, ";\n");
		if (ro.mode) {
			ox_buf_printf(&body, "\tconst float *w%d = %s_wt%d + i%d", a, kname, a, a);
			if (nt[a] > 1)
				ox_buf_printf(&body, " * %d", nt[a]);
			ox_buf_puts(&body, ";\n");
		}
	}
	for (int a = 0; a < r; a++)
		free(offs[a]), free(wts[a]);
	/* outside the input: extrapolation_value */
	int anyneg = 0;
	for (int a = 0; a < r; a++)
		if (neg[a])
			ox_buf_printf(&body, "%so%d[0] < 0", anyneg++ ? " || " : "\tif (", a);
	if (anyneg)
		ox_buf_printf(&body, ") {\n\t\ty[i] = %s;\n\t\treturn;\n\t}\n", ox_cg_lit(OX_F32, extrap));
	/* the identity axes' part of the input offset */
	ox_buf base = {0};
	for (int a = 0; a < r; a++)
		if (ident[a] && y->shape.d[a] > 1) {
			ox_buf_printf(&base, "%si%d", base.len ? " + " : "", a);
			if (stride[a] > 1)
				ox_buf_printf(&base, " * %lld", (long long)stride[a]);
		}
	if (ro.mode == 0) {
		int f = base.len > 0;
		ox_buf_printf(&body, "\ty[i] = x[%s", base.len ? base.s : "");
		for (int a = 0; a < r; a++)
			if (!ident[a])
				ox_buf_printf(&body, f++ ? " + o%d[0]" : "o%d[0]", a);
		ox_buf_printf(&body, "%s];\n", f ? "" : "0");
	} else {
		/* the outer axes' tap combinations (the last of them fastest), each
		 * weighing a sum over the last axis' taps, in double as the C target */
		const int last = r - 1;
		if (base.len)
			ox_buf_printf(&body, "\tconst $I b = %s;\n", base.s);
		ox_buf_puts(&body, "\tdouble acc = 0.0;\n");
		int lvl = 1, nouter = 0;
		char prev[16] = "", ind[20];
		if (base.len)
			ox_cg_snprintf(prev, sizeof prev, "b");
		for (int a = 0; a < last; a++) {
			if (ident[a])
				continue;
			memset(ind, '\t', sizeof ind);
			ind[lvl] = 0;
			ox_buf_printf(&body, "%sfor (int t%d = 0; t%d < %d; t%d++) {\n", ind, a, a, nt[a], a);
			lvl++, nouter++;
		}
		memset(ind, '\t', sizeof ind);
		ind[lvl] = 0;
		if (nouter) {
			/* the weight of the combination: the C target's product, from the last outer axis */
			ox_buf_printf(&body, "%sconst double wc = ", ind);
			for (int a = last - 1, f = 0; a >= 0; a--)
				if (!ident[a])
					ox_buf_printf(&body, f++ ? " * w%d[t%d]" : "(double)w%d[t%d]", a, a);
			ox_buf_printf(&body, ";\n%sif (wc == 0.0)\n%s\tcontinue;\n", ind, ind);
			ox_buf_printf(&body, "%sconst $I bc = %s", ind, prev);
			for (int a = 0, f = prev[0] != 0; a < last; a++)
				if (!ident[a])
					ox_buf_printf(&body, f++ ? " + o%d[t%d]" : "o%d[t%d]", a, a);
			ox_buf_puts(&body, ";\n");
			ox_cg_snprintf(prev, sizeof prev, "bc");
		}
		/* (an identity last axis: one tap of weight 1, exact, whose index
		 * the base b already holds) */
		char at[64];
		if (ident[last])
			ox_cg_snprintf(at, sizeof at, "%s", prev[0] ? prev : "0");
		else
			ox_cg_snprintf(at, sizeof at, "%s%so%d[t%d]", prev, prev[0] ? " + " : "", last, last);
		if (ident[last])
			ox_buf_printf(&body, "%sconst double s = (double)x[%s];\n", ind, at);
		else {
			ox_buf_printf(&body, "%sdouble s = 0.0;\n"
					     "%sfor (int t%d = 0; t%d < %d; t%d++)\n",
				      ind, ind, last, last, nt[last], last);
			ox_buf_printf(&body, "%s\ts += w%d[t%d] * (double)x[%s];\n",
				      ind, last, last, at);
		}
		ox_buf_printf(&body, "%sacc += %s;\n", ind, nouter ? "wc * s" : "s");
		while (--lvl >= 1) {
			ind[lvl] = 0;
			ox_buf_printf(&body, "%s}\n", ind);
		}
		ox_buf_puts(&body, "\ty[i] = (float)acc;\n");
	}
	int64_t dims[OX_MAX_RANK];
	for (int a = 0; a < r; a++)
		dims[a] = y->shape.d[a];
	ox_cu_index_kernel(&t, kname, "const float *__restrict__ x, float *__restrict__ y", dims, r, body.s);
	ox_cu_index_launch(cg, kname, dims, r, "in0, out0", NULL);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&body), ox_buf_free(&base);
	return 0;
}

/* ---- AveragePool ---- */

/* AveragePool, 1 to 3 spatial axes (f32, f16, bf16; plain layout;
 * constant image sizes, a run-time batch a parameter): a thread per output, the taps inside the input summed in
 * float in the C target's order (templates/avgpool.c) and divided by the
 * same count: the taps inside the input, or with count_include_pad also
 * those in the pads, never those a ceil_mode window hangs past the end
 * pad. Dilations before opset 19 decline (the C target's error then). */
static int emit_avgpool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || !x->has_shape)
		return 1;
	const int nsp = x->shape.rank - 2;
	if (nsp < 1 || nsp > 3)
		return 1;
	for (int i = 1; i < x->shape.rank; i++)
		if (ox_dim_is_rt(g, x->shape.d[i]) || ox_dim_is_rt(g, y->shape.d[i]))
			return 1; /* (the batch alone may be the run's) */
	int64_t k[MAXSP], s[MAXSP], d[MAXSP], pads[2 * MAXSP], in[MAXSP], out[MAXSP];
	int ap;
	if (ox_ir_nn_window(g, n, nsp, NULL, k, s, d, pads, &ap))
		return 1;
	for (int i = 0; i < nsp; i++) {
		if (n->opset < 19 && d[i] != 1 && ox_attr_get(n, "dilations"))
			return 1;
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	}
	ox_ir_nn_same_pads(ap, nsp, in, out, k, s, d, pads);
	const int incl = (int)ox_attr_int(n, "count_include_pad", 0);
	/* the axes widened to 3, leading ones of extent 1 */
	long long I[3], O[3], K[3], S[3], D[3], P[3], E[3];
	for (int i = 0; i < 3; i++) {
		const int a = i - (3 - nsp);
		I[i] = a < 0 ? 1 : in[a], O[i] = a < 0 ? 1 : out[a], K[i] = a < 0 ? 1 : k[a];
		S[i] = a < 0 ? 1 : s[a], D[i] = a < 0 ? 1 : d[a];
		P[i] = a < 0 ? 0 : pads[a], E[i] = a < 0 ? 0 : pads[a + nsp];
	}
	static const char *const tabs = "\t\t\t\t\t";
	const char ax[] = "dhw";
	ox_buf body = {0};
	/* the divisor: taps inside the input (or the pads) along each axis */
	ox_buf_printf(&body, "\tconst OX_T *xc = x + i0 * %lld$L;\n\t$I cnt = 1;\n", I[0] * I[1] * I[2]);
	for (int i = 0; i < 3; i++) {
		if (K[i] == 1 && P[i] == 0 && E[i] == 0)
			continue; /* (one tap, inside) */
		ox_buf_printf(&body, "\t{\n\t\t$I c = 0;\n\t\tfor ($I k = 0; k < %lld; k++) {\n"
				     "\t\t\tconst $I j = i%d * %lld - %lld + k * %lld;\n",
			      K[i], i + 1, S[i], P[i], D[i]);
		if (incl)
			ox_buf_printf(&body, "\t\t\tc += j >= -%lld && j < %lld;\n", P[i], I[i] + E[i]);
		else
			ox_buf_printf(&body, "\t\t\tc += j >= 0 && j < %lld;\n", I[i]);
		ox_buf_puts(&body, "\t\t}\n\t\tcnt *= c;\n\t}\n");
	}
	/* the sum, over the taps inside the input */
	ox_buf_puts(&body, "\tfloat sum = 0.0f;\n");
	for (int i = 0; i < 3; i++) {
		ox_buf_printf(&body, "%.*sfor ($I k%c = 0; k%c < %lld; k%c++) {\n",
			      i + 1, tabs, ax[i], ax[i], K[i], ax[i]);
		ox_buf_printf(&body, "%.*s\tconst $I j%c = i%d * %lld - %lld + k%c * %lld;\n",
			      i + 1, tabs, ax[i], i + 1, S[i], P[i], ax[i], D[i]);
		ox_buf_printf(&body, "%.*s\tif (j%c < 0 || j%c >= %lld)\n"
				     "%.*s\t\tcontinue;\n",
			      i + 1, tabs, ax[i], ax[i], I[i], i + 1, tabs);
	}
	ox_buf_printf(&body, "\t\t\t\tsum += OX_LD(xc[(jd * %lld + jh) * %lld + jw]);\n", I[1], I[2]);
	for (int i = 2; i >= 0; i--)
		ox_buf_printf(&body, "%.*s}\n", i + 1, tabs);
	ox_buf_puts(&body, "\t/* an empty window divides 0 by 0: NaN, as the C target's */\n"
			   "\ty[i] = OX_ST(sum / (float)cnt);\n");
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: AveragePool %d-D, kernel %lldx%lldx%lld, strides %lldx%lldx%lld, pads ",
		      cg->fname, nsp, K[0], K[1], K[2], S[0], S[1], S[2]);
	ox_buf_printf(&t, "%lld,%lld,%lld "
			  "and %lld,%lld,%lld%s: a thread per output */\n",
		      P[0], P[1], P[2], E[0], E[1], E[2], incl ? ", pads counted" : "");
	const ox_dim dims[4] = {ox_dim_mul(g, x->shape.d[0], x->shape.d[1]), O[0], O[1], O[2]};
	ox_cu_rt R = {g, 0, {0}};
	const int bad = ox_cu_index_kernel_rt(&t, kname, "const OX_T *__restrict__ x, OX_T *__restrict__ y", dims, 4,
					      body.s, &R);
	ox_buf_free(&body);
	if (bad) {
		ox_buf_free(&t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 4, "in0, out0", &R);
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* ---- GridSample ---- */

/* A thread per image and output position: the C target's function of it
 * (templates/norm_gridsample.c ox_gridsample_at_*: the taps of each axis
 * once, then every channel), so the results are its bits. Constant
 * shapes, plain layout, the C target's types (f32, f64, f16, bf16). */
static int emit_gridsample(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *gr = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	const int r = x ? x->shape.rank : 0, nsp = r - 2;
	if (!x || !gr || !y || nsp < 1 || nsp > 3 || x->layout || gr->layout || y->layout || ox_shape_is_rt(g, &x->shape) ||
	    ox_shape_is_rt(g, &gr->shape) || ox_shape_is_rt(g, &y->shape) || !ox_dtype_is_float(x->dtype) ||
	    gr->dtype != x->dtype || y->dtype != x->dtype || !ox_shape_numel(&y->shape))
		return 1;
	if (gr->shape.rank != r || gr->shape.d[0] != x->shape.d[0] || gr->shape.d[r - 1] != nsp)
		return 1; /* (the C target's checks) */
	ox_gs_opts o;
	if (ox_cg_gridsample_opts(g, n, &o) || ox_cg_use(cg, "norm_gridsample", x->dtype))
		return -1;
	const int64_t N = x->shape.d[0], C = x->shape.d[1], nout = ox_shape_numel(&y->shape) / (N * C);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(x->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ grid, %s *__restrict__ y", ty, ty,
		 ty);
	ox_buf body = {0}, t = {.ix = "long"};
	ox_buf_puts(&body, "\tconst $I in[3] = {");
	for (int a = 0; a < 3; a++)
		ox_buf_printf(&body, "%s%lld", a ? ", " : "", (long long)(a < nsp ? x->shape.d[a + 2] : 1));
	ox_buf_printf(&body, "};\n\tox_gridsample_at_%s(x, grid, y, i0, i1, %lld, %d, in, %lld, %d, %d, %d);\n",
		      ox_cg_sfx(x->dtype), (long long)C, nsp, (long long)nout, o.mode, o.pad, o.align);
	ox_buf_printf(&t, "/* %s: GridSample %s, padding %s%s, %d-D: a thread per output position, its %lld channels */\n",
		      kname, o.m, o.p, o.align ? ", align_corners" : "", nsp, (long long)C);
	int64_t dims[2] = {N, nout};
	ox_cu_index_kernel(&t, kname, params, dims, 2, body.s);
	ox_buf_free(&body);
	ox_cu_index_launch(cg, kname, dims, 2, "in0, in1, out0", NULL);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	return 0;
}

int ox_cu_emit_nn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (n->op == OX_OP_GridSample)
		return emit_gridsample(cg, g, n);
	if (n->op == OX_OP_AveragePool)
		return emit_avgpool(cg, g, n);
	if (n->op == OX_OP_ConvTranspose)
		return emit_convtranspose(cg, g, n);
	if (n->op == OX_OP_Resize)
		return emit_resize(cg, g, n);
	return 1;
}
