/* norm.c: normalizations and GELU written out by exporters, recognized and
 * replaced by one ONNX node each, in f32 (and in f16 and bf16 on the GPU,
 * whose kernels compute them in f32: ox_opt_fuse_type).
 *
 * LayerNorm: m = ReduceMean(x) over the trailing axes (attribute or, opset
 * 18+, constant input; keepdims), d = Sub(x, m), v = ReduceMean(Pow(d, 2)
 * or Mul(d, d)) over the same axes, s = Sqrt(Add(v, eps)), y = Div(d, s) or
 * d * Reciprocal(s) (or Div(1, s)); then optionally Mul by gamma and Add
 * beta, constants that broadcast over the normalized axes only ->
 * LayerNormalization(x, gamma or ones, beta) {axis, epsilon}.
 * RMSNorm: x -> Pow(x, 2) or Mul(x, x) -> ReduceMean (trailing axes) -> Add
 * eps -> Sqrt -> Div(x, s) or x * (1 / s); a weight w either after it or
 * first (Div(x * w, s), w * x * rsqrt) -> RMSNormalization(x, w or ones).
 * GELU: 0.5 * x * (1 + erf(x / sqrt 2)) (Div by sqrt 2 or Mul by 1/sqrt 2)
 * and 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) (x^3 as
 * Pow(x, 3) or Mul chains; also x * (1 + 0.044715 x^2) inside), the 0.5
 * applied in any association -> Gelu {approximate "none" / "tanh"}.
 * Operands of commutative ops match in either order; constants within 1e-6
 * relative. Every value inside a pattern must be read by the pattern alone
 * and not be a graph output, else the pattern is left as it is. The new
 * node takes the place of the pattern's last node, is named after its
 * first and lists them all in ox_fused (the epilogue and ewfuse passes,
 * which run later, keep the list when they fuse the node). Leading dims
 * (batch, sequence) may be run-time dims where the new op's emitter takes
 * them (OX_F_RT); the normalized ones are constants.
 * Requires: bounded dims (after bounds). Invalidates: node positions
 * (compacted), uses (refilled).
 */
#include "opt.h"
#include "../ir/family.h"
#include <math.h>
#include <string.h>

#define MAXCOV 16

/* the nodes a match covers, positions in g */
typedef struct {
	int n;
	int at[MAXCOV];
} cover;

static void take(cover *c, ox_graph *g, const ox_node *n)
{
	if (c->n < MAXCOV)
		c->at[c->n++] = (int)(n - g->nodes);
}

static ox_node *producer(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].producer >= 0 ? &g->nodes[g->vals[v].producer] : NULL;
}

/* read once and not a graph output */
static int inner(ox_graph *g, ox_id v)
{
	return v >= 0 && g->vals[v].nuses == 1 && !g->vals[v].is_output;
}

/* the other input of binary n that reads v once; -1 if none */
static ox_id other(const ox_node *n, ox_id v)
{
	if (!n || n->nin != 2)
		return -1;
	if (n->in[0] == v && n->in[1] != v)
		return n->in[1];
	if (n->in[1] == v && n->in[0] != v)
		return n->in[0];
	return -1;
}

/* a constant of one element (any rank) */
static int scalar(ox_graph *g, ox_id v, double *x)
{
	if (v < 0)
		return 0;
	const ox_value *c = &g->vals[v];
	if (c->kind != OX_V_CONST || ox_shape_numel(&c->shape) != 1 ||
	    (!ox_dtype_is_float(c->dtype) && !ox_dtype_is_int(c->dtype)))
		return 0;
	*x = ox_tensor_get_f64(c->data, 0);
	return 1;
}

static int near(double c, double want)
{
	return fabs(c - want) <= 1e-6 * fabs(want);
}

static int is_scalar(ox_graph *g, ox_id v, double want)
{
	double c;
	return scalar(g, v, &c) && near(c, want);
}

/* a tensor of the plain layout whose ops fuse: f32; f16 and bf16 on the GPU
 * (ox_opt_fuse_type: the CUDA kernels compute them in f32) */
