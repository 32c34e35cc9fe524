/* resize_taps.c: the taps of a Resize along one axis, as the ONNX
 * reference computes them: output index o maps to the input coordinate
 * xo of the coordinate transform; nearest modes read one input index,
 * linear and cubic (antialias, exclude_outside) weigh the m nearest
 * indices, clamped to the edge. One text for both sides: the compiler
 * includes this file (codegen/c/emit_nn.c) to print the tables of a Resize
 * whose sizes are constants, and the generated code of one whose sizes
 * or scales are known only at run time fills the same tables with it
 * (ox_rz_tables), so the two cannot disagree. Needs <math.h> only.
 */
enum { OX_RZ_HALF, OX_RZ_ASYM, OX_RZ_ALIGN, OX_RZ_PYTORCH, OX_RZ_TFCROP, OX_RZ_SYMM, OX_RZ_TFNN };

typedef struct {
	int mode;         /* 0 nearest, 1 linear, 2 cubic */
	int ctm;          /* OX_RZ_*: coordinate_transformation_mode */
	int nearest;      /* 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 opset-10 simple */
	int antialias, exclude;
	double cubic_a;
	int scales_given; /* the scales input gave the scale (the resized length in float32) */
} ox_rz_opts;

/* Taps per output before they are compacted (the coefficients a linear or
 * cubic mode weighs): 4, or with antialias on a downscale the reference's
 * footprint; -1 past 2^20. */
OX_STATIC int ox_rz_cap(const ox_rz_opts *ro, double scale)
{
	if (!ro->mode || !ro->antialias || !(scale < 1))
		return 4;
	double f = ro->mode == 1 ? floor(-1 / scale) : floor(-2 / scale);
	if (!(f > -(double)(1 << 20)))
		return -1;
	long cap = 2 - 2 * ((long)f + 1);
	return cap < 1 || cap > 1 << 20 ? -1 : (int)cap;
}

/* The coefficients an output weighs (m): 2 linear, 4 cubic, with
 * antialias the footprint of the kernel stretched by 1 / scale on a
 * downscale (ox_rz_cap has checked it). */
OX_STATIC int ox_rz_count(const ox_rz_opts *ro, double scale)
{
	if (!ro->antialias)
		return ro->mode == 1 ? 2 : 4;
	double s = scale < 1 ? scale : 1;
	return (int)(2 - 2 * ((long)floor((ro->mode == 1 ? -1 : -2) / s) + 1));
}

/* Coefficient t of m (the reference's get_coeffs) at ratio in (0, 1], the
 * distance past floor(x) (1 when x is an integer), before antialias's
 * normalization. */
OX_STATIC double ox_rz_coef(const ox_rz_opts *ro, double ratio, double s, int t)
{
	const double a = ro->cubic_a;
	if (!ro->antialias) {
		if (ro->mode == 1)
			return t ? ratio : 1 - ratio;
		double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
		switch (t) {
		case 0: return ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
		case 1: return ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
		case 2: return ((a + 2) * q - (a + 3)) * q * q + 1;
		default: return ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a;
		}
	}
	s = s < 1 ? s : 1;
	if (ro->mode == 1) {
		long start = (long)floor(-1 / s) + 1;
		double u = fabs(((double)(start + t) - ratio) * s);
		return u < 1 ? 1 - u : 0;
	}
	long i = (long)floor(-2 / s) + 1 + t;
	double u = fabs(s * ((double)i - ratio)), u2 = u * u, u3 = u2 * u;
	return u <= 1 ? (a + 2) * u3 - (a + 3) * u2 + 1 : u < 2 ? a * u3 - 5 * a * u2 + 8 * a * u - 4 * a : 0;
}

/* Output index o of an axis of in -> out elements at this scale and roi
 * (r0, r1): its taps' input offsets (index * stride) and weights, the
 * nonzero ones, into off[] and w[] (at most room of them); the count. An
 * output outside the input (tf_crop_and_resize) has none: off[0] is -1. */
