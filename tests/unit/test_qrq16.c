/* test_qrq16.c: cmocka test of the AVX-512 requantization of
 * templates/qconv.c (ox_qg_rq16, 16 lanes: the packed and depthwise int8
 * convolutions' stores): the values of templates/qint.c's ox_qi_rq for
 * random and extreme sums, multipliers and shifts (left shifts that
 * saturate, right shifts past 31). Built for AVX512-VNNI by the pragma
 * below, so it runs (and is skipped on a CPU without it) whatever the
 * unit tests' flags.
 */
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define OX_UNUSED __attribute__((unused))
#define OX_STATIC static
#include "../../templates/quant_conv_sums.c"
#include "../../templates/qint.c"
#include "../../templates/qconv.c"

#if OX_QG_VNNI
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void test_rq16(void **state)
{
	(void)state;
	if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw")) {
		print_message("no AVX512-VNNI on this CPU: skipped\n");
		skip();
	}
	static const int32_t ext[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX, INT32_MAX - 1, 1 << 30, -(1 << 30)};
	for (int it = 0; it < 200000; it++) {
		/* m as opt/qdq.c writes it, [2^30, 2^31), or any non-negative */
		int32_t m = it % 7 ? (int32_t)(next() % (1u << 30) + (1u << 30)) : (int32_t)(next() & 0x7fffffff);
		int32_t s = (int32_t)(next() % 80) - 66, x[16], y[16];
		for (int i = 0; i < 16; i++) {
			uint64_t r = next();
			x[i] = (r & 3) == 0 ? ext[(r >> 8) % 9] : (r & 3) == 1 ? (int32_t)(r >> 20) : (int32_t)((int64_t)(r >> 40) - (1 << 23));
		}
		_mm512_storeu_si512(y, ox_qg_rq16(_mm512_loadu_si512(x), m, s));
		for (int i = 0; i < 16; i++)
			if (y[i] != ox_qi_rq(x[i], m, s))
				fail_msg("x %d m %d s %d: %d, ox_qi_rq %d", x[i], m, s, y[i], ox_qi_rq(x[i], m, s));
	}
}
#else
static void test_rq16(void **state)
{
	(void)state;
	print_message("this compiler has no AVX512-VNNI target: skipped\n");
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rq16),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
