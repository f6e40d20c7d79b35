/* The thread pool (src/base/pool.c) and the threaded kernels: every block runs exactly once on
 * a thread of the pool, nested calls run inline, and GEMM (every path, several shapes), the
 * optimizer updates, elementwise maps, broadcast binary ops, reductions, row kernels, pooling and
 * its gradients and convolutions give the same bits at 1, 2, 3 and 4 threads, with and without
 * the cut-overs (and, where there is one, as the plain path they replace). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "check.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/norm.h"
#include "backend/cpu/pool.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/softmax.h"
#include "backend/cpu/optim.h"
#include "webtrain.h"

/* ---- the pool ----------------------------------------------------------------------------- */

#define NB 1000
static atomic_int g_runs[NB];
static atomic_int g_bad_thread, g_nested_ok;

static void count_block(void *ctx, int64_t b, int32_t thread) {
  int32_t threads = *(const int32_t *)ctx;
  if (thread < 0 || thread >= threads || thread != wt_pool_thread_index()) atomic_fetch_add(&g_bad_thread, 1);
  if (thread > 0 && wt_pool_scratch(thread) == NULL) atomic_fetch_add(&g_bad_thread, 1);
  atomic_fetch_add(&g_runs[b], 1);
}

static void inner_block(void *ctx, int64_t b, int32_t thread) {
  (void)b;
  if (thread == *(const int32_t *)ctx) atomic_fetch_add(&g_nested_ok, 1);
}

static void outer_block(void *ctx, int64_t b, int32_t thread) {
  (void)ctx;
  (void)b;
  /* nested: runs inline, on this thread */
  wt_parallel_for(3, inner_block, &thread);
}

static atomic_long g_sum;

static void count_local(void *ctx, int64_t b, int32_t thread) {
  (void)thread;
  atomic_fetch_add((_Atomic long *)ctx, b + 1);
}

static void sum_block(void *ctx, int64_t b, int32_t thread) {
  (void)ctx;
  (void)thread;
  atomic_fetch_add_explicit(&g_sum, b + 1, memory_order_relaxed);
}

/* Jobs back to back (workers still spinning from the last one, or waking) from this thread and,
 * at the same time, from a second one (its calls run inline while the pool is busy): every block
 * of every job runs once. */
static void *second_caller(void *arg) {
  long *bad = arg;
  for (int i = 0; i < 2000; i++) {
    _Atomic long local = 0;
    wt_parallel_for(1 + i % 5, count_local, &local);
    if (atomic_load(&local) != (1 + i % 5) * (2 + i % 5) / 2) (*bad)++;
  }
  return NULL;
}

static void test_pool_back_to_back(void) {
  for (int32_t t = 2; t <= 4; t++) {
    wt_set_threads(t);
    long bad = 0;
    pthread_t other;
    CHECK(pthread_create(&other, NULL, second_caller, &bad) == 0);
    int ok = 1;
    for (int i = 0; i < 20000; i++) {
      int64_t n = 1 + i % 9;
      atomic_store(&g_sum, 0);
      wt_parallel_for(n, sum_block, NULL);
      ok &= atomic_load(&g_sum) == n * (n + 1) / 2;
    }
    pthread_join(other, NULL);
    CHECK(ok && bad == 0);
  }
}

static void test_pool(void) {
  for (int32_t t = 1; t <= 4; t++) {
    CHECK(wt_set_threads(t) == t);
    CHECK(wt_get_threads() == t);
    for (int rep = 0; rep < 50; rep++) {
      int64_t n = rep % 7 == 0 ? 1 : NB - rep;
      for (int i = 0; i < NB; i++) atomic_store(&g_runs[i], 0);
      wt_parallel_for(n, count_block, &t);
      int ok = 1;
      for (int64_t i = 0; i < NB; i++) ok &= atomic_load(&g_runs[i]) == (i < n ? 1 : 0);
      CHECK(ok);
    }
    wt_parallel_for(0, count_block, &t);
    CHECK(atomic_load(&g_bad_thread) == 0);
    atomic_store(&g_nested_ok, 0);
    wt_parallel_for(10, outer_block, NULL);
    CHECK(atomic_load(&g_nested_ok) == 30);
  }
  /* auto: the platform's cores, at least 1, at most WT_POOL_AUTO_MAX; clamped requests */
  int32_t a = wt_set_threads(0);
  CHECK(a >= 1 && a <= WT_POOL_AUTO_MAX);
  CHECK(wt_set_threads(-3) == a);
  CHECK(wt_set_threads(1000) == WT_POOL_MAX_THREADS);
  CHECK(wt_pool_thread_index() == 0 && wt_pool_scratch(0) != NULL && wt_pool_scratch_outer(0) == NULL);
}

/* ---- GEMM --------------------------------------------------------------------------------- */

