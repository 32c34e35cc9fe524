/* cuda_slice.c: kernels for nodes with a run-time dim (--target cuda).
 *
 * The kernels of codegen/cuda_*.c are printed per node with their shapes as
 * constants. A node whose tensors have one run-time dim D (a batch given by
 * --dim batch=1..8, a seq-first transformer's sequence), the same symbol in
 * each tensor that has it and there its leading axis (the axes before it
 * of extent 1), and whose op computes each slice along that axis alone
 * (sliceable), gets its static kernel for one slice: the shapes with D set
 * to 1 while the kernel is emitted, then a host loop that launches it once
 * per slice, each tensor that has D moved by its slice's elements (the
 * others, weights and broadcast operands, as they are). The launches are
 * enqueued on the run's stream, one after another (the split-K workspace
 * is reused by each), and captured into its CUDA Graph like the others.
 * At most OX_CU_SLICES slices (D's top); past that, or for other ops, the
 * node stays the C function on the device (--report lists it).
 */
#include "cuda_kernels.h"
#include "../ir/family.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OX_CU_SLICES 256

/* D's axis in value v (its leading axis: the ones before it 1), -1 when v
 * has no run-time dim; -2 when v cannot be sliced (another run-time dim,
 * a dim other than D, a layout, a leading axis past a non-1) */
static int lead_axis(ox_graph *g, ox_id v, ox_dim *D, int *have)
{
	const ox_value *x = &g->vals[v];
	if (!x->has_shape)
		return -2;
	int lead = -1;
	for (int i = 0; i < x->shape.rank; i++) {
		ox_dim d = x->shape.d[i];
		if (!ox_dim_is_rt(g, d))
			continue;
		if (lead >= 0 || (*have && d != *D) || x->layout)
			return -2;
		*D = d, *have = 1, lead = i;
	}
	for (int i = 0; i < lead; i++)
		if (x->shape.d[i] != 1)
			return -2;
	return lead;
}

/* axis a of an output of rank r, in an input of rank ri (broadcasting
 * aligns the trailing axes): -1 when the input has no such axis */
static int aligned(int a, int r, int ri)
{
	return a - (r - ri);
}

/* Does op n compute each slice of its output along axis a (rank r) from
 * the same slices of its data inputs (lead[k]: D's axis) and the whole of
 * the others (weights, a norm's scale)? */
static int sliceable(ox_graph *g, ox_node *n, const int *lead, int a, int r)
{
	if (n->op == OX_OP_Fused || (ox_ops[n->op].flags & OX_F_EW)) {
		/* an operand has the slices too, or broadcasts along them */
		for (int k = 0; k < n->nin; k++) {
			if (n->in[k] < 0)
				continue;
			const ox_value *x = &g->vals[n->in[k]];
			const int ax = aligned(a, r, x->shape.rank);
			if (lead[k] >= 0 ? lead[k] != ax : ax >= 0 && x->shape.d[ax] != 1)
				return 0;
		}
		return 1;
	}
	if (n->op == OX_OP_Gather) /* the slices of the indices, along axis 0 of the data */
		return n->nin == 2 && lead[0] < 0 && lead[1] == a && ox_attr_int(n, "axis", 0) == 0;
	for (int k = 1; k < n->nin; k++) /* (the data input is the first) */
		if (lead[k] >= 0 && n->op != OX_OP_Concat)
			return 0;
	switch (n->op) {
	case OX_OP_Conv:
	case OX_OP_AveragePool:
	case OX_OP_GlobalAveragePool:
	case OX_OP_GlobalMaxPool:
		return a == 0 && lead[0] == 0;
	case OX_OP_MaxPool: /* (its indices count the images) */
		return a == 0 && lead[0] == 0 && (n->nout < 2 || n->out[1] < 0);
	case OX_OP_LayerNormalization:
	case OX_OP_RMSNormalization:
	case OX_OP_Softmax:
	case OX_OP_LogSoftmax:
		return lead[0] == a && ox_norm_axis(ox_attr_int(n, "axis", -1), r) > a;
	case OX_OP_Transpose: {
		const ox_attr *p = ox_attr_get(n, "perm");
		return p && p->n == r && lead[0] >= 0 && p->ints[a] == lead[0];
	}
	case OX_OP_Concat:
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && lead[k] != a)
				return 0;
		return ox_norm_axis(ox_attr_int(n, "axis", 0), r) != a;
	}
	return 0;
}

