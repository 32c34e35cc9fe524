/* ewfuse.c: chains and trees of f32 elementwise ops fused into one loop.
 *
 * What the epilogue pass left (elementwise work not behind a Conv or a
 * GEMM: a LayerNorm's neighbours, an SE block's scale, a lone activation)
 * is grouped into onnxcc::Fused nodes whose ox_body attribute holds the
 * ops as a small graph (body input k is node input k; its output is the
 * node's). A region grows from an elementwise node over the nodes that
 * read its values, like the epilogue pass: every node of it writes the
 * region's shape and layout (so nothing is computed twice), its operands
 * broadcast like numpy, and it is cut at the longest prefix whose inner
 * values are used inside it only. A single op is a region too, so every
 * f32 op the vector renderer knows (codegen/c/emit_vec.c; the list is
 * ox_opt_vector_op in opt/analysis.c) runs vectorized
 * (Pow by a constant 2, 3, 1, 0.5, -1 or -0.5 too, its exponent then a
 * constant of the body); the rest keep their own emitter. The node takes
 * the region's last place. On the C target a per-tensor DequantizeLinear
 * and QuantizeLinear between f32 and 8 bits join regions too
 * (ox_opt_fused_qdq; scale and zero point constants of the body), and a
 * DequantizeLinear read only by a node of the region is pulled into it,
 * so that an int8 model's float elementwise ops between integer kernels
 * read and write 8 bits; a region of Q and DQ alone is not made (their
 * own kernels are as fast).
 * Requires: layouts chosen. Invalidates: node positions (compacted), uses.
 */
#include "opt.h"
#include <stdlib.h>
#include <string.h>

#define MAXREG 24
#define MAXOPND 8

static int same_out(const ox_value *a, const ox_value *b)
{
	if (a->layout != b->layout || a->shape.rank != b->shape.rank)
		return 0;
	for (int i = 0; i < a->shape.rank; i++)
		if (a->shape.d[i] != b->shape.d[i])
			return 0;
	return 1;
}

/* the ops of a region: f32 vector ops, and Q / DQ between f32 and 8 bits */
static int fusable(ox_graph *g, const ox_node *n)
{
	return ox_opt_vector_op(g, n) || ox_opt_fused_qdq(g, n);
}

