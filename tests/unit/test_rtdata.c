/* test_rtdata.c: cmocka tests of the data family on run-time dims
 * (ir/infer_data.c, docs/dynamic.md).
 *
 * The Slice lengths and first indices written as dims over a run-time
 * axis are checked against the ONNX clamping rules for every value the
 * axis takes in its range (the symbol's value set by hand, then
 * ox_dim_eval), for starts, ends and steps of every sign and size. The
 * other tests check which dims come out symbolic, which are data symbols
 * the node computes and with what bound, on graphs in the IR text form.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "family.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ox_graph *parse_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	return g;
}

/* infer every node in order, evaluating shape arithmetic on symbolic
 * values as fold does (ox_eval_sym); 0, or -1 at the first failure */
static int infer_all(ox_graph *g)
{
	for (int i = 0; i < g->nnodes; i++) {
		if (ox_infer_node(g, &g->nodes[i]))
			return -1;
		ox_eval_sym(g, &g->nodes[i]);
	}
	return 0;
}

static ox_graph *infer_ok(const char *text, const char *sym, int64_t lo, int64_t hi)
{
	ox_graph *g = parse_ok(text);
	if (sym && ox_ir_set_range(g, sym, lo, hi))
		fail_msg("no symbol %s", sym);
	if (infer_all(g))
		fail_msg("inference failed (message above) for:\n%s", text);
	return g;
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

/* d evaluated with the run-time symbol sym at value v */
static int64_t eval_at(ox_graph *g, const char *sym, int64_t v, ox_dim d)
{
	ox_dim s = ox_dim_sym(g, sym);
	ox_dexpr *e = &g->dexprs[-s - 1];
	e->value = v;
	int64_t r = ox_dim_eval(g, d);
	e->value = -1;
	return r;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ONNX Slice on an axis of d elements: first index and length */
static void ref_slice(int64_t d, int64_t s, int64_t e, int64_t p, int64_t *start, int64_t *len)
{
	if (s < 0)
		s = s < -d ? -1 - d : s + d; /* stays below 0: clamped below */
	if (e < 0)
		e = e < -d - 1 ? -2 - d : e + d;
	if (p > 0) {
		s = clamp(s, 0, d);
		e = clamp(e, 0, d);
		*len = e > s ? (e - s - 1) / p + 1 : 0;
	} else {
		s = clamp(s, 0, d - 1);
		e = clamp(e, -1, d - 1);
		*len = d > 0 && s > e ? (p == INT64_MIN ? 1 : (s - e - 1) / -p + 1) : 0;
	}
	*start = s;
}

/* every (start, end, step) below on an axis N in lo..hi, for every N */
static void check_slices(int64_t lo, int64_t hi)
{
	static const int64_t vals[] = {0, 1, 2, 3, 5, 7, -1, -2, -3, -6, -9, INT64_MAX, INT64_MIN, 2147483647,
				       -2147483647};
	static const int64_t steps[] = {1, 2, 3, -1, -2, -4, INT64_MAX, INT64_MIN};
	int nv = (int)(sizeof vals / sizeof *vals), np = (int)(sizeof steps / sizeof *steps);
	for (int i = 0; i < nv; i++)
		for (int j = 0; j < nv; j++)
			for (int k = 0; k < np; k++) {
				char text[1024];
				snprintf(text, sizeof text,
					 "graph \"sl\" opset 13\n"
					 "input %%0:f32[N,3] \"x\"\n"
					 "const %%1:i64[1] \"s\" = [%lld]\n"
					 "const %%2:i64[1] \"e\" = [%lld]\n"
					 "const %%3:i64[1] \"a\" = [0]\n"
					 "const %%4:i64[1] \"p\" = [%lld]\n"
					 "%%5 = Slice(%%0, %%1, %%2, %%3, %%4)\n",
					 (long long)vals[i], (long long)vals[j], (long long)steps[k]);
				ox_graph *g = infer_ok(text, "N", lo, hi);
				ox_dim start[OX_MAX_RANK], len[OX_MAX_RANK];
				int64_t step[OX_MAX_RANK];
				char rt[OX_MAX_RANK];
				assert_int_equal(ox_ir_data_slice(g, &g->nodes[0], &g->vals[0].shape, start, step, len, rt), 0);
				assert_int_equal(rt[0], 0);
				assert_true(len[0] == g->vals[5].shape.d[0]);
				int64_t l, h;
				assert_int_equal(ox_dim_range(g, len[0], &l, &h), 0);
				if (l < 0) { /* the bounds pass would refuse it */
					char e[256];
					ox_dim_str(g, len[0], e, sizeof e);
					fail_msg("N in %lld..%lld, slice %lld:%lld:%lld: length %s may be negative",
						 (long long)lo, (long long)hi, (long long)vals[i], (long long)vals[j],
						 (long long)steps[k], e);
				}
				for (int64_t d = lo; d <= hi; d++) {
					int64_t ws, wl;
					ref_slice(d, vals[i], vals[j], steps[k], &ws, &wl);
					int64_t gl = eval_at(g, "N", d, len[0]), gs = eval_at(g, "N", d, start[0]);
					if (gl != wl || (wl > 0 && gs != ws))
						fail_msg("N=%lld in %lld..%lld, slice %lld:%lld:%lld: got start %lld len %lld, "
							 "want %lld %lld", (long long)d, (long long)lo, (long long)hi,
							 (long long)vals[i], (long long)vals[j], (long long)steps[k],
							 (long long)gs, (long long)gl, (long long)ws, (long long)wl);
				}
				ox_ir_free(g);
			}
}

static void test_slice_closed_forms(void **state)
{
	(void)state;
	check_slices(0, 9);  /* an axis that may be empty */
	check_slices(3, 12); /* one that is never below 3: min() folds */
	check_slices(7, 7 + 6);
}

/* x[:, :S] with S from another input's shape; x[-3:] of an axis >= 3 */
static void test_slice_symbolic(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"s\" opset 13\n"
			       "input %0:f32[N,S,8] \"x\"\n"
			       "input %1:f32[T] \"w\"\n"
			       "const %2:i64[1] \"z\" = [0]\n"
			       "const %3:i64[1] \"one\" = [1]\n"
			       "const %4:i64[1] \"m3\" = [-3]\n"
			       "const %5:i64[1] \"big\" = [9223372036854775807]\n"
			       "%6 = Shape(%1)\n"
			       "%7 = Slice(%0, %2, %6, %3)\n"
			       "%8 = Slice(%0, %4, %5, %2)\n",
			       NULL, 0, 0);
	ox_ir_set_range(g, "N", 3, 10);
	ox_ir_set_range(g, "S", 1, 64);
	ox_ir_set_range(g, "T", 1, 64);
	assert_int_equal(infer_all(g), 0);
	assert_type(g, 7, "f32[N,(S min T),8]");
	assert_type(g, 8, "f32[3,S,8]");
	ox_ir_free(g);
}

/* starts read from data: the length is a data symbol of the output, at
 * most the axis */
static void test_slice_from_data(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"s\" opset 13\n"
			       "input %0:f32[N,20] \"x\"\n"
			       "input %1:i64[1] \"st\"\n"
			       "const %2:i64[1] \"en\" = [100]\n"
			       "const %3:i64[1] \"ax\" = [1]\n"
			       "%4 = Slice(%0, %1, %2, %3)\n",
			       "N", 1, 8);
	ox_value *y = &g->vals[4];
	assert_true(y->shape.d[0] == g->vals[0].shape.d[0]);
	const ox_dexpr *e = ox_dim_rtsym(g, y->shape.d[1]);
	assert_non_null(e);
	assert_int_equal(e->rt, OX_RT_DATA);
	assert_true(ox_dim_defined_by(g, y->shape.d[1], 4));
	assert_int_equal(e->hi, 20);
	ox_plan p;
	assert_int_equal(ox_ir_data_plan(g, &g->nodes[0], &p), 1); /* no plan: indices from data */
	ox_ir_free(g);

	/* axes from data: every axis may be sliced */
	g = infer_ok("graph \"s\" opset 13\n"
		     "input %0:f32[N,20] \"x\"\n"
		     "input %1:i64[1] \"ax\"\n"
		     "const %2:i64[1] \"st\" = [1]\n"
		     "const %3:i64[1] \"en\" = [3]\n"
		     "%4 = Slice(%0, %2, %3, %1)\n",
		     "N", 1, 8);
	assert_int_equal(ox_dim_rtsym(g, g->vals[4].shape.d[0])->hi, 8);
	assert_int_equal(ox_dim_rtsym(g, g->vals[4].shape.d[1])->hi, 20);
	ox_ir_free(g);
}

