/* The CPU kernels of the reduce family (definitions: src/ops/reduce.c): Reduce*, ArgMax /
 * ArgMin, CumSum and TopK over [outer, n, inner] views. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/reduce.h"
#include "ops/op.h"
#include "ops/reduce_params.h"

static void reduce_pass(int dtype, int kind, const void *src, int64_t outer, int64_t n,
                        int64_t inner, void *dst) {
  switch (dtype) {
    case WT_FLOAT: wt_reduce_f32(kind, src, outer, n, inner, dst); break;
    case WT_INT32: wt_reduce_i32(kind, src, outer, n, inner, dst); break;
    default: wt_reduce_i64(kind, src, outer, n, inner, dst); break;
  }
}

static int reduce_run(const wt_run_ctx *ctx) {
  const reduce_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  wt_tensor *y = &ctx->out[0];
  if (p->noop) {
    if (y->data != x->data && wt_nbytes(x)) memcpy(y->data, x->data, wt_nbytes(x));
    return WT_OK;
  }
  size_t es = wt_dtype_size(x->dtype);
  /* no scratch when a single pass writes straight to the output */
  void *bufs[2] = {ctx->scratch, ctx->scratch ? (char *)ctx->scratch + (size_t)p->buf0 * es : NULL};
  const void *src = x->data;
  for (int k = 0; k < p->n_pass; k++) {
    void *dst = k == p->n_pass - 1 ? y->data : bufs[k % 2];
    int kind = k == 0 ? p->kind : (int)wt_reduce_next_kind(p->kind);
    reduce_pass(x->dtype, kind, src, p->outer[k], p->n[k], p->inner[k], dst);
    src = dst;
  }
  int64_t m = wt_numel(y);
  if (p->final == FINAL_MEAN) {
    if (x->dtype == WT_FLOAT) {
      float *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = p->count ? d[i] / (float)p->count : NAN;
    } else if (x->dtype == WT_INT32) {
      int32_t *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = p->count ? (int32_t)(d[i] / p->count) : 0;
    } else {
      int64_t *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = p->count ? d[i] / p->count : 0;
    }
  } else if (p->final == FINAL_LOG) {
    if (x->dtype == WT_FLOAT) {
      float *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = logf(d[i]);
    } else if (x->dtype == WT_INT32) {
      int32_t *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = (int32_t)log((double)d[i]);
    } else {
      int64_t *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = (int64_t)log((double)d[i]);
    }
  } else if (p->final == FINAL_SQRT) {
    if (x->dtype == WT_FLOAT) {
      float *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = sqrtf(d[i]);
    } else if (x->dtype == WT_INT32) {
      int32_t *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = (int32_t)sqrt((double)(uint32_t)d[i]);
    } else {
      int64_t *d = y->data;
      for (int64_t i = 0; i < m; i++) d[i] = (int64_t)sqrt((double)(uint64_t)d[i]);
    }
  }
  return WT_OK;
}

static int argext_run(const wt_run_ctx *ctx) {
  const axis_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  int64_t *y = ctx->out[0].data;
  switch (x->dtype) {
    case WT_FLOAT: wt_argext_f32(x->data, p->outer, p->n, p->inner, p->a, p->b, y); break;
    case WT_INT32: wt_argext_i32(x->data, p->outer, p->n, p->inner, p->a, p->b, y); break;
    default: wt_argext_i64(x->data, p->outer, p->n, p->inner, p->a, p->b, y); break;
  }
  return WT_OK;
}

static int cumsum_run(const wt_run_ctx *ctx) {
  axis_params q = *(const axis_params *)ctx->params;
  const wt_tensor *x = &ctx->in[0];
  int64_t axis = wt_get_int(&ctx->in[1], 0);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_RUNTIME, "axis %lld is out of range for rank %d", (long long)axis,
                     x->rank);
  split_at_axis(x, ax, &q);
  void *y = ctx->out[0].data;
  switch (x->dtype) {
    case WT_FLOAT: wt_cumsum_f32(x->data, q.outer, q.n, q.inner, q.a, q.b, y); break;
    case WT_INT32: wt_cumsum_i32(x->data, q.outer, q.n, q.inner, q.a, q.b, y); break;
    default: wt_cumsum_i64(x->data, q.outer, q.n, q.inner, q.a, q.b, y); break;
  }
  return WT_OK;
}

static int topk_run(const wt_run_ctx *ctx) {
  const axis_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  if (ctx->n_in > 1 && ctx->in[1].data && wt_get_int(&ctx->in[1], 0) != p->k)
    return wt_errorf(WT_ERR_RUNTIME, "K changed to %lld after planning (planned %lld)",
                     (long long)wt_get_int(&ctx->in[1], 0), (long long)p->k);
  wt_topk(x->dtype, x->data, p->outer, p->n, p->inner, p->k, p->a, ctx->out[0].data,
          ctx->out[1].data, ctx->scratch);
  return WT_OK;
}

/* The intermediate passes' two ping-pong buffers. */
static size_t reduce_scratch(const wt_infer_ctx *ctx) {
  const reduce_params *p = ctx->params;
  return (size_t)(p->buf0 + p->buf1) * wt_dtype_size(ctx->in[0].dtype);
}

static size_t topk_scratch(const wt_infer_ctx *ctx) {
  return (size_t)(2 * ((const axis_params *)ctx->params)->n) * sizeof(int64_t);
}

#define REDUCE_KERNEL(NAME, ...) {.key = {"", #NAME}, .run = reduce_run, .scratch = reduce_scratch},
const wt_cpu_kernel wt_cpu_kernels_reduce[] = {
    REDUCE_OPS(REDUCE_KERNEL)
    {.key = {"", "ArgMax"}, .run = argext_run},
    {.key = {"", "ArgMin"}, .run = argext_run},
    {.key = {"", "CumSum"}, .run = cumsum_run},
    {.key = {"", "TopK"}, .run = topk_run, .scratch = topk_scratch},
    WT_CPU_KERNELS_END};
