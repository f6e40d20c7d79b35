/* The conv family's params: what its ops' infer (src/ops/conv.c) hands their kernels. */
#ifndef WT_OPS_CONV_PARAMS_H
#define WT_OPS_CONV_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/conv_geom.h"
#include "ops/op.h"

typedef struct conv_params {
  wt_conv_geom g;
  int64_t C, M, group;
  int has_bias;
  int want[3];                  /* gradient ops: outputs dX, dW, dB requested */
  int w_half;                   /* Conv, ConvGrad: W float16 (a frozen weight, half_inputs) */
} conv_params;
static_assert(sizeof(conv_params) <= WT_PARAMS_MAX, "conv_params too big");

#endif
