/* cuda_kernels.h: the pieces the CUDA kernel emitters share (defined in
 * codegen/cuda/cuda_kernels.c, the tiles' in cuda_tile.c) and the kernel
 * families (ox_cu_emit_<family>, the table in cuda_dispatch.c). Each emitter answers 0 (the node is its kernel), 1 (it
 * does not take the node: the C function runs on the device) or -1. */
#ifndef OX_CUDA_KERNELS_H
#define OX_CUDA_KERNELS_H
#include "../cg.h"

/* the node's fused epilogue (opt/epilogue.c) as scalar statements on `v`:
 * operand j reads e<j>[chan] (per channel), e<j>[full] or e<j>[0]; 0 when
 * it has none */
int ox_cu_epilogue(ox_cg *cg, ox_graph *g, ox_node *n, ox_buf *t, const char *chan, const char *full, int lvl);
/* the epilogue's operands as kernel parameters and launch arguments */
void ox_cu_epi_params(ox_graph *g, ox_node *n, ox_buf *params, ox_buf *args);
/* the same for an epilogue body b of n's (a fused depthwise's, ox_dw):
 * its operands n->in[first ..], named <pre><j>, ref the shape of the value
 * it transforms */
int ox_cu_epilogue_of(ox_cg *cg, ox_graph *g, ox_node *n, ox_graph *b, int first, char pre, const ox_shape *ref,
		      ox_buf *t, const char *chan, const char *full, int lvl);
void ox_cu_epi_params_of(ox_graph *g, ox_node *n, ox_graph *b, int first, char pre, ox_buf *params, ox_buf *args);
/* every tensor of the node is under 2^30 elements: 32-bit indices */
int ox_cu_fits32(ox_graph *g, const ox_node *n);
/* the buffer of node n's kernel text, with its fields (cg.h, ox_buf): $I
 * and $L for 32-bit indices when the node fits, OX_T, OX_LD(e), OX_ST(e)
 * for the type of its first output (computation in f32) */
ox_buf ox_cu_kbuf(ox_graph *g, const ox_node *n);
/* the kernel text t, named kname, into the file's kernels; frees t */
void ox_cu_finish(ox_cg *cg, const char *kname, ox_buf *t);
/* f32, f16, bf16: the element types of kernels written with OX_T */
int ox_cu_ftype(int dt);
/* a kernel of one thread per element of a constant index space of rank r:
 * `body` reads the multi-index i0..i<r-1> and the linear index i */
void ox_cu_index_kernel(ox_buf *t, const char *kname, const char *params, const int64_t *dims, int r,
			const char *body);
/* Run-time dims in a kernel's text: each distinct one (ox_cu_rt_dim) a
 * parameter ox_rK that its launch passes from the host's ox_d[]
 * (codegen/rtdims.c's expressions): at most 16 */
typedef struct {
	ox_graph *g;
	int n;
	ox_dim d[16];
} ox_cu_rt;
/* d as the kernel's text: its value, or ox_rK; NULL past 16 */
const char *ox_cu_rt_dim(ox_cu_rt *R, ox_dim d, char *buf, size_t sz);
/* R's kernel parameters (", const long ox_rK", into params) and their
 * launch arguments from the run's dims (", (long)EXPR", into args); R,
 * params or args may be NULL */
void ox_cu_rt_params(ox_cg *cg, const ox_cu_rt *R, ox_buf *params, ox_buf *args);
/* the launch of kname over a run-time count n, per items a block of
 * threads: the grid from the run's dims (ox_n, which args may name), none
 * when the count is 0; args after the stream */
void ox_cu_launch_rt(ox_cg *cg, const char *kname, ox_dim n, int per, int threads, const char *args);
/* ox_cu_index_kernel over dims that may be run-time ones (R's) */
int ox_cu_index_kernel_rt(ox_buf *t, const char *kname, const char *params, const ox_dim *dims, int r,
			  const char *body, ox_cu_rt *R);
/* its launch in the node's host code, ptrs its arguments before R's ("in0,
 * out0"): a constant grid, or one the host computes from ox_d[] */
void ox_cu_index_launch(ox_cg *cg, const char *kname, const ox_dim *dims, int r, const char *ptrs, const ox_cu_rt *R);

/* the head of a kernel of a warp per row (4 a block), rows of D (the
 * norms, softmaxes, MatMulNBits' outputs): its index row, its lane; a
 * run-time D is the parameter ox_len after params, len (when not NULL)
 * gets D's text in the kernel; ox_cu_rows_launch launches it, args its
 * arguments before ox_len and the rows' count */
void ox_cu_warp_rows(ox_buf *t, ox_graph *g, const char *fname, const char *op, ox_dim rows, ox_dim D,
		     const char *kname, const char *params, char *len, size_t lensz);
