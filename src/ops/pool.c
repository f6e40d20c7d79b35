/* Op family: pool. MaxPool (with the optional Indices output), AveragePool, GlobalAveragePool
 * and GlobalMaxPool over float32 NC[D]HW inputs (1 to 3 spatial dims for the windowed pools,
 * any number for the global ones). Kernels in kernels/pool.c. */
#include <assert.h>
#include <string.h>

#include "kernels/pool.h"
#include "ops/conv_window.h"
#include "ops/op.h"

typedef struct pool_params {
  wt_conv_geom g;
  int64_t pad_end[3];           /* normalized trailing pads, for count_include_pad */
  int count_include_pad;
  int storage_order;
  int want_indices;
} pool_params;
static_assert(sizeof(pool_params) <= WT_PARAMS_MAX, "pool_params too big");

static int check_x(const wt_tensor *X) {
  if (X->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_UNSUPPORTED, "input 'X' (index 0) has dtype %s; expected float32 "
                     "(webtrain pools float32 only)", wt_dtype_name(X->dtype));
  if (X->rank >= 2 && X->dims[1] < 0)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) has an unknown channel dim; expected a "
                     "fixed size");
  return WT_OK;
}

static int64_t plane_count(const wt_tensor *X) { return X->dims[0] * X->dims[1]; }

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
  ctx->scratch_bytes = sizeof(float) * (size_t)wt_pool_scratch_floats(&p->g);
  return WT_OK;
}

/* ---- MaxPool ------------------------------------------------------------------------------ */

static int maxpool_infer(wt_infer_ctx *ctx) {
  pool_params *p = ctx->params;
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

static int maxpool_run(const wt_run_ctx *ctx) {
  const pool_params *p = ctx->params;
  const wt_tensor *X = &ctx->in[0];
  if (p->want_indices)
    wt_maxpool_indices(&p->g, plane_count(X), p->storage_order, X->data, ctx->out[0].data,
                       ctx->out[1].data);
  else
    wt_maxpool(&p->g, plane_count(X), X->data, ctx->out[0].data, ctx->scratch);
  return WT_OK;
}

const wt_op_def wt_op_MaxPool = {.domain = "", .op_type = "MaxPool", .min_inputs = 1,
                                 .max_inputs = 1, .min_outputs = 1, .max_outputs = 2,
                                 .infer = maxpool_infer, .run = maxpool_run};

/* ---- AveragePool -------------------------------------------------------------------------- */

static int avgpool_infer(wt_infer_ctx *ctx) {
  pool_params *p = ctx->params;
  /* dilations is an opset-19 attribute; accepting it earlier is harmless. */
  WT_TRY(window_pool_infer(ctx, 1, p));
  int64_t cip = wt_attr_int(ctx->node, "count_include_pad", 0);
  if (cip != 0 && cip != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'count_include_pad' is %lld; expected 0 "
                     "or 1", (long long)cip);
  p->count_include_pad = (int)cip;
  return WT_OK;
}

static int avgpool_run(const wt_run_ctx *ctx) {
  const pool_params *p = ctx->params;
  const wt_tensor *X = &ctx->in[0];
  wt_avgpool(&p->g, p->pad_end, p->count_include_pad, plane_count(X), X->data,
             ctx->out[0].data, ctx->scratch);
  return WT_OK;
}

const wt_op_def wt_op_AveragePool = {.domain = "", .op_type = "AveragePool", .min_inputs = 1,
                                     .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                     .infer = avgpool_infer, .run = avgpool_run};

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

static int global_avgpool_run(const wt_run_ctx *ctx) {
  const wt_tensor *X = &ctx->in[0];
  wt_global_avgpool(plane_count(X), wt_dims_prod(X->dims, 2, X->rank), X->data,
                    ctx->out[0].data);
  return WT_OK;
}

static int global_maxpool_run(const wt_run_ctx *ctx) {
  const wt_tensor *X = &ctx->in[0];
  wt_global_maxpool(plane_count(X), wt_dims_prod(X->dims, 2, X->rank), X->data,
                    ctx->out[0].data);
  return WT_OK;
}

const wt_op_def wt_op_GlobalAveragePool = {.domain = "", .op_type = "GlobalAveragePool",
                                           .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
                                           .max_outputs = 1, .infer = global_pool_infer,
                                           .run = global_avgpool_run};

const wt_op_def wt_op_GlobalMaxPool = {.domain = "", .op_type = "GlobalMaxPool", .min_inputs = 1,
                                       .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                       .infer = global_pool_infer, .run = global_maxpool_run};

const wt_op_def *const wt_ops_pool[] = {
    &wt_op_AveragePool,
    &wt_op_GlobalAveragePool,
    &wt_op_GlobalMaxPool,
    &wt_op_MaxPool,
    NULL,
};
