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
 * Sizes print with ox_cg_dim (a literal, or an expression over ox_d[] for
 * a run-time dim). With a shape-steering input read from data (a window's
 * size, a DFT's axis or length, STFT's step or frame length,
 * MelWeightMatrix's inputs) the code computes the sizes as the spec says,
 * writes the data dims the node defines (ox_cg_set_dim) and checks the
 * rest, returning 2 (PREFIX_ERR_SHAPE) when they do not hold.
 */
#include "../cg.h"
#include "../../ir/family.h"
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
	ox_cg_snprintf(ring[at], sizeof ring[at], "(%s)(%s)", ox_cg_ntype(dt), e);
	return ox_cg_store(dt, ring[at]);
}

static const char *load(int dt, const char *e)
{
	static char ring[4][512];
	static int at;
	at = (at + 1) % 4;
	if ((size_t)ox_cg_snprintf(ring[at], sizeof ring[at], "(double)%s", ox_cg_load(dt, e)) >= sizeof ring[at])
		ox_die("emit_signal: expression too long");
	return ring[at];
}

/* d as C, cast to size_t when it is a run-time dim (a bound of the size_t
 * loop variables) */
static const char *dimz(ox_cg *cg, ox_dim d)
{
	static char r[8][600];
	static int at;
	if (d >= 0)
		return ox_cg_dim(cg, d);
	at = (at + 1) % 8;
	ox_cg_snprintf(r[at], sizeof r[at], "(size_t)%s", ox_cg_dim(cg, d));
	return r[at];
}

/* data dim d of output 0, which the node computes as expr: set it;
 * another dim: check that expr is it */
static void set_or_check(ox_cg *cg, ox_graph *g, ox_node *n, ox_dim d, const char *expr, const char *what)
{
	if (ox_dim_defined_by(g, d, n->out[0])) {
		ox_cg_set_dim(cg, 1, d, expr);
		return;
	}
	ox_cg_line(cg, 1, "if (%s != %s)", expr, ox_cg_dim(cg, d));
	ox_cg_line(cg, 2, "return 2; /* %s */", what);
	cg->fails_shape = 1;
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

/* "var * stride" appended to an index sum (ox_cg_term, with a run-time
 * stride printed as its expression) */
static void term(ox_cg *cg, char *buf, size_t cap, const char *var, ox_dim n, ox_dim stride)
{
	size_t len = strlen(buf);
	if (n == 1 || stride == 0)
		return;
	if (stride == 1)
		ox_cg_snprintf(buf + len, cap - len, "%s%s", len ? " + " : "", var);
	else
		ox_cg_snprintf(buf + len, cap - len, "%s%s * %s", len ? " + " : "", var, ox_cg_dim(cg, stride));
}

static void ein_var(char *buf, size_t cap, int l)
{
	if (l < OX_MAX_RANK)
		ox_cg_snprintf(buf, cap, "e%d", l);
	else if (l < OX_MAX_RANK + 26)
		ox_cg_snprintf(buf, cap, "u_%c", 'A' + l - OX_MAX_RANK);
	else
		ox_cg_snprintf(buf, cap, "i_%c", 'a' + l - OX_MAX_RANK - 26);
}

/* a line of lvl tabs into b */
static void bline(ox_buf *b, int lvl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ox_buf_printf(b, "%.*s", lvl, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t");
	ox_buf_vprintf(b, fmt, ap);
	ox_buf_puts(b, "\n");
	va_end(ap);
}

/* An Einsum parsed: the labels, the output's index sum (oidx) and each
 * input's (idx), which labels the output has (inout) and the inputs use */
typedef struct {
	int lab[64][OX_MAX_RANK], olab[OX_MAX_RANK], orank;
	ox_dim size[EIN_NLABELS];
	int inout[EIN_NLABELS], used[EIN_NLABELS];
	char oidx[4096], idx[64][4096];
} ein;

/* parse n into e, emitting the checks of the labels' sizes; -1 on an
 * error (reported) */
static int ein_parse(ox_cg *cg, ox_graph *g, ox_node *n, ein *e)
{
	memset(e, 0, sizeof *e);
	if (ox_einsum_parse(g, n, e->lab, e->olab, &e->orank, e->size))
		return -1;
	/* an axis of another size than its label's must be it when the program
	 * runs (a size-1 axis broadcasts) */
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = ox_in(g, n, k);
		for (int j = 0; j < x->shape.rank; j++)
			if (x->shape.d[j] != 1)
				ox_cg_check_eq(cg, x->shape.d[j], e->size[e->lab[k][j]], "the sizes of a label differ");
	}
	for (int i = 0; i < e->orank; i++)
		e->inout[e->olab[i]] = 1;
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = ox_in(g, n, k);
		for (int j = 0; j < x->shape.rank; j++)
			e->used[e->lab[k][j]] = 1;
	}
	char var[16];
	ox_dim s = 1;
	for (int i = e->orank - 1; i >= 0; i--) {
		ein_var(var, sizeof var, e->olab[i]);
		term(cg, e->oidx, sizeof e->oidx, var, e->size[e->olab[i]], s);
		s = ox_dim_mul(g, s, e->size[e->olab[i]]);
	}
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = ox_in(g, n, k);
		s = 1;
		for (int j = x->shape.rank - 1; j >= 0; j--) {
			int l = e->lab[k][j];
			ein_var(var, sizeof var, l);
			term(cg, e->idx[k], sizeof e->idx[k], var, e->size[l], x->shape.d[j] == 1 ? 0 : s);
			s = ox_dim_mul(g, s, x->shape.d[j]);
		}
		if (strlen(e->idx[k]) + 1 >= sizeof e->idx[k])
			return ox_error(g, n, "the equation's index is too long to emit");
	}
	return 0;
}

