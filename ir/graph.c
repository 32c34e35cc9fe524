/* graph.c: the graph container, its arena, values, nodes and attributes.
 *
 * Values and nodes live in growable arrays indexed by ox_id; ids stay
 * stable (nodes are only marked dead, then compacted by ox_ir_compact).
 * Everything else is bump-allocated in 64-byte-aligned chunks owned by the
 * graph (and its subgraphs share the root's arena), freed by ox_ir_free.
 */
#include "ir.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ox_chunk {
	ox_chunk *next;
	size_t used, cap;
	_Alignas(64) unsigned char mem[];
};

int ox_verbose;

/* A typed getter that finds its attribute with another type records it
 * here (the first one), and ox_attr_report turns it into the error: the
 * getter's expected type is the check, so no op lists its attributes'
 * types twice. Reported after each node's inference, after each pass and
 * before codegen writes; an error about the same node in between is
 * replaced by it, the cause. Node names live in the arena, so a copy of
 * the node stays printable while its graph lives (freeing it forgets
 * the record). */
static struct {
	int set;
	ox_node node;
	const char *attr;
	int want, got;
} mistyped;


static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		ox_die("out of memory (%zu bytes)", n);
	return p;
}

ox_graph *ox_ir_new(const char *path)
{
	ox_graph *g = xrealloc(NULL, sizeof *g);
	memset(g, 0, sizeof *g);
	g->path = path ? path : "<graph>";
	g->name = "";
	g->string_capacity = 256;
	g->target = ox_target_default();
	g->opt = 1;
	g->winograd = 1;
	g->unroll = 4096;
	return g;
}

ox_graph *ox_ir_root(const ox_graph *g)
{
	while (g->parent)
		g = g->parent;
	return (ox_graph *)g;
}

static ox_graph *root_of(ox_graph *g)
{
	return ox_ir_root(g);
}

ox_graph *ox_ir_new_sub(ox_graph *parent)
{
	ox_graph *g = ox_ir_new(parent->path);
	g->parent = parent;
	g->opset = parent->opset;
	g->string_capacity = parent->string_capacity;
	g->ir_version = parent->ir_version;
	g->target = parent->target;
	g->opt = parent->opt;
	g->winograd = parent->winograd;
	g->gpu = parent->gpu;
	g->unroll = parent->unroll;
	g->max_elems = parent->max_elems;
	ox_graph *r = root_of(parent);
	if (r->nsubs == r->capsubs) {
		r->capsubs = r->capsubs ? 2 * r->capsubs : 8;
		r->subs = xrealloc(r->subs, (size_t)r->capsubs * sizeof *r->subs);
	}
	r->subs[r->nsubs++] = g;
	return g;
}

static void free_arrays(ox_graph *g)
{
	free(g->vals);
	free(g->nodes);
	free(g->dexprs); /* the root's; subgraphs have none */
	free(g->regions);
	free(g->caps);
	free(g);
}

void ox_ir_free(ox_graph *g)
{
	if (!g || g->parent)
		return; /* a subgraph goes with its root */
	mistyped.set = 0;
	for (int i = 0; i < g->nsubs; i++)
		free_arrays(g->subs[i]);
	free(g->subs);
	for (ox_chunk *c = g->arena; c;) {
		ox_chunk *n = c->next;
		free(c);
		c = n;
	}
	free_arrays(g);
}

void *ox_ir_alloc(ox_graph *g, size_t n)
{
	g = root_of(g);
	n = (n + 63) & ~(size_t)63;
	ox_chunk *c = g->arena;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > (1 << 20) ? n : (1 << 20);
		c = aligned_alloc(64, sizeof *c + cap); /* malloc gives only 16 */
		if (!c)
			ox_die("out of memory (%zu bytes)", cap);
		c->used = 0;
		c->cap = cap;
		if (g->arena && n > (1 << 20)) { /* big block: keep the current chunk in front */
			c->next = g->arena->next;
			g->arena->next = c;
		} else {
			c->next = g->arena;
			g->arena = c;
		}
	}
	void *p = c->mem + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

