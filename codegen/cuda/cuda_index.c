/* cuda_index.c: CUDA kernels of the data ops that move elements by
 * index (--target cuda): the copy plans of opt/plan.c (Slice, Transpose,
 * Expand, Tile and the like), Pad, Shape, Gather, GatherElements, TopK,
 * Concat and Split (at the end of this file); and, constant shapes, plain
 * layout, the scatters, GatherND and NonMaxSuppression:
 * ScatterND, ScatterElements (and the old Scatter), TensorScatter and
 * GatherND, each the C target's loop of codegen/c/emit_index.c spread over
 * threads; NonMaxSuppression (emit_nms) sorted and taken greedily by a
 * block per (batch, class).
 *
 * A scatter copies its data to the output (cudaMemcpyAsync on the stream),
 * then a kernel writes the updates. Without a reduction a thread writes one
 * update element: where indices repeat, which update lands is left open, as
 * the ONNX spec leaves it. With one (add, mul, max, min) a thread owns the
 * output elements that updates can meet at (ScatterND: one position in the
 * slice; ScatterElements: one line along the axis) and applies the updates
 * in the C target's order: the results are the C target's bit for bit. An
 * index is wrapped once when negative and checked as the C target checks
 * it; out of range sets the run's status word (PREFIX_ERR_INDEX), as does
 * TensorScatter's linear write past the cache. Anything else declines: the
 * C target's function runs on the device then.
 */
#include "cuda_kernels.h"
#include "../../opt/opt.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <string.h>

/* a plain value of constant shape, of a type with a size */
static int fixed(ox_graph *g, const ox_value *v)
{
	return v && v->has_shape && !v->layout && !ox_shape_is_rt(g, &v->shape) && v->dtype != OX_STRING &&
	       ox_dtype_size(v->dtype);
}

static int index_type(const ox_value *v)
{
	return v && (v->dtype == OX_I32 || v->dtype == OX_I64);
}

static int64_t prod(const ox_shape *s, int from, int to)
{
	int64_t p = 1;
	for (int k = from; k < to; k++)
		p *= s->d[k];
	return p;
}

/* the kernel, its copy of the data first for a scatter, its launch */
static void finish(ox_cg *cg, ox_graph *g, ox_node *n, const char *kname, ox_buf *t, const char *params,
		   const int64_t *dims, int r, const char *body, const char *ptrs, int scatter)
{
	const ox_value *x = ox_in(g, n, 0);
	ox_cu_index_kernel(t, kname, params, dims, r, body);
	if (scatter)
		ox_cg_printf(cg, "\tcudaMemcpyAsync(out0, in0, %lld, cudaMemcpyDeviceToDevice, ox_st);\n",
			     (long long)(ox_shape_numel(&x->shape) * (int64_t)ox_dtype_size(x->dtype)));
	ox_cu_index_launch(cg, kname, dims, r, ptrs, NULL);
	ox_cu_finish(cg, kname, t);
}

/* ScatterND (scatter) and GatherND: indices [P.., last] pick slices of R
 * elements; GatherND's batch dims b: the tuples of batch entry p / G in
 * its block of BS elements */
static int emit_nd(ox_cg *cg, ox_graph *g, ox_node *n, int scatter)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *u = scatter ? ox_in(g, n, 2) : NULL;
	const ox_value *y = ox_out(g, n, 0);
	if (!fixed(g, x) || !fixed(g, ix) || !index_type(ix) || !fixed(g, y) || (scatter && !fixed(g, u)) ||
	    y->dtype != x->dtype)
		return 1;
	const char *red = scatter ? ox_attr_str(n, "reduction", "none") : "none";
	const int none = !strcmp(red, "none");
	if (!none && !ox_cu_plain_num(x->dtype))
		return 1;
	const int q = ix->shape.rank, r = x->shape.rank;
	const int64_t b = scatter ? 0 : ox_attr_int(n, "batch_dims", 0);
	if (q < 1 || b < 0)
		return 1;
	const int64_t last = ix->shape.d[q - 1];
	if (last < 0 || b + last > r)
		return 1;
	const int64_t P = prod(&ix->shape, 0, q - 1), G = prod(&ix->shape, (int)b, q - 1);
	const int64_t R = prod(&x->shape, (int)(b + last), r), BS = prod(&x->shape, (int)b, r);
	for (int64_t j = 0; j < last; j++)
		if (!x->shape.d[b + j])
			return 1; /* (the C target's error) */
	if (P * R == 0 || (scatter && ox_shape_numel(&u->shape) != P * R) || ox_shape_numel(&y->shape) != (scatter ? BS : P * R))
		return 1; /* (a copy at most: the C function) */
	/* the slice's offset from tuple p */
	ox_buf off = {0};
	const int lvl = none ? 1 : 2;
	if (G == P)
		ox_buf_printf(&off, "%.*s$I off = 0;\n", lvl, "\t\t");
	else
		ox_buf_printf(&off, "%.*s$I off = p / %lld$L * %lld$L;\n", lvl, "\t\t", (long long)G, (long long)BS);
	for (int64_t j = 0; j < last; j++) {
		char src[64], var[32];
		ox_cg_snprintf(src, sizeof src, "ind[p * %lld$L + %lld]", (long long)last, (long long)j);
		ox_cg_snprintf(var, sizeof var, "j%lld", (long long)j);
		char dj[32];
		ox_cg_snprintf(dj, sizeof dj, "%lld$L", (long long)x->shape.d[b + j]);
		ox_cu_index_check(cg, &off, lvl, var, src, dj);
		ox_buf_printf(&off, "%.*soff += %s * %lld$L;\n", lvl, "\t\t", var,
			      (long long)prod(&x->shape, (int)(b + j + 1), r));
	}
	ox_buf body = {0};
	char st[2400];
	int64_t dims[2] = {P, R};
	if (!scatter) {
		ox_buf_printf(&body, "\tconst $I p = i0;\n%s\ty[i] = x[off + i1];\n", off.s);
	} else if (none) {
		ox_cg_combine(st, sizeof st, x->dtype, red, "y[off + i1]", "u[i]");
		ox_buf_printf(&body, "\tconst $I p = i0;\n%s\t%s\n", off.s, st);
	} else {
		char src[64];
		ox_cg_snprintf(src, sizeof src, "u[p * %lld$L + i]", (long long)R);
		ox_cg_combine(st, sizeof st, x->dtype, red, "y[off + i]", src);
		ox_buf_printf(&body, "\tfor ($I p = 0; p < %lld$L; p++) {\n%s\t\t%s\n\t}\n", (long long)P, off.s, st);
		dims[0] = 1;
	}
	ox_buf_free(&off);
	char kname[200], params[320];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(x->dtype), *it = ox_cg_ctype(ix->dtype);
	if (scatter)
		ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ ind, const %s *__restrict__ u, %s *__restrict__ y, int *st",
			 it, ty, ty);
	else
		ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ ind, %s *__restrict__ y, int *st",
			 ty, it, ty);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s, %lld index tuples of %lld, slices of %lld: %s */\n", cg->fname, n->optype, (long long)P,
		      (long long)last, (long long)R,
		      none ? "a thread per element" : "a thread per slice position, the updates in order");
	finish(cg, g, n, kname, &t, params, dims, 2, body.s, scatter ? "in1, in2, out0, ox_status" : "in0, in1, out0, ox_status",
	       scatter);
	ox_buf_free(&body);
	return 0;
}

