/* emit_ctrl.c: If, Loop and Scan as control flow, in two renderings.
 *
 * A control node kept by fold (opt/expand.c) has its bodies in the
 * attribute ox_bodies (opt/outline.c): each is emitted as a function of its
 * own, planned in an arena of its own (the node's scratch), and the node's
 * function calls it:
 *   If    `cond ? then(...) : else(...)`, the branch writing the node's
 *         outputs; dims that differ between the branches are data dims the
 *         node sets from the branch's shapes
 *   Loop  a for loop while the trip count and the condition allow, the
 *         carried values in two buffers of the scratch each (the body
 *         reads one and writes the other, then they swap), each scan
 *         output's step written in place; the number of iterations is the
 *         scan outputs' first dim, checked against its bound
 *   Scan  a for loop over the scan axis: a scan input's step is a pointer
 *         into it along axis 0, else gathered into a buffer; a scan output
 *         the same way back; states as a Loop's carried values
 * Inputs: the node's own, then each body's captured values in order
 * (ox_capt). A body's error code is the node's (cg->fails_any).
 *
 * The C target's rendering (emit_ctrl) is C: the bodies' node functions
 * (ox_cg_emit_body), memcpy; with --target cuda, when the node is not
 * taken below, the same C runs on one device thread. The CUDA rendering
 * (ox_cu_emit_ctrl) is host code with the bodies' nodes on kernels
 * (ox_cg_emit_body: a host function of the run functions' form):
 *   If    the condition copied to the host (a wait) before the branch;
 *         the dims it sets also copied to the device's ox_d (the C
 *         functions of later nodes read that)
 *   Loop  the trip count and first condition copied to the host (a wait);
 *         each iteration's number and condition written into the last 24
 *         bytes of the scratch for the body, and the condition it computed
 *         and the run's status read back (a wait: a failed node ends the
 *         loop with its code); copies on the device, on the stream
 *   Scan  no wait: a step along an axis other than 0 by cudaMemcpy2DAsync
 * A body with a run-time extent (a dynamic output axis) or a string leaves
 * the CUDA node to the C rendering on one device thread.
 */
#include "../cg.h"
#include "../../opt/opt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ox_attr *bodies(ox_graph *g, ox_node *n)
{
	const ox_attr *b = ox_attr_get(n, "ox_bodies");
	if (!b || b->type != OX_AT_GRAPHS || b->n < 1)
		return NULL;
	(void)g;
	return b;
}

/* "const void *NAME[] = {p, ...};" with a body's inputs: formals given
 * as text fml[0..nf), then the node's inputs first .. first + ncapt - 1 */
static void inputs_array(ox_cg *cg, const char *name, const char *const *fml, int nf, int first, int ncapt)
{
	ox_cg_printf(cg, "\tconst void *%s[] = {", name);
	for (int k = 0; k < nf; k++)
		ox_cg_printf(cg, "%s%s", k ? ", " : "", fml[k]);
	for (int k = 0; k < ncapt; k++)
		ox_cg_printf(cg, "%sin%d", nf + k ? ", " : "", first + k);
	if (nf + ncapt == 0)
		ox_cg_printf(cg, "NULL");
	ox_cg_printf(cg, "};\n");
}

/* the scratch: the node's last output */
static const char *scratch(ox_node *n)
{
	static char s[32];
	ox_cg_snprintf(s, sizeof s, "(unsigned char *)out%d", n->nout - 1);
	return s;
}

/* "NAME(A, ..., IN, OUT, SHP)": a body's call, its arguments as the
 * rendering's function takes them */
static const char *body_call(int cu, const char *name, const char *a, const char *in, const char *out, const char *shp)
{
	static char s[2][600];
	static int at;
	at ^= 1;
	if (cu)
		ox_cg_snprintf(s[at], sizeof s[at], "%s(%s, ox_d, ox_dd, ox_dext, ox_status, ox_w, %s, %s, %s, ox_st)", name, a, in,
			 out, shp);
	else
		ox_cg_snprintf(s[at], sizeof s[at], "%s(%s, ox_d, %s, %s, %s)", name, a, in, out, shp);
	return s[at];
}

