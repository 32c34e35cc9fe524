/* test_plan.c: cmocka tests of the memory planner (opt/plan.c) on graphs
 * written in the IR text form: lifetimes, in-place reuse and where it must
 * not happen, views (Reshape-like, contiguous Slice/Split/Gather, trivial
 * Transpose), the schedule choice and the lower bound.
 *
 * Every test runs the whole pipeline and then check_plan(), which verifies
 * the plan's one safety property on every pair of values: two arena values
 * in different storage classes whose class lifetimes overlap never share
 * a byte. f32 tensors of 32 elements are 128 bytes, two 64-byte blocks.
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

static ox_graph *plan_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	g->opt = 0; /* the planner on the graph as written, without fusion */
	if (ox_opt_run(g, 1, NULL))
		fail_msg("the pipeline failed (message above) for:\n%s", text);
	return g;
}

/* the value whose graph output name is `name` */
static ox_value *out_named(ox_graph *g, const char *name)
{
	for (int k = 0; k < g->noutputs; k++)
		if (!strcmp(g->output_names[k], name))
			return &g->vals[g->outputs[k]];
	fail_msg("no output '%s'", name);
	return NULL;
}

static int64_t bytes_of(const ox_value *v)
{
	return ox_shape_numel(&v->shape) * (int64_t)ox_dtype_size(v->dtype);
}

/* The safety property, checked pairwise; also: offsets inside the arena,
 * the arena at least the lower bound, the lower bound at least every
 * single class. */
static void check_plan(ox_graph *g)
{
	const ox_plan_stats *st = ox_plan_get_stats(g);
	assert_non_null(st);
	int nv = g->nvals;
	int64_t *cfirst = calloc((size_t)nv, sizeof *cfirst), *clast = calloc((size_t)nv, sizeof *clast);
	for (int c = 0; c < nv; c++)
		cfirst[c] = INT64_MAX, clast[c] = -1;
	for (int v = 0; v < nv; v++) {
		int c = st->storage[v];
		if (c < 0)
			continue;
		assert_true(g->vals[v].offset >= 0);
		assert_true(g->vals[v].offset + bytes_of(&g->vals[v]) <= g->arena_size);
		if (g->vals[v].first < cfirst[c])
			cfirst[c] = g->vals[v].first;
		if (g->vals[v].last > clast[c])
			clast[c] = g->vals[v].last;
	}
	for (int a = 0; a < nv; a++)
		for (int b = a + 1; b < nv; b++) {
			int ca = st->storage[a], cb = st->storage[b];
			if (ca < 0 || cb < 0 || ca == cb)
				continue;
			if (cfirst[ca] > clast[cb] || cfirst[cb] > clast[ca])
				continue;
			const ox_value *x = &g->vals[a], *y = &g->vals[b];
			int64_t xe = x->offset + bytes_of(x), ye = y->offset + bytes_of(y);
			if (x->offset < ye && y->offset < xe && bytes_of(x) && bytes_of(y))
				fail_msg("%%%d [%lld,%lld) and %%%d [%lld,%lld) overlap in bytes and in time", a,
					 (long long)x->offset, (long long)xe, b, (long long)y->offset, (long long)ye);
		}
	assert_true(g->arena_size >= g->arena_lower_bound);
	free(cfirst);
	free(clast);
}

/* Three real Transposes: each value lives from its node to the next use. */
static void test_lifetimes(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"chain\" opset 13\n"
			      "input %0:f32[4,8] \"x\"\n"
			      "%1 = Transpose(%0) {perm=[1,0]}\n"
			      "%2 = Transpose(%1) {perm=[1,0]}\n"
			      "%3 = Transpose(%2) {perm=[1,0]}\n"
			      "output %3 \"y\"\n");
	check_plan(g);
	assert_int_equal(g->vals[1].first, 0);
	assert_int_equal(g->vals[1].last, 1);
	assert_int_equal(g->vals[2].first, 1);
	assert_int_equal(g->vals[2].last, 2);
	assert_int_equal(g->vals[3].first, 2);
	assert_int_equal(g->vals[3].last, 3); /* a graph output lives to the end */
	assert_int_equal(g->arena_lower_bound, 256);
	assert_int_equal(g->arena_size, 256);
	assert_int_equal(g->vals[1].offset, g->vals[3].offset); /* disjoint lifetimes share */
	assert_int_equal(g->vals[0].offset, -1);                /* graph inputs are not in the arena */
	ox_ir_free(g);
}