void ox_cu_rows_launch(ox_cg *cg, ox_graph *g, const char *kname, ox_dim rows, ox_dim D, const char *args);

/* Where a thread's accumulators lie in its tile: acc[e] for e < ne is
 * output (m0 + row, p0 + col), row and col C expressions of e */
typedef struct {
	int nt, ne;         /* threads per block, accumulators per thread */
	char row[128], col[128];
} ox_cu_tile;
/* the inner products of a tile: FFMA in f32, tensor cores (mma.sync
 * m16n8k8 TF32, m16n8k16 f16 or bf16), or int32 (int operands, unsigned
 * sums modulo 2^32) */
enum { OX_CU_TILE_FFMA, OX_CU_TILE_MMA, OX_CU_TILE_F16, OX_CU_TILE_BF16, OX_CU_TILE_INT };
/* the SMs the launch heuristics fill: an H100 SXM's and an H200's 132 */
#define OX_CU_SMS 132
/* the products of operands of dtype dt: f16, bf16 on their tensor cores,
 * f32 TF32 with --tf32, else FFMA */
int ox_cu_tile_kind(const ox_cg *cg, int dt);
/* The loop of a BM x BN tile over the reduction ks0..ks1 (variables the
 * kernel declares), in chunks of 16 through shared memory, the next
 * chunk's global loads in flight during the current chunk's products:
 * LOADA and LOADB are the caller's loads, statements setting a[0..va-1]
 * from m, k (k .. k + va - 1 of row m) and b[0..vb-1] from k, p (p .. p +
 * vb - 1 of row k); a and b start at zero. va, vb: 1 or 4 (4 only where
 * the row's length is a multiple of 4 and the loads stay in one row and
 * aligned: ox_cu_align, ox_cu_tile_ld). blocks: the grid's (its largest,
 * with run-time dims). The block's threads and acc[] as *geo says
 * (codegen/cuda/cuda_tile.c) */
void ox_cu_tile_loop(ox_buf *t, int BM, int BN, const char *M, const char *N, const char *loada, int va,
		     const char *loadb, int vb, int kind, int64_t blocks, ox_cu_tile *geo);
/* the threads of ox_cu_tile_loop's block for those arguments */
int ox_cu_tile_threads(int BM, int BN, int kind, int64_t blocks);
/* the alignment in bytes (1 .. 64) value id's device address is known to have */
int ox_cu_align(ox_graph *g, ox_id id);
/* the largest power of two up to top (itself one) that divides b */
int ox_cu_pow2(int64_t b, int top);
/* yv[0..3] stored at y[at] (a kernel's output y, value id): one ox_st4
 * where y's address is aligned, else four stores */
void ox_cu_store4(ox_buf *t, ox_graph *g, ox_id id, const char *at);
/* statements at lvl tabs: dst[0..v-1] = element e and the v - 1 after it
 * (v 1 or 4: one ox_ld4) */
void ox_cu_tile_ld(char *buf, size_t sz, int lvl, const char *dst, int v, const char *e);
/* split-K: the parts each tile's reduction of K is cut into, when `tiles`
 * are too few to fill the GPU (the parts summed by the tile's last block) */
int ox_cu_split_of(int64_t tiles, int64_t K);
int64_t ox_cu_split_len(int64_t K, int S);
/* a kernel's parameters after its output y when split in S (S > 1): the
 * workspace `float *ws` and counters `ctr`; the kernel has `tiles` tiles */
const char *ox_cu_ws_params(ox_cg *cg, int S, int64_t tiles);
/* after the loop that wrote the block's part: all blocks of a tile but
 * the last to arrive return */
void ox_cu_split_arrive(ox_buf *t, int S);
/* statements at lvl tabs (1 to 4): int64_t var = the index at src, wrapped
 * once when negative by D (C text) and checked as the C target checks it:
 * out of range sets the run's status word `st` (_ERR_INDEX) and leaves the
 * thread */
void ox_cu_index_check(ox_cg *cg, ox_buf *b, int lvl, const char *var, const char *src, const char *D);
/* the dtypes the index kernels compute in: ints, f32, f64, f16, bf16 */
int ox_cu_plain_num(int dt);
/* threads a block for a kernel of n threads: 256, or 128 or 64 where 256
 * would give fewer blocks than SMs (more SMs share a small kernel) */
int ox_cu_block_of(int64_t n);
/* 64 x 64 tiles when there are enough of them to fill the GPU, else 32 x 32 */
int ox_cu_tile_of(int64_t M, int64_t N, int64_t z);

/* A convolution's window (1 to 3 spatial axes) widened to 3 axes, leading
 * axes of extent 1: kernel, strides, dilations, begin pads, input and
 * output sizes; -1 after an error */
