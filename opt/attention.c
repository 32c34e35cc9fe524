/* attention.c: scaled dot-product attention written out by an exporter,
 * recognized and replaced by one ONNX Attention node (opset 23).
 *
 * The pattern: S = MatMul(Q, Kt); optionally S / c or S * c (c a scalar
 * constant: the scale); optionally S + mask; P = Softmax(S) over the last
 * axis; Y = MatMul(P, V). Q is [.., Sq, d], Kt [.., d, Skv], V [.., Skv, dv].
 * Where Q, Kt and V are the heads of [B, S, H*d] tensors split the way
 * BERT/HF exports do (Reshape to [B, S, H, d], then Transpose (0,2,1,3),
 * or (0,2,3,1) for Kt) and Y is merged back the same way, the node reads
 * the 3-D tensors directly (q_num_heads = kv_num_heads = H) and none of the
 * Transposes is computed. Otherwise it takes Q, a K made from Kt by one
 * Transpose of its last two axes, and V as 4-D [B, H, S, d] tensors (a
 * rank-3 [B*H, S, d] batch as 3-D with one head; nn.MultiheadAttention's,
 * transposed from [S, B*H, d], in place: H heads of its [S, B, E]
 * projections read sequence first, ox_seq_first, unless B is 1 (then B*H
 * heads of [1, S, B*H*d]); on the CPU opt/rows.c lowers those it leaves). The inner values must be
 * used by the pattern alone. The emitter (codegen/c/emit_attn.c) computes it
 * in blocks of query rows: scores of a block, softmax, times V, so the
 * [Sq, Skv] score matrix of a head is never stored whole. Batch and
 * sequence lengths may be run-time dims when the blocked kernel takes the
 * node (head counts and sizes constant, a mask with a value per key:
 * ox_opt_attn_geo, opt/analysis.c).
 * Requires: bounded dims (after bounds). Invalidates: node positions
 * (compacted), uses (refilled).
 */
#include "opt.h"
#include "../ir/family.h"
#include <string.h>

static ox_node *producer(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].producer >= 0 ? &g->nodes[g->vals[v].producer] : NULL;
}

/* used once, by the pattern, and not a graph output */
static int inner(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].nuses == 1 && !g->vals[v].is_output;
}

static int scalar_const(ox_graph *g, ox_id v, double *x)
{
	const ox_value *c = &g->vals[v];
	if (c->kind != OX_V_CONST || ox_shape_numel(&c->shape) != 1 || !ox_dtype_is_float(c->dtype))
		return 0;
	*x = ox_tensor_get_f64(c->data, 0);
	return 1;
}

/* n = x * c, c * x or x / c, c a nonzero scalar constant: 1, with the
 * factor (1 / c for the Div) in *f and x in *x */
static int scaled(ox_graph *g, const ox_node *n, double *f, ox_id *x)
{
	double c;
	if (!n || (n->op != OX_OP_Div && n->op != OX_OP_Mul))
		return 0;
	int k = n->op == OX_OP_Mul && scalar_const(g, n->in[0], &c) ? 0 : 1;
	if (!scalar_const(g, n->in[k], &c) || c == 0 || (n->op == OX_OP_Div && k == 0))
		return 0;
	*f = n->op == OX_OP_Div ? 1 / c : c, *x = n->in[1 - k];
	return 1;
}

/* v through the Reshapes and Unsqueezes that keep its last two dims (a
 * mask's leading 1s added) */
static ox_id strip_leading(ox_graph *g, ox_id v)
{
	for (;;) {
		const ox_node *n = producer(g, v);
		if (!n || (n->op != OX_OP_Reshape && n->op != OX_OP_Unsqueeze) || n->in[0] < 0)
			return v;
		const ox_shape *a = &g->vals[n->in[0]].shape, *b = &g->vals[v].shape;
		if (a->rank < 2 || a->d[a->rank - 1] != b->d[b->rank - 1] || a->d[a->rank - 2] != b->d[b->rank - 2])
			return v;
		v = n->in[0];
	}
}

/* v is [.., S, S] with 1s before (a mask for all batches and heads) */
static int square(const ox_graph *g, ox_id v)
{
	const ox_shape *s = &g->vals[v].shape;
	if (s->rank < 2 || s->d[s->rank - 1] != s->d[s->rank - 2])
		return 0;
	for (int i = 0; i + 2 < s->rank; i++)
		if (s->d[i] != 1)
			return 0;
	return 1;
}

/* t (through leading 1s) = Trilu(ConstantOfShape of *fill), its constant
 * k (0 when absent) in *k and upper in *upper: 1, else 0 */
static int tri_of_fill(ox_graph *g, ox_id t, double *fill, int64_t *k, int *upper)
{
	const ox_node *n = producer(g, strip_leading(g, t));
	ox_sv kv = {OX_SV_CONST, 0, 0};
	if (!n || n->op != OX_OP_Trilu || (n->nin > 1 && n->in[1] >= 0 && ox_in_svals(g, n, 1, &kv, 1) != 1) ||
	    kv.kind != OX_SV_CONST)
		return 0;
	const ox_node *c = producer(g, n->in[0]);
	const ox_attr *v = c && c->op == OX_OP_ConstantOfShape ? ox_attr_get(c, "value") : NULL;
	if (!v || v->type != OX_AT_TENSOR || ox_tensor_numel(v->t) != 1)
		return 0;
	*fill = ox_tensor_get_f64(v->t, 0), *k = kv.c, *upper = ox_attr_int(n, "upper", 1) != 0;
	return 1;
}

