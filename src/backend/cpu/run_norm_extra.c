/* The CPU kernels of the norm_extra family (definitions: src/ops/norm_extra.c):
 * Instance/GroupNormalization and SimplifiedLayerNormalization with its gradient. */
#include "backend/cpu/kernel.h"
#include "backend/cpu/norm_extra.h"
#include "ops/norm_extra_params.h"
#include "ops/op.h"

static int gn_run(const wt_run_ctx *ctx) {
  const gn_params *p = ctx->params;
  wt_groupnorm_f32(ctx->in[0].data, ctx->out[0].data, p->N, p->C, p->S, p->G, ctx->in[1].data,
                   ctx->in[2].data, p->per_channel, p->eps);
  return WT_OK;
}

static int rms_run(const wt_run_ctx *ctx) {
  const rms_params *p = ctx->params;
  wt_rmsnorm_f32(ctx->in[0].data, ctx->out[0].data, p->rows, p->n, ctx->in[1].data, p->eps,
                 wt_output_wanted(ctx, 1) ? ctx->out[1].data : ctx->scratch);
  return WT_OK;
}

static int rmsg_run(const wt_run_ctx *ctx) {
  const rms_params *p = ctx->params;
  wt_rmsnorm_grad_f32(ctx->in[0].data, ctx->in[1].data, ctx->in[2].data, ctx->in[3].data, p->rows,
                      p->n, wt_output_wanted(ctx, 0) ? ctx->out[0].data : NULL,
                      wt_output_wanted(ctx, 1) ? ctx->out[1].data : NULL);
  return WT_OK;
}

static size_t rms_scratch(const wt_infer_ctx *ctx) {
  return (size_t)((const rms_params *)ctx->params)->rows * sizeof(float);
}

const wt_cpu_kernel wt_cpu_kernels_norm_extra[] = {
    {.key = {"", "InstanceNormalization"}, .run = gn_run},
    {.key = {"", "GroupNormalization"}, .run = gn_run},
    {.key = {"com.microsoft", "SimplifiedLayerNormalization"}, .run = rms_run, .scratch = rms_scratch},
    {.key = {"", "SimplifiedLayerNormalization"}, .run = rms_run, .scratch = rms_scratch},
    {.key = {"com.microsoft", "SimplifiedLayerNormalizationGrad"}, .run = rmsg_run},
    WT_CPU_KERNELS_END};
