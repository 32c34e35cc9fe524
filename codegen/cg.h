/* cg.h: the C emitter's shared state and helpers.
 *
 * codegen/c.c drives emission: for each live node it opens
 *     static void nodeK_Op(const T0 *in0, const T1 *in1, ..., U0 *out0, ...)
 * and calls the node's emit function (the emit column of ir/ops.def), which
 * prints the body with ox_cg_printf. inK / outK are pointers to the storage
 * type of the value (ox_cg_ctype); an omitted optional input is passed as a
 * null pointer (check n->in[k] < 0 at emit time, not at run time). A dim is
 * a constant or a run-time dim (ir.h, OX_RT_*): emitters print sizes with
 * ox_cg_dim, a literal when constant, else an expression over the run's
 * ox_d[] (codegen/rtdims.c). An op whose emitter takes run-time dims has the
 * flag OX_F_RT in ops.def; codegen refuses the others on such values.
 * An emitter that meets a case it cannot compile returns
 * ox_error(g, n, "...") (the bad-input channel) and nothing is written.
 * Shared kernels come from templates/NAME.c via ox_cg_use: the text is
 * instantiated once per (template, dtype) into the output, with $T replaced
 * by the storage type, $C by the compute type, $S by the dtype suffix and
 * OX_STATIC by the target's storage class (ox_cg_static);
 * before it, ox_ld_$S / ox_st_$S convert one element between storage and
 * compute type (ox_cg_load / ox_cg_store as functions).
 */
#ifndef OX_CG_H
#define OX_CG_H

#include "../ir/ir.h"
#include <stdarg.h>
#include <string.h> /* (ox_cg_snappend) */

/* A growable text. A kernel's text (--target cuda) is printed with two
 * fields, set before its first print (ox_cu_kbuf): ix, its index type
 * ("int" when every tensor of the node has fewer than 2^30 elements, else
 * "long"), and dt, the element type of its node (OX_UNDEF: none). A piece
 * printed into it has its fields filled as it is printed:
 *     $I            the index type
 *     $L            an index literal's suffix ("L" for long, "" for int)
 *     OX_T          the element type (ox_cg_ctype(dt))
 *     OX_LD(e)      e loaded in the compute type (ox_cg_load(dt, e))
 *     OX_ST(e)      e converted to the element type (ox_cg_store(dt, e))
 * A piece printed into a buffer without them keeps them until it is
 * printed into one that has them. None may reach the output, nor a
 * template's or helper's OX_STATIC (ox_cg_use, ox_cg_helper fill it):
 * ox_cg_fields_left finds them. */
