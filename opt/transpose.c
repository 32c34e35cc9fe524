/* transpose.c: chains of Transposes and reshape-like ops made one copy at most.
 *
 * A chain is a run of Transpose, Reshape, Flatten, Squeeze, Unsqueeze and
 * Identity nodes, each reading the one before, whose inner values are read
 * by the chain alone (no other reader, not a graph output). Its effect is
 * an index mapping, tracked as a strided view of the chain's input x: a
 * list of atoms (size, stride in x) in the output's row-major order, which
 * a Transpose permutes and a reshape splits or merges (a split that crosses
 * atoms that are not contiguous in x ends the chain: the result would not
 * be a strided view). Normalized (neighbours contiguous in x merged; size-1
 * dims have no atom), equal lists are equal mappings, and one atom or none
 * is the identity. Rewrites, all exact (elements are only moved):
 *   one atom or none: the identity, so the chain goes (its readers read x;
 *   a graph output keeps its value: x's producer writes it, or, when x is a
 *   graph input, constant or output, one Reshape, a view);
 *   else at most Reshape (a view) -> one Transpose -> Reshape (a view), the
 *   cheapest of: the Transpose on x's dims, the Transpose to y's dims, and
 *   the Transpose on the merged atoms (fewest dims), each checked by
 *   recomputing its atoms. Cost, compared in order: copies (non-view
 *   nodes, opt/plan.c's ox_plan_view), nodes, Transposes, their total
 *   rank; a chain is rewritten only when that goes down, so Transpose ->
 *   Transpose becomes one Transpose, Reshape -> Reshape one Reshape, a
 *   Transpose that moves only size-1 dims a Reshape, and an einops
 *   rearrange (Reshape -> Transpose -> Reshape) keeps its form with the
 *   fewest Transpose dims.
 * The Transpose is named after the chain's first Transpose and lists the
 * chain's nodes in ox_fused; the views are named after the chain's first
 * and last nodes. New nodes take the place of the chain's last node. Does
 * nothing with --opt 0.
 * Requires: constant shapes (after static), plain layouts.
 * Invalidates: uses (refilled), node positions (compacted).
 */
#include "opt.h"
#include "../ir/family.h"
#include <stdlib.h>
#include <string.h>

/* atoms have size >= 2 and tile x, so there are at most log2(numel) < 64 */
#define MAXA 64

typedef struct {
	int64_t size, stride;
} atom;

/* A value as a strided view of x: dim i is atoms first[i] .. first[i+1]-1. */
typedef struct {
	int na, rank;
	atom a[MAXA];
	int first[OX_MAX_RANK + 1];
} view;

static void view_init(view *v, const ox_shape *s)
{
	int64_t stride = 1;
	int k = 0;
	for (int i = 0; i < s->rank; i++)
		k += s->d[i] > 1;
	v->na = k, v->rank = s->rank, v->first[s->rank] = k;
	for (int i = s->rank - 1; i >= 0; i--) {
		if (s->d[i] > 1)
			v->a[--k] = (atom){s->d[i], stride};
		v->first[i] = k;
		stride *= s->d[i];
	}
}

static void view_transpose(view *v, const int *perm)
{
	view o;
	o.na = 0;
	o.rank = v->rank;
	for (int i = 0; i < v->rank; i++) {
		o.first[i] = o.na;
		for (int k = v->first[perm[i]]; k < v->first[perm[i] + 1]; k++)
			o.a[o.na++] = v->a[k];
	}
	o.first[v->rank] = o.na;
	*v = o;
}

/* merge neighbours contiguous in x (outer stride = inner stride * size) */
static int merge_atoms(const atom *a, int n, atom *out)
{
	int m = 0;
	for (int k = 0; k < n; k++) {
		if (m && out[m - 1].stride == a[k].stride * a[k].size) {
			out[m - 1].size *= a[k].size;
			out[m - 1].stride = a[k].stride;
		} else {
			out[m++] = a[k];
		}
	}
	return m;
}

/* The same elements read as shape s; -1 when a new dim would need part of
 * an atom and part of one not contiguous with it. */
