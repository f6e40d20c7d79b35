/* Op family: norm. BatchNormalization (opsets 7-15: inference with the given statistics, and
 * training mode at 14+ with running-statistic outputs) and LayerNormalization (opset 17). */
#include <assert.h>
#include <string.h>

#include "kernels/norm.h"
#include "ops/op.h"

static int has_output(const wt_run_ctx *ctx, int i) {
  return i < ctx->n_out && i < ctx->node->n_outputs && ctx->node->outputs[i] >= 0 &&
         ctx->out[i].data != NULL;
}

/* ---- BatchNormalization ------------------------------------------------------------------ */

typedef struct bn_params {
  int64_t N, C, S;
  float eps, momentum;
  int training;
} bn_params;
static_assert(sizeof(bn_params) <= WT_PARAMS_MAX, "bn_params too large");

static int bn_infer(wt_infer_ctx *ctx) {
  bn_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  static const char *names[5] = {"X", "scale", "B", "input_mean", "input_var"};
  char buf[96];
  if (x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' has dtype %s; expected float",
                     wt_dtype_name(x->dtype));
  if (x->rank < 2)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' has rank %d; expected [N, C, ...] (rank >= 2)",
                     x->rank);
  p->N = x->dims[0];
  p->C = x->dims[1];
  p->S = wt_dims_prod(x->dims, 2, x->rank);
  for (int i = 1; i < 5; i++) {
    const wt_tensor *t = &ctx->in[i];
    if (t->dtype != WT_FLOAT || t->rank != 1 || t->dims[0] != p->C)
      return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) is %s %s; expected float [%lld]",
                       names[i], i, wt_dtype_name(t->dtype),
                       wt_shape_str(t->rank, t->dims, buf, sizeof buf), (long long)p->C);
  }
  if (ctx->opset < 9 && wt_attr_int(ctx->node, "spatial", 1) != 1)
    return wt_errorf(WT_ERR_UNSUPPORTED, "spatial=0 is not supported");
  p->eps = wt_attr_float(ctx->node, "epsilon", 1e-5f);
  p->momentum = wt_attr_float(ctx->node, "momentum", 0.9f);
  p->training = ctx->opset >= 14 && wt_attr_int(ctx->node, "training_mode", 0) != 0;
  if (!p->training && ctx->n_out > 1)
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "%d outputs; expected 1 outside training mode (statistics outputs need "
                     "training_mode=1 at opset >= 14)",
                     ctx->n_out);
  if (ctx->n_out > 3)
    return wt_errorf(WT_ERR_INVALID_ARG, "%d outputs; expected at most 3", ctx->n_out);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  for (int i = 1; i < ctx->n_out; i++) wt_set_shape(&ctx->out[i], WT_FLOAT, 1, &p->C);
  if (p->training) ctx->scratch_bytes = (size_t)(2 * p->C) * sizeof(float);
  return WT_OK;
}

static int bn_run(const wt_run_ctx *ctx) {
  const bn_params *p = ctx->params;
  const float *x = ctx->in[0].data, *scale = ctx->in[1].data, *bias = ctx->in[2].data;
  const float *mean = ctx->in[3].data, *var = ctx->in[4].data;
  float *y = ctx->out[0].data;
  if (!p->training) {
    wt_batchnorm_apply_f32(x, y, p->N, p->C, p->S, scale, bias, mean, var, p->eps);
    return WT_OK;
  }
  float *bm = ctx->scratch, *bv = bm + p->C;
  wt_batchnorm_train_f32(x, y, p->N, p->C, p->S, scale, bias, mean, var, p->eps, p->momentum,
                         0, bm, bv, has_output(ctx, 1) ? ctx->out[1].data : NULL,
                         has_output(ctx, 2) ? ctx->out[2].data : NULL);
  return WT_OK;
}

const wt_op_def wt_op_BatchNormalization = {
    .domain = "", .op_type = "BatchNormalization", .min_inputs = 5, .max_inputs = 5,
    .min_outputs = 1, .max_outputs = 3, .infer = bn_infer, .run = bn_run};

/* ---- LayerNormalization ------------------------------------------------------------------ */

typedef struct ln_params {
  int64_t rows, n;
  float eps;
} ln_params;
static_assert(sizeof(ln_params) <= WT_PARAMS_MAX, "ln_params too large");

/* Scale / B must hold exactly the normalized dims (leading 1s allowed). */
static int ln_check_param(const wt_tensor *t, const char *name, int idx, const wt_tensor *x,
                          int ax) {
  char b1[96], b2[96];
  int off = x->rank - t->rank;
  int ok = t->dtype == WT_FLOAT && off >= 0;
  for (int i = 0; ok && i < t->rank; i++) {
    int xi = off + i;
    ok = xi >= ax ? t->dims[i] == x->dims[xi] : t->dims[i] == 1;
  }
  if (ok && wt_numel(t) != wt_dims_prod(x->dims, ax, x->rank)) ok = 0;
  if (!ok)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) is %s %s; expected float %s",
                     name, idx, wt_dtype_name(t->dtype), wt_shape_str(t->rank, t->dims, b1, sizeof b1),
                     wt_shape_str(x->rank - ax, x->dims + ax, b2, sizeof b2));
  return WT_OK;
}

static int ln_infer(wt_infer_ctx *ctx) {
  ln_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  if (x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' has dtype %s; expected float",
                     wt_dtype_name(x->dtype));
  int64_t axis = wt_attr_int(ctx->node, "axis", -1);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d",
                     (long long)axis, x->rank);
  WT_TRY(ln_check_param(&ctx->in[1], "Scale", 1, x, ax));
  if (wt_has_input(ctx->in, ctx->n_in, 2)) WT_TRY(ln_check_param(&ctx->in[2], "B", 2, x, ax));
  int64_t stash = wt_attr_int(ctx->node, "stash_type", 1);
  if (stash != 1)
    return wt_errorf(WT_ERR_UNSUPPORTED, "stash_type %lld; only 1 (float) is supported",
                     (long long)stash);
  p->rows = wt_dims_prod(x->dims, 0, ax);
  p->n = wt_dims_prod(x->dims, ax, x->rank);
  p->eps = wt_attr_float(ctx->node, "epsilon", 1e-5f);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  for (int i = 1; i < ctx->n_out; i++) {
    wt_set_shape(&ctx->out[i], WT_FLOAT, x->rank, x->dims);
    for (int d = ax; d < x->rank; d++) ctx->out[i].dims[d] = 1;
  }
  return WT_OK;
}

static int ln_run(const wt_run_ctx *ctx) {
  const ln_params *p = ctx->params;
  const float *bias = wt_has_input(ctx->in, ctx->n_in, 2) ? ctx->in[2].data : NULL;
  wt_layernorm_f32(ctx->in[0].data, ctx->out[0].data, p->rows, p->n, ctx->in[1].data, bias,
                   p->eps, has_output(ctx, 1) ? ctx->out[1].data : NULL,
                   has_output(ctx, 2) ? ctx->out[2].data : NULL);
  return WT_OK;
}

const wt_op_def wt_op_LayerNormalization = {
    .domain = "", .op_type = "LayerNormalization", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 3, .infer = ln_infer, .run = ln_run};

const wt_op_def *const wt_ops_norm[] = {
    &wt_op_BatchNormalization,
    &wt_op_LayerNormalization,
    NULL,
};
