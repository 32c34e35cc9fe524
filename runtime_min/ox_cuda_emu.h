/* ox_cuda_emu.h: runs onnxcc's generated CUDA on the CPU (--cuda-emu): the
 * same .cu, compiled by g++ -x c++ -std=c++17 -DOX_CUDA_EMU, gets the CUDA
 * keywords, built-ins, intrinsics and runtime API subset it uses from here.
 * Invariants: one OS thread does everything (use it from one host thread);
 * every operation runs synchronously, in issue order; a grid runs block after
 * block, in a shuffled order (seed OX_EMU_SEED); a 1-thread block runs on the caller's stack; a bigger one
 * runs each CUDA thread as a fiber on its own stack (OX_EMU_STACK bytes,
 * default 128 KiB, guard page below) that yields only at a barrier
 * (__syncthreads, __syncwarp, shuffles, votes), and every phase between
 * barriers resumes the fibers in a new shuffled order (seed OX_EMU_SEED), so a
 * missing barrier gives a wrong result, not a lucky pass. __shared__ is
 * `static`: one copy, seen by the block's fibers, kept for the next block.
 * Poisoned with 0xff bytes (float NaN, int -1) until written: cudaMalloc
 * memory, the dynamic shared buffer at each launch, a shuffle from a lane that
 * did not take part. As on a GPU, over 48 KiB of dynamic shared memory needs
 * cudaFuncSetAttribute first, and a divergent barrier is an error (abort()).
 * Not emulated: separate memory spaces (host pointers work on the "device"),
 * timing, concurrency between streams or with the host, data races and the
 * memory model, the wmma API (the mma.sync and ldmatrix forms the kernels
 * use are ox_cuda.h functions, each with its CPU version beside the
 * device one), textures, cooperative groups, dynamic
 * parallelism; a capture records launches, memcpys, memsets and host functions only.
 * OX_EMU_TRACE=FILE appends a line per grid run and per copy or fill done
 * (bench/cuda_launches.sh reads it): "launch NAME gx gy gz bx by bz SMEM",
 * "memcpy BYTES", "memset BYTES", "instantiate NODES" for a graph made
 * executable, and "graph NODES" ... "graph-end" around a graph's replay.
 * Include it before other headers (its __noinline__ macro would break
 * libstdc++'s <memory> if that came later, so <memory> is included here). */
#ifndef OX_CUDA_EMU_H
#define OX_CUDA_EMU_H

#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define OX_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OX_EMU_ASAN 1
#endif
#endif
#if defined(OX_EMU_ASAN) /* ASan must be told about each stack switch */
#include <sanitizer/common_interface_defs.h>
#endif

/* ---- keywords ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __managed__
/* the block's threads take turns on this OS thread, so one function-static
 * copy is exactly "shared by the block" (blocks run one after another) */
#define __shared__ static

