/* Convolution kernels: im2col / col2im over 3-D-normalized geometry and the Conv /
 * ConvTranspose forward passes as one wt_sgemm per (image, group). See conv.h. */
#include "base/pool.h"
#include "backend/cpu/conv.h"

#include <string.h>

#include "backend/cpu/conv_winograd.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/simd.h"

int wt_conv_is_pointwise(const wt_conv_geom *g) {
  for (int d = 0; d < 3; d++)
    if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0 || g->img[d] != g->grid[d]) return 0;
  return 1;
}

/* Short row copies and fills inline: image rows are a few dozen floats, where a libc call
 * per row (a function call in wasm) costs as much as the copy. */
static inline void copy_row(float *restrict d, const float *restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    wt_f32x4 a = wt_f32x4_load(s + i), b = wt_f32x4_load(s + i + 4);
    wt_f32x4_store(d + i, a);
    wt_f32x4_store(d + i + 4, b);
  }
  for (; i + 4 <= n; i += 4) wt_f32x4_store(d + i, wt_f32x4_load(s + i));
  for (; i < n; i++) d[i] = s[i];
}

static inline void zero_row(float *d, int64_t n) {
  wt_f32x4 z = wt_f32x4_zero();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(d + i, z);
  for (; i < n; i++) d[i] = 0.0f;
}

void wt_im2col_ld(const wt_conv_geom *g, int64_t channels, const float *x, float *col, int64_t ld) {
  const int64_t G0 = g->grid[0], G1 = g->grid[1], G2 = g->grid[2];
  const int64_t I0 = g->img[0], I1 = g->img[1], I2 = g->img[2];
  const int64_t gsize = ld, isize = I0 * I1 * I2;
  const int64_t s2 = g->stride[2];
  float *row = col;
  for (int64_t c = 0; c < channels; c++) {
    const float *xc = x + c * isize;
    for (int64_t kd = 0; kd < g->k[0]; kd++)
      for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++, row += gsize) {
          int64_t off2 = kw * g->dil[2] - g->pad[2], lo, hi;
          wt_conv_valid_range(off2, s2, I2, G2, &lo, &hi);
          for (int64_t od = 0; od < G0; od++) {
            int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            for (int64_t oh = 0; oh < G1; oh++) {
              float *dst = row + (od * G1 + oh) * G2;
              int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (id < 0 || id >= I0 || ih < 0 || ih >= I1) {
                zero_row(dst, G2);
                continue;
              }
              /* Indexing stays relative to the row start: off2 may be negative. */
              const float *src = xc + (id * I1 + ih) * I2;
              for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0.0f;
              if (s2 == 1) {
                copy_row(dst + lo, src + (off2 + lo), hi - lo);
              } else {
                for (int64_t ow = lo; ow < hi; ow++) dst[ow] = src[off2 + ow * s2];
              }
              zero_row(dst + hi, G2 - hi);
            }
          }
        }
  }
}

void wt_im2col(const wt_conv_geom *g, int64_t channels, const float *x, float *col) {
  wt_im2col_ld(g, channels, x, col, wt_conv_grid_size(g));
}

void wt_col2im_ld(const wt_conv_geom *g, int64_t channels, const float *col, int64_t ld, float *x) {
  const int64_t G0 = g->grid[0], G1 = g->grid[1], G2 = g->grid[2];
  const int64_t I0 = g->img[0], I1 = g->img[1], I2 = g->img[2];
  const int64_t gsize = ld, isize = I0 * I1 * I2;
  const int64_t s2 = g->stride[2];
  const float *row = col;
  for (int64_t c = 0; c < channels; c++) {
    float *xc = x + c * isize;
    for (int64_t kd = 0; kd < g->k[0]; kd++)
      for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++, row += gsize) {
          int64_t off2 = kw * g->dil[2] - g->pad[2], lo, hi;
          wt_conv_valid_range(off2, s2, I2, G2, &lo, &hi);
          for (int64_t od = 0; od < G0; od++) {
            int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= I0) continue;
            for (int64_t oh = 0; oh < G1; oh++) {
              int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= I1) continue;
              const float *src = row + (od * G1 + oh) * G2;
              float *dst = xc + (id * I1 + ih) * I2;
              if (s2 == 1) {
                float *d = dst + (off2 + lo);
                const float *s = src + lo;
                int64_t n = hi - lo, i = 0;
                for (; i + 4 <= n; i += 4)
                  wt_f32x4_store(d + i, wt_f32x4_add(wt_f32x4_load(d + i), wt_f32x4_load(s + i)));
                for (; i < n; i++) d[i] += s[i];
              } else {
                for (int64_t ow = lo; ow < hi; ow++) dst[off2 + ow * s2] += src[ow];
              }
            }
          }
        }
  }
}

