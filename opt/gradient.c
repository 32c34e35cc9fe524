/* gradient.c: Gradient (ai.onnx.preview.training) by reverse-mode
 * differentiation at compile time.
 *
 * Gradient(xs, y) outputs dY/dx for each x in xs, seeded with dY = ones
 * (the gradient of the sum of Y's elements). The forward nodes on a path
 * from an x to y are taken from the graph and their adjoints appended as
 * plain ops (Mul, ReduceSum, MatMul, ...), which fold then infers, folds
 * and compiles like any others; the Gradient node dies.
 *
 * The forward subgraph is recorded (n->aux, a copy of its nodes) before
 * fold can fold it away: a forward node whose inputs are all constants
 * (x an initializer) becomes a constant and is compacted, and the path
 * from x through it would be lost, silently zeroing the gradient. So the
 * record is taken by ox_gradient_prepare before fold walks, or failing
 * that at the node's first visit, when only gradients with respect to
 * non-constant xs are safe (their descendants never fold). The expansion
 * itself waits (y added as an input) until y and the path are inferred.
 * Only float values carry gradients; integer ones (Shape, Cast to int) cut
 * the path. An op without a rule on the path is an error naming it.
 */
#include "expand.h"
#include <stdlib.h>
#include <string.h>


typedef struct {
	int nnodes;
	ox_node *nodes; /* forward nodes between the xs and y, topological order */
	int early;      /* recorded before fold folded anything */
} grad_state;

static int is_grad_dtype(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16;
}

/* a node's name for messages */
static const char *label(const ox_node *f)
{
	return f->name && f->name[0] ? f->name : "unnamed";
}

static int xs_attr(ox_graph *g, ox_node *n, const char ***xs)
{
	const ox_attr *a = ox_attr_get(n, "xs");
	if (!a || a->type != OX_AT_STRINGS || a->n < 1)
		return ox_error(g, n, "attribute 'xs' (a list of value names) is missing");
	if (a->n != n->nout)
		return ox_error(g, n, "'xs' names %d values and the node has %d outputs", a->n, n->nout);
	if (n->nin < a->n)
		return ox_error(g, n, "'xs' names %d values and the node has %d inputs", a->n, n->nin);
	*xs = (const char **)a->strs;
	return a->n;
}

/* Does subgraph b (or one nested in it) read, from an enclosing scope, a
 * value of g marked in dep? Such a node depends on it without an input. */
static int captures(ox_graph *g, ox_graph *b, const char *dep)
{
	for (int i = 0; i < b->nvals; i++) {
		if (b->vals[i].kind != OX_V_INPUT)
			continue;
		int formal = 0;
		for (int k = 0; k < b->ninputs && !formal; k++)
			formal = b->inputs[k] == i;
		ox_id v = formal ? -1 : ox_ir_find_value(g, b->vals[i].name);
		if (v >= 0 && dep[v])
			return 1;
	}
	for (int i = 0; i < b->nnodes; i++)
		for (int a = 0; a < b->nodes[i].nattr; a++) {
			const ox_attr *at = &b->nodes[i].attrs[a];
			int ng = at->type == OX_AT_GRAPH ? 1 : at->type == OX_AT_GRAPHS ? at->n : 0;
			for (int j = 0; j < ng; j++)
				if (at->g[j] && captures(g, at->g[j], dep))
					return 1;
		}
	return 0;
}

static int node_captures(ox_graph *g, const ox_node *n, const char *dep)
{
	for (int a = 0; a < n->nattr; a++) {
		const ox_attr *at = &n->attrs[a];
		int ng = at->type == OX_AT_GRAPH ? 1 : at->type == OX_AT_GRAPHS ? at->n : 0;
		for (int j = 0; j < ng; j++)
			if (at->g[j] && captures(g, at->g[j], dep))
				return 1;
	}
	return 0;
}

/* Record the forward nodes of Gradient node nid: those that depend on an x
 * and that y depends on. A value's producer is its live producer, else a
 * node fold has just folded (dead, not yet compacted). */
