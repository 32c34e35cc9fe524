/* test_optimizer.c: cmocka tests of the optimizing passes (opt/affine.c,
 * layout.c, epilogue.c, ewfuse.c, attention.c, norm.c, winograd.c, pack.c)
 * on graphs written in the IR text form.
 *
 * Each test runs the pipeline's passes up to the one it checks (fold and
 * static first, so shapes are inferred and constant) for a named --cpu
 * target, then asserts the structure: which ops remain, their layouts,
 * what was fused and that folded weights hold the right numbers (exact
 * where the arithmetic is exact, else within 1e-6 relative). The verifier
 * runs after every pass. End-to-end results of the same rewrites are in
 * tests/e2e/cases/opt (make opt-cases).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../opt/opt.h"
#include "../codegen/cg.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* parse, set the target (gpu: the CUDA target's passes), run the pipeline
 * up to and including `upto` */
static ox_graph *run_to_on(const char *text, const char *cpu, int gpu, const char *upto)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	g->target = ox_target_find(cpu);
	assert_non_null(g->target);
	g->gpu = gpu;
	if (ox_opt_run(g, 1, upto))
		fail_msg("the pipeline failed (message above) for:\n%s", text);
	return g;
}

static ox_graph *run_to(const char *text, const char *cpu, const char *upto)
{
	return run_to_on(text, cpu, 0, upto);
}

static int count_op(const ox_graph *g, int op)
{
	int c = 0;
	for (int i = 0; i < g->nnodes; i++)
		c += g->nodes[i].op == op;
	return c;
}

static const ox_node *first_op(const ox_graph *g, int op)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == op)
			return &g->nodes[i];
	return NULL;
}

static int nfused(const ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_fused");
	return a && a->type == OX_AT_STRINGS ? a->n : 0;
}

/* ---- affine ---- */

/* Conv -> BatchNormalization -> Mul by a per-channel constant: one Conv
 * whose weights and bias hold the composition. */
static void test_affine_bn_mul(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"bn\" opset 13\n"
			     "input %0:f32[1,1,2,2] \"x\"\n"
			     "const %1:f32[2,1,1,1] \"w\" = [2, 3]\n"
			     "const %2:f32[2] \"b\" = [1, -1]\n"
			     "const %3:f32[2] \"scale\" = [1, 2]\n"
			     "const %4:f32[2] \"shift\" = [0.5, 0]\n"
			     "const %5:f32[2] \"mean\" = [1, 1]\n"
			     "const %6:f32[2] \"var\" = [3, 0]\n"
			     "const %7:f32[2,1,1] \"m\" = [10, 100]\n"
			     "%8 = Conv(%0, %1, %2)\n"
			     "%9 = BatchNormalization(%8, %3, %4, %5, %6) {epsilon=1.0}\n"
			     "%10 = Mul(%9, %7)\n"
			     "output %10 \"y\"\n",
			     "generic", "affine");
	assert_int_equal(g->nnodes, 1);
	const ox_node *n = &g->nodes[0];
	assert_int_equal(n->op, OX_OP_Conv);
	assert_int_equal(nfused(n), 3);
	/* s = scale / sqrt(var + 1) = [0.5, 2]; W' = W s m; B' = ((B - mean) s + shift) m */
	const ox_tensor *w = g->vals[n->in[1]].data, *b = g->vals[n->in[2]].data;
	assert_true(fabs(ox_tensor_get_f64(w, 0) - 2 * 0.5 * 10) < 1e-6);
	assert_true(fabs(ox_tensor_get_f64(w, 1) - 3 * 2 * 100) < 1e-4);
	assert_true(fabs(ox_tensor_get_f64(b, 0) - ((1 - 1) * 0.5 + 0.5) * 10) < 1e-6);
	assert_true(fabs(ox_tensor_get_f64(b, 1) - ((-1 - 1) * 2 + 0) * 100) < 1e-4);
	/* the shared original weights are left as they were */
	assert_true(ox_tensor_get_f64(g->vals[1].data, 0) == 2);
	ox_ir_free(g);
}

/* A Conv whose result is read twice, and a Sub with the Conv on the right,
 * do not fold. */
static void test_affine_refused(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"no\" opset 13\n"
			     "input %0:f32[1,1,2,2] \"x\"\n"
			     "const %1:f32[1,1,1,1] \"w\" = [2]\n"
			     "const %2:f32[1] \"c\" = [3]\n"
			     "%3 = Conv(%0, %1)\n"
			     "%4 = Mul(%3, %2)\n"
			     "%5 = Add(%3, %4)\n"
			     "%6 = Conv(%5, %1)\n"
			     "%7 = Sub(%2, %6)\n"
			     "output %7 \"y\"\n",
			     "generic", "affine");
	assert_int_equal(count_op(g, OX_OP_Conv), 2);
	assert_int_equal(count_op(g, OX_OP_Mul), 1);
	assert_int_equal(count_op(g, OX_OP_Sub), 1);
	ox_ir_free(g);
}

/* MatMul with a constant B, then Div by a scalar: B's columns divided;
 * Gemm (transB, C) then Mul by a per-column constant: B's rows and C scaled. */
static void test_affine_gemm(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"mm\" opset 13\n"
			     "input %0:f32[3,2] \"x\"\n"
			     "const %1:f32[2,2] \"b\" = [1, 2, 3, 4]\n"
			     "const %2:f32[] \"d\" = [8]\n"
			     "const %3:f32[2] \"c\" = [10, 20]\n"
			     "const %4:f32[2] \"s\" = [0.5, 2]\n"
			     "%5 = MatMul(%0, %1)\n"
			     "%6 = Div(%5, %2)\n"
			     "%7 = Gemm(%6, %1, %3) {transB=1}\n"
			     "%8 = Mul(%7, %4)\n"
			     "output %8 \"y\"\n",
			     "generic", "affine");
	assert_int_equal(g->nnodes, 2);
	const ox_node *mm = &g->nodes[0], *gm = &g->nodes[1];
	const ox_tensor *b1 = g->vals[mm->in[1]].data, *b2 = g->vals[gm->in[1]].data, *c = g->vals[gm->in[2]].data;
	assert_true(ox_tensor_get_f64(b1, 3) == 0.5); /* 4 / 8 */
	/* transB: row j of B is column j: [1 2] * 0.5, [3 4] * 2 */
	assert_true(ox_tensor_get_f64(b2, 0) == 0.5 && ox_tensor_get_f64(b2, 1) == 1);
	assert_true(ox_tensor_get_f64(b2, 2) == 6 && ox_tensor_get_f64(b2, 3) == 8);
	assert_true(ox_tensor_get_f64(c, 0) == 5 && ox_tensor_get_f64(c, 1) == 40);
	ox_ir_free(g);
}

/* ---- layout ---- */

static const char *cnn =
	"graph \"cnn\" opset 13\n"
	"input %0:f32[1,3,8,8] \"x\"\n"
	"const %1:f32[6,3,3,3] \"w1\" = <648 bytes>\n"
	"const %2:f32[6,1,3,3] \"wd\" = <216 bytes>\n"
	"const %3:f32[6,1,1] \"s\" = <24 bytes>\n"
	"const %4:f32[5,6] \"fc\" = <120 bytes>\n"
	"%5 = Conv(%0, %1) {pads=[1,1,1,1]}\n"
	"%6 = Relu(%5)\n"
	"%7 = Mul(%6, %3)\n"
	"%8 = MaxPool(%7) {kernel_shape=[2,2], strides=[2,2]}\n"
	"%9 = Conv(%8, %2) {group=6, pads=[1,1,1,1]}\n"
	"%10 = GlobalAveragePool(%9)\n"
	"%11 = Flatten(%10)\n"
	"%12 = Gemm(%11, %4) {transB=1}\n"
	"output %12 \"y\"\n"
	"output %9 \"features\"\n";

/* The chain from the first Conv to the global pool is blocked by the vector
 * width; the per-channel constant is re-laid out; one Reorder back before
 * Flatten and one before the graph output. */
static void test_layout_chain(void **state)
{
	(void)state;
	ox_graph *g = run_to(cnn, "x86-64-v3", "layout");
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		const ox_value *y = &g->vals[n->out[0]];
		int want = n->op == OX_OP_Conv || n->op == OX_OP_Relu || n->op == OX_OP_Mul || n->op == OX_OP_MaxPool ||
			   n->op == OX_OP_GlobalAveragePool;
		assert_int_equal(y->layout, want ? OX_L_BLOCKED : OX_L_PLAIN);
		if (want)
			assert_int_equal(y->lp[0], 8);
		if (n->op == OX_OP_Mul)
			assert_int_equal(g->vals[n->in[1]].layout, OX_L_BLOCKED);
	}
	assert_int_equal(count_op(g, OX_OP_Reorder), 2);
	for (int k = 0; k < g->noutputs; k++)
		assert_int_equal(g->vals[g->outputs[k]].layout, OX_L_PLAIN);
	/* the first Conv reads the plain input as it is */
	assert_int_equal(g->vals[first_op(g, OX_OP_Conv)->in[0]].layout, OX_L_PLAIN);
	ox_ir_free(g);
}

/* --opt 0: nothing moves. */
static void test_layout_off(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_parse(cnn, "t.ir");
	assert_non_null(g);
	g->opt = 0;
	assert_int_equal(ox_opt_run(g, 1, "plan"), 0);
	assert_int_equal(count_op(g, OX_OP_Reorder), 0);
	for (int i = 0; i < g->nvals; i++)
		assert_int_equal(g->vals[i].layout, OX_L_PLAIN);
	ox_ir_free(g);
}

/* ---- epilogue ---- */

/* Conv + Add(residual) + Relu: one Conv with a two-op epilogue reading the
 * residual as its extra input; a residual computed from the Conv's own
 * result cannot be one. */