static int view_reshape(view *v, const ox_shape *s)
{
	atom b[MAXA];
	int nb = merge_atoms(v->a, v->na, b), j = 0;
	view o;
	o.na = 0;
	o.rank = s->rank;
	for (int i = 0; i < s->rank; i++) {
		o.first[i] = o.na;
		int64_t need = s->d[i];
		while (need > 1) {
			if (j >= nb || o.na >= MAXA)
				return -1;
			int64_t z = b[j].size;
			if (z <= need) {
				if (need % z)
					return -1;
				o.a[o.na++] = b[j++];
				need /= z;
			} else {
				if (z % need)
					return -1;
				/* the outer part of the atom is this dim, the rest goes on */
				o.a[o.na++] = (atom){need, b[j].stride * (z / need)};
				b[j].size = z / need;
				need = 1;
			}
		}
	}
	if (j != nb)
		return -1;
	o.first[s->rank] = o.na;
	*v = o;
	return 0;
}

static int same_shape(const ox_shape *a, const ox_shape *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->d[i] != b->d[i])
			return 0;
	return 1;
}

static int is_reshape_like(int op)
{
	return op == OX_OP_Reshape || op == OX_OP_Flatten || op == OX_OP_Squeeze || op == OX_OP_Unsqueeze ||
	       op == OX_OP_Identity;
}

/* A node the chains may hold: its output is input 0's elements moved. */
static int chain_op(ox_graph *g, const ox_node *n)
{
	if (n->dead || (n->op != OX_OP_Transpose && !is_reshape_like(n->op)) || ox_node_rt(g, n))
		return 0;
	if (n->nin < 1 || n->in[0] < 0 || n->nout != 1 || n->out[0] < 0)
		return 0;
	const ox_value *x = &g->vals[n->in[0]], *y = &g->vals[n->out[0]];
	if (!x->has_shape || !y->has_shape || !ox_shape_is_const(&x->shape) || !ox_shape_is_const(&y->shape))
		return 0;
	if (x->dtype != y->dtype || x->dtype == OX_STRING || !ox_dtype_size(x->dtype))
		return 0;
	if (x->layout != OX_L_PLAIN || y->layout != OX_L_PLAIN || x->dyn || y->dyn || x->kind == OX_V_AGG)
		return 0;
	int64_t nx = ox_shape_numel(&x->shape);
	return nx > 0 && nx == ox_shape_numel(&y->shape);
}

/* apply chain node n to view v; -1 when the result is no strided view */
static int view_apply(ox_graph *g, const ox_node *n, view *v)
{
	const ox_shape *ys = &g->vals[n->out[0]].shape;
	if (n->op != OX_OP_Transpose)
		return view_reshape(v, ys);
	int perm[OX_MAX_RANK];
	if (ox_ir_data_perm(g, n, g->vals[n->in[0]].shape.rank, perm))
		return -1;
	view_transpose(v, perm);
	return 0;
}

static int normalized(const view *v, atom *out)
{
	return merge_atoms(v->a, v->na, out);
}

/* ---- candidates: Reshape x -> s, Transpose perm, Reshape -> y ---- */

typedef struct {
	ox_shape s;                 /* the Transpose's input */
	int perm[OX_MAX_RANK];
	int copies, nodes, ntr, rank;
} cand;

static void transposed(const ox_shape *s, const int *perm, ox_shape *t)
{
	t->rank = s->rank;
	for (int i = 0; i < s->rank; i++)
		t->d[i] = s->d[perm[i]];
}

/* Fill c's cost when it computes the mapping A (na atoms), else 0. */
static int cand_check(cand *c, const ox_shape *xs, const ox_shape *ys, const atom *A, int na)
{
	view v;
	atom B[MAXA];
	ox_shape t;
	if (c->s.rank > OX_MAX_RANK || ox_shape_numel(&c->s) != ox_shape_numel(xs))
		return 0;
	view_init(&v, xs);
	if (view_reshape(&v, &c->s))
		return 0;
	view_transpose(&v, c->perm);
	transposed(&c->s, c->perm, &t);
	if (view_reshape(&v, ys))
		return 0;
	if (normalized(&v, B) != na)
		return 0;
	for (int k = 0; k < na; k++)
		if (A[k].size != B[k].size || A[k].stride != B[k].stride)
			return 0;
	c->copies = 1; /* two atoms or more: the Transpose moves data */
	c->ntr = 1;
	c->rank = c->s.rank;
	c->nodes = !same_shape(&c->s, xs) + 1 + !same_shape(&t, ys);
	return 1;
}

