/* emit_ew.c: C emitter for the elementwise family (unary math and
 * activations, Clip, Cast and BitCast, binary ops with broadcasting, Where,
 * variadic Min/Max/Sum/Mean).
 *
 * Each op becomes one C expression template over operands $0, $1, ... (the
 * loaded input elements, in their compute type: float for f16/bf16), which
 * emit_map wraps in a loop nest over the output: one flat loop when every
 * input is full-size or a scalar, else nested loops with constant strides
 * (stride 0 on broadcast dims) after dropping size-1 dims and merging dims
 * that are contiguous for every operand. Anything needing more than an
 * expression (integer division guards, NaN-propagating Min/Max) is a small
 * static helper added once per type with ox_cg_helper. Casts to and from
 * float8 and the sub-byte kinds use templates/quant_f8.c, quant_sub.c.
 */
#include "../cg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXOPS 64 /* template operands: inputs of one node */
#define TABS "\t\t\t\t\t\t\t\t\t\t\t\t\t\t"

static int is_fp(int dt)
{
	return dt == OX_F16 || dt == OX_BF16 || dt == OX_F32 || dt == OX_F64;
}

static int is_uint(int dt)
{
	return dt == OX_U8 || dt == OX_U16 || dt == OX_U32 || dt == OX_U64;
}

/* the dtype whose C type arithmetic happens in: f16/bf16 compute in f32 */
static int compute_dt(int dt)
{
	return dt == OX_F16 || dt == OX_BF16 ? OX_F32 : dt;
}

/* libm name for the compute type: "exp" -> "expf" for float */
static const char *fn(int cdt, const char *name)
{
	static char ring[8][32];
	static int at;
	at = (at + 1) % 8;
	ox_cg_snprintf(ring[at], sizeof ring[at], "%s%s", name, cdt == OX_F64 ? "" : "f");
	return ring[at];
}

/* an integer literal of dtype dt, exact for all of int64/uint64 */
static const char *int_lit(int dt, int64_t v)
{
	static char ring[4][32];
	static int at;
	at = (at + 1) % 4;
	char *r = ring[at];
	if (dt == OX_U64)
		ox_cg_snprintf(r, 32, "%lluu", (unsigned long long)v);
	else if (dt == OX_I64 && v == INT64_MIN)
		ox_cg_snprintf(r, 32, "INT64_MIN");
	else if (dt == OX_I64)
		ox_cg_snprintf(r, 32, "%lldll", (long long)v);
	else if (dt == OX_U32)
		ox_cg_snprintf(r, 32, "%lldu", (long long)v);
	else
		ox_cg_snprintf(r, 32, "%lld", (long long)v);
	return r;
}

static const char *uint_type(int dt)
{
	switch (ox_dtype_size(dt)) {
	case 1: return "uint8_t";
	case 2: return "uint16_t";
	case 4: return "uint32_t";
	}
	return "uint64_t";
}

/* ---- helpers, instantiated once per compute type ---- */

