/* cuda.h: what codegen/c.c hands codegen/cuda/cuda.c to write the host side
 * of OUT.cu (--target cuda). */
#ifndef OX_CUDA_H
#define OX_CUDA_H
#include "../cg.h"

typedef struct {
	const char *P, *PU;  /* --name, and in capitals */
	int ninputs, noutputs;
	int nslots;          /* run-time dims: ox_d[] entries (the largest specialization's) */
	int maxrank;         /* the outputs' largest rank */
	int nspecs;
	const int *capturable; /* per specialization: its run may be a CUDA Graph
				  (no node makes the host wait: dims from data, failures) */
	int external;        /* --weights external: PREFIX_init(blob, size), else PREFIX_init(void) */
	const char *wsym;    /* the host array of the weights (embedded) */
	int64_t ws_bytes;    /* the kernels' split-K workspace (ox_cu_ws) */
	int64_t nctr;        /* ... and its tile counters (ox_cu_ctr) */
} ox_cu_info;

/* the API part of OUT.h */
void ox_cu_api_h(ox_buf *h, const char *P, const char *PU, int external);
/* PREFIX_profile in OUT.h (after PREFIX_funcs[]) */
void ox_cu_profile_h(ox_buf *h, const char *P, const char *PU);
/* state, init, the dispatcher with its CUDA Graph, the API functions */
void ox_cu_host_state(ox_buf *c, const ox_cu_info *fi); /* before the run functions */
void ox_cu_host_api(ox_buf *c, const ox_cu_info *fi);   /* after them */
#endif
