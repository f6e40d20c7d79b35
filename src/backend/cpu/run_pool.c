/* The CPU kernels of the pool family (definitions: src/ops/pool.c): MaxPool, AveragePool, the
 * global pools and their gradients (backend/cpu/pool*.c). */
#include "backend/cpu/kernel.h"
#include "backend/cpu/pool.h"
#include "ops/op.h"
#include "ops/pool_params.h"

static int64_t plane_count(const wt_tensor *X) { return X->dims[0] * X->dims[1]; }

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

static int avgpool_run(const wt_run_ctx *ctx) {
  const pool_params *p = ctx->params;
  const wt_tensor *X = &ctx->in[0];
  wt_avgpool(&p->g, p->pad_end, p->count_include_pad, plane_count(X), X->data,
             ctx->out[0].data, ctx->scratch);
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

static int maxpool_grad_run(const wt_run_ctx *ctx) {
  const wt_tensor *dY = &ctx->in[0], *dX = &ctx->out[0];
  int64_t n_dx = wt_numel(dX), planes = dX->rank >= 2 ? dX->dims[0] * dX->dims[1] : 1;
  int64_t bad = wt_maxpool_grad(planes, wt_numel(dY), dY->data, ctx->in[1].data, n_dx, dX->data);
  if (bad >= 0)
    return wt_errorf(WT_ERR_RUNTIME, "Indices[%lld] is %lld; expected an index into dX's %lld "
                     "elements", (long long)bad,
                     (long long)((const int64_t *)ctx->in[1].data)[bad], (long long)n_dx);
  return WT_OK;
}

static int avgpool_grad_run(const wt_run_ctx *ctx) {
  const pool_params *p = ctx->params;
  const wt_tensor *dX = &ctx->out[0];
  wt_avgpool_grad(&p->g, p->pad_end, p->count_include_pad, dX->dims[0] * dX->dims[1],
                  ctx->in[0].data, dX->data, ctx->scratch);
  return WT_OK;
}

static size_t window_scratch(const wt_infer_ctx *ctx) {
  return sizeof(float) * (size_t)wt_pool_scratch_floats(&((const pool_params *)ctx->params)->g);
}

const wt_cpu_kernel wt_cpu_kernels_pool[] = {
    {.key = {"", "MaxPool"}, .run = maxpool_run, .scratch = window_scratch},
    {.key = {"", "AveragePool"}, .run = avgpool_run, .scratch = window_scratch},
    {.key = {"", "GlobalAveragePool"}, .run = global_avgpool_run},
    {.key = {"", "GlobalMaxPool"}, .run = global_maxpool_run},
    {.key = {"", "MaxPoolGrad"}, .run = maxpool_grad_run},
    {.key = {"", "AveragePoolGrad"}, .run = avgpool_grad_run, .scratch = window_scratch},
    WT_CPU_KERNELS_END};
