/* cuda_quant.c: the CUDA kernels of int8 models (--target cuda).
 *
 * opt/qdq.c rewrites a QDQ model into onnxcc's integer ops; here each
 * becomes a kernel whose arithmetic is the C target's, so the two targets
 * give the same bits:
 *   QConv (1 to 3 spatial axes) and QMatMul: integer tiles (ox_cu_tile_loop,
 *       OX_CU_TILE_INT): int operands with their zero points subtracted
 *       (a padded tap is 0), sums modulo 2^32 as the C kernels take them,
 *       then the bias and templates/qint.c's ox_qi_rq per output channel
 *       (its tables static device data beside the kernel); the QOperator
 *       form's ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul
 *       on the same tiles (their zero points and scales inputs);
 *   QAdd, QRescale, QPool: a thread per output running the statements the
 *       C emitter prints in its loop (codegen/quant.h);
 *   QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked): a
 *       thread per element, the C emitter's statements likewise.
 * Shapes are constants (QuantizeLinear and DequantizeLinear: but for
 * the leading dims); anything else (run-time dims, a blocked layout)
 * answers 1: the C function on the device.
 */
#include "cuda_kernels.h"
#include "../quant.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

/* input k of n as a C expression "in<k>[at]" (at "0" when it holds one
 * value), converted by conv ("(int)", ...); def when absent */
static const char *opnd(ox_graph *g, ox_node *n, int k, const char *at, const char *conv, const char *def, char *buf,
			size_t sz)
{
	const ox_value *v = ox_in(g, n, k);
	if (!v)
		ox_cg_snprintf(buf, sz, "%s", def);
	else
		ox_cg_snprintf(buf, sz, "%sin%d[%s]", conv, k, ox_shape_numel(&v->shape) > 1 ? at : "0");
	return buf;
}

/* The integer products on integer tiles, requantized per output channel:
 * onnxcc::QConv and QMatMul (their zero points and fixed-point multipliers
 * computed by opt/qdq.c: attributes, static device tables), and the ONNX
 * ops as models give them (zero points and scales are inputs, read on the
 * device): ConvInteger and MatMulInteger (the int32 sums), QLinearConv and
 * QLinearMatMul (the C target's requantization: the f32 multiplier x_scale
 * w_scale / y_scale, sum times it plus y_zero_point rounded in double,
 * each operation rounded as the C target's, saturated). Convolutions of 1
 * to 3 spatial axes; the MatMuls with a [K, N] second operand. */
