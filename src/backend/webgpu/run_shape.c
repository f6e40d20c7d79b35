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

/* strided.wgsl's uniform words. */
enum { S_N, S_GX, S_RANK, S_WIDTH, S_XOFF, S_YOFF, S_MODE, S_DIMS = 8, S_XS = 16, S_YS = 24 };
#define GPU_STRIDED_RANK 8

int wt_gpu_strided_dispatch(wt_gpu_dispatch *d, int8_t bx, int8_t by, int rank, const int64_t *dims,
                            int64_t xoff, const int64_t *xs, int64_t yoff, const int64_t *ys, int width) {
  int64_t n = 1;
  for (int a = 0; a < rank; a++) n *= dims[a];
  int r = wt_gpu_check_elems(n * width, "the copy");
  if (r) return r;
  if (rank > GPU_STRIDED_RANK)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend copies tensors of rank %d at most (got %d)",
                       GPU_STRIDED_RANK, rank);
  *d = (wt_gpu_dispatch){.program = "strided", .n_bind = 2, .bind = {bx, by}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
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

static int expand_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  if (c->in[0].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend expands float32 only (got %s)", wt_dtype_name(c->in[0].dtype));
  return wt_gpu_binary_dispatch(d, WT_GB_COPY_A, 0.0f, WT_GPU_IN(0), &c->in[0], WT_GPU_NONE, NULL, WT_GPU_OUT(0),
                                &c->out[0]);
}

/* y[i...] = x at the permuted coordinates: the input's strides in the output's axis order. */
static int transpose_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const transpose_params *p = c->params;
  const wt_tensor *x = &c->in[0];
  (void)cap;
  if (x->dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend transposes float32 only (got %s)", wt_dtype_name(x->dtype));
  uint32_t in_stride[WT_MAX_RANK], strides[WT_MAX_RANK];
  int64_t step = 1;
  for (int a = x->rank - 1; a >= 0; a--) {
    in_stride[a] = (uint32_t)step;
    step *= x->dims[a];
  }
  for (int a = 0; a < c->out[0].rank; a++) strides[a] = in_stride[p->perm[a]];
  return wt_gpu_gather_dispatch(d, WT_GPU_IN(0), WT_GPU_OUT(0), &c->out[0], strides);
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
