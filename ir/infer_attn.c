/* infer_attn.c: shape inference for the transformer blocks: Attention
 * (opset 23/24), RMSNormalization and RotaryEmbedding (opset 23).
 *
 * ox_attn_dims is the one place that reads Attention's geometry (3-D or
 * 4-D Q/K/V, head counts, past length); emit_attn.c calls it too, so the
 * two layers cannot disagree. onnxcc's own attribute ox_seq_first makes
 * 3-D inputs and Y [S, B, H*d] (nn.MultiheadAttention's order, read in
 * place: opt/attention.c), without past or extra outputs. Outputs: Y has
 * Q's layout with V's head size;
 * present_key/value are always 4-D [B, kv_heads, past + kv_len, head];
 * qk_matmul_output is [B, q_heads, q_len, past + kv_len].
 */
#include "ir.h"
#include "family.h"


static int float_dtype(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16;
}

/* a != b when both are known constants */
static int differ(const ox_graph *g, ox_dim a, ox_dim b)
{
	int64_t x = ox_dim_eval(g, a), y = ox_dim_eval(g, b);
	return a != b && x >= 0 && y >= 0 && x != y;
}

/* hidden / heads, checking divisibility where both are known */
static int split_heads(ox_graph *g, ox_node *n, ox_dim hidden, int64_t heads, const char *what,
                       ox_dim *out)
{
	int64_t h = ox_dim_eval(g, hidden);
	if (h >= 0 && h % heads)
		return ox_error(g, n, "%s hidden size %lld is not a multiple of %lld heads", what,
		                (long long)h, (long long)heads);
	*out = ox_dim_div(g, hidden, heads);
	return 0;
}

int ox_attn_dims(ox_graph *g, ox_node *n, ox_attn_geom *a)
{
	const ox_value *q = ox_in(g, n, 0), *k = ox_in(g, n, 1), *v = ox_in(g, n, 2);
	a->rank = q->shape.rank;
	if ((a->rank != 3 && a->rank != 4) || k->shape.rank != a->rank || v->shape.rank != a->rank)
		return ox_error(g, n, "Q, K and V must all be 3-D or all 4-D (ranks %d, %d, %d)",
		                q->shape.rank, k->shape.rank, v->shape.rank);
	const ox_dim *qd = q->shape.d, *kd = k->shape.d, *vd = v->shape.d;
	/* sequence first: [S, B, H*d] (ox_seq_first), else [B, S, H*d] */
	a->seq = a->rank == 3 && ox_attr_int(n, "ox_seq_first", 0);
	const int bi = a->seq, si = !a->seq;
	a->b = qd[bi];
	if (a->seq && (ox_in(g, n, 4) || ox_in(g, n, 6) || ox_out(g, n, 1) || ox_out(g, n, 2) || ox_out(g, n, 3)))
		return ox_error(g, n, "a sequence-first Attention has no past, padding lengths or extra outputs");
	if (a->rank == 3) {
		int64_t hq = ox_attr_int(n, "q_num_heads", 0), hkv = ox_attr_int(n, "kv_num_heads", 0);
		if (hq <= 0 || hkv <= 0)
			return ox_error(g, n, "3-D inputs need q_num_heads and kv_num_heads > 0");
		a->hq = hq, a->hkv = hkv;
		a->sq = qd[si], a->skv = kd[si];
		if (split_heads(g, n, qd[2], hq, "Q", &a->dk) ||
		    split_heads(g, n, vd[2], hkv, "V", &a->dv))
			return -1;
		ox_dim dk2;
		if (split_heads(g, n, kd[2], hkv, "K", &dk2))
			return -1;
		if (differ(g, dk2, a->dk))
			return ox_error(g, n, "Q and K head sizes differ");
		if (differ(g, vd[si], kd[si]))
			return ox_error(g, n, "K and V sequence lengths differ");
	} else {
		a->hq = qd[1], a->hkv = kd[1];
		a->sq = qd[2], a->skv = kd[2];
		a->dk = qd[3], a->dv = vd[3];
		if (differ(g, kd[3], qd[3]))
			return ox_error(g, n, "Q and K head sizes differ");
		if (differ(g, vd[1], kd[1]) || differ(g, vd[2], kd[2]))
			return ox_error(g, n, "K and V disagree on heads or sequence length");
	}
	if (differ(g, kd[bi], qd[bi]) || differ(g, vd[bi], qd[bi]))
		return ox_error(g, n, "Q, K and V batch sizes differ");
	int64_t hq = ox_dim_eval(g, a->hq), hkv = ox_dim_eval(g, a->hkv);
	if (hq >= 0 && hkv > 0 && hq % hkv)
		return ox_error(g, n, "%lld query heads are not a multiple of %lld kv heads",
		                (long long)hq, (long long)hkv);
	if (hkv == 0)
		return ox_error(g, n, "K has no heads");

	const ox_value *pk = ox_in(g, n, 4), *pv = ox_in(g, n, 5);
	a->past = 0;
	if (!pk != !pv)
		return ox_error(g, n, "past_key and past_value must be given together");
	if (pk) {
		if (pk->shape.rank != 4 || pv->shape.rank != 4)
			return ox_error(g, n, "past_key and past_value must be 4-D");
		if (differ(g, pk->shape.d[0], a->b) || differ(g, pk->shape.d[1], a->hkv) ||
		    differ(g, pk->shape.d[3], a->dk) || differ(g, pv->shape.d[0], a->b) ||
		    differ(g, pv->shape.d[1], a->hkv) || differ(g, pv->shape.d[2], pk->shape.d[2]) ||
		    differ(g, pv->shape.d[3], a->dv))
			return ox_error(g, n, "past_key/past_value shapes do not match K/V");
		a->past = pk->shape.d[2];
	}
	return 0;
}

