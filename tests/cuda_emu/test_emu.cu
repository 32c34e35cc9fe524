/* test_emu.cu: runtime_min/ox_cuda_emu.h, the CPU emulation of the CUDA the
 * generated code uses. One source, two builds (tests/cuda_emu/run.sh):
 *   g++ -x c++ -std=c++17 -DOX_CUDA_EMU -I runtime_min  (runs here, no GPU)
 *   nvcc -std=c++17 -arch=sm_80                          (valid CUDA; runs on a GPU)
 * Every check prints one line; the exit status is the number of failures
 * (capped). Checks that only mean something in the emulation (a missing
 * barrier must be caught, deadlocks abort) are skipped under nvcc. */
/* the prelude of every OUT.cu: OX_LAUNCH, the tensor-core forms */
#include "ox_cuda.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#if defined(OX_CUDA_EMU)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static int checks, fails;
/* one line per check: "ok   name", or "FAIL name: what was compared" */
static void report(bool ok, const char *name, const char *fmt, ...)
{
	checks++;
	if (ok) {
		printf("ok   %s\n", name);
		return;
	}
	fails++;
	printf("FAIL %s: ", name);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}
#define CK(x)                                                                                   \
	do {                                                                                    \
		cudaError_t e_ = (x);                                                           \
		if (e_ != cudaSuccess) {                                                        \
			printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); \
			exit(100);                                                              \
		}                                                                               \
	} while (0)

template <class T> static T *dev_from(const std::vector<T> &h)
{
	T *d = 0;
	CK(cudaMalloc((void **)&d, h.size() * sizeof(T)));
	CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
	return d;
}
template <class T> static std::vector<T> host_from(const T *d, size_t n)
{
	std::vector<T> h(n);
	CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
	return h;
}

/* ---- 1. block reduction: warp shuffles, then shared memory ---- */
__global__ void block_sum(const int *in, long long *out, int n)
{
	__shared__ long long warp_sums[32];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	long long v = i < n ? in[i] : 0;
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
	__syncthreads();
	if (threadIdx.x < 32) { /* only warp 0 goes on */
		v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0;
		for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
		if (threadIdx.x == 0) out[blockIdx.x] = v;
	}
}
static void test_reduce()
{
	const int blocks = 64, n = blocks * 256 - 17;
	std::vector<int> h(n);
	for (int i = 0; i < n; i++) h[i] = i + 1;
	int *d = dev_from(h);
	long long *dout = 0;
	CK(cudaMalloc((void **)&dout, blocks * sizeof(long long)));
	OX_LAUNCH(block_sum, blocks, 256, 0, 0, d, dout, n);
	CK(cudaGetLastError());
	std::vector<long long> part = host_from(dout, blocks);
	long long sum = 0, want = (long long)n * (n + 1) / 2;
	for (long long p : part) sum += p;
	report(sum == want, "block reduction (shfl_xor + shared, 64 x 256 threads)", "sum %lld, want %lld", sum, want);
	CK(cudaFree(d));
	CK(cudaFree(dout));
}

/* ---- 2. shuffles, lane by lane (2 warps) ---- */
enum { NSH = 8 };
__global__ void shuffles(int *out, float *fout)
{
	int t = threadIdx.x, lane = t & 31;
	int v = 1000 * (t >> 5) + 10 * lane + 1;
	int *o = out + t * NSH;
	o[0] = __shfl_down_sync(0xffffffffu, v, 3);
	o[1] = __shfl_up_sync(0xffffffffu, v, 5, 16);
	o[2] = __shfl_sync(0xffffffffu, v, (lane * 7 + 3) & 31);
	o[3] = __shfl_sync(0xffffffffu, v, 35, 8);
	o[4] = __shfl_xor_sync(0xffffffffu, v, 4, 8);
	o[5] = __shfl_xor_sync(0xffffffffu, v, 16, 8);
	o[6] = __shfl_down_sync(0xffffffffu, v, 2, 4);
	o[7] = __shfl_sync(0xffffffffu, v, -1);
	fout[t] = __shfl_down_sync(0xffffffffu, 0.5f * (float)v, 1);
}
static int sh_val(int t) { return 1000 * (t >> 5) + 10 * (t & 31) + 1; }
static void test_shuffles()
{
	int *d = 0;
	float *fd = 0;
	CK(cudaMalloc((void **)&d, 64 * NSH * sizeof(int)));
	CK(cudaMalloc((void **)&fd, 64 * sizeof(float)));
	OX_LAUNCH(shuffles, 1, 64, 0, 0, d, fd);
	CK(cudaGetLastError());
	std::vector<int> h = host_from(d, 64 * NSH);
	std::vector<float> fh = host_from(fd, 64);
	static const char *what[NSH] = {"shfl_down 3", "shfl_up 5 width 16", "shfl lane*7+3", "shfl 35 width 8",
		"shfl_xor 4 width 8", "shfl_xor 16 width 8", "shfl_down 2 width 4", "shfl -1"};
	for (int k = 0; k < NSH; k++) {
		int bad = -1, got = 0, want = 0;
		for (int t = 0; t < 64 && bad < 0; t++) {
			int w = t & ~31, l = t & 31, src = l;
			switch (k) {
			case 0: src = l + 3 < 32 ? l + 3 : l; break;
			case 1: src = l % 16 >= 5 ? l - 5 : l; break;
			case 2: src = (l * 7 + 3) & 31; break;
			case 3: src = (l & ~7) + 3; break;
			case 4: src = l ^ 4; break;
			case 5: src = (l ^ 16) < (l & ~7) + 8 ? l ^ 16 : l; break; /* later groups: own value */
			case 6: src = l % 4 + 2 < 4 ? l + 2 : l; break;
			case 7: src = 31; break;
			}
			want = sh_val(w + src);
			got = h[t * NSH + k];
			if (got != want) bad = t;
		}
		char name[64];
		snprintf(name, sizeof name, "%s, per lane", what[k]);
		report(bad < 0, name, "thread %d got %d, want %d", bad, got, want);
	}
	int bad = -1;
	for (int t = 0; t < 64 && bad < 0; t++)
		if (fh[t] != 0.5f * (float)sh_val((t & 31) + 1 < 32 ? t + 1 : t)) bad = t;
	report(bad < 0, "shfl_down of float, per lane", "thread %d got %g", bad, bad < 0 ? 0.0 : (double)fh[bad]);
	CK(cudaFree(d));
	CK(cudaFree(fd));
}

