/* opt.h: the optimization passes. Each is one file opt/NAME.c with one
 * entry int ox_opt_NAME(ox_graph *) returning 0 or -1 (after printing an
 * error). Their order is the table in opt/pipeline.c. */
#ifndef OX_OPT_H
#define OX_OPT_H
#include "../ir/ir.h"

typedef struct {
	const char *name;
	int (*run)(ox_graph *g);
	int skippable; /* an optimization --skip may leave out */
} ox_pass;

int ox_opt_fold(ox_graph *g);
int ox_opt_symshape(ox_graph *g);
int ox_opt_outline(ox_graph *g);
int ox_opt_elide(ox_graph *g);
int ox_opt_cse(ox_graph *g);
int ox_opt_dce(ox_graph *g);
int ox_opt_bounds(ox_graph *g);
int ox_opt_attention(ox_graph *g);
int ox_opt_norm(ox_graph *g);
int ox_opt_transpose(ox_graph *g);
int ox_opt_rows(ox_graph *g);
int ox_opt_qdq(ox_graph *g);
int ox_opt_affine(ox_graph *g);
int ox_opt_layout(ox_graph *g);
int ox_opt_epilogue(ox_graph *g);
int ox_opt_siblings(ox_graph *g);
int ox_opt_gemmnorm(ox_graph *g);
int ox_opt_dwpw(ox_graph *g);
int ox_opt_ewfuse(ox_graph *g);
int ox_opt_winograd(ox_graph *g);
int ox_opt_pack(ox_graph *g);
int ox_opt_plan(ox_graph *g);

/* a node whose inputs are constants made constant (its outputs set, the
 * node dead) by the op's eval (opt/fold.c): 0, or -1 when it cannot be */
int ox_opt_fold_node(ox_graph *g, ox_node *n);

/* the passes after `after` (the body of a control node, opt/outline.c) */
int ox_opt_run_from(ox_graph *g, int check, const char *after);

/* A control node compiled as C control flow (opt/outline.c): its own
 * inputs (before the bodies' captured values) and its scratch: the
 * bodies' arena at 0, then buffers whose offsets go to off[0..n) (a
 * Loop: each carried value's current and next; a Scan: each state's
 * current and next, a step's slice of each scan input, of each scan
 * output), off[n] the total bytes. Returns n; off holds 2 * n->nin +
 * the body's outputs + 1 entries at least. */
int ox_opt_ctrl_layout(ox_graph *g, const ox_node *n, int64_t *off);
int ox_ctrl_nin0(const ox_node *n);

/* ---- the analyses the passes and codegen share: opt/analysis.c ----
 * (what a pass decides and codegen must agree with, computed in one place) */

/* the top of d: d itself when constant */
int64_t ox_opt_top(const ox_graph *g, ox_dim d);
/* Do the fast kernels take shape s: every dim a constant, or a run-time
 * dim with a top (opt/bounds.c) on an axis whose bit is set in `axes`?
 * The kernels' structure (tiles, kernels, unrolling) comes from the
 * constant dims; the run-time ones are outer loop counts and strides, and
 * every size the cost model weighs is taken at its top (ox_dim_hi): a
 * program is tuned for the top of its range (docs/dynamic.md). */
int ox_opt_rt_ok(const ox_graph *g, const ox_shape *s, unsigned axes);
/* the axes of [N, C, H, W] that the blocked kernels take run-time: N, H, W */
#define OX_OPT_NHW (1u | 4u | 8u)
/* Does the GPU take window node n's (a Conv's, a pool's) run-time dims,
 * a batch and an image size, as its kernel's parameters? Explicit pads,
 * constant channels, every run-time dim with a top (codegen/cuda/cuda_tile.c;
 * opt/epilogue.c fuses into such a Conv) */
int ox_opt_rt_window(const ox_graph *g, const ox_node *n);
/* Is dt a type the fusions compute in f32? f32 everywhere; f16 and bf16
 * too on the GPU (the CUDA kernels load and store them and compute in
 * f32, codegen/cuda/cuda_map.c), outside control-flow bodies (plain C) */
