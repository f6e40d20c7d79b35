/* Batch / layer normalization kernels (see norm.h). Statistics are two-pass (mean, then the
 * sum of squared deviations) so a large mean does not cancel the variance; the apply loops
 * are one multiply-add per element with simd.h. */
#include "backend/cpu/norm.h"

#include <math.h>

#include "base/pool.h"
#include "backend/cpu/simd.h"

/* y[i] = x[i] * a + b */
static void affine_row(const float *x, float *y, int64_t n, float a, float b) {
  wt_f32x4 va = wt_f32x4_splat(a), vb = wt_f32x4_splat(b);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(y + i, wt_f32x4_fma(wt_f32x4_load(x + i), va, vb));
  for (; i < n; i++) y[i] = x[i] * a + b;
}

/* The batch-norm kernels work channel by channel, each channel whole on one thread in the order
 * one thread would take: channels are split over the pool (about WT_ROWS_BLOCK elements a
 * block, from WT_ROWS_THREAD_MIN in all) with the same bits at any thread count. */
typedef struct bn_job {
  const float *x, *dy;
  float *y, *dx;
  int64_t N, C, S;
  const float *scale, *bias, *mean, *var, *invstd;
  float eps;
  int unbiased;
  float *out_mean, *out_var, *dscale, *dbias;
} bn_job;

static void bn_channels(bn_job *j, wt_range_fn fn) {
  int64_t per_channel = j->N * j->S;
  wt_parallel_rows(j->C, per_channel, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, fn, j);
}

static void bn_apply_channels(void *ctx, int64_t c0, int64_t count) {
  const bn_job *j = ctx;
  int64_t N = j->N, C = j->C, S = j->S;
  for (int64_t c = c0; c < c0 + count; c++) {
    float a = j->scale[c] / sqrtf(j->var[c] + j->eps);
    float b = j->bias[c] - j->mean[c] * a;
    for (int64_t n = 0; n < N; n++)
      affine_row(j->x + (n * C + c) * S, j->y + (n * C + c) * S, S, a, b);
  }
}

