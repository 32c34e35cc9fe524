/* infer_rnn.c: shape inference for the recurrent ops RNN, GRU and LSTM.
 *
 * Every opset from 7 on: X [seq, batch, input] (layout 0) or [batch, seq,
 * input] (layout 1, opset 14+), W [dirs, G*hidden, input], R [dirs,
 * G*hidden, hidden] with G gates (RNN 1, GRU 3, LSTM 4). Outputs Y, Y_h,
 * Y_c are each optional. The attribute decoder ox_ir_rnn_decode (direction,
 * hidden size, activations with their alpha/beta) is shared with
 * codegen/c/emit_rnn.c (ir/family.h), which names the activation codes too,
 * so the kernel and the inferred shapes always read the attributes alike.
 */
#include "ir.h"
#include <ctype.h>
#include <string.h>

/* Activation codes, in the order of templates/rnn.c's ox_rnn_act switch. */
static const char *const act_names[] = {"relu", "tanh", "sigmoid", "affine", "leakyrelu", "thresholdedrelu",
					"scaledtanh", "hardsigmoid", "elu", "softsign", "softplus"};
/* which take alpha / beta, and their defaults (the ONNX operators' own) */
static const int act_has_alpha[] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0};
static const int act_has_beta[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0};
static const float act_alpha0[] = {0, 0, 0, 1.0f, 0.01f, 1.0f, 1.0f, 0.2f, 1.0f, 0, 0};
static const float act_beta0[] = {0, 0, 0, 0.0f, 0, 0, 1.0f, 0.5f, 0, 0, 0};

