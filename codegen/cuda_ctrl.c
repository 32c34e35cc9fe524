/* cuda_ctrl.c: If, Loop and Scan on the host (--target cuda).
 *
 * The C target's control flow (codegen/emit_ctrl.c) with the bodies'
 * nodes on kernels: each body is emitted as the top level is
 * (ox_cg_emit_body_cu: its nodes' kernels and launches, a host function
 * of the run functions' form), and the node is host code that calls it:
 *   If    the condition copied to the host (a wait), then the branch;
 *         dims that differ between the branches set on the host from the
 *         branch's shapes and copied to the device's ox_d
 *   Loop  the trip count and the first condition copied to the host (a
 *         wait); each iteration writes its number and condition into the
 *         node's scratch for the body, runs it, and reads the condition it
 *         computed and the run's status back (a wait: a failed node stops
 *         the loop with its code); carried values in two buffers each,
 *         swapped by pointer, copied on the device
 *   Scan  a host loop over the scan axis (no wait): a step of an input
 *         or output along an axis other than 0 copied by cudaMemcpy2DAsync
 * The scratch is the C target's (opt/outline.c, ox_opt_ctrl_layout; a
 * Loop's last 24 bytes the number and the conditions). A body whose
 * values have run-time extents (a dynamic output axis) declines: the node
 * then runs as the C function on one device thread, as before.
 */
#include "cuda_kernels.h"
#include "../opt/opt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ox_attr *bodies(ox_node *n)
{
	const ox_attr *b = ox_attr_get(n, "ox_bodies");
	return b && b->type == OX_AT_GRAPHS && b->n >= 1 ? b : NULL;
}

/* can g's nodes, and those of the bodies within, be the top level's on
 * the device: no run-time extent, no string */
static int native_ok(ox_graph *g)
{
	for (int v = 0; v < g->nvals; v++)
		if (g->vals[v].dyn || g->vals[v].dtype == OX_STRING)
			return 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_attr *b = bodies(&g->nodes[i]);
		for (int k = 0; b && k < b->n; k++)
			if (!b->g[k]->unreachable && !native_ok(b->g[k]))
				return 0;
	}
	return 1;
}

/* "const void *NAME[] = {...};": formals fml[0..nf), then the node's
 * inputs first .. first + ncapt - 1 */
static void inputs_array(ox_cg *cg, int lvl, const char *name, const char *const *fml, int nf, int first, int ncapt)
{
	ox_cg_printf(cg, "%.*sconst void *%s[] = {", lvl, "\t\t\t", name);
	for (int k = 0; k < nf; k++)
		ox_cg_printf(cg, "%s%s", k ? ", " : "", fml[k]);
	for (int k = 0; k < ncapt; k++)
		ox_cg_printf(cg, "%sin%d", nf + k ? ", " : "", first + k);
	ox_cg_printf(cg, "%s};\n", nf + ncapt ? "" : "nullptr");
}

/* a body's call: rc from it */
static void call(ox_cg *cg, int lvl, const char *name, const char *in, const char *out, const char *shp)
{
	ox_cg_printf(cg, "%.*sif ((rc = %s(S, ox_d, ox_dd, ox_dext, ox_status, ox_w, %s, %s, %s, ox_st)))\n"
			 "%.*s\treturn rc;\n",
		     lvl, "\t\t\t", name, in, out, shp, lvl, "\t\t\t");
}

/* a wait for the stream, PREFIX_ERR_CUDA when it fails */
static void wait(ox_cg *cg, int lvl)
{
	ox_cg_printf(cg, "%.*sif (ox_cu_check(cudaStreamSynchronize(ox_st)))\n%.*s\treturn %s_ERR_CUDA;\n", lvl, "\t\t\t",
		     lvl, "\t\t\t", cg->prefix_upper);
}

/* data dim d of the node's output, set on the host from expr, then on the
 * device (the C functions of later nodes read ox_dd) */
