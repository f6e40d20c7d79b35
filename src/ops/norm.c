/* Op family: norm. BatchNormalization (opsets 7-15: inference with the given statistics, and
 * training mode at 14+ with running-statistic outputs), com.microsoft BatchNormInternal (ONNX
 * Runtime's training form: also the batch mean / inverse std) and LayerNormalization (opset
 * 17), with their gradient rules (the gradient ops live in norm_grad.c). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/norm_params.h"

/* ---- BatchNormalization ------------------------------------------------------------------ */

static int bn_infer(wt_infer_ctx *ctx) {
  bn_params *p = WT_PARAMS(ctx, bn_params);
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
  int internal = (ctx->op->flags & WT_OP_TRAINING) != 0;
  if (internal) p->training = wt_attr_int(ctx->node, "training_mode", 1) != 0;
  else p->training = ctx->opset >= 14 && wt_attr_int(ctx->node, "training_mode", 0) != 0;
  if (!p->training && ctx->n_out > 1)
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "%d outputs; expected 1 outside training mode (statistics outputs need "
                     "training_mode=1%s)",
                     ctx->n_out, internal ? "" : " at opset >= 14");
  if (ctx->n_out > (internal ? 5 : 3))
    return wt_errorf(WT_ERR_INVALID_ARG, "%d outputs; expected at most %d", ctx->n_out,
                     internal ? 5 : 3);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  for (int i = 1; i < ctx->n_out; i++) wt_set_shape(&ctx->out[i], WT_FLOAT, 1, &p->C);
  return WT_OK;
}

/* ---- gradient rules ------------------------------------------------------------------------- */

/* Training mode, as ONNX Runtime does it: the node becomes com.microsoft BatchNormInternal
 * (same inputs and attributes, training_mode=1), which also outputs the batch mean (3) and
 * 1 / sqrt(batch var + eps) (4) that BatchNormalizationGrad(dY, X, scale, mean, inv_std)
 * reads. Outputs 1 and 2 (running statistics) are added too: ORT's schema wants all 5. */
static int bn_train_grad(wt_grad_ctx *c) {
  if (!(c->op->flags & WT_OP_TRAINING)) {
    if (wt_node_set_op(c->g, c->node, "BatchNormInternal", WT_MS))
      return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
    wt_grad_attr_int(c, c->node, "training_mode", 1);
    wt_grad_use_domain(c, WT_MS);
    if (c->rc) return c->rc;
  }
  for (int i = 1; i <= 4; i++) wt_grad_forward_output(c, i);
  int outs[3];
  int node = wt_grad_op(c, "BatchNormalizationGrad", WT_MS, 5,
                        (int[]){GO(0), I(0), I(1), O(3), O(4)}, 3, outs);
  /* ORT copies epsilon only when the node has it, but its schema requires it: always set. */
  if (node >= 0 && wt_node_set_float(c->g, node, "epsilon",
                                     wt_attr_float(wt_grad_node(c), "epsilon", 1e-5f)))
    wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
  for (int i = 0; i < 3; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, outs[i]);
  /* The batch statistics do not depend on the running ones. */
  for (int i = 3; i < 5; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, wt_grad_fill_like(c, I(i), 0.0f));
  return wt_grad_status(c);
}

/* Inference mode (the given statistics are constants of the normalization): per channel
 * a = scale * inv_std with inv_std = 1 / sqrt(var + eps), so
 *   dX = dY * a,  dScale = sum dY * (X - mean) * inv_std,  dB = sum dY,
 *   dMean = -a * sum dY,  dVar = -scale / 2 * inv_std^3 * sum dY * (X - mean),
 * sums over every axis but 1, channel vectors unsqueezed to [C, 1, ...] to broadcast. */
