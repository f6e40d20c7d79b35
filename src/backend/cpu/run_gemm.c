/* The CPU kernels of the gemm family (definitions: src/ops/gemm.c): MatMul and Gemm on wt_sgemm,
 * with their fusions (a Relu epilogue, transposes read through the trans flags). */
#include <assert.h>
#include <string.h>

#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_prepack.h"
#include "backend/cpu/kernel.h"
#include "ops/gemm_params.h"
#include "ops/op.h"

/* params.half goes to wt_sgemm_half as its half argument. */
static_assert((int)WT_MM_HALF_A == (int)WT_GEMM_A_HALF && (int)WT_MM_HALF_B == (int)WT_GEMM_B_HALF,
              "the float16 operand bits of the params and of the GEMM differ");

/* Y = alpha * op(A) op(B) + beta * Y (ReLU after when relu), reading op(B)'s packed panels when
 * B is a frozen weight packed once in the runner's table pre (backend/cpu/gemm_prepack.h; NULL:
 * none): the same bits either way. */
static void gemm_product(wt_prepack *pre, int half, int ta, int tb, int64_t M, int64_t N,
                         int64_t K, float alpha, const void *A, int64_t lda, const void *B,
                         int64_t ldb, float beta, float *Y, int64_t ldy, int relu) {
  const float *Bp = NULL;
  if (wt_gemm_packs_b(half, ta, tb, M, N, K, lda, ldb))
    Bp = wt_prepack_find(pre, B, (half & WT_GEMM_B_HALF) != 0, tb, K, N, ldb);
  wt_sgemm_prepacked(half, ta, tb, M, N, K, alpha, A, lda, B, ldb, Bp, beta, Y, ldy, relu);
}

/* Batch t's matrices: t in mixed radix over the batch dims, each digit times its strides. */
static void matmul_offsets(const void *ctx, int64_t t, int64_t off[3]) {
  const mm_params *p = ctx;
  off[0] = off[1] = 0;
  off[2] = t * p->M * p->N;
  for (int i = p->nb - 1; i >= 0; i--) {
    int64_t d = t % p->batch[i];
    t /= p->batch[i];
    off[0] += d * p->a_stride[i];
    off[1] += d * p->b_stride[i];
  }
}

/* All of A's batches folded into the rows of one product (B holds one matrix, A is neither
 * broadcast nor stored transposed). */
static int matmul_folds(const mm_params *p, int64_t nbatch) {
  if (!p->fold || p->ta) return 0;
  int64_t a_batches = 1;
  for (int i = 0; i < p->nb; i++)
    if (p->a_stride[i]) a_batches *= p->batch[i];
  return a_batches == nbatch;
}

/* matmul_run with float16 operands: batch by batch (each product splits over threads itself). */
static void matmul_run_half(wt_prepack *pre, const mm_params *p, const void *A, const void *B,
                            float *Y, int64_t nbatch) {
  int64_t M = p->M, N = p->N, K = p->K, lda = p->ta ? M : K, ldb = p->tb ? K : N;
  size_t ea = p->half & WT_GEMM_A_HALF ? 2 : 4, eb = p->half & WT_GEMM_B_HALF ? 2 : 4;
  if (matmul_folds(p, nbatch)) {
    gemm_product(pre, p->half, 0, p->tb, nbatch * M, N, K, 1.0f, A, K, B, ldb, 0.0f, Y, N, p->relu);
    return;
  }
  for (int64_t t = 0; t < nbatch; t++) {
    int64_t off[3];
    matmul_offsets(p, t, off);
    wt_sgemm_half(p->half, p->ta, p->tb, M, N, K, 1.0f, (const char *)A + (size_t)off[0] * ea, lda,
                  (const char *)B + (size_t)off[1] * eb, ldb, 0.0f, Y + off[2], N, p->relu);
  }
}

static int matmul_run(const wt_run_ctx *ctx) {
  const mm_params *p = ctx->params;
  const float *A = ctx->in[0].data, *B = ctx->in[1].data;
  float *Y = ctx->out[0].data;
  int64_t M = p->M, N = p->N, K = p->K, nbatch = 1;
  for (int i = 0; i < p->nb; i++) nbatch *= p->batch[i];
  if (nbatch == 0 || M == 0 || N == 0) return WT_OK;
  if (K == 0) { /* Empty sums (ReLU of zeros is zeros); A and B may have no data at all. */
    memset(Y, 0, sizeof(float) * (size_t)(nbatch * M * N));
    return WT_OK;
  }
  if (p->half) {
    matmul_run_half(wt_exec_prepack(ctx->exec), p, A, B, Y, nbatch);
    return WT_OK;
  }
  int64_t lda = p->ta ? M : K, ldb = p->tb ? K : N;
  if (matmul_folds(p, nbatch)) {
    gemm_product(wt_exec_prepack(ctx->exec), 0, 0, p->tb, nbatch * M, N, K, 1.0f, A, K, B, ldb, 0.0f, Y, N,
                 p->relu);
    return WT_OK;
  }
  /* (When A is broadcast too, every batch is the same product, computed per batch.) */
  wt_sgemm_batch(p->ta, p->tb, nbatch, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, Y, N, p->relu,
                 matmul_offsets, p);
  return WT_OK;
}

