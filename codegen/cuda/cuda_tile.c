/* cuda_tile.c: the hand-scheduled tiles of --target cuda: convolutions
 * and GEMMs on FFMA or tensor-core tiles in shared memory (split-K in one
 * kernel, a GEMM's row norm in its tail), with their fused epilogues
 * (opt/epilogue.c, rendered from the shared description: ox_cu_epilogue),
 * depthwise convolutions a thread per output, and the window kernels of
 * the pools (ox_cu_emit_window). The families conv, gemm and window of
 * ir/ops.def's cuda column.
 */
#include "cuda_kernels.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The epilogue as scalar statements: the body's scalar rendering
 * (codegen/c/emit_vec.c; the functions of runtime_min/ox_cuda.h, which
 * mirror the vector ones name for name) */
static int body(ox_cg *cg, ox_graph *b, const char *const *in, ox_buf *t, int lvl)
{
	return ox_cg_vbody(cg, t, b, in, "v", lvl, 1);
}

/* The value is `v`; operand j of the body (input first + j - 1 of n) reads
 * <pre><j>[k] at the C index expression `chan` (one per channel), `full`
 * (the shape ref's own) or [0] (a scalar); an omitted one (a gated MLP's
 * up column, ox_glu) is the variable `u`. */
int ox_cu_epilogue_of(ox_cg *cg, ox_graph *g, ox_node *n, ox_graph *b, int first, char pre, const ox_shape *ref,
		      ox_buf *t, const char *chan, const char *full, int lvl)
{
	char **in = calloc((size_t)b->ninputs + 1, sizeof *in);
	in[0] = strdup("v");
	for (int j = 1; j < b->ninputs; j++) {
		if (n->in[first + j - 1] < 0) { /* a gated MLP's up column (ox_glu): the variable u */
			in[j] = strdup("u");
			continue;
		}
		const ox_value *x = &g->vals[n->in[first + j - 1]];
		char e[128];
		if (ox_shape_numel(&x->shape) == 1)
			ox_cg_snprintf(e, sizeof e, "%c%d[0]", pre, j);
		else if (x->shape.rank == ref->rank && ox_shape_numel(&x->shape) == ox_shape_numel(ref))
			ox_cg_snprintf(e, sizeof e, "%c%d[%s]", pre, j, full);
		else
			ox_cg_snprintf(e, sizeof e, "%c%d[%s]", pre, j, chan);
		in[j] = strdup(ox_cg_load(x->dtype, e));
	}
	int rc = body(cg, b, (const char *const *)in, t, lvl);
	for (int j = 0; j < b->ninputs; j++)
		free(in[j]);
	free(in);
	return rc;
}

int ox_cu_epilogue(ox_cg *cg, ox_graph *g, ox_node *n, ox_buf *t, const char *chan, const char *full, int lvl)
{
	ox_graph *b = ox_ir_epilogue(n);
	return b ? ox_cu_epilogue_of(cg, g, n, b, ox_ir_epilogue_first(n), 'e', &ox_out(g, n, 0)->shape, t, chan,
				     full, lvl)
		 : 0;
}

void ox_cu_epi_params_of(ox_graph *g, ox_node *n, ox_graph *b, int first, char pre, ox_buf *params, ox_buf *args)
{
	for (int j = 1; b && j < b->ninputs; j++) {
		if (n->in[first + j - 1] < 0) /* (ox_glu: the kernel's u) */
			continue;
		ox_buf_printf(params, ", const %s *__restrict__ %c%d", ox_cg_ctype(g->vals[n->in[first + j - 1]].dtype),
			      pre, j);
		ox_buf_printf(args, ", in%d", first + j - 1);
	}
}

void ox_cu_epi_params(ox_graph *g, ox_node *n, ox_buf *params, ox_buf *args)
{
	ox_cu_epi_params_of(g, n, ox_ir_epilogue(n), ox_ir_epilogue_first(n), 'e', params, args);
}

/* ox_cu_tile_loop's loads of one operand of a chunk into its registers
 * (ra or rb): n passes of the block's nt threads, v elements each at the
 * position pos (C declarations of i) where cond holds, else zero */
static void tile_load(ox_buf *t, const char *name, int n, int nt, int groups, const char *pos, const char *cond,
		      int v, const char *et, const char *zero, const char *load)
{
	char few[32] = ""; /* fewer groups than passes of the threads */
	if (n * nt > groups)
		ox_cg_snprintf(few, sizeof few, "i < %d && ", groups);
	ox_buf_printf(t, "\t\tOX_UNROLL\n"
			 "\t\tfor (int j = 0; j < %d; j++) {\n"
			 "\t\t\tconst int i = tid + j * %d;\n"
			 "\t\t\tconst $I %s;\n"
			 "\t\t\t%s %s[%d] = {%s};\n",
		      n, nt, pos, et, name, v, zero);
	ox_buf_printf(t, "\t\t\tif (%s%s) {\n"
			 "%s\t\t\t}\n",
		      few, cond, load);
	if (v > 1)
		ox_buf_printf(t, "\t\t\tfor (int u = 0; u < %d; u++)\n\t\t\t\tr%s[j * %d + u] = %s[u];\n\t\t}\n", v, name,
			      v, name);
	else
		ox_buf_printf(t, "\t\t\tr%s[j] = %s[0];\n\t\t}\n", name, name);
}

/* and its stores of those registers into the shared tile (As or Bs) of
 * this pass (cur), element u of pass j at [first][second], through the
 * conversion cv ("" or ox_f16, ox_bf16) */
static void tile_store(ox_buf *t, const char *name, int n, int nt, int groups, int v, const char *first,
		       const char *second, const char *cv)
{
	const int S = name[0] - 'a' + 'A';
	ox_buf_printf(t, "\t\tOX_UNROLL\n\t\tfor (int j = 0; j < %d; j++) {\n\t\t\tconst int i = tid + j * %d;\n", n, nt);
	if (n * nt > groups)
		ox_buf_printf(t, "\t\t\tif (i >= %d)\n\t\t\t\tbreak;\n", groups);
	if (v > 1)
		ox_buf_printf(t, "\t\t\tfor (int u = 0; u < %d; u++)\n\t\t\t\t%cs[cur][%s][%s] = %s(r%s[j * %d + u]);\n", v, S,
			      first, second, cv, name, v);
	else
		ox_buf_printf(t, "\t\t\t%cs[cur][%s][%s] = %s(r%s[j]);\n", S, first, second, cv, name);
	ox_buf_puts(t, "\t\t}\n");
}

/* the tile's products on tensor cores (mma.sync: TF32, f16, bf16)? */
static int tile_mma(int kind)
{
	return kind == OX_CU_TILE_MMA || kind == OX_CU_TILE_F16 || kind == OX_CU_TILE_BF16;
}

/* a thread's outputs along each side of ox_cu_tile_loop's tile: R x R
 * (FFMA, int) */
static int tile_side(int BM, int BN, int kind, int64_t blocks)
{
	return !tile_mma(kind) && BM == 32 && BN == 32 && blocks < 4 * OX_CU_SMS ? 2 : 4;
}

int ox_cu_tile_threads(int BM, int BN, int kind, int64_t blocks)
{
	const int R = tile_side(BM, BN, kind, blocks);
	return tile_mma(kind) ? 128 : BM / R * (BN / R);
}

/* Tiles of BM x BN outputs over chunks of 16 of the reduction in shared
 * memory. A (BM rows of the reduction) and B (16 x BN) come from the
 * caller's loads: LOADA(m, k) and LOADB(k, p) as C statements setting a
 * and b (left zero outside). FFMA (and int): a thread computes R x R
 * outputs, 4 x 4 (256 threads on 64 x 64, 64 on 32 x 32), or 2 x 2 (256
 * threads on 32 x 32) when the grid has fewer than 4 blocks per SM: a
 * small product at batch 1 then has 4 times the warps to hide its loads'
 * latency. mma: 4 warps of BM/2 x BN/2, each a grid of 16 x 8 tensor-core
 * products in TF32 (ox_mma_tf32, runtime_min/ox_cuda.h: m16n8k8, the PTX
 * ISA's fragment layout), or of 16 x 8 x 16 products in f16 or bf16 (ox_mma_f16,
 * ox_mma_bf16: m16n8k16, twice the rate) from f16 (bf16) shared tiles,
 * As [m][k] and Bs [k][n], whose fragments ox_ldsm4 (ldmatrix) reads, B's
 * transposed: the values rounded once, when stored. The shared rows are
 * padded so that the fragments' reads hit 32 banks: by 8 for TF32 (lane =
 * 4 g + t reads row t, column g), by 8 values for k16 (ldmatrix's 8 rows
 * of 16 bytes: rows 48 or 80, 144 bytes apart), by 4 for FFMA. */
/* the MI x NI mma products of a warp's tile in fragments a, b into acc,
 * by fn (ox_mma_tf32, ox_mma_f16, ox_mma_bf16), then the end of the
 * k-step's block */
static void mma_products(ox_buf *t, int MI, int NI, const char *fn)
{
	ox_buf_printf(t, "\t\t\t\tOX_UNROLL\n"
			 "\t\t\t\tfor (int i = 0; i < %d; i++)\n"
			 "\t\t\t\t\tOX_UNROLL\n"
			 "\t\t\t\t\tfor (int j = 0; j < %d; j++)\n"
			 "\t\t\t\t\t\t%s(&acc[(i * %d + j) * 4], a[i], b[j]);\n"
			 "\t\t\t}\n",
		      MI, NI, fn, NI);
}

