/* ox_cuda.h: the prelude of every OUT.cu that onnxcc --target cuda writes.
 * Built by nvcc, or (OUT built with -DOX_CUDA_EMU, onnxcc --cuda-emu) by
 * the host C++ compiler against ox_cuda_emu.h, which runs the kernels on
 * the CPU: the source is the same in both builds. Every kernel is
 * launched through OX_LAUNCH; dynamic shared memory is OX_DYN_SMEM. The C
 * that the C target's emitters write (node functions run on the device,
 * their kernels, the f16 helpers) is device code here: its file-scope
 * functions and constants are printed [[maybe_unused]] static __device__
 * (ox_cg_static, codegen/text.c). */
#if defined(OX_CUDA_EMU)
#include "ox_cuda_emu.h"
#else
#include <cuda_runtime.h>
#define OX_LAUNCH(k, grid, block, smem, stream, ...) k<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#define OX_DYN_SMEM(T, name) extern __shared__ __align__(16) unsigned char ox_dyn_smem_[]; T *name = (T *)ox_dyn_smem_
#endif
/* a loop the device compiler unrolls (accumulators stay in registers) */
#if defined(__CUDACC__)
#define OX_UNROLL _Pragma("unroll")
#else
#define OX_UNROLL
#endif
/* the C target's kernels in plain C (no vector extensions: not device code) */
#define OX_VF_PORTABLE 1
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef restrict
#define restrict __restrict__
#endif
#define _Alignas(n) alignas(n)

/* the pointers of a node's tasks, passed by value to their kernel */
typedef struct {
	void *p[32];
} ox_ptrs;

/* the split-K workspace of the convolutions and GEMMs (codegen/cuda/cuda_tile.c),
 * allocated by PREFIX_init: OX_WS_BYTES; and their tiles' arrival counters
 * (ox_split_last), OX_CTR_COUNT of them, zero between runs */
static float *ox_cu_ws;
static unsigned int *ox_cu_ctr;

/* the weights on the device, for the C run by device threads (bodies of
 * control nodes); set once by PREFIX_init */
__device__ const unsigned char *ox_dev_W;
__global__ void ox_set_dev_w(const unsigned char *w)
{
	ox_dev_W = w;
}

/* the C target's parallel-for, on one device thread: in order */
__device__ inline void ox_parallel(void (*task)(void *, long, long), void *ctx, long n)
{
	task(ctx, 0, n);
}

/* Four consecutive elements at p in one load or store (16 bytes of f32,
 * 8 of f16 or bf16): the tiles' global loads and the fused elementwise
 * kernels (codegen/cuda/cuda_tile.c, cuda_map.c) where the emitter proved p aligned
 * (arena offsets, weights, the run's arena checked). Under emulation a
 * misaligned p stops the program, as the GPU's misaligned-address error
 * would. */