/* ---- 3. a partial last warp: 50 threads, warp 1 has lanes 0..17 ---- */
__global__ void partial_warp(int *out)
{
	int t = threadIdx.x, lane = t & 31, w = t >> 5;
	int nl = (int)blockDim.x - 32 * w < 32 ? (int)blockDim.x - 32 * w : 32; /* lanes in this warp */
	int v = t + 1;
	for (int o = 16; o > 0; o >>= 1) {
		int u = __shfl_down_sync(0xffffffffu, v, o);
		if (lane + o < nl) v += u;
	}
	__syncwarp();
	unsigned int odd = __ballot_sync(0xffffffffu, t & 1);
	unsigned int act = __activemask();
	if (lane == 0) {
		out[3 * w] = v;
		out[3 * w + 1] = (int)odd;
		out[3 * w + 2] = (int)act;
	}
}
static void test_partial_warp()
{
	int *d = 0;
	CK(cudaMalloc((void **)&d, 6 * sizeof(int)));
	OX_LAUNCH(partial_warp, 1, 50, 0, 0, d);
	CK(cudaGetLastError());
	std::vector<int> h = host_from(d, 6);
	int s0 = 32 * 33 / 2, s1 = 50 * 51 / 2 - s0;
	report(h[0] == s0 && h[3] == s1, "partial warp (blockDim 50): shfl_down sums", "warp sums %d %d, want %d %d",
		h[0], h[3], s0, s1);
	report((unsigned)h[1] == 0xaaaaaaaau && (unsigned)h[4] == 0x2aaaau, "partial warp: ballot",
		"0x%08x 0x%08x, want 0xaaaaaaaa 0x0002aaaa", (unsigned)h[1], (unsigned)h[4]);
	report((unsigned)h[2] == 0xffffffffu && (unsigned)h[5] == 0x3ffffu, "partial warp: __activemask",
		"0x%08x 0x%08x, want 0xffffffff 0x0003ffff", (unsigned)h[2], (unsigned)h[5]);
	CK(cudaFree(d));
}

/* ---- 4. votes, and votes by half a warp; __syncthreads_count/and/or ---- */
__global__ void votes(unsigned int *out)
{
	int t = threadIdx.x, lane = t & 31, w = t >> 5;
	unsigned int *o = out + 8 * w;
	unsigned int b = __ballot_sync(0xffffffffu, t % 3 == 0);
	int all_small = __all_sync(0xffffffffu, t < 1000);
	int all_not5 = __all_sync(0xffffffffu, lane != 5);
	int any40 = __any_sync(0xffffffffu, t == 40);
	unsigned int half = 0;
	if (lane < 16) half = __ballot_sync(0x0000ffffu, lane & 1);
	int cnt = __syncthreads_count(t % 3 == 0);
	int band = __syncthreads_and(t < 64), bor = __syncthreads_or(t == 63);
	if (lane == 0) {
		o[0] = b, o[1] = all_small, o[2] = all_not5, o[3] = any40, o[4] = half;
		o[5] = cnt, o[6] = band, o[7] = bor;
	}
}
static void test_votes()
{
	unsigned int *d = 0;
	CK(cudaMalloc((void **)&d, 16 * sizeof(unsigned int)));
	OX_LAUNCH(votes, 1, 64, 0, 0, d);
	CK(cudaGetLastError());
	std::vector<unsigned int> h = host_from(d, 16);
	unsigned int want[2][8];
	for (int w = 0; w < 2; w++) {
		unsigned int b = 0;
		for (int l = 0; l < 32; l++) b |= (unsigned int)((32 * w + l) % 3 == 0) << l;
		unsigned int v[8] = {b, 1, 0, (unsigned)(w == 1), 0xaaaau, 22, 1, 1};
		memcpy(want[w], v, sizeof v);
	}
	int bad = -1;
	for (int i = 0; i < 16 && bad < 0; i++)
		if (h[i] != want[i / 8][i % 8]) bad = i;
	report(bad < 0, "ballot/all/any, half-warp ballot, __syncthreads_count/and/or",
		"warp %d item %d: 0x%x, want 0x%x", bad / 8, bad % 8, bad < 0 ? 0 : h[bad], bad < 0 ? 0 : want[bad / 8][bad % 8]);
	CK(cudaFree(d));
}

/* ---- 5. tiled transpose: __shared__ tile, __syncthreads, 2-D blocks ---- */
__global__ void transpose(float *out, const float *in, int rows, int cols)
{
	__shared__ float tile[32][33];
	int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
	for (int j = 0; j < 32; j += 8)
		if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
	__syncthreads();
	x = blockIdx.y * 32 + threadIdx.x, y = blockIdx.x * 32 + threadIdx.y;
	for (int j = 0; j < 32; j += 8)
		if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
static void test_transpose()
{
	const int rows = 70, cols = 45;
	std::vector<float> h(rows * cols);
	for (int i = 0; i < rows * cols; i++) h[i] = (float)i;
	float *din = dev_from(h), *dout = 0;
	CK(cudaMalloc((void **)&dout, rows * cols * sizeof(float)));
	OX_LAUNCH(transpose, dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8), 0, 0, dout, din, rows, cols);
	CK(cudaGetLastError());
	std::vector<float> t = host_from(dout, rows * cols);
	int bad = -1;
	for (int r = 0; r < rows && bad < 0; r++)
		for (int c = 0; c < cols && bad < 0; c++)
			if (t[c * rows + r] != h[r * cols + c]) bad = c * rows + r;
	report(bad < 0, "tiled transpose 70x45 (32x8 blocks, 3x2 grid)", "out[%d] = %g", bad, bad < 0 ? 0.0 : (double)t[bad]);
	CK(cudaFree(din));
	CK(cudaFree(dout));
}

/* ---- 6. a missing __syncthreads must show (emulation: shuffled phases) ----
 * Each thread reads its predecessor's element: run one after another in thread
 * order, the threads would get it right without the barrier, by luck. */
