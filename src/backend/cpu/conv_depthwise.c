/* Depthwise convolution kernels (one input channel per group, C / group == 1: MobileNet's and
 * EfficientNet's 3x3 / 5x5 convolutions), direct: no im2col, no GEMM. As GEMMs these were one
 * output row by K = kernel taps (9 or 25), 1-7 GFLOP/s; here each output row is an axpy per
 * kernel tap over a contiguous input row (stride 1) or its even elements (stride 2).
 *
 * Every output element sums its terms in one order fixed by the shape (bias or 0, then the taps
 * in (kd, kh, kw) order; dX: the output channels of its group, then positions, then taps; dW: the
 * images, then positions, four lanes reduced in a fixed order, or for kernel rows of 5-8 taps
 * (grad_w_rows) one sequential sum per tap), and the thread pool gets whole
 * planes or channels, so the bits do not depend on the thread count (conv_depthwise.h). */
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/conv_depthwise.h"
#include "backend/cpu/simd.h"

int wt_conv_is_depthwise(int64_t C, int64_t group) { return group > 1 && C == group; }

typedef struct dw_ctx {
  const wt_conv_geom *g;
  int64_t C, M, mult;           /* mult: output channels per input channel (M / C) */
  const float *x, *w, *bias, *dy;
  float *y, *dx, *dw;
  int64_t N;
} dw_ctx;

/* Four outputs from x[off + o * s] (s = 1: one load; s = 2: the even lanes of two). */
static inline wt_f32x4 load_strided(const float *x, int64_t s) {
  return s == 1 ? wt_f32x4_load(x) : wt_f32x4_even(wt_f32x4_load(x), wt_f32x4_load(x + 4));
}

/* Forward, planes [p0, p0 + count) of (image, output channel). Each output is bias (or 0) plus
 * its in-image taps in (kd, kh, kw) order: outputs whose row taps are all inside the row go four
 * at a time with the sum in a register (stride 1 or 2), the others one at a time. */
static void forward_planes(void *ctx, int64_t p0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t KW = g->k[2], s2 = g->stride[2], d2 = g->dil[2], p2 = g->pad[2];
  const int64_t W = g->img[2], OW = g->grid[2];
  /* [vlo, vhi): outputs every kw tap of which lies in the row, with room for the vector loads */
  int64_t vlo = 0, vhi = OW;
  for (int64_t kw = 0; kw < KW; kw++) {
    int64_t lo, hi;
    wt_conv_valid_range(kw * d2 - p2, s2, W, OW, &lo, &hi);
    if (lo > vlo) vlo = lo;
    if (hi < vhi) vhi = hi;
  }
  if (s2 == 2) /* the last tap's two loads end at x[2o + (KW-1) d2 - p2 + 8] */
    while (vhi > vlo && 2 * (vhi - 4) + (KW - 1) * d2 - p2 + 8 > W) vhi--;
  if (s2 > 2 || vhi < vlo) vhi = vlo;
  for (int64_t p = p0; p < p0 + count; p++) {
    const int64_t n = p / d->M, m = p % d->M, c = m / d->mult;
    const float *xc = d->x + (n * d->C + c) * I, *wm = d->w + m * K;
    const float b = d->bias ? d->bias[m] : 0.0f;
    for (int64_t od = 0; od < g->grid[0]; od++)
      for (int64_t oh = 0; oh < g->grid[1]; oh++) {
        float *yrow = d->y + p * G + (od * g->grid[1] + oh) * OW;
        int64_t o = 0;
        for (;;) {
          const int64_t vec = o >= vlo && o + 4 <= vhi;
          wt_f32x4 acc = wt_f32x4_splat(b);
          float sacc = b;
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= g->img[0]) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= g->img[1]) continue;
              const float *xrow = xc + (id * g->img[1] + ih) * W, *wr = wm + (kd * g->k[1] + kh) * KW;
              if (vec) {
                for (int64_t kw = 0; kw < KW; kw++)
                  acc = wt_f32x4_add(acc, wt_f32x4_mul(wt_f32x4_splat(wr[kw]), load_strided(xrow + o * s2 + kw * d2 - p2, s2)));
              } else {
                for (int64_t kw = 0; kw < KW; kw++) {
                  const int64_t iw = o * s2 + kw * d2 - p2;
                  if (iw >= 0 && iw < W) sacc += wr[kw] * xrow[iw];
                }
              }
            }
          }
          if (vec) {
            wt_f32x4_store(yrow + o, acc);
            o += 4;
          } else {
            yrow[o] = sacc;
            o++;
          }
          if (o >= OW) break;
        }
      }
  }
}

