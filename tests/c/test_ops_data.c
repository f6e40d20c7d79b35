/* Unit tests for the data family (data.c, data_index.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static wt_tensor tens(int dtype, int rank, const int64_t *dims, void *data) {
  wt_tensor t = {.dtype = dtype, .rank = rank, .data = data};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}

static void test_slice(void) {
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)i;
  int64_t xd[2] = {3, 4};
  wt_tensor out[1];
  /* Opset 9: attributes. x[1:3, 1:] */
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Slice", "", 1, 1);
  int64_t st[2] = {1, 1}, en[2] = {1000, INT64_MAX};
  wt_node_set_ints(g, n, "starts", st, 2);
  wt_node_set_ints(g, n, "ends", en, 2);
  wt_tensor in[5] = {harness_f32(2, xd, x)};
  CHECK_OK(harness_run(g, n, 9, 1, in, 1, out));
  CHECK(out[0].dims[0] == 2 && out[0].dims[1] == 3);
  CHECK(((float *)out[0].data)[0] == 5.0f && ((float *)out[0].data)[5] == 11.0f);
  harness_free(1, out);
  wt_graph_free(g);

  /* Opset 13: negative step on axis -1 (reverse columns 3..1), rows 0..2 step 2. */
  g = wt_graph_new();
  n = harness_node(g, "Slice", "", 5, 1);
  int64_t d2[1] = {2}, s2[2] = {-1, 0}, e2[2] = {0, 3}, a2[2] = {-1, 0}, p2[2] = {-1, 2};
  in[1] = harness_i64(1, d2, s2);
  in[2] = harness_i64(1, d2, e2);
  in[3] = harness_i64(1, d2, a2);
  in[4] = harness_i64(1, d2, p2);
  CHECK_OK(harness_run(g, n, 13, 5, in, 1, out));
  CHECK(out[0].dims[0] == 2 && out[0].dims[1] == 3);
  float *y = out[0].data;
  CHECK(y[0] == 3 && y[1] == 2 && y[2] == 1 && y[3] == 11 && y[5] == 9);
  harness_free(1, out);
  int64_t zero[2] = {1, 0};
  in[4] = harness_i64(1, d2, zero);
  CHECK(harness_run(g, n, 13, 5, in, 1, out) != 0); /* step 0 */
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_pad(void) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t xd[2] = {2, 3}, pd[1] = {4};
  wt_tensor out[1];
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Pad", "", 3, 1);
  /* constant 9, one column before, one row after */
  int64_t pads[4] = {0, 1, 1, 0};
  float cv = 9.0f;
  wt_tensor in[3] = {harness_f32(2, xd, x), harness_i64(1, pd, pads), tens(WT_FLOAT, 0, NULL, &cv)};
  CHECK_OK(harness_run(g, n, 13, 3, in, 1, out));
  float *y = out[0].data;
  float want[12] = {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9};
  CHECK(out[0].dims[0] == 3 && out[0].dims[1] == 4 && memcmp(y, want, sizeof want) == 0);
  harness_free(1, out);
  /* negative pads crop: drop first column */
  int64_t crop[4] = {0, -1, 0, 0};
  in[1] = harness_i64(1, pd, crop);
  CHECK_OK(harness_run(g, n, 13, 3, in, 1, out));
  y = out[0].data;
  CHECK(out[0].dims[1] == 2 && y[0] == 2 && y[3] == 6);
  harness_free(1, out);
  int64_t shortp[2] = {1, 1}, one[1] = {2};
  in[1] = harness_i64(1, one, shortp);
  CHECK(harness_run(g, n, 13, 3, in, 1, out) != 0);
  harness_free(1, out);
  /* reflect and edge: 2 columns before */
  int64_t p2[4] = {0, 2, 0, 0};
  in[1] = harness_i64(1, pd, p2);
  wt_node_set_string(g, n, "mode", "reflect");
  CHECK_OK(harness_run(g, n, 13, 2, in, 1, out));
  y = out[0].data;
  CHECK(y[0] == 3 && y[1] == 2 && y[2] == 1 && y[5] == 6 && y[6] == 5);
  harness_free(1, out);
  wt_node_set_string(g, n, "mode", "edge");
  CHECK_OK(harness_run(g, n, 13, 2, in, 1, out));
  y = out[0].data;
  CHECK(y[0] == 1 && y[1] == 1 && y[5] == 4 && y[9] == 6);
  harness_free(1, out);
  /* reflect pads wider than the axis repeat the reflection (numpy semantics) */
  int32_t r3[3] = {1, 2, 3};
  int64_t r3d[1] = {3}, r3pd[1] = {2}, r3p[2] = {5, 4};
  wt_tensor rin[2] = {tens(WT_INT32, 1, r3d, r3), harness_i64(1, r3pd, r3p)};
  wt_node_set_string(g, n, "mode", "reflect");
  CHECK_OK(harness_run(g, n, 13, 2, rin, 1, out));
  int32_t rw[12] = {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3};
  CHECK(out[0].dims[0] == 12 && memcmp(out[0].data, rw, sizeof rw) == 0);
  harness_free(1, out);
  wt_node_set_string(g, n, "mode", "mirror");
  CHECK(harness_run(g, n, 13, 2, in, 1, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* Opset 2: pads and value attributes, int64 data. */
  int64_t xi[2] = {5, 6}, xid[1] = {2};
  g = wt_graph_new();
  n = harness_node(g, "Pad", "", 1, 1);
  int64_t pa[2] = {1, 2};
  wt_node_set_ints(g, n, "pads", pa, 2);
  wt_node_set_float(g, n, "value", -1.0f);
  in[0] = harness_i64(1, xid, xi);
  CHECK_OK(harness_run(g, n, 2, 1, in, 1, out));
  int64_t *yi = out[0].data;
  CHECK(out[0].dims[0] == 5 && yi[0] == -1 && yi[1] == 5 && yi[2] == 6 && yi[4] == -1);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_gather(void) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t xd[2] = {3, 2}, id[2] = {2, 2};
  int32_t idx[4] = {0, -1, 2, 1};
  wt_tensor out[1];
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Gather", "", 2, 1);
  wt_tensor in[3] = {harness_f32(2, xd, x), tens(WT_INT32, 2, id, idx)};
  CHECK_OK(harness_run(g, n, 13, 2, in, 1, out));
  float *y = out[0].data;
  CHECK(out[0].rank == 3 && out[0].dims[2] == 2);
  CHECK(y[0] == 1 && y[2] == 5 && y[3] == 6 && y[4] == 5 && y[7] == 4);
  harness_free(1, out);
  /* axis 1 with int64 indices */
  int64_t i1[1] = {1}, i1d[1] = {1};
  wt_node_set_int(g, n, "axis", 1);
  in[1] = harness_i64(1, i1d, i1);
  CHECK_OK(harness_run(g, n, 13, 2, in, 1, out));
  y = out[0].data;
  CHECK(out[0].dims[0] == 3 && out[0].dims[1] == 1 && y[0] == 2 && y[2] == 6);
  harness_free(1, out);
  /* out of range: clear runtime error naming the index */
  int64_t bad[1] = {-4};
  wt_node_set_int(g, n, "axis", 0);
  in[1] = harness_i64(1, i1d, bad);
  CHECK(harness_run(g, n, 13, 2, in, 1, out) == WT_ERR_RUNTIME);
  CHECK(strstr(wt_error_message(), "-4") && strstr(wt_error_message(), "[-3, 2]"));
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_elements(void) {
  /* GatherElements axis 1 */
  int32_t x[4] = {1, 2, 3, 4};
  int64_t xd[2] = {2, 2}, idx[4] = {0, 0, 1, 0};
  wt_tensor out[1];
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "GatherElements", "", 2, 1);
  wt_node_set_int(g, n, "axis", 1);
  wt_tensor in[3] = {tens(WT_INT32, 2, xd, x), harness_i64(2, xd, idx)};
  CHECK_OK(harness_run(g, n, 13, 2, in, 1, out));
  int32_t *y = out[0].data;
  CHECK(y[0] == 1 && y[1] == 1 && y[2] == 4 && y[3] == 3);
  harness_free(1, out);
  int64_t bad[4] = {0, 2, 0, 0};
  in[1] = harness_i64(2, xd, bad);
  CHECK(harness_run(g, n, 13, 2, in, 1, out) == WT_ERR_RUNTIME);
  harness_free(1, out);
  wt_graph_free(g);

  /* ScatterElements with duplicate indices and reduction add (opset 16) */
  float d[5] = {1, 2, 3, 4, 5}, u[3] = {1.5f, 2.5f, 10};
  int64_t dd[2] = {1, 5}, ud[2] = {1, 3}, si[3] = {1, 1, -1};
  g = wt_graph_new();
  n = harness_node(g, "ScatterElements", "", 3, 1);
  wt_node_set_int(g, n, "axis", 1);
  wt_node_set_string(g, n, "reduction", "add");
  in[0] = harness_f32(2, dd, d);
  in[1] = harness_i64(2, ud, si);
  in[2] = harness_f32(2, ud, u);
  CHECK_OK(harness_run(g, n, 16, 3, in, 1, out));
  float *f = out[0].data;
  CHECK(f[0] == 1 && f[1] == 6 && f[4] == 15);
  harness_free(1, out);
  in[2] = harness_f32(2, dd, d); /* updates shape != indices shape */
  CHECK(harness_run(g, n, 16, 3, in, 1, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_trilu(void) {
  int64_t x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, xd[2] = {3, 3};
  int64_t k = -1;
  wt_tensor out[1];
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Trilu", "", 2, 1);
  wt_tensor in[2] = {harness_i64(2, xd, x), harness_i64(0, NULL, &k)};
  CHECK_OK(harness_run(g, n, 14, 2, in, 1, out)); /* upper, k = -1 */
  int64_t *y = out[0].data, w1[9] = {1, 2, 3, 4, 5, 6, 0, 8, 9};
  CHECK(memcmp(y, w1, sizeof w1) == 0);
  harness_free(1, out);
  wt_node_set_int(g, n, "upper", 0);
  CHECK_OK(harness_run(g, n, 14, 1, in, 1, out)); /* lower, k = 0 */
  int64_t w2[9] = {1, 0, 0, 4, 5, 0, 7, 8, 9};
  CHECK(memcmp(out[0].data, w2, sizeof w2) == 0);
  harness_free(1, out);
  int64_t vd[1] = {9};
  in[0] = harness_i64(1, vd, x);
  CHECK(harness_run(g, n, 14, 1, in, 1, out) != 0); /* rank 1 */
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_nd(void) {
  /* GatherND batch_dims 0: data [2,2], indices [[1,0],[0,1]] -> [x10, x01] */
  float x[4] = {1, 2, 3, 4};
  int64_t xd[2] = {2, 2}, idx[4] = {1, 0, 0, 1};
  wt_tensor out[1];
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "GatherND", "", 2, 1);
  wt_tensor in[3] = {harness_f32(2, xd, x), harness_i64(2, xd, idx)};
  CHECK_OK(harness_run(g, n, 13, 2, in, 1, out));
  CHECK(out[0].rank == 1 && ((float *)out[0].data)[0] == 3 && ((float *)out[0].data)[1] == 2);
  harness_free(1, out);
  int64_t bad[4] = {2, 0, 0, 0};
  in[1] = harness_i64(2, xd, bad);
  CHECK(harness_run(g, n, 13, 2, in, 1, out) == WT_ERR_RUNTIME);
  harness_free(1, out);
  wt_graph_free(g);

  /* ScatterND: rows, reduction mul */
  float d[4] = {1, 2, 3, 4}, u[2] = {10, 20};
  int64_t id[2] = {1, 1}, ii[1] = {1}, ud[1] = {2}, ud1[2] = {1, 2};
  g = wt_graph_new();
  n = harness_node(g, "ScatterND", "", 3, 1);
  wt_node_set_string(g, n, "reduction", "mul");
  in[0] = harness_f32(2, xd, d);
  in[1] = harness_i64(2, id, ii);
  in[2] = harness_f32(2, ud1, u);
  CHECK_OK(harness_run(g, n, 16, 3, in, 1, out));
  float *y = out[0].data;
  CHECK(y[0] == 1 && y[1] == 2 && y[2] == 30 && y[3] == 80);
  harness_free(1, out);
  in[2] = harness_f32(1, ud, u);
  CHECK(harness_run(g, n, 16, 3, in, 1, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

int main(void) {
  test_slice();
  test_pad();
  test_gather();
  test_elements();
  test_trilu();
  test_nd();
  CHECK_DONE();
}
