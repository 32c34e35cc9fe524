/* test_ir.c: cmocka tests of the IR core (ir/graph.c, ir/types.c,
 * ir/check.c) and of its text form (ir/dump.c, ir/parse.c).
 *
 * Covers the arena, values/nodes/attributes, symbolic dims (folding,
 * hash-consing, binding, evaluation), f16/bf16 conversion (round to nearest
 * even, subnormals, inf/nan), tensor element access, the text form (golden
 * text, dump -> parse -> dump byte-identical, parse errors with their line)
 * the FLOP counts (ir/cost.c) and the verifier (its failures abort:
 * checked in a forked child).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fork, dup2: verifier and stderr capture */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ---- */
static char *slurp(FILE *f)
{
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	s[fread(s, 1, (size_t)n, f)] = 0;
	fclose(f);
	return s;
}

static char *dump_str(ox_graph *g)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	ox_ir_dump(g, f);
	return slurp(f);
}

/* Parse text with stderr captured; returns the graph (or NULL) and sets
 * *err to what was printed (caller frees). */
static ox_graph *parse_capture(const char *text, char **err)
{
	fflush(stderr);
	int saved = dup(2);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	dup2(fileno(tmp), 2);
	ox_graph *g = ox_ir_parse(text, "t.ir");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fseek(tmp, 0, SEEK_END);
	*err = slurp(tmp);
	return g;
}

static ox_graph *parse_ok(const char *text)
{
	char *err;
	ox_graph *g = parse_capture(text, &err);
	if (!g) {
		fprintf(stderr, "--- text:\n%s", text);
		fail_msg("parse failed: %s", err);
	}
	free(err);
	return g;
}

/* dump(parse(text)) must be text itself (text written in canonical form),
 * and parsing that again must give the same bytes. */
static void assert_canonical(const char *text)
{
	ox_graph *g = parse_ok(text);
	char *a = dump_str(g);
	if (strcmp(a, text)) { /* fprintf: cmocka truncates long messages */
		fprintf(stderr, "--- input:\n%s--- dump:\n%s", text, a);
		fail_msg("dump differs from the input (both printed above)");
	}
	ox_graph *h = parse_ok(a);
	char *b = dump_str(h);
	assert_string_equal(a, b);
	free(a);
	free(b);
	ox_ir_free(g);
	ox_ir_free(h);
}

/* dump -> parse -> dump is byte-identical for a graph built with the API */
static void assert_roundtrip(ox_graph *g)
{
	char *a = dump_str(g);
	ox_graph *h = parse_ok(a);
	char *b = dump_str(h);
	if (strcmp(a, b)) {
		fprintf(stderr, "--- first:\n%s--- second:\n%s", a, b);
		fail_msg("round trip differs (both printed above)");
	}
	free(a);
	free(b);
	ox_ir_free(h);
}

static void set_io(ox_graph *g, const ox_id *in, int nin, const ox_id *out, int nout)
{
	g->inputs = ox_ir_alloc(g, (size_t)(nin + 1) * sizeof *g->inputs);
	memcpy(g->inputs, in, (size_t)nin * sizeof *in);
	g->ninputs = nin;
	g->outputs = ox_ir_alloc(g, (size_t)(nout + 1) * sizeof *g->outputs);
	g->output_names = ox_ir_alloc(g, (size_t)(nout + 1) * sizeof *g->output_names);
	memcpy(g->outputs, out, (size_t)nout * sizeof *out);
	for (int k = 0; k < nout; k++)
		g->output_names[k] = g->vals[out[k]].name;
	g->noutputs = nout;
}

static void set_type(ox_graph *g, ox_id v, int dt, int rank, ...)
{
	va_list ap;
	va_start(ap, rank);
	g->vals[v].dtype = dt;
	g->vals[v].has_shape = 1;
	g->vals[v].shape.rank = rank;
	for (int k = 0; k < rank; k++)
		g->vals[v].shape.d[k] = va_arg(ap, ox_dim);
	va_end(ap);
}

