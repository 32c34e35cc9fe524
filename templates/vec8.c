/* vec8.c: templates/vec.c's 4-lane vector for 8-byte element types
 * (double, 64-bit integers): with GCC or Clang two 16-byte vectors, since
 * a 32-byte vector changes the calling convention between builds with
 * and without AVX (and the compilers warn about it); elsewhere a struct
 * of 4. Same helpers, same meaning as vec.c.
 */
#if defined(__GNUC__) || defined(__clang__)
typedef $C ox_v2_$S __attribute__((vector_size(2 * sizeof($C))));
typedef long long ox_m2_$S __attribute__((vector_size(2 * sizeof(long long))));
typedef struct {
	ox_v2_$S lo, hi;
} ox_v4_$S;
typedef struct {
	ox_m2_$S lo, hi;
} ox_m4_$S;
OX_STATIC inline __attribute__((unused)) ox_v4_$S ox_v4_set_$S($C a, $C b, $C c, $C d)
{
	ox_v4_$S r = {{a, b}, {c, d}};
	return r;
}
OX_STATIC inline __attribute__((unused)) ox_v4_$S ox_v4_madd_$S(ox_v4_$S acc, $C w, ox_v4_$S x)
{
	acc.lo += w * x.lo;
	acc.hi += w * x.hi;
	return acc;
}
OX_STATIC inline __attribute__((unused)) $C ox_v4_get_$S(ox_v4_$S v, int i)
{
	return i < 2 ? v.lo[i] : v.hi[i - 2];
}
OX_STATIC inline __attribute__((unused)) ox_m4_$S ox_m4_set_$S(int a, int b, int c, int d)
{
	ox_m4_$S r = {{-(long long)(a != 0), -(long long)(b != 0)}, {-(long long)(c != 0), -(long long)(d != 0)}};
	return r;
}
OX_STATIC inline __attribute__((unused)) ox_v4_$S ox_v4_and_$S(ox_v4_$S v, ox_m4_$S m)
{
	v.lo = (ox_v2_$S)((ox_m2_$S)v.lo & m.lo);
	v.hi = (ox_v2_$S)((ox_m2_$S)v.hi & m.hi);
	return v;
}
#else
typedef struct {
	$C v[4];
} ox_v4_$S;
typedef struct {
	int v[4];
} ox_m4_$S;
OX_STATIC inline ox_v4_$S ox_v4_set_$S($C a, $C b, $C c, $C d)
{
	ox_v4_$S r = {{a, b, c, d}};
	return r;
}
OX_STATIC inline ox_v4_$S ox_v4_madd_$S(ox_v4_$S acc, $C w, ox_v4_$S x)
{
	for (int i = 0; i < 4; i++)
		acc.v[i] += w * x.v[i];
	return acc;
}
OX_STATIC inline $C ox_v4_get_$S(ox_v4_$S v, int i)
{
	return v.v[i];
}
OX_STATIC inline ox_m4_$S ox_m4_set_$S(int a, int b, int c, int d)
{
	ox_m4_$S r = {{a, b, c, d}};
	return r;
}
OX_STATIC inline ox_v4_$S ox_v4_and_$S(ox_v4_$S v, ox_m4_$S m)
{
	for (int i = 0; i < 4; i++)
		if (!m.v[i])
			v.v[i] = 0;
	return v;
}
#endif
