/* rows.c: a permutation of rows undone where it is undone later.
 *
 * A Transpose whose perm keeps the last axis only reorders the rows (the
 * vectors along the last axis). Ops that compute each row from the same
 * row of their input commute with it: a MatMul by a matrix, a Gemm, the
 * elementwise ops whose other operands are the same for every row (a
 * bias), a Slice or Split of the last axis, LayerNormalization and
 * Softmax over it, a Reshape that only merges the leading dims into one
 * or splits them back. nn.MultiheadAttention(batch_first=True) exports
 * its [B, S, E] input transposed to [S, B, E], the projections, the
 * attention and the out_proj computed there, and the result transposed
 * back; with a run-time batch the transpose pass (constant shapes) leaves
 * both. A sequence-first Attention (ox_seq_first, opt/attention.c) is
 * such an op too: read batch first, it computes the same rows.
 *
 * A region starts at such Transposes (entries; also a Transpose whose
 * last axis another Transpose of the same input has, read as a Transpose
 * of that one's output: torch's exporter merges x.transpose(1, 2) with
 * the attention's transpose(0, 1)) and grows through every reader of its
 * values. It is rewritten only when every reader is one of those ops or
 * a Transpose that undoes the permutation (an exit), no value of it is a
 * graph output, and an Attention reads all of Q, K and V from it: then
 * the region computes in the entries' order, the entries and exits go
 * and no copy is added. Each value's leading dims are the entry's dims
 * permuted (or merged into one), so the new shapes are the same dims in
 * the entry's input order; a Reshape's target is made again, Attention
 * loses ox_seq_first, and every node of the region is inferred again and
 * must give the shape computed here.
 *
 * Before, a Reshape read only by a Reshape, with run-time dims, becomes
 * one Reshape (the transpose pass does this for constant shapes): the
 * attention pass leaves its result viewed as [S, B*H, d] before the
 * out_proj's [S*B, E]. After, on the CPU, whose kernels read batch
 * first, a sequence-first Attention left is lowered (lower_seq_first).
 * Does nothing with --opt 0.
 * Requires: plain layouts (before layout). Invalidates: uses (refilled),
 * node positions (compacted).
 */
#include "opt.h"
#include <stdlib.h>
#include <string.h>

/* A value of a region: its leading dims are k atoms (the entry's leading
 * dims) as the graph has them, old[i] = the entry input's dim perm[i], or
 * those merged into one dim (merged). comp: the region (an entry's index,
 * union-find), -1 outside any. */
typedef struct {
	int comp, merged, k;
	ox_dim old[OX_MAX_RANK];
	int perm[OX_MAX_RANK];
} rowv;

typedef struct {
	ox_id node, src;
	int perm[OX_MAX_RANK];
} entry;

typedef struct {
	ox_graph *g;
	rowv *rv;          /* per value (of the nv there were: a rewrite adds
			    * values, its Reshapes' shape constants) */
	int nv, nn;        /* values and nodes when the pass began */
	int *start, *rnode, *rin; /* readers of value v: rnode[start[v] .. start[v+1]) */
	entry *e;
	int ne;
	int *parent, *bad; /* per entry */
	char *exit;        /* per node: a Transpose that undoes its input's permutation */
} rows;

static int root(rows *r, int c)
{
	while (r->parent[c] != c)
		c = r->parent[c] = r->parent[r->parent[c]];
	return c;
}

static void join(rows *r, int a, int b)
{
	a = root(r, a), b = root(r, b);
	if (a != b)
		r->parent[b] = a, r->bad[a] |= r->bad[b];
}

static void fail(rows *r, int c)
{
	r->bad[root(r, c)] = 1;
}

static int perm_of(const ox_node *n, int rank, int *p)
{
	const int64_t *v;
	int m = ox_attr_ints(n, "perm", &v);
	if (m < 0) {
		for (int i = 0; i < rank; i++)
			p[i] = rank - 1 - i;
		return 0;
	}
	if (m != rank)
		return -1;
	for (int i = 0; i < rank; i++)
		p[i] = (int)v[i];
	return 0;
}

