/* The shape family on the GPU: the ops a plan turns into views of their input (the bytes are
 * shared; nothing runs), and Expand, a broadcast copy through binary.wgsl. */
#include "backend/webgpu/kernel.h"

static int expand_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  if (c->in[0].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend expands float32 only (got %s)", wt_dtype_name(c->in[0].dtype));
  return wt_gpu_binary_dispatch(d, WT_GB_COPY_A, 0.0f, WT_GPU_IN(0), &c->in[0], WT_GPU_NONE, NULL, WT_GPU_OUT(0),
                                &c->out[0]);
}

const wt_gpu_kernel wt_gpu_kernels_shape[] = {
    {.key = {"", "Reshape"}},
    {.key = {"", "Flatten"}},
    {.key = {"", "Squeeze"}},
    {.key = {"", "Unsqueeze"}},
    {.key = {"", "Expand"}, .encode = expand_encode},
    {.key = {0}},
};
