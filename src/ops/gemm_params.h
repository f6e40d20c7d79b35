/* The gemm family's params: what its ops' infer (src/ops/gemm.c) hands their kernels. */
#ifndef WT_OPS_GEMM_PARAMS_H
#define WT_OPS_GEMM_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

#define MM_MAX_BATCH (WT_MAX_RANK - 1)

/* Bits of params.half: the operands that are float16 (frozen weights). */
enum { WT_MM_HALF_A = 1, WT_MM_HALF_B = 2 };

typedef struct mm_params {
  int64_t M, N, K;
  /* Output batch dims and, per batch dim, the element stride of A's and B's matrices
   * (0 where that operand is broadcast, so a broadcast operand is never copied). */
  int nb;
  int64_t batch[MM_MAX_BATCH];
  int64_t a_stride[MM_MAX_BATCH], b_stride[MM_MAX_BATCH];
  /* B has a single matrix: fold all of A's batches into the rows of one GEMM. */
  int fold;
  int relu;                     /* a following Relu fused as the GEMM's epilogue (absorb) */
  int half;                     /* WT_MM_HALF_A / WT_MM_HALF_B: float16 operands */
  /* A / B hold their matrices transposed ([K, M] / [N, K]): a Transpose swapping their last two
   * axes was folded into this step (read_swapped); M, N, K are the product's as before. */
  int ta, tb;
} mm_params;
static_assert(sizeof(mm_params) <= WT_PARAMS_MAX, "mm_params too large");

typedef struct gemm_params {
  int trans_a, trans_b;
  float alpha, beta;
  int64_t M, N, K;
  int has_c;
  /* C's element strides along Y's rows and columns (0 where broadcast). */
  int64_t c_rs, c_cs;
  int relu;                     /* a following Relu fused as the GEMM's epilogue (absorb) */
  int half;                     /* WT_MM_HALF_A / WT_MM_HALF_B: float16 operands */
  /* Y is written transposed, [N, M]: the Transpose after it was absorbed (gemm_absorb). */
  int trans_out;
} gemm_params;
static_assert(sizeof(gemm_params) <= WT_PARAMS_MAX, "gemm_params too large");

#endif
