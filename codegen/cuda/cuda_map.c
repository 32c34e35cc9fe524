/* cuda_map.c: elementwise kernels (--target cuda): a node's map, the
 * C target's expression per element (codegen/c/emit_ew.c describes it in
 * an ox_map), and the fused elementwise bodies opt/ewfuse.c makes
 * (ox_cg_vbody's scalar rendering), a thread per element or per 4 or 8
 * with vector loads where the operands allow. The families map and fusedew
 * of ir/ops.def's cuda column.
 */
#include "cuda_kernels.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* onnxcc::Fused (opt/ewfuse.c): its body per output element, the operands
 * broadcast like numpy (stride 0 along their size-1 dims) */
int ox_cu_emit_fusedew(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_body");
	ox_graph *b = a ? a->g[0] : NULL;
	ox_value *y = ox_out(g, n, 0);
	if (!b || !y || (y->layout && y->layout != OX_L_BLOCKED) || n->nin > 16)
		return 1;
	/* over the storage's dims: NHWC operands have the output's (or 1);
	 * run-time dims (plain values) are the kernel's parameters */
	int64_t dims[OX_MAX_RANK + 1], xd[OX_MAX_RANK + 1];
	ox_cu_rt R = {g, 0, {0}};
	char sb[32];
	int r = ox_cu_phys(y, dims);
	if (r == 0)
		dims[0] = 1, r = 1;
	/* V = 4 consecutive elements of the innermost dim per thread when it
	 * comes in fours: an operand that runs along it is read four at a time
	 * (one ox_ld4 where aligned), one that is broadcast along it once */
	const int V = !ox_dim_is_rt(g, dims[r - 1]) && dims[r - 1] % 4 == 0 ? 4 : 1;
	ox_buf params = {0}, body = {0}, loads = {0};
	char *in[17] = {0};
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = &g->vals[n->in[k]];
		const int xr = ox_cu_phys(x, xd);
		if ((x->layout != y->layout && ox_shape_numel(&x->shape) != 1) || (x->layout && x->lp[0] != y->lp[0]) ||
		    !ox_cu_ftype(x->dtype) || xr > r) {
			ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&loads);
			for (int j = 0; j < k; j++)
				free(in[j]);
			return 1;
		}
		ox_buf_printf(&params, "const %s *__restrict__ x%d, ", ox_cg_ctype(x->dtype), k);
		/* its offset: the output's index over its own dims (aligned right;
		 * the innermost index counts groups of V) */
		ox_buf off = {0};
		ox_buf_puts(&off, "0");
		ox_dim st = 1;
		for (int d = xr - 1; d >= 0; d--) {
			int od = d + (r - xr);
			if (xd[d] != 1 && od >= 0) {
				if (!ox_cu_rt_dim(&R, od == r - 1 ? ox_dim_mul(g, st, V) : st, sb, sizeof sb)) {
					ox_buf_free(&off);
					goto too_many;
				}
				ox_buf_printf(&off, " + i%d * %s", od, sb);
			}
			st = ox_dim_mul(g, st, xd[d]);
		}
		char e[1200];
		const int along = V > 1 && xr > 0 && xd[xr - 1] != 1;
		if (along) {
			const char *ct = ox_cg_ctype(x->dtype);
			if (ox_cu_align(g, n->in[k]) >= 4 * (int)ox_dtype_size(x->dtype))
				ox_buf_printf(&loads, "\t%s xv%d[4];\n\tox_ld4(&x%d[%s], xv%d);\n", ct, k, k, off.s, k);
			else {
				ox_buf_printf(&loads, "\tconst %s xv%d[4] = {x%d[%s], x%d[%s + 1], x%d[%s + 2], ",
					      ct, k, k, off.s, k, off.s, k, off.s);
				ox_buf_printf(&loads, "x%d[%s + 3]};\n",
					      k, off.s);
			}
			ox_cg_snprintf(e, sizeof e, "xv%d[u]", k);
		} else {
			ox_cg_snprintf(e, sizeof e, "x%d[%s]", k, off.s);
		}
		in[k] = strdup(ox_cg_load(x->dtype, e));
		ox_buf_free(&off);
	}
	ox_buf_puts(&params, "OX_T *__restrict__ y");
	ox_buf vb = {0};
	int rc = ox_cg_vbody(cg, &vb, b, (const char *const *)in, "const float v", V > 1 ? 2 : 1, 1);
	for (int k = 0; k < n->nin; k++)
		free(in[k]);
	if (rc) {
		ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&vb), ox_buf_free(&loads);
		return -1;
	}
	if (V > 1) {
		ox_buf_puts(&body, loads.s ? loads.s : "");
		ox_buf_puts(&body, "\tOX_T yv[4];\n\tfor (int u = 0; u < 4; u++) {\n");
		ox_buf_puts(&body, vb.s);
		ox_buf_puts(&body, "\t\tyv[u] = OX_ST(v);\n\t}\n");
		ox_cu_store4(&body, g, n->out[0], "i * 4");
		dims[r - 1] /= 4;
	} else {
		ox_buf_puts(&body, vb.s);
		ox_buf_puts(&body, "\ty[i] = OX_ST(v);\n");
	}
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n), ptrs = {0};
	ox_buf_printf(&t, "/* %s: fused elementwise body, one thread per %s */\n", cg->fname,
		      V > 1 ? "4 consecutive elements" : "element");
	if (ox_cu_index_kernel_rt(&t, kname, params.s, dims, r, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&vb), ox_buf_free(&loads);
		return 1;
	}
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&ptrs, "in%d, ", k);
	ox_buf_puts(&ptrs, "out0");
	ox_cu_index_launch(cg, kname, dims, r, ptrs.s, &R);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&vb), ox_buf_free(&loads), ox_buf_free(&ptrs);
	return 0;