/* ScatterElements and Scatter: update o (of the indices' shape) lands at
 * its own coordinates with index[o] along the axis */
static int emit_elements(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *u = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int axis;
	if (!fixed(g, x) || !fixed(g, ix) || !index_type(ix) || !fixed(g, u) || !fixed(g, y) || y->dtype != x->dtype ||
	    ox_index_axis(g, n, &axis) || axis < 0)
		return 1;
	const char *red = n->op == OX_OP_Scatter ? "none" : ox_attr_str(n, "reduction", "none");
	const int none = !strcmp(red, "none"), r = x->shape.rank;
	if ((!none && !ox_cu_plain_num(x->dtype)) || ix->shape.rank != r || u->shape.rank != r || r < 1)
		return 1;
	for (int k = 0; k < r; k++)
		if (u->shape.d[k] != ix->shape.d[k] || (k != axis && ix->shape.d[k] > x->shape.d[k]))
			return 1; /* (the C target's errors) */
	const int64_t D = x->shape.d[axis], L = ix->shape.d[axis];
	if (!ox_shape_numel(&ix->shape) || !D)
		return 1;
	/* a thread per update (none), or per line along the axis */
	int64_t dims[OX_MAX_RANK];
	for (int k = 0; k < r; k++)
		dims[k] = none || k != axis ? ix->shape.d[k] : 1;
	ox_buf body = {0}, place = {0};
	const int lvl = none ? 1 : 2;
	const int64_t ist = prod(&ix->shape, axis + 1, r);
	if (none) {
		ox_buf_puts(&body, "\tconst $I o = i;\n");
	} else {
		ox_buf_printf(&body, "\tfor ($I t = 0; t < %lld$L; t++) {\n\t\tconst $I o = i", (long long)L);
		/* i over dims (the axis of extent 1): i's axis step is the line's */
		if (ox_shape_numel(&ix->shape) / L != 1)
			ox_buf_printf(&body, " / %lld$L * %lld$L + i %% %lld$L", (long long)ist, (long long)(ist * L), (long long)ist);
		ox_buf_printf(&body, " + t * %lld$L;\n", (long long)ist);
	}
	char ds[32];
	ox_cg_snprintf(ds, sizeof ds, "%lld$L", (long long)D);
	ox_cu_index_check(cg, &body, lvl, "j", "ind[o]", ds);
	for (int k = 0; k < r; k++) {
		char v[16];
		ox_cg_snprintf(v, sizeof v, "i%d", k);
		if (k == axis || dims[k] > 1)
			ox_buf_printf(&place, "%s%s * %lld$L", place.len ? " + " : "", k == axis ? "j" : v,
				      (long long)prod(&x->shape, k + 1, r));
	}
	char st[2400];
	ox_cg_combine(st, sizeof st, x->dtype, red, "y[p]", "u[o]");
	ox_buf_printf(&body, "%.*sconst $I p = %s;\n%.*s%s\n%s", lvl, "\t\t", place.s, lvl, "\t\t", st, none ? "" : "\t}\n");
	ox_buf_free(&place);
	char kname[200], params[320];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(x->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ ind, const %s *__restrict__ u, %s *__restrict__ y, int *st",
		 ox_cg_ctype(ix->dtype), ty, ty);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s along axis %d of %lld, reduction %s: %s */\n", cg->fname, n->optype, axis, (long long)D,
		      red, none ? "a thread per update" : "a thread per line along the axis, the updates in order");
	finish(cg, g, n, kname, &t, params, dims, r, body.s, "in1, in2, out0, ox_status", 1);
	ox_buf_free(&body);
	return 0;
}

/* TensorScatter: batch b's update rows s land at write_indices[b] + s
 * along the sequence axis (mod its length when circular) */
static int emit_tensorscatter(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *u = ox_in(g, n, 1), *w = ox_in(g, n, 2), *y = ox_out(g, n, 0);
	int axis;
	if (!fixed(g, x) || !fixed(g, u) || !fixed(g, y) || (w && (!fixed(g, w) || w->dtype != OX_I64)) ||
	    ox_index_axis(g, n, &axis) || axis < 1 || u->shape.rank != x->shape.rank)
		return 1;
	const int r = x->shape.rank, circ = !strcmp(ox_attr_str(n, "mode", "linear"), "circular");
	for (int k = 0; k < r; k++)
		if (k == axis ? u->shape.d[k] > x->shape.d[k] : u->shape.d[k] != x->shape.d[k])
			return 1; /* (the C target's error) */
	if (w && (w->shape.rank != 1 || w->shape.d[0] != x->shape.d[0]))
		return 1;
	const int64_t B = x->shape.d[0], mid = prod(&x->shape, 1, axis), L = x->shape.d[axis], S = u->shape.d[axis];
	const int64_t inner = prod(&x->shape, axis + 1, r);
	if (!ox_shape_numel(&u->shape))
		return 1;
	ox_buf body = {0};
	ox_buf_printf(&body, "\tconst int64_t w0 = %s;\n", w ? "wi[i0]" : "0");
	if (circ) {
		ox_buf_printf(&body, "\tint64_t t = (w0 %% %lld + i2) %% %lld;\n\tif (t < 0)\n\t\tt += %lld;\n", (long long)L,
			      (long long)L, (long long)L);
	} else if (w) {
		ox_cg_fails(cg, OX_CG_FAIL_INDEX);
		ox_buf_printf(&body, "\tif (w0 < 0 || w0 > %lld) {\n\t\tatomicCAS(st, 0, %s_ERR_INDEX);\n\t\treturn;\n\t}\n"
				     "\tconst int64_t t = w0 + i2;\n",
			      (long long)(L - S), cg->prefix_upper);
	} else {
		ox_buf_puts(&body, "\tconst int64_t t = i2;\n");
	}
	ox_buf_printf(&body, "\ty[((i0 * %lld$L + i1) * %lld$L + t) * %lld$L + i3] = u[i];\n", (long long)mid, (long long)L,
		      (long long)inner);
	char kname[200], params[320];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(x->dtype);
	const int checks = w && !circ; /* (the status word only then) */
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ u, const int64_t *__restrict__ wi, %s *__restrict__ y%s", ty,
		 ty, checks ? ", int *st" : "");
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: TensorScatter along axis %d of %lld, %s: a thread per update element */\n", cg->fname,
		      axis, (long long)L, circ ? "circular" : "linear");
	int64_t dims[4] = {B, mid, S, inner};
	finish(cg, g, n, kname, &t, params, dims, 4, body.s,
	       checks ? "in1, in2, out0, ox_status" : w ? "in1, in2, out0" : "in1, nullptr, out0", 1);
	ox_buf_free(&body);
	return 0;
}

