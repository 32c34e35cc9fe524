/* test_qint.c: cmocka tests of the integer requantization of
 * templates/qint.c (ox_qi_rq), which opt/qdq.c's kernels use: for
 * multipliers written as opt/qdq.c writes them (M = m 2^(s - 31), m in
 * [2^30, 2^31), frexp), the result is within one of the float reference
 * rint(x M), exact for M = 1 and for a power of two without a tie; the
 * branch-free ox_qi_rq gives the bits of the branching form it replaced
 * (old_rq below) on random and extreme operands; the convolution's and
 * matrix product's fast paths (zero points hoisted) give the direct
 * sums' bits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#define OX_UNUSED __attribute__((unused))
#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../../templates/quant_conv_sums.c"
#include "../../templates/quant_matmul.c"
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

/* ox_qi_rq as first written, with branches on the signs */
static int32_t old_rq(int32_t x, int32_t m, int32_t s)
{
	int64_t v = x;
	if (s > 0) {
		v *= (int64_t)1 << (s > 31 ? 31 : s);
		v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
	}
	const int64_t ab = v * m, r = ab + (ab >= 0 ? (int64_t)1 << 30 : 1 - ((int64_t)1 << 30));
	const int64_t h = r >= 0 ? r >> 31 : -(-r >> 31);
	if (s >= 0)
		return (int32_t)h;
	const int e = -s > 62 ? 62 : -s;
	const int64_t mask = ((int64_t)1 << e) - 1, rem = h & mask, thr = (mask >> 1) + (h < 0);
	const int64_t f = h - rem;
	return (int32_t)((f >= 0 ? f >> e : -(-f >> e)) + (rem > thr));
}

static void test_same_as_branching(void **state)
{
	(void)state;
	for (long t = 0; t < 2000000; t++) {
		const uint64_t r = next();
		int32_t x, m;
		switch (r & 3) {
		case 0: x = (int32_t)next(); break;
		case 1: x = (int32_t)(next() % 200001) - 100000; break;
		case 2: x = (int32_t)(next() % 65) - 32; break;
		default: x = r >> 8 & 1 ? INT32_MIN + (int32_t)(next() % 4) : INT32_MAX - (int32_t)(next() % 4);
		}
		switch (r >> 2 & 3) {
		case 0: m = (int32_t)(next() % (1u << 30) + (1u << 30)); break;
		case 1: m = (int32_t)(next() & 0x7fffffff); break;
		case 2: m = (int32_t)(next() % 4); break;
		default: m = 0x7fffffff - (int32_t)(next() % 4);
		}
		const int32_t s = (int32_t)(next() % 110) - 72;
		if (ox_qi_rq(x, m, s) != old_rq(x, m, s))
			fail_msg("x %d m %d s %d: %d, before %d", x, m, s, ox_qi_rq(x, m, s), old_rq(x, m, s));
	}
}

/* random int8 convolutions (groups, strides, pads, dilations, 1-D to 3-D)
 * and matrix products: the fast paths against the direct sums, bit for bit */
static void test_fast_sums(void **state)
{
	(void)state;
	static uint8_t x[4096], w[4096], y0[8192], y1[8192], xm[512];
	static int32_t bias[64], rm[64], rs[64], wz[64], ws[64], zb[64], bs[64], a0[64], a1[64];
	for (int t = 0; t < 300; t++) {
		const long G = 1 + next() % 2, Cg = 1 + next() % 5, Mg = 1 + next() % 7, C = G * Cg, M = G * Mg;
		const int nsp = 1 + next() % 3;
		long I[3] = {1, 1, 1}, K[3] = {1, 1, 1}, S[3] = {1, 1, 1}, P[3] = {0, 0, 0}, D[3] = {1, 1, 1}, O[3];
		for (int i = 3 - nsp; i < 3; i++) {
			I[i] = 1 + next() % (nsp == 3 ? 5 : 9), K[i] = 1 + next() % 3, S[i] = 1 + next() % 2;
			P[i] = next() % 2, D[i] = 1 + next() % 2;
		}
		int ok = 1;
		for (int i = 0; i < 3; i++) {
			O[i] = (I[i] + 2 * P[i] - D[i] * (K[i] - 1) - 1) / S[i] + 1;
			ok &= I[i] + 2 * P[i] - D[i] * (K[i] - 1) - 1 >= 0;
		}
		const long ksz = K[0] * K[1] * K[2], isz = I[0] * I[1] * I[2], osz = O[0] * O[1] * O[2];
		if (!ok || C * isz > 4096 || M * Cg * ksz > 4096 || M * osz > 8192)
			continue;
		const int xf = next() % 2 ? 128 : 0;
		const int32_t xz = (int32_t)(next() % 256);
		for (long i = 0; i < C * isz; i++)
			x[i] = (uint8_t)next();
		for (long m = 0; m < M; m++) {
			int32_t sum = 0;
			for (long k = 0; k < Cg * ksz; k++)
				w[m * Cg * ksz + k] = (uint8_t)(int8_t)((int)(next() % 255) - 127), sum += (int8_t)w[m * Cg * ksz + k];
			ws[m] = sum, wz[m] = 128 + (int32_t)(next() % 5) - 2;
			bias[m] = (int32_t)(next() % 20001) - 10000, rm[m] = (int32_t)(next() % (1u << 30) + (1u << 30));
			rs[m] = -(int32_t)(next() % 12);
		}
		const int32_t *b = next() % 4 ? bias : NULL;
		for (int fast = 0; fast < 2; fast++)
			ox_qi_conv(x, w, b, fast ? y1 : y0, rm, rs, -3, -128, 127, xf, xz, 128, wz,
				   fast ? ws : NULL, 1, C, M, G, I[0], I[1], I[2], O[0], O[1], O[2], K[0], K[1], K[2], S[0],
				   S[1], S[2], P[0], P[1], P[2], D[0], D[1], D[2]);
		for (long i = 0; i < M * osz; i++)
			if (y0[i] != y1[i])
				fail_msg("conv %d: output %ld: %d, direct %d", t, i, y1[i], y0[i]);
		/* matrix product: K x N weights */
		const long KK = 1 + next() % 60, NN = 1 + next() % 40;
		const int af = next() % 2 ? 128 : 0;
		const int32_t az = (int32_t)(next() % 256);
		for (long k = 0; k < KK; k++)
			xm[k] = (uint8_t)next();
		for (long j = 0; j < NN; j++)
			bs[j] = 0, zb[j] = 128 + (int32_t)(next() % 5) - 2;
		for (long k = 0; k < KK; k++)
			for (long j = 0; j < NN; j++)
				w[k * NN + j] = (uint8_t)(int8_t)((int)(next() % 256) - 128), bs[j] += (int8_t)w[k * NN + j];
		ox_qmm_row(xm, w, a0, KK, NN, 0, NN, af, az, 128, zb);
		ox_qi_mm(xm, (const int8_t *)w, a1, KK, NN, 0, NN, af, az, zb, bs);
		for (long j = 0; j < NN; j++)
			if (a0[j] != a1[j])
				fail_msg("matmul %d: column %ld: %d, direct %d", t, j, a1[j], a0[j]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_one),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_same_as_branching),
		cmocka_unit_test(test_fast_sums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
