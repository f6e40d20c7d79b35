/* op(B) packed once (backend/cpu/gemm.h wt_gemm_pack_b / wt_sgemm_prepacked, backend/cpu/gemm_prepack.h):
 *  - a product on the prepacked panels gives the bits of the plain product, for every transpose,
 *    beta, the ReLU epilogue, float16 B, shapes on every path (packed over several blocks and K
 *    slices, direct, thin: those read B itself), at 1-4 threads, split or not;
 *  - a product of one column panel, which reads op(A) in place instead of packing it, gives the
 *    bits of the same columns of a wider (packed) product, and a product of few rows, which runs
 *    transposed reading op(B) in place, the bits of the same rows of a taller one;
 *  - a table of candidates: nothing before a buffer is given, a first use fixes the way a
 *    weight is read, packing happens at the use after wt_prepack_give and again only after
 *    wt_prepack_stale (a weight written since gives the new weight's bits); another table (of
 *    another module) knows nothing of it, and a full table refuses more without breaking. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "base/pool.h"
#include "check.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_prepack.h"
#include "webtrain.h"

static void fill(float *p, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

static int same(const float *a, const float *b, int64_t n) { return !memcmp(a, b, sizeof(float) * (size_t)n); }

typedef struct shape {
  int64_t M, N, K;
} shape;

static void test_same_bits(void) {
  static const shape shapes[] = {{64, 1024, 1024}, {64, 600, 1030}, {200, 130, 70}, {513, 67, 1030},
                                 {4, 300, 600},    {16, 12, 16},    {3, 512, 512},  {128, 1, 784},
                                 {37, 999, 260},   {66, 520, 700},  {8, 13, 517},
                                 {300, 8, 1030},  {130, 6, 700}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
    uint16_t *Bh = malloc(sizeof(uint16_t) * (size_t)(K * N));
    float *P = malloc(sizeof(float) * (size_t)wt_gemm_packed_b_floats(K, N));
    float *C0 = malloc(sizeof(float) * (size_t)(M * N)), *C1 = malloc(sizeof(float) * (size_t)(M * N));
    fill(A, M * K, 3u + (unsigned)s);
    fill(B, K * N, 5u + (unsigned)s);
    for (int64_t i = 0; i < K * N; i++) Bh[i] = wt_f32_to_f16(B[i]);
    for (int variant = 0; variant < 16; variant++) {
      int ta = variant & 1, tb = (variant >> 1) & 1, relu = (variant >> 3) & 1;
      int half = (variant >> 2) & 1 ? WT_GEMM_B_HALF : 0;
      float beta = variant % 3 == 0 ? 0.5f : 0.0f;
      int64_t lda = ta ? M : K, ldb = tb ? K : N;
      const void *b = half ? (const void *)Bh : (const void *)B;
      wt_gemm_pack_b(half, tb, K, N, b, ldb, P);
      int ok = 1;
      for (int split = 0; split < 2; split++)
        for (int32_t t = 1; t <= 4; t++) {
          wt_pool_set_split_small(split);
          wt_set_threads(t);
          fill(C0, M * N, 9u);
          fill(C1, M * N, 9u);
          wt_sgemm_half(half, ta, tb, M, N, K, 0.75f, A, lda, b, ldb, beta, C0, N, relu);
          wt_sgemm_prepacked(half, ta, tb, M, N, K, 0.75f, A, lda, b, ldb, P, beta, C1, N, relu);
          ok &= same(C0, C1, M * N);
        }
      wt_pool_set_split_small(0);
      if (!ok)
        fprintf(stderr, "prepacked %lldx%lldx%lld ta=%d tb=%d half=%d beta=%g relu=%d: bits differ\n",
                (long long)M, (long long)N, (long long)K, ta, tb, half, beta, relu);
      CHECK(ok);
    }
    /* which shapes read the panels at all: the packed path only */
    CHECK(wt_gemm_packs_b(0, 0, 1, 64, 1024, 1024, 1024, 1024) == 1);
    CHECK(wt_gemm_packs_b(0, 0, 0, 3, 512, 512, 512, 512) == 0);   /* thin: B in place */
    CHECK(wt_gemm_packs_b(0, 0, 0, 16, 12, 16, 16, 12) == 0);     /* direct: B in place */
    CHECK(wt_gemm_packs_b(WT_GEMM_B_HALF, 0, 0, 16, 12, 16, 16, 12) == 1); /* float16: always packed */
    free(A), free(B), free(Bh), free(P), free(C0), free(C1);
  }
  wt_set_threads(1);
}

