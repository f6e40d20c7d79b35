/* The einsum family's params: what its ops' infer (src/ops/einsum.c) hands their kernels. */
#ifndef WT_OPS_EINSUM_PARAMS_H
#define WT_OPS_EINSUM_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

/* The most distinct indices and operands an equation may have. */
#define WT_EINSUM_MAX_IDS 16
#define WT_EINSUM_MAX_OPS 8

typedef struct es_params {
  int n_ops, n_ids, n_out, dtype;
  int8_t op_rank[WT_EINSUM_MAX_OPS];
  int8_t op_ids[WT_EINSUM_MAX_OPS][WT_MAX_RANK]; /* compact id per axis */
  int64_t dims[WT_EINSUM_MAX_IDS];               /* per compact id */
  /* GEMM plan (gemm != 0): compact ids of the batch / M / N / K groups. */
  int gemm, nb_ids, nm_ids, nn_ids, nk_ids;
  int8_t b_ids[WT_MAX_RANK], m_ids[WT_MAX_RANK], n_ids_[WT_MAX_RANK], k_ids[WT_MAX_RANK];
  int copy_a, copy_b, copy_c, trans_a, trans_b;
  int64_t nb, m, n, k;
  size_t off_b, off_c;      /* scratch offsets (bytes) of B's and C's copies */
} es_params;
static_assert(sizeof(es_params) <= WT_PARAMS_MAX, "es_params too large");

#endif