/* the labels summed over and none of them empty: 1; one empty: 0 (every
 * output element is 0) */
static int ein_nonempty(const ein *e)
{
	for (int l = 0; l < EIN_NLABELS; l++)
		if (e->used[l] && !e->inout[l] && e->size[l] == 0)
			return 0;
	return 1;
}

/* one output element's sum into b at lvl tabs, the output labels'
 * variables (ein_var) set: the summed labels' loops, the accumulator, the
 * store into out0 */
static int ein_sum(ox_cg *cg, ox_graph *g, ox_node *n, const ein *e, ox_buf *b, int lvl)
{
	const int dt = ox_out(g, n, 0)->dtype, isf = ox_dtype_is_float(dt);
	char var[16];
	bline(b, lvl, "%s acc = 0;", isf ? "double" : "uint64_t");
	const int inner = lvl;
	for (int l = 0; l < EIN_NLABELS; l++) {
		if (!e->used[l] || e->inout[l] || e->size[l] == 1)
			continue;
		ein_var(var, sizeof var, l);
		bline(b, lvl++, "for (size_t %s = 0; %s < %s; %s++) {", var, var, dimz(cg, e->size[l]), var);
	}
	char prod[16384] = "";
	for (int k = 0; k < n->nin; k++) {
		char x[4200];
		ox_cg_snprintf(x, sizeof x, "in%d[", k);
		append(x, sizeof x, or0(e->idx[k]));
		append(x, sizeof x, "]");
		if (k)
			append(prod, sizeof prod, " * ");
		if (!isf)
			append(prod, sizeof prod, "(uint64_t)");
		append(prod, sizeof prod, isf ? load(dt, x) : x);
	}
	if (strlen(prod) + 1 >= sizeof prod)
		return ox_error(g, n, "the equation's product is too long to emit");
	bline(b, lvl, "acc += %s;", n->nin ? prod : "1");
	while (lvl > inner)
		bline(b, --lvl, "}");
	/* integers: the wrapped sum converts to the narrow type modulo 2^bits */
	bline(b, lvl, "out0[%s] = %s;", or0(e->oidx), store(dt, "acc"));
	return 0;
}

/* Einsum: a map over the output's labels, each element its sum over the
 * others (ein_sum); on the CUDA target with constant shapes only (the
 * parse's checks and strides are the C target's otherwise) */
static int emit_einsum(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	for (int k = 0; cg->map && k <= n->nin; k++)
		if (ox_shape_is_rt(g, k < n->nin ? &ox_in(g, n, k)->shape : &y->shape))
			return 0;
	ein *e = malloc(sizeof *e);
	if (!e)
		ox_die("emit_einsum: out of memory");
	int rc = ein_parse(cg, g, n, e);
	if (!rc && !cg->map)
		ox_cg_line(cg, 1, "/* Einsum \"%s\" */", ox_attr_str(n, "equation", ""));
	if (!rc && ox_shape_numel(&y->shape) == 0) {
		if (!cg->map)
			ox_cg_line(cg, 1, "/* the output is empty */");
	} else if (!rc && !ein_nonempty(e)) {
		/* an empty sum: every output element is 0 */
		if (!cg->map)
			ox_cg_line(cg, 1, "memset(out0, 0, sizeof(*out0) * %lld);", (long long)ox_shape_numel(&y->shape));
	} else if (!rc) {
		ox_dim d[OX_MAX_RANK];
		char var[16];
		ox_buf b = {0};
		for (int i = 0; i < e->orank; i++) {
			d[i] = e->size[e->olab[i]];
			ein_var(var, sizeof var, e->olab[i]);
			if (d[i] != 1)
				bline(&b, 0, "const size_t %s = i%d;", var, i);
		}
		rc = ein_sum(cg, g, n, e, &b, 0);
		if (!rc)
			rc = ox_cg_map(cg, g, d, e->orank, "", b.s);
		ox_buf_free(&b);
	}
	free(e);
	return rc;
}
/* ---------------- Det ---------------- */

