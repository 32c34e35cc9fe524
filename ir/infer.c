/* infer.c: shape-inference dispatch and the helpers every infer_* uses.
 *
 * Inference functions (ir/infer_*.c, named in ops.def) read their inputs'
 * dtype/shape (and constant data where an input steers the output shape)
 * and call ox_set_out for each output. They return 0, or ox_error(...) for
 * a model the op cannot accept. An input whose shape is not yet known makes
 * the dispatcher stop with an error: nodes run in topological order.
 */
#include "ir.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

ox_value *ox_in(ox_graph *g, const ox_node *n, int k)
{
	return k < n->nin && n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;
}

ox_value *ox_out(ox_graph *g, const ox_node *n, int k)
{
	return k < n->nout && n->out[k] >= 0 ? &g->vals[n->out[k]] : NULL;
}

const ox_tensor *ox_in_const(ox_graph *g, const ox_node *n, int k)
{
	ox_value *v = ox_in(g, n, k);
	return v && v->kind == OX_V_CONST ? v->data : NULL;
}

int ox_in_ints(ox_graph *g, const ox_node *n, int k, int64_t *v, int cap)
{
	const ox_tensor *t = ox_in_const(g, n, k);
	if (!t)
		return -1;
	int64_t m = ox_tensor_numel(t);
	if (m > cap)
		m = cap;
	for (int64_t i = 0; i < m; i++)
		v[i] = ox_tensor_get_i64(t, i);
	return (int)m;
}

int ox_in_svals(ox_graph *g, const ox_node *n, int k, ox_sv *v, int cap)
{
	ox_value *x = ox_in(g, n, k);
	if (!x)
		return -1;
	const ox_tensor *t = ox_in_const(g, n, k);
	if (t) {
		int64_t m = ox_tensor_numel(t);
		if (m > cap || (!ox_dtype_is_int(t->dtype) && t->dtype != OX_BOOL))
			return -1;
		for (int64_t i = 0; i < m; i++)
			v[i] = (ox_sv){OX_SV_CONST, ox_tensor_get_i64(t, i), 0};
		return (int)m;
	}
	if (!x->sv || x->nsv > cap)
		return -1;
	memcpy(v, x->sv, (size_t)x->nsv * sizeof *v);
	return x->nsv;
}

void ox_set_out(ox_graph *g, ox_node *n, int k, int dtype, const ox_shape *s)
{
	ox_value *v = ox_out(g, n, k);
	if (!v)
		return;
	v->dtype = dtype;
	v->has_shape = 1;
	v->shape = *s;
}

int ox_norm_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	return axis >= 0 && axis < rank ? (int)axis : -1;
}

int ox_broadcast(ox_graph *g, const ox_shape *a, const ox_shape *b, ox_shape *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	ox_shape o = {r, {0}};
	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		ox_dim da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
		if (da == db || db == 1)
			o.d[i] = da;
		else if (da == 1)
			o.d[i] = db;
		else if (da < 0 || db < 0)
			/* symbolic against a different dim: the ONNX rule says they
			 * must match unless one is 1; take the constant one */
			o.d[i] = da < 0 ? db : da;
		else
			return -1;
	}
	(void)g;
	*out = o;
	return 0;
}

/* Opset < 7 binary ops broadcast B onto A from `axis` when broadcast=1
 * (B [C] against A [N,C,H,W] at axis 1). Numpy rules cover the case where
 * B aligns with A's trailing dims; otherwise a constant B is given trailing
 * 1s so numpy rules apply. A non-constant B there is refused. PRelu
 * before opset 7 slopes along axis 1 without any attribute. */
static int legacy_broadcast(ox_graph *g, ox_node *n)
{
	const ox_attr *ax = ox_attr_get(n, "axis");
	/* PRelu before opset 7 applies a [C] slope along the channel axis */
	int prelu = n->op == OX_OP_PRelu;
	if (n->opset >= 7 || !(ox_ops[n->op].flags & OX_F_EW) || n->nin != 2 ||
	    (!prelu && (ox_attr_int(n, "broadcast", 0) != 1 || !ax)))
		return 0;
	ox_value *a = ox_in(g, n, 0), *b = ox_in(g, n, 1);
	if (!a || !b || (prelu && ox_shape_numel(&b->shape) == 1))
		return 0;
	int axis = ox_norm_axis(prelu ? 1 : ax->i, a->shape.rank);
	if (axis < 0 || axis + b->shape.rank > a->shape.rank)
		return ox_error(g, n, "legacy broadcast: axis %lld does not fit ranks %d and %d",
				(long long)ax->i, a->shape.rank, b->shape.rank);
	if (axis + b->shape.rank == a->shape.rank)
		return 0;
	if (b->kind != OX_V_CONST)
		return ox_error(g, n, "legacy broadcast (opset %d, axis %d) of a non-constant input is not supported",
				n->opset, axis);
	ox_shape s = b->shape;
	while (s.rank < a->shape.rank - axis)
		s.d[s.rank++] = 1;
	ox_tensor *t = ox_ir_new_tensor(g, b->dtype, &s);
	memcpy(t->data, b->data->data, t->nbytes);
	char name[512];
	snprintf(name, sizeof name, "%s/broadcast%d", b->name, axis);
	n->in[1] = ox_ir_add_const(g, name, t); /* b may move: not used after */
	return 0;
}

