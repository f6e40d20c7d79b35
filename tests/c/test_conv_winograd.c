/* The Winograd F(2x2, 3x3) path (backend/cpu/conv_winograd.c) against a direct double-precision
 * convolution and against the im2col + GEMM path it replaces, through the public kernels
 * (wt_conv_forward, wt_conv_grad): forward, dX and dW on odd and even images, tile rows that are
 * and are not a multiple of 4 tiles, channel counts that are not a multiple of 4, with and
 * without bias. The error bound is relative to the sum of |terms| of each output (what float
 * rounding of a sum can reach), at the level of im2col + GEMM's own. Also: the bits are the same
 * at 1, 2 and 4 threads (blocks split small), and which shapes the default mode takes. */
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "check.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/conv_winograd.h"
#include "webtrain.h"

static unsigned g_seed = 4242;
static float frand(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return (float)((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static float *rand_buf(int64_t n) {
  float *p = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) p[i] = frand();
  return p;
}

static wt_conv_geom geom(int64_t H, int64_t W) {
  return (wt_conv_geom){{1, H, W}, {1, H, W}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, WT_WINOGRAD_AUTO};
}

/* Direct references in double, with the sums of |terms| alongside (mag). */
static void ref_forward(int64_t N, int64_t C, int64_t M, int64_t H, int64_t W, const float *x,
                        const float *w, const float *b, double *y, double *mag) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oy = 0; oy < H; oy++)
        for (int64_t ox = 0; ox < W; ox++) {
          double s = b ? b[m] : 0.0, a = b ? fabs(b[m]) : 0.0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t ky = 0; ky < 3; ky++)
              for (int64_t kx = 0; kx < 3; kx++) {
                int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                double t = (double)x[((n * C + c) * H + iy) * W + ix] * w[((m * C + c) * 3 + ky) * 3 + kx];
                s += t;
                a += fabs(t);
              }
          y[((n * M + m) * H + oy) * W + ox] = s;
          mag[((n * M + m) * H + oy) * W + ox] = a;
        }
}

static void ref_grad(int64_t N, int64_t C, int64_t M, int64_t H, int64_t W, const float *dy,
                     const float *x, const float *w, double *dx, double *dxmag, double *dw,
                     double *dwmag) {
  memset(dx, 0, sizeof(double) * (size_t)(N * C * H * W));
  memset(dxmag, 0, sizeof(double) * (size_t)(N * C * H * W));
  memset(dw, 0, sizeof(double) * (size_t)(M * C * 9));
  memset(dwmag, 0, sizeof(double) * (size_t)(M * C * 9));
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oy = 0; oy < H; oy++)
        for (int64_t ox = 0; ox < W; ox++) {
          double g = dy[((n * M + m) * H + oy) * W + ox];
          for (int64_t c = 0; c < C; c++)
            for (int64_t ky = 0; ky < 3; ky++)
              for (int64_t kx = 0; kx < 3; kx++) {
                int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                int64_t xi = ((n * C + c) * H + iy) * W + ix, wi = ((m * C + c) * 3 + ky) * 3 + kx;
                dx[xi] += g * w[wi];
                dxmag[xi] += fabs(g * w[wi]);
                dw[wi] += g * x[xi];
                dwmag[wi] += fabs(g * x[xi]);
              }
        }
}

/* Worst |got - want| / (mag + tiny) over n values, as a multiple of float's epsilon. */
static double worst_ulps(const float *got, const double *want, const double *mag, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - want[i]) / ((mag[i] + 1e-30) * 1.1920929e-7);
    if (!(e <= worst)) worst = e; /* NaN propagates as a failure */
  }
  return worst;
}

typedef struct wcase {
  int64_t N, C, M, H, W;
  int bias;
} wcase;

