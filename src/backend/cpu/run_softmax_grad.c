/* The CPU kernels of the softmax_grad family (definitions: src/ops/softmax_grad.c): the
 * (Log)Softmax gradients and the cross-entropy loss's. */
#include <assert.h>
#include <string.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/softmax.h"
#include "ops/op.h"
#include "ops/softmax_grad_params.h"
#include "ops/softmax_layout.h"

static int smg_run(const wt_run_ctx *ctx) {
  const wt_softmax_params *p = ctx->params;
  wt_softmax_grad_f32(ctx->in[0].data, ctx->in[1].data, ctx->out[0].data, p->outer, p->n,
                      p->inner, p->log_out, ctx->scratch);
  return WT_OK;
}

static int sceg_run(const wt_run_ctx *ctx) {
  const sceg_params *p = ctx->params;
  const wt_tensor *t = &ctx->in[2];
  const float *w = wt_has_input(ctx->in, ctx->n_in, 3) ? ctx->in[3].data : NULL;
  int has_ignore = p->has_ignore;
  int64_t ignore = p->ignore_index;
  if (wt_has_input(ctx->in, ctx->n_in, 4)) {
    has_ignore = 1;
    ignore = wt_get_int(&ctx->in[4], 0);
  }
  int64_t bad = wt_softmax_xent_grad_f32(
      ctx->in[0].data, ctx->in[1].data, p->N, p->C, p->D, t->dtype == WT_INT32 ? t->data : NULL,
      t->dtype == WT_INT64 ? t->data : NULL, w, has_ignore, ignore, p->reduction,
      ctx->out[0].data);
  if (bad >= 0)
    return wt_errorf(WT_ERR_RUNTIME, "label[%lld] = %lld is out of range; expected 0 <= label < %lld%s",
                     (long long)bad, (long long)wt_get_int(t, bad), (long long)p->C,
                     has_ignore ? " or ignore_index" : "");
  return WT_OK;
}

static size_t smg_scratch(const wt_infer_ctx *ctx) {
  const wt_softmax_params *p = ctx->params;
  return p->inner > 1 ? (size_t)p->inner * sizeof(float) : 0;
}

#define SMG_KERNEL(NAME) {.key = {"com.microsoft", #NAME}, .run = smg_run, .scratch = smg_scratch},
const wt_cpu_kernel wt_cpu_kernels_softmax_grad[] = {
    SMG_KERNEL(SoftmaxGrad) SMG_KERNEL(SoftmaxGrad_13) SMG_KERNEL(LogSoftmaxGrad)
    SMG_KERNEL(LogSoftmaxGrad_13)
    {.key = {"com.microsoft", "SoftmaxCrossEntropyLossGrad"}, .run = sceg_run},
    WT_CPU_KERNELS_END};
