/* qconv.c: the integer kernels of int8 models that opt/pack.c packed
 * weights for (codegen/c/emit_quant.c prints the calls): the packed
 * convolution (onnxcc::QConv, OX_L_QCONVW; geometry: opt/opt.h's
 * ox_qconvgeo), the depthwise one (OX_L_QDWW, ox_qg_dw) and the packed
 * GEMM of MatMulInteger (OX_L_QGEMMB, ox_qg_mm). Integer only.
 * @needs qint (ox_qi_rq, ox_qi_clamp)
 *
 * The convolution is a product of 8-bit sums. With x in the unsigned
 * domain (the byte with the flip: int8 values plus 128) and w signed
 * (uint8 weights less 128), and zx, zw their zero points there:
 *   sum_k (x_k - zx)(w_k - zw) = sum_k x_k w_k - zw sum_k x_k + c,
 *   c = -zx sum_k w_k + K zx zw,
 * c per output channel from the compiler (with the bias: the table cm),
 * sum_k x_k per pixel only where a zw is not 0 (the ones block of the
 * weights gives it). The unsigned x signed byte products in fours are
 * what x86's vpdpbusd sums (AVX512-VNNI): 16 pixels of a tap and four
 * input channels in one vector, a weight of four channels broadcast. Each
 * image's group of input channels is first copied into scratch, four
 * channels interleaved (ox_qg_copy), so that the OX_QG_NR pixels of a tile
 * are contiguous at every tap and every four input channels. A tile is
 * 8 output channels x OX_QG_NR pixels (ox_qg_sums), requantized by rows
 * into the output (ox_qg_store). The sums are exact modulo 2^32 on every
 * path (AVX512-VNNI, AArch64's SDOT and NEON smlal, AVX2's and SSE2's
 * pmaddwd, plain C), so every target computes the same bytes.
 */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define OX_QG_VNNI 1
#include <immintrin.h>
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__aarch64__) && \
	defined(__ARM_FEATURE_DOTPROD)
#define OX_QG_SDOT 1 /* AArch64's SDOT: signed x signed, the bytes flipped to int8 and 128 sum w added back */
#include <arm_neon.h>
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__aarch64__)
#define OX_QG_SMLAL 1 /* AArch64 NEON without the dot product: 16-bit products by smlal */
#include <arm_neon.h>
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX2__)
#define OX_QG_MADD 4 /* pixels per vector: AVX2 */
#include <immintrin.h>
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__SSE2__)
#define OX_QG_MADD 2 /* SSE2 */
#include <emmintrin.h>
#endif

#define OX_QG_NR 48 /* pixels per tile; opt/opt.h's OX_QG_NR sizes the scratch for it */

/* one packed convolution's constants (a static const per node) */
typedef struct {
	long Cg, IH, IW, SH, SW, PH, PW, R, W; /* the group's input channels, image, stride, pads; phases R x W */
	long T, C4, cs;                        /* taps, fours of input channels, bytes between fours */
	const long *off;                       /* T tap offsets (bytes) in a four's phases */
	long P, OW, plane, Mg, MB;             /* pixels walked, output width and plane, the group's channels, blocks */
	int xf, xz;                            /* the input's flip, its zero point in the unsigned domain */
	int32_t yz, lo, hi;                    /* the output's zero point and clamp */
	const int32_t *cm, *zw, *rm, *rs;      /* per output channel: constant term, weight zero point, requantization */
	const int32_t *ws;                     /* per output channel: the sum of its packed weights */
} ox_qgeo;

/* Input channels [4 c4, 4 c4 + 4) of an image's group (xg: its first
 * channel) into its scratch xb, at four c4's phases [SH SW][R][W][4]:
 * phase (a, b) row r column c holds the padded input at (r SH + a, c SW + b) */
/* the first pixels of n of four channels (x, planes isz apart) interleaved
 * into d, bytes xor xf, 16 at a time where the target has the vectors:
 * returns how many (the rest is the caller's) */
static inline long ox_qg_four(const uint8_t *restrict x, long isz, long n, uint8_t xf, uint8_t *restrict d)
{
	long j = 0;
#if OX_QG_VNNI || OX_QG_MADD
	const __m128i f = _mm_set1_epi8((char)xf);
	for (; j + 16 <= n; j += 16) {
		const uint8_t *p = x + j;
		const __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), f);
		const __m128i x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(p + isz)), f);
		const __m128i x2 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(p + 2 * isz)), f);
		const __m128i x3 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(p + 3 * isz)), f);
		const __m128i l01 = _mm_unpacklo_epi8(x0, x1), h01 = _mm_unpackhi_epi8(x0, x1);
		const __m128i l23 = _mm_unpacklo_epi8(x2, x3), h23 = _mm_unpackhi_epi8(x2, x3);
		uint8_t *o = d + j * 4;
		_mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(l01, l23));
		_mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi16(l01, l23));
		_mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi16(h01, h23));
		_mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi16(h01, h23));
	}
#else
	(void)x, (void)isz, (void)n, (void)xf, (void)d;
#endif
	return j;
}

OX_STATIC OX_UNUSED void ox_qg_copy(const ox_qgeo *q, const uint8_t *restrict xg, uint8_t *restrict xb, long c4)
{
	uint8_t *o = xb + c4 * q->cs;
	const long R = q->R, W = q->W, isz = q->IH * q->IW, SW = q->SW;
	const uint8_t xf = (uint8_t)q->xf, xz = (uint8_t)q->xz;
	/* a pixel outside the image: the zero point, 0 for channels past Cg */
	uint8_t pad[4];
	for (long t = 0; t < 4; t++)
		pad[t] = c4 * 4 + t < q->Cg ? xz : 0;
	if (q->SH == 1 && SW == 1 && !q->PH && !q->PW && R == q->IH && W == q->IW && c4 * 4 + 4 <= q->Cg) {
		/* (no pads, stride 1: the image's rows are the scratch's, one run) */
		const uint8_t *xr = xg + c4 * 4 * isz;
		for (long k = ox_qg_four(xr, isz, isz, xf, o); k < isz; k++)
			for (long t = 0; t < 4; t++)
				o[k * 4 + t] = (uint8_t)(xr[t * isz + k] ^ xf);
		return;
	}
	for (long a = 0; a < q->SH; a++)
	for (long b = 0; b < SW; b++)
	for (long r = 0; r < R; r++, o += W * 4) {
		const long ih = r * q->SH + a - q->PH;
		/* columns j: input column j SW + b - PW, inside for j in [j0, j1) */
		long j0 = (q->PW - b + SW - 1) / SW, j1 = (q->IW + q->PW - b + SW - 1) / SW;
		j0 = j0 < 0 ? 0 : j0 > W ? W : j0;
		j1 = j1 < j0 ? j0 : j1 > W ? W : j1;
		if (ih < 0 || ih >= q->IH)
			j0 = j1 = W;
		for (long j = 0; j < j0; j++)
			memcpy(o + j * 4, pad, 4);
		for (long j = j1; j < W; j++)
			memcpy(o + j * 4, pad, 4);
		if (j0 == j1)
			continue;
		const uint8_t *xr = xg + c4 * 4 * isz + ih * q->IW + j0 * SW + b - q->PW;
		long j = j0;
		if (SW == 1 && c4 * 4 + 4 <= q->Cg)
			j += ox_qg_four(xr, isz, j1 - j0, xf, o + j0 * 4);
		for (long t = 0; t < 4; t++) {
			const uint8_t *xs = xr + t * isz;
			if (c4 * 4 + t >= q->Cg)
				for (long k = j; k < j1; k++)
					o[k * 4 + t] = 0;
			else
				for (long k = j; k < j1; k++)
					o[k * 4 + t] = (uint8_t)(xs[(k - j0) * SW] ^ xf);
		}
	}
}

