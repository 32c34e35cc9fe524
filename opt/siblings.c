/* siblings.c: MatMuls that multiply one value by constant matrices (an
 * attention's Q, K and V projections) made one onnxcc::MatMulSplit: the
 * matrices side by side as one [K, N1+N2+...], its product's columns split
 * into the MatMuls' outputs. On the GPU that is one launch where there
 * were k, with k times the tiles to spread over the SMs (a batch-1
 * projection alone fills few of them), and A read once. Likewise a MatMul
 * whose columns only Slices or a Split of its last axis read, which
 * together cover them (nn.MultiheadAttention's in_proj sliced into Q, K
 * and V): a MatMulSplit that writes the pieces, with no copies.
 *
 * Siblings: plain MatMuls of the same A on the packed GEMM's kernel
 * (ox_opt_gemm_geo: constant B [K, Ni], N constant; A's rows may be
 * run-time dims), of one dtype and K. Their epilogues (opt/epilogue.c)
 * must be the same ops wired the same way; an operand of one is a
 * constant scalar or one value per column, which become one value per
 * column of the whole product (equal scalars stay one scalar), so the
 * merged body computes on [.., N] before the split. An epilogue operand
 * of the output's shape (a residual) keeps its MatMul out. At most
 * MAXSIB siblings a group, the first in the order leading: the merged
 * node takes its place, where A and the constants exist and before every
 * sibling's consumers.
 *
 * A gated MLP's gate and up projections (LLaMA's silu(x Wg) * (x Wu)):
 * the gate G's epilogue takes the up projection U's output as an operand
 * (opt/epilogue.c fused the Mul into G). When U is a plain MatMul of the
 * same A by a constant of G's B's shape, its output read by G alone, G
 * computes both (glu): its B the two matrices' columns interleaved (gate
 * column c at 2c, up column c at 2c + 1), that operand omitted (-1) and
 * the attribute ox_glu; the kernel has each column pair in one thread and
 * gives the epilogue the up column where the operand was, storing column
 * c. One launch where there were two, and U's output is not stored.
 *
 * The CUDA target's only (codegen/cuda/cuda_tile.c, emit_gemm): the CPU's
 * packed GEMM gains nothing from it; not in the bodies of control nodes,
 * which take no epilogue either.
 * Requires: epilogues fused (opt/epilogue.c). Invalidates: node positions
 * (compacted), uses (refilled).
 */
#include "opt.h"
#include "../ir/family.h"
#include <stdlib.h>
#include <string.h>

#define MAXSIB 8

/* a MatMul this pass takes: its B's columns, else 0 */
static int64_t sibling_cols(ox_graph *g, const ox_node *n)
{
	ox_gemmgeo q;
	if (n->dead || n->op != OX_OP_MatMul || n->nout != 1 || n->out[0] < 0 || ox_attr_get(n, "ox_glu") ||
	    ox_opt_gemm_geo(g, n, &q) || !q.constb || ox_dim_is_rt(g, q.dN))
		return 0;
	const ox_value *b = &g->vals[n->in[1]];
	if (b->kind != OX_V_CONST || b->layout || !b->data || b->shape.rank != 2)
		return 0;
	return b->shape.d[1];
}

/* the same ops on the same wires, value for value */
static int same_body(const ox_graph *a, const ox_graph *b)
{
	if (a->nnodes != b->nnodes || a->nvals != b->nvals || a->ninputs != b->ninputs || a->noutputs != 1 ||
	    b->noutputs != 1 || a->outputs[0] != b->outputs[0])
		return 0;
	for (int i = 0; i < a->nvals; i++)
		if (a->vals[i].dtype != b->vals[i].dtype || a->vals[i].kind != b->vals[i].kind)
			return 0;
	for (int i = 0; i < a->ninputs; i++)
		if (a->inputs[i] != b->inputs[i])
			return 0;
	for (int i = 0; i < a->nnodes; i++) {
		const ox_node *x = &a->nodes[i], *y = &b->nodes[i];
		if (x->op != y->op || x->nin != y->nin || x->nout != y->nout || x->nattr != y->nattr)
			return 0;
		for (int k = 0; k < x->nin; k++)
			if (x->in[k] != y->in[k])
				return 0;
		for (int k = 0; k < x->nout; k++)
			if (x->out[k] != y->out[k])
				return 0;
		for (int k = 0; k < x->nattr; k++)
			if (!ox_attr_same(&x->attrs[k], &y->attrs[k]))
				return 0;
	}
	return 1;
}

