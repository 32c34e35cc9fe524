/* test_reduce.c: cmocka tests of the reduce family with run-time shapes
 * (docs/dynamic.md): Reduce* axes read from data when the program runs,
 * and which nodes with run-time dims take the f32 row kernels.
 *
 * The inference tests compare the inferred types as text and the bounds
 * of the data symbols. The run tests compile the generated C with the
 * host's C compiler ($CC, default cc) and a small driver, run it on the
 * axes each case lists, and compare every reduction kind against the
 * compile-time evaluator (ir/eval_reduce.c, in double), which folds the
 * same graph with the axes given as a constant: the node's run-time
 * checks (repeated or out-of-range axes return _ERR_SHAPE), the output
 * dims it computes and its loop nest are what is tested. And the table
 * of codegen/reduction.h, which both targets render: each kind's
 * accumulator type, start, term and result.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "family.h"
#include "../opt/opt.h"
#include "../codegen/cg.h"
#include "../codegen/codegen.h"
#include "../codegen/reduction.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ox_graph *parse_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	return g;
}

/* the type of value id as "dtype[dims]" */
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

static int infer_all(ox_graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (ox_infer_node(g, &g->nodes[i]))
			return -1;
	return 0;
}

/* a reduction of x (TYPE) over axes (AXES, an input) with ATTRS, inferred */
static ox_graph *reduce_graph(const char *op, const char *x, const char *axes, const char *attrs)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "graph \"r\" opset 18\ninput %%0:%s \"x\"\ninput %%1:%s \"axes\"\n%%2 = %s(%%0, %%1) {%s}\n"
		 "output %%2 \"y\"\n", x, axes, op, attrs);
	ox_graph *g = parse_ok(text);
	ox_ir_set_range(g, "N", 1, 8);
	ox_ir_set_range(g, "A", 0, 3);
	return g;
}

/* the top of output dim k (a data symbol of the node) */
static int64_t data_hi(ox_graph *g, int k)
{
	const ox_dexpr *e = ox_dim_rtsym(g, g->vals[2].shape.d[k]);
	assert_non_null(e);
	assert_int_equal(e->rt, OX_RT_DATA);
	assert_true(ox_dim_defined_by(g, g->vals[2].shape.d[k], 2));
	return e->hi;
}

/* keepdims: every dim 1 or the input's, at most the larger (a reduced
 * empty axis gives 1); a dim of 1 stays 1 */
static void test_infer_rt_axes_keepdims(void **state)
{
	(void)state;
	ox_graph *g = reduce_graph("ReduceSum", "f32[N,1,0,5]", "i64[2]", "keepdims=1");
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[$y:0,1,$y:2,$y:3]");
	assert_int_equal(data_hi(g, 0), 8);
	assert_int_equal(data_hi(g, 2), 1);
	assert_int_equal(data_hi(g, 3), 5);
	ox_ir_free(g);
	/* an axes tensor whose length is known only at run time */
	g = reduce_graph("ReduceMax", "f32[3,4]", "i64[A]", "keepdims=1");
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[$y:0,$y:1]");
	ox_ir_free(g);
}

/* keepdims=0: rank - len(axes); output dim j is one of input dims
 * j..j+len, at most the largest of them */
static void test_infer_rt_axes_dropped(void **state)
{
	(void)state;
	ox_graph *g = reduce_graph("ReduceMean", "f32[6,4,N,1]", "i64[1]", "keepdims=0");
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[$y:0,$y:1,$y:2]");
	assert_int_equal(data_hi(g, 0), 6);
	assert_int_equal(data_hi(g, 1), 8);
	assert_int_equal(data_hi(g, 2), 8);
	ox_ir_free(g);
	g = reduce_graph("ReduceL2", "f32[1,1,7]", "i64[2]", "keepdims=0");
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[$y:0]");
	assert_int_equal(data_hi(g, 0), 7);
	ox_ir_free(g);
	g = reduce_graph("ReduceL2", "f32[1,1,7]", "i64[2]", "keepdims=0");
	g->vals[0].shape.d[2] = 1; /* every candidate is 1: the dim is 1 */
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[1]");
	ox_ir_free(g);
	/* the rank depends on a run-time length: refused */
	g = reduce_graph("ReduceSum", "f32[3,4]", "i64[A]", "keepdims=0");
	fprintf(stderr, "(an error message is expected next)\n");
	assert_int_equal(infer_all(g), -1);
	ox_ir_free(g);
	/* more axes than dims */
	g = reduce_graph("ReduceSum", "f32[3,4]", "i64[3]", "keepdims=1");
	fprintf(stderr, "(an error message is expected next)\n");
	assert_int_equal(infer_all(g), -1);
	ox_ir_free(g);
}

