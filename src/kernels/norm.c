/* Batch / layer normalization kernels (see norm.h). Statistics are two-pass (mean, then the
 * sum of squared deviations) so a large mean does not cancel the variance; the apply loops
 * are one multiply-add per element with simd.h. */
#include "kernels/norm.h"

#include <math.h>

#include "kernels/simd.h"

/* y[i] = x[i] * a + b */
static void affine_row(const float *x, float *y, int64_t n, float a, float b) {
  wt_f32x4 va = wt_f32x4_splat(a), vb = wt_f32x4_splat(b);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(y + i, wt_f32x4_fma(wt_f32x4_load(x + i), va, vb));
  for (; i < n; i++) y[i] = x[i] * a + b;
}

void wt_batchnorm_apply_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S,
                            const float *scale, const float *bias, const float *mean,
                            const float *var, float eps) {
  for (int64_t c = 0; c < C; c++) {
    float a = scale[c] / sqrtf(var[c] + eps);
    float b = bias[c] - mean[c] * a;
    for (int64_t n = 0; n < N; n++) affine_row(x + (n * C + c) * S, y + (n * C + c) * S, S, a, b);
  }
}

/* Sum of x[0..n) in float lanes; double across rows is done by the callers. */
static float row_sum(const float *x, int64_t n) {
  wt_f32x4 a0 = wt_f32x4_zero(), a1 = wt_f32x4_zero();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 = wt_f32x4_add(a0, wt_f32x4_load(x + i));
    a1 = wt_f32x4_add(a1, wt_f32x4_load(x + i + 4));
  }
  float s = wt_f32x4_hsum(wt_f32x4_add(a0, a1));
  for (; i < n; i++) s += x[i];
  return s;
}

/* Sum of (x[i] - m)^2 over [0..n). */
static float row_sqdev(const float *x, int64_t n, float m) {
  wt_f32x4 vm = wt_f32x4_splat(m), a0 = wt_f32x4_zero(), a1 = wt_f32x4_zero();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    wt_f32x4 d0 = wt_f32x4_sub(wt_f32x4_load(x + i), vm);
    wt_f32x4 d1 = wt_f32x4_sub(wt_f32x4_load(x + i + 4), vm);
    a0 = wt_f32x4_fma(d0, d0, a0);
    a1 = wt_f32x4_fma(d1, d1, a1);
  }
  float s = wt_f32x4_hsum(wt_f32x4_add(a0, a1));
  for (; i < n; i++) s += (x[i] - m) * (x[i] - m);
  return s;
}

void wt_batchnorm_stats_f32(const float *x, int64_t N, int64_t C, int64_t S, int unbiased,
                            float *mean, float *var) {
  int64_t m = N * S;
  for (int64_t c = 0; c < C; c++) {
    double s = 0;
    for (int64_t n = 0; n < N; n++) s += row_sum(x + (n * C + c) * S, S);
    float mu = m ? (float)(s / (double)m) : 0.0f;
    double q = 0;
    for (int64_t n = 0; n < N; n++) q += row_sqdev(x + (n * C + c) * S, S, mu);
    int64_t div = unbiased ? m - 1 : m;
    mean[c] = mu;
    var[c] = div > 0 ? (float)(q / (double)div) : 0.0f;
  }
}

void wt_batchnorm_train_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S,
                            const float *scale, const float *bias, const float *input_mean,
                            const float *input_var, float eps, float momentum,
                            int unbiased_running, float *batch_mean, float *batch_var,
                            float *running_mean, float *running_var) {
  wt_batchnorm_stats_f32(x, N, C, S, 0, batch_mean, batch_var);
  int64_t m = N * S;
  /* Bessel's factor applied to the biased variance: var_b * m / (m - 1). */
  double bessel = unbiased_running && m > 1 ? (double)m / (double)(m - 1) : 1.0;
  for (int64_t c = 0; c < C; c++) {
    if (running_mean) running_mean[c] = input_mean[c] * momentum + batch_mean[c] * (1 - momentum);
    if (running_var)
      running_var[c] =
          input_var[c] * momentum + (float)(batch_var[c] * bessel) * (1 - momentum);
  }
  /* Last: y may alias x. */
  wt_batchnorm_apply_f32(x, y, N, C, S, scale, bias, batch_mean, batch_var, eps);
}

void wt_layernorm_f32(const float *x, float *y, int64_t rows, int64_t n, const float *scale,
                      const float *bias, float eps, float *mean_out, float *invstd_out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    float mu = n ? row_sum(xr, n) / (float)n : 0.0f;
    float var = n ? row_sqdev(xr, n, mu) / (float)n : 0.0f;
    float inv = 1.0f / sqrtf(var + eps);
    if (mean_out) mean_out[r] = mu;
    if (invstd_out) invstd_out[r] = inv;
    /* y = (x - mu) * inv * scale + bias, with (x - mu) * inv computed first like the spec. */
    wt_f32x4 vm = wt_f32x4_splat(mu), vi = wt_f32x4_splat(inv);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      wt_f32x4 v = wt_f32x4_mul(wt_f32x4_sub(wt_f32x4_load(xr + i), vm), vi);
      v = wt_f32x4_mul(v, wt_f32x4_load(scale + i));
      if (bias) v = wt_f32x4_add(v, wt_f32x4_load(bias + i));
      wt_f32x4_store(yr + i, v);
    }
    for (; i < n; i++) {
      float v = (xr[i] - mu) * inv * scale[i];
      yr[i] = bias ? v + bias[i] : v;
    }
  }
}