static void test_epilogue_residual(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"res\" opset 13\n"
			     "input %0:f32[1,8,4,4] \"x\"\n"
			     "const %1:f32[8,8,3,3] \"w\" = <2304 bytes>\n"
			     "%2 = Conv(%0, %1) {pads=[1,1,1,1]}\n"
			     "%3 = Add(%2, %0)\n"
			     "%4 = Relu(%3)\n"
			     "%5 = Conv(%4, %1) {pads=[1,1,1,1]}\n"
			     "%6 = Sigmoid(%5)\n"
			     "%7 = Add(%5, %6)\n"
			     "output %7 \"y\"\n",
			     "x86-64-v4", "epilogue");
	assert_int_equal(count_op(g, OX_OP_Conv), 2);
	assert_int_equal(count_op(g, OX_OP_Add), 0);
	assert_int_equal(count_op(g, OX_OP_Relu), 0);
	const ox_node *c = first_op(g, OX_OP_Conv);
	ox_graph *b = ox_ir_epilogue(c);
	assert_non_null(b);
	assert_int_equal(b->nnodes, 2);
	assert_int_equal(b->ninputs, 2); /* the result, the residual */
	assert_int_equal(ox_ir_epilogue_first(c), 3);
	assert_int_equal(c->nin, 4);
	/* the second: Sigmoid and Add both read the result, so both fuse (SiLU-like);
	 * a Reorder brings it back to the plain graph output */
	const ox_node *r = &g->nodes[g->vals[g->outputs[0]].producer];
	assert_int_equal(r->op, OX_OP_Reorder);
	const ox_node *c2 = &g->nodes[g->vals[r->in[0]].producer];
	assert_int_equal(c2->op, OX_OP_Conv);
	assert_int_equal(ox_ir_epilogue(c2)->nnodes, 2);
	assert_int_equal(nfused(c2), 3);
	ox_ir_free(g);
}

/* The Conv's result is also a graph output: nothing fuses. */
static void test_epilogue_refused(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"out\" opset 13\n"
			     "input %0:f32[1,8,4,4] \"x\"\n"
			     "const %1:f32[8,8,1,1] \"w\" = <256 bytes>\n"
			     "%2 = Conv(%0, %1)\n"
			     "%3 = Relu(%2)\n"
			     "output %3 \"y\"\n"
			     "output %2 \"raw\"\n",
			     "x86-64-v4", "epilogue");
	assert_null(ox_ir_epilogue(first_op(g, OX_OP_Conv)));
	ox_ir_free(g);
}

/* MatMul with a constant B + bias Add + GELU written out with Erf: one
 * MatMul whose epilogue holds the bias Add and the Gelu the norm pass made
 * of the five ops, and names all seven ONNX nodes. */
static void test_epilogue_gemm_gelu(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"ffn\" opset 13\n"
			     "input %0:f32[1,5,8] \"x\"\n"
			     "const %1:f32[8,16] \"w\" = <512 bytes>\n"
			     "const %2:f32[16] \"b\" = <64 bytes>\n"
			     "const %3:f32[] \"sqrt2\" = [1.41421354]\n"
			     "const %4:f32[] \"one\" = [1]\n"
			     "const %5:f32[] \"half\" = [0.5]\n"
			     "%6 = MatMul(%0, %1)\n"
			     "%7 = Add(%2, %6)\n"
			     "%8 = Div(%7, %3)\n"
			     "%9 = Erf(%8)\n"
			     "%10 = Add(%9, %4)\n"
			     "%11 = Mul(%7, %10)\n"
			     "%12 = Mul(%11, %5)\n"
			     "output %12 \"y\"\n",
			     "x86-64-v4", "pack");
	assert_int_equal(g->nnodes, 1);
	const ox_node *n = &g->nodes[0];
	assert_int_equal(n->op, OX_OP_MatMul);
	assert_int_equal(ox_ir_epilogue(n)->nnodes, 2);
	assert_int_equal(ox_ir_epilogue(n)->nodes[1].op, OX_OP_Gelu);
	assert_int_equal(nfused(n), 7);
	assert_int_equal(g->vals[n->in[1]].layout, OX_L_GEMMB); /* packed by pack */
	ox_ir_free(g);
}

/* ---- ewfuse ---- */

/* A chain Mul -> Add -> Sigmoid is one Fused node; a value read outside the
 * chain ends it. */
static void test_ewfuse_chain(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"ew\" opset 13\n"
			     "input %0:f32[2,7] \"x\"\n"
			     "input %1:f32[7] \"b\"\n"
			     "const %2:f32[] \"c\" = [3]\n"
			     "%3 = Mul(%0, %2)  # \"mul\"\n"
			     "%4 = Add(%3, %1)  # \"add\"\n"
			     "%5 = Sigmoid(%4)  # \"sigmoid\"\n"
			     "%6 = ReduceSum(%5) {keepdims=0}\n"
			     "%7 = Tanh(%5)  # \"tanh\"\n"
			     "output %6 \"s\"\n"
			     "output %7 \"t\"\n",
			     "generic", "ewfuse");
	assert_int_equal(count_op(g, OX_OP_Fused), 2);
	const ox_node *f = first_op(g, OX_OP_Fused);
	const ox_attr *a = ox_attr_get(f, "ox_body");
	assert_non_null(a);
	assert_int_equal(a->g[0]->nnodes, 3); /* Mul, Add, Sigmoid: Sigmoid's result is read twice */
	assert_int_equal(f->nin, 3);
	assert_int_equal(count_op(g, OX_OP_ReduceSum), 1);
	/* ox_fused names each ONNX node once, the first (whose name the node takes) too */
	const ox_attr *fu = ox_attr_get(f, "ox_fused");
	assert_non_null(fu);
	assert_int_equal(fu->n, 3);
	assert_string_equal(fu->strs[0], f->name);
	for (int i = 0; i < fu->n; i++)
		for (int j = i + 1; j < fu->n; j++)
			assert_string_not_equal(fu->strs[i], fu->strs[j]);
	/* the lone Tanh is one ONNX node: no list */
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Fused && &g->nodes[i] != f)
			assert_int_equal(nfused(&g->nodes[i]), 0);
	ox_ir_free(g);
}

/* Pow by a constant 2 or -0.5 and Reciprocal join the vector loop, the
 * exponents as constants of the body (not operands); Pow 2.5 keeps its
 * scalar emitter. */
static void test_ewfuse_pow(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"pow\" opset 13\n"
			     "input %0:f32[3,9] \"x\"\n"
			     "const %1:f32[] \"two\" = [2]\n"
			     "const %2:f32[] \"mhalf\" = [-0.5]\n"
			     "const %3:f32[] \"odd\" = [2.5]\n"
			     "%4 = Pow(%0, %1)\n"
			     "%5 = Reciprocal(%4)\n"
			     "%6 = Pow(%5, %2)\n"
			     "%7 = Pow(%6, %3)\n"
			     "output %7 \"y\"\n",
			     "generic", "ewfuse");
	assert_int_equal(count_op(g, OX_OP_Fused), 1);
	assert_int_equal(count_op(g, OX_OP_Pow), 1);
	const ox_node *f = first_op(g, OX_OP_Fused);
	assert_int_equal(f->nin, 1);
	ox_graph *b = ox_attr_get(f, "ox_body")->g[0];
	assert_int_equal(b->nnodes, 3);
	const ox_value *e = &b->vals[b->nodes[2].in[1]];
	assert_int_equal(e->kind, OX_V_CONST);
	assert_true(ox_tensor_get_f64(e->data, 0) == -0.5);
	assert_int_equal(g->vals[first_op(g, OX_OP_Pow)->in[1]].kind, OX_V_CONST);
	ox_ir_free(g);
}

/* ---- attention ---- */

/* BERT's attention: heads split by Reshape/Transpose, Q K^T / 8 + mask,
 * Softmax, P V, heads merged: one Attention on the 3-D tensors. */
static void test_attention_bert(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"att\" opset 13\n"
			     "input %0:f32[1,6,8] \"q\"\n"
			     "input %1:f32[1,6,8] \"k\"\n"
			     "input %2:f32[1,6,8] \"v\"\n"
			     "input %3:f32[1,1,1,6] \"mask\"\n"
			     "const %4:i64[4] \"heads\" = [1, 6, 2, 4]\n"
			     "const %5:i64[3] \"merged\" = [1, 6, 8]\n"
			     "const %6:f32[] \"d\" = [2]\n"
			     "%7 = Reshape(%0, %4)\n"
			     "%8 = Transpose(%7) {perm=[0,2,1,3]}\n"
			     "%9 = Reshape(%1, %4)\n"
			     "%10 = Transpose(%9) {perm=[0,2,3,1]}\n"
			     "%11 = Reshape(%2, %4)\n"
			     "%12 = Transpose(%11) {perm=[0,2,1,3]}\n"
			     "%13 = MatMul(%8, %10)\n"
			     "%14 = Div(%13, %6)\n"
			     "%15 = Add(%14, %3)\n"
			     "%16 = Softmax(%15) {axis=-1}\n"
			     "%17 = MatMul(%16, %12)\n"
			     "%18 = Transpose(%17) {perm=[0,2,1,3]}\n"
			     "%19 = Reshape(%18, %5)\n"
			     "output %19 \"y\"\n",
			     "generic", "attention");
	assert_int_equal(g->nnodes, 1);
	const ox_node *a = &g->nodes[0];
	assert_int_equal(a->op, OX_OP_Attention);
	assert_int_equal(a->in[0], 0);
	assert_int_equal(a->in[1], 1);
	assert_int_equal(a->in[2], 2);
	assert_int_equal(a->in[3], 3);
	assert_int_equal(ox_attr_int(a, "q_num_heads", 0), 2);
	assert_true(fabs(ox_attr_float(a, "scale", 0) - 0.5) < 1e-7);
	ox_ir_free(g);
}

