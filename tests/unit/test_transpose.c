/* test_transpose.c: cmocka tests of the Transpose/reshape chain pass
 * (opt/transpose.c) on graphs written in the IR text form.
 *
 * Each test runs fold, static and transpose (the verifier after each) and
 * compares the whole dump with the expected text, so a failure prints both
 * graphs. A randomized test checks exactness: random chains of Transpose,
 * Reshape, Flatten, Squeeze and Unsqueeze, rewritten and not, are evaluated
 * on x = 0, 1, 2, ... by fold and must give the same bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../opt/opt.h"
#include <stdlib.h>
#include <string.h>

static ox_graph *parse_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	return g;
}

static char *dump_str(ox_graph *g)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	ox_ir_dump(g, f);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	s[fread(s, 1, (size_t)n, f)] = 0;
	fclose(f);
	return s;
}

static void assert_dump(ox_graph *g, const char *want)
{
	char *got = dump_str(g);
	if (strcmp(got, want)) { /* fprintf: cmocka truncates long messages */
		fprintf(stderr, "--- expected:\n%s--- got:\n%s", want, got);
		fail_msg("the graph after the pass differs (both printed above)");
	}
	free(got);
}

static void run_pass(ox_graph *g, const char *name)
{
	const ox_pass *p = ox_pipeline;
	while (p->name && strcmp(p->name, name))
		p++;
	if (!p->name)
		fail_msg("no pass named %s", name);
	if (p->run(g))
		fail_msg("pass %s failed (message above)", name);
	ox_ir_check(g, name);
}

/* fold, static, then transpose when opt; the dump must be want */
static void check(const char *text, int opt, const char *want)
{
	ox_graph *g = parse_ok(text);
	g->opt = opt;
	run_pass(g, "fold");
	run_pass(g, "bounds");
	run_pass(g, "transpose");
	assert_dump(g, want);
	ox_ir_free(g);
}

/* ---- 1: Transpose -> Transpose ---- */

static void test_two_transposes(void **state)
{
	(void)state;
	check("graph \"tt\" opset 13\n"
	      "input %0:f32[2,3,5,7] \"x\"\n"
	      "%1 = Transpose(%0) {perm=[0,2,3,1]}  # \"t1\"\n"
	      "%2 = Transpose(%1) {perm=[1,0,3,2]}  # \"t2\"\n"
	      "%3 = Relu(%2)  # \"relu\"\n"
	      "output %3 \"y\"\n",
	      1,
	      "graph \"tt\" opset 13\n"
	      "input %0:f32[2,3,5,7] \"x\"\n"
	      "%2:f32[5,2,3,7] = Transpose(%0) {perm=[2,0,1,3], ox_fused=[\"t1\", \"t2\"]}  # \"t1\"\n"
	      "%3:f32[5,2,3,7] = Relu(%2)  # \"relu\"\n"
	      "output %3 \"y\"\n");
}

/* Transposes that cancel: the reader reads x */
static void test_transposes_cancel(void **state)
{
	(void)state;
	check("graph \"tc\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "%1 = Transpose(%0) {perm=[2,0,1]}  # \"t1\"\n"
	      "%2 = Transpose(%1) {perm=[1,2,0]}  # \"t2\"\n"
	      "%3 = Relu(%2)  # \"relu\"\n"
	      "output %3 \"y\"\n",
	      1,
	      "graph \"tc\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "%3:f32[2,3,4] = Relu(%0)  # \"relu\"\n"
	      "output %3 \"y\"\n");
}

/* A cancelling chain ending at a graph output: the output keeps its value,
 * which x's producer now writes; from a graph input, one Reshape (a view)
 * stays rather than the output becoming the input. */
