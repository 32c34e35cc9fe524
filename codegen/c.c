/* c.c: the C backend's driver.
 *
 * Emits, for a planned graph (constant shapes, arena offsets, views):
 *   OUT.h          API: PREFIX_run, tensor descriptors, size macros
 *   OUT.c          one static function per node (views have none), the run function
 *   OUT_weights.c  the constant tensors: by default one 64-byte aligned blob,
 *                  an inline string when small, else OUT_weights.c.bin pulled in by
 *                  .incbin / #embed with OUT_weights.inc (a C array) as the fallback;
 *                  --weights c: a C array per tensor; --weights external: nothing,
 *                  the blob OUT_weights.bin is loaded by the application (PREFIX_init)
 *   OUT_main.c     (--main) the test program from runtime_min/ox_main.c
 * Node bodies come from the emit column of ir/ops.def. Everything is
 * emitted first (weights are streamed from the IR's tensors, never copied
 * whole); files are written only when every node emitted, each to a
 * temporary name renamed at the end, so an error leaves no partial output.
 * Output is deterministic: no time, no paths.
 */
#include "codegen.h"
#include "cg.h"
#include "cuda/cuda.h"
#include "weights.h"
#include "../opt/opt.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers for the driver ---- */

static void c_string(ox_buf *b, const char *s)
{
	ox_buf_puts(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			ox_buf_printf(b, "\\%c", c);
		else if (c < 32 || c >= 127 || c == '?')
			ox_buf_printf(b, "\\%03o", c);
		else
			ox_buf_printf(b, "%c", c);
	}
	ox_buf_puts(b, "\"");
}

/* ---- files ---- */
static int file_sink(void *ctx, const unsigned char *p, size_t n)
{
	return fwrite(p, 1, n, (FILE *)ctx) == n ? 0 : -1;
}

/* does tensor k of the inputs (what 0) or outputs have run-time dims in
 * some specialization (then its descriptor has a min_shape of its own)? */
static int desc_varies(ox_graph *const *gs, int ngs, int what, int k)
{
	for (int s = 0; s < ngs; s++) {
		ox_graph *g = gs[s];
		ox_value *v = &g->vals[what ? g->outputs[k] : g->inputs[k]];
		if (v->shape.rank && (ngs > 1 || ox_shape_is_rt(g, &v->shape)))
			return 1;
	}
	return 0;
}

/* Tensor descriptors of the graph inputs (what 0) or outputs (1): the
 * shape is the largest each dim takes over every specialization, min_shape
 * the least; numel and bytes are the largest. */
static void emit_desc(ox_buf *b, ox_graph *const *gs, int ngs, const char *prefix, int what)
{
	ox_graph *g0 = gs[0];
	int cnt = what ? g0->noutputs : g0->ninputs;
	const char *w = what ? "output" : "input";
	int64_t *numel = calloc((size_t)cnt + 1, sizeof *numel);
	for (int k = 0; k < cnt; k++) {
		ox_value *v0 = &g0->vals[what ? g0->outputs[k] : g0->inputs[k]];
		int64_t lo[OX_MAX_RANK], hi[OX_MAX_RANK];
		for (int s = 0; s < ngs; s++) {
			ox_graph *g = gs[s];
			ox_value *v = &g->vals[what ? g->outputs[k] : g->inputs[k]];
			int64_t m = ox_value_max_storage(g, v);
			if (v->layout == OX_L_PLAIN && ox_shape_is_rt(g, &v->shape)) {
				int64_t top = ox_shape_max_numel(g, &v->shape);
				m = v->cap > 0 && (top < 0 || v->cap < top) ? v->cap : top;
			} else {
				m = ox_shape_numel(&v->shape);
			}
			if (m > numel[k])
				numel[k] = m;
			for (int d = 0; d < v->shape.rank; d++) {
				int64_t l, h;
				if (ox_dim_range(g, v->shape.d[d], &l, &h))
					l = h = 0;
				if (!s || l < lo[d])
					lo[d] = l;
				if (!s || h > hi[d])
					hi[d] = h;
			}
		}
		if (!v0->shape.rank)
			continue;
		ox_buf_printf(b, "static const int64_t %s_%s%d_shape[%d] = {", prefix, w, k, v0->shape.rank);
		for (int d = 0; d < v0->shape.rank; d++)
			ox_buf_printf(b, "%s%lld", d ? ", " : "", (long long)hi[d]);
		ox_buf_puts(b, "};\n");
		if (desc_varies(gs, ngs, what, k)) {
			ox_buf_printf(b, "static const int64_t %s_%s%d_min_shape[%d] = {", prefix, w, k, v0->shape.rank);
			for (int d = 0; d < v0->shape.rank; d++)
				ox_buf_printf(b, "%s%lld", d ? ", " : "", (long long)lo[d]);
			ox_buf_puts(b, "};\n");
		}
	}
	ox_buf_printf(b, "const %s_tensor_desc %s_%ss[] = {\n", prefix, prefix, w);
	for (int k = 0; k < cnt; k++) {
		ox_value *v = &g0->vals[what ? g0->outputs[k] : g0->inputs[k]];
		int varies = desc_varies(gs, ngs, what, k);
		ox_buf_puts(b, "\t{");
		c_string(b, what ? g0->output_names[k] : v->name);
		if (v->shape.rank)
			ox_buf_printf(b, ", %d, %d, %s_%s%d_shape", v->dtype, v->shape.rank, prefix, w, k);
		else
			ox_buf_printf(b, ", %d, 0, NULL", v->dtype);
		ox_buf_printf(b, ", %lld, %lld, %d, ", (long long)numel[k],
			      (long long)(numel[k] * (int64_t)ox_dtype_size(v->dtype)), v->dyn - 1);
		if (!v->shape.rank)
			ox_buf_puts(b, "NULL},\n");
		else
			ox_buf_printf(b, "%s_%s%d_%sshape},\n", prefix, w, k, varies ? "min_" : "");
	}
	ox_buf_puts(b, "\t{NULL, 0, 0, NULL, 0, 0, -1, NULL},\n};\n\n");
	free(numel);
}

/* The ONNX inputs or outputs over the C tensors (a sequence is several);
 * without port tables (a graph that did not go through fold) one each. */
static void emit_ports(ox_buf *b, ox_graph *g, const char *prefix, const char *what, int nports,
		       const ox_port *ports, int cnt, const char *const *names, const ox_id *ids)
{
	ox_buf_printf(b, "const %s_port_desc %s_%s_ports[] = {\n", prefix, prefix, what);
	for (int k = 0; k < (ports ? nports : cnt); k++) {
		ox_buf_puts(b, "\t{");
		if (ports) {
			int kind = ports[k].agg == OX_AGG_SEQ ? 1 : ports[k].agg == OX_AGG_OPT ? 2 + ports[k].seq : 0;
			c_string(b, ports[k].name);
			ox_buf_printf(b, ", %d, %d, %d},\n", kind, ports[k].first, ports[k].n);
		} else {
			c_string(b, names ? names[k] : g->vals[ids[k]].name);
			ox_buf_printf(b, ", 0, %d, 1},\n", k);
		}
	}
	ox_buf_puts(b, "\t{NULL, 0, 0, 0},\n};\n\n");
}

static char *sibling(const char *out_c, const char *suffix)
{
	size_t n = strlen(out_c);
	const char *dot = strrchr(out_c, '.');
	const char *slash = strrchr(out_c, '/');
	if (dot && (!slash || dot > slash))
		n = (size_t)(dot - out_c);
	char *s = malloc(n + strlen(suffix) + 1);
	memcpy(s, out_c, n);
	strcpy(s + n, suffix);
	return s;
}

static const char *base_name(const char *path)
{
	return strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

/* Files are written to PATH.tmp and renamed only when all were written. */
typedef struct {
	char *path, *tmp;
} outfile;

static int open_tmp(outfile *f, const char *path, FILE **fp)
{
	f->path = strdup(path);
	f->tmp = malloc(strlen(path) + 8);
	sprintf(f->tmp, "%s.tmp", path);
	*fp = fopen(f->tmp, "wb");
	return *fp ? 0 : -1;
}

/* runtime_min/ox_rt.h into c, its functions of storage class st */
static void rt_header(ox_buf *c, const char *st)
{
	const char *key[] = {"OX_STATIC"}, *val[] = {st};
	ox_cg_substitute(c, ox_cg_template("runtime_min/ox_rt.h"), key, val, 1);
}

static int write_buf(outfile *f, const char *path, const ox_buf *b)
{
	FILE *fp;
	if (open_tmp(f, path, &fp))
		return -1;
	size_t w = fwrite(b->s ? b->s : "", 1, b->len, fp);
	return (fclose(fp) | (w != b->len)) ? -1 : 0;
}

/* head text, the blob through sink, tail text */
static int write_blob(outfile *f, const char *path, const char *head, size_t headlen, const wlayout *L,
		      sink_fn sink, const char *tail)
{
	FILE *fp;
	if (open_tmp(f, path, &fp))
		return -1;
	int rc = fwrite(head, 1, headlen, fp) != headlen;
	dec_state d = {fp, 0};
	if (!rc)
		rc = ox_w_walk(L, sink, sink == ox_w_dec_sink ? (void *)&d : (void *)fp);
	if (!rc && tail)
		rc = fputs(tail, fp) < 0;
	return (fclose(fp) | rc) ? -1 : 0;
}

/* blobs up to this size are a string literal inside OUT_weights.c */
#define INLINE_WEIGHTS 4096

static const char loader_text[] =
	"/* --weights external: before the first run this test program reads the\n"
	" * blob named by $ONNXCC_WEIGHTS, else BLOB_NAME beside this file (the\n"
	" * path it was compiled under), and passes it to PFX_init. */\n"
	"#ifndef _POSIX_C_SOURCE\n#define _POSIX_C_SOURCE 200809L\n#endif\n"
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"HEADER_NAME\"\n\n"
	"static int PFX_load_weights(void)\n{\n"
	"\tstatic void *blob;\n"
	"\tif (blob)\n\t\treturn 0;\n"
	"\tchar path[4096];\n"
	"\tconst char *env = getenv(\"ONNXCC_WEIGHTS\"), *f = __FILE__, *slash = strrchr(f, '/');\n"
	"\tif (env && *env)\n\t\tsnprintf(path, sizeof path, \"%s\", env);\n"
	"\telse\n\t\tsnprintf(path, sizeof path, \"%.*sBLOB_NAME\", slash ? (int)(slash - f + 1) : 0, f);\n"
	"\tFILE *fp = fopen(path, \"rb\");\n"
	"\tlong size = -1;\n"
	"\tif (fp && !fseek(fp, 0, SEEK_END))\n\t\tsize = ftell(fp);\n"
	"\tif (size >= 0 && !fseek(fp, 0, SEEK_SET) && (blob = malloc((size_t)size + 1)) &&\n"
	"\t    fread(blob, 1, (size_t)size, fp) != (size_t)size) {\n"
	"\t\tfree(blob);\n\t\tblob = NULL;\n\t}\n"
	"\tif (fp)\n\t\tfclose(fp);\n"
	"\tif (!blob) {\n"
	"\t\tfprintf(stderr, \"%s: cannot read the weights (set ONNXCC_WEIGHTS)\\n\", path);\n"
	"\t\treturn -1;\n\t}\n"
	"\tint rc = PFX_init(blob, (size_t)size);\n"
	"\tif (rc) {\n"
	"\t\tfprintf(stderr, \"%s: PFX_init failed with %d\\n\", path, rc);\n"
	"\t\tfree(blob);\n\t\tblob = NULL;\n\t}\n"
	"\treturn rc;\n}\n"
	"#ifndef OX_SHARED /* (the shared library's loader passes the blob: onnxcc_init_weights) */\n"
	"#define PFX_run(inputs, outputs) (PFX_load_weights() ? -1 : PFX_run(inputs, outputs))\n"
	"#define PFX_run_ex(a, i, o, e) (PFX_load_weights() ? -1 : PFX_run_ex(a, i, o, e))\n"
	"#define PFX_run_shaped(a, i, s, o, os) (PFX_load_weights() ? -1 : PFX_run_shaped(a, i, s, o, os))\n"
	"#ifdef PFXU_CUDA\n"
	"#define PFX_bench(i, s, n, ms) (PFX_load_weights() ? -1 : PFX_bench(i, s, n, ms))\n"
	"#define PFX_profile(i, s, n, ms) (PFX_load_weights() ? -1 : PFX_profile(i, s, n, ms))\n"
	"#endif\n#endif\n\n";

/* how many outputs of n have a run-time size */
static int ndyn_of(ox_graph *g, const ox_node *n)
{
	int c = 0;
	for (int k = 0; k < n->nout; k++)
		c += n->out[k] >= 0 && g->vals[n->out[k]].dyn;
	return c;
}
/* Does the C emitter take this node, whose values may have run-time dims?
 * Those that do not are listed as errors, all of them, by the caller. */
static int rt_refused(ox_graph *g, ox_node *n)
{
	if ((ox_ops[n->op].flags & OX_F_RT) || !ox_node_rt(g, n))
		return 0;
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id < 0 || !ox_shape_is_rt(g, &g->vals[id].shape))
			continue;
		char sh[256];
		ox_shape_str(g, &g->vals[id].shape, sh, sizeof sh);
		return ox_error(g, n, "%s %d '%s' has run-time dims (%s%s), which this op does not take in the C "
				"target yet: fix them with --shape or --dim", k < n->nin ? "input" : "output",
				k < n->nin ? k : k - n->nin, g->vals[id].name, ox_dtype_name(g->vals[id].dtype), sh);
	}
	return 0;
}

