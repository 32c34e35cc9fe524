/* test_expand.c: cmocka tests of compile-time expansion (opt/expand.c, run
 * by the fold pass) on graphs written in the IR text form: If, Loop, Scan,
 * sequences, names captured across nested bodies, and the aggregate-aware
 * topological sort. The end-to-end counterparts are the backend tests
 * (test_if*, test_loop*, test_scan*, test_sequence_*) and tests/e2e/cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../opt/opt.h"
#include <stdlib.h>
#include <string.h>

static ox_graph *parse_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	return g;
}

static int count_op(const ox_graph *g, int op)
{
	int c = 0;
	for (int i = 0; i < g->nnodes; i++)
		c += !g->nodes[i].dead && g->nodes[i].op == op;
	return c;
}

static int count_expandable(const ox_graph *g)
{
	int c = 0;
	for (int i = 0; i < g->nnodes; i++)
		c += !g->nodes[i].dead && (ox_ops[g->nodes[i].op].flags & OX_F_EXPAND);
	return c;
}

/* If with a constant condition inlines the branch taken, including a Loop
 * inside it whose body captures names from two scopes (the If's branch
 * and the top graph). */
static const char *nested =
	"graph \"main\" opset 17 ir 8\n"
	"input %0:f32[2] \"x\"\n"
	"const %1:bool[] \"cond\" = [1]\n"
	"const %2:i64[] \"three\" = [3]\n"
	"%3:f32[2] \"y\" = Relu(%0)\n"
	"%4 = If(%1) {then_branch=graph{\n"
	"  graph \"then\" opset 17 ir 8\n"
	"  outer %0:f32[2] \"y\"\n"
	"  outer %1:i64[] \"three\"\n"
	"  %2:f32[2] \"t\" = Neg(%0)\n"
	"  const %3:bool[] \"yes\" = [1]\n"
	"  %4 = Loop(%1, %3, %0) {body=graph{\n"
	"    graph \"body\" opset 17 ir 8\n"
	"    input %0:i64[] \"i\"\n"
	"    input %1:bool[] \"c\"\n"
	"    input %2:f32[2] \"acc\"\n"
	"    outer %3:f32[2] \"t\"\n"
	"    outer %4:f32[2] \"y\"\n"
	"    %5 = Add(%2, %3)\n"
	"    %6 = Mul(%5, %4)\n"
	"    %7 = Identity(%1)\n"
	"    output %7 \"c_out\"\n"
	"    output %6 \"acc_out\"\n"
	"  }}\n"
	"  output %4 \"l\"\n"
	"}, else_branch=graph{\n"
	"  graph \"else\" opset 17 ir 8\n"
	"  outer %0:f32[2] \"y\"\n"
	"  output %0 \"e\"\n"
	"}}\n"
	"output %4 \"out\"\n";

static void test_if_const_loop_captures(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(nested);
	assert_int_equal(ox_opt_run(g, 1, "dce"), 0);
	assert_int_equal(count_expandable(g), 0);
	assert_int_equal(count_op(g, OX_OP_Relu), 1);
	assert_int_equal(count_op(g, OX_OP_Neg), 1);  /* the then-branch, once */
	assert_int_equal(count_op(g, OX_OP_Add), 3);  /* three iterations */
	assert_int_equal(count_op(g, OX_OP_Mul), 3);
	assert_int_equal(count_op(g, OX_OP_Where), 0);
	/* every Add of the unrolled body reads the branch's Neg (a captured name) */
	ox_id neg = -1;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Neg)
			neg = g->nodes[i].out[0];
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Add)
			assert_int_equal(g->nodes[i].in[1], neg);
	assert_int_equal(g->noutputs, 1);
	assert_int_equal(g->vals[g->outputs[0]].shape.d[0], 2);
	ox_ir_free(g);
}

/* An error inside a nested body after the outer If was inlined: the graph
 * then holds two nodes (the If in the branch and its inlined copy) that
 * share the nested If's subgraphs, and freeing it must free them once
 * (a real voice-activity model aborted with "double free or corruption"). */
