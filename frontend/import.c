/* import.c: ONNX ModelProto (protobuf-c) -> ox_graph.
 *
 * Reads initializers (raw and typed fields, external data relative to the
 * model's folder and never outside it), Constant nodes (turned into
 * constants here), graph inputs with their dims (constant, dim_param ->
 * symbol, absent -> anonymous symbol), every attribute kind and subgraphs
 * (imported recursively, names from outer scopes resolved to "captured"
 * values). Ops not in ir/ops.def are collected and reported all at once.
 * Nothing after this file sees protobuf.
 */
#include "frontend.h"
#include "onnx.pb-c.h"
#include "functions.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The names a graph defines, hashed (open addressing over value ids):
 * ox_ir_find_value scans, which is quadratic over a big model, and a name
 * defined twice is an error here. A subgraph's scope looks up through its
 * enclosing ones. */
typedef struct scope {
	struct scope *up;
	ox_graph *g;
	ox_id *slot; /* -1: empty */
	size_t cap, n;
} scope;

typedef struct {
	const char *path;   /* model file */
	char *dir;          /* its folder, for external data */
	int nunsupported;
	ox_fe_functions *fns; /* the model's local functions, inlined per call */
	const Onnx__ModelProto *mp; /* for the opset of each domain */
	scope *sc;          /* the graph being imported */
} ctx;

/* memcpy that takes an empty protobuf field (NULL data, length 0) */
static void copy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