/* Softmax over another axis is not attention. */
static void test_attention_refused(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"no\" opset 13\n"
			     "input %0:f32[2,3,4] \"q\"\n"
			     "input %1:f32[2,4,3] \"kt\"\n"
			     "input %2:f32[2,3,4] \"v\"\n"
			     "%3 = MatMul(%0, %1)\n"
			     "%4 = Softmax(%3) {axis=1}\n"
			     "%5 = MatMul(%4, %2)\n"
			     "output %5 \"y\"\n",
			     "generic", "attention");
	assert_int_equal(count_op(g, OX_OP_Attention), 0);
	assert_int_equal(count_op(g, OX_OP_Softmax), 1);
	ox_ir_free(g);
}

/* A causal mask of a run-time length, as PyTorch exports it, is the
 * Attention's is_causal and is not computed: a masked fill by
 * tril(ones(S, S)) == 0, and an added triu(full((S, S), -inf), 1) (scaled
 * by 1 as nn.MultiheadAttention does); not a tril with its diagonal
 * masked too (k -1), which stays a mask. */
static ox_graph *causal_graph(const char *mask_nodes, const char *scores)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "graph \"causal\" opset 14\n"
		 "range S=1..16\n"
		 "input %%0:f32[2,S,8] \"q\"\n"
		 "input %%1:f32[2,8,S] \"kt\"\n"
		 "input %%2:f32[2,S,8] \"v\"\n"
		 "input %%20:i64[S] \"positions\"\n"
		 "const %%3:i64[] \"zero\" = [0]\n"
		 "const %%4:i64[] \"one\" = [1]\n"
		 "const %%5:i64[] \"minus1\" = [-1]\n"
		 "const %%6:f32[] \"fz\" = [0]\n"
		 "const %%7:f32[] \"ninf\" = [-inf]\n"
		 "const %%8:i64[1] \"axes\" = [0]\n"
		 "const %%9:f32[] \"f1\" = [1]\n"
		 "%%10 = Shape(%%20)\n"
		 "%%11 = Concat(%%10, %%10) {axis=0}\n"
		 "%%12 = MatMul(%%0, %%1)\n"
		 "%s"
		 "%%16 = Softmax(%s) {axis=-1}\n"
		 "%%17 = MatMul(%%16, %%2)\n"
		 "output %%17 \"y\"\n",
		 mask_nodes, scores);
	return run_to(text, "generic", "attention");
}

static void test_attention_causal(void **state)
{
	(void)state;
	static const char *const fills[] = {
		"%13 = ConstantOfShape(%11) {value=tensor f32[1] [1]}\n"
		"%14 = Trilu(%13, %3) {upper=0}\n"
		"%21 = Equal(%14, %6)\n"
		"%15 = Where(%21, %7, %12)\n",
		"%13 = ConstantOfShape(%11) {value=tensor f32[1] [-inf]}\n"
		"%14 = Trilu(%13, %4) {upper=1}\n"
		"%21 = Unsqueeze(%14, %8)\n"
		"%22 = Mul(%21, %9)\n"
		"%15 = Add(%12, %22)\n",
		"%13 = ConstantOfShape(%11) {value=tensor f32[1] [1]}\n"
		"%14 = Trilu(%13, %5) {upper=0}\n"
		"%21 = Equal(%14, %6)\n"
		"%15 = Where(%21, %7, %12)\n",
	};
	for (int i = 0; i < 3; i++) {
		ox_graph *g = causal_graph(fills[i], "%15");
		const ox_node *a = first_op(g, OX_OP_Attention);
		assert_non_null(a);
		assert_int_equal(ox_attr_int(a, "is_causal", 0), i < 2);
		assert_int_equal(a->nin > 3 && a->in[3] >= 0, i == 2);
		assert_int_equal(count_op(g, OX_OP_Trilu), i == 2);
		ox_ir_free(g);
	}
}

/* A causal mask folded to a constant (static shapes) is is_causal too:
 * a masked fill keeping the scores where tril(ones) holds, an added
 * triu(-inf, 1), and an Attention node given with a bool mask; not a mask
 * with one element off the pattern, nor a finfo.min fill too small to
 * take for -inf in a float mask (-1e9), nor the mask of an Attention that
 * outputs its scores (qk_matmul_output), which stay masks. */
static ox_graph *causal_const(int kind, int flip)
{
	enum { S = 5 };
	char mask[512] = "", *p = mask, text[2048];
	for (int i = 0; i < S; i++)
		for (int j = 0; j < S; j++) {
			int after = j > i;
			if (i == 3 && j == 1 && flip == 1)
				after = !after;
			const char *v = kind == 1 ? (after ? (flip == 2 ? "-1e9" : "-inf") : "0") : after ? "0" : "1";
			p += sprintf(p, "%s%s", i || j ? ", " : "", v);
		}
	static const char *const body[] = {
		"%4 = MatMul(%0, %1)\n%5 = Where(%3, %4, %6)\n%7 = Softmax(%5) {axis=-1}\n%8 = MatMul(%7, %2)\n",
		"%4 = MatMul(%0, %1)\n%5 = Add(%4, %3)\n%7 = Softmax(%5) {axis=-1}\n%8 = MatMul(%7, %2)\n",
		"%8 = Attention@23(%0, %1, %2, %3)\n",
		"%8, %20, %21, %22 = Attention@23(%0, %1, %2, %3)\n",
	};
	snprintf(text, sizeof text,
		 "graph \"causal\" opset 14\n"
		 "input %%0:f32[2,1,5,8] \"q\"\n"
		 "input %%1:f32[2,1,%s] \"k\"\n"
		 "input %%2:f32[2,1,5,8] \"v\"\n"
		 "const %%3:%s[1,1,5,5] \"mask\" = [%s]\n"
		 "const %%6:f32[] \"fmin\" = [-3.40282347e38]\n"
		 "%s"
		 "output %%8 \"y\"\n",
		 kind >= 2 ? "5,8" : "8,5", kind == 1 ? "f32" : "bool", mask, body[kind]);
	return run_to(text, "generic", "attention");
}

static void test_attention_causal_const(void **state)
{
	(void)state;
	for (int kind = 0; kind < 4; kind++)
		for (int flip = 0; flip < (kind == 1 ? 3 : 2); flip++) {
			ox_graph *g = causal_const(kind, flip);
			const ox_node *a = first_op(g, OX_OP_Attention);
			const int causal = !flip && kind != 3; /* (3: the qk output keeps the mask) */
			assert_non_null(a);
			assert_int_equal(ox_attr_int(a, "is_causal", 0), causal);
			assert_int_equal(a->nin > 3 && a->in[3] >= 0, !causal);
			ox_ir_free(g);
		}
}

/* ---- gemmnorm ---- */

/* MatMul + residual (an epilogue) -> norm, on the GPU: the MatMul computes
 * the norm as its out[1]. `norm` is the norm's node text (it reads %5,
 * writes %6); `more` adds lines. */
static ox_graph *gemm_norm(const char *norm, const char *more, int gpu)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "graph \"gn\" opset 17\n"
		 "range S=1..16\n"
		 "input %%0:f32[S,8] \"x\"\n"
		 "input %%1:f32[8,8] \"w\"\n"
		 "input %%2:f32[8] \"g\"\n"
		 "input %%3:f32[8] \"b\"\n"
		 "%%4 = MatMul(%%0, %%1)\n"
		 "%%5 = Add(%%4, %%0)\n"
		 "%s  # \"ln\"\n"
		 "output %%6 \"y\"\n"
		 "%s",
		 norm, more);
	return run_to_on(text, "generic", gpu, "gemmnorm");
}

/* The LayerNormalization (RMSNormalization) goes into the MatMul: its
 * output is the MatMul's out[1], its scale and bias the MatMul's inputs
 * ox_norm names; the product stays out[0], a graph output here too (a
 * pre-norm residual stream). Through a Reshape that keeps the rows, the
 * norm's node becomes a Reshape of out[1]. Not on the CPU, nor a norm over more than
 * the last axis, nor one asked for its Mean. */
static void test_gemmnorm(void **state)
{
	(void)state;
	static const char *const norms[] = {
		"%6 = LayerNormalization(%5, %2, %3) {axis=-1, epsilon=0.001}",
		"%6 = RMSNormalization@23(%5, %2) {axis=1}",
		"%6 = LayerNormalization(%5, %2, %3) {axis=0}",
		"%6, %7 = LayerNormalization(%5, %2, %3)",
		"const %8:i64[3] \"sh\" = [1, -1, 8]\n%9 = Reshape(%5, %8)\n%6 = LayerNormalization(%9, %2, %3)",
	};
	for (int k = 0; k < 5; k++)
		for (int gpu = 0; gpu < 2; gpu++) {
			ox_graph *g = gemm_norm(norms[k], k == 3 ? "output %5 \"h\"\noutput %7 \"mean\"\n" : "output %5 \"h\"\n",
						gpu);
			const int fused = gpu && (k < 2 || k == 4);
			const ox_node *m = first_op(g, OX_OP_MatMul);
			assert_non_null(m);
			assert_non_null(ox_ir_epilogue(m)); /* (the residual) */
			assert_int_equal(count_op(g, OX_OP_LayerNormalization) + count_op(g, OX_OP_RMSNormalization), !fused);
			const ox_attr *a = ox_attr_get(m, "ox_norm");
			assert_int_equal(a != NULL, fused);
			assert_int_equal(m->nout, fused ? 2 : 1);
			assert_int_equal(m->out[0], g->outputs[1]);
			if (!fused) {
				ox_ir_free(g);
				continue;
			}
			if (k == 4) { /* the norm of [S, 8] rows, which the norm's node reshapes */
				const ox_node *r = first_op(g, OX_OP_Reshape);
				assert_non_null(r);
				assert_string_equal(r->name, "ln");
				assert_int_equal(r->in[0], m->out[1]);
				assert_int_equal(r->out[0], g->outputs[0]);
				assert_int_equal(g->vals[m->out[1]].shape.rank, 2);
				assert_int_equal(count_op(g, OX_OP_Reshape), 1);
			} else {
				assert_int_equal(m->out[1], g->outputs[0]);
			}
			assert_int_equal(a->ints[0], k == 1 ? OX_OP_RMSNormalization : OX_OP_LayerNormalization);
			assert_int_equal(m->in[a->ints[1]], 2);
			if (k == 1)
				assert_int_equal(a->ints[2], -1);
			else
				assert_int_equal(m->in[a->ints[2]], 3);
			assert_float_equal(ox_attr_float(m, "ox_norm_eps", 0), k ? 1e-5f : 0.001f, 0);
			ox_ir_free(g);
		}
}

