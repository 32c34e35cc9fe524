/* oxcmp.c: compare two tensors (.npy or TensorProto .pb) for the e2e tests.
 *
 *   oxcmp [--rtol R] [--atol A] GOT EXPECTED
 *
 * Shapes and dtypes must match exactly (a '<u2' / '|u1' .npy stands for
 * bf16 / f8 when the other side is: the harness writes them that way).
 * Strings, integers, bools and f8 bit patterns compare exactly (sub-byte kinds
 * unpacked, one per byte; float4e2m1 codes by value, so +0 equals -0);
 * floats pass when |got-exp| <= atol + rtol*|exp|,
 * NaN matches NaN and an infinity only the same infinity. Prints one line,
 * `ok max_abs=.. max_rel=.. max_ulp=..` or `MISMATCH ...`; exit 0 ok,
 * 1 mismatch, 2 unreadable input or bad usage. A sequence or optional
 * output is GOT.list (its kind and count) with GOT_J.npy per tensor, compared
 * part by part with a SequenceProto / OptionalProto. The readers are the ones the
 * generated test program uses (runtime_min/ox_main.c without its main).
 */
#define OX_NO_MAIN
#include "../../runtime_min/ox_main.c"
#include <float.h>
#include <inttypes.h>
#include <math.h>

static double half_to_double(uint16_t h)
{
	int e = h >> 10 & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
	return h & 0x8000 ? -v : v;
}

/* Element i as a double, and as an integer whose distance to another
 * element's key counts the representable values between them (the ULP
 * distance): sign-magnitude bits mapped onto a line, -0 and +0 both 0. */
static double elem(const oxt_tensor *t, size_t i, int64_t *key)
{
	const unsigned char *p = (const unsigned char *)t->data + i * oxt_dtsize(t->dtype);
	uint16_t h;
	uint32_t u;
	uint64_t w;
	float f;
	double d;
	switch (t->dtype) {
	case OXT_F16:
		memcpy(&h, p, 2);
		*key = h & 0x8000 ? -(int64_t)(h & 0x7fff) : (int64_t)h;
		return half_to_double(h);
	case OXT_BF16:
		memcpy(&h, p, 2);
		*key = h & 0x8000 ? -(int64_t)(h & 0x7fff) : (int64_t)h;
		u = (uint32_t)h << 16;
		memcpy(&f, &u, 4);
		return f;
	case OXT_F32:
		memcpy(&u, p, 4);
		memcpy(&f, p, 4);
		*key = u & 0x80000000u ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
		return f;
	case OXT_F64:
		memcpy(&w, p, 8);
		memcpy(&d, p, 8);
		*key = w >> 63 ? -(int64_t)(w & 0x7fffffffffffffffu) : (int64_t)w;
		return d;
	}
	return 0;
}