static size_t hash_name(const char *s)
{
	size_t h = 2166136261u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static ox_id scope_find(const scope *sc, const char *name)
{
	if (!sc->cap)
		return -1;
	for (size_t i = hash_name(name) & (sc->cap - 1);; i = (i + 1) & (sc->cap - 1)) {
		ox_id v = sc->slot[i];
		if (v < 0 || !strcmp(sc->g->vals[v].name, name))
			return v;
	}
}

static void scope_add(scope *sc, ox_id v)
{
	if (2 * (sc->n + 1) > sc->cap) {
		scope big = {sc->up, sc->g, NULL, sc->cap ? 2 * sc->cap : 64, 0};
		big.slot = malloc(big.cap * sizeof *big.slot);
		if (!big.slot)
			ox_die("out of memory");
		memset(big.slot, 0xff, big.cap * sizeof *big.slot);
		for (size_t i = 0; i < sc->cap; i++)
			if (sc->slot[i] >= 0)
				scope_add(&big, sc->slot[i]);
		free(sc->slot);
		*sc = big;
	}
	size_t i = hash_name(sc->g->vals[v].name) & (sc->cap - 1);
	while (sc->slot[i] >= 0)
		i = (i + 1) & (sc->cap - 1);
	sc->slot[i] = v;
	sc->n++;
}

/* A new value named `name` in the current graph: every name is defined
 * once (by a graph input, an initializer or one node output), else the
 * model is ambiguous. n: the node defining it, for the message. */
static ox_id define(ctx *c, ox_graph *g, const ox_node *n, const char *name, int kind)
{
	ox_id old = scope_find(c->sc, name);
	if (old >= 0) {
		const ox_value *o = &g->vals[old];
		const char *what = o->kind == OX_V_CONST ? "an initializer or Constant" :
				   o->producer >= 0 ? "an output of node '" : "a graph input";
		ox_error(g, n, "value '%s' is already defined, as %s%s%s", name, what,
			 o->producer >= 0 ? g->nodes[o->producer].name : "", o->producer >= 0 ? "'" : "");
		return -1;
	}
	ox_id v = ox_ir_add_value(g, name, kind);
	scope_add(c->sc, v);
	return v;
}

/* the model's opset for a node's domain ("" / ai.onnx: the graph's) */
static int domain_opset(const ctx *c, const ox_graph *g, const char *domain)
{
	if (!*domain || !strcmp(domain, "ai.onnx") || !c->mp)
		return g->opset;
	for (size_t i = 0; i < c->mp->n_opset_import; i++) {
		const char *d = c->mp->opset_import[i]->domain;
		if (d && !strcmp(d, domain))
			return (int)c->mp->opset_import[i]->version;
	}
	return 1;
}

static int import_graph(ctx *c, ox_graph *g, const Onnx__GraphProto *gp);

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				ox_die("out of memory");
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/* External data must stay inside the model's folder: no absolute path and
 * no ".." component. */
static int safe_relpath(const char *p)
{
	if (!*p || p[0] == '/')
		return 0;
	for (const char *s = p; *s;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return 0;
		s += n + (e ? 1 : 0);
	}
	return 1;
}

/* external data's offset and length: a decimal number, not negative */
static int byte_count(ox_graph *g, const Onnx__TensorProto *tp, const char *key, const char *v, long long *out)
{
	char *e;
	errno = 0;
	*out = strtoll(v, &e, 10);
	if (!*v || *e || errno || *out < 0)
		return ox_error(g, NULL, "tensor '%s': external data %s '%s' is not a byte count", tp->name, key, v);
	return 0;
}

static int is_external(const Onnx__TensorProto *tp)
{
	return tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* the external data's "location" entry, NULL when there is none */
static const char *external_location(const Onnx__TensorProto *tp)
{
	const char *loc = NULL;
	for (size_t i = 0; i < tp->n_external_data; i++)
		if (tp->external_data[i]->key && tp->external_data[i]->value &&
		    !strcmp(tp->external_data[i]->key, "location"))
			loc = tp->external_data[i]->value;
	return loc;
}

/* the model's folder / loc, malloc'd */
static char *external_path(const ctx *c, const char *loc)
{
	size_t n = strlen(c->dir) + strlen(loc) + 2;
	char *full = malloc(n);
	if (!full)
		ox_die("out of memory");
	snprintf(full, n, "%s/%s", c->dir, loc);
	return full;
}

static int load_external(ctx *c, ox_graph *g, const Onnx__TensorProto *tp, ox_tensor *t)
{
	const char *loc = external_location(tp);
	long long off = 0, len = -1;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const char *k = tp->external_data[i]->key, *v = tp->external_data[i]->value;
		if (!k || !v)
			continue;
		if (!strcmp(k, "offset") && byte_count(g, tp, k, v, &off))
			return -1;
		else if (!strcmp(k, "length") && byte_count(g, tp, k, v, &len))
			return -1;
	}
	if (!loc)
		return ox_error(g, NULL, "tensor '%s': external data without a location", tp->name);
	if (!safe_relpath(loc))
		return ox_error(g, NULL, "tensor '%s': external data path '%s' leaves the model's folder",
				tp->name, loc);
	if (len >= 0 && (size_t)len != t->nbytes)
		return ox_error(g, NULL, "tensor '%s': external length %lld, expected %zu bytes",
				tp->name, len, t->nbytes);
	char *full = external_path(c, loc);
	FILE *f = fopen(full, "rb");
	int rc = 0;
	if (!f)
		rc = ox_error(g, NULL, "tensor '%s': cannot open external data '%s': %s", tp->name, full,
			      strerror(errno));
	else if (fseek(f, off, SEEK_SET) || fread(t->data, 1, t->nbytes, f) != t->nbytes)
		rc = ox_error(g, NULL, "tensor '%s': external data '%s' is too short", tp->name, full);
	if (f)
		fclose(f);
	free(full);
	return rc;
}

/* Bits per element of a sub-byte dtype, 0 for the others. */
static int subbyte_bits(int dt)
{
	switch (dt) {
	case OX_U4: case OX_I4: case OX_F4E2M1: return 4;
	case OX_U2: case OX_I2: return 2;
	}
	return 0;
}

/* ONNX packs sub-byte elements into bytes, lowest bits first (element 0 in
 * the low nibble / low 2 bits); the IR holds them one per byte, the signed
 * kinds sign-extended (ir/types.c). `packed` has (n * bits + 7) / 8 bytes. */
static void unpack_subbyte(int dt, const unsigned char *packed, int64_t n, unsigned char *out)
{
	int bits = subbyte_bits(dt), per = 8 / bits;
	unsigned mask = (1u << bits) - 1, sign = 1u << (bits - 1);
	int is_signed = dt == OX_I4 || dt == OX_I2;
	for (int64_t i = 0; i < n; i++) {
		unsigned v = packed[i / per] >> (i % per * bits) & mask;
		if (is_signed && (v & sign))
			v |= ~mask & 0xffu; /* sign-extend into the byte */
		out[i] = (unsigned char)v;
	}
}

/* Before the tensor is allocated (a model of a few bytes may declare dims
 * worth gigabytes): does the data hold exactly its numel elements? Inline
 * data is checked here, once; external data only for a file at least as
 * long as the tensor (load_external checks offset and length as it reads). */
static int check_data(ctx *c, ox_graph *g, const Onnx__TensorProto *tp, int dt, int64_t numel)
{
	const char *name = tp->name ? tp->name : "";
	int bits = subbyte_bits(dt);
	int64_t need = bits ? (numel * bits + 7) / 8 : dt == OX_STRING ? numel : numel * (int64_t)ox_dtype_size(dt);
	if (is_external(tp)) {
		const char *loc = external_location(tp);
		if (!loc || !safe_relpath(loc))
			return 0; /* load_external says why */
		char *full = external_path(c, loc);
		struct stat st;
		int rc = stat(full, &st);
		if (rc)
			ox_error(g, NULL, "tensor '%s': cannot open external data '%s': %s", name, full, strerror(errno));
		else if (S_ISREG(st.st_mode) && st.st_size < need)
			rc = ox_error(g, NULL, "tensor '%s': external data '%s' is too short (%lld bytes, the dims need %lld)",
				      name, full, (long long)st.st_size, (long long)need);
		free(full);
		return rc ? -1 : 0;
	}
	if (dt == OX_STRING) {
		if ((int64_t)tp->n_string_data != numel)
			return ox_error(g, NULL, "tensor '%s': %zu strings for %lld elements", name, tp->n_string_data,
					(long long)numel);
	} else if (bits) {
		if (tp->has_raw_data && (int64_t)tp->raw_data.len != need)
			return ox_error(g, NULL, "tensor '%s': raw_data has %zu bytes, %s[%lld] packs into %lld", name,
					tp->raw_data.len, ox_dtype_name(dt), (long long)numel, (long long)need);
		if (!tp->has_raw_data && (int64_t)tp->n_int32_data != need)
			return ox_error(g, NULL, "tensor '%s': %zu int32_data values, %s[%lld] packs into %lld", name,
					tp->n_int32_data, ox_dtype_name(dt), (long long)numel, (long long)need);
	} else if (tp->has_raw_data) {
		if ((int64_t)tp->raw_data.len != need)
			return ox_error(g, NULL, "tensor '%s': raw_data has %zu bytes, expected %lld", name,
					tp->raw_data.len, (long long)need);
	} else {
		size_t have;
		switch (dt) {
		case OX_F32: have = tp->n_float_data; break;
		case OX_F64: have = tp->n_double_data; break;
		case OX_I64: have = tp->n_int64_data; break;
		case OX_U32: case OX_U64: have = tp->n_uint64_data; break;
		default: have = tp->n_int32_data; break;
		}
		if ((int64_t)have != numel)
			return ox_error(g, NULL, "tensor '%s': %zu typed values for %lld elements", name, have,
					(long long)numel);
	}
	return 0;
}

/* import_tensor for a sub-byte dtype: the packed bytes come from raw_data,
 * from int32_data (one packed byte per value, as onnx.proto says) or from
 * external data, and are unpacked into t. */
static ox_tensor *import_subbyte(ctx *c, ox_graph *g, const Onnx__TensorProto *tp, ox_tensor *t)
{
	int dt = t->dtype;
	int64_t n = ox_tensor_numel(t);
	size_t nb = (size_t)((n * subbyte_bits(dt) + 7) / 8);
	unsigned char *packed = malloc(nb + 1);
	if (!packed)
		ox_die("out of memory");
	int bad = 0; /* the sizes of inline data are check_data's */
	if (is_external(tp)) {
		ox_tensor tmp = *t;
		tmp.data = packed;
		tmp.nbytes = nb;
		bad = load_external(c, g, tp, &tmp);
	} else if (tp->has_raw_data) {
		copy(packed, tp->raw_data.data, nb);
	} else {
		for (size_t i = 0; i < nb; i++)
			packed[i] = (unsigned char)tp->int32_data[i];
	}
	if (!bad)
		unpack_subbyte(dt, packed, n, t->data);
	free(packed);
	return bad ? NULL : t;
}

/* TensorProto -> ox_tensor (constant dims, little-endian data; sub-byte
 * kinds unpacked to one element per byte). */
static ox_tensor *import_tensor(ctx *c, ox_graph *g, const Onnx__TensorProto *tp)
{
	int dt = tp->data_type;
	/* complex constants: no kernel reads them, and no element access exists */
	if (dt <= 0 || dt >= OX_NDTYPE || (dt != OX_STRING && !ox_dtype_size(dt)) || dt == OX_C64 || dt == OX_C128) {
		ox_error(g, NULL, "tensor '%s': data type %s (%d) is not supported", tp->name ? tp->name : "",
			 ox_dtype_name(dt), dt);
		return NULL;
	}
	if (tp->n_dims > OX_MAX_RANK) {
		ox_error(g, NULL, "tensor '%s': rank %zu exceeds %d", tp->name, tp->n_dims, OX_MAX_RANK);
		return NULL;
	}
	ox_shape s = {(int)tp->n_dims, {0}};
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0) {
			ox_error(g, NULL, "tensor '%s': negative dim %lld", tp->name, (long long)tp->dims[i]);
			return NULL;
		}
		s.d[i] = tp->dims[i];
	}
	if (ox_shape_too_big(&s, dt)) {
		ox_error(g, NULL, "tensor '%s' is too large (2^48 bytes or more)", tp->name);
		return NULL;
	}
	if (check_data(c, g, tp, dt, ox_shape_numel(&s)))
		return NULL;
	ox_tensor *t = ox_ir_new_tensor(g, dt, &s);
	int64_t n = ox_tensor_numel(t);
	if (dt == OX_STRING) {
		for (int64_t i = 0; i < n; i++) {
			char *p = ox_ir_alloc(g, tp->string_data[i].len + 1);
			copy(p, tp->string_data[i].data, tp->string_data[i].len);
			t->strs[i] = p;
		}
		return t;
	}
	if (subbyte_bits(dt))
		return import_subbyte(c, g, tp, t);
	if (is_external(tp))
		return load_external(c, g, tp, t) ? NULL : t;
	if (tp->has_raw_data) { /* check_data checked every size */
		copy(t->data, tp->raw_data.data, t->nbytes);
		return t;
	}
	for (int64_t i = 0; i < n; i++) {
		unsigned char *p = (unsigned char *)t->data + i * ox_dtype_size(dt);
		switch (dt) {
		case OX_F32: memcpy(p, &tp->float_data[i], 4); break;
		case OX_F64: memcpy(p, &tp->double_data[i], 8); break;
		case OX_I64: memcpy(p, &tp->int64_data[i], 8); break;
		case OX_U64: memcpy(p, &tp->uint64_data[i], 8); break;
		case OX_U32: { uint32_t x = (uint32_t)tp->uint64_data[i]; memcpy(p, &x, 4); break; }
		case OX_F16: case OX_BF16: case OX_U16: case OX_I16: {
			/* int32_data carries the 16 bits of each element */
			uint16_t x = (uint16_t)tp->int32_data[i];
			memcpy(p, &x, 2);
			break;
		}
		case OX_I32: memcpy(p, &tp->int32_data[i], 4); break;
		default: /* 1-byte kinds */
			*p = (unsigned char)tp->int32_data[i];
			break;
		}
	}
	return t;
}