typedef struct {
	int nsp;
	int64_t K[3], S[3], D[3], P[3], I[3], O[3];
} ox_cu_win;
/* (w: a Conv's weights; NULL for a pool, its kernel from its attributes) */
int ox_cu_window(ox_graph *g, ox_node *n, const ox_value *x, const ox_value *w, const ox_value *y, ox_cu_win *q);
/* the loops over a 2-D window's taps inside the input, at lvl tabs: kh, kw
 * from 0 to K, ih = oh * S - P + kh * D (iw likewise from ow), the taps
 * outside IH x IW skipped; the two loops left open (ox_cu_emit_window's
 * order, which a pointwise Conv computing a depthwise one repeats) */
void ox_cu_taps(ox_buf *t, int lvl, const int64_t *K, const int64_t *S, const int64_t *P, const int64_t *D,
		const char *IH, const char *IW);
/* the implicit GEMM's load of B (k, p): the input tap of channel c of
 * the group at output position p, `PRE index POST` when inside the input
 * (statements for ox_cu_tile_loop's LOADB; the group's input is xg); a 1-D
 * or 2-D window's run-time image dims are R's parameters (R NULL: none) */
void ox_cu_window_load(char *buf, size_t sz, const ox_cu_win *q, const char *pre, const char *post, ox_cu_rt *R);

/* the dims a kernel indexes a value by: NHWC [N,C,H,W] (opt/layout.c on
 * the GPU) as its storage [N, C/b, H, W, b], a plain value's own; rank */
int ox_cu_phys(const ox_value *v, int64_t *dims);
/* ---- the kernel families: the cuda column of ir/ops.def; each answers
 * 0 (the node is its kernel), 1 (no kernel takes it: the C function runs
 * on the device) or -1 (an error) ---- */
/* codegen/cuda/cuda_tile.c: Conv (the implicit GEMM's tiles, depthwise a
 * thread per output), Gemm/MatMul (tiles, split-K, epilogues, a row norm
 * in the tail), the window kernels (depthwise Conv 1-D and 2-D, MaxPool) */
int ox_cu_emit_conv(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_gemm(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_window(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_attn.c: Attention (and its present outputs),
 * RotaryEmbedding */
int ox_cu_emit_attention(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_rope(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_rows.c: LayerNormalization and RMSNormalization,
 * Softmax and LogSoftmax, InstanceNorm and GroupNorm, the global pools,
 * Reduce* */
int ox_cu_emit_layernorm(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_softmax(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_chan_norm(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_globalpool(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_reduce(ox_cg *cg, ox_graph *g, ox_node *n);
/* rows of D normalized a warp each (LayerNorm, RMSNorm): the statements
 * of one row at indent ind, lane the warp's lane, sc/b the scale and bias
 * (b NULL: none), ld the load of an element ("OX_LD(%s)"); and the kernel
 * of node n doing it for `rows` rows (args: its launch's x, scale, bias or
 * nullptr, y[, Mean, InvStdDev]) */
void ox_cu_norm_row(ox_buf *t, const char *ind, const char *lane, const char *sc, const char *b, int rms, int64_t D,
		    double eps, const char *ld);
void ox_cu_norm_kernel(ox_cg *cg, ox_graph *g, ox_node *n, const char *kname, ox_dim rows, int64_t D, int rms,
		       double eps, int b, int ym, int yi, const char *args);
/* codegen/cuda/cuda_index.c: the copy plans of the data ops (Slice,
 * Transpose, Expand, Tile, Reshape-like; opt/plan.c), Pad, Shape,
 * Gather, GatherElements, TopK, Concat, Split; and (index) ScatterND, ScatterElements, Scatter,
 * TensorScatter, GatherND, NonMaxSuppression */
int ox_cu_emit_plan(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_pad(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_shape(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_gather(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_gather_elements(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_topk(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_concat(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_split(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_index(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_map.c: an elementwise node's map, a fused body */
int ox_cu_emit_map(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cu_emit_fusedew(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_nhwc.c: Conv, MaxPool, the global pools and Reorder on
 * NHWC values */
int ox_cu_emit_nhwc(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_nn.c: ConvTranspose, Resize, AveragePool, GridSample */
int ox_cu_emit_nn(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_signal.c: DFT, STFT */
int ox_cu_emit_signal(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_rnn.c: LSTM, GRU, RNN */
int ox_cu_emit_rnn(ox_cg *cg, ox_graph *g, ox_node *n);
/* codegen/cuda/cuda_quant.c: QuantizeLinear, DequantizeLinear and the integer
 * kernels of QDQ models (onnxcc::QConv, QMatMul, QAdd, QRescale, QPool) */
int ox_cu_emit_quant(ox_cg *cg, ox_graph *g, ox_node *n);
#endif
