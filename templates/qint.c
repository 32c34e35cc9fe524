/* qint.c: integer requantization and the int8 convolution of the kernels
 * opt/qdq.c makes from QDQ models (onnxcc::QConv, QMatMul, QAdd, QRescale,
 * QPool; codegen/emit_quant.c). Integer arithmetic only: no float, no
 * libm, plain C11, so the code runs on a core without an FPU.
 *
 * ox_qi_rq(x, m, s) is x * M rounded, for a real multiplier M that the
 * compiler wrote as M = m * 2^(s - 31), m in [2^30, 2^31) (gemmlowp /
 * TFLite's QuantizeMultiplier): a left shift by s when s > 0 (saturating),
 * the rounding doubling high multiply (x * m + 2^30) / 2^31 (gemmlowp's
 * nudge: ties toward +infinity), then a rounding right shift by -s when
 * s < 0 (ties away from zero). Against the float reference rint(x * M) it differs by at most one
 * (the two roundings; docs/optimizer.md, qdq). m = 0 gives 0.
 * Instantiate with ox_cg_use(cg, "qint", OX_U8).
 */
static inline OX_UNUSED int32_t ox_qi_rq(int32_t x, int32_t m, int32_t s)
{
	int64_t v = x;
	if (s > 0) {
		v *= (int64_t)1 << (s > 31 ? 31 : s);
		v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
	}
	/* shifts of non-negative values only (C leaves a negative one's
	 * implementation-defined); no 64-bit division either */
	const int64_t ab = v * m, r = ab + (ab >= 0 ? (int64_t)1 << 30 : 1 - ((int64_t)1 << 30));
	const int64_t h = r >= 0 ? r >> 31 : -(-r >> 31);
	if (s >= 0)
		return (int32_t)h;
	const int e = -s > 62 ? 62 : -s;
	const int64_t mask = ((int64_t)1 << e) - 1, rem = h & mask, thr = (mask >> 1) + (h < 0);
	const int64_t f = h - rem; /* a multiple of 2^e */
	return (int32_t)((f >= 0 ? f >> e : -(-f >> e)) + (rem > thr));
}

/* v clamped to [lo, hi] */
static inline OX_UNUSED int32_t ox_qi_clamp(int32_t v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* int8 / uint8 convolution with int32 bias and per-output-channel
 * requantization: y = clamp(yz + ox_qi_rq(sum + bias[m], rm[m], rs[m]),
 * ylo, yhi) stored as a byte (the int8 value's two's complement). x, w as
 * templates/quant_conv.c takes them (bytes, sign flips xf / wf, zero
 * points with the flip's 128 folded in); the sums are
 * templates/quant_conv_sums.c's. Needs quant_conv_sums before it. */
static OX_UNUSED void ox_qi_conv(const uint8_t *restrict x, const uint8_t *restrict w, const int32_t *restrict bias,
				 uint8_t *restrict y, const int32_t *restrict rm, const int32_t *restrict rs, int32_t yz,
				 int32_t ylo, int32_t yhi, int xf, int32_t xz, int wf, const int32_t *restrict wz, long N,
				 long C, long M, long G, long ID, long IH, long IW, long OD, long OH, long OW, long KD,
				 long KH, long KW, long SD, long SH, long SW, long PD, long PH, long PW, long DD, long DH,
				 long DW)
{
	const long Cg = C / G, Mg = M / G, isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
	for (long n = 0; n < N; n++)
	for (long m = 0; m < M; m++) {
		const uint8_t *xg = x + (n * C + m / Mg * Cg) * isz, *wm = w + m * Cg * ksz;
		const uint32_t b0 = bias ? (uint32_t)bias[m] : 0;
		for (long od = 0; od < OD; od++)
		for (long oh = 0; oh < OH; oh++) {
			const long id0 = od * SD - PD, ih0 = oh * SH - PH, orow = (n * M + m) * osz + (od * OH + oh) * OW;
			for (long ox0 = 0; ox0 < OW; ox0 += 256) {
				const long cnt = OW - ox0 < 256 ? OW - ox0 : 256;
				uint32_t acc[256];
				for (long i = 0; i < cnt; i++)
					acc[i] = b0;
				ox_qconv_sums(xg, wm, acc, ox0, cnt, xf, xz, wf, wz[m], Cg, ID, IH, IW, KD, KH, KW, SW, id0, ih0,
					      PW, DD, DH, DW);
				for (long i = 0; i < cnt; i++)
					y[orow + ox0 + i] = (uint8_t)ox_qi_clamp(yz + ox_qi_rq((int32_t)acc[i], rm[m], rs[m]), ylo, yhi);
			}
		}
	}
}