/* A graph input's declared tensor type: a known dtype, dims not negative,
 * and not so many elements that their byte count overflows. */
static int check_type(ox_graph *g, const Onnx__ValueInfoProto *vi)
{
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return 0;
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	int dt = tt->has_elem_type ? tt->elem_type : OX_UNDEF;
	if (dt < 0 || dt >= OX_NDTYPE)
		return ox_error(g, NULL, "graph input '%s': element type %d is not an ONNX data type", vi->name, dt);
	if (!tt->shape)
		return 0;
	if (tt->shape->n_dim > OX_MAX_RANK)
		return ox_error(g, NULL, "graph input '%s': rank %zu exceeds %d", vi->name, tt->shape->n_dim,
				OX_MAX_RANK);
	ox_shape s = {(int)tt->shape->n_dim, {0}};
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		int known = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		if (known && d->dim_value < 0)
			return ox_error(g, NULL, "graph input '%s': negative dim %lld", vi->name,
					(long long)d->dim_value);
		s.d[i] = known ? d->dim_value : -1; /* a symbol: checked once bound */
	}
	if (ox_shape_too_big(&s, dt))
		return ox_error(g, NULL, "graph input '%s' is too large (2^48 bytes or more)", vi->name);
	return 0;
}

static void import_type(ox_graph *g, ox_value *v, const Onnx__TypeProto *tp)
{
	if (tp && (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
		   tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)) {
		/* structure unknown until --like gives an example (opt/expand.c) */
		v->agg = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? OX_AGG_SEQ : OX_AGG_OPT;
		v->nelems = -1;
		return;
	}
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return;
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (tt->has_elem_type)
		v->dtype = tt->elem_type;
	if (!tt->shape)
		return;
	if (tt->shape->n_dim > OX_MAX_RANK)
		return;
	v->has_shape = 1;
	v->shape.rank = (int)tt->shape->n_dim;
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
			v->shape.d[i] = d->dim_value;
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			 d->dim_param && *d->dim_param)
			v->shape.d[i] = ox_dim_sym(g, d->dim_param);
		else {
			char hint[200];
			snprintf(hint, sizeof hint, "%s:%zu", v->name, i);
			v->shape.d[i] = ox_dim_unknown(g, hint);
		}
	}
}

