/* emit_signal.c: C for Einsum, Det, the window functions, DFT, STFT and
 * MelWeightMatrix.
 *
 * Einsum is one loop nest with literal bounds: the output labels outside
 * (so the output is written in order), the summed labels inside, a
 * repeated label reusing its loop variable (diagonals) and a size-1 axis
 * of a longer label reading with stride 0 (broadcast). Floats accumulate in
 * double, integers wrap in uint64_t. Det is LU with partial pivoting in
 * double per matrix. DFT and STFT are direct O(n^2) transforms in double
 * over a twiddle table indexed by (k*t) mod n, so angles stay exact.
 * MelWeightMatrix is computed here, at compile time, from its constant
 * inputs, and emitted as literal stores.
 */
#include "cg.h"
#include "../ir/family.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EIN_NLABELS (OX_MAX_RANK + 52)

static const char *or0(const char *s)
{
	return *s ? s : "0";
}

/* store a double expression into dtype dt: converted to the compute type
 * first (f16/bf16 through float; integers truncate as numpy's astype) */
static const char *store(int dt, const char *e)
{
	static char ring[4][512];
	static int at;
	at = (at + 1) % 4;
	snprintf(ring[at], sizeof ring[at], "(%s)(%s)", ox_cg_ntype(dt), e);
	return ox_cg_store(dt, ring[at]);
}

static const char *load(int dt, const char *e)
{
	static char ring[4][512];
	static int at;
	at = (at + 1) % 4;
	snprintf(ring[at], sizeof ring[at], "(double)%s", ox_cg_load(dt, e));
	return ring[at];
}

/* ---------------- Einsum ---------------- */

/* strcat that stops at the buffer's end (the caller checks for truncation) */
static void append(char *buf, size_t cap, const char *s)
{
	size_t len = strlen(buf), m = strlen(s);
	if (len + m >= cap)
		m = cap - len - 1;
	memcpy(buf + len, s, m);
	buf[len + m] = 0;
}

static void ein_var(char *buf, size_t cap, int l)
{
	if (l < OX_MAX_RANK)
		snprintf(buf, cap, "e%d", l);
	else if (l < OX_MAX_RANK + 26)
		snprintf(buf, cap, "u_%c", 'A' + l - OX_MAX_RANK);
	else
		snprintf(buf, cap, "i_%c", 'a' + l - OX_MAX_RANK - 26);
}

static int emit_einsum(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int lab[64][OX_MAX_RANK], olab[OX_MAX_RANK], orank;
	ox_dim size[EIN_NLABELS];
	if (ox_einsum_parse(g, n, lab, olab, &orank, size))
		return -1;
	const ox_value *y = ox_out(g, n, 0);
	int dt = y->dtype, isf = ox_dtype_is_float(dt);
	ox_cg_line(cg, 1, "/* Einsum \"%s\" */", ox_attr_str(n, "equation", ""));
	if (ox_shape_numel(&y->shape) == 0) {
		ox_cg_line(cg, 1, "/* the output is empty */");
		return 0;
	}
	int inout[EIN_NLABELS] = {0}, used[EIN_NLABELS] = {0};
	for (int i = 0; i < orank; i++)
		inout[olab[i]] = 1;
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = ox_in(g, n, k);
		for (int j = 0; j < x->shape.rank; j++)
			used[lab[k][j]] = 1;
	}
	/* an empty sum: every output element is 0 */
	for (int l = 0; l < EIN_NLABELS; l++)
		if (used[l] && !inout[l] && size[l] == 0) {
			ox_cg_line(cg, 1, "memset(out0, 0, sizeof(*out0) * %lld);",
			     (long long)ox_shape_numel(&y->shape));
			return 0;
		}

	char var[16], oidx[1024] = "", idx[64][1024];
	int64_t s = 1;
	for (int i = orank - 1; i >= 0; i--) {
		ein_var(var, sizeof var, olab[i]);
		ox_cg_term(oidx, sizeof oidx, var, size[olab[i]], s);
		s *= size[olab[i]];
	}
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = ox_in(g, n, k);
		idx[k][0] = 0;
		s = 1;
		for (int j = x->shape.rank - 1; j >= 0; j--) {
			int l = lab[k][j];
			ein_var(var, sizeof var, l);
			ox_cg_term(idx[k], sizeof idx[k], var, size[l], x->shape.d[j] == 1 ? 0 : s);
			s *= x->shape.d[j];
		}
	}

	int lvl = 1;
	for (int i = 0; i < orank; i++) {
		if (size[olab[i]] == 1)
			continue;
		ein_var(var, sizeof var, olab[i]);
		ox_cg_line(cg, lvl++, "for (size_t %s = 0; %s < %lld; %s++) {", var, var,
		     (long long)size[olab[i]], var);
	}
	const char *A = isf ? "double" : "uint64_t";
	ox_cg_line(cg, lvl++, "{");
	ox_cg_line(cg, lvl, "%s acc = 0;", A);
	int inner = lvl;
	for (int l = 0; l < EIN_NLABELS; l++) {
		if (!used[l] || inout[l] || size[l] == 1)
			continue;
		ein_var(var, sizeof var, l);
		ox_cg_line(cg, lvl++, "for (size_t %s = 0; %s < %lld; %s++) {", var, var, (long long)size[l],
		     var);
	}
	char prod[8192] = "";
	for (int k = 0; k < n->nin; k++) {
		char e[1100];
		snprintf(e, sizeof e, "in%d[", k);
		append(e, sizeof e, or0(idx[k]));
		append(e, sizeof e, "]");
		if (k)
			append(prod, sizeof prod, " * ");
		if (!isf)
			append(prod, sizeof prod, "(uint64_t)");
		append(prod, sizeof prod, isf ? load(dt, e) : e);
	}
	if (strlen(prod) + 1 >= sizeof prod)
		return ox_error(g, n, "the equation's product is too long to emit");
	ox_cg_line(cg, lvl, "acc += %s;", n->nin ? prod : "1");
	while (lvl > inner)
		ox_cg_line(cg, --lvl, "}");
	/* integers: the wrapped sum converts to the narrow type modulo 2^bits */
	ox_cg_line(cg, lvl, "out0[%s] = %s;", or0(oidx), store(dt, "acc"));
	while (lvl > 1)
		ox_cg_line(cg, --lvl, "}");
	return 0;
}

