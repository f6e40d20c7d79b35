/* The shape_build family on the GPU: Concat (a dispatch per input, placing it at its offset
 * along the axis) and Split (a dispatch per output, reading its part), through strided.wgsl.
 * Its other ops build shapes and constants: constant folding runs them on the CPU. */
#include "backend/webgpu/kernel.h"
#include "ops/shape_build_params.h"

/* Copies part t of the [outer, whole, inner] tensor (t is [outer, part, inner]) from or to
 * offset `at` along the middle axis: to_whole 1 writes t's binding into the whole's. */
static int part_copy(wt_gpu_dispatch *d, int8_t bt, int8_t bwhole, const wt_tensor *t, const wt_tensor *whole,
                     int axis, int64_t at, int to_whole, int width) {
  int64_t dims[3] = {wt_dims_prod(t->dims, 0, axis), t->dims[axis], wt_dims_prod(t->dims, axis + 1, t->rank)};
  int64_t ts[3] = {dims[1] * dims[2], dims[2], 1};
  int64_t ws[3] = {whole->dims[axis] * dims[2], dims[2], 1};
  int64_t woff = at * dims[2];
  return to_whole ? wt_gpu_strided_dispatch(d, bt, bwhole, 3, dims, 0, ts, woff, ws, width)
                  : wt_gpu_strided_dispatch(d, bwhole, bt, 3, dims, woff, ws, 0, ts, width);
}

static int layout_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap, int concat) {
  const axis_params *p = c->params;
  const wt_tensor *whole = concat ? &c->out[0] : &c->in[0];
  int parts = concat ? c->n_in : c->n_out, width = wt_gpu_layout_width(whole->dtype);
  if (width < 0 || (!width && concat)) /* bools move whole words: a part of a Concat is not one */
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs %s on float32, int32, int64%s only (got %s)",
                       c->node->op_type, concat ? "" : " and bool", wt_dtype_name(whole->dtype));
  int nd = 0;
  int64_t at = 0;
  for (int k = 0; k < parts; k++) {
    const wt_tensor *t = concat ? &c->in[k] : &c->out[k];
    if (wt_numel(t) == 0) continue;
    if (nd == cap)
      return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%s of %d parts: the webgpu backend copies at most %d", c->node->op_type,
                         parts, cap);
    int r = concat ? part_copy(&d[nd], WT_GPU_IN(k), WT_GPU_OUT(0), t, whole, p->axis, at, 1, width)
                   : part_copy(&d[nd], WT_GPU_OUT(k), WT_GPU_IN(0), t, whole, p->axis, at, 0, width);
    if (r < 0) return r;
    nd++;
    at += t->dims[p->axis];
  }
  /* every part empty: a dispatch that does nothing (a step has at least one) */
  return nd ? nd : wt_gpu_zero_dispatch(d, WT_GPU_OUT(0), 0, width ? width : 1);
}

static int concat_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) { return layout_encode(c, d, cap, 1); }
static int split_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) { return layout_encode(c, d, cap, 0); }

const wt_gpu_kernel wt_gpu_kernels_shape_build[] = {
    {.key = {"", "Concat"}, .encode = concat_encode},
    {.key = {"", "Split"}, .encode = split_encode},
    {.key = {0}},
};
