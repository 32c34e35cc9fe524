/* mmnb.c: com.microsoft MatMulNBits (codegen/c/emit_quant.c prints the
 * calls): Y[m][n] = sum_k A[m][k] W[n][k] (+ bias[n]) of rows A [M, K]
 * and weights W [N, K] kept in their 4- or 8-bit blocks (never
 * dequantized into memory): block b of column n is (q - z) s, q the
 * block's values (4-bit: byte j holds values 2j, low nibble, and 2j + 1),
 * s = sc[n nb + b], z its zero point (zf[n nb + b]; or zq, uint8 packed as
 * q is, zrow bytes a column; else 2^(bits-1)). Instantiated per type of
 * A (f32 or f16): A, the scales, float zero points, the bias and Y of it,
 * read as float (ox_ld_), summed in float, Y rounded once (ox_st_).
 * AVX-512, in the f32 instantiation only: each whole block of a column
 * dequantized once, in registers, for 16 rows of A at a time (the
 * prefill's rows share it); one row of A (a decode step) by 4-bit blocks
 * of 32 or more, ox_mmnb_row4; plain C elsewhere, for a last partial
 * block, for f16, and in the CUDA kernel's warps (ox_mmnb_col_). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define OX_MMNB_AVX512 1
#endif
#define OX_MMNB_F32_f32 1 /* (the instantiation the AVX-512 kernels are in) */

/* block b's zero point */
OX_STATIC inline OX_UNUSED $C ox_mmnb_z_$S(int bits, const uint8_t *zqn, const $T *zfn, long b)
{
	return zfn ? ox_ld_$S(zfn[b]) : zqn ? ($C)(bits == 4 ? zqn[b / 2] >> (b % 2 * 4) & 15 : zqn[b]) : ($C)(1 << (bits - 1));
}

/* value i of a block q */
OX_STATIC inline OX_UNUSED int ox_mmnb_q_$S(int bits, const uint8_t *q, long i)
{
	return bits == 4 ? q[i / 2] >> (i % 2 * 4) & 15 : q[i];
}

/* sum_k a[k] W[n][k] over column n's blocks b0, b0 + step, ... below nb:
 * bn its blocks, scn its scales, zqn its packed zero points or zfn its
 * float ones (or neither); a lane of the CUDA kernel's warp too, step 32
 * (codegen/cuda/cuda_quant.c) */
OX_STATIC OX_UNUSED $C ox_mmnb_col_$S(const $T *a, long K, long bs, int bits, const uint8_t *bn, const $T *scn,
				      const uint8_t *zqn, const $T *zfn, long b0, long step)
{
	const long nb = (K + bs - 1) / bs, blob = bs * bits / 8;
	$C acc = 0.0f;
	for (long b = b0; b < nb; b += step) {
		const uint8_t *q = bn + b * blob;
		const $C z = ox_mmnb_z_$S(bits, zqn, zfn, b);
		const long k0 = b * bs, kn = K - k0 < bs ? K - k0 : bs;
		$C s = 0.0f;
		for (long i = 0; i < kn; i++)
			s += (($C)ox_mmnb_q_$S(bits, q, i) - z) * ox_ld_$S(a[k0 + i]);
		acc += s * ox_ld_$S(scn[b]);
	}
	return acc;
}

#if OX_MMNB_AVX512 && OX_MMNB_F32_$S
/* out[r] = rows r < nr (nr <= 16, K apart) of a times column n's whole
 * blocks [0, nbw): each block's (q - z) s made once in registers (16 or
 * 32 values a step, the nibbles unpacked and put in order) for the rows;
 * inlined where nr is a constant (1: a decode step; 16), the rows'
 * sums in registers */
