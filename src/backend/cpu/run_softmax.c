/* The CPU kernels of the softmax family (definitions: src/ops/softmax.c): (Log)Softmax and the
 * cross-entropy / NLL losses. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/softmax.h"
#include "ops/op.h"
#include "ops/softmax_layout.h"
#include "ops/softmax_params.h"

static int softmax_run(const wt_run_ctx *ctx) {
  const wt_softmax_params *p = ctx->params;
  wt_softmax_f32(ctx->in[0].data, ctx->out[0].data, p->outer, p->n, p->inner, p->log_out,
                 ctx->scratch);
  return WT_OK;
}

static int has_output(const wt_node *node, int n_out, int i) {
  return i < n_out && i < node->n_outputs && node->outputs[i] >= 0;
}

static int sce_run(const wt_run_ctx *ctx) {
  const sce_params *p = ctx->params;
  const wt_tensor *t = &ctx->in[1];
  const float *w = wt_has_input(ctx->in, ctx->n_in, 2) ? ctx->in[2].data : NULL;
  float *log_prob = has_output(ctx->node, ctx->n_out, 1) ? ctx->out[1].data : NULL; /* NULL when omitted */
  const int32_t *l32 = t->dtype == WT_INT32 ? t->data : NULL;
  const int64_t *l64 = t->dtype == WT_INT64 ? t->data : NULL;
  int64_t bad;
  if (p->nll)
    bad = wt_nll_loss_f32(ctx->in[0].data, p->N, p->C, p->D, l32, l64, w, p->has_ignore,
                          p->ignore_index, p->reduction, ctx->out[0].data);
  else
    bad = wt_softmax_xent_f32(ctx->in[0].data, p->N, p->C, p->D, l32, l64, w, p->has_ignore,
                              p->ignore_index, p->reduction, ctx->out[0].data, log_prob);
  if (bad >= 0)
    return wt_errorf(WT_ERR_RUNTIME, "labels[%lld] = %lld is out of range; expected 0 <= label < %lld%s",
                     (long long)bad, (long long)wt_get_int(t, bad), (long long)p->C,
                     p->has_ignore ? " or ignore_index" : "");
  return WT_OK;
}

static size_t softmax_scratch(const wt_infer_ctx *ctx) {
  const wt_softmax_params *p = ctx->params;
  return p->inner > 1 ? (size_t)(2 * p->inner) * sizeof(float) : 0;
}

const wt_cpu_kernel wt_cpu_kernels_softmax[] = {
    {.key = {"", "Softmax"}, .run = softmax_run, .scratch = softmax_scratch},
    {.key = {"", "LogSoftmax"}, .run = softmax_run, .scratch = softmax_scratch},
    {.key = {"", "SoftmaxCrossEntropyLoss"}, .run = sce_run},
    {.key = {"", "NegativeLogLikelihoodLoss"}, .run = sce_run},
    WT_CPU_KERNELS_END};
