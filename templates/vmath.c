/* vmath.c: f32 transcendental functions on the target's vectors (vf.c),
 * for epilogues, fused elementwise loops, softmax and norms. Each is a
 * range reduction and a polynomial whose coefficients were fitted by least
 * squares in double precision (tests/vmath/README.md: how, and the error
 * each reaches over all the floats it was checked on). NaN in, NaN out;
 * infinities give the function's limit; results below 2^-125 may be 0.
 *
 *   exp      2^n * p(r), n = round(x / ln 2), r = x - n ln 2 (two-part ln 2),
 *            0 below ln(2^-125): no subnormal results
 *   sigmoid  1 / (1 + exp(-x))
 *   tanh     x + x^3 P(x^2) for |x| < 0.625, else sign(x) (1 - 2 / (exp(2|x|) + 1))
 *   erf      x P(x^2) for |x| < 1, else sign(x) (1 - exp(-x^2) Q(1/(1+|x|)))
 *            (Q fitted on [0.5, 9.4], where gelu's tail needs it)
 *   gelu     x/2 (1 + erf(x / sqrt 2)), through erfc's form for x < -1/sqrt 2
 *   gelu_tanh  x/2 (1 + tanh(z)) as x sigmoid(2z)
 */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_poly2(ox_vf x, float c0, float c1)
{
	return ox_vf_fma(x, ox_vf_set1(c1), ox_vf_set1(c0));
}
#define OX_VF_HORNER(p, x, c) ((p) = ox_vf_fma((p), (x), ox_vf_set1(c)))

/* exp(x + d), d a small correction (|d| < 0.05) the caller could not add
 * without rounding. x is clamped to [ln(2^-125), 88.73]: above, the
 * result overflows to inf; below, it is about 2^-125 (ox_vf_exp makes it
 * 0). NaN passes through the clamp. With AVX-512, vscalefps multiplies
 * exp(r) by 2^n; elsewhere 2 exp(r) (coefficients doubled) times 2^(n-1)
 * built in the exponent bits, so that n = 128 needs no special case. */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_exp_core(ox_vf x, ox_vf d)
{
	const ox_vf c = ox_vf_min(ox_vf_max(x, ox_vf_set1(-86.6433640f)), ox_vf_set1(88.73f));
	const ox_vf n = ox_vf_round(ox_vf_mul(c, ox_vf_set1(1.44269504088896341f))); /* -125..128 */
	ox_vf r = ox_vf_fma(n, ox_vf_set1(-0.693359375f), c);
	r = ox_vf_add(ox_vf_fma(n, ox_vf_set1(2.12194440e-4f), r), d); /* |r| < 0.4 */
#if defined(OX_VF_AVX512)
	ox_vf p = ox_vf_poly2(r, 0.00139477442f, 0.000197203379f);
	OX_VF_HORNER(p, r, 0.00833366625f);
	OX_VF_HORNER(p, r, 0.0416663215f);
	OX_VF_HORNER(p, r, 0.166666657f);
	OX_VF_HORNER(p, r, 0.5f);
	p = ox_vf_fma(p, ox_vf_mul(r, r), ox_vf_add(r, ox_vf_set1(1.0f)));
	return (ox_vf)_mm512_scalef_ps((__m512)p, (__m512)n);
#else
	const ox_vf two = ox_vf_set1(2.0f);
	ox_vf p = ox_vf_poly2(r, 0.00278954883f, 0.000394406758f);
	OX_VF_HORNER(p, r, 0.0166673325f);
	OX_VF_HORNER(p, r, 0.0833326429f);
	OX_VF_HORNER(p, r, 0.333333313f);
	OX_VF_HORNER(p, r, 1.0f);
	p = ox_vf_fma(p, ox_vf_mul(r, r), ox_vf_fma(r, two, two));
	return ox_vf_mul(p, ox_vf_pow2i_m1(n));
#endif
}
/* 0 below ln(2^-125): no subnormal results; adding -0.0 folds away */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_exp(ox_vf x)
{
	return ox_vf_select(ox_vf_lt(x, ox_vf_set1(-86.6433640f)), ox_vf_zero(), ox_vf_exp_core(x, ox_vf_set1(-0.0f)));
}

/* 1 / (1 + exp(-x)): exp's overflow to inf gives 0, its about 2^-125 for
 * large x adds nothing to 1 */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_sigmoid(ox_vf x)
{
	const ox_vf one = ox_vf_set1(1.0f);
	return ox_vf_div(one, ox_vf_add(one, ox_vf_exp_core(ox_vf_neg(x), ox_vf_set1(-0.0f))));
}

OX_STATIC inline OX_UNUSED ox_vf ox_vf_tanh(ox_vf x)
{
	const ox_vf a = ox_vf_abs(x), one = ox_vf_set1(1.0f);
	const ox_vf z = ox_vf_mul(x, x);
	ox_vf p = ox_vf_poly2(z, 0.0208286159f, -0.00590387685f);
	OX_VF_HORNER(p, z, -0.0538019724f);
	OX_VF_HORNER(p, z, 0.133322477f);
	OX_VF_HORNER(p, z, -0.333333135f);
	const ox_vf small = ox_vf_fma(ox_vf_mul(p, z), x, x);
	const ox_vf e = ox_vf_exp_core(ox_vf_add(a, a), ox_vf_set1(-0.0f)); /* overflows to inf: 1 */
	ox_vf big = ox_vf_sub(one, ox_vf_div(ox_vf_set1(2.0f), ox_vf_add(e, one)));
	big = ox_vf_select(ox_vf_lt(x, ox_vf_zero()), ox_vf_neg(big), big);
	return ox_vf_select(ox_vf_lt(a, ox_vf_set1(0.625f)), small, big); /* NaN: big is NaN */
}

