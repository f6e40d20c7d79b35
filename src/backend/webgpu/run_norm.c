/* The norm family on the GPU: BatchNormalization / BatchNormInternal and LayerNormalization.
 * Training-mode batch norm is three dispatches: the batch statistics (bn_stats.wgsl, one
 * workgroup per channel, fixed-order tree reductions, into the step's scratch), the running
 * statistics and saved mean / inverse std outputs (bn_running.wgsl), and the normalization
 * (bn_apply.wgsl, which alone is the inference mode). Layer norm is one workgroup per row
 * (layernorm.wgsl). */
#include "backend/webgpu/kernel.h"
#include "ops/norm_params.h"

/* Uniform words of the bn_*.wgsl programs. */
enum { U_N, U_GX, U_C, U_S, U_EPS, U_MOMENTUM, U_FLAGS, U_BATCH };
/* bn_running.wgsl's outputs to write. */
enum { F_RUN_MEAN = 1, F_RUN_VAR = 2, F_SAVED_MEAN = 4, F_INV_STD = 8 };
/* layernorm.wgsl's flags. */
enum { F_LN_BIAS = 1, F_LN_MEAN = 2, F_LN_INV = 4 };

static void bn_uniform(wt_gpu_dispatch *d, int64_t count, int per, const bn_params *p, uint32_t flags) {
  wt_gpu_grid_1d(d, count, per);
  uint32_t *u = d->uniform;
  u[U_N] = (uint32_t)count;
  u[U_GX] = d->groups[0];
  u[U_C] = (uint32_t)p->C;
  u[U_S] = (uint32_t)p->S;
  wt_gpu_f32(&u[U_EPS], p->eps);
  wt_gpu_f32(&u[U_MOMENTUM], p->momentum);
  u[U_FLAGS] = flags;
  u[U_BATCH] = (uint32_t)p->N;
}

static int bn_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const bn_params *p = c->params;
  (void)cap;
  int64_t n = wt_numel(&c->in[0]);
  int r = wt_gpu_check_elems(n, "the input");
  if (r) return r;
  int8_t mean = WT_GPU_IN(3), var = WT_GPU_IN(4);
  int nd = 0;
  if (p->training) {
    /* the batch mean and (biased) variance, in scratch 0 and 1 */
    c->scratch[0] = c->scratch[1] = (uint64_t)p->C * sizeof(float);
    mean = WT_GPU_SCRATCH(0);
    var = WT_GPU_SCRATCH(1);
    d[nd] = (wt_gpu_dispatch){.program = "bn_stats", .n_bind = 3, .bind = {WT_GPU_IN(0), mean, var}};
    bn_uniform(&d[nd++], p->C, 1, p, 0);
    uint32_t want = (wt_gpu_wants(c, 1) ? F_RUN_MEAN : 0) | (wt_gpu_wants(c, 2) ? F_RUN_VAR : 0) |
                    (wt_gpu_wants(c, 3) ? F_SAVED_MEAN : 0) | (wt_gpu_wants(c, 4) ? F_INV_STD : 0);
    if (want) {
      d[nd] = (wt_gpu_dispatch){.program = "bn_running", .n_bind = 8,
                                .bind = {WT_GPU_IN(3), WT_GPU_IN(4), mean, var, wt_gpu_out_or_none(c, 1),
                                         wt_gpu_out_or_none(c, 2), wt_gpu_out_or_none(c, 3), wt_gpu_out_or_none(c, 4)}};
      bn_uniform(&d[nd++], p->C, 64, p, want);
    }
  }
  d[nd] = (wt_gpu_dispatch){.program = "bn_apply", .n_bind = 6,
                            .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_IN(2), mean, var, WT_GPU_OUT(0)}};
  bn_uniform(&d[nd++], n, WT_GPU_WG, p, 0);
  return nd;
}

static int ln_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const ln_params *p = c->params;
  (void)cap;
  int r = wt_gpu_check_elems(p->rows * p->n, "the input");
  if (r) return r;
  int bias = wt_has_input(c->in, c->n_in, 2);
  *d = (wt_gpu_dispatch){.program = "layernorm", .n_bind = 6,
                         .bind = {WT_GPU_IN(0), WT_GPU_IN(1), bias ? WT_GPU_IN(2) : WT_GPU_NONE, WT_GPU_OUT(0),
                                  wt_gpu_out_or_none(c, 1), wt_gpu_out_or_none(c, 2)}};
  wt_gpu_grid_1d(d, p->rows, 1);
  d->uniform[0] = (uint32_t)p->rows;
  d->uniform[1] = d->groups[0];
  d->uniform[2] = (uint32_t)p->n;
  wt_gpu_f32(&d->uniform[3], p->eps);
  d->uniform[4] = (bias ? F_LN_BIAS : 0) | (wt_gpu_wants(c, 1) ? F_LN_MEAN : 0) | (wt_gpu_wants(c, 2) ? F_LN_INV : 0);
  return 1;
}

const wt_gpu_kernel wt_gpu_kernels_norm[] = {
    {.key = {"", "BatchNormalization"}, .encode = bn_encode},
    {.key = {"com.microsoft", "BatchNormInternal"}, .encode = bn_encode},
    {.key = {"", "LayerNormalization"}, .encode = ln_encode},
    {.key = {0}},
};