static inline int32_t ox_qg_w4(const int8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The sums of one tile: acc[i * NR + j] = sum over the taps and fours of
 * block w's row i times pixel j (xp: the tile's first pixel in the
 * scratch), modulo 2^32, for j < 16 nv (nv = 1, 2 or 3; the rest of acc
 * is left as it was) */
#if OX_QG_VNNI
/* 8 rows x 16 NV pixels: 8 NV accumulators (named, so that they stay in
 * registers), the weight of a row and four channels broadcast, a tap's
 * four channels of 16 pixels per vector. OX_QG_V(f) applies f to each
 * vector v < NV, OX_QG_RV(f, i) to each of row i's. */
#define OX_QG_DP(i, v) s##i##v = _mm512_dpbusd_epi32(s##i##v, x##v, w##i)
#define OX_QG_ROWS(f, v) f(0, v); f(1, v); f(2, v); f(3, v); f(4, v); f(5, v); f(6, v); f(7, v)
#define OX_QG_ZERO(i, v) __m512i s##i##v = _mm512_setzero_si512()
#define OX_QG_PUT(i, v) _mm512_storeu_si512(acc + (i) * OX_QG_NR + 16 * (v), s##i##v)
#define OX_QG_LOAD(v) const __m512i x##v = _mm512_loadu_si512(xt + 64 * (v))
#define OX_QG_SUMS(NV, V)                                                                         \
	static inline void ox_qg_sums##NV(const ox_qgeo *q, const uint8_t *restrict xp,          \
					  const int8_t *restrict w, int32_t *restrict acc)       \
	{                                                                                         \
		V(OX_QG_ZERO);                                                                    \
		for (long t = 0; t < q->T; t++) {                                                 \
			const uint8_t *xt = xp + q->off[t];                                       \
			const int8_t *wt = w + t * q->C4 * 32;                                    \
			for (long c = 0; c < q->C4; c++, xt += q->cs, wt += 32) {                 \
				const __m512i w0 = _mm512_set1_epi32(ox_qg_w4(wt)),               \
					      w1 = _mm512_set1_epi32(ox_qg_w4(wt + 4)),           \
					      w2 = _mm512_set1_epi32(ox_qg_w4(wt + 8)),           \
					      w3 = _mm512_set1_epi32(ox_qg_w4(wt + 12)),          \
					      w4 = _mm512_set1_epi32(ox_qg_w4(wt + 16)),          \
					      w5 = _mm512_set1_epi32(ox_qg_w4(wt + 20)),          \
					      w6 = _mm512_set1_epi32(ox_qg_w4(wt + 24)),          \
					      w7 = _mm512_set1_epi32(ox_qg_w4(wt + 28));          \
				V##L(OX_QG_LOAD);                                                  \
				V(OX_QG_DP);                                                      \
			}                                                                         \
		}                                                                                 \
		V(OX_QG_PUT);                                                                     \
	}
#define OX_QG_V1(f) OX_QG_ROWS(f, 0)
#define OX_QG_V1L(f) f(0)
#define OX_QG_V2(f) OX_QG_ROWS(f, 0); OX_QG_ROWS(f, 1)
#define OX_QG_V2L(f) f(0); f(1)
#define OX_QG_V3(f) OX_QG_ROWS(f, 0); OX_QG_ROWS(f, 1); OX_QG_ROWS(f, 2)
#define OX_QG_V3L(f) f(0); f(1); f(2)
OX_QG_SUMS(1, OX_QG_V1)
OX_QG_SUMS(2, OX_QG_V2)
OX_QG_SUMS(3, OX_QG_V3)
#endif

OX_STATIC OX_UNUSED void ox_qg_sums(const ox_qgeo *q, const uint8_t *restrict xp, const int8_t *restrict w,
				    int32_t *restrict acc, int nv)
{
	const long C4 = q->C4, cs = q->cs;
#if OX_QG_VNNI
	(void)C4, (void)cs;
	if (nv == 1)
		ox_qg_sums1(q, xp, w, acc);
	else if (nv == 2)
		ox_qg_sums2(q, xp, w, acc);
	else
		ox_qg_sums3(q, xp, w, acc);
#elif OX_QG_SDOT
	/* 8 rows x 12 pixels at a time (24 accumulators of 4 pixels): a tap's
	 * four channels of 4 pixels (flipped to int8) dotted with each row's
	 * four weights (a lane of the rows' two vectors); the flip's
	 * -128 sum w is added back in ox_qg_store */
	const uint8x16_t flip = vdupq_n_u8(0x80);
	for (long j0 = 0; j0 < 16 * nv; j0 += 12) {
		int32x4_t s0[8], s1[8], s2[8];
		for (int i = 0; i < 8; i++)
			s0[i] = s1[i] = s2[i] = vdupq_n_s32(0);
		for (long t = 0; t < q->T; t++) {
			const uint8_t *xt = xp + q->off[t] + j0 * 4;
			const int8_t *wt = w + t * C4 * 32;
			for (long c = 0; c < C4; c++, xt += cs, wt += 32) {
				const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xt), flip));
				const int8x16_t x1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xt + 16), flip));
				const int8x16_t x2 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xt + 32), flip));
				const int8x16_t wa = vld1q_s8(wt), wb = vld1q_s8(wt + 16);
#define OX_QG_SD(i, wv, l)                                         \
	s0[i] = vdotq_laneq_s32(s0[i], x0, wv, l);                 \
	s1[i] = vdotq_laneq_s32(s1[i], x1, wv, l);                 \
	s2[i] = vdotq_laneq_s32(s2[i], x2, wv, l)
				OX_QG_SD(0, wa, 0);
				OX_QG_SD(1, wa, 1);
				OX_QG_SD(2, wa, 2);
				OX_QG_SD(3, wa, 3);
				OX_QG_SD(4, wb, 0);
				OX_QG_SD(5, wb, 1);
				OX_QG_SD(6, wb, 2);
				OX_QG_SD(7, wb, 3);
#undef OX_QG_SD
			}
		}
		for (int i = 0; i < 8; i++) {
			vst1q_s32(acc + i * OX_QG_NR + j0, s0[i]);
			vst1q_s32(acc + i * OX_QG_NR + j0 + 4, s1[i]);
			vst1q_s32(acc + i * OX_QG_NR + j0 + 8, s2[i]);
		}
	}
