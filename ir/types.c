/* types.c: dtypes, symbolic dims, shapes and constant tensor access.
 *
 * A dim is an int64: >= 0 a constant, < 0 the id of a hash-consed
 * expression over symbols (N, 2*N, N/8, ...). ox_dim_op folds constants and
 * simple identities, so shapes stay constant whenever their inputs are.
 * Sub-byte dtypes (u4 i4 f4e2m1 u2 i2) are held unpacked, one element per
 * byte: i4/i2 as a sign-extended int8, u4/u2 as a uint8, f4e2m1 as its 4-bit
 * code; ONNX's packed form exists only at the file boundary (frontend).
 */
#include "ir.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	size_t size;
} dtypes[OX_NDTYPE] = {
	[OX_UNDEF] = {"undef", 0}, [OX_F32] = {"f32", 4}, [OX_U8] = {"u8", 1},
	[OX_I8] = {"i8", 1}, [OX_U16] = {"u16", 2}, [OX_I16] = {"i16", 2},
	[OX_I32] = {"i32", 4}, [OX_I64] = {"i64", 8}, [OX_STRING] = {"string", sizeof(char *)},
	[OX_BOOL] = {"bool", 1}, [OX_F16] = {"f16", 2}, [OX_F64] = {"f64", 8},
	[OX_U32] = {"u32", 4}, [OX_U64] = {"u64", 8}, [OX_C64] = {"c64", 8},
	[OX_C128] = {"c128", 16}, [OX_BF16] = {"bf16", 2},
	[OX_F8E4M3FN] = {"f8e4m3fn", 1}, [OX_F8E4M3FNUZ] = {"f8e4m3fnuz", 1},
	[OX_F8E5M2] = {"f8e5m2", 1}, [OX_F8E5M2FNUZ] = {"f8e5m2fnuz", 1},
	[OX_U4] = {"u4", 1}, [OX_I4] = {"i4", 1}, [OX_F4E2M1] = {"f4e2m1", 1},
	[OX_F8E8M0] = {"f8e8m0", 1}, [OX_U2] = {"u2", 1}, [OX_I2] = {"i2", 1},
};

const char *ox_dtype_name(int dt)
{
	return dt >= 0 && dt < OX_NDTYPE && dtypes[dt].name ? dtypes[dt].name : "?";
}

int ox_dtype_from_name(const char *s)
{
	for (int i = 0; i < OX_NDTYPE; i++)
		if (dtypes[i].name && !strcmp(dtypes[i].name, s))
			return i;
	return -1;
}

size_t ox_dtype_size(int dt)
{
	return dt >= 0 && dt < OX_NDTYPE ? dtypes[dt].size : 0;
}

int ox_dtype_is_float(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16 ||
	       (dt >= OX_F8E4M3FN && dt <= OX_F8E5M2FNUZ);
}

int ox_dtype_is_int(int dt)
{
	switch (dt) {
	case OX_U8: case OX_I8: case OX_U16: case OX_I16: case OX_I32:
	case OX_I64: case OX_U32: case OX_U64:
		return 1;
	}
	return 0;
}

int ox_dtype_is_signed(int dt)
{
	return dt == OX_I8 || dt == OX_I16 || dt == OX_I32 || dt == OX_I64 || dt == OX_I4 ||
	       dt == OX_I2 || ox_dtype_is_float(dt);
}

/* ---- symbolic dims ---- */
static ox_dim intern(ox_graph *g, const ox_dexpr *e)
{
	for (int i = 0; i < OX_DX(g)->ndexprs; i++) {
		const ox_dexpr *x = &OX_DX(g)->dexprs[i];
		if (x->op != e->op)
			continue;
		if (e->op == OX_DE_SYM ? !strcmp(x->sym, e->sym) : (x->a == e->a && x->b == e->b))
			return -(ox_dim)i - 1;
	}
	if (OX_DX(g)->ndexprs == OX_DX(g)->capdexprs) {
		OX_DX(g)->capdexprs = OX_DX(g)->capdexprs ? 2 * OX_DX(g)->capdexprs : 16;
		OX_DX(g)->dexprs = realloc(OX_DX(g)->dexprs, OX_DX(g)->capdexprs * sizeof *OX_DX(g)->dexprs);
		if (!OX_DX(g)->dexprs)
			ox_die("out of memory");
	}
	OX_DX(g)->dexprs[OX_DX(g)->ndexprs] = *e;
	return -(ox_dim)OX_DX(g)->ndexprs++ - 1;
}

