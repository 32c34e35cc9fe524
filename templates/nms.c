/* nms.c: NonMaxSuppression as onnxruntime and the ONNX reference do it.
 * Per (batch, class): the boxes whose score is strictly above the score
 * threshold (all when there is none), in descending score order with ties
 * in ascending box order and NaN scores last (a stable merge sort), are
 * taken greedily; a candidate is dropped when its IoU with a box already
 * kept is strictly above iou; at most maxout per class. Corner boxes [y1, x1, y2, x2] may
 * have flipped corners (normalised with min/max); center boxes are
 * [xc, yc, w, h]. Writes (batch, class, box) rows compacted to sel, at
 * most `most` of them (what sel holds), and returns their count, more
 * than most when sel was too small. scr: 2 * N + min(maxout, N) int64 of
 * scratch.
 * Arithmetic in $C, as onnxruntime does in float. Needs ox_ld_$S.
 */
OX_STATIC void ox_nms_box_$S(const $T *b, int center, $C *y0, $C *x0, $C *y1, $C *x1)
{
	const $C a = ox_ld_$S(b[0]), c = ox_ld_$S(b[1]), d = ox_ld_$S(b[2]), e = ox_ld_$S(b[3]);
	if (center) {
		*x0 = a - d / ($C)2, *x1 = a + d / ($C)2;
		*y0 = c - e / ($C)2, *y1 = c + e / ($C)2;
	} else {
		*y0 = a < d ? a : d, *y1 = a < d ? d : a;
		*x0 = c < e ? c : e, *x1 = c < e ? e : c;
	}
}

/* IoU(a, b) > iou; degenerate boxes never suppress */
OX_STATIC int ox_nms_suppress_$S(const $T *a, const $T *b, int center, $C iou)
{
	$C ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
	ox_nms_box_$S(a, center, &ay0, &ax0, &ay1, &ax1);
	ox_nms_box_$S(b, center, &by0, &bx0, &by1, &bx1);
	const $C iy0 = ay0 > by0 ? ay0 : by0, iy1 = ay1 < by1 ? ay1 : by1;
	const $C ix0 = ax0 > bx0 ? ax0 : bx0, ix1 = ax1 < bx1 ? ax1 : bx1;
	const $C ih = iy1 - iy0 > 0 ? iy1 - iy0 : ($C)0, iw = ix1 - ix0 > 0 ? ix1 - ix0 : ($C)0;
	const $C inter = ih * iw;
	if (!(inter > 0))
		return 0;
	const $C aa = (ay1 - ay0) * (ax1 - ax0), ab = (by1 - by0) * (bx1 - bx0);
	const $C uni = aa + ab - inter;
	if (!(aa > 0) || !(ab > 0) || !(uni > 0))
		return 0;
	return inter / uni > iou;
}

/* the sort's order: a higher score first, a NaN after every number (a
 * total order, so that any stable sort gives these ranks: the CUDA
 * kernels' bitonic sort of keys, codegen/cuda/cuda_index.c) (ctx: the class's
 * scores) */
OX_STATIC int ox_nms_before_$S(const void *ctx, int64_t a, int64_t b)
{
	const $T *s = (const $T *)ctx;
	const $C x = ox_ld_$S(s[a]), y = ox_ld_$S(s[b]);
	return x > y || (x == x && y != y);
}

OX_STATIC int64_t ox_nms_$S(const $T *restrict boxes, const $T *restrict scores, long B, long C, long N,
			 long maxout, int center, float iou, int has_sthr, float sthr, int64_t *restrict sel,
			 long most, int64_t *restrict scr)
{
	int64_t *ord = scr, *tmp = scr + N, *kept = scr + 2 * N;
	int64_t cnt = 0;
	for (long b = 0; b < B; b++)
		for (long c = 0; c < C; c++) {
			const $T *s = scores + (b * C + c) * N;
			const $T *bx = boxes + b * N * 4;
			long m = 0;
			for (long i = 0; i < N; i++)
				if (!has_sthr || ox_ld_$S(s[i]) > ($C)sthr)
					ord[m++] = i;
			/* descending score, ties in box order */
			const int64_t *src = ox_msort(ord, tmp, m, ox_nms_before_$S, s);
			long nk = 0;
			for (long j = 0; j < m && nk < maxout; j++) {
				const $T *cand = bx + src[j] * 4;
				int drop = 0;
				for (long k = 0; k < nk && !drop; k++)
					drop = ox_nms_suppress_$S(bx + kept[k] * 4, cand, center, ($C)iou);
				if (drop)
					continue;
				kept[nk++] = src[j];
				if (cnt < most)
					sel[cnt * 3] = b, sel[cnt * 3 + 1] = c, sel[cnt * 3 + 2] = src[j];
				cnt++;
			}
		}
	return cnt;
}
