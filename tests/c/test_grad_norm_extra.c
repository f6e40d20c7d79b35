/* Extra normalizations: forward checks of GroupNormalization / SimplifiedLayerNormalization
 * against plain loops, rejected inputs, and finite-difference checks of the InstanceNorm /
 * GroupNorm (decomposed) and SimplifiedLayerNormalization (com.microsoft
 * SimplifiedLayerNormalizationGrad) gradient rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "op_harness.h"

static int64_t g_groups, g_axis;
static float g_eps;
static void set_attrs(wt_graph *g, int node) {
  if (g_groups) wt_node_set_int(g, node, "num_groups", g_groups);
  if (g_axis != 99) wt_node_set_int(g, node, "axis", g_axis);
  if (g_eps > 0) wt_node_set_float(g, node, "epsilon", g_eps);
}

static int g_failed;
static void gc(const char *label, const char *op, const char *domain, int opset, int n_in,
               const gc_arg *args, int n_out) {
  gc_opts o = {.opset = opset, .domain = domain, .n_out = n_out};
  g_failed += gradcheck(label, op, &o, n_in, args, set_attrs);
}

static void groupnorm_forward(void) {
  /* [1, 4, 3], 2 groups, per-channel scale: reference by plain loops. */
  int64_t xd[3] = {1, 4, 3}, sd[1] = {4};
  float x[12], s[4] = {1, 2, 0.5f, -1}, b[4] = {0, 1, -1, 2};
  for (int i = 0; i < 12; i++) x[i] = sinf((float)i) * 3;
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "GroupNormalization", "", 3, 1);
  wt_node_set_int(g, node, "num_groups", 2);
  wt_tensor in[3] = {harness_f32(3, xd, x), harness_f32(1, sd, s), harness_f32(1, sd, b)}, out[1];
  CHECK_OK(harness_run(g, node, 18, 3, in, 1, out));
  for (int grp = 0; out[0].data && grp < 2; grp++) {
    double m = 0, v = 0;
    for (int i = 0; i < 6; i++) m += x[grp * 6 + i];
    m /= 6;
    for (int i = 0; i < 6; i++) v += (x[grp * 6 + i] - m) * (x[grp * 6 + i] - m);
    v /= 6;
    for (int i = 0; i < 6; i++) {
      int ch = grp * 2 + i / 3;
      double e = (x[grp * 6 + i] - m) / sqrt(v + 1e-5) * s[ch] + b[ch];
      CHECK_NEAR(((float *)out[0].data)[grp * 6 + i], e, 1e-5);
    }
  }
  harness_free(1, out);
  /* Rejected: 3 groups do not divide 4 channels; scale of the wrong length. */
  wt_node_set_int(g, node, "num_groups", 3);
  CHECK(harness_run(g, node, 18, 3, in, 1, out) != WT_OK);
  wt_node_set_int(g, node, "num_groups", 2);
  int64_t bad[1] = {3};
  wt_tensor in2[3] = {in[0], harness_f32(1, bad, s), harness_f32(1, bad, b)};
  CHECK(harness_run(g, node, 18, 3, in2, 1, out) != WT_OK);
  wt_graph_free(g);
  /* InstanceNormalization: scale must have C values. */
  g = wt_graph_new();
  node = harness_node(g, "InstanceNormalization", "", 3, 1);
  CHECK(harness_run(g, node, 6, 3, in2, 1, out) != WT_OK);
  wt_graph_free(g);
}

static void rmsnorm_forward(void) {
  int64_t xd[2] = {3, 5}, sd[1] = {5}, id[2] = {3, 1};
  float x[15], s[5] = {1, 0.5f, 2, -1, 1.5f};
  for (int i = 0; i < 15; i++) x[i] = cosf((float)i * 0.7f) * 2;
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "SimplifiedLayerNormalization", "com.microsoft", 2, 2);
  wt_node_set_float(g, node, "epsilon", 1e-6f);
  wt_tensor in[2] = {harness_f32(2, xd, x), harness_f32(1, sd, s)}, out[2];
  CHECK_OK(harness_run(g, node, 1, 2, in, 2, out));
  CHECK(out[1].rank == 2 && out[1].dims[0] == 3 && out[1].dims[1] == 1);
  float dy[15], dx[15], dscale[5] = {0};
  for (int r = 0; out[0].data && r < 3; r++) {
    double ss = 0;
    for (int i = 0; i < 5; i++) ss += x[r * 5 + i] * x[r * 5 + i];
    double inv = 1.0 / sqrt(ss / 5 + 1e-6);
    CHECK_NEAR(((float *)out[1].data)[r], inv, 1e-5 * inv);
    for (int i = 0; i < 5; i++) CHECK_NEAR(((float *)out[0].data)[r * 5 + i], x[r * 5 + i] * inv * s[i], 1e-5);
  }
  /* SimplifiedLayerNormalizationGrad against the closed form, row by row. */
  for (int i = 0; i < 15; i++) dy[i] = (float)(i % 4) - 1.5f;
  wt_graph *g2 = wt_graph_new();
  int n2 = harness_node(g2, "SimplifiedLayerNormalizationGrad", "com.microsoft", 4, 2);
  wt_tensor gin[4] = {harness_f32(2, xd, dy), in[0], in[1], harness_f32(2, id, out[1].data)}, gout[2];
  CHECK_OK(harness_run(g2, n2, 1, 4, gin, 2, gout));
  const float *inv = out[1].data;
  for (int r = 0; gout[0].data && r < 3; r++) {
    double dot = 0;
    for (int i = 0; i < 5; i++) dot += dy[r * 5 + i] * s[i] * x[r * 5 + i] * inv[r];
    for (int i = 0; i < 5; i++) {
      double xh = x[r * 5 + i] * inv[r];
      dx[r * 5 + i] = (float)(inv[r] * (dy[r * 5 + i] * s[i] - xh * dot / 5));
      dscale[i] += (float)(dy[r * 5 + i] * xh);
      CHECK_NEAR(((float *)gout[0].data)[r * 5 + i], dx[r * 5 + i], 1e-5);
    }
  }
  for (int i = 0; gout[1].data && i < 5; i++) CHECK_NEAR(((float *)gout[1].data)[i], dscale[i], 1e-5);
  harness_free(2, gout);
  /* Rejected: inv_std_var of the wrong length. */
  int64_t bad[1] = {2};
  gin[3] = harness_f32(1, bad, out[1].data);
  CHECK(harness_run(g2, n2, 1, 4, gin, 2, gout) != WT_OK);
  wt_graph_free(g2);
  harness_free(2, out);
  /* Rejected: scale not matching the normalized dims. */
  int64_t s4[1] = {4};
  wt_tensor bad_in[2] = {in[0], harness_f32(1, s4, s)};
  CHECK(harness_run(g, node, 1, 2, bad_in, 1, out) != WT_OK);
  wt_graph_free(g);
}