/* ---- dwpw: a depthwise Conv computed by the pointwise Conv that reads it ---- */

/* x -> depthwise 3x3 stride 2 + Relu -> Conv 1x1 (`pw`: its attributes),
 * NHWC on the GPU; `more`: extra graph text */
static ox_graph *dw_pw(const char *pw, const char *more, int gpu)
{
	char wd[8 * 9 * 8], wp[16 * 8 * 8], text[4096];
	size_t o = 0;
	for (int i = 0; i < 8 * 9; i++)
		o += (size_t)snprintf(wd + o, sizeof wd - o, "%s%d", i ? ", " : "", i % 7 - 3);
	o = 0;
	for (int i = 0; i < 16 * 8; i++)
		o += (size_t)snprintf(wp + o, sizeof wp - o, "%s%d", i ? ", " : "", i % 5 - 2);
	snprintf(text, sizeof text,
		 "graph \"dp\" opset 13\n"
		 "input %%0:f32[1,8,7,7] \"x\"\n"
		 "const %%1:f32[8,1,3,3] \"wd\" = [%s]\n"
		 "const %%2:f32[16,8,1,1] \"wp\" = [%s]\n"
		 "%%3 = Conv(%%0, %%1) {group=8, kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}  # \"dw\"\n"
		 "%%4 = Relu(%%3)\n"
		 "%%5 = Conv(%%4, %%2) {%s}  # \"pw\"\n"
		 "output %%5 \"y\"\n"
		 "%s",
		 wd, wp, pw, more);
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	g->target = ox_target_find("generic");
	g->gpu = gpu, g->nhwc = gpu;
	if (ox_opt_run(g, 1, "dwpw"))
		fail_msg("the pipeline failed (message above) for:\n%s", text);
	return g;
}

/* The depthwise goes into the pointwise Conv: it reads x, takes the
 * depthwise's weights (last inputs, ox_dw), its window with the pads
 * explicit and its Relu (ox_dw_epilogue); the output keeps its shape.
 * Not when the depthwise's output is read elsewhere, nor
 * into a 1x1 Conv of stride 2, nor on the CPU. */
static void test_dwpw(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++) {
		ox_graph *g = dw_pw(k == 2 ? "kernel_shape=[1,1], strides=[2,2]" : "kernel_shape=[1,1]",
				    k == 1 ? "output %4 \"d\"\n" : "", k != 3);
		const int fused = k == 0;
		assert_int_equal(count_op(g, OX_OP_Conv), fused ? 1 : 2);
		const ox_node *n = NULL;
		for (int i = 0; i < g->nnodes; i++)
			if (g->nodes[i].op == OX_OP_Conv && !strcmp(g->nodes[i].name, "pw"))
				n = &g->nodes[i];
		assert_non_null(n);
		const ox_attr *a = ox_attr_get(n, "ox_dw");
		assert_int_equal(a != NULL, fused);
		if (!fused) {
			ox_ir_free(g);
			continue;
		}
		const ox_value *x = ox_in(g, n, 0);
		assert_int_equal(g->nodes[x->producer].op, OX_OP_Reorder); /* (of x, to NHWC) */
		assert_int_equal(a->n, 13);
		const int64_t want[10] = {3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
		for (int i = 0; i < 10; i++)
			assert_int_equal(a->ints[3 + i], want[i]);
		assert_int_equal(ox_in(g, n, (int)a->ints[0])->layout, OX_L_DWW);
		assert_int_equal(a->ints[1], -1); /* (no bias) */
		assert_int_equal(a->ints[2], n->nin); /* (Relu: no operands) */
		const ox_attr *e = ox_attr_get(n, "ox_dw_epilogue");
		assert_non_null(e);
		assert_int_equal(e->g[0]->nodes[0].op, OX_OP_Relu);
		const ox_shape want_y = {4, {1, 16, 4, 4}};
		assert_memory_equal(&ox_out(g, n, 0)->shape, &want_y, sizeof want_y);
		ox_ir_free(g);
	}
}

/* ---- layout on the GPU: an image read in place ---- */

/* A Conv of a C-channel graph input, NHWC on the GPU: an image of 1 to 3
 * channels is read in place (the Conv's in[0] the plain input, no
 * Reorder); 5 channels get a Reorder whose output is padded to 8. */
static void test_layout_gpu_image(void **state)
{
	(void)state;
	for (int C = 3; C <= 5; C += 2) {
		char w[2048], text[4096];
		size_t o = 0;
		for (int i = 0; i < 8 * C * 9; i++)
			o += (size_t)snprintf(w + o, sizeof w - o, "%s%d", i ? ", " : "", i % 5 - 2);
		snprintf(text, sizeof text,
			 "graph \"img\" opset 13\n"
			 "input %%0:f32[1,%d,6,6] \"x\"\n"
			 "const %%1:f32[8,%d,3,3] \"w\" = [%s]\n"
			 "%%2 = Conv(%%0, %%1) {kernel_shape=[3,3], pads=[1,1,1,1]}  # \"c\"\n"
			 "%%3 = Relu(%%2)\n"
			 "output %%3 \"y\"\n",
			 C, C, w);
		ox_graph *g = ox_ir_parse(text, "t.ir");
		assert_non_null(g);
		g->target = ox_target_find("generic");
		g->gpu = 1, g->nhwc = 1;
		assert_int_equal(ox_opt_run(g, 1, "layout"), 0);
		const ox_node *c = first_op(g, OX_OP_Conv);
		assert_non_null(c);
		assert_int_equal(g->vals[c->out[0]].layout, OX_L_BLOCKED);
		if (C == 3) {
			assert_int_equal(c->in[0], g->inputs[0]); /* (plain, NCHW) */
			assert_int_equal(count_op(g, OX_OP_Reorder), 1); /* (back, for the Relu's output) */
		} else {
			const ox_value *x = ox_in(g, c, 0);
			assert_int_equal(x->layout, OX_L_BLOCKED);
			assert_int_equal(x->lp[0], 8);
			assert_int_equal(count_op(g, OX_OP_Reorder), 2);
		}
		ox_ir_free(g);
	}
}

/* ---- siblings: a gated MLP ---- */

/* silu(x Wg) * (x Wu) on the GPU: the gate and up MatMuls one, B their
 * columns interleaved, the up output the epilogue's omitted operand.
 * Not when the up projection's output is read elsewhere (`more`), nor on
 * the CPU. */
static ox_graph *glu_mlp(const char *more, int gpu)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "graph \"glu\" opset 17\n"
		 "input %%0:f32[3,2] \"x\"\n"
		 "const %%1:f32[2,2] \"wg\" = [1, 2, 3, 4]\n"
		 "const %%2:f32[2,2] \"wu\" = [5, 6, 7, 8]\n"
		 "%%3 = MatMul(%%0, %%1)  # \"gate\"\n"
		 "%%4 = MatMul(%%0, %%2)  # \"up\"\n"
		 "%%5 = Sigmoid(%%3)\n"
		 "%%6 = Mul(%%3, %%5)\n"
		 "%%7 = Mul(%%6, %%4)\n"
		 "output %%7 \"y\"\n"
		 "%s",
		 more);
	return run_to_on(text, "generic", gpu, "siblings");
}

static void test_siblings_glu(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		ox_graph *g = glu_mlp(k == 1 ? "output %4 \"u\"\n" : "", k != 2);
		const int fused = k == 0;
		assert_int_equal(count_op(g, OX_OP_MatMul), fused ? 1 : 2);
		const ox_node *m = first_op(g, OX_OP_MatMul);
		assert_int_equal(ox_attr_int(m, "ox_glu", 0) != 0, fused);
		if (fused) {
			assert_string_equal(m->name, "gate");
			const ox_value *b = &g->vals[m->in[1]];
			assert_int_equal(b->shape.rank, 2);
			assert_int_equal(b->shape.d[0], 2);
			assert_int_equal(b->shape.d[1], 4);
			static const float want[8] = {1, 5, 2, 6, 3, 7, 4, 8}; /* gate c, up c, ... */
			assert_memory_equal(((const ox_tensor *)b->data)->data, want, sizeof want);
			const int first = ox_ir_epilogue_first(m), j = (int)ox_attr_int(m, "ox_glu", 0);
			assert_int_equal(m->in[first + j - 1], -1);
			assert_int_equal(g->vals[m->out[0]].shape.d[1], 2);
			assert_int_equal(m->out[0], g->outputs[0]);
		}
		ox_ir_free(g);
	}
}

/* ---- rows ---- */

/* nn.MultiheadAttention(batch_first=True) of a run-time batch, as the
 * attention pass leaves it on the GPU: [B, S, E] transposed to [S, B, E],
 * the in_proj, a sequence-first Attention, the out_proj on [S*B, E] rows
 * and the result transposed back. `extra` adds a node or an input. */
