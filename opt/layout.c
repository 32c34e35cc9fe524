/* layout.c: choose where values are channel-blocked (OX_L_BLOCKED).
 *
 * The blocked convolution kernels write output channels a vector at a
 * time, so a 2-D f32 Conv (group 1 or depthwise) makes its output
 * [N][C/b][H][W][b], b the target's vector width. The layout then flows
 * forward through the ops whose emitters take it (flag OX_F_BLOCKED:
 * elementwise f32 ops, 2-D pools, global pools, Resize over H and W,
 * Concat of whole channel blocks) while every operand agrees; constants those ops read (a
 * per-channel scale, a bias) are re-laid out here at compile time. Where a
 * blocked value meets an op that does not take it, one onnxcc::Reorder per
 * value converts it back (and graph outputs are always plain); a depthwise
 * Conv or a blocked op fed a plain tensor gets a Reorder the other way. A
 * Conv with group 1 reads either layout (its kernel only broadcasts input
 * elements), so no conversion is needed in front of it. Batch and image
 * size may be run-time dims (ox_opt_rt_ok): the kernels take them as loop
 * counts; channels stay constants (the blocks, the packed weights). Which
 * Convs the blocked kernels compute (ox_opt_conv_blockable) and the
 * elementwise ops the GPU's NHWC takes (ox_opt_vector_op) are shared
 * analyses, in opt/analysis.c.
 *
 * On the GPU (g->gpu, --cuda-layout nhwc) the same pass makes NHWC: a
 * value's one block is all its channels (b = C: [N][1][H][W][C]), so the
 * implicit GEMM of a Conv reads a window's channels in a row and writes an
 * output pixel's channels in a row (codegen/cuda/cuda_nhwc.c). The ops that
 * take it there are the ones that file computes (gpu_blockable): 2-D Conv
 * with group 1 or depthwise (its weights repacked here as the GEMM's
 * [KH][KW][C][Mp] or [KH][KW][C]), MaxPool, the global pools, Concat over
 * the channels and the elementwise ops opt/ewfuse.c fuses, f32, f16 or
 * bf16, constant shapes (f32: but for a run-time batch), outside
 * control-flow bodies. Channels that do not
 * come in fours are padded to 4 where only Convs read them (gpu_pad), and
 * the weights' rows to a multiple of 4, so that the GEMM's loads move 16
 * bytes; an image of 1 to 3 channels that only Convs read stays NCHW, read
 * in place (gpu_plain_images). A Reorder back to plain that is only
 * transposed to channels last is those bytes (channels_last).
 * Requires: bounded dims (after bounds). Invalidates: node order
 * (Reorders are appended, then the graph is sorted again), uses.
 */
#include "opt.h"
#include "../ir/family.h"
#include <stdlib.h>
#include <string.h>

/* input k of a blocked node: 0 plain is fine, 1 must be blocked, 2 any */
enum { NEED_PLAIN, NEED_BLOCKED, NEED_ANY };

/* The shape an operand of a node with output shape o broadcasts as, in 4
 * dims. Blockable when it is a scalar (stays plain) or spans o's channels
 * with every other dim either o's or 1; of rank under 4 only when constant
 * (re-laid out here: blocked_const; a Reorder converts rank-4 values). */
static int operand_blockable(ox_graph *g, ox_id v, const ox_shape *o, int dt, int *scalar)
{
	const ox_value *x = &g->vals[v];
	*scalar = ox_shape_numel(&x->shape) == 1;
	if (*scalar)
		return 1;
	if (x->shape.rank > 4 || x->dtype != dt || (x->shape.rank < 4 && x->kind != OX_V_CONST))
		return 0;
	int off = 4 - x->shape.rank;
	for (int i = 0; i < 4; i++) {
		int64_t d = i < off ? 1 : x->shape.d[i - off];
		if (i == 1 ? d != o->d[1] : d != 1 && d != o->d[i])
			return 0;
	}
	return 1;
}

/* the blocked emitters of these take run-time N, H, W (codegen/c/emit_blocked.c,
 * emit_fused.c, emit_ew.c); the others (Resize, Concat) constant shapes */