#elif OX_QG_SMLAL
	/* 4 rows x 4 pixels at a time: 16 vectors of a pixel's four products
	 * (bytes widened to 16 bits, smlal), each added across at the end */
	for (long i0 = 0; i0 < 8; i0 += 4)
	for (long j0 = 0; j0 < 16 * nv; j0 += 4) {
		int32x4_t a00 = vdupq_n_s32(0), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
		int32x4_t a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
		for (long t = 0; t < q->T; t++) {
			const uint8_t *xt = xp + q->off[t] + j0 * 4;
			const int8_t *wt = w + t * C4 * 32 + i0 * 4;
			for (long c = 0; c < C4; c++, xt += cs, wt += 32) {
				const uint8x16_t xv = vld1q_u8(xt);
				const int16x8_t xl = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(xv)));
				const int16x8_t xh = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(xv)));
				const int8x16_t wv = vld1q_s8(wt);
				const int16x8_t wl = vmovl_s8(vget_low_s8(wv)), wh = vmovl_s8(vget_high_s8(wv));
				const int16x4_t x0 = vget_low_s16(xl), x1 = vget_high_s16(xl), x2 = vget_low_s16(xh),
						x3 = vget_high_s16(xh);
				const int16x4_t w0 = vget_low_s16(wl), w1 = vget_high_s16(wl), w2 = vget_low_s16(wh),
						w3 = vget_high_s16(wh);
#define OX_QG_ML(r, wr)                                                                                    \
	a##r##0 = vmlal_s16(a##r##0, x0, wr), a##r##1 = vmlal_s16(a##r##1, x1, wr), a##r##2 = vmlal_s16(a##r##2, x2, wr), \
	a##r##3 = vmlal_s16(a##r##3, x3, wr)
				OX_QG_ML(0, w0);
				OX_QG_ML(1, w1);
				OX_QG_ML(2, w2);
				OX_QG_ML(3, w3);
#undef OX_QG_ML
			}
		}
#define OX_QG_PUT4(r)                                                                                      \
	acc[(i0 + r) * OX_QG_NR + j0] = vaddvq_s32(a##r##0), acc[(i0 + r) * OX_QG_NR + j0 + 1] = vaddvq_s32(a##r##1), \
	acc[(i0 + r) * OX_QG_NR + j0 + 2] = vaddvq_s32(a##r##2), acc[(i0 + r) * OX_QG_NR + j0 + 3] = vaddvq_s32(a##r##3)
		OX_QG_PUT4(0);
		OX_QG_PUT4(1);
		OX_QG_PUT4(2);
		OX_QG_PUT4(3);
#undef OX_QG_PUT4
	}
#elif OX_QG_MADD
	/* pmaddwd on 16-bit values: a pixel's four bytes become two 32-bit
	 * lanes (channels 0-1, 2-3), added pairwise at the end; 4 rows x 3
	 * vectors of OX_QG_MADD pixels at a time (12 sums, 3 pixels' and a
	 * weight's vector: 16 registers); past 16 nv up to a multiple of 3
	 * vectors (the scratch and acc have room to OX_QG_NR) */
	const long step = 3 * OX_QG_MADD, nj = (16 * nv + step - 1) / step * step;
#if OX_QG_MADD == 4
	typedef __m256i ox_qgv;
#define OX_QG_VZERO() _mm256_setzero_si256()
#define OX_QG_VX(p) _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(p)))
#define OX_QG_VW(p) _mm256_cvtepi8_epi16(_mm_set1_epi32(ox_qg_w4(p)))
#define OX_QG_VMAC(s, x, wv) s = _mm256_add_epi32(s, _mm256_madd_epi16(x, wv))
#define OX_QG_VPUT(p, s)                                                                  \
	_mm_storeu_si128((__m128i *)(p), _mm256_castsi256_si128(_mm256_permute4x64_epi64(   \
						 _mm256_hadd_epi32(s, s), 0x08)))
#else
	typedef __m128i ox_qgv;
#define OX_QG_VZERO() _mm_setzero_si128()
#define OX_QG_VX(p) _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(p)), _mm_setzero_si128())
#define OX_QG_VW(p) _mm_srai_epi16(_mm_unpacklo_epi8(_mm_set1_epi32(ox_qg_w4(p)), _mm_set1_epi32(ox_qg_w4(p))), 8)
#define OX_QG_VMAC(s, x, wv) s = _mm_add_epi32(s, _mm_madd_epi16(x, wv))
#define OX_QG_VPUT(p, s)                                                                          \
	do {                                                                                      \
		const __m128i h = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1))); \
		(p)[0] = _mm_cvtsi128_si32(h), (p)[1] = _mm_cvtsi128_si32(_mm_srli_si128(h, 8));  \
	} while (0)
#endif
	for (long i0 = 0; i0 < 8; i0 += 4)
	for (long j0 = 0; j0 < nj; j0 += step) {
		ox_qgv s00 = OX_QG_VZERO(), s01 = s00, s02 = s00, s10 = s00, s11 = s00, s12 = s00;
		ox_qgv s20 = s00, s21 = s00, s22 = s00, s30 = s00, s31 = s00, s32 = s00;
		for (long t = 0; t < q->T; t++) {
			const uint8_t *xt = xp + q->off[t] + j0 * 4;
			const int8_t *wt = w + t * C4 * 32 + i0 * 4;
			for (long c = 0; c < C4; c++, xt += cs, wt += 32) {
				const ox_qgv x0 = OX_QG_VX(xt), x1 = OX_QG_VX(xt + 4 * OX_QG_MADD),
					     x2 = OX_QG_VX(xt + 8 * OX_QG_MADD);
				ox_qgv wv = OX_QG_VW(wt);
				OX_QG_VMAC(s00, x0, wv), OX_QG_VMAC(s01, x1, wv), OX_QG_VMAC(s02, x2, wv);
				wv = OX_QG_VW(wt + 4);
				OX_QG_VMAC(s10, x0, wv), OX_QG_VMAC(s11, x1, wv), OX_QG_VMAC(s12, x2, wv);
				wv = OX_QG_VW(wt + 8);
				OX_QG_VMAC(s20, x0, wv), OX_QG_VMAC(s21, x1, wv), OX_QG_VMAC(s22, x2, wv);
				wv = OX_QG_VW(wt + 12);
				OX_QG_VMAC(s30, x0, wv), OX_QG_VMAC(s31, x1, wv), OX_QG_VMAC(s32, x2, wv);
			}
		}
		int32_t *a = acc + i0 * OX_QG_NR + j0;
		OX_QG_VPUT(a, s00);
		OX_QG_VPUT(a + OX_QG_MADD, s01);
		OX_QG_VPUT(a + 2 * OX_QG_MADD, s02);
		OX_QG_VPUT(a + OX_QG_NR, s10);
		OX_QG_VPUT(a + OX_QG_NR + OX_QG_MADD, s11);
		OX_QG_VPUT(a + OX_QG_NR + 2 * OX_QG_MADD, s12);
		OX_QG_VPUT(a + 2 * OX_QG_NR, s20);
		OX_QG_VPUT(a + 2 * OX_QG_NR + OX_QG_MADD, s21);
		OX_QG_VPUT(a + 2 * OX_QG_NR + 2 * OX_QG_MADD, s22);
		OX_QG_VPUT(a + 3 * OX_QG_NR, s30);
		OX_QG_VPUT(a + 3 * OX_QG_NR + OX_QG_MADD, s31);
		OX_QG_VPUT(a + 3 * OX_QG_NR + 2 * OX_QG_MADD, s32);
	}
