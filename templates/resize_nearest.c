/* resize_nearest.c: nearest-neighbour Resize as a gather: output index o
 * of axis a reads input element offset off[a][o] (input index times the
 * axis stride), precomputed by the compiler from the coordinate
 * transform and nearest_mode. An offset of -1 marks a coordinate outside
 * the input (tf_crop_and_resize), which gets extrap. Copies storage
 * values, so it serves every dtype unchanged. Output rows (all axes but
 * the last) r0 .. r1-1 only: the node's parallel tasks.
 */
OX_STATIC void ox_resize_nearest_$S(const $T *restrict x, $T *restrict y, int rank, const long *od,
				 const long *const *off, $T extrap, long r0, long r1)
{
	const long W = od[rank - 1], *ol = off[rank - 1];
	long idx[16] = {0};
	for (long a = rank - 2, q = r0; a >= 0; a--) /* row r0's index, mixed radix */
		idx[a] = q % od[a], q /= od[a];
	y += r0 * W;
	for (long r = r0; r < r1; r++, y += W) {
		long base = 0;
		int oob = 0;
		for (int a = 0; a < rank - 1; a++) {
			oob |= off[a][idx[a]] < 0;
			base += off[a][idx[a]];
		}
		for (long i = 0; i < W; i++)
			y[i] = oob || ol[i] < 0 ? extrap : x[base + ol[i]];
		for (int a = rank - 2; a >= 0; a--) {
			if (++idx[a] < od[a])
				break;
			idx[a] = 0;
		}
	}
}
