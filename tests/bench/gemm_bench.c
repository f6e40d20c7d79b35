/* SGEMM micro-benchmark (not a ctest): GFLOP/s of wt_sgemm on square sizes and on the
 * MLP training shapes (784-128-10 at batch 64, forward and backward), each checked once
 * against wt_sgemm_ref.
 *   native: cc -O3 -Isrc -Iinclude tests/bench/gemm_bench.c src/backend/cpu/gemm.c src/backend/cpu/gemm_small.c \
 *             src/backend/cpu/gemm_buffers.c \
 *             src/backend/cpu/gemm_ref.c src/base/pool.c -o build/gemm_bench -lm -lpthread
 *           (threads: WT_THREADS=2 build/gemm_bench; the default is the machine's cores)
 *   wasm:   NODE_PATH=/usr/share/nodejs emcc -O3 -msimd128 -Isrc -Iinclude tests/bench/gemm_bench.c \
 *             src/backend/cpu/gemm.c src/backend/cpu/gemm_small.c src/backend/cpu/gemm_buffers.c \
 *             src/backend/cpu/gemm_ref.c src/base/pool.c -sINITIAL_MEMORY=128MB \
 *             -o /tmp/gemm_bench.js && node --no-experimental-fetch /tmp/gemm_bench.js
 *   (outside the repo: its package.json makes Node treat .js files there as ES modules)
 * An argument runs only the rows whose label starts with it (e.g. `square`); the `stream-*` rows
 * (a model's products over distinct weights: see bench_stream) only when named. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/gemm.h"
#include "backend/cpu/simd.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fill(float *p, int64_t n, unsigned *seed) {
  for (int64_t i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    p[i] = (float)((*seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
}

static const char *g_only;

static int bench(const char *label, int ta, int tb, int64_t M, int64_t N, int64_t K) {
  if (g_only && strncmp(label, g_only, strlen(g_only)) != 0) return 0;
  int64_t lda = ta ? M : K, ldb = tb ? K : N;
  float *A = malloc(sizeof(float) * (size_t)(M * K));
  float *B = malloc(sizeof(float) * (size_t)(K * N));
  float *C = malloc(sizeof(float) * (size_t)(M * N));
  float *R = malloc(sizeof(float) * (size_t)(M * N));
  unsigned seed = 12345;
  fill(A, M * K, &seed);
  fill(B, K * N, &seed);
  wt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, N);
  wt_sgemm_ref(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, R, N);
  double maxerr = 0;
  for (int64_t i = 0; i < M * N; i++) {
    double e = fabs((double)C[i] - R[i]) / (1.0 + fabs((double)R[i]));
    if (e > maxerr) maxerr = e;
  }
  double flops = 2.0 * (double)M * (double)N * (double)K, best = 1e30;
  int64_t reps = (int64_t)(2e7 / flops) + 1;
  for (int trial = 0; trial < 7; trial++) {
    double t0 = now();
    for (int64_t r = 0; r < reps; r++)
      wt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, N);
    double t = (now() - t0) / (double)reps;
    if (t < best) best = t;
  }
  printf("%-10s %c%c M=%4lld N=%4lld K=%4lld  %7.2f GFLOP/s  %8.2f us  maxrel=%.1e\n", label,
         ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)M, (long long)N, (long long)K,
         flops / best * 1e-9, best * 1e6, maxerr);
  free(A);
  free(B);
  free(C);
  free(R);
  return maxerr < 1e-4 ? 0 : 1;
}

/* A frozen base's forward as the model runs it: L layers of Y = relu(X W^T) (tb) or relu(X W),
 * X [M, n], each W [n, n] distinct (L * n * n * 4 bytes: the weights stream from L3 or memory as
 * in the model), with op(B) packed per product (wt_sgemm_relu) and prepacked once
 * (wt_sgemm_prepacked, the packing not timed): GFLOP/s of each, and whether the bits agree. */