static inline __attribute__((always_inline)) void ox_mmnb_tile(const float *a, long K, int nr, long bs, int bits, const uint8_t *bn, const float *scn,
				const uint8_t *zqn, const float *zfn, long nbw, float *out)
{
	const long blob = bs * bits / 8;
	const __m512i lo15 = _mm512_set1_epi32(15);
	const __m512i ilo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
	const __m512i ihi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
	__m512 acc[16];
	for (int r = 0; r < nr; r++)
		acc[r] = _mm512_setzero_ps();
	for (long b = 0; b < nbw; b++) {
		const uint8_t *q = bn + b * blob;
		const __m512 vz = _mm512_set1_ps(ox_mmnb_z_$S(bits, zqn, zfn, b)), vs = _mm512_set1_ps(scn[b]);
		const float *ab = a + b * bs;
		for (long j = 0; j < bs; j += bits == 4 ? 32 : 16) {
			__m512 w0, w1 = _mm512_setzero_ps();
			if (bits == 4) {
				/* 16 bytes (a block of 16: 8, the upper lanes unused) */
				const __m128i x = bs == 16 ? _mm_loadl_epi64((const __m128i *)q) : _mm_loadu_si128((const __m128i *)(q + j / 2));
				const __m512i v = _mm512_cvtepu8_epi32(x);
				const __m512i lo = _mm512_and_si512(v, lo15), hi = _mm512_srli_epi32(v, 4);
				w0 = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_permutex2var_epi32(lo, ilo, hi)), vz), vs);
				if (bs > 16)
					w1 = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_permutex2var_epi32(lo, ihi, hi)), vz), vs);
			} else {
				const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + j)));
				w0 = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(v), vz), vs);
			}
			for (int r = 0; r < nr; r++) {
				acc[r] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(ab + r * K + j), acc[r]);
				if (bits == 4 && bs > 16)
					acc[r] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(ab + r * K + j + 16), acc[r]);
			}
		}
	}
	for (int r = 0; r < nr; r++)
		out[r] = _mm512_reduce_add_ps(acc[r]);
}
#endif

#if OX_MMNB_AVX512 && OX_MMNB_F32_$S
/* a 4-bit block q's sum of q a (16 lanes): its bytes as they lie, ab in
 * their order (ox_mmnb_row4) */
static inline __attribute__((always_inline)) __m512 ox_mmnb_dot4(const uint8_t *q, const float *ab, long bs)
{
	const __m512i lo15 = _mm512_set1_epi32(15);
	__m512 s = _mm512_setzero_ps();
	for (long j = 0; j < bs; j += 32) {
		const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + j / 2)));
		s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, lo15)), _mm512_loadu_ps(ab + j), s);
		s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4)), _mm512_loadu_ps(ab + j + 16), s);
	}
	return s;
}

/* sum over blocks [c0, c1) of column n's scale x zero point x as[b - c0]
 * (4-bit; c0 even), 16 blocks a step */
static inline __attribute__((always_inline)) float ox_mmnb_zsum(const uint8_t *zqn, const float *zfn, const float *scn,
								 const float *as, long c0, long c1)
{
	const __m512i lo15 = _mm512_set1_epi32(15);
	const __m512i ilo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
	__m512 acc = _mm512_setzero_ps();
	long b = c0;
	for (; b + 16 <= c1; b += 16) {
		__m512 z = _mm512_set1_ps(8.0f);
		if (zfn) {
			z = _mm512_loadu_ps(zfn + b);
		} else if (zqn) { /* 8 bytes: 16 nibbles, put in order */
			const __m512i v = _mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(zqn + b / 2)));
			z = _mm512_cvtepi32_ps(_mm512_permutex2var_epi32(_mm512_and_si512(v, lo15), ilo, _mm512_srli_epi32(v, 4)));
		}
		acc = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_loadu_ps(scn + b), z), _mm512_loadu_ps(as + b - c0), acc);
	}
	float r = _mm512_reduce_add_ps(acc);
	for (; b < c1; b++)
		r += scn[b] * ox_mmnb_z_$S(4, zqn, zfn, b) * as[b - c0];
	return r;
}

/* y[n + c] += the blocks [c0, c1) of columns n + c, c < nc (1 or 4), by
 * a's values a2 in the nibbles' order and its block sums as (ox_mmnb_row4):
 * the columns' chains side by side in registers, the zero points' term
 * after them */
static inline __attribute__((always_inline)) void ox_mmnb_cols4(const float *a2, const float *as, long bs,
								 const uint8_t *B, const float *sc, const uint8_t *zq,
								 const float *zf, long nb, long zrow, long c0, long c1, long n,
								 int nc, float *y)
{
	const long blob = bs / 2;
	const uint8_t *q0 = B + n * nb * blob, *q1 = q0 + nb * blob, *q2 = q1 + nb * blob, *q3 = q2 + nb * blob;
	const float *s0 = sc + n * nb, *s1 = s0 + nb, *s2 = s1 + nb, *s3 = s2 + nb;
	__m512 v0 = _mm512_setzero_ps(), v1 = v0, v2 = v0, v3 = v0;
	for (long b = c0; b < c1; b++) {
		const float *ab = a2 + (b - c0) * bs;
		_mm_prefetch((const char *)(q0 + b * blob) + 16384, _MM_HINT_T0); /* (the weights stream: 4 pages ahead) */
		v0 = _mm512_fmadd_ps(ox_mmnb_dot4(q0 + b * blob, ab, bs), _mm512_set1_ps(s0[b]), v0);
		if (nc == 4) {
			_mm_prefetch((const char *)(q1 + b * blob) + 16384, _MM_HINT_T0);
			_mm_prefetch((const char *)(q2 + b * blob) + 16384, _MM_HINT_T0);
			_mm_prefetch((const char *)(q3 + b * blob) + 16384, _MM_HINT_T0);
			v1 = _mm512_fmadd_ps(ox_mmnb_dot4(q1 + b * blob, ab, bs), _mm512_set1_ps(s1[b]), v1);
			v2 = _mm512_fmadd_ps(ox_mmnb_dot4(q2 + b * blob, ab, bs), _mm512_set1_ps(s2[b]), v2);
			v3 = _mm512_fmadd_ps(ox_mmnb_dot4(q3 + b * blob, ab, bs), _mm512_set1_ps(s3[b]), v3);
		}
	}
	const __m512 v[4] = {v0, v1, v2, v3};
	for (int c = 0; c < nc; c++)
		y[n + c] += _mm512_reduce_add_ps(v[c]) - ox_mmnb_zsum(zq ? zq + (n + c) * zrow : NULL, zf ? zf + (n + c) * nb : NULL,
								       sc + (n + c) * nb, as, c0, c1);
}