/* Unary ops after the last use of their input write over it. */
static void test_inplace_chain(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"ip\" opset 13\n"
			      "input %0:f32[8,8] \"x\"\n"
			      "%1 = Transpose(%0) {perm=[1,0]}\n"
			      "%2 = Relu(%1)\n"
			      "%3 = Sigmoid(%2)\n"
			      "%4 = Relu(%0)\n"
			      "%5 = Add(%3, %4)\n"
			      "output %5 \"y\"\n");
	check_plan(g);
	const ox_plan_stats *st = ox_plan_get_stats(g);
	ox_value *v1 = &g->vals[1], *v2 = &g->vals[2], *v3 = &g->vals[3], *v4 = &g->vals[4];
	assert_int_equal(v2->offset, v1->offset);
	assert_int_equal(v3->offset, v1->offset);
	/* Relu of a graph input never writes over the input */
	assert_true(v4->offset >= 0);
	assert_true(v4->offset != v1->offset);
	assert_int_equal(out_named(g, "y")->offset, v1->offset); /* Add into its first dying input */
	assert_int_equal(st->ninplace, 3);
	assert_int_equal(g->arena_lower_bound, 512);
	ox_ir_free(g);
}

/* No in-place while the input is still read later, nor into a constant,
 * nor into an input that is broadcast. */
static void test_inplace_refused(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"no\" opset 13\n"
			      "input %0:f32[4,8] \"x\"\n"
			      "input %10:f32[1,8] \"b\"\n"
			      "const %11:f32[4,8] \"w\" = <128 bytes>\n"
			      "%1 = Transpose(%0) {perm=[1,0]}\n"
			      "%2 = Transpose(%1) {perm=[1,0]}\n"
			      "%3 = Relu(%2)\n"      /* %2 is read again by %4 */
			      "%4 = Add(%3, %2)\n"   /* both die: into %3 */
			      "%5 = Relu(%10)\n"     /* [1,8] */
			      "%6 = Add(%5, %4)\n"   /* %5 is broadcast: into %4, input 1 */
			      "%7 = Add(%11, %6)\n"  /* not into the constant: into %6 */
			      "output %7 \"y\"\n");
	check_plan(g);
	ox_value *v = g->vals;
	assert_true(v[3].offset != v[2].offset);
	assert_int_equal(v[4].offset, v[3].offset);
	assert_int_equal(v[6].offset, v[4].offset);
	assert_true(v[6].offset != v[5].offset);
	assert_int_equal(v[7].offset, v[6].offset);
	assert_int_equal(v[11].offset, -1);
	ox_ir_free(g);
}

/* Reshape-like ops are their input's bytes: of an arena value, of a graph
 * input (not in the arena at all), and as a graph output, which keeps its
 * root alive to the end. */
static void test_views(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"views\" opset 13\n"
			      "input %0:f32[2,3,4] \"x\"\n"
			      "const %9:i64[2] \"s\" = [8, 3]\n"
			      "const %12:i64[1] \"ax\" = [0]\n"
			      "%1 = Transpose(%0) {perm=[0,2,1]}\n"
			      "%2 = Reshape(%1, %9)\n"
			      "%3 = Unsqueeze(%2, %12)\n"
			      "%4 = Transpose(%3) {perm=[0,2,1]}\n"
			      "%5 = Reshape(%0, %9)\n"
			      "%6 = Flatten(%5) {axis=1}\n"
			      "output %4 \"t\"\n"
			      "output %2 \"r\"\n"
			      "output %6 \"f\"\n");
	check_plan(g);
	ox_value *v = g->vals;
	int64_t off;
	assert_int_equal(v[2].offset, v[1].offset);
	assert_int_equal(v[3].offset, v[1].offset); /* a view of a view */
	assert_int_equal(ox_plan_storage(g, 3, &off), 1);
	assert_int_equal(off, 0);
	assert_int_equal(v[5].offset, -1);
	assert_int_equal(v[6].offset, -1);
	assert_int_equal(ox_plan_storage(g, 6, &off), 0);
	/* %1's bytes are an output (through %2): %4 must not take them */
	assert_true(v[4].offset != v[1].offset);
	int views = 0;
	for (int i = 0; i < g->nnodes; i++)
		views += ox_plan_is_view_node(g, &g->nodes[i]);
	assert_int_equal(views, 4);
	ox_ir_free(g);
}

