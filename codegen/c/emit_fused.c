/* emit_fused.c: onnxcc::Fused nodes (opt/ewfuse.c) as one vector loop.
 *
 * The output is walked in its storage order (a blocked value's [N, C/b, H,
 * W, b]); dims of size 1 are dropped and dims every operand walks
 * contiguously are merged, as codegen/c/emit_ew.c does, leaving an outer
 * index and an inner run. Along the inner run an operand is either
 * contiguous (a vector load) or broadcast (one element, splatted before
 * the run); the body (codegen/c/emit_vec.c) computes a vector at a time and
 * the run's tail a partial vector (ox_vf_load_n / store_n), so the tail is
 * computed by the same code as the rest. Large outputs are split into
 * parallel tasks over the outer index, or over chunks of the run. Dims may
 * be run-time dims: the index and the run are then counted when the
 * program runs, the tasks chosen for the top of the range. An int8 or
 * uint8 operand or output (a fused DequantizeLinear's or QuantizeLinear's)
 * is loaded into and stored from f32 lanes (templates/vf_q8.c).
 */
#include "ukernel.h"
#include "../../opt/opt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXOPS 16

/* the shape walked for v of a node with output o: blocked values in their
 * storage order, everything else (scalars with a blocked output) as is */
static ox_shape walk(ox_graph *g, const ox_value *v, const ox_value *o)
{
	if (o->layout != OX_L_BLOCKED || v->layout != OX_L_BLOCKED)
		return v->shape;
	int b = v->lp[0];
	const ox_dim *d = v->shape.d;
	return (ox_shape){5, {d[0], ox_dim_ceildiv(g, d[1], b), d[2], d[3], b}};
}

/* the suffix of the vf loads and stores of a dtype: f32 as is, 8-bit
 * values (a fused Q or DQ's) to and from f32 lanes (templates/vf.c) */
static const char *lanes(int dt)
{
	return dt == OX_I8 ? "_i8" : dt == OX_U8 ? "_u8" : "";
}