static ox_dim intern_op(ox_graph *g, int op, ox_dim a, ox_dim b)
{
	ox_dexpr e = {op, a, b, NULL, -1, OX_RT_NONE, 0, -1, NULL};
	return intern(g, &e);
}

ox_dim ox_dim_sym(ox_graph *g, const char *name)
{
	ox_dexpr e = {OX_DE_SYM, 0, 0, ox_ir_strdup(g, name), -1, OX_RT_NONE, 0, -1, NULL};
	return intern(g, &e);
}

ox_dim ox_dim_unknown(ox_graph *g, const char *hint)
{
	char buf[256];
	snprintf(buf, sizeof buf, "?%s#%d", hint ? hint : "", OX_DX(g)->nunknown++);
	return ox_dim_sym(g, buf);
}

ox_dim ox_dim_data(ox_graph *g, ox_id def, int axis, int64_t hi)
{
	char buf[600];
	snprintf(buf, sizeof buf, "$%.500s:%d", g->vals[def].name, axis);
	ox_dim d = ox_dim_sym(g, buf);
	ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->rt != OX_RT_DATA) {
		e->rt = OX_RT_DATA;
		e->lo = 0;
		e->hi = -1;
		e->def = g->vals[def].name;
	}
	/* a bound learnt again (fold's walk may infer a node twice) only tightens */
	if (hi >= 0 && (e->hi < 0 || hi < e->hi))
		e->hi = hi;
	return d;
}

int ox_dim_defined_by(const ox_graph *g, ox_dim d, ox_id v)
{
	const ox_dexpr *e = ox_dim_rtsym(g, d);
	return e && e->rt == OX_RT_DATA && v >= 0 && !strcmp(e->def, g->vals[v].name);
}

int ox_dim_may_equal(const ox_graph *g, ox_dim a, ox_dim b)
{
	int64_t alo, ahi, blo, bhi;
	if (a == b)
		return 1;
	if (a >= 0 && b >= 0)
		return 0;
	if (ox_dim_range(g, a, &alo, &ahi) || ox_dim_range(g, b, &blo, &bhi))
		return 1;
	return (ahi < 0 || blo <= ahi) && (bhi < 0 || alo <= bhi);
}

const ox_dexpr *ox_dim_rtsym(const ox_graph *g, ox_dim d)
{
	if (d >= 0 || -d - 1 >= OX_DX(g)->ndexprs)
		return NULL;
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	return e->op == OX_DE_SYM && e->value < 0 && e->rt != OX_RT_NONE ? e : NULL;
}

static int64_t fold(int op, int64_t a, int64_t b)
{
	switch (op) {
	/* -1 on overflow: the dim is then no constant, and ox_infer_node
	 * reports it (a model's dims must not wrap) */
	case OX_DE_ADD: return __builtin_add_overflow(a, b, &a) ? -1 : a;
	case OX_DE_SUB: return a - b;
	case OX_DE_MUL: return __builtin_mul_overflow(a, b, &a) ? -1 : a;
	case OX_DE_DIV: return b ? (a >= 0 ? a / b : -((-a + b - 1) / b)) : 0;
	case OX_DE_CEILDIV: return b ? (a + b - 1) / b : 0;
	case OX_DE_MOD: return b ? a % b : 0;
	case OX_DE_MAX: return a > b ? a : b;
	case OX_DE_MIN: return a < b ? a : b;
	}
	ox_die("bad dim op %d", op);
}

/* Products are kept in one form, a constant times the other factors in
 * id order ((f1*f2)*f3)*c, so that N*3*224 and 224*(3*N) are one id and a
 * quotient of products cancels (N*512/N is 512): what a Reshape's -1 and
 * the element counts of run-time shapes need. */