static int takes_rt(int op)
{
	switch (op) {
	case OX_OP_Conv: case OX_OP_MaxPool: case OX_OP_AveragePool: case OX_OP_GlobalAveragePool:
	case OX_OP_GlobalMaxPool:
		return 1;
	}
	return (ox_ops[op].flags & OX_F_EW) && (ox_ops[op].flags & OX_F_RT);
}

/* How node n computes when some input is blocked: 1 and needs[k] per input
 * when it can compute blocked, else 0. */
static int blockable(ox_graph *g, const ox_node *n, int b, int *need)
{
	unsigned f = ox_ops[n->op].flags;
	if (!(f & OX_F_BLOCKED) || n->nout < 1 || !ox_opt_rank4(g, n->out[0]) || !ox_opt_is_f32(g, n->out[0]))
		return 0;
	if (ox_node_rt(g, n)) {
		if (!takes_rt(n->op))
			return 0;
		for (int k = 0; k < n->nin + n->nout; k++) {
			ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
			if (v >= 0 && !ox_opt_rt_ok(g, &g->vals[v].shape, g->vals[v].shape.rank == 4 ? OX_OPT_NHW : 0))
				return 0;
		}
	}
	const ox_shape *o = &g->vals[n->out[0]].shape;
	for (int k = 0; k < n->nin; k++)
		need[k] = NEED_PLAIN;
	switch (n->op) {
	case OX_OP_Conv: {
		int dw;
		if (!ox_opt_conv_blockable(g, n, &dw))
			return 0;
		need[0] = dw ? NEED_BLOCKED : NEED_ANY;
		for (int k = 3; k < n->nin; k++) { /* epilogue operands */
			int sc;
			if (n->in[k] >= 0 && !operand_blockable(g, n->in[k], o, OX_F32, &sc))
				return 0;
			need[k] = n->in[k] >= 0 && !sc ? NEED_BLOCKED : NEED_PLAIN;
		}
		return 1;
	}
	case OX_OP_MaxPool:
		if (n->nout > 1 && n->out[1] >= 0)
			return 0; /* indices are positions in the plain layout */
		/* fallthrough */
	case OX_OP_AveragePool:
		if (ox_opt_rt_pads(g, n, &g->vals[n->in[0]].shape))
			return 0;
		/* fallthrough */
	case OX_OP_GlobalAveragePool:
	case OX_OP_GlobalMaxPool:
		if (!ox_opt_rank4(g, n->in[0]) || !ox_opt_is_f32(g, n->in[0]))
			return 0;
		need[0] = NEED_BLOCKED;
		return 1;
	case OX_OP_Resize:
		if (!ox_ir_nn_resize_blockable(g, n))
			return 0;
		need[0] = NEED_BLOCKED; /* roi, scales, sizes stay as they are */
		return 1;
	case OX_OP_Concat:
		if (ox_norm_axis(ox_attr_int(n, "axis", 0), 4) != 1)
			return 0;
		for (int k = 0; k < n->nin; k++) {
			if (!ox_opt_rank4(g, n->in[k]) || !ox_opt_is_f32(g, n->in[k]) ||
			    g->vals[n->in[k]].shape.d[1] % b)
				return 0;
			need[k] = NEED_BLOCKED;
		}
		return 1;
	}
	if (!(f & OX_F_EW))
		return 0;
	for (int k = 0; k < n->nin; k++) {
		int sc;
		if (n->in[k] < 0)
			continue;
		if (!operand_blockable(g, n->in[k], o, OX_F32, &sc))
			return 0;
		need[k] = sc ? NEED_PLAIN : NEED_BLOCKED;
	}
	return 1;
}

