/* The data family on the GPU: Slice (a strided read) and its gradient op SliceGrad (zeros, then
 * the slice's elements placed at their strided positions), through strided.wgsl, as the CPU
 * kernels copy. */
#include "backend/webgpu/kernel.h"
#include "ops/data_params.h"

/* The element offset of the slice's first element in x and x's strides along the slice. */
static int64_t slice_walk(const slice_params *p, const wt_tensor *x, int64_t *ss) {
  int64_t xs[WT_MAX_RANK], off = 0;
  wt_strides(x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++) {
    off += p->start[i] * xs[i];
    ss[i] = xs[i] * p->step[i];
  }
  return off;
}

static int words_of(const wt_tensor *t, const char *op, int bools) {
  int w = bools ? wt_gpu_layout_width(t->dtype) : wt_gpu_words(t->dtype);
  if (w < 0 || (!w && !bools))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs %s on float32, int32, int64%s only (got %s)", op,
                       bools ? " and bool" : "", wt_dtype_name(t->dtype));
  return w;
}

static int slice_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *x = &c->in[0], *y = &c->out[0];
  int64_t ss[WT_MAX_RANK], ys[WT_MAX_RANK];
  int w = words_of(x, "Slice", 1);
  (void)cap;
  if (w < 0) return w;
  int64_t off = slice_walk(c->params, x, ss);
  wt_strides(y->rank, y->dims, ys);
  return wt_gpu_strided_dispatch(d, WT_GPU_IN(0), WT_GPU_OUT(0), y->rank, y->dims, off, ss, 0, ys, w);
}

static int slice_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *dy = &c->in[0], *dx = &c->out[0];
  int64_t ds[WT_MAX_RANK], ys[WT_MAX_RANK];
  int w = words_of(dx, "SliceGrad", 0);
  (void)cap;
  if (w < 0) return w;
  int r = wt_gpu_zero_dispatch(&d[0], WT_GPU_OUT(0), wt_numel(dx), w);
  if (r < 0 || wt_numel(dy) == 0) return r;
  int64_t off = slice_walk(c->params, dx, ds);
  wt_strides(dy->rank, dy->dims, ys);
  r = wt_gpu_strided_dispatch(&d[1], WT_GPU_IN(0), WT_GPU_OUT(0), dy->rank, dy->dims, 0, ys, off, ds, w);
  return r < 0 ? r : 2;
}

const wt_gpu_kernel wt_gpu_kernels_data[] = {
    {.key = {"", "Slice"}, .encode = slice_encode},
    {.key = {"com.microsoft", "SliceGrad"}, .encode = slice_grad_encode},
    {.key = {0}},
};
