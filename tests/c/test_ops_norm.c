/* Norm and softmax family ops: BatchNormalization (inference, training, the unbiased running
 * variance kernel option), LayerNormalization (with Mean / InvStdDev), Softmax / LogSoftmax
 * (opset 11 coercion, opset 13 strided axis), SoftmaxCrossEntropyLoss; bad-input errors. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "backend/cpu/norm.h"
#include "op_harness.h"

#define TOL(e) (1e-5 + 1e-4 * fabs(e))

static void test_batchnorm(void) {
  /* X [2, 2, 3]: channel 0 = {1..3, 7..9}, channel 1 = {4..6, 10..12}. */
  float x[12], scale[2] = {2, 0.5f}, bias[2] = {1, -1}, mean[2] = {0.5f, 1}, var[2] = {4, 1};
  for (int i = 0; i < 12; i++) x[i] = (float)(i + 1);
  int64_t dx[3] = {2, 2, 3}, dc = 2;
  wt_tensor in[5] = {harness_f32(3, dx, x), harness_f32(1, &dc, scale), harness_f32(1, &dc, bias),
                     harness_f32(1, &dc, mean), harness_f32(1, &dc, var)};
  wt_tensor out[3];
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "BatchNormalization", "", 5, 1);
  wt_node_set_float(g, node, "epsilon", 0.0f);
  CHECK_OK(harness_run(g, node, 15, 5, in, 1, out));
  const float *y = out[0].data;
  for (int i = 0; i < 12; i++) {
    int c = (i / 3) % 2;
    double e = (x[i] - mean[c]) / sqrt(var[c]) * scale[c] + bias[c];
    CHECK_NEAR(y[i], e, TOL(e));
  }
  harness_free(1, out);
  wt_graph_free(g);

  /* Training mode: batch stats per channel: c0 {1,2,3,7,8,9} mean 5;
   * c1 {4,5,6,10,11,12} mean 8, same var 58/6. */
  g = wt_graph_new();
  node = harness_node(g, "BatchNormalization", "", 5, 3);
  wt_node_set_int(g, node, "training_mode", 1);
  wt_node_set_float(g, node, "momentum", 0.75f);
  CHECK_OK(harness_run(g, node, 15, 5, in, 3, out));
  double bm[2] = {5, 8}, bv = 58.0 / 6.0; /* squared deviations 16+9+4+4+9+16 */
  y = out[0].data;
  for (int i = 0; i < 12; i++) {
    int c = (i / 3) % 2;
    double e = (x[i] - bm[c]) / sqrt(bv + 1e-5) * scale[c] + bias[c];
    CHECK_NEAR(y[i], e, TOL(e));
  }
  for (int c = 0; c < 2; c++) {
    double em = mean[c] * 0.75 + bm[c] * 0.25, ev = var[c] * 0.75 + bv * 0.25;
    CHECK_NEAR(((float *)out[1].data)[c], em, TOL(em));
    CHECK_NEAR(((float *)out[2].data)[c], ev, TOL(ev));
  }
  harness_free(3, out);
  /* Statistics outputs outside training mode are rejected. */
  wt_node_set_int(g, node, "training_mode", 0);
  CHECK(harness_run(g, node, 15, 5, in, 3, out) == WT_ERR_UNSUPPORTED);
  wt_graph_free(g);

  /* The kernel's PyTorch rule: running var from the unbiased batch variance (m / (m - 1)). */
  float ky[12], km[2], kv[2], rm[2], rv[2];
  wt_batchnorm_train_f32(x, ky, 2, 2, 3, scale, bias, mean, var, 1e-5f, 0.5f, 1, km, kv, rm, rv);
  CHECK_NEAR(kv[0], bv, TOL(bv));
  CHECK_NEAR(rv[1], 0.5 * var[1] + 0.5 * bv * 6 / 5, 1e-4);

  /* Bad: scale of the wrong length. */
  g = wt_graph_new();
  node = harness_node(g, "BatchNormalization", "", 5, 1);
  int64_t d3 = 3;
  in[1] = harness_f32(1, &d3, x);
  CHECK(harness_run(g, node, 15, 5, in, 1, out) == WT_ERR_SHAPE);
  wt_graph_free(g);
}