static void fill(float *p, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

typedef struct shape {
  int64_t M, N, K;
} shape;

static void test_gemm(void) {
  /* packed (several blocks along M and N, edges, K over two KC slices), direct, thin */
  static const shape shapes[] = {{64, 256, 784}, {200, 130, 70},  {513, 67, 1030}, {128, 128, 128},
                                 {8, 784, 128},  {300, 300, 300}, {16, 12, 16},    {3, 512, 512},
                                 {128, 1, 784},  {1000, 40, 9},   {37, 999, 260},
                                 {128, 128, 64}, {96, 52, 100},   {61, 35, 256},
                                 /* a batch of <= MC rows over several NC column blocks and two
                                  * KC slices (the slices-outermost order) */
                                 {64, 600, 1030}, {66, 520, 700},
                                 /* one column panel: op(A) read in place */
                                 {300, 8, 1030}, {130, 6, 700},
                                 /* few rows: transposed, op(B) read in place; a shallow K:
                                  * row tiles outermost */
                                 {8, 700, 1100}, {30, 300, 600}, {700, 300, 8}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
    float *C0 = malloc(sizeof(float) * (size_t)(M * N)), *C1 = malloc(sizeof(float) * (size_t)(M * N));
    float *R = malloc(sizeof(float) * (size_t)(M * N));
    fill(A, M * K, 1u + (unsigned)s);
    fill(B, K * N, 7u + (unsigned)s);
    for (int variant = 0; variant < 12; variant++) {
      int ta = variant & 1, tb = (variant >> 1) & 1, relu = variant >= 8;
      float beta = (variant >> 2) & 1 ? 0.5f : 0.0f;
      int64_t lda = ta ? M : K, ldb = tb ? K : N;
      int same = 1;
      for (int split = 0; split < 2; split++) {
        wt_pool_set_split_small(split);
        for (int32_t t = 1; t <= 4; t++) {
          wt_set_threads(t);
          float *C = t == 1 && split == 0 ? C0 : C1;
          fill(C, M * N, 99u); /* read when beta != 0 */
          if (relu) wt_sgemm_relu(ta, tb, M, N, K, 1.25f, A, lda, B, ldb, beta, C, N);
          else wt_sgemm(ta, tb, M, N, K, 1.25f, A, lda, B, ldb, beta, C, N);
          if (C != C0) same &= memcmp(C0, C1, sizeof(float) * (size_t)(M * N)) == 0;
        }
      }
      wt_pool_set_split_small(0);
      if (!same)
        fprintf(stderr, "gemm %lldx%lldx%lld ta=%d tb=%d beta=%g relu=%d differs across threads\n",
                (long long)M, (long long)N, (long long)K, ta, tb, beta, relu);
      CHECK(same);
      /* and right: against the scalar reference */
      fill(R, M * N, 99u);
      wt_sgemm_ref(ta, tb, M, N, K, 1.25f, A, lda, B, ldb, beta, R, N);
      double worst = 0;
      for (int64_t i = 0; i < M * N; i++) {
        float r = relu && R[i] < 0 ? 0.0f : R[i];
        double e = fabs((double)C0[i] - r) / (1.0 + fabs((double)r));
        if (e > worst) worst = e;
      }
      CHECK(worst < 1e-4);
    }
    free(A);
    free(B);
    free(C0);
    free(C1);
    free(R);
  }
}

/* Batched products (MatMul's batch dims, attention heads): item t at t * size of each. */
static void batch_offsets(const void *ctx, int64_t t, int64_t off[3]) {
  const shape *s = ctx;
  off[0] = t * s->M * s->K;
  off[1] = t * s->K * s->N;
  off[2] = t * s->M * s->N;
}

static void test_gemm_batch(void) {
  /* {128, 128, 64}: attention's heads (2^20 multiply-adds: split by product from 2 threads,
   * by block of each product at 4); {96, 200, 256}: past the by-product limit */
  static const shape shapes[] = {{128, 128, 64}, {12, 12, 16}, {64, 300, 64}, {96, 200, 256}, {160, 256, 256}};
  const int64_t nbatch = 6;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
    float *A = malloc(sizeof(float) * (size_t)(nbatch * M * K));
    float *B = malloc(sizeof(float) * (size_t)(nbatch * K * N));
    float *C0 = malloc(sizeof(float) * (size_t)(nbatch * M * N));
    float *C1 = malloc(sizeof(float) * (size_t)(nbatch * M * N));
    fill(A, nbatch * M * K, 11);
    fill(B, nbatch * K * N, 12);
    for (int tb = 0; tb < 2; tb++) {
      /* one product at a time, one thread: the reference */
      wt_set_threads(1);
      for (int64_t t = 0; t < nbatch; t++)
        wt_sgemm_relu(0, tb, M, N, K, 1.0f, A + t * M * K, K, B + t * K * N, tb ? K : N, 0.0f,
                      C0 + t * M * N, N);
      int same = 1;
      for (int split = 0; split < 2; split++)
        for (int32_t threads = 1; threads <= 4; threads++) {
          wt_pool_set_split_small(split);
          wt_set_threads(threads);
          memset(C1, 0xff, sizeof(float) * (size_t)(nbatch * M * N));
          wt_sgemm_batch(0, tb, nbatch, M, N, K, 1.0f, A, K, B, tb ? K : N, 0.0f, C1, N, 1,
                         batch_offsets, &shapes[s]);
          same &= !memcmp(C0, C1, sizeof(float) * (size_t)(nbatch * M * N));
        }
      wt_pool_set_split_small(0);
      CHECK(same);
    }
    free(A);
    free(B);
    free(C0);
    free(C1);
  }
}

