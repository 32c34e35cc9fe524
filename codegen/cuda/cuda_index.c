/* cuda_index.c: CUDA kernels of the scatters, GatherND and
 * NonMaxSuppression (--target cuda), constant shapes, plain layout:
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
	if (K <= 0 || ox_shape_numel(&ox_out(g, n, n->nout - 1)->shape) < ox_nms_gpu_scratch(P, N, K, &kofs, &cofs, &oofs))
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