static int bench_base(const char *label, int tb, int64_t M, int64_t n, int L) {
  if (g_only && strncmp(label, g_only, strlen(g_only)) != 0) return 0;
  float *W = malloc(sizeof(float) * (size_t)(L * n * n));
  float *P = malloc(sizeof(float) * (size_t)(L * wt_gemm_packed_b_floats(n, n)));
  float *X[2] = {malloc(sizeof(float) * (size_t)(M * n)), malloc(sizeof(float) * (size_t)(M * n))};
  float *Y0 = malloc(sizeof(float) * (size_t)(M * n));
  unsigned seed = 777;
  fill(W, L * n * n, &seed);
  for (int l = 0; l < L; l++) wt_gemm_pack_b(0, tb, n, n, W + l * n * n, n, P + l * wt_gemm_packed_b_floats(n, n));
  double flops = 2.0 * (double)M * (double)n * (double)n * L, best[2] = {1e30, 1e30};
  int same = 1;
  for (int trial = 0; trial < 14; trial++) {
    int pre = trial & 1;
    seed = 99;
    fill(X[0], M * n, &seed);
    double t0 = now();
    for (int l = 0; l < L; l++) {
      const float *x = X[l & 1];
      float *y = X[(l + 1) & 1];
      if (pre)
        wt_sgemm_prepacked(0, 0, tb, M, n, n, 1.0f, x, n, W + l * n * n, n,
                           P + l * wt_gemm_packed_b_floats(n, n), 0.0f, y, n, 1);
      else
        wt_sgemm_relu(0, tb, M, n, n, 1.0f, x, n, W + l * n * n, n, 0.0f, y, n);
    }
    double t = now() - t0;
    if (t < best[pre]) best[pre] = t;
    if (!pre) memcpy(Y0, X[L & 1], sizeof(float) * (size_t)(M * n));
    else same &= memcmp(Y0, X[L & 1], sizeof(float) * (size_t)(M * n)) == 0;
  }
  printf("%-10s N%c M=%4lld n=%4lld x%d  packed per product %7.2f GFLOP/s, prepacked %7.2f (%+.1f%%)  %s\n",
         label, tb ? 'T' : 'N', (long long)M, (long long)n, L, flops / best[0] * 1e-9,
         flops / best[1] * 1e-9, (best[0] / best[1] - 1) * 100, same ? "same bits" : "BITS DIFFER");
  free(W);
  free(P);
  free(X[0]);
  free(X[1]);
  free(Y0);
  return !same;
}

/* A model's products with its weights streaming from memory: L distinct B's (and C's), one product
 * each per timed pass, GFLOP/s of the pass, and a hash of the first C (the bits; compare builds
 * and paths with it). Run only when named (`stream`, `stream-cnx` ...): they need ~100 MB, so
 * build with -sINITIAL_MEMORY=512MB. */
static void bench_stream(const char *label, int ta, int tb, int64_t M, int64_t N, int64_t K, int L) {
  if (!g_only || strncmp(label, g_only, strlen(g_only)) != 0) return;
  int64_t lda = ta ? M : K, ldb = tb ? K : N;
  float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N * L));
  float *C = malloc(sizeof(float) * (size_t)(M * N * L));
  unsigned seed = 1;
  fill(A, M * K, &seed);
  fill(B, K * N * L, &seed);
  double flops = 2.0 * (double)M * (double)N * (double)K * L, best = 1e30;
  for (int trial = 0; trial < 9; trial++) {
    double t0 = now();
    for (int l = 0; l < L; l++)
      wt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B + l * K * N, ldb, 0.0f, C + l * M * N, N);
    double t = now() - t0;
    if (t < best) best = t;
  }
  unsigned h = 0;
  for (int64_t i = 0; i < M * N; i++) {
    unsigned u;
    memcpy(&u, &C[i], sizeof u);
    h = h * 31u + u;
  }
  printf("%-10s %c%c M=%4lld N=%4lld K=%4lld x%d  %7.2f GFLOP/s  %8.1f us  bits %08x\n", label,
         ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)M, (long long)N, (long long)K, L,
         flops / best * 1e-9, best / L * 1e6, h);
  free(A);
  free(B);
  free(C);
}

