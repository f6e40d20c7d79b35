/* Op family: unary elementwise ops — math and activations (float kernels in
 * backend/cpu/elementwise_unary.c), their integer variants (Neg Abs Sign Relu Clip), Not, IsNaN,
 * IsInf, Cast, CastLike, Identity, Dropout, and the com.microsoft activations Gelu, FastGelu,
 * BiasGelu and QuickGelu. Gradient rules and the *Grad ops live in unary_grad.c. */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "backend/cpu/elementwise.h"
#include "ops/dtype_set.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"
#include "ops/unary_ops.h"

typedef struct un_params {
  int kind;
  int to;             /* Cast / CastLike target dtype */
  float alpha, beta;  /* activation attributes; Clip bounds before opset 11 */
  int clip_inputs;    /* Clip opset >= 11: bounds come from inputs 1 and 2 */
  int bias;           /* FastGelu / BiasGelu: input 1 is a bias along the last axis */
  /* Dropout */
  int opset;
  int training;       /* opset < 12: fixed by attributes */
  float ratio;
  uint64_t seed;
} un_params;
static_assert(sizeof(un_params) <= WT_PARAMS_MAX, "params too large");

static int check_scalar_input(const wt_infer_ctx *ctx, int i, const char *name) {
  if (!wt_has_input(ctx->in, ctx->n_in, i)) return WT_OK;
  if (wt_numel(&ctx->in[i]) != 1) {
    char b[128];
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has shape %s; expected a scalar", name,
                     i, wt_shape_str(ctx->in[i].rank, ctx->in[i].dims, b, sizeof b));
  }
  return WT_OK;
}

static int infer_dropout(wt_infer_ctx *ctx, un_params *p) {
  p->opset = ctx->opset;
  p->ratio = wt_attr_float(ctx->node, "ratio", 0.5f);
  /* No seed: a fixed one, so runs are reproducible (see the PRNG note at run_dropout). */
  p->seed = (uint64_t)wt_attr_int(ctx->node, "seed", 0x5eed);
  if (ctx->opset < 7) p->training = wt_attr_int(ctx->node, "is_test", 0) == 0;
  if (ctx->opset >= 12) {
    WT_TRY(check_scalar_input(ctx, 1, "ratio"));
    WT_TRY(check_scalar_input(ctx, 2, "training_mode"));
    if (wt_has_input(ctx->in, ctx->n_in, 1)) WT_TRY(wt_expect_float(&ctx->in[1], "ratio", 1));
    if (wt_has_input(ctx->in, ctx->n_in, 2))
      WT_TRY(wt_expect_dtype(&ctx->in[2], "training_mode", 2, WT_BOOL));
  } else if (ctx->n_in > 1) {
    return wt_errorf(WT_ERR_INVALID_ARG, "%d inputs; expected 1 before opset 12", ctx->n_in);
  }
  if (!(p->ratio >= 0.0f && p->ratio <= 1.0f))
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'ratio' is %g; expected a value in [0, 1]",
                     (double)p->ratio);
  wt_set_shape(&ctx->out[0], ctx->in[0].dtype, ctx->in[0].rank, ctx->in[0].dims);
  /* The mask is bool from opset 10, the data type before. */
  if (ctx->n_out > 1)
    wt_set_shape(&ctx->out[1], ctx->opset >= 10 ? WT_BOOL : ctx->in[0].dtype, ctx->in[0].rank,
                 ctx->in[0].dims);
  return WT_OK;
}

