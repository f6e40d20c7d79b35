/* Float unary maps (activations and math functions); see elementwise.h. Piecewise-linear
 * maps use simd.h; exp, erf, tanh and sigmoid (and the activations built on them) use the
 * vector math of vmath.h; the rest call libm per element. */
#include <math.h>

#include "base/pool.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/vmath.h"

/* Vector body + scalar tail for maps that simd.h can express. */
#define VMAP(VEXPR, SEXPR)                                  \
  do {                                                      \
    int64_t i = 0;                                          \
    for (; i + 4 <= n; i += 4) {                            \
      wt_f32x4 v = wt_f32x4_load(x + i);                    \
      wt_f32x4_store(y + i, (VEXPR));                       \
    }                                                       \
    for (; i < n; i++) {                                    \
      float s = x[i];                                       \
      y[i] = (SEXPR);                                       \
    }                                                       \
  } while (0)

#define SMAP(SEXPR)                                         \
  do {                                                      \
    for (int64_t i = 0; i < n; i++) {                       \
      float s = x[i];                                       \
      y[i] = (SEXPR);                                       \
    }                                                       \
  } while (0)

static inline float softplusf_(float s) {
  return s > 0.0f ? s + log1pf(expf(-s)) : log1pf(expf(s));
}

static inline float clampf_(float s, float lo, float hi) {
  s = s < lo ? lo : s;
  return hi < s ? hi : s;
}

static void unary(wt_ew_unop op, int64_t n, const float *x, float *y, float alpha, float beta) {
  wt_f32x4 zero = wt_f32x4_zero();
  switch (op) {
    case WT_EW_NEG: VMAP(wt_f32x4_neg(v), -s); return;
    case WT_EW_ABS: VMAP(wt_f32x4_abs(v), fabsf(s)); return;
    case WT_EW_SQRT: VMAP(wt_f32x4_sqrt(v), sqrtf(s)); return;
    case WT_EW_RELU: VMAP(wt_f32x4_max(v, zero), s < 0.0f ? 0.0f : s); return;
    case WT_EW_RECIPROCAL: {
      wt_f32x4 one = wt_f32x4_splat(1.0f);
      VMAP(wt_f32x4_div(one, v), 1.0f / s);
      return;
    }
    case WT_EW_LEAKYRELU: {
      wt_f32x4 va = wt_f32x4_splat(alpha);
      VMAP(wt_f32x4_select(wt_f32x4_gt(v, zero), v, wt_f32x4_mul(v, va)), s > 0.0f ? s : s * alpha);
      return;
    }
    case WT_EW_CLIP: {
      wt_f32x4 lo = wt_f32x4_splat(alpha), hi = wt_f32x4_splat(beta);
      VMAP(wt_f32x4_min(wt_f32x4_max(v, lo), hi), clampf_(s, alpha, beta));
      return;
    }
    case WT_EW_EXP: VMAP(wt_f32x4_exp(v), wt_vm_expf(s)); return;
    case WT_EW_LOG: SMAP(logf(s)); return;
    case WT_EW_SIN: SMAP(sinf(s)); return;
    case WT_EW_COS: SMAP(cosf(s)); return;
    case WT_EW_TANH: VMAP(wt_f32x4_tanh(v), wt_vm_tanhf(s)); return;
    case WT_EW_ERF: VMAP(wt_f32x4_erf(v), wt_vm_erff(s)); return;
    case WT_EW_SIGMOID: VMAP(wt_f32x4_sigmoid(v), wt_vm_sigmoidf(s)); return;
    case WT_EW_SOFTPLUS: SMAP(softplusf_(s)); return;
    case WT_EW_SOFTSIGN: SMAP(s / (1.0f + fabsf(s))); return;
    case WT_EW_FLOOR: SMAP(floorf(s)); return;
    case WT_EW_CEIL: SMAP(ceilf(s)); return;
    /* nearbyintf in the default rounding mode rounds halves to even, as ONNX Round wants. */
    case WT_EW_ROUND: SMAP(nearbyintf(s)); return;
    case WT_EW_SIGN: SMAP(s > 0.0f ? 1.0f : (s < 0.0f ? -1.0f : s)); return;
    case WT_EW_ELU: SMAP(s < 0.0f ? alpha * expm1f(s) : s); return;
    case WT_EW_SELU: SMAP(s <= 0.0f ? beta * alpha * expm1f(s) : beta * s); return;
    case WT_EW_HARDSIGMOID: SMAP(clampf_(alpha * s + beta, 0.0f, 1.0f)); return;
    case WT_EW_HARDSWISH: SMAP(s * clampf_(s * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f)); return;
    case WT_EW_GELU: {
      wt_f32x4 h = wt_f32x4_splat(0.5f), one = wt_f32x4_splat(1.0f);
      wt_f32x4 r = wt_f32x4_splat(0.70710678118654752f);
      VMAP(wt_f32x4_mul(wt_f32x4_mul(h, v), wt_f32x4_add(one, wt_f32x4_erf_rational(wt_f32x4_mul(v, r)))),
           0.5f * s * (1.0f + wt_vm_erf_rationalf(s * 0.70710678118654752f)));
      return;
    }
    case WT_EW_GELU_TANH: {
      wt_f32x4 h = wt_f32x4_splat(0.5f), one = wt_f32x4_splat(1.0f);
      wt_f32x4 a = wt_f32x4_splat(0.79788456080286536f), g = wt_f32x4_splat(0.044715f);
      VMAP(wt_f32x4_mul(wt_f32x4_mul(h, v),
                        wt_f32x4_add(one, wt_f32x4_tanh(wt_f32x4_mul(
                                              a, wt_f32x4_add(v, wt_f32x4_mul(wt_f32x4_mul(
                                                                     wt_f32x4_mul(g, v), v), v)))))),
           0.5f * s * (1.0f + wt_vm_tanhf(0.79788456080286536f * (s + 0.044715f * s * s * s))));
      return;
    }
    case WT_EW_MISH: SMAP(s * tanhf(softplusf_(s))); return;
    case WT_EW_TAN: SMAP(tanf(s)); return;
    case WT_EW_ASIN: SMAP(asinf(s)); return;
    case WT_EW_ACOS: SMAP(acosf(s)); return;
    case WT_EW_ATAN: SMAP(atanf(s)); return;
    case WT_EW_SINH: SMAP(sinhf(s)); return;
    case WT_EW_COSH: SMAP(coshf(s)); return;
    case WT_EW_ASINH: SMAP(asinhf(s)); return;
    case WT_EW_ACOSH: SMAP(acoshf(s)); return;
    case WT_EW_ATANH: SMAP(atanhf(s)); return;
    case WT_EW_CELU: SMAP(s > 0.0f ? s : alpha * expm1f(s / alpha)); return;
    case WT_EW_THRESHOLDEDRELU: SMAP(s > alpha ? s : 0.0f); return;
    case WT_EW_SHRINK: SMAP(s < -alpha ? s + beta : (s > alpha ? s - beta : 0.0f)); return;
    case WT_EW_QUICKGELU: {
      wt_f32x4 va = wt_f32x4_splat(alpha);
      VMAP(wt_f32x4_mul(v, wt_f32x4_sigmoid(wt_f32x4_mul(va, v))), s * wt_vm_sigmoidf(alpha * s));
      return;
    }
    case WT_EW_UNOP_COUNT: return;
  }
}

