/* test_infer.c: cmocka tests of shape inference (ir/infer_*.c) on graphs
 * written in the IR text form.
 *
 * Each test parses a small graph with untyped node outputs, runs
 * ox_infer_node over the nodes in order and compares the inferred types as
 * text ("f32[N,64,112,112]", dims spelled as ox_dim_str prints them), so a
 * failure shows both types. Symbolic dims are checked twice: that they stay
 * symbolic, and that they evaluate right once the symbol is bound.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include <stdlib.h>
#include <string.h>

static ox_graph *parse_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	return g;
}

/* Infer every node in order; returns 0, or -1 at the first node that fails
 * (its message is on stderr). */
static int infer_all(ox_graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (ox_infer_node(g, &g->nodes[i]))
			return -1;
	return 0;
}

static ox_graph *infer_ok(const char *text)
{
	ox_graph *g = parse_ok(text);
	if (infer_all(g))
		fail_msg("inference failed (message above) for:\n%s", text);
	return g;
}

/* The type of value id as "dtype[dims]" (dims as ox_dim_str spells them). */
static const char *type_str(ox_graph *g, ox_id id)
{
	static char buf[512];
	const ox_value *v = &g->vals[id];
	int n = snprintf(buf, sizeof buf, "%s", ox_dtype_name(v->dtype));
	if (v->has_shape)
		ox_shape_str(g, &v->shape, buf + n, sizeof buf - (size_t)n);
	else
		snprintf(buf + n, sizeof buf - (size_t)n, "?");
	return buf;
}

#define assert_type(g, id, want) assert_string_equal(type_str(g, id), want)

/* A graph whose inference must fail (the error is printed, expected). */
static void assert_infer_fails(const char *text)
{
	ox_graph *g = parse_ok(text);
	fprintf(stderr, "(an error message is expected next)\n");
	if (!infer_all(g))
		fail_msg("inference accepted:\n%s", text);
	ox_ir_free(g);
}

static void test_conv(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"conv\" opset 13\n"
		"input %0:f32[N,3,224,224] \"x\"\n"
		"input %1:f32[64,3,7,7] \"w\"\n"
		"input %2:f32[64] \"b\"\n"
		"input %5:f32[N,3,H,W] \"y\"\n"
		"input %9:f32[N,8,10,10] \"z\"\n"
		"input %10:f32[8,2,3,3] \"wg\"\n"
		"%3 = Conv(%0, %1, %2) {kernel_shape=[7,7], pads=[3,3,3,3], strides=[2,2]}\n"
		"%4 = Conv(%0, %1) {strides=[2,2], auto_pad=\"SAME_UPPER\"}\n"
		"%6 = Conv(%5, %1) {pads=[3,3,3,3], strides=[2,2]}\n"
		"%7 = Conv(%0, %1) {dilations=[2,2]}\n"
		"%8 = Conv(%0, %1) {auto_pad=\"VALID\", strides=[3,3]}\n"
		"%11 = Conv(%9, %10) {group=4, pads=[1,1,1,1]}\n");
	assert_type(g, 3, "f32[N,64,112,112]");
	assert_type(g, 4, "f32[N,64,112,112]");
	assert_type(g, 7, "f32[N,64,212,212]");  /* effective kernel 13 */
	assert_type(g, 8, "f32[N,64,73,73]");    /* floor((224-7)/3)+1 */
	assert_type(g, 11, "f32[N,8,10,10]");
	/* symbolic spatial dims: an expression, exact once bound */
	ox_value *v = &g->vals[6];
	assert_true(v->shape.d[0] < 0 && v->shape.d[2] < 0 && v->shape.d[3] < 0);
	assert_int_equal(v->shape.d[1], 64);
	assert_int_equal(ox_ir_bind(g, "H", 224), 0);
	assert_int_equal(ox_ir_bind(g, "W", 225), 0);
	assert_int_equal(ox_dim_eval(g, v->shape.d[2]), 112);
	assert_int_equal(ox_dim_eval(g, v->shape.d[3]), 113);
	assert_int_equal(ox_dim_eval(g, v->shape.d[0]), -1); /* N still unbound */
	ox_ir_free(g);

	/* channel mismatch, and 1-D conv */
	assert_infer_fails("graph \"c\" opset 13\n"
			   "input %0:f32[1,4,8,8] \"x\"\ninput %1:f32[2,3,3,3] \"w\"\n"
			   "%2 = Conv(%0, %1)\n");
	g = infer_ok("graph \"c1\" opset 11\n"
		     "input %0:f32[B,2,L] \"x\"\ninput %1:f32[5,2,3] \"w\"\n"
		     "%2 = Conv(%0, %1) {pads=[1,1]}\n");
	/* ox_dim_op merges constant offsets, so a "same" conv on a symbolic
	 * length keeps exactly L */
	assert_type(g, 2, "f32[B,5,L]");
	ox_ir_bind(g, "L", 17);
	assert_int_equal(ox_dim_eval(g, g->vals[2].shape.d[2]), 17);
	ox_ir_free(g);
}

