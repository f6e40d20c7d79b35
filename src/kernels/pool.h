/* Pooling kernels over NC[D]HW float32 tensors, geometry 3-D-normalized as in conv.h (img =
 * input spatial dims, grid = output spatial dims). Padding never contributes a value: max
 * ignores it, average divides by the in-image count, or with count_include_pad by the count of
 * window taps inside the padded extent [-pad_begin, img + pad_end). */
#ifndef WT_KERNELS_POOL_H
#define WT_KERNELS_POOL_H

#include <stdint.h>

#include "kernels/conv.h"

/* Floats of scratch the max / average pool kernels need (one reduced image row). */
int64_t wt_pool_scratch_floats(const wt_conv_geom *g);

/* x [NC, img...] -> y [NC, grid...]. tmp: wt_pool_scratch_floats floats. */
void wt_maxpool(const wt_conv_geom *g, int64_t NC, const float *x, float *y, float *tmp);
/* Max pool that also writes the argmax: the flattened index of the max in x (counting from
 * the start of the whole tensor), spatial part row-major (storage_order 0) or column-major
 * (storage_order 1). The first maximum wins. */
void wt_maxpool_indices(const wt_conv_geom *g, int64_t NC, int storage_order, const float *x,
                        float *y, int64_t *indices);
/* pad_end: trailing pads per normalized dim (only read when count_include_pad). */
void wt_avgpool(const wt_conv_geom *g, const int64_t *pad_end, int count_include_pad,
                int64_t NC, const float *x, float *y, float *tmp);

/* Backward passes (kernels/pool_grad.c). dx is overwritten.
 * MaxPoolGrad: dx[indices[i]] += dy[i] over n_dy elements (indices as wt_maxpool_indices
 * writes them, storage_order 0). Returns -1, or the position of the first index outside
 * [0, n_dx) (-1 indices, windows wholly in padding, are skipped). */
int64_t wt_maxpool_grad(int64_t n_dy, const float *dy, const int64_t *indices, int64_t n_dx,
                        float *dx);
/* The adjoint of wt_avgpool (same divisors). dy [NC, grid...] -> dx [NC, img...].
 * tmp: wt_pool_scratch_floats floats. */
void wt_avgpool_grad(const wt_conv_geom *g, const int64_t *pad_end, int count_include_pad,
                     int64_t NC, const float *dy, float *dx, float *tmp);

/* y[i] = mean / max of x[i*S .. i*S + S). */
void wt_global_avgpool(int64_t NC, int64_t S, const float *x, float *y);
void wt_global_maxpool(int64_t NC, int64_t S, const float *x, float *y);

/* Window taps start + k*dil (k < kn) that fall inside [lo, hi): the divisor of an average
 * pool window that excludes padding. Shared by the forward and gradient kernels. */
static inline int64_t wt_pool_count_taps(int64_t start, int64_t kn, int64_t dil, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t k = 0; k < kn; k++) {
    int64_t i = start + k * dil;
    n += i >= lo && i < hi;
  }
  return n;
}

#endif
