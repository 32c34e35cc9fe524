/* templates/msort.c: a stable bottom-up merge sort of n int64 indices, in
 * the caller's order: before(ctx, a, b) says a must come before b (ties keep
 * their input order). tmp holds n more; returns whichever of ord and tmp
 * holds the result. No placeholders: instantiated once (as i64) for any
 * kernel that sorts (NonMaxSuppression, Unique). */
OX_STATIC int64_t *ox_msort(int64_t *ord, int64_t *tmp, long n, int (*before)(const void *, int64_t, int64_t),
			 const void *ctx)
{
	int64_t *src = ord, *dst = tmp;
	for (long w = 1; w < n; w *= 2) {
		for (long lo = 0; lo < n; lo += 2 * w) {
			long mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			long p = lo, q = mid, k = lo;
			while (p < mid && q < hi)
				dst[k++] = before(ctx, src[q], src[p]) ? src[q++] : src[p++];
			while (p < mid)
				dst[k++] = src[p++];
			while (q < hi)
				dst[k++] = src[q++];
		}
		int64_t *t = src;
		src = dst, dst = t;
	}
	return src;
}
