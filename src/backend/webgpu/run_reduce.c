/* The reduce family on the GPU: ReduceSum and ReduceMean of floats, one reduce.wgsl pass per
 * run of reduced axes (the passes the op's infer planned), through the step's scratch. */
#include "backend/webgpu/kernel.h"
#include "ops/reduce_params.h"

enum { U_OUTER, U_N, U_INNER, U_GX, U_DIVIDE, U_COUNT, U_X_OFF, U_Y_OFF };

void wt_gpu_reduce_dispatch(wt_gpu_dispatch *d, int8_t src, int8_t dst, int64_t outer, int64_t n, int64_t inner,
                            int divide, float count) {
  *d = (wt_gpu_dispatch){.program = "reduce", .n_bind = 2, .bind = {src, dst}};
  wt_gpu_grid_1d(d, outer * inner, WT_GPU_WG);
  d->uniform[U_OUTER] = (uint32_t)outer;
  d->uniform[U_N] = (uint32_t)n;
  d->uniform[U_INNER] = (uint32_t)inner;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_DIVIDE] = (uint32_t)divide;
  wt_gpu_f32(&d->uniform[U_COUNT], count);
}

void wt_gpu_sum_dispatch(wt_gpu_dispatch *d, int8_t src, int64_t src_off, int8_t dst, int64_t dst_off, int64_t outer,
                         int64_t n, int64_t inner) {
  wt_gpu_reduce_dispatch(d, src, dst, outer, n, inner, 0, 0.0f);
  d->uniform[U_X_OFF] = (uint32_t)src_off;
  d->uniform[U_Y_OFF] = (uint32_t)dst_off;
}

static int encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const reduce_params *p = c->params;
  if (c->in[0].dtype != WT_FLOAT || p->kind != WT_RED_SUM || (p->final != FINAL_NONE && p->final != FINAL_MEAN))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs ReduceSum and ReduceMean of float32 only");
  if (p->noop) return wt_gpu_binary_dispatch(d, WT_GB_COPY_A, 0.0f, WT_GPU_IN(0), &c->in[0], WT_GPU_NONE, NULL,
                                             WT_GPU_OUT(0), &c->out[0]);
  if (p->n_pass > cap) return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%d reduction passes; the webgpu backend runs at most %d", p->n_pass, cap);
  int r = wt_gpu_check_elems(wt_numel(&c->in[0]), "the input");
  if (r) return r;
  if (p->n_pass > 1) c->scratch[0] = (uint64_t)p->buf0 * sizeof(float);
  if (p->n_pass > 2) c->scratch[1] = (uint64_t)p->buf1 * sizeof(float);
  for (int k = 0; k < p->n_pass; k++) {
    int last = k == p->n_pass - 1;
    int8_t src = k == 0 ? WT_GPU_IN(0) : WT_GPU_SCRATCH((k - 1) % 2);
    int8_t dst = last ? WT_GPU_OUT(0) : WT_GPU_SCRATCH(k % 2);
    wt_gpu_reduce_dispatch(&d[k], src, dst, p->outer[k], p->n[k], p->inner[k],
                           last && p->final == FINAL_MEAN, p->count ? (float)p->count : 0.0f);
  }
  return p->n_pass;
}

const wt_gpu_kernel wt_gpu_kernels_reduce[] = {
    {.key = {"", "ReduceSum"}, .encode = encode},
    {.key = {"", "ReduceMean"}, .encode = encode},
    {.key = {0}},
};
