/* ox_main.c: the `--main` test program and the tensor file readers.
 *
 * codegen copies this text next to a generated network as OUT_main.c,
 * replacing the placeholders `PFX` `_` and `PFXU` `_` (spelled apart here so
 * this comment survives) with the lower / upper case prefix plus '_', and
 * `HEADER` `_NAME` with the header's file name; nothing else in the file may
 * contain them. tests/e2e/oxcmp.c includes this file with OX_NO_MAIN defined to
 * reuse the readers, so everything that names the network sits inside
 * #ifndef OX_NO_MAIN. Tensors are read into oxt_tensor: ONNX dtype codes,
 * C order, host byte order, data owned by malloc; sub-byte kinds (int4,
 * uint4, float4e2m1, int2, uint2) unpacked to one element per byte, as the
 * generated API passes them. Needs libc and libm only
 * (plus POSIX clock_gettime and mkdir where available); the program
 * itself also POSIX threads, for --threads. Built with -DOX_SHARED
 * (onnxcc --shared) it is the shared library's ABI instead of a program.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <time.h>

/* ---- dtypes: ONNX TensorProto.DataType codes ---- */

enum {
	OXT_F32 = 1, OXT_U8 = 2, OXT_I8 = 3, OXT_U16 = 4, OXT_I16 = 5, OXT_I32 = 6,
	OXT_I64 = 7, OXT_STRING = 8, OXT_BOOL = 9, OXT_F16 = 10, OXT_F64 = 11,
	OXT_U32 = 12, OXT_U64 = 13, OXT_BF16 = 16, OXT_F8E4M3FN = 17,
	OXT_F8E4M3FNUZ = 18, OXT_F8E5M2 = 19, OXT_F8E5M2FNUZ = 20, OXT_U4 = 21,
	OXT_I4 = 22, OXT_F4E2M1 = 23, OXT_F8E8M0 = 24, OXT_U2 = 25, OXT_I2 = 26
};

#define OXT_MAXRANK 16

/* bf16 and the f8 kinds have no numpy type code: we write their bit
 * patterns as '<u2' / '|u1' and accept those (or '<V2' / '|V1') where such
 * a dtype is expected; see oxt_bits_as. Sub-byte types are held unpacked,
 * one element per byte, and written as '|i1' (int4, int2: sign-extended) or
 * '|u1' (uint4, uint2, and float4e2m1 as its 4-bit code); in a TensorProto
 * they are packed, lowest bits first (oxt_read_pb unpacks them). */
static const struct { int code; const char *name; size_t size; const char *npy; } oxt_dtypes[] = {
	{ OXT_F32, "f32", 4, "<f4" }, { OXT_U8, "u8", 1, "|u1" }, { OXT_I8, "i8", 1, "|i1" },
	{ OXT_U16, "u16", 2, "<u2" }, { OXT_I16, "i16", 2, "<i2" }, { OXT_I32, "i32", 4, "<i4" },
	{ OXT_I64, "i64", 8, "<i8" }, { OXT_BOOL, "bool", 1, "|b1" }, { OXT_F16, "f16", 2, "<f2" },
	{ OXT_F64, "f64", 8, "<f8" }, { OXT_U32, "u32", 4, "<u4" }, { OXT_U64, "u64", 8, "<u8" },
	{ OXT_BF16, "bf16", 2, "<u2" }, { OXT_F8E4M3FN, "f8e4m3fn", 1, "|u1" },
	{ OXT_F8E4M3FNUZ, "f8e4m3fnuz", 1, "|u1" }, { OXT_F8E5M2, "f8e5m2", 1, "|u1" },
	{ OXT_F8E5M2FNUZ, "f8e5m2fnuz", 1, "|u1" }, { OXT_F8E8M0, "f8e8m0", 1, "|u1" },
	{ OXT_STRING, "string", sizeof(char *), "|S" },
	{ OXT_U4, "u4", 1, "|u1" }, { OXT_I4, "i4", 1, "|i1" }, { OXT_F4E2M1, "f4e2m1", 1, "|u1" },
	{ OXT_U2, "u2", 1, "|u1" }, { OXT_I2, "i2", 1, "|i1" },
};
#define OXT_NDTYPES (sizeof oxt_dtypes / sizeof oxt_dtypes[0])

static int oxt_dtindex(int dt)
{
	for (size_t i = 0; i < OXT_NDTYPES; i++)
		if (oxt_dtypes[i].code == dt)
			return (int)i;
	return -1;
}

static const char *oxt_dtname(int dt)
{
	int i = oxt_dtindex(dt);
	return i < 0 ? "?" : oxt_dtypes[i].name;
}

static size_t oxt_dtsize(int dt)
{
	int i = oxt_dtindex(dt);
	return i < 0 ? 0 : oxt_dtypes[i].size;
}

typedef struct {
	int dtype;       /* ONNX code */
	int bits_only;   /* from a '|u1' '<u2' '|V1' '<V2' '|i1' .npy: may be f8 / bf16
			  * bits or an unpacked sub-byte tensor */
	int rank;
	int64_t shape[OXT_MAXRANK];
	size_t numel;
	void *data;      /* numel elements, host byte order; malloc'd (>= 1 byte);
			  * strings: numel malloc'd NUL-terminated char * */
	size_t str_width; /* reading a '|Sw' .npy: its width */
} oxt_tensor;

/* Bits per element of a sub-byte dtype, 0 for the others. */
static int oxt_subbyte_bits(int dt)
{
	return dt == OXT_U4 || dt == OXT_I4 || dt == OXT_F4E2M1 ? 4 : dt == OXT_U2 || dt == OXT_I2 ? 2 : 0;
}

/* Retype t as `want` when t is bare bits (from .npy) that stand for a
 * bf16 / f8 tensor, or bytes ('|i1' for the signed kinds, else '|u1') that
 * stand for an unpacked sub-byte tensor; returns whether t now has dtype
 * want. */
static int oxt_bits_as(oxt_tensor *t, int want)
{
	int nocode = want == OXT_BF16 || (want >= OXT_F8E4M3FN && want <= OXT_F8E5M2FNUZ) ||
		     want == OXT_F8E8M0;
	if (t->bits_only && nocode && t->dtype != OXT_I8 && oxt_dtsize(want) == oxt_dtsize(t->dtype))
		t->dtype = want;
	if (t->bits_only && oxt_subbyte_bits(want) &&
	    t->dtype == (want == OXT_I4 || want == OXT_I2 ? OXT_I8 : OXT_U8))
		t->dtype = want;
	return t->dtype == want;
}

static void oxt_free(oxt_tensor *t)
{
	if (t->dtype == OXT_STRING && t->data) /* an array of malloc'd strings */
		for (size_t i = 0; i < t->numel; i++)
			free(((char **)t->data)[i]);
	free(t->data);
	t->data = NULL;
}