#undef OX_QG_VZERO
#undef OX_QG_VX
#undef OX_QG_VW
#undef OX_QG_VMAC
#undef OX_QG_VPUT
#else
	/* 4 rows x 4 pixels at a time: 16 sums (registers on most cores), 32
	 * byte loads per 64 products */
	(void)C4, (void)cs;
	for (long i0 = 0; i0 < 8; i0 += 4)
	for (long j0 = 0; j0 < 16 * nv; j0 += 4) {
		uint32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
		uint32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
		for (long t = 0; t < q->T; t++) {
			const uint8_t *xv = xp + q->off[t] + j0 * 4;
			const int8_t *wv = w + t * q->C4 * 32 + i0 * 4;
			for (long c = 0; c < q->C4; c++, xv += q->cs, wv += 32)
				for (int k = 0; k < 4; k++) {
					const int32_t x0 = xv[k], x1 = xv[4 + k], x2 = xv[8 + k], x3 = xv[12 + k];
					const int32_t w0 = wv[k], w1 = wv[4 + k], w2 = wv[8 + k], w3 = wv[12 + k];
#define OX_QG_MAC(i, wi)                                                                          \
	s##i##0 += (uint32_t)(wi * x0), s##i##1 += (uint32_t)(wi * x1), s##i##2 += (uint32_t)(wi * x2), \
		s##i##3 += (uint32_t)(wi * x3)
					OX_QG_MAC(0, w0);
					OX_QG_MAC(1, w1);
					OX_QG_MAC(2, w2);
					OX_QG_MAC(3, w3);
#undef OX_QG_MAC
				}
		}
#define OX_QG_OUT(i)                                                                              \
	acc[(i0 + i) * OX_QG_NR + j0] = (int32_t)s##i##0, acc[(i0 + i) * OX_QG_NR + j0 + 1] = (int32_t)s##i##1, \
	acc[(i0 + i) * OX_QG_NR + j0 + 2] = (int32_t)s##i##2, acc[(i0 + i) * OX_QG_NR + j0 + 3] = (int32_t)s##i##3
		OX_QG_OUT(0);
		OX_QG_OUT(1);
		OX_QG_OUT(2);
		OX_QG_OUT(3);
#undef OX_QG_OUT
	}
#endif
}

#if OX_QG_VNNI
/* ox_qi_rq of 16 values, the even 32-bit lanes and the odd ones apart in
 * 64-bit lanes. The rounding doubling high product is (x m + 2^30) >> 31
 * (an arithmetic shift: gemmlowp's nudge and truncation both come to
 * floor((x m + 2^30) / 2^31)), the rounding right shift by e is (h +
 * 2^(e-1) - [h < 0]) >> e (ties away from zero, as ox_qi_rq's remainder
 * test): the same values as ox_qi_rq for every operand */
static inline __m512i ox_qg_rq16(__m512i v, int32_t m, int32_t s)
{
	__m512i ev = _mm512_srai_epi64(_mm512_slli_epi64(v, 32), 32), od = _mm512_srai_epi64(v, 32);
	if (s > 0) {
		const __m128i c = _mm_cvtsi32_si128(s > 31 ? 31 : s);
		const __m512i lo = _mm512_set1_epi64(INT32_MIN), hi = _mm512_set1_epi64(INT32_MAX);
		ev = _mm512_min_epi64(_mm512_max_epi64(_mm512_sll_epi64(ev, c), lo), hi);
		od = _mm512_min_epi64(_mm512_max_epi64(_mm512_sll_epi64(od, c), lo), hi);
	}
	const __m512i vm = _mm512_set1_epi64(m), nudge = _mm512_set1_epi64((int64_t)1 << 30);
	ev = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(ev, vm), nudge), 31);
	od = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(od, vm), nudge), 31);
	if (s < 0) {
		const int e = -s > 62 ? 62 : -s;
		const __m128i c = _mm_cvtsi32_si128(e);
		const __m512i half = _mm512_set1_epi64((int64_t)1 << (e - 1));
		ev = _mm512_sra_epi64(_mm512_add_epi64(_mm512_add_epi64(ev, half), _mm512_srai_epi64(ev, 63)), c);
		od = _mm512_sra_epi64(_mm512_add_epi64(_mm512_add_epi64(od, half), _mm512_srai_epi64(od, 63)), c);
	}
	return _mm512_mask_blend_epi32((__mmask16)0xaaaa, ev, _mm512_slli_epi64(od, 32));
}

/* 16 sums requantized with multiplier m and shift s, plus the output zero
 * point, clamped: the 16 output bytes */
static inline __m128i ox_qg_out16(const ox_qgeo *q, __m512i v, int32_t m, int32_t s)
{
	__m512i r = _mm512_add_epi32(ox_qg_rq16(v, m, s), _mm512_set1_epi32(q->yz));
	r = _mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(q->lo)), _mm512_set1_epi32(q->hi));
	return _mm512_cvtepi32_epi8(r);
}
#endif

/* onnxcc::QLut: y[k] = lut[x[k]] of n bytes; AVX512-VBMI looks up 64 at a
 * time (two 128-byte halves of the table by vpermt2b, the index's top bit
 * choosing) */
OX_STATIC OX_UNUSED void ox_qg_lut(const uint8_t *restrict x, long n, const uint8_t *restrict lut, uint8_t *restrict y)
{
	long k = 0;
#if OX_QG_VNNI && defined(__AVX512VBMI__)
	const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64), t2 = _mm512_loadu_si512(lut + 128),
		      t3 = _mm512_loadu_si512(lut + 192);
	for (; k + 64 <= n; k += 64) {
		const __m512i v = _mm512_loadu_si512(x + k);
		const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
		_mm512_storeu_si512(y + k, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
	}
#endif
	for (; k < n; k++)
		y[k] = lut[x[k]];
}

/* onnxcc::QAdd's vectors (codegen/c/emit_quant.c prints its statements
 * per element, for the elements past them and for CUDA): y = clamp(yz +
 * rq(rq((a - za) 2^L, m0, s0) + rq((b - zb) 2^L, m1, s1), m2, s2), lo, hi),
 * p = {za, zb, L, m0, s0, m1, s1, m2, s2, yz, lo, hi}; sa, sb: the
 * operands are int8 (else uint8). Returns how many of the n it computed,
 * 16 at a time on AVX-512 (none elsewhere) */
