/* Finite-difference checks of the norm / softmax / loss / reduce gradient rules (and through
 * them the com.microsoft gradient kernels), plus direct checks of BatchNormInternal's extra
 * outputs and SoftmaxCrossEntropyLossGrad details against plain loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "op_harness.h"


static int g_failed;
static void gc(const char *label, const char *op, int opset, int n_in, const gc_arg *args) {
  gc_opts o = {.opset = opset};
  g_failed += gradcheck(label, op, &o, n_in, args, gc_set_attrs);
}

/* ---- softmax family ---------------------------------------------------------------------- */

static void softmax_checks(void) {
  gc_arg x3[1] = {{.rank = 3, .dims = {2, 3, 5}, .lo = -2, .hi = 2}};
  const char *ops[2] = {"Softmax", "LogSoftmax"};
  char label[96];
  for (int k = 0; k < 2; k++) {
    gc_attrs_reset();
    snprintf(label, sizeof label, "%s-13 default axis", ops[k]);
    gc(label, ops[k], 13, 1, x3);
    gc_attrs_reset();
    gc_attr_int("axis", 1);
    snprintf(label, sizeof label, "%s-13 axis 1 (strided)", ops[k]);
    gc(label, ops[k], 13, 1, x3);
    gc_attrs_reset();
    gc_attr_int("axis", -3);
    snprintf(label, sizeof label, "%s-13 axis -3", ops[k]);
    gc(label, ops[k], 13, 1, x3);
    gc_attrs_reset();
    snprintf(label, sizeof label, "%s-11 default axis 1 (coerced 2-D)", ops[k]);
    gc(label, ops[k], 11, 1, x3);
    gc_attrs_reset();
    gc_attr_int("axis", 2);
    snprintf(label, sizeof label, "%s-11 axis 2", ops[k]);
    gc(label, ops[k], 11, 1, x3);
    gc_attrs_reset();
    gc_attr_int("axis", -2);
    snprintf(label, sizeof label, "%s-11 axis -2", ops[k]);
    gc(label, ops[k], 11, 1, x3);
  }
}

