/* Resize kernels: per-axis tap tables (ONNX Resize coordinate transforms, nearest rounding
 * modes, linear and cubic weights, exclude_outside, tf_crop_and_resize extrapolation) and the
 * separable forward / adjoint passes over [outer, axis, inner] views. */
#include "backend/cpu/resize.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/simd.h"

static void cubic_coeffs(double r, double A, double *c) {
  double s = 1.0 - r;
  c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
  c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
  c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
  c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

/* Source coordinate of output coordinate o, in double like ONNX's reference. The "== 1"
 * checks use the fractional output length scale * in, as the reference does. */
static double source_coord(const wt_resize_cfg *cfg, int64_t o, int64_t in, int64_t out,
                           double scale, double rs, double re) {
  double out_len = scale * (double)in;
  switch (cfg->coord) {
    case WT_RESIZE_PYTORCH_HALF_PIXEL:
      return out == 1 ? -0.5 : ((double)o + 0.5) / scale - 0.5;
    case WT_RESIZE_ALIGN_CORNERS:
      return o == 0 || out_len == 1.0 ? 0.0 : (double)o * (double)(in - 1) / (out_len - 1.0);
    case WT_RESIZE_ASYMMETRIC:
      return (double)o / scale;
    case WT_RESIZE_TF_HALF_PIXEL_FOR_NEAREST:
      return ((double)o + 0.5) / scale;
    case WT_RESIZE_TF_CROP_AND_RESIZE: {
      double x = out_len == 1.0 ? (re - rs) * (double)(in - 1) / 2.0
                                : (double)o * (re - rs) * (double)(in - 1) / (out_len - 1.0);
      return x + rs * (double)(in - 1);
    }
    default:
      return ((double)o + 0.5) / scale - 0.5;
  }
}

int wt_resize_axis_taps(const wt_resize_cfg *cfg, int64_t in, int64_t out, double scale,
                        double roi_start, double roi_end, wt_resize_tap *taps) {
  int identity = in == out;
  for (int64_t o = 0; o < out; o++) {
    wt_resize_tap *t = &taps[o];
    memset(t, 0, sizeof *t);
    double x = source_coord(cfg, o, in, out, scale, roi_start, roi_end);
    if (cfg->coord == WT_RESIZE_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(in - 1))) {
      t->outside = 1;
      identity = 0;
      continue;
    }
    /* The reference picks the neighbours left of x: an integral x is the right neighbour
     * of the pair (base, base + 1) with ratio 1. */
    double fl = floor(x), r;
    int64_t base;
    if (x == fl) {
      base = (int64_t)fl - 1;
      r = 1.0;
    } else {
      base = (int64_t)fl;
      r = x - fl;
    }
    int64_t id[4];
    double w[4];
    int n;
    if (cfg->mode == WT_RESIZE_NEAREST) {
      int up;
      if (r == 1.0) up = 1;
      else if (cfg->nearest_mode == WT_NEAREST_ROUND_PREFER_CEIL) up = r >= 0.5;
      else if (cfg->nearest_mode == WT_NEAREST_FLOOR) up = 0;
      else if (cfg->nearest_mode == WT_NEAREST_CEIL) up = 1;
      else up = r > 0.5;
      id[0] = base + up;
      w[0] = 1.0;
      n = 1;
    } else if (cfg->mode == WT_RESIZE_LINEAR) {
      id[0] = base;
      id[1] = base + 1;
      w[0] = 1.0 - r;
      w[1] = r;
      n = 2;
    } else {
      for (int k = 0; k < 4; k++) id[k] = base - 1 + k;
      cubic_coeffs(r, cfg->cubic_a, w);
      n = 4;
    }
    if (cfg->exclude_outside && n > 1) {
      double sum = 0;
      for (int k = 0; k < n; k++) {
        if (id[k] < 0 || id[k] >= in) w[k] = 0;
        sum += w[k];
      }
      if (sum != 0)
        for (int k = 0; k < n; k++) w[k] /= sum;
    }
    for (int k = 0; k < n; k++) {
      if (w[k] == 0) continue;
      int64_t i = id[k] < 0 ? 0 : id[k] >= in ? in - 1 : id[k];
      t->idx[t->n] = i;
      t->w[t->n] = (float)w[k];
      t->n++;
    }
    if (!(t->n == 1 && t->idx[0] == o && t->w[0] == 1.0f)) identity = 0;
  }
  return identity;
}

int64_t wt_resize_buffer_elems(int rank, const int64_t *in_dims, const int64_t *out_dims) {
  int64_t best = 0;
  for (int k = 0; k <= rank; k++) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= d < k ? in_dims[d] : out_dims[d];
    if (n > best) best = n;
  }
  return best;
}