static const char *helper(ox_cg *cg, const char *kind, int cdt)
{
	static char name[4][48];
	static int at;
	at = (at + 1) % 4;
	const char *T = ox_cg_ctype(cdt), *S = ox_cg_sfx(cdt);
	ox_cg_snprintf(name[at], sizeof name[at], "ox_%s_%s", kind, S);
	const char *N = name[at];
	char key[64], text[1024];
	ox_cg_snprintf(key, sizeof key, "ew/%s", N);
	if (!strcmp(kind, "div") && is_uint(cdt)) {
		ox_cg_snprintf(text, sizeof text,
			 "/* integer division, with x / 0 = 0 (as numpy) instead of a trap */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n\treturn b == 0 ? 0 : a / b;\n}\n", T, N, T, T);
	} else if (!strcmp(kind, "div")) {
		ox_cg_snprintf(text, sizeof text,
			 "/* C division (truncating), with x / 0 = 0 (as numpy) and no trap on MIN / -1 */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n"
			 "\treturn b == 0 ? 0 : b == -1 ? (%s)(0u - (%s)a) : a / b;\n}\n",
			 T, N, T, T, T, uint_type(cdt));
	} else if (!strcmp(kind, "fmod") && is_uint(cdt)) {
		ox_cg_snprintf(text, sizeof text,
			 "/* C remainder, with x %% 0 = 0 */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n\treturn b == 0 ? 0 : a %% b;\n}\n", T, N, T, T);
	} else if (!strcmp(kind, "fmod")) {
		ox_cg_snprintf(text, sizeof text,
			 "/* C remainder (sign of the dividend), with x %% 0 = 0 and no trap on MIN %% -1 */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n\treturn b == 0 || b == -1 ? 0 : a %% b;\n}\n",
			 T, N, T, T);
	} else if (!strcmp(kind, "mod") && is_fp(cdt)) {
		ox_cg_snprintf(text, sizeof text,
			 "/* Python's %%: the result takes the divisor's sign */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n\t%s r = %s(a, b);\n"
			 "\treturn r != 0 && (r < 0) != (b < 0) ? r + b : r;\n}\n",
			 T, N, T, T, T, fn(cdt, "fmod"));
	} else if (!strcmp(kind, "mod")) {
		ox_cg_snprintf(text, sizeof text,
			 "/* Python's %%: the result takes the divisor's sign; x %% 0 = 0 */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n\tif (b == 0 || b == -1)\n\t\treturn 0;\n"
			 "\t%s r = a %% b;\n\treturn r != 0 && (r < 0) != (b < 0) ? r + b : r;\n}\n",
			 T, N, T, T, T);
	} else if (!strcmp(kind, "ipow")) {
		ox_cg_snprintf(text, sizeof text,
			 "/* integer power by squaring, wrapping like integer multiplication;\n"
			 " * a negative exponent gives the truncated 1 / a^-e */\n"
			 "OX_STATIC int64_t %s(int64_t a, int64_t e)\n{\n"
			 "\tif (e < 0)\n\t\treturn a == 1 ? 1 : a == -1 ? (e & 1 ? -1 : 1) : 0;\n"
			 "\tuint64_t r = 1, b = (uint64_t)a;\n"
			 "\tfor (; e; e >>= 1, b *= b)\n\t\tif (e & 1)\n\t\t\tr *= b;\n"
			 "\treturn (int64_t)r;\n}\n", N);
	} else if ((!strcmp(kind, "max") || !strcmp(kind, "min")) && is_fp(cdt)) {
		ox_cg_snprintf(text, sizeof text,
			 "/* NaN-propagating %s, like numpy's */\n"
			 "OX_STATIC %s %s(%s a, %s b)\n{\n\treturn a %s b || isnan(a) ? a : b;\n}\n",
			 kind, T, N, T, T, kind[1] == 'a' ? ">" : "<");
	} else if (!strcmp(kind, "max") || !strcmp(kind, "min")) {
		ox_cg_snprintf(text, sizeof text, "OX_STATIC %s %s(%s a, %s b)\n{\n\treturn a %s b ? a : b;\n}\n",
			 T, N, T, T, kind[1] == 'a' ? ">" : "<");
	} else if (!strcmp(kind, "clip")) {
		ox_cg_snprintf(text, sizeof text,
			 "/* min(max(x, lo), hi) as numpy's clip: lo > hi gives hi, NaN stays */\n"
			 "OX_STATIC %s %s(%s x, %s lo, %s hi)\n{\n"
			 "\tx = x < lo ? lo : x;\n\treturn x > hi ? hi : x;\n}\n", T, N, T, T, T);
	} else {
		ox_die("emit_ew: no helper '%s'", kind);
	}
	ox_cg_helper(cg, key, text);
	return N;
}

/* ---- the loop nest ---- */

/* The shape the loop nest walks for operand v of a node with output o: the
 * logical shape, or for a channel-blocked output (opt/layout.c) the
 * storage shape [N, C/b, H, W, b] of the blocked operands; its other
 * operands are scalars, which broadcast either way. Padded lanes are
 * computed like the others and never read as data. */
static ox_shape walk_shape(ox_graph *g, const ox_value *v, const ox_value *o)
{
	if (o->layout != OX_L_BLOCKED || v->layout != OX_L_BLOCKED)
		return v->shape;
	int b = v->lp[0];
	const ox_dim *d = v->shape.d;
	return (ox_shape){5, {d[0], ox_dim_ceildiv(g, d[1], b), d[2], d[3], b}};
}

/* Print `out0[.] = tmpl` over the output, where $k in tmpl is operand k:
 * input ins[k] loaded into its compute type (or left in its storage type
 * when raw, which also skips the store conversion). Dims may be run-time
 * dims: an operand's run-time dim that is not the output's own (a
 * reduction's kept axis, 1 or the full size) is broadcast when it is 1 at
 * run time, so its stride is multiplied by (dim != 1). */
