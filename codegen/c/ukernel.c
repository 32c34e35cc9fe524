/* ukernel.c: the shared register-blocked micro-kernel and its epilogues
 * (see ukernel.h). The kernel is printed unrolled, one named accumulator
 * per row and vector (sR_O), so any C compiler keeps them in registers;
 * the vector type and its operations are templates/vf.c's, the
 * transcendental functions of an epilogue templates/vmath.c's.
 */
#include "ukernel.h"
#include <stdio.h>
#include <string.h>

void ox_cg_use_vf(ox_cg *cg)
{
	char def[96];
	ox_cg_snprintf(def, sizeof def, "#define OX_VW %d /* f32 lanes per vector (--cpu %s) */\n", cg->g->target->vw,
		 cg->g->target->name);
	ox_cg_helper(cg, "vf/width", def);
	if (ox_cg_use(cg, "vf", OX_F32))
		ox_die("templates/vf.c is missing");
}

void ox_uk_use(ox_cg *cg)
{
	ox_cg_use_vf(cg);
	ox_cg_helper(cg, "ukgeo",
		     "/* the reduction walk of a micro-kernel: n1 x n2 x n3 taps at strides s1,\n"
		     " * s2, s3 (floats), each a run of kc rows (kcl in the last i1), rows ac\n"
		     " * floats apart; yo: floats between a blocked output's channel vectors */\n"
		     "typedef struct {\n\tlong n1, s1, n2, s2, n3, s3, kc, kcl, ac, yo, pf;\n} ox_ukgeo;\n"
		     "/* a hint that memory will be read (the next group's weights) */\n"
		     "#if defined(__GNUC__) || defined(__clang__)\n#define OX_PREFETCH(p) __builtin_prefetch(p)\n"
		     "#else\n#define OX_PREFETCH(p) ((void)0)\n#endif\n");
}

/* ---- epilogues ---- */

static void tile_store(ox_cg *cg, ox_buf *t, const ox_epi *E, const ox_ukshape *s, int b);

int ox_uk_epi(ox_cg *cg, ox_graph *g, ox_node *n, ox_epi *E)
{
	memset(E, 0, sizeof *E);
	E->body = ox_ir_epilogue(n);
	if (!E->body)
		return 0;
	E->first = ox_ir_epilogue_first(n);
	E->n = n->nin - E->first;
	if (E->n > OX_MAXEO)
		return ox_error(g, n, "more than %d epilogue operands", OX_MAXEO);
	/* element counts as dims: equal when the shapes are (run-time ones too) */
	ox_dim on = ox_shape_numel_dim(g, &ox_out(g, n, 0)->shape);
	for (int j = 0; j < E->n; j++) {
		ox_value *v = ox_in(g, n, E->first + j);
		ox_dim m = ox_shape_numel_dim(g, &v->shape);
		E->kind[j] = m == 1 ? (v->kind == OX_V_CONST ? OX_EO_LIT : OX_EO_SCALAR) : m == on ? OX_EO_FULL : OX_EO_CHAN;
		if (E->kind[j] == OX_EO_LIT)
			E->lit[j] = ox_tensor_get_f64(v->data, 0);
	}
	for (int i = 0; i < E->body->nnodes; i++)
		if (!ox_cg_vbody_ok(E->body, &E->body->nodes[i]))
			return ox_error(g, n, "epilogue op %s is not supported", E->body->nodes[i].optype);
	ox_cg_use_vf(cg);
	if (ox_cg_use(cg, "vmath", OX_F32))
		ox_die("templates/vmath.c is missing");
	/* kernels are named by the rendering of one stored vector */
	ox_buf t = {0};
	ox_ukshape one = {.rows = 1, .ocb = 1, .ar = 1, .ac1 = 1, .ws = 1, .yr = 1, .yo_b = 1, .bias = 1};
	tile_store(cg, &t, E, &one, 1);
	E->id = ox_cg_intern(cg, t.s);
	ox_buf_free(&t);
	return 0;
}

/* the stores of a tile: accumulator sR_O, through the epilogue if any, to
 * y + R yr + O (b or q->yo); epilogue operand j at e[j], offset like y (full)
 * or to the tile's first channel; the last vector of a partial tile only
 * reads and writes its first s->tail lanes */
