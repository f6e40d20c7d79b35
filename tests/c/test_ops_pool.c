/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: ONNX's hand-computed examples,
 * random cases against a direct reference, the Indices output and bad-input errors. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static unsigned g_seed = 777;
static float frand(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (float)((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct pool_case {
  int nsp;
  int64_t N, C, in[3], k[3], stride[3], dil[3], pads[6];
  int ceil_mode, count_include_pad;
} pool_case;

/* Direct pooling over 3-D-normalized dims: is_max or average. */
static void ref_pool(const pool_case *pc, const int64_t *I, const int64_t *O, const int64_t *K,
                     const int64_t *S, const int64_t *D, const int64_t *PB, const int64_t *PE,
                     int is_max, const float *x, float *y) {
  int64_t NC = pc->N * pc->C, isz = I[0] * I[1] * I[2];
  int64_t o = 0;
  for (int64_t p = 0; p < NC; p++)
    for (int64_t o0 = 0; o0 < O[0]; o0++)
      for (int64_t o1 = 0; o1 < O[1]; o1++)
        for (int64_t o2 = 0; o2 < O[2]; o2++, o++) {
          double s = 0, m = -FLT_MAX;
          int64_t n = 0, nincl = 0;
          for (int64_t k0 = 0; k0 < K[0]; k0++)
            for (int64_t k1 = 0; k1 < K[1]; k1++)
              for (int64_t k2 = 0; k2 < K[2]; k2++) {
                int64_t i[3] = {o0 * S[0] - PB[0] + k0 * D[0], o1 * S[1] - PB[1] + k1 * D[1],
                                o2 * S[2] - PB[2] + k2 * D[2]};
                int inside = 1, in_pad = 1;
                for (int d = 0; d < 3; d++) {
                  inside &= i[d] >= 0 && i[d] < I[d];
                  in_pad &= i[d] >= -PB[d] && i[d] < I[d] + PE[d];
                }
                nincl += in_pad;
                if (!inside) continue;
                float v = x[p * isz + (i[0] * I[1] + i[1]) * I[2] + i[2]];
                s += v;
                n++;
                if (v > m) m = v;
              }
          int64_t div = pc->count_include_pad ? nincl : n;
          /* A window wholly in the padding averages to 0 in webtrain. */
          y[o] = is_max ? (float)m : div ? (float)(s / (double)div) : 0.0f;
        }
}

static void run_pool_case(const pool_case *pc, const char *op) {
  int nsp = pc->nsp, rank = nsp + 2, is_max = op[0] == 'M';
  int64_t xd[5] = {pc->N, pc->C};
  for (int i = 0; i < nsp; i++) xd[2 + i] = pc->in[i];
  int64_t xn = wt_shape_numel(rank, xd);
  float *x = malloc(sizeof(float) * (size_t)xn);
  for (int64_t i = 0; i < xn; i++) x[i] = frand();
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, op, "", 1, 1);
  wt_node_set_ints(g, node, "kernel_shape", pc->k, nsp);
  wt_node_set_ints(g, node, "strides", pc->stride, nsp);
  wt_node_set_ints(g, node, "pads", pc->pads, 2 * nsp);
  wt_node_set_ints(g, node, "dilations", pc->dil, nsp);
  if (pc->ceil_mode) wt_node_set_int(g, node, "ceil_mode", 1);
  if (pc->count_include_pad) wt_node_set_int(g, node, "count_include_pad", 1);
  wt_tensor in[1] = {harness_f32(rank, xd, x)}, out[1];
  int rc = harness_run(g, node, 17, 1, in, 1, out);
  CHECK_OK(rc);
  if (rc == WT_OK) {
    int64_t I[3], O[3], K[3], S[3], D[3], PB[3], PE[3];
    for (int d = 0; d < 3; d++) {
      int i = d - (3 - nsp);
      int lead = i < 0;
      I[d] = lead ? 1 : pc->in[i];
      O[d] = lead ? 1 : out[0].dims[2 + i];
      K[d] = lead ? 1 : pc->k[i];
      S[d] = lead ? 1 : pc->stride[i];
      D[d] = lead ? 1 : pc->dil[i];
      PB[d] = lead ? 0 : pc->pads[i];
      PE[d] = lead ? 0 : pc->pads[nsp + i];
      if (!lead) {
        int64_t span = pc->in[i] + PB[d] + PE[d] - ((K[d] - 1) * D[d] + 1);
        int64_t o = (pc->ceil_mode ? (span + S[d] - 1) / S[d] : span / S[d]) + 1;
        if (pc->ceil_mode && (o - 1) * S[d] >= pc->in[i] + PB[d]) o--;
        CHECK(out[0].dims[2 + i] == o);
      }
    }
    int64_t on = wt_numel(&out[0]);
    float *e = malloc(sizeof(float) * (size_t)on);
    ref_pool(pc, I, O, K, S, D, PB, PE, is_max, x, e);
    const float *y = out[0].data;
    int bad = 0;
    for (int64_t i = 0; i < on && !bad; i++)
      if (!(fabsf(y[i] - e[i]) <= 1e-5f + 1e-4f * fabsf(e[i]))) {
        fprintf(stderr, "  %s mismatch at %lld: got %g expected %g\n", op, (long long)i, y[i],
                e[i]);
        bad = 1;
      }
    CHECK(!bad);
    free(e);
  }
  harness_free(1, out);
  wt_graph_free(g);
  free(x);
}

static float g_ramp[25];

static void test_examples(void) {
  for (int i = 0; i < 25; i++) g_ramp[i] = (float)(i + 1);
  int64_t xd[4] = {1, 1, 5, 5};
  int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, k2[2] = {2, 2}, k5[2] = {5, 5}, p2[4] = {2, 2, 2, 2};
  wt_tensor in[1] = {harness_f32(4, xd, g_ramp)}, out[2];

  /* MaxPool SAME_UPPER 3x3 stride 2. */
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "MaxPool", "", 1, 1);
  wt_node_set_ints(g, node, "kernel_shape", k3, 2);
  wt_node_set_ints(g, node, "strides", s2, 2);
  wt_node_set_string(g, node, "auto_pad", "SAME_UPPER");
  CHECK_OK(harness_run(g, node, 12, 1, in, 1, out));
  const float e1[9] = {7, 9, 10, 17, 19, 20, 22, 24, 25};
  CHECK(out[0].dims[2] == 3 && out[0].dims[3] == 3);
  for (int i = 0; i < 9; i++) CHECK_NEAR(((float *)out[0].data)[i], e1[i], 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* MaxPool with Indices, storage_order 0 and 1. */
  for (int so = 0; so < 2; so++) {
    g = wt_graph_new();
    node = harness_node(g, "MaxPool", "", 1, 2);
    wt_node_set_ints(g, node, "kernel_shape", k2, 2);
    wt_node_set_ints(g, node, "strides", s2, 2);
    wt_node_set_int(g, node, "storage_order", so);
    CHECK_OK(harness_run(g, node, 12, 1, in, 2, out));
    const float ey[4] = {7, 9, 17, 19};
    const int64_t ei0[4] = {6, 8, 16, 18}, ei1[4] = {6, 16, 8, 18};
    CHECK(out[1].dtype == WT_INT64 && out[1].dims[3] == 2);
    for (int i = 0; i < 4; i++) {
      CHECK_NEAR(((float *)out[0].data)[i], ey[i], 0);
      CHECK(((int64_t *)out[1].data)[i] == (so ? ei1[i] : ei0[i]));
    }
    harness_free(2, out);
    wt_graph_free(g);
  }

  /* AveragePool 5x5 pads 2: with and without count_include_pad. */
  for (int cip = 0; cip < 2; cip++) {
    g = wt_graph_new();
    node = harness_node(g, "AveragePool", "", 1, 1);
    wt_node_set_ints(g, node, "kernel_shape", k5, 2);
    wt_node_set_ints(g, node, "pads", p2, 4);
    wt_node_set_int(g, node, "count_include_pad", cip);
    CHECK_OK(harness_run(g, node, 11, 1, in, 1, out));
    const float *y = out[0].data;
    CHECK_NEAR(y[0], cip ? 2.52 : 7.0, 1e-5);
    CHECK_NEAR(y[12], 13.0, 1e-5);
    CHECK_NEAR(y[24], cip ? 6.84 : 19.0, 1e-5);
    harness_free(1, out);
    wt_graph_free(g);
  }

  /* Global pools over [1, 2, 2, 3]. */
  float xg[12] = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
  int64_t gd[4] = {1, 2, 2, 3};
  wt_tensor gin[1] = {harness_f32(4, gd, xg)};
  g = wt_graph_new();
  node = harness_node(g, "GlobalAveragePool", "", 1, 1);
  CHECK_OK(harness_run(g, node, 1, 1, gin, 1, out));
  CHECK(out[0].rank == 4 && out[0].dims[1] == 2 && out[0].dims[2] == 1 && out[0].dims[3] == 1);
  CHECK_NEAR(((float *)out[0].data)[0], 3.5, 1e-6);
  CHECK_NEAR(((float *)out[0].data)[1], -3.5, 1e-6);
  harness_free(1, out);
  wt_graph_free(g);
  g = wt_graph_new();
  node = harness_node(g, "GlobalMaxPool", "", 1, 1);
  CHECK_OK(harness_run(g, node, 1, 1, gin, 1, out));
  CHECK_NEAR(((float *)out[0].data)[0], 6, 0);
  CHECK_NEAR(((float *)out[0].data)[1], -1, 0);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_errors(void) {
  float x[25] = {0};
  int64_t xd[4] = {1, 1, 5, 5}, xd2[2] = {5, 5}, k2[2] = {2, 2};
  wt_tensor out[1];
  /* MaxPool without kernel_shape. */
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "MaxPool", "", 1, 1);
  wt_tensor in[1] = {harness_f32(4, xd, x)};
  CHECK(harness_run(g, node, 12, 1, in, 1, out) == WT_ERR_INVALID_ARG);
  harness_free(1, out);
  wt_graph_free(g);
  /* AveragePool on int64. */
  int64_t xi[25] = {0};
  g = wt_graph_new();
  node = harness_node(g, "AveragePool", "", 1, 1);
  wt_node_set_ints(g, node, "kernel_shape", k2, 2);
  in[0] = harness_i64(4, xd, xi);
  CHECK(harness_run(g, node, 11, 1, in, 1, out) == WT_ERR_SHAPE);
  harness_free(1, out);
  wt_graph_free(g);
  /* Global pools need rank >= 3. */
  g = wt_graph_new();
  node = harness_node(g, "GlobalAveragePool", "", 1, 1);
  in[0] = harness_f32(2, xd2, x);
  CHECK(harness_run(g, node, 1, 1, in, 1, out) == WT_ERR_SHAPE);
  harness_free(1, out);
  wt_graph_free(g);
  g = wt_graph_new();
  node = harness_node(g, "GlobalMaxPool", "", 1, 1);
  CHECK(harness_run(g, node, 1, 1, in, 1, out) == WT_ERR_SHAPE);
  harness_free(1, out);
  wt_graph_free(g);
  /* kernel_shape length must match the spatial rank. */
  g = wt_graph_new();
  node = harness_node(g, "MaxPool", "", 1, 1);
  wt_node_set_ints(g, node, "kernel_shape", k2, 1);
  in[0] = harness_f32(4, xd, x);
  CHECK(harness_run(g, node, 12, 1, in, 1, out) == WT_ERR_INVALID_ARG);
  harness_free(1, out);
  wt_graph_free(g);
}

int main(void) {
  test_examples();
  test_errors();
  const pool_case cases[] = {
      /* The conformance CNN's 2x2 / stride-2 MaxPool. */
      {2, 2, 8, {28, 28}, {2, 2}, {2, 2}, {1, 1}, {0}, 0, 0},
      {2, 1, 3, {13, 11}, {2, 2}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 0},
      {2, 1, 3, {13, 11}, {2, 3}, {2, 2}, {1, 2}, {0, 1, 1, 0}, 0, 1},
      {2, 1, 3, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 0},
      {2, 1, 3, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 2, 0, 1}, 0, 1},
      {2, 1, 2, {10, 9}, {3, 2}, {2, 3}, {1, 1}, {1, 0, 1, 1}, 1, 0},
      {2, 1, 2, {10, 9}, {3, 2}, {2, 3}, {1, 1}, {1, 0, 1, 1}, 1, 1},
      {2, 1, 2, {9, 12}, {2, 3}, {1, 1}, {2, 2}, {1, 1, 0, 2}, 0, 0},
      {2, 1, 2, {9, 12}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 0},
      {1, 2, 3, {17}, {3}, {2}, {1}, {1, 1}, 1, 0},
      {3, 1, 2, {6, 5, 7}, {2, 3, 2}, {2, 1, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 0}, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int before = wt_check_failures;
    run_pool_case(&cases[i], "MaxPool");
    run_pool_case(&cases[i], "AveragePool");
    if (wt_check_failures != before) fprintf(stderr, "pool case %zu failed\n", i);
  }
  CHECK_DONE();
}
