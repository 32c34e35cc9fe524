/* outline.c: the regions of control nodes become their bodies.
 *
 * Requires: fold done. A control node (an If whose condition, a Loop or
 * Scan whose length is known only at run time or too long to unroll: an
 * ox_ctrl in n->aux, opt/expand.c) had the nodes of its regions inlined
 * into the graph, each tagged with its region (ox_node.region), so that
 * fold inferred them like any other. Here, innermost first, the nodes of
 * each region move into a graph of their own (ox_ir_new_sub): its inputs
 * are what an iteration starts from (a Loop's or Scan's formal values, the
 * outputs of the region's CtrlHead, which goes) and then every value it
 * reads from around it (captured); its outputs are what the node waited
 * for. The node then reads its own inputs and then each body's captured
 * values (the counts in its attribute ox_capt), and holds the bodies in
 * ox_bodies. Each body runs the rest of the pipeline (optimized and planned)
 * at once, and the node gets the scratch its emitter needs
 * (ox_opt_ctrl_layout: the bodies' arena, a loop's carried values twice).
 * Invalidates: node positions (compacts, sorts).
 */
#include "expand.h"
#include <stdlib.h>
#include <string.h>

#define ALIGN 64

static int64_t align(int64_t x)
{
	return (x + ALIGN - 1) & ~(int64_t)(ALIGN - 1);
}

/* bytes a value may take (its most), aligned */
static int64_t most_bytes(const ox_graph *g, const ox_value *v)
{
	int64_t m = ox_value_max_storage(g, v);
	return align((m < 0 ? 0 : m) * (int64_t)ox_dtype_size(v->dtype));
}

int ox_opt_ctrl_layout(ox_graph *g, const ox_node *n, int64_t *off)
{
	const ox_attr *b = ox_attr_get(n, "ox_bodies");
	if (!b || b->type != OX_AT_GRAPHS)
		ox_die("outline: node '%s' has no body", n->name);
	int64_t at = 0;
	for (int k = 0; k < b->n; k++)
		if (b->g[k]->arena_size > at)
			at = b->g[k]->arena_size;
	at = align(at);
	int nb = 0;
	if (n->op == OX_OP_Loop) {
		/* each carried value twice: the current and the next; a step of
		 * each scan output nothing reads */
		int nc = ox_ctrl_nin0(n) - 2;
		const ox_graph *body = b->g[0];
		for (int j = 0; j < nc; j++) {
			/* (a sequence appended to is a scan output: none) */
			int64_t s = n->in[2 + j] >= 0 ? most_bytes(g, &g->vals[n->in[2 + j]]) : 0;
			off[nb++] = at, at += s;
			off[nb++] = at, at += s;
		}
		for (int s = 0; 1 + s < body->noutputs; s++)
			if ((s >= nc || n->in[2 + s] < 0) && n->out[s] < 0)
				off[nb++] = at, at += most_bytes(body, &body->vals[body->outputs[1 + s]]);
		/* last: the iteration number, the condition in and out as the
		 * CUDA target's body reads them, on the device (codegen/c/emit_ctrl.c) */
		off[nb++] = at = align(at), at += 24;
	} else if (n->op == OX_OP_Scan) {
		int nx = (int)ox_attr_int(n, "num_scan_inputs", 0), nstate = ox_ctrl_nin0(n) - nx;
		const ox_graph *body = b->g[0];
		for (int j = 0; j < nstate; j++) {
			int64_t s = most_bytes(g, &g->vals[n->in[j]]);
			off[nb++] = at, at += s;
			off[nb++] = at, at += s;
		}
		/* a step's slice of each scan input and output, where it is not a
		 * contiguous run of the whole tensor (its axis is not 0) */
		for (int k = 0; k < nx; k++)
			off[nb++] = at, at += most_bytes(body, &body->vals[body->inputs[nstate + k]]);
		for (int k = 0; k < body->noutputs - nstate; k++)
			off[nb++] = at, at += most_bytes(body, &body->vals[body->outputs[nstate + k]]);
	}
	off[nb] = at;
	return nb;
}

