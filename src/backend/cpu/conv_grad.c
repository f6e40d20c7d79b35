/* Convolution backward kernels (see conv.h): ConvGrad and ConvTransposeGrad as one wt_sgemm per
 * (image, group) around im2col / col2im, plus the bias gradient (per-channel sums of dY).
 * Only the requested outputs are computed (NULL pointers are skipped). */
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/conv_winograd.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/optim.h"
#include "backend/cpu/simd.h"

void wt_channel_sums(const float *y, int64_t N, int64_t M, int64_t S, float *sums) {
  for (int64_t m = 0; m < M; m++) {
    double total = 0.0;
    for (int64_t n = 0; n < N; n++) {
      const float *p = y + (n * M + m) * S;
      wt_f32x4 a0 = wt_f32x4_zero(), a1 = wt_f32x4_zero();
      int64_t i = 0;
      for (; i + 8 <= S; i += 8) {
        a0 = wt_f32x4_add(a0, wt_f32x4_load(p + i));
        a1 = wt_f32x4_add(a1, wt_f32x4_load(p + i + 4));
      }
      for (; i + 4 <= S; i += 4) a0 = wt_f32x4_add(a0, wt_f32x4_load(p + i));
      float s = wt_f32x4_hsum(wt_f32x4_add(a0, a1));
      for (; i < S; i++) s += p[i];
      total += s;
    }
    sums[m] = (float)total;
  }
}

/* dX of one (image, group): col = W_g^T [CK, Mg] * dY_g [Mg, G], folded back onto the image. */
/* Batched: images n0 .. n0 + nimg of group gi side by side, col = W_g^T * dY_g [Mg, nimg * G]. */
static void conv_dx_batch(const wt_conv_job *j, int64_t n0, int64_t nimg, int64_t gi, float *col) {
  const wt_conv_geom *g = j->g;
  const int64_t Cg = j->C / j->group, Mg = j->M / j->group;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), CK = Cg * wt_conv_kernel_size(g);
  const int64_t cols = nimg * G;
  float *dyb = col + CK * cols;
  wt_conv_gather_cols(g, nimg, Mg, j->in + (n0 * j->M + gi * Mg) * G, j->M * G, dyb);
  wt_sgemm_half(j->w_half ? WT_GEMM_A_HALF : 0, 1, 0, CK, cols, Mg, 1.0f, wt_conv_w_at(j, gi * Mg * CK),
                CK, dyb, cols, 0.0f, col, cols, 0);
  for (int64_t i = 0; i < nimg; i++) {
    float *dxg = j->out + ((n0 + i) * j->C + gi * Cg) * I;
    memset(dxg, 0, sizeof(float) * (size_t)(Cg * I));
    wt_col2im_ld(g, Cg, col + i * G, cols, dxg);
  }
}

static void conv_dx_item(void *ctx, int64_t item, int32_t thread) {
  const wt_conv_job *j = ctx;
  const wt_conv_geom *g = j->g;
  if (j->nb > 1) {
    const int64_t b = item / j->group, n0 = b * j->nb, nimg = n0 + j->nb <= j->N ? j->nb : j->N - n0;
    conv_dx_batch(j, n0, nimg, item % j->group, thread > 0 ? wt_pool_scratch_outer(thread) : j->col);
    return;
  }
  const int64_t Cg = j->C / j->group, Mg = j->M / j->group, n = item / j->group, gi = item % j->group;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), CK = Cg * wt_conv_kernel_size(g);
  const float *dyg = j->in + (n * j->M + gi * Mg) * G;
  const void *wg = wt_conv_w_at(j, gi * Mg * CK);
  const int half = j->w_half ? WT_GEMM_A_HALF : 0;
  float *dxg = j->out + (n * j->C + gi * Cg) * I;
  if (wt_conv_is_pointwise(g)) {
    wt_sgemm_half(half, 1, 0, CK, G, Mg, 1.0f, wg, CK, dyg, G, 0.0f, dxg, G, 0);
  } else {
    float *col = thread > 0 ? wt_pool_scratch_outer(thread) : j->col;
    wt_sgemm_half(half, 1, 0, CK, G, Mg, 1.0f, wg, CK, dyg, G, 0.0f, col, G, 0);
    memset(dxg, 0, sizeof(float) * (size_t)(Cg * I));
    wt_col2im(g, Cg, col, dxg);
  }
}