/* A product of one column panel (N <= 8) reads op(A) in place; a wider product over the same
 * columns packs op(A): the shared columns are the same bits (each element's products and order
 * do not depend on the path), at 1-4 threads. */
static void test_inplace_a(void) {
  const int64_t M = 300, K = 1030, W = 21;
  float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * W));
  float *C0 = malloc(sizeof(float) * (size_t)(M * W)), *C1 = malloc(sizeof(float) * (size_t)(M * W));
  fill(A, M * K, 31);
  fill(B, K * W, 32);
  for (int variant = 0; variant < 8; variant++) {
    int ta = variant & 1, tb = (variant >> 1) & 1;
    int64_t N = (variant >> 2) & 1 ? 5 : 8, lda = ta ? M : K, ldb = tb ? K : W;
    wt_set_threads(1);
    fill(C0, M * W, 33);
    wt_sgemm(ta, tb, M, W, K, 1.0f, A, lda, B, ldb, 0.5f, C0, W); /* packed: 3 panels */
    for (int32_t t = 1; t <= 4; t++) {
      wt_set_threads(t);
      fill(C1, M * W, 33);
      wt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.5f, C1, W); /* in place */
      int ok = 1;
      for (int64_t i = 0; i < M; i++) ok &= same(C0 + i * W, C1 + i * W, N);
      if (!ok) fprintf(stderr, "in-place A: ta=%d tb=%d N=%lld threads=%d: bits differ\n", ta, tb, (long long)N, t);
      CHECK(ok);
    }
  }
  wt_set_threads(1);
  free(A), free(B), free(C0), free(C1);
}

/* A product of at most 32 rows runs transposed, C^T = op(B)^T op(A)^T with op(B) read in place
 * (gemm.c thin_m); a taller product over the same rows takes the packed path: the shared rows are
 * the same bits, for every transpose, beta, the ReLU epilogue, one to three K slices, rows and
 * columns past the register tiles, at 1-4 threads, split or not. */
