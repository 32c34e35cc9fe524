/* ir.h: onnxcc's tensor IR.
 *
 * A graph owns two growable arrays, values and nodes, and refers to them by
 * 32-bit indices (ox_id); everything else (names, attributes, constant data,
 * subgraphs) is bump-allocated from the graph's arena, so one ox_ir_free()
 * releases a whole model. Invariants (checked by ox_ir_check, ir/check.c):
 * every node input/output is a valid value id or -1 (an omitted optional
 * input); every value has at most one producer; nodes are kept in a
 * topological order; a value with data is a constant and has no producer.
 * Nothing here knows about protobuf or about C text.
 */
#ifndef OX_IR_H
#define OX_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "target.h"

#define OX_MAX_RANK 12
typedef int32_t ox_id;

/* ---- dtypes: numbered as ONNX TensorProto.DataType ---- */
enum {
	OX_UNDEF = 0, OX_F32 = 1, OX_U8 = 2, OX_I8 = 3, OX_U16 = 4, OX_I16 = 5,
	OX_I32 = 6, OX_I64 = 7, OX_STRING = 8, OX_BOOL = 9, OX_F16 = 10,
	OX_F64 = 11, OX_U32 = 12, OX_U64 = 13, OX_C64 = 14, OX_C128 = 15,
	OX_BF16 = 16, OX_F8E4M3FN = 17, OX_F8E4M3FNUZ = 18, OX_F8E5M2 = 19,
	OX_F8E5M2FNUZ = 20, OX_U4 = 21, OX_I4 = 22, OX_F4E2M1 = 23,
	OX_F8E8M0 = 24, OX_U2 = 25, OX_I2 = 26, OX_NDTYPE
};
/* Sub-byte dtypes (u4, i4, f4e2m1, u2, i2) are stored unpacked, one element
 * per byte: i4/i2 as sign-extended int8, u4/u2 as uint8, f4e2m1 as its 4-bit
 * code; ox_dtype_size() is 1 for them, and ONNX's packed form exists only at
 * the file boundary (frontend/import.c, runtime_min/ox_main.c). */
const char *ox_dtype_name(int dt);     /* "f32", "i64", ... ("?" if unknown) */
int ox_dtype_from_name(const char *s); /* inverse of ox_dtype_name, -1 if none */
size_t ox_dtype_size(int dt);          /* bytes per element; 0 if sub-byte/unsupported */
int ox_dtype_is_float(int dt);         /* f16 bf16 f32 f64 (and f8 kinds) */
int ox_dtype_is_int(int dt);           /* signed or unsigned integer, not bool */
int ox_dtype_is_signed(int dt);

/* ---- dims: constant (>= 0) or symbolic (< 0, an expression id) ----
 * A symbolic dim d < 0 names g->dexprs[-d - 1]. Expressions are hash-consed
 * so equal expressions have equal ids; ox_dim_* fold constants. */
typedef int64_t ox_dim;
enum { OX_DE_SYM, OX_DE_ADD, OX_DE_SUB, OX_DE_MUL, OX_DE_DIV, OX_DE_CEILDIV, OX_DE_MOD, OX_DE_MAX, OX_DE_MIN };
/* A symbol without a value can be a run-time symbol (docs/dynamic.md):
 * the generated code learns its value when it runs, from
 *   OX_RT_INPUT  a graph input's dim, within the range lo..hi given by
 *                --shape/--dim LO..HI (the run checks it)
 *   OX_RT_DATA   the node that produces the value named `def`, which
 *                computes it from data (a Reshape's target, TopK's k, a
 *                branch taken): hi is the bound the compiler derived or was
 *                given (-1 while none is known; the bounds pass then
 *                refuses it). By name, not id: value names are unique in a
 *                model, and stay so when a loop body moves into a graph of
 *                its own (ox_dim_defined_by asks) */
enum { OX_RT_NONE, OX_RT_INPUT, OX_RT_DATA };
typedef struct {
	int op;          /* OX_DE_* */
	ox_dim a, b;     /* operands (unused for SYM) */
	const char *sym; /* symbol name for OX_DE_SYM */
	int64_t value;   /* bound value for a SYM, -1 if unbound */
	int rt;          /* OX_RT_*: a SYM known only at run time */
	int64_t lo, hi;  /* its range (hi -1: unbounded) */
	const char *def; /* OX_RT_DATA: the name of the value whose producer computes it */
} ox_dexpr;

typedef struct {
	int rank;
	ox_dim d[OX_MAX_RANK];
} ox_shape;

