/* emit_wino.c: blocked 3x3 convolutions by Winograd F(m x m, 3 x 3), for
 * the Convs opt/winograd.c chose (weights @winow: U = G g G^T, packed).
 *
 * The output is cut into tiles of m x m positions, the tiles (of all
 * images, in order) into blocks of wnt. A task owns a slot of the node's
 * scratch and takes every wslots-th block (with one block, the tiles'
 * transforms are tasks first, then the slots take the groups); a block:
 *  1. input transform: each tile's (m+2) x (m+2) window of each channel
 *     block, V = B^T d B, a vector of channels at a time, into the slot's
 *     V[(m+2)^2][tiles][C] (a window that leaves the input reads zeros);
 *  2. per group of ocb output vectors: the (m+2)^2 GEMMs
 *     [tiles x C] x [C x group] on the shared micro-kernel (ukernel.h),
 *     into the slot's P[(m+2)^2][tiles][group], then
 *  3. output transform Y = A^T P A of each tile and vector, the bias
 *     added, through the node's epilogue, stored where it lies inside the
 *     output (ox_uk_store).
 * V (sized to stay in L2) is read once per group while the group's
 * weights stream through. The transforms are straight-line vector code
 * printed from small programs (the 1-D transforms with their common
 * terms shared), which are checked against opt/analysis.c's matrices
 * whenever they are printed. The node's FLOPs stay the direct
 * algorithm's (ir/cost.c), so its GFLOP/s may pass the machine's peak.
 */
#include "ukernel.h"
#include "../../opt/opt.h"
#include <stdio.h>
#include <string.h>

/* One step of a 1-D transform over registers: inputs 0..T-1, outputs
 * OUT.., temporaries TMP..: r[d] = r[a] + r[b] ('+'), r[a] - r[b] ('-'),
 * or k r[a] + r[b] ('f', a multiply-add). */
enum { OUT = 8, TMP = 16, NREG = 32 };
typedef struct {
	char op;
	signed char d, a, b;
	float k;
} wstep;
typedef struct {
	int nin, nout, nsteps;
	const wstep *s;
	const double *mat; /* nout x nin: what it computes */
} wprog;

/* F(4x4, 3x3): B^T rows (4 0 -5 0 1 0), (0 -4 -4 1 1 0), (0 4 -4 -1 1 0),
 * (0 -2 -1 2 1 0), (0 2 -1 -2 1 0), (0 4 0 -5 0 1) in 12 operations */
static const wstep in4[] = {
	{'f', TMP + 0, 2, 4, -4}, {'f', TMP + 1, 1, 3, -4}, {'+', OUT + 1, TMP + 0, TMP + 1, 0},
	{'-', OUT + 2, TMP + 0, TMP + 1, 0}, {'-', TMP + 2, 4, 2, 0}, {'-', TMP + 3, 3, 1, 0},
	{'f', OUT + 3, TMP + 3, TMP + 2, 2}, {'f', OUT + 4, TMP + 3, TMP + 2, -2}, {'f', TMP + 4, 2, 4, -5},
	{'f', OUT + 0, 0, TMP + 4, 4}, {'f', TMP + 5, 3, 5, -5}, {'f', OUT + 5, 1, TMP + 5, 4},
};
/* A^T rows (1 1 1 1 1 0), (0 1 -1 2 -2 0), (0 1 1 4 4 0), (0 1 -1 8 -8 1) in 10 */
static const wstep out4[] = {
	{'+', TMP + 0, 1, 2, 0}, {'-', TMP + 1, 1, 2, 0}, {'+', TMP + 2, 3, 4, 0}, {'-', TMP + 3, 3, 4, 0},
	{'+', TMP + 4, 0, TMP + 0, 0}, {'+', OUT + 0, TMP + 4, TMP + 2, 0}, {'f', OUT + 1, TMP + 3, TMP + 1, 2},
	{'f', OUT + 2, TMP + 2, TMP + 0, 4}, {'f', TMP + 5, TMP + 3, TMP + 1, 8}, {'+', OUT + 3, TMP + 5, 5, 0},
};
/* F(2x2, 3x3): B^T rows (1 0 -1 0), (0 1 1 0), (0 -1 1 0), (0 1 0 -1) */
static const wstep in2[] = {
	{'-', OUT + 0, 0, 2, 0}, {'+', OUT + 1, 1, 2, 0}, {'-', OUT + 2, 2, 1, 0}, {'-', OUT + 3, 1, 3, 0},
};
/* A^T rows (1 1 1 0), (0 1 -1 -1) */
static const wstep out2[] = {
	{'+', TMP + 0, 0, 1, 0}, {'+', OUT + 0, TMP + 0, 2, 0}, {'-', TMP + 1, 1, 2, 0}, {'-', OUT + 1, TMP + 1, 3, 0},
};