const char *ox_ir_strdup(ox_graph *g, const char *s)
{
	if (!s)
		s = "";
	size_t n = strlen(s) + 1;
	char *p = ox_ir_alloc(g, n);
	memcpy(p, s, n);
	return p;
}

ox_id ox_ir_add_value(ox_graph *g, const char *name, int kind)
{
	if (g->nvals == g->capvals) {
		g->capvals = g->capvals ? 2 * g->capvals : 64;
		g->vals = xrealloc(g->vals, g->capvals * sizeof *g->vals);
	}
	ox_value *v = &g->vals[g->nvals];
	memset(v, 0, sizeof *v);
	v->name = ox_ir_strdup(g, name);
	v->kind = kind;
	v->producer = -1;
	return g->nvals++;
}

ox_id ox_ir_find_value(ox_graph *g, const char *name)
{
	/* last definition wins (subgraph outputs may shadow) */
	for (int i = g->nvals - 1; i >= 0; i--)
		if (!strcmp(g->vals[i].name, name))
			return i;
	return -1;
}

int ox_ir_find_input(const ox_graph *g, const char *name)
{
	for (int k = 0; k < g->ninputs; k++)
		if (!strcmp(g->vals[g->inputs[k]].name, name))
			return k;
	return -1;
}

ox_id ox_ir_add_node(ox_graph *g, int op, const char *optype, const char *name, int nin, int nout)
{
	if (g->nnodes == g->capnodes) {
		g->capnodes = g->capnodes ? 2 * g->capnodes : 64;
		g->nodes = xrealloc(g->nodes, g->capnodes * sizeof *g->nodes);
	}
	ox_node *n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof *n);
	n->op = op;
	n->optype = ox_ir_strdup(g, optype);
	n->domain = "";
	n->name = ox_ir_strdup(g, name);
	n->opset = g->opset;
	n->region = g->cur_region;
	n->nin = nin;
	n->nout = nout;
	n->in = ox_ir_alloc(g, (nin + 1) * sizeof *n->in);
	n->out = ox_ir_alloc(g, (nout + 1) * sizeof *n->out);
	for (int i = 0; i < nin; i++)
		n->in[i] = -1;
	for (int i = 0; i < nout; i++)
		n->out[i] = -1;
	return g->nnodes++;
}

ox_tensor *ox_ir_new_tensor(ox_graph *g, int dtype, const ox_shape *shape)
{
	ox_tensor *t = ox_ir_alloc(g, sizeof *t);
	t->dtype = dtype;
	t->shape = *shape;
	int64_t n = ox_shape_numel(shape);
	if (n < 0)
		ox_die("tensor with a non-constant shape");
	t->nbytes = (size_t)n * ox_dtype_size(dtype);
	if (dtype == OX_STRING)
		t->strs = ox_ir_alloc(g, (size_t)(n ? n : 1) * sizeof *t->strs);
	t->data = ox_ir_alloc(g, t->nbytes ? t->nbytes : 1);
	return t;
}

void ox_ir_set_const(ox_graph *g, ox_id id, ox_tensor *t)
{
	(void)g;
	ox_value *v = &g->vals[id];
	v->kind = OX_V_CONST;
	v->data = t;
	v->dtype = t->dtype;
	v->has_shape = 1;
	v->shape = t->shape;
	v->producer = -1;
}

ox_id ox_ir_add_const(ox_graph *g, const char *name, ox_tensor *t)
{
	ox_id v = ox_ir_add_value(g, name, OX_V_CONST);
	ox_ir_set_const(g, v, t);
	return v;
}

ox_node *ox_ir_sole_reader(ox_graph *g, ox_id v)
{
	if (v < 0 || g->vals[v].nuses != 1 || g->vals[v].is_output)
		return NULL;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nin && !g->nodes[i].dead; k++)
			if (g->nodes[i].in[k] == v)
				return &g->nodes[i];
	return NULL;
}

/* the target of a Reshape x -> shape s: a constant, or -1 when none can say
 * it (the node then has ox_symshape) */