/* NonMaxSuppression, constant shapes, f32/f16/bf16, the C target's order
 * and arithmetic (templates/nms.c's box and IoU functions, on the device).
 * NAME_sel, a block of 256 per (batch, class) pair: each candidate's key
 * (the score's order bits, descending, NaN last; then its box index; boxes
 * the score threshold excludes last) in the scratch, sorted bitonically;
 * then the candidates taken greedily in chunks of 256: a thread checks its
 * candidate against the boxes kept so far, the chunk's own suppressions
 * are a bit matrix in shared memory, which thread 0 walks in order, keeping
 * at most max_output_boxes_per_class. NAME_out, one block: the pairs' rows
 * at their offsets (batch, then class order), the count into the dims'
 * device copy, PREFIX_ERR_SHAPE past what the output holds; the host waits
 * for the count (ox_sync_dims: no CUDA Graph). Where the C target's
 * function ran on one device thread, O(N log N + N K) steps in a row. */
static int emit_nms(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *bx = ox_in(g, n, 0), *sc = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	const int dt = bx->dtype;
	if (!y || !n->scratch || !fixed(g, bx) || !fixed(g, sc) || bx->shape.rank != 3 || sc->shape.rank != 3 ||
	    (dt != OX_F32 && dt != OX_F16 && dt != OX_BF16) || sc->dtype != dt)
		return 1;
	const int64_t B = bx->shape.d[0], N = bx->shape.d[1], C = sc->shape.d[1];
	if (bx->shape.d[2] != 4 || sc->shape.d[0] != B || sc->shape.d[2] != N || N <= 0 || N > INT32_MAX || B * C <= 0)
		return 1; /* (the C target's checks, or nothing to do) */
	const ox_dim num = y->shape.d[0];
	const int slot = ox_cg_dim_slot(cg, num);
	const ox_tensor *t = ox_in_const(g, n, 2);
	if (num == 0 || slot < 0 || !ox_in(g, n, 2))
		return 1;
	int64_t K = N; /* at most K kept per pair */
	if (t) {
		const int64_t mo = ox_tensor_get_i64(t, 0);
		K = mo < 0 ? 0 : mo < N ? mo : N;
	}
	const int64_t P = B * C;
	int64_t kofs, cofs, oofs;
	if (K <= 0 || ox_shape_numel(&ox_out(g, n, n->nout - 1)->shape) < ox_opt_nms_gpu_scratch(P, N, K, &kofs, &cofs, &oofs))
		return 1;
	const int64_t np2 = kofs / (P * 8); /* (N rounded up to a power of 2) */
	ox_dim rest[OX_CG_MOST_REST];
	int64_t caps[OX_CG_MOST_REST];
	int nrest;
	const int64_t most = ox_cg_most(g, n, num, rest, caps, &nrest); /* (the rows the output holds) */
	if (nrest)
		return 1;
	if (ox_cg_use(cg, "msort", OX_I64) || ox_cg_use(cg, "nms", dt))
		return ox_error(g, n, "kernel template templates/nms.c is missing");
	const char *T = ox_cg_ctype(dt), *S = ox_cg_sfx(dt), *f = cg->fname;
	const int has_iou = n->nin > 3 && n->in[3] >= 0, has_sthr = n->nin > 4 && n->in[4] >= 0;
	const int center = ox_attr_int(n, "center_point_box", 0) != 0;
	char per[96];
	if (t)
		ox_cg_snprintf(per, sizeof per, "%lld", (long long)K);
	else
		ox_cg_snprintf(per, sizeof per, "mo[0] < 0 ? 0 : mo[0] > %lld ? %lld : (int)mo[0]", (long long)N, (long long)N);
	ox_buf k = {.ix = "long"};
	ox_buf_printf(&k, "/* %s: NonMaxSuppression of boxes [%lld, %lld, 4], scores [%lld, %lld, %lld], a block\n"
			  " * per (batch, class) pair: its candidates sorted, then taken greedily in chunks of 256 */\n",
		      f, (long long)B, (long long)N, (long long)B, (long long)C, (long long)N);
	ox_buf_printf(&k, "__global__ void __launch_bounds__(256) %s_sel(const int *st, const %s *__restrict__ boxes,\n"
			  "\t\tconst %s *__restrict__ scores, const int64_t *__restrict__ mo, const float *__restrict__ thr,\n"
			  "\t\tconst float *__restrict__ sthr, unsigned char *__restrict__ scr)\n{\n",
		      f, T, T);
	ox_buf_printf(&k, "\tif (*st)\n"
			  "\t\treturn;\n"
			  "\tconst int p = blockIdx.x, tid = threadIdx.x;\n"
			  "\tconst %s *s = scores + ($I)p * %lld$L;\n"
			  "\tconst %s *bx = boxes + ($I)(p / %lld) * %lld$L;\n"
			  "\tunsigned long long *key = (unsigned long long *)(void *)scr + ($I)p * %lld$L;\n"
			  "\tint *kp = (int *)(void *)(scr + %lld$L) + ($I)p * %lld$L;\n",
		      T, (long long)N, T, (long long)C, (long long)(N * 4), (long long)np2, (long long)kofs,
		      (long long)K);
	ox_buf_printf(&k, "\tconst float iou = %s;\n"
			  "\tconst int per = %s;\n"
			  "\t(void)mo, (void)thr, (void)sthr;\n",
		      has_iou ? "thr[0]" : "0.0f", per);
	ox_buf_puts(&k, "\t__shared__ int m, nk;\n\t__shared__ int cidx[256];\n\t__shared__ unsigned char gone[256];\n"
			"\t__shared__ unsigned int mask[256][8];\n"
			"\tif (tid == 0)\n\t\tm = 0, nk = 0;\n\t__syncthreads();\n");
	/* keys: ascending = score descending (-0 as 0, NaN last), then box order */
	ox_buf_printf(&k, "\tfor (int i = tid; i < %lld; i += 256) {\n"
			  "\t\tunsigned long long q = ~0ull;\n"
			  "\t\tif (i < %lld) {\n"
			  "\t\t\tconst float v = ox_ld_%s(s[i]);\n"
			  "\t\t\tif (%s) {\n"
			  "\t\t\t\tunsigned int u = v != v ? 0u : __float_as_uint(v == 0.0f ? 0.0f : v);\n"
			  "\t\t\t\tif (v == v)\n\t\t\t\t\tu = u & 0x80000000u ? ~u : u | 0x80000000u;\n"
			  "\t\t\t\tq = (unsigned long long)(0xffffffffu - u) << 32 | (unsigned int)i;\n"
			  "\t\t\t\tatomicAdd(&m, 1);\n\t\t\t}\n\t\t}\n\t\tkey[i] = q;\n\t}\n\t__syncthreads();\n",
		      (long long)np2, (long long)N, S, has_sthr ? "v > sthr[0]" : "1");
	ox_buf_printf(&k, "\tfor (int size = 2; size <= %lld; size <<= 1)\n"
			  "\t\tfor (int j = size >> 1; j > 0; j >>= 1) {\n"
			  "\t\t\tfor (int i = tid; i < %lld; i += 256) {\n"
			  "\t\t\t\tconst int lo = 2 * i - (i & (j - 1)), hi = lo + j;\n"
			  "\t\t\t\tconst unsigned long long a = key[lo], c = key[hi];\n"
			  "\t\t\t\tif ((a > c) == ((lo & size) == 0))\n\t\t\t\t\tkey[lo] = c, key[hi] = a;\n"
			  "\t\t\t}\n\t\t\t__syncthreads();\n\t\t}\n",
		      (long long)np2, (long long)(np2 / 2));
	ox_buf_printf(&k, "\tfor (int base = 0; base < m && nk < per; base += 256) {\n"
			  "\t\tconst int len = m - base < 256 ? m - base : 256;\n"
			  "\t\tint ci = -1, drop = 1;\n"
			  "\t\tif (tid < len) {\n"
			  "\t\t\tci = (int)(key[base + tid] & 0xffffffffu), drop = 0;\n"
			  "\t\t\tfor (int q = 0; q < nk && !drop; q++)\n"
			  "\t\t\t\tdrop = ox_nms_suppress_%s(bx + ($I)kp[q] * 4, bx + ($I)ci * 4, %d, iou);\n"
			  "\t\t}\n"
			  "\t\tcidx[tid] = ci, gone[tid] = (unsigned char)drop;\n"
			  "\t\tfor (int w = 0; w < 8; w++)\n\t\t\tmask[tid][w] = 0u;\n"
			  "\t\t__syncthreads();\n"
			  "\t\tfor (int t2 = tid + 1; !drop && t2 < len; t2++)\n"
			  "\t\t\tif (!gone[t2] && ox_nms_suppress_%s(bx + ($I)ci * 4, bx + ($I)cidx[t2] * 4, %d, iou))\n"
			  "\t\t\t\tmask[tid][t2 >> 5] |= 1u << (t2 & 31);\n"
			  "\t\t__syncthreads();\n"
			  "\t\tif (tid == 0) {\n"
			  "\t\t\tunsigned int rm[8] = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};\n"
			  "\t\t\tint c = nk;\n"
			  "\t\t\tfor (int q = 0; q < len && c < per; q++) {\n"
			  "\t\t\t\tif (gone[q] || (rm[q >> 5] >> (q & 31) & 1u))\n\t\t\t\t\tcontinue;\n"
			  "\t\t\t\tkp[c++] = cidx[q];\n"
			  "\t\t\t\tfor (int w = 0; w < 8; w++)\n\t\t\t\t\trm[w] |= mask[q][w];\n"
			  "\t\t\t}\n\t\t\tnk = c;\n\t\t}\n\t\t__syncthreads();\n\t}\n"
			  "\tif (tid == 0)\n\t\t((int *)(void *)(scr + %lld$L))[p] = nk;\n}\n\n",
		      S, center, S, center, (long long)cofs);
	/* the rows at their offsets, the count */
	ox_buf_printf(&k, "__global__ void __launch_bounds__(256) %s_out(int *st, int64_t *dd, unsigned char *__restrict__ scr,\n"
			  "\t\tint64_t *__restrict__ sel)\n"
			  "{\n"
			  "\tif (*st)\n"
			  "\t\treturn;\n"
			  "\tconst int *kept = (const int *)(const void *)(scr + %lld$L), *cnt = (const int *)(const void *)(scr + %lld$L);\n"
			  "\tint *off = (int *)(void *)(scr + %lld$L);\n"
			  "\tif (threadIdx.x == 0) {\n"
			  "\t\tint run = 0;\n"
			  "\t\tfor (int p = 0; p < %lld; p++)\n"
			  "\t\t\toff[p] = run, run += cnt[p];\n"
			  "\t\toff[%lld] = run;\n"
			  "\t}\n"
			  "\t__syncthreads();\n"
			  "\tfor (int p = threadIdx.x; p < %lld; p += blockDim.x)\n"
			  "\t\tfor (int r = 0; r < cnt[p] && off[p] + r < %lld; r++) {\n"
			  "\t\t\tint64_t *o = sel + ($I)(off[p] + r) * 3;\n",
		      f, (long long)kofs, (long long)cofs, (long long)oofs, (long long)P, (long long)P, (long long)P,
		      (long long)most);
	ox_buf_printf(&k, "\t\t\to[0] = p / %lld, o[1] = p %% %lld, o[2] = kept[($I)p * %lld$L + r];\n"
			  "\t\t}\n"
			  "\tif (threadIdx.x == 0) {\n"
			  "\t\tdd[%d] = off[%lld];\n"
			  "\t\tif (off[%lld] > %lld)\n"
			  "\t\t\tatomicCAS(st, 0, %s_ERR_SHAPE); /* more than the code was planned for */\n"
			  "\t}\n"
			  "}\n",
		      (long long)C, (long long)C, (long long)K, slot, (long long)P, (long long)P, (long long)most,
		      cg->prefix_upper);
	char key[220];
	ox_cg_snprintf(key, sizeof key, "%s_sel", f);
	ox_cg_helper(cg, key, k.s);
	ox_buf_free(&k);
	const int sx = n->nout - 1;
	ox_cg_printf(cg, "\tint rc;\n");
	ox_cg_printf(cg, "\tOX_LAUNCH(%s_sel, %lld, 256, 0, ox_st, ox_status, in0, in1, %s, %s, %s, (unsigned char *)out%d);\n", f,
		     (long long)P, t ? "nullptr" : "in2", has_iou ? "in3" : "nullptr", has_sthr ? "in4" : "nullptr", sx);
	ox_cg_printf(cg, "\tOX_LAUNCH(%s_out, 1, 256, 0, ox_st, ox_status, ox_dd, (unsigned char *)out%d, out0);\n", f, sx);
	ox_cg_printf(cg, "\tif ((rc = ox_sync_dims(ox_st)))\n\t\treturn rc;\n\treturn 0;\n");
	cg->fails_shape = 1;
	cg->cu_rc = cg->cu_sync = 1;
	return 0;
}

