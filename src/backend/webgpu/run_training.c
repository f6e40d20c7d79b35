/* The training family on the GPU: gradient accumulation in place (accumulate.wgsl); when the
 * program had the gradient written straight into its buffer, only the `updated` flag is set. */
#include "backend/webgpu/kernel.h"

static int accumulate_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  (void)cap;
  int64_t n = wt_numel(&c->in[0]);
  int r = wt_gpu_check_elems(n, "the buffer");
  if (r) return r;
  int has_flag = wt_has_input(c->in, c->n_in, 2);
  int in_place = (c->same_room >> 1) & 1; /* the value already overwrote the buffer */
  *d = (wt_gpu_dispatch){.program = "accumulate", .n_bind = 4,
                         .bind = {WT_GPU_IN(0), in_place ? WT_GPU_NONE : WT_GPU_IN(1),
                                  has_flag && !in_place ? WT_GPU_IN(2) : WT_GPU_NONE, WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, in_place ? 1 : n, WT_GPU_WG);
  d->uniform[0] = in_place ? 0 : (uint32_t)n;
  d->uniform[1] = d->groups[0];
  d->uniform[2] = (uint32_t)has_flag;
  return 1;
}

const wt_gpu_kernel wt_gpu_kernels_training[] = {
    {.key = {"com.microsoft", "InPlaceAccumulatorV2"}, .encode = accumulate_encode},
    {.key = {0}},
};
