/* cuda_kernels.c: the nodes that have CUDA kernels of their own
 * (--target cuda): convolutions and GEMMs on FFMA tiles in shared memory,
 * with their fused epilogues (opt/epilogue.c), depthwise convolutions one
 * thread per output. A kernel is printed per node with its shapes as
 * constants (like the C target's node functions), into the kernels; the
 * node's body is the host code that launches it on ox_st. ox_cu_emit
 * answers 1 for a node none of them takes: the C emitter's function runs
 * on the device then (codegen/c.c), which must not happen to a node with
 * an epilogue (the C emitters of plain values do not apply one).
 */
#include "cuda_kernels.h"
#include "../reduction.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <ctype.h>
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
static void store4(ox_buf *t, ox_graph *g, ox_id id, const char *at)
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

/* Index arithmetic in 32 bits when every tensor of the node fits (64-bit
 * divisions by constants cost several times more on the GPU): a kernel's
 * text is printed with $I for its index type and $L for its literals'
 * suffix (ox_cu_kbuf). */
int ox_cu_fits32(ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id >= 0 && ox_value_max_storage(g, &g->vals[id]) >= ((int64_t)1 << 30))
			return 0;
	}
	return 1;
}

/* the element types the kernels take (OX_T) */
int ox_cu_ftype(int dt)
{
	return dt == OX_F32 || dt == OX_F16 || dt == OX_BF16;
}

/* the buffer of node n's kernel text, its fields (cg.h, ox_buf) set: $I
 * int when every tensor of the node fits (ox_cu_fits32), OX_T the type of
 * its first output */
ox_buf ox_cu_kbuf(ox_graph *g, const ox_node *n)
{
	return (ox_buf){.ix = ox_cu_fits32(g, n) ? "int" : "long",
			.dt = n->nout > 0 && n->out[0] >= 0 ? g->vals[n->out[0]].dtype : OX_UNDEF};
}

/* the kernel text t, named kname, into the file's kernels; frees t */
void ox_cu_finish(ox_cg *cg, const char *kname, ox_buf *t)
{
	ox_cg_helper(cg, kname, t->s);
	ox_buf_free(t);
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

int ox_cu_block_of(int64_t n)
{
	int b = 256;
	while (b > 64 && (n + b - 1) / b < OX_CU_SMS)
		b /= 2;
	return b;
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

static void norm_row(ox_buf *t, const char *ind, const char *lane, const char *sc, const char *b, int rms, int64_t D,
		     double eps, const char *ld);
static void norm_kernel(ox_cg *cg, ox_graph *g, ox_node *n, const char *kname, ox_dim rows, int64_t D, int rms,
			double eps, int b, int ym, int yi, const char *args);

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
	norm_row(t, "\t\t", "nl", "nsc", a->ints[2] >= 0 ? "nbi" : NULL, rms, N, ox_attr_float(n, "ox_norm_eps", 1e-5f),
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
			    !ox_cu_rt_dim(&R, da == 1 ? 0 : stA, sat[i], sizeof sat[i] - 1) ||
			    !ox_cu_rt_dim(&R, db == 1 ? 0 : stB, sbt[i], sizeof sbt[i] - 1))
				goto decline;
			if (!ox_dim_is_rt(g, da == 1 ? 0 : stA)) /* (a constant: long) */
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
		norm_kernel(cg, g, n, nk, q->dM, N, na->ints[0] == OX_OP_RMSNormalization,
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
		store4(&t, g, n->out[0], "i");
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

/* GlobalAveragePool / GlobalMaxPool: a warp per plane, shuffles to sum */
static int cu_globalpool(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || x->shape.rank < 3)
		return 1;
	const int ismax = n->op == OX_OP_GlobalMaxPool;
	/* planes and their size: numbers, or (run-time dims) the kernel's
	 * parameters */
	ox_dim dNC = ox_dim_mul(g, x->shape.d[0], x->shape.d[1]), dP = 1;
	for (int i = 2; i < x->shape.rank; i++)
		dP = ox_dim_mul(g, dP, x->shape.d[i]);
	const int rt = ox_dim_is_rt(g, dNC) || ox_dim_is_rt(g, dP);
	ox_cu_rt R = {g, 0, {0}}, *Rp = rt ? &R : NULL;
	char NC[32], P[32], lim[40];
	ox_cu_rt_dim(Rp, dNC, NC, sizeof NC), ox_cu_rt_dim(Rp, dP, P, sizeof P);
	ox_cg_snprintf(lim, sizeof lim, "%s%s", NC, rt && ox_dim_is_rt(g, dNC) ? "" : "$L");
	char res[64] = "a";
	if (!ismax)
		ox_cg_snprintf(res, sizeof res, "a / (float)%s", P);
	char kname[200], desc[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf params = {0}, args = {0};
	ox_buf_puts(&args, "in0, out0");
	ox_cu_rt_params(cg, Rp, &params, &args);
	if (rt) {
		char a[96], b[96];
		ox_dim_str(g, dNC, a, sizeof a), ox_dim_str(g, dP, b, sizeof b);
		ox_cg_snprintf(desc, sizeof desc, "%s planes of %s", a, b);
	} else {
		ox_cg_snprintf(desc, sizeof desc, "%s planes of %s", NC, P);
	}
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s over %s */\n"
			  "__global__ void __launch_bounds__(128) %s(const OX_T *__restrict__ x, OX_T *__restrict__ y%s)\n"
			  "{\n"
			  "\tconst $I c = ($I)blockIdx.x * 4 + threadIdx.x / 32;\n"
			  "\tconst int lane = threadIdx.x %% 32;\n"
			  "\tif (c >= %s)\n"
			  "\t\treturn;\n"
			  "\tconst OX_T *xc = x + c * %s;\n"
			  "\tfloat a = %s;\n",
		      cg->fname, n->optype, desc, kname, params.s ? params.s : "", lim, P, ismax ? "-INFINITY" : "0.0f");
	ox_buf_printf(&t, "\tfor ($I i = lane; i < %s; i += 32) {\n"
			  "\t\tconst float v = OX_LD(xc[i]);\n"
			  "\t\ta = %s;\n"
			  "\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2) {\n"
			  "\t\tconst float b = __shfl_xor_sync(0xffffffffu, a, o);\n"
			  "\t\ta = %s;\n"
			  "\t}\n"
			  "\tif (lane == 0)\n"
			  "\t\ty[c] = OX_ST(%s);\n"
			  "}\n"
			  "\n",
		      P, ismax ? "v > a || v != v ? v : a" : "a + v", ismax ? "b > a || b != b ? b : a" : "a + b", res);
	if (!rt)
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, 128, 0, ox_st, in0, out0);\n", kname,
			     (long long)((ox_dim_eval(g, dNC) + 3) / 4));
	else
		ox_cu_launch_rt(cg, kname, dNC, 4, 128, args.s);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&args);
	return 0;
}

/* Attention, tiled (flash-style): a block of 128 threads per 16 query
 * rows, head and batch, over the keys in tiles of 32 staged in shared
 * memory with their values: the 16 x 32 scores (a thread 4), then the
 * online softmax (each row's running max and sum kept by the row's 8
 * threads, its outputs rescaled when the max grows), then the outputs
 * (a thread a row's columns c, c + 8, ...). Keys past SKV are -inf
 * (assigned); the causal mask and the key mask are added as the C target
 * adds them, so a NaN score stays NaN. Dk, Dv <= 128. A row's 8 threads
 * pass its probabilities through shared memory behind a __syncwarp (one
 * warp's lanes), a barrier the emulation cannot prove needed: its
 * shuffles just before already gather the warp. */
/* floats a query row of one part of the keys keeps in the workspace
 * (split keys): its outputs, Dv rounded up to 8, then max and sum */
static long long attn_part_row(long long Dv)
{
	return (Dv + 7) / 8 * 8 + 2;
}

static void attention_tiled(ox_buf *t, const char *kname, long long G, long long Dk, long long Dv, const char *sc,
			    const char *mask, const char *mt, int mask_s, const char *tests, const char *np, const char *qo,
			    const char *ko, const char *vo, const char *yo, int S)
{
	const long long NC = (Dv + 7) / 8, W = attn_part_row(Dv);
	char guard[64], guard2[64]; /* (the columns past Dv when it is not a multiple of 8) */
	ox_cg_snprintf(guard, sizeof guard, "if (c + u * 8 < %lld)\n\t\t\t\t\t", Dv);
	ox_cg_snprintf(guard2, sizeof guard2, "if (c + u * 8 < %lld)\n\t\t\t", Dv);
	if (Dv % 8 == 0)
		guard[0] = guard2[0] = 0;
	/* S > 1: the keys in S parts, blockIdx.z = b * S + the part (below) */
	char split_params[96] = "", bz[48] = "blockIdx.z", krange[200] = "const $I klo = 0, khi = SKV;\n";
	if (S > 1) {
		ox_cg_snprintf(split_params, sizeof split_params, ", float *__restrict__ ws, unsigned int *__restrict__ ctr");
		ox_cg_snprintf(bz, sizeof bz, "blockIdx.z / %d, sp = blockIdx.z %% %d", S, S);
		ox_cg_snprintf(krange, sizeof krange,
			 "/* this block's part of the keys: whole tiles of 32 */\n"
			 "\tconst $I kc = ((SKV + 31) / 32 + %d) / %d * 32, klo = sp * kc, khi = klo + kc < SKV ? klo + kc : SKV;\n",
			 S - 1, S);
	}
	ox_buf_printf(t, "__global__ void __launch_bounds__(128) %s(const OX_T *__restrict__ Q, const OX_T *__restrict__ K,\n"
			 "\t\tconst OX_T *__restrict__ V, const %s *__restrict__ M, OX_T *__restrict__ Y, $I SQ, $I SKV%s%s)\n"
			 "{\n"
			 "\t__shared__ float qs[16][%lld], ks[32][%lld], vs[32][%lld], ps[16][33];\n",
		      kname, mt, np, split_params, Dk, Dk + 1, Dv);
	ox_buf_printf(t, "\tconst $I s0 = ($I)blockIdx.x * 16, h = blockIdx.y, b = %s, hk = h / %lld;\n"
			 "\t%s"
			 "\tconst int tid = threadIdx.x, r = tid / 8, c = tid %% 8;\n"
			 "\tfor (int i = tid; i < %lld; i += 128) {\n"
			 "\t\tconst $I s = s0 + i / %lld;\n",
		      bz, G, krange, 16 * Dk, Dk);
	ox_buf_printf(t, "\t\tqs[i / %lld][i %% %lld] = s < SQ ? OX_LD(Q[%s + i %% %lld]) : 0.0f;\n"
			 "\t}\n"
			 "\t/* row r's running max and sum (the same in its 8 threads), its outputs */\n"
			 "\tfloat mr = -INFINITY, lr = 0.0f, o[%lld];\n"
			 "\tOX_UNROLL\n"
			 "\tfor (int j = 0; j < %lld; j++)\n"
			 "\t\to[j] = 0.0f;\n"
			 "\tfor ($I k0 = klo; k0 < khi; k0 += 32) {\n"
			 "\t\t__syncthreads(); /* (the last tile's reads done) */\n"
			 "\t\tfor (int i = tid; i < %lld; i += 128) {\n"
			 "\t\t\tconst $I k = k0 + i / %lld;\n",
		      Dk, Dk, qo, Dk, NC, NC, 32 * Dk, Dk);
	ox_buf_printf(t, "\t\t\tks[i / %lld][i %% %lld] = k < SKV ? OX_LD(K[%s + i %% %lld]) : 0.0f;\n"
			 "\t\t}\n"
			 "\t\tfor (int i = tid; i < %lld; i += 128) {\n"
			 "\t\t\tconst $I k = k0 + i / %lld;\n",
		      Dk, Dk, ko, Dk, 32 * Dv, Dv);
	ox_buf_printf(t, "\t\t\tvs[i / %lld][i %% %lld] = k < SKV ? OX_LD(V[%s + i %% %lld]) : 0.0f;\n"
			 "\t\t}\n"
			 "\t\t__syncthreads();\n",
		      Dv, Dv, vo, Dv);
	ox_buf_printf(t, "\t\t/* the scores, a warp per row */\n"
			 "\t\tfor (int e = tid; e < 512; e += 128) {\n"
			 "\t\t\tconst int rr = e / 32, j = e %% 32;\n"
			 "\t\t\tconst $I k = k0 + j%s;\n"
			 "\t\t\tfloat a = -INFINITY;\n"
			 "\t\t\tif (k < SKV) {\n"
			 "\t\t\t\tfloat d0 = 0.0f;\n"
			 "\t\t\t\tfor (int d = 0; d < %lld; d++)\n\t\t\t\t\td0 = fmaf(qs[rr][d], ks[j][d], d0);\n"
			 "\t\t\t\ta = %s%s;\n"
			 "%s"
			 "\t\t\t}\n"
			 "\t\t\tps[rr][j] = a;\n"
			 "\t\t}\n\t\t__syncthreads();\n",
		      ox_cg_uses_name(tests, "s") || mask_s ? ", s = s0 + rr" : "", Dk, sc, mask, tests);
	ox_buf_printf(t, "\t\t/* the online softmax: row r's 8 threads, 4 scores each */\n"
			 "\t\tfloat mx = -INFINITY, sum = 0.0f;\n"
			 "\t\tfor (int j = c; j < 32; j += 8)\n\t\t\tmx = fmaxf(mx, ps[r][j]);\n"
			 "\t\tfor (int w = 4; w > 0; w /= 2)\n\t\t\tmx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, w));\n"
			 "\t\tconst float mn = fmaxf(mr, mx), al = mr == -INFINITY ? 0.0f : expf(mr - mn);\n"
			 "\t\tfor (int j = c; j < 32; j += 8) {\n"
			 "\t\t\tconst float p = mn == -INFINITY ? 0.0f : expf(ps[r][j] - mn);\n"
			 "\t\t\tps[r][j] = p;\n\t\t\tsum += p;\n\t\t}\n"
			 "\t\tfor (int w = 4; w > 0; w /= 2)\n\t\t\tsum += __shfl_xor_sync(0xffffffffu, sum, w);\n"
			 "\t\tlr = lr * al + sum, mr = mn;\n"
			 "\t\t__syncwarp(); /* (the row's probabilities: its 8 threads are one warp's) */\n"
			 "\t\tOX_UNROLL\n\t\tfor (int j = 0; j < %lld; j++)\n\t\t\to[j] *= al;\n"
			 "\t\tfor (int j = 0; j < 32; j++) {\n"
			 "\t\t\tconst float p = ps[r][j];\n"
			 "\t\t\tOX_UNROLL\n\t\t\tfor (int u = 0; u < %lld; u++)\n"
			 "\t\t\t\t%so[u] = fmaf(p, vs[j][c + u * 8], o[u]);\n"
			 "\t\t}\n\t}\n",
		      NC, NC, guard);
	if (S > 1) { /* each part's row sums, maximum and outputs; the last to arrive adds them up in order */
		ox_buf_printf(t, "\tconst $I tile = (($I)b * gridDim.y + h) * gridDim.x + blockIdx.x;\n"
				 "\tfloat *wp = ws + ((tile * %d + sp) * 16 + r) * %lld;\n"
				 "\tOX_UNROLL\n"
				 "\tfor (int u = 0; u < %lld; u++)\n"
				 "\t\twp[c + u * 8] = o[u];\n"
				 "\tif (c == 0)\n"
				 "\t\twp[%lld] = mr, wp[%lld] = lr;\n"
				 "\tif (!ox_split_last(ctr + tile, %d))\n"
				 "\t\treturn;\n"
				 "\tmr = -INFINITY, lr = 0.0f;\n"
				 "\tfor (int p = 0; p < %d; p++)\n",
			      S, W, NC, W - 2, W - 1, S, S);
		ox_buf_printf(t, "\t\tmr = fmaxf(mr, ox_ldcg(&ws[((tile * %d + p) * 16 + r) * %lld + %lld]));\n"
				 "\tOX_UNROLL\n"
				 "\tfor (int u = 0; u < %lld; u++)\n"
				 "\t\to[u] = 0.0f;\n"
				 "\tfor (int p = 0; p < %d; p++) {\n"
				 "\t\tconst float *pp = ws + ((tile * %d + p) * 16 + r) * %lld, mp = ox_ldcg(&pp[%lld]);\n"
				 "\t\tconst float w = mp == -INFINITY ? 0.0f : expf(mp - mr);\n",
			      S, W, W - 2, NC, S, S, W, W - 2);
		ox_buf_printf(t, "\t\tlr += w * ox_ldcg(&pp[%lld]);\n"
				 "\t\tOX_UNROLL\n"
				 "\t\tfor (int u = 0; u < %lld; u++)\n"
				 "\t\t\to[u] += w * ox_ldcg(&pp[c + u * 8]);\n"
				 "\t}\n",
			      W - 1, NC);
	}
	ox_buf_printf(t, "\tconst $I s = s0 + r;\n"
			 "\tif (s >= SQ)\n\t\treturn;\n"
			 "\tOX_UNROLL\n\tfor (int u = 0; u < %lld; u++)\n"
			 "\t\t%sY[%s + c + u * 8] = OX_ST(o[u] / lr);\n}\n\n",
		      NC, guard2, yo);
}