static int fusable(ox_graph *g, ox_id v)
{
	return v >= 0 && ox_opt_fuse_type(g, g->vals[v].dtype) && !g->vals[v].layout && g->vals[v].has_shape;
}

static int same_shape(const ox_value *a, const ox_value *b)
{
	if (a->shape.rank != b->shape.rank)
		return 0;
	for (int i = 0; i < a->shape.rank; i++)
		if (a->shape.d[i] != b->shape.d[i])
			return 0;
	return 1;
}

/* n is ReduceMean over the trailing axes ax.. of an f32 input, keeping
 * dims: ax, else -1 */
static int mean_axis(ox_graph *g, ox_node *n)
{
	if (!n || n->op != OX_OP_ReduceMean || ox_attr_int(n, "keepdims", 1) == 0 || !fusable(g, n->in[0]))
		return -1;
	int r = g->vals[n->in[0]].shape.rank, mask[OX_MAX_RANK];
	if (r < 1 || ox_reduce_axes(g, n, mask))
		return -1;
	int ax = r;
	while (ax > 0 && mask[ax - 1])
		ax--;
	for (int i = 0; i < ax; i++)
		if (mask[i])
			return -1;
	/* the normalized dims are constants (the new node's scale and bias are
	 * constants of that shape); the leading ones may be run-time dims */
	for (int i = ax; i < r; i++)
		if (ox_dim_is_rt(g, g->vals[n->in[0]].shape.d[i]))
			return -1;
	return ax < r ? ax : -1;
}

/* v = Pow(b, 2) or Mul(b, b): the node, b in *base */
static ox_node *square_of(ox_graph *g, ox_id v, ox_id *base)
{
	ox_node *p = producer(g, v);
	if (p && p->op == OX_OP_Mul && p->in[0] == p->in[1]) {
		*base = p->in[0];
		return p;
	}
	if (p && p->op == OX_OP_Pow && is_scalar(g, p->in[1], 2)) {
		*base = p->in[0];
		return p;
	}
	return NULL;
}

/* Sqrt(Add(v, eps)): the Sqrt, eps in *eps */
static ox_node *root_of(ox_graph *g, ox_id v, double *eps, cover *c)
{
	ox_node *a = ox_ir_sole_reader(g, v);
	if (!a || a->op != OX_OP_Add)
		return NULL;
	ox_id e = other(a, v);
	if (!scalar(g, e, eps) || !ox_dtype_is_float(g->vals[e].dtype))
		return NULL;
	ox_node *s = ox_ir_sole_reader(g, a->out[0]);
	if (!s || s->op != OX_OP_Sqrt)
		return NULL;
	take(c, g, a);
	take(c, g, s);
	return s;
}

/* The node computing num / s: Div(num, s), or num * r (either order) with
 * r = Reciprocal(s) or Div(1, s). num in *num. */
static ox_node *divided(ox_graph *g, ox_id s, ox_id *num, cover *c)
{
	ox_node *d = ox_ir_sole_reader(g, s);
	if (!d)
		return NULL;
	if (d->op == OX_OP_Div && d->in[1] == s && d->in[0] != s && !is_scalar(g, d->in[0], 1)) {
		*num = d->in[0];
		take(c, g, d);
		return d;
	}
	if (d->op != OX_OP_Reciprocal && !(d->op == OX_OP_Div && d->in[1] == s && is_scalar(g, d->in[0], 1)))
		return NULL;
	ox_node *m = ox_ir_sole_reader(g, d->out[0]);
	if (!m || m->op != OX_OP_Mul || (*num = other(m, d->out[0])) < 0)
		return NULL;
	take(c, g, d);
	take(c, g, m);
	return m;
}

/* p: a constant of x's type that broadcasts over the normalized axes ax.. of x only */
static int row_operand(ox_graph *g, ox_id p, ox_id x, int ax)
{
	if (p < 0 || g->vals[p].kind != OX_V_CONST || g->vals[p].dtype != g->vals[x].dtype)
		return 0;
	const ox_shape *ps = &g->vals[p].shape, *xs = &g->vals[x].shape;
	int off = xs->rank - ps->rank;
	if (off < 0)
		return 0;
	for (int i = 0; i < ps->rank; i++) {
		int64_t d = ps->d[i];
		if (i + off < ax ? d != 1 : d != 1 && d != xs->d[i + off])
			return 0;
	}
	return 1;
}