static void test_cancel_at_output(void **state)
{
	(void)state;
	check("graph \"co\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "%1 = Relu(%0)  # \"relu\"\n"
	      "%2 = Transpose(%1) {perm=[1,0,2]}  # \"t1\"\n"
	      "%3 = Transpose(%2) {perm=[1,0,2]}  # \"t2\"\n"
	      "output %3 \"y\"\n",
	      1,
	      "graph \"co\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "%3:f32[2,3,4] = Relu(%0)  # \"relu\"\n"
	      "output %3 \"y\"\n");
	check("graph \"ci\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "%1 = Transpose(%0) {perm=[1,0,2]}  # \"t1\"\n"
	      "%2 = Transpose(%1) {perm=[1,0,2]}  # \"t2\"\n"
	      "output %2 \"y\"\n",
	      1,
	      "graph \"ci\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "const %3:i64[3] \"t1/shape\" = [2, 3, 4]\n"
	      "%2:f32[2,3,4] = Reshape(%0, %3) {ox_fused=[\"t1\", \"t2\"]}  # \"t1\"\n"
	      "output %2 \"y\"\n");
}

/* ---- 2: reshape-like chains ---- */

static void test_reshapes(void **state)
{
	(void)state;
	/* Reshape -> Flatten -> Unsqueeze: one Reshape with a new shape */
	check("graph \"rr\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "const %1:i64[2] \"s1\" = [6, 4]\n"
	      "const %3:i64[1] \"axes\" = [0]\n"
	      "%2 = Reshape(%0, %1)  # \"r1\"\n"
	      "%4 = Unsqueeze(%2, %3)  # \"u\"\n"
	      "%5 = Flatten(%4) {axis=2}  # \"f\"\n"
	      "%6 = Relu(%5)  # \"relu\"\n"
	      "output %6 \"y\"\n",
	      1,
	      "graph \"rr\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "const %7:i64[2] \"r1/shape\" = [6, 4]\n"
	      "%5:f32[6,4] = Reshape(%0, %7) {ox_fused=[\"r1\", \"u\", \"f\"]}  # \"r1\"\n"
	      "%6:f32[6,4] = Relu(%5)  # \"relu\"\n"
	      "output %6 \"y\"\n");
	/* back to x's own shape: nothing left */
	check("graph \"rx\" opset 13\n"
	      "input %0:f32[2,1,4] \"x\"\n"
	      "const %1:i64[1] \"axes\" = [1]\n"
	      "const %3:i64[3] \"s\" = [2, 1, 4]\n"
	      "%2 = Squeeze(%0, %1)  # \"sq\"\n"
	      "%4 = Reshape(%2, %3)  # \"r\"\n"
	      "%5 = Relu(%4)  # \"relu\"\n"
	      "output %5 \"y\"\n",
	      1,
	      "graph \"rx\" opset 13\n"
	      "input %0:f32[2,1,4] \"x\"\n"
	      "%5:f32[2,1,4] = Relu(%0)  # \"relu\"\n"
	      "output %5 \"y\"\n");
	/* a Reshape to x's own shape goes; at a graph output, x's producer
	 * writes the output */
	check("graph \"r1\" opset 13\n"
	      "input %0:f32[6] \"x\"\n"
	      "const %1:i64[1] \"s\" = [6]\n"
	      "%2 = Reshape(%0, %1)  # \"same\"\n"
	      "%3 = Relu(%2)  # \"relu\"\n"
	      "%4 = Reshape(%3, %1)  # \"same_out\"\n"
	      "output %4 \"y\"\n",
	      1,
	      "graph \"r1\" opset 13\n"
	      "input %0:f32[6] \"x\"\n"
	      "%4:f32[6] = Relu(%0)  # \"relu\"\n"
	      "output %4 \"y\"\n");
}

/* ---- 4: a Transpose that moves only size-1 dims is a Reshape ---- */

