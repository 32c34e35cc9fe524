/* dot.c: --graph, the planned graph as a Graphviz picture.
 *
 * One box per node in schedule order (n0, n1, ...: the ids are the node
 * positions, so a test can count them): its op, name, the ONNX nodes a
 * fused node computes, its epilogue or fused body, the kernel codegen will
 * use, its scratch. One edge per use of a tensor, labelled with the
 * tensor's name, type, layout and where its bytes are (arena offset and
 * size, in place of / a view of another tensor, the input, the weights).
 * Graph inputs (green ellipses), outputs (orange ellipses) and constants
 * (grey notes) are nodes of their own. Names are bytes from the model, so
 * every one is escaped; the output depends only on the graph.
 */
#include "report.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FUSED_SHOWN 8 /* names of a fused list drawn before "... (N in all)" */

/* text inside a DOT "..." label: the label's own line breaks are written
 * by the caller as \n; a name's control bytes, backslashes and invalid
 * UTF-8 are shown as escapes (\\n, \\x01), & as &amp; (dot reads entities) */
static void put_esc(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int len = ox_rp_utf8_len(p);
		if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '\n')
			fputs("\\\\n", f);
		else if (*p == '\t')
			fputs("\\\\t", f);
		else if (*p < 0x20 || *p == 0x7f || !len)
			fprintf(f, "\\\\x%02x", *p);
		else {
			fwrite(p, 1, (size_t)len, f);
			p += len;
			continue;
		}
		p++;
	}
}

/* "f32[1,8,16,16]@blocked(4)" */
static void type_str(ox_graph *g, const ox_value *v, char *buf, size_t n)
{
	char sh[256], lay[64];
	ox_shape_str(g, &v->shape, sh, sizeof sh);
	ox_rp_layout_str(v, lay, sizeof lay);
	snprintf(buf, n, "%s%s%s", ox_dtype_name(v->dtype), sh, lay);
}

/* the tensor's label: name, type, where its bytes are */
static void put_tensor(FILE *f, ox_graph *g, const ox_plan_stats *ps, ox_id id)
{
	const ox_value *v = &g->vals[id];
	char ty[400];
	type_str(g, v, ty, sizeof ty);
	put_esc(f, v->name);
	fprintf(f, "\\n%%%d %s\\n", id, ty);
	if (v->kind == OX_V_INPUT) {
		fprintf(f, "input");
		return;
	}
	if (v->kind == OX_V_CONST) {
		fprintf(f, "weights, %lld B", (long long)ox_rp_stored_bytes(g, v));
		return;
	}
	int64_t off = 0;
	ox_id r = ox_plan_storage(g, id, &off);
	const char *place = ox_rp_place(g, id, &off);
	if (r != id) {
		int64_t rel = strcmp(place, "arena") ? off : off - g->vals[r].offset; /* inside %r */
		fprintf(f, "view of %%%d", r);
		if (rel)
			fprintf(f, " at +%lld", (long long)rel);
		if (strcmp(place, "arena")) {
			fprintf(f, " (%s)", place);
			return;
		}
		fprintf(f, "\\n");
	} else if (ps && ps->storage[id] >= 0 && ps->storage[id] != id) {
		fprintf(f, "in place of %%%d\\n", ps->storage[id]);
	}
	fprintf(f, "arena @%lld, %lld B", (long long)v->offset, (long long)ox_rp_stored_bytes(g, v));
}

/* the kernel codegen picks, where one of the optimizer's is used */
static void kernel_str(ox_graph *g, const ox_node *n, char *buf, size_t sz)
{
	buf[0] = 0;
	ox_convgeo c;
	ox_gemmgeo q;
	ox_attngeo a;
	if (n->op == OX_OP_Conv && !ox_opt_conv_geo(g, n, &c)) {
		if (c.wm)
			snprintf(buf, sz, "Winograd F(%dx%d,3x3), tile %dx%d vectors", c.wm, c.wm, c.rows, c.ocb);
		else
			snprintf(buf, sz, "blocked %s conv, tile %dx%d vectors%s", c.depthwise ? "depthwise" : "direct",
				 c.rows, c.ocb, c.kb ? ", K in chunks" : "");
	} else if ((n->op == OX_OP_Gemm || n->op == OX_OP_MatMul) && !ox_opt_gemm_geo(g, n, &q)) {
		snprintf(buf, sz, "%s GEMM %lldx%lldx%lld, tile %dx%d vectors", q.constb ? "packed" : "row",
			 (long long)q.M, (long long)q.N, (long long)q.K, q.rows, q.ocb);
	} else if (n->op == OX_OP_Attention && n->scratch && !ox_opt_attn_geo(g, n, &a)) {
		snprintf(buf, sz, "blocked attention, %d query rows", a.rows);
	}
}