/* ---- optimizer kernels -------------------------------------------------------------------- */

static void test_optim(void) {
  const int64_t n = 5 * 16384 + 4099; /* above the cut-over, a short last block, a scalar tail */
  float *p0 = malloc(sizeof(float) * n), *m0 = malloc(sizeof(float) * n), *v0 = malloc(sizeof(float) * n);
  float *g = malloc(sizeof(float) * n);
  float *p[2], *m[2], *v[2];
  for (int r = 0; r < 2; r++) {
    p[r] = malloc(sizeof(float) * n);
    m[r] = malloc(sizeof(float) * n);
    v[r] = malloc(sizeof(float) * n);
  }
  fill(p0, n, 3);
  fill(m0, n, 4);
  fill(g, n, 5);
  fill(v0, n, 6);
  for (int64_t i = 0; i < n; i++) v0[i] = v0[i] * v0[i];
  for (int mode = 0; mode < 5; mode++) {
    int same = 1;
    for (int32_t t = 1; t <= 4; t++) {
      wt_set_threads(t);
      int r = t == 1 ? 0 : 1;
      memcpy(p[r], p0, sizeof(float) * n);
      memcpy(m[r], m0, sizeof(float) * n);
      memcpy(v[r], v0, sizeof(float) * n);
      for (int step = 1; step <= 3; step++) {
        wt_adamw_params hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                              .weight_decay = 0.01f, .adam_mode = mode & 1, .correct_bias = 1,
                              .t = step};
        if (mode < 2) wt_adamw_update_f32(p[r], g, m[r], v[r], n, &hp);
        else if (mode == 2) wt_sgd_update_f32(p[r], g, n, 0.05f);
        else if (mode == 3) wt_scale_f32(p[r], n, 0.75f);
        else wt_accumulate_f32(p[r], g, n);
      }
      if (r)
        same &= !memcmp(p[0], p[1], sizeof(float) * n) && !memcmp(m[0], m[1], sizeof(float) * n) &&
                !memcmp(v[0], v[1], sizeof(float) * n);
    }
    if (!same) fprintf(stderr, "optimizer kernel %d differs across threads\n", mode);
    CHECK(same);
    CHECK(memcmp(p[0], p0, sizeof(float) * n) != 0);
  }
  for (int r = 0; r < 2; r++) {
    free(p[r]);
    free(m[r]);
    free(v[r]);
  }
  free(p0);
  free(m0);
  free(v0);
  free(g);
}

/* ---- elementwise maps --------------------------------------------------------------------- */

static void test_elementwise(void) {
  const int64_t n = 4 * WT_EW_BLOCK + 1234 + 3; /* above the cut-over, a scalar tail */
  float *x = malloc(sizeof(float) * n), *dy = malloc(sizeof(float) * n);
  float *y0 = malloc(sizeof(float) * n), *y1 = malloc(sizeof(float) * n);
  fill(x, n, 21);
  fill(dy, n, 22);
  static const wt_ew_unop un[] = {WT_EW_ERF, WT_EW_TANH, WT_EW_SIGMOID, WT_EW_EXP, WT_EW_RELU, WT_EW_LOG};
  static const wt_ew_gradop gr[] = {WT_EW_GELU_GRAD, WT_EW_TANH_GRAD, WT_EW_RELU_GRAD};
  for (size_t k = 0; k < sizeof un / sizeof un[0] + sizeof gr / sizeof gr[0]; k++) {
    int same = 1;
    for (int32_t t = 1; t <= 4; t++) {
      wt_set_threads(t);
      float *y = t == 1 ? y0 : y1;
      if (k < sizeof un / sizeof un[0]) wt_ew_unary_f32(un[k], n, x, y, 0.0f, 0.0f);
      else wt_ew_grad_f32(gr[k - sizeof un / sizeof un[0]], n, dy, x, y, 0.0f);
      if (t > 1) same &= !memcmp(y0, y1, sizeof(float) * n);
    }
    if (!same) fprintf(stderr, "elementwise map %zu differs across threads\n", k);
    CHECK(same);
  }
  free(x);
  free(dy);
  free(y0);
  free(y1);
}

