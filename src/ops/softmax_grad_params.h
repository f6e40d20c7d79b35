/* The softmax_grad family's params: what its ops' infer (src/ops/softmax_grad.c) hands their
 * kernels. */
#ifndef WT_OPS_SOFTMAX_GRAD_PARAMS_H
#define WT_OPS_SOFTMAX_GRAD_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct sceg_params {
  int64_t N, C, D;
  int64_t ignore_index;
  int has_ignore, reduction;
} sceg_params;
static_assert(sizeof(sceg_params) <= WT_PARAMS_MAX, "sceg_params too large");

#endif
