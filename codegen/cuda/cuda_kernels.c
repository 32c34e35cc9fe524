/* cuda_kernels.c: what every kernel emitter of --target cuda prints
 * with. A node's kernel comes from its op's family, the cuda column of
 * ir/ops.def (the dispatch: codegen/cuda/cuda_dispatch.c), and is printed
 * into the kernels through ox_cu_kbuf's buffer (its index and element
 * types); the node's body is the host code that launches it on ox_st.
 * Shared here: that buffer and ox_cu_finish, the index-space kernels of a
 * thread per element (ox_cu_index_kernel_rt) and their launches, run-time
 * dims as kernel parameters (ox_cu_rt_dim), the storage dims of a value
 * (ox_cu_phys), the index checks, the block sizes.
 */
#include "cuda_kernels.h"
#include "../../ir/family.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Index arithmetic in 32 bits when every tensor of the node fits (64-bit
 * divisions by constants cost several times more on the GPU): a kernel's
 * text is printed with $I for its index type and $L for its literals'
 * suffix (ox_cu_kbuf). */
int ox_cu_fits32(ox_graph *g, const ox_node *n)
{
	for (int k = 0; k < n->nin + n->nout; k++) {
		ox_id id = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (id >= 0 && ox_value_max_storage(g, &g->vals[id]) >= ((int64_t)1 << 30))
			return 0;
	}
	return 1;
}

/* the element types the kernels take (OX_T) */
int ox_cu_ftype(int dt)
{
	return dt == OX_F32 || dt == OX_F16 || dt == OX_BF16;
}

/* the buffer of node n's kernel text, its fields (cg.h, ox_buf) set: $I
 * int when every tensor of the node fits (ox_cu_fits32), OX_T the type of
 * its first output */
ox_buf ox_cu_kbuf(ox_graph *g, const ox_node *n)
{
	return (ox_buf){.ix = ox_cu_fits32(g, n) ? "int" : "long",
			.dt = n->nout > 0 && n->out[0] >= 0 ? g->vals[n->out[0]].dtype : OX_UNDEF};
}

/* the kernel text t, named kname, into the file's kernels; frees t */
void ox_cu_finish(ox_cg *cg, const char *kname, ox_buf *t)
{
	ox_cg_helper(cg, kname, t->s);
	ox_buf_free(t);
}

int ox_cu_block_of(int64_t n)
{
	int b = 256;
	while (b > 64 && (n + b - 1) / b < OX_CU_SMS)
		b /= 2;
	return b;
}

int ox_cu_phys(const ox_value *v, int64_t *dims)
{
	if (v->layout == OX_L_BLOCKED && v->shape.rank == 4) {
		const int64_t b = v->lp[0];
		dims[0] = v->shape.d[0], dims[1] = (v->shape.d[1] + b - 1) / b, dims[2] = v->shape.d[2];
		dims[3] = v->shape.d[3], dims[4] = b;
		return 5;
	}
	for (int d = 0; d < v->shape.rank; d++)
		dims[d] = v->shape.d[d];
	return v->shape.rank;
}

const char *ox_cu_rt_dim(ox_cu_rt *R, ox_dim d, char *buf, size_t sz)
{
	if (!R || !ox_dim_is_rt(R->g, d)) {
		ox_cg_snprintf(buf, sz, "%lld", (long long)(R ? ox_dim_eval(R->g, d) : d));
		return buf;
	}
	int k = 0;
	while (k < R->n && R->d[k] != d)
		k++;
	if (k == R->n) {
		if (R->n == 16)
			return NULL;
		R->d[R->n++] = d;
	}
	ox_cg_snprintf(buf, sz, "ox_r%d", k);
	return buf;
}

void ox_cu_rt_params(ox_cg *cg, const ox_cu_rt *R, ox_buf *params, ox_buf *args)
{
	for (int k = 0; R && k < R->n; k++) {
		if (params)
			ox_buf_printf(params, ", const $I ox_r%d", k);
		if (args)
			ox_buf_printf(args, ", (long)%s", ox_cg_dim(cg, R->d[k]));
	}
}

