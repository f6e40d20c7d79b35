/* The CPU kernels of the shape family (definitions: src/ops/shape.c): views, Shape, Size,
 * Transpose, Expand, Tile and BroadcastGradientArgs. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"
#include "ops/shape_params.h"
#include "ops/shape_util.h"

static int view_run(const wt_run_ctx *ctx) {
  /* The planner usually aliases the buffers; copy only when it did not. */
  if (ctx->out[0].data != ctx->in[0].data)
    wt_copy_bytes(ctx->out[0].data, ctx->in[0].data, wt_nbytes(&ctx->in[0]));
  return WT_OK;
}

static int shape_run(const wt_run_ctx *ctx) {
  const shape_params *p = ctx->params;
  int64_t *o = ctx->out[0].data;
  for (int i = p->start; i < p->end; i++) o[i - p->start] = ctx->in[0].dims[i];
  return WT_OK;
}

static int size_run(const wt_run_ctx *ctx) {
  *(int64_t *)ctx->out[0].data = wt_numel(&ctx->in[0]);
  return WT_OK;
}

static int transpose_run(const wt_run_ctx *ctx) {
  const transpose_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  if (wt_numel(x) == 0) return WT_OK;
  wt_transpose(ctx->out[0].data, x->data, x->rank, x->dims, p->perm, wt_dtype_size(x->dtype));
  return WT_OK;
}

static int expand_run(const wt_run_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  if (wt_numel(y) == 0) return WT_OK;
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK], ss[WT_MAX_RANK];
  wt_strides(x->rank, x->dims, xs);
  wt_strides(y->rank, y->dims, ys);
  int off = y->rank - x->rank;
  for (int i = 0; i < y->rank; i++) {
    int j = i - off;
    ss[i] = (j < 0 || x->dims[j] == 1) ? 0 : xs[j];
  }
  wt_copy_strided(y->data, ys, x->data, ss, y->rank, y->dims, wt_dtype_size(x->dtype));
  return WT_OK;
}

static int tile_run(const wt_run_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  if (wt_numel(y) == 0) return WT_OK;
  /* View the output as [rep0, d0, rep1, d1, ...]: repeat axes read the input with stride 0. */
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK];
  int64_t dims[2 * WT_MAX_RANK], ds[2 * WT_MAX_RANK], ss[2 * WT_MAX_RANK];
  wt_strides(x->rank, x->dims, xs);
  wt_strides(y->rank, y->dims, ys);
  for (int i = 0; i < x->rank; i++) {
    dims[2 * i] = y->dims[i] / x->dims[i];
    ds[2 * i] = ys[i] * x->dims[i];
    ss[2 * i] = 0;
    dims[2 * i + 1] = x->dims[i];
    ds[2 * i + 1] = ys[i];
    ss[2 * i + 1] = xs[i];
  }
  wt_copy_strided(y->data, ds, x->data, ss, 2 * x->rank, dims, wt_dtype_size(x->dtype));
  return WT_OK;
}

static int bga_run(const wt_run_ctx *ctx) {
  int64_t a[WT_MAX_RANK], b[WT_MAX_RANK], ax[WT_MAX_RANK], bx[WT_MAX_RANK];
  int na = (int)wt_numel(&ctx->in[0]), nb = (int)wt_numel(&ctx->in[1]), nax, nbx;
  for (int i = 0; i < na; i++) a[i] = wt_get_int(&ctx->in[0], i);
  for (int i = 0; i < nb; i++) b[i] = wt_get_int(&ctx->in[1], i);
  WT_TRY(wt_su_broadcast_axes(a, na, b, nb, ax, &nax, bx, &nbx));
  if (ctx->out[0].data) wt_copy_bytes(ctx->out[0].data, ax, sizeof(int64_t) * (size_t)nax);
  if (ctx->n_out > 1 && ctx->out[1].data)
    wt_copy_bytes(ctx->out[1].data, bx, sizeof(int64_t) * (size_t)nbx);
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_shape[] = {
    {.key = {"", "Reshape"}, .run = view_run},
    {.key = {"", "Flatten"}, .run = view_run},
    {.key = {"", "Squeeze"}, .run = view_run},
    {.key = {"", "Unsqueeze"}, .run = view_run},
    {.key = {"", "Shape"}, .run = shape_run},
    {.key = {"", "Size"}, .run = size_run},
    {.key = {"", "Transpose"}, .run = transpose_run},
    {.key = {"", "Expand"}, .run = expand_run},
    {.key = {"", "Tile"}, .run = tile_run},
    {.key = {"com.microsoft", "BroadcastGradientArgs"}, .run = bga_run},
    WT_CPU_KERNELS_END};