/* Are t's nonzero elements [i, j] those with j > i (after) or j <= i
 * (!after)? t a Trilu (lower with k 0, upper with k 1) of a ConstantOfShape
 * of a nonzero value: torch.tril(torch.ones(S, S)) of a run-time S */
static int tri_nonzero(ox_graph *g, ox_id t, int after)
{
	double fill;
	int64_t k;
	int upper;
	return tri_of_fill(g, t, &fill, &k, &upper) && fill != 0 && (after ? upper && k == 1 : !upper && k == 0);
}

/* Is the constant v, [.., S, S] with 1s before, a causal mask? add: an
 * additive one, at most -2^100 (-inf, finfo.min) where the key j comes
 * after the query i and 0 elsewhere; else nonzero exactly where j comes
 * after i (after) or exactly where it does not (!after). A causal mask
 * folded to a constant (static shapes: HF GPT-2's sliced bias buffer,
 * nn.Transformer's square subsequent mask) */
static int const_causal(const ox_graph *g, ox_id v, int add, int after)
{
	const ox_value *c = &g->vals[v];
	if (c->kind != OX_V_CONST || !c->data || c->layout || !square(g, v))
		return 0;
	const int64_t S = c->shape.d[c->shape.rank - 1];
	for (int64_t i = 0; i < S; i++)
		for (int64_t j = 0; j < S; j++) {
			double x = ox_tensor_get_f64(c->data, i * S + j);
			if (add ? !(j > i ? x <= -0x1p100 : x == 0) : (x != 0) != (after ? j > i : j <= i))
				return 0;
		}
	return 1;
}

/* Is the additive mask m, [.., S, S] with 1s before, a fill at most -2^100
 * (-inf) where the key j comes after the query i and 0 elsewhere? A Trilu
 * (upper, k 1) of a ConstantOfShape of the fill, perhaps scaled:
 * nn.Transformer's square subsequent mask torch.triu(torch.full((S, S),
 * -inf), 1); or such a constant */
static int causal_add(ox_graph *g, ox_id m)
{
	if (!square(g, m))
		return 0;
	if (const_causal(g, m, 1, 1))
		return 1;
	double f = 1, c1, fill; /* (through positive scales: torch multiplies the mask by 1) */
	ox_id v = strip_leading(g, m);
	for (ox_id x; scaled(g, producer(g, v), &c1, &x) && c1 > 0;)
		f *= c1, v = strip_leading(g, x);
	int64_t k;
	int upper;
	return tri_of_fill(g, v, &fill, &k, &upper) && upper && k == 1 && fill * f <= -0x1p100;
}

/* Is the bool c, [.., S, S] with 1s before, true where the key j comes
 * after the query i (after) or where it does not (!after)? A Trilu of
 * ones (tri_nonzero), or Equal of one and 0, or a Not of such (PyTorch's
 * causal masks of a run-time length: the attention is then causal, and no
 * mask is computed); or such a constant */
static int causal_cond(ox_graph *g, ox_id c, int after)
{
	if (!square(g, c))
		return 0;
	if (g->vals[c].dtype == OX_BOOL && const_causal(g, c, 0, after))
		return 1;
	const ox_node *n = producer(g, strip_leading(g, c));
	if (n && n->op == OX_OP_Not)
		return causal_cond(g, n->in[0], !after);
	if (n && n->op == OX_OP_Equal)
		for (int k = 0; k < 2; k++) {
			const ox_value *z = &g->vals[n->in[k]];
			if (z->kind == OX_V_CONST && ox_shape_numel(&z->shape) == 1 && ox_tensor_get_f64(z->data, 0) == 0)
				return tri_nonzero(g, n->in[1 - k], !after);
		}
	return g->vals[c].dtype == OX_BOOL && tri_nonzero(g, c, after);
}

/* v = Transpose(Reshape(x3 [B,S,H*d] -> [B,S,H,d]), perm): x3, else -1 */
static ox_id heads_of(ox_graph *g, ox_id v, const int *perm, int64_t *H)
{
	ox_node *t = producer(g, v);
	if (!inner(g, v) || !ox_opt_is_perm(g, t, perm, 4))
		return -1;
	ox_id r4 = t->in[0];
	ox_node *rs = producer(g, r4);
	if (!inner(g, r4) || !rs || rs->op != OX_OP_Reshape)
		return -1;
	const ox_value *x = &g->vals[rs->in[0]], *y = &g->vals[r4];
	/* heads and head size constants (batch and sequence may be run-time) */
	if (x->shape.rank != 3 || x->shape.d[0] != y->shape.d[0] || x->shape.d[1] != y->shape.d[1] ||
	    ox_dim_is_rt(g, y->shape.d[2]) || ox_dim_is_rt(g, y->shape.d[3]) ||
	    x->shape.d[2] != ox_dim_mul(g, y->shape.d[2], y->shape.d[3]))
		return -1;
	*H = y->shape.d[2];
	return rs->in[0];
}

/* v [S, B*H, d] = Reshape(x [S, B, H*d]) (nn.MultiheadAttention's heads
 * of a run-time batch B): x, with H and B, else -1 */