/* operand v of a sibling of `cols` columns: 1 a constant scalar, 2 a
 * constant with one value per column, 0 neither */
static int operand_kind(const ox_graph *g, ox_id v, int64_t cols)
{
	const ox_value *x = &g->vals[v];
	if (x->kind != OX_V_CONST || !x->data || x->layout)
		return 0;
	int64_t k = ox_shape_numel(&x->shape);
	if (k == 1)
		return 1;
	for (int i = 0; i + 1 < x->shape.rank; i++)
		if (x->shape.d[i] != 1)
			return 0;
	return k == cols && x->shape.rank >= 1 ? 2 : 0;
}

/* can sibling s join leader l: the same A, K and dtype, epilogues alike */
static int joins(ox_graph *g, const ox_node *l, const ox_node *s)
{
	const ox_value *bl = &g->vals[l->in[1]], *bs = &g->vals[s->in[1]];
	if (s->in[0] != l->in[0] || bs->shape.d[0] != bl->shape.d[0] || bs->dtype != bl->dtype)
		return 0;
	ox_graph *el = ox_ir_epilogue(l), *es = ox_ir_epilogue(s);
	if (!el != !es || s->nin != l->nin)
		return 0;
	if (!el)
		return 1;
	if (!same_body(el, es))
		return 0;
	for (int k = 2; k < s->nin; k++)
		if (!operand_kind(g, l->in[k], bl->shape.d[1]) || !operand_kind(g, s->in[k], bs->shape.d[1]))
			return 0;
	return 1;
}

/* does operand k hold one scalar in every sibling? */
static int shared_scalar(ox_graph *g, ox_node *const *sib, int ns, int k)
{
	const ox_tensor *t0 = g->vals[sib[0]->in[k]].data;
	for (int i = 0; i < ns; i++) {
		const ox_tensor *t = g->vals[sib[i]->in[k]].data;
		if (ox_tensor_numel(t) != 1 || t->dtype != t0->dtype || t->nbytes != t0->nbytes ||
		    memcmp(t->data, t0->data, t->nbytes))
			return 0;
	}
	return 1;
}

static void merge(ox_graph *g, ox_node *const *sib, int ns)
{
	ox_node *l = sib[0];
	const int dt = g->vals[l->in[1]].dtype;
	const size_t es = ox_dtype_size(dt);
	const int64_t K = g->vals[l->in[1]].shape.d[0];
	int64_t cols[MAXSIB], N = 0;
	for (int i = 0; i < ns; i++)
		N += cols[i] = g->vals[sib[i]->in[1]].shape.d[1];
	/* B: the matrices side by side, row by row */
	ox_tensor *B = ox_ir_new_tensor(g, dt, &(ox_shape){2, {K, N}});
	for (int64_t r = 0, at = 0; r < K; r++)
		for (int i = 0; i < ns; i++) {
			const ox_tensor *t = g->vals[sib[i]->in[1]].data;
			memcpy((char *)B->data + at * es, (const char *)t->data + r * cols[i] * es, (size_t)cols[i] * es);
			at += cols[i];
		}
	char name[600];
	snprintf(name, sizeof name, "%s/B", l->name[0] ? l->name : "MatMulSplit");
	ox_id bid = ox_ir_add_const(g, name, B);
	/* the epilogue's operands: per column of the whole product (a scalar
	 * spread over its sibling's columns), or one shared scalar */
	ox_graph *body = ox_ir_epilogue(l);
	ox_id *in = ox_ir_alloc(g, (size_t)(l->nin + 1) * sizeof *in);
	in[0] = l->in[0], in[1] = bid;
	for (int k = 2; k < l->nin; k++) {
		in[k] = l->in[k];
		if (shared_scalar(g, sib, ns, k))
			continue;
		int odt = g->vals[l->in[k]].dtype;
		size_t oes = ox_dtype_size(odt);
		ox_tensor *t = ox_ir_new_tensor(g, odt, &(ox_shape){1, {N}});
		for (int i = 0, at = 0; i < ns; i++) {
			const ox_tensor *s = g->vals[sib[i]->in[k]].data;
			for (int64_t c = 0; c < cols[i]; c++, at++)
				memcpy((char *)t->data + at * oes, (const char *)s->data + (ox_tensor_numel(s) == 1 ? 0 : c) * oes,
				       oes);
		}
		snprintf(name, sizeof name, "%s/%s", l->name[0] ? l->name : "MatMulSplit", g->vals[l->in[k]].name);
		in[k] = ox_ir_add_const(g, name, t);
		ox_value *bv = &body->vals[body->inputs[k - 1]];
		bv->shape = (ox_shape){1, {N}};
	}
	/* the body's other values: the whole product's shape */
	if (body) {
		ox_value *acc = &body->vals[body->inputs[0]];
		acc->shape.d[acc->shape.rank - 1] = N;
		for (int i = 0; i < body->nvals; i++)
			if (body->vals[i].kind == OX_V_INTERNAL && ox_shape_numel(&body->vals[i].shape) != 1)
				body->vals[i].shape = acc->shape;
	}
	ox_id *out = ox_ir_alloc(g, (size_t)(ns + 1) * sizeof *out);
	ox_attr *sp = ox_ir_add_attr(g, l, "split", OX_AT_INTS);
	sp->n = ns;
	sp->ints = ox_ir_alloc(g, (size_t)ns * sizeof *sp->ints);
	for (int i = 0; i < ns; i++) {
		out[i] = sib[i]->out[0];
		sp->ints[i] = cols[i];
		if (i) {
			ox_ir_add_fused_of(g, l, sib[i]);
			sib[i]->dead = 1;
		}
	}
	l->in = in;
	l->out = out;
	l->nout = ns;
	l->op = OX_OP_MatMulSplit;
	l->optype = "MatMulSplit";
	l->domain = "onnxcc";
}

