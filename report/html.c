/* html.c: --report=html, the report as one self-contained page.
 *
 * The tables of --report and --report=json (the same numbers: ox_rp_facts,
 * the plan's offsets and lifetimes) and a memory timeline drawn as inline
 * SVG: x is the schedule step (the node position), y the arena offset
 * (0 at the bottom), each tensor the arena holds a rectangle (class "t")
 * from the step that defines it to its last use, over [offset, offset +
 * its stored bytes), coloured by kind, with a <title> tooltip; the peak
 * step (where the lower bound is reached) is a red line. No script, no
 * link to anything: the page draws offline. Every name is HTML-escaped,
 * bytes that are not UTF-8 are shown as \xNN.
 */
#include "report.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* the timeline's geometry in px: plot area and margins */
#define TL_W 1100
#define TL_H 520
#define TL_ML 90
#define TL_MR 20
#define TL_MT 30
#define TL_MB 56

static void put_html(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		int len = ox_rp_utf8_len(p);
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f || !len) {
				fprintf(f, "\\x%02x", *p);
				break;
			}
			fwrite(p, 1, (size_t)len, f);
			p += len;
			continue;
		}
		p++;
	}
}

/* 1234567 -> "1,234,567" */
static const char *num(int64_t v, char *buf)
{
	char t[32];
	int n = snprintf(t, sizeof t, "%lld", (long long)(v < 0 ? -v : v)), o = 0;
	if (v < 0)
		buf[o++] = '-';
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = t[i];
	}
	buf[o] = 0;
	return buf;
}

enum { K_TENSOR, K_INPLACE, K_VIEW, K_OUTPUT, K_SCRATCH, NKINDS };
static const char *const kind_names[NKINDS] = {"tensor", "in place", "view", "graph output", "scratch"};
static const char *const kind_class[NKINDS] = {"kt", "ki", "kv", "ko", "ks"};
static const char *const kind_fill[NKINDS] = {"#5b8fd6", "#4cae7a", "#c9c2f0", "#ef8a4c", "#a8a8a8"};

static int kind_of(ox_graph *g, const ox_plan_stats *ps, ox_id id)
{
	const ox_value *v = &g->vals[id];
	const ox_node *n = &g->nodes[v->producer];
	int64_t off;
	if (n->scratch && n->out[n->nout - 1] == id)
		return K_SCRATCH;
	if (v->is_output)
		return K_OUTPUT;
	if (ox_plan_storage(g, id, &off) != id)
		return K_VIEW;
	if (ps->storage[id] >= 0 && ps->storage[id] != id)
		return K_INPLACE;
	return K_TENSOR;
}

static void put_type(FILE *f, ox_graph *g, const ox_value *v)
{
	char sh[256], lay[64];
	ox_shape_str(g, &v->shape, sh, sizeof sh);
	ox_rp_layout_str(v, lay, sizeof lay);
	fprintf(f, "%s%s%s", ox_dtype_name(v->dtype), sh, lay);
}

/* a step between axis ticks: 1, 2, 5, 10, 20, ... giving at most max ticks */
static int64_t tick_step(int64_t range, int max)
{
	int64_t s = 1;
	for (;;) {
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3)
			if (range / (s * m) < max)
				return s * m;
		s *= 10;
	}
}

