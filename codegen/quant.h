/* quant.h: what the C emitter of the quantization ops (codegen/c/emit_quant.c,
 * which defines these) and their CUDA kernels (codegen/cuda/cuda_quant.c) share:
 * the statements of one element and the requantization tables, so that
 * both targets print one description. */
#ifndef OX_QUANT_H
#define OX_QUANT_H
#include "cg.h"

/* QuantizeLinear (dq 0) / DequantizeLinear (dq 1): the templates and
 * helpers the statements below call, added once (-1 after an error);
 * `const float s, z` for the scale and zero point at index idx; then
 * out0[k] from in0[k]. zdt: the zero point's dtype. */
int ox_cg_qdq_use(ox_cg *cg, ox_graph *g, ox_node *n, int dq);
void ox_cg_qdq_decl(ox_buf *b, ox_graph *g, ox_node *n, const char *ind, const char *idx, int zdt);
void ox_cg_qdq_stmt(ox_buf *b, ox_graph *g, ox_node *n, const char *ind, int dq);

/* the range of integer type dt (the 8-bit ones, 4-, 2-, 16-bit); ox_qsat
 * (double v clamped to [lo, hi], NaN giving lo) added to the helpers:
 * QLinearConv's and QLinearMatMul's requantization */
void ox_cg_qrange(int dt, long *lo, long *hi);
void ox_cg_use_qsat(ox_cg *cg);

/* element i of an INTS attribute of the integer ops (0 when absent) */
long long ox_cg_qi_at(const ox_node *n, const char *attr, int i);
/* `ST const int32_t name[len] = {...};` of attribute attr (one value
 * repeated when the list has one), each plus add, at indent ind; st the
 * storage class: "static" in a function, ox_cg_static's at file scope */
void ox_cg_qi_table(ox_buf *b, const ox_node *n, const char *attr, const char *ind, const char *st, const char *name,
		    long long len, int add);
/* int32 expression e requantized by multiplier m and shift s (C
 * expressions), plus output zero point ox_zp[yzi], clamped to ox_clip */
void ox_cg_qi_out(char *buf, size_t sz, const ox_node *n, const char *e, const char *m, const char *s, int yzi);
/* onnxcc::QAdd, QRescale: the statements of out0[k] */
int ox_cg_qi_elem(ox_buf *b, ox_graph *g, ox_node *n, const char *ind);
/* onnxcc::QPool: index space d = {N C, OH, OW}, statements of output (c,
 * oh, ow); its loops' counters of b's index type (ox_buf's $I) */
int ox_cg_qpool(ox_buf *b, ox_graph *g, ox_node *n, const char *ind, int64_t d[3]);
#endif