static ox_id reshape_target(ox_graph *g, ox_id x, const ox_shape *s, const char *name)
{
	ox_tensor *t = ox_ir_new_tensor(g, OX_I64, &(ox_shape){1, {s->rank}});
	/* a symbolic dim: 0 (the input's, allowzero 0) where it is the input's
	 * dim at that place, else -1 (inferred from the rest: one at most);
	 * with two such dims no target: the output's shape is (ox_symshape) */
	const ox_shape *xs = &g->vals[x].shape;
	int inferred = 0;
	for (int i = 0; i < s->rank; i++) {
		int64_t d = s->d[i];
		if (d < 0 && i < xs->rank && xs->d[i] == d)
			d = 0;
		else if (d < 0 && inferred++)
			return -1;
		else if (d < 0)
			d = -1;
		ox_tensor_set_i64(t, i, d);
	}
	char cn[700];
	snprintf(cn, sizeof cn, "%s/shape", name);
	return ox_ir_add_const(g, cn, t);
}

ox_id ox_ir_add_reshape(ox_graph *g, ox_id x, ox_id y, const ox_shape *s, const char *name)
{
	const ox_shape shape = *s; /* (s may point into g->vals, which adding values moves) */
	ox_id c = reshape_target(g, x, &shape, name);
	if (y < 0) {
		y = ox_ir_add_value(g, name, OX_V_INTERNAL);
		g->vals[y].dtype = g->vals[x].dtype, g->vals[y].has_shape = 1, g->vals[y].shape = shape;
	}
	ox_id n = ox_ir_add_node(g, OX_OP_Reshape, "Reshape", name, 2, 1);
	g->nodes[n].in[0] = x, g->nodes[n].in[1] = c, g->nodes[n].out[0] = y;
	if (c < 0)
		ox_ir_add_attr(g, &g->nodes[n], "ox_symshape", OX_AT_INT)->i = 1;
	g->vals[y].producer = n;
	return n;
}

ox_id ox_ir_add_transpose(ox_graph *g, ox_id x, ox_id y, const int64_t *perm, int r, const char *name)
{
	ox_id nid = ox_ir_add_node(g, OX_OP_Transpose, "Transpose", name, 1, 1);
	ox_attr *pa = ox_ir_add_attr(g, &g->nodes[nid], "perm", OX_AT_INTS);
	pa->n = r;
	pa->ints = ox_ir_alloc(g, (size_t)(r + 1) * sizeof *pa->ints);
	memcpy(pa->ints, perm, (size_t)r * sizeof *perm);
	if (y < 0) {
		y = ox_ir_add_value(g, name, OX_V_INTERNAL);
		ox_value *v = &g->vals[y], *xv = &g->vals[x];
		v->dtype = xv->dtype, v->has_shape = 1, v->shape.rank = r;
		for (int i = 0; i < r; i++)
			v->shape.d[i] = xv->shape.d[perm[i]];
	}
	g->nodes[nid].in[0] = x;
	g->nodes[nid].out[0] = y;
	g->nodes[nid].opset = g->opset;
	g->vals[y].producer = nid;
	return nid;
}

void ox_ir_set_reshape_target(ox_graph *g, ox_node *n)
{
	const ox_value *y = &g->vals[n->out[0]];
	n->in[1] = reshape_target(g, n->in[0], &y->shape, n->name[0] ? n->name : y->name);
	ox_ir_del_attr(n, "ox_symshape");
	ox_ir_del_attr(n, "allowzero");
	if (n->in[1] < 0)
		ox_ir_add_attr(g, n, "ox_symshape", OX_AT_INT)->i = 1;
}

ox_id ox_ir_add_scratch(ox_graph *g, ox_node *n, int64_t bytes)
{
	ox_id v;
	if (n->scratch) {
		v = n->out[n->nout - 1];
	} else {
		char nm[600];
		snprintf(nm, sizeof nm, "%s/scratch", n->name[0] ? n->name : n->optype);
		v = ox_ir_add_value(g, nm, OX_V_INTERNAL);
		ox_id *out = ox_ir_alloc(g, (n->nout + 2) * sizeof *out);
		memcpy(out, n->out, n->nout * sizeof *out);
		out[n->nout++] = v;
		n->out = out;
		n->scratch = 1;
		g->vals[v].producer = (ox_id)(n - g->nodes);
	}
	ox_value *val = &g->vals[v];
	val->dtype = OX_U8;
	val->has_shape = 1;
	val->shape.rank = 1;
	val->shape.d[0] = bytes > 0 ? bytes : 1;
	return v;
}