#define MAXFAC 32
typedef struct {
	int64_t c;
	int n;
	ox_dim f[MAXFAC];
} product;

static int factors(const ox_graph *g, ox_dim d, product *p)
{
	if (d >= 0)
		return __builtin_mul_overflow(p->c, d, &p->c) ? -1 : 0;
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_MUL)
		return factors(g, e->a, p) || factors(g, e->b, p);
	if (p->n == MAXFAC)
		return -1;
	p->f[p->n++] = d;
	return 0;
}

static int cmp_dim(const void *a, const void *b)
{
	ox_dim x = *(const ox_dim *)a, y = *(const ox_dim *)b;
	return x < y ? 1 : x > y ? -1 : 0; /* -1, -2, ...: older expressions first */
}

static ox_dim rebuild(ox_graph *g, product *p)
{
	if (p->c == 0)
		return 0;
	if (p->n == 0)
		return p->c;
	qsort(p->f, (size_t)p->n, sizeof *p->f, cmp_dim);
	ox_dim acc = p->f[0];
	for (int i = 1; i < p->n; i++)
		acc = intern_op(g, OX_DE_MUL, acc, p->f[i]);
	return p->c == 1 ? acc : intern_op(g, OX_DE_MUL, acc, p->c);
}

static ox_dim mul(ox_graph *g, ox_dim a, ox_dim b)
{
	product p = {1, 0, {0}};
	if (factors(g, a, &p) || factors(g, b, &p))
		return intern_op(g, OX_DE_MUL, a, b);
	return rebuild(g, &p);
}

/* a / b when b's factors are among a's (and its constant divides a's): the
 * exact quotient; else 0 (no quotient found) */
static int quotient(ox_graph *g, ox_dim a, ox_dim b, ox_dim *q)
{
	product pa = {1, 0, {0}}, pb = {1, 0, {0}};
	if (factors(g, a, &pa) || factors(g, b, &pb) || pb.c == 0 || pa.c % pb.c)
		return 0;
	for (int j = 0; j < pb.n; j++) {
		int i = 0;
		while (i < pa.n && pa.f[i] != pb.f[j])
			i++;
		if (i == pa.n)
			return 0;
		pa.f[i] = pa.f[--pa.n];
	}
	pa.c /= pb.c;
	*q = rebuild(g, &pa);
	return 1;
}

static ox_dim dim_op(ox_graph *g, int op, ox_dim a, ox_dim b);

/* An expression whose range is one point is that constant: with the
 * inputs' ranges given, ((L - 192) / 128 / 4) + 1 over L in 256..512 is 1,
 * which a model's shape tests (a squeeze when a dim is 1) need to know. */
ox_dim ox_dim_op(ox_graph *g, int op, ox_dim a, ox_dim b)
{
	ox_dim d = dim_op(g, op, a, b);
	int64_t lo, hi;
	/* (over run-time symbols: bound ones stay until ox_ir_resolve_dims) */
	if (d < 0 && ox_dim_eval(g, d) < 0 && !ox_dim_range(g, d, &lo, &hi) && lo == hi && lo >= 0)
		return lo;
	return d;
}

