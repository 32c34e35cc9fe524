/* vf.c: the f32 vector of the target, OX_VW lanes (4, 8 or 16: the --cpu
 * target's width, defined before this text), and the operations the
 * generated kernels use on it. ox_vm is a lane mask of the same size (all
 * ones or zero per lane). One interface, two renderings:
 *  - GCC and clang: vector extensions (operators compile to the target's
 *    vector instructions), with the target's intrinsics behind its feature
 *    macros where the extensions have no spelling: fused multiply-add,
 *    masked partial loads and stores, square root, rounding;
 *  - any other C11 compiler, or -DOX_VF_PORTABLE: a struct of OX_VW floats
 *    and a loop per operation. Slow, but plain C11, and the same results
 *    (multiply-add rounds twice where the target has no FMA, as it does
 *    with the extensions).
 * Comparisons are ordered: a lane holding NaN compares false, so max/min
 * return their first operand and relu keeps a NaN (as the scalar code).
 * Needs <math.h>, <stdint.h> and <string.h> (included by every OUT.c). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE)
#define OX_VF_EXT 1
typedef float ox_vf __attribute__((vector_size(OX_VW * 4)));
typedef int32_t ox_vm __attribute__((vector_size(OX_VW * 4)));
typedef float ox_vfu __attribute__((vector_size(OX_VW * 4), aligned(4))); /* any float's address */
#if defined(__AVX512F__) && OX_VW == 16
#define OX_VF_AVX512 1
#include <immintrin.h>
#elif defined(__AVX2__) && OX_VW == 8
#define OX_VF_AVX2 1
#include <immintrin.h>
#elif defined(__SSE2__) && OX_VW == 4
#define OX_VF_SSE 1
#include <immintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__) && OX_VW == 4
#define OX_VF_NEON 1
#include <arm_neon.h>
#endif

