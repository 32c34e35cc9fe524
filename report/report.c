/* report.c: --report (text) and --report=json, and the helpers the other
 * forms share (report/html.c, report/dot.c).
 *
 * The numbers come from the plan (g->arena_size, the lower bound, each
 * value's offset and lifetime, ox_plan_get_stats) and from codegen's
 * statistics; nothing is recomputed here but sums and ratios, so the three
 * forms of the report always agree.
 */
#include "report.h"
#include <stdlib.h>
#include <string.h>

/* .text bytes per byte of generated C at -O2 on x86-64: 0.11 to 0.30 on
 * the zoo (docs/footprint.md), so a rough guide, not a promise. */
#define TEXT_PER_C_BYTE 0.2

const char *const ox_rp_wnames[] = {"embed", "external", "c", "array"};

/* the code of node n on either target: its C emitter's family (the emit
 * column of ir/ops.def, emit_nn -> nn), its CUDA kernel family
 * (ox_cu_family), or none for a view or a Concat written in place */
static const char *const c_family[OX_NOPS] = {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) [OX_OP_##id] = #emit + 5,
#include "../ir/ops.def"
#undef OP
};

static const char *node_code(ox_graph *g, const ox_node *n, int cuda)
{
	if (ox_plan_is_noop(g, (ox_node *)n))
		return "no code";
	if (!cuda)
		return c_family[n->op];
	const char *f = ox_cu_family(g, n);
	return strcmp(f, "none") ? f : "one thread";
}

/* the graph's (op, code) pairs in the order they first appear, and how
 * many nodes each: op[], code[] and count[] of g->nnodes; their number */
static int op_codes(ox_graph *g, int cuda, int *op, const char **code, int *count)
{
	int np = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		if (n->dead)
			continue;
		const char *c = node_code(g, n, cuda);
		int k = 0;
		while (k < np && (op[k] != n->op || strcmp(code[k], c)))
			k++;
		if (k == np)
			op[np] = n->op, code[np] = c, count[np++] = 0;
		count[k]++;
	}
	return np;
}

int64_t ox_rp_value_bytes(const ox_graph *g, const ox_value *v)
{
	int64_t n = ox_shape_numel(&v->shape);
	if (n < 0) /* run-time dims: at the most */
		n = v->cap > 0 ? v->cap : ox_shape_max_numel(g, &v->shape);
	return n < 0 ? 0 : n * (int64_t)ox_dtype_size(v->dtype);
}

int64_t ox_rp_stored_bytes(const ox_graph *g, const ox_value *v)
{
	int64_t n = ox_value_max_storage(g, v);
	return n < 0 ? 0 : n * (int64_t)ox_dtype_size(v->dtype);
}

const char *ox_rp_place(ox_graph *g, ox_id id, int64_t *off)
{
	ox_id r = ox_plan_storage(g, id, off);
	if (g->vals[r].kind == OX_V_INPUT)
		return "input";
	if (g->vals[r].kind == OX_V_CONST)
		return "weights";
	*off = g->vals[id].offset;
	return "arena";
}

const ox_attr *ox_rp_fused(const ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_fused");
	return a && a->type == OX_AT_STRINGS && a->n > 1 ? a : NULL;
}

void ox_rp_layout_str(const ox_value *v, char *buf, size_t n)
{
	buf[0] = 0;
	if (!v->layout || v->layout >= OX_NLAYOUTS)
		return;
	int np = ox_layout_nparams(v->layout);
	size_t at = (size_t)snprintf(buf, n, "@%s(", ox_layout_names[v->layout]);
	for (int k = 0; k < np && at < n; k++)
		at += (size_t)snprintf(buf + at, n - at, "%s%d", k ? "," : "", v->lp[k]);
	if (at < n)
		snprintf(buf + at, n - at, ")");
}