/* ---- vector types and built-ins ---- */
struct uint3 { unsigned int x, y, z; };
struct dim3 {
	unsigned int x, y, z;
	constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
	constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr operator uint3() const { return uint3{x, y, z}; }
};
struct __align__(8) int2 { int x, y; };
struct int3 { int x, y, z; };
struct __align__(16) int4 { int x, y, z, w; };
struct __align__(8) uint2 { unsigned int x, y; };
struct __align__(16) uint4 { unsigned int x, y, z, w; };
struct __align__(8) float2 { float x, y; };
struct float3 { float x, y, z; };
struct __align__(16) float4 { float x, y, z, w; };
struct __align__(16) double2 { double x, y; };
inline int2 make_int2(int x, int y) { return int2{x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }

/* ---- runtime API types (values as in CUDA 12/13's driver_types.h) ---- */
enum cudaError {
	cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3, cudaErrorInvalidConfiguration = 9, cudaErrorInvalidPitchValue = 12,
	cudaErrorInvalidMemcpyDirection = 21, cudaErrorInsufficientDriver = 35,
	cudaErrorInvalidDeviceFunction = 98, cudaErrorNoDevice = 100, cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400, cudaErrorIllegalState = 401, cudaErrorNotReady = 600,
	cudaErrorLaunchOutOfResources = 701, cudaErrorLaunchFailure = 719, cudaErrorNotSupported = 801,
	cudaErrorStreamCaptureUnsupported = 900, cudaErrorStreamCaptureInvalidated = 901,
	cudaErrorStreamCaptureImplicit = 906, cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4
};
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1, cudaStreamCaptureStatusInvalidated = 2 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
enum cudaDeviceAttr {
	cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrWarpSize = 10,
	cudaDevAttrMultiProcessorCount = 16, cudaDevAttrL2CacheSize = 38, cudaDevAttrComputeCapabilityMajor = 75,
	cudaDevAttrComputeCapabilityMinor = 76, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};
struct cudaDeviceProp { /* the fields generated code may read, same names and types */
	char name[256];
	size_t totalGlobalMem, sharedMemPerBlock;
	int regsPerBlock, warpSize;
	size_t memPitch;
	int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
	size_t totalConstMem;
	int major, minor, multiProcessorCount, integrated, concurrentKernels, unifiedAddressing;
	int memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize, maxThreadsPerMultiProcessor;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor, managedMemory;
	size_t sharedMemPerBlockOptin;
	int maxBlocksPerMultiProcessor;
	size_t reservedSharedMemPerBlock;
};
struct CUgraph_st { std::vector<std::function<void()>> ops; }; /* recorded operations, in order */
struct CUgraphExec_st { std::vector<std::function<void()>> ops; };
struct CUstream_st { unsigned int flags; CUgraph_st *graph; bool invalid; cudaStreamCaptureMode mode; };
struct CUevent_st { unsigned int flags; bool recorded; double ms; };
struct CUgraphNode_st;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00

/* ---- the emulator's state ---- */
namespace ox_emu {
constexpr size_t kOptinSmem = 232448, kDefaultSmem = 49152;
enum { RUN, BAR, WARP, DONE }; /* a fiber's state */
struct Fiber {
	ucontext_t ctx; /* the ucontext path */
	void *sp; /* the fast path: the saved stack pointer */
	char *stack; /* usable part, above the guard page */
	size_t size;
	uint3 tid;
	unsigned int lin, wmask; /* linear thread id; mask it waits on at a warp barrier */
	unsigned int group; /* lanes that left the warp's last barrier with it: __activemask() */
	int state;
	void *fake; /* ASan's fake stack while switched out */
};
struct Warp { /* per warp: exchange slots and which lanes filled them; lanes waiting, lanes not returned */
	unsigned long long slot[32];
	unsigned int valid, waiting, alive;
};
inline bool in_kernel_ = false;
struct State {
	unsigned long long launches = 0;
	size_t stack_size = 0;
	std::vector<Fiber *> pool; /* fixed addresses: a ucontext_t points into itself */
	std::vector<Warp> warps;
	std::vector<unsigned int> order;
	unsigned char *smem = nullptr;
	size_t smem_cap = 0;
	std::vector<std::pair<const void *, int>> max_dyn_smem; /* cudaFuncSetAttribute */
	std::vector<cudaStream_t> capturing;
	ucontext_t main_ctx;
	void *main_sp = nullptr;
	const void *main_lo = nullptr;
	size_t main_size = 0;
	~State() {
		if (in_kernel_) return; /* exit() from inside a kernel: maybe on one of these stacks */
		long pg = sysconf(_SC_PAGESIZE);
		for (Fiber *f : pool) {
			munmap(f->stack - pg, f->size + pg);
			delete f;
		}
		free(smem);
	}
};
inline State &S() { static State s; return s; }
/* the current thread's view, set by the scheduler when it switches fibers */
inline uint3 tid_, bid_;
inline dim3 bdim_, gdim_;
inline Fiber *cur_ = nullptr; /* null: host code, or a 1-thread block */
inline unsigned char *dyn_smem_ = nullptr;
inline const std::function<void()> *body_ = nullptr;
inline const char *kname_ = "";
inline unsigned int bargen_ = 0, barcnt_[2];
inline unsigned long long rng_ = 0; /* the shuffling sequence */
inline bool seeded_ = false;
inline int fast_ = -1; /* switch fibers by fast_switch (1) or ucontext (0); -1: not decided yet */
inline cudaError_t last_ = cudaSuccess;

inline cudaError_t ret(cudaError_t e) { if (e != cudaSuccess) last_ = e; return e; }
inline FILE *trace()
{
	static FILE *t = nullptr;
	static bool opened = false;
	if (!opened) {
		opened = true;
		const char *e = getenv("OX_EMU_TRACE");
		if (e && *e && !(t = fopen(e, "a"))) fprintf(stderr, "ox_cuda_emu: cannot open OX_EMU_TRACE %s\n", e);
	}
	return t;
}
[[noreturn]] inline void fatal(const char *what, const char *hint = nullptr)
{
	fprintf(stderr, "ox_cuda_emu: kernel '%s' (launch #%llu), block (%u,%u,%u): %s\n", kname_,
		S().launches, bid_.x, bid_.y, bid_.z, what);
	if (hint) fprintf(stderr, "ox_cuda_emu: %s\n", hint);
	abort();
}
inline unsigned long long rand64()
{
	if (!seeded_) {
		const char *e = getenv("OX_EMU_SEED");
		rng_ = e && *e ? strtoull(e, nullptr, 0) : 0;
		seeded_ = true;
	}
	if (!rng_) rng_ = 0x9e3779b97f4a7c15ull;
	rng_ ^= rng_ >> 12; /* xorshift64* */
	rng_ ^= rng_ << 25;
	rng_ ^= rng_ >> 27;
	return rng_ * 0x2545f4914f6cdd1dull;
}

/* ---- fibers: ucontext (makecontext, swapcontext), or on x86-64 a switch of
 * its own: glibc's swapcontext makes a system call (the signal mask) each time,
 * 1 us in a VM; fast_switch takes nanoseconds. OX_EMU_UCONTEXT=1 in the
 * environment (or -DOX_EMU_UCONTEXT) forces ucontext; so does a CET shadow
 * stack, which glibc's ucontext knows how to switch. ---- */
#if defined(__x86_64__) && !defined(OX_EMU_UCONTEXT)
#define OX_EMU_FAST_SWITCH 1
/* push the callee-saved registers, mxcsr and the x87 control word, store sp in
 * *save, load sp from to, pop them there, and return into that context */
__attribute__((naked, noinline)) inline void fast_switch(void ** /*save: rdi*/, void * /*to: rsi*/)
{
	__asm__("pushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
		"subq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n\t"
		"movq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n\t"
		"ldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n\t"
		"popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\tret\n");
}
#endif
inline bool fast()
{
	if (fast_ < 0) {
		const char *e = getenv("OX_EMU_UCONTEXT");
		fast_ = !(e && *e && strcmp(e, "0"));
#if defined(OX_EMU_FAST_SWITCH)
		unsigned long long ssp = 0; /* rdssp is a no-op unless a shadow stack is on */
		__asm__ __volatile__("rdsspq %0" : "+r"(ssp));
		fast_ = fast_ && !ssp;
#else
		fast_ = 0;
#endif
	}
	return fast_;
}
inline void to_main(Fiber *me, bool exiting)
{
#if defined(OX_EMU_ASAN) /* exiting: nothing to save, the fiber's frames are dead */
	__sanitizer_start_switch_fiber(exiting ? nullptr : &me->fake, S().main_lo, S().main_size);
#endif
#if defined(OX_EMU_FAST_SWITCH)
	if (fast_) fast_switch(&me->sp, S().main_sp);
	else
#endif
	if (exiting) setcontext(&S().main_ctx);
	else swapcontext(&me->ctx, &S().main_ctx);
#if defined(OX_EMU_ASAN)
	__sanitizer_finish_switch_fiber(me->fake, &S().main_lo, &S().main_size);
#endif
}
inline void yield(Fiber *me) { to_main(me, false); }
inline void fiber_main()
{
#if defined(OX_EMU_ASAN)
	__sanitizer_finish_switch_fiber(nullptr, &S().main_lo, &S().main_size);
#endif
	Fiber *me = cur_;
	(*body_)();
	me->state = DONE;
	to_main(me, true);
	abort(); /* never resumed */
}
inline void resume(Fiber *f)
{
	cur_ = f;
	tid_ = f->tid;
#if defined(OX_EMU_ASAN)
	void *fake = nullptr;
	__sanitizer_start_switch_fiber(&fake, f->stack, f->size);
#endif
#if defined(OX_EMU_FAST_SWITCH)
	if (fast_) fast_switch(&S().main_sp, f->sp);
	else
#endif
	swapcontext(&S().main_ctx, &f->ctx);
#if defined(OX_EMU_ASAN)
	__sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
	cur_ = nullptr;
}
/* make f start at fiber_main on its own stack */
inline void start_fiber(Fiber *f, unsigned long long fpctl)
{
#if defined(OX_EMU_FAST_SWITCH)
	if (fast_) { /* the frame fast_switch pops: control words, r15..rbx, rbp, return address */
		unsigned long long *top = (unsigned long long *)(void *)(f->stack + f->size); /* 16-aligned */
		void (*entry)() = fiber_main;
		memset(top - 9, 0, 9 * sizeof *top);
		top[-9] = fpctl;
		memcpy(&top[-2], &entry, sizeof entry); /* top[-1]: fiber_main's (never used) return address */
		f->sp = top - 9;
		return;
	}
#endif
	(void)fpctl;
	f->ctx.uc_stack.ss_sp = f->stack;
	f->ctx.uc_stack.ss_size = f->size;
	f->ctx.uc_link = nullptr;
	makecontext(&f->ctx, fiber_main, 0);
}
inline void grow_pool(unsigned int n)
{
	State &s = S();
	long pg = sysconf(_SC_PAGESIZE);
	if (!s.stack_size) {
		const char *e = getenv("OX_EMU_STACK");
		size_t sz = e && *e ? (size_t)strtoull(e, nullptr, 0) : 0;
		sz = sz ? sz : 128 * 1024;
		sz = sz < 16384 ? 16384 : sz;
		s.stack_size = (sz + pg - 1) / pg * pg;
	}
	while (s.pool.size() < n) {
		void *m = mmap(nullptr, s.stack_size + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (m == MAP_FAILED) fatal("cannot map a fiber stack");
		mprotect(m, pg, PROT_NONE); /* guard page: the stack grows down into it */
		Fiber *f = new Fiber();
		f->stack = (char *)m + pg;
		f->size = s.stack_size;
		getcontext(&f->ctx);
		s.pool.push_back(f);
	}
}
/* a lane of warp w reached a warp barrier or returned: release every group of
 * waiting lanes whose mask's live lanes all wait */
inline void warp_update(Fiber *f)
{
	State &s = S();
	Warp &w = s.warps[f->lin >> 5];
	unsigned int lo = f->lin & ~31u, bit = 1u << (f->lin & 31), check = bit;
	if (f->state == WARP) w.waiting |= bit;
	else w.alive &= ~bit, check = w.waiting; /* returned: any waiter may be free now */
	while (check) {
		Fiber *g = s.pool[lo + __builtin_ctz(check)];
		unsigned int need = g->wmask & w.alive;
		check &= check - 1;
		if (g->state != WARP || (need & ~w.waiting)) continue;
		w.waiting &= ~need;
		for (unsigned int m = need; m; m &= m - 1) {
			Fiber *r = s.pool[lo + __builtin_ctz(m)];
			r->state = RUN;
			r->group = need;
		}
	}
}
[[noreturn]] inline void deadlock(unsigned int n)
{
	std::vector<Fiber *> &p = S().pool;
	unsigned int bar = 0, warp = 0, done = 0, first = n;
	for (unsigned int i = 0; i < n; i++) {
		bar += p[i]->state == BAR;
		done += p[i]->state == DONE;
		if (p[i]->state == WARP && !warp++) first = i;
	}
	char msg[400];
	int k = snprintf(msg, sizeof msg, "deadlock at a barrier: of %u threads, %u wait at __syncthreads, %u at a warp "
		"barrier (shuffle, vote, __syncwarp), %u have returned", n, bar, warp, done);
	if (first < n && k > 0 && (size_t)k < sizeof msg)
		snprintf(msg + k, sizeof msg - k, "; thread %u waits for warp mask 0x%08x", first, p[first]->wmask);
	fatal(msg, "a barrier that not every thread it names reaches (divergent __syncthreads, "
		"__syncthreads after some threads returned, a shuffle mask naming threads that wait "
		"elsewhere) is a bug in the kernel");
}
inline unsigned int lanes_of(unsigned int w, unsigned int n) /* the lanes warp w has */
{
	return n - 32 * w >= 32 ? 0xffffffffu : (1u << (n - 32 * w)) - 1;
}
inline void set_groups(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) S().pool[i]->group = lanes_of(i >> 5, n);
}
inline void run_block(unsigned int n)
{
	State &s = S();
	set_groups(n);
	unsigned long long fpctl = 0; /* the caller's mxcsr and x87 control word, for the fast path */
#if defined(OX_EMU_FAST_SWITCH)
	unsigned int mxcsr;
	unsigned short fcw;
	__asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(fcw));
	fpctl = mxcsr | (unsigned long long)fcw << 32;
#endif
	for (unsigned int i = 0; i < n; i++) {
		s.pool[i]->state = RUN;
		start_fiber(s.pool[i], fpctl);
	}
	for (unsigned int w = 0; w < s.warps.size(); w++) s.warps[w].valid = s.warps[w].waiting = 0, s.warps[w].alive = lanes_of(w, n);
	bargen_ = 0;
	barcnt_[0] = barcnt_[1] = 0;
	unsigned int live = n, atbar = 0;
	for (;;) {
		s.order.clear();
		for (unsigned int i = 0; i < n; i++)
			if (s.pool[i]->state == RUN) s.order.push_back(i);
		if (s.order.empty()) {
			if (!live) return;
			if (atbar != n) deadlock(n);
			for (unsigned int i = 0; i < n; i++) s.pool[i]->state = RUN; /* next phase */
			set_groups(n);
			atbar = 0;
			barcnt_[++bargen_ & 1] = 0;
			continue;
		}
		for (size_t i = s.order.size() - 1; i > 0; i--) /* Fisher-Yates */
			std::swap(s.order[i], s.order[rand64() % (i + 1)]);
		for (unsigned int i : s.order) {
			Fiber *f = s.pool[i];
			resume(f);
			if (f->state == BAR) atbar++;
			else warp_update(f), live -= f->state == DONE;
		}
	}
}
inline void run_grid(const char *name, dim3 g, dim3 b, size_t smem, const std::function<void()> &body)
{
	State &s = S();
	if (in_kernel_) fatal("a kernel launch from inside a kernel (dynamic parallelism is not emulated)");
	s.launches++;
	kname_ = name;
	if (FILE *t = trace())
		fprintf(t, "launch %s %u %u %u %u %u %u %zu\n", name, g.x, g.y, g.z, b.x, b.y, b.z, smem), fflush(t);
	unsigned int n = b.x * b.y * b.z;
	if (smem > s.smem_cap) {
		free(s.smem);
		s.smem_cap = (smem + 4095) / 4096 * 4096;
		s.smem = (unsigned char *)aligned_alloc(64, s.smem_cap);
		if (!s.smem) fatal("out of memory for dynamic shared memory");
	}
	if (smem) memset(s.smem, 0xff, smem);
	if (n > 1) {
		fast();
		grow_pool(n);
		for (unsigned int i = 0; i < n; i++)
			s.pool[i]->tid = uint3{i % b.x, i / b.x % b.y, i / (b.x * b.y)}, s.pool[i]->lin = i;
		s.warps.resize((n + 31) / 32);
	}
	dyn_smem_ = smem ? s.smem : nullptr; /* no dynamic shared memory asked for: none */
	body_ = &body;
	gdim_ = g;
	bdim_ = b;
	in_kernel_ = true;
	/* the blocks in a shuffled order: block i*mul+add (mod their count),
	 * mul coprime to the count, both drawn anew each launch */
	const unsigned long long nb = (unsigned long long)g.x * g.y * g.z;
	unsigned long long mul = 1, add = 0;
	if (nb > 1) {
		mul = 1 + rand64() % (nb - 1), add = rand64() % nb;
		while (std::gcd(mul, nb) != 1) mul = mul % (nb - 1) + 1;
	}
	for (unsigned long long i = 0; i < nb; i++) {
		const unsigned long long k = (unsigned long long)(((unsigned __int128)i * mul + add) % nb);
		bid_ = uint3{(unsigned int)(k % g.x), (unsigned int)(k / g.x % g.y), (unsigned int)(k / g.x / g.y)};
		tid_ = uint3{0, 0, 0};
		if (n == 1) body();
		else run_block(n);
	}
	in_kernel_ = false;
}

/* ---- warp exchange: deposit, wait for the mask, read, wait, withdraw ---- */
inline void warp_wait(Fiber *me, unsigned int mask)
{
	me->wmask = mask | 1u << (me->lin & 31);
	me->state = WARP;
	yield(me);
}
template <class F> inline unsigned long long warp_xchg(unsigned int mask, unsigned long long mine, F read)
{
	Fiber *me = cur_;
	if (!me) { /* a 1-thread block: lane 0 alone */
		Warp one{};
		one.slot[0] = mine;
		one.valid = 1;
		return read(one, 0u, mask | 1u);
	}
	unsigned int lane = me->lin & 31;
	Warp &w = S().warps[me->lin >> 5];
	w.slot[lane] = mine;
	w.valid |= 1u << lane;
	warp_wait(me, mask);
	unsigned long long r = read(w, lane, mask | 1u << lane);
	warp_wait(me, mask);
	w.valid &= ~(1u << lane);
	return r;
}
/* a warp-wide tensor-core operation (ox_mma_tf32, ox_ldsm4, ox_cuda.h):
 * every lane deposits a pointer (to its fragments, or its row of a
 * matrix); `lane_op(pointers, lane)` computes this lane's results once all
 * 32 are there */
template <class T, class F> inline void warp_mma(const T *mine, F lane_op)
{
	warp_xchg(0xffffffffu, (unsigned long long)(uintptr_t)mine, [&](const Warp &w, unsigned int lane, unsigned int) {
		if (w.valid != 0xffffffffu)
			fatal("mma.sync or ldmatrix with a partial warp (every lane must take part)");
		const T *f[32];
		for (int l = 0; l < 32; l++)
			f[l] = (const T *)(uintptr_t)w.slot[l];
		lane_op(f, lane);
		return 0ull;
	});
}
enum { SH_IDX, SH_UP, SH_DOWN, SH_XOR };
template <class T> inline T shfl(unsigned int mask, T v, int mode, long long arg, int width)
{
	static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "shuffle of a type over 8 bytes");
	if (width < 1 || width > 32 || (width & (width - 1))) fatal("shuffle width is not a power of 2 in 1..32");
	unsigned long long bits = 0;
	memcpy(&bits, &v, sizeof v);
	bits = warp_xchg(mask, bits, [&](const Warp &w, unsigned int lane, unsigned int) {
		long long base = lane & ~(unsigned int)(width - 1), in = lane - base, src = lane;
		if (mode == SH_IDX) src = base + (arg & (width - 1));
		else if (mode == SH_UP) src = in >= arg ? lane - arg : lane;
		else if (mode == SH_DOWN) src = in + arg < width ? lane + arg : lane;
		else if (((lane ^ arg) & 31) < base + width) src = (lane ^ arg) & 31; /* later groups: own value */
		return w.valid >> src & 1 ? w.slot[src] : ~0ull; /* absent lane: undefined in CUDA, poison here */
	});
	memcpy(&v, &bits, sizeof v);
	return v;
}
enum { V_BALLOT, V_ALL, V_ANY };
inline unsigned int vote(unsigned int mask, int pred, int kind)
{
	return (unsigned int)warp_xchg(mask, pred != 0, [&](const Warp &w, unsigned int, unsigned int m) {
		unsigned int part = w.valid & m, yes = 0;
		for (unsigned int l = 0; l < 32; l++)
			if ((part >> l & 1) && w.slot[l]) yes |= 1u << l;
		return (unsigned long long)(kind == V_BALLOT ? yes : kind == V_ALL ? yes == part : yes != 0);
	});
}
inline int block_vote(int pred, int kind) /* __syncthreads_count/and/or */
{
	Fiber *me = cur_;
	if (!me) return pred != 0; /* count, and, or of one thread */
	unsigned int g = bargen_;
	barcnt_[g & 1] += pred != 0;
	me->state = BAR;
	yield(me);
	unsigned int c = barcnt_[g & 1];
	return kind == V_BALLOT ? (int)c : kind == V_ALL ? c == bdim_.x * bdim_.y * bdim_.z : c != 0;
}

