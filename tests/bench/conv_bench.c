/* Convolution micro-benchmark (not a ctest): ms per call of the Conv forward, its dX and its dW
 * (backend/cpu/conv*.c) on the convolutions of torchvision's resnet18 at batch 2 and 64x64 images
 * (the benchmark's torchvision row), plus a depthwise 3x3 and a grouped one, one thread.
 *   native: cc -O3 -Isrc -Iinclude tests/bench/conv_bench.c src/backend/cpu/conv.c \
 *             src/backend/cpu/conv_grad.c src/backend/cpu/conv_depthwise.c \
 *             src/backend/cpu/conv_winograd.c src/backend/cpu/gemm.c src/backend/cpu/gemm_small.c \
 *             src/backend/cpu/gemm_buffers.c src/backend/cpu/gemm_prepack.c src/backend/cpu/optim.c \
 *             src/base/pool.c src/base/half.c \
 *             -o build/conv_bench -lm -lpthread
 *   wasm:   NODE_PATH=/usr/share/nodejs emcc -O3 -msimd128 (the same sources) \
 *             -sINITIAL_MEMORY=256MB -o /tmp/conv_bench.js && node --no-experimental-fetch /tmp/conv_bench.js
 *   relaxed SIMD (FMA): add -mrelaxed-simd, then rewrite clang 14's opcodes as the build does:
 *             node scripts/wasm-relaxed.mjs /tmp/conv_bench.wasm /tmp/conv_bench.wasm, and run
 *             with node --experimental-wasm-relaxed-simd
 *   (outside the repository: its package.json makes Node read .js files there as ES modules)
 * An argument runs only the rows whose label starts with it (e.g. `layer4`).
 * Each row: the layer, its output grid and the forward / dX / dW times and GFLOP/s (2 * M * CK
 * * grid * N per product, the im2col count also for Winograd). WT_THREADS sets the pool's threads
 * (default 1 here); WT_WINOGRAD=0 / 1 / 2: 3x3 convolutions by im2col + GEMM only / where
 * Winograd wins (the default) / Winograd wherever the geometry allows (backend/cpu/conv_winograd.h). */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pool.h"
#include "webtrain.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/conv_winograd.h"

/* Natively the thread's CPU time (the machines are shared: preemption is not counted; at one
 * thread the work is all on this thread); in wasm the wall clock. */
