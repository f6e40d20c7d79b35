/* Op family: conv. Conv and ConvTranspose over 1-D, 2-D and 3-D float32 inputs, with groups,
 * pads / auto_pad, strides, dilations and an optional bias, their gradient rules, and the
 * com.microsoft ConvGrad / ConvTransposeGrad ops (ORT's schemas: inputs dY, X, W; optional
 * outputs dX, dW, dB; the forward's attributes; ConvTransposeGrad is emitted only where ONNX
 * Runtime's CPU-runnable form does not apply, see conv_transpose_grad_rule). Kernels in
 * backend/cpu/conv*.c. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/conv_window.h"
#include "ops/op.h"
#include "ops/conv_params.h"

/* Validates the optional bias (input 2) against M output channels. */
static int check_bias(const wt_infer_ctx *ctx, int64_t M, int *has_bias) {
  *has_bias = wt_has_input(ctx->in, ctx->n_in, 2);
  if (!*has_bias) return WT_OK;
  const wt_tensor *B = &ctx->in[2];
  WT_TRY(wt_expect_float(B, "B", 2));
  if (B->rank != 1 || B->dims[0] != M)
    return wt_errorf(WT_ERR_SHAPE, "input 'B' (index 2) has rank %d, dim0 %lld; expected a 1-D "
                     "bias of %lld (output channels)", B->rank,
                     (long long)(B->rank > 0 ? B->dims[0] : 0), (long long)M);
  return WT_OK;
}

/* Checks X / W (node inputs xi and xi + 1) dtypes and ranks; returns nsp. */
static int check_xw(const wt_tensor *X, const wt_tensor *W, int xi, int *nsp) {
  WT_TRY(wt_expect_float(X, "X", xi));
  /* float16 W reaches only the ops whose half_inputs say so (Conv, ConvGrad) */
  if (W->dtype != WT_FLOAT16) WT_TRY(wt_expect_float(W, "W", xi + 1));
  if (X->rank < 3)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' (index %d) has rank %d; expected rank >= 3 "
                     "(N, C, spatial...)", xi, X->rank);
  WT_TRY(wt_window_nsp("X", X->rank, nsp));
  if (W->rank != X->rank)
    return wt_errorf(WT_ERR_SHAPE, "input 'W' (index %d) has rank %d; expected rank %d like 'X'",
                     xi + 1, W->rank, X->rank);
  if (X->dims[1] < 0 || W->dims[0] < 0 || W->dims[1] < 0)
    return wt_errorf(WT_ERR_SHAPE, "channel dims of 'X' and 'W' must be known");
  return WT_OK;
}

static int read_group(const wt_node *n, int64_t *group) {
  *group = wt_attr_int(n, "group", 1);
  if (*group < 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'group' is %lld; expected >= 1",
                     (long long)*group);
  return WT_OK;
}

/* Conv geometry from X / W (node inputs xi, xi + 1): p (not has_bias) and the output dims. */
static int conv_setup(const wt_node *n, const wt_tensor *X, const wt_tensor *W, int xi,
                      conv_params *p, int64_t *out) {
  int nsp;
  WT_TRY(check_xw(X, W, xi, &nsp));
  WT_TRY(read_group(n, &p->group));
  p->C = X->dims[1];
  p->M = W->dims[0];
  p->w_half = W->dtype == WT_FLOAT16;
  if (W->dims[1] * p->group != p->C)
    return wt_errorf(WT_ERR_SHAPE, "input 'W' (index %d) has %lld input channels per group with "
                     "group %lld, but 'X' has %lld channels; expected W.dims[1] * group == C",
                     xi + 1, (long long)W->dims[1], (long long)p->group, (long long)p->C);
  if (p->M % p->group != 0)
    return wt_errorf(WT_ERR_SHAPE, "input 'W' (index %d) has %lld output channels; expected a "
                     "multiple of group %lld", xi + 1, (long long)p->M, (long long)p->group);
  wt_window_attrs a;
  WT_TRY(wt_window_parse(n, nsp, W->dims + 2, 1, &a));
  WT_TRY(wt_window_forward(&a, X->dims + 2, 0, out + 2));
  wt_window_geom(&a, X->dims + 2, out + 2, &p->g);
  out[0] = X->dims[0];
  out[1] = p->M;
  return WT_OK;
}