/* Slices along the outermost non-1 axis are views at an offset; others are
 * copies. Two views of one buffer read by one node: no in-place there. */
static void test_slice_views(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"slices\" opset 13\n"
			      "input %0:f32[4,8] \"x\"\n"
			      "const %20:i64[1] \"s1\" = [1]\n"
			      "const %21:i64[1] \"e3\" = [3]\n"
			      "const %22:i64[1] \"s0\" = [0]\n"
			      "const %23:i64[1] \"e2\" = [2]\n"
			      "const %24:i64[1] \"a0\" = [0]\n"
			      "const %25:i64[1] \"a1\" = [1]\n"
			      "const %26:i64[1] \"st2\" = [2]\n"
			      "%1 = Relu(%0)\n"
			      "%2 = Slice(%1, %20, %21, %24)\n"      /* rows 1..2: a view at 32 bytes */
			      "%3 = Slice(%1, %22, %23, %24)\n"      /* rows 0..1: a view at 0 */
			      "%4 = Add(%2, %3)\n"                   /* overlapping views: not in place */
			      "%5 = Slice(%1, %22, %23, %25)\n"      /* columns: a copy */
			      "%6 = Slice(%1, %22, %21, %24, %26)\n" /* rows 0 and 2: a copy */
			      "output %4 \"a\"\n"
			      "output %5 \"c\"\n"
			      "output %6 \"d\"\n");
	check_plan(g);
	ox_value *v = g->vals;
	int64_t off;
	assert_int_equal(ox_plan_storage(g, 2, &off), 1);
	assert_int_equal(off, 32);
	assert_int_equal(v[2].offset, v[1].offset + 32);
	assert_int_equal(v[3].offset, v[1].offset);
	assert_int_equal(ox_plan_storage(g, 5, &off), 5);
	assert_int_equal(ox_plan_storage(g, 6, &off), 6);
	ox_ir_free(g);
}

/* Split pieces along an axis with only 1s before it, a Gather of one
 * index, and a Transpose that moves only a size-1 dim are views too. */
static void test_split_gather_transpose_views(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"pieces\" opset 13\n"
			      "input %0:f32[1,4,8] \"x\"\n"
			      "const %20:i64[] \"i\" = [2]\n"
			      "%1 = Relu(%0)\n"
			      "%2, %3 = Split(%1) {axis=1}\n"
			      "%4 = Gather(%1, %20) {axis=1}\n"
			      "%5 = Transpose(%1) {perm=[1,0,2]}\n"
			      "%6 = Transpose(%1) {perm=[0,2,1]}\n"
			      "%7 = Add(%2, %3)\n"
			      "output %7 \"s\"\n"
			      "output %4 \"g\"\n"
			      "output %5 \"t\"\n"
			      "output %6 \"u\"\n");
	check_plan(g);
	ox_value *v = g->vals;
	assert_int_equal(v[2].offset, v[1].offset);
	assert_int_equal(v[3].offset, v[1].offset + 64);
	assert_int_equal(v[4].offset, v[1].offset + 64);
	assert_int_equal(v[5].offset, v[1].offset);
	int64_t off;
	assert_int_equal(ox_plan_storage(g, 6, &off), 6); /* a real transpose */
	ox_ir_free(g);
}

static int noop_concats(ox_graph *g)
{
	int k = 0;
	for (int i = 0; i < g->nnodes; i++)
		k += g->nodes[i].op == OX_OP_Concat && ox_plan_is_noop(g, &g->nodes[i]);
	return k;
}

/* A Concat along axis 0: its inputs' producers (and the Relu in place
 * after one of them) write straight into the output; no copy is left. */
