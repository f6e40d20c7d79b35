/* Op family: norm_extra. InstanceNormalization (opset 6), GroupNormalization (opset 18:
 * num_groups, epsilon; scale / bias per group as opset 18 says, or per channel as opset 21
 * and PyTorch do), SimplifiedLayerNormalization (RMSNorm, ONNX Runtime's op: registered in
 * com.microsoft and in the default domain where ORT's exports put it) and its com.microsoft
 * gradient SimplifiedLayerNormalizationGrad. Instance / group norm gradients decompose into
 * standard ops (ONNX Runtime has no rule for them), so the artifacts stay ORT-runnable. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/norm_extra_params.h"

/* ---- InstanceNormalization / GroupNormalization ----------------------------------------------- */

static int gn_infer(wt_infer_ctx *ctx) {
  gn_params *p = WT_PARAMS(ctx, gn_params);
  const wt_tensor *x = &ctx->in[0];
  int instance = ctx->op->variant;
  static const char *names[3] = {"input", "scale", "B"};
  char buf[96];
  for (int i = 0; i < 3; i++) WT_TRY(wt_expect_float(&ctx->in[i], names[i], i));
  if (x->rank < 2)
    return wt_errorf(WT_ERR_SHAPE, "input 'input' has rank %d; expected [N, C, ...] (rank >= 2)",
                     x->rank);
  p->N = x->dims[0];
  p->C = x->dims[1];
  p->S = wt_dims_prod(x->dims, 2, x->rank);
  p->eps = wt_attr_float(ctx->node, "epsilon", 1e-5f);
  if (instance) {
    p->G = p->C;
  } else {
    p->G = wt_attr_int(ctx->node, "num_groups", 0);
    if (p->G <= 0 || p->C % p->G != 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "num_groups = %lld; expected a positive divisor of the "
                       "%lld channels", (long long)p->G, (long long)p->C);
  }
  int64_t len = wt_numel(&ctx->in[1]);
  p->per_channel = len == p->C;
  if (!p->per_channel && len != p->G)
    return wt_errorf(WT_ERR_SHAPE, "input 'scale' has shape %s; expected [%lld]%s",
                     wt_shape_str(ctx->in[1].rank, ctx->in[1].dims, buf, sizeof buf),
                     (long long)p->C, instance ? "" : " (per channel) or [num_groups]");
  if (wt_numel(&ctx->in[2]) != len || ctx->in[2].rank != 1 || ctx->in[1].rank != 1)
    return wt_errorf(WT_ERR_SHAPE, "inputs 'scale' and 'B' must be 1-D with %lld values", (long long)len);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  return WT_OK;
}

/* ReduceMean over `axes` with keepdims, honouring the opset (axes an input from 18). */
static int reduce_mean(wt_grad_ctx *c, int x, const int64_t *axes, int n) {
  if (c->opset >= 18) {
    int ax = wt_grad_const_i64s(c, axes, n);
    return wt_grad_op1(c, "ReduceMean", "", 2, (int[]){x, ax});
  }
  int y = wt_grad_op1(c, "ReduceMean", "", 1, &x);
  if (y >= 0 && wt_node_set_ints(c->g, wt_grad_last(c), "axes", axes, n))
    return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory"), -1;
  return y;
}

/* Recomputes the group statistics on X viewed as [N, G, L] and applies
 *   dXr = inv * (gr - mean(gr) - xhat * mean(gr * xhat)),  gr = dY * scale (in that view),
 *   dScale = sum dY * xhat,  dB = sum dY  (over N and the spatial dims / group members). */
