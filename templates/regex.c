/* templates/regex.c: full-match of a compiled regular expression (RE2
 * syntax, compiled by ir/infer_str.c) against one NUL-terminated UTF-8
 * string, by Thompson NFA simulation: the set of live instructions advances
 * one code point at a time, so the time is O(len * ninst), nothing recurses
 * and no input can make it backtrack exponentially. work holds 4 * ninst
 * int32 (two thread lists, a visit mark, a stack). Opcodes are those of
 * ir/family.h (tests/unit/test_regex.c checks it). Text is UTF-8; an
 * invalid byte is one character.
 */
enum { OX_RE_CHAR, OX_RE_ANY, OX_RE_ANYNL, OX_RE_CLASS, OX_RE_SPLIT, OX_RE_JMP,
       OX_RE_BOT, OX_RE_EOT, OX_RE_WORDB, OX_RE_NWORDB, OX_RE_MATCH };
typedef struct { int32_t op, x, y; } ox_re_inst;

/* the code point at s (-1 at the end) and its length in bytes */
OX_STATIC int32_t ox_re_char(const char *s, int32_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	int32_t c = p[0];
	int32_t n = 1;
	*len = 1;
	if (!c)
		return -1;
	if (c >= 0xf0 && c < 0xf8)
		n = 4, c &= 7;
	else if (c >= 0xe0 && c < 0xf0)
		n = 3, c &= 15;
	else if (c >= 0xc0 && c < 0xe0)
		n = 2, c &= 31;
	for (int32_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return p[0];
		c = c << 6 | (p[k] & 63);
	}
	*len = n;
	return c;
}

/* RE2's \w and \b are ASCII */
OX_STATIC int ox_re_word(int32_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* is c in the nr sorted (lo, hi) pairs at r? */
OX_STATIC int ox_re_in(const int32_t *r, int32_t nr, int32_t c)
{
	int32_t lo = 0, hi = nr;
	while (lo < hi) {
		int32_t m = (lo + hi) / 2;
		if (c < r[2 * m])
			hi = m;
		else if (c > r[2 * m + 1])
			lo = m + 1;
		else
			return 1;
	}
	return 0;
}

/* add pc and everything reachable from it without consuming to list;
 * prev / next are the code points around the position (-1 at an end) */
OX_STATIC void ox_re_add(const ox_re_inst *prog, int32_t *list, int32_t *cnt, int32_t *mark, int32_t gen,
		      int32_t *stack, int32_t pc, int32_t prev, int32_t next)
{
	int32_t sp = 0;
	if (mark[pc] == gen)
		return;
	mark[pc] = gen;
	stack[sp++] = pc;
	while (sp) {
		const ox_re_inst *in = &prog[stack[--sp]];
		int32_t to[2], nto = 0;
		int wb = ox_re_word(prev) != ox_re_word(next);
		switch (in->op) {
		case OX_RE_JMP: to[nto++] = in->x; break;
		case OX_RE_SPLIT: to[nto++] = in->x, to[nto++] = in->y; break;
		case OX_RE_BOT: if (prev < 0) to[nto++] = (int32_t)(in - prog) + 1; break;
		case OX_RE_EOT: if (next < 0) to[nto++] = (int32_t)(in - prog) + 1; break;
		case OX_RE_WORDB: if (wb) to[nto++] = (int32_t)(in - prog) + 1; break;
		case OX_RE_NWORDB: if (!wb) to[nto++] = (int32_t)(in - prog) + 1; break;
		default: list[(*cnt)++] = (int32_t)(in - prog); break;
		}
		for (int32_t k = 0; k < nto; k++) {
			if (mark[to[k]] != gen) {
				mark[to[k]] = gen;
				stack[sp++] = to[k];
			}
		}
	}
}

/* 1 if the whole of s matches the ninst-instruction program */
OX_STATIC uint8_t ox_re_full(const ox_re_inst *prog, int32_t ninst, const int32_t *ranges, const char *s,
			  int32_t *work)
{
	int32_t *cl = work, *nl = work + ninst, *mark = work + 2 * ninst, *stack = work + 3 * ninst;
	int32_t ncl = 0, gen = 0, len, prev = -1;
	for (int32_t i = 0; i < ninst; i++)
		mark[i] = -1;
	int32_t c = ox_re_char(s, &len);
	ox_re_add(prog, cl, &ncl, mark, gen, stack, 0, prev, c);
	while (c >= 0 && ncl) {
		int32_t nnl = 0, len2;
		const char *s2 = s + len;
		int32_t c2 = ox_re_char(s2, &len2);
		gen++;
		for (int32_t t = 0; t < ncl; t++) {
			const ox_re_inst *in = &prog[cl[t]];
			int ok;
			switch (in->op) {
			case OX_RE_CHAR: ok = c == in->x; break;
			case OX_RE_ANY: ok = 1; break;
			case OX_RE_ANYNL: ok = c != '\n'; break;
			case OX_RE_CLASS: ok = ox_re_in(ranges + 2 * in->x, in->y, c); break;
			default: ok = 0; break;
			}
			if (ok)
				ox_re_add(prog, nl, &nnl, mark, gen, stack, cl[t] + 1, c, c2);
		}
		int32_t *tmp = cl;
		cl = nl, nl = tmp, ncl = nnl;
		prev = c, c = c2, s = s2, len = len2;
	}
	if (c >= 0)
		return 0;
	for (int32_t t = 0; t < ncl; t++)
		if (prog[cl[t]].op == OX_RE_MATCH)
			return 1;
	return 0;
}