/* ConvTranspose geometry from X / W (node inputs xi, xi + 1): p and the output dims. */
static int conv_transpose_setup(const wt_node *n, const wt_tensor *X, const wt_tensor *W, int xi,
                                conv_params *p, int64_t *out) {
  int nsp;
  WT_TRY(check_xw(X, W, xi, &nsp));
  WT_TRY(read_group(n, &p->group));
  p->C = X->dims[1];
  p->M = W->dims[1] * p->group;
  if (W->dims[0] != p->C)
    return wt_errorf(WT_ERR_SHAPE, "input 'W' (index %d) has dim0 %lld but 'X' has %lld "
                     "channels; expected them equal", xi + 1, (long long)W->dims[0],
                     (long long)p->C);
  if (p->C % p->group != 0)
    return wt_errorf(WT_ERR_SHAPE, "'X' has %lld channels; expected a multiple of group %lld",
                     (long long)p->C, (long long)p->group);
  wt_window_attrs a;
  WT_TRY(wt_window_parse(n, nsp, W->dims + 2, 1, &a));

  int64_t opad[3] = {0, 0, 0}, oshape[3];
  const int64_t *v;
  int len = wt_attr_ints(n, "output_padding", &v);
  if (len >= 0) {
    if (len != nsp)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'output_padding' has %d values; expected "
                       "%d", len, nsp);
    for (int i = 0; i < nsp; i++) {
      if (v[i] < 0 || (v[i] >= a.stride[i] && v[i] >= a.dil[i]))
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'output_padding'[%d] is %lld; expected "
                         ">= 0 and less than the stride or dilation", i, (long long)v[i]);
      opad[i] = v[i];
    }
  }
  int have_oshape = wt_attr_ints(n, "output_shape", &v);
  if (have_oshape >= 0) {
    /* Spatial dims only per the spec; some exporters give the full [N, C, ...] shape. */
    if (have_oshape != nsp && have_oshape != nsp + 2)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'output_shape' has %d values; expected %d",
                       have_oshape, nsp);
    for (int i = 0; i < nsp; i++) oshape[i] = v[have_oshape - nsp + i];
  }

  for (int i = 0; i < nsp; i++) {
    int64_t in = X->dims[2 + i];
    if (in < 0)
      return wt_errorf(WT_ERR_SHAPE, "spatial dim %d of 'X' is unknown; expected a fixed size", i);
    int64_t full = a.stride[i] * (in - 1) + opad[i] + (a.k[i] - 1) * a.dil[i] + 1, o;
    int same = a.auto_pad == WT_AUTO_PAD_SAME_UPPER || a.auto_pad == WT_AUTO_PAD_SAME_LOWER;
    if (have_oshape >= 0 || same) {
      o = have_oshape >= 0 ? oshape[i] : in * a.stride[i];
      int64_t total = full - o;
      if (total < 0) total = 0; /* a larger output is zero (bias) past the full result */
      a.pad_b[i] = a.auto_pad == WT_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
    } else {
      if (a.auto_pad == WT_AUTO_PAD_VALID) a.pad_b[i] = a.pad_e[i] = 0;
      o = full - a.pad_b[i] - a.pad_e[i];
    }
    if (o < 1)
      return wt_errorf(WT_ERR_SHAPE, "spatial dim %d: output size would be %lld; expected >= 1",
                       i, (long long)o);
    out[2 + i] = o;
  }
  wt_window_geom(&a, out + 2, X->dims + 2, &p->g);
  out[0] = X->dims[0];
  out[1] = p->M;
  return WT_OK;
}