int emit_fused(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_body");
	ox_graph *body = a ? a->g[0] : NULL;
	ox_value *o = ox_out(g, n, 0);
	if (!body || n->nin > MAXOPS)
		return ox_error(g, n, "not a fused elementwise node onnxcc can compile");
	for (int i = 0; i < body->nnodes; i++)
		if (!ox_cg_vbody_ok(body, &body->nodes[i]))
			return ox_error(g, n, "op %s cannot be computed in a fused vector body", body->nodes[i].optype);
	int b = g->target->vw, nops = n->nin;
	ox_cg_use_vf(cg);
	if (ox_cg_use(cg, "vmath", OX_F32))
		ox_die("templates/vmath.c is missing");
	int q8 = lanes(o->dtype)[0] != 0; /* 8-bit loads, stores or ox_vf_quant */
	for (int k = 0; k < nops; k++)
		q8 |= lanes(ox_in(g, n, k)->dtype)[0] != 0;
	for (int i = 0; i < body->nnodes; i++)
		q8 |= body->nodes[i].op == OX_OP_QuantizeLinear;
	if (q8 && ox_cg_use(cg, "vf_q8", OX_F32))
		ox_die("templates/vf_q8.c is missing");

	/* dims and strides: column 0 the output, k + 1 operand k; dims may be
	 * run-time (opt/ewfuse.c: an operand's are then the output's or 1),
	 * so sizes are ox_dims, printed with ox_cg_dim */
	ox_shape os = walk(g, o, o), ws[MAXOPS];
	for (int k = 0; k < nops; k++)
		ws[k] = walk(g, ox_in(g, n, k), o);
	ox_dim d[OX_MAX_RANK + 1], st[MAXOPS + 1][OX_MAX_RANK + 1];
	int r = 0;
	for (int i = 0; i < os.rank; i++) {
		if (os.d[i] == 1)
			continue;
		d[r] = os.d[i];
		for (int k = 0; k <= nops; k++) {
			const ox_shape *s = k ? &ws[k - 1] : &os;
			int j = i - (os.rank - s->rank);
			ox_dim stride = 0;
			if (ox_shape_numel(s) != 1 && j >= 0 && s->d[j] != 1) {
				stride = 1;
				for (int q = j + 1; q < s->rank; q++)
					stride = ox_dim_mul(g, stride, s->d[q]);
			}
			st[k][r] = stride;
		}
		r++;
	}
	int m = 0;
	for (int i = 0; i < r; i++) {
		int merge = m > 0;
		for (int k = 0; merge && k <= nops; k++)
			merge = st[k][m - 1] == ox_dim_mul(g, st[k][i], d[i]);
		if (merge) {
			d[m - 1] = ox_dim_mul(g, d[m - 1], d[i]);
			for (int k = 0; k <= nops; k++)
				st[k][m - 1] = st[k][i];
		} else {
			d[m] = d[i];
			for (int k = 0; k <= nops; k++)
				st[k][m] = st[k][i];
			m++;
		}
	}
	r = m;
	if (r == 0) { /* a single element */
		d[0] = 1, r = 1;
		for (int k = 0; k <= nops; k++)
			st[k][0] = k == 0;
	}
	for (int k = 1; k <= nops; k++)
		if (st[k][r - 1] != 0 && st[k][r - 1] != 1)
			ox_die("emit_fused: operand %d is strided along the inner run", k - 1);
	ox_dim inner = d[r - 1], outer = 1;
	for (int i = 0; i < r - 1; i++)
		outer = ox_dim_mul(g, outer, d[i]);

	ox_cg_printf(cg, "\t/* %d elementwise op%s on %s x %s elements%s */\n", body->nnodes,
		     body->nnodes > 1 ? "s fused" : "", ox_uk_dimtext(cg, outer), ox_uk_dimtext(cg, inner),
		     o->layout == OX_L_BLOCKED ? " (channel-blocked)" : "");
	/* tasks: over the outer index, or chunks of a long single run; sized
	 * at the top of run-time counts (a count past them runs fewer tasks) */
	int64_t otop = ox_opt_top(g, outer), itop = ox_opt_top(g, inner);
	int64_t total = otop * itop, chunk = itop;
	ox_dim ntasks = 0;
	if (total >= 16384) {
		if (otop > 1) {
			ntasks = otop < 64 ? otop : 64;
		} else {
			int64_t parts = (itop + 4095) / 4096;
			parts = parts < 64 ? parts : 64;
			chunk = ((itop + parts - 1) / parts + b - 1) / b * b;
			ntasks = ox_dim_ceildiv(g, inner, chunk);
		}
	}
	int tasks = ox_dim_is_rt(g, ntasks) || ntasks > 1;
	if (tasks)
		ox_cg_tasks_dim(cg, ntasks);
	int lvl = 1;
	if (tasks && otop > 1)
		ox_cg_line(cg, 1, "const long o0 = t * %s / %lld, o1 = (t + 1) * %s / %lld;", ox_cg_dim(cg, outer),
			   (long long)ntasks, ox_cg_dim(cg, outer), (long long)ntasks);
	else
		ox_cg_line(cg, 1, "const long o0 = 0, o1 = %s;", ox_cg_dim(cg, outer));
	if (tasks && otop == 1)
		ox_cg_line(cg, 1, "const long j0 = t * %lld, j1 = j0 + %lld < %s ? j0 + %lld : %s;", (long long)chunk,
			   (long long)chunk, ox_cg_dim(cg, inner), (long long)chunk, ox_cg_dim(cg, inner));
	else
		ox_cg_line(cg, 1, "const long j0 = 0, j1 = %s;", ox_cg_dim(cg, inner));
	ox_cg_line(cg, lvl, "for (long o = o0; o < o1; o++) {");
	lvl++;
	/* each operand's offset at outer index o */
	for (int k = 0; k <= nops; k++) {
		ox_buf e = {0};
		ox_dim below = 1;
		for (int i = r - 2; i >= 0; i--) {
			if (st[k][i] && (ox_dim_is_rt(g, d[i]) || d[i] > 1)) {
				if (below == 1 && i == 0)
					ox_buf_printf(&e, "%so * %s", e.len ? " + " : "", ox_cg_dim(cg, st[k][i]));
				else
					ox_buf_printf(&e, "%s(o / %s %% %s) * %s", e.len ? " + " : "", ox_cg_dim(cg, below),
						      ox_cg_dim(cg, d[i]), ox_cg_dim(cg, st[k][i]));
			}
			below = ox_dim_mul(g, below, d[i]);
		}
		ox_value *v = k ? ox_in(g, n, k - 1) : NULL;
		int literal = v && v->kind == OX_V_CONST && ox_shape_numel(&v->shape) == 1;
		if (k && !literal)
			ox_cg_line(cg, lvl, "const long a%d = %s;", k - 1, e.len ? e.s : "0");
		else if (!k)
			ox_cg_line(cg, lvl, "const long y0 = %s;", e.len ? e.s : "0");
		ox_buf_free(&e);
	}
	/* broadcast operands: one element for the run */
	char in[MAXOPS][96], tin[MAXOPS][96];
	const char *inp[MAXOPS], *tinp[MAXOPS];
	for (int k = 0; k < nops; k++) {
		ox_value *v = ox_in(g, n, k);
		if (v->kind == OX_V_CONST && ox_shape_numel(&v->shape) == 1) {
			ox_cg_snprintf(in[k], sizeof in[k], "ox_vf_set1(%s)", ox_cg_lit(OX_F32, ox_tensor_get_f64(v->data, 0)));
			ox_cg_snprintf(tin[k], sizeof tin[k], "%s", in[k]);
		} else if (!st[k + 1][r - 1]) {
			ox_cg_line(cg, lvl, "const ox_vf b%d = ox_vf_set1(%sin%d[a%d]);", k, v->dtype != OX_F32 ? "(float)" : "", k, k);
			ox_cg_snprintf(in[k], sizeof in[k], "b%d", k);
			ox_cg_snprintf(tin[k], sizeof tin[k], "b%d", k);
		} else {
			ox_cg_snprintf(in[k], sizeof in[k], "ox_vf_load%s(in%d + a%d + j)", lanes(v->dtype), k, k);
			ox_cg_snprintf(tin[k], sizeof tin[k], "ox_vf_load%s_n(in%d + a%d + j, (int)(j1 - j))", lanes(v->dtype), k, k);
		}
		inp[k] = in[k], tinp[k] = tin[k];
	}
	ox_cg_line(cg, lvl, "long j = j0;");
	ox_cg_line(cg, lvl, "for (; j + %d <= j1; j += %d) {", b, b);
	ox_buf t = {0};
	ox_cg_vbody(cg, &t, body, inp, "const ox_vf v", lvl + 1, 0);
	ox_cg_printf(cg, "%s", t.s);
	ox_cg_line(cg, lvl + 1, "ox_vf_store%s(out0 + y0 + j, v);", lanes(o->dtype));
	ox_cg_line(cg, lvl, "}");
	ox_cg_line(cg, lvl, "if (j < j1) {");
	t.len = 0;
	t.s[0] = 0;
	ox_cg_vbody(cg, &t, body, tinp, "const ox_vf v", lvl + 1, 0);
	ox_cg_printf(cg, "%s", t.s);
	ox_cg_line(cg, lvl + 1, "ox_vf_store%s_n(out0 + y0 + j, v, (int)(j1 - j));", lanes(o->dtype));
	ox_cg_line(cg, lvl, "}");
	ox_buf_free(&t);
	ox_cg_line(cg, 1, "}");
	return 0;
}