/* ---- launches and streams ---- */
inline bool real_stream(cudaStream_t s) { return s && s != cudaStreamLegacy && s != cudaStreamPerThread; }
inline bool capturing(cudaStream_t s) { return real_stream(s) && s->graph; }
/* a call that synchronizes while a capture is active: CUDA refuses it and invalidates the capture */
inline cudaError_t sync_check(cudaStream_t only = nullptr)
{
	cudaError_t e = cudaSuccess;
	for (cudaStream_t c : S().capturing)
		if (!only || c == only) c->invalid = true, e = cudaErrorStreamCaptureUnsupported;
	return ret(e);
}
inline cudaError_t alloc_check() /* allocation in a non-relaxed capture: refused */
{
	for (cudaStream_t c : S().capturing)
		if (c->mode != cudaStreamCaptureModeRelaxed) return ret(cudaErrorStreamCaptureUnsupported);
	return cudaSuccess;
}
/* record op when s is capturing; run it now otherwise */
inline cudaError_t enqueue(cudaStream_t s, std::function<void()> op)
{
	if (!capturing(s)) {
		op();
		return cudaSuccess;
	}
	if (s->invalid) return ret(cudaErrorStreamCaptureInvalidated);
	s->graph->ops.push_back(std::move(op));
	return cudaSuccess;
}
inline void launch_body(const char *name, const void *key, dim3 g, dim3 b, size_t smem, cudaStream_t s,
	std::function<void()> body)
{
	/* CUDA 13 (driver 580, H200) says cudaErrorInvalidValue for every one of these, not
	 * cudaErrorInvalidConfiguration as older versions did */
	unsigned long long n = (unsigned long long)b.x * b.y * b.z;
	cudaError_t e = cudaSuccess;
	if (!n || n > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64 || !g.x || !g.y || !g.z || g.x > 2147483647u ||
		g.y > 65535 || g.z > 65535) {
		e = cudaErrorInvalidValue;
	} else if (smem > kDefaultSmem) { /* over 48 KiB needs cudaFuncSetAttribute first, as on a GPU */
		size_t allowed = kDefaultSmem;
		for (auto &a : S().max_dyn_smem)
			if (a.first == key) allowed = (size_t)a.second;
		if (smem > allowed || smem > kOptinSmem) e = cudaErrorInvalidValue;
	}
	if (e != cudaSuccess) {
		if (capturing(s)) s->invalid = true;
		ret(e);
		return;
	}
	enqueue(s, [name, g, b, smem, body]() { run_grid(name, g, b, smem, body); });
}
template <class... P, class... A>
inline void launch(const char *name, void (*k)(P...), dim3 g, dim3 b, size_t smem, cudaStream_t s, A &&...a)
{
	/* the arguments, converted to the parameter types and copied now (as CUDA does) */
	std::tuple<typename std::decay<P>::type...> args(std::forward<A>(a)...);
	launch_body(name, reinterpret_cast<const void *>(k), g, b, smem, s, [k, args]() { std::apply(k, args); });
}
inline double now_ms()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
} /* namespace ox_emu */

