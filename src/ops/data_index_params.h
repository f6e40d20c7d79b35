/* The data_index family's params: what its ops' infer (src/ops/data_index.c) hands their
 * kernels. */
#ifndef WT_OPS_DATA_INDEX_PARAMS_H
#define WT_OPS_DATA_INDEX_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

typedef struct index_params {
  int axis;      /* Gather*, ScatterElements: normalized axis; GatherND: batch_dims */
  int widen;     /* Gather: float16 data, rows widened to float as they are copied */
  int reduction; /* scatters: RED_* */
} index_params;
static_assert(sizeof(index_params) <= WT_PARAMS_MAX, "params");

#endif
