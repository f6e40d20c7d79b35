/* The thread pool (pool.h). One job at a time, handed out without locks: the caller publishes
 * (fn, ctx) and then the job's block count in `ticket` (n << 32 | next); a thread claims block
 * `next` by a compare-and-swap of next -> next + 1 while next < n, reads (fn, ctx) after its
 * claim, and counts the block in `done` when it returns; the caller runs blocks too and then
 * spins until done == n. A claim is only ever of the current job (the ticket holds its n), and
 * the caller writes the next job only after every block of this one is done, so a thread that
 * looks late finds no block left, and the caller never waits for a thread that claimed nothing.
 * Between jobs a worker spins on the ticket for a while (steps issue jobs back to back, and a
 * sleeping thread takes tens of microseconds to wake), then sleeps on a condition variable; the
 * caller signals it only when some worker sleeps. */
#include "base/pool.h"

#include <stdlib.h>

#include "webtrain.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define WT_POOL_PTHREADS 1
#endif

static _Thread_local int32_t t_index; /* 0: the caller, or any thread outside the pool */

int32_t wt_pool_thread_index(void) { return t_index; }

#ifdef WT_POOL_PTHREADS
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#include <emscripten/threading.h>
#endif

struct wt_pool {
  pthread_mutex_t mu; /* for sleeping and waking only */
  pthread_cond_t work_cv;
  /* The job: written by the caller before it publishes the ticket, read after a claim. */
  wt_block_fn fn;
  void *ctx;
  atomic_uint_least64_t ticket; /* n << 32 | next: blocks handed out so far of the job's n */
  atomic_uint_least32_t done;   /* blocks finished */
  atomic_int sleepers;          /* workers asleep (or about to be) on work_cv */
  atomic_int stop;
  /* The workers (threads 1 .. nthreads-1), changed only by wt_set_threads. */
  int32_t nthreads;
  pthread_t tids[WT_POOL_MAX_THREADS];
  void *scratch[WT_POOL_MAX_THREADS];
  atomic_int busy; /* a job is running: a nested or concurrent call runs inline */
  pthread_mutex_t hold_mu; /* held by the thread that holds the pool (wt_pool_hold) */
  void *caller_scratch;    /* thread 0's inner scratch, the holder's */
};

/* The process's pool (pool.h says why there is one). */
static wt_pool g_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                         .work_cv = PTHREAD_COND_INITIALIZER,
                         .hold_mu = PTHREAD_MUTEX_INITIALIZER,
                         .nthreads = 1};

static _Thread_local int t_holds; /* this thread's nested holds */
static _Thread_local wt_pool *t_pool; /* the pool this thread holds or works for; NULL: none */

/* The pool a kernel on this thread splits its work over: the one its runner holds (or that the
 * thread works for), else the process's. */
static wt_pool *current(void) { return t_pool ? t_pool : &g_pool; }

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* How long a worker spins for the next job before it sleeps. */
#define WT_POOL_SPIN_NS 2000000.0

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static double now_ns(void) {
#ifdef __EMSCRIPTEN__
  return emscripten_get_now() * 1e6;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
#endif
}

static inline int has_work(uint64_t t) { return (uint32_t)t < (uint32_t)(t >> 32); }

/* Claims and runs blocks of the current job until none is left. */
static void run_blocks(wt_pool *P, int32_t self) {
  uint64_t t = atomic_load_explicit(&P->ticket, memory_order_relaxed);
  while (has_work(t)) {
    if (!atomic_compare_exchange_weak_explicit(&P->ticket, &t, t + 1, memory_order_acquire,
                                               memory_order_relaxed))
      continue; /* t now holds the current ticket */
    P->fn(P->ctx, (int64_t)(uint32_t)t, self);
    atomic_fetch_add_explicit(&P->done, 1, memory_order_release);
    t = atomic_load_explicit(&P->ticket, memory_order_relaxed);
  }
}