static void test_matmul(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"mm\" opset 13\n"
		"input %0:f32[N,S,64] \"a\"\n"
		"input %1:f32[64,128] \"b\"\n"
		"input %3:f32[2,1,3,4] \"c\"\n"
		"input %4:f32[5,4,6] \"d\"\n"
		"input %6:f32[4] \"v\"\n"
		"input %7:f32[4,6] \"m\"\n"
		"input %9:f32[3,4] \"p\"\n"
		"%2 = MatMul(%0, %1)\n"
		"%5 = MatMul(%3, %4)\n"
		"%8 = MatMul(%6, %7)\n"
		"%10 = MatMul(%9, %6)\n"
		"%11 = MatMul(%6, %6)\n");
	assert_type(g, 2, "f32[N,S,128]");
	assert_type(g, 5, "f32[2,5,3,6]");
	assert_type(g, 8, "f32[6]");
	assert_type(g, 10, "f32[3]");
	assert_type(g, 11, "f32[]");
	ox_ir_free(g);
	assert_infer_fails("graph \"mm\" opset 13\n"
			   "input %0:f32[3,4] \"a\"\ninput %1:f32[5,6] \"b\"\n"
			   "%2 = MatMul(%0, %1)\n");
}

static void test_reshape(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"rs\" opset 13\n"
		"input %0:f32[N,3,4,5] \"x\"\n"
		"input %20:f32[2,3,10] \"c\"\n"
		"const %1:i64[2] \"s1\" = [0, -1]\n"
		"const %2:i64[3] \"s2\" = [0, 0, -1]\n"
		"const %3:i64[2] \"s3\" = [-1, 10]\n"
		"const %4:i64[2] \"s4\" = [-1, 20]\n"
		"const %5:i64[4] \"s5\" = [0, 5, 4, 3]\n"
		"const %6:i64[1] \"s6\" = [-1]\n"
		"%10 = Reshape(%0, %1)\n"
		"%11 = Reshape(%0, %2)\n"
		"%12 = Reshape(%20, %3)\n"
		"%13 = Reshape(%0, %4)\n"
		"%14 = Reshape(%0, %5)\n"
		"%15 = Reshape(%20, %6)\n");
	assert_type(g, 10, "f32[N,60]");
	assert_type(g, 11, "f32[N,3,20]");
	assert_type(g, 12, "f32[6,10]");
	/* -1 with a symbolic input: 60N/20 reduces to 3N, no division left */
	assert_type(g, 13, "f32[(N*3),20]");
	assert_type(g, 14, "f32[N,5,4,3]");
	assert_type(g, 15, "f32[60]");
	ox_ir_free(g);

	/* opset 14 allowzero: a 0 is a real zero-sized dim */
	g = infer_ok("graph \"az\" opset 14\n"
		     "input %0:f32[0,3] \"x\"\n"
		     "const %1:i64[2] \"s\" = [3, 0]\n"
		     "%2 = Reshape(%0, %1) {allowzero=1}\n");
	assert_type(g, 2, "f32[3,0]");
	ox_ir_free(g);
	/* opset 1-4: the shape is an attribute */
	g = infer_ok("graph \"old\" opset 1\n"
		     "input %0:f32[2,6] \"x\"\n"
		     "%1 = Reshape(%0) {shape=[3,-1]}\n");
	assert_type(g, 1, "f32[3,4]");
	ox_ir_free(g);
	assert_infer_fails("graph \"bad\" opset 13\n"
			   "input %0:f32[2,3] \"x\"\nconst %1:i64[2] \"s\" = [4, -1]\n"
			   "%2 = Reshape(%0, %1)\n");
	assert_infer_fails("graph \"bad\" opset 13\n"
			   "input %0:f32[2,3] \"x\"\nconst %1:i64[2] \"s\" = [-1, -1]\n"
			   "%2 = Reshape(%0, %1)\n");
}