/* p (a row operand of x), or ones when p < 0, as a constant of x's
 * normalized shape [d_ax, ..., d_r-1] */
static ox_id row_const(ox_graph *g, ox_id p, ox_id x, int ax, const char *name)
{
	ox_shape xs = g->vals[x].shape, s = {xs.rank - ax, {0}};
	for (int i = 0; i < s.rank; i++)
		s.d[i] = xs.d[ax + i];
	if (p >= 0 && same_shape(&g->vals[p], &(ox_value){.shape = s}))
		return p;
	ox_tensor *t = ox_ir_new_tensor(g, g->vals[x].dtype, &s);
	int64_t n = ox_shape_numel(&s);
	for (int64_t k = 0; k < n; k++) {
		double v = 1;
		if (p >= 0) { /* k's index in p: right-aligned, 0 where p has 1 */
			const ox_shape *ps = &g->vals[p].shape;
			int64_t rem = k, at = 0, stride = 1;
			for (int i = s.rank - 1; i >= 0; i--) {
				int64_t idx = rem % s.d[i];
				rem /= s.d[i];
				int pi = ps->rank - (s.rank - i);
				if (pi < 0)
					continue;
				if (ps->d[pi] != 1)
					at += idx * stride;
				stride *= ps->d[pi];
			}
			v = ox_tensor_get_f64(g->vals[p].data, at);
		}
		ox_tensor_set_f64(t, k, v);
	}
	return ox_ir_add_const(g, name, t);
}

/* A new node op(in) writing y in place of the covered nodes: at the last
 * one's position (y's producer), named after the first, listing them all.
 * Returns its position; the caller adds attributes, then calls place(). */
static int replace(ox_graph *g, cover *c, int op, const char *optype, int opset, const ox_id *in, int nin, ox_id y)
{
	for (int i = 1; i < c->n; i++) /* graph order */
		for (int j = i; j > 0 && c->at[j - 1] > c->at[j]; j--) {
			int t = c->at[j];
			c->at[j] = c->at[j - 1], c->at[j - 1] = t;
		}
	if (g->nodes[c->at[c->n - 1]].out[0] != y)
		ox_die("norm: the pattern's last node does not write its result");
	ox_id nid = ox_ir_add_node(g, op, optype, g->nodes[c->at[0]].name, nin, 1);
	ox_node *n = &g->nodes[nid];
	n->opset = opset;
	n->domain = "";
	memcpy(n->in, in, (size_t)nin * sizeof *in);
	n->out[0] = y;
	return nid;
}

/* list the covered nodes in node nid, move it to the last covered
 * position, drop them; returns the first covered position (nothing before
 * it moved) */
static int place(ox_graph *g, const cover *c, int nid)
{
	ox_node *m[MAXCOV];
	for (int i = 0; i < c->n; i++)
		m[i] = &g->nodes[c->at[i]];
	ox_ir_set_fused(g, &g->nodes[nid], m, c->n);
	ox_node moved = g->nodes[nid];
	g->nodes[nid].dead = 1;
	for (int i = 0; i < c->n; i++)
		g->nodes[c->at[i]].dead = 1;
	g->nodes[c->at[c->n - 1]] = moved;
	ox_ir_compact(g);
	return c->at[0];
}

static void norm_attrs(ox_graph *g, int nid, int ax, double eps)
{
	ox_ir_add_attr(g, &g->nodes[nid], "axis", OX_AT_INT)->i = ax;
	ox_ir_add_attr(g, &g->nodes[nid], "epsilon", OX_AT_FLOAT)->f = (float)eps;
}

/* When y's one reader is `op` (Mul: a scale, Add: a bias) with an operand
 * that is a row of x along ax: cover it, move y to its output and return
 * the operand; else -1 and nothing changes. */
