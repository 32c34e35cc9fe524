/* test_report.c: cmocka tests of report/: the DOT and HTML writers escape
 * every name (bytes that are not UTF-8 included, which an ONNX file can
 * hold but onnx.helper cannot write: tests/e2e/pictures.sh covers the
 * rest), draw one box per node and one timeline rect per arena tensor,
 * and the UTF-8 reader refuses overlong and truncated sequences. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include "../report/report.h"
#include <stdlib.h>
#include <string.h>

/* a Relu chain whose names hold quotes, a backslash, a newline, <>&, an
 * HTML tag, valid UTF-8 (é) and bytes that are not UTF-8 (\xff, a lone
 * \xc3) */
static const char hostile[] =
	"graph \"g\" opset 13\n"
	"input %0:f32[1,32] \"in\\\"put\\\\ \\xff\\n<b>&amp;\"\n"
	"%1:f32[1,32] = Relu(%0)  # \"r\\xc3\\xa9lu<script>\\xc3\"\n"
	"%2:f32[32,1] = Transpose(%1) {perm=[1,0]}  # \"t&\\\"\"\n"
	"%3:f32[32,1] = Sigmoid(%2)  # \"s\\x01\"\n"
	"output %3 \"out</title><x>\\n\"\n";

static ox_graph *planned(void)
{
	ox_graph *g = ox_ir_parse(hostile, "t.ir");
	if (!g)
		fail_msg("parse failed (message above)");
	g->opt = 0;
	if (ox_opt_run(g, 1, NULL))
		fail_msg("the pipeline failed (message above)");
	return g;
}

static char *slurp_dot(ox_graph *g)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	ox_rp_dot(f, g, "m\"odel.onnx");
	fclose(f);
	return buf;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_dot_escapes(void **state)
{
	(void)state;
	ox_graph *g = planned();
	char *d = slurp_dot(g);
	/* every line's quotes pair up once the escapes are skipped */
	for (char *line = d, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		assert_non_null(end);
		int quotes = 0;
		for (char *p = line; p < end; p++) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				quotes++;
		}
		if (quotes % 2)
			fail_msg("unbalanced quotes in: %.*s", (int)(end - line), line);
	}
	for (const unsigned char *p = (const unsigned char *)d; *p; p++)
		assert_true(*p != 0xff && *p != 0x01);
	assert_non_null(strstr(d, "in\\\"put\\\\ \\\\xff\\\\n<b>&amp;amp;"));
	assert_non_null(strstr(d, "r\xc3\xa9lu<script>\\\\xc3"));
	assert_non_null(strstr(d, "s\\\\x01"));
	char box[32];
	for (int i = 0; i < g->nnodes; i++) {
		snprintf(box, sizeof box, "  n%d [label=", i);
		assert_int_equal(count(d, box), 1);
	}
	assert_int_equal(count(d, " [label=\"#"), g->nnodes);
	assert_non_null(strstr(d, "view of %1"));
	free(d);
	ox_ir_free(g);
}

static void test_html_escapes(void **state)
{
	(void)state;
	ox_graph *g = planned();
	char path[] = "/tmp/test_report_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	ox_cg_stats cs = {0};
	ox_rp_info in = {"m<o>del.onnx", "o&ut.c", 0, &cs};
	assert_int_equal(ox_rp_html(path, g, &in), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char page[1 << 16];
	size_t n = fread(page, 1, sizeof page - 1, f);
	page[n] = 0;
	fclose(f);
	remove(path);
	assert_true(n > 0 && n < sizeof page - 1);
	assert_null(strstr(page, "<script"));
	assert_null(strstr(page, "<x>"));
	assert_null(strstr(page, "<b>"));
	assert_non_null(strstr(page, "r\xc3\xa9lu&lt;script&gt;\\xc3"));
	assert_non_null(strstr(page, "out&lt;/title&gt;&lt;x&gt;\\n"));
	assert_non_null(strstr(page, "m&lt;o&gt;del.onnx"));
	for (const unsigned char *p = (const unsigned char *)page; *p; p++)
		assert_true(*p != 0xff && *p != 0x01);
	/* one rect per arena tensor: Relu's, Sigmoid's and the Transpose (a view of Relu's) */
	int arena = 0;
	for (int i = 0; i < g->nvals; i++) {
		int64_t off;
		arena += g->vals[i].producer >= 0 && !strcmp(ox_rp_place(g, i, &off), "arena");
	}
	assert_int_equal(arena, 3);
	assert_int_equal(count(page, "<rect class=\"t "), arena);
	assert_int_equal(count(page, "<rect class=\"t kv\""), 1);
	assert_int_equal(count(page, "id=\"peak\""), 1);
	ox_ir_free(g);
}

static void test_utf8_len(void **state)
{
	(void)state;
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"a"), 1);
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xc3\xa9"), 2);
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xe4\xb8\xad"), 3);
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xc3"), 0);         /* truncated */
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xc0\xaf"), 0);     /* overlong */
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xed\xa0\x80"), 0); /* a surrogate */
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xf4\x90\x80\x80"), 0);
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\xff"), 0);
	assert_int_equal(ox_rp_utf8_len((const unsigned char *)"\x80"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dot_escapes),
		cmocka_unit_test(test_html_escapes),
		cmocka_unit_test(test_utf8_len),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