/* the input (output = 0) or output transform of F(m x m) */
static wprog program(int m, int output)
{
	const ox_winomats *W = ox_opt_wino_mats(m);
	wprog p;
	if (!W)
		ox_die("emit_wino: no F(%dx%d, 3x3)", m, m);
	p.nin = W->T;
	p.nout = output ? m : W->T;
	p.mat = output ? W->at : W->bt;
	if (m == 4 && output)
		p.s = out4, p.nsteps = (int)(sizeof out4 / sizeof *out4);
	else if (m == 4)
		p.s = in4, p.nsteps = (int)(sizeof in4 / sizeof *in4);
	else if (output)
		p.s = out2, p.nsteps = (int)(sizeof out2 / sizeof *out2);
	else
		p.s = in2, p.nsteps = (int)(sizeof in2 / sizeof *in2);
	/* the program must compute its matrix: run it on each unit vector */
	for (int k = 0; k < p.nin; k++) {
		double r[NREG] = {0};
		r[k] = 1;
		for (int i = 0; i < p.nsteps; i++) {
			const wstep *s = &p.s[i];
			r[s->d] = s->op == '+' ? r[s->a] + r[s->b] : s->op == '-' ? r[s->a] - r[s->b] : s->k * r[s->a] + r[s->b];
		}
		for (int i = 0; i < p.nout; i++)
			if (r[OUT + i] != p.mat[i * p.nin + k])
				ox_die("emit_wino: F(%dx%d) %s transform, output %d input %d: %g, the matrix says %g", m, m,
				       output ? "output" : "input", i, k, r[OUT + i], p.mat[i * p.nin + k]);
	}
	return p;
}

/* Print program p over the vectors named in[] as `const ox_vf` lines:
 * output i is <pre><i>_<tag> (<pre><tag>_<i> with tagfirst), temporary k
 * <pre>t<k>_<tag>; only what the outputs with need[i] set use is printed */
static void apply(ox_buf *t, const wprog *p, char in[][32], const char *pre, int tag, int tagfirst, const int *need)
{
	int live[NREG] = {0}, keep[16] = {0};
	for (int i = 0; i < p->nout; i++)
		live[OUT + i] = need[i];
	for (int i = p->nsteps - 1; i >= 0; i--) {
		const wstep *s = &p->s[i];
		if (!live[s->d])
			continue;
		keep[i] = 1;
		live[s->d] = 0;
		live[s->a] = live[s->b] = 1;
	}
	for (int i = 0; i < p->nsteps; i++) {
		if (!keep[i])
			continue;
		const wstep *s = &p->s[i];
		char r[3][40];
		const int regs[3] = {s->d, s->a, s->b};
		for (int k = 0; k < 3; k++) {
			int x = regs[k];
			if (x < OUT)
				ox_cg_snprintf(r[k], sizeof r[k], "%s", in[x]);
			else if (x < TMP)
				ox_cg_snprintf(r[k], sizeof r[k], "%s%d_%d", pre, tagfirst ? tag : x - OUT, tagfirst ? x - OUT : tag);
			else
				ox_cg_snprintf(r[k], sizeof r[k], "%st%d_%d", pre, x - TMP, tag);
		}
		if (s->op == 'f')
			ox_buf_printf(t, "\tconst ox_vf %s = ox_vf_fma(ox_vf_set1(%s), %s, %s);\n", r[0], ox_cg_lit(OX_F32, s->k),
				      r[1], r[2]);
		else
			ox_buf_printf(t, "\tconst ox_vf %s = ox_vf_%s(%s, %s);\n", r[0], s->op == '+' ? "add" : "sub", r[1], r[2]);
	}
}

/* in[k] = 1 for the inputs of p that its first n outputs read */
static void inputs_read(const wprog *p, int n, int *in)
{
	int live[NREG] = {0};
	for (int i = 0; i < n; i++)
		live[OUT + i] = 1;
	for (int i = p->nsteps - 1; i >= 0; i--) {
		const wstep *s = &p->s[i];
		if (live[s->d])
			live[s->d] = 0, live[s->a] = live[s->b] = 1;
	}
	for (int k = 0; k < p->nin; k++)
		in[k] = live[k];
}

/* The 2-D transform P x P^T of the T x T vectors <src><r>_<c> (the caller
 * declares those the corner reads: inputs_read) into <res><i>_<j> for the
 * nr x nc corner of the result: columns first (w<i>_<c>), then rows */
static void apply2(ox_buf *t, const wprog *p, const char *src, const char *res, int nr, int nc)
{
	int need[8], cols[8];
	char in[8][32];
	inputs_read(p, nc, cols);
	for (int c = 0; c < p->nin; c++) { /* column c: w<i>_<c> = sum_r P[i][r] src<r>_<c> */
		if (!cols[c])
			continue;
		for (int r = 0; r < p->nin; r++)
			ox_cg_snprintf(in[r], sizeof in[r], "%s%d_%d", src, r, c);
		for (int i = 0; i < p->nout; i++)
			need[i] = i < nr;
		apply(t, p, in, "w", c, 0, need);
	}
	for (int i = 0; i < nr; i++) { /* row i: res<i>_<j> = sum_c w<i>_<c> P[j][c] */
		for (int c = 0; c < p->nin; c++)
			ox_cg_snprintf(in[c], sizeof in[c], "w%d_%d", i, c);
		for (int j = 0; j < p->nout; j++)
			need[j] = j < nc;
		apply(t, p, in, res, i, 1, need);
	}
}

