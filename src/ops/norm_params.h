/* The norm family's params: what its ops' infer (src/ops/norm.c) hands their kernels. */
#ifndef WT_OPS_NORM_PARAMS_H
#define WT_OPS_NORM_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct bn_params {
  int64_t N, C, S;
  float eps, momentum;
  int training;
} bn_params;
static_assert(sizeof(bn_params) <= WT_PARAMS_MAX, "bn_params too large");

typedef struct ln_params {
  int64_t rows, n;
  float eps;
} ln_params;
static_assert(sizeof(ln_params) <= WT_PARAMS_MAX, "ln_params too large");

#endif
