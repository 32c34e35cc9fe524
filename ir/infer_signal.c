/* infer_signal.c: shape inference for linear algebra (Einsum, Det) and
 * signal processing (Hann/Hamming/BlackmanWindow, DFT, STFT,
 * MelWeightMatrix).
 *
 * ox_einsum_parse and ox_dft_params are the one place that reads an Einsum
 * equation and the DFT axis/length/mode rules; codegen/emit_signal.c calls
 * them too, so the layers cannot disagree. Every input that steers a shape
 * (window size, DFT axis and length, STFT frame step and length, all of
 * MelWeightMatrix's) must be a constant: ox_need_const says so otherwise.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

/* Einsum labels: ellipsis dims first (0..OX_MAX_RANK-1, so that they lead
 * an implicit output), then 'A'..'Z', then 'a'..'z' (ASCII order, numpy's
 * implicit output order). */
#define EIN_LETTER0 OX_MAX_RANK
#define EIN_NLABELS (OX_MAX_RANK + 52)

static int ein_letter(int c)
{
	if (c >= 'A' && c <= 'Z')
		return EIN_LETTER0 + (c - 'A');
	if (c >= 'a' && c <= 'z')
		return EIN_LETTER0 + 26 + (c - 'a');
	return -1;
}

/* Reads one term (an operand's or the output's subscripts) from s[0..len):
 * its letters' labels into l, and in *ell the count of letters before its
 * "..." (-1 if none). Returns the count of letters, or -1 if malformed. */
static int ein_term(const char *s, size_t len, int *l, int cap, int *ell)
{
	int k = 0;
	*ell = -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || *ell >= 0)
				return -1;
			*ell = k;
			i += 2;
			continue;
		}
		int c = ein_letter((unsigned char)s[i]);
		if (c < 0 || k >= cap)
			return -1;
		l[k++] = c;
	}
	return k;
}

/* Parses n's equation: lab[k][j] is the label of axis j of input k, olab
 * the output's labels (orank of them), size[label] its extent (constant
 * 1 only when every axis carrying it is 1; a size-1 axis broadcasts).
 * Returns 0, or ox_error. */
