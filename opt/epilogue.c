/* epilogue.c: elementwise consumers of a convolution or matrix product,
 * fused into it as an epilogue (ox_epilogue, ir.h).
 *
 * From a node whose emitter applies epilogues (a channel-blocked Conv; a
 * Gemm/MatMul computed by the packed GEMM), the pass grows a region over
 * the elementwise f32 ops that follow: bias adds, Relu, Clip (Relu6),
 * LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, GELU (Gelu, or its
 * Erf form), x * sigmoid(x), a residual Add, per-channel scales. A node
 * joins when it reads the region's value and its other operands are
 * scalars, one value per output channel, or tensors of the output's shape
 * and layout that do not depend on the region. The region is cut at the
 * longest prefix whose inner values are used inside it only, so only its
 * last value is ever stored. The node then takes the region's place in
 * the order, with the other operands as extra inputs and the region as the
 * body of its ox_epilogue attribute; ox_fused names the ONNX nodes. With
 * run-time dims an operand of the output's shape has the same dims (the
 * same ids), so shapes and element counts compare as dims.
 * Requires: layouts chosen (opt/layout.c). Invalidates: node positions
 * (compacted), uses (refilled).
 */
#include "opt.h"
#include <stdlib.h>
#include <string.h>

#define MAXREG 16  /* nodes in one epilogue */
#define MAXOPND 8  /* extra operands */

/* ops the epilogue renderers know (codegen/c/emit_blocked.c, emit_gemm.c) */
static int fusable_op(const ox_graph *g, const ox_node *n)
{
	switch (n->op) {
	case OX_OP_Relu: case OX_OP_LeakyRelu: case OX_OP_Sigmoid: case OX_OP_HardSigmoid:
	case OX_OP_HardSwish: case OX_OP_Tanh: case OX_OP_Erf: case OX_OP_Exp: case OX_OP_Neg:
	case OX_OP_Abs: case OX_OP_Sqrt: case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div:
	case OX_OP_PRelu:
		return 1;
	case OX_OP_Gelu:
		return 1;
	case OX_OP_Clip:
		/* bounds known at compile time */
		for (int k = 1; k < n->nin; k++)
			if (n->in[k] >= 0 && (g->vals[n->in[k]].kind != OX_V_CONST ||
					      ox_shape_numel(&g->vals[n->in[k]].shape) != 1))
				return 0;
		return 1;
	}
	return 0;
}

/* does the node's emitter apply epilogues? */
static int takes_epilogue(ox_graph *g, const ox_node *n)
{
	if (n->nout < 1 || n->out[0] < 0 || ox_ir_epilogue(n))
		return 0;
	const ox_value *y = &g->vals[n->out[0]];
	if (g->gpu && g->parent) /* a control node's body runs as plain C on the device */
		return 0;
	if (n->op == OX_OP_Conv && g->gpu) { /* codegen/cuda/cuda_tile.c, cuda_nhwc.c: 2-D, f32, f16 or bf16 */
		if ((y->layout && y->layout != OX_L_BLOCKED) || !ox_opt_fuse_type(g, y->dtype) || y->shape.rank != 4)
			return 0;
		if (!ox_shape_is_rt(g, &y->shape))
			return 1;
		/* run-time batch or image size: where the kernels take them (NHWC:
		 * a run-time batch only) */
		return y->layout ? ox_opt_rt_ok(g, &y->shape, 1u) : ox_opt_rt_window(g, n);
	}
	if (n->op == OX_OP_Conv)
		return y->layout == OX_L_BLOCKED && y->dtype == OX_F32;
	ox_gemmgeo q; /* (not with a run-time N: the GPU's kernel reads it, the epilogue would not) */
	return (n->op == OX_OP_Gemm || n->op == OX_OP_MatMul) && !ox_opt_gemm_geo(g, n, &q) &&
	       !ox_dim_is_rt(g, q.dN);
}

/* How operand v can be read in the epilogue of a node with output o:
 * 1 a scalar, 2 one value per channel, 3 the output's own shape; 0 not.
 * The channels are axis 1 of a blocked value and of a plain convolution's
 * output (head), the last axis of a GEMM's. */
