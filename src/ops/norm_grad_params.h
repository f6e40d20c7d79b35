/* The norm_grad family's params: what its ops' infer (src/ops/norm_grad.c) hands their kernels. */
#ifndef WT_OPS_NORM_GRAD_PARAMS_H
#define WT_OPS_NORM_GRAD_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct lng_params {
  int64_t rows, n;
} lng_params;
static_assert(sizeof(lng_params) <= WT_PARAMS_MAX, "lng_params too large");

typedef struct bng_params {
  int64_t N, C, S;
} bng_params;
static_assert(sizeof(bng_params) <= WT_PARAMS_MAX, "bng_params too large");

#endif