/* --target cuda: a host node (string tensors) copies its values between
 * the arena and pinned memory whole, so their sizes must be constant */
static int host_refused(ox_graph *g, ox_node *n)
{
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id < 0)
			continue;
		const ox_value *v = &g->vals[id];
		if (!v->has_shape || ox_shape_is_rt(g, &v->shape) || v->layout)
			return ox_error(g, n, "%s %d '%s': a string op's values need constant shapes in the CUDA target "
					"(it runs on the host on copies of them): fix them with --shape or --dim",
					k < n->nin ? "input" : "output", k < n->nin ? k : k - n->nin, v->name);
	}
	return 0;
}

/* does node n compute a data symbol (its outputs' dims read from data)? */
static int defines_dims(ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nout; k++) {
		ox_id id = n->out[k];
		if (id < 0)
			continue;
		const ox_value *v = &g->vals[id];
		for (int d = 0; d < v->shape.rank; d++) {

			if (ox_dim_defined_by(g, v->shape.d[d], id))
				return 1;
		}
	}
	return 0;
}

/* What one specialization (a planned graph) adds to the files. */
typedef struct {
	ox_buf nodes;   /* its node and task functions */
	ox_buf run;     /* the body of its run function */
	ox_buf finfo;   /* its rows of PREFIX_funcs[] */
	ox_buf host;    /* --target cuda: the host functions that launch its kernels */
	int nfuncs, nviews, ndyn, nfail, nindex, nunsup, nshape, nany, errors;
	int ndims;      /* --target cuda: nodes that compute dims from data (the
			   run reads them back: no CUDA Graph) */
	int nserial;    /* --target cuda: nodes run by one device thread */
	int ntasks;     /* --target cuda: nodes run as the C target's tasks */
	int nhost;      /* --target cuda: nodes run on the host (string tensors) */
	ox_buf slow;    /* --target cuda: those nodes, for --report */
} spec_out;

/* --target cuda: the launch of host node n, whose C function fname is host
 * code (cg->cu_hkernels, namespace ox_host). In stream order: the run's
 * status and the node's inputs are copied into its pinned staging (ox_cu_H
 * from a 64-byte offset of its own), a host function (cudaLaunchHostFunc;
 * a host node of a CUDA Graph) runs it there unless the run has failed
 * already (its pointers could then be anything), and its outputs and the
 * status (errc when it fails: NULL, it cannot) are copied back, and the
 * extent of an output whose length the data sets (v->dyn) into the
 * device's (ox_dext, read back after the run). A scratch
 * output, the bytes of the new strings, stays there: the pointers the
 * outputs carry point into it, and it lives until the next run. */
static int64_t host_bytes(ox_graph *g, ox_id id)
{
	return id < 0 ? 0 : ox_value_max_storage(g, &g->vals[id]) * (int64_t)ox_dtype_size(g->vals[id].dtype);
}

static int emit_host_node(ox_cg *cg, ox_graph *g, ox_node *n, spec_out *so, const char *fname, const char *errc)
{
	const wlayout *L = cg->wl;
	if (ox_cg_uses_name(cg->body.s, "ox_d"))
		return ox_error(g, n, "a string op that reads run-time dims is not supported by the CUDA target");
	int nv = n->nin + n->nout;
	/* o[k]: value k's offset; then each output's extent's (v->dyn) */
	int64_t *o = calloc((size_t)(nv + n->nout) + 1, sizeof *o), at = 64; /* (the status word first) */
	for (int k = 0; k < nv + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[(k - n->nin) % n->nout];
		o[k] = -1;
		if (id < 0 || (k >= nv && !g->vals[id].dyn))
			continue;
		o[k] = at;
		at += k >= nv ? 64 : (host_bytes(g, id) + 63) / 64 * 64;
	}
	int64_t base = cg->cu_hbytes;
	cg->cu_hbytes += at;
	ox_buf *h = &so->host, *run = &so->run;
	ox_buf_printf(h, "static void CUDART_CB %s_h(void *p)\n{\n\tunsigned char *H = (unsigned char *)p;\n"
			 "\tif (*(int *)H)\n\t\treturn; /* the run has failed */\n\t", fname);
	ox_buf_printf(h, "%sox_host::%s(", errc ? "int rc = " : "", fname);
	for (int k = 0; k < nv; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id < 0)
			ox_buf_printf(h, "%snullptr", k ? ", " : "");
		else
			ox_buf_printf(h, "%s(%s%s *)(H + %lld)", k ? ", " : "", k < n->nin ? "const " : "",
				      ox_cg_ctype(g->vals[id].dtype), (long long)o[k]);
	}
	for (int k = 0; k < n->nout; k++)
		if (o[nv + k] >= 0)
			ox_buf_printf(h, ", (int64_t *)(H + %lld)", (long long)o[nv + k]);
	ox_buf_puts(h, ");\n");
	if (errc)
		ox_buf_printf(h, "\tif (rc)\n\t\t*(int *)H = %s;\n", errc);
	ox_buf_puts(h, "}\n\n");
	ox_buf_printf(run, "\t{\n\t\t/* on the host, in stream order, on copies in pinned memory */\n"
			   "\t\tunsigned char *H = ox_cu_H + %lld;\n"
			   "\t\tcudaMemcpyAsync(H, ox_status, sizeof(int), cudaMemcpyDeviceToHost, ox_st);\n",
		      (long long)base);
	char pb[256];
	for (int k = 0; k < n->nin; k++) {
		ox_id id = n->in[k];
		int64_t bytes = host_bytes(g, id);
		if (bytes > 0)
			ox_buf_printf(run, "\t\tcudaMemcpyAsync(H + %lld, %s, %lld, cudaMemcpyDeviceToHost, ox_st);\n",
				      (long long)o[k], ox_w_vptr(g, id, 1, pb, sizeof pb, L), (long long)bytes);
	}
	ox_buf_printf(run, "\t\tcudaLaunchHostFunc(ox_st, %s_h, H);\n", fname);
	for (int k = 0; k < n->nout; k++) {
		ox_id id = n->out[k];
		int64_t bytes = host_bytes(g, id);
		if (bytes > 0 && !(n->scratch && k == n->nout - 1))
			ox_buf_printf(run, "\t\tcudaMemcpyAsync(%s, H + %lld, %lld, cudaMemcpyHostToDevice, ox_st);\n",
				      ox_w_vptr(g, id, 0, pb, sizeof pb, L), (long long)o[n->nin + k], (long long)bytes);
		if (o[nv + k] >= 0) {
			int j = 0; /* (ox_dext: the graph outputs' extents, then a spare) */
			while (j < g->noutputs && g->outputs[j] != id)
				j++;
			ox_buf_printf(run, "\t\tcudaMemcpyAsync(ox_dext + %d, H + %lld, sizeof(int64_t), cudaMemcpyHostToDevice, ox_st);\n",
				      j, (long long)o[nv + k]);
		}
	}
	if (errc)
		ox_buf_puts(run, "\t\tcudaMemcpyAsync(ox_status, H, sizeof(int), cudaMemcpyHostToDevice, ox_st);\n");
	ox_buf_puts(run, "\t}\n");
	free(o);
	return 0;
}

/* The node functions of specialization s and the calls of its run
 * function. fpre prefixes the function names ("" for a program of one
 * specialization); funcs0 is the index of its first function in
 * PREFIX_funcs[]. */