/* a constant axes input or an empty one needs no run-time axes */
static void test_infer_const_axes(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"r\" opset 18\ninput %0:f32[3,4,5] \"x\"\n"
			       "const %1:i64[2] \"axes\" = [-1, 0]\n%2 = ReduceSum(%0, %1) {keepdims=0}\noutput %2 \"y\"\n");
	int mask[OX_MAX_RANK];
	assert_int_equal(ox_reduce_axes(g, &g->nodes[0], mask), 0);
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[4]");
	ox_ir_free(g);
	g = reduce_graph("ReduceSum", "f32[3,4]", "i64[0]", "keepdims=1, noop_with_empty_axes=1");
	assert_int_equal(ox_reduce_axes(g, &g->nodes[0], mask), 0);
	assert_int_equal(infer_all(g), 0);
	assert_string_equal(type_str(g, 2), "f32[3,4]");
	ox_ir_free(g);
	g = reduce_graph("ReduceSum", "f32[3,4]", "i64[1]", "keepdims=1");
	assert_int_equal(ox_reduce_axes(g, &g->nodes[0], mask), 1); /* read when the program runs */
	ox_ir_free(g);
}

/* ---- the row kernels with run-time dims ---- */

static int rows_ok(const char *text)
{
	ox_graph *g = parse_ok(text);
	g->target = ox_target_find("x86-64-v3");
	g->opt = 1;
	ox_ir_set_range(g, "N", 1, 64);
	ox_ir_set_range(g, "S", 2, 300);
	assert_int_equal(ox_opt_run(g, 1, "plan"), 0);
	int ok = -1;
	for (int i = 0; i < g->nnodes; i++)
		ok = ox_cg_rows_ok(g, &g->nodes[i]);
	ox_ir_free(g);
	return ok;
}

/* run-time row counts and row lengths take the vector kernels; Scale/B
 * whose dims are not X's own, or an axis with run-time dims inside it, do
 * not */
static void test_rows_rt(void **state)
{
	(void)state;
	static const struct {
		const char *node, *x, *extra;
		int want;
	} c[] = {
		{"LayerNormalization(%0, %1, %2) {axis=-1}", "f32[N,S,37]",
		 "const %1:f32[37] \"s\" = <148 bytes>\nconst %2:f32[37] \"b\" = <148 bytes>\n", 1},
		{"LayerNormalization(%0, %1) {axis=1}", "f32[N,S]", "input %1:f32[S] \"s\"\n", 1},
		{"LayerNormalization(%0, %1) {axis=1}", "f32[N,S]", "input %1:f32[N] \"s\"\n", 0},
		{"Softmax(%0) {axis=-1}", "f32[N,S]", "", 1},
		{"Softmax(%0) {axis=1}", "f32[N,S,4]", "", 0},
		{"LogSoftmax(%0) {axis=1}", "f32[N,3,S]", "", 1},
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		char text[1024];
		snprintf(text, sizeof text, "graph \"r\" opset %d\ninput %%0:%s \"x\"\n%s%%3 = %s\noutput %%3 \"y\"\n",
			 strstr(c[k].node, "LogSoftmax") ? 11 : 17, c[k].x, c[k].extra, c[k].node);
		if (rows_ok(text) != c[k].want)
			fail_msg("row kernels %s for:\n%s", c[k].want ? "not taken" : "taken", text);
	}
}

/* ---- run-time axes, compiled and run ---- */

#define NOPS 10
static const char *const ops[NOPS] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
				       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

/* x[i] of the test input: small values, positive where a log needs them */
static double xval(int i, int isf)
{
	static const int v[] = {3, -1, 2, 5, -4, 1, 2, -2, 4, 1, -3, 2, 1};
	return isf ? 0.25 + (double)((i * 7) % 13) / 8 : (double)v[i % 13];
}

/* Graph: every Reduce* of x (dtype dt, 2x3x4) over `axes` with keepdims
 * and noop; the axes an input of length alen (-1: run-time, A in 0..3),
 * or, when cax is not NULL, the constant cax[0..alen). */