OX_STATIC OX_UNUSED long ox_qg_add(const uint8_t *restrict a, int sa, const uint8_t *restrict b, int sb,
				   uint8_t *restrict y, long n, const int32_t *p)
{
	long k = 0;
#if OX_QG_VNNI
	for (; k + 16 <= n; k += 16) {
		const __m128i xa = _mm_loadu_si128((const __m128i *)(a + k)), xb = _mm_loadu_si128((const __m128i *)(b + k));
		const __m512i va = _mm512_slli_epi32(_mm512_sub_epi32(sa ? _mm512_cvtepi8_epi32(xa) : _mm512_cvtepu8_epi32(xa),
								     _mm512_set1_epi32(p[0])), (unsigned)p[2]);
		const __m512i vb = _mm512_slli_epi32(_mm512_sub_epi32(sb ? _mm512_cvtepi8_epi32(xb) : _mm512_cvtepu8_epi32(xb),
								     _mm512_set1_epi32(p[1])), (unsigned)p[2]);
		const __m512i s = _mm512_add_epi32(ox_qg_rq16(va, p[3], p[4]), ox_qg_rq16(vb, p[5], p[6]));
		const __m512i r = _mm512_add_epi32(ox_qg_rq16(s, p[7], p[8]), _mm512_set1_epi32(p[9]));
		_mm_storeu_si128((__m128i *)(y + k), _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(p[10])),
											    _mm512_set1_epi32(p[11]))));
	}
#else
	(void)a, (void)sa, (void)b, (void)sb, (void)y, (void)n, (void)p;
#endif
	return k;
}

/* Rows [0, nm) of a tile's sums into output channels m0 + i (planes of
 * y), the pixels p0 + j walked as oh W + ow; xs: the pixels' input sums
 * (NULL: every zw is 0) */
OX_STATIC OX_UNUSED void ox_qg_store(const ox_qgeo *q, const int32_t *restrict acc, const int32_t *restrict xs,
				     uint8_t *restrict y, long m0, long nm, long p0)
{
	uint8_t row[OX_QG_NR];
	const long nj = q->P - p0 < OX_QG_NR ? q->P - p0 : OX_QG_NR;
	for (long i = 0; i < nm; i++) {
		const long m = m0 + i;
		const int32_t *a = acc + i * OX_QG_NR;
		uint32_t c = (uint32_t)q->cm[m];
		const uint32_t zw = (uint32_t)q->zw[m];
#if OX_QG_SDOT
		c += 128u * (uint32_t)q->ws[m]; /* (the sums had x - 128) */
#endif
		long j = 0;
#if OX_QG_VNNI
		if (!xs)
			for (; j < nj; j += 16) { /* (the sums' vectors cover nj) */
				const __m512i v = _mm512_add_epi32(_mm512_loadu_si512(a + j), _mm512_set1_epi32((int32_t)c));
				_mm_storeu_si128((__m128i *)(row + j), ox_qg_out16(q, v, q->rm[m], q->rs[m]));
			}
#endif
		for (; j < nj; j++) {
			const uint32_t v = (uint32_t)a[j] + c - (xs ? zw * (uint32_t)xs[j] : 0);
			row[j] = (uint8_t)ox_qi_clamp(q->yz + ox_qi_rq((int32_t)v, q->rm[m], q->rs[m]), q->lo, q->hi);
		}
		uint8_t *ym = y + m * q->plane;
		if (q->W == q->OW) { /* no columns dropped: the tile is contiguous */
			memcpy(ym + p0, row, (size_t)nj);
			continue;
		}
		for (long j0 = 0; j0 < nj;) {
			const long p = p0 + j0, oh = p / q->W, ow = p % q->W;
			long len = q->W - ow;
			if (j0 + len > nj)
				len = nj - j0;
			if (ow < q->OW) {
				const long n = ow + len > q->OW ? q->OW - ow : len;
				memcpy(ym + oh * q->OW + ow, row + j0, (size_t)n);
			}
			j0 += len;
		}
	}
}

/* Tile tl of an image's group, its blocks [b0, b1) of output channels:
 * xb its scratch, w its first block of weights, ones the ones block (or
 * NULL), y the image's output, m0 the group's first output channel */
OX_STATIC OX_UNUSED void ox_qg_tile(const ox_qgeo *q, const uint8_t *restrict xb, const int8_t *restrict w,
				    const int8_t *restrict ones, uint8_t *restrict y, long m0, long tl, long b0, long b1)
{
	int32_t acc[8 * OX_QG_NR], xs[OX_QG_NR];
	const long p0 = tl * OX_QG_NR, blk = q->T * q->C4 * 32;
	const long nj = q->P - p0 < OX_QG_NR ? q->P - p0 : OX_QG_NR;
	const int nv = (int)((nj + 15) / 16);
	const uint8_t *xp = xb + p0 * 4;
	if (ones) {
		ox_qg_sums(q, xp, ones, acc, nv);
		memcpy(xs, acc, sizeof xs);
#if OX_QG_SDOT
		for (long j = 0; j < OX_QG_NR; j++) /* (the sums had x - 128 at all 4 T C4 ones) */
			xs[j] = (int32_t)((uint32_t)xs[j] + 512u * (uint32_t)(q->T * q->C4));
#endif
	}
	for (long b = b0; b < b1; b++) {
		ox_qg_sums(q, xp, w + b * blk, acc, nv);
		ox_qg_store(q, acc, ones ? xs : NULL, y, m0 + b * 8, q->Mg - b * 8 < 8 ? q->Mg - b * 8 : 8, p0);
	}
}

/* ---- depthwise (ox_qconvgeo's dw; weights OX_L_QDWW) ---- */

/* Output channel m of one image: xc its input channel, w its taps (int16,
 * less their zero point), ym its output plane, slot the task's scratch;
 * q->cm[m] is the bias. The channel is copied as int16 x - zx into the
 * padded plane [R][W] (R, W: the padded input's rows and columns; pads 0;
 * q->off: the taps' offsets there, in values), then each output row is
 * the taps' sums over its columns (column ow at ow SW), requantized. */
#if OX_QG_VNNI
#define OX_QG_DWT 49 /* taps whose weights the row's loop holds in vectors (up to 7x7) */
/* one output row of the depthwise kernel, 16 columns a time (the last
 * masked): T taps (a constant where the caller names one), weights wv
 * broadcast, columns at stride SW (1, or 2: the even values of 32);
 * returns the columns done (all) */
static inline __attribute__((always_inline)) long ox_qg_dw_row(const ox_qgeo *q, const int16_t *xo, const __m512i *wv,
								long T, long SW, int32_t bias, int32_t rm, int32_t rs,
								uint8_t *restrict yr)
{
	const long OW = q->OW;
	for (long j = 0; j < OW; j += 16) {
		__m512i s = _mm512_set1_epi32(bias);
#pragma GCC unroll 25
		for (long t = 0; t < T; t++) {
			const int16_t *xt = xo + q->off[t] + j * SW;
			const __m512i xv = SW == 1 ? _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)xt))
						   : _mm512_srai_epi32(_mm512_slli_epi32(_mm512_loadu_si512(xt), 16), 16);
			s = _mm512_add_epi32(s, _mm512_mullo_epi32(wv[t], xv));
		}
		const __mmask16 k = OW - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - j)) - 1);
		_mm_mask_storeu_epi8(yr + j, k, ox_qg_out16(q, s, rm, rs));
	}
	return OW;
}