void ox_ir_set_agg(ox_graph *g, ox_id v, int agg, const ox_id *elems, int n, int elem_dtype)
{
	ox_value *val = &g->vals[v];
	val->kind = OX_V_AGG;
	val->producer = -1;
	val->agg = agg;
	val->nelems = n;
	val->elem_dtype = elem_dtype;
	val->elems = ox_ir_alloc(g, (n + 1) * sizeof *val->elems);
	if (n)
		memcpy(val->elems, elems, n * sizeof *elems);
}

ox_id ox_ir_add_agg(ox_graph *g, const char *name, int agg, const ox_id *elems, int n, int elem_dtype)
{
	ox_id id = ox_ir_add_value(g, name, OX_V_AGG);
	ox_ir_set_agg(g, id, agg, elems, n, elem_dtype);
	return id;
}

void ox_ir_replace_uses(ox_graph *g, ox_id from, ox_id to)
{
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] == from)
				n->in[k] = to;
	}
	for (int k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == from)
			g->outputs[k] = to;
}

void ox_ir_fill_uses(ox_graph *g)
{
	for (int i = 0; i < g->nvals; i++) {
		g->vals[i].nuses = 0;
		g->vals[i].is_output = 0;
		g->vals[i].producer = -1;
	}
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				g->vals[n->in[k]].nuses++;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				g->vals[n->out[k]].producer = i;
	}
	for (int k = 0; k < g->noutputs; k++)
		if (g->outputs[k] >= 0)
			g->vals[g->outputs[k]].is_output = 1;
}

void ox_ir_compact(ox_graph *g)
{
	int j = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead)
			g->nodes[j++] = g->nodes[i];
	g->nnodes = j;
	ox_ir_fill_uses(g);
}

/* Kahn's algorithm, stable: among ready nodes, the one first in the current
 * order goes first (a binary heap on the index), so an already sorted graph
 * is left as it is. A node that reads an aggregate (OX_V_AGG) depends on
 * the producers of its parts. O((V + E) log V). */
typedef struct { int *edge, *start, *prod; ox_graph *g; } topo;

static void topo_deps(topo *t, ox_id v, int node, int *count, int fill)
{
	ox_value *val = &t->g->vals[v];
	if (val->kind == OX_V_AGG) {
		for (int e = 0; e < val->nelems; e++)
			if (val->elems[e] >= 0)
				topo_deps(t, val->elems[e], node, count, fill);
		return;
	}
	int p = t->prod[v];
	if (p < 0 || p == node)
		return;
	if (fill)
		t->edge[t->start[p] + count[p]] = node;
	count[p]++;
}

