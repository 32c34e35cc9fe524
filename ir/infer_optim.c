/* infer_optim.c: shape inference for the ai.onnx.preview.training
 * optimizers Adagrad, Adam and Momentum (domain opset 1).
 *
 * Inputs are R (learning rate, float scalar), T (update count, int64
 * scalar), then k groups of n tensors: X..., G..., and the state tensors
 * (H for Adagrad; V, H for Adam; V for Momentum). Outputs are the new X...
 * followed by the new state tensors, each shaped like the input it updates.
 * The spec allows numpy broadcasting between X and its G/V/H; we require
 * equal shapes (every known model has them) and say so otherwise.
 */
#include "ir.h"
#include "family.h"
#include <string.h>

/* tensors per optimized variable, counting X: Adagrad X,G,H; Adam X,G,V,H; Momentum X,G,V */
int ox_ir_optim_groups(const ox_node *n)
{
	return n->op == OX_OP_Adam ? 4 : 3;
}

static int same_shape(const ox_shape *a, const ox_shape *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int k = 0; k < a->rank; k++)
		if (a->d[k] != b->d[k])
			return 0;
	return 1;
}

int infer_optim(ox_graph *g, ox_node *n)
{
	int k = ox_ir_optim_groups(n);
	int rest = n->nin - 2;
	if (rest <= 0 || rest % k)
		return ox_error(g, n, "expected R, T and %d groups of tensors, got %d inputs", k, n->nin);
	int nv = rest / k;
	if (n->nout != (k - 1) * nv)
		return ox_error(g, n, "expected %d outputs for %d optimized tensors, got %d", (k - 1) * nv, nv, n->nout);
	ox_value *r = ox_in(g, n, 0), *t = ox_in(g, n, 1);
	if (!r || !t)
		return ox_error(g, n, "inputs R and T are required");
	if (r->dtype != OX_F32 && r->dtype != OX_F64)
		return ox_error(g, n, "learning rate R has dtype %s, expected f32 or f64", ox_dtype_name(r->dtype));
	if (t->dtype != OX_I64)
		return ox_error(g, n, "update count T has dtype %s, expected i64", ox_dtype_name(t->dtype));
	if (ox_shape_numel(&r->shape) != 1 || ox_shape_numel(&t->shape) != 1)
		return ox_error(g, n, "R and T must be scalars");
	if (n->op == OX_OP_Momentum) {
		const char *mode = ox_attr_str(n, "mode", NULL);
		if (!ox_attr_get(n, "alpha") || !ox_attr_get(n, "beta") || !ox_attr_get(n, "norm_coefficient") || !mode)
			return ox_error(g, n, "attributes alpha, beta, norm_coefficient and mode are required");
		if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
			return ox_error(g, n, "mode '%s' is not 'standard' or 'nesterov'", mode);
	}
	for (int i = 0; i < nv; i++) {
		ox_value *x = ox_in(g, n, 2 + i);
		if (!x)
			return ox_error(g, n, "input X%d is omitted", i + 1);
		if (x->dtype != OX_F32 && x->dtype != OX_F64 && x->dtype != OX_F16)
			return ox_error(g, n, "tensor X%d has dtype %s, expected a float", i + 1, ox_dtype_name(x->dtype));
		for (int j = 1; j < k; j++) {
			ox_value *y = ox_in(g, n, 2 + j * nv + i);
			if (!y)
				return ox_error(g, n, "input %d is omitted", 2 + j * nv + i);
			if (y->dtype != x->dtype)
				return ox_error(g, n, "input %d has dtype %s, X%d has %s", 2 + j * nv + i,
				                ox_dtype_name(y->dtype), i + 1, ox_dtype_name(x->dtype));
			if (!same_shape(&y->shape, &x->shape))
				return ox_error(g, n, "input %d is not shaped like X%d: broadcasting the optimizer state is not supported",
				                2 + j * nv + i, i + 1);
		}
		/* outputs: X_new at i, then the state tensors in input order */
		ox_set_out(g, n, i, x->dtype, &x->shape);
		for (int j = 2; j < k; j++)
			ox_set_out(g, n, (j - 1) * nv + i, x->dtype, &x->shape);
	}
	return 0;
}