typedef struct {
	char *s;
	size_t len, cap;
	const char *ix;
	int dt;
} ox_buf;
void ox_buf_printf(ox_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ox_buf_puts(ox_buf *b, const char *s);
void ox_buf_vprintf(ox_buf *b, const char *fmt, va_list ap);
/* text's lines into b, each after lvl tabs (an empty line without), each
 * ended by a line break */
void ox_buf_lines(ox_buf *b, int lvl, const char *text);
/* where text has a field (ox_buf's) left unfilled, else NULL */
const char *ox_cg_fields_left(const char *text);
/* snprintf for codegen/: every snprintf here is this one. A text that
 * does not fit its buffer stops the compiler with an internal error that
 * names the place; generated code is never cut short. Texts of unbounded
 * length (dims: ox_cg_dim) go through ox_buf, not a fixed buffer. */
int ox_cg_snprintf_at(const char *file, int line, char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
#define ox_cg_snprintf(buf, n, ...) ox_cg_snprintf_at(__FILE__, __LINE__, buf, n, __VA_ARGS__)
/* ... appended to the text already in buf (n its whole size) */
#define ox_cg_snappend(buf, n, ...) \
	ox_cg_snprintf_at(__FILE__, __LINE__, (buf) + strlen(buf), (n) - strlen(buf), __VA_ARGS__)
struct ox_cg;
/* a formatted text that lives as long as the emitter: for texts of any
 * length that a caller keeps (dims, counts), in place of a fixed buffer or
 * a ring that a later call overwrites */
const char *ox_cg_text(struct ox_cg *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ox_buf_free(ox_buf *b);
/* s as text inside a C comment: no end of comment, no line breaks or
 * control characters */
void ox_cg_comment_safe(ox_buf *b, const char *s);
/* the text of templates/NAME.c or runtime_min/NAME as embedded (by its
 * path, "templates/conv.c"); NULL when there is none */
const char *ox_cg_template(const char *name);
/* text with each key[i] replaced by val[i], appended to b */
void ox_cg_substitute(ox_buf *b, const char *text, const char *const *key, const char *const *val, int nkeys);

typedef struct ox_cg {
	ox_graph *g;
	const char *prefix;   /* --name, lower case */
	ox_buf body;          /* the node function being emitted */
	ox_buf kernels;       /* instantiated templates and helpers */
	char **used; int nused; /* "template/dtype" keys already instantiated */
	int can_fail;         /* 0, or the OX_CG_FAIL_ kind of run-time failure
				 the node has (ox_cg_fails): the node then
				 returns int, its body `return 1;` on failure,
				 and the run returns the kind's PREFIX_ERR_ code */
	char **interned; int ninterned; /* ox_cg_intern's keys */
	char **texts; int ntexts; /* ox_cg_text's (and ox_cg_dim's): freed with cg */
	int nregions;         /* ox_cg_tasks: the body from region_at[r] on (to the */
	size_t region_at[4];  /* next region) is one of region_n[r] independent */
	ox_dim region_n[4];   /* tasks (see there) */
	/* run-time dims (codegen/rtdims.c) */
	int *slot;            /* per dim expression of g: its slot in ox_d[], or -1 */
	int nslots;
	int fails_shape;      /* the node can return 2: a dim it read from data is
				 past the bound the code was planned for, or
				 invalid (PREFIX_ERR_SHAPE) */
	int dims_only;        /* the node is a view (no code): emit only the
				 data dims it defines (ox_cg_set_dim) */
	const char *prefix_upper; /* --name in capitals (the API's macros) */
	const struct wlayout *wl; /* where the weights are (codegen/c.c) */
	const char *fname;    /* the node function being emitted */
	int fails_any;        /* the node returns a PREFIX_ERR_ code itself (a
				 control node passes on its body's) */
	int cuda;             /* --target cuda: nodes are kernels (codegen/cuda/cuda.c) */
	int dev;              /* C that runs on the CUDA device (a control node's
				 body): weights through ox_dev_W */
	int64_t cu_ws;        /* --target cuda: bytes of split-K workspace the
				 kernels need (codegen/cuda/cuda_tile.c) */
	int64_t cu_ctr;       /* ... and tile arrival counters (ox_split_last) */
	int tf32;             /* --tf32: f32 products in TF32 on tensor cores */
	struct ox_map *map;   /* set: the node's emitter describes its map here
				 instead of printing it (ox_cg_map; the CUDA
				 target's kernel: codegen/cuda/cuda_map.c) */
	/* --target cuda, control nodes on the host (codegen/c/emit_ctrl.c) */
	int cu_rc;            /* the node's host function returns a code (the
				 run returns it when not 0) */
	int cu_sync;          /* ... and waits for the device (no CUDA Graph) */
	ox_buf cu_bodies;     /* the bodies' host code: their launches and run
				 functions (ox_cg_emit_body), inner ones first */
	int cu_bserial, cu_btasks, cu_bhost; /* the bodies' nodes without a parallel */
	ox_buf cu_bslow;      /* kernel (--report), for the node's counts */
	/* --target cuda, host nodes (codegen/c.c, emit_spec): a node that
	 * reads or writes string tensors runs its C function on the host, in
	 * stream order (cudaLaunchHostFunc), on copies in pinned memory */
	int cu_host;          /* emitting one: templates and helpers go to */
	ox_buf cu_hkernels;   /* these host functions (namespace ox_host) */
	int64_t cu_hbytes;    /* the pinned staging the host nodes need */
} ox_cg;
/* the emitter's buffers and texts, freed */
void ox_cg_free(ox_cg *cg);

/* A map: a node's computation as an index space (r dims d) and the
 * statements of one element, which read i0..i<r-1> (the element's index)
 * and i (its place in row-major order), in<k> and out<k>. The C target
 * prints it as a loop nest, the CUDA target as a kernel of a thread per
 * element (codegen/cuda/cuda_map.c: the `map` family of ir/ops.def's cuda
 * column). emit_ew's elementwise ops describe theirs; any other emitter
 * does with ox_cg_map (codegen/map.c) and is written once for both. */
typedef struct ox_map {
	int ok;               /* described: nothing broadcast at run time, and
				 constant dims unless dim is set */
	int r;
	ox_dim d[OX_MAX_RANK];
	ox_buf body;          /* the statements, at one tab */
	/* set: a run-time dim as the kernel's text (its parameter: ox_cu_rt_dim
	 * over R), NULL past the kernel's parameters (then bad) */
	const char *(*dim)(void *R, ox_dim d, char *buf, size_t sz);
	void *R;
	int bad;
} ox_map;
/* node n's C emitter (the emit column of ir/ops.def): 0, or -1 */
int ox_cg_emit_op(ox_cg *cg, ox_graph *g, ox_node *n);
/* dim d in a map's statements: C (ox_cg_dim), or the kernel's text */
const char *ox_cg_map_dim(ox_cg *cg, ox_dim d);
/* The node's map over the r dims d: pre (statements before the elements,
 * on the C target once) and body (one element's), each lines at their own
 * indent (no tab for the statements' level), $I the index type of their
 * own variables (ox_buf's field: ptrdiff_t in C, the kernel's in CUDA).
 * Printed as loops on the C target; described in cg->map when it is set.
 * 0, or -1 (an error). */
int ox_cg_map(ox_cg *cg, ox_graph *g, const ox_dim *d, int r, const char *pre, const char *body);
/* text's lines (at their own indent, $I: ptrdiff_t) into the body at
 * indent lvl */
void ox_cg_lines(ox_cg *cg, int lvl, const char *text);

/* ---- --target cuda (codegen/cuda/cuda.c, cuda_*.c) ----
 * A node is a kernel of its own (ox_cu_emit prints into the body the host
 * code that launches it, the kernel into the kernels: returns 0), else
 * (1) the C emitter's function runs on the device: its tasks one thread
 * each when it has nothing before them, else as one thread. -1: error. */
int ox_cu_emit(ox_cg *cg, ox_graph *g, ox_node *n);
/* is text[0..len) only blanks and comments? */
int ox_cu_blank(const char *text, size_t len);

/* Emit a control node's body (opt/outline.c) as C: its node functions and
 * `static int NAME(unsigned char *A, int64_t *ox_d, const void *const
 * *inputs, void *const *outputs, int64_t *const *out_shapes)`, which runs
 * it on the arena A, inputs[k] its inputs (its formal values, then what it
 * captures), copies its outputs to outputs[k] and their shapes to
 * out_shapes[k] (when not NULL), and returns 0 or a PREFIX_ERR_ code. The
 * text goes into the kernels, before the node function that calls it.
 * cu (--target cuda): the same as the top level's nodes, on kernels, and
 * the function on the host, into cg->cu_bodies: `static int NAME(unsigned
 * char *A, int64_t *ox_d, int64_t *ox_dd, int64_t *ox_dext, int *ox_status,
 * const unsigned char *W, const void *const *inputs, void *const *outputs,
 * int64_t *const *out_shapes, cudaStream_t ox_st)`; *syncs: it waits for
 * the device. 0, or -1 after an error. */
int ox_cg_emit_body(ox_cg *cg, ox_graph *body, const char *name, int cu, int *syncs);
/* codegen/c/emit_ctrl.c: If, Loop, Scan as CUDA host code, their bodies'
 * nodes on kernels; 1: not taken (the C rendering runs on the device) */
int ox_cu_emit_ctrl(ox_cg *cg, ox_graph *g, ox_node *n);

/* Run-time failures (docs/api.md, return codes): a string result over
 * --string-capacity (PREFIX_ERR_CAPACITY), an index or count read from the
 * data that is out of range (PREFIX_ERR_INDEX), a run that asks for what the
 * code does not do (PREFIX_ERR_UNSUPPORTED: a Dropout told by its data to
 * drop at random). A node has one kind. */
enum { OX_CG_FAIL_CAPACITY = 1, OX_CG_FAIL_INDEX = 2, OX_CG_FAIL_UNSUPPORTED = 3 };
void ox_cg_fails(ox_cg *cg, int kind);
/* "int64_t var = src;" wrapped once when negative (var += n), then
 * `return 1;` (PREFIX_ERR_INDEX) unless 0 <= var < n; src is an integer
 * expression. At indent lvl. */
void ox_cg_index(ox_cg *cg, int lvl, const char *var, const char *src, int64_t n);
/* the name of a helper, added once, converting a double to the integer
 * dtype `to` with defined results: truncation toward zero, saturated to
 * the type's range, NaN to 0 (C leaves the conversion undefined there) */
const char *ox_cg_f2i(ox_cg *cg, int to);

/* What the emitter prints from here on, up to its next ox_cg_tasks call,
 * is task `t` (a long) of n independent tasks, run through the
 * parallel-for hook (api.md) after what was printed before it (the node's
 * serial prologue, or an earlier region of tasks). At most 4 regions. */
void ox_cg_tasks(ox_cg *cg, long n);
void ox_cg_tasks_dim(ox_cg *cg, ox_dim n); /* n tasks, a run-time count */

/* ---- run-time dims (codegen/rtdims.c) ---- */
void ox_cg_slots(ox_cg *cg, ox_graph *g);  /* number g's run-time symbols */
/* d as a C expression: its value when constant, else over ox_d[] (rotating
 * buffer, 32 deep); the element count of a shape likewise */
const char *ox_cg_dim(ox_cg *cg, ox_dim d);
const char *ox_cg_numel(ox_cg *cg, const ox_shape *s);
int ox_cg_dim_slot(ox_cg *cg, ox_dim d);   /* a run-time symbol's slot, else -1 */
/* "ox_d[k] = expr;" for the data symbol d, which this node computes, with the
 * check that it is within the bound it was planned for (else the node
 * returns 2, PREFIX_ERR_SHAPE) */
void ox_cg_set_dim(ox_cg *cg, int lvl, ox_dim d, const char *expr);
/* "if (a != b) return 2;" (with why in a comment) at indent 1 for dims the inference
 * accepted as possibly equal (ox_dim_may_equal); nothing when a == b */
void ox_cg_check_eq(ox_cg *cg, ox_dim a, ox_dim b, const char *why);
/* after node n has set the data dims of its output k: "if (elements > cap)
 * return 2;" where the output's bound (cap, --max-elems) is less than the
 * product of its dims' tops; nothing otherwise */
void ox_cg_check_cap(ox_cg *cg, ox_graph *g, ox_node *n, int k);
/* a small number for key, the same for the same key all through one file
 * (names the kernels that differ by their epilogue) */
int ox_cg_intern(ox_cg *cg, const char *key);
/* Print a body (ox_epilogue, ir.h) as f32 vector statements at indent lvl
 * (templates/vf.c's ox_vf_ functions), or with scalar the same as f32
 * scalars (runtime_min/ox_cuda.h's ox_sf_, which mirror them name for
 * name): in[j] is the expression of body input j, out the variable that
 * gets the result (codegen/c/emit_vec.c). ox_cg_vbody_ok: can it render node
 * f of the body? */
int ox_cg_vbody(ox_cg *cg, ox_buf *t, ox_graph *body, const char *const *in, const char *out, int lvl, int scalar);
int ox_cg_vbody_ok(const ox_graph *body, const ox_node *f);
/* the f32 vector type of the target (templates/vf.c, OX_VW lanes) */
void ox_cg_use_vf(ox_cg *cg);
/* ops on channel-blocked values (codegen/c/emit_blocked.c) */
int ox_cg_emit_conv_blocked(ox_cg *cg, ox_graph *g, ox_node *n);
/* a 3x3 Conv by Winograd F(m x m, 3 x 3) (codegen/c/emit_wino.c; weights @winow) */
int ox_cg_emit_conv_wino(ox_cg *cg, ox_graph *g, ox_node *n);
int ox_cg_emit_pool_blocked(ox_cg *cg, ox_graph *g, ox_node *n);
/* Attention in blocks of query rows (codegen/c/emit_attn_blocked.c) */
int ox_cg_emit_attn_blocked(ox_cg *cg, ox_graph *g, ox_node *n);
/* Gemm, MatMul on the packed GEMM (codegen/c/emit_gemm.c) */
int ox_cg_emit_gemm(ox_cg *cg, ox_graph *g, ox_node *n);
/* f32 LayerNormalization, RMSNormalization, Softmax, LogSoftmax over rows of
 * contiguous floats on vectors (codegen/c/emit_rows.c); ox_cg_rows_ok: does
 * node n take them (else its scalar emitter) */
int ox_cg_rows_ok(ox_graph *g, const ox_node *n);
int ox_cg_emit_rows(ox_cg *cg, ox_graph *g, ox_node *n);

/* print into the current node's body */
void ox_cg_printf(ox_cg *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* instantiate templates/NAME.c for dtype once; returns 0, or -1 if no such template */
int ox_cg_use(ox_cg *cg, const char *name, int dtype);
/* one line of the body at indent depth lvl (the body itself is at 1) */
void ox_cg_line(ox_cg *cg, int lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* the start of a line at indent lvl, without its end (ox_cg_printf goes on
 * with it) */
void ox_cg_lstart(ox_cg *cg, int lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* append "var * stride" to an index sum in buf; a loop that does not exist
 * (n == 1) or an axis an operand broadcasts along (stride 0) adds nothing */
void ox_cg_term(char *buf, size_t cap, const char *var, int64_t n, int64_t stride);
/* add raw helper text once under a key (e.g. a small static function);
 * the word OX_STATIC in it, as in a template, becomes ox_cg_static's */
void ox_cg_helper(ox_cg *cg, const char *key, const char *text);
/* the storage class of a file-scope function or constant of the C text:
 * "static", and on the CUDA device (--target cuda, not a host node's)
 * "[[maybe_unused]] static __device__". Templates, runtime_min/ox_rt.h and
 * helper texts name it OX_STATIC. */
const char *ox_cg_static(const ox_cg *cg);
/* does text hold name as a word (not inside a longer identifier)? */
int ox_cg_uses_name(const char *text, const char *name);
/* "dst = dst OP src;" into buf: a Scatter reduction (none, add, mul, max,
 * min) of storage lvalues of dtype dt, as C and CUDA both compute it
 * (codegen/c/emit_index.c) */
void ox_cg_combine(char *buf, size_t n, int dt, const char *red, const char *dst, const char *src);
/* RotaryEmbedding's pair (x1, x2) rotated by co, si (C variables of the
 * compute type): the two outputs as storage expressions of dt, each
 * product rounded to dt as the reference rounds it (codegen/c/emit_attn.c) */
void ox_cg_rope_pair(int dt, char *y1, char *y2, size_t n);
/* GridSample's options (codegen/c/emit_norm.c): mode 0 nearest, 1 linear, 2
 * cubic; pad 0 zeros, 1 border, 2 reflection; m and p the attributes'
 * text; -1 (an error reported) when not supported */
typedef struct {
	int mode, pad, align;
	const char *m, *p;
} ox_gs_opts;
int ox_cg_gridsample_opts(ox_graph *g, ox_node *n, ox_gs_opts *o);
/* The most entries along data symbol d that node n's outputs hold (emit_
 * index.c; cuda_index.c's NonMaxSuppression): d's bound, or fewer where an
 * output's element bound (cap, --max) over its other dims, constants, is
 * tighter; the outputs whose other dims are run-time ones go to rest and
 * caps (OX_CG_MOST_REST at most, *nrest of them), for the run to apply. */
#define OX_CG_MOST_REST 8
int64_t ox_cg_most(ox_graph *g, const ox_node *n, ox_dim d, ox_dim *rest, int64_t *caps, int *nrest);
/* DFT and STFT's direct sum for one output bin (emit_signal.c; the CUDA
 * kernels of cuda_signal.c render the same): lines at lvl tabs into b that
 * leave the bin in the doubles re (and im, not for irfft). Expressions:
 * T the samples summed, N the length and Nd it as a double, k the bin, xr
 * and xi sample t's parts as doubles, win the window's value at t (STFT)
 * or NULL; wc and ws the twiddle of w = (k t) mod N, after the statement
 * wdecl when not NULL; it the integer type of t and w. irfft: the
 * one-sided inverse's real output (each bin past 0 and N/2 twice); an
 * inverse divides by N. */
typedef struct {
	const char *T, *N, *Nd, *k, *xr, *xi, *win, *wc, *ws, *wdecl, *it;
	int irfft, inverse;
} ox_dft_sum;
void ox_cg_dft_sum(ox_buf *b, int lvl, const ox_dft_sum *s);
/* the kernel text t, named `name`, under the key "family/name" (once per
 * file, like ox_cg_helper); frees t and returns name */
const char *ox_cg_kernel_text(ox_cg *cg, const char *family, const char *name, ox_buf *t);

/* C spellings. Storage: what the buffer holds (f16/bf16 are uint16_t, bool
 * is uint8_t). Compute: what arithmetic uses (float for f16/bf16). */
const char *ox_cg_ctype(int dtype);
const char *ox_cg_ntype(int dtype);
const char *ox_cg_sfx(int dtype); /* "f32", "i64", ... */
/* Expression converting storage expr `e` of dtype to its compute type, and
 * back. For most dtypes these return e unchanged. Result is in a static
 * rotating buffer: copy it if you need it past a few calls. */
const char *ox_cg_load(int dtype, const char *e);
const char *ox_cg_store(int dtype, const char *e);
/* Window kernels (templates/conv.c, pools, the integer convolution) take
 * 3 spatial axes: ox_cg_to3 widens nsp values (leading axes get dflt), and
 * ox_cg_window_rows prints the "input, output sizes" and "kernel, strides"
 * argument rows of their call (codegen/c/emit_nn.c). */
void ox_cg_to3(const int64_t *v, int nsp, int64_t dflt, int64_t *o);
void ox_cg_window_rows(ox_cg *cg, const int64_t *I3, const int64_t *O3, const int64_t *K3, const int64_t *S3);
/* s as a C string literal (escaped: any bytes are safe), appended to b
 * (codegen/c/emit_str.c) */
void ox_cg_str_literal(ox_buf *b, const char *s);
/* A literal of the compute type of dtype: "%.9g" with f suffix for f32/f16,
 * NAN/INFINITY spelled out, integers as integer literals. Rotating buffer. */
const char *ox_cg_lit(int dtype, double v);
/* element k of constant t as a literal of its C type (codegen/c/emit_data.c) */
void ox_cg_lit_elem(const ox_tensor *t, int64_t k, char *buf, size_t n);

/* Emit functions, one per family (the emit column of ops.def). */
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) \
	int emit(ox_cg *cg, ox_graph *g, ox_node *n);
#include "../ir/ops.def"
#undef OP

#endif