static void test_unit_transpose(void **state)
{
	(void)state;
	check("graph \"ut\" opset 13\n"
	      "input %0:f32[17,1,64] \"x\"\n"
	      "%1 = Transpose(%0) {perm=[1,0,2]}  # \"t\"\n"
	      "%2 = Relu(%1)\n"
	      "output %2 \"y\"\n",
	      1,
	      "graph \"ut\" opset 13\n"
	      "input %0:f32[17,1,64] \"x\"\n"
	      "const %3:i64[3] \"t/shape\" = [1, 17, 64]\n"
	      "%1:f32[1,17,64] = Reshape(%0, %3)  # \"t\"\n"
	      "%2:f32[1,17,64] = Relu(%1)\n"
	      "output %2 \"y\"\n");
}

/* ---- what must stay ---- */

/* the middle value has another reader, or is a graph output */
static void test_shared_middle(void **state)
{
	(void)state;
	const char *shared =
		"graph \"sm\" opset 13\n"
		"input %0:f32[2,3,4] \"x\"\n"
		"%1:f32[3,2,4] = Transpose(%0) {perm=[1,0,2]}  # \"t1\"\n"
		"%2:f32[2,3,4] = Transpose(%1) {perm=[1,0,2]}  # \"t2\"\n"
		"%3:f32[3,2,4] = Relu(%1)  # \"other\"\n"
		"%4:f32[2,3,4] = Relu(%2)  # \"relu\"\n"
		"output %4 \"y\"\n"
		"output %3 \"z\"\n";
	check(shared, 1, shared);
	const char *output =
		"graph \"om\" opset 13\n"
		"input %0:f32[2,3,4] \"x\"\n"
		"%1:f32[3,2,4] = Transpose(%0) {perm=[1,0,2]}  # \"t1\"\n"
		"%2:f32[2,3,4] = Transpose(%1) {perm=[1,0,2]}  # \"t2\"\n"
		"%3:f32[2,3,4] = Relu(%2)  # \"relu\"\n"
		"output %3 \"y\"\n"
		"output %1 \"mid\"\n";
	check(output, 1, output);
}

/* Chains already in their cheapest form stay as they are: BERT's head
 * split (Reshape -> Transpose) and merge (Transpose -> Reshape), a
 * Transpose then a Reshape that is no rank-minimal form's. */
static void test_already_minimal(void **state)
{
	(void)state;
	const char *text =
		"graph \"am\" opset 13\n"
		"input %0:f32[1,16,64] \"x\"\n"
		"const %1:i64[4] \"s\" = [1, 16, 4, 16]\n"
		"const %4:i64[3] \"m\" = [1, 16, 64]\n"
		"const %7:i64[2] \"sq\" = [32, 32]\n"
		"%2:f32[1,16,4,16] = Reshape(%0, %1)  # \"split\"\n"
		"%3:f32[1,4,16,16] = Transpose(%2) {perm=[0,2,1,3]}  # \"heads\"\n"
		"%5:f32[1,16,4,16] = Transpose(%3) {perm=[0,2,1,3]}  # \"unheads\"\n"
		"%6:f32[1,16,64] = Reshape(%5, %4)  # \"merge\"\n"
		"%8:f32[1,64,16] = Transpose(%0) {perm=[0,2,1]}  # \"t\"\n"
		"%9:f32[32,32] = Reshape(%8, %7)  # \"r\"\n"
		"%10:f32[1,4,16,16] = Relu(%3)\n"
		"output %6 \"y\"\n"
		"output %9 \"z\"\n"
		"output %10 \"w\"\n";
	check(text, 1, text);
}

/* ---- 3: rearranges ---- */

/* Merge heads then split them again: the identity, removed entirely */
static void test_identity_chain(void **state)
{
	(void)state;
	check("graph \"id\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "const %2:i64[2] \"m\" = [3, 8]\n"
	      "const %4:i64[3] \"s\" = [3, 2, 4]\n"
	      "%1 = Transpose(%0) {perm=[1,0,2]}  # \"t1\"\n"
	      "%3 = Reshape(%1, %2)  # \"merge\"\n"
	      "%5 = Reshape(%3, %4)  # \"split\"\n"
	      "%6 = Transpose(%5) {perm=[1,0,2]}  # \"t2\"\n"
	      "%7 = Relu(%6)\n"
	      "output %7 \"y\"\n",
	      1,
	      "graph \"id\" opset 13\n"
	      "input %0:f32[2,3,4] \"x\"\n"
	      "%7:f32[2,3,4] = Relu(%0)\n"
	      "output %7 \"y\"\n");
}