/* Forward, dX and dW of one case in `mode`, into y, dx, dw. */
static void run_mode(const wcase *k, int mode, const float *x, const float *w, const float *b,
                     const float *dy, float *y, float *dx, float *dw) {
  wt_conv_geom g = geom(k->H, k->W);
  g.winograd = mode;
  size_t nf = wt_conv_scratch_floats(&g, k->N, k->C, k->M, 1, 0);
  size_t ng = wt_conv_grad_scratch_floats(&g, k->N, k->C, k->M, 1);
  float *col = malloc(sizeof(float) * ((nf > ng ? nf : ng) + 1));
  wt_conv_forward(&g, k->N, k->C, k->M, 1, x, w, b, y, col);
  wt_conv_grad(&g, k->N, k->C, k->M, 1, dy, x, w, dx, dw, NULL, col);
  free(col);
}

static int same_bits(const float *a, const float *b, int64_t n) { return memcmp(a, b, sizeof(float) * (size_t)n) == 0; }

static void test_case(const wcase *k) {
  const int64_t N = k->N, C = k->C, M = k->M, H = k->H, W = k->W;
  const int64_t nx = N * C * H * W, ny = N * M * H * W, nw = M * C * 9;
  wt_conv_geom g = geom(H, W);
  g.winograd = WT_WINOGRAD_ALWAYS;
  CHECK(wt_conv_winograd_fits(&g, N, C, M, 1));
  float *x = rand_buf(nx), *w = rand_buf(nw), *b = k->bias ? rand_buf(M) : NULL, *dy = rand_buf(ny);
  float *y = malloc(4 * (size_t)ny), *dx = malloc(4 * (size_t)nx), *dw = malloc(4 * (size_t)nw);
  float *y0 = malloc(4 * (size_t)ny), *dx0 = malloc(4 * (size_t)nx), *dw0 = malloc(4 * (size_t)nw);
  double *ry = malloc(8 * (size_t)ny), *my = malloc(8 * (size_t)ny);
  double *rdx = malloc(8 * (size_t)nx), *mdx = malloc(8 * (size_t)nx);
  double *rdw = malloc(8 * (size_t)nw), *mdw = malloc(8 * (size_t)nw);
  ref_forward(N, C, M, H, W, x, w, b, ry, my);
  ref_grad(N, C, M, H, W, dy, x, w, rdx, mdx, rdw, mdw);

  wt_set_threads(1);
  run_mode(k, WT_WINOGRAD_OFF, x, w, b, dy, y0, dx0, dw0);
  run_mode(k, WT_WINOGRAD_ALWAYS, x, w, b, dy, y, dx, dw);
  double e[6] = {worst_ulps(y, ry, my, ny),   worst_ulps(dx, rdx, mdx, nx), worst_ulps(dw, rdw, mdw, nw),
                 worst_ulps(y0, ry, my, ny), worst_ulps(dx0, rdx, mdx, nx), worst_ulps(dw0, rdw, mdw, nw)};
  /* Rounding of the transforms (a few additions each side, halvings are exact) on top of the
   * sums: a handful of epsilons relative to sum |terms|; im2col + GEMM sits at 1-2. */
  for (int i = 0; i < 6; i++)
    if (!(e[i] <= 6.0)) {
      fprintf(stderr, "N%lld C%lld M%lld %lldx%lld: %s %s off by %.2f eps of sum |terms|\n",
              (long long)N, (long long)C, (long long)M, (long long)H, (long long)W,
              i < 3 ? "winograd" : "im2col", (const char *[]){"y", "dx", "dw"}[i % 3], e[i]);
      wt_check_failures++;
    }

  /* The bits do not depend on the thread count (the blocks split even when small). */
  float *y2 = malloc(4 * (size_t)ny), *dx2 = malloc(4 * (size_t)nx), *dw2 = malloc(4 * (size_t)nw);
  wt_pool_set_split_small(1);
  for (int t = 2; t <= 4; t += 2) {
    wt_set_threads(t);
    run_mode(k, WT_WINOGRAD_ALWAYS, x, w, b, dy, y2, dx2, dw2);
    CHECK(same_bits(y, y2, ny));
    CHECK(same_bits(dx, dx2, nx));
    CHECK(same_bits(dw, dw2, nw));
  }
  wt_pool_set_split_small(0);
  wt_set_threads(1);
  printf("N%lld C%lld M%lld %lldx%lld%s: winograd y/dx/dw within %.1f/%.1f/%.1f eps of sum |terms| "
         "(im2col %.1f/%.1f/%.1f), same bits at 1, 2, 4 threads\n",
         (long long)N, (long long)C, (long long)M, (long long)H, (long long)W, k->bias ? " bias" : "",
         e[0], e[1], e[2], e[3], e[4], e[5]);
  free(x), free(w), free(b), free(dy), free(y), free(dx), free(dw), free(y0), free(dx0), free(dw0);
  free(ry), free(my), free(rdx), free(mdx), free(rdw), free(mdw), free(y2), free(dx2), free(dw2);
}