int ox_ctrl_nin0(const ox_node *n)
{
	const int64_t *c;
	int m = ox_attr_ints(n, "ox_capt", &c), t = 0;
	for (int k = 0; k < m; k++)
		t += (int)c[k];
	return n->nin - t;
}

/* ---- moving one region ---- */

typedef struct {
	ox_graph *g, *body;
	ox_id *map;      /* value of g -> value of body, -1 */
	ox_id *capt;     /* values of g the body captures, in input order */
	int ncapt;
} mover;

static ox_id copy_value(ox_graph *body, const ox_value *v, int kind)
{
	ox_id b = ox_ir_add_value(body, v->name, kind);
	ox_value *w = &body->vals[b];
	w->dtype = v->dtype;
	w->has_shape = v->has_shape;
	w->shape = v->shape;
	w->cap = v->cap;
	w->sv = v->sv;
	w->nsv = v->nsv;
	w->dyn = v->dyn;
	return b;
}

/* the body's value for v of g: what the region made, a constant (shared
 * data), or a new captured input */
static ox_id body_val(mover *M, ox_id v)
{
	if (M->map[v] >= 0)
		return M->map[v];
	const ox_value *x = &M->g->vals[v];
	if (x->kind == OX_V_CONST) {
		M->map[v] = ox_ir_add_const(M->body, x->name, x->data);
	} else {
		M->map[v] = copy_value(M->body, x, OX_V_INPUT);
		M->capt = realloc(M->capt, (size_t)(M->ncapt + 1) * sizeof *M->capt);
		M->capt[M->ncapt++] = v;
	}
	return M->map[v];
}

/* does a dim of v depend on a data symbol that a node of region r computes? */
static int region_dim(ox_graph *g, const ox_value *v, const char *const *defs, int ndefs)
{
	for (int d = 0; d < v->shape.rank; d++) {
		char e[512];
		ox_dim_str(g, v->shape.d[d], e, sizeof e);
		for (int k = 0; k < ndefs; k++) {
			size_t l = strlen(defs[k]);
			for (const char *p = strstr(e, defs[k]); p; p = strstr(p + 1, defs[k]))
				if (p[l] == ':' && (p == e || p[-1] == '$'))
					return 1;
		}
	}
	return 0;
}

/* Move region r's nodes into a new body of control node ci; outs: the
 * values of g that are its outputs. Returns the body, or NULL after an
 * error. */
