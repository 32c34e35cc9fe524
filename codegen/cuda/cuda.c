/* cuda.c: the host side of OUT.cu (--target cuda), from the templates
 * runtime_min/ox_cuda_state.c and ox_cuda_api.c, and the API's header.
 *
 * A node is computed by a kernel of codegen/cuda/ (cuda_dispatch.c) when one takes
 * it (ox_cu_emit), else by the C target's own emitter: its node function
 * is device code, its independent tasks (ox_cg_tasks) one device thread
 * each, or the whole function one device thread (codegen/c.c, emit_spec).
 * The host side mirrors the C API (docs/api.md, docs/cuda.md): init
 * uploads the weights and allocates one device arena planned by the same
 * planner, a run is enqueued on a stream, captured once into a CUDA Graph
 * and replayed while its inputs, outputs, arena and shapes stay the same.
 * Invariant: the text is the same for nvcc and for --cuda-emu.
 */
#include "../cg.h"
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

/* The host side (runtime_min/ox_cuda_state.c before the run functions
 * that read its state, runtime_min/ox_cuda_api.c after them), instantiated
 * with the program's names and counts: $P, $PU the prefix; $NIN, $NOUT
 * its inputs and outputs, $NI, $NO one more each (an array of them is
 * never empty), $NIO both; $NS the ox_d[] slots and $NX the extents (one
 * more than there are of each); $MAXR the outputs' largest rank plus one;
 * $WS, $NCTR the split-K workspace bytes and counters; and the parts that
 * depend on the program: $INIT (PREFIX_init), $READY, and the lines $DIMS,
 * $CAPT, $CASES (one per specialization). */
static void host_part(ox_buf *c, const char *name, const ox_cu_info *fi, const char *init, const char *ready,
		      const char *dims, const char *capt, const char *cases)
{
	const char *keys[] = {"$PU", "$P", "$NIN", "$NIO", "$NI", "$NOUT", "$NO", "$NS", "$NX", "$MAXR", "$WS", "$NCTR",
			      "$INIT\n", "$READY\n", "$DIMS\n", "$CAPT\n", "$CASES\n"};
	char nin[24], nio[24], ni[24], nout[24], no[24], ns[24], nx[24], maxr[24], ws[24], nctr[24];
	ox_cg_snprintf(nin, sizeof nin, "%d", fi->ninputs);
	ox_cg_snprintf(nio, sizeof nio, "%d", fi->ninputs + fi->noutputs);
	ox_cg_snprintf(ni, sizeof ni, "%d", fi->ninputs + 1);
	ox_cg_snprintf(nout, sizeof nout, "%d", fi->noutputs);
	ox_cg_snprintf(no, sizeof no, "%d", fi->noutputs + 1);
	ox_cg_snprintf(ns, sizeof ns, "%d", fi->nslots + 1);
	ox_cg_snprintf(nx, sizeof nx, "%d", fi->noutputs + 1);
	ox_cg_snprintf(maxr, sizeof maxr, "%d", fi->maxrank + 1);
	ox_cg_snprintf(ws, sizeof ws, "%lld", (long long)fi->ws_bytes);
	ox_cg_snprintf(nctr, sizeof nctr, "%lld", (long long)fi->nctr);
	const char *vals[] = {fi->PU, fi->P, nin, nio, ni, nout, no, ns, nx, maxr, ws, nctr,
			      init, ready, dims, capt, cases};
	ox_cg_substitute(c, ox_cg_template(name), keys, vals, (int)(sizeof keys / sizeof *keys));
}

void ox_cu_host_state(ox_buf *c, const ox_cu_info *fi)
{
	ox_buf init = {0};
	if (fi->external)
		ox_buf_printf(&init, "int %s_init(const void *blob, size_t size)\n{\n"
				     "\tint rc = %s_check_blob(blob, size);\n"
				     "\tif (rc)\n\t\treturn rc;\n"
				     "\treturn ox_cu_init(%s_W);\n}\n\n", fi->P, fi->P, fi->P);
	else
		ox_buf_printf(&init, "int %s_init(void)\n{\n\treturn ox_cu_init(%s);\n}\n\n", fi->P, fi->wsym);
	host_part(c, "runtime_min/ox_cuda_state.c", fi, init.s, "", "", "", "");
	ox_buf_free(&init);
}

void ox_cu_host_api(ox_buf *c, const ox_cu_info *fi)
{
	ox_buf ready = {0}, dims = {0}, capt = {0}, cases = {0};
	if (fi->external)
		ox_buf_printf(&ready, "static int ox_ready(void)\n{\n\treturn ox_s.ready ? 0 : %s_ERR_NO_WEIGHTS;\n}\n\n", fi->PU);
	else
		ox_buf_printf(&ready, "static int ox_ready(void)\n{\n\treturn ox_s.ready ? 0 : %s_init();\n}\n\n", fi->P);
	for (int s = 0; s < fi->nspecs; s++) {
		ox_buf_printf(&dims, "\t%sif (!%s_dims%d(shapes, d))\n\t\ts = %d;\n", s ? "else " : "", fi->P, s, s);
		if (fi->capturable[s])
			ox_buf_printf(&capt, "\tcapturable |= s == %d;\n", s);
		ox_buf_printf(&cases, "\t\tcase %d:\n"
				      "\t\t\trc = %s_run%d(A, ox_s.hd, ox_dd, ox_dext, ox_status, inputs, outputs, oshp, st);\n"
				      "\t\t\tbreak;\n", s, fi->P, s);
	}
	host_part(c, "runtime_min/ox_cuda_api.c", fi, "", ready.s, dims.s ? dims.s : "", capt.s ? capt.s : "",
		  cases.s ? cases.s : "");
	ox_buf_free(&ready), ox_buf_free(&dims), ox_buf_free(&capt), ox_buf_free(&cases);
}
