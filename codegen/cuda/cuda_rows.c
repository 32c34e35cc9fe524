/* cuda_rows.c: the kernels over rows or strided lines (--target cuda):
 * a warp per contiguous row (LayerNormalization, RMSNormalization,
 * Softmax, LogSoftmax; along a middle axis the C emitter's map,
 * cuda_map.c), a thread per (outer, inner) line down a middle axis
 * (Reduce), a block per (image, group) or per channel
 * (InstanceNorm, GroupNorm, the global pools), and the Reduce kernels,
 * which render codegen/reduction.h's description (thread per output, warp
 * per row, a row split over blocks). The families layernorm, softmax,
 * chan_norm, globalpool and reduce of ir/ops.def's cuda column.
 */
#include "cuda_kernels.h"
#include "../reduction.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GlobalAveragePool / GlobalMaxPool: a warp per plane, shuffles to sum */
int ox_cu_emit_globalpool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || x->shape.rank < 3)
		return 1;
	const int ismax = n->op == OX_OP_GlobalMaxPool;
	/* planes and their size: numbers, or (run-time dims) the kernel's
	 * parameters */
	ox_dim dNC = ox_dim_mul(g, x->shape.d[0], x->shape.d[1]), dP = 1;
	for (int i = 2; i < x->shape.rank; i++)
		dP = ox_dim_mul(g, dP, x->shape.d[i]);
	const int rt = ox_dim_is_rt(g, dNC) || ox_dim_is_rt(g, dP);
	ox_cu_rt R = {g, 0, {0}}, *Rp = rt ? &R : NULL;
	char NC[32], P[32], lim[40];
	ox_cu_rt_dim(Rp, dNC, NC, sizeof NC), ox_cu_rt_dim(Rp, dP, P, sizeof P);
	ox_cg_snprintf(lim, sizeof lim, "%s%s", NC, rt && ox_dim_is_rt(g, dNC) ? "" : "$L");
	char res[64] = "a";
	if (!ismax)
		ox_cg_snprintf(res, sizeof res, "a / (float)%s", P);
	char kname[200], desc[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf params = {0}, args = {0};
	ox_buf_puts(&args, "in0, out0");
	ox_cu_rt_params(cg, Rp, &params, &args);
	if (rt) {
		char a[96], b[96];
		ox_dim_str(g, dNC, a, sizeof a), ox_dim_str(g, dP, b, sizeof b);
		ox_cg_snprintf(desc, sizeof desc, "%s planes of %s", a, b);
	} else {
		ox_cg_snprintf(desc, sizeof desc, "%s planes of %s", NC, P);
	}
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s over %s */\n"
			  "__global__ void __launch_bounds__(128) %s(const OX_T *__restrict__ x, OX_T *__restrict__ y%s)\n"
			  "{\n"
			  "\tconst $I c = ($I)blockIdx.x * 4 + threadIdx.x / 32;\n"
			  "\tconst int lane = threadIdx.x %% 32;\n"
			  "\tif (c >= %s)\n"
			  "\t\treturn;\n"
			  "\tconst OX_T *xc = x + c * %s;\n"
			  "\tfloat a = %s;\n",
		      cg->fname, n->optype, desc, kname, params.s ? params.s : "", lim, P, ismax ? "-INFINITY" : "0.0f");
	ox_buf_printf(&t, "\tfor ($I i = lane; i < %s; i += 32) {\n"
			  "\t\tconst float v = OX_LD(xc[i]);\n"
			  "\t\ta = %s;\n"
			  "\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2) {\n"
			  "\t\tconst float b = __shfl_xor_sync(0xffffffffu, a, o);\n"
			  "\t\ta = %s;\n"
			  "\t}\n"
			  "\tif (lane == 0)\n"
			  "\t\ty[c] = OX_ST(%s);\n"
			  "}\n"
			  "\n",
		      P, ismax ? "v > a || v != v ? v : a" : "a + v", ismax ? "b > a || b != b ? b : a" : "a + b", res);
	if (!rt)
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, 128, 0, ox_st, in0, out0);\n", kname,
			     (long long)((ox_dim_eval(g, dNC) + 3) / 4));
	else
		ox_cu_launch_rt(cg, kname, dNC, 4, 128, args.s);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&args);
	return 0;
}