#if defined(OX_CUDA_EMU)
template <typename T> inline void ox_ld4(const T *p, T v[4])
{
	if ((uintptr_t)p % (4 * sizeof(T))) {
		fprintf(stderr, "ox_ld4: misaligned address %p\n", (const void *)p);
		abort();
	}
	memcpy(v, p, 4 * sizeof(T));
}
template <typename T> inline void ox_st4(T *p, const T v[4])
{
	if ((uintptr_t)p % (4 * sizeof(T))) {
		fprintf(stderr, "ox_st4: misaligned address %p\n", (const void *)p);
		abort();
	}
	memcpy(p, v, 4 * sizeof(T));
}
#else
__device__ inline void ox_ld4(const float *p, float v[4])
{
	const float4 q = *(const float4 *)p;
	v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ inline void ox_ld4(const uint16_t *p, uint16_t v[4])
{
	const uint2 q = *(const uint2 *)p;
	v[0] = (uint16_t)q.x, v[1] = (uint16_t)(q.x >> 16), v[2] = (uint16_t)q.y, v[3] = (uint16_t)(q.y >> 16);
}
__device__ inline void ox_st4(float *p, const float v[4])
{
	*(float4 *)p = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ inline void ox_st4(uint16_t *p, const uint16_t v[4])
{
	*(uint2 *)p = make_uint2(v[0] | (unsigned)v[1] << 16, v[2] | (unsigned)v[3] << 16);
}
#endif

/* Split-K in one kernel (codegen/cuda/cuda_tile.c): each of a tile's S
 * blocks writes its part to the workspace and arrives at the tile's
 * counter c; ox_split_last is true in the block that arrives last, which
 * then reads the S parts through L2 (ox_ldcg: another SM wrote them) and
 * sums them in split order, so the result does not depend on which block
 * came last. That block sets the counter back to 0 for the next run. Every
 * thread of the block must call it. */
__device__ inline bool ox_split_last(unsigned int *c, unsigned int S)
{
	__shared__ unsigned int ticket;
	__threadfence(); /* this thread's part, visible to the whole device */
	__syncthreads(); /* ... for each thread before the block arrives */
	if (threadIdx.x == 0) {
		ticket = atomicAdd(c, 1u);
		if (ticket == S - 1)
			*c = 0;
	}
	__syncthreads();
	const bool last = ticket == S - 1;
	__syncthreads(); /* ticket read by all before another call writes it */
	if (last)
		__threadfence();
	return last;
}
#if defined(OX_CUDA_EMU)
inline float ox_ldcg(const float *p) { return *p; }
inline uint16_t ox_ldcg(const uint16_t *p) { return *p; }
inline double ox_ldcg(const double *p) { return *p; }
#else
__device__ inline float ox_ldcg(const float *p) { return __ldcg(p); }
__device__ inline uint16_t ox_ldcg(const uint16_t *p) { return __ldcg((const unsigned short *)p); }
__device__ inline double ox_ldcg(const double *p) { return __ldcg(p); }
#endif

/* Tensor cores: x rounded to TF32 (10-bit mantissa, to nearest, ties
 * away: cvt.rna), and d += A B on one warp's 16 x 8 x 8 TF32 product, the
 * fragments laid out as the PTX ISA's mma.m16n8k8 (lane = 4 g + t):
 * a[0..3] = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4];
 * b[0..1] = B[t][g], B[t+4][g];
 * d[0..3] = D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1].
 * Under emulation the warp's fragments meet in one exchange and each lane
 * computes its four sums from them (in order over k, f32 FMAs). */
__device__ inline unsigned ox_tf32(float x)
{
#if defined(OX_CUDA_EMU)
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7f800000u) != 0x7f800000u) /* (Inf and NaN as they are) */
		u = (u + 0x1000u) & 0xffffe000u;
	return u;
#else
	unsigned r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return r;
#endif
}
#if defined(OX_CUDA_EMU)
struct ox_mma_frag {
	unsigned a[4], b[2];
};
#endif
__device__ inline void ox_mma_tf32(float d[4], const unsigned a[4], const unsigned b[2])
{
#if defined(OX_CUDA_EMU)
	const ox_mma_frag mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
	ox_emu::warp_mma(&mine, [&](const ox_mma_frag *const *f, unsigned lane) {
		const unsigned g = lane / 4, t = lane % 4;
		for (int r = 0; r < 4; r++) {
			const unsigned row = g + r / 2 * 8, col = t * 2 + r % 2;
			float s = d[r];
			for (unsigned k = 0; k < 8; k++) {
				float x, y;
				memcpy(&x, &f[row % 8 * 4 + k % 4]->a[k / 4 * 2 + row / 8], 4);
				memcpy(&y, &f[col * 4 + k % 4]->b[k / 4], 4);
				s = fmaf(x, y, s);
			}
			d[r] = s;
		}
	});
#else
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		     "{%0, %1, %2, %3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

/* f16 and bf16 tensor cores: two values rounded to f16 (bf16), to
 * nearest even, as one f16x2 (bf16x2) register, lo in the low half
 * (cvt.rn.f16x2.f32); and d += A B on one warp's 16 x 8 x 16 product in
 * f32, the fragments as the PTX ISA's mma.m16n8k16 lays them out (lane =
 * 4 g + t; each register two elements, the lower k in the low half):
 * a[0..3] = A[g][2t..2t+1], A[g+8][2t..2t+1], A[g][2t+8..2t+9], A[g+8][2t+8..2t+9];
 * b[0..1] = B[2t..2t+1][g], B[2t+8..2t+9][g];
 * d[0..3] as ox_mma_tf32's. Emulated as ox_mma_tf32 (in order over k). */
#if defined(OX_CUDA_EMU)
inline unsigned ox_emu_f16_bits(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	const uint32_t s = u >> 16 & 0x8000u, e = u >> 23 & 0xffu, m = u & 0x7fffffu;
	if (e == 0xffu)
		return s | 0x7c00u | (m ? 0x200u : 0u);
	const int ex = (int)e - 112; /* the f16 exponent field */
	if (ex >= 31)
		return s | 0x7c00u;
	uint32_t r, rem, half;
	if (ex <= 0) { /* subnormal: the value over 2^-24 */
		if (ex < -10)
			return s;
		const int sh = 14 - ex;
		r = (m | 0x800000u) >> sh, rem = (m | 0x800000u) & ((1u << sh) - 1), half = 1u << (sh - 1);
	} else {
		r = (uint32_t)ex << 10 | m >> 13, rem = m & 0x1fffu, half = 0x1000u;
	}
	if (rem > half || (rem == half && (r & 1)))
		r++; /* (a carry into the exponent is right, up to infinity) */
	return s | r;
}
inline unsigned ox_emu_bf16_bits(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return u >> 16 | 0x40u; /* NaN stays NaN */
	return (u + 0x7fffu + (u >> 16 & 1u)) >> 16;
}
inline float ox_emu_from_bits(unsigned h, int bf)
{
	if (bf) {
		const uint32_t u = h << 16;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	const unsigned e = h >> 10 & 0x1fu, m = h & 0x3ffu;
	const float f = e == 31 ? (m ? NAN : INFINITY) : e ? ldexpf((float)(m | 0x400u), (int)e - 25) : ldexpf((float)m, -24);
	return h & 0x8000u ? -f : f;
}
inline void ox_emu_mma16(float d[4], const unsigned a[4], const unsigned b[2], int bf)
{
	const ox_mma_frag mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
	ox_emu::warp_mma(&mine, [&](const ox_mma_frag *const *f, unsigned lane) {
		const unsigned g = lane / 4, t = lane % 4;
		for (int r = 0; r < 4; r++) {
			const unsigned row = g + r / 2 * 8, col = t * 2 + r % 2;
			float s = d[r];
			for (unsigned k = 0; k < 16; k++) {
				const unsigned ra = f[row % 8 * 4 + k % 8 / 2]->a[k / 8 * 2 + row / 8];
				const unsigned rb = f[col * 4 + k % 8 / 2]->b[k / 8];
				s = fmaf(ox_emu_from_bits(ra >> k % 2 * 16 & 0xffffu, bf), ox_emu_from_bits(rb >> k % 2 * 16 & 0xffffu, bf), s);
			}
			d[r] = s;
		}
	});
}
#endif
__device__ inline unsigned ox_f16x2(float lo, float hi)
{
#if defined(OX_CUDA_EMU)
	return ox_emu_f16_bits(lo) | ox_emu_f16_bits(hi) << 16;
#else
	unsigned r;
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
#endif
}
__device__ inline unsigned ox_bf16x2(float lo, float hi)
{
#if defined(OX_CUDA_EMU)
	return ox_emu_bf16_bits(lo) | ox_emu_bf16_bits(hi) << 16;
#else
	unsigned r;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
#endif
}
/* one value rounded to f16 (bf16), to nearest even, as its 16 bits
 * (cvt.rn.f16.f32): the tiles' stores into their f16 (bf16) shared tiles */
__device__ inline uint16_t ox_f16(float x)
{
#if defined(OX_CUDA_EMU)
	return (uint16_t)ox_emu_f16_bits(x);
#else
	uint16_t r;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
	return r;
#endif
}
__device__ inline uint16_t ox_bf16(float x)
{
#if defined(OX_CUDA_EMU)
	return (uint16_t)ox_emu_bf16_bits(x);
#else
	uint16_t r;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
	return r;
#endif
}
/* Four 8 x 8 matrices of 16-bit values from shared memory, the warp
 * together (ldmatrix.sync.aligned.m8n8.x4.shared.b16): lane l gives the
 * address of row l % 8 of matrix l / 8 (8 values, 16-byte aligned) and
 * gets in r[j] two values of matrix j: row l / 4's columns 2 (l % 4) and
 * 2 (l % 4) + 1, the first in the low half; with .trans (ox_ldsm4t) column
 * l / 4's rows 2 (l % 4) and 2 (l % 4) + 1. So the fragments of
 * ox_mma_f16 come from tiles whose rows run along k: A's rows directly,
 * B's (k-major rows along n) transposed. Under emulation the warp's
 * addresses meet in one exchange, as ox_mma_tf32's fragments do. */
#if defined(OX_CUDA_EMU)
inline void ox_emu_ldsm4(unsigned r[4], const uint16_t *p, int trans)
{
	if ((uintptr_t)p % 16)
		ox_emu::fatal("ldmatrix: a row address not 16-byte aligned");
	ox_emu::warp_mma(p, [&](const uint16_t *const *row, unsigned lane) {
		const unsigned q = lane / 4, t = lane % 4 * 2;
		for (int j = 0; j < 4; j++) {
			const uint16_t *const *m = row + j * 8;
			const unsigned lo = trans ? m[t][q] : m[q][t], hi = trans ? m[t + 1][q] : m[q][t + 1];
			r[j] = lo | hi << 16;
		}
	});
}
#endif
__device__ inline void ox_ldsm4(unsigned r[4], const uint16_t *p)
{
#if defined(OX_CUDA_EMU)
	ox_emu_ldsm4(r, p, 0);
#else
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"((unsigned)__cvta_generic_to_shared(p)));
#endif
}
__device__ inline void ox_ldsm4t(unsigned r[4], const uint16_t *p)
{
#if defined(OX_CUDA_EMU)
	ox_emu_ldsm4(r, p, 1);
#else
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"((unsigned)__cvta_generic_to_shared(p)));
#endif
}
__device__ inline void ox_mma_f16(float d[4], const unsigned a[4], const unsigned b[2])
{
#if defined(OX_CUDA_EMU)
	ox_emu_mma16(d, a, b, 0);
#else
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		     "{%0, %1, %2, %3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ inline void ox_mma_bf16(float d[4], const unsigned a[4], const unsigned b[2])
{
#if defined(OX_CUDA_EMU)
	ox_emu_mma16(d, a, b, 1);
#else
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		     "{%0, %1, %2, %3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

/* Scalar f32 forms of the elementwise ops, the rendering of an epilogue
 * or fused body (codegen/c/emit_vec.c, one per thread) next to the C
 * target's vector forms (templates/vf.c, vmath.c). */
__device__ inline float ox_sf_set1(float x) { return x; }
__device__ inline float ox_sf_zero(void) { return 0.0f; }
__device__ inline float ox_sf_add(float a, float b) { return a + b; }
__device__ inline float ox_sf_sub(float a, float b) { return a - b; }
__device__ inline float ox_sf_mul(float a, float b) { return a * b; }
__device__ inline float ox_sf_div(float a, float b) { return a / b; }
__device__ inline float ox_sf_neg(float a) { return -a; }
__device__ inline float ox_sf_abs(float a) { return fabsf(a); }
__device__ inline float ox_sf_sqrt(float a) { return sqrtf(a); }
__device__ inline float ox_sf_exp(float a) { return expf(a); }
__device__ inline float ox_sf_erf(float a) { return erff(a); }
__device__ inline float ox_sf_tanh(float a) { return tanhf(a); }
__device__ inline float ox_sf_sigmoid(float a) { return 1.0f / (1.0f + expf(-a)); }
__device__ inline float ox_sf_relu(float a) { return a > 0.0f ? a : (a != a ? a : 0.0f); }
__device__ inline float ox_sf_max(float a, float b) { return a != a || a > b ? a : b; }
__device__ inline float ox_sf_min(float a, float b) { return a != a || a < b ? a : b; }
__device__ inline float ox_sf_clamp(float x, float lo, float hi) { return ox_sf_min(ox_sf_max(x, lo), hi); }
__device__ inline int ox_sf_lt(float a, float b) { return a < b; }
__device__ inline float ox_sf_select(int m, float a, float b) { return m ? a : b; }
__device__ inline float ox_sf_hardsigmoid(float x, float alpha, float beta)
{
	return ox_sf_clamp(alpha * x + beta, 0.0f, 1.0f);
}
__device__ inline float ox_sf_hardswish(float x) { return x * ox_sf_hardsigmoid(x, 1.0f / 6.0f, 0.5f); }
__device__ inline float ox_sf_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ inline float ox_sf_gelu_tanh(float x)
{
	return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

/* the CUDA error of the last failed call, for PREFIX_cuda_error */
static cudaError_t ox_cu_err = cudaSuccess;
static int ox_cu_check(cudaError_t e)
{
	if (e != cudaSuccess && ox_cu_err == cudaSuccess)
		ox_cu_err = e;
	return e != cudaSuccess;
}

/* Captured CUDA Graphs by key: the dispatcher's runs (codegen/cuda/cuda.c) and
 * the bodies of control nodes (ox_body_graph). An entry holds a graph and
 * the key it was captured for (what its launches depend on); a cache of n
 * entries replaces the least recently replayed one. OX_CUDA_GRAPHS=0 in
 * the environment, read at each run: no graphs, the launches as they are. */
typedef struct {
	cudaGraphExec_t exec;
	unsigned long long used;
	int nk;
	int64_t *key;
} ox_gentry;

[[maybe_unused]] static int ox_graphs_off(void)
{
	const char *e = getenv("OX_CUDA_GRAPHS");
	return e && !strcmp(e, "0");
}

/* the entry of c[0..n) captured for the key k (nk values), else -1 */
[[maybe_unused]] static int ox_graph_find(const ox_gentry *c, int n, const int64_t *k, int nk)
{
	for (int j = 0; j < n; j++)
		if (c[j].exec && c[j].nk == nk && !memcmp(c[j].key, k, (size_t)nk * sizeof *k))
			return j;
	return -1;
}

/* an entry of c[0..n) for a capture of the key k on st (an empty one, else
 * the least recently replayed one's, emptied), the capture begun: its
 * index, or -1 on an error (ox_cu_err) */
[[maybe_unused]] static int ox_graph_begin(ox_gentry *c, int n, const int64_t *k, int nk, cudaStream_t st)
{
	int gi = 0;
	for (int j = 1; j < n && c[gi].exec; j++)
		if (!c[j].exec || c[j].used < c[gi].used)
			gi = j;
	if (c[gi].exec)
		cudaGraphExecDestroy(c[gi].exec);
	c[gi].exec = NULL;
	int64_t *key = (int64_t *)realloc(c[gi].key, (size_t)(nk ? nk : 1) * sizeof *k);
	if (!key) {
		ox_cu_err = cudaErrorMemoryAllocation;
		return -1;
	}
	c[gi].key = key, c[gi].nk = nk;
	memcpy(key, k, (size_t)nk * sizeof *k);
	if (ox_cu_check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal)))
		return -1;
	return gi;
}

/* the capture on st ended into entry e, the captured code having returned
 * rc: 0, rc when it failed, err_cuda on a CUDA error (e then stays empty) */
[[maybe_unused]] static int ox_graph_end(ox_gentry *e, cudaStream_t st, int rc, int err_cuda)
{
	cudaGraph_t graph = NULL;
	cudaError_t r = cudaStreamEndCapture(st, &graph);
	if (ox_cu_check(r) || rc) {
		if (graph)
			cudaGraphDestroy(graph);
		return rc ? rc : err_cuda;
	}
	r = cudaGraphInstantiate(&e->exec, graph, 0ULL);
	cudaGraphDestroy(graph);
	if (ox_cu_check(r)) {
		e->exec = NULL;
		return err_cuda;
	}
	return 0;
}

/* entry e replayed on st, *tick the cache's clock: 0, or -1 on a CUDA error */
[[maybe_unused]] static int ox_graph_launch(ox_gentry *e, unsigned long long *tick, cudaStream_t st)
{
	e->used = ++*tick;
	return ox_cu_check(cudaGraphLaunch(e->exec, st)) ? -1 : 0;
}

[[maybe_unused]] static void ox_graphs_free(ox_gentry *c, int n)
{
	for (int j = 0; j < n; j++) {
		if (c[j].exec)
			cudaGraphExecDestroy(c[j].exec);
		free(c[j].key);
		memset(&c[j], 0, sizeof c[j]);
	}
}

/* A control node's body that never waits for the device (an If's branch
 * without a host wait, a Loop's body without one and without a scan
 * output: codegen/c/emit_ctrl.c) runs as a CUDA Graph, captured
 * the first time it runs with a key and replayed when the key comes again:
 * the key is the stream, the body's arena, the weights, the dims' device
 * copy, its input and output pointers and the run-time dims (ox_d), all
 * its launches depend on. OX_BODY_GRAPHS graphs a call site; the sites in
 * use are chained for PREFIX_free (ox_body_graphs_free). A key longer than
 * OX_BODY_KEY: the launches as they are. */
typedef int (*ox_body_fn)(unsigned char *, int64_t *, int64_t *, int64_t *, int *, const unsigned char *,
			  const void *const *, void *const *, int64_t *const *, cudaStream_t);
#define OX_BODY_GRAPHS 4
#define OX_BODY_KEY 64
typedef struct ox_bsite {
	ox_gentry g[OX_BODY_GRAPHS];
	unsigned long long tick;
	int linked;
	struct ox_bsite *next;
} ox_bsite;
static ox_bsite *ox_bsites;

[[maybe_unused]] static void ox_body_graphs_free(void)
{
	for (ox_bsite *b = ox_bsites, *nx; b; b = nx) {
		nx = b->next;
		ox_graphs_free(b->g, OX_BODY_GRAPHS);
		memset(b, 0, sizeof *b);
	}
	ox_bsites = NULL;
}

/* fn's launches on st (ni inputs, no outputs, nd run-time dims) as one of
 * b's graphs: the body's return code, or err_cuda */
[[maybe_unused]] static int ox_body_graph(ox_bsite *b, ox_body_fn fn, int ni, int no, int nd, unsigned char *S,
					   int64_t *ox_d, int64_t *ox_dd, int64_t *ox_dext, int *ox_status,
					   const unsigned char *W, const void *const *in, void *const *out, cudaStream_t st,
					   int err_cuda)
{
	const int nk = 4 + ni + no + nd;
	if (nk > OX_BODY_KEY || ox_graphs_off())
		return fn(S, ox_d, ox_dd, ox_dext, ox_status, W, in, out, NULL, st);
	int64_t k[OX_BODY_KEY];
	k[0] = (int64_t)(intptr_t)st, k[1] = (int64_t)(intptr_t)S, k[2] = (int64_t)(intptr_t)W;
	k[3] = (int64_t)(intptr_t)ox_dd;
	for (int j = 0; j < ni; j++)
		k[4 + j] = (int64_t)(intptr_t)in[j];
	for (int j = 0; j < no; j++)
		k[4 + ni + j] = (int64_t)(intptr_t)out[j];
	for (int j = 0; j < nd; j++)
		k[4 + ni + no + j] = ox_d[j];
	int gi = ox_graph_find(b->g, OX_BODY_GRAPHS, k, nk);
	if (gi < 0) {
		if (!b->linked)
			b->next = ox_bsites, ox_bsites = b, b->linked = 1;
		if ((gi = ox_graph_begin(b->g, OX_BODY_GRAPHS, k, nk, st)) < 0)
			return err_cuda;
		const int rc = ox_graph_end(&b->g[gi], st, fn(S, ox_d, ox_dd, ox_dext, ox_status, W, in, out, NULL, st),
					    err_cuda);
		if (rc)
			return rc;
	}
	return ox_graph_launch(&b->g[gi], &b->tick, st) ? err_cuda : 0;
}