static ox_dim dim_op(ox_graph *g, int op, ox_dim a, ox_dim b)
{
	if (a >= 0 && b >= 0) {
		int64_t r = fold(op, a, b);
		if (r >= 0)
			return r;
	}
	if ((op == OX_DE_ADD || op == OX_DE_SUB) && b == 0)
		return a;
	if (op == OX_DE_ADD && a == 0)
		return b;
	if ((op == OX_DE_MUL || op == OX_DE_DIV || op == OX_DE_CEILDIV) && b == 1)
		return a;
	if (op == OX_DE_MUL && a == 1)
		return b;
	if (op == OX_DE_MUL && (a == 0 || b == 0))
		return 0;
	if ((op == OX_DE_MAX || op == OX_DE_MIN) && a == b)
		return a;
	if (op == OX_DE_SUB && a == b)
		return 0;
	if (op == OX_DE_MUL)
		return mul(g, a, b);
	ox_dim q;
	if ((op == OX_DE_DIV || op == OX_DE_CEILDIV) && (a < 0 || b < 0) && quotient(g, a, b, &q))
		return q;
	/* commutative ops: a constant goes second, else the older expression first */
	if ((op == OX_DE_ADD || op == OX_DE_MAX || op == OX_DE_MIN) && (a >= 0 || (b < 0 && b > a))) {
		ox_dim t = a;
		a = b;
		b = t;
	}
	/* (x + c1) +- c2 and (x - c1) +- c2: one constant offset */
	if ((op == OX_DE_ADD || op == OX_DE_SUB) && a < 0 && b >= 0) {
		const ox_dexpr *x = &OX_DX(g)->dexprs[-a - 1];
		if ((x->op == OX_DE_ADD || x->op == OX_DE_SUB) && x->b >= 0) {
			int64_t off = (x->op == OX_DE_ADD ? x->b : -x->b) + (op == OX_DE_ADD ? b : -b);
			ox_dim base = x->a;
			if (off == 0)
				return base;
			return ox_dim_op(g, off > 0 ? OX_DE_ADD : OX_DE_SUB, base, off > 0 ? off : -off);
		}
	}
	return intern_op(g, op, a, b);
}

int64_t ox_dim_eval(const ox_graph *g, ox_dim d)
{
	if (d >= 0)
		return d;
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM)
		return e->value;
	int64_t a = ox_dim_eval(g, e->a), b = ox_dim_eval(g, e->b);
	if (a < 0 || b < 0)
		return -1;
	return fold(e->op, a, b);
}

const char *ox_dim_unbound(const ox_graph *g, ox_dim d)
{
	if (d >= 0)
		return NULL;
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM)
		return e->value < 0 ? e->sym : NULL;
	const char *s = ox_dim_unbound(g, e->a);
	return s ? s : ox_dim_unbound(g, e->b);
}

/* interval arithmetic on non-negative dims; hi -1 is +infinity */
static int64_t hi_add(int64_t a, int64_t b)
{
	int64_t r;
	return a < 0 || b < 0 || __builtin_add_overflow(a, b, &r) ? -1 : r;
}

/* a lower bound's a + b and a - b, saturated: below INT64_MIN / 4 (the
 * least a lower bound says) it is that, above INT64_MAX / 4 that */
static int64_t lo_sat(int overflow, int64_t r, int negative)
{
	if (overflow)
		return negative ? INT64_MIN / 4 : INT64_MAX / 4;
	return r < INT64_MIN / 4 ? INT64_MIN / 4 : r > INT64_MAX / 4 ? INT64_MAX / 4 : r;
}

static int64_t lo_add(int64_t a, int64_t b)
{
	int64_t r;
	const int o = __builtin_add_overflow(a, b, &r);
	return lo_sat(o, r, a < 0);
}

static int64_t lo_sub(int64_t a, int64_t b)
{
	int64_t r;
	const int o = __builtin_sub_overflow(a, b, &r);
	return lo_sat(o, r, a < 0);
}

static int64_t hi_mul(int64_t a, int64_t b)
{
	int64_t r;
	if (a == 0 || b == 0)
		return 0;
	return a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) ? -1 : r;
}