static void emit_map(ox_cg *cg, ox_graph *g, ox_node *n, const int *ins, int nops,
		     const char *tmpl, int raw)
{
	ox_value *o = ox_out(g, n, 0);
	int64_t total = ox_shape_numel(&o->shape);
	if (total == 0) {
		if (!cg->map)
			ox_cg_printf(cg, "\t/* empty output: nothing to do */\n");
		return;
	}

	/* strides over the output dims; operand 0 of st is the output; bc:
	 * the stride counts only when the operand's dim bc is not 1 */
	int r = 0;
	ox_dim d[OX_MAX_RANK], st[MAXOPS + 1][OX_MAX_RANK], bc[MAXOPS + 1][OX_MAX_RANK];
	ox_shape os = walk_shape(g, o, o), ws[MAXOPS];
	for (int k = 0; k < nops; k++)
		ws[k] = walk_shape(g, ox_in(g, n, ins[k]), o);
	int orank = os.rank;
	for (int i = 0; i < orank; i++) {
		if (os.d[i] == 1)
			continue; /* size-1 dims index nothing */
		d[r] = os.d[i];
		for (int k = 0; k <= nops; k++) {
			const ox_shape *s = k ? &ws[k - 1] : &os;
			int j = i - (orank - s->rank);
			ox_dim stride = 0;
			bc[k][r] = 0;
			if (ox_shape_numel(s) != 1 && j >= 0 && s->d[j] != 1) {
				stride = 1;
				for (int q = j + 1; q < s->rank; q++)
					stride = ox_dim_mul(g, stride, s->d[q]);
				if (s->d[j] != os.d[i] && ox_dim_is_rt(g, s->d[j]))
					bc[k][r] = s->d[j];
			}
			st[k][r] = stride;
		}
		r++;
	}
	/* --target cuda: a kernel (ox_map) of constant dims, or of run-time
	 * ones when it names them; nothing broadcast at run time */
	for (int i = 0; cg->map && i < r; i++) {
		if (ox_dim_is_rt(g, d[i]) && !cg->map->dim)
			return;
		for (int k = 1; k <= nops; k++)
			if (bc[k][i] || (ox_dim_is_rt(g, st[k][i]) && !cg->map->dim))
				return;
	}
	/* a run-time dim broadcast against another must be it or 1 */
	for (int i = 0; i < r; i++)
		for (int k = 1; k <= nops; k++)
			if (bc[k][i]) {
				const char *b = ox_cg_dim(cg, bc[k][i]);
				ox_cg_line(cg, 1, "if (%s != 1 && %s != %s)", b, b, ox_cg_dim(cg, d[i]));
				ox_cg_line(cg, 2, "return 2; /* the dims do not broadcast */");
				cg->fails_shape = 1;
			}
	/* merge dim i into dim i-1 where every operand walks them as one */
	int m = 0;
	for (int i = 0; i < r; i++) {
		int merge = m > 0;
		for (int k = 0; merge && k <= nops; k++)
			merge = st[k][m - 1] == ox_dim_mul(g, st[k][i], d[i]) && !bc[k][m - 1] && !bc[k][i];
		if (merge) {
			d[m - 1] = ox_dim_mul(g, d[m - 1], d[i]);
			for (int k = 0; k <= nops; k++)
				st[k][m - 1] = st[k][i];
		} else {
			d[m] = d[i];
			for (int k = 0; k <= nops; k++)
				st[k][m] = st[k][i], bc[k][m] = bc[k][i];
			m++;
		}
	}
	r = m;

	/* index expressions */
	char idx[MAXOPS + 1][1024];
	for (int k = 0; k <= nops; k++) {
		size_t at = 0;
		idx[k][0] = 0;
		for (int i = 0; i < r; i++) {
			if (!st[k][i])
				continue;
			char var[16];
			ox_cg_snprintf(var, sizeof var, r == 1 ? "i" : "i%d", i);
			at += ox_cg_snprintf(idx[k] + at, sizeof idx[k] - at, "%s%s", at ? " + " : "", var);
			if (st[k][i] != 1)
				at += ox_cg_snprintf(idx[k] + at, sizeof idx[k] - at, " * %s", ox_cg_map_dim(cg, st[k][i]));
			if (bc[k][i])
				at += ox_cg_snprintf(idx[k] + at, sizeof idx[k] - at, " * (%s != 1)", ox_cg_dim(cg, bc[k][i]));
			if (at >= sizeof idx[k])
				ox_die("emit_ew: index expression too long");
		}
		if (!at)
			ox_cg_snprintf(idx[k], sizeof idx[k], "0");
	}

	/* operands: loads used more than once through a conversion get a temp */
	const int ind = cg->map ? 1 : r + 1;
	ox_buf pre = {0}, expr = {0};
	char val[MAXOPS][1100];
	for (int k = 0; k < nops; k++) {
		ox_value *v = ox_in(g, n, ins[k]);
		char acc[1080];
		ox_cg_snprintf(acc, sizeof acc, "in%d[%s]", ins[k], idx[k + 1]);
		const char *ld = raw ? acc : ox_cg_load(v->dtype, acc);
		int uses = 0;
		for (const char *p = tmpl; (p = strchr(p, '$')); p++)
			if (atoi(p + 1) == k)
				uses++;
		/* repeat a plain in0[i]; name a conversion or a long index */
		if (uses > 1 && (strcmp(ld, acc) || r > 1)) {
			static const char *const names[] = {"x", "y", "z"};
			if (k < 3)
				ox_cg_snprintf(val[k], sizeof val[k], "%s", names[k]);
			else
				ox_cg_snprintf(val[k], sizeof val[k], "x%d", k);
			ox_buf_printf(&pre, "%.*s%s %s = %s;\n", ind, TABS,
				      raw ? ox_cg_ctype(v->dtype) : ox_cg_ntype(v->dtype), val[k], ld);
		} else {
			ox_cg_snprintf(val[k], sizeof val[k], "%s", ld);
		}
	}
	for (const char *p = tmpl; *p; p++) {
		if (*p == '$') {
			char *end;
			long k = strtol(p + 1, &end, 10);
			ox_buf_puts(&expr, val[k]);
			p = end - 1;
		} else {
			char c[2] = {*p, 0};
			ox_buf_puts(&expr, c);
		}
	}
	char oacc[1080];
	ox_cg_snprintf(oacc, sizeof oacc, "out0[%s]", idx[0]);
	const char *rhs = raw ? expr.s : ox_cg_store(o->dtype, expr.s);

	if (cg->map) {
		ox_map *M = cg->map;
		M->ok = 1, M->r = r;
		for (int i = 0; i < r; i++)
			M->d[i] = d[i];
		ox_buf_printf(&M->body, "%s\t%s = %s;\n", pre.len ? pre.s : "", oacc, rhs);
		ox_buf_free(&pre), ox_buf_free(&expr);
		return;
	}
	/* loops: one flat `i`, or i0, i1, ... outermost first */
	for (int i = 0; i < r; i++) {
		char var[16];
		ox_cg_snprintf(var, sizeof var, r == 1 ? "i" : "i%d", i);
		ox_cg_printf(cg, "%.*sfor (size_t %s = 0; %s < %s%s; %s++)%s\n", i + 1, TABS, var, var,
			     ox_dim_is_rt(g, d[i]) ? "(size_t)" : "", ox_cg_dim(cg, d[i]), var,
			     i == r - 1 && pre.len ? " {" : "");
	}
	ox_cg_printf(cg, "%s%.*s%s = %s;\n", pre.len ? pre.s : "", r + 1, TABS, oacc, rhs);
	if (pre.len && r)
		ox_cg_printf(cg, "%.*s}\n", r, TABS);
	ox_buf_free(&pre), ox_buf_free(&expr);
}