static void put_timeline(FILE *f, ox_graph *g, const ox_rp_facts *fa)
{
	const ox_plan_stats *ps = fa->ps;
	int nn = g->nnodes;
	int64_t arena = g->arena_size;
	char b1[32], b2[32];
	if (nn <= 0 || arena <= 0) {
		fprintf(f, "<p>No arena: nothing to draw.</p>\n");
		return;
	}
	double pw = TL_W - TL_ML - TL_MR, ph = TL_H - TL_MT - TL_MB;
	double sx = pw / nn, sy = ph / (double)arena, y0 = TL_MT + ph;
	fprintf(f, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n", TL_W, TL_H, TL_W, TL_H);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#888\"/>\n",
		TL_ML, TL_MT, pw, ph);
	/* y axis: arena offsets in bytes */
	int64_t ys = tick_step(arena, 8);
	for (int64_t b = 0; b <= arena; b += ys) {
		double y = y0 - (double)b * sy;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e2e2e2\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			TL_ML, y, TL_ML + pw, y, TL_ML - 6, y + 4, num(b, b1));
	}
	fprintf(f, "<text transform=\"translate(16,%.1f) rotate(-90)\" text-anchor=\"middle\">arena offset "
		"(bytes)</text>\n", TL_MT + ph / 2);
	/* x axis: schedule steps, a tick in the middle of a step */
	int64_t xs = tick_step(nn, 16);
	for (int64_t s = 0; s < nn; s += xs) {
		double x = TL_ML + ((double)s + 0.5) * sx;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%lld</text>\n",
			x, y0, x, y0 + 5, x, y0 + 18, (long long)s);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">schedule step (node position, %d nodes)"
		"</text>\n", TL_ML + pw / 2, TL_H - 8, nn);
	/* the tensors */
	fprintf(f, "<g id=\"tensors\">\n");
	for (int i = 0; i < g->nvals; i++) {
		const ox_value *v = &g->vals[i];
		int64_t off = 0;
		if (v->producer < 0 || strcmp(ox_rp_place(g, i, &off), "arena") || off < 0 || v->first < 0)
			continue;
		int k = kind_of(g, ps, i);
		int64_t bytes = ox_rp_stored_bytes(g, v), end = (v->last < nn ? v->last : nn - 1) + 1;
		if (end <= v->first)
			end = v->first + 1;
		double h = (double)bytes * sy;
		fprintf(f, "<rect class=\"t %s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
			"<title>%%%d ", kind_class[k], TL_ML + (double)v->first * sx, y0 - (double)(off + bytes) * sy,
			(double)(end - v->first) * sx, h < 0.5 ? 0.5 : h, kind_fill[k], i);
		put_html(f, v->name);
		fprintf(f, "\n");
		put_type(f, g, v);
		fprintf(f, "\n%s B at [%s, ", num(bytes, b1), num(off, b2));
		fprintf(f, "%s)\nsteps %lld to %lld%s\n%s", num(off + bytes, b1), (long long)v->first,
			(long long)v->last, v->last >= nn ? " (the end)" : "", kind_names[k]);
		if (k == K_VIEW || k == K_INPLACE) {
			int64_t o;
			fprintf(f, " of %%%d", k == K_VIEW ? ox_plan_storage(g, i, &o) : ps->storage[i]);
		}
		fprintf(f, "</title></rect>\n");
	}
	fprintf(f, "</g>\n");
	/* the lower bound and the peak step */
	double yl = y0 - (double)g->arena_lower_bound * sy;
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" stroke-dasharray=\"6 4\"/>\n",
		TL_ML, yl, TL_ML + pw, yl);
	double xp = TL_ML + ((double)ps->peak_step + 0.5) * sx;
	fprintf(f, "<line id=\"peak\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" "
		"stroke-width=\"2\"/>\n", xp, TL_MT - 4, xp, y0);
	int right = xp > TL_ML + pw * 0.6;
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#c0392b\" text-anchor=\"%s\">peak: %s bytes live at step %d",
		xp + (right ? -4 : 4), TL_MT - 10, right ? "end" : "start", num(g->arena_lower_bound, b1),
		ps->peak_step);
	if (fa->peak) {
		fprintf(f, " (");
		put_html(f, fa->peak->optype);
		fprintf(f, ")");
	}
	fprintf(f, "; arena %s bytes</text>\n", num(arena, b2));
	fprintf(f, "</svg>\n<p class=\"legend\">");
	for (int k = 0; k < NKINDS; k++)
		fprintf(f, "<span><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"%s\"/></svg> "
			"%s</span>", kind_fill[k], kind_names[k]);
	fprintf(f, "<span><svg width=\"18\" height=\"12\"><line x1=\"0\" y1=\"6\" x2=\"18\" y2=\"6\" "
		"stroke=\"#c0392b\" stroke-dasharray=\"6 4\"/></svg> lower bound</span></p>\n");
}

