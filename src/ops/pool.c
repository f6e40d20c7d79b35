/* Op family: pool. MaxPool (with the optional Indices output), AveragePool, GlobalAveragePool
 * and GlobalMaxPool over float32 NC[D]HW inputs (1 to 3 spatial dims for the windowed pools,
 * any number for the global ones), their gradient rules and ORT's MaxPoolGrad /
 * AveragePoolGrad (ai.onnx domain in ORT, since version 9). Kernels in backend/cpu/pool*.c. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/conv_window.h"
#include "ops/op.h"
#include "ops/pool_params.h"

static int check_x(const wt_tensor *X) {
  WT_TRY(wt_expect_float(X, "X", 0));
  if (X->rank >= 2 && X->dims[1] < 0)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) has an unknown channel dim; expected a "
                     "fixed size");
  return WT_OK;
}

/* Shared by MaxPool / AveragePool: parses the window, sets output 0 and the geometry. */
static int window_pool_infer(wt_infer_ctx *ctx, int allow_dilations, pool_params *p) {
  const wt_tensor *X = &ctx->in[0];
  int nsp;
  WT_TRY(check_x(X));
  WT_TRY(wt_window_nsp("X", X->rank, &nsp));
  int64_t ceil_mode = wt_attr_int(ctx->node, "ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'ceil_mode' is %lld; expected 0 or 1",
                     (long long)ceil_mode);
  wt_window_attrs a;
  WT_TRY(wt_window_parse(ctx->node, nsp, NULL, allow_dilations, &a));
  int64_t out[WT_MAX_RANK];
  WT_TRY(wt_window_forward(&a, X->dims + 2, (int)ceil_mode, out + 2));
  wt_window_geom(&a, X->dims + 2, out + 2, &p->g);
  for (int d = 0; d < 3; d++) {
    int i = d - (3 - nsp);
    p->pad_end[d] = i < 0 ? 0 : a.pad_e[i];
  }
  out[0] = X->dims[0];
  out[1] = X->dims[1];
  wt_set_shape(&ctx->out[0], WT_FLOAT, X->rank, out);
  return WT_OK;
}

/* ---- gradient rules ----------------------------------------------------------------------- */