/* n bytes from src to dst at indent lvl: on the host, or on the device */
static void copy(ox_cg *cg, int cu, int lvl, const char *dst, const char *src, const char *n)
{
	if (cu)
		ox_cg_line(cg, lvl, "cudaMemcpyAsync(%s, %s, %s, cudaMemcpyDeviceToDevice, ox_st);", dst, src, n);
	else
		ox_cg_line(cg, lvl, "memcpy(%s, %s, %s);", dst, src, n);
}

/* (cu) the stream's work done, PREFIX_ERR_CUDA when it failed */
static void wait(ox_cg *cg, int lvl)
{
	ox_cg_line(cg, lvl, "if (ox_cu_check(cudaStreamSynchronize(ox_st)))");
	ox_cg_line(cg, lvl + 1, "return %s_ERR_CUDA;", cg->prefix_upper);
}

/* data dim d of an output set from expr; (cu) on the device too, where
 * the C functions of later nodes read it */
static void set_dim(ox_cg *cg, int cu, ox_dim d, const char *expr)
{
	ox_cg_set_dim(cg, 1, d, expr);
	if (cu) {
		int s = ox_cg_dim_slot(cg, d);
		ox_cg_line(cg, 1, "cudaMemcpyAsync(ox_dd + %d, ox_d + %d, sizeof *ox_d, cudaMemcpyHostToDevice, ox_st);", s, s);
	}
}

static int emit_if(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b, int cu)
{
	const int64_t *capt;
	ox_attr_ints(n, "ox_capt", &capt);
	int nout = n->nout - n->scratch, syncs[2] = {1, 1};
	char name[2][200];
	for (int k = 0; k < 2; k++) {
		ox_cg_snprintf(name[k], sizeof name[k], "%s_%s", cg->fname, k ? "else" : "then");
		if (!b->g[k]->unreachable && ox_cg_emit_body(cg, b->g[k], name[k], cu, &syncs[k]))
			return -1;
	}
	if (!cu || !b->g[0]->unreachable)
		inputs_array(cg, "tin", NULL, 0, 1, (int)capt[0]);
	if (!cu || !b->g[1]->unreachable)
		inputs_array(cg, "ein", NULL, 0, 1 + (int)capt[0], (int)capt[1]);
	ox_cg_printf(cg, "\tvoid *out[] = {");
	for (int k = 0; k < nout; k++)
		ox_cg_printf(cg, "%sout%d", k ? ", " : "", k);
	ox_cg_printf(cg, "%s};\n", cu && !nout ? "NULL" : "");
	/* the outputs' shapes, where the branches differ */
	int any = 0;
	for (int k = 0; k < nout; k++) {
		ox_value *v = ox_out(g, n, k);
		int d = v && ox_shape_is_rt(g, &v->shape) && v->shape.rank > 0;
		if (d)
			ox_cg_printf(cg, "\tint64_t sh%d[%d];\n", k, v->shape.rank);
		any |= d;
	}
	if (any) {
		ox_cg_printf(cg, "\tint64_t *shp[] = {");
		for (int k = 0; k < nout; k++) {
			ox_value *v = ox_out(g, n, k);
			ox_cg_printf(cg, "%s%s", k ? ", " : "", v && ox_shape_is_rt(g, &v->shape) && v->shape.rank ? "" : "NULL");
			if (v && ox_shape_is_rt(g, &v->shape) && v->shape.rank)
				ox_cg_printf(cg, "sh%d", k);
		}
		ox_cg_printf(cg, "};\n");
	}
	if (cu) {
		/* the condition, on the host; (the bodies' arena: the scratch) */
		ox_cg_printf(cg, "\tunsigned char *S = %s;\n\tuint8_t c = 0;\n", n->scratch ? scratch(n) : "NULL");
		ox_cg_line(cg, 1, "if (ox_cu_check(cudaMemcpyAsync(&c, in0, 1, cudaMemcpyDeviceToHost, ox_st)))");
		ox_cg_line(cg, 2, "return %s_ERR_CUDA;", cg->prefix_upper);
		wait(cg, 1);
	}
	/* (cu) a branch that does not wait, its outputs' shapes the If's own:
	 * its launches one CUDA Graph (runtime_min/ox_cuda.h) */
	int graph[2];
	for (int k = 0; k < 2; k++)
		graph[k] = cu && !b->g[k]->unreachable && !syncs[k] && !any;
	if (graph[0] || graph[1])
		ox_cg_printf(cg, "\tstatic ox_bsite bg[2]; /* each branch's CUDA Graphs */\n");
	ox_cg_printf(cg, "\tint rc;\n\tif (%s)\n", cu ? "c" : "in0[0]");
	for (int k = 0; k < 2; k++) {
		if (k)
			ox_cg_printf(cg, "\telse\n");
		if (graph[k]) {
			ox_cg_printf(cg, "\t\trc = ox_body_graph(&bg[%d], %s, %d, %d, %d, S, ox_d, ox_dd, ox_dext, ox_status, ox_w, "
					 "%s, out, ox_st, %s_ERR_CUDA);\n",
				     k, name[k], (int)capt[k], nout, cg->nslots, k ? "ein" : "tin", cg->prefix_upper);
		} else if (b->g[k]->unreachable) {
			/* it cannot run with the shapes given (opt/expand.c) */
			ox_cg_printf(cg, "\t\treturn %s_ERR_SHAPE; /* ", cg->prefix_upper);
			for (const char *p = b->g[k]->unreachable; *p; p++)
				ox_cg_printf(cg, "%c", *p == '*' && p[1] == '/' ? '.' : *p == '\n' ? ' ' : *p);
			ox_cg_printf(cg, " */\n");
		} else {
			ox_cg_printf(cg, "\t\trc = %s;\n", body_call(cu, name[k], cu ? "S" : scratch(n), k ? "ein" : "tin",
								   "out", any ? "shp" : "NULL"));
		}
	}
	ox_cg_printf(cg, "\tif (rc)\n\t\treturn rc;\n");
	for (int k = 0; k < nout; k++) {
		ox_value *v = ox_out(g, n, k);
		for (int d = 0; v && d < v->shape.rank; d++) {
			if (!ox_dim_defined_by(g, v->shape.d[d], n->out[k]))
				continue;
			char e[32];
			ox_cg_snprintf(e, sizeof e, "sh%d[%d]", k, d);
			set_dim(cg, cu, v->shape.d[d], e);
		}
	}
	if (cu)
		ox_cg_printf(cg, "\t(void)S;\n\treturn 0;\n");
	cg->cu_sync = 1;
	return 0;
}

