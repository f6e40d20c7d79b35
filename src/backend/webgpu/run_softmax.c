/* The softmax family on the GPU: (Log)Softmax (softmax.wgsl) and SoftmaxCrossEntropyLoss
 * (sce_rows.wgsl per row, then sce_sum.wgsl for the reduction). */
#include "backend/webgpu/kernel.h"
#include "ops/loss_reduction.h"
#include "ops/softmax_layout.h"
#include "ops/softmax_params.h"

int wt_gpu_softmax_dispatch(wt_gpu_dispatch *d, int mode, const wt_softmax_params *p, int8_t a, int8_t b,
                            int8_t y) {
  int r = wt_gpu_check_elems(p->outer * p->n * p->inner, "the input");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "softmax", .n_bind = 3, .bind = {a, b, y}};
  wt_gpu_grid_1d(d, p->outer * p->inner, 64);
  d->uniform[0] = (uint32_t)p->outer;
  d->uniform[1] = (uint32_t)p->n;
  d->uniform[2] = (uint32_t)p->inner;
  d->uniform[3] = d->groups[0];
  d->uniform[4] = (uint32_t)mode;
  return 1;
}

static int softmax_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_softmax_params *p = c->params;
  (void)cap;
  if (c->in[0].dtype != WT_FLOAT) return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs (Log)Softmax on float32 only");
  return wt_gpu_softmax_dispatch(d, p->log_out ? 1 : 0, p, WT_GPU_IN(0), WT_GPU_NONE, WT_GPU_OUT(0));
}

static int sce_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const sce_params *p = c->params;
  (void)cap;
  int labels = c->in[1].dtype;
  if (p->nll || c->in[0].dtype != WT_FLOAT || wt_has_input(c->in, c->n_in, 2) || (labels != WT_INT32 && labels != WT_INT64))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs SoftmaxCrossEntropyLoss of float32 scores with int32 or "
                     "int64 labels and no class weights only");
  int64_t rows = p->N * p->D;
  int r = wt_gpu_check_elems(wt_numel(&c->in[0]), "the scores");
  if (r) return r;
  int lp = c->n_out > 1 && c->node->outputs[1] >= 0;
  c->scratch[0] = (uint64_t)rows * 8;
  d[0] = (wt_gpu_dispatch){.program = "sce_rows", .n_bind = 4,
                           .bind = {WT_GPU_IN(0), WT_GPU_IN(1), lp ? WT_GPU_OUT(1) : WT_GPU_NONE, WT_GPU_SCRATCH(0)}};
  wt_gpu_grid_1d(&d[0], rows, 64);
  uint32_t *u = d[0].uniform;
  u[0] = (uint32_t)rows;
  u[1] = (uint32_t)p->C;
  u[2] = (uint32_t)p->D;
  u[3] = d[0].groups[0];
  u[4] = labels == WT_INT64 ? 2 : 1;
  u[5] = (uint32_t)p->has_ignore;
  u[6] = (uint32_t)(int32_t)p->ignore_index;
  u[7] = (uint32_t)lp;
  d[1] = (wt_gpu_dispatch){.program = "sce_sum", .n_bind = 2, .bind = {WT_GPU_SCRATCH(0), WT_GPU_OUT(0)},
                           .groups = {1, 1, 1}};
  d[1].uniform[0] = (uint32_t)rows;
  d[1].uniform[1] = p->reduction == WT_LOSS_NONE ? 0 : p->reduction == WT_LOSS_SUM ? 1 : 2;
  return 2;
}

const wt_gpu_kernel wt_gpu_kernels_softmax[] = {
    {.key = {"", "Softmax"}, .encode = softmax_encode},
    {.key = {"", "LogSoftmax"}, .encode = softmax_encode},
    {.key = {"", "SoftmaxCrossEntropyLoss"}, .encode = sce_encode},
    {.key = {0}},
};