/* Range(0, S, 1), Range(2, 2S, 3) from a shape; from data: unbounded */
static void test_range(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"r\" opset 13\n"
			       "input %0:f32[S] \"x\"\n"
			       "const %1:i64[] \"z\" = [0]\n"
			       "const %2:i64[] \"one\" = [1]\n"
			       "const %3:i64[] \"two\" = [2]\n"
			       "const %4:i64[] \"three\" = [3]\n"
			       "%5 = Shape(%0)\n"
			       "%6 = Gather(%5, %1)\n"
			       "%7 = Range(%1, %6, %2)\n"
			       "%8 = Mul(%6, %3)\n"
			       "%9 = Range(%3, %8, %4)\n",
			       "S", 1, 100);
	assert_type(g, 7, "i64[S]");
	for (int64_t s = 1; s <= 100; s++) {
		int64_t want = (2 * s - 2 + 2) / 3; /* ceil((2s - 2) / 3) */
		assert_int_equal(eval_at(g, "S", s, g->vals[9].shape.d[0]), want);
	}
	ox_ir_free(g);

	g = infer_ok("graph \"r\" opset 13\n"
		     "input %0:f32[] \"s\"\n"
		     "input %1:f32[] \"l\"\n"
		     "input %2:f32[] \"d\"\n"
		     "%3 = Range(%0, %1, %2)\n",
		     NULL, 0, 0);
	const ox_dexpr *e = ox_dim_rtsym(g, g->vals[3].shape.d[0]);
	assert_non_null(e);
	assert_int_equal(e->rt, OX_RT_DATA);
	assert_int_equal(e->hi, -1); /* the bounds pass asks for --max */
	ox_ir_free(g);
}

