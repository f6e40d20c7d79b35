/* Op family: softmax gradients (com.microsoft, ONNX Runtime's training ops and semantics):
 * SoftmaxGrad / LogSoftmaxGrad (2-D coerced at `axis`, default 1), SoftmaxGrad_13 /
 * LogSoftmaxGrad_13 (one axis, default -1), all (dY, Y) -> dX, and SoftmaxCrossEntropyLossGrad.
 * Their own table: wt_ops_softmax_grad. */
#include <assert.h>
#include <string.h>

#include "ops/op.h"
#include "ops/softmax_grad_params.h"
#include "ops/softmax_layout.h"

/* ---- (Log)SoftmaxGrad[_13] ------------------------------------------------------------------ */

/* wt_op_def.variant bits: LogSoftmax's gradient; the per-axis (opset 13) form. */
enum { SMG_LOG = 1, SMG_13 = 2 };


static int smg_infer(wt_infer_ctx *ctx) {
  wt_softmax_params *p = WT_PARAMS(ctx, wt_softmax_params);
  const wt_tensor *dy = &ctx->in[0], *y = &ctx->in[1];
  WT_TRY(wt_expect_float(dy, "dY", 0));
  WT_TRY(wt_expect_float(y, "Y", 1));
  WT_TRY(wt_expect_shape_like(dy, "dY", 0, y, "Y"));
  int coerce = !(ctx->op->variant & SMG_13);
  p->log_out = (ctx->op->variant & SMG_LOG) != 0;
  int64_t axis = wt_attr_int(ctx->node, "axis", coerce ? 1 : -1);
  WT_TRY(wt_softmax_layout(y, axis, coerce, &p->outer, &p->n, &p->inner));
  wt_set_shape(&ctx->out[0], WT_FLOAT, y->rank, y->dims);
  return WT_OK;
}

#define SMG_OP(NAME, VARIANT)                                                                \
  static const wt_op_def wt_op_##NAME = {.domain = "com.microsoft", .op_type = #NAME,              \
                                  .min_inputs = 2, .max_inputs = 2, .min_outputs = 1,       \
                                  .max_outputs = 1, .infer = smg_infer,                     \
                                  .flags = WT_OP_INPLACE | WT_OP_GRADIENT,                  \
                                  .variant = VARIANT};
/* In place over dY or Y: the kernel reads a whole row (or block of rows) for its sum before it
 * writes any of it, then writes each element after reading dY and Y at that index. */
SMG_OP(SoftmaxGrad, 0)
SMG_OP(SoftmaxGrad_13, SMG_13)
SMG_OP(LogSoftmaxGrad, SMG_LOG)
SMG_OP(LogSoftmaxGrad_13, SMG_LOG | SMG_13)

/* ---- SoftmaxCrossEntropyLossGrad -------------------------------------------------------------- */

static int sceg_infer(wt_infer_ctx *ctx) {
  sceg_params *p = WT_PARAMS(ctx, sceg_params);
  const wt_tensor *dy = &ctx->in[0], *lp = &ctx->in[1], *t = &ctx->in[2];
  char b1[96];
  if (dy->dtype != WT_FLOAT || lp->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "inputs 'dY' and 'log_prob' have dtypes %s, %s; expected float",
                     wt_dtype_name(dy->dtype), wt_dtype_name(lp->dtype));
  WT_TRY(wt_ce_layout(lp, "log_prob", t, "label", wt_has_input(ctx->in, ctx->n_in, 3) ? &ctx->in[3] : NULL,
                      "weight", &p->N, &p->C, &p->D));
  if (wt_has_input(ctx->in, ctx->n_in, 4) &&
      (ctx->in[4].dtype != WT_INT64 || wt_numel(&ctx->in[4]) != 1))
    return wt_errorf(WT_ERR_SHAPE, "input 'ignore_index' must be one int64");
  WT_TRY(wt_loss_reduction(ctx->node, &p->reduction));
  if (p->reduction == WT_LOSS_NONE ? wt_numel(dy) != wt_numel(t) : wt_numel(dy) != 1)
    return wt_errorf(WT_ERR_SHAPE, "input 'dY' has shape %s; expected %s",
                     wt_shape_str(dy->rank, dy->dims, b1, sizeof b1),
                     p->reduction == WT_LOSS_NONE ? "the label's shape" : "a scalar");
  const wt_attr *ii = wt_node_attr(ctx->node, "ignore_index");
  p->has_ignore = ii != NULL;
  p->ignore_index = ii ? ii->i : 0;
  wt_set_shape(&ctx->out[0], WT_FLOAT, lp->rank, lp->dims);
  return WT_OK;
}

static const wt_op_def wt_op_SoftmaxCrossEntropyLossGrad = {
    .domain = "com.microsoft", .op_type = "SoftmaxCrossEntropyLossGrad", .min_inputs = 3,
    .max_inputs = 5, .min_outputs = 1, .max_outputs = 1, .infer = sceg_infer,
    .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_softmax_grad[] = {
    &wt_op_SoftmaxGrad,     &wt_op_SoftmaxGrad_13, &wt_op_LogSoftmaxGrad, &wt_op_LogSoftmaxGrad_13,
    &wt_op_SoftmaxCrossEntropyLossGrad, NULL,
};