/* ---- attributes ---- */
enum { OX_AT_UNDEF, OX_AT_FLOAT, OX_AT_INT, OX_AT_STRING, OX_AT_TENSOR, OX_AT_GRAPH,
       OX_AT_FLOATS, OX_AT_INTS, OX_AT_STRINGS, OX_AT_TENSORS, OX_AT_GRAPHS,
       OX_AT_SPARSE, OX_AT_TYPE };
typedef struct ox_graph ox_graph;
typedef struct ox_tensor {
	int dtype;
	ox_shape shape; /* always constant dims */
	void *data;     /* nbytes of little-endian element data, 64-byte aligned */
	size_t nbytes;
	const char **strs; /* string tensors only: numel strings */
} ox_tensor;
typedef struct {
	const char *name;
	int type;       /* OX_AT_* */
	int64_t i;
	float f;
	const char *s;  size_t slen;
	int n;          /* count for the plural kinds */
	int64_t *ints; float *floats; const char **strs;
	ox_tensor *t;   /* TENSOR: 1, TENSORS: n */
	ox_graph **g;   /* GRAPH: 1, GRAPHS: n */
} ox_attr;

/* ---- layouts: how a value's elements lie in memory ----
 * Every value is OX_L_PLAIN (row-major over its logical shape) until the
 * layout pass (opt/layout.c) and the packing pass (opt/pack.c) choose
 * otherwise; its logical shape never changes, so inference and folding
 * know nothing of layouts. lp[] are the layout's parameters.
 *   OX_L_BLOCKED  a rank-4 [N,C,H,W] value stored [N][C/b][H][W][b],
 *                 b = lp[0] (the vector width), C rounded up to b: lanes
 *                 past C in the last block hold values no consumer reads.
 *                 On the GPU b = C: one block, [N][1][H][W][C], NHWC;
 *                 or C rounded up to 4 for the Convs of a value whose
 *                 channels do not come in fours, the lanes past C zero
 *                 (opt/layout.c's gpu_pad)
 *   OX_L_PADDED   a vector [N] (a bias) stored with N rounded up to lp[0],
 *                 zeros past N
 *   OX_L_CONVW    Conv weights [M,C,KH,KW] packed for the blocked
 *                 micro-kernel: output channels in groups of lp[1]
 *                 vectors of lp[0] lanes (M rounded up to lp[0]), each
 *                 group [C/b][KH][KW][b][group width] when the input is
 *                 blocked by b = lp[2], [C][KH][KW][group width] when it
 *                 is plain (lp[2] = 0); the last channel block holds only
 *                 C mod b rows. On the GPU lp = {Mp, 1, C}: [KH][KW][C][Mp],
 *                 the [K x M] matrix of an NHWC implicit GEMM, its rows
 *                 M rounded up to Mp (a multiple of 4) with zeros
 *   OX_L_DWW      depthwise weights [C,1,KH,KW] as [C/b][KH][KW][b],
 *                 b = lp[0], C rounded up (on the GPU b = C: [KH][KW][C])
 *   OX_L_GEMMB    a Gemm/MatMul B [K,N] as [N/(lp[0] lp[1])][K][lp[0] lp[1]],
 *                 N rounded up to lp[0]
 *   OX_L_WINOW    Conv weights [M,C,3,3] transformed for Winograd
 *                 F(m x m, 3 x 3), m = lp[1] (2 or 4): U = G g G^T, T^2
 *                 values (T = m + 2) per output and input channel, in
 *                 groups of lp[2] vectors of lp[0] lanes (M rounded up to
 *                 lp[0]), each group [T^2][C][group width] (opt/winograd.c)
 *   OX_L_QCONVW   QConv weights [M,Cg,KH,KW] (1-D: [M,Cg,KW]) for the
 *                 packed integer convolution (templates/qint.c's ox_qg_*):
 *                 signed bytes (uint8 weights less 128); for each of the
 *                 lp[0] groups, blocks of 8 output channels, each
 *                 [KH KW][Cg/4][8][4] (Cg rounded up to 4; zeros past
 *                 the group's channels); when lp[1] is 1 one more block
 *                 follows whose row 0 is ones (the sums of the input
 *                 that nonzero weight zero points need), the rest zeros
 *   OX_L_QDWW     depthwise QConv weights [M,1,KH,KW] (1-D: [M,1,KW]) as
 *                 int16 w - zw (each weight less its zero point), in order
 *   OX_L_RNNT     an LSTM's W [D,4H,I] or R [D,4H,H] stored per direction
 *                 transposed: [D][I][4H] (templates/rnn_lstm_t.c)
 *   OX_L_QGEMMB   a MatMulInteger's constant B [K,N] as signed bytes
 *                 [N/16][K/4][16][4] (N and K rounded up, zeros past them),
 *                 lp[0] what was taken from each byte: 128 for uint8 B
 *                 (its zero point is to be read less 128), else 0
 * The text form writes them after the type: %3:f32[1,64,56,56]@blocked(16). */
