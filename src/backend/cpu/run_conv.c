/* The CPU kernels of the conv family (definitions: src/ops/conv.c): im2col + GEMM, Winograd and
 * direct depthwise convolutions (backend/cpu/conv*.c). */
#include "backend/cpu/conv.h"
#include "backend/cpu/kernel.h"
#include "ops/conv_params.h"
#include "ops/op.h"

static int conv_run(const wt_run_ctx *ctx) {
  const conv_params *p = ctx->params;
  const wt_tensor *X = &ctx->in[0];
  if (wt_numel(&ctx->out[0]) == 0) return WT_OK; /* empty output: nothing to compute */
  wt_conv_forward_w(&p->g, X->dims[0], p->C, p->M, p->group, X->data, ctx->in[1].data, p->w_half,
                    p->has_bias ? ctx->in[2].data : NULL, ctx->out[0].data, ctx->scratch);
  return WT_OK;
}

static int conv_transpose_run(const wt_run_ctx *ctx) {
  const conv_params *p = ctx->params;
  const wt_tensor *X = &ctx->in[0];
  const wt_tensor *Y = &ctx->out[0];
  if (wt_numel(Y) == 0) return WT_OK; /* empty output: no buffer to scatter into */
  if (wt_numel(X) == 0) {
    /* an empty input scatters nothing (and has no column buffer): Y is the bias, or zeros */
    const float *bias = p->has_bias ? ctx->in[2].data : NULL;
    int64_t nm = Y->dims[0] * Y->dims[1], inner = wt_numel(Y) / nm;
    float *y = Y->data;
    for (int64_t r = 0; r < nm; r++)
      for (int64_t i = 0; i < inner; i++) y[r * inner + i] = bias ? bias[r % Y->dims[1]] : 0.0f;
    return WT_OK;
  }
  wt_conv_transpose_forward(&p->g, X->dims[0], p->C, p->M, p->group, X->data, ctx->in[1].data,
                            p->has_bias ? ctx->in[2].data : NULL, ctx->out[0].data,
                            ctx->scratch);
  return WT_OK;
}

static float *want_out(const wt_run_ctx *ctx, int i) {
  const conv_params *p = ctx->params;
  return i < ctx->n_out && p->want[i] ? ctx->out[i].data : NULL;
}

static int conv_grad_run(const wt_run_ctx *ctx) {
  const conv_params *p = ctx->params;
  wt_conv_grad_w(&p->g, ctx->in[1].dims[0], p->C, p->M, p->group, ctx->in[0].data,
                 ctx->in[1].data, ctx->in[2].data, p->w_half, want_out(ctx, 0), want_out(ctx, 1),
                 want_out(ctx, 2), ctx->scratch);
  return WT_OK;
}

static int conv_transpose_grad_run(const wt_run_ctx *ctx) {
  const conv_params *p = ctx->params;
  wt_conv_transpose_grad(&p->g, ctx->in[1].dims[0], p->C, p->M, p->group, ctx->in[0].data,
                         ctx->in[1].data, ctx->in[2].data, want_out(ctx, 0), want_out(ctx, 1),
                         want_out(ctx, 2), ctx->scratch);
  return WT_OK;
}

/* Where 3x3 convolutions take the Winograd path is the runner's setting (ops/exec.h), recorded
 * in params here: the scratch, and so the plan, depends on it. */
static conv_params *with_winograd(const wt_infer_ctx *ctx) {
  conv_params *p = ctx->params;
  p->g.winograd = wt_exec_winograd(ctx->exec);
  return p;
}

static size_t conv_scratch(const wt_infer_ctx *ctx) {
  const conv_params *p = with_winograd(ctx);
  return sizeof(float) * wt_conv_scratch_floats(&p->g, ctx->in[0].dims[0], p->C, p->M, p->group, p->w_half);
}

static size_t conv_transpose_scratch(const wt_infer_ctx *ctx) {
  const conv_params *p = ctx->params;
  return sizeof(float) * wt_conv_transpose_scratch_floats(&p->g, p->M, p->group);
}

static size_t grad_scratch(const wt_infer_ctx *ctx, int transpose) {
  const conv_params *p = with_winograd(ctx);
  int64_t N = ctx->in[1].dims[0];
  size_t col = transpose ? wt_conv_transpose_scratch_floats(&p->g, p->M, p->group)
                         : wt_conv_scratch_floats(&p->g, N, p->C, p->M, p->group, p->w_half);
  if (p->want[1] && !transpose) col = wt_conv_grad_scratch_floats(&p->g, N, p->C, p->M, p->group);
  return p->want[0] || p->want[1] ? sizeof(float) * col : 0;
}

static size_t conv_grad_scratch(const wt_infer_ctx *ctx) { return grad_scratch(ctx, 0); }

static size_t conv_transpose_grad_scratch(const wt_infer_ctx *ctx) { return grad_scratch(ctx, 1); }

const wt_cpu_kernel wt_cpu_kernels_conv[] = {
    {.key = {"", "Conv"}, .run = conv_run, .scratch = conv_scratch, .half_inputs = 0x2},
    {.key = {"", "ConvTranspose"}, .run = conv_transpose_run, .scratch = conv_transpose_scratch},
    {.key = {"com.microsoft", "ConvGrad"}, .run = conv_grad_run, .scratch = conv_grad_scratch, .half_inputs = 0x4},
    {.key = {"com.microsoft", "ConvTransposeGrad"}, .run = conv_transpose_grad_run, .scratch = conv_transpose_grad_scratch},
    WT_CPU_KERNELS_END};