int ox_cu_emit_index(ox_cg *cg, ox_graph *g, ox_node *n)
{
	switch (n->op) {
	case OX_OP_NonMaxSuppression:
		return emit_nms(cg, g, n);
	case OX_OP_ScatterND:
		return emit_nd(cg, g, n, 1);
	case OX_OP_GatherND:
		return emit_nd(cg, g, n, 0);
	case OX_OP_ScatterElements:
	case OX_OP_Scatter:
		return emit_elements(cg, g, n);
	case OX_OP_TensorScatter:
		return emit_tensorscatter(cg, g, n);
	}
	return 1;
}

/* Transpose, Slice, Expand, Tile: the copy plan of ir/infer_data.c (the
 * C target's loops render the same plan), linear axes; run-time extents,
 * strides and offsets are the kernel's parameters */
int ox_cu_emit_plan(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_plan p;
	if (ox_ir_data_plan(g, n, &p))
		return 1;
	ox_dim dims[2 * OX_MAX_RANK];
	ox_cu_rt R = {g, 0, {0}};
	char b1[32], b2[32];
	ox_buf body = {0}, in = {0}, out = {0};
	if (!ox_cu_rt_dim(&R, p.ib, b1, sizeof b1) || !ox_cu_rt_dim(&R, p.ob, b2, sizeof b2))
		goto decline;
	ox_buf_puts(&in, b1);
	ox_buf_puts(&out, b2);
	for (int k = 0; k < p.nax; k++) {
		const ox_plan_axis *a = &p.ax[k];
		if (a->kind != OX_PLAN_LIN || a->bc)
			goto decline;
		dims[k] = a->n;
		if (a->is) {
			if (!ox_cu_rt_dim(&R, a->is, b1, sizeof b1))
				goto decline;
			ox_buf_printf(&in, " %s i%d * %s", a->neg ? "-" : "+", k, b1);
		}
		if (a->os) {
			if (!ox_cu_rt_dim(&R, a->os, b2, sizeof b2))
				goto decline;
			ox_buf_printf(&out, " + i%d * %s", k, b2);
		}
	}
	const char *ty = ox_cg_ctype(g->vals[n->out[0]].dtype);
	ox_buf_printf(&body, "\ty[%s] = x[%s];\n", out.s, in.s);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", ty, ty);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: %s as a copy plan of %d axes */\n", cg->fname, n->optype, p.nax);
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, p.nax, body.s, &R)) {
		ox_buf_free(&t);
		goto decline;
	}
	ox_cu_index_launch(cg, kname, dims, p.nax, "in0, out0", &R);
	ox_cu_finish(cg, kname, &t);
	ox_buf_free(&body), ox_buf_free(&in), ox_buf_free(&out);
	return 0;
