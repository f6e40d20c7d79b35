/* Kernels of the extra normalizations: group normalization over [N, C, S] (instance
 * normalization is the G = C case) and RMS normalization (com.microsoft
 * SimplifiedLayerNormalization) with its gradient. Plain functions over pointers and sizes. */
#ifndef WT_KERNELS_NORM_EXTRA_H
#define WT_KERNELS_NORM_EXTRA_H

#include <stdint.h>

/* x is [N, C, S] with C = G * (C / G): each (n, group) block of C / G * S contiguous values is
 * normalized with its mean and biased variance (double accumulation), then
 * y = xhat * scale + bias with scale / bias per channel ([C], per_channel) or per group ([G]). */
void wt_groupnorm_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S, int64_t G,
                      const float *scale, const float *bias, int per_channel, float eps);

/* RMS norm of `rows` rows of n: inv = 1 / sqrt(mean(x^2) + eps), y = x * inv * scale.
 * inv_out ([rows]) may be NULL. */
void wt_rmsnorm_f32(const float *x, float *y, int64_t rows, int64_t n, const float *scale,
                    float eps, float *inv_out);

/* Gradient of the RMS norm from the forward inv per row, xhat = x * inv, g = dy * scale:
 *   dx = inv * (g - xhat * mean_n(g * xhat)),  dscale[i] = sum_rows dy * xhat.
 * dx and dscale may each be NULL. */
void wt_rmsnorm_grad_f32(const float *dy, const float *x, const float *scale, const float *inv,
                         int64_t rows, int64_t n, float *dx, float *dscale);

#endif