/* The transforms stay functions of their own: inlined into the loops
 * around them, their 36 or 16 live vectors made GCC's register allocation
 * of the whole task spill (measured: F(4x4) 2x slower on AVX2's 16
 * registers, 20% with generic's SSE; no change with AVX-512's 32) */
static void use_noinline(ox_cg *cg)
{
	ox_cg_helper(cg, "wino/noinline",
		     "/* a function the compiler should call, not inline (the Winograd transforms) */\n"
		     "#if defined(__GNUC__) || defined(__clang__)\n#define OX_NOINLINE __attribute__((noinline))\n"
		     "#else\n#define OX_NOINLINE\n#endif\n");
}

/* input transform of one tile of one channel vector: V = B^T d B, d[r][c]
 * at x + r rs + c b (edge: at x + ((r0 + r) iw + c0 + c) b, zero outside
 * ih x iw), V[i][j] stored at v + (i T + j) vs */
static const char *in_kernel(ox_cg *cg, int m, int edge)
{
	static char name[32];
	const int b = cg->g->target->vw;
	wprog p = program(m, 0);
	const int T = p.nin;
	ox_cg_snprintf(name, sizeof name, "ox_wi%d%s", m, edge ? "_edge" : "");
	use_noinline(cg);
	ox_buf t = {0};
	ox_buf_printf(&t, "/* Winograd F(%dx%d, 3x3) input transform of a tile's %dx%d window of a channel vector,\n"
			  " * V = B^T d B%s; V[i][j] at v + (i * %d + j) * vs */\n", m, m, T, T,
		      edge ? " (positions outside ih x iw read as zero)" : "", T);
	if (edge)
		ox_buf_printf(&t, "OX_STATIC OX_UNUSED OX_NOINLINE void %s(const float *restrict x, long r0, long c0, long ih, long iw, "
				  "float *restrict v, long vs)\n{\n", name);
	else
		ox_buf_printf(&t, "OX_STATIC OX_UNUSED OX_NOINLINE void %s(const float *restrict x, long rs, float *restrict v, long vs)\n{\n",
			      name);
	if (edge)
		for (int r = 0; r < T; r++)
			ox_buf_printf(&t, "\tconst int rk%d = r0 + %d >= 0 && r0 + %d < ih, ck%d = c0 + %d >= 0 && c0 + %d < iw;\n",
				      r, r, r, r, r, r);
	for (int r = 0; r < T; r++)
		for (int c = 0; c < T; c++) {
			if (edge)
				ox_buf_printf(&t, "\tconst ox_vf d%d_%d = rk%d && ck%d ? ox_vf_load(x + ((r0 + %d) * iw + c0 + %d) * %d) "
						  ": ox_vf_zero();\n", r, c, r, c, r, c, b);
			else
				ox_buf_printf(&t, "\tconst ox_vf d%d_%d = ox_vf_load(x + %d * rs + %d);\n", r, c, r, c * b);
		}
	apply2(&t, &p, "d", "v", T, T);
	for (int i = 0; i < T; i++)
		for (int j = 0; j < T; j++)
			ox_buf_printf(&t, "\tox_vf_store(v + %d * vs, v%d_%d);\n", i * T + j, i, j);
	ox_buf_puts(&t, "}\n");
	return ox_cg_kernel_text(cg, "wino", name, &t);
}

/* output transform of one tile of one output vector: Y = A^T P A, P[i][j]
 * at p + (i T + j) ps, plus the bias, through the epilogue E, the nr x nc
 * positions inside the output stored at y0 + i yrs + j b; epilogue operand
 * k at eo[k] (of the output's shape: offset like y0) */