static ox_graph *mha_rows(const char *extra, const char *k_in, int gpu)
{
	char text[4096];
	snprintf(text, sizeof text,
		 "graph \"mha\" opset 13\n"
		 "range B=1..4\n"
		 "range S=1..16\n"
		 "input %%0:f32[B,S,8] \"x\"\n"
		 "input %%1:f32[8,24] \"w_in\"\n"
		 "input %%2:f32[24] \"b_in\"\n"
		 "input %%3:f32[8,8] \"w_out\"\n"
		 "input %%4:f32[8] \"b_out\"\n"
		 "input %%25:f32[S,B,8] \"k\"\n"
		 "const %%5:i64[1] \"s0\" = [0]\n"
		 "const %%6:i64[1] \"s8\" = [8]\n"
		 "const %%7:i64[1] \"s16\" = [16]\n"
		 "const %%8:i64[1] \"s24\" = [24]\n"
		 "const %%9:i64[1] \"last\" = [-1]\n"
		 "const %%10:i64[2] \"rows\" = [-1, 8]\n"
		 "%%11 = Transpose(%%0) {perm=[1,0,2]}  # \"in\"\n"
		 "%%12 = MatMul(%%11, %%1)\n"
		 "%%13 = Add(%%12, %%2)\n"
		 "%%14 = Slice(%%13, %%5, %%6, %%9)\n"
		 "%%15 = Slice(%%13, %%6, %%7, %%9)\n"
		 "%%16 = Slice(%%13, %%7, %%8, %%9)\n"
		 "%%17 = Attention@23(%%14, %s, %%16) {q_num_heads=2, kv_num_heads=2, ox_seq_first=1}  # \"attn\"\n"
		 "%%18 = Reshape(%%17, %%10)\n"
		 "%%19 = Gemm(%%18, %%3, %%4) {transB=1}\n"
		 "%%20 = Shape(%%17)\n"
		 "%%21 = Reshape(%%19, %%20)\n"
		 "%%22 = Transpose(%%21) {perm=[1,0,2]}  # \"out\"\n"
		 "%%23 = Add(%%0, %%22)  # \"residual\"\n"
		 "output %%23 \"y\"\n"
		 "%s",
		 k_in, extra);
	return run_to_on(text, "generic", gpu, "rows");
}

/* the value node n reads as input k comes from a node of op `op` */
static int reads_op(const ox_graph *g, const ox_node *n, int k, int op)
{
	const ox_id p = g->vals[n->in[k]].producer;
	return p >= 0 && g->nodes[p].op == op;
}

/* Both Transposes go: the region computes batch first, the Attention
 * reads [B, S, E] rows, the residual Add reads the out_proj's rows (the
 * GPU and the CPU alike). Not when a value of the region has a reader
 * that is not row-wise (a ReduceSum over the sequence), nor when the
 * Attention's K comes from outside the region (its rows would stay
 * sequence first): the GPU keeps the sequence-first Attention, the CPU
 * (whose kernels read batch first, the batch here a run-time dim) reads
 * it through Transposes to [B, S, E] and back; with a constant batch as
 * B*H heads of [1, S, B*E] (views). */
static void test_rows_mha(void **state)
{
	(void)state;
	for (int gpu = 0; gpu < 2; gpu++) {
		ox_graph *g = mha_rows("", "%15", gpu);
		assert_int_equal(count_op(g, OX_OP_Transpose), 0);
		const ox_node *a = first_op(g, OX_OP_Attention);
		assert_non_null(a);
		assert_int_equal(ox_attr_int(a, "ox_seq_first", 0), 0);
		for (int k = 0; k < 3; k++) {
			const ox_shape *q = &g->vals[a->in[k]].shape;
			assert_int_equal(q->rank, 3);
			assert_int_equal(q->d[0], g->vals[0].shape.d[0]); /* B */
			assert_int_equal(q->d[1], g->vals[0].shape.d[1]); /* S */
		}
		const ox_shape *y = &g->vals[a->out[0]].shape;
		assert_int_equal(y->d[0], g->vals[0].shape.d[0]);
		const ox_node *add = NULL;
		for (int i = 0; i < g->nnodes; i++)
			if (!strcmp(g->nodes[i].name, "residual"))
				add = &g->nodes[i];
		assert_non_null(add);
		assert_true(reads_op(g, add, 1, OX_OP_Reshape));
		ox_ir_free(g);

		for (int v = 0; v < 2; v++) {
			g = v ? mha_rows("", "%25", gpu)
			      : mha_rows("%24 = ReduceSum(%13, %5) {keepdims=1}\noutput %24 \"sum\"\n", "%15", gpu);
			a = first_op(g, OX_OP_Attention);
			assert_int_equal(ox_attr_int(a, "ox_seq_first", 0), gpu);
			/* the two of the model; on the CPU one more for each of Q, K, V, Y */
			assert_int_equal(count_op(g, OX_OP_Transpose), gpu ? 2 : 6);
			for (int k = 0; k < 3 && !gpu; k++)
				assert_true(reads_op(g, a, k, OX_OP_Transpose));
			ox_ir_free(g);
		}
	}
	/* a constant batch on the CPU: B*H heads of [1, S, B*E] views */
	ox_graph *g = ox_ir_parse("graph \"sf\" opset 13\n"
				  "input %0:f32[5,2,8] \"q\"\n"
				  "input %1:f32[7,2,8] \"k\"\n"
				  "input %2:f32[7,2,8] \"v\"\n"
				  "%3 = Attention@23(%0, %1, %2) {q_num_heads=2, kv_num_heads=2, ox_seq_first=1}\n"
				  "output %3 \"y\"\n",
				  "t.ir");
	assert_non_null(g);
	g->target = ox_target_find("generic");
	if (ox_opt_run(g, 1, "rows"))
		fail_msg("the pipeline failed (message above)");
	const ox_node *a = first_op(g, OX_OP_Attention);
	assert_int_equal(ox_attr_int(a, "ox_seq_first", 0), 0);
	assert_int_equal(ox_attr_int(a, "q_num_heads", 0), 4);
	assert_int_equal(count_op(g, OX_OP_Transpose), 0);
	for (int k = 0; k < 3; k++) {
		assert_true(reads_op(g, a, k, OX_OP_Reshape));
		assert_int_equal(g->vals[a->in[k]].shape.d[0], 1);
		assert_int_equal(g->vals[a->in[k]].shape.d[2], 16);
	}
	ox_ir_free(g);
}

/* ---- norm ---- */

/* the position of op's first node, its input k's value */
static const ox_value *in_of(const ox_graph *g, int op, int k)
{
	const ox_node *n = first_op(g, op);
	assert_non_null(n);
	assert_true(k < n->nin && n->in[k] >= 0);
	return &g->vals[n->in[k]];
}

/* BERT's LayerNorm (opset 13, axes attribute): ReduceMean, Sub, Pow 2,
 * ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta: one node with gamma
 * and beta as Scale and B, all nine names listed. */
static void test_norm_layernorm(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"ln\" opset 13\n"
			     "input %0:f32[2,5,6] \"x\"\n"
			     "const %1:f32[] \"two\" = [2]\n"
			     "const %2:f32[] \"eps\" = [1e-05]\n"
			     "const %3:f32[6] \"gamma\" = [1, 2, 3, 4, 5, 6]\n"
			     "const %4:f32[6] \"beta\" = [0, 1, 0, 1, 0, 1]\n"
			     "%5 = ReduceMean(%0) {axes=[-1]}  # \"mean\"\n"
			     "%6 = Sub(%0, %5)  # \"sub\"\n"
			     "%7 = Pow(%6, %1)  # \"pow\"\n"
			     "%8 = ReduceMean(%7) {axes=[2]}  # \"var\"\n"
			     "%9 = Add(%8, %2)  # \"add\"\n"
			     "%10 = Sqrt(%9)  # \"sqrt\"\n"
			     "%11 = Div(%6, %10)  # \"div\"\n"
			     "%12 = Mul(%11, %3)  # \"gamma\"\n"
			     "%13 = Add(%12, %4)  # \"beta\"\n"
			     "%14 = Relu(%0)\n"
			     "output %13 \"y\"\n"
			     "output %14 \"r\"\n",
			     "generic", "norm");
	assert_int_equal(count_op(g, OX_OP_LayerNormalization), 1);
	assert_int_equal(g->nnodes, 2);
	const ox_node *n = first_op(g, OX_OP_LayerNormalization);
	assert_int_equal(n->nin, 3);
	assert_int_equal(n->in[0], 0);
	assert_int_equal(n->in[1], 3);
	assert_int_equal(n->in[2], 4);
	assert_int_equal(n->out[0], 13);
	assert_int_equal(ox_attr_int(n, "axis", 0), 2);
	assert_true(fabs(ox_attr_float(n, "epsilon", 0) - 1e-5) < 1e-12);
	assert_string_equal(n->name, "mean");
	const ox_attr *fu = ox_attr_get(n, "ox_fused");
	assert_non_null(fu);
	assert_int_equal(fu->n, 9);
	assert_string_equal(fu->strs[0], "mean");
	assert_string_equal(fu->strs[8], "beta");
	ox_ir_free(g);
}

/* Opset 18 (axes an input) over the last two axes, Mul(d, d), d * 1/s,
 * gamma on the left and of shape [1, 4, 3]; no beta: one node with a
 * [4, 3] Scale holding gamma. Without gamma and beta: Scale is ones. */
