/* test_text.c: cmocka tests of codegen/text.c's buffers with fields (cg.h,
 * ox_buf): a kernel's text is printed with its index type ($I, $L) and its
 * element type (OX_T, OX_LD(e), OX_ST(e)) filled as each piece is printed,
 * nothing else of the text is touched (the word "long", comments, an "L"
 * after a digit), a piece printed into a buffer without fields keeps them
 * until it reaches one that has them, and ox_cg_fields_left finds any that
 * would reach the output (outside comments and literals).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../codegen/cg.h"
#include <string.h>

static void test_index_fields(void **state)
{
	(void)state;
	ox_buf n = {.ix = "int"}, w = {.ix = "long"};
	const char *text = "\tconst $I i = ($I)blockIdx.x * 64 + threadIdx.x; /* long rows */\n"
			   "\tif (i >= 60$L)\n\t\ty[i] = 5L + x[i * %d$L];\n";
	ox_buf_printf(&n, text, 3);
	ox_buf_printf(&w, text, 3);
	assert_string_equal(n.s, "\tconst int i = (int)blockIdx.x * 64 + threadIdx.x; /* long rows */\n"
				 "\tif (i >= 60)\n\t\ty[i] = 5L + x[i * 3];\n");
	assert_string_equal(w.s, "\tconst long i = (long)blockIdx.x * 64 + threadIdx.x; /* long rows */\n"
				 "\tif (i >= 60L)\n\t\ty[i] = 5L + x[i * 3L];\n");
	/* ($I as part of a longer name is not a field) */
	ox_buf_free(&n);
	ox_buf_puts(&n, "a$Ib $Ix");
	assert_string_equal(n.s, "a$Ib $Ix");
	assert_string_equal(n.ix, "int"); /* (ox_buf_free keeps the fields) */
	ox_buf_free(&n), ox_buf_free(&w);
}

static void test_type_fields(void **state)
{
	(void)state;
	ox_buf h = {.ix = "int", .dt = OX_F16}, f = {.dt = OX_F32};
	const char *text = "const OX_T *x; OX_TILE t; y[i] = OX_ST(OX_LD(x[(i)]) * 2.0f);\n";
	ox_buf_puts(&h, text);
	ox_buf_puts(&f, text);
	assert_string_equal(h.s, "const uint16_t *x; OX_TILE t; y[i] = ox_f32_to_f16(ox_f16_to_f32(x[(i)]) * 2.0f);\n");
	assert_string_equal(f.s, "const float *x; OX_TILE t; y[i] = x[(i)] * 2.0f;\n");
	ox_buf_free(&h), ox_buf_free(&f);
}

static void test_pieces(void **state)
{
	(void)state;
	/* a piece printed where there are no fields keeps them ... */
	ox_buf body = {0}, t = {.ix = "int", .dt = OX_BF16};
	ox_buf_printf(&body, "\tconst $I k = i %% %d$L;\n\ty[k] = OX_ST(v);\n", 7);
	assert_string_equal(body.s, "\tconst $I k = i % 7$L;\n\ty[k] = OX_ST(v);\n");
	assert_non_null(ox_cg_fields_left(body.s));
	/* ... until it is printed into the kernel's text */
	ox_buf_printf(&t, "{\n%s}\n", body.s);
	assert_string_equal(t.s, "{\n\tconst int k = i % 7;\n\ty[k] = ox_f32_to_bf16(v);\n}\n");
	assert_null(ox_cg_fields_left(t.s));
	ox_buf_free(&body), ox_buf_free(&t);
}

static void test_fields_left(void **state)
{
	(void)state;
	assert_null(ox_cg_fields_left("/* node $I: OX_T */ const char *s = \"$L OX_LD(\"; long a = 5L;"));
	assert_null(ox_cg_fields_left("'$' \"a\\\"$I\" MY_OX_T OX_TILE"));
	assert_non_null(ox_cg_fields_left("/* ok */ $I a;"));
	assert_non_null(ox_cg_fields_left("a = 3$L;"));
	assert_non_null(ox_cg_fields_left("(OX_T)x"));
	assert_non_null(ox_cg_fields_left("y = OX_LD(x);"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_fields),
		cmocka_unit_test(test_type_fields),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_fields_left),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
