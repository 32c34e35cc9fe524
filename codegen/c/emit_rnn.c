/* emit_rnn.c: C bodies for the recurrent ops RNN, GRU and LSTM.
 *
 * Each direction is one call of a kernel from templates/rnn_simple.c,
 * rnn_gru.c or rnn_lstm.c (helpers in templates/rnn.c) with pointers
 * already offset to that direction's weights and output slices and the
 * layout turned into strides. The kernels keep the recurrent state in a
 * local array of the node function, sized here by a literal (a few times
 * hidden_size), so the generated code needs no heap. sequence_lens is read
 * at run time whether or not it is a constant. Attributes come from
 * ox_ir_rnn_decode in ir/infer_rnn.c (declared in ir/family.h), whose
 * activation codes index act_names here and the switch in templates/rnn.c.
 */
#include "../cg.h"
#include "../../ir/family.h"
#include "../../opt/opt.h"
#include "ukernel.h"
#include <stdio.h>
#include <string.h>

/* batches per block, OX_RNN_NB in templates/rnn.c */
#define RNN_NB 4
/* the state lives on the stack of the node function: a bound well under
 * common thread stack sizes (f32 hidden sizes up to about 20000) */
#define RNN_MAX_SCRATCH (1 << 20)

static const char *const act_names[] = {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu",
					"ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"};

/* Pull in templates/rnn.c and templates/NAME.c for dtype (ox_cg_use adds
 * the ox_ld_/ox_st_ helpers they use first). */
static int use(ox_cg *cg, ox_graph *g, ox_node *n, const char *name, int dt)
{
	if (ox_cg_use(cg, "rnn", dt) || ox_cg_use(cg, name, dt))
		return ox_error(g, n, "kernel template templates/%s.c is missing", name);
	return 0;
}

/* "inK + off", "outK + off", or "NULL" for an omitted optional one */
static const char *arg(const ox_node *n, int isout, int k, long long off, char *buf, size_t sz)
{
	int there = isout ? k < n->nout && n->out[k] >= 0 : k < n->nin && n->in[k] >= 0;
	const char *base = isout ? "out" : "in";
	if (!there)
		ox_cg_snprintf(buf, sz, "NULL");
	else if (off)
		ox_cg_snprintf(buf, sz, "%s%d + %lld", base, k, off);
	else
		ox_cg_snprintf(buf, sz, "%s%d", base, k);
	return buf;
}