static int same_rows(const rowv *a, const rowv *b)
{
	if (a->merged != b->merged || a->k != b->k)
		return 0;
	for (int i = 0; i < a->k; i++)
		if (a->old[i] != b->old[i] || a->perm[i] != b->perm[i])
			return 0;
	return 1;
}

/* the shape of v once its region computes in the entries' order */
static ox_shape new_shape(const ox_graph *g, ox_id v, const rowv *w)
{
	ox_shape s = g->vals[v].shape;
	if (!w->merged)
		for (int i = 0; i < w->k; i++)
			s.d[w->perm[i]] = w->old[i];
	return s;
}

/* Is s the same for every row of a value of rank r: each dim but the last
 * 1 (right-aligned broadcasting)? */
static int per_row_const(const ox_shape *s, int r)
{
	if (s->rank > r)
		return 0;
	for (int i = 0; i + 1 < s->rank; i++)
		if (s->d[i] != 1)
			return 0;
	return 1;
}

/* the normalized axis attribute of n is the last of rank r */
static int last_axis(const ox_node *n, const char *name, int64_t dflt, int r)
{
	return ox_norm_axis(ox_attr_int(n, name, dflt), r) == r - 1;
}

static void enter(rows *r, ox_id v, const rowv *w, int *stack, int *top)
{
	if (r->rv[v].comp >= 0)
		return;
	r->rv[v] = *w;
	stack[(*top)++] = v;
}

/* Node n read region value v as input ki: the rows of its outputs, or -1
 * when n is not an op of the region. Inputs outside the region are checked
 * once the regions are whole (check). */
static int step(rows *r, ox_node *n, int ki, ox_id v, int *stack, int *top)
{
	ox_graph *g = r->g;
	const rowv *w = &r->rv[v];
	const ox_shape *xs = &g->vals[v].shape;
	const int rank = xs->rank;
	const ox_value *y = n->nout > 0 && n->out[0] >= 0 ? &g->vals[n->out[0]] : NULL;
	if (!y || !y->has_shape || y->layout != OX_L_PLAIN)
		return -1;
	if (n->op == OX_OP_Transpose) {
		int q[OX_MAX_RANK];
		if (w->merged || perm_of(n, rank, q) || q[rank - 1] != rank - 1)
			return -1;
		for (int i = 0; i < w->k; i++)
			if (w->perm[q[i]] != i)
				return -1;
		r->exit[n - g->nodes] = 1;
		return 0;
	}
	rowv o = *w;
	switch (n->op) {
	case OX_OP_MatMul:
		if (ki != 0 || y->shape.rank != rank || !ox_in(g, n, 1) || ox_in(g, n, 1)->shape.rank != 2)
			return -1;
		break;
	case OX_OP_Gemm:
		if (ki != 0 || rank != 2 || ox_attr_int(n, "transA", 0))
			return -1;
		break;
	case OX_OP_Slice: {
		int64_t ax[OX_MAX_RANK];
		int m = n->opset >= 10 ? ox_in_ints(g, n, 3, ax, OX_MAX_RANK) : -1;
		if (ki != 0 || m <= 0)
			return -1;
		for (int i = 0; i < m; i++)
			if (ox_norm_axis(ax[i], rank) != rank - 1)
				return -1;
		break;
	}
	case OX_OP_Split:
		if (ki != 0 || !last_axis(n, "axis", 0, rank))
			return -1;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				enter(r, n->out[k], &o, stack, top);
		return 0;
	case OX_OP_LayerNormalization:
		if (ki != 0 || !last_axis(n, "axis", -1, rank) || ox_out(g, n, 1) || ox_out(g, n, 2))
			return -1;
		break;
	case OX_OP_Softmax:
	case OX_OP_LogSoftmax:
		if (!last_axis(n, "axis", n->opset >= 13 ? -1 : 1, rank))
			return -1;
		break;
	case OX_OP_Reshape: {
		const ox_shape *s = &y->shape;
		if (ki != 0 || s->d[s->rank - 1] != xs->d[rank - 1])
			return -1;
		if (s->rank == 2) {
			o.merged = 1;
			break;
		}
		if (s->rank != w->k + 1)
			return -1;
		for (int i = 0; i < w->k; i++)
			if (s->d[i] != w->old[i])
				return -1;
		o.merged = 0;
		break;
	}
	case OX_OP_Attention:
		/* sequence first [S, B, E] rows, read batch first: the rows of
		 * Q, K and V each swapped (their own S); Y has Q's */
		if (!ox_attr_int(n, "ox_seq_first", 0) || ki > 2 || w->merged || w->k != 2 || w->perm[0] != 1)
			return -1;
		if (ki != 0)
			return 0;
		break;
	default:
		if (!(ox_ops[n->op].flags & OX_F_EW) || n->nout != 1 || y->shape.rank != rank ||
		    memcmp(y->shape.d, xs->d, (size_t)rank * sizeof *xs->d))
			return -1;
	}
	if (n->nout != 1)
		return -1;
	enter(r, n->out[0], &o, stack, top);
	return 0;
}