static void set_dim(ox_cg *cg, ox_dim d, const char *expr)
{
	ox_cg_set_dim(cg, 1, d, expr);
	int s = ox_cg_dim_slot(cg, d);
	ox_cg_printf(cg, "\tcudaMemcpyAsync(ox_dd + %d, ox_d + %d, sizeof *ox_d, cudaMemcpyHostToDevice, ox_st);\n", s, s);
}

/* bytes of value v at run time, as C */
static const char *bytes(ox_cg *cg, const ox_value *v)
{
	static char r[2][1100];
	static int at;
	at = (at + 1) % 2;
	snprintf(r[at], sizeof r[at], "(size_t)%s * %zu", ox_cg_numel(cg, &v->shape), ox_dtype_size(v->dtype));
	return r[at];
}

static int emit_if(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b)
{
	const int64_t *capt;
	ox_attr_ints(n, "ox_capt", &capt);
	const int nout = n->nout - n->scratch;
	char name[2][200];
	int syncs = 0;
	for (int k = 0; k < 2; k++) {
		snprintf(name[k], sizeof name[k], "%s_%s", cg->fname, k ? "else" : "then");
		if (!b->g[k]->unreachable && ox_cg_emit_body_cu(cg, b->g[k], name[k], &syncs))
			return -1;
	}
	/* (the bodies' arena: the scratch, none when they need none) */
	if (n->scratch)
		ox_cg_printf(cg, "\tunsigned char *S = (unsigned char *)out%d;\n\tint rc = 0;\n", n->nout - 1);
	else
		ox_cg_printf(cg, "\tunsigned char *S = nullptr;\n\tint rc = 0;\n");
	if (!b->g[0]->unreachable)
		inputs_array(cg, 1, "tin", NULL, 0, 1, (int)capt[0]);
	if (!b->g[1]->unreachable)
		inputs_array(cg, 1, "ein", NULL, 0, 1 + (int)capt[0], (int)capt[1]);
	ox_cg_printf(cg, "\tvoid *out[] = {");
	for (int k = 0; k < nout; k++)
		ox_cg_printf(cg, "%sout%d", k ? ", " : "", k);
	ox_cg_printf(cg, "%s};\n", nout ? "" : "nullptr");
	/* the outputs' shapes, where the branches differ */
	int any = 0;
	for (int k = 0; k < nout; k++) {
		ox_value *v = ox_out(g, n, k);
		if (v && ox_shape_is_rt(g, &v->shape) && v->shape.rank > 0) {
			ox_cg_printf(cg, "\tint64_t sh%d[%d];\n", k, v->shape.rank);
			any = 1;
		}
	}
	if (any) {
		ox_cg_printf(cg, "\tint64_t *shp[] = {");
		for (int k = 0; k < nout; k++) {
			ox_value *v = ox_out(g, n, k);
			if (v && ox_shape_is_rt(g, &v->shape) && v->shape.rank)
				ox_cg_printf(cg, "%ssh%d", k ? ", " : "", k);
			else
				ox_cg_printf(cg, "%snullptr", k ? ", " : "");
		}
		ox_cg_printf(cg, "};\n");
	}
	/* the condition, on the host */
	ox_cg_printf(cg, "\tuint8_t c = 0;\n"
			 "\tif (ox_cu_check(cudaMemcpyAsync(&c, in0, 1, cudaMemcpyDeviceToHost, ox_st)))\n"
			 "\t\treturn %s_ERR_CUDA;\n", cg->prefix_upper);
	wait(cg, 1);
	ox_cg_printf(cg, "\tif (c)\n");
	for (int k = 0; k < 2; k++) {
		if (k)
			ox_cg_printf(cg, "\telse\n");
		if (b->g[k]->unreachable) {
			/* it cannot run with the shapes given (opt/expand.c) */
			ox_cg_printf(cg, "\t\treturn %s_ERR_SHAPE; /* ", cg->prefix_upper);
			for (const char *p = b->g[k]->unreachable; *p; p++)
				ox_cg_printf(cg, "%c", *p == '*' && p[1] == '/' ? '.' : *p == '\n' ? ' ' : *p);
			ox_cg_printf(cg, " */\n");
		} else {
			ox_cg_printf(cg, "\t{\n");
			call(cg, 2, name[k], k ? "ein" : "tin", "out", any ? "shp" : "nullptr");
			ox_cg_printf(cg, "\t}\n");
		}
	}
	for (int k = 0; k < nout; k++) {
		ox_value *v = ox_out(g, n, k);
		for (int d = 0; v && d < v->shape.rank; d++) {
			if (!ox_dim_defined_by(g, v->shape.d[d], n->out[k]))
				continue;
			char e[32];
			snprintf(e, sizeof e, "sh%d[%d]", k, d);
			set_dim(cg, v->shape.d[d], e);
		}
	}
	ox_cg_printf(cg, "\t(void)S;\n\treturn 0;\n");
	cg->cu_sync = 1;
	return 0;
}

