/* unique.c: Unique over the L slices x[o, l, i] (o < O, i < I) of x along
 * an axis; without an axis O = I = 1 and L is the element count. Slices
 * compare lexicographically in C order; NaN sorts after every number and
 * equals NaN (one unique NaN, as numpy.unique does). A stable merge sort
 * makes each group's first element its first occurrence. sorted: output in
 * ascending order, else in order of first occurrence. Writes the outputs
 * that are not NULL compacted (y as [O, u, I]) and returns u; nothing but
 * inv when u is more than `most` (the unique slices they hold).
 * scr: 6 * L int64 of scratch. Needs ox_ld_$S and ox_uq_nan_$S.
 */
OX_STATIC int ox_unique_cmp_$S(const $T *x, int64_t a, int64_t b, long O, long L, long I)
{
	for (long o = 0; o < O; o++)
		for (long i = 0; i < I; i++) {
			const $C va = ox_ld_$S(x[(o * L + a) * I + i]), vb = ox_ld_$S(x[(o * L + b) * I + i]);
			if (va < vb)
				return -1;
			if (vb < va)
				return 1;
			const int na = ox_uq_nan_$S(va), nb = ox_uq_nan_$S(vb);
			if (na != nb)
				return na - nb;
		}
	return 0;
}

typedef struct {
	const $T *x;
	long O, L, I;
} ox_unique_ctx_$S;

/* the sort's order: slice a before slice b */
OX_STATIC int ox_unique_before_$S(const void *ctx, int64_t a, int64_t b)
{
	const ox_unique_ctx_$S *c = (const ox_unique_ctx_$S *)ctx;
	return ox_unique_cmp_$S(c->x, a, b, c->O, c->L, c->I) < 0;
}

OX_STATIC int64_t ox_unique_$S(const $T *restrict x, long O, long L, long I, int sorted, long most,
			    int64_t *restrict scr, $T *restrict y, int64_t *restrict idx, int64_t *restrict inv,
			    int64_t *restrict cnt)
{
	int64_t *ord = scr, *tmp = scr + L, *grp = scr + 2 * L, *first = scr + 3 * L;
	int64_t *count = scr + 4 * L, *rank = scr + 5 * L;
	for (long l = 0; l < L; l++)
		ord[l] = l;
	/* ascending, equal slices in input order */
	ox_unique_ctx_$S c = {x, O, L, I};
	const int64_t *src = ox_msort(ord, tmp, L, ox_unique_before_$S, &c);
	/* groups of equal slices, in sorted order */
	int64_t u = 0;
	for (long j = 0; j < L; j++) {
		if (j == 0 || ox_unique_cmp_$S(x, src[j - 1], src[j], O, L, I) != 0) {
			first[u] = src[j];
			count[u] = 0;
			u++;
		}
		grp[src[j]] = u - 1;
		count[u - 1]++;
	}
	/* each group's output position */
	if (sorted) {
		for (int64_t k = 0; k < u; k++)
			rank[k] = k;
	} else {
		int64_t next = 0;
		for (int64_t k = 0; k < u; k++)
			rank[k] = -1;
		for (long l = 0; l < L; l++)
			if (rank[grp[l]] < 0)
				rank[grp[l]] = next++;
	}
	for (int64_t k = 0; k < u && u <= most; k++) {
		const int64_t r = rank[k];
		if (idx)
			idx[r] = first[k];
		if (cnt)
			cnt[r] = count[k];
		if (y)
			for (long o = 0; o < O; o++)
				memcpy(y + (o * u + r) * I, x + (o * L + first[k]) * I, (size_t)I * sizeof *y);
	}
	if (inv)
		for (long l = 0; l < L; l++)
			inv[l] = rank[grp[l]];
	return u;
}
