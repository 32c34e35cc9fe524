/* test_index_rt.c: cmocka tests of the index family's shape inference
 * (ir/infer_index.c) with run-time dims and shape-steering inputs known
 * only at run time (docs/dynamic.md): which output dims become data
 * symbols, the bound each gets from the op, what stays constant, the
 * scratch sized at the most, and the refusals that are certain when
 * compiling. Graphs are written in the IR text form; a data symbol prints
 * as "$VALUE:AXIS".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "family.h"
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

/* infer every node in order: 0, or -1 at the first that fails */
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

/* inference refuses, and its message says `want` */
static void infer_fails(const char *text, const char *want)
{
	ox_graph *g = parse_ok(text);
	ox_error_hold = 1;
	ox_error_held[0] = 0;
	int rc = infer_all(g);
	ox_error_hold = 0;
	if (rc == 0 || !strstr(ox_error_held, want))
		fail_msg("expected a refusal saying '%s', got rc %d '%s' for:\n%s", want, rc, ox_error_held, text);
	ox_ir_free(g);
}

static const char *type_str(ox_graph *g, ox_id id)
{
	static char buf[512];
	const ox_value *v = &g->vals[id];
	int n = snprintf(buf, sizeof buf, "%s", ox_dtype_name(v->dtype));
	ox_shape_str(g, &v->shape, buf + n, sizeof buf - (size_t)n);
	return buf;
}

#define assert_type(g, id, want) assert_string_equal(type_str(g, id), want)

/* dim d of value id is a data symbol its producer computes, at most hi */
static void assert_data_dim(ox_graph *g, ox_id id, int d, ox_id def, int64_t hi)
{
	ox_dim x = g->vals[id].shape.d[d];
	const ox_dexpr *e = ox_dim_rtsym(g, x);
	assert_non_null(e);
	assert_int_equal(e->rt, OX_RT_DATA);
	assert_true(ox_dim_defined_by(g, x, def));
	assert_int_equal(e->hi, hi);
}

/* TopK's k from an input: the axis is a data symbol at most the input's
 * axis, shared by both outputs; a constant k stays a constant */
static void test_topk(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"g\" opset 11\n"
			       "range N=1..4\n"
			       "range M=3..10\n"
			       "input %0:f32[N,M] \"x\"\n"
			       "input %1:i64[1] \"k\"\n"
			       "%2, %3 = TopK(%0, %1)\n"
			       "output %2 \"v\"\noutput %3 \"i\"\n");
	assert_type(g, 2, "f32[N,$v:1]");
	assert_type(g, 3, "i64[N,$v:1]");
	assert_data_dim(g, 2, 1, 2, 10);
	ox_ir_free(g);
	/* a constant k against a run-time axis: the node checks k <= M */
	g = infer_ok("graph \"g\" opset 11\n"
		     "range M=3..10\n"
		     "input %0:f32[2,M] \"x\"\n"
		     "const %1:i64[1] \"k\" = [5]\n"
		     "%2, %3 = TopK(%0, %1) {axis=1}\n"
		     "output %2 \"v\"\noutput %3 \"i\"\n");
	assert_type(g, 2, "f32[2,5]");
	ox_ir_free(g);
	/* ... but never more than M can be */
	infer_fails("graph \"g\" opset 11\n"
		    "range M=3..10\n"
		    "input %0:f32[2,M] \"x\"\n"
		    "const %1:i64[1] \"k\" = [11]\n"
		    "%2, %3 = TopK(%0, %1)\n"
		    "output %2 \"v\"\noutput %3 \"i\"\n",
		    "more than the axis");
	infer_fails("graph \"g\" opset 11\n"
		    "input %0:f32[2,4] \"x\"\n"
		    "input %1:i32[1] \"k\"\n"
		    "%2, %3 = TopK(%0, %1)\n"
		    "output %2 \"v\"\noutput %3 \"i\"\n",
		    "k must be int64");
}

/* OneHot's depth from an input: the op gives no bound (the bounds pass
 * takes --max-elems) */