static int emit_loop(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b)
{
	ox_graph *body = b->g[0];
	const int64_t *capt;
	ox_attr_ints(n, "ox_capt", &capt);
	const int nin0 = ox_ctrl_nin0(n), nc = nin0 - 2, nout = n->nout - n->scratch;
	char name[200];
	snprintf(name, sizeof name, "%s_body", cg->fname);
	int syncs = 0;
	if (ox_cg_emit_body_cu(cg, body, name, &syncs))
		return -1;
	int64_t *off = malloc((size_t)(2 * n->nin + body->noutputs + 8) * sizeof *off);
	const int nbuf = ox_opt_ctrl_layout(g, n, off);
	const long long ctl = (long long)off[nbuf - 1]; /* the number, cond in and out */
	int first = -1;
	for (int k = 0; k < nout && first < 0; k++) {
		ox_value *v = ox_out(g, n, k);
		if (v && v->shape.rank && ox_dim_defined_by(g, v->shape.d[0], n->out[k]))
			first = k;
	}
	const char *PU = cg->prefix_upper;
	ox_cg_printf(cg, "\tunsigned char *S = (unsigned char *)out%d;\n\tint rc = 0;\n", n->nout - 1);
	ox_cg_printf(cg, "\tint64_t *di = (int64_t *)(S + %lld);\n"
			 "\tuint8_t *dcond = (uint8_t *)(S + %lld), *dcond_out = (uint8_t *)(S + %lld);\n",
		     ctl, ctl + 8, ctl + 16);
	/* the trip count and the first condition, on the host */
	ox_cg_printf(cg, "\tint64_t trips = INT64_MAX; /* none: the condition decides */\n\tuint8_t cond = 1;\n");
	if (n->in[0] >= 0)
		ox_cg_printf(cg, "\tif (ox_cu_check(cudaMemcpyAsync(&trips, in0, sizeof trips, cudaMemcpyDeviceToHost, ox_st)))\n"
				 "\t\treturn %s_ERR_CUDA;\n", PU);
	if (n->in[1] >= 0)
		ox_cg_printf(cg, "\tif (ox_cu_check(cudaMemcpyAsync(&cond, in1, 1, cudaMemcpyDeviceToHost, ox_st)))\n"
				 "\t\treturn %s_ERR_CUDA;\n", PU);
	if (n->in[0] >= 0 || n->in[1] >= 0)
		wait(cg, 1);
	ox_cg_printf(cg, "\tcond = cond != 0;\n\tint64_t i = 0;\n");
	for (int j = 0; j < nc; j++) {
		ox_value *v = ox_in(g, n, 2 + j);
		if (!v)
			continue;
		const char *T = ox_cg_ctype(v->dtype);
		ox_cg_printf(cg, "\t%s *cur%d = (%s *)(S + %lld), *nxt%d = (%s *)(S + %lld), *tmp%d;\n", T, j, T,
			     (long long)off[2 * j], j, T, (long long)off[2 * j + 1], j);
		ox_cg_printf(cg, "\tcudaMemcpyAsync(cur%d, in%d, %s, cudaMemcpyDeviceToDevice, ox_st);\n", j, 2 + j,
			     bytes(cg, v));
	}
	ox_cg_printf(cg, "\tfor (; i < trips && cond; i++) {\n");
	if (first >= 0)
		ox_cg_printf(cg, "\t\tif (i >= %lld)\n\t\t\treturn %s_ERR_SHAPE; /* more iterations than planned for */\n",
			     (long long)ox_dim_hi(g, ox_out(g, n, first)->shape.d[0]), PU);
	/* (from pageable memory: the copy has the value when the call returns) */
	ox_cg_printf(cg, "\t\tcudaMemcpyAsync(di, &i, sizeof i, cudaMemcpyHostToDevice, ox_st);\n"
			 "\t\tcudaMemcpyAsync(dcond, &cond, 1, cudaMemcpyHostToDevice, ox_st);\n");
	ox_cg_printf(cg, "\t\tconst void *bin[] = {di, dcond");
	for (int j = 0; j < nc; j++)
		ox_cg_printf(cg, n->in[2 + j] >= 0 ? ", cur%d" : ", nullptr", j);
	for (int k = 0; k < capt[0]; k++)
		ox_cg_printf(cg, ", in%d", nin0 + k);
	ox_cg_printf(cg, "};\n\t\tvoid *bout[] = {dcond_out");
	for (int k = 0, spare = 2 * nc; k + 1 < body->noutputs; k++) {
		ox_value *y = &body->vals[body->outputs[1 + k]];
		if (k < nc && n->in[2 + k] >= 0)
			ox_cg_printf(cg, ", nxt%d", k);
		else if (n->out[k] < 0) /* not wanted: the step goes to a spare buffer */
			ox_cg_printf(cg, ", (void *)(S + %lld)", (long long)off[spare++]);
		else
			ox_cg_printf(cg, ", out%d + i * %s", k, ox_cg_numel(cg, &y->shape));
	}
	ox_cg_printf(cg, "};\n");
	call(cg, 2, name, "bin", "bout", "nullptr");
	for (int j = 0; j < nc; j++)
		if (n->in[2 + j] >= 0)
			ox_cg_printf(cg, "\t\ttmp%d = cur%d, cur%d = nxt%d, nxt%d = tmp%d;\n", j, j, j, j, j, j);
	/* the condition the body computed, and the run's status: a failed node
	 * ends the loop (its condition may be anything) */
	ox_cg_printf(cg, "\t\tint st = 0;\n"
			 "\t\tif (ox_cu_check(cudaMemcpyAsync(&cond, dcond_out, 1, cudaMemcpyDeviceToHost, ox_st)) ||\n"
			 "\t\t    ox_cu_check(cudaMemcpyAsync(&st, ox_status, sizeof st, cudaMemcpyDeviceToHost, ox_st)))\n"
			 "\t\t\treturn %s_ERR_CUDA;\n", PU);
	wait(cg, 2);
	ox_cg_printf(cg, "\t\tif (st)\n\t\t\treturn st;\n\t\tcond = cond != 0;\n\t}\n");
	for (int j = 0; j < nc; j++) {
		if (n->in[2 + j] < 0)
			continue;
		if (n->out[j] >= 0)
			ox_cg_printf(cg, "\tcudaMemcpyAsync(out%d, cur%d, %s, cudaMemcpyDeviceToDevice, ox_st);\n", j, j,
				     bytes(cg, ox_in(g, n, 2 + j)));
		ox_cg_printf(cg, "\t(void)nxt%d, (void)tmp%d;\n", j, j);
	}
	if (first >= 0)
		set_dim(cg, ox_out(g, n, first)->shape.d[0], "i");
	ox_cg_printf(cg, "\treturn 0;\n");
	free(off);
	cg->cu_sync = 1;
	return 0;
}