static int emit_qgemm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const int op = n->op, q = op == OX_OP_QConv || op == OX_OP_QMatMul;
	const int lin = op == OX_OP_QLinearConv || op == OX_OP_QLinearMatMul;
	const int conv = op == OX_OP_QConv || op == OX_OP_ConvInteger || op == OX_OP_QLinearConv;
	const int iw = lin ? 3 : 1, ib = q ? 2 : op == OX_OP_QLinearConv ? 8 : -1, ixz = q ? -1 : 2;
	const int iwz = q ? -1 : lin ? 5 : 3;
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, iw), *y = ox_out(g, n, 0);
	const int hasb = ib >= 0 && ox_in(g, n, ib);
	if (!x || !w || !y || (conv ? x->shape.rank < 3 || x->shape.rank > 5 : w->shape.rank != 2 || x->shape.rank < 1))
		return 1;
	for (int k = 1; lin && k <= 6; k += (k == 1 ? 3 : 2)) /* the scales 1, 4, 6 */
		if (!ox_in(g, n, k) || ox_in(g, n, k)->dtype != OX_F32)
			return 1;
	char kname[200], tab[256], la[512], lb[1024], rq[512], m_[32], n_[32], b1[96], b2[96], b3[96];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *xt = ox_cg_ctype(x->dtype), *wt = ox_cg_ctype(w->dtype), *yt = ox_cg_ctype(y->dtype);
	ox_buf t = ox_cu_kbuf(g, n);
	/* the geometry: Z products of [Mm x K] x [K x Np], output channel o */
	long long Z, Mm, Np, K, G = 1, O, C = 0, P = 0, Og = 0, IS = 0, MR = 1;
	ox_cu_win win;
	char xs[128], ys[128];
	ox_shape_str(g, &x->shape, xs, sizeof xs), ox_shape_str(g, &y->shape, ys, sizeof ys);
	if (conv) {
		if (ox_cu_window(g, n, x, w, y, &win))
			return -1;
		G = ox_attr_int(n, "group", 1), C = x->shape.d[1], O = w->shape.d[0];
		Og = O / G, P = win.O[0] * win.O[1] * win.O[2], K = C / G * win.K[0] * win.K[1] * win.K[2];
		IS = win.I[0] * win.I[1] * win.I[2], Z = x->shape.d[0] * G, Mm = Og, Np = P;
		ox_buf_printf(&t, "/* %s: %s %d-D, kernel %lldx%lldx%lld, stride %lldx%lldx",
			      cg->fname, n->optype, win.nsp, (long long)win.K[0], (long long)win.K[1],
			      (long long)win.K[2], (long long)win.S[0], (long long)win.S[1]);
		ox_buf_printf(&t, "%lld, dilation ",
			      (long long)win.S[2]);
		ox_buf_printf(&t, "%lldx%lldx%lld, pads %lld,%lld,%lld, group %lld: %s ",
			      (long long)win.D[0], (long long)win.D[1], (long long)win.D[2], (long long)win.P[0],
			      (long long)win.P[1], (long long)win.P[2], G, ox_cg_sfx(x->dtype));
		ox_buf_printf(&t, "%s -> %s %s, integer tiles */\n",
			      xs, ox_cg_sfx(y->dtype), ys);
	} else {
		K = w->shape.d[0], O = w->shape.d[1];
		Z = 1, Mm = ox_shape_numel(&x->shape) / (K ? K : 1), Np = O;
		MR = x->shape.rank > 1 ? x->shape.d[x->shape.rank - 2] : 1; /* a per-row operand's rows */
		ox_buf_printf(&t, "/* %s: %s %s %s x %s [%lld x %lld] -> %s ",
			      cg->fname, n->optype, ox_cg_sfx(x->dtype), xs, ox_cg_sfx(w->dtype), K, O,
			      ox_cg_sfx(y->dtype));
		ox_buf_printf(&t, "%s, integer tiles */\n",
			      ys);
	}
	if (Mm * Np * Z == 0 || K == 0) {
		ox_buf_free(&t);
		return 1; /* (the C function's empty loops) */
	}
	/* the zero points: of x (row m of a MatMul's), of w's output channel,
	 * which is gi Og + m in a convolution's A loads, p in a MatMul's B loads */
	char xz[96], wz[320], row[64], wo[64];
	ox_cg_snprintf(row, sizeof row, "m %% %lld", MR);
	if (conv)
		ox_cg_snprintf(wo, sizeof wo, "gi * %lld + m", Og);
	else
		ox_cg_snprintf(wo, sizeof wo, "p");
	if (q) {
		ox_cg_snprintf(tab, sizeof tab, "%s_wz", kname);
		ox_cg_qi_table(&t, n, "ox_wz", "", ox_cg_static(cg), tab, O, 0);
		ox_cg_snprintf(tab, sizeof tab, "%s_rm", kname);
		ox_cg_qi_table(&t, n, "ox_m", "", ox_cg_static(cg), tab, O, 0);
		ox_cg_snprintf(tab, sizeof tab, "%s_rs", kname);
		ox_cg_qi_table(&t, n, "ox_s", "", ox_cg_static(cg), tab, O, 0);
		ox_cg_snprintf(xz, sizeof xz, "%lld", ox_cg_qi_at(n, "ox_zp", 0));
		ox_cg_snprintf(wz, sizeof wz, "%s_wz[%s]", kname, wo);
	} else {
		opnd(g, n, ixz, conv ? "0" : row, "(int)", "0", xz, sizeof xz);
		opnd(g, n, iwz, wo, "(int)", "0", wz, sizeof wz);
	}
	ox_buf_printf(&t, "__global__ void %s(", kname);
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&t, "const %s *__restrict__ in%d, ",
			      ox_cg_ctype(n->in[k] >= 0 ? g->vals[n->in[k]].dtype : OX_U8), k);
	ox_buf_printf(&t, "%s *__restrict__ y)\n{\n\tconst $I ks0 = 0, ks1 = %lld;\n", yt, K);
	if (conv) {
		/* A: the group's weights [Og x K]; B: the image's windows [K x P] */
		ox_buf_printf(&t, "\tconst $I nb = blockIdx.z / %lld, gi = blockIdx.z %% %lld;\n"
				  "\tconst %s *xg = in0 + (nb * %lld + gi * %lld) * %lld;\n",
			      G, G, xt, C, C / G, IS);
		ox_buf_printf(&t, "\tconst %s *wg = in%d + gi * %lld;\n",
			      wt, iw, Og * K);
		char post[160];
		ox_cg_snprintf(la, sizeof la, "\t\t\t\ta[0] = (int)wg[m * %lld$L + k] - %s;\n", K, wz);
		ox_cg_snprintf(post, sizeof post, "] - %s;", xz);
		ox_cu_window_load(lb, sizeof lb, &win, "b[0] = (int)xg[", post, NULL);
	} else {
		/* A: the rows of x [Mm x K]; B: the weights [K x O] */
		ox_cg_snprintf(la, sizeof la, "\t\t\t\ta[0] = (int)in0[m * %lld$L + k] - %s;\n", K, xz);
		ox_cg_snprintf(lb, sizeof lb, "\t\t\t\tb[0] = (int)in%d[k * %lld$L + p] - %s;\n", iw, O, wz);
	}
	ox_cg_snprintf(m_, sizeof m_, "%lld", Mm);
	ox_cg_snprintf(n_, sizeof n_, "%lld", Np);
	const int T = ox_cu_tile_of(Mm, Np, Z);
	ox_cu_tile geo;
	ox_cu_tile_loop(&t, T, T, m_, n_, la, 1, lb, 1, OX_CU_TILE_INT, (Mm + T - 1) / T * ((Np + T - 1) / T) * Z, &geo);
	ox_buf_printf(&t, "\tOX_UNROLL\n\tfor (int e = 0; e < %d; e++) {\n"
			  "\t\tconst $I m = m0 + %s, p = p0 + %s;\n"
			  "\t\tif (m >= %lld || p >= %lld)\n\t\t\tcontinue;\n",
		      geo.ne, geo.row, geo.col, Mm, Np);
	if (conv)
		ox_buf_printf(&t, "\t\tconst $I o = gi * %lld + m, yi = (nb * %lld + o) * %lld + p;\n", Og, O, P);
	else
		ox_buf_printf(&t, "\t\tconst $I o = p, yi = m * %lld + p;\n\t\t(void)o;\n", O);
	/* the bias and the sums added modulo 2^32, as the C kernels do */
	char bias[64] = "";
	if (hasb)
		ox_cg_snprintf(bias, sizeof bias, " + (unsigned)in%d[o]", ib);
	ox_buf_printf(&t, "\t\tconst int32_t a = (int32_t)(acc[e]%s);\n", bias);
	if (q) {
		char rm[300], rs[300];
		ox_cg_snprintf(rm, sizeof rm, "%s_rm[o]", kname);
		ox_cg_snprintf(rs, sizeof rs, "%s_rs[o]", kname);
		ox_cg_qi_out(rq, sizeof rq, n, "a", rm, rs, 1);
	} else if (lin) {
		long lo, hi;
		ox_cg_qrange(y->dtype, &lo, &hi);
		ox_cg_use_qsat(cg);
		ox_buf_printf(&t, "\t\tconst float mu = __fdiv_rn(__fmul_rn(%s, %s), in6[0]);\n",
			      opnd(g, n, 1, conv ? "0" : row, "", "", b1, sizeof b1), opnd(g, n, 4, "o", "", "", b2, sizeof b2));
		ox_cg_snprintf(rq, sizeof rq, "ox_qsat(rint(__dadd_rn(__dmul_rn((double)a, (double)mu), (double)%s)), %ld, %ld)",
			 opnd(g, n, 7, "0", "", "0", b3, sizeof b3), lo, hi);
	} else {
		ox_cg_snprintf(rq, sizeof rq, "a");
	}
	ox_buf_printf(&t, "\t\ty[yi] = (%s)%s;\n\t}\n}\n\n", yt, rq);
	ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %lld, %lld), %d, 0, ox_st, ", kname, (Np + T - 1) / T,
		     (Mm + T - 1) / T, Z, geo.nt);
	for (int k = 0; k < n->nin; k++)
		ox_cg_printf(cg, n->in[k] >= 0 ? "in%d, " : "nullptr, ", k);
	ox_cg_printf(cg, "out0);\n");
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* a thread per element of dims[0..r) running body; the node's inputs
 * in0.. and out0 as parameters */
