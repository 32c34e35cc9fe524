/* rnn.c: helpers shared by the recurrent kernels (templates/rnn_simple.c,
 * rnn_gru.c, rnn_lstm.c): the activation functions of the ONNX RNN spec
 * selected by a code (the order of act_names in ir/infer_rnn.c), dot
 * products in the compute type with 8 partial sums, and the per-batch
 * bookkeeping of a block of batches (OX_RNN_NB at a time, so each weight
 * row is fetched once per step and block). Needs
 * ox_ld_$S / ox_st_$S (from codegen/c/emit_rnn.c). _Generic picks
 * the float or double libm function for $C (C++, the CUDA target: the
 * overload).
 */
#if defined(__cplusplus)
#define ox_rnn_m_$S(fn, x) fn(($C)(x))
#else
#define ox_rnn_m_$S(fn, x) _Generic(($C)0, float: fn##f, default: fn)(x)
#endif
/* batches per block; codegen/c/emit_rnn.c's RNN_NB sizes the scratch by it.
 * (Each dtype's copy of this file repeats the same definition.) */
#define OX_RNN_NB 4

OX_STATIC inline $C ox_rnn_act_$S(int code, $C x, $C a, $C b)
{
	switch (code) {
	case 0: return x > 0 ? x : ($C)0;                      /* Relu */
	case 1: return ox_rnn_m_$S(tanh, x);                   /* Tanh */
	case 2: return 1 / (1 + ox_rnn_m_$S(exp, -x));         /* Sigmoid */
	case 3: return a * x + b;                              /* Affine */
	case 4: return x >= 0 ? x : a * x;                     /* LeakyRelu */
	case 5: return x > a ? x : ($C)0;                      /* ThresholdedRelu */
	case 6: return a * ox_rnn_m_$S(tanh, b * x);           /* ScaledTanh */
	case 7: x = a * x + b; return x < 0 ? ($C)0 : x > 1 ? ($C)1 : x; /* HardSigmoid */
	case 8: return x >= 0 ? x : a * ox_rnn_m_$S(expm1, x); /* Elu */
	case 9: return x / (1 + (x < 0 ? -x : x));             /* Softsign */
	default: /* Softplus, log(1 + e^x) without overflow */
		return x > 0 ? x + ox_rnn_m_$S(log1p, ox_rnn_m_$S(exp, -x)) : ox_rnn_m_$S(log1p, ox_rnn_m_$S(exp, x));
	}
}

/* clip <= 0 means no clip (the attribute is a positive threshold) */
OX_STATIC inline $C ox_rnn_clip_$S($C x, $C clip)
{
	if (clip > 0)
		x = x > clip ? clip : x < -clip ? -clip : x;
	return x;
}

/* w[0..n) . x[0..n), w stored, x stored (X) or in the compute type (H) */
OX_STATIC inline $C ox_rnn_dotx_$S(const $T *restrict w, const $T *restrict x, long n)
{
	$C s[8] = {0};
	const long n8 = n - n % 8;
	for (long k = 0; k < n8; k += 8)
		for (int t = 0; t < 8; t++)
			s[t] += ox_ld_$S(w[k + t]) * ox_ld_$S(x[k + t]);
	$C r = 0; /* a separate tail sum keeps s[] in registers */
	for (long k = n8; k < n; k++)
		r += ox_ld_$S(w[k]) * ox_ld_$S(x[k]);
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + r;
}

OX_STATIC inline $C ox_rnn_doth_$S(const $T *restrict w, const $C *restrict h, long n)
{
	$C s[8] = {0};
	const long n8 = n - n % 8;
	for (long k = 0; k < n8; k += 8)
		for (int t = 0; t < 8; t++)
			s[t] += ox_ld_$S(w[k + t]) * h[k + t];
	$C r = 0; /* a separate tail sum keeps s[] in registers */
	for (long k = n8; k < n; k++)
		r += ox_ld_$S(w[k]) * h[k];
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + r;
}

/* out[b] += W row . X row b + R row . state b for the nb active batches:
 * the gate's pre-activation less its bias. The rows stay in L1 across
 * the batches of a block. */
OX_STATIC inline void ox_rnn_gate_$S(const $T *restrict wr, long I, const $T *const *x, const $T *restrict rr,
				  long H, const $C *const *h, int nb, $C *out)
{
	for (int b = 0; b < nb; b++)
		out[b] += ox_rnn_dotx_$S(wr, x[b], I) + ox_rnn_doth_$S(rr, h[b], H);
}

