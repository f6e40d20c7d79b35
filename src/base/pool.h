/* The thread pool the kernels split their work over (docs/architecture.md).
 *
 * One persistent pool: pthreads natively, Emscripten pthreads in a wasm build compiled with
 * -pthread (__EMSCRIPTEN_PTHREADS__); any other build has a pool of one, the calling thread.
 * Workers and their scratch buffers are made by wt_set_threads (or the first use, sized by
 * WT_THREADS natively), never inside a step: wt_parallel_for neither creates threads nor
 * allocates.
 *
 * A pool is a handle (wt_pool): the runner holds the one its kernels split their work over
 * (wt_pool_hold; a session's is in its ops/exec.h wt_exec), and a kernel runs on the pool its
 * thread holds, or the process's outside any hold (an op's unit test). There is one pool, the
 * process's (wt_pool_default), the one piece of state below the runtime that is not a module's:
 * in the browser a thread is a Web Worker
 * that Emscripten starts once, with its own instance of the module, from a fixed set sized at
 * load (PTHREAD_POOL_SIZE), so a pool per module would take its workers from the same set and
 * starve another module's, and natively the cores are the process's too: two modules stepping
 * at once would each spin their workers on the same cores. One job runs at a time; a second
 * thread's wt_parallel_for while one runs (another module stepping on another thread) runs its
 * blocks inline, on its own thread. Its settings (the thread count, wt_pool_set_split_small)
 * are the process's with it, set while no job runs.
 *
 * Thread 0's scratch (the GEMM's packing buffers on the calling thread) is the pool's as well,
 * and belongs to the thread that holds the pool: the runtime holds it while a plan's kernels
 * run (wt_pool_hold), so that two modules stepping on two threads take turns instead of
 * sharing those buffers. A kernel run outside any hold (an op's unit test) uses them as the
 * process's only caller.
 *
 * Determinism is the kernels' part: a kernel cuts its output into blocks whose boundaries do not
 * depend on the thread count, and a block computes the same bits whichever thread runs it; a
 * reduction is cut into fixed blocks summed in a fixed order afterwards. */
#ifndef WT_BASE_POOL_H
#define WT_BASE_POOL_H

#include <stddef.h>
#include <stdint.h>

/* Most threads a pool has (explicit requests are clamped to it). */
#define WT_POOL_MAX_THREADS 16
/* Cores used when asked for "auto" (n <= 0), at most. */
#define WT_POOL_AUTO_MAX 8
/* Bytes of 64-byte-aligned scratch each worker (thread 1 ..) owns, in two parts: the inner
 * part for a leaf kernel's buffers (GEMM packing), the outer part for a kernel whose blocks call
 * a leaf kernel (Conv's im2col columns around its GEMM). Thread 0, the caller, has the inner
 * part only (the holder's, see above); its outer buffers are in its plan's arena. */
#define WT_POOL_SCRATCH_BYTES ((size_t)768 * 1024)
#define WT_POOL_OUTER_BYTES ((size_t)1280 * 1024)

typedef void (*wt_block_fn)(void *ctx, int64_t block, int32_t thread);

/* Runs fn(ctx, b, thread) for every b in [0, n_blocks) on the pool's workers and the calling
 * thread, and returns when all have finished. `thread` is the index of the running thread
 * (0 = the caller), for per-thread scratch. Blocks are handed out in order, but which thread runs
 * which block is not fixed. Called from inside a block (or from a second thread while the pool
 * is busy), it runs every block on the calling thread, passing that thread's index. */
void wt_parallel_for(int64_t n_blocks, wt_block_fn fn, void *ctx);

/* Threads the pool has now (1 in a single-threaded build); starts the pool on first use. */
int32_t wt_pool_threads(void);
/* Index of the calling thread in the pool: 0 for the caller of wt_parallel_for (or any thread
 * outside the pool), 1 .. threads-1 for workers. */
int32_t wt_pool_thread_index(void);
/* A thread's scratch, 64-byte aligned: the inner part (WT_POOL_SCRATCH_BYTES), and for a worker
 * (thread >= 1) the outer part (WT_POOL_OUTER_BYTES; NULL for thread 0). */
void *wt_pool_scratch(int32_t thread);
void *wt_pool_scratch_outer(int32_t thread);

typedef struct wt_pool wt_pool;

/* The process's pool (started on first use). */
wt_pool *wt_pool_default(void);

/* Makes the calling thread `pool`'s caller (NULL: the process's) until the matching release,
 * waiting while another thread holds it; holds nest, on one pool. The runtime's part (a plan's
 * run, constant folding), not a kernel's. Returns 0, or -1 (and holds nothing) when the pool
 * could not make its buffers or the thread holds another pool. */
int wt_pool_hold(wt_pool *pool);
void wt_pool_release(wt_pool *pool);

/* n items in blocks of `block` (a multiple of the kernel's vector width, so every item takes
 * the path it takes in one pass): fn(ctx, i0, count) per block on the pool when n >= min_n (or
 * wt_pool_split_small), else fn(ctx, 0, n) on the calling thread. For elementwise kernels, whose
 * items do not depend on one another. */
typedef void (*wt_range_fn)(void *ctx, int64_t i0, int64_t count);
void wt_parallel_range(int64_t n, int64_t block, int64_t min_n, wt_range_fn fn, void *ctx);

/* Rows of n elements each, for row-wise kernels (softmax, normalization): blocks of about
 * `block` elements (whole rows, at least one), on the pool from about min_n elements. The
 * row kernels use WT_ROWS_BLOCK and WT_ROWS_THREAD_MIN; those that cost tens of cycles an
 * element (softmax's exp) WT_ROWS_HEAVY_BLOCK and WT_ROWS_HEAVY_THREAD_MIN. */
#define WT_ROWS_BLOCK 16384
#define WT_ROWS_THREAD_MIN 65536
#define WT_ROWS_HEAVY_BLOCK 2048
#define WT_ROWS_HEAVY_THREAD_MIN 4096
static inline void wt_parallel_rows(int64_t rows, int64_t n, int64_t block, int64_t min_n,
                                    wt_range_fn fn, void *ctx) {
  int64_t per = n > 0 && n < block ? block / n : 1;
  wt_parallel_range(rows, per, n > 0 ? (min_n + n - 1) / n : rows + 1, fn, ctx);
}

/* Tests: with on != 0, kernels split work below their cut-overs too (into the same fixed
 * blocks), so small models exercise the threaded paths. Set while no job runs. */
void wt_pool_set_split_small(int on);
int wt_pool_split_small(void);

/* Blocks of `block` items for n items (the last one shorter): what a kernel splitting n
 * elementwise items uses. The count depends only on n and block, not on the thread count. */
static inline int64_t wt_pool_blocks(int64_t n, int64_t block) { return (n + block - 1) / block; }

#endif