void ox_cu_launch_rt(ox_cg *cg, const char *kname, ox_dim n, int per, int threads, const char *args)
{
	ox_cg_printf(cg, "\t{\n\t\tconst long ox_n = %s;\n\t\tif (ox_n > 0)\n"
			 "\t\t\tOX_LAUNCH(%s, (unsigned)((ox_n + %d) / %d), %d, 0, ox_st, %s);\n\t}\n",
		     ox_cg_dim(cg, n), kname, per - 1, per, threads, args);
}

/* the product of dims[0..r-1] */
static ox_dim dims_numel(ox_graph *g, const ox_dim *dims, int r)
{
	ox_dim tot = 1;
	for (int k = 0; k < r; k++)
		tot = g ? ox_dim_mul(g, tot, dims[k]) : tot * dims[k];
	return tot;
}

/* A kernel of one thread per element of an index space of rank r: `body`
 * reads the element's multi-index from i0..i<r-1> (and its linear index
 * i). For the copy plans of the data ops, Concat and the fused elementwise
 * bodies. Run-time dims (R) become parameters after params; -1 when there
 * are too many. */
int ox_cu_index_kernel_rt(ox_buf *t, const char *kname, const char *params, const ox_dim *dims, int r,
			  const char *body, ox_cu_rt *R)
{
	ox_graph *g = R ? R->g : NULL;
	char tb[32], bb[32], db[32];
	ox_buf dec = {0};
	ox_dim below = 1;
	int bad = !ox_cu_rt_dim(R, dims_numel(g, dims, r), tb, sizeof tb);
	for (int k = r - 1; k >= 0 && !bad; k--) {
		char v[16];
		ox_cg_snprintf(v, sizeof v, "i%d", k);
		/* (as a word: nvcc warns of unused variables) */
		if (ox_cg_uses_name(body, v)) {
			bad = !ox_cu_rt_dim(R, below, bb, sizeof bb) || !ox_cu_rt_dim(R, dims[k], db, sizeof db);
			ox_buf_printf(&dec, "\tconst $I i%d = i / %s %% %s;\n", k, bb, db);
		}
		below = g ? ox_dim_mul(g, below, dims[k]) : below * dims[k];
	}
	if (bad) {
		ox_buf_free(&dec);
		return -1;
	}
	const int B = !R || !R->n ? ox_cu_block_of(dims_numel(NULL, dims, r)) : 256; /* (as ox_cu_index_launch) */
	ox_buf_printf(t, "__global__ void __launch_bounds__(%d) %s(%s", B, kname, params);
	ox_cu_rt_params(NULL, R, t, NULL);
	ox_buf_printf(t, ")\n{\n\tconst $I i = ($I)blockIdx.x * %d + threadIdx.x;\n\tif (i >= %s%s)\n\t\treturn;\n",
		      B, tb, tb[0] == 'o' ? "" : "$L");
	ox_buf_puts(t, dec.s ? dec.s : "");
	ox_buf_puts(t, body);
	ox_buf_puts(t, "}\n\n");
	ox_buf_free(&dec);
	return 0;
}

void ox_cu_index_kernel(ox_buf *t, const char *kname, const char *params, const int64_t *dims, int r, const char *body)
{
	ox_cu_index_kernel_rt(t, kname, params, dims, r, body, NULL);
}

void ox_cu_index_launch(ox_cg *cg, const char *kname, const ox_dim *dims, int r, const char *ptrs, const ox_cu_rt *R)
{
	if (!R || !R->n) {
		const int64_t tot = dims_numel(NULL, dims, r);
		const int B = ox_cu_block_of(tot);
		if (tot > 0)
			ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, %d, 0, ox_st, %s);\n", kname, (long long)((tot + B - 1) / B), B,
				     ptrs);
		return;
	}
	ox_buf a = {0};
	ox_buf_puts(&a, ptrs);
	ox_cu_rt_params(cg, R, NULL, &a);
	ox_cu_launch_rt(cg, kname, dims_numel(R->g, dims, r), 256, 256, a.s);
	ox_buf_free(&a);
}