/* How node n computes on the GPU when some input is NHWC (see the head) */
static int gpu_blockable(ox_graph *g, const ox_node *n, int *need)
{
	if (g->parent || n->nout < 1 || !ox_opt_rank4(g, n->out[0]))
		return 0;
	const ox_value *y = &g->vals[n->out[0]];
	if (!ox_opt_fuse_type(g, y->dtype))
		return 0;
	/* a run-time batch (axis 0, bounded): the kernels take one; every other
	 * dim a constant; f32 (f16 and bf16 elementwise ops are fused, and so
	 * flow NHWC, with constant shapes only: opt/ewfuse.c) */
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (v >= 0 && ox_shape_is_rt(g, &g->vals[v].shape) &&
		    (!ox_opt_rt_ok(g, &g->vals[v].shape, 1u) || g->vals[v].shape.rank != 4 || y->dtype != OX_F32))
			return 0;
	}
	for (int k = 0; k < n->nin; k++)
		need[k] = NEED_PLAIN;
	const ox_value *x = ox_in(g, n, 0);
	switch (n->op) {
	case OX_OP_Conv: {
		const ox_value *w = ox_in(g, n, 1), *b = ox_in(g, n, 2);
		if (!ox_opt_rank4(g, n->in[0]) || x->dtype != y->dtype || !w || w->kind != OX_V_CONST || w->layout ||
		    w->dtype != y->dtype || w->shape.rank != 4 || n->nin > 3)
			return 0;
		if (b && (b->kind != OX_V_CONST || b->dtype != y->dtype || b->layout))
			return 0;
		int64_t G = ox_attr_int(n, "group", 1), C = x->shape.d[1], M = w->shape.d[0];
		if (G != 1 && !(G == C && M == C && w->shape.d[1] == 1))
			return 0;
		need[0] = NEED_BLOCKED;
		return 1;
	}
	case OX_OP_MaxPool:
		if (n->nout > 1 && n->out[1] >= 0)
			return 0; /* indices are positions in the plain layout */
		/* fallthrough */
	case OX_OP_GlobalAveragePool:
	case OX_OP_GlobalMaxPool:
		if (!ox_opt_rank4(g, n->in[0]) || x->dtype != y->dtype)
			return 0;
		need[0] = NEED_BLOCKED;
		return 1;
	case OX_OP_Concat:
		if (ox_norm_axis(ox_attr_int(n, "axis", 0), 4) != 1)
			return 0;
		for (int k = 0; k < n->nin; k++) {
			if (!ox_opt_rank4(g, n->in[k]) || g->vals[n->in[k]].dtype != y->dtype)
				return 0;
			need[k] = NEED_BLOCKED;
		}
		return 1;
	}
	if (!ox_opt_vector_op(g, n))
		return 0;
	for (int k = 0; k < n->nin; k++) {
		int sc;
		if (n->in[k] < 0)
			continue;
		if (!operand_blockable(g, n->in[k], &y->shape, y->dtype, &sc))
			return 0;
		need[k] = sc ? NEED_PLAIN : NEED_BLOCKED;
	}
	return 1;
}

/* the block of value v in the layout: the vector width on the CPU, its
 * channels (axis 1 of v aligned to rank 4) on the GPU */
static int block_of(ox_graph *g, ox_id v, int b)
{
	const ox_shape *s = &g->vals[v].shape;
	return !g->gpu ? b : s->rank >= 3 ? (int)s->d[s->rank - 3] : 1;
}

/* ---- compile-time conversion of constants ---- */

/* v's data, broadcast-aligned to rank 4, as a new blocked constant (lanes
 * past C zero) */
static ox_id blocked_const(ox_graph *g, ox_id v, int b)
{
	const ox_value *x = &g->vals[v];
	ox_shape s = {4, {1, 1, 1, 1}};
	for (int i = 0; i < x->shape.rank; i++)
		s.d[4 - x->shape.rank + i] = x->shape.d[i];
	int64_t N = s.d[0], C = s.d[1], S = s.d[2] * s.d[3], CB = (C + b - 1) / b;
	const size_t es = ox_dtype_size(x->dtype);
	ox_tensor *t = ox_ir_new_tensor(g, x->dtype, &(ox_shape){1, {N * CB * S * b}});
	const char *src = x->data->data;
	char *dst = t->data;
	for (int64_t n = 0; n < N; n++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t i = 0; i < S; i++)
				memcpy(dst + (((n * CB + c / b) * S + i) * b + c % b) * es, src + ((n * C + c) * S + i) * es, es);
	t->shape = s;
	char name[256];
	snprintf(name, sizeof name, "%s@blocked", x->name);
	ox_id id = ox_ir_add_const(g, name, t);
	g->vals[id].layout = OX_L_BLOCKED;
	g->vals[id].lp[0] = b;
	return id;
}

/* ---- the pass ---- */

