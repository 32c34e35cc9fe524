/* reduction.c: what a reduction computes (reduction.h), for both targets */
#include "reduction.h"
#include <math.h>
#include <string.h>

static const char *int_limit(int dt, int lowest)
{
	switch (dt) {
	case OX_I8: return lowest ? "INT8_MIN" : "INT8_MAX";
	case OX_U8: return lowest ? "0" : "UINT8_MAX";
	case OX_I16: return lowest ? "INT16_MIN" : "INT16_MAX";
	case OX_U16: return lowest ? "0" : "UINT16_MAX";
	case OX_I32: return lowest ? "INT32_MIN" : "INT32_MAX";
	case OX_U32: return lowest ? "0" : "UINT32_MAX";
	case OX_I64: return lowest ? "INT64_MIN" : "INT64_MAX";
	case OX_U64: return lowest ? "0" : "UINT64_MAX";
	case OX_BOOL: return lowest ? "0" : "1";
	}
	return NULL;
}

int ox_reduction_of(ox_graph *g, ox_node *n, ox_reduction *r)
{
	int dt = ox_in(g, n, 0)->dtype, op = n->op;
	memset(r, 0, sizeof *r);
	r->dt = dt, r->op = op;
	r->isf = ox_dtype_is_float(dt), r->sgn = ox_dtype_is_signed(dt);
	r->T = ox_cg_ctype(dt);
	r->viadbl = !r->isf && (op == OX_OP_ReduceL2 || op == OX_OP_ReduceLogSum || op == OX_OP_ReduceLogSumExp);
	r->cdt = r->isf ? (dt == OX_F64 ? OX_F64 : OX_F32) : r->viadbl ? OX_F64 : dt;
	r->comb = op == OX_OP_ReduceMax ? OX_RED_MAX : op == OX_OP_ReduceMin ? OX_RED_MIN
		: op == OX_OP_ReduceProd ? OX_RED_MUL : OX_RED_ADD;
	r->twopass = op == OX_OP_ReduceLogSumExp;
	const int maxmin = r->comb == OX_RED_MAX || r->comb == OX_RED_MIN;
	if (r->isf || r->viadbl) {
		r->A = r->isf && maxmin ? ox_cg_ntype(dt) : "double";
		r->init = ox_cg_lit(r->cdt, r->comb == OX_RED_MUL ? 1 : r->comb == OX_RED_MAX ? -INFINITY
					    : r->comb == OX_RED_MIN ? INFINITY : 0);
	} else if (maxmin) {
		r->A = r->T;
		r->init = int_limit(dt, r->comb == OX_RED_MAX);
		if (!r->init)
			return ox_error(g, n, "input type %s is not supported", ox_dtype_name(dt));
	} else {
		r->A = "uint64_t";
		r->init = r->comb == OX_RED_MUL ? "1u" : "0u";
	}
	r->V = r->isf ? ox_cg_ntype(dt) : r->viadbl ? "double" : r->T;
	return 0;
}

const char *ox_red_fn(ox_cg *cg, int cdt, const char *name)
{
	return cdt == OX_F64 ? name : ox_cg_text(cg, "%sf", name);
}

const char *ox_red_term(ox_cg *cg, const ox_reduction *r)
{
	const int fl = r->isf || r->viadbl;
	switch (r->op) {
	case OX_OP_ReduceL1:
		if (r->isf)
			return ox_cg_text(cg, "%s(v)", ox_red_fn(cg, r->cdt, "fabs"));
		return r->sgn ? "v < 0 ? 0u - (uint64_t)v : (uint64_t)v" : "v";
	case OX_OP_ReduceL2:
	case OX_OP_ReduceSumSquare:
		return fl ? "v * v" : "(uint64_t)v * (uint64_t)v";
	case OX_OP_ReduceLogSumExp:
		return ox_cg_text(cg, "%s(v - m)", ox_red_fn(cg, r->cdt, "exp"));
	}
	return fl ? "v" : "(uint64_t)v";
}

const char *ox_red_assign(const ox_reduction *r)
{
	return r->comb == OX_RED_ADD ? "+=" : r->comb == OX_RED_MUL ? "*=" : NULL;
}

const char *ox_red_wins(ox_cg *cg, int isf, int max, const char *b, const char *a)
{
	return ox_cg_text(cg, "%s %s %s%s%s%s", b, max ? ">" : "<", a, isf ? " || isnan(" : "", isf ? b : "",
			  isf ? ")" : "");
}

const char *ox_red_join(ox_cg *cg, const ox_reduction *r, const char *b, int elem, int maxpass, const char **cond)
{
	const char *op = ox_red_assign(r), *acc = maxpass ? "m" : "acc";
	*cond = NULL;
	if (maxpass || !op) {
		*cond = ox_red_wins(cg, r->isf || maxpass, maxpass || r->comb == OX_RED_MAX, b, acc);
		return ox_cg_text(cg, "%s = %s;", acc, b);
	}
	return ox_cg_text(cg, "%s %s %s;", acc, op, elem ? ox_red_term(cg, r) : b);
}

const char *ox_red_result(ox_cg *cg, const ox_reduction *r, int64_t count, const char *cnt)
{
	switch (r->op) {
	case OX_OP_ReduceMean:
		if (cnt && r->isf)
			return ox_cg_text(cg, "acc / (double)%s", cnt); /* 0 / 0: NaN, an empty mean */
		if (cnt && r->sgn)
			return ox_cg_text(cg, "(int64_t)acc / %s", cnt);
		if (cnt)
			return ox_cg_text(cg, "acc / (uint64_t)%s", cnt);
		if (r->isf)
			return count ? ox_cg_text(cg, "acc / %s", ox_cg_lit(r->cdt, (double)count))
				     : ox_cg_text(cg, "%s", ox_cg_lit(r->cdt, NAN));
		if (r->sgn)
			return ox_cg_text(cg, "(int64_t)acc / %lld", (long long)count);
		return ox_cg_text(cg, "acc / %lluu", (unsigned long long)count);
	case OX_OP_ReduceL2: return ox_cg_text(cg, "%s(acc)", ox_red_fn(cg, r->cdt, "sqrt"));
	case OX_OP_ReduceLogSum: return ox_cg_text(cg, "%s(acc)", ox_red_fn(cg, r->cdt, "log"));
	case OX_OP_ReduceLogSumExp: return ox_cg_text(cg, "m + %s(acc)", ox_red_fn(cg, r->cdt, "log"));
	}
	return "acc";
}

const char *ox_red_stored(ox_cg *cg, const ox_reduction *r, const char *result)
{
	if (r->isf || r->comb == OX_RED_MAX || r->comb == OX_RED_MIN)
		return ox_cg_text(cg, "%s", ox_cg_store(r->dt, result));
	return ox_cg_text(cg, "(%s)(%s)", r->T, result); /* from the uint64_t or double accumulator */
}

int ox_red_int_mean(const ox_reduction *r)
{
	return r->op == OX_OP_ReduceMean && !r->isf && !r->viadbl;
}

const char *ox_red_better(ox_cg *cg, int isf, int max, int last)
{
	const char *gt = max ? ">" : "<";
	if (!isf)
		return ox_cg_text(cg, "v %s%s best", gt, last ? "=" : "");
	if (!last)
		return ox_cg_text(cg, "v %s best || (isnan(v) && !isnan(best))", gt);
	return ox_cg_text(cg, "isnan(v) || (!isnan(best) && v %s= best)", gt);
}
