/* infer_ew.c: type and shape inference for the elementwise family.
 *
 * Unary ops keep their input's shape; binary, variadic and Where ops take
 * the numpy broadcast of their inputs (opset >= 7 semantics). Each op also
 * checks the dtypes the ONNX spec allows it, restricted to the ones the
 * backend can store (f16 bf16 f32 f64, 8..64-bit ints, bool; the casts
 * also the float8 kinds), so that an
 * unsupported model stops here with one clear message instead of reaching
 * the emitter. Comparisons, IsNaN and IsInf produce bool.
 */
#include "ir.h"
#include <stdio.h>
#include <string.h>

/* dtype classes an op accepts */
enum { C_FLOAT = 1, C_SINT = 2, C_UINT = 4, C_BOOL = 8, C_STR = 16 };
#define C_INT (C_SINT | C_UINT)
#define C_NUM (C_FLOAT | C_INT)

static int dtype_class(int dt)
{
	switch (dt) {
	case OX_F16: case OX_BF16: case OX_F32: case OX_F64:
		return C_FLOAT;
	case OX_I8: case OX_I16: case OX_I32: case OX_I64:
		return C_SINT;
	case OX_U8: case OX_U16: case OX_U32: case OX_U64:
		return C_UINT;
	case OX_BOOL:
		return C_BOOL;
	case OX_STRING:
		return C_STR;
	}
	return 0;
}

static const char *class_name(int cls)
{
	switch (cls) {
	case C_FLOAT: return "a floating-point";
	case C_INT: return "an integer";
	case C_UINT: return "an unsigned integer";
	case C_BOOL: return "a bool";
	case C_NUM: return "a numeric";
	case C_NUM | C_BOOL: return "a numeric or bool";
	case C_FLOAT | C_SINT: return "a float or signed integer";
	}
	return "a supported";
}

/* the classes the ONNX spec allows for the op's (first) input */
static int allowed_classes(const ox_node *n)
{
	switch (n->op) {
	case OX_OP_Abs: case OX_OP_Sign: case OX_OP_Clip: case OX_OP_Erf:
	case OX_OP_Add: case OX_OP_Sub: case OX_OP_Mul: case OX_OP_Div:
	case OX_OP_Pow: case OX_OP_Mod: case OX_OP_PRelu:
	case OX_OP_Less: case OX_OP_LessOrEqual: case OX_OP_Greater: case OX_OP_GreaterOrEqual:
	case OX_OP_Min: case OX_OP_Max: case OX_OP_Sum:
		return C_NUM;
	case OX_OP_Neg: case OX_OP_Relu:
		return C_FLOAT | C_SINT;
	case OX_OP_Equal:
		return C_NUM | C_BOOL | C_STR; /* strings: opset 19 (emit_ew compares with strcmp) */
	case OX_OP_Not: case OX_OP_And: case OX_OP_Or: case OX_OP_Xor:
		return C_BOOL;
	case OX_OP_BitShift:
		return C_UINT;
	case OX_OP_BitwiseAnd: case OX_OP_BitwiseOr: case OX_OP_BitwiseXor: case OX_OP_BitwiseNot:
		return C_INT;
	}
	return C_FLOAT; /* the math functions and activations, Mean */
}

static int check_dtype(ox_graph *g, ox_node *n, int k, int cls)
{
	ox_value *v = ox_in(g, n, k);
	if (!dtype_class(v->dtype))
		return ox_error(g, n, "input %d: dtype %s is not supported", k, ox_dtype_name(v->dtype));
	if (!(dtype_class(v->dtype) & cls))
		return ox_error(g, n, "input %d: expected %s tensor, got %s", k, class_name(cls),
		                ox_dtype_name(v->dtype));
	return 0;
}

static int same_dtype(ox_graph *g, ox_node *n, int a, int b)
{
	ox_value *va = ox_in(g, n, a), *vb = ox_in(g, n, b);
	if (va->dtype != vb->dtype)
		return ox_error(g, n, "inputs %d and %d have different dtypes (%s, %s)", a, b,
		                ox_dtype_name(va->dtype), ox_dtype_name(vb->dtype));
	return 0;
}

/* broadcast *acc with input k's shape, with a message on mismatch */
static int broadcast_in(ox_graph *g, ox_node *n, ox_shape *acc, int k)
{
	ox_value *v = ox_in(g, n, k);
	ox_shape r;
	if (ox_broadcast(g, acc, &v->shape, &r)) {
		char a[256], b[256];
		ox_shape_str(g, acc, a, sizeof a);
		ox_shape_str(g, &v->shape, b, sizeof b);
		return ox_error(g, n, "shapes %s and %s (input %d) cannot be broadcast", a, b, k);
	}
	*acc = r;
	return 0;
}

int infer_unary(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (check_dtype(g, n, 0, allowed_classes(n)))
		return -1;
	if (n->op == OX_OP_Clip) {
		for (int k = 1; k < 3; k++) {
			ox_value *b = ox_in(g, n, k);
			if (!b)
				continue;
			if (b->dtype != x->dtype)
				return ox_error(g, n, "bound input %d has dtype %s, expected %s", k,
				                ox_dtype_name(b->dtype), ox_dtype_name(x->dtype));
			if (ox_shape_numel(&b->shape) != 1)
				return ox_error(g, n, "bound input %d must be a scalar", k);
		}
	}
	if (n->op == OX_OP_Gelu) {
		const char *a = ox_attr_str(n, "approximate", "none");
		if (strcmp(a, "none") && strcmp(a, "tanh"))
			return ox_error(g, n, "approximate='%s' is not one of none, tanh", a);
	}
	int dt = x->dtype;
	if (n->op == OX_OP_IsNaN || n->op == OX_OP_IsInf)
		dt = OX_BOOL;
	ox_set_out(g, n, 0, dt, &x->shape);
	return 0;
}