void ox_cu_index_check(ox_cg *cg, ox_buf *b, int lvl, const char *var, const char *src, const char *D)
{
	static const char tabs[] = "\t\t\t\t\t";
	ox_cg_fails(cg, OX_CG_FAIL_INDEX);
	ox_buf_printf(b, "%.*sint64_t %s = (int64_t)%s;\n", lvl, tabs, var, src);
	ox_buf_printf(b, "%.*sif (%s < 0)\n%.*s%s += %s;\n", lvl, tabs, var, lvl + 1, tabs, var, D);
	ox_buf_printf(b, "%.*sif ((uint64_t)%s >= (uint64_t)%s) {\n"
			 "%.*satomicCAS(st, 0, %s_ERR_INDEX);\n",
		      lvl, tabs, var, D, lvl + 1, tabs, cg->prefix_upper);
	ox_buf_printf(b, "%.*sreturn;\n"
			 "%.*s}\n",
		      lvl + 1, tabs, lvl, tabs);
}

int ox_cu_plain_num(int dt)
{
	return dt == OX_F32 || dt == OX_F64 || dt == OX_F16 || dt == OX_BF16 || dt == OX_I8 || dt == OX_U8 ||
	       dt == OX_I16 || dt == OX_U16 || dt == OX_I32 || dt == OX_U32 || dt == OX_I64 || dt == OX_U64;
}

/* the head of a kernel of a warp per row (4 a block), rows of D: a
 * run-time D is the parameter ox_len after params (ox_cu_rows_launch passes
 * it); len, when not NULL, gets D's text in the kernel */
void ox_cu_warp_rows(ox_buf *t, ox_graph *g, const char *fname, const char *op, ox_dim rows, ox_dim D,
		      const char *kname, const char *params, char *len, size_t lensz)
{
	const int rtD = ox_dim_is_rt(g, D);
	if (len)
		ox_cg_snprintf(len, lensz, rtD ? "ox_len" : "%lld", (long long)D);
	/* a run-time count of rows: the parameter ox_rows (ox_cu_rows_launch) */
	const int rt = ox_dim_is_rt(g, rows);
	char rs[128], lim[32];
	if (rt)
		ox_dim_str(g, rows, rs, sizeof rs), ox_cg_snprintf(lim, sizeof lim, "ox_rows");
	else
		ox_cg_snprintf(rs, sizeof rs, "%lld", (long long)rows), ox_cg_snprintf(lim, sizeof lim, "%lld$L", (long long)rows);
	char ds[32] = "the run's length";
	if (!rtD)
		ox_cg_snprintf(ds, sizeof ds, "%lld", (long long)D);
	ox_buf_printf(t, "/* %s: %s of %s rows of %s, a warp each */\n"
			 "__global__ void __launch_bounds__(128) %s(%s%s%s)\n"
			 "{\n"
			 "\tconst $I row = ($I)blockIdx.x * 4 + threadIdx.x / 32;\n"
			 "\tconst int lane = threadIdx.x %% 32;\n",
		      fname, op, rs, ds, kname, params, rtD ? ", const $I ox_len" : "",
		      rt ? ", const $I ox_rows" : "");
	ox_buf_printf(t, "\tif (row >= %s)\n"
			 "\t\treturn;\n",
		      lim);
}

/* ox_cu_warp_rows' launch, 4 rows a block, args its arguments before ox_len
 * (a run-time D) and ox_rows */
void ox_cu_rows_launch(ox_cg *cg, ox_graph *g, const char *kname, ox_dim rows, ox_dim D, const char *args)
{
	char a[400];
	if (ox_dim_is_rt(g, D)) {
		ox_cg_snprintf(a, sizeof a, "%s, (long)%s", args, ox_cg_dim(cg, D));
		args = a;
	}
	if (!ox_dim_is_rt(g, rows))
		ox_cg_printf(cg, "\tOX_LAUNCH(%s, %lld, 128, 0, ox_st, %s);\n", kname, (long long)((rows + 3) / 4), args);
	else {
		char b[440];
		ox_cg_snprintf(b, sizeof b, "%s, ox_n", args);
		ox_cu_launch_rt(cg, kname, rows, 4, 128, b);
	}
}
