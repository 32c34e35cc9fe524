/* norm_gridsample.c: GridSample for 1 to 3 spatial axes, following the
 * ONNX reference: grid values (last grid axis, innermost input axis
 * first) are denormalized (align corners or not), rounded half to even
 * for nearest (the test data does so in 3-D too, unlike std::round),
 * moved inside by border or reflection padding, then each axis gets 1, 2
 * or 4 taps (nearest, linear, cubic with a = -0.75) whose indices are
 * padded again (zeros: the tap reads 0). The weight of a tap combination
 * is the product over axes. mode: 0 nearest, 1 linear, 2 cubic; pad: 0
 * zeros, 1 border, 2 reflection. A coordinate that is NaN or more than
 * 1e9 outside the input is taken as 1e9 outside (NaN on the low side), so
 * every index conversion below is defined; it reads the padding.
 * Needs ox_ld_$S / ox_st_$S.
 */
OX_STATIC double ox_gs_reflect_$S(double v, double lo, double hi)
{
	const double rng = hi - lo;
	if (rng <= 0)
		return lo;
	if (v < lo) {
		const double dx = lo - v;
		const long k = (long)(dx / rng);
		const double r = dx - (double)k * rng;
		return k % 2 == 0 ? lo + r : hi - r;
	}
	if (v > hi) {
		const double dx = v - hi;
		const long k = (long)(dx / rng);
		const double r = dx - (double)k * rng;
		return k % 2 == 0 ? hi - r : lo + r;
	}
	return v;
}

/* output position o of image n, every channel (the CUDA target's kernel:
 * a thread each, codegen/cuda/cuda_nn.c) */
OX_STATIC void ox_gridsample_at_$S(const $T *restrict x, const $T *restrict grid, $T *restrict y, long n, long o,
				long C, int nsp, const long *in, long nout, int mode, int pad, int align)
{
	long isz = 1, st[3];
	for (int a = nsp - 1; a >= 0; a--)
		st[a] = isz, isz *= in[a];
	const $T *gp = grid + (n * nout + o) * nsp;
	long idx[3][4];
	double wt[3][4];
	int nt[3];
	for (int a = 0; a < nsp; a++) {
		const double len = (double)in[a], v = ox_ld_$S(gp[nsp - 1 - a]);
		const double lo = align ? 0 : -0.5, hi = align ? len - 1 : len - 0.5;
		/* the reference keeps the denormalized coordinate in the data type */
		double c = ($C)(align ? (v + 1) / 2.0 * (len - 1) : ((v + 1) * len - 1) / 2.0);
		if (!(c >= -1e9 && c <= len + 1e9))
			c = c > 0 ? len + 1e9 : -1e9;
		if (mode == 0)
			c = nearbyint(c);
		if (c < lo || c > hi) {
			if (pad == 1)
				c = c < 0 ? 0 : c > len - 1 ? len - 1 : c;
			else if (pad == 2)
				c = ox_gs_reflect_$S(c, lo, hi);
		}
		long i0;
		if (mode == 0) {
			nt[a] = 1, idx[a][0] = (long)c, wt[a][0] = 1;
		} else if (mode == 1) {
			i0 = (long)floor(c);
			const double t = c - (double)i0;
			nt[a] = 2;
			idx[a][0] = i0, wt[a][0] = 1 - t;
			idx[a][1] = i0 + 1, wt[a][1] = t;
		} else {
			i0 = (long)floor(c);
			const double t = c - (double)i0, A = -0.75, t1 = t + 1, u = 1 - t, u1 = 2 - t;
			nt[a] = 4;
			idx[a][0] = i0 - 1, wt[a][0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;
			idx[a][1] = i0, wt[a][1] = ((A + 2) * t - (A + 3)) * t * t + 1;
			idx[a][2] = i0 + 1, wt[a][2] = ((A + 2) * u - (A + 3)) * u * u + 1;
			idx[a][3] = i0 + 2, wt[a][3] = ((A * u1 - 5 * A) * u1 + 8 * A) * u1 - 4 * A;
		}
		/* pad the tap indices: -1 reads zero */
		for (int t = 0; t < nt[a]; t++) {
			long i = idx[a][t];
			if (i >= 0 && i < in[a])
				continue;
			if (pad == 0)
				i = -1;
			else if (pad == 1)
				i = i < 0 ? 0 : in[a] - 1;
			else
				i = (long)ox_gs_reflect_$S((double)i, lo, hi);
			idx[a][t] = i;
		}
	}
	for (int a = nsp; a < 3; a++)
		nt[a] = 1, idx[a][0] = 0, wt[a][0] = 1, st[a] = 0;
	for (long c = 0; c < C; c++) {
		const $T *xc = x + (n * C + c) * isz;
		double acc = 0;
		for (int t0 = 0; t0 < nt[0]; t0++)
		for (int t1 = 0; t1 < nt[1]; t1++)
		for (int t2 = 0; t2 < nt[2]; t2++) {
			if (idx[0][t0] < 0 || idx[1][t1] < 0 || idx[2][t2] < 0)
				continue;
			const double w = wt[0][t0] * wt[1][t1] * wt[2][t2];
			acc += w * ox_ld_$S(xc[idx[0][t0] * st[0] + idx[1][t1] * st[1] + idx[2][t2] * st[2]]);
		}
		y[(n * C + c) * nout + o] = ox_st_$S(($C)acc);
	}
}

OX_STATIC void ox_gridsample_$S(const $T *restrict x, const $T *restrict grid, $T *restrict y, long N, long C,
			     int nsp, const long *in, long nout, int mode, int pad, int align)
{
	for (long n = 0; n < N; n++)
		for (long o = 0; o < nout; o++)
			ox_gridsample_at_$S(x, grid, y, n, o, C, nsp, in, nout, mode, pad, align);
}
