/* Direct depthwise convolution kernels (backend/cpu/conv_depthwise.c). */
#ifndef WT_KERNELS_CONV_DEPTHWISE_H
#define WT_KERNELS_CONV_DEPTHWISE_H

#include <stdint.h>

#include "ops/conv_geom.h"

/* Depthwise convolutions (C == group > 1: one input channel per group, M / C outputs each) run
 * direct, without im2col, GEMM or the scratch (backend/cpu/conv_depthwise.c): wt_conv_forward(_w)
 * and wt_conv_grad(_w) dispatch to them unless W is float16 (then the GEMM path, which widens
 * it while packing). dx / dw may be NULL; both are overwritten. */
int wt_conv_is_depthwise(int64_t C, int64_t group);
void wt_conv_depthwise_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                               const float *x, const float *w, const float *bias, float *y);
void wt_conv_depthwise_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                            const float *dy, const float *x, const float *w, float *dx,
                            float *dw);

#endif
