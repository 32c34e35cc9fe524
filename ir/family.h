/* family.h: what an op family's shape inference decides and its evaluator
 * and emitter reuse, declared once. Each function is defined in the
 * family's ir/infer_<family>.c, which owns the checks: the emitter trusts a
 * node the inference accepted. Internal to ir/ and codegen/.
 */
#ifndef OX_FAMILY_H
#define OX_FAMILY_H
#include "ir.h"

/* ---- attn (ir/infer_attn.c) ---- */
typedef struct {
	int rank;                 /* 3 or 4 (Q, K and V agree) */
	int seq;                  /* 3-D [S, B, H*d], sequence first (the
				   * attribute ox_seq_first: opt/attention.c) */
	ox_dim b, sq, skv, past;  /* batch, q length, new kv length, past length */
	ox_dim hq, hkv, dk, dv;   /* head counts, q/k head size, v head size */
} ox_attn_geom;
int ox_attn_dims(ox_graph *g, ox_node *n, ox_attn_geom *a);
int ox_rope_dims(ox_graph *g, ox_node *n, int64_t *heads, int64_t *hd, int64_t *rot);
/* MatMulNBits' K, N, bits, block size and blocks a column (ir/infer_quant.c) */
int ox_mmnb_geo(ox_graph *g, ox_node *n, int64_t *K, int64_t *N, int64_t *bits, int64_t *bs, int64_t *nb);

/* ---- data (ir/infer_data.c) ----
 * A copy plan (ox_ir_data_plan) is a box of axes: for every index vector i
 * in it, out[ob + sum_k i_k*os_k] = in[ib + sum_k c_k(i_k)*is_k], where
 * c_k(i) = i for kind OX_PLAN_LIN and, for the Pad kinds, c_k(i) =
 * lo + f(i - a) with f folding an index into [0, m) by edge clamping,
 * reflection or wraparound. Every field is a dim (constants when the shapes
 * are), strides count elements; neg: the input stride is -is (a Slice's
 * negative step); bc: 0, or an input dim known only at run time that is
 * broadcast when it is 1 (Expand): is counts only when bc != 1. A Pad's
 * LIN axes (its constant mode, or an axis only cropped) keep a, m and lo
 * too: the m input elements from lo are output indices a .. a + m - 1. */
enum { OX_PLAN_LIN, OX_PLAN_EDGE, OX_PLAN_REFLECT, OX_PLAN_WRAP };
typedef struct {
	ox_dim n, is, os;
	int neg, kind;
	ox_dim bc;
	ox_dim a, m, lo;
} ox_plan_axis;
typedef struct {
	int nax;
	ox_plan_axis ax[2 * OX_MAX_RANK];
	ox_dim ib, ob;
} ox_plan;
/* 0 with the plan; 1 when the op's parameters are read from data when the
 * program runs (no plan: the emitter computes the indices then); -1 after
 * an error */
int ox_ir_data_plan(ox_graph *g, const ox_node *n, ox_plan *p);
/* Slice against input shape in: per axis the first index, the step and the
 * length. Returns 0; 1 when some axes depend on data read at run time (rt[k]
 * set for those, whose start/step/len are then meaningless; rt may be NULL);
 * -1 after an error. Also opt/plan.c's views. */
int ox_ir_data_slice(ox_graph *g, const ox_node *n, const ox_shape *in,
		     ox_dim *start, int64_t *step, ox_dim *len, char *rt);
/* Split: the axis and the sizes; 1 when the sizes are read from data at run
 * time (sizes[k] are then the outputs' dims: data symbols) */
int ox_ir_data_split(ox_graph *g, const ox_node *n, int *axis, ox_dim *sizes);
int ox_ir_data_perm(ox_graph *g, const ox_node *n, int rank, int *perm);
/* Pad: pads[0..rank) the begin pads, pads[rank..2*rank) the end pads of
 * every axis (constants of any sign, or dims); 1 when some are read from
 * data at run time (pads or axes) */
int ox_ir_data_pads(ox_graph *g, const ox_node *n, int rank, ox_sv *pads);
/* Dropout: may it be in training mode with a ratio other than 0 when it
 * runs (training_mode or ratio read from data)? Then its code checks that
 * and fails the run (opt/elide.c keeps it). */
int ox_ir_data_dropout_checks(ox_graph *g, const ox_node *n);

/* ---- index (ir/infer_index.c) ---- */
int ox_index_axis(ox_graph *g, ox_node *n, int *axis);
int64_t ox_index_count(const ox_tensor *t, int64_t limit); /* nonzero elements among the first limit (-1: all) */