int ox_dim_range(const ox_graph *g, ox_dim d, int64_t *lo, int64_t *hi)
{
	if (d >= 0) {
		*lo = *hi = d;
		return 0;
	}
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM) {
		if (e->value >= 0) {
			*lo = *hi = e->value;
			return 0;
		}
		if (e->rt == OX_RT_NONE)
			return -1;
		*lo = e->lo;
		*hi = e->hi;
		return 0;
	}
	int64_t al, ah, bl, bh;
	if (ox_dim_range(g, e->a, &al, &ah) || ox_dim_range(g, e->b, &bl, &bh))
		return -1;
	switch (e->op) {
	case OX_DE_ADD:
		*lo = lo_add(al, bl), *hi = hi_add(ah, bh);
		break;
	case OX_DE_SUB: /* lo may be negative: the bounds pass refuses that */
		*lo = bh < 0 ? INT64_MIN / 4 : lo_sub(al, bh);
		*hi = ah < 0 || __builtin_sub_overflow(ah, bl, hi) ? -1 : *hi;
		break;
	case OX_DE_MUL:
		*lo = al < 0 || bl < 0 ? INT64_MIN / 4 : hi_mul(al, bl) < 0 ? INT64_MAX / 4 : hi_mul(al, bl);
		*hi = hi_mul(ah, bh);
		break;
	case OX_DE_DIV:
	case OX_DE_CEILDIV: {
		/* by positive divisors: the least quotient is al over the largest
		 * divisor (the smallest when al < 0), rounded down (up for ceil) */
		int c = e->op == OX_DE_CEILDIV;
		int64_t bmin = bl > 0 ? bl : 1, bmax = bh > 0 ? bh : bh < 0 ? INT64_MAX : 1;
		int64_t d = al < 0 ? bmin : bmax;
		*lo = al >= 0 ? (c ? al / d + (al % d != 0) : al / d) : (c ? -(-al / d) : -((-al + d - 1) / d));
		*hi = ah < 0 ? -1 : c ? ah / bmin + (ah % bmin != 0) : ah / bmin;
		break;
	}
	case OX_DE_MOD:
		*lo = 0;
		*hi = bh < 0 ? ah : ah < 0 || bh - 1 < ah ? (bh > 0 ? bh - 1 : 0) : ah;
		break;
	case OX_DE_MAX:
		*lo = al > bl ? al : bl;
		*hi = ah < 0 || bh < 0 ? -1 : ah > bh ? ah : bh;
		break;
	case OX_DE_MIN:
		*lo = al < bl ? al : bl;
		*hi = ah < 0 ? bh : bh < 0 ? ah : ah < bh ? ah : bh;
		break;
	default:
		return -1;
	}
	return 0;
}

int64_t ox_dim_hi(const ox_graph *g, ox_dim d)
{
	int64_t lo, hi;
	return ox_dim_range(g, d, &lo, &hi) ? -1 : hi;
}

int ox_dim_is_rt(const ox_graph *g, ox_dim d)
{
	return d < 0 && ox_dim_eval(g, d) < 0;
}

int ox_shape_is_rt(const ox_graph *g, const ox_shape *s)
{
	for (int k = 0; k < s->rank; k++)
		if (ox_dim_is_rt(g, s->d[k]))
			return 1;
	return 0;
}

int ox_node_rt(const ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id >= 0 && g->vals[id].has_shape && ox_shape_is_rt(g, &g->vals[id].shape))
			return 1;
	}
	return 0;
}

ox_dim ox_shape_numel_dim(ox_graph *g, const ox_shape *s)
{
	ox_dim n = 1;
	for (int k = 0; k < s->rank; k++)
		n = ox_dim_mul(g, n, s->d[k]);
	return n;
}

int64_t ox_shape_max_numel(const ox_graph *g, const ox_shape *s)
{
	int64_t n = 1;
	for (int k = 0; k < s->rank; k++) {
		int64_t h = ox_dim_hi(g, s->d[k]);
		if (h == 0)
			return 0;
		n = hi_mul(n, h);
	}
	return n;
}

int ox_dim_str(const ox_graph *g, ox_dim d, char *buf, size_t n)
{
	if (d >= 0)
		return snprintf(buf, n, "%lld", (long long)d);
	const ox_dexpr *e = &OX_DX(g)->dexprs[-d - 1];
	if (e->op == OX_DE_SYM)
		return snprintf(buf, n, "%s", e->sym);
	static const char *ops[] = {"", "+", "-", "*", "/", "/^", "%", " max ", " min "};
	char a[128], b[128];
	ox_dim_str(g, e->a, a, sizeof a);
	ox_dim_str(g, e->b, b, sizeof b);
	return snprintf(buf, n, "(%s%s%s)", a, ops[e->op], b);
}