static ox_id seq_first_of(ox_graph *g, ox_id v, int64_t *H, ox_dim *B)
{
	ox_node *rs = producer(g, v);
	if (!rs || rs->op != OX_OP_Reshape)
		return -1;
	const ox_value *x = &g->vals[rs->in[0]], *y = &g->vals[v];
	const ox_dim E = x->shape.d[2], d = y->shape.d[2];
	if (x->shape.rank != 3 || y->shape.rank != 3 || x->shape.d[0] != y->shape.d[0] || ox_dim_is_rt(g, E) ||
	    ox_dim_is_rt(g, d) || d <= 0 || E % d || y->shape.d[1] != ox_dim_mul(g, x->shape.d[1], E / d))
		return -1;
	*H = E / d, *B = x->shape.d[1];
	return rs->in[0];
}

/* y = Reshape(Transpose(v [B,H,S,d], (0,2,1,3)) -> [B,S,H*d]): the Reshape, else NULL */
static ox_node *merged_heads(ox_graph *g, ox_id v)
{
	static const int p0213[] = {0, 2, 1, 3};
	ox_node *t = ox_ir_sole_reader(g, v);
	if (!ox_opt_is_perm(g, t, p0213, 4))
		return NULL;
	ox_node *rs = ox_ir_sole_reader(g, t->out[0]);
	if (!rs || rs->op != OX_OP_Reshape || rs->in[0] != t->out[0])
		return NULL;
	const ox_value *x = &g->vals[t->out[0]], *y = &g->vals[rs->out[0]];
	if (y->shape.rank != 3 || y->shape.d[0] != x->shape.d[0] || y->shape.d[1] != x->shape.d[1] ||
	    ox_dim_is_rt(g, x->shape.d[2]) || ox_dim_is_rt(g, x->shape.d[3]) ||
	    y->shape.d[2] != ox_dim_mul(g, x->shape.d[2], x->shape.d[3]))
		return NULL;
	return rs;
}

static ox_id add_transpose(ox_graph *g, ox_id x, const int64_t *perm, int r, const char *name)
{
	const ox_id t = ox_ir_add_transpose(g, x, -1, perm, r, name); /* (g->nodes may move) */
	return g->nodes[t].out[0];
}

static ox_id add_reshape(ox_graph *g, ox_id x, const ox_shape *s, const char *name)
{
	const ox_id t = ox_ir_add_reshape(g, x, -1, s, name); /* (g->nodes may move) */
	return g->nodes[t].out[0];
}

/* x with a new axis `axis` of extent 1 (Unsqueeze), or without that axis
 * of extent 1 (Squeeze); opset 13, the axis an input: any run-time dims
 * carry over, which a Reshape's shape cannot always say */
static ox_id add_axis(ox_graph *g, ox_id x, int axis, int squeeze, const char *name)
{
	ox_tensor *t = ox_ir_new_tensor(g, OX_I64, &(ox_shape){1, {1}});
	ox_tensor_set_i64(t, 0, axis);
	char cn[700];
	snprintf(cn, sizeof cn, "%s/axes", name);
	ox_id c = ox_ir_add_const(g, cn, t);
	ox_id nid = squeeze ? ox_ir_add_node(g, OX_OP_Squeeze, "Squeeze", name, 2, 1)
			    : ox_ir_add_node(g, OX_OP_Unsqueeze, "Unsqueeze", name, 2, 1);
	ox_id y = ox_ir_add_value(g, name, OX_V_INTERNAL);
	const ox_shape *xs = &g->vals[x].shape;
	ox_value *v = &g->vals[y];
	v->dtype = g->vals[x].dtype, v->has_shape = 1, v->shape.rank = xs->rank + (squeeze ? -1 : 1);
	int j = 0;
	for (int i = 0; i < xs->rank; i++) {
		if (!squeeze && j == axis)
			v->shape.d[j++] = 1;
		if (!squeeze || i != axis)
			v->shape.d[j++] = xs->d[i];
	}
	if (!squeeze && j == axis)
		v->shape.d[j++] = 1;
	g->nodes[nid].in[0] = x, g->nodes[nid].in[1] = c, g->nodes[nid].out[0] = y;
	g->nodes[nid].opset = 13;
	ox_opt_fold_node(g, &g->nodes[nid]); /* (of a constant: a constant) */
	return y;
}

/* n computes elementwise on one value and scalar constants (a mask's
 * Where(pad, -inf, 0), a Mul by 1, Cast, Not), its output of that value's
 * shape: the value's input index, else -1 */
static int ew_of_scalars(ox_graph *g, const ox_node *n)
{
	switch (n->op) {
	case OX_OP_Where: case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div:
	case OX_OP_Not: case OX_OP_Neg: case OX_OP_Cast:
		break;
	default:
		return -1;
	}
	if (n->nout != 1 || n->out[0] < 0)
		return -1;
	int k = -1;
	for (int i = 0; i < n->nin; i++) {
		if (n->in[i] < 0)
			return -1;
		const ox_value *x = &g->vals[n->in[i]];
		if (x->kind == OX_V_CONST && ox_shape_numel(&x->shape) == 1)
			continue;
		if (k >= 0)
			return -1;
		k = i;
	}
	if (k < 0 || memcmp(&g->vals[n->out[0]].shape, &g->vals[n->in[k]].shape, sizeof(ox_shape)))
		return -1;
	return k;
}