static void row(FILE *f, const char *k)
{
	fprintf(f, "<tr><th>%s</th><td>", k);
}

static void put_page(FILE *f, ox_graph *g, const ox_rp_info *in, const ox_rp_facts *fa)
{
	const ox_plan_stats *ps = fa->ps;
	const ox_cg_stats *cs = in->cs;
	char b1[32], b2[32], b3[32];
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>onnxcc report: ");
	put_html(f, in->model);
	fprintf(f, "</title>\n<style>\n"
		"body{font:14px/1.45 sans-serif;margin:24px;color:#222;background:#fff}\n"
		"h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
		"table{border-collapse:collapse;margin:6px 0 14px}\n"
		"th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}\n"
		"thead th{background:#eef2f7}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
		"code,td.m{font-family:monospace}\n"
		"rect.t{stroke:#fff;stroke-width:0.5}rect.t:hover{stroke:#000;stroke-width:1.5}\n"
		"rect.kv{fill-opacity:0.55}\n"
		".legend span{margin-right:16px}\n"
		"</style>\n</head>\n<body>\n<h1>onnxcc report: ");
	put_html(f, in->model);
	fprintf(f, " &rarr; ");
	put_html(f, in->out);
	fprintf(f, "</h1>\n<h2>Summary</h2>\n<table>\n");
	row(f, "arena");
	fprintf(f, "%s bytes; lower bound %s (ratio %.3f)</td></tr>\n", num(g->arena_size, b1),
		num(g->arena_lower_bound, b2), fa->ratio);
	row(f, "schedule");
	put_html(f, ps->schedule);
	fprintf(f, "; the imported order needs %s (lower bound %s): %s bytes saved</td></tr>\n",
		num(ps->onnx_order_arena, b1), num(ps->onnx_order_lb, b2), num(ps->onnx_order_arena - g->arena_size, b3));
	row(f, "placement");
	put_html(f, ps->strategy);
	fprintf(f, "; %d in place, %d views, %d concats in place</td></tr>\n", ps->ninplace, ps->nviews, ps->nconcat);
	row(f, "without reuse");
	fprintf(f, "%s bytes; onnx2c-style slot unions %s</td></tr>\n", num(ps->no_reuse, b1),
		num(ps->slot_unions, b2));
	row(f, "weights");
	fprintf(f, "%s bytes (--weights %s)</td></tr>\n", num((int64_t)cs->weights_bytes, b1),
		ox_rp_wnames[in->weights]);
	row(f, "flops");
	fprintf(f, "%s per run (2 per multiply-add of Conv, Gemm, MatMul, Attention, RNN, GRU, LSTM)</td></tr>\n",
		num(fa->flops, b1));
	row(f, "target");
	fprintf(f, "--cpu %s (%d-lane vectors)</td></tr>\n", g->target->name, g->target->vw);
	row(f, "code");
	fprintf(f, "%s bytes of C (%d node functions, %d nodes need none, %s bytes of kernels); .text roughly %s "
		"bytes at -O2</td></tr>\n", num((int64_t)cs->code_bytes, b1), cs->nfuncs, cs->nviews,
		num((int64_t)cs->kernel_bytes, b2), num(fa->text, b3));
	row(f, "fused");
	fprintf(f, "%d functions compute %d ONNX nodes</td></tr>\n</table>\n", fa->groups, fa->covered);

	fprintf(f, "<h2>Memory timeline</h2>\n<p>Each rectangle is a tensor in the arena, from the step that "
		"writes it to its last use, at its offset; hover for its name.</p>\n");
	put_timeline(f, g, fa);

	fprintf(f, "<h2>Largest live set: %s bytes at step %d", num(g->arena_lower_bound, b1), ps->peak_step);
	if (fa->peak) {
		fprintf(f, " (");
		put_html(f, fa->peak->optype);
		fprintf(f, " &quot;");
		put_html(f, fa->peak->name);
		fprintf(f, "&quot;)");
	}
	fprintf(f, ", %d buffer%s</h2>\n<table>\n<thead><tr><th>id</th><th>name</th><th>type</th><th>bytes</th>"
		"<th>offset</th></tr></thead>\n<tbody>\n", ps->npeak_live, ps->npeak_live == 1 ? "" : "s");
	for (int i = 0; i < ps->npeak_live; i++) {
		const ox_value *v = &g->vals[ps->peak_live[i]];
		fprintf(f, "<tr><td class=\"n\">%%%d</td><td class=\"m\">", ps->peak_live[i]);
		put_html(f, v->name);
		fprintf(f, "</td><td class=\"m\">");
		put_type(f, g, v);
		fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", num(ox_rp_value_bytes(g, v), b1),
			num(v->offset, b2));
	}
	fprintf(f, "</tbody>\n</table>\n");

	if (fa->groups) {
		fprintf(f, "<h2>Fused: %d functions compute %d ONNX nodes</h2>\n<table>\n<thead><tr><th>function</th>"
			"<th>ONNX nodes</th></tr></thead>\n<tbody>\n", fa->groups, fa->covered);
		for (int i = 0; i < g->nnodes; i++) {
			const ox_node *n = &g->nodes[i];
			const ox_attr *a = ox_rp_fused(n);
			if (!a)
				continue;
			fprintf(f, "<tr><td class=\"m\">node%d_%s</td><td class=\"m\">", i, ox_ops[n->op].name);
			for (int k = 0; k < a->n; k++) {
				fprintf(f, "%s", k ? " + " : "");
				put_html(f, a->strs[k]);
			}
			fprintf(f, "</td></tr>\n");
		}
		fprintf(f, "</tbody>\n</table>\n");
	}

	fprintf(f, "<h2>Tensors</h2>\n<p>Every node output: where its bytes are (the arena, or a view of an input "
		"or of the weights), its storage class (the value whose bytes it shares) and its lifetime in schedule "
		"steps (%d: the end).</p>\n<table id=\"tensors-table\">\n<thead><tr><th>id</th><th>name</th>"
		"<th>type</th><th>bytes</th><th>place</th><th>offset</th><th>storage</th><th>first</th><th>last</th>"
		"<th>output</th></tr></thead>\n<tbody>\n", g->nnodes);
	for (int i = 0; i < g->nvals; i++) {
		const ox_value *v = &g->vals[i];
		if (v->producer < 0)
			continue;
		int64_t off = 0;
		const char *place = ox_rp_place(g, i, &off);
		fprintf(f, "<tr><td class=\"n\">%%%d</td><td class=\"m\">", i);
		put_html(f, v->name);
		fprintf(f, "</td><td class=\"m\">");
		put_type(f, g, v);
		fprintf(f, "</td><td class=\"n\">%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%d</td>"
			"<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>%s</td></tr>\n",
			num(ox_rp_value_bytes(g, v), b1), place, num(off, b2), ps->storage[i], (long long)v->first,
			(long long)v->last, v->is_output ? "yes" : "");
	}
	fprintf(f, "</tbody>\n</table>\n</body>\n</html>\n");
}

int ox_rp_html(const char *path, ox_graph *g, const ox_rp_info *in)
{
	ox_rp_facts fa;
	if (ox_rp_fill_facts(g, in, &fa)) {
		fprintf(stderr, "onnxcc: --report=html: no memory plan to report\n");
		return -1;
	}
	size_t n = strlen(path) + 8;
	char *tmp = malloc(n);
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "onnxcc: --report=html: cannot write %s: %s\n", path, strerror(errno));
		free(tmp);
		return -1;
	}
	put_page(f, g, in, &fa);
	int bad = ferror(f) | fclose(f);
	if (bad || rename(tmp, path)) {
		fprintf(stderr, "onnxcc: --report=html: cannot write %s\n", path);
		remove(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}