static int act_code(const char *s)
{
	char low[32];
	size_t i;
	for (i = 0; s[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = 0;
	for (int k = 0; k < (int)(sizeof act_names / sizeof *act_names); k++)
		if (!strcmp(low, act_names[k]))
			return k;
	return -1;
}

/* gates per direction and activations per direction, by op */
static int rnn_gates(const ox_node *n)
{
	return n->op == OX_OP_LSTM ? 4 : n->op == OX_OP_GRU ? 3 : 1;
}

static int rnn_nacts(const ox_node *n)
{
	return n->op == OX_OP_LSTM ? 3 : n->op == OX_OP_GRU ? 2 : 1;
}

/* Decode the attributes. ndir: 1 or 2; reverse: 1 for direction=reverse;
 * hidden: hidden_size, or R's last dim when the attribute is absent (may be
 * symbolic); act/alpha/beta: ndir * nacts entries, direction-major, with
 * alpha/beta consumed in order by the activations that take them (as ONNX
 * Runtime reads activation_alpha/beta). Returns 0 or an ox_error. */
int ox_ir_rnn_decode(ox_graph *g, const ox_node *n, int *ndir, int *reverse, ox_dim *hidden, int *act,
		     float *alpha, float *beta)
{
	const char *dir = ox_attr_str(n, "direction", "forward");
	if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
		*ndir = 1, *reverse = !strcmp(dir, "reverse");
	else if (!strcmp(dir, "bidirectional"))
		*ndir = 2, *reverse = 0;
	else
		return ox_error(g, n, "direction '%s' is not forward, reverse or bidirectional", dir);

	ox_value *r = ox_in(g, n, 2);
	if (r->shape.rank != 3)
		return ox_error(g, n, "R has rank %d, expected 3", r->shape.rank);
	*hidden = ox_attr_get(n, "hidden_size") ? ox_attr_int(n, "hidden_size", 0) : r->shape.d[2];
	if (ox_attr_get(n, "hidden_size") && *hidden <= 0)
		return ox_error(g, n, "hidden_size %lld is not positive", (long long)*hidden);

	int na = rnn_nacts(n), nd = *ndir;
	static const int dflt[3][3] = {{1}, {2, 1}, {2, 1, 1}}; /* Tanh; Sigmoid,Tanh; Sigmoid,Tanh,Tanh */
	const ox_attr *aa = ox_attr_get(n, "activations");
	int given = aa && aa->type == OX_AT_STRINGS ? aa->n : 0;
	if (aa && aa->type != OX_AT_STRINGS)
		return ox_error(g, n, "activations is not a list of strings");
	if (given && given != na * nd && !(nd == 2 && given == na))
		return ox_error(g, n, "%d activations, expected %d (%d per direction)", given, na * nd, na);
	const ox_attr *al = ox_attr_get(n, "activation_alpha"), *be = ox_attr_get(n, "activation_beta");
	const int nal = al && al->type == OX_AT_FLOATS ? al->n : 0, nbe = be && be->type == OX_AT_FLOATS ? be->n : 0;
	int ia = 0, ib = 0;
	for (int k = 0; k < na * nd; k++) {
		int c;
		if (!given) {
			c = dflt[na - 1][k % na];
		} else if (given == na * nd || k < na) {
			c = act_code(aa->strs[k]);
			if (c < 0)
				return ox_error(g, n, "activation '%s' is not supported", aa->strs[k]);
		} else {
			/* one list for both directions: the reverse repeats the forward's */
			act[k] = act[k - na], alpha[k] = alpha[k - na], beta[k] = beta[k - na];
			continue;
		}
		act[k] = c;
		alpha[k] = act_alpha0[c], beta[k] = act_beta0[c];
		if (act_has_alpha[c] && ia < nal)
			alpha[k] = al->floats[ia++];
		if (act_has_beta[c] && ib < nbe)
			beta[k] = be->floats[ib++];
	}
	return 0;
}

/* d must equal want where both are known */
static int dim_ok(ox_dim d, ox_dim want)
{
	return d < 0 || want < 0 || d == want;
}

int infer_rnn(ox_graph *g, ox_node *n)
{
	int ndir, reverse, act[6];
	float alpha[6], beta[6];
	ox_dim H;
	if (ox_ir_rnn_decode(g, n, &ndir, &reverse, &H, act, alpha, beta))
		return -1;
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *r = ox_in(g, n, 2);
	int dt = x->dtype, G = rnn_gates(n);
	if (dt != OX_F32 && dt != OX_F64 && dt != OX_F16 && dt != OX_BF16)
		return ox_error(g, n, "dtype %s is not supported (f32, f64, f16, bf16)", ox_dtype_name(dt));
	int64_t layout = n->opset >= 14 ? ox_attr_int(n, "layout", 0) : 0;
	if (layout != 0 && layout != 1)
		return ox_error(g, n, "layout %lld is not 0 or 1", (long long)layout);
	if (x->shape.rank != 3 || w->shape.rank != 3)
		return ox_error(g, n, "X and W must have rank 3 (got %d and %d)", x->shape.rank, w->shape.rank);
	ox_dim S = x->shape.d[layout ? 1 : 0], N = x->shape.d[layout ? 0 : 1], I = x->shape.d[2];
	ox_dim GH = ox_dim_mul(g, H, G);
	for (int k = 1; k < n->nin && k <= 2; k++)
		if (ox_in(g, n, k)->dtype != dt)
			return ox_error(g, n, "input %d has dtype %s, X has %s", k, ox_dtype_name(ox_in(g, n, k)->dtype),
					ox_dtype_name(dt));
	if (!dim_ok(w->shape.d[0], ndir) || !dim_ok(w->shape.d[1], GH) || !dim_ok(w->shape.d[2], I))
		return ox_error(g, n, "W does not have shape [%d, %d*hidden, input]", ndir, G);
	if (!dim_ok(r->shape.d[0], ndir) || !dim_ok(r->shape.d[1], GH) || !dim_ok(r->shape.d[2], H))
		return ox_error(g, n, "R does not have shape [%d, %d*hidden, hidden]", ndir, G);

	/* optional inputs: B 3, sequence_lens 4, initial_h 5, initial_c 6, P 7 */
	ox_value *b = ox_in(g, n, 3), *sl = ox_in(g, n, 4);
	if (b && (b->dtype != dt || b->shape.rank != 2 || !dim_ok(b->shape.d[0], ndir) ||
		  !dim_ok(b->shape.d[1], H >= 0 ? 2 * G * H : -1)))
		return ox_error(g, n, "B does not have shape [%d, %d*hidden] of X's dtype", ndir, 2 * G);
	if (sl && (sl->dtype != OX_I32 || sl->shape.rank != 1 || !dim_ok(sl->shape.d[0], N)))
		return ox_error(g, n, "sequence_lens is not an i32 tensor of shape [batch]");
	for (int k = 5; k <= 6; k++) {
		ox_value *h = ox_in(g, n, k);
		if (!h)
			continue;
		ox_dim d0 = h->shape.d[layout ? 1 : 0], d1 = h->shape.d[layout ? 0 : 1];
		if (h->dtype != dt || h->shape.rank != 3 || !dim_ok(d0, ndir) || !dim_ok(d1, N) ||
		    !dim_ok(h->shape.d[2], H))
			return ox_error(g, n, "%s does not have the shape of Y_h", k == 5 ? "initial_h" : "initial_c");
	}
	ox_value *p = ox_in(g, n, 7);
	if (p && (p->dtype != dt || p->shape.rank != 2 || !dim_ok(p->shape.d[0], ndir) ||
		  !dim_ok(p->shape.d[1], H >= 0 ? 3 * H : -1)))
		return ox_error(g, n, "P does not have shape [%d, 3*hidden]", ndir);

	ox_shape y = {4, {0}}, yh = {3, {0}};
	if (layout) {
		y.d[0] = N, y.d[1] = S, y.d[2] = ndir, y.d[3] = H;
		yh.d[0] = N, yh.d[1] = ndir, yh.d[2] = H;
	} else {
		y.d[0] = S, y.d[1] = ndir, y.d[2] = N, y.d[3] = H;
		yh.d[0] = ndir, yh.d[1] = N, yh.d[2] = H;
	}
	ox_set_out(g, n, 0, dt, &y);
	ox_set_out(g, n, 1, dt, &yh);
	ox_set_out(g, n, 2, dt, &yh);
	return 0;
}
