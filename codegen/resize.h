/* resize.h: Resize's options and tap tables, computed once for both
 * targets' emitters (codegen/c/emit_nn.c, which defines them; cuda_nn.c)
 * from templates/resize_taps.c, the text the generated code of a Resize
 * with run-time sizes uses too. */
#ifndef OX_RESIZE_H
#define OX_RESIZE_H
#include "cg.h"
#include <math.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../templates/resize_taps.c"
#pragma GCC diagnostic pop

/* mode, coordinate transform, nearest_mode, antialias, exclude_outside and
 * the cubic coefficient, as the attributes give them (ox_error and -1 for
 * what is not supported); *ctm and *nm: the transform's and nearest mode's
 * names */
int ox_cg_resize_opts(ox_graph *g, ox_node *n, ox_rz_opts *ro, const char **ctm, const char **nm);
/* Taps of one axis: nt per output index, offsets (index * stride, or -1 in
 * tap 0 outside the input) and weights, compacted to the most any output
 * has; -1 for tables over 2^22 entries */
int ox_cg_resize_axis(const ox_rz_opts *ro, int64_t in, int64_t out, double scale, double r0, double r1,
		      int64_t stride, int *ntap, long **offp, float **wp);
/* "linear (antialias)", "nearest (floor)": the mode for comments, nm the
 * nearest_mode ox_cg_resize_opts named */
void ox_cg_resize_what(const ox_rz_opts *ro, const ox_node *n, const char *nm, char *buf, size_t sz);
/* A Resize with run-time sizes or scales (n->scratch): the C target's
 * node text up to its tap tables, which it writes into the scratch after
 * a header (od[r], nt[r], the offsets of off[a] and wt[a] from the header's
 * end, 32 * r bytes), for a gather kernel; 0, or -1 (reported) */
int ox_cg_resize_rt_plan(ox_cg *cg, ox_graph *g, ox_node *n, ox_rz_opts *ro, const char *what, const char *ctm);
/* a table `PREFIX DECL = {...};` of cnt longs (iv) or floats (fv), each
 * line of 16 indented by ind */
void ox_cg_table(ox_buf *t, const char *decl, const long *iv, const float *fv, int64_t cnt, const char *ind);
#endif
