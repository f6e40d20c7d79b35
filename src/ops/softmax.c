/* Op family: softmax. Softmax and LogSoftmax (opset < 13: the input is coerced to 2-D at
 * `axis`, default 1, and normalized over the whole trailing block; opset 13+: along one axis,
 * default -1), SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (opset 12/13). */
#include <assert.h>
#include <string.h>

#include "kernels/softmax.h"
#include "ops/op.h"

typedef struct softmax_params {
  int64_t outer, n, inner;
  int log_out;
} softmax_params;
static_assert(sizeof(softmax_params) <= WT_PARAMS_MAX, "softmax_params too large");

static int softmax_infer(wt_infer_ctx *ctx) {
  softmax_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  if (x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'input' has dtype %s; expected float",
                     wt_dtype_name(x->dtype));
  int coerce = ctx->opset < 13;
  int64_t axis = wt_attr_int(ctx->node, "axis", coerce ? 1 : -1);
  /* Coercion allows axis == rank (an empty trailing block). */
  int ax = coerce && (axis == x->rank || (x->rank == 0 && axis == 0)) ? x->rank
                                                                     : wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d",
                     (long long)axis, x->rank);
  p->outer = wt_dims_prod(x->dims, 0, ax);
  if (coerce) {
    p->n = wt_dims_prod(x->dims, ax, x->rank);
    p->inner = 1;
  } else {
    p->n = x->dims[ax];
    p->inner = wt_dims_prod(x->dims, ax + 1, x->rank);
  }
  p->log_out = strcmp(ctx->node->op_type, "LogSoftmax") == 0;
  if (p->inner > 1) ctx->scratch_bytes = (size_t)(2 * p->inner) * sizeof(float);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  return WT_OK;
}

static int softmax_run(const wt_run_ctx *ctx) {
  const softmax_params *p = ctx->params;
  wt_softmax_f32(ctx->in[0].data, ctx->out[0].data, p->outer, p->n, p->inner, p->log_out,
                 ctx->scratch);
  return WT_OK;
}

const wt_op_def wt_op_Softmax = {.domain = "", .op_type = "Softmax", .min_inputs = 1,
                                 .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                 .infer = softmax_infer, .run = softmax_run};
const wt_op_def wt_op_LogSoftmax = {.domain = "", .op_type = "LogSoftmax", .min_inputs = 1,
                                    .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                    .infer = softmax_infer, .run = softmax_run};

/* ---- SoftmaxCrossEntropyLoss ------------------------------------------------------------- */

typedef struct sce_params {
  int64_t N, C, D;
  int64_t ignore_index;
  int has_ignore, reduction;
  int nll;                        /* NegativeLogLikelihoodLoss: input holds log-probabilities */
} sce_params;
static_assert(sizeof(sce_params) <= WT_PARAMS_MAX, "sce_params too large");

static int has_output(const wt_node *node, int n_out, int i) {
  return i < n_out && i < node->n_outputs && node->outputs[i] >= 0;
}

static int sce_infer(wt_infer_ctx *ctx) {
  sce_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *t = &ctx->in[1];
  char b1[96], b2[96];
  p->nll = strcmp(ctx->node->op_type, "NegativeLogLikelihoodLoss") == 0;
  const char *xn = p->nll ? "input" : "scores", *tn = p->nll ? "target" : "labels";
  if (x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has dtype %s; expected float", xn,
                     wt_dtype_name(x->dtype));
  if (x->rank < 2)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has rank %d; expected [N, C, d1...] (rank >= 2)",
                     xn, x->rank);
  if (t->dtype != WT_INT32 && t->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has dtype %s; expected int32 or int64", tn,
                     wt_dtype_name(t->dtype));
  int ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
  for (int i = 1; ok && i < t->rank; i++) ok = t->dims[i] == x->dims[i + 1];
  if (!ok)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has shape %s; expected [N, d1...] matching %s %s",
                     tn, wt_shape_str(t->rank, t->dims, b1, sizeof b1), xn,
                     wt_shape_str(x->rank, x->dims, b2, sizeof b2));
  p->N = x->dims[0];
  p->C = x->dims[1];
  p->D = wt_dims_prod(x->dims, 2, x->rank);
  if (wt_has_input(ctx->in, ctx->n_in, 2)) {
    const wt_tensor *w = &ctx->in[2];
    if (w->dtype != WT_FLOAT || w->rank != 1 || w->dims[0] != p->C)
      return wt_errorf(WT_ERR_SHAPE, "input 'weights' is %s %s; expected float [%lld]",
                       wt_dtype_name(w->dtype), wt_shape_str(w->rank, w->dims, b1, sizeof b1),
                       (long long)p->C);
  }
  const char *red = wt_attr_string(ctx->node, "reduction", "mean");
  if (strcmp(red, "none") == 0) p->reduction = WT_LOSS_NONE;
  else if (strcmp(red, "sum") == 0) p->reduction = WT_LOSS_SUM;
  else if (strcmp(red, "mean") == 0) p->reduction = WT_LOSS_MEAN;
  else
    return wt_errorf(WT_ERR_INVALID_ARG, "reduction '%s'; expected 'none', 'sum' or 'mean'", red);
  const wt_attr *ii = wt_node_attr(ctx->node, "ignore_index");
  p->has_ignore = ii != NULL;
  p->ignore_index = ii ? ii->i : 0;
  if (p->reduction == WT_LOSS_NONE) wt_set_shape(&ctx->out[0], WT_FLOAT, t->rank, t->dims);
  else wt_set_shape(&ctx->out[0], WT_FLOAT, 0, NULL);
  if (ctx->n_out > 1) wt_set_shape(&ctx->out[1], WT_FLOAT, x->rank, x->dims);
  return WT_OK;
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

const wt_op_def wt_op_SoftmaxCrossEntropyLoss = {
    .domain = "", .op_type = "SoftmaxCrossEntropyLoss", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 2, .infer = sce_infer, .run = sce_run};

const wt_op_def wt_op_NegativeLogLikelihoodLoss = {
    .domain = "", .op_type = "NegativeLogLikelihoodLoss", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 1, .infer = sce_infer, .run = sce_run};

const wt_op_def *const wt_ops_softmax[] = {
    &wt_op_Softmax,
    &wt_op_LogSoftmax,
    &wt_op_SoftmaxCrossEntropyLoss,
    &wt_op_NegativeLogLikelihoodLoss,
    NULL,
};