/* einops 'b c h w -> b h w c' written with a needless split of c: one
 * Transpose of x's own dims, straight to y */
static void test_rearrange_merged(void **state)
{
	(void)state;
	check("graph \"rm\" opset 13\n"
	      "input %0:f32[2,6,4] \"x\"\n"
	      "const %1:i64[4] \"s\" = [2, 2, 3, 4]\n"
	      "const %4:i64[3] \"m\" = [2, 4, 6]\n"
	      "%2 = Reshape(%0, %1)  # \"split\"\n"
	      "%3 = Transpose(%2) {perm=[0,3,1,2]}  # \"t\"\n"
	      "%5 = Reshape(%3, %4)  # \"merge\"\n"
	      "output %5 \"y\"\n",
	      1,
	      "graph \"rm\" opset 13\n"
	      "input %0:f32[2,6,4] \"x\"\n"
	      "%5:f32[2,4,6] = Transpose(%0) {perm=[0,2,1], ox_fused=[\"t\", \"split\", \"merge\"]}  # \"t\"\n"
	      "output %5 \"y\"\n");
}

/* ViT patches: 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', b = 1, p = 4: the
 * Transpose loses the unit batch dim (rank 6 -> 5) */
static void test_vit_patches(void **state)
{
	(void)state;
	check("graph \"vit\" opset 13\n"
	      "input %0:f32[1,3,8,12] \"x\"\n"
	      "const %1:i64[6] \"s\" = [1, 3, 2, 4, 3, 4]\n"
	      "const %4:i64[3] \"m\" = [1, 6, 48]\n"
	      "%2 = Reshape(%0, %1)  # \"patch_split\"\n"
	      "%3 = Transpose(%2) {perm=[0,2,4,3,5,1]}  # \"patch_t\"\n"
	      "%5 = Reshape(%3, %4)  # \"patch_merge\"\n"
	      "output %5 \"y\"\n",
	      1,
	      "graph \"vit\" opset 13\n"
	      "input %0:f32[1,3,8,12] \"x\"\n"
	      "const %6:i64[5] \"patch_split/shape\" = [3, 2, 4, 3, 4]\n"
	      "const %9:i64[3] \"patch_merge/shape\" = [1, 6, 48]\n"
	      "%7:f32[3,2,4,3,4] = Reshape(%0, %6)  # \"patch_split\"\n"
	      "%8:f32[2,3,4,4,3] = Transpose(%7) {perm=[1,3,2,4,0], ox_fused=[\"patch_t\", \"patch_split\", "
	      "\"patch_merge\"]}  # \"patch_t\"\n"
	      "%5:f32[1,6,48] = Reshape(%8, %9)  # \"patch_merge\"\n"
	      "output %5 \"y\"\n");
}

