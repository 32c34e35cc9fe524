/* vf_q8.c: 8-bit values in the f32 lanes of templates/vf.c (included
 * after it), for the fused loops that hold a QuantizeLinear or a
 * DequantizeLinear (opt/ewfuse.c, codegen/c/emit_fused.c): loads and
 * stores between int8 or uint8 and f32 lanes holding integers, the
 * rounding to nearest even and QuantizeLinear's value of a lane. */
#if defined(OX_VF_EXT)
/* the nearest integer of each lane, ties to even, |a| < 2^22 (rintf in
 * the default rounding mode); without a rounding instruction exactly,
 * from the truncation and the fraction it leaves */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_rint(ox_vf a)
{
#if defined(OX_VF_AVX512) || defined(OX_VF_AVX2) || defined(OX_VF_NEON)
	return ox_vf_round(a);
#elif defined(OX_VF_SSE) && defined(__SSE4_1__)
	return (ox_vf)_mm_round_ps((__m128)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
	const ox_vm i = __builtin_convertvector(a, ox_vm), odd = -(i & 1);
	const ox_vf t = __builtin_convertvector(i, ox_vf), f = a - t;
	const ox_vm up = (f > 0.5f) | ((f == 0.5f) & odd), down = (f < -0.5f) | ((f == -0.5f) & odd);
	return t + (ox_vf)(up & (ox_vm)ox_vf_set1(1.0f)) - (ox_vf)(down & (ox_vm)ox_vf_set1(1.0f));
#endif
}
/* 8-bit values in f32 lanes (the operands and output of a fused
 * QuantizeLinear or DequantizeLinear, codegen/c/emit_fused.c): loaded as
 * the integers they are; stored from lanes that hold integers of the
 * type's range. sx: int8, else uint8; n: the first n lanes (0 < n <=
 * OX_VW), nothing past p + n touched. Widening and narrowing by the
 * target's instructions (GCC scalarizes __builtin_convertvector's) */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_q8_n(const void *p, int n, int sx)
{
	uint8_t b[16] = {0};
	memcpy(b, p, (size_t)n);
#if defined(OX_VF_AVX512)
	const __m128i x = _mm_loadu_si128((const __m128i *)b);
	const ox_vm m = (ox_vm)(sx ? _mm512_cvtepi8_epi32(x) : _mm512_cvtepu8_epi32(x));
#elif defined(OX_VF_AVX2)
	const __m128i x = _mm_loadl_epi64((const __m128i *)b);
	const ox_vm m = (ox_vm)(sx ? _mm256_cvtepi8_epi32(x) : _mm256_cvtepu8_epi32(x));
#elif defined(OX_VF_SSE)
	int32_t w;
	memcpy(&w, b, 4);
	const __m128i x = _mm_cvtsi32_si128(w), z = _mm_setzero_si128();
	const ox_vm m = (ox_vm)(sx ? _mm_srai_epi32(_mm_unpacklo_epi16(_mm_unpacklo_epi8(x, x), _mm_unpacklo_epi8(x, x)), 24)
				   : _mm_unpacklo_epi16(_mm_unpacklo_epi8(x, z), z));
#elif defined(OX_VF_NEON)
	const uint8x8_t x = vld1_u8(b);
	const ox_vm m = sx ? (ox_vm)vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(x))))
			   : (ox_vm)vmovl_u16(vget_low_u16(vmovl_u8(x)));
#else
	ox_vm m;
	for (int i = 0; i < OX_VW; i++)
		m[i] = sx ? (int8_t)b[i] : b[i];
