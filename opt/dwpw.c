/* dwpw.c: a depthwise Conv computed by the pointwise Conv that reads it
 * (the CUDA target, NHWC): MobileNet's and EfficientNet-style blocks'
 * "depthwise 3x3 -> project 1x1" are one launch where they were two, and
 * the depthwise's output (the block's widest tensor) is never stored.
 *
 * D is a depthwise Conv (weights OX_L_DWW, opt/layout.c) of 2 spatial axes
 * whose output only P reads; P a Conv of group 1, 1x1, strides 1, no pads,
 * its weights OX_L_CONVW; both NHWC of the same float dtype, constant
 * shapes but for a run-time batch, D's channels unpadded (lp[0] = C: the
 * window kernel's input and output). P then reads D's input as its in[0]
 * and takes D's weights, its bias (-1 when D has none) and D's epilogue's
 * operands (opt/epilogue.c: a Clip's bounds, per-channel scales, a
 * residual) as its last inputs, and
 *   ox_dw          INTS {D's weights' input index, its bias's or -1, its
 *                        epilogue's first operand's or -1,
 *                        KH, KW, SH, SW, DH, DW, PT, PL, PB, PR}
 *                  (the pads explicit: auto_pad resolved here)
 *   ox_dw_epilogue GRAPH, D's epilogue's body, when it has one;
 * D goes (ox_fused names it). The kernel (codegen/cuda/cuda_nhwc.c emit_conv)
 * computes the element (pixel, channel) of D's output where it loads its
 * A operand, in the window kernel's order (and its tile rounds A to the
 * dtype as D's stored output was), so the result is D's and P's unfused
 * one bit for bit.
 * Each column tile of P recomputes its rows' taps: a product of O output
 * channels on tiles of T does ceil(O / T) times D's taps. Not on the CPU
 * (whose blocked kernels have no such load) nor in the bodies of control
 * nodes (plain C on the device).
 * Requires: layouts chosen and epilogues fused (opt/layout.c, epilogue.c).
 * Invalidates: uses (refilled), node positions (compacted).
 */
#include "opt.h"
#include "../ir/family.h"
#include <string.h>

/* an NHWC value of unpadded channels, constant 2-D shape but for a
 * run-time batch */
static int nhwc(ox_graph *g, const ox_value *v)
{
	return v->layout == OX_L_BLOCKED && v->shape.rank == 4 && v->lp[0] == v->shape.d[1] &&
	       ox_opt_rt_ok(g, &v->shape, 1u) && ox_opt_fuse_type(g, v->dtype);
}

/* the window of Conv n (x its input, y its output), explicit pads */
static int window(ox_graph *g, const ox_node *n, const ox_value *x, const ox_value *y, int64_t *k, int64_t *s,
		  int64_t *d, int64_t *pads)
{
	const ox_value *w = ox_in(g, n, 1);
	int ap;
	if (ox_ir_nn_window(g, n, 2, w ? &w->shape : NULL, k, s, d, pads, &ap))
		return -1;
	const int64_t in[2] = {x->shape.d[2], x->shape.d[3]}, out[2] = {y->shape.d[2], y->shape.d[3]};
	ox_ir_nn_same_pads(ap, 2, in, out, k, s, d, pads);
	return 0;
}

/* the depthwise Conv that pointwise Conv p can compute, else NULL */
static ox_node *takes(ox_graph *g, ox_node *p)
{
	if (p->dead || p->op != OX_OP_Conv || p->nout != 1 || p->out[0] < 0 || p->nin < 2 ||
	    ox_attr_get(p, "ox_dw") || ox_attr_int(p, "group", 1) != 1)
		return NULL;
	const ox_value *x = ox_in(g, p, 0), *w = ox_in(g, p, 1), *y = ox_out(g, p, 0);
	if (!x || !nhwc(g, y) || w->layout != OX_L_CONVW || x->producer < 0)
		return NULL;
	int64_t k[2], s[2], d[2], pads[4];
	if (window(g, p, x, y, k, s, d, pads))
		return NULL;
	for (int i = 0; i < 2; i++)
		if (k[i] != 1 || s[i] != 1 || pads[i] || pads[i + 2])
			return NULL;
	ox_node *dn = &g->nodes[x->producer];
	if (dn->dead || dn->op != OX_OP_Conv || dn->nout != 1 || dn->nin < 2 || x->nuses != 1 || x->is_output ||
	    !nhwc(g, x) || ox_attr_get(dn, "ox_dw"))
		return NULL;
	const ox_value *dx = ox_in(g, dn, 0), *dw = ox_in(g, dn, 1), *db = ox_in(g, dn, 2);
	if (!dx || !nhwc(g, dx) || dw->layout != OX_L_DWW || dx->dtype != y->dtype || x->dtype != y->dtype ||
	    dw->dtype != y->dtype || (db && db->dtype != y->dtype))
		return NULL;
	return dn;
}

static void fuse(ox_graph *g, ox_node *p, ox_node *dn)
{
	const ox_value *x = ox_in(g, dn, 0), *y = ox_out(g, dn, 0);
	int64_t k[2], s[2], d[2], pads[4];
	window(g, dn, x, y, k, s, d, pads);
	ox_graph *e = ox_ir_epilogue(dn);
	const int hasb = dn->nin > 2 && dn->in[2] >= 0, de = e ? ox_ir_epilogue_first(dn) : dn->nin;
	const int nin = p->nin < 3 ? 3 : p->nin; /* (an epilogue's operands from input 3) */
	const int add = 2 + (dn->nin - de);
	ox_id *in = ox_ir_alloc(g, (size_t)(nin + add) * sizeof *in);
	for (int i = 0; i < nin; i++)
		in[i] = i < p->nin ? p->in[i] : -1;
	in[0] = dn->in[0];
	in[nin] = dn->in[1];
	in[nin + 1] = hasb ? dn->in[2] : -1;
	for (int i = de; i < dn->nin; i++)
		in[nin + 2 + i - de] = dn->in[i];
	p->in = in;
	p->nin = nin + add;
	ox_attr *a = ox_ir_add_attr(g, p, "ox_dw", OX_AT_INTS);
	const int64_t v[13] = {nin, hasb ? nin + 1 : -1, e ? nin + 2 : -1, k[0], k[1], s[0], s[1], d[0], d[1],
			       pads[0], pads[1], pads[2], pads[3]};
	a->n = 13;
	a->ints = ox_ir_alloc(g, sizeof v);
	memcpy(a->ints, v, sizeof v);
	if (e) {
		ox_attr *b = ox_ir_add_attr(g, p, "ox_dw_epilogue", OX_AT_GRAPH);
		b->g = ox_ir_alloc(g, sizeof *b->g);
		b->g[0] = e;
	}
	ox_ir_add_fused_of(g, p, dn);
	dn->dead = 1;
}

int ox_opt_dwpw(ox_graph *g)
{
	if (!g->opt || !g->gpu || g->parent)
		return 0;
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *p = &g->nodes[i], *dn = takes(g, p);
		if (dn)
			fuse(g, p, dn);
	}
	ox_ir_compact(g);
	ox_ir_fill_uses(g);
	return 0;
}
