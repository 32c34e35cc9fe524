/* opsdoc.c: print docs/ops.md, the operator support table, from ir/ops.def.
 *
 *   opsdoc docs/ops_meta.txt > docs/ops.md
 *
 * ir/ops.def stays the one table: it gives each op's name, domain (flags),
 * arity, family (emit column) and whether it folds (eval column). What a row
 * has no room for (the ONNX since_version list, the dtypes the emitter
 * accepts, the limitations its ox_error calls enforce) comes from one line
 * per op in docs/ops_meta.txt. Every op must have exactly one meta line and
 * every meta line must name an op: otherwise exit 1 naming the op, so that a
 * new ops.def row without documentation fails `make ops-doc-check`. The
 * output depends on nothing but the two files, so it is byte-for-byte stable.
 */
#include "../ir/ir.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *name;
	int minin, maxin, minout, maxout;
	unsigned flags;
	const char *infer, *eval, *emit, *cuda;
} opdoc;

static const opdoc ops[] = {
#define OP(id, name, minin, maxin, minout, maxout, flags, infer, eval, emit, cuda) \
	{name, minin, maxin, minout, maxout, flags, #infer, #eval, #emit, #cuda},
#include "../ir/ops.def"
#undef OP
};
enum { NOPS = sizeof ops / sizeof ops[0] };

/* one meta line, split in place: the pointers point into the line buffer */
typedef struct {
	char *name, *since, *dtypes, *limits;
	int line, used;
} meta;

static meta metas[1024];
static int nmetas;

/* the rule of ox_op_domain (ir/graph.c); copied because this tool links
 * nothing but itself */
static const char *domain_of(unsigned f)
{
	return f & OX_F_ML ? "ai.onnx.ml" : f & OX_F_PREVIEW ? "ai.onnx.preview"
	     : f & OX_F_TRAINING ? "ai.onnx.preview.training" : f & OX_F_MS ? "com.microsoft"
	     : f & OX_F_INTERNAL ? "onnxcc" : "ai.onnx";
}

static void die(const char *path, int line, const char *msg, const char *what)
{
	if (line)
		fprintf(stderr, "%s:%d: %s%s\n", path, line, msg, what ? what : "");
	else
		fprintf(stderr, "%s: %s%s\n", path, msg, what ? what : "");
	exit(1);
}

/* Parse `Name since=1,6,13 dtypes=f32,f64 limits=free text`; lines that are
 * blank or start with '#' are comments. limits= must come last because its
 * value runs to the end of the line. */
static void read_meta(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die(path, 0, "cannot open", NULL);
	char buf[2048];
	int line = 0;
	while (fgets(buf, sizeof buf, f)) {
		line++;
		size_t len = strlen(buf);
		if (len && buf[len - 1] != '\n' && !feof(f))
			die(path, line, "line too long", NULL);
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
			buf[--len] = 0;
		if (!len || buf[0] == '#')
			continue;
		if (nmetas == (int)(sizeof metas / sizeof metas[0]))
			die(path, line, "too many lines", NULL);
		meta *m = &metas[nmetas++];
		memset(m, 0, sizeof *m);
		m->line = line;
		char *p = strdup(buf);
		if (!p)
			die(path, line, "out of memory", NULL);
		m->name = p;
		p += strcspn(p, " ");
		while (*p == ' ')
			*p++ = 0;
		while (*p) {
			char *key = p, *val = strchr(p, '=');
			if (!val)
				die(path, line, "expected key=value after ", m->name);
			*val++ = 0;
			if (!strcmp(key, "limits")) {
				m->limits = val;
				break;
			}
			p = val + strcspn(val, " ");
			while (*p == ' ')
				*p++ = 0;
			if (!strcmp(key, "since"))
				m->since = val;
			else if (!strcmp(key, "dtypes"))
				m->dtypes = val;
			else
				die(path, line, "unknown key: ", key);
		}
		if (!m->since || !*m->since)
			die(path, line, "no since= list for ", m->name);
		for (int i = 0; i < nmetas - 1; i++)
			if (!strcmp(metas[i].name, m->name))
				die(path, line, "second line for ", m->name);
	}
	fclose(f);
}

/* an op's line: keyed by its name, "com.microsoft:Name" for ONNX
 * Runtime's contrib ops (whose names may be ai.onnx's too) */
static meta *find_meta(const opdoc *o)
{
	char key[128];
	snprintf(key, sizeof key, "%s%s", o->flags & OX_F_MS ? "com.microsoft:" : "", o->name);
	for (int i = 0; i < nmetas; i++)
		if (!strcmp(metas[i].name, key))
			return &metas[i];
	return NULL;
}

/* "1", "1-3", "2+" (variadic), "0" */
static void arity(char *out, size_t cap, int lo, int hi)
{
	if (hi < 0)
		snprintf(out, cap, "%d+", lo);
	else if (lo == hi)
		snprintf(out, cap, "%d", lo);
	else
		snprintf(out, cap, "%d-%d", lo, hi);
}

/* "1,6,13" -> "1, 6, 13" (dtype lists likewise); '|' escaped so that free
 * text cannot break the markdown table */
static void print_list(const char *s)
{
	for (; *s; s++)
		if (*s == ',')
			fputs(", ", stdout);
		else if (*s == '|')
			fputs("\\|", stdout);
		else
			putchar(*s);
}

/* family name from the emit column: emit_nn -> nn */
static const char *family(const opdoc *o)
{
	return strncmp(o->emit, "emit_", 5) ? o->emit : o->emit + 5;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: opsdoc docs/ops_meta.txt > docs/ops.md\n");
		return 2;
	}
	const char *path = argv[1];
	read_meta(path);

	/* both directions, every problem reported before failing */
	int bad = 0;
	for (int i = 0; i < NOPS; i++) {
		for (int j = 0; j < i; j++)
			if (!strcmp(ops[i].name, ops[j].name) && !strcmp(domain_of(ops[i].flags), domain_of(ops[j].flags))) {
				fprintf(stderr, "ir/ops.def: op %s appears twice (in two domains?): "
				        "opsdoc keys ops_meta.txt by name\n", ops[i].name);
				bad = 1;
			}
		meta *m = find_meta(&ops[i]);
		if (!m) {
			fprintf(stderr, "%s: no line for op %s of ir/ops.def: add "
			        "`%s since=... dtypes=... limits=...`\n", path, ops[i].name, ops[i].name);
			bad = 1;
		} else
			m->used = 1;
	}
	for (int i = 0; i < nmetas; i++)
		if (!metas[i].used) {
			fprintf(stderr, "%s:%d: op %s is not in ir/ops.def\n", path, metas[i].line, metas[i].name);
			bad = 1;
		}
	if (bad)
		return 1;

	/* families in order of first appearance in ops.def */
	const char *fams[NOPS];
	int nfams = 0;
	for (int i = 0; i < NOPS; i++) {
		int k = 0;
		while (k < nfams && strcmp(fams[k], ops[i].emit))
			k++;
		if (k == nfams)
			fams[nfams++] = ops[i].emit;
	}
	/* domains in a fixed order */
	static const char *const doms[] = {"ai.onnx", "ai.onnx.ml", "ai.onnx.preview",
		"ai.onnx.preview.training", "com.microsoft"};

	printf("# Supported operators\n\n");
	printf("<!-- generated by tools/opsdoc from ir/ops.def and docs/ops_meta.txt: do not edit. -->\n\n");
	printf("This file is generated: do not edit it. The op list, domains, arity,\n"
	       "families and constant folding come from `ir/ops.def`; the ONNX\n"
	       "`since_version` list, the dtypes and the limitations of each op come\n"
	       "from `docs/ops_meta.txt`. After changing either, run `make ops-doc`;\n"
	       "`make test` fails (`make ops-doc-check`) while this file is stale, and\n"
	       "`tools/opsdoc` fails when an op of `ops.def` has no line in\n"
	       "`ops_meta.txt` or the reverse.\n\n");
	printf("Columns: *opsets (since)* lists the ONNX opset versions in which the\n"
	       "op's specification changed (a node follows the newest of them not\n"
	       "above its model's opset).\n"
	       "*inputs* / *outputs* give the arity (`2+` is variadic). *folds*: the\n"
	       "op has a compile-time evaluator, so constant folding (`opt/fold.c`)\n"
	       "can replace it by its value. *dtypes* are the element types the\n"
	       "compiler accepts for the main input: `float` is f32, f64, f16 and\n"
	       "bf16 (f16 and bf16 computed in float), `int` is i8..i64 and u8..u64\n"
	       "(`sint` / `uint` the signed / unsigned ones), `f8` the float8 kinds, `sub-byte` int4, uint4, float4e2m1, int2 and uint2 (stored one per byte),\n"
	       "`any` every fixed-size dtype (not string). *limitations*\n"
	       "are the cases the compiler rejects with an error (never with wrong\n"
	       "output). Ops marked *expanded at compile time* are rewritten into the\n"
	       "other ops before code generation and have no emitter of their own.\n"
	       "*CUDA kernel* is the kernel family of `--target cuda` (the cuda\n"
	       "column of `ir/ops.def`, `ox_cu_emit_<family>` in `codegen/cuda/cuda_dispatch.c`;\n"
	       "`map`: the C target's expression per element as a kernel of a thread\n"
	       "per element); *one thread*: the op's C function runs on one device\n"
	       "thread. A family may still leave a node it does not take (a Conv its\n"
	       "tiles do not fit) on one thread; `--report` counts such nodes.\n"
	       "Ops of the domain `onnxcc` are the compiler's own: the optimizing\n"
	       "passes make them, a model cannot use them (`docs/optimizer.md`).\n\n");

	printf("## Counts\n\n| domain | ops |\n| --- | --- |\n");
	for (size_t d = 0; d < sizeof doms / sizeof doms[0]; d++) {
		int c = 0;
		for (int i = 0; i < NOPS; i++)
			c += !strcmp(domain_of(ops[i].flags), doms[d]);
		if (c)
			printf("| %s | %d |\n", doms[d], c);
	}
	int own = 0;
	for (int i = 0; i < NOPS; i++)
		own += (ops[i].flags & OX_F_INTERNAL) != 0;
	printf("| total | %d |\n", (int)NOPS - own);
	printf("\nand %d ops of onnxcc's own (domain `onnxcc`), not counted above.\n", own);

	for (int k = 0; k < nfams; k++) {
		const opdoc *first = NULL;
		int c = 0;
		for (int i = 0; i < NOPS; i++)
			if (!strcmp(ops[i].emit, fams[k])) {
				if (!first)
					first = &ops[i];
				c++;
			}
		if (!strcmp(fams[k], "emit_none"))
			printf("\n## expanded at compile time (%d ops)\n\n", c);
		else
			printf("\n## %s (%d ops, `codegen/c/%s.c`)\n\n", family(first), c, fams[k]);
		printf("| op | domain | opsets (since) | inputs | outputs | folds | CUDA kernel | dtypes | limitations |\n");
		printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
		for (int i = 0; i < NOPS; i++) {
			const opdoc *o = &ops[i];
			if (strcmp(o->emit, fams[k]))
				continue;
			const meta *m = find_meta(o);
			char in[32], out[32];
			arity(in, sizeof in, o->minin, o->maxin);
			arity(out, sizeof out, o->minout, o->maxout);
			printf("| %s | %s | ", o->name, domain_of(o->flags));
			print_list(m->since);
			int none = !strcmp(o->emit, "emit_none");
			printf(" | %s | %s | %s | %s | ", in, out, strcmp(o->eval, "eval_none") ? "yes" : "",
			       none ? "" : strcmp(o->cuda, "none") ? o->cuda : "one thread");
			if (m->dtypes)
				print_list(m->dtypes);
			printf(" | ");
			if (none)
				printf("expanded at compile time");
			if (m->limits && *m->limits) {
				fputs(none ? "; " : "", stdout);
				for (const char *p = m->limits; *p; p++)
					if (*p == '|')
						fputs("\\|", stdout);
					else
						putchar(*p);
			}
			printf(" |\n");
		}
	}
	return 0;
}