int ox_einsum_parse(ox_graph *g, const ox_node *n, int (*lab)[OX_MAX_RANK], int *olab, int *orank,
                    ox_dim *size)
{
	const char *eq0 = ox_attr_str(n, "equation", NULL);
	if (!eq0)
		return ox_error(g, n, "the equation attribute is missing");
	char eq[512];
	size_t m = 0;
	for (const char *p = eq0; *p; p++)
		if (*p != ' ' && *p != '\t') {
			if (m + 1 >= sizeof eq)
				return ox_error(g, n, "the equation is too long");
			eq[m++] = *p;
		}
	eq[m] = 0;
	const char *arrow = strstr(eq, "->");
	size_t lhs_len = arrow ? (size_t)(arrow - eq) : m;

	int count[EIN_NLABELS] = {0}, seen_in[EIN_NLABELS];
	int ellrank = 0, anyell = 0;
	int nterms = 0;
	const char *p = eq;
	int terms[OX_MAX_RANK * 8][2]; /* (letters, ellipsis position) per input */
	int tl[OX_MAX_RANK * 8][OX_MAX_RANK];
	for (int i = 0; i < EIN_NLABELS; i++)
		size[i] = 1, seen_in[i] = 0;
	while (1) {
		const char *e = memchr(p, ',', lhs_len - (size_t)(p - eq));
		size_t tlen = e ? (size_t)(e - p) : lhs_len - (size_t)(p - eq);
		if (nterms >= n->nin || nterms >= OX_MAX_RANK * 8)
			return ox_error(g, n, "equation \"%s\" has more terms than the %d inputs", eq0, n->nin);
		int ell;
		int k = ein_term(p, tlen, tl[nterms], OX_MAX_RANK, &ell);
		if (k < 0)
			return ox_error(g, n, "cannot parse term %d of equation \"%s\"", nterms, eq0);
		const ox_value *x = ox_in(g, n, nterms);
		int r = x->shape.rank;
		if ((ell < 0 && k != r) || (ell >= 0 && k > r))
			return ox_error(g, n, "term %d of \"%s\" has %d labels for a rank-%d input",
			                nterms, eq0, k, r);
		if (ell >= 0) {
			anyell = 1;
			if (r - k > ellrank)
				ellrank = r - k;
		}
		terms[nterms][0] = k;
		terms[nterms][1] = ell;
		nterms++;
		if (!e)
			break;
		p = e + 1;
	}
	if (nterms != n->nin)
		return ox_error(g, n, "equation \"%s\" has %d terms for %d inputs", eq0, nterms, n->nin);

	/* expand each input's labels, ellipsis dims right-aligned to ellrank */
	for (int t = 0; t < nterms; t++) {
		const ox_value *x = ox_in(g, n, t);
		int k = terms[t][0], ell = terms[t][1], r = x->shape.rank, ne = r - k, j = 0;
		for (int i = 0; i <= k; i++) {
			if (i == ell)
				for (int q = 0; q < ne; q++)
					lab[t][j++] = ellrank - ne + q;
			if (i < k)
				lab[t][j++] = tl[t][i];
		}
		int mine[EIN_NLABELS] = {0};
		for (j = 0; j < r; j++) {
			int l = lab[t][j];
			ox_dim d = x->shape.d[j];
			if (!mine[l])
				count[l]++;
			mine[l] = 1;
			if (d == 1)
				continue;
			if (!seen_in[l] || size[l] == 1) {
				size[l] = d;
				seen_in[l] = 1;
			} else if (d >= 0 && size[l] >= 0 && d != size[l]) {
				return ox_error(g, n, "label '%c' of \"%s\" has sizes %lld and %lld",
				                l >= EIN_LETTER0 + 26 ? 'a' + l - EIN_LETTER0 - 26
				                : l >= EIN_LETTER0 ? 'A' + l - EIN_LETTER0 : '.',
				                eq0, (long long)size[l], (long long)d);
			}
		}
	}

	*orank = 0;
	if (arrow) {
		int ol[OX_MAX_RANK], ell;
		int k = ein_term(arrow + 2, strlen(arrow + 2), ol, OX_MAX_RANK, &ell);
		if (k < 0 || k + (ell >= 0 ? ellrank : 0) > OX_MAX_RANK)
			return ox_error(g, n, "cannot parse the output of equation \"%s\"", eq0);
		int used[EIN_NLABELS] = {0};
		for (int i = 0; i <= k; i++) {
			if (i == ell)
				for (int q = 0; q < ellrank; q++)
					olab[(*orank)++] = q;
			if (i == k)
				break;
			if (!count[ol[i]] || used[ol[i]])
				return ox_error(g, n, "output label %d of \"%s\" is %s", i, eq0,
				                used[ol[i]] ? "repeated" : "in no input");
			used[ol[i]] = 1;
			olab[(*orank)++] = ol[i];
		}
		if (ell < 0 && anyell && ellrank > 0)
			for (int q = 0; q < ellrank; q++)
				if (size[q] != 1)
					return ox_error(g, n, "\"%s\": an ellipsis in the inputs needs one in the output",
					                eq0);
	} else {
		for (int q = 0; q < ellrank; q++)
			olab[(*orank)++] = q;
		for (int l = EIN_LETTER0; l < EIN_NLABELS; l++)
			if (count[l] == 1) {
				if (*orank >= OX_MAX_RANK)
					return ox_error(g, n, "the output of \"%s\" has too many dims", eq0);
				olab[(*orank)++] = l;
			}
	}
	return 0;
}

/* scalar integer constant input k (a 0-D or one-element tensor) */
int ox_signal_scalar(ox_graph *g, const ox_node *n, int k, const char *what, int64_t *v)
{
	const ox_value *x = ox_in(g, n, k);
	if (ox_shape_numel(&x->shape) != 1)
		return ox_error(g, n, "%s input '%s' must hold one value", what, x->name);
	if (ox_in_ints(g, n, k, v, 1) != 1)
		return ox_need_const(g, n, k, "%s input '%s' is not a constant", what, x->name);
	return 0;
}