static ox_id absorb(ox_graph *g, cover *c, int op, ox_id *y, ox_id x, int ax)
{
	ox_node *t = ox_ir_sole_reader(g, *y);
	if (!t || t->op != op || !row_operand(g, other(t, *y), x, ax))
		return -1;
	ox_id operand = other(t, *y);
	take(c, g, t);
	*y = t->out[0];
	return operand;
}

/* ---- LayerNorm, at the first ReduceMean: its first position, else -1 ---- */
static int layernorm(ox_graph *g, int i)
{
	ox_node *m1 = &g->nodes[i];
	int ax = mean_axis(g, m1);
	if (ax < 0)
		return -1;
	cover c = {0};
	ox_id x = m1->in[0], d, base, num;
	ox_node *sub = ox_ir_sole_reader(g, m1->out[0]);
	if (!sub || sub->op != OX_OP_Sub || sub->in[0] != x || sub->in[1] != m1->out[0])
		return -1;
	d = sub->out[0];
	if (g->vals[d].is_output)
		return -1;
	/* d's readers: the square and the division, nothing else */
	ox_node *sq = NULL;
	int slots = 0;
	for (int j = 0; j < g->nnodes; j++) {
		ox_node *n = &g->nodes[j];
		for (int k = 0; k < n->nin && !n->dead; k++)
			if (n->in[k] == d && !sq && square_of(g, n->out[0], &base) == n && base == d)
				sq = n;
	}
	if (!sq)
		return -1;
	ox_node *m2 = ox_ir_sole_reader(g, sq->out[0]);
	double eps;
	if (mean_axis(g, m2) != ax || m2->in[0] != sq->out[0])
		return -1;
	take(&c, g, m1), take(&c, g, sub), take(&c, g, sq), take(&c, g, m2);
	ox_node *s = root_of(g, m2->out[0], &eps, &c);
	ox_node *dv = s ? divided(g, s->out[0], &num, &c) : NULL;
	if (!dv || num != d)
		return -1;
	for (int k = 0; k < sq->nin; k++)
		slots += sq->in[k] == d;
	for (int k = 0; k < dv->nin; k++)
		slots += dv->in[k] == d;
	if (g->vals[d].nuses != slots)
		return -1;
	/* gamma, beta */
	ox_id y = dv->out[0];
	ox_id gamma = absorb(g, &c, OX_OP_Mul, &y, x, ax), beta = absorb(g, &c, OX_OP_Add, &y, x, ax);
	if (!same_shape(&g->vals[y], &g->vals[x]) || g->vals[y].dtype != g->vals[x].dtype || c.n >= MAXCOV)
		return -1;
	char nm[600];
	snprintf(nm, sizeof nm, "%s/scale", m1->name);
	ox_id in[3];
	in[0] = x;
	in[1] = row_const(g, gamma, x, ax, nm);
	if (beta >= 0) {
		snprintf(nm, sizeof nm, "%s/bias", m1->name);
		in[2] = row_const(g, beta, x, ax, nm);
	}
	int nid = replace(g, &c, OX_OP_LayerNormalization, "LayerNormalization", 17, in, beta >= 0 ? 3 : 2, y);
	norm_attrs(g, nid, ax, eps);
	return place(g, &c, nid);
}

/* ---- RMSNorm, at the ReduceMean of the squares ---- */
static int rmsnorm(ox_graph *g, int i)
{
	ox_node *m = &g->nodes[i];
	int ax = mean_axis(g, m);
	ox_id p = m->in[0], x = -1, num, w = -1;
	ox_node *sq = ax < 0 ? NULL : square_of(g, p, &x);
	if (!sq || !inner(g, p) || !fusable(g, x))
		return -1;
	cover c = {0};
	take(&c, g, sq), take(&c, g, m);
	double eps;
	ox_node *s = root_of(g, m->out[0], &eps, &c);
	ox_node *dv = s ? divided(g, s->out[0], &num, &c) : NULL;
	if (!dv)
		return -1;
	if (num != x) { /* (x * w) / rms: the weight first */
		ox_node *xw = producer(g, num);
		if (!xw || xw->op != OX_OP_Mul || !inner(g, num) || !row_operand(g, w = other(xw, x), x, ax))
			return -1;
		take(&c, g, xw);
	}
	ox_id y = dv->out[0];
	if (w < 0) /* x / rms * w: the weight after */
		w = absorb(g, &c, OX_OP_Mul, &y, x, ax);
	if (!same_shape(&g->vals[y], &g->vals[x]) || g->vals[y].dtype != g->vals[x].dtype || c.n >= MAXCOV)
		return -1;
	char nm[600];
	snprintf(nm, sizeof nm, "%s/scale", g->nodes[c.at[0]].name);
	ox_id in[2] = {x, row_const(g, w, x, ax, nm)};
	int nid = replace(g, &c, OX_OP_RMSNormalization, "RMSNormalization", 23, in, 2, y);
	norm_attrs(g, nid, ax, eps);
	return place(g, &c, nid);
}