/* Images per dW chunk: at least 4 (a batch of up to 4 is one chunk: one sum in image order),
 * at most 8 chunks (the partials' memory). */
static int64_t dw_chunk_images(int64_t N) {
  int64_t c = (N + 7) / 8;
  return c < 4 ? 4 : c;
}

int64_t wt_conv_dw_chunks(int64_t N) {
  return N <= 0 ? 0 : (N + dw_chunk_images(N) - 1) / dw_chunk_images(N);
}

size_t wt_conv_grad_scratch_floats(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                                   int64_t group) {
  int64_t chunks = wt_conv_dw_chunks(N), partial = M * (C / group) * wt_conv_kernel_size(g);
  size_t gemm = wt_conv_item_floats(g, N, C, M, group) + (size_t)((chunks > 1 ? chunks - 1 : 0) * partial);
  size_t wino = wt_conv_winograd_floats(g, N, C, M, group);
  return wino > gemm ? wino : gemm;
}

typedef struct dw_job {
  const wt_conv_geom *g;
  int64_t N, C, M, group, nb;
  const float *dy, *x;
  float *dw, *col, *partials;
} dw_job;

/* Chunk b of dW: its images in order, summed into dw (b = 0) or partial b - 1. */
static void conv_dw_chunk(void *ctx, int64_t b, int32_t thread) {
  const dw_job *j = ctx;
  const wt_conv_geom *g = j->g;
  const int64_t Cg = j->C / j->group, Mg = j->M / j->group;
  const int64_t G = wt_conv_grid_size(g), I = wt_conv_img_size(g), CK = Cg * wt_conv_kernel_size(g);
  const int64_t per = dw_chunk_images(j->N), n0 = b * per, n1 = n0 + per < j->N ? n0 + per : j->N;
  float *dst = b == 0 ? j->dw : j->partials + (b - 1) * j->M * CK;
  float *col = thread > 0 ? wt_pool_scratch_outer(thread) : j->col;
  if (j->nb > 1) {
    /* dW_g [Mg, CK] += dY_g [Mg, cols] * col^T [cols, CK], nb images' columns side by side */
    for (int64_t n = n0; n < n1; n += j->nb) {
      const int64_t nimg = n + j->nb <= n1 ? j->nb : n1 - n, cols = nimg * G;
      float *dyb = col + CK * cols;
      for (int64_t gi = 0; gi < j->group; gi++) {
        for (int64_t i = 0; i < nimg; i++)
          wt_im2col_ld(g, Cg, j->x + ((n + i) * j->C + gi * Cg) * I, col + i * G, cols);
        wt_conv_gather_cols(g, nimg, Mg, j->dy + (n * j->M + gi * Mg) * G, j->M * G, dyb);
        wt_sgemm(0, 1, Mg, CK, cols, 1.0f, dyb, cols, col, cols, n > n0 ? 1.0f : 0.0f, dst + gi * Mg * CK, CK);
      }
    }
    return;
  }
  for (int64_t n = n0; n < n1; n++)
    for (int64_t gi = 0; gi < j->group; gi++) {
      /* dW_g [Mg, CK] += dY_g [Mg, G] * col(X_g)^T */
      const float *dyg = j->dy + (n * j->M + gi * Mg) * G;
      const float *xg = j->x + (n * j->C + gi * Cg) * I;
      const float *B = xg;
      if (!wt_conv_is_pointwise(g)) {
        wt_im2col(g, Cg, xg, col);
        B = col;
      }
      wt_sgemm(0, 1, Mg, CK, G, 1.0f, dyg, G, B, G, n > n0 ? 1.0f : 0.0f, dst + gi * Mg * CK, CK);
    }
}

void wt_conv_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                  const float *dy, const float *x, const float *w, float *dx, float *dw,
                  float *db, float *col) {
  wt_conv_grad_w(g, N, C, M, group, dy, x, w, 0, dx, dw, db, col);
}