/* batch b's length: sequence_lens[b] (the node checked it is in [0, S]; a
 * constant one onnxcc checked), or S without it; the clamp is a second guard */
OX_STATIC inline long ox_rnn_len_$S(const int32_t *lens, long b, long S)
{
	long len = lens ? (long)lens[b] : S;
	return len < 0 ? 0 : len > S ? S : len;
}

/* Step s of a block of batches [b0, b0 + nb): which batches still run
 * (on, their count returned), the time index each reads (t; reverse walks
 * each batch's own length backwards), its X row and its state in hp. */
OX_STATIC inline int ox_rnn_active_$S(const int32_t *lens, long b0, int nb, long S, long s, int reverse,
				   const $T *X, long xt, long xb, const $C *hp, long H, int *on, long *t,
				   const $T **x, const $C **h)
{
	int na = 0;
	for (int i = 0; i < nb; i++) {
		const long len = ox_rnn_len_$S(lens, b0 + i, S);
		if (s >= len)
			continue;
		on[na] = i;
		t[na] = reverse ? len - 1 - s : s;
		x[na] = X + t[na] * xt + (b0 + i) * xb;
		h[na] = hp + i * H;
		na++;
	}
	return na;
}

/* the block's longest length */
OX_STATIC inline long ox_rnn_maxlen_$S(const int32_t *lens, long b0, int nb, long S)
{
	long m = 0;
	for (int i = 0; i < nb; i++) {
		const long len = ox_rnn_len_$S(lens, b0 + i, S);
		m = len > m ? len : m;
	}
	return m;
}

/* state h[0..H) from a stored initial state, or zeros */
OX_STATIC inline void ox_rnn_init_$S($C *restrict h, const $T *restrict h0, long H)
{
	for (long j = 0; j < H; j++)
		h[j] = h0 ? ox_ld_$S(h0[j]) : ($C)0;
}

OX_STATIC inline void ox_rnn_put_$S($T *restrict y, const $C *restrict h, long H)
{
	for (long j = 0; j < H; j++)
		y[j] = ox_st_$S(h[j]);
}

/* Y_h / Y_c of a batch: the state after its last step; zeros when its
 * length is 0 (it has no last step; ONNX Runtime writes zeros too) */
OX_STATIC inline void ox_rnn_final_$S($T *restrict y, const $C *restrict h, long len, long H)
{
	for (long j = 0; j < H; j++)
		y[j] = ox_st_$S(len ? h[j] : ($C)0);
}

/* Y rows of steps [len, S) of a batch are zero (ONNX: past the length) */
OX_STATIC inline void ox_rnn_tail_$S($T *restrict Y, long len, long S, long yt, long H)
{
	for (long t = len; t < S; t++)
		for (long j = 0; j < H; j++)
			Y[t * yt + j] = ox_st_$S(($C)0);
}

/* After a step: the active batches' new states hn become current in hp
 * (inactive ones keep theirs) and are written to Y at their time index. */
OX_STATIC inline void ox_rnn_commit_$S($C *restrict hp, const $C *restrict hn, long H, const int *on, const long *t,
				    int na, $T *restrict Y, long yt, long yb, long b0)
{
	for (int i = 0; i < na; i++) {
		$C *h = hp + on[i] * H;
		for (long j = 0; j < H; j++)
			h[j] = hn[on[i] * H + j];
		if (Y)
			ox_rnn_put_$S(Y + t[i] * yt + (b0 + on[i]) * yb, h, H);
	}
}

/* After a block: each batch's Y past its length and its final state v
 * (hidden or cell) into out (Y_h or Y_c), either may be null. */
OX_STATIC inline void ox_rnn_finish_$S(const int32_t *lens, long b0, int nb, long S, long H, const $C *restrict v,
				    $T *restrict Y, long yt, long yb, $T *restrict out, long hs)
{
	for (int i = 0; i < nb; i++) {
		const long len = ox_rnn_len_$S(lens, b0 + i, S);
		if (Y)
			ox_rnn_tail_$S(Y + (b0 + i) * yb, len, S, yt, H);
		if (out)
			ox_rnn_final_$S(out + (b0 + i) * hs, v + i * H, len, H);
	}
}