/* A Relu after the product runs as the GEMM's epilogue (no pass of its own over the output). */
static int is_relu(const wt_node *n) {
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  return op && (op->flags & WT_OP_RELU);
}

static int matmul_absorb(void *params, const wt_node *next) {
  mm_params *p = params;
  if (p->relu || !is_relu(next)) return 0;
  return p->relu = 1;
}

/* Thin products (M or N below 4) are not fused: there wt_sgemm picks its path by the trans
 * flags, and one of them (dots_kernel) sums in another order. Elsewhere every path sums each
 * element's products in k order, so a fused step gives the plain one's bits. */
static int thin(int64_t M, int64_t N) { return M < 4 || N < 4; }

/* A or B stored transposed: the GEMM reads it through its trans flag (lda / ldb follow). */
static int matmul_read_swapped(void *params, int input, int rank, int commit) {
  mm_params *p = params;
  if (input > 1 || rank < 2 || (input ? p->tb : p->ta)) return 0;
  /* the rows of the product that runs: all of A's batches when they fold (B read swapped) */
  int64_t nbatch = 1;
  for (int i = 0; i < p->nb; i++) nbatch *= p->batch[i];
  if (thin(input == 1 && matmul_folds(p, nbatch) ? nbatch * p->M : p->M, p->N)) return 0;
  if (commit) *(input ? &p->tb : &p->ta) = 1;
  return 1;
}

static int gemm_run(const wt_run_ctx *ctx) {
  const gemm_params *p = ctx->params;
  const float *A = ctx->in[0].data, *B = ctx->in[1].data;
  float *Y = ctx->out[0].data;
  int64_t M = p->M, N = p->N, K = p->K;
  if (M == 0 || N == 0) return WT_OK;
  float beta = 0.0f;
  if (p->has_c && p->beta != 0.0f) {
    /* Y starts as broadcast C; the kernel then computes alpha * AB + beta * Y in place. */
    const float *C = ctx->in[2].data;
    for (int64_t i = 0; i < M; i++) {
      const float *c = C + i * p->c_rs;
      float *y = Y + i * N;
      if (p->c_cs)
        memcpy(y, c, sizeof(float) * (size_t)N);
      else
        for (int64_t j = 0; j < N; j++) y[j] = c[0];
    }
    beta = p->beta;
  }
  int64_t lda = p->trans_a ? M : K, ldb = p->trans_b ? K : N;
  if (p->trans_out) {
    /* Y^T = op(B)^T op(A)^T: the same products summed in the same order, each landing at its
     * transposed place (no C: absorb refuses a Gemm that reads one). */
    int half = (p->half & WT_GEMM_A_HALF ? WT_GEMM_B_HALF : 0) | (p->half & WT_GEMM_B_HALF ? WT_GEMM_A_HALF : 0);
    gemm_product(wt_exec_prepack(ctx->exec), half, !p->trans_b, !p->trans_a, N, M, K, p->alpha, B, ldb, A,
                 lda, 0.0f, Y, M, p->relu);
    return WT_OK;
  }
  gemm_product(wt_exec_prepack(ctx->exec), p->half, p->trans_a, p->trans_b, M, N, K, p->alpha, A, lda, B,
               ldb, beta, Y, N, p->relu);
  return WT_OK;
}

/* A transposing Transpose of the 2-D output: perm [1, 0] (or none: reversed). */
static int is_swap2(const wt_node *n) {
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  if (!op || !(op->flags & WT_OP_TRANSPOSE)) return 0;
  const int64_t *perm;
  int np = wt_attr_ints(n, "perm", &perm);
  return np < 0 || (np == 2 && perm[0] == 1 && perm[1] == 0);
}

static int gemm_absorb(void *params, const wt_node *next) {
  gemm_params *p = params;
  if (p->relu || p->trans_out) return 0;
  if (is_relu(next)) return p->relu = 1;
  if (!is_swap2(next) || (p->has_c && p->beta != 0.0f) || thin(p->M, p->N)) return 0;
  return p->trans_out = 1;
}

static int gemm_read_swapped(void *params, int input, int rank, int commit) {
  gemm_params *p = params;
  if (input > 1 || rank != 2 || thin(p->M, p->N)) return 0;
  if (commit) *(input ? &p->trans_b : &p->trans_a) ^= 1;
  return 1;
}

const wt_cpu_kernel wt_cpu_kernels_gemm[] = {
    {.key = {"", "MatMul"}, .run = matmul_run, .absorb = matmul_absorb, .read_swapped = matmul_read_swapped, .half_inputs = 0x3},
    {.key = {"", "Gemm"}, .run = gemm_run, .absorb = gemm_absorb, .read_swapped = gemm_read_swapped, .half_inputs = 0x3},
    WT_CPU_KERNELS_END};
