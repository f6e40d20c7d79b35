/* The softmax family's params: what its ops' infer (src/ops/softmax.c) hands their kernels. */
#ifndef WT_OPS_SOFTMAX_PARAMS_H
#define WT_OPS_SOFTMAX_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct sce_params {
  int64_t N, C, D;
  int64_t ignore_index;
  int has_ignore, reduction;
  int nll;                        /* NegativeLogLikelihoodLoss: input holds log-probabilities */
} sce_params;
static_assert(sizeof(sce_params) <= WT_PARAMS_MAX, "sce_params too large");

#endif
