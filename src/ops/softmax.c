/* Op family: softmax. Softmax and LogSoftmax (opset < 13: the input is coerced to 2-D at
 * `axis`, default 1, and normalized over the whole trailing block; opset 13+: along one axis,
 * default -1), SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (opset 12/13), with
 * their gradient rules (the com.microsoft gradient ops live in softmax_grad.c). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/softmax_params.h"
#include "ops/softmax_layout.h"


static int softmax_infer(wt_infer_ctx *ctx) {
  wt_softmax_params *p = WT_PARAMS(ctx, wt_softmax_params);
  const wt_tensor *x = &ctx->in[0];
  if (x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'input' has dtype %s; expected float",
                     wt_dtype_name(x->dtype));
  int coerce = ctx->opset < 13;
  int64_t axis = wt_attr_int(ctx->node, "axis", coerce ? 1 : -1);
  WT_TRY(wt_softmax_layout(x, axis, coerce, &p->outer, &p->n, &p->inner));
  p->log_out = ctx->op->variant;
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  return WT_OK;
}

/* ONNX Runtime's rule: (Log)SoftmaxGrad(dY, Y) with the forward attributes; the opset < 13
 * (2-D coerced) forms are SoftmaxGrad / LogSoftmaxGrad, the per-axis ones *_13. */
static int softmax_grad(wt_grad_ctx *c) {
  int log_out = c->op->variant;
  const char *op = c->opset < 13 ? (log_out ? "LogSoftmaxGrad" : "SoftmaxGrad")
                                 : (log_out ? "LogSoftmaxGrad_13" : "SoftmaxGrad_13");
  int dx = wt_grad_op1(c, op, WT_MS, 2, (int[]){GO(0), O(0)});
  if (dx >= 0) wt_grad_copy_attrs(c, wt_grad_last(c), (const char *const[]){"axis"}, 1);
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_Softmax = {.domain = "", .op_type = "Softmax", .min_inputs = 1,
                                 .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                 .infer = softmax_infer, .grad = softmax_grad};
static const wt_op_def wt_op_LogSoftmax = {.domain = "", .op_type = "LogSoftmax", .min_inputs = 1,
                                    .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                    .infer = softmax_infer,
                                    .grad = softmax_grad, .variant = 1 /* log_out */};

/* ---- SoftmaxCrossEntropyLoss ------------------------------------------------------------- */

static int sce_infer(wt_infer_ctx *ctx) {
  sce_params *p = WT_PARAMS(ctx, sce_params);
  const wt_tensor *x = &ctx->in[0], *t = &ctx->in[1];
  p->nll = ctx->op->variant;
  const char *xn = p->nll ? "input" : "scores", *tn = p->nll ? "target" : "labels";
  if (x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has dtype %s; expected float", xn,
                     wt_dtype_name(x->dtype));
  WT_TRY(wt_ce_layout(x, xn, t, tn, wt_has_input(ctx->in, ctx->n_in, 2) ? &ctx->in[2] : NULL, "weights",
                      &p->N, &p->C, &p->D));
  WT_TRY(wt_loss_reduction(ctx->node, &p->reduction));
  const wt_attr *ii = wt_node_attr(ctx->node, "ignore_index");
  p->has_ignore = ii != NULL;
  p->ignore_index = ii ? ii->i : 0;
  if (p->reduction == WT_LOSS_NONE) wt_set_shape(&ctx->out[0], WT_FLOAT, t->rank, t->dims);
  else wt_set_shape(&ctx->out[0], WT_FLOAT, 0, NULL);
  if (ctx->n_out > 1) wt_set_shape(&ctx->out[1], WT_FLOAT, x->rank, x->dims);
  return WT_OK;
}

/* ONNX Runtime's rule: SoftmaxCrossEntropyLossGrad(dY, log_prob, labels[, weights]) with the
 * forward attributes (reduction, ignore_index); log_prob is forward output 1.
 * NegativeLogLikelihoodLoss has no ORT rule; its gradient -onehot(t) * w[t] * g is the same op
 * fed log_prob = -inf (exp(-inf) = 0), so one kernel (and ORT) computes both. */
static int sce_grad(wt_grad_ctx *c) {
  int nll = c->op->variant;
  if (wt_grad_need(c, 2))
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                        "the gradient toward the class weights is not supported (ONNX Runtime "
                        "has none either); make them a constant");
  if (GO(1) >= 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                        "the loss depends on log_prob; only the gradient through the loss output "
                        "is supported");
  int lp = nll ? wt_grad_fill_like(c, I(0), -INFINITY) : wt_grad_forward_output(c, 1);
  int has_w = wt_grad_node(c)->n_inputs > 2 && I(2) >= 0;
  int dx = wt_grad_op1(c, "SoftmaxCrossEntropyLossGrad", WT_MS, has_w ? 4 : 3,
                       (int[]){GO(0), lp, I(1), has_w ? I(2) : -1});
  if (dx >= 0)
    wt_grad_copy_attrs(c, wt_grad_last(c), (const char *const[]){"reduction", "ignore_index"}, 2);
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_SoftmaxCrossEntropyLoss = {
    .domain = "", .op_type = "SoftmaxCrossEntropyLoss", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 2, .infer = sce_infer, .grad = sce_grad};

static const wt_op_def wt_op_NegativeLogLikelihoodLoss = {
    .domain = "", .op_type = "NegativeLogLikelihoodLoss", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 1, .infer = sce_infer, .grad = sce_grad,
    .variant = 1 /* nll */};

const wt_op_def *const wt_ops_softmax[] = {
    &wt_op_Softmax,
    &wt_op_LogSoftmax,
    &wt_op_SoftmaxCrossEntropyLoss,
    &wt_op_NegativeLogLikelihoodLoss,
    NULL,
};
