/* ox_pool.h: the network's parallel-for hook (docs/api.md, Threads) over
 * POSIX threads, for an application as it is for the --main program.
 *
 * codegen writes this text as OUT_pool.h (onnxcc --pool; --main includes
 * it), replacing the placeholders `PFX` `_` and `PFXU` `_` as in
 * ox_main.c and `HEADER` `_NAME` with the network's header. Include it in
 * one file of a program, after the network's header, and call
 *
 *     PFX_set_threads(n)  n threads run the loops: the caller and n - 1
 *                         workers (started as needed and kept; those past
 *                         n idle, asleep); 1: serial. 0, or -1 (n outside
 *                         1..1024, or a thread that could not be made)
 *
 * before a run (not during one); the runs' loops are then split over the
 * n threads. Needs POSIX threads and C11 atomics (-lpthread).
 */
#ifndef PFXU_POOL_H
#define PFXU_POOL_H
#include "HEADER_NAME"
#include <stdint.h>

/* The pool: N - 1 workers plus the calling thread. Loop k of a run is split into N
 * even ranges, range w first taken by thread w (consecutive loops then tend
 * to find their data in the same core's cache), in chunks of about an
 * eighth of it claimed from the range's atomic cursor; a thread whose range
 * is used up takes chunks from the others'. The loop is over when all its
 * indices are done, whoever did them: a worker the OS has descheduled (a
 * busy machine) holds the caller up by one chunk at most, not by its range.
 *
 * The loop's description (task, ranges) is published by an even generation
 * number; the caller makes it odd while it rewrites them, after waiting
 * until no worker is inside a loop (`active`), and a worker counts itself
 * in and then checks the generation again, so no worker ever mixes two
 * loops. Workers spin a few milliseconds between loops (a run's loops come
 * back to back), then sleep on a condition variable, so an idle program
 * uses no CPU; the caller waiting for the last chunks spins, then yields. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define OXT_MAXT 1024
static struct {
	int n;
	atomic_long gen;
	atomic_int active, sleeping;
	atomic_long done;
	PFX_task_fn task;
	void *ctx;
	long chunk;
	pthread_mutex_t mu;
	pthread_cond_t cv;
} oxt_pool = {1, 0, 0, 0, 0, NULL, NULL, 1, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
/* range w's next index and end, a cache line each */
static struct {
	atomic_long next;
	long end;
	char pad[64 - sizeof(atomic_long) - sizeof(long)];
} oxt_range[OXT_MAXT];

/* a polite busy wait: let a sibling hardware thread run */
static inline void oxt_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* spin a while, then give the CPU away: for waits on a descheduled thread */
static inline void oxt_wait(long *spin)
{
	if ((*spin)++ < 20000)
		oxt_relax();
	else
		sched_yield();
}

/* thread w's share: chunks of its own range, then of the others' */
static void oxt_work(int w)
{
	long c = oxt_pool.chunk;
	for (int k = 0; k < oxt_pool.n; k++) {
		int r = (w + k) % oxt_pool.n;
		long e = oxt_range[r].end;
		for (long b; (b = atomic_fetch_add(&oxt_range[r].next, c)) < e;) {
			long f = b + c < e ? b + c : e;
			oxt_pool.task(oxt_pool.ctx, b, f);
			atomic_fetch_add(&oxt_pool.done, f - b);
		}
	}
}

static void *oxt_worker(void *arg)
{
	int w = (int)(intptr_t)arg;
	long seen = 0;
	for (;;) {
		long g;
		for (long spin = 0; (g = atomic_load(&oxt_pool.gen)) == seen || (g & 1); spin++) {
			if (spin < 100000) { /* a few milliseconds */
				oxt_relax();
				continue;
			}
			pthread_mutex_lock(&oxt_pool.mu);
			atomic_fetch_add(&oxt_pool.sleeping, 1);
			while ((g = atomic_load(&oxt_pool.gen)) == seen || (g & 1))
				pthread_cond_wait(&oxt_pool.cv, &oxt_pool.mu);
			atomic_fetch_sub(&oxt_pool.sleeping, 1);
			pthread_mutex_unlock(&oxt_pool.mu);
			break;
		}
		seen = g;
		atomic_fetch_add(&oxt_pool.active, 1);
		/* (not when the caller moved on: take the next one; nor when the
		 * pool was made smaller than w: onnxcc_set_threads) */
		if (atomic_load(&oxt_pool.gen) == g && w < oxt_pool.n)
			oxt_work(w);
		atomic_fetch_sub(&oxt_pool.active, 1);
	}
	return NULL;
}

static void oxt_parallel_for(void *user, long n, PFX_task_fn task, void *ctx)
{
	(void)user;
	int t = oxt_pool.n;
	long spin = 0;
	atomic_fetch_add(&oxt_pool.gen, 1); /* odd: being rewritten */
	while (atomic_load(&oxt_pool.active) > 0)
		oxt_wait(&spin);
	oxt_pool.task = task, oxt_pool.ctx = ctx;
	oxt_pool.chunk = n / (8L * t) > 1 ? n / (8L * t) : 1;
	for (int w = 0; w < t; w++) {
		atomic_store(&oxt_range[w].next, n * w / t);
		oxt_range[w].end = n * (w + 1) / t;
	}
	atomic_store(&oxt_pool.done, 0);
	atomic_fetch_add(&oxt_pool.gen, 1); /* even: published (sequentially consistent) */
	if (atomic_load(&oxt_pool.sleeping)) {
		pthread_mutex_lock(&oxt_pool.mu);
		pthread_cond_broadcast(&oxt_pool.cv);
		pthread_mutex_unlock(&oxt_pool.mu);
	}
	oxt_work(0);
	spin = 0;
	while (atomic_load(&oxt_pool.done) < n)
		oxt_wait(&spin);
}

/* workers are started as needed and kept; those past n idle */
static int PFX_set_threads(int n)
{
	static int started = 1;
	if (n < 1 || n > OXT_MAXT)
		return -1;
	for (; started < n; started++) {
		pthread_t t;
		if (pthread_create(&t, NULL, oxt_worker, (void *)(intptr_t)started))
			return -1;
		pthread_detach(t);
	}
	oxt_pool.n = n;
#ifndef PFXU_CUDA /* (the CUDA target's kernels are the parallel work) */
	PFX_set_parallel_for(n > 1 ? oxt_parallel_for : NULL, NULL);
#endif
	return 0;
}
#endif
