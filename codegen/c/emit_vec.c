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
#include "../cg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the names of a rendering: its functions' prefix and its value type */
typedef struct {
	const char *fn, *type;
} rendering;

/* the f32 literal of a constant body input, as "ox_vf_set1(...)" */
static const char *lit(ox_cg *cg, const rendering *R, double v)
{
	return ox_cg_text(cg, "%s_set1(%s)", R->fn, ox_cg_lit(OX_F32, v));
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

/* a fused QuantizeLinear's or DequantizeLinear's scale, zero point (0
 * without one) and, of the 8-bit type, lo and hi: its constants of the
 * body (opt/ewfuse.c, ox_opt_fused_qdq); 0 if they are not there */
static int qdq_params(const ox_graph *b, const ox_node *f, double *s, double *z, double *lo, double *hi)
{
	if (f->nin < 2 || f->in[1] < 0 || f->nout != 1)
		return 0;
	const ox_value *sv = &b->vals[f->in[1]], *zv = f->nin > 2 && f->in[2] >= 0 ? &b->vals[f->in[2]] : NULL;
	const int q = f->op == OX_OP_DequantizeLinear ? b->vals[f->in[0]].dtype : b->vals[f->out[0]].dtype;
	if (sv->kind != OX_V_CONST || !sv->data || (zv && (zv->kind != OX_V_CONST || !zv->data)) ||
	    (q != OX_I8 && q != OX_U8))
		return 0;
	*s = ox_tensor_get_f64(sv->data, 0);
	*z = zv ? ox_tensor_get_f64(zv->data, 0) : 0;
	*lo = q == OX_I8 ? -128 : 0;
	*hi = q == OX_I8 ? 127 : 255;
	return 1;
}

int ox_cg_vbody_ok(const ox_graph *b, const ox_node *f)
{
	double s, z, lo, hi;
	switch (f->op) {
	case OX_OP_QuantizeLinear: case OX_OP_DequantizeLinear:
		return qdq_params(b, f, &s, &z, &lo, &hi);
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

int ox_cg_vbody(ox_cg *cg, ox_buf *t, ox_graph *b, const char *const *in, const char *out, int lvl, int scalar)
{
	const rendering R = scalar ? (rendering){"ox_sf", "float"} : (rendering){"ox_vf", "ox_vf"};
	const char *P = R.fn;
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
		const char *un = NULL, *bin = NULL; /* a function of one operand, of two */
		switch (f->op) {
		case OX_OP_Relu: un = "relu"; break;
		case OX_OP_Sigmoid: un = "sigmoid"; break;
		case OX_OP_HardSwish: un = "hardswish"; break;
		case OX_OP_Tanh: un = "tanh"; break;
		case OX_OP_Erf: un = "erf"; break;
		case OX_OP_Exp: un = "exp"; break;
		case OX_OP_Neg: un = "neg"; break;
		case OX_OP_Abs: un = "abs"; break;
		case OX_OP_Sqrt: un = "sqrt"; break;
		case OX_OP_Gelu: un = strcmp(ox_attr_str(f, "approximate", "none"), "tanh") ? "gelu" : "gelu_tanh"; break;
		case OX_OP_Add: bin = "add"; break;
		case OX_OP_Sub: bin = "sub"; break;
		case OX_OP_Mul: bin = "mul"; break;
		case OX_OP_Div: bin = "div"; break;
		}
		char e[1024];
		if (un) {
			ox_cg_snprintf(e, sizeof e, "%s_%s(%s)", P, un, a[0]);
		} else if (bin) {
			ox_cg_snprintf(e, sizeof e, "%s_%s(%s, %s)", P, bin, a[0], a[1]);
		} else switch (f->op) {
		case OX_OP_Reciprocal: ox_cg_snprintf(e, sizeof e, "%s_div(%s, %s)", P, lit(cg, &R, 1), a[0]); break;
		case OX_OP_DequantizeLinear:
		case OX_OP_QuantizeLinear: {
			/* 8-bit values are f32 lanes holding integers (emit_fused.c
			 * loads and stores them): (x - z) s, and ox_vf_quant */
			double sc, z, lo, hi;
			if (!qdq_params(b, f, &sc, &z, &lo, &hi)) {
				rc = ox_error(cg->g, f, "cannot be computed in a fused vector body");
				continue;
			}
			char ls[64], lz[64], ll[64], lh[64];
			ox_cg_snprintf(ls, sizeof ls, "%s", ox_cg_lit(OX_F32, sc));
			ox_cg_snprintf(lz, sizeof lz, "%s", ox_cg_lit(OX_F32, z));
			ox_cg_snprintf(ll, sizeof ll, "%s", ox_cg_lit(OX_F32, lo));
			ox_cg_snprintf(lh, sizeof lh, "%s", ox_cg_lit(OX_F32, hi));
			if (f->op == OX_OP_DequantizeLinear)
				ox_cg_snprintf(e, sizeof e, "%s_mul(%s_sub(%s, %s_set1(%s)), %s_set1(%s))", P, P, a[0], P, lz, P, ls);
			else
				ox_cg_snprintf(e, sizeof e, "%s_quant(%s, %s, %s, %s, %s)", P, a[0], ls, lz, ll, lh);
			break;
		}
		case OX_OP_Pow: {
			double p = pow_exponent(b, f);
			if (p == 2)
				ox_cg_snprintf(e, sizeof e, "%s_mul(%s, %s)", P, a[0], a[0]);
			else if (p == 3)
				ox_cg_snprintf(e, sizeof e, "%s_mul(%s_mul(%s, %s), %s)", P, P, a[0], a[0], a[0]);
			else if (p == 1)
				ox_cg_snprintf(e, sizeof e, "%s", a[0]);
			else if (p == 0.5)
				ox_cg_snprintf(e, sizeof e, "%s_sqrt(%s)", P, a[0]);
			else if (p == -1)
				ox_cg_snprintf(e, sizeof e, "%s_div(%s, %s)", P, lit(cg, &R, 1), a[0]);
			else if (p == -0.5)
				ox_cg_snprintf(e, sizeof e, "%s_div(%s, %s_sqrt(%s))", P, lit(cg, &R, 1), P, a[0]);
			else {
				rc = ox_error(cg->g, f, "Pow needs a constant exponent 2, 3, 1, 0.5, -1 or -0.5 here");
				continue;
			}
			break;
		}
		case OX_OP_LeakyRelu:
		case OX_OP_PRelu: {
			const char *slope = f->op == OX_OP_PRelu ? a[1] : lit(cg, &R, ox_attr_float(f, "alpha", 0.01f));
			ox_cg_snprintf(e, sizeof e, "%s_select(%s_lt(%s, %s_zero()), %s_mul(%s, %s), %s)", P, P, a[0], P, P, a[0],
				       slope, a[0]);
			break;
		}
		case OX_OP_HardSigmoid:
			ox_cg_snprintf(e, sizeof e, "%s_hardsigmoid(%s, %s, ", P, a[0],
				 ox_cg_lit(OX_F32, ox_attr_float(f, "alpha", 0.2f)));
			ox_cg_snprintf(e + strlen(e), sizeof e - strlen(e), "%s)", ox_cg_lit(OX_F32, ox_attr_float(f, "beta", 0.5f)));
			break;
		case OX_OP_Clip: {
			const char *lo = a[1], *hi = a[2];
			if (f->opset < 11) { /* the bounds are attributes */
				lo = lit(cg, &R, ox_attr_float(f, "min", -3.402823466e+38f));
				hi = lit(cg, &R, ox_attr_float(f, "max", 3.402823466e+38f));
			}
			if (lo && hi)
				ox_cg_snprintf(e, sizeof e, "%s_clamp(%s, %s, %s)", P, a[0], lo, hi);
			else if (lo)
				ox_cg_snprintf(e, sizeof e, "%s_max(%s, %s)", P, a[0], lo);
			else if (hi)
				ox_cg_snprintf(e, sizeof e, "%s_min(%s, %s)", P, a[0], hi);
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
		ox_buf_printf(t, "const %s v%d = %s;\n", R.type, i, e);
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