int ox_opt_fuse_type(const ox_graph *g, int dt);
/* is t a live Transpose of a rank-r input by the permutation p? */
int ox_opt_is_perm(ox_graph *g, const ox_node *t, const int *p, int r);
/* a Conv the channel-blocked kernels compute (opt/layout.c blocks it): 2-D
 * f32 with constant weights, group 1 or depthwise (*depthwise set); its
 * batch and image size may be run-time dims (not with SAME pads), its
 * channels not */
int ox_opt_conv_blockable(ox_graph *g, const ox_node *n, int *depthwise);
/* is value v f32; of rank 4 (v < 0, an absent input: no) */
int ox_opt_is_f32(ox_graph *g, ox_id v);
int ox_opt_rank4(ox_graph *g, ox_id v);
/* do node n's pads depend on a run-time image size: SAME pads, and its
 * input's (shape x) H or W a run-time dim? */
int ox_opt_rt_pads(ox_graph *g, const ox_node *n, const ox_shape *x);
/* an elementwise op opt/ewfuse.c makes an onnxcc::Fused node of (the ones
 * codegen renders on vectors: f32, and f16/bf16 on the GPU) */
int ox_opt_vector_op(ox_graph *g, const ox_node *n);
/* Is input k of n a Pow's exponent the vector renderer has a form for? */
int ox_opt_pow_exponent(ox_graph *g, const ox_node *n, int k);
/* a QuantizeLinear or DequantizeLinear between f32 and 8 bits, per
 * tensor, that a fused body computes (the C target; opt/ewfuse.c) */
int ox_opt_fused_qdq(ox_graph *g, const ox_node *n);
/* Is input k of n a constant of its fused body (Pow's exponent, a fused
 * QuantizeLinear's or DequantizeLinear's scale and zero point)? */
int ox_opt_body_const(ox_graph *g, const ox_node *n, int k);

/* The geometry and tile of a blocked Conv (ox_opt_conv_geo chooses the
 * tile, opt/pack.c packs for it; codegen emits for the same struct). */
typedef struct {
	int depthwise;
	int inblocked;               /* the input is blocked too (else plain NCHW) */
	int b;                       /* vector width: channels per block */
	int64_t N, C, M, IH, IW, OH, OW, KH, KW, SH, SW, DH, DW;
	int64_t pt, pl, pb, pr;      /* pads: top, left, bottom, right */
	int padded;                  /* has pads */
	int copy;                    /* the input is first copied into a zero-bordered
					scratch (group 1; depthwise clips at borders) */
	int64_t IHp, IWp;            /* the padded size */
	int flat;                    /* 1x1, stride 1, no pads: positions run over the whole image */
	int rows, ocb;               /* the tile: positions x output-channel vectors */
	int span;                    /* output rows a tile covers (rows = span * OW when > 1) */
	int64_t kb;                  /* > 0: a group's weights pass a quarter of L2, so a task
					is a group whose reduction runs in chunks of kb input
					blocks over all rows, the sums kept in the output
					between chunks (no epilogue operand may share it) */
	/* Winograd F(wm x wm, 3 x 3) (opt/winograd.c, codegen/c/emit_wino.c):
	 * the output in tiles of wm x wm, a block of wnt tiles at a time;
	 * rows x ocb is then the micro-kernel's tile of the (wm+2)^2 GEMMs
	 * [tiles x C] x [C x M] (rows of tiles x vectors of output channels) */
	int wm;                      /* 2 or 4; 0: the direct algorithm */
	int64_t th, tw;              /* tiles per image: rows, columns (the last ones partial) */
	int64_t wnt;                 /* tiles per block, a multiple of rows (or all tiles) */
	int wslots;                  /* task slots: a slot's task takes every wslots-th block,
					or with one block (the tiles' transforms tasks of their
					own) every wslots-th group of output vectors */
	int64_t wvs, wps;            /* floats between the (wm+2)^2 planes of a slot's
					transformed input [wnt][C rounded up] and of one
					group's products [wnt][ocb b]: an odd number of
					cache lines, so the planes do not share cache sets */
	int64_t wslot;               /* scratch floats per slot: (wm+2)^2 (wvs + wps), with one
					block (wm+2)^2 wps after the shared (wm+2)^2 wvs */
	int64_t wscratch;            /* scratch floats in all */
	/* Run-time sizes: N, IH, IW, OH, OW above are then their tops (what
	 * the tile and the cost are for), the dims below what the code
	 * computes with (the same values when constant). With a run-time
	 * width span is 1. */
	int rt;                      /* one of these is a run-time dim */
	ox_dim dN, dIH, dIW, dOH, dOW;
} ox_convgeo;
int ox_opt_conv_geo(ox_graph *g, const ox_node *n, ox_convgeo *cg); /* 0, or -1 if not blocked */
/* The same for the algorithm wm (0 direct, 2 or 4 Winograd) whatever the
 * weights' layout says: what opt/winograd.c compares before choosing */