static int elem_kernel(ox_cg *cg, ox_graph *g, ox_node *n, const char *what, const ox_dim *dims, int r,
		       const char *body, ox_cu_rt *rt)
{
	ox_cu_rt R0 = {g, 0, {0}}, *R = rt ? rt : &R0;
	ox_buf params = {0}, t = ox_cu_kbuf(g, n);
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&params, "const %s *__restrict__ in%d, ",
			      ox_cg_ctype(n->in[k] >= 0 ? g->vals[n->in[k]].dtype : OX_F32), k);
	ox_buf_printf(&params, "%s *__restrict__ out0", ox_cg_ctype(ox_out(g, n, 0)->dtype));
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf_printf(&t, "/* %s: %s, a thread per element */\n", cg->fname, what);
	if (ox_cu_index_kernel_rt(&t, kname, params.s, dims, r, body, R)) {
		ox_buf_free(&t), ox_buf_free(&params);
		return 1;
	}
	ox_buf ptrs = {0};
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&ptrs, n->in[k] >= 0 ? "in%d, " : "nullptr, ", k);
	ox_buf_puts(&ptrs, "out0");
	ox_cu_index_launch(cg, kname, dims, r, ptrs.s, R);
	ox_buf_free(&ptrs);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params);
	return 0;
}

