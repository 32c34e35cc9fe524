/* test_passes.c: cmocka tests of the optimization passes (the opt/ folder) on
 * graphs written in the IR text form.
 *
 * Each test parses a graph, runs one pass (or the pipeline up to a pass)
 * and compares the dump of the result with the expected text, so a failure
 * prints both graphs. The verifier (ox_ir_check) runs after every pass too.
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

static char *dump_str(ox_graph *g)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	ox_ir_dump(g, f);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	s[fread(s, 1, (size_t)n, f)] = 0;
	fclose(f);
	return s;
}

static void assert_dump(ox_graph *g, const char *want)
{
	char *got = dump_str(g);
	if (strcmp(got, want)) { /* fprintf: cmocka truncates long messages */
		fprintf(stderr, "--- expected:\n%s--- got:\n%s", want, got);
		fail_msg("the graph after the pass differs (both printed above)");
	}
	free(got);
}

/* Run passes by name, in the order given, verifying after each. */
static void run_passes(ox_graph *g, ...)
{
	va_list ap;
	va_start(ap, g);
	for (const char *name; (name = va_arg(ap, const char *));) {
		const ox_pass *p = ox_pipeline;
		while (p->name && strcmp(p->name, name))
			p++;
		if (!p->name)
			fail_msg("no pass named %s", name);
		if (p->run(g))
			fail_msg("pass %s failed (message above)", name);
		ox_ir_check(g, name);
	}
	va_end(ap);
}

/* The exporter idiom x.reshape(x.shape[0], -1): Shape -> Gather ->
 * Unsqueeze -> Concat becomes one constant shape for the Reshape. */
static const char *shape_chain =
	"graph \"chain\" opset 13\n"
	"input %0:f32[BATCH,3,4,5] \"x\"\n"
	"const %1:i64[] \"zero\" = [0]\n"
	"const %2:i64[1] \"axes\" = [0]\n"
	"const %3:i64[1] \"minus1\" = [-1]\n"
	"%4 = Shape(%0)  # \"shape\"\n"
	"%5 = Gather(%4, %1) {axis=0}  # \"gather\"\n"
	"%6 = Unsqueeze(%5, %2)  # \"unsqueeze\"\n"
	"%7 = Concat(%6, %3) {axis=0}  # \"concat\"\n"
	"%8 = Reshape(%0, %7)  # \"reshape\"\n"
	"output %8 \"y\"\n";

/* text with its one "BATCH" replaced by batch */
static void with_batch(char *out, size_t cap, const char *text, const char *batch)
{
	const char *at = strstr(text, "BATCH");
	assert_non_null(at);
	snprintf(out, cap, "%.*s%s%s", (int)(at - text), text, batch, at + 5);
}

static void test_fold_shape_chain(void **state)
{
	(void)state;
	char text[1024];
	with_batch(text, sizeof text, shape_chain, "2");
	ox_graph *g = parse_ok(text);
	run_passes(g, "fold", (const char *)NULL);
	assert_dump(g,
		"graph \"chain\" opset 13\n"
		"input %0:f32[2,3,4,5] \"x\"\n"
		"const %7:i64[2] \"%7\" = [2, -1]\n"
		"%8:f32[2,60] = Reshape(%0, %7)  # \"reshape\"\n"
		"output %8 \"y\"\n");
	ox_ir_free(g);

	/* a symbolic batch bound before the pass folds the same way */
	with_batch(text, sizeof text, shape_chain, "N");
	g = parse_ok(text);
	assert_int_equal(ox_ir_bind(g, "N", 6), 0);
	run_passes(g, "fold", (const char *)NULL);
	assert_int_equal(g->nnodes, 1);
	assert_int_equal(g->nodes[0].op, OX_OP_Reshape);
	const ox_tensor *t = g->vals[g->nodes[0].in[1]].data;
	assert_non_null(t);
	assert_int_equal(ox_tensor_get_i64(t, 0), 6);
	assert_int_equal(ox_tensor_get_i64(t, 1), -1);
	assert_int_equal(g->vals[8].shape.d[0], 6);
	assert_int_equal(g->vals[8].shape.d[1], 60);
	ox_ir_free(g);
}