static void heap_push(int *h, int *n, int x)
{
	int i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > x) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static int heap_pop(int *h, int *n)
{
	int top = h[0], x = h[--*n], i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

void ox_ir_move_node(ox_graph *g, int from, int to)
{
	ox_node t = g->nodes[from];
	if (from < to)
		memmove(&g->nodes[from], &g->nodes[from + 1], (size_t)(to - from) * sizeof t);
	else if (from > to)
		memmove(&g->nodes[to + 1], &g->nodes[to], (size_t)(from - to) * sizeof t);
	g->nodes[to] = t;
}

int ox_ir_toposort(ox_graph *g)
{
	ox_ir_compact(g);
	int n = g->nnodes;
	if (n <= 0)
		return 0;
	topo t = {0};
	t.g = g;
	t.prod = malloc((g->nvals + 1) * sizeof *t.prod);
	for (int i = 0; i < g->nvals; i++)
		t.prod[i] = -1;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < g->nodes[i].nout; k++)
			if (g->nodes[i].out[k] >= 0)
				t.prod[g->nodes[i].out[k]] = i;
	int *count = calloc(n + 1, sizeof *count), *pending = calloc(n, sizeof *pending);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < g->nodes[i].nin; k++)
			if (g->nodes[i].in[k] >= 0)
				topo_deps(&t, g->nodes[i].in[k], i, count, 0);
	t.start = calloc(n + 1, sizeof *t.start);
	for (int i = 0; i < n; i++)
		t.start[i + 1] = t.start[i] + count[i];
	t.edge = malloc((t.start[n] + 1) * sizeof *t.edge);
	memset(count, 0, (n + 1) * sizeof *count);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < g->nodes[i].nin; k++)
			if (g->nodes[i].in[k] >= 0)
				topo_deps(&t, g->nodes[i].in[k], i, count, 1);
	for (int e = 0; e < t.start[n]; e++)
		pending[t.edge[e]]++;
	int *heap = malloc((size_t)n * sizeof *heap), nh = 0, *order = malloc((size_t)n * sizeof *order), m = 0;
	for (int i = 0; i < n; i++)
		if (!pending[i])
			heap_push(heap, &nh, i);
	while (nh) {
		int p = heap_pop(heap, &nh);
		order[m++] = p;
		for (int e = t.start[p]; e < t.start[p + 1]; e++)
			if (!--pending[t.edge[e]])
				heap_push(heap, &nh, t.edge[e]);
	}
	int rc = m == n ? 0 : -1;
	if (!rc) {
		ox_node *tmp = malloc((unsigned)n * sizeof *tmp);
		for (int i = 0; i < n; i++)
			tmp[i] = g->nodes[order[i]];
		memcpy(g->nodes, tmp, (size_t)n * sizeof *tmp);
		free(tmp);
		ox_ir_fill_uses(g);
	}
	free(count);
	free(pending);
	free(t.prod);
	free(t.start);
	free(t.edge);
	free(heap);
	free(order);
	return rc;
}

/* ---- attributes ---- */
ox_attr *ox_ir_add_attr(ox_graph *g, ox_node *n, const char *name, int type)
{
	ox_attr *a = ox_ir_alloc(g, (n->nattr + 2) * sizeof *a);
	if (n->nattr)
		memcpy(a, n->attrs, n->nattr * sizeof *a);
	n->attrs = a;
	a += n->nattr++;
	a->name = ox_ir_strdup(g, name);
	a->type = type;
	return a;
}

void ox_ir_del_attr(ox_node *n, const char *name)
{
	for (int i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, name)) {
			memmove(&n->attrs[i], &n->attrs[i + 1], (size_t)(n->nattr - i - 1) * sizeof *n->attrs);
			n->nattr--, i--;
		}
}

ox_graph *ox_ir_epilogue(const ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_epilogue");
	return a && a->type == OX_AT_GRAPH ? a->g[0] : NULL;
}

int ox_ir_epilogue_first(const ox_node *n)
{
	if (!ox_ir_epilogue(n))
		return -1;
	/* after A, B (MatMul, MatMulSplit); X, W, B (Conv); A, B, C (Gemm) */
	return n->op == OX_OP_MatMul || n->op == OX_OP_MatMulSplit ? 2 : 3;
}

void ox_ir_add_fused_names(ox_graph *g, ox_node *n, const char *const *names, int k)
{
	ox_attr *a = NULL;
	for (int i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, "ox_fused"))
			a = &n->attrs[i];
	if (!a) {
		a = ox_ir_add_attr(g, n, "ox_fused", OX_AT_STRINGS);
		a->strs = ox_ir_alloc(g, 2 * sizeof *a->strs);
		a->strs[a->n++] = ox_ir_strdup(g, n->name);
	}
	/* a new array each time (attributes may be shared by copied nodes) */
	const char **s = ox_ir_alloc(g, (size_t)(a->n + k + 1) * sizeof *s);
	memcpy(s, a->strs, (size_t)a->n * sizeof *s);
	for (int i = 0; i < k; i++)
		s[a->n++] = ox_ir_strdup(g, names[i]);
	a->strs = s;
}