static void tile_store(ox_cg *cg, ox_buf *t, const ox_epi *E, const ox_ukshape *s, int b)
{
	for (int r = 0; r < s->rows; r++)
		for (int o = 0; o < s->ocb; o++) {
			char off[48] = "", acc[32], yp[96], ld[32], st[32];
			if (o && s->yo_b)
				ox_cg_snprintf(off, sizeof off, " + %d", o * b);
			else if (o)
				ox_cg_snprintf(off, sizeof off, o == 1 ? " + q->yo" : " + %d * q->yo", o);
			int part = s->tail && o == s->ocb - 1;
			ox_cg_snprintf(ld, sizeof ld, part ? "ox_vf_load_n(%%s, %d)" : "ox_vf_load(%%s)", s->tail);
			ox_cg_snprintf(st, sizeof st, part ? ", %d" : "", s->tail);
			ox_cg_snprintf(acc, sizeof acc, "s%d_%d", r, o);
			ox_cg_snprintf(yp, sizeof yp, "y + %ld%s", (long)r * s->yr, off);
			if (!E->body) {
				ox_buf_printf(t, "\tox_vf_store%s(%s, %s%s);\n", part ? "_n" : "", yp, acc, st);
				continue;
			}
			char in[OX_MAXEO + 1][160], ptr[96];
			const char *inp[OX_MAXEO + 1];
			ox_cg_snprintf(in[0], sizeof in[0], "%s", acc);
			for (int j = 0; j < E->n; j++) {
				switch (E->kind[j]) {
				case OX_EO_LIT:
					ox_cg_snprintf(in[j + 1], sizeof in[j + 1], "ox_vf_set1(%s)", ox_cg_lit(OX_F32, E->lit[j]));
					break;
				case OX_EO_SCALAR:
					ox_cg_snprintf(in[j + 1], sizeof in[j + 1], "ox_vf_set1(e[%d][0])", j);
					break;
				case OX_EO_CHAN:
					ox_cg_snprintf(ptr, sizeof ptr, "e[%d] + %d", j, o * b);
					ox_cg_snprintf(in[j + 1], sizeof in[j + 1], ld, ptr);
					break;
				default:
					ox_cg_snprintf(ptr, sizeof ptr, "e[%d] + %ld%s", j, (long)r * s->yr, off);
					ox_cg_snprintf(in[j + 1], sizeof in[j + 1], ld, ptr);
				}
			}
			for (int j = 0; j <= E->n; j++)
				inp[j] = in[j];
			ox_buf_puts(t, "\t{\n");
			ox_cg_vbody(cg, t, E->body, inp, "const ox_vf r", 2, 0);
			ox_buf_printf(t, "\t\tox_vf_store%s(%s, r%s);\n\t}\n", part ? "_n" : "", yp, st);
		}
}

void ox_uk_store(ox_cg *cg, ox_buf *t, const ox_epi *E, const ox_ukshape *s)
{
	tile_store(cg, t, E, s, cg->g->target->vw);
}

/* ---- the kernel ---- */