/* Constant arithmetic folds; anything touching an input stays. */
static void test_fold_constants(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"cf\" opset 13\n"
		"input %0:f32[3] \"x\"\n"
		"const %1:f32[3] \"a\" = [1, 2, 3]\n"
		"const %2:f32[] \"b\" = [0.5]\n"
		"%3 = Mul(%1, %2)\n"
		"%4 = Add(%3, %1)\n"
		"%5 = Add(%0, %4)  # \"live\"\n"
		"output %5 \"y\"\n");
	run_passes(g, "fold", (const char *)NULL);
	assert_dump(g,
		"graph \"cf\" opset 13\n"
		"input %0:f32[3] \"x\"\n"
		"const %4:f32[3] \"%4\" = [1.5, 3, 4.5]\n"
		"%5:f32[3] = Add(%0, %4)  # \"live\"\n"
		"output %5 \"y\"\n");
	ox_ir_free(g);
}

static void test_dce(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"dce\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"const %9:f32[4] \"unused\" = [1, 2, 3, 4]\n"
		"%1:f32[4] = Relu(%0)  # \"keep\"\n"
		"%2:f32[4] = Neg(%0)  # \"dead1\"\n"
		"%3:f32[4] = Add(%2, %9)  # \"dead2\"\n"
		"%4:f32[4] = Abs(%1)  # \"keep2\"\n"
		"%5:f32[4], %6:bool[4] = Dropout(%4)  # \"keep3, mask unused\"\n"
		"output %5 \"y\"\n");
	run_passes(g, "dce", (const char *)NULL);
	assert_dump(g,
		"graph \"dce\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"%1:f32[4] = Relu(%0)  # \"keep\"\n"
		"%4:f32[4] = Abs(%1)  # \"keep2\"\n"
		"%5:f32[4], %6:bool[4] = Dropout(%4)  # \"keep3, mask unused\"\n"
		"output %5 \"y\"\n");
	assert_int_equal(g->nnodes, 3);
	assert_int_equal(g->vals[9].nuses, 0);
	ox_ir_free(g);
}

static void test_elide(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"el\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"%1:f32[4] = Identity(%0)  # \"id\"\n"
		"%2:f32[4] = Relu(%1)  # \"relu\"\n"
		"%3:f32[4] = Dropout(%2)  # \"drop\"\n"
		"%4:f32[4], %5:bool[4] = Dropout(%3)  # \"drop_mask_used\"\n"
		"%6:f32[4] = Identity(%4)  # \"id_out\"\n"
		"output %6 \"y\"\n"
		"output %5 \"mask\"\n");
	run_passes(g, "elide", (const char *)NULL);
	/* the graph output keeps its name "y" though it is now %4 */
	assert_dump(g,
		"graph \"el\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"%2:f32[4] = Relu(%0)  # \"relu\"\n"
		"%4:f32[4], %5:bool[4] = Dropout(%2)  # \"drop_mask_used\"\n"
		"output %4 \"y\"\n"
		"output %5 \"mask\"\n");
	ox_ir_free(g);

	/* Identity of a graph input straight to the output */
	g = parse_ok("graph \"el2\" opset 13\n"
		     "input %0:f32[4] \"x\"\n"
		     "%1:f32[4] = Identity(%0)\n"
		     "output %1 \"y\"\n");
	run_passes(g, "elide", (const char *)NULL);
	assert_dump(g,
		"graph \"el2\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"output %0 \"y\"\n");
	ox_ir_free(g);

	/* a Cast to the type it has goes (mask.to(torch.bool) of a bool mask);
	 * one to another type stays */
	g = parse_ok("graph \"el3\" opset 13\n"
		     "input %0:bool[4] \"m\"\n"
		     "%1:bool[4] = Cast(%0) {to=9}  # \"same\"\n"
		     "%2:f32[4] = Cast(%1) {to=1}  # \"other\"\n"
		     "output %2 \"y\"\n");
	run_passes(g, "elide", (const char *)NULL);
	assert_dump(g,
		"graph \"el3\" opset 13\n"
		"input %0:bool[4] \"m\"\n"
		"%2:f32[4] = Cast(%0) {to=1}  # \"other\"\n"
		"output %2 \"y\"\n");
	ox_ir_free(g);
}