static void emit_spec(ox_cg *cg, const char *fpre, int funcs0, spec_out *so)
{
	const wlayout *L = cg->wl;
	int prof = funcs0 >= 0; /* a body's nodes are not profiled one by one */
	ox_graph *g = cg->g;
	const char *PU = cg->prefix_upper;
	ox_buf *run = &so->run, *finfo = &so->finfo;
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		/* string tensors: only emitters flagged OX_F_STRINGS handle them
		 * (views of them need no code); --target cuda runs those nodes on
		 * the host (hostn), their values' pointers copied in and out */
		const int noop = ox_plan_is_noop(g, n);
		int strs = 0, hostn = 0;
		for (int k = 0; k < n->nin + n->nout && !noop; k++) {
			ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
			strs |= id >= 0 && g->vals[id].dtype == OX_STRING;
		}
		if (strs && (!(ox_ops[n->op].flags & OX_F_STRINGS) || cg->dev)) {
			so->errors++;
			ox_error(g, n, cg->dev ? "string tensors in a body run by one device thread are not supported by the CUDA target"
			       : cg->cuda ? "string tensors are not supported by this op in the CUDA target"
					  : "string tensors are not supported by this op in the C target");
			continue;
		}
		if (strs && cg->cuda) {
			hostn = 1;
			if (host_refused(g, n)) {
				so->errors++;
				continue;
			}
		}
		if (rt_refused(g, n)) {
			so->errors++;
			continue;
		}
		if (noop && !defines_dims(g, n)) {
			/* a view, or a Concat whose inputs were written in place (opt/plan.c) */
			ox_buf_printf(run, "\t/* node %d: %s \"", i, n->optype);
			ox_cg_comment_safe(run, n->name);
			ox_buf_printf(run, "\" %s: no code */\n",
				      n->op == OX_OP_Concat ? "was written in place by its inputs" : "is a view");
			so->nviews++;
			continue;
		}
		cg->body.len = 0;
		if (cg->body.s)
			cg->body.s[0] = 0;
		cg->can_fail = 0;
		cg->fails_shape = 0;
		cg->nregions = 0;
		cg->dims_only = noop;
		cg->fails_any = 0;
		cg->cu_rc = cg->cu_sync = 0;
		char fname[160];
		ox_cg_snprintf(fname, sizeof fname, "%snode%d_%s", fpre, i, ox_ops[n->op].name);
		cg->fname = fname;
		/* --target cuda: a kernel of codegen/cuda/cuda_*.c (host code that
		 * launches it), else the C emitter's function on the device */
		int native = cg->cuda && !hostn ? ox_cu_emit(cg, g, n) : 1;
		cg->cu_host = hostn;
		if (native < 0 || (native && ox_cg_emit_op(cg, g, n))) {
			cg->cu_host = 0;
			so->errors++;
			continue;
		}
		cg->cu_host = 0;
		native = !native;
		/* the node's C function: host code for a host node */
		ox_buf hfn = {0}, *nodes = hostn ? &hfn : &so->nodes;
		const char *fn_static = hostn ? "static" : ox_cg_static(cg);
		so->nfuncs++;
		int fk = funcs0 + so->nfuncs - 1;
		ox_buf_printf(nodes, "/* node %d: %s \"", i, n->optype);
		ox_cg_comment_safe(nodes, n->name);
		const ox_attr *fu = ox_attr_get(n, "ox_fused");
		if (noop) {
			ox_buf_puts(nodes, "\": a view; computes the dims it reads from data */\n");
		} else if (fu && fu->type == OX_AT_STRINGS && fu->n > 1) {
			/* the ONNX nodes a fused node computes */
			ox_buf_printf(nodes, "\": %d ONNX nodes fused:", fu->n);
			for (int k = 0; k < fu->n; k++) {
				ox_buf_puts(nodes, k % 3 == 0 ? "\n *   " : ", ");
				ox_cg_comment_safe(nodes, fu->strs[k]);
			}
			ox_buf_puts(nodes, "\n */\n");
		} else {
			ox_buf_puts(nodes, "\" */\n");
		}
		if (cg->nregions > 0 && (cg->can_fail || cg->fails_shape || ndyn_of(g, n)))
			ox_die("codegen: node %d: parallel tasks with a run-time size or a failure", i);
		so->nfail += cg->can_fail == OX_CG_FAIL_CAPACITY;
		so->nindex += cg->can_fail == OX_CG_FAIL_INDEX;
		so->nunsup += cg->can_fail == OX_CG_FAIL_UNSUPPORTED;
		so->nshape += cg->fails_shape;
		so->nany += cg->fails_any;
		int fails = cg->can_fail || cg->fails_shape || cg->fails_any;
		const char *kind = cg->can_fail == OX_CG_FAIL_INDEX		? "INDEX"
				   : cg->can_fail == OX_CG_FAIL_UNSUPPORTED ? "UNSUPPORTED"
									    : "CAPACITY";
		/* the parameters: D when the body reads run-time dims, one pointer
		 * per input and output, then extents */
		int usesD = ox_cg_uses_name(cg->body.s, "ox_d");
		for (int r = 0; r < cg->nregions; r++) /* a run-time count of tasks */
			usesD |= ox_dim_is_rt(g, cg->region_n[r]);
		ox_buf params = {0}, pack = {0}, args = {0}, dpack = {0}, xparams = {0}, xargs = {0};
		if (usesD) {
			ox_buf_puts(&params, "int64_t *ox_d");
			ox_buf_puts(&args, cg->cuda && !native ? "ox_dd" : "ox_d");
		}
		int first = 1;
		for (int k = 0; k < n->nin + n->nout; k++) {
			int isin = k < n->nin;
			ox_id id = isin ? n->in[k] : n->out[k - n->nin];
			const char *sep = usesD || k ? ", " : "";
			const char *type = id < 0 ? "void" : ox_cg_ctype(g->vals[id].dtype);
			char pb[256], pname[32];
			ox_cg_snprintf(pname, sizeof pname, "%s%d", isin ? "in" : "out", isin ? k : k - n->nin);
			/* a view that computes dims (noop) writes no element: its
			 * output may be a graph input's storage */
			ox_buf_printf(&params, "%s%s%s *%s", sep, isin || noop ? "const " : "", type, pname);
			const char *null = cg->cuda ? "nullptr" : "NULL";
			ox_buf_printf(&args, "%s%s", sep, id < 0 ? null : ox_w_vptr(g, id, isin || noop, pb, sizeof pb, L));
			ox_buf_printf(&xparams, ", %s%s *%s", isin || noop ? "const " : "", type, pname);
			ox_buf_printf(&xargs, ", %s", id < 0 ? null : pb);
			ox_buf_printf(&pack, "%s(void *)%s", k ? ", " : "", pname);
			first = 0;
		}
		/* a native node's launches that pass the device's dims, the
		 * extents, the weights (a control node's bodies) */
		static const char *const dev_names[][3] = {{"ox_dd", "int64_t *", "ox_dd"},
							   {"ox_dext", "int64_t *", "ox_dext"},
							   {"ox_w", "const unsigned char *", "W"}};
		for (int k = 0; k < 3; k++)
			if (cg->cuda && native && ox_cg_uses_name(cg->body.s, dev_names[k][0])) {
				ox_buf_printf(&params, "%s%s%s", params.len ? ", " : "", dev_names[k][1], dev_names[k][0]);
				ox_buf_printf(&args, "%s%s", args.len ? ", " : "", dev_names[k][2]);
			}
		ox_buf_puts(&dpack, pack.s ? pack.s : "");
		if (usesD) {
			ox_buf_printf(&pack, "%s(void *)ox_d", first ? "" : ", ");
			ox_buf_printf(&dpack, "%s(void *)ox_dd", first ? "" : ", ");
		}
		/* a run-time extent (v->dyn): the node reports it through extK */
		for (int k = 0; k < n->nout; k++) {
			ox_id id = n->out[k];
			if (id < 0 || !g->vals[id].dyn)
				continue;
			int j = 0;
			while (j < g->noutputs && g->outputs[j] != id)
				j++;
			ox_buf_printf(&params, ", int64_t *ext%d", k);
			if (cg->cuda) /* the device's copy (ox_dext: graph outputs, then a spare) */
				ox_buf_printf(&args, ", ox_dext + %d", j < g->noutputs ? j : g->noutputs);
			else if (j < g->noutputs)
				ox_buf_printf(&args, ", &ext[%d]", j);
			else
				ox_buf_puts(&args, ", &ext_unused");
			so->ndyn++;
		}
		if (n->nin + n->nout == 0 && !usesD)
			ox_buf_puts(&params, "void");
		if (prof)
			ox_buf_printf(run, "\tOX_PROF(%d, 0);\n", fk);
		/* what a failing node makes the run return */
		char errc[128] = "";
		if (cg->fails_any)
			ox_cg_snprintf(errc, sizeof errc, "rc");
		else if (cg->can_fail && cg->fails_shape)
			ox_cg_snprintf(errc, sizeof errc, "rc == 2 ? %s_ERR_SHAPE : %s_ERR_%s", PU, PU, kind);
		else if (fails)
			ox_cg_snprintf(errc, sizeof errc, "%s_ERR_%s", PU, cg->fails_shape ? "SHAPE" : kind);
		if (cg->cuda && native) {
			/* a host function that launches the node's kernels; one that
			 * can fail gets the run's status word, which its kernels set
			 * (the run goes on: PREFIX_sync returns the code) */
			ox_buf_printf(&so->host, "static %s %s(cudaStream_t ox_st%s%s%s)\n{\n%s}\n\n", cg->cu_rc ? "int" : "void",
				      fname, fails ? ", int *ox_status" : "", params.s && strcmp(params.s, "void") ? ", " : "",
				      params.s && strcmp(params.s, "void") ? params.s : "", cg->body.s ? cg->body.s : "");
			ox_buf_printf(run, "\t%s%s(ox_st%s%s%s)%s;\n", cg->cu_rc ? "if ((rc = " : "", fname,
				      fails ? ", ox_status" : "", args.s ? ", " : "", args.s ? args.s : "",
				      cg->cu_rc ? "))\n\t\treturn rc" : "");
			so->ndims += cg->cu_sync; /* (a wait: no CUDA Graph) */
			/* a control node's bodies: their nodes without a parallel kernel */
			so->nserial += cg->cu_bserial, so->ntasks += cg->cu_btasks, so->nhost += cg->cu_bhost;
			if (cg->cu_bslow.len)
				ox_buf_printf(&so->slow, "%s%s", so->slow.len ? ", " : "", cg->cu_bslow.s);
			cg->cu_bserial = cg->cu_btasks = cg->cu_bhost = 0;
			ox_buf_free(&cg->cu_bslow);
		} else if (hostn) {
			so->nhost++;
			ox_buf_printf(&so->slow, "%s%s (%s, on the host)", so->slow.len ? ", " : "", n->name, n->optype);
			if (emit_host_node(cg, g, n, so, fname, fails ? errc : NULL))
				so->errors++;
		} else if (cg->cuda && cg->nregions > 0 && !fails && ox_cu_blank(cg->body.s, cg->region_at[0])) {
			/* independent tasks: one device thread each */
			so->ntasks++;
			ox_buf_printf(&so->slow, "%s%s (%s, a thread per task)", so->slow.len ? ", " : "", n->name, n->optype);
			for (int r = 0; r < cg->nregions; r++)
				ox_buf_printf(&so->host, "__global__ void %s_task%.0d_k(ox_ptrs p, long n)\n{\n"
						     "\tlong t = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
						     "\tif (t < n)\n\t\t%s_task%.0d((void *)p.p, t, t + 1);\n}\n\n",
					      fname, r, fname, r);
			ox_buf_printf(&so->host, "static void %s_launch(cudaStream_t ox_st, int64_t *ox_d, int64_t *ox_dd%s)\n{\n",
				      fname, xparams.s ? xparams.s : "");
			ox_buf_printf(&so->host, "\tox_ptrs p = {{%s}};\n\tlong n;\n\t(void)ox_d, (void)ox_dd;\n", dpack.s ? dpack.s : "0");
			for (int r = 0; r < cg->nregions; r++)
				ox_buf_printf(&so->host, "\tn = %s;\n\tif (n > 0)\n\t\tOX_LAUNCH(%s_task%.0d_k, (unsigned)((n + 127) / 128), 128, 0, ox_st, p, n);\n",
					      ox_cg_dim(cg, cg->region_n[r]), fname, r);
			ox_buf_puts(&so->host, "}\n\n");
			ox_buf_printf(run, "\t%s_launch(ox_st, ox_d, ox_dd%s);\n", fname, xargs.s ? xargs.s : "");
		} else if (cg->cuda) {
			/* one device thread runs the node's C function */
			so->nserial++;
			ox_buf_printf(&so->slow, "%s%s (%s, one thread)", so->slow.len ? ", " : "", n->name, n->optype);
			ox_buf_printf(&so->host, "__global__ void %s_k(int *ox_status%s%s)\n{\n\tif (*ox_status)\n\t\treturn;\n",
				      fname, params.s && strcmp(params.s, "void") ? ", " : "",
				      params.s && strcmp(params.s, "void") ? params.s : "");
			ox_buf_printf(&so->host, "\t%s%s(", fails ? "int rc = " : "", fname);
			ox_buf_puts(&so->host, usesD ? "ox_d" : "");
			for (int k = 0; k < n->nin + n->nout; k++)
				ox_buf_printf(&so->host, "%s%s%d", usesD || k ? ", " : "", k < n->nin ? "in" : "out",
					      k < n->nin ? k : k - n->nin);
			for (int k = 0; k < n->nout; k++)
				if (n->out[k] >= 0 && g->vals[n->out[k]].dyn)
					ox_buf_printf(&so->host, ", ext%d", k);
			ox_buf_puts(&so->host, ");\n");
			if (fails)
				ox_buf_printf(&so->host, "\tif (rc)\n\t\t*ox_status = %s;\n", errc);
			ox_buf_puts(&so->host, "}\n\n");
			ox_buf_printf(run, "\tOX_LAUNCH(%s_k, 1, 1, 0, ox_st, ox_status%s%s);\n", fname, args.s ? ", " : "",
				      args.s ? args.s : "");
			if (defines_dims(g, n) || fails) {
				/* the dims it computed, or its failure, before the next node */
				so->ndims++;
				ox_buf_puts(run, "\tif ((rc = ox_sync_dims(ox_st)))\n\t\treturn rc;\n");
			}
		} else {
			ox_buf_printf(run, "\t%s%s(%s", !fails ? "" : (cg->can_fail && cg->fails_shape) || cg->fails_any ? "if ((rc = " : "if (",
				      fname, args.s ? args.s : "");
			if (cg->fails_any)
				ox_buf_puts(run, ")))\n\t\treturn rc;\n");
			else if (cg->can_fail && cg->fails_shape)
				ox_buf_printf(run, ")))\n\t\treturn %s;\n", errc);
			else if (fails)
				ox_buf_printf(run, "))\n\t\treturn %s;\n", errc);
			else
				ox_buf_puts(run, ");\n");
		}
		int cxx = cg->cuda || cg->dev;
		if (!native) { /* the node's C function (on the device with --target cuda) */
			/* regions of tasks: a task function each; small nodes (less than a
			 * megaflop and 128 KB written, at their largest) call them
			 * directly, the hand-off to threads would cost more than it saves */
			int serial = ox_ir_flops(g, n) < 1000000;
			for (int k = 0; k < n->nout && serial; k++)
				if (n->out[k] >= 0 && !(n->scratch && k == n->nout - 1))
					serial = ox_value_max_storage(g, &g->vals[n->out[k]]) *
							 (int64_t)ox_dtype_size(g->vals[n->out[k]].dtype) <
						 (128 << 10);
			serial |= hostn; /* (no thread pool in a .cu) */
			for (int r = 0; r < cg->nregions; r++) {
				size_t from = cg->region_at[r], to = r + 1 < cg->nregions ? cg->region_at[r + 1] : cg->body.len;
				char *text = strndup(cg->body.s + from, to - from);
				ox_buf_printf(nodes, "%s void %s_task%.0d(void *ctx, long t0, long t1)\n{\n", fn_static, fname, r);
				/* (C++ for the CUDA target: the casts) */
				ox_buf_puts(nodes, cxx ? "\tvoid *const *p = (void *const *)ctx;\n" : "\tvoid *const *p = ctx;\n");
				for (int k = 0; k < n->nin + n->nout; k++) {
					int isin = k < n->nin;
					ox_id id = isin ? n->in[k] : n->out[k - n->nin];
					char pname[32];
					ox_cg_snprintf(pname, sizeof pname, "%s%d", isin ? "in" : "out", isin ? k : k - n->nin);
					if (ox_cg_uses_name(text, pname))
						ox_buf_printf(nodes, "\t%s%s *%s = %s%s%s%sp[%d];\n", isin ? "const " : "",
							      id < 0 ? "void" : ox_cg_ctype(g->vals[id].dtype), pname,
							      cxx ? "(" : "", cxx && isin ? "const " : "",
							      cxx ? (id < 0 ? "void" : ox_cg_ctype(g->vals[id].dtype)) : "", cxx ? " *)" : "", k);
				}
				if (usesD && ox_cg_uses_name(text, "ox_d"))
					ox_buf_printf(nodes, "\tint64_t *ox_d = %sp[%d];\n", cxx ? "(int64_t *)" : "", n->nin + n->nout);
				ox_buf_puts(nodes, "\tfor (long t = t0; t < t1; t++) {\n");
				ox_buf_lines(nodes, 1, text);
				ox_buf_puts(nodes, "\t}\n}\n\n");
				free(text);
			}
			ox_buf_printf(nodes, "%s %s %s(%s)\n{\n", fn_static, fails ? "int" : "void", fname, params.s);
			if (cg->nregions > 0) {
				ox_buf_printf(nodes, "%.*s", (int)cg->region_at[0], cg->body.s);
				ox_buf_printf(nodes, "\tvoid *p[] = {%s};\n", pack.s);
				for (int r = 0; r < cg->nregions; r++) {
					const char *cnt = ox_cg_dim(cg, cg->region_n[r]);
					if (serial)
						ox_buf_printf(nodes, "\t%s_task%.0d(p, 0, %s);\n", fname, r, cnt);
					else
						ox_buf_printf(nodes, "\tox_parallel(%s_task%.0d, p, %s);\n", fname, r, cnt);
				}
			} else {
				for (int k = 0; k < n->nin + n->nout; k++) {
					char pname[32];
					ox_cg_snprintf(pname, sizeof pname, "%s%d", k < n->nin ? "in" : "out",
						 k < n->nin ? k : k - n->nin);
					if (!ox_cg_uses_name(cg->body.s, pname))
						ox_buf_printf(nodes, "\t(void)%s;\n", pname);
				}
				ox_buf_puts(nodes, cg->body.s ? cg->body.s : "");
			}
			if (fails)
				ox_buf_puts(nodes, "\treturn 0;\n");
			ox_buf_puts(nodes, "}\n\n");
		}
		if (hostn)
			ox_buf_puts(&cg->cu_hkernels, hfn.s);
		ox_buf_free(&hfn);
		if (prof)
			ox_buf_printf(run, "\tOX_PROF(%d, 1);\n", fk);
		/* the profiler's table: function name, the ONNX nodes, flops */
		if (prof) {
			ox_buf_printf(finfo, "\t{\"%s\", ", fname);
			/* its ONNX nodes, joined with " + " */
			const ox_attr *fa = ox_attr_get(n, "ox_fused");
			ox_buf names = {0};
			if (fa && fa->type == OX_AT_STRINGS && fa->n > 1)
				for (int k = 0; k < fa->n; k++)
					ox_buf_printf(&names, "%s%s", k ? " + " : "", fa->strs[k]);
			c_string(finfo, names.s ? names.s : n->name);
			ox_buf_free(&names);
			ox_buf_printf(finfo, ", %lld},\n", (long long)ox_ir_flops(g, n));
		}
		ox_buf_free(&params), ox_buf_free(&pack), ox_buf_free(&args), ox_buf_free(&dpack);
		ox_buf_free(&xparams), ox_buf_free(&xargs);
	}
	if (so->errors)
		return;
	if (cg->cuda && so->ndyn) /* the extents, before the output shapes read them */
		ox_buf_puts(run, "\tif ((rc = ox_sync_dims(ox_st)))\n\t\treturn rc;\n");
	/* the outputs: copied out of the arena, their run-time shapes reported */
	for (int k = 0; k < g->noutputs; k++) {
		ox_id id = g->outputs[k];
		ox_value *v = &g->vals[id];
		char pb[256];
		if (v->dtype == OX_STRING) /* pointers: the target's size, not the 8-byte slot */
			ox_buf_printf(run, "\t%s(outputs[%d], %s, %s * sizeof(ox_str)%s);\n", cg->cuda ? "cudaMemcpyAsync" : "memcpy",
				      k, ox_w_vptr(g, id, 1, pb, sizeof pb, L), ox_cg_numel(cg, &v->shape),
				      cg->cuda ? ", cudaMemcpyDeviceToDevice, ox_st" : "");
		else if (ox_shape_is_rt(g, &v->shape))
			ox_buf_printf(run, "\t%s(outputs[%d], %s, (size_t)%s * %zu%s);\n", cg->cuda ? "cudaMemcpyAsync" : "memcpy", k,
				      ox_w_vptr(g, id, 1, pb, sizeof pb, L), ox_cg_numel(cg, &v->shape),
				      ox_dtype_size(v->dtype), cg->cuda ? ", cudaMemcpyDeviceToDevice, ox_st" : "");
		else
			ox_buf_printf(run, "\t%s(outputs[%d], %s, %zu%s);\n", cg->cuda ? "cudaMemcpyAsync" : "memcpy", k,
				      ox_w_vptr(g, id, 1, pb, sizeof pb, L),
				      (size_t)ox_shape_numel(&v->shape) * ox_dtype_size(v->dtype),
				      cg->cuda ? ", cudaMemcpyDeviceToDevice, ox_st" : "");
		if (!v->shape.rank)
			continue;
		ox_buf_printf(run, "\tif (out_shapes && out_shapes[%d]) {\n", k);
		for (int d = 0; d < v->shape.rank; d++) {
			if (v->dyn == d + 1)
				ox_buf_printf(run, "\t\tout_shapes[%d][%d] = ext[%d];\n", k, d, k);
			else
				ox_buf_printf(run, "\t\tout_shapes[%d][%d] = %s;\n", k, d, ox_cg_dim(cg, v->shape.d[d]));
		}
		ox_buf_puts(run, "\t}\n");
	}
}