/* ---- nn (ir/infer_nn.c), also used by the quantized convolutions and matmuls,
 * the norm family's pools and unpooling. autopad: 0 NOTSET, 1 SAME_UPPER,
 * 2 SAME_LOWER, 3 VALID. ---- */
int ox_ir_nn_window(ox_graph *g, const ox_node *n, int nsp, const ox_shape *w, int64_t *k,
		    int64_t *s, int64_t *d, int64_t *pads, int *autopad);
void ox_ir_nn_same_pads(int autopad, int nsp, const int64_t *in, const int64_t *out, const int64_t *k,
			const int64_t *s, const int64_t *d, int64_t *pads);
int ox_ir_nn_convt(ox_graph *g, const ox_node *n, int nsp, const int64_t *in, const int64_t *k,
		   const int64_t *s, const int64_t *d, int64_t *pads, int autopad, int64_t *out);
int ox_ir_nn_resize(ox_graph *g, const ox_node *n, const ox_shape *x, ox_dim *osize, double *scale,
		    double *roi);
/* A Resize whose output sizes, scales or taps are computed when the
 * program runs (an input dim known only then, or scales, sizes or a
 * tf_crop_and_resize roi that are not constants): what the node gives,
 * decoded once for infer_resize and codegen/c/emit_nn.c. */
typedef struct {
	int naxes, axes[OX_MAX_RANK];
	int sizes;    /* the sizes input gives the output (else the scales) */
	int in;       /* the index of that input */
	int known;    /* its values are constants, in v[] */
	double v[OX_MAX_RANK];
	int policy;   /* keep_aspect_ratio_policy: 0 stretch, 1 not_larger, 2 not_smaller */
	int roi;      /* tf_crop_and_resize whose roi is read at run time: its input
			 index; else -1 and r[] holds the roi, full rank [starts, ends] */
	double r[2 * OX_MAX_RANK];
} ox_resize_rt;
/* is the Resize computed from constants alone (ox_ir_nn_resize), else ox_ir_nn_resize_rt */
int ox_ir_nn_resize_static(ox_graph *g, const ox_node *n);
int ox_ir_nn_resize_rt(ox_graph *g, const ox_node *n, int rank, ox_resize_rt *rz);
/* the blocked kernel computes it (f32 rank 4, N and C kept, not tf_crop_and_resize) */
int ox_ir_nn_resize_blockable(ox_graph *g, const ox_node *n);
int infer_pool(ox_graph *g, ox_node *n); /* also LpPool's: its window is AveragePool's */
int ox_ir_conv_shape(ox_graph *g, const ox_node *n, const ox_value *x, const ox_value *w, ox_shape *o);
int ox_ir_matmul_shape(ox_graph *g, const ox_node *n, const ox_value *a, const ox_value *b, ox_shape *o);

/* ---- norm (ir/infer_norm.c) ---- */
int ox_ir_norm_mvn_axes(const ox_node *n, const int64_t **a); /* count, *a: the axes */
/* 0: constant scales; 1: read when the program runs; -1: error */
int ox_ir_norm_upsample_scales(ox_graph *g, const ox_node *n, int rank, double *scale);
int ox_ir_norm_unpool(ox_graph *g, const ox_node *n, int nsp, const ox_dim *in, int64_t *k, int64_t *s,
		      int64_t *pads, ox_dim *out);
int ox_ir_norm_col2im(ox_graph *g, const ox_node *n, int nsp, int64_t *img, int64_t *blk, int64_t *dil,
		      int64_t *pads, int64_t *str, int64_t *ncol); /* constant image and block shapes */
int ox_ir_norm_col2im_attrs(ox_graph *g, const ox_node *n, int nsp, int64_t *dil, int64_t *pads, int64_t *str);

/* ---- optim (ir/infer_optim.c) ---- */
int ox_ir_optim_groups(const ox_node *n);

/* ---- quant (ir/infer_quant.c): a scale's layout ---- */
enum { OX_QL_TENSOR, OX_QL_AXIS, OX_QL_BLOCK };
int ox_ir_quant_layout(ox_graph *g, const ox_node *n, int *axis, int64_t *block);

/* ---- reduce (ir/infer_reduce.c) ---- */
int ox_reduce_axes(ox_graph *g, ox_node *n, int *mask);

