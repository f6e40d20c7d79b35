/* Optimizer kernels (AdamW modes 0/1, SGD, gradient-norm clipping) and the CPU backend's
 * table of them (backend/optim.h); see optim.h. Elementwise loops use simd.h with a scalar tail that performs the same float32
 * operations in the same order, so every element gets the same result on either path. */
#include "backend/cpu/optim.h"

#include <math.h>
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/simd.h"

/* Large tensors are cut into blocks of WT_OPTIM_BLOCK elements (a multiple of the vector width,
 * so every element takes the same path as in one pass) run on the thread pool: each element's
 * update reads and writes only its own p, g, m, v, so the bits do not depend on the split.
 * Below WT_OPTIM_THREAD_MIN elements one thread is faster (measured natively, see the commit). */
#define WT_OPTIM_BLOCK 16384
#ifndef WT_OPTIM_THREAD_MIN
#define WT_OPTIM_THREAD_MIN (4 * WT_OPTIM_BLOCK)
#endif

typedef struct optim_job {
  int kind; /* 0: AdamW mode 0, 1: AdamW mode 1, 2: SGD, 3: scale, 4: accumulate */
  float *p, *m, *v;
  const float *g;
  int64_t n;
  float f[8];
  int decay;
} optim_job;

static void optim_block(void *ctx, int64_t block, int32_t thread);

static void optim_run(optim_job *j) {
  if (j->n < WT_OPTIM_THREAD_MIN && !wt_pool_split_small()) {
    optim_block(j, -1, 0);
    return;
  }
  wt_parallel_for(wt_pool_blocks(j->n, WT_OPTIM_BLOCK), optim_block, j);
}

/* Mode 0 follows torch.optim.AdamW (PyTorch 1.13, single-tensor path) operation by operation:
 *   p = p * (1 - lr*wd)
 *   m = m*b1 + (1-b1)*g
 *   v = v*b2 + ((1-b2)*g)*g
 *   p = p + (-step_size * m) / (sqrt(v) / sqrt(bc2) + eps),   step_size = lr / bc1
 * Scalars (1 - lr*wd, 1-b1, 1-b2, step_size, sqrt(bc2)) are computed in double, as PyTorch does
 * with Python floats, then rounded to float32 like PyTorch's CPU kernels do with scalars. */
static void adamw_mode0(float *p, const float *g, float *m, float *v, int64_t n, float decay,
                        float b1, float omb1, float b2, float omb2, float nstep, float bc2s,
                        float eps) {
  int64_t i = 0;
  const wt_f32x4 vdecay = wt_f32x4_splat(decay), vb1 = wt_f32x4_splat(b1),
                 vomb1 = wt_f32x4_splat(omb1), vb2 = wt_f32x4_splat(b2),
                 vomb2 = wt_f32x4_splat(omb2), vnstep = wt_f32x4_splat(nstep),
                 vbc2s = wt_f32x4_splat(bc2s), veps = wt_f32x4_splat(eps);
  for (; i + 4 <= n; i += 4) {
    wt_f32x4 P = wt_f32x4_load(p + i), G = wt_f32x4_load(g + i);
    wt_f32x4 M = wt_f32x4_load(m + i), V = wt_f32x4_load(v + i);
    P = wt_f32x4_mul(P, vdecay);
    M = wt_f32x4_add(wt_f32x4_mul(M, vb1), wt_f32x4_mul(vomb1, G));
    V = wt_f32x4_add(wt_f32x4_mul(V, vb2), wt_f32x4_mul(wt_f32x4_mul(vomb2, G), G));
    wt_f32x4 D = wt_f32x4_add(wt_f32x4_div(wt_f32x4_sqrt(V), vbc2s), veps);
    P = wt_f32x4_add(P, wt_f32x4_div(wt_f32x4_mul(vnstep, M), D));
    wt_f32x4_store(p + i, P);
    wt_f32x4_store(m + i, M);
    wt_f32x4_store(v + i, V);
  }
  for (; i < n; i++) {
    float P = p[i], G = g[i], M = m[i], V = v[i];
    P = P * decay;
    M = M * b1 + omb1 * G;
    V = V * b2 + (omb2 * G) * G;
    float D = sqrtf(V) / bc2s + eps;
    P = P + (nstep * M) / D;
    p[i] = P;
    m[i] = M;
    v[i] = V;
  }
}

/* Mode 1 follows HuggingFace's AdamW (what ONNX Runtime's generate_artifacts emits):
 *   m, v as in mode 0
 *   p = p + (-lr_c * m) / (sqrt(v) + eps),   lr_c = lr * sqrt(bc2) / bc1 (double, then float)
 *   p = p + (-lr*wd) * p                     (uncorrected lr, after the Adam update) */
