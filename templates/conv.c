/* conv.c: direct convolution for 1 to 3 spatial axes (1-D and 2-D calls
 * pass leading axes of size 1), with groups, strides, dilations and pads.
 * No im2col and no heap. Each output row is computed in blocks of 4
 * output channels x 8 positions whose sums stay in 8 vector registers
 * across the whole reduction (kernel taps x input channels, channels
 * innermost), so each input vector feeds 4 channels. Rows are the outer
 * loop so one row's inputs stay in cache for all output channels. Blocks
 * whose window leaves the input (padding, a row's short tail) load lanes
 * through a clamped index and a mask. Needs templates/vec.c and
 * ox_ld_$S / ox_st_$S (added by ox_cg_use).
 */
/* One output channel at a time, 8 positions (a, b): for groups with
 * fewer than 4 output channels (depthwise), where the 4-channel blocks
 * of ox_conv_$S would mostly compute spare lanes. */
OX_STATIC void ox_conv1_$S(const $T *restrict x, const $T *restrict w, const $T *restrict b, $T *restrict y,
			long N, long C, long M, long G, long ID, long IH, long IW, long OD, long OH, long OW,
			long KD, long KH, long KW, long SD, long SH, long SW, long PD, long PH, long PW,
			long DD, long DH, long DW)
{
	const long Cg = C / G, Mg = M / G, isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
	for (long n = 0; n < N; n++)
	for (long m = 0; m < M; m++) {
		const $T *xg = x + (n * C + m / Mg * Cg) * isz, *wm = w + m * Cg * ksz;
		const $C bias = b ? ox_ld_$S(b[m]) : ($C)0;
		for (long od = 0; od < OD; od++)
		for (long oh = 0; oh < OH; oh++) {
			const long id0 = od * SD - PD, ih0 = oh * SH - PH;
			$T *yr = y + (n * M + m) * osz + (od * OH + oh) * OW;
			for (long ox = 0; ox < OW; ox += 8) {
				ox_v4_$S a = ox_v4_set_$S(bias, bias, bias, bias), bb = a;
				for (long kw = 0; kw < KW; kw++) {
					const long ix0 = ox * SW - PW + kw * DW;
					long ci[8];
					int mk[8];
					for (int i = 0; i < 8; i++) {
						long ix = ix0 + i * SW;
						mk[i] = ox + i < OW && ix >= 0 && ix < IW;
						ci[i] = mk[i] ? ix : 0;
					}
					const ox_m4_$S m0 = ox_m4_set_$S(mk[0], mk[1], mk[2], mk[3]);
					const ox_m4_$S m1 = ox_m4_set_$S(mk[4], mk[5], mk[6], mk[7]);
					for (long kd = 0; kd < KD; kd++) {
						long id = id0 + kd * DD;
						if (id < 0 || id >= ID)
							continue;
						for (long kh = 0; kh < KH; kh++) {
							long ih = ih0 + kh * DH;
							if (ih < 0 || ih >= IH)
								continue;
							const $T *xp = xg + (id * IH + ih) * IW, *wp = wm + (kd * KH + kh) * KW + kw;
							for (long c = 0; c < Cg; c++, xp += isz, wp += ksz) {
								ox_v4_$S x0 = ox_v4_set_$S(ox_ld_$S(xp[ci[0]]), ox_ld_$S(xp[ci[1]]),
											   ox_ld_$S(xp[ci[2]]), ox_ld_$S(xp[ci[3]]));
								ox_v4_$S x1 = ox_v4_set_$S(ox_ld_$S(xp[ci[4]]), ox_ld_$S(xp[ci[5]]),
											   ox_ld_$S(xp[ci[6]]), ox_ld_$S(xp[ci[7]]));
								const $C u = ox_ld_$S(*wp);
								a = ox_v4_madd_$S(a, u, ox_v4_and_$S(x0, m0));
								bb = ox_v4_madd_$S(bb, u, ox_v4_and_$S(x1, m1));
							}
						}
					}
				}
				const long nx = OW - ox < 8 ? OW - ox : 8;
				for (long i = 0; i < nx; i++)
					yr[ox + i] = ox_st_$S(ox_v4_get_$S(i < 4 ? a : bb, (int)(i & 3)));
			}
		}
	}
}