/* A kernel of a thread per (outer, inner) of x as [outer, D, inner], for
 * the ops along a middle axis (Reduce, (Log)Softmax):
 * strided_dims renders D, inner and D * inner for the body (run-time dims
 * R's parameters: 0 when they are too many); strided_kernel prints the
 * kernel (t: its comment, then the kernel; body reads i0, i1) and its
 * launch, and frees t and body; typed: params use OX_T (ox_cu_finish). */
typedef struct {
	char d[32], in[32], din[32];
} middle_dims;
static int strided_dims(ox_cu_rt *R, ox_dim D, ox_dim inner, middle_dims *sd)
{
	return ox_cu_rt_dim(R, D, sd->d, sizeof sd->d) && ox_cu_rt_dim(R, inner, sd->in, sizeof sd->in) &&
	       ox_cu_rt_dim(R, ox_dim_mul(R->g, D, inner), sd->din, sizeof sd->din);
}
static int strided_kernel(ox_cg *cg, ox_cu_rt *R, ox_dim outer, ox_dim inner,
			  const char *params, ox_buf *t, ox_buf *body)
{
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const ox_dim dims[2] = {outer, inner};
	const int bad = ox_cu_index_kernel_rt(t, kname, params, dims, 2, body->s, R);
	ox_buf_free(body);
	if (bad) {
		ox_buf_free(t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 2, "in0, out0", R);
	ox_cu_finish(cg, kname, t);
	return 0;
}

/* the rows of x before axis ax, the axes from ax on constants: 0 when not */
static int rows_of(ox_graph *g, const ox_value *x, int ax, ox_dim *rows)
{
	*rows = 1;
	for (int i = 0; i < x->shape.rank; i++)
		if (i < ax)
			*rows = ox_dim_mul(g, *rows, x->shape.d[i]);
		else if (ox_dim_is_rt(g, x->shape.d[i]))
			return 0;
	return 1;
}

/* InstanceNormalization and GroupNormalization (a GroupNorm export's):
 * a block of 256 threads per (image, group), the C target's computation
 * (codegen/c/emit_norm.c): mean and variance in double, two passes, a block
 * reduction in shared memory in a fixed order; scale and bias per channel
 * (per group before opset 21). Run-time batch and spatial size as
 * parameters. */
int ox_cu_emit_chan_norm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const int inst = n->op == OX_OP_InstanceNormalization;
	const ox_value *x = ox_in(g, n, 0), *sc = ox_in(g, n, 1), *bi = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	if (!x || !sc || !bi || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || sc->dtype != x->dtype ||
	    bi->dtype != x->dtype || x->layout || y->layout || sc->layout || bi->layout || x->shape.rank < 3 ||
	    ox_dim_is_rt(g, x->shape.d[1]))
		return 1;
	const int64_t C = x->shape.d[1], G = inst ? C : ox_attr_int(n, "num_groups", 1);
	const int per_group = !inst && n->opset < 21;
	if (G < 1 || C % G || sc->shape.rank != 1 || bi->shape.rank != 1 || sc->shape.d[0] != (per_group ? G : C) ||
	    bi->shape.d[0] != (per_group ? G : C))
		return 1;
	const int64_t cpg = C / G;
	ox_dim sp = 1;
	for (int i = 2; i < x->shape.rank; i++)
		sp = ox_dim_mul(g, sp, x->shape.d[i]);
	const ox_dim gsz = ox_dim_mul(g, cpg, sp), rows = ox_dim_mul(g, x->shape.d[0], G);
	if (!ox_dim_is_rt(g, gsz) && gsz <= 0)
		return 1;
	ox_cu_rt R = {g, 0, {0}};
	char SP[32], GS[32], kname[200];
	if (!ox_cu_rt_dim(&R, sp, SP, sizeof SP) || !ox_cu_rt_dim(&R, gsz, GS, sizeof GS))
		return 1;
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	/* the scale's and bias' index: the group, or the channel */
	char kidx[160];
	if (per_group)
		ox_cg_snprintf(kidx, sizeof kidx, "ng %% %lld", (long long)G);
	else
		ox_cg_snprintf(kidx, sizeof kidx, "ng %% %lld * %lld + i / %s", (long long)G, (long long)cpg, SP);
	ox_buf t = ox_cu_kbuf(g, n), rtp = {0};
	ox_cu_rt_params(NULL, &R, &rtp, NULL);
	ox_buf_printf(&t, "/* %s: %s, %lld groups of %lld channels x %s values, a block each */\n"
			  "__global__ void __launch_bounds__(256) %s(const OX_T *__restrict__ x, const OX_T *__restrict__ sc,\n"
			  "\t\tconst OX_T *__restrict__ bi, OX_T *__restrict__ y%s)\n"
			  "{\n"
			  "\t__shared__ double red[256];\n"
			  "\tconst $I ng = blockIdx.x, n = %s;\n"
			  "\tconst int tid = threadIdx.x;\n"
			  "\tconst OX_T *p = x + ng * n;\n"
			  "\tOX_T *q = y + ng * n;\n"
			  "\tdouble s = 0;\n"
			  "\tfor ($I i = tid; i < n; i += 256)\n"
			  "\t\ts += (double)OX_LD(p[i]);\n"
			  "\tred[tid] = s;\n"
			  "\t__syncthreads();\n"
			  "\tfor (int o = 128; o > 0; o /= 2) {\n"
			  "\t\tif (tid < o)\n"
			  "\t\t\tred[tid] += red[tid + o];\n"
			  "\t\t__syncthreads();\n"
			  "\t}\n"
			  "\tconst double mean = red[0] / (double)n;\n"
			  "\t__syncthreads();\n"
			  "\tdouble v = 0;\n"
			  "\tfor ($I i = tid; i < n; i += 256) {\n"
			  "\t\tconst double d = (double)OX_LD(p[i]) - mean;\n"
			  "\t\tv += d * d;\n"
			  "\t}\n"
			  "\tred[tid] = v;\n"
			  "\t__syncthreads();\n"
			  "\tfor (int o = 128; o > 0; o /= 2) {\n"
			  "\t\tif (tid < o)\n"
			  "\t\t\tred[tid] += red[tid + o];\n"
			  "\t\t__syncthreads();\n"
			  "\t}\n",
		      cg->fname, n->optype, (long long)G, (long long)cpg, SP, kname, rtp.s ? rtp.s : "", GS);
	ox_buf_printf(&t, "\tconst double inv = 1 / sqrt(red[0] / (double)n + %s);\n"
			  "\tfor ($I i = tid; i < n; i += 256) {\n"
			  "\t\tconst $I k = %s;\n"
			  "\t\tconst double a = (double)OX_LD(sc[k]) * inv, b = (double)OX_LD(bi[k]) - mean * a;\n"
			  "\t\tq[i] = OX_ST((float)(a * (double)OX_LD(p[i]) + b));\n"
			  "\t}\n"
			  "}\n"
			  "\n",
		      ox_cg_lit(OX_F64, ox_attr_float(n, "epsilon", 1e-5f)), kidx);
	ox_buf_free(&rtp);
	ox_buf a = {0};
	ox_buf_puts(&a, "in0, in1, in2, out0");
	ox_cu_rt_params(cg, &R, NULL, &a);
	ox_cu_launch_rt(cg, kname, rows, 1, 256, a.s);
	ox_buf_free(&a);
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* The statements that normalize a row of D by a warp (LayerNormalization,
 * or RMSNormalization: the mean of squares only), computed in f32: the
 * mean and variance by shuffles, two passes over the row. xr is the row
 * read, element i as ld's format gives it (one %s: the element), yr the
 * row written, sc and b (NULL: none) the names of the scale and bias,
 * lane the warp's lane; each line indented by ind. */
void ox_cu_norm_row(ox_buf *t, const char *ind, const char *lane, const char *sc, const char *b, int rms, int64_t D,
		     double eps, const char *ld)
{
	char bi[64] = "";
	if (b)
		ox_cg_snprintf(bi, sizeof bi, " + OX_LD(%s[i])", b);
	char xi[96];
	ox_cg_snprintf(xi, sizeof xi, ld, "xr[i]");
	const long long d = (long long)D;
	if (rms)
		ox_buf_printf(t, "%sconst float mean = 0.0f;\n", ind);
	else {
		ox_buf_printf(t, "%sfloat s = 0.0f;\n"
				 "%sfor ($I i = %s; i < %lld; i += 32)\n"
				 "%s\ts += %s;\n"
				 "%sfor (int o = 16; o > 0; o /= 2)\n"
				 "%s\ts += __shfl_xor_sync(0xffffffffu, s, o);\n",
			      ind, ind, lane, d, ind, xi, ind, ind);
		ox_buf_printf(t, "%sconst float mean = s / %lld.0f;\n",
			      ind, d);
	}
	ox_buf_printf(t, "%sfloat q = 0.0f;\n"
			 "%sfor ($I i = %s; i < %lld; i += 32) {\n"
			 "%s\tconst float d = %s - mean;\n"
			 "%s\tq += d * d;\n"
			 "%s}\n",
		      ind, ind, lane, d, ind, xi, ind, ind);
	ox_buf_printf(t, "%sfor (int o = 16; o > 0; o /= 2)\n"
			 "%s\tq += __shfl_xor_sync(0xffffffffu, q, o);\n"
			 "%sconst float inv = 1.0f / sqrtf(q / %lld.0f + %s);\n"
			 "%sfor ($I i = %s; i < %lld; i += 32)\n",
		      ind, ind, ind, d, ox_cg_lit(OX_F32, eps), ind, lane, d);
	ox_buf_printf(t, "%s\tyr[i] = OX_ST((%s - mean) * inv * OX_LD(%s[i])%s);\n",
		      ind, xi, sc, bi);
}

/* A kernel of node n normalizing `rows` rows of D, a warp each (norm_row);
 * ym, yi: LayerNormalization's Mean and InvStdDev outputs too. args: the
 * launch's x, scale, bias (or nullptr), y[, ym, yi] */
void ox_cu_norm_kernel(ox_cg *cg, ox_graph *g, ox_node *n, const char *kname, ox_dim rows, int64_t D, int rms,
			double eps, int b, int ym, int yi, const char *args)
{
	ox_buf t = ox_cu_kbuf(g, n);
	ox_cu_warp_rows(&t, g, cg->fname, rms ? "RMSNormalization" : "LayerNormalization", rows, D, kname,
		  ym || yi ? "const OX_T *__restrict__ x, const OX_T *__restrict__ sc,\n"
			     "\t\tconst OX_T *__restrict__ b, OX_T *__restrict__ y, float *__restrict__ ym, float *__restrict__ yi"
			   : "const OX_T *__restrict__ x, const OX_T *__restrict__ sc,\n"
			     "\t\tconst OX_T *__restrict__ b, OX_T *__restrict__ y",
		  NULL, 0);
	ox_buf_printf(&t, "\tconst OX_T *xr = x + row * %lld;\n\tOX_T *yr = y + row * %lld;\n", (long long)D,
		      (long long)D);
	ox_cu_norm_row(&t, "\t", "lane", "sc", b ? "b" : NULL, rms, D, eps, "OX_LD(%s)");
	ox_buf_printf(&t, "%s%s%s%s}\n\n", ym || yi ? "\tif (lane == 0) {\n" : "", ym ? "\t\tym[row] = mean;\n" : "",
		      yi ? "\t\tyi[row] = inv;\n" : "", ym || yi ? "\t}\n" : "");
	ox_cu_rows_launch(cg, g, kname, rows, D, args);
	ox_cu_finish(cg, kname, &t);
}

/* LayerNormalization and RMSNormalization over the trailing axes (scale
 * and bias of the normalized size, Mean/InvStdDev not asked for, computed
 * in f32: stash_type 1): a warp per row (norm_kernel) */
int ox_cu_emit_layernorm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const int rms = n->op == OX_OP_RMSNormalization;
	ox_value *x = ox_in(g, n, 0), *sc = ox_in(g, n, 1), *b = rms ? NULL : ox_in(g, n, 2), *y = ox_out(g, n, 0);
	if (ox_attr_int(n, "stash_type", 1) != 1)
		return 1;
	/* LayerNormalization's Mean and InvStdDev (f32, a value per row) */
	const int ym = n->nout > 1 && n->out[1] >= 0, yi = n->nout > 2 && n->out[2] >= 0;
	for (int k = 1; k < n->nout; k++)
		if (n->out[k] >= 0 && (rms || g->vals[n->out[k]].dtype != OX_F32 || g->vals[n->out[k]].layout))
			return 1;
	if (!x || !y || !sc || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout ||
	    sc->dtype != x->dtype || (b && b->dtype != x->dtype))
		return 1;
	int r = x->shape.rank, axis = (int)ox_attr_int(n, "axis", -1);
	if (axis < 0)
		axis += r;
	ox_dim rows;
	if (axis < 0 || axis >= r || !rows_of(g, x, axis, &rows))
		return 1;
	int64_t D = 1;
	for (int i = axis; i < r; i++)
		D *= x->shape.d[i];
	if (ox_shape_numel(&sc->shape) != D || (b && ox_shape_numel(&b->shape) != D) || !D)
		return 1;
	char kname[200], args[96];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(args, sizeof args, "in0, in1, %s, out0%s%s%s", b ? "in2" : "nullptr", ym || yi ? ", " : "",
		 ym || yi ? (ym ? "out1" : "nullptr") : "", ym || yi ? (yi ? ", out2" : ", nullptr") : "");
	ox_cu_norm_kernel(cg, g, n, kname, rows, D, rms, ox_attr_float(n, "epsilon", 1e-5f), b != NULL, ym, yi, args);
	return 0;
}

