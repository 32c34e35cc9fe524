/* affine.c: fold per-channel affine ops into the convolution before them.
 *
 * Conv(x, W, B) followed by an inference BatchNormalization, or by a Mul,
 * Div, Add or Sub with a constant that is a scalar or one value per output
 * channel ([M], [M,1,1], [1,M,1,1]...), is the same Conv with new constant
 * weights and bias: BN gives W' = W s, B' = (B - mean) s + beta with
 * s = scale / sqrt(var + eps); Mul/Div scale W and B, Add/Sub move B.
 * Computed in double, rounded once. The Conv's output must be used by
 * that op alone (and not be a graph output); new constants are made, so a
 * weight shared with another node is left as it was. Repeats until no
 * fold applies (Conv -> BN -> Mul folds twice). A MatMul or Gemm with a
 * constant B takes a Mul or Div by a scalar or per-column constant the
 * same way, into B's columns (and Gemm's C). The folds read constants
 * only: batch and image sizes may be run-time dims (shapes compare as dims).
 * Requires: bounded dims (after bounds). Invalidates: uses (refilled), node positions
 * (compacted).
 */
#include "opt.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* per-channel values of constant c for m channels of a rank-r output:
 * c broadcasts to [.., M, 1, 1] (or is a scalar). 0 and fills v, else -1. */
static int per_channel(const ox_value *c, int64_t m, int r, double *v)
{
	if (c->kind != OX_V_CONST || c->layout || !ox_dtype_is_float(c->dtype) || c->shape.rank > r)
		return -1;
	int64_t n = ox_shape_numel(&c->shape);
	if (n == 1) {
		for (int64_t i = 0; i < m; i++)
			v[i] = ox_tensor_get_f64(c->data, 0);
		return 0;
	}
	/* aligned to the output's rank, only the channel axis (1; 0 of a vector) may be > 1 */
	int off = r - c->shape.rank, ax = r >= 2 ? 1 : 0;
	for (int i = 0; i < c->shape.rank; i++)
		if (c->shape.d[i] != 1 && !(i + off == ax && c->shape.d[i] == m))
			return -1;
	if (n != m)
		return -1;
	for (int64_t i = 0; i < m; i++)
		v[i] = ox_tensor_get_f64(c->data, i);
	return 0;
}

/* a new constant named after base, of the dtype given (a Conv's new bias
 * takes its weights' dtype: f16 weights, an f16 bias) */
static ox_id new_const(ox_graph *g, const char *base, int dtype, const ox_shape *s, const char *what)
{
	char name[256];
	snprintf(name, sizeof name, "%s@%s", base, what);
	return ox_ir_add_const(g, name, ox_ir_new_tensor(g, dtype, s));
}

