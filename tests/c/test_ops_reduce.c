/* Reduce family ops: Reduce* over contiguous, outer and non-adjacent axes (checked against a
 * naive loop), integer reductions, ArgMax/ArgMin, CumSum, TopK, and bad-input errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

/* Naive reference: y over the dims not in mask (keepdims shape), x of shape [2,3,4,5]. */
static void naive(const char *op, const float *x, const int64_t *d, const int *mask, double *y,
                  int64_t *ny) {
  int64_t od[4], n = 1;
  for (int i = 0; i < 4; i++) od[i] = mask[i] ? 1 : d[i];
  *ny = od[0] * od[1] * od[2] * od[3];
  for (int64_t o = 0; o < *ny; o++) {
    int64_t oi[4], r = o;
    for (int i = 3; i >= 0; i--) {
      oi[i] = r % od[i];
      r /= od[i];
    }
    double s = 0, mx = -INFINITY, mn = INFINITY, pr = 1, sq = 0, ab = 0, se = 0;
    n = 0;
    for (int64_t a = 0; a < d[0]; a++)
      for (int64_t b = 0; b < d[1]; b++)
        for (int64_t c = 0; c < d[2]; c++)
          for (int64_t e = 0; e < d[3]; e++) {
            int64_t idx[4] = {a, b, c, e};
            int in = 1;
            for (int i = 0; i < 4; i++) in &= mask[i] || idx[i] == oi[i];
            if (!in) continue;
            double v = x[((a * d[1] + b) * d[2] + c) * d[3] + e];
            s += v, sq += v * v, ab += fabs(v), pr *= v, se += exp(v), n++;
            mx = v > mx ? v : mx, mn = v < mn ? v : mn;
          }
    double res = 0;
    if (!strcmp(op, "ReduceSum")) res = s;
    else if (!strcmp(op, "ReduceMean")) res = s / (double)n;
    else if (!strcmp(op, "ReduceMax")) res = mx;
    else if (!strcmp(op, "ReduceMin")) res = mn;
    else if (!strcmp(op, "ReduceProd")) res = pr;
    else if (!strcmp(op, "ReduceSumSquare")) res = sq;
    else if (!strcmp(op, "ReduceL1")) res = ab;
    else if (!strcmp(op, "ReduceL2")) res = sqrt(sq);
    else if (!strcmp(op, "ReduceLogSumExp")) res = log(se);
    y[o] = res;
  }
}

static void test_reduce_float(void) {
  static const char *ops[] = {"ReduceSum", "ReduceMean",      "ReduceMax", "ReduceMin",
                              "ReduceProd", "ReduceSumSquare", "ReduceL1",  "ReduceL2",
                              "ReduceLogSumExp"};
  static const int masks[][4] = {{0, 0, 0, 1}, {0, 1, 0, 0}, {1, 0, 0, 0}, {1, 0, 1, 0},
                                 {0, 1, 0, 1}, {1, 1, 1, 1}, {0, 1, 1, 0}, {1, 0, 1, 1}};
  int64_t d[4] = {2, 3, 4, 5};
  float x[120];
  srand(7);
  for (int i = 0; i < 120; i++) x[i] = (float)(rand() % 2000) / 1000.0f - 1.0f + 0.01f;
  for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++)
      for (int keep = 0; keep < 2; keep++) {
        wt_graph *g = wt_graph_new();
        int sum13 = !strcmp(ops[oi], "ReduceSum");
        int node = harness_node(g, ops[oi], "", sum13 ? 2 : 1, 1);
        int64_t axes[4], na = 0;
        for (int i = 0; i < 4; i++)
          if (masks[mi][i]) {
            axes[na] = i - (na % 2 ? 4 : 0); /* mix negative axes in */
            na++;
          }
        if (!sum13) wt_node_set_ints(g, node, "axes", axes, (int)na);
        wt_node_set_int(g, node, "keepdims", keep);
        wt_tensor in[2] = {harness_f32(4, d, x), harness_i64(1, &na, axes)}, out[1];
        CHECK_OK(harness_run(g, node, 13, sum13 ? 2 : 1, in, 1, out));
        double ref[120];
        int64_t nref;
        naive(ops[oi], x, d, masks[mi], ref, &nref);
        CHECK(wt_numel(&out[0]) == nref);
        CHECK(out[0].rank == (keep ? 4 : 4 - (int)na));
        const float *y = out[0].data;
        for (int64_t i = 0; i < nref; i++) CHECK_NEAR(y[i], ref[i], 1e-5 + 1e-4 * fabs(ref[i]));
        harness_free(1, out);
        wt_graph_free(g);
      }
}

