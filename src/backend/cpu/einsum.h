/* Einsum kernels: a generic strided sum-of-products loop (any contraction, diagonal,
 * broadcast, any operand count) and a strided copy used to lay operands out for a batched
 * GEMM. Plain functions over pointers, sizes and strides. */
#ifndef WT_KERNELS_EINSUM_H
#define WT_KERNELS_EINSUM_H

#include <stdint.h>

#include "ops/einsum_params.h" /* WT_EINSUM_MAX_IDS, WT_EINSUM_MAX_OPS */

/* y[out coords] = sum over the summed ids of prod_k op_k[offset_k]: ids 0..n_out-1 index the
 * contiguous output (row-major, in that order), ids n_out..n_ids-1 are summed. strides is
 * [n_ops][WT_EINSUM_MAX_IDS] element strides of each id in each operand (0: absent or
 * broadcast). dtype: 1 float (double accumulation), 6 int32, 7 int64. */
void wt_einsum_generic(int dtype, int n_ops, const void *const *ops,
                       const int64_t (*strides)[WT_EINSUM_MAX_IDS], int n_ids, int n_out,
                       const int64_t *dims, void *y);

/* dst (contiguous, shape dims[0..rank)) = src read with element strides[0..rank). */
void wt_strided_copy_f32(const float *src, int rank, const int64_t *dims, const int64_t *strides,
                         float *dst);

#endif
