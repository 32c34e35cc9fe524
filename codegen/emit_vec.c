/* emit_vec.c: the C rendering of an elementwise body (an epilogue, a fused
 * chain) over f32 vectors of the target (templates/vf.c, vmath.c).
 *
 * The body is a small graph in the IR (ox_epilogue, ir.h); each of its
 * nodes becomes one `const ox_vf vK = ...;` line, its inputs given by the
 * caller as C expressions of vectors (an accumulator, a load, a
 * broadcast literal); a constant of the body (Pow's exponent, opt/ewfuse.c)
 * is read here. Transcendentals use the vector approximations of
 * templates/vmath.c (their error is stated in tests/vmath/README.md).
 */
#include "cg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the scalar f32 literal of a constant body input, as "ox_vf_set1(...)" */
static const char *lit(double v)
{
	static char ring[8][64];
	static int at;
	at = (at + 1) % 8;
	ox_cg_snprintf(ring[at], sizeof ring[at], "ox_vf_set1(%s)", ox_cg_lit(OX_F32, v));
	return ring[at];
}

/* Pow's exponent when it is a constant of the body with a vector form, else 0 */
static double pow_exponent(const ox_graph *b, const ox_node *f)
{
	if (f->nin < 2 || f->in[1] < 0)
		return 0;
	const ox_value *e = &b->vals[f->in[1]];
	if (e->kind != OX_V_CONST || !e->data || ox_shape_numel(&e->shape) != 1)
		return 0;
	double p = ox_tensor_get_f64(e->data, 0);
	return p == 2 || p == 3 || p == 1 || p == 0.5 || p == -1 || p == -0.5 ? p : 0;
}

int ox_cg_vbody_ok(const ox_graph *b, const ox_node *f)
{
	switch (f->op) {
	case OX_OP_Relu: case OX_OP_LeakyRelu: case OX_OP_Sigmoid: case OX_OP_HardSigmoid:
	case OX_OP_HardSwish: case OX_OP_Tanh: case OX_OP_Erf: case OX_OP_Exp: case OX_OP_Neg:
	case OX_OP_Abs: case OX_OP_Sqrt: case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div:
	case OX_OP_PRelu: case OX_OP_Gelu: case OX_OP_Clip: case OX_OP_Reciprocal:
		return 1;
	case OX_OP_Pow:
		return pow_exponent(b, f) != 0;
	}
	return 0;
}

