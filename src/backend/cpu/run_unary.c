/* The CPU kernels of the unary family (definitions: src/ops/unary.c): the float maps of
 * backend/cpu/elementwise_unary.c, their integer variants, Not, IsNaN, IsInf, Cast, CastLike,
 * Identity, Dropout and the com.microsoft activations. */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "backend/cpu/elementwise.h"
#include "backend/cpu/kernel.h"
#include "ops/dtype_set.h"
#include "ops/op.h"
#include "ops/unary_ops.h"

/* ---- integer variants -------------------------------------------------------------------- */

/* Neg / Abs of the most negative value wrap (as in numpy) instead of being undefined. */
#define INT_MAP(T, UT)                                                                          \
  static void int_map_##T(int kind, int64_t n, const T *x, T *y, T lo, T hi) {                  \
    switch (kind) {                                                                             \
      case WT_EW_NEG: for (int64_t i = 0; i < n; i++) y[i] = (T)((UT)0 - (UT)x[i]); return;     \
      case WT_EW_ABS:                                                                           \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0 ? (T)((UT)0 - (UT)x[i]) : x[i];         \
        return;                                                                                 \
      case WT_EW_SIGN: for (int64_t i = 0; i < n; i++) y[i] = (T)((x[i] > 0) - (x[i] < 0)); return; \
      case WT_EW_RELU: for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0 ? 0 : x[i]; return;      \
      case WT_EW_CLIP:                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                       \
          T v = x[i] < lo ? lo : x[i];                                                          \
          y[i] = hi < v ? hi : v;                                                               \
        }                                                                                       \
        return;                                                                                 \
    }                                                                                           \
  }
INT_MAP(int32_t, uint32_t)
INT_MAP(int64_t, uint64_t)

/* ---- Cast ---------------------------------------------------------------------------------- */

static void cast(const wt_tensor *x, wt_tensor *y) {
  int64_t n = wt_numel(x);
  if (x->dtype == y->dtype) {
    if (x->data != y->data) memcpy(y->data, x->data, wt_nbytes(x));
    return;
  }
  if (y->dtype == WT_FLOAT16) { /* through float: int64 -> float rounds once more, as ORT does */
    for (int64_t i = 0; i < n; i++)
      ((uint16_t *)y->data)[i] = wt_f32_to_f16((float)dt_load_d(x->data, x->dtype, i));
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    switch (y->dtype) {
      case WT_FLOAT:
        ((float *)y->data)[i] = x->dtype == WT_INT64 ? (float)((const int64_t *)x->data)[i]
                                                     : (float)dt_load_d(x->data, x->dtype, i);
        break;
      case WT_INT32:
        ((int32_t *)y->data)[i] = x->dtype == WT_INT64
                                      ? (int32_t)((const int64_t *)x->data)[i]
                                      : (int32_t)dt_sat_i64(dt_load_d(x->data, x->dtype, i), INT32_MIN, INT32_MAX);
        break;
      case WT_INT64:
        ((int64_t *)y->data)[i] = x->dtype == WT_FLOAT
                                      ? dt_sat_i64(((const float *)x->data)[i], INT64_MIN, INT64_MAX)
                                      : (int64_t)dt_load_d(x->data, x->dtype, i);
        break;
      default:
        ((uint8_t *)y->data)[i] = x->dtype == WT_INT64 ? ((const int64_t *)x->data)[i] != 0
                                                       : dt_load_d(x->data, x->dtype, i) != 0.0;
        break;
    }
  }
}

/* ---- Dropout ------------------------------------------------------------------------------- */

/* Training-mode PRNG: a counter-based hash, element i keeps when hash(key + i) >= ratio.
 * key mixes the seed with the runner's draw count (ops/exec.h), so successive training steps
 * draw fresh masks while a given seed and a runner's call sequence reproduce exactly. */