enum { OX_L_PLAIN, OX_L_BLOCKED, OX_L_CONVW, OX_L_DWW, OX_L_GEMMB, OX_L_PADDED, OX_L_WINOW, OX_L_QCONVW, OX_L_QDWW, OX_L_QGEMMB, OX_L_RNNT, OX_NLAYOUTS };
extern const char *const ox_layout_names[OX_NLAYOUTS];
int ox_layout_nparams(int layout); /* how many of lp[] the layout has */

/* ---- symbolic values ----
 * A small integer tensor (rank 0 or 1) that the compiler knows element by
 * element although some elements are run-time dims: the exporters' Shape
 * -> Gather -> Concat arithmetic on a run-time shape. opt/fold.c fills a
 * value's sv (ir/eval_sym.c) when its producer cannot fold; the inference
 * of the ops such a tensor steers (a Reshape's target, a Slice's end, an
 * Expand's shape) reads it with ox_in_svals. An element is a constant, a
 * dim, or unknown (read from data when the program runs). */
enum { OX_SV_CONST, OX_SV_DIM, OX_SV_UNKNOWN };
typedef struct {
	int kind;  /* OX_SV_* */
	int64_t c; /* OX_SV_CONST: the value (any sign) */
	ox_dim d;  /* OX_SV_DIM: the dim */
} ox_sv;
#define OX_MAX_SV 16 /* elements a symbolic value may have */

/* ---- values and nodes ---- */
/* OX_V_AGG: a sequence or an optional (agg says which), known part by part
 * at compile time: elems lists the values it holds (an optional 0 or 1;
 * an element may itself be an aggregate). It has no storage and no
 * producer; opt/expand.c creates and consumes aggregates during fold, so
 * none is used by a node after it. A graph input declared as a sequence or
 * optional is an OX_V_INPUT with agg set and nelems -1 until its structure
 * is given (--like); fold then splits it into one input per tensor. */
enum { OX_V_INTERNAL, OX_V_INPUT, OX_V_CONST, OX_V_AGG };
enum { OX_AGG_NONE, OX_AGG_SEQ, OX_AGG_OPT };
typedef struct {
	const char *name;
	int kind;        /* OX_V_* */
	int dtype;       /* OX_UNDEF until inferred */
	int has_shape;   /* shape known (rank and dims, maybe symbolic) */
	ox_shape shape;
	ox_tensor *data; /* constant data, kind == OX_V_CONST */
	ox_id producer;  /* node id or -1 */
	int nuses;       /* filled by ox_ir_fill_uses */
	int is_output;   /* a graph output (filled by ox_ir_fill_uses) */
	int64_t offset;  /* arena byte offset (opt/plan.c), -1 if not in the arena */
	int64_t first, last; /* live range in node positions (opt/plan.c) */
	int agg;         /* OX_AGG_*: what an OX_V_AGG value (or declared input) is */
	int nelems;      /* parts of an aggregate; -1 while unknown */
	ox_id *elems;
	int elem_dtype;  /* element dtype of a sequence (an empty one too) */
	int dyn;         /* 1 + the axis whose extent is known only at run time
			    (NonZero, NonMaxSuppression, Unique): shape.d[axis]
			    holds its bound, the code writes the actual tensor
			    compacted at the buffer's start and reports the extent;
			    only a graph output may be such a value */
	int layout;      /* OX_L_*, and its parameters */
	int lp[3];
	int64_t cap;     /* > 0: at most this many elements, tighter than the
			    product of the dims' tops (a Reshape to run-time dims
			    keeps its input's count; --max NAME=N) */
	ox_sv *sv;       /* its elements as far as known (see ox_sv), or NULL */
	int nsv;
	int stacked;     /* a sequence of run-time length held as one tensor, its
			    elements along axis 0 (what a Loop kept as C control
			    flow appends to each iteration, opt/expand.c) */
} ox_value;
/* elements the value's storage holds in its layout (its numel when plain;
 * -1 if the shape is not constant) */
int64_t ox_value_storage_numel(const ox_value *v);
/* the same at the most its run-time dims allow (v->cap when tighter): what
 * the arena reserves for it; -1 when unbounded */
int64_t ox_value_max_storage(const ox_graph *g, const ox_value *v);

/* One ONNX graph input or output as the generated API groups it: a tensor
 * is one C tensor, a sequence of n tensors is n consecutive ones, an
 * optional 0 or 1 (seq: it holds a sequence). Filled when fold ends. */
