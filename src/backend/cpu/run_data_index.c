/* The CPU kernels of the data_index family (definitions: src/ops/data_index.c): Gather,
 * GatherElements, ScatterElements, GatherND, ScatterND and their gradient ops. */
#include <assert.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/kernel.h"
#include "base/half.h"
#include "ops/data_index_params.h"
#include "ops/op.h"
#include "ops/shape_util.h"

/* dst[0..n) op= src[0..n) for one of the arithmetic reductions. */
#define REDUCE_LOOP(T)                                                       \
  do {                                                                       \
    for (int64_t j = 0; j < n; j++) {                                        \
      T a, b;                                                                \
      memcpy(&a, d + j * (int64_t)sizeof(T), sizeof(T));                     \
      memcpy(&b, s + j * (int64_t)sizeof(T), sizeof(T));                     \
      switch (red) {                                                         \
        case RED_ADD: a = (T)(a + b); break;                                 \
        case RED_MUL: a = (T)(a * b); break;                                 \
        case RED_MAX: a = b > a ? b : a; break;                              \
        default: a = b < a ? b : a; break;                                   \
      }                                                                      \
      memcpy(d + j * (int64_t)sizeof(T), &a, sizeof(T));                     \
    }                                                                        \
  } while (0)

/* Walks every element of `ind`: calls back with its linear position and the data offset of
 * its coordinates with the axis coordinate replaced by the (checked) index value. */
#define ELEMENTS_WALK(BODY)                                                          \
  do {                                                                               \
    int64_t xs_[WT_MAX_RANK], idx_[WT_MAX_RANK] = {0}, base_ = 0;                    \
    wt_strides(x->rank, x->dims, xs_);                                               \
    int64_t n_ = wt_numel(ind), d_ = x->dims[p->axis];                               \
    int is64_ = ind->dtype == WT_INT64;                                              \
    for (int64_t pos = 0; pos < n_; pos++) {                                         \
      int64_t v_ = wt_su_idx(ind->data, is64_, pos);                                 \
      WT_TRY(fix_index(&v_, d_, pos, p->axis));                                      \
      int64_t off = base_ + v_ * xs_[p->axis];                                       \
      BODY;                                                                          \
      for (int k_ = ind->rank - 1; k_ >= 0; k_--) {                                  \
        if (k_ != p->axis) base_ += xs_[k_];                                         \
        if (++idx_[k_] < ind->dims[k_]) break;                                       \
        if (k_ != p->axis) base_ -= xs_[k_] * ind->dims[k_];                         \
        idx_[k_] = 0;                                                                \
      }                                                                              \
    }                                                                                \
  } while (0)

/* Resolves index v for an axis of size d; error names the index and the valid range. */
static int fix_index(int64_t *v, int64_t d, int64_t pos, int axis) {
  int64_t i = *v;
  if (i < -d || i >= d)
    return wt_errorf(WT_ERR_RUNTIME, "index %lld (element %lld of 'indices') is out of range for "
                     "axis %d of size %lld; valid range is [%lld, %lld]", (long long)i,
                     (long long)pos, axis, (long long)d, (long long)-d, (long long)(d - 1));
  *v = i < 0 ? i + d : i;
  return WT_OK;
}

static void apply(char *d, const char *s, int64_t n, int dtype, int red) {
  if (red == RED_NONE) {
    wt_copy_bytes(d, s, (size_t)n * wt_dtype_size(dtype));
    return;
  }
  /* Integer add/mul wrap like ONNX Runtime; unsigned arithmetic avoids signed-overflow UB. */
  if (dtype == WT_FLOAT) REDUCE_LOOP(float);
  else if (dtype == WT_INT32 && (red == RED_ADD || red == RED_MUL)) {
    for (int64_t j = 0; j < n; j++) {
      uint32_t a, b;
      memcpy(&a, d + 4 * j, 4);
      memcpy(&b, s + 4 * j, 4);
      a = red == RED_ADD ? a + b : a * b;
      memcpy(d + 4 * j, &a, 4);
    }
  } else if (dtype == WT_INT64 && (red == RED_ADD || red == RED_MUL)) {
    for (int64_t j = 0; j < n; j++) {
      uint64_t a, b;
      memcpy(&a, d + 8 * j, 8);
      memcpy(&b, s + 8 * j, 8);
      a = red == RED_ADD ? a + b : a * b;
      memcpy(d + 8 * j, &a, 8);
    }
  } else if (dtype == WT_INT32) REDUCE_LOOP(int32_t);
  else REDUCE_LOOP(int64_t);
}

