/* The CPU kernels of the resize family (definitions: src/ops/resize.c): Resize, Upsample and
 * ResizeGrad over separable per-axis taps. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/resize.h"
#include "ops/op.h"
#include "ops/resize_params.h"

static size_t resize_scratch(const wt_infer_ctx *ctx) {
  rs_params *p = ctx->params;
  size_t taps = 0;
  for (int d = 0; d < p->rank; d++) taps += (size_t)p->out_dims[d] * sizeof(wt_resize_tap);
  p->tap_bytes = (taps + 63) & ~(size_t)63;
  p->buf_elems = wt_resize_buffer_elems(p->rank, p->in_dims, p->out_dims);
  size_t buf = ((size_t)p->buf_elems * p->esize + 63) & ~(size_t)63;
  return p->tap_bytes + 2 * buf;
}

/* Builds the tap tables into scratch; taps[d] stays NULL for identity axes. */
static void build_taps(const rs_params *p, const wt_tensor *roi, void *scratch,
                       const wt_resize_tap **taps) {
  wt_resize_tap *t = scratch;
  double rs[WT_MAX_RANK], re[WT_MAX_RANK];
  for (int d = 0; d < p->rank; d++) {
    rs[d] = 0;
    re[d] = 1;
  }
  if (roi && roi->data && wt_numel(roi) == 2 * p->n_axes)
    for (int i = 0; i < p->n_axes; i++) {
      rs[p->axes[i]] = wt_get_double(roi, i);
      re[p->axes[i]] = wt_get_double(roi, p->n_axes + i);
    }
  for (int d = 0; d < p->rank; d++) {
    int ident = wt_resize_axis_taps(&p->cfg, p->in_dims[d], p->out_dims[d], p->scale[d], rs[d],
                                    re[d], t);
    taps[d] = ident ? NULL : t;
    t += p->out_dims[d];
  }
}

static const wt_tensor *roi_of(const wt_run_ctx *ctx, const rs_params *p) {
  if (p->roi_input < 0 || p->cfg.coord != WT_RESIZE_TF_CROP_AND_RESIZE) return NULL;
  if (!wt_has_input(ctx->in, ctx->n_in, p->roi_input)) return NULL;
  return &ctx->in[p->roi_input];
}

static int resize_run(const wt_run_ctx *ctx) {
  const rs_params *p = ctx->params;
  const wt_tensor *roi = roi_of(ctx, p);
  if (roi && wt_numel(roi) != 0 && wt_numel(roi) != 2 * p->n_axes)
    return wt_errorf(WT_ERR_RUNTIME, "input 'roi' has %lld values; expected %d",
                     (long long)wt_numel(roi), 2 * p->n_axes);
  const wt_resize_tap *taps[WT_MAX_RANK];
  build_taps(p, roi, ctx->scratch, taps);
  unsigned char *buf0 = (unsigned char *)ctx->scratch + p->tap_bytes;
  unsigned char *buf1 = buf0 + (((size_t)p->buf_elems * p->esize + 63) & ~(size_t)63);
  unsigned char extrap[8] = {0};
  if (p->is_float) memcpy(extrap, &p->extrap, sizeof(float));
  else if (p->esize == 8) {
    int64_t v = (int64_t)p->extrap;
    memcpy(extrap, &v, 8);
  } else if (p->esize == 4) {
    int32_t v = (int32_t)p->extrap;
    memcpy(extrap, &v, 4);
  } else {
    extrap[0] = p->extrap != 0;
  }
  wt_resize_forward(ctx->in[0].data, ctx->out[0].data, p->esize, p->is_float, p->rank,
                    p->in_dims, p->out_dims, taps, extrap, buf0, buf1);
  return WT_OK;
}

static int resize_grad_run(const wt_run_ctx *ctx) {
  rs_params q = *(const rs_params *)ctx->params;
  for (int d = 0; d < q.rank; d++)
    q.scale[d] = q.in_dims[d] ? (double)q.out_dims[d] / (double)q.in_dims[d] : 1.0;
  if (wt_has_input(ctx->in, ctx->n_in, 3) && wt_numel(&ctx->in[3]) > 0) {
    const wt_tensor *s = &ctx->in[3];
    if (wt_numel(s) != q.n_axes)
      return wt_errorf(WT_ERR_RUNTIME, "input 'scales' has %lld values; expected %d",
                       (long long)wt_numel(s), q.n_axes);
    for (int i = 0; i < q.n_axes; i++) q.scale[q.axes[i]] = wt_get_double(s, i);
  }
  const wt_tensor *roi = roi_of(ctx, &q);
  if (roi && wt_numel(roi) != 0 && wt_numel(roi) != 2 * q.n_axes)
    return wt_errorf(WT_ERR_RUNTIME, "input 'roi' has %lld values; expected %d",
                     (long long)wt_numel(roi), 2 * q.n_axes);
  const wt_resize_tap *taps[WT_MAX_RANK];
  build_taps(&q, roi, ctx->scratch, taps);
  float *buf0 = (float *)((unsigned char *)ctx->scratch + q.tap_bytes);
  float *buf1 = (float *)((unsigned char *)buf0 + (((size_t)q.buf_elems * 4 + 63) & ~(size_t)63));
  wt_resize_grad_f32(ctx->in[0].data, ctx->out[0].data, q.rank, q.in_dims, q.out_dims, taps, buf0,
                     buf1);
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_resize[] = {
    {.key = {"", "Resize"}, .run = resize_run, .scratch = resize_scratch},
    {.key = {"", "Upsample"}, .run = resize_run, .scratch = resize_scratch},
    {.key = {"com.microsoft", "ResizeGrad"}, .run = resize_grad_run, .scratch = resize_scratch},
    WT_CPU_KERNELS_END};
