/* Group / instance normalization and RMS normalization kernels (see norm_extra.h). */
#include "backend/cpu/norm_extra.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/simd.h"

/* y[i] = x[i] * a + b over n values. */
static void affine(const float *x, float *y, int64_t n, float a, float b) {
  wt_f32x4 va = wt_f32x4_splat(a), vb = wt_f32x4_splat(b);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(y + i, wt_f32x4_fma(wt_f32x4_load(x + i), va, vb));
  for (; i < n; i++) y[i] = x[i] * a + b;
}

void wt_groupnorm_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S, int64_t G,
                      const float *scale, const float *bias, int per_channel, float eps) {
  int64_t cg = C / G, len = cg * S;
  for (int64_t n = 0; n < N; n++)
    for (int64_t g = 0; g < G; g++) {
      const float *xb = x + (n * C + g * cg) * S;
      float *yb = y + (n * C + g * cg) * S;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < len; i++) sum += xb[i];
      double mean = len ? sum / (double)len : 0;
      for (int64_t i = 0; i < len; i++) {
        double d = xb[i] - mean;
        sq += d * d;
      }
      double inv = 1.0 / sqrt((len ? sq / (double)len : 0) + (double)eps);
      for (int64_t c = 0; c < cg; c++) {
        int64_t p = per_channel ? g * cg + c : g;
        double a = inv * scale[p];
        float b = (float)(bias[p] - mean * a);
        affine(xb + c * S, yb + c * S, S, (float)a, b);
      }
    }
}

void wt_rmsnorm_f32(const float *x, float *y, int64_t rows, int64_t n, const float *scale,
                    float eps, float *inv_out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    double sq = 0;
    for (int64_t i = 0; i < n; i++) sq += (double)xr[i] * xr[i];
    float inv = (float)(1.0 / sqrt((n ? sq / (double)n : 0) + (double)eps));
    if (inv_out) inv_out[r] = inv;
    wt_f32x4 vi = wt_f32x4_splat(inv);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      wt_f32x4_store(yr + i, wt_f32x4_mul(wt_f32x4_mul(wt_f32x4_load(xr + i), vi),
                                          wt_f32x4_load(scale + i)));
    for (; i < n; i++) yr[i] = xr[i] * inv * scale[i];
  }
}

void wt_rmsnorm_grad_f32(const float *dy, const float *x, const float *scale, const float *inv,
                         int64_t rows, int64_t n, float *dx, float *dscale) {
  if (dscale) memset(dscale, 0, sizeof(float) * (size_t)n);
  for (int64_t r = 0; r < rows; r++) {
    const float *dyr = dy + r * n, *xr = x + r * n;
    float iv = inv[r];
    if (dscale)
      for (int64_t i = 0; i < n; i++) dscale[i] += dyr[i] * xr[i] * iv;
    if (!dx) continue;
    double dot = 0;
    for (int64_t i = 0; i < n; i++) dot += (double)dyr[i] * scale[i] * xr[i] * iv;
    float m = n ? (float)(dot / (double)n) : 0.0f;
    float *dxr = dx + r * n;
    for (int64_t i = 0; i < n; i++) {
      float xh = xr[i] * iv;
      dxr[i] = iv * (dyr[i] * scale[i] - xh * m);
    }
  }
}