static int import_attr(ctx *c, ox_graph *g, ox_attr *a, const Onnx__AttributeProto *ap)
{
	a->name = ox_ir_strdup(g, ap->name);
	switch (ap->type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: a->type = OX_AT_FLOAT; a->f = ap->f; break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: a->type = OX_AT_INT; a->i = ap->i; break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
		a->type = OX_AT_STRING;
		char *s = ox_ir_alloc(g, ap->s.len + 1);
		copy(s, ap->s.data, ap->s.len);
		a->s = s;
		a->slen = ap->s.len;
		break;
	}
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		a->type = OX_AT_FLOATS;
		a->n = (int)ap->n_floats;
		a->floats = ox_ir_alloc(g, (a->n + 1) * sizeof(float));
		copy(a->floats, ap->floats, a->n * sizeof(float));
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		a->type = OX_AT_INTS;
		a->n = (int)ap->n_ints;
		a->ints = ox_ir_alloc(g, (a->n + 1) * sizeof(int64_t));
		copy(a->ints, ap->ints, a->n * sizeof(int64_t));
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
		a->type = OX_AT_STRINGS;
		a->n = (int)ap->n_strings;
		a->strs = ox_ir_alloc(g, (a->n + 1) * sizeof(char *));
		for (int i = 0; i < a->n; i++) {
			char *s = ox_ir_alloc(g, ap->strings[i].len + 1);
			copy(s, ap->strings[i].data, ap->strings[i].len);
			a->strs[i] = s;
		}
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		a->type = OX_AT_TENSOR;
		a->n = 1;
		if (!ap->t || !(a->t = import_tensor(c, g, ap->t)))
			return -1;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
		a->type = OX_AT_TENSORS;
		a->n = (int)ap->n_tensors;
		a->t = ox_ir_alloc(g, (a->n + 1) * sizeof(ox_tensor));
		for (int i = 0; i < a->n; i++) {
			ox_tensor *t = import_tensor(c, g, ap->tensors[i]);
			if (!t)
				return -1;
			a->t[i] = *t;
		}
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: {
		int one = ap->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
		a->type = one ? OX_AT_GRAPH : OX_AT_GRAPHS;
		a->n = one ? 1 : (int)ap->n_graphs;
		a->g = ox_ir_alloc(g, (a->n + 1) * sizeof(ox_graph *));
		for (int i = 0; i < a->n; i++) {
			const Onnx__GraphProto *sp = one ? ap->g : ap->graphs[i];
			if (!sp)
				return ox_error(g, NULL, "attribute '%s' has no graph", a->name);
			a->g[i] = ox_ir_new_sub(g);
			if (import_graph(c, a->g[i], sp))
				return -1;
		}
		break;
	}
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
		a->type = OX_AT_SPARSE;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
		a->type = OX_AT_TYPE;
		break;
	default:
		/* IR < 3 models may leave type unset: infer from the set field */
		if (ap->n_ints) { a->type = OX_AT_INTS; a->n = (int)ap->n_ints;
			a->ints = ox_ir_alloc(g, (a->n + 1) * 8); copy(a->ints, ap->ints, a->n * 8); }
		else if (ap->n_floats) { a->type = OX_AT_FLOATS; a->n = (int)ap->n_floats;
			a->floats = ox_ir_alloc(g, (a->n + 1) * 4); copy(a->floats, ap->floats, a->n * 4); }
		else if (ap->has_i) { a->type = OX_AT_INT; a->i = ap->i; }
		else if (ap->has_f) { a->type = OX_AT_FLOAT; a->f = ap->f; }
		else
			return ox_error(g, NULL, "attribute '%s' has an unknown type %d", a->name, ap->type);
	}
	return 0;
}