void ox_cu_tile_loop(ox_buf *t, int BM, int BN, const char *M, const char *N, const char *loada, int va,
		     const char *loadb, int vb, int kind, int64_t blocks, ox_cu_tile *geo)
{
	/* the reduction from ks0 to ks1 (a split of it: ox_cu_split_of) */
	const int k16 = kind == OX_CU_TILE_F16 || kind == OX_CU_TILE_BF16;
	const int mma = tile_mma(kind), in = kind == OX_CU_TILE_INT;
	const int pad = kind == OX_CU_TILE_MMA ? 8 : 4, MI = BM / 32, NI = BN / 16;
	/* the integer tile: int operands, sums modulo 2^32 in unsigned */
	const char *et = in ? "int" : "float", *zero = in ? "0" : "0.0f";
	const char *cv = !k16 ? "" : kind == OX_CU_TILE_F16 ? "ox_f16" : "ox_bf16";
	const int R = tile_side(BM, BN, kind, blocks);
	geo->nt = ox_cu_tile_threads(BM, BN, kind, blocks);
	geo->ne = mma ? MI * NI * 4 : R * R;
	int nt = geo->nt;
	if (k16) /* (MI 1 or 2, NI 2 or 4: the B fragments in pairs) */
		ox_buf_printf(t, "\t__shared__ __align__(16) uint16_t As[2][%d][24];\n"
				 "\t__shared__ __align__(16) uint16_t Bs[2][16][%d];\n",
			      BM, BN + 8);
	else
		ox_buf_printf(t, "\t__shared__ __align__(16) %s As[2][16][%d];\n\t__shared__ __align__(16) %s Bs[2][16][%d];\n",
			      et, BM + pad, et, BN + pad);
	if (mma) {
		ox_buf_puts(t, "\tconst int tid = threadIdx.x, lane = tid % 32, wm = tid / 64, wn = tid / 32 % 2, g = lane / 4, "
			       "t4 = lane % 4;\n");
		ox_cg_snprintf(geo->row, sizeof geo->row, "wm * %d + e / %d * 16 + g + e %% 4 / 2 * 8", BM / 2, NI * 4);
		ox_cg_snprintf(geo->col, sizeof geo->col, "wn * %d + e / 4 %% %d * 8 + t4 * 2 + e %% 2", BN / 2, NI);
	} else {
		ox_buf_printf(t, "\tconst int tid = threadIdx.x, tx = tid %% %d, ty = tid / %d;\n", BN / R, BN / R);
		ox_cg_snprintf(geo->row, sizeof geo->row, "ty * %d + e / %d", R, R);
		ox_cg_snprintf(geo->col, sizeof geo->col, "tx * %d + e %% %d", R, R);
	}
	ox_buf_printf(t, "\tconst $I p0 = ($I)blockIdx.x * %d, m0 = ($I)blockIdx.y * %d;\n", BN, BM);
	ox_buf_printf(t, "\t%s acc[%d];\n\tOX_UNROLL\n\tfor (int e = 0; e < %d; e++)\n\t\tacc[e] = %s;\n",
		      in ? "unsigned" : "float", geo->ne, geo->ne, in ? "0u" : "0.0f");
	/* Software pipelining: each pass loads chunk kn of A and B from global
	 * memory into registers (ra, rb), then runs the products of chunk
	 * kn - 16 from the shared tiles while those loads are in flight, then
	 * stores the registers into the shared tiles for the next pass. The
	 * tiles are double-buffered: pass `cur` stores into buffer cur and
	 * multiplies from the other, which the previous pass stored; the one
	 * barrier a pass, after its stores, also orders the products that read
	 * a buffer before the stores into it a pass later. A thread loads va
	 * consecutive k of a row of A (ga groups per row) and vb consecutive p
	 * of a row of B (gb groups per row). */
	const int ga = 16 / va, gb = BN / vb;
	const int na = (BM * ga + nt - 1) / nt, nb = (16 * gb + nt - 1) / nt; /* (the last pass partial: 2 x 2) */
	ox_buf_printf(t, "\t%s ra[%d], rb[%d];\n\tfor ($I kn = ks0;; kn += 16) {\n"
			 "\t\tconst int cur = (int)((kn - ks0) >> 4 & 1);\n",
		      et, na * va, nb * vb);
	char pos[96], cond[96];
	ox_cg_snprintf(pos, sizeof pos, "m = m0 + i / %d, k = kn + i %% %d * %d", ga, ga, va);
	ox_cg_snprintf(cond, sizeof cond, "m < %s && k < ks1", M);
	tile_load(t, "a", na, nt, BM * ga, pos, cond, va, et, zero, loada);
	ox_cg_snprintf(pos, sizeof pos, "k = kn + i / %d, p = p0 + i %% %d * %d", gb, gb, vb);
	ox_cg_snprintf(cond, sizeof cond, "k < ks1 && p < %s", N);
	tile_load(t, "b", nb, nt, 16 * gb, pos, cond, vb, et, zero, loadb);
	/* the products of the chunk in the shared tiles (none before the first) */
	ox_buf_puts(t, "\t\tif (kn > ks0) {\n\t\t\tconst auto Ap = As[cur ^ 1];\n\t\t\tconst auto Bp = Bs[cur ^ 1];\n");
	if (k16) {
		/* one k16 step: lane l gives row l % 8 of matrix l / 8 to
		 * ldmatrix; A's four matrices are its 16 x 16 (rows 0-7, 8-15 by
		 * k 0-7, then k 8-15), B's are two columns j, j + 1 of 8 (k 0-7,
		 * 8-15 each) */
		ox_buf_printf(t, "\t\t\t{\n"
				 "\t\t\t\tunsigned a[%d][4], b[%d][2];\n"
				 "\t\t\t\tconst int lr = lane %% 8 + (lane >> 3 & 1) * 8, lc = lane >> 4;\n"
				 "\t\t\t\tOX_UNROLL\n"
				 "\t\t\t\tfor (int i = 0; i < %d; i++)\n"
				 "\t\t\t\t\tox_ldsm4(a[i], &Ap[wm * %d + i * 16 + lr][lc * 8]);\n"
				 "\t\t\t\tOX_UNROLL\n"
				 "\t\t\t\tfor (int j = 0; j < %d; j += 2) {\n"
				 "\t\t\t\t\tunsigned q[4];\n"
				 "\t\t\t\t\tox_ldsm4t(q, &Bp[lr][wn * %d + (j + lc) * 8]);\n"
				 "\t\t\t\t\tb[j][0] = q[0], b[j][1] = q[1], b[j + 1][0] = q[2], b[j + 1][1] = q[3];\n"
				 "\t\t\t\t}\n",
			      MI, NI, MI, BM / 2, NI, BN / 2);
		mma_products(t, MI, NI, kind == OX_CU_TILE_F16 ? "ox_mma_f16" : "ox_mma_bf16");
	} else if (mma) {
		ox_buf_printf(t, "\t\t\tOX_UNROLL\n"
				 "\t\t\tfor (int kk = 0; kk < 16; kk += 8) {\n"
				 "\t\t\t\tunsigned a[%d][4], b[%d][2];\n"
				 "\t\t\t\tOX_UNROLL\n"
				 "\t\t\t\tfor (int i = 0; i < %d; i++) {\n"
				 "\t\t\t\t\tconst int r = wm * %d + i * 16 + g;\n"
				 "\t\t\t\t\ta[i][0] = ox_tf32(Ap[kk + t4][r]), a[i][1] = ox_tf32(Ap[kk + t4][r + 8]);\n"
				 "\t\t\t\t\ta[i][2] = ox_tf32(Ap[kk + t4 + 4][r]), a[i][3] = ox_tf32(Ap[kk + t4 + 4][r + 8]);\n"
				 "\t\t\t\t}\n"
				 "\t\t\t\tOX_UNROLL\n"
				 "\t\t\t\tfor (int j = 0; j < %d; j++) {\n"
				 "\t\t\t\t\tconst int c = wn * %d + j * 8 + g;\n"
				 "\t\t\t\t\tb[j][0] = ox_tf32(Bp[kk + t4][c]), b[j][1] = ox_tf32(Bp[kk + t4 + 4][c]);\n"
				 "\t\t\t\t}\n",
			      MI, NI, MI, BM / 2, NI, BN / 2);
		mma_products(t, MI, NI, "ox_mma_tf32");
	} else {
		/* one 16-byte (R 4) or 8-byte (R 2) shared load each */
		const char *vt = in ? (R == 4 ? "int4" : "int2") : (R == 4 ? "float4" : "float2");
		const char *lanes = R == 4 ? "av.x, av.y, av.z, av.w}, b[4] = {bv.x, bv.y, bv.z, bv.w}"
					   : "av.x, av.y}, b[2] = {bv.x, bv.y}";
		ox_buf_printf(t, "\t\t\tfor (int kk = 0; kk < 16; kk++) {\n"
				  "\t\t\t\tconst %s av = *(const %s *)&Ap[kk][ty * %d], bv = *(const %s *)&Bp[kk][tx * %d];\n"
				  "\t\t\t\tconst %s a[%d] = {%s;\n",
			      vt, vt, R, vt, R, et, R, lanes);
		ox_buf_printf(t, "\t\t\t\tfor (int i = 0; i < %d; i++)\n"
				  "\t\t\t\t\tfor (int j = 0; j < %d; j++)\n",
			      R, R);
		if (in)
			ox_buf_printf(t, "\t\t\t\t\t\tacc[i * %d + j] += (unsigned)(a[i] * b[j]);\n\t\t\t}\n", R);
		else
			ox_buf_printf(t, "\t\t\t\t\t\tacc[i * %d + j] = fmaf(a[i], b[j], acc[i * %d + j]);\n\t\t\t}\n", R,
				      R);
	}
	ox_buf_puts(t, "\t\t}\n\t\tif (kn >= ks1)\n\t\t\tbreak;\n");
	char row[64], col[64]; /* (k16: A's rows along k) */
	if (va > 1)
		ox_cg_snprintf(row, sizeof row, "i %% %d * %d + u", ga, va), ox_cg_snprintf(col, sizeof col, "i / %d", ga);
	else
		ox_cg_snprintf(row, sizeof row, "i %% 16"), ox_cg_snprintf(col, sizeof col, "i / 16");
	tile_store(t, "a", na, nt, BM * ga, va, k16 ? col : row, k16 ? row : col, cv);
	if (vb > 1)
		ox_cg_snprintf(row, sizeof row, "i / %d", gb), ox_cg_snprintf(col, sizeof col, "i %% %d * %d + u", gb, vb);
	else
		ox_cg_snprintf(row, sizeof row, "i / %d", BN), ox_cg_snprintf(col, sizeof col, "i %% %d", BN);
	tile_store(t, "b", nb, nt, 16 * gb, vb, row, col, cv);
	ox_buf_puts(t, "\t\t__syncthreads();\n\t}\n");
}