int ox_cg_emit_body(ox_cg *cg, ox_graph *body, const char *name, int cu, int *syncs)
{
	/* a child emitter that shares the kernels, helpers and slots (cu: and
	 * the bodies' host code); without cu under --target cuda, the body is
	 * C run by one device thread */
	ox_cg child = *cg;
	memset(&child.body, 0, sizeof child.body);
	memset(&child.cu_bslow, 0, sizeof child.cu_bslow);
	child.cu_bserial = child.cu_btasks = child.cu_bhost = 0;
	child.g = body;
	if (!cu) {
		child.dev |= cg->cuda;
		child.cuda = 0;
	}
	spec_out so;
	memset(&so, 0, sizeof so);
	char fpre[200];
	ox_cg_snprintf(fpre, sizeof fpre, "%s_", name);
	emit_spec(&child, fpre, -1, &so);
	if (!so.errors && !cu) {
		const wlayout *L = cg->wl;
		ox_buf t = {0};
		ox_buf_puts(&t, so.nodes.s ? so.nodes.s : "");
		ox_buf_printf(&t, "/* the body %s */\n", body->name ? body->name : "");
		ox_buf_printf(&t, "static int %s(unsigned char *A, int64_t *ox_d, const void *const *inputs,\n"
				  "\t\tvoid *const *outputs, int64_t *const *out_shapes)\n{\n", name);
		ox_buf_printf(&t, "\tint64_t ext[%d], ext_unused = 0;\n\tint rc = 0;\n", body->noutputs + 1);
		if (cg->cuda || cg->dev) /* the device's copy (codegen/cuda/cuda.c) */
			ox_buf_puts(&t, "\tconst unsigned char *W = ox_dev_W;\n\t(void)W;\n");
		else if (L->mode == OX_CG_WEIGHTS_EMBED)
			ox_buf_printf(&t, "\tconst unsigned char *W = %s_weights;\n\t(void)W;\n", cg->prefix);
		else if (L->mode == OX_CG_WEIGHTS_EXTERNAL)
			ox_buf_printf(&t, "\tconst unsigned char *W = %s_W;\n\t(void)W;\n", cg->prefix);
		ox_buf_puts(&t, "\t(void)A, (void)ox_d, (void)inputs, (void)out_shapes, (void)ext, (void)ext_unused, (void)rc;\n");
		ox_buf_puts(&t, so.run.s ? so.run.s : "");
		ox_buf_puts(&t, "\treturn 0;\n}\n");
		ox_cg_helper(&child, name, t.s);
		ox_buf_free(&t);
	} else if (!so.errors) {
		/* the top level's form: its nodes' C functions on the device, the
		 * launches and the run function on the host */
		char key[240];
		ox_cg_snprintf(key, sizeof key, "%s/nodes", name);
		if (so.nodes.len)
			ox_cg_helper(&child, key, so.nodes.s);
		ox_buf *t = &child.cu_bodies;
		ox_buf_puts(t, so.host.s ? so.host.s : "");
		ox_buf_printf(t, "/* the body %s, on the host */\n", body->name ? body->name : "");
		ox_buf_printf(t, "static int %s(unsigned char *A, int64_t *ox_d, int64_t *ox_dd, int64_t *ox_dext, int *ox_status,\n"
				 "\t\tconst unsigned char *W, const void *const *inputs, void *const *outputs,\n"
				 "\t\tint64_t *const *out_shapes, cudaStream_t ox_st)\n{\n", name);
		const char *rt = so.run.s ? so.run.s : "";
		if (ox_cg_uses_name(rt, "rc"))
			ox_buf_puts(t, "\tint rc = 0;\n");
		ox_buf_puts(t, "\t(void)A, (void)ox_d, (void)ox_dd, (void)ox_dext, (void)ox_status, (void)W, (void)inputs, "
			       "(void)outputs, (void)out_shapes;\n");
		ox_buf_puts(t, rt);
		ox_buf_puts(t, "\treturn 0;\n}\n\n");
		*syncs = so.ndims > 0 || so.ndyn > 0;
	}
	/* hand the shared state back, and the bodies' counts for --report */
	cg->kernels = child.kernels;
	cg->used = child.used, cg->nused = child.nused;
	cg->interned = child.interned, cg->ninterned = child.ninterned;
	cg->texts = child.texts, cg->ntexts = child.ntexts;
	cg->cu_bodies = child.cu_bodies;
	cg->cu_hkernels = child.cu_hkernels, cg->cu_hbytes = child.cu_hbytes;
	cg->cu_ws = child.cu_ws, cg->cu_ctr = child.cu_ctr;
	cg->cu_bserial += so.nserial + child.cu_bserial, cg->cu_btasks += so.ntasks + child.cu_btasks;
	cg->cu_bhost += so.nhost + child.cu_bhost;
	if (so.slow.len)
		ox_buf_printf(&cg->cu_bslow, "%s%s", cg->cu_bslow.len ? ", " : "", so.slow.s);
	ox_buf_free(&child.body), ox_buf_free(&child.cu_bslow);
	ox_buf_free(&so.nodes), ox_buf_free(&so.run), ox_buf_free(&so.finfo), ox_buf_free(&so.host), ox_buf_free(&so.slow);
	return so.errors ? -1 : 0;
}