/* The type a Constant's attribute must have (an unset type, from old
 * exporters, is taken as the right one). */
static int constant_attr_type(ox_graph *g, const Onnx__NodeProto *np, const Onnx__AttributeProto *ap)
{
	static const struct { const char *name; int type; const char *tname; } want[] = {
		{"value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, "TENSOR"},
		{"value_float", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "FLOAT"},
		{"value_int", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "INT"},
		{"value_floats", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, "FLOATS"},
		{"value_ints", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, "INTS"},
		{"value_string", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, "STRING"},
		{"value_strings", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS, "STRINGS"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strcmp(ap->name, want[i].name) && ap->type && (int)ap->type != want[i].type)
			return ox_error(g, NULL, "Constant node '%s': attribute '%s' must be %s, got type %d",
					np->name, ap->name, want[i].tname, (int)ap->type);
	return 0;
}

/* A Constant node becomes a constant value. */
static ox_tensor *constant_value(ctx *c, ox_graph *g, const Onnx__NodeProto *np)
{
	if (np->n_attribute != 1) {
		ox_error(g, NULL, "Constant node '%s' must have exactly one attribute", np->name);
		return NULL;
	}
	const Onnx__AttributeProto *ap = np->attribute[0];
	const char *k = ap->name;
	ox_shape s0 = {0, {0}};
	if (constant_attr_type(g, np, ap))
		return NULL;
	if (!strcmp(k, "value")) {
		if (!ap->t)
			ox_error(g, NULL, "Constant node '%s': attribute 'value' has no tensor", np->name);
		return ap->t ? import_tensor(c, g, ap->t) : NULL;
	}
	if (!strcmp(k, "value_float")) {
		ox_tensor *t = ox_ir_new_tensor(g, OX_F32, &s0);
		memcpy(t->data, &ap->f, 4);
		return t;
	}
	if (!strcmp(k, "value_int")) {
		ox_tensor *t = ox_ir_new_tensor(g, OX_I64, &s0);
		memcpy(t->data, &ap->i, 8);
		return t;
	}
	if (!strcmp(k, "value_floats") || !strcmp(k, "value_ints")) {
		int isf = k[6] == 'f';
		ox_shape s = {1, {isf ? (int64_t)ap->n_floats : (int64_t)ap->n_ints}};
		ox_tensor *t = ox_ir_new_tensor(g, isf ? OX_F32 : OX_I64, &s);
		copy(t->data, isf ? (void *)ap->floats : (void *)ap->ints, t->nbytes);
		return t;
	}
	if (!strcmp(k, "value_string") || !strcmp(k, "value_strings")) {
		int one = !strcmp(k, "value_string");
		ox_shape s = {one ? 0 : 1, {one ? 0 : (int64_t)ap->n_strings}};
		ox_tensor *t = ox_ir_new_tensor(g, OX_STRING, &s);
		for (int64_t i = 0; i < (one ? 1 : (int64_t)ap->n_strings); i++) {
			const ProtobufCBinaryData *b = one ? &ap->s : &ap->strings[i];
			char *p = ox_ir_alloc(g, b->len + 1);
			copy(p, b->data, b->len);
			t->strs[i] = p;
		}
		return t;
	}
	ox_error(g, NULL, "Constant node '%s': attribute '%s' is not supported", np->name, k);
	return NULL;
}

/* Resolve an input name: this graph first, then enclosing graphs (the
 * value is then "captured": an outer-scope reference, no producer here). */
static ox_id resolve(ctx *c, ox_graph *g, const char *name)
{
	ox_id v = scope_find(c->sc, name);
	if (v >= 0)
		return v;
	for (const scope *p = c->sc->up; p; p = p->up)
		if ((v = scope_find(p, name)) >= 0) {
			ox_id cv = ox_ir_add_value(g, name, OX_V_INPUT);
			ox_value *o = &p->g->vals[v];
			g->vals[cv].dtype = o->dtype;
			g->vals[cv].has_shape = o->has_shape;
			g->vals[cv].shape = o->shape;
			scope_add(c->sc, cv);
			return cv;
		}
	return -1;
}

/* Every name the importer reads must be there: protobuf leaves an absent
 * string NULL, and a model from anywhere may omit any field. */
static int check_names(ox_graph *g, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (!gp->initializer[i]->name || !*gp->initializer[i]->name)
			return ox_error(g, NULL, "initializer %zu has no name", i);
	const Onnx__ValueInfoProto *const *lists[] = {(const Onnx__ValueInfoProto *const *)gp->input,
						       (const Onnx__ValueInfoProto *const *)gp->output};
	size_t counts[] = {gp->n_input, gp->n_output};
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++)
			if (!lists[l][i]->name || !*lists[l][i]->name)
				return ox_error(g, NULL, "graph %s %zu has no name", l ? "output" : "input", i);
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		if (!np->op_type || !*np->op_type)
			return ox_error(g, NULL, "node %zu ('%s') has no op_type", i, np->name ? np->name : "");
		for (size_t k = 0; k < np->n_attribute; k++)
			if (!np->attribute[k]->name || !*np->attribute[k]->name)
				return ox_error(g, NULL, "node %zu ('%s', %s): attribute %zu has no name", i,
						np->name ? np->name : "", np->op_type, k);
	}
	return 0;
}

