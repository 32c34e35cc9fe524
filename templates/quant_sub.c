/* quant_sub.c: conversions for the sub-byte kinds, held one per byte.
 *
 * int4 / int2 are sign-extended int8 bytes, uint4 / uint2 plain bytes,
 * float4e2m1 its 4-bit code (sign bit 3, 2 exponent bits, 1 mantissa bit:
 * magnitudes 0 0.5 1 1.5 2 3 4 6; no infinity, no NaN). Narrowing to f4
 * rounds to nearest, ties to the even code, and saturates to +-6; NaN
 * becomes 0x8 as in ONNX's reference. Cast to an integer kind truncates
 * toward zero and wraps to the width, like ONNX's Cast to the wider
 * integers; a value with no int64 (NaN, +-inf, huge) gives 0. Not
 * dtype-generic: instantiate once with ox_cg_use(cg, "quant_sub", OX_F32)
 * (Cast and the quantize ops share that copy). All static inline: a user
 * of one function leaves the others unused without a warning.
 */
OX_STATIC inline float ox_f4e2m1_to_f32(uint8_t c)
{
	static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
	return c & 8 ? -mag[c & 7] : mag[c & 7];
}

/* x in double, so every float kind and int32 reach it unrounded. The
 * thresholds are the midpoints between neighbouring magnitudes; where a
 * tie exists, <= or < sends it to the even code. */
OX_STATIC inline uint8_t ox_f4e2m1_from_f64(double x)
{
	if (isnan(x))
		return 0x8;
	uint8_t s = signbit(x) ? 8 : 0;
	double a = fabs(x);
	uint8_t c = a <= 0.25 ? 0 : a < 0.75 ? 1 : a <= 1.25 ? 2 : a < 1.75 ? 3 :
		    a <= 2.5 ? 4 : a < 3.5 ? 5 : a <= 5.0 ? 6 : 7;
	return (uint8_t)(s | c);
}

/* float -> int64 truncating; 0 where C's conversion would be undefined */
OX_STATIC inline int64_t ox_sub_trunc(double x)
{
	return x > -9.2e18 && x < 9.2e18 ? (int64_t)x : 0;
}

/* wrap an integer to `bits` bits, sign-extended when sgn */
OX_STATIC inline int ox_sub_wrap(int64_t v, int bits, int sgn)
{
	int m = (int)(v & ((1 << bits) - 1)), half = 1 << (bits - 1);
	return sgn ? (m ^ half) - half : m;
}
