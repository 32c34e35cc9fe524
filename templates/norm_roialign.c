/* norm_roialign.c: RoiAlign, as the ONNX reference computes it: each of
 * the PH x PW bins of a ROI averages (or, mode max, takes the largest of)
 * gh x gw bilinear samples, gh/gw = sampling_ratio or ceil(bin size);
 * a sample more than one pixel outside the map counts as 0. half: the
 * half_pixel transform (shift by -0.5, no 1x1 minimum ROI size). In max
 * mode each sample is the largest weighted corner, as the reference does.
 * Coordinates in double; NaN ones read 0. The adaptive sample counts are
 * at most 1024 per axis (a NaN size counts 1), so a bad ROI cannot make
 * the loops (nearly) endless or the conversions undefined. The caller has
 * checked the batch indices. Needs ox_ld_$S / ox_st_$S.
 */
OX_STATIC long ox_roialign_grid_$S(double q)
{
	return !(q > 1) ? 1 : q > 1024 ? 1024 : (long)ceil(q);
}

OX_STATIC void ox_roialign_$S(const $T *restrict x, const $T *restrict rois, const int64_t *restrict bidx,
			   $T *restrict y, long N, long R, long C, long H, long W, long PH, long PW,
			   double scale, long ratio, int half, int maxmode)
{
	for (long r = 0; r < R; r++) {
		const $T *roi = rois + r * 4;
		const double off = half ? 0.5 : 0;
		const double x0 = ox_ld_$S(roi[0]) * scale - off, y0 = ox_ld_$S(roi[1]) * scale - off;
		const double x1 = ox_ld_$S(roi[2]) * scale - off, y1 = ox_ld_$S(roi[3]) * scale - off;
		double rw = x1 - x0, rh = y1 - y0;
		if (!half) {
			rw = rw > 1 ? rw : 1;
			rh = rh > 1 ? rh : 1;
		}
		const double bh = rh / (double)PH, bw = rw / (double)PW;
		const long gh = ratio > 0 ? ratio : ox_roialign_grid_$S(rh / (double)PH);
		const long gw = ratio > 0 ? ratio : ox_roialign_grid_$S(rw / (double)PW);
		const long cnt = gh * gw > 1 ? gh * gw : 1;
		const long b = (long)bidx[r];
		for (long c = 0; c < C; c++) {
			const $T *xc = x + ((b >= 0 && b < N ? b : 0) * C + c) * H * W;
			$T *yc = y + (r * C + c) * PH * PW;
			for (long ph = 0; ph < PH; ph++)
			for (long pw = 0; pw < PW; pw++) {
				double acc = 0;
				int first = 1;
				for (long iy = 0; iy < gh; iy++)
				for (long ix = 0; ix < gw; ix++) {
					double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
					double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
					double v = 0;
					if (b >= 0 && b < N && !(yy < -1.0 || yy > (double)H || xx < -1.0 || xx > (double)W)) {
						yy = yy > 0 ? yy : 0;
						xx = xx > 0 ? xx : 0;
						long yl = (long)yy, xl = (long)xx, yh, xh;
						if (yl >= H - 1)
							yh = yl = H - 1, yy = (double)yl;
						else
							yh = yl + 1;
						if (xl >= W - 1)
							xh = xl = W - 1, xx = (double)xl;
						else
							xh = xl + 1;
						const double ly = yy - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx;
						const double v1 = hy * hx * ox_ld_$S(xc[yl * W + xl]);
						const double v2 = hy * lx * ox_ld_$S(xc[yl * W + xh]);
						const double v3 = ly * hx * ox_ld_$S(xc[yh * W + xl]);
						const double v4 = ly * lx * ox_ld_$S(xc[yh * W + xh]);
						if (maxmode) {
							v = v1 > v2 ? v1 : v2;
							v = v > v3 ? v : v3;
							v = v > v4 ? v : v4;
						} else {
							v = v1 + v2 + v3 + v4;
						}
					}
					if (!maxmode)
						acc += v;
					else if (first || v > acc)
						acc = v;
					first = 0;
				}
				yc[ph * PW + pw] = ox_st_$S(($C)(maxmode ? acc : acc / (double)cnt));
			}
		}
	}
}