/* An input nothing before node i defines: name the later node that makes
 * it, if one does (ONNX keeps nodes in topological order, so it is a
 * cycle or a misordered graph). */
static int undefined_input(ox_graph *g, ox_node *n, Onnx__NodeProto **nodes, size_t nnodes, size_t i,
			   const char *name)
{
	for (size_t j = i + 1; j < nnodes; j++)
		for (size_t k = 0; k < nodes[j]->n_output; k++)
			if (!strcmp(nodes[j]->output[k], name))
				return ox_error(g, n, "input '%s' is not defined before use: the later node '%s' "
						"makes it (nodes out of order, or a cycle)", name, nodes[j]->name);
	return ox_error(g, n, "input '%s' is not defined by any graph input, initializer or node", name);
}

static int import_body(ctx *c, ox_graph *g, const Onnx__GraphProto *gp)
{
	int rc = 0;
	if (check_names(g, gp))
		return -1;
	g->name = ox_ir_strdup(g, gp->name);
	if (!gp->n_output)
		return ox_error(g, NULL, "graph '%s' has no outputs", g->name);
	for (size_t i = 0; i < gp->n_initializer; i++) {
		ox_tensor *t = import_tensor(c, g, gp->initializer[i]);
		ox_id v = t ? define(c, g, NULL, gp->initializer[i]->name, OX_V_CONST) : -1;
		if (v < 0)
			return -1;
		ox_ir_set_const(g, v, t);
	}
	if (gp->n_sparse_initializer)
		return ox_error(g, NULL, "sparse initializers are not supported");
	int nin = 0;
	g->inputs = ox_ir_alloc(g, (gp->n_input + 1) * sizeof(ox_id));
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		ox_id v = scope_find(c->sc, vi->name);
		if (v >= 0 && g->vals[v].kind == OX_V_CONST)
			continue; /* an initializer with a default: compiled as a constant */
		if ((v = define(c, g, NULL, vi->name, OX_V_INPUT)) < 0 || check_type(g, vi))
			return -1;
		import_type(g, &g->vals[v], vi->type);
		g->inputs[nin++] = v;
	}
	g->ninputs = nin;
	size_t nnodes = 0;
	Onnx__NodeProto **nodes = ox_fe_functions_expand(c->fns, gp->node, gp->n_node, &nnodes);
	if (!nodes)
		return ox_error(g, NULL, "model-local functions could not be inlined");
	for (size_t i = 0; i < nnodes; i++) {
		const Onnx__NodeProto *np = nodes[i];
		const char *domain = np->domain ? np->domain : "";
		if (!strcmp(np->op_type, "Constant") && (!*domain || !strcmp(domain, "ai.onnx"))) {
			if (np->n_output != 1)
				return ox_error(g, NULL, "Constant node '%s' has %zu outputs, expected 1", np->name,
						np->n_output);
			ox_tensor *t = constant_value(c, g, np);
			ox_id v = t ? define(c, g, NULL, np->output[0], OX_V_CONST) : -1;
			if (v < 0)
				return -1;
			ox_ir_set_const(g, v, t);
			continue;
		}
		int op = ox_op_lookup(domain, np->op_type);
		if (op != OX_OP_UNKNOWN && (ox_ops[op].flags & OX_F_INTERNAL))
			op = OX_OP_UNKNOWN; /* onnxcc's own ops exist only between passes */
		ox_id nid = ox_ir_add_node(g, op, np->op_type, np->name, (int)np->n_input, (int)np->n_output);
		ox_node *n = &g->nodes[nid];
		n->domain = ox_ir_strdup(g, domain);
		n->opset = domain_opset(c, g, domain);
		if (op == OX_OP_UNKNOWN) {
			ox_error(g, n, "unsupported operator%s%s", *domain ? " in domain " : "", domain);
			c->nunsupported++;
		}
		for (size_t k = 0; k < np->n_input; k++) {
			if (!np->input[k][0])
				continue;
			ox_id v = resolve(c, g, np->input[k]);
			if (v < 0)
				return undefined_input(g, &g->nodes[nid], nodes, nnodes, i, np->input[k]);
			g->nodes[nid].in[k] = v;
		}
		n = &g->nodes[nid];
		n->nattr = (int)np->n_attribute;
		n->attrs = ox_ir_alloc(g, (n->nattr + 1) * sizeof(ox_attr));
		for (size_t k = 0; k < np->n_attribute; k++) {
			if (import_attr(c, g, &g->nodes[nid].attrs[k], np->attribute[k]))
				return -1;
			/* passes keep their facts in attributes named ox_... */
			if (!strncmp(g->nodes[nid].attrs[k].name, "ox_", 3))
				return ox_error(g, &g->nodes[nid], "attribute '%s': names starting with 'ox_' are "
						"reserved by onnxcc", g->nodes[nid].attrs[k].name);
		}
		for (size_t k = 0; k < np->n_output; k++) {
			if (!np->output[k][0])
				continue;
			ox_id v = define(c, g, &g->nodes[nid], np->output[k], OX_V_INTERNAL);
			if (v < 0)
				return -1;
			g->vals[v].producer = nid;
			g->nodes[nid].out[k] = v;
		}
	}
	g->noutputs = (int)gp->n_output;
	g->outputs = ox_ir_alloc(g, (gp->n_output + 1) * sizeof(ox_id));
	g->output_names = ox_ir_alloc(g, (gp->n_output + 1) * sizeof(char *));
	for (size_t i = 0; i < gp->n_output; i++) {
		ox_id v = resolve(c, g, gp->output[i]->name);
		if (v < 0)
			return ox_error(g, NULL, "graph output '%s' is not produced by any node",
					gp->output[i]->name);
		g->outputs[i] = v;
		g->output_names[i] = ox_ir_strdup(g, gp->output[i]->name);
		ox_value *val = &g->vals[v];
		if (!val->has_shape && val->kind == OX_V_INTERNAL) {
			/* keep the declared type as a hint for the verifier/dump only */
			int dt = val->dtype;
			import_type(g, val, gp->output[i]->type);
			if (dt)
				val->dtype = dt;
			val->has_shape = 0; /* inference decides */
			val->agg = 0;       /* so does expansion, for sequences */
			val->nelems = 0;
		}
	}
	return rc;
}

