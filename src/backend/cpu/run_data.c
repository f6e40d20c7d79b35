/* The CPU kernels of the data family (definitions: src/ops/data.c): Slice and its gradient op,
 * Pad, Trilu. */
#include <assert.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/kernel.h"
#include "ops/data_params.h"
#include "ops/op.h"
#include "ops/shape_util.h"

static int slice_run(const wt_run_ctx *ctx) {
  const slice_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  if (wt_numel(y) == 0) return WT_OK;
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK], ss[WT_MAX_RANK], off = 0;
  wt_strides(x->rank, x->dims, xs);
  wt_strides(y->rank, y->dims, ys);
  for (int i = 0; i < x->rank; i++) {
    off += p->start[i] * xs[i];
    ss[i] = xs[i] * p->step[i];
  }
  size_t elem = wt_dtype_size(x->dtype);
  wt_copy_strided(y->data, ys, (const char *)x->data + off * (int64_t)elem, ss, y->rank, y->dims,
                  elem);
  return WT_OK;
}

static int slice_grad_op_run(const wt_run_ctx *ctx) {
  const slice_params *p = ctx->params;
  const wt_tensor *dy = &ctx->in[0], *dx = &ctx->out[0];
  size_t elem = wt_dtype_size(dx->dtype);
  memset(dx->data, 0, wt_nbytes(dx));
  if (wt_numel(dy) == 0) return WT_OK;
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK], ds[WT_MAX_RANK], off = 0;
  wt_strides(dx->rank, dx->dims, xs);
  wt_strides(dy->rank, dy->dims, ys);
  for (int i = 0; i < dx->rank; i++) {
    off += p->start[i] * xs[i];
    ds[i] = xs[i] * p->step[i];
  }
  wt_copy_strided((char *)dx->data + off * (int64_t)elem, ds, dy->data, ys, dy->rank, dy->dims,
                  elem);
  return WT_OK;
}

/* Input coordinate read by output coordinate o along an axis of size d (non-constant modes). */
static int64_t pad_src(int64_t o, int64_t begin, int64_t d, int mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < d) return i;
  if (mode == PAD_EDGE) return i < 0 ? 0 : d - 1;
  if (mode == PAD_WRAP) return ((i % d) + d) % d;
  if (d == 1) return 0;
  int64_t period = 2 * (d - 1);
  i = ((i % period) + period) % period;
  return i < d ? i : period - i;
}

static int pad_run(const wt_run_ctx *ctx) {
  const pad_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  int r = x->rank;
  size_t elem = wt_dtype_size(x->dtype);
  int64_t ny = wt_numel(y);
  if (ny == 0) return WT_OK;
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK];
  wt_strides(r, x->dims, xs);
  wt_strides(r, y->dims, ys);
  if (p->mode == PAD_CONSTANT) {
    const void *value = p->value;
    if (wt_has_input(ctx->in, ctx->n_in, 2) && wt_numel(&ctx->in[2]) == 1) value = ctx->in[2].data;
    wt_fill(y->data, ny, value, elem);
    /* Copy the part of the input that survives (negative pads crop). */
    int64_t dims[WT_MAX_RANK], xoff = 0, yoff = 0;
    for (int i = 0; i < r; i++) {
      int64_t lo = p->begin[i] < 0 ? -p->begin[i] : 0;
      int64_t hi = y->dims[i] - p->begin[i];
      if (hi > x->dims[i]) hi = x->dims[i];
      if (hi <= lo) return WT_OK;
      dims[i] = hi - lo;
      xoff += lo * xs[i];
      yoff += (lo + p->begin[i]) * ys[i];
    }
    wt_copy_strided((char *)y->data + yoff * (int64_t)elem, ys,
                    (const char *)x->data + xoff * (int64_t)elem, xs, r, dims, elem);
    return WT_OK;
  }
  if (r == 0) {
    memcpy(y->data, x->data, elem);
    return WT_OK;
  }
  /* reflect / edge / wrap: map every output coordinate back to the input. */
  int64_t idx[WT_MAX_RANK] = {0}, n = y->dims[r - 1], rows = ny / n;
  const char *src = x->data;
  char *dst = y->data;
  for (int64_t row = 0; row < rows; row++) {
    int64_t base = 0;
    for (int k = 0; k < r - 1; k++) base += pad_src(idx[k], p->begin[k], x->dims[k], p->mode) * xs[k];
    for (int64_t j = 0; j < n; j++) {
      int64_t s = base + pad_src(j, p->begin[r - 1], x->dims[r - 1], p->mode);
      memcpy(dst + (row * n + j) * (int64_t)elem, src + s * (int64_t)elem, elem);
    }
    for (int k = r - 2; k >= 0; k--) {
      if (++idx[k] < y->dims[k]) break;
      idx[k] = 0;
    }
  }
  return WT_OK;
}

static int trilu_run(const wt_run_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  int upper = (int)wt_attr_int(ctx->node, "upper", 1);
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t k = 0;
  if (wt_has_input(ctx->in, ctx->n_in, 1)) k = wt_get_int(&ctx->in[1], 0);
  /* Clamp so that i + k cannot overflow; beyond +-(rows+cols) nothing changes. */
  int64_t lim = rows + cols;
  if (k > lim) k = lim;
  if (k < -lim) k = -lim;
  size_t elem = wt_dtype_size(x->dtype);
  int64_t mats = rows * cols > 0 ? wt_numel(x) / (rows * cols) : 0;
  const char *src = x->data;
  char *dst = y->data;
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++) {
      /* Kept columns are [lo, hi): upper keeps j - i >= k, lower keeps j - i <= k. */
      int64_t lo = upper ? i + k : 0, hi = upper ? cols : i + k + 1;
      lo = lo < 0 ? 0 : lo > cols ? cols : lo;
      hi = hi < lo ? lo : hi > cols ? cols : hi;
      size_t off = (size_t)((m * rows + i) * cols) * elem;
      memset(dst + off, 0, (size_t)lo * elem);
      wt_copy_bytes(dst + off + (size_t)lo * elem, src + off + (size_t)lo * elem,
                    (size_t)(hi - lo) * elem);
      memset(dst + off + (size_t)hi * elem, 0, (size_t)(cols - hi) * elem);
    }
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_data[] = {
    {.key = {"", "Slice"}, .run = slice_run},
    {.key = {"", "Pad"}, .run = pad_run},
    {.key = {"", "Trilu"}, .run = trilu_run},
    {.key = {"com.microsoft", "SliceGrad"}, .run = slice_grad_op_run},
    {.key = {"com.microsoft", "Trilu"}, .run = trilu_run},
    WT_CPU_KERNELS_END};
