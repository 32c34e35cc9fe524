/* render.h: the digit renderer of train.py in C, shared by main.c and
 * examples/firmware/app.c. render() is the same algorithm as train.py's,
 * with the same hash-based random numbers and the same float32 arithmetic,
 * so a given seed gives the images train.py would. Needs font.h, <math.h>
 * (floorf, fmaxf) and <stdint.h>; nothing else, so it builds bare metal. */
#ifndef DIGITS_RENDER_H
#define DIGITS_RENDER_H
#include "font.h"

#include <math.h>
#include <stdint.h>

#define S 16 /* image side; the network's input is f32[1,1,S,S] */

/* lowbias32 (Chris Wellons): a good 32-bit integer hash. Every random
 * number is hash32 of (seed, image index, draw number), so an image does
 * not depend on how many were drawn before it. */
static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* Draw number k of the image whose key is base: uniform in [0,1), exact in float. */
static float uniform(uint32_t base, uint32_t k)
{
	return (float)(hash32(base + k * 0x9e3779b9u) >> 8) * (1.0f / 16777216.0f);
}

/* Ink of glyph d at column x, row y; 0 outside the glyph. */
static float glyph(int d, int x, int y)
{
	if (x < 0 || x >= FONT_W || y < 0 || y >= FONT_H)
		return 0.0f;
	return (font_rows[d][y] >> (FONT_W - 1 - x)) & 1 ? 1.0f : 0.0f;
}

/* Image `index` of the stream `seed` into img (values in [0,1]); returns its digit. */
static int render(uint32_t seed, uint32_t index, float img[S][S])
{
	uint32_t base = hash32(hash32(seed) ^ index);
	int d = (int)(hash32(base) % 10);
	float sx = 1.0f + uniform(base, 1); /* scale 1x..2x */
	float sy = 1.0f + uniform(base, 2);
	float ox = uniform(base, 3) * ((float)S - (float)FONT_W * sx); /* anywhere it fits */
	float oy = uniform(base, 4) * ((float)S - (float)FONT_H * sy);
	int thick = (int)(uniform(base, 5) * 3.0f); /* 0 none, 1 widen, 2 widen and lengthen */
	float ink = 0.6f + 0.4f * uniform(base, 6);
	float sigma = 0.15f * uniform(base, 7);

	/* bilinear sample of the glyph at each pixel centre */
	for (int y = 0; y < S; y++)
		for (int x = 0; x < S; x++) {
			float gx = ((float)x + 0.5f - ox) / sx - 0.5f;
			float gy = ((float)y + 0.5f - oy) / sy - 0.5f;
			float x0 = floorf(gx), y0 = floorf(gy);
			float fx = gx - x0, fy = gy - y0;
			int ix = (int)x0, iy = (int)y0;
			float top = (1.0f - fx) * glyph(d, ix, iy) + fx * glyph(d, ix + 1, iy);
			float bot = (1.0f - fx) * glyph(d, ix, iy + 1) + fx * glyph(d, ix + 1, iy + 1);
			img[y][x] = (1.0f - fy) * top + fy * bot;
		}
	/* thicker strokes: max with the image moved one pixel right (then down);
	 * walking backwards reads each neighbour before it is overwritten */
	if (thick >= 1)
		for (int y = 0; y < S; y++)
			for (int x = S - 1; x > 0; x--)
				img[y][x] = fmaxf(img[y][x], img[y][x - 1]);
	if (thick >= 2)
		for (int y = S - 1; y > 0; y--)
			for (int x = 0; x < S; x++)
				img[y][x] = fmaxf(img[y][x], img[y - 1][x]);
	/* noise: a sum of 4 uniforms, centred and scaled to unit variance */
	for (int p = 0; p < S * S; p++) {
		uint32_t k = 8 + 4 * (uint32_t)p;
		float n = uniform(base, k) + uniform(base, k + 1) + uniform(base, k + 2) + uniform(base, k + 3);
		float v = img[p / S][p % S] * ink + sigma * ((n - 2.0f) * 1.7320508f);
		img[p / S][p % S] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
	}
	return d;
}

#endif
