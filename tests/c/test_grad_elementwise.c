/* Finite-difference checks of the unary / binary elementwise gradient rules (src/ops/unary_grad.c,
 * binary.c), including the com.microsoft activations, and plain-loop checks of the gradient ops'
 * kernels (DropoutGrad, DivGrad with broadcasting, the *Grad activations). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "op_harness.h"

static int failed;
#define WT_PI 3.14159265358979323846

/* Deterministic values in [lo, hi] at least `gap` away from every kink. */
static unsigned g_rng = 777u;
static float away(float lo, float hi, const float *kinks, int nk, float gap) {
  for (;;) {
    g_rng = g_rng * 1664525u + 1013904223u;
    float v = lo + (hi - lo) * (float)((g_rng >> 8) & 0xffffff) / (float)0xffffff;
    int ok = 1;
    for (int k = 0; k < nk; k++)
      if (fabsf(v - kinks[k]) < gap) ok = 0;
    if (ok) return v;
  }
}

#define MAXN 64
static float g_data[8][MAXN];
/* Fills data slot `slot` with n values (see away) and returns it. */
static const float *fill(int slot, int n, float lo, float hi, const float *kinks, int nk) {
  for (int i = 0; i < n && i < MAXN; i++) g_data[slot][i] = away(lo, hi, kinks, nk, 0.05f);
  return g_data[slot];
}

static const float K0[] = {0.0f};