static const char *if_nested_error =
	"graph \"main\" opset 17 ir 8\n"
	"input %0:bool[] \"cond\"\n"
	"input %1:f32[3] \"x\"\n"
	"%2 = If(%0) {then_branch=graph{\n"
	"  graph \"then\" opset 17 ir 8\n"
	"  outer %0:f32[3] \"x\"\n"
	"  outer %1:bool[] \"cond\"\n"
	"  %2 = If(%1) {then_branch=graph{\n"
	"    graph \"inner_then\" opset 17 ir 8\n"
	"    outer %0:f32[3] \"x\"\n"
	"    const %1:i64[2] \"bad\" = [4, 4]\n"
	"    %2 = Reshape(%0, %1)\n"
	"    output %2 \"r\"\n"
	"  }, else_branch=graph{\n"
	"    graph \"inner_else\" opset 17 ir 8\n"
	"    outer %0:f32[3] \"x\"\n"
	"    output %0 \"e\"\n"
	"  }}\n"
	"  output %2 \"t\"\n"
	"}, else_branch=graph{\n"
	"  graph \"else\" opset 17 ir 8\n"
	"  outer %0:f32[3] \"x\"\n"
	"  output %0 \"e\"\n"
	"}}\n"
	"output %2 \"out\"\n";

/* A branch that cannot be inferred (a Reshape of 3 elements to [4, 4])
 * is one the shapes given cannot take: its If returns the _ERR_SHAPE code
 * if it is taken, with a warning, as ONNX Runtime fails only when it runs
 * it. Both branches failing is an error. */
static void test_if_nested_error_frees(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(if_nested_error);
	assert_int_equal(ox_opt_run(g, 1, "outline"), 0);
	const ox_attr *b = ox_attr_get(&g->nodes[0], "ox_bodies");
	assert_non_null(b);
	assert_null(b->g[0]->unreachable);
	assert_null(b->g[1]->unreachable);
	const ox_graph *then = b->g[0];
	assert_int_equal(then->nnodes, 1);
	const ox_attr *inner = ox_attr_get(&then->nodes[0], "ox_bodies");
	assert_non_null(inner);
	assert_non_null(inner->g[0]->unreachable);
	assert_non_null(strstr(inner->g[0]->unreachable, "Reshape"));
	assert_null(inner->g[1]->unreachable);
	ox_ir_free(g); /* glibc or ASan abort here on a subgraph freed twice */

	/* the same error on both sides */
	g = parse_ok("graph \"main\" opset 17 ir 8\n"
		     "input %0:bool[] \"cond\"\n"
		     "input %1:f32[3] \"x\"\n"
		     "%2 = If(%0) {then_branch=graph{\n"
		     "  graph \"then\" opset 17 ir 8\n"
		     "  outer %0:f32[3] \"x\"\n"
		     "  const %1:i64[2] \"bad\" = [4, 4]\n"
		     "  %2 = Reshape(%0, %1)\n"
		     "  output %2 \"r\"\n"
		     "}, else_branch=graph{\n"
		     "  graph \"else\" opset 17 ir 8\n"
		     "  outer %0:f32[3] \"x\"\n"
		     "  const %1:i64[2] \"bad\" = [2, 2]\n"
		     "  %2 = Reshape(%0, %1)\n"
		     "  output %2 \"s\"\n"
		     "}}\n"
		     "output %2 \"out\"\n");
	assert_int_equal(ox_opt_run(g, 1, "dce"), -1);
	ox_ir_free(g);
}

/* A condition known only at run time: both branches and a Where; branches
 * of different shapes are refused. */
static const char *if_runtime =
	"graph \"main\" opset 17 ir 8\n"
	"input %0:bool[] \"cond\"\n"
	"input %1:f32[3] \"x\"\n"
	"%2 = If(%0) {then_branch=graph{\n"
	"  graph \"then\" opset 17 ir 8\n"
	"  outer %0:f32[3] \"x\"\n"
	"  %1 = Neg(%0)\n"
	"  output %1 \"a\"\n"
	"}, else_branch=graph{\n"
	"  graph \"else\" opset 17 ir 8\n"
	"  outer %0:f32[3] \"x\"\n"
	"  %1 = Abs(%0)\n"
	"  output %1 \"b\"\n"
	"}}\n"
	"output %2 \"out\"\n";

/* the body graphs of a control node kept as C control flow (opt/outline.c) */
static const ox_attr *bodies_of(const ox_graph *g, int op)
{
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == op)
			return ox_attr_get(&g->nodes[i], "ox_bodies");
	return NULL;
}

/* A condition known only at run time: the If stays, a C if/else over its
 * two branches, each moved into a body of its own. */