/* present_key and present_value (4-D [B, Hkv, past + new, D]): a kernel
 * each, a thread per element, from past_key/value (when given) and K/V (3-D
 * [B, S, Hkv*D] or 4-D); run-time dims as parameters. 1 when they are too
 * many. */
static int present_kernels(ox_cg *cg, ox_graph *g, ox_node *n, const ox_attngeo *q)
{
	const int rank = ox_in(g, n, 1)->shape.rank;
	for (int k = 0; k < 2; k++) {
		const int64_t D = k ? q->Dv : q->Dk;
		const ox_dim dims[4] = {q->dB, q->Hkv, q->dSkv, D};
		ox_cu_rt R = {g, 0, {0}};
		char P[32], S[32], kname[220], params[256], nw[200];
		if (!ox_cu_rt_dim(&R, q->dP, P, sizeof P) || !ox_cu_rt_dim(&R, q->dSnew, S, sizeof S))
			return 1;
		if (rank == 3)
			ox_cg_snprintf(nw, sizeof nw, "x[((i0 * %s + (i2 - %s)) * %lld$L + i1) * %lld$L + i3]", S, P, (long long)q->Hkv,
				 (long long)D);
		else
			ox_cg_snprintf(nw, sizeof nw, "x[((i0 * %lld$L + i1) * %s + (i2 - %s)) * %lld$L + i3]", (long long)q->Hkv, S, P,
				 (long long)D);
		ox_buf body = {0}, t = ox_cu_kbuf(g, n);
		if (q->dP)
			ox_buf_printf(&body, "\ty[i] = i2 < %s ? p[((i0 * %lld$L + i1) * %s + i2) * %lld$L + i3] : %s;\n", P,
				      (long long)q->Hkv, P, (long long)D, nw);
		else
			ox_buf_printf(&body, "\ty[i] = %s;\n", nw);
		ox_cg_snprintf(kname, sizeof kname, "%s_present%d", cg->fname, k);
		const char *ty = ox_cg_ctype(ox_out(g, n, 0)->dtype);
		ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ p, %s *__restrict__ y", ty,
			 ty, ty);
		ox_buf_printf(&t, "/* %s: present_%s, past then new: a thread per element */\n", kname, k ? "value" : "key");
		if (ox_cu_index_kernel_rt(&t, kname, params, dims, 4, body.s, &R)) {
			ox_buf_free(&body), ox_buf_free(&t);
			return 1;
		}
		ox_buf_free(&body);
		char ptrs[64];
		ox_cg_snprintf(ptrs, sizeof ptrs, "in%d, %s, out%d", 1 + k, q->dP ? (k ? "in5" : "in4") : "nullptr", 1 + k);
		ox_cu_index_launch(cg, kname, dims, 4, ptrs, &R);
		ox_cg_helper(cg, kname, t.s);
		ox_buf_free(&t);
	}
	return 0;
}

/* Attention (ONNX, as opt/attention.c makes it from exporters' forms):
 * attention_tiled for heads up to 128 wide, else a block per (query row,
 * head, batch): the scores in shared memory, the softmax by block
 * reductions, then each thread an output column */
