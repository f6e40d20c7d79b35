/* Unit tests of Resize / Upsample forward: hand-checked nearest / linear / cubic cases, int64
 * nearest, opset-18 axes, and rejected inputs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static wt_tensor absent(void) {
  wt_tensor t = {0};
  return t;
}

static void linear_half_pixel(void) {
  /* [1, 2] upsampled x2 with half_pixel: 1, 1.25, 1.75, 2. */
  int64_t xd[1] = {2}, sd[1] = {1};
  float x[2] = {1, 2}, s[1] = {2}, e[4] = {1, 1.25f, 1.75f, 2};
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Resize", "", 3, 1);
  wt_node_set_string(g, node, "mode", "linear");
  wt_tensor in[3] = {harness_f32(1, xd, x), absent(), harness_f32(1, sd, s)}, out[1];
  CHECK_OK(harness_run(g, node, 13, 3, in, 1, out));
  CHECK(out[0].rank == 1 && out[0].dims[0] == 4);
  for (int i = 0; out[0].data && i < 4; i++) CHECK_NEAR(((float *)out[0].data)[i], e[i], 1e-6);
  harness_free(1, out);
  wt_graph_free(g);
}

static void nearest_int64_sizes(void) {
  /* [[1, 2], [3, 4]] to 3 x 3 (asymmetric, floor): rows 0, 0, 1 and cols 0, 0, 1. */
  int64_t xd[2] = {2, 2}, zd[1] = {2}, x[4] = {1, 2, 3, 4}, z[2] = {3, 3};
  int64_t e[9] = {1, 1, 2, 1, 1, 2, 3, 3, 4};
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Resize", "", 4, 1);
  wt_node_set_string(g, node, "coordinate_transformation_mode", "asymmetric");
  wt_node_set_string(g, node, "nearest_mode", "floor");
  wt_tensor in[4] = {harness_i64(2, xd, x), absent(), absent(), harness_i64(1, zd, z)}, out[1];
  CHECK_OK(harness_run(g, node, 13, 4, in, 1, out));
  CHECK(out[0].dtype == WT_INT64 && out[0].dims[0] == 3 && out[0].dims[1] == 3);
  for (int i = 0; out[0].data && i < 9; i++) CHECK(((int64_t *)out[0].data)[i] == e[i]);
  harness_free(1, out);
  wt_graph_free(g);
}

static void cubic_identity_and_axes(void) {
  /* Scale 1 on every axis is the identity, for cubic too; opset 18 axes picks the last axis. */
  int64_t xd[2] = {2, 3}, sd[1] = {1};
  float x[6] = {1, -2, 3, 0.5f, 4, -1}, s[1] = {1};
  int64_t axes[1] = {-1};
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Resize", "", 3, 1);
  wt_node_set_string(g, node, "mode", "cubic");
  wt_node_set_ints(g, node, "axes", axes, 1);
  wt_tensor in[3] = {harness_f32(2, xd, x), absent(), harness_f32(1, sd, s)}, out[1];
  CHECK_OK(harness_run(g, node, 18, 3, in, 1, out));
  for (int i = 0; out[0].data && i < 6; i++) CHECK(((float *)out[0].data)[i] == x[i]);
  harness_free(1, out);
  wt_graph_free(g);
}

static void upsample7(void) {
  int64_t xd[2] = {1, 2};
  float x[2] = {5, 7}, e[6] = {5, 5, 5, 7, 7, 7};
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Upsample", "", 1, 1);
  wt_attr *a = wt_node_add_attr(g, node, "scales", WT_ATTR_FLOATS);
  a->n = 2;
  a->floats = malloc(2 * sizeof(float));
  a->floats[0] = 1;
  a->floats[1] = 3;
  wt_tensor in[1] = {harness_f32(2, xd, x)}, out[1];
  CHECK_OK(harness_run(g, node, 7, 1, in, 1, out));
  CHECK(out[0].dims[1] == 6);
  for (int i = 0; out[0].data && i < 6; i++) CHECK(((float *)out[0].data)[i] == e[i]);
  harness_free(1, out);
  wt_graph_free(g);
}

static void bad_inputs(void) {
  int64_t xd[1] = {2}, sd[1] = {1}, x64[2] = {1, 2}, z[1] = {4};
  float x[2] = {1, 2}, s[1] = {2}, neg[1] = {-1};
  wt_tensor out[1];
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Resize", "", 4, 1);
  wt_tensor both[4] = {harness_f32(1, xd, x), absent(), harness_f32(1, sd, s), harness_i64(1, sd, z)};
  CHECK(harness_run(g, node, 13, 4, both, 1, out) != WT_OK);
  wt_tensor none[3] = {harness_f32(1, xd, x), absent(), absent()};
  CHECK(harness_run(g, node, 13, 3, none, 1, out) != WT_OK);
  wt_tensor negs[3] = {harness_f32(1, xd, x), absent(), harness_f32(1, sd, neg)};
  CHECK(harness_run(g, node, 13, 3, negs, 1, out) != WT_OK);
  wt_node_set_string(g, node, "mode", "linear");
  wt_tensor ints[3] = {harness_i64(1, xd, x64), absent(), harness_f32(1, sd, s)};
  CHECK(harness_run(g, node, 13, 3, ints, 1, out) != WT_OK);
  wt_node_set_string(g, node, "mode", "bicubic");
  wt_tensor ok[3] = {harness_f32(1, xd, x), absent(), harness_f32(1, sd, s)};
  CHECK(harness_run(g, node, 13, 3, ok, 1, out) != WT_OK);
  wt_graph_free(g);
}

int main(void) {
  linear_half_pixel();
  nearest_int64_sizes();
  cubic_identity_and_axes();
  upsample7();
  bad_inputs();
  CHECK_DONE();
}