/* Softmax and LogSoftmax over rows of D (the axis, with nothing inside
 * it; before opset 13 the axes from it on, as 2-D): a warp per row, the
 * maximum, the sum of exp(x - max), the outputs. As the C target
 * (codegen/c/emit_reduce.c): the maximum skips NaN, whose exp makes the sum
 * and so the row NaN; a row of -inf is NaN. */
int ox_cu_emit_softmax(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || !x->shape.rank)
		return 1;
	const int r = x->shape.rank, legacy = n->opset < 13, log = n->op == OX_OP_LogSoftmax;
	const int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
	const int ax = legacy && a == r ? r : ox_norm_axis(a, r);
	if (ax < 0)
		return 1;
	int strided = 0;
	for (int i = ax + 1; i < r && !legacy; i++)
		strided |= x->shape.d[i] != 1;
	ox_dim rows = 1, D = 1; /* (a run-time row length D: the parameter ox_len) */
	for (int i = 0; i < ax; i++)
		rows = ox_dim_mul(g, rows, x->shape.d[i]);
	if (!strided) {
		for (int i = ax; i < r; i++)
			D = ox_dim_mul(g, D, x->shape.d[i]);
		if (!D)
			return 1;
	}
	if (rows == 0)
		return 1;
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	if (strided) { /* along a middle axis (the channels of NCHW): the C emitter's map, a thread per (outer, inner) */
		ox_buf_free(&t);
		return ox_cu_emit_map(cg, g, n);
	}
	char len[48];
	ox_cu_warp_rows(&t, g, cg->fname, n->optype, rows, D, kname, "const OX_T *__restrict__ x, OX_T *__restrict__ y", len,
		  sizeof len);
	ox_buf_printf(&t, "\tconst OX_T *xr = x + row * %s;\n\tOX_T *yr = y + row * %s;\n"
			  "\tfloat m = -INFINITY;\n\tfor ($I i = lane; i < %s; i += 32) {\n"
			  "\t\tconst float v = OX_LD(xr[i]);\n\t\tif (v > m)\n\t\t\tm = v;\n\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n\t\tm = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));\n"
			  "\tfloat s = 0.0f;\n\tfor ($I i = lane; i < %s; i += 32)\n\t\ts += expf(OX_LD(xr[i]) - m);\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n\t\ts += __shfl_xor_sync(0xffffffffu, s, o);\n"
			  "%s"
			  "\tfor ($I i = lane; i < %s; i += 32)\n\t\tyr[i] = OX_ST(%s);\n}\n\n",
		      len, len, len, len, log ? "\tconst float ls = logf(s);\n" : "", len,
		      log ? "(OX_LD(xr[i]) - m) - ls" : "expf(OX_LD(xr[i]) - m) / s");
	ox_cu_rows_launch(cg, g, kname, rows, D, "in0, out0");
	ox_cu_finish(cg, kname, &t);
	return 0;
}
/* ox_red_join's statement at indent tabs (b an element v, elem, or
 * another thread's partial result; maxpass: into m) */