static int cu_attention(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_attngeo q;
	if (ox_opt_attn_geo_ext(g, n, &q) || q.Hq % q.Hkv)
		return 1;
	/* causal: query s sits at position s + past among the keys, the past
	 * a constant or, when the new keys are as many as the queries (the
	 * same dim), SKV - SQ; with the padding lengths (NP) and no past at
	 * NP[b] - SQ + s; keys from NP[b] on are padding. -inf added, not
	 * assigned, as the C target (a NaN stays). */
	char causal[64] = "";
	const int np = n->nin > 6 && n->in[6] >= 0;
	if (q.causal && !ox_dim_is_rt(g, q.dP) && q.dP)
		ox_cg_snprintf(causal, sizeof causal, "k > s + %lld$L", (long long)q.dP);
	else if (q.causal && q.dP && q.dSnew == q.dSq)
		ox_cg_snprintf(causal, sizeof causal, "k > s + (SKV - SQ)");
	else if (q.causal && q.dP)
		return 1;
	else if (q.causal && np)
		ox_cg_snprintf(causal, sizeof causal, "k - s + SQ > NP[b]");
	else if (q.causal)
		ox_cg_snprintf(causal, sizeof causal, "k > s");
	char tests[2][300] = {"", ""}; /* (indented for the tiled kernel, then the other) */
	for (int k = 0; k < 2; k++) {
		const char *in = k ? "\t\t" : "\t\t\t\t";
		if (*causal)
			ox_cg_snprintf(tests[k], sizeof tests[k], "%sif (%s)\n%s\ta += -INFINITY;\n", in, causal, in);
		if (np)
			ox_cg_snprintf(tests[k] + strlen(tests[k]), sizeof tests[k] - strlen(tests[k]),
				 "%sif (k >= NP[b])\n%s\ta += -INFINITY;\n", in, in);
	}
	/* the tiled kernel for heads up to 128 wide, else a block per query row
	 * with its scores in shared memory */
	const int tiled = q.Dk <= 128 && q.Dv <= 128;
	if (!tiled && (q.Skv > 4096 || q.Dk > 1024))
		return 1;
	ox_value *m = ox_in(g, n, 3), *y = ox_out(g, n, 0);
	const int dt = y->dtype;
	if (!ox_cu_ftype(dt) || ox_in(g, n, 0)->dtype != dt || ox_in(g, n, 1)->dtype != dt || ox_in(g, n, 2)->dtype != dt)
		return 1;
	/* the mask: of the scores' type or bools (false: -inf), added as the C
	 * target adds it (codegen/c/emit_attn.c): its strides over [B, Hq, Sq,
	 * Skv], 0 where it broadcasts, keys past its last dim masked out; with
	 * run-time lengths and constant mask dims one value per key only; a
	 * mask of run-time dims has each dim 1 or the attention's own */
	char mask[400] = "", mt[16] = "OX_T";
	int mask_s = 0;
	if (m) {
		const int r = m->shape.rank;
		if ((m->dtype != dt && m->dtype != OX_BOOL) || r > 4 || r < 1)
			return 1;
		if (m->dtype == OX_BOOL)
			ox_cg_snprintf(mt, sizeof mt, "%s", ox_cg_ctype(OX_BOOL));
		int64_t ms[4] = {0, 0, 0, 0}, want[4] = {q.B, q.Hq, q.Sq, q.Skv}, st = 1, Mk = q.Skv;
		char mi[200] = "";
		const char *vars[4] = {"b", "h", "s", "k"};
		if (ox_shape_is_rt(g, &m->shape)) {
			/* run-time dims (the padding mask [B, 1, 1, Skv] of a dynamic
			 * batch and sequence): each dim 1 or the attention's own, the
			 * keys' always; the strides over the kernel's SQ and SKV */
			const ox_dim wd[4] = {q.dB, q.Hq, q.dSq, q.dSkv};
			char str[96] = ""; /* the stride so far ("": 1) */
			for (int i = r - 1; i >= 0; i--) {
				const ox_dim d = m->shape.d[i];
				const int ax = 4 - r + i;
				if (d == 1 && ax != 3)
					continue;
				if (d != wd[ax])
					return 1;
				size_t len = strlen(mi);
				ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s%s%s", len ? " + " : "", vars[ax], *str ? " * " : "", str);
				char f[32], nx[96];
				if (ax == 1)
					ox_cg_snprintf(f, sizeof f, "%lld$L", (long long)q.Hq);
				else
					ox_cg_snprintf(f, sizeof f, "%s", ax == 3 ? "SKV" : "SQ");
				ox_cg_snprintf(nx, sizeof nx, "%s%s%s", str, *str ? " * " : "", f);
				ox_cg_snprintf(str, sizeof str, "%s", nx);
				mask_s |= ax == 2;
			}
		} else {
			for (int i = r - 1; i >= 0; i--) {
				const int64_t d = m->shape.d[i];
				const int ax = 4 - r + i;
				if (ax == 3 ? d > q.Skv : (d != 1 && d != want[ax]))
					return 1; /* (the C target's error) */
				/* with run-time dims: a dim of the mask's that meets a
				 * run-time one of the attention's is 1 (a constant mask
				 * [Sq, Skv] serves a run-time batch) */
				const ox_dim rd[4] = {q.dB, 1, q.dSq, q.dSkv};
				if (q.rt && (ax == 3 ? d != q.Skv || ox_dim_is_rt(g, q.dSkv) : d != 1 && ox_dim_is_rt(g, rd[ax])))
					return 1;
				ms[ax] = ax == 3 ? 1 : d == 1 ? 0 : st;
				if (ax == 3)
					Mk = d;
				st *= d;
			}
			for (int k = 0; k < 4; k++) {
				size_t len = strlen(mi);
				if (ms[k] == 1)
					ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s", len ? " + " : "", vars[k]);
				else if (ms[k])
					ox_cg_snprintf(mi + len, sizeof mi - len, "%s%s * %lld$L", len ? " + " : "", vars[k], (long long)ms[k]);
			}
			mask_s = ms[2] != 0;
		}
		char val[300];
		if (m->dtype == OX_BOOL)
			ox_cg_snprintf(val, sizeof val, "(M[%s] ? 0.0f : -INFINITY)", *mi ? mi : "0");
		else
			ox_cg_snprintf(val, sizeof val, "OX_LD(M[%s])", *mi ? mi : "0");
		if (Mk < q.Skv)
			ox_cg_snprintf(mask, sizeof mask, " + (k < %lld ? %s : -INFINITY)", (long long)Mk, val);
		else
			ox_cg_snprintf(mask, sizeof mask, " + %s", val);
	}
	/* batch and sequence lengths may be run-time dims (kernel arguments),
	 * scores sized for the top of the keys */
	for (int k = q.present ? 3 : 1; k < n->nout; k++)
		if (n->out[k] >= 0)
			return 1;
	char kname[200], qo[200], ko[200], vo[200], yo[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const long long B = q.B, Sq = q.Sq, Skv = q.Skv, Hq = q.Hq, Hkv = q.Hkv, Dk = q.Dk, Dv = q.Dv;
	(void)Sq;
	/* split the keys when the blocks (16 query rows of a head) are too
	 * few for the GPU: each part of whole tiles of 32 keys, a block each,
	 * the last to arrive combining their softmax sums (flash-decoding);
	 * counted at the dims' tops */
	int S = 1;
	const int64_t blocks = (ox_opt_top(g, q.dSq) + 15) / 16 * Hq * ox_opt_top(g, q.dB),
		      ktiles = (ox_opt_top(g, q.dSkv) + 31) / 32;
	if (tiled)
		while (S < 8 && blocks * S * 2 <= OX_CU_SMS && ktiles >= 2 * S)
			S *= 2;
	if (q.seq) { /* [S, B, H*D]: rows NB apart, the batch count (blockIdx.z's, over the S parts) */
		char nb[48];
		ox_cg_snprintf(nb, sizeof nb, S > 1 ? "(($I)gridDim.z / %d)" : "($I)gridDim.z", S);
		ox_cg_snprintf(qo, sizeof qo, "(s * %s + b) * %lld + h * %lld", nb, Hq * Dk, Dk);
		ox_cg_snprintf(ko, sizeof ko, "(k * %s + b) * %lld + hk * %lld", nb, Hkv * Dk, Dk);
		ox_cg_snprintf(vo, sizeof vo, "(k * %s + b) * %lld + hk * %lld", nb, Hkv * Dv, Dv);
		ox_cg_snprintf(yo, sizeof yo, "(s * %s + b) * %lld + h * %lld", nb, Hq * Dv, Dv);
	} else if (q.rank == 3) { /* [B, S, H*D] */
		ox_cg_snprintf(qo, sizeof qo, "(b * SQ + s) * %lld + h * %lld", Hq * Dk, Dk);
		ox_cg_snprintf(ko, sizeof ko, "(b * SKV + k) * %lld + hk * %lld", Hkv * Dk, Dk);
		ox_cg_snprintf(vo, sizeof vo, "(b * SKV + k) * %lld + hk * %lld", Hkv * Dv, Dv);
		ox_cg_snprintf(yo, sizeof yo, "(b * SQ + s) * %lld + h * %lld", Hq * Dv, Dv);
	} else { /* [B, H, S, D] */
		ox_cg_snprintf(qo, sizeof qo, "((b * %lld$L + h) * SQ + s) * %lld", Hq, Dk);
		ox_cg_snprintf(ko, sizeof ko, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dk);
		ox_cg_snprintf(vo, sizeof vo, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dv);
		ox_cg_snprintf(yo, sizeof yo, "((b * %lld$L + h) * SQ + s) * %lld", Hq, Dv);
	}
	if (q.present) { /* the keys and values from present_key/value: 4-D */
		ox_cg_snprintf(ko, sizeof ko, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dk);
		ox_cg_snprintf(vo, sizeof vo, "((b * %lld$L + hk) * SKV + k) * %lld", Hkv, Dv);
		if (present_kernels(cg, g, n, &q))
			return 1;
	}
	/* the score from the dot product d: scaled, then softcap's tanh */
	char score[160], sl[48];
	ox_cg_snprintf(sl, sizeof sl, "%s", ox_cg_lit(OX_F32, q.scale));
	if (q.softcap > 0) {
		char cl[48];
		ox_cg_snprintf(cl, sizeof cl, "%s", ox_cg_lit(OX_F32, q.softcap));
		ox_cg_snprintf(score, sizeof score, "tanhf(%%s * %s / %s) * %s", sl, cl, cl);
	} else {
		ox_cg_snprintf(score, sizeof score, "%%s * %s", sl);
	}
	ox_buf t = ox_cu_kbuf(g, n);
	char pastc[64] = "";
	if (q.dP)
		ox_cg_snprintf(pastc, sizeof pastc, ", past %lld%s", (long long)ox_opt_top(g, q.dP),
			 ox_dim_is_rt(g, q.dP) ? " at most" : "");
	ox_buf_printf(&t, "/* %s: Attention B %lld, heads %lld/%lld, Sq %lld, Skv %lld%s, Dk %lld, Dv ",
		      cg->fname, B, Hq, Hkv, Sq, Skv, pastc, Dk);
	ox_buf_printf(&t, "%lld, scale %g%s%s%s%s%s */\n",
		      Dv, q.scale, m ? ", a mask" : "", q.causal ? ", causal" : "", q.softcap > 0 ? ", softcap" : "",
		      q.present ? ", present K/V" : "", tiled ? ", tiled" : "");
	char sc[200];
	ox_cg_snprintf(sc, sizeof sc, score, tiled ? "d0" : "a");
	if (S > 1) {
		const int64_t bytes = blocks * S * 16 * attn_part_row(Dv) * 4;
		if (bytes > cg->cu_ws)
			cg->cu_ws = bytes;
		if (blocks > cg->cu_ctr)
			cg->cu_ctr = blocks;
	}
	if (tiled)
		attention_tiled(&t, kname, Hq / Hkv, Dk, Dv, sc, mask, mt, mask_s, tests[0],
				np ? ", const int64_t *__restrict__ NP" : "", qo, ko, vo, yo, S);
	else {
		ox_buf_printf(&t, "__global__ void __launch_bounds__(128) %s(const OX_T *__restrict__ Q, const OX_T *__restrict__ K,\n"
			  "\t\tconst OX_T *__restrict__ V, const %s *__restrict__ M, OX_T *__restrict__ Y, $I SQ, $I SKV%s)\n"
			  "{\n"
			  "\t__shared__ float qs[%lld], sc[%lld], red[4];\n"
			  "\tconst $I s = blockIdx.x, h = blockIdx.y, b = blockIdx.z, hk = h / %lld;\n"
			  "\tconst int tid = threadIdx.x, lane = tid %% 32, wp = tid / 32;\n"
			  "\tfor (int d = tid; d < %lld; d += 128)\n"
			  "\t\tqs[d] = OX_LD(Q[%s + d]);\n"
			  "\t__syncthreads();\n"
			  "\tfloat mx = -INFINITY;\n"
			  "\tfor (int k = tid; k < SKV; k += 128) {\n",
		      kname, mt, np ? ", const int64_t *__restrict__ NP" : "", Dk, Skv, Hq / Hkv, Dk, qo);
		ox_buf_printf(&t, "\t\tconst OX_T *kr = K + %s;\n"
			  "\t\tfloat a = 0.0f;\n"
			  "\t\tfor (int d = 0; d < %lld; d++)\n"
			  "\t\t\ta = fmaf(qs[d], OX_LD(kr[d]), a);\n"
			  "\t\ta = %s%s;\n"
			  "%s"
			  "\t\tsc[k] = a;\n"
			  "\t\tmx = fmaxf(mx, a);\n"
			  "\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n"
			  "\t\tmx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n"
			  "\tif (lane == 0)\n"
			  "\t\tred[wp] = mx;\n"
			  "\t__syncthreads();\n"
			  "\tmx = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));\n"
			  "\t__syncthreads();\n"
			  "\tfloat sum = 0.0f;\n"
			  "\tfor (int k = tid; k < SKV; k += 128) {\n"
			  "\t\tconst float e = mx == -INFINITY ? 0.0f : expf(sc[k] - mx);\n"
			  "\t\tsc[k] = e;\n"
			  "\t\tsum += e;\n"
			  "\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n"
			  "\t\tsum += __shfl_xor_sync(0xffffffffu, sum, o);\n"
			  "\tif (lane == 0)\n"
			  "\t\tred[wp] = sum;\n"
			  "\t__syncthreads();\n"
			  "\tsum = red[0] + red[1] + red[2] + red[3];\n"
			  "\tfor (int d = tid; d < %lld; d += 128) {\n"
			  "\t\tfloat a = 0.0f;\n"
			  "\t\tfor (int k = 0; k < SKV; k++)\n"
			  "\t\t\ta = fmaf(sc[k], OX_LD(V[%s + d]), a);\n"
			  "\t\tY[%s + d] = OX_ST(a / sum);\n"
			  "\t}\n"
			  "}\n"
			  "\n",
		      ko, Dk, sc, mask, tests[1], Dv, vo, yo);
	}
	const char *dsq = ox_cg_dim(cg, q.dSq), *dskv = ox_cg_dim(cg, q.dSkv), *db = ox_cg_dim(cg, q.dB);
	char rows[96]; /* (blocks of 16 query rows, or one each) */
	ox_cg_snprintf(rows, sizeof rows, tiled ? "((%s) + 15) / 16" : "%s", dsq);
	char gz[96];
	ox_cg_snprintf(gz, sizeof gz, S > 1 ? "(unsigned)(%s) * %d" : "(unsigned)%s", db, S);
	ox_cg_printf(cg, "\tif (%s > 0 && %s > 0)\n",
		     dsq, db);
	ox_cg_printf(cg, "\t\tOX_LAUNCH(%s, dim3((unsigned)(%s), %lld, %s), 128, 0, ox_st, in0, %s, %s, out0, %s, %s",
		     kname, rows, Hq, gz, q.present ? "out1, out2" : "in1, in2", m ? "in3" : "nullptr", dsq, dskv);
	ox_cg_printf(cg, "%s%s);\n",
		     np ? ", in6" : "", S > 1 ? ", ox_cu_ws, ox_cu_ctr" : "");
	(void)B;
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* RotaryEmbedding (constant shapes): a thread per output element, its pair
 * rotated as the C target rotates it (ox_cg_rope_pair: the same products
 * and roundings), the elements past rotary_embedding_dim copied; a
 * position id wrapped once when negative and checked as the C target
 * checks it (out of range: the status word, _ERR_INDEX) */
static int cu_rope(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *c = ox_in(g, n, 1), *p = ox_in(g, n, 3), *y = ox_out(g, n, 0);
	int64_t H, D, rot;
	if (!x || !c || !y || x->layout || y->layout || c->layout || ox_shape_is_rt(g, &x->shape) ||
	    ox_shape_is_rt(g, &c->shape) || (p && (p->layout || p->dtype != OX_I64 || ox_shape_is_rt(g, &p->shape))) ||
	    !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || ox_rope_dims(g, n, &H, &D, &rot))
		return 1;
	const int dt = x->dtype, rank = x->shape.rank, il = ox_attr_int(n, "interleaved", 0) != 0;
	const int64_t B = x->shape.d[0], S = x->shape.d[rank == 4 ? 2 : 1], half = rot / 2;
	const int64_t cols = c->shape.d[c->shape.rank - 1];
	if (!ox_shape_numel(&x->shape) || (p && (p->shape.d[0] != B || p->shape.d[1] != S)) ||
	    (!p && (c->shape.d[0] != B || c->shape.d[1] != S)))
		return 1; /* (nothing to do, or the C target's error) */
	/* the index space in x's order: [B, S, H, D] (3-D) or [B, H, S, D] */
	const int64_t dims[4] = {B, rank == 4 ? H : S, rank == 4 ? S : H, D};
	const char *sv = rank == 4 ? "i2" : "i1";
	const char *C = ox_cg_ntype(dt);
	ox_buf body = {0};
	ox_buf_printf(&body, "\tconst OX_T *xr = x + (i - i3);\n\tif (i3 >= %lld) {\n\t\ty[i] = xr[i3];\n\t\treturn;\n\t}\n",
		      (long long)rot);
	if (p) {
		char src[64], np[32];
		ox_cg_snprintf(src, sizeof src, "ind[i0 * %lld + %s]", (long long)S, sv);
		ox_cg_snprintf(np, sizeof np, "%lld$L", (long long)c->shape.d[0]);
		ox_cu_index_check(cg, &body, 1, "pos", src, np);
	} else {
		ox_buf_printf(&body, "\tconst $I pos = i0 * %lld + %s;\n", (long long)S, sv);
	}
	char y1[1200], y2[1200];
	ox_cg_rope_pair(dt, y1, y2, sizeof y1);
	/* element i3 of the head: pair k, its first or second */
	if (il)
		ox_buf_puts(&body, "\tconst $I k = i3 / 2, first = i3 % 2 == 0;\n");
	else
		ox_buf_printf(&body, "\tconst $I k = i3 %% %lld, first = i3 < %lld;\n", (long long)half, (long long)half);
	char cr[64], sr[64];
	ox_cg_snprintf(cr, sizeof cr, "cs[pos * %lld$L + k]", (long long)cols);
	ox_cg_snprintf(sr, sizeof sr, "sn[pos * %lld$L + k]", (long long)cols);
	ox_buf_printf(&body, "\tconst %s co = %s, si = %s;\n", C, ox_cg_load(dt, cr), ox_cg_load(dt, sr));
	char x1[64], x2[64];
	ox_cg_snprintf(x1, sizeof x1, il ? "xr[2 * k]" : "xr[k]");
	if (il)
		ox_cg_snprintf(x2, sizeof x2, "xr[2 * k + 1]");
	else
		ox_cg_snprintf(x2, sizeof x2, "xr[k + %lld]", (long long)half);
	ox_buf_printf(&body, "\tconst %s x1 = %s, x2 = %s;\n\ty[i] = first ? %s : %s;\n", C, ox_cg_load(dt, x1),
		      ox_cg_load(dt, x2), y1, y2);
	char kname[200], params[320];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params,
		 "const OX_T *__restrict__ x, const OX_T *__restrict__ cs, const OX_T *__restrict__ sn, const int64_t *__restrict__ ind, OX_T *__restrict__ y%s",
		 p ? ", int *st" : "");
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: RotaryEmbedding, %lld heads of %lld, rotating %lld%s: a thread per element */\n",
		      cg->fname, (long long)H, (long long)D, (long long)rot, il ? " (interleaved pairs)" : " (two halves)");
	ox_cu_index_kernel(&t, kname, params, dims, 4, body.s);
	ox_buf_free(&body);
	ox_cu_index_launch(cg, kname, dims, 4, p ? "in0, in1, in2, in3, out0, ox_status" : "in0, in1, in2, nullptr, out0", NULL);
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* A kernel of a thread per (outer, inner) of x as [outer, D, inner], for
 * the ops along a middle axis (Reduce, ArgMax/ArgMin, (Log)Softmax):
 * strided_dims renders D, inner and D * inner for the body (run-time dims
 * R's parameters: 0 when they are too many); strided_kernel prints the
 * kernel (t: its comment, then the kernel; body reads i0, i1) and its
 * launch, and frees t and body; typed: params use OX_T (ox_cu_finish). */
typedef struct {
	char d[32], in[32], din[32];
} middle_dims;
static int strided_dims(ox_cu_rt *R, ox_dim D, ox_dim inner, middle_dims *sd)
{
	return ox_cu_rt_dim(R, D, sd->d, sizeof sd->d) && ox_cu_rt_dim(R, inner, sd->in, sizeof sd->in) &&
	       ox_cu_rt_dim(R, ox_dim_mul(R->g, D, inner), sd->din, sizeof sd->din);
}
static int strided_kernel(ox_cg *cg, ox_cu_rt *R, ox_dim outer, ox_dim inner,
			  const char *params, ox_buf *t, ox_buf *body)
{
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const ox_dim dims[2] = {outer, inner};
	const int bad = ox_cu_index_kernel_rt(t, kname, params, dims, 2, body->s, R);
	ox_buf_free(body);
	if (bad) {
		ox_buf_free(t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 2, "in0, out0", R);
	ox_cu_finish(cg, kname, t);
	return 0;
}

/* the head of a kernel of a warp per row (4 a block), rows of D: a
 * run-time D is the parameter ox_len after params (rows_launch passes
 * it); len, when not NULL, gets D's text in the kernel */
static void warp_rows(ox_buf *t, ox_graph *g, const char *fname, const char *op, ox_dim rows, ox_dim D,
		      const char *kname, const char *params, char *len, size_t lensz)
{
	const int rtD = ox_dim_is_rt(g, D);
	if (len)
		ox_cg_snprintf(len, lensz, rtD ? "ox_len" : "%lld", (long long)D);
	/* a run-time count of rows: the parameter ox_rows (rows_launch) */
	const int rt = ox_dim_is_rt(g, rows);
	char rs[128], lim[32];
	if (rt)
		ox_dim_str(g, rows, rs, sizeof rs), ox_cg_snprintf(lim, sizeof lim, "ox_rows");
	else
		ox_cg_snprintf(rs, sizeof rs, "%lld", (long long)rows), ox_cg_snprintf(lim, sizeof lim, "%lld$L", (long long)rows);
	char ds[32] = "the run's length";
	if (!rtD)
		ox_cg_snprintf(ds, sizeof ds, "%lld", (long long)D);
	ox_buf_printf(t, "/* %s: %s of %s rows of %s, a warp each */\n"
			 "__global__ void __launch_bounds__(128) %s(%s%s%s)\n"
			 "{\n"
			 "\tconst $I row = ($I)blockIdx.x * 4 + threadIdx.x / 32;\n"
			 "\tconst int lane = threadIdx.x %% 32;\n",
		      fname, op, rs, ds, kname, params, rtD ? ", const $I ox_len" : "",
		      rt ? ", const $I ox_rows" : "");
	ox_buf_printf(t, "\tif (row >= %s)\n"
			 "\t\treturn;\n",
		      lim);
}

/* warp_rows' launch, 4 rows a block, args its arguments before ox_len
 * (a run-time D) and ox_rows */
static void rows_launch(ox_cg *cg, ox_graph *g, const char *kname, ox_dim rows, ox_dim D, const char *args)
{
	char a[400];
	if (ox_dim_is_rt(g, D)) {
		ox_cg_snprintf(a, sizeof a, "%s, (long)%s", args, ox_cg_dim(cg, D));
		args = a;
	}
	if (!ox_dim_is_rt(g, rows))
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, 128, 0, ox_st, %s);\n", kname, (long long)((rows + 3) / 4), args);
	else {
		char b[440];
		ox_cg_snprintf(b, sizeof b, "%s, ox_n", args);
		ox_cu_launch_rt(cg, kname, rows, 4, 128, b);
	}
}

/* the rows of x before axis ax, the axes from ax on constants: 0 when not */
static int rows_of(ox_graph *g, const ox_value *x, int ax, ox_dim *rows)
{
	*rows = 1;
	for (int i = 0; i < x->shape.rank; i++)
		if (i < ax)
			*rows = ox_dim_mul(g, *rows, x->shape.d[i]);
		else if (ox_dim_is_rt(g, x->shape.d[i]))
			return 0;
	return 1;
}

/* InstanceNormalization and GroupNormalization (a GroupNorm export's):
 * a block of 256 threads per (image, group), the C target's computation
 * (codegen/c/emit_norm.c): mean and variance in double, two passes, a block
 * reduction in shared memory in a fixed order; scale and bias per channel
 * (per group before opset 21). Run-time batch and spatial size as
 * parameters. */
static int cu_chan_norm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const int inst = n->op == OX_OP_InstanceNormalization;
	const ox_value *x = ox_in(g, n, 0), *sc = ox_in(g, n, 1), *bi = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	if (!x || !sc || !bi || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || sc->dtype != x->dtype ||
	    bi->dtype != x->dtype || x->layout || y->layout || sc->layout || bi->layout || x->shape.rank < 3 ||
	    ox_dim_is_rt(g, x->shape.d[1]))
		return 1;
	const int64_t C = x->shape.d[1], G = inst ? C : ox_attr_int(n, "num_groups", 1);
	const int per_group = !inst && n->opset < 21;
	if (G < 1 || C % G || sc->shape.rank != 1 || bi->shape.rank != 1 || sc->shape.d[0] != (per_group ? G : C) ||
	    bi->shape.d[0] != (per_group ? G : C))
		return 1;
	const int64_t cpg = C / G;
	ox_dim sp = 1;
	for (int i = 2; i < x->shape.rank; i++)
		sp = ox_dim_mul(g, sp, x->shape.d[i]);
	const ox_dim gsz = ox_dim_mul(g, cpg, sp), rows = ox_dim_mul(g, x->shape.d[0], G);
	if (!ox_dim_is_rt(g, gsz) && gsz <= 0)
		return 1;
	ox_cu_rt R = {g, 0, {0}};
	char SP[32], GS[32], kname[200];
	if (!ox_cu_rt_dim(&R, sp, SP, sizeof SP) || !ox_cu_rt_dim(&R, gsz, GS, sizeof GS))
		return 1;
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	/* the scale's and bias' index: the group, or the channel */
	char kidx[160];
	if (per_group)
		ox_cg_snprintf(kidx, sizeof kidx, "ng %% %lld", (long long)G);
	else
		ox_cg_snprintf(kidx, sizeof kidx, "ng %% %lld * %lld + i / %s", (long long)G, (long long)cpg, SP);
	ox_buf t = ox_cu_kbuf(g, n), rtp = {0};
	ox_cu_rt_params(NULL, &R, &rtp, NULL);
	ox_buf_printf(&t, "/* %s: %s, %lld groups of %lld channels x %s values, a block each */\n"
			  "__global__ void __launch_bounds__(256) %s(const OX_T *__restrict__ x, const OX_T *__restrict__ sc,\n"
			  "\t\tconst OX_T *__restrict__ bi, OX_T *__restrict__ y%s)\n"
			  "{\n"
			  "\t__shared__ double red[256];\n"
			  "\tconst $I ng = blockIdx.x, n = %s;\n"
			  "\tconst int tid = threadIdx.x;\n"
			  "\tconst OX_T *p = x + ng * n;\n"
			  "\tOX_T *q = y + ng * n;\n"
			  "\tdouble s = 0;\n"
			  "\tfor ($I i = tid; i < n; i += 256)\n"
			  "\t\ts += (double)OX_LD(p[i]);\n"
			  "\tred[tid] = s;\n"
			  "\t__syncthreads();\n"
			  "\tfor (int o = 128; o > 0; o /= 2) {\n"
			  "\t\tif (tid < o)\n"
			  "\t\t\tred[tid] += red[tid + o];\n"
			  "\t\t__syncthreads();\n"
			  "\t}\n"
			  "\tconst double mean = red[0] / (double)n;\n"
			  "\t__syncthreads();\n"
			  "\tdouble v = 0;\n"
			  "\tfor ($I i = tid; i < n; i += 256) {\n"
			  "\t\tconst double d = (double)OX_LD(p[i]) - mean;\n"
			  "\t\tv += d * d;\n"
			  "\t}\n"
			  "\tred[tid] = v;\n"
			  "\t__syncthreads();\n"
			  "\tfor (int o = 128; o > 0; o /= 2) {\n"
			  "\t\tif (tid < o)\n"
			  "\t\t\tred[tid] += red[tid + o];\n"
			  "\t\t__syncthreads();\n"
			  "\t}\n",
		      cg->fname, n->optype, (long long)G, (long long)cpg, SP, kname, rtp.s ? rtp.s : "", GS);
	ox_buf_printf(&t, "\tconst double inv = 1 / sqrt(red[0] / (double)n + %s);\n"
			  "\tfor ($I i = tid; i < n; i += 256) {\n"
			  "\t\tconst $I k = %s;\n"
			  "\t\tconst double a = (double)OX_LD(sc[k]) * inv, b = (double)OX_LD(bi[k]) - mean * a;\n"
			  "\t\tq[i] = OX_ST((float)(a * (double)OX_LD(p[i]) + b));\n"
			  "\t}\n"
			  "}\n"
			  "\n",
		      ox_cg_lit(OX_F64, ox_attr_float(n, "epsilon", 1e-5f)), kidx);
	ox_buf_free(&rtp);
	ox_buf a = {0};
	ox_buf_puts(&a, "in0, in1, in2, out0");
	ox_cu_rt_params(cg, &R, NULL, &a);
	ox_cu_launch_rt(cg, kname, rows, 1, 256, a.s);
	ox_buf_free(&a);
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* The statements that normalize a row of D by a warp (LayerNormalization,
 * or RMSNormalization: the mean of squares only), computed in f32: the
 * mean and variance by shuffles, two passes over the row. xr is the row
 * read, element i as ld's format gives it (one %s: the element), yr the
 * row written, sc and b (NULL: none) the names of the scale and bias,
 * lane the warp's lane; each line indented by ind. */
static void norm_row(ox_buf *t, const char *ind, const char *lane, const char *sc, const char *b, int rms, int64_t D,
		     double eps, const char *ld)
{
	char bi[64] = "";
	if (b)
		ox_cg_snprintf(bi, sizeof bi, " + OX_LD(%s[i])", b);
	char xi[96];
	ox_cg_snprintf(xi, sizeof xi, ld, "xr[i]");
	const long long d = (long long)D;
	if (rms)
		ox_buf_printf(t, "%sconst float mean = 0.0f;\n", ind);
	else {
		ox_buf_printf(t, "%sfloat s = 0.0f;\n"
				 "%sfor ($I i = %s; i < %lld; i += 32)\n"
				 "%s\ts += %s;\n"
				 "%sfor (int o = 16; o > 0; o /= 2)\n"
				 "%s\ts += __shfl_xor_sync(0xffffffffu, s, o);\n",
			      ind, ind, lane, d, ind, xi, ind, ind);
		ox_buf_printf(t, "%sconst float mean = s / %lld.0f;\n",
			      ind, d);
	}
	ox_buf_printf(t, "%sfloat q = 0.0f;\n"
			 "%sfor ($I i = %s; i < %lld; i += 32) {\n"
			 "%s\tconst float d = %s - mean;\n"
			 "%s\tq += d * d;\n"
			 "%s}\n",
		      ind, ind, lane, d, ind, xi, ind, ind);
	ox_buf_printf(t, "%sfor (int o = 16; o > 0; o /= 2)\n"
			 "%s\tq += __shfl_xor_sync(0xffffffffu, q, o);\n"
			 "%sconst float inv = 1.0f / sqrtf(q / %lld.0f + %s);\n"
			 "%sfor ($I i = %s; i < %lld; i += 32)\n",
		      ind, ind, ind, d, ox_cg_lit(OX_F32, eps), ind, lane, d);
	ox_buf_printf(t, "%s\tyr[i] = OX_ST((%s - mean) * inv * OX_LD(%s[i])%s);\n",
		      ind, xi, sc, bi);
}

/* A kernel of node n normalizing `rows` rows of D, a warp each (norm_row);
 * ym, yi: LayerNormalization's Mean and InvStdDev outputs too. args: the
 * launch's x, scale, bias (or nullptr), y[, ym, yi] */
static void norm_kernel(ox_cg *cg, ox_graph *g, ox_node *n, const char *kname, ox_dim rows, int64_t D, int rms,
			double eps, int b, int ym, int yi, const char *args)
{
	ox_buf t = ox_cu_kbuf(g, n);
	warp_rows(&t, g, cg->fname, rms ? "RMSNormalization" : "LayerNormalization", rows, D, kname,
		  ym || yi ? "const OX_T *__restrict__ x, const OX_T *__restrict__ sc,\n"
			     "\t\tconst OX_T *__restrict__ b, OX_T *__restrict__ y, float *__restrict__ ym, float *__restrict__ yi"
			   : "const OX_T *__restrict__ x, const OX_T *__restrict__ sc,\n"
			     "\t\tconst OX_T *__restrict__ b, OX_T *__restrict__ y",
		  NULL, 0);
	ox_buf_printf(&t, "\tconst OX_T *xr = x + row * %lld;\n\tOX_T *yr = y + row * %lld;\n", (long long)D,
		      (long long)D);
	norm_row(&t, "\t", "lane", "sc", b ? "b" : NULL, rms, D, eps, "OX_LD(%s)");
	ox_buf_printf(&t, "%s%s%s%s}\n\n", ym || yi ? "\tif (lane == 0) {\n" : "", ym ? "\t\tym[row] = mean;\n" : "",
		      yi ? "\t\tyi[row] = inv;\n" : "", ym || yi ? "\t}\n" : "");
	rows_launch(cg, g, kname, rows, D, args);
	ox_cu_finish(cg, kname, &t);
}

/* LayerNormalization and RMSNormalization over the trailing axes (scale
 * and bias of the normalized size, Mean/InvStdDev not asked for, computed
 * in f32: stash_type 1): a warp per row (norm_kernel) */
static int cu_layernorm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const int rms = n->op == OX_OP_RMSNormalization;
	ox_value *x = ox_in(g, n, 0), *sc = ox_in(g, n, 1), *b = rms ? NULL : ox_in(g, n, 2), *y = ox_out(g, n, 0);
	if (ox_attr_int(n, "stash_type", 1) != 1)
		return 1;
	/* LayerNormalization's Mean and InvStdDev (f32, a value per row) */
	const int ym = n->nout > 1 && n->out[1] >= 0, yi = n->nout > 2 && n->out[2] >= 0;
	for (int k = 1; k < n->nout; k++)
		if (n->out[k] >= 0 && (rms || g->vals[n->out[k]].dtype != OX_F32 || g->vals[n->out[k]].layout))
			return 1;
	if (!x || !y || !sc || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout ||
	    sc->dtype != x->dtype || (b && b->dtype != x->dtype))
		return 1;
	int r = x->shape.rank, axis = (int)ox_attr_int(n, "axis", -1);
	if (axis < 0)
		axis += r;
	ox_dim rows;
	if (axis < 0 || axis >= r || !rows_of(g, x, axis, &rows))
		return 1;
	int64_t D = 1;
	for (int i = axis; i < r; i++)
		D *= x->shape.d[i];
	if (ox_shape_numel(&sc->shape) != D || (b && ox_shape_numel(&b->shape) != D) || !D)
		return 1;
	char kname[200], args[96];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(args, sizeof args, "in0, in1, %s, out0%s%s%s", b ? "in2" : "nullptr", ym || yi ? ", " : "",
		 ym || yi ? (ym ? "out1" : "nullptr") : "", ym || yi ? (yi ? ", out2" : ", nullptr") : "");
	norm_kernel(cg, g, n, kname, rows, D, rms, ox_attr_float(n, "epsilon", 1e-5f), b != NULL, ym, yi, args);
	return 0;
}

/* Softmax and LogSoftmax over rows of D (the axis, with nothing inside
 * it; before opset 13 the axes from it on, as 2-D): a warp per row, the
 * maximum, the sum of exp(x - max), the outputs. As the C target
 * (codegen/c/emit_reduce.c): the maximum skips NaN, whose exp makes the sum
 * and so the row NaN; a row of -inf is NaN. */
static int cu_softmax(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || !x->shape.rank)
		return 1;
	const int r = x->shape.rank, legacy = n->opset < 13, log = n->op == OX_OP_LogSoftmax;
	const int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
	const int ax = legacy && a == r ? r : ox_norm_axis(a, r);
	if (ax < 0)
		return 1;
	int strided = 0;
	for (int i = ax + 1; i < r && !legacy; i++)
		strided |= x->shape.d[i] != 1;
	ox_dim rows = 1, D = 1; /* (a run-time row length D: the parameter ox_len) */
	for (int i = 0; i < ax; i++)
		rows = ox_dim_mul(g, rows, x->shape.d[i]);
	if (!strided) {
		for (int i = ax; i < r; i++)
			D = ox_dim_mul(g, D, x->shape.d[i]);
		if (!D)
			return 1;
	}
	if (rows == 0)
		return 1;
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	if (strided) {
		/* along a middle axis (the channels of NCHW): a thread per
		 * (outer, inner), down the axis with stride inner, the same
		 * three passes */
		ox_dim inner = 1, Dx = x->shape.d[ax];
		for (int i = ax + 1; i < r; i++)
			inner = ox_dim_mul(g, inner, x->shape.d[i]);
		ox_cu_rt R = {g, 0, {0}};
		middle_dims sd;
		if (!strided_dims(&R, Dx, inner, &sd))
			return 1;
		ox_buf body = {0};
		ox_buf_printf(&body, "\tconst $I o = i0 * %s + i1, st = %s;\n\tconst OX_T *xr = x + o;\n\tOX_T *yr = y + o;\n"
				     "\tfloat m = -INFINITY;\n\tfor ($I j = 0; j < %s; j++) {\n"
				     "\t\tconst float v = OX_LD(xr[j * st]);\n\t\tif (v > m)\n\t\t\tm = v;\n\t}\n"
				     "\tfloat s = 0.0f;\n\tfor ($I j = 0; j < %s; j++)\n\t\ts += expf(OX_LD(xr[j * st]) - m);\n"
				     "%s\tfor ($I j = 0; j < %s; j++)\n\t\tyr[j * st] = OX_ST(%s);\n",
			      sd.din, sd.in, sd.d, sd.d, log ? "\tconst float ls = logf(s);\n" : "", sd.d,
			      log ? "(OX_LD(xr[j * st]) - m) - ls" : "expf(OX_LD(xr[j * st]) - m) / s");
		ox_buf_printf(&t, "/* %s: %s along axis %d of %lld, a thread per (outer, inner)%s */\n", cg->fname, n->optype,
			      ax, (long long)ox_opt_top(g, Dx), R.n ? " (run-time dims)" : "");
		return strided_kernel(cg, &R, rows, inner, "const OX_T *__restrict__ x, OX_T *__restrict__ y", &t,
				      &body);
	}
	char len[48];
	warp_rows(&t, g, cg->fname, n->optype, rows, D, kname, "const OX_T *__restrict__ x, OX_T *__restrict__ y", len,
		  sizeof len);
	ox_buf_printf(&t, "\tconst OX_T *xr = x + row * %s;\n\tOX_T *yr = y + row * %s;\n"
			  "\tfloat m = -INFINITY;\n\tfor ($I i = lane; i < %s; i += 32) {\n"
			  "\t\tconst float v = OX_LD(xr[i]);\n\t\tif (v > m)\n\t\t\tm = v;\n\t}\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n\t\tm = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));\n"
			  "\tfloat s = 0.0f;\n\tfor ($I i = lane; i < %s; i += 32)\n\t\ts += expf(OX_LD(xr[i]) - m);\n"
			  "\tfor (int o = 16; o > 0; o /= 2)\n\t\ts += __shfl_xor_sync(0xffffffffu, s, o);\n"
			  "%s"
			  "\tfor ($I i = lane; i < %s; i += 32)\n\t\tyr[i] = OX_ST(%s);\n}\n\n",
		      len, len, len, len, log ? "\tconst float ls = logf(s);\n" : "", len,
		      log ? "(OX_LD(xr[i]) - m) - ls" : "expf(OX_LD(xr[i]) - m) / s");
	rows_launch(cg, g, kname, rows, D, "in0, out0");
	ox_cu_finish(cg, kname, &t);
	return 0;
}