static void test_if_runtime(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(if_runtime);
	assert_int_equal(ox_opt_run(g, 1, "outline"), 0);
	assert_int_equal(count_op(g, OX_OP_If), 1);
	assert_int_equal(count_op(g, OX_OP_Neg) + count_op(g, OX_OP_Abs) + count_op(g, OX_OP_Where), 0);
	const ox_attr *b = bodies_of(g, OX_OP_If);
	assert_non_null(b);
	assert_int_equal(b->n, 2);
	/* optimized on their own: the Neg maybe in a fused loop */
	assert_int_equal(b->g[0]->nnodes, 1);
	assert_int_equal(count_op(b->g[0], OX_OP_Neg) + count_op(b->g[0], OX_OP_Fused), 1);
	assert_int_equal(count_op(b->g[1], OX_OP_Abs) + count_op(b->g[1], OX_OP_Fused), 1);
	/* each body reads x, captured: its only input, the node's second */
	assert_int_equal(b->g[0]->ninputs, 1);
	assert_int_equal(b->g[1]->ninputs, 1);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_If)
			assert_int_equal(ox_ctrl_nin0(&g->nodes[i]), 1);
	ox_ir_free(g);

	/* the else branch gives another shape: the output's dim is the branch's,
	 * at most the larger */
	g = parse_ok("graph \"main\" opset 17 ir 8\n"
		     "input %0:bool[] \"cond\"\n"
		     "input %1:f32[3] \"x\"\n"
		     "const %3:f32[1] \"one\" = [1]\n"
		     "%2 = If(%0) {then_branch=graph{\n"
		     "  graph \"then\" opset 17 ir 8\n"
		     "  outer %0:f32[3] \"x\"\n"
		     "  output %0 \"a\"\n"
		     "}, else_branch=graph{\n"
		     "  graph \"else\" opset 17 ir 8\n"
		     "  outer %0:f32[1] \"one\"\n"
		     "  output %0 \"b\"\n"
		     "}}\n"
		     "output %2 \"out\"\n");
	assert_int_equal(ox_opt_run(g, 1, "fold"), 0);
	const ox_value *o = &g->vals[g->outputs[0]];
	assert_int_equal(o->shape.rank, 1);
	assert_true(ox_dim_is_rt(g, o->shape.d[0]));
	assert_int_equal(ox_dim_hi(g, o->shape.d[0]), 3);
	assert_true(ox_dim_defined_by(g, o->shape.d[0], g->outputs[0]));
	ox_ir_free(g);

	/* ranks that differ cannot be one output */
	g = parse_ok("graph \"main\" opset 17 ir 8\n"
		     "input %0:bool[] \"cond\"\n"
		     "input %1:f32[3] \"x\"\n"
		     "const %3:f32[1,1] \"one\" = [1]\n"
		     "%2 = If(%0) {then_branch=graph{\n"
		     "  graph \"then\" opset 17 ir 8\n"
		     "  outer %0:f32[3] \"x\"\n"
		     "  output %0 \"a\"\n"
		     "}, else_branch=graph{\n"
		     "  graph \"else\" opset 17 ir 8\n"
		     "  outer %0:f32[1,1] \"one\"\n"
		     "  output %0 \"b\"\n"
		     "}}\n"
		     "output %2 \"out\"\n");
	assert_int_equal(ox_opt_run(g, 1, "fold"), -1);
	ox_ir_free(g);
}

/* A loop whose exit the body computes from data is a C loop: its body a
 * graph of its own that starts from the iteration, the condition and the
 * carried value, and reads nothing else. */
static void test_loop_data_exit(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"main\" opset 17 ir 8\n"
			       "input %0:f32[] \"x\"\n"
			       "const %1:bool[] \"go\" = [1]\n"
			       "%2 = Loop(_, %1, %0) {body=graph{\n"
			       "  graph \"body\" opset 17 ir 8\n"
			       "  input %0:i64[] \"i\"\n"
			       "  input %1:bool[] \"c\"\n"
			       "  input %2:f32[] \"v\"\n"
			       "  const %3:f32[] \"lim\" = [10]\n"
			       "  %4 = Add(%2, %2)\n"
			       "  %5 = Less(%4, %3)\n"
			       "  output %5 \"c_out\"\n"
			       "  output %4 \"v_out\"\n"
			       "}}\n"
			       "output %2 \"out\"\n");
	assert_int_equal(ox_opt_run(g, 1, "outline"), 0);
	assert_int_equal(count_op(g, OX_OP_Loop), 1);
	assert_int_equal(count_op(g, OX_OP_CtrlHead), 0);
	const ox_attr *b = bodies_of(g, OX_OP_Loop);
	assert_non_null(b);
	assert_int_equal(b->g[0]->ninputs, 3);
	assert_int_equal(b->g[0]->noutputs, 2);
	assert_int_equal(count_op(b->g[0], OX_OP_Less), 1); /* not fused: its output is bool */
	assert_int_equal(g->vals[g->outputs[0]].dtype, OX_F32);
	ox_ir_free(g);
}

