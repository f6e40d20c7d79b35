/* Resize kernels (ONNX Resize / Upsample and their gradient). A resize is separable: each axis
 * maps every output coordinate to at most 4 weighted input taps (nearest: 1, linear: 2,
 * cubic: 4), built once per axis by wt_resize_axis_taps; the forward applies the axes one at a
 * time (innermost first, like ONNX's reference), the gradient scatters them back in reverse. */
#ifndef WT_KERNELS_RESIZE_H
#define WT_KERNELS_RESIZE_H

#include <stddef.h>
#include <stdint.h>

#include "ops/resize_cfg.h"

/* Output coordinate o of one axis reads sum_t w[t] * x[idx[t]] (t < n), or the extrapolation
 * value when `outside` (tf_crop_and_resize outside the roi). */
typedef struct wt_resize_tap {
  int32_t n, outside;
  int64_t idx[4];
  float w[4];
} wt_resize_tap;

/* Fills taps[0..out) for one axis of length `in` resized to `out` with scale factor `scale`
 * (the given scale, or out / in when sizes were given); roi_start/end are this axis' roi
 * (tf_crop_and_resize only). Returns 1 when the axis is the identity (skippable). */
int wt_resize_axis_taps(const wt_resize_cfg *cfg, int64_t in, int64_t out, double scale,
                        double roi_start, double roi_end, wt_resize_tap *taps);

/* Elements of the largest intermediate a separable pass sequence needs. */
int64_t wt_resize_buffer_elems(int rank, const int64_t *in_dims, const int64_t *out_dims);

/* y = resize(x): taps[d] is NULL for identity axes. buf0/buf1 hold wt_resize_buffer_elems
 * elements of esize bytes each. esize is 4 for float; nearest mode (single weight-1 taps)
 * works for any element size as a byte copy (extrap then points at one element). */
void wt_resize_forward(const void *x, void *y, size_t esize, int is_float, int rank,
                       const int64_t *in_dims, const int64_t *out_dims,
                       const wt_resize_tap *const *taps, const void *extrap, void *buf0,
                       void *buf1);

/* dx = adjoint of the float resize applied to dy (dy has out_dims, dx in_dims). */
void wt_resize_grad_f32(const float *dy, float *dx, int rank, const int64_t *in_dims,
                        const int64_t *out_dims, const wt_resize_tap *const *taps, float *buf0,
                        float *buf1);

#endif