static ox_graph *move_region(ox_graph *g, int ci, int r, const ox_ctrl *c, int with_formals, const ox_id *outs,
			     int nouts, const char *suffix, ox_id **capt, int *ncapt)
{
	ox_node *C = &g->nodes[ci];
	ox_graph *body = ox_ir_new_sub(g);
	char name[600];
	snprintf(name, sizeof name, "%.500s/%s", C->name[0] ? C->name : C->optype, suffix);
	body->name = ox_ir_strdup(g, name);
	if (g->regions[r].failed) {
		/* a branch the shapes given cannot take: nothing to run (expand.c) */
		for (int i = 0; i < g->nnodes; i++)
			if (g->nodes[i].region == r)
				g->nodes[i].dead = 1;
		body->unreachable = g->regions[r].failed;
		*capt = NULL;
		*ncapt = 0;
		return body;
	}
	mover M = {g, body, calloc((size_t)g->nvals + 1, sizeof *M.map), NULL, 0};
	for (int i = 0; i < g->nvals; i++)
		M.map[i] = -1;
	int nformal = with_formals ? c->nformal : 0;
	ox_id *formals = calloc((size_t)nformal + 1, sizeof *formals);
	for (int j = 0; j < nformal; j++)
		formals[j] = M.map[c->formal[j]] = copy_value(body, &g->vals[c->formal[j]], OX_V_INPUT);
	/* the names of the values whose producers are in the region */
	const char **defs = NULL;
	int ndefs = 0;
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		if (n->dead || n->region != r)
			continue;
		n->dead = 1;
		if (n->op == OX_OP_CtrlHead)
			continue;
		ox_id id = ox_ir_add_node(body, n->op, n->optype, n->name, n->nin, n->nout);
		ox_node *bn = &body->nodes[id];
		n = &g->nodes[i];
		bn->domain = n->domain;
		bn->opset = n->opset;
		bn->nattr = n->nattr;
		bn->attrs = n->attrs;
		bn->aux = n->aux;
		bn->scratch = n->scratch;
		bn->folded = 1;
		for (int k = 0; k < n->nin; k++)
			body->nodes[id].in[k] = n->in[k] < 0 ? -1 : body_val(&M, n->in[k]);
		for (int k = 0; k < n->nout; k++) {
			if (n->out[k] < 0) {
				body->nodes[id].out[k] = -1;
				continue;
			}
			ox_id b = copy_value(body, &g->vals[n->out[k]], OX_V_INTERNAL);
			body->vals[b].producer = id;
			body->nodes[id].out[k] = b;
			M.map[n->out[k]] = b;
			defs = realloc(defs, (size_t)(ndefs + 1) * sizeof *defs);
			defs[ndefs++] = g->vals[n->out[k]].name;
		}
	}
	body->outputs = ox_ir_alloc(body, (size_t)(nouts + 1) * sizeof *body->outputs);
	body->output_names = ox_ir_alloc(body, (size_t)(nouts + 1) * sizeof *body->output_names);
	body->noutputs = nouts;
	int bad = 0;
	for (int k = 0; k < nouts; k++) {
		body->outputs[k] = body_val(&M, outs[k]);
		body->output_names[k] = body->vals[body->outputs[k]].name;
		/* a loop's scan outputs stack the steps' results: one shape for all */
		if (C->op != OX_OP_If && region_dim(g, &g->vals[outs[k]], defs, ndefs) && !bad) {
			/* hint at what makes a Loop's length a run-time one (a Scan's
			 * is its inputs' dim) */
			int rt = C->op == OX_OP_Loop && C->in[0] >= 0 && g->vals[C->in[0]].kind == OX_V_CONST;
			ox_need_const(g, C, C->op == OX_OP_Loop ? rt : 0,
				      "body output %d has a shape that its body computes from data at each step: "
				      "a loop's results must keep one shape", k);
			bad = 1;
		}
	}
	body->ninputs = nformal + M.ncapt;
	body->inputs = ox_ir_alloc(body, (size_t)(body->ninputs + 1) * sizeof *body->inputs);
	memcpy(body->inputs, formals, (size_t)nformal * sizeof *formals);
	for (int k = 0; k < M.ncapt; k++)
		body->inputs[nformal + k] = M.map[M.capt[k]];
	*capt = M.capt;
	*ncapt = M.ncapt;
	free(M.map), free(formals), free(defs);
	ox_ir_fill_uses(body);
	return bad ? NULL : body;
}