static int operand_kind(ox_graph *g, ox_id v, const ox_value *o, const ox_node *head)
{
	const ox_value *x = &g->vals[v];
	if (x->dtype != o->dtype || !ox_opt_fuse_type(g, x->dtype))
		return 0;
	if (ox_shape_numel(&x->shape) == 1)
		return x->layout ? 0 : 1;
	if (x->layout != o->layout || (o->layout && x->lp[0] != o->lp[0]))
		return 0;
	int r = o->shape.rank, off = r - x->shape.rank, ch = o->layout == OX_L_BLOCKED || head->op == OX_OP_Conv ? 1 : r - 1;
	if (off < 0)
		return 0;
	int same = 1, per = 1;
	for (int i = 0; i < r; i++) {
		int64_t d = i < off ? 1 : x->shape.d[i - off];
		same &= d == o->shape.d[i];
		per &= i == ch ? d == o->shape.d[i] : d == 1;
	}
	/* a blocked per-channel operand must itself be blocked [1,C,1,1] */
	if (same && off == 0)
		return 3;
	return per && (o->layout != OX_L_BLOCKED || off == 0) ? 2 : 0;
}

typedef struct {
	int n;               /* nodes in the region (positions in g) */
	int nodes[MAXREG];
	char *in_region;     /* per value: produced in the region (or the head's output) */
} region;

/* Is the region closed: every inner value used by region nodes only (and
 * no graph output), so only the last value leaves it? */
static int closed(ox_graph *g, const region *R, int upto, const int *uses_in)
{
	for (int i = 0; i < upto; i++) {
		const ox_node *e = &g->nodes[R->nodes[i]];
		ox_id v = e->out[0];
		if (g->vals[v].is_output || g->vals[v].nuses != uses_in[v])
			return 0;
	}
	return 1;
}

static void fuse(ox_graph *g, int head, const region *R, int len)
{
	ox_node *n = &g->nodes[head];
	ox_graph *b = ox_ir_new_sub(g);
	int nv = g->nvals;
	ox_id *map = malloc(((size_t)nv + 1) * sizeof *map);
	for (int i = 0; i < nv; i++)
		map[i] = -1;
	/* body input 0: the node's own result */
	ox_id acc = n->out[0];
	ox_id operands[MAXOPND];
	int nop = 0;
	b->inputs = ox_ir_alloc(b, (MAXOPND + 2) * sizeof *b->inputs);
	ox_id bi = ox_ir_add_value(b, "acc", OX_V_INPUT);
	b->vals[bi].dtype = g->vals[acc].dtype, b->vals[bi].has_shape = 1, b->vals[bi].shape = g->vals[acc].shape;
	b->inputs[b->ninputs++] = bi;
	map[acc] = bi;
	for (int i = 0; i < len; i++) {
		ox_node *e = &g->nodes[R->nodes[i]];
		ox_id bn = ox_ir_add_node(b, e->op, e->optype, e->name, e->nin, 1);
		ox_node *f = &b->nodes[bn];
		f->opset = e->opset, f->domain = e->domain, f->nattr = e->nattr, f->attrs = e->attrs;
		for (int k = 0; k < e->nin; k++) {
			ox_id v = e->in[k];
			if (v < 0)
				continue;
			if (map[v] < 0) { /* an operand from outside: a new body input */
				ox_id x = ox_ir_add_value(b, g->vals[v].name, OX_V_INPUT);
				b->vals[x].dtype = g->vals[v].dtype, b->vals[x].has_shape = 1;
				b->vals[x].shape = g->vals[v].shape;
				b->inputs[b->ninputs++] = x;
				operands[nop++] = v;
				map[v] = x;
			}
			f->in[k] = map[v];
		}
		ox_id o = e->out[0], y = ox_ir_add_value(b, g->vals[o].name, OX_V_INTERNAL);
		b->vals[y].dtype = g->vals[o].dtype, b->vals[y].has_shape = 1, b->vals[y].shape = g->vals[o].shape;
		b->vals[y].producer = bn;
		b->nodes[bn].out[0] = y;
		map[o] = y;
	}
	ox_id last = g->nodes[R->nodes[len - 1]].out[0];
	b->outputs = ox_ir_alloc(b, 2 * sizeof *b->outputs);
	b->output_names = ox_ir_alloc(b, 2 * sizeof *b->output_names);
	b->outputs[0] = map[last];
	b->output_names[0] = g->vals[last].name;
	b->noutputs = 1;
	free(map);

	/* the node: operands appended after its own inputs, writes the last value */
	int first = n->op == OX_OP_MatMul ? 2 : 3;
	ox_id *in = ox_ir_alloc(g, (size_t)(first + nop + 1) * sizeof *in);
	for (int k = 0; k < first; k++)
		in[k] = k < n->nin ? n->in[k] : -1;
	memcpy(in + first, operands, (size_t)nop * sizeof *in);
	n->in = in;
	n->nin = first + nop;
	n->out[0] = last;
	ox_attr *a = ox_ir_add_attr(g, n, "ox_epilogue", OX_AT_GRAPH);
	a->g = ox_ir_alloc(g, sizeof *a->g);
	a->g[0] = b;
	for (int i = 0; i < len; i++) /* a node made by a pattern pass (Gelu) brings its list */
		ox_ir_add_fused_of(g, n, &g->nodes[R->nodes[i]]);
	/* the node moves to the region's last place: its operands exist there */
	ox_node moved = *n;
	n->dead = 1;
	for (int i = 0; i < len - 1; i++)
		g->nodes[R->nodes[i]].dead = 1;
	g->nodes[R->nodes[len - 1]] = moved;
}