/* The alignment in bytes (up to 64) that value id's address is known to
 * have on the device: its arena offset (the arena is 64-byte aligned:
 * cudaMalloc's, or the caller's, checked by the run), or its offset in a
 * constant (each constant 64-byte aligned in the device weights); 1 for a
 * graph input's bytes (the caller's pointers) and inside control bodies. */
int ox_cu_align(ox_graph *g, ox_id id)
{
	if (g->parent || id < 0)
		return 1;
	int64_t off = g->vals[id].offset;
	if (off < 0 && g->vals[ox_plan_storage(g, id, &off)].kind != OX_V_CONST)
		return 1;
	return ox_cu_pow2(off, 64);
}

int ox_cu_pow2(int64_t b, int top)
{
	int a = top;
	while (b % a)
		a /= 2;
	return a;
}

/* yv[0..3] stored at y[at] (a kernel's output y, value id): one ox_st4
 * where y's address is aligned, else four stores */
void ox_cu_store4(ox_buf *t, ox_graph *g, ox_id id, const char *at)
{
	if (ox_cu_align(g, id) >= 4 * (int)ox_dtype_size(g->vals[id].dtype))
		ox_buf_printf(t, "\tox_st4(&y[%s], yv);\n", at);
	else
		ox_buf_printf(t, "\tfor (int u = 0; u < 4; u++)\n\t\ty[%s + u] = yv[u];\n", at);
}

/* a tile loader's statements at lvl tabs (ox_cu_tile_loop's LOADA,
 * LOADB): dst[0..v-1] from the OX_T element e and the v - 1 after it, one
 * ox_ld4 when v is 4 */
void ox_cu_tile_ld(char *buf, size_t sz, int lvl, const char *dst, int v, const char *e)
{
	const char *tabs = "\t\t\t\t\t\t\t\t";
	if (v == 4) {
		ox_cg_snprintf(buf, sz, "%.*sOX_T h[4];\n"
			 "%.*sox_ld4(&%s, h);\n",
			 lvl, tabs, lvl, tabs, e);
		ox_cg_snappend(buf, sz, "%.*s%s[0] = OX_LD(h[0]), %s[1] = OX_LD(h[1]), %s[2] = OX_LD(h[2]), %s[3] = OX_LD(h[3]);\n",
			 lvl, tabs, dst, dst, dst, dst);
	} else
		ox_cg_snprintf(buf, sz, "%.*s%s[0] = OX_LD(%s);\n", lvl, tabs, dst, e);
}

/* Split-K: when the tiles are too few to fill the GPU (132 SMs, two
 * blocks each) and the reduction is long (64 or more a part), S blocks
 * per tile each sum a part into the workspace (ox_cu_ws); the last of them
 * to arrive (ox_split_last, on the tile's counter in ox_cu_ctr) adds the S
 * parts in split order, the bias and the epilogue: one kernel, and the
 * sums stay deterministic. */
int ox_cu_split_of(int64_t blocks, int64_t K)
{
	int S = 1;
	while (S < 16 && blocks * S < 2 * OX_CU_SMS && K / (S * 2) >= 64)
		S *= 2;
	return S;
}

/* the length of each of S splits of a reduction of K: ceil(K / S) up to a
 * multiple of the 16-wide chunks, so that the S splits cover all of K (the
 * last may be shorter, or empty). K / S rounded down once lost the last
 * K % S elements: a Conv of K = 129 summed 128 of them. */
int64_t ox_cu_split_len(int64_t K, int S)
{
	return ((K + S - 1) / S + 15) / 16 * 16;
}

/* a split kernel's parameters after its output y (a MatMulSplit's last
 * output): the workspace ws and the counters ctr, where the launch passes
 * ox_cu_ws, ox_cu_ctr; "" when not split (S 1). The kernel has `tiles`
 * tiles (cg->cu_ctr counters at least). */
const char *ox_cu_ws_params(ox_cg *cg, int S, int64_t tiles)
{
	if (S < 2)
		return "";
	if (tiles > cg->cu_ctr)
		cg->cu_ctr = tiles;
	return ", float *__restrict__ ws, unsigned int *__restrict__ ctr";
}

/* a split kernel's middle, after the loop that wrote the block's part: the
 * blocks of a tile are blockIdx.z / S's (x, y); all but the last to arrive
 * leave */
void ox_cu_split_arrive(ox_buf *t, int S)
{
	ox_buf_printf(t, "\t/* the tile's last block to arrive sums the %d parts */\n"
			 "\tif (!ox_split_last(ctr + (($I)blockIdx.z / %d * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x, %d))\n"
			 "\t\treturn;\n",
		      S, S, S);
}

int ox_cu_tile_kind(const ox_cg *cg, int dt)
{
	return dt == OX_F16 ? OX_CU_TILE_F16 : dt == OX_BF16 ? OX_CU_TILE_BF16 : cg->tf32 ? OX_CU_TILE_MMA : OX_CU_TILE_FFMA;
}

int ox_cu_tile_of(int64_t M, int64_t N, int64_t z)
{
	int64_t t64 = (M + 63) / 64 * ((N + 63) / 64) * z;
	return t64 >= 2 * OX_CU_SMS ? 64 : 32;
}

int ox_cu_window(ox_graph *g, ox_node *n, const ox_value *x, const ox_value *w, const ox_value *y, ox_cu_win *q)
{
	int64_t k[3], s[3], d[3], pads[6], in[3], out[3];
	int ap;
	q->nsp = x->shape.rank - 2;
	if (q->nsp < 1 || q->nsp > 3 || ox_ir_nn_window(g, n, q->nsp, w ? &w->shape : NULL, k, s, d, pads, &ap))
		return -1;
	for (int i = 0; i < q->nsp; i++)
		in[i] = x->shape.d[i + 2], out[i] = y->shape.d[i + 2];
	ox_ir_nn_same_pads(ap, q->nsp, in, out, k, s, d, pads);
	ox_cg_to3(k, q->nsp, 1, q->K), ox_cg_to3(s, q->nsp, 1, q->S), ox_cg_to3(d, q->nsp, 1, q->D);
	ox_cg_to3(pads, q->nsp, 0, q->P), ox_cg_to3(in, q->nsp, 1, q->I), ox_cg_to3(out, q->nsp, 1, q->O);
	return 0;
}

void ox_cu_window_load(char *buf, size_t sz, const ox_cu_win *q, const char *pre, const char *post, ox_cu_rt *R)
{
	long long K[3], S[3], P[3], D[3], I[3], O[3];
	for (int i = 0; i < 3; i++)
		K[i] = q->K[i], S[i] = q->S[i], P[i] = q->P[i], D[i] = q->D[i], I[i] = q->I[i], O[i] = q->O[i];
	if (q->nsp < 3) {
		/* (the input's and output's rows and columns: run-time ones R's) */
		char i1[32], i2[32], o2[32];
		ox_cu_rt_dim(R, q->O[2], o2, sizeof o2), ox_cu_rt_dim(R, q->I[1], i1, sizeof i1);
		ox_cu_rt_dim(R, q->I[2], i2, sizeof i2);
		ox_cg_snprintf(buf, sz, "\t\t\t\tconst $I c = k / %lld, r = k %% %lld, kh = r / %lld, kw = r %% %lld;\n",
			 K[1] * K[2], K[1] * K[2], K[2], K[2]);
		ox_cg_snappend(buf, sz, "\t\t\t\tconst $I ih = p / %s * %lld - %lld + kh * %lld, iw = p %% %s * %lld - %lld + kw * %lld;\n",
			 o2, S[1], P[1], D[1], o2, S[2], P[2], D[2]);
		ox_cg_snappend(buf, sz, "\t\t\t\tif (ih >= 0 && ih < %s && iw >= 0 && iw < %s)\n"
			 "\t\t\t\t\t%s(c * %s + ih) * %s + iw%s\n",
			 i1, i2, pre, i1, i2, post);
	} else {
		ox_cg_snprintf(buf, sz, "\t\t\t\tconst $I c = k / %lld, r = k %% %lld, kd = r / %lld, kh = r / %lld %% %lld, kw = r %% %lld;\n",
			 K[0] * K[1] * K[2], K[0] * K[1] * K[2], K[1] * K[2], K[2], K[1], K[2]);
		ox_cg_snappend(buf, sz, "\t\t\t\tconst $I id = p / %lld * %lld - %lld + kd * %lld, ", O[1] * O[2], S[0], P[0],
			 D[0]);
		ox_cg_snappend(buf, sz, "ih = p / %lld %% %lld * %lld - %lld + kh * %lld;\n", O[2], O[1], S[1], P[1], D[1]);
		ox_cg_snappend(buf, sz, "\t\t\t\tconst $I iw = p %% %lld * %lld - %lld + kw * %lld;\n", O[2], S[2], P[2], D[2]);
		ox_cg_snappend(buf, sz, "\t\t\t\tif (id >= 0 && id < %lld && ih >= 0 && ih < %lld && iw >= 0 && iw < %lld)\n",
			 I[0], I[1], I[2]);
		ox_cg_snappend(buf, sz, "\t\t\t\t\t%s((c * %lld + id) * %lld + ih) * %lld + iw%s\n",
			 pre, I[0], I[1], I[2], post);
	}
}