int ox_rp_utf8_len(const unsigned char *s)
{
	int len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || (len == 2 && s[0] < 0xc2) || (len == 4 && s[0] > 0xf4))
		return 0;
	for (int k = 1; k < len; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	if ((len == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (len == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (len == 4 && s[0] == 0xf0 && s[1] < 0x90) || (len == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0; /* overlong, a surrogate, past U+10FFFF */
	return len;
}

int ox_rp_fill_facts(ox_graph *g, const ox_rp_info *in, ox_rp_facts *fa)
{
	memset(fa, 0, sizeof *fa);
	fa->ps = ox_plan_get_stats(g);
	if (!fa->ps)
		return -1;
	fa->ratio = g->arena_lower_bound ? (double)g->arena_size / (double)g->arena_lower_bound : 1.0;
	fa->text = (int64_t)((double)in->cs->code_bytes * TEXT_PER_C_BYTE);
	fa->peak = fa->ps->peak_step < g->nnodes ? &g->nodes[fa->ps->peak_step] : NULL;
	for (int i = 0; i < g->nnodes; i++) {
		fa->flops += ox_ir_flops(g, &g->nodes[i]);
		const ox_attr *a = ox_rp_fused(&g->nodes[i]);
		if (a)
			fa->groups++, fa->covered += a->n;
	}
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 32)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void ox_rp_text(FILE *f, ox_graph *g, const ox_rp_info *in)
{
	ox_rp_facts fa;
	if (ox_rp_fill_facts(g, in, &fa))
		return;
	const ox_plan_stats *ps = fa.ps;
	const ox_cg_stats *cs = in->cs;
	const ox_node *pn = fa.peak;
	fprintf(f, "onnxcc report: %s -> %s\n", in->model, in->out);
	fprintf(f, "  arena          %lld bytes; lower bound %lld (ratio %.3f)\n", (long long)g->arena_size,
		(long long)g->arena_lower_bound, fa.ratio);
	fprintf(f, "  schedule       %s; the imported order needs %lld (lower bound %lld): %lld bytes saved\n",
		ps->schedule, (long long)ps->onnx_order_arena, (long long)ps->onnx_order_lb,
		(long long)(ps->onnx_order_arena - g->arena_size));
	fprintf(f, "  placement      %s; %d in place, %d views, %d concats in place\n", ps->strategy, ps->ninplace,
		ps->nviews, ps->nconcat);
	fprintf(f, "  without reuse  %lld bytes; onnx2c-style slot unions %lld\n", (long long)ps->no_reuse,
		(long long)ps->slot_unions);
	fprintf(f, "  weights        %zu bytes (--weights %s)\n", cs->weights_bytes, ox_rp_wnames[in->weights]);
	fprintf(f, "  flops          %lld per run (2 per multiply-add of Conv, Gemm, MatMul, Attention, RNN, GRU, LSTM)\n",
		(long long)fa.flops);
	fprintf(f, "  target         --cpu %s (%d-lane vectors)\n", g->target->name, g->target->vw);
	fprintf(f, "  code           %zu bytes of C (%d node functions, %d nodes need none, %zu bytes of "
		"kernels); .text roughly %lld bytes at -O2\n",
		cs->code_bytes, cs->nfuncs, cs->nviews, cs->kernel_bytes, (long long)fa.text);
	if (cs->cuda)
		fprintf(f, "  cuda           %d nodes without a parallel kernel of their own (%d on one device thread, %d "
			"a thread per task, %d on the host)%s%s\n",
			cs->nserial + cs->ntasks + cs->nhost, cs->nserial, cs->ntasks, cs->nhost, cs->slow ? ": " : "",
			cs->slow ? cs->slow : "");
	int *op = malloc(sizeof *op * (g->nnodes + 1)), *count = malloc(sizeof *count * (g->nnodes + 1));
	const char **code = malloc(sizeof *code * (g->nnodes + 1));
	if (op && count && code) {
		int np = op_codes(g, cs->cuda, op, code, count);
		fprintf(f, "  kernels        by op (nodes, %s):", cs->cuda ? "CUDA kernel family" : "C emitter");
		for (int k = 0; k < np; k++)
			fprintf(f, "%s %s %d %s", k ? "," : "", ox_ops[op[k]].name, count[k], code[k]);
		fprintf(f, "\n");
	}
	free(op), free(count), free(code);
	/* what the optimizer fused: one generated function for several ONNX nodes */
	fprintf(f, "  fused          %d functions compute %d ONNX nodes%s\n", fa.groups, fa.covered,
		fa.groups ? ":" : "");
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		const ox_attr *a = ox_rp_fused(n);
		if (!a)
			continue;
		fprintf(f, "    node%d_%s:", i, ox_ops[n->op].name);
		for (int k = 0; k < a->n; k++)
			fprintf(f, "%s %s", k ? " +" : "", a->strs[k]);
		fprintf(f, "\n");
	}
	fprintf(f, "  largest live set: %lld bytes at node %d", (long long)g->arena_lower_bound, ps->peak_step);
	if (pn)
		fprintf(f, " (%s \"%s\")", pn->optype, pn->name);
	fprintf(f, ", %d buffer%s:\n", ps->npeak_live, ps->npeak_live == 1 ? "" : "s");
	for (int i = 0; i < ps->npeak_live; i++) {
		const ox_value *v = &g->vals[ps->peak_live[i]];
		char sh[256];
		ox_shape_str(g, &v->shape, sh, sizeof sh);
		fprintf(f, "    %%%d %-32s %s%-20s %10lld bytes at %lld\n", ps->peak_live[i], v->name,
			ox_dtype_name(v->dtype), sh, (long long)ox_rp_value_bytes(g, v), (long long)v->offset);
	}
}

void ox_rp_json(FILE *f, ox_graph *g, const ox_rp_info *in)
{
	ox_rp_facts fa;
	if (ox_rp_fill_facts(g, in, &fa))
		return;
	const ox_plan_stats *ps = fa.ps;
	const ox_cg_stats *cs = in->cs;
	const ox_node *pn = fa.peak;
	fprintf(f, "{\n  \"model\": ");
	json_str(f, in->model);
	fprintf(f, ",\n  \"arena_bytes\": %lld,\n  \"lower_bound_bytes\": %lld,\n  \"ratio\": %.4f,\n",
		(long long)g->arena_size, (long long)g->arena_lower_bound, fa.ratio);
	fprintf(f, "  \"schedule\": \"%s\",\n  \"placement\": \"%s\",\n", ps->schedule, ps->strategy);
	fprintf(f, "  \"imported_order\": {\"arena_bytes\": %lld, \"lower_bound_bytes\": %lld},\n",
		(long long)ps->onnx_order_arena, (long long)ps->onnx_order_lb);
	fprintf(f, "  \"no_reuse_bytes\": %lld,\n  \"slot_unions_bytes\": %lld,\n  \"inplace\": %d,\n  \"views\": %d,\n"
		"  \"concats_in_place\": %d,\n",
		(long long)ps->no_reuse, (long long)ps->slot_unions, ps->ninplace, ps->nviews, ps->nconcat);
	fprintf(f, "  \"weights_bytes\": %zu,\n  \"weights_mode\": \"%s\",\n", cs->weights_bytes,
		ox_rp_wnames[in->weights]);
	fprintf(f, "  \"flops\": %lld,\n  \"cpu\": \"%s\",\n", (long long)fa.flops, g->target->name);
	fprintf(f, "  \"code_bytes\": %zu,\n  \"kernel_bytes\": %zu,\n  \"node_functions\": %d,\n"
		"  \"nodes_without_code\": %d,\n  \"text_estimate_bytes\": %lld,\n",
		cs->code_bytes, cs->kernel_bytes, cs->nfuncs, cs->nviews, (long long)fa.text);
	if (cs->cuda)
		fprintf(f, "  \"cuda\": {\"one_device_thread\": %d, \"thread_per_task\": %d, \"host\": %d},\n",
			cs->nserial, cs->ntasks, cs->nhost);
	int *op = malloc(sizeof *op * (g->nnodes + 1)), *count = malloc(sizeof *count * (g->nnodes + 1));
	const char **code = malloc(sizeof *code * (g->nnodes + 1));
	int np = op && count && code ? op_codes(g, cs->cuda, op, code, count) : 0;
	fprintf(f, "  \"kernels\": [");
	for (int k = 0; k < np; k++)
		fprintf(f, "%s\n    {\"op\": \"%s\", \"nodes\": %d, \"%s\": \"%s\"}", k ? "," : "", ox_ops[op[k]].name,
			count[k], cs->cuda ? "cuda" : "c", code[k]);
	fprintf(f, "%s],\n", np ? "\n  " : "");
	free(op), free(count), free(code);
	fprintf(f, "  \"fused\": [");
	int nf = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ox_node *n = &g->nodes[i];
		const ox_attr *a = ox_rp_fused(n);
		if (!a)
			continue;
		fprintf(f, "%s\n    {\"function\": \"node%d_%s\", \"nodes\": [", nf++ ? "," : "", i, ox_ops[n->op].name);
		for (int k = 0; k < a->n; k++) {
			fprintf(f, "%s", k ? ", " : "");
			json_str(f, a->strs[k]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "%s],\n", nf ? "\n  " : "");
	fprintf(f, "  \"peak\": {\"step\": %d, \"node\": ", ps->peak_step);
	json_str(f, pn ? pn->name : "");
	fprintf(f, ", \"op\": ");
	json_str(f, pn ? pn->optype : "");
	fprintf(f, ", \"bytes\": %lld, \"buffers\": [", (long long)g->arena_lower_bound);
	for (int i = 0; i < ps->npeak_live; i++)
		fprintf(f, "%s%d", i ? ", " : "", ps->peak_live[i]);
	fprintf(f, "]},\n  \"tensors\": [");
	int first = 1;
	for (int i = 0; i < g->nvals; i++) {
		const ox_value *v = &g->vals[i];
		if (v->producer < 0)
			continue;
		int64_t off = 0;
		const char *place = ox_rp_place(g, i, &off);
		fprintf(f, "%s\n    {\"id\": %d, \"name\": ", first ? "" : ",", i);
		json_str(f, v->name);
		fprintf(f, ", \"dtype\": \"%s\", \"shape\": [", ox_dtype_name(v->dtype));
		for (int d = 0; d < v->shape.rank; d++)
			fprintf(f, "%s%lld", d ? ", " : "", (long long)v->shape.d[d]);
		fprintf(f, "], \"bytes\": %lld, \"place\": \"%s\", \"offset\": %lld, \"storage\": %d, "
			"\"first\": %lld, \"last\": %lld, \"output\": %s}",
			(long long)ox_rp_value_bytes(g, v), place, (long long)off, ps->storage[i], (long long)v->first,
			(long long)v->last, v->is_output ? "true" : "false");
		first = 0;
	}
	fprintf(f, "\n  ]\n}\n");
}