int ox_opt_conv_geo_as(ox_graph *g, const ox_node *n, int wm, ox_convgeo *cg);
/* Modeled cycles of a blocked Conv's kernels with geometry cg (the tiles'
 * cost model, calibrated per target; docs/optimizer.md) */
double ox_opt_conv_cycles(const ox_graph *g, const ox_convgeo *cg);

/* Winograd F(m x m, 3 x 3) (opt/winograd.c, codegen/c/emit_wino.c): T = m + 2
 * points, the transforms as T x T (bt: B^T), T x 3 (g: G) and m x T (at:
 * A^T) row-major matrices of the correlation y = A^T [(G g G^T) . (B^T d B)] A */
typedef struct {
	int m, T;
	const double *bt, *g, *at;
} ox_winomats;
const ox_winomats *ox_opt_wino_mats(int m); /* NULL unless m is 2 or 4 */
/* a Conv Winograd can compute: blocked f32 3x3, stride 1, dilation 1,
 * group 1, blocked input (any pads) */
int ox_opt_wino_eligible(ox_graph *g, const ox_node *n);

/* A QConv of a QDQ model (opt/qdq.c) that the packed integer convolution
 * computes (templates/qconv.c; codegen/c/emit_quant.c): on the CPU, 1-D
 * or 2-D, constant 8-bit weights, groups of at least 4 input channels (or
 * one group), or depthwise (below). Its weights are OX_L_QCONVW (opt/pack.c). The
 * kernel first copies each image's group of input channels into scratch
 * as [Cg/4][SH SW][R][W][4] bytes: four channels interleaved per pixel,
 * the stride's phases apart (phase (a, b) holds the padded input's rows
 * a, a + SH, ... and columns b, b + SW, ...), pads as the zero point, so
 * that every tap of OX_QG_NR output pixels is OX_QG_NR * 4 contiguous
 * bytes; output pixel (oh, ow) is walked as oh W + ow (W - OW columns of
 * each row are computed and dropped). */
#define OX_QG_NR 48 /* output pixels per tile: templates/qint.c's OX_QG_NR */
typedef struct {
	int64_t N, C, M, G, Cg, Mg, C4, MB; /* C4: Cg / 4 rounded up; MB: blocks of 8 of Mg */
	int64_t IH, IW, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW;
	int64_t R, W;         /* a phase's rows and columns */
	int64_t P;            /* pixels walked per image: OH W */
	int64_t tiles;        /* tiles of OX_QG_NR per image and group */
	int64_t gbytes;       /* scratch bytes of one image's group */
	int64_t scratch;      /* scratch bytes in all: N G gbytes and the last tile's overrun */
	int ones;             /* a weight zero point is not 0: the ones block (OX_L_QCONVW) */
	/* Depthwise (one input channel per group, dw set): weights OX_L_QDWW;
	 * tasks are slots of scratch, each taking every slots-th output
	 * channel of every image: its input channel copied as int16 (x - zx,
	 * pads 0) into a padded plane of R rows of W (the columns the output's
	 * vectors of 16 read) and 64 values of overrun, then each output
	 * row's sums over the taps (R, W: that plane's, not phases) */
	int dw;
	int64_t slots, slot; /* task slots, scratch bytes of each */
} ox_qconvgeo;
int ox_opt_qconv_geo(ox_graph *g, const ox_node *n, ox_qconvgeo *q); /* 0, or -1 if not for the kernel */