static int record(ox_graph *g, ox_id nid, int early)
{
	ox_node *n = &g->nodes[nid];
	const char **xs;
	int nx = xs_attr(g, n, &xs);
	if (nx < 0)
		return -1;
	if (n->env)
		return ox_error(g, n, "Gradient inside a subgraph (If/Loop/Scan body) is not supported");
	const char *yname = ox_attr_str(n, "y", NULL);
	ox_id y = yname ? ox_ir_find_value(g, yname) : -1;
	if (y < 0)
		return ox_error(g, n, "attribute 'y' names '%s', which the graph does not define", yname ? yname : "");
	int nv = g->nvals, nn = g->nnodes, rc = -1;
	int *prod = malloc((nv + 1) * sizeof *prod), *stack = malloc((nv + 1) * sizeof *stack);
	char *anc = calloc(nv + 1, 1), *dep = calloc(nv + 1, 1), *in = calloc(nn + 1, 1), *placed = calloc(nn + 1, 1);
	int *order = malloc((nn + 1) * sizeof *order);
	for (int i = 0; i < nv; i++)
		prod[i] = -1;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nn; i++) {
			ox_node *m = &g->nodes[i];
			if (i == nid || m->dead != pass)
				continue;
			for (int k = 0; k < m->nout; k++)
				if (m->out[k] >= 0 && prod[m->out[k]] < 0)
					prod[m->out[k]] = i;
		}
	/* ancestors of y */
	int sp = 0;
	anc[y] = 1;
	stack[sp++] = y;
	while (sp) {
		int p = prod[stack[--sp]];
		if (p < 0)
			continue;
		ox_node *m = &g->nodes[p];
		for (int k = 0; k < m->nin; k++)
			if (m->in[k] >= 0 && !anc[m->in[k]]) {
				anc[m->in[k]] = 1;
				stack[sp++] = m->in[k];
			}
	}
	/* descendants of the xs among them, to a fixpoint (no order assumed) */
	for (int k = 0; k < nx; k++)
		if (n->in[k] >= 0)
			dep[n->in[k]] = 1;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = 0; i < nn; i++) {
			ox_node *m = &g->nodes[i];
			if (in[i] || i == nid)
				continue;
			int isprod = 0, reads = 0;
			for (int k = 0; k < m->nout; k++)
				isprod |= m->out[k] >= 0 && prod[m->out[k]] == i && anc[m->out[k]];
			for (int k = 0; k < m->nin && !reads; k++)
				reads = m->in[k] >= 0 && dep[m->in[k]];
			if (isprod && !reads && node_captures(g, m, dep)) {
				ox_error(g, n, "Gradient: y depends on an x through the subgraph of node '%s' (%s), which "
					 "cannot be differentiated", label(m), m->optype);
				goto out;
			}
			if (!isprod || !reads)
				continue;
			in[i] = 1;
			changed = 1;
			for (int k = 0; k < m->nout; k++)
				if (m->out[k] >= 0)
					dep[m->out[k]] = 1;
		}
	}
	/* topological order of the recorded nodes */
	int m = 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = 0; i < nn; i++) {
			if (!in[i] || placed[i])
				continue;
			ox_node *f = &g->nodes[i];
			int ready = 1;
			for (int k = 0; k < f->nin && ready; k++) {
				int p = f->in[k] >= 0 ? prod[f->in[k]] : -1;
				ready = p < 0 || !in[p] || placed[p];
			}
			if (ready) {
				placed[i] = 1;
				order[m++] = i;
				changed = 1;
			}
		}
	}
	grad_state *st = ox_ir_alloc(g, sizeof *st);
	st->nnodes = m;
	st->nodes = ox_ir_alloc(g, (m + 1) * sizeof *st->nodes);
	st->early = early;
	for (int i = 0; i < m; i++)
		st->nodes[i] = g->nodes[order[i]];
	g->nodes[nid].aux = st;
	rc = 0;
out:
	free(prod);
	free(stack);
	free(anc);
	free(dep);
	free(in);
	free(placed);
	free(order);
	return rc;
}

int ox_gradient_prepare(ox_graph *g)
{
	int rc = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == OX_OP_Gradient && !g->nodes[i].aux)
			rc |= record(g, i, 1);
	return rc ? -1 : 0;
}

/* ---- builders: each returns the value made ---- */

typedef struct {
	ox_graph *g;
	ox_id nid;        /* the Gradient node */
	const char *name; /* name of the nodes added */
	ox_id *G;         /* accumulated gradient per forward value, -1 none */
} bw;