/* A GEMM's result reshaped with its rows kept (the last axis, N) and then
 * used by an elementwise op alone (nn.MultiheadAttention's out_proj [S*B, E]
 * as [S, B, E] before the residual Add): the op computes on the GEMM's
 * shape instead, an operand of the reshaped shape reshaped to it (views),
 * and the Reshape moves after the op, which the region below then takes;
 * again past the op after that. 1 if it moved one. */
static int sink_reshape(ox_graph *g, const ox_node *h)
{
	if (h->op != OX_OP_Gemm && h->op != OX_OP_MatMul)
		return 0;
	const ox_node head = *h; /* (the sort below moves the nodes) */
	ox_id y = head.out[0];
	const ox_shape ys = g->vals[y].shape;
	const int r = ys.rank;
	int moved = 0;
	for (;;) {
		ox_node *rs = ox_ir_sole_reader(g, y);
		if (!rs || rs->op != OX_OP_Reshape || rs->in[0] != y)
			return moved;
		const ox_id z = rs->out[0];
		const ox_shape zs = g->vals[z].shape;
		ox_node *e = ox_ir_sole_reader(g, z);
		if (!e || !fusable_op(g, e) || e->nout != 1 ||
		    zs.d[zs.rank - 1] != ys.d[r - 1] || g->vals[e->out[0]].dtype != g->vals[y].dtype ||
		    memcmp(&g->vals[e->out[0]].shape, &zs, sizeof zs))
			return moved;
		/* its other operands: scalars or one value per column of the
		 * GEMM's result (operand_kind: they broadcast alike), or of the
		 * reshaped shape */
		for (int k = 0; k < e->nin; k++) {
			ox_id v = e->in[k];
			if (v < 0 || v == z)
				continue;
			int kind = operand_kind(g, v, &g->vals[y], &head);
			if (kind != 1 && kind != 2 && (g->vals[v].layout || memcmp(&g->vals[v].shape, &zs, sizeof zs)))
				return moved;
		}
		/* (indices: adding nodes may move the array) */
		const int ri = (int)(rs - g->nodes), nn0 = g->nnodes;
		int ei = (int)(e - g->nodes);
		const ox_id e_out = e->out[0];
		char nm[600];
		snprintf(nm, sizeof nm, "%s/rows", e->name[0] ? e->name : e->optype);
		ox_id e2 = ox_ir_add_value(g, nm, OX_V_INTERNAL);
		g->vals[e2].dtype = g->vals[e_out].dtype, g->vals[e2].has_shape = 1, g->vals[e2].shape = ys;
		for (int k = 0; k < g->nodes[ei].nin; k++) {
			ox_id v = g->nodes[ei].in[k];
			if (v == z) {
				g->nodes[ei].in[k] = y;
			} else if (v >= 0 && ox_shape_numel(&g->vals[v].shape) != 1 &&
				   !memcmp(&g->vals[v].shape, &zs, sizeof zs)) {
				char on[640];
				snprintf(on, sizeof on, "%s/%d", nm, k);
				ox_id rn = ox_ir_add_reshape(g, v, -1, &ys, on);
				g->nodes[ei].in[k] = g->nodes[rn].out[0];
			}
		}
		g->nodes[ei].out[0] = e2;
		/* the Reshape now makes the op's old output from its new one */
		g->nodes[ri].in[0] = e2;
		g->nodes[ri].out[0] = e_out;
		/* the operands' Reshapes just before the op, the moved Reshape
		 * just after it: no other node moves */
		for (int j = nn0; j < g->nnodes; j++)
			ox_ir_move_node(g, j, ei++);
		ox_ir_move_node(g, ri, ei);
		ox_ir_fill_uses(g);
		y = e2, moved = 1;
	}
}