/* An LSTM whose weights opt/pack.c transposes (OX_L_RNNT) for
 * templates/rnn_lstm_t.c: on the CPU, f32, constant W and R, the default
 * activations, no clip, peepholes, input_forget or sequence_lens, hidden
 * size a multiple of the target's vector */
int ox_opt_lstm_t(ox_graph *g, const ox_node *n); /* 1 when it is one */

/* A MatMulInteger the packed integer GEMM computes (templates/qconv.c's
 * ox_qg_mm): on the CPU, B a constant 8-bit [K, N] (OX_L_QGEMMB once
 * opt/pack.c ran) with a constant zero point (one, or one per column), A's
 * zero point one value; A of any shape (its rows: all dims but the last,
 * run-time ones too) */
typedef struct {
	int64_t K, N;
} ox_qmmgeo;
int ox_opt_qmm_geo(ox_graph *g, const ox_node *n, ox_qmmgeo *q); /* 0, or -1 if not for the kernel */

/* A Gemm or MatMul the packed GEMM computes: f32, B a rank-2 constant
 * (packed, OX_L_GEMMB, once opt/pack.c ran) or a runtime tensor read row
 * by row; Gemm's C absent or a constant per column (or scalar). */
typedef struct {
	int64_t batch;        /* products (MatMul batch dims; 1 when B is a constant) */
	int64_t M, N, K;      /* one product: [M,K] x [K,N] */
	int transA;           /* A is stored [K,M] (Gemm transA) */
	int constb;           /* B is constant, packed for the tile */
	int rows, ocb;        /* the tile: rows of A x vectors of columns */
	int b;                /* vector width */
	int64_t kchunk;       /* > 0: a constant B group's panel passes a quarter of
				 L2, so a task is a group over all rows, the reduction
				 in chunks of kchunk rows of B, the sums kept in the
				 output between chunks (no epilogue operand may share it) */
	/* run-time sizes: batch, M and K above are then their tops, the dims
	 * what the code computes with; N is a constant (it shapes the
	 * micro-kernel: output row stride, the last vector's lanes), but on
	 * the GPU for a MatMul of two values, whose kernel reads it at run
	 * time: then N is its top and dN the dim (rt is set; dN is N else) */
	int rt;
	ox_dim dbatch, dM, dK, dN;
} ox_gemmgeo;
int ox_opt_gemm_geo(ox_graph *g, const ox_node *n, ox_gemmgeo *q); /* 0, or -1 if not for the GEMM */
/* A MatMulNBits (f32) of OX_MMNB_PANEL_ROWS rows or more (at most: the
 * rows may be a run-time dim) on the C target: its weights dequantized
 * into panels of kchunk rows in scratch, each read by the GEMM's tiles
 * (codegen/c/emit_quant.c). Fills q (K, N, M, the tile, kchunk) and the
 * task slots, each with a panel; returns the scratch bytes, 0 if not for
 * the panels (a decode step's single row: templates/mmnb.c's kernels) */
#define OX_MMNB_PANEL_ROWS 16
int64_t ox_opt_mmnb_tile(ox_graph *g, ox_node *n, ox_gemmgeo *q, int *slots);

/* An Attention node the blocked kernel computes (codegen/c/emit_attn.c): f32,
 * no past K/V, no extra outputs, a float mask over all keys;
 * query rows in blocks of `rows`; `slots` task slots of scratch, each
 * slot_floats: K^T of a head and a block of scores */
typedef struct {
	int rank, seq; /* (seq: 3-D sequence first, ox_seq_first; the GPU's kernels only) */
	int64_t B, Sq, Skv, Hq, Hkv, Dk, Dv;
	double scale;
	int causal, rows, slots;
	int64_t slot_floats;
	/* run-time batch and sequence lengths: B, Sq, Skv above are their
	 * tops (the scratch is sized for them), the dims below what the code
	 * computes with; a slot's K^T and scores then have rows of ktw floats
	 * (Skv's top rounded up to a group of the micro-kernel's columns) */
	int rt;
	ox_dim dB, dSq, dSkv;
	int64_t ktw;
	/* ox_opt_attn_geo_ext only (the CUDA kernels): the past keys' length
	 * (0 without past K/V; Skv and dSkv count them: past + new), the new
	 * keys', present_key/value asked for; both: softcap (0: none) */
	ox_dim dP, dSnew;
	int present;
	double softcap;
} ox_attngeo;
int ox_opt_attn_geo(ox_graph *g, const ox_node *n, ox_attngeo *q); /* 0, or -1 if not */
/* the same, also with past K/V (then with both present outputs), present
 * outputs and the padding lengths (nonpad_kv_seqlen) */
