/* gemmnorm.c: a LayerNormalization or RMSNormalization of a GEMM's output
 * rows, computed by the GEMM's kernel (the CUDA target): a transformer's
 * "out_proj + residual -> LayerNorm" and "FFN + residual -> LayerNorm"
 * are one launch where they were two.
 *
 * The norm L reads x = out[0] of a Gemm or MatMul P on the GPU's GEMM
 * kernel (ox_opt_gemm_geo; one product: a Gemm, a constant B or rank 2;
 * N a constant), or a Reshape of it that keeps the last axis (a view: the
 * rows stay; the out_proj of [S*B, E] rows reshaped to [S, B, E]), over
 * x's last axis only (so a row of the norm is a row of the product), Mean
 * and InvStdDev not asked for, stash_type 1, its scale (and bias) of x's
 * dtype and available where P runs (constants, or computed before P). P
 * gets L's output as its out[1] (through a Reshape: a new value of
 * out[0]'s shape, which L becomes a Reshape of), L's scale and bias as its
 * last inputs and the attributes
 *   ox_norm      INTS {op (OX_OP_LayerNormalization or RMSNormalization),
 *                      scale's input index, bias's input index or -1}
 *   ox_norm_eps  FLOAT, L's epsilon;
 * out[0] stays: a pre-norm block's residual stream reads it too, and the
 * norm reads it back. L goes (ox_fused names it). How the kernel computes
 * it (codegen/cuda/cuda_tile.c emit_gemm): the last tile of a band of rows
 * to finish normalizes the band, or a second kernel of the node does.
 * Not on the CPU (whose GEMM's tasks see a part of a row) nor in the
 * bodies of control nodes (plain C on the device).
 * Requires: epilogues fused and siblings merged (opt/epilogue.c,
 * siblings.c: a node with out[1] is neither's). Invalidates: uses
 * (refilled), node positions (compacted).
 */
#include "opt.h"
#include <string.h>

/* the node computing v, or NULL */
static ox_node *producer(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].producer >= 0 ? &g->nodes[g->vals[v].producer] : NULL;
}

/* can input k of norm l be read where node p (at position at) runs? */
static int ready(ox_graph *g, const ox_node *l, int k, int at)
{
	const ox_value *v = ox_in(g, l, k);
	const ox_value *x = ox_in(g, l, 0);
	if (!v || v->dtype != x->dtype || v->layout || ox_shape_numel(&v->shape) != x->shape.d[x->shape.rank - 1])
		return 0;
	return g->vals[l->in[k]].producer < 0 || g->vals[l->in[k]].producer < at;
}

/* the GEMM whose rows norm l normalizes, else NULL; *via: the Reshape
 * between them, or NULL */
static ox_node *takes(ox_graph *g, ox_node *l, ox_node **via)
{
	const int rms = l->op == OX_OP_RMSNormalization;
	if (l->dead || (l->op != OX_OP_LayerNormalization && !rms) || l->nout < 1 || l->out[0] < 0 ||
	    ox_attr_int(l, "stash_type", 1) != 1)
		return NULL;
	for (int k = 1; k < l->nout; k++) /* (Mean, InvStdDev) */
		if (l->out[k] >= 0)
			return NULL;
	const ox_value *x = ox_in(g, l, 0), *y = ox_out(g, l, 0);
	ox_node *p = producer(g, l->in[0]);
	*via = NULL;
	if (p && p->op == OX_OP_Reshape && !p->dead && x && x->shape.rank >= 1) {
		const ox_value *z = ox_in(g, p, 0);
		const int r = x->shape.rank;
		if (!z || z->shape.rank < 1 || z->shape.d[z->shape.rank - 1] != x->shape.d[r - 1] || z->layout)
			return NULL;
		*via = p;
		p = producer(g, p->in[0]);
	}
	const ox_id pv = *via ? (*via)->in[0] : l->in[0];
	if (!x || !p || p->dead || (p->op != OX_OP_Gemm && p->op != OX_OP_MatMul) || p->nout != 1 ||
	    p->out[0] != pv || ox_attr_get(p, "ox_norm") || ox_attr_get(p, "ox_glu") ||
	    !ox_opt_fuse_type(g, x->dtype) || x->layout || y->layout || y->dtype != x->dtype || x->shape.rank < 1)
		return NULL;
	const int r = x->shape.rank;
	int64_t axis = ox_attr_int(l, "axis", -1);
	if (axis < 0)
		axis += r;
	if (axis != r - 1 || ox_dim_is_rt(g, x->shape.d[r - 1]) || x->shape.d[r - 1] < 1)
		return NULL;
	ox_gemmgeo q;
	if (ox_opt_gemm_geo(g, p, &q) || ox_dim_is_rt(g, q.dN) ||
	    !(p->op == OX_OP_Gemm || q.constb || g->vals[pv].shape.rank == 2))
		return NULL;
	const int at = (int)(p - g->nodes);
	if (!ready(g, l, 1, at) || (!rms && l->nin > 2 && l->in[2] >= 0 && !ready(g, l, 2, at)))
		return NULL;
	return p;
}