/* gather_run from float16 data: each row widened into the float output as it is copied. */
static int gather_run_widen(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1];
  int64_t outer = wt_dims_prod(x->dims, 0, p->axis), d = x->dims[p->axis];
  int64_t row = wt_dims_prod(x->dims, p->axis + 1, x->rank), ni = wt_numel(ind);
  const uint16_t *src = x->data;
  float *dst = ctx->out[0].data;
  for (int64_t j = 0; j < ni; j++) {
    int64_t v = wt_su_idx(ind->data, ind->dtype == WT_INT64, j);
    WT_TRY(fix_index(&v, d, j, p->axis));
    for (int64_t o = 0; o < outer && row; o++)
      wt_f16_to_f32_n(dst + (o * ni + j) * row, src + (o * d + v) * row, (size_t)row);
  }
  return WT_OK;
}

static int gather_run(const wt_run_ctx *ctx) {
  if (((const index_params *)ctx->params)->widen) return gather_run_widen(ctx);
  const index_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1];
  size_t elem = wt_dtype_size(x->dtype);
  int64_t outer = wt_dims_prod(x->dims, 0, p->axis), d = x->dims[p->axis];
  size_t row = (size_t)wt_dims_prod(x->dims, p->axis + 1, x->rank) * elem;
  int64_t ni = wt_numel(ind);
  int is64 = ind->dtype == WT_INT64;
  const char *src = x->data;
  char *dst = ctx->out[0].data;
  for (int64_t j = 0; j < ni; j++) {
    int64_t v = wt_su_idx(ind->data, is64, j);
    WT_TRY(fix_index(&v, d, j, p->axis));
    if (!row) continue;
    for (int64_t o = 0; o < outer; o++)
      memcpy(dst + (size_t)(o * ni + j) * row, src + (size_t)(o * d + v) * row, row);
  }
  return WT_OK;
}

static int gather_elements_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1];
  size_t elem = wt_dtype_size(x->dtype);
  const char *src = x->data;
  char *dst = ctx->out[0].data;
  ELEMENTS_WALK(memcpy(dst + (size_t)pos * elem, src + (size_t)off * elem, elem));
  return WT_OK;
}

static int scatter_elements_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1], *u = &ctx->in[2];
  size_t elem = wt_dtype_size(x->dtype);
  char *dst = ctx->out[0].data;
  const char *upd = u->data;
  wt_copy_bytes(dst, x->data, wt_nbytes(x));
  ELEMENTS_WALK(apply(dst + (size_t)off * elem, upd + (size_t)pos * elem, 1, x->dtype,
                      p->reduction));
  return WT_OK;
}

/* Data element offset of index tuple t (last values at ind) within one batch block. */
static int nd_offset(const wt_tensor *x, int first, const int64_t *ind, int64_t last,
                     const int64_t *xs, int64_t t, int64_t *off) {
  *off = 0;
  for (int64_t k = 0; k < last; k++) {
    int64_t v = ind[k];
    int a = first + (int)k;
    WT_TRY(fix_index(&v, x->dims[a], t * last + k, a));
    *off += v * xs[a];
  }
  return WT_OK;
}

static int gather_nd_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1];
  size_t elem = wt_dtype_size(x->dtype);
  int b = p->axis, q = ind->rank;
  int64_t last = ind->dims[q - 1], xs[WT_MAX_RANK];
  wt_strides(x->rank, x->dims, xs);
  int64_t batches = wt_dims_prod(x->dims, 0, b), per = wt_dims_prod(ind->dims, b, q - 1);
  int64_t slice = wt_dims_prod(x->dims, b + (int)last, x->rank);
  int64_t block = wt_dims_prod(x->dims, b, x->rank);
  const int64_t *iv = ind->data;
  const char *src = x->data;
  char *dst = ctx->out[0].data;
  for (int64_t bi = 0; bi < batches; bi++)
    for (int64_t t = 0; t < per; t++) {
      int64_t tt = bi * per + t, off;
      WT_TRY(nd_offset(x, b, iv + tt * last, last, xs, tt, &off));
      wt_copy_bytes(dst + (size_t)(tt * slice) * elem, src + (size_t)(bi * block + off) * elem,
                    (size_t)slice * elem);
    }
  return WT_OK;
}

