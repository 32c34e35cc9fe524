/* qint.c: integer requantization and the int8 convolution of the kernels
 * opt/qdq.c makes from QDQ models (onnxcc::QConv, QMatMul, QAdd, QRescale,
 * QPool; codegen/c/emit_quant.c). Integer arithmetic only: no float, no
 * libm, plain C11, so the code runs on a core without an FPU.
 * @needs quant_conv_sums (ox_qi_conv calls ox_qconv_sums)
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
OX_STATIC inline OX_UNUSED int32_t ox_qi_rq(int32_t x, int32_t m, int32_t s)
{
	int64_t v = x;
	if (s > 0) {
		v *= (int64_t)1 << (s > 31 ? 31 : s);
		v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
	}
	/* Branch-free on the values' signs (a data-dependent branch here
	 * costs more than the arithmetic): shifts of non-negative values only
	 * (C leaves a negative one's implementation-defined); the division by
	 * the constant 2^31 (toward zero) compiles to shifts, no 64-bit
	 * division call. The nudge is 2^30 for ab >= 0, 1 - 2^30 below. */
	const int64_t ab = v * m, r = ab + ((int64_t)1 << 30) - (int64_t)(ab < 0) * (((int64_t)1 << 31) - 1);
	const int64_t h = r / ((int64_t)1 << 31);
	if (s >= 0)
		return (int32_t)h;
	const int e = -s > 62 ? 62 : -s;
	const int64_t mask = ((int64_t)1 << e) - 1, rem = h & mask, thr = (mask >> 1) + (h < 0);
	/* floor(h / 2^e), as (h + 2^63) / 2^e - 2^(63 - e) in unsigned arithmetic */
	const uint64_t t = (uint64_t)1 << 63;
	const int64_t fl = (int64_t)(((uint64_t)h ^ t) >> e) - (int64_t)(t >> e);
	return (int32_t)(fl + (rem > thr));
}

/* v clamped to [lo, hi] */
OX_STATIC inline OX_UNUSED int32_t ox_qi_clamp(int32_t v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The x86 paths below use the intrinsics of the target's feature macros;
 * -DOX_VF_PORTABLE (as for templates/vf.c) or another target takes the
 * plain C loops, which compute the same bits. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && (defined(__AVX2__) || defined(__SSE2__))
#include <immintrin.h>
#endif

/* One row chunk of onnxcc::QMatMul with int8 constant weights b (K x N,
 * row-major): acc[j] = sum_k ((a[k] ^ af) - az) (b[k N + j0 + j] - zb), j
 * < nj, modulo 2^32, the same sums as templates/quant_matmul.c's
 * ox_qmm_row, with the zero points hoisted as in the convolution below:
 * az has the flip's 128 folded in (as there), bz[] too (+128 for int8),
 * bs[] the weights' column sums. The products of pairs of rows k, k + 1
 * are summed into 32 bits by pmaddwd behind __AVX2__ (16 columns at a
 * time); plain C elsewhere. */
OX_STATIC OX_UNUSED void ox_qi_mm(const uint8_t *restrict a, const int8_t *restrict b, int32_t *restrict acc, long K,
			       long N, long j0, long nj, int af, int32_t az, const int32_t *restrict bz,
			       const int32_t *restrict bs)
{
	const int32_t za = az - 128;
	int32_t sa = 0;
	for (long k = 0; k < K; k++)
		sa += (int32_t)(a[k] ^ af) - 128;
	long j = 0;
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX2__)
	for (; j + 16 <= nj; j += 16) {
		const int8_t *bj = b + j0 + j;
		__m256i lo = _mm256_setzero_si256(), hi = lo;
		long k = 0;
		for (; k + 2 <= K; k += 2) {
			const int32_t x0 = (int32_t)(a[k] ^ af) - 128, x1 = (int32_t)(a[k + 1] ^ af) - 128;
			const __m256i xv = _mm256_set1_epi32((int32_t)(((uint32_t)x1 << 16) | ((uint32_t)x0 & 0xffff)));
			const __m256i r0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(bj + k * N)));
			const __m256i r1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(bj + (k + 1) * N)));
			lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(r0, r1), xv));
			hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(r0, r1), xv));
		}
		if (k < K) {
			const __m256i xv = _mm256_set1_epi32((int32_t)(((uint32_t)(a[k] ^ af) - 128) & 0xffff));
			const __m256i r0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(bj + k * N)));
			const __m256i z = _mm256_setzero_si256();
			lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(r0, z), xv));
			hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(r0, z), xv));
		}
		/* unpack works in 128-bit halves: lo holds columns 0-3, 8-11, hi 4-7, 12-15 */
		_mm256_storeu_si256((__m256i *)(acc + j), _mm256_permute2x128_si256(lo, hi, 0x20));
		_mm256_storeu_si256((__m256i *)(acc + j + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
	}
#endif
	for (long jt = j; jt < nj; jt++)
		acc[jt] = 0;
	if (j < nj)
		for (long k = 0; k < K; k++) {
			const int32_t xv = (int32_t)(a[k] ^ af) - 128;
			const int8_t *br = b + k * N + j0;
			for (long jt = j; jt < nj; jt++)
				acc[jt] = (int32_t)((uint32_t)acc[jt] + (uint32_t)(xv * br[jt]));
		}
	for (long jt = 0; jt < nj; jt++) {
		const uint32_t zb = (uint32_t)(bz[j0 + jt] - 128);
		acc[jt] = (int32_t)((uint32_t)acc[jt] - zb * (uint32_t)sa - (uint32_t)za * (uint32_t)bs[j0 + jt] +
				    (uint32_t)K * (uint32_t)za * zb);
	}
}

