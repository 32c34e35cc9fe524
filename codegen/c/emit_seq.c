/* emit_seq.c: C emission for the opset-27 sequence-model blocks.
 *
 * LinearAttention runs the recurrence token by token, one (batch, kv head)
 * at a time, with that head's d_k x d_v state held in a float array on the
 * stack (so the function stays reentrant; the size is capped). The order of
 * operations follows the ONNX function body: decay the state, retrieve
 * S^T k, write k (x) beta*(v - retrieved), then read scale * q^T S for each
 * query head of the group. CausalConvWithState is a depthwise conv over
 * [past_state (or zeros), input] with present_state the last K-1 columns.
 * f16/bf16 are computed in float; the shapes were checked by infer_seq.c.
 */
#include "../cg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEQ_MAX_STATE (1 << 16) /* floats of one head's state on the stack */

static int64_t dimv(ox_value *v, int k) { return v->shape.d[k]; }

static int emit_linear_attention(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *q = ox_in(g, n, 0), *k = ox_in(g, n, 1), *v = ox_in(g, n, 2);
	ox_value *past = ox_in(g, n, 3), *dec = ox_in(g, n, 4), *beta = ox_in(g, n, 5);
	ox_value *o = ox_out(g, n, 0), *pres = ox_out(g, n, 1);
	int64_t hq = ox_attr_int(n, "q_num_heads", 0), hkv = ox_attr_int(n, "kv_num_heads", 0);
	const char *rule = ox_attr_str(n, "update_rule", "gated_delta");
	int gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
	int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
	int64_t B = dimv(q, 0), T = dimv(q, 1), QL = dimv(q, 2), KL = dimv(k, 2), VL = dimv(v, 2);
	int64_t dk = QL / hq, dv = VL / hkv, grp = hq / hkv, DL = 0, dd = 0, BL = 0;
	float scale;

	if (QL % hq || VL % hkv || KL != hkv * dk)
		return ox_error(g, n, "query/key/value last dims (%lld, %lld, %lld) do not split into %lld/%lld heads",
				(long long)QL, (long long)KL, (long long)VL, (long long)hq, (long long)hkv);
	if (dimv(k, 0) != B || dimv(v, 0) != B || dimv(k, 1) != T || dimv(v, 1) != T)
		return ox_error(g, n, "query, key and value must agree on batch and sequence length");
	if (dk * dv > SEQ_MAX_STATE)
		return ox_error(g, n, "state of %lld x %lld per head is too large", (long long)dk, (long long)dv);
	if (past && (past->shape.rank != 4 || dimv(past, 0) != B || dimv(past, 1) != hkv ||
		     dimv(past, 2) != dk || dimv(past, 3) != dv))
		return ox_error(g, n, "past_state must be [B, kv_num_heads, d_k, d_v]");
	if (gated) {
		DL = dec->shape.rank == 3 ? dimv(dec, 2) : -1;
		dd = DL == hkv * dk ? dk : DL == hkv ? 1 : -1;
		if (dd < 0 || dimv(dec, 0) != B || dimv(dec, 1) != T)
			return ox_error(g, n, "decay must be [B, T, H_kv*d_k] or [B, T, H_kv]");
	}
	if (delta) {
		BL = beta->shape.rank == 3 ? dimv(beta, 2) : -1;
		if ((BL != hkv && BL != 1) || dimv(beta, 0) != B || dimv(beta, 1) != T)
			return ox_error(g, n, "beta must be [B, T, H_kv] or [B, T, 1]");
	}
	{
		const ox_attr *a = ox_attr_get(n, "scale");
		/* the function body spells the default as Reciprocal(Sqrt(float(d_k))) */
		scale = a && a->f != 0.0f ? a->f : 1.0f / sqrtf((float)dk);
	}

	ox_cg_line(cg, 1, "float S[%lld], U[%lld];", (long long)(dk * dv), (long long)dv);
	ox_cg_line(cg, 1, "for (int b = 0; b < %lld; b++) {", (long long)B);
	ox_cg_line(cg, 2, "for (int h = 0; h < %lld; h++) {", (long long)hkv);
	if (past) {
		ox_cg_line(cg, 3, "for (int i = 0; i < %lld; i++)", (long long)(dk * dv));
		char e[96];
		ox_cg_snprintf(e, sizeof e, "in3[(b * %lld + h) * %lld + i]", (long long)hkv, (long long)(dk * dv));
		ox_cg_line(cg, 4, "S[i] = %s;", ox_cg_load(past->dtype, e));
	} else {
		ox_cg_line(cg, 3, "memset(S, 0, sizeof S);");
	}
	ox_cg_line(cg, 3, "for (int t = 0; t < %lld; t++) {", (long long)T);
	ox_cg_line(cg, 4, "const %s *kt = in1 + (b * %lld + t) * %lld + h * %lld;", ox_cg_ctype(k->dtype),
		   (long long)T, (long long)KL, (long long)dk);
	ox_cg_line(cg, 4, "const %s *vt = in2 + (b * %lld + t) * %lld + h * %lld;", ox_cg_ctype(v->dtype),
		   (long long)T, (long long)VL, (long long)dv);
	if (gated) {
		ox_cg_line(cg, 4, "const %s *gt = in4 + (b * %lld + t) * %lld + h * %lld;", ox_cg_ctype(dec->dtype),
			   (long long)T, (long long)DL, (long long)dd);
		ox_cg_line(cg, 4, "for (int i = 0; i < %lld; i++) {", (long long)dk);
		ox_cg_line(cg, 5, "float e = expf(%s);", ox_cg_load(dec->dtype, dd == 1 ? "gt[0]" : "gt[i]"));
		ox_cg_line(cg, 5, "for (int j = 0; j < %lld; j++)", (long long)dv);
		ox_cg_line(cg, 6, "S[i * %lld + j] *= e;", (long long)dv);
		ox_cg_line(cg, 4, "}");
	}
	if (delta) {
		char e[96];
		ox_cg_snprintf(e, sizeof e, "in5[(b * %lld + t) * %lld%s]", (long long)T, (long long)BL, BL == 1 ? "" : " + h");
		ox_cg_line(cg, 4, "float bt = %s;", ox_cg_load(beta->dtype, e));
		ox_cg_line(cg, 4, "for (int j = 0; j < %lld; j++) {", (long long)dv);
		ox_cg_line(cg, 5, "double r = 0;");
		ox_cg_line(cg, 5, "for (int i = 0; i < %lld; i++)", (long long)dk);
		ox_cg_line(cg, 6, "r += (double)S[i * %lld + j] * %s;", (long long)dv, ox_cg_load(k->dtype, "kt[i]"));
		ox_cg_line(cg, 5, "U[j] = bt * (%s - (float)r);", ox_cg_load(v->dtype, "vt[j]"));
		ox_cg_line(cg, 4, "}");
	} else {
		ox_cg_line(cg, 4, "for (int j = 0; j < %lld; j++)", (long long)dv);
		ox_cg_line(cg, 5, "U[j] = %s;", ox_cg_load(v->dtype, "vt[j]"));
	}
	ox_cg_line(cg, 4, "for (int i = 0; i < %lld; i++) {", (long long)dk);
	ox_cg_line(cg, 5, "float ki = %s;", ox_cg_load(k->dtype, "kt[i]"));
	ox_cg_line(cg, 5, "for (int j = 0; j < %lld; j++)", (long long)dv);
	ox_cg_line(cg, 6, "S[i * %lld + j] += ki * U[j];", (long long)dv);
	ox_cg_line(cg, 4, "}");
	/* each query head of this kv head's group reads the updated state */
	ox_cg_line(cg, 4, "for (int m = 0; m < %lld; m++) {", (long long)grp);
	ox_cg_line(cg, 5, "const %s *qt = in0 + (b * %lld + t) * %lld + (h * %lld + m) * %lld;",
		   ox_cg_ctype(q->dtype), (long long)T, (long long)QL, (long long)grp, (long long)dk);
	ox_cg_line(cg, 5, "%s *ot = out0 + (b * %lld + t) * %lld + (h * %lld + m) * %lld;", ox_cg_ctype(o->dtype),
		   (long long)T, (long long)(hq * dv), (long long)grp, (long long)dv);
	ox_cg_line(cg, 5, "for (int j = 0; j < %lld; j++) {", (long long)dv);
	ox_cg_line(cg, 6, "double a = 0;");
	ox_cg_line(cg, 6, "for (int i = 0; i < %lld; i++)", (long long)dk);
	ox_cg_line(cg, 7, "a += (double)%s * S[i * %lld + j];", ox_cg_load(q->dtype, "qt[i]"), (long long)dv);
	{
		char e[64];
		ox_cg_snprintf(e, sizeof e, "%s * (float)a", ox_cg_lit(OX_F32, scale));
		ox_cg_line(cg, 6, "ot[j] = %s;", ox_cg_store(o->dtype, e));
	}
	ox_cg_line(cg, 5, "}");
	ox_cg_line(cg, 4, "}");
	ox_cg_line(cg, 3, "}");
	if (pres) {
		ox_cg_line(cg, 3, "for (int i = 0; i < %lld; i++)", (long long)(dk * dv));
		ox_cg_line(cg, 4, "out1[(b * %lld + h) * %lld + i] = %s;", (long long)hkv, (long long)(dk * dv),
			   ox_cg_store(pres->dtype, "S[i]"));
	}
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

static int emit_causal_conv(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *bias = ox_in(g, n, 2), *past = ox_in(g, n, 3);
	ox_value *o = ox_out(g, n, 0), *pres = ox_out(g, n, 1);
	const char *act = ox_attr_str(n, "activation", "none");
	int silu = !strcmp(act, "silu") || !strcmp(act, "swish");
	int64_t B = dimv(x, 0), C = dimv(x, 1), T = dimv(x, 2), K = dimv(w, 2);
	char e[256], pv[96], xv[64];

	if (dimv(w, 0) != C || dimv(w, 1) != 1 || K < 1)
		return ox_error(g, n, "weight must be [C, 1, K] with C = %lld", (long long)C);
	if (bias && (bias->shape.rank != 1 || dimv(bias, 0) != C))
		return ox_error(g, n, "bias must be [C]");
	if (past && (past->shape.rank != 3 || dimv(past, 0) != B || dimv(past, 1) != C || dimv(past, 2) != K - 1))
		return ox_error(g, n, "past_state must be [B, C, K-1]");

	/* padded[p], p in [0, K-1+T): past (or zero) for p < K-1, else input */
	if (past)
		ox_cg_snprintf(pv, sizeof pv, "%s", ox_cg_load(past->dtype, "ps[p]"));
	else
		ox_cg_snprintf(pv, sizeof pv, "0.0f");
	ox_cg_snprintf(xv, sizeof xv, "xs[p - %lld]", (long long)(K - 1));
	ox_cg_snprintf(e, sizeof e, "(p < %lld ? %s : %s)", (long long)(K - 1), pv, ox_cg_load(x->dtype, xv));
	ox_cg_line(cg, 1, "for (int b = 0; b < %lld; b++) {", (long long)B);
	ox_cg_line(cg, 2, "for (int c = 0; c < %lld; c++) {", (long long)C);
	ox_cg_line(cg, 3, "const %s *xs = in0 + (b * %lld + c) * %lld;", ox_cg_ctype(x->dtype), (long long)C,
		   (long long)T);
	if (past)
		ox_cg_line(cg, 3, "const %s *ps = in3 + (b * %lld + c) * %lld;", ox_cg_ctype(past->dtype),
			   (long long)C, (long long)(K - 1));
	ox_cg_line(cg, 3, "const %s *ws = in1 + c * %lld;", ox_cg_ctype(w->dtype), (long long)K);
	ox_cg_line(cg, 3, "for (int t = 0; t < %lld; t++) {", (long long)T);
	ox_cg_line(cg, 4, "float acc = 0.0f;");
	ox_cg_line(cg, 4, "for (int j = 0; j < %lld; j++) {", (long long)K);
	ox_cg_line(cg, 5, "int p = t + j;");
	ox_cg_line(cg, 5, "acc += %s * %s;", ox_cg_load(w->dtype, "ws[j]"), e);
	ox_cg_line(cg, 4, "}");
	if (bias)
		ox_cg_line(cg, 4, "acc += %s;", ox_cg_load(bias->dtype, "in2[c]"));
	if (silu) {
		if (o->dtype == OX_F16 || o->dtype == OX_BF16) {
			/* the function body rounds the conv output to T before the activation */
			char st[96];
			ox_cg_snprintf(st, sizeof st, "%s", ox_cg_store(o->dtype, "acc"));
			ox_cg_line(cg, 4, "acc = %s;", ox_cg_load(o->dtype, st));
		}
		ox_cg_line(cg, 4, "acc = acc * (1.0f / (1.0f + expf(-acc)));");
	}
	ox_cg_line(cg, 4, "out0[(b * %lld + c) * %lld + t] = %s;", (long long)C, (long long)T,
		   ox_cg_store(o->dtype, "acc"));
	ox_cg_line(cg, 3, "}");
	if (pres && K > 1) {
		/* present_state is padded[T .. T+K-2] */
		ox_cg_line(cg, 3, "for (int j = 0; j < %lld; j++) {", (long long)(K - 1));
		ox_cg_line(cg, 4, "int p = %lld + j;", (long long)T);
		if (pres->dtype == x->dtype && (!past || past->dtype == x->dtype)) {
			/* same storage type: copy the bits, no rounding trip */
			ox_cg_line(cg, 4, "out1[(b * %lld + c) * %lld + j] = p < %lld ? %s : xs[p - %lld];",
				   (long long)C, (long long)(K - 1), (long long)(K - 1), past ? "ps[p]" : "0",
				   (long long)(K - 1));
		} else {
			ox_cg_line(cg, 4, "out1[(b * %lld + c) * %lld + j] = %s;", (long long)C, (long long)(K - 1),
				   ox_cg_store(pres->dtype, e));
		}
		ox_cg_line(cg, 3, "}");
	}
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	return 0;
}

int emit_seq(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (n->op == OX_OP_LinearAttention)
		return emit_linear_attention(cg, g, n);
	if (n->op == OX_OP_CausalConvWithState)
		return emit_causal_conv(cg, g, n);
	return ox_error(g, n, "not a sequence-block op");
}
