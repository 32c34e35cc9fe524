/* mmnb.c: com.microsoft MatMulNBits (codegen/c/emit_quant.c prints the
 * calls): y[n] = sum_k a[k] W[n][k] (+ bias[n]) of an f32 row a [K] and
 * weights W [N, K] kept in their 4- or 8-bit blocks (never dequantized
 * into memory): block b of column n is (q - z) s, q the block's values
 * (4-bit: byte j holds values 2j, low nibble, and 2j + 1), s =
 * sc[n nb + b], z its zero point (zf[n nb + b]; or zq, uint8 packed as q
 * is, zrow bytes a column; else 2^(bits-1)). Each block's sum of (q - z)
 * a, times s, into the column's sum: AVX-512 16 values a vector (the
 * nibbles unpacked in registers), else plain C. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define OX_MMNB_AVX512 1
#endif

/* sum_k a[k] W[n][k] of one column n: bn its blocks, scn its scales, zqn
 * its packed zero points or zfn its f32 ones (or neither); the CUDA
 * kernel's thread too (codegen/cuda/cuda_quant.c) */
OX_STATIC OX_UNUSED float ox_mmnb_col(const float *a, long K, long bs, int bits, const uint8_t *bn, const float *scn,
				      const uint8_t *zqn, const float *zfn)
{
	const long nb = (K + bs - 1) / bs, blob = bs * bits / 8;
	float acc = 0.0f;
	long b = 0;
#if OX_MMNB_AVX512
	/* whole blocks: 32 values (4-bit: 16 bytes; blocks of 16, 8 bytes) or
	 * 16 (8-bit) a step */
	__m512 vacc = _mm512_setzero_ps();
	const __m512i lo15 = _mm512_set1_epi32(15);
	const __m512i ilo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
	const __m512i ihi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
	for (; b < nb && (b + 1) * bs <= K; b++) {
		const uint8_t *q = bn + b * blob;
		const float z = zfn ? zfn[b] : zqn ? (float)(bits == 4 ? zqn[b / 2] >> (b % 2 * 4) & 15 : zqn[b])
					  : (float)(1 << (bits - 1));
		const __m512 vz = _mm512_set1_ps(z);
		const float *ab = a + b * bs;
		__m512 s;
		if (bits == 4 && bs == 16) { /* (8 bytes: the lower half's lanes) */
			const __m512i v = _mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)q));
			const __m512i lo = _mm512_and_si512(v, lo15), hi = _mm512_srli_epi32(v, 4);
			const __m512 w0 = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_permutex2var_epi32(lo, ilo, hi)), vz);
			s = _mm512_mul_ps(w0, _mm512_loadu_ps(ab));
		} else if (bits == 4) {
			s = _mm512_setzero_ps();
			for (long j = 0; j < bs; j += 32) {
				const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + j / 2)));
				const __m512i lo = _mm512_and_si512(v, lo15), hi = _mm512_srli_epi32(v, 4);
				/* values j..j+15 and j+16..j+31 in order: lo, hi interleaved */
				const __m512 w0 = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_permutex2var_epi32(lo, ilo, hi)), vz);
				const __m512 w1 = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_permutex2var_epi32(lo, ihi, hi)), vz);
				s = _mm512_fmadd_ps(w0, _mm512_loadu_ps(ab + j), s);
				s = _mm512_fmadd_ps(w1, _mm512_loadu_ps(ab + j + 16), s);
			}
		} else {
			s = _mm512_setzero_ps();
			for (long j = 0; j < bs; j += 16) {
				const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + j)));
				s = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(v), vz), _mm512_loadu_ps(ab + j), s);
			}
		}
		vacc = _mm512_fmadd_ps(s, _mm512_set1_ps(scn[b]), vacc);
	}
	acc = _mm512_reduce_add_ps(vacc);
#endif
	for (; b < nb; b++) { /* (and a last partial block) */
		const uint8_t *q = bn + b * blob;
		const float z = zfn ? zfn[b] : zqn ? (float)(bits == 4 ? zqn[b / 2] >> (b % 2 * 4) & 15 : zqn[b])
					  : (float)(1 << (bits - 1));
		const long k0 = b * bs, kn = K - k0 < bs ? K - k0 : bs;
		float s = 0.0f;
		for (long i = 0; i < kn; i++) {
			const int v = bits == 4 ? q[i / 2] >> (i % 2 * 4) & 15 : q[i];
			s += ((float)v - z) * a[k0 + i];
		}
		acc += s * scn[b];
	}
	return acc;
}

/* columns [n0, n1) of row a */
OX_STATIC OX_UNUSED void ox_mmnb_row(const float *restrict a, long K, long bs, int bits, const uint8_t *restrict B,
				     const float *restrict sc, const uint8_t *restrict zq, const float *restrict zf,
				     const float *restrict bias, long n0, long n1, float *restrict y)
{
	const long nb = (K + bs - 1) / bs, blob = bs * bits / 8, zrow = (nb * bits + 7) / 8;
	for (long n = n0; n < n1; n++) {
		const float v = ox_mmnb_col(a, K, bs, bits, B + n * nb * blob, sc + n * nb, zq ? zq + n * zrow : NULL,
					    zf ? zf + n * nb : NULL);
		y[n] = bias ? v + bias[n] : v;
	}
}