too_many: /* (more than 16 run-time dims: the C function) */
	for (int j = 0; j < n->nin; j++)
		free(in[j]);
	ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&loads);
	return 1;
}

/* A node whose emitter describes its computation as a map (ox_cg_map;
 * emit_ew's elementwise ops: the C target's expression per element, its
 * dtypes and conversions) rendered as a kernel of a thread per element */
static const char *map_rt_dim(void *R, ox_dim d, char *buf, size_t sz)
{
	return ox_cu_rt_dim((ox_cu_rt *)R, d, buf, sz);
}

int ox_cu_emit_map(ox_cg *cg, ox_graph *g, ox_node *n)
{
	for (int k = 0; k < n->nin + n->nout; k++) {
		const ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (v >= 0 && (g->vals[v].layout || g->vals[v].dtype == OX_STRING))
			return 1;
	}
	if (n->nout < 1 || n->out[0] < 0)
		return 1;
	/* run-time dims: the kernel's parameters (ox_cu_rt) */
	ox_cu_rt R = {g, 0, {0}};
	ox_map M = {0};
	M.dim = map_rt_dim, M.R = &R;
	cg->map = &M;
	const size_t at = cg->body.len;
	int rc = ox_cg_emit_op(cg, g, n);
	cg->map = NULL;
	if (cg->body.len != at) { /* (it printed C instead: no map) */
		cg->body.s[cg->body.len = at] = 0;
		M.ok = 0;
	}
	if (rc || !M.ok || M.bad) {
		ox_buf_free(&M.body);
		return rc ? -1 : 1;
	}
	ox_buf params = {0}, ptrs = {0};
	for (int k = 0; k < n->nin + n->nout; k++) {
		const int isin = k < n->nin;
		const ox_id v = isin ? n->in[k] : n->out[k - n->nin];
		ox_buf_printf(&params, "%s%s%s *__restrict__ %s%d", k ? ", " : "", isin ? "const " : "",
			      ox_cg_ctype(v >= 0 ? g->vals[v].dtype : OX_F32), isin ? "in" : "out", isin ? k : k - n->nin);
		if (v < 0)
			ox_buf_printf(&ptrs, "%snullptr", k ? ", " : "");
		else
			ox_buf_printf(&ptrs, "%s%s%d", k ? ", " : "", isin ? "in" : "out", isin ? k : k - n->nin);
	}
	if (!M.r) /* (one element: an index space of one) */
		M.r = 1, M.d[0] = 1;
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s, a thread per element */\n", cg->fname, n->optype);
	if (ox_cu_index_kernel_rt(&t, kname, params.s, M.d, M.r, M.body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&M.body), ox_buf_free(&ptrs);
		return 1;
	}
	ox_cu_index_launch(cg, kname, M.d, M.r, ptrs.s, &R);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&M.body), ox_buf_free(&ptrs);
	return 0;
}