/* bytes of value v at run time, as C */
static const char *bytes(ox_cg *cg, const ox_value *v)
{
	return ox_cg_text(cg, "(size_t)%s * %zu", ox_cg_numel(cg, &v->shape), ox_dtype_size(v->dtype));
}

static int emit_loop(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b, int cu)
{
	ox_graph *body = b->g[0];
	const int64_t *capt;
	ox_attr_ints(n, "ox_capt", &capt);
	int nin0 = ox_ctrl_nin0(n), nc = nin0 - 2, nout = n->nout - n->scratch, syncs = 0;
	char name[200];
	ox_cg_snprintf(name, sizeof name, "%s_body", cg->fname);
	if (ox_cg_emit_body(cg, body, name, cu, &syncs))
		return -1;
	int64_t *off = malloc((size_t)(2 * n->nin + body->noutputs + 8) * sizeof *off);
	const int nbuf = ox_opt_ctrl_layout(g, n, off);
	/* output k (a carried value, or a sequence appended to: n->in[2 + k]
	 * omitted, or a scan output) stacks the steps when it is not carried */
	int first = -1;
	for (int k = 0; k < nout; k++) {
		ox_value *v = ox_out(g, n, k);
		if (v && v->shape.rank && first < 0 && ox_dim_defined_by(g, v->shape.d[0], n->out[k]))
			first = k;
	}
	const char *PU = cg->prefix_upper;
	ox_cg_printf(cg, "\tunsigned char *S = %s;\n", scratch(n));
	if (!cu) {
		if (n->in[0] >= 0)
			ox_cg_printf(cg, "\tconst int64_t trips = (int64_t)in0[0];\n");
		else
			ox_cg_printf(cg, "\tconst int64_t trips = INT64_MAX; /* no trip count: the condition decides */\n");
		ox_cg_printf(cg, "\tuint8_t cond = %s, cond_out = 0;\n", n->in[1] >= 0 ? "in1[0] != 0" : "1");
	} else {
		/* the trip count and the first condition, on the host; the
		 * number and the conditions the body reads on the device */
		const long long ctl = (long long)off[nbuf - 1];
		ox_cg_printf(cg, "\tint64_t *di = (int64_t *)(S + %lld);\n"
				 "\tuint8_t *dcond = (uint8_t *)(S + %lld), *dcond_out = (uint8_t *)(S + %lld);\n",
			     ctl, ctl + 8, ctl + 16);
		ox_cg_printf(cg, "\tint64_t trips = INT64_MAX; /* none: the condition decides */\n\tuint8_t cond = 1;\n");
		if (n->in[0] >= 0) {
			ox_cg_line(cg, 1, "if (ox_cu_check(cudaMemcpyAsync(&trips, in0, sizeof trips, cudaMemcpyDeviceToHost, ox_st)))");
			ox_cg_line(cg, 2, "return %s_ERR_CUDA;", PU);
		}
		if (n->in[1] >= 0) {
			ox_cg_line(cg, 1, "if (ox_cu_check(cudaMemcpyAsync(&cond, in1, 1, cudaMemcpyDeviceToHost, ox_st)))");
			ox_cg_line(cg, 2, "return %s_ERR_CUDA;", PU);
		}
		if (n->in[0] >= 0 || n->in[1] >= 0)
			wait(cg, 1);
		ox_cg_printf(cg, "\tcond = cond != 0;\n\tint rc = 0;\n");
	}
	ox_cg_printf(cg, "\tint64_t i = 0;\n");
	for (int j = 0; j < nc; j++) {
		ox_value *v = ox_in(g, n, 2 + j);
		if (!v)
			continue;
		const char *T = ox_cg_ctype(v->dtype);
		ox_cg_printf(cg, "\t%s *cur%d = (%s *)(S + %lld), *nxt%d = (%s *)(S + %lld), *tmp%d;\n", T, j, T,
			     (long long)off[2 * j], j, T, (long long)off[2 * j + 1], j);
		char d[16], s[16];
		ox_cg_snprintf(d, sizeof d, "cur%d", j), ox_cg_snprintf(s, sizeof s, "in%d", 2 + j);
		copy(cg, cu, 1, d, s, bytes(cg, v));
	}
	ox_cg_printf(cg, "\tfor (; i < trips && cond; i++) {\n");
	if (first >= 0)
		ox_cg_printf(cg, "\t\tif (i >= %lld)\n\t\t\treturn %s_ERR_SHAPE; /* more iterations than planned for */\n",
			     (long long)ox_dim_hi(g, ox_out(g, n, first)->shape.d[0]), PU);
	if (cu) /* (from pageable memory: copied when the call returns) */
		ox_cg_printf(cg, "\t\tcudaMemcpyAsync(di, &i, sizeof i, cudaMemcpyHostToDevice, ox_st);\n"
				 "\t\tcudaMemcpyAsync(dcond, &cond, 1, cudaMemcpyHostToDevice, ox_st);\n");
	ox_cg_printf(cg, "\t\tconst void *bin[] = {%s", cu ? "di, dcond" : "&i, &cond");
	for (int j = 0; j < nc; j++)
		ox_cg_printf(cg, n->in[2 + j] >= 0 ? ", cur%d" : ", NULL", j);
	for (int k = 0; k < capt[0]; k++)
		ox_cg_printf(cg, ", in%d", nin0 + k);
	ox_cg_printf(cg, "};\n\t\tvoid *bout[] = {%s", cu ? "dcond_out" : "&cond_out");
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
	/* (cu) a body that does not wait, whose outputs are all carried or
	 * unwanted (a scan output's place moves each iteration, so its keys
	 * would not come again): one CUDA Graph for each order of the carried
	 * buffers (runtime_min/ox_cuda.h) */
	int graph = cu && !syncs;
	for (int k = 0; k + 1 < body->noutputs && graph; k++)
		graph = (k < nc && n->in[2 + k] >= 0) || n->out[k] < 0;
	if (graph)
		ox_cg_printf(cg, "\t\tstatic ox_bsite bg; /* the body's CUDA Graphs */\n"
				 "\t\tif ((rc = ox_body_graph(&bg, %s, %d, %d, %d, S, ox_d, ox_dd, ox_dext, ox_status, ox_w, bin, "
				 "bout, ox_st, %s_ERR_CUDA)))\n\t\t\treturn rc;\n",
			     name, 2 + nc + (int)capt[0], body->noutputs, cg->nslots, PU);
	else if (cu)
		ox_cg_printf(cg, "\t\tif ((rc = %s))\n\t\t\treturn rc;\n", body_call(1, name, "S", "bin", "bout", "NULL"));
	else
		ox_cg_printf(cg, "\t\tint rc = %s;\n\t\tif (rc)\n\t\t\treturn rc;\n", body_call(0, name, "S", "bin", "bout", "NULL"));
	for (int j = 0; j < nc; j++)
		if (n->in[2 + j] >= 0)
			ox_cg_printf(cg, "\t\ttmp%d = cur%d, cur%d = nxt%d, nxt%d = tmp%d;\n", j, j, j, j, j, j);
	if (cu) {
		/* the condition the body computed and the run's status: a failed
		 * node ends the loop (its condition may be anything) */
		ox_cg_line(cg, 2, "int st = 0;");
		ox_cg_line(cg, 2, "if (ox_cu_check(cudaMemcpyAsync(&cond, dcond_out, 1, cudaMemcpyDeviceToHost, ox_st)) ||");
		ox_cg_line(cg, 2, "    ox_cu_check(cudaMemcpyAsync(&st, ox_status, sizeof st, cudaMemcpyDeviceToHost, ox_st)))");
		ox_cg_line(cg, 3, "return %s_ERR_CUDA;", PU);
		wait(cg, 2);
		ox_cg_printf(cg, "\t\tif (st)\n\t\t\treturn st;\n\t\tcond = cond != 0;\n\t}\n");
	} else {
		ox_cg_printf(cg, "\t\tcond = cond_out != 0;\n\t}\n");
	}
	for (int j = 0; j < nc; j++) {
		if (n->in[2 + j] < 0)
			continue;
		if (n->out[j] >= 0) {
			char d[16], s[16];
			ox_cg_snprintf(d, sizeof d, "out%d", j), ox_cg_snprintf(s, sizeof s, "cur%d", j);
			copy(cg, cu, 1, d, s, bytes(cg, ox_in(g, n, 2 + j)));
		}
		ox_cg_printf(cg, "\t(void)nxt%d, (void)tmp%d;\n", j, j);
	}
	if (first >= 0)
		set_dim(cg, cu, ox_out(g, n, first)->shape.d[0], "i");
	if (cu)
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

/* "outer, len, inner" split of shape s around axis a: as C expressions */
static void around(ox_cg *cg, const ox_shape *s, int a, char *outer, char *inner, size_t n)
{
	ox_shape o = {a, {0}}, i = {s->rank - a - 1, {0}};
	memcpy(o.d, s->d, (size_t)a * sizeof *o.d);
	memcpy(i.d, s->d + a + 1, (size_t)i.rank * sizeof *i.d);
	ox_cg_snprintf(outer, n, "%s", ox_cg_numel(cg, &o));
	ox_cg_snprintf(inner, n, "%s", ox_cg_numel(cg, &i));
}

/* the step of a scan tensor along axis a (not 0): outer rows of inner
 * elements of size es, len * inner apart in the whole (`big`, at element
 * offset `at` of the step's), `step` packed; to_step: whole -> step */
static void scan_step(ox_cg *cg, int cu, int to_step, const char *step, const char *big, const char *at,
		      const char *outer, const char *inner, size_t es, const char *T)
{
	if (cu) {
		if (to_step)
			ox_cg_printf(cg, "\t\tcudaMemcpy2DAsync(%s, (size_t)%s * %zu, %s + %s * %s, (size_t)(len * %s) * %zu,\n",
				     step, inner, es, big, at, inner, inner, es);
		else
			ox_cg_printf(cg, "\t\tcudaMemcpy2DAsync(%s + %s * %s, (size_t)(len * %s) * %zu, %s, (size_t)%s * %zu,\n",
				     big, at, inner, inner, es, step, inner, es);
		ox_cg_printf(cg, "\t\t\t\t  (size_t)%s * %zu, (size_t)%s, cudaMemcpyDeviceToDevice, ox_st);\n", inner, es, outer);
		return;
	}
	(void)T;
	ox_cg_printf(cg, "\t\tfor (int64_t o = 0; o < %s; o++)\n", outer);
	if (to_step)
		ox_cg_printf(cg, "\t\t\tmemcpy(%s + o * %s, %s + (o * len + %s) * %s, (size_t)%s * sizeof *%s);\n", step, inner,
			     big, at, inner, inner, step);
	else
		ox_cg_printf(cg, "\t\t\tmemcpy(%s + (o * len + %s) * %s, %s + o * %s, (size_t)%s * sizeof *%s);\n", big, at,
			     inner, step, inner, inner, step);
}

static int emit_scan(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b, int cu)
{
	ox_graph *body = b->g[0];
	const int64_t *capt;
	ox_attr_ints(n, "ox_capt", &capt);
	int nin0 = ox_ctrl_nin0(n), nx = (int)ox_attr_int(n, "num_scan_inputs", 0), ns = nin0 - nx, syncs = 0;
	int ny = n->nout - n->scratch - ns;
	char name[200];
	ox_cg_snprintf(name, sizeof name, "%s_body", cg->fname);
	if (ox_cg_emit_body(cg, body, name, cu, &syncs))
		return -1;
	int64_t *off = malloc((size_t)(2 * n->nin + body->noutputs + 8) * sizeof *off);
	ox_opt_ctrl_layout(g, n, off);
	ox_value *x0 = ox_in(g, n, ns);
	int a0 = ox_norm_axis(attr_at(n, "scan_input_axes", 0, 0), x0->shape.rank);
	ox_cg_printf(cg, "\tunsigned char *S = %s;\n", scratch(n));
	if (cu)
		ox_cg_printf(cg, "\tint rc = 0;\n");
	ox_cg_printf(cg, "\tconst int64_t len = %s;\n", ox_cg_dim(cg, x0->shape.d[a0]));
	for (int j = 0; j < ns; j++) {
		ox_value *v = ox_in(g, n, j);
		const char *T = ox_cg_ctype(v->dtype);
		ox_cg_printf(cg, "\t%s *cur%d = (%s *)(S + %lld), *nxt%d = (%s *)(S + %lld), *tmp%d;\n", T, j, T,
			     (long long)off[2 * j], j, T, (long long)off[2 * j + 1], j);
		char d[16], s[16];
		ox_cg_snprintf(d, sizeof d, "cur%d", j), ox_cg_snprintf(s, sizeof s, "in%d", j);
		copy(cg, cu, 1, d, s, bytes(cg, v));
	}
	ox_cg_printf(cg, "\tfor (int64_t t = 0; t < len; t++) {\n");
	char outer[1100], inner[1100], nm[2][32];
	for (int k = 0; k < nx; k++) {
		ox_value *x = ox_in(g, n, ns + k);
		const char *T = ox_cg_ctype(x->dtype);
		int a = ox_norm_axis(attr_at(n, "scan_input_axes", k, 0), x->shape.rank);
		int rev = (int)attr_at(n, "scan_input_directions", k, 0);
		around(cg, &x->shape, a, outer, inner, sizeof outer);
		ox_cg_printf(cg, "\t\tconst int64_t ix%d = %s;\n", k, rev ? "len - 1 - t" : "t");
		if (a == 0) {
			ox_cg_printf(cg, "\t\tconst %s *x%d = in%d + ix%d * %s;\n", T, k, ns + k, k, inner);
		} else {
			ox_cg_printf(cg, "\t\t%s *x%d = (%s *)(S + %lld);\n", T, k, T, (long long)off[2 * ns + k]);
			ox_cg_snprintf(nm[0], sizeof nm[0], "x%d", k), ox_cg_snprintf(nm[1], sizeof nm[1], "in%d", ns + k);
			char at[16];
			ox_cg_snprintf(at, sizeof at, "ix%d", k);
			scan_step(cg, cu, 1, nm[0], nm[1], at, outer, inner, ox_dtype_size(x->dtype), T);
		}
	}
	for (int s = 0; s < ny; s++) {
		ox_value *y = ox_out(g, n, ns + s);
		ox_value *ys = &body->vals[body->outputs[ns + s]];
		const char *T = ox_cg_ctype(ys->dtype);
		int a = y ? ox_norm_axis(attr_at(n, "scan_output_axes", s, 0), y->shape.rank) : 0;
		int rev = (int)attr_at(n, "scan_output_directions", s, 0);
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
	ox_cg_printf(cg, "%s};\n\t\tvoid *bout[] = {", c ? "" : "NULL");
	c = 0;
	for (int j = 0; j < ns; j++)
		ox_cg_printf(cg, "%snxt%d", c++ ? ", " : "", j);
	for (int s = 0; s < ny; s++)
		ox_cg_printf(cg, "%sy%d", c++ ? ", " : "", s);
	ox_cg_printf(cg, "%s};\n", c ? "" : "NULL");
	if (cu)
		ox_cg_printf(cg, "\t\tif ((rc = %s))\n\t\t\treturn rc;\n", body_call(1, name, "S", "bin", "bout", "NULL"));
	else
		ox_cg_printf(cg, "\t\tint rc = %s;\n\t\tif (rc)\n\t\t\treturn rc;\n", body_call(0, name, "S", "bin", "bout", "NULL"));
	for (int s = 0; s < ny; s++) {
		ox_value *y = ox_out(g, n, ns + s);
		int a = y ? ox_norm_axis(attr_at(n, "scan_output_axes", s, 0), y->shape.rank) : 0;
		if (!y || a == 0)
			continue;
		around(cg, &y->shape, a, outer, inner, sizeof outer);
		ox_cg_snprintf(nm[0], sizeof nm[0], "y%d", s), ox_cg_snprintf(nm[1], sizeof nm[1], "out%d", ns + s);
		char at[16];
		ox_cg_snprintf(at, sizeof at, "iy%d", s);
		scan_step(cg, cu, 0, nm[0], nm[1], at, outer, inner, ox_dtype_size(y->dtype), NULL);
	}
	for (int j = 0; j < ns; j++)
		ox_cg_printf(cg, "\t\ttmp%d = cur%d, cur%d = nxt%d, nxt%d = tmp%d;\n", j, j, j, j, j, j);
	ox_cg_printf(cg, "\t}\n");
	for (int j = 0; j < ns; j++) {
		if (n->out[j] >= 0) {
			char d[16], s[16];
			ox_cg_snprintf(d, sizeof d, "out%d", j), ox_cg_snprintf(s, sizeof s, "cur%d", j);
			copy(cg, cu, 1, d, s, bytes(cg, ox_in(g, n, j)));
		}
		ox_cg_printf(cg, "\t(void)nxt%d, (void)tmp%d;\n", j, j);
	}
	if (cu)
		ox_cg_printf(cg, "\treturn 0;\n");
	free(off);
	cg->cu_sync = syncs;
	return 0;
}

static int emit(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attr *b, int cu)
{
	cg->fails_any = 1;
	switch (n->op) {
	case OX_OP_If:
		return emit_if(cg, g, n, b, cu);
	case OX_OP_Loop:
		return emit_loop(cg, g, n, b, cu);
	case OX_OP_Scan:
		return emit_scan(cg, g, n, b, cu);
	}
	return ox_error(g, n, "no C emitter for this op");
}

int emit_ctrl(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_attr *b = bodies(g, n);
	if (!b)
		return ox_error(g, n, "is expanded at compile time and should not reach the C emitter");
	return emit(cg, g, n, b, 0);
}

/* can g's nodes, and those of the bodies within, be the top level's on
 * the device: no run-time extent, no string */
static int native_ok(ox_graph *g)
{
	for (int v = 0; v < g->nvals; v++)
		if (g->vals[v].dyn || g->vals[v].dtype == OX_STRING)
			return 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_attr *b = bodies(g, &g->nodes[i]);
		for (int k = 0; b && k < b->n; k++)
			if (!b->g[k]->unreachable && !native_ok(b->g[k]))
				return 0;
	}
	return 1;
}

int ox_cu_emit_ctrl(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_attr *b = bodies(g, n);
	if (!b || (n->op != OX_OP_If && !n->scratch)) /* (the carried values' buffers) */
		return 1;
	for (int k = 0; k < b->n; k++)
		if (!b->g[k]->unreachable && !native_ok(b->g[k]))
			return 1;
	cg->cu_rc = 1;
	return emit(cg, g, n, b, 1);
}