/* A MatMul whose output only pieces read, pieces that partition its
 * columns (an in_proj's Q, K and V: Slices or a Split of the last axis),
 * writes the pieces itself: a MatMulSplit of the same B and epilogue.
 * 1 if it became one. */
static int pieces(ox_graph *g, ox_node *n)
{
	const ox_id y = n->out[0];
	const ox_value *yv = &g->vals[y];
	const int r = yv->shape.rank, nu = yv->nuses;
	const int64_t N = sibling_cols(g, n);
	if (!N || yv->is_output || nu < 1 || nu > MAXSIB)
		return 0;
	/* its readers, each reading it once, as data */
	int use[MAXSIB], found = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *c = &g->nodes[i];
		for (int j = 0; j < c->nin && !c->dead; j++)
			if (c->in[j] == y) {
				if (j || found == nu)
					return 0;
				use[found++] = i;
			}
	}
	if (found != nu)
		return 0;
	int64_t start[MAXSIB], len[MAXSIB];
	ox_id outv[MAXSIB];
	int k = 0;
	for (int u = 0; u < nu; u++) {
		ox_node *c = &g->nodes[use[u]];
		if (c->op == OX_OP_Split && nu == 1) {
			int axis;
			ox_dim sz[MAXSIB];
			if (c->nout > MAXSIB || c->nout < 2 || ox_ir_data_split(g, c, &axis, sz) || axis != r - 1)
				return 0;
			for (int i = 0, at = 0; i < c->nout; i++) {
				if (c->out[i] < 0 || sz[i] < 1)
					return 0;
				start[k] = at, len[k] = sz[i], outv[k++] = c->out[i];
				at += sz[i];
			}
			continue;
		}
		if (c->op != OX_OP_Slice || c->nout != 1 || c->out[0] < 0)
			return 0;
		ox_dim st[OX_MAX_RANK], ln[OX_MAX_RANK];
		int64_t step[OX_MAX_RANK];
		char rt[OX_MAX_RANK] = {0};
		if (ox_ir_data_slice(g, c, &yv->shape, st, step, ln, rt))
			return 0;
		for (int i = 0; i + 1 < r; i++)
			if (st[i] != 0 || step[i] != 1 || ln[i] != yv->shape.d[i])
				return 0;
		if (step[r - 1] != 1 || st[r - 1] < 0 || ln[r - 1] < 1)
			return 0;
		start[k] = st[r - 1], len[k] = ln[r - 1], outv[k++] = c->out[0];
	}
	if (k < 2)
		return 0;
	/* in column order, each piece starting where the last ended, to N */
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && start[j] < start[j - 1]; j--) {
			int64_t t0 = start[j], t1 = len[j];
			ox_id t2 = outv[j];
			start[j] = start[j - 1], len[j] = len[j - 1], outv[j] = outv[j - 1];
			start[j - 1] = t0, len[j - 1] = t1, outv[j - 1] = t2;
		}
	for (int i = 0, at = 0; i < k; i++) {
		if (start[i] != at)
			return 0;
		at += len[i];
		if (i == k - 1 && at != N)
			return 0;
	}
	ox_attr *sp = ox_ir_add_attr(g, n, "split", OX_AT_INTS);
	sp->n = k;
	sp->ints = ox_ir_alloc(g, (size_t)k * sizeof *sp->ints);
	ox_id *out = ox_ir_alloc(g, (size_t)(k + 1) * sizeof *out);
	for (int i = 0; i < k; i++)
		sp->ints[i] = len[i], out[i] = outv[i];
	for (int u = 0; u < nu; u++) {
		ox_node *c = &g->nodes[use[u]];
		ox_ir_add_fused_of(g, n, c);
		c->dead = 1;
	}
	n->out = out;
	n->nout = k;
	n->op = OX_OP_MatMulSplit;
	n->optype = "MatMulSplit";
	n->domain = "onnxcc";
	return 1;
}

