/* codegen.h: IR -> C source files. */
#ifndef OX_CODEGEN_H
#define OX_CODEGEN_H
#include "../ir/ir.h"

/* --weights: where the constant tensors go (docs/api.md) */
enum {
	OX_CG_WEIGHTS_EMBED,    /* OUT_weights.c pulls in OUT_weights.c.bin (.incbin or #embed) */
	OX_CG_WEIGHTS_EXTERNAL, /* OUT_weights.bin, passed to PREFIX_init at run time */
	OX_CG_WEIGHTS_C,        /* one C array per tensor in OUT_weights.c */
	OX_CG_WEIGHTS_ARRAY,    /* embed's blob, included as a C array (OUT_weights.inc) */
};

/* what was written, for --report */
typedef struct {
	size_t weights_bytes; /* PREFIX_WEIGHTS_SIZE */
	size_t code_bytes;    /* bytes of OUT.c */
	size_t kernel_bytes;  /* of which shared kernels from templates/ */
	int nfuncs;           /* node functions */
	int nviews;           /* nodes that need no code: views, Concats written in place */
	/* --target cuda: nodes without a kernel of their own, as the C
	 * target's function on the device (nserial one thread, ntasks a
	 * thread per task), or on the host (nhost: string ops); slow lists
	 * them ("name (Op, one thread), ..."), malloc'd, for --report */
	int cuda, nserial, ntasks, nhost;
	char *slow;
} ox_cg_stats;

/* --report: the CUDA kernel family node n's code comes from (the cuda
 * column of ir/ops.def; "nhwc" for a node on NHWC values; "none": the
 * op's C function on one device thread). A family can still leave a node
 * it does not take to one thread: ox_cg_stats.slow names those. */
const char *ox_cu_family(ox_graph *g, const ox_node *n);

typedef struct {
	const char *out_c;   /* OUT.c; siblings OUT.h, OUT_weights.c, OUT_main.c */
	const char *prefix;  /* symbol prefix (--name) */
	const char *model;   /* model file name as shown in comments (no folders) */
	int with_main;       /* also write OUT_main.c (the --main test program) */
	int weights;         /* OX_CG_WEIGHTS_* */
	ox_cg_stats *stats;  /* filled in when not NULL */
	int cuda;            /* --target cuda: OUT.cu (host code and kernels) instead of OUT.c */
	int cuda_emu;        /* --cuda-emu: also ox_cuda_emu.h beside OUT.cu */
	int tf32;            /* --tf32: f32 convolutions and GEMMs on tensor cores in TF32 */
	int pool;            /* also write OUT_pool.h (--pool; OUT_main.c includes it) */
} ox_cg_opts;

/* Emit every file, or nothing (returns -1 after printing each node's
 * problem). Writes to temporary names and renames at the end. */
int ox_cg_emit_c(ox_graph *g, const ox_cg_opts *o);
/* The same for a program of several specializations of one model (the
 * buckets of --dim N=LO..HI:B1,B2): gs[s] planned for its ranges, in the
 * order the dispatcher tries them. Shared kernels and equal weights are
 * emitted once. */
int ox_cg_emit_c_specs(ox_graph *const *gs, int ngs, const ox_cg_opts *o);
#endif