/* ---- templates per op ---- */
/* Appends the op's expression over $0 (input 0) to t. dt is input 0's
 * dtype. Unary math on an integer input (Erf) is computed in double. */
static int unary_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, int dt, ox_buf *t)
{
	int fp = is_fp(dt), uns = is_uint(dt);
	int cdt = fp ? compute_dt(dt) : OX_F64;
	float alpha;
#define L(v) ox_cg_lit(cdt, (v))
#define F(name) fn(cdt, name)
	switch (n->op) {
	case OX_OP_Abs:
		if (fp)
			ox_buf_printf(t, "%s($0)", F("fabs"));
		else
			ox_buf_puts(t, uns ? "$0" : "$0 < 0 ? -$0 : $0");
		return 0;
	case OX_OP_Neg:
		ox_buf_puts(t, "-$0");
		return 0;
	case OX_OP_Sign:
		if (fp)
			ox_buf_printf(t, "$0 > 0 ? %s : $0 < 0 ? %s : $0", L(1), L(-1));
		else
			ox_buf_puts(t, uns ? "$0 > 0" : "($0 > 0) - ($0 < 0)");
		return 0;
	case OX_OP_Relu:
		ox_buf_puts(t, uns ? "$0" : "$0 < 0 ? 0 : $0");
		return 0;
	case OX_OP_Not:
		ox_buf_puts(t, "!$0");
		return 0;
	case OX_OP_BitwiseNot:
		ox_buf_puts(t, "~$0");
		return 0;
	case OX_OP_IsNaN:
		ox_buf_puts(t, "$0 != $0");
		return 0;
	case OX_OP_IsInf: {
		int pos = (int)ox_attr_int(n, "detect_positive", 1), neg = (int)ox_attr_int(n, "detect_negative", 1);
		if (pos && neg)
			ox_buf_printf(t, "%s($0) == INFINITY", F("fabs"));
		else if (pos)
			ox_buf_puts(t, "$0 == INFINITY");
		else if (neg)
			ox_buf_puts(t, "$0 == -INFINITY");
		else
			ox_buf_puts(t, "0");
		return 0;
	}
	}
	if (!fp && n->op != OX_OP_Erf)
		return ox_error(g, n, "%s input is not supported", ox_dtype_name(dt));
	switch (n->op) {
	case OX_OP_Reciprocal: ox_buf_printf(t, "%s / $0", L(1)); break;
	case OX_OP_Sqrt: ox_buf_printf(t, "%s($0)", F("sqrt")); break;
	case OX_OP_Exp: ox_buf_printf(t, "%s($0)", F("exp")); break;
	case OX_OP_Log: ox_buf_printf(t, "%s($0)", F("log")); break;
	case OX_OP_Floor: ox_buf_printf(t, "%s($0)", F("floor")); break;
	case OX_OP_Ceil: ox_buf_printf(t, "%s($0)", F("ceil")); break;
	/* half to even: nearbyint in the default rounding mode */
	case OX_OP_Round: ox_buf_printf(t, "%s($0)", F("nearbyint")); break;
	case OX_OP_Sin: ox_buf_printf(t, "%s($0)", F("sin")); break;
	case OX_OP_Cos: ox_buf_printf(t, "%s($0)", F("cos")); break;
	case OX_OP_Tan: ox_buf_printf(t, "%s($0)", F("tan")); break;
	case OX_OP_Asin: ox_buf_printf(t, "%s($0)", F("asin")); break;
	case OX_OP_Acos: ox_buf_printf(t, "%s($0)", F("acos")); break;
	case OX_OP_Atan: ox_buf_printf(t, "%s($0)", F("atan")); break;
	case OX_OP_Sinh: ox_buf_printf(t, "%s($0)", F("sinh")); break;
	case OX_OP_Cosh: ox_buf_printf(t, "%s($0)", F("cosh")); break;
	case OX_OP_Asinh: ox_buf_printf(t, "%s($0)", F("asinh")); break;
	case OX_OP_Acosh: ox_buf_printf(t, "%s($0)", F("acosh")); break;
	case OX_OP_Atanh: ox_buf_printf(t, "%s($0)", F("atanh")); break;
	case OX_OP_Erf: ox_buf_printf(t, "%s($0)", F("erf")); break;
	case OX_OP_Tanh: ox_buf_printf(t, "%s($0)", F("tanh")); break;
	case OX_OP_Sigmoid: ox_buf_printf(t, "%s / (%s + %s(-$0))", L(1), L(1), F("exp")); break;
	case OX_OP_LeakyRelu:
		ox_buf_printf(t, "$0 < 0 ? %s * $0 : $0", L(ox_attr_float(n, "alpha", 0.01f)));
		break;
	case OX_OP_ThresholdedRelu:
		ox_buf_printf(t, "$0 > %s ? $0 : 0", L(ox_attr_float(n, "alpha", 1.0f)));
		break;
	case OX_OP_Elu:
		ox_buf_printf(t, "$0 < 0 ? %s * %s($0) : $0", L(ox_attr_float(n, "alpha", 1.0f)), F("expm1"));
		break;
	case OX_OP_Selu: {
		float a = ox_attr_float(n, "alpha", 1.67326319217681884765625f);
		float gm = ox_attr_float(n, "gamma", 1.05070102214813232421875f);
		ox_buf_printf(t, "$0 > 0 ? %s * $0 : ", L(gm));
		ox_buf_printf(t, "%s * (%s * %s($0))", L(gm), L(a), F("expm1"));
		break;
	}
	case OX_OP_Celu:
		alpha = ox_attr_float(n, "alpha", 1.0f);
		ox_buf_printf(t, "%s(0, $0) + %s(0, ", F("fmax"), F("fmin"));
		ox_buf_printf(t, "%s * %s($0 / %s))", L(alpha), F("expm1"), L(alpha));
		break;
	case OX_OP_HardSigmoid: {
		float a = ox_attr_float(n, "alpha", 0.2f), b = ox_attr_float(n, "beta", 0.5f);
		ox_buf_printf(t, "%s(0, %s(%s, ", F("fmax"), F("fmin"), L(1));
		ox_buf_printf(t, "%s * $0 + %s))", L(a), L(b));
		break;
	}
	case OX_OP_HardSwish:
		ox_buf_printf(t, "$0 * %s(0, %s(%s, ", F("fmax"), F("fmin"), L(1));
		ox_buf_printf(t, "$0 / %s + %s))", L(6), L(0.5));
		break;
	case OX_OP_Gelu:
		if (!strcmp(ox_attr_str(n, "approximate", "none"), "tanh")) {
			/* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
			ox_buf_printf(t, "%s * $0 * (%s + %s(", L(0.5), L(1), F("tanh"));
			ox_buf_printf(t, "%s * ($0 + %s * $0 * $0 * $0)))", L(0.79788456080286535588),
				      L(0.044715));
		} else {
			/* 0.5 x (1 + erf(x / sqrt(2))) */
			ox_buf_printf(t, "%s * $0 * (%s + %s(", L(0.5), L(1), F("erf"));
			ox_buf_printf(t, "$0 * %s))", L(0.70710678118654752440));
		}
		break;
	case OX_OP_Softplus:
		/* log(1 + e^x), without overflow for large x */
		ox_buf_printf(t, "$0 > 0 ? $0 + %s(%s(-$0)) : ", F("log1p"), F("exp"));
		ox_buf_printf(t, "%s(%s($0))", F("log1p"), F("exp"));
		break;
	case OX_OP_Softsign: ox_buf_printf(t, "$0 / (%s + %s($0))", L(1), F("fabs")); break;
	/* x tanh(softplus(x)); for large x e^x = inf still gives tanh = 1 */
	case OX_OP_Mish: ox_buf_printf(t, "$0 * %s(%s(%s($0)))", F("tanh"), F("log1p"), F("exp")); break;
	case OX_OP_Swish:
		/* x sigmoid(alpha x) = x / (1 + e^(-alpha x)) */
		alpha = ox_attr_float(n, "alpha", 1.0f);
		if (alpha == 1.0f)
			ox_buf_printf(t, "$0 / (%s + %s(-$0))", L(1), F("exp"));
		else
			ox_buf_printf(t, "$0 / (%s + %s(%s * $0))", L(1), F("exp"), L(-alpha));
		break;
	default:
		ox_die("emit_ew: op %s is not unary", ox_ops[n->op].name);
	}
#undef L
#undef F
	(void)cg;
	return 0;
}