/* Conv n followed by node e: fold when e is an affine op on constants */
static int fold(ox_graph *g, ox_node *n, ox_node *e)
{
	ox_value *y = ox_out(g, n, 0), *w = ox_in(g, n, 1);
	ox_value *b = n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	if (w->kind != OX_V_CONST || w->layout || (b && (b->kind != OX_V_CONST || b->layout)) || !ox_dtype_is_float(y->dtype))
		return 0;
	int64_t m = w->shape.d[0], per = ox_shape_numel(&w->shape) / (m ? m : 1);
	int r = y->shape.rank;
	double *sc = malloc((size_t)(2 * m + 1) * sizeof *sc), *sh = sc + m;
	for (int64_t i = 0; i < m; i++)
		sc[i] = 1, sh[i] = 0;
	int ok = 0, k = e->in[0] == n->out[0] ? 1 : 0;
	switch (e->op) {
	case OX_OP_BatchNormalization: {
		if (e->in[0] != n->out[0] || (e->opset >= 14 && ox_attr_int(e, "training_mode", 0)))
			break;
		int used = 0;
		for (int j = 1; j < e->nout; j++)
			used |= e->out[j] >= 0 && (g->vals[e->out[j]].nuses || g->vals[e->out[j]].is_output);
		double *p[4];
		p[0] = malloc((size_t)(4 * m + 1) * sizeof(double));
		for (int j = 1; j < 4; j++)
			p[j] = p[0] + j * m;
		int have = !used;
		for (int j = 0; j < 4 && have; j++)
			have = e->in[j + 1] >= 0 && g->vals[e->in[j + 1]].shape.rank == 1 &&
			       !per_channel(&g->vals[e->in[j + 1]], m, 1, p[j]);
		if (have) {
			double eps = ox_attr_float(e, "epsilon", 1e-5f);
			for (int64_t i = 0; i < m; i++) {
				sc[i] = p[0][i] / sqrt(p[3][i] + eps);
				sh[i] = p[1][i] - p[2][i] * sc[i];
			}
			ok = 1;
		}
		free(p[0]);
		break;
	}
	case OX_OP_Mul:
	case OX_OP_Div:
	case OX_OP_Add:
	case OX_OP_Sub: {
		/* y op c; for Sub and Div y must be the left operand */
		if (e->nin != 2 || e->in[0] == e->in[1] || ((e->op == OX_OP_Sub || e->op == OX_OP_Div) && k != 1))
			break;
		ox_value *c = &g->vals[e->in[k]];
		/* the result must keep the Conv's shape and dtype */
		ox_value *o = ox_out(g, e, 0);
		if (o->shape.rank != r || o->dtype != y->dtype ||
		    ox_shape_numel_dim(g, &o->shape) != ox_shape_numel_dim(g, &y->shape))
			break;
		double *v = malloc((size_t)(m + 1) * sizeof *v);
		if (!per_channel(c, m, r, v)) {
			for (int64_t i = 0; i < m; i++) {
				if (e->op == OX_OP_Mul)
					sc[i] = v[i];
				else if (e->op == OX_OP_Div)
					sc[i] = 1 / v[i];
				else
					sh[i] = e->op == OX_OP_Add ? v[i] : -v[i];
			}
			ok = 1;
		}
		free(v);
		break;
	}
	}
	if (ok) {
		/* W'[m] = W[m] sc[m]; B' = B sc + sh */
		/* (new constants move g->vals: w and b are read before, and again after) */
		const char *wname = w->name, *bname = b ? b->name : "bias";
		int wdt = w->dtype;
		ox_shape wsh = w->shape;
		ox_id nw = new_const(g, wname, wdt, &wsh, "folded");
		ox_id nb = new_const(g, bname, wdt, &(ox_shape){1, {m}}, "folded");
		w = &g->vals[n->in[1]];
		b = n->nin > 2 && n->in[2] >= 0 ? &g->vals[n->in[2]] : NULL;
		ox_tensor *tw = g->vals[nw].data, *tb = g->vals[nb].data;
		int div = e->op == OX_OP_Div;
		ox_value *c = div ? &g->vals[e->in[1]] : NULL;
		for (int64_t i = 0; i < m; i++) {
			/* a Div divides, so x / c rounds as the model's would */
			double cv = div ? ox_tensor_get_f64(c->data, ox_shape_numel(&c->shape) == 1 ? 0 : i) : 0;
			for (int64_t j = 0; j < per; j++) {
				double x = ox_tensor_get_f64(w->data, i * per + j);
				ox_tensor_set_f64(tw, i * per + j, div ? x / cv : x * sc[i]);
			}
			double bv = b ? ox_tensor_get_f64(b->data, i) : 0;
			ox_tensor_set_f64(tb, i, (div ? bv / cv : bv * sc[i]) + sh[i]);
		}
		if (n->nin < 3) {
			ox_id *in = ox_ir_alloc(g, 4 * sizeof *in);
			memcpy(in, n->in, (size_t)n->nin * sizeof *in);
			n->in = in;
			n->nin = 3;
		}
		n->in[1] = nw, n->in[2] = nb;
		/* the Conv now writes e's output; e dies */
		ox_ir_add_fused(g, n, e->name);
		ox_id out = e->out[0];
		g->vals[n->out[0]].nuses = 0;
		n->out[0] = out;
		g->vals[out].producer = (ox_id)(n - g->nodes);
		e->dead = 1;
	}
	free(sc);
	return ok;
}

/* MatMul/Gemm with a constant 2-D B followed by Mul or Div with a scalar or
 * per-column constant: the columns of B (and Gemm's C) scaled instead. A
 * Gemm's columns are B's rows when transB. Exact for powers of two (the
 * attention scale 1/8), else one rounding like the model's. */