#define threadIdx (static_cast<const uint3 &>(::ox_emu::tid_))
#define blockIdx (static_cast<const uint3 &>(::ox_emu::bid_))
#define blockDim (static_cast<const dim3 &>(::ox_emu::bdim_))
#define gridDim (static_cast<const dim3 &>(::ox_emu::gdim_))
inline constexpr int warpSize = 32; /* a variable: cudaDeviceProp has a field of that name */
#define OX_LAUNCH(k, grid, block, smem, stream, ...) \
	::ox_emu::launch(#k, (k), dim3(grid), dim3(block), (size_t)(smem), (stream), ##__VA_ARGS__)
#define OX_DYN_SMEM(T, name) T *name = reinterpret_cast<T *>(::ox_emu::dyn_smem_)
/* for tests: restart the shuffling sequence; the number of grids run so far */
inline void ox_emu_set_seed(unsigned long long seed) { ox_emu::seeded_ = true, ox_emu::rng_ = seed; }
inline unsigned long long ox_emu_launch_count() { return ox_emu::S().launches; }

/* ---- barriers, shuffles, votes ---- */
inline void __syncthreads()
{
	if (ox_emu::Fiber *me = ox_emu::cur_) {
		me->state = ox_emu::BAR;
		ox_emu::yield(me);
	}
}
inline int __syncthreads_count(int p) { return ox_emu::block_vote(p, ox_emu::V_BALLOT); }
inline int __syncthreads_and(int p) { return ox_emu::block_vote(p, ox_emu::V_ALL); }
inline int __syncthreads_or(int p) { return ox_emu::block_vote(p, ox_emu::V_ANY); }
inline void __syncwarp(unsigned int mask = 0xffffffffu)
{
	if (ox_emu::Fiber *me = ox_emu::cur_) ox_emu::warp_wait(me, mask);
}
template <class T> inline T __shfl_sync(unsigned int mask, T var, int srcLane, int width = 32)
{ return ox_emu::shfl(mask, var, ox_emu::SH_IDX, srcLane, width); }
template <class T> inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32)
{ return ox_emu::shfl(mask, var, ox_emu::SH_UP, delta, width); }
template <class T> inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32)
{ return ox_emu::shfl(mask, var, ox_emu::SH_DOWN, delta, width); }
template <class T> inline T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = 32)
{ return ox_emu::shfl(mask, var, ox_emu::SH_XOR, laneMask, width); }
inline unsigned int __ballot_sync(unsigned int mask, int pred) { return ox_emu::vote(mask, pred, ox_emu::V_BALLOT); }
inline int __all_sync(unsigned int mask, int pred) { return (int)ox_emu::vote(mask, pred, ox_emu::V_ALL); }
inline int __any_sync(unsigned int mask, int pred) { return (int)ox_emu::vote(mask, pred, ox_emu::V_ANY); }
/* the lanes that left this lane's last barrier with it (at first: the warp's
 * lanes); a fiber cannot see divergence since then */