decline:
	ox_buf_free(&body), ox_buf_free(&in), ox_buf_free(&out);
	return 1;
}

/* Pad (constant, edge, reflect, wrap): a thread per output element. Axis
 * k's input index c = i_k - a folded into [0, m) (ox_ir_data_plan's Pad
 * kinds, the C target's emit_fold) or, for a constant-mode axis, the pad
 * value outside [0, m); then c + lo. Run-time dims are the kernel's
 * parameters. The value: in2[0] (a device pointer) or the constant. An
 * axis the run could leave empty (the C target checks it) declines. */
int ox_cu_emit_pad(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	ox_plan p;
	if (!x || !y || x->layout || y->layout || y->dtype == OX_STRING || !ox_dtype_size(y->dtype) ||
	    ox_ir_data_plan(g, n, &p) || p.nax != y->shape.rank || p.nax < 1)
		return 1;
	const int r = p.nax, cmode = !strcmp(ox_attr_str(n, "mode", "constant"), "constant");
	ox_cu_rt R = {g, 0, {0}};
	ox_buf body = {0}, src = {0}, oob = {0};
	char b[6][32];
	int64_t lo, hi;
	for (int k = 0; k < r; k++) {
		const ox_plan_axis *q = &p.ax[k];
		if (ox_dim_range(g, q->m, &lo, &hi) || lo < (q->kind == OX_PLAN_LIN ? 0 : 1))
			goto decline;
		/* (m - 1 and 2 (m - 1) only where a fold reads them: an unused
		 * run-time one would be a parameter too) */
		const int fold = q->kind != OX_PLAN_LIN;
		if (!ox_cu_rt_dim(&R, q->a, b[0], sizeof b[0]) || !ox_cu_rt_dim(&R, q->m, b[1], sizeof b[1]) ||
		    !ox_cu_rt_dim(&R, q->lo, b[2], sizeof b[2]) || !ox_cu_rt_dim(&R, q->is, b[3], sizeof b[3]) ||
		    (fold && !ox_cu_rt_dim(&R, ox_dim_sub(g, q->m, 1), b[4], sizeof b[4])) ||
		    (fold && !ox_cu_rt_dim(&R, ox_dim_mul(g, ox_dim_sub(g, q->m, 1), 2), b[5], sizeof b[5])))
			goto decline;
		ox_buf_printf(&body, "\t$I c%d = i%d - %s;\n", k, k, b[0]);
		if (q->kind == OX_PLAN_EDGE)
			ox_buf_printf(&body, "\tc%d = c%d < 0 ? 0 : c%d >= %s ? %s : c%d;\n", k, k, k, b[1], b[4], k);
		else if (q->kind == OX_PLAN_WRAP)
			ox_buf_printf(&body, "\tc%d = (c%d %% %s + %s) %% %s;\n", k, k, b[1], b[1], b[1]);
		else if (q->kind == OX_PLAN_REFLECT) {
			ox_buf_printf(&body, "\tif (%s > 1) {\n"
					     "\t\tc%d = (c%d %% %s + %s) %% %s; /* reflect */\n"
					     "\t\tif (c%d >= %s)\n",
				      b[1], k, k, b[5], b[5], b[5], k, b[1]);
			ox_buf_printf(&body, "\t\t\tc%d = %s - c%d;\n"
					     "\t} else {\n"
					     "\t\tc%d = 0;\n"
					     "\t}\n",
				      k, b[5], k, k);
		} else if (cmode)
			ox_buf_printf(&oob, "%s(unsigned $I)c%d >= (unsigned $I)%s", oob.len ? " || " : "", k, b[1]);
		ox_buf_printf(&src, "%s(c%d + %s) * %s", src.len ? " + " : "", k, b[2], b[3]);
	}
	const char *ty = ox_cg_ctype(y->dtype);
	const int hasv = n->nin > 2 && n->in[2] >= 0;
	char val[128];
	ox_cg_snprintf(val, sizeof val, "%s", hasv ? "cv[0]" : ox_cg_store(y->dtype, ox_cg_lit(y->dtype, n->opset < 11 ? ox_attr_float(n, "value", 0) : 0)));
	if (oob.len)
		ox_buf_printf(&body, "\tif (%s) {\n\t\ty[i] = %s;\n\t\treturn;\n\t}\n", oob.s, val);
	ox_buf_printf(&body, "\ty[i] = x[%s];\n", src.s);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ cv, %s *__restrict__ y", ty, ty, ty);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: Pad (%s), a thread per output element */\n", cg->fname, ox_attr_str(n, "mode", "constant"));
	if (ox_cu_index_kernel_rt(&t, kname, params, y->shape.d, r, body.s, &R)) {
		ox_buf_free(&t);
		goto decline;
	}
	ox_cu_index_launch(cg, kname, y->shape.d, r, hasv ? "in0, in2, out0" : "in0, nullptr, out0", &R);
	ox_cg_helper(cg, kname, t.s); /* (typed: no OX_T; long indices kept) */
	ox_buf_free(&t), ox_buf_free(&body), ox_buf_free(&src), ox_buf_free(&oob);
	return 0;
