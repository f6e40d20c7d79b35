/* Winograd F(2x2, 3x3) convolution: see conv_winograd.h.
 *
 * Layouts (T tiles: image n, tile row ty, tile column tx at t = (n * th + ty) * tw + tx; rows of
 * Tp = T rounded up to 4 floats):
 *   V [16][channels][Tp]  input tiles transformed, B^T d B   (x for the forward and dW, dY for dX)
 *   U [16][M][C]          kernels transformed, G g G^T       (dW: the gradient dU before G^T . G)
 *   Z [16][rows][Tp]      the 16 products U V (or dY's tiles transformed, A dY A^T, for dW)
 * Position xy = 4 * i + j of the 4x4 domain. The transforms run 4 tiles (or 4 channels) per
 * vector, on the thread pool by blocks of channels: each value is computed by the same
 * operations wherever it runs.
 *
 * dX is the 3x3 "same" convolution of dY with each kernel flipped and the channel axes swapped.
 * Flipping g reverses G's columns, and G J = P G with P swapping rows 0 and 3 of G, so the flipped
 * kernel's transform is P U P^T: dX's GEMMs read U at the position with 0 and 3 swapped in both
 * axes, transposed. dW: Y_t = A^T M_t A with M_t = sum_c U_c (.) V_tc, so dL/dU = sum_t
 * (A dY_t A^T) (.) V_t and dL/dg = G^T (dL/dU) G. */
#include "backend/cpu/conv_winograd.h"

#include <string.h>

#include "base/pool.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/simd.h"

/* Fewest tiles (GEMM columns) and channels worth transforming for; widest image row (a
 * transform keeps four padded rows on the stack); most kernels (M * C). */
#ifndef WINO_MIN_TILES
#define WINO_MIN_TILES 16
#endif
#ifndef WINO_MIN_CHANNELS
#define WINO_MIN_CHANNELS 16
#endif
#define WINO_MAX_W 512
#define WINO_MAX_KERNELS ((int64_t)256 * 256)
/* Channels per block of a transform on the thread pool. */
#define WINO_BLOCK 8

typedef struct wino {
  int64_t N, H, W, th, tw, T, Tp;
} wino;

static wino wino_shape(const wt_conv_geom *g, int64_t N) {
  wino s = {N, g->img[1], g->img[2], (g->img[1] + 1) / 2, (g->img[2] + 1) / 2, 0, 0};
  s.T = N * s.th * s.tw;
  s.Tp = (s.T + 3) / 4 * 4;
  return s;
}

/* The geometry, and in WT_WINOGRAD_AUTO enough tiles and channels, and not too many kernels.
 * Measured in resnet18's step at batch 2 and 64x64: at 8 tiles (layer3) the forward and dX lose
 * (U is 16/9 of W, written and read once per 8 columns: 0.99 -> 1.15 ms natively); dW alone
 * gains a little (0.91 -> 0.87 ms), but its ConvGrad in the step went 2.04 -> 2.09-2.26 ms (U's
 * 4 MiB of writes evict what the next ops read). The kernel cap keeps the scratch (U is 16 floats
 * a kernel) near im2col's: 512 x 512 kernels would take 16 MiB of U on top of the activations. */
int wt_conv_winograd_fits(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group) {
  if (g->winograd == WT_WINOGRAD_OFF || group != 1 || N < 1) return 0;
  if (g->k[0] != 1 || g->img[0] != 1 || g->grid[0] != 1) return 0;
  for (int d = 1; d < 3; d++)
    if (g->k[d] != 3 || g->stride[d] != 1 || g->dil[d] != 1 || g->pad[d] != 1 || g->grid[d] != g->img[d])
      return 0;
  if (g->img[2] > WINO_MAX_W) return 0;
  if (g->winograd == WT_WINOGRAD_ALWAYS) return 1;
  return C >= WINO_MIN_CHANNELS && M >= WINO_MIN_CHANNELS && M * C <= WINO_MAX_KERNELS &&
         wino_shape(g, N).T >= WINO_MIN_TILES;
}

size_t wt_conv_winograd_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                               int64_t group) {
  if (!wt_conv_winograd_fits(g, N, C, M, group)) return 0;
  wino s = wino_shape(g, N);
  return (size_t)(16 * (s.Tp * (C + M) + M * C));
}

/* ---- transforms of 4 lanes ------------------------------------------------------------- */