/* ---------------- Det ---------------- */

static int emit_det(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	int64_t m = x->shape.d[r - 1], nb = ox_shape_numel(&y->shape);
	ox_cg_line(cg, 1, "/* Det of %lld %lldx%lld matrices: LU with partial pivoting, in double */",
	     (long long)nb, (long long)m, (long long)m);
	if (nb == 0)
		return 0;
	if (m == 0) {
		ox_cg_line(cg, 1, "for (size_t b = 0; b < %lld; b++)", (long long)nb);
		ox_cg_line(cg, 2, "out0[b] = %s;", store(dt, "1.0"));
		return 0;
	}
	if (m > 1024)
		return ox_error(g, n, "%lldx%lld matrices are too large for the stack", (long long)m,
		                (long long)m);
	long long mm = (long long)(m * m), M = (long long)m;
	ox_cg_line(cg, 1, "for (size_t b = 0; b < %lld; b++) {", (long long)nb);
	ox_cg_line(cg, 2, "double a[%lld], det = 1.0;", mm);
	char e[128];
	snprintf(e, sizeof e, "in0[b * %lld + i]", mm);
	ox_cg_line(cg, 2, "for (size_t i = 0; i < %lld; i++)", mm);
	ox_cg_line(cg, 3, "a[i] = %s;", load(dt, e));
	ox_cg_line(cg, 2, "for (size_t k = 0; k < %lld; k++) {", M);
	ox_cg_line(cg, 3, "size_t p = k;");
	ox_cg_line(cg, 3, "for (size_t i = k + 1; i < %lld; i++)", M);
	ox_cg_line(cg, 4, "if (fabs(a[i * %lld + k]) > fabs(a[p * %lld + k]))", M, M);
	ox_cg_line(cg, 5, "p = i;");
	ox_cg_line(cg, 3, "if (a[p * %lld + k] == 0.0) {", M);
	ox_cg_line(cg, 4, "det = 0.0;");
	ox_cg_line(cg, 4, "break;");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "if (p != k) {");
	ox_cg_line(cg, 4, "for (size_t j = 0; j < %lld; j++) {", M);
	ox_cg_line(cg, 5, "double t = a[k * %lld + j];", M);
	ox_cg_line(cg, 5, "a[k * %lld + j] = a[p * %lld + j];", M, M);
	ox_cg_line(cg, 5, "a[p * %lld + j] = t;", M);
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "det = -det;");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "det *= a[k * %lld + k];", M);
	ox_cg_line(cg, 3, "for (size_t i = k + 1; i < %lld; i++) {", M);
	ox_cg_line(cg, 4, "double f = a[i * %lld + k] / a[k * %lld + k];", M, M);
	ox_cg_line(cg, 4, "for (size_t j = k + 1; j < %lld; j++)", M);
	ox_cg_line(cg, 5, "a[i * %lld + j] -= f * a[k * %lld + j];", M, M);
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "out0[b] = %s;", store(dt, "det"));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---------------- windows ---------------- */