/* The same row for a K x K kernel (K odd) whose taps of a row are
 * adjacent (off[ky K + kx] = off[ky K] + kx): vpmaddwd sums two taps of a
 * row at once, the pairs (x[c], x[c + 1]) being the plane's int16 values as
 * they lie. Stride 2: output column j reads c = 2 j + kx, so the pairs at
 * 2 j and 2 j + 2 (kx 0, 1 and 2, 3) are 16 consecutive int32 of the row.
 * Stride 1: the even columns' pairs start at even values and the odd
 * columns' at odd ones; 32 columns are two vectors of sums, requantized
 * and interleaved. wp[ky (K + 1) / 2 + p]: the pair (w[ky K + 2p], w[ky K +
 * 2p + 1]) as int16s (the last of a row with 0). */
static inline __attribute__((always_inline)) long ox_qg_dw_pairs(const ox_qgeo *q, const int16_t *xo, const __m512i *wp,
								  long K, long SW, int32_t bias, int32_t rm, int32_t rs,
								  uint8_t *restrict yr)
{
	const long OW = q->OW, KP = (K + 1) / 2;
	const __m512i b = _mm512_set1_epi32(bias);
	for (long j = 0; j < OW; j += 32 / SW) {
		__m512i se = b, so = b;
#pragma GCC unroll 7
		for (long ky = 0; ky < K; ky++) {
			const int16_t *xr = xo + q->off[ky * K] + j * SW;
#pragma GCC unroll 4
			for (long p = 0; p < KP; p++) {
				se = _mm512_add_epi32(se, _mm512_madd_epi16(_mm512_loadu_si512(xr + 2 * p), wp[ky * KP + p]));
				if (SW == 1)
					so = _mm512_add_epi32(so, _mm512_madd_epi16(_mm512_loadu_si512(xr + 2 * p + 1), wp[ky * KP + p]));
			}
		}
		if (SW == 2) {
			const __mmask16 k = OW - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - j)) - 1);
			_mm_mask_storeu_epi8(yr + j, k, ox_qg_out16(q, se, rm, rs));
		} else {
			const __m128i e = ox_qg_out16(q, se, rm, rs), o = ox_qg_out16(q, so, rm, rs);
			const __mmask32 k = OW - j >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << (OW - j)) - 1);
			_mm256_mask_storeu_epi8(yr + j, k, _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(e, o)),
										  _mm_unpackhi_epi8(e, o), 1));
		}
	}
	return OW;
}

/* A small image at strides 1 (OW < 32): the plane walked as one row, the
 * outputs at f = oh W + ow (the W - OW columns between rows computed and
 * dropped), so that 32 outputs cover several rows; ym: the channel's
 * output plane */
static inline __attribute__((always_inline)) void ox_qg_dw_flat(const ox_qgeo *q, const int16_t *xo, const __m512i *wp,
								 long K, int32_t bias, int32_t rm, int32_t rs,
								 uint8_t *restrict ym)
{
	const long OW = q->OW, W = q->W, OH = q->P / OW, F = (OH - 1) * W + OW, KP = (K + 1) / 2;
	const __m512i b = _mm512_set1_epi32(bias);
	long oh = 0, ow = 0; /* where f = j lies */
	for (long j = 0; j < F; j += 32) {
		__m512i se = b, so = b;
#pragma GCC unroll 7
		for (long ky = 0; ky < K; ky++) {
			const int16_t *xr = xo + q->off[ky * K] + j;
#pragma GCC unroll 4
			for (long p = 0; p < KP; p++) {
				se = _mm512_add_epi32(se, _mm512_madd_epi16(_mm512_loadu_si512(xr + 2 * p), wp[ky * KP + p]));
				so = _mm512_add_epi32(so, _mm512_madd_epi16(_mm512_loadu_si512(xr + 2 * p + 1), wp[ky * KP + p]));
			}
		}
		const __m128i e = ox_qg_out16(q, se, rm, rs), o = ox_qg_out16(q, so, rm, rs);
		uint8_t t[64];
		_mm256_storeu_si256((__m256i *)t, _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(e, o)),
									   _mm_unpackhi_epi8(e, o), 1));
		for (long f = j, end = F - j < 32 ? F : j + 32; f < end;) { /* each row's run of outputs */
			if (ow < OW) {
				const long n = OW - ow < end - f ? OW - ow : end - f;
				_mm256_mask_storeu_epi8(ym + oh * OW + ow, (__mmask32)(((uint64_t)1 << n) - 1),
							_mm256_loadu_si256((const __m256i *)(t + (f - j))));
				f += n, ow += n;
			} else {
				const long n = W - ow < end - f ? W - ow : end - f;
				f += n, ow += n;
			}
			if (ow == W)
				ow = 0, oh++;
		}
	}
}

/* is q's kernel K x K with each row's taps adjacent in the plane? */
static inline int ox_qg_dw_square(const ox_qgeo *q, long K)
{
	if (q->T != K * K)
		return 0;
	for (long t = 0; t < q->T; t++)
		if (q->off[t] != q->off[t / K * K] + t % K)
			return 0;
	return 1;
}
#endif

OX_STATIC OX_UNUSED void ox_qg_dw(const ox_qgeo *q, const uint8_t *restrict xc, const int16_t *restrict w, long m,
				  uint8_t *restrict ym, int16_t *restrict slot)
{
	const int32_t bias = q->cm[m];
	const long R = q->R, W = q->W, OW = q->OW, IW = q->IW, PW = q->PW, SW = q->SW;
	const uint8_t xf = (uint8_t)q->xf;
	const int16_t xz = (int16_t)q->xz;
	int16_t *o = slot;
	for (long r = 0; r < R; r++, o += W) {
		const long ih = r - q->PH, n = IW < W - PW ? IW : W - PW;
		if (ih < 0 || ih >= q->IH || n <= 0) {
			memset(o, 0, (size_t)W * sizeof *o);
			continue;
		}
		const uint8_t *xr = xc + ih * IW;
		for (long j = 0; j < PW; j++)
			o[j] = 0;
		long j = 0;
#if OX_QG_VNNI
		for (; j < n; j += 32) { /* the last 32 masked */
			const __mmask32 k = n - j >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << (n - j)) - 1);
			_mm512_mask_storeu_epi16(o + PW + j, k, _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_xor_si256(
				_mm256_maskz_loadu_epi8(k, xr + j), _mm256_set1_epi8((char)xf))), _mm512_set1_epi16(xz)));
		}
#elif OX_QG_MADD == 4
		for (; j + 16 <= n; j += 16)
			_mm256_storeu_si256((__m256i *)(o + PW + j), _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_xor_si128(
				_mm_loadu_si128((const __m128i *)(xr + j)), _mm_set1_epi8((char)xf))), _mm256_set1_epi16(xz)));
#endif
		for (; j < n; j++)
			o[PW + j] = (int16_t)((xr[j] ^ xf) - xz);
		for (j = PW + n; j < W; j++)
			o[j] = 0;
	}
	memset(o, 0, 64 * sizeof *o); /* the overrun of the last row's vectors */
	const int32_t rm = q->rm[m], rs = q->rs[m];
	const long OH = q->P / OW;
