/* vf.c: PLACEHOLDER (minimal, GNUC only) until the full version lands:
 * the f32 vector of the target, OX_VW lanes. */
typedef float ox_vf __attribute__((vector_size(OX_VW * 4)));
typedef int32_t ox_vm __attribute__((vector_size(OX_VW * 4)));
typedef float ox_vfu __attribute__((vector_size(OX_VW * 4), aligned(4)));
static inline OX_UNUSED ox_vf ox_vf_zero(void) { return (ox_vf){0}; }
static inline OX_UNUSED ox_vf ox_vf_set1(float x) { return x - (ox_vf){0}; }
static inline OX_UNUSED ox_vf ox_vf_load(const float *p) { return *(const ox_vfu *)p; }
static inline OX_UNUSED void ox_vf_store(float *p, ox_vf v) { *(ox_vfu *)p = v; }
static inline OX_UNUSED ox_vf ox_vf_add(ox_vf a, ox_vf b) { return a + b; }
static inline OX_UNUSED ox_vf ox_vf_mul(ox_vf a, ox_vf b) { return a * b; }
static inline OX_UNUSED ox_vf ox_vf_div(ox_vf a, ox_vf b) { return a / b; }
#if defined(__AVX512F__) && OX_VW == 16
#include <immintrin.h>
static inline OX_UNUSED ox_vf ox_vf_fma(ox_vf a, ox_vf b, ox_vf c) { return (ox_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c); }
#else
static inline OX_UNUSED ox_vf ox_vf_fma(ox_vf a, ox_vf b, ox_vf c) { return a * b + c; }
#endif
static inline OX_UNUSED ox_vm ox_vf_gt(ox_vf a, ox_vf b) { return a > b; }
static inline OX_UNUSED ox_vm ox_vf_eq(ox_vf a, ox_vf b) { return a == b; }
static inline OX_UNUSED ox_vm ox_vm_or(ox_vm a, ox_vm b) { return a | b; }
static inline OX_UNUSED ox_vm ox_vm_not(ox_vm a) { return ~a; }
static inline OX_UNUSED ox_vf ox_vf_select(ox_vm m, ox_vf a, ox_vf b) { return (ox_vf)((m & (ox_vm)a) | (~m & (ox_vm)b)); }
static inline OX_UNUSED ox_vf ox_vf_sub(ox_vf a, ox_vf b) { return a - b; }
static inline OX_UNUSED ox_vm ox_vf_lt(ox_vf a, ox_vf b) { return a < b; }
static inline OX_UNUSED ox_vf ox_vf_neg(ox_vf a) { return -a; }
static inline OX_UNUSED ox_vf ox_vf_relu(ox_vf a) { return ox_vf_select(ox_vf_lt(a, ox_vf_zero()), ox_vf_zero(), a); }
static inline OX_UNUSED ox_vf ox_vf_max(ox_vf a, ox_vf b) { return ox_vf_select(ox_vf_lt(a, b), b, a); }
static inline OX_UNUSED ox_vf ox_vf_min(ox_vf a, ox_vf b) { return ox_vf_select(ox_vf_lt(b, a), b, a); }
static inline OX_UNUSED ox_vf ox_vf_clamp(ox_vf x, ox_vf lo, ox_vf hi) { return ox_vf_min(ox_vf_max(x, lo), hi); }
static inline OX_UNUSED ox_vf ox_vf_abs(ox_vf a) { return ox_vf_select(ox_vf_lt(a, ox_vf_zero()), -a, a); }
static inline OX_UNUSED ox_vf ox_vf_load_n(const float *p, int n) { ox_vf r = ox_vf_zero(); for (int i = 0; i < n; i++) r[i] = p[i]; return r; }
static inline OX_UNUSED void ox_vf_store_n(float *p, ox_vf v, int n) { for (int i = 0; i < n; i++) p[i] = v[i]; }
static inline OX_UNUSED float ox_vf_hsum(ox_vf v) { float s = 0; for (int i = 0; i < OX_VW; i++) s += v[i]; return s; }
static inline OX_UNUSED float ox_vf_hmax(ox_vf v) { float s = v[0]; for (int i = 1; i < OX_VW; i++) s = v[i] > s || v[i] != v[i] ? v[i] : s; return s; }