static void test_layernorm(void) {
  /* X [2, 3, 5] normalized over the last two dims (axis 1). */
  float x[30], scale[15], bias[15];
  for (int i = 0; i < 30; i++) x[i] = (float)((i * 7) % 13) * 0.5f - 2.0f;
  for (int i = 0; i < 15; i++) scale[i] = 0.1f * (float)i + 0.5f, bias[i] = (float)i - 7.0f;
  int64_t dx[3] = {2, 3, 5}, ds[2] = {3, 5};
  for (int with_bias = 0; with_bias < 2; with_bias++) {
    wt_graph *g = wt_graph_new();
    int node = harness_node(g, "LayerNormalization", "", 3, 3);
    wt_node_set_int(g, node, "axis", 1);
    wt_node_set_float(g, node, "epsilon", 1e-3f);
    wt_tensor in[3] = {harness_f32(3, dx, x), harness_f32(2, ds, scale), harness_f32(2, ds, bias)};
    if (!with_bias) in[2].dtype = WT_UNDEFINED;
    wt_tensor out[3];
    CHECK_OK(harness_run(g, node, 17, 3, in, 3, out));
    CHECK(out[1].rank == 3 && out[1].dims[0] == 2 && out[1].dims[1] == 1 && out[1].dims[2] == 1);
    for (int r = 0; r < 2; r++) {
      double m = 0, v = 0;
      for (int i = 0; i < 15; i++) m += x[r * 15 + i];
      m /= 15;
      for (int i = 0; i < 15; i++) v += (x[r * 15 + i] - m) * (x[r * 15 + i] - m);
      double inv = 1 / sqrt(v / 15 + 1e-3);
      CHECK_NEAR(((float *)out[1].data)[r], m, TOL(m));
      CHECK_NEAR(((float *)out[2].data)[r], inv, TOL(inv));
      for (int i = 0; i < 15; i++) {
        double e = (x[r * 15 + i] - m) * inv * scale[i] + (with_bias ? bias[i] : 0);
        CHECK_NEAR(((float *)out[0].data)[r * 15 + i], e, TOL(e));
      }
    }
    harness_free(3, out);
    wt_graph_free(g);
  }
  /* Bad: scale does not match the normalized dims. */
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "LayerNormalization", "", 2, 1);
  wt_tensor in[2] = {harness_f32(3, dx, x), harness_f32(2, ds, scale)}, out[1];
  CHECK(harness_run(g, node, 17, 2, in, 1, out) == WT_ERR_SHAPE);
  wt_graph_free(g);
}

static void softmax_ref(const float *x, int64_t outer, int64_t n, int64_t inner, int lg,
                        double *y) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double m = -INFINITY, s = 0;
      for (int64_t r = 0; r < n; r++) m = fmax(m, x[(o * n + r) * inner + i]);
      for (int64_t r = 0; r < n; r++) s += exp(x[(o * n + r) * inner + i] - m);
      for (int64_t r = 0; r < n; r++) {
        double v = x[(o * n + r) * inner + i] - m;
        y[(o * n + r) * inner + i] = lg ? v - log(s) : exp(v) / s;
      }
    }
}

static void test_softmax(void) {
  float x[2 * 3 * 7];
  for (int i = 0; i < 42; i++) x[i] = (float)((i * 5) % 17) * 0.3f - 2.0f;
  int64_t dx[3] = {2, 3, 7};
  double ref[42];
  /* {opset, axis, outer, n, inner} */
  static const int64_t cases[][5] = {{13, -1, 6, 7, 1}, {13, 0, 1, 2, 21}, {13, 1, 2, 3, 7},
                                     {11, 1, 2, 21, 1}, {11, 0, 1, 42, 1}, {1, 2, 6, 7, 1}};
  for (int lg = 0; lg < 2; lg++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      wt_graph *g = wt_graph_new();
      int node = harness_node(g, lg ? "LogSoftmax" : "Softmax", "", 1, 1);
      wt_node_set_int(g, node, "axis", cases[c][1]);
      wt_tensor in[1] = {harness_f32(3, dx, x)}, out[1];
      CHECK_OK(harness_run(g, node, (int)cases[c][0], 1, in, 1, out));
      softmax_ref(x, cases[c][2], cases[c][3], cases[c][4], lg, ref);
      for (int i = 0; i < 42; i++) CHECK_NEAR(((float *)out[0].data)[i], ref[i], TOL(ref[i]));
      harness_free(1, out);
      wt_graph_free(g);
    }
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Softmax", "", 1, 1);
  wt_node_set_int(g, node, "axis", 3);
  wt_tensor in[1] = {harness_f32(3, dx, x)}, out[1];
  CHECK(harness_run(g, node, 13, 1, in, 1, out) == WT_ERR_INVALID_ARG);
  wt_graph_free(g);
}