/* Floats of one zero-padded input plane kept on the stack (forward_padded). */
#define DW_PAD_MAX 8192

/* Row length of the padded plane: every read of the outputs' taps, the vector loads included. */
static int64_t padded_row(const wt_conv_geom *g) {
  return g->stride[2] * g->grid[2] + (g->k[2] - 1) * g->dil[2] + 8;
}

static int padded_fits(const wt_conv_geom *g) {
  return g->stride[2] <= 2 && g->img[0] * g->img[1] * padded_row(g) <= DW_PAD_MAX &&
         g->pad[2] + g->img[2] <= padded_row(g);
}

/* Copies input plane xc into buf as padded rows (see padded_row). */
static void pad_plane(const wt_conv_geom *g, const float *xc, float *buf) {
  const int64_t L = padded_row(g), W = g->img[2], rows = g->img[0] * g->img[1];
  for (int64_t r = 0; r < rows; r++) {
    memset(buf + r * L, 0, sizeof(float) * (size_t)L);
    memcpy(buf + r * L + g->pad[2], xc + r * W, sizeof(float) * (size_t)W);
  }
}

/* Forward over planes small enough to copy: each input plane once into rows with the leading
 * and trailing pads as zeros, so every output takes the vector path (four at a time; the last
 * OW % 4 one at a time with the same terms): bias, then every kw tap of the in-image rows in
 * (kd, kh, kw) order, pad taps adding w * 0. */
static void forward_padded(void *ctx, int64_t p0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t KW = g->k[2], s2 = g->stride[2], d2 = g->dil[2];
  const int64_t OW = g->grid[2], L = padded_row(g);
  _Alignas(16) float buf[DW_PAD_MAX];
  for (int64_t p = p0; p < p0 + count; p++) {
    const int64_t n = p / d->M, m = p % d->M, c = m / d->mult;
    const float *xc = d->x + (n * d->C + c) * I, *wm = d->w + m * K;
    const float b = d->bias ? d->bias[m] : 0.0f;
    if (p == p0 || m % d->mult == 0) pad_plane(g, xc, buf); /* a new plane (its outputs are consecutive) */
    for (int64_t od = 0; od < g->grid[0]; od++)
      for (int64_t oh = 0; oh < g->grid[1]; oh++) {
        float *yrow = d->y + p * G + (od * g->grid[1] + oh) * OW;
        int64_t o = 0;
        for (; o + 4 <= OW; o += 4) {
          wt_f32x4 acc = wt_f32x4_splat(b);
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= g->img[0]) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= g->img[1]) continue;
              const float *xr = buf + (id * g->img[1] + ih) * L + o * s2, *wr = wm + (kd * g->k[1] + kh) * KW;
              for (int64_t kw = 0; kw < KW; kw++)
                acc = wt_f32x4_add(acc, wt_f32x4_mul(wt_f32x4_splat(wr[kw]), load_strided(xr + kw * d2, s2)));
            }
          }
          wt_f32x4_store(yrow + o, acc);
        }
        for (; o < OW; o++) {
          float acc = b;
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= g->img[0]) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= g->img[1]) continue;
              const float *xr = buf + (id * g->img[1] + ih) * L + o * s2, *wr = wm + (kd * g->k[1] + kh) * KW;
              for (int64_t kw = 0; kw < KW; kw++) acc += wr[kw] * xr[kw * d2];
            }
          }
          yrow[o] = acc;
        }
      }
  }
}

/* dX, planes [p0, p0 + count) of (image, input channel): each output channel of the group, in
 * order, scatters its taps (the adjoint of forward_planes' reads). */
