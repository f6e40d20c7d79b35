/* Conv and ConvTranspose: ONNX's hand-computed examples plus random cases checked against
 * direct (loop) reference implementations, and bad-input errors. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static unsigned g_seed = 12345;
static float frand(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (float)((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static float *rand_buf(int64_t n) {
  float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) p[i] = frand();
  return p;
}

typedef struct conv_case {
  int nsp;
  int64_t N, C, M, group;
  int64_t in[3], k[3], stride[3], dil[3], pads[6];
  const char *auto_pad;          /* NULL: attribute absent */
  int bias;
  int kernel_attr;               /* set kernel_shape explicitly */
  int64_t out_pad[3];            /* ConvTranspose */
} conv_case;

/* Direct Conv on 3-D-normalized shapes (leading unit dims); pads: begin per dim. */
static void ref_conv(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *I,
                     const int64_t *O, const int64_t *K, const int64_t *S, const int64_t *D,
                     const int64_t *P, const float *x, const float *w, const float *b, float *y) {
  int64_t Cg = C / group, Mg = M / group;
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t o0 = 0; o0 < O[0]; o0++)
        for (int64_t o1 = 0; o1 < O[1]; o1++)
          for (int64_t o2 = 0; o2 < O[2]; o2++) {
            double s = b ? b[m] : 0.0;
            int64_t gi = m / Mg;
            for (int64_t c = 0; c < Cg; c++)
              for (int64_t k0 = 0; k0 < K[0]; k0++)
                for (int64_t k1 = 0; k1 < K[1]; k1++)
                  for (int64_t k2 = 0; k2 < K[2]; k2++) {
                    int64_t i0 = o0 * S[0] - P[0] + k0 * D[0], i1 = o1 * S[1] - P[1] + k1 * D[1];
                    int64_t i2 = o2 * S[2] - P[2] + k2 * D[2];
                    if (i0 < 0 || i0 >= I[0] || i1 < 0 || i1 >= I[1] || i2 < 0 || i2 >= I[2])
                      continue;
                    s += (double)x[(((n * C + gi * Cg + c) * I[0] + i0) * I[1] + i1) * I[2] + i2] *
                         w[(((m * Cg + c) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                  }
            y[(((n * M + m) * O[0] + o0) * O[1] + o1) * O[2] + o2] = (float)s;
          }
}

/* Direct ConvTranspose: scatter every input tap into the output. */
static void ref_convt(int64_t N, int64_t C, int64_t M, int64_t group, const int64_t *I,
                      const int64_t *O, const int64_t *K, const int64_t *S, const int64_t *D,
                      const int64_t *P, const float *x, const float *w, const float *b,
                      float *y) {
  int64_t Cg = C / group, Mg = M / group, osz = O[0] * O[1] * O[2];
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t i = 0; i < osz; i++) y[(n * M + m) * osz + i] = b ? b[m] : 0.0f;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i0 = 0; i0 < I[0]; i0++)
        for (int64_t i1 = 0; i1 < I[1]; i1++)
          for (int64_t i2 = 0; i2 < I[2]; i2++) {
            float xv = x[(((n * C + c) * I[0] + i0) * I[1] + i1) * I[2] + i2];
            int64_t gi = c / Cg;
            for (int64_t m = 0; m < Mg; m++)
              for (int64_t k0 = 0; k0 < K[0]; k0++)
                for (int64_t k1 = 0; k1 < K[1]; k1++)
                  for (int64_t k2 = 0; k2 < K[2]; k2++) {
                    int64_t o0 = i0 * S[0] - P[0] + k0 * D[0], o1 = i1 * S[1] - P[1] + k1 * D[1];
                    int64_t o2 = i2 * S[2] - P[2] + k2 * D[2];
                    if (o0 < 0 || o0 >= O[0] || o1 < 0 || o1 >= O[1] || o2 < 0 || o2 >= O[2])
                      continue;
                    y[(((n * M + gi * Mg + m) * O[0] + o0) * O[1] + o1) * O[2] + o2] +=
                        xv * w[(((c * Mg + m) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                  }
          }
}

static int close_enough(const float *a, const float *e, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(a[i] - e[i]) <= 1e-4f + 1e-4f * fabsf(e[i]))) {
      fprintf(stderr, "  mismatch at %lld: got %g expected %g\n", (long long)i, a[i], e[i]);
      return 0;
    }
  return 1;
}

static void set_common(wt_graph *g, int node, const conv_case *cc) {
  int nsp = cc->nsp;
  if (cc->kernel_attr) wt_node_set_ints(g, node, "kernel_shape", cc->k, nsp);
  wt_node_set_ints(g, node, "strides", cc->stride, nsp);
  wt_node_set_ints(g, node, "dilations", cc->dil, nsp);
  if (cc->auto_pad) wt_node_set_string(g, node, "auto_pad", cc->auto_pad);
  else wt_node_set_ints(g, node, "pads", cc->pads, 2 * nsp);
  if (cc->group != 1) wt_node_set_int(g, node, "group", cc->group);
}

/* Normalizes the case's spatial arrays to 3-D with leading ones. */
static void norm3(int nsp, const int64_t *v, int64_t *o3, int64_t fill) {
  for (int d = 0; d < 3; d++) o3[d] = d < 3 - nsp ? fill : v[d - (3 - nsp)];
}

static void run_conv_case(const conv_case *cc) {
  int nsp = cc->nsp, rank = nsp + 2;
  int64_t xd[5] = {cc->N, cc->C}, wd[5] = {cc->M, cc->C / cc->group};
  for (int i = 0; i < nsp; i++) {
    xd[2 + i] = cc->in[i];
    wd[2 + i] = cc->k[i];
  }
  int64_t xn = wt_shape_numel(rank, xd), wn = wt_shape_numel(rank, wd);
  float *x = rand_buf(xn), *w = rand_buf(wn), *b = rand_buf(cc->M);
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Conv", "", cc->bias ? 3 : 2, 1);
  set_common(g, node, cc);
  int64_t bd[1] = {cc->M};
  wt_tensor in[3] = {harness_f32(rank, xd, x), harness_f32(rank, wd, w), harness_f32(1, bd, b)};
  wt_tensor out[1];
  int rc = harness_run(g, node, 17, cc->bias ? 3 : 2, in, 1, out);
  CHECK_OK(rc);
  if (rc == WT_OK) {
    CHECK(out[0].rank == rank && out[0].dims[0] == cc->N && out[0].dims[1] == cc->M);
    int64_t I3[3], O3[3], K3[3], S3[3], D3[3], P3[3], pb[3];
    for (int i = 0; i < nsp; i++) {
      pb[i] = cc->pads[i];
      if (cc->auto_pad && strncmp(cc->auto_pad, "SAME", 4) == 0) {
        int64_t dk = (cc->k[i] - 1) * cc->dil[i] + 1;
        int64_t o = (cc->in[i] + cc->stride[i] - 1) / cc->stride[i];
        int64_t total = (o - 1) * cc->stride[i] + dk - cc->in[i];
        if (total < 0) total = 0;
        pb[i] = strcmp(cc->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
      } else if (cc->auto_pad) {
        pb[i] = 0;
      }
    }
    norm3(nsp, cc->in, I3, 1);
    norm3(nsp, out[0].dims + 2, O3, 1);
    norm3(nsp, cc->k, K3, 1);
    norm3(nsp, cc->stride, S3, 1);
    norm3(nsp, cc->dil, D3, 1);
    norm3(nsp, pb, P3, 0);
    int64_t on = wt_numel(&out[0]);
    float *e = malloc(sizeof(float) * (size_t)on);
    ref_conv(cc->N, cc->C, cc->M, cc->group, I3, O3, K3, S3, D3, P3, x, w, cc->bias ? b : NULL, e);
    CHECK(close_enough(out[0].data, e, on));
    free(e);
  }
  harness_free(1, out);
  wt_graph_free(g);
  free(x);
  free(w);
  free(b);
}

static void run_convt_case(const conv_case *cc) {
  int nsp = cc->nsp, rank = nsp + 2;
  int64_t Mg = cc->M / cc->group;
  int64_t xd[5] = {cc->N, cc->C}, wd[5] = {cc->C, Mg};
  for (int i = 0; i < nsp; i++) {
    xd[2 + i] = cc->in[i];
    wd[2 + i] = cc->k[i];
  }
  int64_t xn = wt_shape_numel(rank, xd), wn = wt_shape_numel(rank, wd);
  float *x = rand_buf(xn), *w = rand_buf(wn), *b = rand_buf(cc->M);
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "ConvTranspose", "", cc->bias ? 3 : 2, 1);
  set_common(g, node, cc);
  wt_node_set_ints(g, node, "output_padding", cc->out_pad, nsp);
  int64_t bd[1] = {cc->M};
  wt_tensor in[3] = {harness_f32(rank, xd, x), harness_f32(rank, wd, w), harness_f32(1, bd, b)};
  wt_tensor out[1];
  int rc = harness_run(g, node, 17, cc->bias ? 3 : 2, in, 1, out);
  CHECK_OK(rc);
  if (rc == WT_OK) {
    int64_t I3[3], O3[3], K3[3], S3[3], D3[3], P3[3];
    for (int i = 0; i < nsp; i++) {
      int64_t full = cc->stride[i] * (cc->in[i] - 1) + cc->out_pad[i] +
                     (cc->k[i] - 1) * cc->dil[i] + 1;
      CHECK(out[0].dims[2 + i] == full - cc->pads[i] - cc->pads[nsp + i]);
    }
    norm3(nsp, cc->in, I3, 1);
    norm3(nsp, out[0].dims + 2, O3, 1);
    norm3(nsp, cc->k, K3, 1);
    norm3(nsp, cc->stride, S3, 1);
    norm3(nsp, cc->dil, D3, 1);
    norm3(nsp, cc->pads, P3, 0);
    int64_t on = wt_numel(&out[0]);
    float *e = malloc(sizeof(float) * (size_t)on);
    ref_convt(cc->N, cc->C, cc->M, cc->group, I3, O3, K3, S3, D3, P3, x, w, cc->bias ? b : NULL,
              e);
    CHECK(close_enough(out[0].data, e, on));
    free(e);
  }
  harness_free(1, out);
  wt_graph_free(g);
  free(x);
  free(w);
  free(b);
}

static void test_conv_examples(void) {
  /* ONNX's Conv example: 5x5 ramp, 3x3 ones, strides 2, pads only along H. */
  float x[35], w[9];
  for (int i = 0; i < 35; i++) x[i] = (float)i;
  for (int i = 0; i < 9; i++) w[i] = 1.0f;
  int64_t xd[4] = {1, 1, 7, 5}, wd[4] = {1, 1, 3, 3};
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Conv", "", 2, 1);
  int64_t k[2] = {3, 3}, pads[4] = {1, 0, 1, 0}, s[2] = {2, 2};
  wt_node_set_ints(g, node, "kernel_shape", k, 2);
  wt_node_set_ints(g, node, "pads", pads, 4);
  wt_node_set_ints(g, node, "strides", s, 2);
  wt_tensor in[2] = {harness_f32(4, xd, x), harness_f32(4, wd, w)}, out[1];
  CHECK_OK(harness_run(g, node, 11, 2, in, 1, out));
  const float e[8] = {21, 33, 99, 117, 189, 207, 171, 183};
  CHECK(out[0].dims[2] == 4 && out[0].dims[3] == 2);
  for (int i = 0; i < 8; i++) CHECK_NEAR(((float *)out[0].data)[i], e[i], 1e-4);
  harness_free(1, out);
  wt_graph_free(g);

  /* ConvTranspose example: 3x3 ramp, two 3x3 ones filters, defaults. */
  float xt[9], wt[18];
  for (int i = 0; i < 9; i++) xt[i] = (float)i;
  for (int i = 0; i < 18; i++) wt[i] = 1.0f;
  int64_t xtd[4] = {1, 1, 3, 3}, wtd[4] = {1, 2, 3, 3};
  g = wt_graph_new();
  node = harness_node(g, "ConvTranspose", "", 2, 1);
  wt_tensor tin[2] = {harness_f32(4, xtd, xt), harness_f32(4, wtd, wt)};
  CHECK_OK(harness_run(g, node, 11, 2, tin, 1, out));
  const float et[25] = {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15,
                        9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
  CHECK(out[0].dims[1] == 2 && out[0].dims[2] == 5 && out[0].dims[3] == 5);
  for (int i = 0; i < 50; i++) CHECK_NEAR(((float *)out[0].data)[i], et[i % 25], 1e-4);
  harness_free(1, out);

  /* output_shape larger than the full result: the extra trailing row/col are zero. */
  wt_graph_free(g);
  g = wt_graph_new();
  node = harness_node(g, "ConvTranspose", "", 2, 1);
  int64_t st[2] = {3, 2}, os[2] = {10, 8};
  wt_node_set_ints(g, node, "strides", st, 2);
  wt_node_set_ints(g, node, "output_shape", os, 2);
  CHECK_OK(harness_run(g, node, 11, 2, tin, 1, out));
  CHECK(out[0].dims[2] == 10 && out[0].dims[3] == 8);
  const float row3[8] = {3, 3, 7, 4, 9, 5, 5, 0};
  for (int i = 0; i < 8; i++) CHECK_NEAR(((float *)out[0].data)[3 * 8 + i], row3[i], 1e-4);
  for (int i = 0; i < 8; i++) CHECK_NEAR(((float *)out[0].data)[9 * 8 + i], 0.0, 1e-6);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_conv_errors(void) {
  float x[32] = {0}, w[32] = {0};
  int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {1, 3, 3, 3};
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "Conv", "", 2, 1);
  wt_tensor in[2] = {harness_f32(4, xd, x), harness_f32(4, wd, w)}, out[1];
  CHECK(harness_run(g, node, 17, 2, in, 1, out) == WT_ERR_SHAPE); /* C 2 vs W 3 */
  harness_free(1, out);
  int64_t xi[4] = {0};
  in[0] = harness_i64(4, xd, xi);
  CHECK(harness_run(g, node, 17, 2, in, 1, out) == WT_ERR_SHAPE); /* int64 X */
  harness_free(1, out);
  wt_graph_free(g);

  g = wt_graph_new();
  node = harness_node(g, "ConvTranspose", "", 2, 1);
  int64_t wtd[4] = {3, 1, 3, 3}; /* W dim0 must equal C = 2 */
  wt_tensor tin[2] = {harness_f32(4, xd, x), harness_f32(4, wtd, w)};
  CHECK(harness_run(g, node, 17, 2, tin, 1, out) == WT_ERR_SHAPE);
  harness_free(1, out);
  wt_graph_free(g);

  g = wt_graph_new();
  node = harness_node(g, "Conv", "", 2, 1);
  wt_node_set_string(g, node, "auto_pad", "SAME");
  int64_t wd2[4] = {1, 2, 3, 3};
  wt_tensor in2[2] = {harness_f32(4, xd, x), harness_f32(4, wd2, w)};
  CHECK(harness_run(g, node, 17, 2, in2, 1, out) == WT_ERR_INVALID_ARG);
  harness_free(1, out);
  wt_graph_free(g);
}

int main(void) {
  test_conv_examples();
  test_conv_errors();
  const conv_case conv_cases[] = {
      /* The conformance CNN's hot shapes. */
      {2, 2, 1, 8, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 1, {0}},
      {2, 2, 8, 16, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 0, {0}},
      /* Groups, strides, dilations, asymmetric pads. */
      {2, 1, 4, 6, 2, {9, 7}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, NULL, 1, 0, {0}},
      {2, 2, 6, 6, 6, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 0, {0}},
      {2, 1, 3, 4, 1, {7, 6}, {3, 3}, {2, 3}, {1, 1}, {0}, "SAME_UPPER", 0, 0, {0}},
      {2, 1, 3, 4, 1, {7, 6}, {2, 4}, {2, 1}, {1, 1}, {0}, "SAME_LOWER", 0, 0, {0}},
      {2, 1, 3, 4, 1, {7, 6}, {3, 3}, {2, 2}, {1, 1}, {0}, "VALID", 1, 0, {0}},
      /* Pointwise (direct GEMM) and 1x1 with padding (im2col). */
      {2, 2, 5, 3, 1, {4, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1, 0, {0}},
      {2, 1, 4, 4, 2, {4, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 1, 1, 0}, NULL, 0, 0, {0}},
      /* Small grids: several images side by side per GEMM (wt_conv_batch_images), with a last
       * block of fewer images, groups, pointwise, dilations and asymmetric pads, 1-D and 3-D. */
      {2, 5, 4, 6, 2, {7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 0, {0}},
      {2, 3, 5, 3, 1, {4, 4}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1, 0, {0}},
      {2, 3, 3, 4, 1, {6, 5}, {2, 3}, {1, 1}, {2, 1}, {1, 0, 0, 2}, NULL, 0, 0, {0}},
      {2, 4, 6, 6, 6, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 0, {0}},
      {1, 4, 2, 3, 1, {9}, {3}, {2}, {1}, {1, 1}, NULL, 1, 0, {0}},
      {3, 3, 2, 3, 1, {3, 4, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, NULL, 1, 0,
       {0}},
      /* Depthwise (direct kernels, conv_depthwise.c): channel multiplier 2, stride 2 over rows
       * wide enough for its vector path, 5x5 with dilation, 1-D and 3-D. */
      {2, 2, 3, 6, 3, {7, 21}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 0, {0}},
      {2, 1, 4, 4, 4, {12, 13}, {5, 5}, {1, 1}, {2, 1}, {2, 2, 3, 2}, NULL, 0, 0, {0}},
      {2, 2, 5, 5, 5, {9, 18}, {3, 3}, {2, 2}, {1, 1}, {0}, "SAME_UPPER", 1, 0, {0}},
      {1, 2, 4, 8, 4, {23}, {3}, {2}, {1}, {1, 1}, NULL, 1, 0, {0}},
      /* ... and where the forward's padded plane does not apply: stride 3, a row of 9000 */
      {2, 2, 3, 3, 3, {7, 14}, {3, 3}, {1, 3}, {1, 1}, {1, 1, 1, 1}, NULL, 1, 0, {0}},
      {1, 1, 2, 2, 2, {9000}, {3}, {1}, {1}, {1, 1}, NULL, 1, 0, {0}},
      {3, 1, 2, 2, 2, {4, 5, 9}, {3, 2, 3}, {1, 1, 2}, {1, 2, 1}, {1, 0, 1, 1, 1, 0}, NULL, 1, 0,
       {0}},
      /* 1-D and 3-D. */
      {1, 2, 3, 5, 1, {17}, {4}, {3}, {2}, {2, 1}, NULL, 1, 0, {0}},
      {3, 1, 2, 3, 1, {5, 6, 4}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 1, 1, 0}, NULL, 1, 1,
       {0}},
  };
  for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
    int before = wt_check_failures;
    run_conv_case(&conv_cases[i]);
    if (wt_check_failures != before) fprintf(stderr, "conv case %zu failed\n", i);
  }
  const conv_case convt_cases[] = {
      {2, 1, 2, 3, 1, {3, 4}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1, 0, {0, 0}},
      {2, 2, 4, 6, 2, {3, 4}, {3, 2}, {2, 3}, {1, 2}, {1, 0, 1, 2}, NULL, 1, 1, {1, 2}},
      {2, 1, 3, 2, 1, {4, 4}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1, 0, {0, 0}},
      {1, 2, 2, 4, 1, {5}, {3}, {2}, {2}, {1, 0}, NULL, 0, 0, {1}},
      {3, 1, 2, 2, 1, {2, 3, 2}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 0, 0, 0, 1}, NULL, 1, 0,
       {0, 0, 1}},
  };
  for (size_t i = 0; i < sizeof convt_cases / sizeof convt_cases[0]; i++) {
    int before = wt_check_failures;
    run_convt_case(&convt_cases[i]);
    if (wt_check_failures != before) fprintf(stderr, "convtranspose case %zu failed\n", i);
  }
  CHECK_DONE();
}