/* ---- arena, values, nodes, attributes ---- */
/* ir.h promises 64-byte aligned arena memory (tensor data relies on it) */
#define assert_aligned64(ptr) \
	do { \
		uintptr_t off_ = (uintptr_t)(ptr) % 64; \
		if (off_) \
			fail_msg("%s = %p is %u bytes past a 64-byte boundary", #ptr, (void *)(ptr), (unsigned)off_); \
	} while (0)

static void test_arena(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("arena");
	for (int i = 1; i < 2000; i += 37) {
		unsigned char *p = ox_ir_alloc(g, (size_t)i);
		assert_aligned64(p);
		for (int k = 0; k < i; k++)
			assert_int_equal(p[k], 0);
		memset(p, 0xab, (size_t)i);
	}
	/* bigger than a chunk: its own block, the current chunk stays in use */
	unsigned char *big = ox_ir_alloc(g, (size_t)3 << 20);
	assert_aligned64(big);
	assert_int_equal(big[(3 << 20) - 1], 0);
	unsigned char *after = ox_ir_alloc(g, 10);
	assert_aligned64(after);
	const char *s = ox_ir_strdup(g, "hello");
	assert_string_equal(s, "hello");
	assert_string_equal(ox_ir_strdup(g, NULL), "");
	/* a subgraph allocates from the root's arena; freeing it alone is fine */
	ox_graph *sub = ox_ir_new_sub(g);
	assert_ptr_equal(sub->parent, g);
	char *q = ox_ir_alloc(sub, 100);
	assert_aligned64(q);
	ox_ir_free(sub);
	ox_ir_free(g);
}

static void test_values_nodes(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("vals");
	g->opset = 13;
	ox_id x = ox_ir_add_value(g, "x", OX_V_INPUT);
	ox_id y = ox_ir_add_value(g, "y", OX_V_INTERNAL);
	assert_int_equal(x, 0);
	assert_int_equal(y, 1);
	assert_int_equal(g->vals[x].producer, -1);
	assert_int_equal(g->vals[x].dtype, OX_UNDEF);
	assert_int_equal(ox_ir_find_value(g, "y"), y);
	assert_int_equal(ox_ir_find_value(g, "nope"), -1);
	/* many values: the array grows, ids stay */
	for (int i = 0; i < 500; i++)
		assert_int_equal(ox_ir_add_value(g, "t", OX_V_INTERNAL), 2 + i);
	assert_string_equal(g->vals[x].name, "x");
	assert_int_equal(ox_ir_find_value(g, "t"), 501); /* last definition wins */

	ox_id nid = ox_ir_add_node(g, OX_OP_Relu, "Relu", "r", 3, 2);
	ox_node *n = &g->nodes[nid];
	assert_int_equal(n->opset, 13);
	assert_string_equal(n->domain, "");
	for (int k = 0; k < 3; k++)
		assert_int_equal(n->in[k], -1);
	for (int k = 0; k < 2; k++)
		assert_int_equal(n->out[k], -1);
	n->nin = 1;
	n->nout = 1;
	n->in[0] = x;
	n->out[0] = y;

	ox_shape s = {2, {2, 3}};
	ox_tensor *t = ox_ir_new_tensor(g, OX_F32, &s);
	assert_int_equal(t->nbytes, 24);
	assert_aligned64(t->data);
	ox_id c = ox_ir_add_const(g, "c", t);
	assert_int_equal(g->vals[c].kind, OX_V_CONST);
	assert_ptr_equal(g->vals[c].data, t);
	assert_int_equal(g->vals[c].shape.rank, 2);
	assert_int_equal(g->vals[c].dtype, OX_F32);

	ox_id outs[] = {y};
	set_io(g, &x, 1, outs, 1);
	ox_ir_fill_uses(g);
	assert_int_equal(g->vals[x].nuses, 1);
	assert_int_equal(g->vals[y].producer, nid);
	assert_true(g->vals[y].is_output);
	assert_int_equal(g->vals[c].nuses, 0);

	ox_ir_replace_uses(g, y, c);
	assert_int_equal(g->outputs[0], c);
	ox_ir_free(g);
}

static void test_toposort_compact(void **state)
{
	(void)state;
	/* written out of order on purpose: %3 is used before its node */
	ox_graph *g = parse_ok("graph \"t\" opset 13\n"
			       "input %0:f32[2] \"x\"\n"
			       "%2:f32[2] = Relu(%1)  # \"second\"\n"
			       "%1:f32[2] = Neg(%0)  # \"first\"\n"
			       "%3:f32[2] = Abs(%0)  # \"unrelated\"\n"
			       "output %2 \"y\"\n");
	assert_string_equal(g->nodes[0].name, "second");
	assert_int_equal(ox_ir_toposort(g), 0);
	assert_string_equal(g->nodes[0].name, "first");
	assert_string_equal(g->nodes[1].name, "second");
	assert_string_equal(g->nodes[2].name, "unrelated"); /* stable otherwise */
	assert_int_equal(g->vals[2].producer, 1);
	g->nodes[2].dead = 1;
	ox_ir_compact(g);
	assert_int_equal(g->nnodes, 2);
	assert_int_equal(g->vals[3].producer, -1);
	ox_ir_free(g);

	/* a cycle */
	g = parse_ok("graph \"c\" opset 13\n"
		     "%1:f32[2] = Relu(%2)\n"
		     "%2:f32[2] = Neg(%1)\n"
		     "output %2 \"y\"\n");
	assert_int_equal(ox_ir_toposort(g), -1);
	ox_ir_free(g);
}

static void test_attrs(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"a\" opset 13\n"
			       "input %0:f32[2] \"x\"\n"
			       "%1:f32[2] = LeakyRelu(%0) {alpha=0.5, k=3, n=2.0, s=\"str\", l=[1,-2,3], e=[]}\n"
			       "output %1 \"y\"\n");
	ox_node *n = &g->nodes[0];
	assert_int_equal(n->op, OX_OP_LeakyRelu);
	assert_int_equal(n->nattr, 6);
	assert_true(ox_attr_float(n, "alpha", 0) == 0.5f);
	assert_int_equal(ox_attr_int(n, "k", -1), 3);
	assert_true(ox_attr_float(n, "k", 0) == 3.0f); /* an int read as a float */
	assert_int_equal(ox_attr_int(n, "n", -7), -7); /* a float is not an int */
	assert_int_equal(ox_attr_get(n, "n")->type, OX_AT_FLOAT);
	printf("(an error message is expected next)\n");
	assert_int_equal(ox_attr_report(g), -1); /* ... and is reported once */
	assert_int_equal(ox_attr_report(g), 0);
	assert_string_equal(ox_attr_str(n, "s", NULL), "str");
	assert_int_equal(ox_attr_get(n, "s")->slen, 3);
	assert_string_equal(ox_attr_str(n, "missing", "dflt"), "dflt");
	assert_null(ox_attr_str(n, "k", NULL));
	assert_int_equal(ox_attr_report(g), -1);
	const int64_t *v;
	assert_int_equal(ox_attr_ints(n, "l", &v), 3);
	assert_int_equal(v[1], -2);
	assert_int_equal(ox_attr_ints(n, "e", &v), 0);
	assert_int_equal(ox_attr_ints(n, "missing", &v), -1);
	assert_null(v);
	assert_int_equal(ox_attr_ints(n, "k", &v), -1);
	assert_int_equal(ox_attr_report(g), -1);
	assert_null(ox_attr_get(n, "missing"));
	ox_ir_free(g);
}

/* ---- dims ---- */
static void test_dim_fold(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("dims");
	assert_int_equal(ox_dim_add(g, 2, 3), 5);
	assert_int_equal(ox_dim_sub(g, 7, 3), 4);
	assert_int_equal(ox_dim_mul(g, 6, 7), 42);
	assert_int_equal(ox_dim_div(g, 7, 2), 3);
	assert_int_equal(ox_dim_ceildiv(g, 7, 2), 4);
	assert_int_equal(ox_dim_ceildiv(g, 8, 2), 4);
	assert_int_equal(ox_dim_op(g, OX_DE_MOD, 7, 3), 1);
	assert_int_equal(ox_dim_op(g, OX_DE_MAX, 7, 3), 7);
	assert_int_equal(ox_dim_op(g, OX_DE_MIN, 7, 3), 3);
	assert_int_equal(g->ndexprs, 0); /* constants never make expressions */

	ox_dim n = ox_dim_sym(g, "N");
	assert_true(n < 0);
	assert_int_equal(ox_dim_add(g, n, 0), n);
	assert_int_equal(ox_dim_add(g, 0, n), n);
	assert_int_equal(ox_dim_sub(g, n, 0), n);
	assert_int_equal(ox_dim_mul(g, n, 1), n);
	assert_int_equal(ox_dim_mul(g, 1, n), n);
	assert_int_equal(ox_dim_mul(g, n, 0), 0);
	assert_int_equal(ox_dim_mul(g, 0, n), 0);
	assert_int_equal(ox_dim_div(g, n, 1), n);
	assert_int_equal(ox_dim_ceildiv(g, n, 1), n);
	assert_int_equal(ox_dim_op(g, OX_DE_MAX, n, n), n);
	assert_int_equal(ox_dim_op(g, OX_DE_MIN, n, n), n);
	assert_int_equal(g->ndexprs, 1); /* just the symbol */
	ox_ir_free(g);
}

