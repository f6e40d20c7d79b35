/* The shape_build family's params: what its ops' infer (src/ops/shape_build.c) hands their
 * kernels. */
#ifndef WT_OPS_SHAPE_BUILD_PARAMS_H
#define WT_OPS_SHAPE_BUILD_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct axis_params {
  int axis;
} axis_params;
static_assert(sizeof(axis_params) <= WT_PARAMS_MAX, "params");

typedef struct cos_params {
  unsigned char value[8];
} cos_params;
static_assert(sizeof(cos_params) <= WT_PARAMS_MAX, "params");

typedef struct range_params {
  double fstart, fdelta;
  int64_t istart, idelta;
} range_params;
static_assert(sizeof(range_params) <= WT_PARAMS_MAX, "params");

#endif