const char *ox_uk_kernel(ox_cg *cg, const ox_ukshape *s, const ox_epi *E)
{
	static char name[192];
	int b = cg->g->target->vw;
	char es[16] = "", ys[32] = "", ts[16] = "";
	if (E->body)
		ox_cg_snprintf(es, sizeof es, "_e%d", E->id);
	if (s->yo_b)
		ox_cg_snprintf(ys, sizeof ys, "_y%ld", s->yr);
	else if (s->yr != b)
		ox_cg_snprintf(ys, sizeof ys, "_p%ld", s->yr);
	if (s->tail)
		ox_cg_snprintf(ts, sizeof ts, "_t%d", s->tail);
	char rws[48] = "";
	if (s->rw)
		ox_cg_snprintf(rws, sizeof rws, "_r%dx%ld", s->rw, s->rs);
	ox_epi none;
	memset(&none, 0, sizeof none);
	if (s->raw)
		E = &none, es[0] = 0;
	char as[32];
	if (s->arq)
		ox_cg_snprintf(as, sizeof as, "q");
	else
		ox_cg_snprintf(as, sizeof as, "%ld", s->ar);
	ox_cg_snprintf(name, sizeof name, "ox_uk%dx%d_a%s%s%s_w%ld%s%s",
		 s->rows, s->ocb, as, rws, s->ac1 ? "" : "_c", s->ws, ys, ts);
	ox_cg_snappend(name, sizeof name, "%s%s%s%s",
		 s->acc ? "_acc" : s->bias ? "" : "_z", s->pf ? "_pf" : "", s->raw ? "_raw" : "", es);
	ox_buf t = {0};
	if (s->arq)
		ox_buf_printf(&t, "/* micro-kernel: %d rows (inputs q->s1 floats apart) x %d vectors, weight rows %ld floats "
				  "apart%s */\n",
			      s->rows, s->ocb, s->ws, s->tail ? ", the last vector partial" : "");
	else
		ox_buf_printf(&t, "/* micro-kernel: %d rows (inputs %ld floats apart) x %d vectors, weight rows %ld floats "
				  "apart%s */\n",
			      s->rows, s->ar, s->ocb, s->ws, s->tail ? ", the last vector partial" : "");
	ox_buf_printf(&t, "OX_STATIC OX_UNUSED void %s(const float *restrict a, const float *restrict w, float *restrict y,\n"
			  "\t\tconst float *restrict bias, const ox_ukgeo *restrict q%s)\n{\n", name,
		      E->n ? ", const float *const *e" : "");
	for (int r = 0; r < s->rows; r++) {
		ox_buf_puts(&t, "\tox_vf");
		for (int o = 0; o < s->ocb; o++) {
			if (s->acc) { /* the sums so far, where they will be stored */
				char off[48] = "";
				if (o && s->yo_b)
					ox_cg_snprintf(off, sizeof off, " + %d", o * b);
				else if (o)
					ox_cg_snprintf(off, sizeof off, o == 1 ? " + q->yo" : " + %d * q->yo", o);
				if (s->tail && o == s->ocb - 1)
					ox_buf_printf(&t, "%s s%d_%d = ox_vf_load_n(y + %ld%s, %d)", o ? "," : "", r, o,
						      (long)r * s->yr, off, s->tail);
				else
					ox_buf_printf(&t, "%s s%d_%d = ox_vf_load(y + %ld%s)", o ? "," : "", r, o,
						      (long)r * s->yr, off);
			} else if (r)
				ox_buf_printf(&t, "%s s%d_%d = s0_%d", o ? "," : "", r, o, o);
			else if (!s->bias)
				ox_buf_printf(&t, "%s s0_%d = ox_vf_zero()", o ? "," : "", o);
			else if (s->tail && o == s->ocb - 1)
				ox_buf_printf(&t, "%s s0_%d = ox_vf_load_n(bias + %d, %d)", o ? "," : "", o, o * b, s->tail);
			else
				ox_buf_printf(&t, "%s s0_%d = ox_vf_load(bias + %d)", o ? "," : "", o, o * b);
		}
		ox_buf_puts(&t, ";\n");
	}
	if (!s->bias || s->acc)
		ox_buf_puts(&t, "\t(void)bias;\n");
	if (E->n) /* operands that are literals do not read e */
		ox_buf_puts(&t, "\t(void)e;\n");
	if (s->arq)
		ox_buf_puts(&t, "\tconst long ar = q->s1; /* floats between the rows' inputs */\n");
	ox_buf_puts(&t, "\tfor (long i1 = 0; i1 < q->n1; i1++) {\n"
			"\t\tconst long kc = i1 == q->n1 - 1 ? q->kcl : q->kc;\n"
			"\t\tfor (long i2 = 0; i2 < q->n2; i2++)\n"
			"\t\tfor (long i3 = 0; i3 < q->n3; i3++) {\n"
			"\t\t\tconst float *p = a + i1 * q->s1 + i2 * q->s2 + i3 * q->s3;\n");
	ox_buf_printf(&t, "\t\t\tfor (long c = 0; c < kc; c++, p += %s, w += %ld) {\n", s->ac1 ? "1" : "q->ac", s->ws);
	ox_buf_puts(&t, "\t\t\t\tconst ox_vf");
	for (int o = 0; o < s->ocb; o++) {
		/* a plain B's last vector may end inside its row: load only its lanes */
		if (s->tail && o == s->ocb - 1 && s->ws != (long)s->ocb * b)
			ox_buf_printf(&t, "%s w%d = ox_vf_load_n(w + %d, %d)", o ? "," : "", o, o * b, s->tail);
		else
			ox_buf_printf(&t, "%s w%d = ox_vf_load(w + %d)", o ? "," : "", o, o * b);
	}
	ox_buf_puts(&t, ";\n\t\t\t\tox_vf x;\n");
	if (s->pf) /* the weights a group further on, a cache line per vector */
		for (int o = 0; o < s->ocb; o++)
			ox_buf_printf(&t, "\t\t\t\tOX_PREFETCH(w + q->pf + %d);\n", o * b);
	for (int r = 0; r < s->rows; r++) {
		long off = s->rw ? (long)(r / s->rw) * s->rs + (long)(r % s->rw) * s->ar : (long)r * s->ar;
		if (s->arq && r)
			ox_buf_printf(&t, "\t\t\t\tx = ox_vf_set1(p[%d * ar]);\n", r);
		else
			ox_buf_printf(&t, "\t\t\t\tx = ox_vf_set1(p[%ld]);\n", s->arq ? 0L : off);
		for (int o = 0; o < s->ocb; o++)
			ox_buf_printf(&t, "\t\t\t\ts%d_%d = ox_vf_fma(x, w%d, s%d_%d);\n", r, o, o, r, o);
	}
	ox_buf_puts(&t, "\t\t\t}\n\t\t}\n\t}\n");
	tile_store(cg, &t, E, s, b);
	ox_buf_puts(&t, "}\n");
	return ox_cg_kernel_text(cg, "uk", name, &t);
}

