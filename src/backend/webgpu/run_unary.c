/* The unary family on the GPU: float activations through unary.wgsl. */
#include <math.h>

#include "backend/webgpu/kernel.h"
#include "ops/unary_ops.h"

/* unary.wgsl's op codes. */
enum { GU_NEG, GU_ABS, GU_SQRT, GU_RELU, GU_RECIPROCAL, GU_LEAKYRELU, GU_EXP, GU_LOG, GU_TANH,
       GU_SIGMOID, GU_ERF, GU_GELU, GU_COPY, GU_SIGN, GU_SOFTPLUS, GU_HARDSWISH, GU_QUICKGELU,
       GU_HARDSIGMOID, GU_SOFTSIGN, GU_FLOOR, GU_CEIL, GU_ROUND, GU_ELU, GU_GELU_TANH, GU_CLIP };
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
  case WT_EW_HARDSWISH: return GU_HARDSWISH;
  case WT_EW_QUICKGELU: return GU_QUICKGELU;
  case WT_EW_HARDSIGMOID: return GU_HARDSIGMOID;
  case WT_EW_SOFTSIGN: return GU_SOFTSIGN;
  case WT_EW_FLOOR: return GU_FLOOR;
  case WT_EW_CEIL: return GU_CEIL;
  case WT_EW_ROUND: return GU_ROUND;
  case WT_EW_ELU: return GU_ELU;
  case WT_EW_GELU_TANH: return GU_GELU_TANH;
  case WT_EW_CLIP: return GU_CLIP;
  default: return -1;
  }
}

static int encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const un_params *p = c->params;
  (void)cap;
  if (p->kind == K_NOT) return wt_gpu_not_dispatch(c, d);
  int op = gpu_op(p->kind);
  if (op < 0 || c->in[0].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs this op on float32 only (got %s)",
                     wt_dtype_name(c->in[0].dtype));
  float alpha = p->alpha, beta = p->beta;
  if (p->clip_inputs) { /* Clip from opset 11: its bounds are inputs, which the build must know */
    for (int i = 1; i <= 2; i++)
      if (wt_has_input(c->in, c->n_in, i) && !c->in[i].data)
        return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs Clip with constant bounds only (its %s is "
                           "computed): make it an initializer", i == 1 ? "min" : "max");
    alpha = wt_has_input(c->in, c->n_in, 1) ? *(const float *)c->in[1].data : -INFINITY;
    beta = wt_has_input(c->in, c->n_in, 2) ? *(const float *)c->in[2].data : INFINITY;
  }
  int64_t n = wt_numel(&c->out[0]);
  int r = wt_gpu_check_elems(n, "the output");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "unary", .n_bind = 2, .bind = {WT_GPU_IN(0), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, n, WT_GPU_WG);
  d->uniform[U_N] = (uint32_t)n;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = (uint32_t)op;
  wt_gpu_f32(&d->uniform[U_ALPHA], alpha);
  wt_gpu_f32(&d->uniform[U_BETA], beta);
  return 1;
}

void wt_gpu_copy_dispatch(wt_gpu_dispatch *d, int64_t words) {
  *d = (wt_gpu_dispatch){.program = "unary", .n_bind = 2, .bind = {WT_GPU_IN(0), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, words, WT_GPU_WG);
  d->uniform[U_N] = (uint32_t)words;
  d->uniform[U_GX] = d->groups[0];
  d->uniform[U_OP] = GU_COPY;
}

/* dropout.wgsl's uniform words. */
enum { D_N, D_GX, D_MODE, D_MASK, D_SEED = WT_GPU_KEY_WORD + 2, D_RATIO = WT_GPU_KEY_WORD + 4, D_SCALE };

void wt_gpu_dropout_dispatch(wt_gpu_dispatch *d, int mode, int64_t n, int8_t bx, int8_t bm, int mask_kind, int8_t by,
                             float ratio, uint64_t seed) {
  *d = (wt_gpu_dispatch){.program = "dropout", .draws = mode == 0, .n_bind = 3, .bind = {bx, bm, by}};
  wt_gpu_grid_1d(d, (n + 3) / 4, WT_GPU_WG);
  d->uniform[D_N] = (uint32_t)n;
  d->uniform[D_GX] = d->groups[0];
  d->uniform[D_MODE] = (uint32_t)mode;
  d->uniform[D_MASK] = (uint32_t)mask_kind;
  d->uniform[D_SEED] = (uint32_t)seed;
  d->uniform[D_SEED + 1] = (uint32_t)(seed >> 32);
  wt_gpu_f32(&d->uniform[D_RATIO], ratio);
  wt_gpu_f32(&d->uniform[D_SCALE], ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f); /* the CPU's scale */
}

int wt_gpu_dropout_mode(const wt_gpu_ctx *c, int opset_attrs, float attr_ratio, int attr_training, int ri, int ti,
                        float *ratio, int *training) {
  *ratio = attr_ratio;
  *training = attr_training;
  if (!opset_attrs) {
    int has_r = wt_has_input(c->in, c->n_in, ri), has_t = wt_has_input(c->in, c->n_in, ti);
    if ((has_r && (!c->in[ri].data || c->in[ri].dtype != WT_FLOAT)) || (has_t && !c->in[ti].data))
      return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs %s with a constant ratio and training_mode "
                         "(an initializer, or a bool graph input for training_mode); make the ratio an initializer",
                         c->node->op_type);
    *ratio = has_r ? *(const float *)c->in[ri].data : 0.5f;
    *training = has_t && *(const uint8_t *)c->in[ti].data != 0;
  }
  if (*training && !(*ratio >= 0.0f && *ratio <= 1.0f))
    return WT_GPU_FAIL(WT_ERR_INVALID_ARG, "input 'ratio' is %g; expected a value in [0, 1]", (double)*ratio);
  return 0;
}