static void test_reduce_misc(void) {
  /* Long contiguous and outer-block rows exercise the SIMD paths and their tails. */
  int64_t d[2] = {3, 37};
  float x[111];
  for (int i = 0; i < 111; i++) x[i] = (float)(i % 11) - 5.0f;
  int64_t ax1 = 1, ax0 = 0;
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "ReduceMean", "", 1, 1);
  wt_node_set_ints(g, node, "axes", &ax0, 1);
  wt_tensor in[2] = {harness_f32(2, d, x)}, out[1];
  CHECK_OK(harness_run(g, node, 13, 1, in, 1, out));
  CHECK(out[0].rank == 2 && out[0].dims[0] == 1 && out[0].dims[1] == 37);
  for (int j = 0; j < 37; j++) {
    double e = ((j % 11) + ((37 + j) % 11) + ((74 + j) % 11)) / 3.0 - 5.0;
    CHECK_NEAR(((float *)out[0].data)[j], e, 1e-5);
  }
  harness_free(1, out);
  wt_graph_free(g);

  /* noop_with_empty_axes with an empty axes input copies; without it reduces everything. */
  float s[4] = {1, 2, 3, 4};
  int64_t d4 = 4, zero = 0;
  for (int noop = 0; noop < 2; noop++) {
    g = wt_graph_new();
    node = harness_node(g, "ReduceSum", "", 2, 1);
    wt_node_set_int(g, node, "noop_with_empty_axes", noop);
    in[0] = harness_f32(1, &d4, s);
    in[1] = harness_i64(1, &zero, NULL);
    CHECK_OK(harness_run(g, node, 13, 2, in, 1, out));
    if (noop) CHECK(out[0].dims[0] == 4 && ((float *)out[0].data)[3] == 4.0f);
    else CHECK(out[0].dims[0] == 1 && ((float *)out[0].data)[0] == 10.0f);
    harness_free(1, out);
    wt_graph_free(g);
  }

  /* int64 sum / max / mean exact. */
  int64_t xi[6] = {1, -7, 3, 4000000000000LL, 5, 6}, d23[2] = {2, 3};
  const char *iops[3] = {"ReduceSum", "ReduceMax", "ReduceMean"};
  int64_t iexp[3][2] = {{-3, 4000000000011LL}, {3, 4000000000000LL}, {-1, 1333333333337LL}};
  for (int k = 0; k < 3; k++) {
    g = wt_graph_new();
    node = harness_node(g, iops[k], "", 1, 1);
    wt_node_set_ints(g, node, "axes", &ax1, 1);
    wt_node_set_int(g, node, "keepdims", 0);
    in[0] = harness_i64(2, d23, xi);
    CHECK_OK(harness_run(g, node, 12, 1, in, 1, out));
    CHECK(out[0].dtype == WT_INT64 && out[0].rank == 1);
    CHECK(((int64_t *)out[0].data)[0] == iexp[k][0] && ((int64_t *)out[0].data)[1] == iexp[k][1]);
    harness_free(1, out);
    wt_graph_free(g);
  }

  /* Errors: axis out of range; axes as input before opset 13. */
  g = wt_graph_new();
  node = harness_node(g, "ReduceMax", "", 1, 1);
  int64_t bad = 5;
  wt_node_set_ints(g, node, "axes", &bad, 1);
  in[0] = harness_f32(2, d, x);
  CHECK(harness_run(g, node, 13, 1, in, 1, out) == WT_ERR_INVALID_ARG);
  wt_graph_free(g);
  g = wt_graph_new();
  node = harness_node(g, "ReduceSum", "", 2, 1);
  in[1] = harness_i64(1, &d4, xi);
  CHECK(harness_run(g, node, 11, 2, in, 1, out) != WT_OK);
  wt_graph_free(g);
}

