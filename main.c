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

#define MAX_SPECS 64

/* The command line, one row per option: the source of --help (and so of
 * the man page: tools/man.awk reads the help), of the parser below, and of
 * --options, which prints the rows as JSON for the Python package
 * (python/onnxcc: its keyword arguments and docstrings). An option is
 * written here once. Each row: the option, what it takes (NULL: a flag;
 * "[=ARG]": an optional "=ARG"), its kind, the Python keyword (NULL: none,
 * or set by the package itself), and the help, lines of at most 66
 * characters. Values: "--opt VALUE" or "--opt=VALUE"; O_LIST options may
 * be given more than once (Python: a dict for NAME=VALUE ones, else a
 * list). */
enum { O_FLAG, O_VALUE, O_LIST, O_OPTVAL };
typedef struct {
	const char *name, *arg;
	int kind;
	const char *py, *help;
} cli_opt;
enum {
	OPT_OUT, OPT_NAME, OPT_TARGET, OPT_CUDA_EMU, OPT_TF32, OPT_CUDA_LAYOUT, OPT_CPU, OPT_PRINT_CFLAGS, OPT_OPT,
	OPT_SKIP, OPT_WINOGRAD, OPT_SHAPE, OPT_DIM, OPT_MAX, OPT_MAX_ELEMS, OPT_UNROLL, OPT_RT_INPUTS, OPT_CONST,
	OPT_LIKE, OPT_WEIGHTS, OPT_STRING_CAPACITY, OPT_REPORT, OPT_GRAPH, OPT_MAIN, OPT_POOL, OPT_BUILD, OPT_SHARED,
	OPT_DUMP_IR, OPT_VERBOSE, OPT_OPTIONS, OPT_VERSION, OPT_HELP, NOPT
};
static const cli_opt opts[NOPT] = {
	[OPT_OUT] = {"-o", "OUT.c", O_VALUE, NULL, "the C file to write; the others are named after it"},
	[OPT_NAME] = {"--name", "PREFIX", O_VALUE, "name", "the prefix of every exported symbol (default: OUT's base name)"},
	[OPT_TARGET] = {"--target", "c|cuda", O_VALUE, "target",
			"the language of the output: c (the default) or cuda: OUT.cu, CUDA C++\n"
			"for nvcc (host code and kernels; docs/cuda.md) beside OUT.h and the weights"},
	[OPT_CUDA_EMU] = {"--cuda-emu", NULL, O_FLAG, "cuda_emu",
			  "with --target cuda: --build makes the program with the host C++ compiler\n"
			  "and ox_cuda_emu.h (written beside OUT), which runs the kernels on the CPU"},
	[OPT_TF32] = {"--tf32", NULL, O_FLAG, "tf32",
		      "with --target cuda: f32 convolutions and GEMMs on tensor cores in TF32\n"
		      "(10-bit mantissas in the products; f16/bf16 ones use them always, exactly)"},
	[OPT_CUDA_LAYOUT] = {"--cuda-layout", "nhwc|nchw", O_VALUE, "cuda_layout",
			     "nhwc (default): Conv chains NHWC on the GPU; nchw: every value\n"
			     "plain (to measure)"},
	[OPT_CPU] = {"--cpu", "NAME", O_VALUE, "cpu",
		     "the CPU the code is for: generic (the default: portable C11),\n"
		     "x86-64-v3 (AVX2+FMA), x86-64-v4 (AVX-512), armv8-a (NEON),\n"
		     "armv8.2-a+dotprod (NEON and the int8 dot product), the cores\n"
		     "cortex-a53 (armv8-a), cortex-a76 and neoverse-n1 (armv8.2-a+dotprod,\n"
		     "-mcpu= the core) or native (this machine); sets vector width, tiles\n"
		     "and --build's flags"},
	[OPT_PRINT_CFLAGS] = {"--print-cflags", NULL, O_FLAG, NULL, "print the compiler flags for --cpu and exit"},
	[OPT_OPT] = {"--opt", "0|1", O_VALUE, "opt", "1 (default): the optimizing passes; 0: only what codegen needs"},
	[OPT_SKIP] = {"--skip", "PASS", O_LIST, "skip",
		      "leave that optimizing pass out (to measure what it gains):\n"
		      "attention, norm, epilogue, siblings, gemmnorm, dwpw, cse or ewfuse\n"
		      "(opt/pipeline.c; may be given more than once)"},
	[OPT_WINOGRAD] = {"--winograd", "on|off|2|4", O_VALUE, "winograd",
			  "on (default): 3x3 convolutions by Winograd F(4x4) or F(2x2, 3x3)\n"
			  "where the cost model says it pays (faster, rounding errors a few\n"
			  "times the direct kernels'); off: never; 2 or 4: F(2x2) or F(4x4)\n"
			  "for every 3x3 convolution it can compute (to measure)"},
	[OPT_SHAPE] = {"--shape", "INPUT=D0xD1x...", O_LIST, "shapes",
		       "the shape of a graph input: each dim N, or LO..HI for any size in\n"
		       "that range, given when the program runs (PREFIX_run_shaped), or\n"
		       "LO..HI:B1,B2,... for one specialization per bucket LO..B1,\n"
		       "B1+1..B2, ..., up to HI, each planned and tuned for its top;\n"
		       "binds or ranges the model's symbolic dims"},
	[OPT_DIM] = {"--dim", "SYMBOL=N|LO..HI[:B1,B2,...]", O_LIST, "dims",
		     "a symbolic dim everywhere: N, LO..HI or LO..HI:B1,B2,... (as --shape)"},
	[OPT_MAX] = {"--max", "VALUE=N", O_LIST, "max",
		     "VALUE holds at most N elements: the bound of a size read from data\n"
		     "at run time that the compiler cannot derive (a Range's length, a\n"
		     "Resize to sizes given as an input); a run that needs more returns\n"
		     "PREFIX_ERR_SHAPE"},
	[OPT_MAX_ELEMS] = {"--max-elems", "N", O_VALUE, "max_elems", "the same bound for every such value that --max does not name"},
	[OPT_UNROLL] = {"--unroll", "N", O_VALUE, "unroll",
			"a Loop or Scan of constant length is unrolled when that adds at\n"
			"most N nodes (default 4096); others, and every If whose condition\n"
			"is known only at run time, are C control flow (0: always)"},
	[OPT_RT_INPUTS] = {"--rt-inputs", "first|all", O_VALUE, "rt_inputs",
			   "for testing the run-time paths, every fixed dim d >= 2\n"
			   "of a graph input (first: axis 0 only) becomes a run-time dim in d..2d"},
	[OPT_CONST] = {"--const", "INPUT=FILE", O_LIST, "consts",
		       "freeze a graph input to the tensor in FILE (.pb or .npy): the code\n"
		       "is then specialized for that value and the input disappears"},
	[OPT_LIKE] = {"--like", "INPUT=FILE", O_LIST, "likes",
		      "compile a graph input for the structure of the example in FILE:\n"
		      "a sequence (SequenceProto: its length, element types and shapes),\n"
		      "an optional (OptionalProto: empty or not) or a tensor's shape"},
	[OPT_WEIGHTS] = {"--weights", "embed|array|external|c", O_VALUE, "weights",
			 "embed (default): the weights are compiled in from OUT_weights.c.bin\n"
			 "(.incbin or #embed; inline when tiny); array: from OUT_weights.inc,\n"
			 "a C array, for compilers with neither; external: written to\n"
			 "OUT_weights.bin, which the application passes to PREFIX_init;\n"
			 "c: one C array per tensor in OUT_weights.c"},
	[OPT_STRING_CAPACITY] = {"--string-capacity", "N", O_VALUE, "string_capacity",
				 "bytes each new string element may hold (default 256);\n"
				 "a longer result makes the run return PREFIX_ERR_CAPACITY"},
	[OPT_REPORT] = {"--report", "[=json|=html[:FILE]]", O_OPTVAL, NULL,
			"print the memory plan (arena, lower bound, largest live set),\n"
			"weight and code sizes; =json: also every tensor's place and lifetime;\n"
			"=html: the same as one self-contained page with a memory timeline\n"
			"(each tensor a bar over the schedule at its arena offset), written\n"
			"to FILE (default OUT.report.html); may be given with --report"},
	[OPT_GRAPH] = {"--graph", "FILE.svg|FILE.dot", O_VALUE, "graph",
		       "draw the optimized, planned graph (nodes, fused ops, kernels;\n"
		       "edges: tensors with dtype, shape, layout, arena offset and size):\n"
		       "FILE.svg with Graphviz's dot when it is on PATH (else the DOT goes\n"
		       "to FILE.dot, said on stderr), any other FILE gets Graphviz DOT;\n"
		       "without -o only the picture is written"},
	[OPT_MAIN] = {"--main", NULL, O_FLAG, NULL, "also write a test program: OUT [--bench N] INPUT... -o OUTDIR"},
	[OPT_POOL] = {"--pool", NULL, O_FLAG, NULL,
		      "also write OUT_pool.h: a thread pool over POSIX threads for the\n"
		      "network's loops, PREFIX_set_threads(n) (docs/api.md; implied by --main)"},
	[OPT_BUILD] = {"--build", NULL, O_FLAG, NULL,
		       "compile the result into the executable OUT with $CC (implies --main)\n"
		       "and the words of $ONNXCC_CFLAGS after the target's flags"},
	[OPT_SHARED] = {"--shared", NULL, O_FLAG, NULL,
			"compile the result into the shared library OUT.so, with the\n"
			"stable C ABI onnxcc_* (docs/python.md) that the Python package\n"
			"loads by ctypes; $CC as --build (--target cuda: nvcc, or the host\n"
			"C++ compiler with --cuda-emu)"},
	[OPT_DUMP_IR] = {"--dump-ir", "[=PASS]", O_OPTVAL, NULL, "print the IR after the pipeline (or after pass PASS) and stop"},
	[OPT_VERBOSE] = {"-v", NULL, O_FLAG, NULL, "print each pass and each command run"},
	[OPT_OPTIONS] = {"--options", NULL, O_FLAG, NULL, "print this table of options as JSON (for python/onnxcc) and exit"},
	[OPT_VERSION] = {"--version", NULL, O_FLAG, NULL, "print the version (and the git commit it was built from) and exit"},
	[OPT_HELP] = {"--help", NULL, O_FLAG, NULL, "print this help and exit (also -h)"},
};