static void grad_x_planes(void *ctx, int64_t p0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t s2 = g->stride[2];
  for (int64_t p = p0; p < p0 + count; p++) {
    const int64_t n = p / d->C, c = p % d->C;
    float *dxc = d->dx + p * I;
    memset(dxc, 0, sizeof(float) * (size_t)I);
    for (int64_t j = 0; j < d->mult; j++) {
      const int64_t m = c * d->mult + j;
      const float *dym = d->dy + (n * d->M + m) * G, *wm = d->w + m * K;
      for (int64_t od = 0; od < g->grid[0]; od++)
        for (int64_t oh = 0; oh < g->grid[1]; oh++) {
          const float *dyrow = dym + (od * g->grid[1] + oh) * g->grid[2];
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= g->img[0]) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= g->img[1]) continue;
              float *dxrow = dxc + (id * g->img[1] + ih) * g->img[2];
              for (int64_t kw = 0; kw < g->k[2]; kw++) {
                const int64_t off = kw * g->dil[2] - g->pad[2];
                const float wv = wm[(kd * g->k[1] + kh) * g->k[2] + kw];
                int64_t lo, hi;
                wt_conv_valid_range(off, s2, g->img[2], g->grid[2], &lo, &hi);
                int64_t o = lo;
                if (s2 == 1) {
                  const wt_f32x4 v = wt_f32x4_splat(wv);
                  float *q = dxrow + off;
                  for (; o + 4 <= hi; o += 4)
                    wt_f32x4_store(q + o, wt_f32x4_add(wt_f32x4_load(q + o), wt_f32x4_mul(v, wt_f32x4_load(dyrow + o))));
                }
                for (; o < hi; o++) dxrow[off + o * s2] += wv * dyrow[o];
              }
            }
          }
        }
    }
  }
}

/* dW, output channels [m0, m0 + count): per tap, the sum over images and positions of
 * dY * X, in four lanes (positions o, o + 4, ...) reduced at the end, the rest after. */
static void grad_w_channels(void *ctx, int64_t m0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t s2 = g->stride[2];
  for (int64_t m = m0; m < m0 + count; m++) {
    const int64_t c = m / d->mult;
    for (int64_t kd = 0; kd < g->k[0]; kd++)
      for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
          const int64_t off = kw * g->dil[2] - g->pad[2];
          int64_t lo, hi;
          wt_conv_valid_range(off, s2, g->img[2], g->grid[2], &lo, &hi);
          wt_f32x4 acc = wt_f32x4_zero();
          float tail = 0.0f;
          for (int64_t n = 0; n < d->N; n++) {
            const float *xc = d->x + (n * d->C + c) * I, *dym = d->dy + (n * d->M + m) * G;
            for (int64_t od = 0; od < g->grid[0]; od++) {
              const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
              if (id < 0 || id >= g->img[0]) continue;
              for (int64_t oh = 0; oh < g->grid[1]; oh++) {
                const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
                if (ih < 0 || ih >= g->img[1]) continue;
                const float *xrow = xc + (id * g->img[1] + ih) * g->img[2] + off;
                const float *dyrow = dym + (od * g->grid[1] + oh) * g->grid[2];
                int64_t o = lo;
                if (s2 == 1) {
                  for (; o + 4 <= hi; o += 4)
                    acc = wt_f32x4_add(acc, wt_f32x4_mul(wt_f32x4_load(dyrow + o), wt_f32x4_load(xrow + o)));
                } else if (s2 == 2) {
                  for (; o + 4 <= hi && off + 2 * o + 8 <= g->img[2]; o += 4) {
                    const float *p = xrow + 2 * o;
                    wt_f32x4 xe = wt_f32x4_even(wt_f32x4_load(p), wt_f32x4_load(p + 4));
                    acc = wt_f32x4_add(acc, wt_f32x4_mul(wt_f32x4_load(dyrow + o), xe));
                  }
                }
                for (; o < hi; o++) tail += dyrow[o] * xrow[o * s2];
              }
            }
          }
          d->dw[m * K + (kd * g->k[1] + kh) * g->k[2] + kw] = wt_f32x4_hsum(acc) + tail;
        }
  }
}

