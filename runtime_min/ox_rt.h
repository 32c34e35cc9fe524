/* ox_rt.h: the few helpers generated network code needs, copied verbatim
 * into every generated OUT.c (so the output stays self-contained).
 * f16 and bf16 are stored as uint16_t and computed in float; conversions
 * round to nearest even and keep NaN/Inf. Needs <stdint.h>, <string.h>.
 * A string tensor element is an ox_str: a NUL-terminated UTF-8 string. */
typedef const char *ox_str;
/* helpers a network may not call: no warning for them where compilers can say so */
#if defined(__GNUC__) || defined(__clang__)
#define OX_UNUSED __attribute__((unused))
#else
#define OX_UNUSED
#endif
OX_STATIC inline OX_UNUSED float ox_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
	if (e == 0) {
		if (m == 0) {
			u = s;
		} else {
			e = 127 - 15 + 1;
			while (!(m & 0x400)) {
				m <<= 1;
				e--;
			}
			u = s | (e << 23) | ((m & 0x3ff) << 13);
		}
	} else if (e == 31) {
		u = s | 0x7f800000 | (m << 13);
	} else {
		u = s | ((e + 127 - 15) << 23) | (m << 13);
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

OX_STATIC inline OX_UNUSED uint16_t ox_f32_to_f16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint32_t s = (u >> 16) & 0x8000, m = u & 0x7fffff;
	int32_t e = (int32_t)((u >> 23) & 0xff);
	if (e == 255)
		return (uint16_t)(s | 0x7c00 | (m ? 0x200 | (m >> 13) : 0));
	e = e - 127 + 15;
	if (e >= 31)
		return (uint16_t)(s | 0x7c00);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)s;
		m |= 0x800000;
		uint32_t shift = (uint32_t)(14 - e);
		uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (hm & 1)))
			hm++;
		return (uint16_t)(s | hm);
	}
	uint32_t hm = m >> 13, rem = m & 0x1fff, h = s | ((uint32_t)e << 10) | hm;
	if (rem > 0x1000 || (rem == 0x1000 && (hm & 1)))
		h++;
	return (uint16_t)h;
}

OX_STATIC inline OX_UNUSED float ox_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

OX_STATIC inline OX_UNUSED uint16_t ox_f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}