/* ---- attribute setters ---- */
static wt_graph *g_g;
static void a_leaky(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", 0.2f); }
static void a_leaky_neg(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", -0.3f); }
static void a_elu(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", 0.7f); }
static void a_selu(wt_graph *g, int n) {
  wt_node_set_float(g, n, "alpha", 1.5f);
  wt_node_set_float(g, n, "gamma", 1.2f);
}
static void a_celu(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", 2.0f); }
static void a_hsig(wt_graph *g, int n) {
  wt_node_set_float(g, n, "alpha", 0.5f);
  wt_node_set_float(g, n, "beta", 0.4f);
}
static void a_thr(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", 0.3f); }
static void a_shrink(wt_graph *g, int n) {
  wt_node_set_float(g, n, "lambd", 0.4f);
  wt_node_set_float(g, n, "bias", 0.1f);
}
static void a_clip_old(wt_graph *g, int n) {
  wt_node_set_float(g, n, "min", -0.5f);
  wt_node_set_float(g, n, "max", 0.6f);
}
static void a_clip_old_min(wt_graph *g, int n) { wt_node_set_float(g, n, "min", -0.5f); }
static void a_cast_f(wt_graph *g, int n) { wt_node_set_int(g, n, "to", WT_FLOAT); }
static void a_tanh(wt_graph *g, int n) { wt_node_set_string(g, n, "approximate", "tanh"); }
static void a_quick(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", 1.3f); }
static void a_drop_old(wt_graph *g, int n) { wt_node_set_float(g, n, "ratio", 0.3f); }

static void check(const char *label, const char *op, const gc_opts *o, int n_in, const gc_arg *a,
                  gc_attrs_fn attrs) {
  failed += gradcheck(label, op, o, n_in, a, attrs);
}

/* One float input of shape [3, 5], data from fill(). */
static void unary(const char *label, const char *op, const gc_opts *o, float lo, float hi,
                  const float *kinks, int nk, gc_attrs_fn attrs) {
  gc_arg a = {.rank = 2, .dims = {3, 5}, .data = fill(0, 15, lo, hi, kinks, nk)};
  check(label, op, o, 1, &a, attrs);
}

static void test_unary(void) {
  (void)g_g;
  unary("Neg", "Neg", NULL, -2, 2, NULL, 0, NULL);
  unary("Abs", "Abs", NULL, -2, 2, K0, 1, NULL);
  unary("Exp", "Exp", NULL, -2, 2, NULL, 0, NULL);
  unary("Log", "Log", NULL, 0.3f, 3, NULL, 0, NULL);
  unary("Sqrt", "Sqrt", NULL, 0.3f, 3, NULL, 0, NULL);
  unary("Reciprocal", "Reciprocal", NULL, 0.4f, 3, NULL, 0, NULL);
  unary("Reciprocal negative", "Reciprocal", NULL, -3, -0.4f, NULL, 0, NULL);
  unary("Sin", "Sin", NULL, -3, 3, NULL, 0, NULL);
  unary("Cos", "Cos", NULL, -3, 3, NULL, 0, NULL);
  unary("Tan", "Tan", NULL, -1.2f, 1.2f, NULL, 0, NULL);
  unary("Tanh", "Tanh", NULL, -3, 3, NULL, 0, NULL);
  unary("Sigmoid", "Sigmoid", NULL, -4, 4, NULL, 0, NULL);
  unary("Erf", "Erf", NULL, -2, 2, NULL, 0, NULL);
  unary("Atan", "Atan", NULL, -3, 3, NULL, 0, NULL);
  unary("Asin", "Asin", NULL, -0.8f, 0.8f, NULL, 0, NULL);
  unary("Acos", "Acos", NULL, -0.8f, 0.8f, NULL, 0, NULL);
  unary("Sinh", "Sinh", NULL, -2, 2, NULL, 0, NULL);
  unary("Cosh", "Cosh", NULL, -2, 2, NULL, 0, NULL);
  unary("Asinh", "Asinh", NULL, -3, 3, NULL, 0, NULL);
  unary("Acosh", "Acosh", NULL, 1.3f, 4, NULL, 0, NULL);
  unary("Atanh", "Atanh", NULL, -0.8f, 0.8f, NULL, 0, NULL);
  unary("Softplus", "Softplus", NULL, -4, 4, NULL, 0, NULL);
  unary("Softsign", "Softsign", NULL, -3, 3, K0, 1, NULL);
  unary("Mish", "Mish", NULL, -4, 4, NULL, 0, NULL);
  unary("Swish default", "Swish", NULL, -3, 3, NULL, 0, NULL);
  unary("Swish alpha", "Swish", NULL, -3, 3, NULL, 0, a_quick);
  unary("Relu", "Relu", NULL, -2, 2, K0, 1, NULL);
  unary("LeakyRelu default", "LeakyRelu", NULL, -2, 2, K0, 1, NULL);
  unary("LeakyRelu alpha 0.2", "LeakyRelu", NULL, -2, 2, K0, 1, a_leaky);
  unary("LeakyRelu alpha -0.3", "LeakyRelu", NULL, -2, 2, K0, 1, a_leaky_neg);
  unary("Elu default", "Elu", NULL, -3, 2, K0, 1, NULL);
  unary("Elu alpha 0.7", "Elu", NULL, -3, 2, K0, 1, a_elu);
  unary("Selu default", "Selu", NULL, -3, 2, K0, 1, NULL);
  unary("Selu alpha gamma", "Selu", NULL, -3, 2, K0, 1, a_selu);
  unary("Celu default", "Celu", NULL, -3, 2, K0, 1, NULL);
  unary("Celu alpha 2", "Celu", NULL, -3, 2, K0, 1, a_celu);
  const float hs_k[] = {-2.5f, 2.5f}, hs2_k[] = {-0.8f, 1.2f}, hw_k[] = {-3, 3};
  unary("HardSigmoid default", "HardSigmoid", NULL, -4, 4, hs_k, 2, NULL);
  unary("HardSigmoid alpha beta", "HardSigmoid", NULL, -2, 2, hs2_k, 2, a_hsig);
  unary("HardSwish", "HardSwish", NULL, -5, 5, hw_k, 2, NULL);
  const float thr_k[] = {1.0f}, thr2_k[] = {0.3f}, sh_k[] = {-0.5f, 0.5f}, sh2_k[] = {-0.4f, 0.4f};
  unary("ThresholdedRelu default", "ThresholdedRelu", NULL, -1, 3, thr_k, 1, NULL);
  unary("ThresholdedRelu alpha", "ThresholdedRelu", NULL, -1, 2, thr2_k, 1, a_thr);
  unary("Shrink default", "Shrink", NULL, -2, 2, sh_k, 2, NULL);
  unary("Shrink lambd bias", "Shrink", NULL, -2, 2, sh2_k, 2, a_shrink);
  const float ints[] = {-3, -2, -1, 0, 1, 2, 3}, halves[] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f};
  unary("Floor", "Floor", NULL, -3, 3, ints, 7, NULL);
  unary("Ceil", "Ceil", NULL, -3, 3, ints, 7, NULL);
  unary("Round", "Round", NULL, -3, 3, halves, 6, NULL);
  unary("Sign", "Sign", NULL, -3, 3, K0, 1, NULL);
  unary("Identity", "Identity", NULL, -3, 3, NULL, 0, NULL);
  unary("Cast float->float", "Cast", NULL, -3, 3, NULL, 0, a_cast_f);

  gc_arg like[2] = {{.rank = 2, .dims = {2, 3}}, {.rank = 1, .dims = {4}}};
  check("CastLike float (target not constant)", "CastLike", NULL, 2, like, NULL);

  /* Clip: opset 11+ bounds as inputs (constant, absent, differentiated), opset 6 attributes. */
  const float clip_k[] = {-0.5f, 0.6f};
  float lo = -0.5f, hi = 0.6f;
  gc_arg clip[3] = {{.rank = 2, .dims = {3, 5}, .data = fill(0, 15, -2, 2, clip_k, 2)},
                    {.rank = 0, .data = &lo, .constant = 1},
                    {.rank = 0, .data = &hi, .constant = 1}};
  check("Clip min max inputs", "Clip", NULL, 3, clip, NULL);
  check("Clip min only", "Clip", NULL, 2, clip, NULL);
  gc_arg clip_nomin[3] = {clip[0], {.absent = 1}, clip[2]};
  check("Clip max only (min omitted)", "Clip", NULL, 3, clip_nomin, NULL);
  check("Clip no bounds", "Clip", NULL, 1, clip, NULL);
  gc_arg clip_d[3] = {clip[0], {.rank = 0, .data = &lo}, {.rank = 1, .dims = {1}, .data = &hi}};
  check("Clip bounds differentiated", "Clip", NULL, 3, clip_d, NULL);
  gc_opts o6 = {.opset = 6};
  check("Clip opset 6 attributes", "Clip", &o6, 1, clip, a_clip_old);
  check("Clip opset 6 min attribute", "Clip", &o6, 1, clip, a_clip_old_min);

  /* Dropout: inference (identity), training with ratio 0 (DropoutGrad path, deterministic). */
  gc_arg drop[3] = {{.rank = 2, .dims = {3, 4}}};
  check("Dropout opset 13 inference", "Dropout", &(gc_opts){.opset = 13}, 1, drop, NULL);
  float r0 = 0.0f, r5 = 0.5f;
  uint8_t t1 = 1, t0 = 0;
  gc_arg drop_t[3] = {drop[0], {.rank = 0, .data = &r0, .constant = 1},
                      {.dtype = WT_BOOL, .rank = 0, .data = &t1, .constant = 1}};
  check("Dropout training ratio 0", "Dropout", &(gc_opts){.opset = 13}, 3, drop_t, NULL);
  check("Dropout training ratio 0, mask output", "Dropout", &(gc_opts){.opset = 13, .n_out = 2}, 3,
        drop_t, NULL);
  gc_arg drop_i[3] = {drop[0], {.rank = 0, .data = &r5, .constant = 1},
                      {.dtype = WT_BOOL, .rank = 0, .data = &t0, .constant = 1}};
  check("Dropout training_mode false", "Dropout", &(gc_opts){.opset = 13}, 3, drop_i, NULL);
  check("Dropout ratio only (inference)", "Dropout", &(gc_opts){.opset = 13}, 2, drop_i, NULL);
  check("Dropout opset 10 attribute ratio", "Dropout", &(gc_opts){.opset = 10}, 1, drop, a_drop_old);

  /* Gelu family. */
  gc_opts o20 = {.opset = 20}, ms = {.domain = "com.microsoft"};
  unary("Gelu opset 20", "Gelu", &o20, -3, 3, NULL, 0, NULL);
  unary("Gelu opset 20 tanh", "Gelu", &o20, -3, 3, NULL, 0, a_tanh);
  unary("com.microsoft Gelu", "Gelu", &ms, -3, 3, NULL, 0, NULL);
  unary("FastGelu", "FastGelu", &ms, -3, 3, NULL, 0, NULL);
  unary("QuickGelu default", "QuickGelu", &ms, -3, 3, NULL, 0, NULL);
  unary("QuickGelu alpha", "QuickGelu", &ms, -3, 3, NULL, 0, a_quick);
  gc_arg bias[2] = {{.rank = 3, .dims = {2, 3, 4}, .lo = -3, .hi = 3}, {.rank = 1, .dims = {4}}};
  check("FastGelu with bias", "FastGelu", &ms, 2, bias, NULL);
  check("BiasGelu", "BiasGelu", &ms, 2, bias, NULL);
  gc_arg bias_c[2] = {bias[0], {.rank = 1, .dims = {4}, .constant = 1}};
  check("BiasGelu constant bias", "BiasGelu", &ms, 2, bias_c, NULL);
}

static void test_binary(void) {
  gc_arg same[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 2, .dims = {3, 4}, .lo = 0.5f, .hi = 2}};
  gc_arg bias[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 1, .dims = {4}, .lo = 0.5f, .hi = 2}};
  gc_arg both[2] = {{.rank = 3, .dims = {2, 3, 1}}, {.rank = 2, .dims = {1, 4}, .lo = -2, .hi = -0.5f}};
  gc_arg scal[2] = {{.rank = 0}, {.rank = 2, .dims = {2, 3}, .lo = 0.5f, .hi = 2}};
  check("Div same shape", "Div", NULL, 2, same, NULL);
  check("Div bias broadcast", "Div", NULL, 2, bias, NULL);
  check("Div both broadcast", "Div", NULL, 2, both, NULL);
  check("Div scalar numerator", "Div", NULL, 2, scal, NULL);
  gc_arg div_cb[2] = {bias[0], {.rank = 1, .dims = {4}, .lo = 0.5f, .hi = 2, .constant = 1}};
  check("Div by a constant", "Div", NULL, 2, div_cb, NULL);
  gc_arg div_ca[2] = {{.rank = 2, .dims = {3, 4}, .constant = 1}, bias[1]};
  check("Div of a constant (DivGrad, dB only)", "Div", NULL, 2, div_ca, NULL);

  gc_arg pw[2] = {{.rank = 2, .dims = {3, 4}, .lo = 0.5f, .hi = 2}, {.rank = 2, .dims = {3, 4}, .lo = -1.5f, .hi = 1.5f}};
  check("Pow base and exponent", "Pow", NULL, 2, pw, NULL);
  gc_arg pwb[2] = {{.rank = 2, .dims = {3, 4}, .lo = 0.5f, .hi = 2}, {.rank = 1, .dims = {4}, .lo = -1.5f, .hi = 1.5f}};
  check("Pow exponent broadcast", "Pow", NULL, 2, pwb, NULL);
  gc_arg pwa[2] = {{.rank = 1, .dims = {4}, .lo = 0.5f, .hi = 2}, {.rank = 2, .dims = {3, 4}, .lo = -1.5f, .hi = 1.5f}};
  check("Pow base broadcast", "Pow", NULL, 2, pwa, NULL);
  float two = 2.0f, three = 3.0f;
  gc_arg pw2[2] = {{.rank = 2, .dims = {3, 4}, .lo = -2, .hi = 2}, {.rank = 0, .data = &two, .constant = 1}};
  check("Pow square, negative base", "Pow", NULL, 2, pw2, NULL);
  int64_t e3 = 3;
  (void)three;
  gc_arg pwi[2] = {{.rank = 2, .dims = {3, 4}, .lo = -2, .hi = 2}, {.dtype = WT_INT64, .rank = 0, .data = &e3}};
  check("Pow int64 exponent", "Pow", NULL, 2, pwi, NULL);

  /* Min / Max: well-separated values, broadcasting, and ties (split evenly; the central
   * difference at a tie is 1/2 for each operand too). */
  static const float a6[6] = {0.1f, -1.0f, 2.0f, 0.7f, -0.4f, 1.5f};
  static const float b3[3] = {0.5f, 0.3f, -2.0f};
  static const float c1[1] = {0.0f};
  gc_arg mm[3] = {{.rank = 2, .dims = {2, 3}, .data = a6}, {.rank = 1, .dims = {3}, .data = b3},
                  {.rank = 0, .data = c1}};
  const char *mmops[] = {"Min", "Max"};
  for (int i = 0; i < 2; i++) {
    char l[64];
    snprintf(l, sizeof l, "%s of two, broadcast", mmops[i]);
    check(l, mmops[i], NULL, 2, mm, NULL);
    snprintf(l, sizeof l, "%s of three, broadcast", mmops[i]);
    check(l, mmops[i], NULL, 3, mm, NULL);
    snprintf(l, sizeof l, "%s of one", mmops[i]);
    check(l, mmops[i], NULL, 1, mm, NULL);
    static const float t6[6] = {0.1f, 0.3f, 2.0f, 0.5f, -0.4f, 1.5f};
    gc_arg tie[2] = {{.rank = 2, .dims = {2, 3}, .data = t6}, {.rank = 2, .dims = {2, 3}, .data = t6}};
    snprintf(l, sizeof l, "%s ties", mmops[i]);
    check(l, mmops[i], NULL, 2, tie, NULL);
  }

  gc_arg mean[3] = {{.rank = 2, .dims = {2, 3}}, {.rank = 1, .dims = {3}}, {.rank = 0}};
  check("Mean of three, broadcast", "Mean", NULL, 3, mean, NULL);
  check("Mean of one", "Mean", NULL, 1, mean, NULL);

  gc_arg pr[2] = {{.rank = 3, .dims = {2, 3, 4}, .data = fill(1, 24, -2, 2, K0, 1)},
                  {.rank = 2, .dims = {3, 1}}};
  check("PRelu per-channel slope", "PRelu", NULL, 2, pr, NULL);
  gc_arg pr2[2] = {pr[0], {.rank = 1, .dims = {4}}};
  check("PRelu last-axis slope", "PRelu", NULL, 2, pr2, NULL);
  gc_arg pr3[2] = {pr[0], {.rank = 3, .dims = {2, 3, 4}}};
  check("PRelu full slope", "PRelu", NULL, 2, pr3, NULL);

  static const uint8_t cond[4] = {1, 0, 0, 1};
  gc_arg wh[3] = {{.dtype = WT_BOOL, .rank = 2, .dims = {1, 4}, .data = cond},
                  {.rank = 2, .dims = {3, 4}}, {.rank = 2, .dims = {3, 1}}};
  check("Where broadcast", "Where", NULL, 3, wh, NULL);
  gc_arg wh2[3] = {{.dtype = WT_BOOL, .rank = 2, .dims = {1, 4}, .data = cond},
                   {.rank = 0}, {.rank = 1, .dims = {4}}};
  check("Where scalar X", "Where", NULL, 3, wh2, NULL);
}

/* ---- kernels of the gradient ops vs plain loops --------------------------------------------- */

static int run1(const char *op, int n_in, const wt_tensor *in, int n_out, wt_tensor *out,
                gc_attrs_fn attrs) {
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, op, "com.microsoft", n_in, n_out);
  if (attrs) attrs(g, node);
  int rc = harness_run(g, node, 1, n_in, in, n_out, out);
  wt_graph_free(g);
  return rc;
}

static void test_dropout_grad(void) {
  enum { N = 37 };
  float dy[N];
  uint8_t mask[N];
  for (int i = 0; i < N; i++) {
    dy[i] = (float)i - 10.0f;
    mask[i] = (uint8_t)(i % 3 != 0);
  }
  int64_t d[1] = {N};
  float ratio = 0.25f;
  uint8_t on = 1, off = 0;
  wt_tensor in[4] = {harness_f32(1, d, dy), {.dtype = WT_BOOL, .rank = 1, .dims = {N}, .data = mask},
                     harness_f32(0, NULL, &ratio), {.dtype = WT_BOOL, .rank = 0, .data = &on}};
  wt_tensor out[1];
  CHECK_OK(run1("DropoutGrad", 4, in, 1, out, NULL));
  for (int i = 0; i < N; i++) CHECK_NEAR(((float *)out[0].data)[i], mask[i] ? dy[i] / 0.75f : 0.0f, 1e-5);
  harness_free(1, out);
  in[3].data = &off; /* inference: dY passes */
  CHECK_OK(run1("DropoutGrad", 4, in, 1, out, NULL));
  for (int i = 0; i < N; i++) CHECK_NEAR(((float *)out[0].data)[i], dy[i], 0);
  harness_free(1, out);
  CHECK_OK(run1("DropoutGrad", 2, in, 1, out, NULL)); /* no training_mode: inference */
  for (int i = 0; i < N; i++) CHECK_NEAR(((float *)out[0].data)[i], dy[i], 0);
  harness_free(1, out);
  in[1].dtype = WT_FLOAT;
  CHECK(run1("DropoutGrad", 2, in, 1, out, NULL) != WT_OK); /* mask must be bool */
  harness_free(1, out);
}

static void test_div_grad(void) {
  /* A [2, 3, 1], B [4]: Y [2, 3, 4] */
  float a[6], b[4], dy[24];
  for (int i = 0; i < 6; i++) a[i] = 0.5f * (float)i - 1.0f;
  for (int i = 0; i < 4; i++) b[i] = 0.75f + 0.5f * (float)i;
  for (int i = 0; i < 24; i++) dy[i] = 0.1f * (float)(i % 7) - 0.3f;
  int64_t da_[3] = {2, 3, 1}, db_[1] = {4}, dd[3] = {2, 3, 4};
  wt_tensor in[3] = {harness_f32(3, dd, dy), harness_f32(3, da_, a), harness_f32(1, db_, b)};
  wt_tensor out[2];
  CHECK_OK(run1("DivGrad", 3, in, 2, out, NULL));
  double ra[6] = {0}, rb[4] = {0};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 4; j++) {
      ra[i] += dy[i * 4 + j] / b[j];
      rb[j] -= dy[i * 4 + j] * a[i] / (b[j] * b[j]);
    }
  CHECK(out[0].rank == 3 && out[0].dims[2] == 1 && out[1].rank == 1 && out[1].dims[0] == 4);
  for (int i = 0; i < 6; i++) CHECK_NEAR(((float *)out[0].data)[i], ra[i], 1e-5);
  for (int j = 0; j < 4; j++) CHECK_NEAR(((float *)out[1].data)[j], rb[j], 1e-5);
  harness_free(2, out);
  in[0].dims[2] = 5; /* dY not the broadcast shape */
  CHECK(run1("DivGrad", 3, in, 2, out, NULL) != WT_OK);
  harness_free(2, out);
}

static double ref_grad(const char *op, double dy, double t, double alpha) {
  if (!strcmp(op, "ReluGrad")) return t > 0 ? dy : 0;
  if (!strcmp(op, "SigmoidGrad")) return dy * t * (1 - t);
  if (!strcmp(op, "TanhGrad")) return dy * (1 - t * t);
  if (!strcmp(op, "LeakyReluGrad")) return t > 0 ? dy : alpha * dy;
  if (!strcmp(op, "GeluGrad"))
    return dy * (0.5 * (1 + erf(t / sqrt(2.0))) + t * exp(-0.5 * t * t) / sqrt(2 * WT_PI));
  if (!strcmp(op, "FastGeluGrad")) {
    double k = sqrt(2 / WT_PI), u = k * (t + 0.044715 * t * t * t), th = tanh(u);
    return dy * (0.5 * (1 + th) + 0.5 * t * (1 - th * th) * k * (1 + 3 * 0.044715 * t * t));
  }
  /* QuickGeluGrad */
  double s = 1 / (1 + exp(-alpha * t));
  return dy * (s + t * alpha * s * (1 - s));
}

static void a_alpha_03(wt_graph *g, int n) { wt_node_set_float(g, n, "alpha", 0.3f); }

static void test_act_grads(void) {
  enum { N = 23 };
  float dy[N], t[N], bias[N];
  for (int i = 0; i < N; i++) {
    dy[i] = 0.3f * (float)(i % 5) - 0.6f;
    t[i] = 0.37f * (float)i - 4.0f;
    bias[i] = 0.05f * (float)i;
  }
  int64_t d[1] = {N};
  wt_tensor in[3] = {harness_f32(1, d, dy), harness_f32(1, d, t), harness_f32(1, d, bias)};
  const char *ops[] = {"ReluGrad", "SigmoidGrad", "TanhGrad", "LeakyReluGrad", "GeluGrad",
                       "FastGeluGrad", "QuickGeluGrad"};
  for (int k = 0; k < 7; k++) {
    for (int with_alpha = 0; with_alpha < 2; with_alpha++) {
      double alpha = with_alpha ? 0.3 : !strcmp(ops[k], "QuickGeluGrad") ? 1.702 : 0.01;
      wt_tensor out[1];
      CHECK_OK(run1(ops[k], 2, in, 1, out, with_alpha ? a_alpha_03 : NULL));
      for (int i = 0; i < N; i++) {
        double r = ref_grad(ops[k], dy[i], t[i], alpha);
        if (fabs(((float *)out[0].data)[i] - r) > 1e-5 + 1e-5 * fabs(r))
          fprintf(stderr, "%s[%d]: %g vs %g\n", ops[k], i, ((float *)out[0].data)[i], r);
        CHECK(fabs(((float *)out[0].data)[i] - r) <= 1e-5 + 1e-5 * fabs(r));
      }
      harness_free(1, out);
    }
  }
  /* Bias*GeluGrad_dX over [1, N] with a long bias row (exercises the chunking) */
  const char *bops[] = {"BiasGeluGrad_dX", "BiasFastGeluGrad_dX"};
  for (int k = 0; k < 2; k++) {
    wt_tensor out[1];
    CHECK_OK(run1(bops[k], 3, in, 1, out, NULL));
    for (int i = 0; i < N; i++) {
      double r = ref_grad(k ? "FastGeluGrad" : "GeluGrad", dy[i], (double)(t[i] + bias[i]), 0);
      CHECK(fabs(((float *)out[0].data)[i] - r) <= 1e-5 + 1e-5 * fabs(r));
    }
    harness_free(1, out);
  }
}

/* GeluGrad's rational derivative (backend/cpu/elementwise_grad.c) against Phi(x) + x phi(x) in
 * double on a dense sweep across its fitted range, its clamp and the tails, plus the specials:
 * within 4e-7 absolute (the fit's bound 3.5e-7 plus rounding), gelu'(+-inf) = 1 / 0, NaN stays. */
static void test_gelu_grad_sweep(void) {
  enum { N = 48011 };
  static float dy[N], t[N];
  for (int i = 0; i < N; i++) {
    dy[i] = 1.0f;
    t[i] = -12.0f + 24.0f * (float)i / (float)(N - 1);
  }
  const float special[] = {0.0f, -0.0f, 6.327f, -6.327f, 6.3270006f, -6.3270006f, 6.3269997f,
                           1e-30f, -1e-30f, 1.0f, -1.0f};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) t[k * 97] = special[k];
  t[N - 3] = INFINITY;
  t[N - 2] = -INFINITY;
  t[N - 1] = NAN;
  int64_t d[1] = {N};
  wt_tensor in[2] = {harness_f32(1, d, dy), harness_f32(1, d, t)}, out[1];
  CHECK_OK(run1("GeluGrad", 2, in, 1, out, NULL));
  const float *g = out[0].data;
  double worst = 0;
  for (int i = 0; i < N - 3; i++) {
    double e = fabs(g[i] - ref_grad("GeluGrad", 1.0, t[i], 0));
    if (e > worst) worst = e;
  }
  if (worst > 4e-7) fprintf(stderr, "GeluGrad sweep: worst absolute error %g\n", worst);
  CHECK(worst <= 4e-7);
  CHECK(g[N - 3] == 1.0f && g[N - 2] == 0.0f && isnan(g[N - 1]));
  harness_free(1, out);
}

