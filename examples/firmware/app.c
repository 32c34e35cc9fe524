/* app.c: the firmware's application, the same source on the Cortex-M4 and
 * on the host (port.h is the difference).
 *
 * Draws IMAGES digits with render() of examples/digits/render.h (seed
 * SEED), runs the network compiled with `onnxcc --name net` on each
 * through net_run, and prints for each image the digit drawn, the output
 * floats as their bit patterns (exact) and in decimal, and the argmax. On
 * the board it then prints the least, mean and most SysTick ticks of a run
 * (core clock; under QEMU with -icount, 40 instructions a tick: README.md)
 * and the stack's unused bytes. No stdio, no heap: the numbers are
 * formatted here. */
#include "../digits/render.h"
#include "net.h"
#include "port.h"

#include <stdint.h>
#include <string.h>

#ifndef IMAGES
#define IMAGES 10
#endif
#ifndef SEED
#define SEED 2026
#endif
#define CLASSES 10

/* the put_* write at p and return the end; put_str also ends the string */
static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	*p = 0;
	return p;
}

static char *put_u64(char *p, uint64_t v)
{
	char t[20];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = t[--n];
	return p;
}

static char *put_hex32(char *p, uint32_t v)
{
	p = put_str(p, "0x");
	for (int s = 28; s >= 0; s -= 4)
		*p++ = "0123456789abcdef"[(v >> s) & 15];
	return p;
}

/* v in decimal with 6 places (|v| < 2147, else "big" or "nan"): for people
 * to read (the bits are what is compared), in float so that a board
 * without an FPU links no double arithmetic */
static char *put_fixed(char *p, float v)
{
	if (!(v > -2147.0f && v < 2147.0f))
		return put_str(p, v != v ? "nan" : "big");
	float d = v * 1e6f;
	int32_t m = (int32_t)(d < 0 ? d - 0.5f : d + 0.5f);
	if (m < 0)
		*p++ = '-', m = -m;
	p = put_u64(p, (uint64_t)(m / 1000000));
	*p++ = '.';
	char frac[7];
	for (int k = 5; k >= 0; k--, m /= 10)
		frac[k] = (char)('0' + m % 10);
	frac[6] = 0;
	return put_str(p, frac);
}

static void fail(const char *what)
{
	fw_puts("error: ");
	fw_puts(what);
	fw_puts("\n");
	fw_exit(1);
}

int main(void)
{
	static float img[S][S], out[CLASSES];
	static uint64_t clocks[IMAGES];
	static char line[256];
	if (NET_NUM_INPUTS != 1 || NET_NUM_OUTPUTS != 1 || net_inputs[0].dtype != 1 ||
	    net_inputs[0].numel != S * S || net_outputs[0].dtype != 1 || net_outputs[0].numel != CLASSES)
		fail("net.h is not a f32[1,1,16,16] -> f32[1,10] network");
	char *p = put_str(line, "net: arena ");
	p = put_u64(p, NET_ARENA_SIZE);
	p = put_str(p, " bytes, weights ");
	p = put_u64(p, NET_WEIGHTS_SIZE);
	p = put_str(p, " bytes, ");
	p = put_u64(p, IMAGES);
	p = put_str(p, " images of seed ");
	p = put_u64(p, SEED);
	put_str(p, "\n");
	fw_puts(line);

	int correct = 0;
	for (int i = 0; i < IMAGES; i++) {
		int drew = render(SEED, (uint32_t)i, img);
		const void *in[1] = {img};
		void *outs[1] = {out};
		uint64_t t0 = fw_clock();
		int rc = net_run(in, outs);
		clocks[i] = fw_clock() - t0;
		if (rc != 0)
			fail("net_run failed");
		int best = 0;
		for (int k = 1; k < CLASSES; k++)
			if (out[k] > out[best])
				best = k;
		correct += best == drew;
		for (int k = 0; k < CLASSES; k++) {
			uint32_t bits;
			memcpy(&bits, &out[k], 4);
			p = put_str(line, "out ");
			p = put_u64(p, (uint64_t)i);
			*p++ = ' ';
			p = put_u64(p, (uint64_t)k);
			*p++ = ' ';
			p = put_hex32(p, bits);
			*p++ = ' ';
			p = put_fixed(p, out[k]);
			put_str(p, "\n");
			fw_puts(line);
		}
		p = put_str(line, "image ");
		p = put_u64(p, (uint64_t)i);
		p = put_str(p, ": drew ");
		p = put_u64(p, (uint64_t)drew);
		p = put_str(p, ", argmax ");
		p = put_u64(p, (uint64_t)best);
		put_str(p, best == drew ? "\n" : "  WRONG\n");
		fw_puts(line);
	}
	p = put_str(line, "correct: ");
	p = put_u64(p, (uint64_t)correct);
	*p++ = '/';
	p = put_u64(p, IMAGES);
	put_str(p, "\n");
	fw_puts(line);

	/* timing: not part of the comparison (the host has no clock here) */
	if (fw_clock_hz != 0) {
		uint64_t lo = clocks[0], hi = clocks[0], sum = 0;
		for (int i = 0; i < IMAGES; i++) {
			lo = clocks[i] < lo ? clocks[i] : lo;
			hi = clocks[i] > hi ? clocks[i] : hi;
			sum += clocks[i];
		}
		p = put_str(line, "clock: ");
		p = put_u64(p, fw_clock_hz);
		p = put_str(p, " Hz, per run min ");
		p = put_u64(p, lo);
		p = put_str(p, " mean ");
		p = put_u64(p, sum / IMAGES);
		p = put_str(p, " max ");
		p = put_u64(p, hi);
		put_str(p, " ticks\n");
		fw_puts(line);
	}
	long unused = fw_stack_unused();
	if (unused >= 0) {
		p = put_str(line, "stack: ");
		p = put_u64(p, (uint64_t)unused);
		put_str(p, " bytes never used\n");
		fw_puts(line);
	}
	return 0;
}
