/* wt_sgemm (packed SIMD kernel) against wt_sgemm_ref over many shapes, all transpose
 * combinations, padded leading dimensions and alpha/beta values (beta = 0 with NaN in C).
 * Also checks that C's padding columns are never written. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend/cpu/gemm.h"

static unsigned g_seed = 1;
static float rnd(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return (float)((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int g_cases = 0;
static int g_relu = 0; /* wt_sgemm_relu against wt_sgemm_ref followed by ReLU */

/* One case; pad adds to every leading dimension. Returns non-zero on mismatch. */
static int run_case(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                    int64_t pad, int nan_c) {
  int64_t arows = ta ? K : M, acols = ta ? M : K, brows = tb ? N : K, bcols = tb ? K : N;
  int64_t lda = acols + pad, ldb = bcols + pad, ldc = N + pad;
  size_t na = (size_t)(arows * lda), nb = (size_t)(brows * ldb), nc = (size_t)(M * ldc);
  float *A = malloc(sizeof(float) * (na ? na : 1)), *B = malloc(sizeof(float) * (nb ? nb : 1));
  float *C = malloc(sizeof(float) * (nc ? nc : 1)), *R = malloc(sizeof(float) * (nc ? nc : 1));
  for (size_t i = 0; i < na; i++) A[i] = rnd();
  for (size_t i = 0; i < nb; i++) B[i] = rnd();
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < ldc; j++) {
      /* Padding columns hold a sentinel that must survive. */
      float v = j >= N ? 12345.0f : nan_c ? NAN : rnd();
      C[i * ldc + j] = R[i * ldc + j] = v;
    }
  (g_relu ? wt_sgemm_relu : wt_sgemm)(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  wt_sgemm_ref(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
  for (int64_t i = 0; g_relu && i < M; i++)
    for (int64_t j = 0; j < N; j++) R[i * ldc + j] = R[i * ldc + j] < 0 ? 0 : R[i * ldc + j];
  int bad = 0;
  for (int64_t i = 0; i < M && !bad; i++)
    for (int64_t j = 0; j < ldc && !bad; j++) {
      float c = C[i * ldc + j], r = R[i * ldc + j];
      if (j >= N) {
        bad = c != 12345.0f;
      } else {
        /* Bound from the magnitudes summed: float accumulation order differs. */
        double s = 0;
        for (int64_t k = 0; k < K; k++) {
          double a = ta ? A[k * lda + i] : A[i * lda + k];
          double b = tb ? B[j * ldb + k] : B[k * ldb + j];
          s += fabs(a * b);
        }
        double tol = 4.0 * (double)(K + 2) * 6e-8 * (fabs(alpha) * s + fabs(beta) * 1.0) + 1e-7;
        bad = !(fabs((double)c - (double)r) <= tol);
      }
      if (bad)
        fprintf(stderr,
                "mismatch ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g pad=%lld nan=%d at "
                "(%lld,%lld): got %.9g want %.9g\n",
                ta, tb, (long long)M, (long long)N, (long long)K, alpha, beta, (long long)pad,
                nan_c, (long long)i, (long long)j, c, r);
    }
  free(A);
  free(B);
  free(C);
  free(R);
  g_cases++;
  return bad;
}

int main(void) {
  static const int64_t mn[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 16, 17, 31, 33, 64, 70};
  static const int64_t ks[] = {1, 2, 3, 5, 8, 13, 16, 29, 64, 70};
  static const float ab[][2] = {{1, 0}, {0.5f, 0}, {1, 1}, {-2, 0.25f}, {1.5f, -1}};
  const int nmn = sizeof mn / sizeof mn[0], nks = sizeof ks / sizeof ks[0];
  int fails = 0, v = 0;
  for (int t = 0; t < 4; t++)
    for (int a = 0; a < nmn; a++)
      for (int b = 0; b < nmn; b++)
        for (int c = 0; c < nks; c++, v++) {
          const float *p = ab[v % 5];
          int nan_c = p[1] == 0.0f && (v / 5) % 2 == 0;
          int64_t pad = (v % 3 == 0) ? 3 : 0;
          fails += run_case(t & 1, t >> 1, mn[a], mn[b], ks[c], p[0], p[1], pad, nan_c);
          if (fails > 10) goto done;
        }
  /* Every dimension 1..70 at least once, with the others prime or block-sized; then again, the
   * crossing and degenerate cases too, with the fused ReLU (every path: thin, direct, packed). */
again:
  for (int t = 0; t < 4; t++)
    for (int64_t d = 1; d <= 70; d++) {
      fails += run_case(t & 1, t >> 1, d, 37, 41, 1.0f, 0.0f, 1, 1);
      fails += run_case(t & 1, t >> 1, 23, d, 19, 0.75f, 0.5f, 2, 0);
      fails += run_case(t & 1, t >> 1, 29, 31, d, -1.0f, 2.0f, 0, 0);
    }
  /* Crossing the cache blocks: K > KC (512), M > MC (64), N > NC (256), several times over. */
  for (int t = 0; t < 4; t++) {
    fails += run_case(t & 1, t >> 1, 67, 53, 600, 1.0f, 0.0f, 5, 1);
    fails += run_case(t & 1, t >> 1, 40, 530, 1100, 1.0f, 0.5f, 0, 0); /* <= MC rows, slices outermost */
    fails += run_case(t & 1, t >> 1, 131, 45, 300, 1.0f, 1.0f, 0, 0);
    fails += run_case(t & 1, t >> 1, 261, 19, 517, 0.5f, -0.5f, 7, 0);
    fails += run_case(t & 1, t >> 1, 5, 2100, 270, 1.0f, 0.0f, 1, 1);
    fails += run_case(t & 1, t >> 1, 9, 4200, 3, 2.0f, 1.0f, 0, 0);
    /* one column panel (N <= 8): op(A) read in place by full tiles, edge rows packed */
    fails += run_case(t & 1, t >> 1, 261, 8, 1100, 1.0f, 0.0f, 3, 1);
    fails += run_case(t & 1, t >> 1, 70, 5, 600, 0.5f, 1.0f, 0, 0);
    fails += run_case(t & 1, t >> 1, 131, 7, 530, 1.0f, -0.5f, 2, 0);
  }
  /* Degenerate: K = 0 scales C; alpha = 0 scales C; beta = 0 with K = 0 zeroes NaNs. */
  for (int t = 0; t < 4; t++) {
    fails += run_case(t & 1, t >> 1, 6, 7, 0, 1.0f, 0.5f, 1, 0);
    fails += run_case(t & 1, t >> 1, 6, 7, 0, 1.0f, 0.0f, 1, 1);
    fails += run_case(t & 1, t >> 1, 6, 7, 5, 0.0f, 2.0f, 1, 0);
  }
  if (!g_relu++) goto again;
  /* M = 0 / N = 0: nothing is touched (C may be NULL). */
  wt_sgemm(0, 0, 0, 5, 5, 1.0f, NULL, 5, NULL, 5, 0.0f, NULL, 5);
  wt_sgemm(0, 0, 5, 0, 5, 1.0f, NULL, 5, NULL, 1, 0.0f, NULL, 1);
done:
  CHECK(fails == 0);
  printf("%d gemm cases, %d failed\n", g_cases, fails);
  CHECK_DONE();
}