int ox_cu_emit_sliced(ox_cg *cg, ox_graph *g, ox_node *n, int (*emit)(ox_cg *, ox_graph *, ox_node *))
{
	const int nt = n->nin + n->nout;
	int lead[64], have = 0;
	ox_dim D = 0;
	if (nt > 64 || n->nout < 1 || n->out[0] < 0)
		return 1;
	for (int k = 0; k < nt; k++) {
		ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		lead[k] = v < 0 ? -1 : lead_axis(g, v, &D, &have);
		if (lead[k] == -2)
			return 1;
	}
	const ox_value *y = &g->vals[n->out[0]];
	const int a = lead[n->nin], r = y->shape.rank;
	int64_t top = have ? ox_dim_hi(g, D) : -1;
	if (!have || a < 0 || top < 1 || top > OX_CU_SLICES)
		return 1;
	for (int k = n->nin + 1; k < nt; k++) /* every output sliced alike */
		if (n->out[k - n->nin] >= 0 && lead[k] != a)
			return 1;
	if (!sliceable(g, n, lead, a, r))
		return 1;
	/* the kernel of one slice */
	ox_dim saved[64];
	int64_t stride[64];
	int cap = 64;
	for (int k = 0; k < nt; k++) {
		if (lead[k] < 0)
			continue;
		ox_value *v = &g->vals[k < n->nin ? n->in[k] : n->out[k - n->nin]];
		saved[k] = v->shape.d[lead[k]];
		v->shape.d[lead[k]] = 1;
		stride[k] = ox_shape_numel(&v->shape);
		int al = ox_cu_pow2(stride[k] * (int64_t)ox_dtype_size(v->dtype), 64);
		cap = al < cap ? al : cap;
	}
	char name[128];
	const char *cnt = ox_cg_dim(cg, D);
	ox_dim_str(g, D, name, sizeof name);
	ox_cg_printf(cg, "\t/* the kernel of one slice, once per slice along %s (at most %lld) */\n"
			 "\tfor (long ox_i = 0; ox_i < %s; ox_i++) {\n",
		     name, (long long)top, cnt);
	for (int k = 0; k < nt; k++)
		if (lead[k] >= 0)
			ox_cg_printf(cg, "\t\tauto %s%d_s = %s%d + ox_i * %lld;\n", k < n->nin ? "in" : "out",
				     k < n->nin ? k : k - n->nin, k < n->nin ? "in" : "out", k < n->nin ? k : k - n->nin,
				     (long long)stride[k]);
	/* the launches, indented into the loop and reading the moved pointers */
	size_t from = cg->body.len;
	const int prev = ox_cu_align_cap(cap);
	int rc = emit(cg, g, n);
	ox_cu_align_cap(prev);
	for (int k = nt - 1; k >= 0; k--) /* (backwards: a value read twice, Mul(x, x), saved 1 the second time) */
		if (lead[k] >= 0)
			g->vals[k < n->nin ? n->in[k] : n->out[k - n->nin]].shape.d[lead[k]] = saved[k];
	if (rc) {
		cg->body.len = 0; /* (the node's body is only this) */
		if (cg->body.s)
			cg->body.s[0] = 0;
		return rc;
	}
	ox_buf launches = {0};
	ox_buf_puts(&launches, cg->body.s + from);
	cg->body.len = from, cg->body.s[from] = 0;
	for (const char *p = launches.s; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
		ox_buf line = {0};
		ox_buf_printf(&line, "%.*s", (int)len, p);
		/* inK, outK as words: the slice's pointers */
		ox_buf out = {0};
		for (const char *q = line.s; *q;) {
			int isin = !strncmp(q, "in", 2), isout = !strncmp(q, "out", 3);
			int word = (isin || isout) && (q == line.s || !(isalnum((unsigned char)q[-1]) || q[-1] == '_'));
			const char *dg = q + (isin ? 2 : 3);
			if (word && isdigit((unsigned char)*dg)) {
				int kk = atoi(dg);
				const char *end = dg;
				while (isdigit((unsigned char)*end))
					end++;
				int idx = isin ? kk : n->nin + kk;
				if (!(isalnum((unsigned char)*end) || *end == '_') && idx < nt && lead[idx] >= 0) {
					ox_buf_printf(&out, "%.*s_s", (int)(end - q), q);
					q = end;
					continue;
				}
			}
			ox_buf_printf(&out, "%c", *q++);
		}
		ox_cg_printf(cg, "\t%s", out.s);
		ox_buf_free(&line), ox_buf_free(&out);
		p += len;
	}
	ox_buf_free(&launches);
	ox_cg_printf(cg, "\t}\n");
	return 0;
}