inline unsigned int __activemask() { return ox_emu::cur_ ? ox_emu::cur_->group : 1u; }
inline void __threadfence() { __asm__ __volatile__("" ::: "memory"); }
inline void __threadfence_block() { __asm__ __volatile__("" ::: "memory"); }

/* ---- atomics: plain read-modify-write (one OS thread, no switch inside) ---- */
#define OX_EMU_ATOMIC(name, T, expr) \
	inline T name(T *a, T v) { T o = *a; *a = (expr); return o; }
OX_EMU_ATOMIC(atomicAdd, int, (int)((unsigned int)o + (unsigned int)v)) /* wraps, as on a GPU */
OX_EMU_ATOMIC(atomicAdd, unsigned int, o + v)
OX_EMU_ATOMIC(atomicAdd, unsigned long long, o + v)
OX_EMU_ATOMIC(atomicAdd, float, o + v)
OX_EMU_ATOMIC(atomicAdd, double, o + v)
OX_EMU_ATOMIC(atomicSub, int, (int)((unsigned int)o - (unsigned int)v))
OX_EMU_ATOMIC(atomicSub, unsigned int, o - v)
OX_EMU_ATOMIC(atomicMax, int, o > v ? o : v)
OX_EMU_ATOMIC(atomicMax, unsigned int, o > v ? o : v)
OX_EMU_ATOMIC(atomicMax, long long, o > v ? o : v)
OX_EMU_ATOMIC(atomicMax, unsigned long long, o > v ? o : v)
OX_EMU_ATOMIC(atomicMin, int, o < v ? o : v)
OX_EMU_ATOMIC(atomicMin, unsigned int, o < v ? o : v)
OX_EMU_ATOMIC(atomicMin, long long, o < v ? o : v)
OX_EMU_ATOMIC(atomicMin, unsigned long long, o < v ? o : v)
OX_EMU_ATOMIC(atomicExch, int, v)
OX_EMU_ATOMIC(atomicExch, unsigned int, v)
OX_EMU_ATOMIC(atomicExch, unsigned long long, v)
OX_EMU_ATOMIC(atomicExch, float, v)
OX_EMU_ATOMIC(atomicAnd, int, o & v)
OX_EMU_ATOMIC(atomicAnd, unsigned int, o & v)
OX_EMU_ATOMIC(atomicOr, int, o | v)
OX_EMU_ATOMIC(atomicOr, unsigned int, o | v)
OX_EMU_ATOMIC(atomicXor, int, o ^ v)
OX_EMU_ATOMIC(atomicXor, unsigned int, o ^ v)
OX_EMU_ATOMIC(atomicInc, unsigned int, o >= v ? 0 : o + 1)
OX_EMU_ATOMIC(atomicDec, unsigned int, o == 0 || o > v ? v : o - 1)
#undef OX_EMU_ATOMIC
inline int atomicCAS(int *a, int c, int v) { int o = *a; *a = o == c ? v : o; return o; }
inline unsigned int atomicCAS(unsigned int *a, unsigned int c, unsigned int v) { unsigned int o = *a; *a = o == c ? v : o; return o; }
inline unsigned long long atomicCAS(unsigned long long *a, unsigned long long c, unsigned long long v)
{ unsigned long long o = *a; *a = o == c ? v : o; return o; }

