/* plan.c: the schedule and the memory plan (one static arena).
 *
 * Requires: constant or bounded shapes (opt/bounds.c), a topological order.
 * A value with run-time dims is planned at its most (ox_value_max_storage).
 * Storage classes: the outputs of a view node (Reshape-like ops, contiguous
 * Slice/Split/Gather pieces, Transposes that move only size-1 dims; see
 * ox_plan_view) are input 0's bytes, so a value and its views are one class,
 * stored once; a class rooted at a graph input or a constant lives there,
 * outside the arena. An in-place node (OX_F_INPLACE, an input of the output's
 * exact shape whose class dies at this node and is read by no other input of
 * it) writes into that input's class. A class lives from its first
 * definition to the last use of any member (graph outputs: to the end,
 * position nnodes). The lower bound is the most class bytes live at one step.
 * A Concat along an axis with only 1s before it can have its inputs stored
 * inside its output (their producers write there; the Concat is no code,
 * ox_plan_is_noop) where that does not raise the peak. Schedules tried:
 * the imported order and three memory-aware list orders, each with and
 * without Concat inputs in place; placements: six strategies; the smallest
 * arena wins (ties: the lower bound, then fewer copies, then the earlier
 * candidate), so the result is never worse than first-fit in the imported
 * order. Blocks are 64-byte aligned.
 * Invalidates: node order (the nodes are permuted into the chosen schedule).
 */
#include "opt.h"
#include "../ir/family.h"
#include <stdlib.h>
#include <string.h>

#define ALIGN 64

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		ox_die("out of memory");
	return p;
}

/* bytes a value's storage takes: at its most when it has run-time dims
 * (the arena is planned for the largest shapes a program takes) */
static int64_t raw_bytes(const ox_graph *g, const ox_value *v)
{
	return ox_value_max_storage(g, v) * (int64_t)ox_dtype_size(v->dtype);
}

static int64_t vbytes(const ox_graph *g, const ox_value *v)
{
	return (raw_bytes(g, v) + ALIGN - 1) & ~(int64_t)(ALIGN - 1);
}

/* ---- views ---- */

/* A box of out->d elements starting at start[] inside a tensor of shape in
 * (same rank, unit steps) is one contiguous run of memory when every axis
 * before the last partial one has extent 1. Sets *elem to its first
 * element's index. */
static int contiguous_box(const ox_shape *in, const int64_t *start, const ox_shape *out, int64_t *elem)
{
	*elem = 0;
	if (ox_shape_numel(out) == 0)
		return 1;
	int last = -1;
	for (int i = 0; i < in->rank; i++)
		if (out->d[i] != in->d[i])
			last = i;
	for (int i = 0; i < last; i++)
		if (out->d[i] != 1)
			return 0;
	int64_t stride = 1;
	for (int i = in->rank - 1; i >= 0; i--) {
		*elem += start[i] * stride;
		stride *= in->d[i];
	}
	return 1;
}

static int slice_view(ox_graph *g, const ox_node *n, const ox_value *x, const ox_value *y, int64_t *elem)
{
	int64_t step[OX_MAX_RANK];
	ox_dim start[OX_MAX_RANK], len[OX_MAX_RANK];
	if (y->shape.rank != x->shape.rank || ox_ir_data_slice(g, n, &x->shape, start, step, len, NULL))
		return 0;
	for (int i = 0; i < x->shape.rank; i++) {
		if (len[i] != y->shape.d[i])
			return 0; /* not what inference said: leave it to the emitter */
		if (step[i] != 1 && len[i] > 1)
			return 0;
	}
	return contiguous_box(&x->shape, start, &y->shape, elem);
}

/* A Slice from 0 by 1 whose box is x's first elements: it shortens one
 * axis at most, those before it of extent 1 (pe[:n] of a position table,
 * n a run-time length); a view at offset 0 whatever its lengths */
static int prefix_view(ox_graph *g, const ox_node *n, const ox_value *x, const ox_value *y)
{
	int64_t step[OX_MAX_RANK];
	ox_dim start[OX_MAX_RANK], len[OX_MAX_RANK];
	if (n->op != OX_OP_Slice || y->shape.rank != x->shape.rank ||
	    ox_ir_data_slice(g, n, &x->shape, start, step, len, NULL))
		return 0;
	int cut = -1;
	for (int i = 0; i < x->shape.rank; i++) {
		if (start[i] != 0 || len[i] != y->shape.d[i] || step[i] != 1)
			return 0;
		if (len[i] != x->shape.d[i] && cut >= 0)
			return 0;
		if (len[i] != x->shape.d[i])
			cut = i;
	}
	for (int i = 0; i < cut; i++)
		if (x->shape.d[i] != 1)
			return 0;
	return 1;
}

/* Piece k of a Split along an axis whose outer dims are all 1. */
static int split_view(ox_graph *g, const ox_node *n, int k, const ox_value *x, int64_t *elem)
{
	int axis;
	ox_dim sizes[64];
	if (n->nout > 64 || ox_ir_data_split(g, n, &axis, sizes))
		return 0;
	if (axis < 0 || axis >= x->shape.rank)
		return 0;
	for (int i = 0; i < axis; i++)
		if (x->shape.d[i] != 1)
			return 0;
	int64_t inner = 1, at = 0;
	for (int i = axis + 1; i < x->shape.rank; i++)
		inner *= x->shape.d[i];
	for (int j = 0; j < k; j++) {
		if (sizes[j] < 0)
			return 0;
		at += sizes[j];
	}
	if (sizes[k] < 0 || at + sizes[k] > x->shape.d[axis])
		return 0;
	*elem = at * inner;
	return 1;
}