#if OX_QG_VNNI
	__m512i wv[OX_QG_DWT], wp[15];
	for (long t = 0; t < q->T && t < OX_QG_DWT; t++)
		wv[t] = _mm512_set1_epi32(w[t]);
	const long K = ox_qg_dw_square(q, 3) ? 3 : ox_qg_dw_square(q, 5) ? 5 : 0;
	for (long ky = 0; ky < K; ky++)
		for (long p = 0; p < (K + 1) / 2; p++) {
			const int16_t w1 = 2 * p + 1 < K ? w[ky * K + 2 * p + 1] : 0;
			wp[ky * ((K + 1) / 2) + p] = _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)w[ky * K + 2 * p] |
									      (uint32_t)(uint16_t)w1 << 16));
		}
	if (K == 3 && SW == 1 && q->SH == 1 && OW < 32) {
		ox_qg_dw_flat(q, slot, wp, 3, bias, rm, rs, ym);
		return;
	}
	if (K == 5 && SW == 1 && q->SH == 1 && OW < 32) {
		ox_qg_dw_flat(q, slot, wp, 5, bias, rm, rs, ym);
		return;
	}
#endif
	for (long oh = 0; oh < OH; oh++) {
		const int16_t *xo = slot + oh * q->SH * W;
		uint8_t *yr = ym + oh * OW;
		long j = 0;
#if OX_QG_VNNI
		/* (3x3 and 5x5, stride 1 and 2: constants, the taps unrolled;
		 * pairs of taps by vpmaddwd where the kernel is square) */
		if (K == 3 && SW == 1)
			j = ox_qg_dw_pairs(q, xo, wp, 3, 1, bias, rm, rs, yr);
		else if (K == 3 && SW == 2)
			j = ox_qg_dw_pairs(q, xo, wp, 3, 2, bias, rm, rs, yr);
		else if (K == 5 && SW == 1)
			j = ox_qg_dw_pairs(q, xo, wp, 5, 1, bias, rm, rs, yr);
		else if (K == 5 && SW == 2)
			j = ox_qg_dw_pairs(q, xo, wp, 5, 2, bias, rm, rs, yr);
		else if (SW == 1 && q->T == 9)
			j = ox_qg_dw_row(q, xo, wv, 9, 1, bias, rm, rs, yr);
		else if (SW == 2 && q->T == 9)
			j = ox_qg_dw_row(q, xo, wv, 9, 2, bias, rm, rs, yr);
		else if (SW == 1 && q->T == 25)
			j = ox_qg_dw_row(q, xo, wv, 25, 1, bias, rm, rs, yr);
		else if (SW == 2 && q->T == 25)
			j = ox_qg_dw_row(q, xo, wv, 25, 2, bias, rm, rs, yr);
		else if (SW <= 2 && q->T <= OX_QG_DWT)
			j = ox_qg_dw_row(q, xo, wv, q->T, SW, bias, rm, rs, yr);
#elif OX_QG_MADD == 4
		for (; j + 8 <= OW && SW == 1; j += 8) {
			__m256i s = _mm256_set1_epi32(bias);
			for (long t = 0; t < q->T; t++)
				s = _mm256_add_epi32(s, _mm256_mullo_epi32(_mm256_set1_epi32(w[t]), _mm256_cvtepi16_epi32(
					_mm_loadu_si128((const __m128i *)(xo + q->off[t] + j)))));
			int32_t a[8];
			_mm256_storeu_si256((__m256i *)a, s);
			for (int i = 0; i < 8; i++)
				yr[j + i] = (uint8_t)ox_qi_clamp(q->yz + ox_qi_rq(a[i], rm, rs), q->lo, q->hi);
		}
#endif
		for (; j < OW; j++) {
			uint32_t s = (uint32_t)bias;
			for (long t = 0; t < q->T; t++)
				s += (uint32_t)(w[t] * xo[q->off[t] + j * SW]);
			yr[j] = (uint8_t)ox_qi_clamp(q->yz + ox_qi_rq((int32_t)s, rm, rs), q->lo, q->hi);
		}
	}
}

/* ---- the packed integer GEMM (MatMulInteger with a constant B:
 * ox_qmmgeo, OX_L_QGEMMB) ---- */

/* four bytes of a row from k (those past K zero) */
static inline uint32_t ox_qg_a4(const uint8_t *a, long k, long K)
{
	uint32_t v = 0;
	if (k + 4 <= K)
		memcpy(&v, a + k, 4);
	else
		for (long i = 0; k + i < K; i++)
			v |= (uint32_t)a[k + i] << (8 * i);
	return v;
}

/* Rows [r0, r1) of y = (a - za)(b - zb), int32 R x N: a R x K bytes (flip
 * af to the unsigned domain, za its zero point there), b the packed
 * signed bytes, bs[j] the packed column sums, bz[j] the columns' zero
 * points in the signed domain (NULL: all 0). Exact modulo 2^32:
 *   sum_k (a - za)(b - zb) = sum_k a b - zb sum_k a - za bs + K za zb. */
/* one row of ox_qg_mm from column j0: ar its bytes, sa their sum in the
 * unsigned domain (when bz), yr its output (yf: floats, the sums
 * converted as a Cast does) */
static inline void ox_qg_mmrow(const uint8_t *restrict ar, const int8_t *restrict b, const int32_t *restrict bs,
			       const int32_t *restrict bz, int32_t za, int af, long K, long N, long j0, uint32_t sa,
			       int32_t *restrict yr, int yf)
{
	const long K4 = (K + 3) / 4;
	const uint32_t fl = (uint32_t)af * 0x01010101u;
	long j = j0;
#if OX_QG_VNNI
	for (; j < N; j += 64) { /* four vectors of 16 columns (the last ones masked) */
		const long nv = (N - j + 15) / 16 < 4 ? (N - j + 15) / 16 : 4;
		const int8_t *bj = b + j / 16 * K4 * 64;
		__m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
		for (long k4 = 0; k4 < K4; k4++) {
			const __m512i av = _mm512_set1_epi32((int32_t)(ox_qg_a4(ar, 4 * k4, K) ^ fl));
			const int8_t *bk = bj + k4 * 64;
			s0 = _mm512_dpbusd_epi32(s0, av, _mm512_loadu_si512(bk));
			if (nv > 1)
				s1 = _mm512_dpbusd_epi32(s1, av, _mm512_loadu_si512(bk + K4 * 64));
			if (nv > 2)
				s2 = _mm512_dpbusd_epi32(s2, av, _mm512_loadu_si512(bk + 2 * K4 * 64));
			if (nv > 3)
				s3 = _mm512_dpbusd_epi32(s3, av, _mm512_loadu_si512(bk + 3 * K4 * 64));
		}
		const __m512i sv[4] = {s0, s1, s2, s3};
		for (long v = 0; v < nv; v++) {
			const long jj = j + 16 * v, left = N - jj;
			const __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
			const __m512i bsv = _mm512_maskz_loadu_epi32(m, bs + jj);
			__m512i o = _mm512_sub_epi32(sv[v], _mm512_mullo_epi32(_mm512_set1_epi32(za), bsv));
			if (bz) {
				const __m512i bzv = _mm512_maskz_loadu_epi32(m, bz + jj);
				o = _mm512_add_epi32(o, _mm512_mullo_epi32(bzv, _mm512_set1_epi32((int32_t)((uint32_t)K * (uint32_t)za - sa))));
			}
			if (yf)
				_mm512_mask_storeu_ps((float *)yr + jj, m, _mm512_cvtepi32_ps(o));
			else
				_mm512_mask_storeu_epi32(yr + jj, m, o);
		}
	}
#endif
	for (; j < N; j++) {
		const int8_t *bj = b + (j / 16 * K4 * 16 + j % 16) * 4;
		uint32_t s = 0;
		for (long k4 = 0; k4 < K4; k4++) {
			const uint32_t av = ox_qg_a4(ar, 4 * k4, K) ^ fl;
			const int8_t *bk = bj + k4 * 64;
			s += (uint32_t)((int32_t)(av & 255) * bk[0] + (int32_t)(av >> 8 & 255) * bk[1] +
					(int32_t)(av >> 16 & 255) * bk[2] + (int32_t)(av >> 24) * bk[3]);
		}
		const uint32_t zb = bz ? (uint32_t)bz[j] : 0;
		const int32_t v = (int32_t)(s - zb * sa - (uint32_t)za * (uint32_t)bs[j] + (uint32_t)K * (uint32_t)za * zb);
		if (yf)
			((float *)yr)[j] = (float)v;
		else
			yr[j] = v;
	}
}

