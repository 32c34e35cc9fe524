/* cuda_signal.c: CUDA kernels of DFT and STFT (--target cuda), constant
 * shapes and parameters, plain layout: a thread per output bin (both parts
 * of a complex one) running the C target's direct sum (ox_cg_dft_sum,
 * codegen/c/emit_signal.c: one rendering for both) in double, in its order,
 * each twiddle of (k t) mod n
 * computed where it is used by the expression the C target's table holds
 * (under the emulation the same bits; a GPU's cos and sin may differ from
 * the host's in the last place). It was the C function on one device
 * thread, n^2 products per transform in a row. Anything else answers 1.
 */
#include "cuda_kernels.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

/* element e of dtype dt as a double (the C target's load) */
static const char *ld(int dt, const char *e, char *buf, size_t sz)
{
	ox_cg_snprintf(buf, sz, "(double)%s", ox_cg_load(dt, e));
	return buf;
}

/* double expression e stored as dt (the C target's store) */
static const char *st(int dt, const char *e, char *buf, size_t sz)
{
	char c[320];
	ox_cg_snprintf(c, sizeof c, "(%s)(%s)", ox_cg_ntype(dt), e);
	ox_cg_snprintf(buf, sz, "%s", ox_cg_store(dt, c));
	return buf;
}

/* a sample at index expression at of x (C components: 2 complex, 1 real)
 * as the doubles xr, xi */
static void sample(int dt, const char *at, long long C, char *xr, char *xi, size_t sz)
{
	char e[300];
	ox_cg_snprintf(e, sizeof e, "x[%s]", at);
	ld(dt, e, xr, sz);
	ox_cg_snprintf(e, sizeof e, "x[%s + 1]", at);
	if (C == 2)
		ld(dt, e, xi, sz);
	else
		ox_cg_snprintf(xi, sz, "0.0");
}

/* the statement computing the twiddle of w = (k t) mod n where it is used,
 * by the expression the C target's table holds */
static const char *twiddle(char *buf, size_t sz, long long n)
{
	ox_cg_snprintf(buf, sz, "const double wc = cos(6.283185307179586 * (double)w / %lld.0), "
			  "ws = sin(6.283185307179586 * (double)w / %lld.0);", n, n);
	return buf;
}

/* re and im stored as complex output element at */
static void store2(ox_buf *b, int dt, const char *at)
{
	char sr[400], si[400];
	ox_buf_printf(b, "\ty[(%s) * 2] = %s;\n\ty[(%s) * 2 + 1] = %s;\n", at, st(dt, "re", sr, sizeof sr), at,
		      st(dt, "im", si, sizeof si));
}

static int plain(ox_graph *g, const ox_value *v)
{
	return v && v->has_shape && !v->layout && !ox_shape_is_rt(g, &v->shape) &&
	       (v->dtype == OX_F32 || v->dtype == OX_F64 || v->dtype == OX_F16 || v->dtype == OX_BF16);
}

/* DFT over axis of length N (the C target's emit_dft): a thread per (o, k,
 * i), o the dims before the axis, k the output bin, i the dims after it */
static int emit_dft(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int axis, irfft;
	ox_dim len;
	if (!plain(g, x) || !plain(g, y) || ox_node_rt(g, n) || ox_dft_params(g, n, &axis, &len, &irfft) || axis < 0 ||
	    len <= 0 || len > 65536 || !ox_shape_numel(&y->shape))
		return 1;
	const int dt = x->dtype, r = x->shape.rank, inverse = ox_attr_int(n, "inverse", 0) != 0;
	long long O = 1, I = 1, lin = (long long)x->shape.d[axis], lout = (long long)y->shape.d[axis];
	const long long C = (long long)x->shape.d[r - 1], N = (long long)len;
	for (int i = 0; i < axis; i++)
		O *= x->shape.d[i];
	for (int i = axis + 1; i < r - 1; i++)
		I *= x->shape.d[i];
	char e[256], xr[320], xi[320], sr[400];
	ox_cg_snprintf(e, sizeof e, "((i0 * %lld$L + t) * %lld$L + i2) * %lld$L", lin, I, C);
	sample(dt, e, C, xr, xi, sizeof xr);
	char Ts[32], Ns[32], Nd[32], wd[200];
	ox_cg_snprintf(Ts, sizeof Ts, "%lld", irfft ? (lin < N / 2 + 1 ? lin : N / 2 + 1) : (lin < N ? lin : N));
	ox_cg_snprintf(Ns, sizeof Ns, "%lld", N);
	ox_cg_snprintf(Nd, sizeof Nd, "%lld.0", N);
	ox_buf b = {0};
	ox_cg_dft_sum(&b, 1, &(ox_dft_sum){.T = Ts, .N = Ns, .Nd = Nd, .k = "i1", .xr = xr, .xi = xi, .wc = "wc",
					   .ws = "ws", .wdecl = twiddle(wd, sizeof wd, N), .it = "$I",
					   .irfft = irfft, .inverse = inverse});
	if (irfft) {
		ox_cg_snprintf(e, sizeof e, "re / %lld.0", N);
		ox_buf_printf(&b, "\ty[(i0 * %lld$L + i1) * %lld$L + i2] = %s;\n", lout, I, st(dt, e, sr, sizeof sr));
	} else {
		ox_cg_snprintf(e, sizeof e, "(i0 * %lld$L + i1) * %lld$L + i2", lout, I);
		store2(&b, dt, e);
	}
	char kname[200], params[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *T_ = ox_cg_ctype(dt);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", T_, T_);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: %s over axis %d, length %lld, of a %s input: a thread per output bin, the\n"
			  " * C target's direct sum in double */\n",
		      cg->fname, irfft ? "inverse one-sided DFT" : inverse ? "inverse DFT" : "DFT", axis, N,
		      C == 2 ? "complex" : "real");
	const int64_t dims[3] = {O, lout, I};
	ox_cu_index_kernel(&t, kname, params, dims, 3, b.s);
	ox_cu_index_launch(cg, kname, (const ox_dim[]){O, lout, I}, 3, "in0, out0", NULL);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&b);
	return 0;
}