/* Which shapes the default mode sends to Winograd. */
static void test_fits(void) {
  wt_conv_geom g = geom(16, 16);
  CHECK(wt_conv_winograd_fits(&g, 2, 64, 64, 1));   /* resnet18's layer1 */
  CHECK(!wt_conv_winograd_fits(&g, 2, 64, 64, 4));  /* grouped */
  CHECK(!wt_conv_winograd_fits(&g, 2, 4, 64, 1));   /* too few channels */
  wt_conv_geom small = geom(2, 2);
  CHECK(!wt_conv_winograd_fits(&small, 2, 512, 512, 1)); /* 2 tiles: bound by U's traffic */
  CHECK(wt_conv_winograd_fits(&g, 2, 256, 256, 1));
  CHECK(!wt_conv_winograd_fits(&g, 2, 512, 512, 1));     /* U would be 16 MiB */
  wt_conv_geom s2 = geom(16, 16);
  s2.stride[1] = s2.stride[2] = 2;
  s2.grid[1] = s2.grid[2] = 8;
  CHECK(!wt_conv_winograd_fits(&s2, 2, 64, 64, 1)); /* strided */
  wt_conv_geom k5 = geom(16, 16);
  k5.k[1] = k5.k[2] = 5;
  k5.pad[1] = k5.pad[2] = 2;
  CHECK(!wt_conv_winograd_fits(&k5, 2, 64, 64, 1)); /* 5x5 */
  g.winograd = WT_WINOGRAD_OFF;
  CHECK(!wt_conv_winograd_fits(&g, 2, 64, 64, 1));
  small.winograd = s2.winograd = WT_WINOGRAD_ALWAYS;
  CHECK(wt_conv_winograd_fits(&small, 1, 1, 1, 1));
  CHECK(!wt_conv_winograd_fits(&s2, 2, 64, 64, 1));
  CHECK(wt_conv_winograd_mode("0") == WT_WINOGRAD_OFF && wt_conv_winograd_mode("2") == WT_WINOGRAD_ALWAYS);
  CHECK(wt_conv_winograd_mode(NULL) == WT_WINOGRAD_AUTO && wt_conv_winograd_mode("1") == WT_WINOGRAD_AUTO);
}

int main(void) {
  static const wcase cases[] = {
      {2, 16, 16, 16, 16, 1}, /* 8 tiles a row: the vector paths */
      {1, 18, 17, 7, 5, 0},   /* odd image, 3 tiles a row, channels not a multiple of 4 */
      {3, 5, 6, 6, 10, 1},    /* 5 tiles a row: a vector group and a tail */
      {2, 8, 8, 12, 12, 0},   /* resnet_style's golden shape */
      {1, 3, 2, 1, 1, 1},     /* one pixel */
      {2, 33, 20, 9, 17, 1},  /* 9 tiles a row, odd both ways */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) test_case(&cases[i]);
  test_fits();
  CHECK_DONE();
}