void ox_ir_add_fused(ox_graph *g, ox_node *n, const char *name)
{
	ox_ir_add_fused_names(g, n, &name, 1);
}

/* the ONNX nodes m stands for: its ox_fused list, else its own name */
static int covered(const ox_node *m, const char *const **names)
{
	const ox_attr *a = ox_attr_get(m, "ox_fused");
	if (a && a->type == OX_AT_STRINGS && a->n > 0) {
		*names = a->strs;
		return a->n;
	}
	*names = &m->name;
	return 1;
}

void ox_ir_add_fused_of(ox_graph *g, ox_node *n, const ox_node *m)
{
	const char *const *s;
	int k = covered(m, &s);
	for (int i = 0; i < k; i++)
		ox_ir_add_fused(g, n, s[i]);
}

void ox_ir_set_fused(ox_graph *g, ox_node *n, ox_node *const *m, int k)
{
	int total = 0;
	const char *const *s = NULL;
	for (int i = 0; i < k; i++)
		total += covered(m[i], &s);
	if (total == 0 || (total == 1 && !strcmp(s[0], n->name)))
		return; /* n alone: no list */
	ox_attr *a = NULL;
	for (int i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, "ox_fused"))
			a = &n->attrs[i];
	if (!a)
		a = ox_ir_add_attr(g, n, "ox_fused", OX_AT_STRINGS);
	const char **l = ox_ir_alloc(g, (size_t)(total + 1) * sizeof *l);
	a->n = 0;
	for (int i = 0; i < k; i++) {
		int c = covered(m[i], &s);
		for (int j = 0; j < c; j++)
			l[a->n++] = ox_ir_strdup(g, s[j]);
	}
	a->strs = l;
}

const ox_attr *ox_attr_get(const ox_node *n, const char *name)
{
	for (int i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int ox_tensor_same(const ox_tensor *a, const ox_tensor *b)
{
	if (a->dtype != b->dtype || a->nbytes != b->nbytes || memcmp(&a->shape, &b->shape, sizeof a->shape) ||
	    a->strs || b->strs)
		return 0;
	return !a->nbytes || !memcmp(a->data, b->data, a->nbytes);
}

int ox_attr_same(const ox_attr *a, const ox_attr *b)
{
	if (a->type != b->type || strcmp(a->name, b->name))
		return 0;
	switch (a->type) {
	case OX_AT_INT:
		return a->i == b->i;
	case OX_AT_FLOAT:
		return !memcmp(&a->f, &b->f, sizeof a->f);
	case OX_AT_STRING:
		return a->slen == b->slen && !memcmp(a->s, b->s, a->slen);
	case OX_AT_INTS:
		return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, (size_t)a->n * sizeof *a->ints));
	case OX_AT_FLOATS:
		return a->n == b->n && (!a->n || !memcmp(a->floats, b->floats, (size_t)a->n * sizeof *a->floats));
	case OX_AT_STRINGS:
		if (a->n != b->n)
			return 0;
		for (int i = 0; i < a->n; i++)
			if (strcmp(a->strs[i], b->strs[i]))
				return 0;
		return 1;
	case OX_AT_TENSOR:
		return ox_tensor_same(a->t, b->t);
	default: /* graphs, tensor lists, sparse tensors, types */
		return 0;
	}
}

static const char *const attr_type_names[] = {
	"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS", "STRINGS",
	"TENSORS", "GRAPHS", "SPARSE_TENSOR", "TYPE_PROTO",
};

static const ox_attr *typed(const ox_node *n, const char *name, int want)
{
	const ox_attr *a = ox_attr_get(n, name);
	if (!a || a->type == want || (want == OX_AT_FLOAT && a->type == OX_AT_INT))
		return a;
	if (!mistyped.set) {
		mistyped.set = 1;
		mistyped.node = *n;
		mistyped.attr = a->name;
		mistyped.want = want;
		mistyped.got = a->type;
	}
	return NULL;
}

static int same_node(const ox_node *a, const ox_node *b)
{
	return a->name == b->name && a->optype == b->optype;
}