#endif
	return __builtin_convertvector(m, ox_vf);
}
OX_STATIC inline OX_UNUSED void ox_vf_store_q8_n(void *p, ox_vf v, int n, int sx)
{
	const ox_vm m = __builtin_convertvector(v, ox_vm);
	uint8_t b[16];
#if defined(OX_VF_AVX512)
	_mm_storeu_si128((__m128i *)b, _mm512_cvtepi32_epi8((__m512i)m));
#elif defined(OX_VF_AVX2)
	const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128((__m256i)m), _mm256_extracti128_si256((__m256i)m, 1));
	_mm_storel_epi64((__m128i *)b, sx ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
#elif defined(OX_VF_SSE)
	const __m128i w = _mm_packs_epi32((__m128i)m, (__m128i)m);
	const int32_t x = _mm_cvtsi128_si32(sx ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
	memcpy(b, &x, 4);
#elif defined(OX_VF_NEON)
	const int16x4_t w = vmovn_s32((int32x4_t)m);
	vst1_u8(b, sx ? vreinterpret_u8_s8(vmovn_s16(vcombine_s16(w, w))) : vqmovun_s16(vcombine_s16(w, w)));
#else
	for (int i = 0; i < OX_VW; i++)
		b[i] = (uint8_t)m[i];
#endif
	memcpy(p, b, (size_t)n);
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_i8(const int8_t *p) { return ox_vf_load_q8_n(p, OX_VW, 1); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_u8(const uint8_t *p) { return ox_vf_load_q8_n(p, OX_VW, 0); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_i8_n(const int8_t *p, int n) { return ox_vf_load_q8_n(p, n, 1); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_u8_n(const uint8_t *p, int n) { return ox_vf_load_q8_n(p, n, 0); }
OX_STATIC inline OX_UNUSED void ox_vf_store_i8(int8_t *p, ox_vf v) { ox_vf_store_q8_n(p, v, OX_VW, 1); }
OX_STATIC inline OX_UNUSED void ox_vf_store_u8(uint8_t *p, ox_vf v) { ox_vf_store_q8_n(p, v, OX_VW, 0); }
OX_STATIC inline OX_UNUSED void ox_vf_store_i8_n(int8_t *p, ox_vf v, int n) { ox_vf_store_q8_n(p, v, n, 1); }
OX_STATIC inline OX_UNUSED void ox_vf_store_u8_n(uint8_t *p, ox_vf v, int n) { ox_vf_store_q8_n(p, v, n, 0); }
#else /* ---- plain C11 ---- */
#define OX_Q8_MAP(e) \
	ox_vf r; \
	for (int i = 0; i < OX_VW; i++) \
		r.v[i] = (e); \
	return r
OX_STATIC inline OX_UNUSED ox_vf ox_vf_rint(ox_vf a) { OX_Q8_MAP(rintf(a.v[i])); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_i8(const int8_t *p) { OX_Q8_MAP((float)p[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_u8(const uint8_t *p) { OX_Q8_MAP((float)p[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_i8_n(const int8_t *p, int n) { OX_Q8_MAP(i < n ? (float)p[i] : 0.0f); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_u8_n(const uint8_t *p, int n) { OX_Q8_MAP(i < n ? (float)p[i] : 0.0f); }
OX_STATIC inline OX_UNUSED void ox_vf_store_i8_n(int8_t *p, ox_vf v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (int8_t)v.v[i];
}
OX_STATIC inline OX_UNUSED void ox_vf_store_u8_n(uint8_t *p, ox_vf v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)v.v[i];
}
OX_STATIC inline OX_UNUSED void ox_vf_store_i8(int8_t *p, ox_vf v) { ox_vf_store_i8_n(p, v, OX_VW); }
OX_STATIC inline OX_UNUSED void ox_vf_store_u8(uint8_t *p, ox_vf v) { ox_vf_store_u8_n(p, v, OX_VW); }
#undef OX_Q8_MAP
#endif

/* QuantizeLinear's value of each lane, as a float: rint(a / s) + z (ties
 * to even) saturated to [lo, hi], a NaN quotient lo, as the scalar
 * statement and ox_quant_f32 compute it. The quotient is clamped to
 * [lo - z - 1, hi - z + 1] before the rounding, which changes no result
 * and keeps ox_vf_rint's operand small */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_quant(ox_vf a, float s, float z, float lo, float hi)
{
	const ox_vf l = ox_vf_set1(lo - z - 1.0f), h = ox_vf_set1(hi - z + 1.0f);
	ox_vf q = ox_vf_div(a, ox_vf_set1(s));
	q = ox_vf_select(ox_vf_gt(q, l), q, l); /* (a NaN: l) */
	q = ox_vf_select(ox_vf_lt(q, h), q, h);
	q = ox_vf_add(ox_vf_rint(q), ox_vf_set1(z));
	return ox_vf_clamp(q, ox_vf_set1(lo), ox_vf_set1(hi));
}
