/* The CPU kernels of the norm_grad family (definitions: src/ops/norm_grad.c):
 * LayerNormalizationGrad and BatchNormalizationGrad. */
#include "backend/cpu/kernel.h"
#include "backend/cpu/norm.h"
#include "ops/norm_grad_params.h"
#include "ops/op.h"

static int lng_run(const wt_run_ctx *ctx) {
  const lng_params *p = ctx->params;
  wt_layernorm_grad_f32(ctx->in[0].data, ctx->in[1].data, ctx->in[2].data, ctx->in[3].data,
                        ctx->in[4].data, p->rows, p->n,
                        wt_output_wanted(ctx, 0) ? ctx->out[0].data : NULL,
                        wt_output_wanted(ctx, 1) ? ctx->out[1].data : NULL,
                        wt_output_wanted(ctx, 2) ? ctx->out[2].data : NULL);
  return WT_OK;
}

static int bng_run(const wt_run_ctx *ctx) {
  const bng_params *p = ctx->params;
  wt_batchnorm_grad_f32(ctx->in[0].data, ctx->in[1].data, p->N, p->C, p->S, ctx->in[2].data,
                        ctx->in[3].data, ctx->in[4].data,
                        wt_output_wanted(ctx, 0) ? ctx->out[0].data : NULL,
                        wt_output_wanted(ctx, 1) ? ctx->out[1].data : NULL,
                        wt_output_wanted(ctx, 2) ? ctx->out[2].data : NULL);
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_norm_grad[] = {
    {.key = {"com.microsoft", "LayerNormalizationGrad"}, .run = lng_run},
    {.key = {"com.microsoft", "BatchNormalizationGrad"}, .run = bng_run},
    WT_CPU_KERNELS_END};