/* erfc(a) exp(a^2) for 0.5 <= a <= 9.4 (beyond, erfc(a) < FLT_MIN), a
 * polynomial in 1 / (1 + a) */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_erfc_q(ox_vf a)
{
	const ox_vf t = ox_vf_div(ox_vf_set1(1.0f), ox_vf_add(a, ox_vf_set1(1.0f)));
	ox_vf q = ox_vf_poly2(t, -2.85224342f, 0.797122419f);
	OX_VF_HORNER(q, t, 4.05239439f);
	OX_VF_HORNER(q, t, -2.51809573f);
	OX_VF_HORNER(q, t, 0.181172073f);
	OX_VF_HORNER(q, t, 0.208485425f);
	OX_VF_HORNER(q, t, 0.571316779f);
	OX_VF_HORNER(q, t, 0.563805759f);
	OX_VF_HORNER(q, t, 8.7856597e-06f);
	return q;
}
/* exp(-s a^2), s = 1 or 1/2, without rounding a^2 (which would cost 64 ulp
 * at a = 9): a = h + l with h's 12 leading bits, so h^2 is exact and
 * a^2 = h^2 + l (a + h) */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_expnsq(ox_vf a, float s)
{
	const ox_vf h = ox_vf_hi12(a), l = ox_vf_sub(a, h), ns = ox_vf_set1(-s);
	const ox_vf e = ox_vf_mul(ox_vf_mul(h, h), ns);
	/* 0 where exp underflows (also for a = ±inf, whose l is NaN) */
	return ox_vf_select(ox_vf_lt(e, ox_vf_set1(-86.6433640f)), ox_vf_zero(),
			    ox_vf_exp_core(e, ox_vf_mul(ox_vf_mul(l, ox_vf_add(a, h)), ns)));
}

/* erf(x) / x for |x| < 1, a polynomial in x^2 */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_erf_small(ox_vf x)
{
	const ox_vf z = ox_vf_mul(x, x);
	ox_vf p = ox_vf_poly2(z, -0.000802435155f, 7.89820187e-05f);
	OX_VF_HORNER(p, z, 0.00519005302f);
	OX_VF_HORNER(p, z, -0.0268548075f);
	OX_VF_HORNER(p, z, 0.112836123f);
	OX_VF_HORNER(p, z, -0.376126289f);
	OX_VF_HORNER(p, z, 1.12837923f);
	return p;
}

OX_STATIC inline OX_UNUSED ox_vf ox_vf_erf(ox_vf x)
{
	const ox_vf a = ox_vf_abs(x), one = ox_vf_set1(1.0f);
	const ox_vf small = ox_vf_mul(x, ox_vf_erf_small(x));
	const ox_vf a1 = ox_vf_max(a, one);
	ox_vf big = ox_vf_sub(one, ox_vf_mul(ox_vf_expnsq(a1, 1.0f), ox_vf_erfc_q(a1)));
	big = ox_vf_select(ox_vf_lt(x, ox_vf_zero()), ox_vf_neg(big), big);
	return ox_vf_select(ox_vf_lt(a, one), small, ox_vf_select(ox_vf_isnan(x), x, big));
}

/* x/2 (1 + erf(u)), u = x / sqrt 2; for u < -1/2 as x/2 erfc(-u), which
 * keeps its relative accuracy where 1 + erf(u) would cancel */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_gelu(ox_vf x)
{
	const ox_vf u = ox_vf_mul(x, ox_vf_set1(0.707106781186547524f)), one = ox_vf_set1(1.0f);
	const ox_vf a = ox_vf_abs(u), h = ox_vf_mul(x, ox_vf_set1(0.5f));
	/* exp(-u^2) from x itself (u is rounded), erfc's polynomial at |u| >= 1/2 */
	const ox_vf e = ox_vf_expnsq(x, 0.5f), q = ox_vf_erfc_q(ox_vf_max(a, ox_vf_set1(0.5f)));
	const ox_vf tail = ox_vf_mul(ox_vf_mul(h, q), e); /* (h q) e: no subnormal on the way */
	const ox_vf mid = ox_vf_mul(h, ox_vf_add(one, ox_vf_mul(u, ox_vf_erf_small(u))));
	const ox_vf top = ox_vf_mul(h, ox_vf_sub(ox_vf_set1(2.0f), ox_vf_mul(e, q)));
	const ox_vf y = ox_vf_select(ox_vf_lt(u, ox_vf_set1(-0.5f)), tail, ox_vf_select(ox_vf_lt(a, one), mid, top));
	return ox_vf_select(ox_vf_isnan(x), x, y);
}

/* x/2 (1 + tanh(z)) = x sigmoid(2z): no cancellation where tanh(z) is near -1 */
OX_STATIC inline OX_UNUSED ox_vf ox_vf_gelu_tanh(ox_vf x)
{
	const ox_vf x3 = ox_vf_mul(ox_vf_mul(x, x), x);
	return ox_vf_mul(x, ox_vf_sigmoid(ox_vf_mul(ox_vf_set1(1.59576912160573071f), ox_vf_fma(x3, ox_vf_set1(0.044715f), x))));
}

OX_STATIC inline OX_UNUSED ox_vf ox_vf_hardsigmoid(ox_vf a, float al, float be)
{
	return ox_vf_clamp(ox_vf_fma(a, ox_vf_set1(al), ox_vf_set1(be)), ox_vf_zero(), ox_vf_set1(1.0f));
}
OX_STATIC inline OX_UNUSED ox_vf ox_vf_hardswish(ox_vf a) { return ox_vf_mul(a, ox_vf_hardsigmoid(a, 1.0f / 6, 0.5f)); }
#undef OX_VF_HORNER