/* --help: the synopsis from the table (options that compile a model),
 * then each option's help */
static void print_usage(FILE *f)
{
	const char *lead = "usage: onnxcc MODEL.onnx";
	fputs(lead, f);
	int col = (int)strlen(lead);
	for (int k = 0; k < NOPT; k++) {
		if (k == OPT_PRINT_CFLAGS || k >= OPT_OPTIONS)
			continue;
		const cli_opt *o = &opts[k];
		char w[128];
		if (k == OPT_OUT)
			snprintf(w, sizeof w, "%s %s", o->name, o->arg);
		else
			snprintf(w, sizeof w, "[%s%s%s]%s", o->name, o->arg && o->kind != O_OPTVAL ? " " : "",
				 o->arg ? o->arg : "", o->kind == O_LIST ? "..." : "");
		if (col + 1 + (int)strlen(w) > 100) {
			fputs("\n             ", f);
			col = 13;
		}
		fprintf(f, " %s", w);
		col += 1 + (int)strlen(w);
	}
	fputs("\n       onnxcc --print-cflags [--cpu NAME] | --options | --version | --help\n"
	      "Writes OUT.c, OUT.h and the weights (OUT_weights.c and its blob), and OUT_main.c\n"
	      "with --main.\n", f);
	for (int k = 0; k < NOPT; k++) {
		const char *h = opts[k].help;
		int n = (int)strlen(opts[k].name);
		for (int first = 1; *h; first = 0) {
			const char *nl = strchr(h, '\n');
			int len = nl ? (int)(nl - h) : (int)strlen(h);
			if (first)
				fprintf(f, "  %s%*s%.*s\n", opts[k].name, n < 10 ? 11 - n : 2, "", len, h);
			else
				fprintf(f, "%13s%.*s\n", "", len, h);
			h += len + (nl != NULL);
		}
	}
	fputs("Exit status: 0 on success, 1 on any error, after a message naming the file\n"
	      "and, where there is one, the node; on an error nothing is written.\n", f);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* --options: the table as a JSON array, one object per option */
static void print_options(FILE *f)
{
	static const char *const kinds[] = {"flag", "value", "list", "optional"};
	fputs("[\n", f);
	for (int k = 0; k < NOPT; k++) {
		fputs("  {\"option\": ", f);
		json_str(f, opts[k].name);
		fputs(", \"arg\": ", f);
		if (opts[k].arg)
			json_str(f, opts[k].arg);
		else
			fputs("null", f);
		fprintf(f, ", \"kind\": \"%s\", \"python\": ", kinds[opts[k].kind]);
		if (opts[k].py)
			json_str(f, opts[k].py);
		else
			fputs("null", f);
		fputs(", \"help\": ", f);
		json_str(f, opts[k].help);
		fprintf(f, "}%s\n", k + 1 < NOPT ? "," : "");
	}
	fputs("]\n", f);
}

static int bad_option(const char *fmt, const char *arg)
{
	fprintf(stderr, "onnxcc: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(onnxcc --help lists the options)\n");
	return 1;
}

/* The parsed command line: the last value of each O_VALUE / O_OPTVAL
 * option ("" for an O_OPTVAL given bare, "1" for a flag), every value of
 * each O_LIST one, the model. */
#define MAX_BINDS 64
typedef struct {
	const char *val[NOPT];
	const char *list[NOPT][MAX_BINDS];
	int n[NOPT];
	const char *model;
} cli;

/* 0, or 1 after a message */
static int parse_cli(int argc, char **argv, cli *c)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		int k = 0;
		if (a[0] != '-') {
			if (c->model)
				return bad_option("more than one model given ('%s')", a);
			c->model = a;
			continue;
		}
		if (!strcmp(a, "-h"))
			a = "--help";
		for (; k < NOPT; k++) {
			size_t n = strlen(opts[k].name);
			if (!strncmp(a, opts[k].name, n) && (a[n] == 0 || (a[n] == '=' && opts[k].kind != O_FLAG))) {
				v = a[n] == '=' ? a + n + 1 : NULL;
				break;
			}
		}
		if (k == NOPT)
			return bad_option("unknown option '%s'", a);
		const cli_opt *o = &opts[k];
		if (o->kind == O_FLAG) {
			c->val[k] = "1";
			continue;
		}
		if (o->kind == O_OPTVAL) { /* the last value, and each in the list */
			c->val[k] = v ? v : "";
			if (c->n[k] < MAX_BINDS)
				c->list[k][c->n[k]++] = c->val[k];
			continue;
		}
		if (!v) {
			if (i + 1 == argc)
				return bad_option("%s needs a value", o->name);
			v = argv[++i];
		}
		if (o->kind == O_VALUE) {
			c->val[k] = v;
		} else if (c->n[k] == MAX_BINDS) {
			fprintf(stderr, "onnxcc: %s is given more than %d times\n", o->name, MAX_BINDS);
			return 1;
		} else {
			c->list[k][c->n[k]++] = v;
		}
	}
	return 0;
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