/* the ops of a body graph (an epilogue, a fused loop): "Add, Mul, Relu" */
static void put_body(FILE *f, const ox_graph *b)
{
	for (int i = 0; i < b->nnodes; i++) {
		if (i == MAX_FUSED_SHOWN) {
			fprintf(f, ", ... (%d in all)", b->nnodes);
			break;
		}
		fprintf(f, "%s", i ? ", " : "");
		put_esc(f, b->nodes[i].optype);
	}
}

static void put_node(FILE *f, ox_graph *g, int i)
{
	const ox_node *n = &g->nodes[i];
	const ox_attr *fu = ox_rp_fused(n);
	ox_graph *epi = ox_ir_epilogue(n);
	const ox_attr *body = ox_attr_get(n, "ox_body");
	int noop = ox_plan_is_noop(g, n);
	int fused = fu || epi || (body && body->type == OX_AT_GRAPH);
	fprintf(f, "  n%d [label=\"#%d ", i, i);
	if (n->domain && *n->domain) {
		put_esc(f, n->domain);
		fprintf(f, "::");
	}
	put_esc(f, n->optype);
	if (n->name && *n->name) {
		fprintf(f, "\\n\\\"");
		put_esc(f, n->name);
		fprintf(f, "\\\"");
	}
	if (fu) {
		fprintf(f, "\\nfuses %d ONNX nodes:", fu->n);
		for (int k = 0; k < fu->n; k++) {
			if (k == MAX_FUSED_SHOWN) {
				fprintf(f, " ...");
				break;
			}
			fprintf(f, "%s", k % 2 ? " + " : k ? " +\\n" : "\\n");
			put_esc(f, fu->strs[k]);
		}
	}
	if (epi) {
		fprintf(f, "\\nepilogue: ");
		put_body(f, epi);
	}
	if (body && body->type == OX_AT_GRAPH && body->g && body->g[0]) {
		fprintf(f, "\\nbody: ");
		put_body(f, body->g[0]);
	}
	/* any other subgraph that survived the pipeline: a note */
	for (int k = 0; k < n->nattr; k++) {
		const ox_attr *a = &n->attrs[k];
		if ((a->type != OX_AT_GRAPH && a->type != OX_AT_GRAPHS) || a == body || !strcmp(a->name, "ox_epilogue"))
			continue;
		int ng = a->type == OX_AT_GRAPH ? 1 : a->n;
		for (int j = 0; j < ng; j++)
			if (a->g && a->g[j]) {
				fprintf(f, "\\nsubgraph ");
				put_esc(f, a->name);
				fprintf(f, ": %d nodes", a->g[j]->nnodes);
			}
	}
	char kern[160];
	kernel_str(g, n, kern, sizeof kern);
	if (*kern)
		fprintf(f, "\\nkernel: %s", kern);
	if (n->scratch && n->out[n->nout - 1] >= 0) {
		const ox_value *s = &g->vals[n->out[n->nout - 1]];
		fprintf(f, "\\nscratch @%lld, %lld B", (long long)s->offset, (long long)ox_rp_stored_bytes(g, s));
	}
	if (noop)
		fprintf(f, "\\nno code (%s)", ox_plan_is_view_node(g, n) ? "a view" : "inputs stored in place");
	fprintf(f, "\"");
	if (noop)
		fprintf(f, ", style=\"rounded,dashed\", fillcolor=\"#ffffff\"");
	else if (fused)
		fprintf(f, ", fillcolor=\"#fde3b8\", peripheries=2");
	else if (n->op == OX_OP_UNKNOWN || (ox_ops[n->op].flags & OX_F_INTERNAL))
		fprintf(f, ", fillcolor=\"#e4e4e4\"");
	fprintf(f, "];\n");
}

static void put_edge(FILE *f, ox_graph *g, const ox_plan_stats *ps, ox_id v, const char *to)
{
	const ox_value *x = &g->vals[v];
	if (x->producer >= 0)
		fprintf(f, "  n%d -> %s [label=\"", x->producer, to);
	else
		fprintf(f, "  v%d -> %s [label=\"", v, to);
	put_tensor(f, g, ps, v);
	fprintf(f, "\"%s];\n", x->kind == OX_V_CONST ? ", color=\"#999999\", fontcolor=\"#666666\"" : "");
}