template <bool SYNC> __global__ void rotate(const int *in, int *out)
{
	__shared__ int s[128];
	int t = threadIdx.x, n = blockDim.x;
	s[t] = in[blockIdx.x * n + t];
	if (SYNC) __syncthreads();
	out[blockIdx.x * n + t] = s[t > 0 ? t - 1 : 0];
}
static int rotate_errors(bool sync, int seed)
{
	const int n = 128, blocks = 4;
	std::vector<int> h(n * blocks);
	for (int i = 0; i < n * blocks; i++) h[i] = seed * 100000 + i;
	int *din = dev_from(h), *dout = 0;
	CK(cudaMalloc((void **)&dout, n * blocks * sizeof(int)));
#if defined(OX_CUDA_EMU)
	ox_emu_set_seed((unsigned long long)seed);
#endif
	if (sync) OX_LAUNCH(rotate<true>, blocks, n, 0, 0, din, dout);
	else OX_LAUNCH(rotate<false>, blocks, n, 0, 0, din, dout);
	CK(cudaGetLastError());
	std::vector<int> o = host_from(dout, n * blocks);
	int errors = 0;
	for (int b = 0; b < blocks; b++)
		for (int t = 0; t < n; t++) errors += o[b * n + t] != h[b * n + (t > 0 ? t - 1 : 0)];
	CK(cudaFree(din));
	CK(cudaFree(dout));
	return errors;
}
static void test_missing_sync()
{
	int with[4], ok_with = 1;
	for (int s = 0; s < 4; s++) {
		with[s] = rotate_errors(true, s + 1);
		ok_with &= with[s] == 0;
	}
	report(ok_with, "shift through shared with __syncthreads: right for seeds 1-4", "wrong elements %d %d %d %d",
		with[0], with[1], with[2], with[3]);
#if defined(OX_CUDA_EMU)
	int without[4], caught = 0;
	for (int s = 0; s < 4; s++) caught += (without[s] = rotate_errors(false, s + 1)) > 0;
	char name[120];
	snprintf(name, sizeof name, "shift without __syncthreads: wrong for some seed (wrong elements of 512: %d %d %d %d)",
		without[0], without[1], without[2], without[3]);
	report(caught > 0, name, "the shuffled phases did not show the missing barrier");
#else
	printf("skip shift without __syncthreads (a race on a GPU)\n");
#endif
}

/* ---- 7. atomics: a histogram in shared then global memory, and the rest ---- */
__global__ void histogram(const int *in, int n, unsigned int *hist, float *fsum, int *imax, int *imin,
	unsigned long long *total, int *cas, int *exch, unsigned int *sub)
{
	__shared__ unsigned int local[16];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (threadIdx.x < 16) local[threadIdx.x] = 0;
	__syncthreads();
	if (i < n) {
		atomicAdd(&local[in[i] & 15], 1u);
		atomicAdd(fsum, 0.5f);
		atomicMax(imax, in[i]);
		atomicMin(imin, in[i]);
		atomicAdd(total, (unsigned long long)in[i]);
		atomicCAS(cas, i, i + 1); /* counts up as long as the threads come in order */
		atomicExch(exch, 7);
		atomicSub(sub, 1u);
	}
	__syncthreads();
	if (threadIdx.x < 16) atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
}
static void test_atomics()
{
	const int n = 1000;
	std::vector<int> h(n);
	unsigned int want[16] = {0};
	long long tot = 0;
	for (int i = 0; i < n; i++) h[i] = (i * 37 + 11) % 501, want[h[i] & 15]++, tot += h[i];
	int *din = dev_from(h);
	unsigned int *dh = dev_from(std::vector<unsigned int>(16, 0)), *dsub = dev_from(std::vector<unsigned int>(1, 5000));
	float *dfs = dev_from(std::vector<float>(1, 0.0f));
	int *dmax = dev_from(std::vector<int>(1, -1)), *dmin = dev_from(std::vector<int>(1, 1 << 30));
	int *dcas = dev_from(std::vector<int>(1, 0)), *dex = dev_from(std::vector<int>(1, 0));
	unsigned long long *dtot = dev_from(std::vector<unsigned long long>(1, 0));
	OX_LAUNCH(histogram, (n + 127) / 128, 128, 0, 0, din, n, dh, dfs, dmax, dmin, dtot, dcas, dex, dsub);
	CK(cudaGetLastError());
	std::vector<unsigned int> hh = host_from(dh, 16);
	int bad = -1;
	for (int k = 0; k < 16 && bad < 0; k++)
		if (hh[k] != want[k]) bad = k;
	report(bad < 0, "atomicAdd histogram (shared, then global)", "bin %d: %u, want %u", bad, bad < 0 ? 0 : hh[bad],
		bad < 0 ? 0 : want[bad]);
	float fs = host_from(dfs, 1)[0];
	int mx = host_from(dmax, 1)[0], mn = host_from(dmin, 1)[0], cs = host_from(dcas, 1)[0], ex = host_from(dex, 1)[0];
	unsigned long long t = host_from(dtot, 1)[0];
	unsigned int sb = host_from(dsub, 1)[0];
	report(fs == 500.0f && mx == 500 && mn == 0 && t == (unsigned long long)tot && cs >= 1 && ex == 7 && sb == 4000,
		"atomicAdd float/u64, atomicMax/Min/CAS/Exch/Sub",
		"fsum %g (500), max %d (500), min %d (0), total %llu (%lld), cas %d (>= 1), exch %d (7), sub %u (4000)",
		(double)fs, mx, mn, t, tot, cs, ex, sb);
	CK(cudaFree(din));
	CK(cudaFree(dh));
	CK(cudaFree(dsub));
	CK(cudaFree(dfs));
	CK(cudaFree(dmax));
	CK(cudaFree(dmin));
	CK(cudaFree(dcas));
	CK(cudaFree(dex));
	CK(cudaFree(dtot));
}

