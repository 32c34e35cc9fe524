/* vmath.c: PLACEHOLDER (per lane libm) until the full version lands. */
#define OX_VMAP(name, f) static inline OX_UNUSED ox_vf name(ox_vf a) { ox_vf r; for (int i = 0; i < OX_VW; i++) r[i] = f(a[i]); return r; }
OX_VMAP(ox_vf_exp, expf)
OX_VMAP(ox_vf_tanh, tanhf)
OX_VMAP(ox_vf_erf, erff)
OX_VMAP(ox_vf_sqrt, sqrtf)
static inline OX_UNUSED ox_vf ox_vf_sigmoid(ox_vf a) { ox_vf r; for (int i = 0; i < OX_VW; i++) r[i] = 1.0f / (1.0f + expf(-a[i])); return r; }
static inline OX_UNUSED ox_vf ox_vf_gelu(ox_vf a) { ox_vf r; for (int i = 0; i < OX_VW; i++) r[i] = 0.5f * a[i] * (1.0f + erff(a[i] * 0.70710678f)); return r; }
static inline OX_UNUSED ox_vf ox_vf_gelu_tanh(ox_vf a) { ox_vf r; for (int i = 0; i < OX_VW; i++) r[i] = 0.5f * a[i] * (1.0f + tanhf(0.7978845608f * (a[i] + 0.044715f * a[i] * a[i] * a[i]))); return r; }
static inline OX_UNUSED ox_vf ox_vf_hardsigmoid(ox_vf a, float al, float be) { return ox_vf_clamp(a * al + be, ox_vf_zero(), ox_vf_set1(1.0f)); }
static inline OX_UNUSED ox_vf ox_vf_hardswish(ox_vf a) { return a * ox_vf_hardsigmoid(a, 1.0f / 6, 0.5f); }
