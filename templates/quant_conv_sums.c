/* quant_conv_sums.c: the int32 sums of one output row chunk of an integer
 * convolution, shared by ox_qconv (templates/quant_conv.c: ConvInteger,
 * QLinearConv) and ox_qi_conv (templates/qint.c: onnxcc::QConv). xg is the
 * input of output channel m's group, wm its weights, acc[i] gets output
 * ox0 + i of row (od, oh) (id0, ih0: the row's first input coordinates),
 * i < cnt, added to what acc holds. 8-bit operands come in as bytes with a
 * sign flip, as templates/quant_conv.c describes; sums wrap modulo 2^32.
 * Integer arithmetic only. Instantiate with ox_cg_use(cg, "quant_conv_sums", OX_U8).
 */
OX_STATIC void ox_qconv_sums(const uint8_t *restrict xg, const uint8_t *restrict wm, uint32_t *restrict acc, long ox0,
			  long cnt, int xf, int32_t xz, int wf, int32_t wzm, long Cg, long ID, long IH, long IW,
			  long KD, long KH, long KW, long SW, long id0, long ih0, long PW, long DD, long DH, long DW)
{
	for (long c = 0; c < Cg; c++)
	for (long kd = 0; kd < KD; kd++) {
		const long id = id0 + kd * DD;
		if (id < 0 || id >= ID)
			continue;
		for (long kh = 0; kh < KH; kh++) {
			const long ih = ih0 + kh * DH;
			if (ih < 0 || ih >= IH)
				continue;
			const uint8_t *xr = xg + ((c * ID + id) * IH + ih) * IW;
			for (long kw = 0; kw < KW; kw++) {
				const int32_t wv = (int32_t)(wm[((c * KD + kd) * KH + kh) * KW + kw] ^ wf) - wzm;
				if (!wv)
					continue;
				/* [lo, hi): the outputs whose tap ix = ox * SW + t is inside the row */
				const long t = kw * DW - PW;
				long lo = t >= 0 ? 0 : (-t + SW - 1) / SW;
				long hi = IW - 1 - t >= 0 ? (IW - 1 - t) / SW + 1 : 0;
				if (lo < ox0)
					lo = ox0;
				if (hi > ox0 + cnt)
					hi = ox0 + cnt;
				for (long ox = lo; ox < hi; ox++)
					acc[ox - ox0] += (uint32_t)(((int32_t)(xr[ox * SW + t] ^ xf) - xz) * wv);
			}
		}
	}
}
