/* main.c: the onnxcc command line.
 *
 *   onnxcc MODEL.onnx -o OUT.c [--target c] [--cpu NAME] [--opt 0|1] [--skip PASS]... [--winograd on|off|2|4] [--name PREFIX]
 *          [--shape INPUT=D0xD1x...]... [--dim SYMBOL=N|LO..HI[:B1,...]]... [--max VALUE=N]... [--max-elems N]
 *          [--const INPUT=FILE]... [--like INPUT=FILE]... [--string-capacity N] [--weights embed|external|c]
 *          [--report[=json|=html[:FILE]]] [--graph FILE.svg|FILE.dot] [--main] [--build] [-v] [--dump-ir[=PASS]]
 *   onnxcc --print-cflags [--cpu NAME] | --version | --help
 *
 * `usage` below is the --help text and the source of the man page
 * (tools/man.awk turns it into build/onnxcc.1): one "  -x  text" line per
 * option, continued by deeper-indented lines.
 * Load (frontend/) -> bind shapes -> pass pipeline (opt/) -> emit (codegen/)
 * -> optionally build with $CC. Exit status 0 on success, 1 on any error
 * (after a message naming the file and, where there is one, the node).
 */
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "opt/opt.h"
#include "report/report.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "version.h" /* OX_VERSION, OX_COMMIT: made by the Makefile */

#define MAX_BINDS 64
#define MAX_SPECS 64

static const char usage[] =
	"usage: onnxcc MODEL.onnx -o OUT.c [--target c] [--cpu NAME] [--opt 0|1] [--skip PASS]... [--winograd on|off|2|4] [--name PREFIX]\n"
	"              [--shape INPUT=D0xD1x...]... [--dim SYMBOL=N|LO..HI[:B1,B2,...]]...\n"
	"              [--max VALUE=N]... [--max-elems N] [--unroll N] [--const INPUT=FILE]... [--like INPUT=FILE]...\n"
	"              [--weights embed|external|c] [--string-capacity N]\n"
	"              [--report[=json|=html[:FILE]]] [--graph FILE.svg|FILE.dot]\n"
	"              [--main] [--build] [-v] [--dump-ir[=PASS]]\n"
	"       onnxcc --print-cflags [--cpu NAME] | --version | --help\n"
	"Writes OUT.c, OUT.h and the weights (OUT_weights.c and its blob), and OUT_main.c\n"
	"with --main.\n"
	"  -o         the C file to write; the others are named after it\n"
	"  --name     the prefix of every exported symbol (default: OUT's base name)\n"
	"  --target   the language of the output: c (the default) or cuda: OUT.cu, CUDA C++\n"
	"             for nvcc (host code and kernels; docs/cuda.md) beside OUT.h and the weights\n"
	"  --cuda-emu with --target cuda: --build makes the program with the host C++ compiler\n"
	"             and ox_cuda_emu.h (written beside OUT), which runs the kernels on the CPU\n"
	"  --tf32     with --target cuda: f32 convolutions and GEMMs on tensor cores in TF32\n"
	"             (10-bit mantissas in the products; f16/bf16 ones use them always, exactly)\n"
	"  --cuda-layout nhwc (default): Conv chains NHWC on the GPU; nchw: every value\n"
	"             plain (to measure)\n"
	"  --cpu      the CPU the code is for: generic (the default: portable C11),\n"
	"             x86-64-v3 (AVX2+FMA), x86-64-v4 (AVX-512), armv8-a (NEON) or\n"
	"             native (this machine); sets vector width, tiles and --build's flags\n"
	"  --print-cflags  print the compiler flags for --cpu and exit\n"
	"  --opt      1 (default): the optimizing passes; 0: only what codegen needs\n"
	"  --skip     PASS: leave that optimizing pass out (to measure what it gains):\n"
	"             attention, norm, epilogue, siblings, gemmnorm, dwpw, cse or ewfuse\n"
	"             (opt/pipeline.c; may be given more than once)\n"
	"  --winograd on (default): 3x3 convolutions by Winograd F(4x4) or F(2x2, 3x3)\n"
	"             where the cost model says it pays (faster, rounding errors a few\n"
	"             times the direct kernels'); off: never; 2 or 4: F(2x2) or F(4x4)\n"
	"             for every 3x3 convolution it can compute (to measure)\n"
	"  --shape    the shape of a graph input: each dim N, or LO..HI for any size in\n"
	"             that range, given when the program runs (PREFIX_run_shaped), or\n"
	"             LO..HI:B1,B2,... for one specialization per bucket LO..B1,\n"
	"             B1+1..B2, ..., up to HI, each planned and tuned for its top;\n"
	"             binds or ranges the model's symbolic dims\n"
	"  --dim      a symbolic dim everywhere: N, LO..HI or LO..HI:B1,B2,... (as --shape)\n"
	"  --max      VALUE holds at most N elements: the bound of a size read from data\n"
	"             at run time that the compiler cannot derive (a Range's length, a\n"
	"             Resize to sizes given as an input); a run that needs more returns\n"
	"             PREFIX_ERR_SHAPE\n"
	"  --max-elems  the same bound for every such value that --max does not name\n"
	"  --unroll   N: a Loop or Scan of constant length is unrolled when that adds at\n"
	"             most N nodes (default 4096); others, and every If whose condition\n"
	"             is known only at run time, are C control flow (0: always)\n"
	"  --rt-inputs  first|all: for testing the run-time paths, every fixed dim d >= 2\n"
	"             of a graph input (first: axis 0 only) becomes a run-time dim in d..2d\n"
	"  --const    freeze a graph input to the tensor in FILE (.pb or .npy): the code\n"
	"             is then specialized for that value and the input disappears\n"
	"  --like     compile a graph input for the structure of the example in FILE:\n"
	"             a sequence (SequenceProto: its length, element types and shapes),\n"
	"             an optional (OptionalProto: empty or not) or a tensor's shape\n"
	"  --weights  embed (default): the weights are compiled in, from OUT_weights.c.bin\n"
	"             (.incbin/#embed) or OUT_weights.inc (a C array), inline when tiny;\n"
	"             external: written to OUT_weights.bin, which the application passes\n"
	"             to PREFIX_init; c: one C array per tensor in OUT_weights.c\n"
	"  --string-capacity  bytes each new string element may hold (default 256);\n"
	"             a longer result makes the run return PREFIX_ERR_CAPACITY\n"
	"  --report   print the memory plan (arena, lower bound, largest live set),\n"
	"             weight and code sizes; =json: also every tensor's place and lifetime;\n"
	"             =html: the same as one self-contained page with a memory timeline\n"
	"             (each tensor a bar over the schedule at its arena offset), written\n"
	"             to FILE (default OUT.report.html); may be given with --report\n"
	"  --graph    draw the optimized, planned graph (nodes, fused ops, kernels;\n"
	"             edges: tensors with dtype, shape, layout, arena offset and size):\n"
	"             FILE.svg with Graphviz's dot when it is on PATH (else the DOT goes\n"
	"             to FILE.dot, said on stderr), any other FILE gets Graphviz DOT;\n"
	"             without -o only the picture is written\n"
	"  --main     also write a test program: OUT [--bench N] INPUT... -o OUTDIR\n"
	"  --build    compile the result into the executable OUT with $CC (implies --main)\n"
	"             and the words of $ONNXCC_CFLAGS after the target's flags\n"
	"  --dump-ir  print the IR after the pipeline (or after pass PASS) and stop\n"
	"  -v         print each pass and each command run\n"
	"  --version  print the version (and the git commit it was built from) and exit\n"
	"  -h, --help  print this help and exit\n"
	"Exit status: 0 on success, 1 on any error, after a message naming the file\n"
	"and, where there is one, the node; on an error nothing is written.\n";