int infer_binary(ox_graph *g, ox_node *n)
{
	if (check_dtype(g, n, 0, allowed_classes(n)))
		return -1;
	if (n->op == OX_OP_Pow) {
		/* opset 12 lets the exponent have its own numeric dtype */
		if (check_dtype(g, n, 1, C_NUM))
			return -1;
	} else if (same_dtype(g, n, 0, 1)) {
		return -1;
	}
	if (n->op == OX_OP_BitShift) {
		const char *d = ox_attr_str(n, "direction", "");
		if (strcmp(d, "LEFT") && strcmp(d, "RIGHT"))
			return ox_error(g, n, "direction='%s' is not LEFT or RIGHT", d);
	}
	ox_shape s = ox_in(g, n, 0)->shape;
	if (broadcast_in(g, n, &s, 1))
		return -1;
	int dt = ox_in(g, n, 0)->dtype;
	switch (n->op) {
	case OX_OP_Equal: case OX_OP_Less: case OX_OP_LessOrEqual:
	case OX_OP_Greater: case OX_OP_GreaterOrEqual:
		dt = OX_BOOL;
		break;
	case OX_OP_PRelu: {
		/* the slope broadcasts to X, never the other way */
		ox_shape xs = ox_in(g, n, 0)->shape;
		int same = s.rank == xs.rank;
		for (int i = 0; same && i < s.rank; i++)
			same = s.d[i] == xs.d[i] || s.d[i] < 0 || xs.d[i] < 0;
		if (!same)
			return ox_error(g, n, "slope does not broadcast to the shape of X");
		s = xs;
		break;
	}
	}
	ox_set_out(g, n, 0, dt, &s);
	return 0;
}

int infer_where(ox_graph *g, ox_node *n)
{
	if (check_dtype(g, n, 0, C_BOOL) || check_dtype(g, n, 1, C_NUM | C_BOOL) ||
	    same_dtype(g, n, 1, 2))
		return -1;
	ox_shape s = ox_in(g, n, 0)->shape;
	if (broadcast_in(g, n, &s, 1) || broadcast_in(g, n, &s, 2))
		return -1;
	ox_set_out(g, n, 0, ox_in(g, n, 1)->dtype, &s);
	return 0;
}

int infer_variadic(ox_graph *g, ox_node *n)
{
	if (check_dtype(g, n, 0, allowed_classes(n)))
		return -1;
	ox_shape s = ox_in(g, n, 0)->shape;
	for (int k = 1; k < n->nin; k++) {
		if (!ox_in(g, n, k))
			return ox_error(g, n, "input %d is omitted", k);
		if (same_dtype(g, n, 0, k) || broadcast_in(g, n, &s, k))
			return -1;
	}
	ox_set_out(g, n, 0, ox_in(g, n, 0)->dtype, &s);
	return 0;
}

static int is_f8(int dt)
{
	return (dt >= OX_F8E4M3FN && dt <= OX_F8E5M2FNUZ) || dt == OX_F8E8M0;
}

/* a dtype's name, or its ONNX number for one newer than our table */
static const char *dt_str(int dt, char *buf, size_t len)
{
	if (!strcmp(ox_dtype_name(dt), "?"))
		snprintf(buf, len, "dtype %d", dt);
	else
		snprintf(buf, len, "%s", ox_dtype_name(dt));
	return buf;
}

static int is_subbyte(int dt)
{
	return dt == OX_U4 || dt == OX_I4 || dt == OX_F4E2M1 || dt == OX_U2 || dt == OX_I2;
}

/* Cast, CastLike and BitCast. Float8 kinds cast to and from the others
 * through float (codegen/c/emit_ew.c); 64-bit integers are not narrowed to
 * float8 (they would round twice). Sub-byte kinds (held one per byte) cast
 * to and from all of these, but never BitCast: their ONNX bits are packed.
 * BitCast needs equal element sizes. */
int infer_cast(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int to;
	if (n->op == OX_OP_CastLike) {
		to = ox_in(g, n, 1)->dtype;
	} else {
		if (!ox_attr_get(n, "to"))
			return ox_error(g, n, "missing attribute 'to'");
		to = (int)ox_attr_int(n, "to", 0);
	}
	char a[32], b[32];
	int from = x->dtype;
	int ok = (dtype_class(from) || is_f8(from) || is_subbyte(from)) &&
		 (dtype_class(to) || is_f8(to) || is_subbyte(to));
	if (ok && n->op == OX_OP_BitCast && (is_subbyte(from) || is_subbyte(to)))
		ok = 0;
	if (ok && n->op == OX_OP_BitCast && ox_dtype_size(from) != ox_dtype_size(to))
		return ox_error(g, n, "bitcast from %s to %s: element sizes differ",
				dt_str(from, a, sizeof a), dt_str(to, b, sizeof b));
	if (ok && n->op != OX_OP_BitCast && is_f8(to) && (from == OX_I64 || from == OX_U64))
		ok = 0;
	if (!ok)
		return ox_error(g, n, "cast from %s to %s is not supported", dt_str(from, a, sizeof a),
				dt_str(to, b, sizeof b));
	if (n->op != OX_OP_BitCast && to == OX_F8E8M0 && from != to) {
		const char *rm = ox_attr_str(n, "round_mode", "up");
		if (strcmp(rm, "up") && strcmp(rm, "down") && strcmp(rm, "nearest"))
			return ox_error(g, n, "round_mode='%s' is not one of up, down, nearest", rm);
	}
	ox_set_out(g, n, 0, to, &x->shape);
	return 0;
}
