/* test_regex.c: RegexFullMatch's two halves together: patterns compiled by
 * ir/infer_str.c (ox_ir_regex) and run by the matcher of templates/regex.c,
 * the text codegen pastes into generated code. The template is included
 * here with its names renamed (RT_*), so the test also checks that both
 * halves number the opcodes alike. Cases: the backend tests' patterns,
 * quantifiers, classes, anchors, word boundaries, UTF-8, syntax refused at
 * compile time, and a pattern that would backtrack exponentially.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "family.h"
#include <string.h>

/* the compiler's opcode numbers, before the template's names take over */
static const int compiler_ops[] = {OX_RE_CHAR, OX_RE_ANY, OX_RE_ANYNL, OX_RE_CLASS, OX_RE_SPLIT, OX_RE_JMP,
				   OX_RE_BOT, OX_RE_EOT, OX_RE_WORDB, OX_RE_NWORDB, OX_RE_MATCH};
#define OX_RE_CHAR RT_RE_CHAR
#define OX_RE_ANY RT_RE_ANY
#define OX_RE_ANYNL RT_RE_ANYNL
#define OX_RE_CLASS RT_RE_CLASS
#define OX_RE_SPLIT RT_RE_SPLIT
#define OX_RE_JMP RT_RE_JMP
#define OX_RE_BOT RT_RE_BOT
#define OX_RE_EOT RT_RE_EOT
#define OX_RE_WORDB RT_RE_WORDB
#define OX_RE_NWORDB RT_RE_NWORDB
#define OX_RE_MATCH RT_RE_MATCH
#define ox_re_inst rt_re_inst
#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../../templates/regex.c"
#undef ox_re_inst

/* 1 match, 0 no match, -1 refused by the compiler */
static int full_match(const char *pat, const char *s)
{
	static ox_graph *g;
	if (!g)
		g = ox_ir_new("t");
	ox_node n = {0};
	ox_attr a = {0};
	a.name = "pattern";
	a.type = OX_AT_STRING;
	a.s = pat;
	a.slen = strlen(pat);
	n.nattr = 1;
	n.attrs = &a;
	n.optype = "RegexFullMatch";
	n.name = "";
	ox_re_prog p;
	if (ox_ir_regex(g, &n, &p))
		return -1;
	static rt_re_inst prog[20000];
	static int32_t work[4 * 20000];
	for (int i = 0; i < p.n; i++)
		prog[i] = (rt_re_inst){p.code[i].op, p.code[i].x, p.code[i].y};
	return ox_re_full(prog, p.n, p.ranges, s, work);
}

static void test_opcodes_agree(void **state)
{
	(void)state;
	const int rt[] = {RT_RE_CHAR, RT_RE_ANY, RT_RE_ANYNL, RT_RE_CLASS, RT_RE_SPLIT, RT_RE_JMP,
			  RT_RE_BOT, RT_RE_EOT, RT_RE_WORDB, RT_RE_NWORDB, RT_RE_MATCH};
	assert_int_equal(sizeof rt, sizeof compiler_ops);
	for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
		assert_int_equal(rt[i], compiler_ops[i]);
}

static const struct {
	const char *pat, *s;
	int want;
} cases[] = {
	{"www\\.[\\w.-]+\\.\\bcom\\b", "www.google.com", 1},
	{"www\\.[\\w.-]+\\.\\bcom\\b", "www.bbc.co.uk", 0},
	{"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@gmail.com", 1},
	{"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@hotmail.com", 0},
	{"a*", "", 1}, {"a*b", "aaab", 1}, {"a+", "", 0}, {"(a|b)*c", "ababc", 1}, {"(a*)*", "aaaa", 1},
	{"a{2,3}", "a", 0}, {"a{2,3}", "aaa", 1}, {"a{2,3}", "aaaa", 0}, {"a{2,}", "aaaaa", 1},
	{"[^a-c]x", "dx", 1}, {"[^a-c]x", "bx", 0}, {"[a-]", "-", 1}, {"[]a]", "]", 1},
	{".", "\xc3\xa9", 1}, {"..", "\xc3\xa9", 0}, {"a.c", "a\nc", 0},
	{"\\d+\\s\\D", "12 x", 1}, {"(?:ab)+", "abab", 1}, {"^a$", "a", 1}, {"a^", "a", 0},
	{"\\bfoo\\b", "foo", 1}, {"a\\Bb", "ab", 1}, {"a\\bb", "ab", 0}, {"", "", 1}, {"", "a", 0},
	{"a??b", "ab", 1}, {"\\x41\\x{42}", "AB", 1}, {"(a|ab)(c|bcd)(d*)", "abcd", 1},
	/* exponential for a backtracking matcher; linear here */
	{"(x+x+)+y", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 0},
	/* refused at compile time: never a silent wrong answer */
	{"(a", "", -1}, {"a)", "", -1}, {"*a", "", -1}, {"\\1", "", -1}, {"(?i)a", "", -1}, {"a**", "", -1},
};

static void test_cases(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int got = full_match(cases[i].pat, cases[i].s);
		if (got != cases[i].want) {
			fprintf(stderr, "pattern /%s/ on \"%s\": got %d, want %d\n", cases[i].pat, cases[i].s, got,
				cases[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcodes_agree),
		cmocka_unit_test(test_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