static ox_graph *all_ops(int dt, int keep, int noop, int alen, const int64_t *cax)
{
	char text[4096], a[64] = "";
	int at = snprintf(text, sizeof text, "graph \"r\" opset 18\ninput %%0:%s[2,3,4] \"x\"\n", ox_dtype_name(dt));
	if (alen < 0)
		snprintf(a, sizeof a, "A");
	else
		snprintf(a, sizeof a, "%d", alen);
	if (!cax) {
		at += snprintf(text + at, sizeof text - at, "input %%1:i64[%s] \"axes\"\n", a);
	} else {
		at += snprintf(text + at, sizeof text - at, "const %%1:i64[%d] \"axes\" = [", alen);
		for (int k = 0; k < alen; k++)
			at += snprintf(text + at, sizeof text - at, "%s%lld", k ? ", " : "", (long long)cax[k]);
		at += snprintf(text + at, sizeof text - at, "]\n");
	}
	for (int k = 0; k < NOPS; k++)
		at += snprintf(text + at, sizeof text - at, "%%%d = %s(%%0, %%1) {keepdims=%d, noop_with_empty_axes=%d}\n",
			       10 + k, ops[k], keep, noop);
	for (int k = 0; k < NOPS; k++)
		at += snprintf(text + at, sizeof text - at, "output %%%d \"y%d\"\n", 10 + k, k);
	ox_graph *g = parse_ok(text);
	if (alen < 0)
		ox_ir_set_range(g, "A", 0, 3);
	g->opt = 1;
	/* the input's data, for the constant graph to fold */
	return g;
}

static int sh(const char *cmd)
{
	int rc = system(cmd);
	if (rc)
		fprintf(stderr, "`%s` failed (%d)\n", cmd, rc);
	return rc;
}

/* Compile the graph with run-time axes into dir/p.c and a driver that runs
 * it once per axes list in sets (`n` lists, each -1 terminated), printing
 * per run the return code, then per output its rank, dims and elements. */