int ox_cu_phys(const ox_value *v, int64_t *dims)
{
	if (v->layout == OX_L_BLOCKED && v->shape.rank == 4) {
		const int64_t b = v->lp[0];
		dims[0] = v->shape.d[0], dims[1] = (v->shape.d[1] + b - 1) / b, dims[2] = v->shape.d[2];
		dims[3] = v->shape.d[3], dims[4] = b;
		return 5;
	}
	for (int d = 0; d < v->shape.rank; d++)
		dims[d] = v->shape.d[d];
	return v->shape.rank;
}

const char *ox_cu_rt_dim(ox_cu_rt *R, ox_dim d, char *buf, size_t sz)
{
	if (!R || !ox_dim_is_rt(R->g, d)) {
		ox_cg_snprintf(buf, sz, "%lld", (long long)(R ? ox_dim_eval(R->g, d) : d));
		return buf;
	}
	int k = 0;
	while (k < R->n && R->d[k] != d)
		k++;
	if (k == R->n) {
		if (R->n == 16)
			return NULL;
		R->d[R->n++] = d;
	}
	ox_cg_snprintf(buf, sz, "ox_r%d", k);
	return buf;
}

void ox_cu_rt_params(ox_cg *cg, const ox_cu_rt *R, ox_buf *params, ox_buf *args)
{
	for (int k = 0; R && k < R->n; k++) {
		if (params)
			ox_buf_printf(params, ", const $I ox_r%d", k);
		if (args)
			ox_buf_printf(args, ", (long)%s", ox_cg_dim(cg, R->d[k]));
	}
}