/* ---- device math and bits (libm has expf, fmaxf, ...; glibc declares
 * __expf and friends itself, so those names are macros to ours) ---- */
template <class T> inline T __ldg(const T *p) { return *p; }
namespace ox_emu {
inline float d_expf(float x) { return expf(x); }
inline float d_exp10f(float x) { return powf(10.0f, x); }
inline float d_logf(float x) { return logf(x); }
inline float d_log2f(float x) { return log2f(x); }
inline float d_log10f(float x) { return log10f(x); }
inline float d_sinf(float x) { return sinf(x); }
inline float d_cosf(float x) { return cosf(x); }
inline float d_tanf(float x) { return tanf(x); }
inline void d_sincosf(float x, float *s, float *c) { *s = sinf(x), *c = cosf(x); }
inline float d_powf(float x, float y) { return powf(x, y); }
inline float d_rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double d_rsqrt(double x) { return 1.0 / sqrt(x); }
} /* namespace ox_emu */
#define __expf ::ox_emu::d_expf
#define __exp10f ::ox_emu::d_exp10f
#define __logf ::ox_emu::d_logf
#define __log2f ::ox_emu::d_log2f
#define __log10f ::ox_emu::d_log10f
#define __sinf ::ox_emu::d_sinf
#define __cosf ::ox_emu::d_cosf
#define __tanf ::ox_emu::d_tanf
#define __sincosf ::ox_emu::d_sincosf
#define __powf ::ox_emu::d_powf
#define rsqrtf ::ox_emu::d_rsqrtf
#define rsqrt ::ox_emu::d_rsqrt
inline float __fdividef(float a, float b) { return a / b; }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : x > 0.0f ? x : 0.0f; /* NaN: 0 */ }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline int __float2int_rn(float x) /* as the GPU: saturating, NaN gives 0 */
{ return x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x < -2147483648.0f ? (-2147483647 - 1) : (int)nearbyintf(x); }
inline int __float2int_rz(float x)
{ return x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x < -2147483648.0f ? (-2147483647 - 1) : (int)x; }
inline float __int2float_rn(int x) { return (float)x; }
inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
inline float __int_as_float(int i) { float x; memcpy(&x, &i, 4); return x; }
inline unsigned int __float_as_uint(float x) { unsigned int i; memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned int i) { float x; memcpy(&x, &i, 4); return x; }
inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
inline double __longlong_as_double(long long i) { double x; memcpy(&x, &i, 8); return x; }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x)
{
	x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
	x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
	x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
	return __builtin_bswap32(x);
}
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }

/* ---- runtime API ---- */
inline const char *cudaGetErrorName(cudaError_t e)
{
	switch (e) {
#define OX_EMU_E(n) case n: return #n;
	OX_EMU_E(cudaSuccess) OX_EMU_E(cudaErrorInvalidValue) OX_EMU_E(cudaErrorMemoryAllocation)
	OX_EMU_E(cudaErrorInitializationError) OX_EMU_E(cudaErrorInvalidConfiguration) OX_EMU_E(cudaErrorInvalidPitchValue)
	OX_EMU_E(cudaErrorInvalidMemcpyDirection) OX_EMU_E(cudaErrorInsufficientDriver)
	OX_EMU_E(cudaErrorInvalidDeviceFunction) OX_EMU_E(cudaErrorNoDevice) OX_EMU_E(cudaErrorInvalidDevice)
	OX_EMU_E(cudaErrorInvalidResourceHandle) OX_EMU_E(cudaErrorIllegalState) OX_EMU_E(cudaErrorNotReady)
	OX_EMU_E(cudaErrorLaunchOutOfResources) OX_EMU_E(cudaErrorLaunchFailure) OX_EMU_E(cudaErrorNotSupported)
	OX_EMU_E(cudaErrorStreamCaptureUnsupported) OX_EMU_E(cudaErrorStreamCaptureInvalidated)
	OX_EMU_E(cudaErrorStreamCaptureImplicit) OX_EMU_E(cudaErrorUnknown)
#undef OX_EMU_E
	}
	return "cudaErrorUnknown";
}
inline const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorInitializationError: return "initialization error";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorInvalidPitchValue: return "invalid pitch argument";
	case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
	case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
	case cudaErrorInvalidDeviceFunction: return "invalid device function";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorInvalidDevice: return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle: return "invalid resource handle";
	case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
	case cudaErrorNotReady: return "device not ready";
	case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
	case cudaErrorLaunchFailure: return "unspecified launch failure";
	case cudaErrorNotSupported: return "operation not supported";
	case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
	case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
	case cudaErrorStreamCaptureImplicit: return "operation would make the legacy stream depend on a capturing blocking stream";
	case cudaErrorUnknown: return "unknown error";
	}
	return "unrecognized error code";
}
inline cudaError_t cudaGetLastError() { cudaError_t e = ox_emu::last_; ox_emu::last_ = cudaSuccess; return e; }
inline cudaError_t cudaPeekAtLastError() { return ox_emu::last_; }
inline cudaError_t cudaGetDeviceCount(int *n) { if (!n) return ox_emu::ret(cudaErrorInvalidValue); *n = 1; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return ox_emu::ret(d == 0 ? cudaSuccess : cudaErrorInvalidDevice); }
inline cudaError_t cudaGetDevice(int *d) { if (!d) return ox_emu::ret(cudaErrorInvalidValue); *d = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceReset() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return ox_emu::sync_check(); }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
	if (!p) return ox_emu::ret(cudaErrorInvalidValue);
	if (d != 0) return ox_emu::ret(cudaErrorInvalidDevice);
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", "onnxcc CUDA emulation (CPU)");
	p->totalGlobalMem = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	p->sharedMemPerBlock = ox_emu::kDefaultSmem;
	p->regsPerBlock = p->regsPerMultiprocessor = 65536;
	p->warpSize = 32;
	p->memPitch = 2147483647;
	p->maxThreadsPerBlock = 1024;
	p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = p->maxGridSize[2] = 65535;
	p->totalConstMem = 65536;
	p->major = 8, p->minor = 0;
	p->multiProcessorCount = 1;
	p->concurrentKernels = p->unifiedAddressing = p->managedMemory = 1;
	p->l2CacheSize = 4 << 20;
	p->maxThreadsPerMultiProcessor = 2048;
	p->sharedMemPerMultiprocessor = ox_emu::kOptinSmem + 1024;
	p->sharedMemPerBlockOptin = ox_emu::kOptinSmem;
	p->maxBlocksPerMultiProcessor = 32;
	p->reservedSharedMemPerBlock = 1024;
	return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int d)
{
	if (!v) return ox_emu::ret(cudaErrorInvalidValue);
	if (d != 0) return ox_emu::ret(cudaErrorInvalidDevice);
	switch (a) {
	case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
	case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)ox_emu::kDefaultSmem; break;
	case cudaDevAttrWarpSize: *v = 32; break;
	case cudaDevAttrMultiProcessorCount: *v = 1; break;
	case cudaDevAttrL2CacheSize: *v = 4 << 20; break;
	case cudaDevAttrComputeCapabilityMajor: *v = 8; break;
	case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)ox_emu::kOptinSmem; break;
	default: return ox_emu::ret(cudaErrorInvalidValue);
	}
	return cudaSuccess;
}
inline cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value)
{
	if (!func) return ox_emu::ret(cudaErrorInvalidDeviceFunction);
	if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
		return ox_emu::ret(value >= -1 && value <= 100 ? cudaSuccess : cudaErrorInvalidValue);
	if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || (size_t)value > ox_emu::kOptinSmem)
		return ox_emu::ret(cudaErrorInvalidValue);
	for (auto &a : ox_emu::S().max_dyn_smem)
		if (a.first == func) return a.second = value, cudaSuccess;
	ox_emu::S().max_dyn_smem.emplace_back(func, value);
	return cudaSuccess;
}
template <class T> inline cudaError_t cudaFuncSetAttribute(T *func, cudaFuncAttribute attr, int value)
{ return cudaFuncSetAttribute(reinterpret_cast<const void *>(func), attr, value); }

inline cudaError_t cudaMalloc(void **p, size_t n)
{
	if (!p) return ox_emu::ret(cudaErrorInvalidValue);
	*p = nullptr;
	if (cudaError_t e = ox_emu::alloc_check()) return e;
	if (!n) return cudaSuccess;
	*p = aligned_alloc(256, (n + 255) / 256 * 256);
	if (!*p) return ox_emu::ret(cudaErrorMemoryAllocation);
	memset(*p, 0xff, n); /* uninitialized device memory: poison */
	return cudaSuccess;
}
template <class T> inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)(void *)p, n); }
inline cudaError_t cudaFree(void *p)
{
	if (cudaError_t e = ox_emu::sync_check()) return e;
	free(p);
	return cudaSuccess;
}
inline cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int)
{
	if (!p) return ox_emu::ret(cudaErrorInvalidValue);
	*p = nullptr;
	if (cudaError_t e = ox_emu::alloc_check()) return e;
	if (n && !(*p = aligned_alloc(256, (n + 255) / 256 * 256))) return ox_emu::ret(cudaErrorMemoryAllocation);
	return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void **p, size_t n) { return cudaHostAlloc(p, n, 0); }
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t n, unsigned int flags = 0)
{ return cudaHostAlloc((void **)(void *)p, n, flags); }
inline cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }

inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s = 0)
{
	if ((unsigned int)kind > cudaMemcpyDefault) return ox_emu::ret(cudaErrorInvalidMemcpyDirection);
	if (n && (!dst || !src)) return ox_emu::ret(cudaErrorInvalidValue);
	return ox_emu::enqueue(s, [dst, src, n]() {
		if (FILE *t = ox_emu::trace()) fprintf(t, "memcpy %zu\n", n), fflush(t);
		if (n) memmove(dst, src, n);
	});
}
/* height rows of width bytes, src and dst rows spitch and dpitch bytes apart */
inline cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				     size_t height, cudaMemcpyKind kind, cudaStream_t s = 0)
{
	if ((unsigned int)kind > cudaMemcpyDefault) return ox_emu::ret(cudaErrorInvalidMemcpyDirection);
	if (width > dpitch || width > spitch) return ox_emu::ret(cudaErrorInvalidPitchValue);
	if (width && height && (!dst || !src)) return ox_emu::ret(cudaErrorInvalidValue);
	return ox_emu::enqueue(s, [=]() {
		if (FILE *t = ox_emu::trace()) fprintf(t, "memcpy %zu\n", width * height), fflush(t);
		for (size_t r = 0; r < height && width; r++)
			memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
	});
}
inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s = 0)
{
	if (n && !p) return ox_emu::ret(cudaErrorInvalidValue);
	return ox_emu::enqueue(s, [p, v, n]() {
		if (FILE *t = ox_emu::trace()) fprintf(t, "memset %zu\n", n), fflush(t);
		if (n) memset(p, v, n);
	});
}
/* a host function in stream order (a host node when captured) */
#define CUDART_CB
typedef void (*cudaHostFn_t)(void *userData);
inline cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data)
{
	if (!fn) return ox_emu::ret(cudaErrorInvalidValue);
	return ox_emu::enqueue(s, [fn, data]() {
		if (FILE *t = ox_emu::trace()) fprintf(t, "host\n"), fflush(t);
		fn(data);
	});
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
	if (cudaError_t e = ox_emu::sync_check()) return e;
	return cudaMemcpyAsync(dst, src, n, kind, 0);
}
inline cudaError_t cudaMemset(void *p, int v, size_t n)
{
	if (cudaError_t e = ox_emu::sync_check()) return e;
	return cudaMemsetAsync(p, v, n, 0);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T &sym, const void *src, size_t n, size_t off = 0,
	cudaMemcpyKind kind = cudaMemcpyHostToDevice)
{
	if (off > sizeof(T) || n > sizeof(T) - off) return ox_emu::ret(cudaErrorInvalidValue);
	return cudaMemcpy((char *)const_cast<T *>(&sym) + off, src, n, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &sym, size_t n, size_t off = 0,
	cudaMemcpyKind kind = cudaMemcpyDeviceToHost)
{
	if (off > sizeof(T) || n > sizeof(T) - off) return ox_emu::ret(cudaErrorInvalidValue);
	return cudaMemcpy(dst, (const char *)&sym + off, n, kind);
}

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
	if (!s) return ox_emu::ret(cudaErrorInvalidValue);
	*s = new CUstream_st{flags, nullptr, false, cudaStreamCaptureModeGlobal};
	return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	if (!ox_emu::real_stream(s)) return ox_emu::ret(cudaErrorInvalidResourceHandle);
	std::vector<cudaStream_t> &c = ox_emu::S().capturing;
	for (size_t i = 0; i < c.size(); i++)
		if (c[i] == s) c.erase(c.begin() + (long)i--);
	delete s->graph;
	delete s;
	return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	return ox_emu::real_stream(s) ? ox_emu::sync_check(s) : ox_emu::sync_check();
}
inline cudaError_t cudaStreamQuery(cudaStream_t s) { return cudaStreamSynchronize(s); }

inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
	if (!e) return ox_emu::ret(cudaErrorInvalidValue);
	*e = new CUevent_st{flags, false, 0.0};
	return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	if (!e) return ox_emu::ret(cudaErrorInvalidResourceHandle);
	delete e;
	return cudaSuccess;
}
/* every earlier operation has finished when this returns, so "now" is the record's time */
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0)
{
	if (!e) return ox_emu::ret(cudaErrorInvalidResourceHandle);
	if (ox_emu::capturing(s)) { /* events are not capturable here */
		s->invalid = true;
		return ox_emu::ret(cudaErrorStreamCaptureUnsupported);
	}
	e->recorded = true;
	e->ms = ox_emu::now_ms();
	return cudaSuccess;
}
inline cudaError_t cudaEventQuery(cudaEvent_t e) { return ox_emu::ret(e ? cudaSuccess : cudaErrorInvalidResourceHandle); }
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { return cudaEventQuery(e); }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	if (!ms) return ox_emu::ret(cudaErrorInvalidValue);
	if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & cudaEventDisableTiming))
		return ox_emu::ret(cudaErrorInvalidResourceHandle);
	*ms = (float)(b->ms - a->ms);
	return cudaSuccess;
}

/* ---- CUDA Graphs, by stream capture: the recorded operations, replayed in order ---- */
inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
	if (!ox_emu::real_stream(s)) return ox_emu::ret(cudaErrorStreamCaptureUnsupported);
	if (s->graph) return ox_emu::ret(cudaErrorIllegalState);
	if ((unsigned int)mode > cudaStreamCaptureModeRelaxed) return ox_emu::ret(cudaErrorInvalidValue);
	s->graph = new CUgraph_st();
	s->invalid = false;
	s->mode = mode;
	ox_emu::S().capturing.push_back(s);
	return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
	if (!g) return ox_emu::ret(cudaErrorInvalidValue);
	*g = nullptr;
	if (!ox_emu::capturing(s)) return ox_emu::ret(cudaErrorIllegalState);
	std::vector<cudaStream_t> &c = ox_emu::S().capturing;
	for (size_t i = 0; i < c.size(); i++)
		if (c[i] == s) c.erase(c.begin() + (long)i--);
	CUgraph_st *graph = s->graph;
	s->graph = nullptr;
	if (s->invalid) {
		delete graph;
		return ox_emu::ret(cudaErrorStreamCaptureInvalidated);
	}
	*g = graph;
	return cudaSuccess;
}
inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *st)
{
	if (!st) return ox_emu::ret(cudaErrorInvalidValue);
	*st = !ox_emu::capturing(s) ? cudaStreamCaptureStatusNone
		: s->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
	return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags = 0)
{
	(void)flags;
	if (!x || !g) return ox_emu::ret(cudaErrorInvalidValue);
	*x = new CUgraphExec_st{g->ops};
	if (FILE *t = ox_emu::trace()) fprintf(t, "instantiate %zu\n", g->ops.size()), fflush(t);
	return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, cudaGraphNode_t *, char *log, size_t n)
{
	if (log && n) log[0] = 0;
	return cudaGraphInstantiate(x, g, 0ULL);
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
	if (!x) return ox_emu::ret(cudaErrorInvalidResourceHandle);
	if (ox_emu::capturing(s)) { /* a graph launched into a capture: its operations, copied */
		std::vector<std::function<void()>> ops = x->ops;
		return ox_emu::enqueue(s, [ops]() { for (auto &op : ops) op(); });
	}
	FILE *t = ox_emu::trace();
	if (t) fprintf(t, "graph %zu\n", x->ops.size()), fflush(t);
	for (auto &op : x->ops) op();
	if (t) fprintf(t, "graph-end\n"), fflush(t);
	return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) { delete x; return cudaSuccess; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return cudaSuccess; }

#endif /* OX_CUDA_EMU_H */