static int64_t attr_at(const ox_node *n, const char *name, int k, int64_t dflt)
{
	const int64_t *v;
	int c = ox_attr_ints(n, name, &v);
	return c > k ? v[k] : dflt;
}

/* "outer, inner" element counts of shape s around axis a, as C */
static void around(ox_cg *cg, const ox_shape *s, int a, char *outer, char *inner, size_t n)
{
	ox_shape o = {a, {0}}, i = {s->rank - a - 1, {0}};
	memcpy(o.d, s->d, (size_t)a * sizeof *o.d);
	memcpy(i.d, s->d + a + 1, (size_t)i.rank * sizeof *i.d);
	snprintf(outer, n, "%s", ox_cg_numel(cg, &o));
	snprintf(inner, n, "%s", ox_cg_numel(cg, &i));
}

static int emit_scan(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b)
{
	ox_graph *body = b->g[0];
	const int64_t *capt;
	ox_attr_ints(n, "ox_capt", &capt);
	const int nin0 = ox_ctrl_nin0(n), nx = (int)ox_attr_int(n, "num_scan_inputs", 0), ns = nin0 - nx;
	const int ny = n->nout - n->scratch - ns;
	char name[200];
	snprintf(name, sizeof name, "%s_body", cg->fname);
	int syncs = 0;
	if (ox_cg_emit_body_cu(cg, body, name, &syncs))
		return -1;
	int64_t *off = malloc((size_t)(2 * n->nin + body->noutputs + 8) * sizeof *off);
	ox_opt_ctrl_layout(g, n, off);
	ox_value *x0 = ox_in(g, n, ns);
	const int a0 = ox_norm_axis(attr_at(n, "scan_input_axes", 0, 0), x0->shape.rank);
	ox_cg_printf(cg, "\tunsigned char *S = (unsigned char *)out%d;\n\tint rc = 0;\n", n->nout - 1);
	ox_cg_printf(cg, "\tconst int64_t len = %s;\n", ox_cg_dim(cg, x0->shape.d[a0]));
	for (int j = 0; j < ns; j++) {
		ox_value *v = ox_in(g, n, j);
		const char *T = ox_cg_ctype(v->dtype);
		ox_cg_printf(cg, "\t%s *cur%d = (%s *)(S + %lld), *nxt%d = (%s *)(S + %lld), *tmp%d;\n", T, j, T,
			     (long long)off[2 * j], j, T, (long long)off[2 * j + 1], j);
		ox_cg_printf(cg, "\tcudaMemcpyAsync(cur%d, in%d, %s, cudaMemcpyDeviceToDevice, ox_st);\n", j, j, bytes(cg, v));
	}
	ox_cg_printf(cg, "\tfor (int64_t t = 0; t < len; t++) {\n");
	char outer[1100], inner[1100];
	for (int k = 0; k < nx; k++) {
		ox_value *x = ox_in(g, n, ns + k);
		const char *T = ox_cg_ctype(x->dtype);
		const size_t es = ox_dtype_size(x->dtype);
		const int a = ox_norm_axis(attr_at(n, "scan_input_axes", k, 0), x->shape.rank);
		const int rev = (int)attr_at(n, "scan_input_directions", k, 0);
		around(cg, &x->shape, a, outer, inner, sizeof outer);
		ox_cg_printf(cg, "\t\tconst int64_t ix%d = %s;\n", k, rev ? "len - 1 - t" : "t");
		if (a == 0) {
			ox_cg_printf(cg, "\t\tconst %s *x%d = in%d + ix%d * %s;\n", T, k, ns + k, k, inner);
		} else {
			/* the step's rows: outer of inner elements, len * inner apart */
			ox_cg_printf(cg, "\t\t%s *x%d = (%s *)(S + %lld);\n", T, k, T, (long long)off[2 * ns + k]);
			ox_cg_printf(cg, "\t\tcudaMemcpy2DAsync(x%d, (size_t)%s * %zu, in%d + ix%d * %s, (size_t)(len * %s) * %zu,\n"
					 "\t\t\t\t  (size_t)%s * %zu, (size_t)%s, cudaMemcpyDeviceToDevice, ox_st);\n",
				     k, inner, es, ns + k, k, inner, inner, es, inner, es, outer);
		}
	}
	for (int s = 0; s < ny; s++) {
		ox_value *y = ox_out(g, n, ns + s);
		ox_value *ys = &body->vals[body->outputs[ns + s]];
		const char *T = ox_cg_ctype(ys->dtype);
		const int a = y ? ox_norm_axis(attr_at(n, "scan_output_axes", s, 0), y->shape.rank) : 0;
		const int rev = (int)attr_at(n, "scan_output_directions", s, 0);
		ox_cg_printf(cg, "\t\tconst int64_t iy%d = %s;\n", s, rev ? "len - 1 - t" : "t");
		if (y && a == 0)
			ox_cg_printf(cg, "\t\t%s *y%d = out%d + iy%d * %s;\n", T, s, ns + s, s, ox_cg_numel(cg, &ys->shape));
		else
			ox_cg_printf(cg, "\t\t%s *y%d = (%s *)(S + %lld);\n", T, s, T, (long long)off[2 * ns + nx + s]);
	}
	ox_cg_printf(cg, "\t\tconst void *bin[] = {");
	int c = 0;
	for (int j = 0; j < ns; j++)
		ox_cg_printf(cg, "%scur%d", c++ ? ", " : "", j);
	for (int k = 0; k < nx; k++)
		ox_cg_printf(cg, "%sx%d", c++ ? ", " : "", k);
	for (int k = 0; k < capt[0]; k++)
		ox_cg_printf(cg, "%sin%d", c++ ? ", " : "", nin0 + k);
	ox_cg_printf(cg, "%s};\n\t\tvoid *bout[] = {", c ? "" : "nullptr");
	c = 0;
	for (int j = 0; j < ns; j++)
		ox_cg_printf(cg, "%snxt%d", c++ ? ", " : "", j);
	for (int s = 0; s < ny; s++)
		ox_cg_printf(cg, "%sy%d", c++ ? ", " : "", s);
	ox_cg_printf(cg, "%s};\n", c ? "" : "nullptr");
	call(cg, 2, name, "bin", "bout", "nullptr");
	for (int s = 0; s < ny; s++) {
		ox_value *y = ox_out(g, n, ns + s);
		const int a = y ? ox_norm_axis(attr_at(n, "scan_output_axes", s, 0), y->shape.rank) : 0;
		if (!y || a == 0)
			continue;
		const size_t es = ox_dtype_size(y->dtype);
		around(cg, &y->shape, a, outer, inner, sizeof outer);
		ox_cg_printf(cg, "\t\tcudaMemcpy2DAsync(out%d + iy%d * %s, (size_t)(len * %s) * %zu, y%d, (size_t)%s * %zu,\n"
				 "\t\t\t\t  (size_t)%s * %zu, (size_t)%s, cudaMemcpyDeviceToDevice, ox_st);\n",
			     ns + s, s, inner, inner, es, s, inner, es, inner, es, outer);
	}
	for (int j = 0; j < ns; j++)
		ox_cg_printf(cg, "\t\ttmp%d = cur%d, cur%d = nxt%d, nxt%d = tmp%d;\n", j, j, j, j, j, j);
	ox_cg_printf(cg, "\t}\n");
	for (int j = 0; j < ns; j++) {
		if (n->out[j] >= 0)
			ox_cg_printf(cg, "\tcudaMemcpyAsync(out%d, cur%d, %s, cudaMemcpyDeviceToDevice, ox_st);\n", j, j,
				     bytes(cg, ox_in(g, n, j)));
		ox_cg_printf(cg, "\t(void)nxt%d, (void)tmp%d;\n", j, j);
	}
	ox_cg_printf(cg, "\treturn 0;\n");
	free(off);
	cg->cu_sync = syncs;
	return 0;
}

int ox_cu_emit_ctrl(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_attr *b = bodies(n);
	if (!b)
		return 1;
	for (int k = 0; k < b->n; k++)
		if (!b->g[k]->unreachable && !native_ok(b->g[k]))
			return 1;
	if (n->op != OX_OP_If && !n->scratch) /* (the carried values' buffers) */
		return 1;
	cg->fails_any = 1, cg->cu_rc = 1;
	switch (n->op) {
	case OX_OP_If:
		return emit_if(cg, g, n, b);
	case OX_OP_Loop:
		return emit_loop(cg, g, n, b);
	default:
		return emit_scan(cg, g, n, b);
	}
}