/* dX by gathering (stride 1 along rows, one output channel per input channel): each dY plane
 * is copied into rows of dx_row(g) floats, (KW - 1) * dil zeros first, so that every input
 * position reads its taps' outputs without bounds checks. */
static int64_t dx_row(const wt_conv_geom *g) {
  return g->img[2] + g->pad[2] + (g->k[2] - 1) * g->dil[2] + 4;
}

static int dx_padded_fits(const wt_conv_geom *g, int64_t mult) {
  const int64_t B = (g->k[2] - 1) * g->dil[2];
  return mult == 1 && g->stride[2] == 1 && B + g->grid[2] <= dx_row(g) &&
         g->grid[0] * g->grid[1] * dx_row(g) <= DW_PAD_MAX;
}

/* Output index of input position i along a dim for tap k, or -1 (not a multiple of the stride,
 * or outside the grid). */
static inline int64_t out_of(int64_t i, int64_t k, int64_t s, int64_t dil, int64_t pad, int64_t n) {
  int64_t t = i + pad - k * dil;
  if (t < 0 || t % s) return -1;
  t /= s;
  return t < n ? t : -1;
}

/* dX, planes [p0, p0 + count) of (image, channel): each input position's sum over its taps in
 * (kd, kh, kw) order, four positions at a time in a register (the last W % 4 one at a time with
 * the same terms); taps landing past the grid's row ends read the zeros. */
static void grad_x_padded(void *ctx, int64_t p0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t KW = g->k[2], d2 = g->dil[2], p2 = g->pad[2], W = g->img[2], OW = g->grid[2];
  const int64_t L = dx_row(g), B = (KW - 1) * d2, rows = g->grid[0] * g->grid[1];
  _Alignas(16) float buf[DW_PAD_MAX];
  for (int64_t p = p0; p < p0 + count; p++) { /* p = n * C + c, and m = c */
    const int64_t n = p / d->C, m = p % d->C;
    const float *dym = d->dy + (n * d->M + m) * G, *wm = d->w + m * K;
    for (int64_t r = 0; r < rows; r++) {
      memset(buf + r * L, 0, sizeof(float) * (size_t)L);
      memcpy(buf + r * L + B, dym + r * OW, sizeof(float) * (size_t)OW);
    }
    float *dxc = d->dx + p * I;
    for (int64_t id = 0; id < g->img[0]; id++)
      for (int64_t ih = 0; ih < g->img[1]; ih++) {
        float *dxrow = dxc + (id * g->img[1] + ih) * W;
        int64_t i = 0;
        for (; i + 4 <= W; i += 4) {
          wt_f32x4 acc = wt_f32x4_zero();
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t od = out_of(id, kd, g->stride[0], g->dil[0], g->pad[0], g->grid[0]);
            if (od < 0) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t oh = out_of(ih, kh, g->stride[1], g->dil[1], g->pad[1], g->grid[1]);
              if (oh < 0) continue;
              const float *dr = buf + (od * g->grid[1] + oh) * L + B + p2 + i, *wr = wm + (kd * g->k[1] + kh) * KW;
              for (int64_t kw = 0; kw < KW; kw++)
                acc = wt_f32x4_add(acc, wt_f32x4_mul(wt_f32x4_splat(wr[kw]), wt_f32x4_load(dr - kw * d2)));
            }
          }
          wt_f32x4_store(dxrow + i, acc);
        }
        for (; i < W; i++) {
          float acc = 0.0f;
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t od = out_of(id, kd, g->stride[0], g->dil[0], g->pad[0], g->grid[0]);
            if (od < 0) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t oh = out_of(ih, kh, g->stride[1], g->dil[1], g->pad[1], g->grid[1]);
              if (oh < 0) continue;
              const float *dr = buf + (od * g->grid[1] + oh) * L + B + p2 + i, *wr = wm + (kd * g->k[1] + kh) * KW;
              for (int64_t kw = 0; kw < KW; kw++) acc += wr[kw] * dr[-kw * d2];
            }
          }
          dxrow[i] = acc;
        }
      }
  }
}