/* v = B^T d B, d[r][j] (r, j < 4), v[4 * i + j]. */
static inline void in_transform(wt_f32x4 d[4][4], wt_f32x4 v[16]) {
  wt_f32x4 t[4][4];
  for (int j = 0; j < 4; j++) {
    t[0][j] = wt_f32x4_sub(d[0][j], d[2][j]);
    t[1][j] = wt_f32x4_add(d[1][j], d[2][j]);
    t[2][j] = wt_f32x4_sub(d[2][j], d[1][j]);
    t[3][j] = wt_f32x4_sub(d[1][j], d[3][j]);
  }
  for (int i = 0; i < 4; i++) {
    v[4 * i + 0] = wt_f32x4_sub(t[i][0], t[i][2]);
    v[4 * i + 1] = wt_f32x4_add(t[i][1], t[i][2]);
    v[4 * i + 2] = wt_f32x4_sub(t[i][2], t[i][1]);
    v[4 * i + 3] = wt_f32x4_sub(t[i][1], t[i][3]);
  }
}

/* y[i][j] (i, j < 2) = A^T z A, z[4 * i + j]. */
static inline void out_transform(const wt_f32x4 z[16], wt_f32x4 y[2][2]) {
  wt_f32x4 s[2][4];
  for (int j = 0; j < 4; j++) {
    s[0][j] = wt_f32x4_add(wt_f32x4_add(z[j], z[4 + j]), z[8 + j]);
    s[1][j] = wt_f32x4_sub(wt_f32x4_sub(z[4 + j], z[8 + j]), z[12 + j]);
  }
  for (int i = 0; i < 2; i++) {
    y[i][0] = wt_f32x4_add(wt_f32x4_add(s[i][0], s[i][1]), s[i][2]);
    y[i][1] = wt_f32x4_sub(wt_f32x4_sub(s[i][1], s[i][2]), s[i][3]);
  }
}

/* z[4 * i + j] = A e A^T, e[r][j] (r, j < 2 of the 4 x 4): dY's tile for dW. */
static inline void dy_transform(wt_f32x4 e[4][4], wt_f32x4 z[16]) {
  wt_f32x4 r[4][2];
  for (int j = 0; j < 2; j++) {
    r[0][j] = e[0][j];
    r[1][j] = wt_f32x4_add(e[0][j], e[1][j]);
    r[2][j] = wt_f32x4_sub(e[0][j], e[1][j]);
    r[3][j] = wt_f32x4_neg(e[1][j]);
  }
  for (int i = 0; i < 4; i++) {
    z[4 * i + 0] = r[i][0];
    z[4 * i + 1] = wt_f32x4_add(r[i][0], r[i][1]);
    z[4 * i + 2] = wt_f32x4_sub(r[i][0], r[i][1]);
    z[4 * i + 3] = wt_f32x4_neg(r[i][1]);
  }
}

/* u[4 * i + j] = G g G^T, g[k] (k < 9, row-major 3x3). */
static inline void w_transform(const wt_f32x4 g[9], wt_f32x4 u[16]) {
  const wt_f32x4 h = wt_f32x4_splat(0.5f);
  wt_f32x4 a[4][3];
  for (int k = 0; k < 3; k++) {
    wt_f32x4 s = wt_f32x4_add(g[k], g[6 + k]);
    a[0][k] = g[k];
    a[1][k] = wt_f32x4_mul(h, wt_f32x4_add(s, g[3 + k]));
    a[2][k] = wt_f32x4_mul(h, wt_f32x4_sub(s, g[3 + k]));
    a[3][k] = g[6 + k];
  }
  for (int i = 0; i < 4; i++) {
    wt_f32x4 s = wt_f32x4_add(a[i][0], a[i][2]);
    u[4 * i + 0] = a[i][0];
    u[4 * i + 1] = wt_f32x4_mul(h, wt_f32x4_add(s, a[i][1]));
    u[4 * i + 2] = wt_f32x4_mul(h, wt_f32x4_sub(s, a[i][1]));
    u[4 * i + 3] = a[i][2];
  }
}

/* g[k] (k < 9) = G^T u G, u[4 * i + j]: dW from dU. */
static inline void w_untransform(const wt_f32x4 u[16], wt_f32x4 g[9]) {
  const wt_f32x4 h = wt_f32x4_splat(0.5f);
  wt_f32x4 a[3][4];
  for (int j = 0; j < 4; j++) {
    wt_f32x4 s = wt_f32x4_mul(h, wt_f32x4_add(u[4 + j], u[8 + j]));
    a[0][j] = wt_f32x4_add(u[j], s);
    a[1][j] = wt_f32x4_mul(h, wt_f32x4_sub(u[4 + j], u[8 + j]));
    a[2][j] = wt_f32x4_add(s, u[12 + j]);
  }
  for (int k = 0; k < 3; k++) {
    wt_f32x4 s = wt_f32x4_mul(h, wt_f32x4_add(a[k][1], a[k][2]));
    g[3 * k + 0] = wt_f32x4_add(a[k][0], s);
    g[3 * k + 1] = wt_f32x4_mul(h, wt_f32x4_sub(a[k][1], a[k][2]));
    g[3 * k + 2] = wt_f32x4_add(s, a[k][3]);
  }
}