/* ORT: MaxPoolGrad(dY, Indices) with MaxPool's attributes; Indices is the forward's argmax. */
static int maxpool_grad_rule(wt_grad_ctx *c) {
  if (wt_attr_int(wt_grad_node(c), "storage_order", 0) != 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "MaxPool with storage_order=1 (column-major "
                        "Indices) has no gradient: MaxPoolGrad scatters through row-major "
                        "indices; use storage_order=0");
  int ind = wt_grad_forward_output(c, 1);
  int dx = wt_grad_op1(c, "MaxPoolGrad", "", 2, (int[]){GO(0), ind});
  if (dx >= 0) {
    wt_window_copy_attrs(c, wt_grad_last(c));
    wt_window_declare_like(c, dx, I(0));
  }
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

/* ORT: AveragePoolGrad(dY) with AveragePool's attributes. */
static int avgpool_grad_rule(wt_grad_ctx *c) {
  int dx = wt_grad_op1(c, "AveragePoolGrad", "", 1, (int[]){GO(0)});
  if (dx >= 0) {
    wt_window_copy_attrs(c, wt_grad_last(c));
    wt_window_declare_like(c, dx, I(0));
  }
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

/* ORT decomposes: dX = Expand(dY / S, Shape(X)), S the spatial size (a constant when known,
 * else Size(X) / Size(Y)). */
static int global_avgpool_grad_rule(wt_grad_ctx *c) {
  const wt_value *x = wt_grad_value(c, I(0));
  int64_t S = 1;
  int known = x->rank >= 3;
  for (int d = 2; known && d < x->rank; d++) {
    if (x->dims[d] < 0) known = 0;
    else S *= x->dims[d];
  }
  int scale;
  if (known) {
    scale = wt_grad_const_f32(c, (float)S);
  } else {
    int sx = wt_grad_op1(c, "Size", "", 1, (int[]){I(0)});
    int sy = wt_grad_op1(c, "Size", "", 1, (int[]){O(0)});
    int q = wt_grad_op1(c, "Div", "", 2, (int[]){sx, sy});
    scale = wt_grad_op1(c, "Cast", "", 1, &q);
    if (scale >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  }
  int d = wt_grad_op1(c, "Div", "", 2, (int[]){GO(0), scale});
  wt_grad_set(c, 0, wt_grad_expand_like(c, d, I(0)));
  return wt_grad_status(c);
}

/* No ORT rule: dY goes to the maxima of each plane, shared evenly between tied maxima:
 * mask = Cast(Equal(X, Y)), dX = mask * dY / ReduceSum(mask over spatial axes). */
static int global_maxpool_grad_rule(wt_grad_ctx *c) {
  int rank = wt_grad_value(c, I(0))->rank;
  if (rank < 3)
    return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of input 'X' must be known (>= 3)");
  int64_t axes[WT_MAX_RANK];
  for (int d = 2; d < rank; d++) axes[d - 2] = d;
  int eq = wt_grad_op1(c, "Equal", "", 2, (int[]){I(0), O(0)});
  int mask = wt_grad_op1(c, "Cast", "", 1, &eq);
  if (mask >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  int cnt = wt_grad_reduce_sum(c, mask, axes, rank - 2, 1);
  int share = wt_grad_op1(c, "Div", "", 2, (int[]){GO(0), cnt});
  wt_grad_set(c, 0, wt_grad_op1(c, "Mul", "", 2, (int[]){mask, share}));
  return wt_grad_status(c);
}

/* ---- MaxPool ------------------------------------------------------------------------------ */

static int maxpool_infer(wt_infer_ctx *ctx) {
  pool_params *p = WT_PARAMS(ctx, pool_params);
  /* dilations and ceil_mode arrived in opset 10; earlier opsets simply never set them. */
  WT_TRY(window_pool_infer(ctx, 1, p));
  int64_t so = wt_attr_int(ctx->node, "storage_order", 0);
  if (so != 0 && so != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'storage_order' is %lld; expected 0 (row "
                     "major) or 1 (column major)", (long long)so);
  p->storage_order = (int)so;
  if (ctx->n_out >= 2) {
    wt_set_shape(&ctx->out[1], WT_INT64, ctx->out[0].rank, ctx->out[0].dims);
    p->want_indices = ctx->node->n_outputs >= 2 && ctx->node->outputs[1] >= 0;
  }
  return WT_OK;
}

static const wt_op_def wt_op_MaxPool = {.domain = "", .op_type = "MaxPool", .min_inputs = 1,
                                 .max_inputs = 1, .min_outputs = 1, .max_outputs = 2,
                                 .infer = maxpool_infer,
                                 .grad = maxpool_grad_rule};

/* ---- AveragePool -------------------------------------------------------------------------- */

static int avgpool_infer(wt_infer_ctx *ctx) {
  pool_params *p = WT_PARAMS(ctx, pool_params);
  /* dilations is an opset-19 attribute; accepting it earlier is harmless. */
  WT_TRY(window_pool_infer(ctx, 1, p));
  int64_t cip = wt_attr_int(ctx->node, "count_include_pad", 0);
  if (cip != 0 && cip != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'count_include_pad' is %lld; expected 0 "
                     "or 1", (long long)cip);
  p->count_include_pad = (int)cip;
  return WT_OK;
}

static const wt_op_def wt_op_AveragePool = {.domain = "", .op_type = "AveragePool", .min_inputs = 1,
                                     .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                     .infer = avgpool_infer,
                                     .grad = avgpool_grad_rule};

/* ---- GlobalAveragePool / GlobalMaxPool ---------------------------------------------------- */

static int global_pool_infer(wt_infer_ctx *ctx) {
  const wt_tensor *X = &ctx->in[0];
  WT_TRY(check_x(X));
  if (X->rank < 3)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) has rank %d; expected rank >= 3 "
                     "(N, C, spatial...)", X->rank);
  for (int i = 2; i < X->rank; i++)
    if (X->dims[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) spatial dim %d is unknown; expected "
                       "a fixed size", i - 2);
  int64_t out[WT_MAX_RANK];
  out[0] = X->dims[0];
  out[1] = X->dims[1];
  for (int i = 2; i < X->rank; i++) out[i] = 1;
  wt_set_shape(&ctx->out[0], WT_FLOAT, X->rank, out);
  return WT_OK;
}

static const wt_op_def wt_op_GlobalAveragePool = {.domain = "", .op_type = "GlobalAveragePool",
                                           .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
                                           .max_outputs = 1, .infer = global_pool_infer,
                                           .grad = global_avgpool_grad_rule};

static const wt_op_def wt_op_GlobalMaxPool = {.domain = "", .op_type = "GlobalMaxPool", .min_inputs = 1,
                                       .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                       .infer = global_pool_infer,
                                       .grad = global_maxpool_grad_rule};

/* ---- MaxPoolGrad / AveragePoolGrad (ORT, ai.onnx domain) ---------------------------------- */

/* Forward output size along spatial dim i for input size `in`; -1 when the window does not fit. */
static int64_t pool_out_size(const wt_window_attrs *a, int i, int64_t in, int ceil_mode) {
  int64_t dk = (a->k[i] - 1) * a->dil[i] + 1, s = a->stride[i];
  if (a->auto_pad == WT_AUTO_PAD_SAME_UPPER || a->auto_pad == WT_AUTO_PAD_SAME_LOWER)
    return (in + s - 1) / s;
  int64_t pb = a->auto_pad == WT_AUTO_PAD_VALID ? 0 : a->pad_b[i];
  int64_t pe = a->auto_pad == WT_AUTO_PAD_VALID ? 0 : a->pad_e[i];
  int64_t span = in + pb + pe - dk;
  if (span < 0) return -1;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + pb) o--;
  return o;
}

/* dX's shape: N, C from dY; spatial dims from the declared output shape when the planner
 * seeds ctx->out[0] with it (dX's value_info), else an input size the forward maps onto dY's.
 * Several do when stride > 1: the guess is a multiple of the stride (the even sizes of CNNs),
 * else the smallest.
 * Resolves the geometry into p. */
static int pool_grad_setup(wt_infer_ctx *ctx, const wt_tensor *dY, int allow_bare,
                           pool_params *p, int64_t *xd) {
  int nsp;
  WT_TRY(wt_expect_float(dY, "dY", 0));
  WT_TRY(wt_window_nsp("dY", dY->rank, &nsp));
  const wt_tensor *decl = &ctx->out[0];
  int declared = decl->rank == dY->rank;
  for (int d = 2; declared && d < dY->rank; d++) declared = decl->dims[d] > 0;
  int64_t ceil_mode = wt_attr_int(ctx->node, "ceil_mode", 0);
  xd[0] = dY->dims[0];
  xd[1] = dY->dims[1];
  if (!wt_node_attr(ctx->node, "kernel_shape")) {
    /* Older ORT MaxPoolGrad nodes carry no attributes: the declared shape is all it needs. */
    if (!declared || !allow_bare)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'kernel_shape' is missing; expected the "
                       "forward pool's attributes%s", allow_bare ? " or a declared dX shape" : "");
    for (int d = 2; d < dY->rank; d++) xd[d] = decl->dims[d];
    wt_set_shape(&ctx->out[0], WT_FLOAT, dY->rank, xd);
    return WT_OK;
  }
  wt_window_attrs a;
  WT_TRY(wt_window_parse(ctx->node, nsp, NULL, 1, &a));
  for (int i = 0; i < nsp; i++) {
    int64_t o = dY->dims[2 + i], s = a.stride[i];
    int64_t dk = (a.k[i] - 1) * a.dil[i] + 1;
    if (declared) {
      xd[2 + i] = decl->dims[2 + i];
      if (pool_out_size(&a, i, xd[2 + i], (int)ceil_mode) != o)
        return wt_errorf(WT_ERR_SHAPE, "spatial dim %d: the declared input size %lld does not "
                         "pool to dY's %lld", i, (long long)xd[2 + i], (long long)o);
      continue;
    }
    int same = a.auto_pad == WT_AUTO_PAD_SAME_UPPER || a.auto_pad == WT_AUTO_PAD_SAME_LOWER;
    int64_t pads = a.auto_pad == WT_AUTO_PAD_NOTSET ? a.pad_b[i] + a.pad_e[i] : 0;
    int64_t best = -1, lo = same ? (o - 1) * s + 1 : (o - 2) * s + dk - pads;
    if (lo < 1) lo = 1;
    for (int64_t in = lo; in <= o * s + dk; in++) {
      if (pool_out_size(&a, i, in, (int)ceil_mode) != o) continue;
      if (best < 0) best = in;
      if (in % s == 0) {
        best = in;
        break;
      }
    }
    if (best < 0)
      return wt_errorf(WT_ERR_SHAPE, "spatial dim %d: no input size pools to dY's %lld with "
                       "these attributes", i, (long long)o);
    xd[2 + i] = best;
  }
  int64_t out[3];
  WT_TRY(wt_window_forward(&a, xd + 2, (int)ceil_mode, out));
  wt_window_geom(&a, xd + 2, dY->dims + 2, &p->g);
  for (int d = 0; d < 3; d++) {
    int i = d - (3 - nsp);
    p->pad_end[d] = i < 0 ? 0 : a.pad_e[i];
  }
  wt_set_shape(&ctx->out[0], WT_FLOAT, dY->rank, xd);
  return WT_OK;
}

static int maxpool_grad_infer(wt_infer_ctx *ctx) {
  const wt_tensor *dY = &ctx->in[0], *ind = &ctx->in[1];
  pool_params *p = WT_PARAMS(ctx, pool_params);
  int64_t xd[WT_MAX_RANK];
  WT_TRY(wt_expect_dtype(ind, "Indices", 1, WT_INT64));
  WT_TRY(wt_expect_shape_like(ind, "Indices", 1, dY, "dY"));
  if (wt_attr_int(ctx->node, "storage_order", 0) != 0)
    return wt_errorf(WT_ERR_UNSUPPORTED, "attribute 'storage_order' is 1; MaxPoolGrad scatters "
                     "through row-major indices (storage_order 0)");
  return pool_grad_setup(ctx, dY, 1, p, xd);
}

static int avgpool_grad_infer(wt_infer_ctx *ctx) {
  pool_params *p = WT_PARAMS(ctx, pool_params);
  int64_t xd[WT_MAX_RANK];
  WT_TRY(pool_grad_setup(ctx, &ctx->in[0], 0, p, xd));
  int64_t cip = wt_attr_int(ctx->node, "count_include_pad", 0);
  if (cip != 0 && cip != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'count_include_pad' is %lld; expected 0 "
                     "or 1", (long long)cip);
  p->count_include_pad = (int)cip;
  return WT_OK;
}

static const wt_op_def wt_op_MaxPoolGrad = {.domain = "", .op_type = "MaxPoolGrad", .min_inputs = 2,
                                     .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                     .infer = maxpool_grad_infer,
                                     .flags = WT_OP_GRADIENT};

static const wt_op_def wt_op_AveragePoolGrad = {.domain = "", .op_type = "AveragePoolGrad",
                                         .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
                                         .max_outputs = 1, .infer = avgpool_grad_infer, .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_pool[] = {
    &wt_op_AveragePool,
    &wt_op_AveragePoolGrad,
    &wt_op_GlobalAveragePool,
    &wt_op_GlobalMaxPool,
    &wt_op_MaxPool,
    &wt_op_MaxPoolGrad,
    NULL,
};
