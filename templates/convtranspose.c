/* convtranspose.c: transposed convolution for 1 to 3 spatial axes, in
 * gather form so every output is written once: output x of kernel
 * column kw takes input ix = (ox + PW - kw*DW) / SW when that divides
 * exactly. Splitting each output row into its SW phases (ox = r + SW*t)
 * makes the taps of a phase fixed and its inputs contiguous in t, so a
 * phase is computed like a stride-1 convolution: blocks of 4 output
 * channels x 8 positions in vector registers, input channels innermost,
 * lanes outside the input masked to 0. Weights are [C, M/G, KD, KH, KW].
 * Needs templates/vec.c and ox_ld_$S / ox_st_$S (added by ox_cg_use).
 */
OX_STATIC void ox_convtranspose_$S(const $T *restrict x, const $T *restrict w, const $T *restrict b,
				$T *restrict y, long N, long C, long M, long G, long ID, long IH, long IW,
				long OD, long OH, long OW, long KD, long KH, long KW, long SD, long SH,
				long SW, long PD, long PH, long PW, long DD, long DH, long DW)
{
	const long Cg = C / G, Mg = M / G, isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
	const long wc = Mg * ksz; /* weight step from one input channel to the next */
	for (long n = 0; n < N; n++)
	for (long g = 0; g < G; g++)
	for (long od = 0; od < OD; od++)
	for (long oh = 0; oh < OH; oh++) {
		const $T *xg = x + (n * C + g * Cg) * isz;
		for (long m0 = 0; m0 < Mg; m0 += 4) {
			const long nb = Mg - m0 < 4 ? Mg - m0 : 4;
			const $T *wm[4];
			$T *yr[4];
			$C bias[4];
			for (long j = 0; j < 4; j++) {
				long mm = m0 + (j < nb ? j : 0); /* spare lanes redo channel m0, unstored */
				wm[j] = w + (g * Cg * Mg + mm) * ksz;
				yr[j] = y + (n * M + g * Mg + mm) * osz + (od * OH + oh) * OW;
				bias[j] = b ? ox_ld_$S(b[g * Mg + mm]) : ($C)0;
			}
			for (long r = 0; r < SW && r < OW; r++) {
				const long T = (OW - r + SW - 1) / SW; /* positions of phase r */
				for (long t0 = 0; t0 < T; t0 += 8) {
					ox_v4_$S a0 = ox_v4_set_$S(bias[0], bias[0], bias[0], bias[0]), b0 = a0;
					ox_v4_$S a1 = ox_v4_set_$S(bias[1], bias[1], bias[1], bias[1]), b1 = a1;
					ox_v4_$S a2 = ox_v4_set_$S(bias[2], bias[2], bias[2], bias[2]), b2 = a2;
					ox_v4_$S a3 = ox_v4_set_$S(bias[3], bias[3], bias[3], bias[3]), b3 = a3;
					for (long kw = 0; kw < KW; kw++) {
						const long q = r + PW - kw * DW;
						if (q % SW)
							continue;
						const long ix0 = t0 + q / SW; /* lane i reads ix0 + i */
						const int inside = ix0 >= 0 && ix0 + 8 <= IW && t0 + 8 <= T;
						long ci[8];
						int mk[8];
						for (int i = 0; i < 8; i++) {
							mk[i] = t0 + i < T && ix0 + i >= 0 && ix0 + i < IW;
							ci[i] = mk[i] ? ix0 + i : 0;
						}
						const ox_m4_$S m0m = ox_m4_set_$S(mk[0], mk[1], mk[2], mk[3]);
						const ox_m4_$S m1m = ox_m4_set_$S(mk[4], mk[5], mk[6], mk[7]);
						for (long kd = 0; kd < KD; kd++) {
							const long td = od + PD - kd * DD;
							if (td < 0 || td % SD || td / SD >= ID)
								continue;
							for (long kh = 0; kh < KH; kh++) {
								const long th = oh + PH - kh * DH;
								if (th < 0 || th % SH || th / SH >= IH)
									continue;
								const long wo = (kd * KH + kh) * KW + kw;
								const $T *w0 = wm[0] + wo, *w1 = wm[1] + wo, *w2 = wm[2] + wo, *w3 = wm[3] + wo;
								const $T *xp = xg + (td / SD * IH + th / SH) * IW;
								for (long c = 0; c < Cg; c++, xp += isz, w0 += wc, w1 += wc, w2 += wc, w3 += wc) {
									ox_v4_$S x0, x1;
									if (inside) {
										const $T *p = xp + ix0;
										x0 = ox_v4_set_$S(ox_ld_$S(p[0]), ox_ld_$S(p[1]),
												  ox_ld_$S(p[2]), ox_ld_$S(p[3]));
										x1 = ox_v4_set_$S(ox_ld_$S(p[4]), ox_ld_$S(p[5]),
												  ox_ld_$S(p[6]), ox_ld_$S(p[7]));
									} else {
										x0 = ox_v4_set_$S(ox_ld_$S(xp[ci[0]]), ox_ld_$S(xp[ci[1]]),
												  ox_ld_$S(xp[ci[2]]), ox_ld_$S(xp[ci[3]]));
										x1 = ox_v4_set_$S(ox_ld_$S(xp[ci[4]]), ox_ld_$S(xp[ci[5]]),
												  ox_ld_$S(xp[ci[6]]), ox_ld_$S(xp[ci[7]]));
										x0 = ox_v4_and_$S(x0, m0m), x1 = ox_v4_and_$S(x1, m1m);
									}
									const $C u0 = ox_ld_$S(*w0), u1 = ox_ld_$S(*w1);
									const $C u2 = ox_ld_$S(*w2), u3 = ox_ld_$S(*w3);
									a0 = ox_v4_madd_$S(a0, u0, x0), b0 = ox_v4_madd_$S(b0, u0, x1);
									a1 = ox_v4_madd_$S(a1, u1, x0), b1 = ox_v4_madd_$S(b1, u1, x1);
									a2 = ox_v4_madd_$S(a2, u2, x0), b2 = ox_v4_madd_$S(b2, u2, x1);
									a3 = ox_v4_madd_$S(a3, u3, x0), b3 = ox_v4_madd_$S(b3, u3, x1);
								}
							}
						}
					}
					const long nt = T - t0 < 8 ? T - t0 : 8;
					for (long i = 0; i < nt; i++) {
						const long ox = r + SW * (t0 + i);
						const int l = (int)(i & 3);
						yr[0][ox] = ox_st_$S(ox_v4_get_$S(i < 4 ? a0 : b0, l));
						if (nb > 1)
							yr[1][ox] = ox_st_$S(ox_v4_get_$S(i < 4 ? a1 : b1, l));
						if (nb > 2)
							yr[2][ox] = ox_st_$S(ox_v4_get_$S(i < 4 ? a2 : b2, l));
						if (nb > 3)
							yr[3][ox] = ox_st_$S(ox_v4_get_$S(i < 4 ? a3 : b3, l));
					}
				}
			}
		}
	}
}
