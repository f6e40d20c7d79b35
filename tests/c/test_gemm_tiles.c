/* The register tile does not change the bits: the relaxed-SIMD build's 6-row tile (gemm_tile.h
 * MR_WIDE, chosen per product by gemm.c tile_rows: enough rows, at least 64 columns) against
 * the 4-row tile of products the same except for fewer columns or rows, whose shared elements
 * must be the same bits, for every transpose, beta, the ReLU epilogue, one to three K slices and
 * a shallow one,
 * rows past the tiles, at 1-4 threads, split or not. The native tree builds this file twice:
 * as is (both products on 4-row tiles: trivially the same) and as test_gemm_tiles_wide with
 * WT_GEMM_MR_WIDE=6 (cmake/native.cmake), so the taller tile is tested outside the wasm build. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "check.h"
#include "backend/cpu/gemm.h"
#include "webtrain.h"

static void fill(float *p, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* C0 = the product of M x N (a wide tile), C1 = of m x n (m <= M, n <= N: 4-row tiles); the
 * shared m x n elements of C0 and C1 (both with leading dimension N) must be equal. */
static int check(int ta, int tb, int64_t M, int64_t N, int64_t m, int64_t n, int64_t K,
                 float beta, int relu, const float *A, const float *B, float *C0, float *C1) {
  int64_t lda = ta ? M : K, ldb = tb ? K : N;
  void (*f)(int, int, int64_t, int64_t, int64_t, float, const float *, int64_t, const float *,
            int64_t, float, float *, int64_t) = relu ? wt_sgemm_relu : wt_sgemm;
  wt_set_threads(1);
  fill(C0, M * N, 5);
  f(ta, tb, M, N, K, 1.25f, A, lda, B, ldb, beta, C0, N);
  int ok = 1;
  for (int split = 0; split < 2; split++)
    for (int32_t t = 1; t <= 4; t++) {
      wt_pool_set_split_small(split);
      wt_set_threads(t);
      fill(C1, M * N, 5);
      f(ta, tb, m, n, K, 1.25f, A, lda, B, ldb, beta, C1, N);
      for (int64_t i = 0; i < m; i++) ok &= !memcmp(C0 + i * N, C1 + i * N, sizeof(float) * (size_t)n);
    }
  wt_pool_set_split_small(0);
  wt_set_threads(1);
  if (!ok)
    fprintf(stderr, "tiles: ta=%d tb=%d %lldx%lld vs %lldx%lld K=%lld beta=%g relu=%d: bits differ\n", ta, tb,
            (long long)M, (long long)N, (long long)m, (long long)n, (long long)K, beta, relu);
  return ok;
}

int main(void) {
  const int64_t M = 70, N = 300, KMAX = 1100;
  static const int64_t ks[] = {100, 600, 1100, 8};
  const int64_t NB = 320; /* the direct-path cases' larger product */
  float *A = malloc(sizeof(float) * (size_t)(M * KMAX)), *B = malloc(sizeof(float) * (size_t)(KMAX * NB));
  float *C0 = malloc(sizeof(float) * (size_t)(M * NB)), *C1 = malloc(sizeof(float) * (size_t)(M * NB));
  fill(A, M * KMAX, 1);
  fill(B, KMAX * NB, 2);
  for (int variant = 0; variant < 32; variant++) {
    int ta = variant & 1, tb = (variant >> 1) & 1, relu = (variant >> 3) & 1;
    float beta = (variant >> 2) & 1 ? 0.5f : 0.0f;
    int64_t K = ks[(variant + (variant >> 4)) % 4];
    CHECK(check(ta, tb, M, N, M, 40, K, beta, relu, A, B, C0, C1));  /* 40 columns: 4-row tiles */
    CHECK(check(ta, tb, 70, 130, 20, 130, K, beta, relu, A, B, C0, C1)); /* 20 rows: 4-row tiles */
  }
  /* Small products take the direct path (gemm_small.c), which with beta 0 computes its last
   * rows and columns as tiles ending at M and N, overlapping the full ones: against the packed
   * path of a product too large for it (70 x 320 x 48 and up), and against each other, the same
   * bits. Attention's heads (65 x 65 x 48, 65 x 48 x 65) and odd edges. */
  static const int64_t dm[][3] = {{65, 65, 48}, {65, 48, 65}, {66, 61, 64}, {7, 65, 65},
                                  {5, 7, 13}, {4, 5, 3}, {9, 4, 48}, {63, 66, 100}};
  for (size_t d = 0; d < sizeof dm / sizeof dm[0]; d++)
    for (int variant = 0; variant < 16; variant++) {
      int ta = variant & 1, tb = (variant >> 1) & 1, relu = (variant >> 3) & 1;
      float beta = (variant >> 2) & 1 ? 0.5f : 0.0f;
      CHECK(check(ta, tb, M, NB, dm[d][0], dm[d][1], dm[d][2], beta, relu, A, B, C0, C1));
    }
  free(A), free(B), free(C0), free(C1);
  printf("gemm tiles checked\n");
  CHECK_DONE();
}
