/* generate.c: greedy decoding with a decoder compiled by onnxcc, the loop
 * an application runs: the prompt's tokens in one step (prefill, an empty
 * past), then one token a step, each step's presents the next step's
 * pasts (docs/api.md, A decoder's KV cache).
 *
 *   onnxcc decoder.onnx -o decoder.c --name decoder --pool --dim batch=1 --dim seq=1..S --dim past=0..P
 *   cc -O2 generate.c decoder.c decoder_weights.c -lm -lpthread -o generate
 *   ./generate [-w W] [--threads T] N ID...   greedy: N new tokens after the prompt ID...
 *
 * --threads T: the network's loops on T threads (decoder_pool.h, which
 * onnxcc --pool writes; default 1; the C target).
 *
 * The same source for --target cuda (decoder.h defines DECODER_CUDA):
 *   nvcc -O3 -arch=sm_90 generate.c decoder.cu decoder_weights.c -o generate
 * keeps the caches on the device (decoder_run_shaped_device, then
 * decoder_sync); a step copies its ids in and the last position's logits
 * out. Built with -DOX_CUDA_EMU beside a --cuda-emu program, whose device
 * memory is the host's, it uses host buffers as the C target does.
 *
 * The model (make_decoder.py): inputs input_ids, position_ids [1, seq]
 * (or attention_mask [1, past + seq], its ones), then the caches (past_I [2, 1, heads, past, head], or past_key_I and
 * past_value_I [1, heads, past, head]: the past the next-to-last axis);
 * outputs logits [1, seq, vocab], then the presents in the caches' order
 * (past + seq rows). Prints the new ids, then the prefill's and the
 * decode's tokens a second to stderr, of the last of W + 1 runs of the
 * whole loop (-w: W warm-up runs, untimed). */
#include "decoder.h"
#ifndef DECODER_CUDA
#include "decoder_pool.h"
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXL 64 /* caches */
#define MAXR 8  /* their rank */

#if defined(DECODER_CUDA) && !defined(OX_CUDA_EMU)
#include <cuda_runtime_api.h>
static void *dev_alloc(size_t n)
{
	void *p = NULL;
	return cudaMalloc(&p, n) || cudaMemset(p, 0, n) ? NULL : p;
}
static void copy(void *to, const void *from, size_t n)
{
	cudaMemcpy(to, from, n, cudaMemcpyDefault); /* (an error shows at the next run) */
}
#else
static void *dev_alloc(size_t n)
{
	return calloc(1, n ? n : 1);
}
static void copy(void *to, const void *from, size_t n)
{
	memcpy(to, from, n);
}
#endif

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *error_text(void)
{
#ifdef DECODER_CUDA
	return decoder_cuda_error();
#else
	return "";
#endif
}

/* the buffers of a run: the caches, two each (a step's past and the
 * next's present in turn, large enough for the longest present), the
 * inputs and the logits where the program reads and writes them (d_), and
 * the host's copies of what it reads (ids, pos, one row of logits) */
typedef struct {
	int L, rank, mask;
	int64_t vocab;
	void *kv[MAXL][2], *d_ids, *d_pos, *d_logits;
	int64_t *ids, *pos;
	float *row;
} bufs;

/* one greedy run: steps tokens after the prompt's np; prints them if out */
static int decode(bufs *b, long steps, long np, const int64_t *prompt, FILE *out, double *tp, double *td)
{
	const int L = b->L, rank = b->rank, mask = b->mask;
	const int64_t vocab = b->vocab;
	memcpy(b->ids, prompt, (size_t)np * sizeof *b->ids);
	int64_t past = 0, seq = np;
	*tp = *td = 0;
	for (long s = 0, cur = 0; s < steps; s++, cur ^= 1) {
		for (int64_t i = 0; i < (mask ? past + seq : seq); i++)
			b->pos[i] = mask ? 1 : past + i;
		int64_t ids_shape[2] = {1, seq}, mask_shape[2] = {1, past + seq}, past_shape[MAXL][MAXR], pres_shape[MAXL][MAXR],
			log_shape[3];
		const void *in[2 + MAXL] = {b->d_ids, b->d_pos};
		const int64_t *in_shapes[2 + MAXL] = {ids_shape, mask ? mask_shape : ids_shape};
		void *outs[1 + MAXL] = {b->d_logits};
		int64_t *out_shapes[1 + MAXL] = {log_shape};
		for (int l = 0; l < L; l++) {
			for (int i = 0; i < rank; i++) /* (the batch, compiled as 1; the past) */
				past_shape[l][i] = i == rank - 2 ? past : decoder_inputs[2 + l].shape[i];
			in[2 + l] = b->kv[l][cur], in_shapes[2 + l] = past_shape[l];
			outs[1 + l] = b->kv[l][cur ^ 1], out_shapes[1 + l] = pres_shape[l];
		}
		const double t0 = now();
		copy(b->d_ids, b->ids, (size_t)seq * sizeof *b->ids);
		copy(b->d_pos, b->pos, (size_t)(mask ? past + seq : seq) * sizeof *b->pos);
#ifdef DECODER_CUDA
		int rc = decoder_run_shaped_device(NULL, in, in_shapes, outs, out_shapes, NULL);
		if (!rc)
			rc = decoder_sync(NULL);
#else
		const int rc = decoder_run_shaped(NULL, in, in_shapes, outs, out_shapes);
#endif
		/* the next token: the argmax of the last position's logits */
		copy(b->row, (const float *)b->d_logits + (seq - 1) * vocab, (size_t)vocab * sizeof *b->row);
		const double dt = now() - t0;
		if (rc) {
			fprintf(stderr, "generate: step %ld: the decoder returned %d %s\n", s, rc, error_text());
			return 1;
		}
		*(s ? td : tp) += dt;
		int64_t best = 0;
		for (int64_t v = 1; v < vocab; v++)
			if (b->row[v] > b->row[best])
				best = v;
		if (out)
			fprintf(out, "%s%lld", s ? " " : "", (long long)best);
		past += seq, seq = 1, b->ids[0] = best;
	}
	if (out)
		fprintf(out, "\n");
	return 0;
}