/* ShuffleNet's channel shuffle, groups 2, batch 1: [2,3,6] -> [3,2,6] */
static void test_channel_shuffle(void **state)
{
	(void)state;
	check("graph \"cs\" opset 13\n"
	      "input %0:f32[1,6,2,3] \"x\"\n"
	      "const %1:i64[5] \"s\" = [1, 2, 3, 2, 3]\n"
	      "const %4:i64[4] \"m\" = [1, -1, 2, 3]\n"
	      "%2 = Reshape(%0, %1)  # \"shuffle_split\"\n"
	      "%3 = Transpose(%2) {perm=[0,2,1,3,4]}  # \"shuffle_t\"\n"
	      "%5 = Reshape(%3, %4)  # \"shuffle_merge\"\n"
	      "%6 = Relu(%5)\n"
	      "output %6 \"y\"\n",
	      1,
	      "graph \"cs\" opset 13\n"
	      "input %0:f32[1,6,2,3] \"x\"\n"
	      "const %7:i64[3] \"shuffle_split/shape\" = [2, 3, 6]\n"
	      "const %10:i64[4] \"shuffle_merge/shape\" = [1, 6, 2, 3]\n"
	      "%8:f32[2,3,6] = Reshape(%0, %7)  # \"shuffle_split\"\n"
	      "%9:f32[3,2,6] = Transpose(%8) {perm=[1,0,2], ox_fused=[\"shuffle_t\", \"shuffle_split\", "
	      "\"shuffle_merge\"]}  # \"shuffle_t\"\n"
	      "%5:f32[1,6,2,3] = Reshape(%9, %10)  # \"shuffle_merge\"\n"
	      "%6:f32[1,6,2,3] = Relu(%5)\n"
	      "output %6 \"y\"\n");
}

/* Transpose -> Reshape -> Transpose around a split: two copies become one
 * Transpose on x's dims and a view */
static void test_through_reshape(void **state)
{
	(void)state;
	check("graph \"tr\" opset 13\n"
	      "input %0:f32[5,2,12] \"x\"\n"
	      "const %2:i64[4] \"s\" = [2, 5, 3, 4]\n"
	      "%1 = Transpose(%0) {perm=[1,0,2]}  # \"t1\"\n"
	      "%3 = Reshape(%1, %2)  # \"split\"\n"
	      "%4 = Transpose(%3) {perm=[0,2,3,1]}  # \"t2\"\n"
	      "%5 = Relu(%4)\n"
	      "output %5 \"y\"\n",
	      1,
	      "graph \"tr\" opset 13\n"
	      "input %0:f32[5,2,12] \"x\"\n"
	      "const %7:i64[4] \"t2/shape\" = [2, 3, 4, 5]\n"
	      "%6:f32[2,12,5] = Transpose(%0) {perm=[1,2,0], ox_fused=[\"t1\", \"split\", \"t2\"]}  # \"t1\"\n"
	      "%4:f32[2,3,4,5] = Reshape(%6, %7)  # \"t2\"\n"
	      "%5:f32[2,3,4,5] = Relu(%4)\n"
	      "output %5 \"y\"\n");
}

/* A Reshape that splits across moved dims is no strided view of x: the
 * chain ends before it, and the reshapes at its end join the next chain */
static void test_not_strided(void **state)
{
	(void)state;
	check("graph \"ns\" opset 13\n"
	      "input %0:f32[4,6] \"x\"\n"
	      "const %2:i64[1] \"flat\" = [24]\n"
	      "const %4:i64[2] \"s\" = [4, 6]\n"
	      "%1 = Transpose(%0) {perm=[1,0]}  # \"t\"\n"
	      "%3 = Reshape(%1, %2)  # \"r1\"\n"
	      "%5 = Reshape(%3, %4)  # \"r2\"\n"
	      "%6 = Relu(%5)\n"
	      "output %6 \"y\"\n",
	      1,
	      "graph \"ns\" opset 13\n"
	      "input %0:f32[4,6] \"x\"\n"
	      "const %7:i64[2] \"r1/shape\" = [4, 6]\n"
	      "%1:f32[6,4] = Transpose(%0) {perm=[1,0]}  # \"t\"\n"
	      "%5:f32[4,6] = Reshape(%1, %7) {ox_fused=[\"r1\", \"r2\"]}  # \"r1\"\n"
	      "%6:f32[4,6] = Relu(%5)\n"
	      "output %6 \"y\"\n");
}

