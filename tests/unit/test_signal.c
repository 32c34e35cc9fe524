/* test_signal.c: cmocka tests of the signal family's inference
 * (ir/infer_signal.c) with run-time dims and shape inputs known only when
 * the program runs (docs/dynamic.md): which output dims become data dims,
 * with what bound, and what is refused at compile time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include <stdio.h>

static ox_graph *infer_text(const char *text, int want_ok)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	if (!want_ok)
		fprintf(stderr, "(an error message is expected next)\n");
	int rc = 0;
	for (int i = 0; i < g->nnodes && !rc; i++)
		rc = ox_infer_node(g, &g->nodes[i]);
	if (want_ok && rc)
		fail_msg("inference failed (message above) for:\n%s", text);
	if (!want_ok && !rc)
		fail_msg("inference accepted:\n%s", text);
	return g;
}

/* output 0 of the graph's last node */
static const ox_value *last_out(ox_graph *g)
{
	return &g->vals[g->nodes[g->nnodes - 1].out[0]];
}

/* d is a data dim that the last node defines, at most hi (-1: unbounded,
 * the bounds pass asks the user) */
static void assert_data_dim(ox_graph *g, ox_dim d, int64_t hi)
{
	assert_true(ox_dim_defined_by(g, d, g->nodes[g->nnodes - 1].out[0]));
	assert_int_equal(ox_dim_hi(g, d), hi);
}

/* A window's size read when the program runs: a data dim, no bound. */
static void test_window_size_from_data(void **state)
{
	(void)state;
	ox_graph *g = infer_text("graph \"w\" opset 17\n"
				 "input %0:i64[] \"size\"\n"
				 "%1 = HannWindow(%0)\n", 1);
	const ox_value *y = last_out(g);
	assert_int_equal(y->shape.rank, 1);
	assert_data_dim(g, y->shape.d[0], -1);
	ox_ir_free(g);
}

/* STFT with the frame step read when the program runs: the frame count is a
 * data dim bounded by the signal's length, the bins follow from the
 * constant frame length; a frame length read then makes the bins a data
 * dim too. */
static void test_stft_step_from_data(void **state)
{
	(void)state;
	ox_graph *g = infer_text("graph \"s\" opset 17\n"
				 "range L=16..64\n"
				 "input %0:f32[1,L,1] \"signal\"\n"
				 "input %1:i64[] \"step\"\n"
				 "const %2:i64[] \"fl\" = [8]\n"
				 "%3 = STFT(%0, %1, _, %2)\n", 1);
	const ox_value *y = last_out(g);
	assert_int_equal(y->shape.rank, 4);
	assert_int_equal(y->shape.d[0], 1);
	assert_data_dim(g, y->shape.d[1], 64);
	assert_int_equal(y->shape.d[2], 5);
	assert_int_equal(y->shape.d[3], 2);
	ox_ir_free(g);

	g = infer_text("graph \"s\" opset 17\n"
		       "input %0:f32[1,32,1] \"signal\"\n"
		       "input %1:i64[] \"step\"\n"
		       "input %2:i64[] \"fl\"\n"
		       "%3 = STFT(%0, %1, _, %2)\n", 1);
	y = last_out(g);
	assert_data_dim(g, y->shape.d[1], 32);
	assert_data_dim(g, y->shape.d[2], 32);
	ox_ir_free(g);

	/* a constant frame longer than any signal the range allows */
	ox_ir_free(infer_text("graph \"s\" opset 17\n"
			      "input %0:f32[1,16,1] \"signal\"\n"
			      "const %1:i64[] \"step\" = [4]\n"
			      "const %2:i64[] \"fl\" = [32]\n"
			      "%3 = STFT(%0, %1, _, %2)\n", 0));
}

/* DFT: an axis read when the program runs makes each dim it may be a data
 * dim (one-sided: at most the larger of the axis' length and its half
 * spectrum); a two-sided transform of the axis' own length keeps the
 * shape; a dft_length read then is a data dim of no bound. */
static void test_dft_runtime_axis_and_length(void **state)
{
	(void)state;
	ox_graph *g = infer_text("graph \"d\" opset 20\n"
				 "input %0:f32[3,8,1] \"x\"\n"
				 "input %1:i64[] \"axis\"\n"
				 "%2 = DFT(%0, _, %1) {onesided=1}\n", 1);
	const ox_value *y = last_out(g);
	assert_int_equal(y->shape.rank, 3);
	assert_data_dim(g, y->shape.d[0], 3);
	assert_data_dim(g, y->shape.d[1], 8);
	assert_int_equal(y->shape.d[2], 2);
	ox_ir_free(g);

	g = infer_text("graph \"d\" opset 20\n"
		       "input %0:f32[3,8,2] \"x\"\n"
		       "input %1:i64[] \"axis\"\n"
		       "%2 = DFT(%0, _, %1)\n", 1);
	y = last_out(g);
	assert_int_equal(y->shape.d[0], 3);
	assert_int_equal(y->shape.d[1], 8);
	assert_int_equal(y->shape.d[2], 2);
	ox_ir_free(g);

	g = infer_text("graph \"d\" opset 20\n"
		       "input %0:f32[3,8,1] \"x\"\n"
		       "input %1:i64[] \"len\"\n"
		       "%2 = DFT(%0, %1) {axis=1}\n", 1);
	y = last_out(g);
	assert_int_equal(y->shape.d[0], 3);
	assert_data_dim(g, y->shape.d[1], -1);
	ox_ir_free(g);

	/* a run-time axis length: the output keeps it (two-sided), or its half
	 * spectrum as an expression (one-sided) */
	g = infer_text("graph \"d\" opset 20\n"
		       "range T=4..10\n"
		       "input %0:f32[2,T,1] \"x\"\n"
		       "%1 = DFT(%0) {axis=1, onesided=1}\n", 1);
	y = last_out(g);
	assert_int_equal(ox_dim_hi(g, y->shape.d[1]), 6);
	ox_ir_free(g);
}

/* Det and Einsum accept run-time dims that may be equal when the program
 * runs (the emitter checks them), and refuse those that cannot. */
static void test_may_equal(void **state)
{
	(void)state;
	ox_graph *g = infer_text("graph \"det\" opset 11\n"
				 "range N=2..4\n"
				 "range M=3..5\n"
				 "input %0:f32[7,N,M] \"x\"\n"
				 "%1 = Det(%0)\n", 1);
	assert_int_equal(last_out(g)->shape.rank, 1);
	assert_int_equal(last_out(g)->shape.d[0], 7);
	ox_ir_free(g);
	ox_ir_free(infer_text("graph \"det\" opset 11\n"
			      "range N=2..3\n"
			      "input %0:f32[N,5] \"x\"\n"
			      "%1 = Det(%0)\n", 0));
	ox_ir_free(infer_text("graph \"e\" opset 12\n"
			      "range N=2..3\n"
			      "input %0:f32[N,4] \"a\"\n"
			      "input %1:f32[6,4] \"b\"\n"
			      "%2 = Einsum(%0, %1) {equation=\"ij,ij->i\"}\n", 0));
	g = infer_text("graph \"e\" opset 12\n"
		       "range N=2..8\n"
		       "input %0:f32[N,4] \"a\"\n"
		       "input %1:f32[6,4] \"b\"\n"
		       "%2 = Einsum(%0, %1) {equation=\"ij,ij->i\"}\n", 1);
	assert_int_equal(last_out(g)->shape.rank, 1);
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_size_from_data),
		cmocka_unit_test(test_stft_step_from_data),
		cmocka_unit_test(test_dft_runtime_axis_and_length),
		cmocka_unit_test(test_may_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