typedef struct {
	const char *name;
	int agg;      /* OX_AGG_NONE (a tensor), OX_AGG_SEQ, OX_AGG_OPT */
	int seq;      /* an optional that holds a sequence */
	int first, n; /* C tensors first .. first+n-1 of g->inputs / g->outputs */
} ox_port;

typedef struct {
	int op;            /* OX_OP_* from ops.def; OX_OP_UNKNOWN if not in the table */
	const char *optype;/* ONNX op_type as read */
	const char *domain;/* "" for ai.onnx */
	const char *name;  /* node name ("" if none) */
	int opset;         /* opset version of the node's domain */
	int nin, nout;
	ox_id *in, *out;   /* -1 for an omitted optional input/output */
	int nattr;
	ox_attr *attrs;
	int dead;          /* removed; compacted away by ox_ir_compact */
	int folded;        /* opt/fold.c: outputs inferred in the current walk */
	struct ox_env *env;/* names a subgraph attribute captures, for a node
			      inlined from a subgraph (opt/expand.c); else NULL */
	void *aux;         /* expansion state of a partly expanded Loop / If */
	int scratch;       /* its last output is scratch memory (ox_ir_add_scratch) */
	int region;        /* during fold: the control-flow region it belongs to
			      (0: none; g->regions, opt/outline.c), else 0 */
} ox_node;

/* A control-flow region of the root graph while fold runs: the nodes of
 * one branch of an If, or of the body of a Loop or Scan, inlined into the
 * root (opt/expand.c) and tagged with the region's number (ox_node.region),
 * which opt/outline.c moves into a graph of their own afterwards: the
 * node's body, compiled as C control flow (codegen/c/emit_ctrl.c). */
enum { OX_RG_THEN = 1, OX_RG_ELSE, OX_RG_LOOP, OX_RG_SCAN };
typedef struct {
	int kind;   /* OX_RG_* */
	int parent; /* the enclosing region, 0 if none */
	int depth;  /* 1 + the parent's */
	const char *failed; /* why a node of it could not be inferred, or NULL */
} ox_region;

/* ---- op table (ir/ops.def) ---- */
enum {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) OX_OP_##id,
#include "ops.def"
#undef OP
	OX_NOPS,
	OX_OP_UNKNOWN = OX_NOPS
};
enum {
	OX_F_EW = 1 << 0,       /* elementwise with broadcasting */
	OX_F_INPLACE = 1 << 1,  /* output may share input 0's storage */
	OX_F_VIEW = 1 << 2,     /* output is input 0's bytes (reshape-like) */
	OX_F_SHAPEOP = 1 << 3,  /* output depends only on input shapes */
	/* the op's domain, when not ai.onnx (ox_op_lookup matches it) */
	OX_F_ML = 1 << 4,       /* ai.onnx.ml */
	OX_F_PREVIEW = 1 << 5,  /* ai.onnx.preview */
	OX_F_TRAINING = 1 << 6, /* ai.onnx.preview.training */
	OX_F_EXPAND = 1 << 7,   /* replaced by other ops during fold (opt/expand.c) */
	OX_F_STRINGS = 1 << 8,  /* its emitter handles string tensors */
	OX_F_INTERNAL = 1 << 9, /* onnxcc's own op (domain "onnxcc"): made by passes, never imported */
	OX_F_BLOCKED = 1 << 10, /* its emitter computes on OX_L_BLOCKED values (the
				   layout pass decides when; ir/check.c verifies) */
	OX_F_RT = 1 << 11,      /* its C emitter takes values with run-time dims
				   (docs/dynamic.md); codegen refuses the others' */
	OX_F_MS = 1 << 12,      /* com.microsoft: ONNX Runtime's contrib ops */
};
#define OX_F_DOMAINS (OX_F_ML | OX_F_PREVIEW | OX_F_TRAINING | OX_F_MS)
const char *ox_op_domain(int op); /* "" for ai.onnx */
typedef int (*ox_infer_fn)(ox_graph *g, ox_node *n);
typedef int (*ox_eval_fn)(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out);
typedef struct {
	const char *name;
	int minin, maxin, minout, maxout; /* maxin -1: variadic */
	unsigned flags;
	ox_infer_fn infer;
	ox_eval_fn eval;
} ox_opinfo;
extern const ox_opinfo ox_ops[OX_NOPS];
int ox_op_lookup(const char *domain, const char *optype); /* OX_OP_UNKNOWN if none */

