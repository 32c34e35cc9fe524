/* functions.c: model-local functions (ModelProto.functions), inlined at import.
 *
 * A node whose (domain, op_type[, overload]) names a function of the model
 * is replaced by the function's body before the IR sees it: formal inputs
 * and outputs become the call's actual names, every other name in the body
 * gets a fresh prefix (so two calls never collide), and an attribute that
 * refers to the caller (ref_attr_name) takes the caller's value, else the
 * function's default (attribute_proto), else it is dropped. Calls inside a
 * body expand recursively (a depth limit catches recursion). Subgraph
 * attributes inside a body keep their names: a body subgraph that captures
 * a body-internal name is reported, not miscompiled.
 * The nodes made here are shallow copies pointing into the ModelProto; they
 * live until ox_fe_functions_free.
 */
#include "functions.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct ox_fe_functions {
	const Onnx__ModelProto *mp;
	void **allocs;
	size_t nallocs, capallocs;
	int calls; /* numbering for fresh prefixes */
};

static void *track(ox_fe_functions *f, void *p)
{
	if (!p) {
		fprintf(stderr, "onnxcc: out of memory\n");
		exit(1);
	}
	if (f->nallocs == f->capallocs) {
		f->capallocs = f->capallocs ? 2 * f->capallocs : 64;
		f->allocs = realloc(f->allocs, f->capallocs * sizeof *f->allocs);
		if (!f->allocs) {
			fprintf(stderr, "onnxcc: out of memory\n");
			exit(1);
		}
	}
	f->allocs[f->nallocs++] = p;
	return p;
}

ox_fe_functions *ox_fe_functions_new(const Onnx__ModelProto *mp)
{
	ox_fe_functions *f = calloc(1, sizeof *f);
	if (f)
		f->mp = mp;
	return f;
}

void ox_fe_functions_free(ox_fe_functions *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nallocs; i++)
		free(f->allocs[i]);
	free(f->allocs);
	free(f);
}

static int same(const char *a, const char *b)
{
	if (!a || !*a || !strcmp(a, "ai.onnx"))
		a = "";
	if (!b || !*b || !strcmp(b, "ai.onnx"))
		b = "";
	return !strcmp(a, b);
}

static const Onnx__FunctionProto *lookup(const ox_fe_functions *f, const Onnx__NodeProto *np)
{
	if (!f || !f->mp)
		return NULL;
	for (size_t i = 0; i < f->mp->n_functions; i++) {
		const Onnx__FunctionProto *fp = f->mp->functions[i];
		if (!strcmp(fp->name, np->op_type) && same(fp->domain, np->domain) &&
		    same(fp->overload, np->overload))
			return fp;
	}
	return NULL;
}

/* the caller's name for body name s */
static char *rename_in(ox_fe_functions *f, const Onnx__FunctionProto *fp, const Onnx__NodeProto *call,
		       const char *prefix, const char *s)
{
	if (!*s)
		return (char *)s;
	for (size_t i = 0; i < fp->n_input; i++)
		if (!strcmp(fp->input[i], s))
			return i < call->n_input ? call->input[i] : (char *)"";
	for (size_t i = 0; i < fp->n_output; i++)
		if (!strcmp(fp->output[i], s))
			return i < call->n_output ? call->output[i] : (char *)"";
	size_t n = strlen(prefix) + strlen(s) + 2;
	char *r = track(f, malloc(n));
	snprintf(r, n, "%s%s", prefix, s);
	return r;
}

static const Onnx__AttributeProto *find_attr(Onnx__AttributeProto *const *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i]->name, name))
			return a[i];
	return NULL;
}

static int expand(ox_fe_functions *f, const Onnx__NodeProto *np, int depth, Onnx__NodeProto ***out, size_t *n,
		  size_t *cap);

static void push(ox_fe_functions *f, Onnx__NodeProto ***out, size_t *n, size_t *cap, const Onnx__NodeProto *np)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*out = realloc(*out, *cap * sizeof **out);
		if (!*out) {
			fprintf(stderr, "onnxcc: out of memory\n");
			exit(1);
		}
	}
	(void)f;
	(*out)[(*n)++] = (Onnx__NodeProto *)np;
}