void wt_col2im(const wt_conv_geom *g, int64_t channels, const float *col, float *x) {
  wt_col2im_ld(g, channels, col, wt_conv_grid_size(g), x);
}

void wt_fill_rows(float *y, int64_t rows, int64_t inner, const float *v) {
  for (int64_t r = 0; r < rows; r++) {
    float *p = y + r * inner;
    float b = v ? v[r] : 0.0f;
    wt_f32x4 bv = wt_f32x4_splat(b);
    int64_t i = 0;
    for (; i + 4 <= inner; i += 4) wt_f32x4_store(p + i, bv);
    for (; i < inner; i++) p[i] = b;
  }
}

int64_t wt_conv_batch_images(const wt_conv_geom *g, int64_t N) {
  const int64_t G = wt_conv_grid_size(g);
  if (N <= 1 || G >= WT_CONV_BATCH_COLS) return 1;
  int64_t nb = WT_CONV_BATCH_COLS / G;
  return nb < N ? nb : N;
}

size_t wt_conv_item_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group) {
  const int64_t nb = wt_conv_batch_images(g, N), cols = nb * wt_conv_grid_size(g);
  if (nb > 1) /* the images' columns side by side, then the product's [Mg, cols] (Y or dY) */
    return (size_t)(((C / group) * wt_conv_kernel_size(g) + M / group) * cols);
  if (wt_conv_is_pointwise(g)) return 0;
  return (size_t)((C / group) * wt_conv_kernel_size(g) * cols);
}

size_t wt_conv_scratch_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                              int64_t group, int w_half) {
  size_t item = wt_conv_item_floats(g, N, C, M, group);
  size_t wino = w_half ? 0 : wt_conv_winograd_floats(g, N, C, M, group); /* float16 W: im2col */
  return wino > item ? wino : item;
}

void wt_conv_gather_cols(const wt_conv_geom *g, int64_t nimg, int64_t rows, const float *src,
                         int64_t img_stride, float *dst) {
  const int64_t G = wt_conv_grid_size(g), cols = nimg * G;
  for (int64_t j = 0; j < nimg; j++)
    for (int64_t r = 0; r < rows; r++) copy_row(dst + r * cols + j * G, src + j * img_stride + r * G, G);
}

/* Images n0 .. n0 + nimg of group gi, side by side: Y_g [Mg, nimg * G] = W_g * col, one GEMM,
 * then each image's columns (plus the bias) to its place in y. */
static void conv_batch_item(const wt_conv_job *j, int64_t n0, int64_t nimg, int64_t gi, float *col) {
  const wt_conv_geom *g = j->g;
  const int64_t Cg = j->C / j->group, Mg = j->M / j->group;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), CK = Cg * wt_conv_kernel_size(g);
  const int64_t cols = nimg * G;
  float *prod = col + CK * cols;
  for (int64_t i = 0; i < nimg; i++)
    wt_im2col_ld(g, Cg, j->in + ((n0 + i) * j->C + gi * Cg) * I, col + i * G, cols);
  wt_sgemm_half(j->w_half ? WT_GEMM_A_HALF : 0, 0, 0, Mg, cols, CK, 1.0f, wt_conv_w_at(j, gi * Mg * CK),
                CK, col, cols, 0.0f, prod, cols, 0);
  for (int64_t i = 0; i < nimg; i++)
    for (int64_t m = 0; m < Mg; m++) {
      float *dst = j->out + ((n0 + i) * j->M + gi * Mg + m) * G;
      const float *src = prod + m * cols + i * G;
      if (!j->bias) {
        copy_row(dst, src, G);
        continue;
      }
      /* bias + sum: the bits of the single-image path, whose GEMM adds onto the bias rows */
      wt_f32x4 bv = wt_f32x4_splat(j->bias[gi * Mg + m]);
      int64_t k = 0;
      for (; k + 4 <= G; k += 4) wt_f32x4_store(dst + k, wt_f32x4_add(wt_f32x4_load(src + k), bv));
      for (; k < G; k++) dst[k] = src[k] + j->bias[gi * Mg + m];
    }
}

