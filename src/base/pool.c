/* The thread pool (pool.h). One job at a time: the caller publishes (fn, ctx, n) under the
 * mutex, workers and the caller claim blocks one by one under it (blocks are coarse: GEMM
 * panels, thousands of elements), and the caller returns when every block is done. Nothing is
 * read outside the mutex, so a worker that wakes late (an Emscripten worker still loading) only
 * finds no block left: the caller never waits for a worker that has not claimed anything. */
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
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/threading.h>
#endif

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work_cv, done_cv;
  /* The job, under mu. */
  wt_block_fn fn;
  void *ctx;
  int64_t n, next, done;
  int stop;
  /* The workers (threads 1 .. nthreads-1), changed only by wt_set_threads. */
  int32_t nthreads;
  pthread_t tids[WT_POOL_MAX_THREADS];
  void *scratch[WT_POOL_MAX_THREADS];
  atomic_int busy;       /* a job is running: a nested or concurrent call runs inline */
  atomic_long published; /* jobs published so far: what a spinning worker watches */
} g_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
            .work_cv = PTHREAD_COND_INITIALIZER,
            .done_cv = PTHREAD_COND_INITIALIZER,
            .nthreads = 1};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* A worker polls this many times for the next job before it sleeps on the condition variable:
 * steps issue jobs back to back, and waking a sleeping thread costs tens of microseconds. */
#define WT_POOL_SPIN 2000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Claims and runs blocks until none is left; mu is held on entry and on return. */
static void run_blocks(int32_t self) {
  while (g_pool.next < g_pool.n) {
    int64_t b = g_pool.next++;
    wt_block_fn fn = g_pool.fn;
    void *ctx = g_pool.ctx;
    pthread_mutex_unlock(&g_pool.mu);
    fn(ctx, b, self);
    pthread_mutex_lock(&g_pool.mu);
    if (++g_pool.done == g_pool.n) pthread_cond_signal(&g_pool.done_cv);
  }
}

static void *worker(void *arg) {
  t_index = (int32_t)(intptr_t)arg;
  long seen = atomic_load_explicit(&g_pool.published, memory_order_relaxed);
  pthread_mutex_lock(&g_pool.mu);
  for (;;) {
    run_blocks(t_index);
    if (g_pool.stop) break;
    /* Spin a while for the next job, then sleep. */
    pthread_mutex_unlock(&g_pool.mu);
    for (int i = 0; i < WT_POOL_SPIN; i++) {
      if (atomic_load_explicit(&g_pool.published, memory_order_relaxed) != seen) break;
      cpu_relax();
    }
    pthread_mutex_lock(&g_pool.mu);
    while (!g_pool.stop && g_pool.next >= g_pool.n) pthread_cond_wait(&g_pool.work_cv, &g_pool.mu);
    seen = atomic_load_explicit(&g_pool.published, memory_order_relaxed);
    if (g_pool.stop) break;
  }
  pthread_mutex_unlock(&g_pool.mu);
  return NULL;
}

static void stop_workers(void) {
  pthread_mutex_lock(&g_pool.mu);
  g_pool.stop = 1;
  pthread_cond_broadcast(&g_pool.work_cv);
  pthread_mutex_unlock(&g_pool.mu);
  for (int32_t t = 1; t < g_pool.nthreads; t++) {
    pthread_join(g_pool.tids[t], NULL);
    free(g_pool.scratch[t]);
    g_pool.scratch[t] = NULL;
  }
  g_pool.nthreads = 1;
  g_pool.stop = 0;
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

int32_t wt_pool_threads(void) {
  pthread_once(&g_once, start_default);
  return g_pool.nthreads;
}

void *wt_pool_scratch(int32_t thread) {
  return thread > 0 && thread < WT_POOL_MAX_THREADS ? g_pool.scratch[thread] : NULL;
}

void *wt_pool_scratch_outer(int32_t thread) {
  char *s = wt_pool_scratch(thread);
  return s ? s + WT_POOL_SCRATCH_BYTES : NULL;
}

void wt_parallel_for(int64_t n_blocks, wt_block_fn fn, void *ctx) {
  if (n_blocks <= 0) return;
  int32_t threads = n_blocks > 1 ? wt_pool_threads() : 1;
  if (threads <= 1 || atomic_exchange(&g_pool.busy, 1)) {
    int32_t self = t_index;
    for (int64_t b = 0; b < n_blocks; b++) fn(ctx, b, self);
    return;
  }
  pthread_mutex_lock(&g_pool.mu);
  g_pool.fn = fn;
  g_pool.ctx = ctx;
  g_pool.n = n_blocks;
  g_pool.next = 0;
  g_pool.done = 0;
  atomic_fetch_add_explicit(&g_pool.published, 1, memory_order_relaxed);
  pthread_cond_broadcast(&g_pool.work_cv);
  run_blocks(t_index);
  while (g_pool.done < g_pool.n) pthread_cond_wait(&g_pool.done_cv, &g_pool.mu);
  g_pool.fn = NULL;
  g_pool.ctx = NULL;
  pthread_mutex_unlock(&g_pool.mu);
  atomic_store(&g_pool.busy, 0);
}

#else /* a single-threaded build: a pool of one */

int32_t wt_set_threads(int32_t n) {
  (void)n;
  return 1;
}

int32_t wt_pool_threads(void) { return 1; }

void *wt_pool_scratch(int32_t thread) {
  (void)thread;
  return NULL;
}

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