/* Stores the first n lanes of v at p (n = 4: one vector store). */
static inline void store_lanes(float *p, wt_f32x4 v, int64_t n) {
  if (n == 4) {
    wt_f32x4_store(p, v);
    return;
  }
  _Alignas(16) float t[4];
  wt_f32x4_store(t, v);
  for (int64_t q = 0; q < n; q++) p[q] = t[q];
}

/* The first n lanes from p, zeros after (n = 4: one vector load). */
static inline wt_f32x4 load_lanes(const float *p, int64_t n) {
  if (n == 4) return wt_f32x4_load(p);
  _Alignas(16) float t[4] = {0};
  for (int64_t q = 0; q < n; q++) t[q] = p[q];
  return wt_f32x4_load(t);
}

/* ---- per-channel passes on the pool ---------------------------------------------------- */

typedef struct wino_pass {
  wino s;
  int64_t chans;      /* channels of the pass (its blocks) */
  int64_t C, M;       /* the convolution's (weight passes) */
  const float *src;   /* image [N, chans, H, W], or the weight / dU */
  float *dst;         /* V, Z or U (rows of Tp floats), or the image / dW */
  const float *bias;  /* output pass */
  int dy;             /* dW's transforms: dY's 2x2 tiles (tile pass), dU to dW (kernel pass) */
} wino_pass;

/* The nrows image rows from yy0 of channel plane `plane` (zero rows outside the image) into
 * rows (rw floats apart), each after `lead` zero columns (1: the pad at x = -1) and zeros after
 * its W values. */
static void padded_rows(const wino *s, const float *plane, int64_t yy0, int nrows, int lead,
                        float *rows, int64_t rw) {
  for (int r = 0; r < nrows; r++) {
    float *row = rows + r * rw;
    int64_t yy = yy0 + r;
    memset(row, 0, sizeof(float) * (size_t)rw);
    if (yy >= 0 && yy < s->H) memcpy(row + lead, plane + yy * s->W, sizeof(float) * (size_t)s->W);
  }
}

/* Columns j < ncols (4, or 2 for dY) of nt <= 4 tiles side by side from q (tile k's column j at
 * q[2k + j]) as one vector per column. Four tiles: the even / odd lanes of two loads. */
static inline void tile_cols(const float *q, int64_t nt, int ncols, wt_f32x4 d[4]) {
  if (nt == 4) {
    wt_f32x4 l0 = wt_f32x4_load(q), l1 = wt_f32x4_load(q + 4);
    d[0] = wt_f32x4_even(l0, l1);
    d[1] = wt_f32x4_odd(l0, l1);
    if (ncols == 4) {
      wt_f32x4 l2 = wt_f32x4_load(q + 2), l3 = wt_f32x4_load(q + 6);
      d[2] = wt_f32x4_even(l2, l3);
      d[3] = wt_f32x4_odd(l2, l3);
    }
    return;
  }
  _Alignas(16) float t[4][4] = {{0}};
  for (int64_t k = 0; k < nt; k++)
    for (int j = 0; j < ncols; j++) t[j][k] = q[2 * k + j];
  for (int j = 0; j < ncols; j++) d[j] = wt_f32x4_load(t[j]);
}

/* Every tile of channel c of src, transformed into dst[xy][c][t]: V = B^T d B of the 4x4 window
 * (pad 1) for an input (x, or dY for dX), or A dY A^T of the 2x2 tile for dW (p->dy). */