static int cost_less(const int *a, const int *b)
{
	for (int i = 0; i < 4; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return 0;
}

/* Order dims by key (outer first), a size-1 dim right after the dim
 * before it: ord[] receives dim indices (a size-1 dim's own keys are ignored). */
static void order_dims(const ox_shape *s, const int64_t *major, const int64_t *minor, int *ord)
{
	int64_t kmaj[OX_MAX_RANK], kmin[OX_MAX_RANK];
	int64_t pm = INT64_MIN, pn = INT64_MAX; /* leading size-1 dims go first */
	for (int i = 0; i < s->rank; i++) {
		if (s->d[i] > 1)
			pm = major[i], pn = minor[i];
		kmaj[i] = pm, kmin[i] = pn;
		ord[i] = i;
	}
	/* insertion sort: major ascending, minor descending, then index */
	for (int i = 1; i < s->rank; i++) {
		int d = ord[i], j = i;
		while (j > 0) {
			int e = ord[j - 1];
			int after = kmaj[e] > kmaj[d] || (kmaj[e] == kmaj[d] && kmin[e] < kmin[d]);
			if (!after)
				break;
			ord[j] = e;
			j--;
		}
		ord[j] = d;
	}
}

/* The Transpose on x's own dims, then a Reshape to y: x's dims in the
 * order of the atoms that hold them. */
static int cand_xdims(cand *c, const ox_shape *xs, const atom *A, int na)
{
	int64_t major[OX_MAX_RANK], minor[OX_MAX_RANK], stride = 1;
	for (int i = xs->rank - 1; i >= 0; i--) {
		major[i] = -1;
		minor[i] = stride;
		for (int k = 0; k < na; k++)
			if (A[k].stride <= stride && stride < A[k].stride * A[k].size)
				major[i] = k;
		stride *= xs->d[i];
		if (xs->d[i] > 1 && major[i] < 0)
			return 0;
	}
	c->s = *xs;
	order_dims(xs, major, minor, c->perm);
	return 1;
}

/* A Reshape of x, then the Transpose to y's own dims: y's dims sorted by
 * their stride in x (each must be one run of x). */
static int cand_ydims(cand *c, const ox_shape *ys, const view *yv)
{
	int64_t major[OX_MAX_RANK], minor[OX_MAX_RANK];
	int ord[OX_MAX_RANK];
	for (int i = 0; i < ys->rank; i++) {
		atom m[MAXA];
		int n = merge_atoms(yv->a + yv->first[i], yv->first[i + 1] - yv->first[i], m);
		if (n > 1)
			return 0;
		major[i] = n ? -m[0].stride : 0;
		minor[i] = 0;
	}
	order_dims(ys, major, minor, ord);
	c->s.rank = ys->rank;
	for (int i = 0; i < ys->rank; i++) {
		c->s.d[i] = ys->d[ord[i]];
		c->perm[ord[i]] = i;
	}
	return 1;
}

/* The Transpose on the normalized atoms: fewest dims. */
static int cand_atoms(cand *c, const atom *A, int na)
{
	if (na > OX_MAX_RANK)
		return 0;
	int ord[OX_MAX_RANK];
	for (int i = 0; i < na; i++)
		ord[i] = i;
	for (int i = 1; i < na; i++)
		for (int j = i; j > 0 && A[ord[j - 1]].stride < A[ord[j]].stride; j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
	c->s.rank = na;
	for (int i = 0; i < na; i++) {
		c->s.d[i] = A[ord[i]].size;
		c->perm[ord[i]] = i;
	}
	return 1;
}

/* ---- rewriting ---- */

typedef struct {
	int n0;          /* nodes before the pass: new ones are appended after */
	int *anchor;     /* per new node: the chain's last node, whose place it takes */
	int nmade, cap;
	int chains, before, after, copies_before, copies_after;
} state;

/* a node was appended: it takes the place of the chain's node anchor */
static void note_made(state *st, int anchor)
{
	if (st->nmade == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 16;
		st->anchor = realloc(st->anchor, (size_t)st->cap * sizeof *st->anchor);
		if (!st->anchor)
			ox_die("out of memory");
	}
	st->anchor[st->nmade++] = anchor;
}

static ox_id new_node(ox_graph *g, state *st, int anchor, int op, const char *optype, const char *name, int nin)
{
	ox_id id = ox_ir_add_node(g, op, optype, name, nin, 1);
	note_made(st, anchor);
	return id;
}

static ox_id new_value(ox_graph *g, const char *name, int dtype, const ox_shape *s)
{
	ox_id v = ox_ir_add_value(g, name, OX_V_INTERNAL);
	g->vals[v].dtype = dtype;
	g->vals[v].has_shape = 1;
	g->vals[v].shape = *s;
	return v;
}

/* Reshape x -> y (y an existing value of shape s, or -1: a new one); the node's id */
static ox_id add_reshape(ox_graph *g, state *st, int anchor, ox_id x, ox_id y, const ox_shape *s, const char *name)
{
	ox_id n = ox_ir_add_reshape(g, x, y, s, name);
	note_made(st, anchor);
	return n;
}

static const char *node_name(const ox_node *n)
{
	return n->name[0] ? n->name : n->optype;
}

/* the names a chain node stands for: its own, or its ox_fused list */
static void add_names(const ox_node *n, int self, const char ***names, int *k, int *cap)
{
	const ox_attr *f = ox_attr_get(n, "ox_fused");
	int more = self + (f && f->type == OX_AT_STRINGS ? f->n : 0);
	if (*k + more > *cap) {
		*cap = 2 * (*k + more);
		*names = realloc(*names, (size_t)*cap * sizeof **names);
		if (!*names)
			ox_die("out of memory");
	}
	if (self)
		(*names)[(*k)++] = n->name;
	if (f && f->type == OX_AT_STRINGS)
		for (int i = 1; i < f->n; i++)
			(*names)[(*k)++] = f->strs[i];
}

/* node `to` was made from the chain's node src: list the others after it
 * (gathered first and added at once: a chain may be thousands long) */
static void set_fused(ox_graph *g, ox_id to, const int *chain, int len, int src)
{
	if (len < 2)
		return;
	const char **names = NULL;
	int k = 0, cap = 0;
	add_names(&g->nodes[chain[src]], 0, &names, &k, &cap);
	for (int i = 0; i < len; i++)
		if (i != src)
			add_names(&g->nodes[chain[i]], 1, &names, &k, &cap);
	ox_ir_add_fused_names(g, &g->nodes[to], names, k);
	free(names);
}

/* x can be renamed y: x's producer writes y and x's readers read y */
static int renamable(ox_graph *g, ox_id x)
{
	const ox_value *xv = &g->vals[x];
	return xv->kind == OX_V_INTERNAL && xv->producer >= 0 && !xv->is_output;
}

static void rename_into(ox_graph *g, ox_id x, ox_id y)
{
	ox_node *p = &g->nodes[g->vals[x].producer];
	ox_ir_replace_uses(g, x, y);
	for (int k = 0; k < p->nout; k++)
		if (p->out[k] == x)
			p->out[k] = y;
	g->vals[y].producer = g->vals[x].producer;
	g->vals[x].producer = -1;
}

static void set_perm(ox_graph *g, ox_id n, const int *perm, int r)
{
	ox_attr *pa = ox_ir_add_attr(g, &g->nodes[n], "perm", OX_AT_INTS);
	pa->n = r;
	pa->ints = ox_ir_alloc(g, (size_t)(r + 1) * sizeof *pa->ints);
	for (int i = 0; i < r; i++)
		pa->ints[i] = perm[i];
}

/* Rewrite the chain (node ids, in order; v its view) when a cheaper form exists. */
static void rewrite(ox_graph *g, state *st, const int *chain, int len, const view *v)
{
	ox_id x = g->nodes[chain[0]].in[0], y = g->nodes[chain[len - 1]].out[0];
	ox_shape xs = g->vals[x].shape, ys = g->vals[y].shape;
	atom A[MAXA];
	int na = normalized(v, A);
	int old[4] = {0, len, 0, 0}, src = -1; /* src: the chain's first Transpose */
	for (int k = 0; k < len; k++) {
		const ox_node *n = &g->nodes[chain[k]];
		if (!ox_plan_is_view_node(g, n))
			old[0]++;
		if (n->op == OX_OP_Transpose) {
			old[2]++;
			old[3] += g->vals[n->in[0]].shape.rank;
			if (src < 0)
				src = k;
		}
	}
	int anchor = chain[len - 1];
	char name[600], nm[700];
	snprintf(name, sizeof name, "%s", node_name(&g->nodes[chain[src >= 0 ? src : 0]]));
	if (na <= 1) {
		/* the identity: no node, or one Reshape (a view) where y must stay a
		 * graph output that x cannot become */
		int same = same_shape(&xs, &ys);
		int keep = !same || (g->vals[y].is_output && !renamable(g, x));
		int now[4] = {0, keep, 0, 0};
		if (!cost_less(now, old))
			return;
		if (keep)
			set_fused(g, add_reshape(g, st, anchor, x, y, &ys, name), chain, len, src >= 0 ? src : 0);
		else if (!g->vals[y].is_output)
			ox_ir_replace_uses(g, y, x);
		else
			rename_into(g, x, y);
		st->after += now[1];
	} else {
		if (src < 0)
			ox_die("transpose: a chain without a Transpose moves data");
		cand best, c;
		int have = 0, bc[4] = {0};
		for (int which = 0; which < 3; which++) {
			int ok = which == 0 ? cand_ydims(&c, &ys, v) : which == 1 ? cand_xdims(&c, &xs, A, na) : cand_atoms(&c, A, na);
			if (!ok || !cand_check(&c, &xs, &ys, A, na))
				continue;
			int cc[4] = {c.copies, c.nodes, c.ntr, c.rank};
			if (!have || cost_less(cc, bc)) {
				best = c, have = 1;
				memcpy(bc, cc, sizeof bc);
			}
		}
		if (!have || !cost_less(bc, old))
			return; /* none: more than OX_MAX_RANK atoms and no dims of x or y to use */
		ox_shape t;
		transposed(&best.s, best.perm, &t);
		ox_id cur = x;
		if (!same_shape(&best.s, &xs)) {
			if (src == 0)
				snprintf(nm, sizeof nm, "%s/in", name);
			else
				snprintf(nm, sizeof nm, "%s", node_name(&g->nodes[chain[0]]));
			const ox_id rn = add_reshape(g, st, anchor, x, -1, &best.s, nm); /* (g->nodes may move) */
			cur = g->nodes[rn].out[0];
		}
		int post = !same_shape(&t, &ys);
		ox_id tout = post ? new_value(g, name, g->vals[x].dtype, &t) : y;
		ox_id tn = new_node(g, st, anchor, OX_OP_Transpose, "Transpose", name, 1);
		set_perm(g, tn, best.perm, best.s.rank);
		g->nodes[tn].in[0] = cur, g->nodes[tn].out[0] = tout;
		g->vals[tout].producer = tn;
		set_fused(g, tn, chain, len, src);
		if (post) {
			if (src == len - 1)
				snprintf(nm, sizeof nm, "%s/out", name);
			else
				snprintf(nm, sizeof nm, "%s", node_name(&g->nodes[chain[len - 1]]));
			add_reshape(g, st, anchor, tout, y, &ys, nm);
		}
		st->after += bc[1];
		st->copies_after += bc[0];
	}
	st->chains++;
	st->before += len;
	st->copies_before += old[0];
	for (int k = 0; k < len; k++)
		g->nodes[chain[k]].dead = 1;
}

typedef struct {
	int anchor, k;
} placed;

static int by_anchor(const void *a, const void *b)
{
	const placed *p = a, *q = b;
	if (p->anchor != q->anchor)
		return p->anchor < q->anchor ? -1 : 1;
	return p->k < q->k ? -1 : p->k > q->k;
}

/* the new nodes go where their chain's last node was, in order */
static void place_new(ox_graph *g, state *st)
{
	int total = g->nnodes, at = 0, m = 0;
	ox_node *nodes = malloc((size_t)total * sizeof *nodes);
	placed *pl = malloc((size_t)st->nmade * sizeof *pl);
	if (!nodes || !pl)
		ox_die("out of memory");
	for (int k = 0; k < st->nmade; k++)
		pl[k] = (placed){st->anchor[k], k};
	qsort(pl, (size_t)st->nmade, sizeof *pl, by_anchor);
	for (int i = 0; i < st->n0; i++) {
		for (; m < st->nmade && pl[m].anchor == i; m++)
			nodes[at++] = g->nodes[st->n0 + pl[m].k];
		nodes[at++] = g->nodes[i];
	}
	if (at != total)
		ox_die("transpose: %d of %d nodes placed", at, total);
	memcpy(g->nodes, nodes, (size_t)total * sizeof *nodes);
	free(nodes);
	free(pl);
}

int ox_opt_transpose(ox_graph *g)
{
	if (!g->opt)
		return 0;
	ox_ir_fill_uses(g);
	/* the analysis is kept for the values rewrites do not touch: a chain's
	 * inner values, read by nodes after it, are never another's x or y */
	int n0 = g->nnodes, nv0 = g->nvals;
	char *claimed = calloc((size_t)n0 + 1, 1);
	int *chain = malloc(((size_t)n0 + 1) * sizeof *chain);
	int *reader = malloc(((size_t)nv0 + 1) * sizeof *reader);
	if (!claimed || !chain || !reader)
		ox_die("out of memory");
	for (int v = 0; v < nv0; v++)
		reader[v] = -1;
	for (int i = 0; i < n0; i++)
		for (int k = 0; k < g->nodes[i].nin; k++)
			if (g->nodes[i].in[k] >= 0)
				reader[g->nodes[i].in[k]] = i;
	state st = {.n0 = n0};
	for (int i = 0; i < n0; i++) {
		if (claimed[i] || !chain_op(g, &g->nodes[i]))
			continue;
		view v, next;
		view_init(&v, &g->vals[g->nodes[i].in[0]].shape);
		if (view_apply(g, &g->nodes[i], &v))
			continue;
		int len = 0;
		chain[len++] = i;
		for (;;) {
			ox_id o = g->nodes[chain[len - 1]].out[0];
			if (o >= nv0 || g->vals[o].nuses != 1 || g->vals[o].is_output)
				break;
			int j = reader[o];
			if (j < 0 || claimed[j] || !chain_op(g, &g->nodes[j]) || g->nodes[j].in[0] != o)
				break;
			next = v;
			if (view_apply(g, &g->nodes[j], &next)) {
				/* no strided view: the reshapes at the end start the next chain */
				while (len > 1 && g->nodes[chain[len - 1]].op != OX_OP_Transpose)
					len--;
				view_init(&v, &g->vals[g->nodes[chain[0]].in[0]].shape);
				for (int k = 0; k < len; k++)
					view_apply(g, &g->nodes[chain[k]], &v);
				break;
			}
			v = next;
			chain[len++] = j;
		}
		for (int k = 0; k < len; k++)
			claimed[chain[k]] = 1;
		rewrite(g, &st, chain, len, &v);
	}
	if (st.nmade)
		place_new(g, &st);
	ox_ir_compact(g);
	if (st.chains)
		ox_note("transpose: %d chains rewritten: %d nodes -> %d, copies %d -> %d", st.chains, st.before,
			st.after, st.copies_before, st.copies_after);
	free(st.anchor);
	free(claimed);
	free(chain);
	free(reader);
	return 0;
}