/* QuantizeLinear (dq 0), DequantizeLinear (dq 1): the element k of the
 * index space [O, D, I] (D the axis; per tensor: [N]); O and I (per
 * tensor: N) may be run-time dims, kernel parameters (GatherBlockQuantized's
 * rows of a run-time batch: opt/expand.c) */
static int emit_qdq(ox_cg *cg, ox_graph *g, ox_node *n, int dq)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int axis;
	int64_t block;
	int lay = ox_ir_quant_layout(g, n, &axis, &block);
	if (lay < 0)
		return -1;
	if (ox_cg_qdq_use(cg, g, n, dq))
		return -1;
	ox_dim d[3] = {1, 1, 1};
	for (int i = 0; i < x->shape.rank; i++) {
		const int k = lay == OX_QL_TENSOR || i > axis ? 2 : i == axis ? 1 : 0;
		d[k] = ox_dim_mul(g, d[k], x->shape.d[i]);
	}
	ox_cu_rt R = {g, 0, {0}};
	char di[32];
	if ((lay != OX_QL_TENSOR && ox_dim_is_rt(g, d[1])) || !ox_cu_rt_dim(&R, d[2], di, sizeof di) || d[0] == 0 || d[1] == 0 ||
	    d[2] == 0)
		return 1;
	const int zdt = dq ? x->dtype : y->dtype;
	ox_buf b = {0};
	if (lay == OX_QL_TENSOR) {
		ox_buf_puts(&b, "\tconst $I k = i;\n");
		ox_cg_qdq_decl(&b, g, n, "\t", "0", zdt);
	} else if (lay == OX_QL_AXIS) {
		ox_buf_puts(&b, "\tconst $I k = i;\n");
		ox_cg_qdq_decl(&b, g, n, "\t", "i1", zdt);
	} else {
		ox_buf_printf(&b, "\tconst $I k = i, q = (i0 * %lld + i1 / %lld) * %s + i2;\n",
			      (long long)((d[1] + block - 1) / block), (long long)block, di);
		ox_cg_qdq_decl(&b, g, n, "\t", "q", zdt);
	}
	ox_cg_qdq_stmt(&b, g, n, "\t", dq);
	int rc = elem_kernel(cg, g, n, dq ? "DequantizeLinear" : "QuantizeLinear", lay == OX_QL_TENSOR ? d + 2 : d,
			     lay == OX_QL_TENSOR ? 1 : 3, b.s, &R);
	ox_buf_free(&b);
	return rc;
}

/* com.microsoft MatMulNBits: a warp per output element, lane l summing
 * its column's blocks l, l + 32, ... by templates/mmnb.c's ox_mmnb_col_$S
 * (the C target's column sum, a __device__ function here: f32 sums of f32
 * or f16 A and scales), so that a warp reads the column's blocks
 * coalesced; the rows of A may be run-time dims (the count of outputs a
 * kernel parameter) */
