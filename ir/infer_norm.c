/* infer_norm.c: shape inference for the normalizations, the pooling
 * variants and spatial sampling (InstanceNormalization, GroupNormalization,
 * LpNormalization, MeanVarianceNormalization, LRN, LpPool, MaxUnpool,
 * MaxRoiPool, RoiAlign, Upsample, GridSample, AffineGrid, Col2Im,
 * CenterCropPad).
 * Dims may be run-time dims (docs/dynamic.md). Inputs that steer a shape
 * (Upsample scales, MaxUnpool output_shape, AffineGrid size, Col2Im
 * image/block shapes, CenterCropPad shape) are read with ox_in_svals: what
 * is known at compile time gives dims, the rest are data symbols the node
 * computes when it runs (no bound from the op unless said), and their
 * length (the output's rank) must be a constant. Where a run-time dim must
 * equal another or a constant (a scale per channel, ROI boxes of 4) the
 * inference accepts it when its range allows and codegen/c/emit_norm.c
 * checks it when the program runs. The decoders ox_ir_norm_* are shared
 * with codegen/c/emit_norm.c (ir/family.h), so the inferred shape and the
 * emitted kernel read attributes in one way.
 */
#include "ir.h"
#include "family.h"
#include <math.h>
#include <string.h>

/* MeanVarianceNormalization's axes: the attribute, else {0, 2, 3} */
int ox_ir_norm_mvn_axes(const ox_node *n, const int64_t **a)
{
	static const int64_t dflt[3] = {0, 2, 3};
	int m = ox_attr_ints(n, "axes", a);
	if (m < 0)
		*a = dflt, m = 3;
	return m;
}

#define MAXSP (OX_MAX_RANK - 2)

/* the float types the kernels compute in (f16/bf16 through float) */
static int norm_float(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16;
}

static int need_float(ox_graph *g, const ox_node *n, int dt)
{
	if (!norm_float(dt))
		return ox_error(g, n, "dtype %s is not supported (f32, f64, f16, bf16 only)", ox_dtype_name(dt));
	return 0;
}

/* Integer input k that steers a shape, element by element (ox_sv): the
 * constants and dims known at compile time, unknown where the program
 * reads it when it runs. Its length must be a constant. Count or -1. */
static int shape_svals(ox_graph *g, const ox_node *n, int k, ox_sv *v, int cap, const char *what)
{
	ox_value *iv = ox_in(g, n, k);
	if (!ox_dtype_is_int(iv->dtype))
		return ox_error(g, n, "%s input '%s' must be an integer tensor", what, iv->name);
	if (iv->shape.rank > 1)
		return ox_error(g, n, "%s input '%s' must be a vector", what, iv->name);
	int64_t m = iv->shape.rank ? ox_dim_eval(g, iv->shape.d[0]) : 1;
	if (m < 0)
		return ox_error(g, n, "%s input '%s' must have a length known at compile time", what, iv->name);
	if (m > cap)
		return ox_error(g, n, "%s input '%s' has %lld values, at most %d supported", what, iv->name,
				(long long)m, cap);
	if (ox_in_svals(g, n, k, v, cap) != m)
		for (int i = 0; i < m; i++)
			v[i] = (ox_sv){OX_SV_UNKNOWN, 0, 0};
	return (int)m;
}

/* Integer input k that must be a constant; count or -1. */
static int const_ints(ox_graph *g, const ox_node *n, int k, int64_t *v, int cap, const char *what)
{
	ox_value *iv = ox_in(g, n, k);
	const ox_tensor *t = ox_in_const(g, n, k);
	if (!t)
		return ox_need_const(g, n, k, "%s input '%s' is not a constant", what, iv->name);
	if (!ox_dtype_is_int(t->dtype))
		return ox_error(g, n, "%s input '%s' must be an integer tensor", what, iv->name);
	int64_t m = ox_tensor_numel(t);
	if (m > cap)
		return ox_error(g, n, "%s input '%s' has %lld values, at most %d supported", what, iv->name,
				(long long)m, cap);
	for (int64_t i = 0; i < m; i++)
		v[i] = ox_tensor_get_i64(t, i);
	return (int)m;
}