/* A copy of node oi (of ew_of_scalars) reading v for its one operand
 * that is not a scalar constant, shape and type inferred; a constant when
 * v is one (folded here). Its output, or -1 */
static ox_id clone_on(ox_graph *g, int oi, ox_id v, const char *name)
{
	ox_id c = ox_ir_add_node(g, g->nodes[oi].op, g->nodes[oi].optype, name, g->nodes[oi].nin, 1);
	ox_id w = ox_ir_add_value(g, name, OX_V_INTERNAL);
	ox_node *o = &g->nodes[oi], *cl = &g->nodes[c];
	const int k = ew_of_scalars(g, o);
	cl->opset = o->opset, cl->domain = o->domain, cl->nattr = o->nattr, cl->attrs = o->attrs;
	for (int j = 0; j < o->nin; j++)
		cl->in[j] = j == k ? v : o->in[j];
	cl->out[0] = w;
	g->vals[w].producer = c;
	if (ox_infer_node(g, cl))
		return -1;
	if (g->vals[v].kind == OX_V_CONST && ox_opt_fold_node(g, cl))
		return -1;
	return w;
}

/* The mask m [N, 1, Skv] of N = B*H heads, batch-major, when it is one
 * row per batch entry copied over the heads: elementwise ops with scalar
 * constants (ew_of_scalars) of Reshape(Expand(y [B or 1, 1, 1, Skv] to
 * [B, H, 1, Skv])) to [N, 1, Skv] (nn.MultiheadAttention's key padding
 * mask, torch 1.13: Where(pad, -inf, 0) * 1). Then those ops are applied
 * to y instead (new nodes; the old die when unread), a mask that Attention
 * broadcasts over the heads: no copy over the heads, three kernels fewer on
 * the GPU. Else -1. */
static ox_id unexpand_heads(ox_graph *g, ox_id m, ox_dim B, ox_dim H, const char *nm)
{
	int chain[8], nc = 0;
	ox_id v = m;
	const ox_node *n;
	while ((n = producer(g, v)) && n->op != OX_OP_Reshape) {
		int k = ew_of_scalars(g, n);
		if (k < 0 || nc == 8)
			return -1;
		chain[nc++] = (int)(n - g->nodes);
		v = n->in[k];
	}
	const ox_node *e = n ? producer(g, n->in[0]) : NULL;
	if (!e || e->op != OX_OP_Expand || e->out[0] < 0 || e->in[0] < 0)
		return -1;
	const ox_shape *vs = &g->vals[v].shape, *xs = &g->vals[e->out[0]].shape;
	const ox_shape ys = g->vals[e->in[0]].shape;
	if (vs->rank != 3 || vs->d[1] != 1 || xs->rank != 4 || xs->d[0] != B || xs->d[1] != H || xs->d[2] != 1 ||
	    xs->d[3] != vs->d[2] || ys.rank != 4 || (ys.d[0] != B && ys.d[0] != 1) || ys.d[1] != 1 || ys.d[2] != 1 ||
	    ys.d[3] != vs->d[2])
		return -1;
	v = e->in[0];
	for (int i = nc - 1; i >= 0; i--) {
		char cn[640];
		snprintf(cn, sizeof cn, "%s/mask/%d", nm, nc - 1 - i);
		/* after a Where of two scalars (a clone): the op applied to them */
		ox_node *w = i < nc - 1 ? producer(g, v) : NULL;
		if (w && w->op == OX_OP_Where && ox_shape_numel(&g->vals[w->in[1]].shape) == 1 &&
		    ox_shape_numel(&g->vals[w->in[2]].shape) == 1) {
			const ox_id wv = v;
			ox_id ab[2];
			for (int j = 0; j < 2; j++)
				ab[j] = clone_on(g, chain[i], producer(g, wv)->in[1 + j], cn);
			if (ab[0] >= 0 && ab[1] >= 0) {
				w = producer(g, wv);
				w->in[1] = ab[0], w->in[2] = ab[1];
				g->vals[wv].dtype = g->vals[ab[0]].dtype;
				continue;
			}
		}
		v = clone_on(g, chain[i], v, cn);
		if (v < 0)
			return -1;
	}
	return v;
}