/* Specialization s's prologue: ox_d[] from the input shapes, 0 when every
 * input dim is in s's ranges (and equal to what the others imply), -1 not. */
static int emit_dims_fn(ox_buf *c, ox_cg *cg, const char *P, int s)
{
	ox_graph *g = cg->g;
	char *set = calloc((size_t)cg->nslots + 1, 1);
	ox_buf_printf(c, "/* specialization %d: the run-time dims from the input shapes, 0 when they\n"
			 " * are in its ranges */\n", s);
	ox_buf_printf(c, "static int %s_dims%d(const int64_t *const *shapes, int64_t *ox_d)\n{\n", P, s);
	int any = 0, usesd = 0;
	for (int k = 0; k < g->ninputs; k++) {
		const ox_value *v = &g->vals[g->inputs[k]];
		for (int d = 0; d < v->shape.rank; d++) {
			ox_dim x = v->shape.d[d];
			int sl = ox_cg_dim_slot(cg, x);
			any = 1;
			if (sl >= 0 && !set[sl]) {
				const ox_dexpr *e = ox_dim_rtsym(g, x);
				set[sl] = 1;
				usesd = 1;
				ox_buf_printf(c, "\tox_d[%d] = shapes[%d][%d]; /* ", sl, k, d);
				ox_cg_comment_safe(c, e->sym);
				ox_buf_puts(c, " */\n");
				ox_buf_printf(c, "\tif (ox_d[%d] < %lld || ox_d[%d] > %lld)\n\t\treturn -1;\n", sl,
					      (long long)e->lo, sl, (long long)e->hi);
				continue;
			}
			/* a constant or a dim the inputs before gave: must agree */
			const char *e = ox_cg_dim(cg, x);
			for (int j = 0; j < cg->nslots; j++) {
				char key[32];
				ox_cg_snprintf(key, sizeof key, "ox_d[%d]", j);
				if (!set[j] && strstr(e, key)) {
					free(set);
					return ox_error(g, NULL, "input '%s' dim %d is an expression of run-time dims that no "
							"input dim gives alone: give those a range (--dim)", v->name, d);
				}
			}
			ox_buf_printf(c, "\tif (shapes[%d][%d] != %s)\n\t\treturn -1;\n", k, d, e);
			usesd |= strstr(e, "ox_d[") != NULL;
		}
	}
	if (!any)
		ox_buf_puts(c, "\t(void)shapes;\n");
	if (!usesd) /* no run-time dim, or only those that nodes read from data */
		ox_buf_puts(c, "\t(void)ox_d;\n");
	ox_buf_puts(c, "\treturn 0;\n}\n\n");
	free(set);
	return 0;
}

/* PREFIX_funcs[]: each generated function's name, ONNX nodes and flops */
static void emit_funcs(ox_buf *c, const spec_out *so, int ngs, const char *P)
{
	ox_buf_printf(c, "const %s_func_info %s_funcs[] = {\n", P, P);
	for (int s = 0; s < ngs; s++)
		ox_buf_puts(c, so[s].finfo.s ? so[s].finfo.s : "");
	ox_buf_puts(c, "\t{NULL, NULL, 0},\n};\n\n");
}

/* the tensor and port descriptors; the same in OUT.c and OUT.cu */
static void emit_tables(ox_buf *c, ox_graph *const *gs, int ngs, const char *P)
{
	ox_graph *g = gs[0];
	emit_desc(c, gs, ngs, P, 0);
	emit_desc(c, gs, ngs, P, 1);
	emit_ports(c, g, P, "input", g->nin_ports, g->in_ports, g->ninputs, NULL, g->inputs);
	emit_ports(c, g, P, "output", g->nout_ports, g->out_ports, g->noutputs, g->output_names, g->outputs);
}

/* the run section's start: the specializations' prologues (dims) */
static void emit_run_head(ox_buf *c, const ox_buf *dims)
{
	ox_buf_puts(c, "/* ---- run ---- */\n");
	ox_buf_puts(c, dims->s ? dims->s : "");
}

int ox_cg_emit_c(ox_graph *g, const ox_cg_opts *o)
{
	return ox_cg_emit_c_specs(&g, 1, o);
}

/* what the writers of the files share: the options, the names, the
 * figures of the specializations */
typedef struct {
	const ox_cg_opts *o;
	ox_graph *const *gs;
	int ngs;
	ox_graph *g;
	const char *P;
	const char *PU;
	int mode;
	int array;
	int big;
	wlayout *L_;
	size_t wsize;
	uint32_t crc;
	const char *hname;
	const char *wname;
	const char *xpath;
	const char *ipath;
	const char *cupath;
	ox_cg *cgp;
	spec_out *so;
	const ox_buf *dimsp;
	int nfuncs;
	int ndyn;
	int nfail;
	int nindex;
	int nunsup;
	int nshape;
	int maxslots;
	int dynamic;
	int nnodes;
	int64_t arena;
	int64_t extslots;
} outctx;