static int infer_attention(ox_graph *g, ox_node *n)
{
	const ox_value *q = ox_in(g, n, 0);
	int dt = q->dtype;
	if (!float_dtype(dt))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(dt));
	for (int k = 1; k < 6; k++) {
		const ox_value *v = ox_in(g, n, k);
		if (v && v->dtype != dt && !(k == 3 && v->dtype == OX_BOOL))
			return ox_error(g, n, "input %d '%s' is %s, Q is %s", k, v->name,
			                ox_dtype_name(v->dtype), ox_dtype_name(dt));
	}
	ox_attn_geom a;
	if (ox_attn_dims(g, n, &a))
		return -1;
	int64_t mode = ox_attr_int(n, "qk_matmul_output_mode", 0);
	if (mode < 0 || mode > 3)
		return ox_error(g, n, "qk_matmul_output_mode %lld is not 0..3", (long long)mode);
	int64_t sp = ox_attr_int(n, "softmax_precision", 0);
	if (sp != 0 && !float_dtype((int)sp))
		return ox_error(g, n, "softmax_precision %lld is not a float type", (long long)sp);
	ox_dim total = ox_dim_add(g, a.past, a.skv);

	const ox_value *m = ox_in(g, n, 3);
	if (m) {
		int r = m->shape.rank;
		ox_dim want[4] = {a.b, a.hq, a.sq, total};
		if (r < 1 || r > 4)
			return ox_error(g, n, "attn_mask has rank %d, expected 1..4", r);
		for (int i = 0; i < r; i++) {
			ox_dim d = m->shape.d[i], w = want[4 - r + i];
			int64_t dv = ox_dim_eval(g, d), wv = ox_dim_eval(g, w);
			if (dv < 0 || wv < 0)
				continue;
			/* the last axis may be shorter: the missing keys are masked out */
			if (i == r - 1 ? dv > wv : (dv != 1 && dv != wv))
				return ox_error(g, n, "attn_mask dim %d (%lld) does not broadcast to %lld",
				                i, (long long)dv, (long long)wv);
		}
	}
	const ox_value *np = ox_in(g, n, 6);
	if (np) {
		if (np->dtype != OX_I64 || np->shape.rank != 1 || differ(g, np->shape.d[0], a.b))
			return ox_error(g, n, "nonpad_kv_seqlen must be i64 [batch]");
	}

	ox_shape s;
	if (a.seq)
		s = (ox_shape){3, {a.sq, a.b, ox_dim_mul(g, a.hq, a.dv)}};
	else if (a.rank == 3)
		s = (ox_shape){3, {a.b, a.sq, ox_dim_mul(g, a.hq, a.dv)}};
	else
		s = (ox_shape){4, {a.b, a.hq, a.sq, a.dv}};
	ox_set_out(g, n, 0, dt, &s);
	s = (ox_shape){4, {a.b, a.hkv, total, a.dk}};
	ox_set_out(g, n, 1, dt, &s);
	s = (ox_shape){4, {a.b, a.hkv, total, a.dv}};
	ox_set_out(g, n, 2, dt, &s);
	s = (ox_shape){4, {a.b, a.hq, a.sq, total}};
	ox_set_out(g, n, 3, dt, &s);
	return 0;
}

/* RMSNormalization: Y = X / sqrt(mean(X^2 over axis..rank-1) + epsilon) * scale,
 * scale broadcasting to X; Y has scale's type (the spec's V). */