static void fuse(ox_graph *g, ox_node *p, ox_node *l, ox_node *via)
{
	const int rms = l->op == OX_OP_RMSNormalization;
	const int hasb = !rms && l->nin > 2 && l->in[2] >= 0;
	ox_id yn = l->out[0];
	if (via) { /* the norm in out[0]'s shape, which l reshapes */
		char name[600];
		snprintf(name, sizeof name, "%s/rows", g->vals[l->out[0]].name);
		yn = ox_ir_add_value(g, name, OX_V_INTERNAL);
		ox_value *v = &g->vals[yn];
		const ox_value *o = &g->vals[p->out[0]];
		v->dtype = o->dtype, v->has_shape = 1, v->shape = o->shape;
		v->producer = (ox_id)(p - g->nodes);
	}
	/* the norm's scale and bias after input 2, which is a Gemm's C: a
	 * Gemm without C (or a MatMul) gets an absent one (-1) there, or its
	 * kernel would take the scale for C */
	const int base = p->nin > 3 ? p->nin : 3;
	ox_id *in = ox_ir_alloc(g, (size_t)(base + 2) * sizeof *in);
	for (int k = 0; k < base; k++)
		in[k] = k < p->nin ? p->in[k] : -1;
	const int si = base, bi = hasb ? base + 1 : -1;
	in[si] = l->in[1];
	if (hasb)
		in[bi] = l->in[2];
	p->in = in;
	p->nin = base + 1 + hasb;
	ox_id *out = ox_ir_alloc(g, 2 * sizeof *out);
	out[0] = p->out[0], out[1] = yn;
	p->out = out;
	p->nout = 2;
	ox_attr *a = ox_ir_add_attr(g, p, "ox_norm", OX_AT_INTS);
	a->n = 3;
	a->ints = ox_ir_alloc(g, 3 * sizeof *a->ints);
	a->ints[0] = l->op, a->ints[1] = si, a->ints[2] = bi;
	ox_ir_add_attr(g, p, "ox_norm_eps", OX_AT_FLOAT)->f = ox_attr_float(l, "epsilon", 1e-5f);
	ox_ir_add_fused_of(g, p, l);
	if (!via) {
		l->dead = 1;
		return;
	}
	if (g->vals[via->out[0]].nuses == 1 && !g->vals[via->out[0]].is_output)
		via->dead = 1;
	/* l: a Reshape of the norm to its own output's shape */
	l->op = OX_OP_Reshape, l->optype = "Reshape", l->domain = "";
	l->in[0] = yn;
	l->nin = 2;
	l->nattr = 0;
	ox_ir_set_reshape_target(g, l);
}

int ox_opt_gemmnorm(ox_graph *g)
{
	if (!g->opt || !g->gpu || g->parent)
		return 0;
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *l = &g->nodes[i], *via, *p = takes(g, l, &via);
		if (p)
			fuse(g, p, l, via);
	}
	ox_ir_compact(g);
	ox_ir_fill_uses(g);
	return 0;
}