/* ---- rnn (ir/infer_rnn.c): direction, hidden size, activation codes
 * (the order of templates/rnn.c's ox_rnn_act switch) with alpha / beta ---- */
int ox_ir_rnn_decode(ox_graph *g, const ox_node *n, int *ndir, int *reverse, ox_dim *hidden, int *act,
		     float *alpha, float *beta);

/* ---- signal (ir/infer_signal.c) ---- */
int ox_einsum_parse(ox_graph *g, const ox_node *n, int (*lab)[OX_MAX_RANK], int *olab, int *orank,
                    ox_dim *size);
/* the DFT's axis (-1: read when the program runs) and length: a dim, or
 * one of these when the program computes it (from dft_length, or the axis
 * it reads) */
#define OX_DIM_DATA_LEN INT64_MIN
#define OX_DIM_AXIS_LEN (INT64_MIN + 1)
int ox_dft_params(ox_graph *g, const ox_node *n, int *axis, ox_dim *len, int *irfft);
int ox_signal_scalar(ox_graph *g, const ox_node *n, int k, const char *what, int64_t *v);

/* ---- ml (ir/infer_ml.c) ----
 * One flat layout for both tree-ensemble forms. Internal node i tests
 * X[feat[i]] with mode[i]; next[2*i] / next[2*i+1] is where a true / false
 * outcome goes: >= 0 another internal node, < 0 leaf -(v+1), whose votes
 * are entries lstart[v] .. lstart[v+1] of (ltarget, lweight). A tree whose
 * root is a leaf has root < 0 too. */
enum { OX_ML_LEQ, OX_ML_LT, OX_ML_GTE, OX_ML_GT, OX_ML_EQ, OX_ML_NEQ, OX_ML_MEMBER };
enum { OX_ML_AVERAGE, OX_ML_SUM, OX_ML_MIN, OX_ML_MAX };
enum { OX_ML_NONE, OX_ML_SOFTMAX, OX_ML_LOGISTIC, OX_ML_SOFTMAX_ZERO, OX_ML_PROBIT };
typedef struct {
	int nnodes, nleaves, nentries, ntrees, ntargets, nmembers;
	int64_t *feat;     /* nnodes */
	int *mode;         /* nnodes */
	double *split;     /* nnodes */
	int *missing_true; /* nnodes */
	int64_t *next;     /* 2 * nnodes */
	int64_t *mstart;   /* nnodes + 1: membership set of node i (mode MEMBER) */
	double *members;   /* nmembers */
	int64_t *lstart;   /* nleaves + 1 */
	int64_t *ltarget;  /* nentries */
	double *lweight;   /* nentries */
	int64_t *roots;    /* ntrees */
	double *base;      /* ntargets, or NULL */
	int agg, post;
} ox_ml_trees;
int ox_ir_ml_tfidf(ox_graph *g, const ox_node *n, int64_t **pool, int64_t **start, int64_t **len,
		   int64_t **idx, int *nout);
int ox_ir_ml_labels(ox_graph *g, const ox_node *n, double **keys, double **vals, int *kdt, int *vdt, double *dflt);
void ox_ir_ml_label_strs(ox_graph *g, const ox_node *n, const char ***ks, const char ***vs, const char **ds);
int ox_ir_ml_trees(ox_graph *g, const ox_node *n, void *out); /* out: an ox_ml_trees */

/* ---- strings (ir/infer_str.c) ----
 * RegexFullMatch's pattern compiled to a Thompson-NFA program; the opcode
 * numbers are also those of templates/regex.c, which runs it
 * (tests/unit/test_regex.c checks that they agree). */
enum { OX_RE_CHAR, OX_RE_ANY, OX_RE_ANYNL, OX_RE_CLASS, OX_RE_SPLIT, OX_RE_JMP,
       OX_RE_BOT, OX_RE_EOT, OX_RE_WORDB, OX_RE_NWORDB, OX_RE_MATCH };
typedef struct { int op; int32_t x, y; } ox_re_inst;
typedef struct {
	ox_re_inst *code; int n;  /* CHAR x: code point; CLASS x, y: pairs x..x+y-1
				     of ranges; SPLIT x, y / JMP x: absolute targets */
	int32_t *ranges; int nranges; /* (lo, hi) pairs, inclusive, sorted */
} ox_re_prog;
int ox_ir_regex(ox_graph *g, const ox_node *n, ox_re_prog *p);
int64_t ox_str_capacity(const ox_graph *g);
int64_t ox_str_split_bound(ox_graph *g, const ox_node *n);
#endif
