/* The resize family's params: what its ops' infer (src/ops/resize.c) hands their kernels. */
#ifndef WT_OPS_RESIZE_PARAMS_H
#define WT_OPS_RESIZE_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"
#include "ops/resize_cfg.h"

typedef struct rs_params {
  wt_resize_cfg cfg;
  int rank, n_axes, axes[WT_MAX_RANK];
  int roi_input;                  /* input index of roi, -1 when the op has none */
  int scales_input;               /* ResizeGrad: input index of scales read at run, else -1 */
  int is_float;
  float extrap;
  int64_t in_dims[WT_MAX_RANK], out_dims[WT_MAX_RANK];
  double scale[WT_MAX_RANK];
  size_t esize, tap_bytes;
  int64_t buf_elems;
} rs_params;
static_assert(sizeof(rs_params) <= WT_PARAMS_MAX, "rs_params too large");

#endif