/* Are n's inputs outside the region what its op may read (checked when the
 * regions are whole), and its region inputs the same rows? */
static int check(rows *r, const ox_node *n)
{
	ox_graph *g = r->g;
	const rowv *w = NULL;
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && r->rv[n->in[k]].comp >= 0)
			w = w ? w : &r->rv[n->in[k]];
	if (r->exit[n - g->nodes])
		return 1; /* (a graph output: the region value becomes it) */
	if (n->nout < 1 || n->out[0] < 0)
		return 0;
	const int rank = g->vals[n->out[0]].shape.rank;
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0)
			continue;
		const ox_value *x = &g->vals[n->in[k]];
		const rowv *xv = &r->rv[n->in[k]];
		const int in_region = xv->comp >= 0;
		int want; /* 1: from the region, 0: not, 2: either, per row the same */
		switch (n->op) {
		case OX_OP_Attention:
			want = k < 3;
			break;
		case OX_OP_Gemm: /* A the region's, B not, C the region's rows or per row the same */
			want = k == 0 ? 1 : k == 1 ? 0 : 2;
			if (k == 2 && (in_region ? !same_rows(xv, w) : !per_row_const(&x->shape, rank)))
				return 0;
			break;
		case OX_OP_MatMul:
		case OX_OP_Slice:
		case OX_OP_Split:
		case OX_OP_LayerNormalization:
		case OX_OP_Softmax:
		case OX_OP_LogSoftmax:
		case OX_OP_Reshape:
			want = k == 0;
			break;
		default: /* elementwise: the region's rows, or the same for every row */
			want = 2;
			if (!in_region && !per_row_const(&x->shape, rank))
				return 0;
			if (in_region && (x->shape.rank != rank || !same_rows(xv, w)))
				return 0;
		}
		if (want != 2 && want != in_region)
			return 0;
		if (n->op == OX_OP_Attention && in_region && (xv->merged || xv->k != 2 || xv->perm[0] != 1))
			return 0;
		if (want == 1 && n->op != OX_OP_Attention && !same_rows(xv, w))
			return 0;
	}
	return 1;
}

/* Reshape -> Reshape with run-time dims, the first read by the second
 * alone: one Reshape */
static void merge_reshapes(ox_graph *g)
{
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (n->dead || n->op != OX_OP_Reshape || n->in[0] < 0)
			continue;
		const ox_id mid = n->in[0];
		const ox_id p = g->vals[mid].producer;
		ox_node *m = p >= 0 ? &g->nodes[p] : NULL;
		if (!m || m->dead || m->op != OX_OP_Reshape || ox_ir_sole_reader(g, mid) != n)
			continue;
		const ox_id x = m->in[0];
		if (ox_shape_is_const(&g->vals[x].shape) && ox_shape_is_const(&g->vals[mid].shape) &&
		    ox_shape_is_const(&g->vals[n->out[0]].shape))
			continue;
		n->in[0] = x;
		ox_ir_set_reshape_target(g, n);
		m->dead = 1;
		g->vals[mid].nuses = 0;
	}
}

