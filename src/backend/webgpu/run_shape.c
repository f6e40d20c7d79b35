/* The shape family on the GPU: the ops a plan turns into views of their input (the bytes are
 * shared; nothing runs), Expand (a broadcast copy) and Transpose (a gather) through binary.wgsl. */
#include "backend/webgpu/kernel.h"
#include "ops/shape_params.h"

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