static void adamw_mode1(float *p, const float *g, float *m, float *v, int64_t n, float b1,
                        float omb1, float b2, float omb2, float nlrc, float eps, float nwd,
                        int decay) {
  int64_t i = 0;
  const wt_f32x4 vb1 = wt_f32x4_splat(b1), vomb1 = wt_f32x4_splat(omb1),
                 vb2 = wt_f32x4_splat(b2), vomb2 = wt_f32x4_splat(omb2),
                 vnlrc = wt_f32x4_splat(nlrc), veps = wt_f32x4_splat(eps),
                 vnwd = wt_f32x4_splat(nwd);
  for (; i + 4 <= n; i += 4) {
    wt_f32x4 P = wt_f32x4_load(p + i), G = wt_f32x4_load(g + i);
    wt_f32x4 M = wt_f32x4_load(m + i), V = wt_f32x4_load(v + i);
    M = wt_f32x4_add(wt_f32x4_mul(M, vb1), wt_f32x4_mul(vomb1, G));
    V = wt_f32x4_add(wt_f32x4_mul(V, vb2), wt_f32x4_mul(wt_f32x4_mul(vomb2, G), G));
    wt_f32x4 D = wt_f32x4_add(wt_f32x4_sqrt(V), veps);
    P = wt_f32x4_add(P, wt_f32x4_div(wt_f32x4_mul(vnlrc, M), D));
    if (decay) P = wt_f32x4_add(P, wt_f32x4_mul(vnwd, P));
    wt_f32x4_store(p + i, P);
    wt_f32x4_store(m + i, M);
    wt_f32x4_store(v + i, V);
  }
  for (; i < n; i++) {
    float P = p[i], G = g[i], M = m[i], V = v[i];
    M = M * b1 + omb1 * G;
    V = V * b2 + (omb2 * G) * G;
    float D = sqrtf(V) + eps;
    P = P + (nlrc * M) / D;
    if (decay) P = P + nwd * P;
    p[i] = P;
    m[i] = M;
    v[i] = V;
  }
}

void wt_adamw_update_f32(float *p, const float *g, float *m, float *v, int64_t n,
                         const wt_adamw_params *hp) {
  if (n <= 0) return;
  wt_adamw_consts c;
  wt_adamw_consts_of(hp, &c);
  optim_job j = {.p = p, .g = g, .m = m, .v = v, .n = n, .kind = c.kind, .decay = c.decay};
  memcpy(j.f, c.f, sizeof c.f);
  optim_run(&j);
}

static void sgd_update(float *p, const float *g, int64_t n, float lr) {
  int64_t i = 0;
  const wt_f32x4 vlr = wt_f32x4_splat(lr);
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(p + i, wt_f32x4_sub(wt_f32x4_load(p + i),
                                       wt_f32x4_mul(vlr, wt_f32x4_load(g + i))));
  for (; i < n; i++) p[i] = p[i] - lr * g[i];
}

double wt_sum_squares_f32(const float *g, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (double)g[i] * (double)g[i];
  return s;
}

static void scale(float *g, int64_t n, float coef) {
  int64_t i = 0;
  const wt_f32x4 c = wt_f32x4_splat(coef);
  for (; i + 4 <= n; i += 4) wt_f32x4_store(g + i, wt_f32x4_mul(wt_f32x4_load(g + i), c));
  for (; i < n; i++) g[i] = g[i] * coef;
}

static void accumulate(float *buf, const float *g, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(buf + i, wt_f32x4_add(wt_f32x4_load(buf + i), wt_f32x4_load(g + i)));
  for (; i < n; i++) buf[i] += g[i];
}

static void optim_block(void *ctx, int64_t block, int32_t thread) {
  (void)thread;
  const optim_job *j = ctx;
  int64_t i0 = block < 0 ? 0 : block * WT_OPTIM_BLOCK;
  int64_t n = block < 0 || j->n - i0 < WT_OPTIM_BLOCK ? j->n - i0 : WT_OPTIM_BLOCK;
  float *p = j->p ? j->p + i0 : NULL, *m = j->m ? j->m + i0 : NULL, *v = j->v ? j->v + i0 : NULL;
  const float *g = j->g ? j->g + i0 : NULL;
  const float *f = j->f;
  switch (j->kind) {
  case 0: adamw_mode0(p, g, m, v, n, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]); break;
  case 1: adamw_mode1(p, g, m, v, n, f[0], f[1], f[2], f[3], f[4], f[5], f[6], j->decay); break;
  case 2: sgd_update(p, g, n, f[0]); break;
  case 3: scale(p, n, f[0]); break;
  default: accumulate(p, g, n); break;
  }
}

void wt_sgd_update_f32(float *p, const float *g, int64_t n, float lr) {
  optim_job j = {.kind = 2, .p = p, .g = g, .n = n, .f = {lr}};
  optim_run(&j);
}

void wt_scale_f32(float *g, int64_t n, float coef) {
  optim_job j = {.kind = 3, .p = g, .n = n, .f = {coef}};
  optim_run(&j);
}

void wt_accumulate_f32(float *buf, const float *g, int64_t n) {
  optim_job j = {.kind = 4, .p = buf, .g = g, .n = n};
  optim_run(&j);
}

const wt_backend_optim wt_backend_optim_cpu = {
    .adamw_update = wt_adamw_update_f32,
    .sgd_update = wt_sgd_update_f32,
    .sum_squares = wt_sum_squares_f32,
    .scale = wt_scale_f32,
};