int ox_attr_report(const ox_graph *g)
{
	if (!mistyped.set)
		return 0;
	mistyped.set = 0;
	return ox_error(g, &mistyped.node, "attribute '%s' must be %s, got %s", mistyped.attr,
			attr_type_names[mistyped.want], attr_type_names[mistyped.got]);
}

int64_t ox_attr_int(const ox_node *n, const char *name, int64_t dflt)
{
	const ox_attr *a = typed(n, name, OX_AT_INT);
	return a ? a->i : dflt;
}

float ox_attr_float(const ox_node *n, const char *name, float dflt)
{
	const ox_attr *a = typed(n, name, OX_AT_FLOAT);
	if (a && a->type == OX_AT_FLOAT)
		return a->f;
	if (a && a->type == OX_AT_INT)
		return (float)a->i;
	return dflt;
}

const char *ox_attr_str(const ox_node *n, const char *name, const char *dflt)
{
	const ox_attr *a = typed(n, name, OX_AT_STRING);
	return a ? a->s : dflt;
}

int ox_attr_ints(const ox_node *n, const char *name, const int64_t **v)
{
	const ox_attr *a = typed(n, name, OX_AT_INTS);
	if (!a) {
		*v = NULL;
		return -1;
	}
	*v = a->ints;
	return a->n;
}

/* ---- op table ---- */
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) \
	int infer(ox_graph *, ox_node *); \
	int eval(ox_graph *, ox_node *, ox_tensor **, ox_tensor **);
#include "ops.def"
#undef OP
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) \
	[OX_OP_##id] = {name, minin, maxin, minout, maxout, flags, infer, eval},
const ox_opinfo ox_ops[OX_NOPS] = {
#include "ops.def"
};
#undef OP

const char *ox_op_domain(int op)
{
	unsigned f = ox_ops[op].flags;
	return f & OX_F_ML ? "ai.onnx.ml" : f & OX_F_PREVIEW ? "ai.onnx.preview"
	     : f & OX_F_TRAINING ? "ai.onnx.preview.training" : f & OX_F_MS ? "com.microsoft"
	     : f & OX_F_INTERNAL ? "onnxcc" : "";
}

int ox_op_lookup(const char *domain, const char *optype)
{
	if (!domain || !strcmp(domain, "ai.onnx"))
		domain = "";
	for (int i = 0; i < OX_NOPS; i++)
		if (!strcmp(ox_ops[i].name, optype) && !strcmp(ox_op_domain(i), domain))
			return i;
	return OX_OP_UNKNOWN;
}

/* ---- diagnostics ---- */
int ox_error_hold;
char ox_error_held[1024];

int ox_error(const ox_graph *g, const ox_node *n, const char *fmt, ...)
{
	va_list ap;
	if (mistyped.set && !ox_error_hold) {
		int cause = n && same_node(n, &mistyped.node);
		ox_attr_report(g);
		if (cause)
			return -1; /* this error follows from the attribute's */
	}
	char msg[1024];
	size_t at = 0;
	if (n && n->name[0])
		at = (size_t)snprintf(msg, sizeof msg, "node '%s' (%s, opset %d): ", n->name, n->optype, n->opset);
	else if (n && g && n >= g->nodes && n < g->nodes + g->nnodes)
		at = (size_t)snprintf(msg, sizeof msg, "node #%d (%s, opset %d): ", (int)(n - g->nodes), n->optype,
				      n->opset);
	else if (n)
		at = (size_t)snprintf(msg, sizeof msg, "node (%s, opset %d): ", n->optype, n->opset);
	if (at >= sizeof msg)
		at = sizeof msg - 1;
	va_start(ap, fmt);
	vsnprintf(msg + at, sizeof msg - at, fmt, ap);
	va_end(ap);
	if (ox_error_hold) {
		if (!ox_error_held[0])
			snprintf(ox_error_held, sizeof ox_error_held, "%s", msg);
		return -1;
	}
	fprintf(stderr, "%s: %s\n", g ? g->path : "onnxcc", msg);
	return -1;
}

void ox_note(const char *fmt, ...)
{
	if (!ox_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

_Noreturn void ox_die_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "onnxcc: internal error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
