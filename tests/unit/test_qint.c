/* test_qint.c: cmocka tests of the integer requantization of
 * templates/qint.c (ox_qi_rq), which opt/qdq.c's kernels use: for
 * multipliers written as opt/qdq.c writes them (M = m 2^(s - 31), m in
 * [2^30, 2^31), frexp), the result is within one of the float reference
 * rint(x M), exact for M = 1 and for a power of two without a tie.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#define OX_UNUSED __attribute__((unused))
#include "../../templates/quant_conv_sums.c"
#include "../../templates/qint.c"

/* opt/qdq.c's fixed_point */
static void fixed(double M, int32_t *m, int32_t *s)
{
	int e;
	double q = frexp(M, &e);
	int64_t mm = llround(q * 2147483648.0);
	if (mm == ((int64_t)1 << 31))
		mm /= 2, e++;
	*m = (int32_t)mm, *s = e;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void test_within_one(void **state)
{
	(void)state;
	for (int t = 0; t < 200000; t++) {
		/* multipliers from 2^-24 to 2^4, sums up to 2^24 */
		double M = ldexp(1.0 + (double)(next() % 1000000) / 1000000.0, (int)(next() % 28) - 24);
		int32_t x = (int32_t)(next() % (1u << 25)) - (1 << 24), m, s;
		fixed(M, &m, &s);
		double ref = rint((double)x * M);
		if (fabs(ref) > 2e9)
			continue;
		int32_t got = ox_qi_rq(x, m, s);
		if (fabs((double)got - ref) > 1)
			fail_msg("x %d M %.17g: %d, reference %.0f", x, M, got, ref);
	}
}

static void test_exact(void **state)
{
	(void)state;
	int32_t m, s;
	fixed(1.0, &m, &s);
	for (int32_t x = -70000; x <= 70000; x += 7)
		assert_int_equal(ox_qi_rq(x, m, s), x);
	fixed(0.25, &m, &s);
	assert_int_equal(ox_qi_rq(100, m, s), 25);
	assert_int_equal(ox_qi_rq(-101, m, s), -25);
	assert_int_equal(ox_qi_rq(102, m, s), 26);  /* 25.5: ties away from zero */
	assert_int_equal(ox_qi_rq(-102, m, s), -26);
	assert_int_equal(ox_qi_clamp(300, -128, 127), 127);
	assert_int_equal(ox_qi_clamp(-300, -128, 127), -128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_one),
		cmocka_unit_test(test_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