static void test_broadcasting(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"bc\" opset 13\n"
		"input %0:f32[N,1,4] \"a\"\n"
		"input %1:f32[3,1] \"b\"\n"
		"input %2:f32[] \"s\"\n"
		"input %3:f32[N,3,4] \"c\"\n"
		"input %7:bool[N,1,1] \"m\"\n"
		"%4 = Add(%0, %1)\n"
		"%5 = Mul(%2, %3)\n"
		"%6 = Less(%0, %1)\n"
		"%8 = Where(%7, %4, %5)\n"
		"%9 = Sum(%0, %1, %2)\n");
	assert_type(g, 4, "f32[N,3,4]");
	assert_type(g, 5, "f32[N,3,4]");
	assert_type(g, 6, "bool[N,3,4]");
	assert_type(g, 8, "f32[N,3,4]");
	assert_type(g, 9, "f32[N,3,4]");
	ox_ir_free(g);
	assert_infer_fails("graph \"bc\" opset 13\n"
			   "input %0:f32[3] \"a\"\ninput %1:f32[4] \"b\"\n"
			   "%2 = Add(%0, %1)\n");
}

static void test_slice(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"sl\" opset 13\n"
		"input %0:f32[N,10,20] \"x\"\n"
		"const %1:i64[2] \"st\" = [1, -5]\n"
		"const %2:i64[2] \"en\" = [9223372036854775807, 18]\n"
		"const %3:i64[2] \"ax\" = [1, 2]\n"
		"const %4:i64[2] \"sp\" = [2, 1]\n"
		"const %6:i64[1] \"st2\" = [-1]\n"
		"const %7:i64[1] \"en2\" = [-9223372036854775807]\n"
		"const %8:i64[1] \"ax2\" = [1]\n"
		"const %9:i64[1] \"sp2\" = [-3]\n"
		"%5 = Slice(%0, %1, %2, %3, %4)\n"
		"%10 = Slice(%0, %6, %7, %8, %9)\n");
	assert_type(g, 5, "f32[N,5,3]");   /* 1..10 step 2; 15..18 */
	assert_type(g, 10, "f32[N,4,20]"); /* 9, 6, 3, 0 */
	ox_ir_free(g);

	/* opset < 10: attributes, no steps */
	g = infer_ok("graph \"sl9\" opset 9\n"
		     "input %0:f32[4,10] \"x\"\n"
		     "%1 = Slice(%0) {starts=[1,0], ends=[3,100], axes=[0,1]}\n");
	assert_type(g, 1, "f32[2,10]");
	ox_ir_free(g);

	/* on a symbolic axis: stays symbolic, evaluates as the spec clamps */
	g = infer_ok("graph \"sls\" opset 13\n"
		     "input %0:f32[N,8] \"x\"\n"
		     "const %1:i64[1] \"st\" = [1]\n"
		     "const %2:i64[1] \"en\" = [9223372036854775807]\n"
		     "const %3:i64[1] \"ax\" = [0]\n"
		     "%4 = Slice(%0, %1, %2, %3)\n");
	ox_value *v = &g->vals[4];
	assert_true(v->shape.d[0] < 0);
	assert_int_equal(v->shape.d[1], 8);
	ox_ir_bind(g, "N", 5);
	assert_int_equal(ox_dim_eval(g, v->shape.d[0]), 4);
	ox_ir_free(g);
}