/* ConstantOfShape(Shape(x)) has x's dims; Expand to Shape(x); Tile by Shape(z) */
static void test_shape_of_shape(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"c\" opset 13\n"
			       "input %0:f32[N,S,8] \"x\"\n"
			       "input %1:f32[1,S,1] \"y\"\n"
			       "input %2:f32[2,3] \"w\"\n"
			       "input %3:f32[A,2] \"z\"\n"
			       "%4 = Shape(%0)\n"
			       "%5 = ConstantOfShape(%4)\n"
			       "%6 = Expand(%1, %4)\n"
			       "%7 = Shape(%3)\n"
			       "%8 = Tile(%2, %7)\n",
			       NULL, 0, 0);
	ox_ir_set_range(g, "N", 1, 4);
	ox_ir_set_range(g, "S", 1, 4);
	ox_ir_set_range(g, "A", 1, 4);
	assert_int_equal(infer_all(g), 0);
	assert_type(g, 5, "f32[N,S,8]");
	assert_type(g, 6, "f32[N,S,8]");
	assert_type(g, 8, "f32[(A*2),6]");
	/* Tile's plan: the repeat is the quotient, exactly */
	ox_plan p;
	assert_int_equal(ox_ir_data_plan(g, &g->nodes[4], &p), 0);
	assert_true(p.ax[0].n == ox_dim_sym(g, "A"));
	assert_true(p.ax[2].n == 2);
	ox_ir_free(g);
}

/* Expand to a shape read from data: the dims where the input is never 1
 * are the input's; the others data symbols with no bound */
