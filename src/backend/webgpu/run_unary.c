/* The unary family on the GPU: float activations through unary.wgsl. */
#include "backend/webgpu/kernel.h"
#include "ops/unary_ops.h"

/* unary.wgsl's op codes. */
enum { GU_NEG, GU_ABS, GU_SQRT, GU_RELU, GU_RECIPROCAL, GU_LEAKYRELU, GU_EXP, GU_LOG, GU_TANH,
       GU_SIGMOID, GU_ERF, GU_GELU, GU_COPY, GU_SIGN, GU_SOFTPLUS };
/* Uniform words of unary.wgsl. */
enum { U_N, U_GX, U_OP, U_ALPHA = 4, U_BETA };

static int gpu_op(int kind) {
  switch (kind) {
  case WT_EW_NEG: return GU_NEG;
  case WT_EW_ABS: return GU_ABS;
  case WT_EW_SQRT: return GU_SQRT;
  case WT_EW_RELU: return GU_RELU;
  case WT_EW_RECIPROCAL: return GU_RECIPROCAL;
  case WT_EW_LEAKYRELU: return GU_LEAKYRELU;
  case WT_EW_EXP: return GU_EXP;
  case WT_EW_LOG: return GU_LOG;
  case WT_EW_TANH: return GU_TANH;
  case WT_EW_SIGMOID: return GU_SIGMOID;
  case WT_EW_ERF: return GU_ERF;
  case WT_EW_GELU: return GU_GELU;
  case WT_EW_SIGN: return GU_SIGN;
  case WT_EW_SOFTPLUS: return GU_SOFTPLUS;
  default: return -1;
  }
}

static int encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const un_params *p = c->params;
  (void)cap;
  int op = gpu_op(p->kind);
  if (op < 0 || c->in[0].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs this op on float32 only (got %s)",
                     wt_dtype_name(c->in[0].dtype));
  int64_t n = wt_numel(&c->out[0]);
  int r = wt_gpu_check_elems(n, "the output");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "unary", .n_bind = 2, .bind = {WT_GPU_IN(0), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  d->uniform[U_N] = (uint32_t)n;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = (uint32_t)op;
  wt_gpu_f32(&d->uniform[U_ALPHA], p->alpha);
  wt_gpu_f32(&d->uniform[U_BETA], p->beta);
  return 1;
}

void wt_gpu_copy_dispatch(wt_gpu_dispatch *d, int64_t words) {
  *d = (wt_gpu_dispatch){.program = "unary", .n_bind = 2, .bind = {WT_GPU_IN(0), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, words, WT_GPU_WG);
  d->uniform[U_N] = (uint32_t)words;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = GU_COPY;
}

const wt_gpu_kernel wt_gpu_kernels_unary[] = {
    {.key = {"", "Neg"}, .encode = encode},
    {.key = {"", "Abs"}, .encode = encode},
    {.key = {"", "Sqrt"}, .encode = encode},
    {.key = {"", "Relu"}, .encode = encode},
    {.key = {"", "Reciprocal"}, .encode = encode},
    {.key = {"", "LeakyRelu"}, .encode = encode},
    {.key = {"", "Exp"}, .encode = encode},
    {.key = {"", "Log"}, .encode = encode},
    {.key = {"", "Tanh"}, .encode = encode},
    {.key = {"", "Sigmoid"}, .encode = encode},
    {.key = {"", "Erf"}, .encode = encode},
    {.key = {"", "Gelu"}, .encode = encode},
    {.key = {"", "Sign"}, .encode = encode},
    {.key = {"", "Softplus"}, .encode = encode},
    {.key = {"com.microsoft", "Gelu"}, .encode = encode},
    /* a view of its input (the plan shares the bytes): nothing runs */
    {.key = {"", "Identity"}},
    {.key = {0}},
};