static int conv_ok(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *y = ox_out(g, n, 0), *b = ox_in(g, n, 2);
	if (!x || !w || !y || !ox_cu_ftype(y->dtype) || x->dtype != y->dtype || w->dtype != y->dtype || x->layout ||
	    y->layout || w->layout || x->shape.rank < 3 || x->shape.rank > 5 || (b && (b->dtype != y->dtype || b->layout)))
		return 0;
	if (ox_shape_is_rt(g, &w->shape))
		return 0;
	if (!ox_shape_is_rt(g, &x->shape) && !ox_shape_is_rt(g, &y->shape))
		return 1;
	/* run-time batch and image size (emit_conv's parameters): 1-D or 2-D */
	return x->shape.rank <= 4 && ox_opt_rt_window(g, n);
}

static int emit_conv(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *w = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	ox_cu_win q;
	if (ox_cu_window(g, n, x, w, y, &q))
		return -1;
	if (q.nsp < 3 && ox_attr_int(n, "group", 1) == x->shape.d[1] && w->shape.d[0] == x->shape.d[1])
		return ox_cu_emit_window(cg, g, n); /* depthwise (a 3-D one: the tiles) */
	/* the 2-D text's names: rows and columns (a 1-D Conv is one row) */
	const int64_t k[2] = {q.K[1], q.K[2]}, s[2] = {q.S[1], q.S[2]}, d[2] = {q.D[1], q.D[2]};
	const int64_t pads[2] = {q.P[1], q.P[2]}, in[2] = {q.I[1], q.I[2]}, out[2] = {q.O[1], q.O[2]};
	const int64_t C = x->shape.d[1], O = y->shape.d[1], G = ox_attr_int(n, "group", 1);
	const int64_t Cg = C / G, Og = O / G, K = Cg * q.K[0] * k[0] * k[1];
	/* N, P (output pixels), IS (input pixels) may be run-time dims (conv_ok):
	 * the kernel's parameters (R), the tops of N and P sizing the tiles */
	const int rt = ox_node_rt(g, n);
	ox_cu_rt R = {g, 0, {0}}, *Rp = rt ? &R : NULL;
	const ox_dim dN = x->shape.d[0], dP = ox_dim_mul(g, q.O[0], ox_dim_mul(g, out[0], out[1]));
	const ox_dim dIS = ox_dim_mul(g, q.I[0], ox_dim_mul(g, in[0], in[1]));
	const int64_t N = ox_opt_top(g, dN), P = ox_opt_top(g, dP);
	char sP[32], sIS[32], lb[1024];
	ox_cu_rt_dim(Rp, dP, sP, sizeof sP), ox_cu_rt_dim(Rp, dIS, sIS, sizeof sIS);
	ox_cu_window_load(lb, sizeof lb, &q, "b[0] = OX_LD(xg[", "]);", Rp); /* (at most 5 of R's) */
	const int hasb = n->nin > 2 && n->in[2] >= 0;
	ox_buf t = ox_cu_kbuf(g, n), params = {0}, args = {0};
	ox_cu_epi_params(g, n, &params, &args);
	ox_cu_rt_params(cg, &R, &params, &args);
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	if (rt) {
		char xs[128], ys[128];
		ox_shape_str(g, &x->shape, xs, sizeof xs), ox_shape_str(g, &y->shape, ys, sizeof ys);
		ox_buf_printf(&t, "/* %s: Conv %lldx%lld, stride %lldx%lld, dilation %lldx%lld, pads %lld,",
			      cg->fname, (long long)k[0], (long long)k[1], (long long)s[0], (long long)s[1],
			      (long long)d[0], (long long)d[1], (long long)pads[0]);
		ox_buf_printf(&t, "%lld, group %lld: "
				  "%s -> %s, run-time dims its parameters */\n",
			      (long long)pads[1], (long long)G, xs, ys);
	} else if (q.nsp == 3) {
		ox_buf_printf(&t, "/* %s: Conv %lldx%lldx%lld, stride %lldx%lldx%lld, dilation %lldx",
			      cg->fname, (long long)q.K[0], (long long)k[0], (long long)k[1], (long long)q.S[0],
			      (long long)s[0], (long long)s[1], (long long)q.D[0]);
		ox_buf_printf(&t, "%lldx%lld, pads %lld,%lld,%lld, ",
			      (long long)d[0], (long long)d[1], (long long)q.P[0], (long long)pads[0], (long long)pads[1]);
		ox_buf_printf(&t, "group %lld: [%lld,%lld,%lld,%lld,%lld] -> [%lld,%lld,",
			      (long long)G, (long long)N, (long long)C, (long long)q.I[0], (long long)in[0],
			      (long long)in[1], (long long)N, (long long)O);
		ox_buf_printf(&t, "%lld,%lld,%lld] */\n",
			      (long long)q.O[0], (long long)out[0], (long long)out[1]);
	} else {
		ox_buf_printf(&t, "/* %s: Conv %lldx%lld, stride %lldx%lld, dilation %lldx%lld, pads %lld,",
			      cg->fname, (long long)k[0], (long long)k[1], (long long)s[0], (long long)s[1],
			      (long long)d[0], (long long)d[1], (long long)pads[0]);
		ox_buf_printf(&t, "%lld, group %lld: ",
			      (long long)pads[1], (long long)G);
		ox_buf_printf(&t, "[%lld,%lld,%lld,%lld] -> [%lld,%lld,%lld,%lld] */\n",
			      (long long)N, (long long)C, (long long)in[0], (long long)in[1], (long long)N, (long long)O,
			      (long long)out[0], (long long)out[1]);
	}
	char chan[64], full[64];
	{
		/* implicit GEMM per image and group: [Og x K] weights x [K x P] windows */
		int T = ox_cu_tile_of(Og, P, N * G);
		char M_[32], N_[32], la[256];
		ox_cg_snprintf(M_, sizeof M_, "%lld", (long long)Og);
		ox_cg_snprintf(N_, sizeof N_, "%s", sP);
		/* the weights' rows four at a time where they are whole and aligned */
		const int va = K % 4 == 0 && ox_cu_align(g, n->in[1]) >= 4 * (int)ox_dtype_size(w->dtype) ? 4 : 1;
		char e[64];
		ox_cg_snprintf(e, sizeof e, "wg[m * %lld + k]", (long long)K);
		ox_cu_tile_ld(la, sizeof la, 4, "a", va, e);
		const int64_t Z = N * G, tiles = (P + T - 1) / T * ((Og + T - 1) / T) * Z;
		int S = ox_cu_split_of(tiles, K);
		if (S * Z * Og * P >= ((int64_t)1 << 30) || rt)
			S = 1;
		const int64_t KS = ox_cu_split_len(K, S);
		if (S > 1 && S * Z * Og * P * 4 > cg->cu_ws)
			cg->cu_ws = S * Z * Og * P * 4;
		/* (split: the parts go to the workspace) */
		ox_buf_printf(&t, "__global__ void %s(const OX_T *__restrict__ x, const OX_T *__restrict__ w,\n"
				  "\t\tconst OX_T *__restrict__ bias, OX_T *__restrict__ y%s%s)\n{\n",
			      kname, ox_cu_ws_params(cg, S, tiles), params.s ? params.s : "");
		ox_buf_printf(&t, "\tconst $I zz = blockIdx.z / %d, ks0 = blockIdx.z %% %d * %lld$L;\n"
				  "\tconst $I ks1 = ks0 + %lld < %lld ? ks0 + %lld : %lld;\n",
			      S, S, (long long)KS, (long long)KS, (long long)K, (long long)KS, (long long)K);
		ox_buf_printf(&t, "\tconst $I nb = zz / %lld, gi = zz %% %lld;\n"
				  "\tconst OX_T *xg = x + (nb * %lld + gi * %lld) * %s;\n"
				  "\tconst OX_T *wg = w + gi * %lld;\n",
			      (long long)G, (long long)G, (long long)C, (long long)Cg, sIS, (long long)(Og * K));
		ox_cu_tile geo;
		ox_cu_tile_loop(&t, T, T, M_, N_, la, va, lb, 1, ox_cu_tile_kind(cg, y->dtype), tiles * S, &geo);
		ox_buf_printf(&t, "\tOX_UNROLL\n\tfor (int e = 0; e < %d; e++) {\n"
				  "\t\tconst $I m = m0 + %s, p = p0 + %s;\n"
				  "\t\tif (m >= %lld || p >= %s)\n\t\t\tcontinue;\n",
			      geo.ne, geo.row, geo.col, (long long)Og, sP);
		ox_cg_snprintf(chan, sizeof chan, "o");
		ox_cg_snprintf(full, sizeof full, "yi");
		if (S > 1) {
			/* the part of split blockIdx.z % S, into the workspace [Z*S][Og][P] */
			ox_buf_printf(&t, "\t\tws[(($I)blockIdx.z * %lld + m) * %lld + p] = acc[e];\n\t}\n",
				      (long long)Og, (long long)P);
			ox_cu_split_arrive(&t, S);
			/* the tile's sums of the parts, bias and epilogue */
			ox_buf_printf(&t, "\tOX_UNROLL\n"
					  "\tfor (int e = 0; e < %d; e++) {\n"
					  "\t\tconst $I m = m0 + %s, p = p0 + %s;\n"
					  "\t\tif (m >= %lld || p >= %s)\n"
					  "\t\t\tcontinue;\n"
					  "\t\tconst $I o = gi * %lld + m, yi = (nb * %lld + o) * %s + p;\n",
				      geo.ne, geo.row, geo.col, (long long)Og, sP, (long long)Og, (long long)O, sP);
			ox_buf_printf(&t, "\t\tfloat v = %s;\n"
					  "\t\tfor (int s = 0; s < %d; s++)\n"
					  "\t\t\tv += ox_ldcg(&ws[((zz * %d + s) * %lld + m) * %lld + p]);\n",
				      hasb ? "OX_LD(bias[o])" : "0.0f", S, S, (long long)Og, (long long)P);
			if (ox_cu_epilogue(cg, g, n, &t, "o", "yi", 2))
				goto fail;
			ox_buf_puts(&t, "\t\ty[yi] = OX_ST(v);\n\t}\n}\n\n");
			ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %lld, %lld), %d, 0, ox_st, in0, in1, %s, out0, ox_cu_ws, ox_cu_ctr%s);\n",
				     kname, (long long)((P + T - 1) / T), (long long)((Og + T - 1) / T), (long long)(Z * S),
				     geo.nt, hasb ? "in2" : "nullptr", args.s ? args.s : "");
		} else {
			ox_buf_printf(&t, "\t\tconst $I o = gi * %lld + m, yi = (nb * %lld + o) * %s + p;\n"
					  "\t\tfloat v = acc[e]%s;\n",
				      (long long)Og, (long long)O, sP, hasb ? " + OX_LD(bias[o])" : "");
			if (ox_cu_epilogue(cg, g, n, &t, chan, full, 2))
				goto fail;
			ox_buf_puts(&t, "\t\ty[yi] = OX_ST(v);\n\t}\n}\n\n");
			if (rt) { /* the grid from the run's dims */
				char z[300], gx[340], cond[700] = "";
				const char *pe = ox_cg_dim(cg, dP);
				if (ox_dim_is_rt(g, dP))
					ox_cg_snprintf(gx, sizeof gx, "(unsigned)((%s + %d) / %d)", pe, T - 1, T);
				else
					ox_cg_snprintf(gx, sizeof gx, "%lld", (long long)((P + T - 1) / T));
				if (ox_dim_is_rt(g, dN))
					ox_cg_snprintf(z, sizeof z, "(unsigned)(%s * %lld)", ox_cg_dim(cg, dN), (long long)G);
				else
					ox_cg_snprintf(z, sizeof z, "%lld", (long long)Z);
				if (ox_dim_is_rt(g, dP))
					ox_cg_snprintf(cond, sizeof cond, "%s > 0", pe);
				if (ox_dim_is_rt(g, dN))
					ox_cg_snprintf(cond + strlen(cond), sizeof cond - strlen(cond), "%s%s > 0", cond[0] ? " && " : "",
						 ox_cg_dim(cg, dN));
				/* (no test when only the input's dims are the run's) */
				ox_cg_printf(cg, "\t%s%s%sOX_LAUNCH(%s, dim3(%s, %lld, %s), %d, 0, ox_st, in0, in1, ",
					     cond[0] ? "if (" : "", cond, cond[0] ? ")\n\t\t" : "", kname, gx,
					     (long long)((Og + T - 1) / T), z, geo.nt);
				ox_cg_printf(cg, "%s, out0%s);\n",
					     hasb ? "in2" : "nullptr", args.s ? args.s : "");
			} else
				ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %lld, %lld), %d, 0, ox_st, in0, in1, %s, out0%s);\n",
					     kname, (long long)((P + T - 1) / T), (long long)((Og + T - 1) / T), (long long)Z,
					     geo.nt, hasb ? "in2" : "nullptr", args.s ? args.s : "");
		}
	}
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&args);
	return 0;