/* ---- 8. dynamic shared memory: small, and over 48 KiB (needs the attribute) ---- */
__global__ void reverse_dyn(float *p, int per_thread)
{
	OX_DYN_SMEM(float, buf);
	int n = blockDim.x * per_thread, base = blockIdx.x * n;
	for (int k = 0; k < per_thread; k++) buf[threadIdx.x * per_thread + k] = p[base + threadIdx.x * per_thread + k];
	__syncthreads();
	for (int k = 0; k < per_thread; k++) {
		int j = threadIdx.x * per_thread + k;
		p[base + j] = buf[n - 1 - j];
	}
}
static bool reversed_ok(const std::vector<float> &h, int blocks, int n)
{
	for (int b = 0; b < blocks; b++)
		for (int j = 0; j < n; j++)
			if (h[b * n + j] != (float)(b * n + n - 1 - j)) return false;
	return true;
}
static void test_dyn_smem()
{
	const int blocks = 3, small = 2, big = 64; /* 128 x 2 floats = 1 KiB; 256 x 64 floats = 64 KiB */
	std::vector<float> h(blocks * 256 * big);
	for (size_t i = 0; i < h.size(); i++) h[i] = (float)i;
	float *d = dev_from(h);
	OX_LAUNCH(reverse_dyn, blocks, 128, 128 * small * sizeof(float), 0, d, small);
	CK(cudaGetLastError());
	report(reversed_ok(host_from(d, blocks * 128 * small), blocks, 128 * small), "OX_DYN_SMEM, 1 KiB: reversed",
		"wrong order");
	CK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
	size_t bytes = 256 * big * sizeof(float);
	OX_LAUNCH(reverse_dyn, blocks, 256, bytes, 0, d, big);
	cudaError_t e = cudaGetLastError();
	std::vector<float> untouched = host_from(d, h.size());
	report(e == cudaErrorInvalidValue && untouched == h, "64 KiB without cudaFuncSetAttribute: refused",
		"error %s, data %s", cudaGetErrorName(e), untouched == h ? "untouched" : "changed");
	CK(cudaFuncSetAttribute(reverse_dyn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
	OX_LAUNCH(reverse_dyn, blocks, 256, bytes, 0, d, big);
	CK(cudaGetLastError());
	report(reversed_ok(host_from(d, h.size()), blocks, 256 * big), "OX_DYN_SMEM, 64 KiB with the attribute: reversed",
		"wrong order");
	CK(cudaFree(d));
}

/* ---- 9. a CUDA graph from stream capture, replayed 3 times ---- */
__global__ void add_one(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] += 1;
}
__global__ void twice(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] *= 2;
}
static void test_graph()
{
	const int n = 300;
	int *p = dev_from(std::vector<int>(n, 5)), *q = dev_from(std::vector<int>(n, -1));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cudaStreamCaptureStatus st0, st1, st2;
	CK(cudaStreamIsCapturing(s, &st0));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaStreamIsCapturing(s, &st1));
	OX_LAUNCH(add_one, (n + 127) / 128, 128, 0, s, p, n);
	CK(cudaMemcpyAsync(q, p, n * sizeof(int), cudaMemcpyDeviceToDevice, s));
	OX_LAUNCH(twice, (n + 127) / 128, 128, 0, s, p, n);
	cudaGraph_t g;
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGetLastError());
	CK(cudaStreamIsCapturing(s, &st2));
	report(st0 == cudaStreamCaptureStatusNone && st1 == cudaStreamCaptureStatusActive &&
		st2 == cudaStreamCaptureStatusNone, "cudaStreamIsCapturing: none, active, none", "%d %d %d", (int)st0,
		(int)st1, (int)st2);
	std::vector<int> hp = host_from(p, n), hq = host_from(q, n);
	report(hp[0] == 5 && hp[n - 1] == 5 && hq[0] == -1 && hq[n - 1] == -1, "capture records, does not run",
		"p %d %d, q %d %d", hp[0], hp[n - 1], hq[0], hq[n - 1]);
	cudaGraphExec_t x;
	CK(cudaGraphInstantiate(&x, g, 0ULL));
	for (int r = 0; r < 3; r++) CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
	hp = host_from(p, n), hq = host_from(q, n);
	bool ok = true; /* p: 5 -> 12 -> 26 -> 54; q: the copy in the third run, 27 */
	for (int i = 0; i < n; i++) ok &= hp[i] == 54 && hq[i] == 27;
	report(ok, "graph (2 launches + cudaMemcpyAsync) launched 3 times", "p[0] %d (54), q[0] %d (27)", hp[0], hq[0]);
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(g));

	/* synchronizing a capturing stream is refused and spoils the capture */
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	OX_LAUNCH(add_one, (n + 127) / 128, 128, 0, s, p, n);
	cudaError_t e1 = cudaStreamSynchronize(s);
	cudaGraph_t g2 = 0;
	cudaError_t e2 = cudaStreamEndCapture(s, &g2);
	cudaGetLastError();
	hp = host_from(p, n);
	report(e1 == cudaErrorStreamCaptureUnsupported && e2 == cudaErrorStreamCaptureInvalidated && !g2 && hp[0] == 54,
		"cudaStreamSynchronize while capturing: refused, capture invalidated",
		"sync %s, end %s, graph %p, p[0] %d (54)", cudaGetErrorName(e1), cudaGetErrorName(e2), (void *)g2, hp[0]);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(p));
	CK(cudaFree(q));
}

/* ---- 10. events, errors, properties ---- */
static void test_events()
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	int *p = dev_from(std::vector<int>(4096, 0));
	CK(cudaEventRecord(a, 0));
	for (int r = 0; r < 10; r++) OX_LAUNCH(add_one, 32, 128, 0, 0, p, 4096);
	CK(cudaEventRecord(b, 0));
	CK(cudaEventSynchronize(b));
	float ms = -1.0f;
	CK(cudaEventElapsedTime(&ms, a, b));
	report(ms >= 0.0f, "cudaEventElapsedTime >= 0", "%g ms", (double)ms);
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	CK(cudaFree(p));
}
/* cudaMemcpy2DAsync (a Scan's step along an axis other than 0): a 4 x 2
 * window at column 3 of a 4 x 6 array out and back; a width past the
 * pitch is cudaErrorInvalidPitchValue */