/* ---- broadcast binary ops ------------------------------------------------------------------ */

static int f32_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  wt_ew_binary_f32(*(const wt_ew_binop *)user, n, p[0], st[0], p[1], st[1], out);
  return 0;
}

static int i32_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  return wt_ew_binary_i32(*(const wt_ew_binop *)user, n, p[0], st[0], p[1], st[1], out);
}

/* out = a op b over a broadcast: the plain walk against the pool's at 1-4 threads. */
static int bcast_same(int rank, const int64_t *od, const int *ranks, const int64_t *const *dims,
                      wt_ew_binop op, const float *a, const float *b, float *y0, float *y1) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= od[i];
  wt_bcast plan;
  wt_bcast_init(&plan, rank, od, 2, ranks, dims);
  const void *ins[2] = {a, b};
  const size_t es[2] = {4, 4};
  wt_set_threads(1);
  wt_bcast_run(&plan, ins, es, y0, 4, f32_row, &op);
  int same = 1;
  for (int split = 0; split < 2; split++)
    for (int32_t t = 1; t <= 4; t++) {
      wt_pool_set_split_small(split);
      wt_set_threads(t);
      memset(y1, 0x7f, sizeof(float) * n);
      same &= wt_bcast_run_pool(&plan, ins, es, y1, 4, f32_row, &op) == 0;
      same &= !memcmp(y0, y1, sizeof(float) * n);
    }
  wt_pool_set_split_small(0);
  return same;
}

static void test_broadcast(void) {
  enum { N = 70001 * 3 };
  float *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N);
  float *y0 = malloc(sizeof(float) * N), *y1 = malloc(sizeof(float) * N);
  fill(a, N, 51);
  fill(b, N, 52);
  /* [37, 5, 401] op [5, 1] (rows in blocks, offsets from the block's first row); [3, 70001] op
   * [3, 70001] (one long row, in pieces); [70001, 3] op [3] (short rows); [1, 70001] op [1] */
  static const int64_t d0[] = {37, 5, 401}, d1[] = {5, 1}, e0[] = {3, 70001}, f0[] = {70001, 3},
                       f1[] = {3}, g0[] = {1, 70001}, g1[] = {1};
  static const wt_ew_binop ops[] = {WT_EW_ADD, WT_EW_DIV, WT_EW_POW, WT_EW_PRELU};
  int same = 1;
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    same &= bcast_same(3, d0, (int[]){3, 2}, (const int64_t *const[]){d0, d1}, ops[k], a, b, y0, y1);
    same &= bcast_same(2, e0, (int[]){2, 2}, (const int64_t *const[]){e0, e0}, ops[k], a, b, y0, y1);
    same &= bcast_same(2, f0, (int[]){2, 1}, (const int64_t *const[]){f0, f1}, ops[k], a, b, y0, y1);
    same &= bcast_same(2, g0, (int[]){2, 1}, (const int64_t *const[]){g0, g1}, ops[k], b, a, y0, y1);
  }
  if (!same) fprintf(stderr, "broadcast binary ops differ across threads or from the plain walk\n");
  CHECK(same);
  /* an integer division by zero in one piece is reported from the pool */
  int32_t *ia = malloc(sizeof(int32_t) * N), *ib = malloc(sizeof(int32_t) * N);
  int32_t *io = malloc(sizeof(int32_t) * N);
  for (int64_t i = 0; i < N; i++) {
    ia[i] = (int32_t)i;
    ib[i] = (int32_t)(i % 7 + 1);
  }
  ib[N - 5] = 0;
  wt_bcast plan;
  wt_bcast_init(&plan, 2, e0, 2, (int[]){2, 2}, (const int64_t *const[]){e0, e0});
  wt_ew_binop div = WT_EW_DIV;
  for (int32_t t = 1; t <= 4; t++) {
    wt_set_threads(t);
    CHECK(wt_bcast_run_pool(&plan, (const void *const[]){ia, ib}, (const size_t[]){4, 4}, io, 4,
                            i32_row, &div) == 1);
  }
  free(a);
  free(b);
  free(y0);
  free(y1);
  free(ia);
  free(ib);
  free(io);
}

/* ---- reductions and global pooling ---------------------------------------------------------- */

/* wt_reduce_f32 over [outer, n, inner] at 1-4 threads (with and without the cut-over); where
 * the kind's column sums are exact to restate, against a plain loop too. */