static void loss_checks(void) {
  static const int64_t lab[4] = {2, 0, 3, 1};
  static const int64_t lab_ign[4] = {2, -100, 3, 2};
  static const int32_t lab32[6] = {0, 2, 1, 1, 0, 2};
  static const float w[4] = {0.5f, 1.0f, 2.0f, 0.25f};
  gc_arg x2[3] = {{.rank = 2, .dims = {4, 4}, .lo = -2, .hi = 2},
                  {.dtype = WT_INT64, .rank = 1, .dims = {4}, .data = lab},
                  {.rank = 1, .dims = {4}, .data = w, .constant = 1}};
  gc_arg x2i[3] = {x2[0], {.dtype = WT_INT64, .rank = 1, .dims = {4}, .data = lab_ign}, x2[2]};
  gc_arg x3[2] = {{.rank = 3, .dims = {2, 3, 3}, .lo = -2, .hi = 2},
                  {.dtype = WT_INT32, .rank = 2, .dims = {2, 3}, .data = lab32}};
  const char *ops[2] = {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"};
  const char *reds[3] = {"mean", "sum", "none"};
  char label[128];
  for (int k = 0; k < 2; k++) {
    for (int r = 0; r < 3; r++) {
      gc_attrs_reset();
      gc_attr_string("reduction", reds[r]);
      snprintf(label, sizeof label, "%s %s", ops[k], reds[r]);
      gc(label, ops[k], 13, 2, x2);
      snprintf(label, sizeof label, "%s %s weighted", ops[k], reds[r]);
      gc(label, ops[k], 13, 3, x2);
      gc_attr_int("ignore_index", -100);
      snprintf(label, sizeof label, "%s %s weighted ignore_index", ops[k], reds[r]);
      gc(label, ops[k], 13, 3, x2i);
      snprintf(label, sizeof label, "%s %s [N, C, D] int32 labels", ops[k], reds[r]);
      gc(label, ops[k], 13, 2, x3);
    }
    gc_attrs_reset();
    gc_attr_int("ignore_index", 2);
    snprintf(label, sizeof label, "%s mean ignore_index = a class", ops[k]);
    gc(label, ops[k], 12, 2, x2);
  }
}

/* ---- norm family ------------------------------------------------------------------------- */

static void layernorm_checks(void) {
  gc_arg a[3] = {{.rank = 3, .dims = {2, 3, 5}, .lo = -2, .hi = 2},
                 {.rank = 1, .dims = {5}, .lo = 0.5f, .hi = 1.5f},
                 {.rank = 1, .dims = {5}}};
  gc_attrs_reset();
  gc("LayerNormalization axis -1", "LayerNormalization", 17, 3, a);
  gc("LayerNormalization no bias", "LayerNormalization", 17, 2, a);
  gc_arg b[3] = {{.rank = 3, .dims = {2, 3, 5}, .lo = -2, .hi = 2},
                 {.rank = 2, .dims = {3, 5}, .lo = 0.5f, .hi = 1.5f},
                 {.rank = 3, .dims = {1, 3, 5}}};
  gc_attr_int("axis", 1);
  gc_attr_float("epsilon", 1e-3f);
  gc("LayerNormalization axis 1, epsilon, [1, 3, 5] bias", "LayerNormalization", 17, 3, b);
  gc_attrs_reset();
  gc_attr_int("axis", -2);
  gc("LayerNormalization axis -2", "LayerNormalization", 17, 3, b);
  gc_arg cst[3] = {a[0], {.rank = 1, .dims = {5}, .lo = 0.5f, .hi = 1.5f, .constant = 1},
                   {.rank = 1, .dims = {5}, .constant = 1}};
  gc_attrs_reset();
  gc("LayerNormalization constant scale / bias", "LayerNormalization", 17, 3, cst);
}

static void batchnorm_checks(void) {
  gc_arg t4[5] = {{.rank = 4, .dims = {3, 2, 2, 3}, .lo = -2, .hi = 2},
                  {.rank = 1, .dims = {2}, .lo = 0.5f, .hi = 1.5f},
                  {.rank = 1, .dims = {2}},
                  {.rank = 1, .dims = {2}, .constant = 1},
                  {.rank = 1, .dims = {2}, .lo = 0.5f, .hi = 1.5f, .constant = 1}};
  gc_attrs_reset();
  gc_attr_int("training_mode", 1);
  gc_attr_float("epsilon", 1e-3f);
  gc("BatchNormalization training [N, C, H, W]", "BatchNormalization", 15, 5, t4);
  gc_arg t2[5] = {{.rank = 2, .dims = {5, 3}, .lo = -2, .hi = 2},
                  {.rank = 1, .dims = {3}, .lo = 0.5f, .hi = 1.5f},
                  {.rank = 1, .dims = {3}},
                  {.rank = 1, .dims = {3}, .constant = 1},
                  {.rank = 1, .dims = {3}, .lo = 0.5f, .hi = 1.5f, .constant = 1}};
  gc_attrs_reset();
  gc_attr_int("training_mode", 1);
  gc("BatchNormalization training [N, C]", "BatchNormalization", 14, 5, t2);
  {
    gc_opts o = {.opset = 15, .domain = "com.microsoft"};
    g_failed += gradcheck("BatchNormInternal (ORT training form)", "BatchNormInternal", &o, 5, t4,
                          gc_set_attrs);
  }
  /* inference mode: every input differentiable (the statistics too) */
  gc_arg f4[5] = {t4[0], t4[1], t4[2], {.rank = 1, .dims = {2}},
                  {.rank = 1, .dims = {2}, .lo = 0.5f, .hi = 1.5f}};
  gc_attrs_reset();
  gc("BatchNormalization inference-15 [N, C, H, W]", "BatchNormalization", 15, 5, f4);
  gc_attr_float("epsilon", 1e-2f);
  gc("BatchNormalization inference-9 epsilon", "BatchNormalization", 9, 5, f4);
  gc_arg f2[5] = {t2[0], t2[1], t2[2], {.rank = 1, .dims = {3}},
                  {.rank = 1, .dims = {3}, .lo = 0.5f, .hi = 1.5f}};
  gc_attrs_reset();
  gc_attr_int("training_mode", 0);
  gc("BatchNormalization inference [N, C]", "BatchNormalization", 15, 5, f2);
}

/* ---- reduce family ----------------------------------------------------------------------- */

static void reduce_checks(void) {
  static const int64_t ax02[2] = {0, -1}, ax1[1] = {1};
  /* Distinct values so max/min are unique and away from ties. */
  static float xs[24];
  for (int i = 0; i < 24; i++) xs[i] = (float)((i * 7) % 24) * 0.1f - 1.15f;
  gc_arg x[1] = {{.rank = 3, .dims = {2, 3, 4}, .data = xs}};
  gc_arg xp[1] = {{.rank = 3, .dims = {2, 3, 4}, .lo = 0.5f, .hi = 2}};
  gc_arg x18[2] = {x[0], {.dtype = WT_INT64, .rank = 1, .dims = {2}, .data = ax02}};
  gc_arg xp18[2] = {xp[0], {.dtype = WT_INT64, .rank = 1, .dims = {2}, .data = ax02}};
  const char *ops[7] = {"ReduceMax", "ReduceMin", "ReduceL2", "ReduceLogSumExp",
                        "ReduceSumSquare", "ReduceL1", "ReduceLogSum"};
  char label[128];
  for (int k = 0; k < 7; k++) {
    int positive = k == 6;
    const gc_arg *in = positive ? xp : x, *in18 = positive ? xp18 : x18;
    gc_attrs_reset();
    snprintf(label, sizeof label, "%s all axes keepdims", ops[k]);
    gc(label, ops[k], 13, 1, in);
    gc_attr_int("keepdims", 0);
    snprintf(label, sizeof label, "%s all axes keepdims=0", ops[k]);
    gc(label, ops[k], 13, 1, in);
    gc_attrs_reset();
    gc_attr_ints("axes", 2, ax02);
    gc_attr_int("keepdims", 0);
    snprintf(label, sizeof label, "%s axes [0, -1] keepdims=0", ops[k]);
    gc(label, ops[k], 13, 1, in);
    gc_attrs_reset();
    gc_attr_ints("axes", 1, ax1);
    snprintf(label, sizeof label, "%s axes [1]", ops[k]);
    gc(label, ops[k], 13, 1, in);
    gc_attrs_reset();
    gc_attr_int("keepdims", 0);
    snprintf(label, sizeof label, "%s-18 axes input keepdims=0", ops[k]);
    gc(label, ops[k], 18, 2, in18);
    gc_attrs_reset();
    gc_attr_int("noop_with_empty_axes", 1);
    snprintf(label, sizeof label, "%s-18 noop_with_empty_axes", ops[k]);
    gc(label, ops[k], 18, 1, in);
  }
  /* L2 where a reduced slice is all zeros: the gradient there is 0 (ONNX Runtime's rule). */
  static const float z[6] = {0, 0, 0, 1.0f, -2.0f, 0.5f};
  gc_arg xz[1] = {{.rank = 2, .dims = {2, 3}, .data = z}};
  gc_attrs_reset();
  gc_attr_ints("axes", 1, ax1);
  /* The FD of |x| at 0 is 0 too, so the zero row checks like any other. */
  gc("ReduceL2 with an all-zero slice", "ReduceL2", 13, 1, xz);
}

static void cumsum_topk_checks(void) {
  static const int64_t ax1[1] = {1}, axm1[1] = {-1}, k2[1] = {2};
  gc_arg c[2] = {{.rank = 2, .dims = {3, 4}}, {.dtype = WT_INT64, .rank = 0, .data = ax1}};
  gc_arg cm[2] = {{.rank = 3, .dims = {2, 3, 2}}, {.dtype = WT_INT64, .rank = 1, .dims = {1}, .data = axm1}};
  for (int e = 0; e < 2; e++)
    for (int r = 0; r < 2; r++) {
      char label[96];
      gc_attrs_reset();
      if (e) gc_attr_int("exclusive", 1);
      if (r) gc_attr_int("reverse", 1);
      snprintf(label, sizeof label, "CumSum exclusive=%d reverse=%d", e, r);
      gc(label, "CumSum", 14, 2, c);
      snprintf(label, sizeof label, "CumSum axis -1 exclusive=%d reverse=%d", e, r);
      gc(label, "CumSum", 14, 2, cm);
    }
  static float xs[24];
  for (int i = 0; i < 24; i++) xs[i] = (float)((i * 5) % 24) * 0.1f - 1.1f;
  gc_arg t[2] = {{.rank = 3, .dims = {2, 3, 4}, .data = xs},
                 {.dtype = WT_INT64, .rank = 1, .dims = {1}, .data = k2}};
  gc_opts o = {.opset = 11, .n_out = 2};
  gc_attrs_reset();
  g_failed += gradcheck("TopK k=2 last axis", "TopK", &o, 2, t, gc_set_attrs);
  gc_attr_int("axis", 1);
  gc_attr_int("largest", 0);
  g_failed += gradcheck("TopK k=2 axis 1 smallest", "TopK", &o, 2, t, gc_set_attrs);
  gc_attrs_reset();
  gc_attr_int("axis", -3);
  g_failed += gradcheck("TopK k=2 axis -3", "TopK", &o, 2, t, gc_set_attrs);
  gc_attrs_reset();
  gc_attr_int("k", 3);
  gc_attr_int("axis", 1);
  gc_opts o1 = {.opset = 1, .n_out = 2};
  g_failed += gradcheck("TopK-1 k attribute", "TopK", &o1, 1, t, gc_set_attrs);
}

/* ---- direct kernel checks ----------------------------------------------------------------- */

/* BatchNormInternal's saved mean / inv std against plain loops. */
static void bn_internal_outputs(void) {
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "BatchNormInternal", "com.microsoft", 5, 5);
  wt_node_set_float(g, node, "epsilon", 1e-2f);
  float x[12], sc[2] = {1.5f, 0.5f}, b[2] = {0.1f, -0.2f}, m[2] = {0.3f, 0.0f}, v[2] = {1, 2};
  for (int i = 0; i < 12; i++) x[i] = (float)((i * 5) % 12) * 0.25f - 1.0f;
  int64_t xd[3] = {2, 2, 3}, cd[1] = {2};
  wt_tensor in[5] = {harness_f32(3, xd, x), harness_f32(1, cd, sc), harness_f32(1, cd, b),
                     harness_f32(1, cd, m), harness_f32(1, cd, v)};
  wt_tensor out[5];
  CHECK_OK(harness_run(g, node, 1, 5, in, 5, out));
  for (int c = 0; c < 2; c++) {
    double s = 0, q = 0;
    for (int n = 0; n < 2; n++)
      for (int k = 0; k < 3; k++) s += x[(n * 2 + c) * 3 + k];
    double mu = s / 6;
    for (int n = 0; n < 2; n++)
      for (int k = 0; k < 3; k++) q += pow(x[(n * 2 + c) * 3 + k] - mu, 2);
    double var = q / 6;
    CHECK_NEAR(((float *)out[3].data)[c], mu, 1e-5);
    CHECK_NEAR(((float *)out[4].data)[c], 1 / sqrt(var + 1e-2), 1e-5);
    CHECK_NEAR(((float *)out[1].data)[c], m[c] * 0.9 + mu * 0.1, 1e-5);
    CHECK_NEAR(((float *)out[2].data)[c], v[c] * 0.9 + var * 0.1, 1e-5);
    for (int n = 0; n < 2; n++)
      for (int k = 0; k < 3; k++) {
        int i = (n * 2 + c) * 3 + k;
        CHECK_NEAR(((float *)out[0].data)[i], (x[i] - mu) / sqrt(var + 1e-2) * sc[c] + b[c], 1e-4);
      }
  }
  harness_free(5, out);
  wt_graph_free(g);
}