static uint64_t ulp_dist(int64_t a, int64_t b)
{
	/* in uint64: the two keys may lie on opposite sides of 0, 2^64 apart */
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

static void index_str(char *buf, size_t n, const oxt_tensor *t, size_t flat)
{
	int64_t idx[OXT_MAXRANK];
	for (int r = t->rank - 1; r >= 0; r--) {
		idx[r] = t->shape[r] ? (int64_t)(flat % (size_t)t->shape[r]) : 0;
		flat = t->shape[r] ? flat / (size_t)t->shape[r] : 0;
	}
	size_t k = (size_t)snprintf(buf, n, "[");
	for (int r = 0; r < t->rank && k < n; r++)
		k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, r ? "," : "", idx[r]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

/* Integer element printed exactly, for the mismatch report. */
static void int_str(char *buf, size_t n, const oxt_tensor *t, size_t i)
{
	const unsigned char *p = (const unsigned char *)t->data + i * oxt_dtsize(t->dtype);
	int8_t i8; int16_t i16; int32_t i32; int64_t i64;
	uint16_t u16; uint32_t u32; uint64_t u64;
	switch (t->dtype) {
	case OXT_I8: case OXT_I4: case OXT_I2: memcpy(&i8, p, 1); snprintf(buf, n, "%d", i8); break;
	case OXT_I16: memcpy(&i16, p, 2); snprintf(buf, n, "%d", i16); break;
	case OXT_I32: memcpy(&i32, p, 4); snprintf(buf, n, "%" PRId32, i32); break;
	case OXT_I64: memcpy(&i64, p, 8); snprintf(buf, n, "%" PRId64, i64); break;
	case OXT_U16: memcpy(&u16, p, 2); snprintf(buf, n, "%u", u16); break;
	case OXT_U32: memcpy(&u32, p, 4); snprintf(buf, n, "%" PRIu32, u32); break;
	case OXT_U64: memcpy(&u64, p, 8); snprintf(buf, n, "%" PRIu64, u64); break;
	case OXT_U8: case OXT_BOOL: case OXT_U4: case OXT_U2: snprintf(buf, n, "%u", p[0]); break;
	case OXT_F4E2M1: {
		static const char *mag[8] = { "0", "0.5", "1", "1.5", "2", "3", "4", "6" };
		snprintf(buf, n, "%s%s (0x%x)", p[0] & 8 ? "-" : "", mag[p[0] & 7], p[0]);
		break;
	}
	default: snprintf(buf, n, "0x%02x", p[0]); break; /* f8 bits */
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: oxcmp [--rtol R] [--atol A] GOT EXPECTED\n"
		"  GOT, EXPECTED: .npy or ONNX TensorProto .pb; or GOT.list (a sequence or\n"
		"  optional the test program wrote as GOT.list + GOT_J.npy) and EXPECTED a\n"
		"  SequenceProto / OptionalProto .pb\n"
		"  defaults: f32/f64 rtol 1e-5 atol 1e-6; f16 rtol 1e-3 atol 1e-3;\n"
		"            bf16 rtol 8e-3 atol 1e-3; integers, bool, f8 exact\n");
	return 2;
}

typedef struct {
	double max_abs, max_rel;
	uint64_t max_ulp;
} stats;

/* Compare got g with expected x; 0 if they match. Folds the errors into
 * *st; on a mismatch writes the MISMATCH line into msg. rtol/atol < 0: the
 * dtype's defaults. */
static int compare(oxt_tensor *g, oxt_tensor *x, double rtol, double atol, stats *st, char *msg, size_t nmsg)
{
	oxt_bits_as(x, g->dtype);
	oxt_bits_as(g, x->dtype);

	int same = g->dtype == x->dtype && g->rank == x->rank;
	for (int r = 0; same && r < g->rank; r++)
		same = g->shape[r] == x->shape[r];
	if (!same) {
		char a[256], b[256];
		oxt_typestr(a, sizeof a, g->dtype, g->rank, g->shape);
		oxt_typestr(b, sizeof b, x->dtype, x->rank, x->shape);
		snprintf(msg, nmsg, "MISMATCH %s: got %s expected %s", g->dtype == x->dtype ? "shape" : "dtype", a, b);
		return 1;
	}

	int dt = g->dtype;
	int isfloat = dt == OXT_F32 || dt == OXT_F64 || dt == OXT_F16 || dt == OXT_BF16;
	int half = dt == OXT_F16 || dt == OXT_BF16;
	if (rtol < 0)
		rtol = dt == OXT_BF16 ? 8e-3 : half ? 1e-3 : 1e-5;
	if (atol < 0)
		atol = half ? 1e-3 : 1e-6;
	double max_abs = 0, max_rel = 0;
	uint64_t max_ulp = 0;
	/* relative error denominator floor: the dtype's smallest normal */
	double tiny = dt == OXT_F64 ? DBL_MIN : dt == OXT_F16 ? 6.103515625e-05 : FLT_MIN;
	const char *ffmt = dt == OXT_F64 ? "%.17g" : "%.9g";
	size_t size = oxt_dtsize(dt);

	size_t nbad = 0;
	int nan_bad = 0; /* a NaN where a number was expected, or the reverse */
	char report[1024] = "";
	size_t rk = 0;
	for (size_t i = 0; i < g->numel; i++) {
		int ok;
		char gs[64], xs[64];
		if (isfloat) {
			int64_t kg, kx;
			double a = elem(g, i, &kg), b = elem(x, i, &kx);
			if (isnan(a) || isnan(b))
				ok = isnan(a) && isnan(b);
			else if (isinf(a) || isinf(b))
				ok = a == b;
			else {
				double d = fabs(a - b), rel = d / fmax(fabs(b), tiny);
				uint64_t u = ulp_dist(kg, kx);
				ok = d <= atol + rtol * fabs(b);
				max_abs = fmax(max_abs, d);
				max_rel = fmax(max_rel, rel);
				max_ulp = u > max_ulp ? u : max_ulp;
			}
			if (!ok) {
				/* a bad NaN or infinity shows in max_abs: scripts read it */
				nan_bad |= isnan(a) != isnan(b);
				if (!isnan(a) && !isnan(b) && (isinf(a) || isinf(b)))
					max_abs = INFINITY;
				snprintf(gs, sizeof gs, ffmt, a);
				snprintf(xs, sizeof xs, ffmt, b);
			}
		} else if (dt == OXT_STRING) {
			const char *sa = ((char **)g->data)[i], *sb = ((char **)x->data)[i];
			ok = strcmp(sa, sb) == 0;
			if (!ok) {
				snprintf(gs, sizeof gs, "\"%.40s\"", sa);
				snprintf(xs, sizeof xs, "\"%.40s\"", sb);
			}
		} else {
			const unsigned char *pa = (const unsigned char *)g->data + i * size;
			const unsigned char *pb = (const unsigned char *)x->data + i * size;
			ok = memcmp(pa, pb, size) == 0;
			if (dt == OXT_F4E2M1) /* by value: the two zeros are equal */
				ok = (pa[0] & 15) == (pb[0] & 15) || ((pa[0] | pb[0]) & 7) == 0;
			if (!ok) {
				int_str(gs, sizeof gs, g, i);
				int_str(xs, sizeof xs, x, i);
			}
		}
		if (!ok && nbad++ < 5 && rk < sizeof report) {
			char is[160];
			index_str(is, sizeof is, g, i);
			rk += (size_t)snprintf(report + rk, sizeof report - rk, "%s%s got %s exp %s",
					       rk ? "; " : "", is, gs, xs);
		}
	}
	if (nan_bad)
		max_abs = NAN;
	size_t k = 0;
	if (nbad) {
		char ty[256];
		oxt_typestr(ty, sizeof ty, dt, g->rank, g->shape);
		k += (size_t)snprintf(msg, nmsg, "MISMATCH %zu/%zu elements of %s", nbad, g->numel, ty);
		if (isfloat && k < nmsg)
			k += (size_t)snprintf(msg + k, nmsg - k, " (rtol=%g atol=%g) max_abs=%.3g max_rel=%.3g max_ulp=%" PRIu64,
					      rtol, atol, max_abs, max_rel, max_ulp);
		if (k < nmsg)
			snprintf(msg + k, nmsg - k, ": %s%s", report, nbad > 5 ? "; ..." : "");
	}
	st->max_abs = isnan(max_abs) || isnan(st->max_abs) ? NAN : fmax(st->max_abs, max_abs);
	st->max_rel = fmax(st->max_rel, max_rel);
	st->max_ulp = max_ulp > st->max_ulp ? max_ulp : st->max_ulp;
	return nbad ? 1 : 0;
}

int main(int argc, char **argv)
{
	double rtol = -1, atol = -1;
	const char *path[2] = { NULL, NULL };
	int np = 0;
	for (int i = 1; i < argc; i++) {
		double *opt = strcmp(argv[i], "--rtol") == 0 ? &rtol
			    : strcmp(argv[i], "--atol") == 0 ? &atol : NULL;
		if (opt) {
			char *e;
			if (i + 1 == argc)
				return usage();
			*opt = strtod(argv[++i], &e);
			if (*e || e == argv[i] || !(*opt >= 0))
				return usage();
		} else if (argv[i][0] == '-' && argv[i][1])
			return usage();
		else if (np < 2)
			path[np++] = argv[i];
		else
			return usage();
	}
	if (np != 2)
		return usage();

	stats st = {0, 0, 0};
	char err[512], msg[2048] = "";
	size_t pl = strlen(path[0]);
	if (pl > 5 && !strcmp(path[0] + pl - 5, ".list")) {
		/* a sequence or optional output: GOT.list, then GOT_J.npy */
		static const char *const kinds[] = {"tensor", "sequence", "optional", "optional-sequence"};
		char kind[64];
		int count = -1, k = -1;
		FILE *f = fopen(path[0], "r");
		if (!f || fscanf(f, "%63s %d", kind, &count) != 2) {
			printf("ERROR %s: unreadable\n", path[0]);
			if (f)
				fclose(f);
			return 2;
		}
		fclose(f);
		for (int i = 0; i < 4; i++)
			if (!strcmp(kind, kinds[i]))
				k = i;
		oxt_tensor *parts;
		int nparts;
		if (k < 1 || oxt_read_parts(path[1], k, &parts, &nparts, err, sizeof err)) {
			printf("ERROR %s: %s\n", path[1], k < 1 ? "unknown kind in the .list" : err);
			return 2;
		}
		int bad = 0;
		if (nparts != count) {
			printf("MISMATCH %s of %d tensors, expected %d\n", kind, count, nparts);
			bad = 1;
		}
		for (int j = 0; j < nparts && !bad; j++) {
			char *gp = malloc(pl + 32);
			oxt_tensor t;
			snprintf(gp, pl + 32, "%.*s_%d.npy", (int)(pl - 5), path[0], j);
			if (oxt_read(gp, &t, err, sizeof err)) {
				printf("ERROR %s: %s\n", gp, err);
				free(gp);
				oxt_free_parts(parts, nparts);
				return 2;
			}
			free(gp);
			if (compare(&t, &parts[j], rtol, atol, &st, msg, sizeof msg)) {
				printf("[%d] %s\n", j, msg);
				bad = 1;
			}
			oxt_free(&t);
		}
		oxt_free_parts(parts, nparts);
		if (!bad)
			printf("ok max_abs=%.3g max_rel=%.3g max_ulp=%" PRIu64 " (%s of %d)\n", st.max_abs, st.max_rel,
			       st.max_ulp, kind, count);
		return bad;
	}
	oxt_tensor t[2];
	for (int k = 0; k < 2; k++)
		if (oxt_read(path[k], &t[k], err, sizeof err)) {
			printf("ERROR %s: %s\n", path[k], err);
			return 2;
		}
	int bad = compare(&t[0], &t[1], rtol, atol, &st, msg, sizeof msg);
	if (bad)
		printf("%s\n", msg);
	else
		printf("ok max_abs=%.3g max_rel=%.3g max_ulp=%" PRIu64 "\n", st.max_abs, st.max_rel, st.max_ulp);
	oxt_free(&t[0]);
	oxt_free(&t[1]);
	return bad;
}