static ox_id op2(bw *b, int op, int opset, ox_id x, ox_id y)
{
	ox_id in[2] = {x, y};
	ox_id id = ox_expand_add_node(b->g, op, b->name, opset, y >= 0 ? 2 : 1, in, 1, NULL);
	return b->g->nodes[id].out[0];
}

static ox_id op1(bw *b, int op, int opset, ox_id x)
{
	return op2(b, op, opset, x, -1);
}

static ox_id scalar(bw *b, int dtype, double v)
{
	ox_shape s = {0, {0}};
	ox_tensor *t = ox_ir_new_tensor(b->g, dtype, &s);
	ox_tensor_set_f64(t, 0, v);
	return ox_ir_add_const(b->g, ox_expand_name(b->g, "grad_const"), t);
}

static ox_id dims_const(bw *b, const ox_shape *s)
{
	int64_t d[OX_MAX_RANK + 1];
	for (int i = 0; i < s->rank; i++)
		d[i] = s->d[i];
	return ox_expand_const_i64(b->g, "grad_shape", d, s->rank, 0);
}

static ox_id reshape(bw *b, ox_id x, const ox_shape *s)
{
	ox_id in[2] = {x, dims_const(b, s)};
	ox_id id = ox_expand_add_node(b->g, OX_OP_Reshape, b->name, 14, 2, in, 1, NULL);
	ox_expand_attr_int(b->g, id, "allowzero", 1); /* a 0 in s is a 0, not "copy" */
	return b->g->nodes[id].out[0];
}

static ox_id transpose(bw *b, ox_id x, const int64_t *perm, int rank)
{
	ox_id id = ox_expand_add_node(b->g, OX_OP_Transpose, b->name, 13, 1, &x, 1, NULL);
	ox_expand_attr_ints(b->g, id, "perm", perm, rank);
	return b->g->nodes[id].out[0];
}

static ox_id swap_last2(bw *b, ox_id x, int rank)
{
	int64_t perm[OX_MAX_RANK];
	for (int i = 0; i < rank; i++)
		perm[i] = i;
	perm[rank - 2] = rank - 1;
	perm[rank - 1] = rank - 2;
	return transpose(b, x, perm, rank);
}

/* Undo broadcasting: sum grad (of shape from) down to shape to. */
static int sum_to(bw *b, ox_id grad, const ox_shape *from, const ox_shape *to, ox_id *res)
{
	int off = from->rank - to->rank;
	if (off < 0)
		return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: internal: a rank-%d gradient for a rank-%d value",
				from->rank, to->rank);
	int64_t axes[OX_MAX_RANK];
	int na = 0;
	for (int i = 0; i < from->rank; i++) {
		if (i < off) {
			axes[na++] = i;
			continue;
		}
		ox_dim t = to->d[i - off], f = from->d[i];
		if (t == f)
			continue;
		if (t != 1)
			return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: internal: dim %d is %lld in the "
					"gradient and %lld in the value", i, (long long)f, (long long)t);
		axes[na++] = i;
	}
	*res = grad;
	if (!na)
		return 0;
	ox_id in[2] = {grad, ox_expand_const_i64(b->g, "grad_axes", axes, na, 0)};
	ox_id id = ox_expand_add_node(b->g, OX_OP_ReduceSum, b->name, 13, 2, in, 1, NULL);
	ox_expand_attr_int(b->g, id, "keepdims", 1);
	*res = b->g->nodes[id].out[0];
	if (off)
		*res = reshape(b, *res, to);
	return 0;
}

/* G[v] += grad */
static void accum(bw *b, ox_id v, ox_id grad)
{
	b->G[v] = b->G[v] < 0 ? grad : op2(b, OX_OP_Add, 14, b->G[v], grad);
}

static const ox_shape *shp(bw *b, ox_id v)
{
	return &b->g->vals[v].shape;
}

static int dt(bw *b, ox_id v)
{
	return b->g->vals[v].dtype;
}

/* accumulate into input k of f the gradient grad of shape from, summed to k's shape */
static int give(bw *b, const ox_node *f, int k, ox_id grad, const ox_shape *from, const char *dep)
{
	ox_id v = f->in[k], r;
	if (v < 0 || !dep[v] || !is_grad_dtype(dt(b, v)))
		return 0;
	if (sum_to(b, grad, from, shp(b, v), &r))
		return -1;
	accum(b, v, r);
	return 0;
}

