/* quant_f8.c: exact float <-> float8 conversions for the four ONNX kinds.
 *
 * e4m3fn (bias 7, no infinity, NaN S1111111, max 448), e4m3fnuz (bias 8,
 * NaN 0x80, no -0, max 240), e5m2 (bias 15, IEEE-like with infinities,
 * max 57344), e5m2fnuz (bias 16, NaN 0x80, no -0, max 57344). Narrowing
 * rounds to nearest, ties to even; a result whose magnitude rounds above
 * the largest finite value becomes that value when sat is set, else
 * infinity (e5m2) or NaN (the others). e8m0 (bias 127, unsigned powers
 * of two 2^-127..2^127, NaN 0xff) keeps only the exponent: round_mode picks
 * how a mantissa rounds it. Not dtype-generic: instantiate it once with
 * ox_cg_use(cg, "quant_f8", OX_F32) (QuantizeLinear, DequantizeLinear and
 * Cast share that one copy).
 */
/* kind: 0 e4m3fn, 1 e4m3fnuz, 2 e5m2, 3 e5m2fnuz */
OX_STATIC uint8_t ox_f8_from_f32(float f, int kind, int sat)
{
	static const int mbits[4] = {3, 3, 2, 2}, bias[4] = {7, 8, 15, 16};
	static const float maxv[4] = {448.0f, 240.0f, 57344.0f, 57344.0f};
	const int mb = mbits[kind], b = bias[kind], uz = kind == 1 || kind == 3;
	const uint8_t sign = signbit(f) ? 0x80 : 0, maxc = kind == 0 ? 0x7e : kind == 2 ? 0x7b : 0x7f;
	/* the fnuz kinds have one unsigned NaN; the others keep the sign */
	const uint8_t nan = uz ? 0x80 : (uint8_t)(sign | (kind == 2 ? 0x7e : 0x7f));
	if (isnan(f))
		return nan;
	float a = fabsf(f);
	if (isinf(a))
		return sat ? (uint8_t)(sign | maxc) : kind == 2 ? (uint8_t)(sign | 0x7c) : nan;
	/* quantum of a's binade, or of the subnormal range below 2^(1-b) */
	int e;
	frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
	if (e - 1 < 1 - b)
		e = 2 - b;
	float r = rintf(ldexpf(a, mb - (e - 1))); /* units of the quantum, ties to even */
	float v = ldexpf(r, (e - 1) - mb);
	if (v > maxv[kind])
		return sat ? (uint8_t)(sign | maxc) : kind == 2 ? (uint8_t)(sign | 0x7c) : nan;
	if (v == 0.0f)
		return uz ? 0 : sign;
	frexpf(v, &e);
	if (e - 1 < 1 - b) /* subnormal: r counts quanta of 2^(1-b-mb) */
		return (uint8_t)(sign | (int)r);
	int mant = (int)ldexpf(v, mb - (e - 1)) - (1 << mb);
	return (uint8_t)(sign | (e - 1 + b) << mb | mant);
}

OX_STATIC float ox_f8_to_f32(uint8_t x, int kind)
{
	static const int mbits[4] = {3, 3, 2, 2}, bias[4] = {7, 8, 15, 16};
	const int mb = mbits[kind], b = bias[kind], uz = kind == 1 || kind == 3;
	const int ex = (x & 0x7f) >> mb, m = x & ((1 << mb) - 1);
	if (uz ? x == 0x80 : kind == 0 ? (x & 0x7f) == 0x7f : ex == 31 && m)
		return NAN;
	float s = x & 0x80 ? -1.0f : 1.0f;
	if (kind == 2 && ex == 31)
		return s * INFINITY;
	if (ex == 0)
		return s * ldexpf((float)m, 1 - b - mb);
	return s * ldexpf((float)(m + (1 << mb)), ex - b - mb);
}

OX_STATIC inline uint8_t ox_f32_to_f8e4m3fn(float f, int sat) { return ox_f8_from_f32(f, 0, sat); }
OX_STATIC inline uint8_t ox_f32_to_f8e4m3fnuz(float f, int sat) { return ox_f8_from_f32(f, 1, sat); }
OX_STATIC inline uint8_t ox_f32_to_f8e5m2(float f, int sat) { return ox_f8_from_f32(f, 2, sat); }
OX_STATIC inline uint8_t ox_f32_to_f8e5m2fnuz(float f, int sat) { return ox_f8_from_f32(f, 3, sat); }
OX_STATIC inline float ox_f8e4m3fn_to_f32(uint8_t x) { return ox_f8_to_f32(x, 0); }
OX_STATIC inline float ox_f8e4m3fnuz_to_f32(uint8_t x) { return ox_f8_to_f32(x, 1); }
OX_STATIC inline float ox_f8e5m2_to_f32(uint8_t x) { return ox_f8_to_f32(x, 2); }
OX_STATIC inline float ox_f8e5m2fnuz_to_f32(uint8_t x) { return ox_f8_to_f32(x, 3); }

/* e8m0 from float; mode 0 up (to the next power of two), 1 down, 2 nearest
 * (ties up). The sign is dropped: e8m0 has none. A result past 2^127
 * becomes 2^127 when sat is set, else NaN. */
OX_STATIC uint8_t ox_f8e8m0_from_f32(float f, int sat, int mode)
{
	if (isnan(f))
		return 0xff;
	float a = fabsf(f);
	if (isinf(a))
		return sat ? 0xfe : 0xff;
	if (a == 0.0f)
		return 0; /* the smallest value, 2^-127 */
	int e;
	float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1): 2^(e-1) <= a < 2^e */
	int lo = e - 1, up = mode == 0 ? m > 0.5f : mode == 2 ? m >= 0.75f : 0;
	int k = lo + up + 127; /* biased exponent of the result */
	if (k < 0) /* below 2^-127: only 2^-127 itself is left */
		k = 0;
	if (k > 254)
		return sat ? 0xfe : 0xff;
	return (uint8_t)k;
}

OX_STATIC inline uint8_t ox_f32_to_f8e8m0(float f, int sat) { return ox_f8e8m0_from_f32(f, sat, 0); }
OX_STATIC inline float ox_f8e8m0_to_f32(uint8_t x) { return x == 0xff ? NAN : ldexpf(1.0f, (int)x - 127); }