static void test_memcpy2d()
{
	std::vector<int> h(24);
	for (int i = 0; i < 24; i++)
		h[i] = i;
	int *a = dev_from(h), *w = dev_from(std::vector<int>(8, -1)), *b = dev_from(std::vector<int>(24, -1));
	CK(cudaMemcpy2DAsync(w, 2 * sizeof(int), a + 3, 6 * sizeof(int), 2 * sizeof(int), 4, cudaMemcpyDeviceToDevice, 0));
	CK(cudaMemcpy2DAsync(b + 1, 6 * sizeof(int), w, 2 * sizeof(int), 2 * sizeof(int), 4, cudaMemcpyDeviceToDevice, 0));
	CK(cudaStreamSynchronize(0));
	std::vector<int> hw = host_from(w, 8), hb = host_from(b, 24);
	bool ok = true;
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 2; c++)
			ok = ok && hw[r * 2 + c] == r * 6 + 3 + c;
	for (int i = 0; i < 24; i++)
		ok = ok && hb[i] == (i % 6 == 1 || i % 6 == 2 ? i + 2 : -1);
	report(ok, "cudaMemcpy2DAsync out of and into pitched rows", "w[0..1] %d %d, b[1] %d", hw[0], hw[1], hb[1]);
	cudaError_t e = cudaMemcpy2DAsync(w, sizeof(int), a, 6 * sizeof(int), 2 * sizeof(int), 4, cudaMemcpyDeviceToDevice, 0);
	(void)cudaGetLastError();
	report(e == cudaErrorInvalidPitchValue, "cudaMemcpy2DAsync width past the pitch", "%s", cudaGetErrorName(e));
	CK(cudaFree(a));
	CK(cudaFree(w));
	CK(cudaFree(b));
}
static void test_launch_errors()
{
	int *p = dev_from(std::vector<int>(4096, 0));
	OX_LAUNCH(add_one, 1, 2048, 0, 0, p, 4096);
	cudaError_t e1 = cudaPeekAtLastError(), e2 = cudaGetLastError(), e3 = cudaGetLastError();
	OX_LAUNCH(add_one, 1, 64, 228 * 1024, 0, p, 4096);
	cudaError_t e4 = cudaGetLastError();
	/* the other limits: blockDim.z 65, gridDim.y 70000, a zero grid, a zero block */
	OX_LAUNCH(add_one, 1, dim3(1, 1, 65), 0, 0, p, 4096);
	cudaError_t e5 = cudaGetLastError();
	OX_LAUNCH(add_one, dim3(1, 70000), 32, 0, 0, p, 4096);
	cudaError_t e6 = cudaGetLastError();
	OX_LAUNCH(add_one, 0, 32, 0, 0, p, 4096);
	cudaError_t e7 = cudaGetLastError();
	OX_LAUNCH(add_one, 1, 0, 0, 0, p, 4096);
	cudaError_t e8 = cudaGetLastError();
	std::vector<int> h = host_from(p, 4096);
	/* what CUDA 13 (driver 580) returns on an H200 */
	report(e1 == cudaErrorInvalidValue && e2 == e1 && e3 == cudaSuccess && e4 == cudaErrorInvalidValue && h[0] == 0,
		"2048 threads per block / 228 KiB shared: error, cleared by cudaGetLastError, kernel not run",
		"peek %s, get %s, again %s, smem %s, p[0] %d", cudaGetErrorName(e1), cudaGetErrorName(e2),
		cudaGetErrorName(e3), cudaGetErrorName(e4), h[0]);
	report(e5 == cudaErrorInvalidValue && e6 == cudaErrorInvalidValue && e7 == cudaErrorInvalidValue &&
		e8 == cudaErrorInvalidValue, "blockDim.z 65, gridDim.y 70000, grid 0, block 0: errors",
		"%s %s %s %s", cudaGetErrorName(e5), cudaGetErrorName(e6), cudaGetErrorName(e7), cudaGetErrorName(e8));
	CK(cudaFree(p));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	int count = 0;
	CK(cudaGetDeviceCount(&count));
	report(count >= 1 && prop.warpSize == 32 && prop.maxThreadsPerBlock == 1024 && prop.major >= 7,
		"cudaGetDeviceProperties", "%s: count %d, warpSize %d, maxThreadsPerBlock %d, sm_%d%d", prop.name, count,
		prop.warpSize, prop.maxThreadsPerBlock, prop.major, prop.minor);
}

/* ---- 11. 3-D blocks: thread ids and warps (x fastest, then y, z) ---- */
__global__ void ids3d(int *out)
{
	int lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	int base = __shfl_sync(0xffffffffu, lin, 0);
	out[blockIdx.y * 64 + lin] = lin * 1000 + base * 10 + (int)blockIdx.y;
}
static void test_ids3d()
{
	int *d = 0;
	CK(cudaMalloc((void **)&d, 128 * sizeof(int)));
	OX_LAUNCH(ids3d, dim3(1, 2), dim3(8, 4, 2), 0, 0, d);
	CK(cudaGetLastError());
	std::vector<int> h = host_from(d, 128);
	int bad = -1;
	for (int i = 0; i < 128 && bad < 0; i++)
		if (h[i] != (i % 64) * 1000 + (i % 64 / 32 * 32) * 10 + i / 64) bad = i;
	report(bad < 0, "3-D block (8,4,2) x grid (1,2): ids and warp lanes", "out[%d] = %d", bad, bad < 0 ? 0 : h[bad]);
	CK(cudaFree(d));
}

/* ---- 12. one thread per block: barriers and warp ops of one lane ---- */
__global__ void one_thread(int *out)
{
	__syncthreads();
	__syncwarp(1u);
	out[blockIdx.x] = __shfl_sync(1u, 40 + (int)blockIdx.x, 0) + (int)__ballot_sync(1u, 1);
}
static void test_one_thread()
{
	int *d = 0;
	CK(cudaMalloc((void **)&d, 3 * sizeof(int)));
	OX_LAUNCH(one_thread, 3, 1, 0, 0, d);
	CK(cudaGetLastError());
	std::vector<int> h = host_from(d, 3);
	report(h[0] == 41 && h[1] == 42 && h[2] == 43, "1-thread blocks: __syncthreads, shfl, ballot", "%d %d %d", h[0], h[1],
		h[2]);
	CK(cudaFree(d));
}

/* ---- 13. split-K in one kernel: ox_split_last. 12 tiles x 5 splits x 64
 * threads; each block writes its part, the tile's last block to arrive sums
 * the 5 parts in split order. The parts (1e8, 1, -1e8, 1, 0.5 scaled) give a
 * different f32 sum in another order, so the check is exact; run 3 times
 * (the counters must be back at 0 after each run) ---- */
__global__ void split_sum(float *ws, unsigned int *ctr, float *y)
{
	const unsigned int S = 5, tile = blockIdx.x, s = blockIdx.z, t = threadIdx.x;
	const float part[5] = {1e8f, 1.0f, -1e8f, 1.0f, 0.5f};
	ws[(tile * S + s) * 64 + t] = part[s] * (1.0f + (float)t / 64);
	if (!ox_split_last(ctr + tile, S))
		return;
	float v = 0.0f;
	for (unsigned int k = 0; k < S; k++)
		v += ox_ldcg(&ws[(tile * S + k) * 64 + t]);
	y[tile * 64 + t] = v;
}
static void test_split_last()
{
	float *ws = 0, *y = 0;
	CK(cudaMalloc((void **)&ws, 12 * 5 * 64 * sizeof(float)));
	CK(cudaMalloc((void **)&y, 12 * 64 * sizeof(float)));
	unsigned int *ctr = dev_from(std::vector<unsigned int>(12, 0));
	const float part[5] = {1e8f, 1.0f, -1e8f, 1.0f, 0.5f};
	int bad = -1, run = 0, ctr_bad = -1;
	for (; run < 3 && bad < 0 && ctr_bad < 0; run++) {
		CK(cudaMemset(y, 0, 12 * 64 * sizeof(float)));
		OX_LAUNCH(split_sum, dim3(12, 1, 5), 64, 0, 0, ws, ctr, y);
		CK(cudaGetLastError());
		std::vector<float> h = host_from(y, 12 * 64);
		for (int i = 0; i < 12 * 64 && bad < 0; i++) {
			float v = 0.0f;
			for (int k = 0; k < 5; k++)
				v += part[k] * (1.0f + (float)(i % 64) / 64);
			if (h[i] != v) bad = i;
		}
		std::vector<unsigned int> c = host_from(ctr, 12);
		for (int k = 0; k < 12 && ctr_bad < 0; k++)
			if (c[k]) ctr_bad = k;
	}
	report(bad < 0 && ctr_bad < 0, "ox_split_last: the last block sums the parts in split order, counters back at 0",
		"run %d: y[%d] differs, or counter %d not 0", run, bad, ctr_bad);
	CK(cudaFree(ws));
	CK(cudaFree(y));
	CK(cudaFree(ctr));
}

