/* ukernel.h: the register-blocked micro-kernel that the blocked
 * convolutions (emit_blocked.c) and the GEMM (emit_gemm.c) share, and the
 * epilogues (opt/epilogue.c) they apply to a tile before storing it.
 *
 * A tile is `rows` x `ocb` vectors of b = OX_VW floats, rows * ocb
 * accumulators. Each step of the reduction loads ocb weight vectors and
 * broadcasts one input element per row: rows * ocb multiply-adds. The
 * steps are a walk of three nested loops with runtime extents and strides
 * (ox_ukgeo: input channel blocks, kernel rows, kernel columns for a
 * convolution; one run of K for a GEMM) around runs of kc rows. Weights
 * too big for the caches are prefetched a group ahead (q->pf). What the
 * compiler should see as constants (tile, strides between rows, weight
 * step, output strides, the partial last vector, the epilogue) is in the
 * kernel's name, and each kernel is emitted once per file.
 */
#ifndef OX_UKERNEL_H
#define OX_UKERNEL_H
#include "../cg.h"
#include "../../opt/opt.h"

/* how a kernel reads each epilogue operand */
enum { OX_EO_LIT, OX_EO_SCALAR, OX_EO_CHAN, OX_EO_FULL };
#define OX_MAXEO 8
typedef struct {
	ox_graph *body;         /* NULL: no epilogue */
	int n, first;           /* operands: node inputs first .. first + n - 1 */
	int kind[OX_MAXEO];     /* a literal, a runtime scalar, one per output channel (column), the output's shape */
	double lit[OX_MAXEO];
	int id;                 /* ox_cg_intern of the rendering: names the kernel */
} ox_epi;
/* n's epilogue (E->body NULL if none), its operands classified; -1 after
 * an error for an op or operand the kernels cannot apply */
int ox_uk_epi(ox_cg *cg, ox_graph *g, ox_node *n, ox_epi *E);

typedef struct {
	int rows, ocb;  /* the tile */
	long ar;        /* floats between the rows' input elements */
	int rw;         /* > 0: the rows are rw to an input row, rows of the input rs floats apart */
	long rs;
	int ac1;        /* reduction rows 1 float apart, else q->ac */
	long ws;        /* floats between the weight rows of consecutive steps */
	long yr;        /* floats between the tile's output rows */
	int yo_b;       /* output vectors b floats apart (row-major output), else q->yo (blocked) */
	int tail;       /* valid lanes of the last vector (a row-major output's edge); 0: all */
	int bias;       /* accumulators start from a bias vector (else from 0) */
	int pf;         /* prefetch the weights q->pf floats ahead (the next group's) */
	int acc;        /* start from the values in y (a later chunk of the reduction) */
	int raw;        /* store the sums without the epilogue (not the last chunk) */
	int arq;        /* the rows' inputs are q->s1 floats apart, a run-time stride (a
			   product of activations whose K is a run-time dim); ar unused.
			   Only for walks of one tap (n1 = 1: s1 is free) */
} ox_ukshape;
/* The kernel for shape s and epilogue E, emitted once; returns its name
 * (a static buffer). Its parameters: (a, w, y, bias, q[, e]). */
const char *ox_uk_kernel(ox_cg *cg, const ox_ukshape *s, const ox_epi *E);
/* The stores of a tile of shape s (accumulators sR_O, through E) into t:
 * for kernels of other shapes that keep the same accumulator names */
void ox_uk_store(ox_cg *cg, ox_buf *t, const ox_epi *E, const ox_ukshape *s);
/* the struct ox_ukgeo (the walk) and the vector type, in the output once */
void ox_uk_use(ox_cg *cg);
/* The tiles of rows [p0, p1) at indent lvl: calls of kfull every s->rows
 * rows, then ktail (if not "") for the rest. args: the kernel arguments
 * but e, in terms of `i` (the tile's first row); the epilogue operands:
 * in<k> + (y - out0) + i * yr (full), in<k> + chan (per channel/column). */
void ox_uk_loop(ox_cg *cg, int lvl, const ox_epi *E, int rows, long yr, const char *kfull, const char *ktail,
		const char *args, const char *chan);
/* one call of kern at row `i` (a variable in scope), with its epilogue operands */
void ox_uk_call(ox_cg *cg, int lvl, const ox_epi *E, long yr, const char *kern, const char *args, const char *chan);

/* Run-time extents (docs/dynamic.md): when p1 - p0 is known only when the
 * program runs, the rows after the full tiles are any number below `rows`,
 * so they are covered by tiles of 2^j rows, the largest first (at most one
 * each: the binary digits of the rest). ox_uk_tails fills the sizes (2^j
 * below rows, descending) and returns how many; ox_uk_loop_rt is
 * ox_uk_loop with ktail[j] the kernel of size[j] rows. */
#define OX_UK_MAXTAILS 5
int ox_uk_tails(int rows, int *size);
void ox_uk_loop_rt(ox_cg *cg, int lvl, const ox_epi *E, int rows, long yr, const char *kfull, int nt,
		   const int *size, char (*ktail)[96], const char *args, const char *chan);
/* The chunked reduction of a GEMM's column group gi over all rows
 * (emit_gemm.c): a Gemm/MatMul's packed B, MatMulNBits' weights
 * dequantized chunk by chunk into scratch (emit_quant.c) */
void ox_cg_gemm_chunks(ox_cg *cg, ox_graph *g, const ox_gemmgeo *q, const ox_epi *E, int lvl, const char *bias,
		       const char *pre, const char *panel, int pf);
/* d for a comment: its value, or its range "LO..HI" when a run-time dim
 * (rotating buffer) */
const char *ox_uk_dimtext(ox_cg *cg, ox_dim d);
#endif
