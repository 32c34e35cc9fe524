/* cuda_dispatch.c: which kernel a node gets on --target cuda. Its op's
 * family, the cuda column of ir/ops.def, names the emitter
 * (ox_cu_emit_<family>: codegen/cuda/cuda_tile.c, cuda_attn.c,
 * cuda_rows.c, cuda_index.c, cuda_map.c and the other cuda_*.c); a node
 * on NHWC values goes to cuda_nhwc.c. ox_cu_emit answers 1 for a node no
 * kernel takes: the C emitter's function runs on the device then
 * (codegen/c.c), which must not happen to a node the optimizer shaped for
 * a kernel (an epilogue, an NHWC value, a fused f16 body, a GEMM's norm).
 * ox_cu_family is what --report and docs/ops.md print.
 */
#include "cuda_kernels.h"
#include "../../ir/family.h"

static int reads_blocked(ox_graph *g, const ox_node *n)
{
	int blocked = 0;
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		blocked |= v >= 0 && g->vals[v].layout == OX_L_BLOCKED;
	}
	return blocked;
}

#define ox_cu_emit_none NULL

typedef int (*cu_kernel_fn)(ox_cg *, ox_graph *, ox_node *);
static const cu_kernel_fn cu_kernels[OX_NOPS] = {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) [OX_OP_##id] = ox_cu_emit_##cuda,
#include "../../ir/ops.def"
#undef OP
};
static const char *const cu_names[OX_NOPS] = {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) [OX_OP_##id] = #cuda,
#include "../../ir/ops.def"
#undef OP
};

/* A node that reads or writes an NHWC value has the NHWC kernels
 * (codegen/cuda/cuda_nhwc.c), except a Concat and a fused body, which take
 * NHWC operands themselves; any other, its op's family */
static int nhwc_node(ox_graph *g, const ox_node *n)
{
	return reads_blocked(g, n) && n->op != OX_OP_Concat && n->op != OX_OP_Fused;
}

const char *ox_cu_family(ox_graph *g, const ox_node *n)
{
	return nhwc_node(g, n) ? "nhwc" : cu_names[n->op];
}

/* node n's kernel: 0 done, 1 none here, -1 an error */
static int dispatch(ox_cg *cg, ox_graph *g, ox_node *n)
{
	cu_kernel_fn f = nhwc_node(g, n) ? ox_cu_emit_nhwc : cu_kernels[n->op];
	return f ? f(cg, g, n) : 1;
}

/* does n compute a dim of an output from the data (Expand, Tile of a
 * shape read at run time)? */
static int defines_dims(ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nout; k++) {
		const ox_value *v = n->out[k] >= 0 ? &g->vals[n->out[k]] : NULL;
		for (int d = 0; v && d < v->shape.rank; d++)
			if (ox_dim_defined_by(g, v->shape.d[d], n->out[k]))
				return 1;
	}
	return 0;
}

int ox_cu_emit(ox_cg *cg, ox_graph *g, ox_node *n)
{
	/* dims from the data: the kernels' launches read them on the host
	 * before the node runs, so only a Resize and a NonMaxSuppression
	 * (which wait for their own) and the control nodes take such a node;
	 * else the C function on the device computes them and the run reads
	 * them back */
	if (defines_dims(g, n) && n->op != OX_OP_Resize && n->op != OX_OP_NonMaxSuppression && n->op != OX_OP_If &&
	    n->op != OX_OP_Loop && n->op != OX_OP_Scan)
		return 1;
	int rc = dispatch(cg, g, n), blocked = reads_blocked(g, n);
	if (rc > 0 && blocked)
		ox_die("codegen: '%s' (%s) reads or writes an NHWC value, but no CUDA kernel takes it (opt/layout.c)",
		       n->name, n->optype);
	if (rc > 0 && n->op == OX_OP_MatMulSplit)
		ox_die("codegen: MatMulSplit '%s' without its CUDA kernel (opt/siblings.c)", n->name);
	if (rc > 0 && ox_attr_get(n, "ox_norm"))
		ox_die("codegen: '%s' computes a norm but no CUDA kernel takes it (opt/gemmnorm.c)", n->name);
	if (rc > 0 && ox_ir_epilogue(n))
		ox_die("codegen: '%s' has an epilogue but no CUDA kernel takes it (opt/epilogue.c)", n->name);
	if (rc > 0 && n->op == OX_OP_Fused && g->vals[n->out[0]].dtype != OX_F32)
		ox_die("codegen: '%s': an f16/bf16 fused body without its CUDA kernel (opt/ewfuse.c)", n->name);
	return rc;
}