/* ---- graph ---- */
typedef struct ox_chunk ox_chunk;
struct ox_graph {
	ox_chunk *arena;
	ox_graph *parent;       /* enclosing graph for subgraphs */
	ox_graph **subs; int nsubs, capsubs; /* the root's: every subgraph made under it */
	const char *path;       /* model file, for diagnostics */
	const char *name;
	int64_t ir_version;
	int opset;              /* ai.onnx opset */
	ox_value *vals; int nvals, capvals;
	ox_node *nodes; int nnodes, capnodes;
	ox_id *inputs; int ninputs;    /* graph inputs (not initializers) */
	ox_id *outputs; int noutputs;
	const char **output_names;     /* names the user sees, kept across rewrites */
	ox_dexpr *dexprs; int ndexprs, capdexprs; /* the root's only (OX_DX) */
	int nunknown;                  /* counter for anonymous dims (the root's) */
	int string_capacity;           /* bytes per new string element (--string-capacity) */
	int symbolic_ok;               /* inputs may keep unbound dims (a --dump-ir
	                                  that stops before the bounds pass) */
	ox_port *in_ports, *out_ports; /* ONNX inputs/outputs over inputs/outputs */
	int nin_ports, nout_ports;     /* (filled by opt/fold.c when it ends) */
	const ox_target *target;       /* --cpu (ir/target.h); NULL: the default */
	int opt;                       /* --opt: 0 runs only the passes codegen needs */
	int gpu;                       /* --target cuda: no Winograd or packing (the
	                                  CPU's), the layout pass makes NHWC rather
	                                  than vector-width blocks (opt/layout.c),
	                                  epilogues go on the CUDA kernels'
	                                  convolutions and GEMMs (opt/epilogue.c) */
	int nhwc;                      /* --target cuda --cuda-layout: 1 (default) lets
	                                  opt/layout.c make Conv chains NHWC, 0 keeps
	                                  every value plain NCHW (to measure) */
	int winograd;                  /* --winograd: 1 (default) lets opt/winograd.c use
	                                  Winograd F(m x m, 3 x 3) where it pays, 0 never,
	                                  2 or 4 F(m x m) wherever it can (to measure) */
	struct { const char *name; int64_t elems; } *caps; /* --max NAME=N */
	int ncaps;
	int64_t max_elems;             /* --max-elems N: the bound of any run-time size
	                                  without one (0: none) */
	ox_region *regions; int nregions; /* regions[1..nregions-1] (opt/expand.c, outline.c) */
	int cur_region;                /* the region nodes made now are in (opt/expand.c) */
	int unroll;                    /* --unroll: unroll a Loop or Scan of constant length
	                                  when its copies add at most this many nodes (0:
	                                  never); the rest are loops in the C code */
	const char *unreachable;       /* a body of a control node that cannot run with the
	                                  shapes given: why (it has no nodes; its node
	                                  returns the _ERR_SHAPE code if it is taken) */
	int64_t arena_size;            /* bytes, from opt/plan.c */
	int64_t arena_lower_bound;     /* most bytes live at one step */
};

ox_graph *ox_ir_new(const char *path);
/* The root of g's chain of parents. Dim expressions live in the root's
 * table (dexprs), shared by every subgraph, so a dim means the same in a
 * loop body as around it; OX_DX(g) is that table's graph. */
ox_graph *ox_ir_root(const ox_graph *g);
#define OX_DX(g) (ox_ir_root(g))
/* A subgraph belongs to its root graph, which frees it (however many nodes
 * refer to it: inlined bodies share their attributes), and ox_ir_free of a
 * subgraph does nothing. */
ox_graph *ox_ir_new_sub(ox_graph *parent);
void ox_ir_free(ox_graph *g);
void *ox_ir_alloc(ox_graph *g, size_t n);      /* zeroed, 64-byte aligned, freed with g */
const char *ox_ir_strdup(ox_graph *g, const char *s);
ox_id ox_ir_add_value(ox_graph *g, const char *name, int kind);
ox_id ox_ir_find_value(ox_graph *g, const char *name); /* -1 if none */
int ox_ir_find_input(const ox_graph *g, const char *name); /* position in g->inputs, or -1 */
ox_id ox_ir_add_node(ox_graph *g, int op, const char *optype, const char *name, int nin, int nout);
ox_tensor *ox_ir_new_tensor(ox_graph *g, int dtype, const ox_shape *shape); /* zeroed data */
ox_id ox_ir_add_const(ox_graph *g, const char *name, ox_tensor *t);
/* the one node that reads v when v is read once and is not a graph output
 * (uses filled), else NULL */
ox_node *ox_ir_sole_reader(ox_graph *g, ox_id v);
/* a Reshape node x -> y of shape s (y an existing value, or -1: a new one of
 * that shape), appended to the nodes; its id. A symbolic dim of s is 0 in
 * the shape input where it is x's dim at that place, else -1 (one such at
 * most; with more, no shape input and the attribute ox_symshape: the
 * target is the output's shape, opt/symshape.c); the output keeps the
 * dims themselves. */