void ox_cu_launch_rt(ox_cg *cg, const char *kname, ox_dim n, int per, int threads, const char *args)
{
	ox_cg_printf(cg, "\t{\n\t\tconst long ox_n = %s;\n\t\tif (ox_n > 0)\n"
			 "\t\t\tOX_LAUNCH(%s, (unsigned)((ox_n + %d) / %d), %d, 0, ox_st, %s);\n\t}\n",
		     ox_cg_dim(cg, n), kname, per - 1, per, threads, args);
}

/* the product of dims[0..r-1] */
static ox_dim dims_numel(ox_graph *g, const ox_dim *dims, int r)
{
	ox_dim tot = 1;
	for (int k = 0; k < r; k++)
		tot = g ? ox_dim_mul(g, tot, dims[k]) : tot * dims[k];
	return tot;
}

/* A kernel of one thread per element of an index space of rank r: `body`
 * reads the element's multi-index from i0..i<r-1> (and its linear index
 * i). For the copy plans of the data ops, Concat and the fused elementwise
 * bodies. Run-time dims (R) become parameters after params; -1 when there
 * are too many. */
int ox_cu_index_kernel_rt(ox_buf *t, const char *kname, const char *params, const ox_dim *dims, int r,
			  const char *body, ox_cu_rt *R)
{
	ox_graph *g = R ? R->g : NULL;
	char tb[32], bb[32], db[32];
	ox_buf dec = {0};
	ox_dim below = 1;
	int bad = !ox_cu_rt_dim(R, dims_numel(g, dims, r), tb, sizeof tb);
	for (int k = r - 1; k >= 0 && !bad; k--) {
		char v[16];
		ox_cg_snprintf(v, sizeof v, "i%d", k);
		/* (as a word: nvcc warns of unused variables) */
		if (ox_cg_uses_name(body, v)) {
			bad = !ox_cu_rt_dim(R, below, bb, sizeof bb) || !ox_cu_rt_dim(R, dims[k], db, sizeof db);
			ox_buf_printf(&dec, "\tconst $I i%d = i / %s %% %s;\n", k, bb, db);
		}
		below = g ? ox_dim_mul(g, below, dims[k]) : below * dims[k];
	}
	if (bad) {
		ox_buf_free(&dec);
		return -1;
	}
	const int B = !R || !R->n ? ox_cu_block_of(dims_numel(NULL, dims, r)) : 256; /* (as ox_cu_index_launch) */
	ox_buf_printf(t, "__global__ void __launch_bounds__(%d) %s(%s", B, kname, params);
	ox_cu_rt_params(NULL, R, t, NULL);
	ox_buf_printf(t, ")\n{\n\tconst $I i = ($I)blockIdx.x * %d + threadIdx.x;\n\tif (i >= %s%s)\n\t\treturn;\n",
		      B, tb, tb[0] == 'o' ? "" : "$L");
	ox_buf_puts(t, dec.s ? dec.s : "");
	ox_buf_puts(t, body);
	ox_buf_puts(t, "}\n\n");
	ox_buf_free(&dec);
	return 0;
}

void ox_cu_index_kernel(ox_buf *t, const char *kname, const char *params, const int64_t *dims, int r, const char *body)
{
	ox_cu_index_kernel_rt(t, kname, params, dims, r, body, NULL);
}

void ox_cu_index_launch(ox_cg *cg, const char *kname, const ox_dim *dims, int r, const char *ptrs, const ox_cu_rt *R)
{
	if (!R || !R->n) {
		const int64_t tot = dims_numel(NULL, dims, r);
		const int B = ox_cu_block_of(tot);
		if (tot > 0)
			ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, %d, 0, ox_st, %s);\n", kname, (long long)((tot + B - 1) / B), B,
				     ptrs);
		return;
	}
	ox_buf a = {0};
	ox_buf_puts(&a, ptrs);
	ox_cu_rt_params(cg, R, NULL, &a);
	ox_cu_launch_rt(cg, kname, dims_numel(R->g, dims, r), 256, 256, a.s);
	ox_buf_free(&a);
}

/* Transpose, Slice, Expand, Tile: the copy plan of ir/infer_data.c (the
 * C target's loops render the same plan), linear axes; run-time extents,
 * strides and offsets are the kernel's parameters */
static int cu_plan(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_plan p;
	if (ox_ir_data_plan(g, n, &p))
		return 1;
	ox_dim dims[2 * OX_MAX_RANK];
	ox_cu_rt R = {g, 0, {0}};
	char b1[32], b2[32];
	ox_buf body = {0}, in = {0}, out = {0};
	if (!ox_cu_rt_dim(&R, p.ib, b1, sizeof b1) || !ox_cu_rt_dim(&R, p.ob, b2, sizeof b2))
		goto decline;
	ox_buf_puts(&in, b1);
	ox_buf_puts(&out, b2);
	for (int k = 0; k < p.nax; k++) {
		const ox_plan_axis *a = &p.ax[k];
		if (a->kind != OX_PLAN_LIN || a->bc)
			goto decline;
		dims[k] = a->n;
		if (a->is) {
			if (!ox_cu_rt_dim(&R, a->is, b1, sizeof b1))
				goto decline;
			ox_buf_printf(&in, " %s i%d * %s", a->neg ? "-" : "+", k, b1);
		}
		if (a->os) {
			if (!ox_cu_rt_dim(&R, a->os, b2, sizeof b2))
				goto decline;
			ox_buf_printf(&out, " + i%d * %s", k, b2);
		}
	}
	const char *ty = ox_cg_ctype(g->vals[n->out[0]].dtype);
	ox_buf_printf(&body, "\ty[%s] = x[%s];\n", out.s, in.s);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", ty, ty);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s as a copy plan of %d axes */\n", cg->fname, n->optype, p.nax);
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, p.nax, body.s, &R)) {
		ox_buf_free(&t);
		goto decline;
	}
	ox_cu_index_launch(cg, kname, dims, p.nax, "in0, out0", &R);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&body), ox_buf_free(&in), ox_buf_free(&out);
	return 0;
decline:
	ox_buf_free(&body), ox_buf_free(&in), ox_buf_free(&out);
	return 1;
}

/* Pad (constant, edge, reflect, wrap): a thread per output element. Axis
 * k's input index c = i_k - a folded into [0, m) (ox_ir_data_plan's Pad
 * kinds, the C target's emit_fold) or, for a constant-mode axis, the pad
 * value outside [0, m); then c + lo. Run-time dims are the kernel's
 * parameters. The value: in2[0] (a device pointer) or the constant. An
 * axis the run could leave empty (the C target checks it) declines. */
static int cu_pad(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	ox_plan p;
	if (!x || !y || x->layout || y->layout || y->dtype == OX_STRING || !ox_dtype_size(y->dtype) ||
	    ox_ir_data_plan(g, n, &p) || p.nax != y->shape.rank || p.nax < 1)
		return 1;
	const int r = p.nax, cmode = !strcmp(ox_attr_str(n, "mode", "constant"), "constant");
	ox_cu_rt R = {g, 0, {0}};
	ox_buf body = {0}, src = {0}, oob = {0};
	char b[6][32];
	int64_t lo, hi;
	for (int k = 0; k < r; k++) {
		const ox_plan_axis *q = &p.ax[k];
		if (ox_dim_range(g, q->m, &lo, &hi) || lo < (q->kind == OX_PLAN_LIN ? 0 : 1))
			goto decline;
		/* (m - 1 and 2 (m - 1) only where a fold reads them: an unused
		 * run-time one would be a parameter too) */
		const int fold = q->kind != OX_PLAN_LIN;
		if (!ox_cu_rt_dim(&R, q->a, b[0], sizeof b[0]) || !ox_cu_rt_dim(&R, q->m, b[1], sizeof b[1]) ||
		    !ox_cu_rt_dim(&R, q->lo, b[2], sizeof b[2]) || !ox_cu_rt_dim(&R, q->is, b[3], sizeof b[3]) ||
		    (fold && !ox_cu_rt_dim(&R, ox_dim_sub(g, q->m, 1), b[4], sizeof b[4])) ||
		    (fold && !ox_cu_rt_dim(&R, ox_dim_mul(g, ox_dim_sub(g, q->m, 1), 2), b[5], sizeof b[5])))
			goto decline;
		ox_buf_printf(&body, "\t$I c%d = i%d - %s;\n", k, k, b[0]);
		if (q->kind == OX_PLAN_EDGE)
			ox_buf_printf(&body, "\tc%d = c%d < 0 ? 0 : c%d >= %s ? %s : c%d;\n", k, k, k, b[1], b[4], k);
		else if (q->kind == OX_PLAN_WRAP)
			ox_buf_printf(&body, "\tc%d = (c%d %% %s + %s) %% %s;\n", k, k, b[1], b[1], b[1]);
		else if (q->kind == OX_PLAN_REFLECT) {
			ox_buf_printf(&body, "\tif (%s > 1) {\n"
					     "\t\tc%d = (c%d %% %s + %s) %% %s; /* reflect */\n"
					     "\t\tif (c%d >= %s)\n",
				      b[1], k, k, b[5], b[5], b[5], k, b[1]);
			ox_buf_printf(&body, "\t\t\tc%d = %s - c%d;\n"
					     "\t} else {\n"
					     "\t\tc%d = 0;\n"
					     "\t}\n",
				      k, b[5], k, k);
		} else if (cmode)
			ox_buf_printf(&oob, "%s(unsigned $I)c%d >= (unsigned $I)%s", oob.len ? " || " : "", k, b[1]);
		ox_buf_printf(&src, "%s(c%d + %s) * %s", src.len ? " + " : "", k, b[2], b[3]);
	}
	const char *ty = ox_cg_ctype(y->dtype);
	const int hasv = n->nin > 2 && n->in[2] >= 0;
	char val[128];
	ox_cg_snprintf(val, sizeof val, "%s", hasv ? "cv[0]" : ox_cg_store(y->dtype, ox_cg_lit(y->dtype, n->opset < 11 ? ox_attr_float(n, "value", 0) : 0)));
	if (oob.len)
		ox_buf_printf(&body, "\tif (%s) {\n\t\ty[i] = %s;\n\t\treturn;\n\t}\n", oob.s, val);
	ox_buf_printf(&body, "\ty[i] = x[%s];\n", src.s);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ cv, %s *__restrict__ y", ty, ty, ty);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: Pad (%s), a thread per output element */\n", cg->fname, ox_attr_str(n, "mode", "constant"));
	if (ox_cu_index_kernel_rt(&t, kname, params, y->shape.d, r, body.s, &R)) {
		ox_buf_free(&t);
		goto decline;
	}
	ox_cu_index_launch(cg, kname, y->shape.d, r, hasv ? "in0, in2, out0" : "in0, nullptr, out0", &R);
	ox_cg_helper(cg, kname, t.s); /* (typed: no OX_T; long indices kept) */
	ox_buf_free(&t), ox_buf_free(&body), ox_buf_free(&src), ox_buf_free(&oob);
	return 0;
decline:
	ox_buf_free(&body), ox_buf_free(&src), ox_buf_free(&oob);
	return 1;
}

/* Shape (start .. end of the input's dims): a thread per element, the
 * run-time dims the kernel's parameters */
static int cu_shape(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !x->has_shape || y->dtype != OX_I64 || y->shape.rank != 1 || y->layout)
		return 1;
	const int r = x->shape.rank;
	int64_t s = ox_attr_int(n, "start", 0), e = ox_attr_int(n, "end", r);
	s = s < 0 ? s + r : s, e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s, e = e < 0 ? 0 : e > r ? r : e;
	if (y->shape.d[0] != (e > s ? e - s : 0) || e <= s)
		return 1;
	ox_cu_rt R = {g, 0, {0}};
	ox_buf body = {0};
	ox_buf_puts(&body, "	const $I v[] = {");
	for (int64_t k = s; k < e; k++) {
		char b[32];
		if (!ox_cu_rt_dim(&R, x->shape.d[k], b, sizeof b)) {
			ox_buf_free(&body);
			return 1;
		}
		ox_buf_printf(&body, "%s%s", k > s ? ", " : "", b);
	}
	ox_buf_puts(&body, "};\n\ty[i] = v[i];\n");
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: Shape, dims %lld..%lld */\n", cg->fname, (long long)s, (long long)e - 1);
	const ox_dim dims[1] = {e - s};
	if (ox_cu_index_kernel_rt(&t, kname, "int64_t *__restrict__ y", dims, 1, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&body);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 1, "out0", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&body);
	return 0;
}

/* ConstantOfShape whose dims are run-time ones (a constant one is
 * folded): a thread per element writes the value */
static int cu_const_of_shape(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	const ox_attr *a = ox_attr_get(n, "value");
	if (!y || !y->has_shape || y->layout || !ox_dtype_size(y->dtype) || y->dtype == OX_STRING ||
	    (a && (!a->t || a->t->dtype != y->dtype)))
		return 1;
	char v[128], kname[200], params[96];
	if (a)
		ox_cg_lit_elem(a->t, 0, v, sizeof v);
	else
		ox_cg_snprintf(v, sizeof v, "%s", ox_cg_lit(y->dtype, 0)); /* the default value: f32 0 */
	ox_cu_rt R = {g, 0, {0}};
	ox_buf body = {0}, t = {.ix = "long"};
	ox_buf_printf(&body, "\ty[i] = %s;\n", v);
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "%s *__restrict__ y", ox_cg_ctype(y->dtype));
	ox_buf_printf(&t, "/* %s: ConstantOfShape, a thread per element */\n", cg->fname);
	if (ox_cu_index_kernel_rt(&t, kname, params, y->shape.d, y->shape.rank, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&body);
		return 1;
	}
	ox_cu_index_launch(cg, kname, y->shape.d, y->shape.rank, "out0", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&body);
	return 0;
}

/* Range whose length is a dim (constant or run-time: position ids of a
 * dynamic sequence), not computed here from the data: a thread per
 * element, start + i * delta as the C target computes it (codegen/
 * emit_data.c: in the type, integers in uint64 arithmetic) */
static int cu_range(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *y = ox_out(g, n, 0);
	const int dt = y ? y->dtype : -1;
	if (!y || !y->has_shape || y->layout || y->shape.rank != 1 || !ox_cu_plain_num(dt) || dt == OX_F16 ||
	    dt == OX_BF16 || !ox_in(g, n, 0) || !ox_in(g, n, 2) || ox_in(g, n, 0)->dtype != dt || ox_in(g, n, 2)->dtype != dt)
		return 1;
	const char *T = ox_cg_ctype(dt);
	char kname[200], params[200];
	ox_buf body = {0}, t = {.ix = "long"};
	if (ox_dtype_is_float(dt))
		ox_buf_printf(&body, "\ty[i] = s0[0] + (%s)i * d0[0];\n", ox_cg_ntype(dt));
	else
		ox_buf_printf(&body, "\ty[i] = (%s)((uint64_t)s0[0] + (uint64_t)i * (uint64_t)d0[0]);\n", T);
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ s0, const %s *__restrict__ d0, %s *__restrict__ y", T, T, T);
	ox_buf_printf(&t, "/* %s: Range, a thread per element */\n", cg->fname);
	ox_cu_rt R = {g, 0, {0}};
	if (ox_cu_index_kernel_rt(&t, kname, params, y->shape.d, 1, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&body);
		return 1;
	}
	ox_cu_index_launch(cg, kname, y->shape.d, 1, "in0, in2, out0", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&body);
	return 0;
}

