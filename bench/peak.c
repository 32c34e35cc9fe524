/* peak.c: the machine's f32 multiply-add peak for one build target, the
 * figure bench/zoo_bench.sh divides the models' GFLOP/s by.
 *
 *   cc -O2 $(onnxcc --cpu NAME --print-cflags) -pthread -o peak bench/peak.c
 *   ./peak [THREADS]     -> "peak: vw=16 fma=1 threads=1 gflops=117.2"
 *
 * The vector width is the one the generated code uses for the target the
 * flags select (16 lanes with AVX-512, 8 with AVX2 + FMA, else 4), and so
 * is the instruction: a fused multiply-add where the target has one (an
 * intrinsic, since -std=c11 does not contract a * b + c), else a multiply
 * and an add, 2 flops either way. Each thread runs 16 independent
 * accumulator chains with 32 vector registers, 12 with 16 (more than FMA
 * latency x FMA pipes on current cores, fewer than the registers) for
 * about 0.3 s; the best of three tries counts. The time of a try is from
 * the first thread's start to the last one's end, so threads that do not
 * overlap (a busy machine) lower the figure instead of adding up.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define VW 16
#elif defined(__AVX2__) && defined(__FMA__)
#define VW 8
#else
#define VW 4
#endif
#if defined(__AVX512F__) || defined(__FMA__) || (defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA))
#define HAS_FMA 1
#else
#define HAS_FMA 0
#endif

typedef float vf __attribute__((vector_size(VW * 4)));

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#elif HAS_FMA
#include <arm_neon.h>
#endif

/* an empty asm that claims to change v: keeps each chain in a register.
 * "x" is xmm0-15 only: with AVX-512's 16 chains clang would spill to the
 * stack (a fifth of the peak); "v" admits all 32 EVEX registers. */
#if defined(__AVX512F__)
#define KEEP(v) __asm__ volatile("" : "+v"(v))
#elif defined(__x86_64__) || defined(__i386__)
#define KEEP(v) __asm__ volatile("" : "+x"(v))
#elif defined(__aarch64__)
#define KEEP(v) __asm__ volatile("" : "+w"(v))
#else
#define KEEP(v) ((void)0)
#endif

static inline vf fma_v(vf a, vf b, vf c)
{
#if defined(__AVX512F__)
	return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__FMA__)
	return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#elif HAS_FMA
	return (vf)vfmaq_f32((float32x4_t)c, (float32x4_t)a, (float32x4_t)b);
#else
	return a * b + c;
#endif
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long iters = 20000000;
static double t_start[64], t_end[64];

#if defined(__AVX512F__) || defined(__aarch64__) /* 32 vector registers */
#define NACC 16
#else
#define NACC 12
#endif

/* NACC chains of multiply-adds; the asm barriers keep them in registers and alive */
static void *run(void *arg)
{
	long id = (long)arg;
	vf x = {0}, y = {0};
	x += 0.999999f, y += 1e-7f;
	vf a0 = x, a1 = x, a2 = x, a3 = x, a4 = x, a5 = x, a6 = x, a7 = x;
	vf a8 = x, a9 = x, a10 = x, a11 = x, a12 = x, a13 = x, a14 = x, a15 = x;
	t_start[id] = now();
	for (long i = 0; i < iters; i++) {
		a0 = fma_v(a0, x, y), a1 = fma_v(a1, x, y), a2 = fma_v(a2, x, y), a3 = fma_v(a3, x, y);
		a4 = fma_v(a4, x, y), a5 = fma_v(a5, x, y), a6 = fma_v(a6, x, y), a7 = fma_v(a7, x, y);
		a8 = fma_v(a8, x, y), a9 = fma_v(a9, x, y), a10 = fma_v(a10, x, y), a11 = fma_v(a11, x, y);
		KEEP(a0); KEEP(a1); KEEP(a2); KEEP(a3); KEEP(a4); KEEP(a5);
		KEEP(a6); KEEP(a7); KEEP(a8); KEEP(a9); KEEP(a10); KEEP(a11);
#if NACC == 16
		a12 = fma_v(a12, x, y), a13 = fma_v(a13, x, y), a14 = fma_v(a14, x, y), a15 = fma_v(a15, x, y);
		KEEP(a12); KEEP(a13); KEEP(a14); KEEP(a15);
#endif
	}
	double t = now();
	vf s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14 + a15;
	t_end[id] = s[0] > 1e30f ? 0 : t; /* (never true: keeps s alive) */
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 1;
	if (nt < 1 || nt > 64) {
		fprintf(stderr, "usage: %s [THREADS (1-64)]\n", argv[0]);
		return 2;
	}
	/* size the run to about 0.3 s on one thread */
	iters = 1000000;
	run(0);
	double t_probe = t_end[0] - t_start[0];
	iters = (long)(iters * 0.3 / (t_probe > 1e-6 ? t_probe : 1e-6));
	double best = 0;
	for (int r = 0; r < 3; r++) {
		pthread_t th[64];
		for (long i = 1; i < nt; i++)
			pthread_create(&th[i], NULL, run, (void *)i);
		run(0);
		double t0 = t_start[0], t1 = t_end[0];
		for (int i = 1; i < nt; i++) {
			pthread_join(th[i], NULL);
			t0 = t_start[i] < t0 ? t_start[i] : t0;
			t1 = t_end[i] > t1 ? t_end[i] : t1;
		}
		double t = t1 - t0;
		double gf = (double)nt * (double)iters * NACC * VW * 2 / t * 1e-9;
		best = gf > best ? gf : best;
	}
	printf("peak: vw=%d fma=%d threads=%d gflops=%.1f\n", VW, HAS_FMA, nt, best);
	return 0;
}