static void test_dim_symbolic(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("dims");
	ox_dim n = ox_dim_sym(g, "N"), m = ox_dim_sym(g, "M");
	assert_int_not_equal(n, m);
	assert_int_equal(ox_dim_sym(g, "N"), n); /* hash-consed */
	ox_dim a = ox_dim_mul(g, n, 2), b = ox_dim_mul(g, n, 2);
	assert_int_equal(a, b);
	assert_int_equal(ox_dim_mul(g, 2, n), a); /* products have one form */
	/* (N*M)*3 and 3*(M*N) are one product; dividing by a factor cancels */
	ox_dim nm3 = ox_dim_mul(g, ox_dim_mul(g, n, m), 3);
	assert_int_equal(ox_dim_mul(g, 3, ox_dim_mul(g, m, n)), nm3);
	assert_int_equal(ox_dim_div(g, nm3, n), ox_dim_mul(g, m, 3));
	assert_int_equal(ox_dim_div(g, ox_dim_mul(g, n, 512), n), 512);
	assert_int_equal(ox_dim_div(g, ox_dim_mul(g, n, 12), 4), ox_dim_mul(g, n, 3));
	assert_int_not_equal(ox_dim_div(g, ox_dim_mul(g, n, 3), 2), ox_dim_mul(g, n, 1)); /* no exact quotient */
	assert_int_equal(ox_dim_sub(g, nm3, nm3), 0);
	ox_dim e = ox_dim_add(g, ox_dim_ceildiv(g, ox_dim_sub(g, n, 3), 2), 1);
	char buf[128];
	ox_dim_str(g, e, buf, sizeof buf);
	assert_string_equal(buf, "(((N-3)/^2)+1)");
	ox_dim_str(g, ox_dim_op(g, OX_DE_MAX, n, m), buf, sizeof buf);
	assert_string_equal(buf, "(N max M)");
	ox_dim_str(g, 224, buf, sizeof buf);
	assert_string_equal(buf, "224");

	ox_dim u = ox_dim_unknown(g, "x:0"), v = ox_dim_unknown(g, "x:0");
	assert_int_not_equal(u, v); /* every unknown dim is its own symbol */

	ox_shape s = {3, {n, 3, a}};
	assert_false(ox_shape_is_const(&s));
	assert_int_equal(ox_shape_numel(&s), -1);
	ox_shape_str(g, &s, buf, sizeof buf);
	assert_string_equal(buf, "[N,3,(N*2)]");
	ox_shape c = {2, {4, 5}};
	assert_true(ox_shape_is_const(&c));
	assert_int_equal(ox_shape_numel(&c), 20);
	ox_shape z = {0, {0}};
	assert_int_equal(ox_shape_numel(&z), 1);
	ox_ir_free(g);
}

/* run-time symbols: ranges by interval arithmetic, data symbols */
static void test_dim_ranges(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("dims");
	ox_dim n = ox_dim_sym(g, "N"), h = ox_dim_sym(g, "H");
	int64_t lo, hi;
	assert_int_equal(ox_dim_range(g, n, &lo, &hi), -1); /* neither bound nor ranged */
	assert_int_equal(ox_ir_set_range(g, "N", 1, 64), 0);
	assert_int_equal(ox_ir_set_range(g, "H", 32, 512), 0);
	assert_int_equal(ox_ir_set_range(g, "nope", 1, 2), -1);
	assert_true(ox_dim_is_rt(g, n));
	assert_non_null(ox_dim_rtsym(g, n));
	/* conv output (H + 2 - 3) / 2 + 1 */
	ox_dim o = ox_dim_add(g, ox_dim_div(g, ox_dim_sub(g, ox_dim_add(g, h, 2), 3), 2), 1);
	assert_int_equal(ox_dim_range(g, o, &lo, &hi), 0);
	assert_int_equal(lo, 16);
	assert_int_equal(hi, 256);
	ox_shape s = {4, {n, 3, o, o}};
	assert_int_equal(ox_shape_max_numel(g, &s), 64LL * 3 * 256 * 256);
	assert_true(ox_shape_is_rt(g, &s));
	assert_int_equal(ox_dim_hi(g, ox_dim_op(g, OX_DE_MIN, n, 10)), 10);
	assert_int_equal(ox_dim_hi(g, ox_dim_op(g, OX_DE_MAX, n, 100)), 100);
	assert_int_equal(ox_dim_hi(g, ox_dim_sub(g, 100, n)), 99);
	/* lo == hi binds */
	assert_int_equal(ox_ir_set_range(g, "H", 7, 7), 0);
	assert_int_equal(ox_dim_eval(g, h), 7);
	assert_false(ox_dim_is_rt(g, h));
	/* a data symbol: unbounded until a bound is learnt, which only tightens */
	ox_id v = ox_ir_add_value(g, "y", OX_V_INTERNAL);
	ox_dim d = ox_dim_data(g, v, 0, -1);
	assert_int_equal(ox_dim_hi(g, d), -1);
	assert_int_equal(ox_dim_data(g, v, 0, 24), d);
	assert_int_equal(ox_dim_hi(g, d), 24);
	ox_dim_data(g, v, 0, 100);
	assert_int_equal(ox_dim_hi(g, d), 24);
	assert_int_equal(ox_dim_rtsym(g, d)->rt, OX_RT_DATA);
	assert_true(ox_dim_defined_by(g, d, v));
	assert_int_not_equal(ox_dim_data(g, v, 1, -1), d);
	ox_shape u = {2, {d, n}};
	assert_int_equal(ox_shape_max_numel(g, &u), 24 * 64);
	ox_shape w = {2, {ox_dim_data(g, v, 1, -1), n}};
	assert_int_equal(ox_shape_max_numel(g, &w), -1);
	ox_ir_free(g);
}

/* the text form keeps run-time symbols: ranges and data symbols */
static void test_roundtrip_ranges(void **state)
{
	(void)state;
	const char *text = "graph \"g\" opset 17\n"
			   "range \"$y:0\"=0..inf data \"y\"\n"
			   "range N=1..8\n"
			   "input %0:f32[N,3] \"x\"\n"
			   "%1:f32[N,3] = Relu(%0)\n"
			   "output %1 \"y\"\n";
	ox_graph *g = ox_ir_parse(text, "t.ir");
	assert_non_null(g);
	ox_dim n = g->vals[0].shape.d[0];
	assert_int_equal(ox_dim_hi(g, n), 8);
	assert_int_equal(ox_dim_rtsym(g, n)->rt, OX_RT_INPUT);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ox_ir_dump(g, f);
	fclose(f);
	assert_string_equal(buf, text);
	free(buf);
	ox_ir_free(g);
}

