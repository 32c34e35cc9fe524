/* gemm.c: Y = alpha * A' B' + beta * C for Gemm and (alpha 1, no C) each
 * MatMul batch. A'[i][k] = A[i*ai + k*ak], B'[k][j] = B[k*bk + j*bj],
 * C[i*ci + j*cj] (strides of 0 broadcast C), so transposes are strides.
 * When B' rows are contiguous (bj == 1) the order is i-k-j: 4 rows x 8
 * columns of sums in vector registers (templates/vec.c), each B' load
 * feeding 4 multiply-adds; the edges go row by row. When
 * B' columns are contiguous (transB) each element is a dot product with
 * 8 partial sums. Sums are in the compute type ($C; f16 in float).
 * Needs templates/vec.c and ox_ld_$S / ox_st_$S (added by ox_cg_use).
 */
OX_STATIC inline void ox_gemm_put_$S($T *restrict y, const $T *restrict c, long cj, long n, const $C *acc,
				  $C alpha, $C beta)
{
	for (long j = 0; j < n; j++)
		y[j] = ox_st_$S(c ? alpha * acc[j] + beta * ox_ld_$S(c[j * cj]) : alpha * acc[j]);
}

/* row i, columns [j0, j1), i-k-j through a 64-wide buffer */
OX_STATIC inline void ox_gemm_row_$S(const $T *restrict A, const $T *restrict B, const $T *restrict Cm,
				  $T *restrict Y, long N, long K, long i, long j0, long j1, long ai,
				  long ak, long bk, $C alpha, $C beta, long ci, long cj)
{
	$C acc[64];
	for (long jb = j0; jb < j1; jb += 64) {
		const long nj = j1 - jb < 64 ? j1 - jb : 64;
		for (long j = 0; j < nj; j++)
			acc[j] = ($C)0;
		for (long k = 0; k < K; k++) {
			const $C a = ox_ld_$S(A[i * ai + k * ak]);
			const $T *br = B + k * bk + jb;
			long j = 0;
			for (; j + 4 <= nj; j += 4)
				for (int t = 0; t < 4; t++)
					acc[j + t] += a * ox_ld_$S(br[j + t]);
			for (; j < nj; j++)
				acc[j] += a * ox_ld_$S(br[j]);
		}
		ox_gemm_put_$S(Y + i * N + jb, Cm ? Cm + i * ci + jb * cj : Cm, cj, nj, acc, alpha, beta);
	}
}

OX_STATIC void ox_gemm_$S(const $T *restrict A, const $T *restrict B, const $T *restrict Cm, $T *restrict Y,
		       long M, long N, long K, long ai, long ak, long bk, long bj, $C alpha, $C beta, long ci,
		       long cj)
{
	if (bj != 1) {
		for (long i = 0; i < M; i++)
			for (long j = 0; j < N; j++) {
				const $T *ar = A + i * ai, *bc = B + j * bj;
				$C s[8] = {0}, acc;
				long k = 0;
				if (ak == 1 && bk == 1)
					for (; k + 8 <= K; k += 8, ar += 8, bc += 8)
						for (int t = 0; t < 8; t++)
							s[t] += ox_ld_$S(ar[t]) * ox_ld_$S(bc[t]);
				for (; k < K; k++, ar += ak, bc += bk)
					s[0] += ox_ld_$S(*ar) * ox_ld_$S(*bc);
				acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
				ox_gemm_put_$S(Y + i * N + j, Cm ? Cm + i * ci + j * cj : Cm, cj, 1, &acc, alpha, beta);
			}
		return;
	}
	long i = 0;
	for (; i + 4 <= M; i += 4) {
		long j = 0;
		for (; j + 8 <= N; j += 8) {
			const ox_v4_$S z = ox_v4_set_$S(($C)0, ($C)0, ($C)0, ($C)0);
			ox_v4_$S a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
			const $T *ap = A + i * ai, *bp = B + j;
			for (long k = 0; k < K; k++, ap += ak, bp += bk) {
				const $C x0 = ox_ld_$S(ap[0]), x1 = ox_ld_$S(ap[ai]);
				const $C x2 = ox_ld_$S(ap[2 * ai]), x3 = ox_ld_$S(ap[3 * ai]);
				const ox_v4_$S u = ox_v4_set_$S(ox_ld_$S(bp[0]), ox_ld_$S(bp[1]),
							       ox_ld_$S(bp[2]), ox_ld_$S(bp[3]));
				const ox_v4_$S v = ox_v4_set_$S(ox_ld_$S(bp[4]), ox_ld_$S(bp[5]),
							       ox_ld_$S(bp[6]), ox_ld_$S(bp[7]));
				a0 = ox_v4_madd_$S(a0, x0, u), b0 = ox_v4_madd_$S(b0, x0, v);
				a1 = ox_v4_madd_$S(a1, x1, u), b1 = ox_v4_madd_$S(b1, x1, v);
				a2 = ox_v4_madd_$S(a2, x2, u), b2 = ox_v4_madd_$S(b2, x2, v);
				a3 = ox_v4_madd_$S(a3, x3, u), b3 = ox_v4_madd_$S(b3, x3, v);
			}
			$C r[4][8];
			for (int t = 0; t < 4; t++) {
				r[0][t] = ox_v4_get_$S(a0, t), r[0][t + 4] = ox_v4_get_$S(b0, t);
				r[1][t] = ox_v4_get_$S(a1, t), r[1][t + 4] = ox_v4_get_$S(b1, t);
				r[2][t] = ox_v4_get_$S(a2, t), r[2][t + 4] = ox_v4_get_$S(b2, t);
				r[3][t] = ox_v4_get_$S(a3, t), r[3][t + 4] = ox_v4_get_$S(b3, t);
			}
			for (long t = 0; t < 4; t++)
				ox_gemm_put_$S(Y + (i + t) * N + j, Cm ? Cm + (i + t) * ci + j * cj : Cm, cj, 8, r[t],
					       alpha, beta);
		}
		if (j < N)
			for (long t = 0; t < 4; t++)
				ox_gemm_row_$S(A, B, Cm, Y, N, K, i + t, j, N, ai, ak, bk, alpha, beta, ci, cj);
	}
	for (; i < M; i++)
		ox_gemm_row_$S(A, B, Cm, Y, N, K, i, 0, N, ai, ak, bk, alpha, beta, ci, cj);
}
