/* infer_seq.c: shape inference for the opset-27 sequence-model blocks.
 *
 * LinearAttention(query, key, value, past_state?, decay?, beta?) takes
 * packed [B, T, H*D] activations; q_num_heads / kv_num_heads unpack them:
 * d_k = query.last / H_q, d_v = value.last / H_kv. Outputs are
 * output [B, T, H_q*d_v] and present_state [B, H_kv, d_k, d_v].
 * CausalConvWithState(input [B,C,T], weight [C,1,K], bias?, past_state?)
 * is a depthwise causal conv: output [B,C,T], present_state [B,C,K-1].
 * The attribute checks here are the single place both ops are validated;
 * codegen/c/emit_seq.c trusts them (and repeats only what it needs).
 */
#include "ir.h"
#include <string.h>

static int seq_float(int dt)
{
	return dt == OX_F32 || dt == OX_F16 || dt == OX_BF16 || dt == OX_F64;
}

static int infer_linear_attention(ox_graph *g, ox_node *n)
{
	ox_value *q = ox_in(g, n, 0), *k = ox_in(g, n, 1), *v = ox_in(g, n, 2);
	ox_value *past = ox_in(g, n, 3);
	int64_t hq = ox_attr_int(n, "q_num_heads", 0), hkv = ox_attr_int(n, "kv_num_heads", 0);
	const char *rule = ox_attr_str(n, "update_rule", "gated_delta");
	int gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
	int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
	ox_shape o, st;

	if (!gated && !delta && strcmp(rule, "linear"))
		return ox_error(g, n, "update_rule '%s' is not one of linear, gated, delta, gated_delta", rule);
	if (hq <= 0 || hkv <= 0 || hq % hkv)
		return ox_error(g, n, "q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)",
				(long long)hq, (long long)hkv);
	if (q->shape.rank != 3 || k->shape.rank != 3 || v->shape.rank != 3)
		return ox_error(g, n, "query, key and value must be 3-D [B, T, H*D]");
	if (!seq_float(q->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(q->dtype));
	for (int i = 6; i < n->nin; i++)
		if (n->in[i] >= 0)
			return ox_error(g, n, "input %d is not supported yet", i);
	for (int i = 2; i < n->nout; i++)
		if (n->out[i] >= 0)
			return ox_error(g, n, "output %d is not supported yet", i);
	if (gated && !ox_in(g, n, 4))
		return ox_error(g, n, "update_rule '%s' needs the decay input", rule);
	if (delta && !ox_in(g, n, 5))
		return ox_error(g, n, "update_rule '%s' needs the beta input", rule);

	o.rank = 3;
	o.d[0] = q->shape.d[0];
	o.d[1] = q->shape.d[1];
	ox_dim dv = ox_dim_div(g, v->shape.d[2], hkv);
	o.d[2] = ox_dim_mul(g, dv, hq);
	ox_set_out(g, n, 0, q->dtype, &o);
	st.rank = 4;
	st.d[0] = q->shape.d[0];
	st.d[1] = hkv;
	st.d[2] = ox_dim_div(g, q->shape.d[2], hq);
	st.d[3] = dv;
	if (ox_out(g, n, 1))
		ox_set_out(g, n, 1, past ? past->dtype : q->dtype, &st);
	return 0;
}

static int infer_causal_conv(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1);
	const char *act = ox_attr_str(n, "activation", "none");
	ox_shape st;

	if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish") && *act)
		return ox_error(g, n, "activation '%s' is not supported", act);
	if (x->shape.rank != 3 || w->shape.rank != 3)
		return ox_error(g, n, "input must be [B, C, T] and weight [C, 1, K]");
	if (!seq_float(x->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	st.rank = 3;
	st.d[0] = x->shape.d[0];
	st.d[1] = x->shape.d[1];
	st.d[2] = ox_dim_sub(g, w->shape.d[2], 1);
	if (ox_out(g, n, 1))
		ox_set_out(g, n, 1, x->dtype, &st);
	return 0;
}

int infer_seq(ox_graph *g, ox_node *n)
{
	if (n->op == OX_OP_LinearAttention)
		return infer_linear_attention(g, n);
	if (n->op == OX_OP_CausalConvWithState)
		return infer_causal_conv(g, n);
	return ox_error(g, n, "not a sequence-block op");
}