int ox_opt_epilogue(ox_graph *g)
{
	if (!g->opt)
		return 0;
	ox_ir_fill_uses(g);
	for (int h = 0; h < g->nnodes; h++) /* (from the start again after each: the order changed) */
		if (takes_epilogue(g, &g->nodes[h]) && sink_reshape(g, &g->nodes[h]))
			h = -1;
	int nv = g->nvals, nn = g->nnodes;
	region R;
	R.in_region = calloc((size_t)nv + 1, 1);
	int *uses_in = calloc((size_t)nv + 1, sizeof *uses_in);
	char *dep_val = calloc((size_t)nv + 1, 1);
	for (int h = 0; h < nn; h++) {
		ox_node *n = &g->nodes[h];
		if (n->dead || !takes_epilogue(g, n))
			continue;
		ox_id acc = n->out[0];
		const ox_value *y0 = &g->vals[acc];
		if (y0->is_output)
			continue;
		/* values that depend on the node's result: they cannot be operands */
		memset(dep_val, 0, (size_t)nv);
		dep_val[acc] = 1;
		for (int j = h + 1; j < nn; j++) {
			ox_node *e = &g->nodes[j];
			int d = 0;
			for (int k = 0; k < e->nin && !d; k++)
				d = e->in[k] >= 0 && dep_val[e->in[k]];
			for (int k = 0; d && k < e->nout; k++)
				if (e->out[k] >= 0)
					dep_val[e->out[k]] = 1;
		}
		memset(R.in_region, 0, (size_t)nv);
		R.in_region[acc] = 1;
		R.n = 0;
		int best = 0, nops = 0;
		memset(uses_in, 0, (size_t)nv * sizeof *uses_in);
		for (int j = h + 1; j < nn && R.n < MAXREG; j++) {
			ox_node *e = &g->nodes[j];
			if (e->dead || e->nout != 1 || e->out[0] < 0)
				continue;
			int reads = 0, ok = fusable_op(g, e), extra = 0;
			ox_value *o = &g->vals[e->out[0]];
			ok &= o->dtype == y0->dtype && ox_opt_fuse_type(g, o->dtype) && o->layout == y0->layout && o->shape.rank == y0->shape.rank &&
			      ox_shape_numel_dim(g, &o->shape) == ox_shape_numel_dim(g, &y0->shape);
			for (int k = 0; k < e->nin; k++) {
				ox_id v = e->in[k];
				if (v < 0)
					continue;
				if (R.in_region[v]) {
					reads = 1;
					continue;
				}
				if (dep_val[v])
					ok = 0; /* computed from the region: not available before it */
				else if (!operand_kind(g, v, y0, n))
					ok = 0;
				else
					extra++;
			}
			if (!reads)
				continue;
			if (!ok || nops + extra > MAXOPND)
				break;
			nops += extra;
			R.nodes[R.n++] = j;
			for (int k = 0; k < e->nin; k++)
				if (e->in[k] >= 0 && R.in_region[e->in[k]])
					uses_in[e->in[k]]++;
			R.in_region[e->out[0]] = 1;
			/* closed when the head's result and every inner value but the last
			 * is used inside only */
			int cl = g->vals[acc].nuses == uses_in[acc] && closed(g, &R, R.n - 1, uses_in);
			if (cl)
				best = R.n;
		}
		if (best) {
			fuse(g, h, &R, best);
			ox_ir_compact(g);
			ox_ir_fill_uses(g);
			nn = g->nnodes;
			h--; /* the head moved to the region's end: look at this place again */
		}
	}
	free(R.in_region), free(uses_in), free(dep_val);
	return 0;
}