/* INTS attribute of exactly m values >= min, or dflt everywhere. */
static int ints_attr(ox_graph *g, const ox_node *n, const char *name, int m, int64_t dflt, int64_t min,
		     int64_t *v)
{
	const int64_t *a;
	int c = ox_attr_ints(n, name, &a);
	if (c < 0) {
		for (int i = 0; i < m; i++)
			v[i] = dflt;
		return 0;
	}
	if (c != m)
		return ox_error(g, n, "%s has %d values, expected %d", name, c, m);
	for (int i = 0; i < m; i++) {
		if (a[i] < min)
			return ox_error(g, n, "%s[%d] = %lld must be at least %lld", name, i, (long long)a[i],
					(long long)min);
		v[i] = a[i];
	}
	return 0;
}

/* Upsample's per-axis scales: the attribute before opset 9, input 1 from
 * then on. 0 with scale[] set when they are constants; 1 when input 1 is
 * read when the program runs (a float vector of rank values, scale[]
 * untouched); -1 after an error. Upsampling only (scale >= 1), as the spec
 * says (checked when the program runs for the input read then). */
int ox_ir_norm_upsample_scales(ox_graph *g, const ox_node *n, int rank, double *scale)
{
	int m;
	if (n->opset < 9) {
		const ox_attr *a = ox_attr_get(n, "scales");
		if (!a || a->type != OX_AT_FLOATS)
			return ox_error(g, n, "scales attribute is required");
		m = a->n;
		for (int i = 0; i < m && i < rank; i++)
			scale[i] = a->floats[i];
	} else {
		ox_value *sv = ox_in(g, n, 1);
		const ox_tensor *t = ox_in_const(g, n, 1);
		if (!sv)
			return ox_error(g, n, "scales input is required");
		if (!ox_dtype_is_float(sv->dtype) || (t && !ox_dtype_is_float(t->dtype)))
			return ox_error(g, n, "scales input '%s' must be a float tensor", sv->name);
		if (!t) {
			if (sv->shape.rank != 1 || ox_dim_eval(g, sv->shape.d[0]) != rank)
				return ox_error(g, n, "scales input '%s' must be a vector of %d values (its length "
						"known at compile time)", sv->name, rank);
			return 1;
		}
		m = (int)ox_tensor_numel(t);
		for (int i = 0; i < m && i < rank; i++)
			scale[i] = (float)ox_tensor_get_f64(t, i);
	}
	if (m != rank)
		return ox_error(g, n, "%d scales for a rank-%d input", m, rank);
	for (int i = 0; i < rank; i++)
		if (!(scale[i] >= 1))
			return ox_error(g, n, "scales[%d] = %g must be at least 1", i, scale[i]);
	return 0;
}

/* MaxUnpool's window and the spatial size the indices refer to:
 * (in - 1) * stride - pads + kernel, as MaxPool would have seen it (dims:
 * an expression over the input's run-time dims). */
int ox_ir_norm_unpool(ox_graph *g, const ox_node *n, int nsp, const ox_dim *in, int64_t *k, int64_t *s,
		      int64_t *pads, ox_dim *out)
{
	if (!ox_attr_get(n, "kernel_shape"))
		return ox_error(g, n, "kernel_shape is required");
	if (ints_attr(g, n, "kernel_shape", nsp, 1, 1, k) || ints_attr(g, n, "strides", nsp, 1, 1, s) ||
	    ints_attr(g, n, "pads", 2 * nsp, 0, 0, pads))
		return -1;
	for (int i = 0; i < nsp && in; i++) {
		int64_t lo, hi, p = pads[i] + pads[i + nsp];
		if (in[i] >= 0) {
			out[i] = (in[i] - 1) * s[i] - p + k[i];
			if (out[i] < 1)
				return ox_error(g, n, "spatial axis %d: output size %lld", i, (long long)out[i]);
			continue;
		}
		out[i] = ox_dim_sub(g, ox_dim_add(g, ox_dim_mul(g, ox_dim_sub(g, in[i], 1), s[i]), k[i]), p);
		if (ox_dim_range(g, out[i], &lo, &hi) || lo < 1)
			return ox_error(g, n, "spatial axis %d: the output size is not positive for every input "
					"size in the ranges given", i);
	}
	return 0;
}