/* Gather (an embedding lookup): a thread per output element [outer, M,
 * inner]. Indices read at run time are checked as the C target checks
 * them (one wrap of a negative index); one out of range sets the run's
 * status word to _ERR_INDEX (the first error kept: atomicCAS) and its
 * element is not written. The run goes on, nothing waits (the CUDA Graph
 * stays): PREFIX_sync returns the code, the outputs are unspecified, and
 * as on the C target nothing reads or writes out of bounds. Constant
 * indices out of range are the C emitter's compile-time error. */
static int cu_gather(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (!x || !ix || !y || !x->has_shape || !ix->has_shape || x->layout || y->layout || x->dtype == OX_STRING ||
	    !ox_dtype_size(x->dtype) || (ix->dtype != OX_I32 && ix->dtype != OX_I64))
		return 1;
	const int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), x->shape.rank);
	/* [outer, indices, inner]; run-time dims (a dynamic batch and
	 * sequence of token ids) the kernel's parameters */
	ox_dim dims[3] = {1, ox_shape_numel_dim(g, &ix->shape), 1};
	const ox_dim dD = x->shape.d[axis];
	for (int d = 0; d < x->shape.rank; d++)
		if (d != axis)
			dims[d < axis ? 0 : 2] = ox_dim_mul(g, dims[d < axis ? 0 : 2], x->shape.d[d]);
	const int rt = ox_dim_is_rt(g, dD) || ox_dim_is_rt(g, dims[0]) || ox_dim_is_rt(g, dims[1]) ||
		       ox_dim_is_rt(g, dims[2]);
	if (dD == 0 || (!rt && dims[0] * dims[1] * dims[2] == 0))
		return 1;
	const ox_tensor *ci = ox_in_const(g, n, 1);
	if (ci && ox_dim_is_rt(g, dD))
		return 1; /* (constant indices: checked here against a constant axis) */
	for (int64_t j = 0; ci && j < ox_tensor_numel(ci); j++) {
		const int64_t k = (int64_t)ox_tensor_get_f64(ci, j);
		if (k < -dD || k >= dD)
			return 1;
	}
	ox_cu_rt R = {g, 0, {0}};
	char kname[200], params[256], ds[40], dn[32], in[32];
	if (!ox_cu_rt_dim(&R, dD, dn, sizeof dn) || !ox_cu_rt_dim(&R, dims[2], in, sizeof in))
		return 1;
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(y->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ ind, %s *__restrict__ y%s", ty,
		 ox_cg_ctype(ix->dtype), ty, ci ? "" : ", int *st");
	ox_buf body = {0};
	ox_cg_snprintf(ds, sizeof ds, ox_dim_is_rt(g, dD) ? "%s" : "%s$L", dn);
	if (ci) /* (checked here: wrapped only) */
		ox_buf_printf(&body, "\tint64_t k = (int64_t)ind[i1];\n\tif (k < 0)\n\t\tk += %s;\n", ds);
	else
		ox_cu_index_check(cg, &body, 1, "k", "ind[i1]", ds);
	ox_buf_printf(&body, "\ty[i] = x[(i0 * %s + k) * %s + i2];\n", dn, in);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: Gather along axis %d of %s, %s indices: a thread per element */\n", cg->fname, axis, dn,
		      ci ? "constant" : "checked");
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, 3, body.s, &R)) {
		ox_buf_free(&body), ox_buf_free(&t);
		return 1;
	}
	ox_buf_free(&body);
	ox_cu_index_launch(cg, kname, dims, 3, ci ? "in0, in1, out0" : "in0, in1, out0, ox_status", &R);
	ox_cu_finish(cg, kname, &t);
	return 0;
}

void ox_cu_index_check(ox_cg *cg, ox_buf *b, int lvl, const char *var, const char *src, const char *D)
{
	static const char tabs[] = "\t\t\t\t\t";
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_buf_printf(b, "%.*sint64_t %s = (int64_t)%s;\n", lvl, tabs, var, src);
	ox_buf_printf(b, "%.*sif (%s < 0)\n%.*s%s += %s;\n", lvl, tabs, var, lvl + 1, tabs, var, D);
	ox_buf_printf(b, "%.*sif ((uint64_t)%s >= (uint64_t)%s) {\n"
			 "%.*satomicCAS(st, 0, %s_ERR_INDEX);\n",
		      lvl, tabs, var, D, lvl + 1, tabs, cg->prefix_upper);
	ox_buf_printf(b, "%.*sreturn;\n"
			 "%.*s}\n",
		      lvl + 1, tabs, lvl, tabs);
}

int ox_cu_plain_num(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16 || dt == OX_I8 || dt == OX_U8 ||
	       dt == OX_I16 || dt == OX_U16 || dt == OX_I32 || dt == OX_U32 || dt == OX_I64 || dt == OX_U64;
}

/* GatherElements: a thread per output element, its index (negative from
 * the end) read and checked as the C target checks it; out of range sets
 * the status word (_ERR_INDEX). Run-time dims are parameters where the
 * indices share each of the data's dims but the axis (the same dim, or
 * constants no larger): no check of them is left to the run. */
static int cu_gather_elements(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	int axis;
	if (!x || !ix || !y || x->layout || ix->layout || y->layout || x->dtype == OX_STRING || !ox_dtype_size(x->dtype) ||
	    (ix->dtype != OX_I32 && ix->dtype != OX_I64) || ox_index_axis(g, n, &axis) || axis < 0)
		return 1;
	const int r = x->shape.rank;
	if (ix->shape.rank != r || r < 1 || !ox_shape_numel(&ix->shape) || !x->shape.d[axis])
		return 1;
	for (int k = 0; k < r; k++) {
		const ox_dim a = ix->shape.d[k], b = x->shape.d[k];
		if (k != axis && a != b && (ox_dim_is_rt(g, a) || ox_dim_is_rt(g, b) || a > b))
			return 1; /* (the C target's checks) */
	}
	ox_cu_rt R = {g, 0, {0}};
	char D[32];
	if (!ox_cu_rt_dim(&R, x->shape.d[axis], D, sizeof D))
		return 1;
	ox_buf body = {0}, off = {0};
	ox_cu_index_check(cg, &body, 1, "j", "ind[i]", D);
	ox_dim stride = 1;
	for (int k = r - 1; k >= 0; k--) {
		char v[16], sb[32];
		ox_cg_snprintf(v, sizeof v, k == axis ? "j" : "i%d", k);
		if (!ox_cu_rt_dim(&R, stride, sb, sizeof sb)) {
			ox_buf_free(&body), ox_buf_free(&off);
			return 1;
		}
		ox_buf_printf(&off, "%s%s * %s", off.len ? " + " : "", v, sb);
		stride = ox_dim_mul(g, stride, x->shape.d[k]);
	}
	ox_buf_printf(&body, "\ty[i] = x[%s];\n", off.s);
	ox_buf_free(&off);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(y->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ ind, %s *__restrict__ y, int *st",
		 ty, ox_cg_ctype(ix->dtype), ty);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: GatherElements along axis %d of %lld%s, checked indices: a thread per element%s */\n",
		      cg->fname, axis, (long long)ox_opt_top(g, x->shape.d[axis]), ox_dim_is_rt(g, x->shape.d[axis]) ? " at most" : "",
		      R.n ? " (run-time dims)" : "");
	const int bad = ox_cu_index_kernel_rt(&t, kname, params, ix->shape.d, r, body.s, &R);
	ox_buf_free(&body);
	if (bad) {
		ox_buf_free(&t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, ix->shape.d, r, "in0, in1, out0, ox_status", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	return 0;
}

/* TopK (a constant k): a thread per run along the axis, the C target's
 * insertion into the k-long index list (out1; among equal values the
 * lower index first), then the values gathered. Run-time dims are
 * parameters, the axis's too when its range starts at k or more (no
 * check left to the run). */
static int cu_topk(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *v = n->nout > 0 && n->out[0] >= 0 ? ox_out(g, n, 0) : NULL;
	const ox_value *ix = n->nout > 1 && n->out[1] >= 0 ? ox_out(g, n, 1) : NULL;
	int axis;
	if (!x || !v || !ix || x->layout || v->layout || ix->layout || ix->dtype != OX_I64 || v->dtype != x->dtype ||
	    !ox_cu_plain_num(x->dtype) || ox_index_axis(g, n, &axis) || axis < 0)
		return 1;
	const int r = x->shape.rank, dt = x->dtype;
	ox_dim O = 1, I = 1;
	const ox_dim L = x->shape.d[axis], K = v->shape.d[axis];
	for (int k = 0; k < r; k++)
		if (k < axis)
			O = ox_dim_mul(g, O, x->shape.d[k]);
		else if (k > axis)
			I = ox_dim_mul(g, I, x->shape.d[k]);
	int64_t lo, hi;
	if (ox_dim_is_rt(g, K) || K < 1 || !O || !I || (!ox_dim_is_rt(g, L) && K > L) ||
	    (ox_dim_is_rt(g, L) && (ox_dim_range(g, L, &lo, &hi) || lo < K)))
		return 1; /* (k from the data, nothing to do, or the C target's error) */
	ox_cu_rt R = {g, 0, {0}};
	char sI[32], sL[32], sLI[32], sKI[32];
	if (!ox_cu_rt_dim(&R, I, sI, sizeof sI) || !ox_cu_rt_dim(&R, L, sL, sizeof sL) ||
	    !ox_cu_rt_dim(&R, ox_dim_mul(g, L, I), sLI, sizeof sLI) || !ox_cu_rt_dim(&R, ox_dim_mul(g, K, I), sKI, sizeof sKI))
		return 1;
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt), *better = ox_attr_int(n, "largest", 1) ? ">" : "<";
	ox_buf body = {0};
	/* (st: the stride along the axis, named once) */
	ox_buf_printf(&body, "\tconst $I st = %s;\n\tconst %s *xr = x + i0 * %s + i1;\n\tint64_t *ix = ind + i0 * %s + i1;\n"
			     "\t$I m = 0; /* entries in ix so far */\n"
			     "\tfor ($I t = 0; t < %s; t++) {\n\t\tconst %s v = %s;\n\t\t$I s = m;\n",
		      sI, T, sLI, sKI, sL, C, ox_cg_load(dt, "xr[t * st]"));
	ox_buf_printf(&body, "\t\twhile (s > 0 && v %s %s)\n\t\t\ts--;\n\t\tif (s >= %lld)\n\t\t\tcontinue;\n"
			     "\t\tfor ($I u = m < %lld ? m : %lld; u > s; u--)\n\t\t\tix[u * st] = ix[(u - 1) * st];\n"
			     "\t\tix[s * st] = t;\n\t\tif (m < %lld)\n\t\t\tm++;\n\t}\n"
			     "\tfor ($I u = 0; u < %lld; u++)\n\t\ty[i0 * %s + u * st + i1] = xr[ix[u * st] * st];\n",
		      better, ox_cg_load(dt, "xr[ix[(s - 1) * st] * st]"), (long long)K, (long long)K,
		      (long long)(K - 1), (long long)K, (long long)K, sKI);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y, int64_t *__restrict__ ind", T, T);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: TopK %lld of %lld%s along axis %d (%s): a thread per run%s */\n", cg->fname, (long long)K,
		      (long long)ox_opt_top(g, L), ox_dim_is_rt(g, L) ? " at most" : "", axis,
		      *better == '>' ? "largest" : "smallest", R.n ? " (run-time dims)" : "");
	const ox_dim dims[2] = {O, I};
	const int bad = ox_cu_index_kernel_rt(&t, kname, params, dims, 2, body.s, &R);
	ox_buf_free(&body);
	if (bad) {
		ox_buf_free(&t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 2, "in0, out0, out1", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	return 0;
}

/* Einsum (constant shapes): a thread per output element, the C target's
 * sum of it (emit_signal.c: summed labels in order, double or uint64_t) */
static int cu_einsum(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_buf body = {0}, params = {0}, ptrs = {0};
	int64_t dims[OX_MAX_RANK];
	int r = 0, rc = ox_cg_einsum_body(cg, g, n, &body, dims, &r);
	if (rc || r > OX_MAX_RANK) {
		ox_buf_free(&body);
		return rc ? rc : 1;
	}
	if (r == 0) /* a scalar: one element */
		dims[0] = 1, r = 1;
	for (int k = 0; k < n->nin; k++) {
		ox_buf_printf(&params, "const %s *__restrict__ in%d, ", ox_cg_ctype(ox_in(g, n, k)->dtype), k);
		ox_buf_printf(&ptrs, "in%d, ", k);
	}
	ox_buf_printf(&params, "%s *__restrict__ out0", ox_cg_ctype(ox_out(g, n, 0)->dtype));
	ox_buf_puts(&ptrs, "out0");
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: Einsum \"%s\": a thread per output element */\n", cg->fname, ox_attr_str(n, "equation", ""));
	ox_cu_index_kernel(&t, kname, params.s, dims, r, body.s);
	ox_cu_index_launch(cg, kname, dims, r, ptrs.s, NULL);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&body), ox_buf_free(&params), ox_buf_free(&ptrs);
	return 0;
}

/* Trilu: a thread per element, kept on and above (upper) or on and below
 * (lower) diagonal k, k read by the kernel; run-time dims its parameters */
static int cu_trilu(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0), *kv = n->nin > 1 ? ox_in(g, n, 1) : NULL;
	if (!x || !y || x->layout || y->layout || x->shape.rank < 2 || x->dtype == OX_STRING || !ox_dtype_size(x->dtype) ||
	    !ox_shape_numel_dim(g, &x->shape) || (kv && kv->dtype != OX_I64))
		return 1;
	const int r = x->shape.rank, upper = ox_attr_int(n, "upper", 1) != 0;
	ox_dim B = 1;
	for (int i = 0; i < r - 2; i++)
		B = ox_dim_mul(g, B, x->shape.d[i]);
	const ox_dim dims[3] = {B, x->shape.d[r - 2], x->shape.d[r - 1]};
	ox_cu_rt R = {g, 0, {0}};
	char body[160], kname[200], params[256];
	ox_cg_snprintf(body, sizeof body, "\ty[i] = i2 - i1 %s %s ? x[i] : 0;\n", upper ? ">=" : "<=", kv ? "kp[0]" : "0");
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(y->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const int64_t *__restrict__ kp, %s *__restrict__ y", ty,
		 ty);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: Trilu (%s): a thread per element */\n", cg->fname, upper ? "upper" : "lower");
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, 3, body, &R)) {
		ox_buf_free(&t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 3, kv ? "in0, in1, out0" : "in0, nullptr, out0", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	return 0;
}

/* CumSum, CumProd along a constant axis: x as [outer, L, inner], a
 * thread per (outer, inner) running along L in the C target's order and
 * types (exclusive, reverse); run-time dims its parameters */
static int cu_cum(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	int axis;
	if (!x || !y || x->layout || y->layout || !x->shape.rank || !ox_cu_plain_num(x->dtype) || y->dtype != x->dtype ||
	    ox_index_axis(g, n, &axis) || axis < 0 || !ox_shape_numel_dim(g, &x->shape))
		return 1;
	const int dt = x->dtype, r = x->shape.rank, sum = n->op == OX_OP_CumSum;
	const int excl = ox_attr_int(n, "exclusive", 0) != 0, rev = ox_attr_int(n, "reverse", 0) != 0;
	ox_dim O = 1, I = 1;
	const ox_dim L = x->shape.d[axis];
	for (int k = 0; k < r; k++)
		if (k < axis)
			O = ox_dim_mul(g, O, x->shape.d[k]);
		else if (k > axis)
			I = ox_dim_mul(g, I, x->shape.d[k]);
	ox_cu_rt R = {g, 0, {0}};
	middle_dims sd;
	char l1[32];
	if (!strided_dims(&R, L, I, &sd) || !ox_cu_rt_dim(&R, ox_dim_sub(g, L, 1), l1, sizeof l1))
		return 1;
	const char *C = ox_cg_ntype(dt);
	char p[160], upd[256];
	if (rev)
		ox_cg_snprintf(p, sizeof p, "i0 * %s + (%s - t) * %s + i1", sd.din, l1, sd.in);
	else
		ox_cg_snprintf(p, sizeof p, "i0 * %s + t * %s + i1", sd.din, sd.in);
	ox_cg_snprintf(upd, sizeof upd, "\t\tacc = (%s)(acc %c %s);\n", C, sum ? '+' : '*', ox_cg_load(dt, "x[p]"));
	ox_buf body = {0};
	ox_buf_printf(&body, "\t%s acc = %s;\n\tfor ($I t = 0; t < %s; t++) {\n\t\tconst $I p = %s;\n%s"
			     "\t\ty[p] = %s;\n%s\t}\n",
		      C, sum ? "0" : "1", sd.d, p, excl ? "" : upd, ox_cg_store(dt, "acc"), excl ? upd : "");
	char params[256];
	const char *ty = ox_cg_ctype(dt);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", ty, ty);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: %s along axis %d of %lld%s%s%s: a thread per run */\n", cg->fname, n->optype, axis,
		      (long long)ox_opt_top(g, L), R.n ? " (at most)" : "", excl ? ", exclusive" : "", rev ? ", reversed" : "");
	return strided_kernel(cg, &R, O, I, params, &t, &body);
}