/* One row a (a decode step) and 4-bit blocks of 32 or more: y[n] += its
 * whole blocks [b0, b1) of columns [n0, n1). Per chunk of blocks, a's
 * values are put in the nibbles' order once (each 32: the even ones, then
 * the odd) with each block's sum, so that a block's sum of (q - z) a is
 * sum q a - z sum a, the nibbles converted as they lie: about half the
 * instructions of ox_mmnb_tile's. */
static void ox_mmnb_row4(const float *a, long bs, const uint8_t *B, const float *sc, const uint8_t *zq, const float *zf,
			 long nb, long zrow, long b0, long b1, long n0, long n1, float *y)
{
	float a2[1024], as[32]; /* (32 blocks of 32, fewer longer ones) */
	const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i od = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
	const long per = 1024 / bs;
	for (long c0 = b0; c0 < b1; c0 += per) {
		const long c1 = c0 + per < b1 ? c0 + per : b1;
		for (long b = c0; b < c1; b++) {
			__m512 sum = _mm512_setzero_ps();
			for (long j = 0; j < bs; j += 32) {
				const __m512 x0 = _mm512_loadu_ps(a + b * bs + j), x1 = _mm512_loadu_ps(a + b * bs + j + 16);
				float *d = a2 + (b - c0) * bs + j;
				_mm512_storeu_ps(d, _mm512_permutex2var_ps(x0, ev, x1));
				_mm512_storeu_ps(d + 16, _mm512_permutex2var_ps(x0, od, x1));
				sum = _mm512_add_ps(sum, _mm512_add_ps(x0, x1));
			}
			as[b - c0] = _mm512_reduce_add_ps(sum);
		}
		long n = n0;
		for (; n + 4 <= n1; n += 4) /* (4 columns: their chains side by side, a's loads shared) */
			ox_mmnb_cols4(a2, as, bs, B, sc, zq, zf, nb, zrow, c0, c1, n, 4, y);
		for (; n < n1; n++)
			ox_mmnb_cols4(a2, as, bs, B, sc, zq, zf, nb, zrow, c0, c1, n, 1, y);
	}
}
#endif

/* P[k][j] = W[n0 + j][k0 + k] for k < kc, j < gw (0 past column N - 1):
 * a chunk of a group of columns dequantized for the GEMM's tiles, the
 * panel's rows their weight rows (codegen/c/emit_quant.c). k0 is a
 * multiple of the block size. AVX-512: 16 columns at a time, a gathered
 * 32-bit word of each holding 8 (4-bit) or 4 (8-bit) values in order. In
 * the f32 instantiation (emit_quant.c takes the panels for f32 only). */