static int import_graph(ctx *c, ox_graph *g, const Onnx__GraphProto *gp)
{
	scope sc = {c->sc, g, NULL, 0, 0};
	c->sc = &sc;
	int rc = import_body(c, g, gp);
	c->sc = sc.up;
	free(sc.slot);
	return rc;
}

ox_tensor *ox_fe_tensor(ox_graph *g, const char *path, const void *tensorproto)
{
	ctx c = {path, NULL, 0, NULL, NULL, NULL};
	c.dir = strdup(path);
	char *slash = strrchr(c.dir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(c.dir, ".");
	ox_tensor *t = import_tensor(&c, g, tensorproto);
	free(c.dir);
	return t;
}

/* The newest opset of each ONNX domain in the newest ONNX release the
 * conformance suite comes from (ONNX 1.22: ai.onnx 27); a model that asks
 * for a version no release has is wrong, not new. Other domains are
 * checked per node: their ops are unsupported. */
static const struct { const char *domain; int newest; } onnx_opsets[] = {
	{"", 27}, {"ai.onnx", 27}, {"ai.onnx.ml", 5}, {"ai.onnx.preview", 1},
	{"ai.onnx.preview.training", 1},
};

static int check_opsets(ox_graph *g, const Onnx__ModelProto *mp)
{
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const char *d = mp->opset_import[i]->domain ? mp->opset_import[i]->domain : "";
		long long v = mp->opset_import[i]->version;
		for (size_t k = 0; k < sizeof onnx_opsets / sizeof onnx_opsets[0]; k++)
			if (!strcmp(d, onnx_opsets[k].domain) && (v < 1 || v > onnx_opsets[k].newest))
				return ox_error(g, NULL, "opset %lld of domain '%s' does not exist (ONNX has 1 to %d)",
						v, *d ? d : "ai.onnx", onnx_opsets[k].newest);
	}
	return 0;
}