static void red_join(ox_cg *cg, ox_buf *t, const char *tabs, const ox_reduction *r, const char *b, int elem,
		     int maxpass)
{
	const char *cond, *stmt = ox_red_join(cg, r, b, elem, maxpass, &cond);
	if (cond)
		ox_buf_printf(t, "%sif (%s)\n%s\t%s\n", tabs, cond, tabs, stmt);
	else
		ox_buf_printf(t, "%s%s\n", tabs, stmt);
}

/* a loop over j from `from` to `to` by `by` joining element e (of j) */
static void red_loop(ox_cg *cg, ox_buf *t, const ox_reduction *r, const char *from, const char *to, const char *by,
		     const char *e, int maxpass)
{
	ox_buf_printf(t, "\tfor ($I j = %s; j < %s; j %s) {\n\t\tconst %s v = %s%s;\n", from, to, by, r->V,
		      r->viadbl ? "(double)" : "", ox_cg_load(r->dt, e));
	red_join(cg, t, "\t\t", r, "v", 1, maxpass);
	ox_buf_puts(t, "\t}\n");
}

/* the warp's partial results joined by shuffles: every lane has the whole */
static void red_shuffle(ox_cg *cg, ox_buf *t, const ox_reduction *r, int maxpass)
{
	ox_buf_printf(t, "\tfor (int o = 16; o > 0; o /= 2) {\n\t\tconst %s b = __shfl_xor_sync(0xffffffffu, %s, o);\n",
		      r->A, maxpass ? "m" : "acc");
	red_join(cg, t, "\t\t", r, "b", 0, maxpass);
	ox_buf_puts(t, "\t}\n");
}

