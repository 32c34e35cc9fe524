/* vmath_test.c: the accuracy of templates/vmath.c's vector functions (and
 * vf.c's sqrt), checked against double-precision libm on a sweep of
 * floats: every 509th bit pattern of all finite floats (both signs, about
 * 17 million inputs a function), the points where the code switches
 * branch and their neighbours, and the special values (±0, ±inf, NaN,
 * subnormals); and that vf.c's block transpose is exact. Built once per
 * vector rendering (tests/vmath/run.sh):
 *
 *   cc -O2 [TARGET FLAGS] -DOX_VW=N [-DOX_VF_PORTABLE] tests/vmath/vmath_test.c -lm
 *   ./vmath_test        -> one line per function, exit 1 if a bound fails
 *
 * The error of a result y against the exact value r (computed in double)
 * is |y - r| / max(|r|, 1e-30): the relative error, and an absolute one
 * for values below 1e-30 (where the functions may flush to 0: they make
 * no subnormals). Each function's bound is in the table below and in
 * README.md. Infinite and NaN results must come out exactly.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef OX_VW
#error "build with -DOX_VW=4, 8 or 16"
#endif
#if defined(__GNUC__) || defined(__clang__)
#define OX_UNUSED __attribute__((unused))
#else
#define OX_UNUSED
#endif
#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../../templates/vf.c"
#include "../../templates/vmath.c"

#define TINY 1e-30

static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
/* x/2 (1 + tanh z) as x / (1 + exp(-2z)): 1 + tanh z cancels in double too */
static double w_tanh(double x) { return 1.59576912160573071 * (x + 0.044715 * x * x * x); }
static double ref_gelu_tanh(double x) { return x / (1 + exp(-w_tanh(x))); }
/* its float argument 2z is rounded (a few ulp), which x sigmoid(2z) turns
 * into a relative error of |2z| (1 - sigmoid(2z)) times that */
static double cond_gelu_tanh(double x) { return 1 + fabs(w_tanh(x)) / (1 + exp(w_tanh(x))); }

typedef struct {
	const char *name;
	ox_vf (*f)(ox_vf);
	double (*ref)(double);
	double bound; /* on |y - r| / max(|r|, TINY) / cond(x) */
	float lo, hi; /* the inputs swept */
	double (*cond)(double); /* NULL: 1; else how much rounding x (or the float
				   steps before the function's core) magnifies */
} fn;

/* The bounds are about twice the largest error measured on x86-64 over
 * the renderings (AVX-512, AVX2, SSE, portable; gcc and clang): tight
 * enough that a coefficient changed in its fifth digit fails. */
static const fn fns[] = {
	{"exp", ox_vf_exp, exp, 2.5e-7, -104, 90, NULL},
	{"sigmoid", ox_vf_sigmoid, ref_sigmoid, 4e-7, -104, 104, NULL},
	{"tanh", ox_vf_tanh, tanh, 3e-7, -20, 20, NULL},
	{"erf", ox_vf_erf, erf, 3.5e-7, -10, 10, NULL},
	{"gelu", ox_vf_gelu, ref_gelu, 8e-7, -20, 20, NULL},
	{"gelu_tanh", ox_vf_gelu_tanh, ref_gelu_tanh, 4e-7, -20, 20, cond_gelu_tanh},
	{"sqrt", ox_vf_sqrt, sqrt, 6e-8, 0, 3.4e38f, NULL},
};

static float lane(ox_vf v, int i)
{
	float f[OX_VW];
	memcpy(f, &v, sizeof f);
	return f[i];
}

static int bad_special;

/* y for x, against the reference: returns the error measure */
static double err_of(const fn *F, float x, float y)
{
	double r = F->ref((double)x);
	if (isnan(r) || isnan(y)) {
		if (isnan(r) != isnan(y)) {
			printf("  %s(%.9g) = %.9g, expected %.9g\n", F->name, x, y, r);
			bad_special++;
		}
		return 0;
	}
	float rf = (float)r;
	if (isinf(rf) || isinf(y)) {
		if (rf != y) {
			printf("  %s(%.9g) = %.9g, expected %.9g\n", F->name, x, y, rf);
			bad_special++;
		}
		return 0;
	}
	double den = fabs(r) > TINY ? fabs(r) : TINY;
	return fabs((double)y - r) / den / (F->cond ? F->cond((double)x) : 1);
}

typedef struct {
	double worst;
	float at;
	long n;
} acc;

