/* resize.c: separable Resize (linear, cubic, antialias) from per-axis tap
 * tables the compiler computed: output index o of axis a reads taps
 * t < nt[a] at element offset off[a][o*nt[a] + t] (input index times the
 * axis stride) with weight wt[a][...]; the weight of a tap combination is
 * the product over axes. An offset of -1 in tap 0 marks an output
 * coordinate outside the input (tf_crop_and_resize), which gets extrap.
 * The last axis is the inner loop, through a row buffer of double sums;
 * integer outputs truncate as the ONNX reference's cast does. Output rows
 * (all axes but the last) r0 .. r1-1 only: the node's parallel tasks.
 * Needs ox_ld_$S / ox_st_$S (added by ox_cg_use).
 */
OX_STATIC void ox_resize_$S(const $T *restrict x, $T *restrict y, int rank, const long *od, const int *nt,
			 const long *const *off, const float *const *wt, $C extrap, long r0, long r1)
{
	const long W = od[rank - 1], *ol = off[rank - 1];
	const float *wl = wt[rank - 1];
	const int tl = nt[rank - 1];
	long ncomb = 1, idx[16] = {0};
	for (int a = 0; a < rank - 1; a++)
		ncomb *= nt[a];
	for (long a = rank - 2, q = r0; a >= 0; a--) /* row r0's index, mixed radix */
		idx[a] = q % od[a], q /= od[a];
	y += r0 * W;
	double acc[256];
	for (long r = r0; r < r1; r++, y += W) {
		int oob = 0;
		for (int a = 0; a < rank - 1; a++)
			oob |= off[a][idx[a] * nt[a]] < 0;
		for (long x0 = 0; x0 < W; x0 += 256) {
			const long nx = W - x0 < 256 ? W - x0 : 256;
			for (long i = 0; i < nx; i++)
				acc[i] = 0;
			for (long comb = 0; comb < ncomb && !oob; comb++) {
				/* tap combination comb, mixed radix over the outer axes */
				long base = 0, c = comb;
				double wgt = 1;
				for (int a = rank - 2; a >= 0; a--) {
					long k = idx[a] * nt[a] + c % nt[a];
					c /= nt[a];
					base += off[a][k];
					wgt *= wt[a][k];
				}
				if (wgt == 0)
					continue;
				for (long i = 0; i < nx; i++) {
					const long *o = ol + (x0 + i) * tl;
					const float *wv = wl + (x0 + i) * tl;
					if (o[0] < 0)
						continue;
					double s = 0;
					for (int t = 0; t < tl; t++)
						s += wv[t] * (double)ox_ld_$S(x[base + o[t]]);
					acc[i] += wgt * s;
				}
			}
			for (long i = 0; i < nx; i++)
				y[x0 + i] = ox_st_$S(oob || ol[(x0 + i) * tl] < 0 ? extrap : ($C)acc[i]);
		}
		for (int a = rank - 2; a >= 0; a--) {
			if (++idx[a] < od[a])
				break;
			idx[a] = 0;
		}
	}
}
