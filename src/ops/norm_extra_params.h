/* The norm_extra family's params: what its ops' infer (src/ops/norm_extra.c) hands their
 * kernels. */
#ifndef WT_OPS_NORM_EXTRA_PARAMS_H
#define WT_OPS_NORM_EXTRA_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct gn_params {
  int64_t N, C, S, G;
  int per_channel;
  float eps;
} gn_params;
static_assert(sizeof(gn_params) <= WT_PARAMS_MAX, "gn_params too large");

typedef struct rms_params {
  int64_t rows, n;
  float eps;
} rms_params;
static_assert(sizeof(rms_params) <= WT_PARAMS_MAX, "rms_params too large");

#endif
