/* generate.c: greedy decoding with a decoder compiled by onnxcc, the loop
 * an application runs: the prompt's tokens in one step (prefill, an empty
 * past), then one token a step, each step's presents the next step's
 * pasts (docs/api.md, A decoder's KV cache).
 *
 *   onnxcc decoder.onnx -o decoder.c --name decoder --pool --dim batch=1 --dim seq=1..S --dim past=0..P
 *   cc -O2 generate.c decoder.c decoder_weights.c -lm -lpthread -o generate
 *   ./generate [--threads T] N ID...   greedy: N new tokens after the prompt ID...
 *
 * --threads T: the network's loops on T threads (decoder_pool.h, which
 * onnxcc --pool writes; default 1).
 *
 * The model (make_decoder.py): inputs input_ids, position_ids [1, seq]
 * (or attention_mask [1, past + seq], its ones), then the caches (past_I [2, 1, heads, past, head], or past_key_I and
 * past_value_I [1, heads, past, head]: the past the next-to-last axis);
 * outputs logits [1, seq, vocab], then the presents in the caches' order
 * (past + seq rows). Prints the new ids, then the prefill's and the
 * decode's tokens a second to stderr. */
#include "decoder.h"
#include "decoder_pool.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXL 64 /* caches */
#define MAXR 8  /* their rank */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	const int L = DECODER_NUM_INPUTS - 2;
	int threads = 1;
	if (argc > 2 && !strcmp(argv[1], "--threads"))
		threads = atoi(argv[2]), argc -= 2, argv += 2;
	if (argc < 3 || L < 1 || L > MAXL || DECODER_NUM_OUTPUTS != L + 1 || decoder_set_threads(threads)) {
		fprintf(stderr, "usage: generate [--threads 1..1024] N ID...\n");
		return 2;
	}
	const long steps = atol(argv[1]), np = argc - 2;
	const int rank = decoder_inputs[2].rank;
	const int64_t maxpast = decoder_inputs[2].shape[rank - 2], maxseq = decoder_inputs[0].shape[1];
	const int64_t vocab = decoder_outputs[0].shape[2];
	if (np > maxseq || np + steps > maxpast + 1 || rank > MAXR) {
		fprintf(stderr, "generate: a prompt of at most %lld tokens and %lld in all\n", (long long)maxseq,
			(long long)maxpast + 1);
		return 2;
	}
	/* two buffers a cache, each a step's past and the next's present in
	 * turn, large enough for the longest present */
	float *kv[MAXL][2];
	for (int l = 0; l < L; l++)
		for (int b = 0; b < 2; b++)
			if (!(kv[l][b] = calloc(decoder_outputs[1 + l].numel, sizeof(float))))
				return 1;
	/* input 1: position_ids [1, seq], or attention_mask [1, past + seq] (its ones) */
	const int mask = decoder_inputs[1].name[0] == 'a';
	int64_t *ids = malloc((size_t)maxseq * sizeof *ids), *pos = malloc((size_t)(maxpast + maxseq) * sizeof *pos);
	float *logits = malloc((size_t)(maxseq * vocab) * sizeof *logits);
	if (!ids || !pos || !logits)
		return 1;
	for (long i = 0; i < np; i++)
		ids[i] = atoll(argv[2 + i]);
	int64_t past = 0, seq = np;
	double tp = 0, td = 0;
	for (long s = 0, cur = 0; s < steps; s++, cur ^= 1) {
		for (int64_t i = 0; i < (mask ? past + seq : seq); i++)
			pos[i] = mask ? 1 : past + i;
		int64_t ids_shape[2] = {1, seq}, mask_shape[2] = {1, past + seq}, past_shape[MAXL][MAXR], pres_shape[MAXL][MAXR],
			log_shape[3];
		const void *in[2 + MAXL] = {ids, pos};
		const int64_t *in_shapes[2 + MAXL] = {ids_shape, mask ? mask_shape : ids_shape};
		void *out[1 + MAXL] = {logits};
		int64_t *out_shapes[1 + MAXL] = {log_shape};
		for (int l = 0; l < L; l++) {
			for (int i = 0; i < rank; i++) /* (the batch, compiled as 1; the past) */
				past_shape[l][i] = i == rank - 2 ? past : decoder_inputs[2 + l].shape[i];
			in[2 + l] = kv[l][cur], in_shapes[2 + l] = past_shape[l];
			out[1 + l] = kv[l][cur ^ 1], out_shapes[1 + l] = pres_shape[l];
		}
		const double t0 = now();
		const int rc = decoder_run_shaped(NULL, in, in_shapes, out, out_shapes);
		const double dt = now() - t0;
		if (rc) {
			fprintf(stderr, "generate: step %ld: decoder_run_shaped returned %d\n", s, rc);
			return 1;
		}
		*(s ? &td : &tp) += dt;
		/* the next token: the argmax of the last position's logits */
		const float *row = logits + (seq - 1) * vocab;
		int64_t best = 0;
		for (int64_t v = 1; v < vocab; v++)
			if (row[v] > row[best])
				best = v;
		printf("%s%lld", s ? " " : "", (long long)best);
		past += seq, seq = 1, ids[0] = best;
	}
	printf("\n");
	fprintf(stderr, "generate: prefill %ld tokens in %.3f ms (%.0f tokens/s), decode %ld tokens in %.3f ms (%.0f tokens/s)\n",
		np, tp * 1e3, np / tp, steps - 1, td * 1e3, steps > 1 ? (steps - 1) / td : 0.0);
	return 0;
}