static const char *out_kernel(ox_cg *cg, int m, int nr, int nc, const ox_epi *E)
{
	static char name[48];
	const int b = cg->g->target->vw;
	wprog p = program(m, 1);
	const int T = p.nin;
	char es[16] = "";
	if (E->body)
		ox_cg_snprintf(es, sizeof es, "_e%d", E->id);
	ox_cg_snprintf(name, sizeof name, "ox_wo%d_%dx%d%s", m, nr, nc, es);
	use_noinline(cg);
	int eops = 0; /* operands read through eo (not literals) */
	for (int k = 0; k < E->n; k++)
		eops += E->kind[k] != OX_EO_LIT;
	ox_buf t = {0};
	ox_buf_printf(&t, "/* Winograd F(%dx%d, 3x3) output transform of a tile of an output vector, Y = A^T P A,\n"
			  " * P[i][j] at p + (i * %d + j) * ps; plus the bias%s; its %dx%d positions inside the output\n"
			  " * stored at y0 + i * yrs + j * %d */\n", m, m, T, E->body ? ", through the epilogue" : "", nr, nc, b);
	ox_buf_printf(&t, "OX_STATIC OX_UNUSED OX_NOINLINE void %s(const float *restrict p, long ps, float *y0, long yrs, "
			  "const float *restrict bias, const float *const *eo)\n{\n", name);
	if (!eops)
		ox_buf_puts(&t, "\t(void)eo;\n");
	int rows[8], cols[8]; /* what the nr x nc corner reads */
	inputs_read(&p, nr, rows);
	inputs_read(&p, nc, cols);
	for (int i = 0; i < T; i++)
		for (int j = 0; j < T; j++)
			if (rows[i] && cols[j])
				ox_buf_printf(&t, "\tconst ox_vf p%d_%d = ox_vf_load(p + %d * ps);\n", i, j, i * T + j);
	apply2(&t, &p, "p", "o", nr, nc);
	ox_buf_puts(&t, "\tconst ox_vf bv = ox_vf_load(bias);\n");
	ox_ukshape st = {.rows = nc, .ocb = 1, .ar = 1, .ac1 = 1, .ws = b, .yr = b, .yo_b = 1, .bias = 1};
	for (int i = 0; i < nr; i++) {
		ox_buf_puts(&t, "\t{\n");
		ox_buf_printf(&t, "\t\tfloat *const y = y0 + %d * yrs;\n", i);
		if (eops) {
			ox_buf_puts(&t, "\t\tconst float *const e[] = {");
			for (int k = 0; k < E->n; k++) {
				char op[48];
				if (E->kind[k] == OX_EO_LIT)
					ox_cg_snprintf(op, sizeof op, "NULL");
				else if (E->kind[k] == OX_EO_FULL && i)
					ox_cg_snprintf(op, sizeof op, "eo[%d] + %d * yrs", k, i);
				else
					ox_cg_snprintf(op, sizeof op, "eo[%d]", k);
				ox_buf_printf(&t, "%s%s", k ? ", " : "", op);
			}
			ox_buf_puts(&t, "};\n");
		}
		ox_buf_puts(&t, "\t\tox_vf ");
		for (int j = 0; j < nc; j++)
			ox_buf_printf(&t, "%ss%d_0 = ox_vf_add(o%d_%d, bv)", j ? ", " : "", j, i, j);
		ox_buf_puts(&t, ";\n");
		/* the stores of a row of nc positions, indented into the block */
		ox_buf st_t = {0};
		ox_uk_store(cg, &st_t, E, &st);
		for (const char *l = st_t.s; l && *l;) {
			const char *nl = strchr(l, '\n');
			size_t len = nl ? (size_t)(nl - l) + 1 : strlen(l);
			ox_buf_printf(&t, "\t%.*s", (int)len, l);
			l += len;
		}
		ox_buf_free(&st_t);
		ox_buf_puts(&t, "\t}\n");
	}
	ox_buf_puts(&t, "}\n");
	return ox_cg_kernel_text(cg, "wino", name, &t);
}

/* dims as C (ox_cg_dim: a literal when constant) and their arithmetic */
#define D(d) ox_cg_dim(cg, (d))
#define MUL(a, b) ox_dim_mul(cg->g, (a), (b))

/* what the loops of one node share; batch and image sizes as dims (the
 * convgeo's int64 sizes are their tops, what the blocks were sized for) */
typedef struct {
	const ox_convgeo *q;
	const ox_epi *E;
	int b, m, T2;
	int64_t cb, cp, mv, ng, ocl, pw, rr, cc;
	ox_dim th, tw, tiles, plane, oplane;
	int hrt, wrt;     /* the output's height, width are run-time: so is the last tiles' extent */
	int trt;          /* the tile count is run-time: the GEMMs' rows end in tiles of any size */
	int nt, tsz[OX_UK_MAXTAILS];
	char ki[32], ke[32], kg[4][96], ko[4][48];
	char kt[2][OX_UK_MAXTAILS][96]; /* with trt: [full group, last group] x the tails */
} wctx;

/* the tile tt's image ni, tile row ty and column tx */
static void tile_index(ox_cg *cg, int lvl, const wctx *w)
{
	ox_cg_line(cg, lvl, "const long ni = tt / %s, ty = tt / %s %% %s, tx = tt %% %s;", D(MUL(w->th, w->tw)),
		   D(w->tw), D(w->th), D(w->tw));
}