/* The fast convolution path (ox_qi_conv with ws, int8 weights): the zero
 * points come out of the sum,
 *   sum_k (x_k - zx)(w_k - zw) = sum_k x_k w_k - zw sum_k x_k - zx sum_k w_k + K zx zw,
 * x and w in the signed domain (the byte with the flip, minus 128; a
 * padded tap is x = zx), sum_k w_k per output channel from the compiler
 * (ws), so the inner loop is a plain 8-bit dot product, which the target
 * computes in 16-bit products summed pairwise into 32 bits (x86's pmaddwd
 * behind __AVX2__ / __SSE2__, plain C elsewhere). The sums are exact
 * integers taken modulo 2^32: the same bits as the direct sums. The input
 * of OX_QI_PX output pixels is copied (im2col) into a stack scratch of
 * OX_QI_COLS 16-bit values, one pixel's taps contiguous, and every output
 * channel of the group is dotted against it; when the taps of OX_QI_PX
 * pixels do not fit, input channels are taken in chunks and the sums of
 * OX_QI_MB output channels at a time are kept (the im2col redone per
 * OX_QI_MB channels). -DOX_QI_COLS=N sets the scratch (default 32768 on
 * 64-bit hosts, 256 elsewhere, e.g. a Cortex-M's small stack). */
#ifndef OX_QI_COLS
#if defined(__x86_64__) || defined(__aarch64__) || defined(_M_X64)
#define OX_QI_COLS 32768 /* 64 KB of stack */
#else
#define OX_QI_COLS 256 /* a microcontroller's stack: 512 bytes */
#endif
#endif
#define OX_QI_PX 4
#define OX_QI_MB 16

