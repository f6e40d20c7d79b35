/* The unary_grad family on the GPU: the activations' gradients dx = dy * f'(t) through
 * binary.wgsl (a = dy, b = t, the same shape). */
#include "backend/webgpu/kernel.h"
#include "ops/unary_ops.h"

static int encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const gop_params *p = c->params;
  (void)cap;
  int op = -1;
  if (p->form == G_ACT) {
    switch (p->kind) {
    case WT_EW_RELU_GRAD: op = WT_GB_RELU_GRAD; break;
    case WT_EW_SIGMOID_GRAD: op = WT_GB_SIGMOID_GRAD; break;
    case WT_EW_TANH_GRAD: op = WT_GB_TANH_GRAD; break;
    case WT_EW_LEAKYRELU_GRAD: op = WT_GB_LEAKYRELU_GRAD; break;
    case WT_EW_GELU_GRAD: op = WT_GB_GELU_GRAD; break;
    case WT_EW_QUICKGELU_GRAD: op = WT_GB_QUICKGELU_GRAD; break;
    case WT_EW_FASTGELU_GRAD: op = WT_GB_FASTGELU_GRAD; break;
    default: break;
    }
  }
  if (op < 0 || c->in[0].dtype != WT_FLOAT || c->in[1].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs this gradient on float32 only");
  return wt_gpu_binary_dispatch(d, op, p->alpha, WT_GPU_IN(0), &c->in[0], WT_GPU_IN(1), &c->in[1], WT_GPU_OUT(0),
                                &c->out[0]);
}

const wt_gpu_kernel wt_gpu_kernels_unary_grad[] = {
    {.key = {"com.microsoft", "ReluGrad"}, .encode = encode},
    {.key = {"com.microsoft", "SigmoidGrad"}, .encode = encode},
    {.key = {"com.microsoft", "TanhGrad"}, .encode = encode},
    {.key = {"com.microsoft", "LeakyReluGrad"}, .encode = encode},
    {.key = {"com.microsoft", "GeluGrad"}, .encode = encode},
    {.key = {"com.microsoft", "QuickGeluGrad"}, .encode = encode},
    {.key = {"com.microsoft", "FastGeluGrad"}, .encode = encode},
    {.key = {0}},
};