/* OUT.h: the API */
static ox_buf write_h(const outctx *F)
{
	const ox_cg_opts *o = F->o;
	ox_graph *g = F->g;
	const char *P = F->P;
	const char *PU = F->PU;
	const int mode = F->mode;
	const size_t wsize = F->wsize;
	const uint32_t crc = F->crc;
	const char *hname = F->hname;
	const char *xpath = F->xpath;
	const int nfuncs = F->nfuncs;
	const int ndyn = F->ndyn;
	const int nfail = F->nfail;
	const int nindex = F->nindex;
	const int nunsup = F->nunsup;
	const int nshape = F->nshape;
	const int dynamic = F->dynamic;
	const int64_t arena = F->arena;
	ox_buf h = {0};
	ox_buf_printf(&h, "/* %s: generated by onnxcc from %s. Do not edit.\n", hname, o->model);
	ox_buf_puts(&h, " * The API of the compiled network (see docs/api.md). */\n");
	ox_buf_printf(&h, "#ifndef %s_H\n#define %s_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", PU, PU);
	ox_buf_printf(&h, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", PU, g->ninputs, PU,
		      g->noutputs);
	ox_buf_printf(&h, "#define %s_ARENA_SIZE %lld /* bytes of scratch memory per run%s */\n", PU,
		      (long long)arena, dynamic ? ", for the largest shapes" : "");
	ox_buf_printf(&h, "#define %s_WEIGHTS_SIZE %zu /* bytes of constant data */\n", PU, wsize);
	ox_buf_printf(&h, "#define %s_WEIGHTS_CRC32 0x%08xu /* their CRC-32 (as zlib's) */\n\n", PU, (unsigned)crc);
	ox_buf_printf(&h, "/* A string result longer than the %d bytes per element compiled in\n"
			  " * (onnxcc --string-capacity) makes a run return this%s. */\n"
			  "#define %s_ERR_CAPACITY (-9)\n", g->string_capacity,
		      nfail ? "" : " (no op of this network can)", PU);
	ox_buf_printf(&h, "/* An index or count read from the inputs that is out of range (after\n"
			  " * one wrap of a negative index) makes a run return this%s:\n"
			  " * nothing is read or written out of bounds, the outputs are unspecified. */\n"
			  "#define %s_ERR_INDEX (-10)\n", nindex ? "" : " (no op of this network can)", PU);
	ox_buf_printf(&h, "/* An input shape outside the shapes the program was compiled for (its\n"
			  " * descriptor's min_shape..shape, exactly as onnxcc's --shape/--dim\n"
			  " * ranges say)%s makes a run return this before it reads any data. */\n"
			  "#define %s_ERR_SHAPE (-11)\n",
		      nshape ? ", or a shape the network reads from data that is invalid or past\n"
			       " * the bound its memory was planned for (onnxcc --max)," : "", PU);
	ox_buf_printf(&h, "/* A run whose data asks for what the code does not do (a Dropout in\n"
			  " * training mode with a ratio other than 0: random) returns this%s. */\n"
			  "#define %s_ERR_UNSUPPORTED (-12)\n", nunsup ? "" : " (no op of this network can)", PU);
	ox_buf_printf(&h, "/* 1: some input dims are given at run time (%s_run_shaped) */\n"
			  "#define %s_DYNAMIC %d\n\n", P, PU, dynamic);
	if (mode == OX_CG_WEIGHTS_EXTERNAL) {
		ox_buf_printf(&h, "/* --weights external: the constants are not in the program. Pass the\n"
				  " * blob (%s, %s_WEIGHTS_BLOB_SIZE bytes: a 64-byte header, then\n"
				  " * the data) to %s_init before the first run. */\n",
			      base_name(xpath), PU, P);
		ox_buf_printf(&h, "#define %s_WEIGHTS_EXTERNAL 1\n#define %s_WEIGHTS_BLOB_SIZE (%d + %s_WEIGHTS_SIZE)\n",
			      PU, PU, BLOB_HEADER, PU);
		static const char *const errs[][2] = {
			{"ARG", "blob is NULL"},
			{"ALIGN", "blob is not 8-byte aligned"},
			{"SIZE", "size is not the header plus the data size the header records (truncated?)"},
			{"MAGIC", "not an onnxcc weights blob"},
			{"VERSION", "a blob format this code does not read"},
			{"MODEL", "the weights of another model: size or CRC differ from the ones compiled in"},
			{"CHECKSUM", "the data does not match its CRC: corrupted"},
			{"NO_WEIGHTS", "returned by the run functions before a successful init"},
		};
		for (int i = 0; i < 8; i++)
			ox_buf_printf(&h, "#define %s_ERR_%s (%d) /* %s */\n", PU, errs[i][0], -1 - i, errs[i][1]);
		if (!o->cuda) /* (the CUDA API declares its own) */
			ox_buf_printf(&h, "/* Check the blob (size, magic, version, model, CRC-32) and use it, in\n"
					  " * place, from now on: it must stay valid and unchanged while the\n"
					  " * network is used. Returns 0, or one of the %s_ERR_ codes above. */\n"
					  "int %s_init(const void *blob, size_t size);\n\n", PU, P);
	}
	ox_buf_printf(&h, "/* dtype: ONNX TensorProto.DataType code (1 f32, 7 i64, 9 bool, 10 f16, ...) */\n");
	ox_buf_printf(&h, "typedef struct {\n\tconst char *name;\n\tint dtype;\n\tint rank;\n"
			  "\tconst int64_t *shape;\n\tsize_t numel;\n\tsize_t bytes;\n"
			  "\tint dynamic_axis; /* -1, or the axis whose size each run reports (shape and\n"
			  "\t\t\t     bytes are for its maximum; see %s_run_ex) */\n"
			  "\tconst int64_t *min_shape; /* the least each dim may be; shape is the most,\n"
			  "\t\t\t\t    numel and bytes are for it (equal to shape when\n"
			  "\t\t\t\t    the dims are fixed) */\n} %s_tensor_desc;\n\n", P, P);
	ox_buf_printf(&h, "extern const %s_tensor_desc %s_inputs[];  /* %s_NUM_INPUTS entries, then a NULL name */\n",
		      P, P, PU);
	ox_buf_printf(&h, "extern const %s_tensor_desc %s_outputs[]; /* %s_NUM_OUTPUTS entries, then a NULL name */\n\n",
		      P, P, PU);
	ox_buf_printf(&h, "/* The ONNX graph's inputs and outputs over the tensors above: a tensor is\n"
			  " * one entry, a sequence of n tensors n consecutive ones (first .. first+n-1),\n"
			  " * an optional 0 or 1 (or a sequence). Their structure is fixed at compile\n"
			  " * time (onnxcc --like). */\n");
	ox_buf_printf(&h, "#define %s_NUM_INPUT_PORTS %d\n#define %s_NUM_OUTPUT_PORTS %d\n", PU,
		      g->in_ports ? g->nin_ports : g->ninputs, PU, g->out_ports ? g->nout_ports : g->noutputs);
	ox_buf_printf(&h, "#define %s_PORT_TENSOR 0\n#define %s_PORT_SEQUENCE 1\n#define %s_PORT_OPTIONAL 2\n"
			  "#define %s_PORT_OPTIONAL_SEQUENCE 3\n", PU, PU, PU, PU);
	ox_buf_printf(&h, "typedef struct {\n\tconst char *name;\n\tint kind;  /* %s_PORT_* */\n"
			  "\tint first; /* index of its first tensor */\n\tint count; /* its tensors */\n"
			  "} %s_port_desc;\n", PU, P);
	ox_buf_printf(&h, "extern const %s_port_desc %s_input_ports[];  /* then a NULL name */\n", P, P);
	ox_buf_printf(&h, "extern const %s_port_desc %s_output_ports[]; /* then a NULL name */\n\n", P, P);
	if (o->cuda) {
		ox_cu_api_h(&h, P, PU, mode == OX_CG_WEIGHTS_EXTERNAL);
	} else {
		ox_buf_printf(&h, "/* Run the network: inputs[k] and outputs[k] point to buffers of\n"
				  " * %s_inputs[k].bytes / %s_outputs[k].bytes in graph order. Uses a static\n"
				  " * arena: not reentrant. Returns 0, or %s_ERR_CAPACITY or %s_ERR_INDEX%s. */\n", P, P,
			      PU, PU, mode == OX_CG_WEIGHTS_EXTERNAL ? " (or _ERR_NO_WEIGHTS before a successful init)" : "");
		ox_buf_printf(&h, "int %s_run(const void *const *inputs, void *const *outputs);\n", P);
		ox_buf_printf(&h, "/* The same with caller-provided scratch memory of %s_ARENA_SIZE bytes,\n"
				  " * 64-byte aligned: reentrant with one arena per thread. */\n", PU);
		ox_buf_printf(&h, "int %s_run_with_arena(void *arena, const void *const *inputs, void *const *outputs);\n\n", P);
		ox_buf_printf(&h, "/* Either, and the run-time sizes: extents (NULL, or %s_NUM_OUTPUTS entries)\n"
				  " * receives for each output the size of its dynamic_axis, -1 for an output\n"
				  " * of static shape. Such an output's buffer holds the tensor of that shape\n"
				  " * at its start. arena NULL: the static one. */\n", PU);
		ox_buf_printf(&h, "int %s_run_ex(void *arena, const void *const *inputs, void *const *outputs, int64_t *extents);\n", P);
		ox_buf_printf(&h, "/* Run with the input shapes given: in_shapes[k] (NULL, or its entry NULL:\n"
				  " * the descriptor's shape) holds the %s_inputs[k].rank dims of input k,\n"
				  " * packed row-major in inputs[k]; out_shapes[k] (NULL, or its entry NULL:\n"
				  " * not wanted) receives output k's dims, and outputs[k] its tensor packed\n"
				  " * at the start of a buffer of %s_outputs[k].bytes. An input shape\n"
				  " * the program was not compiled for returns %s_ERR_SHAPE. arena NULL:\n"
				  " * the static one. */\n", P, P, PU);
		ox_buf_printf(&h, "int %s_run_shaped(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
				  "\t\tvoid *const *outputs, int64_t *const *out_shapes);\n", P);
		ox_buf_printf(&h, "#define %s_HAS_DYNAMIC_OUTPUTS %d\n\n", PU, ndyn > 0);
		ox_buf_printf(&h, "/* Parallel loops. The network splits its heavy loops into n independent\n"
				  " * tasks; without a hook they run in order on the calling thread. A hook\n"
				  " * set here must call task(ctx, begin, end) over ranges that cover [0, n)\n"
				  " * exactly once (any split, any threads) and return when all are done.\n"
				  " * The network itself creates no threads. Not for use during a run. */\n");
		ox_buf_printf(&h, "typedef void (*%s_task_fn)(void *ctx, long begin, long end);\n", P);
		ox_buf_printf(&h, "typedef void (*%s_parallel_for_fn)(void *user, long n, %s_task_fn task, void *ctx);\n", P, P);
		ox_buf_printf(&h, "void %s_set_parallel_for(%s_parallel_for_fn hook, void *user); /* NULL: serial */\n\n", P, P);
		ox_buf_printf(&h, "/* Profiling: the run calls hook(user, k, 0) before generated function k\n"
				  " * and hook(user, k, 1) after it, when one is set. */\n");
		ox_buf_printf(&h, "typedef void (*%s_profile_fn)(void *user, int func, int end);\n", P);
		ox_buf_printf(&h, "void %s_set_profiler(%s_profile_fn hook, void *user); /* NULL: none */\n\n", P, P);
	}
	ox_buf_printf(&h, "/* The generated functions: %s_funcs[k] names function k, the ONNX nodes\n"
			  " * it computes and its floating-point operations. */\n", P);
	ox_buf_printf(&h, "#define %s_NUM_FUNCS %d\n", PU, nfuncs);
	ox_buf_printf(&h, "typedef struct {\n\tconst char *name;\n\tconst char *node;\n\tint64_t flops;\n} %s_func_info;\n", P);
	ox_buf_printf(&h, "extern const %s_func_info %s_funcs[]; /* %s_NUM_FUNCS entries, then a NULL name */\n\n", P, P, PU);
	if (o->cuda)
		ox_cu_profile_h(&h, P, PU);
	if (!o->cuda)
		ox_buf_printf(&h, "/* the CPU the code was compiled for (onnxcc --cpu) */\n#define %s_CPU \"%s\"\n\n", PU,
		      g->target->name);
	ox_buf_printf(&h, "#endif\n");
	return h;
}

/* OUT.cu (--target cuda): the kernels, the nodes' launches, the run
 * functions between the host side's two parts */
static ox_buf write_cu(const outctx *F)
{
	const ox_cg_opts *o = F->o;
	ox_graph *const *gs = F->gs;
	const int ngs = F->ngs;
	ox_graph *g = F->g;
	const char *P = F->P;
	const char *PU = F->PU;
	const int mode = F->mode;
	const size_t wsize = F->wsize;
	const char *hname = F->hname;
	const char *wname = F->wname;
	const char *xpath = F->xpath;
	const char *cupath = F->cupath;
	const ox_cg *cg = F->cgp;
	spec_out *so = F->so;
	const ox_buf *dims = F->dimsp;
	const int maxslots = F->maxslots;
	const int64_t arena = F->arena;
	ox_buf c = {0};
	ox_buf_printf(&c, "/* %s: generated by onnxcc from %s (--target cuda). Do not edit.\n", base_name(cupath), o->model);
	ox_buf_printf(&c, " * %d specialization%s, arena %lld bytes on the device, weights %zu bytes (in %s).\n"
			  " * Build: nvcc -O3 -arch=sm_80 -c %s (docs/cuda.md). */\n",
		      ngs, ngs > 1 ? "s" : "", (long long)arena, wsize,
		      mode == OX_CG_WEIGHTS_EXTERNAL ? base_name(xpath) : wname, base_name(cupath));
	ox_buf_printf(&c, "#include \"%s\"\n", hname);
	ox_buf_puts(&c, "/* runtime_min/ox_cuda.h */\n");
	ox_buf_puts(&c, ox_cg_template("runtime_min/ox_cuda.h"));
	ox_buf_puts(&c, "\n/* runtime_min/ox_rt.h */\n");
	rt_header(&c, "[[maybe_unused]] static __device__");
	ox_buf_puts(&c, "\n");
	if (mode == OX_CG_WEIGHTS_EMBED) {
		ox_buf_printf(&c, "extern \"C\" const unsigned char %s_weights[];\n\n", P);
	} else if (mode == OX_CG_WEIGHTS_EXTERNAL) {
		ox_w_init_fn(&c, P, PU, 1);
	}
	if (cg->kernels.len) {
		ox_buf_puts(&c, "/* ---- kernels ---- */\n");
		ox_buf_puts(&c, cg->kernels.s);
		ox_buf_puts(&c, "\n");
	}
	ox_buf_puts(&c, "/* ---- nodes: the C target's functions, on the device ---- */\n");
	for (int s = 0; s < ngs; s++)
		ox_buf_puts(&c, so[s].nodes.s ? so[s].nodes.s : "");
	ox_buf_printf(&c, "/* the pinned staging of the host nodes (string tensors) */\n"
			  "#define OX_HOST_BYTES %lld\nstatic unsigned char *ox_cu_H;\n\n",
		      (long long)cg->cu_hbytes);
	if (cg->cu_hkernels.len)
		ox_buf_printf(&c, "/* ---- nodes on the host (string tensors): the C target's functions ---- */\n"
				  "namespace ox_host {\n%s} /* namespace ox_host */\n\n",
			      cg->cu_hkernels.s);
	ox_buf_puts(&c, "/* ---- nodes: kernels and their launches ---- */\n");
	/* (the control nodes' bodies, which those call; ox_sync_dims, which
	 * a body or a node that waits calls, comes with the host side) */
	int waits = cg->cu_bodies.len > 0;
	for (int s = 0; s < ngs; s++)
		waits |= so[s].host.s && strstr(so[s].host.s, "ox_sync_dims(") != NULL;
	if (waits)
		ox_buf_puts(&c, "static int ox_sync_dims(cudaStream_t st);\n\n");
	ox_buf_puts(&c, cg->cu_bodies.s ? cg->cu_bodies.s : "");
	for (int s = 0; s < ngs; s++)
		ox_buf_puts(&c, so[s].host.s ? so[s].host.s : "");
	emit_funcs(&c, so, ngs, P);
	emit_tables(&c, gs, ngs, P);
	int capt[64], maxrank = 0;
	for (int k = 0; k < g->noutputs; k++)
		if (g->vals[g->outputs[k]].shape.rank > maxrank)
			maxrank = g->vals[g->outputs[k]].shape.rank;
	for (int s = 0; s < ngs; s++)
		capt[s] = !so[s].ndims && !so[s].ndyn;
	ox_cu_info fi = {P, PU, g->ninputs, g->noutputs, maxslots, maxrank, ngs, capt,
			 mode == OX_CG_WEIGHTS_EXTERNAL, NULL, cg->cu_ws, cg->cu_ctr};
	char wsym[300];
	ox_cg_snprintf(wsym, sizeof wsym, "%s_weights", P);
	fi.wsym = wsym;
	/* the state comes before the run functions that read it */
	ox_cu_host_state(&c, &fi);
	emit_run_head(&c, dims);
	for (int s = 0; s < ngs; s++) {
		ox_buf_printf(&c, "static int %s_run%d(unsigned char *A, int64_t *ox_d, int64_t *ox_dd, int64_t *ox_dext,\n"
				  "\t\tint *ox_status, const void *const *inputs, void *const *outputs,\n"
				  "\t\tint64_t *const *out_shapes, cudaStream_t ox_st)\n{\n", P, s);
		const char *rt = so[s].run.s ? so[s].run.s : "";
		if (ox_cg_uses_name(rt, "rc"))
			ox_buf_puts(&c, "\tint rc = 0;\n");
		if (ox_cg_uses_name(rt, "W"))
			ox_buf_puts(&c, "\tconst unsigned char *W = ox_s.W;\n");
		if (ox_cg_uses_name(rt, "ext"))
			ox_buf_puts(&c, "\tconst int64_t *ext = ox_s.hd + OX_NS;\n");
		ox_buf_puts(&c, "\t(void)A, (void)ox_d, (void)ox_dd, (void)ox_dext, (void)ox_status, (void)inputs, "
				"(void)out_shapes;\n");
		ox_buf_puts(&c, so[s].run.s ? so[s].run.s : "");
		ox_buf_puts(&c, "\treturn 0;\n}\n\n");
	}
	ox_cu_host_api(&c, &fi);
	return c;
}