ox_id ox_ir_add_reshape(ox_graph *g, ox_id x, ox_id y, const ox_shape *s, const char *name);
/* a Transpose node x -> y by perm (r dims; y an existing value, or -1: a
 * new one), appended to the nodes; its id */
ox_id ox_ir_add_transpose(ox_graph *g, ox_id x, ox_id y, const int64_t *perm, int r, const char *name);
/* Reshape n's target made again from its input's and output's shapes (a
 * pass changed them), as ox_ir_add_reshape makes it; allowzero dropped */
void ox_ir_set_reshape_target(ox_graph *g, ox_node *n);
/* An extra last output of node n: bytes of scratch memory its emitter may
 * use (planned in the arena like any output; nothing reads it). Idempotent:
 * a second call resizes the same value. Returns it. */
ox_id ox_ir_add_scratch(ox_graph *g, ox_node *n, int64_t bytes);
/* a new aggregate (OX_V_AGG) holding n values (copied); set_agg turns an
 * existing value into one (same id, so its readers need no rewiring) */
ox_id ox_ir_add_agg(ox_graph *g, const char *name, int agg, const ox_id *elems, int n, int elem_dtype);
void ox_ir_set_agg(ox_graph *g, ox_id v, int agg, const ox_id *elems, int n, int elem_dtype);
void ox_ir_set_const(ox_graph *g, ox_id v, ox_tensor *t); /* turn v into a constant */
void ox_ir_replace_uses(ox_graph *g, ox_id from, ox_id to);
void ox_ir_fill_uses(ox_graph *g);
void ox_ir_compact(ox_graph *g);  /* drop dead nodes */
/* node `from` moved to position `to`, the ones between shifted by one (the
 * caller keeps the order topological and refills the uses) */
void ox_ir_move_node(ox_graph *g, int from, int to);
int ox_ir_toposort(ox_graph *g);  /* 0, or -1 on a cycle / undefined input */

/* attributes */
/* a new attribute appended to n (allocated in g's arena): the caller fills it in */
ox_attr *ox_ir_add_attr(ox_graph *g, ox_node *n, const char *name, int type);
void ox_ir_del_attr(ox_node *n, const char *name); /* every attribute of that name */
const ox_attr *ox_attr_get(const ox_node *n, const char *name);
int64_t ox_attr_int(const ox_node *n, const char *name, int64_t dflt);
float ox_attr_float(const ox_node *n, const char *name, float dflt);
const char *ox_attr_str(const ox_node *n, const char *name, const char *dflt);
/* INTS attribute: returns count (or -1 if absent) and sets *v */
int ox_attr_ints(const ox_node *n, const char *name, const int64_t **v);
/* The getters above treat an attribute of another type as absent and
 * remember the first such one; ox_attr_report prints it as the error
 * ("attribute 'strides' must be INTS, got FLOAT") and returns -1, else 0. */
int ox_attr_report(const ox_graph *g);
/* equal attributes: name, type and value (graphs, tensor lists, sparse
 * tensors and types never); equal tensors: dtype, shape and bytes (string
 * tensors never) */
int ox_attr_same(const ox_attr *a, const ox_attr *b);
int ox_tensor_same(const ox_tensor *a, const ox_tensor *b);

/* dims and shapes */
ox_dim ox_dim_sym(ox_graph *g, const char *name);
ox_dim ox_dim_unknown(ox_graph *g, const char *hint);
ox_dim ox_dim_op(ox_graph *g, int op, ox_dim a, ox_dim b);
#define ox_dim_add(g, a, b) ox_dim_op(g, OX_DE_ADD, a, b)
#define ox_dim_sub(g, a, b) ox_dim_op(g, OX_DE_SUB, a, b)
#define ox_dim_mul(g, a, b) ox_dim_op(g, OX_DE_MUL, a, b)
#define ox_dim_div(g, a, b) ox_dim_op(g, OX_DE_DIV, a, b)        /* floor */
#define ox_dim_ceildiv(g, a, b) ox_dim_op(g, OX_DE_CEILDIV, a, b)
int64_t ox_dim_eval(const ox_graph *g, ox_dim d); /* value, or -1 if it needs an unbound symbol */
const char *ox_dim_unbound(const ox_graph *g, ox_dim d); /* first unbound symbol, or NULL */
int ox_dim_str(const ox_graph *g, ox_dim d, char *buf, size_t n);
int ox_ir_bind(ox_graph *g, const char *sym, int64_t value); /* -1 if no such symbol */
/* --dim SYM=LO..HI: sym becomes a run-time symbol read from an input's
 * shape, lo <= value <= hi (lo == hi binds it); -1 if no such symbol */
