/* vec.c: a 4-lane vector of the compute type for the dense kernels, for
 * element types of up to 4 bytes (templates/vec8.c has the same helpers
 * for 8-byte types). With GCC or Clang it is a vector_size vector, which
 * the compiler keeps in SIMD registers at any -O level (plain arrays
 * only vectorize at -O2 and up, and spill easily); elsewhere a struct of
 * 4, so the kernels stay standard C11. set() of 4 adjacent loads
 * compiles to one vector load at -O2. A mask (ox_m4) zeroes lanes with a
 * bitwise and, so a NaN read through a clamped index cannot leak in.
 */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OX_VF_PORTABLE)
typedef $C ox_v4_$S __attribute__((vector_size(4 * sizeof($C))));
/* mask lanes: signed integers of the element's size */
typedef __typeof__(_Generic(($C)0, int16_t: (short)0, uint16_t: (short)0, int8_t: (signed char)0,
			    uint8_t: (signed char)0, default: 0)) ox_mi_$S;
typedef ox_mi_$S ox_m4_$S __attribute__((vector_size(4 * sizeof($C))));
OX_STATIC inline __attribute__((unused)) ox_v4_$S ox_v4_set_$S($C a, $C b, $C c, $C d)
{
	return (ox_v4_$S){a, b, c, d};
}
OX_STATIC inline __attribute__((unused)) ox_v4_$S ox_v4_madd_$S(ox_v4_$S acc, $C w, ox_v4_$S x)
{
	return acc + w * x;
}
OX_STATIC inline __attribute__((unused)) $C ox_v4_get_$S(ox_v4_$S v, int i)
{
	return v[i];
}
OX_STATIC inline __attribute__((unused)) ox_m4_$S ox_m4_set_$S(int a, int b, int c, int d)
{
	return (ox_m4_$S){-(a != 0), -(b != 0), -(c != 0), -(d != 0)};
}
OX_STATIC inline __attribute__((unused)) ox_v4_$S ox_v4_and_$S(ox_v4_$S v, ox_m4_$S m)
{
	return (ox_v4_$S)((ox_m4_$S)v & m);
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
