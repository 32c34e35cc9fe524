/* target.h: what the passes and the emitters know about the CPU the
 * generated code is for (onnxcc --cpu NAME). One row per target in
 * ir/target.c: vector width, register count, the compiler flags --build
 * passes and the tile sizes of the dense kernels. The passes read it from
 * g->target (the layout pass blocks channels by vw, the packing pass lays
 * weights out for the micro-kernel's tile), codegen from the same row, so
 * the two always agree. Nothing here is C text but the flags and guard.
 */
#ifndef OX_TARGET_H
#define OX_TARGET_H

typedef struct {
	const char *name;   /* the --cpu name */
	const char *about;  /* one line for --help and the docs */
	int vw;             /* f32 lanes per vector: 4, 8 or 16 */
	int nregs;          /* vector registers */
	int fma;            /* has fused multiply-add */
	const char *guard;  /* C preprocessor test the generated code checks, "" for none */
	const char *cflags; /* what --build adds to -std=c11 -O2 */
	/* Direct convolution micro-kernel on the channel-blocked layout: a tile
	 * is rows positions x ocb vectors of output channels, rows * ocb
	 * accumulators (ocb <= 4, rows <= 16). conv_rows[k] is the row count
	 * for ocb = k + 1, chosen so the accumulators, ocb weight vectors and
	 * a broadcast fit the registers. */
	int conv_rows[4];
	/* GEMM micro-kernel (the same kernel, positions = rows of A): mr rows
	 * x nr_vecs vectors; kc: reduction chunk kept in L1 (floats). */
	int mr, nr_vecs, kc;
	/* Winograd F(m x m, 3 x 3) (opt/winograd.c) in the cost model's cycles
	 * (opt/analysis.c: a step of the micro-kernel's FMA pipes): the input and
	 * output transforms per tile and vector of channels for m = 2 and 4,
	 * and the bytes of weights a cycle brings from memory and from L3
	 * (measured: docs/optimizer.md, Winograd) */
	double wino_in[2], wino_out[2];
	double mem_bpc, l3_bpc;
} ox_target;

extern const ox_target ox_targets[]; /* ends with a NULL name */
/* The row for NAME; "native" picks the best row this machine runs (and
 * flags -march=native). NULL when unknown. */
const ox_target *ox_target_find(const char *name);
/* the default target: generic (see docs/targets.md for why) */
const ox_target *ox_target_default(void);

#endif
