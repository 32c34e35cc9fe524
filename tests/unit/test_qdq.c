/* test_qdq.c: cmocka tests of the qdq pass (opt/qdq.c) on QDQ graphs
 * written in the IR text form: which groups become integer kernels, the
 * parameters it computes, and the groups it must leave in float (a
 * rewrite there would change the result). End to end: make int8.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../opt/opt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ox_graph *run(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	if (ox_opt_fold(g) || ox_opt_dce(g) || ox_opt_qdq(g))
		fail_msg("a pass failed (message above)");
	ox_ir_check(g, "qdq");
	return g;
}

static int count_op(const ox_graph *g, int op)
{
	int c = 0;
	for (int i = 0; i < g->nnodes; i++)
		c += !g->nodes[i].dead && g->nodes[i].op == op;
	return c;
}

static const ox_node *find_op(const ox_graph *g, int op)
{
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == op)
			return &g->nodes[i];
	fail_msg("no %s node", ox_ops[op].name);
	return NULL;
}

static int64_t ints_at(const ox_node *n, const char *name, int i)
{
	const int64_t *v;
	int k = ox_attr_ints(n, name, &v);
	assert_true(i < k);
	return v[i];
}

/* DQ(x) -> Conv(DQ(w) per channel, DQ(b)) -> Relu -> Q, with the Relu's
 * output read by %RELU_USE (nothing, or a second output) */
static const char *conv_fmt =
	"graph \"c\" opset 13\n"
	"input %%0:i8[1,1,3,3] \"x\"\n"
	"const %%1:f32[] \"xs\" = [0.5]\n"
	"const %%2:i8[] \"xz\" = [-3]\n"
	"const %%3:i8[2,1,1,1] \"w\" = [2, -4]\n"
	"const %%4:f32[2] \"ws\" = [0.25, 0.125]\n"
	"const %%5:i8[2] \"wz\" = [0, 0]\n"
	"const %%6:i32[2] \"b\" = [8, -8]\n"
	"const %%7:f32[2] \"bs\" = [0.125, 0.0625]\n"
	"const %%8:i32[2] \"bz\" = [0, 0]\n"
	"const %%9:f32[] \"ys\" = [0.75]\n"
	"const %%10:i8[] \"yz\" = [5]\n"
	"%%11 = DequantizeLinear(%%0, %%1, %%2)  # \"dqx\"\n"
	"%%12 = DequantizeLinear(%%3, %%4, %%5) {axis=0}  # \"dqw\"\n"
	"%%13 = DequantizeLinear(%%6, %%7, %%8) {axis=0}  # \"dqb\"\n"
	"%%14 = Conv(%%11, %%12, %%13) {kernel_shape=[1,1]}  # \"conv\"\n"
	"%%15 = Relu(%%14)  # \"relu\"\n"
	"%%16 = QuantizeLinear(%%15, %%9, %%10)  # \"q\"\n"
	"output %%16 \"y\"\n%s";

static void test_conv(void **state)
{
	(void)state;
	char text[4096];
	snprintf(text, sizeof text, conv_fmt, "");
	ox_graph *g = run(text);
	assert_int_equal(count_op(g, OX_OP_QConv), 1);
	assert_int_equal(g->nnodes, 1);
	const ox_node *n = find_op(g, OX_OP_QConv);
	/* M = 0.5 * 0.25 / 0.75 = 1/6 = 0.6667 * 2^-2: m = round(2/3 2^31), s = -2 */
	assert_int_equal(ints_at(n, "ox_m", 0), 1431655765);
	assert_int_equal(ints_at(n, "ox_s", 0), -2);
	assert_int_equal(ints_at(n, "ox_s", 1), -3);
	assert_int_equal(ints_at(n, "ox_zp", 0), -3);
	assert_int_equal(ints_at(n, "ox_zp", 1), 5);
	/* the Relu: the clamp starts at the output zero point */
	assert_int_equal(ints_at(n, "ox_clip", 0), 5);
	assert_int_equal(ints_at(n, "ox_clip", 1), 127);
	/* the bias re-quantized to s_x s_w: 8 * 0.125 / (0.5 * 0.25) = 8 */
	const ox_tensor *b = g->vals[n->in[2]].data;
	assert_int_equal(ox_tensor_get_i64(b, 0), 8);
	assert_int_equal(ox_tensor_get_i64(b, 1), -8);
	assert_int_equal(g->vals[n->out[0]].dtype, OX_I8);
	ox_ir_free(g);

	/* the Relu's output read twice: the float group stays */
	snprintf(text, sizeof text, conv_fmt, "output %15 \"r\"\n");
	g = run(text);
	assert_int_equal(count_op(g, OX_OP_QConv), 0);
	assert_int_equal(count_op(g, OX_OP_Conv), 1);
	ox_ir_free(g);
}

static const char *add_fmt =
	"graph \"a\" opset 13\n"
	"input %%0:u8[2,%s] \"a\"\n"
	"input %%1:u8[2,4] \"b\"\n"
	"const %%2:f32[] \"s\" = [0.5]\n"
	"const %%3:u8[] \"z\" = [128]\n"
	"const %%4:f32[] \"s2\" = [0.25]\n"
	"%%5 = DequantizeLinear(%%0, %%2, %%3)  # \"dqa\"\n"
	"%%6 = DequantizeLinear(%%1, %%4, %%3)  # \"dqb\"\n"
	"%%7 = Add(%%5, %%6)  # \"add\"\n"
	"%%8 = QuantizeLinear(%%7, %%2, %%3)  # \"q\"\n"
	"%%9 = DequantizeLinear(%%8, %%2, %%3)  # \"dq\"\n"
	"%%10 = Reshape(%%9, %%11)  # \"reshape\"\n"
	"const %%11:i64[1] \"shape\" = [8]\n"
	"%%12 = QuantizeLinear(%%10, %%2, %%3)  # \"q2\"\n"
	"%%13 = QuantizeLinear(%%10, %%4, %%3)  # \"q3\"\n"
	"output %%12 \"y\"\noutput %%13 \"y3\"\n";

static void test_add_views(void **state)
{
	(void)state;
	char text[4096];
	snprintf(text, sizeof text, add_fmt, "4");
	ox_graph *g = run(text);
	/* Add integer; the Reshape on bytes; Q(DQ) with the same parameters
	 * gone (a QRescale by 1 for the graph output y), with another scale a
	 * QRescale; nothing in float */
	assert_int_equal(count_op(g, OX_OP_QAdd), 1);
	assert_int_equal(count_op(g, OX_OP_Reshape), 1);
	assert_int_equal(count_op(g, OX_OP_QRescale), 2);
	assert_int_equal(count_op(g, OX_OP_QuantizeLinear) + count_op(g, OX_OP_DequantizeLinear), 0);
	const ox_node *n = find_op(g, OX_OP_QAdd);
	assert_int_equal(ints_at(n, "ox_clip", 0), 0);
	assert_int_equal(ints_at(n, "ox_clip", 1), 255);
	ox_ir_free(g);

	/* a broadcasting Add stays float (the kernel takes equal shapes) */
	snprintf(text, sizeof text, add_fmt, "1");
	g = run(text);
	assert_int_equal(count_op(g, OX_OP_QAdd), 0);
	assert_int_equal(count_op(g, OX_OP_Add), 1);
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_add_views),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