static int infer_rmsnorm(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1);
	if (!float_dtype(x->dtype) || !float_dtype(w->dtype))
		return ox_error(g, n, "input types %s, %s are not supported", ox_dtype_name(x->dtype),
		                ox_dtype_name(w->dtype));
	int rank = x->shape.rank;
	int64_t a = ox_attr_int(n, "axis", -1);
	if (ox_norm_axis(a, rank) < 0)
		return ox_error(g, n, "axis %lld is out of range for rank %d", (long long)a, rank);
	int64_t stash = ox_attr_int(n, "stash_type", OX_F32);
	if (stash != OX_F32 && stash != OX_F64)
		return ox_error(g, n, "stash_type %s is not supported (f32 and f64 are)",
		                ox_dtype_name((int)stash));
	ox_shape b;
	int bad = w->shape.rank > rank || ox_broadcast(g, &x->shape, &w->shape, &b);
	for (int i = 0; !bad && i < rank; i++)
		bad = differ(g, b.d[i], x->shape.d[i]);
	if (bad)
		return ox_error(g, n, "scale '%s' does not broadcast to X", w->name);
	ox_set_out(g, n, 0, w->dtype, &x->shape);
	return 0;
}

/* RotaryEmbedding: input [B, H, S, D] or [B, S, H*D] (num_heads given);
 * cos/sin caches [max_pos, rot/2] with position_ids [B, S], or [B, S, rot/2]
 * without. The output has the input's shape. */
int ox_rope_dims(ox_graph *g, ox_node *n, int64_t *heads, int64_t *hd, int64_t *rot)
{
	const ox_value *x = ox_in(g, n, 0);
	int rank = x->shape.rank;
	int64_t nh = ox_attr_int(n, "num_heads", 0);
	if (rank == 4) {
		*heads = ox_dim_eval(g, x->shape.d[1]);
		*hd = ox_dim_eval(g, x->shape.d[3]);
	} else if (rank == 3) {
		if (nh <= 0)
			return ox_error(g, n, "a 3-D input needs num_heads > 0");
		int64_t hid = ox_dim_eval(g, x->shape.d[2]);
		if (hid >= 0 && hid % nh)
			return ox_error(g, n, "hidden size %lld is not a multiple of %lld heads",
			                (long long)hid, (long long)nh);
		*heads = nh;
		*hd = hid < 0 ? -1 : hid / nh;
	} else {
		return ox_error(g, n, "input must be 3-D or 4-D, not rank %d", rank);
	}
	int64_t r = ox_attr_int(n, "rotary_embedding_dim", 0);
	*rot = r > 0 ? r : *hd;
	if (r < 0 || (*rot >= 0 && *rot % 2) || (*hd >= 0 && *rot > *hd))
		return ox_error(g, n, "rotary_embedding_dim %lld must be even and at most the head size",
		                (long long)*rot);
	return 0;
}

static int infer_rope(ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *c = ox_in(g, n, 1), *s = ox_in(g, n, 2);
	const ox_value *p = ox_in(g, n, 3);
	if (!float_dtype(x->dtype))
		return ox_error(g, n, "input type %s is not supported", ox_dtype_name(x->dtype));
	if (c->dtype != x->dtype || s->dtype != x->dtype)
		return ox_error(g, n, "cos_cache and sin_cache must have the input's type");
	int64_t heads, hd, rot;
	if (ox_rope_dims(g, n, &heads, &hd, &rot))
		return -1;
	int want = p ? 2 : 3;
	if (c->shape.rank != want || s->shape.rank != want)
		return ox_error(g, n, "cos_cache and sin_cache must be %d-D %s position_ids", want,
		                p ? "with" : "without");
	for (int i = 0; i < want; i++)
		if (differ(g, c->shape.d[i], s->shape.d[i]))
			return ox_error(g, n, "cos_cache and sin_cache shapes differ");
	int64_t half = ox_dim_eval(g, c->shape.d[want - 1]);
	if (rot >= 0 && half >= 0 && half < rot / 2)
		return ox_error(g, n, "the caches have %lld columns, the rotation needs %lld",
		                (long long)half, (long long)(rot / 2));
	if (p && (!ox_dtype_is_int(p->dtype) || p->shape.rank != 2))
		return ox_error(g, n, "position_ids must be a 2-D integer tensor");
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

int infer_attn(ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_Attention:
		return infer_attention(g, n);
	case OX_OP_RMSNormalization:
		return infer_rmsnorm(g, n);
	case OX_OP_RotaryEmbedding:
		return infer_rope(g, n);
	}
	return ox_error(g, n, "not an attention-family op");
}