static int emit_det(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	ox_dim m = x->shape.d[r - 1], nb = ox_shape_numel_dim(g, &y->shape);
	ox_cg_check_eq(cg, x->shape.d[r - 2], m, "the matrices are not square");
	const char *NB = ox_cg_dim(cg, nb);
	ox_cg_line(cg, 1, m < 0 ? "/* Det of %s %s x %s matrices: LU with partial pivoting, in double */"
			       : "/* Det of %s %sx%s matrices: LU with partial pivoting, in double */", NB, ox_cg_dim(cg, m),
		   ox_cg_dim(cg, m));
	if (nb == 0)
		return 0;
	if (m == 0) {
		ox_cg_line(cg, 1, "for (size_t b = 0; b < %s; b++)", dimz(cg, nb));
		ox_cg_line(cg, 2, "out0[b] = %s;", store(dt, "1.0"));
		return 0;
	}
	/* a run-time size: a stack array for the most it can be */
	int64_t top = m >= 0 ? m : ox_dim_hi(g, m);
	if (top < 0 || top > 1024)
		return ox_error(g, n, "%lldx%lld matrices are too large for the stack", (long long)top,
		                (long long)top);
	char M[600], mm[600], e[800];
	ox_cg_snprintf(M, sizeof M, "%s", ox_cg_dim(cg, m));
	ox_cg_snprintf(mm, sizeof mm, "%s", ox_cg_dim(cg, ox_dim_mul(g, m, m)));
	ox_cg_line(cg, 1, "for (size_t b = 0; b < %s; b++) {", dimz(cg, nb));
	ox_cg_line(cg, 2, "double a[%lld], det = 1.0;", (long long)(top * top));
	ox_cg_snprintf(e, sizeof e, "in0[b * %s + i]", mm);
	ox_cg_line(cg, 2, "for (size_t i = 0; i < %s; i++)", m < 0 ? dimz(cg, ox_dim_mul(g, m, m)) : mm);
	ox_cg_line(cg, 3, "a[i] = %s;", load(dt, e));
	const char *MZ = m < 0 ? dimz(cg, m) : M;
	ox_cg_line(cg, 2, "for (size_t k = 0; k < %s; k++) {", MZ);
	ox_cg_line(cg, 3, "size_t p = k;");
	ox_cg_line(cg, 3, "for (size_t i = k + 1; i < %s; i++)", MZ);
	ox_cg_line(cg, 4, "if (fabs(a[i * %s + k]) > fabs(a[p * %s + k]))", M, M);
	ox_cg_line(cg, 5, "p = i;");
	ox_cg_line(cg, 3, "if (a[p * %s + k] == 0.0) {", M);
	ox_cg_line(cg, 4, "det = 0.0;");
	ox_cg_line(cg, 4, "break;");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "if (p != k) {");
	ox_cg_line(cg, 4, "for (size_t j = 0; j < %s; j++) {", MZ);
	ox_cg_line(cg, 5, "double t = a[k * %s + j];", M);
	ox_cg_line(cg, 5, "a[k * %s + j] = a[p * %s + j];", M, M);
	ox_cg_line(cg, 5, "a[p * %s + j] = t;", M);
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 4, "det = -det;");
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 3, "det *= a[k * %s + k];", M);
	ox_cg_line(cg, 3, "for (size_t i = k + 1; i < %s; i++) {", MZ);
	ox_cg_line(cg, 4, "double f = a[i * %s + k] / a[k * %s + k];", M, M);
	ox_cg_line(cg, 4, "for (size_t j = k + 1; j < %s; j++)", MZ);
	ox_cg_line(cg, 5, "a[i * %s + j] -= f * a[k * %s + j];", M, M);
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
	ox_dim size = y->shape.d[0];
	int periodic = ox_attr_int(n, "periodic", 1) != 0;
	double a0, a1, a2 = 0;
	switch (n->op) {
	case OX_OP_HannWindow: a0 = 0.5, a1 = 0.5; break;
	case OX_OP_HammingWindow: a0 = 25.0 / 46.0, a1 = 21.0 / 46.0; break;
	default: a0 = 0.42, a1 = 0.5, a2 = 0.08; break;
	}
	if (!ox_in_const(g, n, 0)) /* the size, read when the program runs */
		set_or_check(cg, g, n, size, "(int64_t)in0[0]", "not the size the compiler knows");
	ox_cg_line(cg, 1, "/* %s of %s points, %s */", n->optype, ox_cg_dim(cg, size), periodic ? "periodic" : "symmetric");
	if (size == 0)
		return 0;
	ox_cg_line(cg, 1, "for (size_t i = 0; i < %s; i++) {", dimz(cg, size));
	if (size < 0) /* a one-point symmetric window divides 0 by 0 here too */
		ox_cg_line(cg, 2, "double t = 6.283185307179586 * (double)i / (double)%s;",
			   ox_cg_dim(cg, periodic ? size : ox_dim_sub(g, size, 1)));
	else if ((periodic ? size : size - 1) == 0)
		ox_cg_line(cg, 2, "double t = (double)NAN; /* 0/0, as the reference */");
	else
		ox_cg_line(cg, 2, "double t = 6.283185307179586 * (double)i / %lld.0;", (long long)(periodic ? size : size - 1));
	char e[256];
	if (a2 != 0)
		ox_cg_snprintf(e, sizeof e, "%s - %s * cos(t) + %s * cos(2.0 * t)", ox_cg_lit(OX_F64, a0),
		         ox_cg_lit(OX_F64, a1), ox_cg_lit(OX_F64, a2));
	else
		ox_cg_snprintf(e, sizeof e, "%s - %s * cos(t)", ox_cg_lit(OX_F64, a0), ox_cg_lit(OX_F64, a1));
	ox_cg_line(cg, 2, "out0[i] = %s;", store(y->dtype, e));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---------------- DFT, STFT ---------------- */