static void test_concat(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"cc\" opset 13\n"
		"input %0:f32[N,3] \"a\"\n"
		"input %1:f32[N,5] \"b\"\n"
		"input %2:f32[M,3] \"c\"\n"
		"input %5:f32[N,3] \"d\"\n"
		"%3 = Concat(%0, %1) {axis=1}\n"
		"%4 = Concat(%0, %2, %5) {axis=-2}\n");
	assert_type(g, 3, "f32[N,8]");
	assert_type(g, 4, "f32[(N+(N+M)),3]");
	ox_ir_bind(g, "N", 2);
	ox_ir_bind(g, "M", 7);
	assert_int_equal(ox_dim_eval(g, g->vals[4].shape.d[0]), 11);
	ox_ir_free(g);
	assert_infer_fails("graph \"cc\" opset 13\n"
			   "input %0:f32[2,3] \"a\"\ninput %1:f32[2,4] \"b\"\n"
			   "%2 = Concat(%0, %1) {axis=0}\n");
	assert_infer_fails("graph \"cc\" opset 13\n"
			   "input %0:f32[2,3] \"a\"\ninput %1:f32[2,3] \"b\"\n"
			   "%2 = Concat(%0, %1) {axis=2}\n");
}

static void test_transpose(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"tr\" opset 13\n"
		"input %0:f32[N,3,H,W] \"x\"\n"
		"%1 = Transpose(%0) {perm=[0,2,3,1]}\n"
		"%2 = Transpose(%0)\n");
	assert_type(g, 1, "f32[N,H,W,3]");
	assert_type(g, 2, "f32[W,H,3,N]"); /* default: reversed */
	ox_ir_free(g);
	assert_infer_fails("graph \"tr\" opset 13\n"
			   "input %0:f32[2,3] \"x\"\n"
			   "%1 = Transpose(%0) {perm=[0,0]}\n");
}

/* The batch dim N stays a symbol through a whole Conv -> Relu -> Flatten ->
 * Gemm chain, and Flatten at axis 2 makes the expression N*C. */
static void test_symbolic_batch_survives(void **state)
{
	(void)state;
	ox_graph *g = infer_ok(
		"graph \"sym\" opset 13\n"
		"input %0:f32[N,3,32,32] \"image\"\n"
		"const %1:f32[8,3,3,3] \"w\" = <864 bytes>\n"
		"const %6:f32[10,2048] \"fw\" = <81920 bytes>\n"
		"%2 = Conv(%0, %1) {pads=[1,1,1,1], strides=[2,2]}\n"
		"%3 = Relu(%2)\n"
		"%4 = Flatten(%3) {axis=1}\n"
		"%5 = Flatten(%3) {axis=2}\n"
		"%7 = Gemm(%4, %6) {transB=1}\n"
		"%8 = Flatten(%3) {axis=0}\n");
	ox_dim n = ox_dim_sym(g, "N");
	assert_type(g, 2, "f32[N,8,16,16]");
	assert_int_equal(g->vals[2].shape.d[0], n);
	assert_type(g, 4, "f32[N,2048]");
	assert_int_equal(g->vals[4].shape.d[0], n);
	assert_type(g, 5, "f32[(N*8),256]");
	assert_null(ox_dim_unbound(g, g->vals[5].shape.d[1]));
	assert_string_equal(ox_dim_unbound(g, g->vals[5].shape.d[0]), "N");
	assert_type(g, 7, "f32[N,10]");
	assert_int_equal(g->vals[8].shape.d[0], 1);
	assert_int_equal(ox_dim_eval(g, g->vals[8].shape.d[1]), -1);
	ox_ir_bind(g, "N", 4);
	assert_int_equal(ox_dim_eval(g, g->vals[5].shape.d[0]), 32);
	assert_int_equal(ox_dim_eval(g, g->vals[8].shape.d[1]), 4 * 2048);
	ox_ir_free(g);
}

/* Inference refuses a node whose input type is not known yet. */
static void test_needs_typed_inputs(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"u\" opset 13\n"
			       "input %0 \"x\"\n"
			       "%1 = Relu(%0)\n");
	fprintf(stderr, "(an error message is expected next)\n");
	assert_int_equal(ox_infer_node(g, &g->nodes[0]), -1);
	ox_ir_free(g);
	/* and checks arity against ops.def */
	assert_infer_fails("graph \"a\" opset 13\n"
			   "input %0:f32[2] \"x\"\n"
			   "%1 = Add(%0)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_reshape),
		cmocka_unit_test(test_broadcasting),
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_concat),
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_symbolic_batch_survives),
		cmocka_unit_test(test_needs_typed_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
