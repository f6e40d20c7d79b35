/* Convolution kernels over NC[D]HW float32 tensors: im2col / col2im and the forward passes of
 * Conv and ConvTranspose built on them plus wt_sgemm, over the 3-D-normalized geometry of
 * ops/conv_geom.h (one loop nest serves all three ranks); depthwise Conv runs direct
 * (backend/cpu/conv_depthwise.h). */
#ifndef WT_KERNELS_CONV_H
#define WT_KERNELS_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cpu/conv_depthwise.h"
#include "ops/conv_geom.h"

/* True when the col matrix of one channel block is the image itself (1x1, stride 1, no pad). */
int wt_conv_is_pointwise(const wt_conv_geom *g);

/* col[(c*K + kidx) * grid_size + gidx] = img value or 0 outside the image.
 * x: [channels, img...]; col: [channels * kernel_size, grid_size]. */
void wt_im2col(const wt_conv_geom *g, int64_t channels, const float *x, float *col);
/* The adjoint of im2col: x[...] += col[...] for every in-image position (x is accumulated). */
void wt_col2im(const wt_conv_geom *g, int64_t channels, const float *col, float *x);
/* The same with rows of `ld` floats (>= grid_size): one image's columns among several. */
void wt_im2col_ld(const wt_conv_geom *g, int64_t channels, const float *x, float *col, int64_t ld);
void wt_col2im_ld(const wt_conv_geom *g, int64_t channels, const float *col, int64_t ld, float *x);

/* Small grids put several images side by side in one product (more GEMM columns, and the
 * weights read once for them all): Conv, its dX and its dW take wt_conv_batch_images(g, N)
 * images per GEMM, N = 1 or grids of WT_CONV_BATCH_COLS positions or more one at a time. A
 * function of the shape alone, so the bits do not depend on threads. */
#define WT_CONV_BATCH_COLS 64
int64_t wt_conv_batch_images(const wt_conv_geom *g, int64_t N);
/* Scratch of one (image block, group) product: its columns (and, batched, its [Mg, cols]). */
size_t wt_conv_item_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group);
/* dst [rows, nimg * G] = the rows of nimg images (image j at src + j * img_stride, rows of G). */
void wt_conv_gather_cols(const wt_conv_geom *g, int64_t nimg, int64_t rows, const float *src,
                         int64_t img_stride, float *dst);

/* Whether a Conv (or its dX) runs its `items` (image, group) products, per_item multiply-adds
 * each, on the thread pool: when there is enough work, one product is too small to split
 * itself, and the col_floats of im2col columns fit in a worker's outer scratch. */
int wt_conv_items_threaded(const wt_conv_geom *g, int64_t items, int64_t per_item,
                           size_t col_floats);
/* The arguments of one such product: what the forward pass reads (in = x) and writes (out = y),
 * or ConvGrad's dX (in = dY, out = dX); col is the caller's im2col scratch (thread 0's). */
typedef struct wt_conv_job {
  const wt_conv_geom *g;
  int64_t N, C, M, group, nb;   /* nb: wt_conv_batch_images */
  const float *in;
  const void *w;                /* float, or float16 when w_half (a frozen weight) */
  const float *bias;
  float *out, *col;
  int w_half;
} wt_conv_job;

/* The weight at element offset off (float or float16, as the job says). */
static inline const void *wt_conv_w_at(const wt_conv_job *j, int64_t off) {
  return j->w_half ? (const void *)((const uint16_t *)j->w + off) : (const void *)((const float *)j->w + off);
}

/* Conv forward. x [N, C, img...], w [M, C/group, k...], bias [M] or NULL, y [N, M, grid...].
 * col: scratch of wt_conv_scratch_floats(...) floats (may be NULL when that is 0); w_half: W is
 * float16 (im2col + GEMM only: no Winograd scratch). */
size_t wt_conv_scratch_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                              int64_t group, int w_half);
void wt_conv_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                     const float *x, const float *w, const float *bias, float *y, float *col);
/* The same with w float16 (w_half: a frozen weight, widened while the GEMM packs it). */
void wt_conv_forward_w(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                       const float *x, const void *w, int w_half, const float *bias, float *y,
                       float *col);

/* ConvTranspose forward. x [N, C, grid...], w [C, M/group, k...], bias [M] or NULL,
 * y [N, M, img...]. col: scratch of wt_conv_transpose_scratch_floats(...) floats. */
size_t wt_conv_transpose_scratch_floats(const wt_conv_geom *g, int64_t M, int64_t group);
void wt_conv_transpose_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                               int64_t group, const float *x, const float *w, const float *bias,
                               float *y, float *col);

/* Backward passes (backend/cpu/conv_grad.c), same layouts as the forwards; dx / dw / db may each
 * be NULL (not computed). dx, dw and db are overwritten. col: the forward's scratch size, and
 * for ConvGrad's dw wt_conv_grad_scratch_floats.
 * ConvGrad: dy [N, M, grid...] -> dx like x, dw like w [M, C/group, k...], db [M]. ConvGrad's
 * dW is a sum over images cut into wt_conv_dw_chunks(N) chunks of consecutive images (a
 * function of N alone): each chunk sums its images in order into its own partial (the first
 * into dw), on the thread pool, then dw adds the partials in chunk order. */
int64_t wt_conv_dw_chunks(int64_t N);
size_t wt_conv_grad_scratch_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                                   int64_t group);
void wt_conv_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                  const float *dy, const float *x, const float *w, float *dx, float *dw,
                  float *db, float *col);
/* The same with w float16 when w_half (a frozen weight: dX reads it, widened while packed). */
void wt_conv_grad_w(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                    const float *dy, const float *x, const void *w, int w_half, float *dx,
                    float *dw, float *db, float *col);
/* ConvTransposeGrad: dy [N, M, img...] -> dx like x [N, C, grid...], dw like w
 * [C, M/group, k...], db [M]. */
void wt_conv_transpose_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                            int64_t group, const float *dy, const float *x, const float *w,
                            float *dx, float *dw, float *db, float *col);
/* sums[m] = sum over n and s of y[n, m, s] (y [N, M, S]). */
void wt_channel_sums(const float *y, int64_t N, int64_t M, int64_t S, float *sums);

/* y[m, i] = v[m] for i < inner (v NULL: zeros), SIMD fill. */
void wt_fill_rows(float *y, int64_t rows, int64_t inner, const float *v);

#endif
