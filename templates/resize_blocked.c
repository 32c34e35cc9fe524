/* resize_blocked.c: Resize of a channel-blocked f32 tensor
 * ([N][C/b][H][W][b], b = OX_VW) over H and W, from the per-axis tap
 * tables the compiler computed (as templates/resize.c's, with offsets in
 * floats of the blocked layout): output (oh, ow) of every channel block is
 * the sum over taps th, tw of wh[oh*nth + th] * ww[ow*ntw + tw] times the
 * input vector at offh[...] + offw[...]. A vector holds b channels, so the
 * loop is the same for any channel count. Rows r0 .. r1-1 of the
 * [N*C/b*OH] output rows: the node's parallel tasks. With wh == NULL
 * (nearest), one tap per axis is copied. Needs templates/vf.c. */
OX_STATIC OX_UNUSED void ox_resize_blocked(const float *restrict x, float *restrict y, long plane, long OH, long OW,
					int nth, int ntw, const long *offh, const float *wh, const long *offw,
					const float *ww, long r0, long r1)
{
	for (long r = r0; r < r1; r++) {
		const long oh = r % OH;
		const float *xc = x + (r / OH) * plane;
		float *yr = y + r * OW * OX_VW;
		if (!wh) {
			const float *xh = xc + offh[oh];
			for (long ow = 0; ow < OW; ow++)
				ox_vf_store(yr + ow * OX_VW, ox_vf_load(xh + offw[ow]));
			continue;
		}
		for (long ow = 0; ow < OW; ow++) {
			ox_vf acc = ox_vf_zero();
			for (int th = 0; th < nth; th++) {
				const float *xh = xc + offh[oh * nth + th];
				const float a = wh[oh * nth + th];
				for (int tw = 0; tw < ntw; tw++)
					acc = ox_vf_fma(ox_vf_set1(a * ww[ow * ntw + tw]), ox_vf_load(xh + offw[ow * ntw + tw]), acc);
			}
			ox_vf_store(yr + ow * OX_VW, acc);
		}
	}
}