static void test_expand_from_data(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"e\" opset 13\n"
			       "input %0:f32[N,1,5] \"x\"\n"
			       "input %1:i64[4] \"s\"\n"
			       "%2 = Expand(%0, %1)\n",
			       "N", 2, 9);
	ox_value *y = &g->vals[2];
	assert_int_equal(y->shape.rank, 4);
	assert_int_equal(ox_dim_rtsym(g, y->shape.d[0])->rt, OX_RT_DATA);
	assert_true(y->shape.d[1] == ox_dim_sym(g, "N")); /* never 1 */
	assert_int_equal(ox_dim_rtsym(g, y->shape.d[2])->hi, -1);
	assert_int_equal(y->shape.d[3], 5);
	ox_ir_free(g);
}

/* PyTorch's expand(n, -1, -1): the shape [n, -1, -1] made Where(Equal(s,
 * -1), 1, s) = [n, 1, 1] (a dim is never -1), so Expand's dims are known;
 * Equal of two different dims stays unknown */
/* Equal of a run-time dim and a constant its range excludes is known
 * (0), as a Where over a Reshape target needs it (ocr_dynwidth of
 * tests/e2e/dyn.txt); a constant inside the range stays unknown, and two
 * dims whose ranges do not meet are not equal */
static void test_equal_by_range(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"x\" opset 13\n"
			       "input %0:f32[W] \"x\"\n"
			       "input %1:f32[V] \"y\"\n"
			       "const %2:i64[1] \"z\" = [0]\n"
			       "const %3:i64[1] \"f\" = [40]\n"
			       "%4 = Shape(%0)\n"
			       "%5 = Equal(%4, %2)\n"
			       "%6 = Equal(%4, %3)\n"
			       "%7 = Shape(%1)\n"
			       "%8 = Equal(%4, %7)\n",
			       NULL, 0, 0);
	ox_ir_set_range(g, "W", 32, 1280);
	ox_ir_set_range(g, "V", 1, 16);
	assert_int_equal(infer_all(g), 0);
	assert_true(g->vals[5].nsv == 1 && g->vals[5].sv[0].kind == OX_SV_CONST && g->vals[5].sv[0].c == 0);
	assert_true(g->vals[6].nsv == 0); /* 40 is in 32..1280 */
	assert_true(g->vals[8].nsv == 1 && g->vals[8].sv[0].kind == OX_SV_CONST && g->vals[8].sv[0].c == 0);
	ox_ir_free(g);
}

static void test_expand_minus_one(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"x\" opset 13\n"
			       "input %0:f32[B,3] \"x\"\n"
			       "input %1:f32[1,1,8] \"cls\"\n"
			       "input %12:f32[C] \"z\"\n"
			       "const %2:i64[1] \"i\" = [0]\n"
			       "const %3:i64[2] \"m\" = [-1, -1]\n"
			       "const %4:i64[3] \"neg\" = [-1, -1, -1]\n"
			       "const %5:i64[3] \"one\" = [1, 1, 1]\n"
			       "%6 = Shape(%0)\n"
			       "%7 = Gather(%6, %2)\n"
			       "%8 = Concat(%7, %3) {axis=0}\n"
			       "%9 = Equal(%8, %4)\n"
			       "%10 = Where(%9, %5, %8)\n"
			       "%11 = Expand(%1, %10)\n"
			       "%13 = Shape(%12)\n"
			       "%14 = Equal(%7, %13)\n",
			       NULL, 0, 0);
	ox_ir_set_range(g, "B", 1, 8);
	ox_ir_set_range(g, "C", 1, 8);
	assert_int_equal(infer_all(g), 0);
	assert_type(g, 11, "f32[B,1,8]");
	ox_value *e = &g->vals[9];
	assert_int_equal(e->nsv, 3);
	for (int i = 0; i < 3; i++)
		assert_true(e->sv[i].kind == OX_SV_CONST && e->sv[i].c == (i > 0));
	assert_true(g->vals[14].nsv == 0); /* B == C is not known */
	ox_ir_free(g);
}

/* Split: sizes from data at most the axis; num_outputs on a run-time axis
 * gives a last chunk that is never negative */
