/* The pool family's params: what its ops' infer (src/ops/pool.c) hands their kernels. */
#ifndef WT_OPS_POOL_PARAMS_H
#define WT_OPS_POOL_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/conv_geom.h"
#include "ops/op.h"

typedef struct pool_params {
  wt_conv_geom g;
  int64_t pad_end[3];           /* normalized trailing pads, for count_include_pad */
  int count_include_pad;
  int storage_order;
  int want_indices;
} pool_params;
static_assert(sizeof(pool_params) <= WT_PARAMS_MAX, "pool_params too big");

#endif