/* Waits for a job (or stop): spins, then sleeps. Returns 0 on stop. */
static int wait_work(void) {
  double until = 0;
  for (uint32_t i = 0;; i++) {
    if (atomic_load_explicit(&g_pool.stop, memory_order_relaxed)) return 0;
    if (has_work(atomic_load_explicit(&g_pool.ticket, memory_order_relaxed))) return 1;
    cpu_relax();
    if ((i & 255) != 0) continue;
    double t = now_ns();
    if (until == 0) until = t + WT_POOL_SPIN_NS;
    else if (t > until) break;
  }
  /* Sleep: announce it first, then look again (the caller stores the ticket, then reads
   * sleepers: one of the two sees the other's write). */
  pthread_mutex_lock(&g_pool.mu);
  atomic_fetch_add(&g_pool.sleepers, 1);
  while (!atomic_load(&g_pool.stop) && !has_work(atomic_load(&g_pool.ticket)))
    pthread_cond_wait(&g_pool.work_cv, &g_pool.mu);
  atomic_fetch_sub(&g_pool.sleepers, 1);
  pthread_mutex_unlock(&g_pool.mu);
  return !atomic_load(&g_pool.stop);
}

static void *worker(void *arg) {
  t_index = (int32_t)(intptr_t)arg;
  t_pool = &g_pool;
  while (wait_work()) run_blocks(&g_pool, t_index);
  return NULL;
}

static void stop_workers(void) {
  pthread_mutex_lock(&g_pool.mu);
  atomic_store(&g_pool.stop, 1);
  pthread_cond_broadcast(&g_pool.work_cv);
  pthread_mutex_unlock(&g_pool.mu);
  for (int32_t t = 1; t < g_pool.nthreads; t++) {
    pthread_join(g_pool.tids[t], NULL);
    free(g_pool.scratch[t]);
    g_pool.scratch[t] = NULL;
  }
  g_pool.nthreads = 1;
  atomic_store(&g_pool.stop, 0);
}

static int32_t platform_cores(void) {
#ifdef __EMSCRIPTEN__
  long n = emscripten_num_logical_cores();
#else
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  if (n < 1) n = 1;
  return (int32_t)(n > WT_POOL_AUTO_MAX ? WT_POOL_AUTO_MAX : n);
}