static void test_sce(void) {
  /* scores [3, 4, 2] (N=3, C=4, D=2), labels [3, 2] with one ignored target. */
  float x[24], w[4] = {1, 2, 0.5f, 3};
  for (int i = 0; i < 24; i++) x[i] = (float)((i * 7) % 11) * 0.4f - 2.0f;
  int64_t lab[6] = {0, 3, -1, 2, 1, 1};
  int64_t dx[3] = {3, 4, 2}, dl[2] = {3, 2}, dw = 4;
  static const char *reds[3] = {"none", "sum", "mean"};
  for (int weighted = 0; weighted < 2; weighted++)
    for (int r = 0; r < 3; r++) {
      wt_graph *g = wt_graph_new();
      int node = harness_node(g, "SoftmaxCrossEntropyLoss", "", 3, 2);
      wt_node_set_string(g, node, "reduction", reds[r]);
      wt_node_set_int(g, node, "ignore_index", -1);
      wt_tensor in[3] = {harness_f32(3, dx, x), harness_i64(2, dl, lab), harness_f32(1, &dw, w)};
      if (!weighted) in[2].dtype = WT_UNDEFINED;
      wt_tensor out[2];
      CHECK_OK(harness_run(g, node, 13, 3, in, 2, out));
      double lsum = 0, wsum = 0, lp[24];
      for (int n = 0; n < 3; n++)
        for (int d = 0; d < 2; d++) {
          double m = -INFINITY, s = 0;
          for (int c = 0; c < 4; c++) m = fmax(m, x[n * 8 + c * 2 + d]);
          for (int c = 0; c < 4; c++) s += exp(x[n * 8 + c * 2 + d] - m);
          for (int c = 0; c < 4; c++) lp[n * 8 + c * 2 + d] = x[n * 8 + c * 2 + d] - m - log(s);
          int64_t t = lab[n * 2 + d];
          double l = 0, ww = 0;
          if (t != -1) {
            ww = weighted ? w[t] : 1;
            l = -ww * lp[n * 8 + t * 2 + d];
          }
          if (r == 0) CHECK_NEAR(((float *)out[0].data)[n * 2 + d], l, TOL(l));
          lsum += l;
          wsum += ww;
        }
      if (r == 0) CHECK(out[0].rank == 2 && out[0].dims[1] == 2);
      else CHECK(out[0].rank == 0);
      if (r == 1) CHECK_NEAR(((float *)out[0].data)[0], lsum, TOL(lsum));
      if (r == 2) CHECK_NEAR(((float *)out[0].data)[0], lsum / wsum, TOL(lsum / wsum));
      for (int i = 0; i < 24; i++) CHECK_NEAR(((float *)out[1].data)[i], lp[i], TOL(lp[i]));
      harness_free(2, out);
      wt_graph_free(g);
    }
  /* [N, C] int32 labels, C = 10 (the fast row path), default mean. */
  float s2[20];
  int32_t l2[2] = {9, 4};
  for (int i = 0; i < 20; i++) s2[i] = (float)i * 0.25f;
  int64_t d2[2] = {2, 10}, dn = 2;
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "SoftmaxCrossEntropyLoss", "", 2, 1);
  wt_tensor lt = {.dtype = WT_INT32, .rank = 1, .dims = {2}, .data = l2};
  wt_tensor in[2] = {harness_f32(2, d2, s2), lt}, out[2];
  CHECK_OK(harness_run(g, node, 12, 2, in, 1, out));
  double se = 0;
  for (int c = 0; c < 10; c++) se += exp(0.25 * c - 2.25);
  double e = ((-(0.0 - log(se))) + (-(1.0 - 2.25 - log(se)))) / 2; /* same row logits shape */
  CHECK_NEAR(((float *)out[0].data)[0], e, TOL(e));
  harness_free(1, out);
  /* Bad: label out of range at run time; labels of the wrong shape at plan time. */
  l2[1] = 10;
  CHECK(harness_run(g, node, 13, 2, in, 1, out) == WT_ERR_RUNTIME);
  harness_free(1, out);
  in[1].rank = 2;
  in[1].dims[1] = 1;
  CHECK(harness_run(g, node, 13, 2, in, 1, out) == WT_ERR_SHAPE);
  wt_graph_free(g);
  (void)dn;
}

int main(void) {
  test_batchnorm();
  test_layernorm();
  test_softmax();
  test_sce();
  CHECK_DONE();
}