static void test_concat_in_place(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"cat\" opset 13\n"
			      "input %0:f32[8,4] \"x\"\n"
			      "input %1:f32[8,4] \"y\"\n"
			      "%2 = Transpose(%0) {perm=[1,0]}\n"
			      "%3 = Relu(%2)\n"
			      "%4 = Transpose(%1) {perm=[1,0]}\n"
			      "%5 = Concat(%3, %4) {axis=0}\n"
			      "%6 = Transpose(%5) {perm=[1,0]}\n"
			      "output %6 \"y\"\n");
	check_plan(g);
	ox_value *v = g->vals;
	assert_int_equal(ox_plan_get_stats(g)->nconcat, 1);
	assert_int_equal(noop_concats(g), 1);
	assert_int_equal(v[2].offset, v[5].offset);
	assert_int_equal(v[3].offset, v[5].offset);
	assert_int_equal(v[4].offset, v[5].offset + 128);
	assert_int_equal(g->arena_lower_bound, 256 + 256);
	ox_ir_free(g);
}

/* Not when an input is written over after the Concat (the Mul in place
 * of %2, which needs the Concat first, would overwrite the output's first
 * half while %8 still reads it), nor along an inner axis,
 * nor when the output would have to live long before the Concat while the
 * peak is there. */
static void test_concat_refused(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"cat\" opset 13\n"
			      "input %0:f32[8,4] \"x\"\n"
			      "%2 = Transpose(%0) {perm=[1,0]}\n"
			      "%4 = Transpose(%0) {perm=[1,0]}\n"
			      "%5 = Concat(%2, %4) {axis=0}\n"
			      "%8 = ReduceMax(%5) {axes=[0,1], keepdims=1}\n"
			      "%6 = Mul(%2, %8)\n"
			      "%7 = Concat(%6, %4) {axis=1}\n"
			      "%9 = Add(%5, %8)\n"
			      "output %9 \"a\"\n"
			      "output %7 \"b\"\n");
	check_plan(g);
	assert_int_equal(noop_concats(g), 0);
	ox_ir_free(g);

	g = plan_ok("graph \"late\" opset 11\n"
		    "input %0:f32[1,16] \"x\"\n"
		    "input %1:f32[16,16] \"z\"\n"
		    "%2 = Relu(%0)\n"                        /* 64 bytes, early */
		    "%3 = Transpose(%1) {perm=[1,0]}\n"       /* 1024 */
		    "%10 = Transpose(%3) {perm=[1,0]}\n"      /* 1024: the peak, 64 + 2048 */
		    "%4 = ReduceSum(%10) {axes=[0], keepdims=1}\n"
		    "%5 = Concat(%2, %4) {axis=0}\n"          /* in place: 128 + 2048 */
		    "output %5 \"y\"\n");
	check_plan(g);
	assert_int_equal(noop_concats(g), 0);
	assert_int_equal(g->arena_lower_bound, 64 + 1024 + 1024);
	ox_ir_free(g);
}

/* Two branches, each a big tensor reduced to a small one: the imported
 * order keeps both big ones live; the planner finishes one branch first.
 * (Of two inputs: of one, cse would make the branches one.) */
static void test_schedule_lower_bound(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"branches\" opset 11\n"
			      "input %0:f32[16,16] \"x\"\n"
			      "input %6:f32[16,16] \"w\"\n"
			      "%1 = Transpose(%0) {perm=[1,0]}\n"
			      "%2 = Transpose(%6) {perm=[1,0]}\n"
			      "%3 = ReduceSum(%1) {axes=[0,1], keepdims=0}\n"
			      "%4 = ReduceSum(%2) {axes=[0,1], keepdims=0}\n"
			      "%5 = Add(%3, %4)\n"
			      "output %5 \"y\"\n");
	check_plan(g);
	const ox_plan_stats *st = ox_plan_get_stats(g);
	/* imported: both 1024-byte transposes and one reduction live at once */
	assert_int_equal(st->onnx_order_lb, 1024 + 1024 + 64);
	/* chosen: one transpose, the first sum, the second transpose... */
	assert_int_equal(g->arena_lower_bound, 1024 + 64 + 64);
	assert_int_equal(g->arena_size, g->arena_lower_bound);
	assert_int_equal(g->nodes[1].op, OX_OP_ReduceSum); /* the order changed */
	assert_int_equal(st->no_reuse, 1024 + 1024 + 64 * 3);
	ox_ir_free(g);
}

