/* Scalar reference GEMM: the definition the fast kernel is tested against. */
#include "backend/cpu/gemm.h"

void wt_sgemm_ref(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                  int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    for (int64_t j = 0; j < N; j++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; k++) {
        float a = trans_a ? A[k * lda + i] : A[i * lda + k];
        float b = trans_b ? B[j * ldb + k] : B[k * ldb + j];
        acc += a * b;
      }
      float *c = &C[i * ldc + j];
      *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
    }
  }
}