/* --opt 0: nothing changes */
static void test_opt0(void **state)
{
	(void)state;
	const char *text =
		"graph \"o0\" opset 13\n"
		"input %0:f32[2,3,4] \"x\"\n"
		"%1:f32[3,2,4] = Transpose(%0) {perm=[1,0,2]}  # \"t1\"\n"
		"%2:f32[2,3,4] = Transpose(%1) {perm=[1,0,2]}  # \"t2\"\n"
		"%3:f32[2,3,4] = Relu(%2)\n"
		"output %3 \"y\"\n";
	check(text, 0, text);
}

/* ---- exactness on random chains ---- */

static uint64_t rng = 88172645463325252ull;
static int rnd(int n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (int)(rng % (uint64_t)n);
}

static void put_shape(char **p, const int64_t *d, int r)
{
	*p += sprintf(*p, "[");
	for (int i = 0; i < r; i++)
		*p += sprintf(*p, "%s%lld", i ? "," : "", (long long)d[i]);
	*p += sprintf(*p, "]");
}

/* a random chain of 2 to 6 ops on a random shape, as text */
static void random_chain(char *buf)
{
	static const int64_t primes[] = {2, 2, 2, 3, 3, 5};
	int64_t d[OX_MAX_RANK];
	int r = 1 + rnd(4), id = 1;
	for (int i = 0; i < r; i++)
		d[i] = rnd(3) ? 1 + rnd(4) : 1;
	char *p = buf;
	p += sprintf(p, "graph \"rand\" opset 13\ninput %%0:f32");
	put_shape(&p, d, r);
	p += sprintf(p, " \"x\"\n");
	int nops = 2 + rnd(5);
	for (int k = 0; k < nops; k++) {
		int op = rnd(6), in = id - 1;
		if (op <= 1 && r > 1) { /* Transpose */
			int perm[OX_MAX_RANK];
			for (int i = 0; i < r; i++)
				perm[i] = i;
			for (int i = r - 1; i > 0; i--) {
				int j = rnd(i + 1), t = perm[i];
				perm[i] = perm[j], perm[j] = t;
			}
			p += sprintf(p, "%%%d = Transpose(%%%d) {perm=[", id, in);
			int64_t e[OX_MAX_RANK];
			for (int i = 0; i < r; i++) {
				p += sprintf(p, "%s%d", i ? "," : "", perm[i]);
				e[i] = d[perm[i]];
			}
			p += sprintf(p, "]}\n");
			memcpy(d, e, sizeof e);
			id++;
		} else if (op <= 3) { /* Reshape to a random factorization */
			int64_t n = 1, e[OX_MAX_RANK];
			for (int i = 0; i < r; i++)
				n *= d[i];
			int m = 0;
			for (int64_t left = n; left > 1;) {
				if (m == 5) {
					e[m++] = left;
					break;
				}
				int64_t f = 1;
				for (int t = 0; t < 3; t++) {
					int64_t q = primes[rnd(6)];
					if (left % (f * q) == 0)
						f *= q;
				}
				if (f == 1) {
					for (f = 2; left % f; f++)
						;
				}
				e[m++] = f, left /= f;
				if (rnd(4) == 0 && m < 5)
					e[m++] = 1;
			}
			if (m == 0)
				e[m++] = 1;
			p += sprintf(p, "const %%%d:i64[%d] \"s%d\" = [", id, m, id);
			for (int i = 0; i < m; i++)
				p += sprintf(p, "%s%lld", i ? ", " : "", (long long)e[i]);
			p += sprintf(p, "]\n%%%d = Reshape(%%%d, %%%d)\n", id + 1, in, id);
			memcpy(d, e, sizeof e);
			r = m, id += 2;
		} else if (op == 4 && r < 6) { /* Unsqueeze */
			int a = rnd(r + 1);
			p += sprintf(p, "const %%%d:i64[1] \"a%d\" = [%d]\n%%%d = Unsqueeze(%%%d, %%%d)\n", id, id, a, id + 1, in, id);
			memmove(d + a + 1, d + a, (size_t)(r - a) * sizeof *d);
			d[a] = 1, r++, id += 2;
		} else { /* Squeeze a unit dim if there is one, else Flatten */
			int a = -1;
			for (int i = 0; i < r; i++)
				if (d[i] == 1)
					a = i;
			if (a >= 0 && r > 1) {
				p += sprintf(p, "const %%%d:i64[1] \"a%d\" = [%d]\n%%%d = Squeeze(%%%d, %%%d)\n", id, id, a, id + 1, in, id);
				memmove(d + a, d + a + 1, (size_t)(r - a - 1) * sizeof *d);
				r--, id += 2;
			} else {
				int ax = rnd(r + 1);
				int64_t f0 = 1, f1 = 1;
				for (int i = 0; i < r; i++)
					*(i < ax ? &f0 : &f1) *= d[i];
				p += sprintf(p, "%%%d = Flatten(%%%d) {axis=%d}\n", id, in, ax);
				d[0] = f0, d[1] = f1, r = 2, id++;
			}
		}
	}
	p += sprintf(p, "output %%%d \"y\"\n", id - 1);
}