fail:
	ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args);
	return -1;
}

/* Gemm and MatMul as ox_opt_gemm_geo takes them: [M x K] x [K x N] per
 * product, a batch of products (MatMul) whose operands broadcast per dim;
 * M, K, the batch dims and (a MatMul of two values) N may be run-time dims,
 * the kernel's parameters (the scores of an unfused attention over a
 * dynamic batch and sequence) */
/* the GEMM's store of v at row m, column p: y[yi]; a MatMulSplit's
 * (opt/siblings.c) in the output whose columns p falls in */
static void gemm_store(ox_buf *t, const ox_node *n)
{
	const int64_t *split;
	int ns = n->op == OX_OP_MatMulSplit ? ox_attr_ints(n, "split", &split) : 0;
	if (!ns) {
		ox_buf_puts(t, "\t\ty[yi] = OX_ST(v);\n");
		return;
	}
	ox_buf_puts(t, "\t\t(void)yi;\n");
	int64_t at = 0;
	for (int i = 0; i < ns; i++) {
		if (i + 1 < ns)
			ox_buf_printf(t, "\t\t%sif (p < %lld)\n", i ? "else " : "", (long long)(at + split[i]));
		else
			ox_buf_puts(t, "\t\telse\n");
		char off[32] = "";
		if (at)
			ox_cg_snprintf(off, sizeof off, " - %lld", (long long)at);
		ox_buf_printf(t, "\t\t\ty%d[m * %lld$L + p%s] = OX_ST(v);\n", i, (long long)split[i], off);
		at += split[i];
	}
}

/* A GEMM's norm of its rows (ox_norm, opt/gemmnorm.c) in the kernel's
 * tail: a band's last tile to finish (ox_split_last on the band's counter
 * nctr[blockIdx.y], gridDim.x tiles) reads the band's T rows of y back
 * through L2 and writes them normalized to nout, a warp a row, by the
 * standalone kernel's arithmetic (the same bits). Taken where a warp's
 * share of the band is at most OX_CU_NORM_TAIL elements; else the node's
 * second kernel normalizes the rows (norm_kernel): the tail runs on one
 * block per band, where that kernel has a warp per row. */
#define OX_CU_NORM_TAIL 2048
static void norm_tail(ox_buf *t, ox_node *n, int T, int nt, int64_t N)
{
	const ox_attr *a = ox_attr_get(n, "ox_norm");
	const int rms = a->ints[0] == OX_OP_RMSNormalization;
	ox_buf_printf(t, "\t/* %s of the rows: the last of a band's tiles to finish normalizes its rows */\n"
			 "\tif (!ox_split_last(nctr + blockIdx.y, gridDim.x))\n\t\treturn;\n"
			 "\tfor ($I row = m0 + tid / 32; row < m0 + %d && row < M; row += %d) {\n"
			 "\t\tconst int nl = tid %% 32;\n"
			 "\t\tconst OX_T *xr = y + row * %lld;\n\t\tOX_T *yr = nout + row * %lld;\n",
		      rms ? "RMSNormalization" : "LayerNormalization", T, nt / 32, (long long)N, (long long)N);
	ox_cu_norm_row(t, "\t\t", "nl", "nsc", a->ints[2] >= 0 ? "nbi" : NULL, rms, N, ox_attr_float(n, "ox_norm_eps", 1e-5f),
		 "OX_LD(ox_ldcg(&%s))");
	ox_buf_puts(t, "\t}\n");
}