static void fuse(ox_graph *g, const int *nodes, int len)
{
	ox_graph *b = ox_ir_new_sub(g);
	int nv = g->nvals;
	ox_id *map = malloc(((size_t)nv + 1) * sizeof *map), operands[MAXOPND];
	for (int i = 0; i < nv; i++)
		map[i] = -1;
	int nop = 0;
	b->inputs = ox_ir_alloc(b, (MAXOPND + 1) * sizeof *b->inputs);
	for (int i = 0; i < len; i++) {
		ox_node *e = &g->nodes[nodes[i]];
		ox_id bn = ox_ir_add_node(b, e->op, e->optype, e->name, e->nin, 1);
		ox_node *f = &b->nodes[bn];
		f->opset = e->opset, f->domain = e->domain, f->nattr = e->nattr, f->attrs = e->attrs;
		for (int k = 0; k < e->nin; k++) {
			ox_id v = e->in[k];
			if (v < 0)
				continue;
			if (ox_opt_body_const(g, e, k)) { /* a constant of the body */
				f->in[k] = ox_ir_add_const(b, g->vals[v].name, g->vals[v].data);
				continue;
			}
			if (map[v] < 0) {
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
	ox_id last = g->nodes[nodes[len - 1]].out[0];
	b->outputs = ox_ir_alloc(b, 2 * sizeof *b->outputs);
	b->output_names = ox_ir_alloc(b, 2 * sizeof *b->output_names);
	b->outputs[0] = map[last];
	b->output_names[0] = g->vals[last].name;
	b->noutputs = 1;
	free(map);

	/* the fused node replaces the region's last node */
	ox_node *first = &g->nodes[nodes[0]];
	const char *name = first->name;
	ox_id nid = ox_ir_add_node(g, OX_OP_Fused, "Fused", name, nop, 1);
	ox_node *n = &g->nodes[nid];
	n->domain = "onnxcc";
	memcpy(n->in, operands, (size_t)nop * sizeof *operands);
	n->out[0] = last;
	ox_attr *a = ox_ir_add_attr(g, n, "ox_body", OX_AT_GRAPH);
	a->g = ox_ir_alloc(g, sizeof *a->g);
	a->g[0] = b;
	/* named after the first, it lists what each node stands for (once) */
	ox_node *covered[MAXREG];
	for (int i = 0; i < len; i++)
		covered[i] = &g->nodes[nodes[i]];
	ox_ir_set_fused(g, n, covered, len);
	ox_node moved = *n;
	n->dead = 1;
	for (int i = 0; i < len - 1; i++)
		g->nodes[nodes[i]].dead = 1;
	g->nodes[nodes[len - 1]] = moved;
}

/* After fuse(): the region's nodes are dead and the fused node sits at
 * the last one's place, pos. Uses and last readers are updated here, not
 * recomputed over the graph, so that a model of many small regions is
 * fused in linear time (nodes are compacted once, at the end). */
static void refresh_uses(ox_graph *g, ox_node *const *dead, int len, int pos, int *lastuse)
{
	for (int i = 0; i < len; i++)
		for (int k = 0; k < dead[i]->nin; k++)
			if (dead[i]->in[k] >= 0)
				g->vals[dead[i]->in[k]].nuses--;
	ox_node *f = &g->nodes[pos];
	for (int k = 0; k < f->nin; k++) {
		g->vals[f->in[k]].nuses++;
		if (lastuse[f->in[k]] < pos)
			lastuse[f->in[k]] = pos;
	}
}

int ox_opt_ewfuse(ox_graph *g)
{
	if (!g->opt)
		return 0;
	ox_ir_fill_uses(g);
	int nv = g->nvals;
	char *in_region = calloc((size_t)nv + 1, 1), *dep = calloc((size_t)nv + 1, 1);
	int *uses_in = calloc((size_t)nv + 1, sizeof *uses_in);
	/* the last node reading each value: no region grows past it */
	int *lastuse = malloc(((size_t)nv + 1) * sizeof *lastuse), *marked = malloc(((size_t)nv + 1) * sizeof *marked);
	for (int i = 0; i < nv; i++)
		lastuse[i] = -1;
	for (int j = 0; j < g->nnodes; j++)
		for (int k = 0; k < g->nodes[j].nin; k++)
			if (g->nodes[j].in[k] >= 0)
				lastuse[g->nodes[j].in[k]] = j;
	for (int h = 0; h < g->nnodes; h++) {
		ox_node *n = &g->nodes[h];
		if (n->dead || n->op == OX_OP_Fused || !fusable(g, n))
			continue;
		const ox_value *o = &g->vals[n->out[0]];
		/* dep: values computed from the head's (not operands), marked
		 * node by node as the scan below passes them */
		int nmarked = 0, horizon = lastuse[n->out[0]];
		dep[n->out[0]] = 1;
		marked[nmarked++] = n->out[0];
		int nodes[MAXREG], len = 1, best = 1, nops = 0;
		nodes[0] = h;
		in_region[n->out[0]] = 1;
		for (int k = 0; k < n->nin; k++)
			nops += n->in[k] >= 0 && !ox_opt_body_const(g, n, k);
		for (int j = h + 1; j <= horizon && len < MAXREG; j++) {
			ox_node *e = &g->nodes[j];
			if (e->dead)
				continue;
			int d = 0;
			for (int k = 0; k < e->nin && !d; k++)
				d = e->in[k] >= 0 && dep[e->in[k]];
			int reads = 0, extra = 0, ok = fusable(g, e) && same_out(&g->vals[e->out[0]], o);
			for (int k = 0; k < e->nin; k++) {
				ox_id v = e->in[k];
				if (v < 0)
					continue;
				if (in_region[v])
					reads = 1;
				else if (dep[v])
					ok = 0;
				else
					extra += !ox_opt_body_const(g, e, k);
			}
			for (int k = 0; d && k < e->nout; k++)
				if (e->out[k] >= 0 && !dep[e->out[k]])
					dep[e->out[k]] = 1, marked[nmarked++] = e->out[k];
			if (!reads)
				continue;
			if (!ok || nops + extra > MAXOPND)
				break;
			nops += extra;
			/* an operand dequantized for e alone is dequantized in the
			 * body: its 8-bit value is the operand (e.g. both sides of
			 * a Mul between QConvs; the head only reaches one) */
			for (int k = 0; k < e->nin && len < MAXREG - 1; k++) {
				ox_id v = e->in[k];
				int p = v >= 0 ? g->vals[v].producer : -1;
				if (p >= 0 && !in_region[v] && g->vals[v].nuses == 1 && !g->vals[v].is_output &&
				    g->nodes[p].op == OX_OP_DequantizeLinear && !g->nodes[p].dead &&
				    ox_opt_fused_qdq(g, &g->nodes[p]) && same_out(&g->vals[v], o)) {
					nodes[len++] = p;
					in_region[v] = 1;
				}
			}
			nodes[len++] = j;
			for (int k = 0; k < e->nin; k++)
				if (e->in[k] >= 0 && in_region[e->in[k]])
					uses_in[e->in[k]]++;
			in_region[e->out[0]] = 1;
			if (lastuse[e->out[0]] > horizon)
				horizon = lastuse[e->out[0]];
			/* closed: every value but the last is used inside only */
			int cl = 1;
			for (int i = 0; i < len - 1 && cl; i++) {
				ox_id v = g->nodes[nodes[i]].out[0];
				cl = !g->vals[v].is_output && g->vals[v].nuses == uses_in[v];
			}
			if (cl)
				best = len;
		}
		for (int i = 0; i < nmarked; i++)
			dep[marked[i]] = 0;
		for (int i = 0; i < len; i++) {
			in_region[g->nodes[nodes[i]].out[0]] = 0;
			for (int k = 0; k < g->nodes[nodes[i]].nin; k++)
				if (g->nodes[nodes[i]].in[k] >= 0)
					uses_in[g->nodes[nodes[i]].in[k]] = 0;
		}
		int compute = 0; /* a Q or DQ alone keeps its own kernel */
		for (int i = 0; i < best; i++)
			compute += !ox_opt_fused_qdq(g, &g->nodes[nodes[i]]);
		if (nops > MAXOPND || !compute)
			continue;
		ox_node dead[MAXREG], *deadp[MAXREG];
		for (int i = 0; i < best; i++)
			dead[i] = g->nodes[nodes[i]], deadp[i] = &dead[i];
		fuse(g, nodes, best);
		refresh_uses(g, deadp, best, nodes[best - 1], lastuse);
	}
	ox_ir_compact(g);
	free(in_region), free(dep), free(uses_in), free(lastuse), free(marked);
	return 0;
}