OX_STATIC int ox_rz_taps(const ox_rz_opts *ro, long in, long out, double scale, double r0, double r1, long o,
		      long stride, long *off, float *w, int room)
{
	/* the reference's resized length: scale * in, in float32 when the scale is a float32 input */
	const double lw = ro->scales_given ? (double)((float)scale * (float)in) : scale * (double)in;
	const double x = (double)o;
	double xo;
	int oob = 0;
	(void)out;
	switch (ro->ctm) {
	case OX_RZ_ALIGN:
		xo = lw == 1 ? 0 : x * (double)(in - 1) / (lw - 1);
		break;
	case OX_RZ_ASYM:
		xo = x / scale;
		break;
	case OX_RZ_TFCROP:
		xo = lw == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (lw - 1);
		xo += r0 * (double)(in - 1);
		oob = xo < 0 || xo > (double)(in - 1);
		break;
	case OX_RZ_PYTORCH:
		xo = lw == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
		break;
	case OX_RZ_SYMM: {
		double adj = (double)out / lw, center = (double)in / 2;
		xo = center * (1 - adj) + (x + 0.5) / scale - 0.5;
		break;
	}
	case OX_RZ_TFNN:
		xo = (x + 0.5) / scale;
		break;
	default:
		xo = (x + 0.5) / scale - 0.5;
	}
	if (oob) {
		if (room > 0)
			off[0] = -1, w[0] = 0;
		return 0;
	}
	const double fl = floor(xo), ratio = xo == fl ? 1 : xo - fl;
	if (ro->mode == 0) {
		/* nearest: one tap */
		long i;
		if (xo == fl)
			i = (long)xo;
		else if (ro->nearest == 0)
			i = ratio <= 0.5 ? (long)fl : (long)fl + 1;
		else if (ro->nearest == 1)
			i = ratio < 0.5 ? (long)fl : (long)fl + 1;
		else if (ro->nearest == 2)
			i = (long)fl;
		else if (ro->nearest == 3)
			i = (long)fl + 1;
		else /* opset 10: floor upsampling, ceil downsampling */
			i = scale >= 1 ? (long)fl : (long)fl + 1;
		i = i < 0 ? 0 : i >= in ? in - 1 : i;
		if (room > 0)
			off[0] = i * stride, w[0] = 1;
		return 1;
	}
	const int m = ox_rz_count(ro, scale);
	/* the m integers nearest xo within [-pw, in + pw), ties to the smaller:
	 * the reference's neighbours in its edge-padded copy of the axis; a
	 * window [j, j + m) moved until neither end would swap with the next */
	const long pw = (m + 1) / 2, lo = -pw, hi = in + pw - m;
	const double jd = ceil(xo - (double)(m / 2));
	long j = !(jd >= (double)lo) ? lo : jd > (double)hi ? hi : (long)jd;
	while (j > lo && fabs(xo - (double)(j - 1)) <= fabs(xo - (double)(j + m - 1)))
		j--;
	while (j < hi && fabs(xo - (double)(j + m)) < fabs(xo - (double)j))
		j++;
	/* antialias normalizes the coefficients to sum 1, exclude_outside
	 * then those inside the input; in the reference's order */
	double sum = 1, sumin = 1;
	if (ro->antialias) {
		sum = 0;
		for (int t = 0; t < m; t++)
			sum += ox_rz_coef(ro, ratio, scale, t);
	}
	if (ro->exclude) {
		sumin = 0;
		for (int t = 0; t < m; t++) {
			double c = ox_rz_coef(ro, ratio, scale, t);
			if (ro->antialias)
				c /= sum;
			if (j + t >= 0 && j + t < in)
				sumin += c;
		}
	}
	int k = 0;
	for (int t = 0; t < m; t++) {
		double c = ox_rz_coef(ro, ratio, scale, t);
		if (ro->antialias)
			c /= sum;
		if (ro->exclude)
			c = (j + t < 0 || j + t >= in ? 0 : c) / sumin;
		if (c == 0)
			continue;
		long i = j + t < 0 ? 0 : j + t >= in ? in - 1 : j + t;
		if (k < room)
			off[k] = i * stride, w[k] = (float)c;
		k++;
	}
	return k;
}