/* Col2Im's dilations, pads and strides (nsp axes) */
int ox_ir_norm_col2im_attrs(ox_graph *g, const ox_node *n, int nsp, int64_t *dil, int64_t *pads, int64_t *str)
{
	if (ints_attr(g, n, "dilations", nsp, 1, 1, dil) || ints_attr(g, n, "pads", 2 * nsp, 0, 0, pads) ||
	    ints_attr(g, n, "strides", nsp, 1, 1, str))
		return -1;
	return 0;
}

/* the number of blocks per axis of constant image and block shapes */
static int col2im_cols(ox_graph *g, const ox_node *n, int nsp, const int64_t *img, const int64_t *blk,
		       const int64_t *dil, const int64_t *pads, const int64_t *str, int64_t *ncol)
{
	for (int i = 0; i < nsp; i++) {
		if (img[i] < 1 || blk[i] < 1)
			return ox_error(g, n, "image_shape and block_shape must be positive");
		ncol[i] = (img[i] + pads[i] + pads[i + nsp] - (dil[i] * (blk[i] - 1) + 1)) / str[i] + 1;
		if (ncol[i] < 1)
			return ox_error(g, n, "spatial axis %d: the block does not fit the padded image", i);
	}
	return 0;
}

/* Col2Im's image and block shapes (constant inputs 1, 2), dilations,
 * pads, strides and the number of blocks per axis. */
int ox_ir_norm_col2im(ox_graph *g, const ox_node *n, int nsp, int64_t *img, int64_t *blk, int64_t *dil,
		      int64_t *pads, int64_t *str, int64_t *ncol)
{
	int mi = const_ints(g, n, 1, img, MAXSP, "image_shape");
	int mb = mi < 0 ? -1 : const_ints(g, n, 2, blk, MAXSP, "block_shape");
	if (mi < 0 || mb < 0)
		return -1;
	if (mi != nsp || mb != nsp)
		return ox_error(g, n, "image_shape and block_shape must both have %d values", nsp);
	if (ox_ir_norm_col2im_attrs(g, n, nsp, dil, pads, str))
		return -1;
	return col2im_cols(g, n, nsp, img, blk, dil, pads, str, ncol);
}