decline:
	ox_buf_free(&body), ox_buf_free(&src), ox_buf_free(&oob);
	return 1;
}

/* Shape (start .. end of the input's dims): a thread per element, the
 * run-time dims the kernel's parameters */
int ox_cu_emit_shape(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *y = ox_out(g, n, 0);
	if (!x || !y || !x->has_shape || y->dtype != OX_I64 || y->shape.rank != 1 || y->layout)
		return 1;
	const int r = x->shape.rank;
	int64_t s = ox_attr_int(n, "start", 0), e = ox_attr_int(n, "end", r);
	s = s < 0 ? s + r : s, e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s, e = e < 0 ? 0 : e > r ? r : e;
	if (y->shape.d[0] != (e > s ? e - s : 0) || e <= s)
		return 1;
	ox_cu_rt R = {g, 0, {0}};
	ox_buf body = {0};
	ox_buf_puts(&body, "	const $I v[] = {");
	for (int64_t k = s; k < e; k++) {
		char b[32];
		if (!ox_cu_rt_dim(&R, x->shape.d[k], b, sizeof b)) {
			ox_buf_free(&body);
			return 1;
		}
		ox_buf_printf(&body, "%s%s", k > s ? ", " : "", b);
	}
	ox_buf_puts(&body, "};\n\ty[i] = v[i];\n");
	char kname[200];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: Shape, dims %lld..%lld */\n", cg->fname, (long long)s, (long long)e - 1);
	const ox_dim dims[1] = {e - s};
	if (ox_cu_index_kernel_rt(&t, kname, "int64_t *__restrict__ y", dims, 1, body.s, &R)) {
		ox_buf_free(&t), ox_buf_free(&body);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 1, "out0", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t), ox_buf_free(&body);
	return 0;
}
/* Gather (an embedding lookup): a thread per output element [outer, M,
 * inner]. Indices read at run time are checked as the C target checks
 * them (one wrap of a negative index); one out of range sets the run's
 * status word to _ERR_INDEX (the first error kept: atomicCAS) and its
 * element is not written. The run goes on, nothing waits (the CUDA Graph
 * stays): PREFIX_sync returns the code, the outputs are unspecified, and
 * as on the C target nothing reads or writes out of bounds. Constant
 * indices out of range are the C emitter's compile-time error. */
int ox_cu_emit_gather(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	if (!x || !ix || !y || !x->has_shape || !ix->has_shape || x->layout || y->layout || x->dtype == OX_STRING ||
	    !ox_dtype_size(x->dtype) || (ix->dtype != OX_I32 && ix->dtype != OX_I64))
		return 1;
	const int axis = ox_norm_axis(ox_attr_int(n, "axis", 0), x->shape.rank);
	/* [outer, indices, inner]; run-time dims (a dynamic batch and
	 * sequence of token ids) the kernel's parameters */
	ox_dim dims[3] = {1, ox_shape_numel_dim(g, &ix->shape), 1};
	const ox_dim dD = x->shape.d[axis];
	for (int d = 0; d < x->shape.rank; d++)
		if (d != axis)
			dims[d < axis ? 0 : 2] = ox_dim_mul(g, dims[d < axis ? 0 : 2], x->shape.d[d]);
	const int rt = ox_dim_is_rt(g, dD) || ox_dim_is_rt(g, dims[0]) || ox_dim_is_rt(g, dims[1]) ||
		       ox_dim_is_rt(g, dims[2]);
	if (dD == 0 || (!rt && dims[0] * dims[1] * dims[2] == 0))
		return 1;
	const ox_tensor *ci = ox_in_const(g, n, 1);
	if (ci && ox_dim_is_rt(g, dD))
		return 1; /* (constant indices: checked here against a constant axis) */
	for (int64_t j = 0; ci && j < ox_tensor_numel(ci); j++) {
		const int64_t k = (int64_t)ox_tensor_get_f64(ci, j);
		if (k < -dD || k >= dD)
			return 1;
	}
	ox_cu_rt R = {g, 0, {0}};
	char kname[200], params[256], ds[40], dn[32], in[32];
	if (!ox_cu_rt_dim(&R, dD, dn, sizeof dn) || !ox_cu_rt_dim(&R, dims[2], in, sizeof in))
		return 1;
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(y->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ ind, %s *__restrict__ y%s", ty,
		 ox_cg_ctype(ix->dtype), ty, ci ? "" : ", int *st");
	ox_buf body = {0};
	ox_cg_snprintf(ds, sizeof ds, ox_dim_is_rt(g, dD) ? "%s" : "%s$L", dn);
	if (ci) /* (checked here: wrapped only) */
		ox_buf_printf(&body, "\tint64_t k = (int64_t)ind[i1];\n\tif (k < 0)\n\t\tk += %s;\n", ds);
	else
		ox_cu_index_check(cg, &body, 1, "k", "ind[i1]", ds);
	ox_buf_printf(&body, "\ty[i] = x[(i0 * %s + k) * %s + i2];\n", dn, in);
	ox_buf t = ox_cu_kbuf(g, n);
	ox_buf_printf(&t, "/* %s: Gather along axis %d of %s, %s indices: a thread per element */\n", cg->fname, axis, dn,
		      ci ? "constant" : "checked");
	if (ox_cu_index_kernel_rt(&t, kname, params, dims, 3, body.s, &R)) {
		ox_buf_free(&body), ox_buf_free(&t);
		return 1;
	}
	ox_buf_free(&body);
	ox_cu_index_launch(cg, kname, dims, 3, ci ? "in0, in1, out0" : "in0, in1, out0, ox_status", &R);
	ox_cu_finish(cg, kname, &t);
	return 0;
}