static void build(ox_graph *g, const char *dir, int dt, int sets[][5], int n)
{
	char path[512], cmd[2048];
	assert_int_equal(ox_opt_run(g, 1, NULL), 0);
	snprintf(path, sizeof path, "%s/p.c", dir);
	ox_cg_opts o = {.out_c = path, .prefix = "p", .model = "t.ir", .weights = OX_CG_WEIGHTS_C};
	assert_int_equal(ox_cg_emit_c(g, &o), 0);
	snprintf(path, sizeof path, "%s/drv.c", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	const char *T = dt == OX_F32 ? "float" : "int32_t";
	fprintf(f, "#include \"p.h\"\n#include <stdio.h>\n#include <string.h>\n");
	fprintf(f, "static %s x[24];\nstatic _Alignas(64) unsigned char arena[P_ARENA_SIZE + 64];\n", T);
	fprintf(f, "static %s y[%d][64];\n", T, NOPS);
	fprintf(f, "int main(void)\n{\n\tstatic const int sets[%d][5] = {", n);
	for (int s = 0; s < n; s++)
		fprintf(f, "{%d, %d, %d, %d, %d}, ", sets[s][0], sets[s][1], sets[s][2], sets[s][3], sets[s][4]);
	fprintf(f, "};\n\tfor (int i = 0; i < 24; i++)\n");
	if (dt == OX_F32)
		fprintf(f, "\t\tx[i] = 0.25f + (float)((i * 7) %% 13) / 8;\n");
	else
		fprintf(f, "\t\tx[i] = (int32_t[]){3, -1, 2, 5, -4, 1, 2, -2, 4, 1, -3, 2, 1}[i %% 13];\n");
	fprintf(f, "\tfor (int s = 0; s < %d; s++) {\n"
		   "\t\tint64_t axes[5], xs[3] = {2, 3, 4}, as[1], ys[%d][3];\n"
		   "\t\tint na = 0;\n"
		   "\t\twhile (sets[s][na] != -9)\n\t\t\taxes[na] = sets[s][na], na++;\n"
		   "\t\tas[0] = na;\n"
		   "\t\tconst void *in[2] = {x, axes};\n"
		   "\t\tconst int64_t *ins[2] = {xs, as};\n"
		   "\t\tvoid *out[%d];\n\t\tint64_t *outs[%d];\n"
		   "\t\tfor (int k = 0; k < %d; k++)\n\t\t\tout[k] = y[k], outs[k] = ys[k];\n"
		   "\t\tint rc = p_run_shaped(arena, in, ins, out, outs);\n"
		   "\t\tprintf(\"rc %%d\\n\", rc);\n"
		   "\t\tfor (int k = 0; k < %d && !rc; k++) {\n"
		   "\t\t\tint r = p_outputs[k].rank;\n\t\t\tlong m = 1;\n"
		   "\t\t\tprintf(\"%%d\", r);\n"
		   "\t\t\tfor (int d = 0; d < r; d++)\n\t\t\t\tprintf(\" %%lld\", (long long)ys[k][d]), m *= ys[k][d];\n"
		   "\t\t\tfor (long i = 0; i < m; i++)\n",
		n, NOPS, NOPS, NOPS, NOPS, NOPS);
	if (dt == OX_F32)
		fprintf(f, "\t\t\t\tprintf(\" %%a\", (double)y[k][i]);\n");
	else
		fprintf(f, "\t\t\t\tprintf(\" %%ld\", (long)y[k][i]);\n");
	fprintf(f, "\t\t\tprintf(\"\\n\");\n\t\t}\n\t}\n\treturn 0;\n}\n");
	fclose(f);
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	snprintf(cmd, sizeof cmd, "cd %s && %s -std=c11 -O1 -w -o drv drv.c p.c p_weights.c -lm", dir, cc);
	assert_int_equal(sh(cmd), 0);
}

/* the reference: fold the graph with the axes as a constant (eval_reduce) */
static ox_graph *folded(int dt, int keep, int noop, const int *set)
{
	int64_t cax[5];
	int na = 0;
	while (set[na] != -9)
		cax[na] = set[na], na++;
	ox_graph *g = all_ops(dt, keep, noop, na, cax);
	ox_tensor *t = ox_ir_new_tensor(g, dt, &g->vals[0].shape);
	for (int i = 0; i < 24; i++)
		ox_tensor_set_f64(t, i, xval(i, dt == OX_F32));
	ox_ir_set_const(g, 0, t);
	g->ninputs = 0;
	assert_int_equal(ox_opt_run(g, 1, "fold"), 0);
	return g;
}

static void check_runs(int dt, int keep, int noop, int alen, int sets[][5], int n)
{
	char dir[] = "/tmp/oxredXXXXXX", cmd[600], line[8192];
	assert_non_null(mkdtemp(dir));
	ox_graph *g = all_ops(dt, keep, noop, alen, NULL);
	build(g, dir, dt, sets, n);
	ox_ir_free(g);
	snprintf(cmd, sizeof cmd, "%s/drv", dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	for (int s = 0; s < n; s++) {
		assert_non_null(fgets(line, sizeof line, p));
		int rc = atoi(line + 3);
		/* repeated or out-of-range axes: the run refuses them */
		int bad = 0, seen[3] = {0};
		for (int k = 0; sets[s][k] != -9; k++) {
			int a = sets[s][k] < 0 ? sets[s][k] + 3 : sets[s][k];
			bad |= a < 0 || a > 2 || seen[a];
			if (a >= 0 && a <= 2)
				seen[a] = 1;
		}
		if (bad) {
			if (rc != -11)
				fail_msg("axes set %d: rc %d, want _ERR_SHAPE (-11)", s, rc);
			continue;
		}
		assert_int_equal(rc, 0);
		ox_graph *r = folded(dt, keep, noop, sets[s]);
		for (int k = 0; k < NOPS; k++) {
			assert_non_null(fgets(line, sizeof line, p));
			const ox_value *y = &r->vals[r->outputs[k]];
			if (dt != OX_F32 && !strcmp(ops[k], "ReduceLogSum"))
				continue; /* the log of a negative integer sum has no integer value */
			if (!y->data)
				fail_msg("%s: the reference did not fold", ops[k]);
			char *q = line;
			int rank = (int)strtol(q, &q, 10);
			assert_int_equal(rank, y->shape.rank);
			for (int d = 0; d < rank; d++)
				assert_int_equal(strtoll(q, &q, 10), y->shape.d[d]);
			for (int64_t i = 0; i < ox_tensor_numel(y->data); i++) {
				double want = ox_tensor_get_f64(y->data, i);
				double got = dt == OX_F32 ? strtod(q, &q) : (double)strtoll(q, &q, 10);
				if (dt == OX_F32 ? !(fabs(got - want) <= 1e-6 + 1e-5 * fabs(want)) : got != want)
					fail_msg("%s keepdims=%d noop=%d axes set %d: element %lld is %.9g, want %.9g", ops[k],
						 keep, noop, s, (long long)i, got, want);
			}
		}
		ox_ir_free(r);
	}
	pclose(p);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	sh(cmd);
}

/* the axes as the spec reads them: negative from the end, any order,
 * none (all, or none with noop_with_empty_axes), repeated or out of range
 * refused; -9 ends a list */
static void test_run_rt_axes(void **state)
{
	(void)state;
	int any[][5] = {{1, -9}, {-1, 0, -9}, {2, 0, 1, -9}, {-9}, {0, -3, -9}, {3, -9}, {1, 2, 1, -9}};
	int two[][5] = {{-1, 0, -9}, {2, 1, -9}, {0, 2, -9}, {1, 1, -9}, {-4, 0, -9}};
	for (int f = 0; f < 2; f++) {
		int dt = f ? OX_I32 : OX_F32;
		check_runs(dt, 1, 0, -1, any, 7);
		check_runs(dt, 1, 1, -1, any, 7);
		check_runs(dt, 0, 0, 2, two, 5);
	}
}

/* ---- the one description both targets render (codegen/reduction.h) ---- */

/* op's reduction of an input of dtype dt: the accumulator type, its
 * start, the term, and the result over 4 elements (a constant count) */
static void check_kind(const char *op, const char *dt, const char *A, const char *init, const char *term,
		       const char *result)
{
	char x[64];
	snprintf(x, sizeof x, "%s[2,4]", dt);
	ox_graph *g = reduce_graph(op, x, "i64[1]", "keepdims=1");
	ox_cg cg = {.g = g};
	ox_reduction r;
	assert_int_equal(ox_reduction_of(g, &g->nodes[0], &r), 0);
	assert_string_equal(r.A, A);
	assert_string_equal(r.init, init);
	if (term)
		assert_string_equal(ox_red_term(&cg, &r), term);
	else
		assert_null(ox_red_assign(&r)); /* Max/Min: a test, not a term */
	assert_string_equal(ox_red_result(&cg, &r, 4, NULL), result);
	ox_cg_free(&cg);
	ox_ir_free(g);
}

/* float sums and products in double (so the targets agree on the bits
 * whatever order they combine partial results in), integers in uint64_t,
 * Max/Min in the element's compute type with NaN winning */
static void test_kinds(void **state)
{
	(void)state;
	check_kind("ReduceSum", "f32", "double", "0.0f", "v", "acc");
	check_kind("ReduceMean", "f16", "double", "0.0f", "v", "acc / 4.0f");
	check_kind("ReduceProd", "bf16", "double", "1.0f", "v", "acc");
	check_kind("ReduceSumSquare", "f64", "double", "0.0", "v * v", "acc");
	check_kind("ReduceL1", "f32", "double", "0.0f", "fabsf(v)", "acc");
	check_kind("ReduceL2", "f32", "double", "0.0f", "v * v", "sqrtf(acc)");
	check_kind("ReduceLogSumExp", "f32", "double", "0.0f", "expf(v - m)", "m + logf(acc)");
	check_kind("ReduceMax", "f16", "float", "(-INFINITY)", NULL, "acc");
	check_kind("ReduceMin", "i8", "int8_t", "INT8_MAX", NULL, "acc");
	check_kind("ReduceSum", "i32", "uint64_t", "0u", "(uint64_t)v", "acc");
	check_kind("ReduceL1", "i16", "uint64_t", "0u", "v < 0 ? 0u - (uint64_t)v : (uint64_t)v", "acc");
	check_kind("ReduceMean", "i64", "uint64_t", "0u", "(uint64_t)v", "(int64_t)acc / 4");
	check_kind("ReduceL2", "i32", "double", "0.0", "v * v", "sqrt(acc)");
	ox_cg cg = {0};
	assert_string_equal(ox_red_wins(&cg, 1, 1, "v", "acc"), "v > acc || isnan(v)");
	assert_string_equal(ox_red_wins(&cg, 0, 0, "b", "acc"), "b < acc");
	assert_string_equal(ox_red_better(&cg, 1, 1, 0), "v > best || (isnan(v) && !isnan(best))");
	assert_string_equal(ox_red_better(&cg, 1, 0, 1), "isnan(v) || (!isnan(best) && v <= best)");
	ox_cg_free(&cg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_infer_rt_axes_keepdims),
		cmocka_unit_test(test_infer_rt_axes_dropped),
		cmocka_unit_test(test_infer_const_axes),
		cmocka_unit_test(test_rows_rt),
		cmocka_unit_test(test_run_rt_axes),
		cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