/* the entries: Transposes that keep the last axis (or read as one) */
static void find_entries(rows *r)
{
	ox_graph *g = r->g;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		if (n->dead || n->op != OX_OP_Transpose || n->in[0] < 0 || n->out[0] < 0)
			continue;
		const ox_id x = n->in[0];
		const int rank = g->vals[x].shape.rank;
		int p[OX_MAX_RANK], q[OX_MAX_RANK], inv[OX_MAX_RANK];
		if (rank < 3 || perm_of(n, rank, p))
			continue;
		ox_id src = x;
		if (p[rank - 1] != rank - 1) {
			/* another Transpose of x with this last axis: read from it */
			src = -1;
			for (int j = r->start[x]; j < r->start[x + 1] && src < 0; j++) {
				const ox_node *t = &g->nodes[r->rnode[j]];
				if (t != n && t->op == OX_OP_Transpose && t->out[0] >= 0 && !perm_of(t, rank, q) &&
				    q[rank - 1] == p[rank - 1])
					src = t->out[0];
			}
			if (src < 0)
				continue;
			for (int a = 0; a < rank; a++)
				inv[q[a]] = a;
			for (int a = 0; a < rank; a++)
				p[a] = inv[p[a]];
		}
		int moves = 0;
		for (int a = 0; a < rank; a++)
			moves |= p[a] != a;
		if (!moves)
			continue;
		entry *e = &r->e[r->ne++];
		e->node = i, e->src = src;
		memcpy(e->perm, p, sizeof p);
	}
}

/* is v a value of region c? */
static int in_comp(rows *r, ox_id v, int c)
{
	return v >= 0 && v < r->nv && r->rv[v].comp >= 0 && root(r, r->rv[v].comp) == c;
}

static void rewrite(rows *r, int c)
{
	ox_graph *g = r->g;
	for (int v = 0; v < r->nv; v++)
		if (in_comp(r, v, c))
			g->vals[v].shape = new_shape(g, v, &r->rv[v]);
	for (int i = 0; i < r->ne; i++)
		if (root(r, i) == c) {
			ox_node *t = &g->nodes[r->e[i].node];
			ox_ir_replace_uses(g, t->out[0], r->e[i].src);
			t->dead = 1;
		}
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (n->dead || n->nin < 1 || !in_comp(r, n->in[0], c))
			continue;
		if (i < r->nn && r->exit[i]) {
			ox_ir_replace_uses(g, n->out[0], n->in[0]);
			n->dead = 1;
		}
	}
	/* each node of the region inferred again, in order: the shapes above */
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (n->dead || n->nout < 1 || !in_comp(r, n->out[0], c))
			continue;
		if (n->op == OX_OP_Reshape)
			ox_ir_set_reshape_target(g, n);
		if (n->op == OX_OP_Attention)
			ox_ir_del_attr(n, "ox_seq_first");
		ox_shape want[8];
		for (int k = 0; k < n->nout && k < 8; k++)
			if (n->out[k] >= 0)
				want[k] = g->vals[n->out[k]].shape;
		if (ox_infer_node(g, n))
			ox_die("rows: node '%s' (%s) no longer infers", n->name, n->optype);
		for (int k = 0; k < n->nout && k < 8; k++)
			if (n->out[k] >= 0 && memcmp(&want[k], &g->vals[n->out[k]].shape, sizeof want[k]))
				ox_die("rows: node '%s' (%s) infers another shape", n->name, n->optype);
	}
}

/* n's attribute `name` (an int) set to v */
static void set_int(ox_node *n, const char *name, int64_t v)
{
	((ox_attr *)ox_attr_get(n, name))->i = v;
}

/* The CPU's kernels read an Attention batch first. One left sequence first
 * (its Transposes stayed: a sequence-first model, or a region that could
 * not go) reads its [S, B, E] inputs as B*H heads of [1, S, B*E] (views)
 * when B is a constant and the mask is one per head ([B, H, ..]) or for
 * all heads, else through Transposes to [B, S, E] and back; the new nodes
 * are placed around it. */