/* GatherElements: a thread per output element, its index (negative from
 * the end) read and checked as the C target checks it; out of range sets
 * the status word (_ERR_INDEX). Run-time dims are parameters where the
 * indices share each of the data's dims but the axis (the same dim, or
 * constants no larger): no check of them is left to the run. */
int ox_cu_emit_gather_elements(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *ix = ox_in(g, n, 1), *y = ox_out(g, n, 0);
	int axis;
	if (!x || !ix || !y || x->layout || ix->layout || y->layout || x->dtype == OX_STRING || !ox_dtype_size(x->dtype) ||
	    (ix->dtype != OX_I32 && ix->dtype != OX_I64) || ox_index_axis(g, n, &axis) || axis < 0)
		return 1;
	const int r = x->shape.rank;
	if (ix->shape.rank != r || r < 1 || !ox_shape_numel(&ix->shape) || !x->shape.d[axis])
		return 1;
	for (int k = 0; k < r; k++) {
		const ox_dim a = ix->shape.d[k], b = x->shape.d[k];
		if (k != axis && a != b && (ox_dim_is_rt(g, a) || ox_dim_is_rt(g, b) || a > b))
			return 1; /* (the C target's checks) */
	}
	ox_cu_rt R = {g, 0, {0}};
	char D[32];
	if (!ox_cu_rt_dim(&R, x->shape.d[axis], D, sizeof D))
		return 1;
	ox_buf body = {0}, off = {0};
	ox_cu_index_check(cg, &body, 1, "j", "ind[i]", D);
	ox_dim stride = 1;
	for (int k = r - 1; k >= 0; k--) {
		char v[16], sb[32];
		ox_cg_snprintf(v, sizeof v, k == axis ? "j" : "i%d", k);
		if (!ox_cu_rt_dim(&R, stride, sb, sizeof sb)) {
			ox_buf_free(&body), ox_buf_free(&off);
			return 1;
		}
		ox_buf_printf(&off, "%s%s * %s", off.len ? " + " : "", v, sb);
		stride = ox_dim_mul(g, stride, x->shape.d[k]);
	}
	ox_buf_printf(&body, "\ty[i] = x[%s];\n", off.s);
	ox_buf_free(&off);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	const char *ty = ox_cg_ctype(y->dtype);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, const %s *__restrict__ ind, %s *__restrict__ y, int *st",
		 ty, ox_cg_ctype(ix->dtype), ty);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: GatherElements along axis %d of %lld%s, checked indices: a thread per element%s */\n",
		      cg->fname, axis, (long long)ox_opt_top(g, x->shape.d[axis]), ox_dim_is_rt(g, x->shape.d[axis]) ? " at most" : "",
		      R.n ? " (run-time dims)" : "");
	const int bad = ox_cu_index_kernel_rt(&t, kname, params, ix->shape.d, r, body.s, &R);
	ox_buf_free(&body);
	if (bad) {
		ox_buf_free(&t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, ix->shape.d, r, "in0, in1, out0, ox_status", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	return 0;
}

/* TopK (a constant k): a thread per run along the axis, the C target's
 * insertion into the k-long index list (out1; among equal values the
 * lower index first), then the values gathered. Run-time dims are
 * parameters, the axis's too when its range starts at k or more (no
 * check left to the run). */
int ox_cu_emit_topk(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0), *v = n->nout > 0 && n->out[0] >= 0 ? ox_out(g, n, 0) : NULL;
	const ox_value *ix = n->nout > 1 && n->out[1] >= 0 ? ox_out(g, n, 1) : NULL;
	int axis;
	if (!x || !v || !ix || x->layout || v->layout || ix->layout || ix->dtype != OX_I64 || v->dtype != x->dtype ||
	    !ox_cu_plain_num(x->dtype) || ox_index_axis(g, n, &axis) || axis < 0)
		return 1;
	const int r = x->shape.rank, dt = x->dtype;
	ox_dim O = 1, I = 1;
	const ox_dim L = x->shape.d[axis], K = v->shape.d[axis];
	for (int k = 0; k < r; k++)
		if (k < axis)
			O = ox_dim_mul(g, O, x->shape.d[k]);
		else if (k > axis)
			I = ox_dim_mul(g, I, x->shape.d[k]);
	int64_t lo, hi;
	if (ox_dim_is_rt(g, K) || K < 1 || !O || !I || (!ox_dim_is_rt(g, L) && K > L) ||
	    (ox_dim_is_rt(g, L) && (ox_dim_range(g, L, &lo, &hi) || lo < K)))
		return 1; /* (k from the data, nothing to do, or the C target's error) */
	ox_cu_rt R = {g, 0, {0}};
	char sI[32], sL[32], sLI[32], sKI[32];
	if (!ox_cu_rt_dim(&R, I, sI, sizeof sI) || !ox_cu_rt_dim(&R, L, sL, sizeof sL) ||
	    !ox_cu_rt_dim(&R, ox_dim_mul(g, L, I), sLI, sizeof sLI) || !ox_cu_rt_dim(&R, ox_dim_mul(g, K, I), sKI, sizeof sKI))
		return 1;
	const char *T = ox_cg_ctype(dt), *C = ox_cg_ntype(dt), *better = ox_attr_int(n, "largest", 1) ? ">" : "<";
	ox_buf body = {0};
	/* (st: the stride along the axis, named once) */
	ox_buf_printf(&body, "\tconst $I st = %s;\n\tconst %s *xr = x + i0 * %s + i1;\n\tint64_t *ix = ind + i0 * %s + i1;\n"
			     "\t$I m = 0; /* entries in ix so far */\n"
			     "\tfor ($I t = 0; t < %s; t++) {\n\t\tconst %s v = %s;\n\t\t$I s = m;\n",
		      sI, T, sLI, sKI, sL, C, ox_cg_load(dt, "xr[t * st]"));
	ox_buf_printf(&body, "\t\twhile (s > 0 && v %s %s)\n\t\t\ts--;\n\t\tif (s >= %lld)\n\t\t\tcontinue;\n"
			     "\t\tfor ($I u = m < %lld ? m : %lld; u > s; u--)\n\t\t\tix[u * st] = ix[(u - 1) * st];\n"
			     "\t\tix[s * st] = t;\n\t\tif (m < %lld)\n\t\t\tm++;\n\t}\n"
			     "\tfor ($I u = 0; u < %lld; u++)\n\t\ty[i0 * %s + u * st + i1] = xr[ix[u * st] * st];\n",
		      better, ox_cg_load(dt, "xr[ix[(s - 1) * st] * st]"), (long long)K, (long long)K,
		      (long long)(K - 1), (long long)K, (long long)K, sKI);
	char kname[200], params[256];
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel", cg->fname);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y, int64_t *__restrict__ ind", T, T);
	ox_buf t = {.ix = "long"};
	ox_buf_printf(&t, "/* %s: TopK %lld of %lld%s along axis %d (%s): a thread per run%s */\n", cg->fname, (long long)K,
		      (long long)ox_opt_top(g, L), ox_dim_is_rt(g, L) ? " at most" : "", axis,
		      *better == '>' ? "largest" : "smallest", R.n ? " (run-time dims)" : "");
	const ox_dim dims[2] = {O, I};
	const int bad = ox_cu_index_kernel_rt(&t, kname, params, dims, 2, body.s, &R);
	ox_buf_free(&body);
	if (bad) {
		ox_buf_free(&t);
		return 1;
	}
	ox_cu_index_launch(cg, kname, dims, 2, "in0, out0, out1", &R);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	return 0;
}
/* Concat's input k or Split's output k (split): a kernel over its tot
 * elements, element i at i / rk * row + off + i % rk of the whole (rk its
 * elements from the axis on, row the whole's, off its place along it) */