OX_STATIC void ox_conv_$S(const $T *restrict x, const $T *restrict w, const $T *restrict b, $T *restrict y,
		       long N, long C, long M, long G, long ID, long IH, long IW, long OD, long OH, long OW,
		       long KD, long KH, long KW, long SD, long SH, long SW, long PD, long PH, long PW,
		       long DD, long DH, long DW)
{
	const long Cg = C / G, Mg = M / G, isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
	const long wj = Cg * ksz; /* weight step from one output channel to the next */
	if (Mg < 4) {
		ox_conv1_$S(x, w, b, y, N, C, M, G, ID, IH, IW, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW);
		return;
	}
	/* [xlo, xhi): output x positions where every kernel column is inside the row */
	long xlo = 0, xhi = OW;
	for (long kw = 0; kw < KW; kw++) {
		long t = PW - kw * DW, lo = t > 0 ? (t + SW - 1) / SW : 0;
		long u = IW - 1 + PW - kw * DW, hi = u >= 0 ? u / SW + 1 : 0;
		if (lo > xlo)
			xlo = lo;
		if (hi < xhi)
			xhi = hi;
	}
	for (long n = 0; n < N; n++)
	for (long g = 0; g < G; g++)
	for (long od = 0; od < OD; od++)
	for (long oh = 0; oh < OH; oh++) {
		const $T *xg = x + (n * C + g * Cg) * isz;
		const long id0 = od * SD - PD, ih0 = oh * SH - PH, orow = (od * OH + oh) * OW;
		for (long mb = 0; mb < Mg; mb += 4) {
			/* a short last block moves back to overlap the one before
			 * (Mg >= 4 here): those channels are computed twice, alike */
			const long m0 = g * Mg + (mb + 4 <= Mg ? mb : Mg - 4);
			const $T *wm = w + m0 * Cg * ksz;
			$T *yr[4];
			$C bias[4];
			for (long j = 0; j < 4; j++) {
				yr[j] = y + (n * M + m0 + j) * osz + orow;
				bias[j] = b ? ox_ld_$S(b[m0 + j]) : ($C)0;
			}
			for (long ox = 0; ox < OW; ox += 8) {
				const int inside = ox >= xlo && ox + 8 <= xhi;
				/* aJ: positions ox..ox+3 of channel m0+J, bJ: ox+4..ox+7 */
				ox_v4_$S a0 = ox_v4_set_$S(bias[0], bias[0], bias[0], bias[0]), b0 = a0;
				ox_v4_$S a1 = ox_v4_set_$S(bias[1], bias[1], bias[1], bias[1]), b1 = a1;
				ox_v4_$S a2 = ox_v4_set_$S(bias[2], bias[2], bias[2], bias[2]), b2 = a2;
				ox_v4_$S a3 = ox_v4_set_$S(bias[3], bias[3], bias[3], bias[3]), b3 = a3;
				/* kernel columns outermost: the lane setup depends only on kw */
				for (long kw = 0; kw < KW; kw++) {
					const long ix0 = ox * SW - PW + kw * DW;
					const int fast = inside && SW == 1;
					/* other blocks: per-lane offsets, outside lanes read element 0, masked to 0 */
					long ci[8];
					int mk[8];
					for (int i = 0; i < 8; i++) {
						long ix = ix0 + i * SW;
						mk[i] = inside || (ox + i < OW && ix >= 0 && ix < IW);
						ci[i] = mk[i] ? ix : 0;
					}
					const ox_m4_$S m0 = ox_m4_set_$S(mk[0], mk[1], mk[2], mk[3]);
					const ox_m4_$S m1 = ox_m4_set_$S(mk[4], mk[5], mk[6], mk[7]);
					for (long kd = 0; kd < KD; kd++) {
						long id = id0 + kd * DD;
						if (id < 0 || id >= ID)
							continue;
						for (long kh = 0; kh < KH; kh++) {
							long ih = ih0 + kh * DH;
							if (ih < 0 || ih >= IH)
								continue;
							const $T *wp = wm + (kd * KH + kh) * KW + kw;
							const $T *xp = xg + (id * IH + ih) * IW;
							if (fast) {
								xp += ix0;
								for (long c = 0; c < Cg; c++, xp += isz, wp += ksz) {
									const ox_v4_$S x0 = ox_v4_set_$S(ox_ld_$S(xp[0]), ox_ld_$S(xp[1]),
													 ox_ld_$S(xp[2]), ox_ld_$S(xp[3]));
									const ox_v4_$S x1 = ox_v4_set_$S(ox_ld_$S(xp[4]), ox_ld_$S(xp[5]),
													 ox_ld_$S(xp[6]), ox_ld_$S(xp[7]));
									const $C u0 = ox_ld_$S(wp[0]), u1 = ox_ld_$S(wp[wj]);
									const $C u2 = ox_ld_$S(wp[2 * wj]), u3 = ox_ld_$S(wp[3 * wj]);
									a0 = ox_v4_madd_$S(a0, u0, x0), b0 = ox_v4_madd_$S(b0, u0, x1);
									a1 = ox_v4_madd_$S(a1, u1, x0), b1 = ox_v4_madd_$S(b1, u1, x1);
									a2 = ox_v4_madd_$S(a2, u2, x0), b2 = ox_v4_madd_$S(b2, u2, x1);
									a3 = ox_v4_madd_$S(a3, u3, x0), b3 = ox_v4_madd_$S(b3, u3, x1);
								}
								continue;
							}
							for (long c = 0; c < Cg; c++, xp += isz, wp += ksz) {
								ox_v4_$S x0 = ox_v4_set_$S(ox_ld_$S(xp[ci[0]]), ox_ld_$S(xp[ci[1]]),
											   ox_ld_$S(xp[ci[2]]), ox_ld_$S(xp[ci[3]]));
								ox_v4_$S x1 = ox_v4_set_$S(ox_ld_$S(xp[ci[4]]), ox_ld_$S(xp[ci[5]]),
											   ox_ld_$S(xp[ci[6]]), ox_ld_$S(xp[ci[7]]));
								if (!inside)
									x0 = ox_v4_and_$S(x0, m0), x1 = ox_v4_and_$S(x1, m1);
								const $C u0 = ox_ld_$S(wp[0]), u1 = ox_ld_$S(wp[wj]);
								const $C u2 = ox_ld_$S(wp[2 * wj]), u3 = ox_ld_$S(wp[3 * wj]);
								a0 = ox_v4_madd_$S(a0, u0, x0), b0 = ox_v4_madd_$S(b0, u0, x1);
								a1 = ox_v4_madd_$S(a1, u1, x0), b1 = ox_v4_madd_$S(b1, u1, x1);
								a2 = ox_v4_madd_$S(a2, u2, x0), b2 = ox_v4_madd_$S(b2, u2, x1);
								a3 = ox_v4_madd_$S(a3, u3, x0), b3 = ox_v4_madd_$S(b3, u3, x1);
							}
						}
					}
				}
				const long nx = OW - ox < 8 ? OW - ox : 8;
				for (long i = 0; i < nx; i++) {
					int l = (int)(i & 3);
					yr[0][ox + i] = ox_st_$S(ox_v4_get_$S(i < 4 ? a0 : b0, l));
					yr[1][ox + i] = ox_st_$S(ox_v4_get_$S(i < 4 ? a1 : b1, l));
					yr[2][ox + i] = ox_st_$S(ox_v4_get_$S(i < 4 ? a2 : b2, l));
					yr[3][ox + i] = ox_st_$S(ox_v4_get_$S(i < 4 ? a3 : b3, l));
				}
			}
		}
	}
}