static void test_onehot(void **state)
{
	(void)state;
	const char *text = "graph \"g\" opset 11\n"
			   "input %0:i64[3] \"ix\"\n"
			   "input %1:i64[1] \"depth\"\n"
			   "const %2:f32[2] \"vals\" = [0, 1]\n"
			   "%3 = OneHot(%0, %1, %2)\n"
			   "output %3 \"y\"\n";
	ox_graph *g = infer_ok(text);
	assert_type(g, 3, "f32[3,$y:1]");
	assert_data_dim(g, 3, 1, 3, -1);
	ox_ir_free(g);
	/* the bounds pass names the value without a bound, takes one given */
	g = parse_ok(text);
	ox_error_hold = 1;
	ox_error_held[0] = 0;
	assert_int_equal(ox_opt_run(g, 1, NULL), -1);
	ox_error_hold = 0;
	assert_non_null(strstr(ox_error_held, "--max y=N"));
	ox_ir_free(g);
	g = parse_ok(text);
	g->max_elems = 300;
	assert_int_equal(ox_opt_run(g, 1, NULL), 0);
	ox_value *y = &g->vals[g->outputs[0]];
	assert_int_equal(ox_dim_hi(g, y->shape.d[1]), 300);
	assert_int_equal(ox_value_max_storage(g, y), 300);
	ox_ir_free(g);
	infer_fails("graph \"g\" opset 11\n"
		    "input %0:i64[3] \"ix\"\n"
		    "const %1:i64[1] \"depth\" = [4]\n"
		    "const %2:f32[3] \"vals\" = [0, 1, 2]\n"
		    "%3 = OneHot(%0, %1, %2)\n"
		    "output %3 \"y\"\n",
		    "two elements");
}

/* Compress: a constant condition keeps a constant size when the positions
 * it selects lie below the axis' least; else the count is a data symbol
 * at most the axis and the condition */
static void test_compress(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"g\" opset 11\n"
			       "range N=3..6\n"
			       "input %0:f32[N,2] \"x\"\n"
			       "const %1:bool[6] \"c\" = [1, 0, 1, 0, 0, 0]\n"
			       "%2 = Compress(%0, %1) {axis=0}\n"
			       "output %2 \"y\"\n");
	assert_type(g, 2, "f32[2,2]");
	ox_ir_free(g);
	g = infer_ok("graph \"g\" opset 11\n"
		     "range N=2..4\n"
		     "input %0:f32[N,2] \"x\"\n"
		     "const %1:bool[4] \"c\" = [1, 0, 0, 1]\n"
		     "%2 = Compress(%0, %1) {axis=0}\n"
		     "output %2 \"y\"\n");
	assert_type(g, 2, "f32[$y:0,2]");
	assert_data_dim(g, 2, 0, 2, 4);
	ox_ir_free(g);
	/* a condition from the data, shorter than the flattened input */
	g = infer_ok("graph \"g\" opset 11\n"
		     "range N=1..8\n"
		     "input %0:f32[N,3] \"x\"\n"
		     "input %1:bool[5] \"c\"\n"
		     "%2 = Compress(%0, %1)\n"
		     "output %2 \"y\"\n");
	assert_type(g, 2, "f32[$y:0]");
	assert_data_dim(g, 2, 0, 2, 5);
	ox_ir_free(g);
}

/* NonZero, Unique, NonMaxSuppression: counts known when the program runs,
 * bounded by the op; the scratch at its most */
static void test_counts(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"g\" opset 13\n"
			       "range N=1..4\n"
			       "input %0:f32[N,3] \"x\"\n"
			       "%1 = NonZero(%0)\n"
			       "output %1 \"nz\"\n");
	assert_type(g, 1, "i64[2,$nz:1]");
	assert_data_dim(g, 1, 1, 1, 12);
	ox_ir_free(g);

	g = infer_ok("graph \"g\" opset 11\n"
		     "range N=1..100\n"
		     "input %0:f32[2,N] \"x\"\n"
		     "%1, %2, %3, %4 = Unique(%0) {axis=1}\n"
		     "output %1 \"y\"\noutput %2 \"idx\"\noutput %3 \"inv\"\noutput %4 \"cnt\"\n");
	assert_type(g, 1, "f32[2,$y:1]");
	assert_type(g, 2, "i64[$y:1]");
	assert_type(g, 3, "i64[N]");
	assert_type(g, 4, "i64[$y:1]");
	assert_data_dim(g, 1, 1, 1, 100);
	assert_type(g, g->nodes[0].out[4], "u8[4800]"); /* 6 * 100 int64 */
	ox_ir_free(g);
	/* only the inverse: no count to compute */
	g = infer_ok("graph \"g\" opset 11\n"
		     "input %0:f32[6] \"x\"\n"
		     "%1 = Unique(%0)\n"
		     "output %1 \"y\"\n");
	assert_data_dim(g, 1, 0, 1, 6);
	ox_ir_free(g);

	/* max_output_boxes_per_class a constant 2: at most 1 * 3 * 2 */
	g = infer_ok("graph \"g\" opset 11\n"
		     "range N=1..10\n"
		     "input %0:f32[1,N,4] \"boxes\"\n"
		     "input %1:f32[1,3,N] \"scores\"\n"
		     "const %2:i64[1] \"mo\" = [2]\n"
		     "%3 = NonMaxSuppression(%0, %1, %2)\n"
		     "output %3 \"sel\"\n");
	assert_type(g, 3, "i64[$sel:0,3]");
	assert_data_dim(g, 3, 0, 3, 6);
	assert_type(g, g->nodes[0].out[1], "u8[176]"); /* (2 * 10 + 2) int64 */
	ox_ir_free(g);
	/* read when it runs: at most every box of every class */
	g = infer_ok("graph \"g\" opset 11\n"
		     "range N=1..10\n"
		     "input %0:f32[1,N,4] \"boxes\"\n"
		     "input %1:f32[1,3,N] \"scores\"\n"
		     "input %2:i64[1] \"mo\"\n"
		     "%3 = NonMaxSuppression(%0, %1, %2)\n"
		     "output %3 \"sel\"\n");
	assert_data_dim(g, 3, 0, 3, 30);
	assert_type(g, g->nodes[0].out[1], "u8[240]");
	ox_ir_free(g);
	/* none selected at all: a constant 0 */
	g = infer_ok("graph \"g\" opset 11\n"
		     "input %0:f32[1,5,4] \"boxes\"\n"
		     "input %1:f32[1,3,5] \"scores\"\n"
		     "const %2:i64[1] \"mo\" = [0]\n"
		     "%3 = NonMaxSuppression(%0, %1, %2)\n"
		     "output %3 \"sel\"\n");
	assert_type(g, 3, "i64[0,3]");
	ox_ir_free(g);
	infer_fails("graph \"g\" opset 11\n"
		    "input %0:f32[1,5,3] \"boxes\"\n"
		    "input %1:f32[1,3,5] \"scores\"\n"
		    "%3 = NonMaxSuppression(%0, %1)\n"
		    "output %3 \"sel\"\n",
		    "boxes must be [B, N, 4]");
}