static int fold_gemm(ox_graph *g, ox_node *n, ox_node *e)
{
	ox_value *y = ox_out(g, n, 0), *b = ox_in(g, n, 1);
	ox_value *c = n->op == OX_OP_Gemm && n->nin > 2 && n->in[2] >= 0 ? ox_in(g, n, 2) : NULL;
	if (b->kind != OX_V_CONST || b->layout || b->shape.rank != 2 || !ox_dtype_is_float(y->dtype) ||
	    (c && (c->kind != OX_V_CONST || c->layout)))
		return 0;
	if ((e->op != OX_OP_Mul && e->op != OX_OP_Div) || e->nin != 2 || e->in[0] == e->in[1])
		return 0;
	int k = e->in[0] == n->out[0] ? 1 : 0;
	if (e->op == OX_OP_Div && k != 1)
		return 0;
	const ox_value *s = &g->vals[e->in[k]], *o = ox_out(g, e, 0);
	int r = y->shape.rank, tb = n->op == OX_OP_Gemm && ox_attr_int(n, "transB", 0);
	int64_t N = y->shape.d[r - 1], K = b->shape.d[tb ? 1 : 0];
	if (o->shape.rank != r || ox_shape_numel_dim(g, &o->shape) != ox_shape_numel_dim(g, &y->shape) ||
	    o->dtype != y->dtype)
		return 0;
	/* per column: only the last axis may be > 1 */
	if (s->kind != OX_V_CONST || s->layout || !ox_dtype_is_float(s->dtype) || s->shape.rank > r)
		return 0;
	int64_t m = ox_shape_numel(&s->shape);
	for (int i = 0; i < s->shape.rank; i++)
		if (s->shape.d[i] != 1 && !(i == s->shape.rank - 1 && s->shape.d[i] == N))
			return 0;
	if (m != 1 && m != N)
		return 0;
	int64_t cw = c && c->shape.rank ? c->shape.d[c->shape.rank - 1] : 1;
	if (c && cw == 1 && m != 1 && N != 1)
		return 0; /* a C broadcast along the columns takes only a scalar scale */
	ox_id nb = new_const(g, b->name, b->dtype, &b->shape, "folded");
	b = ox_in(g, n, 1), s = &g->vals[e->in[k]];
	for (int64_t kk = 0; kk < K; kk++)
		for (int64_t j = 0; j < N; j++) {
			int64_t at = tb ? j * K + kk : kk * N + j;
			double x = ox_tensor_get_f64(b->data, at), v = ox_tensor_get_f64(s->data, m == 1 ? 0 : j);
			ox_tensor_set_f64(g->vals[nb].data, at, e->op == OX_OP_Div ? x / v : x * v);
		}
	n->in[1] = nb;
	if (c) {
		ox_id nc = new_const(g, c->name, c->dtype, &c->shape, "folded");
		c = ox_in(g, n, 2), s = &g->vals[e->in[k]];
		int64_t cn = ox_shape_numel(&c->shape);
		for (int64_t i = 0; i < cn; i++) {
			double x = ox_tensor_get_f64(c->data, i), v = ox_tensor_get_f64(s->data, m == 1 ? 0 : i % cw);
			ox_tensor_set_f64(g->vals[nc].data, i, e->op == OX_OP_Div ? x / v : x * v);
		}
		n->in[2] = nc;
	}
	ox_ir_add_fused(g, n, e->name);
	ox_id out = e->out[0];
	g->vals[n->out[0]].nuses = 0;
	n->out[0] = out;
	g->vals[out].producer = (ox_id)(n - g->nodes);
	e->dead = 1;
	return 1;
}

int ox_opt_affine(ox_graph *g)
{
	if (!g->opt)
		return 0;
	int changed = 1;
	while (changed) {
		changed = 0;
		ox_ir_fill_uses(g);
		for (int i = 0; i < g->nnodes; i++) {
			ox_node *n = &g->nodes[i];
			if (n->dead || (n->op != OX_OP_Conv && n->op != OX_OP_MatMul && n->op != OX_OP_Gemm) || n->nin < 2 ||
			    n->out[0] < 0)
				continue;
			ox_value *y = &g->vals[n->out[0]];
			if (y->nuses != 1 || y->is_output)
				continue;
			for (int j = i + 1; j < g->nnodes; j++) {
				ox_node *e = &g->nodes[j];
				int reads = 0;
				for (int k = 0; k < e->nin; k++)
					reads |= e->in[k] == n->out[0];
				if (e->dead || !reads)
					continue;
				changed |= n->op == OX_OP_Conv ? fold(g, n, e) : fold_gemm(g, n, e);
				break;
			}
		}
		/* the Conv takes its consumer's place, where e's users expect it */
		if (changed) {
			ox_ir_compact(g);
			if (ox_ir_toposort(g))
				ox_die("affine: cycle");
		}
	}
	return 0;
}