/* LogSumExp's first pass: the maximum m, left out of the shift where it
 * is not finite (all -inf, or +inf), then acc from its start */
static void red_start(ox_cg *cg, ox_buf *t, const ox_reduction *r, const char *to, const char *by, const char *e,
		      int warp)
{
	if (r->twopass) {
		ox_buf_printf(t, "\t%s m = %s;\n", r->A, ox_cg_lit(r->cdt, -INFINITY));
		red_loop(cg, t, r, warp ? "lane" : "0", to, by, e, 1);
		if (warp)
			red_shuffle(cg, t, r, 1);
		ox_buf_printf(t, "\tif (!isfinite(m))\n\t\tm = %s;\n", ox_cg_lit(r->cdt, 0));
	}
	ox_buf_printf(t, "\t%s acc = %s;\n", r->A, r->init);
}

/* Reduce* (f32, f16, bf16) over one block of consecutive axes (unit axes
 * inside it may be kept), in the types and with the arithmetic of
 * reduction.h (the C target's): x as [outer, D, inner]. Three kernels:
 * - inner 1 (a trailing block), rows long and too few to fill the GPU
 *   (constant shapes; not LogSumExp's two passes): S blocks of 256
 *   threads per row, each a part of the row to the workspace; the row's
 *   last block to arrive (ox_split_last) combines the S parts in order;
 * - inner 1 otherwise: a warp per row, shuffles to combine;
 * - inner above 1 (the sequence axis of [B, S, H], the channels of
 *   NCHW): a thread per output, down D with stride inner (neighbouring
 *   threads read neighbouring elements).
 * Run-time dims: the kernels' parameters (not the split one's). */