/* Gather of one constant index along an axis whose outer dims are all 1.
 * Index 0 is x's first elements: offset 0 whatever the other dims, with
 * run-time dims too (the keys of a stacked [2, ...] KV cache); another
 * needs x's shape constant. */
static int gather_view(ox_graph *g, const ox_node *n, const ox_value *x, const ox_value *y, int64_t *elem)
{
	const ox_tensor *t = ox_in_const(g, n, 1);
	if (!t || ox_tensor_numel(t) != 1 || !ox_dtype_is_int(t->dtype))
		return 0;
	int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), x->shape.rank);
	if (axis < 0)
		return 0;
	for (int i = 0; i < axis; i++)
		if (x->shape.d[i] != 1)
			return 0;
	int64_t inner = 1, idx = ox_tensor_get_i64(t, 0), d = x->shape.d[axis];
	*elem = 0;
	if (!ox_shape_is_const(&x->shape) || !ox_shape_is_const(&y->shape))
		return idx == 0;
	for (int i = axis + 1; i < x->shape.rank; i++)
		inner *= x->shape.d[i];
	if (idx < 0)
		idx += d;
	if (idx < 0 || idx >= d || ox_shape_numel(&y->shape) != inner)
		return 0;
	*elem = idx * inner;
	return 1;
}

/* A Transpose that keeps the order of the dims bigger than 1. */
static int transpose_view(ox_graph *g, const ox_node *n, const ox_value *x)
{
	int perm[OX_MAX_RANK], prev = -1;
	if (ox_ir_data_perm(g, n, x->shape.rank, perm))
		return 0;
	for (int i = 0; i < x->shape.rank; i++) {
		if (x->shape.d[perm[i]] == 1)
			continue;
		if (perm[i] < prev)
			return 0;
		prev = perm[i];
	}
	return 1;
}

/* a Reorder between the plain and the channel-blocked layout of images of
 * one pixel ([N][C/b][1][1][b], C rounded up to b): the plain [N][C] is a
 * prefix of its bytes when the channels fill whole blocks, or, from
 * blocked to plain, when there is one image (its padding lanes last; the
 * other way they must be written, as zeros). A global pool's output on
 * its way to a Gemm. And a channels-last Reorder (ox_nhwc) of one block of
 * exactly the channels (opt/layout.c channels_last). */
static int reorder_view(const ox_node *n, const ox_value *x, const ox_value *y)
{
	/* channels last from one block of exactly the channels: its bytes */
	if (ox_attr_int(n, "ox_nhwc", 0))
		return x->layout == OX_L_BLOCKED && y->layout == OX_L_PLAIN && x->shape.rank == 4 &&
		       x->lp[0] == x->shape.d[1];
	const ox_value *b = x->layout == OX_L_BLOCKED ? x : y, *p = b == x ? y : x;
	if (b->layout != OX_L_BLOCKED || p->layout != OX_L_PLAIN || b->shape.rank != 4 || b->lp[0] <= 0)
		return 0;
	const ox_dim *d = b->shape.d;
	return d[2] * d[3] == 1 && (d[1] % b->lp[0] == 0 || (d[0] == 1 && b == x));
}

int ox_plan_view(ox_graph *g, const ox_node *n, int k, int64_t *off)
{
	*off = 0;
	if (n->nin < 1 || n->in[0] < 0 || k < 0 || k >= n->nout || n->out[k] < 0)
		return 0;
	const ox_value *x = &g->vals[n->in[0]], *y = &g->vals[n->out[k]];
	if (!x->has_shape || !y->has_shape)
		return 0;
	if (x->dtype != y->dtype || x->dtype == OX_STRING || !ox_dtype_size(x->dtype))
		return 0;
	/* with run-time dims: the reshape-like ops, whose element count the
	 * inference (or, for dims read from data, the node at run time)
	 * checked to be their input's, a Slice or Gather of x's first elements
	 * (prefix_view, gather_view), and a Reorder whose two layouts are the same bytes
	 * (reorder_view: its run-time dim the batch); other offsets would be
	 * run-time values */
	int64_t elem = 0;
	if (!ox_shape_is_const(&x->shape) || !ox_shape_is_const(&y->shape))
		return k == 0 && (n->op == OX_OP_Reorder ? reorder_view(n, x, y)
						       : ((ox_ops[n->op].flags & OX_F_VIEW) || prefix_view(g, n, x, y) ||
							  (n->op == OX_OP_Gather && gather_view(g, n, x, y, &elem))) &&
								 !x->layout && !y->layout);
	int ok = 0;
	if (ox_ops[n->op].flags & OX_F_VIEW)
		ok = k == 0 && ox_shape_numel(&x->shape) == ox_shape_numel(&y->shape);
	else if (n->op == OX_OP_Slice)
		ok = slice_view(g, n, x, y, &elem);
	else if (n->op == OX_OP_Split)
		ok = split_view(g, n, k, x, &elem);
	else if (n->op == OX_OP_Gather)
		ok = gather_view(g, n, x, y, &elem);
	else if (n->op == OX_OP_Transpose)
		ok = transpose_view(g, n, x);
	else if (n->op == OX_OP_Reorder)
		ok = reorder_view(n, x, y);
	*off = ok ? elem * (int64_t)ox_dtype_size(x->dtype) : 0;
	return ok;
}

int ox_plan_is_view_node(ox_graph *g, const ox_node *n)
{
	int any = 0;
	for (int k = 0; k < n->nout; k++) {
		int64_t off;
		if (n->out[k] < 0)
			continue;
		if (!ox_plan_view(g, n, k, &off))
			return 0;
		any = 1;
	}
	return any;
}