/* Taps whose dW sums stay in registers / on the stack (grad_w_padded). */
#define DW_TAPS_MAX 32

/* dW over padded planes (as forward_padded): per channel, every tap's sum of dY * X in four
 * lanes (outputs o, o + 4, ... of each row, images and rows in order) plus the last OW % 4
 * outputs one at a time, reduced at the end; pad taps add dY * 0. */
static void grad_w_padded(void *ctx, int64_t m0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t KW = g->k[2], s2 = g->stride[2], d2 = g->dil[2], OW = g->grid[2], L = padded_row(g);
  _Alignas(16) float buf[DW_PAD_MAX];
  wt_f32x4 acc[DW_TAPS_MAX];
  float tail[DW_TAPS_MAX];
  for (int64_t m = m0; m < m0 + count; m++) {
    const int64_t c = m / d->mult;
    for (int64_t t = 0; t < K; t++) acc[t] = wt_f32x4_zero(), tail[t] = 0.0f;
    for (int64_t n = 0; n < d->N; n++) {
      pad_plane(g, d->x + (n * d->C + c) * I, buf);
      const float *dym = d->dy + (n * d->M + m) * G;
      for (int64_t od = 0; od < g->grid[0]; od++)
        for (int64_t oh = 0; oh < g->grid[1]; oh++) {
          const float *dyrow = dym + (od * g->grid[1] + oh) * OW;
          for (int64_t kd = 0; kd < g->k[0]; kd++) {
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= g->img[0]) continue;
            for (int64_t kh = 0; kh < g->k[1]; kh++) {
              const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= g->img[1]) continue;
              const float *xr = buf + (id * g->img[1] + ih) * L;
              wt_f32x4 *a = acc + (kd * g->k[1] + kh) * KW;
              float *tl = tail + (kd * g->k[1] + kh) * KW;
              int64_t o = 0;
              for (; o + 4 <= OW; o += 4) {
                const wt_f32x4 dv = wt_f32x4_load(dyrow + o);
                for (int64_t kw = 0; kw < KW; kw++)
                  a[kw] = wt_f32x4_add(a[kw], wt_f32x4_mul(dv, load_strided(xr + o * s2 + kw * d2, s2)));
              }
              for (; o < OW; o++)
                for (int64_t kw = 0; kw < KW; kw++) tl[kw] += dyrow[o] * xr[o * s2 + kw * d2];
            }
          }
        }
    }
    for (int64_t t = 0; t < K; t++) d->dw[m * K + t] = wt_f32x4_hsum(acc[t]) + tail[t];
  }
}

/* Kernel rows (kd, kh) whose dW sums grad_w_rows keeps on the stack. */
#define DW_KROWS_MAX 16

static int rows_fit(const wt_conv_geom *g) {
  return g->stride[2] == 1 && g->dil[2] == 1 && g->k[2] <= 8 && g->k[0] * g->k[1] <= DW_KROWS_MAX &&
         padded_fits(g);
}

/* dW with stride 1 and kernel rows of at most 8 taps without dilation along them (ConvNeXt's
 * 7x7, whose 49 taps are more than grad_w_padded keeps): over padded planes (as forward_padded),
 * the lanes of two vectors hold the kw taps of one kernel row, each output of a grid row adds
 * dY * its 8 inputs there, so every tap sums dY * X over images, rows and outputs in order, one
 * term at a time (a sequential sum: small grids, 4x4 or 2x2 at 7x7, waste no lanes); pad taps
 * add dY * 0. */