static int emit_gemm(ox_cg *cg, ox_graph *g, ox_node *n, const ox_gemmgeo *q)
{
	ox_value *a = ox_in(g, n, 0), *bv = ox_in(g, n, 1), *y = ox_out(g, n, 0), *c = ox_in(g, n, 2);
	int gemm = n->op == OX_OP_Gemm, transB = gemm && ox_attr_int(n, "transB", 0);
	double alpha = gemm ? ox_attr_float(n, "alpha", 1.0f) : 1.0, beta = gemm ? ox_attr_float(n, "beta", 1.0f) : 1.0;
	const char *Ms = ox_cg_dim(cg, q->dM), *Ks = ox_cg_dim(cg, q->dK);
	const int64_t N = q->N;
	const int rtn = ox_dim_is_rt(g, q->dN);
	if (rtn && ox_ir_epilogue(n))
		return 1;
	ox_buf t = ox_cu_kbuf(g, n), params = {0}, args = {0}, ys = {0}, outs = {0};
	ox_cu_epi_params(g, n, &params, &args);
	/* run-time N and batch dims: R's parameters after the others */
	ox_cu_rt R = {g, 0, {0}};
	char Nt[32], bdt[OX_MAX_RANK][32], sat[OX_MAX_RANK][40], sbt[OX_MAX_RANK][40];
	if (!ox_cu_rt_dim(&R, q->dN, Nt, sizeof Nt))
		return 1;
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	int T = ox_cu_tile_of(q->M, N, q->batch);
	/* batch offsets: MatMul's batch dims, each operand's stride 0 where it
	 * broadcasts (the output's dims are the larger) */
	int nb = 0;
	if (!gemm && !q->constb) {
		/* each batch dim and the operands' strides along it (0 where one
		 * broadcasts), products of dims: constants, or R's parameters */
		nb = y->shape.rank - 2;
		ox_dim stA = ox_dim_mul(g, q->dM, q->dK), stB = ox_dim_mul(g, q->dK, q->dN);
		for (int i = nb - 1; i >= 0; i--) {
			int ia = i - (nb - (a->shape.rank - 2)), ib = i - (nb - (bv->shape.rank - 2));
			ox_dim da = ia >= 0 ? a->shape.d[ia] : 1, db = ib >= 0 ? bv->shape.d[ib] : 1;
			if (!ox_cu_rt_dim(&R, y->shape.d[i], bdt[i], sizeof bdt[i]) ||
			    !ox_cu_rt_dim(&R, da == 1 ? 0 : stA, sat[i], sizeof sat[i] - 2) ||
			    !ox_cu_rt_dim(&R, db == 1 ? 0 : stB, sbt[i], sizeof sbt[i] - 2))
				goto decline;
			if (!ox_dim_is_rt(g, da == 1 ? 0 : stA)) /* (a constant: the index type's, $L; room kept above) */
				strcat(sat[i], "$L");
			if (!ox_dim_is_rt(g, db == 1 ? 0 : stB))
				strcat(sbt[i], "$L");
			stA = ox_dim_mul(g, stA, da), stB = ox_dim_mul(g, stB, db);
		}
	}
	/* split-K for one product of constant size */
	const int64_t bands = (q->M + T - 1) / T, tiles = bands * ((N + T - 1) / T);
	int S = nb || q->rt ? 1 : ox_cu_split_of(tiles, q->K);
	if (S * q->M * N >= ((int64_t)1 << 30))
		S = 1;
	const int kind = ox_cu_tile_kind(cg, y->dtype);
	/* a norm of the rows (opt/gemmnorm.c): in the tail, or a second kernel */
	const ox_attr *na = ox_attr_get(n, "ox_norm");
	if (na && (nb || rtn || n->nout < 2 || n->out[1] < 0))
		ox_die("codegen: '%s': a norm of a GEMM's rows that is not one product of constant N (opt/gemmnorm.c)",
		       n->name);
	/* a gated MLP's gate and up columns in pairs (opt/siblings.c): the
	 * product's columns p, p + 1 (p even, one thread's) are the output's
	 * column p / 2, the epilogue's u the up column */
	const int glu = ox_attr_get(n, "ox_glu") != NULL;
	if (glu && (nb || rtn || gemm || na || N % 2))
		ox_die("codegen: '%s': a gated MLP's product that is not one MatMul of constant N (opt/siblings.c)", n->name);
	const int warps = ox_cu_tile_threads(T, T, kind, tiles * (S > 1 ? S : q->batch)) / 32;
	const int tail = na && (T + warps - 1) / warps * N <= OX_CU_NORM_TAIL;
	ox_buf_puts(&params, "");
	ox_cu_rt_params(NULL, &R, &params, NULL);
	ox_cu_rt_params(cg, &R, NULL, &args);
	char nsb[48] = ""; /* the norm's scale and bias arguments */
	if (na && na->ints[2] >= 0)
		ox_cg_snprintf(nsb, sizeof nsb, "in%lld, in%lld", (long long)na->ints[1], (long long)na->ints[2]);
	else if (na)
		ox_cg_snprintf(nsb, sizeof nsb, "in%lld, nullptr", (long long)na->ints[1]);
	if (tail) {
		ox_buf_puts(&params, ", const OX_T *__restrict__ nsc, const OX_T *__restrict__ nbi, OX_T *__restrict__ nout,\n"
				     "\t\tunsigned int *__restrict__ nctr");
		ox_buf_printf(&args, ", %s, out1, ox_cu_ctr + %lld", nsb, (long long)(S > 1 ? tiles : 0));
		if ((S > 1 ? tiles : 0) + bands > cg->cu_ctr)
			cg->cu_ctr = (S > 1 ? tiles : 0) + bands;
	}
	ox_buf_printf(&t, "/* %s: %s [%s x %s] x [%s x %s]%s%s",
		      cg->fname, n->optype, q->rt ? "(run-time)" : Ms, q->rt ? "" : Ks, q->rt ? "" : Ks,
		      rtn ? "(run-time)" : Nt, q->transA ? ", A transposed" : "", transB ? ", B transposed" : "");
	ox_buf_printf(&t, "%s%s */\n",
		      ox_ir_epilogue(n) ? ", epilogue fused" : "",
		      n->op == OX_OP_MatMulSplit ? ", its columns split into the outputs" : "");
	/* the outputs: y, or a MatMulSplit's y0, y1, ... (outs: their arguments) */
	if (n->op == OX_OP_MatMulSplit) {
		for (int i = 0; i < n->nout; i++) {
			ox_buf_printf(&ys, "%sOX_T *__restrict__ y%d", i ? ", " : "", i);
			ox_buf_printf(&outs, "%sout%d", i ? ", " : "", i);
		}
	} else {
		ox_buf_puts(&ys, "OX_T *__restrict__ y");
		ox_buf_puts(&outs, "out0");
	}
	ox_buf_printf(&t, "__global__ void %s(const OX_T *__restrict__ A, const OX_T *__restrict__ B,\n"
			  "\t\tconst OX_T *__restrict__ bias, %s%s, $I M, $I K%s)\n{\n",
		      kname, ys.s, ox_cu_ws_params(cg, S, tiles), params.s ? params.s : "");
	if (nb) {
		ox_buf_puts(&t, "\t$I z = blockIdx.z, za = 0, zb = 0;\n");
		for (int i = nb - 1; i >= 0; i--)
			ox_buf_printf(&t, "\tza += z %% %s * %s, zb += z %% %s * %s, z /= %s;\n", bdt[i], sat[i], bdt[i], sbt[i],
				      bdt[i]);
		ox_buf_puts(&t, "\tA += za, B += zb;\n");
		ox_buf_printf(&t, "\ty += ($I)blockIdx.z * M * %s;\n", Nt);
	}
	/* four at a time along the rows of A [M x K] and B [K x N] where they
	 * are whole and aligned (the batch offsets are whole rows) */
	char la[256], lb[256];
	const int es = (int)ox_dtype_size(y->dtype);
	const int va = !q->transA && !q->rt && !ox_dim_is_rt(g, q->dK) && q->K % 4 == 0 &&
				       ox_cu_align(g, n->in[0]) >= 4 * es ? 4 : 1;
	const int vb = !transB && !rtn && N % 4 == 0 && ox_cu_align(g, n->in[1]) >= 4 * es ? 4 : 1;
	ox_cu_tile_ld(la, sizeof la, 4, "a", va, q->transA ? "A[k * M + m]" : "A[m * K + k]");
	ox_cu_tile_ld(lb, sizeof lb, 4, "b", vb, transB ? "B[p * K + k]" : "B[k * NN + p]");
	const int64_t KS = ox_cu_split_len(q->K, S);
	if (S > 1) {
		if (S * q->M * N * 4 > cg->cu_ws)
			cg->cu_ws = S * q->M * N * 4;
		ox_buf_printf(&t, "\tconst $I NN = %lld, ks0 = blockIdx.z * %lld$L, ks1 = ks0 + %lld < K ? ks0 + %lld : K;\n",
			      (long long)N, (long long)KS, (long long)KS, (long long)KS);
	} else {
		ox_buf_printf(&t, "\tconst $I NN = %s, ks0 = 0, ks1 = K;\n\t(void)NN;\n", Nt);
	}
	ox_cu_tile geo;
	ox_cu_tile_loop(&t, T, T, "M", "NN", la, va, lb, vb, kind, tiles * (S > 1 ? S : q->batch), &geo);
	if (S > 1 || !glu) /* (a gated MLP's product has a loop of pairs) */
		ox_buf_printf(&t, "\tOX_UNROLL\n\tfor (int e = 0; e < %d; e++) {\n"
				  "\t\tconst $I m = m0 + %s, p = p0 + %s;\n"
				  "\t\tif (m >= M || p >= NN)\n\t\t\tcontinue;\n",
			      geo.ne, geo.row, geo.col);
	if (S > 1) {
		ox_buf_puts(&t, "\t\tws[(($I)blockIdx.z * M + m) * NN + p] = acc[e];\n\t}\n");
		ox_cu_split_arrive(&t, S);
	}
	const char *cexpr = "";
	char cb[128] = "";
	if (gemm && c) { /* C: a scalar, per column, per row or [M, N] */
		const int r = c->shape.rank, rows = r == 2 && c->shape.d[0] != 1, cols = r >= 1 && c->shape.d[r - 1] != 1;
		const char *ci = ox_shape_numel(&c->shape) == 1 ? "0" : rows && cols ? "m * NN + p" : rows ? "m" : "p";
		ox_cg_snprintf(cb, sizeof cb, " + %s * OX_LD(bias[%s])", ox_cg_lit(OX_F32, beta), ci);
		cexpr = cb;
	}
	char al[64] = "";
	if (alpha != 1.0)
		ox_cg_snprintf(al, sizeof al, "%s * ", ox_cg_lit(OX_F32, alpha));
	if (glu) {
		/* the pairs' sums of the parts (split-K) and the epilogue */
		ox_buf_printf(&t, "\tOX_UNROLL\n\tfor (int e = 0; e < %d; e += 2) {\n"
				  "\t\tconst $I m = m0 + %s, p = p0 + %s, yi = m * (NN / 2) + p / 2;\n"
				  "\t\tif (m >= M || p >= NN)\n\t\t\tcontinue;\n",
			      geo.ne, geo.row, geo.col);
		if (S > 1)
			ox_buf_printf(&t, "\t\tfloat v = 0.0f, u = 0.0f;\n\t\tfor (int s = 0; s < %d; s++) {\n"
					  "\t\t\tv += ox_ldcg(&ws[(s * M + m) * NN + p]);\n"
					  "\t\t\tu += ox_ldcg(&ws[(s * M + m) * NN + p + 1]);\n\t\t}\n",
				      S);
		else
			ox_buf_puts(&t, "\t\tfloat v = acc[e], u = acc[e + 1];\n");
		if (ox_cu_epilogue(cg, g, n, &t, "(p / 2)", "yi", 2))
			goto fail;
		gemm_store(&t, n);
		ox_buf_puts(&t, "\t}\n");
	} else if (S > 1) {
		/* the tile's sums of the parts, alpha, C and the epilogue */
		ox_buf_printf(&t, "\tOX_UNROLL\n\tfor (int e = 0; e < %d; e++) {\n"
				  "\t\tconst $I m = m0 + %s, p = p0 + %s, yi = m * NN + p;\n"
				  "\t\tif (m >= M || p >= NN)\n\t\t\tcontinue;\n\t\tfloat a = 0.0f;\n"
				  "\t\tfor (int s = 0; s < %d; s++)\n\t\t\ta += ox_ldcg(&ws[s * M * NN + yi]);\n"
				  "\t\tfloat v = %sa%s;\n",
			      geo.ne, geo.row, geo.col, S, al, cexpr);
		if (ox_cu_epilogue(cg, g, n, &t, "p", "yi", 2))
			goto fail;
		gemm_store(&t, n);
		ox_buf_puts(&t, "\t}\n");
	} else {
		ox_buf_printf(&t, "\t\tconst $I yi = m * NN + p;\n\t\tfloat v = %sacc[e]%s;\n", al, cexpr);
		char full[64];
		ox_cg_snprintf(full, sizeof full, nb ? "($I)blockIdx.z * M * NN + yi" : "yi");
		if (ox_cu_epilogue(cg, g, n, &t, "p", full, 2))
			goto fail;
		gemm_store(&t, n);
		ox_buf_puts(&t, "\t}\n");
	}
	if (tail)
		norm_tail(&t, n, T, geo.nt, N);
	ox_buf_puts(&t, "}\n\n");
	/* the launch: rows of all products when B is one matrix */
	const char *bsz = nb ? ox_cg_dim(cg, q->dbatch) : "1";
	char bs[64];
	ox_cg_snprintf(bs, sizeof bs, "%s", bsz);
	ox_cg_printf(cg, "\t{\n\t\tconst long M = %s, K = %s;\n", Ms, Ks);
	if (S > 1) {
		ox_cg_printf(cg, "\t\tOX_LAUNCH(%s, dim3(%lld, (unsigned)((M + %d) / %d), %d), %d, 0, ox_st, in0, in1, %s, %s, ox_cu_ws, ox_cu_ctr, M, ",
			     kname, (long long)((N + T - 1) / T), T - 1, T, S, geo.nt, gemm && c ? "in2" : "nullptr",
			     outs.s);
		ox_cg_printf(cg, "K%s);\n"
				 "\t}\n",
			     args.s ? args.s : "");
	} else {
		/* (a run-time N: the grid's columns and a guard from the run's) */
		char gx[160], guard[200] = "";
		if (rtn) {
			const char *hn = ox_cg_dim(cg, q->dN);
			ox_cg_snprintf(gx, sizeof gx, "(unsigned)(((long)(%s) + %d) / %d)", hn, T - 1, T);
			ox_cg_snprintf(guard, sizeof guard, " && (long)(%s) > 0 && (long)(%s) > 0", hn, bs);
		} else {
			ox_cg_snprintf(gx, sizeof gx, "%lld", (long long)((N + T - 1) / T));
		}
		ox_cg_printf(cg, "\t\tif (M > 0%s)\n",
			     guard);
		ox_cg_printf(cg, "\t\t\tOX_LAUNCH(%s, dim3(%s, (unsigned)((M + %d) / %d), %s), %d, 0, ox_st, in0, in1, %s, %s, M, ",
			     kname, gx, T - 1, T, bs, geo.nt, gemm && c ? "in2" : "nullptr", outs.s);
		ox_cg_printf(cg, "K%s);\n"
				 "\t}\n",
			     args.s ? args.s : "");
	}
	ox_cu_finish(cg, kname, &t);
	if (na && !tail) {
		char nk[200], nargs[96];
		ox_cg_snprintf(nk, sizeof nk, "%s_norm_kernel", cg->fname);
		ox_cg_snprintf(nargs, sizeof nargs, "out0, %s, out1", nsb);
		ox_cu_norm_kernel(cg, g, n, nk, q->dM, N, na->ints[0] == OX_OP_RMSNormalization,
			    ox_attr_float(n, "ox_norm_eps", 1e-5f), na->ints[2] >= 0, 0, 0, nargs);
	}
	ox_buf_free(&params), ox_buf_free(&args), ox_buf_free(&ys), ox_buf_free(&outs);
	return 0;
decline:
	ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args), ox_buf_free(&ys), ox_buf_free(&outs);
	return 1;