void ox_rp_dot(FILE *f, ox_graph *g, const char *model)
{
	const ox_plan_stats *ps = ox_plan_get_stats(g);
	ox_ir_fill_uses(g);
	fprintf(f, "digraph \"onnxcc\" {\n");
	fprintf(f, "  graph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", label=\"");
	put_esc(f, model);
	fprintf(f, ": %d nodes", g->nnodes);
	if (ps)
		fprintf(f, ", arena %lld B (lower bound %lld B)", (long long)g->arena_size,
			(long long)g->arena_lower_bound);
	fprintf(f, "\"];\n");
	fprintf(f, "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e3ecfa\", fontname=\"Helvetica\", "
		"fontsize=10];\n");
	fprintf(f, "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#44546a\"];\n");
	/* graph inputs and the constants nodes read, in value order */
	for (int k = 0; k < g->ninputs; k++) {
		fprintf(f, "  v%d [shape=ellipse, fillcolor=\"#c9ecc9\", label=\"input\\n", g->inputs[k]);
		put_esc(f, g->vals[g->inputs[k]].name);
		fprintf(f, "\"];\n");
	}
	char *seen = calloc((size_t)g->nvals + 1, 1);
	if (!seen)
		ox_die("out of memory");
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nin; k++) {
			ox_id v = g->nodes[i].in[k];
			if (v >= 0 && g->vals[v].kind == OX_V_CONST)
				seen[v] = 1;
		}
	for (int k = 0; k < g->noutputs; k++)
		if (g->vals[g->outputs[k]].kind == OX_V_CONST)
			seen[g->outputs[k]] = 1;
	for (int v = 0; v < g->nvals; v++)
		if (seen[v]) {
			fprintf(f, "  v%d [shape=note, style=filled, fillcolor=\"#eeeeee\", fontsize=8, label=\"", v);
			put_esc(f, g->vals[v].name);
			fprintf(f, "\"];\n");
		}
	free(seen);
	for (int i = 0; i < g->nnodes; i++)
		put_node(f, g, i);
	for (int k = 0; k < g->noutputs; k++) {
		const char *name = g->output_names && g->output_names[k] ? g->output_names[k] : g->vals[g->outputs[k]].name;
		fprintf(f, "  out%d [shape=ellipse, fillcolor=\"#f8cdb4\", label=\"output\\n", k);
		put_esc(f, name);
		fprintf(f, "\"];\n");
	}
	char to[32];
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		snprintf(to, sizeof to, "n%d", i);
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				put_edge(f, g, ps, n->in[k], to);
	}
	for (int k = 0; k < g->noutputs; k++) {
		snprintf(to, sizeof to, "out%d", k);
		put_edge(f, g, ps, g->outputs[k], to);
	}
	fprintf(f, "}\n");
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* dot on $PATH */
static int have_dot(void)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char buf[4096];
	while (*path) {
		size_t n = strcspn(path, ":");
		if (n && n + 5 < sizeof buf) {
			snprintf(buf, sizeof buf, "%.*s/dot", (int)n, path);
			if (!access(buf, X_OK))
				return 1;
		}
		path += n + (path[n] == ':');
	}
	return 0;
}

/* the DOT to path, through a temporary name: all or nothing */
static int write_dot(const char *path, ox_graph *g, const char *model)
{
	size_t n = strlen(path) + 8;
	char *tmp = malloc(n);
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "onnxcc: --graph: cannot write %s: %s\n", path, strerror(errno));
		free(tmp);
		return -1;
	}
	ox_rp_dot(f, g, model);
	int bad = ferror(f) | fclose(f);
	if (bad || rename(tmp, path)) {
		fprintf(stderr, "onnxcc: --graph: cannot write %s\n", path);
		remove(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int ox_rp_graph(const char *path, ox_graph *g, const char *model)
{
	if (!has_suffix(path, ".svg"))
		return write_dot(path, g, model);
	size_t n = strlen(path) + 8;
	char *dotp = malloc(n);
	if (!have_dot()) {
		snprintf(dotp, n, "%.*s.dot", (int)(strlen(path) - 4), path);
		int rc = write_dot(dotp, g, model);
		if (!rc)
			fprintf(stderr, "onnxcc: --graph: Graphviz's dot is not on PATH: wrote %s instead of %s "
				"(dot -Tsvg %s -o %s draws it)\n", dotp, path, dotp, path);
		free(dotp);
		return rc;
	}
	snprintf(dotp, n, "%s.dot", path);
	int rc = write_dot(dotp, g, model);
	if (!rc) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			execlp("dot", "dot", "-Tsvg", "-o", path, dotp, (char *)NULL);
			_exit(127);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "onnxcc: --graph: dot -Tsvg -o %s %s failed\n", path, dotp);
			remove(path); /* whatever dot left */
			rc = -1;
		}
		remove(dotp);
	}
	free(dotp);
	return rc;
}