static int reduce_same(wt_reduce_kind k, const float *x, int64_t outer, int64_t n, int64_t inner,
                       float *y0, float *y1) {
  int same = 1;
  for (int split = 0; split < 2; split++)
    for (int32_t t = 1; t <= 4; t++) {
      wt_pool_set_split_small(split);
      wt_set_threads(t);
      float *y = t == 1 && !split ? y0 : y1;
      wt_reduce_f32(k, x, outer, n, inner, y);
      if (y == y1) same &= !memcmp(y0, y1, sizeof(float) * outer * inner);
    }
  wt_pool_set_split_small(0);
  if (inner > 1 && (k == WT_RED_SUM || k == WT_RED_MAX || k == WT_RED_ABSSUM))
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        float a = k == WT_RED_MAX ? -INFINITY : 0.0f;
        for (int64_t r = 0; r < n; r++) {
          float v = x[(o * n + r) * inner + i];
          a = k == WT_RED_MAX ? (v > a ? v : a) : a + (k == WT_RED_ABSSUM ? fabsf(v) : v);
        }
        same &= !memcmp(&a, &y0[o * inner + i], sizeof a);
      }
  return same;
}

static void test_reduce(void) {
  enum { N = 301 * 515 };
  float *x = malloc(sizeof(float) * N), *y0 = malloc(sizeof(float) * N), *y1 = malloc(sizeof(float) * N);
  fill(x, N, 61);
  /* rows (inner 1); blocks in pieces (n 200: 84-column pieces, a 3-column tail); one wide
   * block; a block narrower than a piece */
  static const int64_t shapes[][3] = {{301, 515, 1}, {3, 200, 257}, {1, 70, 2003}, {75, 2066, 1}, {400, 127, 3}};
  static const wt_reduce_kind kinds[] = {WT_RED_SUM, WT_RED_SUMSQ, WT_RED_ABSSUM, WT_RED_MAX,
                                         WT_RED_MIN, WT_RED_LOGSUMEXP};
  int same = 1;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
      int ok = reduce_same(kinds[k], x, shapes[s][0], shapes[s][1], shapes[s][2], y0, y1);
      if (!ok) fprintf(stderr, "reduction %d over [%lld, %lld, %lld] differs\n", (int)kinds[k],
                       (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2]);
      same &= ok;
    }
  CHECK(same);
  /* global pooling: planes on the pool against one plane at a time */
  const int64_t NC = 401, S = 196;
  for (int max = 0; max < 2; max++) {
    wt_set_threads(1);
    for (int64_t c = 0; c < NC; c++)
      (max ? wt_global_maxpool : wt_global_avgpool)(1, S, x + c * S, y0 + c);
    for (int32_t t = 1; t <= 4; t++) {
      wt_set_threads(t);
      (max ? wt_global_maxpool : wt_global_avgpool)(NC, S, x, y1);
      CHECK(!memcmp(y0, y1, sizeof(float) * NC));
    }
  }
  free(x);
  free(y0);
  free(y1);
}

/* ---- row kernels: softmax, log-softmax, layer normalization ------------------------------ */

static void test_rows(void) {
  const int64_t rows = 301, n = 515; /* above the cut-over; rows not a multiple of the block */
  float *x = malloc(sizeof(float) * rows * n), *sc = malloc(sizeof(float) * n), *bi = malloc(sizeof(float) * n);
  float *y0 = malloc(sizeof(float) * rows * n), *y1 = malloc(sizeof(float) * rows * n);
  float st0[2 * 301], st1[2 * 301];
  fill(x, rows * n, 31);
  fill(sc, n, 32);
  fill(bi, n, 33);
  for (int k = 0; k < 3; k++) {
    int same = 1;
    for (int32_t t = 1; t <= 4; t++) {
      wt_set_threads(t);
      float *y = t == 1 ? y0 : y1, *st = t == 1 ? st0 : st1;
      if (k < 2) wt_softmax_f32(x, y, rows, n, 1, k, NULL);
      else wt_layernorm_f32(x, y, rows, n, sc, bi, 1e-5f, st, st + rows);
      if (t > 1) same &= !memcmp(y0, y1, sizeof(float) * rows * n) && (k < 2 || !memcmp(st0, st1, sizeof st0));
    }
    if (!same) fprintf(stderr, "row kernel %d differs across threads\n", k);
    CHECK(same);
  }
  /* LayerNormalization's gradient (n = 515: columns past the last whole vector): one pass on one
   * thread, dX by rows then dscale / dbias by columns on the pool; the same bits at 1-4 threads,
   * small inputs split too, and with dX or the parameter gradients alone. */
  float *dy = malloc(sizeof(float) * rows * n), *g0 = malloc(sizeof(float) * (rows + 2) * n);
  float *g1 = malloc(sizeof(float) * (rows + 2) * n);
  fill(dy, rows * n, 34);
  for (int want = 0; want < 3; want++) /* 0: all, 1: dX only, 2: dscale and dbias only */
    for (int32_t t = 1; t <= 4; t++)
      for (int split = 0; split < 2; split++) {
        float *o = t == 1 && !split ? g0 : g1;
        memset(o, 0, sizeof(float) * (rows + 2) * n);
        wt_set_threads(t);
        wt_pool_set_split_small(split);
        wt_layernorm_grad_f32(dy, x, sc, st0, st0 + rows, rows, n, want == 2 ? NULL : o,
                              want == 1 ? NULL : o + rows * n, want == 1 ? NULL : o + (rows + 1) * n);
        if (o == g1 && memcmp(g0, g1, sizeof(float) * (rows + 2) * n)) {
          fprintf(stderr, "LayerNorm grad (%d) differs at %d threads (split %d)\n", want, t, split);
          CHECK(0);
        }
      }
  wt_pool_set_split_small(0);
  free(dy);
  free(g0);
  free(g1);
  free(x);
  free(sc);
  free(bi);
  free(y0);
  free(y1);
}

