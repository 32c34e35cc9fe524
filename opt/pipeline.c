/* pipeline.c: the pass order, as one literal table (QBE main.c style).
 *
 * fold    infer shapes and dtypes in topological order, folding constant
 *         subgraphs (exporters' Shape/Gather/Concat arithmetic) as it goes
 * symshape  a Reshape target or ConstantOfShape shape that fold knew as dim
 *         expressions is not read (the exporters' Shape/Concat chains then die)
 * outline the regions of the If, Loop and Scan nodes kept as C control
 *         flow become their bodies, each through the rest of the pipeline
 * elide   remove Identity, inference-mode Dropout and a Cast to its input's type
 * dce     remove nodes and constants nothing uses
 * bounds  require every dim to be constant or a bounded run-time dim (names
 *         an unbound symbol, or a run-time size with no bound and the flags
 *         that give one)
 * attention  MatMul-scale-mask-Softmax-MatMul into one Attention node (--opt 1)
 * norm    LayerNorm, RMSNorm and GELU written out by exporters, each into one
 *         ONNX node (--opt 1; before epilogue and ewfuse, which then fuse a
 *         Gelu into its MatMul, and before layout, which leaves the norms plain)
 * transpose  Transpose/reshape chains made one copy at most (--opt 1; after
 *         attention, whose patterns are the exporters' Reshape/Transpose forms)
 * rows    a Transpose of rows (its last axis kept) and the one undoing it
 *         removed when only row-wise ops lie between them (--opt 1; a
 *         batch-first nn.MultiheadAttention with a run-time batch)
 * qdq     int8 QDQ groups (DequantizeLinear -> op -> QuantizeLinear) into
 *         integer kernels with fixed-point requantization (--opt 1; before
 *         affine and layout, which then leave them alone)
 * affine  fold BatchNormalization and constant scales/shifts into Conv weights (--opt 1)
 * layout  channel-block the values of convolution chains (--opt 1)
 * epilogue  fuse the elementwise ops after a Conv or GEMM into it (--opt 1)
 * siblings  MatMuls of one value by constant matrices (Q, K, V projections)
 *         into one product split by columns (--opt 1, the GPU only; after
 *         epilogue, whose bodies it merges)
 * gemmnorm  a LayerNorm or RMSNorm of a GEMM's rows computed by the GEMM's
 *         kernel (--opt 1, the GPU only; after siblings)
 * dwpw    a depthwise Conv into the pointwise Conv that reads it, computed
 *         where that one loads its operand (--opt 1, the GPU only, NHWC;
 *         after layout and epilogue: both Convs' weights laid out, their
 *         epilogues fused)
 * cse     equal constants one value, equal nodes (op, inputs, attributes)
 *         one node (exporters repeat a mask per layer); after the pattern
 *         passes, whose patterns want values read once
 * ewfuse  the other f32 elementwise ops: chains fused into vector loops (--opt 1)
 * winograd  Winograd F(m x m, 3 x 3) for the 3x3 convolutions where it pays:
 *         their weights transformed (--opt 1, unless --winograd off)
 * pack    lay weights out for the kernels that read them (--opt 1)
 * plan    arena offsets from lifetimes
 * The verifier (ir/check.c) runs after each pass when checking is on.
 */
#include "opt.h"
#include <stdio.h>
#include <string.h>

/* (1: a rewrite the code is correct without, which --skip may leave out
 * to measure what it gains) */
const ox_pass ox_pipeline[] = {
	{"fold", ox_opt_fold, 0},
	{"symshape", ox_opt_symshape, 0},
	{"outline", ox_opt_outline, 0},
	{"elide", ox_opt_elide, 0},
	{"dce", ox_opt_dce, 0},
	{"bounds", ox_opt_bounds, 0},
	{"attention", ox_opt_attention, 1},
	{"norm", ox_opt_norm, 1},
	{"transpose", ox_opt_transpose, 0},
	{"rows", ox_opt_rows, 0},
	{"qdq", ox_opt_qdq, 0},
	{"affine", ox_opt_affine, 0},
	{"layout", ox_opt_layout, 0},
	{"epilogue", ox_opt_epilogue, 1},
	{"siblings", ox_opt_siblings, 1},
	{"gemmnorm", ox_opt_gemmnorm, 1},
	{"dwpw", ox_opt_dwpw, 1},
	{"cse", ox_opt_cse, 1},
	{"ewfuse", ox_opt_ewfuse, 1},
	{"winograd", ox_opt_winograd, 0},
	{"pack", ox_opt_pack, 0},
	{"plan", ox_opt_plan, 0},
	{NULL, NULL, 0},
};

/* the passes --skip named (bit i: ox_pipeline[i]), for every graph and
 * control body the process compiles */
static unsigned skipped;

int ox_opt_skip(const char *name)
{
	for (int i = 0; ox_pipeline[i].name; i++)
		if (!strcmp(ox_pipeline[i].name, name) && ox_pipeline[i].skippable) {
			skipped |= 1u << i;
			return 0;
		}
	return -1;
}

void ox_opt_skippable(char *buf, size_t sz)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; ox_pipeline[i].name && o < sz; i++)
		if (ox_pipeline[i].skippable)
			o += (size_t)snprintf(buf + o, sz - o, "%s%s", o ? ", " : "", ox_pipeline[i].name);
}

static int is_skipped(const ox_pass *p)
{
	return skipped >> (p - ox_pipeline) & 1u;
}

static int run(const ox_pass *p, ox_graph *g)
{
	return is_skipped(p) ? 0 : p->run(g);
}

int ox_opt_run_from(ox_graph *g, int check, const char *after)
{
	const ox_pass *p = ox_pipeline;
	while (p->name && strcmp(p->name, after))
		p++;
	for (p += p->name != NULL; p->name; p++) {
		if (run(p, g) || ox_attr_report(g))
			return -1;
		if (check)
			ox_ir_check(g, p->name);
	}
	return 0;
}

int ox_opt_run(ox_graph *g, int check, const char *stop_after)
{
	for (const ox_pass *p = ox_pipeline; p->name; p++) {
		ox_note("pass %s%s", p->name, is_skipped(p) ? " (skipped)" : "");
		if (run(p, g) || ox_attr_report(g))
			return -1;
		if (check)
			ox_ir_check(g, p->name);
		if (stop_after && !strcmp(stop_after, p->name))
			break;
	}
	return 0;
}