#if defined(OX_CUDA_EMU)
/* ---- emulation only: a big stack array in a 1-thread block; deadlocks abort ---- */
__global__ void big_stack(int *out)
{
	volatile int a[256 * 1024]; /* 1 MiB: more than a fiber stack, fine on the caller's */
	for (int i = 0; i < 256 * 1024; i++) a[i] = i;
	*out = a[256 * 1024 - 1];
}
__global__ void divergent_sync(int *out)
{
	if (threadIdx.x < 16) __syncthreads();
	out[threadIdx.x] = 1;
}
__global__ void shfl_vs_sync(int *out)
{
	int v = threadIdx.x;
	if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1); /* names lanes 16..31 */
	else __syncthreads();
	out[threadIdx.x] = v;
}
static void expect_abort(void (*fn)(), const char *name, const char *needle)
{
	int fd[2];
	if (pipe(fd) != 0) {
		report(false, name, "pipe failed");
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		fn();
		_exit(0);
	}
	close(fd[1]);
	char buf[2048];
	size_t len = 0;
	ssize_t r;
	while ((r = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)r;
	buf[len] = 0;
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	bool ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, needle);
	report(ok, name, "status 0x%x, stderr: %s", status, buf);
	const char *m = strstr(buf, "ox_cuda_emu: kernel") ? strstr(buf, "ox_cuda_emu: kernel") : buf;
	if (ok) printf("     (its message: %.*s)\n", (int)strcspn(m, "\n"), m);
}
static void run_divergent()
{
	int *d = 0;
	cudaMalloc((void **)&d, 64 * sizeof(int));
	OX_LAUNCH(divergent_sync, 2, 64, 0, 0, d);
}
static void run_shfl_vs_sync()
{
	int *d = 0;
	cudaMalloc((void **)&d, 32 * sizeof(int));
	OX_LAUNCH(shfl_vs_sync, 1, 32, 0, 0, d);
}
/* the order the blocks ran in, one launch */
__global__ void block_order(unsigned int *next, unsigned int *order)
{
	order[atomicAdd(next, 1u)] = blockIdx.x + 4 * (blockIdx.y + 3 * blockIdx.z);
}
static void test_block_order()
{
	unsigned int *next = 0, *order = 0;
	CK(cudaMalloc((void **)&next, sizeof(unsigned int)));
	CK(cudaMalloc((void **)&order, 24 * sizeof(unsigned int)));
	int perms = 0, moved = 0;
	for (int run = 0; run < 4; run++) {
		CK(cudaMemset(next, 0, sizeof(unsigned int)));
		OX_LAUNCH(block_order, dim3(4, 3, 2), 1, 0, 0, next, order);
		std::vector<unsigned int> h = host_from(order, 24);
		unsigned int seen = 0;
		for (unsigned int k : h) seen |= k < 24 ? 1u << k : 0;
		perms += seen == 0xffffffu;
		for (unsigned int k = 0; k < 24; k++) moved += h[k] != k;
	}
	report(perms == 4 && moved > 0, "blocks run once each, in a shuffled order", "%d of 4 runs a permutation, %d moved",
		perms, moved);
	CK(cudaFree(next));
	CK(cudaFree(order));
}
static void test_emu_only()
{
	test_block_order();
	int *d = 0;
	CK(cudaMalloc((void **)&d, sizeof(int)));
	OX_LAUNCH(big_stack, 1, 1, 0, 0, d);
	report(host_from(d, 1)[0] == 256 * 1024 - 1, "1-thread block with a 1 MiB stack array", "wrong value");
	CK(cudaFree(d));
	expect_abort(run_divergent, "divergent __syncthreads: abort with a message", "kernel 'divergent_sync' (launch #");
	expect_abort(run_shfl_vs_sync, "shuffle mask naming lanes at __syncthreads: abort", "deadlock");
}
#endif

/* ---- tensor cores: ox_mma_tf32's fragments as the PTX ISA lays out
 * mma.m16n8k8 (lane = 4 g + t), loaded here from its text: A[16][8] row
 * major, B[8][8], D = A B + C; small integers, exact in TF32 ---- */