fail:
	ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args), ox_buf_free(&ys), ox_buf_free(&outs);
	return -1;
}


void ox_cu_taps(ox_buf *t, int lvl, const int64_t *K, const int64_t *S, const int64_t *P, const int64_t *D,
		const char *IH, const char *IW)
{
	const char *tb = "\t\t\t\t\t\t\t\t";
	ox_buf_printf(t, "%.*sfor (int kh = 0; kh < %lld; kh++) {\n"
			 "%.*sconst $I ih = oh * %lld - %lld + kh * %lld;\n",
		      lvl, tb, (long long)K[0], lvl + 1, tb, (long long)S[0], (long long)P[0], (long long)D[0]);
	ox_buf_printf(t, "%.*sif (ih < 0 || ih >= %s)\n"
			 "%.*scontinue;\n"
			 "%.*sfor (int kw = 0; kw < %lld; kw++) {\n",
		      lvl + 1, tb, IH, lvl + 2, tb, lvl + 1, tb, (long long)K[1]);
	ox_buf_printf(t, "%.*sconst $I iw = ow * %lld - %lld + kw * %lld;\n"
			 "%.*sif (iw < 0 || iw >= %s)\n",
		      lvl + 2, tb, (long long)S[1], (long long)P[1], (long long)D[1], lvl + 2, tb, IW);
	ox_buf_printf(t, "%.*scontinue;\n",
		      lvl + 3, tb);
}

/* Depthwise Conv (1-D, 2-D) and MaxPool 2-D, NCHW or NHWC: a thread per
 * output (channels fastest in NHWC), over the window's taps inside the
 * input (MaxPool: NaN wins, as the C target's; f32, f16, bf16, and the
 * 8-bit integers of QDQ models, NCHW, exact in f32) */