static int gn_grad(wt_grad_ctx *c) {
  const wt_node *node = wt_grad_node(c);
  int instance = c->op->variant;
  float eps = wt_attr_float(node, "epsilon", 1e-5f);
  const wt_value *xv = wt_grad_value(c, I(0)), *sv = wt_grad_value(c, I(1));
  int rank = xv->rank;
  if (rank < 2) return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of the input must be known (>= 2)");
  int64_t G = instance ? 0 : wt_attr_int(node, "num_groups", 0), C = xv->dims[1];
  int64_t len = sv->rank == 1 ? sv->dims[0] : -1;
  int per_channel = instance || (len >= 0 && len == C);
  if (!per_channel && !(len >= 0 && len == G))
    return wt_grad_fail(c, WT_ERR_SHAPE, "the length of 'scale' must be known and equal to the "
                        "channels or to num_groups");
  int dy = GO(0), x = I(0), scale = I(1);
  int vshape = wt_grad_const_i64s(c, (int64_t[]){0, instance ? 0 : G, -1}, 3);
  int xr = wt_grad_op2(c, "Reshape", x, vshape);
  int64_t ax2[1] = {2};
  int mean = reduce_mean(c, xr, ax2, 1);
  int xc = wt_grad_op2(c, "Sub", xr, mean);
  int var = reduce_mean(c, wt_grad_op2(c, "Mul", xc, xc), ax2, 1);
  int sd = wt_grad_op1(c, "Sqrt", "", 1, (int[]){wt_grad_op2(c, "Add", var, wt_grad_const_f32(c, eps))});
  int inv = wt_grad_op1(c, "Reciprocal", "", 1, &sd);
  int xhat_r = wt_grad_op2(c, "Mul", xc, inv);
  int gr, dscale = -1, dbias = -1;
  if (per_channel) {
    int64_t sp[WT_MAX_RANK], red[WT_MAX_RANK];
    int n_red = 0;
    red[n_red++] = 0;
    for (int i = 2; i < rank; i++) {
      sp[i - 2] = i - 1;
      red[n_red++] = i;
    }
    int su = rank > 2 ? wt_grad_unsqueeze(c, scale, sp, rank - 2) : scale;
    gr = wt_grad_op2(c, "Reshape", wt_grad_op2(c, "Mul", dy, su), vshape);
    if (wt_grad_need(c, 1)) {
      int xhat = wt_grad_reshape_like(c, xhat_r, x);
      dscale = wt_grad_reduce_sum(c, wt_grad_op2(c, "Mul", dy, xhat), red, n_red, 0);
    }
    if (wt_grad_need(c, 2)) dbias = wt_grad_reduce_sum(c, dy, red, n_red, 0);
  } else {
    int64_t one[1] = {1}, red[2] = {0, 2};
    int dyr = wt_grad_op2(c, "Reshape", dy, vshape);
    gr = wt_grad_op2(c, "Mul", dyr, wt_grad_unsqueeze(c, scale, one, 1));
    if (wt_grad_need(c, 1)) dscale = wt_grad_reduce_sum(c, wt_grad_op2(c, "Mul", dyr, xhat_r), red, 2, 0);
    if (wt_grad_need(c, 2)) dbias = wt_grad_reduce_sum(c, dyr, red, 2, 0);
  }
  if (wt_grad_need(c, 0)) {
    int m1 = reduce_mean(c, gr, ax2, 1);
    int m2 = reduce_mean(c, wt_grad_op2(c, "Mul", gr, xhat_r), ax2, 1);
    int t = wt_grad_op2(c, "Sub", wt_grad_op2(c, "Sub", gr, m1), wt_grad_op2(c, "Mul", xhat_r, m2));
    wt_grad_set(c, 0, wt_grad_reshape_like(c, wt_grad_op2(c, "Mul", t, inv), x));
  }
  if (dscale >= 0) wt_grad_set(c, 1, dscale);
  if (dbias >= 0) wt_grad_set(c, 2, dbias);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_InstanceNormalization = {
    .domain = "", .op_type = "InstanceNormalization", .min_inputs = 3, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 1, .infer = gn_infer, .grad = gn_grad,
    .variant = 1 /* instance: one group per channel */};
static const wt_op_def wt_op_GroupNormalization = {
    .domain = "", .op_type = "GroupNormalization", .min_inputs = 3, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 1, .infer = gn_infer, .grad = gn_grad};

/* ---- SimplifiedLayerNormalization (RMSNorm) ----------------------------------------------------- */

/* Normalized dims from `axis`; scale must hold exactly them (leading 1s allowed). */
static int rms_dims(const wt_node *node, const wt_tensor *x, const wt_tensor *scale,
                    rms_params *p, int *ax_out) {
  char b1[96], b2[96];
  int64_t axis = wt_attr_int(node, "axis", -1);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d", (long long)axis,
                     x->rank);
  p->rows = wt_dims_prod(x->dims, 0, ax);
  p->n = wt_dims_prod(x->dims, ax, x->rank);
  int off = x->rank - scale->rank, ok = off >= 0 && wt_numel(scale) == p->n;
  for (int i = 0; ok && i < scale->rank; i++)
    ok = off + i >= ax ? scale->dims[i] == x->dims[off + i] : scale->dims[i] == 1;
  if (!ok)
    return wt_errorf(WT_ERR_SHAPE, "input 'scale' has shape %s; expected %s (the normalized dims)",
                     wt_shape_str(scale->rank, scale->dims, b1, sizeof b1),
                     wt_shape_str(x->rank - ax, x->dims + ax, b2, sizeof b2));
  *ax_out = ax;
  return WT_OK;
}