/* s[j] += sum_{k < K} w[k] c[j * ldc + k], j < OX_QI_PX (4), modulo 2^32 */
OX_STATIC inline OX_UNUSED void ox_qi_dot4(const int8_t *restrict w, const int16_t *restrict c, long ldc, long K,
					uint32_t *restrict s)
{
	const int16_t *c0 = c, *c1 = c + ldc, *c2 = c + 2 * ldc, *c3 = c + 3 * ldc;
	int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	long k = 0;
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX2__)
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	for (; k + 16 <= K; k += 16) {
		const __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + k)));
		a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(wv, _mm256_loadu_si256((const __m256i *)(c0 + k))));
		a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(wv, _mm256_loadu_si256((const __m256i *)(c1 + k))));
		a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(wv, _mm256_loadu_si256((const __m256i *)(c2 + k))));
		a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(wv, _mm256_loadu_si256((const __m256i *)(c3 + k))));
	}
	/* the four sums' 8 lanes each, reduced together: (s0, s1, s2, s3) */
	const __m256i h01 = _mm256_hadd_epi32(a0, a1), h23 = _mm256_hadd_epi32(a2, a3), h = _mm256_hadd_epi32(h01, h23);
	const __m128i r = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
	int32_t t[4];
	_mm_storeu_si128((__m128i *)t, r);
	s0 = t[0], s1 = t[1], s2 = t[2], s3 = t[3];
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__SSE2__)
	__m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
	for (; k + 8 <= K; k += 8) {
		const __m128i wb = _mm_loadl_epi64((const __m128i *)(w + k));
		const __m128i wv = _mm_srai_epi16(_mm_unpacklo_epi8(wb, wb), 8);
		a0 = _mm_add_epi32(a0, _mm_madd_epi16(wv, _mm_loadu_si128((const __m128i *)(c0 + k))));
		a1 = _mm_add_epi32(a1, _mm_madd_epi16(wv, _mm_loadu_si128((const __m128i *)(c1 + k))));
		a2 = _mm_add_epi32(a2, _mm_madd_epi16(wv, _mm_loadu_si128((const __m128i *)(c2 + k))));
		a3 = _mm_add_epi32(a3, _mm_madd_epi16(wv, _mm_loadu_si128((const __m128i *)(c3 + k))));
	}
	int32_t t[16];
	_mm_storeu_si128((__m128i *)t, a0), _mm_storeu_si128((__m128i *)(t + 4), a1);
	_mm_storeu_si128((__m128i *)(t + 8), a2), _mm_storeu_si128((__m128i *)(t + 12), a3);
	s0 = t[0] + t[1] + t[2] + t[3], s1 = t[4] + t[5] + t[6] + t[7];
	s2 = t[8] + t[9] + t[10] + t[11], s3 = t[12] + t[13] + t[14] + t[15];
#endif
	for (; k < K; k++) {
		const int32_t wv = w[k];
		s0 += wv * c0[k], s1 += wv * c1[k], s2 += wv * c2[k], s3 += wv * c3[k];
	}
	s[0] += (uint32_t)s0, s[1] += (uint32_t)s1, s[2] += (uint32_t)s2, s[3] += (uint32_t)s3;
}

/* im2col of input channels [c0, c0 + cc) of the OX_QI_PX pixels from ox0
 * of row (id0, ih0): col[i * ldc + k], the signed-domain input (padding:
 * zx), their sums added to xs[i]; pixels past OW are zeros */
OX_STATIC OX_UNUSED void ox_qi_im2col(const uint8_t *restrict xg, int16_t *restrict col, long ldc, uint32_t *restrict xs,
				   long ox0, long OW, int xf, int32_t zx, long c0, long cc, long ID, long IH, long IW,
				   long KD, long KH, long KW, long SW, long id0, long ih0, long PW, long DD, long DH,
				   long DW)
{
	for (long i = 0; i < OX_QI_PX; i++) {
		int16_t *ci = col + i * ldc;
		const long ox = ox0 + i;
		if (ox >= OW) {
			for (long k = 0; k < cc * KD * KH * KW; k++)
				ci[k] = 0;
			continue;
		}
		int32_t sum = 0;
		for (long c = c0; c < c0 + cc; c++)
		for (long kd = 0; kd < KD; kd++) {
			const long id = id0 + kd * DD;
			for (long kh = 0; kh < KH; kh++) {
				const long ih = ih0 + kh * DH;
				if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
					for (long kw = 0; kw < KW; kw++)
						*ci++ = (int16_t)zx;
					sum += zx * (int32_t)KW;
					continue;
				}
				const uint8_t *xr = xg + ((c * ID + id) * IH + ih) * IW;
				for (long kw = 0; kw < KW; kw++) {
					const long ix = ox * SW + kw * DW - PW;
					const int32_t v = ix >= 0 && ix < IW ? (int32_t)(xr[ix] ^ xf) - 128 : zx;
					*ci++ = (int16_t)v;
					sum += v;
				}
			}
		}
		xs[i] += (uint32_t)sum;
	}
}

