/* rtdims.c: run-time dims in the generated code (docs/dynamic.md).
 *
 * Every run-time symbol of a graph (ir.h, OX_RT_INPUT / OX_RT_DATA) gets a
 * slot of the run's `int64_t ox_d[]`: the prologue of the run fills the input
 * ones from the shapes the caller passes (and checks every input dim and
 * range), the node that computes a data symbol writes its slot before any
 * later node reads it. An emitter prints a dim with ox_cg_dim: a literal
 * when it is constant (so a static graph prints what it always printed),
 * else a C expression over ox_d[]. A node function whose body names ox_d takes
 * it as its first parameter.
 */
#include "cg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ox_cg_slots(ox_cg *cg, ox_graph *g)
{
	free(cg->slot);
	cg->slot = calloc((size_t)OX_DX(g)->ndexprs + 1, sizeof *cg->slot);
	cg->nslots = 0;
	for (int i = 0; i < OX_DX(g)->ndexprs; i++) {
		const ox_dexpr *e = &OX_DX(g)->dexprs[i];
		cg->slot[i] = e->op == OX_DE_SYM && e->value < 0 && e->rt != OX_RT_NONE ? cg->nslots++ : -1;
	}
}

/* operands are atoms or parenthesized, so every form is one too; dims are
 * never negative, so C's division is the floor */
static void render(ox_cg *cg, ox_dim d, ox_buf *b)
{
	const ox_graph *g = cg->g;
	int64_t v = ox_dim_eval(g, d);
	if (v >= 0) {
		ox_buf_printf(b, "%lld", (long long)v);
		return;
	}
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM) {
		int s = cg->slot && -d - 1 < OX_DX(g)->ndexprs ? cg->slot[-d - 1] : -1;
		if (s < 0)
			ox_die("codegen: dim '%s' is neither bound nor a run-time symbol", e->sym);
		ox_buf_printf(b, "ox_d[%d]", s);
		return;
	}
	static const char *const op[] = {"", " + ", " - ", " * ", " / ", "", " %% ", " > ", " < "};
	ox_buf_puts(b, "(");
	if (e->op == OX_DE_CEILDIV) {
		ox_buf_puts(b, "(");
		render(cg, e->a, b);
		ox_buf_puts(b, " + ");
		render(cg, e->b, b);
		ox_buf_puts(b, " - 1) / ");
		render(cg, e->b, b);
	} else if (e->op == OX_DE_MAX || e->op == OX_DE_MIN) {
		render(cg, e->a, b);
		ox_buf_puts(b, e->op == OX_DE_MAX ? " > " : " < ");
		render(cg, e->b, b);
		ox_buf_puts(b, " ? ");
		render(cg, e->a, b);
		ox_buf_puts(b, " : ");
		render(cg, e->b, b);
	} else if (e->op >= OX_DE_ADD && e->op <= OX_DE_MOD) {
		render(cg, e->a, b);
		ox_buf_puts(b, e->op == OX_DE_MOD ? " % " : op[e->op]);
		render(cg, e->b, b);
	} else {
		ox_die("codegen: bad dim op %d", e->op);
	}
	ox_buf_puts(b, ")");
}

/* the text lives as long as the emitter (ox_cg_text): a caller keeps
 * the pointer, whatever the length, and never copies it into a buffer */
const char *ox_cg_dim(ox_cg *cg, ox_dim d)
{
	ox_buf b = {0};
	render(cg, d, &b);
	const char *r = ox_cg_text(cg, "%s", b.s);
	ox_buf_free(&b);
	return r;
}

const char *ox_cg_numel(ox_cg *cg, const ox_shape *s)
{
	return ox_cg_dim(cg, ox_shape_numel_dim(cg->g, s));
}

int ox_cg_dim_slot(ox_cg *cg, ox_dim d)
{
	if (d >= 0 || -d - 1 >= OX_DX(cg->g)->ndexprs || !cg->slot)
		return -1;
	return cg->slot[-d - 1];
}

void ox_cg_set_dim(ox_cg *cg, int lvl, ox_dim d, const char *expr)
{
	const ox_dexpr *e = ox_dim_rtsym(cg->g, d);
	if (!e || e->rt != OX_RT_DATA)
		ox_die("codegen: ox_cg_set_dim of a dim that is not a data symbol");
	int s = ox_cg_dim_slot(cg, d);
	ox_cg_line(cg, lvl, "ox_d[%d] = %s; /* %s */", s, expr, e->sym);
	ox_cg_line(cg, lvl, "if (ox_d[%d] < 0 || ox_d[%d] > %lld)", s, s, (long long)e->hi);
	if (cg->fails_any) {
		/* a node that returns the API's codes itself (a control node) */
		ox_cg_line(cg, lvl + 1, "return %s_ERR_SHAPE; /* more than the code was planned for */", cg->prefix_upper);
	} else {
		cg->fails_shape = 1;
		ox_cg_line(cg, lvl + 1, "return 2; /* more than the code was planned for */");
	}
}

void ox_cg_check_eq(ox_cg *cg, ox_dim a, ox_dim b, const char *why)
{
	if (a == b)
		return;
	ox_cg_line(cg, 1, "if (%s != %s)", ox_cg_dim(cg, a), ox_cg_dim(cg, b));
	ox_cg_line(cg, 2, "return 2; /* %s */", why);
	cg->fails_shape = 1;
}

/* After the node has set the data dims of its output k: the check that
 * the output's elements fit what the arena holds for it, its bound (cap,
 * --max-elems) when that is less than the product of its dims' tops. In
 * double, which is exact below 2^53 and cannot overflow. */
void ox_cg_check_cap(ox_cg *cg, ox_graph *g, ox_node *n, int k)
{
	ox_value *v = ox_out(g, n, k);
	int64_t top = ox_shape_max_numel(g, &v->shape);
	int defines = 0;
	for (int i = 0; i < v->shape.rank; i++)
		defines |= ox_dim_defined_by(g, v->shape.d[i], n->out[k]);
	if (!defines || v->cap <= 0 || (top >= 0 && top <= v->cap))
		return;
	ox_buf e = {0};
	for (int i = 0; i < v->shape.rank; i++)
		if (v->shape.d[i] != 1)
			ox_buf_printf(&e, "%s(double)%s", e.len ? " * " : "", ox_cg_dim(cg, v->shape.d[i]));
	ox_cg_line(cg, 1, "if (%s > %lld.0)", e.s, (long long)v->cap);
	ox_cg_line(cg, 2, "return 2; /* more elements than the code was planned for */");
	cg->fails_shape = 1;
	ox_buf_free(&e);
}