OX_STATIC inline OX_UNUSED ox_vf ox_vf_zero(void) { return (ox_vf){0}; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_set1(float x) { return x - (ox_vf){0}; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load(const float *p) { return *(const ox_vfu *)p; }
OX_STATIC inline OX_UNUSED void ox_vf_store(float *p, ox_vf v) { *(ox_vfu *)p = v; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_add(ox_vf a, ox_vf b) { return a + b; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_sub(ox_vf a, ox_vf b) { return a - b; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_mul(ox_vf a, ox_vf b) { return a * b; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_div(ox_vf a, ox_vf b) { return a / b; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_neg(ox_vf a) { return -a; }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_gt(ox_vf a, ox_vf b) { return a > b; }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_lt(ox_vf a, ox_vf b) { return a < b; }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_eq(ox_vf a, ox_vf b) { return a == b; }
OX_STATIC inline OX_UNUSED ox_vm ox_vm_or(ox_vm a, ox_vm b) { return a | b; }
OX_STATIC inline OX_UNUSED ox_vm ox_vm_and(ox_vm a, ox_vm b) { return a & b; }
OX_STATIC inline OX_UNUSED ox_vm ox_vm_not(ox_vm a) { return ~a; }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_select(ox_vm m, ox_vf a, ox_vf b) { return (ox_vf)((m & (ox_vm)a) | (~m & (ox_vm)b)); }
/* a * b + c, fused (one rounding) where the target has the instruction:
 * -std=c11 does not contract the expression by itself */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_fma(ox_vf a, ox_vf b, ox_vf c)
{
#if defined(OX_VF_AVX512)
	return (ox_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(OX_VF_AVX2) && defined(__FMA__)
	return (ox_vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#elif defined(OX_VF_SSE) && defined(__FMA__)
	return (ox_vf)_mm_fmadd_ps((__m128)a, (__m128)b, (__m128)c);
#elif defined(OX_VF_NEON)
	return (ox_vf)vfmaq_f32((float32x4_t)c, (float32x4_t)a, (float32x4_t)b);
#else
	return a * b + c;
#endif
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_sqrt(ox_vf a)
{
#if defined(OX_VF_AVX512)
	return (ox_vf)_mm512_sqrt_ps((__m512)a);
#elif defined(OX_VF_AVX2)
	return (ox_vf)_mm256_sqrt_ps((__m256)a);
#elif defined(OX_VF_SSE)
	return (ox_vf)_mm_sqrt_ps((__m128)a);
#elif defined(OX_VF_NEON)
	return (ox_vf)vsqrtq_f32((float32x4_t)a);
#else
	ox_vf r;
	for (int i = 0; i < OX_VW; i++)
		r[i] = sqrtf(a[i]);
	return r;
#endif
}
/* the first n lanes (0 < n < OX_VW) of p; the others read as zero, and
 * nothing past p + n is touched */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_n(const float *p, int n)
{
#if defined(OX_VF_AVX512)
	return (ox_vf)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
#elif defined(OX_VF_AVX2)
	const ox_vm lane = {0, 1, 2, 3, 4, 5, 6, 7};
	return (ox_vf)_mm256_maskload_ps(p, (__m256i)(lane < n));
#else
	ox_vf r = {0};
	for (int i = 0; i < n; i++)
		r[i] = p[i];
	return r;
#endif
}
OX_STATIC inline OX_UNUSED void ox_vf_store_n(float *p, ox_vf v, int n)
{
#if defined(OX_VF_AVX512)
	_mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), (__m512)v);
#elif defined(OX_VF_AVX2)
	const ox_vm lane = {0, 1, 2, 3, 4, 5, 6, 7};
	_mm256_maskstore_ps(p, (__m256i)(lane < n), (__m256)v);
#else
	for (int i = 0; i < n; i++)
		p[i] = v[i];
#endif
}
/* a nearest integer of each lane (ties either way), |a| < 2^22 */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_round(ox_vf a)
{
#if defined(OX_VF_AVX512)
	return (ox_vf)_mm512_roundscale_ps((__m512)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#elif defined(OX_VF_AVX2)
	return (ox_vf)_mm256_round_ps((__m256)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#elif defined(OX_VF_NEON)
	return (ox_vf)vrndnq_f32((float32x4_t)a);
#elif defined(__clang__) || __GNUC__ >= 9
	/* to int and back (not a + 1.5 * 2^23 - 1.5 * 2^23, which -ffast-math
	 * would fold away); ties round up */
	const ox_vf h = a + 0.5f;
	const ox_vf t = __builtin_convertvector(__builtin_convertvector(h, ox_vm), ox_vf);
	return t - (ox_vf)((t > h) & (ox_vm)ox_vf_set1(1.0f));
#else
	const ox_vf m = ox_vf_set1(12582912.0f); /* 1.5 * 2^23 pushes the fraction out */
	return (a + m) - m;
#endif
}
/* 2^(n-1) for integral lanes n in [-125, 128] */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_pow2i_m1(ox_vf n)
{
	const ox_vf m = ox_vf_set1(12582912.0f + 126.0f); /* the bits of 1.5 * 2^23 + 126 + n end in 126 + n */
	return (ox_vf)(((ox_vm)(n + m) - (ox_vm)ox_vf_set1(12582912.0f)) << 23);
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_abs(ox_vf a) { return (ox_vf)((ox_vm)a & 0x7fffffff); }
/* r[i][j] <-> r[j][i]: an OX_VW x OX_VW block transposed in registers */
OX_STATIC inline OX_UNUSED void ox_vf_transpose(ox_vf *r)
{
#if defined(OX_VF_AVX512)
	__m512 t[16], u[16];
	for (int k = 0; k < 16; k += 2) {
		t[k] = _mm512_unpacklo_ps((__m512)r[k], (__m512)r[k + 1]);
		t[k + 1] = _mm512_unpackhi_ps((__m512)r[k], (__m512)r[k + 1]);
	}
	for (int j = 0; j < 16; j += 4) { /* u[j + k], 128-bit lane L: rows j..j+3 at column 4L + k */
		u[j] = (__m512)_mm512_unpacklo_pd((__m512d)t[j], (__m512d)t[j + 2]);
		u[j + 1] = (__m512)_mm512_unpackhi_pd((__m512d)t[j], (__m512d)t[j + 2]);
		u[j + 2] = (__m512)_mm512_unpacklo_pd((__m512d)t[j + 1], (__m512d)t[j + 3]);
		u[j + 3] = (__m512)_mm512_unpackhi_pd((__m512d)t[j + 1], (__m512d)t[j + 3]);
	}
	for (int k = 0; k < 4; k++) { /* lanes 0, 2 and 1, 3 of row groups 0-1 and 2-3 */
		t[k] = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88);
		t[4 + k] = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xdd);
		t[8 + k] = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
		t[12 + k] = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xdd);
	}
	for (int k = 0; k < 4; k++) {
		r[k] = (ox_vf)_mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
		r[8 + k] = (ox_vf)_mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
		r[4 + k] = (ox_vf)_mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88);
		r[12 + k] = (ox_vf)_mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xdd);
	}
#elif defined(OX_VF_AVX2)
	__m256 t[8], u[8];
	for (int k = 0; k < 8; k += 2) {
		t[k] = _mm256_unpacklo_ps((__m256)r[k], (__m256)r[k + 1]);
		t[k + 1] = _mm256_unpackhi_ps((__m256)r[k], (__m256)r[k + 1]);
	}
	for (int j = 0; j < 8; j += 4) {
		u[j] = (__m256)_mm256_unpacklo_pd((__m256d)t[j], (__m256d)t[j + 2]);
		u[j + 1] = (__m256)_mm256_unpackhi_pd((__m256d)t[j], (__m256d)t[j + 2]);
		u[j + 2] = (__m256)_mm256_unpacklo_pd((__m256d)t[j + 1], (__m256d)t[j + 3]);
		u[j + 3] = (__m256)_mm256_unpackhi_pd((__m256d)t[j + 1], (__m256d)t[j + 3]);
	}
	for (int k = 0; k < 4; k++) {
		r[k] = (ox_vf)_mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
		r[4 + k] = (ox_vf)_mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
	}
#elif defined(OX_VF_SSE)
	__m128 a = (__m128)r[0], b = (__m128)r[1], c = (__m128)r[2], d = (__m128)r[3];
	_MM_TRANSPOSE4_PS(a, b, c, d);
	r[0] = (ox_vf)a, r[1] = (ox_vf)b, r[2] = (ox_vf)c, r[3] = (ox_vf)d;
#elif defined(OX_VF_NEON)
	const float32x4x2_t p = vtrnq_f32((float32x4_t)r[0], (float32x4_t)r[1]);
	const float32x4x2_t q = vtrnq_f32((float32x4_t)r[2], (float32x4_t)r[3]);
	r[0] = (ox_vf)vcombine_f32(vget_low_f32(p.val[0]), vget_low_f32(q.val[0]));
	r[1] = (ox_vf)vcombine_f32(vget_low_f32(p.val[1]), vget_low_f32(q.val[1]));
	r[2] = (ox_vf)vcombine_f32(vget_high_f32(p.val[0]), vget_high_f32(q.val[0]));
	r[3] = (ox_vf)vcombine_f32(vget_high_f32(p.val[1]), vget_high_f32(q.val[1]));
#else
	for (int i = 0; i < OX_VW; i++)
		for (int j = i + 1; j < OX_VW; j++) {
			const float x = r[i][j];
			r[i][j] = r[j][i], r[j][i] = x;
		}
#endif
}

/* a with all but its 12 leading significant bits cleared */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_hi12(ox_vf a) { return (ox_vf)((ox_vm)a & (int32_t)0xfffff000u); }
OX_STATIC inline OX_UNUSED float ox_vf_hsum(ox_vf v)
{
	float s = 0;
	for (int i = 0; i < OX_VW; i++)
		s += v[i];
	return s;
}
OX_STATIC inline OX_UNUSED float ox_vf_hmax(ox_vf v)
{
	float s = v[0];
	for (int i = 1; i < OX_VW; i++)
		s = v[i] > s || v[i] != v[i] ? v[i] : s;
	return s;
}

#else /* ---- plain C11: a struct of OX_VW floats ---- */
typedef struct {
	float v[OX_VW];
} ox_vf;
typedef struct {
	int32_t v[OX_VW];
} ox_vm;
#define OX_VF_MAP(e) \
	ox_vf r; \
	for (int i = 0; i < OX_VW; i++) \
		r.v[i] = (e); \
	return r
#define OX_VM_MAP(e) \
	ox_vm r; \
	for (int i = 0; i < OX_VW; i++) \
		r.v[i] = (e); \
	return r
OX_STATIC inline OX_UNUSED ox_vf ox_vf_zero(void) { OX_VF_MAP(0.0f); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_set1(float x) { OX_VF_MAP(x); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load(const float *p) { OX_VF_MAP(p[i]); }
OX_STATIC inline OX_UNUSED void ox_vf_store(float *p, ox_vf v) { memcpy(p, v.v, sizeof v.v); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_add(ox_vf a, ox_vf b) { OX_VF_MAP(a.v[i] + b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_sub(ox_vf a, ox_vf b) { OX_VF_MAP(a.v[i] - b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_mul(ox_vf a, ox_vf b) { OX_VF_MAP(a.v[i] * b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_div(ox_vf a, ox_vf b) { OX_VF_MAP(a.v[i] / b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_neg(ox_vf a) { OX_VF_MAP(-a.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_fma(ox_vf a, ox_vf b, ox_vf c) { OX_VF_MAP(a.v[i] * b.v[i] + c.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_sqrt(ox_vf a) { OX_VF_MAP(sqrtf(a.v[i])); }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_gt(ox_vf a, ox_vf b) { OX_VM_MAP(a.v[i] > b.v[i] ? -1 : 0); }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_lt(ox_vf a, ox_vf b) { OX_VM_MAP(a.v[i] < b.v[i] ? -1 : 0); }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_eq(ox_vf a, ox_vf b) { OX_VM_MAP(a.v[i] == b.v[i] ? -1 : 0); }
OX_STATIC inline OX_UNUSED ox_vm ox_vm_or(ox_vm a, ox_vm b) { OX_VM_MAP(a.v[i] | b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vm ox_vm_and(ox_vm a, ox_vm b) { OX_VM_MAP(a.v[i] & b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vm ox_vm_not(ox_vm a) { OX_VM_MAP(~a.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_select(ox_vm m, ox_vf a, ox_vf b) { OX_VF_MAP(m.v[i] ? a.v[i] : b.v[i]); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_load_n(const float *p, int n) { OX_VF_MAP(i < n ? p[i] : 0.0f); }
OX_STATIC inline OX_UNUSED void ox_vf_store_n(float *p, ox_vf v, int n) { memcpy(p, v.v, (size_t)n * sizeof *p); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_round(ox_vf a) { OX_VF_MAP(nearbyintf(a.v[i])); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_abs(ox_vf a) { OX_VF_MAP(fabsf(a.v[i])); }
OX_STATIC inline OX_UNUSED void ox_vf_transpose(ox_vf *r)
{
	for (int i = 0; i < OX_VW; i++)
		for (int j = i + 1; j < OX_VW; j++) {
			const float x = r[i].v[j];
			r[i].v[j] = r[j].v[i], r[j].v[i] = x;
		}
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_hi12(ox_vf a)
{
	ox_vf r;
	for (int i = 0; i < OX_VW; i++) {
		uint32_t u;
		memcpy(&u, &a.v[i], 4);
		u &= 0xfffff000u;
		memcpy(&r.v[i], &u, 4);
	}
	return r;
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_pow2i_m1(ox_vf n) { OX_VF_MAP(ldexpf(1.0f, (int)n.v[i] - 1)); }
OX_STATIC inline OX_UNUSED float ox_vf_hsum(ox_vf v)
{
	float s = 0;
	for (int i = 0; i < OX_VW; i++)
		s += v.v[i];
	return s;
}
OX_STATIC inline OX_UNUSED float ox_vf_hmax(ox_vf v)
{
	float s = v.v[0];
	for (int i = 1; i < OX_VW; i++)
		s = v.v[i] > s || v.v[i] != v.v[i] ? v.v[i] : s;
	return s;
}
#undef OX_VF_MAP
#undef OX_VM_MAP
#endif

/* ---- on either rendering ---- */
/* max(a, b) = a < b ? b : a and min(a, b) = b < a ? b : a: a NaN in either
 * gives a, as x86's max/min instructions do with their operands swapped */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_max(ox_vf a, ox_vf b)
{
#if defined(OX_VF_AVX512)
	return (ox_vf)_mm512_max_ps((__m512)b, (__m512)a);
#elif defined(OX_VF_AVX2)
	return (ox_vf)_mm256_max_ps((__m256)b, (__m256)a);
#elif defined(OX_VF_SSE)
	return (ox_vf)_mm_max_ps((__m128)b, (__m128)a);
#else
	return ox_vf_select(ox_vf_lt(a, b), b, a);
#endif
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_min(ox_vf a, ox_vf b)
{
#if defined(OX_VF_AVX512)
	return (ox_vf)_mm512_min_ps((__m512)b, (__m512)a);
#elif defined(OX_VF_AVX2)
	return (ox_vf)_mm256_min_ps((__m256)b, (__m256)a);
#elif defined(OX_VF_SSE)
	return (ox_vf)_mm_min_ps((__m128)b, (__m128)a);
#else
	return ox_vf_select(ox_vf_lt(b, a), b, a);
#endif
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_clamp(ox_vf x, ox_vf lo, ox_vf hi) { return ox_vf_min(ox_vf_max(x, lo), hi); }
OX_STATIC inline OX_UNUSED ox_vf ox_vf_relu(ox_vf a) { return ox_vf_max(a, ox_vf_zero()); }
OX_STATIC inline OX_UNUSED ox_vm ox_vf_isnan(ox_vf a) { return ox_vm_not(ox_vf_eq(a, a)); }