/* STFT with a constant frame step and length (the C target's emit_stft):
 * a thread per (batch, frame, bin) */
static int emit_stft(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int64_t step, fl = -1;
	if (!plain(g, x) || !plain(g, y) || (w && !plain(g, w)) || !ox_in_const(g, n, 1) ||
	    (ox_in(g, n, 3) && !ox_in_const(g, n, 3)) || ox_node_rt(g, n) || !ox_shape_numel(&y->shape) ||
	    ox_signal_scalar(g, n, 1, "frame_step", &step))
		return 1;
	if (w)
		fl = w->shape.d[0];
	else if (ox_in(g, n, 3) && ox_signal_scalar(g, n, 3, "frame_length", &fl))
		return 1;
	const int dt = x->dtype;
	const long long B = (long long)y->shape.d[0], F = (long long)y->shape.d[1], K = (long long)y->shape.d[2];
	const long long L = (long long)x->shape.d[1], C = (long long)x->shape.d[2], S = (long long)step;
	const long long FL = fl < 0 ? L : (long long)fl;
	if (FL <= 0 || FL > 65536)
		return 1;
	char e[256], xr[320], xi[320], wv[320];
	ox_cg_snprintf(e, sizeof e, "(i0 * %lld$L + i1 * %lld$L + t) * %lld$L", L, S, C);
	sample(dt, e, C, xr, xi, sizeof xr);
	if (w)
		ld(w->dtype, "wn[t]", wv, sizeof wv);
	else
		ox_cg_snprintf(wv, sizeof wv, "1.0");
	char Ns[32], wd[200];
	ox_cg_snprintf(Ns, sizeof Ns, "%lld", FL);
	ox_buf b = {0};
	ox_cg_dft_sum(&b, 1, &(ox_dft_sum){.T = Ns, .N = Ns, .Nd = Ns, .k = "i2", .xr = xr, .xi = xi, .win = wv,
					   .wc = "wc", .ws = "ws", .wdecl = twiddle(wd, sizeof wd, FL), .it = "$I"});
	ox_cg_snprintf(e, sizeof e, "(i0 * %lld$L + i1) * %lld$L + i2", F, K);
	store2(&b, dt, e);
	char kname[200], params[300];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *T_ = ox_cg_ctype(dt);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ wn, %s *__restrict__ y", T_,
		 w ? ox_cg_ctype(w->dtype) : T_, T_);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: STFT, %lld frames of %lld, step %lld, %lld bins%s: a thread per bin of a\n"
			  " * frame, the C target's direct sum in double */\n",
		      cg->fname, F, FL, S, K, w ? ", windowed" : "");
	const int64_t dims[3] = {B, F, K};
	ox_cu_index_kernel(&t, kname, params, dims, 3, b.s);
	ox_cu_index_launch(cg, kname, (const ox_dim[]){B, F, K}, 3, w ? "in0, in2, out0" : "in0, nullptr, out0", NULL);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&b);
	return 0;
}

int ox_cu_emit_signal(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_DFT:
		return emit_dft(cg, g, n);
	case OX_OP_STFT:
		return emit_stft(cg, g, n);
	}
	return 1;
}
