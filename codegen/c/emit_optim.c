/* emit_optim.c: C emitter for the training optimizers Adagrad, Adam and
 * Momentum (ai.onnx.preview.training).
 *
 * One loop per optimized tensor, following the pseudo code of the spec
 * line by line. The scalar learning-rate adjustment is computed once from R
 * and T at run time; element math is done in double and rounded once on
 * store, which is as close as we can be to the reference whatever
 * precision it used for its intermediates. Input/output layout is checked
 * by ir/infer_optim.c: outputs are X_new..., then each state tensor group.
 */
#include "../cg.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>


/* "(double)LOAD(inK[i])" for input k; rotating buffers, so copy */
static void ld(ox_graph *g, ox_node *n, int k, char *buf, size_t cap)
{
	char e[32];
	ox_cg_snprintf(e, sizeof e, "in%d[i]", k);
	ox_cg_snprintf(buf, cap, "(double)%s", ox_cg_load(g->vals[n->in[k]].dtype, e));
}

static void st(ox_cg *cg, ox_graph *g, ox_node *n, int k, const char *expr)
{
	char e[32];
	ox_cg_snprintf(e, sizeof e, "out%d[i]", k);
	int dt = g->vals[n->out[k]].dtype;
	if (dt == OX_F64)
		ox_cg_line(cg, 2, "%s = %s;", e, expr);
	else if (dt == OX_F32)
		ox_cg_line(cg, 2, "%s = (float)(%s);", e, expr);
	else {
		char f[96];
		ox_cg_snprintf(f, sizeof f, "(float)(%s)", expr);
		ox_cg_line(cg, 2, "%s = %s;", e, ox_cg_store(dt, f));
	}
}

int emit_optim(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int k = ox_ir_optim_groups(n);
	int nv = (n->nin - 2) / k;
	double norm = ox_attr_float(n, "norm_coefficient", 0.0f);
	char x[96], gr[96], v[96], h[96];

	/* the adjusted learning rate, once */
	ox_cg_line(cg, 1, "const double R = (double)in0[0];");
	ox_cg_line(cg, 1, "const int64_t T = in1[0];");
	switch (n->op) {
	case OX_OP_Adagrad:
		ox_cg_line(cg, 1, "const double r = R / (1.0 + (double)T * %s);",
		           ox_cg_lit(OX_F64, ox_attr_float(n, "decay_factor", 0.0f)));
		break;
	case OX_OP_Adam: {
		double a = ox_attr_float(n, "alpha", 0.9f), b = ox_attr_float(n, "beta", 0.999f);
		char as[64];
		ox_cg_snprintf(as, sizeof as, "%s", ox_cg_lit(OX_F64, a));
		ox_cg_line(cg, 1, "/* bias correction of both momentums once T > 0 */");
		ox_cg_line(cg, 1, "const double r = T > 0 ? R * sqrt(1.0 - pow(%s, (double)T)) / (1.0 - pow(%s, (double)T)) : R;",
		           ox_cg_lit(OX_F64, b), as);
		break;
	}
	case OX_OP_Momentum:
		ox_cg_line(cg, 1, "/* the first update (T == 0) takes the whole gradient */");
		ox_cg_line(cg, 1, "const double beta = T > 0 ? %s : 1.0;", ox_cg_lit(OX_F64, ox_attr_float(n, "beta", 0.0f)));
		break;
	default:
		return ox_error(g, n, "not an optimizer");
	}
	for (int i = 0; i < nv; i++) {
		int64_t m = ox_shape_numel(&g->vals[n->in[2 + i]].shape);
		for (int j = 0; j < (k - 1); j++)
			if (n->out[j * nv + i] < 0)
				return ox_error(g, n, "output %d is omitted", j * nv + i);
		ld(g, n, 2 + i, x, sizeof x);
		ld(g, n, 2 + nv + i, gr, sizeof gr);
		ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %lld; i++) {", (long long)m);
		ox_cg_line(cg, 2, "const double x = %s;", x);
		ox_cg_line(cg, 2, "const double g = %s * x + %s;", ox_cg_lit(OX_F64, norm), gr);
		switch (n->op) {
		case OX_OP_Adagrad:
			ld(g, n, 2 + 2 * nv + i, h, sizeof h);
			ox_cg_line(cg, 2, "const double h = %s + g * g;", h);
			st(cg, g, n, nv + i, "h");
			ox_cg_snprintf(v, sizeof v, "x - r * g / (sqrt(h) + %s)", ox_cg_lit(OX_F64, ox_attr_float(n, "epsilon", 1e-6f)));
			st(cg, g, n, i, v);
			break;
		case OX_OP_Adam: {
			double a = ox_attr_float(n, "alpha", 0.9f), b = ox_attr_float(n, "beta", 0.999f);
			double post = ox_attr_float(n, "norm_coefficient_post", 0.0f);
			ld(g, n, 2 + 2 * nv + i, v, sizeof v);
			ld(g, n, 2 + 3 * nv + i, h, sizeof h);
			ox_cg_line(cg, 2, "const double vn = %s * %s + %s * g;", ox_cg_lit(OX_F64, a), v, ox_cg_lit(OX_F64, 1.0 - a));
			ox_cg_line(cg, 2, "const double hn = %s * %s + %s * g * g;", ox_cg_lit(OX_F64, b), h, ox_cg_lit(OX_F64, 1.0 - b));
			st(cg, g, n, nv + i, "vn");
			st(cg, g, n, 2 * nv + i, "hn");
			ox_cg_line(cg, 2, "const double xn = x - r * vn / (sqrt(hn) + %s);",
			           ox_cg_lit(OX_F64, ox_attr_float(n, "epsilon", 1e-6f)));
			if (post != 0) {
				ox_cg_snprintf(v, sizeof v, "%s * xn", ox_cg_lit(OX_F64, 1.0 - post));
				st(cg, g, n, i, v);
			} else
				st(cg, g, n, i, "xn");
			break;
		}
		case OX_OP_Momentum: {
			int nesterov = !strcmp(ox_attr_str(n, "mode", "standard"), "nesterov");
			double a = ox_attr_float(n, "alpha", 0.0f);
			ld(g, n, 2 + 2 * nv + i, v, sizeof v);
			ox_cg_line(cg, 2, "const double vn = %s * %s + beta * g;", ox_cg_lit(OX_F64, a), v);
			st(cg, g, n, nv + i, "vn");
			if (nesterov) {
				ox_cg_snprintf(v, sizeof v, "x - R * (g + %s * vn)", ox_cg_lit(OX_F64, a));
				st(cg, g, n, i, v);
			} else
				st(cg, g, n, i, "x - R * vn");
			break;
		}
		}
		ox_cg_line(cg, 1, "}");
	}
	return 0;
}