static void test_thin_m(void) {
  const int64_t H = 40, N = 300, K = 1100; /* H rows: the packed path */
  static const int64_t rows[] = {8, 32, 5, 13};
  static const int64_t ks[] = {600, 1100, 100};
  float *A = malloc(sizeof(float) * (size_t)(H * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
  float *C0 = malloc(sizeof(float) * (size_t)(H * N)), *C1 = malloc(sizeof(float) * (size_t)(H * N));
  float *F = malloc(sizeof(float) * (size_t)(H * N));
  fill(F, H * N, 43);
  fill(A, H * K, 41);
  fill(B, K * N, 42);
  for (int variant = 0; variant < 16; variant++) {
    int ta = variant & 1, tb = (variant >> 1) & 1, relu = (variant >> 3) & 1;
    float beta = (variant >> 2) & 1 ? 0.5f : 0.0f;
    int64_t k = ks[variant % 3], lda = ta ? H : k, ldb = tb ? k : N;
    wt_set_threads(1);
    fill(C0, H * N, 43);
    (relu ? wt_sgemm_relu : wt_sgemm)(ta, tb, H, N, k, 1.25f, A, lda, B, ldb, beta, C0, N);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
      int64_t M = rows[r];
      for (int split = 0; split < 2; split++)
        for (int32_t t = 1; t <= 4; t++) {
          wt_pool_set_split_small(split);
          wt_set_threads(t);
          fill(C1, H * N, 43);
          (relu ? wt_sgemm_relu : wt_sgemm)(ta, tb, M, N, k, 1.25f, A, lda, B, ldb, beta, C1, N);
          /* its rows are the taller product's, and the rows past M are untouched */
          int ok = same(C0, C1, M * N) && same(F + M * N, C1 + M * N, (H - M) * N);
          if (!ok)
            fprintf(stderr, "thin M: ta=%d tb=%d M=%lld K=%lld beta=%g relu=%d threads=%d split=%d: bits differ\n",
                    ta, tb, (long long)M, (long long)k, beta, relu, t, split);
          CHECK(ok);
        }
    }
  }
  wt_pool_set_split_small(0);
  wt_set_threads(1);
  free(A), free(B), free(C0), free(C1), free(F);
}

static void test_table(void) {
  const int64_t M = 64, N = 520, K = 600; /* B read as W^T: W is [N, K] */
  wt_prepack *t = wt_prepack_new(), *other = wt_prepack_new();
  CHECK(t && other);
  float *A = malloc(sizeof(float) * (size_t)(M * K)), *W = malloc(sizeof(float) * (size_t)(N * K));
  float *C0 = malloc(sizeof(float) * (size_t)(M * N)), *C1 = malloc(sizeof(float) * (size_t)(M * N));
  fill(A, M * K, 21);
  fill(W, N * K, 22);
  CHECK(wt_prepack_add(t, W, 0, N, K) == 0);
  CHECK(wt_prepack_find(t, W + 1, 0, 1, K, N, K) == NULL); /* not a candidate */
  CHECK(wt_prepack_find(t, W, 1, 1, K, N, K) == NULL);     /* float16: another weight */
  CHECK(wt_prepack_find(NULL, W, 0, 1, K, N, K) == NULL);  /* no table */
  int64_t sizes[4];
  CHECK(wt_prepack_wanted(t, sizes, 4) == 0);              /* nothing asked yet */
  CHECK(wt_prepack_find(t, W, 0, 1, K, N, K) == NULL);     /* asked, no buffer yet */
  CHECK(wt_prepack_wanted(other, sizes, 4) == 0);
  CHECK(wt_prepack_wanted(t, sizes, 4) == 1 && sizes[0] == wt_gemm_packed_b_floats(K, N));
  float *buf = malloc(sizeof(float) * (size_t)sizes[0]);
  wt_prepack_give(t, 0, buf);
  CHECK(wt_prepack_wanted(t, sizes, 4) == 0);
  CHECK(wt_prepack_find(t, W, 0, 0, N, K, K) == NULL);     /* read the other way: keeps its first */
  CHECK(wt_prepack_find(other, W, 0, 1, K, N, K) == NULL); /* another table: not its candidate */
  const float *P = wt_prepack_find(t, W, 0, 1, K, N, K);
  CHECK(P == buf);
  wt_sgemm(0, 1, M, N, K, 1.0f, A, K, W, K, 0.0f, C0, N);
  wt_sgemm_prepacked(0, 0, 1, M, N, K, 1.0f, A, K, W, K, P, 0.0f, C1, N, 0);
  CHECK(same(C0, C1, M * N));
  /* written without telling the table: the panels are the old weight's (packed once) */
  fill(W, N * K, 23);
  wt_sgemm(0, 1, M, N, K, 1.0f, A, K, W, K, 0.0f, C0, N);
  wt_sgemm_prepacked(0, 0, 1, M, N, K, 1.0f, A, K, W, K, wt_prepack_find(t, W, 0, 1, K, N, K), 0.0f, C1, N, 0);
  CHECK(!same(C0, C1, M * N));
  /* another table's stale leaves this one's panels as they are */
  wt_prepack_stale(other);
  wt_sgemm_prepacked(0, 0, 1, M, N, K, 1.0f, A, K, W, K, wt_prepack_find(t, W, 0, 1, K, N, K), 0.0f, C1, N, 0);
  CHECK(!same(C0, C1, M * N));
  /* stale: packed again at the next use, the new weight's bits */
  wt_prepack_stale(t);
  wt_sgemm_prepacked(0, 0, 1, M, N, K, 1.0f, A, K, W, K, wt_prepack_find(t, W, 0, 1, K, N, K), 0.0f, C1, N, 0);
  CHECK(same(C0, C1, M * N));
  /* a full table refuses more, and nothing breaks; another table still takes candidates */
  int added = 0;
  while (wt_prepack_add(other, W, 0, N, K) == 0) added++;
  CHECK(added > 0 && wt_prepack_add(other, W, 0, N, K) == -1);
  CHECK(wt_prepack_add(t, W + 1, 0, N, K - 1) == 0);
  wt_prepack_free(other);
  wt_prepack_free(t);
  free(A), free(W), free(C0), free(C1), free(buf);
}

int main(void) {
  test_same_bits();
  test_inplace_a();
  test_thin_m();
  test_table();
  CHECK_DONE();
}
