/* cuda.c: the CUDA rendering (--target cuda): the dispatch of nodes to
 * kernels, the C made device code, and the host side of OUT.cu.
 *
 * A node is computed by a kernel of codegen/cuda_kernels.c when one takes
 * it (ox_cu_emit), else by the C target's own emitter: its node function
 * is device code, its independent tasks (ox_cg_tasks) one device thread
 * each, or the whole function one device thread (codegen/c.c, emit_spec).
 * The host side mirrors the C API (docs/api.md, docs/cuda.md): init
 * uploads the weights and allocates one device arena planned by the same
 * planner, a run is enqueued on a stream, captured once into a CUDA Graph
 * and replayed while its inputs, outputs, arena and shapes stay the same.
 * Invariant: the text is the same for nvcc and for --cuda-emu.
 */
#include "cg.h"
#include "cuda.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ox_cu_blank(const char *text, size_t len)
{
	for (size_t i = 0; text && i < len; i++) {
		if (isspace((unsigned char)text[i]))
			continue;
		if (text[i] == '/' && i + 1 < len && text[i + 1] == '*') {
			const char *e = strstr(text + i + 2, "*/");
			if (!e)
				return 0;
			i = (size_t)(e - text) + 1;
			continue;
		}
		return 0;
	}
	return 1;
}

/* Is this line (at column 0) the head of a static function or a
 * file-scope static object? Functions: "static ... name(" with no '='
 * before the parenthesis; objects: "static ... = " or "static ...[". */
static int static_head(const char *l, const char *end)
{
	if (strncmp(l, "static ", 7))
		return 0;
	const char *paren = memchr(l, '(', (size_t)(end - l)), *eq = memchr(l, '=', (size_t)(end - l));
	const char *br = memchr(l, '[', (size_t)(end - l));
	if (paren && (!eq || paren < eq) && (!br || paren < br))
		return 1;
	return eq || br ? 2 : 0;
}

void ox_cu_device(ox_buf *out, const char *text)
{
	for (const char *l = text; l && *l;) {
		const char *end = strchr(l, '\n');
		end = end ? end + 1 : l + strlen(l);
		int k = static_head(l, end);
		int dev = 0; /* (on this line: a later one's does not count) */
		for (const char *q = l; q + 10 <= end && !dev; q++)
			dev = !strncmp(q, "__device__", 10);
		if (k && !dev && (size_t)(end - l) > 7) {
			/* "static inline" functions too: __device__ after "static " */
			ox_buf_printf(out, "[[maybe_unused]] static __device__ %.*s", (int)(end - l - 7), l + 7);
		} else {
			ox_buf_printf(out, "%.*s", (int)(end - l), l);
		}
		l = end;
	}
}