/* the gate n of a gated MLP and its up projection: one MatMul (above);
 * 1 if n became it */
static int glu(ox_graph *g, ox_node *n)
{
	ox_graph *body = ox_ir_epilogue(n);
	if (!body || !sibling_cols(g, n))
		return 0;
	const int first = ox_ir_epilogue_first(n);
	for (int j = 1; j < body->ninputs; j++) {
		const ox_id v = n->in[first + j - 1];
		const ox_value *uv = &g->vals[v];
		if (uv->producer < 0 || uv->nuses != 1 || uv->is_output)
			continue;
		ox_node *u = &g->nodes[uv->producer];
		if (!sibling_cols(g, u) || ox_ir_epilogue(u) || u->nin != 2 || u->in[0] != n->in[0])
			continue;
		const ox_value *bg = &g->vals[n->in[1]], *bu = &g->vals[u->in[1]];
		if (bu->dtype != bg->dtype || bu->shape.d[0] != bg->shape.d[0] || bu->shape.d[1] != bg->shape.d[1])
			continue;
		const int64_t K = bg->shape.d[0], N = bg->shape.d[1];
		const size_t es = ox_dtype_size(bg->dtype);
		const ox_tensor *tg = bg->data, *tu = bu->data;
		ox_tensor *B = ox_ir_new_tensor(g, bg->dtype, &(ox_shape){2, {K, 2 * N}});
		for (int64_t r = 0; r < K; r++)
			for (int64_t c = 0; c < N; c++) {
				char *d = (char *)B->data + (r * 2 * N + 2 * c) * es;
				memcpy(d, (const char *)tg->data + (r * N + c) * es, es);
				memcpy(d + es, (const char *)tu->data + (r * N + c) * es, es);
			}
		char name[600];
		snprintf(name, sizeof name, "%s/B_glu", n->name[0] ? n->name : "MatMul");
		n->in[1] = ox_ir_add_const(g, name, B);
		n->in[first + j - 1] = -1;
		ox_ir_add_attr(g, n, "ox_glu", OX_AT_INT)->i = j;
		ox_ir_add_fused_of(g, n, u);
		u->dead = 1;
		return 1;
	}
	return 0;
}

int ox_opt_siblings(ox_graph *g)
{
	if (!g->opt || !g->gpu || g->parent)
		return 0;
	ox_ir_fill_uses(g);
	int nglu = 0;
	for (int i = 0; i < g->nnodes; i++)
		nglu += glu(g, &g->nodes[i]);
	if (nglu) {
		ox_ir_compact(g);
		ox_ir_fill_uses(g);
	}
	const int nn = g->nnodes;
	for (int i = 0; i < nn; i++) {
		if (!sibling_cols(g, &g->nodes[i]) || pieces(g, &g->nodes[i]))
			continue;
		int idx[MAXSIB], ns = 1;
		idx[0] = i;
		for (int j = i + 1; j < nn && ns < MAXSIB; j++)
			if (sibling_cols(g, &g->nodes[j]) && joins(g, &g->nodes[i], &g->nodes[j]))
				idx[ns++] = j;
		if (ns < 2)
			continue;
		/* (merge adds values, not nodes: the node pointers stay) */
		ox_node *sib[MAXSIB];
		for (int k = 0; k < ns; k++)
			sib[k] = &g->nodes[idx[k]];
		merge(g, sib, ns);
	}
	ox_ir_compact(g);
	return 0;
}
