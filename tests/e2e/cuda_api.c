/* cuda_api.c: the CUDA target's API past the --main program, linked with
 * a network compiled with --target cuda --cuda-emu and prefix net
 * (tests/e2e/cuda.sh step 7; emulated: host memory stands for device
 * memory there, so the arena here is malloc'd):
 * - net_run_with_arena on the caller's 64-byte aligned arena gives the
 *   outputs of net_run (the program's arena) byte for byte;
 * - an arena 4 bytes off is refused with NET_ERR_ARENA (the kernels load
 *   arena tensors 16 bytes at a time), and the outputs are left alone.
 * Inputs: float32, a fixed pseudo-random pattern. Prints "ok" or what
 * failed; exit status 1 on failure. */
#include "net.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXIO 8

int main(void)
{
	void *in[MAXIO], *out[2][MAXIO];
	if (NET_NUM_INPUTS > MAXIO || NET_NUM_OUTPUTS > MAXIO)
		return fprintf(stderr, "cuda_api: too many inputs or outputs\n"), 1;
	uint32_t s = 12345;
	for (int k = 0; k < NET_NUM_INPUTS; k++) {
		if (net_inputs[k].dtype != 1)
			return fprintf(stderr, "cuda_api: input %d is not float32\n", k), 1;
		float *x = malloc(net_inputs[k].bytes);
		for (size_t i = 0; i < net_inputs[k].numel; i++)
			s = s * 1664525u + 1013904223u, x[i] = (float)(s >> 8) / (1 << 24) * 2 - 1;
		in[k] = x;
	}
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < NET_NUM_OUTPUTS; k++)
			out[r][k] = calloc(1, net_outputs[k].bytes);
	int rc = net_run((const void *const *)in, out[0]);
	if (rc)
		return fprintf(stderr, "cuda_api: net_run returned %d %s\n", rc, net_cuda_error()), 1;
	unsigned char *arena = aligned_alloc(64, (NET_ARENA_SIZE + 64 + 63) / 64 * 64);
	rc = net_run_with_arena(arena + 4, (const void *const *)in, out[1]);
	if (rc != NET_ERR_ARENA)
		return fprintf(stderr, "cuda_api: a misaligned arena gave %d, not NET_ERR_ARENA\n", rc), 1;
	for (int k = 0; k < NET_NUM_OUTPUTS; k++)
		for (size_t i = 0; i < net_outputs[k].bytes; i++)
			if (((unsigned char *)out[1][k])[i])
				return fprintf(stderr, "cuda_api: the refused run wrote output %d\n", k), 1;
	rc = net_run_with_arena(arena, (const void *const *)in, out[1]);
	if (rc)
		return fprintf(stderr, "cuda_api: net_run_with_arena returned %d %s\n", rc, net_cuda_error()), 1;
	for (int k = 0; k < NET_NUM_OUTPUTS; k++)
		if (memcmp(out[0][k], out[1][k], net_outputs[k].bytes))
			return fprintf(stderr, "cuda_api: output %d differs between the two arenas\n", k), 1;
	net_free();
	printf("ok\n");
	return 0;
}
