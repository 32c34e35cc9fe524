/* rnn_lstm.c: one direction of the ONNX LSTM op for all batches, gates in
 * the order i, o, f, c of W, R and B, peepholes P in the order i, o, f:
 *     i = f(X W_i^T + H R_i^T + P_i . C + Wb_i + Rb_i), f likewise
 *     c = g(X W_c^T + H R_c^T + Wb_c + Rb_c)
 *     C' = f . C + i . c,   o = f(... + P_o . C'),   H' = o . h(C')
 * input_forget couples the forget gate to 1 - i. clip bounds every gate's
 * input before its activation. Strides, offsets and batch blocks as in
 * templates/rnn_simple.c; C and Yc use h0's and Yh's. Each unit's gates
 * depend only on the previous H, so they are computed unit by unit and
 * the cell state is updated in place. scratch holds 3 * min(N, OX_RNN_NB)
 * * H compute-type values: H, H', C. Needs templates/rnn.c.
 */
OX_STATIC void ox_lstm_$S(const $T *restrict X, const $T *restrict W, const $T *restrict R, const $T *restrict B,
		       const int32_t *restrict lens, const $T *restrict h0, const $T *restrict c0,
		       const $T *restrict P, $T *restrict Y, $T *restrict Yh, $T *restrict Yc, long S, long N,
		       long I, long H, long xt, long xb, long yt, long yb, long hs, int reverse, int fk, $C fa, $C fb,
		       int gk, $C ga, $C gb, int hk, $C ha, $C hb, $C clip, int input_forget, $C *scratch)
{
	const long M = (N < OX_RNN_NB ? N : OX_RNN_NB) * H;
	$C *hp = scratch, *hn = scratch + M, *c = scratch + 2 * M;
	for (long b0 = 0; b0 < N; b0 += OX_RNN_NB) {
		const int nb = N - b0 < OX_RNN_NB ? (int)(N - b0) : OX_RNN_NB;
		for (int i = 0; i < nb; i++) {
			ox_rnn_init_$S(hp + i * H, h0 ? h0 + (b0 + i) * hs : h0, H);
			ox_rnn_init_$S(c + i * H, c0 ? c0 + (b0 + i) * hs : c0, H);
		}
		const long steps = ox_rnn_maxlen_$S(lens, b0, nb, S);
		for (long s = 0; s < steps; s++) {
			int on[OX_RNN_NB];
			long t[OX_RNN_NB];
			const $T *x[OX_RNN_NB];
			const $C *h[OX_RNN_NB];
			const int na = ox_rnn_active_$S(lens, b0, nb, S, s, reverse, X, xt, xb, hp, H, on, t, x, h);
			for (long j = 0; j < H; j++) {
				$C a[4][OX_RNN_NB]; /* i, o, f, c */
				for (int q = 0; q < 4; q++) {
					const long row = q * H + j;
					const $C bias = B ? ox_ld_$S(B[row]) + ox_ld_$S(B[4 * H + row]) : ($C)0;
					for (int i = 0; i < na; i++)
						a[q][i] = bias;
					ox_rnn_gate_$S(W + row * I, I, x, R + row * H, H, h, na, a[q]);
				}
				const $C pi = P ? ox_ld_$S(P[j]) : ($C)0, po = P ? ox_ld_$S(P[H + j]) : ($C)0;
				const $C pf = P ? ox_ld_$S(P[2 * H + j]) : ($C)0;
				for (int i = 0; i < na; i++) {
					const long o = on[i] * H + j;
					const $C cp = c[o];
					const $C gi = ox_rnn_act_$S(fk, ox_rnn_clip_$S(a[0][i] + pi * cp, clip), fa, fb);
					const $C gf = input_forget ? 1 - gi
						: ox_rnn_act_$S(fk, ox_rnn_clip_$S(a[2][i] + pf * cp, clip), fa, fb);
					const $C gc = ox_rnn_act_$S(gk, ox_rnn_clip_$S(a[3][i], clip), ga, gb);
					const $C cn = gf * cp + gi * gc;
					const $C go = ox_rnn_act_$S(fk, ox_rnn_clip_$S(a[1][i] + po * cn, clip), fa, fb);
					c[o] = cn;
					hn[o] = go * ox_rnn_act_$S(hk, cn, ha, hb);
				}
			}
			ox_rnn_commit_$S(hp, hn, H, on, t, na, Y, yt, yb, b0);
		}
		ox_rnn_finish_$S(lens, b0, nb, S, H, hp, Y, yt, yb, Yh, hs);
		ox_rnn_finish_$S(lens, b0, nb, S, H, c, NULL, yt, yb, Yc, hs);
	}
}