void ox_cu_api_h(ox_buf *h, const char *P, const char *PU, int external)
{
	ox_buf_printf(h, "/* --target cuda (docs/cuda.md): the device arena, the weights on the\n"
			 " * device, a stream and the CUDA Graph of a run live in the program.\n"
			 " * Returned by any function below when a CUDA call failed; the\n"
			 " * text of its error: %s_cuda_error(). */\n"
			 "#define %s_ERR_CUDA (-20)\n#define %s_CUDA 1\n"
			 "/* Returned by a run given an arena that is not 64-byte aligned\n"
			 " * (cudaMalloc's are): the kernels load its tensors 16 bytes at a time. */\n"
			 "#define %s_ERR_ARENA (-21)\n\n",
		      P, PU, PU, PU);
	ox_buf_printf(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	ox_buf_printf(h, "/* (the C target's parallel-for type; the CUDA target has no hook) */\n"
			 "typedef void (*%s_task_fn)(void *ctx, long begin, long end);\n", P);
	if (external)
		ox_buf_printf(h, "/* Check the blob (size, magic, version, model, CRC-32) and upload it\n"
				 " * to the device, allocate the device arena and the stream. Returns 0,\n"
				 " * one of the %s_ERR_ codes above, or %s_ERR_CUDA. The blob may be\n"
				 " * freed afterwards. */\n"
				 "int %s_init(const void *blob, size_t size);\n", PU, PU, P);
	else
		ox_buf_printf(h, "/* Upload the weights to the device, allocate the device arena and the\n"
				 " * stream. Returns 0 or %s_ERR_CUDA (no device, no driver: the\n"
				 " * text says which). The first run calls it when the program has not. */\n"
				 "int %s_init(void);\n", PU, P);
	ox_buf_printf(h, "/* Free what init allocated (the next run or init allocates again). */\n"
			 "void %s_free(void);\n", P);
	ox_buf_printf(h, "/* The CUDA error behind the last %s_ERR_CUDA, as \"CUDA error N (name):\n"
			 " * text\"; \"\" when there was none. */\n"
			 "const char *%s_cuda_error(void);\n\n", PU, P);
	ox_buf_printf(h, "/* ---- device pointers, enqueued ----\n"
			 " * inputs[k] and outputs[k] are device pointers (cudaMalloc) of\n"
			 " * %s_inputs[k].bytes / %s_outputs[k].bytes. The run is enqueued on\n"
			 " * stream (a cudaStream_t; NULL: the program's own stream, which\n"
			 " * waits for the legacy default stream's work like any blocking\n"
			 " * stream) and the call returns without waiting: 0, %s_ERR_SHAPE\n"
			 " * (checked before anything is enqueued), %s_ERR_CUDA or\n"
			 " * _ERR_NO_WEIGHTS. A run is captured into a CUDA Graph the first\n"
			 " * time its pointers, arena, stream and input shapes come, and\n"
			 " * replayed when they come again (the last 8 such graphs are kept).\n"
			 " * Errors the data causes (%s_ERR_INDEX ...) come from\n"
			 " * %s_sync. Not reentrant: one run in flight per arena. */\n",
		      P, P, PU, PU, PU, P);
	ox_buf_printf(h, "int %s_run_device(const void *const *inputs, void *const *outputs, void *stream);\n", P);
	ox_buf_printf(h, "/* The same with run-time shapes (see %s_run_shaped) and a device arena of\n"
			 " * %s_ARENA_SIZE bytes, 64-byte aligned (NULL: the program's; else\n"
			 " * _ERR_ARENA). out_shapes are known\n"
			 " * when the call returns, but for an output with a dynamic_axis: then\n"
			 " * the call waits for the run. */\n", P, PU);
	ox_buf_printf(h, "int %s_run_shaped_device(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			 "\t\tvoid *const *outputs, int64_t *const *out_shapes, void *stream);\n", P);
	ox_buf_printf(h, "/* Wait for the runs enqueued on stream (NULL: the program's) and return\n"
			 " * 0, or the first error code a run met (%s_ERR_INDEX, ...). */\n"
			 "int %s_sync(void *stream);\n\n", PU, P);
	ox_buf_printf(h, "/* ---- host pointers: the C target's functions, synchronous ----\n"
			 " * Copy the inputs to the device, run, copy the outputs back and wait.\n"
			 " * arena: a device arena of %s_ARENA_SIZE bytes, 64-byte aligned, NULL\n"
			 " * for the program's. */\n", PU);
	ox_buf_printf(h, "int %s_run(const void *const *inputs, void *const *outputs);\n", P);
	ox_buf_printf(h, "int %s_run_with_arena(void *arena, const void *const *inputs, void *const *outputs);\n", P);
	ox_buf_printf(h, "int %s_run_ex(void *arena, const void *const *inputs, void *const *outputs, int64_t *extents);\n", P);
	ox_buf_printf(h, "int %s_run_shaped(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			 "\t\tvoid *const *outputs, int64_t *const *out_shapes);\n\n", P);
	ox_buf_printf(h, "/* Time runs on the device: the host inputs are uploaded once, then each\n"
			 " * of n runs (%s_run_shaped_device on the program's stream) is timed\n"
			 " * by CUDA events into ms[r], after one warm-up run. Returns like\n"
			 " * %s_sync. */\n"
			 "int %s_bench(const void *const *inputs, const int64_t *const *in_shapes, long n, double *ms);\n\n",
		      P, P, P);
	ox_buf_printf(h, "#ifdef __cplusplus\n}\n#endif\n\n");
}

void ox_cu_profile_h(ox_buf *h, const char *P, const char *PU)
{
	ox_buf_printf(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
	ox_buf_printf(h, "/* Time each generated function on the device: the host inputs are\n"
			 " * uploaded once, then n runs (after a warm-up) are enqueued without the\n"
			 " * CUDA Graph, each function's launches between two CUDA events.\n"
			 " * ms[k] (%s_NUM_FUNCS entries) receives function k's time summed over\n"
			 " * the n runs (0 for one the runs' specialization does not call). The\n"
			 " * gaps between launches count, so the sum exceeds a replayed run's\n"
			 " * time by about a launch per function. Returns like %s_sync. */\n"
			 "int %s_profile(const void *const *inputs, const int64_t *const *in_shapes, long n, double *ms);\n",
		      PU, P, P);
	ox_buf_printf(h, "#ifdef __cplusplus\n}\n#endif\n\n");
}

/* the host side's first part, before the run functions that read its
 * state: the state, the error text, free and init */
void ox_cu_host_state(ox_buf *c, const ox_cu_info *fi)
{
	const char *P = fi->P, *PU = fi->PU;
	const int NS = fi->nslots + 1, NX = fi->noutputs + 1, NI = fi->ninputs + 1, NO = fi->noutputs + 1;
	ox_buf_printf(c, "/* ---- the host side ---- */\n"
			 "/* dd (device) and hd (pinned host): the run-time dims ox_d[%d], the\n"
			 " * extents of the outputs [%d], the status of the runs */\n", NS, NX);
	ox_buf_printf(c, "#define OX_NS %d\n#define OX_NX %d\n#define OX_MAXR %d\n", NS, NX, fi->maxrank + 1);
	ox_buf_printf(c, "#define OX_WS_BYTES %lld /* split-K workspace on the device */\n", (long long)fi->ws_bytes);
	ox_buf_printf(c, "#define OX_CTR_COUNT %lld /* its tiles' arrival counters */\n", (long long)fi->nctr);
	ox_buf_puts(c, "#define OX_GRAPHS 8 /* captured runs kept (for input shapes, pointers, stream), the\n"
		       "\t\t     * least recently replayed one replaced */\n");
	ox_buf_printf(c, "static struct {\n"
			 "\tint ready;\n\tunsigned char *A, *W;\n\tint64_t *dd, *hd;\n"
			 "\tvoid *in[%d], *out[%d];\n\tcudaStream_t st;\n"
			 "\t/* the captured runs (ox_gentry: keyed by the shapes' case, the\n"
			 "\t * stream, the arena, the dims and the pointers), the output shapes\n"
			 "\t * each run gives, the caches' clock */\n"
			 "\tox_gentry g[OX_GRAPHS];\n"
			 "\tint64_t shape[OX_GRAPHS][%d][OX_MAXR];\n"
			 "\tunsigned long long tick;\n"
			 "} ox_s;\n\n", NI, NO, NO);
	ox_buf_printf(c, "/* %s_profile: an event before and after each function's launches */\n"
			 "static cudaEvent_t ox_prof_ev[2 * %s_NUM_FUNCS + 2];\n"
			 "static unsigned char ox_prof_hit[%s_NUM_FUNCS + 1];\n"
			 "static int ox_prof_on;\n"
			 "#define OX_PROF(k, end) do { if (ox_prof_on) { cudaEventRecord(ox_prof_ev[2 * (k) + (end)], ox_st); ox_prof_hit[k] = 1; } } while (0)\n\n",
		      P, PU, PU);
	ox_buf_printf(c, "static char ox_cu_msg[256];\n"
			 "const char *%s_cuda_error(void)\n{\n"
			 "\tif (ox_cu_err == cudaSuccess)\n\t\treturn \"\";\n"
			 "\tsnprintf(ox_cu_msg, sizeof ox_cu_msg, \"CUDA error %%d (%%s): %%s\", (int)ox_cu_err,\n"
			 "\t\t cudaGetErrorName(ox_cu_err), cudaGetErrorString(ox_cu_err));\n"
			 "\treturn ox_cu_msg;\n}\n\n", P);
	/* the dims a node computed from data, and the status, back on the host */
	ox_buf_printf(c, "[[maybe_unused]] static int ox_sync_dims(cudaStream_t st)\n{\n"
			 "\tif (ox_cu_check(cudaMemcpyAsync(ox_s.hd, ox_s.dd, (OX_NS + OX_NX + 1) * sizeof(int64_t),\n"
			 "\t\t\tcudaMemcpyDeviceToHost, st)) || ox_cu_check(cudaStreamSynchronize(st)))\n"
			 "\t\treturn %s_ERR_CUDA;\n"
			 "\treturn (int)ox_s.hd[OX_NS + OX_NX];\n}\n\n", PU);
	ox_buf_printf(c, "void %s_free(void)\n{\n"
			 "\tox_graphs_free(ox_s.g, OX_GRAPHS);\n"
			 "\tox_body_graphs_free();\n"
			 "\tcudaFree(ox_s.A), cudaFree(ox_s.W), cudaFree(ox_s.dd), cudaFreeHost(ox_s.hd), cudaFree(ox_cu_ws);\n"
			 "\tcudaFree(ox_cu_ctr), cudaFreeHost(ox_cu_H);\n"
			 "\tox_cu_ws = NULL, ox_cu_ctr = NULL, ox_cu_H = NULL;\n"
			 "\tfor (int k = 0; k < %d; k++)\n\t\tcudaFree(ox_s.in[k]);\n"
			 "\tfor (int k = 0; k < %d; k++)\n\t\tcudaFree(ox_s.out[k]);\n"
			 "\tif (ox_s.st)\n\t\tcudaStreamDestroy(ox_s.st);\n"
			 "\tmemset(&ox_s, 0, sizeof ox_s);\n}\n\n", P, fi->ninputs, fi->noutputs);
	/* init: from the weights in the program or a checked blob */
	ox_buf_printf(c, "static int ox_cu_init(const unsigned char *w)\n"
			 "{\n"
			 "\t%s_free();\n"
			 "\tox_cu_err = cudaSuccess;\n"
			 "\tsize_t a = %s_ARENA_SIZE > 0 ? %s_ARENA_SIZE : 1, ws = %s_WEIGHTS_SIZE > 0 ? %s_WEIGHTS_SIZE : 1;\n"
			 "\tif (ox_cu_check(cudaStreamCreate(&ox_s.st)) || ox_cu_check(cudaMalloc((void **)&ox_s.A, a)) ||\n"
			 "\t    ox_cu_check(cudaMalloc((void **)&ox_s.W, ws)) ||\n"
			 "\t    ox_cu_check(cudaMalloc((void **)&ox_s.dd, (OX_NS + OX_NX + 1) * sizeof(int64_t))) ||\n"
			 "\t    ox_cu_check(cudaMallocHost((void **)&ox_s.hd, (OX_NS + OX_NX + 1) * sizeof(int64_t))) ||\n"
			 "\t    (OX_WS_BYTES > 0 && ox_cu_check(cudaMalloc((void **)&ox_cu_ws, OX_WS_BYTES))) ||\n"
			 "\t    (OX_CTR_COUNT > 0 && (ox_cu_check(cudaMalloc((void **)&ox_cu_ctr, OX_CTR_COUNT * sizeof(unsigned int))) ||\n"
			 "\t\t\t      ox_cu_check(cudaMemset(ox_cu_ctr, 0, OX_CTR_COUNT * sizeof(unsigned int))))) ||\n"
			 "\t    (OX_HOST_BYTES > 0 && ox_cu_check(cudaMallocHost((void **)&ox_cu_H, OX_HOST_BYTES))))\n"
			 "\t\tgoto fail;\n"
			 "\tif (%s_WEIGHTS_SIZE > 0 && ox_cu_check(cudaMemcpy(ox_s.W, w, %s_WEIGHTS_SIZE, cudaMemcpyHostToDevice)))\n"
			 "\t\tgoto fail;\n"
			 "\tfor (int k = 0; k < %d; k++)\n",
		      P, PU, PU, PU, PU, PU, PU, fi->ninputs);
	ox_buf_printf(c, "\t\tif (ox_cu_check(cudaMalloc(&ox_s.in[k], %s_inputs[k].bytes ? %s_inputs[k].bytes : 1)))\n"
			 "\t\t\tgoto fail;\n"
			 "\tfor (int k = 0; k < %d; k++)\n"
			 "\t\tif (ox_cu_check(cudaMalloc(&ox_s.out[k], %s_outputs[k].bytes ? %s_outputs[k].bytes : 1)))\n"
			 "\t\t\tgoto fail;\n"
			 "\tmemset(ox_s.hd, 0, (OX_NS + OX_NX + 1) * sizeof(int64_t));\n"
			 "\tOX_LAUNCH(ox_set_dev_w, 1, 1, 0, ox_s.st, ox_s.W);\n"
			 "\tif (ox_cu_check(cudaGetLastError()) || ox_cu_check(cudaStreamSynchronize(ox_s.st)))\n"
			 "\t\tgoto fail;\n"
			 "\tox_s.ready = 1;\n"
			 "\treturn 0;\n"
			 "fail:;\n"
			 "\tcudaError_t e = ox_cu_err;\n"
			 "\t%s_free();\n"
			 "\tox_cu_err = e;\n"
			 "\treturn %s_ERR_CUDA;\n"
			 "}\n"
			 "\n",
		      P, P, fi->noutputs, P, P, P, PU);
	if (fi->external)
		ox_buf_printf(c, "int %s_init(const void *blob, size_t size)\n{\n"
				 "\tint rc = %s_check_blob(blob, size);\n"
				 "\tif (rc)\n\t\treturn rc;\n"
				 "\treturn ox_cu_init(%s_W);\n}\n\n", P, P, P);
	else
		ox_buf_printf(c, "int %s_init(void)\n{\n\treturn ox_cu_init(%s);\n}\n\n", P, fi->wsym);
}

/* the host side's second part, after the run functions: the dispatcher
 * with its CUDA Graphs, the API */
void ox_cu_host_api(ox_buf *c, const ox_cu_info *fi)
{
	const char *P = fi->P, *PU = fi->PU;
	const int NI = fi->ninputs + 1, NO = fi->noutputs + 1;
	/* the dispatcher and its helpers: elements of a tensor of the given
	 * shape, bytes per element, init when the program has not */
	ox_buf_printf(c, "static int64_t ox_nelem(const %s_tensor_desc *d, const int64_t *shape)\n{\n"
			 "\t(void)d;\n\tint64_t n = 1;\n\tfor (int i = 0; i < d->rank; i++)\n\t\tn *= shape[i];\n"
			 "\treturn n;\n}\n\n", P);
	ox_buf_printf(c, "static size_t ox_esize(const %s_tensor_desc *d)\n{\n"
			 "\treturn d->bytes / (d->numel ? d->numel : 1);\n}\n\n", P);
	if (fi->external)
		ox_buf_printf(c, "static int ox_ready(void)\n{\n\treturn ox_s.ready ? 0 : %s_ERR_NO_WEIGHTS;\n}\n\n", PU);
	else
		ox_buf_printf(c, "static int ox_ready(void)\n{\n\treturn ox_s.ready ? 0 : %s_init();\n}\n\n", P);
	ox_buf_printf(c, "static int %s_dispatch(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			 "\t\tvoid *const *outputs, int64_t *const *out_shapes, cudaStream_t st)\n{\n", P);
	ox_buf_puts(c, "\tint rc0 = ox_ready();\n\tif (rc0)\n\t\treturn rc0;\n");
	ox_buf_printf(c, "\tif (!st)\n\t\tst = ox_s.st;\n"
			 "\tunsigned char *A = arena ? (unsigned char *)arena : ox_s.A;\n"
			 "\tif ((uintptr_t)A %% 64)\n\t\treturn %s_ERR_ARENA;\n"
			 "\tconst int64_t *shapes[%d];\n"
			 "\tfor (int k = 0; k < %d; k++)\n"
			 "\t\tshapes[k] = in_shapes && in_shapes[k] ? in_shapes[k] : %s_inputs[k].shape;\n"
			 "\tint64_t d[OX_NS];\n\tmemset(d, 0, sizeof d);\n\tint s = -1;\n",
		      PU, NI, fi->ninputs, P);
	for (int s = 0; s < fi->nspecs; s++)
		ox_buf_printf(c, "\t%sif (!%s_dims%d(shapes, d))\n\t\ts = %d;\n", s ? "else " : "", P, s, s);
	ox_buf_printf(c, "\tif (s < 0)\n\t\treturn %s_ERR_SHAPE;\n", PU);
	ox_buf_printf(c, "\t/* the dims the run's copy to the device reads: not under a run in flight */\n"
			 "\tif (memcmp(d, ox_s.hd, sizeof d)) {\n"
			 "\t\tif (ox_cu_check(cudaStreamSynchronize(st)))\n\t\t\treturn %s_ERR_CUDA;\n"
			 "\t\tmemcpy(ox_s.hd, d, sizeof d);\n\t}\n", PU);
	ox_buf_printf(c, "\tint64_t osh[%d][OX_MAXR];\n\tint64_t *oshp[%d];\n"
			 "\tfor (int k = 0; k < %d; k++)\n\t\toshp[k] = osh[k];\n", NO, NO, fi->noutputs);
	ox_buf_printf(c, "\tint capturable = 0, rc = 0;\n");
	for (int s = 0; s < fi->nspecs; s++)
		if (fi->capturable[s])
			ox_buf_printf(c, "\tcapturable |= s == %d;\n", s);
	ox_buf_printf(c, "\tif (ox_graphs_off() || ox_prof_on) /* (events between the launches) */\n"
			 "\t\tcapturable = 0;\n");
	ox_buf_printf(c, "\t/* this run's captured graph (gi), if it has one */\n"
			 "\tint64_t key[3 + OX_NS + %d];\n\tint nk = 0;\n"
			 "\tkey[nk++] = s, key[nk++] = (int64_t)(intptr_t)st, key[nk++] = (int64_t)(intptr_t)A;\n"
			 "\tfor (int k = 0; k < OX_NS; k++)\n\t\tkey[nk++] = d[k];\n"
			 "\tfor (int k = 0; k < %d; k++)\n\t\tkey[nk++] = (int64_t)(intptr_t)inputs[k];\n"
			 "\tfor (int k = 0; k < %d; k++)\n\t\tkey[nk++] = (int64_t)(intptr_t)outputs[k];\n"
			 "\tint gi = capturable ? ox_graph_find(ox_s.g, OX_GRAPHS, key, nk) : -1;\n",
		      fi->ninputs + fi->noutputs, fi->ninputs, fi->noutputs);
	ox_buf_printf(c, "\tif (!capturable || gi < 0) {\n"
			 "\t\tif (capturable && (gi = ox_graph_begin(ox_s.g, OX_GRAPHS, key, nk, st)) < 0)\n"
			 "\t\t\treturn %s_ERR_CUDA;\n"
			 "\t\tint64_t *ox_dd = ox_s.dd, *ox_dext = ox_s.dd + OX_NS;\n"
			 "\t\tint *ox_status = (int *)(ox_s.dd + OX_NS + OX_NX);\n"
			 "\t\tcudaMemsetAsync(ox_status, 0, sizeof(int64_t), st);\n"
			 "\t\tcudaMemcpyAsync(ox_dd, ox_s.hd, OX_NS * sizeof(int64_t), cudaMemcpyHostToDevice, st);\n"
			 "\t\tswitch (s) {\n", PU);
	for (int s = 0; s < fi->nspecs; s++)
		ox_buf_printf(c, "\t\tcase %d:\n\t\t\trc = %s_run%d(A, ox_s.hd, ox_dd, ox_dext, ox_status, inputs, outputs, oshp, st);\n"
				 "\t\t\tbreak;\n", s, P, s);
	ox_buf_printf(c, "\t\t}\n"
			 "\t\tcudaMemcpyAsync(ox_s.hd + OX_NS, ox_dext, (OX_NX + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost, st);\n"
			 "\t\tif (capturable) {\n"
			 "\t\t\tif ((rc = ox_graph_end(&ox_s.g[gi], st, rc, %s_ERR_CUDA)))\n\t\t\t\treturn rc;\n"
			 "\t\t\tmemcpy(ox_s.shape[gi], osh, sizeof osh);\n"
			 "\t\t}\n\t\tif (rc)\n\t\t\treturn rc;\n\t}\n",
		      PU);
	ox_buf_printf(c, "\tif (capturable) {\n"
			 "\t\tif (ox_graph_launch(&ox_s.g[gi], &ox_s.tick, st))\n\t\t\treturn %s_ERR_CUDA;\n"
			 "\t\tmemcpy(osh, ox_s.shape[gi], sizeof osh);\n\t}\n"
			 "\tif (ox_cu_check(cudaGetLastError()))\n\t\treturn %s_ERR_CUDA;\n", PU, PU);
	/* the output shapes, a dynamic axis from the extents (after a wait) */
	ox_buf_printf(c, "\tfor (int k = 0; k < %d && out_shapes; k++)\n"
			 "\t\tif (out_shapes[k])\n"
			 "\t\t\tfor (int i = 0; i < %s_outputs[k].rank; i++)\n"
			 "\t\t\t\tout_shapes[k][i] = %s_outputs[k].dynamic_axis == i ? ox_s.hd[OX_NS + k] : osh[k][i];\n"
			 "\treturn 0;\n}\n\n", fi->noutputs, P, P);
	ox_buf_printf(c, "int %s_sync(void *stream)\n{\n"
			 "\tif (!ox_s.ready)\n\t\treturn 0;\n"
			 "\tif (ox_cu_check(cudaStreamSynchronize(stream ? (cudaStream_t)stream : ox_s.st)))\n"
			 "\t\treturn %s_ERR_CUDA;\n"
			 "\treturn (int)ox_s.hd[OX_NS + OX_NX];\n}\n\n", P, PU);
	ox_buf_printf(c, "int %s_run_shaped_device(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			 "\t\tvoid *const *outputs, int64_t *const *out_shapes, void *stream)\n{\n"
			 "\treturn %s_dispatch(arena, inputs, in_shapes, outputs, out_shapes, (cudaStream_t)stream);\n}\n\n"
			 "int %s_run_device(const void *const *inputs, void *const *outputs, void *stream)\n{\n"
			 "\treturn %s_dispatch(NULL, inputs, NULL, outputs, NULL, (cudaStream_t)stream);\n}\n\n",
		      P, P, P, P);
	/* host pointers */
	/* the host inputs into the program's device buffers, on its stream */
	ox_buf_printf(c, "static int ox_upload(const void *const *inputs, const int64_t *const *in_shapes)\n{\n"
			 "\tint rc = ox_ready();\n\tif (rc)\n\t\treturn rc;\n"
			 "\tfor (int k = 0; k < %d; k++) {\n"
			 "\t\tconst %s_tensor_desc *dk = &%s_inputs[k];\n"
			 "\t\tsize_t n = (size_t)ox_nelem(dk, in_shapes && in_shapes[k] ? in_shapes[k] : dk->shape);\n"
			 "\t\tif (n > dk->numel)\n\t\t\treturn %s_ERR_SHAPE;\n"
			 "\t\tif (n && ox_cu_check(cudaMemcpyAsync(ox_s.in[k], inputs[k], n * ox_esize(dk),\n"
			 "\t\t\t\tcudaMemcpyHostToDevice, ox_s.st)))\n\t\t\treturn %s_ERR_CUDA;\n\t}\n"
			 "\treturn 0;\n}\n\n",
		      fi->ninputs, P, P, PU, PU);
	ox_buf_printf(c, "static int ox_host_run(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			 "\t\tvoid *const *outputs, int64_t *const *out_shapes, int64_t *extents)\n{\n");
	ox_buf_puts(c, "\tint rc0 = ox_upload(inputs, in_shapes);\n\tif (rc0)\n\t\treturn rc0;\n");
	ox_buf_printf(c, "\tint64_t osh[%d][OX_MAXR];\n\tint64_t *oshp[%d];\n"
			 "\tfor (int k = 0; k < %d; k++)\n\t\toshp[k] = osh[k];\n"
			 "\tint rc = %s_dispatch(arena, (const void *const *)ox_s.in, in_shapes, ox_s.out, oshp, ox_s.st);\n"
			 "\tif (!rc)\n\t\trc = %s_sync(NULL);\n"
			 "\tif (rc)\n\t\treturn rc;\n", NO, NO, fi->noutputs, P, P);
	ox_buf_printf(c, "\tfor (int k = 0; k < %d; k++) {\n"
			 "\t\tconst %s_tensor_desc *dk = &%s_outputs[k];\n"
			 "\t\tsize_t n = (size_t)ox_nelem(dk, osh[k]);\n"
			 "\t\tif (n && ox_cu_check(cudaMemcpy(outputs[k], ox_s.out[k], n * ox_esize(dk),\n"
			 "\t\t\t\tcudaMemcpyDeviceToHost)))\n\t\t\treturn %s_ERR_CUDA;\n"
			 "\t\tif (out_shapes && out_shapes[k])\n\t\t\tmemcpy(out_shapes[k], osh[k], (size_t)dk->rank * sizeof(int64_t));\n"
			 "\t\tif (extents)\n\t\t\textents[k] = dk->dynamic_axis < 0 ? -1 : osh[k][dk->dynamic_axis];\n"
			 "\t}\n\treturn 0;\n}\n\n", fi->noutputs, P, P, PU);
	ox_buf_printf(c, "int %s_run_shaped(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			 "\t\tvoid *const *outputs, int64_t *const *out_shapes)\n{\n"
			 "\treturn ox_host_run(arena, inputs, in_shapes, outputs, out_shapes, NULL);\n}\n\n"
			 "int %s_run_ex(void *arena, const void *const *inputs, void *const *outputs, int64_t *extents)\n{\n"
			 "\treturn ox_host_run(arena, inputs, NULL, outputs, NULL, extents);\n}\n\n"
			 "int %s_run_with_arena(void *arena, const void *const *inputs, void *const *outputs)\n{\n"
			 "\treturn ox_host_run(arena, inputs, NULL, outputs, NULL, NULL);\n}\n\n"
			 "int %s_run(const void *const *inputs, void *const *outputs)\n{\n"
			 "\treturn ox_host_run(NULL, inputs, NULL, outputs, NULL, NULL);\n}\n\n", P, P, P, P);
	/* bench: the inputs uploaded once, the loop's first run the warm-up */
	ox_buf_printf(c, "int %s_bench(const void *const *inputs, const int64_t *const *in_shapes, long n, double *ms)\n{\n"
			 "\tint rc = ox_upload(inputs, in_shapes);\n"
			 "\tif (rc)\n\t\treturn rc;\n"
			 "\tcudaEvent_t e0, e1;\n"
			 "\tif (ox_cu_check(cudaEventCreate(&e0)) || ox_cu_check(cudaEventCreate(&e1)))\n\t\treturn %s_ERR_CUDA;\n"
			 "\tfor (long r = 0; r <= n && !rc; r++) {\n"
			 "\t\tcudaEventRecord(e0, ox_s.st);\n"
			 "\t\trc = %s_run_shaped_device(NULL, (const void *const *)ox_s.in, in_shapes, ox_s.out, NULL, ox_s.st);\n"
			 "\t\tcudaEventRecord(e1, ox_s.st);\n"
			 "\t\tif (!rc && ox_cu_check(cudaEventSynchronize(e1)))\n\t\t\trc = %s_ERR_CUDA;\n"
			 "\t\tfloat t = 0;\n\t\tcudaEventElapsedTime(&t, e0, e1);\n"
			 "\t\tif (r > 0)\n\t\t\tms[r - 1] = t;\n\t}\n"
			 "\tcudaEventDestroy(e0), cudaEventDestroy(e1);\n"
			 "\treturn rc ? rc : %s_sync(NULL);\n}\n\n",
		      P, PU, P, PU, P);
	/* profile: the same, each function between two events, no graph */
	ox_buf_printf(c, "int %s_profile(const void *const *inputs, const int64_t *const *in_shapes, long n, double *ms)\n"
			 "{\n"
			 "\tint rc = ox_upload(inputs, in_shapes), ne = 0;\n"
			 "\tif (rc)\n"
			 "\t\treturn rc;\n"
			 "\tfor (int k = 0; k < %s_NUM_FUNCS; k++)\n"
			 "\t\tms[k] = 0;\n"
			 "\tfor (; ne < 2 * %s_NUM_FUNCS; ne++)\n"
			 "\t\tif (ox_cu_check(cudaEventCreate(&ox_prof_ev[ne]))) {\n"
			 "\t\t\trc = %s_ERR_CUDA;\n"
			 "\t\t\tbreak;\n"
			 "\t\t}\n"
			 "\tox_prof_on = 1;\n"
			 "\tfor (long r = 0; r <= n && !rc; r++) {\n"
			 "\t\tmemset(ox_prof_hit, 0, sizeof ox_prof_hit);\n"
			 "\t\trc = %s_run_shaped_device(NULL, (const void *const *)ox_s.in, in_shapes, ox_s.out, NULL, ox_s.st);\n"
			 "\t\tif (!rc && ox_cu_check(cudaStreamSynchronize(ox_s.st)))\n"
			 "\t\t\trc = %s_ERR_CUDA;\n"
			 "\t\tfor (int k = 0; k < %s_NUM_FUNCS && r > 0 && !rc; k++) {\n"
			 "\t\t\tfloat t = 0;\n"
			 "\t\t\tif (ox_prof_hit[k] && ox_cu_check(cudaEventElapsedTime(&t, ox_prof_ev[2 * k], ox_prof_ev[2 * k + 1])))\n"
			 "\t\t\t\trc = %s_ERR_CUDA;\n"
			 "\t\t\tms[k] += t;\n"
			 "\t\t}\n"
			 "\t}\n"
			 "\tox_prof_on = 0;\n"
			 "\twhile (ne > 0)\n"
			 "\t\tcudaEventDestroy(ox_prof_ev[--ne]);\n",
		      P, PU, PU, PU, P, PU, PU, PU);
	ox_buf_printf(c, "\treturn rc ? rc : %s_sync(NULL);\n"
			 "}\n"
			 "\n",
		      P);
}
