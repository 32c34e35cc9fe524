/* test_resize.c: Resize and the windows of the nn family on run-time dims.
 *
 * templates/resize_taps.c (included here as the compiler and the generated
 * code include it) against a brute-force reading of the ONNX reference:
 * the m nearest indices of the edge-padded axis found by sorting every
 * candidate by (distance, index), coefficients normalized, excluded and
 * filtered in the reference's order; 30000 random axes of every mode,
 * transform and rounding. templates/resize_rt.c's output sizes (scales,
 * sizes, keep_aspect_ratio_policy, the refusals) and tables (the taps of
 * ox_rz_taps, compacted; a scratch too small). And inference
 * (ir/infer_nn.c) on symbolic dims: Resize from constant scales (a
 * dim, or a data symbol bounded by floor(top * scale)), from sizes read
 * at run time (data symbols) with its scratch; MaxPool's ceil_mode and
 * ConvTranspose's SAME as dims, evaluated against the constant rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../../templates/resize_taps.c"
#include "../../templates/resize_rt.c"

/* ---- the taps against a brute-force reference ---- */

static int cmp_near(const void *p, const void *q)
{
	const double *a = p, *b = q; /* {distance, index} */
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

static int cmp_long(const void *p, const void *q)
{
	long a = *(const long *)p, b = *(const long *)q;
	return a < b ? -1 : a > b;
}

/* the reference's taps of output o, written out the long way */
static int brute_taps(const ox_rz_opts *ro, long in, long out, double scale, double r0, double r1, long o,
		      long stride, long *off, float *w)
{
	double lw = ro->scales_given ? (double)((float)scale * (float)in) : scale * (double)in, x = (double)o, xo;
	switch (ro->ctm) {
	case OX_RZ_ALIGN: xo = lw == 1 ? 0 : x * (double)(in - 1) / (lw - 1); break;
	case OX_RZ_ASYM: xo = x / scale; break;
	case OX_RZ_TFCROP:
		xo = (lw == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (lw - 1)) +
		     r0 * (double)(in - 1);
		if (xo < 0 || xo > (double)(in - 1)) {
			off[0] = -1, w[0] = 0;
			return 0;
		}
		break;
	case OX_RZ_PYTORCH: xo = lw == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
	case OX_RZ_SYMM: xo = (double)in / 2 * (1 - (double)out / lw) + (x + 0.5) / scale - 0.5; break;
	case OX_RZ_TFNN: xo = (x + 0.5) / scale; break;
	default: xo = (x + 0.5) / scale - 0.5;
	}
	double fl = floor(xo), ratio = xo == fl ? 1 : xo - fl;
	if (!ro->mode) {
		long i = xo == fl ? (long)xo
			 : ro->nearest == 0 ? (ratio <= 0.5 ? (long)fl : (long)fl + 1)
			 : ro->nearest == 1 ? (ratio < 0.5 ? (long)fl : (long)fl + 1)
			 : ro->nearest == 2 ? (long)fl
			 : ro->nearest == 3 ? (long)fl + 1
			 : scale >= 1 ? (long)fl : (long)fl + 1;
		i = i < 0 ? 0 : i >= in ? in - 1 : i;
		off[0] = i * stride, w[0] = 1;
		return 1;
	}
	/* coefficients */
	double c[4096];
	int m = 0;
	const double a = ro->cubic_a;
	if (!ro->antialias && ro->mode == 1) {
		c[0] = 1 - ratio, c[1] = ratio, m = 2;
	} else if (!ro->antialias) {
		double p = ratio + 1, q = 1 - ratio, q1 = q + 1;
		c[0] = ((a * p - 5 * a) * p + 8 * a) * p - 4 * a;
		c[1] = ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
		c[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
		c[3] = ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a;
		m = 4;
	} else {
		double s = scale < 1 ? scale : 1, sum = 0;
		long i0 = (long)floor((ro->mode == 1 ? -1 : -2) / s) + 1, i1 = 2 - i0;
		for (long i = i0; i < i1 && m < 4096; i++) {
			double t = ro->mode == 1 ? fabs(((double)i - ratio) * s) : fabs(s * ((double)i - ratio));
			double t2 = t * t, t3 = t2 * t;
			c[m] = ro->mode == 1 ? (t < 1 ? 1 - t : 0)
			       : t <= 1 ? (a + 2) * t3 - (a + 3) * t2 + 1
			       : t < 2 ? a * t3 - 5 * a * t2 + 8 * a * t - 4 * a : 0;
			sum += c[m++];
		}
		for (int i = 0; i < m; i++)
			c[i] /= sum;
	}
	/* the m nearest indices of [-pw, in + pw), by sorting */
	long pw = (m + 1) / 2, lo = -pw, hi = in + pw - 1, idx[4096];
	long cnt = hi - lo + 1;
	double *cand = malloc(sizeof(double) * 2 * (size_t)cnt);
	for (long i = 0; i < cnt; i++)
		cand[2 * i] = fabs(xo - (double)(lo + i)), cand[2 * i + 1] = (double)(lo + i);
	qsort(cand, (size_t)cnt, 2 * sizeof(double), cmp_near);
	for (int i = 0; i < m; i++)
		idx[i] = (long)cand[2 * i + 1];
	qsort(idx, (size_t)m, sizeof *idx, cmp_long);
	free(cand);
	if (ro->exclude) {
		double sum = 0;
		for (int t = 0; t < m; t++) {
			if (idx[t] < 0 || idx[t] >= in)
				c[t] = 0;
			sum += c[t];
		}
		for (int t = 0; t < m; t++)
			c[t] /= sum;
	}
	int k = 0;
	for (int t = 0; t < m; t++) {
		if (c[t] == 0)
			continue;
		long i = idx[t] < 0 ? 0 : idx[t] >= in ? in - 1 : idx[t];
		off[k] = i * stride, w[k++] = (float)c[t];
	}
	return k;
}

static double rnd(void)
{
	return rand() / (double)RAND_MAX;
}

static void test_taps(void **state)
{
	(void)state;
	srand(20261127);
	static long ob[4096], on[4096];
	static float wb[4096], wn[4096];
	int differ = 0;
	for (int it = 0; it < 30000 && differ < 5; it++) {
		ox_rz_opts ro = {rand() % 3, rand() % 7, rand() % 5, 0, rand() % 2, rand() % 2 ? -0.75 : -0.5,
				 rand() % 2};
		ro.antialias = ro.mode && rand() % 2;
		long in = rand() % 2 ? 1 + rand() % 12 : 1 + rand() % 300, out;
		double scale;
		switch (rand() % 4) {
		case 0: scale = (double)(float)(0.1 + 3 * rnd()); break;
		case 1: scale = (double)(1 + rand() % 4); break;
		case 2: scale = 1.0 / (1 + rand() % 40); break;
		default: scale = (double)(1 + rand() % 20) / (double)in;
		}
		out = (long)floor((double)in * scale);
		if (out < 1 || rand() % 3 == 0)
			out = 1 + rand() % 40;
		if (ox_rz_cap(&ro, scale) < 0 || ox_rz_count(&ro, scale) > 4096)
			continue;
		double r0 = rnd() * 0.5, r1 = 0.5 + rnd() * 0.7;
		long stride = 1 + rand() % 7;
		for (long o = 0; o < out && differ < 5; o++) {
			int kb = brute_taps(&ro, in, out, scale, r0, r1, o, stride, ob, wb);
			int kn = ox_rz_taps(&ro, in, out, scale, r0, r1, o, stride, on, wn, 4096);
			int same = kb == kn && (kb || on[0] == ob[0]);
			for (int t = 0; t < kb && same; t++)
				same = ob[t] == on[t] && (wb[t] == wn[t] || (isnan(wb[t]) && isnan(wn[t])));
			if (!same) {
				differ++;
				print_error("mode %d ctm %d nearest %d antialias %d exclude %d scale %.17g in %ld out %ld "
					    "o %ld: %d taps, brute force %d (first offset %ld, %ld)\n",
					    ro.mode, ro.ctm, ro.nearest, ro.antialias, ro.exclude, scale, in, out, o, kn, kb,
					    on[0], ob[0]);
			}
		}
	}
	assert_int_equal(differ, 0);
}

/* ---- output sizes and tables (templates/resize_rt.c) ---- */

static void test_shape(void **state)
{
	(void)state;
	const long in[4] = {1, 3, 5, 7};
	const int all[4] = {0, 1, 2, 3}, hw[2] = {2, 3};
	long od[4];
	double sc[4];
	/* scales: floor(in * s), s as float32 */
	const double s1[4] = {1, 1, 0.6, 2.5};
	assert_int_equal(ox_rz_shape(4, in, 4, all, 0, s1, 0, od, sc), 0);
	assert_int_equal(od[2], 3);
	assert_int_equal(od[3], 17);
	assert_true(sc[2] == (double)(float)0.6);
	/* an axis made empty, a scale that is not positive */
	const double s2[2] = {0.1, 1}, s3[2] = {-1, 1};
	assert_int_equal(ox_rz_shape(4, in, 2, hw, 0, s2, 0, od, sc), 2);
	assert_int_equal(ox_rz_shape(4, in, 2, hw, 0, s3, 0, od, sc), 2);
	/* sizes: stretch, not_larger (the smaller scale 4/5), not_smaller (20/7) */
	const double z[2] = {4, 20};
	assert_int_equal(ox_rz_shape(4, in, 2, hw, 1, z, 0, od, sc), 0);
	assert_true(od[0] == 1 && od[1] == 3 && od[2] == 4 && od[3] == 20);
	assert_true(sc[2] == 4.0 / 5 && sc[3] == 20.0 / 7);
	assert_int_equal(ox_rz_shape(4, in, 2, hw, 1, z, 1, od, sc), 0);
	assert_true(od[2] == 4 && od[3] == 6 && sc[3] == 4.0 / 5);
	assert_int_equal(ox_rz_shape(4, in, 2, hw, 1, z, 2, od, sc), 0);
	assert_true(od[2] == 14 && od[3] == 20 && sc[2] == 20.0 / 7);
	/* a size below 1 */
	const double z0[2] = {0, 3};
	assert_int_equal(ox_rz_shape(4, in, 2, hw, 1, z0, 0, od, sc), 2);
}

static void test_tables(void **state)
{
	(void)state;
	/* linear, half_pixel, [1, 2, 3] -> [1, 4, 5]: the tables are each axis's
	 * ox_rz_taps compacted to its most taps, strides of the input */
	ox_rz_opts ro = {1, OX_RZ_HALF, 0, 0, 0, -0.75, 0};
	const long in[3] = {1, 2, 3}, od[3] = {1, 4, 5};
	const double sc[3] = {1, 2, 5.0 / 3}, roi[6] = {0, 0, 0, 1, 1, 1};
	_Alignas(8) unsigned char scratch[1024];
	int nt[3];
	const long *off[3];
	const float *wt[3];
	assert_int_equal(ox_rz_tables(&ro, 3, in, od, sc, roi, scratch, sizeof scratch, nt, off, wt), 0);
	assert_int_equal(nt[0], 1);
	assert_int_equal(nt[1], 2);
	assert_int_equal(nt[2], 2);
	const long stride[3] = {6, 3, 1};
	for (int a = 0; a < 3; a++)
		for (long o = 0; o < od[a]; o++) {
			long ot[8];
			float w[8];
			int k = ox_rz_taps(&ro, in[a], od[a], sc[a], 0, 1, o, stride[a], ot, w, 8);
			for (int t = 0; t < nt[a]; t++) {
				assert_int_equal(off[a][o * nt[a] + t], t < k ? ot[t] : 0);
				assert_true(wt[a][o * nt[a] + t] == (t < k ? w[t] : 0));
			}
		}
	/* the second output of axis 1 sits at 0.25: 0.75 of index 0, 0.25 of 1 */
	assert_int_equal(off[1][2], 0);
	assert_int_equal(off[1][3], 3);
	assert_true(wt[1][2] == 0.75f && wt[1][3] == 0.25f);
	/* (1 + 8 + 10) taps of 12 bytes do not fit in 200 */
	assert_int_equal(ox_rz_tables(&ro, 3, in, od, sc, roi, scratch, 200, nt, off, wt), 2);
}

/* ---- inference on symbolic dims ---- */

static ox_graph *infer_ok(const char *text)
{
	ox_graph *g = ox_ir_parse(text, "t.ir");
	if (!g)
		fail_msg("parse failed (message above) for:\n%s", text);
	for (int i = 0; i < g->nnodes; i++)
		if (ox_infer_node(g, &g->nodes[i]))
			fail_msg("inference failed (message above) for:\n%s", text);
	return g;
}

static const char *dims(ox_graph *g, ox_id id)
{
	static char buf[512];
	ox_shape_str(g, &g->vals[id].shape, buf, sizeof buf);
	return buf;
}

static void test_infer_resize(void **state)
{
	(void)state;
	ox_graph *g = ox_ir_parse("graph \"r\" opset 19\n"
				  "input %0:f32[N,3,H,W] \"x\"\n"
				  "const %1:f32[4] \"s2\" = [1, 1, 2, 0.5]\n"
				  "const %2:f32[4] \"s3\" = [1, 1, 0.600000024, 1.5]\n"
				  "input %3:i64[2] \"hw\"\n"
				  "const %7:f32[4] \"s4\" = [1, 1, 9.99999975e-06, 1]\n"
				  "%4 = Resize(%0, _, %1)\n"
				  "%5 = Resize(%0, _, %2) {mode=\"linear\"}\n"
				  "%6 = Resize(%0, _, _, %3) {axes=[2,3], mode=\"cubic\"}\n"
				  "%8 = Resize(%0, _, %7)\n"
				  "output %4\noutput %5\noutput %6\noutput %8\n",
				  "t.ir");
	assert_non_null(g);
	assert_int_equal(ox_ir_set_range(g, "H", 8, 1000000), 0);
	assert_int_equal(ox_ir_set_range(g, "W", 8, 64), 0);
	for (int i = 0; i < g->nnodes; i++)
		assert_int_equal(ox_infer_node(g, &g->nodes[i]), 0);
	/* a float32 scale is a dyadic fraction: floor(in * s) exactly, as a dim */
	assert_string_equal(dims(g, g->nodes[0].out[0]), "[N,3,(H*2),(W/2)]");
	assert_string_equal(dims(g, g->nodes[1].out[0]), "[N,3,((H*5033165)/8388608),((W*3)/2)]");
	ox_dim d = g->vals[g->nodes[1].out[0]].shape.d[2];
	for (int64_t h = 8; h < 200; h++) {
		ox_ir_bind(g, "H", h);
		assert_int_equal(ox_dim_eval(g, d), (int64_t)floor((double)h * (double)0.6f));
	}
	ox_ir_set_range(g, "H", 8, 1000000);
	/* one whose denominator is past 2^30: a data symbol of at most floor(top * s) */
	const ox_dexpr *e = ox_dim_rtsym(g, g->vals[g->nodes[3].out[0]].shape.d[2]);
	assert_true(e && e->rt == OX_RT_DATA);
	assert_int_equal(e->hi, (int64_t)floor(1e6 * (double)1e-5f));
	/* sizes read at run time: data symbols without a bound */
	assert_string_equal(dims(g, g->nodes[2].out[0]), "[N,3,$%6:2,$%6:3]");
	e = ox_dim_rtsym(g, g->vals[g->nodes[2].out[0]].shape.d[3]);
	assert_true(e && e->rt == OX_RT_DATA && e->hi == -1);
	/* each has a scratch for its tables: 12 bytes per tap, 1 (nearest),
	 * 2 (linear) or 4 (cubic) taps per output of every axis, and a header
	 * of 32 bytes per axis (the CUDA target's gather reads it) */
	for (int i = 0; i < 4; i++)
		assert_true(g->nodes[i].scratch && g->nodes[i].nout == 2);
	d = g->vals[g->nodes[2].out[1]].shape.d[0];
	ox_ir_bind(g, "N", 2);
	ox_ir_bind(g, "H", 10);
	ox_ir_bind(g, "W", 9);
	ox_ir_bind(g, "$%6:2", 5);
	ox_ir_bind(g, "$%6:3", 7);
	assert_int_equal(ox_dim_eval(g, d), 12 * 4 * (2 + 3 + 5 + 7) + 32 * 4);
	ox_ir_free(g);

	/* constant shapes and scales: no scratch, the compiler's tables */
	g = infer_ok("graph \"r\" opset 19\n"
		     "input %0:f32[1,3,4,4] \"x\"\n"
		     "const %1:f32[4] \"s\" = [1, 1, 0.600000024, 1.5]\n"
		     "%2 = Resize(%0, _, %1) {mode=\"linear\"}\n"
		     "output %2\n");
	assert_string_equal(dims(g, g->nodes[0].out[0]), "[1,3,2,6]");
	assert_int_equal(g->nodes[0].scratch, 0);
	ox_ir_free(g);
}

/* the output size of a pool with ceil_mode as the constant rule gives it */
static int64_t pool_ceil(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe)
{
	int64_t room = in + pb + pe - k, o = (room + s - 1) / s + 1;
	if ((o - 1) * s >= in + pb)
		o--;
	return o;
}

static void test_infer_windows(void **state)
{
	(void)state;
	/* MaxPool ceil_mode, stride 2 with pads that let the last window start
	 * in the end pad, and stride 3: a dim that matches the constant rule */
	ox_graph *g = infer_ok("graph \"p\" opset 13\n"
			       "input %0:f32[1,2,H,H] \"x\"\n"
			       "input %4:f32[2,1,3,3] \"w\"\n"
			       "%1 = MaxPool(%0) {ceil_mode=1, kernel_shape=[3,2], pads=[0,1,2,1], strides=[2,3]}\n"
			       "%2 = ConvTranspose(%0, %4) {auto_pad=\"SAME_UPPER\", strides=[2,2]}\n"
			       "output %1\noutput %2\n");
	ox_shape ps = g->vals[g->nodes[0].out[0]].shape, cs = g->vals[g->nodes[1].out[0]].shape;
	for (int64_t h = 3; h <= 40; h++) {
		ox_ir_bind(g, "H", h);
		assert_int_equal(ox_dim_eval(g, ps.d[2]), pool_ceil(h, 3, 2, 0, 2));
		assert_int_equal(ox_dim_eval(g, ps.d[3]), pool_ceil(h, 2, 3, 1, 1));
		assert_int_equal(ox_dim_eval(g, cs.d[2]), 2 * h);
	}
	ox_ir_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taps),
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_infer_resize),
		cmocka_unit_test(test_infer_windows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
