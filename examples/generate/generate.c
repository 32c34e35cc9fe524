/* generate.c: greedy decoding with a decoder compiled by onnxcc, the loop
 * an application runs: the prompt's tokens in one step (prefill, an empty
 * past), then one token a step, each step's presents the next step's
 * pasts (docs/api.md, A decoder's KV cache).
 *
 *   onnxcc decoder.onnx -o decoder.c --name decoder --dim batch=1 --dim seq=1..S --dim past=0..P
 *   cc -O2 generate.c decoder.c decoder_weights.c -lm -o generate
 *   ./generate N ID...      greedy: N new tokens after the prompt ID...
 *
 * The model (make_decoder.py): inputs input_ids, position_ids [1, seq]
 * and per layer past_I [2, 1, heads, past, head]; outputs logits [1, seq,
 * vocab] and present_I [2, 1, heads, past + seq, head]. Prints the new ids,
 * then the prefill's and the decode's tokens a second to stderr. */
#include "decoder.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAXL 16 /* layers */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	const int L = DECODER_NUM_INPUTS - 2;
	if (argc < 3 || L < 1 || L > MAXL) {
		fprintf(stderr, "usage: %s N ID...\n", argv[0]);
		return 2;
	}
	const long steps = atol(argv[1]), np = argc - 2;
	const int64_t *pd = decoder_inputs[2].shape; /* [2, batch, heads, past, head], the most */
	const int64_t heads = pd[2], maxpast = pd[3], head = pd[4], maxseq = decoder_inputs[0].shape[1];
	const int64_t vocab = decoder_outputs[0].shape[2];
	if (np > maxseq || np + steps > maxpast + 1) {
		fprintf(stderr, "generate: a prompt of at most %lld tokens and %lld in all\n", (long long)maxseq,
			(long long)maxpast + 1);
		return 2;
	}
	/* two cache buffers a layer, each a step's past and the next's present
	 * in turn, large enough for the longest present */
	const size_t cache = (size_t)(2 * heads * (maxpast + 1) * head);
	float *kv[MAXL][2];
	for (int l = 0; l < L; l++)
		for (int b = 0; b < 2; b++)
			if (!(kv[l][b] = calloc(cache, sizeof(float))))
				return 1;
	int64_t *ids = malloc((size_t)maxseq * sizeof *ids), *pos = malloc((size_t)maxseq * sizeof *pos);
	float *logits = malloc((size_t)(maxseq * vocab) * sizeof *logits);
	if (!ids || !pos || !logits)
		return 1;
	for (long i = 0; i < np; i++)
		ids[i] = atoll(argv[2 + i]);
	int64_t past = 0, seq = np;
	double tp = 0, td = 0;
	for (long s = 0, cur = 0; s < steps; s++, cur ^= 1) {
		for (int64_t i = 0; i < seq; i++)
			pos[i] = past + i;
		int64_t ids_shape[2] = {1, seq}, past_shape[MAXL][5], pres_shape[MAXL][5], log_shape[3];
		const void *in[2 + MAXL] = {ids, pos};
		const int64_t *in_shapes[2 + MAXL] = {ids_shape, ids_shape};
		void *out[1 + MAXL] = {logits};
		int64_t *out_shapes[1 + MAXL] = {log_shape};
		for (int l = 0; l < L; l++) {
			past_shape[l][0] = 2, past_shape[l][1] = 1, past_shape[l][2] = heads, past_shape[l][3] = past;
			past_shape[l][4] = head;
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