void wt_batchnorm_apply_f32(const float *x, float *y, int64_t N, int64_t C, int64_t S,
                            const float *scale, const float *bias, const float *mean,
                            const float *var, float eps) {
  bn_job j = {.x = x, .y = y, .N = N, .C = C, .S = S, .scale = scale, .bias = bias, .mean = mean,
              .var = var, .eps = eps};
  bn_channels(&j, bn_apply_channels);
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

static void bn_stats_channels(void *ctx, int64_t c0, int64_t count) {
  const bn_job *j = ctx;
  int64_t N = j->N, C = j->C, S = j->S, m = N * S;
  for (int64_t c = c0; c < c0 + count; c++) {
    double s = 0;
    for (int64_t n = 0; n < N; n++) s += row_sum(j->x + (n * C + c) * S, S);
    float mu = m ? (float)(s / (double)m) : 0.0f;
    double q = 0;
    for (int64_t n = 0; n < N; n++) q += row_sqdev(j->x + (n * C + c) * S, S, mu);
    int64_t div = j->unbiased ? m - 1 : m;
    j->out_mean[c] = mu;
    j->out_var[c] = div > 0 ? (float)(q / (double)div) : 0.0f;
  }
}

void wt_batchnorm_stats_f32(const float *x, int64_t N, int64_t C, int64_t S, int unbiased,
                            float *mean, float *var) {
  bn_job j = {.x = x, .N = N, .C = C, .S = S, .unbiased = unbiased, .out_mean = mean,
              .out_var = var};
  bn_channels(&j, bn_stats_channels);
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

typedef struct ln_job {
  const float *x;
  float *y;
  int64_t n;
  const float *scale, *bias;
  float eps;
  float *mean_out, *invstd_out;
} ln_job;

static void layernorm_rows(void *ctx, int64_t r0, int64_t rows);

/* Rows are independent: large ones run on the thread pool, each row as it runs alone. */
void wt_layernorm_f32(const float *x, float *y, int64_t rows, int64_t n, const float *scale,
                      const float *bias, float eps, float *mean_out, float *invstd_out) {
  ln_job j = {x, y, n, scale, bias, eps, mean_out, invstd_out};
  wt_parallel_rows(rows, n, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, layernorm_rows, &j);
}

static void layernorm_rows(void *ctx, int64_t r0, int64_t count) {
  const ln_job *j = ctx;
  const float *x = j->x, *scale = j->scale, *bias = j->bias;
  float *y = j->y, *mean_out = j->mean_out, *invstd_out = j->invstd_out;
  const int64_t n = j->n;
  const float eps = j->eps;
  for (int64_t r = r0; r < r0 + count; r++) {
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

/* ---- backward ---------------------------------------------------------------------------- */

static void bn_grad_channels(void *ctx, int64_t c0, int64_t count) {
  const bn_job *j = ctx;
  const float *dy = j->dy, *x = j->x, *scale = j->scale;
  float *dx = j->dx, *dscale = j->dscale, *dbias = j->dbias;
  int64_t N = j->N, C = j->C, S = j->S, m = N * S;
  for (int64_t c = c0; c < c0 + count; c++) {
    float mu = j->mean[c], inv = j->invstd[c];
    double sb = 0, sx = 0; /* sum dy, sum dy * (x - mu) */
    for (int64_t n = 0; n < N; n++) {
      const float *g = dy + (n * C + c) * S, *xr = x + (n * C + c) * S;
      wt_f32x4 vm = wt_f32x4_splat(mu), a0 = wt_f32x4_zero(), a1 = wt_f32x4_zero();
      int64_t i = 0;
      for (; i + 4 <= S; i += 4) {
        wt_f32x4 vg = wt_f32x4_load(g + i);
        a0 = wt_f32x4_add(a0, vg);
        a1 = wt_f32x4_fma(vg, wt_f32x4_sub(wt_f32x4_load(xr + i), vm), a1);
      }
      float b = wt_f32x4_hsum(a0), q = wt_f32x4_hsum(a1);
      for (; i < S; i++) {
        b += g[i];
        q += g[i] * (xr[i] - mu);
      }
      sb += b;
      sx += q;
    }
    float db = (float)sb, ds = (float)(sx * inv);
    if (dbias) dbias[c] = db;
    if (dscale) dscale[c] = ds;
    if (!dx || m == 0) continue;
    /* dx = k * (m * dy - db - (x - mu) * inv * ds) = a * dy + b * x + b0 */
    float k = scale[c] * inv / (float)m;
    float a = k * (float)m, b = -k * inv * ds, b0 = -k * db - b * mu;
    wt_f32x4 va = wt_f32x4_splat(a), vb = wt_f32x4_splat(b), vb0 = wt_f32x4_splat(b0);
    for (int64_t n = 0; n < N; n++) {
      const float *g = dy + (n * C + c) * S, *xr = x + (n * C + c) * S;
      float *d = dx + (n * C + c) * S;
      int64_t i = 0;
      for (; i + 4 <= S; i += 4)
        wt_f32x4_store(d + i, wt_f32x4_add(wt_f32x4_fma(wt_f32x4_load(g + i), va, vb0),
                                           wt_f32x4_mul(wt_f32x4_load(xr + i), vb)));
      for (; i < S; i++) d[i] = g[i] * a + b0 + xr[i] * b;
    }
  }
}

void wt_batchnorm_grad_f32(const float *dy, const float *x, int64_t N, int64_t C, int64_t S,
                           const float *scale, const float *mean, const float *invstd, float *dx,
                           float *dscale, float *dbias) {
  bn_job j = {.x = x, .dy = dy, .dx = dx, .N = N, .C = C, .S = S, .scale = scale, .mean = mean,
              .invstd = invstd, .dscale = dscale, .dbias = dbias};
  bn_channels(&j, bn_grad_channels);
}

typedef struct lng_job {
  const float *dy, *x, *scale, *mean, *invstd;
  int64_t rows, n;
  float *dx, *dscale, *dbias;
  int row_sums;               /* rows also add into dscale / dbias (the one-pass form) */
} lng_job;

/* Rows [r0, r0 + count): dX of each row from its own sums a = sum g*scale, b = sum g*scale*xh;
 * with row_sums, also dscale += g * xh and dbias += g, row after row. */
static void lng_rows(void *ctx, int64_t r0, int64_t count) {
  const lng_job *j = ctx;
  const int64_t n = j->n;
  const float *scale = j->scale;
  float *dscale = j->row_sums ? j->dscale : NULL, *dbias = j->row_sums ? j->dbias : NULL;
  for (int64_t r = r0; r < r0 + count; r++) {
    const float *g = j->dy + r * n, *xr = j->x + r * n;
    float mu = j->mean[r], inv = j->invstd[r];
    wt_f32x4 vm = wt_f32x4_splat(mu), vi = wt_f32x4_splat(inv);
    wt_f32x4 sa = wt_f32x4_zero(), sb = wt_f32x4_zero();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      wt_f32x4 vg = wt_f32x4_load(g + i);
      wt_f32x4 xh = wt_f32x4_mul(wt_f32x4_sub(wt_f32x4_load(xr + i), vm), vi);
      if (dscale) wt_f32x4_store(dscale + i, wt_f32x4_fma(vg, xh, wt_f32x4_load(dscale + i)));
      if (dbias) wt_f32x4_store(dbias + i, wt_f32x4_add(vg, wt_f32x4_load(dbias + i)));
      wt_f32x4 gs = wt_f32x4_mul(vg, wt_f32x4_load(scale + i));
      sa = wt_f32x4_add(sa, gs);
      sb = wt_f32x4_fma(gs, xh, sb);
    }
    float a = wt_f32x4_hsum(sa), b = wt_f32x4_hsum(sb);
    for (; i < n; i++) {
      float xh = (xr[i] - mu) * inv;
      if (dscale) dscale[i] += g[i] * xh;
      if (dbias) dbias[i] += g[i];
      float gs = g[i] * scale[i];
      a += gs;
      b += gs * xh;
    }
    if (!j->dx) continue;
    float ma = n ? a / (float)n : 0.0f, mb = n ? b / (float)n : 0.0f;
    float *d = j->dx + r * n;
    wt_f32x4 vma = wt_f32x4_splat(ma), vmb = wt_f32x4_splat(mb);
    for (i = 0; i + 4 <= n; i += 4) {
      wt_f32x4 xh = wt_f32x4_mul(wt_f32x4_sub(wt_f32x4_load(xr + i), vm), vi);
      wt_f32x4 gs = wt_f32x4_mul(wt_f32x4_load(g + i), wt_f32x4_load(scale + i));
      wt_f32x4 v = wt_f32x4_sub(wt_f32x4_sub(gs, vma), wt_f32x4_mul(xh, vmb));
      wt_f32x4_store(d + i, wt_f32x4_mul(v, vi));
    }
    for (; i < n; i++) {
      float xh = (xr[i] - mu) * inv;
      d[i] = (g[i] * scale[i] - ma - xh * mb) * inv;
    }
  }
}

/* Columns [c0, c0 + count) of dscale / dbias (c0 a multiple of 4): each column's sums over the
 * rows in row order, with the one-pass form's operations (a vector fma for columns of whole
 * vectors, g * xh + acc for the last n % 4), so the bits are the same. */
static void lng_columns(void *ctx, int64_t c0, int64_t count) {
  const lng_job *j = ctx;
  const int64_t n = j->n, c1 = c0 + count, n4 = n & ~(int64_t)3;
  for (int64_t r = 0; r < j->rows; r++) {
    const float *g = j->dy + r * n, *xr = j->x + r * n;
    float mu = j->mean[r], inv = j->invstd[r];
    wt_f32x4 vm = wt_f32x4_splat(mu), vi = wt_f32x4_splat(inv);
    int64_t i = c0;
    for (; i + 4 <= c1 && i < n4; i += 4) {
      wt_f32x4 vg = wt_f32x4_load(g + i);
      wt_f32x4 xh = wt_f32x4_mul(wt_f32x4_sub(wt_f32x4_load(xr + i), vm), vi);
      if (j->dscale) wt_f32x4_store(j->dscale + i, wt_f32x4_fma(vg, xh, wt_f32x4_load(j->dscale + i)));
      if (j->dbias) wt_f32x4_store(j->dbias + i, wt_f32x4_add(vg, wt_f32x4_load(j->dbias + i)));
    }
    for (; i < c1; i++) {
      float xh = (xr[i] - mu) * inv;
      if (j->dscale) j->dscale[i] += g[i] * xh;
      if (j->dbias) j->dbias[i] += g[i];
    }
  }
}

/* One pass over the rows on one thread. On the pool (large inputs, more than one thread): dX by
 * blocks of rows, then dscale / dbias by blocks of columns, each column still summed over the
 * rows in order: the same bits at any thread count, for one more read of dY and X. */
void wt_layernorm_grad_f32(const float *dy, const float *x, const float *scale,
                           const float *mean, const float *invstd, int64_t rows, int64_t n,
                           float *dx, float *dscale, float *dbias) {
  if (dscale)
    for (int64_t i = 0; i < n; i++) dscale[i] = 0;
  if (dbias)
    for (int64_t i = 0; i < n; i++) dbias[i] = 0;
  lng_job j = {dy, x, scale, mean, invstd, rows, n, dx, dscale, dbias, 1};
  if ((rows * n < WT_ROWS_THREAD_MIN || wt_pool_threads() < 2) && !wt_pool_split_small()) {
    lng_rows(&j, 0, rows);
    return;
  }
  j.row_sums = 0;
  if (dx) wt_parallel_rows(rows, n, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, lng_rows, &j);
  /* columns in blocks of 64 (whole vectors), about WT_ROWS_BLOCK elements each */
  int64_t per = rows > 0 ? WT_ROWS_BLOCK / rows : 64;
  per = per < 64 ? 64 : (per + 3) & ~(int64_t)3;
  if (dscale || dbias) wt_parallel_range(n, per, 0, lng_columns, &j);
}
