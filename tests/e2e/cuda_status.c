/* cuda_status.c: the run-time errors of native kernels (tests/e2e/cuda.sh
 * step 8), linked with tests/e2e/gather/gather.onnx's network compiled
 * with --target cuda --cuda-emu and prefix net. Its Gathers read their
 * indices at run time on kernels that set the run's status word; the run
 * is captured into a CUDA Graph and replayed. In order, on one program:
 * indices in range give 0; one out of range gives NET_ERR_INDEX, from
 * net_run and from net_run_device + net_sync (a replay); in range again
 * gives 0 and the first run's outputs, byte for byte (the status word is
 * reset by every run). Prints "ok" or what failed; exit status 1 then. */
#include "net.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	if (NET_NUM_INPUTS != 4 || NET_NUM_OUTPUTS != 2)
		return fprintf(stderr, "cuda_status: not gather.onnx's network\n"), 1;
	int64_t ids[14] = {0, 49, -1, 7, 7, -50, 3, 12, 5, 0, 33, 48, -2, 1}, idx[5] = {9, -10, 0, 4, -1};
	int32_t pos[7] = {0, 1, 2, 3, -4, 14, 15};
	float x[120];
	for (int i = 0; i < 120; i++)
		x[i] = (float)i * 0.25f - 7;
	const void *in[4] = {ids, pos, x, idx};
	void *out[2][2];
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < 2; k++)
			out[r][k] = calloc(1, net_outputs[k].bytes);
	int rc = net_run(in, out[0]);
	if (rc)
		return fprintf(stderr, "cuda_status: indices in range gave %d\n", rc), 1;
	idx[2] = -11;
	if ((rc = net_run(in, out[1])) != NET_ERR_INDEX)
		return fprintf(stderr, "cuda_status: an index out of range gave %d from net_run\n", rc), 1;
	/* the device API (host memory stands for device memory under emulation) */
	if ((rc = net_run_device(in, out[1], NULL)) || (rc = net_sync(NULL)) != NET_ERR_INDEX)
		return fprintf(stderr, "cuda_status: an index out of range gave %d from net_run_device + net_sync\n", rc), 1;
	idx[2] = 0;
	if ((rc = net_run_device(in, out[1], NULL)) || (rc = net_sync(NULL)))
		return fprintf(stderr, "cuda_status: indices in range again gave %d\n", rc), 1;
	for (int k = 0; k < 2; k++)
		if (memcmp(out[0][k], out[1][k], net_outputs[k].bytes))
			return fprintf(stderr, "cuda_status: output %d differs after the error\n", k), 1;
	net_free();
	printf("ok\n");
	return 0;
}
