/* test_subbyte.c: cmocka tests of the sub-byte dtypes at the file boundary.
 *
 * ONNX packs int4 / uint4 / float4e2m1 two per byte and int2 / uint2 four
 * per byte, lowest bits first, in raw_data or (one packed byte per value)
 * in int32_data. The IR holds them unpacked, one per byte, the signed kinds
 * sign-extended (ir/types.c). These tests hand-encode TensorProto bytes,
 * load them with ox_fe_load_tensor (frontend/import.c) and check the
 * unpacked elements, odd element counts included, and that a wrong packed
 * size is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../../frontend/frontend.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny TensorProto encoder: dims (1), data_type (2), int32_data (5,
 * packed varints) or raw_data (9) ---- */
typedef struct {
	unsigned char b[256];
	size_t n;
} pbuf;

static void put(pbuf *p, unsigned x)
{
	assert_true(p->n < sizeof p->b);
	p->b[p->n++] = (unsigned char)x;
}

static void varint(pbuf *p, uint64_t v)
{
	while (v >= 0x80) {
		put(p, (unsigned)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	put(p, (unsigned)v);
}

static void header(pbuf *p, int dtype, const int64_t *dims, int rank)
{
	for (int i = 0; i < rank; i++) {
		put(p, 1 << 3 | 0);
		varint(p, (uint64_t)dims[i]);
	}
	put(p, 2 << 3 | 0);
	varint(p, (uint64_t)dtype);
}

static void raw(pbuf *p, const unsigned char *bytes, size_t n)
{
	put(p, 9 << 3 | 2);
	varint(p, n);
	for (size_t i = 0; i < n; i++)
		put(p, bytes[i]);
}

static void int32s(pbuf *p, const int32_t *v, size_t n)
{
	pbuf body = {{0}, 0};
	for (size_t i = 0; i < n; i++)
		varint(&body, (uint64_t)(int64_t)v[i]);
	put(p, 5 << 3 | 2);
	varint(p, body.n);
	for (size_t i = 0; i < body.n; i++)
		put(p, body.b[i]);
}

/* write p to a temporary .pb and load it */
static ox_tensor *load(ox_graph *g, const pbuf *p)
{
	char path[] = "/tmp/ox_subbyte_XXXXXX"; /* not .npy: read as a .pb */
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p->b, 1, p->n, f), p->n);
	fclose(f);
	ox_tensor *t = ox_fe_load_tensor(g, path);
	remove(path);
	return t;
}

static void test_sizes(void **state)
{
	(void)state;
	static const int sub[] = {OX_U4, OX_I4, OX_F4E2M1, OX_U2, OX_I2};
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		assert_int_equal(ox_dtype_size(sub[i]), 1);
		assert_int_equal(ox_dtype_from_name(ox_dtype_name(sub[i])), sub[i]);
	}
	assert_true(ox_dtype_is_signed(OX_I4) && ox_dtype_is_signed(OX_I2));
	assert_false(ox_dtype_is_signed(OX_U4) || ox_dtype_is_signed(OX_U2));
}

/* int4, 5 elements (odd: the last byte's high nibble is padding), raw_data */
static void test_int4_raw_odd(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("test");
	int64_t dims[] = {5};
	/* -8 7 | -1 0 | 3 (pad) */
	static const unsigned char packed[] = {0x78, 0x0f, 0xa3};
	pbuf p = {{0}, 0};
	header(&p, OX_I4, dims, 1);
	raw(&p, packed, sizeof packed);
	ox_tensor *t = load(g, &p);
	assert_non_null(t);
	assert_int_equal(t->dtype, OX_I4);
	assert_int_equal(t->nbytes, 5);
	static const int8_t want[] = {-8, 7, -1, 0, 3};
	assert_memory_equal(t->data, want, 5);
	assert_int_equal(ox_tensor_get_i64(t, 0), -8);
	assert_int_equal(ox_tensor_get_i64(t, 2), -1);
	ox_ir_free(g);
}

/* int2, 7 elements (odd, one slot of padding) as int32_data */
static void test_int2_int32_data(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("test");
	int64_t dims[] = {7, 1};
	/* codes 1 2 3 0 | 1 2 3 (pad): 0b00111001 twice */
	static const int32_t packed[] = {0x39, 0x39};
	pbuf p = {{0}, 0};
	header(&p, OX_I2, dims, 2);
	int32s(&p, packed, 2);
	ox_tensor *t = load(g, &p);
	assert_non_null(t);
	assert_int_equal(t->dtype, OX_I2);
	assert_int_equal(t->nbytes, 7);
	static const int8_t want[] = {1, -2, -1, 0, 1, -2, -1};
	assert_memory_equal(t->data, want, 7);
	ox_ir_free(g);
}

/* uint4 and uint2 stay unsigned; float4e2m1 keeps its 4-bit codes */
static void test_unsigned_and_f4(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("test");
	int64_t dims[] = {3};
	static const int32_t u4[] = {0x0f, 0x09}; /* 15 0 | 9 */
	pbuf p = {{0}, 0};
	header(&p, OX_U4, dims, 1);
	int32s(&p, u4, 2);
	ox_tensor *t = load(g, &p);
	assert_non_null(t);
	static const uint8_t want4[] = {15, 0, 9};
	assert_memory_equal(t->data, want4, 3);

	static const unsigned char u2[] = {0xe4}; /* 0 1 2 3 -> [0,1,2] */
	pbuf q = {{0}, 0};
	header(&q, OX_U2, dims, 1);
	raw(&q, u2, 1);
	t = load(g, &q);
	assert_non_null(t);
	static const uint8_t want2[] = {0, 1, 2};
	assert_memory_equal(t->data, want2, 3);

	static const unsigned char f4[] = {0x8f, 0x01}; /* -6, -0 | 0.5 */
	pbuf r = {{0}, 0};
	header(&r, OX_F4E2M1, dims, 1);
	raw(&r, f4, 2);
	t = load(g, &r);
	assert_non_null(t);
	static const uint8_t wantf[] = {0x0f, 0x08, 0x01};
	assert_memory_equal(t->data, wantf, 3);
	assert_true(ox_tensor_get_f64(t, 0) == -6.0);
	assert_true(ox_tensor_get_f64(t, 2) == 0.5);
	ox_ir_free(g);
}

/* a packed size that does not match the dims is an error, not garbage */
static void test_bad_size(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("test");
	int64_t dims[] = {5};
	static const unsigned char packed[] = {0x78, 0x0f}; /* needs 3 bytes */
	pbuf p = {{0}, 0};
	header(&p, OX_I4, dims, 1);
	raw(&p, packed, sizeof packed);
	fprintf(stderr, "(an error message is expected next)\n");
	assert_null(load(g, &p));
	static const int32_t unpacked[] = {1, 2, 3, 4, 5}; /* one per value: wrong */
	pbuf q = {{0}, 0};
	header(&q, OX_I4, dims, 1);
	int32s(&q, unpacked, 5);
	fprintf(stderr, "(an error message is expected next)\n");
	assert_null(load(g, &q));
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_int4_raw_odd),
		cmocka_unit_test(test_int2_int32_data),
		cmocka_unit_test(test_unsigned_and_f4),
		cmocka_unit_test(test_bad_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
