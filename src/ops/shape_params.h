/* The shape family's params: what its ops' infer (src/ops/shape.c) hands their kernels. */
#ifndef WT_OPS_SHAPE_PARAMS_H
#define WT_OPS_SHAPE_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct shape_params {
  int start, end;
} shape_params;
static_assert(sizeof(shape_params) <= WT_PARAMS_MAX, "params");

typedef struct transpose_params {
  int perm[WT_MAX_RANK]; /* first: the planner reads it (WT_OP_TRANSPOSE) */
} transpose_params;
static_assert(sizeof(transpose_params) <= WT_PARAMS_MAX, "params");

#endif