/* ---- Conv --------------------------------------------------------------------------------- */

static int conv_infer(wt_infer_ctx *ctx) {
  const wt_tensor *X = &ctx->in[0];
  conv_params *p = WT_PARAMS(ctx, conv_params);
  int64_t out[WT_MAX_RANK];
  WT_TRY(conv_setup(ctx->node, X, &ctx->in[1], 0, p, out));
  WT_TRY(check_bias(ctx, p->M, &p->has_bias));
  wt_set_shape(&ctx->out[0], WT_FLOAT, X->rank, out);
  return WT_OK;
}

/* ORT's rule for Conv and ConvTranspose: one <op>Grad(dY, X, W) node with the forward's
 * attributes and an output per forward input, unneeded ones omitted (empty names). */
static int conv_family_grad(wt_grad_ctx *c, const char *grad_op) {
  int n_in = wt_grad_node(c)->n_inputs;
  if (n_in > 3) n_in = 3;
  int node = wt_grad_op_grads(c, grad_op, WT_MS, 3, (int[]){GO(0), I(0), I(1)}, n_in, NULL);
  if (node >= 0) wt_window_copy_attrs(c, node);
  return wt_grad_status(c);
}

static int conv_grad_rule(wt_grad_ctx *c) { return conv_family_grad(c, "ConvGrad"); }
/* ConvTranspose: ONNX Runtime registers com.microsoft ConvTransposeGrad for CUDA and ROCm only
 * (its CPU and WebAssembly builds refuse such a training model: "Could not find an
 * implementation for ConvTransposeGrad(1)"), so the gradient is written with ops they run:
 *   dX = Conv(dY, W)                      (ConvTranspose's adjoint, same strides/pads/dilations/group)
 *   dW = ConvGrad(X, dY, W) output 1      (the weight gradient of that Conv, whose output is X)
 *   dB = ReduceSum(dY, every axis but 1)
 * With auto_pad or output_shape (pads derived from the output size) the fused ConvTransposeGrad,
 * which webtrain runs, is emitted as before. */
static const char *const convt_attrs[] = {"strides", "pads", "dilations", "group", "kernel_shape"};

static void copy_convt_attrs(wt_grad_ctx *c, int dst) {
  wt_grad_copy_attrs(c, dst, convt_attrs, (int)(sizeof convt_attrs / sizeof *convt_attrs));
}

static int conv_transpose_grad_rule(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  const char *auto_pad = wt_attr_string(n, "auto_pad", "NOTSET");
  int rank = wt_grad_value(c, I(0))->rank;
  if (strcmp(auto_pad, "NOTSET") || wt_node_attr(n, "output_shape") || rank < 3)
    return conv_family_grad(c, "ConvTransposeGrad");
  int has_bias = n->n_inputs > 2 && n->inputs[2] >= 0;
  if (wt_grad_need(c, 0)) {
    int dx = wt_grad_op1(c, "Conv", "", 2, (int[]){GO(0), I(1)});
    if (dx >= 0) copy_convt_attrs(c, wt_grad_last(c));
    wt_grad_set(c, 0, dx);
  }
  if (wt_grad_need(c, 1)) {
    int outs[2];
    int node = wt_grad_op(c, "ConvGrad", WT_MS, 3, (int[]){I(0), GO(0), I(1)}, 2, outs);
    if (node < 0) return wt_grad_status(c);
    copy_convt_attrs(c, node);
    wt_grad_omit_output(c, node, 0);
    wt_grad_set(c, 1, outs[1]);
  }
  if (has_bias && wt_grad_need(c, 2)) {
    int64_t axes[WT_MAX_RANK];
    int na = 0;
    for (int a = 0; a < rank; a++)
      if (a != 1) axes[na++] = a;
    wt_grad_set(c, 2, wt_grad_reduce_sum(c, GO(0), axes, na, 0));
  }
  return wt_grad_status(c);
}