/* SoftmaxCrossEntropyLossGrad: ignore_index as input 4, and mean over all-ignored labels (ORT
 * leaves dY unscaled then; every row is ignored, so the result is 0). */
static void sce_grad_details(void) {
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "SoftmaxCrossEntropyLossGrad", "com.microsoft", 5, 1);
  float dy = 2.0f, lp[6], w[3] = {1.0f, 2.0f, 3.0f};
  for (int i = 0; i < 6; i++) lp[i] = logf((float)(i % 3 + 1) / 6.0f);
  int64_t lab[2] = {1, 7}, ign = 7;
  int64_t ld[2] = {2, 3}, nd[1] = {2}, cd[1] = {3};
  wt_tensor in[5] = {harness_f32(0, NULL, &dy), harness_f32(2, ld, lp), harness_i64(1, nd, lab),
                     harness_f32(1, cd, w), harness_i64(0, NULL, &ign)};
  wt_tensor out[1];
  CHECK_OK(harness_run(g, node, 1, 5, in, 1, out));
  const float *d = out[0].data;
  for (int c = 0; c < 3; c++) {
    /* row 0: label 1, weight 2, mean over the summed weight 2: (p - onehot) * 2 * 2 / 2 */
    CHECK_NEAR(d[c], (expf(lp[c]) - (c == 1)) * 2.0f, 1e-6);
    CHECK_NEAR(d[3 + c], 0.0f, 0);
  }
  harness_free(1, out);
  lab[0] = 7;
  CHECK_OK(harness_run(g, node, 1, 5, in, 1, out));
  for (int i = 0; i < 6; i++) CHECK_NEAR(((float *)out[0].data)[i], 0.0f, 0);
  harness_free(1, out);
  lab[0] = 3; /* out of range and not ignored: a run error naming the label */
  CHECK(harness_run(g, node, 1, 5, in, 1, out) != WT_OK);
  harness_free(1, out);
  wt_graph_free(g);
}

int main(void) {
  softmax_checks();
  loss_checks();
  layernorm_checks();
  batchnorm_checks();
  reduce_checks();
  cumsum_topk_checks();
  bn_internal_outputs();
  sce_grad_details();
  CHECK(g_failed == 0);
  CHECK_DONE();
}