static void piece_kernel(ox_cg *cg, ox_graph *g, ox_node *n, int k, int split, const char *ty, ox_dim tot,
			 ox_dim rk, ox_dim row, ox_dim off)
{
	char kname[200], params[256], body[256], sr[32], sw[32], so[32], ptrs[32], place[160];
	ox_cu_rt R = {g, 0, {0}};
	ox_cg_snprintf(kname, sizeof kname, "%s_kernel%d", cg->fname, k);
	ox_cg_snprintf(params, sizeof params, "const %s *__restrict__ x, %s *__restrict__ y", ty, ty);
	if (!ox_cu_rt_dim(&R, rk, sr, sizeof sr) || !ox_cu_rt_dim(&R, row, sw, sizeof sw) ||
	    !ox_cu_rt_dim(&R, off, so, sizeof so))
		ox_die("codegen: '%s': a %s of more than 16 run-time dims", n->name, n->optype);
	ox_cg_snprintf(place, sizeof place, "i / %s * %s + %s + i %% %s", sr, sw, so, sr);
	ox_cg_snprintf(body, sizeof body, split ? "\ty[i] = x[%s];\n" : "\ty[%s] = x[i];\n", place);
	ox_buf t = ox_cu_kbuf(g, n);
	if (split)
		ox_buf_printf(&t, "/* %s: output %d of the Split along axis %d */\n", cg->fname, k,
			      ox_norm_axis(ox_attr_int(n, "axis", 0), g->vals[n->in[0]].shape.rank));
	else
		ox_buf_printf(&t, "/* %s: input %d of the Concat */\n", cg->fname, k);
	if (ox_cu_index_kernel_rt(&t, kname, params, &tot, 1, body, &R))
		ox_die("codegen: '%s': a %s of more than 16 run-time dims", n->name, n->optype);
	ox_cg_helper(cg, kname, t.s);
	ox_buf_free(&t);
	ox_cg_snprintf(ptrs, sizeof ptrs, split ? "in0, out%d" : "in%d, out0", k);
	ox_cu_index_launch(cg, kname, &tot, 1, ptrs, &R);
}

/* Concat: a kernel per input, each element to its place along the axis,
 * over the values' storage dims (ox_cu_phys): NHWC ones, concatenated over
 * the channels, along their last storage axis (one block: b = C) */
int ox_cu_emit_concat(ox_cg *cg, ox_graph *g, ox_node *n)
{
	ox_value *y = ox_out(g, n, 0);
	const int nhwc = y->layout == OX_L_BLOCKED;
	if ((y->layout && !nhwc) || (nhwc && y->lp[0] != y->shape.d[1]))
		return 1;
	for (int k = 0; k < n->nin; k++) {
		const ox_value *x = n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;
		if (x && (x->layout != y->layout || (nhwc && x->lp[0] != x->shape.d[1])))
			return 1;
	}
	/* a kernel per input, its run-time dims (a plain value's) parameters */
	int64_t yd[OX_MAX_RANK + 1], xd[OX_MAX_RANK + 1];
	const int yr = ox_cu_phys(y, yd), axis = nhwc ? 4 : ox_norm_axis(ox_attr_int(n, "axis", 0), yr);
	ox_dim row = 1, off = 0;
	for (int d = axis; d < yr; d++)
		row = ox_dim_mul(g, row, yd[d]);
	const char *ty = ox_cg_ctype(y->dtype);
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0)
			continue;
		const int xr = ox_cu_phys(&g->vals[n->in[k]], xd);
		ox_dim rk = 1, tot = ox_shape_numel_dim(g, &g->vals[n->in[k]].shape);
		for (int d = axis; d < xr; d++)
			rk = ox_dim_mul(g, rk, xd[d]);
		if (ox_dim_is_rt(g, tot) || ox_dim_eval(g, tot) > 0)
			piece_kernel(cg, g, n, k, 0, ty, tot, rk, row, off);
		off = ox_dim_add(g, off, rk);
	}
	return 0;
}

/* Split: Concat's mirror, a kernel per output, each element from its place
 * along the axis (plain values; run-time dims the kernels' parameters).
 * A Split whose pieces are views of the input (opt/plan.c) needs none. */
int ox_cu_emit_split(ox_cg *cg, ox_graph *g, ox_node *n)
{
	const ox_value *x = ox_in(g, n, 0);
	if (!x || x->layout || !x->has_shape || !x->shape.rank)
		return 1;
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && (g->vals[n->out[k]].layout || g->vals[n->out[k]].dtype != x->dtype))
			return 1;
	const int r = x->shape.rank, axis = ox_norm_axis(ox_attr_int(n, "axis", 0), r);
	ox_dim row = 1, off = 0;
	for (int d = axis; d < r; d++)
		row = ox_dim_mul(g, row, x->shape.d[d]);
	const char *ty = ox_cg_ctype(x->dtype);
	for (int k = 0; k < n->nout; k++) {
		if (n->out[k] < 0)
			continue; /* (its place still counts: its size is the output's) */
		const ox_value *y = &g->vals[n->out[k]];
		if (y->shape.rank != r)
			return 1;
		ox_dim rk = 1;
		for (int d = axis; d < r; d++)
			rk = ox_dim_mul(g, rk, y->shape.d[d]);
		const ox_dim tot = ox_shape_numel_dim(g, &y->shape);
		if (ox_dim_is_rt(g, tot) || ox_dim_eval(g, tot) > 0)
			piece_kernel(cg, g, n, k, 1, ty, tot, rk, row, off);
		off = ox_dim_add(g, off, rk);
	}
	return 0;
}
