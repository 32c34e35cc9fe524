/* rnn_lstm_t.c: one direction of the f32 LSTM whose W and R opt/pack.c
 * transposed (OX_L_RNNT: W as [I][4H], R as [H][4H], gates i, o, f, c),
 * with the default activations (sigmoid, tanh, tanh), no clip, peepholes,
 * input_forget or sequence lengths; H a multiple of OX_VW. Each step the
 * 4H gates are the biases plus x W^T plus h R^T, summed a row of the
 * transposed weights at a time into vectors of gates (a broadcast element
 * of x or h times OX_VW gates), then the cell and hidden state a vector of
 * units at a time with vmath.c's sigmoid and tanh. Strides as in
 * templates/rnn_lstm.c; scratch holds 10 H floats (the bias sums, the
 * gates, h, c).
 * Needs vf.c and vmath.c (codegen/c/emit_rnn.c uses them first).
 */
/* g[0, G) += sum_k v[k] w[k G + j], G a multiple of OX_VW: 4 vectors of
 * gates in registers at a time */
OX_STATIC inline void ox_lstm_t_mv(float *restrict g, const float *restrict v, const float *restrict w, long K, long G)
{
	long j = 0;
	for (; j + 4 * OX_VW <= G; j += 4 * OX_VW) {
		ox_vf a0 = ox_vf_load(g + j), a1 = ox_vf_load(g + j + OX_VW), a2 = ox_vf_load(g + j + 2 * OX_VW),
		      a3 = ox_vf_load(g + j + 3 * OX_VW);
		const float *wk = w + j;
		for (long k = 0; k < K; k++, wk += G) {
			const ox_vf x = ox_vf_set1(v[k]);
			a0 = ox_vf_fma(x, ox_vf_load(wk), a0);
			a1 = ox_vf_fma(x, ox_vf_load(wk + OX_VW), a1);
			a2 = ox_vf_fma(x, ox_vf_load(wk + 2 * OX_VW), a2);
			a3 = ox_vf_fma(x, ox_vf_load(wk + 3 * OX_VW), a3);
		}
		ox_vf_store(g + j, a0), ox_vf_store(g + j + OX_VW, a1);
		ox_vf_store(g + j + 2 * OX_VW, a2), ox_vf_store(g + j + 3 * OX_VW, a3);
	}
	for (; j < G; j += OX_VW) {
		ox_vf a = ox_vf_load(g + j);
		for (long k = 0; k < K; k++)
			a = ox_vf_fma(ox_vf_set1(v[k]), ox_vf_load(w + k * G + j), a);
		ox_vf_store(g + j, a);
	}
}

OX_STATIC void ox_lstm_t_f32(const float *restrict X, const float *restrict Wt, const float *restrict Rt,
			     const float *restrict B, const float *restrict h0, const float *restrict c0,
			     float *restrict Y, float *restrict Yh, float *restrict Yc, long S, long N, long I, long H,
			     long xt, long xb, long yt, long yb, long hs, int reverse, float *restrict scratch)
{
	const long G = 4 * H;
	float *bias = scratch, *g = scratch + G, *h = scratch + 2 * G, *c = h + H;
	for (long j = 0; j < G; j++)
		bias[j] = B ? B[j] + B[G + j] : 0.0f;
	for (long b = 0; b < N; b++) {
		for (long j = 0; j < H; j++) {
			h[j] = h0 ? h0[b * hs + j] : 0.0f;
			c[j] = c0 ? c0[b * hs + j] : 0.0f;
		}
		for (long s = 0; s < S; s++) {
			const long t = reverse ? S - 1 - s : s;
			memcpy(g, bias, (size_t)G * sizeof *g);
			ox_lstm_t_mv(g, X + t * xt + b * xb, Wt, I, G);
			ox_lstm_t_mv(g, h, Rt, H, G);
			for (long j = 0; j < H; j += OX_VW) {
				const ox_vf gi = ox_vf_sigmoid(ox_vf_load(g + j)), go = ox_vf_sigmoid(ox_vf_load(g + H + j));
				const ox_vf gf = ox_vf_sigmoid(ox_vf_load(g + 2 * H + j)), gc = ox_vf_tanh(ox_vf_load(g + 3 * H + j));
				const ox_vf cn = ox_vf_fma(gf, ox_vf_load(c + j), ox_vf_mul(gi, gc));
				ox_vf_store(c + j, cn);
				ox_vf_store(h + j, ox_vf_mul(go, ox_vf_tanh(cn)));
			}
			if (Y)
				memcpy(Y + t * yt + b * yb, h, (size_t)H * sizeof *h);
		}
		if (Yh)
			memcpy(Yh + b * hs, h, (size_t)H * sizeof *h);
		if (Yc)
			memcpy(Yc + b * hs, c, (size_t)H * sizeof *c);
	}
}
