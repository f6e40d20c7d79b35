/* Gradient kernels of the elementwise family (see elementwise.h): activation gradients
 * (ReluGrad, SigmoidGrad, TanhGrad, LeakyReluGrad, GeluGrad, FastGeluGrad, QuickGeluGrad), the
 * row-wise bias add of the Bias*Gelu ops, and DivGrad's broadcast-reducing accumulation. */
#include <math.h>
#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/simd.h"

/* Vector body + scalar tail over (dy, t) -> dx. */
#define GMAP(VEXPR, SEXPR)                                         \
  do {                                                             \
    int64_t i = 0;                                                 \
    for (; i + 4 <= n; i += 4) {                                   \
      wt_f32x4 g = wt_f32x4_load(dy + i), v = wt_f32x4_load(t + i); \
      wt_f32x4_store(dx + i, (VEXPR));                             \
    }                                                              \
    for (; i < n; i++) {                                           \
      float g = dy[i], s = t[i];                                   \
      dx[i] = (SEXPR);                                             \
    }                                                              \
  } while (0)

#define GSMAP(SEXPR)                                               \
  do {                                                             \
    for (int64_t i = 0; i < n; i++) {                              \
      float g = dy[i], s = t[i];                                   \
      dx[i] = (SEXPR);                                             \
    }                                                              \
  } while (0)

static inline float sigmoid_(float s) {
  if (s >= 0.0f) return 1.0f / (1.0f + expf(-s));
  float e = expf(s);
  return e / (1.0f + e);
}

/* d/dx of 0.5 x (1 + erf(x / sqrt 2)) = Phi(x) + x phi(x). */
static inline float gelu_d(float x) {
  return 0.5f * (1.0f + erff(x * 0.70710678118654752f)) +
         x * 0.39894228040143268f * expf(-0.5f * x * x);
}

/* d/dx of 0.5 x (1 + tanh(a (x + g x^3))), a = sqrt(2 / pi), g = 0.044715. */
static inline float fastgelu_d(float x) {
  const float a = 0.79788456080286536f, g = 0.044715f;
  float x3 = x * x * x;
  float th = tanhf(a * x + a * g * x3);
  return 0.5f * (1.0f + th + (1.0f - th * th) * (a * x + 3.0f * a * g * x3));
}

/* d/dx of x sigmoid(alpha x) = s (1 + alpha x (1 - s)). */
static inline float quickgelu_d(float x, float alpha) {
  float v = alpha * x, s = sigmoid_(v);
  return s * (1.0f + v * (1.0f - s));
}

void wt_ew_grad_f32(wt_ew_gradop op, int64_t n, const float *dy, const float *t, float *dx,
                    float alpha) {
  wt_f32x4 zero = wt_f32x4_zero(), one = wt_f32x4_splat(1.0f);
  switch (op) {
    case WT_EW_RELU_GRAD:
      GMAP(wt_f32x4_select(wt_f32x4_gt(v, zero), g, zero), s > 0.0f ? g : 0.0f);
      return;
    case WT_EW_SIGMOID_GRAD:
      GMAP(wt_f32x4_mul(g, wt_f32x4_mul(v, wt_f32x4_sub(one, v))), g * s * (1.0f - s));
      return;
    case WT_EW_TANH_GRAD:
      GMAP(wt_f32x4_mul(g, wt_f32x4_sub(one, wt_f32x4_mul(v, v))), g * (1.0f - s * s));
      return;
    case WT_EW_LEAKYRELU_GRAD: {
      wt_f32x4 va = wt_f32x4_splat(alpha);
      GMAP(wt_f32x4_select(wt_f32x4_gt(v, zero), g, wt_f32x4_mul(g, va)),
           s > 0.0f ? g : alpha * g);
      return;
    }
    case WT_EW_GELU_GRAD: GSMAP(g * gelu_d(s)); return;
    case WT_EW_FASTGELU_GRAD: GSMAP(g * fastgelu_d(s)); return;
    case WT_EW_QUICKGELU_GRAD: GSMAP(g * quickgelu_d(s, alpha)); return;
  }
}

void wt_ew_add_bias_f32(int64_t n, const float *x, const float *b, int64_t nb, float *y) {
  for (int64_t r = 0; r + nb <= n; r += nb) {
    int64_t j = 0;
    for (; j + 4 <= nb; j += 4)
      wt_f32x4_store(y + r + j, wt_f32x4_add(wt_f32x4_load(x + r + j), wt_f32x4_load(b + j)));
    for (; j < nb; j++) y[r + j] = x[r + j] + b[j];
  }
}

/* ---- DivGrad ------------------------------------------------------------------------------ */

typedef struct div_user {
  const float *a, *b;
  float *da, *db;
} div_user;

/* One row of dy: operands a / b walk with stride 0 or 1; their gradients share the offsets
 * (the gradient buffers have the operands' shapes), so each row accumulates in place. */
static int div_grad_row(void *user, int64_t n, const void *const *p, const int *st, void *out) {
  (void)out;
  const div_user *u = user;
  const float *dy = p[0], *a = p[1], *b = p[2];
  int sa = st[1], sb = st[2];
  if (u->da) {
    float *da = u->da + (a - u->a);
    if (sa) {
      for (int64_t i = 0; i < n; i++) da[i] += dy[i] / b[i * sb];
    } else {
      double acc = 0.0;
      for (int64_t i = 0; i < n; i++) acc += (double)(dy[i] / b[i * sb]);
      da[0] += (float)acc;
    }
  }
  if (u->db) {
    float *db = u->db + (b - u->b);
    if (sb) {
      for (int64_t i = 0; i < n; i++) db[i] -= dy[i] * a[i * sa] / (b[i] * b[i]);
    } else {
      double acc = 0.0;
      float bb = b[0] * b[0];
      for (int64_t i = 0; i < n; i++) acc += (double)(dy[i] * a[i * sa] / bb);
      db[0] -= (float)acc;
    }
  }
  return 0;
}

void wt_ew_div_grad_f32(const wt_bcast *plan, const float *dy, const float *a, const float *b,
                        float *da, int64_t na, float *db, int64_t nb) {
  if (da) memset(da, 0, sizeof(float) * (size_t)na);
  if (db) memset(db, 0, sizeof(float) * (size_t)nb);
  div_user u = {.a = a, .b = b, .da = da, .db = db};
  const void *ins[3] = {dy, a, b};
  size_t es[3] = {sizeof(float), sizeof(float), sizeof(float)};
  char sink = 0;
  wt_bcast_run(plan, ins, es, &sink, 0, div_grad_row, &u);
}