/* a Clip bound: a literal when known at compile time, else operand k */
static void clip_bound(ox_graph *g, ox_node *n, int k, int dt, char *buf, size_t len,
		       int *ins, int *nops)
{
	const ox_tensor *c = ox_in_const(g, n, k);
	if (!c) {
		ox_cg_snprintf(buf, len, "$%d", *nops);
		ins[(*nops)++] = k;
	} else if (is_fp(dt)) {
		ox_cg_snprintf(buf, len, "%s", ox_cg_lit(compute_dt(dt), ox_tensor_get_f64(c, 0)));
	} else {
		ox_cg_snprintf(buf, len, "%s", int_lit(dt, ox_tensor_get_i64(c, 0)));
	}
}

static int clip_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, int dt, ox_buf *t, int *ins, int *nops)
{
	int cdt = compute_dt(dt);
	char lo[64] = "", hi[64] = "";
	if (n->opset < 11) {
		/* the attributes default to the ends of the float range */
		ox_cg_snprintf(lo, sizeof lo, "%s", ox_cg_lit(cdt, ox_attr_float(n, "min", -3.402823466e+38f)));
		ox_cg_snprintf(hi, sizeof hi, "%s", ox_cg_lit(cdt, ox_attr_float(n, "max", 3.402823466e+38f)));
	} else {
		if (ox_in(g, n, 1))
			clip_bound(g, n, 1, dt, lo, sizeof lo, ins, nops);
		if (ox_in(g, n, 2))
			clip_bound(g, n, 2, dt, hi, sizeof hi, ins, nops);
	}
	if (*lo && *hi)
		ox_buf_printf(t, "%s($0, %s, %s)", helper(cg, "clip", cdt), lo, hi);
	else if (*lo)
		ox_buf_printf(t, "$0 < %s ? %s : $0", lo, lo);
	else if (*hi)
		ox_buf_printf(t, "$0 > %s ? %s : $0", hi, hi);
	else
		ox_buf_puts(t, "$0");
	return 0;
}