/* ---- pooling: planes on the pool ------------------------------------------------------------ */

static void test_pooling(void) {
  /* 3x3 windows, stride 2, pad 1 over 30x30 planes; 97 planes (above the cut-over, odd count) */
  const wt_conv_geom g = {.img = {1, 30, 30}, .grid = {1, 15, 15}, .k = {1, 3, 3},
                          .stride = {1, 2, 2}, .dil = {1, 1, 1}, .pad = {0, 1, 1}};
  const int64_t NC = 97, I = 900, G = 225, pad_end[3] = {0, 1, 1};
  float *x = malloc(sizeof(float) * NC * I), *tmp = malloc(sizeof(float) * 30);
  float *y[2], *dx[2];
  int64_t *ind[2];
  for (int k = 0; k < 2; k++) {
    y[k] = malloc(sizeof(float) * NC * G * 3);
    dx[k] = malloc(sizeof(float) * NC * I);
    ind[k] = malloc(sizeof(int64_t) * NC * G);
  }
  fill(x, NC * I, 41);
  int same = 1;
  for (int32_t t = 1; t <= 4; t++) {
    int k = t > 1;
    wt_set_threads(t);
    wt_maxpool(&g, NC, x, y[k], tmp);
    wt_maxpool_indices(&g, NC, 0, x, y[k] + NC * G, ind[k]);
    wt_avgpool(&g, pad_end, 1, NC, x, y[k] + 2 * NC * G, tmp);
    wt_avgpool_grad(&g, pad_end, 0, NC, y[k], dx[k], tmp);
    if (k)
      same &= !memcmp(y[0], y[1], sizeof(float) * NC * G * 3) && !memcmp(dx[0], dx[1], sizeof(float) * NC * I) &&
              !memcmp(ind[0], ind[1], sizeof(int64_t) * NC * G);
  }
  if (!same) fprintf(stderr, "pooling differs across threads\n");
  CHECK(same);
  free(x);
  free(tmp);
  for (int k = 0; k < 2; k++) {
    free(y[k]);
    free(dx[k]);
    free(ind[k]);
  }
}

/* MaxPoolGrad: planes on the pool (MaxPool's indices stay in their plane) against the plain
 * scatter (one plane); indices that leave their plane take the plain path at any thread count. */
static void test_maxpool_grad(void) {
  const wt_conv_geom g = {.img = {1, 30, 30}, .grid = {1, 15, 15}, .k = {1, 3, 3},
                          .stride = {1, 2, 2}, .dil = {1, 1, 1}, .pad = {0, 1, 1}};
  const int64_t NC = 97, I = 900, G = 225; /* 87300 dx elements: above the cut-over */
  float *x = malloc(sizeof(float) * NC * I), *y = malloc(sizeof(float) * NC * G);
  float *dy = malloc(sizeof(float) * NC * G), *dx0 = malloc(sizeof(float) * NC * I);
  float *dx1 = malloc(sizeof(float) * NC * I);
  int64_t *ind = malloc(sizeof(int64_t) * NC * G);
  fill(x, NC * I, 45);
  fill(dy, NC * G, 46);
  wt_set_threads(1);
  wt_maxpool_indices(&g, NC, 0, x, y, ind);
  ind[5 * G + 7] = -1; /* a window wholly in the padding */
  int same = 1;
  for (int escape = 0; escape < 2; escape++) {
    if (escape) ind[40 * G + 3] = 2 * I + 5; /* into another plane: still in dX */
    CHECK(wt_maxpool_grad(1, NC * G, dy, ind, NC * I, dx0) == -1);
    for (int split = 0; split < 2; split++)
      for (int32_t t = 1; t <= 4; t++) {
        wt_pool_set_split_small(split);
        wt_set_threads(t);
        memset(dx1, 0x7f, sizeof(float) * NC * I);
        CHECK(wt_maxpool_grad(NC, NC * G, dy, ind, NC * I, dx1) == -1);
        same &= !memcmp(dx0, dx1, sizeof(float) * NC * I);
      }
  }
  wt_pool_set_split_small(0);
  if (!same) fprintf(stderr, "MaxPoolGrad differs across threads or from the plain path\n");
  CHECK(same);
  ind[60 * G + 2] = NC * I; /* out of dX: the first bad position is reported */
  CHECK(wt_maxpool_grad(NC, NC * G, dy, ind, NC * I, dx1) == 60 * G + 2);
  free(x);
  free(y);
  free(dy);
  free(dx0);
  free(dx1);
  free(ind);
}