/* CumSum's axis from an input: the shape is the input's, the kernel takes
 * the axis when it runs */
static void test_cumsum_axis(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"g\" opset 14\n"
			       "range N=1..4\n"
			       "input %0:f32[N,3] \"x\"\n"
			       "input %1:i32[] \"axis\"\n"
			       "%2 = CumSum(%0, %1)\n"
			       "output %2 \"y\"\n");
	assert_type(g, 2, "f32[N,3]");
	int axis = 7;
	assert_int_equal(ox_index_axis(g, &g->nodes[0], &axis), 0);
	assert_int_equal(axis, -1);
	ox_ir_free(g);
	infer_fails("graph \"g\" opset 14\n"
		    "input %0:f32[2,3] \"x\"\n"
		    "input %1:i32[2] \"axis\"\n"
		    "%2 = CumSum(%0, %1)\n"
		    "output %2 \"y\"\n",
		    "one element");
}

/* relations between dims: refused when constants break them, left to the
 * node (checked when it runs) when a run-time dim may meet them */
static void test_relations(void **state)
{
	(void)state;
	infer_fails("graph \"g\" opset 16\n"
		    "input %0:f32[4,3] \"x\"\n"
		    "input %1:i64[2,1] \"ix\"\n"
		    "input %2:f32[2,2] \"u\"\n"
		    "%3 = ScatterND(%0, %1, %2)\n"
		    "output %3 \"y\"\n",
		    "updates dim 1");
	ox_graph *g = infer_ok("graph \"g\" opset 16\n"
			       "range C=1..4\n"
			       "input %0:f32[4,3] \"x\"\n"
			       "input %1:i64[2,1] \"ix\"\n"
			       "input %2:f32[2,C] \"u\"\n"
			       "%3 = ScatterND(%0, %1, %2)\n"
			       "output %3 \"y\"\n");
	assert_type(g, 3, "f32[4,3]");
	ox_ir_free(g);
	infer_fails("graph \"g\" opset 13\n"
		    "range C=5..8\n"
		    "input %0:f32[4,3] \"x\"\n"
		    "input %1:i64[4,C] \"ix\"\n"
		    "%2 = GatherElements(%0, %1) {axis=0}\n"
		    "output %2 \"y\"\n",
		    "indices dim 1 is larger");
	infer_fails("graph \"g\" opset 13\n"
		    "input %0:f32[2,5,4] \"x\"\n"
		    "input %1:i64[3,4] \"t\"\n"
		    "%2 = NegativeLogLikelihoodLoss(%0, %1)\n"
		    "output %2 \"y\"\n",
		    "target dim 0");
	infer_fails("graph \"g\" opset 10\n"
		    "input %0:f32[4,2,3] \"x\"\n"
		    "input %1:i64[3] \"len\"\n"
		    "%2 = ReverseSequence(%0, %1)\n"
		    "output %2 \"y\"\n",
		    "one element per batch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topk),
		cmocka_unit_test(test_onehot),
		cmocka_unit_test(test_compress),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_cumsum_axis),
		cmocka_unit_test(test_relations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