static int binary_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, int dt, ox_buf *t)
{
	int fp = is_fp(dt), uns = is_uint(dt), cdt = compute_dt(dt);
	switch (n->op) {
	case OX_OP_Add: ox_buf_puts(t, "$0 + $1"); return 0;
	case OX_OP_Sub: ox_buf_puts(t, "$0 - $1"); return 0;
	case OX_OP_Mul:
		/* u8/u16 promote to int, where a product can overflow */
		ox_buf_puts(t, dt == OX_U8 || dt == OX_U16 ? "(uint32_t)$0 * $1" : "$0 * $1");
		return 0;
	case OX_OP_Div:
		if (fp)
			ox_buf_puts(t, "$0 / $1");
		else
			ox_buf_printf(t, "%s($0, $1)", helper(cg, "div", dt));
		return 0;
	case OX_OP_Mod: {
		int fm = (int)ox_attr_int(n, "fmod", 0);
		if (fp && fm)
			ox_buf_printf(t, "%s($0, $1)", fn(cdt, "fmod"));
		else
			ox_buf_printf(t, "%s($0, $1)", helper(cg, fm || uns ? "fmod" : "mod", cdt));
		return 0;
	}
	case OX_OP_Pow: {
		int et = ox_in(g, n, 1)->dtype;
		if (fp)
			ox_buf_printf(t, "%s($0, $1)", fn(cdt, "pow"));
		else if (is_fp(et))
			ox_buf_printf(t, "(%s)pow($0, $1)", ox_cg_ctype(dt)); /* truncates like Cast */
		else
			ox_buf_printf(t, "%s($0, $1)", helper(cg, "ipow", OX_I64));
		return 0;
	}
	case OX_OP_PRelu: ox_buf_puts(t, uns ? "$0" : "$0 < 0 ? $1 * $0 : $0"); return 0;
	case OX_OP_Equal: ox_buf_puts(t, "$0 == $1"); return 0;
	case OX_OP_Less: ox_buf_puts(t, "$0 < $1"); return 0;
	case OX_OP_LessOrEqual: ox_buf_puts(t, "$0 <= $1"); return 0;
	case OX_OP_Greater: ox_buf_puts(t, "$0 > $1"); return 0;
	case OX_OP_GreaterOrEqual: ox_buf_puts(t, "$0 >= $1"); return 0;
	case OX_OP_And: ox_buf_puts(t, "$0 && $1"); return 0;
	case OX_OP_Or: ox_buf_puts(t, "$0 || $1"); return 0;
	case OX_OP_Xor: ox_buf_puts(t, "$0 != $1"); return 0;
	case OX_OP_BitwiseAnd: ox_buf_puts(t, "$0 & $1"); return 0;
	case OX_OP_BitwiseOr: ox_buf_puts(t, "$0 | $1"); return 0;
	case OX_OP_BitwiseXor: ox_buf_puts(t, "$0 ^ $1"); return 0;
	case OX_OP_BitShift: {
		/* C leaves shifts by the width or more undefined: they give 0 here */
		int left = !strcmp(ox_attr_str(n, "direction", ""), "LEFT");
		int bits = (int)ox_dtype_size(dt) * 8;
		if (dt == OX_U8 || dt == OX_U16)
			ox_buf_printf(t, "$1 < %d ? (%s)$0 %s $1 : 0", bits, uint_type(OX_U32), left ? "<<" : ">>");
		else
			ox_buf_printf(t, "$1 < %d ? $0 %s $1 : 0", bits, left ? "<<" : ">>");
		return 0;
	}
	}
	ox_die("emit_ew: op %s is not binary", ox_ops[n->op].name);
}

static int variadic_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, int dt, ox_buf *t, int nops)
{
	int cdt = compute_dt(dt);
	(void)g;
	if (nops == 1) {
		ox_buf_puts(t, "$0");
		return 0;
	}
	if (n->op == OX_OP_Sum || n->op == OX_OP_Mean) {
		ox_buf_puts(t, n->op == OX_OP_Mean ? "($0" : "$0");
		for (int k = 1; k < nops; k++)
			ox_buf_printf(t, " + $%d", k);
		if (n->op == OX_OP_Mean)
			ox_buf_printf(t, ") / %s", ox_cg_lit(cdt, nops));
		return 0;
	}
	/* Min/Max: helper(helper($0, $1), $2) ... */
	const char *h = helper(cg, n->op == OX_OP_Max ? "max" : "min", cdt);
	for (int k = 1; k < nops; k++)
		ox_buf_printf(t, "%s(", h);
	ox_buf_puts(t, "$0");
	for (int k = 1; k < nops; k++)
		ox_buf_printf(t, ", $%d)", k);
	return 0;
}

