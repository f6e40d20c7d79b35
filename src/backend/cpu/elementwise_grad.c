/* Gradient kernels of the elementwise family (see elementwise.h): activation gradients
 * (ReluGrad, SigmoidGrad, TanhGrad, LeakyReluGrad, GeluGrad, FastGeluGrad, QuickGeluGrad), the
 * row-wise bias add of the Bias*Gelu ops, and DivGrad's broadcast-reducing accumulation. */
#include <math.h>
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/vmath.h"

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

/* d/dx of 0.5 x (1 + erf(x / sqrt 2)) = Phi(x) + x phi(x) = 0.5 + 0.5 D(x), D odd: one rational
 * function D(x) = x P(x^2) / Q(x^2) on |x| <= 6.327, and sign(x) beyond (where |D - 1| < 1e-8):
 * vmath.h's odd rational, as erf's.
 * Fitted for this file (numpy least squares with Lawson reweighting against mpmath's erf and
 * exp, 3000 Chebyshev nodes): |D error| <= 3.7e-7, <= 7e-7 evaluated in float, so the derivative
 * is within 3.5e-7 of Phi(x) + x phi(x) (tests/c/test_grad_elementwise.c sweeps it). One division
 * and no exp or erf: about half the vector operations of Phi from GELU's erf plus phi from exp,
 * which made GeluGrad the largest elementwise op of a ViT's or transformer block's step. */
static inline wt_f32x4 gelu_d(wt_f32x4 x) {
  static const float p[7] = {-4.127555520e-10f, 5.038458539e-07f, 7.648172323e-05f, 6.418543489e-05f,
                             2.861746401e-02f, -5.955918133e-02f, 1.595771670e+00f};
  static const float q[6] = {1.017530303e-05f, 1.994620688e-04f, 3.633966902e-03f, 4.157801718e-02f,
                             2.960230112e-01f, 1.0f};
  wt_f32x4 h = wt_f32x4_splat(0.5f);
  return wt_f32x4_add(h, wt_f32x4_mul(h, wt_vm_odd_rational_(x, 6.327f, p, 7, q, 6)));
}

/* d/dx of 0.5 x (1 + tanh(a (x + g x^3))), a = sqrt(2 / pi), g = 0.044715. */
static inline wt_f32x4 fastgelu_d(wt_f32x4 x) {
  wt_f32x4 a = wt_f32x4_splat(0.79788456080286536f), g = wt_f32x4_splat(0.044715f);
  wt_f32x4 one = wt_f32x4_splat(1.0f);
  wt_f32x4 x3 = wt_f32x4_mul(wt_f32x4_mul(x, x), x);
  wt_f32x4 ax = wt_f32x4_mul(a, x), agx3 = wt_f32x4_mul(wt_f32x4_mul(a, g), x3);
  wt_f32x4 th = wt_f32x4_tanh(wt_f32x4_add(ax, agx3));
  wt_f32x4 d = wt_f32x4_add(ax, wt_f32x4_mul(wt_f32x4_splat(3.0f), agx3));
  return wt_f32x4_mul(wt_f32x4_splat(0.5f),
                      wt_f32x4_add(wt_f32x4_add(one, th), wt_f32x4_mul(wt_f32x4_sub(one, wt_f32x4_mul(th, th)), d)));
}

/* d/dx of x sigmoid(alpha x) = s (1 + alpha x (1 - s)). */
static inline wt_f32x4 quickgelu_d(wt_f32x4 x, wt_f32x4 alpha) {
  wt_f32x4 one = wt_f32x4_splat(1.0f);
  wt_f32x4 v = wt_f32x4_mul(alpha, x), s = wt_f32x4_sigmoid(v);
  return wt_f32x4_mul(s, wt_f32x4_add(one, wt_f32x4_mul(v, wt_f32x4_sub(one, s))));
}

/* Vector body; the tail goes through the same vector code on a zero-padded copy, so every
 * element gets the same bits wherever it sits. */
#define GVMAP(VEXPR)                                               \
  do {                                                             \
    int64_t i = 0;                                                 \
    wt_f32x4 g, v;                                                 \
    for (; i + 4 <= n; i += 4) {                                   \
      g = wt_f32x4_load(dy + i), v = wt_f32x4_load(t + i);         \
      wt_f32x4_store(dx + i, (VEXPR));                             \
    }                                                              \
    if (i < n) {                                                   \
      float gb[4] = {0}, tb[4] = {0}, ob[4];                       \
      size_t rest = (size_t)(n - i) * sizeof(float);               \
      memcpy(gb, dy + i, rest);                                    \
      memcpy(tb, t + i, rest);                                     \
      g = wt_f32x4_load(gb), v = wt_f32x4_load(tb);                \
      wt_f32x4_store(ob, (VEXPR));                                 \
      memcpy(dx + i, ob, rest);                                    \
    }                                                              \
  } while (0)

static void grad(wt_ew_gradop op, int64_t n, const float *dy, const float *t, float *dx,
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
    case WT_EW_GELU_GRAD: GVMAP(wt_f32x4_mul(g, gelu_d(v))); return;
    case WT_EW_FASTGELU_GRAD: GVMAP(wt_f32x4_mul(g, fastgelu_d(v))); return;
    case WT_EW_QUICKGELU_GRAD: {
      wt_f32x4 va = wt_f32x4_splat(alpha);
      GVMAP(wt_f32x4_mul(g, quickgelu_d(v, va)));
      return;
    }
  }
}

typedef struct grad_job {
  wt_ew_gradop op;
  const float *dy, *t;
  float *dx;
  float alpha;
} grad_job;

static void grad_range(void *ctx, int64_t i0, int64_t n) {
  const grad_job *j = ctx;
  grad(j->op, n, j->dy + i0, j->t ? j->t + i0 : NULL, j->dx + i0, j->alpha);
}

/* On the thread pool as wt_ew_unary_f32: the Gelu gradients (erf, exp, tanh) are heavy. */
void wt_ew_grad_f32(wt_ew_gradop op, int64_t n, const float *dy, const float *t, float *dx,
                    float alpha) {
  grad_job j = {op, dy, t, dx, alpha};
  if (op == WT_EW_GELU_GRAD || op == WT_EW_FASTGELU_GRAD || op == WT_EW_QUICKGELU_GRAD)
    wt_parallel_range(n, WT_EW_HEAVY_BLOCK, WT_EW_HEAVY_THREAD_MIN, grad_range, &j);
  else wt_parallel_range(n, WT_EW_BLOCK, WT_EW_THREAD_MIN, grad_range, &j);
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