int ox_ir_set_range(ox_graph *g, const char *sym, int64_t lo, int64_t hi);
/* a run-time symbol that the producer of value def computes from data, for
 * its output's dim `axis` (one per (def, axis): asking again returns it),
 * at most hi (-1: no bound known yet) */
ox_dim ox_dim_data(ox_graph *g, ox_id def, int axis, int64_t hi);
/* is d a data symbol that the producer of value v (of g) computes? */
int ox_dim_defined_by(const ox_graph *g, ox_dim d, ox_id v);
/* the run-time symbol's expression, or NULL when d is not one */
const ox_dexpr *ox_dim_rtsym(const ox_graph *g, ox_dim d);
/* can dims a and b be equal when the program runs? equal ids, or ranges
 * that meet (the emitter then checks them: ox_cg_check_eq); 1 for an
 * unbound symbol, which the bounds pass names */
int ox_dim_may_equal(const ox_graph *g, ox_dim a, ox_dim b);
/* d's range by interval arithmetic over its symbols' ranges (bound symbols
 * their value): 0 with *lo, *hi set (*hi -1: unbounded), -1 when d needs a
 * symbol that is neither bound nor a run-time symbol */
int ox_dim_range(const ox_graph *g, ox_dim d, int64_t *lo, int64_t *hi);
int64_t ox_dim_hi(const ox_graph *g, ox_dim d); /* the range's top, -1 if none */
/* does d depend on a run-time symbol (after binding)? */
int ox_dim_is_rt(const ox_graph *g, ox_dim d);
int ox_shape_is_rt(const ox_graph *g, const ox_shape *s);
/* does a value node n reads or writes have a run-time dim? */
int ox_node_rt(const ox_graph *g, const ox_node *n);
/* product of dims (ox_dim_mul over the shape: a constant or an expression) */
ox_dim ox_shape_numel_dim(ox_graph *g, const ox_shape *s);
void ox_ir_resolve_dims(ox_graph *g); /* replace bound symbolic dims by constants */
int ox_shape_is_const(const ox_shape *s);
int64_t ox_shape_numel(const ox_shape *s); /* -1 if not constant (or past 2^63) */
/* the most elements a shape can hold: its numel when constant, else the
 * product of its dims' tops, -1 if one is unbounded (or past 2^63) */
int64_t ox_shape_max_numel(const ox_graph *g, const ox_shape *s);
/* A tensor's bytes must stay below OX_MAX_BYTES (256 TiB, more than any
 * address space the generated code runs in), so that element and byte
 * counts, offsets and arena sums never overflow. ox_shape_too_big: the
 * constant dims of s, times the element size, reach it (or overflow). */
#define OX_MAX_BYTES ((int64_t)1 << 48)
int ox_shape_too_big(const ox_shape *s, int dtype);
int ox_shape_str(const ox_graph *g, const ox_shape *s, char *buf, size_t n);
int64_t ox_tensor_numel(const ox_tensor *t);
/* element k of an integer/float tensor, converted */
int64_t ox_tensor_get_i64(const ox_tensor *t, int64_t k);
double ox_tensor_get_f64(const ox_tensor *t, int64_t k);
void ox_tensor_set_f64(ox_tensor *t, int64_t k, double v);
void ox_tensor_set_i64(ox_tensor *t, int64_t k, int64_t v);
float ox_f16_to_f32(uint16_t h);
uint16_t ox_f32_to_f16(float f);
float ox_bf16_to_f32(uint16_t h);
uint16_t ox_f32_to_bf16(float f);

/* helpers for shape inference (ir/infer.c) */
ox_value *ox_in(ox_graph *g, const ox_node *n, int k);  /* NULL if omitted */
ox_value *ox_out(ox_graph *g, const ox_node *n, int k); /* NULL if omitted */
const ox_tensor *ox_in_const(ox_graph *g, const ox_node *n, int k); /* NULL unless constant */
/* read constant integer input k into v (up to cap); count, or -1 if not constant */
int ox_in_ints(ox_graph *g, const ox_node *n, int k, int64_t *v, int cap);
/* input k element by element (ox_sv): from its constant data or its
 * symbolic value; -1 when neither is known (a tensor computed from data)
 * or it has more than cap elements. Elements of a constant are OX_SV_CONST. */
int ox_in_svals(ox_graph *g, const ox_node *n, int k, ox_sv *v, int cap);
/* Equal of two elements by the dims' current ranges (ir/eval_sym.c): a
 * constant 1 or 0, or OX_SV_UNKNOWN */