/* ---- GELU ---- */

/* n computes v * 0.5 (Mul, either order) or v / 2 */
static int halves(ox_graph *g, const ox_node *n, ox_id v)
{
	if (n && n->op == OX_OP_Mul)
		return is_scalar(g, other(n, v), 0.5);
	return n && n->op == OX_OP_Div && n->in[0] == v && n->in[1] != v && is_scalar(g, n->in[1], 2);
}

/* the node computing 0.5 * x * a in any association: (x a) 0.5,
 * (a 0.5) x, (x 0.5) a, either operand order */
static ox_node *half_product(ox_graph *g, ox_id x, ox_id a, cover *c)
{
	ox_node *m1 = ox_ir_sole_reader(g, a), *m2;
	if (halves(g, m1, a)) { /* (a / 2) * x */
		m2 = ox_ir_sole_reader(g, m1->out[0]);
		if (!m2 || m2->op != OX_OP_Mul || other(m2, m1->out[0]) != x)
			return NULL;
	} else if (m1 && m1->op == OX_OP_Mul && other(m1, a) == x) { /* (x a) / 2 */
		m2 = ox_ir_sole_reader(g, m1->out[0]);
		if (!halves(g, m2, m1->out[0]))
			return NULL;
	} else if (m1 && m1->op == OX_OP_Mul) { /* (x / 2) * a */
		ox_id h = other(m1, a);
		m2 = m1;
		m1 = producer(g, h);
		if (!inner(g, h) || !halves(g, m1, x))
			return NULL;
	} else {
		return NULL;
	}
	take(c, g, m1);
	take(c, g, m2);
	return m2;
}

/* v = Pow(x, 3), or x * x * x as two Muls (either order) */
static int cube_of(ox_graph *g, ox_id v, ox_id x, cover *c)
{
	ox_node *p = producer(g, v);
	if (!p || !inner(g, v))
		return 0;
	if (p->op == OX_OP_Pow && p->in[0] == x && is_scalar(g, p->in[1], 3)) {
		take(c, g, p);
		return 1;
	}
	ox_id q = other(p, x), b;
	ox_node *sq = p->op == OX_OP_Mul && inner(g, q) ? square_of(g, q, &b) : NULL;
	if (!sq || b != x)
		return 0;
	take(c, g, sq);
	take(c, g, p);
	return 1;
}

/* the tanh argument's inner part from x: x + 0.044715 x^3, or
 * x (1 + 0.044715 x^2); every operand order */
static int tanh_inner(ox_graph *g, ox_node *ip, ox_id x, cover *c)
{
	ox_id t = other(ip, x);
	ox_node *tp = producer(g, t);
	if (!inner(g, t) || !tp)
		return 0;
	if (ip->op == OX_OP_Add) { /* x + k x^3 */
		if (tp->op != OX_OP_Mul)
			return 0;
		for (int k = 0; k < 2; k++)
			if (is_scalar(g, tp->in[k], 0.044715) && cube_of(g, tp->in[1 - k], x, c)) {
				take(c, g, tp);
				return 1;
			}
		return 0;
	}
	if (ip->op != OX_OP_Mul || tp->op != OX_OP_Add) /* x (1 + k x^2) */
		return 0;
	for (int k = 0; k < 2; k++) {
		ox_id kx2 = tp->in[1 - k], b;
		ox_node *km = producer(g, kx2);
		if (!is_scalar(g, tp->in[k], 1) || !inner(g, kx2) || !km || km->op != OX_OP_Mul)
			continue;
		for (int j = 0; j < 2; j++) {
			ox_node *sq = is_scalar(g, km->in[j], 0.044715) && inner(g, km->in[1 - j])
					      ? square_of(g, km->in[1 - j], &b)
					      : NULL;
			if (sq && b == x) {
				take(c, g, sq);
				take(c, g, km);
				take(c, g, tp);
				return 1;
			}
		}
	}
	return 0;
}