int ox_cu_emit_reduce(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || !x->shape.rank)
		return 1;
	int mask[OX_MAX_RANK] = {0}, r = x->shape.rank;
	if (ox_reduce_axes(g, n, mask))
		return 1;
	int first = -1, last = -1;
	for (int d = 0; d < r; d++)
		if (mask[d])
			last = d, first = first < 0 ? d : first;
	if (first < 0)
		return 1;
	for (int d = first; d <= last; d++)
		if (!mask[d] && x->shape.d[d] != 1)
			return 1; /* not one block */
	ox_dim outer = 1, D = 1, inner = 1;
	for (int d = 0; d < r; d++)
		if (d < first)
			outer = ox_dim_mul(g, outer, x->shape.d[d]);
		else if (d <= last)
			D = ox_dim_mul(g, D, x->shape.d[d]);
		else
			inner = ox_dim_mul(g, inner, x->shape.d[d]);
	ox_reduction rd;
	if (!D || !outer || !inner || ox_reduction_of(g, n, &rd))
		return 1;
	const int rtD = ox_dim_is_rt(g, D);
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	if (inner != 1) {
		ox_cu_rt R = {g, 0, {0}};
		middle_dims sd;
		if (!strided_dims(&R, D, inner, &sd))
			return 1;
		ox_buf body = {0};
		const char *e = ox_cg_text(cg, "xr[j * %s]", sd.in);
		ox_buf_printf(&body, "\tconst OX_T *xr = x + i0 * %s + i1;\n", sd.din);
		red_start(cg, &body, &rd, sd.d, "++", e, 0);
		red_loop(cg, &body, &rd, "0", sd.d, "++", e, 0);
		ox_buf_printf(&body, "\ty[i] = %s;\n", ox_red_stored(cg, &rd, ox_red_result(cg, &rd, rtD ? -1 : D, rtD ? sd.d : NULL)));
		ox_buf_printf(&t, "/* %s: %s over %lld of [%lld, %lld, %lld]%s, a thread per output */\n", cg->fname,
			      n->optype, (long long)ox_opt_top(g, D), (long long)ox_opt_top(g, outer),
			      (long long)ox_opt_top(g, D), (long long)ox_opt_top(g, inner),
			      R.n ? " (at most: run-time dims)" : "");
		return strided_kernel(cg, &R, outer, inner, "const OX_T *__restrict__ x, OX_T *__restrict__ y", &t,
				      &body);
	}
	const ox_dim rows = outer;
	const char *len = rtD ? "ox_len" : ox_cg_text(cg, "%lld", (long long)D);
	const char *res = ox_red_stored(cg, &rd, ox_red_result(cg, &rd, rtD ? -1 : D, rtD ? len : NULL));
	/* a row's parts: a block of 256 threads for 2048 of D at least, until
	 * the blocks give each SM two */
	int S = 1;
	if (!rtD && !ox_dim_is_rt(g, rows) && !rd.twopass)
		while (S < 1024 && rows * S < 2 * OX_CU_SMS && D / (S * 2) >= 2048)
			S *= 2;
	if (S > 1) {
		const int64_t CH = (D + S - 1) / S;
		const int64_t asz = strcmp(rd.A, "double") ? 4 : 8;
		if (rows * S * asz > cg->cu_ws)
			cg->cu_ws = rows * S * asz;
		if (rows > cg->cu_ctr)
			cg->cu_ctr = rows;
		ox_buf_printf(&t, "/* %s: %s of %lld rows of %lld, %d blocks a row, each %lld of it */\n"
				  "__global__ void __launch_bounds__(256) %s(const OX_T *__restrict__ x, OX_T *__restrict__ y,\n"
				  "\t\t%s *__restrict__ ws, unsigned int *__restrict__ ctr)\n{\n",
			      cg->fname, n->optype, (long long)rows, (long long)D, S, (long long)CH, kname, rd.A);
		ox_buf_printf(&t, "\t__shared__ %s part[8];\n\tconst $I row = blockIdx.x, j0 = ($I)blockIdx.y * %lld;\n"
				  "\tconst $I j1 = j0 + %lld < %lld ? j0 + %lld : %lld;\n"
				  "\tconst int tid = threadIdx.x, lane = tid %% 32;\n",
			      rd.A, (long long)CH, (long long)CH, (long long)D, (long long)CH, (long long)D);
		red_start(cg, &t, &rd, "j1", "+= 256", "", 0);
		red_loop(cg, &t, &rd, "j0 + tid", "j1", "+= 256", ox_cg_text(cg, "x[row * %lld + j]", (long long)D), 0);
		red_shuffle(cg, &t, &rd, 0);
		ox_buf_puts(&t, "\tif (lane == 0)\n\t\tpart[tid / 32] = acc;\n\t__syncthreads();\n"
				"\tif (tid == 0) {\n\t\tfor (int w = 1; w < 8; w++) {\n\t\t\tconst ");
		ox_buf_printf(&t, "%s b = part[w];\n", rd.A);
		red_join(cg, &t, "\t\t\t", &rd, "b", 0, 0);
		ox_buf_printf(&t, "\t\t}\n\t\tws[row * %d + blockIdx.y] = acc;\n\t}\n"
				  "\t/* the row's last block to arrive combines the %d parts in order */\n"
				  "\tif (!ox_split_last(ctr + row, %d) || tid)\n\t\treturn;\n",
			      S, S, S);
		ox_buf_printf(&t, "\tacc = %s;\n\tfor (int s = 0; s < %d; s++) {\n\t\tconst %s b = ox_ldcg(&ws[row * %d + s]);\n",
			      rd.init, S, rd.A, S);
		red_join(cg, &t, "\t\t", &rd, "b", 0, 0);
		ox_buf_printf(&t, "\t}\n\ty[row] = %s;\n}\n\n", res);
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %d), 256, 0, ox_st, in0, out0, (%s *)ox_cu_ws, ox_cu_ctr);\n",
			     kname, (long long)rows, S, rd.A);
		ox_cu_finish(cg, kname, &t);
		return 0;
	}
	ox_cu_warp_rows(&t, g, cg->fname, n->optype, rows, D, kname, "const OX_T *__restrict__ x, OX_T *__restrict__ y", NULL, 0);
	ox_buf_printf(&t, "\tconst OX_T *xr = x + row * %s;\n", len);
	red_start(cg, &t, &rd, len, "+= 32", "xr[j]", 1);
	red_loop(cg, &t, &rd, "lane", len, "+= 32", "xr[j]", 0);
	red_shuffle(cg, &t, &rd, 0);
	ox_buf_printf(&t, "\tif (lane == 0)\n\t\ty[row] = %s;\n}\n\n", res);
	ox_cu_rows_launch(cg, g, kname, rows, D, "in0, out0");
	ox_cu_finish(cg, kname, &t);
	return 0;
}