static void check(const fn *F, const float *xs, int k, acc *a)
{
	float in[OX_VW] = {0};
	memcpy(in, xs, (size_t)k * sizeof *in);
	ox_vf v;
	memcpy(&v, in, sizeof v);
	ox_vf y = F->f(v);
	for (int i = 0; i < k; i++) {
		double e = err_of(F, xs[i], lane(y, i));
		if (e > a->worst)
			a->worst = e, a->at = xs[i];
		a->n++;
	}
}

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* vf.c's in-register block transpose (the layout conversions use it): exact */
static int check_transpose(void)
{
	float a[OX_VW][OX_VW], o[OX_VW];
	ox_vf r[OX_VW];
	for (int i = 0; i < OX_VW; i++)
		for (int j = 0; j < OX_VW; j++)
			a[i][j] = (float)(i * 100 + j);
	for (int i = 0; i < OX_VW; i++)
		r[i] = ox_vf_load(a[i]);
	ox_vf_transpose(r);
	int bad = 0;
	for (int i = 0; i < OX_VW; i++) {
		ox_vf_store(o, r[i]);
		for (int j = 0; j < OX_VW; j++)
			bad += o[j] != a[j][i];
	}
	printf("  transpose  %d x %d block: %d elements misplaced%s\n", OX_VW, OX_VW, bad, bad ? "  FAIL" : "");
	return bad != 0;
}

int main(void)
{
	int fails = 0;
	printf("vmath: OX_VW=%d, %s rendering%s\n", OX_VW,
#ifdef OX_VF_EXT
	       "vector-extension",
#else
	       "portable",
#endif
	/* the intrinsics vf.c took (tests/vmath/run.sh --qemu checks NEON's) */
#if defined(OX_VF_AVX512)
	       " (AVX-512)"
#elif defined(OX_VF_AVX2)
	       " (AVX2)"
#elif defined(OX_VF_SSE)
	       " (SSE)"
#elif defined(OX_VF_NEON)
	       " (NEON)"
#else
	       ""
#endif
	);
	for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
		const fn *F = &fns[f];
		acc a = {0, 0, 0};
		bad_special = 0;
		float buf[OX_VW];
		int k = 0;
		/* the sweep: every 509th pattern of each sign, inside [lo, hi] */
		for (int sign = 0; sign < 2; sign++)
			for (uint64_t u = 0; u < 0x7f800000u; u += 509) {
				float x = from_bits((uint32_t)u | (sign ? 0x80000000u : 0));
				if (!(x >= F->lo && x <= F->hi))
					continue;
				buf[k++] = x;
				if (k == OX_VW)
					check(F, buf, k, &a), k = 0;
			}
		/* branch points, their neighbours, and specials */
		static const float pts[] = {0.625f, 1.0f, 1.41421354f, 3.93f, 4.0f, 88.3762626f, 87.3365447f, 88.7f,
					    0.5f, 2.0f, 1e-30f, 1e-38f, 1e-45f, 10.0f, 100.0f, 1e30f};
		for (size_t p = 0; p < sizeof pts / sizeof *pts; p++)
			for (int d = -3; d <= 3; d++)
				for (int sign = 0; sign < 2; sign++) {
					uint32_t u;
					memcpy(&u, &pts[p], 4);
					float x = from_bits((u + (uint32_t)d) | (sign ? 0x80000000u : 0));
					if (!(x >= F->lo && x <= F->hi))
						continue;
					buf[k++] = x;
					if (k == OX_VW)
						check(F, buf, k, &a), k = 0;
				}
		const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN};
		for (size_t p = 0; p < sizeof specials / sizeof *specials; p++) {
			if (F->ref == sqrt && specials[p] == -INFINITY)
				continue;
			buf[k++] = specials[p];
			if (k == OX_VW)
				check(F, buf, k, &a), k = 0;
		}
		if (k)
			check(F, buf, k, &a);
		int ok = a.worst <= F->bound && !bad_special;
		printf("  %-10s %9ld inputs in [%g, %g]: max error %.3g at x=%.9g (bound %.3g)%s\n", F->name, a.n,
		       (double)F->lo, (double)F->hi, a.worst, (double)a.at, F->bound, ok ? "" : "  FAIL");
		if (bad_special)
			printf("  %-10s %d special values wrong  FAIL\n", F->name, bad_special);
		fails += !ok;
	}
	int tbad = check_transpose();
	printf("vmath: %d of %zu functions outside their bounds%s\n", fails, sizeof fns / sizeof *fns,
	       tbad ? ", the transpose wrong" : "");
	return fails != 0 || tbad;
}