static int inline_call(ox_fe_functions *f, const Onnx__FunctionProto *fp, const Onnx__NodeProto *call, int depth,
		       Onnx__NodeProto ***out, size_t *n, size_t *cap)
{
	if (depth >= MAX_DEPTH) {
		fprintf(stderr, "onnxcc: function '%s' calls itself (or nests deeper than %d)\n", fp->name,
			MAX_DEPTH);
		return -1;
	}
	char prefix[300];
	snprintf(prefix, sizeof prefix, "%.200s~f%d/", fp->name, ++f->calls);
	for (size_t i = 0; i < fp->n_node; i++) {
		const Onnx__NodeProto *bn = fp->node[i];
		Onnx__NodeProto *nn = track(f, malloc(sizeof *nn));
		*nn = *bn;
		nn->input = track(f, calloc(bn->n_input + 1, sizeof *nn->input));
		nn->output = track(f, calloc(bn->n_output + 1, sizeof *nn->output));
		for (size_t k = 0; k < bn->n_input; k++)
			nn->input[k] = rename_in(f, fp, call, prefix, bn->input[k]);
		for (size_t k = 0; k < bn->n_output; k++)
			nn->output[k] = rename_in(f, fp, call, prefix, bn->output[k]);
		if (!bn->name || !*bn->name) {
			nn->name = track(f, malloc(strlen(prefix) + 32));
			sprintf(nn->name, "%s#%zu", prefix, i);
		} else {
			nn->name = rename_in(f, fp, call, prefix, bn->name);
		}
		nn->attribute = track(f, calloc(bn->n_attribute + 1, sizeof *nn->attribute));
		nn->n_attribute = 0;
		for (size_t k = 0; k < bn->n_attribute; k++) {
			const Onnx__AttributeProto *a = bn->attribute[k];
			if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
			    a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS) {
				fprintf(stderr, "onnxcc: function '%s': node '%s' has a subgraph attribute, which "
					"functions may not carry here (not supported)\n", fp->name, nn->name);
				return -1;
			}
			if (!a->ref_attr_name || !*a->ref_attr_name) {
				nn->attribute[nn->n_attribute++] = (Onnx__AttributeProto *)a;
				continue;
			}
			const Onnx__AttributeProto *v = find_attr(call->attribute, call->n_attribute, a->ref_attr_name);
			if (!v)
				v = find_attr(fp->attribute_proto, fp->n_attribute_proto, a->ref_attr_name);
			if (!v)
				continue; /* not given and no default: the attribute is absent */
			Onnx__AttributeProto *c = track(f, malloc(sizeof *c));
			*c = *v;
			c->name = a->name;
			c->ref_attr_name = NULL;
			nn->attribute[nn->n_attribute++] = c;
		}
		if (expand(f, nn, depth + 1, out, n, cap))
			return -1;
	}
	return 0;
}

static int expand(ox_fe_functions *f, const Onnx__NodeProto *np, int depth, Onnx__NodeProto ***out, size_t *n,
		  size_t *cap)
{
	const Onnx__FunctionProto *fp = lookup(f, np);
	if (!fp) {
		push(f, out, n, cap, np);
		return 0;
	}
	return inline_call(f, fp, np, depth, out, n, cap);
}

Onnx__NodeProto **ox_fe_functions_expand(ox_fe_functions *f, Onnx__NodeProto *const *nodes, size_t n, size_t *nout)
{
	if (!f) {
		*nout = n;
		return (Onnx__NodeProto **)nodes;
	}
	Onnx__NodeProto **out = NULL;
	size_t m = 0, cap = 0;
	for (size_t i = 0; i < n; i++)
		if (expand(f, nodes[i], 0, &out, &m, &cap)) {
			free(out);
			return NULL;
		}
	if (!out)
		out = malloc(sizeof *out);
	*nout = m;
	return track(f, out);
}
