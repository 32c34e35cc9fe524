/* maxpool.c: max pooling for 1 to 3 spatial axes with strides, pads and
 * dilations; padding never wins. ind, when not null, receives ONNX's
 * Indices: the flat index of the maximum in the whole input tensor, the
 * spatial part row-major, or column-major when colmajor (storage_order
 * 1). Ties keep the first maximum in row-major window order. A window
 * with no input element (possible only with dilations skipping over a
 * tiny input) gives 0. Needs ox_ld_$S / ox_st_$S (added by ox_cg_use).
 */
OX_STATIC void ox_maxpool_$S(const $T *restrict x, $T *restrict y, int64_t *restrict ind, long NC,
			  long ID, long IH, long IW, long OD, long OH, long OW, long KD, long KH, long KW,
			  long SD, long SH, long SW, long PD, long PH, long PW, long DD, long DH, long DW,
			  int colmajor)
{
	const long isz = ID * IH * IW;
	long o = 0;
	for (long nc = 0; nc < NC; nc++) {
		const $T *xc = x + nc * isz;
		for (long od = 0; od < OD; od++)
		for (long oh = 0; oh < OH; oh++)
		for (long ow = 0; ow < OW; ow++, o++) {
			$C best = ($C)0;
			long at = -1, bd = 0, bh = 0, bw = 0;
			for (long kd = 0; kd < KD; kd++) {
				long id = od * SD - PD + kd * DD;
				if (id < 0 || id >= ID)
					continue;
				for (long kh = 0; kh < KH; kh++) {
					long ih = oh * SH - PH + kh * DH;
					if (ih < 0 || ih >= IH)
						continue;
					const $T *xr = xc + (id * IH + ih) * IW;
					for (long kw = 0; kw < KW; kw++) {
						long iw = ow * SW - PW + kw * DW;
						if (iw < 0 || iw >= IW)
							continue;
						$C v = ox_ld_$S(xr[iw]);
						if (at < 0 || v > best) {
							best = v;
							at = 1, bd = id, bh = ih, bw = iw;
						}
					}
				}
			}
			y[o] = ox_st_$S(best);
			if (ind)
				ind[o] = nc * isz + (colmajor ? bd + (bh + bw * IH) * ID : (bd * IH + bh) * IW + bw);
		}
	}
}
