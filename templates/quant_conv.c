/* quant_conv.c: integer convolution for ConvInteger and QLinearConv, 1 to
 * 3 spatial axes (1-D and 2-D calls pass leading axes of size 1), with
 * groups, strides, dilations and pads; int32 sums, no heap.
 * @needs quant_conv_sums
 * 8-bit operands of either signedness come in as bytes: element value
 * minus zero point is (byte ^ flip) - zoff, where flip is 0x80 for int8
 * (and 0 for uint8) and zoff folds the zero point with the 128 that the
 * flip added, so one instance serves every u8/i8 pairing. Padding reads
 * as the zero point (it adds nothing), as in the ONNX reference, which
 * subtracts zero points before padding. Sums wrap modulo 2^32 (the spec
 * lets the accumulation overflow in 32 bits; uint32_t keeps that defined).
 * Output: yi (int32 sums, ConvInteger) or yq (bytes of
 * clamp(rint(sum * mult[m] + yz), ylo, yhi), QLinearConv).
 * The sums are templates/quant_conv_sums.c's. Instantiate once with
 * ox_cg_use(cg, "quant_conv", OX_U8) after quant_conv_sums; needs ox_qsat.
 */
OX_STATIC void ox_qconv(const uint8_t *restrict x, const uint8_t *restrict w, const int32_t *restrict bias,
		     int32_t *restrict yi, uint8_t *restrict yq, const float *restrict mult, int32_t yz, int32_t ylo,
		     int32_t yhi, int xf, int32_t xz, int wf, const int32_t *restrict wz, long N, long C, long M, long G,
		     long ID, long IH, long IW, long OD, long OH, long OW, long KD, long KH, long KW, long SD, long SH,
		     long SW, long PD, long PH, long PW, long DD, long DH, long DW)
{
	const long Cg = C / G, Mg = M / G, isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
	for (long n = 0; n < N; n++)
	for (long m = 0; m < M; m++) {
		const uint8_t *xg = x + (n * C + m / Mg * Cg) * isz, *wm = w + m * Cg * ksz;
		const uint32_t b0 = bias ? (uint32_t)bias[m] : 0;
		for (long od = 0; od < OD; od++)
		for (long oh = 0; oh < OH; oh++) {
			const long id0 = od * SD - PD, ih0 = oh * SH - PH, orow = (n * M + m) * osz + (od * OH + oh) * OW;
			/* one row in chunks of 256 sums kept on the stack */
			for (long ox0 = 0; ox0 < OW; ox0 += 256) {
				const long cnt = OW - ox0 < 256 ? OW - ox0 : 256;
				uint32_t acc[256];
				for (long i = 0; i < cnt; i++)
					acc[i] = b0;
				ox_qconv_sums(xg, wm, acc, ox0, cnt, xf, xz, wf, wz[m], Cg, ID, IH, IW, KD, KH, KW, SW, id0, ih0,
					      PW, DD, DH, DW);
				if (yi) {
					for (long i = 0; i < cnt; i++)
						yi[orow + ox0 + i] = (int32_t)acc[i];
				} else {
					const double mu = mult[m];
					for (long i = 0; i < cnt; i++)
						yq[orow + ox0 + i] = (uint8_t)ox_qsat(rint((double)(int32_t)acc[i] * mu + yz), ylo, yhi);
				}
			}
		}
	}
}