/* The com.microsoft forward activations vs plain loops. */
static void test_ms_forward(void) {
  enum { R = 3, C = 5 };
  float x[R * C], b[C];
  for (int i = 0; i < R * C; i++) x[i] = 0.41f * (float)i - 3.0f;
  for (int j = 0; j < C; j++) b[j] = 0.3f * (float)j - 0.5f;
  int64_t dx[2] = {R, C}, db[1] = {C};
  wt_tensor in[2] = {harness_f32(2, dx, x), harness_f32(1, db, b)};
  const char *ops[] = {"Gelu", "FastGelu", "FastGelu", "BiasGelu", "QuickGelu", "QuickGelu"};
  const int n_in[] = {1, 1, 2, 2, 1, 1};
  for (int k = 0; k < 6; k++) {
    wt_tensor out[1];
    int quick_alpha = k == 5;
    CHECK_OK(run1(ops[k], n_in[k], in, 1, out, quick_alpha ? a_alpha_03 : NULL));
    for (int i = 0; i < R * C; i++) {
      double v = x[i] + (n_in[k] == 2 ? b[i % C] : 0.0), r;
      if (k == 0 || k == 3) r = 0.5 * v * (1 + erf(v / sqrt(2.0)));
      else if (k <= 2) r = 0.5 * v * (1 + tanh(sqrt(2 / WT_PI) * (v + 0.044715 * v * v * v)));
      else r = v / (1 + exp(-(quick_alpha ? 0.3 : 1.702) * v));
      CHECK_NEAR(((float *)out[0].data)[i], r, 1e-5 + 1e-5 * fabs(r));
    }
    harness_free(1, out);
  }
  wt_tensor out[1];
  in[1].dims[0] = 4; /* bias must match the last dim */
  CHECK(run1("BiasGelu", 2, in, 1, out, NULL) != WT_OK);
  harness_free(1, out);
}

int main(void) {
  test_ms_forward();
  test_unary();
  test_binary();
  test_dropout_grad();
  test_div_grad();
  test_act_grads();
  test_gelu_grad_sweep();
  CHECK(failed == 0);
  CHECK_DONE();
}