int ox_cg_vbody(ox_cg *cg, ox_buf *t, ox_graph *b, const char *const *in, const char *out, int lvl)
{
	int nv = b->nvals;
	char **name = calloc((size_t)nv + 1, sizeof *name);
	for (int j = 0; j < b->ninputs; j++)
		name[b->inputs[j]] = strdup(in[j]);
	int rc = 0;
	for (int i = 0; i < b->nnodes && !rc; i++) {
		ox_node *f = &b->nodes[i];
		const char *a[3] = {NULL, NULL, NULL};
		for (int k = 0; k < f->nin && k < 3; k++)
			a[k] = f->in[k] >= 0 ? name[f->in[k]] : NULL;
		char e[1024];
		switch (f->op) {
		case OX_OP_Relu: ox_cg_snprintf(e, sizeof e, "ox_vf_relu(%s)", a[0]); break;
		case OX_OP_Sigmoid: ox_cg_snprintf(e, sizeof e, "ox_vf_sigmoid(%s)", a[0]); break;
		case OX_OP_HardSwish: ox_cg_snprintf(e, sizeof e, "ox_vf_hardswish(%s)", a[0]); break;
		case OX_OP_Tanh: ox_cg_snprintf(e, sizeof e, "ox_vf_tanh(%s)", a[0]); break;
		case OX_OP_Erf: ox_cg_snprintf(e, sizeof e, "ox_vf_erf(%s)", a[0]); break;
		case OX_OP_Exp: ox_cg_snprintf(e, sizeof e, "ox_vf_exp(%s)", a[0]); break;
		case OX_OP_Neg: ox_cg_snprintf(e, sizeof e, "ox_vf_neg(%s)", a[0]); break;
		case OX_OP_Abs: ox_cg_snprintf(e, sizeof e, "ox_vf_abs(%s)", a[0]); break;
		case OX_OP_Sqrt: ox_cg_snprintf(e, sizeof e, "ox_vf_sqrt(%s)", a[0]); break;
		case OX_OP_Add: ox_cg_snprintf(e, sizeof e, "ox_vf_add(%s, %s)", a[0], a[1]); break;
		case OX_OP_Sub: ox_cg_snprintf(e, sizeof e, "ox_vf_sub(%s, %s)", a[0], a[1]); break;
		case OX_OP_Mul: ox_cg_snprintf(e, sizeof e, "ox_vf_mul(%s, %s)", a[0], a[1]); break;
		case OX_OP_Div: ox_cg_snprintf(e, sizeof e, "ox_vf_div(%s, %s)", a[0], a[1]); break;
		case OX_OP_Reciprocal: ox_cg_snprintf(e, sizeof e, "ox_vf_div(ox_vf_set1(1.0f), %s)", a[0]); break;
		case OX_OP_Pow: {
			double p = pow_exponent(b, f);
			if (p == 2)
				ox_cg_snprintf(e, sizeof e, "ox_vf_mul(%s, %s)", a[0], a[0]);
			else if (p == 3)
				ox_cg_snprintf(e, sizeof e, "ox_vf_mul(ox_vf_mul(%s, %s), %s)", a[0], a[0], a[0]);
			else if (p == 1)
				ox_cg_snprintf(e, sizeof e, "%s", a[0]);
			else if (p == 0.5)
				ox_cg_snprintf(e, sizeof e, "ox_vf_sqrt(%s)", a[0]);
			else if (p == -1)
				ox_cg_snprintf(e, sizeof e, "ox_vf_div(ox_vf_set1(1.0f), %s)", a[0]);
			else if (p == -0.5)
				ox_cg_snprintf(e, sizeof e, "ox_vf_div(ox_vf_set1(1.0f), ox_vf_sqrt(%s))", a[0]);
			else {
				rc = ox_error(cg->g, f, "Pow needs a constant exponent 2, 3, 1, 0.5, -1 or -0.5 here");
				continue;
			}
			break;
		}
		case OX_OP_LeakyRelu:
			ox_cg_snprintf(e, sizeof e, "ox_vf_select(ox_vf_lt(%s, ox_vf_zero()), ox_vf_mul(%s, %s), %s)", a[0], a[0],
				 lit(ox_attr_float(f, "alpha", 0.01f)), a[0]);
			break;
		case OX_OP_PRelu:
			ox_cg_snprintf(e, sizeof e, "ox_vf_select(ox_vf_lt(%s, ox_vf_zero()), ox_vf_mul(%s, %s), %s)", a[0], a[0],
				 a[1], a[0]);
			break;
		case OX_OP_HardSigmoid:
			ox_cg_snprintf(e, sizeof e, "ox_vf_hardsigmoid(%s, %s, ", a[0],
				 ox_cg_lit(OX_F32, ox_attr_float(f, "alpha", 0.2f)));
			ox_cg_snprintf(e + strlen(e), sizeof e - strlen(e), "%s)", ox_cg_lit(OX_F32, ox_attr_float(f, "beta", 0.5f)));
			break;
		case OX_OP_Gelu:
			ox_cg_snprintf(e, sizeof e, "%s(%s)",
				 strcmp(ox_attr_str(f, "approximate", "none"), "tanh") ? "ox_vf_gelu" : "ox_vf_gelu_tanh", a[0]);
			break;
		case OX_OP_Clip: {
			const char *lo = a[1], *hi = a[2];
			char l[64], h[64];
			if (f->opset < 11) { /* the bounds are attributes */
				ox_cg_snprintf(l, sizeof l, "%s", lit(ox_attr_float(f, "min", -3.402823466e+38f)));
				ox_cg_snprintf(h, sizeof h, "%s", lit(ox_attr_float(f, "max", 3.402823466e+38f)));
				lo = l, hi = h;
			}
			if (lo && hi)
				ox_cg_snprintf(e, sizeof e, "ox_vf_clamp(%s, %s, %s)", a[0], lo, hi);
			else if (lo)
				ox_cg_snprintf(e, sizeof e, "ox_vf_max(%s, %s)", a[0], lo);
			else if (hi)
				ox_cg_snprintf(e, sizeof e, "ox_vf_min(%s, %s)", a[0], hi);
			else
				ox_cg_snprintf(e, sizeof e, "%s", a[0]);
			break;
		}
		default:
			rc = ox_error(cg->g, f, "cannot be computed in a fused vector body");
			continue;
		}
		ox_id o = f->out[0];
		name[o] = malloc(16);
		ox_cg_snprintf(name[o], 16, "v%d", i);
		for (int l = 0; l < lvl; l++)
			ox_buf_puts(t, "\t");
		ox_buf_printf(t, "const ox_vf v%d = %s;\n", i, e);
	}
	if (!rc) {
		for (int l = 0; l < lvl; l++)
			ox_buf_puts(t, "\t");
		ox_buf_printf(t, "%s = %s;\n", out, name[b->outputs[0]]);
	}
	for (int i = 0; i < nv; i++)
		free(name[i]);
	free(name);
	return rc;
}
