/* tensorfile.c: read one tensor from a .pb (ONNX TensorProto) or .npy file.
 *
 * Used by --const, which freezes a graph input to a known value (the
 * shape-steering inputs of a model: axes, sizes, a Reshape target), like
 * the build-time shape tensors of other compilers.
 */
#include "frontend.h"
#include "onnx.pb-c.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static const struct {
	const char *descr;
	int dtype;
} npy_types[] = {
	{"<f4", OX_F32}, {"<f8", OX_F64}, {"<f2", OX_F16}, {"<i8", OX_I64}, {"<i4", OX_I32},
	{"<i2", OX_I16}, {"|i1", OX_I8}, {"|u1", OX_U8}, {"<u2", OX_U16}, {"<u4", OX_U32},
	{"<u8", OX_U64}, {"|b1", OX_BOOL},
};

static ox_tensor *from_npy(ox_graph *g, const char *path, const unsigned char *b, size_t n)
{
	if (n < 10 || memcmp(b, "\x93NUMPY", 6)) {
		ox_error(g, NULL, "%s: not a .npy file", path);
		return NULL;
	}
	size_t hl = b[6] == 1 ? (size_t)(b[8] | b[9] << 8) : (size_t)(b[8] | b[9] << 8 | b[10] << 16 | (size_t)b[11] << 24);
	size_t start = b[6] == 1 ? 10 : 12;
	if (start + hl > n) {
		ox_error(g, NULL, "%s: truncated .npy header", path);
		return NULL;
	}
	char *h = strndup((const char *)b + start, hl);
	int dt = -1;
	for (size_t i = 0; i < sizeof npy_types / sizeof *npy_types; i++)
		if (strstr(h, npy_types[i].descr))
			dt = npy_types[i].dtype;
	ox_shape s = {0, {0}};
	char *sh = strstr(h, "'shape'");
	char *lp = sh ? strchr(sh, '(') : NULL;
	for (char *p = lp ? lp + 1 : NULL; p && *p && *p != ')';) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ')')
			break;
		if (s.rank == OX_MAX_RANK)
			break;
		s.d[s.rank++] = strtoll(p, &p, 10);
	}
	int fortran = strstr(h, "'fortran_order': True") != NULL;
	free(h);
	if (dt < 0 || !lp || fortran) {
		ox_error(g, NULL, "%s: unsupported .npy (dtype, shape or Fortran order)", path);
		return NULL;
	}
	ox_tensor *t = ox_ir_new_tensor(g, dt, &s);
	if (n - start - hl < t->nbytes) {
		ox_error(g, NULL, "%s: .npy data is shorter than its shape says", path);
		return NULL;
	}
	memcpy(t->data, b + start + hl, t->nbytes);
	return t;
}

ox_tensor *ox_fe_load_tensor(ox_graph *g, const char *path)
{
	size_t n = 0;
	unsigned char *b = slurp(path, &n);
	if (!b) {
		ox_error(g, NULL, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	ox_tensor *t;
	size_t pl = strlen(path);
	if (pl > 4 && !strcmp(path + pl - 4, ".npy")) {
		t = from_npy(g, path, b, n);
	} else {
		Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, n, b);
		if (!tp) {
			ox_error(g, NULL, "%s: not a TensorProto", path);
			t = NULL;
		} else {
			t = ox_fe_tensor(g, path, tp);
			onnx__tensor_proto__free_unpacked(tp, NULL);
		}
	}
	free(b);
	return t;
}

/* ---- --like: the structure of a graph input from an example value ---- */

static void type_like(ox_value *val, const Onnx__TensorProto *tp)
{
	val->dtype = tp->has_data_type ? tp->data_type : 0;
	val->has_shape = 1;
	val->shape.rank = (int)(tp->n_dims < OX_MAX_RANK ? tp->n_dims : OX_MAX_RANK);
	for (int d = 0; d < val->shape.rank; d++)
		val->shape.d[d] = tp->dims[d];
}

/* v becomes a sequence of new graph-input tensors NAME[i] typed like sp's */
static int like_seq(ox_graph *g, ox_id v, const char *name, const Onnx__SequenceProto *sp)
{
	if (sp->n_sequence_values || sp->n_optional_values || sp->n_sparse_tensor_values)
		return ox_error(g, NULL, "--like %s: only sequences of dense tensors are supported", name);
	ox_id *e = calloc(sp->n_tensor_values + 1, sizeof *e);
	int dt = 0;
	for (size_t i = 0; i < sp->n_tensor_values; i++) {
		char nm[600];
		snprintf(nm, sizeof nm, "%s[%zu]", name, i);
		e[i] = ox_ir_add_value(g, nm, OX_V_INPUT);
		type_like(&g->vals[e[i]], sp->tensor_values[i]);
		dt = g->vals[e[i]].dtype;
	}
	ox_ir_set_agg(g, v, OX_AGG_SEQ, e, (int)sp->n_tensor_values, dt);
	free(e);
	return 0;
}

int ox_fe_like(ox_graph *g, const char *name, const char *path)
{
	int k = ox_ir_find_input(g, name);
	if (k < 0)
		return ox_error(g, NULL, "--like: the model has no input '%s'", name);
	size_t n = 0;
	unsigned char *b = slurp(path, &n);
	if (!b)
		return ox_error(g, NULL, "cannot read %s: %s", path, strerror(errno));
	ox_id id = g->inputs[k];
	int agg = g->vals[id].agg, rc = -2;
	if (agg == OX_AGG_SEQ) {
		Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, n, b);
		if (sp) {
			rc = like_seq(g, id, name, sp);
			onnx__sequence_proto__free_unpacked(sp, NULL);
		}
	} else if (agg == OX_AGG_OPT) {
		Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, n, b);
		if (op) {
			rc = 0;
			if (op->optional_value || op->sparse_tensor_value) {
				rc = ox_error(g, NULL, "--like %s: only optionals of tensors or sequences are supported",
					      name);
			} else if (op->tensor_value || op->sequence_value) {
				/* the part is a new input (or sequence) of the same name */
				ox_id part = ox_ir_add_value(g, name, OX_V_INPUT);
				if (op->tensor_value)
					type_like(&g->vals[part], op->tensor_value);
				else
					rc = like_seq(g, part, name, op->sequence_value);
				ox_ir_set_agg(g, id, OX_AGG_OPT, &part, 1, 0);
			} else {
				ox_ir_set_agg(g, id, OX_AGG_OPT, NULL, 0, 0);
			}
			onnx__optional_proto__free_unpacked(op, NULL);
		}
	} else {
		Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, n, b);
		if (tp) {
			ox_value v = g->vals[id];
			type_like(&v, tp);
			if (g->vals[id].dtype && g->vals[id].dtype != v.dtype)
				rc = ox_error(g, NULL, "--like %s: the file holds %s, the input is %s", name,
					      ox_dtype_name(v.dtype), ox_dtype_name(g->vals[id].dtype));
			else
				rc = 0, g->vals[id] = v;
			onnx__tensor_proto__free_unpacked(tp, NULL);
		}
	}
	free(b);
	if (rc == -2)
		return ox_error(g, NULL, "%s: not a %s", path,
				agg == OX_AGG_SEQ ? "SequenceProto" : agg == OX_AGG_OPT ? "OptionalProto" : "TensorProto");
	return rc;
}