static int outline_node(ox_graph *g, int ci, int check)
{
	ox_node *C = &g->nodes[ci];
	ox_ctrl *c = C->aux;
	int nb = c->kind == OX_RG_THEN ? 2 : 1, nin0 = c->nin0, nout = C->nout;
	ox_graph *bodies[2] = {NULL, NULL};
	ox_id *capt[2] = {NULL, NULL};
	int ncapt[2] = {0, 0}, rc = -1;
	static const char *const names[] = {"then", "else", "body"};
	for (int b = 0; b < nb; b++) {
		C = &g->nodes[ci];
		const ox_id *outs = c->kind == OX_RG_THEN ? C->in + nin0 + b * nout : C->in + nin0;
		int nouts = c->kind == OX_RG_THEN ? nout : C->nin - nin0;
		bodies[b] = move_region(g, ci, c->r[b], c, c->kind != OX_RG_THEN, outs, nouts,
					names[c->kind == OX_RG_THEN ? b : 2], &capt[b], &ncapt[b]);
		if (!bodies[b])
			goto out;
	}
	/* the node reads its own inputs, then each body's captured values */
	C = &g->nodes[ci];
	ox_id *in = ox_ir_alloc(g, (size_t)(nin0 + ncapt[0] + ncapt[1] + 1) * sizeof *in);
	memcpy(in, C->in, (size_t)nin0 * sizeof *in);
	for (int b = 0, at = nin0; b < nb; b++)
		for (int k = 0; k < ncapt[b]; k++)
			in[at++] = capt[b][k];
	C->in = in;
	C->nin = nin0 + ncapt[0] + ncapt[1];
	C->aux = NULL;
	ox_attr *a = ox_ir_add_attr(g, C, "ox_bodies", OX_AT_GRAPHS);
	a->n = nb;
	a->g = ox_ir_alloc(g, (size_t)(nb + 1) * sizeof *a->g);
	memcpy(a->g, bodies, (size_t)nb * sizeof *bodies);
	if (c->kind == OX_RG_LOOP && c->stacked) {
		/* the carried sequences appended to: scan outputs (emit_ctrl.c) */
		int nc = nin0 - 2, ns = 0;
		int64_t *st = ox_ir_alloc(g, (size_t)(nc + 1) * sizeof *st);
		for (int j = 0; j < nc; j++)
			if (c->stacked[j])
				st[ns++] = j;
		if (ns) {
			ox_attr *as = ox_ir_add_attr(g, C, "ox_stacked", OX_AT_INTS);
			as->n = ns;
			as->ints = st;
		}
	}
	int64_t cnt[2] = {ncapt[0], ncapt[1]};
	ox_attr *ac = ox_ir_add_attr(g, C, "ox_capt", OX_AT_INTS);
	ac->n = nb;
	ac->ints = ox_ir_alloc(g, 3 * sizeof *ac->ints);
	memcpy(ac->ints, cnt, (size_t)nb * sizeof *cnt);
	/* each body through the rest of the pipeline, then the node's scratch */
	for (int b = 0; b < nb; b++)
		if (ox_opt_run_from(bodies[b], check, "outline"))
			goto out;
	C = &g->nodes[ci];
	int64_t *off = malloc((size_t)(2 * C->nin + bodies[0]->noutputs + 8) * sizeof *off);
	int nbuf = ox_opt_ctrl_layout(g, C, off);
	if (off[nbuf] > 0)
		ox_ir_add_scratch(g, &g->nodes[ci], off[nbuf]);
	free(off);
	rc = 0;
out:
	free(capt[0]), free(capt[1]);
	return rc;
}

int ox_opt_outline(ox_graph *g)
{
	g->cur_region = 0;
	if (g->nregions <= 1)
		return 0;
#ifdef NDEBUG
	int check = 0;
#else
	int check = 1;
#endif
	int maxd = 0;
	for (int r = 1; r < g->nregions; r++)
		if (g->regions[r].depth > maxd)
			maxd = g->regions[r].depth;
	/* innermost first: a body moves into its enclosing region's body whole */
	for (int d = maxd; d >= 1; d--)
		for (int i = 0; i < g->nnodes; i++) {
			ox_node *n = &g->nodes[i];
			ox_ctrl *c = n->aux;
			if (n->dead || (n->op != OX_OP_If && n->op != OX_OP_Loop && n->op != OX_OP_Scan) || !c ||
			    !c->kind || g->regions[c->r[0]].depth != d)
				continue;
			if (outline_node(g, i, check))
				return -1;
		}
	for (int i = 0; i < g->nnodes; i++)
		g->nodes[i].region = 0;
	free(g->regions);
	g->regions = NULL;
	g->nregions = 0;
	ox_ir_compact(g);
	if (ox_ir_toposort(g))
		ox_die("outline: cycle");
	return 0;
}
