/* ---- the dispatcher and the API (runtime_min/ox_cuda_api.c) ---- */
static int64_t ox_nelem(const $P_tensor_desc *d, const int64_t *shape)
{
	(void)d;
	int64_t n = 1;
	for (int i = 0; i < d->rank; i++)
		n *= shape[i];
	return n;
}

static size_t ox_esize(const $P_tensor_desc *d)
{
	return d->bytes / (d->numel ? d->numel : 1);
}

$READY
static int $P_dispatch(void *arena, const void *const *inputs, const int64_t *const *in_shapes,
		void *const *outputs, int64_t *const *out_shapes, cudaStream_t st)
{
	int rc0 = ox_ready();
	if (rc0)
		return rc0;
	if (!st)
		st = ox_s.st;
	unsigned char *A = arena ? (unsigned char *)arena : ox_s.A;
	if ((uintptr_t)A % 64)
		return $PU_ERR_ARENA;
	const int64_t *shapes[$NI];
	for (int k = 0; k < $NIN; k++)
		shapes[k] = in_shapes && in_shapes[k] ? in_shapes[k] : $P_inputs[k].shape;
	int64_t d[OX_NS];
	memset(d, 0, sizeof d);
	int s = -1;
$DIMS
	if (s < 0)
		return $PU_ERR_SHAPE;
	/* the dims the run's copy to the device reads: not under a run in flight */
	if (memcmp(d, ox_s.hd, sizeof d)) {
		if (ox_cu_check(cudaStreamSynchronize(st)))
			return $PU_ERR_CUDA;
		memcpy(ox_s.hd, d, sizeof d);
	}
	int64_t osh[$NO][OX_MAXR];
	int64_t *oshp[$NO];
	for (int k = 0; k < $NOUT; k++)
		oshp[k] = osh[k];
	int capturable = 0, rc = 0;
$CAPT
	if (ox_graphs_off() || ox_prof_on) /* (events between the launches) */
		capturable = 0;
	/* this run's captured graph (gi), if it has one */
	int64_t key[3 + OX_NS + $NIO];
	int nk = 0;
	key[nk++] = s, key[nk++] = (int64_t)(intptr_t)st, key[nk++] = (int64_t)(intptr_t)A;
	for (int k = 0; k < OX_NS; k++)
		key[nk++] = d[k];
	for (int k = 0; k < $NIN; k++)
		key[nk++] = (int64_t)(intptr_t)inputs[k];
	for (int k = 0; k < $NOUT; k++)
		key[nk++] = (int64_t)(intptr_t)outputs[k];
	int gi = capturable ? ox_graph_find(ox_s.g, OX_GRAPHS, key, nk) : -1;
	if (!capturable || gi < 0) {
		if (capturable && (gi = ox_graph_begin(ox_s.g, OX_GRAPHS, key, nk, st)) < 0)
			return $PU_ERR_CUDA;
		int64_t *ox_dd = ox_s.dd, *ox_dext = ox_s.dd + OX_NS;
		int *ox_status = (int *)(ox_s.dd + OX_NS + OX_NX);
		cudaMemsetAsync(ox_status, 0, sizeof(int64_t), st);
		cudaMemcpyAsync(ox_dd, ox_s.hd, OX_NS * sizeof(int64_t), cudaMemcpyHostToDevice, st);
		switch (s) {
$CASES
		}
		cudaMemcpyAsync(ox_s.hd + OX_NS, ox_dext, (OX_NX + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost, st);
		if (capturable) {
			if ((rc = ox_graph_end(&ox_s.g[gi], st, rc, $PU_ERR_CUDA)))
				return rc;
			memcpy(ox_s.shape[gi], osh, sizeof osh);
		}
		if (rc)
			return rc;
	}
	if (capturable) {
		if (ox_graph_launch(&ox_s.g[gi], &ox_s.tick, st))
			return $PU_ERR_CUDA;
		memcpy(osh, ox_s.shape[gi], sizeof osh);
	}
	if (ox_cu_check(cudaGetLastError()))
		return $PU_ERR_CUDA;
	for (int k = 0; k < $NOUT && out_shapes; k++)
		if (out_shapes[k])
			for (int i = 0; i < $P_outputs[k].rank; i++)
				out_shapes[k][i] = $P_outputs[k].dynamic_axis == i ? ox_s.hd[OX_NS + k] : osh[k][i];
	return 0;
}

int $P_sync(void *stream)
{
	if (!ox_s.ready)
		return 0;
	if (ox_cu_check(cudaStreamSynchronize(stream ? (cudaStream_t)stream : ox_s.st)))
		return $PU_ERR_CUDA;
	return (int)ox_s.hd[OX_NS + OX_NX];
}

int $P_run_shaped_device(void *arena, const void *const *inputs, const int64_t *const *in_shapes,
		void *const *outputs, int64_t *const *out_shapes, void *stream)
{
	return $P_dispatch(arena, inputs, in_shapes, outputs, out_shapes, (cudaStream_t)stream);
}

int $P_run_device(const void *const *inputs, void *const *outputs, void *stream)
{
	return $P_dispatch(NULL, inputs, NULL, outputs, NULL, (cudaStream_t)stream);
}

static int ox_upload(const void *const *inputs, const int64_t *const *in_shapes)
{
	int rc = ox_ready();
	if (rc)
		return rc;
	for (int k = 0; k < $NIN; k++) {
		const $P_tensor_desc *dk = &$P_inputs[k];
		size_t n = (size_t)ox_nelem(dk, in_shapes && in_shapes[k] ? in_shapes[k] : dk->shape);
		if (n > dk->numel)
			return $PU_ERR_SHAPE;
		if (n && ox_cu_check(cudaMemcpyAsync(ox_s.in[k], inputs[k], n * ox_esize(dk),
				cudaMemcpyHostToDevice, ox_s.st)))
			return $PU_ERR_CUDA;
	}
	return 0;
}

static int ox_host_run(void *arena, const void *const *inputs, const int64_t *const *in_shapes,
		void *const *outputs, int64_t *const *out_shapes, int64_t *extents)
{
	int rc0 = ox_upload(inputs, in_shapes);
	if (rc0)
		return rc0;
	int64_t osh[$NO][OX_MAXR];
	int64_t *oshp[$NO];
	for (int k = 0; k < $NOUT; k++)
		oshp[k] = osh[k];
	int rc = $P_dispatch(arena, (const void *const *)ox_s.in, in_shapes, ox_s.out, oshp, ox_s.st);
	if (!rc)
		rc = $P_sync(NULL);
	if (rc)
		return rc;
	for (int k = 0; k < $NOUT; k++) {
		const $P_tensor_desc *dk = &$P_outputs[k];
		size_t n = (size_t)ox_nelem(dk, osh[k]);
		if (n && ox_cu_check(cudaMemcpy(outputs[k], ox_s.out[k], n * ox_esize(dk),
				cudaMemcpyDeviceToHost)))
			return $PU_ERR_CUDA;
		if (out_shapes && out_shapes[k])
			memcpy(out_shapes[k], osh[k], (size_t)dk->rank * sizeof(int64_t));
		if (extents)
			extents[k] = dk->dynamic_axis < 0 ? -1 : osh[k][dk->dynamic_axis];
	}
	return 0;
}

int $P_run_shaped(void *arena, const void *const *inputs, const int64_t *const *in_shapes,
		void *const *outputs, int64_t *const *out_shapes)
{
	return ox_host_run(arena, inputs, in_shapes, outputs, out_shapes, NULL);
}

int $P_run_ex(void *arena, const void *const *inputs, void *const *outputs, int64_t *extents)
{
	return ox_host_run(arena, inputs, NULL, outputs, NULL, extents);
}

int $P_run_with_arena(void *arena, const void *const *inputs, void *const *outputs)
{
	return ox_host_run(arena, inputs, NULL, outputs, NULL, NULL);
}

int $P_run(const void *const *inputs, void *const *outputs)
{
	return ox_host_run(NULL, inputs, NULL, outputs, NULL, NULL);
}

int $P_bench(const void *const *inputs, const int64_t *const *in_shapes, long n, double *ms)
{
	int rc = ox_upload(inputs, in_shapes);
	if (rc)
		return rc;
	cudaEvent_t e0, e1;
	if (ox_cu_check(cudaEventCreate(&e0)) || ox_cu_check(cudaEventCreate(&e1)))
		return $PU_ERR_CUDA;
	for (long r = 0; r <= n && !rc; r++) {
		cudaEventRecord(e0, ox_s.st);
		rc = $P_run_shaped_device(NULL, (const void *const *)ox_s.in, in_shapes, ox_s.out, NULL, ox_s.st);
		cudaEventRecord(e1, ox_s.st);
		if (!rc && ox_cu_check(cudaEventSynchronize(e1)))
			rc = $PU_ERR_CUDA;
		float t = 0;
		cudaEventElapsedTime(&t, e0, e1);
		if (r > 0)
			ms[r - 1] = t;
	}
	cudaEventDestroy(e0), cudaEventDestroy(e1);
	return rc ? rc : $P_sync(NULL);
}

int $P_profile(const void *const *inputs, const int64_t *const *in_shapes, long n, double *ms)
{
	int rc = ox_upload(inputs, in_shapes), ne = 0;
	if (rc)
		return rc;
	for (int k = 0; k < $PU_NUM_FUNCS; k++)
		ms[k] = 0;
	for (; ne < 2 * $PU_NUM_FUNCS; ne++)
		if (ox_cu_check(cudaEventCreate(&ox_prof_ev[ne]))) {
			rc = $PU_ERR_CUDA;
			break;
		}
	ox_prof_on = 1;
	for (long r = 0; r <= n && !rc; r++) {
		memset(ox_prof_hit, 0, sizeof ox_prof_hit);
		rc = $P_run_shaped_device(NULL, (const void *const *)ox_s.in, in_shapes, ox_s.out, NULL, ox_s.st);
		if (!rc && ox_cu_check(cudaStreamSynchronize(ox_s.st)))
			rc = $PU_ERR_CUDA;
		for (int k = 0; k < $PU_NUM_FUNCS && r > 0 && !rc; k++) {
			float t = 0;
			if (ox_prof_hit[k] && ox_cu_check(cudaEventElapsedTime(&t, ox_prof_ev[2 * k], ox_prof_ev[2 * k + 1])))
				rc = $PU_ERR_CUDA;
			ms[k] += t;
		}
	}
	ox_prof_on = 0;
	while (ne > 0)
		cudaEventDestroy(ox_prof_ev[--ne]);
	return rc ? rc : $P_sync(NULL);
}

