/* ---- the host side (runtime_min/ox_cuda_state.c: the state, init,
 * free; runtime_min/ox_cuda_api.c after the run functions: the
 * dispatcher with its CUDA Graphs, the API) ---- */
/* dd (device) and hd (pinned host): the run-time dims ox_d[$NS], the
 * extents of the outputs [$NX], the status of the runs */
#define OX_NS $NS
#define OX_NX $NX
#define OX_MAXR $MAXR
#define OX_WS_BYTES $WS /* split-K workspace on the device */
#define OX_CTR_COUNT $NCTR /* its tiles' arrival counters */
#define OX_GRAPHS 8 /* captured runs kept (for input shapes, pointers, stream), the
		     * least recently replayed one replaced */
static struct {
	int ready;
	unsigned char *A, *W;
	int64_t *dd, *hd;
	void *in[$NI], *out[$NO];
	cudaStream_t st;
	/* the captured runs (ox_gentry: keyed by the shapes' case, the
	 * stream, the arena, the dims and the pointers), the output shapes
	 * each run gives, the caches' clock */
	ox_gentry g[OX_GRAPHS];
	int64_t shape[OX_GRAPHS][$NO][OX_MAXR];
	unsigned long long tick;
} ox_s;

/* $P_profile: an event before and after each function's launches */
static cudaEvent_t ox_prof_ev[2 * $PU_NUM_FUNCS + 2];
static unsigned char ox_prof_hit[$PU_NUM_FUNCS + 1];
static int ox_prof_on;
#define OX_PROF(k, end) do { if (ox_prof_on) { cudaEventRecord(ox_prof_ev[2 * (k) + (end)], ox_st); ox_prof_hit[k] = 1; } } while (0)

static char ox_cu_msg[256];
const char *$P_cuda_error(void)
{
	if (ox_cu_err == cudaSuccess)
		return "";
	snprintf(ox_cu_msg, sizeof ox_cu_msg, "CUDA error %d (%s): %s", (int)ox_cu_err,
		 cudaGetErrorName(ox_cu_err), cudaGetErrorString(ox_cu_err));
	return ox_cu_msg;
}

[[maybe_unused]] static int ox_sync_dims(cudaStream_t st)
{
	if (ox_cu_check(cudaMemcpyAsync(ox_s.hd, ox_s.dd, (OX_NS + OX_NX + 1) * sizeof(int64_t),
			cudaMemcpyDeviceToHost, st)) || ox_cu_check(cudaStreamSynchronize(st)))
		return $PU_ERR_CUDA;
	return (int)ox_s.hd[OX_NS + OX_NX];
}

void $P_free(void)
{
	ox_graphs_free(ox_s.g, OX_GRAPHS);
	ox_body_graphs_free();
	cudaFree(ox_s.A), cudaFree(ox_s.W), cudaFree(ox_s.dd), cudaFreeHost(ox_s.hd), cudaFree(ox_cu_ws);
	cudaFree(ox_cu_ctr), cudaFreeHost(ox_cu_H);
	ox_cu_ws = NULL, ox_cu_ctr = NULL, ox_cu_H = NULL;
	for (int k = 0; k < $NIN; k++)
		cudaFree(ox_s.in[k]);
	for (int k = 0; k < $NOUT; k++)
		cudaFree(ox_s.out[k]);
	if (ox_s.st)
		cudaStreamDestroy(ox_s.st);
	memset(&ox_s, 0, sizeof ox_s);
}

static int ox_cu_init(const unsigned char *w)
{
	$P_free();
	ox_cu_err = cudaSuccess;
	size_t a = $PU_ARENA_SIZE > 0 ? $PU_ARENA_SIZE : 1, ws = $PU_WEIGHTS_SIZE > 0 ? $PU_WEIGHTS_SIZE : 1;
	if (ox_cu_check(cudaStreamCreate(&ox_s.st)) || ox_cu_check(cudaMalloc((void **)&ox_s.A, a)) ||
	    ox_cu_check(cudaMalloc((void **)&ox_s.W, ws)) ||
	    ox_cu_check(cudaMalloc((void **)&ox_s.dd, (OX_NS + OX_NX + 1) * sizeof(int64_t))) ||
	    ox_cu_check(cudaMallocHost((void **)&ox_s.hd, (OX_NS + OX_NX + 1) * sizeof(int64_t))) ||
	    (OX_WS_BYTES > 0 && ox_cu_check(cudaMalloc((void **)&ox_cu_ws, OX_WS_BYTES))) ||
	    (OX_CTR_COUNT > 0 && (ox_cu_check(cudaMalloc((void **)&ox_cu_ctr, OX_CTR_COUNT * sizeof(unsigned int))) ||
			      ox_cu_check(cudaMemset(ox_cu_ctr, 0, OX_CTR_COUNT * sizeof(unsigned int))))) ||
	    (OX_HOST_BYTES > 0 && ox_cu_check(cudaMallocHost((void **)&ox_cu_H, OX_HOST_BYTES))))
		goto fail;
	if ($PU_WEIGHTS_SIZE > 0 && ox_cu_check(cudaMemcpy(ox_s.W, w, $PU_WEIGHTS_SIZE, cudaMemcpyHostToDevice)))
		goto fail;
	for (int k = 0; k < $NIN; k++)
		if (ox_cu_check(cudaMalloc(&ox_s.in[k], $P_inputs[k].bytes ? $P_inputs[k].bytes : 1)))
			goto fail;
	for (int k = 0; k < $NOUT; k++)
		if (ox_cu_check(cudaMalloc(&ox_s.out[k], $P_outputs[k].bytes ? $P_outputs[k].bytes : 1)))
			goto fail;
	memset(ox_s.hd, 0, (OX_NS + OX_NX + 1) * sizeof(int64_t));
	OX_LAUNCH(ox_set_dev_w, 1, 1, 0, ox_s.st, ox_s.W);
	if (ox_cu_check(cudaGetLastError()) || ox_cu_check(cudaStreamSynchronize(ox_s.st)))
		goto fail;
	ox_s.ready = 1;
	return 0;
fail:;
	cudaError_t e = ox_cu_err;
	$P_free();
	ox_cu_err = e;
	return $PU_ERR_CUDA;
}

$INIT