int ox_ir_bind(ox_graph *g, const char *sym, int64_t value)
{
	int found = -1;
	for (int i = 0; i < OX_DX(g)->ndexprs; i++)
		if (OX_DX(g)->dexprs[i].op == OX_DE_SYM && !strcmp(OX_DX(g)->dexprs[i].sym, sym)) {
			OX_DX(g)->dexprs[i].value = value;
			found = 0;
		}
	return found;
}

int ox_ir_set_range(ox_graph *g, const char *sym, int64_t lo, int64_t hi)
{
	if (lo == hi)
		return ox_ir_bind(g, sym, lo);
	int found = -1;
	for (int i = 0; i < OX_DX(g)->ndexprs; i++) {
		ox_dexpr *e = &OX_DX(g)->dexprs[i];
		if (e->op == OX_DE_SYM && !strcmp(e->sym, sym)) {
			e->value = -1;
			e->rt = OX_RT_INPUT;
			e->lo = lo;
			e->hi = hi;
			found = 0;
		}
	}
	return found;
}

void ox_ir_resolve_dims(ox_graph *g)
{
	for (int i = 0; i < g->nvals; i++) {
		ox_shape *s = &g->vals[i].shape;
		for (int k = 0; k < s->rank; k++) {
			int64_t v = ox_dim_eval(g, s->d[k]);
			if (v >= 0)
				s->d[k] = v;
		}
	}
}

int ox_shape_is_const(const ox_shape *s)
{
	for (int k = 0; k < s->rank; k++)
		if (s->d[k] < 0)
			return 0;
	return 1;
}

int64_t ox_shape_numel(const ox_shape *s)
{
	int64_t n = 1;
	for (int k = 0; k < s->rank; k++) {
		if (s->d[k] < 0 || __builtin_mul_overflow(n, s->d[k], &n))
			return -1;
	}
	return n;
}

int ox_shape_too_big(const ox_shape *s, int dtype)
{
	int64_t n = 1, size = dtype == OX_STRING ? (int64_t)sizeof(char *) : (int64_t)ox_dtype_size(dtype);
	for (int k = 0; k < s->rank; k++)
		if (s->d[k] >= 0 && __builtin_mul_overflow(n, s->d[k], &n))
			return 1;
	return __builtin_mul_overflow(n, size ? size : 1, &n) || n > OX_MAX_BYTES;
}

const char *const ox_layout_names[OX_NLAYOUTS] = {"plain", "blocked", "convw", "dww", "gemmb", "padded", "winow", "qconvw", "qdww", "qgemmb", "rnnt"};

int ox_layout_nparams(int layout)
{
	return layout == OX_L_CONVW || layout == OX_L_WINOW ? 3 : layout == OX_L_GEMMB || layout == OX_L_QCONVW ? 2 : 1;
}

static int64_t round_up(int64_t x, int64_t b)
{
	return b > 0 ? (x + b - 1) / b * b : x;
}

int64_t ox_value_storage_numel(const ox_value *v)
{
	int64_t n = ox_shape_numel(&v->shape);
	const ox_dim *d = v->shape.d;
	if (n < 0 || v->layout == OX_L_PLAIN)
		return n;
	switch (v->layout) {
	case OX_L_BLOCKED: /* [N][C/b][H][W][b] */
		if (v->shape.rank < 2 || d[1] == 0)
			return n;
		return n / d[1] * round_up(d[1], v->lp[0]);
	case OX_L_PADDED:
		return v->shape.rank == 1 ? round_up(n, v->lp[0]) : n;
	case OX_L_CONVW: /* M rounded up to the vector */
	case OX_L_DWW:
		if (v->shape.rank < 1 || d[0] == 0)
			return n;
		return n / d[0] * round_up(d[0], v->lp[0]);
	case OX_L_GEMMB: /* [K, N] with N rounded up */
		if (v->shape.rank != 2 || d[1] == 0)
			return n;
		return d[0] * round_up(d[1], v->lp[0]);
	case OX_L_WINOW: /* (m+2)^2 per (output, input) channel, M rounded up */
		if (v->shape.rank != 4)
			return n;
		return (int64_t)(v->lp[1] + 2) * (v->lp[1] + 2) * d[1] * round_up(d[0], v->lp[0]);
	case OX_L_QGEMMB: /* [K, N], both rounded up */
		if (v->shape.rank != 2)
			return n;
		return round_up(d[0], 4) * round_up(d[1], 16);
	case OX_L_QCONVW: { /* per group: Mg and Cg rounded up to 8 and 4; the ones block */
		if (v->shape.rank < 3 || v->lp[0] < 1 || d[0] % v->lp[0])
			return n;
		int64_t taps = 1;
		for (int k = 2; k < v->shape.rank; k++)
			taps *= d[k];
		int64_t blk = taps * round_up(d[1], 4) * 8;
		return (v->lp[0] * round_up(d[0] / v->lp[0], 8) / 8 + v->lp[1]) * blk;
	}
	}
	return n;
}

