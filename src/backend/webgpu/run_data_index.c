/* The data_index family on the GPU: Gather (float16 data widened as it is read, as the CPU
 * kernel does) through gather.wgsl, and GatherGrad through gather_grad.wgsl's six passes: the
 * positions sorted by index by counting, then each gradient element adds its run in order. */
#include "backend/webgpu/kernel.h"
#include "ops/data_index_params.h"

/* The bits written for an out-of-range index: a float NaN, or 0. */
#define GPU_NAN_BITS 0x7fc00000u

static int index_kind(const wt_tensor *ind) {
  return ind->dtype == WT_INT64 ? 1 : ind->dtype == WT_INT32 ? 0 : -1;
}

enum { G_N, G_GX, G_D, G_NI, G_ROW, G_WIDTH, G_IDX64, G_HALF, G_BAD };

static int gather_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const index_params *p = c->params;
  const wt_tensor *x = &c->in[0], *ind = &c->in[1], *y = &c->out[0];
  int half = p->widen && x->dtype == WT_FLOAT16, width = half ? 1 : wt_gpu_words(x->dtype);
  int idx64 = index_kind(ind);
  (void)cap;
  if (!width || idx64 < 0)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend gathers float32, int32, int64 and widened float16 data "
                       "by int32 or int64 indices only (got %s data, %s indices)", wt_dtype_name(x->dtype),
                       wt_dtype_name(ind->dtype));
  int64_t n = wt_numel(y);
  int r = wt_gpu_check_elems(n * width, "the output");
  if (!r) r = wt_gpu_check_elems(wt_numel(x) * width, "the data");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "gather", .n_bind = 3, .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  d->uniform[G_N] = (uint32_t)n;
  d->uniform[G_GX] = d->groups[0];
  d->uniform[G_D] = (uint32_t)x->dims[p->axis];
  d->uniform[G_NI] = (uint32_t)wt_numel(ind);
  d->uniform[G_ROW] = (uint32_t)wt_dims_prod(x->dims, p->axis + 1, x->rank);
  d->uniform[G_WIDTH] = (uint32_t)width;
  d->uniform[G_IDX64] = (uint32_t)idx64;
  d->uniform[G_HALF] = (uint32_t)half;
  d->uniform[G_BAD] = y->dtype == WT_FLOAT ? GPU_NAN_BITS : 0;
  return 1;
}

/* gather_grad.wgsl's passes and uniform words. */
enum { P_ZERO, P_COUNT, P_SCAN, P_PLACE, P_SORT, P_SUM, P_PASSES };
enum { GG_N, GG_GX, GG_MODE, GG_D, GG_NI, GG_ROW, GG_IDX64 };

/* GatherGrad(shape, indices, dY) -> dX. */
static int gather_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const index_params *p = c->params;
  const wt_tensor *ind = &c->in[1], *dy = &c->in[2], *dx = &c->out[0];
  int idx64 = index_kind(ind);
  if (idx64 < 0 || dy->dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs GatherGrad of float32 by int32 or int64 indices only");
  if (cap < P_PASSES) return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "GatherGrad takes %d dispatches", P_PASSES);
  int64_t rows = dx->dims[p->axis], ni = wt_numel(ind);
  int r = wt_gpu_check_elems(wt_numel(dx), "the gradient");
  if (!r) r = wt_gpu_check_elems(wt_numel(dy), "the incoming gradient");
  if (!r) r = wt_gpu_check_elems(3 * rows, "the index counts");
  if (r) return r;
  c->scratch[0] = (uint64_t)(3 * rows) * sizeof(uint32_t); /* counts, cursors, offsets */
  c->scratch[1] = (uint64_t)(ni ? ni : 1) * sizeof(uint32_t); /* the positions, by row */
  const int64_t threads[P_PASSES] = {rows, ni, 256, ni, rows, wt_numel(dx)};
  for (int k = 0; k < P_PASSES; k++) {
    d[k] = (wt_gpu_dispatch){.program = "gather_grad", .n_bind = 5,
                             .bind = {WT_GPU_IN(1), WT_GPU_IN(2), WT_GPU_SCRATCH(0), WT_GPU_SCRATCH(1), WT_GPU_OUT(0)}};
    wt_gpu_grid_1d(&d[k], threads[k], WT_GPU_WG);
    d[k].uniform[GG_N] = (uint32_t)threads[k];
    d[k].uniform[GG_GX] = d[k].groups[0];
    d[k].uniform[GG_MODE] = (uint32_t)k;
    d[k].uniform[GG_D] = (uint32_t)rows;
    d[k].uniform[GG_NI] = (uint32_t)ni;
    d[k].uniform[GG_ROW] = (uint32_t)wt_dims_prod(dx->dims, p->axis + 1, dx->rank);
    d[k].uniform[GG_IDX64] = (uint32_t)idx64;
  }
  return P_PASSES;
}

const wt_gpu_kernel wt_gpu_kernels_data_index[] = {
    {.key = {"", "Gather"}, .encode = gather_encode},
    {.key = {"com.microsoft", "GatherGrad"}, .encode = gather_grad_encode},
    {.key = {0}},
};