/* "f32[2,3]"; "f32[]" for a scalar */
static void oxt_typestr(char *buf, size_t nbuf, int dtype, int rank, const int64_t *shape)
{
	size_t k = (size_t)snprintf(buf, nbuf, "%s[", oxt_dtname(dtype));
	for (int i = 0; i < rank && k < nbuf; i++)
		k += (size_t)snprintf(buf + k, nbuf - k, "%s%lld", i ? "," : "", (long long)shape[i]);
	if (k < nbuf)
		snprintf(buf + k, nbuf - k, "]");
}

static int oxt_host_le(void)
{
	const uint16_t one = 1;
	unsigned char b;
	memcpy(&b, &one, 1);
	return b == 1;
}

/* Files are little-endian; swap each element in place on a big-endian host. */
static void oxt_to_host(void *data, size_t numel, size_t size)
{
	if (oxt_host_le() || size == 1)
		return;
	unsigned char *p = data;
	for (size_t i = 0; i < numel; i++, p += size)
		for (size_t a = 0, b = size - 1; a < b; a++, b--) {
			unsigned char c = p[a];
			p[a] = p[b];
			p[b] = c;
		}
}

static int oxt_fail(char *err, size_t nerr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, nerr, fmt, ap);
	va_end(ap);
	return -1;
}

/* Whole file into memory; works on pipes too. */
/* numel strings of width w (NUL padded, as .npy '|Sw') -> char *[numel] */
static int oxt_fixed_strings(oxt_tensor *t, const unsigned char *b, size_t w, char *err, size_t nerr)
{
	char **v = calloc(t->numel + 1, sizeof *v);
	if (!v)
		return oxt_fail(err, nerr, "out of memory");
	t->data = v;
	for (size_t i = 0; i < t->numel; i++) {
		const unsigned char *e = memchr(b + i * w, 0, w);
		size_t n = e ? (size_t)(e - (b + i * w)) : w;
		if (!(v[i] = malloc(n + 1)))
			return oxt_fail(err, nerr, "out of memory");
		memcpy(v[i], b + i * w, n);
		v[i][n] = 0;
	}
	return 0;
}

static unsigned char *oxt_slurp(const char *path, size_t *len, char *err, size_t nerr)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		oxt_fail(err, nerr, "cannot open: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		unsigned char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (!buf)
		oxt_fail(err, nerr, "out of memory");
	else if (ferror(f)) {
		oxt_fail(err, nerr, "read error: %s", strerror(errno));
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* numel of shape, or -1 on a negative dim or overflow */
static int oxt_set_numel(oxt_tensor *t, char *err, size_t nerr)
{
	size_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->shape[i] < 0)
			return oxt_fail(err, nerr, "negative dimension %lld", (long long)t->shape[i]);
		if (t->shape[i] && n > SIZE_MAX / 16 / (size_t)t->shape[i])
			return oxt_fail(err, nerr, "shape too large");
		n *= (size_t)t->shape[i];
	}
	t->numel = n;
	return 0;
}

/* ---- .npy (format 1.0, 2.0, 3.0) ---- */

/* the text after `'key':` in the header dict, or NULL */
static const char *oxt_npy_key(const char *hdr, const char *key)
{
	char pat[32];
	for (int q = 0; q < 2; q++) {
		snprintf(pat, sizeof pat, q ? "\"%s\"" : "'%s'", key);
		const char *p = strstr(hdr, pat);
		if (!p)
			continue;
		p += strlen(pat);
		while (*p == ' ')
			p++;
		if (*p++ != ':')
			return NULL;
		while (*p == ' ')
			p++;
		return p;
	}
	return NULL;
}

static int oxt_npy_descr(const char *d, oxt_tensor *t, char *err, size_t nerr)
{
	char bo = d[0], kind = d[1], *e;
	long size = strtol(d + 2, &e, 10); /* not atoi: no overflow */
	if (*e || size <= 0 || size > 1 << 20)
		return oxt_fail(err, nerr, "unsupported descr '%s'", d);
	if (kind == 'S') { /* fixed-width byte strings: read into char *[] */
		t->dtype = OXT_STRING;
		t->str_width = (size_t)size;
		return 0;
	}
	if (bo != '<' && bo != '|' && bo != '=' && bo != '>')
		return oxt_fail(err, nerr, "unsupported descr '%s'", d);
	if (bo == '>' && size > 1)
		return oxt_fail(err, nerr, "big-endian descr '%s' not supported", d);
	static const struct { char kind; int size; int dt; } map[] = {
		{ 'f', 2, OXT_F16 }, { 'f', 4, OXT_F32 }, { 'f', 8, OXT_F64 },
		{ 'i', 1, OXT_I8 }, { 'i', 2, OXT_I16 }, { 'i', 4, OXT_I32 }, { 'i', 8, OXT_I64 },
		{ 'u', 1, OXT_U8 }, { 'u', 2, OXT_U16 }, { 'u', 4, OXT_U32 }, { 'u', 8, OXT_U64 },
		{ 'b', 1, OXT_BOOL }, { 'V', 1, OXT_U8 }, { 'V', 2, OXT_U16 },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (map[i].kind == kind && map[i].size == size) {
			t->dtype = map[i].dt;
			t->bits_only = map[i].dt == OXT_U8 || map[i].dt == OXT_U16 || map[i].dt == OXT_I8;
			return 0;
		}
	return oxt_fail(err, nerr, "unsupported descr '%s'", d);
}

static int oxt_read_npy(const unsigned char *b, size_t len, oxt_tensor *t, char *err, size_t nerr)
{
	if (len < 10)
		return oxt_fail(err, nerr, "truncated .npy header");
	size_t hlen, off;
	if (b[6] == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		off = 10;
	} else if (b[6] == 2 || b[6] == 3) {
		if (len < 12)
			return oxt_fail(err, nerr, "truncated .npy header");
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		off = 12;
	} else
		return oxt_fail(err, nerr, "unsupported .npy version %d.%d", b[6], b[7]);
	if (hlen > len - off)
		return oxt_fail(err, nerr, "truncated .npy header");
	char *hdr = malloc(hlen + 1);
	if (!hdr)
		return oxt_fail(err, nerr, "out of memory");
	memcpy(hdr, b + off, hlen);
	hdr[hlen] = 0;
	off += hlen;

	int rc = -1;
	const char *p = oxt_npy_key(hdr, "descr");
	char descr[16];
	size_t k = 0;
	if (!p || (*p != '\'' && *p != '"')) {
		oxt_fail(err, nerr, "no 'descr' in .npy header");
		goto out;
	}
	for (char q = *p++; *p && *p != q && k + 1 < sizeof descr; p++)
		descr[k++] = *p;
	descr[k] = 0;
	if (k < 3) {
		oxt_fail(err, nerr, "bad descr '%s'", descr);
		goto out;
	}
	if (oxt_npy_descr(descr, t, err, nerr))
		goto out;

	p = oxt_npy_key(hdr, "shape");
	if (!p || *p++ != '(') {
		oxt_fail(err, nerr, "no 'shape' in .npy header");
		goto out;
	}
	t->rank = 0;
	for (;;) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ')')
			break;
		char *e;
		long long d = strtoll(p, &e, 10);
		if (e == p || t->rank == OXT_MAXRANK) {
			oxt_fail(err, nerr, "bad or too long 'shape' in .npy header");
			goto out;
		}
		while (*e == 'L') /* Python 2 longs */
			e++;
		t->shape[t->rank++] = d;
		p = e;
	}
	if (oxt_set_numel(t, err, nerr))
		goto out;

	p = oxt_npy_key(hdr, "fortran_order");
	if (p && strncmp(p, "True", 4) == 0 && t->rank > 1) {
		oxt_fail(err, nerr, "Fortran-order .npy not supported");
		goto out;
	}

	size_t size = oxt_dtsize(t->dtype), want = t->numel * size;
	if (t->dtype == OXT_STRING) {
		/* numel < SIZE_MAX / 16 and str_width <= 2^20: check the product */
		if (t->numel && t->str_width > (len - off) / t->numel) {
			oxt_fail(err, nerr, "data has %zu bytes, %zu strings of %s need more", len - off, t->numel,
				 descr);
			goto out;
		}
		if (len - off != t->numel * t->str_width) {
			oxt_fail(err, nerr, "data has %zu bytes, %s needs %zu", len - off, descr,
				 t->numel * t->str_width);
			goto out;
		}
		rc = oxt_fixed_strings(t, b + off, t->str_width, err, nerr);
		goto out;
	}
	if (len - off != want) {
		oxt_fail(err, nerr, "data has %zu bytes, %s needs %zu", len - off,
			 descr, want);
		goto out;
	}
	t->data = malloc(want ? want : 1);
	if (!t->data) {
		oxt_fail(err, nerr, "out of memory");
		goto out;
	}
	memcpy(t->data, b + off, want);
	oxt_to_host(t->data, t->numel, size);
	rc = 0;