static int is_f8(int dt)
{
	return (dt >= OX_F8E4M3FN && dt <= OX_F8E5M2FNUZ) || dt == OX_F8E8M0;
}

/* Casts touching a float8 kind go through float with templates/quant_f8.c:
 * widening is exact, narrowing rounds once. Sources wider than float reach
 * it rounded to odd (truncate, then set the last bit when inexact), which
 * keeps that single rounding exact for every float8 kind. Operands are raw
 * ($0 in its storage type); the template spells every conversion. */
static int cast_f8_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, int from, int to, ox_buf *t)
{
	if (ox_cg_use(cg, "quant_f8", OX_F32))
		return ox_error(g, n, "kernel template templates/quant_f8.c is missing");
	char src[256];
	if (is_f8(from))
		ox_cg_snprintf(src, sizeof src, "ox_%s_to_f32($0)", ox_cg_sfx(from));
	else if (from == OX_F16 || from == OX_BF16 || from == OX_F32)
		ox_cg_snprintf(src, sizeof src, "%s", ox_cg_load(from, "$0"));
	else if (from == OX_I64 || from == OX_U64)
		return ox_error(g, n, "cast from %s to %s is not supported", ox_dtype_name(from),
				ox_dtype_name(to));
	else {
		/* f64 and the narrower integers (exact in double): round to odd */
		ox_cg_helper(cg, "ew/ox_f64_to_f32_odd",
			     "/* double to float rounded to odd: a later rounding to a narrower\n"
			     " * float then matches rounding the double directly */\n"
			     "OX_STATIC float ox_f64_to_f32_odd(double d)\n{\n"
			     "\tfloat f = (float)d;\n"
			     "\tif (isnan(d) || (double)f == d)\n\t\treturn f;\n"
			     "\tif (fabs((double)f) > fabs(d)) /* went away from zero: step back */\n"
			     "\t\tf = nextafterf(f, 0.0f);\n"
			     "\tuint32_t u;\n\tmemcpy(&u, &f, sizeof u);\n"
			     "\tu |= 1; /* inexact: make it odd */\n"
			     "\tmemcpy(&f, &u, sizeof f);\n\treturn f;\n}\n");
		ox_cg_snprintf(src, sizeof src, "ox_f64_to_f32_odd($0)");
	}
	if (is_f8(to)) {
		int sat = ox_attr_int(n, "saturate", 1) != 0;
		if (to == OX_F8E8M0) {
			const char *rm = ox_attr_str(n, "round_mode", "up");
			int mode = !strcmp(rm, "down") ? 1 : !strcmp(rm, "nearest") ? 2 : 0;
			ox_buf_printf(t, "ox_f8e8m0_from_f32(%s, %d, %d)", src, sat, mode);
		} else {
			ox_buf_printf(t, "ox_f32_to_%s(%s, %d)", ox_cg_sfx(to), src, sat);
		}
	} else if (to == OX_BOOL) {
		ox_buf_printf(t, "%s != 0", src);
	} else {
		/* to f16/bf16/f32/f64; to an integer C's conversion truncates */
		if (is_fp(to))
			ox_buf_puts(t, ox_cg_store(to, src));
		else
			ox_buf_printf(t, "(%s)%s", ox_cg_ctype(to), src);
	}
	return 0;
}

static int is_subbyte(int dt)
{
	return dt == OX_U4 || dt == OX_I4 || dt == OX_F4E2M1 || dt == OX_U2 || dt == OX_I2;
}

/* Casts touching a sub-byte kind (one element per byte, see
 * templates/quant_sub.c). The source becomes a double (the float kinds,
 * f4 and f8) or an int64 (the integer kinds), then the target's rule
 * applies: f4 rounds once from the double, the 4- and 2-bit integers
 * truncate and wrap. The signed kinds are read through int8_t whatever the
 * buffer's C type, so a sign-extended byte reads back as its value.
 * Operands are raw ($0 in its storage type). */