static int run_dropout(const wt_run_ctx *ctx, const un_params *p) {
  const wt_tensor *x = &ctx->in[0];
  int64_t n = wt_numel(x);
  float ratio = p->ratio;
  int training = p->training;
  if (p->opset >= 12) {
    ratio = wt_has_input(ctx->in, ctx->n_in, 1) ? *(const float *)ctx->in[1].data : 0.5f;
    training = wt_has_input(ctx->in, ctx->n_in, 2) && *(const uint8_t *)ctx->in[2].data != 0;
  }
  const float *xd = x->data;
  float *yd = ctx->out[0].data;
  void *mask = ctx->n_out > 1 ? ctx->out[1].data : NULL;
  int mask_bool = ctx->n_out > 1 && ctx->out[1].dtype == WT_BOOL;
  if (!training || ratio == 0.0f) {
    if (yd != xd) memcpy(yd, xd, (size_t)n * sizeof(float));
    if (mask && mask_bool) memset(mask, 1, (size_t)n);
    else if (mask) for (int64_t i = 0; i < n; i++) ((float *)mask)[i] = 1.0f;
    return WT_OK;
  }
  if (!(ratio >= 0.0f && ratio <= 1.0f))
    return wt_errorf(WT_ERR_RUNTIME, "input 'ratio' is %g; expected a value in [0, 1]", (double)ratio);
  uint64_t key = wt_dropout_key(p->seed, wt_exec_draw(ctx->exec));
  float scale = ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f;
  for (int64_t i = 0; i < n; i++) {
    float u = (float)(wt_splitmix64(key + (uint64_t)i) >> 40) * (1.0f / 16777216.0f);
    int keep = u >= ratio;
    yd[i] = keep ? xd[i] * scale : 0.0f;
    if (mask && mask_bool) ((uint8_t *)mask)[i] = (uint8_t)keep;
    else if (mask) ((float *)mask)[i] = (float)keep;
  }
  return WT_OK;
}

/* ---- run ----------------------------------------------------------------------------------- */

static int run(const wt_run_ctx *ctx) {
  const un_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  wt_tensor *y = &ctx->out[0];
  int64_t n = wt_numel(x);
  switch (p->kind) {
    case K_IDENTITY:
      if (y->data != x->data) memcpy(y->data, x->data, wt_nbytes(x));
      return WT_OK;
    case K_CAST:
    case K_CASTLIKE:
      cast(x, y);
      return WT_OK;
    case K_DROPOUT:
      return run_dropout(ctx, p);
    case K_NOT:
      for (int64_t i = 0; i < n; i++)
        ((uint8_t *)y->data)[i] = ((const uint8_t *)x->data)[i] == 0;
      return WT_OK;
    case K_ISNAN:
      for (int64_t i = 0; i < n; i++) ((uint8_t *)y->data)[i] = isnan(((const float *)x->data)[i]);
      return WT_OK;
    case K_ISINF:
      for (int64_t i = 0; i < n; i++) {
        float v = ((const float *)x->data)[i];
        ((uint8_t *)y->data)[i] = isinf(v) && (v < 0 ? p->alpha != 0 : p->beta != 0);
      }
      return WT_OK;
    default: break;
  }
  int has_lo = p->clip_inputs && wt_has_input(ctx->in, ctx->n_in, 1);
  int has_hi = p->clip_inputs && wt_has_input(ctx->in, ctx->n_in, 2);
  switch (x->dtype) {
    case WT_FLOAT: {
      float a = p->alpha, b = p->beta;
      if (p->bias) {
        const wt_tensor *bias = &ctx->in[1];
        if (n) wt_ew_add_bias_f32(n, x->data, bias->data, bias->dims[0], y->data);
        wt_ew_unary_f32(p->kind, n, y->data, y->data, a, b);
        return WT_OK;
      }
      if (p->clip_inputs) {
        a = has_lo ? *(const float *)ctx->in[1].data : -INFINITY;
        b = has_hi ? *(const float *)ctx->in[2].data : INFINITY;
      }
      wt_ew_unary_f32(p->kind, n, x->data, y->data, a, b);
      return WT_OK;
    }
    case WT_INT32:
      int_map_int32_t(p->kind, n, x->data, y->data,
                      has_lo ? *(const int32_t *)ctx->in[1].data : INT32_MIN,
                      has_hi ? *(const int32_t *)ctx->in[2].data : INT32_MAX);
      return WT_OK;
    default:
      int_map_int64_t(p->kind, n, x->data, y->data,
                      has_lo ? *(const int64_t *)ctx->in[1].data : INT64_MIN,
                      has_hi ? *(const int64_t *)ctx->in[2].data : INT64_MAX);
      return WT_OK;
  }
}

#define KERNEL_OP(ID, DOM, TYPE, ...) {.key = {DOM, TYPE}, .run = run},
#define KERNEL_ACT(ID, ...) {.key = {"", #ID}, .run = run},
const wt_cpu_kernel wt_cpu_kernels_unary[] = {WT_UNARY_OPS(KERNEL_ACT, KERNEL_OP)WT_CPU_KERNELS_END};