static int scatter_nd_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1], *u = &ctx->in[2];
  size_t elem = wt_dtype_size(x->dtype);
  int q = ind->rank;
  int64_t last = ind->dims[q - 1], xs[WT_MAX_RANK];
  wt_strides(x->rank, x->dims, xs);
  int64_t n = wt_dims_prod(ind->dims, 0, q - 1), slice = wt_dims_prod(x->dims, (int)last, x->rank);
  const int64_t *iv = ind->data;
  const char *upd = u->data;
  char *dst = ctx->out[0].data;
  wt_copy_bytes(dst, x->data, wt_nbytes(x));
  for (int64_t t = 0; t < n; t++) {
    int64_t off;
    WT_TRY(nd_offset(x, 0, iv + t * last, last, xs, t, &off));
    if (slice)
      apply(dst + (size_t)off * elem, upd + (size_t)(t * slice) * elem, slice, x->dtype,
            p->reduction);
  }
  return WT_OK;
}

static int gather_grad_op_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *ind = &ctx->in[1], *x = &ctx->out[0];
  int64_t outer = wt_dims_prod(x->dims, 0, p->axis), d = x->dims[p->axis];
  int64_t row = wt_dims_prod(x->dims, p->axis + 1, x->rank), ni = wt_numel(ind);
  int is64 = ind->dtype == WT_INT64;
  const float *src = ctx->in[2].data;
  float *dst = x->data;
  memset(dst, 0, wt_nbytes(x));
  for (int64_t j = 0; j < ni; j++) {
    int64_t v = wt_su_idx(ind->data, is64, j);
    WT_TRY(fix_index(&v, d, j, p->axis));
    for (int64_t o = 0; o < outer && row; o++)
      wt_add_f32(dst + (o * d + v) * row, src + (o * ni + j) * row, row);
  }
  return WT_OK;
}

static int gather_elements_grad_op_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *ind = &ctx->in[2], *x = &ctx->out[0];
  const float *src = ctx->in[0].data;
  float *dst = x->data;
  memset(dst, 0, wt_nbytes(x));
  ELEMENTS_WALK(dst[off] += src[pos]);
  return WT_OK;
}

static int gather_nd_grad_op_run(const wt_run_ctx *ctx) {
  const index_params *p = ctx->params;
  const wt_tensor *ind = &ctx->in[1], *x = &ctx->out[0];
  int b = p->axis, q = ind->rank;
  int64_t last = ind->dims[q - 1], xs[WT_MAX_RANK];
  wt_strides(x->rank, x->dims, xs);
  int64_t batches = wt_dims_prod(x->dims, 0, b), per = wt_dims_prod(ind->dims, b, q - 1);
  int64_t slice = wt_dims_prod(x->dims, b + (int)last, x->rank);
  int64_t block = wt_dims_prod(x->dims, b, x->rank);
  const int64_t *iv = ind->data;
  const float *src = ctx->in[2].data;
  float *dst = x->data;
  memset(dst, 0, wt_nbytes(x));
  for (int64_t bi = 0; bi < batches; bi++)
    for (int64_t t = 0; t < per; t++) {
      int64_t tt = bi * per + t, off;
      WT_TRY(nd_offset(x, b, iv + tt * last, last, xs, tt, &off));
      wt_add_f32(dst + bi * block + off, src + tt * slice, slice);
    }
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_data_index[] = {
    {.key = {"", "Gather"}, .run = gather_run, .half_inputs = 0x1},
    {.key = {"", "GatherElements"}, .run = gather_elements_run},
    {.key = {"", "ScatterElements"}, .run = scatter_elements_run},
    {.key = {"", "Scatter"}, .run = scatter_elements_run},
    {.key = {"", "GatherND"}, .run = gather_nd_run},
    {.key = {"", "ScatterND"}, .run = scatter_nd_run},
    {.key = {"com.microsoft", "GatherGrad"}, .run = gather_grad_op_run},
    {.key = {"com.microsoft", "GatherElementsGrad"}, .run = gather_elements_grad_op_run},
    {.key = {"com.microsoft", "GatherNDGrad"}, .run = gather_nd_grad_op_run},
    WT_CPU_KERNELS_END};