static int cast_sub_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, int from, int to, ox_buf *t)
{
	if (ox_cg_use(cg, "quant_sub", OX_F32))
		return ox_error(g, n, "kernel template templates/quant_sub.c is missing");
	if ((is_f8(from) || is_f8(to)) && ox_cg_use(cg, "quant_f8", OX_F32))
		return ox_error(g, n, "kernel template templates/quant_f8.c is missing");
	char src[256];
	int fsrc = 1; /* src is a double (else an int64) */
	if (from == OX_F4E2M1)
		ox_cg_snprintf(src, sizeof src, "(double)ox_f4e2m1_to_f32($0)");
	else if (is_f8(from))
		ox_cg_snprintf(src, sizeof src, "(double)ox_%s_to_f32($0)", ox_cg_sfx(from));
	else if (is_fp(from))
		ox_cg_snprintf(src, sizeof src, "(double)%s", ox_cg_load(from, "$0"));
	else {
		fsrc = 0;
		ox_cg_snprintf(src, sizeof src, "(int64_t)%s$0", from == OX_I4 || from == OX_I2 ? "(int8_t)" : "");
	}
	const char *ct = ox_cg_ctype(to);
	if (to == OX_F4E2M1) {
		ox_buf_printf(t, "ox_f4e2m1_from_f64(%s)", src);
	} else if (is_subbyte(to)) {
		int bits = to == OX_U2 || to == OX_I2 ? 2 : 4, sgn = to == OX_I4 || to == OX_I2;
		if (fsrc)
			ox_buf_printf(t, "(%s)ox_sub_wrap(ox_sub_trunc(%s), %d, %d)", ct, src, bits, sgn);
		else
			ox_buf_printf(t, "(%s)ox_sub_wrap(%s, %d, %d)", ct, src, bits, sgn);
	} else if (to == OX_BOOL) {
		ox_buf_printf(t, "%s != 0", src);
	} else if (is_f8(to)) {
		int sat = ox_attr_int(n, "saturate", 1) != 0;
		if (to == OX_F8E8M0) {
			const char *rm = ox_attr_str(n, "round_mode", "up");
			int mode = !strcmp(rm, "down") ? 1 : !strcmp(rm, "nearest") ? 2 : 0;
			ox_buf_printf(t, "ox_f8e8m0_from_f32((float)%s, %d, %d)", src, sat, mode);
		} else {
			/* every sub-byte value is exact in float: one rounding */
			ox_buf_printf(t, "ox_f32_to_%s((float)%s, %d)", ox_cg_sfx(to), src, sat);
		}
	} else if (is_fp(to)) {
		char v[300];
		ox_cg_snprintf(v, sizeof v, "(%s)%s", ox_cg_ntype(to), src);
		ox_buf_puts(t, ox_cg_store(to, v));
	} else if (fsrc) {
		/* f4 to an integer: |x| <= 6, through int64 so a negative value
		 * wraps into an unsigned type instead of being undefined */
		ox_buf_printf(t, "(%s)(int64_t)%s", ct, src);
	} else {
		ox_buf_printf(t, "(%s)%s", ct, src);
	}
	return 0;
}

static int cast_tmpl(ox_cg *cg, ox_graph *g, ox_node *n, ox_buf *t, int *raw)
{
	int from = ox_in(g, n, 0)->dtype, to = ox_out(g, n, 0)->dtype;
	if (from == to) {
		*raw = 1;
		ox_buf_puts(t, "$0");
	} else if (is_subbyte(from) || is_subbyte(to)) {
		*raw = 1;
		return cast_sub_tmpl(cg, g, n, from, to, t);
	} else if (is_f8(from) || is_f8(to)) {
		*raw = 1;
		return cast_f8_tmpl(cg, g, n, from, to, t);
	} else if (to == OX_BOOL) {
		ox_buf_puts(t, "$0 != 0");
	} else if (!is_fp(to) && is_fp(from)) {
		/* truncated toward zero; saturated, NaN to 0, where C's conversion
		 * is undefined (docs/api.md) */
		ox_buf_printf(t, "%s($0)", ox_cg_f2i(cg, to));
	} else {
		ox_buf_puts(t, "$0");
	}
	return 0;
}

int emit_ew(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *o = ox_out(g, n, 0);
	int ins[MAXOPS], nops = 0, raw = 0, rc = 0;
	ox_buf t = {0};
	switch (n->op) {
	case OX_OP_Cast: case OX_OP_CastLike:
		ins[nops++] = 0;
		rc = cast_tmpl(cg, g, n, &t, &raw);
		break;
	case OX_OP_BitCast: {
		/* same element size (checked by infer): the bytes move unchanged */
		ox_dim total = ox_dim_mul(g, ox_shape_numel_dim(g, &o->shape), (int64_t)ox_dtype_size(o->dtype));
		if (total)
			ox_cg_printf(cg, "\tmemcpy(out0, in0, %s);\n", ox_cg_dim(cg, total));
		else
			ox_cg_printf(cg, "\t/* empty output: nothing to do */\n");
		return 0;
	}
	case OX_OP_Clip:
		ins[nops++] = 0;
		rc = clip_tmpl(cg, g, n, x->dtype, &t, ins, &nops);
		break;
	case OX_OP_Where:
		/* no arithmetic: values move in their storage type */
		for (int k = 0; k < 3; k++)
			ins[nops++] = k;
		raw = 1;
		ox_buf_puts(&t, "$0 ? $1 : $2");
		break;
	case OX_OP_Min: case OX_OP_Max: case OX_OP_Sum: case OX_OP_Mean:
		if (n->nin > MAXOPS)
			return ox_error(g, n, "%d inputs: at most %d are supported", n->nin, MAXOPS);
		for (int k = 0; k < n->nin; k++)
			ins[nops++] = k;
		rc = variadic_tmpl(cg, g, n, x->dtype, &t, nops);
		break;
	default:
		ins[nops++] = 0;
		if (x->dtype == OX_STRING && n->op == OX_OP_Equal) {
			/* the elements are ox_str pointers: compare the text */
			ins[nops++] = 1;
			raw = 1;
			ox_buf_puts(&t, "strcmp($0, $1) == 0");
		} else if (ox_ops[n->op].maxin == 2) {
			ins[nops++] = 1;
			rc = binary_tmpl(cg, g, n, x->dtype, &t);
		} else {
			rc = unary_tmpl(cg, g, n, x->dtype, &t);
		}
	}
	if (!rc)
		emit_map(cg, g, n, ins, nops, t.s, raw);
	ox_buf_free(&t);
	return rc;
}