/* fold, elide, dce in pipeline order on an exporter-like graph. */
static void test_pipeline_prefix(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"pipe\" opset 13\n"
		"bind N=2\n"
		"input %0:f32[N,8] \"x\"\n"
		"const %1:i64[1] \"minus1\" = [-1]\n"
		"const %2:i64[] \"one\" = [1]\n"
		"const %3:i64[1] \"axes\" = [0]\n"
		"%4 = Identity(%0)\n"
		"%5 = Shape(%4)\n"
		"%6 = Gather(%5, %2) {axis=0}\n"
		"%7 = Unsqueeze(%6, %3)\n"
		"%8 = Concat(%1, %7) {axis=0}\n"
		"%9 = Reshape(%4, %8)\n"
		"%10 = Dropout(%9) {ratio=0.5}\n"
		"%11 = Relu(%0)  # \"unused\"\n"
		"output %10 \"y\"\n");
	assert_int_equal(ox_opt_run(g, 1, "dce"), 0);
	assert_dump(g,
		"graph \"pipe\" opset 13\n"
		"bind N=2\n"
		"input %0:f32[2,8] \"x\"\n"
		"const %8:i64[2] \"%8\" = [-1, 8]\n"
		"%9:f32[2,8] = Reshape(%0, %8)\n"
		"output %9 \"y\"\n");
	ox_ir_free(g);
}

/* symshape: with a run-time batch the chain cannot fold, but the
 * Reshape's target, the Expand's shape and the ConstantOfShape's shape are
 * known as dims; the nodes stop reading them and the chains die. A target
 * read from data (here a NonZero count) stays an input. A ConstantOfShape
 * that an Add only broadcasts becomes a scalar. A Slice from 0 to the
 * batch is its output's shape; one from 1 keeps its inputs. */
static void test_symshape(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"sym\" opset 13\n"
		"range N=1..8\n"
		"input %0:f32[N,3,4,5] \"x\"\n"
		"input %1:f32[1,6] \"row\"\n"
		"input %2:f32[7] \"z\"\n"
		"const %3:i64[] \"zero\" = [0]\n"
		"const %4:i64[1] \"axes\" = [0]\n"
		"const %5:i64[1] \"minus1\" = [-1]\n"
		"const %6:i64[1] \"six\" = [6]\n"
		"%7 = Shape(%0)\n"
		"%8 = Gather(%7, %3) {axis=0}\n"
		"%9 = Unsqueeze(%8, %4)\n"
		"%10 = Concat(%9, %5) {axis=0}\n"
		"%11 = Reshape(%0, %10)  # \"flat\"\n"
		"%12 = Concat(%9, %6) {axis=0}\n"
		"%13 = Expand(%1, %12)  # \"rows\"\n"
		"%14 = ConstantOfShape(%12)  # \"zeros\"\n"
		"%15 = NonZero(%2)\n"
		"%16 = Shape(%15)\n"
		"%17 = Reshape(%2, %16)  # \"from data\"\n"
		"%18 = ConstantOfShape(%12) {value=tensor f32[1] [7]}  # \"sevens\"\n"
		"%19 = Add(%13, %18)  # \"plus\"\n"
		"input %20:f32[8,6] \"pe\"\n"
		"const %21:i64[1] \"zero1\" = [0]\n"
		"const %22:i64[1] \"one1\" = [1]\n"
		"%23 = Slice(%20, %21, %9, %4)  # \"pe rows\"\n"
		"%24 = Slice(%20, %22, %9, %4)  # \"from one\"\n"
		"output %23 \"s\"\n"
		"output %24 \"s1\"\n"
		"output %11 \"y\"\n"
		"output %13 \"e\"\n"
		"output %14 \"c\"\n"
		"output %17 \"d\"\n"
		"output %19 \"p\"\n");
	run_passes(g, "fold", "symshape", "dce", (const char *)NULL);
	char *got = dump_str(g);
	/* no Concat of the chains is left (Shape of x, Gather and Unsqueeze
	 * stay for the Slice from 1 only) */
	if (strstr(got, "Concat")) {
		fprintf(stderr, "%s", got);
		fail_msg("the shape chain of x is still computed");
	}
	free(got);
	int seen = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		if (!strcmp(n->name, "flat") || !strcmp(n->name, "rows") || !strcmp(n->name, "zeros")) {
			seen++;
			assert_int_equal(ox_attr_int(n, "ox_symshape", 0), 1);
			assert_null(ox_in(g, n, n->op == OX_OP_ConstantOfShape ? 0 : 1));
			const ox_value *y = ox_out(g, n, 0);
			assert_true(ox_dim_is_rt(g, y->shape.d[0]));
			assert_int_equal(y->shape.d[1], n->op == OX_OP_Reshape ? 60 : 6);
			/* inference of the detached node keeps the shape */
			ox_shape before = y->shape;
			assert_int_equal(ox_infer_node(g, (ox_node *)n), 0);
			assert_memory_equal(&before, &ox_out(g, n, 0)->shape, sizeof before);
		}
		if (!strcmp(n->name, "from data")) {
			seen++;
			assert_int_equal(ox_attr_int(n, "ox_symshape", 0), 0);
			assert_non_null(ox_in(g, n, 1));
		}
		/* pe[:N] is the output's shape from 0; pe[1:N] is not */
		if (!strcmp(n->name, "pe rows") || !strcmp(n->name, "from one")) {
			const int prefix = !strcmp(n->name, "pe rows");
			seen++;
			assert_int_equal(ox_attr_int(n, "ox_symshape", 0), prefix);
			assert_int_equal(ox_in(g, n, 2) == NULL, prefix);
			assert_true(ox_dim_is_rt(g, ox_out(g, n, 0)->shape.d[0]));
		}
		/* the sevens only broadcast: a scalar 7 instead, no fill */
		assert_string_not_equal(n->name, "sevens");
		if (!strcmp(n->name, "plus")) {
			seen++;
			const ox_value *c = ox_in(g, n, 1);
			assert_int_equal(c->kind, OX_V_CONST);
			assert_int_equal(c->shape.rank, 0);
			assert_true(ox_tensor_get_f64(c->data, 0) == 7);
		}
	}
	assert_int_equal(seen, 7);
	ox_ir_free(g);
}