int main(int argc, char **argv) {
  int bad = 0;
  g_only = argc > 1 ? argv[1] : NULL;
  printf("simd: %s\n", WT_SIMD_NAME);
  /* Warm-up: V8 runs new functions in a baseline tier until they are hot. */
  {
    static float w[3][96 * 96];
    double t0 = now();
    while (now() - t0 < 0.3)
      for (int t = 0; t < 4; t++) wt_sgemm(t & 1, t >> 1, 96, 96, 96, 1.0f, w[0], 96, w[1], 96, 0.0f, w[2], 96);
  }
  for (int n = 128; n <= 1024; n *= 2) bad |= bench("square", 0, 0, n, n, n);
  /* The backward pass's products: dW = X^T dY (TN) and dX = dY W^T (NT). */
  for (int n = 256; n <= 1024; n *= 2) {
    bad |= bench("square", 1, 0, n, n, n);
    bad |= bench("square", 0, 1, n, n, n);
  }
  /* Layer 784 -> 128 at batch 64: Y = X W (W [784,128]) or Y = X W^T (W [128,784]). */
  bad |= bench("fwd1", 0, 0, 64, 128, 784);
  bad |= bench("fwd1", 0, 1, 64, 128, 784);
  bad |= bench("dX1", 0, 1, 64, 784, 128);  /* dX = dY W^T */
  bad |= bench("dX1", 0, 0, 64, 784, 128);  /* dX = dY W (W [128,784]) */
  bad |= bench("dW1", 1, 0, 784, 128, 64);  /* dW = X^T dY */
  bad |= bench("dW1", 1, 0, 128, 784, 64);  /* dW = dY^T X (W [128,784]) */
  /* Layer 128 -> 10. */
  bad |= bench("fwd2", 0, 0, 64, 10, 128);
  bad |= bench("fwd2", 0, 1, 64, 10, 128);
  bad |= bench("dX2", 0, 1, 64, 128, 10);
  bad |= bench("dX2", 0, 0, 64, 128, 10);
  bad |= bench("dW2", 1, 0, 128, 10, 64);
  bad |= bench("dW2", 1, 0, 10, 128, 64);
  /* A frozen base's forward (8 x Linear(1024) at batch 64): Y = X W^T (Gemm transB, torch's
   * Linear) and Y = X W. */
  bad |= bench("frozen", 0, 1, 64, 1024, 1024);
  bad |= bench("frozen", 0, 0, 64, 1024, 1024);
  bad |= bench("frozen", 0, 1, 256, 1024, 1024); /* packing of op(B) shared by 4 x more rows */
  bad |= bench_base("base", 1, 64, 1024, 8);
  bad |= bench_base("base", 0, 64, 1024, 8);
  /* The d=256 transformer block at batch 8 x seq 128: QKV / MLP up / MLP down and their
   * weight gradients. */
  bad |= bench("d256", 0, 0, 1024, 768, 256);
  bad |= bench("d256", 0, 0, 1024, 1024, 256);
  bad |= bench("d256", 0, 0, 1024, 256, 1024);
  bad |= bench("d256", 1, 0, 256, 1024, 1024);
  bad |= bench("d256", 0, 1, 1024, 256, 1024);
  /* Attention at seq 128, head size 64 (the direct, unpacked path): Q K^T, P V, and the
   * mid-sized 48 x 32 x 32. */
  bad |= bench("attn", 0, 0, 128, 128, 64);
  bad |= bench("attn", 0, 0, 128, 64, 128);
  bad |= bench("attn", 0, 0, 48, 32, 32);
  bad |= bench("attn", 1, 0, 128, 64, 128);
  bad |= bench("attn", 1, 0, 65, 48, 65);
  bad |= bench("attn", 0, 1, 128, 128, 64);
  /* Thin shapes (batch 1 inference, matrix x vector). */
  bad |= bench("thin", 0, 0, 1, 128, 784);
  bad |= bench("thin", 0, 1, 1, 128, 784);
  bad |= bench("thin", 0, 0, 3, 512, 512);
  bad |= bench("thin", 0, 0, 128, 1, 784);
  bad |= bench("thin", 1, 0, 784, 2, 64);
  /* ConvNeXt-tiny (batch 2, 64 x 64) stages 2-4: Linear products of 128, 32 and 8 rows and their
   * weight gradients (K = rows); the small ViT's (130 rows); its attention heads (direct path). */
  bench_stream("stream-cnx2", 0, 1, 128, 768, 192, 8);
  bench_stream("stream-cnx2", 0, 0, 128, 192, 768, 8);
  bench_stream("stream-cnx2", 1, 0, 192, 768, 128, 8);
  for (int t = 0; t < 2; t++) {
    bench_stream("stream-cnx3", 0, t, 32, 1536, 384, 8);
    bench_stream("stream-cnx3", 0, t, 32, 384, 1536, 8);
    bench_stream("stream-cnx4", 0, t, 8, 3072, 768, 4);
    bench_stream("stream-cnx4", 0, t, 8, 768, 3072, 4);
  }
  bench_stream("stream-cnx3", 1, 0, 384, 1536, 32, 8);
  bench_stream("stream-cnx4", 1, 0, 768, 3072, 8, 4);
  bench_stream("stream-cnx4", 1, 0, 3072, 768, 8, 4);
  bench_stream("stream-vit", 0, 1, 130, 768, 192, 4);
  bench_stream("stream-vit", 0, 0, 130, 192, 768, 4);
  bench_stream("stream-vit", 1, 0, 192, 768, 130, 4);
  bench_stream("stream-vit", 1, 0, 768, 192, 130, 4);
  bench_stream("stream-vit", 0, 1, 65, 65, 48, 8);
  bench_stream("stream-vit", 0, 0, 65, 48, 65, 8);
  if (bad) printf("MISMATCH against wt_sgemm_ref\n");
  return bad;
}
