/* The shape family on the GPU: the ops a plan turns into views of their input (the bytes are
 * shared; nothing runs), Expand (a broadcast copy) and Transpose (a gather) through binary.wgsl;
 * and strided.wgsl's dispatch, the layout ops' copy (kernel.h). */
#include "backend/webgpu/kernel.h"
#include "ops/shape_params.h"

int wt_gpu_words(int dtype) {
  switch (dtype) {
  case WT_FLOAT: case WT_INT32: return 1;
  case WT_INT64: return 2;
  default: return 0;
  }
}

int wt_gpu_layout_width(int dtype) { return dtype == WT_BOOL ? 0 : wt_gpu_words(dtype) ? wt_gpu_words(dtype) : -1; }

/* strided.wgsl's uniform words. */
enum { S_N, S_GX, S_RANK, S_WIDTH, S_XOFF, S_YOFF, S_MODE, S_DIMS = 8, S_XS = 16, S_YS = 24 };
#define GPU_STRIDED_RANK 8

int wt_gpu_strided_dispatch(wt_gpu_dispatch *d, int8_t bx, int8_t by, int rank, const int64_t *dims,
                            int64_t xoff, const int64_t *xs, int64_t yoff, const int64_t *ys, int width) {
  int64_t n = 1;
  for (int a = 0; a < rank; a++) n *= dims[a];
  int r = wt_gpu_check_elems(n * (width ? width : 1), "the copy");
  if (r) return r;
  if (width == 0) { /* bytes: a thread writes a word of four consecutive elements of a dense y */
    int64_t step = 1;
    for (int a = rank - 1; a >= 0; a--) {
      if (dims[a] != 1 && ys[a] != step) yoff = -1;
      step *= dims[a];
    }
    if (yoff != 0)
      return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend moves bool elements only into a whole tensor");
  }
  if (rank > GPU_STRIDED_RANK)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend copies tensors of rank %d at most (got %d)",
                       GPU_STRIDED_RANK, rank);
  *d = (wt_gpu_dispatch){.program = "strided", .n_bind = 2, .bind = {bx, by}};
  wt_gpu_grid_1d(d, width ? n : (n + 3) / 4, WT_GPU_WG);
  d->uniform[S_N] = (uint32_t)n;
  d->uniform[S_GX] = d->groups[0];
  d->uniform[S_RANK] = (uint32_t)rank;
  d->uniform[S_WIDTH] = (uint32_t)width;
  d->uniform[S_XOFF] = (uint32_t)xoff;
  d->uniform[S_YOFF] = (uint32_t)yoff;
  /* negative strides as two's complement: the program's u32 arithmetic wraps */
  for (int a = 0; a < rank; a++) {
    d->uniform[S_DIMS + a] = (uint32_t)dims[a];
    d->uniform[S_XS + a] = (uint32_t)xs[a];
    d->uniform[S_YS + a] = (uint32_t)ys[a];
  }
  return 1;
}

int wt_gpu_zero_dispatch(wt_gpu_dispatch *d, int8_t by, int64_t n, int width) {
  int r = wt_gpu_strided_dispatch(d, WT_GPU_NONE, by, 1, &n, 0, (int64_t[]){0}, 0, (int64_t[]){0}, width);
  if (r > 0) d->uniform[S_MODE] = 1;
  return r;
}

static int layout_width(const wt_tensor *t, const char *op) {
  int w = wt_gpu_layout_width(t->dtype);
  if (w < 0)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs %s on float32, int32, int64 and bool only (got %s)",
                       op, wt_dtype_name(t->dtype));
  return w;
}

/* Expand: a copy reading x through its broadcast strides (0 along a broadcast axis). */
static int expand_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *x = &c->in[0], *y = &c->out[0];
  int w = layout_width(x, "Expand");
  (void)cap;
  if (w < 0) return w;
  uint32_t bs[WT_MAX_RANK];
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK];
  wt_gpu_bcast_strides(x, y, bs);
  for (int a = 0; a < y->rank; a++) xs[a] = bs[a];
  wt_strides(y->rank, y->dims, ys);
  return wt_gpu_strided_dispatch(d, WT_GPU_IN(0), WT_GPU_OUT(0), y->rank, y->dims, 0, xs, 0, ys, w);
}

/* y[i...] = x at the permuted coordinates: the input's strides in the output's axis order. */
static int transpose_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const transpose_params *p = c->params;
  const wt_tensor *x = &c->in[0], *y = &c->out[0];
  int w = layout_width(x, "Transpose");
  (void)cap;
  if (w < 0) return w;
  int64_t in_stride[WT_MAX_RANK], xs[WT_MAX_RANK], ys[WT_MAX_RANK];
  wt_strides(x->rank, x->dims, in_stride);
  for (int a = 0; a < y->rank; a++) xs[a] = in_stride[p->perm[a]];
  wt_strides(y->rank, y->dims, ys);
  return wt_gpu_strided_dispatch(d, WT_GPU_IN(0), WT_GPU_OUT(0), y->rank, y->dims, 0, xs, 0, ys, w);
}

const wt_gpu_kernel wt_gpu_kernels_shape[] = {
    {.key = {"", "Transpose"}, .encode = transpose_encode},
    {.key = {"", "Reshape"}},
    {.key = {"", "Flatten"}},
    {.key = {"", "Squeeze"}},
    {.key = {"", "Unsqueeze"}},
    {.key = {"", "Expand"}, .encode = expand_encode},
    {.key = {0}},
};