/* ---- Conv and ConvGrad: (image, group) products and dW's chunked sum over images ------------ */

/* Conv forward and ConvGrad at 1-4 threads, with and without small work split: out[0] holds the
 * single-threaded results (y, dX, dW, dB), out[1] each other run's; 1 when every run has the
 * same bits. CK = weights per output channel. */
static int conv_same_bits(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                          int64_t CK, const float *x, const float *w, const float *b,
                          const float *dy, float *col, float *out[2][4]) {
  const int64_t I = g->img[0] * g->img[1] * g->img[2], G = g->grid[0] * g->grid[1] * g->grid[2];
  const int64_t n[4] = {N * M * G, N * C * I, M * CK, M};
  int same = 1;
  for (int split = 0; split < 2; split++)
    for (int32_t t = 1; t <= 4; t++) {
      wt_pool_set_split_small(split);
      wt_set_threads(t);
      float **o = out[t == 1 && split == 0 ? 0 : 1];
      wt_conv_forward(g, N, C, M, group, x, w, b, o[0], col);
      wt_conv_grad(g, N, C, M, group, dy, x, w, o[1], o[2], o[3], col);
      if (o == out[1])
        for (int k = 0; k < 4; k++) same &= !memcmp(out[0][k], out[1][k], sizeof(float) * n[k]);
    }
  wt_pool_set_split_small(0);
  return same;
}

/* 3x3 over 9x9 images, pad 1, stride `s`; two groups; N = 11: three dW chunks of 4, 4, 3. At
 * stride 2 the 5x5 grid puts 2 images side by side per GEMM (wt_conv_batch_images), so the
 * blocks of images (2, 2, 2, 2, 2, 1) and the chunks' last batch of one image are covered. */
static void test_conv_stride(int64_t s) {
  const int64_t O = (9 + 2 - 3) / s + 1, G = O * O;
  const wt_conv_geom g = {.img = {1, 9, 9}, .grid = {1, O, O}, .k = {1, 3, 3},
                          .stride = {1, s, s}, .dil = {1, 1, 1}, .pad = {0, 1, 1}};
  const int64_t N = 11, C = 4, M = 6, group = 2, I = 81, CK = (C / group) * 9;
  CHECK(wt_conv_dw_chunks(N) == 3 && wt_conv_dw_chunks(4) == 1 && wt_conv_dw_chunks(64) == 8);
  CHECK(wt_conv_batch_images(&g, N) == (s == 1 ? 1 : 2));
  float *x = malloc(sizeof(float) * N * C * I), *w = malloc(sizeof(float) * M * CK);
  float *dy = malloc(sizeof(float) * N * M * G), *b = malloc(sizeof(float) * M);
  float *col = malloc(sizeof(float) * wt_conv_grad_scratch_floats(&g, N, C, M, group));
  float *out[2][4];
  for (int r = 0; r < 2; r++) {
    out[r][0] = malloc(sizeof(float) * N * M * G); /* y */
    out[r][1] = malloc(sizeof(float) * N * C * I); /* dx */
    out[r][2] = malloc(sizeof(float) * M * CK);    /* dw */
    out[r][3] = malloc(sizeof(float) * M);         /* db */
  }
  fill(x, N * C * I, 41);
  fill(w, M * CK, 42);
  fill(dy, N * M * G, 43);
  fill(b, M, 44);
  CHECK(conv_same_bits(&g, N, C, M, group, CK, x, w, b, dy, col, out));
  /* dW against a float64 sum over images, pixels and the window */
  double worst = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t ck = 0; ck < CK; ck++) {
      int64_t gi = m / (M / group), c = gi * (C / group) + ck / 9, kh = ck % 9 / 3, kw = ck % 3;
      double sum = 0;
      for (int64_t n = 0; n < N; n++)
        for (int64_t oh = 0; oh < O; oh++)
          for (int64_t ow = 0; ow < O; ow++) {
            int64_t ih = oh * s - 1 + kh, iw = ow * s - 1 + kw;
            if (ih < 0 || ih >= 9 || iw < 0 || iw >= 9) continue;
            sum += (double)dy[(n * M + m) * G + oh * O + ow] * x[(n * C + c) * I + ih * 9 + iw];
          }
      double e = fabs(out[0][2][m * CK + ck] - sum) / (1.0 + fabs(sum));
      if (e > worst) worst = e;
    }
  CHECK(worst < 1e-5);
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 4; k++) free(out[r][k]);
  free(x);
  free(w);
  free(dy);
  free(b);
  free(col);
}

