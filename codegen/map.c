/* map.c: the emitters by op (the emit column of ir/ops.def: ox_cg_emit_op)
 * and the map, a computation written once for both targets: an index
 * space and the statements of one element (cg.h, ox_map). The C target
 * prints it as a loop nest here; the CUDA target (codegen/cuda/cuda_map.c)
 * runs the node's emitter with cg->map set, which ox_cg_map fills in
 * instead of printing, and prints a kernel of a thread per element.
 */
#include "cg.h"
#include <string.h>

typedef int (*emit_fn)(ox_cg *, ox_graph *, ox_node *);
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) [OX_OP_##id] = emit,
static const emit_fn emitters[OX_NOPS] = {
#include "../ir/ops.def"
};
#undef OP

int ox_cg_emit_op(ox_cg *cg, ox_graph *g, ox_node *n)
{
	if (!emitters[n->op])
		return ox_error(g, n, "no C emitter for this op");
	return emitters[n->op](cg, g, n);
}

const char *ox_cg_map_dim(ox_cg *cg, ox_dim d)
{
	ox_map *M = cg->map;
	if (!M || !M->dim)
		return ox_cg_dim(cg, d);
	char buf[48];
	const char *s = M->dim(M->R, d, buf, sizeof buf);
	M->bad |= !s;
	return s ? ox_cg_text(cg, "%s", s) : "0";
}

/* the C target's rendering of a map's lines: its index type ($I) is
 * ptrdiff_t (cg.h, ox_buf's fields) */
void ox_cg_lines(ox_cg *cg, int lvl, const char *text)
{
	ox_buf b = {.ix = "ptrdiff_t"};
	ox_buf_lines(&b, lvl, text);
	ox_buf_puts(&cg->body, b.s ? b.s : "");
	ox_buf_free(&b);
}

int ox_cg_map(ox_cg *cg, ox_graph *g, const ox_dim *d, int r, const char *pre, const char *body)
{
	ox_map *M = cg->map;
	if (M) {
		for (int k = 0; k < r; k++)
			if (ox_dim_is_rt(g, d[k]) && !M->dim)
				return 0; /* (not described: no kernel) */
		M->ok = 1, M->r = r;
		memcpy(M->d, d, (size_t)r * sizeof *d);
		ox_buf_lines(&M->body, 1, pre);
		ox_buf_lines(&M->body, 1, body);
		return 0;
	}
	for (int k = 0; k < r; k++)
		if (d[k] == 0)
			return 0; /* (no element) */
	ox_cg_lines(cg, 1, pre);
	if (r == 1 && d[0] != 1 && !ox_cg_uses_name(body, "i0")) { /* (one loop: i itself) */
		ox_cg_line(cg, 1, "for (ptrdiff_t i = 0; i < %s; i++) {", ox_cg_dim(cg, d[0]));
		ox_cg_lines(cg, 2, body);
		ox_cg_line(cg, 1, "}");
		return 0;
	}
	/* in a block when it declares i, which counts the elements, or the
	 * indices of dims of 1; then the loops over the others, flat */
	const int lin = ox_cg_uses_name(body, "i");
	int loops = 0, block = lin;
	char v[OX_MAX_RANK][16];
	for (int k = 0; k < r; k++) {
		ox_cg_snprintf(v[k], sizeof v[k], "i%d", k);
		loops += d[k] != 1;
		block |= d[k] == 1 && ox_cg_uses_name(body, v[k]);
	}
	const int lvl = 1 + block;
	if (block)
		ox_cg_line(cg, 1, "{");
	if (lin)
		ox_cg_line(cg, lvl, "ptrdiff_t i = 0;");
	for (int k = 0; k < r; k++)
		if (d[k] == 1 && ox_cg_uses_name(body, v[k]))
			ox_cg_line(cg, lvl, "const ptrdiff_t %s = 0;", v[k]);
	for (int k = 0, l = 0; k < r; k++)
		if (d[k] != 1) {
			l++;
			ox_cg_line(cg, lvl, "for (ptrdiff_t %s = 0; %s < %s; %s++%s)%s", v[k], v[k], ox_cg_dim(cg, d[k]), v[k],
				   l == loops && lin ? ", i++" : "", l == loops ? " {" : "");
		}
	if (!loops && !block)
		ox_cg_line(cg, lvl, "{");
	ox_cg_lines(cg, loops || !block ? lvl + 1 : lvl, body);
	if (loops || !block)
		ox_cg_line(cg, lvl, "}");
	if (block)
		ox_cg_line(cg, 1, "}");
	return 0;
}