static void pass_f32(const float *src, float *dst, int64_t outer, int64_t in_d, int64_t out_d,
                     int64_t inner, const wt_resize_tap *taps, float extrap) {
  for (int64_t ob = 0; ob < outer; ob++) {
    for (int64_t o = 0; o < out_d; o++) {
      const wt_resize_tap *t = &taps[o];
      float *d = dst + (ob * out_d + o) * inner;
      if (t->outside || t->n == 0) {
        float v = t->outside ? extrap : 0.0f;
        for (int64_t i = 0; i < inner; i++) d[i] = v;
        continue;
      }
      if (inner == 1) {
        const float *s = src + ob * in_d;
        float acc = t->w[0] * s[t->idx[0]];
        for (int k = 1; k < t->n; k++) acc += t->w[k] * s[t->idx[k]];
        d[0] = acc;
        continue;
      }
      const float *s0 = src + (ob * in_d + t->idx[0]) * inner;
      wt_f32x4 w0 = wt_f32x4_splat(t->w[0]);
      int64_t i = 0;
      for (; i + 4 <= inner; i += 4) wt_f32x4_store(d + i, wt_f32x4_mul(w0, wt_f32x4_load(s0 + i)));
      for (; i < inner; i++) d[i] = t->w[0] * s0[i];
      for (int k = 1; k < t->n; k++) {
        const float *s = src + (ob * in_d + t->idx[k]) * inner;
        wt_f32x4 wk = wt_f32x4_splat(t->w[k]);
        i = 0;
        for (; i + 4 <= inner; i += 4)
          wt_f32x4_store(d + i, wt_f32x4_fma(wk, wt_f32x4_load(s + i), wt_f32x4_load(d + i)));
        for (; i < inner; i++) d[i] += t->w[k] * s[i];
      }
    }
  }
}

/* Nearest for any element type: each output row is a copy of one input row. */
static void pass_bytes(const unsigned char *src, unsigned char *dst, size_t esize, int64_t outer,
                       int64_t in_d, int64_t out_d, int64_t inner, const wt_resize_tap *taps,
                       const void *extrap) {
  size_t row = (size_t)inner * esize;
  for (int64_t ob = 0; ob < outer; ob++) {
    for (int64_t o = 0; o < out_d; o++) {
      const wt_resize_tap *t = &taps[o];
      unsigned char *d = dst + (size_t)(ob * out_d + o) * row;
      if (t->outside || t->n == 0) {
        for (int64_t i = 0; i < inner; i++)
          if (t->outside) memcpy(d + (size_t)i * esize, extrap, esize);
          else memset(d + (size_t)i * esize, 0, esize);
        continue;
      }
      memcpy(d, src + (size_t)(ob * in_d + t->idx[0]) * row, row);
    }
  }
}

void wt_resize_forward(const void *x, void *y, size_t esize, int is_float, int rank,
                       const int64_t *in_dims, const int64_t *out_dims,
                       const wt_resize_tap *const *taps, const void *extrap, void *buf0,
                       void *buf1) {
  int active[16], n_active = 0;
  for (int d = rank - 1; d >= 0; d--)
    if (taps[d]) active[n_active++] = d;
  if (n_active == 0) {
    memcpy(y, x, (size_t)wt_resize_buffer_elems(rank, in_dims, in_dims) * esize);
    return;
  }
  int64_t cur[16];
  for (int d = 0; d < rank; d++) cur[d] = in_dims[d];
  const void *src = x;
  float ex = 0;
  if (is_float) memcpy(&ex, extrap, sizeof ex);
  for (int a = 0; a < n_active; a++) {
    int d = active[a];
    void *dst = a == n_active - 1 ? y : (a % 2 == 0 ? buf0 : buf1);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < d; k++) outer *= cur[k];
    for (int k = d + 1; k < rank; k++) inner *= cur[k];
    if (is_float)
      pass_f32(src, dst, outer, in_dims[d], out_dims[d], inner, taps[d], ex);
    else
      pass_bytes(src, dst, esize, outer, in_dims[d], out_dims[d], inner, taps[d], extrap);
    cur[d] = out_dims[d];
    src = dst;
  }
}

static void gpass_f32(const float *src, float *dst, int64_t outer, int64_t in_d, int64_t out_d,
                      int64_t inner, const wt_resize_tap *taps) {
  memset(dst, 0, sizeof(float) * (size_t)(outer * in_d * inner));
  for (int64_t ob = 0; ob < outer; ob++) {
    for (int64_t o = 0; o < out_d; o++) {
      const wt_resize_tap *t = &taps[o];
      if (t->outside) continue;
      const float *s = src + (ob * out_d + o) * inner;
      for (int k = 0; k < t->n; k++) {
        float *d = dst + (ob * in_d + t->idx[k]) * inner;
        wt_f32x4 wk = wt_f32x4_splat(t->w[k]);
        int64_t i = 0;
        for (; i + 4 <= inner; i += 4)
          wt_f32x4_store(d + i, wt_f32x4_fma(wk, wt_f32x4_load(s + i), wt_f32x4_load(d + i)));
        for (; i < inner; i++) d[i] += t->w[k] * s[i];
      }
    }
  }
}

void wt_resize_grad_f32(const float *dy, float *dx, int rank, const int64_t *in_dims,
                        const int64_t *out_dims, const wt_resize_tap *const *taps, float *buf0,
                        float *buf1) {
  int active[16], n_active = 0;
  for (int d = 0; d < rank; d++)
    if (taps[d]) active[n_active++] = d;
  if (n_active == 0) {
    memcpy(dx, dy, sizeof(float) * (size_t)wt_resize_buffer_elems(rank, in_dims, in_dims));
    return;
  }
  int64_t cur[16];
  for (int d = 0; d < rank; d++) cur[d] = out_dims[d];
  const float *src = dy;
  for (int a = 0; a < n_active; a++) {
    int d = active[a];
    float *dst = a == n_active - 1 ? dx : (a % 2 == 0 ? buf0 : buf1);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < d; k++) outer *= cur[k];
    for (int k = d + 1; k < rank; k++) inner *= cur[k];
    gpass_f32(src, dst, outer, in_dims[d], out_dims[d], inner, taps[d]);
    cur[d] = in_dims[d];
    src = dst;
  }
}
