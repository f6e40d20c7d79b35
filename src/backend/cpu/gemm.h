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

/* nbatch products of the same shape, C_t = alpha * op(A_t) op(B_t) + beta * C_t (ReLU after when
 * relu), with A_t = A + off[0], B_t = B + off[1], C_t = C + off[2] as offsets(ctx, t, off) gives
 * them (in elements). Products too small to be split themselves run one per block on the thread
 * pool; each is computed as wt_sgemm computes it alone, so the bits do not depend on threads. */
typedef void (*wt_gemm_offsets_fn)(const void *ctx, int64_t t, int64_t off[3]);
void wt_sgemm_batch(int trans_a, int trans_b, int64_t nbatch, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float beta, float *C, int64_t ldc, int relu, wt_gemm_offsets_fn offsets,
                    const void *ctx);

/* C = alpha * op(A) op(B) + beta * C (ReLU after when relu) where A and/or B are float16 (frozen
 * weights), as half says: WT_GEMM_A_HALF, WT_GEMM_B_HALF (0: wt_sgemm). lda / ldb in elements.
 * Each operand is widened while its panels are packed (no float copy of it), the microkernel and
 * blocking are wt_sgemm's packed path's: the result equals that path on the widened operands,
 * bit-identical at any thread count. */
enum { WT_GEMM_A_HALF = 1, WT_GEMM_B_HALF = 2 };
void wt_sgemm_half(int half, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                   float alpha, const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                   float *C, int64_t ldc, int relu);

/* op(B) packed once for many products (a frozen weight read every step): the packed path's
 * panels of all of op(B), K * roundup(N, 8) floats (wt_gemm_packed_b_floats), which a product
 * then reads in place of packing op(B) per block. wt_gemm_pack_b writes them (half:
 * WT_GEMM_B_HALF when B is float16; the copy is float). wt_gemm_packs_b says whether a product
 * of that shape would read them at all (thin and small shapes read B in place). wt_sgemm_prepacked
 * is wt_sgemm_half given Bp as well: the same bits (the same panels, blocking and microkernel),
 * at any thread count; Bp NULL, or a shape that does not pack, reads B as wt_sgemm_half does. */
int64_t wt_gemm_packed_b_floats(int64_t K, int64_t N);
void wt_gemm_pack_b(int half, int trans_b, int64_t K, int64_t N, const void *B, int64_t ldb,
                    float *dst);
int wt_gemm_packs_b(int half, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                    int64_t lda, int64_t ldb);
void wt_sgemm_prepacked(int half, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                        float alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                        const float *Bp, float beta, float *C, int64_t ldc, int relu);

/* The scalar reference the fast kernel is tested against (same contract, plain loops). */
void wt_sgemm_ref(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                  int64_t ldc);

#endif