__global__ void mma_tile(const float *A, const float *B, const float *C, float *D)
{
	const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
	const unsigned a[4] = {ox_tf32(A[g * 8 + t]), ox_tf32(A[(g + 8) * 8 + t]), ox_tf32(A[g * 8 + t + 4]),
			       ox_tf32(A[(g + 8) * 8 + t + 4])};
	const unsigned b[2] = {ox_tf32(B[t * 8 + g]), ox_tf32(B[(t + 4) * 8 + g])};
	float d[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
	ox_mma_tf32(d, a, b);
	D[g * 8 + 2 * t] = d[0], D[g * 8 + 2 * t + 1] = d[1];
	D[(g + 8) * 8 + 2 * t] = d[2], D[(g + 8) * 8 + 2 * t + 1] = d[3];
}
__global__ void tf32_round(const float *x, unsigned *y)
{
	y[threadIdx.x] = ox_tf32(x[threadIdx.x]);
}
static void test_mma()
{
	/* rounding to TF32 (10 mantissa bits): to nearest, ties away from zero */
	const float u = 1.0f / 1024;
	std::vector<float> x = {1 + u / 2, 1 + u / 4, -(1 + u / 2), 1 + u * 3 / 4}, want = {1 + u, 1, -(1 + u), 1 + u};
	float *dx = dev_from(x);
	unsigned *dy = 0;
	CK(cudaMalloc((void **)&dy, 4 * sizeof(unsigned)));
	OX_LAUNCH(tf32_round, 1, 4, 0, 0, dx, dy);
	CK(cudaGetLastError());
	std::vector<unsigned> y = host_from(dy, 4);
	int rbad = -1;
	for (int i = 0; i < 4 && rbad < 0; i++) {
		float f;
		memcpy(&f, &y[i], 4);
		if (f != want[i])
			rbad = i;
	}
	report(rbad < 0, "TF32 rounding (cvt.rna)", "x[%d]", rbad);
	CK(cudaFree(dx));
	CK(cudaFree(dy));

	std::vector<float> A(128), B(64), C(128);
	for (int i = 0; i < 128; i++) A[i] = (float)(i * 7 % 11 - 5), C[i] = (float)(i % 5);
	for (int i = 0; i < 64; i++) B[i] = (float)(i * 5 % 13 - 6);
	float *dA = dev_from(A), *dB = dev_from(B), *dC = dev_from(C), *dD = 0;
	CK(cudaMalloc((void **)&dD, 128 * sizeof(float)));
	OX_LAUNCH(mma_tile, 1, 32, 0, 0, dA, dB, dC, dD);
	CK(cudaGetLastError());
	std::vector<float> D = host_from(dD, 128);
	int bad = -1;
	for (int m = 0; m < 16 && bad < 0; m++)
		for (int n = 0; n < 8 && bad < 0; n++) {
			float s = C[m * 8 + n];
			for (int k = 0; k < 8; k++)
				s += A[m * 8 + k] * B[k * 8 + n];
			if (D[m * 8 + n] != s)
				bad = m * 8 + n;
		}
	report(bad < 0, "mma.m16n8k8 TF32: D = A B + C on one warp's fragments", "D[%d] = %g", bad,
	       bad < 0 ? 0.0 : (double)D[bad]);
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	CK(cudaFree(dD));
}

/* ---- f16 / bf16 tensor cores: mma.m16n8k16 with the fragments as the
 * PTX ISA lays them out, loaded here from its text: A[16][16] row major,
 * B[16][8], D = A B + C; small integers, exact in f16 and bf16 ---- */
template <int BF> __global__ void mma16_tile(const float *A, const float *B, const float *C, float *D)
{
	const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
	auto pk = [](float lo, float hi) { return BF ? ox_bf16x2(lo, hi) : ox_f16x2(lo, hi); };
	const unsigned a[4] = {pk(A[g * 16 + 2 * t], A[g * 16 + 2 * t + 1]), pk(A[(g + 8) * 16 + 2 * t], A[(g + 8) * 16 + 2 * t + 1]),
			       pk(A[g * 16 + 2 * t + 8], A[g * 16 + 2 * t + 9]),
			       pk(A[(g + 8) * 16 + 2 * t + 8], A[(g + 8) * 16 + 2 * t + 9])};
	const unsigned b[2] = {pk(B[2 * t * 8 + g], B[(2 * t + 1) * 8 + g]), pk(B[(2 * t + 8) * 8 + g], B[(2 * t + 9) * 8 + g])};
	float d[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
	if (BF)
		ox_mma_bf16(d, a, b);
	else
		ox_mma_f16(d, a, b);
	D[g * 8 + 2 * t] = d[0], D[g * 8 + 2 * t + 1] = d[1];
	D[(g + 8) * 8 + 2 * t] = d[2], D[(g + 8) * 8 + 2 * t + 1] = d[3];
}
__global__ void half2_round(const float *x, unsigned *y)
{
	const int i = threadIdx.x;
	y[i] = ox_f16x2(x[2 * i], x[2 * i + 1]);
	y[i + 4] = ox_bf16x2(x[2 * i], x[2 * i + 1]);
}
template <int BF> static void mma16_case(const char *what)
{
	std::vector<float> A(256), B(128), C(128);
	for (int i = 0; i < 256; i++) A[i] = (float)(i * 7 % 11 - 5);
	for (int i = 0; i < 128; i++) B[i] = (float)(i * 5 % 13 - 6), C[i] = (float)(i % 5);
	float *dA = dev_from(A), *dB = dev_from(B), *dC = dev_from(C), *dD = 0;
	CK(cudaMalloc((void **)&dD, 128 * sizeof(float)));
	OX_LAUNCH(mma16_tile<BF>, 1, 32, 0, 0, dA, dB, dC, dD);
	CK(cudaGetLastError());
	std::vector<float> D = host_from(dD, 128);
	int bad = -1;
	for (int m = 0; m < 16 && bad < 0; m++)
		for (int n = 0; n < 8 && bad < 0; n++) {
			float s = C[m * 8 + n];
			for (int k = 0; k < 16; k++)
				s += A[m * 16 + k] * B[k * 8 + n];
			if (D[m * 8 + n] != s)
				bad = m * 8 + n;
		}
	report(bad < 0, what, "D[%d] = %g", bad, bad < 0 ? 0.0 : (double)D[bad]);
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	CK(cudaFree(dD));
}
static void test_mma16()
{
	/* rounding to f16 (10 mantissa bits) and bf16 (7), to nearest even,
	 * the first value in the low half: 1 + 2^-11 is a tie (even: 1),
	 * 1 + 3 2^-11 a tie up (1 + 2^-9 in f16), 2^-25 a tie to 0 and
	 * 2^-25 + 2^-30 the smallest subnormal 2^-24, -65520 a tie to -inf
	 * in f16; in bf16 1 + 2^-8 a tie (1), 1 + 3 2^-8 a tie up */
	const float e11 = ldexpf(1, -11);
	std::vector<float> x = {1 + e11, 1 + 3 * e11, ldexpf(1, -25), ldexpf(1, -25) + ldexpf(1, -30), -65520.0f, 1 + ldexpf(1, -8),
				1 + 3 * ldexpf(1, -8), -2.5f};
	const unsigned want[8] = {0x3c00u | 0x3c02u << 16, 0x0000u | 0x0001u << 16, 0xfc00u | 0x3c04u << 16,
				  0x3c0cu | 0xc100u << 16, 0x3f80u | 0x3f80u << 16, 0x3300u | 0x3304u << 16,
				  0xc780u | 0x3f80u << 16, 0x3f82u | 0xc020u << 16};
	float *dx = dev_from(x);
	unsigned *dy = 0;
	CK(cudaMalloc((void **)&dy, 8 * sizeof(unsigned)));
	OX_LAUNCH(half2_round, 1, 4, 0, 0, dx, dy);
	CK(cudaGetLastError());
	std::vector<unsigned> y = host_from(dy, 8);
	int rbad = -1;
	for (int i = 0; i < 8 && rbad < 0; i++)
		if (y[i] != want[i])
			rbad = i;
	report(rbad < 0, "f16x2 / bf16x2 packing (cvt.rn, ties to even, low half first)", "word %d = %#x", rbad,
	       rbad < 0 ? 0u : y[rbad]);
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	mma16_case<0>("mma.m16n8k16 f16: D = A B + C on one warp's fragments");
	mma16_case<1>("mma.m16n8k16 bf16: D = A B + C on one warp's fragments");
}

/* ---- ldmatrix: ox_ldsm4 (and .trans, ox_ldsm4t) on one warp, each
 * lane's words checked against the PTX ISA's text (lane l gets row l / 4,
 * columns 2 (l % 4) and 2 (l % 4) + 1 of each matrix, the columns' rows
 * with .trans), then the fragments they make as the tiles of
 * codegen/cuda/cuda_tile.c address them fed to ox_mma_f16 (bf16): D = A B
 * for A [16][16] and B [16][16] (two 16 x 8 products) ---- */
template <int BF> __global__ void ldsm_tile(const float *A, const float *B, unsigned *bits, unsigned *R, float *D)
{
	__shared__ __align__(16) uint16_t As[16][24];
	__shared__ __align__(16) uint16_t Bs[16][24];
	const int lane = threadIdx.x % 32;
	for (int i = lane; i < 256; i += 32) {
		As[i / 16][i % 16] = BF ? ox_bf16(A[i]) : ox_f16(A[i]);
		Bs[i / 16][i % 16] = BF ? ox_bf16(B[i]) : ox_f16(B[i]);
		bits[i] = As[i / 16][i % 16], bits[256 + i] = Bs[i / 16][i % 16];
	}
	__syncthreads();
	const int lr = lane % 8 + (lane >> 3 & 1) * 8, lc = lane >> 4;
	unsigned a[4], q[4];
	ox_ldsm4(a, &As[lr][lc * 8]);
	ox_ldsm4t(q, &Bs[lr][lc * 8]);
	for (int j = 0; j < 4; j++)
		R[lane * 8 + j] = a[j], R[lane * 8 + 4 + j] = q[j];
	const unsigned b0[2] = {q[0], q[1]}, b1[2] = {q[2], q[3]};
	float d0[4] = {0, 0, 0, 0}, d1[4] = {0, 0, 0, 0};
	if (BF)
		ox_mma_bf16(d0, a, b0), ox_mma_bf16(d1, a, b1);
	else
		ox_mma_f16(d0, a, b0), ox_mma_f16(d1, a, b1);
	const int g = lane / 4, t = lane % 4;
	for (int h = 0; h < 2; h++) {
		const float *d = h ? d1 : d0;
		D[g * 16 + h * 8 + 2 * t] = d[0], D[g * 16 + h * 8 + 2 * t + 1] = d[1];
		D[(g + 8) * 16 + h * 8 + 2 * t] = d[2], D[(g + 8) * 16 + h * 8 + 2 * t + 1] = d[3];
	}
}
template <int BF> static void ldsm_case(const char *what)
{
	std::vector<float> A(256), B(256);
	for (int i = 0; i < 256; i++)
		A[i] = (float)(i * 7 % 11 - 5) + (i % 3) * 0.25f, B[i] = (float)(i * 5 % 13 - 6) + (i % 2) * 0.5f;
	float *dA = dev_from(A), *dB = dev_from(B), *dD = 0;
	unsigned *dbits = 0, *dR = 0;
	CK(cudaMalloc((void **)&dD, 256 * sizeof(float)));
	CK(cudaMalloc((void **)&dbits, 512 * sizeof(unsigned)));
	CK(cudaMalloc((void **)&dR, 256 * sizeof(unsigned)));
	OX_LAUNCH(ldsm_tile<BF>, 1, 32, 0, 0, dA, dB, dbits, dR, dD);
	CK(cudaGetLastError());
	std::vector<unsigned> bits = host_from(dbits, 512), R = host_from(dR, 256);
	std::vector<float> D = host_from(dD, 256);
	/* matrix j of A: rows (j & 1) * 8 .., columns (j >> 1) * 8 ..; of B the same */
	int bad = -1;
	for (int l = 0; l < 32 && bad < 0; l++)
		for (int j = 0; j < 8 && bad < 0; j++) {
			const int m = j % 4, r0 = (m & 1) * 8, c0 = (m >> 1) * 8, q = l / 4, t2 = l % 4 * 2;
			unsigned want;
			if (j < 4)
				want = bits[(r0 + q) * 16 + c0 + t2] | bits[(r0 + q) * 16 + c0 + t2 + 1] << 16;
			else
				want = bits[256 + (r0 + t2) * 16 + c0 + q] | bits[256 + (r0 + t2 + 1) * 16 + c0 + q] << 16;
			if (R[l * 8 + j] != want)
				bad = l * 8 + j;
		}
	char name[160];
	snprintf(name, sizeof name, "ldmatrix x4 and x4.trans %s: each lane's words as the PTX ISA lays them out", what);
	report(bad < 0, name, "lane %d word %d = %#x", bad / 8, bad % 8, bad < 0 ? 0u : R[bad]);
	bad = -1;
	for (int m = 0; m < 16 && bad < 0; m++)
		for (int n = 0; n < 16 && bad < 0; n++) {
			float s = 0;
			for (int k = 0; k < 16; k++)
				s += A[m * 16 + k] * B[k * 16 + n];
			if (D[m * 16 + n] != s)
				bad = m * 16 + n;
		}
	snprintf(name, sizeof name, "mma.m16n8k16 %s on ldmatrix fragments: D = A B", what);
	report(bad < 0, name, "D[%d] = %g", bad, bad < 0 ? 0.0 : (double)D[bad]);
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dD));
	CK(cudaFree(dbits));
	CK(cudaFree(dR));
}

int main()
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		printf("no CUDA device: nothing to run\n");
		return 77;
	}
	test_reduce();
	test_shuffles();
	test_partial_warp();
	test_votes();
	test_transpose();
	test_missing_sync();
	test_atomics();
	test_dyn_smem();
	test_graph();
	test_events();
	test_memcpy2d();
	test_launch_errors();
	test_ids3d();
	test_one_thread();
	test_split_last();
	test_mma();
	test_mma16();
	ldsm_case<0>("f16");
	ldsm_case<1>("bf16");
	(void)ox_cu_ws, (void)ox_cu_ctr, (void)ox_cu_check;
#if defined(OX_CUDA_EMU)
	test_emu_only();
#endif
	printf("cuda_emu: %d checks, %d failed\n", checks, fails);
	return fails > 99 ? 99 : fails;
}
