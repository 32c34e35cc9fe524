/* reduction.h: one description of what a reduction computes (Reduce*,
 * and the "take v over best" test of ArgMax/ArgMin), rendered by both
 * targets: the C target's loop nests (emit_reduce.c) and the CUDA target's
 * kernels (cuda_rows.c: a thread per output, a warp per row, blocks
 * per row). The element v, its type V; the accumulator acc, its type A
 * and start; the term each element adds and how it is added (or, for
 * Max/Min, the test by which it replaces acc); how two partial
 * accumulators combine; the result from acc (and the maximum m of
 * LogSumExp's first pass). One table, so the targets compute in the same
 * types: float sums and products accumulate in double on both (thousands
 * of terms in float drift past 1e-5 relative, numpy sums pairwise; and
 * partial results combined in another order give other bits in float,
 * not in double once rounded), integer sums and
 * products wrap in uint64_t (well defined, and equal to the narrow type's
 * wrap-around); integer L2/LogSum/LogSumExp go through double, like
 * numpy's. An empty reduction yields the op's identity (Sum 0, Prod 1,
 * Max -inf or the type's lowest, LogSum(Exp) -inf, Mean NaN).
 */
#ifndef OX_REDUCTION_H
#define OX_REDUCTION_H

#include "cg.h"

enum { OX_RED_ADD, OX_RED_MUL, OX_RED_MAX, OX_RED_MIN };

typedef struct {
	int dt, op;        /* the input's dtype, the OX_OP_Reduce* op */
	int isf, sgn;      /* dt is a float / signed type */
	int viadbl;        /* an integer computed in double (L2, LogSum, LogSumExp) */
	int cdt;           /* the dtype of libm calls and literals */
	int comb;          /* OX_RED_ADD .. MIN: how a term joins acc */
	int twopass;       /* LogSumExp: a first pass finds m, the maximum */
	const char *T;     /* storage type of an element */
	const char *V;     /* the element v as computed */
	const char *A;     /* the accumulator */
	const char *init;  /* acc's start: the identity of comb */
} ox_reduction;

/* n's reduction; -1 (ox_error) for an input type it does not take */
int ox_reduction_of(ox_graph *g, ox_node *n, ox_reduction *r);
/* the term element v adds to acc (OX_RED_ADD, OX_RED_MUL) */
const char *ox_red_term(ox_cg *cg, const ox_reduction *r);
/* the assignment operator that adds a term: "+=", "*="; NULL for Max/Min,
 * which replace acc where ox_red_wins */
const char *ox_red_assign(const ox_reduction *r);
/* "b replaces a" for a maximum (max) or minimum of dtype isf's kind: NaN
 * wins, as numpy's max does */
const char *ox_red_wins(ox_cg *cg, int isf, int max, const char *b, const char *a);
/* the statement that joins b into acc (or, maxpass, into m: LogSumExp's
 * first pass): b an element v (elem: its term is added) or another
 * partial result; for Max/Min (and maxpass) *cond is the test under which
 * it runs, else NULL */
const char *ox_red_join(ox_cg *cg, const ox_reduction *r, const char *b, int elem, int maxpass, const char **cond);
/* the result from acc (and m) over count elements: a constant count, or
 * (count < 0) the expression cnt of its value when the program runs */
const char *ox_red_result(ox_cg *cg, const ox_reduction *r, int64_t count, const char *cnt);
/* ... converted to the output's storage type */
const char *ox_red_stored(ox_cg *cg, const ox_reduction *r, const char *result);
/* an integer mean: of no elements it is undefined */
int ox_red_int_mean(const ox_reduction *r);
/* ArgMax/ArgMin's "take v over best": NaN wins (the first one, or the
 * last one with select_last_index, last), as numpy's argmax does */
const char *ox_red_better(ox_cg *cg, int isf, int max, int last);
/* libm's name for the compute type: expf for float, exp for double */
const char *ox_red_fn(ox_cg *cg, int cdt, const char *name);

#endif