/* Try the pattern at Softmax node index si; 1 if rewritten. */
static int match(ox_graph *g, int si)
{
	ox_node *sm = &g->nodes[si];
	ox_id s = sm->in[0], p = sm->out[0];
	const ox_value *sv = &g->vals[s];
	int r = sv->shape.rank;
	const int dt = sv->dtype; /* f32; f16, bf16 on the GPU (ox_opt_fuse_type) */
	if (!ox_opt_fuse_type(g, dt) || (r != 3 && r != 4) || ox_norm_axis(ox_attr_int(sm, "axis", -1), r) != r - 1)
		return 0;
	if (sm->opset < 13 && ox_norm_axis(ox_attr_int(sm, "axis", 1), r) != r - 1)
		return 0;
	/* P V */
	ox_node *pv = NULL;
	for (int i = si + 1; i < g->nnodes && !pv; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == OX_OP_MatMul && g->nodes[i].in[0] == p)
			pv = &g->nodes[i];
	if (!pv || !inner(g, p) || g->vals[pv->in[1]].shape.rank != r)
		return 0;
	/* back from S: mask add and masked fill (either order), scale, QK^T */
	const char *names[8];
	int nn = 0;
	ox_id mask = -1, cur = s;
	ox_id wc = -1, wfill = -1; /* a masked fill Where(c, fill, S): c, fill */
	int wkeep = 0;             /* ... or Where(c, S, fill): S where c holds */
	double scale = 1;
	ox_node *e = producer(g, cur);
	for (int step = 0; step < 2 && e && inner(g, cur); step++) {
		if (e->op == OX_OP_Add && mask < 0) {
			for (int k = 0; k < 2; k++) {
				ox_node *o = producer(g, e->in[k]);
				if (o && (o->op == OX_OP_MatMul || o->op == OX_OP_Div || o->op == OX_OP_Mul || o->op == OX_OP_Where) &&
				    inner(g, e->in[k])) {
					mask = e->in[1 - k];
					cur = e->in[k];
					break;
				}
			}
			if (mask < 0)
				return 0;
			const ox_value *m = &g->vals[mask];
			if (m->dtype != dt || m->shape.rank > 4)
				return 0;
		} else if (e->op == OX_OP_Where && wc < 0) {
			/* the fill -inf, or so far below any score that S + fill is
			 * fill (|S| < 2^76): an additive mask Where(c, fill, 0) then */
			double f;
			int k = scalar_const(g, e->in[1], &f) && f <= -0x1p100 ? 1 : 2;
			if (!scalar_const(g, e->in[k], &f) || !(f <= -0x1p100) || g->vals[e->in[k]].dtype != dt ||
			    g->vals[e->in[0]].dtype != OX_BOOL || g->vals[e->in[0]].shape.rank > 4 ||
			    memcmp(&g->vals[e->in[3 - k]].shape, &g->vals[cur].shape, sizeof(ox_shape)))
				return 0;
			wc = e->in[0], wfill = e->in[k], wkeep = k == 2;
			cur = e->in[3 - k];
		} else {
			break;
		}
		names[nn++] = e->name;
		e = producer(g, cur);
	}
	/* a causal masked fill or mask over the scores' last two dims: is_causal */
	int causal = 0;
	const ox_shape *ss = &g->vals[s].shape;
	for (int k = 0; k < 2; k++) {
		ox_id *c = k ? &mask : &wc;
		if (*c < 0 || !(k ? causal_add(g, *c) : causal_cond(g, *c, !wkeep)))
			continue;
		const ox_shape *cs = &g->vals[*c].shape;
		if (cs->d[cs->rank - 1] == ss->d[ss->rank - 1] && cs->d[cs->rank - 2] == ss->d[ss->rank - 2])
			causal = 1, *c = -1;
	}
	/* the mask's shape (a masked fill's and an added mask's broadcast) */
	ox_shape msh = mask >= 0 ? g->vals[mask].shape : (ox_shape){0};
	if (wc >= 0 && mask >= 0 && ox_broadcast(g, &g->vals[wc].shape, &g->vals[mask].shape, &msh))
		return 0;
	if (wc >= 0 && mask < 0)
		msh = g->vals[wc].shape;
	const int has_mask = mask >= 0 || wc >= 0;
	if (e && (e->op == OX_OP_Div || e->op == OX_OP_Mul) && inner(g, cur)) {
		if (!scaled(g, e, &scale, &cur))
			return 0;
		names[nn++] = e->name;
		e = producer(g, cur);
	}
	if (!e || e->op != OX_OP_MatMul || !inner(g, cur) || (cur == s && !inner(g, s)))
		return 0;
	ox_node *qk = e;
	ox_id qh = qk->in[0], kt = qk->in[1], vh = pv->in[1];
	/* Q scaled before the product (nn.MultiheadAttention's q / sqrt(d)):
	 * the scale's, as (c q) k = c (q k) */
	ox_node *qs = producer(g, qh);
	double qc;
	ox_id qx;
	if (inner(g, qh) && scaled(g, qs, &qc, &qx) && g->vals[qx].dtype == dt &&
	    !memcmp(&g->vals[qx].shape, &g->vals[qh].shape, sizeof(ox_shape))) {
		scale *= qc;
		names[nn++] = qs->name;
		qh = qx;
	}
	const ox_value *qv = &g->vals[qh], *ktv = &g->vals[kt], *vv = &g->vals[vh];
	if (qv->dtype != dt || ktv->dtype != dt || vv->dtype != dt || g->vals[p].dtype != dt ||
	    g->vals[pv->out[0]].dtype != dt || qv->shape.rank != r || ktv->shape.rank != r)
		return 0;
	for (int i = 0; i < r - 2; i++) /* no batch broadcasting inside attention */
		if (qv->shape.d[i] != ktv->shape.d[i] || qv->shape.d[i] != vv->shape.d[i])
			return 0;
	int64_t D = qv->shape.d[r - 1], Skv = ktv->shape.d[r - 1];
	if (ktv->shape.d[r - 2] != D || vv->shape.d[r - 2] != Skv)
		return 0;
	if (has_mask) { /* broadcastable to [B, H, Sq, Skv] (a 3-D score batch: [B*H, Sq, Skv]) */
		for (int i = 0; i < msh.rank; i++) {
			int ax = r - msh.rank + i;
			if (ax < 0 || (msh.d[i] != 1 && msh.d[i] != sv->shape.d[ax]))
				return 0;
		}
	}

	/* Run-time batch or sequence lengths: only what the blocked kernel
	 * takes (ox_opt_attn_geo: head sizes and counts constant, a mask with
	 * a value per key), as the plain Attention emitter takes constant
	 * shapes only; the MatMuls and Softmax stay as they are otherwise */
	if (ox_shape_is_rt(g, &sv->shape) || ox_shape_is_rt(g, &qv->shape) || ox_shape_is_rt(g, &vv->shape)) {
		if (ox_dim_is_rt(g, D) || ox_dim_is_rt(g, vv->shape.d[r - 1]) || (r == 4 && ox_dim_is_rt(g, qv->shape.d[1])))
			return 0;
		if (has_mask && (msh.rank < 1 || msh.d[msh.rank - 1] != Skv))
			return 0;
		if (!ox_opt_rt_ok(g, &sv->shape, ~0u) || !ox_opt_rt_ok(g, &qv->shape, ~0u) ||
		    !ox_opt_rt_ok(g, &vv->shape, ~0u))
			return 0;
	}

	/* the inputs: 3-D with heads when the split/merge is recognized */
	static const int p0213[] = {0, 2, 1, 3}, p0231[] = {0, 2, 3, 1};
	int64_t hq = 0, hk = 0, hv = 0;
	ox_id q3 = -1, k3 = -1, v3 = -1;
	ox_node *merge = NULL;
	if (r == 4) {
		q3 = heads_of(g, qh, p0213, &hq);
		k3 = heads_of(g, kt, p0231, &hk);
		v3 = heads_of(g, vh, p0213, &hv);
		merge = merged_heads(g, pv->out[0]);
	}
	/* a 3-D batch [N, S, d] transposed from [S, N, d] (nn.MultiheadAttention:
	 * [S, B, E] as [S, B*H, d], then (1,0,2); K^T by (1,2,0)) and merged back
	 * by (1,0,2): N heads of one [1, S, N*d] tensor, read in place (N, batch
	 * times heads, a constant, as the heads' sizes: the head count is an
	 * attribute; the sequence lengths may be run-time dims); a mask
	 * [N, Sq, Skv] (a key padding mask [B*H, 1, Skv]) as [1, N, Sq, Skv] */
	/* With a run-time batch B (so B*H) or a constant one past 1: the
	 * [S, B*H, d] values are Reshapes of [S, B, E] tensors (the
	 * projections), which a sequence-first Attention (ox_seq_first: the
	 * CUDA kernels') reads in place, H heads of B batch entries; its
	 * [S, B, E] result reshaped back; a mask [B*H, Sq, Skv] as
	 * [B, H, Sq, Skv] */
	static const int p102[] = {1, 0, 2}, p120[] = {1, 2, 0};
	ox_node *tq = producer(g, qh), *tk = producer(g, kt), *tv = producer(g, vh), *ty = NULL;
	ox_id sx[3] = {-1, -1, -1};
	int64_t sh[3] = {0, 0, 0};
	ox_dim sb[3] = {0, 0, 0};
	int seq = 0;
	if (r == 3 && inner(g, qh) && inner(g, kt) && inner(g, vh) && ox_opt_is_perm(g, tq, p102, 3) && ox_opt_is_perm(g, tk, p120, 3) &&
	    ox_opt_is_perm(g, tv, p102, 3) && !ox_dim_is_rt(g, D) && !ox_dim_is_rt(g, vv->shape.d[2])) {
		/* sequence first also with a constant batch of more than one:
		 * batch_first's Transposes around it then go (opt/rows.c, which
		 * on the CPU lowers the ones left) */
		const ox_node *t3[3] = {tq, tk, tv};
		for (int i = 0; i < 3; i++)
			sx[i] = seq_first_of(g, t3[i]->in[0], &sh[i], &sb[i]);
		seq = sx[0] >= 0 && sx[1] >= 0 && sx[2] >= 0 && sh[0] == sh[1] && sh[0] == sh[2] && sb[0] == sb[1] &&
		      sb[0] == sb[2] && (ox_dim_is_rt(g, qv->shape.d[0]) || sb[0] != 1);
		if (seq || !ox_dim_is_rt(g, qv->shape.d[0]))
			ty = ox_ir_sole_reader(g, pv->out[0]);
	}
	if (ty && (ty->in[0] != pv->out[0] || !ox_opt_is_perm(g, ty, p102, 3)))
		ty = NULL;
	seq = seq && ty;
	const ox_id tq_in = tq ? tq->in[0] : -1, tk_in = tk ? tk->in[0] : -1, tv_in = tv ? tv->in[0] : -1;
	const ox_id ty_out = ty ? ty->out[0] : -1;
	const int64_t N3 = qv->shape.d[0], Sq3 = qv->shape.d[1], Dv3 = vv->shape.d[2];
	/* what is needed of the old nodes, before adding any (the array may move) */
	const char *qk_name = qk->name, *sm_name = sm->name, *pv_name = pv->name;
	ox_id pv_out = pv->out[0], merge_out = merge ? merge->out[0] : -1;
	ox_id Q, K, V, Y;
	char nm[512];
	snprintf(nm, sizeof nm, "%s/attention", qk_name);
	int heads3 = q3 >= 0 && k3 >= 0 && v3 >= 0 && merge && hq == hk && hq == hv;
	if (heads3) {
		Q = q3, K = k3, V = v3, Y = merge_out;
	} else if (seq) {
		/* [S, B, E] in place; Y [Sq, B, H*dv] -> [Sq, B*H, dv] (a view) */
		Q = sx[0], K = sx[1], V = sx[2];
		char rn[600];
		snprintf(rn, sizeof rn, "%s/y/seq", nm);
		Y = ox_ir_add_value(g, rn, OX_V_INTERNAL);
		g->vals[Y].dtype = dt, g->vals[Y].has_shape = 1;
		g->vals[Y].shape = (ox_shape){3, {Sq3, sb[0], ox_dim_mul(g, sh[0], Dv3)}};
		snprintf(rn, sizeof rn, "%s/y", nm);
		ox_id y2 = add_reshape(g, Y, &g->vals[ty_out].shape, rn);
		ox_ir_replace_uses(g, ty_out, y2);
		heads3 = 1, hq = sh[0];
	} else if (ty_out >= 0) {
		/* [S, N, d] -> [S, N*d] -> [1, S, N*d], and back: views */
		const ox_id pre[3] = {tq_in, tk_in, tv_in};
		ox_id *to[3] = {&Q, &K, &V};
		for (int i = 0; i < 3; i++) {
			char rn[600];
			snprintf(rn, sizeof rn, "%s/%c", nm, "qkv"[i]);
			const ox_shape *ps = &g->vals[pre[i]].shape;
			ox_shape s2 = {2, {ps->d[0], ox_dim_mul(g, ps->d[1], ps->d[2])}};
			ox_id x2 = add_reshape(g, pre[i], &s2, rn);
			strcat(rn, "/batch");
			*to[i] = add_axis(g, x2, 0, 0, rn);
		}
		char rn[600];
		snprintf(rn, sizeof rn, "%s/y/batch", nm);
		Y = ox_ir_add_value(g, rn, OX_V_INTERNAL);
		g->vals[Y].dtype = dt, g->vals[Y].has_shape = 1;
		g->vals[Y].shape = (ox_shape){3, {1, Sq3, ox_dim_mul(g, N3, Dv3)}};
		ox_id y1 = add_axis(g, Y, 0, 1, rn);
		snprintf(rn, sizeof rn, "%s/y", nm);
		ox_id y2 = add_reshape(g, y1, &(ox_shape){3, {Sq3, N3, Dv3}}, rn);
		ox_ir_replace_uses(g, ty_out, y2);
		heads3 = 1, hq = N3;
	} else if (r == 4) {
		static const int64_t swap[] = {0, 1, 3, 2};
		Q = qh, V = vh, Y = pv_out;
		K = add_transpose(g, kt, swap, 4, nm);
	} else {
		/* [B*H, S, d]: 3-D, one head per batch entry */
		static const int64_t swap[] = {0, 2, 1};
		Q = qh, V = vh, Y = pv_out;
		K = add_transpose(g, kt, swap, 3, nm);
	}
	if (wc >= 0) { /* the masked fill as an additive mask: Where(c, fill, 0) (+ the added one) */
		char mn[600];
		snprintf(mn, sizeof mn, "%s/fill", nm);
		ox_tensor *zt = ox_ir_new_tensor(g, dt, &(ox_shape){0});
		char zn[640];
		snprintf(zn, sizeof zn, "%s/zero", mn);
		ox_id zero = ox_ir_add_const(g, zn, zt);
		ox_id wn = ox_ir_add_node(g, OX_OP_Where, "Where", mn, 3, 1);
		ox_id m = ox_ir_add_value(g, mn, OX_V_INTERNAL);
		g->vals[m].dtype = dt, g->vals[m].has_shape = 1, g->vals[m].shape = g->vals[wc].shape;
		g->nodes[wn].in[0] = wc, g->nodes[wn].in[1] = wkeep ? zero : wfill, g->nodes[wn].in[2] = wkeep ? wfill : zero;
		g->nodes[wn].out[0] = m;
		ox_opt_fold_node(g, &g->nodes[wn]); /* (a constant condition: a constant mask) */
		if (mask >= 0) {
			snprintf(mn, sizeof mn, "%s/mask", nm);
			ox_id an = ox_ir_add_node(g, OX_OP_Add, "Add", mn, 2, 1);
			ox_id m2 = ox_ir_add_value(g, mn, OX_V_INTERNAL);
			g->vals[m2].dtype = dt, g->vals[m2].has_shape = 1, g->vals[m2].shape = msh;
			g->nodes[an].in[0] = m, g->nodes[an].in[1] = mask, g->nodes[an].out[0] = m2;
			ox_opt_fold_node(g, &g->nodes[an]);
			m = m2;
		}
		mask = m;
	}
	/* a key padding mask copied over the heads: not copied (but where the
	 * CPU reads a sequence-first Attention of a constant batch as B*H
	 * heads, opt/rows.c, which needs one mask per head) */
	ox_id um = -1;
	if (mask >= 0 && ((seq && (g->gpu || ox_dim_is_rt(g, sb[0]))) || (!seq && ty_out >= 0)))
		um = unexpand_heads(g, mask, seq ? sb[0] : 1, seq ? sh[0] : N3, nm);
	if (um >= 0) {
		mask = um;
	} else if (mask >= 0 && seq && g->vals[mask].shape.rank == 3 && g->vals[mask].shape.d[0] != 1) {
		/* [B*H, Sq, Skv] -> [B, H, Sq, Skv] */
		const ox_shape *ms = &g->vals[mask].shape;
		char mn[600];
		snprintf(mn, sizeof mn, "%s/mask", nm);
		mask = add_reshape(g, mask, &(ox_shape){4, {sb[0], sh[0], ms->d[1], ms->d[2]}}, mn);
	} else if (mask >= 0 && ty_out >= 0 && g->vals[mask].shape.rank == 3) {
		/* the batch as heads: [N, Sq, Skv] -> [1, N, Sq, Skv] */
		char mn[600];
		snprintf(mn, sizeof mn, "%s/mask", nm);
		mask = add_axis(g, mask, 0, 0, mn);
	} else if (mask >= 0 && r == 3 && g->vals[mask].shape.rank == 3) {
		/* [B*H, Sq, Skv] -> [B*H, 1, Sq, Skv] for Attention's 4-D mask
		 * (nn.MultiheadAttention's key padding mask [B*H, 1, Skv]) */
		const ox_value *m = &g->vals[mask];
		ox_shape s4 = {4, {m->shape.d[0], 1, m->shape.d[1], m->shape.d[2]}};
		char mn[600];
		snprintf(mn, sizeof mn, "%s/mask", nm);
		mask = ox_shape_is_rt(g, &m->shape) ? add_axis(g, mask, 1, 0, mn) : add_reshape(g, mask, &s4, mn);
	}
	ox_id aid = ox_ir_add_node(g, OX_OP_Attention, "Attention", nm, mask >= 0 ? 4 : 3, 1);
	ox_node *a = &g->nodes[aid];
	a->opset = 23;
	a->domain = "";
	a->in[0] = Q, a->in[1] = K, a->in[2] = V;
	if (mask >= 0)
		a->in[3] = mask;
	a->out[0] = Y;
	ox_attr *sa = ox_ir_add_attr(g, a, "scale", OX_AT_FLOAT);
	sa->f = (float)scale;
	if (heads3 || r == 3) {
		int64_t H = heads3 ? hq : 1;
		ox_ir_add_attr(g, a, "q_num_heads", OX_AT_INT)->i = H;
		ox_ir_add_attr(g, a, "kv_num_heads", OX_AT_INT)->i = H;
	}
	if (seq)
		ox_ir_add_attr(g, a, "ox_seq_first", OX_AT_INT)->i = 1;
	if (causal)
		ox_ir_add_attr(g, a, "is_causal", OX_AT_INT)->i = 1;
	/* the pattern's names, the QK^T MatMul first */
	ox_ir_add_fused(g, a, qk_name);
	for (int i = nn - 1; i >= 0; i--)
		ox_ir_add_fused(g, a, names[i]);
	ox_ir_add_fused(g, a, sm_name);
	ox_ir_add_fused(g, a, pv_name);
	/* the replaced nodes die: the one writing Y, then dce takes the rest */
	if (ty_out >= 0) { /* (the product P V and its Transpose: dce) */
		g->vals[Y].producer = aid;
		return 1;
	}
	ox_node *w = producer(g, Y);
	w->dead = 1;
	g->vals[Y].producer = aid;
	return 1;
}