#if OX_MMNB_F32_$S
OX_STATIC OX_UNUSED void ox_mmnb_panel(const uint8_t *restrict B, const float *restrict sc,
				       const uint8_t *restrict zq, const float *restrict zf, long N, long K, long bs,
				       int bits, long n0, long gw, long k0, long kc, float *restrict P)
{
	const long nb = (K + bs - 1) / bs, blob = bs * bits / 8, zrow = (nb * bits + 7) / 8;
	long j0 = 0, kv = 0;
#if OX_MMNB_AVX512
	const int per = 32 / bits; /* values a word */
	kv = (K - k0 < kc ? K - k0 : kc) / per * per; /* (whole words inside K) */
	const __m512i cols = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
						_mm512_set1_epi32((int)(nb * blob)));
	const __m512i mask = _mm512_set1_epi32((1 << bits) - 1);
	for (; j0 + 16 <= gw && n0 + j0 + 16 <= N; j0 += 16) {
		const uint8_t *base = B + (n0 + j0) * nb * blob;
		__m512 vs = _mm512_setzero_ps(), vz = vs;
		for (long k = 0; k < kv; k += per) {
			const long kk = k0 + k, b = kk / bs;
			if (k == 0 || kk % bs == 0) { /* a new block: its 16 scales and zero points */
				float s[16], z[16];
				for (int c = 0; c < 16; c++) {
					const long n = n0 + j0 + c;
					s[c] = sc[n * nb + b];
					z[c] = ox_mmnb_z_$S(bits, zq ? zq + n * zrow : NULL, zf ? zf + n * nb : NULL, b);
				}
				vs = _mm512_loadu_ps(s), vz = _mm512_loadu_ps(z);
			}
			const __m512i w = _mm512_i32gather_epi32(_mm512_add_epi32(cols, _mm512_set1_epi32((int)(b * blob + kk % bs * bits / 8))),
								 (const void *)base, 1);
			for (int i = 0; i < per; i++) {
				const __m512i v = _mm512_and_si512(_mm512_srli_epi32(w, (unsigned)(i * bits)), mask);
				_mm512_storeu_ps(P + (k + i) * gw + j0, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(v), vz), vs));
			}
		}
	}
#endif
	for (long j = 0; j < gw; j++) /* (a last partial word of the columns above; the others) */
		for (long k = j < j0 ? kv : 0; k < kc; k++) {
			const long n = n0 + j, b = (k0 + k) / bs;
			P[k * gw + j] = n < N ? ((float)ox_mmnb_q_$S(bits, B + (n * nb + b) * blob, (k0 + k) % bs) -
						 ox_mmnb_z_$S(bits, zq ? zq + n * zrow : NULL, zf ? zf + n * nb : NULL, b)) *
							sc[n * nb + b]
					      : 0.0f;
		}
}
#endif

/* Y's rows [0, M) (N apart), columns [n0, n1), of A's rows (K apart) */
OX_STATIC OX_UNUSED void ox_mmnb_rows_$S(const $T *restrict A, long M, long K, long N, long bs, int bits,
					 const uint8_t *restrict B, const $T *restrict sc, const uint8_t *restrict zq,
					 const $T *restrict zf, const $T *restrict bias, long n0, long n1,
					 $T *restrict Y)
{
	const long nb = (K + bs - 1) / bs, blob = bs * bits / 8, zrow = (nb * bits + 7) / 8;
#if OX_MMNB_AVX512 && OX_MMNB_F32_$S
	if (M == 1 && bits == 4 && bs >= 32 && bs <= 1024) { /* (a decode step) */
		const long b1 = K / bs;
		for (long n = n0; n < n1; n++)
			Y[n] = (bias ? bias[n] : 0.0f) + (b1 < nb ? ox_mmnb_col_$S(A, K, bs, bits, B + n * nb * blob, sc + n * nb,
										zq ? zq + n * zrow : NULL, zf ? zf + n * nb : NULL, b1, 1) : 0.0f);
		ox_mmnb_row4(A, bs, B, sc, zq, zf, nb, zrow, 0, b1, n0, n1, Y);
		return;
	}
#endif
	for (long m0 = 0; m0 < M; m0 += 16) {
		const int nr = M - m0 < 16 ? (int)(M - m0) : 16;
		for (long n = n0; n < n1; n++) {
			const uint8_t *bn = B + n * nb * blob, *zqn = zq ? zq + n * zrow : NULL;
			const $T *scn = sc + n * nb, *zfn = zf ? zf + n * nb : NULL;
			$C v[16];
			long b0 = 0;
#if OX_MMNB_AVX512 && OX_MMNB_F32_$S
			b0 = K / bs; /* (the whole blocks here, a partial one below) */
			if (nr == 1)
				ox_mmnb_tile(A + m0 * K, K, 1, bs, bits, bn, scn, zqn, zfn, b0, v);
			else if (nr == 16)
				ox_mmnb_tile(A + m0 * K, K, 16, bs, bits, bn, scn, zqn, zfn, b0, v);
			else
				ox_mmnb_tile(A + m0 * K, K, nr, bs, bits, bn, scn, zqn, zfn, b0, v);
#else
			for (int r = 0; r < nr; r++)
				v[r] = 0.0f;
#endif
			for (int r = 0; r < nr; r++) {
				if (b0 < nb)
					v[r] += ox_mmnb_col_$S(A + (m0 + r) * K, K, bs, bits, bn, scn, zqn, zfn, b0, 1);
				Y[(m0 + r) * N + n] = ox_st_$S(bias ? v[r] + ox_ld_$S(bias[n]) : v[r]);
			}
		}
	}
}