static int emit_mmnb(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int64_t K, N, bits, bs, nb;
	const ox_value *a = ox_in(g, n, 0), *y = ox_out(g, n, 0), *zp = n->nin > 3 && n->in[3] >= 0 ? ox_in(g, n, 3) : NULL;
	if (a->layout || y->layout || ox_mmnb_geo(g, n, &K, &N, &bits, &bs, &nb))
		return 1;
	const int dt = a->dtype;
	if (ox_cg_use(cg, "mmnb", dt))
		return ox_error(g, n, "kernel template templates/mmnb.c is missing");
	const int64_t zrow = (nb * bits + 7) / 8;
	const int bias = n->nin > 5 && n->in[5] >= 0;
	const ox_dim outs = ox_shape_numel_dim(g, &y->shape);
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *T = ox_cg_ctype(dt);
	const char *params = ox_cg_text(cg, "const %s *__restrict__ x, const uint8_t *__restrict__ b, const %s *__restrict__ sc, "
					"const void *__restrict__ z, const %s *__restrict__ bias, %s *__restrict__ y", T, T, T, T);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_cu_warp_rows(&t, g, cg->fname, ox_cg_text(cg, "MatMulNBits (%lld-bit [%lld, %lld] in blocks of %lld), outputs", (long long)bits,
						      (long long)N, (long long)K, (long long)bs),
			outs, K, kname, params, NULL, 0);
	ox_buf_printf(&t, "\tconst $I m = row / %lld$L, col = row %% %lld$L;\n", (long long)N, (long long)N);
	ox_buf_printf(&t, "\tfloat v = ox_mmnb_col_%s(x + m * %lld$L, %lld, %lld, %d, b + col * %lld$L, ", ox_cg_sfx(dt),
		      (long long)K, (long long)K, (long long)bs, (int)bits, (long long)(nb * bs * bits / 8));
	ox_buf_printf(&t, "sc + col * %lld$L, ", (long long)nb);
	char zq[64] = "nullptr", zf[64] = "nullptr"; /* the column's zero points */
	if (zp && zp->dtype == OX_U8)
		ox_cg_snprintf(zq, sizeof zq, "(const uint8_t *)z + col * %lld$L", (long long)zrow);
	else if (zp)
		ox_cg_snprintf(zf, sizeof zf, "(const %s *)z + col * %lld$L", T, (long long)nb);
	ox_buf_printf(&t, "%s, %s, lane, 32);\n", zq, zf);
	ox_buf_puts(&t, "\tfor (int o = 16; o > 0; o /= 2)\n\t\tv += __shfl_xor_sync(0xffffffffu, v, o);\n\tif (lane == 0)\n");
	ox_buf_printf(&t, "\t\ty[row] = %s;\n}\n",
		      ox_cg_store(dt, bias ? ox_cg_text(cg, "v + %s", ox_cg_load(dt, "bias[col]")) : "v"));
	ox_cu_rows_launch(cg, g, kname, outs, K,
			  ox_cg_text(cg, "in0, in1, in2, %s, %s, out0", zp ? "in3" : "nullptr", bias ? "in5" : "nullptr"));
	ox_cu_finish(cg, kname, &t);
	return 0;
}

int ox_cu_emit_quant(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (n->op == OX_OP_MatMulNBits)
		return emit_mmnb(cg, g, n);
	const int qdq = n->op == OX_OP_QuantizeLinear || n->op == OX_OP_DequantizeLinear;
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (v >= 0 && (g->vals[v].layout || (!qdq && ox_shape_is_rt(g, &g->vals[v].shape))))
			return 1;
	}
	if (qdq)
		return emit_qdq(cg, g, n, n->op == OX_OP_DequantizeLinear);
	if (ox_cg_use(cg, "qint", OX_U8))
		return ox_error(g, n, "kernel template templates/qint.c is missing");
	if (n->op == OX_OP_QConv || n->op == OX_OP_QMatMul || n->op == OX_OP_ConvInteger || n->op == OX_OP_QLinearConv ||
	    n->op == OX_OP_MatMulInteger || n->op == OX_OP_QLinearMatMul)
		return emit_qgemm(cg, g, n);
	ox_buf b = {0};
	int64_t d[3];
	int rc;
	if (n->op == OX_OP_QPool) {
		ox_buf_puts(&b, "\tconst $I c = i0, oh = i1, ow = i2;\n");
		rc = ox_cg_qpool(&b, g, n, "\t", d);
		if (!rc)
			elem_kernel(cg, g, n, "onnxcc::QPool", d, 3, b.s, NULL);
	} else if (n->op == OX_OP_QAdd || n->op == OX_OP_QRescale) {
		d[0] = ox_shape_numel(&ox_out(g, n, 0)->shape);
		ox_buf_puts(&b, "\tconst $I k = i;\n");
		rc = d[0] ? ox_cg_qi_elem(&b, g, n, "\t") : 1;
		if (!rc)
			elem_kernel(cg, g, n, n->op == OX_OP_QAdd ? "onnxcc::QAdd" : "onnxcc::QRescale", d, 1, b.s, NULL);
	} else {
		rc = 1;
	}
	ox_buf_free(&b);
	return rc;
}
