/* avgpool.c: average pooling for 1 to 3 spatial axes with strides, pads
 * and dilations. The divisor counts the taps inside the input, or with
 * incl (count_include_pad) also those in the begin/end pads (PDe.. are
 * the end pads) but never those a ceil_mode window hangs past the end
 * pad, as the ONNX reference does. Sums are in the compute type ($C; f16
 * in float). Needs ox_ld_$S / ox_st_$S (added by ox_cg_use).
 */
OX_STATIC void ox_avgpool_$S(const $T *restrict x, $T *restrict y, long NC, long ID, long IH, long IW,
			  long OD, long OH, long OW, long KD, long KH, long KW, long SD, long SH, long SW,
			  long PD, long PH, long PW, long PDe, long PHe, long PWe, long DD, long DH, long DW,
			  int incl)
{
	const long isz = ID * IH * IW;
	long o = 0;
	for (long nc = 0; nc < NC; nc++) {
		const $T *xc = x + nc * isz;
		for (long od = 0; od < OD; od++)
		for (long oh = 0; oh < OH; oh++)
		for (long ow = 0; ow < OW; ow++, o++) {
			$C sum = ($C)0;
			long nd = 0, nh = 0, nw = 0, cnt = 0;
			for (long k = 0; k < KD; k++) {
				long i = od * SD - PD + k * DD;
				nd += incl ? i >= -PD && i < ID + PDe : i >= 0 && i < ID;
			}
			for (long k = 0; k < KH; k++) {
				long i = oh * SH - PH + k * DH;
				nh += incl ? i >= -PH && i < IH + PHe : i >= 0 && i < IH;
			}
			for (long k = 0; k < KW; k++) {
				long i = ow * SW - PW + k * DW;
				nw += incl ? i >= -PW && i < IW + PWe : i >= 0 && i < IW;
			}
			cnt = nd * nh * nw;
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
						if (iw >= 0 && iw < IW)
							sum += ox_ld_$S(xr[iw]);
					}
				}
			}
			/* an empty window divides 0 by 0: NaN, as the reference gives */
			y[o] = ox_st_$S(sum / ($C)cnt);
		}
	}
}