static int bn_frozen_grad(wt_grad_ctx *c) {
  const wt_value *xv = wt_grad_value(c, I(0));
  int rank = xv->rank;
  if (rank < 2)
    return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of X must be known (at least 2) to differentiate");
  int64_t sp[WT_MAX_RANK], red[WT_MAX_RANK];
  int n_sp = 0, n_red = 0;
  red[n_red++] = 0;
  for (int i = 2; i < rank; i++) {
    sp[n_sp++] = i - 1;
    red[n_red++] = i;
  }
#define CH(v) (n_sp ? wt_grad_unsqueeze(c, (v), sp, n_sp) : (v))
  float eps = wt_attr_float(wt_grad_node(c), "epsilon", 1e-5f);
  int dy = GO(0), x = I(0), scale = I(1), mean = I(3), var = I(4);
  int ve = wt_grad_op1(c, "Add", "", 2, (int[]){var, wt_grad_const_f32(c, eps)});
  int sd = wt_grad_op1(c, "Sqrt", "", 1, &ve);
  int inv = wt_grad_op1(c, "Reciprocal", "", 1, &sd);
  int a = wt_grad_op1(c, "Mul", "", 2, (int[]){scale, inv});
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, wt_grad_op1(c, "Mul", "", 2, (int[]){dy, CH(a)}));
  int sum_dy = -1, sum_dyxc = -1;
  if (wt_grad_need(c, 2) || wt_grad_need(c, 3)) sum_dy = wt_grad_reduce_sum(c, dy, red, n_red, 0);
  if (wt_grad_need(c, 1) || wt_grad_need(c, 4)) {
    int xc = wt_grad_op1(c, "Sub", "", 2, (int[]){x, CH(mean)});
    int p = wt_grad_op1(c, "Mul", "", 2, (int[]){dy, xc});
    sum_dyxc = wt_grad_reduce_sum(c, p, red, n_red, 0);
  }
  if (wt_grad_need(c, 1)) wt_grad_set(c, 1, wt_grad_op1(c, "Mul", "", 2, (int[]){sum_dyxc, inv}));
  if (wt_grad_need(c, 2)) wt_grad_set(c, 2, sum_dy);
  if (wt_grad_need(c, 3)) {
    int m = wt_grad_op1(c, "Mul", "", 2, (int[]){sum_dy, a});
    wt_grad_set(c, 3, wt_grad_op1(c, "Neg", "", 1, &m));
  }
  if (wt_grad_need(c, 4)) {
    int inv2 = wt_grad_op1(c, "Mul", "", 2, (int[]){inv, inv});
    int inv3 = wt_grad_op1(c, "Mul", "", 2, (int[]){inv2, a});
    int k = wt_grad_op1(c, "Mul", "", 2, (int[]){inv3, wt_grad_const_f32(c, -0.5f)});
    wt_grad_set(c, 4, wt_grad_op1(c, "Mul", "", 2, (int[]){sum_dyxc, k}));
  }
#undef CH
  return wt_grad_status(c);
}

static int bn_grad(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  int internal = (c->op->flags & WT_OP_TRAINING) != 0;
  int training = internal ? wt_attr_int(n, "training_mode", 1) != 0
                          : c->opset >= 14 && wt_attr_int(n, "training_mode", 0) != 0;
  for (int i = 1; i < n->n_outputs; i++)
    if (GO(i) >= 0)
      return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                          "the loss depends on output %d (a running or batch statistic); only "
                          "the gradient through Y is supported", i);
  return training ? bn_train_grad(c) : bn_frozen_grad(c);
}

static const wt_op_def wt_op_BatchNormalization = {
    .domain = "", .op_type = "BatchNormalization", .min_inputs = 5, .max_inputs = 5,
    .min_outputs = 1, .max_outputs = 3, .infer = bn_infer, .grad = bn_grad,
    .flags = WT_OP_RUNNING_STATS};
static const wt_op_def wt_op_BatchNormInternal = {
    .domain = WT_MS, .op_type = "BatchNormInternal", .min_inputs = 5, .max_inputs = 5,
    .min_outputs = 1, .max_outputs = 5, .infer = bn_infer, .grad = bn_grad,
    .flags = WT_OP_TRAINING | WT_OP_RUNNING_STATS};

/* ---- LayerNormalization ------------------------------------------------------------------ */

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
  ln_params *p = WT_PARAMS(ctx, ln_params);
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

/* ONNX Runtime's rule: LayerNormalizationGrad(dY, X, scale, Mean, InvStdDev) -> (dX, dScale,
 * dB) with the forward node's attributes; Mean / InvStdDev are forward outputs 1 and 2. */
static int ln_grad(wt_grad_ctx *c) {
  if (GO(1) >= 0 || GO(2) >= 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                        "the loss depends on Mean or InvStdDev; only the gradient through Y is "
                        "supported");
  int mean = wt_grad_forward_output(c, 1), inv = wt_grad_forward_output(c, 2);
  int outs[3];
  int node = wt_grad_op(c, "LayerNormalizationGrad", WT_MS, 5,
                        (int[]){GO(0), I(0), I(1), mean, inv}, 3, outs);
  if (node >= 0) wt_grad_copy_attrs(c, node, (const char *const[]){"axis", "epsilon", "stash_type"}, 3);
  for (int i = 0; i < 3; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, outs[i]);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_LayerNormalization = {
    .domain = "", .op_type = "LayerNormalization", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 3, .infer = ln_infer, .grad = ln_grad};

/* Defined in norm_grad.c. */
const wt_op_def *const wt_ops_norm[] = {
    &wt_op_BatchNormalization,
    &wt_op_BatchNormInternal,
    &wt_op_LayerNormalization,
    NULL,
};