typedef struct {
	ox_id *conv[2]; /* per value: its copy in the other layout (made once) */
} cache;

/* v in the layout `blocked`: v itself, or a (cached) Reorder or constant copy */
static ox_id convert(ox_graph *g, cache *cc, ox_id v, int blocked, int b)
{
	ox_value *x = &g->vals[v];
	if ((x->layout == OX_L_BLOCKED) == blocked)
		return v;
	if (cc->conv[blocked][v] >= 0)
		return cc->conv[blocked][v];
	b = block_of(g, v, b);
	ox_id r;
	if (x->kind == OX_V_CONST && blocked) {
		r = blocked_const(g, v, b);
	} else {
		char name[256];
		snprintf(name, sizeof name, "%s@%s", x->name, blocked ? "blocked" : "plain");
		ox_id nid = ox_ir_add_node(g, OX_OP_Reorder, "Reorder", name, 1, 1);
		r = ox_ir_add_value(g, name, OX_V_INTERNAL);
		ox_value *y = &g->vals[r];
		x = &g->vals[v];
		y->dtype = x->dtype, y->has_shape = 1, y->shape = x->shape, y->producer = nid;
		if (blocked)
			y->layout = OX_L_BLOCKED, y->lp[0] = b;
		ox_node *n = &g->nodes[nid];
		n->domain = "onnxcc";
		n->in[0] = v;
		n->out[0] = r;
	}
	cc->conv[blocked][v] = r;
	return r;
}

/* A GPU Conv's weights as its NHWC kernel reads them: [M,C,KH,KW] as the
 * [KH][KW][C][Mp] matrix of the implicit GEMM, M rounded up to 4 with zero
 * columns (so its rows load 16 bytes at a time: OX_L_CONVW, lp {Mp, 1,
 * C}), depthwise [C,1,KH,KW] as [KH][KW][C] (OX_L_DWW, lp {C}) */
static ox_id gpu_weights(ox_graph *g, const ox_node *n)
{
	const ox_value *w = ox_in(g, n, 1);
	const int64_t M = w->shape.d[0], C = w->shape.d[1], T = w->shape.d[2] * w->shape.d[3];
	const int dw = ox_attr_int(n, "group", 1) > 1;
	const int64_t Mp = dw ? M : (M + 3) / 4 * 4;
	const size_t es = ox_dtype_size(w->dtype);
	ox_tensor *t = ox_ir_new_tensor(g, w->dtype, &(ox_shape){1, {Mp * C * T}});
	const char *src = w->data->data;
	char *dst = t->data;
	memset(dst, 0, (size_t)(Mp * C * T) * es);
	for (int64_t m = 0; m < M; m++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t k = 0; k < T; k++)
				memcpy(dst + (dw ? k * M + m : (k * C + c) * Mp + m) * es, src + ((m * C + c) * T + k) * es, es);
	t->shape = w->shape;
	char name[256];
	snprintf(name, sizeof name, "%s@%s", w->name, dw ? "khkwc" : "khkwcm");
	ox_id id = ox_ir_add_const(g, name, t);
	ox_value *v = &g->vals[id];
	v->layout = dw ? OX_L_DWW : OX_L_CONVW;
	v->lp[0] = (int)Mp, v->lp[1] = dw ? 0 : 1, v->lp[2] = dw ? 0 : (int)C;
	return id;
}

/* On the GPU, a Reorder's NHWC output whose channels do not come in fours
 * (an image's 3 colours) is stored with them rounded up to 4 where every
 * consumer is a group-1 Conv (lp[0] = Cp > C; the Reorder writes the lanes
 * past C as zero): the Conv's implicit GEMM then reads a pixel's channels
 * 16 bytes at a time (codegen/cuda/cuda_nhwc.c), its reduction over Cp channels
 * a tap with zero weights past C */
/* does a group-1 Conv (its weights the NHWC GEMM's, OX_L_CONVW) read y as
 * its in[0] at every use of y? */
static int conv_reads_only(ox_graph *g, ox_id y)
{
	int convs = 0;
	for (int j = 0; j < g->nnodes; j++) {
		const ox_node *n = &g->nodes[j];
		const ox_value *w = n->dead || n->op != OX_OP_Conv ? NULL : ox_in(g, n, 1);
		convs += w && w->layout == OX_L_CONVW && n->in[0] == y;
	}
	return convs && convs == g->vals[y].nuses;
}

