/* deform_conv.c: 2-D deformable convolution (DeformConv) as in the ONNX
 * reference: output (n, m, oh, ow) sums, over the input channels of m's
 * group and the kernel taps (kh, kw), w * mask * X sampled bilinearly at
 * (oh*SH - PH + kh*DH + dy, ow*SW - PW + kw*DW + dx), where (dy, dx) come
 * from the offset tensor laid out as (N, OG, KH, KW, 2, OH, OW) and mask
 * as (N, OG, KH, KW, OH, OW); input channel c uses offset group
 * c / (C / OG). Sample corners outside the input read 0. Sums are kept in
 * double. Needs ox_ld_$S / ox_st_$S.
 */
OX_STATIC double ox_deform_sample_$S(const $T *xc, long H, long W, double py, double px)
{
	if (!(py > -1 && py < (double)H && px > -1 && px < (double)W)) /* NaN too */
		return 0;
	const double fy = floor(py), fx = floor(px);
	const long y0 = (long)fy, x0 = (long)fx;
	const double ly = py - fy, lx = px - fx;
	double v = 0;
	for (int a = 0; a < 2; a++)
	for (int b = 0; b < 2; b++) {
		const long yy = y0 + a, xx = x0 + b;
		if (yy < 0 || yy >= H || xx < 0 || xx >= W)
			continue;
		v += (a ? ly : 1 - ly) * (b ? lx : 1 - lx) * (double)ox_ld_$S(xc[yy * W + xx]);
	}
	return v;
}

OX_STATIC void ox_deform_conv_$S(const $T *x, const $T *w, const $T *off, const $T *b, const $T *mask, $T *y,
			      long N, long C, long H, long W, long M, long G, long OG, long KH, long KW,
			      long OH, long OW, long SH, long SW, long PH, long PW, long DH, long DW)
{
	const long Cg = C / G, Mg = M / G, Cog = C / OG, osz = OH * OW, ksz = KH * KW;
	for (long n = 0; n < N; n++)
	for (long m = 0; m < M; m++)
	for (long oh = 0; oh < OH; oh++)
	for (long ow = 0; ow < OW; ow++) {
		double acc = b ? (double)ox_ld_$S(b[m]) : 0;
		for (long c = 0; c < Cg; c++) {
			const long ci = m / Mg * Cg + c, og = ci / Cog;
			const $T *xc = x + (n * C + ci) * H * W;
			const $T *wp = w + (m * Cg + c) * ksz;
			for (long kh = 0; kh < KH; kh++)
			for (long kw = 0; kw < KW; kw++) {
				const long k = kh * KW + kw;
				const long o = ((n * OG + og) * ksz + k) * 2 * osz + oh * OW + ow;
				const double py = (double)(oh * SH - PH + kh * DH) + (double)ox_ld_$S(off[o]);
				const double px = (double)(ow * SW - PW + kw * DW) + (double)ox_ld_$S(off[o + osz]);
				double v = ox_deform_sample_$S(xc, H, W, py, px);
				if (mask)
					v *= (double)ox_ld_$S(mask[((n * OG + og) * ksz + k) * osz + oh * OW + ow]);
				acc += (double)ox_ld_$S(wp[k]) * v;
			}
		}
		y[(n * M + m) * osz + oh * OW + ow] = ox_st_$S(($C)acc);
	}
}