/* Large maps run on the thread pool in blocks of WT_EW_BLOCK elements (a multiple of 4: each
 * element takes the vector or scalar path it takes in one pass, so the bits are the same). */
typedef struct unary_job {
  wt_ew_unop op;
  const float *x;
  float *y;
  float alpha, beta;
} unary_job;

static void unary_range(void *ctx, int64_t i0, int64_t n) {
  const unary_job *j = ctx;
  unary(j->op, n, j->x + i0, j->y + i0, j->alpha, j->beta);
}

/* A few vector instructions an element (the rest are heavy: vector math or libm). */
static int light(wt_ew_unop op) {
  switch (op) {
    case WT_EW_NEG: case WT_EW_ABS: case WT_EW_SQRT: case WT_EW_RELU: case WT_EW_RECIPROCAL:
    case WT_EW_LEAKYRELU: case WT_EW_CLIP: case WT_EW_SOFTSIGN: case WT_EW_FLOOR: case WT_EW_CEIL:
    case WT_EW_ROUND: case WT_EW_SIGN: case WT_EW_HARDSIGMOID: case WT_EW_HARDSWISH:
    case WT_EW_THRESHOLDEDRELU: case WT_EW_SHRINK: return 1;
    default: return 0;
  }
}

void wt_ew_unary_f32(wt_ew_unop op, int64_t n, const float *x, float *y, float alpha, float beta) {
  unary_job j = {op, x, y, alpha, beta};
  if (light(op)) wt_parallel_range(n, WT_EW_BLOCK, WT_EW_THREAD_MIN, unary_range, &j);
  else wt_parallel_range(n, WT_EW_HEAVY_BLOCK, WT_EW_HEAVY_THREAD_MIN, unary_range, &j);
}