static void grad_checks(void) {
  gc_arg in3[3] = {{.rank = 3, .dims = {2, 3, 5}, .lo = -2, .hi = 2},
                   {.rank = 1, .dims = {3}, .lo = 0.5f, .hi = 1.5f},
                   {.rank = 1, .dims = {3}}};
  g_axis = 99;
  g_groups = 0;
  g_eps = 0;
  gc("InstanceNormalization [2,3,5]", "InstanceNormalization", "", 6, 3, in3, 1);
  gc_arg in4[3] = {{.rank = 4, .dims = {2, 2, 3, 2}, .lo = -2, .hi = 2},
                   {.rank = 1, .dims = {2}, .lo = 0.5f, .hi = 1.5f},
                   {.rank = 1, .dims = {2}}};
  g_eps = 1e-2f;
  gc("InstanceNormalization [2,2,3,2] epsilon 1e-2", "InstanceNormalization", "", 6, 3, in4, 1);
  g_eps = 0;
  gc("InstanceNormalization opset 18 (ReduceMean axes input)", "InstanceNormalization", "", 18, 3,
     in4, 1);
  gc_arg gn[3] = {{.rank = 4, .dims = {2, 4, 2, 2}, .lo = -2, .hi = 2},
                  {.rank = 1, .dims = {4}, .lo = 0.5f, .hi = 1.5f},
                  {.rank = 1, .dims = {4}}};
  g_groups = 2;
  gc("GroupNormalization-18 2 groups, per-channel scale", "GroupNormalization", "", 18, 3, gn, 1);
  g_groups = 1;
  gc("GroupNormalization-18 1 group", "GroupNormalization", "", 18, 3, gn, 1);
  gc_arg gg[3] = {gn[0], {.rank = 1, .dims = {2}, .lo = 0.5f, .hi = 1.5f}, {.rank = 1, .dims = {2}}};
  g_groups = 2;
  gc("GroupNormalization-18 2 groups, per-group scale", "GroupNormalization", "", 18, 3, gg, 1);
  gc_arg g3[3] = {{.rank = 3, .dims = {3, 6, 2}, .lo = -2, .hi = 2},
                  {.rank = 1, .dims = {6}, .lo = 0.5f, .hi = 1.5f},
                  {.rank = 1, .dims = {6}}};
  g_groups = 3;
  gc("GroupNormalization-18 rank 3, 3 groups", "GroupNormalization", "", 18, 3, g3, 1);
  g_groups = 0;
  gc_arg rms[2] = {{.rank = 3, .dims = {2, 3, 5}, .lo = -2, .hi = 2},
                   {.rank = 1, .dims = {5}, .lo = 0.5f, .hi = 1.5f}};
  g_axis = 99;
  gc("SimplifiedLayerNormalization axis -1", "SimplifiedLayerNormalization", "com.microsoft", 1, 2,
     rms, 1);
  gc_arg rms2[2] = {rms[0], {.rank = 2, .dims = {3, 5}, .lo = 0.5f, .hi = 1.5f}};
  g_axis = 1;
  gc("SimplifiedLayerNormalization axis 1", "SimplifiedLayerNormalization", "com.microsoft", 1, 2,
     rms2, 1);
  g_axis = 99;
  gc("SimplifiedLayerNormalization (default domain, ORT export form)",
     "SimplifiedLayerNormalization", "", 17, 2, rms, 1);
}

int main(void) {
  groupnorm_forward();
  rmsnorm_forward();
  grad_checks();
  CHECK(g_failed == 0);
  CHECK_DONE();
}