/* Concat's input k or Split's output k (split): a kernel over its tot
 * elements, element i at i / rk * row + off + i % rk of the whole (rk its
 * elements from the axis on, row the whole's, off its place along it) */
static void piece_kernel(ox_cg *cg, ox_graph *g, ox_node *n, int k, int split, const char *ty, ox_dim tot,
			 ox_dim rk, ox_dim row, ox_dim off)
{
	char kname[200], params[256], body[256], sr[32], sw[32], so[32], ptrs[32], place[160];
	ox_cu_rt R = {g, 0, {0}};
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel%d", cg->fname, k);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", ty, ty);
	if (!ox_cu_rt_dim(&R, rk, sr, sizeof sr) || !ox_cu_rt_dim(&R, row, sw, sizeof sw) ||
	    !ox_cu_rt_dim(&R, off, so, sizeof so))
		ox_die("codegen: '%s': a %s of more than 16 run-time dims", n->name, n->optype);
	ox_cg_snprintf(place, sizeof place, "i / %s * %s + %s + i %% %s", sr, sw, so, sr);
	ox_cg_snprintf(body, sizeof body, split ? "\ty[i] = x[%s];\n" : "\ty[%s] = x[i];\n", place);
	ox_buf t = ox_cu_kbuf(g, n);
	if (split)
		ox_buf_printf(&t, "/* %s: output %d of the Split along axis %d */\n", cg->fname, k,
			      ox_norm_axis(ox_attr_int(n, "axis", 0), g->vals[n->in[0]].shape.rank));
	else
		ox_buf_printf(&t, "/* %s: input %d of the Concat */\n", cg->fname, k);
	if (ox_cu_index_kernel_rt(&t, kname, params, &tot, 1, body, &R))
		ox_die("codegen: '%s': a %s of more than 16 run-time dims", n->name, n->optype);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	ox_cg_snprintf(ptrs, sizeof ptrs, split ? "in0, out%d" : "in%d, out0", k);
	ox_cu_index_launch(cg, kname, &tot, 1, ptrs, &R);
}

/* Concat: a kernel per input, each element to its place along the axis,
 * over the values' storage dims (ox_cu_phys): NHWC ones, concatenated over
 * the channels, along their last storage axis (one block: b = C) */
static int cu_concat(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	const int nhwc = y->layout == OX_L_BLOCKED;
	if ((y->layout && !nhwc) || (nhwc && y->lp[0] != y->shape.d[1]))
		return 1;
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;
		if (x && (x->layout != y->layout || (nhwc && x->lp[0] != x->shape.d[1])))
			return 1;
	}
	/* a kernel per input, its run-time dims (a plain value's) parameters */
	int64_t yd[OX_MAX_RANK + 1], xd[OX_MAX_RANK + 1];
	const int yr = ox_cu_phys(y, yd), axis = nhwc ? 4 : ox_norm_axis(ox_attr_int(n, "axis", 0), yr);
	ox_dim row = 1, off = 0;
	for (int d = axis; d < yr; d++)
		row = ox_dim_mul(g, row, yd[d]);
	const char *ty = ox_cg_ctype(y->dtype);
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0)
			continue;
		const int xr = ox_cu_phys(&g->vals[n->in[k]], xd);
		ox_dim rk = 1, tot = ox_shape_numel_dim(g, &g->vals[n->in[k]].shape);
		for (int d = axis; d < xr; d++)
			rk = ox_dim_mul(g, rk, xd[d]);
		if (ox_dim_is_rt(g, tot) || ox_dim_eval(g, tot) > 0)
			piece_kernel(cg, g, n, k, 0, ty, tot, rk, row, off);
		off = ox_dim_add(g, off, rk);
	}
	return 0;
}

/* Split: Concat's mirror, a kernel per output, each element from its place
 * along the axis (plain values; run-time dims the kernels' parameters).
 * A Split whose pieces are views of the input (opt/plan.c) needs none. */
static int cu_split(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	if (!x || x->layout || !x->has_shape || !x->shape.rank)
		return 1;
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && (g->vals[n->out[k]].layout || g->vals[n->out[k]].dtype != x->dtype))
			return 1;
	const int r = x->shape.rank, axis = ox_norm_axis(ox_attr_int(n, "axis", 0), r);
	ox_dim row = 1, off = 0;
	for (int d = axis; d < r; d++)
		row = ox_dim_mul(g, row, x->shape.d[d]);
	const char *ty = ox_cg_ctype(x->dtype);
	for (int k = 0; k < n->nout; k++) {
		if (n->out[k] < 0)
			continue; /* (its place still counts: its size is the output's) */
		const ox_value *y = &g->vals[n->out[k]];
		if (y->shape.rank != r)
			return 1;
		ox_dim rk = 1;
		for (int d = axis; d < r; d++)
			rk = ox_dim_mul(g, rk, y->shape.d[d]);
		const ox_dim tot = ox_shape_numel_dim(g, &y->shape);
		if (ox_dim_is_rt(g, tot) || ox_dim_eval(g, tot) > 0)
			piece_kernel(cg, g, n, k, 1, ty, tot, rk, row, off);
		off = ox_dim_add(g, off, rk);
	}
	return 0;
}

/* onnxcc::Fused (opt/ewfuse.c): its body per output element, the operands
 * broadcast like numpy (stride 0 along their size-1 dims) */
static int cu_fusedew(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_attr *a = ox_attr_get(n, "ox_body");
	ox_graph *b = a ? a->g[0] : NULL;
	ox_value *y = ox_out(g, n, 0);
	if (!b || !y || (y->layout && y->layout != OX_L_BLOCKED) || n->nin > 16)
		return 1;
	/* over the storage's dims: NHWC operands have the output's (or 1);
	 * run-time dims (plain values) are the kernel's parameters */
	int64_t dims[OX_MAX_RANK + 1], xd[OX_MAX_RANK + 1];
	ox_cu_rt R = {g, 0, {0}};
	char sb[32];
	int r = ox_cu_phys(y, dims);
	if (r == 0)
		dims[0] = 1, r = 1;
	/* V = 4 consecutive elements of the innermost dim per thread when it
	 * comes in fours: an operand that runs along it is read four at a time
	 * (one ox_ld4 where aligned), one that is broadcast along it once */
	const int V = !ox_dim_is_rt(g, dims[r - 1]) && dims[r - 1] % 4 == 0 ? 4 : 1;
	ox_buf params = {0}, body = {0}, loads = {0};
	char *in[17] = {0};
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = &g->vals[n->in[k]];
		const int xr = ox_cu_phys(x, xd);
		if ((x->layout != y->layout && ox_shape_numel(&x->shape) != 1) || (x->layout && x->lp[0] != y->lp[0]) ||
		    !ox_cu_ftype(x->dtype) || xr > r) {
			ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&loads);
			for (int j = 0; j < k; j++)
				free(in[j]);
			return 1;
		}
		ox_buf_printf(&params, "const %s *__restrict__ x%d, ", ox_cg_ctype(x->dtype), k);
		/* its offset: the output's index over its own dims (aligned right;
		 * the innermost index counts groups of V) */
		ox_buf off = {0};
		ox_buf_puts(&off, "0");
		ox_dim st = 1;
		for (int d = xr - 1; d >= 0; d--) {
			int od = d + (r - xr);
			if (xd[d] != 1 && od >= 0) {
				if (!ox_cu_rt_dim(&R, od == r - 1 ? ox_dim_mul(g, st, V) : st, sb, sizeof sb)) {
					ox_buf_free(&off);
					goto too_many;
				}
				ox_buf_printf(&off, " + i%d * %s", od, sb);
			}
			st = ox_dim_mul(g, st, xd[d]);
		}
		char e[1200];
		const int along = V > 1 && xr > 0 && xd[xr - 1] != 1;
		if (along) {
			const char *ct = ox_cg_ctype(x->dtype);
			if (ox_cu_align(g, n->in[k]) >= 4 * (int)ox_dtype_size(x->dtype))
				ox_buf_printf(&loads, "\t%s xv%d[4];\n\tox_ld4(&x%d[%s], xv%d);\n", ct, k, k, off.s, k);
			else {
				ox_buf_printf(&loads, "\tconst %s xv%d[4] = {x%d[%s], x%d[%s + 1], x%d[%s + 2], ",
					      ct, k, k, off.s, k, off.s, k, off.s);
				ox_buf_printf(&loads, "x%d[%s + 3]};\n",
					      k, off.s);
			}
			ox_cg_snprintf(e, sizeof e, "xv%d[u]", k);
		} else {
			ox_cg_snprintf(e, sizeof e, "x%d[%s]", k, off.s);
		}
		in[k] = strdup(ox_cg_load(x->dtype, e));
		ox_buf_free(&off);
	}
	ox_buf_puts(&params, "OX_T *__restrict__ y");
	ox_buf vb = {0};
	int rc = ox_cg_vbody(cg, &vb, b, (const char *const *)in, "const float v", V > 1 ? 2 : 1, 1);
	for (int k = 0; k < n->nin; k++)
		free(in[k]);
	if (rc) {
		ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&vb), ox_buf_free(&loads);
		return -1;
	}
	if (V > 1) {
		ox_buf_puts(&body, loads.s ? loads.s : "");
		ox_buf_puts(&body, "\tOX_T yv[4];\n\tfor (int u = 0; u < 4; u++) {\n");
		ox_buf_puts(&body, vb.s);
		ox_buf_puts(&body, "\t\tyv[u] = OX_ST(v);\n\t}\n");
		store4(&body, g, n->out[0], "i * 4");
		dims[r - 1] /= 4;
	} else {
		ox_buf_puts(&body, vb.s);
		ox_buf_puts(&body, "\ty[i] = OX_ST(v);\n");
	}
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n), ptrs = {0};
	ox_buf_printf(&t, "/* %s: fused elementwise body, one thread per %s */\n", cg->fname,
		      V > 1 ? "4 consecutive elements" : "element");
	if (ox_cu_index_kernel_rt(&t, kname, params.s, dims, r, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&vb), ox_buf_free(&loads);
		return 1;
	}
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&ptrs, "in%d, ", k);
	ox_buf_puts(&ptrs, "out0");
	ox_cu_index_launch(cg, kname, dims, r, ptrs.s, &R);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&vb), ox_buf_free(&loads), ox_buf_free(&ptrs);
	return 0;
too_many: /* (more than 16 run-time dims: the C function) */
	for (int j = 0; j < n->nin; j++)
		free(in[j]);
	ox_buf_free(&params), ox_buf_free(&body), ox_buf_free(&loads);
	return 1;
}

/* ox_red_join's statement at indent tabs (b an element v, elem, or
 * another thread's partial result; maxpass: into m) */
static void red_join(ox_cg *cg, ox_buf *t, const char *tabs, const ox_reduction *r, const char *b, int elem,
		     int maxpass)
{
	const char *cond, *stmt = ox_red_join(cg, r, b, elem, maxpass, &cond);
	if (cond)
		ox_buf_printf(t, "%sif (%s)\n%s\t%s\n", tabs, cond, tabs, stmt);
	else
		ox_buf_printf(t, "%s%s\n", tabs, stmt);
}

/* a loop over j from `from` to `to` by `by` joining element e (of j) */
static void red_loop(ox_cg *cg, ox_buf *t, const ox_reduction *r, const char *from, const char *to, const char *by,
		     const char *e, int maxpass)
{
	ox_buf_printf(t, "\tfor ($I j = %s; j < %s; j %s) {\n\t\tconst %s v = %s%s;\n", from, to, by, r->V,
		      r->viadbl ? "(double)" : "", ox_cg_load(r->dt, e));
	red_join(cg, t, "\t\t", r, "v", 1, maxpass);
	ox_buf_puts(t, "\t}\n");
}

/* the warp's partial results joined by shuffles: every lane has the whole */
static void red_shuffle(ox_cg *cg, ox_buf *t, const ox_reduction *r, int maxpass)
{
	ox_buf_printf(t, "\tfor (int o = 16; o > 0; o /= 2) {\n\t\tconst %s b = __shfl_xor_sync(0xffffffffu, %s, o);\n",
		      r->A, maxpass ? "m" : "acc");
	red_join(cg, t, "\t\t", r, "b", 0, maxpass);
	ox_buf_puts(t, "\t}\n");
}

/* LogSumExp's first pass: the maximum m, left out of the shift where it
 * is not finite (all -inf, or +inf), then acc from its start */
static void red_start(ox_cg *cg, ox_buf *t, const ox_reduction *r, const char *to, const char *by, const char *e,
		      int warp)
{
	if (r->twopass) {
		ox_buf_printf(t, "\t%s m = %s;\n", r->A, ox_cg_lit(r->cdt, -INFINITY));
		red_loop(cg, t, r, warp ? "lane" : "0", to, by, e, 1);
		if (warp)
			red_shuffle(cg, t, r, 1);
		ox_buf_printf(t, "\tif (!isfinite(m))\n\t\tm = %s;\n", ox_cg_lit(r->cdt, 0));
	}
	ox_buf_printf(t, "\t%s acc = %s;\n", r->A, r->init);
}

/* Reduce* (f32, f16, bf16) over one block of consecutive axes (unit axes
 * inside it may be kept), in the types and with the arithmetic of
 * reduction.h (the C target's): x as [outer, D, inner]. Three kernels:
 * - inner 1 (a trailing block), rows long and too few to fill the GPU
 *   (constant shapes; not LogSumExp's two passes): S blocks of 256
 *   threads per row, each a part of the row to the workspace; the row's
 *   last block to arrive (ox_split_last) combines the S parts in order;
 * - inner 1 otherwise: a warp per row, shuffles to combine;
 * - inner above 1 (the sequence axis of [B, S, H], the channels of
 *   NCHW): a thread per output, down D with stride inner (neighbouring
 *   threads read neighbouring elements).
 * Run-time dims: the kernels' parameters (not the split one's). */
