/* copybw.c: the machine's memory bandwidth for streaming reads, the figure
 * bench/llm_bench.sh divides a decode step's bytes a second by (a decode
 * step of a decoder reads its weights once: memory-bound).
 *
 *   cc -O2 $(onnxcc --cpu native --print-cflags) -o copybw bench/copybw.c
 *   ./copybw [MB]     -> "copybw: mb=512 read_gbs=12.3 copy_gbs=9.8"
 *
 * read: the sum of a float array of MB megabytes (much larger than the
 * caches), 4 chains of 64-byte vectors (GCC/clang vector extensions); copy: b[i] = a[i] over the same size
 * (STREAM's Copy: its bytes read plus written). The best of five tries
 * each, one thread.
 */
#define _POSIX_C_SOURCE 200809L
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

int main(int argc, char **argv)
{
	const size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 512, n = mb * 1024 * 1024 / sizeof(float);
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	if (!a || !b)
		return 1;
	for (size_t i = 0; i < n; i++)
		a[i] = (float)(i & 1023), b[i] = 0;
	double rd = 1e30, cp = 1e30, sink = 0;
	typedef float v16 __attribute__((vector_size(64), aligned(4)));
	for (int t = 0; t < 5; t++) {
		v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}; /* (GCC vectors: a vector add a 64-byte load) */
		double t0 = now();
		for (size_t i = 0; i + 64 <= n; i += 64) {
			s0 += *(const v16 *)(a + i), s1 += *(const v16 *)(a + i + 16);
			s2 += *(const v16 *)(a + i + 32), s3 += *(const v16 *)(a + i + 48);
		}
		double t1 = now();
		for (int k = 0; k < 16; k++)
			sink += s0[k] + s1[k] + s2[k] + s3[k];
		rd = t1 - t0 < rd ? t1 - t0 : rd;
		t0 = now();
		memcpy(b, a, n * sizeof *a);
		t1 = now();
		sink += b[n / 2];
		cp = t1 - t0 < cp ? t1 - t0 : cp;
	}
	printf("copybw: mb=%zu read_gbs=%.1f copy_gbs=%.1f%s\n", mb, n * sizeof(float) / rd / 1e9,
	       2.0 * n * sizeof(float) / cp / 1e9, sink == 0.123 ? " " : "");
	free(a), free(b);
	return 0;
}
