/* rnn_simple.c: one direction of the ONNX RNN op for all batches,
 *     H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb).
 * X[t*xt + b*xb + k], Y[t*yt + b*yb + j] (Y, Yh and h0 already offset to
 * this direction), initial and final state [b*hs + j]; reverse walks each
 * batch's own length backwards. W, R, B are this direction's slices.
 * Batches go in blocks of up to OX_RNN_NB, time steps inside a block, so
 * each weight row is read once per step for the whole block. scratch
 * holds 2 * min(N, OX_RNN_NB) * H compute-type values (the caller's local
 * array). Needs templates/rnn.c.
 */
OX_STATIC void ox_rnn_simple_$S(const $T *restrict X, const $T *restrict W, const $T *restrict R,
			     const $T *restrict B, const int32_t *restrict lens, const $T *restrict h0,
			     $T *restrict Y, $T *restrict Yh, long S, long N, long I, long H, long xt, long xb,
			     long yt, long yb, long hs, int reverse, int fk, $C fa, $C fb, $C clip, $C *scratch)
{
	const long M = (N < OX_RNN_NB ? N : OX_RNN_NB) * H;
	$C *hp = scratch, *hn = scratch + M;
	for (long b0 = 0; b0 < N; b0 += OX_RNN_NB) {
		const int nb = N - b0 < OX_RNN_NB ? (int)(N - b0) : OX_RNN_NB;
		for (int i = 0; i < nb; i++)
			ox_rnn_init_$S(hp + i * H, h0 ? h0 + (b0 + i) * hs : h0, H);
		const long steps = ox_rnn_maxlen_$S(lens, b0, nb, S);
		for (long s = 0; s < steps; s++) {
			int on[OX_RNN_NB];
			long t[OX_RNN_NB];
			const $T *x[OX_RNN_NB];
			const $C *h[OX_RNN_NB];
			const int na = ox_rnn_active_$S(lens, b0, nb, S, s, reverse, X, xt, xb, hp, H, on, t, x, h);
			for (long j = 0; j < H; j++) {
				const $C bias = B ? ox_ld_$S(B[j]) + ox_ld_$S(B[H + j]) : ($C)0;
				$C a[OX_RNN_NB];
				for (int i = 0; i < na; i++)
					a[i] = bias;
				ox_rnn_gate_$S(W + j * I, I, x, R + j * H, H, h, na, a);
				for (int i = 0; i < na; i++)
					hn[on[i] * H + j] = ox_rnn_act_$S(fk, ox_rnn_clip_$S(a[i], clip), fa, fb);
			}
			ox_rnn_commit_$S(hp, hn, H, on, t, na, Y, yt, yb, b0);
		}
		ox_rnn_finish_$S(lens, b0, nb, S, H, hp, Y, yt, yb, Yh, hs);
	}
}