int emit_rnn(ox_cg *cg, ox_graph *g, ox_node *n)
{
	int ndir, reverse, act[6];
	float alpha[6], beta[6];
	ox_dim hidden;
	if (ox_ir_rnn_decode(g, n, &ndir, &reverse, &hidden, act, alpha, beta))
		return -1;
	ox_value *x = ox_in(g, n, 0);
	const int dt = x->dtype, layout = n->opset >= 14 && ox_attr_int(n, "layout", 0) == 1;
	const int lstm = n->op == OX_OP_LSTM, gru = n->op == OX_OP_GRU;
	const int G = lstm ? 4 : gru ? 3 : 1, na = lstm ? 3 : gru ? 2 : 1;
	/* the sequence and the batch may be run-time dims; the sizes the
	 * weights give (hidden, input) are constants */
	const long long H = hidden, I = x->shape.d[2];
	const ox_dim Sd = x->shape.d[layout ? 1 : 0], Nd = x->shape.d[layout ? 0 : 1];
	const long long S = ox_dim_is_rt(g, Sd) ? ox_dim_hi(g, Sd) : Sd, N = ox_dim_is_rt(g, Nd) ? ox_dim_hi(g, Nd) : Nd;
	if (H < 0 || S < 0 || N < 0 || I < 0)
		return ox_error(g, n, "shapes are not constant");
	char Ss[1100], Ns[1100];
	ox_cg_snprintf(Ss, sizeof Ss, "%s", ox_cg_dim(cg, Sd));
	ox_cg_snprintf(Ns, sizeof Ns, "%s", ox_cg_dim(cg, Nd));
	if (H == 0)
		return ox_error(g, n, "hidden size 0 is not supported");
	double clip = 0;
	if (ox_attr_get(n, "clip")) {
		clip = ox_attr_float(n, "clip", 0);
		if (!(clip > 0))
			return ox_error(g, n, "clip %g is not a positive threshold", clip);
	}
	/* an f32 LSTM whose weights opt/pack.c transposed: templates/rnn_lstm_t.c */
	const int tr = lstm && ox_in(g, n, 1)->layout == OX_L_RNNT;
	if (tr)
		ox_cg_use_vf(cg);
	if (tr ? ox_cg_use(cg, "vmath", OX_F32) || ox_cg_use(cg, "rnn_lstm_t", OX_F32)
	       : use(cg, g, n, lstm ? "rnn_lstm" : gru ? "rnn_gru" : "rnn_simple", dt))
		return tr ? ox_error(g, n, "kernel template templates/rnn_lstm_t.c is missing") : -1;
	const char *fn = lstm ? "lstm" : gru ? "gru" : "rnn_simple";

	/* strides of X [t][b][k] and Y [t][b][j], and the state's batch stride
	 * (dims: a run-time sequence or batch makes some of them run-time) */
	const ox_dim xt = layout ? I : ox_dim_mul(g, Nd, I), xb = layout ? ox_dim_mul(g, Sd, I) : I;
	const ox_dim yt = layout ? ndir * H : ox_dim_mul(g, Nd, ndir * H), yb = layout ? ox_dim_mul(g, Sd, ndir * H) : H;
	const long long hs = layout ? ndir * H : H;

	ox_cg_printf(cg, "\t/* %s, %s, hidden %lld: seq %s, batch %s, input %lld, layout %d%s */\n",
		     n->optype, ndir == 2 ? "bidirectional" : reverse ? "reverse" : "forward", H, Ss, Ns, I, layout,
		     n->nin > 4 && n->in[4] >= 0 ? ", per-batch sequence_lens" : "");
	if (n->nin > 4 && n->in[4] >= 0 && N > 0) {
		/* a length outside [0, seq] is an index out of range */
		const ox_tensor *sl = ox_in_const(g, n, 4);
		for (long long b = 0; sl && b < N; b++)
			if (ox_tensor_get_i64(sl, b) < 0 || ox_tensor_get_i64(sl, b) > S)
				return ox_error(g, n, "sequence_lens[%lld] = %lld is outside [0, %lld]", b,
						(long long)ox_tensor_get_i64(sl, b), S);
		if (!sl) {
			ox_cg_fails(cg, OX_CG_FAIL_INDEX);
			ox_cg_printf(cg, "\tfor (long b = 0; b < %s; b++)\n\t\tif (in4[b] < 0 || in4[b] > %s)\n"
					 "\t\t\treturn 1; /* a sequence length out of range */\n", Ns, Ss);
		}
	}
	/* the kernels' state for one block of min(N, RNN_NB) batches */
	const long long nscratch = tr ? 10 * H : (gru ? 4 : lstm ? 3 : 2) * (N < RNN_NB ? N : RNN_NB) * H;
	if (nscratch * (dt == OX_F64 ? 8 : 4) > RNN_MAX_SCRATCH)
		return ox_error(g, n, "hidden size %lld needs %lld state values on the stack (at most %d bytes)", H,
				nscratch, RNN_MAX_SCRATCH);
	ox_cg_printf(cg, "\t%s scratch[%lld]; /* hidden state, next hidden state%s, per batch of a block */\n",
		     ox_cg_ntype(dt), nscratch ? nscratch : 1, lstm ? ", cell state" : gru ? ", z, r (.) H" : "");
	for (int d = 0; d < ndir; d++) {
		char w[64], r[64], b[64], sl[64], h0[64], c0[64], p[64], y[64], yh[64], yc[64];
		/* this direction's state and Y slice: an offset of d * N * H
		 * elements when the batch is a run-time dim is printed as one */
		const long long so = layout ? d * H : ox_dim_is_rt(g, Nd) ? 0 : d * N * H;
		char soff[1200] = "";
		if (!layout && d && ox_dim_is_rt(g, Nd))
			ox_cg_snprintf(soff, sizeof soff, " + %s", ox_cg_dim(cg, ox_dim_mul(g, Nd, H)));
		ox_cg_printf(cg, "\t/* %s:", ndir == 2 ? (d ? "reverse" : "forward") : "activations");
		for (int k = 0; k < na; k++)
			ox_cg_printf(cg, " %s", act_names[act[d * na + k]]);
		ox_cg_printf(cg, " */\n");
		/* the transposed-weight LSTM (tr) takes no sequence_lens, peepholes,
		 * activations or clip (ox_opt_lstm_t) */
		if (tr)
			ox_cg_printf(cg, "\tox_lstm_t_f32(in0, %s, %s, %s, %s%s,", arg(n, 0, 1, d * G * H * I, w, sizeof w),
				     arg(n, 0, 2, d * G * H * H, r, sizeof r), arg(n, 0, 3, d * 2 * G * H, b, sizeof b),
				     arg(n, 0, 5, so, h0, sizeof h0), n->in[5] >= 0 ? soff : "");
		else
			ox_cg_printf(cg, "\tox_%s_%s(in0, %s, %s, %s, %s, %s%s,", fn, ox_cg_sfx(dt),
				     arg(n, 0, 1, d * G * H * I, w, sizeof w), arg(n, 0, 2, d * G * H * H, r, sizeof r),
				     arg(n, 0, 3, d * 2 * G * H, b, sizeof b), arg(n, 0, 4, 0, sl, sizeof sl),
				     arg(n, 0, 5, so, h0, sizeof h0), n->in[5] >= 0 ? soff : "");
		if (lstm)
			ox_cg_printf(cg, " %s%s,", arg(n, 0, 6, so, c0, sizeof c0), n->nin > 6 && n->in[6] >= 0 ? soff : "");
		if (lstm && !tr)
			ox_cg_printf(cg, " %s,", arg(n, 0, 7, d * 3 * H, p, sizeof p));
		ox_cg_printf(cg, " %s%s, %s%s", arg(n, 1, 0, so, y, sizeof y), n->nout > 0 && n->out[0] >= 0 ? soff : "",
			     arg(n, 1, 1, so, yh, sizeof yh), n->nout > 1 && n->out[1] >= 0 ? soff : "");
		if (lstm)
			ox_cg_printf(cg, ", %s%s", arg(n, 1, 2, so, yc, sizeof yc), n->nout > 2 && n->out[2] >= 0 ? soff : "");
		ox_cg_printf(cg, ",\n\t\t%s, %s, %lld, %lld, /* seq, batch, input, hidden */\n", Ss, Ns, I, H);
		ox_cg_printf(cg, "\t\t%s, ", ox_cg_dim(cg, xt));
		ox_cg_printf(cg, "%s, ", ox_cg_dim(cg, xb));
		ox_cg_printf(cg, "%s, ", ox_cg_dim(cg, yt));
		ox_cg_printf(cg, "%s, %lld, %d, %s/* strides X t b, Y t b, state b; reverse */\n%s", ox_cg_dim(cg, yb), hs,
			     reverse || d == 1, tr ? "scratch); " : "", tr ? "" : "\t\t");
		if (tr)
			continue;
		for (int k = 0; k < na; k++) {
			int a = d * na + k;
			ox_cg_printf(cg, "%d, %s, ", act[a], ox_cg_lit(dt, alpha[a]));
			ox_cg_printf(cg, "%s, ", ox_cg_lit(dt, beta[a]));
		}
		ox_cg_printf(cg, "/* activation%s: code, alpha, beta */\n", na > 1 ? "s" : "");
		ox_cg_printf(cg, "\t\t%s, ", ox_cg_lit(dt, clip));
		if (gru)
			ox_cg_printf(cg, "%d, ", ox_attr_int(n, "linear_before_reset", 0) != 0);
		if (lstm)
			ox_cg_printf(cg, "%d, ", ox_attr_int(n, "input_forget", 0) != 0);
		ox_cg_printf(cg, "scratch); /* clip (0: none)%s */\n",
			     gru ? ", linear_before_reset" : lstm ? ", input_forget" : "");
	}
	return 0;
}