int main(int argc, char **argv)
{
	int warm = 0, threads = 1, a = 1;
	for (; a + 1 < argc && (!strcmp(argv[a], "-w") || !strcmp(argv[a], "--threads")); a += 2)
		*(argv[a][1] == 'w' ? &warm : &threads) = atoi(argv[a + 1]);
	bufs b = {.L = DECODER_NUM_INPUTS - 2};
	const int L = b.L;
#ifdef DECODER_CUDA
	const int bad = threads != 1; /* (the kernels are the parallel work) */
#else
	const int bad = decoder_set_threads(threads);
#endif
	if (argc < a + 2 || L < 1 || L > MAXL || DECODER_NUM_OUTPUTS != L + 1 || bad) {
		fprintf(stderr, "usage: %s [-w W] [--threads 1..1024, the C target] N ID...\n", argv[0]);
		return 2;
	}
	const long steps = atol(argv[a]), np = argc - a - 1;
	const int rank = b.rank = decoder_inputs[2].rank;
	const int64_t maxpast = decoder_inputs[2].shape[rank - 2], maxseq = decoder_inputs[0].shape[1];
	const int64_t vocab = b.vocab = decoder_outputs[0].shape[2];
	if (np > maxseq || np + steps > maxpast + 1 || rank > MAXR) {
		fprintf(stderr, "generate: a prompt of at most %lld tokens and %lld in all\n", (long long)maxseq,
			(long long)maxpast + 1);
		return 2;
	}
#ifdef DECODER_CUDA
	if (decoder_init()) { /* (the weights' upload and the arena: not the prefill's time) */
		fprintf(stderr, "generate: decoder_init: %s\n", decoder_cuda_error());
		return 1;
	}
#endif
	for (int l = 0; l < L; l++)
		for (int k = 0; k < 2; k++)
			if (!(b.kv[l][k] = dev_alloc(decoder_outputs[1 + l].bytes)))
				return 1;
	/* input 1: position_ids [1, seq], or attention_mask [1, past + seq] (its ones) */
	b.mask = decoder_inputs[1].name[0] == 'a';
	b.ids = malloc((size_t)maxseq * sizeof *b.ids), b.pos = malloc((size_t)(maxpast + maxseq) * sizeof *b.pos);
	b.row = malloc((size_t)vocab * sizeof *b.row);
	b.d_ids = dev_alloc(decoder_inputs[0].bytes), b.d_pos = dev_alloc(decoder_inputs[1].bytes);
	b.d_logits = dev_alloc(decoder_outputs[0].bytes);
	int64_t *prompt = malloc((size_t)np * sizeof *prompt);
	if (!b.ids || !b.pos || !b.row || !b.d_ids || !b.d_pos || !b.d_logits || !prompt)
		return 1;
	for (long i = 0; i < np; i++)
		prompt[i] = atoll(argv[a + 1 + i]);
	double tp = 0, td = 0;
	for (int r = 0; r <= warm; r++)
		if (decode(&b, steps, np, prompt, r == warm ? stdout : NULL, &tp, &td))
			return 1;
	fprintf(stderr, "generate: prefill %ld tokens in %.3f ms (%.0f tokens/s), decode %ld tokens in %.3f ms (%.0f tokens/s)\n",
		np, tp * 1e3, np / tp, steps - 1, td * 1e3, steps > 1 ? (steps - 1) / td : 0.0);
	return 0;
}