ox_id ox_plan_storage(ox_graph *g, ox_id v, int64_t *off)
{
	*off = 0;
	for (;;) {
		ox_id p = g->vals[v].producer;
		if (p < 0 || p >= g->nnodes)
			return v;
		const ox_node *n = &g->nodes[p];
		int k = 0;
		while (k < n->nout && n->out[k] != v)
			k++;
		int64_t o;
		if (k == n->nout || !ox_plan_is_view_node(g, n) || !ox_plan_view(g, n, k, &o))
			return v;
		*off += o;
		v = n->in[0];
	}
}

/* Byte offset of input k inside the output of a Concat along an axis with
 * only 1s before it, where every input is one contiguous run (of the
 * output's layout). */
static int concat_piece(ox_graph *g, const ox_node *n, int k, int64_t *off)
{
	const ox_value *o = n->nout == 1 && n->out[0] >= 0 ? &g->vals[n->out[0]] : NULL;
	if (n->op != OX_OP_Concat || !o || !o->has_shape || !ox_shape_is_const(&o->shape))
		return 0;
	int r = o->shape.rank, axis = ox_norm_axis(ox_attr_int(n, "axis", 1), r);
	if (axis < 0)
		return 0;
	for (int i = 0; i < axis; i++)
		if (o->shape.d[i] != 1)
			return 0;
	int64_t inner = (int64_t)ox_dtype_size(o->dtype), at = 0;
	for (int i = axis + 1; i < r; i++)
		inner *= o->shape.d[i];
	for (int j = 0; j <= k; j++) {
		if (n->in[j] < 0)
			return 0;
		const ox_value *x = &g->vals[n->in[j]];
		if (x->shape.rank != r || x->dtype != o->dtype || x->layout != o->layout)
			return 0;
		/* blocked: whole channel blocks of the output's block (NHWC on the
		 * GPU, one block of all the channels, interleaves the inputs) */
		if (o->layout && (o->layout != OX_L_BLOCKED || axis != 1 || x->lp[0] != o->lp[0] ||
				  x->shape.d[1] % o->lp[0] || at % o->lp[0]))
			return 0;
		if (j < k)
			at += x->shape.d[axis];
	}
	*off = at * inner;
	return 1;
}

int ox_plan_is_noop(ox_graph *g, const ox_node *n)
{
	if (ox_plan_is_view_node(g, n))
		return 1;
	if (n->op != OX_OP_Concat || n->out[0] < 0 || g->vals[n->out[0]].offset < 0)
		return 0;
	/* Each input already at its place in the output. Were the input not
	 * stored inside the output, both would be live here and so never
	 * share a byte: equal places mean the planner put it there. */
	for (int k = 0; k < n->nin; k++) {
		int64_t off;
		if (!concat_piece(g, n, k, &off))
			return 0;
		const ox_value *x = &g->vals[n->in[k]];
		if (!raw_bytes(g, x))
			continue;
		if (x->kind != OX_V_INTERNAL || x->offset != g->vals[n->out[0]].offset + off)
			return 0;
	}
	return 1;
}

/* ---- one plan for one schedule ---- */

/* Storage classes are named by their root value's id. */
typedef struct {
	int nn;
	const int *order;        /* node ids in schedule order */
	int64_t *first, *last;   /* per value: position of definition and last use */
	int *cls;                /* per value: class, -1 when not in the arena */
	int64_t *coff;           /* per value: byte offset inside its class */
	int *next, *head, *tail; /* members of a class as a list */
	char *alive;             /* per class id */
	int64_t *csize, *cfirst, *clast, *caddr;
	char *isview;            /* per value: produced by a view node */
	int concat;              /* store Concat inputs inside its output */
	int nviews, ninplace, nconcat;
	int64_t lb, arena;
	int peak;                /* first position where lb is reached */
	const char *strategy;
} plan;

static void plan_alloc(plan *P, int nvals)
{
	memset(P, 0, sizeof *P);
	P->first = xcalloc(nvals, sizeof *P->first);
	P->last = xcalloc(nvals, sizeof *P->last);
	P->cls = xcalloc(nvals, sizeof *P->cls);
	P->coff = xcalloc(nvals, sizeof *P->coff);
	P->next = xcalloc(nvals, sizeof *P->next);
	P->head = xcalloc(nvals, sizeof *P->head);
	P->tail = xcalloc(nvals, sizeof *P->tail);
	P->alive = xcalloc(nvals, 1);
	P->csize = xcalloc(nvals, sizeof *P->csize);
	P->cfirst = xcalloc(nvals, sizeof *P->cfirst);
	P->clast = xcalloc(nvals, sizeof *P->clast);
	P->caddr = xcalloc(nvals, sizeof *P->caddr);
	P->isview = xcalloc(nvals, 1);
}