static void tile_pass(void *ctx, int64_t blk, int32_t thread) {
  (void)thread;
  const wino_pass *p = ctx;
  const wino *s = &p->s;
  const int nrows = p->dy ? 2 : 4;
  const int64_t rw = 2 * s->tw + 8, xy_stride = p->chans * s->Tp;
  float rows[4 * (2 * (WINO_MAX_W / 2 + 1) + 8)];
  const int64_t c1 = (blk + 1) * WINO_BLOCK < p->chans ? (blk + 1) * WINO_BLOCK : p->chans;
  for (int64_t c = blk * WINO_BLOCK; c < c1; c++)
    for (int64_t n = 0; n < s->N; n++) {
      const float *plane = p->src + (n * p->chans + c) * s->H * s->W;
      for (int64_t ty = 0; ty < s->th; ty++) {
        padded_rows(s, plane, p->dy ? 2 * ty : 2 * ty - 1, nrows, !p->dy, rows, rw);
        for (int64_t tx = 0; tx < s->tw; tx += 4) {
          const int64_t nt = s->tw - tx < 4 ? s->tw - tx : 4;
          wt_f32x4 d[4][4], v[16];
          for (int r = 0; r < nrows; r++) tile_cols(rows + r * rw + 2 * tx, nt, nrows, d[r]);
          if (p->dy) dy_transform(d, v);
          else in_transform(d, v);
          float *o = p->dst + c * s->Tp + (n * s->th + ty) * s->tw + tx;
          for (int xy = 0; xy < 16; xy++) store_lanes(o + xy * xy_stride, v[xy], nt);
        }
      }
    }
}

/* Channel o of the image dst [N, chans, H, W] = A^T Z A of its tiles (+ bias[o]). */
static void out_pass(void *ctx, int64_t blk, int32_t thread) {
  (void)thread;
  const wino_pass *p = ctx;
  const wino *s = &p->s;
  const int64_t xy_stride = p->chans * s->Tp;
  const int64_t c1 = (blk + 1) * WINO_BLOCK < p->chans ? (blk + 1) * WINO_BLOCK : p->chans;
  for (int64_t c = blk * WINO_BLOCK; c < c1; c++) {
    const wt_f32x4 b = wt_f32x4_splat(p->bias ? p->bias[c] : 0.0f);
    for (int64_t n = 0; n < s->N; n++) {
      float *plane = p->dst + (n * p->chans + c) * s->H * s->W;
      for (int64_t ty = 0; ty < s->th; ty++)
        for (int64_t tx = 0; tx < s->tw; tx += 4) {
          const int64_t nt = s->tw - tx < 4 ? s->tw - tx : 4;
          const float *zp = p->src + c * s->Tp + (n * s->th + ty) * s->tw + tx;
          wt_f32x4 z[16], y[2][2];
          for (int xy = 0; xy < 16; xy++) z[xy] = load_lanes(zp + xy * xy_stride, nt);
          out_transform(z, y);
          for (int i = 0; i < 2; i++) {
            const int64_t yy = 2 * ty + i;
            if (yy >= s->H) break;
            float *row = plane + yy * s->W + 2 * tx;
            wt_f32x4 lo = wt_f32x4_add(wt_f32x4_zip_lo(y[i][0], y[i][1]), b);
            wt_f32x4 hi = wt_f32x4_add(wt_f32x4_zip_hi(y[i][0], y[i][1]), b);
            const int64_t cols = s->W - 2 * tx < 2 * nt ? s->W - 2 * tx : 2 * nt;
            if (cols == 8) {
              wt_f32x4_store(row, lo);
              wt_f32x4_store(row + 4, hi);
            } else {
              _Alignas(16) float t[8];
              wt_f32x4_store(t, lo);
              wt_f32x4_store(t + 4, hi);
              for (int64_t k = 0; k < cols; k++) row[k] = t[k];
            }
          }
        }
    }
  }
}

/* The kernels of output channels m, 4 input channels a step: U[xy][m][c] = G g G^T of the
 * weight (the forward and dX), or with p->dy the weight gradient dW[m][c] = G^T dU G of dU. */
static void kernel_pass(void *ctx, int64_t blk, int32_t thread) {
  (void)thread;
  const wino_pass *p = ctx;
  const int64_t C = p->C, MC = p->M * C;
  const int64_t m1 = (blk + 1) * WINO_BLOCK < p->M ? (blk + 1) * WINO_BLOCK : p->M;
  for (int64_t m = blk * WINO_BLOCK; m < m1; m++)
    for (int64_t c = 0; c < C; c += 4) {
      const int64_t nc = C - c < 4 ? C - c : 4, k9 = (m * C + c) * 9, at = m * C + c;
      _Alignas(16) float t[9][4] = {{0}}; /* the 3x3 kernels of 4 channels, one vector per tap */
      wt_f32x4 g[9], u[16];
      if (!p->dy) {
        for (int64_t q = 0; q < nc; q++)
          for (int k = 0; k < 9; k++) t[k][q] = p->src[k9 + 9 * q + k];
        for (int k = 0; k < 9; k++) g[k] = wt_f32x4_load(t[k]);
        w_transform(g, u);
        for (int xy = 0; xy < 16; xy++) store_lanes(p->dst + xy * MC + at, u[xy], nc);
        continue;
      }
      for (int xy = 0; xy < 16; xy++) u[xy] = load_lanes(p->src + xy * MC + at, nc);
      w_untransform(u, g);
      for (int k = 0; k < 9; k++) wt_f32x4_store(t[k], g[k]);
      for (int64_t q = 0; q < nc; q++)
        for (int k = 0; k < 9; k++) p->dst[k9 + 9 * q + k] = t[k][q];
    }
}