static void test_split(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"s\" opset 18\n"
			       "input %0:f32[2,N] \"x\"\n"
			       "input %1:i64[2] \"sp\"\n"
			       "%2, %3 = Split(%0, %1) {axis=1}\n",
			       "N", 1, 30);
	ox_dim sizes[2];
	int axis;
	assert_int_equal(ox_ir_data_split(g, &g->nodes[0], &axis, sizes), 1);
	assert_int_equal(ox_dim_rtsym(g, g->vals[2].shape.d[1])->hi, 30);
	assert_true(ox_dim_defined_by(g, g->vals[3].shape.d[1], 3));
	ox_ir_free(g);

	g = infer_ok("graph \"s\" opset 18\n"
		     "input %0:f32[N] \"x\"\n"
		     "%1, %2, %3, %4 = Split(%0) {num_outputs=4}\n",
		     "N", 7, 14);
	for (int k = 1; k <= 4; k++) {
		int64_t lo, hi;
		assert_int_equal(ox_dim_range(g, g->vals[k].shape.d[0], &lo, &hi), 0);
		assert_true(lo >= 0);
	}
	for (int64_t n = 7; n <= 14; n++) {
		int64_t c = (n + 3) / 4, sum = 0;
		for (int k = 1; k <= 4; k++)
			sum += eval_at(g, "N", n, g->vals[k].shape.d[0]);
		assert_int_equal(eval_at(g, "N", n, g->vals[1].shape.d[0]), c);
		assert_int_equal(sum, n); /* so the node's check passes */
	}
	ox_ir_free(g);
}

/* Squeeze and Unsqueeze with axes from data; squeezing a run-time dim is
 * refused (a view cannot check it is 1) */
static void test_squeeze(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"q\" opset 13\n"
			       "input %0:f32[N,1,6] \"x\"\n"
			       "input %1:i64[1] \"ax\"\n"
			       "input %2:i64[2] \"ax2\"\n"
			       "%3 = Squeeze(%0, %1)\n"
			       "%4 = Unsqueeze(%0, %2)\n",
			       "N", 2, 9);
	assert_int_equal(g->vals[3].shape.rank, 2);
	assert_int_equal(ox_dim_rtsym(g, g->vals[3].shape.d[0])->hi, 9);
	assert_int_equal(g->vals[3].cap, 54);
	assert_int_equal(g->vals[4].shape.rank, 5);
	ox_ir_free(g);

	g = parse_ok("graph \"q\" opset 13\n"
		     "input %0:f32[N,1,6] \"x\"\n"
		     "const %1:i64[1] \"ax\" = [0]\n"
		     "%2 = Squeeze(%0, %1)\n");
	ox_ir_set_range(g, "N", 1, 9);
	fprintf(stderr, "(an error message is expected next)\n");
	assert_int_equal(infer_all(g), -1);
	ox_ir_free(g);
}

/* Pad with constant pads on a run-time axis: the plan crops, then pads */
static void test_pad_plan(void **state)
{
	(void)state;
	ox_graph *g = infer_ok("graph \"p\" opset 13\n"
			       "input %0:f32[N,6] \"x\"\n"
			       "const %1:i64[4] \"p\" = [1, 0, -1, 3]\n"
			       "%2 = Pad(%0, %1) {mode=\"reflect\"}\n",
			       "N", 2, 9);
	assert_type(g, 2, "f32[N,9]");
	ox_plan p;
	assert_int_equal(ox_ir_data_plan(g, &g->nodes[0], &p), 0);
	assert_int_equal(p.ax[0].kind, OX_PLAN_REFLECT);
	assert_int_equal(p.ax[0].a, 1);
	assert_int_equal(eval_at(g, "N", 5, p.ax[0].m), 4); /* one cropped at the end */
	assert_int_equal(p.ax[1].kind, OX_PLAN_REFLECT);
	assert_int_equal(p.ax[1].m, 6);
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slice_closed_forms),
		cmocka_unit_test(test_slice_symbolic),
		cmocka_unit_test(test_slice_from_data),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_shape_of_shape),
		cmocka_unit_test(test_expand_from_data),
		cmocka_unit_test(test_expand_minus_one),
		cmocka_unit_test(test_equal_by_range),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_squeeze),
		cmocka_unit_test(test_pad_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