/* reduce axes of a ReduceSum / ReduceMean f; *all when every axis */
static int reduce_axes(bw *b, const ox_node *f, char *red, int rank)
{
	int64_t ax[OX_MAX_RANK + 1];
	int na;
	int from_input = f->op == OX_OP_ReduceSum ? f->opset >= 13 : f->opset >= 18;
	if (from_input) {
		na = 0;
		if (f->nin > 1 && f->in[1] >= 0) {
			na = ox_in_ints(b->g, f, 1, ax, OX_MAX_RANK + 1);
			if (na < 0)
				return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: the axes of '%s' (%s) are not "
						"a compile-time constant", label(f), f->optype);
		}
	} else {
		const int64_t *v;
		na = ox_attr_ints(f, "axes", &v);
		if (na < 0)
			na = 0;
		if (na > rank)
			return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: '%s' (%s) has %d axes for rank %d", label(f),
					f->optype, na, rank);
		for (int i = 0; i < na; i++)
			ax[i] = v[i];
	}
	if (na > rank)
		return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: '%s' (%s) has %d axes for rank %d", label(f),
				f->optype, na, rank);
	memset(red, 0, rank);
	if (!na) {
		if (from_input && ox_attr_int(f, "noop_with_empty_axes", 0))
			return 0;
		memset(red, 1, rank);
		return 0;
	}
	for (int i = 0; i < na; i++) {
		int a = ox_norm_axis(ax[i], rank);
		if (a < 0)
			return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: '%s' (%s) has axis %lld for rank %d",
					label(f), f->optype, (long long)ax[i], rank);
		red[a] = 1;
	}
	return 0;
}

static int grad_matmul(bw *b, const ox_node *f, ox_id gy, const char *dep)
{
	ox_id A = f->in[0], B = f->in[1];
	ox_shape sa = *shp(b, A), sb = *shp(b, B), sy = *shp(b, f->out[0]);
	if (sa.rank < 1 || sb.rank < 1)
		return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: MatMul '%s' has a scalar input", label(f));
	/* view 1-D operands as matrices: A [K] as [1,K], B [K] as [K,1] */
	ox_shape a2 = sa, b2 = sb, y2;
	if (sa.rank == 1)
		a2 = (ox_shape){2, {1, sa.d[0]}};
	if (sb.rank == 1)
		b2 = (ox_shape){2, {sb.d[0], 1}};
	int nb = sy.rank - (sa.rank > 1) - (sb.rank > 1);
	if (nb < 0 || nb > OX_MAX_RANK - 2)
		return ox_error(b->g, &b->g->nodes[b->nid], "Gradient: MatMul '%s': unexpected output rank", label(f));
	y2.rank = nb + 2;
	for (int i = 0; i < nb; i++)
		y2.d[i] = sy.d[i];
	y2.d[nb] = a2.d[a2.rank - 2];
	y2.d[nb + 1] = b2.d[b2.rank - 1];
	ox_id A2 = sa.rank == 1 ? reshape(b, A, &a2) : A;
	ox_id B2 = sb.rank == 1 ? reshape(b, B, &b2) : B;
	ox_id gy2 = sy.rank != y2.rank ? reshape(b, gy, &y2) : gy;
	if (dep[A] && is_grad_dtype(dt(b, A))) {
		ox_shape ga_s = y2, r;
		ga_s.d[nb + 1] = a2.d[a2.rank - 1];
		ox_id ga = op2(b, OX_OP_MatMul, 13, gy2, swap_last2(b, B2, b2.rank)), s;
		if (sum_to(b, ga, &ga_s, &a2, &s))
			return -1;
		r = sa;
		accum(b, A, sa.rank == 1 ? reshape(b, s, &r) : s);
	}
	if (dep[B] && is_grad_dtype(dt(b, B))) {
		ox_shape gb_s = y2, r;
		gb_s.d[nb] = b2.d[b2.rank - 2];
		ox_id gb = op2(b, OX_OP_MatMul, 13, swap_last2(b, A2, a2.rank), gy2), s;
		if (sum_to(b, gb, &gb_s, &b2, &s))
			return -1;
		r = sb;
		accum(b, B, sb.rank == 1 ? reshape(b, s, &r) : s);
	}
	return 0;
}