/* An Attention node given with a constant causal mask (bools that keep the
 * keys up to the query, or 0 there and at most -2^100 after), no past K/V
 * and a square [.., S, S] mask with 1s before: is_causal, no mask (both
 * enter the same bias: -inf, or a fill whose exp is 0). Not when it
 * outputs its scores (qk_matmul_output), which would show -inf for the
 * fill. */
static int causal_mask_in(ox_graph *g, ox_node *n)
{
	ox_attn_geom a;
	for (int k = 4; k < n->nin; k++)
		if (n->in[k] >= 0)
			return 0;
	for (int k = 3; k < n->nout; k++) /* (the qk output shows the mask's own values) */
		if (n->out[k] >= 0)
			return 0;
	if (n->nin < 4 || n->in[3] < 0 || ox_attn_dims(g, n, &a) || a.past != 0 || a.sq != a.skv)
		return 0;
	const ox_id m = n->in[3];
	const ox_shape *ms = &g->vals[m].shape;
	if (!square(g, m) || ms->d[ms->rank - 1] != a.sq ||
	    !const_causal(g, m, g->vals[m].dtype != OX_BOOL, 0))
		return 0;
	n->in[3] = -1;
	ox_ir_del_attr(n, "is_causal");
	ox_ir_add_attr(g, n, "is_causal", OX_AT_INT)->i = 1;
	return 1;
}

int ox_opt_attention(ox_graph *g)
{
	if (!g->opt)
		return 0;
	int changed = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == OX_OP_Attention)
			changed |= causal_mask_in(g, &g->nodes[i]);
	if (changed)
		ox_opt_dce(g);
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].dead || g->nodes[i].op != OX_OP_Softmax)
			continue;
		if (match(g, i)) {
			changed = 1;
			ox_ir_compact(g);
			if (ox_ir_toposort(g))
				ox_die("attention: cycle");
			ox_opt_dce(g);
			ox_ir_fill_uses(g);
			i = -1;
		}
	}
	if (changed && ox_ir_toposort(g))
		ox_die("attention: cycle");
	return 0;
}
