/* Op family: norm gradients (com.microsoft, ONNX Runtime's training ops and semantics):
 * LayerNormalizationGrad(dY, X, scale, mean, inv_std_var) -> (dX, dScale, dBias) and
 * BatchNormalizationGrad(dY, X, scale, saved_mean, saved_inv_std) -> (dX, dScale, dBias).
 * Their own table: wt_ops_norm_grad. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/norm_grad_params.h"

/* ---- LayerNormalizationGrad ------------------------------------------------------------------ */

static int lng_infer(wt_infer_ctx *ctx) {
  lng_params *p = WT_PARAMS(ctx, lng_params);
  static const char *names[5] = {"Y_grad", "X", "scale", "mean", "inv_std_var"};
  for (int i = 0; i < 5; i++) WT_TRY(wt_expect_float(&ctx->in[i], names[i], i));
  const wt_tensor *x = &ctx->in[1], *scale = &ctx->in[2];
  WT_TRY(wt_expect_shape_like(&ctx->in[0], names[0], 0, x, "X"));
  int64_t axis = wt_attr_int(ctx->node, "axis", -1);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d",
                     (long long)axis, x->rank);
  p->rows = wt_dims_prod(x->dims, 0, ax);
  p->n = wt_dims_prod(x->dims, ax, x->rank);
  if (wt_numel(scale) != p->n)
    return wt_errorf(WT_ERR_SHAPE, "input 'scale' has %lld elements; expected %lld (the normalized "
                     "dims of X)", (long long)wt_numel(scale), (long long)p->n);
  for (int i = 3; i < 5; i++)
    if (wt_numel(&ctx->in[i]) != p->rows)
      return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has %lld elements; expected %lld (one "
                       "per normalized row)", names[i], i, (long long)wt_numel(&ctx->in[i]),
                       (long long)p->rows);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  for (int i = 1; i < ctx->n_out; i++) wt_set_shape(&ctx->out[i], WT_FLOAT, scale->rank, scale->dims);
  return WT_OK;
}

static const wt_op_def wt_op_LayerNormalizationGrad = {
    .domain = WT_MS, .op_type = "LayerNormalizationGrad", .min_inputs = 5, .max_inputs = 5,
    .min_outputs = 1, .max_outputs = 3, .infer = lng_infer,
    .flags = WT_OP_GRADIENT};

/* ---- BatchNormalizationGrad ------------------------------------------------------------------ */

static int bng_infer(wt_infer_ctx *ctx) {
  bng_params *p = WT_PARAMS(ctx, bng_params);
  static const char *names[5] = {"dY", "X", "scale", "mean", "variance"};
  char buf[96];
  for (int i = 0; i < 5; i++) WT_TRY(wt_expect_float(&ctx->in[i], names[i], i));
  const wt_tensor *x = &ctx->in[1];
  if (x->rank < 2)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' has rank %d; expected [N, C, ...] (rank >= 2)",
                     x->rank);
  WT_TRY(wt_expect_shape_like(&ctx->in[0], names[0], 0, x, "X"));
  p->N = x->dims[0];
  p->C = x->dims[1];
  p->S = wt_dims_prod(x->dims, 2, x->rank);
  for (int i = 2; i < 5; i++) {
    const wt_tensor *t = &ctx->in[i];
    if (t->rank != 1 || t->dims[0] != p->C)
      return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has shape %s; expected [%lld]",
                       names[i], i, wt_shape_str(t->rank, t->dims, buf, sizeof buf),
                       (long long)p->C);
  }
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  for (int i = 1; i < ctx->n_out; i++) wt_set_shape(&ctx->out[i], WT_FLOAT, 1, &p->C);
  return WT_OK;
}

static const wt_op_def wt_op_BatchNormalizationGrad = {
    .domain = WT_MS, .op_type = "BatchNormalizationGrad", .min_inputs = 5, .max_inputs = 5,
    .min_outputs = 1, .max_outputs = 3, .infer = bng_infer,
    .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_norm_grad[] = {
    &wt_op_LayerNormalizationGrad,
    &wt_op_BatchNormalizationGrad,
    NULL,
};