static void test_norm_layernorm_forms(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"ln18\" opset 18\n"
			     "input %0:f32[2,4,3] \"x\"\n"
			     "const %1:i64[2] \"axes\" = [-2, -1]\n"
			     "const %2:f32[1] \"eps\" = [0.001]\n"
			     "const %3:f32[1,4,3] \"gamma\" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n"
			     "%4 = ReduceMean(%0, %1)\n"
			     "%5 = Sub(%0, %4)\n"
			     "%6 = Mul(%5, %5)\n"
			     "%7 = ReduceMean(%6, %1)\n"
			     "%8 = Add(%2, %7)\n"
			     "%9 = Sqrt(%8)\n"
			     "%10 = Reciprocal(%9)\n"
			     "%11 = Mul(%10, %5)\n"
			     "%12 = Mul(%3, %11)\n"
			     "output %12 \"y\"\n",
			     "generic", "norm");
	assert_int_equal(g->nnodes, 1);
	const ox_node *n = &g->nodes[0];
	assert_int_equal(n->op, OX_OP_LayerNormalization);
	assert_int_equal(n->nin, 2);
	assert_int_equal(ox_attr_int(n, "axis", 0), 1);
	const ox_value *w = &g->vals[n->in[1]];
	assert_int_equal(w->shape.rank, 2);
	assert_int_equal(w->shape.d[0], 4);
	assert_true(ox_tensor_get_f64(w->data, 11) == 12);
	assert_int_equal(nfused(n), 9);
	ox_ir_free(g);

	g = run_to("graph \"plain\" opset 13\n"
		   "input %0:f32[3,10] \"x\"\n"
		   "const %1:f32[] \"two\" = [2]\n"
		   "const %2:f32[] \"eps\" = [1e-05]\n"
		   "%3 = ReduceMean(%0) {axes=[1]}\n"
		   "%4 = Sub(%0, %3)\n"
		   "%5 = Pow(%4, %1)\n"
		   "%6 = ReduceMean(%5) {axes=[1]}\n"
		   "%7 = Add(%6, %2)\n"
		   "%8 = Sqrt(%7)\n"
		   "%9 = Div(%4, %8)\n"
		   "output %9 \"y\"\n",
		   "generic", "norm");
	assert_int_equal(g->nnodes, 1);
	w = in_of(g, OX_OP_LayerNormalization, 1);
	assert_int_equal(w->shape.rank, 1);
	assert_int_equal(w->shape.d[0], 10);
	for (int k = 0; k < 10; k++)
		assert_true(ox_tensor_get_f64(w->data, k) == 1);
	ox_ir_free(g);
}

/* near misses: d also a graph output; a mean over a non-trailing axis;
 * Pow 3 for the variance; the two means over different axes. No
 * LayerNorm; where d's variance is over trailing axes, its normalization is
 * an RMSNorm of d (the same numbers). */
static void test_norm_layernorm_refused(void **state)
{
	(void)state;
	static const char *const variants[][4] = {
		/* mean axes, variance axes, exponent, extra output */
		{"[-1]", "[-1]", "2", "output %6 \"d\"\n"},
		{"[1]", "[1]", "2", ""},
		{"[-1]", "[-1]", "3", ""},
		{"[-1]", "[1,2]", "2", ""},
	};
	for (int v = 0; v < 4; v++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "graph \"no\" opset 13\n"
			 "input %%0:f32[2,5,6] \"x\"\n"
			 "const %%1:f32[] \"p\" = [%s]\n"
			 "const %%2:f32[] \"eps\" = [1e-05]\n"
			 "%%5 = ReduceMean(%%0) {axes=%s}\n"
			 "%%6 = Sub(%%0, %%5)\n"
			 "%%7 = Pow(%%6, %%1)\n"
			 "%%8 = ReduceMean(%%7) {axes=%s}\n"
			 "%%9 = Add(%%8, %%2)\n"
			 "%%10 = Sqrt(%%9)\n"
			 "%%11 = Div(%%6, %%10)\n"
			 "output %%11 \"y\"\n%s",
			 variants[v][2], variants[v][0], variants[v][1], variants[v][3]);
		ox_graph *g = run_to(text, "generic", "norm");
		assert_int_equal(count_op(g, OX_OP_LayerNormalization), 0);
		assert_int_equal(count_op(g, OX_OP_Sub), 1);
		/* the variance of d over trailing axes is still an RMSNorm of d */
		assert_int_equal(count_op(g, OX_OP_RMSNormalization), v == 0 || v == 3);
		ox_ir_free(g);
	}
}

/* RMSNorm: x / sqrt(mean(x^2) + eps) * w; LLaMA's (w * x) * (1 / sqrt(...))
 * with Mul(x, x) and Div(1, s) */
static void test_norm_rmsnorm(void **state)
{
	(void)state;
	ox_graph *g = run_to("graph \"rms\" opset 13\n"
			     "input %0:f32[3,8] \"x\"\n"
			     "const %1:f32[] \"two\" = [2]\n"
			     "const %2:f32[] \"eps\" = [1e-06]\n"
			     "const %3:f32[8] \"w\" = [1, 2, 3, 4, 5, 6, 7, 8]\n"
			     "%4 = Pow(%0, %1)\n"
			     "%5 = ReduceMean(%4) {axes=[-1]}\n"
			     "%6 = Add(%5, %2)\n"
			     "%7 = Sqrt(%6)\n"
			     "%8 = Div(%0, %7)\n"
			     "%9 = Mul(%8, %3)\n"
			     "output %9 \"y\"\n",
			     "generic", "norm");
	assert_int_equal(g->nnodes, 1);
	const ox_node *n = &g->nodes[0];
	assert_int_equal(n->op, OX_OP_RMSNormalization);
	assert_int_equal(n->in[0], 0);
	assert_int_equal(n->in[1], 3);
	assert_int_equal(ox_attr_int(n, "axis", 0), 1);
	assert_true(fabs(ox_attr_float(n, "epsilon", 0) - 1e-6) < 1e-13);
	assert_int_equal(nfused(n), 6);
	ox_ir_free(g);

	g = run_to("graph \"llama\" opset 13\n"
		   "input %0:f32[1,3,8] \"x\"\n"
		   "const %1:f32[] \"one\" = [1]\n"
		   "const %2:f32[] \"eps\" = [1e-06]\n"
		   "const %3:f32[8] \"w\" = [1, 2, 3, 4, 5, 6, 7, 8]\n"
		   "%4 = Mul(%0, %0)\n"
		   "%5 = ReduceMean(%4) {axes=[-1]}\n"
		   "%6 = Add(%2, %5)\n"
		   "%7 = Sqrt(%6)\n"
		   "%8 = Div(%1, %7)\n"
		   "%9 = Mul(%3, %0)\n"
		   "%10 = Mul(%9, %8)\n"
		   "%11 = Add(%10, %0)\n"
		   "output %11 \"y\"\n",
		   "generic", "norm");
	n = first_op(g, OX_OP_RMSNormalization);
	assert_non_null(n);
	assert_int_equal(g->nnodes, 2);
	assert_int_equal(n->in[1], 3);
	assert_int_equal(nfused(n), 7);
	ox_ir_free(g);

	/* x^2 also read elsewhere: left alone */
	g = run_to("graph \"no\" opset 13\n"
		   "input %0:f32[3,8] \"x\"\n"
		   "const %2:f32[] \"eps\" = [1e-06]\n"
		   "%4 = Mul(%0, %0)\n"
		   "%5 = ReduceMean(%4) {axes=[-1]}\n"
		   "%6 = Add(%5, %2)\n"
		   "%7 = Sqrt(%6)\n"
		   "%8 = Div(%0, %7)\n"
		   "%9 = Add(%8, %4)\n"
		   "output %9 \"y\"\n",
		   "generic", "norm");
	assert_int_equal(count_op(g, OX_OP_RMSNormalization), 0);
	ox_ir_free(g);
}

static const char *gelu_erf = /* printf: the constant, Div or Mul */
	"graph \"gelu\" opset 13\n"
	"input %%0:f32[4,10] \"x\"\n"
	"const %%1:f32[] \"c\" = [%s]\n"
	"const %%2:f32[] \"one\" = [1]\n"
	"const %%3:f32[] \"half\" = [0.5]\n"
	"%%4 = %s(%%0, %%1)\n"
	"%%5 = Erf(%%4)\n"
	"%%6 = Add(%%2, %%5)\n"
	"%%7 = Mul(%%0, %%3)\n"
	"%%8 = Mul(%%6, %%7)\n"
	"output %%8 \"y\"\n";

/* GELU, erf form (Mul by 1/sqrt 2, the 0.5 first; Div by sqrt 2) and tanh
 * form (x^3 as Pow; as Mul(x, Mul(x, x))); a wrong constant is left alone */
static void test_norm_gelu(void **state)
{
	(void)state;
	static const char *const forms[][3] = {
		{"0.707106769", "Mul", "1"}, {"1.41421354", "Div", "1"}, {"1.5", "Div", "0"}, {"0.7071", "Mul", "0"},
	};
	for (int f = 0; f < 4; f++) {
		char text[1024];
		snprintf(text, sizeof text, gelu_erf, forms[f][0], forms[f][1]);
		ox_graph *g = run_to(text, "generic", "norm");
		int want = forms[f][2][0] == '1';
		assert_int_equal(count_op(g, OX_OP_Gelu), want);
		if (want) {
			const ox_node *n = first_op(g, OX_OP_Gelu);
			assert_int_equal(g->nnodes, 1);
			assert_string_equal(ox_attr_str(n, "approximate", "none"), "none");
			assert_int_equal(nfused(n), 5);
		}
		ox_ir_free(g);
	}
	for (int cube = 0; cube < 2; cube++) {
		char text[2048];
		snprintf(text, sizeof text,
			 "graph \"tanh\" opset 13\n"
			 "input %%0:f32[4,10] \"x\"\n"
			 "const %%1:f32[] \"three\" = [3]\n"
			 "const %%2:f32[] \"kappa\" = [0.044715]\n"
			 "const %%3:f32[] \"k\" = [0.797884583]\n"
			 "const %%4:f32[] \"one\" = [1]\n"
			 "const %%5:f32[] \"half\" = [0.5]\n"
			 "%s"
			 "%%7 = Mul(%%2, %%6)\n"
			 "%%8 = Add(%%0, %%7)\n"
			 "%%9 = Mul(%%8, %%3)\n"
			 "%%10 = Tanh(%%9)\n"
			 "%%11 = Add(%%10, %%4)\n"
			 "%%12 = Mul(%%0, %%11)\n"
			 "%%13 = Mul(%%5, %%12)\n"
			 "output %%13 \"y\"\n",
			 cube ? "%20 = Mul(%0, %0)\n%6 = Mul(%0, %20)\n" : "%6 = Pow(%0, %1)\n");
		ox_graph *g = run_to(text, "generic", "norm");
		assert_int_equal(g->nnodes, 1);
		const ox_node *n = &g->nodes[0];
		assert_int_equal(n->op, OX_OP_Gelu);
		assert_string_equal(ox_attr_str(n, "approximate", "none"), "tanh");
		assert_int_equal(nfused(n), 8 + cube);
		ox_ir_free(g);
	}
}