static const wt_op_def wt_op_Conv = {.domain = "", .op_type = "Conv", .min_inputs = 2,
                              .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
                              .infer = conv_infer, .grad = conv_grad_rule};

/* ---- ConvTranspose ------------------------------------------------------------------------ */

static int conv_transpose_infer(wt_infer_ctx *ctx) {
  const wt_tensor *X = &ctx->in[0];
  conv_params *p = WT_PARAMS(ctx, conv_params);
  int64_t out[WT_MAX_RANK];
  WT_TRY(conv_transpose_setup(ctx->node, X, &ctx->in[1], 0, p, out));
  WT_TRY(check_bias(ctx, p->M, &p->has_bias));
  wt_set_shape(&ctx->out[0], WT_FLOAT, X->rank, out);
  return WT_OK;
}

static const wt_op_def wt_op_ConvTranspose = {.domain = "", .op_type = "ConvTranspose",
                                       .min_inputs = 2, .max_inputs = 3, .min_outputs = 1,
                                       .max_outputs = 1, .infer = conv_transpose_infer,
                                       .grad = conv_transpose_grad_rule};

/* ---- com.microsoft ConvGrad / ConvTransposeGrad ------------------------------------------- */

/* Shared infer: dY must have the forward output's shape; dX, dW, dB shaped like X, W, [M]. */
static int grad_infer(wt_infer_ctx *ctx, int transpose) {
  const wt_tensor *dY = &ctx->in[0], *X = &ctx->in[1], *W = &ctx->in[2];
  conv_params *p = WT_PARAMS(ctx, conv_params);
  int64_t out[WT_MAX_RANK];
  if (transpose) WT_TRY(conv_transpose_setup(ctx->node, X, W, 1, p, out));
  else WT_TRY(conv_setup(ctx->node, X, W, 1, p, out));
  WT_TRY(wt_expect_float(dY, "dY", 0));
  int same = dY->rank == X->rank;
  for (int i = 0; same && i < X->rank; i++) same = dY->dims[i] == out[i];
  if (!same) {
    char got[160], want[160];
    wt_shape_str(dY->rank, dY->dims, got, sizeof got);
    wt_shape_str(X->rank, out, want, sizeof want);
    return wt_errorf(WT_ERR_SHAPE, "input 'dY' (index 0) has shape %s; expected %s, the "
                     "forward output's shape", got, want);
  }
  int64_t db[1] = {p->M};
  for (int i = 0; i < ctx->n_out && i < 3; i++)
    p->want[i] = i < ctx->node->n_outputs && ctx->node->outputs[i] >= 0;
  if (ctx->n_out > 0) wt_set_shape(&ctx->out[0], WT_FLOAT, X->rank, X->dims);
  if (ctx->n_out > 1) wt_set_shape(&ctx->out[1], WT_FLOAT, W->rank, W->dims);
  if (ctx->n_out > 2) wt_set_shape(&ctx->out[2], WT_FLOAT, 1, db);
  return WT_OK;
}

static int conv_grad_infer(wt_infer_ctx *ctx) { return grad_infer(ctx, 0); }
static int conv_transpose_grad_infer(wt_infer_ctx *ctx) { return grad_infer(ctx, 1); }

static const wt_op_def wt_op_ConvGrad = {.domain = WT_MS, .op_type = "ConvGrad", .min_inputs = 3,
                                  .max_inputs = 3, .min_outputs = 1, .max_outputs = 3,
                                  .infer = conv_grad_infer,
                                  .flags = WT_OP_GRADIENT};

static const wt_op_def wt_op_ConvTransposeGrad = {.domain = WT_MS, .op_type = "ConvTransposeGrad",
                                           .min_inputs = 3, .max_inputs = 3, .min_outputs = 1,
                                           .max_outputs = 3, .infer = conv_transpose_grad_infer, .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_conv[] = {
    &wt_op_Conv,
    &wt_op_ConvTranspose,
    &wt_op_ConvGrad,
    &wt_op_ConvTransposeGrad,
    NULL,
};
