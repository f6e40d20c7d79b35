/* The data family's params: what its ops' infer (src/ops/data.c) hands their kernels. */
#ifndef WT_OPS_DATA_PARAMS_H
#define WT_OPS_DATA_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

typedef struct slice_params {
  int64_t start[WT_MAX_RANK], step[WT_MAX_RANK];
} slice_params;
static_assert(sizeof(slice_params) <= WT_PARAMS_MAX, "params");

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_params {
  int64_t begin[WT_MAX_RANK];
  int mode;                     /* PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP */
  unsigned char value[8]; /* constant from the 'value' attribute (before opset 11) */
} pad_params;
static_assert(sizeof(pad_params) <= WT_PARAMS_MAX, "params");

#endif
