/* cuda_nn.c: CUDA kernels of ConvTranspose and Resize (--target cuda) */
#include "cuda_kernels.h"

int ox_cu_emit_nn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	(void)cg, (void)g, (void)n;
	return 1;
}
