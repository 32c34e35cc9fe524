/* cost.c: floating-point operations per node, the figure behind "effective
 * GFLOP/s" (--report, the --main program's --profile, bench/).
 *
 * The field's convention: 2 per multiply-add of the dense ops (Conv,
 * ConvTranspose, Gemm, MatMul, Attention's two products, the input and
 * recurrent products of RNN, GRU and LSTM), nothing for the
 * rest (elementwise, pools, normalizations), so a rate compares with the
 * machine's FMA peak. Shapes must be known; an unknown one counts 0; a
 * run-time dim counts at its most (the largest shapes a program takes).
 * A fast algorithm counts the algorithm it replaces: a Conv computed by
 * Winograd (weights @winow, opt/winograd.c) counts the direct
 * convolution's multiply-adds, about 2-4x those it does, so its GFLOP/s
 * can pass the machine's peak (issue 9's convention; docs/optimizer.md).
 * The integer QConv and QMatMul of QDQ models (opt/qdq.c) count their
 * multiply-adds the same way, integer though they are.
 */
#include "ir.h"

static int64_t numel(ox_graph *g, const ox_node *n, int k, int out)
{
	ox_value *v = out ? ox_out(g, n, k) : ox_in(g, n, k);
	if (!v || !v->has_shape)
		return 0;
	int64_t m = ox_shape_numel(&v->shape);
	if (m < 0)
		m = ox_shape_max_numel(g, &v->shape);
	/* at most what it was planned for (--max, --max-elems): the product
	 * of the dims' tops can be far larger, and overflow what it multiplies */
	if (v->cap > 0 && (m < 0 || m > v->cap))
		m = v->cap;
	return m < 0 ? 0 : m;
}

static int64_t dim(ox_graph *g, const ox_node *n, int k, int d)
{
	ox_value *v = ox_in(g, n, k);
	if (!v || !v->has_shape || d >= v->shape.rank)
		return 0;
	int64_t x = ox_dim_hi(g, v->shape.d[d]);
	return x < 0 ? 0 : x;
}

int64_t ox_ir_flops(ox_graph *g, const ox_node *n)
{
	ox_value *w = ox_in(g, n, 1);
	switch (n->op) {
	case OX_OP_Conv:
	case OX_OP_QConv: {
		/* per output element: C/group x kernel taps (the logical weights'
		 * shape, whatever their layout) */
		if (!w || !w->has_shape || w->shape.rank < 2)
			return 0;
		int64_t taps = 1;
		for (int i = 1; i < w->shape.rank; i++)
			taps *= w->shape.d[i] < 0 ? 0 : w->shape.d[i];
		return 2 * numel(g, n, 0, 1) * taps;
	}
	case OX_OP_ConvTranspose: {
		/* per input element: (M/group) x kernel taps */
		if (!w || !w->has_shape || w->shape.rank < 2)
			return 0;
		int64_t taps = 1;
		for (int i = 1; i < w->shape.rank; i++)
			taps *= w->shape.d[i] < 0 ? 0 : w->shape.d[i];
		return 2 * numel(g, n, 0, 0) * taps;
	}
	case OX_OP_Gemm: {
		ox_value *a = ox_in(g, n, 0);
		if (!a || !a->has_shape || a->shape.rank != 2)
			return 0;
		int64_t k = ox_dim_hi(g, a->shape.d[ox_attr_int(n, "transA", 0) ? 0 : 1]);
		return k < 0 ? 0 : 2 * numel(g, n, 0, 1) * k;
	}
	case OX_OP_MatMulSplit: /* A x B [K, N], all N columns */
		return w && w->has_shape && w->shape.rank == 2 && w->shape.d[1] > 0 ? 2 * numel(g, n, 0, 0) * w->shape.d[1]
										      : 0;
	case OX_OP_MatMul:
	case OX_OP_MatMulInteger:
	case OX_OP_QLinearMatMul:
	case OX_OP_QMatMul: {
		ox_value *a = ox_in(g, n, 0);
		if (!a || !a->has_shape || a->shape.rank < 1)
			return 0;
		int64_t k = ox_dim_hi(g, a->shape.d[a->shape.rank - 1]);
		return k < 0 ? 0 : 2 * numel(g, n, 0, 1) * k;
	}
	case OX_OP_Attention: {
		/* Q K^T over the key length, then P V: 2 x (|Q| + |Y|) x Skv */
		int rk = ox_in(g, n, 1) && ox_in(g, n, 1)->has_shape ? ox_in(g, n, 1)->shape.rank : 0;
		int64_t skv = rk == 4 ? dim(g, n, 1, 2) : rk == 3 ? dim(g, n, 1, 1) : 0;
		if (n->nin > 4 && n->in[4] >= 0)
			skv += dim(g, n, 4, 2); /* past_key */
		return 2 * (numel(g, n, 0, 0) + numel(g, n, 0, 1)) * skv;
	}
	case OX_OP_RNN:
	case OX_OP_GRU:
	case OX_OP_LSTM: {
		/* every step, batch row and direction: W [gates*hidden, input] and
		 * R [gates*hidden, hidden] times the input and the state */
		ox_value *x = ox_in(g, n, 0), *r = ox_in(g, n, 2);
		if (!x || !x->has_shape || x->shape.rank != 3 || !w || !w->has_shape || w->shape.rank != 3 || !r ||
		    !r->has_shape || r->shape.rank != 3)
			return 0;
		int64_t steps = dim(g, n, 0, 0) * dim(g, n, 0, 1); /* seq x batch in either layout */
		return 2 * steps * dim(g, n, 1, 0) * dim(g, n, 1, 1) * (dim(g, n, 1, 2) + dim(g, n, 2, 2));
	}
	}
	return 0;
}
