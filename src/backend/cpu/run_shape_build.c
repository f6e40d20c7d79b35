/* The CPU kernels of the shape_build family (definitions: src/ops/shape_build.c): Concat,
 * Split, Constant, ConstantOfShape and Range. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"
#include "ops/shape_build_params.h"

static int concat_run(const wt_run_ctx *ctx) {
  const axis_params *p = ctx->params;
  const wt_tensor *y = &ctx->out[0];
  size_t elem = wt_dtype_size(y->dtype);
  int64_t outer = wt_dims_prod(y->dims, 0, p->axis);
  size_t out_row = (size_t)wt_dims_prod(y->dims, p->axis, y->rank) * elem, off = 0;
  char *dst = y->data;
  for (int i = 0; i < ctx->n_in; i++) {
    const wt_tensor *t = &ctx->in[i];
    if (wt_numel(t) == 0) continue;
    size_t row = (size_t)wt_dims_prod(t->dims, p->axis, t->rank) * elem;
    const char *src = t->data;
    for (int64_t o = 0; o < outer; o++) memcpy(dst + (size_t)o * out_row + off, src + (size_t)o * row, row);
    off += row;
  }
  return WT_OK;
}

static int split_run(const wt_run_ctx *ctx) {
  const axis_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  size_t elem = wt_dtype_size(x->dtype);
  int64_t outer = wt_dims_prod(x->dims, 0, p->axis);
  size_t in_row = (size_t)wt_dims_prod(x->dims, p->axis, x->rank) * elem, off = 0;
  const char *src = x->data;
  for (int i = 0; i < ctx->n_out; i++) {
    const wt_tensor *t = &ctx->out[i];
    if (wt_numel(t) == 0) continue;
    size_t row = (size_t)wt_dims_prod(t->dims, p->axis, t->rank) * elem;
    char *dst = t->data;
    for (int64_t o = 0; o < outer; o++) memcpy(dst + (size_t)o * row, src + (size_t)o * in_row + off, row);
    off += row;
  }
  return WT_OK;
}

static int constant_run(const wt_run_ctx *ctx) {
  const wt_node *n = ctx->node;
  const wt_tensor *y = &ctx->out[0];
  size_t nb = wt_nbytes(y);
  const wt_attr *a;
  if ((a = wt_node_attr(n, "value"))) {
    wt_copy_bytes(y->data, a->t->t.data, nb);
  } else if ((a = wt_node_attr(n, "value_float"))) {
    memcpy(y->data, &a->f, sizeof(float));
  } else if ((a = wt_node_attr(n, "value_int"))) {
    memcpy(y->data, &a->i, sizeof(int64_t));
  } else if ((a = wt_node_attr(n, "value_floats"))) {
    wt_copy_bytes(y->data, a->floats, nb);
  } else if ((a = wt_node_attr(n, "value_ints"))) {
    wt_copy_bytes(y->data, a->ints, nb);
  }
  return WT_OK;
}

static int cos_run(const wt_run_ctx *ctx) {
  const cos_params *p = ctx->params;
  const wt_tensor *y = &ctx->out[0];
  wt_fill(y->data, wt_numel(y), p->value, wt_dtype_size(y->dtype));
  return WT_OK;
}

static int range_run(const wt_run_ctx *ctx) {
  const range_params *p = ctx->params;
  const wt_tensor *y = &ctx->out[0];
  int64_t n = y->dims[0];
  if (y->dtype == WT_FLOAT) {
    float *o = y->data;
    for (int64_t i = 0; i < n; i++) o[i] = (float)(p->fstart + (double)i * p->fdelta);
  } else if (y->dtype == WT_INT32) {
    int32_t *o = y->data;
    for (int64_t i = 0; i < n; i++) o[i] = (int32_t)(p->istart + i * p->idelta);
  } else {
    int64_t *o = y->data;
    for (int64_t i = 0; i < n; i++) o[i] = p->istart + i * p->idelta;
  }
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_shape_build[] = {
    {.key = {"", "Concat"}, .run = concat_run},
    {.key = {"", "Split"}, .run = split_run},
    {.key = {"", "Constant"}, .run = constant_run},
    {.key = {"", "ConstantOfShape"}, .run = cos_run},
    {.key = {"", "Range"}, .run = range_run},
    WT_CPU_KERNELS_END};