static void plan_free(plan *P)
{
	free(P->first), free(P->last), free(P->cls), free(P->coff), free(P->next), free(P->head);
	free(P->tail), free(P->alive), free(P->csize), free(P->cfirst), free(P->clast), free(P->caddr);
	free(P->isview);
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

static void join(plan *P, int c, int from, int64_t shift)
{
	for (int m = P->head[from]; m >= 0; m = P->next[m]) {
		P->cls[m] = c;
		P->coff[m] += shift;
	}
	P->next[P->tail[c]] = P->head[from];
	P->tail[c] = P->tail[from];
	if (P->clast[from] > P->clast[c])
		P->clast[c] = P->clast[from];
	if (P->cfirst[from] < P->cfirst[c])
		P->cfirst[c] = P->cfirst[from];
	P->alive[from] = 0;
}

/* Can node n (at position p) write its output into input k's class? */
/* Can output 0 of n (at position p) be stored over input k? first: the
 * node's first epilogue operand (a Conv or GEMM), -1 for an elementwise
 * node */
static int can_inplace(ox_graph *g, const plan *P, const ox_node *n, int k, int p, int first, int end)
{
	ox_id v = n->in[k], o = n->out[0];
	if (v < 0 || P->cls[v] < 0)
		return 0;
	int c = P->cls[v];
	const ox_value *x = &g->vals[v], *y = &g->vals[o];
	if (P->clast[c] != p || P->coff[v] != 0 || P->csize[c] != vbytes(g, x) || vbytes(g, x) != vbytes(g, y))
		return 0;
	if (!same_shape(&x->shape, &y->shape) || ox_dtype_size(x->dtype) != ox_dtype_size(y->dtype))
		return 0;
	if (x->layout != y->layout || x->lp[0] != y->lp[0])
		return 0;
	/* another operand in the same bytes might be read late: elementwise, the
	 * same value is read at the same index; a Conv or GEMM reads its own
	 * inputs at other positions (y = Conv(a) + a), and so do the inputs
	 * past the epilogue's (a fused depthwise's, ox_dw: its residual read
	 * at the channels the other column tiles load) */
	for (int j = 0; j < n->nin; j++)
		if (j != k && n->in[j] >= 0 && (n->in[j] != v || j < first || j >= end) && P->cls[n->in[j]] == c)
			return 0;
	return 1;
}

/* live[p]: bytes of the classes live at step p, 0 <= p <= nn */
static void live_bytes(ox_graph *g, const plan *P, int64_t *live)
{
	memset(live, 0, ((size_t)P->nn + 2) * sizeof *live);
	for (int c = 0; c < g->nvals; c++)
		if (P->alive[c]) {
			live[P->cfirst[c]] += P->csize[c];
			live[P->clast[c] + 1] -= P->csize[c];
		}
	for (int p = 1; p <= P->nn + 1; p++)
		live[p] += live[p - 1];
}

static void add_span(int64_t *live, int64_t a, int64_t b, int64_t bytes)
{
	for (int64_t p = a; p <= b; p++)
		live[p] += bytes;
}

/* Can Concat n (at position p) have its inputs stored inside its output,
 * so that their producers write there and the Concat is no code? Each
 * input must fill its own class exactly, one class per input, no value of
 * the class may be written after p (it would overwrite the output), and
 * the output's class must hold nothing written in place after p (written
 * over while an input is still read). offs[k]: input k's byte offset. */
static int concat_ok(ox_graph *g, const plan *P, const ox_node *n, int p, int64_t *offs)
{
	ox_id o = n->nout == 1 ? n->out[0] : -1;
	if (n->op != OX_OP_Concat || o < 0 || P->cls[o] != o || n->nin > 64)
		return 0;
	for (int m = P->head[o]; m >= 0; m = P->next[m])
		if (m != o && !P->isview[m])
			return 0;
	for (int k = 0; k < n->nin; k++) {
		ox_id v = n->in[k];
		if (!concat_piece(g, n, k, &offs[k]) || P->cls[v] < 0)
			return 0;
		int c = P->cls[v];
		if (c == o || P->coff[v] != 0 || P->csize[c] != vbytes(g, &g->vals[v]))
			return 0;
		for (int j = 0; j < k; j++)
			if (P->cls[n->in[j]] == c)
				return 0;
		for (int m = P->head[c]; m >= 0; m = P->next[m])
			if (P->first[m] > p && !P->isview[m])
				return 0;
	}
	return 1;
}

/* Store Concat inputs inside the output where that does not raise the
 * most bytes live at one step (it makes the output live from its first
 * input on, which can cost more than the copy saves). */
static void plan_concats(ox_graph *g, plan *P, int64_t *live)
{
	int nn = P->nn;
	int64_t *try = xcalloc((size_t)nn + 2, sizeof *try), cur = 0, offs[64];
	for (int p = 0; p <= nn; p++)
		if (live[p] > cur)
			cur = live[p];
	for (int p = 0; p < nn; p++) {
		const ox_node *n = &g->nodes[P->order[p]];
		if (!concat_ok(g, P, n, p, offs))
			continue;
		ox_id o = n->out[0];
		int64_t first = P->cfirst[o], last = P->clast[o], top = 0;
		memcpy(try, live, ((size_t)nn + 2) * sizeof *try);
		add_span(try, P->cfirst[o], P->clast[o], -P->csize[o]);
		for (int k = 0; k < n->nin; k++) {
			int c = P->cls[n->in[k]];
			add_span(try, P->cfirst[c], P->clast[c], -P->csize[c]);
			if (P->cfirst[c] < first)
				first = P->cfirst[c];
			if (P->clast[c] > last)
				last = P->clast[c];
		}
		add_span(try, first, last, P->csize[o]);
		for (int q = 0; q <= nn; q++)
			if (try[q] > top)
				top = try[q];
		if (top > cur)
			continue;
		memcpy(live, try, ((size_t)nn + 2) * sizeof *try);
		cur = top;
		for (int k = 0; k < n->nin; k++)
			join(P, o, P->cls[n->in[k]], offs[k]);
		P->nconcat++;
	}
	free(try);
}

/* Lifetimes, classes, in-place merges and the lower bound for P->order. */
static void plan_classes(ox_graph *g, plan *P)
{
	int nn = P->nn;
	for (int i = 0; i < g->nvals; i++) {
		P->first[i] = P->last[i] = -1;
		P->cls[i] = P->head[i] = P->tail[i] = P->next[i] = -1;
		P->coff[i] = 0;
		P->alive[i] = 0;
		P->isview[i] = 0;
	}
	P->nviews = P->ninplace = P->nconcat = 0;
	for (int p = 0; p < nn; p++) {
		const ox_node *n = &g->nodes[P->order[p]];
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				P->first[n->out[k]] = P->last[n->out[k]] = p;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && g->vals[n->in[k]].kind == OX_V_INTERNAL)
				P->last[n->in[k]] = p;
	}
	for (int k = 0; k < g->noutputs; k++)
		if (g->vals[g->outputs[k]].kind == OX_V_INTERNAL)
			P->last[g->outputs[k]] = nn;
	/* the bytes of the strings a node makes sit in its scratch, and the
	 * pointers may travel anywhere, a graph output included: keep it */
	for (int p = 0; p < nn; p++) {
		const ox_node *n = &g->nodes[P->order[p]];
		int strings = 0;
		for (int k = 0; k < n->nout; k++)
			strings |= n->out[k] >= 0 && g->vals[n->out[k]].dtype == OX_STRING;
		if (n->scratch && strings)
			P->last[n->out[n->nout - 1]] = nn;
	}

	/* views join their input's class; other outputs start one */
	for (int p = 0; p < nn; p++) {
		const ox_node *n = &g->nodes[P->order[p]];
		int view = ox_plan_is_view_node(g, n);
		for (int k = 0; k < n->nout; k++) {
			ox_id v = n->out[k];
			if (v < 0)
				continue;
			if (view) {
				int64_t o;
				ox_plan_view(g, n, k, &o);
				ox_id x = n->in[0];
				P->nviews++;
				P->isview[v] = 1;
				if (P->cls[x] < 0)
					continue; /* a view of a graph input or a constant */
				int c = P->cls[x];
				P->cls[v] = c;
				P->coff[v] = P->coff[x] + o;
				P->next[P->tail[c]] = v;
				P->tail[c] = v;
				if (P->last[v] > P->clast[c])
					P->clast[c] = P->last[v];
				continue;
			}
			P->cls[v] = v;
			P->head[v] = P->tail[v] = v;
			P->alive[v] = 1;
			P->csize[v] = vbytes(g, &g->vals[v]);
			P->cfirst[v] = p;
			P->clast[v] = P->last[v];
		}
	}

	/* in place, in schedule order (a merge can extend a class a later node reads) */
	for (int p = 0; p < nn; p++) {
		const ox_node *n = &g->nodes[P->order[p]];
		/* an epilogue's operands of the output's shape may be overwritten too:
		 * each output element is written after its own element was read */
		int first = ox_ir_epilogue_first(n);
		ox_convgeo cq;
		ox_gemmgeo gq;
		if (first >= 0 && n->op == OX_OP_Conv && !ox_opt_conv_geo(g, n, &cq) && cq.kb)
			first = -1; /* a chunked reduction keeps partial sums in the output */
		if (first >= 0 && n->op != OX_OP_Conv && !ox_opt_gemm_geo(g, n, &gq) && gq.kchunk)
			first = -1;
		if (!(ox_ops[n->op].flags & OX_F_INPLACE) && first < 0)
			continue;
		if (n->out[0] < 0 || P->cls[n->out[0]] != n->out[0] || (first < 0 && n->nout != 1))
			continue;
		/* (past the epilogue's operands: a norm's scale and bias, ox_norm,
		 * read after the output is written) */
		const int end = first < 0 ? n->nin : first + ox_ir_epilogue(n)->ninputs - 1;
		for (int k = first < 0 ? 0 : first; k < end; k++)
			if (can_inplace(g, P, n, k, p, first, end)) {
				join(P, P->cls[n->in[k]], n->out[0], 0);
				P->ninplace++;
				break;
			}
	}

	int64_t *live = xcalloc((size_t)nn + 2, sizeof *live);
	live_bytes(g, P, live);
	if (P->concat)
		plan_concats(g, P, live);
	P->lb = 0;
	P->peak = 0;
	for (int p = 0; p <= nn; p++)
		if (live[p] > P->lb) {
			P->lb = live[p];
			P->peak = p;
		}
	free(live);
}