/* Scan over axis 0 of a [3, 2] input: three steps, stacked by Concat. */
static void test_scan_unrolled(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"main\" opset 17 ir 8\n"
			       "input %0:f32[2] \"init\"\n"
			       "input %1:f32[3,2] \"xs\"\n"
			       "%2, %3 = Scan(%0, %1) {body=graph{\n"
			       "  graph \"body\" opset 17 ir 8\n"
			       "  input %0:f32[2] \"s\"\n"
			       "  input %1:f32[2] \"x\"\n"
			       "  %2 = Add(%0, %1)\n"
			       "  %3 = Identity(%2)\n"
			       "  output %2 \"s_out\"\n"
			       "  output %3 \"y\"\n"
			       "}, num_scan_inputs=1}\n"
			       "output %2 \"final\"\n"
			       "output %3 \"all\"\n");
	assert_int_equal(ox_opt_run(g, 1, "dce"), 0);
	assert_int_equal(count_op(g, OX_OP_Add), 3);
	assert_int_equal(count_op(g, OX_OP_Concat), 1);
	ox_value *all = &g->vals[g->outputs[1]];
	assert_int_equal(all->shape.rank, 2);
	assert_int_equal(all->shape.d[0], 3);
	assert_int_equal(all->shape.d[1], 2);
	ox_ir_free(g);
}

/* Sequence ops resolve to their parts: SequenceAt(Insert(Construct(a, b), c, 0), 1) is a. */
static void test_sequence_parts(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"main\" opset 17 ir 8\n"
			       "input %0:f32[2] \"a\"\n"
			       "input %1:f32[2] \"b\"\n"
			       "input %2:f32[2] \"c\"\n"
			       "const %3:i64[] \"zero\" = [0]\n"
			       "const %4:i64[] \"one\" = [1]\n"
			       "%5 = SequenceConstruct(%0, %1)\n"
			       "%6 = SequenceInsert(%5, %2, %3)\n"
			       "%7 = SequenceAt(%6, %4)\n"
			       "%8 = SequenceLength(%6)\n"
			       "%9 = ConcatFromSequence(%6) {axis=0}\n"
			       "output %7 \"second\"\n"
			       "output %8 \"len\"\n"
			       "output %9 \"cat\"\n");
	assert_int_equal(ox_opt_run(g, 1, "dce"), 0);
	assert_int_equal(g->outputs[0], 0); /* input a itself */
	ox_value *len = &g->vals[g->outputs[1]];
	assert_int_equal(len->kind, OX_V_CONST);
	assert_int_equal(ox_tensor_get_i64(len->data, 0), 3);
	ox_value *cat = &g->vals[g->outputs[2]];
	assert_int_equal(cat->shape.d[0], 6);
	int c = -1;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Concat)
			c = i;
	assert_true(c >= 0);
	assert_int_equal(g->nodes[c].in[0], 2); /* c inserted at the front */
	ox_ir_free(g);
}

/* The sort orders a reader of an aggregate after the producers of its parts. */
static void test_toposort_aggregate(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"main\" opset 17 ir 8\n"
			       "input %0:f32[2] \"x\"\n"
			       "%1 = Relu(%0)\n"
			       "output %1 \"y\"\n");
	/* a reader placed first, through an aggregate of the Relu's output */
	ox_id relu_out = g->nodes[0].out[0];
	ox_id agg = ox_ir_add_agg(g, "s", OX_AGG_SEQ, &relu_out, 1, OX_F32);
	ox_id r = ox_ir_add_node(g, OX_OP_SequenceLength, "SequenceLength", "reader", 1, 1);
	g->nodes[r].in[0] = agg;
	g->nodes[r].out[0] = ox_ir_add_value(g, "n", OX_V_INTERNAL);
	ox_node tmp = g->nodes[0];
	g->nodes[0] = g->nodes[1];
	g->nodes[1] = tmp;
	assert_string_equal(g->nodes[0].name, "reader");
	assert_int_equal(ox_ir_toposort(g), 0);
	assert_int_equal(g->nodes[0].op, OX_OP_Relu);
	assert_string_equal(g->nodes[1].name, "reader");
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_if_const_loop_captures),
		cmocka_unit_test(test_if_runtime),
		cmocka_unit_test(test_if_nested_error_frees),
		cmocka_unit_test(test_loop_data_exit),
		cmocka_unit_test(test_scan_unrolled),
		cmocka_unit_test(test_sequence_parts),
		cmocka_unit_test(test_toposort_aggregate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
