/* rnn_gru.c: one direction of the ONNX GRU op for all batches, gates in
 * the order z, r, h of W, R and B:
 *     z = f(X W_z^T + H R_z^T + Wb_z + Rb_z), r likewise,
 *     h = g(X W_h^T + (r . H) R_h^T + Rb_h + Wb_h)      (lbr 0)
 *     h = g(X W_h^T + r . (H R_h^T + Rb_h) + Wb_h)      (lbr 1)
 *     H' = (1 - z) . h + z . H
 * Strides, offsets and batch blocks as in templates/rnn_simple.c. z and r
 * come first for every unit since the h gate (lbr 0) needs all of r . H.
 * scratch holds 4 * min(N, OX_RNN_NB) * H compute-type values: H, H', z,
 * and r . H (lbr 0) or r (lbr 1). Needs templates/rnn.c.
 */
OX_STATIC void ox_gru_$S(const $T *restrict X, const $T *restrict W, const $T *restrict R, const $T *restrict B,
		      const int32_t *restrict lens, const $T *restrict h0, $T *restrict Y, $T *restrict Yh, long S,
		      long N, long I, long H, long xt, long xb, long yt, long yb, long hs, int reverse, int fk,
		      $C fa, $C fb, int gk, $C ga, $C gb, $C clip, int lbr, $C *scratch)
{
	const long M = (N < OX_RNN_NB ? N : OX_RNN_NB) * H;
	$C *hp = scratch, *hn = scratch + M, *z = scratch + 2 * M, *rh = scratch + 3 * M;
	for (long b0 = 0; b0 < N; b0 += OX_RNN_NB) {
		const int nb = N - b0 < OX_RNN_NB ? (int)(N - b0) : OX_RNN_NB;
		for (int i = 0; i < nb; i++)
			ox_rnn_init_$S(hp + i * H, h0 ? h0 + (b0 + i) * hs : h0, H);
		const long steps = ox_rnn_maxlen_$S(lens, b0, nb, S);
		for (long s = 0; s < steps; s++) {
			int on[OX_RNN_NB];
			long t[OX_RNN_NB];
			const $T *x[OX_RNN_NB];
			const $C *h[OX_RNN_NB], *rhp[OX_RNN_NB];
			const int na = ox_rnn_active_$S(lens, b0, nb, S, s, reverse, X, xt, xb, hp, H, on, t, x, h);
			for (int i = 0; i < na; i++)
				rhp[i] = rh + on[i] * H;
			for (long j = 0; j < H; j++) {
				const $C bz = B ? ox_ld_$S(B[j]) + ox_ld_$S(B[3 * H + j]) : ($C)0;
				const $C br = B ? ox_ld_$S(B[H + j]) + ox_ld_$S(B[4 * H + j]) : ($C)0;
				$C az[OX_RNN_NB], ar[OX_RNN_NB];
				for (int i = 0; i < na; i++)
					az[i] = bz, ar[i] = br;
				ox_rnn_gate_$S(W + j * I, I, x, R + j * H, H, h, na, az);
				ox_rnn_gate_$S(W + (H + j) * I, I, x, R + (H + j) * H, H, h, na, ar);
				for (int i = 0; i < na; i++) {
					const long o = on[i] * H + j;
					const $C r = ox_rnn_act_$S(fk, ox_rnn_clip_$S(ar[i], clip), fa, fb);
					z[o] = ox_rnn_act_$S(fk, ox_rnn_clip_$S(az[i], clip), fa, fb);
					rh[o] = lbr ? r : r * hp[o];
				}
			}
			for (long j = 0; j < H; j++) {
				const long row = 2 * H + j;
				const $C wb = B ? ox_ld_$S(B[row]) : ($C)0, rb = B ? ox_ld_$S(B[3 * H + row]) : ($C)0;
				$C ax[OX_RNN_NB], ah[OX_RNN_NB];
				for (int i = 0; i < na; i++)
					ax[i] = wb, ah[i] = rb;
				/* the W and R halves apart: r multiplies R's (lbr 1) */
				ox_rnn_gate_$S(W + row * I, I, x, R, 0, h, na, ax);
				ox_rnn_gate_$S(W, 0, x, R + row * H, H, lbr ? h : rhp, na, ah);
				for (int i = 0; i < na; i++) {
					const long o = on[i] * H + j;
					const $C a = lbr ? ax[i] + rh[o] * ah[i] : ax[i] + ah[i];
					const $C hh = ox_rnn_act_$S(gk, ox_rnn_clip_$S(a, clip), ga, gb);
					hn[o] = (1 - z[o]) * hh + z[o] * hp[o];
				}
			}
			ox_rnn_commit_$S(hp, hn, H, on, t, na, Y, yt, yb, b0);
		}
		ox_rnn_finish_$S(lens, b0, nb, S, H, hp, Y, yt, yb, Yh, hs);
	}
}