/* ---- placement ---- */

typedef struct {
	int64_t addr, size;
} block;

static int by_addr(const void *a, const void *b)
{
	const block *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Place classes ids[0..nc) in that order, each at the lowest gap (or the
 * smallest sufficient gap with bestfit) among the placed classes whose
 * lifetimes overlap its own. Returns the arena size. */
enum { BUCKET = 64 }; /* steps per time bucket in place() */

/* time bucket of step p (lifetimes run from 0 to nn) */
static int64_t bucket_of(const plan *P, int64_t p)
{
	return (p < 0 ? 0 : p > P->nn ? P->nn : p) / BUCKET;
}

static int64_t place(plan *P, const int *ids, int nc, int bestfit)
{
	block *busy = xcalloc((size_t)nc + 1, sizeof *busy);
	int64_t top = 0;
	/* The placed classes by time: bucket t lists those alive during some
	 * step of [t*BUCKET, (t+1)*BUCKET), so a class is compared only with
	 * the ones sharing a bucket with it, not with every placed class (a
	 * long model would be quadratic). stamp: compared once per class. */
	int nbk = (int)bucket_of(P, P->nn) + 1, maxid = 0;
	for (int a = 0; a < nc; a++)
		maxid = ids[a] > maxid ? ids[a] : maxid;
	int **bk = xcalloc((size_t)nbk, sizeof *bk), *bn = xcalloc((size_t)nbk, sizeof *bn);
	int *bcap = xcalloc((size_t)nbk, sizeof *bcap), *stamp = xcalloc((size_t)maxid + 1, sizeof *stamp);
	for (int a = 0; a < nc; a++) {
		int c = ids[a], nb = 0;
		int64_t t0 = bucket_of(P, P->cfirst[c]), t1 = bucket_of(P, P->clast[c]);
		for (int64_t t = t0; t <= t1; t++)
			for (int b = 0; b < bn[t]; b++) {
				int d = bk[t][b];
				if (stamp[d] == a + 1)
					continue;
				stamp[d] = a + 1;
				if (P->cfirst[d] <= P->clast[c] && P->cfirst[c] <= P->clast[d] && P->csize[d])
					busy[nb++] = (block){P->caddr[d], P->csize[d]};
			}
		for (int64_t t = t0; t <= t1; t++) {
			if (bn[t] == bcap[t]) {
				bcap[t] = bcap[t] ? 2 * bcap[t] : 16;
				bk[t] = realloc(bk[t], (size_t)bcap[t] * sizeof **bk);
				if (!bk[t])
					ox_die("out of memory");
			}
			bk[t][bn[t]++] = c;
		}
		qsort(busy, (size_t)nb, sizeof *busy, by_addr);
		int64_t size = P->csize[c], at = 0, best = -1, bestgap = 0;
		for (int b = 0; b <= nb; b++) {
			int64_t end = b < nb ? busy[b].addr : INT64_MAX;
			if (end - at >= size) {
				if (!bestfit) {
					best = at;
					break;
				}
				if (b < nb && (best < 0 || end - at < bestgap)) {
					best = at;
					bestgap = end - at;
				}
			}
			if (b < nb && busy[b].addr + busy[b].size > at)
				at = busy[b].addr + busy[b].size;
		}
		if (best < 0)
			best = at; /* above every overlapping block */
		P->caddr[c] = best;
		if (best + size > top)
			top = best + size;
	}
	for (int t = 0; t < nbk; t++)
		free(bk[t]);
	free(bk), free(bn), free(bcap), free(stamp);
	free(busy);
	return top;
}

static const plan *sort_plan;
static int by_size(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	const plan *P = sort_plan;
	if (P->csize[x] != P->csize[y])
		return P->csize[x] > P->csize[y] ? -1 : 1;
	if (P->cfirst[x] != P->cfirst[y])
		return P->cfirst[x] < P->cfirst[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_first(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	const plan *P = sort_plan;
	if (P->cfirst[x] != P->cfirst[y])
		return P->cfirst[x] < P->cfirst[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_span(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	const plan *P = sort_plan;
	int64_t sx = P->clast[x] - P->cfirst[x], sy = P->clast[y] - P->cfirst[y];
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return by_size(a, b);
}

/* TFLite's greedy-by-breadth order: the steps with the most live bytes
 * first; at each, its not yet ordered classes, biggest first. */
static int breadth_order(plan *P, const int *cls, int nc, int *out)
{
	int nn = P->nn;
	int64_t *live = xcalloc((size_t)nn + 1, sizeof *live);
	int *steps = xcalloc((size_t)nn + 1, sizeof *steps);
	char *done = xcalloc((size_t)nc + 1, 1);
	int *byz = xcalloc((size_t)nc + 1, sizeof *byz);
	memcpy(byz, cls, (size_t)nc * sizeof *byz);
	qsort(byz, (size_t)nc, sizeof *byz, by_size);
	for (int a = 0; a < nc; a++)
		for (int64_t p = P->cfirst[cls[a]]; p <= P->clast[cls[a]] && p <= nn; p++)
			live[p] += P->csize[cls[a]];
	for (int p = 0; p <= nn; p++)
		steps[p] = p;
	/* selection by live bytes, stable: nn is small enough for a simple sort */
	for (int i = 1; i <= nn; i++) {
		int s = steps[i], j = i;
		while (j > 0 && live[steps[j - 1]] < live[s]) {
			steps[j] = steps[j - 1];
			j--;
		}
		steps[j] = s;
	}
	int m = 0;
	for (int i = 0; i <= nn && m < nc; i++) {
		int p = steps[i];
		for (int a = 0; a < nc; a++)
			if (!done[a] && P->cfirst[byz[a]] <= p && p <= P->clast[byz[a]]) {
				done[a] = 1;
				out[m++] = byz[a];
			}
	}
	for (int a = 0; a < nc; a++)
		if (!done[a])
			out[m++] = byz[a];
	free(live), free(steps), free(done), free(byz);
	return m;
}

/* Try every strategy; keep the smallest arena in P->caddr. */
static void plan_offsets(ox_graph *g, plan *P)
{
	static const struct {
		const char *name;
		int order; /* 0 size, 1 schedule, 2 span, 3 breadth */
		int bestfit;
	} strategies[] = {
		{"greedy-by-size", 0, 0},
		{"greedy-by-size best-fit", 0, 1},
		{"schedule-order best-fit", 1, 1},
		{"schedule-order first-fit", 1, 0},
		{"longest-lifetime first-fit", 2, 0},
		{"greedy-by-breadth", 3, 0},
	};
	int nc = 0;
	int *cls = xcalloc((size_t)g->nvals + 1, sizeof *cls), *ids = xcalloc((size_t)g->nvals + 1, sizeof *ids);
	int64_t *best = xcalloc((size_t)g->nvals + 1, sizeof *best);
	for (int c = 0; c < g->nvals; c++)
		if (P->alive[c])
			cls[nc++] = c;
	P->arena = -1;
	sort_plan = P;
	for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
		memcpy(ids, cls, (size_t)nc * sizeof *ids);
		switch (strategies[s].order) {
		case 0: qsort(ids, (size_t)nc, sizeof *ids, by_size); break;
		case 1: qsort(ids, (size_t)nc, sizeof *ids, by_first); break;
		case 2: qsort(ids, (size_t)nc, sizeof *ids, by_span); break;
		default: breadth_order(P, cls, nc, ids); break;
		}
		int64_t top = place(P, ids, nc, strategies[s].bestfit);
		if (P->arena < 0 || top < P->arena) {
			P->arena = top;
			P->strategy = strategies[s].name;
			for (int a = 0; a < nc; a++)
				best[cls[a]] = P->caddr[cls[a]];
		}
		if (P->arena == P->lb)
			break; /* optimal */
	}
	for (int a = 0; a < nc; a++)
		P->caddr[cls[a]] = best[cls[a]];
	if (P->arena < 0)
		P->arena = 0;
	free(cls), free(ids), free(best);
}

/* ---- schedules ---- */

/* List scheduling: among the ready nodes, mode 0 takes the one that adds
 * the fewest bytes (its outputs minus the view classes it finishes), mode 1
 * the one reading the most recently computed value (depth first), mode 2
 * the same with the views of graph inputs and constants first (a GEMM whose
 * epilogue reads a graph input through a Reshape waits for no other
 * branch); ties go to the imported order. Views are counted as free,
 * in-place is not. */
static void list_schedule(ox_graph *g, int mode, int *order)
{
	int nn = g->nnodes, nv = g->nvals;
	int *pending = xcalloc((size_t)nn, sizeof *pending), *root = xcalloc((size_t)nv, sizeof *root);
	int *remain = xcalloc((size_t)nv, sizeof *remain);
	int64_t *when = xcalloc((size_t)nv, sizeof *when), *alloc = xcalloc((size_t)nn, sizeof *alloc);
	char *isview = xcalloc((size_t)nn, 1);
	for (int v = 0; v < nv; v++) {
		root[v] = g->vals[v].kind == OX_V_INTERNAL ? v : -1;
		when[v] = -1;
	}
	for (int i = 0; i < nn; i++) {
		const ox_node *n = &g->nodes[i];
		isview[i] = (char)ox_plan_is_view_node(g, n);
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0) {
				if (isview[i])
					root[n->out[k]] = root[n->in[0]];
				else
					alloc[i] += vbytes(g, &g->vals[n->out[k]]);
			}
	}
	/* readers of each value, one entry per input slot (cstart[v] ..
	 * cstart[v + 1] - 1 of reader): a scan of all nodes per output would
	 * be quadratic in a long model */
	int *cstart = xcalloc((size_t)nv + 1, sizeof *cstart), *reader;
	for (int i = 0; i < nn; i++) {
		const ox_node *n = &g->nodes[i];
		for (int k = 0; k < n->nin; k++) {
			ox_id v = n->in[k];
			if (v < 0)
				continue;
			cstart[v + 1]++;
			if (g->vals[v].producer >= 0)
				pending[i]++;
			if (root[v] >= 0)
				remain[root[v]]++;
		}
	}
	for (int v = 0; v < nv; v++)
		cstart[v + 1] += cstart[v];
	reader = xcalloc((size_t)cstart[nv] + 1, sizeof *reader);
	int *fill = xcalloc((size_t)nv + 1, sizeof *fill);
	for (int i = 0; i < nn; i++)
		for (int k = 0; k < g->nodes[i].nin; k++)
			if (g->nodes[i].in[k] >= 0) {
				ox_id v = g->nodes[i].in[k];
				reader[cstart[v] + fill[v]++] = i;
			}
	free(fill);
	for (int k = 0; k < g->noutputs; k++)
		if (root[g->outputs[k]] >= 0)
			remain[root[g->outputs[k]]] += nn + 1; /* never freed */
	/* the ready nodes (every input computed), in no order: a pick scans
	 * them, not every node */
	int *ready = xcalloc((size_t)nn + 1, sizeof *ready), nready = 0;
	for (int i = 0; i < nn; i++)
		if (!pending[i])
			ready[nready++] = i;
	for (int p = 0; p < nn; p++) {
		int pick = -1, at = -1;
		int64_t bestkey = 0;
		for (int r = 0; r < nready; r++) {
			int i = ready[r];
			const ox_node *n = &g->nodes[i];
			int64_t key;
			if (mode == 0) {
				key = alloc[i];
				for (int k = 0; k < n->nin; k++) {
					ox_id v = n->in[k];
					if (v < 0 || root[v] < 0)
						continue;
					int uses = 0, first = 1;
					for (int j = 0; j < n->nin; j++)
						if (n->in[j] >= 0 && root[n->in[j]] == root[v]) {
							uses++;
							first &= j >= k;
						}
					if (first && uses == remain[root[v]])
						key -= vbytes(g, &g->vals[root[v]]);
				}
			} else if (mode == 2 && isview[i] && n->in[0] >= 0 && root[n->in[0]] < 0) {
				key = -(int64_t)nn - 1; /* a view of a graph input or constant: free, and
							   its readers may be waiting for it */
			} else {
				key = 0;
				for (int k = 0; k < n->nin; k++)
					if (n->in[k] >= 0 && when[n->in[k]] + 1 > key)
						key = when[n->in[k]] + 1;
				key = -key;
			}
			if (pick < 0 || key < bestkey || (key == bestkey && i < pick)) {
				pick = i, at = r;
				bestkey = key;
			}
		}
		if (pick < 0)
			ox_die("plan: the graph is not in topological order");
		order[p] = pick;
		ready[at] = ready[--nready];
		const ox_node *n = &g->nodes[pick];
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && root[n->in[k]] >= 0)
				remain[root[n->in[k]]]--;
		for (int k = 0; k < n->nout; k++) {
			ox_id v = n->out[k];
			if (v < 0)
				continue;
			when[v] = p;
			for (int c = cstart[v]; c < cstart[v + 1]; c++) /* one decrement per input slot */
				if (!--pending[reader[c]])
					ready[nready++] = reader[c];
		}
	}
	free(ready);
	free(pending), free(root), free(remain), free(when), free(alloc), free(isview);
	free(cstart), free(reader);
}

/* ---- statistics for --report ---- */

/* onnx2c-style slot unions: in the imported order every node output takes
 * the first free slot (freed after its last use); a slot is as big as its
 * biggest tenant. Views are copies there. */
static int64_t slot_unions(ox_graph *g, const plan *P)
{
	int nn = P->nn, ns = 0;
	int64_t *slot_size = xcalloc((size_t)g->nvals + 1, sizeof *slot_size), total = 0;
	int64_t *slot_end = xcalloc((size_t)g->nvals + 1, sizeof *slot_end);
	for (int p = 0; p < nn; p++) {
		const ox_node *n = &g->nodes[P->order[p]];
		for (int k = 0; k < n->nout; k++) {
			ox_id v = n->out[k];
			if (v < 0)
				continue;
			int s = 0;
			while (s < ns && slot_end[s] >= p)
				s++;
			if (s == ns)
				slot_size[ns++] = 0;
			if (vbytes(g, &g->vals[v]) > slot_size[s])
				slot_size[s] = vbytes(g, &g->vals[v]);
			slot_end[s] = P->last[v];
		}
	}
	for (int s = 0; s < ns; s++)
		total += slot_size[s];
	free(slot_size), free(slot_end);
	return total;
}

static ox_plan_stats stats;

const ox_plan_stats *ox_plan_get_stats(const ox_graph *g)
{
	return stats.g == g ? &stats : NULL;
}

/* ---- the pass ---- */

/* smaller arena, then lower bound, then more Concats without a copy */
static int better(const plan *a, const plan *b)
{
	if (a->arena != b->arena)
		return a->arena < b->arena;
	if (a->lb != b->lb)
		return a->lb < b->lb;
	return a->nconcat > b->nconcat;
}

int ox_opt_plan(ox_graph *g)
{
	ox_ir_fill_uses(g);
	int nn = g->nnodes;
	for (int i = 0; i < g->nvals; i++) {
		ox_value *v = &g->vals[i];
		if ((v->kind == OX_V_INTERNAL && v->producer >= 0) &&
		    (!v->has_shape || ox_value_max_storage(g, v) < 0))
			ox_die("plan: value %%%d '%s' has no bounded shape", i, v->name);
	}
	/* schedules x (Concat inputs in place or not); candidate 0 is the
	 * imported order without, the reference the report compares with */
	static const char *const sched_names[] = {"imported order", "greedy min-memory", "depth-first",
						  "depth-first, views of inputs first"};
	enum { NSCHED = 4, NCAND = 2 * NSCHED };
	int *orders[NSCHED];
	plan P[NCAND];
	int best = 0, ref = 0;
	for (int s = 0; s < NSCHED; s++) {
		orders[s] = xcalloc((size_t)nn + 1, sizeof *orders[s]);
		if (s == 0)
			for (int i = 0; i < nn; i++)
				orders[s][i] = i;
		else
			list_schedule(g, s - 1, orders[s]);
	}
	for (int c = 0; c < NCAND; c++) {
		plan_alloc(&P[c], g->nvals);
		P[c].nn = nn;
		P[c].order = orders[c / 2];
		P[c].concat = c % 2;
		plan_classes(g, &P[c]);
		plan_offsets(g, &P[c]);
		if (c && better(&P[c], &P[best]))
			best = c;
		if (c == 1 && better(&P[1], &P[0]))
			ref = 1; /* the imported order, as well as this planner does it */
	}

	/* statistics, before the nodes move */
	memset(&stats, 0, sizeof stats);
	stats.g = g;
	stats.onnx_order_arena = P[ref].arena;
	stats.onnx_order_lb = P[ref].lb;
	stats.slot_unions = slot_unions(g, &P[0]);
	for (int v = 0; v < g->nvals; v++)
		if (g->vals[v].producer >= 0)
			stats.no_reuse += vbytes(g, &g->vals[v]);
	const plan *B = &P[best];
	stats.schedule = sched_names[best / 2];
	stats.strategy = B->strategy;
	stats.nviews = B->nviews;
	stats.ninplace = B->ninplace;
	stats.nconcat = B->nconcat;
	stats.peak_step = B->peak;
	stats.storage = ox_ir_alloc(g, (size_t)g->nvals * sizeof *stats.storage + 1);
	stats.peak_live = ox_ir_alloc(g, (size_t)g->nvals * sizeof *stats.peak_live + 1);
	for (int v = 0; v < g->nvals; v++) {
		stats.storage[v] = B->cls[v];
		if (B->alive[v] && B->cfirst[v] <= B->peak && B->peak <= B->clast[v])
			stats.peak_live[stats.npeak_live++] = v;
	}

	/* the chosen schedule becomes the node order */
	ox_node *tmp = xcalloc((size_t)nn + 1, sizeof *tmp);
	for (int p = 0; p < nn; p++)
		tmp[p] = g->nodes[B->order[p]];
	if (nn) /* a graph of constants has no nodes (and g->nodes may be NULL) */
		memcpy(g->nodes, tmp, (size_t)nn * sizeof *tmp);
	free(tmp);
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nvals; i++) {
		ox_value *v = &g->vals[i];
		v->first = B->first[i];
		v->last = B->last[i];
		v->offset = B->cls[i] >= 0 ? B->caddr[B->cls[i]] + B->coff[i] : -1;
	}
	g->arena_size = B->arena;
	g->arena_lower_bound = B->lb;
	ox_note("plan: arena %lld bytes, lower bound %lld (%s, %s); imported order: arena %lld, lower bound %lld; "
		"%d views, %d in place, %d concats in place",
		(long long)B->arena, (long long)B->lb, stats.schedule, stats.strategy, (long long)P[ref].arena,
		(long long)P[ref].lb, B->nviews, B->ninplace, B->nconcat);
	for (int c = 0; c < NCAND; c++)
		plan_free(&P[c]);
	for (int s = 0; s < NSCHED; s++)
		free(orders[s]);
	return 0;
}