static int infer(wt_infer_ctx *ctx) {
  const un_spec *s = ctx->op->spec;
  un_params *p = WT_PARAMS(ctx, un_params);
  p->kind = s->kind;
  if (s->alpha.name) p->alpha = wt_attr_float(ctx->node, s->alpha.name, s->alpha.dflt);
  if (s->beta.name) p->beta = wt_attr_float(ctx->node, s->beta.name, s->beta.dflt);
  const wt_tensor *x = &ctx->in[0];
  unsigned allowed = s->dtypes;
  if (s->int_since && ctx->opset < s->int_since) allowed = DT_F;
  if (!(dt_bit(x->dtype) & allowed))
    return wt_errorf(WT_ERR_SHAPE, "input 0 has dtype %s; expected %s",
                     wt_dtype_name(x->dtype), dt_list(allowed));
  int out_dtype = x->dtype;
  switch (s->kind) {
    case K_ISNAN: out_dtype = WT_BOOL; break;
    case K_ISINF:
      out_dtype = WT_BOOL;
      p->alpha = (float)wt_attr_int(ctx->node, "detect_negative", 1);
      p->beta = (float)wt_attr_int(ctx->node, "detect_positive", 1);
      break;
    case WT_EW_GELU: {
      const char *a = wt_attr_string(ctx->node, "approximate", "none");
      if (strcmp(a, "tanh") == 0) p->kind = WT_EW_GELU_TANH;
      else if (strcmp(a, "none") != 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'approximate' is '%s'; expected 'none' or 'tanh'", a);
      break;
    }
    case WT_EW_CLIP:
      if (ctx->opset < 11) {
        p->alpha = wt_attr_float(ctx->node, "min", -FLT_MAX);
        p->beta = wt_attr_float(ctx->node, "max", FLT_MAX);
        if (ctx->n_in > 1)
          return wt_errorf(WT_ERR_INVALID_ARG, "%d inputs; expected 1 before opset 11", ctx->n_in);
      } else {
        p->clip_inputs = 1;
        for (int i = 1; i < ctx->n_in; i++) {
          WT_TRY(check_scalar_input(ctx, i, i == 1 ? "min" : "max"));
          if (wt_has_input(ctx->in, ctx->n_in, i))
            WT_TRY(wt_expect_dtype(&ctx->in[i], i == 1 ? "min" : "max", i, x->dtype));
        }
      }
      break;
    case K_CAST:
    case K_CASTLIKE:
      out_dtype = s->kind == K_CAST ? (int)wt_attr_int(ctx->node, "to", 0) : ctx->in[1].dtype;
      if (!dt_bit(out_dtype))
        return wt_errorf(WT_ERR_UNSUPPORTED, "target dtype %s; expected float, float16, int32, int64 or "
                         "bool", wt_dtype_name(out_dtype));
      p->to = out_dtype;
      break;
    case K_DROPOUT:
      return infer_dropout(ctx, p);
    case K_FASTGELU:
    case K_BIASGELU:
      p->kind = s->kind == K_FASTGELU ? WT_EW_GELU_TANH : WT_EW_GELU;
      if (wt_has_input(ctx->in, ctx->n_in, 1)) {
        const wt_tensor *b = &ctx->in[1];
        if (b->dtype != WT_FLOAT || b->rank != 1 || x->rank < 1 || b->dims[0] != x->dims[x->rank - 1]) {
          char sb[128], sx[128];
          return wt_errorf(WT_ERR_SHAPE, "input 'bias' (index 1) is %s %s; expected a 1-D float tensor "
                           "matching the last dim of input 0 %s", wt_dtype_name(b->dtype),
                           wt_shape_str(b->rank, b->dims, sb, sizeof sb),
                           wt_shape_str(x->rank, x->dims, sx, sizeof sx));
        }
        p->bias = 1;
      }
      break;
    default: break;
  }
  wt_set_shape(&ctx->out[0], out_dtype, x->rank, x->dims);
  return WT_OK;
}

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

static uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Training-mode PRNG: a counter-based hash, element i keeps when hash(key + i) >= ratio.
 * key mixes the seed with a process-wide call counter, so successive training steps draw
 * fresh masks while a given seed and call sequence reproduce exactly. */
static atomic_ullong g_dropout_calls;

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
  uint64_t key = splitmix64(p->seed ^ splitmix64(atomic_fetch_add(&g_dropout_calls, 1)));
  float scale = ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f;
  for (int64_t i = 0; i < n; i++) {
    float u = (float)(splitmix64(key + (uint64_t)i) >> 40) * (1.0f / 16777216.0f);
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

/* The op definitions and the family table, from the list in unary_ops.h. */
#define GRAD_RULE(ID) wt_unary_grad_##ID
#define GRAD_NO_RULE(ID) NULL
#define DEF_OP(ID, DOM, TYPE, KIND, DT, SINCE, MIN_IN, MAX_IN, MAX_OUT, FLAGS, GRAD, ...)        \
  static const wt_op_def wt_op_##ID = {                                                          \
      .domain = DOM, .op_type = TYPE, .min_inputs = MIN_IN, .max_inputs = MAX_IN,                 \
      .min_outputs = 1, .max_outputs = MAX_OUT, .infer = infer,                                   \
      .grad = GRAD_##GRAD(ID), .flags = FLAGS,                                                    \
      .spec = &(const un_spec){.kind = KIND, .dtypes = DT, .int_since = SINCE, __VA_ARGS__}};
#define DEF_ACT(ID, KIND, DT, SINCE, GRAD, ...) \
  DEF_OP(ID, "", #ID, KIND, DT, SINCE, 1, 1, 1, WT_OP_INPLACE, GRAD, __VA_ARGS__)
WT_UNARY_OPS(DEF_ACT, DEF_OP)

#define LIST_OP(ID, ...) &wt_op_##ID,
#define LIST_ACT(ID, ...) &wt_op_##ID,
const wt_op_def *const wt_ops_unary[] = {WT_UNARY_OPS(LIST_ACT, LIST_OP) NULL};

#define KERNEL_OP(ID, DOM, TYPE, ...) {.key = {DOM, TYPE}, .run = run},
#define KERNEL_ACT(ID, ...) {.key = {"", #ID}, .run = run},
const wt_cpu_kernel wt_cpu_kernels_unary[] = {WT_UNARY_OPS(KERNEL_ACT, KERNEL_OP)WT_CPU_KERNELS_END};