/* the adjoint of forward node f, given gy = dY/d(output 0) */
static int grad_node(bw *b, const ox_node *f, ox_id gy, const char *dep)
{
	ox_graph *g = b->g;
	ox_id y = f->out[0], a = f->nin > 0 ? f->in[0] : -1, c = f->nin > 1 ? f->in[1] : -1;
	ox_shape sy = *shp(b, y);
	int t = dt(b, y);
	switch (f->op) {
	case OX_OP_Identity:
		return give(b, f, 0, gy, &sy, dep);
	case OX_OP_Add:
		return give(b, f, 0, gy, &sy, dep) || give(b, f, 1, gy, &sy, dep) ? -1 : 0;
	case OX_OP_Sum:
		for (int k = 0; k < f->nin; k++)
			if (give(b, f, k, gy, &sy, dep))
				return -1;
		return 0;
	case OX_OP_Sub:
		if (give(b, f, 0, gy, &sy, dep))
			return -1;
		return dep[c] ? give(b, f, 1, op1(b, OX_OP_Neg, 13, gy), &sy, dep) : 0;
	case OX_OP_Neg:
		return give(b, f, 0, op1(b, OX_OP_Neg, 13, gy), &sy, dep);
	case OX_OP_Mul:
		if (dep[a] && give(b, f, 0, op2(b, OX_OP_Mul, 14, gy, c), &sy, dep))
			return -1;
		return dep[c] ? give(b, f, 1, op2(b, OX_OP_Mul, 14, gy, a), &sy, dep) : 0;
	case OX_OP_Div:
		/* d(a/c)/da = 1/c, d(a/c)/dc = -y/c */
		if (dep[a] && give(b, f, 0, op2(b, OX_OP_Div, 14, gy, c), &sy, dep))
			return -1;
		if (!dep[c])
			return 0;
		return give(b, f, 1, op1(b, OX_OP_Neg, 13, op2(b, OX_OP_Div, 14, op2(b, OX_OP_Mul, 14, gy, y), c)),
			    &sy, dep);
	case OX_OP_Relu: {
		ox_id zero = scalar(b, t, 0);
		ox_id pos = op2(b, OX_OP_Greater, 13, a, zero);
		ox_id in[3] = {pos, gy, zero};
		ox_id w = ox_expand_add_node(g, OX_OP_Where, b->name, 16, 3, in, 1, NULL);
		return give(b, f, 0, g->nodes[w].out[0], &sy, dep);
	}
	case OX_OP_Sigmoid: /* y (1 - y) */
		return give(b, f, 0,
			    op2(b, OX_OP_Mul, 14, gy, op2(b, OX_OP_Mul, 14, y, op2(b, OX_OP_Sub, 14, scalar(b, t, 1), y))),
			    &sy, dep);
	case OX_OP_Tanh: /* 1 - y^2 */
		return give(b, f, 0,
			    op2(b, OX_OP_Mul, 14, gy, op2(b, OX_OP_Sub, 14, scalar(b, t, 1), op2(b, OX_OP_Mul, 14, y, y))),
			    &sy, dep);
	case OX_OP_Exp:
		return give(b, f, 0, op2(b, OX_OP_Mul, 14, gy, y), &sy, dep);
	case OX_OP_Log:
		return give(b, f, 0, op2(b, OX_OP_Div, 14, gy, a), &sy, dep);
	case OX_OP_Sqrt: /* 1 / (2 y) */
		return give(b, f, 0, op2(b, OX_OP_Div, 14, op2(b, OX_OP_Mul, 14, gy, scalar(b, t, 0.5)), y), &sy, dep);
	case OX_OP_Pow: {
		/* d(a^c)/da = c a^(c-1); d(a^c)/dc = y ln a */
		if (dep[a]) {
			ox_id cf = c;
			if (dt(b, c) != dt(b, a)) {
				ox_id id = ox_expand_add_node(g, OX_OP_Cast, b->name, 13, 1, &c, 1, NULL);
				ox_expand_attr_int(g, id, "to", dt(b, a));
				cf = g->nodes[id].out[0];
			}
			ox_id p = op2(b, OX_OP_Pow, 15, a, op2(b, OX_OP_Sub, 14, cf, scalar(b, dt(b, a), 1)));
			if (give(b, f, 0, op2(b, OX_OP_Mul, 14, gy, op2(b, OX_OP_Mul, 14, cf, p)), &sy, dep))
				return -1;
		}
		if (dep[c] && is_grad_dtype(dt(b, c))) {
			if (dt(b, c) != t)
				return ox_error(g, &g->nodes[b->nid], "Gradient: Pow '%s' with an exponent of another "
						"dtype than its base", label(f));
			return give(b, f, 1, op2(b, OX_OP_Mul, 14, gy, op2(b, OX_OP_Mul, 14, y, op1(b, OX_OP_Log, 13, a))),
				    &sy, dep);
		}
		return 0;
	}
	case OX_OP_MatMul:
		return grad_matmul(b, f, gy, dep);
	case OX_OP_Reshape:
	case OX_OP_Flatten:
	case OX_OP_Squeeze:
	case OX_OP_Unsqueeze: {
		ox_shape sa = *shp(b, a);
		return give(b, f, 0, reshape(b, gy, &sa), &sa, dep);
	}
	case OX_OP_Transpose: {
		int r = sy.rank;
		int64_t perm[OX_MAX_RANK], inv[OX_MAX_RANK];
		const int64_t *p;
		int np = ox_attr_ints(f, "perm", &p);
		if (np >= 0 && np != r)
			return ox_error(g, &g->nodes[b->nid], "Gradient: Transpose '%s' perm has %d entries for rank %d",
					label(f), np, r);
		for (int i = 0; i < r; i++)
			perm[i] = np >= 0 ? p[i] : r - 1 - i;
		for (int i = 0; i < r; i++) {
			if (perm[i] < 0 || perm[i] >= r)
				return ox_error(g, &g->nodes[b->nid], "Gradient: Transpose '%s' has a bad perm", label(f));
			inv[perm[i]] = i;
		}
		ox_shape sa = *shp(b, a);
		return give(b, f, 0, transpose(b, gy, inv, r), &sa, dep);
	}
	case OX_OP_ReduceSum:
	case OX_OP_ReduceMean: {
		ox_shape sa = *shp(b, a), keep = sa;
		char red[OX_MAX_RANK];
		if (reduce_axes(b, f, red, sa.rank))
			return -1;
		int64_t count = 1;
		for (int i = 0; i < sa.rank; i++)
			if (red[i]) {
				keep.d[i] = 1;
				count *= sa.d[i];
			}
		ox_id ge = op2(b, OX_OP_Expand, 13, reshape(b, gy, &keep), dims_const(b, &sa));
		if (f->op == OX_OP_ReduceMean && count != 1)
			ge = op2(b, OX_OP_Mul, 14, ge, scalar(b, t, count ? 1.0 / (double)count : 0));
		return give(b, f, 0, ge, &sa, dep);
	}
	case OX_OP_Cast: {
		ox_id id = ox_expand_add_node(g, OX_OP_Cast, b->name, 13, 1, &gy, 1, NULL);
		ox_expand_attr_int(g, id, "to", dt(b, a));
		ox_shape sa = *shp(b, a);
		return give(b, f, 0, g->nodes[id].out[0], &sa, dep);
	}
	default:
		return ox_error(g, &g->nodes[b->nid], "Gradient: cannot differentiate through %s (node '%s')", f->optype,
				label(f));
	}
}