static void test_argext(void) {
  float x[6] = {1, 5, 5, 2, 0, 2};
  int64_t d[2] = {2, 3};
  for (int last = 0; last < 2; last++) {
    wt_graph *g = wt_graph_new();
    int node = harness_node(g, "ArgMax", "", 1, 1);
    wt_node_set_int(g, node, "axis", -1);
    wt_node_set_int(g, node, "select_last_index", last);
    wt_tensor in[1] = {harness_f32(2, d, x)}, out[1];
    CHECK_OK(harness_run(g, node, 13, 1, in, 1, out));
    const int64_t *y = out[0].data;
    CHECK(out[0].rank == 2 && out[0].dims[1] == 1);
    CHECK(y[0] == (last ? 2 : 1) && y[1] == (last ? 2 : 0));
    harness_free(1, out);
    wt_graph_free(g);
  }
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "ArgMin", "", 1, 1);
  wt_node_set_int(g, node, "keepdims", 0);
  wt_tensor in[1] = {harness_f32(2, d, x)}, out[1];
  CHECK_OK(harness_run(g, node, 13, 1, in, 1, out));
  const int64_t *y = out[0].data;
  CHECK(out[0].rank == 1 && y[0] == 0 && y[1] == 1 && y[2] == 1);
  harness_free(1, out);
  wt_node_set_int(g, node, "axis", 2);
  CHECK(harness_run(g, node, 13, 1, in, 1, out) == WT_ERR_INVALID_ARG);
  wt_graph_free(g);
}

static void test_cumsum(void) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t d[2] = {2, 3}, one = 1, axis = 1;
  static const float expect[4][6] = {{1, 3, 6, 4, 9, 15},
                                     {0, 1, 3, 0, 4, 9},
                                     {6, 5, 3, 15, 11, 6},
                                     {5, 3, 0, 11, 6, 0}};
  for (int mode = 0; mode < 4; mode++) {
    wt_graph *g = wt_graph_new();
    int node = harness_node(g, "CumSum", "", 2, 1);
    wt_node_set_int(g, node, "exclusive", mode & 1);
    wt_node_set_int(g, node, "reverse", mode >> 1);
    wt_tensor in[2] = {harness_f32(2, d, x), harness_i64(1, &one, &axis)}, out[1];
    CHECK_OK(harness_run(g, node, 14, 2, in, 1, out));
    for (int i = 0; i < 6; i++) CHECK(((float *)out[0].data)[i] == expect[mode][i]);
    harness_free(1, out);
    wt_graph_free(g);
  }
  /* axis out of range is a run-time error (the axis is data). */
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "CumSum", "", 2, 1);
  int64_t bad = 2;
  wt_tensor in[2] = {harness_f32(2, d, x), harness_i64(1, &one, &bad)}, out[1];
  CHECK(harness_run(g, node, 14, 2, in, 1, out) == WT_ERR_RUNTIME);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_topk(void) {
  float x[8] = {3, 1, 3, 2, 0, 7, 7, 7};
  int64_t d[2] = {2, 4}, one = 1, k = 3;
  for (int largest = 0; largest < 2; largest++) {
    wt_graph *g = wt_graph_new();
    int node = harness_node(g, "TopK", "", 2, 2);
    wt_node_set_int(g, node, "largest", largest);
    wt_tensor in[2] = {harness_f32(2, d, x), harness_i64(1, &one, &k)}, out[2];
    CHECK_OK(harness_run(g, node, 11, 2, in, 2, out));
    CHECK(out[0].dims[1] == 3 && out[1].dtype == WT_INT64);
    const float *v = out[0].data;
    const int64_t *ix = out[1].data;
    /* Ties keep the smaller index first. */
    static const float ev[2][6] = {{1, 2, 3, 0, 7, 7}, {3, 3, 2, 7, 7, 7}};
    static const int64_t ei[2][6] = {{1, 3, 0, 0, 1, 2}, {0, 2, 3, 1, 2, 3}};
    for (int i = 0; i < 6; i++) CHECK(v[i] == ev[largest][i] && ix[i] == ei[largest][i]);
    harness_free(2, out);
    wt_graph_free(g);
  }
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "TopK", "", 2, 2);
  int64_t big = 5;
  wt_tensor in[2] = {harness_f32(2, d, x), harness_i64(1, &one, &big)}, out[2];
  CHECK(harness_run(g, node, 11, 2, in, 2, out) == WT_ERR_INVALID_ARG);
  wt_graph_free(g);
}

int main(void) {
  test_reduce_float();
  test_reduce_misc();
  test_argext();
  test_cumsum();
  test_topk();
  CHECK_DONE();
}
