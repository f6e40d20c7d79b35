/* Pooling backward kernels (see pool.h): MaxPoolGrad scatters dY through the forward's argmax
 * indices; AveragePoolGrad is the exact adjoint of wt_avgpool (same divisors), spreading each
 * window's share along a row buffer, then adding that row to the window's valid rows (SIMD).
 * Both split their (n, c) planes over the thread pool. */
#include <stdatomic.h>
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/pool.h"
#include "backend/cpu/simd.h"

/* The scatter in index order over all of dy: the plain path, and the fallback when some index
 * leaves its plane. */
static int64_t maxpool_grad_serial(int64_t n_dy, const float *dy, const int64_t *indices,
                                   int64_t n_dx, float *dx) {
  memset(dx, 0, sizeof(float) * (size_t)n_dx);
  for (int64_t i = 0; i < n_dy; i++) {
    int64_t j = indices[i];
    if (j >= 0 && j < n_dx) dx[j] += dy[i];
    else if (j != -1) return i; /* -1: a window wholly in the padding (no input) */
  }
  return -1;
}

typedef struct maxpool_grad_job {
  const float *dy;
  const int64_t *indices;
  float *dx;
  int64_t gsize, isize; /* elements per plane of dy and of dx */
  atomic_int escaped;   /* some index points outside its own plane */
} maxpool_grad_job;

/* Planes [nc0, nc0 + count): dy plane nc scatters into dx plane nc, in index order. */
static void maxpool_grad_planes(void *ctx, int64_t nc0, int64_t count) {
  maxpool_grad_job *j = ctx;
  for (int64_t nc = nc0; nc < nc0 + count; nc++) {
    const float *dy = j->dy + nc * j->gsize;
    const int64_t *ind = j->indices + nc * j->gsize;
    int64_t lo = nc * j->isize, hi = lo + j->isize;
    memset(j->dx + lo, 0, sizeof(float) * (size_t)j->isize);
    for (int64_t i = 0; i < j->gsize; i++) {
      int64_t k = ind[i];
      if (k >= lo && k < hi) j->dx[k] += dy[i];
      else if (k != -1) {
        atomic_store_explicit(&j->escaped, 1, memory_order_relaxed);
        return;
      }
    }
  }
}

/* MaxPool's indices stay in their (n, c) plane, so the planes split over the pool, each adding
 * its dy in the order the plain scatter does: the same bits. Indices from elsewhere that leave
 * their plane take the plain path (which also reports a bad one). */
int64_t wt_maxpool_grad(int64_t NC, int64_t n_dy, const float *dy, const int64_t *indices,
                        int64_t n_dx, float *dx) {
  if (NC <= 1 || n_dy % NC || n_dx % NC) return maxpool_grad_serial(n_dy, dy, indices, n_dx, dx);
  maxpool_grad_job j = {dy, indices, dx, n_dy / NC, n_dx / NC, 0};
  wt_parallel_rows(NC, j.isize, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, maxpool_grad_planes, &j);
  if (!atomic_load(&j.escaped)) return -1;
  return maxpool_grad_serial(n_dy, dy, indices, n_dx, dx);
}

typedef struct avg_grad_args {
  const wt_conv_geom *g;
  const int64_t *pad_end;
  int count_include_pad;
  const float *dy;
  float *dx;
} avg_grad_args;

/* Planes [nc0, nc1) (wt_pool_planes runs them on the thread pool). */
static void avgpool_grad_planes(void *ctx, int64_t nc0, int64_t nc1, float *tmp) {
  const avg_grad_args *a = ctx;
  const wt_conv_geom *g = a->g;
  const int64_t *pad_end = a->pad_end;
  const int count_include_pad = a->count_include_pad;
  const float *dy = a->dy;
  float *dx = a->dx;
  const int64_t G0 = g->grid[0], G1 = g->grid[1], G2 = g->grid[2];
  const int64_t I2 = g->img[2];
  const int64_t k2 = g->k[2], s2 = g->stride[2], d2 = g->dil[2], p2 = g->pad[2];
  const int64_t isize = wt_conv_img_size(g), gsize = wt_conv_grid_size(g);
  memset(dx + nc0 * isize, 0, sizeof(float) * (size_t)((nc1 - nc0) * isize));
  for (int64_t nc = nc0; nc < nc1; nc++) {
    float *xp = dx + nc * isize;
    for (int64_t od = 0; od < G0; od++)
      for (int64_t oh = 0; oh < G1; oh++) {
        wt_pool_rows r;
        wt_pool_rows_init(&r, g, od, oh);
        if (r.n == 0) continue; /* the forward wrote a constant 0 */
        int64_t rows_div = wt_avgpool_rows_div(g, pad_end, count_include_pad, od, oh, r.n);
        const float *dyr = dy + nc * gsize + (od * G1 + oh) * G2;
        memset(tmp, 0, sizeof(float) * (size_t)I2);
        for (int64_t ow = 0; ow < G2; ow++) {
          int64_t start = ow * s2 - p2;
          int64_t n = count_include_pad ? wt_pool_count_taps(start, k2, d2, -p2, I2 + pad_end[2])
                                        : wt_pool_count_taps(start, k2, d2, 0, I2);
          if (rows_div * n == 0) continue;
          float v = dyr[ow] / (float)(rows_div * n);
          for (int64_t kw = 0; kw < k2; kw++) {
            int64_t iw = start + kw * d2;
            if (iw >= 0 && iw < I2) tmp[iw] += v;
          }
        }
        for (int64_t off; wt_pool_rows_next(&r, &off);) {
          float *row = xp + off;
          int64_t i = 0;
          for (; i + 4 <= I2; i += 4)
            wt_f32x4_store(row + i, wt_f32x4_add(wt_f32x4_load(row + i), wt_f32x4_load(tmp + i)));
          for (; i < I2; i++) row[i] += tmp[i];
        }
      }
  }
}

void wt_avgpool_grad(const wt_conv_geom *g, const int64_t *pad_end, int count_include_pad,
                     int64_t NC, const float *dy, float *dx, float *tmp) {
  avg_grad_args a = {g, pad_end, count_include_pad, dy, dx};
  wt_pool_planes(NC, wt_conv_img_size(g), g->img[2], tmp, avgpool_grad_planes, &a);
}