void wt_conv_grad_w(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M, int64_t group,
                    const float *dy, const float *x, const void *w, int w_half, float *dx,
                    float *dw, float *db, float *col) {
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = wt_conv_kernel_size(g), G = wt_conv_grid_size(g);
  const int64_t CK = Cg * K;
  if (db) wt_channel_sums(dy, N, M, G, db);
  if (wt_conv_is_depthwise(C, group) && !w_half) { /* a float16 W takes the GEMM path */
    wt_conv_depthwise_grad(g, N, C, M, dy, x, w, dx, dw);
    return;
  }
  if (dw && N == 0) memset(dw, 0, sizeof(float) * (size_t)(M * CK));
  if (N > 0 && wt_conv_winograd_fits(g, N, C, M, group)) {
    float *wdx = w_half ? NULL : dx; /* a float16 W: dX by im2col + GEMM below */
    if (wdx || dw) wt_conv_winograd_grad(g, N, C, M, dy, x, w, wdx, dw, col);
    if (wdx) dx = NULL;
    dw = NULL;
  }
  if (dw && N > 0) {
    const int64_t chunks = wt_conv_dw_chunks(N);
    const size_t item = wt_conv_item_floats(g, N, C, M, group);
    float *partials = chunks > 1 ? col + item : NULL;
    dw_job d = {g, N, C, M, group, wt_conv_batch_images(g, N), dy, x, dw, col, partials};
    if (wt_conv_items_threaded(g, chunks, dw_chunk_images(N) * M * G * CK, item))
      wt_parallel_for(chunks, conv_dw_chunk, &d);
    else
      for (int64_t b = 0; b < chunks; b++) conv_dw_chunk(&d, b, 0); /* 0: col is the caller's */
    for (int64_t b = 1; b < chunks; b++) wt_accumulate_f32(dw, d.partials + (b - 1) * M * CK, M * CK);
  }
  if (!dx) return;
  /* dX: independent per (image, group), so on the pool as the forward pass (conv.c). */
  const int64_t nb = wt_conv_batch_images(g, N), items = (N + nb - 1) / nb * group;
  wt_conv_job j = {g, N, C, M, group, nb, dy, w, NULL, dx, col, w_half};
  if (wt_conv_items_threaded(g, items, nb * Mg * G * CK, wt_conv_item_floats(g, N, C, M, group))) {
    wt_parallel_for(items, conv_dx_item, &j);
    return;
  }
  for (int64_t i = 0; i < items; i++) conv_dx_item(&j, i, 0); /* 0: col is the caller's */
}

void wt_conv_transpose_grad(const wt_conv_geom *g, int64_t N, int64_t C, int64_t M,
                            int64_t group, const float *dy, const float *x, const float *w,
                            float *dx, float *dw, float *db, float *col) {
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = wt_conv_kernel_size(g), G = wt_conv_grid_size(g), I = wt_conv_img_size(g);
  const int64_t MK = Mg * K;
  const int pointwise = wt_conv_is_pointwise(g);
  if (db) wt_channel_sums(dy, N, M, I, db);
  if (dw && N == 0) memset(dw, 0, sizeof(float) * (size_t)(C * MK));
  if (!dx && !dw) return;
  for (int64_t n = 0; n < N; n++)
    for (int64_t gi = 0; gi < group; gi++) {
      const float *dyg = dy + (n * M + gi * Mg) * I;
      const float *B = dyg; /* col(dY_g) [MK, G] */
      if (!pointwise) {
        wt_im2col(g, Mg, dyg, col);
        B = col;
      }
      if (dx) /* dX_g [Cg, G] = W_g [Cg, MK] * col(dY_g): a Conv of dY with W */
        wt_sgemm(0, 0, Cg, G, MK, 1.0f, w + gi * Cg * MK, MK, B, G, 0.0f,
                 dx + (n * C + gi * Cg) * G, G);
      if (dw) /* dW_g [Cg, MK] += X_g [Cg, G] * col(dY_g)^T */
        wt_sgemm(0, 1, Cg, MK, G, 1.0f, x + (n * C + gi * Cg) * G, G, B, G, n ? 1.0f : 0.0f,
                 dw + gi * Cg * MK, MK);
    }
}