/* at an Erf or a Tanh */
static int gelu(ox_graph *g, int i)
{
	ox_node *f = &g->nodes[i];
	ox_id u = f->in[0], x = -1;
	ox_node *sc = producer(g, u);
	cover c = {0};
	if (!sc || !inner(g, u))
		return -1;
	if (f->op == OX_OP_Erf) { /* x / sqrt 2, x * (1 / sqrt 2) */
		if (sc->op == OX_OP_Div && is_scalar(g, sc->in[1], 1.4142135623730951))
			x = sc->in[0];
		for (int k = 0; k < 2 && sc->op == OX_OP_Mul && x < 0; k++)
			if (is_scalar(g, sc->in[k], 0.70710678118654752))
				x = sc->in[1 - k];
		take(&c, g, sc);
	} else { /* sqrt(2 / pi) (x + 0.044715 x^3) */
		for (int k = 0; k < 2 && sc->op == OX_OP_Mul && x < 0; k++) {
			ox_id iv = sc->in[1 - k];
			ox_node *ip = producer(g, iv);
			if (!is_scalar(g, sc->in[k], 0.79788456080286536) || !inner(g, iv) || !ip || ip->nin != 2)
				continue;
			for (int j = 0; j < 2 && x < 0; j++) {
				cover t = c;
				if (tanh_inner(g, ip, ip->in[j], &t)) {
					x = ip->in[j];
					c = t;
					take(&c, g, ip);
				}
			}
		}
		take(&c, g, sc);
	}
	if (!fusable(g, x))
		return -1;
	take(&c, g, f);
	ox_node *a = ox_ir_sole_reader(g, f->out[0]);
	if (!a || a->op != OX_OP_Add || !is_scalar(g, other(a, f->out[0]), 1))
		return -1;
	take(&c, g, a);
	ox_node *y = half_product(g, x, a->out[0], &c);
	if (!y || !same_shape(&g->vals[y->out[0]], &g->vals[x]) || g->vals[y->out[0]].dtype != g->vals[x].dtype || c.n >= MAXCOV)
		return -1;
	int tanh = f->op == OX_OP_Tanh;
	int nid = replace(g, &c, OX_OP_Gelu, "Gelu", 20, &x, 1, y->out[0]);
	if (tanh) {
		ox_attr *ap = ox_ir_add_attr(g, &g->nodes[nid], "approximate", OX_AT_STRING);
		ap->s = ox_ir_strdup(g, "tanh");
		ap->slen = 4;
	}
	return place(g, &c, nid);
}

int ox_opt_norm(ox_graph *g)
{
	if (!g->opt)
		return 0;
	ox_ir_fill_uses(g);
	/* LayerNorm before RMSNorm: a LayerNorm's variance is an RMSNorm of d */
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < g->nnodes; i++) {
			int op = g->nodes[i].op, at = -1;
			/* with run-time dims, only into an op whose C emitter takes them */
			static const int made[3] = {OX_OP_LayerNormalization, OX_OP_RMSNormalization, OX_OP_Gelu};
			if (ox_node_rt(g, &g->nodes[i]) && !(ox_ops[made[pass]].flags & OX_F_RT))
				continue;
			if (pass == 0 && op == OX_OP_ReduceMean)
				at = layernorm(g, i);
			else if (pass == 1 && op == OX_OP_ReduceMean)
				at = rmsnorm(g, i);
			else if (pass == 2 && (op == OX_OP_Erf || op == OX_OP_Tanh))
				at = gelu(g, i);
			if (at >= 0)
				i = at - 1; /* nodes before the match did not move */
		}
	return 0;
}