/* y for x = 0, 1, 2, ...: the graph folded with x a constant */
static ox_tensor *evaluate(ox_graph *g)
{
	ox_id x = ox_ir_find_value(g, "x");
	ox_tensor *t = ox_ir_new_tensor(g, OX_F32, &g->vals[x].shape);
	for (int64_t i = 0; i < ox_tensor_numel(t); i++)
		ox_tensor_set_f64(t, i, (double)i);
	ox_ir_set_const(g, x, t);
	g->ninputs = 0;
	run_pass(g, "fold");
	const ox_value *y = &g->vals[g->outputs[0]];
	if (y->kind != OX_V_CONST)
		fail_msg("y did not fold");
	return y->data;
}

static int copies(ox_graph *g)
{
	int c = 0;
	for (int i = 0; i < g->nnodes; i++)
		c += !ox_plan_is_view_node(g, &g->nodes[i]);
	return c;
}

/* never more copies or nodes than before, and the same bytes */
static void test_random_exact(void **state)
{
	(void)state;
	static char text[8192];
	int rewritten = 0;
	for (int iter = 0; iter < 400; iter++) {
		random_chain(text);
		ox_graph *a = parse_ok(text), *b = parse_ok(text);
		run_pass(a, "fold"), run_pass(a, "bounds");
		run_pass(b, "fold"), run_pass(b, "bounds"), run_pass(b, "transpose");
		int na = a->nnodes, nb = b->nnodes, ca = copies(a), cb = copies(b);
		char *d = dump_str(b);
		rewritten += nb != na || ca != cb;
		ox_tensor *ta = evaluate(a), *tb = evaluate(b);
		if (ta->nbytes != tb->nbytes || memcmp(ta->data, tb->data, ta->nbytes) || cb > ca || nb > na) {
			fprintf(stderr, "--- chain:\n%s--- rewritten:\n%s", text, d);
			fail_msg("random chain %d: results differ, or more copies (%d -> %d) or nodes (%d -> %d)", iter,
				 ca, cb, na, nb);
		}
		free(d);
		ox_ir_free(a);
		ox_ir_free(b);
	}
	assert_true(rewritten > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_transposes),
		cmocka_unit_test(test_transposes_cancel),
		cmocka_unit_test(test_cancel_at_output),
		cmocka_unit_test(test_reshapes),
		cmocka_unit_test(test_unit_transpose),
		cmocka_unit_test(test_shared_middle),
		cmocka_unit_test(test_already_minimal),
		cmocka_unit_test(test_identity_chain),
		cmocka_unit_test(test_rearrange_merged),
		cmocka_unit_test(test_vit_patches),
		cmocka_unit_test(test_channel_shuffle),
		cmocka_unit_test(test_through_reshape),
		cmocka_unit_test(test_not_strided),
		cmocka_unit_test(test_opt0),
		cmocka_unit_test(test_random_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
