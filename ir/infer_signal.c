/* infer_signal.c: shape inference for linear algebra (Einsum, Det) and
 * signal processing (Hann/Hamming/BlackmanWindow, DFT, STFT,
 * MelWeightMatrix).
 *
 * ox_einsum_parse and ox_dft_params are the one place that reads an Einsum
 * equation and the DFT axis/length/mode rules; codegen/c/emit_signal.c calls
 * them too, so the layers cannot disagree. Dims may be run-time dims
 * (docs/dynamic.md). Inputs that steer a shape (window size, DFT axis and
 * length, STFT frame step and length, MelWeightMatrix's sizes) are read
 * with ox_in_svals: what is known at compile time gives dims, the rest
 * data dims the node computes when it runs (bounded by the signal's length
 * where the op implies it, else by the user: --max, --max-elems); a DFT
 * axis read then makes every output dim it may touch a data dim. Where a
 * run-time dim must equal another or a constant, the inference accepts it
 * when its range allows and codegen/c/emit_signal.c checks it when the
 * program runs.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

/* a dim's most (its value when constant), -1 when unbounded */
static int64_t top(ox_graph *g, ox_dim d)
{
	return d >= 0 ? d : ox_dim_hi(g, d);
}

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
			} else if (!ox_dim_may_equal(g, d, size[l])) {
				return ox_error(g, n, "label '%c' of \"%s\" has sizes %lld and %lld",
				                l >= EIN_LETTER0 + 26 ? 'a' + l - EIN_LETTER0 - 26
				                : l >= EIN_LETTER0 ? 'A' + l - EIN_LETTER0 : '.',
				                eq0, (long long)ox_dim_hi(g, size[l]), (long long)ox_dim_hi(g, d));
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

/* Scalar integer input k that steers a shape (a 0-D or one-element
 * tensor): a constant, a dim, or unknown (read when the program runs). */
static int scalar_sv(ox_graph *g, const ox_node *n, int k, const char *what, ox_sv *v)
{
	const ox_value *x = ox_in(g, n, k);
	if (!ox_dtype_is_int(x->dtype))
		return ox_error(g, n, "%s input '%s' must be an integer", what, x->name);
	if (ox_shape_numel(&x->shape) != 1)
		return ox_error(g, n, "%s input '%s' must hold one value", what, x->name);
	if (ox_in_svals(g, n, k, v, 1) != 1)
		*v = (ox_sv){OX_SV_UNKNOWN, 0, 0};
	return 0;
}

/* DFT: the transformed axis of the input (the complex dim being last), -1
 * when it is read when the program runs; the transform length, a dim (a
 * constant, the axis' own, or OX_DIM_DATA_LEN when read from data); and
 * whether it is a one-sided inverse (a real output from a Hermitian half
 * spectrum, like numpy's irfft). */
int ox_dft_params(ox_graph *g, const ox_node *n, int *axis, ox_dim *len, int *irfft)
{
	const ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	int64_t a;
	*axis = -1;
	*irfft = ox_attr_int(n, "inverse", 0) && ox_attr_int(n, "onesided", 0);
	if (r < 2)
		return ox_error(g, n, "the input has rank %d, expected at least 2", r);
	if (n->opset >= 20) {
		a = -2;
		ox_sv v;
		if (ox_in(g, n, 2)) {
			if (scalar_sv(g, n, 2, "axis", &v))
				return -1;
			if (v.kind == OX_SV_CONST)
				a = v.c;
			else
				a = INT64_MIN; /* read when the program runs */
		}
	} else {
		a = ox_attr_int(n, "axis", 1);
	}
	if (a != INT64_MIN) {
		int64_t a0 = a;
		if (a < 0)
			a += r;
		if (a < 0 || a > r - 2)
			return ox_error(g, n, "axis %lld is out of range for a rank-%d input", (long long)a0, r);
		*axis = (int)a;
	}
	if (ox_in(g, n, 1)) {
		ox_sv v;
		if (scalar_sv(g, n, 1, "dft_length", &v))
			return -1;
		if (v.kind == OX_SV_CONST && v.c < 1)
			return ox_error(g, n, "dft_length %lld is not positive", (long long)v.c);
		*len = v.kind == OX_SV_CONST ? v.c : v.kind == OX_SV_DIM ? v.d : OX_DIM_DATA_LEN;
		return 0;
	}
	if (*axis < 0) {
		*len = OX_DIM_AXIS_LEN;
		return 0;
	}
	ox_dim lin = x->shape.d[*axis];
	if (lin >= 0) {
		*len = *irfft ? 2 * (lin - 1) : lin;
		if (*len < 1)
			return ox_error(g, n, "the transform length %lld is not positive", (long long)*len);
	} else {
		int64_t lo, hi;
		*len = *irfft ? ox_dim_mul(g, ox_dim_sub(g, lin, 1), 2) : lin;
		/* a length that may be positive: the emitter checks it */
		if (!ox_dim_range(g, *len, &lo, &hi) && hi >= 0 && hi < 1)
			return ox_error(g, n, "the transform length is not positive for any input in the ranges given");
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
	if (!ox_dim_may_equal(g, x->shape.d[r - 2], x->shape.d[r - 1])) {
		char a[64], b[64];
		ox_dim_str(g, x->shape.d[r - 2], a, sizeof a);
		ox_dim_str(g, x->shape.d[r - 1], b, sizeof b);
		return ox_error(g, n, "the matrices are %sx%s, not square", a, b);
	}
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

/* the size read when the program runs is a data dim, no bound from the op */
static int infer_window(ox_graph *g, ox_node *n)
{
	ox_sv size;
	if (!ox_dtype_is_int(ox_in(g, n, 0)->dtype))
		return ox_error(g, n, "size must be an integer");
	if (scalar_sv(g, n, 0, "size", &size))
		return -1;
	if (size.kind == OX_SV_CONST && size.c < 0)
		return ox_error(g, n, "size %lld is negative", (long long)size.c);
	int dt = (int)ox_attr_int(n, "output_datatype", OX_F32);
	if (!out_dtype_ok(dt))
		return ox_error(g, n, "output_datatype %d is not supported", dt);
	ox_shape s = {1, {size.kind == OX_SV_CONST ? size.c : size.kind == OX_SV_DIM ? size.d
								  : ox_dim_data(g, n->out[0], 0, -1)}};
	ox_set_out(g, n, 0, dt, &s);
	return 0;
}

/* The output: the input's shape with the transformed axis of the output
 * length (len, or len / 2 + 1 one-sided) and a last dim of 2 (1 for a
 * one-sided inverse). A length read from data makes that axis a data dim
 * (no bound from the op); an axis read from data makes every dim it may
 * be a data dim, at most the larger of what it is either way (unbounded
 * with a length read from data), except where both are the same (a
 * two-sided transform of the axis' own length keeps the shape). */
static int infer_dft(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank, axis, irfft;
	ox_dim len;
	if (!float_dtype(x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	ox_dim c = r ? x->shape.d[r - 1] : 0;
	if (!ox_dim_may_equal(g, c, 1) && !ox_dim_may_equal(g, c, 2))
		return ox_error(g, n, "the last dim must be 1 (real) or 2 (complex)");
	if (ox_dft_params(g, n, &axis, &len, &irfft))
		return -1;
	int half = !irfft && ox_attr_int(n, "onesided", 0);
	ox_shape s = x->shape;
	s.d[r - 1] = irfft ? 1 : 2;
	if (axis >= 0) {
		if (len == OX_DIM_DATA_LEN)
			s.d[axis] = ox_dim_data(g, n->out[0], axis, -1);
		else
			s.d[axis] = half ? ox_dim_add(g, ox_dim_div(g, len, 2), 1) : len;
	} else if (len != OX_DIM_AXIS_LEN || half || irfft) {
		for (int i = 0; i < r - 1; i++) {
			/* the most the length can give: the axis' own, or the length's */
			int64_t t = top(g, x->shape.d[i]), l = -1;
			if (len == OX_DIM_AXIS_LEN)
				l = t < 0 ? -1 : irfft ? 2 * (t > 1 ? t - 1 : 0) : t;
			else if (len != OX_DIM_DATA_LEN)
				l = top(g, len);
			if (l >= 0 && half)
				l = l / 2 + 1;
			s.d[i] = ox_dim_data(g, n->out[0], i, t < 0 || l < 0 ? -1 : t > l ? t : l);
		}
	}
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

/* STFT: shared with the emitter through the output shape, which carries
 * the frame count and bins; frame_length comes from the input, else the
 * window, else the whole signal. A frame step or length read from data
 * makes the frame count (and the bins, for the length) data dims, at most
 * the signal's length. */
static int infer_stft(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 2);
	if (!float_dtype(x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	if (x->shape.rank != 3)
		return ox_error(g, n, "the signal has rank %d, expected 3", x->shape.rank);
	ox_dim c = x->shape.d[2], len = x->shape.d[1];
	if (!ox_dim_may_equal(g, c, 1) && !ox_dim_may_equal(g, c, 2))
		return ox_error(g, n, "the last dim must be 1 (real) or 2 (complex)");
	int64_t ltop = top(g, len), lo, hi;
	if (ltop < 0)
		return ox_error(g, n, "the signal length is not known");
	ox_sv step, fl = {OX_SV_UNKNOWN, 0, 0};
	int hasfl = 0;
	if (scalar_sv(g, n, 1, "frame_step", &step))
		return -1;
	if (step.kind == OX_SV_CONST && step.c < 1)
		return ox_error(g, n, "frame_step %lld is not positive", (long long)step.c);
	if (step.kind == OX_SV_DIM && (ox_dim_range(g, step.d, &lo, &hi) || lo < 1))
		step.kind = OX_SV_UNKNOWN; /* checked when the program runs */
	if (ox_in(g, n, 3)) {
		if (scalar_sv(g, n, 3, "frame_length", &fl))
			return -1;
		hasfl = 1;
	}
	if (w) {
		if (w->shape.rank != 1)
			return ox_error(g, n, "the window must be 1-D");
		ox_dim wl = w->shape.d[0];
		if ((fl.kind == OX_SV_CONST && !ox_dim_may_equal(g, fl.c, wl)) ||
		    (fl.kind == OX_SV_DIM && !ox_dim_may_equal(g, fl.d, wl)))
			return ox_error(g, n, "frame_length differs from the window's length");
		/* the window's length (the emitter checks a frame_length against it) */
		fl = wl >= 0 ? (ox_sv){OX_SV_CONST, wl, 0} : (ox_sv){OX_SV_DIM, 0, wl};
		hasfl = 1;
	}
	if (!hasfl)
		fl = len >= 0 ? (ox_sv){OX_SV_CONST, len, 0} : (ox_sv){OX_SV_DIM, 0, len};
	if (fl.kind == OX_SV_CONST && (fl.c < 1 || (len >= 0 && fl.c > len)))
		return ox_error(g, n, "frame_length %lld does not fit a signal of %lld", (long long)fl.c,
		                (long long)ltop);
	ox_dim F, K, fld = fl.kind == OX_SV_CONST ? fl.c : fl.d;
	int onesided = (int)ox_attr_int(n, "onesided", 1);
	/* frames (len - fl) / step + 1 where both are known and fit */
	int known = fl.kind != OX_SV_UNKNOWN && step.kind != OX_SV_UNKNOWN;
	ox_dim room = known ? ox_dim_sub(g, len, fld) : 0;
	if (known && room < 0 && (ox_dim_range(g, room, &lo, &hi) || lo < 0))
		known = 0; /* the frame may not fit: checked when the program runs */
	if (known)
		F = ox_dim_add(g, ox_dim_div(g, room, step.kind == OX_SV_CONST ? step.c : step.d), 1);
	else
		F = ox_dim_data(g, n->out[0], 1, ltop);
	if (fl.kind != OX_SV_UNKNOWN)
		K = onesided ? ox_dim_add(g, ox_dim_div(g, fld, 2), 1) : fld;
	else
		K = ox_dim_data(g, n->out[0], 2, ltop);
	ox_shape s = {4, {x->shape.d[0], F, K, 2}};
	ox_set_out(g, n, 0, x->dtype, &s);
	return 0;
}

/* [dft_length / 2 + 1, num_mel_bins]: data dims (no bound from the op)
 * where read when the program runs; every input may be */
static int infer_mel(ox_graph *g, ox_node *n)
{
	static const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
	                              "lower_edge_hertz", "upper_edge_hertz"};
	for (int k = 0; k < 5; k++) {
		const ox_value *v = ox_in(g, n, k);
		if (ox_shape_numel(&v->shape) != 1)
			return ox_error(g, n, "%s must hold one value", names[k]);
		if (k < 3 && !ox_dtype_is_int(v->dtype))
			return ox_error(g, n, "%s must be an integer", names[k]);
		if (k >= 3 && !ox_dtype_is_float(v->dtype) && !ox_dtype_is_int(v->dtype))
			return ox_error(g, n, "%s must be a number", names[k]);
	}
	ox_sv bins, dftl;
	if (scalar_sv(g, n, 0, names[0], &bins) || scalar_sv(g, n, 1, names[1], &dftl))
		return -1;
	if ((bins.kind == OX_SV_CONST && bins.c < 0) || (dftl.kind == OX_SV_CONST && dftl.c < 0))
		return ox_error(g, n, "num_mel_bins and dft_length must not be negative");
	int dt = (int)ox_attr_int(n, "output_datatype", OX_F32);
	if (!out_dtype_ok(dt))
		return ox_error(g, n, "output_datatype %d is not supported", dt);
	ox_shape s = {2, {0}};
	if (dftl.kind == OX_SV_CONST)
		s.d[0] = dftl.c / 2 + 1;
	else if (dftl.kind == OX_SV_DIM)
		s.d[0] = ox_dim_add(g, ox_dim_div(g, dftl.d, 2), 1);
	else
		s.d[0] = ox_dim_data(g, n->out[0], 0, -1);
	s.d[1] = bins.kind == OX_SV_CONST ? bins.c : bins.kind == OX_SV_DIM ? bins.d : ox_dim_data(g, n->out[0], 1, -1);
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