static int bad_option(const char *fmt, const char *arg)
{
	fprintf(stderr, "onnxcc: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return 1;
}

/* A dim given on the command line: N, or a range LO..HI, maybe with
 * buckets LO..HI:B1,B2,... (one specialization per bucket LO..B1,
 * B1+1..B2, ..., up to HI). */
#define MAX_BUCKETS 32
typedef struct {
	int64_t lo, hi;
	int nb;
	int64_t b[MAX_BUCKETS]; /* the buckets' tops, the last one hi */
} dimspec;

/* parse one dim at s; *end after it. -1 when malformed (or bad bounds) */
static int parse_dimspec(const char *s, const char **end, dimspec *d)
{
	char *e;
	if (!isdigit((unsigned char)*s))
		return -1;
	d->lo = d->hi = strtoll(s, &e, 10);
	d->nb = 0;
	if (e[0] == '.' && e[1] == '.') {
		if (!isdigit((unsigned char)e[2]))
			return -1;
		d->hi = strtoll(e + 2, &e, 10);
		if (d->hi < d->lo)
			return -1;
		if (*e == ':') {
			do {
				if (!isdigit((unsigned char)e[1]) || d->nb == MAX_BUCKETS - 1)
					return -1;
				int64_t t = strtoll(e + 1, &e, 10);
				if (t < (d->nb ? d->b[d->nb - 1] + 1 : d->lo) || t >= d->hi)
					return -1;
				d->b[d->nb++] = t;
			} while (*e == ',');
		}
		d->b[d->nb++] = d->hi;
	}
	*end = e;
	return d->lo < 0 ? -1 : 0;
}

/* "2x3x224x224", "1..8x3x224x224", "1..64:8,16x128" -> dims; "" is a
 * scalar. -1 on a malformed list. */
static int parse_dims(const char *s, dimspec *d, int *rank)
{
	*rank = 0;
	if (!*s)
		return 0;
	for (;;) {
		const char *end;
		if (*rank == OX_MAX_RANK || parse_dimspec(s, &end, &d[*rank]))
			return -1;
		++*rank;
		if (!*end)
			return 0;
		/* ',' separates dims too, except after buckets (1..64:8,16) */
		if (*end != 'x' && *end != 'X' && (*end != ',' || d[*rank - 1].nb > 1))
			return -1;
		s = end + 1;
	}
}

/* the symbols given buckets, in the order first given; a program is
 * compiled once per combination of their buckets */
static struct {
	const char *sym;
	dimspec d;
} bucketed[8];
static int nbucketed;

static int note_buckets(ox_graph *g, const char *sym, const dimspec *d)
{
	if (d->nb < 2)
		return 0;
	for (int i = 0; i < nbucketed; i++)
		if (!strcmp(bucketed[i].sym, sym)) {
			bucketed[i].d = *d;
			return 0;
		}
	if (nbucketed == 8) {
		ox_error(g, NULL, "buckets are given for more than 8 symbols");
		return -1;
	}
	bucketed[nbucketed].sym = strdup(sym);
	bucketed[nbucketed++].d = *d;
	return 0;
}

/* a symbol takes a value or a range (and maybe buckets) */
static int set_sym(ox_graph *g, const char *sym, const dimspec *d)
{
	if (ox_ir_set_range(g, sym, d->lo, d->hi))
		return -1;
	return note_buckets(g, sym, d);
}

static int apply_shape(ox_graph *g, const char *spec)
{
	const char *eq = strrchr(spec, '=');
	if (!eq)
		return bad_option("--shape needs INPUT=D0xD1x..., got '%s'", spec);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
	dimspec ds[OX_MAX_RANK];
	int rank;
	if (parse_dims(eq + 1, ds, &rank))
		return bad_option("--shape: malformed dims in '%s' (each is N, LO..HI or LO..HI:B1,B2,...)", spec);
	int pos = ox_ir_find_input(g, name);
	ox_id id = pos < 0 ? -1 : g->inputs[pos];
	if (id < 0) {
		fprintf(stderr, "%s: --shape: the model has no input '%s'; its inputs are:", g->path, name);
		for (int k = 0; k < g->ninputs; k++)
			fprintf(stderr, " '%s'", g->vals[g->inputs[k]].name);
		fprintf(stderr, "\n");
		return 1;
	}
	ox_value *v = &g->vals[id];
	if (v->has_shape && v->shape.rank != rank) {
		ox_error(g, NULL, "--shape %s: rank %d, but the model declares rank %d", name, rank, v->shape.rank);
		return 1;
	}
	ox_shape sh = {rank, {0}};
	for (int d = 0; d < rank; d++) {
		ox_dim m = v->has_shape ? v->shape.d[d] : 0;
		if (v->has_shape && m >= 0 && (m != ds[d].lo || m != ds[d].hi)) {
			ox_error(g, NULL, "--shape %s: dim %d is %lld in the model, not %s", name, d, (long long)m,
				 strchr(eq + 1, '.') ? "a range" : "what is given");
			return 1;
		}
		if (ds[d].lo == ds[d].hi && !(v->has_shape && m < 0)) {
			sh.d[d] = ds[d].lo;
			continue;
		}
		/* a range, or a value for a symbol: the model's symbol, else a
		 * new one named after the input and the axis */
		const char *sym;
		char own[600];
		if (v->has_shape && m < 0 && OX_DX(g)->dexprs[-m - 1].op == OX_DE_SYM) {
			sym = OX_DX(g)->dexprs[-m - 1].sym;
		} else if (v->has_shape && m < 0) {
			ox_error(g, NULL, "--shape %s: dim %d is an expression in the model; give its symbols with --dim",
				 name, d);
			return 1;
		} else {
			snprintf(own, sizeof own, "%s:%d", name, d);
			sym = own;
		}
		sh.d[d] = ox_dim_sym(g, sym);
		if (set_sym(g, sym, &ds[d]))
			return 1;
	}
	v->has_shape = 1;
	v->shape = sh;
	return 0;
}

/* --like NAME=FILE: the graph input takes the structure of the example */
static int apply_like(ox_graph *g, const char *spec)
{
	const char *eq = strchr(spec, '=');
	if (!eq || !eq[1])
		return bad_option("--like needs INPUT=FILE.pb, got '%s'", spec);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
	return ox_fe_like(g, name, eq + 1) ? 1 : 0;
}

/* --const NAME=FILE: the graph input becomes a constant with that value */
static int apply_const(ox_graph *g, const char *spec)
{
	const char *eq = strchr(spec, '=');
	if (!eq || !eq[1])
		return bad_option("--const needs INPUT=FILE.pb|FILE.npy, got '%s'", spec);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
	int k = ox_ir_find_input(g, name);
	if (k < 0) {
		ox_error(g, NULL, "--const: the model has no input '%s'", name);
		return 1;
	}
	ox_tensor *t = ox_fe_load_tensor(g, eq + 1);
	if (!t)
		return 1;
	ox_value *v = &g->vals[g->inputs[k]];
	if (v->dtype && v->dtype != t->dtype) {
		ox_error(g, NULL, "--const %s: the file holds %s, the input is %s", name,
			 ox_dtype_name(t->dtype), ox_dtype_name(v->dtype));
		return 1;
	}
	if (v->has_shape && v->shape.rank != t->shape.rank) {
		ox_error(g, NULL, "--const %s: the file has rank %d, the input rank %d", name,
			 t->shape.rank, v->shape.rank);
		return 1;
	}
	ox_ir_set_const(g, g->inputs[k], t);
	memmove(&g->inputs[k], &g->inputs[k + 1], (size_t)(g->ninputs - k - 1) * sizeof *g->inputs);
	g->ninputs--;
	return 0;
}

static int apply_dim(ox_graph *g, const char *spec)
{
	const char *eq = strrchr(spec, '=');
	if (!eq || !eq[1])
		return bad_option("--dim needs SYMBOL=N or SYMBOL=LO..HI, got '%s'", spec);
	dimspec d;
	const char *end;
	if (parse_dimspec(eq + 1, &end, &d) || *end)
		return bad_option("--dim: '%s' is not N, LO..HI or LO..HI:B1,B2,... (non-negative, "
				  "increasing)", eq + 1);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
	if (ox_ir_set_range(g, name, d.lo, d.hi) < 0) {
		ox_error(g, NULL, "--dim: the model has no symbolic dim '%s'", name);
		return 1;
	}
	return note_buckets(g, name, &d) ? 1 : 0;
}

/* --rt-inputs first|all (testing the run-time paths on models with fixed
 * shapes, tests/e2e/conformance.sh): every fixed dim d >= 2 of a graph
 * input (axis 0 only, with first) becomes the run-time dim "rtD" in
 * d..2d, one symbol for the dims of equal size, so that the program runs
 * the model's own data through code for a range of shapes. */
static int apply_rt_inputs(ox_graph *g, const char *how)
{
	int all = !strcmp(how, "all");
	if (!all && strcmp(how, "first"))
		return bad_option("--rt-inputs '%s': expected first or all", how);
	for (int k = 0; k < g->ninputs; k++) {
		ox_value *v = &g->vals[g->inputs[k]];
		/* not the shapes' own tensors (a Reshape's target, axes) */
		if (!v->has_shape || v->agg || (ox_dtype_is_int(v->dtype) && v->shape.rank <= 1))
			continue;
		for (int d = 0; d < v->shape.rank && (all || d == 0); d++) {
			int64_t x = v->shape.d[d];
			if (x < 2 || x > ((int64_t)1 << 30))
				continue;
			char sym[32];
			snprintf(sym, sizeof sym, "rt%lld", (long long)x);
			v->shape.d[d] = ox_dim_sym(g, sym);
			ox_ir_set_range(g, sym, x, 2 * x);
		}
	}
	return 0;
}

/* --max NAME=N: value NAME holds at most N elements */
static int apply_max(ox_graph *g, const char *spec)
{
	const char *eq = strrchr(spec, '=');
	char *end;
	if (!eq || !eq[1])
		return bad_option("--max needs VALUE=N, got '%s'", spec);
	long long v = strtoll(eq + 1, &end, 10);
	if (*end || v < 1)
		return bad_option("--max: '%s' is not a positive count of elements", eq + 1);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
	g->caps = realloc(g->caps, (size_t)(g->ncaps + 1) * sizeof *g->caps);
	if (!g->caps)
		ox_die("out of memory");
	g->caps[g->ncaps].name = ox_ir_strdup(g, name);
	g->caps[g->ncaps++].elems = v;
	return 0;
}

static int run_cmd(char *const argv[])
{
	if (ox_verbose) {
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
		fputc('\n', stderr);
	}
	size_t n = 0;
	for (int i = 0; argv[i]; i++)
		n += strlen(argv[i]) * 4 + 3;
	char *cmd = malloc(n + 1), *p = cmd;
	for (int i = 0; argv[i]; i++) {
		/* single-quote each word for /bin/sh */
		*p++ = i ? ' ' : '\'';
		if (i)
			*p++ = '\'';
		for (const char *s = argv[i]; *s; s++) {
			if (*s == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *s;
			}
		}
		*p++ = '\'';
	}
	*p = 0;
	int st = system(cmd);
	free(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static char *strip_ext(const char *path)
{
	char *s = strdup(path);
	char *dot = strrchr(s, '.'), *slash = strrchr(s, '/');
	if (dot && (!slash || dot > slash))
		*dot = 0;
	return s;
}

/* default prefix: the OUT file's base name as a C identifier */
static void default_prefix(const char *out, char *buf, size_t n)
{
	char *base = strip_ext(out);
	const char *b = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
	snprintf(buf, n, "%s%s", isdigit((unsigned char)b[0]) ? "_" : "", b);
	for (char *c = buf; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			*c = '_';
	free(base);
}

/* --build with --target cuda: OUT_weights.c and OUT_main.c by $CC (C),
 * OUT.cu by nvcc ($NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on the
 * PATH) for sm_80 and sm_90, or with --cuda-emu by the host C++ compiler
 * ($CXX, else c++) against ox_cuda_emu.h beside it */
static int build_cuda(const char *out, int emu)
{
	char *exe = strip_ext(out);
	size_t n = strlen(exe) + 32;
	char *cu = malloc(n), *wc = malloc(n), *mc = malloc(n), *wo = malloc(n), *mo = malloc(n), *inc = malloc(n + 4);
	snprintf(cu, n, "%s.cu", exe), snprintf(wc, n, "%s_weights.c", exe), snprintf(mc, n, "%s_main.c", exe);
	snprintf(wo, n, "%s_weights.o", exe), snprintf(mo, n, "%s_main.o", exe);
	const char *slash = strrchr(exe, '/');
	snprintf(inc, n + 4, "-I%.*s", slash ? (int)(slash - exe) : 1, slash ? exe : ".");
	const char *cc = getenv("CC"), *cxx = getenv("CXX"), *nv = getenv("NVCC");
	cc = cc && *cc ? cc : "cc";
	if (!nv || !*nv)
		nv = access("/usr/local/cuda/bin/nvcc", X_OK) ? "nvcc" : "/usr/local/cuda/bin/nvcc";
	char *c1[] = {(char *)cc, "-std=c11", "-O2", "-c", wc, "-o", wo, NULL};
	char *c2[] = {(char *)cc, "-std=c11", "-O2", "-c", mc, "-o", mo, NULL};
	char *ce[] = {(char *)(cxx && *cxx ? cxx : "c++"), "-std=c++17", "-O2", "-DOX_CUDA_EMU", inc, "-x", "c++", cu,
		      "-x", "none", wo, mo, "-o", exe, "-lm", "-pthread", NULL};
	char *cn[] = {(char *)nv, "-std=c++17", "-O3", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
		      "arch=compute_90,code=sm_90", cu, wo, mo, "-o", exe, NULL};
	int st = run_cmd(c1);
	if (!st)
		st = run_cmd(c2);
	if (!st)
		st = run_cmd(emu ? ce : cn);
	if (st)
		fprintf(stderr, "onnxcc: building %s failed (exit %d)\n", exe, st);
	remove(wo), remove(mo);
	free(exe), free(cu), free(wc), free(mc), free(wo), free(mo), free(inc);
	return st ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *model = NULL, *out = NULL, *target = "c", *name = NULL, *dump = NULL;
	const char *shapes[MAX_BINDS], *dims[MAX_BINDS], *consts[MAX_BINDS], *likes[MAX_BINDS], *maxes[MAX_BINDS];
	const char *strcap = NULL, *cpu = NULL, *opt = NULL, *wino = NULL;
	int print_cflags = 0;
	int nshapes = 0, ndims = 0, nconsts = 0, nlikes = 0, nmaxes = 0, with_main = 0, build = 0, report = 0;
	int cuda_emu = 0, tf32 = 0, nhwc = 1, nhwc_set = 0;
	const char *maxelems = NULL, *rtinputs = NULL, *unrolls = NULL;
	const char *graph = NULL, *html = NULL; /* --graph FILE, --report=html[:FILE] ("" default) */
	int weights = OX_CG_WEIGHTS_EMBED;
	const char *wmode = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (!strcmp(a, "-o") && more)
			out = argv[++i];
		else if (!strcmp(a, "--target") && more)
			target = argv[++i];
		else if (!strncmp(a, "--target=", 9))
			target = a + 9;
		else if (!strcmp(a, "--name") && more)
			name = argv[++i];
		else if (!strcmp(a, "--cpu") && more)
			cpu = argv[++i];
		else if (!strncmp(a, "--cpu=", 6))
			cpu = a + 6;
		else if (!strcmp(a, "--print-cflags"))
			print_cflags = 1;
		else if (!strcmp(a, "--skip") && more) {
			if (ox_opt_skip(argv[++i])) {
				char msg[512], names[256];
				ox_opt_skippable(names, sizeof names);
				snprintf(msg, sizeof msg, "--skip '%s': not a pass that may be skipped (%s)", argv[i], names);
				return bad_option("%s", msg);
			}
		} else if (!strcmp(a, "--opt") && more)
			opt = argv[++i];
		else if (!strncmp(a, "--opt=", 6))
			opt = a + 6;
		else if (!strcmp(a, "--winograd") && more)
			wino = argv[++i];
		else if (!strncmp(a, "--winograd=", 11))
			wino = a + 11;
		else if (!strcmp(a, "--shape") && more && nshapes < MAX_BINDS)
			shapes[nshapes++] = argv[++i];
		else if (!strcmp(a, "--dim") && more && ndims < MAX_BINDS)
			dims[ndims++] = argv[++i];
		else if (!strcmp(a, "--const") && more && nconsts < MAX_BINDS)
			consts[nconsts++] = argv[++i];
		else if (!strcmp(a, "--like") && more && nlikes < MAX_BINDS)
			likes[nlikes++] = argv[++i];
		else if (!strcmp(a, "--max") && more && nmaxes < MAX_BINDS)
			maxes[nmaxes++] = argv[++i];
		else if (!strcmp(a, "--max-elems") && more)
			maxelems = argv[++i];
		else if (!strcmp(a, "--rt-inputs") && more)
			rtinputs = argv[++i];
		else if (!strcmp(a, "--unroll") && more)
			unrolls = argv[++i];
		else if (!strcmp(a, "--string-capacity") && more)
			strcap = argv[++i];
		else if (!strcmp(a, "--weights") && more)
			wmode = argv[++i];
		else if (!strncmp(a, "--weights=", 10))
			wmode = a + 10;
		else if (!strcmp(a, "--report"))
			report = 1;
		else if (!strcmp(a, "--report=json"))
			report = 2;
		else if (!strcmp(a, "--report=text"))
			report = 1;
		else if (!strcmp(a, "--report=html"))
			html = "";
		else if (!strncmp(a, "--report=html:", 14) && a[14])
			html = a + 14;
		else if (!strcmp(a, "--graph") && more)
			graph = argv[++i];
		else if (!strncmp(a, "--graph=", 8) && a[8])
			graph = a + 8;
		else if (!strcmp(a, "--main"))
			with_main = 1;
		else if (!strcmp(a, "--build"))
			build = with_main = 1;
		else if (!strcmp(a, "--cuda-emu"))
			cuda_emu = 1;
		else if (!strcmp(a, "--tf32"))
			tf32 = 1;
		else if (!strcmp(a, "--cuda-layout") && more) {
			const char *l = argv[++i];
			if (strcmp(l, "nhwc") && strcmp(l, "nchw"))
				return bad_option("--cuda-layout '%s': expected nhwc or nchw", l);
			nhwc = !strcmp(l, "nhwc");
			nhwc_set = 1;
		}
		else if (!strcmp(a, "-v"))
			ox_verbose = 1;
		else if (!strcmp(a, "--dump-ir"))
			dump = "";
		else if (!strncmp(a, "--dump-ir=", 10))
			dump = a + 10;
		else if (!strcmp(a, "--version")) {
			printf("onnxcc %s%s%s%s\n", OX_VERSION, *OX_COMMIT ? " (git " : "", OX_COMMIT,
			       *OX_COMMIT ? ")" : "");
			return 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (a[0] == '-')
			return bad_option("unknown or incomplete option '%s'", a);
		else if (!model)
			model = a;
		else
			return bad_option("more than one model given ('%s')", a);
	}
	const ox_target *tgt = ox_target_default();
	if (cpu && !(tgt = ox_target_find(cpu))) {
		fprintf(stderr, "onnxcc: --cpu '%s' is not known; the targets are:\n", cpu);
		for (const ox_target *t = ox_targets; t->name; t++)
			fprintf(stderr, "  %-10s %s\n", t->name, t->about);
		fprintf(stderr, "  %-10s this machine (detected)\n", "native");
		return 1;
	}
	if (print_cflags) {
		printf("-std=c11 -O2%s%s\n", *tgt->cflags ? " " : "", tgt->cflags);
		return 0;
	}
	if (opt && strcmp(opt, "0") && strcmp(opt, "1"))
		return bad_option("--opt '%s': expected 0 or 1", opt);
	int winograd = 1; /* g->winograd: 0 off, 1 by the cost model, 2 or 4 forced */
	if (wino) {
		static const char *const names[] = {"off", "on", "2", NULL, "4"};
		for (winograd = 0; winograd < 5 && (!names[winograd] || strcmp(wino, names[winograd])); winograd++)
			;
		if (winograd == 5)
			return bad_option("--winograd '%s': expected on, off, 2 or 4", wino);
	}
	if (!model)
		return bad_option("%s", "no model given");
	if (!out && !dump && !graph)
		return bad_option("%s", "no output given (-o OUT.c)");
	if (!out && !dump && (report || html || build || with_main))
		return bad_option("%s", "--report, --main and --build need an output (-o OUT.c)");
	int cuda = !strcmp(target, "cuda");
	if (strcmp(target, "c") && !cuda)
		return bad_option("--target '%s' is not supported (available: c, cuda)", target);
	if (cuda_emu && !cuda)
		return bad_option("%s", "--cuda-emu is for --target cuda");
	if (tf32 && !cuda)
		return bad_option("%s", "--tf32 is for --target cuda");
	if (nhwc_set && !cuda)
		return bad_option("%s", "--cuda-layout is for --target cuda");
	if (wmode && !strcmp(wmode, "external"))
		weights = OX_CG_WEIGHTS_EXTERNAL;
	else if (wmode && !strcmp(wmode, "c"))
		weights = OX_CG_WEIGHTS_C;
	else if (wmode && strcmp(wmode, "embed"))
		return bad_option("--weights '%s': expected embed, external or c", wmode);
	if (cuda && weights == OX_CG_WEIGHTS_C)
		return bad_option("%s", "--weights c is for the C target (--target cuda: embed or external)");
	if (dump && *dump) {
		int ok = 0;
		for (const ox_pass *p = ox_pipeline; p->name; p++)
			ok |= !strcmp(p->name, dump);
		if (!ok && strcmp(dump, "import"))
			return bad_option("--dump-ir=%s: no such pass", dump);
	}
	char prefix[256];
	if (name) {
		snprintf(prefix, sizeof prefix, "%s", name);
		for (char *c = prefix; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return bad_option("--name '%s' is not a C identifier", name);
		if (isdigit((unsigned char)prefix[0]))
			return bad_option("--name '%s' is not a C identifier", name);
	} else {
		default_prefix(out ? out : "net", prefix, sizeof prefix);
	}

	long unroll = 4096;
	if (unrolls) {
		char *e;
		unroll = strtol(unrolls, &e, 10);
		if (*e || unroll < 0 || unroll > 200000)
			return bad_option("--unroll '%s': expected 0 to 200000 nodes", unrolls);
	}
	long long max_elems = 0;
	if (maxelems) {
		char *e;
		max_elems = strtoll(maxelems, &e, 10);
		if (*e || max_elems < 1)
			return bad_option("--max-elems '%s': expected a positive count of elements", maxelems);
	}
	long capacity = 256;
	if (strcap) {
		char *e;
		capacity = strtol(strcap, &e, 10);
		if (*e || capacity < 1 || capacity > (1L << 24))
			return bad_option("--string-capacity '%s': expected 1 to 16777216 bytes", strcap);
	}
#ifdef NDEBUG
	int check = 0;
#else
	int check = 1;
#endif
	/* Load, bind and optimize once; with buckets once per combination of
	 * them (load again, each bucketed symbol narrowed to its bucket), the
	 * specializations the program dispatches between. */
	ox_graph *gs[MAX_SPECS];
	int ngs = 0, nspecs = 1, rc = 0;
	for (int spec = 0; spec < nspecs && !rc; spec++) {
		ox_graph *g = ox_fe_load(model);
		if (!g)
			return 1;
		gs[ngs++] = g;
		g->string_capacity = (int)capacity;
		g->target = tgt;
		g->opt = opt ? atoi(opt) : 1;
		g->winograd = winograd;
		g->gpu = cuda;
		g->nhwc = nhwc;
		g->max_elems = max_elems;
		g->unroll = (int)unroll;
		for (int i = 0; i < nconsts && !rc; i++)
			rc = apply_const(g, consts[i]);
		for (int i = 0; i < nlikes && !rc; i++)
			rc = apply_like(g, likes[i]);
		for (int i = 0; i < nshapes && !rc; i++)
			rc = apply_shape(g, shapes[i]);
		for (int i = 0; i < ndims && !rc; i++)
			rc = apply_dim(g, dims[i]);
		for (int i = 0; i < nmaxes && !rc; i++)
			rc = apply_max(g, maxes[i]);
		if (!rc && rtinputs)
			rc = apply_rt_inputs(g, rtinputs);
		if (!rc && spec == 0) {
			for (int b = 0; b < nbucketed; b++)
				nspecs *= bucketed[b].d.nb;
			if (nspecs > MAX_SPECS) {
				ox_error(g, NULL, "the buckets make %d specializations, more than %d", nspecs, MAX_SPECS);
				rc = 1;
			}
			if (nspecs > 1 && dump) {
				ox_error(g, NULL, "--dump-ir shows one graph: give ranges without buckets");
				rc = 1;
			}
		}
		/* this specialization's bucket of each bucketed symbol (mixed radix) */
		for (int b = 0, at = spec; b < nbucketed && !rc; b++) {
			const dimspec *d = &bucketed[b].d;
			int k = at % d->nb;
			at /= d->nb;
			ox_ir_set_range(g, bucketed[b].sym, k ? d->b[k - 1] + 1 : d->lo, d->b[k]);
		}
		if (!rc && dump && !strcmp(dump, "import")) {
			ox_ir_dump(g, stdout);
			ox_ir_free(g);
			return 0;
		}
		/* a dump that stops before the bounds pass may show symbolic dims */
		g->symbolic_ok = dump && *dump && strcmp(dump, "bounds") && strcmp(dump, "plan");
		if (!rc)
			rc = ox_opt_run(g, check, dump && *dump ? dump : NULL) ? 1 : 0;
	}
	ox_graph *g = gs[ngs - 1]; /* the report and the picture show the last (largest) one */
	if (!rc && dump) {
		ox_ir_dump(g, stdout);
		ox_ir_free(g);
		return 0;
	}
	const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
	if (!rc && out) {
		ox_cg_stats st = {0};
		ox_cg_opts o = {out, prefix, base, with_main, weights, &st, cuda, cuda_emu, tf32};
		rc = ox_cg_emit_c_specs(gs, ngs, &o) ? 1 : 0;
		ox_rp_info ri = {base, out, weights, &st};
		if (!rc && report == 1)
			ox_rp_text(stdout, g, &ri);
		if (!rc && report == 2)
			ox_rp_json(stdout, g, &ri);
		if (!rc && html) {
			char *stem = strip_ext(out), *path = NULL;
			if (!*html) {
				path = malloc(strlen(stem) + 16);
				sprintf(path, "%s.report.html", stem);
			}
			rc = ox_rp_html(path ? path : html, g, &ri) ? 1 : 0;
			if (!rc)
				fprintf(stderr, "onnxcc: report written to %s\n", path ? path : html);
			free(stem), free(path);
		}
		free(st.slow);
	}
	if (!rc && graph)
		rc = ox_rp_graph(graph, g, base) ? 1 : 0;
	for (int k = 0; k < ngs; k++)
		ox_ir_free(gs[k]);
	if (rc || !build)
		return rc;

	if (cuda)
		return build_cuda(out, cuda_emu);
	char *exe = strip_ext(out);
	size_t n = strlen(exe) + 16;
	char *wc = malloc(n), *mc = malloc(n);
	snprintf(wc, n, "%s_weights.c", exe);
	snprintf(mc, n, "%s_main.c", exe);
	const char *cc = getenv("CC");
	/* the target's flags, one word each ("-march=x86-64-v4") */
	/* then $ONNXCC_CFLAGS, one word each (a sanitizer build: tests/sanitize.sh) */
	const char *extra = getenv("ONNXCC_CFLAGS");
	char *args[40] = {(char *)(cc && *cc ? cc : "cc"), "-std=c11", "-O2"};
	int na = 3;
	char *flags = malloc(strlen(tgt->cflags) + (extra ? strlen(extra) : 0) + 2);
	sprintf(flags, "%s %s", tgt->cflags, extra ? extra : "");
	for (char *w = strtok(flags, " "); w && na < 32; w = strtok(NULL, " "))
		args[na++] = w;
	char *tail[] = {"-pthread", "-o", exe, (char *)out, wc, mc, "-lm", NULL};
	for (int k = 0; tail[k]; k++)
		args[na++] = tail[k];
	args[na] = NULL;
	int st = run_cmd(args);
	if (st)
		fprintf(stderr, "onnxcc: building %s failed (%s exited with %d)\n", exe, args[0], st);
	free(exe), free(wc), free(mc), free(flags);
	return st ? 1 : 0;
}
