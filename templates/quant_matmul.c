/* quant_matmul.c: one row chunk of an integer matrix product, for
 * MatMulInteger and QLinearMatMul:
 *     acc[j] = sum_k ((a[k] ^ af) - az) * ((b[k*N + j0+j] ^ bf) - bz[j0+j]),  j < nj
 * with a the row's K bytes and b the K x N right operand. As in
 * templates/quant_conv.c, 8-bit operands of either signedness come in as
 * bytes: flip 0x80 for int8, and the zero points az / bz[] carry the 128
 * the flip added. Rows of b are walked in order so the inner loop is a
 * contiguous multiply-add the C compiler vectorizes; sums wrap modulo 2^32
 * (unsigned arithmetic: defined). Instantiate once with
 * ox_cg_use(cg, "quant_matmul", OX_U8).
 */
OX_STATIC void ox_qmm_row(const uint8_t *restrict a, const uint8_t *restrict b, int32_t *restrict acc, long K, long N,
		       long j0, long nj, int af, int32_t az, int bf, const int32_t *restrict bz)
{
	uint32_t s[256];
	for (long j0b = 0; j0b < nj; j0b += 256) {
		const long cnt = nj - j0b < 256 ? nj - j0b : 256, jb = j0 + j0b;
		for (long j = 0; j < cnt; j++)
			s[j] = 0;
		for (long k = 0; k < K; k++) {
			const int32_t av = (int32_t)(a[k] ^ af) - az;
			const uint8_t *br = b + k * N + jb;
			if (!av)
				continue;
			for (long j = 0; j < cnt; j++)
				s[j] += (uint32_t)(av * ((int32_t)(br[j] ^ bf) - bz[jb + j]));
		}
		for (long j = 0; j < cnt; j++)
			acc[j0b + j] = (int32_t)s[j];
	}
}
