/* test_mmnb.c: cmocka test of templates/mmnb.c (com.microsoft
 * MatMulNBits), its f32 instantiation: ox_mmnb_rows_f32, its AVX-512 tiles of up to 16 rows and
 * one-row path (built by the pragma below, skipped on a CPU without
 * AVX-512) and its plain C column sums, against the direct sum of (q - z) s a in double, for 1 to
 * 11 rows, 4- and 8-bit blocks of 16 to 128 values, packed, f32 and
 * default zero points, a last partial block and a bias.
 */
#pragma GCC target("avx512f,avx512bw,avx512vl")
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>

#define OX_UNUSED __attribute__((unused))
#define OX_STATIC static
/* the template for f32, as codegen/text.c's ox_cg_use substitutes it ($T,
 * $C the storage and compute types; GCC and Clang take $ in names) */
#define $T float
#define $C float
#define ox_ld_$S(v) (v)
#define ox_st_$S(v) (v)
#define OX_MMNB_F32_$S 1
#include "../../templates/mmnb.c"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static double ref(const float *a, long K, long bs, int bits, const uint8_t *bn, const float *scn, const uint8_t *zqn,
		  const float *zfn)
{
	const long blob = bs * bits / 8;
	double r = 0;
	for (long k = 0; k < K; k++) {
		const long b = k / bs, i = k % bs;
		const uint8_t *q = bn + b * blob;
		const int v = bits == 4 ? q[i / 2] >> (i % 2 * 4) & 15 : q[i];
		const double z = zfn ? zfn[b] : zqn ? (bits == 4 ? zqn[b / 2] >> (b % 2 * 4) & 15 : zqn[b]) : (1 << (bits - 1));
		r += (v - z) * scn[b] * a[k];
	}
	return r;
}

static void test_mmnb(void **state)
{
	(void)state;
#if OX_MMNB_AVX512
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw")) {
		print_message("no AVX-512 on this CPU: skipped\n");
		skip();
	}
#else
	print_message("this compiler has no AVX-512 target: the plain C path\n");
#endif
	static const long bss[] = {16, 32, 64, 128};
	for (int c = 0; c < 400; c++) { /* (odd c: one row, a decode step's own path) */
		/* drawn: 1..40 blocks (a decode step's zero-point sums take 16
		 * blocks a step; blocks of 64 and 128 come in chunks of 16 and 8),
		 * a last partial one; 1..8 columns (4 at a time, then one) */
		const long bs = bss[next() % 4], K = bs * (long)(1 + next() % 40) + (next() % 3 ? 0 : bs / 2), N = 1 + (long)(next() % 8);
		const long M = c % 2 ? 1 : 1 + (long)(next() % 20);
		const int bits = next() % 2 ? 8 : 4, zk = (int)(next() % 3); /* 0 none, 1 packed, 2 f32 */
		const long nb = (K + bs - 1) / bs, blob = bs * bits / 8, zrow = (nb * bits + 7) / 8;
		float *a = malloc(M * K * sizeof *a), *sc = malloc(N * nb * sizeof *sc), *zf = malloc(N * nb * sizeof *zf);
		float *y = malloc(M * N * sizeof *y), bias[8] = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f, 1.5f, 0.0f, -3.0f};
		uint8_t *bq = malloc(N * nb * blob), *zq = malloc(N * zrow);
		for (long k = 0; k < M * K; k++)
			a[k] = (float)((int)(next() % 2001) - 1000) / 500.0f;
		for (long i = 0; i < N * nb * blob; i++)
			bq[i] = (uint8_t)next();
		for (long b = 0; b < N * nb; b++)
			sc[b] = (float)(next() % 1000 + 1) / 8000.0f, zf[b] = (float)(next() % 16);
		for (long b = 0; b < N * zrow; b++)
			zq[b] = (uint8_t)next();
		ox_mmnb_rows_$S(a, M, K, N, bs, bits, bq, sc, zk == 1 ? zq : NULL, zk == 2 ? zf : NULL, c % 3 ? NULL : bias, 0, N, y);
		for (long m = 0; m < M; m++)
			for (long n = 0; n < N; n++) {
				const double want = ref(a + m * K, K, bs, bits, bq + n * nb * blob, sc + n * nb, zk == 1 ? zq + n * zrow : NULL,
							zk == 2 ? zf + n * nb : NULL) + (c % 3 ? 0 : bias[n]);
				if (fabs(y[m * N + n] - want) > 1e-4 * (1 + fabs(want)))
					fail_msg("M %ld K %ld block %ld bits %d zero points %d: row %ld column %ld %g, want %g", M, K, bs,
						 bits, zk, m, n, y[m * N + n], want);
			}
		free(a), free(sc), free(zf), free(bq), free(zq), free(y);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmnb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