/* DFT: the transformed axis (of the input, the complex dim being last),
 * the transform length, and whether it is a one-sided inverse (a real
 * output from a Hermitian half spectrum, like numpy's irfft). */
int ox_dft_params(ox_graph *g, const ox_node *n, int *axis, int64_t *len, int *irfft)
{
	const ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t a;
	if (n->opset >= 20) {
		a = -2;
		if (ox_in(g, n, 2) && ox_signal_scalar(g, n, 2, "axis", &a))
			return -1;
	} else {
		a = ox_attr_int(n, "axis", 1);
	}
	if (a < 0)
		a += r;
	if (r < 2 || a < 0 || a > r - 2)
		return ox_error(g, n, "axis %lld is out of range for a rank-%d input",
		                (long long)(n->opset >= 20 ? a : ox_attr_int(n, "axis", 1)), r);
	*axis = (int)a;
	*irfft = ox_attr_int(n, "inverse", 0) && ox_attr_int(n, "onesided", 0);
	int64_t lin = ox_dim_eval(g, x->shape.d[a]);
	if (ox_in(g, n, 1)) {
		if (ox_signal_scalar(g, n, 1, "dft_length", len))
			return -1;
		if (*len < 1)
			return ox_error(g, n, "dft_length %lld is not positive", (long long)*len);
	} else if (lin < 0) {
		return ox_error(g, n, "the length of axis %d is not known", *axis);
	} else {
		*len = *irfft ? 2 * (lin - 1) : lin;
		if (*len < 1)
			return ox_error(g, n, "the transform length %lld is not positive", (long long)*len);
	}
	return 0;
}

static int float_dtype(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16;
}

static int infer_einsum(ox_graph *g, ox_node *n)
{
	int lab[64][OX_MAX_RANK], olab[OX_MAX_RANK], orank;
	ox_dim size[EIN_NLABELS];
	if (n->nin > 64)
		return ox_error(g, n, "%d inputs are too many", n->nin);
	int dt = ox_in(g, n, 0)->dtype;
	for (int k = 0; k < n->nin; k++) {
		if (!ox_in(g, n, k))
			return ox_error(g, n, "input %d is omitted", k);
		if (ox_in(g, n, k)->dtype != dt)
			return ox_error(g, n, "inputs have different types");
	}
	if (!float_dtype(dt) && !ox_dtype_is_int(dt))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(dt));
	if (ox_einsum_parse(g, n, lab, olab, &orank, size))
		return -1;
	ox_shape s = {orank, {0}};
	for (int i = 0; i < orank; i++)
		s.d[i] = size[olab[i]];
	ox_set_out(g, n, 0, dt, &s);
	return 0;
}

