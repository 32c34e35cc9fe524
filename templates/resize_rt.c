/* resize_rt.c: a Resize whose sizes or scales are known only when the
 * program runs (codegen/c/emit_nn.c, emit_resize_rt): its output sizes and
 * per-axis scales from the scales or sizes read, as the ONNX reference
 * computes them, and the tap tables of templates/resize_taps.c filled into
 * the node's scratch memory for the gather kernels of templates/resize.c
 * and templates/resize_nearest.c (the constant case's). Needs
 * templates/resize_taps.c.
 */

/* Output dims od[] and scales sc[] of a rank-r input of dims in[]: the
 * naxes values v[] (for axes[]) are scales, out = floor(in * s) with s
 * read as float32, or with sizes the target sizes fitted by
 * keep_aspect_ratio_policy (0 stretch, 1 not_larger, 2 not_smaller).
 * 0, or 2 when a scale is not positive or too large, a size below 1 (or of
 * an empty axis), or an axis comes out empty from its scale. */
OX_STATIC int ox_rz_shape(int r, const long *in, int naxes, const int *axes, int sizes, const double *v, int policy,
		       long *od, double *sc)
{
	for (int a = 0; a < r; a++)
		od[a] = in[a], sc[a] = 1;
	if (!sizes) {
		for (int i = 0; i < naxes; i++) {
			const int a = axes[i];
			const double s = (double)(float)v[i];
			if (!(s > 0) || !(s * (double)(in[a] < 1 ? 1 : in[a]) < 0x1p62))
				return 2;
			sc[a] = s;
			od[a] = (long)floor((double)in[a] * s);
			if (od[a] == 0)
				return 2;
		}
		return 0;
	}
	for (int i = 0; i < naxes; i++)
		if (!(v[i] >= 1 && v[i] < 0x1p62) || in[axes[i]] < 1)
			return 2;
	if (policy == 0) {
		for (int i = 0; i < naxes; i++) {
			const int a = axes[i];
			od[a] = (long)v[i];
			sc[a] = v[i] / (double)in[a];
		}
		return 0;
	}
	double s = policy == 1 ? INFINITY : 0;
	for (int i = 0; i < naxes; i++) {
		const double t = v[i] / (double)in[axes[i]];
		s = policy == 1 ? fmin(s, t) : fmax(s, t);
	}
	for (int i = 0; i < naxes; i++) {
		const int a = axes[i];
		sc[a] = s;
		od[a] = (long)(s * (double)in[a] + 0.5);
	}
	return 0;
}

/* Count (off NULL: the most taps an output has, 1 for nearest; -1 when
 * the footprint is too wide) or fill the taps of one axis, maxn per
 * output, zero weights past an output's own. */
OX_STATIC int ox_rz_axis(const ox_rz_opts *ro, long in, long out, double scale, double r0, double r1, long stride,
		      long *off, float *w, int maxn)
{
	if (out == 0)
		return 1;
	if (ox_rz_cap(ro, scale) < 0)
		return -1;
	int most = 1;
	for (long o = 0; o < out; o++) {
		if (!off) {
			const int k = ox_rz_taps(ro, in, out, scale, r0, r1, o, stride, 0, 0, 0);
			if (ro->mode && k > most)
				most = k;
			continue;
		}
		long *ot = off + o * maxn;
		float *wt = w + o * maxn;
		for (int t = 0; t < maxn; t++)
			ot[t] = 0, wt[t] = 0;
		ox_rz_taps(ro, in, out, scale, r0, r1, o, stride, ot, wt, maxn);
	}
	return most;
}

/* The tables of every axis into scratch (cap bytes): off[a] and wt[a]
 * with nt[a] taps per output, as the kernels read them. 0, or 2 when they
 * do not fit or a footprint is too wide. */
OX_STATIC int ox_rz_tables(const ox_rz_opts *ro, int r, const long *in, const long *od, const double *sc,
			const double *roi, void *scratch, long cap, int *nt, const long **off, const float **wt)
{
	const long entry = (long)(sizeof(long) + sizeof(float));
	long stride = 1, total = 0;
	for (int a = r - 1; a >= 0; a--) {
		nt[a] = ox_rz_axis(ro, in[a], od[a], sc[a], roi[a], roi[a + r], stride, 0, 0, 0);
		if (nt[a] < 0 || od[a] > (cap / entry - total) / nt[a])
			return 2;
		total += od[a] * nt[a];
		stride *= in[a];
	}
	long *op = (long *)scratch;
	float *wp = (float *)(op + total);
	stride = 1;
	for (int a = r - 1; a >= 0; a--) {
		ox_rz_axis(ro, in[a], od[a], sc[a], roi[a], roi[a + r], stride, op, wp, nt[a]);
		off[a] = op, wt[a] = wp;
		op += od[a] * nt[a], wp += od[a] * nt[a];
		stride *= in[a];
	}
	return 0;
}