static void gpu_pad(ox_graph *g)
{
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *r = &g->nodes[i];
		if (r->op != OX_OP_Reorder || r->nout < 1 || r->out[0] < 0)
			continue;
		ox_id y = r->out[0];
		ox_value *v = &g->vals[y];
		if (v->layout != OX_L_BLOCKED || v->shape.d[1] % 4 == 0 || v->is_output)
			continue;
		if (conv_reads_only(g, y))
			v->lp[0] = (int)((v->shape.d[1] + 3) / 4 * 4);
	}
}

/* On the GPU, an image of 1 to 3 channels (a graph input, usually) that
 * only group-1 Convs read is read by them in place, NCHW
 * (codegen/cuda/cuda_nhwc.c: their implicit GEMM's load of A takes a channel
 * plane's element a tap): its Reorder to NHWC goes, a launch and a copy of
 * the image fewer, and so do the zero lanes gpu_pad would add, a quarter of
 * the products of a 3-channel reduction. As the CPU's blocked Convs,
 * which read either layout. */
static void gpu_plain_images(ox_graph *g)
{
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *r = &g->nodes[i];
		if (r->dead || r->op != OX_OP_Reorder || r->nout < 1 || r->out[0] < 0 || r->in[0] < 0)
			continue;
		const ox_id y = r->out[0];
		const ox_value *v = &g->vals[y], *x = &g->vals[r->in[0]];
		if (v->layout != OX_L_BLOCKED || x->layout || x->shape.rank != 4 || x->shape.d[1] > 3 || v->is_output ||
		    ox_attr_int(r, "ox_nhwc", 0))
			continue;
		if (!conv_reads_only(g, y))
			continue;
		for (int j = 0; j < g->nnodes; j++)
			if (!g->nodes[j].dead && g->nodes[j].op == OX_OP_Conv && g->nodes[j].in[0] == y)
				g->nodes[j].in[0] = r->in[0];
		r->dead = 1;
	}
	ox_ir_compact(g);
	ox_ir_fill_uses(g);
}

/* A blocked value of one block of exactly its C channels (NHWC on the GPU)
 * is, byte for byte, the plain [N, H, W, C]. Where its Reorder back to
 * plain is only read to be transposed to channels last (a Transpose (0, 2,
 * 3, 1): ConvNeXt's permute for its LayerNorm; or a Reshape to [N, C, H*W]
 * and a Transpose (0, 2, 1): a ViT's patch embedding,
 * flatten(2).transpose(1, 2)), the Reorder gives [N, H, W, C] itself
 * (attribute ox_nhwc: a view, opt/plan.c) and a Reshape (a view) the
 * reader's shape: no kernel, nothing copied. Constant shapes but for a
 * run-time batch. */
static void channels_last(ox_graph *g)
{
	static const int p0231[] = {0, 2, 3, 1}, p021[] = {0, 2, 1};
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *r = &g->nodes[i];
		if (r->dead || r->op != OX_OP_Reorder || r->out[0] < 0 || r->in[0] < 0)
			continue;
		const ox_value *x = &g->vals[r->in[0]], *y = &g->vals[r->out[0]];
		if (x->layout != OX_L_BLOCKED || y->layout || x->shape.rank != 4 || x->lp[0] != x->shape.d[1] ||
		    !ox_opt_rt_ok(g, &x->shape, 1u) || y->nuses != 1 || y->is_output)
			continue;
		ox_node *a = ox_ir_sole_reader(g, r->out[0]), *t = NULL;
		if (!a || a->in[0] != r->out[0])
			continue;
		const ox_shape *xs = &x->shape;
		if (ox_opt_is_perm(g, a, p0231, 4)) {
			t = a;
		} else if (a->op == OX_OP_Reshape && a->out[0] >= 0 && g->vals[a->out[0]].nuses == 1 &&
			   !g->vals[a->out[0]].is_output) {
			const ox_shape *s = &g->vals[a->out[0]].shape;
			ox_node *b = ox_ir_sole_reader(g, a->out[0]);
			if (s->rank == 3 && s->d[0] == xs->d[0] && s->d[1] == xs->d[1] && s->d[2] == xs->d[2] * xs->d[3] &&
			    b && b->in[0] == a->out[0] && ox_opt_is_perm(g, b, p021, 3))
				t = b;
		}
		if (!t)
			continue;
		const ox_id yv = r->out[0], tv = t->out[0];
		const ox_shape ts = g->vals[tv].shape;
		char name[600];
		snprintf(name, sizeof name, "%s/channels_last", t->name[0] ? t->name : "Transpose");
		ox_ir_add_attr(g, r, "ox_nhwc", OX_AT_INT)->i = 1;
		g->vals[yv].shape = (ox_shape){4, {xs->d[0], xs->d[2], xs->d[3], xs->d[1]}};
		a->dead = 1, t->dead = 1;
		ox_ir_add_reshape(g, yv, tv, &ts, name);
	}
	ox_ir_compact(g);
}