void ox_cg_dft_sum(ox_buf *b, int lvl, const ox_dft_sum *s)
{
	bline(b, lvl, s->irfft ? "double re = 0.0;" : "double re = 0.0, im = 0.0;");
	bline(b, lvl, "for (%s t = 0; t < %s; t++) {", s->it, s->T);
	if (s->win)
		bline(b, lvl + 1, "double wt = %s, xr = %s * wt, xi = %s * wt;", s->win, s->xr, s->xi);
	else
		bline(b, lvl + 1, "double xr = %s, xi = %s;", s->xr, s->xi);
	bline(b, lvl + 1, "%s w = (%s * t) %% %s;", s->it, s->k, s->N);
	if (s->wdecl)
		bline(b, lvl + 1, "%s", s->wdecl);
	if (s->irfft) {
		/* x[k] = (X0 + sum 2 Re(Xt w^kt) + X(n/2) (-1)^k) / n: the half
		 * spectrum stands for its Hermitian mirror; the imaginary parts of
		 * the DC and Nyquist bins drop out, as in numpy's irfft */
		bline(b, lvl + 1, "if (t == 0 || 2 * t == %s)", s->N);
		bline(b, lvl + 2, "re += xr * %s;", s->wc);
		bline(b, lvl + 1, "else");
		bline(b, lvl + 2, "re += 2.0 * (xr * %s - xi * %s);", s->wc, s->ws);
	} else if (s->inverse) {
		bline(b, lvl + 1, "re += xr * %s - xi * %s;", s->wc, s->ws);
		bline(b, lvl + 1, "im += xr * %s + xi * %s;", s->ws, s->wc);
	} else {
		bline(b, lvl + 1, "re += xr * %s + xi * %s;", s->wc, s->ws);
		bline(b, lvl + 1, "im += xi * %s - xr * %s;", s->wc, s->ws);
	}
	bline(b, lvl, "}");
	if (s->inverse && !s->irfft) {
		bline(b, lvl, "re /= %s;", s->Nd);
		bline(b, lvl, "im /= %s;", s->Nd);
	}
}

/* the sum's lines into the function's body */
static void dft_sum(ox_cg *cg, int lvl, const ox_dft_sum *s)
{
	ox_buf b = {0};
	ox_cg_dft_sum(&b, lvl, s);
	ox_cg_printf(cg, "%s", b.s);
	ox_buf_free(&b);
}

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

/* The twiddles of the run-time length N (a size_t of the body), at most
 * top: the table above when it fits the stack, else each computed where
 * it is used (the same values). Sets the expressions of wc[w], ws[w]. */
static void twiddles_rt(ox_cg *cg, int64_t top, const char **wc, const char **ws)
{
	if (top > 65536) {
		*wc = "cos(6.283185307179586 * (double)w / (double)N)";
		*ws = "sin(6.283185307179586 * (double)w / (double)N)";
		return;
	}
	ox_cg_line(cg, 1, "double wc[%lld], ws[%lld];", (long long)top, (long long)top);
	ox_cg_line(cg, 1, "for (size_t t = 0; t < N; t++) {");
	ox_cg_line(cg, 2, "wc[t] = cos(6.283185307179586 * (double)t / (double)N);");
	ox_cg_line(cg, 2, "ws[t] = sin(6.283185307179586 * (double)t / (double)N);");
	ox_cg_line(cg, 1, "}");
	*wc = "wc[w]";
	*ws = "ws[w]";
}

/* A DFT of run-time sizes, or whose axis or length is read from data:
 * the sizes and strides computed when the program runs, as ox_dft_params
 * and infer_dft do at compile time. */
