/* quant_dyn.c: per-tensor QuantizeLinear and DequantizeLinear of float32,
 * and DynamicQuantizeLinear of float32 x (n values) as the spec
 * writes it: the range [min(x, 0), max(x, 0)], scale (max - min) / 255,
 * zero point saturate(rint(-min / scale)), y = saturate(rint(x / scale) +
 * zero point); all zeros give scale 0 and every y the zero point 0. NaN
 * never wins the min / max (the comparisons' order), a NaN quotient
 * saturates to 0. The AVX-512 path computes the same operations 16 values
 * at a time (division, round to nearest even, clamp), so the same bytes.
 * The same functions' per-tensor loops (ox_quant_f32, ox_dequant_f32)
 * serve QuantizeLinear and DequantizeLinear. Needs ox_qsat (emit_quant.c).
 */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE) && defined(__AVX512F__)
#include <immintrin.h>
#define OX_DYNQ_AVX512 1
#endif

/* QuantizeLinear per tensor: y = saturate(rint(x / s) + z) to [lo, hi]
 * (a NaN quotient: lo), each as the byte of its 8-bit value */
OX_STATIC OX_UNUSED void ox_quant_f32(const float *restrict x, long n, float s, float z, int lo, int hi,
				      uint8_t *restrict y)
{
	long k = 0;
#if OX_DYNQ_AVX512
	const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(z), vl = _mm512_set1_ps((float)lo),
		     vh = _mm512_set1_ps((float)hi);
	for (const long nv = n / 16 * 16; k < nv; k += 16) {
		__m512 q = _mm512_add_ps(_mm512_roundscale_ps(_mm512_div_ps(_mm512_loadu_ps(x + k), vs),
							      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
		q = _mm512_min_ps(_mm512_max_ps(q, vl), vh); /* (a NaN: lo) */
		_mm_storeu_si128((__m128i *)(y + k), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q)));
	}
#endif
	for (; k < n; k++)
		y[k] = (uint8_t)ox_qsat((double)rintf(x[k] / s) + z, lo, hi);
}

/* DequantizeLinear per tensor: y = (x - z) s, x the bytes of int8 values
 * (sx) or uint8 */
OX_STATIC OX_UNUSED void ox_dequant_f32(const uint8_t *restrict x, int sx, long n, float s, float z,
					float *restrict y)
{
	long k = 0;
#if OX_DYNQ_AVX512
	const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(z);
	for (const long nv = n / 16 * 16; k < nv; k += 16) {
		const __m128i b = _mm_loadu_si128((const __m128i *)(x + k));
		const __m512i v = sx ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
		_mm512_storeu_ps(y + k, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(v), vz), vs));
	}
#endif
	for (; k < n; k++)
		y[k] = ((float)(sx ? (int)(int8_t)x[k] : (int)x[k]) - z) * s;
}

OX_STATIC void ox_dynq_f32(const float *restrict x, long n, uint8_t *restrict y, float *restrict scale,
			   uint8_t *restrict zp)
{
	float lo = 0.0f, hi = 0.0f;
	long k = 0;
#if OX_DYNQ_AVX512
	__m512 vl = _mm512_setzero_ps(), vh = vl;
	for (const long nv = n / 16 * 16; k < nv; k += 16) {
		const __m512 v = _mm512_loadu_ps(x + k);
		vl = _mm512_min_ps(v, vl); /* v < lo ? v : lo */
		vh = _mm512_max_ps(v, vh); /* v > hi ? v : hi */
	}
	float l[16], h[16];
	_mm512_storeu_ps(l, vl), _mm512_storeu_ps(h, vh);
	for (int i = 0; i < 16; i++) {
		lo = l[i] < lo ? l[i] : lo;
		hi = h[i] > hi ? h[i] : hi;
	}
#endif
	for (; k < n; k++) {
		const float v = x[k];
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	const float s = (hi - lo) / 255.0f;
	const float z = s > 0.0f ? (float)ox_qsat(rintf((0.0f - lo) / s), 0, 255) : 0.0f;
	*scale = s;
	*zp = (uint8_t)z;
	k = 0;
	if (!(s > 0.0f)) {
		for (; k < n; k++)
			y[k] = (uint8_t)z;
		return;
	}
	ox_quant_f32(x, n, s, z, 0, 255, y);
}