/* the input transform of tile tt into v (tile j of V: v = vs + j * cp) */
static void input_tile(ox_cg *cg, int lvl, const wctx *w)
{
	const ox_convgeo *q = w->q;
	const int T = w->m + 2;
	tile_index(cg, lvl, w);
	ox_cg_line(cg, lvl, "const long ih0 = ty * %d - %lld, iw0 = tx * %d - %lld;", w->m, (long long)q->pt, w->m,
		   (long long)q->pl);
	ox_cg_line(cg, lvl, "const float *x = in0 + ni * %s;", D(MUL(w->plane, w->cb)));
	char interior[4096], edge[4096];
	ox_cg_snprintf(interior, sizeof interior, "%s(xt + c * %s, %s, v + c * %d, %lld);", w->ki, D(w->plane),
		 D(MUL(q->dIW, w->b)), w->b, (long long)q->wvs);
	ox_cg_snprintf(edge, sizeof edge, "%s(x + c * %s, ih0, iw0, %s, %s, v + c * %d, %lld);", w->ke, D(w->plane),
		 D(q->dIH), D(q->dIW), w->b, (long long)q->wvs);
	int both = *w->ki && *w->ke, in = both ? lvl + 1 : lvl;
	if (both && (ox_dim_is_rt(cg->g, q->dIH) || ox_dim_is_rt(cg->g, q->dIW)))
		ox_cg_line(cg, lvl, "if (ih0 >= 0 && iw0 >= 0 && ih0 + %d <= %s && iw0 + %d <= %s) {", T, D(q->dIH), T,
			   D(q->dIW));
	else if (both)
		ox_cg_line(cg, lvl, "if (ih0 >= 0 && iw0 >= 0 && ih0 <= %lld && iw0 <= %lld) {", (long long)(q->IH - T),
			   (long long)(q->IW - T));
	if (*w->ki) {
		ox_cg_line(cg, in, "const float *xt = x + (ih0 * %s + iw0) * %d;", D(q->dIW), w->b);
		ox_cg_line(cg, in, "for (long c = 0; c < %lld; c++)", (long long)w->cb);
		ox_cg_line(cg, in + 1, "%s", interior);
	}
	if (both)
		ox_cg_line(cg, lvl, "} else {");
	if (*w->ke) {
		ox_cg_line(cg, in, "for (long c = 0; c < %lld; c++) /* the window leaves the input */", (long long)w->cb);
		ox_cg_line(cg, in + 1, "%s", edge);
	}
	if (both)
		ox_cg_line(cg, lvl, "}");
}

/* the GEMM tiles of [p0, p1) for a group of width kernels j (0 full, 2 last) */
static void gemm_tiles(ox_cg *cg, int lvl, const wctx *w, int j, const char *args)
{
	static const ox_epi none;
	if (w->trt)
		ox_uk_loop_rt(cg, lvl, &none, w->q->rows, (long)w->pw, w->kg[j], w->nt, w->tsz, (char (*)[96])w->kt[j / 2], args,
			      "0");
	else
		ox_uk_loop(cg, lvl, &none, w->q->rows, (long)w->pw, w->kg[j], w->kg[j + 1], args, "0");
}

/* group gi of output vectors for the nb tiles from tb: its GEMMs from V
 * (vs) into P (ps), then the output transform */