static void test_dim_bind_eval(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("dims");
	ox_dim n = ox_dim_sym(g, "N"), m = ox_dim_sym(g, "M");
	ox_dim e = ox_dim_add(g, ox_dim_mul(g, n, 2), 1); /* 2N+1 */
	ox_dim f = ox_dim_mul(g, n, m);
	assert_int_equal(ox_dim_eval(g, 17), 17);
	assert_int_equal(ox_dim_eval(g, e), -1);
	assert_string_equal(ox_dim_unbound(g, e), "N");
	assert_null(ox_dim_unbound(g, 5));
	assert_int_equal(ox_ir_bind(g, "N", 4), 0);
	assert_int_equal(ox_ir_bind(g, "nosuch", 4), -1);
	assert_int_equal(ox_dim_eval(g, e), 9);
	assert_null(ox_dim_unbound(g, e));
	assert_int_equal(ox_dim_eval(g, f), -1);
	assert_string_equal(ox_dim_unbound(g, f), "M"); /* N is bound now */
	ox_ir_bind(g, "M", 3);
	assert_int_equal(ox_dim_eval(g, f), 12);
	assert_int_equal(ox_dim_eval(g, ox_dim_ceildiv(g, e, 2)), 5);
	assert_int_equal(ox_dim_eval(g, ox_dim_div(g, e, 2)), 4);
	assert_int_equal(ox_dim_eval(g, ox_dim_op(g, OX_DE_MOD, e, 4)), 1);
	assert_int_equal(ox_dim_eval(g, ox_dim_op(g, OX_DE_MAX, e, f)), 12);
	assert_int_equal(ox_dim_eval(g, ox_dim_op(g, OX_DE_MIN, e, f)), 9);

	/* resolve_dims turns bound symbolic dims into constants */
	ox_id v = ox_ir_add_value(g, "v", OX_V_INPUT);
	set_type(g, v, OX_F32, 3, n, e, ox_dim_sym(g, "K"));
	ox_ir_resolve_dims(g);
	assert_int_equal(g->vals[v].shape.d[0], 4);
	assert_int_equal(g->vals[v].shape.d[1], 9);
	assert_true(g->vals[v].shape.d[2] < 0); /* K stays symbolic */
	ox_ir_free(g);
}

static void test_broadcast(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("bc");
	ox_dim n = ox_dim_sym(g, "N");
	ox_shape a = {3, {n, 1, 4}}, b = {2, {3, 1}}, o;
	assert_int_equal(ox_broadcast(g, &a, &b, &o), 0);
	assert_int_equal(o.rank, 3);
	assert_int_equal(o.d[0], n);
	assert_int_equal(o.d[1], 3);
	assert_int_equal(o.d[2], 4);
	ox_shape c = {1, {5}};
	assert_int_equal(ox_broadcast(g, &a, &c, &o), -1);
	ox_shape s = {0, {0}};
	assert_int_equal(ox_broadcast(g, &s, &b, &o), 0);
	assert_int_equal(o.rank, 2);
	assert_int_equal(ox_norm_axis(-1, 4), 3);
	assert_int_equal(ox_norm_axis(4, 4), -1);
	assert_int_equal(ox_norm_axis(-5, 4), -1);
	ox_ir_free(g);
}