static void lower_seq_first(ox_graph *g)
{
	static const int64_t p102[] = {1, 0, 2};
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *a = &g->nodes[i];
		if (a->dead || a->op != OX_OP_Attention || !ox_attr_int(a, "ox_seq_first", 0))
			continue;
		const int n0 = g->nnodes;
		ox_id *in = a->in; /* (arena memory: stays where it is when nodes are added) */
		const ox_id y = a->out[0], m = a->nin > 3 ? a->in[3] : -1;
		const ox_shape ys = g->vals[y].shape;
		const ox_dim B = ys.d[1];
		const int64_t H = ox_attr_int(a, "q_num_heads", 0), b = ox_dim_eval(g, B);
		/* the mask: per head [B, H, ..] (made [1, B*H, ..]), or the same for
		 * all heads (its dims before the last two 1) */
		const ox_shape ms = m >= 0 ? g->vals[m].shape : (ox_shape){0, {0}};
		const int per_head = ms.rank == 4 && ms.d[0] == B && ms.d[1] == H;
		int all_heads = 1;
		for (int k = 0; k + 2 < ms.rank; k++)
			all_heads &= ms.d[k] == 1;
		const int views = b > 0 && H == ox_attr_int(a, "kv_num_heads", 0) && (per_head || all_heads);
		char nm[600];
		snprintf(nm, sizeof nm, "%s/%s", a->name[0] ? a->name : "Attention", views ? "heads" : "batch_first");
		ox_id y1 = ox_ir_add_value(g, nm, OX_V_INTERNAL);
		g->vals[y1].dtype = g->vals[y].dtype, g->vals[y1].has_shape = 1;
		for (int k = 0; k < 3; k++) {
			char kn[640];
			snprintf(kn, sizeof kn, "%s/%c", nm, "qkv"[k]);
			const ox_shape xs = g->vals[in[k]].shape;
			const ox_shape s = {3, {1, xs.d[0], ox_dim_mul(g, B, xs.d[2])}};
			in[k] = g->nodes[views ? ox_ir_add_reshape(g, in[k], -1, &s, kn)
					       : ox_ir_add_transpose(g, in[k], -1, p102, 3, kn)].out[0];
		}
		if (views) {
			if (per_head) {
				char kn[640];
				snprintf(kn, sizeof kn, "%s/mask", nm);
				const ox_shape s = {4, {1, b * H, ms.d[2], ms.d[3]}};
				const ox_id rn = ox_ir_add_reshape(g, in[3], -1, &s, kn); /* (g->nodes may move) */
				in[3] = g->nodes[rn].out[0];
			}
			g->vals[y1].shape = (ox_shape){3, {1, ys.d[0], ox_dim_mul(g, B, ys.d[2])}};
		} else {
			g->vals[y1].shape = (ox_shape){3, {B, ys.d[0], ys.d[2]}};
		}
		a = &g->nodes[i];
		a->out[0] = y1;
		g->vals[y1].producer = i;
		if (views)
			set_int(a, "q_num_heads", b * H), set_int(a, "kv_num_heads", b * H);
		ox_ir_del_attr(a, "ox_seq_first");
		const ox_shape want = g->vals[y1].shape;
		if (ox_infer_node(g, a) || memcmp(&want, &g->vals[y1].shape, sizeof want))
			ox_die("rows: the lowered Attention '%s' infers another shape", a->name);
		if (views)
			ox_ir_add_reshape(g, y1, y, &ys, nm);
		else
			ox_ir_add_transpose(g, y1, y, p102, 3, nm);
		/* its inputs' new nodes before it, Y's after it */
		int at = i;
		for (int j = n0; j < g->nnodes - 1; j++)
			ox_ir_move_node(g, j, at++);
		ox_ir_move_node(g, g->nnodes - 1, at + 1);
		i = at + 1;
	}
	ox_ir_fill_uses(g);
}