/* An output with exactly an input's run-time dims (an elementwise op on a
 * Reshape to dims read from data) holds no more than that input: its
 * bound (ox_value.cap) goes along. */
static void inherit_caps(ox_graph *g, ox_node *n)
{
	for (int k = 0; k < n->nout; k++) {
		ox_value *o = ox_out(g, n, k);
		if (!o || !o->has_shape || !ox_shape_is_rt(g, &o->shape))
			continue;
		for (int j = 0; j < n->nin; j++) {
			ox_value *x = ox_in(g, n, j);
			if (!x || x->cap <= 0 || x->shape.rank != o->shape.rank)
				continue;
			int same = 1;
			for (int d = 0; d < o->shape.rank && same; d++)
				same = x->shape.d[d] == o->shape.d[d];
			if (same && (o->cap <= 0 || x->cap < o->cap))
				o->cap = x->cap;
		}
	}
}

/* Inferred shapes must not overflow: a dim computed past 2^63 is no
 * constant (ox_dim_op) or a wrapped number (an infer function's own
 * arithmetic), and a huge tensor's byte count would wrap in the plan and
 * the generated code (an Expand, Tile or ConstantOfShape to a huge shape). */
static int check_outputs(ox_graph *g, ox_node *n)
{
	for (int k = 0; k < n->nout; k++) {
		ox_value *v = ox_out(g, n, k);
		if (!v || !v->has_shape)
			continue;
		for (int d = 0; d < v->shape.rank; d++) {
			ox_dim x = v->shape.d[d];
			if (x < 0 && (-x - 1 >= OX_DX(g)->ndexprs || (!ox_dim_unbound(g, x) && ox_dim_eval(g, x) < 0)))
				return ox_error(g, n, "output %d '%s': dim %d overflows", k, v->name, d);
		}
		char sh[512];
		if (ox_shape_too_big(&v->shape, v->dtype) && ox_shape_str(g, &v->shape, sh, sizeof sh))
			return ox_error(g, n, "output %d '%s': %s%s is too large (2^48 bytes or more)", k,
					v->name, ox_dtype_name(v->dtype), sh);
	}
	return 0;
}

int ox_infer_node(ox_graph *g, ox_node *n)
{
	if (n->op < 0 || n->op >= OX_NOPS)
		return ox_error(g, n, "unsupported operator");
	const ox_opinfo *oi = &ox_ops[n->op];
	int nin = n->nin;
	while (nin > 0 && n->in[nin - 1] < 0)
		nin--;
	if (nin < oi->minin || (oi->maxin >= 0 && nin > oi->maxin))
		return ox_error(g, n, "%d inputs, expected %d to %d", nin, oi->minin, oi->maxin);
	/* the first minin inputs are required ("" omits one), except Loop's
	 * trip count and condition, which ONNX lets a model leave out */
	for (int k = 0; k < oi->minin && n->op != OX_OP_Loop; k++)
		if (n->in[k] < 0)
			return ox_error(g, n, "input %d is required but omitted", k);
	for (int k = 0; k < n->nin; k++) {
		ox_value *v = ox_in(g, n, k);
		if (v && (!v->has_shape || v->dtype == OX_UNDEF))
			return ox_error(g, n, "input %d '%s' has no known type and shape", k, v->name);
	}
	if (legacy_broadcast(g, n))
		return -1;
	if (oi->infer(g, n))
		return -1;
	inherit_caps(g, n);
	return check_outputs(g, n) || ox_attr_report(g);
}

int ox_need_const(ox_graph *g, const ox_node *n, int k, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ox_error(g, n, "%s", msg);
	if (n->in[k] < 0)
		return -1;
	/* Hint the graph inputs the value is computed from. Only small ones
	 * (rank <= 1, <= 16 elements: sizes, axes, scalars) are offered, so a
	 * tool following the hint does not freeze the network's data. */
	char *seen = calloc((size_t)g->nvals + 1, 1);
	ox_id *stack = malloc(((size_t)g->nvals + 1) * sizeof *stack);
	int sp = 0;
	stack[sp++] = n->in[k];
	seen[n->in[k]] = 1;
	while (sp) {
		ox_id id = stack[--sp];
		ox_value *v = &g->vals[id];
		if (v->kind == OX_V_INPUT) {
			for (int i = 0; i < g->ninputs; i++)
				if (g->inputs[i] == id && v->has_shape && v->shape.rank <= 1 &&
				    ox_shape_numel(&v->shape) >= 0 && ox_shape_numel(&v->shape) <= 16)
					fprintf(stderr, "%s: hint: input %d of this node %s graph input #%d '%s'; "
						"to compile for one value of it pass --const %s=FILE\n",
						g->path, k, id == n->in[k] ? "is" : "depends on", i, v->name,
						v->name);
			continue;
		}
		if (v->producer < 0 || v->producer >= g->nnodes)
			continue;
		const ox_node *p = &g->nodes[v->producer];
		for (int j = 0; j < p->nin; j++)
			if (p->in[j] >= 0 && !seen[p->in[j]]) {
				seen[p->in[j]] = 1;
				stack[sp++] = p->in[j];
			}
	}
	free(seen);
	free(stack);
	return -1;
}

/* the eval column's value for ops that are never folded */
int eval_none(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out)
{
	(void)g, (void)n, (void)in, (void)out;
	return -1;
}