out:
	free(hdr);
	return rc;
}

/* ---- ONNX TensorProto (protobuf wire format) ---- */

typedef struct {
	unsigned char *v;
	size_t n, cap, esz;
} oxt_vec;

static int oxt_push(oxt_vec *a, const void *x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		unsigned char *nv = realloc(a->v, cap * a->esz);
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = cap;
	}
	memcpy(a->v + a->n++ * a->esz, x, a->esz);
	return 0;
}

static int oxt_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int s = 0; s < 64 && *p < end; s += 7) {
		unsigned char c = *(*p)++;
		x |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static uint64_t oxt_le(const unsigned char *p, int n)
{
	uint64_t x = 0;
	for (int i = n - 1; i >= 0; i--)
		x = x << 8 | p[i];
	return x;
}

/* One repeated numeric field: wire type 2 is packed, else one value.
 * kind: 'v' varint, '4' fixed32, '8' fixed64. Values go to `a` as uint64. */
static int oxt_pb_values(int wt, const unsigned char **p, const unsigned char *end, char kind, oxt_vec *a)
{
	const unsigned char *q = *p, *qend = end;
	if (wt == 2) {
		uint64_t n;
		if (oxt_varint(&q, end, &n) || n > (uint64_t)(end - q))
			return -1;
		qend = q + n;
	} else if ((kind == 'v' && wt != 0) || (kind == '4' && wt != 5) || (kind == '8' && wt != 1))
		return -1;
	while (wt != 2 || q < qend) { /* packed: possibly empty */
		uint64_t x;
		if (kind == 'v') {
			if (oxt_varint(&q, qend, &x))
				return -1;
		} else {
			int w = kind == '4' ? 4 : 8;
			if (qend - q < w)
				return -1;
			x = oxt_le(q, w);
			q += w;
		}
		if (oxt_push(a, &x))
			return -1;
		if (wt != 2)
			break;
	}
	*p = q;
	return 0;
}

static int oxt_pb_skip(int wt, const unsigned char **p, const unsigned char *end)
{
	uint64_t n;
	switch (wt) {
	case 0: return oxt_varint(p, end, &n);
	case 1: n = 8; break;
	case 5: n = 4; break;
	case 2:
		if (oxt_varint(p, end, &n))
			return -1;
		break;
	default: return -1; /* groups: not in TensorProto */
	}
	if (n > (uint64_t)(end - *p))
		return -1;
	*p += n;
	return 0;
}

static int oxt_read_pb(const unsigned char *b, size_t len, oxt_tensor *t, char *err, size_t nerr)
{
	/* repeated fields by number: 1 dims, 4 float_data, 5 int32_data,
	 * 7 int64_data, 10 double_data, 11 uint64_data */
	oxt_vec dims = { 0, 0, 0, 8 }, f32 = { 0, 0, 0, 8 }, i32 = { 0, 0, 0, 8 },
		i64 = { 0, 0, 0, 8 }, f64 = { 0, 0, 0, 8 }, u64 = { 0, 0, 0, 8 };
	const unsigned char *p = b, *end = b + len, *raw = NULL;
	uint64_t rawlen = 0, dtype = 0, location = 0, slen = 0;
	oxt_vec strs = { 0, 0, 0, 8 };
	int rc = -1, field3 = 0;
	while (p < end) {
		uint64_t key;
		if (oxt_varint(&p, end, &key)) {
			oxt_fail(err, nerr, "malformed protobuf at byte %zu", (size_t)(p - b));
			goto out;
		}
		int field = (int)(key >> 3), wt = (int)(key & 7), bad = 0;
		field3 |= field == 3;
		switch (field) {
		case 1: bad = oxt_pb_values(wt, &p, end, 'v', &dims); break;
		case 2: bad = wt != 0 || oxt_varint(&p, end, &dtype); break;
		case 4: bad = oxt_pb_values(wt, &p, end, '4', &f32); break;
		case 5: bad = oxt_pb_values(wt, &p, end, 'v', &i32); break;
		case 7: bad = oxt_pb_values(wt, &p, end, 'v', &i64); break;
		case 9:
			bad = wt != 2 || oxt_varint(&p, end, &rawlen) || rawlen > (uint64_t)(end - p);
			if (!bad) {
				raw = p;
				p += rawlen;
			}
			break;
		case 6: /* string_data: bytes; kept as (offset, length) pairs */
			bad = wt != 2 || oxt_varint(&p, end, &slen) || slen > (uint64_t)(end - p);
			if (!bad) {
				uint64_t pair[2] = { (uint64_t)(p - b), slen };
				bad = oxt_push(&strs, &pair[0]) || oxt_push(&strs, &pair[1]);
				p += slen;
			}
			break;
		case 10: bad = oxt_pb_values(wt, &p, end, '8', &f64); break;
		case 11: bad = oxt_pb_values(wt, &p, end, 'v', &u64); break;
		case 14: bad = wt != 0 || oxt_varint(&p, end, &location); break;
		default: bad = oxt_pb_skip(wt, &p, end); break;
		}
		if (bad) {
			oxt_fail(err, nerr, "malformed protobuf: field %d (wire type %d) at byte %zu",
				 field, wt, (size_t)(p - b));
			goto out;
		}
	}
	/* SequenceProto / OptionalProto carry their tensors in field 3 and
	 * more; as a TensorProto that reads as a segment and no data */
	if (field3 && !raw && !f32.n && !i32.n && !i64.n && !f64.n && !u64.n && !strs.n) {
		oxt_fail(err, nerr, "not a TensorProto (a sequence or optional?); only tensors are supported");
		goto out;
	}
	if (location == 1) {
		oxt_fail(err, nerr, "tensor data is stored externally; not supported");
		goto out;
	}
	t->dtype = (int)dtype;
	size_t size = oxt_dtsize(t->dtype);
	if (size == 0) {
		oxt_fail(err, nerr, "unsupported TensorProto data_type %llu%s", (unsigned long long)dtype,
			 dtype == 0 ? " (not a TensorProto?)" : "");
		goto out;
	}
	if (dims.n > OXT_MAXRANK) {
		oxt_fail(err, nerr, "rank %zu is more than %d", dims.n, OXT_MAXRANK);
		goto out;
	}
	t->rank = (int)dims.n;
	for (size_t i = 0; i < dims.n; i++) {
		uint64_t d;
		memcpy(&d, dims.v + 8 * i, 8);
		t->shape[i] = (int64_t)d;
	}
	if (oxt_set_numel(t, err, nerr))
		goto out;
	if (t->dtype == OXT_STRING) {
		if (strs.n / 2 != t->numel) {
			oxt_fail(err, nerr, "string_data has %zu strings for %zu elements", strs.n / 2, t->numel);
			goto out;
		}
		char **v = calloc(t->numel + 1, sizeof *v);
		t->data = v;
		if (!v) {
			oxt_fail(err, nerr, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < t->numel; i++) {
			uint64_t o, n;
			memcpy(&o, strs.v + 16 * i, 8);
			memcpy(&n, strs.v + 16 * i + 8, 8);
			if (!(v[i] = malloc(n + 1))) {
				oxt_fail(err, nerr, "out of memory");
				goto out;
			}
			memcpy(v[i], b + o, n);
			v[i][n] = 0;
			if (memchr(v[i], 0, n)) {
				oxt_fail(err, nerr, "string %zu holds a NUL byte, which C strings cannot", i);
				goto out;
			}
		}
		rc = 0;
		goto out;
	}
	/* typed fields: which one carries which dtype (onnx.proto) */
	oxt_vec *src;
	const char *fname;
	switch (t->dtype) {
	case OXT_F32: src = &f32; fname = "float_data"; break;
	case OXT_F64: src = &f64; fname = "double_data"; break;
	case OXT_I64: src = &i64; fname = "int64_data"; break;
	case OXT_U32: case OXT_U64: src = &u64; fname = "uint64_data"; break;
	default: src = &i32; fname = "int32_data"; break;
	}
	/* sub-byte kinds: raw_data, or int32_data with one packed byte per
	 * value, hold (numel * bits + 7) / 8 bytes */
	int bits = oxt_subbyte_bits(t->dtype);
	if (bits) {
		size_t nb = (t->numel * (size_t)bits + 7) / 8;
		if (raw ? rawlen != nb : src->n != nb) {
			oxt_fail(err, nerr, "%s has %llu %s, %s[%zu] packs into %zu", raw ? "raw_data" : fname,
				 raw ? (unsigned long long)rawlen : (unsigned long long)src->n,
				 raw ? "bytes" : "values", oxt_dtname(t->dtype), t->numel, nb);
			goto out;
		}
		t->data = malloc(t->numel + 1);
		if (!t->data) {
			oxt_fail(err, nerr, "out of memory");
			goto out;
		}
		unsigned per = 8 / (unsigned)bits, mask = (1u << bits) - 1;
		int is_signed = t->dtype == OXT_I4 || t->dtype == OXT_I2;
		unsigned char *d = t->data;
		for (size_t i = 0; i < t->numel; i++) {
			unsigned byte;
			if (raw)
				byte = raw[i / per];
			else {
				uint64_t x;
				memcpy(&x, src->v + 8 * (i / per), 8);
				byte = (unsigned)(x & 0xff);
			}
			unsigned v = byte >> (i % per * (unsigned)bits) & mask;
			if (is_signed && (v >> (bits - 1)))
				v |= ~mask & 0xffu; /* sign-extend into the byte */
			d[i] = (unsigned char)v;
		}
		rc = 0;
		goto out;
	}
	/* counts first: garbage dims must not turn into a huge malloc */
	if (raw && rawlen != t->numel * size) {
		oxt_fail(err, nerr, "raw_data has %llu bytes, %s needs %zu",
			 (unsigned long long)rawlen, oxt_dtname(t->dtype), t->numel * size);
		goto out;
	}
	if (!raw && src->n != t->numel) {
		oxt_fail(err, nerr, "%s has %zu values for %zu elements of %s", fname, src->n,
			 t->numel, oxt_dtname(t->dtype));
		goto out;
	}
	t->data = malloc(t->numel * size + 1); /* +1: never malloc(0) */
	if (!t->data) {
		oxt_fail(err, nerr, "out of memory");
		goto out;
	}
	if (raw) {
		memcpy(t->data, raw, rawlen);
		oxt_to_host(t->data, t->numel, size);
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < t->numel; i++) {
		uint64_t x;
		memcpy(&x, src->v + 8 * i, 8);
		unsigned char *d = (unsigned char *)t->data + i * size;
		/* narrow to the storage size; f32/f64 bits came as fixed32/64 */
		if (size == 1) { uint8_t v = (uint8_t)x; memcpy(d, &v, 1); }
		else if (size == 2) { uint16_t v = (uint16_t)x; memcpy(d, &v, 2); }
		else if (size == 4) { uint32_t v = (uint32_t)x; memcpy(d, &v, 4); }
		else memcpy(d, &x, 8);
	}
	rc = 0;
out:
	free(dims.v); free(f32.v); free(i32.v); free(i64.v); free(f64.v); free(u64.v); free(strs.v);
	if (rc)
		oxt_free(t);
	return rc;
}

/* Read a .npy (by its magic) or else a TensorProto .pb. On error returns -1
 * with a message in err (without the file name). */
static int oxt_read(const char *path, oxt_tensor *t, char *err, size_t nerr)
{
	memset(t, 0, sizeof *t);
	size_t len;
	unsigned char *b = oxt_slurp(path, &len, err, nerr);
	if (!b)
		return -1;
	int rc;
	if (len >= 6 && memcmp(b, "\x93NUMPY", 6) == 0)
		rc = oxt_read_npy(b, len, t, err, nerr);
	else
		rc = oxt_read_pb(b, len, t, err, nerr);
	free(b);
	if (rc)
		oxt_free(t);
	return rc;
}

/* ---- sequences and optionals (onnx-data.proto) ----
 * A graph input or output that is a sequence or an optional is several
 * tensors (or none): kind 0 a TensorProto (or .npy), 1 a SequenceProto
 * (tensor_values = 3), 2 an OptionalProto holding a tensor (tensor_value = 3)
 * or nothing, 3 an OptionalProto holding a SequenceProto (sequence_value =
 * 5) or nothing. oxt_read_parts reads them into *parts (malloc'd). */
enum { OXT_PORT_TENSOR, OXT_PORT_SEQUENCE, OXT_PORT_OPTIONAL, OXT_PORT_OPTIONAL_SEQUENCE };

static int oxt_seq_parts(const unsigned char *b, size_t len, oxt_tensor **parts, int *nparts, char *err,
			 size_t nerr)
{
	const unsigned char *p = b, *end = b + len;
	while (p < end) {
		uint64_t key, n;
		if (oxt_varint(&p, end, &key))
			return oxt_fail(err, nerr, "malformed SequenceProto");
		int field = (int)(key >> 3), wt = (int)(key & 7);
		if (field != 3 || wt != 2) {
			if (field == 5 || field == 7)
				return oxt_fail(err, nerr, "nested sequences and optionals are not supported");
			if (oxt_pb_skip(wt, &p, end))
				return oxt_fail(err, nerr, "malformed SequenceProto");
			continue;
		}
		if (oxt_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return oxt_fail(err, nerr, "malformed SequenceProto");
		oxt_tensor *q = realloc(*parts, (size_t)(*nparts + 1) * sizeof *q);
		if (!q)
			return oxt_fail(err, nerr, "out of memory");
		*parts = q;
		memset(&q[*nparts], 0, sizeof *q);
		if (oxt_read_pb(p, (size_t)n, &q[*nparts], err, nerr))
			return -1;
		(*nparts)++;
		p += n;
	}
	return 0;
}

static int oxt_read_parts(const char *path, int kind, oxt_tensor **parts, int *nparts, char *err, size_t nerr)
{
	*parts = NULL;
	*nparts = 0;
	if (kind == OXT_PORT_TENSOR) {
		*parts = calloc(1, sizeof **parts);
		if (!*parts)
			return oxt_fail(err, nerr, "out of memory");
		if (oxt_read(path, *parts, err, nerr))
			return -1;
		*nparts = 1;
		return 0;
	}
	size_t len;
	unsigned char *b = oxt_slurp(path, &len, err, nerr);
	if (!b)
		return -1;
	int rc = 0;
	if (kind == OXT_PORT_SEQUENCE) {
		rc = oxt_seq_parts(b, len, parts, nparts, err, nerr);
	} else {
		const unsigned char *p = b, *end = b + len;
		while (p < end && !rc) {
			uint64_t key, n;
			if (oxt_varint(&p, end, &key)) {
				rc = oxt_fail(err, nerr, "malformed OptionalProto");
				break;
			}
			int field = (int)(key >> 3), wt = (int)(key & 7);
			if ((field != 3 && field != 5) || wt != 2) {
				if (oxt_pb_skip(wt, &p, end))
					rc = oxt_fail(err, nerr, "malformed OptionalProto");
				continue;
			}
			if (oxt_varint(&p, end, &n) || n > (uint64_t)(end - p)) {
				rc = oxt_fail(err, nerr, "malformed OptionalProto");
				break;
			}
			if ((field == 5) != (kind == OXT_PORT_OPTIONAL_SEQUENCE)) {
				rc = oxt_fail(err, nerr, "the optional holds a %s, a %s was expected",
					      field == 5 ? "sequence" : "tensor", field == 5 ? "tensor" : "sequence");
			} else if (field == 5) {
				rc = oxt_seq_parts(p, (size_t)n, parts, nparts, err, nerr);
			} else if (!(*parts = calloc(1, sizeof **parts))) {
				rc = oxt_fail(err, nerr, "out of memory");
			} else {
				*nparts = 1;
				rc = oxt_read_pb(p, (size_t)n, *parts, err, nerr);
			}
			p += n;
		}
	}
	free(b);
	return rc;
}

static void oxt_free_parts(oxt_tensor *parts, int n)
{
	for (int i = 0; i < n; i++)
		oxt_free(&parts[i]);
	free(parts);
}

#ifndef OX_NO_MAIN
/* ---- the test program ---- */
#include "HEADER_NAME"
#if defined(_WIN32)
#include <direct.h>
#define oxt_mkdir(p) _mkdir(p)
#else
#include <sys/stat.h>
#define oxt_mkdir(p) mkdir(p, 0777)
#endif

/* Through functions, so a net with no inputs needs no PFX_inputs symbol. */
/* what a run's return code means (docs/api.md) */
static const char *oxt_run_error(int rc)
{
	switch (rc) {
	case PFXU_ERR_INDEX:
		return "PFXU_ERR_INDEX: an index or count in the input data is out of range";
	case PFXU_ERR_CAPACITY:
		return "PFXU_ERR_CAPACITY: a string result is longer than --string-capacity";
	case PFXU_ERR_UNSUPPORTED:
		return "PFXU_ERR_UNSUPPORTED: the data asks for what the program does not do (a Dropout in "
		       "training mode with a ratio other than 0)";
	case PFXU_ERR_SHAPE:
		return "PFXU_ERR_SHAPE: an input shape the program was not compiled for, or a shape read from "
		       "the data that is invalid or past the bound the program was planned for (onnxcc --max)";
#ifdef PFXU_ERR_NO_WEIGHTS
	case PFXU_ERR_NO_WEIGHTS:
		return "PFXU_ERR_NO_WEIGHTS: no weights";
#endif
#ifdef PFXU_CUDA
	case PFXU_ERR_CUDA:
		return PFX_cuda_error();
#endif
	}
	return "unknown";
}

static const PFX_tensor_desc *oxt_in_desc(int k)
{
#if PFXU_NUM_INPUTS > 0
	return &PFX_inputs[k];
#else
	(void)k;
	return NULL;
#endif
}

static const PFX_tensor_desc *oxt_out_desc(int k)
{
#if PFXU_NUM_OUTPUTS > 0
	return &PFX_outputs[k];
#else
	(void)k;
	return NULL;
#endif
}

static int oxt_write_npy(const char *path, const PFX_tensor_desc *d, const void *data)
{
	int i = oxt_dtindex(d->dtype);
	if (i < 0) {
		fprintf(stderr, "%s: cannot write dtype %d\n", path, d->dtype);
		return -1;
	}
	/* strings: fixed width '|Sw', w the longest (at least 1), NUL padded */
	const char *const *strs = d->dtype == OXT_STRING ? (const char *const *)data : NULL;
	size_t width = 1;
	for (size_t j = 0; strs && j < d->numel; j++) {
		if (!strs[j]) {
			fprintf(stderr, "%s: string %zu was not written\n", path, j);
			return -1;
		}
		width = strlen(strs[j]) > width ? strlen(strs[j]) : width;
	}
	char hdr[1024], descr[32];
	if (strs)
		snprintf(descr, sizeof descr, "|S%zu", width);
	else
		snprintf(descr, sizeof descr, "%s", oxt_dtypes[i].npy);
	size_t k = (size_t)snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (",
				    descr);
	for (int r = 0; r < d->rank && k < sizeof hdr - 64; r++)
		k += (size_t)snprintf(hdr + k, sizeof hdr - k, "%s%lld", r ? ", " : "", (long long)d->shape[r]);
	k += (size_t)snprintf(hdr + k, sizeof hdr - k, "%s), }", d->rank == 1 ? "," : "");
	/* numpy pads the header with spaces to a multiple of 64, then '\n' */
	size_t total = (10 + k + 1 + 63) / 64 * 64;
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
	size_t hlen = total - 10;
	pre[8] = (unsigned char)(hlen & 0xff);
	pre[9] = (unsigned char)(hlen >> 8);
	while (k < hlen - 1)
		hdr[k++] = ' ';
	hdr[k++] = '\n';

	size_t size = strs ? width : oxt_dtypes[i].size, bytes = d->numel * size;
	unsigned char *buf = calloc(bytes ? bytes : 1, 1);
	FILE *f = buf ? fopen(path, "wb") : NULL;
	if (!f) {
		fprintf(stderr, "%s: cannot write: %s\n", path, buf ? strerror(errno) : "out of memory");
		free(buf);
		return -1;
	}
	if (strs) {
		for (size_t j = 0; j < d->numel; j++)
			memcpy(buf + j * width, strs[j], strlen(strs[j]));
	} else {
		memcpy(buf, data, bytes);
		oxt_to_host(buf, d->numel, size); /* the swap is its own inverse */
	}
	int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, k, f) == k &&
		 fwrite(buf, 1, bytes, f) == bytes;
	ok = fclose(f) == 0 && ok;
	free(buf);
	if (!ok)
		fprintf(stderr, "%s: write error\n", path);
	return ok ? 0 : -1;
}

/* mkdir -p */
/* Output k as .npy, with the shape this run reported (the tensor sits at
 * the buffer's start). */
static int oxt_write_out(const char *path, int k, const void *data, const int64_t *shape)
{
	const PFX_tensor_desc *d = oxt_out_desc(k);
	PFX_tensor_desc e = *d;
	size_t numel = 1;
	for (int r = 0; r < d->rank; r++)
		numel *= (size_t)shape[r];
	e.shape = shape;
	e.bytes = d->numel ? d->bytes / d->numel * numel : 0;
	e.numel = numel;
	return oxt_write_npy(path, &e, data);
}

static int oxt_mkdirs(const char *path)
{
	char *p = malloc(strlen(path) + 1);
	if (!p)
		return -1;
	strcpy(p, path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			oxt_mkdir(p); /* errors show at the last component */
			*s = '/';
		}
	int rc = oxt_mkdir(p) && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

static double oxt_now_ms(void)
{
	struct timespec ts;
#if defined(CLOCK_MONOTONIC)
	clock_gettime(CLOCK_MONOTONIC, &ts);
#else
	timespec_get(&ts, TIME_UTC);
#endif
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int oxt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}


/* ---- --threads N: the network's parallel-for hook over POSIX threads ---- */
#include "PFX_pool.h"

#ifdef OX_SHARED
/* ---- the shared library's ABI (onnxcc --shared; docs/python.md) ----
 * Built with -DOX_SHARED this file is no program but the stable C ABI of
 * the library OUT.so: the same names in every library onnxcc makes, the
 * only symbols it exports (the rest is built hidden), so that a loader
 * (python/onnxcc by ctypes, or any FFI) needs no header. Version 1:
 *   int onnxcc_abi_version(void)      1
 *   const char *onnxcc_target(void)   "c" or "cuda"
 *   const char *onnxcc_cpu(void)      onnxcc --cpu ("" on the CUDA target)
 *   int onnxcc_count(int io)          tensors: io 0 the inputs, 1 the outputs
 *   int onnxcc_tensor(io, k, &name, &dtype, &rank, &min_shape, &max_shape,
 *                     &dynamic_axis)  tensor k's descriptor (docs/api.md):
 *                                     0, or -1 when there is none
 *   int onnxcc_ports(int io)          ports (a sequence or an optional is
 *   int onnxcc_port(io, k, &name, &kind, &first, &count)   one port)
 *   int onnxcc_set_threads(int n)     the C target's loops on n threads
 *                                     (this library's pool); 0, or -1
 *   int onnxcc_run(in, in_shapes, out, out_shapes)   PREFIX_run_shaped on
 *                                     the library's own arena: one run at a
 *                                     time; 0 or a PREFIX_ERR_* code
 *   const char *onnxcc_error(int rc)  what a code means
 *   int onnxcc_init_weights(blob, size)   --weights external: PREFIX_init
 *                                     (the blob must stay valid); 0 or its
 *                                     code; 0 when the weights are inside */
#if defined(_WIN32)
#define OXS_API __declspec(dllexport)
#else
#define OXS_API __attribute__((visibility("default")))
#endif
OXS_API int onnxcc_abi_version(void)
{
	return 1;
}

OXS_API const char *onnxcc_target(void)
{
#ifdef PFXU_CUDA
	return "cuda";
#else
	return "c";
#endif
}

OXS_API const char *onnxcc_cpu(void)
{
#ifdef PFXU_CPU
	return PFXU_CPU;
#else
	return "";
#endif
}

OXS_API int onnxcc_count(int io)
{
	return io ? PFXU_NUM_OUTPUTS : PFXU_NUM_INPUTS;
}

OXS_API int onnxcc_tensor(int io, int k, const char **name, int *dtype, int *rank, const int64_t **min_shape,
			  const int64_t **max_shape, int *dynamic_axis)
{
	if (k < 0 || k >= onnxcc_count(io))
		return -1;
	const PFX_tensor_desc *d = io ? oxt_out_desc(k) : oxt_in_desc(k);
	*name = d->name, *dtype = d->dtype, *rank = d->rank;
	*min_shape = d->min_shape, *max_shape = d->shape, *dynamic_axis = d->dynamic_axis;
	return 0;
}

OXS_API int onnxcc_ports(int io)
{
	return io ? PFXU_NUM_OUTPUT_PORTS : PFXU_NUM_INPUT_PORTS;
}

OXS_API int onnxcc_port(int io, int k, const char **name, int *kind, int *first, int *count)
{
	if (k < 0 || k >= onnxcc_ports(io))
		return -1;
	const PFX_port_desc *p = io ? &PFX_output_ports[k] : &PFX_input_ports[k];
	*name = p->name, *kind = p->kind, *first = p->first, *count = p->count;
	return 0;
}

OXS_API int onnxcc_set_threads(int n)
{
	return PFX_set_threads(n);
}

OXS_API int onnxcc_run(const void *const *in, const int64_t *const *in_shapes, void *const *out,
		       int64_t *const *out_shapes)
{
	return PFX_run_shaped(NULL, in, in_shapes, out, out_shapes);
}

OXS_API const char *onnxcc_error(int rc)
{
	return oxt_run_error(rc);
}

OXS_API int onnxcc_init_weights(const void *blob, size_t size)
{
#ifdef PFXU_WEIGHTS_EXTERNAL
	return PFX_init(blob, size);
#else
	(void)blob, (void)size;
	return 0;
#endif
}
#else /* the test program */

/* ---- --profile: time per generated function, summed over the runs ---- */
static double *oxt_prof_ms;
#ifndef PFXU_CUDA /* (the CUDA target times them by events: PFX_profile) */
static double oxt_now_ms(void);
static double oxt_prof_t0;

static void oxt_profile(void *user, int k, int end)
{
	(void)user;
	if (!end)
		oxt_prof_t0 = oxt_now_ms();
	else
		oxt_prof_ms[k] += oxt_now_ms() - oxt_prof_t0;
}
#endif

static int oxt_cmp_prof(const void *a, const void *b)
{
	double x = oxt_prof_ms[*(const int *)a], y = oxt_prof_ms[*(const int *)b];
	return (x < y) - (x > y);
}

/* one line per function, slowest first: ms per run, share, GFLOP/s */
static void oxt_profile_print(long runs)
{
	int order[PFXU_NUM_FUNCS + 1];
	double total = 0;
	int64_t flops = 0;
	for (int k = 0; k < PFXU_NUM_FUNCS; k++) {
		order[k] = k;
		total += oxt_prof_ms[k];
		flops += PFX_funcs[k].flops;
	}
	qsort(order, PFXU_NUM_FUNCS, sizeof *order, oxt_cmp_prof);
	printf("profile: %ld runs, %.4f ms per run in %d functions, %.1f GFLOP/s overall\n", runs,
	       total / (double)runs, PFXU_NUM_FUNCS, total > 0 ? (double)flops * (double)runs / total * 1e-6 : 0.0);
	printf("%10s %6s %8s  %-28s %s\n", "ms/run", "share", "GFLOP/s", "function", "ONNX node");
	for (int i = 0; i < PFXU_NUM_FUNCS; i++) {
		int k = order[i];
		double ms = oxt_prof_ms[k] / (double)runs;
		printf("%10.4f %5.1f%% %8.1f  %-28s %s\n", ms, total > 0 ? 100 * oxt_prof_ms[k] / total : 0.0,
		       ms > 0 && PFX_funcs[k].flops ? (double)PFX_funcs[k].flops / ms * 1e-6 : 0.0, PFX_funcs[k].name,
		       PFX_funcs[k].node);
	}
}

static void oxt_usage(const char *argv0)
{
	char t[256];
	fprintf(stderr, "usage: %s [--bench N] [--threads N] [--profile] INPUT... -o OUTDIR\n"
		"  --bench N    time N runs after a warm-up (median and min)\n"
		"  --threads N  split the network's loops over N threads (default 1)\n"
		"  --profile    time each generated function over the runs (--bench N, or 10)\n"
		"  one .npy or TensorProto .pb per input (a SequenceProto for a sequence,\n"
		"  an OptionalProto for an optional), in order:\n", argv0);
	for (int pk = 0; pk < PFXU_NUM_INPUT_PORTS; pk++) {
		const PFX_port_desc *port = &PFX_input_ports[pk];
		for (int k = port->first; k < port->first + port->count; k++) {
			const PFX_tensor_desc *d = oxt_in_desc(k);
			oxt_typestr(t, sizeof t, d->dtype, d->rank, d->shape);
			fprintf(stderr, "    %d: %s %s\n", pk, d->name, t);
		}
	}
	fprintf(stderr, "  writes OUTDIR/output_K.npy for each of the %d outputs (a sequence or\n"
		"  optional: output_K.list and output_K_J.npy)\n"
		"  (bf16 outputs are written as '<u2', their bit patterns)\n", PFXU_NUM_OUTPUT_PORTS);
}

int main(int argc, char **argv)
{
	const char *outdir = NULL;
	long bench = 0, threads = 1;
	int profile = 0;
	char **files = calloc((size_t)argc, sizeof *files);
	int nfiles = 0, status = 1;
	if (!files)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			outdir = argv[++i];
		else if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc) {
			char *e;
			bench = strtol(argv[++i], &e, 10);
			if (*e || bench < 1) {
				fprintf(stderr, "%s: --bench needs a positive count, got '%s'\n", argv[0], argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			char *e;
			threads = strtol(argv[++i], &e, 10);
			if (*e || threads < 1 || threads > 1024) {
				fprintf(stderr, "%s: --threads needs 1 to 1024, got '%s'\n", argv[0], argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--profile") == 0) {
			profile = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			oxt_usage(argv[0]);
			return 2;
		} else
			files[nfiles++] = argv[i];
	}
	if (profile && !bench)
		bench = 10;
	if (nfiles != PFXU_NUM_INPUT_PORTS || (!outdir && !bench)) {
		if (nfiles != PFXU_NUM_INPUT_PORTS)
			fprintf(stderr, "%s: expected %d input files, got %d\n", argv[0], PFXU_NUM_INPUT_PORTS,
				nfiles);
		oxt_usage(argv[0]);
		return 2;
	}

	/* +1: no zero-length arrays for nets without inputs or outputs */
	oxt_tensor *in = calloc((size_t)PFXU_NUM_INPUTS + 1, sizeof *in);
	const void **inp = calloc((size_t)PFXU_NUM_INPUTS + 1, sizeof *inp);
	void **outp = calloc((size_t)PFXU_NUM_OUTPUTS + 1, sizeof *outp);
	const int64_t **ishape = calloc((size_t)PFXU_NUM_INPUTS + 1, sizeof *ishape);
	int64_t **oshape = calloc((size_t)PFXU_NUM_OUTPUTS + 1, sizeof *oshape);
	int64_t *oshapes = calloc((size_t)PFXU_NUM_OUTPUTS * OXT_MAXRANK + 1, sizeof *oshapes);
	double *times = calloc((size_t)bench + 1, sizeof *times);
	if (!in || !inp || !outp || !ishape || !oshape || !oshapes || !times) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	for (int pk = 0; pk < PFXU_NUM_INPUT_PORTS; pk++) {
		const PFX_port_desc *port = &PFX_input_ports[pk];
		char err[512], want[256], got[256];
		oxt_tensor *parts;
		int nparts;
		if (oxt_read_parts(files[pk], port->kind, &parts, &nparts, err, sizeof err)) {
			fprintf(stderr, "%s: input %d '%s': %s\n", files[pk], pk, port->name, err);
			oxt_free_parts(parts, nparts);
			goto out;
		}
		if (nparts != port->count) {
			fprintf(stderr, "%s: input %d '%s': holds %d tensors, the network was compiled for %d "
				"(onnxcc --like)\n", files[pk], pk, port->name, nparts, port->count);
			oxt_free_parts(parts, nparts);
			goto out;
		}
		/* the parts move into in[], which frees them */
		for (int j = 0; j < nparts; j++)
			in[port->first + j] = parts[j];
		free(parts);
		for (int k = port->first; k < port->first + nparts; k++) {
			const PFX_tensor_desc *d = oxt_in_desc(k);
			oxt_tensor *t = &in[k];
			/* each dim within the compiled range (the program checks the
			 * rest: the dims that must agree) */
			int same = oxt_bits_as(t, d->dtype) && t->rank == d->rank;
			for (int r = 0; same && r < d->rank; r++)
				same = t->shape[r] >= d->min_shape[r] && t->shape[r] <= d->shape[r];
			if (!same) {
				oxt_typestr(want, sizeof want, d->dtype, d->rank, d->shape);
				oxt_typestr(got, sizeof got, t->dtype, t->rank, t->shape);
				for (int r = 0; r < d->rank && PFXU_DYNAMIC; r++)
					if (d->min_shape[r] != d->shape[r]) {
						oxt_typestr(want, sizeof want, d->dtype, d->rank, d->min_shape);
						size_t w = strlen(want);
						snprintf(want + w, sizeof want - w, " to ");
						oxt_typestr(want + w + 4, sizeof want - w - 4, d->dtype, d->rank, d->shape);
						break;
					}
				fprintf(stderr, "%s: input %d '%s': expected %s, found %s\n", files[pk], pk, d->name,
					want, got);
				goto out;
			}
			inp[k] = t->data;
			ishape[k] = t->shape;
		}
	}
	for (int k = 0; k < PFXU_NUM_OUTPUTS; k++) {
		const PFX_tensor_desc *d = oxt_out_desc(k);
		oshape[k] = oshapes + (size_t)k * OXT_MAXRANK;
		outp[k] = malloc(d->bytes ? d->bytes : 1);
		if (!outp[k]) {
			fprintf(stderr, "%s: out of memory\n", argv[0]);
			goto out;
		}
		/* poison: an element the net forgets to write reads as NaN / -1
		 * (a string as NULL, which the writer reports) */
		memset(outp[k], d->dtype == OXT_STRING ? 0 : 0xff, d->bytes);
	}

	if (PFX_set_threads((int)threads)) {
		fprintf(stderr, "%s: cannot start %ld threads\n", argv[0], threads);
		goto out;
	}
	int rc = PFX_run_shaped(NULL, inp, ishape, outp, oshape);
	if (rc == PFXU_ERR_SHAPE && PFXU_DYNAMIC) {
		fprintf(stderr, "%s: the input shapes are not ones the program was compiled for:", argv[0]);
		for (int k = 0; k < PFXU_NUM_INPUTS; k++) {
			char t[256];
			oxt_typestr(t, sizeof t, in[k].dtype, in[k].rank, in[k].shape);
			fprintf(stderr, " %s %s", oxt_in_desc(k)->name, t);
		}
		fprintf(stderr, " (or a shape read from the data is)\n");
		goto out;
	}
	if (rc) {
		fprintf(stderr, "%s: run failed with code %d (%s)\n", argv[0], rc, oxt_run_error(rc));
		goto out;
	}
	if (bench) {
#ifdef PFXU_CUDA /* on the device, by CUDA events, inputs uploaded once */
		rc = PFX_bench(inp, ishape, bench, times);
#else
		for (long r = 0; r < bench; r++) {
			double t0 = oxt_now_ms();
			rc |= PFX_run_shaped(NULL, inp, ishape, outp, oshape);
			times[r] = oxt_now_ms() - t0;
		}
#endif
		if (rc) {
			fprintf(stderr, "%s: run failed during --bench\n", argv[0]);
			goto out;
		}
		qsort(times, (size_t)bench, sizeof *times, oxt_cmp_double);
		double med = bench % 2 ? times[bench / 2] : (times[bench / 2 - 1] + times[bench / 2]) / 2;
		printf("bench: runs=%ld median_ms=%.4f min_ms=%.4f\n", bench, med, times[0]);
		if (profile) {
			/* separate runs: the profiler's clock reads are not in the timings above */
			oxt_prof_ms = calloc(PFXU_NUM_FUNCS + 1, sizeof *oxt_prof_ms);
			if (!oxt_prof_ms)
				goto out;
#ifdef PFXU_CUDA /* device time between events around each function's launches, no graph */
			rc = PFX_profile(inp, ishape, bench, oxt_prof_ms);
#else
			PFX_set_profiler(oxt_profile, NULL);
			for (long r = 0; r < bench; r++)
				rc |= PFX_run_shaped(NULL, inp, ishape, outp, oshape);
			PFX_set_profiler(NULL, NULL);
#endif
			if (rc) {
				fprintf(stderr, "%s: run failed during --profile\n", argv[0]);
				free(oxt_prof_ms);
				goto out;
			}
			oxt_profile_print(bench);
			free(oxt_prof_ms);
		}
	}
	if (outdir) {
		if (oxt_mkdirs(outdir)) {
			fprintf(stderr, "%s: cannot create directory: %s\n", outdir, strerror(errno));
			goto out;
		}
		for (int pk = 0; pk < PFXU_NUM_OUTPUT_PORTS; pk++) {
			const PFX_port_desc *port = &PFX_output_ports[pk];
			size_t n = strlen(outdir) + 64;
			char *path = malloc(n);
			if (!path)
				goto out;
			int bad = 0;
			if (port->kind == OXT_PORT_TENSOR) {
				snprintf(path, n, "%s/output_%d.npy", outdir, pk);
				bad = oxt_write_out(path, port->first, outp[port->first], oshape[port->first]);
			} else {
				/* output_K.list names the structure; its tensors are output_K_J.npy */
				static const char *const kinds[] = {"tensor", "sequence", "optional", "optional-sequence"};
				snprintf(path, n, "%s/output_%d.list", outdir, pk);
				FILE *f = fopen(path, "w");
				bad = !f || fprintf(f, "%s %d\n", kinds[port->kind], port->count) < 0;
				if (f && fclose(f))
					bad = 1;
				if (bad)
					fprintf(stderr, "%s: cannot write\n", path);
				for (int j = 0; j < port->count && !bad; j++) {
					snprintf(path, n, "%s/output_%d_%d.npy", outdir, pk, j);
					bad = oxt_write_out(path, port->first + j, outp[port->first + j],
							    oshape[port->first + j]);
				}
			}
			free(path);
			if (bad)
				goto out;
		}
	}
	status = 0;
out:
	for (int k = 0; k < PFXU_NUM_INPUTS; k++)
		oxt_free(&in[k]);
	for (int k = 0; k < PFXU_NUM_OUTPUTS; k++)
		free(outp[k]);
	free(in);
	free(inp);
	free(outp);
	free(ishape);
	free(oshape);
	free(oshapes);
	free(times);
	free(files);
	return status;
}
#endif /* OX_SHARED */
#endif /* OX_NO_MAIN */
