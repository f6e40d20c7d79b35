/* Unit tests for the shape family (shape.c, shape_build.c) and the strided copy kernel. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/pool.h"
#include "backend/cpu/copy.h"
#include "op_harness.h"
#include "webtrain.h"

static wt_tensor tens(int dtype, int rank, const int64_t *dims, void *data) {
  wt_tensor t = {.dtype = dtype, .rank = rank, .data = data};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}

/* Runs a one-output node; returns rc, fills *out (caller frees with harness_free). */
static int run1(wt_graph *g, int node, int opset, int n_in, const wt_tensor *in, wt_tensor *out) {
  return harness_run(g, node, opset, n_in, in, 1, out);
}

static void test_reshape(void) {
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  int64_t xd[3] = {2, 3, 4}, sd[1] = {3};
  int64_t shape[3] = {0, -1, 2};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Reshape", "", 2, 1);
  wt_tensor in[2] = {harness_f32(3, xd, x), harness_i64(1, sd, shape)}, out[1];
  CHECK_OK(run1(g, n, 14, 2, in, out));
  CHECK(out[0].rank == 3 && out[0].dims[0] == 2 && out[0].dims[1] == 6 && out[0].dims[2] == 2);
  CHECK(((float *)out[0].data)[23] == 23.0f);
  harness_free(1, out);
  /* allowzero=1: 0 is a real zero-size dim, so 24 elements cannot fit. */
  wt_node_set_int(g, n, "allowzero", 1);
  CHECK(run1(g, n, 14, 2, in, out) != 0);
  harness_free(1, out);
  /* Two -1 is an error. */
  int64_t bad[3] = {-1, -1, 2};
  in[1] = harness_i64(1, sd, bad);
  CHECK(run1(g, n, 13, 2, in, out) != 0);
  harness_free(1, out);
  /* Unknown shape value: clear error, not a crash. */
  in[1] = harness_i64(1, sd, NULL);
  CHECK(run1(g, n, 13, 2, in, out) == WT_ERR_UNSUPPORTED);
  CHECK(strstr(wt_error_message(), "known before the run") != NULL);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_flatten_squeeze(void) {
  float x[24] = {0};
  int64_t xd[4] = {2, 1, 3, 4};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Flatten", "", 1, 1);
  wt_tensor in[2] = {harness_f32(4, xd, x)}, out[1];
  wt_node_set_int(g, n, "axis", -2);
  CHECK_OK(run1(g, n, 13, 1, in, out));
  CHECK(out[0].rank == 2 && out[0].dims[0] == 2 && out[0].dims[1] == 12);
  harness_free(1, out);
  wt_node_set_int(g, n, "axis", 5);
  CHECK(run1(g, n, 13, 1, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* Squeeze: opset 11 attribute, opset 13 input, default squeezes every 1. */
  g = wt_graph_new();
  n = harness_node(g, "Squeeze", "", 1, 1);
  int64_t ax[1] = {-3};
  wt_node_set_ints(g, n, "axes", ax, 1);
  CHECK_OK(run1(g, n, 11, 1, in, out));
  CHECK(out[0].rank == 3 && out[0].dims[1] == 3);
  harness_free(1, out);
  int64_t bad[1] = {0};
  wt_node_set_ints(g, n, "axes", bad, 1);
  CHECK(run1(g, n, 11, 1, in, out) != 0); /* dim 0 has size 2 */
  harness_free(1, out);
  wt_graph_free(g);
  g = wt_graph_new();
  n = harness_node(g, "Squeeze", "", 1, 1);
  CHECK_OK(run1(g, n, 13, 1, in, out));
  CHECK(out[0].rank == 3);
  harness_free(1, out);
  wt_graph_free(g);

  /* Unsqueeze opset 13: axes input, unsorted and negative. */
  g = wt_graph_new();
  n = harness_node(g, "Unsqueeze", "", 2, 1);
  int64_t axd[1] = {2}, axes[2] = {-1, 0};
  in[1] = harness_i64(1, axd, axes);
  CHECK_OK(run1(g, n, 13, 2, in, out));
  CHECK(out[0].rank == 6 && out[0].dims[0] == 1 && out[0].dims[1] == 2 && out[0].dims[5] == 1);
  harness_free(1, out);
  int64_t dup[2] = {1, 1};
  in[1] = harness_i64(1, axd, dup);
  CHECK(run1(g, n, 13, 2, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

/* Naive reference transpose for the randomized kernel check. */
static void ref_transpose(const unsigned char *src, unsigned char *dst, int r, const int64_t *d,
                          const int *perm, size_t elem) {
  int64_t n = wt_shape_numel(r, d), is[WT_MAX_RANK], od[WT_MAX_RANK], idx[WT_MAX_RANK];
  wt_strides(r, d, is);
  for (int i = 0; i < r; i++) od[i] = d[perm[i]];
  for (int64_t o = 0; o < n; o++) {
    int64_t rem = o, off = 0;
    for (int i = r - 1; i >= 0; i--) {
      idx[i] = rem % od[i];
      rem /= od[i];
    }
    for (int i = 0; i < r; i++) off += idx[i] * is[perm[i]];
    memcpy(dst + o * (int64_t)elem, src + off * (int64_t)elem, elem);
  }
}

static void test_transpose(void) {
  /* Attention layout [N,T,H,D] -> [N,H,T,D] on int64. */
  int64_t x[2 * 3 * 4 * 5], d[4] = {2, 3, 4, 5};
  for (int i = 0; i < 120; i++) x[i] = i;
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Transpose", "", 1, 1);
  int64_t perm[4] = {0, 2, 1, 3};
  wt_node_set_ints(g, n, "perm", perm, 4);
  wt_tensor in[1] = {harness_i64(4, d, x)}, out[1];
  CHECK_OK(run1(g, n, 13, 1, in, out));
  CHECK(out[0].dims[1] == 4 && out[0].dims[2] == 3);
  /* y[n,h,t,dd] = x[n,t,h,dd]: y[1,2,1,3] = x[1,1,2,3] = 60+20+10+3 */
  CHECK(((int64_t *)out[0].data)[1 * 60 + 2 * 15 + 1 * 5 + 3] == 93);
  harness_free(1, out);
  int64_t bad[4] = {0, 2, 2, 3};
  wt_node_set_ints(g, n, "perm", bad, 4);
  CHECK(run1(g, n, 13, 1, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* Default perm reverses (2-D tiled path), on bool. */
  unsigned char b[6] = {1, 0, 0, 1, 1, 0};
  int64_t bd[2] = {2, 3};
  g = wt_graph_new();
  n = harness_node(g, "Transpose", "", 1, 1);
  in[0] = tens(WT_BOOL, 2, bd, b);
  CHECK_OK(run1(g, n, 13, 1, in, out));
  unsigned char *y = out[0].data;
  CHECK(out[0].dims[0] == 3 && y[0] == 1 && y[1] == 1 && y[2] == 0 && y[3] == 1 && y[4] == 0 && y[5] == 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* Randomized: every element size, random ranks/perms/dims against the naive loop. */
  srand(7);
  static unsigned char src[270000 * 8], got[270000 * 8], want[270000 * 8];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)rand();
  size_t elems[3] = {1, 4, 8};
  for (int trial = 0; trial < 300; trial++) {
    int r = 1 + rand() % 6, perm2[WT_MAX_RANK];
    int64_t dd[WT_MAX_RANK];
    for (int i = 0; i < r; i++) {
      dd[i] = 1 + rand() % (r <= 2 ? 40 : 6);
      perm2[i] = i;
    }
    for (int i = r - 1; i > 0; i--) {
      int j = rand() % (i + 1), t = perm2[i];
      perm2[i] = perm2[j];
      perm2[j] = t;
    }
    size_t e = elems[trial % 3];
    int64_t cnt = wt_shape_numel(r, dd);
    wt_transpose(got, src, r, dd, perm2, e);
    ref_transpose(src, want, r, dd, perm2, e);
    CHECK(memcmp(got, want, (size_t)cnt * e) == 0);
  }

  /* Layouts of real models, large enough to be split over threads (and in bands of rows when
   * tiled): ConvNeXt's channel permutes [N,C,H,W] <-> [N,H,W,C] (the destination's contiguous
   * axis in the middle), attention's head transposes, a plain 2-D weight; at 1-3 threads, with
   * small copies split too: the naive loop's bytes every time. */
  static const struct { int r; int64_t d[4]; int perm[4]; } big[] = {
      {4, {2, 96, 16, 16}, {0, 2, 3, 1}}, {4, {2, 16, 16, 96}, {0, 3, 1, 2}},
      {4, {2, 45, 7, 9}, {0, 2, 3, 1}},   {4, {8, 128, 4, 64}, {0, 2, 1, 3}},
      {4, {8, 4, 128, 64}, {0, 1, 3, 2}}, {2, {200, 99}, {1, 0}},
      {3, {70, 33, 5}, {2, 0, 1}}};
  for (int threads = 1; threads <= 3; threads++)
    for (int split = 0; split < 2; split++) {
      wt_set_threads(threads);
      wt_pool_set_split_small(split);
      for (size_t c = 0; c < sizeof big / sizeof big[0]; c++) {
        size_t e = elems[(c + (size_t)threads) % 3];
        int64_t cnt = wt_shape_numel(big[c].r, big[c].d);
        CHECK(cnt * (int64_t)e <= (int64_t)sizeof got);
        memset(got, 0, (size_t)cnt * e);
        wt_transpose(got, src, big[c].r, big[c].d, big[c].perm, e);
        ref_transpose(src, want, big[c].r, big[c].d, big[c].perm, e);
        CHECK(memcmp(got, want, (size_t)cnt * e) == 0);
      }
    }
  wt_pool_set_split_small(0);
  wt_set_threads(1);
}

static void test_expand_tile(void) {
  float x[3] = {1, 2, 3};
  int64_t xd[2] = {3, 1}, sd[1] = {3}, shape[3] = {2, 1, 4};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Expand", "", 2, 1);
  wt_tensor in[2] = {harness_f32(2, xd, x), harness_i64(1, sd, shape)}, out[1];
  CHECK_OK(run1(g, n, 13, 2, in, out));
  CHECK(out[0].rank == 3 && out[0].dims[0] == 2 && out[0].dims[1] == 3 && out[0].dims[2] == 4);
  float *y = out[0].data;
  CHECK(y[0] == 1 && y[3] == 1 && y[4] == 2 && y[11] == 3 && y[12] == 1 && y[23] == 3);
  harness_free(1, out);
  int64_t bad[3] = {2, 2, 4};
  in[1] = harness_i64(1, sd, bad);
  CHECK(run1(g, n, 13, 2, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);

  int32_t t[4] = {1, 2, 3, 4};
  int64_t td[2] = {2, 2}, rd[1] = {2}, reps[2] = {2, 3};
  g = wt_graph_new();
  n = harness_node(g, "Tile", "", 2, 1);
  in[0] = tens(WT_INT32, 2, td, t);
  in[1] = harness_i64(1, rd, reps);
  CHECK_OK(run1(g, n, 13, 2, in, out));
  CHECK(out[0].dims[0] == 4 && out[0].dims[1] == 6);
  int32_t *o = out[0].data, want[24] = {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                        1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4};
  CHECK(memcmp(o, want, sizeof want) == 0);
  harness_free(1, out);
  int64_t short_reps[1] = {2};
  int64_t one[1] = {1};
  in[1] = harness_i64(1, one, short_reps);
  CHECK(run1(g, n, 13, 2, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_concat_split(void) {
  float a[4] = {1, 2, 3, 4}, b[2] = {5, 6};
  int64_t ad[2] = {2, 2}, bd[2] = {2, 1}, ed[2] = {2, 0};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Concat", "", 3, 1);
  wt_node_set_int(g, n, "axis", -1);
  wt_tensor in[3] = {harness_f32(2, ad, a), harness_f32(2, ed, NULL), harness_f32(2, bd, b)},
            out[4];
  CHECK_OK(run1(g, n, 13, 3, in, out));
  float *y = out[0].data;
  CHECK(out[0].dims[1] == 3 && y[0] == 1 && y[2] == 5 && y[3] == 3 && y[5] == 6);
  harness_free(1, out);
  int64_t cd[2] = {3, 1};
  in[2] = harness_f32(2, cd, b);
  CHECK(run1(g, n, 13, 3, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* Split opset 13 with a split input, opset 11 equal split. */
  int64_t x[6] = {0, 1, 2, 3, 4, 5}, xd[1] = {6}, sd[1] = {2}, sp[2] = {1, 5};
  g = wt_graph_new();
  n = harness_node(g, "Split", "", 2, 2);
  in[0] = harness_i64(1, xd, x);
  in[1] = harness_i64(1, sd, sp);
  CHECK_OK(harness_run(g, n, 13, 2, in, 2, out));
  CHECK(out[0].dims[0] == 1 && out[1].dims[0] == 5 && ((int64_t *)out[1].data)[4] == 5);
  harness_free(2, out);
  int64_t badsp[2] = {2, 5};
  in[1] = harness_i64(1, sd, badsp);
  CHECK(harness_run(g, n, 13, 2, in, 2, out) != 0);
  harness_free(2, out);
  wt_graph_free(g);
  g = wt_graph_new();
  n = harness_node(g, "Split", "", 1, 3);
  CHECK_OK(harness_run(g, n, 11, 1, in, 3, out));
  CHECK(out[2].dims[0] == 2 && ((int64_t *)out[2].data)[0] == 4);
  harness_free(3, out);
  wt_graph_free(g);
  g = wt_graph_new();
  n = harness_node(g, "Split", "", 1, 4);
  CHECK(harness_run(g, n, 11, 1, in, 4, out) != 0); /* 6 is not divisible by 4 */
  harness_free(4, out);
  wt_graph_free(g);
}

static void test_shape_size(void) {
  float x[1];
  int64_t xd[4] = {2, 3, 4, 5};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "Shape", "", 1, 1);
  wt_node_set_int(g, n, "start", -3);
  wt_node_set_int(g, n, "end", -1);
  wt_tensor in[1] = {harness_f32(4, xd, x)}, out[1];
  CHECK_OK(run1(g, n, 15, 1, in, out));
  CHECK(out[0].dtype == WT_INT64 && out[0].dims[0] == 2);
  CHECK(((int64_t *)out[0].data)[0] == 3 && ((int64_t *)out[0].data)[1] == 4);
  harness_free(1, out);
  /* Before opset 15 start/end do not exist. */
  CHECK_OK(run1(g, n, 13, 1, in, out));
  CHECK(out[0].dims[0] == 4);
  harness_free(1, out);
  wt_graph_free(g);
  g = wt_graph_new();
  n = harness_node(g, "Size", "", 1, 1);
  CHECK_OK(run1(g, n, 13, 1, in, out));
  CHECK(out[0].rank == 0 && ((int64_t *)out[0].data)[0] == 120);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_constants(void) {
  /* ConstantOfShape with an int32 value tensor. */
  int64_t shape[2] = {2, 3}, sd[1] = {2};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "ConstantOfShape", "", 1, 1);
  wt_attr *a = wt_node_add_attr(g, n, "value", WT_ATTR_TENSOR);
  a->t = calloc(1, sizeof *a->t);
  a->t->t.dtype = WT_INT32;
  a->t->t.rank = 1;
  a->t->t.dims[0] = 1;
  a->t->t.data = malloc(4);
  int32_t seven = 7;
  memcpy(a->t->t.data, &seven, 4);
  wt_tensor in[3] = {harness_i64(1, sd, shape)}, out[1];
  CHECK_OK(run1(g, n, 13, 1, in, out));
  CHECK(out[0].dtype == WT_INT32 && out[0].rank == 2 && ((int32_t *)out[0].data)[5] == 7);
  harness_free(1, out);
  int64_t neg[2] = {2, -3};
  in[0] = harness_i64(1, sd, neg);
  CHECK(run1(g, n, 13, 1, in, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);

  /* Constant: value_floats and a rejected string. */
  g = wt_graph_new();
  n = harness_node(g, "Constant", "", 0, 1);
  a = wt_node_add_attr(g, n, "value_floats", WT_ATTR_FLOATS);
  a->n = 2;
  a->floats = malloc(8);
  a->floats[0] = 1.5f;
  a->floats[1] = -2.0f;
  CHECK_OK(run1(g, n, 13, 0, NULL, out));
  CHECK(out[0].dtype == WT_FLOAT && out[0].dims[0] == 2 && ((float *)out[0].data)[1] == -2.0f);
  harness_free(1, out);
  wt_graph_free(g);
  g = wt_graph_new();
  n = harness_node(g, "Constant", "", 0, 1);
  wt_node_set_string(g, n, "value_string", "hi");
  CHECK(run1(g, n, 13, 0, NULL, out) == WT_ERR_UNSUPPORTED);
  harness_free(1, out);
  wt_graph_free(g);

  /* Range on int32 with a negative delta; float; unknown start. */
  int32_t s = 10, l = 4, d = -3;
  g = wt_graph_new();
  n = harness_node(g, "Range", "", 3, 1);
  in[0] = tens(WT_INT32, 0, NULL, &s);
  in[1] = tens(WT_INT32, 0, NULL, &l);
  in[2] = tens(WT_INT32, 0, NULL, &d);
  CHECK_OK(run1(g, n, 11, 3, in, out));
  CHECK(out[0].dims[0] == 2 && ((int32_t *)out[0].data)[1] == 7);
  harness_free(1, out);
  float fs = 1.0f, fl = 2.0f, fd = 0.25f;
  in[0] = tens(WT_FLOAT, 0, NULL, &fs);
  in[1] = tens(WT_FLOAT, 0, NULL, &fl);
  in[2] = tens(WT_FLOAT, 0, NULL, &fd);
  CHECK_OK(run1(g, n, 11, 3, in, out));
  CHECK(out[0].dims[0] == 4 && ((float *)out[0].data)[3] == 1.75f);
  harness_free(1, out);
  in[0].data = NULL;
  CHECK(run1(g, n, 11, 3, in, out) == WT_ERR_UNSUPPORTED);
  harness_free(1, out);
  wt_graph_free(g);
}

int main(void) {
  test_reshape();
  test_flatten_squeeze();
  test_transpose();
  test_expand_tile();
  test_concat_split();
  test_shape_size();
  test_constants();
  CHECK_DONE();
}