static int emit_window(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	int64_t size = y->shape.d[0];
	int periodic = ox_attr_int(n, "periodic", 1) != 0;
	double a0, a1, a2 = 0;
	switch (n->op) {
	case OX_OP_HannWindow: a0 = 0.5, a1 = 0.5; break;
	case OX_OP_HammingWindow: a0 = 25.0 / 46.0, a1 = 21.0 / 46.0; break;
	default: a0 = 0.42, a1 = 0.5, a2 = 0.08; break;
	}
	int64_t N = periodic ? size : size - 1;
	ox_cg_line(cg, 1, "/* %s of %lld points, %s */", n->optype, (long long)size,
	     periodic ? "periodic" : "symmetric");
	if (size == 0)
		return 0;
	ox_cg_line(cg, 1, "for (size_t i = 0; i < %lld; i++) {", (long long)size);
	if (N == 0)
		ox_cg_line(cg, 2, "double t = (double)NAN; /* 0/0, as the reference */");
	else
		ox_cg_line(cg, 2, "double t = 6.283185307179586 * (double)i / %lld.0;", (long long)N);
	char e[256];
	if (a2 != 0)
		snprintf(e, sizeof e, "%s - %s * cos(t) + %s * cos(2.0 * t)", ox_cg_lit(OX_F64, a0),
		         ox_cg_lit(OX_F64, a1), ox_cg_lit(OX_F64, a2));
	else
		snprintf(e, sizeof e, "%s - %s * cos(t)", ox_cg_lit(OX_F64, a0), ox_cg_lit(OX_F64, a1));
	ox_cg_line(cg, 2, "out0[i] = %s;", store(y->dtype, e));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---------------- DFT, STFT ---------------- */

/* wc[t] = cos(2 pi t / n), ws[t] = sin(2 pi t / n) */
static int twiddles(ox_cg *cg, ox_graph *g, ox_node *n, int64_t len)
{
	if (len > 65536)
		return ox_error(g, n, "transform length %lld is too long for the direct DFT",
		                (long long)len);
	ox_cg_line(cg, 1, "double wc[%lld], ws[%lld];", (long long)len, (long long)len);
	ox_cg_line(cg, 1, "for (size_t t = 0; t < %lld; t++) {", (long long)len);
	ox_cg_line(cg, 2, "wc[t] = cos(6.283185307179586 * (double)t / %lld.0);", (long long)len);
	ox_cg_line(cg, 2, "ws[t] = sin(6.283185307179586 * (double)t / %lld.0);", (long long)len);
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_dft(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank, axis, irfft;
	int64_t len;
	if (ox_dft_params(g, n, &axis, &len, &irfft))
		return -1;
	int inverse = ox_attr_int(n, "inverse", 0) != 0;
	long long O = 1, I = 1, lin = (long long)x->shape.d[axis], lout = (long long)y->shape.d[axis];
	long long C = (long long)x->shape.d[r - 1], N = (long long)len;
	for (int i = 0; i < axis; i++)
		O *= x->shape.d[i];
	for (int i = axis + 1; i < r - 1; i++)
		I *= x->shape.d[i];
	ox_cg_line(cg, 1, "/* %s over axis %d, length %lld, of %s input */",
	     irfft ? "inverse one-sided DFT (real output)" : inverse ? "inverse DFT" : "DFT", axis, N,
	     C == 2 ? "complex" : "real");
	if (ox_shape_numel(&y->shape) == 0)
		return 0;
	if (twiddles(cg, g, n, len))
		return -1;
	char xr[256], xi[256];
	char base[128];
	snprintf(base, sizeof base, "((o * %lld + t) * %lld + i) * %lld", lin, I, C);
	char e[256];
	snprintf(e, sizeof e, "in0[%s]", base);
	snprintf(xr, sizeof xr, "%s", load(dt, e));
	snprintf(e, sizeof e, "in0[%s + 1]", base);
	snprintf(xi, sizeof xi, "%s", C == 2 ? load(dt, e) : "0.0");
	ox_cg_line(cg, 1, "for (size_t o = 0; o < %lld; o++) {", O);
	ox_cg_line(cg, 2, "for (size_t i = 0; i < %lld; i++) {", I);
	ox_cg_line(cg, 3, "for (size_t k = 0; k < %lld; k++) {", lout);
	if (irfft) {
		/* x[k] = (X0 + sum 2 Re(Xt w^kt) + X(n/2) (-1)^k) / n: the half
		 * spectrum stands for its Hermitian mirror; the imaginary parts of
		 * the DC and Nyquist bins drop out, as in numpy's irfft */
		long long bins = lin < N / 2 + 1 ? lin : N / 2 + 1;
		ox_cg_line(cg, 4, "double re = 0.0;");
		ox_cg_line(cg, 4, "for (size_t t = 0; t < %lld; t++) {", bins);
		ox_cg_line(cg, 5, "double xr = %s, xi = %s;", xr, xi);
		ox_cg_line(cg, 5, "size_t w = (k * t) %% %lld;", N);
		ox_cg_line(cg, 5, "if (t == 0 || 2 * t == %lld)", N);
		ox_cg_line(cg, 6, "re += xr * wc[w];");
		ox_cg_line(cg, 5, "else");
		ox_cg_line(cg, 6, "re += 2.0 * (xr * wc[w] - xi * ws[w]);");
		ox_cg_line(cg, 4, "}");
		char d[64];
		snprintf(d, sizeof d, "re / %lld.0", N);
		ox_cg_line(cg, 4, "out0[(o * %lld + k) * %lld + i] = %s;", lout, I, store(dt, d));
	} else {
		long long T = lin < N ? lin : N;
		ox_cg_line(cg, 4, "double re = 0.0, im = 0.0;");
		ox_cg_line(cg, 4, "for (size_t t = 0; t < %lld; t++) {", T);
		ox_cg_line(cg, 5, "double xr = %s, xi = %s;", xr, xi);
		ox_cg_line(cg, 5, "size_t w = (k * t) %% %lld;", N);
		if (inverse) {
			ox_cg_line(cg, 5, "re += xr * wc[w] - xi * ws[w];");
			ox_cg_line(cg, 5, "im += xr * ws[w] + xi * wc[w];");
		} else {
			ox_cg_line(cg, 5, "re += xr * wc[w] + xi * ws[w];");
			ox_cg_line(cg, 5, "im += xi * wc[w] - xr * ws[w];");
		}
		ox_cg_line(cg, 4, "}");
		if (inverse) {
			ox_cg_line(cg, 4, "re /= %lld.0;", N);
			ox_cg_line(cg, 4, "im /= %lld.0;", N);
		}
		ox_cg_line(cg, 4, "out0[((o * %lld + k) * %lld + i) * 2] = %s;", lout, I, store(dt, "re"));
		ox_cg_line(cg, 4, "out0[((o * %lld + k) * %lld + i) * 2 + 1] = %s;", lout, I, store(dt, "im"));
	}
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_stft(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int dt = x->dtype;
	int64_t step;
	if (ox_signal_scalar(g, n, 1, "frame_step", &step))
		return -1;
	long long B = (long long)y->shape.d[0], F = (long long)y->shape.d[1];
	long long K = (long long)y->shape.d[2], L = (long long)x->shape.d[1];
	long long C = (long long)x->shape.d[2], S = (long long)step;
	/* the frame length: the window's, else the input's, else the signal's */
	int64_t fl = -1;
	if (w)
		fl = w->shape.d[0];
	else if (ox_in(g, n, 3) && ox_signal_scalar(g, n, 3, "frame_length", &fl))
		return -1;
	if (fl < 0)
		fl = L;
	long long FL = (long long)fl;
	ox_cg_line(cg, 1, "/* STFT: %lld frames of %lld, step %lld, %lld bins%s */", F, FL, S, K,
	     w ? ", windowed" : "");
	if (ox_shape_numel(&y->shape) == 0)
		return 0;
	if (twiddles(cg, g, n, fl))
		return -1;
	char base[128], e[256], xr[256], xi[256], wv[256];
	snprintf(base, sizeof base, "(b * %lld + f * %lld + t) * %lld", L, S, C);
	snprintf(e, sizeof e, "in0[%s]", base);
	snprintf(xr, sizeof xr, "%s", load(dt, e));
	snprintf(e, sizeof e, "in0[%s + 1]", base);
	snprintf(xi, sizeof xi, "%s", C == 2 ? load(dt, e) : "0.0");
	snprintf(wv, sizeof wv, "%s", w ? load(w->dtype, "in2[t]") : "1.0");
	ox_cg_line(cg, 1, "for (size_t b = 0; b < %lld; b++) {", B);
	ox_cg_line(cg, 2, "for (size_t f = 0; f < %lld; f++) {", F);
	ox_cg_line(cg, 3, "for (size_t k = 0; k < %lld; k++) {", K);
	ox_cg_line(cg, 4, "double re = 0.0, im = 0.0;");
	ox_cg_line(cg, 4, "for (size_t t = 0; t < %lld; t++) {", FL);
	ox_cg_line(cg, 5, "double wt = %s, xr = %s * wt, xi = %s * wt;", wv, xr, xi);
	ox_cg_line(cg, 5, "size_t w = (k * t) %% %lld;", FL);
	ox_cg_line(cg, 5, "re += xr * wc[w] + xi * ws[w];");
	ox_cg_line(cg, 5, "im += xi * wc[w] - xr * ws[w];");
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "out0[((b * %lld + f) * %lld + k) * 2] = %s;", F, K, store(dt, "re"));
	ox_cg_line(cg, 4, "out0[((b * %lld + f) * %lld + k) * 2 + 1] = %s;", F, K, store(dt, "im"));
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---------------- MelWeightMatrix ---------------- */

/* The reference's arithmetic, step by step: the mel edges in float (its
 * inputs are float32 scalars), the bin centers in double, floored to
 * integer FFT bins; then triangles rising from the left bin to the center
 * and falling to the right one. */
static int emit_mel(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	int dt = y->dtype;
	int64_t nmel = ox_tensor_get_i64(ox_in_const(g, n, 0), 0);
	int64_t dftl = ox_tensor_get_i64(ox_in_const(g, n, 1), 0);
	int64_t rate = ox_tensor_get_i64(ox_in_const(g, n, 2), 0);
	float lo = (float)ox_tensor_get_f64(ox_in_const(g, n, 3), 0);
	float hi = (float)ox_tensor_get_f64(ox_in_const(g, n, 4), 0);
	int64_t nspec = dftl / 2 + 1;
	if (rate <= 0)
		return ox_error(g, n, "sample_rate %lld is not positive", (long long)rate);
	if (nmel > 100000 || nspec * nmel > (1 << 24))
		return ox_error(g, n, "a %lldx%lld matrix is too large", (long long)nspec, (long long)nmel);
	float lomel = 2595.0f * log10f(1.0f + lo / 700.0f);
	float himel = 2595.0f * log10f(1.0f + hi / 700.0f);
	float step = (himel - lomel) / (float)(nmel + 2);
	int64_t *fb = malloc(sizeof *fb * (size_t)(nmel + 2));
	double *m = calloc((size_t)(nspec * nmel) + 1, sizeof *m);
	if (!fb || !m)
		ox_die("out of memory");
	for (int64_t i = 0; i < nmel + 2; i++) {
		double f = (double)i * (double)step + (double)lomel;
		f = 700.0 * (pow(10.0, f / 2595.0) - 1.0);
		fb[i] = (int64_t)floor((double)(dftl + 1) * f / (double)rate);
	}
	int bad = 0;
	for (int64_t i = 0; i < nmel && !bad; i++) {
		int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
		if (l < 0 || c < 0 || h < 0 || c >= nspec || h > nspec) {
			bad = 1;
			break;
		}
		if (c == l)
			m[c * nmel + i] = 1;
		else
			for (int64_t j = l; j <= c; j++)
				m[j * nmel + i] = (double)(j - l) / (double)(c - l);
		for (int64_t j = c; j < h; j++)
			m[j * nmel + i] = (double)(h - j) / (double)(h - c);
	}
	if (!bad) {
		ox_cg_line(cg, 1, "/* MelWeightMatrix: %lld spectrogram bins x %lld mel bins, %lld Hz, "
		     "%g..%g Hz, computed at compile time */",
		     (long long)nspec, (long long)nmel, (long long)rate, (double)lo, (double)hi);
		ox_cg_line(cg, 1, "memset(out0, 0, sizeof(*out0) * %lld);", (long long)(nspec * nmel));
		for (int64_t k = 0; k < nspec * nmel; k++)
			if (m[k] != 0)
				ox_cg_line(cg, 1, "out0[%lld] = %s;", (long long)k,
				     store(dt, ox_cg_lit(OX_F64, m[k])));
	}
	free(fb);
	free(m);
	if (bad)
		return ox_error(g, n, "the mel bands fall outside the %lld spectrogram bins",
		                (long long)nspec);
	return 0;
}

int emit_signal(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_Einsum: return emit_einsum(cg, g, n);
	case OX_OP_Det: return emit_det(cg, g, n);
	case OX_OP_HannWindow:
	case OX_OP_HammingWindow:
	case OX_OP_BlackmanWindow: return emit_window(cg, g, n);
	case OX_OP_DFT: return emit_dft(cg, g, n);
	case OX_OP_STFT: return emit_stft(cg, g, n);
	case OX_OP_MelWeightMatrix: return emit_mel(cg, g, n);
	}
	return ox_error(g, n, "not a signal op");
}