static int32_t start_workers(int32_t n) {
  if (n <= 0) n = platform_cores();
  if (n > WT_POOL_MAX_THREADS) n = WT_POOL_MAX_THREADS;
  int32_t t = 1;
  for (; t < n; t++) {
    void *s = aligned_alloc(64, WT_POOL_SCRATCH_BYTES + WT_POOL_OUTER_BYTES);
    if (!s) break;
    g_pool.scratch[t] = s;
    if (pthread_create(&g_pool.tids[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      free(s);
      g_pool.scratch[t] = NULL;
      break;
    }
    g_pool.nthreads = t + 1; /* stop_workers joins exactly the threads that started */
  }
  return g_pool.nthreads;
}

static void start_default(void) {
  g_pool.caller_scratch = aligned_alloc(64, WT_POOL_SCRATCH_BYTES);
  int32_t n = 0;
#ifndef __EMSCRIPTEN__
  const char *env = getenv("WT_THREADS");
  if (env && *env) n = (int32_t)strtol(env, NULL, 10);
#endif
  start_workers(n);
}

int32_t wt_set_threads(int32_t n) {
  pthread_once(&g_once, start_default);
  stop_workers();
  return start_workers(n);
}

wt_pool *wt_pool_default(void) {
  pthread_once(&g_once, start_default);
  return &g_pool;
}

int32_t wt_pool_threads(void) {
  pthread_once(&g_once, start_default);
  return current()->nthreads;
}

void *wt_pool_scratch(int32_t thread) {
  pthread_once(&g_once, start_default);
  wt_pool *P = current();
  if (thread == 0) return P->caller_scratch;
  return thread > 0 && thread < WT_POOL_MAX_THREADS ? P->scratch[thread] : NULL;
}

void *wt_pool_scratch_outer(int32_t thread) {
  char *s = thread > 0 ? wt_pool_scratch(thread) : NULL;
  return s ? s + WT_POOL_SCRATCH_BYTES : NULL;
}

int wt_pool_hold(wt_pool *pool) {
  pthread_once(&g_once, start_default);
  wt_pool *P = pool ? pool : &g_pool;
  if (!P->caller_scratch) return -1;
  if (t_holds > 0 && t_pool != P) return -1; /* holds nest on one pool */
  if (t_holds++ == 0) {
    pthread_mutex_lock(&P->hold_mu);
    t_pool = P;
  }
  return 0;
}

void wt_pool_release(wt_pool *pool) {
  (void)pool;
  if (--t_holds == 0) {
    pthread_mutex_unlock(&t_pool->hold_mu);
    t_pool = NULL;
  }
}

void wt_parallel_for(int64_t n_blocks, wt_block_fn fn, void *ctx) {
  if (n_blocks <= 0) return;
  int32_t threads = n_blocks > 1 ? wt_pool_threads() : 1;
  wt_pool *P = current();
  if (threads <= 1 || n_blocks > UINT32_MAX || atomic_exchange(&P->busy, 1)) {
    int32_t self = t_index;
    for (int64_t b = 0; b < n_blocks; b++) fn(ctx, b, self);
    return;
  }
  P->fn = fn;
  P->ctx = ctx;
  atomic_store_explicit(&P->done, 0, memory_order_relaxed);
  atomic_store(&P->ticket, (uint64_t)n_blocks << 32); /* seq_cst: before reading sleepers */
  if (atomic_load(&P->sleepers) > 0) {
    pthread_mutex_lock(&P->mu);
    pthread_cond_broadcast(&P->work_cv);
    pthread_mutex_unlock(&P->mu);
  }
  run_blocks(P, t_index);
  /* The last blocks run on workers: wait for them (yielding now and then, for the case of more
   * threads than cores). */
  for (uint32_t i = 1; atomic_load_explicit(&P->done, memory_order_acquire) < n_blocks; i++) {
    cpu_relax();
    if ((i & 4095) == 0) sched_yield();
  }
  atomic_store(&P->busy, 0);
}

#else /* a single-threaded build: a pool of one */

/* The one thread's inner scratch, made when the pool is sized (wt_set_threads, at load) or at
 * its first use, as a threaded build makes it when its pool starts. */
struct wt_pool {
  void *caller_scratch;
};
static wt_pool g_pool;

wt_pool *wt_pool_default(void) { return &g_pool; }

void *wt_pool_scratch(int32_t thread) {
  if (thread != 0) return NULL;
  if (!g_pool.caller_scratch) g_pool.caller_scratch = aligned_alloc(64, WT_POOL_SCRATCH_BYTES);
  return g_pool.caller_scratch;
}

int32_t wt_set_threads(int32_t n) {
  (void)n;
  wt_pool_scratch(0); /* made now, with the pool, not in a step */
  return 1;
}

int32_t wt_pool_threads(void) { return 1; }

int wt_pool_hold(wt_pool *pool) {
  (void)pool;
  return wt_pool_scratch(0) ? 0 : -1;
}
void wt_pool_release(wt_pool *pool) { (void)pool; }

void *wt_pool_scratch_outer(int32_t thread) {
  (void)thread;
  return NULL;
}

void wt_parallel_for(int64_t n_blocks, wt_block_fn fn, void *ctx) {
  for (int64_t b = 0; b < n_blocks; b++) fn(ctx, b, 0);
}

#endif

int32_t wt_get_threads(void) { return wt_pool_threads(); }

static int g_split_small;

void wt_pool_set_split_small(int on) { g_split_small = on; }

int wt_pool_split_small(void) { return g_split_small; }

typedef struct range_job {
  int64_t n, block;
  wt_range_fn fn;
  void *ctx;
} range_job;

static void range_block(void *ctx, int64_t b, int32_t thread) {
  (void)thread;
  const range_job *r = ctx;
  int64_t i0 = b * r->block, count = r->n - i0 < r->block ? r->n - i0 : r->block;
  r->fn(r->ctx, i0, count);
}

void wt_parallel_range(int64_t n, int64_t block, int64_t min_n, wt_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (n < min_n && !g_split_small) {
    fn(ctx, 0, n);
    return;
  }
  range_job r = {n, block, fn, ctx};
  wt_parallel_for(wt_pool_blocks(n, block), range_block, &r);
}
