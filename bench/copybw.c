/* copybw.c: the machine's memory bandwidth for streaming reads, the figure
 * bench/llm_bench.sh divides a decode step's bytes a second by (a decode
 * step of a decoder reads its weights once: memory-bound).
 *
 *   cc -O2 $(onnxcc --cpu native --print-cflags) -o copybw bench/copybw.c
 *   ./copybw [MB [THREADS]]  -> "copybw: mb=512 threads=1 read_gbs=12.3 copy_gbs=9.8"
 *
 * read: the sum of a float array of MB megabytes (much larger than the
 * caches), 4 chains of 64-byte vectors (GCC/clang vector extensions); copy:
 * b[i] = a[i] over the same size (STREAM's Copy: its bytes read plus
 * written). The best of five tries each; THREADS (default 1) threads each
 * take an equal part of the arrays, started together, the time the
 * slowest one's.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef struct {
	float *a, *b;
	size_t n;        /* this thread's part */
	int copy;
	double sink;
} part;
static pthread_barrier_t start;

static void *run(void *arg)
{
	part *p = arg;
	pthread_barrier_wait(&start);
	if (p->copy) {
		memcpy(p->b, p->a, p->n * sizeof *p->a);
		p->sink = p->b[p->n / 2];
		return NULL;
	}
	v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}; /* (GCC vectors: a vector add a 64-byte load) */
	for (size_t i = 0; i + 64 <= p->n; i += 64) {
		s0 += *(const v16 *)(p->a + i), s1 += *(const v16 *)(p->a + i + 16);
		s2 += *(const v16 *)(p->a + i + 32), s3 += *(const v16 *)(p->a + i + 48);
	}
	p->sink = 0;
	for (int k = 0; k < 16; k++)
		p->sink += s0[k] + s1[k] + s2[k] + s3[k];
	return NULL;
}

/* seconds for the threads to read (or copy) their parts */
static double pass(part *parts, int nt, int copy, double *sink)
{
	pthread_t th[64];
	pthread_barrier_init(&start, NULL, (unsigned)nt + 1);
	for (int t = 0; t < nt; t++) {
		parts[t].copy = copy;
		pthread_create(&th[t], NULL, run, &parts[t]);
	}
	pthread_barrier_wait(&start);
	double t0 = now();
	for (int t = 0; t < nt; t++)
		pthread_join(th[t], NULL), *sink += parts[t].sink;
	double t1 = now();
	pthread_barrier_destroy(&start);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	const size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 512, n = mb * 1024 * 1024 / sizeof(float);
	const int nt = argc > 2 ? atoi(argv[2]) : 1;
	if (nt < 1 || nt > 64)
		return 2;
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	if (!a || !b)
		return 1;
	for (size_t i = 0; i < n; i++)
		a[i] = (float)(i & 1023), b[i] = 0;
	part parts[64];
	for (int t = 0; t < nt; t++) /* (parts of whole 64-float runs) */
		parts[t] = (part){a + n / 64 * t / nt * 64, b + n / 64 * t / nt * 64,
				  (n / 64 * (t + 1) / nt - n / 64 * t / nt) * 64, 0, 0};
	double rd = 1e30, cp = 1e30, sink = 0;
	for (int t = 0; t < 5; t++) {
		double r = pass(parts, nt, 0, &sink), c = pass(parts, nt, 1, &sink);
		rd = r < rd ? r : rd, cp = c < cp ? c : cp;
	}
	printf("copybw: mb=%zu threads=%d read_gbs=%.1f copy_gbs=%.1f%s\n", mb, nt, n * sizeof(float) / rd / 1e9,
	       2.0 * n * sizeof(float) / cp / 1e9, sink == 0.123 ? " " : "");
	free(a), free(b);
	return 0;
}