int64_t ox_value_max_storage(const ox_graph *g, const ox_value *v)
{
	if (ox_shape_is_const(&v->shape))
		return ox_value_storage_numel(v);
	ox_value top = *v;
	int64_t n = 0;
	for (int k = 0; k < v->shape.rank && n >= 0; k++) {
		top.shape.d[k] = ox_dim_hi(g, v->shape.d[k]);
		if (top.shape.d[k] < 0)
			n = -1;
	}
	if (n >= 0)
		n = ox_value_storage_numel(&top);
	if (v->cap > 0 && v->layout == OX_L_PLAIN && (n < 0 || v->cap < n))
		n = v->cap;
	return n;
}

int ox_shape_str(const ox_graph *g, const ox_shape *s, char *buf, size_t n)
{
	size_t at = 0;
	at += snprintf(buf + at, n - at, "[");
	for (int k = 0; k < s->rank && at < n; k++) {
		if (k)
			at += snprintf(buf + at, n - at, ",");
		if (at < n)
			at += ox_dim_str(g, s->d[k], buf + at, n - at);
	}
	if (at < n)
		at += snprintf(buf + at, n - at, "]");
	return (int)at;
}

int64_t ox_tensor_numel(const ox_tensor *t)
{
	return ox_shape_numel(&t->shape);
}

/* ---- f16 / bf16 ----
 * One implementation for folding and generated code: the runtime header's
 * static functions, renamed on inclusion, behind the ir.h entry points. */
#define ox_f16_to_f32 rt_f16_to_f32
#define ox_f32_to_f16 rt_f32_to_f16
#define ox_bf16_to_f32 rt_bf16_to_f32
#define ox_f32_to_bf16 rt_f32_to_bf16
#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../runtime_min/ox_rt.h"
#undef ox_f16_to_f32
#undef ox_f32_to_f16
#undef ox_bf16_to_f32
#undef ox_f32_to_bf16

float ox_f16_to_f32(uint16_t h) { return rt_f16_to_f32(h); }
uint16_t ox_f32_to_f16(float f) { return rt_f32_to_f16(f); }
float ox_bf16_to_f32(uint16_t h) { return rt_bf16_to_f32(h); }
uint16_t ox_f32_to_bf16(float f) { return rt_f32_to_bf16(f); }

/* ---- float4e2m1: 1 sign, 2 exponent, 1 mantissa bit; no inf, no NaN ---- */
static const float f4_mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

static float ox_f4e2m1_to_f32(uint8_t c)
{
	float v = f4_mag[c & 7];
	return c & 8 ? -v : v;
}

/* Round to nearest, ties to the even code, saturating to +-6. ONNX maps
 * NaN to 0x8 (the reference implementation's choice: f4 has no NaN). The
 * thresholds are the midpoints between neighbouring magnitudes; at a tie
 * the comparison (<= or <) picks the even code. */
static uint8_t ox_f32_to_f4e2m1(float x)
{
	if (isnan(x))
		return 0x8;
	uint8_t s = signbit(x) ? 8 : 0;
	float a = fabsf(x);
	uint8_t c = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3 :
		    a <= 2.5f ? 4 : a < 3.5f ? 5 : a <= 5.0f ? 6 : 7;
	return s | c;
}