int ox_opt_attn_geo_ext(ox_graph *g, const ox_node *n, ox_attngeo *q);
/* NonMaxSuppression's CUDA kernels' scratch (codegen/cuda/cuda_index.c)
 * for P (batch, class) pairs of N boxes, at most K kept a pair: its bytes;
 * the offsets of the kept boxes (after the sort keys), their counts and
 * the rows' offsets in *kofs, *cofs, *oofs */
int64_t ox_opt_nms_gpu_scratch(int64_t P, int64_t N, int64_t K, int64_t *kofs, int64_t *cofs, int64_t *oofs);

/* ---- the memory plan (opt/plan.c), read by codegen and the CLI ---- */
/* Is output k of node n a view of input 0's bytes (Reshape-like ops,
 * contiguous Slice/Split/Gather pieces, a Transpose that moves only size-1
 * dims, a Reorder of one-pixel images whose plain bytes are a prefix of
 * the blocked ones)? Sets *off to its byte offset in input 0. A pure function of the
 * graph, so the planner and the emitter always agree. */
int ox_plan_view(ox_graph *g, const ox_node *n, int k, int64_t *off);
/* every output of n is a view */
int ox_plan_is_view_node(ox_graph *g, const ox_node *n);
/* n needs no code: a view node, or a Concat whose inputs the plan stored
 * inside its output (read from the arena offsets: call after the plan) */
int ox_plan_is_noop(ox_graph *g, const ox_node *n);
/* The value whose storage v is (v itself unless v is a view, else the end
 * of the chain of views) and the byte offset of v in it. Needs the
 * producers filled (ox_ir_fill_uses). */
ox_id ox_plan_storage(ox_graph *g, ox_id v, int64_t *off);

typedef struct {
	const ox_graph *g;         /* the graph these describe */
	int64_t onnx_order_arena;  /* the same planner on the imported node order */
	int64_t onnx_order_lb;
	int64_t no_reuse;          /* every node output in its own buffer */
	int64_t slot_unions;       /* onnx2c-style unions of same-slot tensors */
	const char *schedule;      /* name of the chosen schedule */
	const char *strategy;      /* name of the placement that won */
	int nviews, ninplace;      /* values stored in another value's bytes */
	int nconcat;               /* Concats whose inputs are stored in their output */
	int peak_step;             /* node position where the lower bound is reached */
	int *storage;              /* per value: storage class (its root value), -1 outside the arena */
	ox_id *peak_live;          /* class roots live at peak_step */
	int npeak_live;
} ox_plan_stats;
/* The last plan's statistics if it was for g, else NULL. */
const ox_plan_stats *ox_plan_get_stats(const ox_graph *g);

/* Run the pipeline; the verifier runs after every pass when check != 0.
 * Stops after the pass named stop_after (NULL: run all). */
int ox_opt_run(ox_graph *g, int check, const char *stop_after);
/* Buckets that a range of run-time symbol sym implies (opt/analysis.c):
 * after fold, an If whose condition is Equal of a dim and a constant (or
 * two dims), through Cast, Not and shape ops, that the range leaves
 * unknown but every single value of it decides, splits the range where
 * the condition changes (an exported model that squeezes a length's axis
 * when it is 1 takes branches of different ranks). The buckets' tops,
 * ascending, the last hi, into tops (at most max); their count, 1 when
 * nothing splits (or the range spans more than 4096 values). */
int ox_opt_if_splits(ox_graph *g, const char *sym, int64_t lo, int64_t hi, int64_t *tops, int max);
/* leave the skippable pass `name` out of every later run: 0, or -1 when
 * no such pass may be skipped */
int ox_opt_skip(const char *name);
/* the names of the passes that may be skipped, ", "-separated, into buf */
void ox_opt_skippable(char *buf, size_t sz);
extern const ox_pass ox_pipeline[];
#endif
