/* test_mmnb.c: cmocka test of templates/mmnb.c (com.microsoft
 * MatMulNBits' column sums): the AVX-512 path (built by the pragma below,
 * skipped on a CPU without AVX-512) against the direct sum of (q - z) s a
 * in double, for 4- and 8-bit blocks of 16 to 128 values, packed, f32 and
 * default zero points, and a last partial block.
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
	for (int c = 0; c < 96; c++) {
		const long bs = bss[c % 4], K = bs * (1 + c % 3) + (c % 5 == 0 ? bs / 2 : 0);
		const int bits = c % 2 ? 8 : 4, zk = c / 2 % 3; /* 0 none, 1 packed, 2 f32 */
		const long nb = (K + bs - 1) / bs, blob = bs * bits / 8;
		float *a = malloc(K * sizeof *a), *sc = malloc(nb * sizeof *sc), *zf = malloc(nb * sizeof *zf);
		uint8_t *bn = malloc(nb * blob), *zq = malloc(nb);
		for (long k = 0; k < K; k++)
			a[k] = (float)((int)(next() % 2001) - 1000) / 500.0f;
		for (long i = 0; i < nb * blob; i++)
			bn[i] = (uint8_t)next();
		for (long b = 0; b < nb; b++)
			sc[b] = (float)(next() % 1000 + 1) / 8000.0f, zf[b] = (float)(next() % 16), zq[b] = (uint8_t)next();
		const float got = ox_mmnb_col(a, K, bs, bits, bn, sc, zk == 1 ? zq : NULL, zk == 2 ? zf : NULL);
		const double want = ref(a, K, bs, bits, bn, sc, zk == 1 ? zq : NULL, zk == 2 ? zf : NULL);
		if (fabs(got - want) > 1e-4 * (1 + fabs(want)))
			fail_msg("K %ld block %ld bits %d zero points %d: %g, want %g", K, bs, bits, zk, got, want);
		free(a), free(sc), free(zf), free(bn), free(zq);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmnb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