/* A position embedding's rows by Range(0, N, 1), N a run-time length: a
 * Slice from 0 (ox_symshape) that is a view of the table, the Range and
 * its Shape chain gone; with the positions unsqueezed to [1, N] the Slice
 * then a Reshape (both views). Not: a Range from 1 (a Slice from 1 would
 * be no view, so the Gather stays), a table shorter than N's top. */
static void test_gather_range(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"pos\" opset 13\n"
		"range N=1..8\n"
		"input %0:i64[2,N] \"ids\"\n"
		"input %1:f32[8,4] \"pe\"\n"
		"input %2:f32[6,4] \"short\"\n"
		"const %3:i64[] \"zero\" = [0]\n"
		"const %4:i64[] \"one\" = [1]\n"
		"const %5:i64[1] \"axes\" = [0]\n"
		"%6 = Shape(%0)\n"
		"%7 = Gather(%6, %4) {axis=0}\n"
		"%8 = Range(%3, %7, %4)  # \"positions\"\n"
		"%9 = Gather(%1, %8)  # \"rows\"\n"
		"%10 = Unsqueeze(%8, %5)\n"
		"%11 = Gather(%1, %10)  # \"rows 1xN\"\n"
		"%12 = Range(%4, %7, %4)\n"
		"%13 = Gather(%1, %12)  # \"from one\"\n"
		"%14 = Gather(%2, %8)  # \"too short\"\n"
		"output %9 \"a\"\n"
		"output %11 \"b\"\n"
		"output %13 \"c\"\n"
		"output %14 \"d\"\n");
	run_passes(g, "fold", "symshape", "dce", (const char *)NULL);
	int seen = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		const int sliced = !strcmp(n->name, "rows") || !strcmp(n->name, "rows 1xN");
		if (sliced) {
			seen++;
			assert_int_equal(n->op, OX_OP_Slice);
			assert_int_equal(ox_attr_int(n, "ox_symshape", 0), 1);
			assert_null(ox_in(g, n, 1));
			assert_true(ox_dim_is_rt(g, ox_out(g, n, 0)->shape.d[0]));
			assert_int_equal(ox_out(g, n, 0)->shape.d[1], 4);
			assert_true(ox_plan_is_view_node(g, n));
		}
		if (!strcmp(n->name, "rows 1xN/rows")) {
			seen++;
			assert_int_equal(n->op, OX_OP_Reshape);
			assert_int_equal(ox_out(g, n, 0)->shape.rank, 3);
		}
		if (!strcmp(n->name, "from one") || !strcmp(n->name, "too short")) {
			seen++;
			assert_int_equal(n->op, OX_OP_Gather);
		}
	}
	assert_int_equal(seen, 5);
	ox_ir_free(g);
}