/* Depthwise (C == group, `mult` outputs per channel; direct kernels): the same bits at 1-4
 * threads (and with small work split), and y, dX, dW against float64 sums. k x k, pad k / 2,
 * stride (sh, sw) over H x W images. */
static void test_conv_depthwise(int64_t mult, int64_t sh, int64_t sw, int64_t k, int64_t H, int64_t W) {
  const int64_t N = 3, C = 5, M = 5 * mult, P = k / 2, OH = (H + 2 * P - k) / sh + 1, OW = (W + 2 * P - k) / sw + 1;
  const int64_t I = H * W, G = OH * OW, KK = k * k;
  const wt_conv_geom g = {.img = {1, H, W}, .grid = {1, OH, OW}, .k = {1, k, k},
                          .stride = {1, sh, sw}, .dil = {1, 1, 1}, .pad = {0, P, P}};
  CHECK(wt_conv_is_depthwise(C, C) && !wt_conv_is_depthwise(4, 2) && !wt_conv_is_depthwise(1, 1));
  float *x = malloc(sizeof(float) * N * C * I), *w = malloc(sizeof(float) * M * KK);
  float *dy = malloc(sizeof(float) * N * M * G), *b = malloc(sizeof(float) * M);
  float *out[2][4];
  for (int r = 0; r < 2; r++) {
    out[r][0] = malloc(sizeof(float) * N * M * G);
    out[r][1] = malloc(sizeof(float) * N * C * I);
    out[r][2] = malloc(sizeof(float) * M * KK);
    out[r][3] = malloc(sizeof(float) * M);
  }
  fill(x, N * C * I, 51);
  fill(w, M * KK, 52);
  fill(dy, N * M * G, 53);
  fill(b, M, 54);
  CHECK(conv_same_bits(&g, N, C, M, C, KK, x, w, b, dy, NULL, out));
  /* every tap of every output: y against the float64 sum, and its adjoints dX and dW */
  double *dx = calloc((size_t)(N * C * I), sizeof(double)), dw[10 * 49] = {0}, worst = 0;
  CHECK(M <= 10 && KK <= 49);
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double s = b[m], gy = dy[(n * M + m) * G + oh * OW + ow];
          for (int64_t kh = 0; kh < k; kh++)
            for (int64_t kw = 0; kw < k; kw++) {
              int64_t ih = oh * sh - P + kh, iw = ow * sw - P + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              int64_t xi = (n * C + m / mult) * I + ih * W + iw;
              s += (double)w[m * KK + kh * k + kw] * x[xi];
              dx[xi] += gy * w[m * KK + kh * k + kw];
              dw[m * KK + kh * k + kw] += gy * x[xi];
            }
          double e = fabs(out[0][0][(n * M + m) * G + oh * OW + ow] - s) / (1.0 + fabs(s));
          if (e > worst) worst = e;
        }
  for (int64_t i = 0; i < N * C * I; i++) {
    double e = fabs(out[0][1][i] - dx[i]) / (1.0 + fabs(dx[i]));
    if (e > worst) worst = e;
  }
  for (int64_t i = 0; i < M * KK; i++) {
    double e = fabs(out[0][2][i] - dw[i]) / (1.0 + fabs(dw[i]));
    if (e > worst) worst = e;
  }
  CHECK(worst < 1e-5);
  free(dx);
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 4; k++) free(out[r][k]);
  free(x);
  free(w);
  free(dy);
  free(b);
}

static void test_conv(void) {
  test_conv_stride(1);
  test_conv_stride(2);
  test_conv_depthwise(2, 1, 2, 3, 7, 22); /* multiplier 2, stride 2 along rows: the scatter dX */
  test_conv_depthwise(1, 2, 1, 3, 7, 22); /* one output per channel, stride 1 along rows: the gather dX */
  /* ConvNeXt's 7x7, pad 3 (dW: one lane per tap, grad_w_rows), on 16x16, 4x4 and 2x2 grids */
  test_conv_depthwise(1, 1, 1, 7, 16, 16);
  test_conv_depthwise(1, 1, 1, 7, 4, 4);
  test_conv_depthwise(2, 1, 1, 7, 2, 3);
}

int main(void) {
  test_pool();
  test_pool_back_to_back();
  test_gemm();
  test_gemm_batch();
  test_optim();
  test_elementwise();
  test_broadcast();
  test_reduce();
  test_rows();
  test_pooling();
  test_maxpool_grad();
  test_conv();
  wt_set_threads(1);
  CHECK_DONE();
}
