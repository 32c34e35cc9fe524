/* weights.h: the weights writer (codegen/weights.c), which codegen/c.c
 * drives. */
#ifndef OX_WEIGHTS_H
#define OX_WEIGHTS_H
#include "cg.h"
#include <stdint.h>
#include <stdio.h>

/*  * The blob: every constant the code reads, each at a 64-byte aligned
 * offset (woff), zero bytes between, element bytes little-endian as in the
 * model. It is walked in pieces (ox_w_walk) and streamed to its files, so
 * a big model's weights are never copied whole in memory. A program of
 * several specializations (buckets) has one blob: a constant whose bytes
 * an earlier specialization already put there is stored once. */
typedef struct {
	int spec;            /* the graph it comes from (an index of gs) */
	ox_id id;            /* its value there */
} wentry;

typedef struct wlayout {
	ox_graph **gs;       /* the specializations, then the bodies of their control nodes */
	int ngs;
	int64_t **woff;      /* per specialization, per value: offset in the blob, -1 if not there */
	wentry *e;           /* the blob's tensors in order */
	int ne;
	size_t size;
	int mode;            /* OX_CG_WEIGHTS_* */
	const char *prefix;
} wlayout;

typedef int (*sink_fn)(void *ctx, const unsigned char *p, size_t n);

/* decimal bytes, 24 a line: the C fallback (any compiler, any size) */
typedef struct {
	FILE *f;
	size_t at;
} dec_state;

/* small blobs: one string literal in OUT_weights.c, printable characters as
 * themselves, the rest as 3-digit octal escapes ('?' too, for trigraphs) */
typedef struct {
	ox_buf *b;
	size_t at;
} str_state;

/* external blob header: 64 bytes, little-endian (docs/api.md) */
#define BLOB_MAGIC "ONNXCCWB"
#define BLOB_VERSION 1
#define BLOB_HEADER 64

/* the tensor of blob entry k */
const ox_tensor *ox_w_tensor(const wlayout *L, int k);
/* the blob in order, in pieces, to fn(ctx, bytes, n); -1 when fn fails */
int ox_w_walk(const wlayout *L, sink_fn fn, void *ctx);
/* the blob of the specializations (and their control bodies): every constant
 * the code reads at a 64-byte aligned offset, each stored once; 0, or -1 */
int ox_w_layout(wlayout *L, ox_graph *const *specs, int nspecs);
/* L's memory */
void ox_w_free(wlayout *L);
/* sinks for ox_w_walk: the CRC-32 (IEEE, as zlib) into *(uint32_t *)ctx */
int ox_w_crc_sink(void *ctx, const unsigned char *p, size_t n);
/* ... decimal bytes, 24 a line, to a dec_state (the C fallback) */
int ox_w_dec_sink(void *ctx, const unsigned char *p, size_t n);
/* ... a string literal into a str_state (small blobs) */
int ox_w_str_sink(void *ctx, const unsigned char *p, size_t n);
/* v as n little-endian bytes at p */
void ox_w_put_le(unsigned char *p, uint64_t v, int n);
/* is tensor t written as bytes rather than typed elements (--weights c)? */
int ox_w_as_bytes(const ox_tensor *t);
/* the C array of blob entry k (--weights c) */
const char *ox_w_array(const wlayout *L, int k);
/* blob entry k as a typed C array (--weights c) */
void ox_w_c_array(ox_buf *b, const wlayout *L, int k);
/* the C pointer expression of value id: in the arena, or (cnst) in the weights */
const char *ox_w_vptr(ox_graph *g, ox_id id, int cnst, char *buf, size_t n, const wlayout *L);
/* OUT_weights.c's body for a blob file beside it (.incbin or #embed) */
void ox_w_embed(ox_buf *w, const char *P, const char *PU, const char *wname, size_t wsize);
/* PREFIX_init for --weights external (on the CUDA target PREFIX_check_blob) */
void ox_w_init_fn(ox_buf *c, const char *P, const char *PU, int cuda);
#endif