/* cse: equal constants one value, then equal nodes one node (Mul by the
 * equal 2.5s, the LeakyRelu of equal inputs and alpha); a different
 * factor or alpha stays, and so does a node whose output is a graph
 * output (each output keeps its value) */
static void test_cse(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"graph \"cse\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"const %1:f32[] \"a\" = [2.5]\n"
		"const %2:f32[] \"b\" = [2.5]\n"
		"const %3:f32[] \"c\" = [3]\n"
		"%4 = Mul(%0, %1)  # \"m1\"\n"
		"%5 = Mul(%0, %2)  # \"m2: m1 again\"\n"
		"%6 = Mul(%0, %3)  # \"m3: another factor\"\n"
		"%7 = LeakyRelu(%4) {alpha=0.1}  # \"l1\"\n"
		"%8 = LeakyRelu(%5) {alpha=0.1}  # \"l2: l1 again\"\n"
		"%9 = LeakyRelu(%4) {alpha=0.2}  # \"l3: another alpha\"\n"
		"%10 = Sum(%7, %8, %9, %6)  # \"sum\"\n"
		"%11 = Relu(%0)  # \"r1\"\n"
		"%12 = Relu(%0)  # \"r2: a graph output\"\n"
		"output %10 \"y\"\n"
		"output %11 \"r1\"\n"
		"output %12 \"r2\"\n");
	run_passes(g, "fold", "cse", (const char *)NULL);
	assert_dump(g,
		"graph \"cse\" opset 13\n"
		"input %0:f32[4] \"x\"\n"
		"const %1:f32[] \"a\" = [2.5]\n"
		"const %3:f32[] \"c\" = [3]\n"
		"%4:f32[4] = Mul(%0, %1)  # \"m1\"\n"
		"%6:f32[4] = Mul(%0, %3)  # \"m3: another factor\"\n"
		"%7:f32[4] = LeakyRelu(%4) {alpha=0.100000001}  # \"l1\"\n"
		"%9:f32[4] = LeakyRelu(%4) {alpha=0.200000003}  # \"l3: another alpha\"\n"
		"%10:f32[4] = Sum(%7, %7, %9, %6)  # \"sum\"\n"
		"%11:f32[4] = Relu(%0)  # \"r1\"\n"
		"%12:f32[4] = Relu(%0)  # \"r2: a graph output\"\n"
		"output %10 \"y\"\n"
		"output %11 \"r1\"\n"
		"output %12 \"r2\"\n");
	ox_ir_free(g);

	/* two ConstantOfShape whose shape inputs symshape detached read no
	 * inputs and have equal attributes, but their outputs differ in shape:
	 * both stay (merged, [N, 2] zeros stood for [N, 3]) */
	g = parse_ok(
		"graph \"cse2\" opset 13\n"
		"range N=1..8\n"
		"input %0:f32[N,3] \"x\"\n"
		"const %1:i64[] \"zero\" = [0]\n"
		"const %2:i64[1] \"axes\" = [0]\n"
		"const %3:i64[1] \"two\" = [2]\n"
		"const %4:i64[1] \"three\" = [3]\n"
		"%5 = Shape(%0)\n"
		"%6 = Gather(%5, %1) {axis=0}\n"
		"%7 = Unsqueeze(%6, %2)\n"
		"%8 = Concat(%7, %3) {axis=0}\n"
		"%9 = Concat(%7, %4) {axis=0}\n"
		"%10 = ConstantOfShape(%8)  # \"za\"\n"
		"%11 = ConstantOfShape(%9)  # \"zb\"\n"
		"%12 = Relu(%10)\n"
		"%13 = Relu(%11)\n"
		"output %12 \"a\"\n"
		"output %13 \"b\"\n");
	run_passes(g, "fold", "symshape", "cse", "dce", (const char *)NULL);
	int n = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Relu) {
			const ox_value *z = ox_in(g, &g->nodes[i], 0);
			assert_int_equal(z->shape.d[1], n++ ? 3 : 2);
			assert_int_equal(g->nodes[z->producer].op, OX_OP_ConstantOfShape);
		}
	assert_int_equal(n, 2);
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_shape_chain),
		cmocka_unit_test(test_fold_constants),
		cmocka_unit_test(test_dce),
		cmocka_unit_test(test_elide),
		cmocka_unit_test(test_pipeline_prefix),
		cmocka_unit_test(test_symshape),
		cmocka_unit_test(test_gather_range),
		cmocka_unit_test(test_cse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