/* The lower bound is the most bytes live at one step, and it is reached
 * where the report says. */
static void test_lower_bound_peak(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"peak\" opset 13\n"
			      "input %0:f32[4,8] \"x\"\n"
			      "input %9:f32[16,16] \"z\"\n"
			      "%1 = Transpose(%0) {perm=[1,0]}\n"   /* 128 */
			      "%2 = Transpose(%9) {perm=[1,0]}\n"   /* 1024 */
			      "%3 = Transpose(%2) {perm=[1,0]}\n"   /* 1024: here 128 + 2048 */
			      "%4 = Transpose(%1) {perm=[1,0]}\n"
			      "output %3 \"a\"\n"
			      "output %4 \"b\"\n");
	check_plan(g);
	const ox_plan_stats *st = ox_plan_get_stats(g);
	assert_int_equal(g->arena_lower_bound, 128 + 2048);
	assert_int_equal(g->nodes[st->peak_step].op, OX_OP_Transpose);
	int64_t live = 0;
	for (int i = 0; i < st->npeak_live; i++)
		live += bytes_of(&g->vals[st->peak_live[i]]);
	assert_int_equal(live, g->arena_lower_bound);
	ox_ir_free(g);
}

/* Run-time dims: every value is planned at its most (N = 8 here), a
 * Reshape to dims read from data keeps its input's count as its bound and
 * stays a view, and a value with no bound is refused by the bounds pass. */
static void test_runtime_dims(void **state)
{
	(void)state;
	ox_graph *g = plan_ok("graph \"g\" opset 13\n"
			      "range N=1..8\n"
			      "input %0:f32[N,4] \"x\"\n"
			      "input %1:i64[2] \"shape\"\n"
			      "%2 = Relu(%0)\n"
			      "%3 = Reshape(%2, %1)\n"
			      "%4 = Neg(%3)\n"
			      "output %4 \"y\"\n");
	check_plan(g);
	/* Relu: 8 x 4 floats (128 bytes); the Reshape is a view of it; Neg in place */
	assert_int_equal(g->arena_size, 128);
	const ox_value *y = out_named(g, "y");
	assert_int_equal(y->shape.rank, 2);
	assert_true(ox_dim_is_rt(g, y->shape.d[0]));
	assert_int_equal(ox_value_max_storage(g, y), 32);
	ox_ir_free(g);

	/* a Range to a limit read from data: no bound, the error names the value */
	g = ox_ir_parse("graph \"g\" opset 13\n"
			"input %0:i64[] \"limit\"\n"
			"const %1:i64[] \"zero\" = [0]\n"
			"const %2:i64[] \"one\" = [1]\n"
			"%3 = Range(%1, %0, %2)\n"
			"output %3 \"r\"\n", "t.ir");
	assert_non_null(g);
	g->opt = 0;
	int rc = ox_opt_run(g, 1, NULL);
	/* (until the data family reads Range's inputs at run time, inference
	 * asks for a constant instead: an error too) */
	assert_int_equal(rc, -1);
	ox_ir_free(g);
	g = ox_ir_parse("graph \"g\" opset 13\n"
			"input %0:i64[] \"limit\"\n"
			"const %1:i64[] \"zero\" = [0]\n"
			"const %2:i64[] \"one\" = [1]\n"
			"%3 = Range(%1, %0, %2)\n"
			"output %3 \"r\"\n", "t.ir");
	g->opt = 0;
	g->max_elems = 100; /* --max-elems 100 */
	rc = ox_opt_run(g, 1, NULL);
	if (!rc) /* with the data family's Range: planned at 100 */
		assert_int_equal(g->arena_size, 832);
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifetimes),
		cmocka_unit_test(test_runtime_dims),
		cmocka_unit_test(test_inplace_chain),
		cmocka_unit_test(test_inplace_refused),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_slice_views),
		cmocka_unit_test(test_split_gather_transpose_views),
		cmocka_unit_test(test_concat_in_place),
		cmocka_unit_test(test_concat_refused),
		cmocka_unit_test(test_schedule_lower_bound),
		cmocka_unit_test(test_lower_bound_peak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