ox_graph *ox_fe_load(const char *path)
{
	size_t len = 0;
	unsigned char *buf = read_file(path, &len);
	if (!buf) {
		fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
		return NULL;
	}
	/* no bytes parse as an empty ModelProto: say what happened */
	Onnx__ModelProto *mp = len ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
	free(buf);
	if (!mp) {
		fprintf(stderr, "%s: not a valid ONNX model (protobuf parse failed)\n", path);
		return NULL;
	}
	ox_graph *g = ox_ir_new(path);
	ctx c = {path, NULL, 0, ox_fe_functions_new(mp), mp, NULL};
	c.dir = strdup(path);
	char *slash = strrchr(c.dir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(c.dir, ".");
	g->ir_version = mp->has_ir_version ? mp->ir_version : 0;
	g->opset = 1;
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const char *d = mp->opset_import[i]->domain;
		if (!d || !*d || !strcmp(d, "ai.onnx"))
			g->opset = (int)mp->opset_import[i]->version;
	}
	int rc = check_opsets(g, mp);
	if (!rc && !mp->graph) {
		rc = ox_error(g, NULL, "model has no graph");
	} else if (!rc && g->ir_version && g->ir_version < 3) {
		rc = ox_error(g, NULL, "IR version %lld is not supported (3 and newer are)",
			      (long long)g->ir_version);
	} else if (!rc) {
		rc = import_graph(&c, g, mp->graph);
		if (!rc && c.nunsupported)
			rc = ox_error(g, NULL, "%d node%s with unsupported operators (listed above)",
				      c.nunsupported, c.nunsupported > 1 ? "s" : "");
	}
	ox_fe_functions_free(c.fns);
	onnx__model_proto__free_unpacked(mp, NULL);
	free(c.dir);
	if (rc) {
		ox_ir_free(g);
		return NULL;
	}
	return g;
}