static int infer_chan_norm(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *s = ox_in(g, n, 1), *b = ox_in(g, n, 2);
	int inst = n->op == OX_OP_InstanceNormalization;
	if (need_float(g, n, x->dtype))
		return -1;
	if (x->shape.rank < (inst ? 3 : 2))
		return ox_error(g, n, "input has rank %d, expected at least %d", x->shape.rank, inst ? 3 : 2);
	if (s->dtype != x->dtype || b->dtype != x->dtype)
		return ox_error(g, n, "scale and bias must have the input's dtype");
	if (s->shape.rank != 1 || b->shape.rank != 1)
		return ox_error(g, n, "scale and bias must be vectors");
	ox_dim C = x->shape.d[1];
	ox_dim want = C; /* a run-time C: the emitter checks that the groups divide it */
	if (!inst) {
		int64_t G = ox_attr_int(n, "num_groups", -1);
		if (G < 1)
			return ox_error(g, n, "num_groups is required and must be positive");
		if (C >= 0 && C % G)
			return ox_error(g, n, "%lld channels do not divide into %lld groups", (long long)C, (long long)G);
		if (n->opset < 21)
			want = G; /* opset 18: one scale and bias per group */
		if (ox_attr_int(n, "stash_type", 1) != 1 && x->dtype != OX_F64)
			return ox_error(g, n, "stash_type %lld is not supported", (long long)ox_attr_int(n, "stash_type", 1));
	}
	if (!ox_dim_may_equal(g, s->shape.d[0], want) || !ox_dim_may_equal(g, b->shape.d[0], want)) {
		char w[128];
		ox_dim_str(g, want, w, sizeof w);
		return ox_error(g, n, "scale and bias must have %s values", w);
	}
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

static int infer_same(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	if (need_float(g, n, x->dtype))
		return -1;
	int r = x->shape.rank;
	if (n->op == OX_OP_LpNormalization) {
		int64_t p = ox_attr_int(n, "p", 2);
		if (p != 1 && p != 2)
			return ox_error(g, n, "p = %lld, only 1 and 2 are defined", (long long)p);
		if (ox_norm_axis(ox_attr_int(n, "axis", -1), r) < 0)
			return ox_error(g, n, "axis out of range");
	} else if (n->op == OX_OP_MeanVarianceNormalization) {
		const int64_t *a;
		int m = ox_ir_norm_mvn_axes(n, &a);
		for (int i = 0; i < m; i++)
			if (ox_norm_axis(a[i], r) < 0)
				return ox_error(g, n, "axis %lld out of range for rank %d", (long long)a[i], r);
	} else { /* LRN */
		if (r < 2)
			return ox_error(g, n, "input has rank %d, expected at least 2", r);
		if (ox_attr_int(n, "size", 0) < 1)
			return ox_error(g, n, "size is required and must be positive");
	}
	ox_set_out(g, n, 0, x->dtype, &x->shape);
	return 0;
}

static int infer_lppool(ox_graph *g, ox_node *n)
{
	int64_t p = ox_attr_int(n, "p", 2);
	if (p < 1)
		return ox_error(g, n, "p = %lld must be positive", (long long)p);
	return infer_pool(g, n);
}

static int infer_maxunpool(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *os = ox_in(g, n, 2);
	int r = x->shape.rank, nsp = r - 2;
	if (nsp < 1 || nsp > MAXSP)
		return ox_error(g, n, "input has rank %d, expected at least 3", r);
	if (!ox_dtype_size(x->dtype) || x->dtype == OX_STRING)
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	if (ix->dtype != OX_I64 || ix->shape.rank != r)
		return ox_error(g, n, "indices must be i64 with the input's rank");
	if (!ox_dim_may_equal(g, ix->shape.d[0], x->shape.d[0]))
		return ox_error(g, n, "indices must have the input's shape");
	for (int i = 1; i < r; i++)
		if (!ox_dim_may_equal(g, ix->shape.d[i], x->shape.d[i]))
			return ox_error(g, n, "indices must have the input's shape");
	ox_dim in[MAXSP], sp[MAXSP];
	int64_t k[MAXSP], s[MAXSP], pads[2 * MAXSP];
	for (int i = 0; i < nsp; i++)
		in[i] = x->shape.d[i + 2];
	if (ox_ir_norm_unpool(g, n, nsp, in, k, s, pads, sp))
		return -1;
	ox_shape o = {r, {x->shape.d[0], x->shape.d[1]}};
	if (os) {
		/* at least the unpooled size (the emitter checks what it reads
		 * when the program runs); no bound from the op */
		ox_sv v[OX_MAX_RANK];
		int m = shape_svals(g, n, 2, v, OX_MAX_RANK, "output_shape");
		if (m < 0)
			return -1;
		if (m != r)
			return ox_error(g, n, "output_shape has %d values, expected %d", m, r);
		for (int i = 0; i < r; i++) {
			ox_dim least = i < 2 ? x->shape.d[i] : sp[i - 2];
			if (v[i].kind == OX_SV_CONST) {
				if (v[i].c < 0 || (least >= 0 && v[i].c < least))
					return ox_error(g, n, "output_shape[%d] = %lld is smaller than the unpooled size",
							i, (long long)v[i].c);
				o.d[i] = v[i].c;
			} else if (v[i].kind == OX_SV_DIM) {
				o.d[i] = v[i].d;
			} else {
				o.d[i] = ox_dim_data(g, n->out[0], i, -1);
			}
		}
	} else {
		for (int i = 0; i < nsp; i++)
			o.d[i + 2] = sp[i];
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

static int infer_roi(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *rois = ox_in(g, n, 1);
	int align = n->op == OX_OP_RoiAlign;
	if (need_float(g, n, x->dtype))
		return -1;
	if (x->shape.rank != 4)
		return ox_error(g, n, "input has rank %d, expected 4 (N, C, H, W)", x->shape.rank);
	if (rois->dtype != x->dtype || rois->shape.rank != 2 || !ox_dim_may_equal(g, rois->shape.d[1], align ? 4 : 5))
		return ox_error(g, n, "rois must be [num_rois, %d] of the input's dtype", align ? 4 : 5);
	ox_shape o = {4, {rois->shape.d[0], x->shape.d[1]}};
	if (align) {
		ox_value *bi = ox_in(g, n, 2);
		if (!ox_dtype_is_int(bi->dtype) || bi->shape.rank != 1 || !ox_dim_may_equal(g, bi->shape.d[0], rois->shape.d[0]))
			return ox_error(g, n, "batch_indices must be an integer vector of one index per ROI");
		const char *mode = ox_attr_str(n, "mode", "avg");
		if (strcmp(mode, "avg") && strcmp(mode, "max"))
			return ox_error(g, n, "mode '%s' is not avg or max", mode);
		if (n->opset >= 16) {
			const char *ct = ox_attr_str(n, "coordinate_transformation_mode", "half_pixel");
			if (strcmp(ct, "half_pixel") && strcmp(ct, "output_half_pixel"))
				return ox_error(g, n, "coordinate_transformation_mode '%s' is not supported", ct);
		}
		o.d[2] = ox_attr_int(n, "output_height", 1);
		o.d[3] = ox_attr_int(n, "output_width", 1);
	} else {
		const int64_t *ps;
		if (ox_attr_ints(n, "pooled_shape", &ps) != 2)
			return ox_error(g, n, "pooled_shape must have 2 values");
		o.d[2] = ps[0], o.d[3] = ps[1];
	}
	if (o.d[2] < 1 || o.d[3] < 1)
		return ox_error(g, n, "output size must be positive");
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

static int infer_upsample(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	if (!norm_float(x->dtype) && !ox_dtype_is_int(x->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	const char *mode = ox_attr_str(n, "mode", "nearest");
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "bilinear"))
		return ox_error(g, n, "mode '%s' is not nearest or linear", mode);
	double sc[OX_MAX_RANK];
	int rt = ox_ir_norm_upsample_scales(g, n, r, sc);
	if (rt < 0)
		return -1;
	/* floor(in * scale); as Resize, data dims where that is known only
	 * when the program runs: bounded by the input's top times a constant
	 * scale, unbounded for scales read then */
	ox_shape o = {r, {0}};
	for (int i = 0; i < r; i++) {
		ox_dim d = x->shape.d[i];
		int64_t top = d >= 0 ? d : ox_dim_hi(g, d);
		if (rt) {
			o.d[i] = ox_dim_data(g, n->out[0], i, -1);
			continue;
		}
		if (top >= 0 && !((double)top * sc[i] < 0x1p62))
			return ox_error(g, n, "scale %g makes axis %d too long", sc[i], i);
		if (d >= 0)
			o.d[i] = (int64_t)floor((double)d * sc[i]);
		else if (sc[i] == floor(sc[i]) && sc[i] < 0x1p31)
			o.d[i] = ox_dim_mul(g, d, (int64_t)sc[i]);
		else
			o.d[i] = ox_dim_data(g, n->out[0], i, top < 0 ? -1 : (int64_t)floor((double)top * sc[i]));
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

static int infer_gridsample(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *gr = ox_in(g, n, 1);
	int r = x->shape.rank, nsp = r - 2;
	if (need_float(g, n, x->dtype))
		return -1;
	if (gr->dtype != x->dtype)
		return ox_error(g, n, "grid dtype %s differs from the input's %s", ox_dtype_name(gr->dtype),
				ox_dtype_name(x->dtype));
	if (nsp < 1 || nsp > 3 || (n->opset < 20 && nsp != 2))
		return ox_error(g, n, "%d spatial axes are not supported", nsp);
	if (gr->shape.rank != r || !ox_dim_may_equal(g, gr->shape.d[r - 1], nsp) || !ox_dim_may_equal(g, gr->shape.d[0], x->shape.d[0]))
		return ox_error(g, n, "grid must be [N, out spatial..., %d]", nsp);
	ox_shape o = {r, {x->shape.d[0], x->shape.d[1]}};
	for (int i = 0; i < nsp; i++)
		o.d[i + 2] = gr->shape.d[i + 1];
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

static int infer_affinegrid(ox_graph *g, ox_node *n)
{
	ox_value *th = ox_in(g, n, 0);
	if (need_float(g, n, th->dtype))
		return -1;
	/* size = [N, C, (D,) H, W]: N is theta's (the emitter checks what it
	 * reads when the program runs), the spatial dims data dims where not
	 * known (no bound from the op) */
	ox_sv sz[6];
	int m = shape_svals(g, n, 1, sz, 6, "size");
	if (m < 0)
		return -1;
	if (m != 4 && m != 5)
		return ox_error(g, n, "size has %d values, expected 4 (2-D) or 5 (3-D)", m);
	int nsp = m - 2;
	if (th->shape.rank != 3 || !ox_dim_may_equal(g, th->shape.d[1], nsp) || !ox_dim_may_equal(g, th->shape.d[2], nsp + 1))
		return ox_error(g, n, "theta must be [N, %d, %d]", nsp, nsp + 1);
	if ((sz[0].kind == OX_SV_CONST && (sz[0].c < 0 || !ox_dim_may_equal(g, th->shape.d[0], sz[0].c))) ||
	    (sz[0].kind == OX_SV_DIM && !ox_dim_may_equal(g, th->shape.d[0], sz[0].d))) {
		char a[64];
		ox_dim_str(g, th->shape.d[0], a, sizeof a);
		return ox_error(g, n, "theta has %s batches, size says otherwise", a);
	}
	ox_shape o = {m, {th->shape.d[0]}};
	for (int i = 0; i < nsp; i++) {
		const ox_sv *v = &sz[i + 2];
		if (v->kind == OX_SV_CONST && v->c < 1)
			return ox_error(g, n, "size[%d] = %lld must be positive", i + 2, (long long)v->c);
		o.d[i + 1] = v->kind == OX_SV_CONST ? v->c : v->kind == OX_SV_DIM ? v->d
									     : ox_dim_data(g, n->out[0], i + 1, -1);
	}
	o.d[m - 1] = nsp;
	ox_set_out(g, n, 0, th->dtype, &o);
	return 0;
}

/* Col2Im: [N, C * prod(block_shape), L] to [N, C, image_shape...]. With
 * both shapes constant the blocks per axis are known (their product must
 * be L); else the image dims are data dims (no bound from the op), C one
 * too when the block shape is read when the program runs (at most the
 * input's dim 1), and the emitter checks the rest. */
static int infer_col2im(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *is = ox_in(g, n, 1);
	if (!norm_float(x->dtype) && !ox_dtype_is_int(x->dtype))
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	if (x->shape.rank != 3)
		return ox_error(g, n, "input must be [N, C * prod(block_shape), L]");
	int64_t nsp = is->shape.rank == 1 ? ox_dim_eval(g, is->shape.d[0]) : -1;
	if (nsp < 1 || nsp > MAXSP)
		return ox_error(g, n, "image_shape must be a vector of at most %d values, its length known at "
				"compile time", MAXSP);
	ox_sv im[MAXSP], bk[MAXSP];
	int mi = shape_svals(g, n, 1, im, MAXSP, "image_shape");
	int mb = mi < 0 ? -1 : shape_svals(g, n, 2, bk, MAXSP, "block_shape");
	if (mi < 0 || mb < 0)
		return -1;
	if (mi != nsp || mb != nsp)
		return ox_error(g, n, "image_shape and block_shape must both have %d values", (int)nsp);
	int64_t img[MAXSP], blk[MAXSP], dil[MAXSP], pads[2 * MAXSP], str[MAXSP], ncol[MAXSP];
	if (ox_ir_norm_col2im_attrs(g, n, (int)nsp, dil, pads, str))
		return -1;
	int iknown = 1, bknown = 1;
	for (int i = 0; i < nsp; i++) {
		iknown &= im[i].kind == OX_SV_CONST;
		bknown &= bk[i].kind == OX_SV_CONST;
		img[i] = im[i].c, blk[i] = bk[i].c;
		if ((im[i].kind == OX_SV_CONST && im[i].c < 1) || (bk[i].kind == OX_SV_CONST && bk[i].c < 1))
			return ox_error(g, n, "image_shape and block_shape must be positive");
	}
	ox_dim C1 = x->shape.d[1], L1 = x->shape.d[2];
	ox_shape o = {(int)nsp + 2, {x->shape.d[0]}};
	if (bknown) {
		int64_t bl = 1;
		for (int i = 0; i < nsp; i++)
			bl *= blk[i];
		if (C1 >= 0 && C1 % bl)
			return ox_error(g, n, "input dim 1 = %lld is not a multiple of the block size %lld",
					(long long)C1, (long long)bl);
		o.d[1] = ox_dim_div(g, C1, bl);
	} else {
		o.d[1] = ox_dim_data(g, n->out[0], 1, C1 >= 0 ? C1 : ox_dim_hi(g, C1));
	}
	if (iknown && bknown) {
		if (col2im_cols(g, n, (int)nsp, img, blk, dil, pads, str, ncol))
			return -1;
		int64_t L = 1;
		for (int i = 0; i < nsp; i++)
			L *= ncol[i];
		if (!ox_dim_may_equal(g, L1, L)) {
			char a[64];
			ox_dim_str(g, L1, a, sizeof a);
			return ox_error(g, n, "input dim 2 = %s, the blocks give %lld", a, (long long)L);
		}
	}
	for (int i = 0; i < nsp; i++)
		o.d[i + 2] = im[i].kind == OX_SV_CONST ? im[i].c : im[i].kind == OX_SV_DIM ? im[i].d
										  : ox_dim_data(g, n->out[0], i + 2, -1);
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

static int infer_centercroppad(ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0);
	int r = x->shape.rank;
	if (!ox_dtype_size(x->dtype) || x->dtype == OX_STRING)
		return ox_error(g, n, "dtype %s is not supported", ox_dtype_name(x->dtype));
	int64_t axes[OX_MAX_RANK];
	ox_sv sh[OX_MAX_RANK];
	int m = shape_svals(g, n, 1, sh, OX_MAX_RANK, "shape");
	if (m < 0)
		return -1;
	const int64_t *a;
	int na = ox_attr_ints(n, "axes", &a);
	if (na < 0) {
		na = r;
		for (int i = 0; i < r; i++)
			axes[i] = i;
	} else {
		for (int i = 0; i < na; i++) {
			axes[i] = ox_norm_axis(a[i], r);
			if (axes[i] < 0)
				return ox_error(g, n, "axis %lld out of range for rank %d", (long long)a[i], r);
		}
	}
	if (m != na)
		return ox_error(g, n, "shape has %d values for %d axes", m, na);
	/* a dim read when the program runs is a data dim: cropped it is at
	 * most the input's, but padded the op gives no bound */
	ox_shape o = x->shape;
	for (int i = 0; i < na; i++) {
		if (sh[i].kind == OX_SV_CONST && sh[i].c < 0)
			return ox_error(g, n, "shape[%d] = %lld is negative", i, (long long)sh[i].c);
		o.d[axes[i]] = sh[i].kind == OX_SV_CONST ? sh[i].c : sh[i].kind == OX_SV_DIM ? sh[i].d
										 : ox_dim_data(g, n->out[0], (int)axes[i], -1);
	}
	ox_set_out(g, n, 0, x->dtype, &o);
	return 0;
}

int infer_norm(ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_InstanceNormalization:
	case OX_OP_GroupNormalization:
		return infer_chan_norm(g, n);
	case OX_OP_LpNormalization:
	case OX_OP_MeanVarianceNormalization:
	case OX_OP_LRN:
		return infer_same(g, n);
	case OX_OP_LpPool:
		return infer_lppool(g, n);
	case OX_OP_MaxUnpool:
		return infer_maxunpool(g, n);
	case OX_OP_MaxRoiPool:
	case OX_OP_RoiAlign:
		return infer_roi(g, n);
	case OX_OP_Upsample:
		return infer_upsample(g, n);
	case OX_OP_GridSample:
		return infer_gridsample(g, n);
	case OX_OP_AffineGrid:
		return infer_affinegrid(g, n);
	case OX_OP_Col2Im:
		return infer_col2im(g, n);
	case OX_OP_CenterCropPad:
		return infer_centercroppad(g, n);
	}
	return ox_error(g, n, "not a normalization or sampling op");
}