static int rms_infer(wt_infer_ctx *ctx) {
  rms_params *p = WT_PARAMS(ctx, rms_params);
  const wt_tensor *x = &ctx->in[0];
  WT_TRY(wt_expect_float(x, "X", 0));
  WT_TRY(wt_expect_float(&ctx->in[1], "scale", 1));
  int ax;
  WT_TRY(rms_dims(ctx->node, x, &ctx->in[1], p, &ax));
  p->eps = wt_attr_float(ctx->node, "epsilon", 1e-5f);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  if (ctx->n_out > 1) {
    wt_set_shape(&ctx->out[1], WT_FLOAT, x->rank, x->dims);
    for (int d = ax; d < x->rank; d++) ctx->out[1].dims[d] = 1;
  }
  return WT_OK;
}

/* ONNX Runtime's rule: SimplifiedLayerNormalizationGrad(dY, X, scale, inv_std_var) -> (dX,
 * dScale) with the forward attributes; inv_std_var is forward output 1. */
static int rms_grad(wt_grad_ctx *c) {
  if (c->n_go > 1 && GO(1) >= 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "the loss depends on inv_std_var; only the "
                        "gradient through Y is supported");
  int inv = wt_grad_forward_output(c, 1);
  int outs[2];
  int node = wt_grad_op(c, "SimplifiedLayerNormalizationGrad", WT_MS, 4,
                        (int[]){GO(0), I(0), I(1), inv}, 2, outs);
  if (node < 0) return wt_grad_status(c);
  static const char *const names[3] = {"axis", "epsilon", "stash_type"};
  wt_grad_copy_attrs(c, node, names, 3);
  for (int i = 0; i < 2; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, outs[i]);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_SimplifiedLayerNormalization = {
    .domain = WT_MS, .op_type = "SimplifiedLayerNormalization", .min_inputs = 2, .max_inputs = 2,
    .min_outputs = 1, .max_outputs = 2, .infer = rms_infer, .grad = rms_grad};
static const wt_op_def wt_op_SimplifiedLayerNormalization_onnx = {
    .domain = "", .op_type = "SimplifiedLayerNormalization", .min_inputs = 2, .max_inputs = 2,
    .min_outputs = 1, .max_outputs = 2, .infer = rms_infer, .grad = rms_grad};

/* ---- SimplifiedLayerNormalizationGrad (com.microsoft) ------------------------------------------ */

static int rmsg_infer(wt_infer_ctx *ctx) {
  rms_params *p = WT_PARAMS(ctx, rms_params);
  static const char *names[4] = {"Y_grad", "X", "scale", "inv_std_var"};
  char b1[96], b2[96];
  for (int i = 0; i < 4; i++) WT_TRY(wt_expect_float(&ctx->in[i], names[i], i));
  const wt_tensor *x = &ctx->in[1];
  if (!wt_same_shape(&ctx->in[0], x))
    return wt_errorf(WT_ERR_SHAPE, "input 'Y_grad' has shape %s; expected X's shape %s",
                     wt_shape_str(ctx->in[0].rank, ctx->in[0].dims, b1, sizeof b1),
                     wt_shape_str(x->rank, x->dims, b2, sizeof b2));
  int ax;
  WT_TRY(rms_dims(ctx->node, x, &ctx->in[2], p, &ax));
  if (wt_numel(&ctx->in[3]) != p->rows)
    return wt_errorf(WT_ERR_SHAPE, "input 'inv_std_var' has %lld elements; expected %lld (one per "
                     "normalized row)", (long long)wt_numel(&ctx->in[3]), (long long)p->rows);
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  if (ctx->n_out > 1) wt_set_shape(&ctx->out[1], WT_FLOAT, ctx->in[2].rank, ctx->in[2].dims);
  return WT_OK;
}

static const wt_op_def wt_op_SimplifiedLayerNormalizationGrad = {
    .domain = WT_MS, .op_type = "SimplifiedLayerNormalizationGrad", .min_inputs = 4,
    .max_inputs = 4, .min_outputs = 1, .max_outputs = 2, .infer = rmsg_infer,
    .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_norm_extra[] = {
    &wt_op_InstanceNormalization,
    &wt_op_GroupNormalization,
    &wt_op_SimplifiedLayerNormalization,
    &wt_op_SimplifiedLayerNormalization_onnx,
    &wt_op_SimplifiedLayerNormalizationGrad,
    NULL,
};
