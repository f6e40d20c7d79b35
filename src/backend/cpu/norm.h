/* Normalization kernels: batch normalization over [N, C, S] (S = product of the spatial dims)
 * and layer normalization over rows. Plain functions over pointers and sizes. */
#ifndef WT_KERNELS_NORM_H
#define WT_KERNELS_NORM_H

#include <stdint.h>

/* y[n, c, s] = (x[n, c, s] - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]. y may alias x. */
void wt_batchnorm_apply_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S,
                            const float *scale, const float *bias, const float *mean,
                            const float *var, float eps);

/* Per-channel mean and variance of x [N, C, S] over N and S (two passes, double accumulation).
 * The variance divides by m = N*S, or by m - 1 when unbiased (PyTorch's running-var rule;
 * 0 when m == 1). */
void wt_batchnorm_stats_f32(const float *x, int64_t N, int64_t C, int64_t S, int unbiased,
                            float *mean, float *var);

/* Training-mode batch norm: normalizes with the batch mean and biased batch variance (written
 * to batch_mean / batch_var, [C] each, needed later by the gradient) and, when running_mean /
 * running_var are not NULL, writes input_stat * momentum + batch_stat * (1 - momentum). The
 * running variance uses the biased batch variance (ONNX) or the unbiased one when
 * unbiased_running (PyTorch). */
void wt_batchnorm_train_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S,
                            const float *scale, const float *bias, const float *input_mean,
                            const float *input_var, float eps, float momentum,
                            int unbiased_running, float *batch_mean, float *batch_var,
                            float *running_mean, float *running_var);

/* Layer norm of each of `rows` rows of n: y = (x - mean) * invstd * scale + bias, with
 * invstd = 1 / sqrt(biased var + eps). bias, mean_out, invstd_out may be NULL. y may alias x. */
void wt_layernorm_f32(const float *x, float *y, int64_t rows, int64_t n, const float *scale,
                      const float *bias, float eps, float *mean_out, float *invstd_out);

/* BatchNormalizationGrad (ONNX Runtime's semantics) from the batch statistics mean[c] and
 * invstd[c] = 1 / sqrt(var[c] + eps), with m = N*S, xhat = (x - mean) * invstd:
 *   dbias[c] = sum dy,  dscale[c] = sum dy * xhat,
 *   dx = scale * invstd / m * (m * dy - dbias - xhat * dscale).
 * Sums in double. dx, dscale, dbias may each be NULL (not computed/written). */
void wt_batchnorm_grad_f32(const float *dy, const float *x, int64_t N, int64_t C, int64_t S,
                           const float *scale, const float *mean, const float *invstd, float *dx,
                           float *dscale, float *dbias);

/* LayerNormalizationGrad over `rows` rows of n, from the forward mean / invstd per row:
 *   xhat = (x - mean) * invstd,  g = dy * scale,
 *   dx = invstd * (g - mean_n(g) - xhat * mean_n(g * xhat)),
 *   dscale[i] = sum_rows dy * xhat,  dbias[i] = sum_rows dy.
 * dx, dscale, dbias may each be NULL. */
void wt_layernorm_grad_f32(const float *dy, const float *x, const float *scale,
                           const float *mean, const float *invstd, int64_t rows, int64_t n,
                           float *dx, float *dscale, float *dbias);

#endif