ox_sv ox_sv_equal(const ox_graph *g, ox_sv a, ox_sv b);
/* compile-time evaluation of shape arithmetic over run-time dims (ir/eval_sym.c):
 * fills the outputs' sv from the inputs' constants and sv; 1 if it did */
int ox_eval_sym(ox_graph *g, ox_node *n);
void ox_set_out(ox_graph *g, ox_node *n, int k, int dtype, const ox_shape *s);
int ox_broadcast(ox_graph *g, const ox_shape *a, const ox_shape *b, ox_shape *out); /* -1 if incompatible */
int ox_norm_axis(int64_t axis, int rank); /* -1 if out of range */
int ox_infer_node(ox_graph *g, ox_node *n); /* dispatch through ox_ops */
/* Error for a shape-steering input k that is not a constant: prints
 * "<message>", and when the input is a graph input a hint that --const can
 * freeze it (tools parse that hint). Returns -1. */
int ox_need_const(ox_graph *g, const ox_node *n, int k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int eval_none(ox_graph *g, ox_node *n, ox_tensor **in, ox_tensor **out); /* never folds */

/* ---- fused nodes (opt/epilogue.c, opt/ewfuse.c, ...) ----
 * The optimizing passes keep their facts in attributes named ox_..., which
 * a model may not use (the frontend refuses them):
 *   ox_fused     STRINGS: the ONNX nodes merged into this one, itself
 *                first (comments, --report, the profiler)
 *   ox_epilogue  GRAPH: elementwise work applied to the node's result
 *                before it is stored. Body input 0 is that result, body
 *                input j >= 1 is node input ox_ir_epilogue_first(n) + j - 1;
 *                the body's output is the node's output 0 (a
 *                MatMulSplit's: its whole product, before the split).
 *   ox_norm      INTS {op, scale input, bias input or -1} on a Gemm or
 *                MatMul (opt/gemmnorm.c): its out[1] is out[0] normalized
 *                over the last axis by op (LayerNormalization or
 *                RMSNormalization), epsilon ox_norm_eps (FLOAT).
 *   ox_glu       INT j on a MatMul (opt/siblings.c): B holds a gated MLP's
 *                gate and up columns interleaved (2c, 2c + 1), the output
 *                is half as wide, and the epilogue's input j (its node
 *                input omitted) is the up column of the gate's. */
ox_graph *ox_ir_epilogue(const ox_node *n);      /* the body, or NULL */
int ox_ir_epilogue_first(const ox_node *n);      /* its first operand's input index, -1 if none */
/* append name to n's ox_fused list (n's own name first) */
void ox_ir_add_fused(ox_graph *g, ox_node *n, const char *name);
/* the same for k names at once (one copy of the list, not k) */
void ox_ir_add_fused_names(ox_graph *g, ox_node *n, const char *const *names, int k);
/* append the ONNX nodes m stands for (its ox_fused list, else its name) */
void ox_ir_add_fused_of(ox_graph *g, ox_node *n, const ox_node *m);
/* n's list := the ONNX nodes m[0..k-1] stand for, in order (a node that
 * replaces them, named after m[0]); no list when that is n's name alone */
void ox_ir_set_fused(ox_graph *g, ox_node *n, ox_node *const *m, int k);

/* floating-point operations of a node (ir/cost.c): 2 per multiply-add of
 * Conv, ConvTranspose, Gemm, MatMul and the attention ops, 0 for the rest:
 * the convention of "effective GFLOP/s" in docs/benchmarks.md */
int64_t ox_ir_flops(ox_graph *g, const ox_node *n);

/* ---- diagnostics: the bad-input channel ----
 * ox_error prints "path: node 'name' (Op, opset N): message" and returns -1.
 * ox_die is the broken-invariant channel: prints file:line and aborts. */
int ox_error(const ox_graph *g, const ox_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ox_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* While ox_error_hold is set, ox_error keeps its first message in
 * ox_error_held (without the path) instead of printing: fold infers the
 * branches of an If this way, one of which the shapes given may never
 * take (opt/expand.c). */
extern int ox_error_hold;
extern char ox_error_held[1024];
_Noreturn void ox_die_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define ox_die(...) ox_die_at(__FILE__, __LINE__, __VA_ARGS__)
extern int ox_verbose;

/* ---- verifier and text form ---- */
int ox_ir_check(ox_graph *g, const char *after); /* 0 or dies */
void ox_ir_dump(ox_graph *g, FILE *f);
ox_graph *ox_ir_parse(const char *text, const char *path); /* NULL + message on error */

#endif