static int expand(ox_graph *g, ox_id nid, grad_state *st)
{
	ox_node *n = &g->nodes[nid];
	const char **xs;
	int nx = xs_attr(g, n, &xs);
	if (nx < 0)
		return -1;
	ox_id y = ox_ir_find_value(g, ox_attr_str(n, "y", ""));
	int nv = g->nvals, rc = -1;
	char *dep = calloc(nv + 1, 1);
	ox_id *G = malloc((nv + 1) * sizeof *G);
	for (int i = 0; i < nv; i++)
		G[i] = -1;
	bw b = {g, nid, n->name[0] ? n->name : "Gradient", G};
	if (!is_grad_dtype(g->vals[y].dtype)) {
		ox_error(g, n, "Gradient: y ('%s') is %s; only float values have gradients", g->vals[y].name,
			 ox_dtype_name(g->vals[y].dtype));
		goto out;
	}
	/* x-dependent float values, and every shape the rules read constant */
	for (int k = 0; k < nx; k++) {
		ox_id x = n->in[k];
		if (x < 0) {
			ox_error(g, n, "Gradient: x #%d is omitted", k);
			goto out;
		}
		if (!st->early && g->vals[x].kind == OX_V_CONST) {
			ox_error(g, n, "Gradient with respect to the constant '%s' (an initializer) is not supported: "
				 "constant folding may already have removed nodes between it and y",
				 g->vals[x].name);
			goto out;
		}
		dep[x] = 1;
	}
	for (int i = 0; i < st->nnodes; i++) {
		const ox_node *f = &st->nodes[i];
		for (int k = 0; k < f->nin + f->nout; k++) {
			ox_id v = k < f->nin ? f->in[k] : f->out[k - f->nin];
			if (v < 0)
				continue;
			if (!g->vals[v].has_shape || !ox_shape_is_const(&g->vals[v].shape)) {
				ox_error(g, n, "Gradient: '%s' has no constant shape", g->vals[v].name);
				goto out;
			}
			if (k >= f->nin)
				dep[v] = 1;
		}
	}
	if (!g->vals[y].has_shape || !ox_shape_is_const(&g->vals[y].shape)) {
		ox_error(g, n, "Gradient: y ('%s') has no constant shape", g->vals[y].name);
		goto out;
	}
	/* seed: dY = ones */
	{
		ox_tensor *t = ox_ir_new_tensor(g, g->vals[y].dtype, &g->vals[y].shape);
		for (int64_t i = 0; i < ox_tensor_numel(t); i++)
			ox_tensor_set_f64(t, i, 1.0);
		G[y] = ox_ir_add_const(g, ox_expand_name(g, "grad_seed"), t);
	}
	for (int i = st->nnodes - 1; i >= 0; i--) {
		const ox_node *f = &st->nodes[i];
		int any = 0;
		for (int k = 0; k < f->nout; k++)
			any |= f->out[k] >= 0 && G[f->out[k]] >= 0;
		if (!any)
			continue;
		if (f->nout != 1) {
			ox_error(g, &g->nodes[nid], "Gradient: cannot differentiate through %s (node '%s'): it has "
				 "several outputs", f->optype, label(f));
			goto out;
		}
		if (grad_node(&b, f, G[f->out[0]], dep))
			goto out;
	}
	/* outputs: dY/dx_k, zeros where y does not depend on x_k */
	for (int k = 0; k < nx; k++) {
		n = &g->nodes[nid];
		ox_id x = n->in[k], o = n->out[k];
		if (o < 0)
			continue;
		if (G[x] < 0) {
			ox_tensor *t = ox_ir_new_tensor(g, g->vals[x].dtype, &g->vals[x].shape);
			ox_ir_set_const(g, o, t);
			continue;
		}
		ox_id src = G[x];
		ox_expand_add_node(g, OX_OP_Identity, b.name, 16, 1, &src, 1, &o);
	}
	g->nodes[nid].dead = 1;
	rc = 0;
out:
	free(dep);
	free(G);
	return rc;
}

int ox_expand_gradient(ox_graph *g, ox_id nid)
{
	ox_node *n = &g->nodes[nid];
	if (!n->aux && record(g, nid, 0))
		return -1;
	n = &g->nodes[nid];
	const char *yname = ox_attr_str(n, "y", "");
	ox_id y = ox_ir_find_value(g, yname);
	if (y < 0)
		return ox_error(g, n, "attribute 'y' names '%s', which the graph does not define", yname);
	if (!g->vals[y].has_shape) {
		/* wait for y: fold re-sorts the node after it and visits it again */
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] == y)
				return ox_error(g, n, "Gradient: y ('%s') was not inferred", yname);
		ox_id *in = ox_ir_alloc(g, (n->nin + 2) * sizeof *in);
		memcpy(in, n->in, n->nin * sizeof *in);
		in[n->nin] = y;
		n->in = in;
		n->nin++;
		return 0;
	}
	return expand(g, nid, n->aux);
}