#if OX_QG_VNNI
/* 4 rows (a, lda K) x 64 columns from j (nv vectors of 16, the last ones
 * masked) of ox_qg_mm: 16 accumulators, a row's four bytes broadcast */
#define OX_QG_MMDP(i, v) s##i##v = _mm512_dpbusd_epi32(s##i##v, a##i, b##v)
#define OX_QG_MMROW(f, i) f(i, 0); f(i, 1); f(i, 2); f(i, 3)
static inline void ox_qg_mm4(const uint8_t *restrict ar, const int8_t *restrict bj, long K, long K4, uint32_t fl,
			     __m512i out[4][4])
{
	__m512i s00 = _mm512_setzero_si512(), s01 = s00, s02 = s00, s03 = s00, s10 = s00, s11 = s00, s12 = s00, s13 = s00;
	__m512i s20 = s00, s21 = s00, s22 = s00, s23 = s00, s30 = s00, s31 = s00, s32 = s00, s33 = s00;
	for (long k4 = 0; k4 < K4; k4++) {
		const __m512i a0 = _mm512_set1_epi32((int32_t)(ox_qg_a4(ar, 4 * k4, K) ^ fl));
		const __m512i a1 = _mm512_set1_epi32((int32_t)(ox_qg_a4(ar + K, 4 * k4, K) ^ fl));
		const __m512i a2 = _mm512_set1_epi32((int32_t)(ox_qg_a4(ar + 2 * K, 4 * k4, K) ^ fl));
		const __m512i a3 = _mm512_set1_epi32((int32_t)(ox_qg_a4(ar + 3 * K, 4 * k4, K) ^ fl));
		const int8_t *bk = bj + k4 * 64;
		const __m512i b0 = _mm512_loadu_si512(bk), b1 = _mm512_loadu_si512(bk + K4 * 64);
		const __m512i b2 = _mm512_loadu_si512(bk + 2 * K4 * 64), b3 = _mm512_loadu_si512(bk + 3 * K4 * 64);
		OX_QG_MMROW(OX_QG_MMDP, 0);
		OX_QG_MMROW(OX_QG_MMDP, 1);
		OX_QG_MMROW(OX_QG_MMDP, 2);
		OX_QG_MMROW(OX_QG_MMDP, 3);
	}
	out[0][0] = s00, out[0][1] = s01, out[0][2] = s02, out[0][3] = s03;
	out[1][0] = s10, out[1][1] = s11, out[1][2] = s12, out[1][3] = s13;
	out[2][0] = s20, out[2][1] = s21, out[2][2] = s22, out[2][3] = s23;
	out[3][0] = s30, out[3][1] = s31, out[3][2] = s32, out[3][3] = s33;
}
#undef OX_QG_MMDP
#undef OX_QG_MMROW
#endif

/* Rows [r0, r1) of y = (a - za)(b - zb), int32 R x N: a R x K bytes (flip
 * af to the unsigned domain, za its zero point there), b the packed
 * signed bytes, bs[j] the packed column sums, bz[j] the columns' zero
 * points in the signed domain (NULL: all 0). Exact modulo 2^32:
 *   sum_k (a - za)(b - zb) = sum_k a b - zb sum_k a - za bs + K za zb.
 * With AVX512-VNNI 4 rows x 64 columns at a time (B's 64 columns stay in
 * L1 over the rows; the rows' bytes are read 4 at a time; a column past
 * N reads zeros of the packed padding); plain C a column at a time. y
 * (yv) holds int32, or floats when yf (a folded Cast). */
OX_STATIC OX_UNUSED void ox_qg_mm(const uint8_t *restrict a, const int8_t *restrict b, const int32_t *restrict bs,
				  const int32_t *restrict bz, int32_t za, int af, long K, long N, long r0, long r1,
				  void *restrict yv, int yf)
{
	const long K4 = (K + 3) / 4;
	const uint32_t fl = (uint32_t)af * 0x01010101u;
	int32_t *y = yv;
	long r = r0;
#if OX_QG_VNNI
	for (; r + 4 <= r1; r += 4) {
		uint32_t sa[4] = {0, 0, 0, 0};
		for (int i = 0; i < 4 && bz; i++)
			for (long k = 0; k < K; k++)
				sa[i] += (uint32_t)(a[(r + i) * K + k] ^ af);
		for (long j = 0; j + 64 <= N; j += 64) {
			__m512i s[4][4];
			ox_qg_mm4(a + r * K, b + j / 16 * K4 * 64, K, K4, fl, s);
			for (int i = 0; i < 4; i++)
				for (long v = 0; v < 4; v++) {
					const long jj = j + 16 * v;
					__m512i o = _mm512_sub_epi32(s[i][v], _mm512_mullo_epi32(_mm512_set1_epi32(za),
												   _mm512_loadu_si512(bs + jj)));
					if (bz)
						o = _mm512_add_epi32(o, _mm512_mullo_epi32(_mm512_loadu_si512(bz + jj),
							_mm512_set1_epi32((int32_t)((uint32_t)K * (uint32_t)za - sa[i]))));
					if (yf)
						_mm512_storeu_ps((float *)y + (r + i) * N + jj, _mm512_cvtepi32_ps(o));
					else
						_mm512_storeu_si512(y + (r + i) * N + jj, o);
				}
		}
		/* columns past the last whole 64 */
		const long jt = N / 64 * 64;
		if (jt < N)
			for (int i = 0; i < 4; i++)
				ox_qg_mmrow(a + (r + i) * K, b, bs, bz, za, af, K, N, jt, sa[i], y + (r + i) * N, yf);
	}
#endif
	for (; r < r1; r++) {
		const uint8_t *ar = a + r * K;
		uint32_t sa = 0;
		for (long k = 0; bz && k < K; k++)
			sa += (uint32_t)(ar[k] ^ af);
		ox_qg_mmrow(ar, b, bs, bz, za, af, K, N, 0, sa, y + r * N, yf);
	}
}
