/* Pooling kernels over NC[D]HW float32 tensors, geometry 3-D-normalized as in conv.h (img =
 * input spatial dims, grid = output spatial dims). Padding never contributes a value: max
 * ignores it, average divides by the in-image count, or with count_include_pad by the count of
 * window taps inside the padded extent [-pad_begin, img + pad_end). */
#ifndef WT_KERNELS_POOL_H
#define WT_KERNELS_POOL_H

#include <stdint.h>

#include "backend/cpu/conv.h"

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

/* Backward passes (backend/cpu/pool_grad.c). dx is overwritten.
 * MaxPoolGrad: dx[indices[i]] += dy[i] over n_dy elements (indices as wt_maxpool_indices
 * writes them, storage_order 0), dy and dx in NC planes (on the thread pool when each index stays
 * in its plane, as MaxPool's do; the same bits either way). Returns -1, or the position of the first index outside
 * [0, n_dx) (-1 indices, windows wholly in padding, are skipped). */
int64_t wt_maxpool_grad(int64_t NC, int64_t n_dy, const float *dy, const int64_t *indices,
                        int64_t n_dx, float *dx);
/* The adjoint of wt_avgpool (same divisors). dy [NC, grid...] -> dx [NC, img...].
 * tmp: wt_pool_scratch_floats floats. */
void wt_avgpool_grad(const wt_conv_geom *g, const int64_t *pad_end, int count_include_pad,
                     int64_t NC, const float *dy, float *dx, float *tmp);

/* y[i] = mean / max of x[i*S .. i*S + S). */
void wt_global_avgpool(int64_t NC, int64_t S, const float *x, float *y);
void wt_global_maxpool(int64_t NC, int64_t S, const float *x, float *y);

/* Runs fn over planes [nc0, nc1) of NC (each plane_elems elements), split over the thread pool
 * (each plane whole on one thread); tmp: a row buffer of tmp_floats floats, the caller's on the
 * calling thread, a worker's scratch on the others. For the pooling kernels. */
typedef void (*wt_planes_fn)(void *ctx, int64_t nc0, int64_t nc1, float *tmp);
void wt_pool_planes(int64_t NC, int64_t plane_elems, int64_t tmp_floats, float *tmp, wt_planes_fn fn,
                    void *ctx);

/* The taps k of a window (tap k at start + k*dil, k < kn) that fall inside [0, n): [*k0, *k1). */
static inline void wt_pool_taps(int64_t start, int64_t kn, int64_t dil, int64_t n, int64_t *k0,
                                int64_t *k1) {
  int64_t a = start >= 0 ? 0 : (-start + dil - 1) / dil;
  int64_t b = start > n - 1 ? 0 : (n - 1 - start) / dil + 1;
  if (b > kn) b = kn;
  *k0 = a < b ? a : b;
  *k1 = b;
}

/* The valid rows of the (od, oh) window of an image plane (rows in the padding skipped), in
 * (kd, kh) order, for every kernel that walks them:
 *   wt_pool_rows r;
 *   wt_pool_rows_init(&r, g, od, oh);            r.n: how many
 *   for (int64_t off; wt_pool_rows_next(&r, &off);)  the row starts at plane + off */
typedef struct wt_pool_rows {
  int64_t n;
  int64_t kd, kd_end, kh, kh0, kh_end;
  int64_t d_start, d_dil, h_start, h_dil, img1, img2;
} wt_pool_rows;

static inline void wt_pool_rows_init(wt_pool_rows *r, const wt_conv_geom *g, int64_t od, int64_t oh) {
  r->d_start = od * g->stride[0] - g->pad[0];
  r->h_start = oh * g->stride[1] - g->pad[1];
  r->d_dil = g->dil[0];
  r->h_dil = g->dil[1];
  r->img1 = g->img[1];
  r->img2 = g->img[2];
  wt_pool_taps(r->d_start, g->k[0], g->dil[0], g->img[0], &r->kd, &r->kd_end);
  wt_pool_taps(r->h_start, g->k[1], g->dil[1], g->img[1], &r->kh0, &r->kh_end);
  r->kh = r->kh0;
  r->n = (r->kd_end - r->kd) * (r->kh_end - r->kh0);
  if (r->n == 0) r->kd = r->kd_end;
}

static inline int wt_pool_rows_next(wt_pool_rows *r, int64_t *off) {
  if (r->kd >= r->kd_end) return 0;
  *off = ((r->d_start + r->kd * r->d_dil) * r->img1 + r->h_start + r->kh * r->h_dil) * r->img2;
  if (++r->kh == r->kh_end) {
    r->kh = r->kh0;
    r->kd++;
  }
  return 1;
}

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

/* AveragePool's divisor over axes 0 and 1 of window (od, oh), whose valid rows are nrows:
 * nrows, or with count_include_pad its taps inside the padded extent. The forward and its
 * adjoint (the gradient) divide by the same. */
static inline int64_t wt_avgpool_rows_div(const wt_conv_geom *g, const int64_t *pad_end,
                                          int count_include_pad, int64_t od, int64_t oh,
                                          int64_t nrows) {
  if (!count_include_pad) return nrows;
  int64_t sd = od * g->stride[0] - g->pad[0], sh = oh * g->stride[1] - g->pad[1];
  return wt_pool_count_taps(sd, g->k[0], g->dil[0], -g->pad[0], g->img[0] + pad_end[0]) *
         wt_pool_count_taps(sh, g->k[1], g->dil[1], -g->pad[1], g->img[1] + pad_end[1]);
}

#endif