/* ---- the row kernels (codegen/c/emit_rows.c): which nodes take them ---- */

static int rows_ok(const char *text, int opt)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	assert_non_null(g);
	g->target = ox_target_find("x86-64-v3");
	g->opt = opt;
	assert_int_equal(ox_opt_run(g, 1, "plan"), 0);
	int ok = -1;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op != OX_OP_Fused)
			ok = ox_cg_rows_ok(g, &g->nodes[i]);
	ox_ir_free(g);
	return ok;
}

/* f32 rows of contiguous floats (Scale/B one value or row-shaped, softmax
 * over the last axis or opset 11's 2-D coercion) take the vector kernels;
 * another dtype, stash type, broadcast shape or axis, or --opt 0, do not */
static void test_rows_kernels(void **state)
{
	(void)state;
	static const struct {
		const char *node, *x, *extra;
		int opset, want;
	} c[] = {
		{"LayerNormalization(%0, %1, %2) {axis=-1}", "f32[3,37]", "const %1:f32[37] \"s\" = <148 bytes>\nconst %2:f32[1,37] \"b\" = <148 bytes>\n", 17, 1},
		{"LayerNormalization(%0, %1) {axis=1}", "f32[3,4,5]", "const %1:f32[] \"s\" = [2]\n", 17, 1},
		{"LayerNormalization(%0, %1) {axis=1}", "f32[3,4,5]", "const %1:f32[4,1] \"s\" = [1, 2, 3, 4]\n", 17, 0},
		{"LayerNormalization(%0, %1) {axis=-1, stash_type=11}", "f32[3,37]", "const %1:f32[37] \"s\" = <148 bytes>\n", 17, 0},
		{"LayerNormalization(%0, %1) {axis=-1}", "f64[3,37]", "const %1:f64[37] \"s\" = <296 bytes>\n", 17, 0},
		{"RMSNormalization(%0, %1) {axis=-1}", "f32[3,37]", "const %1:f32[37] \"s\" = <148 bytes>\n", 23, 1},
		{"Softmax(%0) {axis=-1}", "f32[2,3,21]", "", 13, 1},
		{"Softmax(%0) {axis=1}", "f32[2,3,21]", "", 13, 0},
		{"Softmax(%0) {axis=1}", "f32[2,21,1,1]", "", 13, 1},
		{"LogSoftmax(%0) {axis=1}", "f32[2,3,21]", "", 11, 1},
		{"Softmax(%0) {axis=-1}", "f16[2,21]", "", 13, 0},
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		char text[1024];
		snprintf(text, sizeof text, "graph \"r\" opset %d\ninput %%0:%s \"x\"\n%s%%3 = %s\noutput %%3 \"y\"\n",
			 c[k].opset, c[k].x, c[k].extra, c[k].node);
		if (rows_ok(text, 1) != c[k].want)
			fail_msg("row kernels %s for:\n%s", c[k].want ? "not taken" : "taken", text);
		assert_int_equal(rows_ok(text, 0), 0); /* --opt 0: the scalar emitters */
	}
}

/* ---- pack ---- */

/* A blocked Conv's weights are packed for its tile, its bias padded, and
 * a padded Conv gets scratch for the zero-bordered input. */
static void test_pack_conv(void **state)
{
	(void)state;
	ox_graph *g = run_to(cnn, "x86-64-v4", "pack");
	const ox_node *c = first_op(g, OX_OP_Conv);
	const ox_value *w = &g->vals[c->in[1]], *b = &g->vals[c->in[2]];
	ox_convgeo q;
	assert_int_equal(ox_opt_conv_geo(g, c, &q), 0);
	assert_int_equal(w->layout, OX_L_CONVW);
	assert_int_equal(w->lp[0], 16);
	assert_int_equal(w->lp[1], q.ocb);
	assert_int_equal(w->lp[2], 0); /* a plain input */
	assert_int_equal(b->layout, OX_L_PADDED);
	assert_int_equal(ox_value_storage_numel(b), 16);
	assert_true(c->scratch);
	/* the packed row r = (kh, kw, c) of group 0 holds the weights of every
	 * output channel: 6 real, 10 zero */
	const float *pw = w->data->data, *ow = g->vals[1].data->data;
	for (int m = 0; m < 16; m++)
		assert_true(pw[m] == (m < 6 ? ow[m * 27] : 0.0f));
	/* the depthwise one */
	const ox_node *d = NULL;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Conv && &g->nodes[i] != c)
			d = &g->nodes[i];
	assert_non_null(d);
	assert_int_equal(g->vals[d->in[1]].layout, OX_L_DWW);
	assert_false(d->scratch); /* depthwise reads its input in place */
	ox_ir_free(g);
}

/* ---- winograd ---- */

/* Parse, set the target and --winograd, run the pipeline up to `upto`. */
static ox_graph *run_wino(const char *text, const char *cpu, int winograd, const char *upto)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	g->target = ox_target_find(cpu);
	g->winograd = winograd;
	if (ox_opt_run(g, 1, upto))
		fail_msg("the pipeline failed (message above) for:\n%s", text);
	return g;
}

/* the Conv whose output is value v */
static const ox_node *conv_of(const ox_graph *g, ox_id v)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Conv && g->nodes[i].out[0] == v)
			return &g->nodes[i];
	fail_msg("no Conv makes %%%d", v);
	return NULL;
}

/* a 3x3 stride-1 Conv on a blocked input (%8) beside the cases Winograd
 * cannot compute: stride 2 (%9), dilation 2 (%10), depthwise (%11), a
 * plain input (%12); and three it can but should not: 64 -> 16 channels
 * on a 3x3 image (%14, under a megaflop), 4 channels on 128x128 (%20,
 * with 16-lane vectors), 256 channels on 2x2 (%25) */
static const char *wino_net =
	"graph \"wino\" opset 13\n"
	"input %0:f32[1,32,28,28] \"x\"\n"
	"const %1:f32[64,32,1,1] \"w0\" = <8192 bytes>\n"
	"const %2:f32[64,64,3,3] \"w1\" = <147456 bytes>\n"
	"const %3:f32[64,64,3,3] \"w2\" = <147456 bytes>\n"
	"const %4:f32[64,64,3,3] \"w3\" = <147456 bytes>\n"
	"const %5:f32[64,1,3,3] \"wd\" = <2304 bytes>\n"
	"const %6:f32[64,32,3,3] \"wp\" = <73728 bytes>\n"
	"const %13:f32[16,64,3,3] \"w4\" = <36864 bytes>\n"
	"%7 = Conv(%0, %1)\n"
	"%8 = Conv(%7, %2) {pads=[1,1,1,1]}\n"
	"%9 = Conv(%8, %3) {pads=[1,1,1,1], strides=[2,2]}\n"
	"%10 = Conv(%8, %4) {pads=[2,2,2,2], dilations=[2,2]}\n"
	"%11 = Conv(%8, %5) {group=64, pads=[1,1,1,1]}\n"
	"%12 = Conv(%0, %6) {pads=[1,1,1,1]}\n"
	"%15 = MaxPool(%9) {kernel_shape=[4,4], strides=[4,4]}\n"
	"%14 = Conv(%15, %13) {pads=[1,1,1,1]}\n"
	"input %16:f32[1,4,128,128] \"x4\"\n"
	"const %17:f32[4,4,1,1] \"w5\" = <64 bytes>\n"
	"const %18:f32[4,4,3,3] \"w6\" = <576 bytes>\n"
	"%19 = Conv(%16, %17)\n"
	"%20 = Conv(%19, %18) {pads=[1,1,1,1]}\n"
	"input %21:f32[1,256,2,2] \"x5\"\n"
	"const %22:f32[256,256,1,1] \"w7\" = <262144 bytes>\n"
	"const %23:f32[256,256,3,3] \"w8\" = <2359296 bytes>\n"
	"%24 = Conv(%21, %22)\n"
	"%25 = Conv(%24, %23) {pads=[1,1,1,1]}\n"
	"output %10 \"a\"\n"
	"output %11 \"b\"\n"
	"output %12 \"c\"\n"
	"output %14 \"d\"\n"
	"output %20 \"e\"\n"
	"output %25 \"f\"\n";

/* The choice: only the 3x3 stride-1 dilation-1 group-1 Conv on a blocked
 * input is eligible, and it gets F(4x4) on AVX-512 (64 channels on 28x28:
 * 3x fewer cycles modeled and measured); --winograd off leaves every Conv
 * direct, --winograd 2 forces F(2x2) on the eligible ones only. */
