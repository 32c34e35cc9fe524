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
	if (!ind && ID == 1 && KD == 1 && ($C)0.5 == ($C)0 && IW <= 4096) {
		/* 2-D, integers, no indices: the window's columns first (a
		 * vector loop over the row), then each output's columns. (With
		 * floats the order decides which NaN wins: the loop below.) */
		$C col[4096];
		const long cw = IW < 4096 ? IW : 4096; /* (IW: the test above) */
#if defined(__GNUC__) || defined(__clang__)
		typedef $C ox_mpv __attribute__((vector_size(16 * sizeof($C)), aligned(1)));
#endif
		for (long nc = 0; nc < NC; nc++)
		for (long oh = 0; oh < OH; oh++, o += OW) {
			const $T *xc = x + nc * isz;
			long rows = 0;
			for (long kh = 0; kh < KH; kh++) {
				const long ih = oh * SH - PH + kh * DH;
				if (ih < 0 || ih >= IH)
					continue;
				const $T *xr = xc + ih * IW;
				long iw = 0;
				if (rows++ == 0) {
					for (; iw < cw; iw++)
						col[iw] = ox_ld_$S(xr[iw]);
					continue;
				}
#if defined(__GNUC__) || defined(__clang__)
				const long ve = sizeof($T) == sizeof($C) ? cw / 16 * 16 : 0;
				for (; iw < ve; iw += 16) {
					/* (the bits through the comparison's integer vector type,
					 * so that the text compiles for float types too) */
					ox_mpv v, c;
					memcpy(&v, xr + iw, sizeof v);
					memcpy(&c, col + iw, sizeof c);
					__typeof__(v > c) gt = v > c, vb, cb;
					memcpy(&vb, &v, sizeof vb);
					memcpy(&cb, &c, sizeof cb);
					cb = (vb & gt) | (cb & ~gt);
					memcpy(col + iw, &cb, sizeof cb);
				}
#endif
				for (; iw < cw; iw++) {
					const $C v = ox_ld_$S(xr[iw]);
					col[iw] = v > col[iw] ? v : col[iw];
				}
			}
			/* outputs whose window's columns are all inside: [oa, ob) */
			long oa = SW > 0 ? (PW + SW - 1) / SW : 0, ob = SW > 0 && IW - 1 - (KW - 1) * DW + PW >= 0
						? (IW - 1 - (KW - 1) * DW + PW) / SW + 1 : 0;
			oa = oa > OW ? OW : oa;
			ob = ob > OW ? OW : ob < oa ? oa : ob;
			for (long ow = 0; ow < OW; ow++) {
				$C best = ($C)0;
				if (rows && ow >= oa && ow < ob) {
					const $C *c = col + ow * SW - PW;
					best = c[0];
					for (long kw = 1; kw < KW; kw++)
						best = c[kw * DW] > best ? c[kw * DW] : best;
				} else {
					long any = 0;
					for (long kw = 0; kw < KW && rows; kw++) {
						const long iw = ow * SW - PW + kw * DW;
						if (iw < 0 || iw >= IW)
							continue;
						if (!any++ || col[iw] > best)
							best = col[iw];
					}
				}
				y[o + ow] = ox_st_$S(best);
			}
		}
		return;
	}
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