/* ---- f16 / bf16 ---- */
static float bits_f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static void test_f16_values(void **state)
{
	(void)state;
	assert_int_equal(ox_f32_to_f16(1.0f), 0x3c00);
	assert_int_equal(ox_f32_to_f16(-2.0f), 0xc000);
	assert_int_equal(ox_f32_to_f16(0.0f), 0x0000);
	assert_int_equal(ox_f32_to_f16(-0.0f), 0x8000);
	assert_int_equal(ox_f32_to_f16(65504.0f), 0x7bff);      /* largest finite */
	assert_int_equal(ox_f32_to_f16(65519.0f), 0x7bff);      /* below the tie */
	assert_int_equal(ox_f32_to_f16(65520.0f), 0x7c00);      /* tie rounds to even: inf */
	assert_int_equal(ox_f32_to_f16(1e10f), 0x7c00);
	assert_int_equal(ox_f32_to_f16(INFINITY), 0x7c00);
	assert_int_equal(ox_f32_to_f16(-INFINITY), 0xfc00);
	uint16_t qn = ox_f32_to_f16(NAN);
	assert_int_equal(qn & 0x7c00, 0x7c00);
	assert_int_not_equal(qn & 0x03ff, 0);
	/* nan whose payload sits only in the low bits stays a nan */
	uint16_t ln = ox_f32_to_f16(bits_f(0x7f800001));
	assert_int_not_equal(ln & 0x03ff, 0);
	/* round to nearest even at 1 + ulp/2 and 1 + 3ulp/2 */
	assert_int_equal(ox_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
	assert_int_equal(ox_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
	assert_int_equal(ox_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
	/* subnormals */
	assert_int_equal(ox_f32_to_f16(0x1p-24f), 0x0001);     /* smallest */
	assert_int_equal(ox_f32_to_f16(0x1p-25f), 0x0000);     /* tie to even: 0 */
	assert_int_equal(ox_f32_to_f16(0x1.8p-25f), 0x0001);
	assert_int_equal(ox_f32_to_f16(0x3p-24f * 0.5f), 0x0002); /* 1.5 ulp: tie to even 2 */
	assert_int_equal(ox_f32_to_f16(0x1p-26f), 0x0000);
	assert_int_equal(ox_f32_to_f16(-0x1p-24f), 0x8001);
	assert_int_equal(ox_f32_to_f16(1023 * 0x1p-24f), 0x03ff); /* largest subnormal */
	assert_int_equal(ox_f32_to_f16(0x1p-14f), 0x0400);        /* smallest normal */
	assert_int_equal(ox_f32_to_f16(0x1p-14f - 0x1p-26f), 0x0400); /* rounds up into normals */

	assert_true(ox_f16_to_f32(0x3c00) == 1.0f);
	assert_true(ox_f16_to_f32(0x0001) == 0x1p-24f);
	assert_true(ox_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
	assert_true(ox_f16_to_f32(0x7bff) == 65504.0f);
	assert_true(isinf(ox_f16_to_f32(0x7c00)) && ox_f16_to_f32(0x7c00) > 0);
	assert_true(isinf(ox_f16_to_f32(0xfc00)) && ox_f16_to_f32(0xfc00) < 0);
	assert_true(isnan(ox_f16_to_f32(0x7e00)));
	assert_true(isnan(ox_f16_to_f32(0x7c01)));
	assert_int_equal(f_bits(ox_f16_to_f32(0x8000)), 0x80000000u);
}

/* Every f16 converts to f32 and back to itself (nan stays nan). */
static void test_f16_exhaustive_roundtrip(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = ox_f16_to_f32((uint16_t)h);
		uint16_t back = ox_f32_to_f16(f);
		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
			if (!isnan(f) || (back & 0x7c00) != 0x7c00 || !(back & 0x3ff))
				fail_msg("nan %04x -> %a -> %04x", h, f, back);
		} else if (back != h) {
			fail_msg("%04x -> %a -> %04x", h, f, back);
		}
	}
}

/* Nearest-even property checked against neighbours (and against the
 * compiler's _Float16 where it has one) over a sweep of f32 bit patterns. */
static void test_f16_nearest_even(void **state)
{
	(void)state;
	for (uint64_t u64 = 0; u64 < 0x100000000ull; u64 += 4099) {
		uint32_t u = (uint32_t)u64;
		float x = bits_f(u);
		if (isnan(x))
			continue;
		uint16_t h = ox_f32_to_f16(x);
#if defined(__FLT16_MAX__)
		_Float16 r = (_Float16)x;
		uint16_t rb;
		memcpy(&rb, &r, 2);
		if (rb != h)
			fail_msg("f16(%a): got %04x, _Float16 gives %04x", x, h, rb);
#endif
		double ax = fabs((double)x);
		double v = fabs((double)ox_f16_to_f32(h));
		if ((h & 0x7fff) == 0x7c00) { /* inf: only for |x| >= 65520 */
			if (ax < 65520.0)
				fail_msg("f16(%a) overflowed to inf", x);
			continue;
		}
		uint16_t up = (uint16_t)((h & 0x7fff) + 1), dn = (uint16_t)((h & 0x7fff) - 1);
		double dv = fabs(ax - v);
		double du = up < 0x7c00 ? fabs(ax - ox_f16_to_f32(up)) : 65536.0 - ax;
		if (du < dv || (du == dv && (h & 1)))
			fail_msg("f16(%a) = %04x, %04x is nearer or even", x, h, up);
		if ((h & 0x7fff) > 0) {
			double dd = fabs(ax - ox_f16_to_f32(dn));
			if (dd < dv || (dd == dv && (h & 1)))
				fail_msg("f16(%a) = %04x, %04x is nearer or even", x, h, dn);
		}
		if ((h >> 15) != (u >> 31))
			fail_msg("f16(%a): sign lost", x);
	}
}

static void test_bf16(void **state)
{
	(void)state;
	assert_int_equal(ox_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(ox_f32_to_bf16(-1.0f), 0xbf80);
	assert_int_equal(ox_f32_to_bf16(bits_f(0x3f808000)), 0x3f80); /* tie: even */
	assert_int_equal(ox_f32_to_bf16(bits_f(0x3f818000)), 0x3f82); /* tie: even, up */
	assert_int_equal(ox_f32_to_bf16(bits_f(0x3f808001)), 0x3f81);
	assert_int_equal(ox_f32_to_bf16(bits_f(0x3f807fff)), 0x3f80);
	assert_int_equal(ox_f32_to_bf16(bits_f(0x7f7fffff)), 0x7f80);  /* FLT_MAX rounds to inf */
	assert_int_equal(ox_f32_to_bf16(INFINITY), 0x7f80);
	assert_int_equal(ox_f32_to_bf16(-INFINITY), 0xff80);
	assert_int_equal(ox_f32_to_bf16(bits_f(0x00000001)), 0x0000);   /* subnormal: down */
	assert_int_equal(ox_f32_to_bf16(bits_f(0x00008000)), 0x0000);   /* subnormal tie: even */
	assert_int_equal(ox_f32_to_bf16(bits_f(0x00018000)), 0x0002);
	assert_int_equal(ox_f32_to_bf16(bits_f(0x00010000)), 0x0001);
	assert_int_equal(ox_f32_to_bf16(-0.0f), 0x8000);
	/* nan stays nan, even when its payload is only in the dropped bits */
	uint16_t n1 = ox_f32_to_bf16(bits_f(0x7f800001));
	assert_int_equal(n1 & 0x7f80, 0x7f80);
	assert_int_not_equal(n1 & 0x7f, 0);
	assert_true(isnan(ox_bf16_to_f32(ox_f32_to_bf16(NAN))));
	assert_true(ox_bf16_to_f32(0x3f80) == 1.0f);
	assert_true(ox_bf16_to_f32(0x0001) == bits_f(0x00010000));
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = ox_bf16_to_f32((uint16_t)h);
		uint16_t back = ox_f32_to_bf16(f);
		if (isnan(f) ? !isnan(ox_bf16_to_f32(back)) : back != h)
			fail_msg("bf16 %04x -> %a -> %04x", h, f, back);
	}
}

static void test_tensor_access(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("t");
	ox_shape s = {1, {3}};
	static const int dts[] = {OX_F32, OX_F64, OX_F16, OX_BF16, OX_I8, OX_U8, OX_I16, OX_U16,
				  OX_I32, OX_U32, OX_I64, OX_U64, OX_BOOL};
	for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
		ox_tensor *t = ox_ir_new_tensor(g, dts[i], &s);
		assert_int_equal(t->nbytes, 3 * ox_dtype_size(dts[i]));
		ox_tensor_set_i64(t, 0, 1);
		ox_tensor_set_f64(t, 1, 2.0);
		ox_tensor_set_i64(t, 2, 0);
		assert_int_equal(ox_tensor_get_i64(t, 0), 1);
		assert_true(ox_tensor_get_f64(t, 1) == (dts[i] == OX_BOOL ? 1.0 : 2.0));
		assert_int_equal(ox_tensor_get_i64(t, 2), 0);
	}
	ox_tensor *h = ox_ir_new_tensor(g, OX_F16, &s);
	ox_tensor_set_f64(h, 0, 0.1);
	uint16_t raw;
	memcpy(&raw, h->data, 2);
	assert_int_equal(raw, 0x2e66); /* 0.1 in f16, nearest */
	ox_tensor *i8 = ox_ir_new_tensor(g, OX_I8, &s);
	ox_tensor_set_i64(i8, 0, -5);
	assert_int_equal(ox_tensor_get_i64(i8, 0), -5);
	assert_string_equal(ox_dtype_name(OX_BF16), "bf16");
	assert_int_equal(ox_dtype_from_name("f16"), OX_F16);
	assert_int_equal(ox_dtype_from_name("float"), -1);
	assert_true(ox_dtype_is_float(OX_BF16));
	assert_false(ox_dtype_is_int(OX_BOOL));
	assert_true(ox_dtype_is_signed(OX_I8));
	assert_false(ox_dtype_is_signed(OX_U64));
	ox_ir_free(g);
}

/* ---- text form ---- */
/* A graph built with the API dumps to exactly this text. */
static void test_dump_golden(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_new("golden");
	g->name = "net";
	g->opset = 13;
	ox_dim n = ox_dim_sym(g, "N");
	ox_id x = ox_ir_add_value(g, "input", OX_V_INPUT);
	set_type(g, x, OX_F32, 4, n, (ox_dim)3, (ox_dim)224, (ox_dim)224);
	ox_shape ws = {4, {64, 3, 7, 7}}, bs = {1, {3}};
	ox_id w = ox_ir_add_const(g, "conv1.weight", ox_ir_new_tensor(g, OX_F32, &ws));
	ox_tensor *bt = ox_ir_new_tensor(g, OX_F32, &bs);
	ox_tensor_set_f64(bt, 0, 1);
	ox_tensor_set_f64(bt, 1, -0.5);
	ox_tensor_set_f64(bt, 2, 0.1);
	ox_id b = ox_ir_add_const(g, "b", bt);
	ox_id y = ox_ir_add_value(g, "y", OX_V_INTERNAL);
	ox_dim h = ox_dim_add(g, ox_dim_div(g, ox_dim_sub(g, ox_dim_sym(g, "H"), 1), 2), 1);
	set_type(g, y, OX_F32, 4, n, (ox_dim)64, h, (ox_dim)112);
	ox_id nid = ox_ir_add_node(g, OX_OP_Conv, "Conv", "conv1", 3, 1);
	ox_node *nd = &g->nodes[nid];
	nd->in[0] = x;
	nd->in[1] = w;
	nd->in[2] = -1;
	nd->out[0] = y;
	nd->nattr = 3;
	nd->attrs = ox_ir_alloc(g, 3 * sizeof *nd->attrs);
	static int64_t pads[] = {3, 3, 3, 3};
	nd->attrs[0] = (ox_attr){.name = "pads", .type = OX_AT_INTS, .n = 4, .ints = pads};
	nd->attrs[1] = (ox_attr){.name = "alpha", .type = OX_AT_FLOAT, .f = 1.0f};
	nd->attrs[2] = (ox_attr){.name = "auto_pad", .type = OX_AT_STRING, .s = "NOTSET", .slen = 6};
	ox_id z = ox_ir_add_value(g, "z", OX_V_INTERNAL);
	ox_id m = ox_ir_add_node(g, OX_OP_Add, "Add", "", 2, 1);
	g->nodes[m].in[0] = y;
	g->nodes[m].in[1] = b;
	g->nodes[m].out[0] = z;
	ox_id outs[] = {z};
	set_io(g, &x, 1, outs, 1);
	g->output_names[0] = "logits";
	ox_ir_fill_uses(g);
	char *got = dump_str(g);
	assert_string_equal(got,
		"graph \"net\" opset 13\n"
		"input %0:f32[N,3,224,224] \"input\"\n"
		"const %1:f32[64,3,7,7] \"conv1.weight\" = <37632 bytes>\n"
		"const %2:f32[3] \"b\" = [1, -0.5, 0.100000001]\n"
		"%3:f32[N,64,(((H-1)/2)+1),112] = Conv(%0, %1, _) {pads=[3,3,3,3], alpha=1.0, auto_pad=\"NOTSET\"}  # \"conv1\"\n"
		"%4 = Add(%3, %2)\n"
		"output %4 \"logits\"\n");
	free(got);
	assert_roundtrip(g);
	ox_ir_free(g);
}

/* Texts in canonical form come back byte for byte. */
static void test_roundtrip_text(void **state)
{
	(void)state;
	assert_canonical("graph \"\" opset 7\n");
	assert_canonical(
		"graph \"net\" opset 13 ir 8\n"
		"bind N=2\n"
		"input %0:f32[N,3,8,8] \"input\"\n"
		"input %7:f16? \"half\"\n"
		"const %1:f32[4,3,3,3] \"w\" = <432 bytes>\n"
		"const %2:f32[4] \"b\" = [0.5, -1, 9.99999968e-21, inf]\n"
		"const %5:i64[2] \"shape\" = [0, -1]\n"
		"const %8:u64[1] \"big\" = [18446744073709551615]\n"
		"const %9:bool[3] \"mask\" = [1, 0, 1]\n"
		"const %10:f64[1] \"pi\" = [3.1415926535897931]\n"
		"const %11:f16[3] \"h\" = [0.0999755859, nan, -inf]\n"
		"const %12:bf16[2] \"bh\" = [1, 3.015625]\n"
		"const %13:string[2] \"s\" = [\"a\\\"b\", \"\\x01\\n\"]\n"
		"const %14:f8e4m3fn[2] \"f8\" = bytes[0x38, 0x40]\n"
		"const %15:i8[] \"scalar\" = [-128]\n"
		"const %16:f32[0,3] \"empty\" = []\n"
		"const %17:string[20] \"many\" = <20 strings>\n"
		"%3:f32[N,4,8,8] = Conv(%0, %1, %2) {kernel_shape=[3,3], alpha=1.0, beta=0.25, mode=\"a\\\"b\\n\", f=[1.5,2.0], s=[\"x\", \"y\"], e=floats[], es=strings[], ei=[], t=tensor i32[2] [7, 8], ts=[tensor f16[1] [0.5], tensor i64[0] []], et=tensors[], eg=graphs[], neg=-3, big=1.00000002e+30, nn=nan}  # \"conv\\t1\"\n"
		"%4:f32[N,256] = Reshape(%3, %5)\n"
		"%6:f32?, _ = com.microsoft::Gelu@1(%4, _, %7, %9, %10, %11, %12, %13, %14, %15, %16, %17, %8)\n"
		"%18:undef[(N/^2),((N+1) max 3),(N%4),(N min \"odd name\"),?x:0#3,\"?/conv/out:0#1\",?a:b] = Relu(%6)\n"
		"= Custom(%18)\n"
		"%19 = Abs@11(%18)\n"
		"output %19 \"out\"\n"
		"output %3 \"conv\"\n"
		"output _ \"\"\n");
}

/* Subgraphs: nested bodies, values captured from enclosing graphs (and the
 * names printed on the node outputs they capture). */
static const char *if_text =
	"graph \"main\" opset 17 ir 8\n"
	"input %0:bool[] \"cond\"\n"
	"input %1:f32[2] \"x\"\n"
	"%2:f32[2] \"y\" = Relu(%1)\n"
	"%3:f32[2] = If(%0) {then_branch=graph{\n"
	"  graph \"then\" opset 17 ir 8\n"
	"  outer %0:f32[2] \"y\"\n"
	"  %1:f32[2] = Neg(%0)\n"
	"  %2:f32[2] = Loop(_, _) {body=graph{\n"
	"    graph \"inner\" opset 17 ir 8\n"
	"    outer %0:f32[2] \"x\"\n"
	"    %1 = Abs(%0)\n"
	"    output %1 \"z\"\n"
	"  }}\n"
	"  output %1 \"t\"\n"
	"}, else_branch=graph{\n"
	"  graph \"else\" opset 17 ir 8\n"
	"  outer %0:f32[2] \"y\"\n"
	"  output %0 \"e\"\n"
	"}, gs=[graph{\n"
	"  graph \"a\" opset 17 ir 8\n"
	"}, graph{\n"
	"  graph \"b\" opset 17 ir 8\n"
	"}]}  # \"if\"\n"
	"output %3 \"out\"\n";

static void test_roundtrip_subgraph(void **state)
{
	(void)state;
	assert_canonical(if_text);
	ox_graph *g = parse_ok(if_text);
	const ox_attr *a = ox_attr_get(&g->nodes[1], "then_branch");
	assert_non_null(a);
	assert_int_equal(a->type, OX_AT_GRAPH);
	ox_graph *t = a->g[0];
	assert_ptr_equal(t->parent, g);
	assert_string_equal(t->name, "then");
	assert_int_equal(t->vals[0].kind, OX_V_INPUT); /* captured, as the frontend makes it */
	assert_int_equal(t->ninputs, 0);
	assert_string_equal(t->vals[0].name, "y");
	assert_string_equal(g->vals[2].name, "y");
	const ox_attr *gs = ox_attr_get(&g->nodes[1], "gs");
	assert_int_equal(gs->type, OX_AT_GRAPHS);
	assert_int_equal(gs->n, 2);
	assert_string_equal(gs->g[1]->name, "b");
	ox_ir_free(g);
}

/* What the parser builds: ids kept, kinds, data, domain, opset, names. */
static void test_parse_fields(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(
		"# leading comment\n"
		"graph \"p\" opset 11\n"
		"\n"
		"bind B=3\n"
		"input %4:f32[B,2*N+1] \"x\"   # trailing comment\n"
		"const %9:i64[3] \"c\" = [1, -2, 3]\n"
		"%12:f32[B,(2*N)+1], _ = ai.onnx.ml::Thing@3(%4, _, %9) {\n"
		"    k=1,\n"
		"    v=tensor u8[2] [255, 0]\n"
		"}  # \"thing\" then more words\n"
		"%13 = Relu(%12)\n"
		"output %13\n");
	assert_int_equal(g->nvals, 14); /* ids up to %13 exist */
	assert_int_equal(g->opset, 11);
	assert_int_equal(g->ninputs, 1);
	assert_int_equal(g->inputs[0], 4);
	ox_value *x = &g->vals[4];
	assert_int_equal(x->kind, OX_V_INPUT);
	assert_int_equal(x->dtype, OX_F32);
	assert_int_equal(x->shape.rank, 2);
	ox_dim n = ox_dim_sym(g, "N");
	assert_int_equal(x->shape.d[1], ox_dim_add(g, ox_dim_mul(g, 2, n), 1));
	assert_int_equal(x->shape.d[0], ox_dim_sym(g, "B"));
	assert_int_equal(ox_dim_eval(g, x->shape.d[0]), 3);
	assert_int_equal(g->vals[12].shape.d[1], ox_dim_add(g, ox_dim_mul(g, 2, n), 1));
	ox_value *c = &g->vals[9];
	assert_int_equal(c->kind, OX_V_CONST);
	assert_int_equal(ox_tensor_get_i64(c->data, 1), -2);
	ox_node *t = &g->nodes[0];
	assert_int_equal(t->op, OX_OP_UNKNOWN);
	assert_string_equal(t->domain, "ai.onnx.ml");
	assert_string_equal(t->optype, "Thing");
	assert_string_equal(t->name, "thing");
	assert_int_equal(t->opset, 3);
	assert_int_equal(t->nin, 3);
	assert_int_equal(t->in[1], -1);
	assert_int_equal(t->nout, 2);
	assert_int_equal(t->out[1], -1);
	assert_int_equal(ox_attr_get(t, "v")->t->dtype, OX_U8);
	assert_int_equal(((unsigned char *)ox_attr_get(t, "v")->t->data)[0], 255);
	ox_node *r = &g->nodes[1];
	assert_int_equal(r->op, OX_OP_Relu);
	assert_int_equal(r->opset, 11);
	assert_int_equal(g->vals[13].dtype, OX_UNDEF);
	assert_false(g->vals[13].has_shape);
	assert_int_equal(g->vals[13].producer, 1);
	assert_int_equal(g->vals[12].nuses, 1);
	assert_int_equal(g->noutputs, 1);
	assert_int_equal(g->outputs[0], 13);
	assert_string_equal(g->output_names[0], g->vals[13].name);
	ox_ir_free(g);
}

/* Bad text: NULL, one message with the right line, nothing leaked (ASan). */
static void test_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"", "line 1: expected a 'graph' header"},
		{"input %0:f32[2] \"x\"\n", "line 1: expected a 'graph' header"},
		{"graph \"g\" opset 13\n%1 = Relu(%0)\n", "line 2: value %0 is used but never defined"},
		{"graph \"g\" opset 13\ninput %0:f33[2] \"x\"\n", "line 2: unknown dtype 'f33'"},
		{"graph \"g\" opset 13\nconst %0:f32[3] \"c\" = [1, 2]\n", "line 2: 2 values given, the shape has 3"},
		{"graph \"g\" opset 13\nconst %0:f32[1] \"c\" = [1, 2]\n", "line 2: more than 1 values"},
		{"graph \"g\" opset 13\nconst %0:u8[1] \"c\" = [300]\n", "line 2: value out of range for u8"},
		{"graph \"g\" opset 13\nconst %0:i32[1] \"c\" = [1.5]\n", "line 2: value out of range for i32"},
		{"graph \"g\" opset 13\nconst %0:f32[2] \"c\" = <4 bytes>\n", "line 2: expected <8 bytes>"},
		{"graph \"g\" opset 13\nconst %0:f32[N] \"c\" = [1]\n", "line 2: a constant needs a dtype and constant dims"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = Relu(%0)\n%1 = Relu(%0)\n", "line 4: value %1 defined twice"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\n\"\n", "line 2: unterminated string"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"\\q\"\n", "line 2: unknown escape"},
		{"graph \"g\" opset 13\ninput %0:f32[2 \"x\"\n", "line 2: expected ']'"},
		{"graph \"g\" opset 13\ninput %0:f32 \"x\"\n", "line 2: expected '[' or '?'"},
		{"graph \"g\" opset 13\ninput %0:f32[1,2,3,4,5,6,7,8,9,10,11,12,13] \"x\"\n", "line 2: more than 12 dims"},
		{"graph \"g\" opset 13\ninput %0:f32[?] \"x\"\n", "line 2: '?' is not a dim"},
		{"graph \"g\" opset 13\nfoo %0\n", "line 2: expected a statement"},
		{"graph \"g\" opset 13\ngraph \"h\" opset 13\n", "line 2: a second 'graph' header"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = Relu(%0) {a=1, a=2}\n", "line 3: attribute 'a' given twice"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = Relu(%0) {a=<sparse>}\n", "line 3: attribute 'a': this kind"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = Relu(%0) {a=b}\n", "line 3: attribute 'a': expected a value"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 Relu(%0)\n", "line 3: expected '=' after the node's outputs"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = Relu(%0) extra\n", "line 3: unexpected 'e'"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = Relu(%0\n", "line 4: expected ')'"},
		{"graph \"g\" opset 13\noutput %99999999999 \"x\"\n", "line 2: value id"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = If(%0) {g=graph{\n  graph \"s\" opset 13\n  %0 = Relu(%5)\n}}\n",
		 "line 5: value %5 is used but never defined"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = If(%0) {g=graph{\n  graph \"s\" opset 13\n  %0 = Relu(%5)\n",
		 "end of text inside graph{...}"},
		{"graph \"g\" opset 13\ninput %0:f32[2] \"x\"\n%1 = If(%0) {g=graph{\n  graph \"s\" opset 13\n}, h=graph{\n  bind\n}}\n",
		 "line 6: expected a 'graph' header"},
		{"graph \"g\" opset 13\nbind N=-1\n", "line 2: a symbol binds to a value >= 0"},
		{"graph \"g\" opset 13\nconst %0:u8[1] \"c\" = bytes[0x100]\n", "line 2: byte value 256 out of range"},
		{"graph \"g\" opset 13\nconst %0:f8e5m2[1] \"c\" = [1]\n", "line 2: f8e5m2 data must be written as bytes"},
		{"graph \"g\" opset 13\nconst %0:f32[800000000000,3,3,3] \"w\" = <864 bytes>\n",
		 "line 2: a constant of 86400000000000 bytes is too large"},
		{"graph \"g\" opset 13\nconst %0:f32[1000000] \"w\" = [1]\n", "line 2: the shape has 1000000 elements, more than"},
		{"graph \"g\" opset 13\ninput %0:f32[(9999999999*9999999999)] \"x\"\n", "line 2: dim arithmetic overflows"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *err;
		ox_graph *g = parse_capture(cases[i].text, &err);
		if (g)
			fail_msg("case %zu parsed, expected an error\n%s", i, cases[i].text);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: expected \"%s\" in the message, got \"%s\"", i, cases[i].msg, err);
		if (strncmp(err, "t.ir: line ", 11) || strchr(err, '\n') != err + strlen(err) - 1)
			fail_msg("case %zu: want one \"t.ir: line N: ...\" line, got \"%s\"", i, err);
		free(err);
	}
}

/* ---- verifier ---- */
static const char *chain =
	"graph \"g\" opset 13\n"
	"input %0:f32[2] \"x\"\n"
	"const %1:f32[2] \"c\" = [1, 2]\n"
	"%2:f32[2] = Add(%0, %1)\n"
	"%3:f32[2] = Relu(%2)\n"
	"output %3 \"y\"\n";

/* ir/cost.c: 2 flops per multiply-add of the dense ops, 0 for the rest */
static void test_flops(void **state)
{
	(void)state;
	ox_graph *g = parse_ok("graph \"g\" opset 14\n"
			       "input %0:f32[1,3,8,8] \"x\"\n"
			       "input %1:f32[4,3,3,3] \"w\"\n"
			       "input %3:f32[5,2,6] \"s\"\n"
			       "input %4:f32[2,12,6] \"W\"\n"
			       "input %5:f32[2,12,3] \"R\"\n"
			       "%2:f32[1,4,6,6] = Conv(%0, %1)\n"
			       "%6:f32[5,2,2,3] = GRU(%3, %4, %5) {hidden_size=3, direction=\"bidirectional\"}\n"
			       "%7:f32[1,4,6,6] = Relu(%2)\n"
			       "output %6 \"y\"\noutput %7 \"z\"\n");
	/* Conv: 144 outputs x 27 taps; GRU: 5 steps x batch 2 x 2 directions x
	 * 12 gate rows x (6 inputs + 3 state); Relu: none */
	assert_int_equal(ox_ir_flops(g, &g->nodes[0]), 2 * 144 * 27);
	assert_int_equal(ox_ir_flops(g, &g->nodes[1]), 2 * 5 * 2 * 2 * 12 * (6 + 3));
	assert_int_equal(ox_ir_flops(g, &g->nodes[2]), 0);
	ox_ir_free(g);
}

static void test_check_ok(void **state)
{
	(void)state;
	ox_graph *g = parse_ok(if_text);
	assert_int_equal(ox_ir_check(g, "test"), 0);
	ox_ir_free(g);
	/* a captured (outer) value counts as defined */
	g = parse_ok("graph \"g\" opset 13\n%1 = Relu(%0)\noutput %1 \"y\"\nouter %0:f32[2] \"z\"\n");
	assert_int_equal(ox_ir_check(g, "test"), 0);
	ox_ir_free(g);
	g = parse_ok(chain);
	assert_int_equal(ox_ir_check(g, "test"), 0);
	ox_ir_free(g);
}

/* ox_ir_check must abort (the broken-invariant channel) naming the pass. */
static void expect_check_dies(const char *text, void (*breakit)(ox_graph *), const char *msg)
{
	ox_graph *g = parse_ok(text);
	if (breakit)
		breakit(g);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fileno(tmp), 2);
		ox_ir_check(g, "mypass");
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	fseek(tmp, 0, SEEK_END);
	char *err = slurp(tmp);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
		fail_msg("verifier did not abort for: %s", msg);
	if (!strstr(err, "after mypass") || !strstr(err, msg))
		fail_msg("verifier said \"%s\", expected \"%s\"", err, msg);
	free(err);
	ox_ir_free(g);
}

static void swap_nodes(ox_graph *g)
{
	ox_node t = g->nodes[0];
	g->nodes[0] = g->nodes[1];
	g->nodes[1] = t;
}
static void two_producers(ox_graph *g) { g->nodes[1].out[0] = 2; }
static void no_data(ox_graph *g) { g->vals[1].data = NULL; }
static void bad_output(ox_graph *g) { g->outputs[0] = 99; }
static void leave_dead(ox_graph *g) { g->nodes[1].dead = 1; }
static void write_const(ox_graph *g) { g->nodes[1].out[0] = 1; }
static void bad_input_id(ox_graph *g) { g->nodes[0].in[1] = 57; }
static void short_data(ox_graph *g) { g->vals[1].data->nbytes = 4; }

static void test_check_dies(void **state)
{
	(void)state;
	expect_check_dies(chain, swap_nodes, "before its definition");
	expect_check_dies(chain, two_producers, "defined twice");
	expect_check_dies(chain, no_data, "has no data");
	expect_check_dies(chain, short_data, "has 4 bytes");
	expect_check_dies(chain, bad_output, "graph output 0 is undefined");
	expect_check_dies(chain, leave_dead, "dead node");
	expect_check_dies(chain, write_const, "writes the constant");
	expect_check_dies(chain, bad_input_id, "input 1 is %57");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_values_nodes),
		cmocka_unit_test(test_toposort_compact),
		cmocka_unit_test(test_attrs),
		cmocka_unit_test(test_dim_fold),
		cmocka_unit_test(test_dim_symbolic),
		cmocka_unit_test(test_dim_ranges),
		cmocka_unit_test(test_dim_bind_eval),
		cmocka_unit_test(test_roundtrip_ranges),
		cmocka_unit_test(test_broadcast),
		cmocka_unit_test(test_f16_values),
		cmocka_unit_test(test_f16_exhaustive_roundtrip),
		cmocka_unit_test(test_f16_nearest_even),
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_tensor_access),
		cmocka_unit_test(test_dump_golden),
		cmocka_unit_test(test_roundtrip_text),
		cmocka_unit_test(test_roundtrip_subgraph),
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_flops),
		cmocka_unit_test(test_check_ok),
		cmocka_unit_test(test_check_dies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
