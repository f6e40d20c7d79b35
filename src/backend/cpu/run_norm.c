/* The CPU kernels of the norm family (definitions: src/ops/norm.c): BatchNormalization and
 * LayerNormalization. */
#include <math.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/norm.h"
#include "ops/norm_params.h"
#include "ops/op.h"

static int bn_run(const wt_run_ctx *ctx) {
  const bn_params *p = ctx->params;
  const float *x = ctx->in[0].data, *scale = ctx->in[1].data, *bias = ctx->in[2].data;
  const float *mean = ctx->in[3].data, *var = ctx->in[4].data;
  float *y = ctx->out[0].data;
  if (!p->training) {
    wt_batchnorm_apply_f32(x, y, p->N, p->C, p->S, scale, bias, mean, var, p->eps);
    return WT_OK;
  }
  /* BatchNormInternal: output 3 is the batch mean, output 4 the batch 1 / sqrt(var + eps). */
  float *bm = wt_output_wanted(ctx, 3) ? ctx->out[3].data : ctx->scratch, *bv = (float *)ctx->scratch + p->C;
  wt_batchnorm_train_f32(x, y, p->N, p->C, p->S, scale, bias, mean, var, p->eps, p->momentum,
                         0, bm, bv, wt_output_wanted(ctx, 1) ? ctx->out[1].data : NULL,
                         wt_output_wanted(ctx, 2) ? ctx->out[2].data : NULL);
  if (wt_output_wanted(ctx, 4)) {
    float *inv = ctx->out[4].data;
    for (int64_t c = 0; c < p->C; c++) inv[c] = 1.0f / sqrtf(bv[c] + p->eps);
  }
  return WT_OK;
}

static int ln_run(const wt_run_ctx *ctx) {
  const ln_params *p = ctx->params;
  const float *bias = wt_has_input(ctx->in, ctx->n_in, 2) ? ctx->in[2].data : NULL;
  wt_layernorm_f32(ctx->in[0].data, ctx->out[0].data, p->rows, p->n, ctx->in[1].data, bias,
                   p->eps, wt_output_wanted(ctx, 1) ? ctx->out[1].data : NULL,
                   wt_output_wanted(ctx, 2) ? ctx->out[2].data : NULL);
  return WT_OK;
}

static size_t bn_scratch(const wt_infer_ctx *ctx) {
  const bn_params *p = ctx->params;
  return p->training ? (size_t)(2 * p->C) * sizeof(float) : 0;
}

const wt_cpu_kernel wt_cpu_kernels_norm[] = {
    {.key = {"", "BatchNormalization"}, .run = bn_run, .scratch = bn_scratch},
    {.key = {"com.microsoft", "BatchNormInternal"}, .run = bn_run, .scratch = bn_scratch},
    {.key = {"", "LayerNormalization"}, .run = ln_run},
    WT_CPU_KERNELS_END};