static int emit_dft_rt(ox_cg *cg, ox_graph *g, ox_node *n, int axis, ox_dim len, int irfft)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank;
	int inverse = ox_attr_int(n, "inverse", 0) != 0, half = !irfft && ox_attr_int(n, "onesided", 0);
	/* the most the length can be: from the output dims it makes */
	int64_t top = -1;
	if (len >= 0) {
		top = len;
	} else if (len != OX_DIM_DATA_LEN && len != OX_DIM_AXIS_LEN) {
		top = ox_dim_hi(g, len);
	} else {
		for (int i = 0; i < r - 1; i++) {
			if (axis >= 0 && i != axis)
				continue;
			int64_t h = ox_dim_hi(g, y->shape.d[i]), t = irfft ? h : half ? 2 * h : h;
			if (h < 0)
				return ox_error(g, n, "output dim %d has no bound", i);
			if (len == OX_DIM_AXIS_LEN) { /* the input axis' own length */
				int64_t xh = ox_dim_hi(g, x->shape.d[i]);
				t = irfft ? 2 * (xh > 1 ? xh - 1 : 0) : xh;
			}
			top = t > top ? t : top;
		}
	}
	if (top < 1)
		return ox_error(g, n, "the transform length has no bound");
	ox_cg_line(cg, 1, "/* %s, sizes known when the program runs */",
		   irfft ? "inverse one-sided DFT (real output)" : inverse ? "inverse DFT" : "DFT");
	ox_cg_printf(cg, "\tconst int64_t xd[%d] = {", r);
	for (int i = 0; i < r; i++)
		ox_cg_printf(cg, "%s%s", i ? ", " : "", ox_cg_dim(cg, x->shape.d[i]));
	ox_cg_printf(cg, "};\n");
	cg->fails_shape = 1;
	if (axis >= 0) {
		ox_cg_line(cg, 1, "const int64_t axis = %d;", axis);
	} else {
		ox_cg_line(cg, 1, "int64_t axis = (int64_t)in2[0];");
		ox_cg_line(cg, 1, "if (axis < 0)");
		ox_cg_line(cg, 2, "axis += %d;", r);
		ox_cg_line(cg, 1, "if (axis < 0 || axis > %d)", r - 2);
		ox_cg_line(cg, 2, "return 2; /* an axis out of range */");
	}
	if (len >= 0 && ox_in_const(g, n, 1))
		ox_cg_line(cg, 1, "const int64_t len = %lld;", (long long)len);
	else if (n->nin > 1 && n->in[1] >= 0)
		ox_cg_line(cg, 1, "const int64_t len = (int64_t)in1[0];");
	else
		ox_cg_line(cg, 1, "const int64_t len = %sxd[axis]%s;", irfft ? "2 * (" : "", irfft ? " - 1)" : "");
	ox_cg_line(cg, 1, "if (len < 1 || len > %lld)", (long long)top);
	ox_cg_line(cg, 2, "return 2; /* not a length the code was planned for */");
	ox_cg_line(cg, 1, "const int64_t nout = %s;", half ? "len / 2 + 1" : "len");
	if (x->shape.d[r - 1] < 0) {
		ox_cg_line(cg, 1, "if (xd[%d] != 1 && xd[%d] != 2)", r - 1, r - 1);
		ox_cg_line(cg, 2, "return 2; /* neither real nor complex */");
	}
	/* the output dims: the transformed axis nout, the others the input's */
	for (int i = 0; i < r - 1; i++) {
		char e[64];
		ox_cg_snprintf(e, sizeof e, "(axis == %d ? nout : xd[%d])", i, i);
		if (axis >= 0 && i != axis)
			continue;
		set_or_check(cg, g, n, y->shape.d[i], e, "not the output dim the compiler knows");
	}
	ox_cg_check_cap(cg, g, n, 0);
	ox_cg_line(cg, 1, "size_t O = 1, I = 1;");
	ox_cg_line(cg, 1, "for (int q = 0; q < %d; q++)", r - 1);
	ox_cg_line(cg, 2, "if (q < axis)");
	ox_cg_line(cg, 3, "O *= (size_t)xd[q];");
	ox_cg_line(cg, 2, "else if (q > axis)");
	ox_cg_line(cg, 3, "I *= (size_t)xd[q];");
	ox_cg_line(cg, 1, "const size_t N = (size_t)len, lin = (size_t)xd[axis], lout = (size_t)nout, C = (size_t)xd[%d];", r - 1);
	const char *wc, *ws;
	twiddles_rt(cg, top, &wc, &ws);
	char xr[600], xi[600], e[600];
	const char *base = "((o * lin + t) * I + i) * C";
	ox_cg_snprintf(e, sizeof e, "in0[%s]", base);
	ox_cg_snprintf(xr, sizeof xr, "%s", load(dt, e));
	ox_cg_snprintf(e, sizeof e, "in0[%s + 1]", base);
	if (x->shape.d[r - 1] < 0)
		ox_cg_snprintf(xi, sizeof xi, "(C == 2 ? %s : 0.0)", load(dt, e));
	else
		ox_cg_snprintf(xi, sizeof xi, "%s", x->shape.d[r - 1] == 2 ? load(dt, e) : "0.0");
	ox_cg_line(cg, 1, "for (size_t o = 0; o < O; o++) {");
	ox_cg_line(cg, 2, "for (size_t i = 0; i < I; i++) {");
	ox_cg_line(cg, 3, "for (size_t k = 0; k < lout; k++) {");
	ox_dft_sum sum = {.T = irfft ? "bins" : "T", .N = "N", .Nd = "(double)N", .k = "k", .xr = xr, .xi = xi,
			  .wc = wc, .ws = ws, .it = "size_t", .irfft = irfft, .inverse = inverse};
	if (irfft)
		ox_cg_line(cg, 4, "const size_t bins = lin < N / 2 + 1 ? lin : N / 2 + 1;");
	else
		ox_cg_line(cg, 4, "const size_t T = lin < N ? lin : N;");
	dft_sum(cg, 4, &sum);
	if (irfft) {
		ox_cg_line(cg, 4, "out0[(o * lout + k) * I + i] = %s;", store(dt, "re / (double)N"));
	} else {
		ox_cg_line(cg, 4, "out0[((o * lout + k) * I + i) * 2] = %s;", store(dt, "re"));
		ox_cg_line(cg, 4, "out0[((o * lout + k) * I + i) * 2 + 1] = %s;", store(dt, "im"));
	}
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_dft(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int dt = x->dtype, r = x->shape.rank, axis, irfft;
	ox_dim len;
	if (ox_dft_params(g, n, &axis, &len, &irfft))
		return -1;
	if (axis < 0 || len < 0 || ox_node_rt(g, n))
		return emit_dft_rt(cg, g, n, axis, len, irfft);
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
	ox_cg_snprintf(base, sizeof base, "((o * %lld + t) * %lld + i) * %lld", lin, I, C);
	char e[256];
	ox_cg_snprintf(e, sizeof e, "in0[%s]", base);
	ox_cg_snprintf(xr, sizeof xr, "%s", load(dt, e));
	ox_cg_snprintf(e, sizeof e, "in0[%s + 1]", base);
	ox_cg_snprintf(xi, sizeof xi, "%s", C == 2 ? load(dt, e) : "0.0");
	ox_cg_line(cg, 1, "for (size_t o = 0; o < %lld; o++) {", O);
	ox_cg_line(cg, 2, "for (size_t i = 0; i < %lld; i++) {", I);
	ox_cg_line(cg, 3, "for (size_t k = 0; k < %lld; k++) {", lout);
	char Ts[32], Ns[32], Nd[32];
	ox_cg_snprintf(Ts, sizeof Ts, "%lld", irfft ? (lin < N / 2 + 1 ? lin : N / 2 + 1) : (lin < N ? lin : N));
	ox_cg_snprintf(Ns, sizeof Ns, "%lld", N);
	ox_cg_snprintf(Nd, sizeof Nd, "%lld.0", N);
	ox_dft_sum sum = {.T = Ts, .N = Ns, .Nd = Nd, .k = "k", .xr = xr, .xi = xi, .wc = "wc[w]", .ws = "ws[w]",
			  .it = "size_t", .irfft = irfft, .inverse = inverse};
	dft_sum(cg, 4, &sum);
	if (irfft) {
		char d[64];
		ox_cg_snprintf(d, sizeof d, "re / %lld.0", N);
		ox_cg_line(cg, 4, "out0[(o * %lld + k) * %lld + i] = %s;", lout, I, store(dt, d));
	} else {
		ox_cg_line(cg, 4, "out0[((o * %lld + k) * %lld + i) * 2] = %s;", lout, I, store(dt, "re"));
		ox_cg_line(cg, 4, "out0[((o * %lld + k) * %lld + i) * 2 + 1] = %s;", lout, I, store(dt, "im"));
	}
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* STFT of run-time sizes, or whose frame step or length is read from
 * data: the frames computed when the program runs, as infer_stft does at
 * compile time */
static int emit_stft_rt(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int dt = x->dtype, onesided = (int)ox_attr_int(n, "onesided", 1);
	ox_dim L = x->shape.d[1], C = x->shape.d[2];
	int64_t top = L >= 0 ? L : ox_dim_hi(g, L); /* the frame length's most */
	if (w && ox_dim_hi(g, w->shape.d[0]) >= 0 && ox_dim_hi(g, w->shape.d[0]) < top)
		top = ox_dim_hi(g, w->shape.d[0]);
	const ox_tensor *fc = ox_in_const(g, n, 3);
	if (!w && fc && ox_tensor_get_i64(fc, 0) < top)
		top = ox_tensor_get_i64(fc, 0);
	if (top < 1)
		return ox_error(g, n, "the frame length has no bound");
	ox_cg_line(cg, 1, "/* STFT%s, sizes known when the program runs */", w ? ", windowed" : "");
	ox_cg_line(cg, 1, "const int64_t L = %s, C = %s, step = (int64_t)in1[0];", ox_cg_dim(cg, L), ox_cg_dim(cg, C));
	if (w)
		ox_cg_line(cg, 1, "const int64_t fl = %s;", ox_cg_dim(cg, w->shape.d[0]));
	else if (ox_in(g, n, 3))
		ox_cg_line(cg, 1, "const int64_t fl = (int64_t)in3[0];");
	else
		ox_cg_line(cg, 1, "const int64_t fl = L;");
	cg->fails_shape = 1;
	if (w && ox_in(g, n, 3)) {
		ox_cg_line(cg, 1, "if (in3[0] != fl)");
		ox_cg_line(cg, 2, "return 2; /* frame_length is not the window's */");
	}
	ox_cg_line(cg, 1, "if (step < 1 || fl < 1 || fl > L || fl > %lld)", (long long)top);
	ox_cg_line(cg, 2, "return 2; /* not a frame the signal has */");
	if (C < 0) {
		ox_cg_line(cg, 1, "if (C != 1 && C != 2)");
		ox_cg_line(cg, 2, "return 2; /* neither real nor complex */");
	}
	set_or_check(cg, g, n, y->shape.d[1], "(L - fl) / step + 1", "not the frames the compiler knows");
	set_or_check(cg, g, n, y->shape.d[2], onesided ? "fl / 2 + 1" : "fl", "not the bins the compiler knows");
	ox_cg_check_cap(cg, g, n, 0);
	ox_cg_line(cg, 1, "const size_t B = %s, F = (size_t)((L - fl) / step + 1), K = (size_t)%s, N = (size_t)fl;",
		   dimz(cg, x->shape.d[0]), onesided ? "(fl / 2 + 1)" : "fl");
	const char *wc, *ws;
	twiddles_rt(cg, top, &wc, &ws);
	char e[600], xr[600], xi[600], wv[600];
	const char *base = "((int64_t)b * L + (int64_t)f * step + (int64_t)t) * C";
	ox_cg_snprintf(e, sizeof e, "in0[%s]", base);
	ox_cg_snprintf(xr, sizeof xr, "%s", load(dt, e));
	ox_cg_snprintf(e, sizeof e, "in0[%s + 1]", base);
	if (C < 0)
		ox_cg_snprintf(xi, sizeof xi, "(C == 2 ? %s : 0.0)", load(dt, e));
	else
		ox_cg_snprintf(xi, sizeof xi, "%s", C == 2 ? load(dt, e) : "0.0");
	ox_cg_snprintf(wv, sizeof wv, "%s", w ? load(w->dtype, "in2[t]") : "1.0");
	ox_cg_line(cg, 1, "for (size_t b = 0; b < B; b++) {");
	ox_cg_line(cg, 2, "for (size_t f = 0; f < F; f++) {");
	ox_cg_line(cg, 3, "for (size_t k = 0; k < K; k++) {");
	dft_sum(cg, 4, &(ox_dft_sum){.T = "N", .N = "N", .Nd = "(double)N", .k = "k", .xr = xr, .xi = xi, .win = wv,
				     .wc = wc, .ws = ws, .it = "size_t"});
	ox_cg_line(cg, 4, "out0[((b * F + f) * K + k) * 2] = %s;", store(dt, "re"));
	ox_cg_line(cg, 4, "out0[((b * F + f) * K + k) * 2 + 1] = %s;", store(dt, "im"));
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
	if (!ox_in_const(g, n, 1) || (ox_in(g, n, 3) && !ox_in_const(g, n, 3)) || ox_node_rt(g, n))
		return emit_stft_rt(cg, g, n);
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
	ox_cg_snprintf(base, sizeof base, "(b * %lld + f * %lld + t) * %lld", L, S, C);
	ox_cg_snprintf(e, sizeof e, "in0[%s]", base);
	ox_cg_snprintf(xr, sizeof xr, "%s", load(dt, e));
	ox_cg_snprintf(e, sizeof e, "in0[%s + 1]", base);
	ox_cg_snprintf(xi, sizeof xi, "%s", C == 2 ? load(dt, e) : "0.0");
	ox_cg_snprintf(wv, sizeof wv, "%s", w ? load(w->dtype, "in2[t]") : "1.0");
	ox_cg_line(cg, 1, "for (size_t b = 0; b < %lld; b++) {", B);
	ox_cg_line(cg, 2, "for (size_t f = 0; f < %lld; f++) {", F);
	ox_cg_line(cg, 3, "for (size_t k = 0; k < %lld; k++) {", K);
	char Ns[32];
	ox_cg_snprintf(Ns, sizeof Ns, "%lld", FL);
	dft_sum(cg, 4, &(ox_dft_sum){.T = Ns, .N = Ns, .Nd = Ns, .k = "k", .xr = xr, .xi = xi, .win = wv,
				     .wc = "wc[w]", .ws = "ws[w]", .it = "size_t"});
	ox_cg_line(cg, 4, "out0[((b * %lld + f) * %lld + k) * 2] = %s;", F, K, store(dt, "re"));
	ox_cg_line(cg, 4, "out0[((b * %lld + f) * %lld + k) * 2 + 1] = %s;", F, K, store(dt, "im"));
	ox_cg_line(cg, 3, "}");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* ---------------- MelWeightMatrix ---------------- */

/* MelWeightMatrix from inputs read when the program runs: the arithmetic
 * of emit_mel below, in the generated code; the bin edges of mel band i
 * are computed where used (no table of num_mel_bins + 2) */
static int emit_mel_rt(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	int dt = y->dtype;
	char e[64];
	ox_cg_line(cg, 1, "/* MelWeightMatrix, computed when the program runs */");
	ox_cg_line(cg, 1, "const int64_t nmel = (int64_t)in0[0], dftl = (int64_t)in1[0], rate = (int64_t)in2[0];");
	ox_cg_line(cg, 1, "const float lo = (float)%s, hi = (float)%s;", ox_cg_load(ox_in(g, n, 3)->dtype, "in3[0]"),
		   ox_cg_load(ox_in(g, n, 4)->dtype, "in4[0]"));
	cg->fails_shape = 1;
	ox_cg_line(cg, 1, "if (nmel < 0 || dftl < 0 || rate <= 0)");
	ox_cg_line(cg, 2, "return 2; /* not sizes or a rate */");
	set_or_check(cg, g, n, y->shape.d[0], "dftl / 2 + 1", "not the spectrogram bins the compiler knows");
	set_or_check(cg, g, n, y->shape.d[1], "nmel", "not the mel bins the compiler knows");
	ox_cg_check_cap(cg, g, n, 0);
	ox_cg_line(cg, 1, "const int64_t nspec = dftl / 2 + 1;");
	ox_cg_line(cg, 1, "const float lomel = 2595.0f * log10f(1.0f + lo / 700.0f);");
	ox_cg_line(cg, 1, "const float himel = 2595.0f * log10f(1.0f + hi / 700.0f);");
	ox_cg_line(cg, 1, "const float step = (himel - lomel) / (float)(nmel + 2);");
	ox_cg_line(cg, 1, "memset(out0, 0, sizeof(*out0) * (size_t)(nspec * nmel));");
	ox_cg_line(cg, 1, "for (int64_t i = 0; i < nmel; i++) {");
	ox_cg_line(cg, 2, "int64_t fb[3];");
	ox_cg_line(cg, 2, "for (int j = 0; j < 3; j++) {");
	ox_cg_line(cg, 3, "double f = (double)(i + j) * (double)step + (double)lomel;");
	ox_cg_line(cg, 3, "f = 700.0 * (pow(10.0, f / 2595.0) - 1.0);");
	ox_cg_line(cg, 3, "const double b = floor((double)(dftl + 1) * f / (double)rate);");
	ox_cg_line(cg, 3, "if (!(b >= 0 && b <= (double)nspec))");
	ox_cg_line(cg, 4, "return 2; /* the mel bands fall outside the spectrogram bins */");
	ox_cg_line(cg, 3, "fb[j] = (int64_t)b;");
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "const int64_t l = fb[0], c = fb[1], h = fb[2];");
	ox_cg_line(cg, 2, "if (c >= nspec)");
	ox_cg_line(cg, 3, "return 2; /* the mel bands fall outside the spectrogram bins */");
	ox_cg_line(cg, 2, "if (c == l)");
	ox_cg_line(cg, 3, "out0[c * nmel + i] = %s;", store(dt, "1.0"));
	ox_cg_line(cg, 2, "else");
	ox_cg_line(cg, 3, "for (int64_t j = l; j <= c; j++)");
	ox_cg_snprintf(e, sizeof e, "(double)(j - l) / (double)(c - l)");
	ox_cg_line(cg, 4, "out0[j * nmel + i] = %s;", store(dt, e));
	ox_cg_line(cg, 2, "for (int64_t j = c; j < h; j++)");
	ox_cg_snprintf(e, sizeof e, "(double)(h - j) / (double)(h - c)");
	ox_cg_line(cg, 3, "out0[j * nmel + i] = %s;", store(dt, e));
	ox_cg_line(cg, 1, "}");
	return 0;
}

/* The reference's arithmetic, step by step: the mel edges in float (its
 * inputs are float32 scalars), the bin centers in double, floored to
 * integer FFT bins; then triangles rising from the left bin to the center
 * and falling to the right one. */
static int emit_mel(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	int dt = y->dtype;
	for (int k = 0; k < 5; k++)
		if (!ox_in_const(g, n, k))
			return emit_mel_rt(cg, g, n);
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