/* int8 / uint8 convolution with int32 bias and per-output-channel
 * requantization: y = clamp(yz + ox_qi_rq(sum + bias[m], rm[m], rs[m]),
 * ylo, yhi) stored as a byte (the int8 value's two's complement). x, w as
 * templates/quant_conv.c takes them (bytes, sign flips xf / wf, zero
 * points with the flip's 128 folded in). ws: NULL, or sum_k w_k of each
 * output channel's weights (signed: int8 weights only), which takes the
 * fast path above; without it (or when the scratch cannot hold one
 * input channel's taps), the sums are templates/quant_conv_sums.c's.
 * Needs quant_conv_sums before it. */
OX_STATIC OX_UNUSED void ox_qi_conv(const uint8_t *restrict x, const uint8_t *restrict w, const int32_t *restrict bias,
				 uint8_t *restrict y, const int32_t *restrict rm, const int32_t *restrict rs, int32_t yz,
				 int32_t ylo, int32_t yhi, int xf, int32_t xz, int wf, const int32_t *restrict wz,
				 const int32_t *restrict ws, long N, long C, long M, long G, long ID, long IH, long IW,
				 long OD, long OH, long OW, long KD, long KH, long KW, long SD, long SH, long SW, long PD,
				 long PH, long PW, long DD, long DH, long DW)
{
	const long Cg = C / G, Mg = M / G, isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
	if (ws && wf == 128 && xz >= 0 && xz <= 255 && ksz * OX_QI_PX <= OX_QI_COLS) {
		int16_t col[OX_QI_COLS];
		long cc = OX_QI_COLS / (ksz * OX_QI_PX);
		if (cc > Cg)
			cc = Cg;
		const long K = Cg * ksz, ldc = cc * ksz, MB = cc == Cg ? Mg : OX_QI_MB;
		const int32_t zx = xz - 128;
		for (long n = 0; n < N; n++)
		for (long g = 0; g < G; g++) {
			const uint8_t *xg = x + (n * C + g * Cg) * isz;
			for (long od = 0; od < OD; od++)
			for (long oh = 0; oh < OH; oh++) {
				const long id0 = od * SD - PD, ih0 = oh * SH - PH;
				for (long ox0 = 0; ox0 < OW; ox0 += OX_QI_PX) {
					for (long mb = 0; mb < Mg; mb += MB) {
						const long nm = Mg - mb < MB ? Mg - mb : MB;
						uint32_t acc[OX_QI_MB * OX_QI_PX], xs[OX_QI_PX] = {0}, one[OX_QI_PX];
						for (long c0 = 0; c0 < Cg; c0 += cc) {
							const long ncc = Cg - c0 < cc ? Cg - c0 : cc;
							if (cc < Cg || mb == 0)
								ox_qi_im2col(xg, col, ldc, xs, ox0, OW, xf, zx, c0, ncc, ID, IH, IW,
									     KD, KH, KW, SW, id0, ih0, PW, DD, DH, DW);
							for (long j = 0; j < nm; j++) {
								const long m = g * Mg + mb + j;
								uint32_t *s = cc == Cg ? one : acc + j * OX_QI_PX;
								if (cc == Cg || c0 == 0)
									s[0] = s[1] = s[2] = s[3] = 0;
								ox_qi_dot4((const int8_t *)w + (m * Cg + c0) * ksz, col, ldc,
									   ncc * ksz, s);
								if (cc < Cg && c0 + ncc < Cg)
									continue;
								/* the zero points back in, the bias, requantization */
								const uint32_t zw = (uint32_t)(wz[m] - 128);
								const uint32_t c = (bias ? (uint32_t)bias[m] : 0) -
										   (uint32_t)zx * (uint32_t)ws[m] +
										   (uint32_t)K * (uint32_t)zx * zw;
								const long orow = (n * M + m) * osz + (od * OH + oh) * OW + ox0;
								for (long i = 0; i < OX_QI_PX && ox0 + i < OW; i++) {
									const uint32_t a = s[i] - zw * xs[i] + c;
									y[orow + i] = (uint8_t)ox_qi_clamp(
										yz + ox_qi_rq((int32_t)a, rm[m], rs[m]), ylo, yhi);
								}
							}
						}
					}
				}
			}
		}
		return;
	}
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