/* Dropout: the mask drawn on the GPU from the session's draw, the CPU's masks bit for bit. */
static int dropout_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const un_params *p = c->params;
  float ratio;
  int training;
  (void)cap;
  if (c->in[0].dtype != WT_FLOAT)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend runs Dropout on float32 only (got %s)",
                       wt_dtype_name(c->in[0].dtype));
  int r = wt_gpu_dropout_mode(c, p->opset < 12, p->ratio, p->training, 1, 2, &ratio, &training);
  if (r) return r;
  int64_t n = wt_numel(&c->in[0]);
  r = wt_gpu_check_elems(n + 3, "the input");
  if (r) return r;
  int has_mask = c->n_out > 1 && c->node->outputs[1] >= 0;
  int kind = !has_mask ? 0 : c->out[1].dtype == WT_BOOL ? 1 : 2;
  wt_gpu_dropout_dispatch(d, training && ratio != 0.0f ? 0 : 1, n, WT_GPU_IN(0), has_mask ? WT_GPU_OUT(1) : WT_GPU_NONE,
                          kind, WT_GPU_OUT(0), ratio, p->seed);
  return 1;
}

/* cast.wgsl's kinds. */
static int cast_kind(int dtype) {
  switch (dtype) {
  case WT_FLOAT: return 0;
  case WT_INT32: return 1;
  case WT_INT64: return 2;
  case WT_BOOL: return 3;
  default: return -1;
  }
}

/* Cast and CastLike between float32, int32, int64 and bool. (A float16 weight's Cast to float
 * whose readers widen it is a view: the plan leaves it no step to encode.) */
static int cast_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_tensor *x = &c->in[0], *y = &c->out[0];
  int from = cast_kind(x->dtype), to = cast_kind(y->dtype);
  (void)cap;
  if (from < 0 || to < 0)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "the webgpu backend casts between float32, int32, int64 and bool only "
                       "(got %s to %s)", wt_dtype_name(x->dtype), wt_dtype_name(y->dtype));
  int64_t n = wt_numel(y);
  int r = wt_gpu_check_elems(n * 2, "the output");
  if (r) return r;
  *d = (wt_gpu_dispatch){.program = "cast", .n_bind = 2, .bind = {WT_GPU_IN(0), WT_GPU_OUT(0)}};
  wt_gpu_grid_1d(d, to == 3 ? (n + 3) / 4 : n, WT_GPU_WG);
  d->uniform[0] = (uint32_t)n;
  d->uniform[1] = d->groups[0];
  d->uniform[2] = (uint32_t)from;
  d->uniform[3] = (uint32_t)to;
  return 1;
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
    {.key = {"", "HardSwish"}, .encode = encode},
    {.key = {"", "Clip"}, .encode = encode},
    {.key = {"", "Not"}, .encode = encode},
    {.key = {"", "HardSigmoid"}, .encode = encode},
    {.key = {"", "Softsign"}, .encode = encode},
    {.key = {"", "Floor"}, .encode = encode},
    {.key = {"", "Ceil"}, .encode = encode},
    {.key = {"", "Round"}, .encode = encode},
    {.key = {"", "Elu"}, .encode = encode},
    {.key = {"", "Swish"}, .encode = encode},
    {.key = {"com.microsoft", "QuickGelu"}, .encode = encode},
    {.key = {"com.microsoft", "Gelu"}, .encode = encode},
    {.key = {"", "Cast"}, .encode = cast_encode},
    {.key = {"", "Dropout"}, .encode = dropout_encode},
    {.key = {"", "CastLike"}, .encode = cast_encode},
    /* a view of its input (the plan shares the bytes): nothing runs */
    {.key = {"", "Identity"}},
    {.key = {0}},
};