static void test_winograd_choice(void **state)
{
	(void)state;
	ox_graph *g = run_wino(wino_net, "x86-64-v4", 1, "winograd");
	const ox_node *c = conv_of(g, 8);
	assert_true(ox_opt_wino_eligible(g, c));
	const ox_value *w = &g->vals[c->in[1]];
	assert_int_equal(w->layout, OX_L_WINOW);
	assert_int_equal(w->lp[0], 16);
	assert_int_equal(w->lp[1], 4);
	assert_int_equal(w->lp[2], 2);
	assert_int_equal(ox_value_storage_numel(w), 36 * 64 * 64);
	for (ox_id v = 9; v <= 12; v++) {
		assert_false(ox_opt_wino_eligible(g, conv_of(g, v)));
		assert_int_equal(g->vals[conv_of(g, v)->in[1]].layout, OX_L_PLAIN);
	}
	/* eligible, but a layer under a megaflop stays direct; and the model
	 * says direct where the transforms cost more than the multiplies they
	 * save: 4 channels in 16 lanes (measured on 32x32: 0.016 ms direct,
	 * 0.025 F(2x2), 0.033 F(4x4)), and on every target where the bigger
	 * weights' traffic dominates: 256 channels on a 2x2 image */
	assert_true(ox_opt_wino_eligible(g, conv_of(g, 14)));
	assert_int_equal(g->vals[conv_of(g, 14)->in[1]].layout, OX_L_PLAIN);
	ox_ir_free(g);
	static const char *const cpus[] = {"x86-64-v4", "x86-64-v3", "generic", "armv8-a"};
	for (int k = 0; k < 4; k++) {
		g = run_wino(wino_net, cpus[k], 1, "winograd");
		for (ox_id v = k ? 25 : 20; v <= 25; v += 5) {
			assert_true(ox_opt_wino_eligible(g, conv_of(g, v)));
			ox_convgeo d, w2, w4;
			assert_int_equal(ox_opt_conv_geo_as(g, conv_of(g, v), 0, &d), 0);
			assert_int_equal(ox_opt_conv_geo_as(g, conv_of(g, v), 2, &w2), 0);
			assert_int_equal(ox_opt_conv_geo_as(g, conv_of(g, v), 4, &w4), 0);
			double cd = ox_opt_conv_cycles(g, &d), c2 = ox_opt_conv_cycles(g, &w2), c4 = ox_opt_conv_cycles(g, &w4);
			if (!(cd < c2 && cd < c4))
				fail_msg("--cpu %s, %%%d: modeled cycles direct %g, F(2x2) %g, F(4x4) %g", cpus[k], v, cd, c2, c4);
			assert_int_equal(g->vals[conv_of(g, v)->in[1]].layout, OX_L_PLAIN);
		}
		assert_int_equal(g->vals[conv_of(g, 8)->in[1]].layout, OX_L_WINOW);
		ox_ir_free(g);
	}

	/* after pack: the geometry codegen reads, scratch for the slots */
	g = run_wino(wino_net, "x86-64-v4", 1, "pack");
	c = conv_of(g, 8);
	ox_convgeo q;
	assert_int_equal(ox_opt_conv_geo(g, c, &q), 0);
	assert_int_equal(q.wm, 4);
	assert_int_equal(q.th, 7);
	assert_int_equal(q.tw, 7);
	assert_int_equal(q.ocb, 2);
	assert_int_equal(q.wnt % q.rows == 0 || q.wnt == 49, 1);
	assert_false(q.copy); /* borders are tested in the transform, no padded copy */
	assert_true(c->scratch);
	assert_int_equal(g->vals[c->out[c->nout - 1]].shape.d[0], q.wscratch * 4);
	assert_int_equal(g->vals[c->in[2]].layout, OX_L_PADDED);
	assert_int_equal(g->vals[conv_of(g, 9)->in[1]].layout, OX_L_CONVW);
	ox_ir_free(g);

	g = run_wino(wino_net, "x86-64-v4", 0, "pack");
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OX_OP_Conv)
			assert_int_not_equal(g->vals[g->nodes[i].in[1]].layout, OX_L_WINOW);
	ox_ir_free(g);

	g = run_wino(wino_net, "generic", 2, "winograd");
	assert_int_equal(g->vals[conv_of(g, 8)->in[1]].layout, OX_L_WINOW);
	assert_int_equal(g->vals[conv_of(g, 8)->in[1]].lp[1], 2);
	assert_int_equal(g->vals[conv_of(g, 8)->in[1]].lp[0], 4);
	assert_int_equal(g->vals[conv_of(g, 14)->in[1]].lp[1], 2); /* forced */
	assert_int_equal(g->vals[conv_of(g, 9)->in[1]].layout, OX_L_PLAIN);
	ox_ir_free(g);
}

/* The matrices compute the correlation: for random d and g, 1-D
 * A^T [(G g) . (B^T d)] = y with y[i] = sum_k d[i + k] g[k] (and so the
 * 2-D nesting), to double rounding. */
static void test_winograd_matrices(void **state)
{
	(void)state;
	assert_null(ox_opt_wino_mats(3));
	for (int m = 2; m <= 4; m += 2) {
		const ox_winomats *W = ox_opt_wino_mats(m);
		assert_non_null(W);
		assert_int_equal(W->T, m + 2);
		srand(7);
		for (int trial = 0; trial < 20; trial++) {
			double d[6], gk[3], u[6], v[6];
			for (int i = 0; i < W->T; i++)
				d[i] = rand() / (double)RAND_MAX - 0.5;
			for (int k = 0; k < 3; k++)
				gk[k] = rand() / (double)RAND_MAX - 0.5;
			for (int i = 0; i < W->T; i++) {
				u[i] = v[i] = 0;
				for (int k = 0; k < 3; k++)
					u[i] += W->g[i * 3 + k] * gk[k];
				for (int j = 0; j < W->T; j++)
					v[i] += W->bt[i * W->T + j] * d[j];
			}
			for (int i = 0; i < m; i++) {
				double y = 0, want = 0;
				for (int j = 0; j < W->T; j++)
					y += W->at[i * W->T + j] * u[j] * v[j];
				for (int k = 0; k < 3; k++)
					want += d[i + k] * gk[k];
				if (fabs(y - want) > 1e-12)
					fail_msg("F(%d): output %d is %.17g, the correlation %.17g", m, i, y, want);
			}
		}
	}
}

/* The weights: U = G g G^T per output and input channel in double,
 * rounded once, at [group][point][C][group width] with lanes past M zero;
 * and the layout prints and parses back as @winow(b,m,ocb). */
static void test_winograd_weights(void **state)
{
	(void)state;
	static const char *net =
		"graph \"w\" opset 13\n"
		"input %0:f32[1,5,6,7] \"x\"\n"
		"const %1:f32[5,5,1,1] \"w0\" = <100 bytes>\n"
		"const %2:f32[3,5,3,3] \"w1\" = <540 bytes>\n"
		"%3 = Conv(%0, %1)\n"
		"%4 = Conv(%3, %2) {pads=[1,1,1,1]}\n"
		"output %4 \"y\"\n";
	for (int m = 2; m <= 4; m += 2) {
		ox_graph *g = ox_ir_parse(net, "t.ir");
		assert_non_null(g);
		g->target = ox_target_find("x86-64-v3");
		g->winograd = m;
		float *w = g->vals[2].data->data;
		for (int i = 0; i < 3 * 5 * 9; i++)
			w[i] = (float)((i * 37 % 101) - 50) / 64.0f;
		assert_int_equal(ox_opt_run(g, 1, "winograd"), 0);
		const ox_value *u = &g->vals[conv_of(g, 4)->in[1]];
		const ox_winomats *W = ox_opt_wino_mats(m);
		assert_int_equal(u->layout, OX_L_WINOW);
		assert_int_equal(u->lp[1], m);
		const int T = W->T, gw = u->lp[2] * 8; /* one group: 3 channels in 1 vector of 8 */
		assert_int_equal(u->lp[2], 1);
		const float *p = u->data->data;
		for (int o = 0; o < gw; o++)
			for (int c = 0; c < 5; c++)
				for (int i = 0; i < T; i++)
					for (int j = 0; j < T; j++) {
						double want = 0;
						for (int a = 0; a < 3 && o < 3; a++)
							for (int b = 0; b < 3; b++)
								want += W->g[i * 3 + a] * (double)w[(o * 5 + c) * 9 + a * 3 + b] * W->g[j * 3 + b];
						float got = p[((i * T + j) * 5 + c) * gw + o];
						if (got != (float)want)
							fail_msg("F(%d) U[%d][%d] of output %d input %d: %.9g, want %.9g", m, i, j, o, c,
								 got, (float)want);
					}
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		ox_ir_dump(g, f);
		fclose(f);
		char want[64];
		snprintf(want, sizeof want, "@winow(8,%d,1)", m);
		assert_non_null(strstr(text, want));
		ox_graph *h = ox_ir_parse(text, "dump.ir");
		assert_non_null(h);
		const ox_value *hu = &h->vals[conv_of(h, 4)->in[1]];
		assert_int_equal(hu->layout, OX_L_WINOW);
		assert_int_equal(hu->lp[0], 8);
		assert_int_equal(hu->lp[1], m);
		assert_int_equal(ox_value_storage_numel(hu), T * T * 5 * 8);
		ox_ir_free(h);
		free(text);
		ox_ir_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_affine_bn_mul),
		cmocka_unit_test(test_affine_refused),
		cmocka_unit_test(test_affine_gemm),
		cmocka_unit_test(test_layout_chain),
		cmocka_unit_test(test_layout_off),
		cmocka_unit_test(test_epilogue_residual),
		cmocka_unit_test(test_epilogue_refused),
		cmocka_unit_test(test_epilogue_gemm_gelu),
		cmocka_unit_test(test_ewfuse_chain),
		cmocka_unit_test(test_ewfuse_pow),
		cmocka_unit_test(test_attention_bert),
		cmocka_unit_test(test_attention_refused),
		cmocka_unit_test(test_attention_causal),
		cmocka_unit_test(test_attention_causal_const),
		cmocka_unit_test(test_gemmnorm),
		cmocka_unit_test(test_dwpw),
		cmocka_unit_test(test_layout_gpu_image),
		cmocka_unit_test(test_siblings_glu),
		cmocka_unit_test(test_rows_mha),
		cmocka_unit_test(test_norm_layernorm),
		cmocka_unit_test(test_norm_layernorm_forms),
		cmocka_unit_test(test_norm_layernorm_refused),
		cmocka_unit_test(test_norm_rmsnorm),
		cmocka_unit_test(test_norm_gelu),
		cmocka_unit_test(test_rows_kernels),
		cmocka_unit_test(test_pack_conv),
		cmocka_unit_test(test_winograd_choice),
		cmocka_unit_test(test_winograd_matrices),
		cmocka_unit_test(test_winograd_weights),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
