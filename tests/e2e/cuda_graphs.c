/* cuda_graphs.c: the CUDA target's captured runs, one per input shape
 * (OX_GRAPHS of them kept), linked with tests/e2e/dynslice's network
 * compiled with --target cuda --cuda-emu --dim N=1..4 --dim H=4..12
 * --dim W=4..12 and prefix net (tests/e2e/cuda.sh step 12). It runs
 * net_run_shaped over the (N, H, W) of SEQ below, each time first with
 * OX_CUDA_GRAPHS=0 (no graph: the reference) and then with graphs, and
 * checks that both give the same bytes. cuda.sh counts the graphs made
 * and replayed in the emulation's trace (OX_EMU_TRACE): 3 distinct shapes,
 * so 3 made and 6 replayed, where keeping one graph would make 6. Prints
 * "ok" or what failed; exit status 1 on failure. */
#include "net.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int SEQ[6][3] = {{3, 7, 9}, {2, 12, 4}, {3, 7, 9}, {2, 12, 4}, {4, 5, 5}, {3, 7, 9}};

int main(void)
{
	if (NET_NUM_INPUTS != 3 || NET_NUM_OUTPUTS != 5)
		return fprintf(stderr, "cuda_graphs: not dynslice's network\n"), 1;
	void *in[3], *out[5], *ref[5];
	uint32_t s = 12345;
	for (int k = 0; k < 3; k++) {
		in[k] = malloc(net_inputs[k].bytes);
		for (size_t i = 0; i < net_inputs[k].numel; i++) {
			s = s * 1664525u + 1013904223u;
			if (net_inputs[k].dtype == 6) /* int32 x: small, so x * x stays exact */
				((int32_t *)in[k])[i] = (int32_t)(s >> 24) - 128;
			else
				((float *)in[k])[i] = (float)(s >> 8) / (1 << 24) * 2 - 1;
		}
	}
	for (int k = 0; k < 5; k++)
		out[k] = malloc(net_outputs[k].bytes), ref[k] = malloc(net_outputs[k].bytes);
	for (int r = 0; r < 6; r++) {
		const int64_t N = SEQ[r][0], H = SEQ[r][1], W = SEQ[r][2];
		const int64_t sx[2] = {N, 6}, sim[4] = {N, 4, H, W};
		const int64_t *in_shapes[3] = {sx, sx, sim};
		int64_t osh[5][4], *out_shapes[5];
		for (int k = 0; k < 5; k++)
			out_shapes[k] = osh[k];
		for (int pass = 0; pass < 2; pass++) {
			setenv("OX_CUDA_GRAPHS", pass ? "1" : "0", 1);
			for (int k = 0; k < 5; k++)
				memset(pass ? out[k] : ref[k], 0, net_outputs[k].bytes);
			int rc = net_run_shaped(NULL, (const void *const *)in, in_shapes, pass ? out : ref, out_shapes);
			if (rc)
				return fprintf(stderr, "cuda_graphs: run %d (N %lld, H %lld, W %lld)%s returned %d %s\n", r,
					       (long long)N, (long long)H, (long long)W, pass ? "" : " without graphs", rc,
					       net_cuda_error()),
				       1;
		}
		for (int k = 0; k < 5; k++)
			if (memcmp(out[k], ref[k], net_outputs[k].bytes))
				return fprintf(stderr, "cuda_graphs: run %d (N %lld, H %lld, W %lld): output %d differs from the run without graphs\n",
					       r, (long long)N, (long long)H, (long long)W, k),
				       1;
	}
	net_free();
	printf("ok\n");
	return 0;
}