static void grad_w_rows(void *ctx, int64_t m0, int64_t count) {
  const dw_ctx *d = ctx;
  const wt_conv_geom *g = d->g;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), K = wt_conv_kernel_size(g);
  const int64_t KW = g->k[2], OW = g->grid[2], L = padded_row(g);
  _Alignas(16) float buf[DW_PAD_MAX], lanes[8];
  wt_f32x4 acc[DW_KROWS_MAX][2];
  for (int64_t m = m0; m < m0 + count; m++) {
    const int64_t c = m / d->mult;
    for (int64_t r = 0; r < g->k[0] * g->k[1]; r++) acc[r][0] = acc[r][1] = wt_f32x4_zero();
    for (int64_t n = 0; n < d->N; n++) {
      pad_plane(g, d->x + (n * d->C + c) * I, buf);
      const float *dym = d->dy + (n * d->M + m) * G;
      for (int64_t kd = 0; kd < g->k[0]; kd++)
        for (int64_t kh = 0; kh < g->k[1]; kh++) {
          wt_f32x4 a0 = acc[kd * g->k[1] + kh][0], a1 = acc[kd * g->k[1] + kh][1];
          for (int64_t od = 0; od < g->grid[0]; od++) {
            const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
            if (id < 0 || id >= g->img[0]) continue;
            for (int64_t oh = 0; oh < g->grid[1]; oh++) {
              const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
              if (ih < 0 || ih >= g->img[1]) continue;
              const float *dyrow = dym + (od * g->grid[1] + oh) * OW, *xr = buf + (id * g->img[1] + ih) * L;
              if (KW <= 4)
                for (int64_t o = 0; o < OW; o++)
                  a0 = wt_f32x4_add(a0, wt_f32x4_mul(wt_f32x4_splat(dyrow[o]), wt_f32x4_load(xr + o)));
              else
                for (int64_t o = 0; o < OW; o++) {
                  const wt_f32x4 v = wt_f32x4_splat(dyrow[o]);
                  a0 = wt_f32x4_add(a0, wt_f32x4_mul(v, wt_f32x4_load(xr + o)));
                  a1 = wt_f32x4_add(a1, wt_f32x4_mul(v, wt_f32x4_load(xr + o + 4)));
                }
            }
          }
          acc[kd * g->k[1] + kh][0] = a0;
          acc[kd * g->k[1] + kh][1] = a1;
        }
    }
    for (int64_t r = 0; r < g->k[0] * g->k[1]; r++) {
      wt_f32x4_store(lanes, acc[r][0]);
      wt_f32x4_store(lanes + 4, acc[r][1]);
      for (int64_t kw = 0; kw < KW; kw++) d->dw[m * K + r * KW + kw] = lanes[kw];
    }
  }
}

/* Planes (or channels) per pool block: about 16K output elements, at least one. */
static int64_t per_block(int64_t elems) {
  return elems >= 16384 ? 1 : 16384 / (elems > 0 ? elems : 1);
}

#define WT_DW_THREAD_MIN ((int64_t)1 << 16) /* multiply-adds worth splitting */

void wt_conv_depthwise_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                               const float *x, const float *w, const float *bias, float *y) {
  dw_ctx d = {.g = g, .C = C, .M = M, .mult = M / C, .x = x, .w = w, .bias = bias, .y = y, .N = N};
  const int64_t G = wt_conv_grid_size(g), work = N * M * G * wt_conv_kernel_size(g);
  wt_parallel_range(N * M, per_block(G), work >= WT_DW_THREAD_MIN ? 1 : N * M + 1,
                    padded_fits(g) ? forward_padded : forward_planes, &d);
}

void wt_conv_depthwise_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                            const float *dy, const float *x, const float *w, float *dx,
                            float *dw) {
  dw_ctx d = {.g = g, .C = C, .M = M, .mult = M / C, .x = x, .w = w, .dy = dy, .dx = dx, .dw = dw, .N = N};
  const int64_t G = wt_conv_grid_size(g), work = N * M * G * wt_conv_kernel_size(g);
  if (dw) {
    wt_range_fn fn = padded_fits(g) && wt_conv_kernel_size(g) <= DW_TAPS_MAX ? grad_w_padded
                     : rows_fit(g)                                           ? grad_w_rows
                                                                             : grad_w_channels;
    wt_parallel_range(M, per_block(N * G), work >= WT_DW_THREAD_MIN ? 1 : M + 1, fn, &d);
  }
  if (dx)
    wt_parallel_range(N * C, per_block(wt_conv_img_size(g)), work >= WT_DW_THREAD_MIN ? 1 : N * C + 1,
                      dx_padded_fits(g, M / C) ? grad_x_padded : grad_x_planes, &d);
}