static void group(ox_cg *cg, int lvl, const wctx *w)
{
	const ox_convgeo *q = w->q;
	const ox_epi *E = w->E;
	const int b = w->b, m = w->m;
	ox_cg_line(cg, lvl, "const float *ug = in1 + gi * %lld;", (long long)(w->T2 * q->C * w->pw));
	if (w->ocl == q->ocb)
		ox_cg_line(cg, lvl, "const long gw = %lld; /* the group's width in floats */", (long long)w->pw);
	else
		ox_cg_line(cg, lvl, "const long gw = gi < %lld ? %lld : %lld; /* the group's width in floats */",
			   (long long)(w->ng - 1), (long long)w->pw, (long long)(w->ocl * b));
	ox_cg_line(cg, lvl, "for (long xi = 0; xi < %d; xi++) { /* the GEMMs into P[%d][tiles][%lld] */", w->T2, w->T2,
		   (long long)w->pw);
	ox_cg_line(cg, lvl + 1, "const float *a = vs + xi * %lld, *wg = ug + xi * %lld * gw;", (long long)q->wvs,
		   (long long)q->C);
	ox_cg_line(cg, lvl + 1, "float *y = ps + xi * %lld;", (long long)q->wps);
	ox_cg_line(cg, lvl + 1, "const long p0 = 0, p1 = nb;");
	char args[128];
	ox_cg_snprintf(args, sizeof args, "a + i * %lld, wg, y + i * %lld, NULL, &q", (long long)w->cp, (long long)w->pw);
	if (w->ocl == q->ocb) {
		gemm_tiles(cg, lvl + 1, w, 0, args);
	} else {
		ox_cg_line(cg, lvl + 1, "if (gi < %lld) {", (long long)(w->ng - 1));
		gemm_tiles(cg, lvl + 2, w, 0, args);
		ox_cg_line(cg, lvl + 1, "} else {");
		gemm_tiles(cg, lvl + 2, w, 2, args);
		ox_cg_line(cg, lvl + 1, "}");
	}
	ox_cg_line(cg, lvl, "}");
	ox_cg_line(cg, lvl, "for (long j = 0; j < nb; j++) { /* the output transform */");
	ox_cg_line(cg, lvl + 1, "const long tt = tb + j;");
	tile_index(cg, lvl + 1, w);
	ox_cg_line(cg, lvl + 1, "float *y = out0 + ((ni * %lld + gi * %d) * %s + ty * %s + tx * %d) * %d;",
		   (long long)w->mv, q->ocb, D(MUL(q->dOH, q->dOW)), D(MUL(q->dOW, m)), m, b);
	ox_cg_line(cg, lvl + 1, "const float *pp = ps + j * %lld;", (long long)w->pw);
	ox_cg_line(cg, lvl + 1, "for (long o = 0; o < gw / %d; o++) {", b);
	ox_cg_line(cg, lvl + 2, "float *yv = y + o * %s;", D(w->oplane));
	const char *eo = "NULL";
	if (E->n) {
		ox_buf e = {0};
		for (int k = 0; k < E->n; k++) {
			int in = E->first + k;
			const char *sep = k ? ", " : "";
			if (E->kind[k] == OX_EO_FULL)
				ox_buf_printf(&e, "%sin%d + (yv - out0)", sep, in);
			else if (E->kind[k] == OX_EO_CHAN)
				ox_buf_printf(&e, "%sin%d + (gi * %d + o) * %d", sep, in, q->ocb, b);
			else if (E->kind[k] == OX_EO_SCALAR)
				ox_buf_printf(&e, "%sin%d", sep, in);
			else
				ox_buf_printf(&e, "%sNULL", sep);
		}
		ox_cg_line(cg, lvl + 2, "const float *e[] = {%s};", e.s);
		ox_buf_free(&e);
		eo = "e";
	}
	char call[4096];
	ox_cg_snprintf(call, sizeof call, "(pp + o * %d, %lld, yv, %s, in2 + (gi * %d + o) * %d, %s);", b, (long long)q->wps,
		 D(MUL(q->dOW, b)), q->ocb, b, eo);
	if (w->hrt || w->wrt) {
		/* the last row and column of tiles hold what is left of a run-time
		 * height or width: one kernel per extent, from a table */
		ox_cg_line(cg, lvl + 2, "const long lr = ty == %s - 1 ? %s - ty * %d : %d, lc = tx == %s - 1 ? %s - tx * %d : %d;",
			   D(w->th), D(q->dOH), m, m, D(w->tw), D(q->dOW), m, m);
		ox_cg_line(cg, lvl + 2, "wo[lr - 1][lc - 1]%s", call);
	} else if (w->rr < m && w->cc < m) {
		/* the last row and column of tiles may be partial */
		ox_cg_line(cg, lvl + 2, "const int lr = ty == %lld, lc = tx == %lld;", (long long)(w->th - 1),
			   (long long)(w->tw - 1));
		ox_cg_line(cg, lvl + 2, "if (!lr && !lc)");
		ox_cg_line(cg, lvl + 3, "%s%s", w->ko[0], call);
		ox_cg_line(cg, lvl + 2, "else if (!lc)");
		ox_cg_line(cg, lvl + 3, "%s%s", w->ko[1], call);
		ox_cg_line(cg, lvl + 2, "else if (!lr)");
		ox_cg_line(cg, lvl + 3, "%s%s", w->ko[2], call);
		ox_cg_line(cg, lvl + 2, "else");
		ox_cg_line(cg, lvl + 3, "%s%s", w->ko[3], call);
	} else if (w->rr < m || w->cc < m) {
		ox_cg_line(cg, lvl + 2, "if (%s != %lld)", w->rr < m ? "ty" : "tx",
			   (long long)(w->rr < m ? w->th - 1 : w->tw - 1));
		ox_cg_line(cg, lvl + 3, "%s%s", w->ko[0], call);
		ox_cg_line(cg, lvl + 2, "else");
		ox_cg_line(cg, lvl + 3, "%s%s", w->ko[w->rr < m ? 1 : 2], call);
	} else {
		ox_cg_line(cg, lvl + 2, "%s%s", w->ko[0], call);
	}
	ox_cg_line(cg, lvl + 1, "}");
	ox_cg_line(cg, lvl, "}");
}