static int cu_reduce(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !ox_cu_ftype(x->dtype) || y->dtype != x->dtype || x->layout || y->layout || !x->shape.rank)
		return 1;
	int mask[OX_MAX_RANK] = {0}, r = x->shape.rank;
	if (ox_reduce_axes(g, n, mask))
		return 1;
	int first = -1, last = -1;
	for (int d = 0; d < r; d++)
		if (mask[d])
			last = d, first = first < 0 ? d : first;
	if (first < 0)
		return 1;
	for (int d = first; d <= last; d++)
		if (!mask[d] && x->shape.d[d] != 1)
			return 1; /* not one block */
	ox_dim outer = 1, D = 1, inner = 1;
	for (int d = 0; d < r; d++)
		if (d < first)
			outer = ox_dim_mul(g, outer, x->shape.d[d]);
		else if (d <= last)
			D = ox_dim_mul(g, D, x->shape.d[d]);
		else
			inner = ox_dim_mul(g, inner, x->shape.d[d]);
	ox_reduction rd;
	if (!D || !outer || !inner || ox_reduction_of(g, n, &rd))
		return 1;
	const int rtD = ox_dim_is_rt(g, D);
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n);
	if (inner != 1) {
		ox_cu_rt R = {g, 0, {0}};
		middle_dims sd;
		if (!strided_dims(&R, D, inner, &sd))
			return 1;
		ox_buf body = {0};
		const char *e = ox_cg_text(cg, "xr[j * %s]", sd.in);
		ox_buf_printf(&body, "\tconst OX_T *xr = x + i0 * %s + i1;\n", sd.din);
		red_start(cg, &body, &rd, sd.d, "++", e, 0);
		red_loop(cg, &body, &rd, "0", sd.d, "++", e, 0);
		ox_buf_printf(&body, "\ty[i] = %s;\n", ox_red_stored(cg, &rd, ox_red_result(cg, &rd, rtD ? -1 : D, rtD ? sd.d : NULL)));
		ox_buf_printf(&t, "/* %s: %s over %lld of [%lld, %lld, %lld]%s, a thread per output */\n", cg->fname,
			      n->optype, (long long)ox_opt_top(g, D), (long long)ox_opt_top(g, outer),
			      (long long)ox_opt_top(g, D), (long long)ox_opt_top(g, inner),
			      R.n ? " (at most: run-time dims)" : "");
		return strided_kernel(cg, &R, outer, inner, "const OX_T *__restrict__ x, OX_T *__restrict__ y", &t,
				      &body);
	}
	const ox_dim rows = outer;
	const char *len = rtD ? "ox_len" : ox_cg_text(cg, "%lld", (long long)D);
	const char *res = ox_red_stored(cg, &rd, ox_red_result(cg, &rd, rtD ? -1 : D, rtD ? len : NULL));
	/* a row's parts: a block of 256 threads for 2048 of D at least, until
	 * the blocks give each SM two */
	int S = 1;
	if (!rtD && !ox_dim_is_rt(g, rows) && !rd.twopass)
		while (S < 1024 && rows * S < 2 * OX_CU_SMS && D / (S * 2) >= 2048)
			S *= 2;
	if (S > 1) {
		const int64_t CH = (D + S - 1) / S;
		const int64_t asz = strcmp(rd.A, "double") ? 4 : 8;
		if (rows * S * asz > cg->cu_ws)
			cg->cu_ws = rows * S * asz;
		if (rows > cg->cu_ctr)
			cg->cu_ctr = rows;
		ox_buf_printf(&t, "/* %s: %s of %lld rows of %lld, %d blocks a row, each %lld of it */\n"
				  "__global__ void __launch_bounds__(256) %s(const OX_T *__restrict__ x, OX_T *__restrict__ y,\n"
				  "\t\t%s *__restrict__ ws, unsigned int *__restrict__ ctr)\n{\n",
			      cg->fname, n->optype, (long long)rows, (long long)D, S, (long long)CH, kname, rd.A);
		ox_buf_printf(&t, "\t__shared__ %s part[8];\n\tconst $I row = blockIdx.x, j0 = ($I)blockIdx.y * %lld;\n"
				  "\tconst $I j1 = j0 + %lld < %lld ? j0 + %lld : %lld;\n"
				  "\tconst int tid = threadIdx.x, lane = tid %% 32;\n",
			      rd.A, (long long)CH, (long long)CH, (long long)D, (long long)CH, (long long)D);
		red_start(cg, &t, &rd, "j1", "+= 256", "", 0);
		red_loop(cg, &t, &rd, "j0 + tid", "j1", "+= 256", ox_cg_text(cg, "x[row * %lld + j]", (long long)D), 0);
		red_shuffle(cg, &t, &rd, 0);
		ox_buf_puts(&t, "\tif (lane == 0)\n\t\tpart[tid / 32] = acc;\n\t__syncthreads();\n"
				"\tif (tid == 0) {\n\t\tfor (int w = 1; w < 8; w++) {\n\t\t\tconst ");
		ox_buf_printf(&t, "%s b = part[w];\n", rd.A);
		red_join(cg, &t, "\t\t\t", &rd, "b", 0, 0);
		ox_buf_printf(&t, "\t\t}\n\t\tws[row * %d + blockIdx.y] = acc;\n\t}\n"
				  "\t/* the row's last block to arrive combines the %d parts in order */\n"
				  "\tif (!ox_split_last(ctr + row, %d) || tid)\n\t\treturn;\n",
			      S, S, S);
		ox_buf_printf(&t, "\tacc = %s;\n\tfor (int s = 0; s < %d; s++) {\n\t\tconst %s b = ox_ldcg(&ws[row * %d + s]);\n",
			      rd.init, S, rd.A, S);
		red_join(cg, &t, "\t\t", &rd, "b", 0, 0);
		ox_buf_printf(&t, "\t}\n\ty[row] = %s;\n}\n\n", res);
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, dim3(%lld, %d), 256, 0, ox_st, in0, out0, (%s *)ox_cu_ws, ox_cu_ctr);\n",
			     kname, (long long)rows, S, rd.A);
		ox_cu_finish(cg, kname, &t);
		return 0;
	}
	warp_rows(&t, g, cg->fname, n->optype, rows, D, kname, "const OX_T *__restrict__ x, OX_T *__restrict__ y", NULL, 0);
	ox_buf_printf(&t, "\tconst OX_T *xr = x + row * %s;\n", len);
	red_start(cg, &t, &rd, len, "+= 32", "xr[j]", 1);
	red_loop(cg, &t, &rd, "lane", len, "+= 32", "xr[j]", 0);
	red_shuffle(cg, &t, &rd, 0);
	ox_buf_printf(&t, "\tif (lane == 0)\n\t\ty[row] = %s;\n}\n\n", res);
	rows_launch(cg, g, kname, rows, D, "in0, out0");
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* ArgMax / ArgMin along one axis, any numeric dtype: x as [outer, D,
 * inner], a thread per output walking D with stride inner, reduction.h's
 * test (NaN wins, the first or with select_last_index the last:
 * ox_red_better). Run-time dims its parameters; a run-time D that may be 0
 * declines (the C function reports it). */
static int cu_arg(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || x->layout || y->layout || y->dtype != OX_I64 || !x->shape.rank || x->dtype == OX_STRING ||
	    !ox_dtype_size(x->dtype))
		return 1;
	const int dt = x->dtype, r = x->shape.rank, ax = ox_norm_axis(ox_attr_int(n, "axis", 0), r);
	const int last = ox_attr_int(n, "select_last_index", 0) != 0, isf = ox_dtype_is_float(dt);
	ox_dim outer = 1, D = 1, inner = 1;
	for (int i = 0; i < r; i++)
		if (i < ax)
			outer = ox_dim_mul(g, outer, x->shape.d[i]);
		else if (i == ax)
			D = x->shape.d[i];
		else
			inner = ox_dim_mul(g, inner, x->shape.d[i]);
	int64_t lo, hi;
	if (ox_dim_range(g, D, &lo, &hi) || lo < 1 || !outer || !inner)
		return 1;
	ox_cu_rt R = {g, 0, {0}};
	middle_dims sd;
	if (!strided_dims(&R, D, inner, &sd))
		return 1;
	const char *cond = ox_red_better(cg, isf, n->op == OX_OP_ArgMax, last);
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt);
	ox_buf body = {0};
	/* (the stride named once: a load expression may repeat its argument) */
	ox_buf_printf(&body, "\tconst $I inner_ = %s;\n"
			     "\tconst %s *xr = x + i0 * %s + i1;\n"
			     "\t%s best = %s;\n"
			     "\tint64_t at = 0;\n"
			     "\tfor ($I k = 1; k < %s; k++) {\n"
			     "\t\tconst %s v = %s;\n",
		      sd.in, T, sd.din, C, ox_cg_load(dt, "xr[0]"), sd.d, C, ox_cg_load(dt, "xr[k * inner_]"));
	ox_buf_printf(&body, "\t\tif (%s) {\n"
			     "\t\t\tbest = v;\n"
			     "\t\t\tat = k;\n"
			     "\t\t}\n"
			     "\t}\n"
			     "\ty[i] = at;\n",
		      cond);
	char params[160];
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, int64_t *__restrict__ y", T);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: %s along axis %d (%lld of [%lld, %lld, %lld]%s)",
		      cg->fname, n->optype, ax, (long long)ox_opt_top(g, D), (long long)ox_opt_top(g, outer),
		      (long long)ox_opt_top(g, D), (long long)ox_opt_top(g, inner), R.n ? ", at most" : "");
	ox_buf_printf(&t, "%s, a thread per output */\n",
		      last ? ", the last index on ties" : "");
	return strided_kernel(cg, &R, outer, inner, params, &t, &body);
}

/* Any other elementwise node: emit_ew's own map (the C target's
 * expression per element, its dtypes and conversions) described
 * (ox_cu_map) and rendered as a kernel of a thread per element */
static const char *map_rt_dim(void *R, ox_dim d, char *buf, size_t sz)
{
	return ox_cu_rt_dim((ox_cu_rt *)R, d, buf, sz);
}

static int cu_map(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	if (!y || y->layout || y->dtype == OX_STRING)
		return 1;
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && (g->vals[n->in[k]].layout || g->vals[n->in[k]].dtype == OX_STRING))
			return 1;
	/* run-time dims: the kernel's parameters (ox_cu_rt) */
	ox_cu_rt R = {g, 0, {0}};
	ox_cu_map M = {0};
	M.dim = map_rt_dim, M.R = &R;
	cg->cu_map = &M;
	int rc = emit_ew(cg, g, n);
	cg->cu_map = NULL;
	if (rc || !M.ok || M.bad) {
		ox_buf_free(&M.body);
		return rc ? -1 : 1;
	}
	ox_buf params = {0};
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&params, "const %s *__restrict__ in%d, ",
			      ox_cg_ctype(n->in[k] >= 0 ? g->vals[n->in[k]].dtype : OX_F32), k);
	ox_buf_printf(&params, "%s *__restrict__ out0", ox_cg_ctype(y->dtype));
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = ox_cu_kbuf(g, n), ptrs = {0};
	ox_buf_printf(&t, "/* %s: %s, a thread per element */\n", cg->fname, n->optype);
	if (ox_cu_index_kernel_rt(&t, kname, params.s, M.d, M.r, M.body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&params), ox_buf_free(&M.body);
		return 1;
	}
	for (int k = 0; k < n->nin; k++)
		ox_buf_printf(&ptrs, n->in[k] >= 0 ? "in%d, " : "nullptr, ", k);
	ox_buf_puts(&ptrs, "out0");
	ox_cu_index_launch(cg, kname, M.d, M.r, ptrs.s, &R);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&params), ox_buf_free(&M.body), ox_buf_free(&ptrs);
	return 0;
}

static int reads_blocked(ox_graph *g, const ox_node *n)
{
	int blocked = 0;
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		blocked |= v >= 0 && g->vals[v].layout == OX_L_BLOCKED;
	}
	return blocked;
}

/* The kernels by family, one a row of ir/ops.def's cuda column: each
 * returns 0 done, 1 no kernel for this node (its C function runs on one
 * device thread), -1 an error. none: no kernel for the op. */
static int cu_conv(ox_cg *cg, ox_graph *g, ox_node *n)
{
	return conv_ok(g, n) ? emit_conv(cg, g, n) : 1;
}

static int cu_gemm(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_gemmgeo q;
	return ox_opt_gemm_geo(g, n, &q) ? 1 : emit_gemm(cg, g, n, &q);
}

#define cu_window ox_cu_emit_window
#define cu_nn ox_cu_emit_nn
#define cu_index ox_cu_emit_index
#define cu_rnn ox_cu_emit_rnn
#define cu_signal ox_cu_emit_signal
#define cu_ctrl ox_cu_emit_ctrl
#define cu_quant ox_cu_emit_quant
#define cu_none NULL

typedef int (*cu_kernel_fn)(ox_cg *, ox_graph *, ox_node *);
static const cu_kernel_fn cu_kernels[OX_NOPS] = {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) [OX_OP_##id] = cu_##cuda,
#include "../../ir/ops.def"
#undef OP
};
static const char *const cu_names[OX_NOPS] = {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) [OX_OP_##id] = #cuda,
#include "../../ir/ops.def"
#undef OP
};

/* A node that reads or writes an NHWC value has the NHWC kernels
 * (codegen/cuda/cuda_nhwc.c), except a Concat and a fused body, which take
 * NHWC operands themselves; any other, its op's family */
static int nhwc_node(ox_graph *g, const ox_node *n)
{
	return reads_blocked(g, n) && n->op != OX_OP_Concat && n->op != OX_OP_Fused;
}

const char *ox_cu_family(ox_graph *g, const ox_node *n)
{
	return nhwc_node(g, n) ? "nhwc" : cu_names[n->op];
}

/* node n's kernel: 0 done, 1 none here, -1 an error */
static int dispatch(ox_cg *cg, ox_graph *g, ox_node *n)
{
	cu_kernel_fn f = nhwc_node(g, n) ? ox_cu_emit_nhwc : cu_kernels[n->op];
	return f ? f(cg, g, n) : 1;
}

/* does n compute a dim of an output from the data (Expand, Tile of a
 * shape read at run time)? */
static int defines_dims(ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nout; k++) {
		const ox_value *v = n->out[k] >= 0 ? &g->vals[n->out[k]] : NULL;
		for (int d = 0; v && d < v->shape.rank; d++)
			if (ox_dim_defined_by(g, v->shape.d[d], n->out[k]))
				return 1;
	}
	return 0;
}

int ox_cu_emit(ox_cg *cg, ox_graph *g, ox_node *n)
{
	/* dims from the data: the kernels' launches read them on the host
	 * before the node runs, so only a Resize and a NonMaxSuppression
	 * (which wait for their own) and the control nodes take such a node;
	 * else the C function on the device computes them and the run reads
	 * them back */
	if (defines_dims(g, n) && n->op != OX_OP_Resize && n->op != OX_OP_NonMaxSuppression && n->op != OX_OP_If &&
	    n->op != OX_OP_Loop && n->op != OX_OP_Scan)
		return 1;
	int rc = dispatch(cg, g, n), blocked = reads_blocked(g, n);
	if (rc > 0 && blocked)
		ox_die("codegen: '%s' (%s) reads or writes an NHWC value, but no CUDA kernel takes it (opt/layout.c)",
		       n->name, n->optype);
	if (rc > 0 && n->op == OX_OP_MatMulSplit)
		ox_die("codegen: MatMulSplit '%s' without its CUDA kernel (opt/siblings.c)", n->name);
	if (rc > 0 && ox_attr_get(n, "ox_norm"))
		ox_die("codegen: '%s' computes a norm but no CUDA kernel takes it (opt/gemmnorm.c)", n->name);
	if (rc > 0 && ox_ir_epilogue(n))
		ox_die("codegen: '%s' has an epilogue but no CUDA kernel takes it (opt/epilogue.c)", n->name);
	if (rc > 0 && n->op == OX_OP_Fused && g->vals[n->out[0]].dtype != OX_F32)
		ox_die("codegen: '%s': an f16/bf16 fused body without its CUDA kernel (opt/ewfuse.c)", n->name);
	return rc;
}