int ox_opt_rows(ox_graph *g)
{
	if (!g->opt)
		return 0;
	merge_reshapes(g);
	ox_ir_fill_uses(g);
	rows r = {.g = g};
	r.nv = g->nvals;
	r.rv = malloc((size_t)g->nvals * sizeof *r.rv);
	r.start = calloc((size_t)g->nvals + 1, sizeof *r.start);
	r.nn = g->nnodes;
	r.exit = calloc((size_t)g->nnodes + 1, 1);
	int nref = 0;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nin && !g->nodes[i].dead; k++)
			if (g->nodes[i].in[k] >= 0)
				r.start[g->nodes[i].in[k] + 1]++, nref++;
	for (int v = 0; v < g->nvals; v++) {
		r.start[v + 1] += r.start[v];
		r.rv[v].comp = -1;
	}
	r.rnode = malloc(((size_t)nref + 1) * sizeof *r.rnode);
	r.rin = malloc(((size_t)nref + 1) * sizeof *r.rin);
	int *fillp = malloc(((size_t)g->nvals + 1) * sizeof *fillp);
	memcpy(fillp, r.start, (size_t)g->nvals * sizeof *fillp);
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nin && !g->nodes[i].dead; k++)
			if (g->nodes[i].in[k] >= 0) {
				int j = fillp[g->nodes[i].in[k]]++;
				r.rnode[j] = i, r.rin[j] = k;
			}
	free(fillp);
	r.e = malloc(((size_t)g->nnodes + 1) * sizeof *r.e);
	find_entries(&r);
	r.parent = malloc(((size_t)r.ne + 1) * sizeof *r.parent);
	r.bad = calloc((size_t)r.ne + 1, sizeof *r.bad);
	int *stack = malloc(((size_t)g->nvals + 1) * sizeof *stack), top = 0;
	for (int i = 0; i < r.ne; i++) {
		r.parent[i] = i;
		const ox_node *t = &g->nodes[r.e[i].node];
		const ox_shape *s = &g->vals[t->out[0]].shape;
		rowv w = {.comp = i, .merged = 0, .k = s->rank - 1};
		for (int a = 0; a + 1 < s->rank; a++)
			w.old[a] = s->d[a], w.perm[a] = r.e[i].perm[a];
		enter(&r, t->out[0], &w, stack, &top);
	}
	/* the regions grow through every reader */
	while (top > 0) {
		const ox_id v = stack[--top];
		const int c = r.rv[v].comp;
		if (g->vals[v].is_output)
			fail(&r, c);
		for (int j = r.start[v]; j < r.start[v + 1]; j++) {
			ox_node *n = &g->nodes[r.rnode[j]];
			if (step(&r, n, r.rin[j], v, stack, &top))
				fail(&r, c);
			for (int k = 0; k < n->nout && !r.exit[r.rnode[j]]; k++)
				if (n->out[k] >= 0 && r.rv[n->out[k]].comp >= 0)
					join(&r, c, r.rv[n->out[k]].comp);
		}
	}
	/* a region's nodes read what they may; an entry reads outside its region */
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		int c = -1;
		for (int k = 0; k < n->nin && !n->dead; k++)
			if (n->in[k] >= 0 && r.rv[n->in[k]].comp >= 0) {
				if (c >= 0)
					join(&r, c, r.rv[n->in[k]].comp);
				c = r.rv[n->in[k]].comp;
			}
		if (c >= 0 && !check(&r, n))
			fail(&r, c);
	}
	/* an entry that reads a value of a region rewritten too (a Transpose
	 * of another region's value) would read it in the wrong order: the
	 * later one stays. A region only ever turns bad, so one walk in
	 * node order leaves none */
	for (int i = 0; i < r.ne; i++) {
		const int a = r.rv[g->nodes[r.e[i].node].in[0]].comp, b = r.rv[r.e[i].src].comp;
		if ((a >= 0 && !r.bad[root(&r, a)]) || (b >= 0 && !r.bad[root(&r, b)]))
			fail(&r, i);
	}
	for (int i = 0; i < r.ne; i++)
		if (root(&r, i) == i && !r.bad[i])
			rewrite(&r, i);
	free(stack);
	free(r.bad);
	free(r.parent);
	free(r.e);
	free(r.rnode);
	free(r.rin);
	free(r.exit);
	free(r.start);
	free(r.rv);
	ox_ir_compact(g);
	ox_ir_fill_uses(g);
	if (!g->gpu)
		lower_seq_first(g);
	return 0;
}