static void run_pass(wt_block_fn fn, wino_pass *p, int64_t chans) {
  wt_parallel_for((chans + WINO_BLOCK - 1) / WINO_BLOCK, fn, p);
}

/* ---- the 16 products --------------------------------------------------------------------- */

typedef struct wino_gemm {
  int64_t a, b, c; /* elements between positions of A, B, C */
  int swap03;      /* A at the position with 0 and 3 swapped in both axes (dX's flipped kernels) */
} wino_gemm;

static void wino_offsets(const void *ctx, int64_t t, int64_t off[3]) {
  const wino_gemm *w = ctx;
  int64_t ta = t;
  if (w->swap03) {
    static const int8_t sw[4] = {3, 1, 2, 0};
    ta = 4 * sw[t / 4] + sw[t % 4];
  }
  off[0] = ta * w->a;
  off[1] = t * w->b;
  off[2] = t * w->c;
}

/* out [N, outc, H, W] = the 3x3 "same" convolution of in [N, inc, H, W] through the transform of
 * w: the forward (in = x, out = y + bias) or dX (in = dY, out = dX, U read transposed at the
 * swapped positions). The input's tiles go to V for the forward (C rows) and to Z for dX (M
 * rows); the products to the other. */
static void conv_tiles(const wino *s, int64_t C, int64_t M, const float *w, const float *in,
                       const float *bias, float *out, int dx, float *scratch) {
  const int64_t inc = dx ? M : C, outc = dx ? C : M;
  float *V = scratch, *U = V + 16 * C * s->Tp, *Z = U + 16 * M * C;
  float *tiles = dx ? Z : V, *prod = dx ? V : Z;
  wino_pass wp = {*s, M, C, M, w, U, NULL, 0}, tp = {*s, inc, C, M, in, tiles, NULL, 0};
  run_pass(kernel_pass, &wp, M);
  run_pass(tile_pass, &tp, inc);
  /* prod[xy] [outc, T] = op(U[xy]) [outc, inc] tiles[xy] [inc, T] */
  wino_gemm o = {M * C, inc * s->Tp, outc * s->Tp, dx};
  wt_sgemm_batch(dx, 0, 16, outc, s->T, inc, 1.0f, U, C, tiles, s->Tp, 0.0f, prod, s->Tp, 0,
                 wino_offsets, &o);
  wino_pass op = {*s, outc, C, M, prod, out, bias, 0};
  run_pass(out_pass, &op, outc);
}

void wt_conv_winograd_forward(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                              const float *x, const float *w, const float *bias, float *y,
                              float *scratch) {
  const wino s = wino_shape(g, N);
  conv_tiles(&s, C, M, w, x, bias, y, 0, scratch);
}

void wt_conv_winograd_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                           const float *dy, const float *x, const float *w, float *dx, float *dw,
                           float *scratch) {
  const wino s = wino_shape(g, N);
  float *V = scratch, *U = V + 16 * C * s.Tp, *Z = U + 16 * M * C;
  if (dw) {
    wino_pass in = {s, C, C, M, x, V, NULL, 0}, dyp = {s, M, C, M, dy, Z, NULL, 1};
    run_pass(tile_pass, &in, C);
    run_pass(tile_pass, &dyp, M);
    /* dU[xy] [M, C] = Z[xy] [M, T] V[xy]^T [T, C] */
    wino_gemm o = {M * s.Tp, C * s.Tp, M * C, 0};
    wt_sgemm_batch(0, 1, 16, M, C, s.T, 1.0f, Z, s.Tp, V, s.Tp, 0.0f, U, C, 0, wino_offsets, &o);
    wino_pass un = {s, M, C, M, U, dw, NULL, 1};
    run_pass(kernel_pass, &un, M);
  }
  if (dx) conv_tiles(&s, C, M, w, dy, NULL, dx, 1, scratch);
}
