/* cse.c: what is computed twice is computed once.
 *
 * Exporters repeat work: every layer of a PyTorch transformer builds the
 * same attention mask from the same input, every layer has its own copy
 * of the same scalar constants. Constants of one dtype, shape and bytes
 * become one value; then, in topological order, a node that reads the
 * same inputs as an earlier node of the same op, domain and opset, with
 * equal attributes, has its outputs replaced by that node's (a hash over
 * op and inputs finds the candidates). Left alone: nodes with subgraph,
 * tensor-sequence or unknown-kind attributes, Dropout, nodes that define
 * data dims (their symbols are named after their own outputs), sequences,
 * graph outputs (each keeps its value). Requires: fold (topological
 * order). Invalidates: uses (refilled), node positions (compacted).
 */
#include "opt.h"
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t x)
{
	return (h ^ x) * 0x100000001b3ull;
}

static uint64_t bytes_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = mix(h, s[i]);
	return h;
}

/* may n be merged with an equal node at all? */
static int mergeable(const ox_graph *g, const ox_node *n)
{
	if (n->dead || n->op < 0 || n->op >= OX_NOPS || n->op == OX_OP_Dropout || n->env || n->aux || n->scratch ||
	    n->region)
		return 0;
	for (int i = 0; i < n->nattr; i++) {
		int t = n->attrs[i].type;
		if (t == OX_AT_GRAPH || t == OX_AT_GRAPHS || t == OX_AT_TENSORS || t == OX_AT_SPARSE || t == OX_AT_TYPE)
			return 0;
	}
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && g->vals[n->in[k]].kind == OX_V_AGG)
			return 0;
	for (int k = 0; k < n->nout; k++) {
		const ox_value *v = n->out[k] >= 0 ? &g->vals[n->out[k]] : NULL;
		if (!v)
			continue;
		if (v->kind != OX_V_INTERNAL || v->is_output || v->dyn || v->stacked || !v->has_shape)
			return 0;
		for (int d = 0; d < v->shape.rank; d++)
			if (ox_dim_defined_by(g, v->shape.d[d], n->out[k]))
				return 0;
	}
	return 1;
}

static int same_node(const ox_graph *g, const ox_node *a, const ox_node *b)
{
	if (a->op != b->op || a->opset != b->opset || strcmp(a->domain, b->domain) || a->nin != b->nin ||
	    a->nout != b->nout || a->nattr != b->nattr || memcmp(a->in, b->in, (size_t)a->nin * sizeof *a->in))
		return 0;
	/* outputs alike: present, and of one type, shape and layout (the
	 * layout pass chose each value's for its readers) */
	for (int k = 0; k < a->nout; k++) {
		if ((a->out[k] < 0) != (b->out[k] < 0))
			return 0;
		const ox_value *x = a->out[k] >= 0 ? &g->vals[a->out[k]] : NULL, *y = x ? &g->vals[b->out[k]] : NULL;
		if (x && (x->dtype != y->dtype || x->layout != y->layout || memcmp(x->lp, y->lp, sizeof x->lp) ||
			  memcmp(&x->shape, &y->shape, sizeof x->shape)))
			return 0;
	}
	for (int i = 0; i < a->nattr; i++) {
		int j = 0;
		while (j < b->nattr && strcmp(a->attrs[i].name, b->attrs[j].name))
			j++;
		if (j == b->nattr || !ox_attr_same(&a->attrs[i], &b->attrs[j]))
			return 0;
	}
	return 1;
}

/* a table of ids by hash, open addressing; -1 empty */
typedef struct {
	int *slot;
	uint64_t *key;
	size_t cap;
} table;

static void table_init(table *t, size_t n)
{
	t->cap = 16;
	while (t->cap < 2 * n + 1)
		t->cap *= 2;
	t->slot = malloc(t->cap * sizeof *t->slot);
	t->key = malloc(t->cap * sizeof *t->key);
	if (!t->slot || !t->key)
		ox_die("cse: out of memory");
	memset(t->slot, -1, t->cap * sizeof *t->slot);
}

static void table_free(table *t)
{
	free(t->slot), free(t->key);
}

/* the first id under hash h for which eq(id) holds, else -1 after adding id */
static int table_find_add(table *t, uint64_t h, int id, int (*eq)(const void *, int, int), const void *ctx)
{
	size_t i = h & (t->cap - 1);
	for (; t->slot[i] >= 0; i = (i + 1) & (t->cap - 1))
		if (t->key[i] == h && eq(ctx, t->slot[i], id))
			return t->slot[i];
	t->slot[i] = id, t->key[i] = h;
	return -1;
}

/* n's inputs through to[] (each value or the one it became) */
static void rename_inputs(ox_node *n, const ox_id *to)
{
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0)
			n->in[k] = to[n->in[k]];
}

static int const_eq(const void *ctx, int a, int b)
{
	const ox_graph *g = ctx;
	return ox_tensor_same(g->vals[a].data, g->vals[b].data);
}

static int node_eq(const void *ctx, int a, int b)
{
	const ox_graph *g = ctx;
	return same_node(g, &g->nodes[a], &g->nodes[b]);
}

int ox_opt_cse(ox_graph *g)
{
	ox_ir_fill_uses(g);
	/* equal constants: one value (graph outputs and initializers that are
	 * inputs too keep theirs) */
	ox_id *to = malloc((size_t)(g->nvals + 1) * sizeof *to);
	if (!to)
		ox_die("cse: out of memory");
	int merged = 0;
	table t;
	table_init(&t, (size_t)g->nvals);
	for (ox_id v = 0; v < g->nvals; v++) {
		const ox_value *x = &g->vals[v];
		to[v] = v;
		if (x->kind != OX_V_CONST || !x->data || x->data->strs || x->is_output || !x->nuses || x->layout)
			continue;
		uint64_t h = mix(mix(bytes_hash(x->data->data, x->data->nbytes), (uint64_t)x->dtype),
				 bytes_hash(&x->data->shape, sizeof x->data->shape));
		int first = table_find_add(&t, h, v, const_eq, g);
		if (first >= 0)
			to[v] = first, merged++;
	}
	table_free(&t);
	/* equal nodes, in order: an earlier one's outputs for a later one's */
	table_init(&t, (size_t)g->nnodes);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (!mergeable(g, n))
			continue;
		/* (its inputs renamed first: the constants and the equal nodes
		 * before it merged) */
		rename_inputs(n, to);
		uint64_t h = mix(mix((uint64_t)n->op, (uint64_t)n->nin), (uint64_t)n->nattr);
		for (int k = 0; k < n->nin; k++)
			h = mix(h, (uint64_t)(int64_t)n->in[k]);
		int first = table_find_add(&t, h, i, node_eq, g);
		if (first < 0)
			continue;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				to[n->out[k]] = g->nodes[first].out[k];
		n->dead = 1;
		merged++;
	}
	table_free(&t);
	if (merged) { /* (the other nodes' inputs) */
		for (int i = 0; i < g->nnodes; i++)
			rename_inputs(&g->nodes[i], to);
		ox_ir_compact(g);
	}
	free(to);
	ox_ir_fill_uses(g);
	return 0;
}
