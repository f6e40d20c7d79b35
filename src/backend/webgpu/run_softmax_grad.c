/* The softmax_grad family on the GPU: the (Log)Softmax gradients (softmax.wgsl) and
 * SoftmaxCrossEntropyLossGrad (sce_grad.wgsl). */
#include "backend/webgpu/kernel.h"
#include "ops/loss_reduction.h"
#include "ops/softmax_grad_params.h"
#include "ops/softmax_layout.h"

static int smg_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_softmax_params *p = c->params;
  (void)cap;
  return wt_gpu_softmax_dispatch(d, p->log_out ? 3 : 2, p, WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_OUT(0));
}

static int sceg_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const sceg_params *p = c->params;
  (void)cap;
  int labels = c->in[2].dtype;
  if (wt_has_input(c->in, c->n_in, 3) || wt_has_input(c->in, c->n_in, 4) || (labels != WT_INT32 && labels != WT_INT64))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs SoftmaxCrossEntropyLossGrad with int32 or int64 labels "
                     "and no class weights or ignore_index input only");
  int64_t n = wt_numel(&c->out[0]);
  int r = wt_gpu_check_elems(n, "dX");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "sce_grad", .n_bind = 4,
                         .bind = {WT_GPU_IN(0), WT_GPU_IN(1), WT_GPU_IN(2), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  uint32_t *u = d->uniform;
  u[0] = (uint32_t)n;
  u[1] = (uint32_t)p->C;
  u[2] = (uint32_t)p->D;
  u[3] = d->groups[0];
  u[4] = labels == WT_INT64 ? 2 : 1;
  u[5] = (uint32_t)p->has_ignore;
  u[6] = (uint32_t)(int32_t)p->ignore_index;
  u[7] = p->reduction == WT_LOSS_NONE ? 0 : p->reduction == WT_LOSS_SUM ? 1 : 2;
  u[8] = (uint32_t)(p->N * p->D);
  return 1;
}

const wt_gpu_kernel wt_gpu_kernels_softmax_grad[] = {
    {.key = {"com.microsoft", "SoftmaxGrad"}, .encode = smg_encode},
    {.key = {"com.microsoft", "SoftmaxGrad_13"}, .encode = smg_encode},
    {.key = {"com.microsoft", "LogSoftmaxGrad"}, .encode = smg_encode},
    {.key = {"com.microsoft", "LogSoftmaxGrad_13"}, .encode = smg_encode},
    {.key = {"com.microsoft", "SoftmaxCrossEntropyLossGrad"}, .encode = sceg_encode},
    {.key = {0}},
};
