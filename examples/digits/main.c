/* main.c: the digits demo, an application of the API that onnxcc generates.
 *
 *   app [N [SEED]]    draw N (default 8) random digits, recognize each one
 *
 * It draws digits the way train.py drew the training images (render() of
 * render.h: the same algorithm, the same hash-based random numbers and the
 * same float32 arithmetic, so a given SEED gives the images train.py would), runs
 * the compiled network on each through digits_run() from digits.h, and
 * prints the picture next to the verdict. Needs only libc and libm.
 */
#include "digits.h"
#include "render.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
	unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 10) : (unsigned long)time(NULL);
	if (argc > 3 || n < 1 || n > 100000) {
		fprintf(stderr, "usage: %s [N [SEED]]   (1 <= N <= 100000; SEED defaults to the clock)\n", argv[0]);
		return 2;
	}
	/* The header describes the tensors: check that this is the network we expect. */
	if (DIGITS_NUM_INPUTS != 1 || DIGITS_NUM_OUTPUTS != 1 || digits_inputs[0].dtype != 1 ||
	    digits_inputs[0].numel != S * S || digits_outputs[0].dtype != 1 || digits_outputs[0].numel != 10) {
		fprintf(stderr, "%s: digits.h is not a f32[1,1,16,16] -> f32[1,10] network\n", argv[0]);
		return 1;
	}
	printf("digits: %s f32[1,1,16,16] -> %s f32[1,10], %d bytes of weights, %d bytes of scratch\n",
	       digits_inputs[0].name, digits_outputs[0].name, (int)DIGITS_WEIGHTS_SIZE, (int)DIGITS_ARENA_SIZE);
	printf("drawing %ld digits with seed %lu (run '%s %ld %lu' to see them again)\n\n", n, seed, argv[0], n,
	       seed);

	static const char ramp[] = " .:-=+*#%@";
	long correct = 0;
	for (long i = 0; i < n; i++) {
		float img[S][S], logits[10];
		int drew = render((uint32_t)seed, (uint32_t)i, img);
		const void *in[1] = {img};
		void *out[1] = {logits};
		if (digits_run(in, out) != 0) {
			fprintf(stderr, "%s: digits_run failed\n", argv[0]);
			return 1;
		}
		/* softmax, shifted by the max so expf cannot overflow */
		int best = 0;
		for (int k = 1; k < 10; k++)
			if (logits[k] > logits[best])
				best = k;
		float sum = 0.0f;
		for (int k = 0; k < 10; k++)
			sum += expf(logits[k] - logits[best]);
		float conf = 1.0f / sum;
		correct += best == drew;

		for (int y = 0; y < S; y++) {
			printf("  |");
			for (int x = 0; x < S; x++) {
				int level = (int)(img[y][x] * 10.0f);
				char c = ramp[level > 9 ? 9 : level];
				printf("%c%c", c, c); /* two columns per pixel: terminal cells are tall */
			}
			printf("|");
			if (y == S / 2 - 1)
				printf("   drew %d -> predicted %d (%.1f%%)%s", drew, best, 100.0f * conf,
				       best == drew ? "" : "   WRONG");
			printf("\n");
		}
		printf("\n");
	}
	printf("correct: %ld/%ld\n", correct, n);
	return 0;
}