int ox_cg_emit_conv_wino(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_convgeo geo;
	ox_epi epi;
	if (ox_opt_conv_geo(g, n, &geo) || !geo.wm)
		return ox_error(g, n, "the Winograd Conv's geometry is not supported");
	if (ox_uk_epi(cg, g, n, &epi))
		return -1;
	ox_uk_use(cg);
	const ox_convgeo *q = &geo;
	const ox_value *wv = ox_in(g, n, 1);
	if (wv->layout != OX_L_WINOW || wv->lp[0] != q->b || wv->lp[1] != q->wm || wv->lp[2] != q->ocb || !n->scratch)
		ox_die("codegen: Conv '%s': weights not transformed for its Winograd tiles", n->name);
	static const ox_epi none;
	wctx w = {.q = q, .E = &epi, .b = q->b, .m = q->wm, .T2 = (q->wm + 2) * (q->wm + 2)};
	const int b = w.b, m = w.m, T = m + 2;
	w.cb = (q->C + b - 1) / b, w.cp = w.cb * b, w.mv = (q->M + b - 1) / b;
	w.ng = (w.mv + q->ocb - 1) / q->ocb, w.ocl = w.mv - (w.ng - 1) * q->ocb, w.pw = (int64_t)q->ocb * b;
	/* run-time sizes: tile counts as dims; the blocks were sized at the top */
	w.hrt = ox_dim_is_rt(g, q->dOH), w.wrt = ox_dim_is_rt(g, q->dOW);
	w.th = w.hrt ? ox_dim_ceildiv(g, q->dOH, m) : q->th, w.tw = w.wrt ? ox_dim_ceildiv(g, q->dOW, m) : q->tw;
	w.tiles = MUL(MUL(q->dN, w.th), w.tw);
	w.plane = MUL(MUL(q->dIH, q->dIW), b), w.oplane = MUL(MUL(q->dOH, q->dOW), b);
	w.trt = ox_dim_is_rt(g, w.tiles);
	w.rr = q->OH - (q->th - 1) * m, w.cc = q->OW - (q->tw - 1) * m; /* the last tiles' extents (constant sizes) */
	const int64_t ttop = q->N * q->th * q->tw; /* tiles at the top */
	const int64_t nblk = (ttop + q->wnt - 1) / q->wnt, lastb = ttop - (nblk - 1) * q->wnt;
	const int tail = w.trt ? 0 : (int)(lastb % q->rows);
	w.nt = w.trt ? ox_uk_tails(q->rows, w.tsz) : 0;
	const ox_dim dnblk = ox_dim_ceildiv(g, w.tiles, q->wnt);
	ox_cg_printf(cg, "\t/* Conv 3x3, stride 1x1, pads %lld,%lld,%lld,%lld: [%s,%lld,%s,%s] blocked -> ",
		     (long long)q->pt, (long long)q->pl, (long long)q->pb, (long long)q->pr, ox_uk_dimtext(cg, q->dN),
		     (long long)q->C, ox_uk_dimtext(cg, q->dIH), ox_uk_dimtext(cg, q->dIW));
	ox_cg_printf(cg, "[%s,%lld,%s,%s] blocked by %d,\n",
		     ox_uk_dimtext(cg, q->dN), (long long)q->M, ox_uk_dimtext(cg, q->dOH), ox_uk_dimtext(cg, q->dOW), b);
	ox_cg_printf(cg, "\t * by Winograd F(%dx%d, 3x3): %sx%s tiles of %dx%d outputs per image, %s block%s of ",
		     m, m, ox_uk_dimtext(cg, w.th), ox_uk_dimtext(cg, w.tw), m, m, ox_uk_dimtext(cg, dnblk),
		     nblk > 1 ? "s" : "");
	ox_cg_printf(cg, "%lld;\n"
			 "\t * a block's %dx%d windows transformed (V), per group of %d output vectors %d GEMMs [tiles x %lld] "
			 "x [%lld x group]\n",
		     (long long)q->wnt, T, T, q->ocb, w.T2, (long long)q->C, (long long)q->C);
	ox_cg_printf(cg, "\t * on the micro-kernel (%d tiles x %d vectors) into P, then the output transform%s.\n"
			 "\t * %s.\n"
			 "\t * FLOPs are counted as the direct algorithm's (2 x 9 x C per output): GFLOP/s may pass the "
			 "peak */\n",
		     q->rows, q->ocb, epi.body ? ", bias and epilogue" : " and bias",
		     nblk > 1 ? "Tasks: slots of scratch (V and P), each taking every few blocks"
			      : "Tasks: the tiles' transforms, then slots of scratch (P), each taking every few groups");
	/* the kernels: transforms, and the GEMM's [full group, last group] x [full tile, tail] */
	int interior = 0, edge = 0;
	if (ox_dim_is_rt(g, q->dIH) || ox_dim_is_rt(g, q->dIW) || w.hrt || w.wrt) {
		interior = edge = 1; /* which tiles are inside is known when the program runs */
	} else {
		for (int64_t ty = 0; ty < q->th; ty++)
			for (int64_t tx = 0; tx < q->tw; tx++) {
				int64_t ih0 = ty * m - q->pt, iw0 = tx * m - q->pl;
				if (ih0 >= 0 && iw0 >= 0 && ih0 + T <= q->IH && iw0 + T <= q->IW)
					interior = 1;
				else
					edge = 1;
			}
	}
	if (interior)
		ox_cg_snprintf(w.ki, sizeof w.ki, "%s", in_kernel(cg, m, 0));
	if (edge)
		ox_cg_snprintf(w.ke, sizeof w.ke, "%s", in_kernel(cg, m, 1));
	for (int j = 0; j < 4; j++) {
		ox_ukshape us = {.rows = j & 1 ? tail : q->rows, .ocb = j & 2 ? (int)w.ocl : q->ocb, .ar = (long)w.cp,
				 .ac1 = 1, .yr = (long)w.pw, .yo_b = 1};
		us.ws = (long)us.ocb * b;
		ox_cg_snprintf(w.kg[j], sizeof w.kg[j], "%s", us.rows ? ox_uk_kernel(cg, &us, &none) : "");
		for (int t = 0; t < w.nt && !(j & 1) && (!(j & 2) || w.ocl != q->ocb); t++) {
			us.rows = w.tsz[t];
			ox_cg_snprintf(w.kt[j / 2][t], sizeof w.kt[j / 2][t], "%s", ox_uk_kernel(cg, &us, &none));
		}
	}
	ox_buf wo = {0}; /* with a run-time output size: the table of output kernels by extent */
	if (w.hrt || w.wrt) {
		ox_cg_helper(cg, "wino/wofn", "/* a Winograd output transform (ox_wo*) */\n"
			     "typedef void (*ox_wofn)(const float *restrict, long, float *, long, const float *restrict, "
			     "const float *const *);\n");
		ox_buf_printf(&wo, "static const ox_wofn wo[%d][%d] = {", m, m);
		for (int nr = 1; nr <= m; nr++) {
			ox_buf_printf(&wo, "%s{", nr > 1 ? ", " : "");
			for (int nc = 1; nc <= m; nc++) {
				int can = (w.hrt || nr == m || nr == w.rr) && (w.wrt || nc == m || nc == w.cc);
				ox_buf_printf(&wo, "%s%s", nc > 1 ? ", " : "", can ? out_kernel(cg, m, nr, nc, &epi) : "NULL");
			}
			ox_buf_puts(&wo, "}");
		}
		ox_buf_puts(&wo, "}; /* [rows - 1][columns - 1] of a tile inside the output */");
	} else {
		for (int j = 0; j < 4; j++) { /* [rows m, rr] x [columns m, cc], those that occur */
			int nr = j & 1 ? (int)w.rr : m, nc = j & 2 ? (int)w.cc : m;
			w.ko[j][0] = 0;
			if ((!(j & 1) || w.rr < m) && (!(j & 2) || w.cc < m))
				ox_cg_snprintf(w.ko[j], sizeof w.ko[j], "%s", out_kernel(cg, m, nr, nc, &epi));
		}
	}
	const char *geo_line = "static const ox_ukgeo q = {1, 0, 1, 0, 1, 0, %lld, %lld, 1, 0, 0};";
	if (nblk == 1) {
		/* one block (at the top, so at any size): its tiles' transforms
		 * are tasks, then slots of P take the groups */
		ox_cg_tasks_dim(cg, w.tiles);
		ox_cg_line(cg, 1, "const long tt = t;");
		ox_cg_line(cg, 1, "float *v = (float *)out%d + t * %lld;", n->nout - 1, (long long)w.cp);
		input_tile(cg, 1, &w);
		ox_cg_tasks(cg, q->wslots);
		ox_cg_line(cg, 1, geo_line, (long long)q->C, (long long)q->C);
		if (wo.len)
			ox_cg_line(cg, 1, "%s", wo.s);
		ox_cg_line(cg, 1, "const float *const vs = (const float *)out%d;", n->nout - 1);
		ox_cg_line(cg, 1, "float *const ps = (float *)out%d + %lld + t * %lld;", n->nout - 1,
			   (long long)(w.T2 * q->wvs), (long long)(w.T2 * q->wps));
		ox_cg_line(cg, 1, "const long tb = 0, nb = %s;", D(w.tiles));
		ox_cg_line(cg, 1, "for (long gi = t; gi < %lld; gi += %d) { /* groups of %d output vectors */", (long long)w.ng,
			   q->wslots, q->ocb);
		group(cg, 2, &w);
		ox_cg_line(cg, 1, "}");
		ox_buf_free(&wo);
		return 0;
	}
	/* blocks: a slot's task takes every wslots-th, transforms its tiles
	 * (V), then computes every group (P) */
	ox_cg_tasks(cg, q->wslots);
	ox_cg_line(cg, 1, geo_line, (long long)q->C, (long long)q->C);
	if (wo.len)
		ox_cg_line(cg, 1, "%s", wo.s);
	ox_cg_line(cg, 1, "float *const vs = (float *)out%d + t * %lld, *const ps = vs + %lld;", n->nout - 1,
		   (long long)q->wslot, (long long)(w.T2 * q->wvs));
	ox_cg_line(cg, 1, "for (long blk = t; blk < %s; blk += %d) {", D(dnblk), q->wslots);
	if (w.trt)
		ox_cg_line(cg, 2, "const long tb = blk * %lld, nb = %s - tb < %lld ? %s - tb : %lld; /* the block's first "
			   "tile, its tiles */", (long long)q->wnt, D(w.tiles), (long long)q->wnt, D(w.tiles),
			   (long long)q->wnt);
	else if (lastb == q->wnt)
		ox_cg_line(cg, 2, "const long tb = blk * %lld, nb = %lld; /* the block's first tile, its tiles */",
			   (long long)q->wnt, (long long)q->wnt);
	else
		ox_cg_line(cg, 2, "const long tb = blk * %lld, nb = blk < %lld ? %lld : %lld; /* the block's first tile, "
			   "its tiles */", (long long)q->wnt, (long long)(nblk - 1), (long long)q->wnt, (long long)lastb);
	ox_cg_line(cg, 2, "for (long j = 0; j < nb; j++) { /* the transformed windows V[%d][tiles][%lld] */", w.T2,
		   (long long)w.cp);
	ox_cg_line(cg, 3, "const long tt = tb + j;");
	ox_cg_line(cg, 3, "float *v = vs + j * %lld;", (long long)w.cp);
	input_tile(cg, 3, &w);
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 2, "for (long gi = 0; gi < %lld; gi++) { /* groups of %d output vectors */", (long long)w.ng, q->ocb);
	group(cg, 3, &w);
	ox_cg_line(cg, 2, "}");
	ox_cg_line(cg, 1, "}");
	ox_buf_free(&wo);
	return 0;
}