int ox_cu_emit_window(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0), *w = n->op == OX_OP_Conv ? ox_in(g, n, 1) : NULL;
	const int conv = n->op == OX_OP_Conv, nhwc = x && x->layout == OX_L_BLOCKED;
	const int i8 = !conv && x && !nhwc && (x->dtype == OX_I8 || x->dtype == OX_U8);
	if (!conv && n->nout > 1 && n->out[1] >= 0)
		return 1; /* Indices: the C target's */
	if (!x || !y || !(ox_cu_ftype(x->dtype) || i8) || y->dtype != x->dtype || (!conv && x->shape.rank != 4 && x->shape.rank != 3) ||
	    (nhwc ? y->layout != OX_L_BLOCKED || x->lp[0] != x->shape.d[1] || y->lp[0] != y->shape.d[1]
		  : x->layout || y->layout) ||
	    (conv && (w->dtype != x->dtype || w->layout != (nhwc ? OX_L_DWW : OX_L_PLAIN))))
		return 1;
	/* a run-time batch and image size (NCHW, explicit pads, constant
	 * channels; NHWC: a run-time batch only): the kernel's parameters, as
	 * the tiles' Conv takes them */
	const int rt = ox_shape_is_rt(g, &x->shape) || ox_shape_is_rt(g, &y->shape);
	if (rt && (nhwc ? !ox_opt_rt_ok(g, &x->shape, 1u) || !ox_opt_rt_ok(g, &y->shape, 1u) : !ox_opt_rt_window(g, n)))
		return 1;
	ox_cu_win q;
	if (ox_cu_window(g, n, x, w, y, &q))
		return -1;
	if (q.nsp > 2)
		return 1;
	const long long C = x->shape.d[1], KH = q.K[1], KW = q.K[2];
	/* NHWC: a thread per 4 channels where they come in fours (one ox_ld4
	 * per tap of the input and of the weights, one ox_st4 where aligned) */
	const int es = (int)ox_dtype_size(x->dtype);
	const int V = nhwc && C % 4 == 0 && ox_cu_align(g, n->in[0]) >= 4 * es &&
				      (!conv || ox_cu_align(g, n->in[1]) >= 4 * es) ? 4 : 1;
	const long long hasb = conv && n->nin > 2 && n->in[2] >= 0;
	/* the sizes as the kernel's text: numbers, or R's parameters */
	ox_cu_rt R = {g, 0, {0}}, *Rp = rt ? &R : NULL;
	const ox_dim dP = ox_dim_mul(g, q.O[1], q.O[2]), dCP = ox_dim_mul(g, C, dP);
	/* the threads: an output each, or V channels (dCP then a constant) */
	const ox_dim dThr = ox_dim_mul(g, x->shape.d[0], V > 1 ? ox_dim_eval(g, dCP) / V : dCP);
	char IH[32], IW[32], OW[32], P[32], IHW[32], CP[32], tot[40];
	ox_cu_rt_dim(Rp, q.I[1], IH, sizeof IH), ox_cu_rt_dim(Rp, q.I[2], IW, sizeof IW);
	ox_cu_rt_dim(Rp, q.O[2], OW, sizeof OW), ox_cu_rt_dim(Rp, dP, P, sizeof P), ox_cu_rt_dim(Rp, dCP, CP, sizeof CP);
	ox_cu_rt_dim(Rp, ox_dim_mul(g, q.I[1], q.I[2]), IHW, sizeof IHW);
	if (rt)
		ox_cu_rt_dim(Rp, dThr, tot, sizeof tot);
	else
		ox_cg_snprintf(tot, sizeof tot, "%lld$L", (long long)ox_dim_eval(g, dThr));
	char kname[200], xs[128], ys[128];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_shape_str(g, &x->shape, xs, sizeof xs), ox_shape_str(g, &y->shape, ys, sizeof ys);
	ox_buf t = ox_cu_kbuf(g, n), params = {0}, args = {0};
	if (conv)
		ox_cu_epi_params(g, n, &params, &args);
	ox_cu_rt_params(cg, &R, &params, &args);
	const int B = rt ? 256 : ox_cu_block_of(ox_dim_eval(g, dThr));
	ox_buf_printf(&t, "/* %s: %s %lldx%lld, stride %lldx%lld, dilation %lldx%lld, pads ",
		      cg->fname, conv ? "depthwise Conv" : "MaxPool", KH, KW, (long long)q.S[1], (long long)q.S[2],
		      (long long)q.D[1], (long long)q.D[2]);
	ox_buf_printf(&t, "%lld,%lld%s: %s -> %s */\n",
		      (long long)q.P[1], (long long)q.P[2], nhwc ? ", NHWC" : "", xs, ys);
	ox_buf_printf(&t, "__global__ void __launch_bounds__(%d) %s(const OX_T *__restrict__ x, %sOX_T *__restrict__ y%s)\n"
			  "{\n"
			  "\tconst $I %s = ($I)blockIdx.x * %d + threadIdx.x;\n"
			  "\tif (%s >= %s)\n"
			  "\t\treturn;\n",
		      B, kname, conv ? "const OX_T *__restrict__ w, const OX_T *__restrict__ bias, " : "",
		      params.s ? params.s : "", V > 1 ? "i4" : "i", B, V > 1 ? "i4" : "i", tot);
	/* the output's channel c and pixel p of image nb; xc: c's input plane,
	 * tap (ih, iw) at xc[TAP]; the weights of c at tap (kh, kw) */
	char tap[64], wtap[96];
	if (nhwc) { /* (constant channels and image sizes) */
		const long long Pn = ox_dim_eval(g, dP), IHWn = ox_dim_eval(g, ox_dim_mul(g, q.I[1], q.I[2]));
		if (V > 1)
			ox_buf_printf(&t, "\tconst $I c = i4 %% %lld * 4, p = i4 / %lld %% %lld, nb = i4 / %lld, i = i4 * 4;\n",
				      C / 4, C / 4, Pn, C / 4 * Pn);
		else
			ox_buf_printf(&t, "\tconst $I c = i %% %lld, p = i / %lld %% %lld, nb = i / %lld;\n", C, C, Pn, C * Pn);
		ox_buf_printf(&t, "\tconst OX_T *xc = x + nb * %lld + c;\n", IHWn * C);
		ox_cg_snprintf(tap, sizeof tap, "(ih * %s + iw) * %lld", IW, C);
		ox_cg_snprintf(wtap, sizeof wtap, "w[(kh * %lld + kw) * %lld + c]", KW, C);
	} else {
		ox_buf_printf(&t, "\tconst $I p = i %% %s, c = i / %s %% %lld, nb = i / %s;\n"
				  "\tconst OX_T *xc = x + (nb * %lld + c) * %s;\n",
			      P, P, C, CP, C, IHW);
		ox_cg_snprintf(tap, sizeof tap, "ih * %s + iw", IW);
		ox_cg_snprintf(wtap, sizeof wtap, "w[c * %lld + kh * %lld + kw]", KH * KW, KW);
	}
	ox_buf_printf(&t, "\tconst $I oh = p / %s, ow = p %% %s;\n", OW, OW);
	const char *v0 = conv ? (hasb ? "OX_LD(bias[c])" : "0.0f") : !i8 ? "-INFINITY" : x->dtype == OX_I8 ? "-128.0f" : "0.0f";
	if (V > 1)
		ox_buf_printf(&t, "\tfloat vq[4];\n\tfor (int u = 0; u < 4; u++)\n\t\tvq[u] = %s;\n",
			      conv && hasb ? "OX_LD(bias[c + u])" : v0);
	else
		ox_buf_printf(&t, "\tfloat v = %s;\n", v0);
	ox_cu_taps(&t, 1, q.K + 1, q.S + 1, q.P + 1, q.D + 1, IH, IW);
	if (V > 1) {
		ox_buf_printf(&t, "\t\t\tOX_T xh[4];\n\t\t\tox_ld4(&xc[%s], xh);\n", tap);
		if (conv)
			ox_buf_printf(&t, "\t\t\tOX_T wh[4];\n\t\t\tox_ld4(&%s, wh);\n"
					  "\t\t\tfor (int u = 0; u < 4; u++)\n\t\t\t\tvq[u] = fmaf(OX_LD(xh[u]), OX_LD(wh[u]), vq[u]);\n",
				      wtap);
		else
			ox_buf_puts(&t, "\t\t\tfor (int u = 0; u < 4; u++) {\n\t\t\t\tconst float e = OX_LD(xh[u]);\n"
				       "\t\t\t\tif (e > vq[u] || e != e)\n\t\t\t\t\tvq[u] = e;\n\t\t\t}\n");
		ox_buf_puts(&t, "\t\t}\n\t}\n");
		/* the epilogue per channel, the stores */
		ox_buf_puts(&t, "\tOX_T yv[4];\n\tfor (int u = 0; u < 4; u++) {\n\t\tfloat v = vq[u];\n");
		if (conv && ox_cu_epilogue(cg, g, n, &t, "(c + u)", "(i + u)", 2)) {
			ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args);
			return -1;
		}
		ox_buf_puts(&t, "\t\tyv[u] = OX_ST(v);\n\t}\n");
		ox_cu_store4(&t, g, n->out[0], "i");
		ox_buf_puts(&t, "}\n\n");
	} else if (conv)
		ox_buf_printf(&t, "\t\t\tv = fmaf(OX_LD(xc[%s]), OX_LD(%s), v);\n\t\t}\n\t}\n", tap, wtap);
	else
		ox_buf_printf(&t, "\t\t\tconst float e = OX_LD(xc[%s]);\n"
				  "\t\t\tif (e > v || e != e)\n\t\t\t\tv = e;\n\t\t}\n\t}\n",
			      tap);
	if (V == 1 && conv && ox_cu_epilogue(cg, g, n, &t, "c", "i", 1)) {
		ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&args);
		return -1;
	}
	if (V == 1)
		ox_buf_printf(&t, "\ty[i] = %s;\n}\n\n", i8 ? "(OX_T)v" : "OX_ST(v)");
	const char *wb = conv ? (hasb ? "in1, in2, " : "in1, nullptr, ") : "";
	if (rt) {
		ox_buf a = {0};
		ox_buf_printf(&a, "in0, %sout0%s", wb, args.s ? args.s : "");
		ox_cu_launch_rt(cg, kname, dThr, 256, 256, a.s);
		ox_buf_free(&a);
	} else
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, %d, 0, ox_st, in0, %sout0%s);\n", kname,
			     (long long)((ox_dim_eval(g, dThr) + B - 1) / B), B, wb, args.s ? args.s : "");
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&args);
	return 0;
}

/* The kernels by family, one a row of ir/ops.def's cuda column: each
 * returns 0 done, 1 no kernel for this node (its C function runs on one
 * device thread), -1 an error. none: no kernel for the op. */
int ox_cu_emit_conv(ox_cg *cg, ox_graph *g, ox_node *n)
{
	return conv_ok(g, n) ? emit_conv(cg, g, n) : 1;
}

int ox_cu_emit_gemm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_gemmgeo q;
	return ox_opt_gemm_geo(g, n, &q) ? 1 : emit_gemm(cg, g, n, &q);
}