/* ---- the loops around it ---- */

void ox_uk_call(ox_cg *cg, int lvl, const ox_epi *E, long yr, const char *kern, const char *args, const char *chan)
{
	if (E->n) {
		ox_buf e = {0};
		for (int j = 0; j < E->n; j++) {
			int k = E->first + j;
			const char *sep = j ? ", " : "";
			if (E->kind[j] == OX_EO_FULL)
				ox_buf_printf(&e, "%sin%d + (y - out0) + i * %ld", sep, k, yr);
			else if (E->kind[j] == OX_EO_CHAN)
				ox_buf_printf(&e, "%sin%d + %s", sep, k, chan);
			else if (E->kind[j] == OX_EO_SCALAR)
				ox_buf_printf(&e, "%sin%d", sep, k);
			else
				ox_buf_printf(&e, "%sNULL", sep);
		}
		ox_cg_line(cg, lvl, "const float *e[] = {%s};", e.s);
		ox_buf_free(&e);
	}
	ox_cg_line(cg, lvl, "%s(%s%s);", kern, args, E->n ? ", e" : "");
}

void ox_uk_loop(ox_cg *cg, int lvl, const ox_epi *E, int rows, long yr, const char *kfull, const char *ktail,
		const char *args, const char *chan)
{
	ox_cg_line(cg, lvl, "long i = p0;");
	ox_cg_line(cg, lvl, "for (; i + %d <= p1; i += %d) {", rows, rows);
	ox_uk_call(cg, lvl + 1, E, yr, kfull, args, chan);
	ox_cg_line(cg, lvl, "}");
	if (*ktail) {
		ox_cg_line(cg, lvl, "if (i < p1) {");
		ox_uk_call(cg, lvl + 1, E, yr, ktail, args, chan);
		ox_cg_line(cg, lvl, "}");
	}
}

/* ---- run-time extents ---- */

int ox_uk_tails(int rows, int *size)
{
	int n = 0, p = 1;
	while (p * 2 < rows)
		p *= 2;
	for (; p >= 1 && rows > 1; p /= 2) {
		if (n == OX_UK_MAXTAILS)
			ox_die("ukernel: a tile of %d rows has too many tails", rows);
		size[n++] = p;
	}
	return n;
}

void ox_uk_loop_rt(ox_cg *cg, int lvl, const ox_epi *E, int rows, long yr, const char *kfull, int nt,
		   const int *size, char (*ktail)[96], const char *args, const char *chan)
{
	ox_cg_line(cg, lvl, "long i = p0;");
	ox_cg_line(cg, lvl, "for (; i + %d <= p1; i += %d) {", rows, rows);
	ox_uk_call(cg, lvl + 1, E, yr, kfull, args, chan);
	ox_cg_line(cg, lvl, "}");
	for (int j = 0; j < nt; j++) {
		ox_cg_line(cg, lvl, "if (i + %d <= p1) { /* the rest: %d rows */", size[j], size[j]);
		ox_uk_call(cg, lvl + 1, E, yr, ktail[j], args, chan);
		if (j < nt - 1)
			ox_cg_line(cg, lvl + 1, "i += %d;", size[j]);
		ox_cg_line(cg, lvl, "}");
	}
}

const char *ox_uk_dimtext(ox_cg *cg, ox_dim d)
{
	static char ring[16][48];
	static int at;
	int64_t lo, hi, v = ox_dim_eval(cg->g, d);
	at = (at + 1) % 16;
	if (v >= 0)
		ox_cg_snprintf(ring[at], sizeof ring[at], "%lld", (long long)v);
	else if (!ox_dim_range(cg->g, d, &lo, &hi))
		ox_cg_snprintf(ring[at], sizeof ring[at], "%lld..%lld", (long long)lo, (long long)hi);
	else
		ox_cg_snprintf(ring[at], sizeof ring[at], "?");
	return ring[at];
}
