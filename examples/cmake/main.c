/* main.c: the CMake example (examples/cmake/README.md), an application of
 * the API that onnxcc_add_model() generates into digits.h.
 *
 *   digits_app        recognize the ten clean digits 0 to 9
 *
 * Each digit is font.h's 5x7 glyph (examples/digits/) scaled 1.5 times by
 * bilinear sampling, in the middle of the network's 16x16 input, without
 * noise, so the output is the same on every run: one line per digit, then
 * "recognized N/10"; the exit status is 0 when all ten are right.
 */
#include "digits.h"
#include "font.h"

#include <math.h>
#include <stdio.h>

#define S 16 /* image side; the network's input is f32[1,1,S,S] */

/* ink of glyph d at column x, row y; 0 outside the glyph */
static float glyph(int d, int x, int y)
{
	if (x < 0 || x >= FONT_W || y < 0 || y >= FONT_H)
		return 0.0f;
	return (font_rows[d][y] >> (FONT_W - 1 - x)) & 1 ? 1.0f : 0.0f;
}

/* digit d into img, values in [0,1] */
static void draw(int d, float img[S][S])
{
	const float sc = 1.5f; /* train.py scaled its glyphs 1x to 2x */
	float ox = ((float)S - FONT_W * sc) / 2, oy = ((float)S - FONT_H * sc) / 2;
	for (int y = 0; y < S; y++)
		for (int x = 0; x < S; x++) {
			float gx = ((float)x + 0.5f - ox) / sc - 0.5f, gy = ((float)y + 0.5f - oy) / sc - 0.5f;
			int ix = (int)floorf(gx), iy = (int)floorf(gy);
			float fx = gx - (float)ix, fy = gy - (float)iy;
			float top = (1 - fx) * glyph(d, ix, iy) + fx * glyph(d, ix + 1, iy);
			float bot = (1 - fx) * glyph(d, ix, iy + 1) + fx * glyph(d, ix + 1, iy + 1);
			img[y][x] = (1 - fy) * top + fy * bot;
		}
}

int main(void)
{
	if (DIGITS_NUM_INPUTS != 1 || DIGITS_NUM_OUTPUTS != 1 || digits_inputs[0].numel != S * S ||
	    digits_outputs[0].numel != 10) {
		fprintf(stderr, "digits_app: digits.h is not a f32[1,1,16,16] -> f32[1,10] network\n");
		return 1;
	}
	int right = 0;
	for (int d = 0; d < 10; d++) {
		float img[S][S], logits[10];
		const void *in[1] = {img};
		void *out[1] = {logits};
		draw(d, img);
		if (digits_run(in, out) != 0) {
			fprintf(stderr, "digits_app: digits_run failed\n");
			return 1;
		}
		int best = 0;
		for (int k = 1; k < 10; k++)
			if (logits[k] > logits[best])
				best = k;
		printf("digit %d: recognized %d%s\n", d, best, best == d ? "" : "  WRONG");
		right += best == d;
	}
	printf("recognized %d/10\n", right);
	return right == 10 ? 0 : 1;
}
