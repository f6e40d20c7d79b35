/* Single-precision matrix multiply, row-major:
 *   C[M,N] = alpha * op(A) * op(B) + beta * C,  op(A) is [M,K], op(B) is [K,N].
 * A is [M,K] (lda >= K), or [K,M] when trans_a (lda >= M); B is [K,N] (ldb >= N), or [N,K]
 * when trans_b (ldb >= K). beta == 0 means C is not read (NaN in C does not propagate).
 * No allocation: packing buffers are static or the pool threads' scratch. Large shapes run on the
 * thread pool (base/pool.h), bit-identical at any thread count. */
#ifndef WT_KERNELS_GEMM_H
#define WT_KERNELS_GEMM_H

#include <stdint.h>

void wt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc);
/* The same with a fused ReLU epilogue: C = max(C, 0) applied to each block of C as soon as it
 * is final (while it is in cache), not in a pass of its own. NaN stays NaN, as in Relu. */
void wt_sgemm_relu(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                   int64_t ldc);

/* The scalar reference the fast kernel is tested against (same contract, plain loops). */
void wt_sgemm_ref(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                  int64_t ldc);

#endif