int ox_opt_layout(ox_graph *g)
{
	int b = g->target ? g->target->vw : 4;
	if (!g->opt || (g->gpu ? !g->nhwc : b < 2))
		return 0;
	ox_ir_fill_uses(g);
	int nv = g->nvals, nn = g->nnodes;
	char *blk = calloc((size_t)nn + 1, 1);
	int maxin = 1;
	for (int i = 0; i < nn; i++)
		if (g->nodes[i].nin > maxin)
			maxin = g->nodes[i].nin;
	int *need = calloc((size_t)nn * maxin + 1, sizeof *need);

	/* forward: a node computes blocked when it is a blocked Conv, or when
	 * it can and one of its inputs arrives blocked */
	for (int i = 0; i < nn; i++) {
		ox_node *n = &g->nodes[i];
		int *nd = need + (size_t)i * maxin;
		if (g->gpu ? !gpu_blockable(g, n, nd) : !blockable(g, n, b, nd))
			continue;
		int any = n->op == OX_OP_Conv;
		for (int k = 0; k < n->nin && !any; k++)
			any = n->in[k] >= 0 && g->vals[n->in[k]].layout == OX_L_BLOCKED;
		if (!any)
			continue;
		blk[i] = 1;
		ox_value *y = &g->vals[n->out[0]];
		y->layout = OX_L_BLOCKED;
		y->lp[0] = block_of(g, n->out[0], b);
	}

	/* the conversions each input needs; graph outputs go back to plain */
	cache cc;
	for (int l = 0; l < 2; l++) {
		cc.conv[l] = malloc(((size_t)nv + 1) * sizeof(ox_id));
		for (int i = 0; i < nv; i++)
			cc.conv[l][i] = -1;
	}
	for (int i = 0; i < nn; i++) {
		for (int k = 0; k < g->nodes[i].nin; k++) {
			ox_id v = g->nodes[i].in[k];
			int nd = blk[i] ? need[(size_t)i * maxin + k] : NEED_PLAIN;
			if (v < 0 || v >= nv || nd == NEED_ANY)
				continue;
			ox_id r = convert(g, &cc, v, nd == NEED_BLOCKED, b);
			g->nodes[i].in[k] = r;
		}
	}
	for (int k = 0; k < g->noutputs; k++)
		g->outputs[k] = convert(g, &cc, g->outputs[k], 0, b);
	/* the GPU's Conv weights, repacked once per weight value */
	for (int i = 0; i < nv; i++)
		cc.conv[1][i] = -1;
	for (int i = 0; g->gpu && i < nn; i++)
		if (blk[i] && g->nodes[i].op == OX_OP_Conv) {
			ox_id v = g->nodes[i].in[1];
			if (cc.conv[1][v] < 0)
				cc.conv[1][v] = gpu_weights(g, &g->nodes[i]);
			g->nodes[i].in[1] = cc.conv[1][v];
		}
	free(cc.conv[0]), free(cc.conv[1]);
	free(blk), free(need);
	channels_last(g);
	if (ox_ir_toposort(g))
		ox_die("layout: the graph has a cycle after adding Reorders");
	ox_ir_fill_uses(g);
	if (g->gpu)
		gpu_plain_images(g), gpu_pad(g);
	return 0;
}