/* ---- element access ---- */
#define LOAD(T) do { T x; memcpy(&x, p, sizeof x); return x; } while (0)
double ox_tensor_get_f64(const ox_tensor *t, int64_t k)
{
	const unsigned char *p = (const unsigned char *)t->data + k * ox_dtype_size(t->dtype);
	switch (t->dtype) {
	case OX_F32: LOAD(float);
	case OX_F64: LOAD(double);
	case OX_F16: { uint16_t h; memcpy(&h, p, 2); return ox_f16_to_f32(h); }
	case OX_BF16: { uint16_t h; memcpy(&h, p, 2); return ox_bf16_to_f32(h); }
	case OX_F4E2M1: return ox_f4e2m1_to_f32(*p);
	case OX_U64: LOAD(uint64_t);
	default: return (double)ox_tensor_get_i64(t, k);
	}
}

int64_t ox_tensor_get_i64(const ox_tensor *t, int64_t k)
{
	const unsigned char *p = (const unsigned char *)t->data + k * ox_dtype_size(t->dtype);
	switch (t->dtype) {
	case OX_U8: case OX_BOOL: case OX_U4: case OX_U2: LOAD(uint8_t);
	case OX_I8: case OX_I4: case OX_I2: LOAD(int8_t);
	case OX_U16: LOAD(uint16_t);
	case OX_I16: LOAD(int16_t);
	case OX_I32: LOAD(int32_t);
	case OX_U32: LOAD(uint32_t);
	case OX_I64: LOAD(int64_t);
	case OX_U64: LOAD(uint64_t);
	case OX_F32: case OX_F64: case OX_F16: case OX_BF16: case OX_F4E2M1:
		return (int64_t)ox_tensor_get_f64(t, k);
	}
	ox_die("element access to a %s tensor", ox_dtype_name(t->dtype));
}
#undef LOAD

#define STORE(T, v) do { T x = (T)(v); memcpy(p, &x, sizeof x); return; } while (0)
void ox_tensor_set_f64(ox_tensor *t, int64_t k, double v)
{
	unsigned char *p = (unsigned char *)t->data + k * ox_dtype_size(t->dtype);
	switch (t->dtype) {
	case OX_F32: STORE(float, v);
	case OX_F64: STORE(double, v);
	case OX_F16: STORE(uint16_t, ox_f32_to_f16((float)v));
	case OX_BF16: STORE(uint16_t, ox_f32_to_bf16((float)v));
	case OX_BOOL: STORE(uint8_t, v != 0);
	case OX_F4E2M1: STORE(uint8_t, ox_f32_to_f4e2m1((float)v));
	default:
		if (isnan(v))
			v = 0;
		if (t->dtype == OX_U64)
			STORE(uint64_t, v);
		ox_tensor_set_i64(t, k, (int64_t)v);
	}
}

void ox_tensor_set_i64(ox_tensor *t, int64_t k, int64_t v)
{
	unsigned char *p = (unsigned char *)t->data + k * ox_dtype_size(t->dtype);
	switch (t->dtype) {
	case OX_U8: STORE(uint8_t, v);
	case OX_BOOL: STORE(uint8_t, v != 0);
	case OX_I8: STORE(int8_t, v);
	case OX_U16: STORE(uint16_t, v);
	case OX_I16: STORE(int16_t, v);
	case OX_I32: STORE(int32_t, v);
	case OX_U32: STORE(uint32_t, v);
	case OX_I64: STORE(int64_t, v);
	case OX_U64: STORE(uint64_t, v);
	/* sub-byte integers wrap to their width, like ONNX's Cast to them */
	case OX_U4: STORE(uint8_t, v & 15);
	case OX_U2: STORE(uint8_t, v & 3);
	case OX_I4: STORE(int8_t, ((v & 15) ^ 8) - 8);
	case OX_I2: STORE(int8_t, ((v & 3) ^ 2) - 2);
	case OX_F32: case OX_F64: case OX_F16: case OX_BF16: case OX_F4E2M1:
		ox_tensor_set_f64(t, k, (double)v);
		return;
	}
	ox_die("element store to a %s tensor", ox_dtype_name(t->dtype));
}
#undef STORE