static int infer_det(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	if (!float_dtype(x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	if (r < 2)
		return ox_error(g, n, "the input has rank %d, expected at least 2", r);
	int64_t a = ox_dim_eval(g, x->shape.d[r - 2]), b = ox_dim_eval(g, x->shape.d[r - 1]);
	if (a >= 0 && b >= 0 && a != b)
		return ox_error(g, n, "the matrices are %lldx%lld, not square", (long long)a, (long long)b);
	ox_shape s = {r - 2, {0}};
	for (int i = 0; i < r - 2; i++)
		s.d[i] = x->shape.d[i];
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

static int out_dtype_ok(int dt)
{
	return float_dtype(dt) || ox_dtype_is_int(dt);
}

static int infer_window(ox_graph *g, ox_node *n)
{
	int64_t size;
	if (!ox_dtype_is_int(ox_in(g, n, 0)->dtype))
		return ox_error(g, n, "size must be an integer");
	if (ox_signal_scalar(g, n, 0, "size", &size))
		return -1;
	if (size < 0)
		return ox_error(g, n, "size %lld is negative", (long long)size);
	int dt = (int)ox_attr_int(n, "output_datatype", OX_F32);
	if (!out_dtype_ok(dt))
		return ox_error(g, n, "output_datatype %d is not supported", dt);
	ox_shape s = {1, {size}};
	ox_set_out(g, n, 0, dt, &s);
	return 0;
}

static int infer_dft(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank, axis, irfft;
	int64_t len;
	if (!float_dtype(x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	int64_t c = r ? ox_dim_eval(g, x->shape.d[r - 1]) : -1;
	if (c != 1 && c != 2)
		return ox_error(g, n, "the last dim must be 1 (real) or 2 (complex)");
	if (ox_dft_params(g, n, &axis, &len, &irfft))
		return -1;
	ox_shape s = x->shape;
	s.d[axis] = !irfft && ox_attr_int(n, "onesided", 0) ? len / 2 + 1 : len;
	s.d[r - 1] = irfft ? 1 : 2;
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

/* STFT: shared with the emitter through the output shape, which carries the
 * frame count and bins; frame_length comes from the input, else the window,
 * else the whole signal. */
static int infer_stft(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 2);
	if (!float_dtype(x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	if (x->shape.rank != 3)
		return ox_error(g, n, "the signal has rank %d, expected 3", x->shape.rank);
	int64_t c = ox_dim_eval(g, x->shape.d[2]), len = ox_dim_eval(g, x->shape.d[1]);
	if (c != 1 && c != 2)
		return ox_error(g, n, "the last dim must be 1 (real) or 2 (complex)");
	if (len < 0)
		return ox_error(g, n, "the signal length is not known");
	int64_t step, fl = -1;
	if (ox_signal_scalar(g, n, 1, "frame_step", &step))
		return -1;
	if (step < 1)
		return ox_error(g, n, "frame_step %lld is not positive", (long long)step);
	if (ox_in(g, n, 3) && ox_signal_scalar(g, n, 3, "frame_length", &fl))
		return -1;
	if (w) {
		int64_t wl = w->shape.rank == 1 ? ox_dim_eval(g, w->shape.d[0]) : -1;
		if (wl < 0)
			return ox_error(g, n, "the window must be 1-D with a known length");
		if (fl >= 0 && fl != wl)
			return ox_error(g, n, "frame_length %lld differs from the window's %lld",
			                (long long)fl, (long long)wl);
		fl = wl;
	}
	if (fl < 0)
		fl = len;
	if (fl < 1 || fl > len)
		return ox_error(g, n, "frame_length %lld does not fit a signal of %lld", (long long)fl,
		                (long long)len);
	int onesided = (int)ox_attr_int(n, "onesided", 1);
	ox_shape s = {4, {x->shape.d[0], (len - fl) / step + 1, onesided ? fl / 2 + 1 : fl, 2}};
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

static int infer_mel(ox_graph *g, ox_node *n)
{
	static const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
	                              "lower_edge_hertz", "upper_edge_hertz"};
	for (int k = 0; k < 5; k++) {
		const ox_value *v = ox_in(g, n, k);
		if (ox_shape_numel(&v->shape) != 1)
			return ox_error(g, n, "%s must hold one value", names[k]);
		if (!ox_in_const(g, n, k))
			return ox_need_const(g, n, k, "%s input '%s' is not a constant", names[k], v->name);
	}
	int64_t bins = ox_tensor_get_i64(ox_in_const(g, n, 0), 0);
	int64_t dftl = ox_tensor_get_i64(ox_in_const(g, n, 1), 0);
	if (bins < 0 || dftl < 0)
		return ox_error(g, n, "num_mel_bins and dft_length must not be negative");
	int dt = (int)ox_attr_int(n, "output_datatype", OX_F32);
	if (!out_dtype_ok(dt))
		return ox_error(g, n, "output_datatype %d is not supported", dt);
	ox_shape s = {2, {dftl / 2 + 1, bins}};
	ox_set_out(g, n, 0, dt, &s);
	return 0;
}

int infer_signal(ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_Einsum: return infer_einsum(g, n);
	case OX_OP_Det: return infer_det(g, n);
	case OX_OP_HannWindow:
	case OX_OP_HammingWindow:
	case OX_OP_BlackmanWindow: return infer_window(g, n);
	case OX_OP_DFT: return infer_dft(g, n);
	case OX_OP_STFT: return infer_stft(g, n);
	case OX_OP_MelWeightMatrix: return infer_mel(g, n);
	}
	return ox_error(g, n, "not a signal op");
}