/* OUT.c: the kernels, the nodes, the run functions, the dispatcher */
static ox_buf write_c(const outctx *F)
{
	const ox_cg_opts *o = F->o;
	ox_graph *const *gs = F->gs;
	const int ngs = F->ngs;
	ox_graph *g = F->g;
	const char *P = F->P;
	const char *PU = F->PU;
	const int mode = F->mode;
	const wlayout *L = F->L_;
	const size_t wsize = F->wsize;
	const char *hname = F->hname;
	const char *wname = F->wname;
	const char *xpath = F->xpath;
	const ox_cg *cg = F->cgp;
	spec_out *so = F->so;
	const ox_buf *dims = F->dimsp;
	const int maxslots = F->maxslots;
	const int nnodes = F->nnodes;
	const int64_t arena = F->arena;
	const int64_t extslots = F->extslots;
	ox_buf c = {0};
	const char *cname = base_name(o->out_c);
	ox_buf_printf(&c, "/* %s: generated by onnxcc from %s. Do not edit.\n", cname, o->model);
	if (ngs > 1)
		ox_buf_printf(&c, " * %d specializations, %d nodes, arena %lld bytes, weights %zu bytes (in %s). */\n",
			      ngs, nnodes, (long long)arena, wsize,
			      mode == OX_CG_WEIGHTS_EXTERNAL ? base_name(xpath) : wname);
	else
		ox_buf_printf(&c, " * %d nodes, arena %lld bytes, weights %zu bytes (in %s). */\n", g->nnodes,
			      (long long)arena, wsize, mode == OX_CG_WEIGHTS_EXTERNAL ? base_name(xpath) : wname);
	ox_buf_printf(&c, "#include \"%s\"\n#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n"
			  "#include <string.h>\n\n", hname);
	ox_buf_puts(&c, "/* runtime_min/ox_rt.h */\n");
	rt_header(&c, "static");
	ox_buf_puts(&c, "\n");
	if (mode == OX_CG_WEIGHTS_EMBED) {
		ox_buf_printf(&c, "extern const unsigned char %s_weights[];\n", P);
	} else if (mode == OX_CG_WEIGHTS_C) {
		for (int k = 0; k < L->ne; k++) {
			const ox_tensor *t = ox_w_tensor(L, k);
			ox_buf_printf(&c, "extern const %s %s[];\n", ox_w_as_bytes(t) ? "unsigned char" : ox_cg_ctype(t->dtype),
				      ox_w_array(L, k));
		}
	}
	ox_buf_printf(&c, "static _Alignas(64) unsigned char %s_arena[%s_ARENA_SIZE > 0 ? %s_ARENA_SIZE : 1];\n\n",
		      P, PU, PU);
	if (mode == OX_CG_WEIGHTS_EXTERNAL)
		ox_w_init_fn(&c, P, PU, 0);
	ox_buf_printf(&c, "/* the parallel-for hook and the profiler (%s.h) */\n", P);
	ox_buf_printf(&c, "static %s_parallel_for_fn ox_par_fn;\nstatic void *ox_par_user;\n", P);
	ox_buf_printf(&c, "void %s_set_parallel_for(%s_parallel_for_fn hook, void *user)\n{\n"
			  "\tox_par_fn = hook;\n\tox_par_user = user;\n}\n\n", P, P);
	ox_buf_printf(&c, "static OX_UNUSED void ox_parallel(%s_task_fn task, void *ctx, long n)\n{\n"
			  "\tif (ox_par_fn && n > 1)\n\t\tox_par_fn(ox_par_user, n, task, ctx);\n"
			  "\telse\n\t\ttask(ctx, 0, n);\n}\n\n", P);
	ox_buf_printf(&c, "static %s_profile_fn ox_prof_fn;\nstatic void *ox_prof_user;\n", P);
	ox_buf_printf(&c, "void %s_set_profiler(%s_profile_fn hook, void *user)\n{\n"
			  "\tox_prof_fn = hook;\n\tox_prof_user = user;\n}\n", P, P);
	ox_buf_puts(&c, "#define OX_PROF(k, end) do { if (ox_prof_fn) ox_prof_fn(ox_prof_user, k, end); } while (0)\n\n");
	emit_funcs(&c, so, ngs, P);
	if (cg->kernels.len) {
		ox_buf_puts(&c, "/* ---- kernels ---- */\n");
		ox_buf_puts(&c, cg->kernels.s);
		ox_buf_puts(&c, "\n");
	}
	ox_buf_puts(&c, "/* ---- nodes ---- */\n");
	for (int s = 0; s < ngs; s++) {
		if (ngs > 1) {
			ox_buf_printf(&c, "/* ---- specialization %d:", s);
			for (int j = 0; j < OX_DX(gs[s])->ndexprs; j++) {
				const ox_dexpr *e = &OX_DX(gs[s])->dexprs[j];
				if (e->op == OX_DE_SYM && e->rt == OX_RT_INPUT && e->value < 0)
					ox_buf_printf(&c, " %s %lld..%lld", e->sym, (long long)e->lo, (long long)e->hi);
				else if (e->op == OX_DE_SYM && e->rt == OX_RT_INPUT)
					ox_buf_printf(&c, " %s %lld", e->sym, (long long)e->value);
			}
			ox_buf_printf(&c, ", arena %lld bytes ---- */\n", (long long)gs[s]->arena_size);
		}
		ox_buf_puts(&c, so[s].nodes.s ? so[s].nodes.s : "");
	}
	/* the run: a prologue per specialization (ox_d[] from the input shapes),
	 * its node calls, and the dispatcher that picks the first whose ranges
	 * hold the shapes */
	emit_tables(&c, gs, ngs, P);
	emit_run_head(&c, dims);
	for (int s = 0; s < ngs; s++) {
		int any_fail = so[s].nfail || so[s].nindex || so[s].nunsup || so[s].nshape || so[s].nany;
		ox_buf_printf(&c, "static int %s_run%d(unsigned char *A, int64_t *ox_d, const void *const *inputs,\n"
				  "\t\tvoid *const *outputs, int64_t *const *out_shapes, int64_t *ext)\n{\n", P, s);
		ox_buf_puts(&c, "\tint64_t ext_unused = 0;\n");
		if (any_fail)
			ox_buf_puts(&c, "\tint rc = 0;\n\t(void)rc;\n");
		if (mode == OX_CG_WEIGHTS_EMBED)
			ox_buf_printf(&c, "\tconst unsigned char *W = %s_weights;\n\t(void)W;\n", P);
		else if (mode == OX_CG_WEIGHTS_EXTERNAL)
			ox_buf_printf(&c, "\tconst unsigned char *W = %s_W;\n\tif (!W)\n\t\treturn %s_ERR_NO_WEIGHTS;\n",
				      P, PU);
		ox_buf_puts(&c, "\t(void)A, (void)ox_d, (void)inputs, (void)out_shapes, (void)ext, (void)ext_unused;\n");
		ox_buf_puts(&c, so[s].run.s ? so[s].run.s : "");
		ox_buf_puts(&c, "\treturn 0;\n}\n\n");
	}
	ox_buf_printf(&c, "static int %s_dispatch(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			  "\t\tvoid *const *outputs, int64_t *const *out_shapes, int64_t *extents)\n{\n", P);
	ox_buf_printf(&c, "\tunsigned char *A = arena ? arena : %s_arena;\n", P);
	ox_buf_printf(&c, "\tconst int64_t *shapes[%d];\n", g->ninputs + 1);
	ox_buf_printf(&c, "\tfor (int k = 0; k < %d; k++)\n"
			  "\t\tshapes[k] = in_shapes && in_shapes[k] ? in_shapes[k] : %s_inputs[k].shape;\n",
		      g->ninputs, P);
	ox_buf_printf(&c, "\tint64_t ox_d[%d], ext[%lld];\n\tfor (int k = 0; k < %lld; k++)\n\t\text[k] = -1;\n",
		      maxslots + 1, (long long)extslots, (long long)extslots);
	ox_buf_printf(&c, "\tint rc = %s_ERR_SHAPE;\n", PU);
	for (int s = 0; s < ngs; s++)
		ox_buf_printf(&c, "\t%sif (!%s_dims%d(shapes, ox_d))\n\t\trc = %s_run%d(A, ox_d, inputs, outputs, out_shapes, ext);\n",
			      s ? "else " : "", P, s, P, s);
	ox_buf_printf(&c, "\tif (extents)\n\t\tmemcpy(extents, ext, %d * sizeof *ext);\n", g->noutputs);
	ox_buf_puts(&c, "\treturn rc;\n}\n\n");
	ox_buf_printf(&c, "int %s_run_shaped(void *arena, const void *const *inputs, const int64_t *const *in_shapes,\n"
			  "\t\tvoid *const *outputs, int64_t *const *out_shapes)\n{\n"
			  "\treturn %s_dispatch(arena, inputs, in_shapes, outputs, out_shapes, NULL);\n}\n\n", P, P);
	ox_buf_printf(&c, "int %s_run_ex(void *arena, const void *const *inputs, void *const *outputs, int64_t *extents)\n{\n"
			  "\treturn %s_dispatch(arena, inputs, NULL, outputs, NULL, extents);\n}\n\n", P, P);
	ox_buf_printf(&c, "int %s_run_with_arena(void *arena, const void *const *inputs, void *const *outputs)\n{\n"
			  "\treturn %s_dispatch(arena, inputs, NULL, outputs, NULL, NULL);\n}\n\n", P, P);
	ox_buf_printf(&c, "int %s_run(const void *const *inputs, void *const *outputs)\n{\n"
			  "\treturn %s_dispatch(NULL, inputs, NULL, outputs, NULL, NULL);\n}\n", P, P);
	return c;
}

/* OUT_weights.c */
static ox_buf write_weights(const outctx *F)
{
	const ox_cg_opts *o = F->o;
	const char *P = F->P;
	const char *PU = F->PU;
	const int mode = F->mode;
	const int array = F->array;
	const int big = F->big;
	const wlayout *L = F->L_;
	const size_t wsize = F->wsize;
	const uint32_t crc = F->crc;
	const char *wname = F->wname;
	const char *xpath = F->xpath;
	const char *ipath = F->ipath;
	ox_buf w = {0};
	ox_buf_printf(&w, "/* %s: generated by onnxcc from %s: the constant tensors,\n * %zu bytes (CRC-32 0x%08x)",
		      wname, o->model, wsize, (unsigned)crc);
		if (mode == OX_CG_WEIGHTS_EXTERNAL) {
		ox_buf_printf(&w, ",\n * are in %s (--weights external): the application passes\n"
				  " * them to %s_init. Nothing to compile here. */\n"
				  "typedef int %s_weights_are_external;\n", base_name(xpath), P, P);
	} else if (mode == OX_CG_WEIGHTS_C) {
		ox_buf_puts(&w, ",\n * as one C array per tensor (--weights c). */\n"
				"#include <math.h>\n#include <stdint.h>\n\n");
		for (int k = 0; k < L->ne; k++)
			ox_w_c_array(&w, L, k);
		if (wsize == 0)
			ox_buf_printf(&w, "typedef int %s_no_weights;\n", P);
	} else if (big && array) {
		ox_buf_printf(&w, ",\n * in %s, the blob as a C array (--weights array: for compilers with\n"
				  " * neither .incbin nor #embed). */\n#include \"%s\"\n",
			      base_name(ipath), base_name(ipath));
	} else if (!big) {
		ox_buf_puts(&w, ". */\n");
		if (!wsize) {
			ox_buf_printf(&w, "const unsigned char %s_weights[1] = {0};\n", P);
		} else {
			ox_buf_printf(&w, "_Alignas(64) const unsigned char %s_weights[%zu] =\n\"", P, wsize);
			str_state st = {&w, 0};
			ox_w_walk(L, ox_w_str_sink, &st);
			ox_buf_puts(&w, "\";\n");
		}
	} else {
		ox_buf_puts(&w, ",\n");
		ox_w_embed(&w, P, PU, wname, wsize);
	}
	return w;
}

int ox_cg_emit_c_specs(ox_graph *const *gs, int ngs, const ox_cg_opts *o)
{
	const char *P = o->prefix;
	char PU[256];
	ox_cg_snprintf(PU, sizeof PU, "%s", P);
	for (char *c = PU; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	ox_graph *g = gs[0];
	/* --weights array lays the weights out as embed does; only the way
	 * OUT_weights.c takes the blob in differs (OUT_weights.inc) */
	int mode = o->weights == OX_CG_WEIGHTS_ARRAY ? OX_CG_WEIGHTS_EMBED : o->weights;
	int array = o->weights == OX_CG_WEIGHTS_ARRAY;

	/* weights: constants that nodes or outputs use, 64-byte aligned */
	wlayout L = {NULL, 0, NULL, NULL, 0, 0, mode, P};
	if (ox_w_layout(&L, gs, ngs)) {
		ox_w_free(&L);
		return -1;
	}
	size_t wsize = L.size;
	uint32_t crc = 0;
	ox_w_walk(&L, ox_w_crc_sink, &crc);
	if (mode == OX_CG_WEIGHTS_C && wsize > ((size_t)16 << 20)) {
		ox_w_free(&L);
		return ox_error(g, NULL, "--weights c is for small models: this one has %zu bytes of weights "
				"(use the default, or --weights external)", wsize);
	}
	char *hpath = sibling(o->out_c, ".h"), *wpath = sibling(o->out_c, "_weights.c"),
	     *mpath = sibling(o->out_c, "_main.c"), *xpath = sibling(o->out_c, "_weights.bin"),
	     *ppath = sibling(o->out_c, "_pool.h");
	char *bpath = malloc(strlen(wpath) + 8), *ipath = sibling(o->out_c, "_weights.inc");
	sprintf(bpath, "%s.bin", wpath);
	const char *hname = base_name(hpath), *wname = base_name(wpath);

	/* node functions and run functions, specialization by specialization;
	 * the kernels they share are emitted once */
	ox_cg cg = {.g = g, .prefix = P, .prefix_upper = PU, .cuda = o->cuda, .tf32 = o->tf32};
	spec_out *so = calloc((size_t)ngs, sizeof *so);
	ox_buf dims = {0};
	int errors = 0, nfuncs = 0, nviews = 0, ndyn = 0, nfail = 0, nindex = 0, nunsup = 0, nshape = 0, maxslots = 0;
	int dynamic = 0, nnodes = 0;
	int64_t arena = 0;
	for (int s = 0; s < ngs; s++) {
		char fpre[16] = "";
		if (ngs > 1)
			ox_cg_snprintf(fpre, sizeof fpre, "b%d_", s);
		cg.g = gs[s];
		cg.wl = &L;
		ox_cg_slots(&cg, gs[s]);
		emit_spec(&cg, fpre, nfuncs, &so[s]);
		errors += so[s].errors;
		if (!so[s].errors && emit_dims_fn(&dims, &cg, P, s))
			errors++;
		nfuncs += so[s].nfuncs, nviews += so[s].nviews, ndyn += so[s].ndyn;
		nfail += so[s].nfail, nindex += so[s].nindex, nunsup += so[s].nunsup, nshape += so[s].nshape;
		if (cg.nslots > maxslots)
			maxslots = cg.nslots;
		for (int k = 0; k < gs[s]->ninputs; k++)
			dynamic |= ox_shape_is_rt(gs[s], &gs[s]->vals[gs[s]->inputs[k]].shape);
		if (gs[s]->arena_size > arena)
			arena = gs[s]->arena_size;
		nnodes += gs[s]->nnodes;
	}
	dynamic |= ngs > 1;
	if (errors) {
		ox_error(g, NULL, "%d node%s cannot be compiled by the C target (listed above)", errors,
			 errors > 1 ? "s" : "");
		ox_w_free(&L);
		free(hpath), free(wpath), free(mpath), free(ppath), free(xpath), free(bpath), free(ipath);
		for (int s = 0; s < ngs; s++)
			ox_buf_free(&so[s].nodes), ox_buf_free(&so[s].run), ox_buf_free(&so[s].finfo);
		free(so);
		ox_buf_free(&dims);
		free(cg.slot);
		ox_cg_free(&cg);
		return -1;
	}
	/* a run-time size other than a graph output's (NonZero and kin) */
	int64_t extslots = g->noutputs + 1;

	int big = mode == OX_CG_WEIGHTS_EMBED && wsize > INLINE_WEIGHTS;
	outctx F = {.o = o, .gs = gs, .ngs = ngs, .g = g, .P = P, .PU = PU, .mode = mode, .array = array, .big = big,
		    .L_ = &L, .wsize = wsize, .crc = crc, .hname = hname, .wname = wname, .xpath = xpath,
		    .ipath = ipath, .cgp = &cg, .so = so, .dimsp = &dims, .nfuncs = nfuncs, .ndyn = ndyn,
		    .nfail = nfail, .nindex = nindex, .nunsup = nunsup, .nshape = nshape, .maxslots = maxslots,
		    .dynamic = dynamic, .nnodes = nnodes, .arena = arena, .extslots = extslots};
	/* the files */
	ox_buf h = write_h(&F);
	size_t kernel_bytes = cg.kernels.len;
	char *cupath = o->cuda ? sibling(o->out_c, ".cu") : NULL;
	F.cupath = cupath;
	ox_buf c = o->cuda ? write_cu(&F) : write_c(&F);
	ox_buf w = write_weights(&F);

	/* OUT_main.c, OUT_pool.h */
	ox_buf m = {0}, pl = {0};
	char pfx[300], pfxu[300];
	ox_cg_snprintf(pfx, sizeof pfx, "%s_", P);
	ox_cg_snprintf(pfxu, sizeof pfxu, "%s_", PU);
	const char *keys[] = {"PFXU_", "PFX_", "HEADER_NAME", "BLOB_NAME"};
	const char *vals[] = {pfxu, pfx, hname, base_name(xpath)};
	if (o->with_main) {
		ox_buf_printf(&m, "/* %s: generated by onnxcc: the --main test program. */\n", base_name(mpath));
		if (mode == OX_CG_WEIGHTS_EXTERNAL)
			ox_cg_substitute(&m, loader_text, keys, vals, 4);
		ox_cg_substitute(&m, ox_cg_template("runtime_min/ox_main.c"), keys, vals, 3);
	}
	if (o->pool || o->with_main) {
		ox_buf_printf(&pl, "/* %s: generated by onnxcc: a thread pool for the network's loops. */\n", base_name(ppath));
		ox_cg_substitute(&pl, ox_cg_template("runtime_min/ox_pool.h"), keys, vals, 3);
	}

	/* write everything, then rename; not at all when an emitter read a
	 * mistyped attribute (ir/graph.c) */
	outfile files[10];
	char *epath = NULL;
	int nf = 0, rc = 0, bad = ox_attr_report(g);
	memset(files, 0, sizeof files);
	if (bad)
		goto done;
	const char *left = ox_cg_fields_left(c.s);
	if (left)
		ox_die("codegen: a field of a kernel's text is left unfilled at \"%.24s\" (a bug of the code generator: "
		       "please report it)", left);
	rc |= write_buf(&files[nf++], o->cuda ? cupath : o->out_c, &c);
	rc |= write_buf(&files[nf++], hpath, &h);
	rc |= write_buf(&files[nf++], wpath, &w);
	if (o->with_main)
		rc |= write_buf(&files[nf++], mpath, &m);
	if (pl.len)
		rc |= write_buf(&files[nf++], ppath, &pl);
	if (o->cuda && o->cuda_emu) {
		const char *sl = strrchr(o->out_c, '/');
		int dl = sl ? (int)(sl - o->out_c) + 1 : 0;
		epath = malloc((size_t)dl + 32);
		sprintf(epath, "%.*sox_cuda_emu.h", dl, o->out_c);
		ox_buf e = {0};
		ox_buf_puts(&e, ox_cg_template("runtime_min/ox_cuda_emu.h"));
		rc |= write_buf(&files[nf++], epath, &e);
		ox_buf_free(&e);
	}
	if (!rc && big && !array)
		rc |= write_blob(&files[nf++], bpath, "", 0, &L, file_sink, NULL);
	if (!rc && big && array) {
		ox_buf head = {0};
		ox_buf_printf(&head,
			      "/* %s: generated by onnxcc: the weights as a C array (--weights array),\n"
			      " * for compilers with neither .incbin nor #embed (%s includes it). */\n"
			      "_Alignas(64) const unsigned char %s_weights[%zu] = {\n",
			      base_name(ipath), wname, P, wsize);
		rc |= write_blob(&files[nf++], ipath, head.s, head.len, &L, ox_w_dec_sink, "\n};\n");
		ox_buf_free(&head);
	}
	if (!rc && mode == OX_CG_WEIGHTS_EXTERNAL) {
		unsigned char head[BLOB_HEADER] = {0};
		memcpy(head, BLOB_MAGIC, 8);
		ox_w_put_le(head + 8, BLOB_VERSION, 4);
		ox_w_put_le(head + 12, BLOB_HEADER, 4);
		ox_w_put_le(head + 16, wsize, 8);
		ox_w_put_le(head + 24, crc, 4);
		rc |= write_blob(&files[nf++], xpath, (const char *)head, sizeof head, &L, file_sink, NULL);
	}
	for (int i = 0; i < nf && !rc; i++)
		rc |= rename(files[i].tmp, files[i].path);
	if (rc) {
		for (int i = 0; i < nf; i++)
			if (files[i].tmp)
				remove(files[i].tmp);
		ox_error(g, NULL, "cannot write %s and its siblings", o->out_c);
	}
done:
	for (int i = 0; i < nf; i++)
		free(files[i].path), free(files[i].tmp);
	if (o->stats) {
		o->stats->weights_bytes = wsize;
		o->stats->code_bytes = c.len;
		o->stats->kernel_bytes = kernel_bytes;
		o->stats->nfuncs = nfuncs;
		o->stats->nviews = nviews;
		o->stats->cuda = o->cuda;
		ox_buf slow = {0};
		for (int s = 0; s < ngs; s++) {
			o->stats->nserial += so[s].nserial, o->stats->ntasks += so[s].ntasks, o->stats->nhost += so[s].nhost;
			if (so[s].slow.len)
				ox_buf_printf(&slow, "%s%s", slow.len ? ", " : "", so[s].slow.s);
		}
		o->stats->slow = slow.s;
	}
	ox_w_free(&L);
	free(hpath), free(wpath), free(mpath), free(ppath), free(xpath), free(bpath), free(ipath), free(cupath), free(epath);
	for (int s = 0; s < ngs; s++)
		ox_buf_free(&so[s].nodes), ox_buf_free(&so[s].run), ox_buf_free(&so[s].finfo), ox_buf_free(&so[s].host),
			ox_buf_free(&so[s].slow);
	free(so);
	ox_buf_free(&dims);
	ox_buf_free(&h), ox_buf_free(&c), ox_buf_free(&w), ox_buf_free(&m), ox_buf_free(&pl);
	free(cg.slot);
	ox_cg_free(&cg);
	return rc || bad ? -1 : 0;
}