#if defined(__EMSCRIPTEN__)
#define WT_BENCH_CLOCK CLOCK_MONOTONIC
#else
#define WT_BENCH_CLOCK CLOCK_THREAD_CPUTIME_ID
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(WT_BENCH_CLOCK, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fill(float *p, int64_t n, unsigned *seed) {
  for (int64_t i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    p[i] = (float)((*seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
}

typedef struct shape {
  const char *label;
  int64_t N, C, M, H, k, stride, pad, group;
} shape;

static double best_of(int reps, void (*fn)(void *), void *ctx) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    fn(ctx);
    double t = now() - t0;
    if (t < best) best = t;
  }
  return best * 1e3;
}

typedef struct run {
  const wt_conv_geom *g;
  const shape *s;
  float *x, *w, *y, *dy, *dx, *dw, *col;
} run;

static void fwd(void *p) {
  run *r = p;
  wt_conv_forward(r->g, r->s->N, r->s->C, r->s->M, r->s->group, r->x, r->w, NULL, r->y, r->col);
}
static void bwd_dx(void *p) {
  run *r = p;
  wt_conv_grad(r->g, r->s->N, r->s->C, r->s->M, r->s->group, r->dy, r->x, r->w, r->dx, NULL, NULL, r->col);
}
static void bwd_dw(void *p) {
  run *r = p;
  wt_conv_grad(r->g, r->s->N, r->s->C, r->s->M, r->s->group, r->dy, r->x, r->w, NULL, r->dw, NULL, r->col);
}

int main(int argc, char **argv) {
  if (!getenv("WT_THREADS")) wt_set_threads(1);
  const int winograd = wt_conv_winograd_mode(getenv("WT_WINOGRAD"));
  const char *only = argc > 1 ? argv[1] : NULL;
  static const shape shapes[] = {
      {"conv1 7x7/2", 2, 3, 64, 64, 7, 2, 3, 1},
      {"layer1 3x3", 2, 64, 64, 16, 3, 1, 1, 1},
      {"layer2 3x3/2", 2, 64, 128, 16, 3, 2, 1, 1},
      {"layer2 3x3", 2, 128, 128, 8, 3, 1, 1, 1},
      {"layer2 1x1/2", 2, 64, 128, 16, 1, 2, 0, 1},
      {"layer3 3x3/2", 2, 128, 256, 8, 3, 2, 1, 1},
      {"layer3 3x3", 2, 256, 256, 4, 3, 1, 1, 1},
      {"layer4 3x3/2", 2, 256, 512, 4, 3, 2, 1, 1},
      {"layer4 3x3", 2, 512, 512, 2, 3, 1, 1, 1},
      {"dw 3x3 c96", 2, 96, 96, 16, 3, 1, 1, 96},
      {"dw 5x5/2 c240", 2, 240, 240, 8, 5, 2, 2, 240},
      {"grp4 3x3 c64", 2, 64, 64, 16, 3, 1, 1, 4},
      /* resnet18's stride-1 3x3 convolutions at 224x224 (batch 2): what fine-tuning at full size runs */
      {"224 layer1 3x3", 2, 64, 64, 56, 3, 1, 1, 1},
      {"224 layer2 3x3", 2, 128, 128, 28, 3, 1, 1, 1},
      {"224 layer3 3x3", 2, 256, 256, 14, 3, 1, 1, 1},
      {"224 layer4 3x3", 2, 512, 512, 7, 3, 1, 1, 1},
  };
  double tot[3] = {0, 0, 0};
  printf("%-14s %5s  %9s %6s  %9s %6s  %9s %6s\n", "conv", "grid", "fwd ms", "GF/s", "dX ms", "GF/s", "dW ms", "GF/s");
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    const shape *s = &shapes[i];
    if (only && strncmp(s->label, only, strlen(only)) != 0) continue;
    int64_t O = (s->H + 2 * s->pad - s->k) / s->stride + 1;
    wt_conv_geom g = {{1, s->H, s->H}, {1, O, O}, {1, s->k, s->k}, {1, s->stride, s->stride}, {1, 1, 1}, {0, s->pad, s->pad}, winograd};
    int64_t Cg = s->C / s->group, CK = Cg * s->k * s->k;
    size_t nx = (size_t)(s->N * s->C * s->H * s->H), nw = (size_t)(s->M * CK), ny = (size_t)(s->N * s->M * O * O);
    size_t ncol = wt_conv_grad_scratch_floats(&g, s->N, s->C, s->M, s->group);
    run r = {&g, s, malloc(4 * nx), malloc(4 * nw), malloc(4 * ny), malloc(4 * ny), malloc(4 * nx), malloc(4 * nw), malloc(4 * (ncol + 1))};
    unsigned seed = 7;
    fill(r.x, (int64_t)nx, &seed);
    fill(r.w, (int64_t)nw, &seed);
    fill(r.dy, (int64_t)ny, &seed);
    double flops = 2.0 * (double)(s->M * CK * O * O * s->N);
    int reps = flops < 1e8 ? 40 : 10;
    double t[3] = {best_of(reps, fwd, &r), best_of(reps, bwd_dx, &r), best_of(reps, bwd_dw, &r)};
    printf("%-14s %2lldx%-2lld  %9.3f %6.1f  %9.3f %6.1f  %9.3f %6.1f\n", s->label, (long long)O, (long long)O,
           t[0], flops / t[0] / 1e6, t[1], flops / t[1] / 1e6, t[2], flops / t[2] / 1e6);
    for (int k = 0; k < 3; k++) tot[k] += t[k];
    free(r.x), free(r.w), free(r.y), free(r.dy), free(r.dx), free(r.dw), free(r.col);
  }
  printf("%-14s %5s  %9.3f %6s  %9.3f %6s  %9.3f\n", "sum (1 each)", "", tot[0], "", tot[1], "", tot[2]);
  return 0;
}