/* the symbols given a range without buckets: ox_opt_if_splits may find
 * the buckets an If on their size needs */
static struct {
	const char *sym;
	dimspec d;
} ranged[8];
static int nranged;

static int note_buckets(ox_graph *g, const char *sym, const dimspec *d)
{
	if (d->nb < 2) {
		int i = 0;
		while (i < nranged && strcmp(ranged[i].sym, sym))
			i++;
		if (d->lo < d->hi && i == nranged && nranged < 8)
			ranged[nranged].sym = strdup(sym), ranged[nranged++].d = *d;
		return 0;
	}
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

/* a command's words, growing */
typedef struct {
	char **v;
	int n, cap;
} words;

static void word(words *w, const char *s)
{
	if (w->n + 2 > w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		w->v = realloc(w->v, (size_t)w->cap * sizeof *w->v);
		if (!w->v)
			ox_die("out of memory");
	}
	w->v[w->n++] = strdup(s);
	w->v[w->n] = NULL;
}

/* each space-separated word of s (a target's flags, $ONNXCC_CFLAGS) */
static void split_words(words *w, const char *s)
{
	while (s && *s) {
		size_t n = strcspn(s, " ");
		if (n) {
			char *t = strndup(s, n);
			word(w, t);
			free(t);
		}
		s += n + (s[n] == ' ');
	}
}

/* run the command and forget it; its exit status */
static int run_words(words *w)
{
	int st = run_cmd(w->v);
	if (st)
		fprintf(stderr, "onnxcc: %s exited with %d\n", w->v[0], st);
	for (int i = 0; i < w->n; i++)
		free(w->v[i]);
	w->n = 0;
	return st;
}

/* OUT with its extension replaced by ext ("" for none) */
static char *out_with(const char *out, const char *ext)
{
	char *stem = strip_ext(out), *p = malloc(strlen(stem) + strlen(ext) + 1);
	sprintf(p, "%s%s", stem, ext);
	free(stem);
	return p;
}

/* the flags of a shared library's objects: position-independent, every
 * symbol hidden but the onnxcc_* ABI (runtime_min/ox_main.c, OX_SHARED) */
static void shared_flags(words *w, int host)
{
	if (host) {
		word(w, "-fPIC");
		word(w, "-fvisibility=hidden");
	} else {
		word(w, "-Xcompiler");
		word(w, "-fPIC,-fvisibility=hidden");
	}
}

/* --build / --shared with the C target: OUT.c, OUT_weights.c and
 * OUT_main.c by $CC with the target's flags, then $ONNXCC_CFLAGS, into the
 * program OUT or the library OUT.so */
static int build_c(const char *out, const ox_target *tgt, int shared)
{
	char *exe = out_with(out, shared ? ".so" : ""), *wc = out_with(out, "_weights.c");
	char *mc = out_with(out, "_main.c");
	const char *cc = getenv("CC");
	words w = {0};
	word(&w, cc && *cc ? cc : "cc");
	split_words(&w, "-std=c11 -O2");
	split_words(&w, tgt->cflags);
	split_words(&w, getenv("ONNXCC_CFLAGS"));
	if (shared) {
		shared_flags(&w, 1);
		split_words(&w, "-shared -DOX_SHARED");
	}
	split_words(&w, "-pthread -o");
	word(&w, exe);
	word(&w, out);
	word(&w, wc);
	word(&w, mc);
	word(&w, "-lm");
	int st = run_words(&w);
	if (st)
		fprintf(stderr, "onnxcc: building %s failed\n", exe);
	free(w.v), free(exe), free(wc), free(mc);
	return st ? 1 : 0;
}

/* --build / --shared with --target cuda: OUT_weights.c and OUT_main.c by
 * $CC (C), OUT.cu by nvcc ($NVCC, else /usr/local/cuda/bin/nvcc, else nvcc
 * on the PATH) for sm_80 and sm_90, or with --cuda-emu by the host C++
 * compiler ($CXX, else c++) against ox_cuda_emu.h beside it; the host
 * compilers take $ONNXCC_CFLAGS too */
static int build_cuda(const char *out, int emu, int shared)
{
	char *exe = out_with(out, shared ? ".so" : ""), *cu = out_with(out, ".cu");
	char *wc = out_with(out, "_weights.c"), *mc = out_with(out, "_main.c");
	char *wo = out_with(out, shared ? "_weights.pic.o" : "_weights.o"), *mo = out_with(out, shared ? "_shared.o" : "_main.o");
	const char *slash = strrchr(out, '/');
	char *inc = malloc(strlen(out) + 4);
	sprintf(inc, "-I%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
	const char *cc = getenv("CC"), *cxx = getenv("CXX"), *nv = getenv("NVCC");
	if (!nv || !*nv)
		nv = access("/usr/local/cuda/bin/nvcc", X_OK) ? "nvcc" : "/usr/local/cuda/bin/nvcc";
	words w = {0};
	int st = 0;
	for (int k = 0; k < 2 && !st; k++) {
		word(&w, cc && *cc ? cc : "cc");
		split_words(&w, "-std=c11 -O2 -c");
		split_words(&w, getenv("ONNXCC_CFLAGS"));
		if (shared) {
			shared_flags(&w, 1);
			if (k)
				word(&w, "-DOX_SHARED");
		}
		word(&w, k ? mc : wc);
		word(&w, "-o");
		word(&w, k ? mo : wo);
		st = run_words(&w);
	}
	if (!st && emu) {
		word(&w, cxx && *cxx ? cxx : "c++");
		split_words(&w, "-std=c++17 -O2 -DOX_CUDA_EMU");
		split_words(&w, getenv("ONNXCC_CFLAGS"));
		word(&w, inc);
		if (shared) {
			shared_flags(&w, 1);
			word(&w, "-shared");
		}
		split_words(&w, "-x c++");
		word(&w, cu);
		split_words(&w, "-x none");
		word(&w, wo);
		word(&w, mo);
		word(&w, "-o");
		word(&w, exe);
		split_words(&w, "-lm -pthread");
		st = run_words(&w);
	} else if (!st) {
		word(&w, nv);
		split_words(&w, "-std=c++17 -O3 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90");
		if (shared) {
			shared_flags(&w, 0);
			word(&w, "-shared");
		}
		word(&w, cu);
		word(&w, wo);
		word(&w, mo);
		word(&w, "-o");
		word(&w, exe);
		st = run_words(&w);
	}
	if (st)
		fprintf(stderr, "onnxcc: building %s failed\n", exe);
	remove(wo), remove(mo);
	free(w.v), free(exe), free(cu), free(wc), free(mc), free(wo), free(mo), free(inc);
	return st ? 1 : 0;
}

int main(int argc, char **argv)
{
	static cli c; /* (static: the value lists are large) */
	if (parse_cli(argc, argv, &c))
		return 1;
	if (c.val[OPT_HELP]) {
		print_usage(stdout);
		return 0;
	}
	if (c.val[OPT_OPTIONS]) {
		print_options(stdout);
		return 0;
	}
	if (c.val[OPT_VERSION]) {
		printf("onnxcc %s%s%s%s\n", OX_VERSION, *OX_COMMIT ? " (git " : "", OX_COMMIT, *OX_COMMIT ? ")" : "");
		return 0;
	}
	for (int i = 0; i < c.n[OPT_SKIP]; i++)
		if (ox_opt_skip(c.list[OPT_SKIP][i])) {
			char names[256];
			ox_opt_skippable(names, sizeof names);
			fprintf(stderr, "onnxcc: --skip '%s': not a pass that may be skipped (%s)\n", c.list[OPT_SKIP][i],
				names);
			return 1;
		}
	const char *model = c.model, *out = c.val[OPT_OUT], *name = c.val[OPT_NAME], *dump = c.val[OPT_DUMP_IR];
	const char *target = c.val[OPT_TARGET] ? c.val[OPT_TARGET] : "c";
	const char *const *shapes = c.list[OPT_SHAPE], *const *dims = c.list[OPT_DIM];
	const char *const *consts = c.list[OPT_CONST], *const *likes = c.list[OPT_LIKE], *const *maxes = c.list[OPT_MAX];
	int nshapes = c.n[OPT_SHAPE], ndims = c.n[OPT_DIM], nconsts = c.n[OPT_CONST], nlikes = c.n[OPT_LIKE];
	int nmaxes = c.n[OPT_MAX];
	const char *strcap = c.val[OPT_STRING_CAPACITY], *cpu = c.val[OPT_CPU], *opt = c.val[OPT_OPT];
	const char *wino = c.val[OPT_WINOGRAD], *maxelems = c.val[OPT_MAX_ELEMS], *rtinputs = c.val[OPT_RT_INPUTS];
	const char *unrolls = c.val[OPT_UNROLL], *graph = c.val[OPT_GRAPH], *wmode = c.val[OPT_WEIGHTS];
	int print_cflags = c.val[OPT_PRINT_CFLAGS] != NULL, shared = c.val[OPT_SHARED] != NULL;
	int build = c.val[OPT_BUILD] != NULL, with_main = build || shared || c.val[OPT_MAIN],
	    pool = with_main || c.val[OPT_POOL];
	int cuda_emu = c.val[OPT_CUDA_EMU] != NULL, tf32 = c.val[OPT_TF32] != NULL;
	int nhwc = 1, nhwc_set = c.val[OPT_CUDA_LAYOUT] != NULL;
	int weights = OX_CG_WEIGHTS_EMBED;
	ox_verbose = c.val[OPT_VERBOSE] != NULL;
	if (nhwc_set) {
		const char *l = c.val[OPT_CUDA_LAYOUT];
		if (strcmp(l, "nhwc") && strcmp(l, "nchw"))
			return bad_option("--cuda-layout '%s': expected nhwc or nchw", l);
		nhwc = !strcmp(l, "nhwc");
	}
	/* --report (text), =text, =json, =html, =html:FILE; text or json may
	 * come with html */
	int report = 0;
	const char *html = NULL; /* --report=html[:FILE] ("" default) */
	for (int i = 0; i < c.n[OPT_REPORT]; i++) {
		const char *r = c.list[OPT_REPORT][i];
		if (!*r || !strcmp(r, "text"))
			report = 1;
		else if (!strcmp(r, "json"))
			report = 2;
		else if (!strcmp(r, "html"))
			html = "";
		else if (!strncmp(r, "html:", 5) && r[5])
			html = r + 5;
		else
			return bad_option("--report=%s: expected text, json, html or html:FILE", r);
	}
	const ox_target *tgt = ox_target_default();
	if (cpu && !(tgt = ox_target_find(cpu))) {
		fprintf(stderr, "onnxcc: --cpu '%s' is not known; the targets are:\n", cpu);
		for (const ox_target *t = ox_targets; t->name; t++)
			fprintf(stderr, "  %-17s %s\n", t->name, t->about);
		fprintf(stderr, "  %-17s this machine (detected)\n", "native");
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
		return bad_option("%s", "--report, --main, --build and --shared need an output (-o OUT.c)");
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
	else if (wmode && !strcmp(wmode, "array"))
		weights = OX_CG_WEIGHTS_ARRAY;
	else if (wmode && strcmp(wmode, "embed"))
		return bad_option("--weights '%s': expected embed, array, external or c", wmode);
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
	int ngs = 0, nspecs = 1, rc = 0, probed = 0;
	for (int spec = 0; spec < nspecs && !rc; spec++) {
		int folded = 0;
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
		/* Ranges without buckets: after fold, an If whose condition every
		 * single size decides but the range does not (a model squeezing a
		 * length's axis when it is 1) splits the range into buckets
		 * (ox_opt_if_splits); the program is then compiled per bucket. */
		if (!rc && spec == 0 && !probed && nranged && !dump) {
			probed = 1;
			rc = ox_opt_run(g, check, "fold") ? 1 : 0;
			int split = 0;
			for (int i = 0; i < nranged && !rc; i++) {
				dimspec d = ranged[i].d;
				d.nb = ox_opt_if_splits(g, ranged[i].sym, d.lo, d.hi, d.b, MAX_BUCKETS);
				if (d.nb > 1) {
					ox_note("range %s=%lld..%lld: %d buckets, an If's condition decided in each", ranged[i].sym,
						(long long)d.lo, (long long)d.hi, d.nb);
					rc = note_buckets(g, ranged[i].sym, &d) ? 1 : 0;
					split = 1;
				}
			}
			if (!rc && split) { /* again, with the buckets */
				ox_ir_free(g);
				ngs = 0, nspecs = 1, spec = -1;
				continue;
			}
			folded = 1;
		}
		if (!rc)
			rc = (folded ? ox_opt_run_from(g, check, "fold") : ox_opt_run(g, check, dump && *dump ? dump : NULL)) ? 1 : 0;
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
		ox_cg_opts o = {out, prefix, base, with_main, weights, &st, cuda, cuda_emu, tf32, pool};
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
	if (rc || !(build || shared))
		return rc;
	/* the program and the library of the same objects' sources */
	if (build)
		rc = cuda ? build_cuda(out, cuda_emu, 0) : build_c(out, tgt, 0);
	if (!rc && shared)
		rc = cuda ? build_cuda(out, cuda_emu, 1) : build_c(out, tgt, 1);
	return rc;
}