/* One (image, group) of the forward pass: bias rows, im2col into col, one GEMM. */
static void conv_item(void *ctx, int64_t item, int32_t thread) {
  const wt_conv_job *j = ctx;
  const wt_conv_geom *g = j->g;
  if (j->nb > 1) {
    const int64_t b = item / j->group, n0 = b * j->nb, nimg = n0 + j->nb <= j->N ? j->nb : j->N - n0;
    conv_batch_item(j, n0, nimg, item % j->group, thread > 0 ? wt_pool_scratch_outer(thread) : j->col);
    return;
  }
  const int64_t Cg = j->C / j->group, Mg = j->M / j->group, n = item / j->group, gi = item % j->group;
  const int64_t K = wt_conv_kernel_size(g), G = wt_conv_grid_size(g), I = wt_conv_img_size(g);
  const int64_t CK = Cg * K;
  float *yg = j->out + (n * j->M + gi * Mg) * G;
  /* The bias is written first and the GEMM accumulates onto it (beta = 1). */
  if (j->bias) wt_fill_rows(yg, Mg, G, j->bias + gi * Mg);
  const float *xg = j->in + (n * j->C + gi * Cg) * I;
  const float *B = xg;
  if (!wt_conv_is_pointwise(g)) {
    float *col = thread > 0 ? wt_pool_scratch_outer(thread) : j->col;
    wt_im2col(g, Cg, xg, col);
    B = col;
  }
  wt_sgemm_half(j->w_half ? WT_GEMM_A_HALF : 0, 0, 0, Mg, G, CK, 1.0f, wt_conv_w_at(j, gi * Mg * CK),
                CK, B, G, j->bias ? 1.0f : 0.0f, yg, G, 0);
}

/* Fewest multiply-adds of a whole Conv worth running its (image, group) products on the pool
 * (when one product is too small to split itself): as the unpacked GEMM's cut-over. */
#define WT_CONV_THREAD_MIN ((int64_t)1 << 18)

int wt_conv_items_threaded(const wt_conv_geom *g, int64_t items, int64_t per_item,
                           size_t col_floats) {
  (void)g;
  /* Workers put their columns in their pool scratch; each item's bits are the same anywhere. */
  return items > 1 && per_item < ((int64_t)1 << 20) &&
         col_floats * sizeof(float) <= WT_POOL_OUTER_BYTES &&
         (items * per_item >= WT_CONV_THREAD_MIN || wt_pool_split_small());
}

void wt_conv_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                     const float *x, const float *w, const float *bias, float *y, float *col) {
  wt_conv_forward_w(g, N, C, M, group, x, w, 0, bias, y, col);
}

void wt_conv_forward_w(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                       const float *x, const void *w, int w_half, const float *bias, float *y,
                       float *col) {
  if (wt_conv_is_depthwise(C, group) && !w_half) { /* a float16 W takes the GEMM path */
    wt_conv_depthwise_forward(g, N, C, M, x, w, bias, y);
    return;
  }
  if (!w_half && wt_conv_winograd_fits(g, N, C, M, group)) {
    wt_conv_winograd_forward(g, N, C, M, x, w, bias, y, col);
    return;
  }
  const int64_t nb = wt_conv_batch_images(g, N);
  wt_conv_job j = {g, N, C, M, group, nb, x, w, bias, y, col, w_half};
  const int64_t items = (N + nb - 1) / nb * group;
  const int64_t per = nb * (M / group) * wt_conv_grid_size(g) * (C / group) * wt_conv_kernel_size(g);
  if (wt_conv_items_threaded(g, items, per, wt_conv_item_floats(g, N, C, M, group))) {
    wt_parallel_for(items, conv_item, &j);
    return;
  }
  for (int64_t i = 0; i < items; i++) conv_item(&j, i, 0); /* 0: col is the caller's */
}

size_t wt_conv_transpose_scratch_floats(const wt_conv_geom *g, int64_t M, int64_t group) {
  if (wt_conv_is_pointwise(g)) return 0;
  return (size_t)((M / group) * wt_conv_kernel_size(g) * wt_conv_grid_size(g));
}

void wt_conv_transpose_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                               int64_t group, const float *x, const float *w, const float *bias,
                               float *y, float *col) {
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = wt_conv_kernel_size(g), G = wt_conv_grid_size(g), I = wt_conv_img_size(g);
  const int64_t MK = Mg * K;
  const int pointwise = wt_conv_is_pointwise(g);
  for (int64_t n = 0; n < N; n++) {
    float *yn = y + n * M * I;
    wt_fill_rows(yn, M, I, bias);
    for (int64_t gi = 0; gi < group; gi++) {
      const float *xg = x + (n * C + gi * Cg) * G;
      const float *wg = w + gi * Cg * MK;
      float *yg = yn + gi * Mg * I;
      if (pointwise) {
        /* col would be the output block itself: accumulate straight into it. */
        wt_sgemm(1, 0, Mg, G, Cg, 1.0f, wg, MK, xg, G, 1.0f, yg, I);
      } else {
        wt_sgemm(1, 0, MK, G, Cg, 1.0f, wg, MK, xg, G, 0.0f, col, G);
        wt_col2im(g, Mg, col, yg);
      }
    }
  }
}
