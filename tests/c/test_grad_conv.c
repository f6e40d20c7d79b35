/* Gradient checks of the conv and pool families: Conv / ConvTranspose (ConvGrad /
 * ConvTransposeGrad: groups, strides, pads, dilations, auto_pad, 1-D to 3-D, omitted outputs),
 * MaxPool / AveragePool (MaxPoolGrad / AveragePoolGrad), GlobalAveragePool, GlobalMaxPool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "op_harness.h"

/* The attributes of the node under test (set before each gradcheck). */
typedef struct cfg {
  int nsp;                      /* ints attributes below have nsp (pads: 2*nsp) values when set */
  int64_t pads[6], strides[3], dil[3], kernel[3], opad[3], oshape[3];
  int has_pads, has_strides, has_dil, has_kernel, has_opad, has_oshape;
  int64_t group;
  const char *auto_pad;
  int ceil_mode, count_include_pad;
} cfg;
static cfg C;

static void set_attrs(wt_graph *g, int node) {
  int n = C.nsp;
  if (C.has_pads) wt_node_set_ints(g, node, "pads", C.pads, 2 * n);
  if (C.has_strides) wt_node_set_ints(g, node, "strides", C.strides, n);
  if (C.has_dil) wt_node_set_ints(g, node, "dilations", C.dil, n);
  if (C.has_kernel) wt_node_set_ints(g, node, "kernel_shape", C.kernel, n);
  if (C.has_opad) wt_node_set_ints(g, node, "output_padding", C.opad, n);
  if (C.has_oshape) wt_node_set_ints(g, node, "output_shape", C.oshape, n);
  if (C.group) wt_node_set_int(g, node, "group", C.group);
  if (C.auto_pad) wt_node_set_string(g, node, "auto_pad", C.auto_pad);
  if (C.ceil_mode) wt_node_set_int(g, node, "ceil_mode", 1);
  if (C.count_include_pad) wt_node_set_int(g, node, "count_include_pad", 1);
}

static gc_arg arg(int rank, const int64_t *dims) {
  gc_arg a = {.rank = rank};
  memcpy(a.dims, dims, sizeof(int64_t) * (size_t)rank);
  return a;
}
#define ARG(...) arg((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* Distinct values spaced 0.05 apart in shuffled order: max pooling stays away from ties. */
static float *distinct(int64_t n, unsigned seed) {
  float *v = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(i - n / 2) * 0.05f;
  for (int64_t i = n - 1; i > 0; i--) {
    seed = seed * 1103515245u + 12345u;
    int64_t j = (int64_t)((seed >> 8) % (unsigned)(i + 1));
    float t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
  return v;
}

static int conv_checks(void) {
  int f = 0;
  gc_arg a[3];
  /* basic 2-D with bias and pads */
  C = (cfg){.nsp = 2, .pads = {1, 1, 1, 1}, .has_pads = 1};
  a[0] = ARG(2, 3, 5, 5), a[1] = ARG(4, 3, 3, 3), a[2] = ARG(4);
  f += gradcheck("Conv 2-D pads 1 + bias", "Conv", NULL, 3, a, set_attrs);
  /* strides, asymmetric pads, dilations */
  C = (cfg){.nsp = 2, .pads = {0, 1, 1, 0}, .has_pads = 1, .strides = {2, 1}, .has_strides = 1,
            .dil = {2, 1}, .has_dil = 1};
  a[0] = ARG(1, 2, 7, 6), a[1] = ARG(3, 2, 2, 3), a[2] = ARG(3);
  f += gradcheck("Conv 2-D strides/asym pads/dilations", "Conv", NULL, 3, a, set_attrs);
  /* groups */
  C = (cfg){.nsp = 2, .group = 2, .pads = {1, 0, 1, 0}, .has_pads = 1};
  a[0] = ARG(2, 4, 5, 4), a[1] = ARG(6, 2, 3, 3), a[2] = ARG(6);
  f += gradcheck("Conv 2-D group 2", "Conv", NULL, 3, a, set_attrs);
  /* small grids (4x4, 2x2): images side by side per GEMM, a last block and dW chunk of one
   * image (N = 5), groups; then stride 2 with dilation */
  C = (cfg){.nsp = 2, .group = 2, .pads = {1, 1, 1, 1}, .has_pads = 1};
  a[0] = ARG(5, 2, 4, 4), a[1] = ARG(4, 1, 3, 3), a[2] = ARG(4);
  f += gradcheck("Conv small grid, 5 images, group 2", "Conv", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 2, .pads = {1, 0, 0, 1}, .has_pads = 1, .strides = {2, 2}, .has_strides = 1,
            .dil = {1, 2}, .has_dil = 1};
  a[0] = ARG(3, 2, 4, 5), a[1] = ARG(3, 2, 3, 2), a[2] = ARG(3);
  f += gradcheck("Conv 2x2 grid, 3 images, stride 2, dilation", "Conv", NULL, 3, a, set_attrs);
  /* depthwise (direct kernels): channel multiplier 2, stride 2 along rows wide enough for the
   * vector path; 5x5 with dilation and asymmetric pads */
  C = (cfg){.nsp = 2, .group = 2, .pads = {1, 1, 1, 1}, .has_pads = 1, .strides = {1, 2}, .has_strides = 1};
  a[0] = ARG(2, 2, 3, 18), a[1] = ARG(4, 1, 3, 3), a[2] = ARG(4);
  f += gradcheck("Conv depthwise x2, stride 2 wide rows", "Conv", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 2, .group = 3, .pads = {2, 1, 2, 3}, .has_pads = 1, .dil = {1, 2}, .has_dil = 1};
  a[0] = ARG(1, 3, 5, 9), a[1] = ARG(3, 1, 5, 5), a[2] = ARG(3);
  f += gradcheck("Conv depthwise 5x5 dilation", "Conv", NULL, 3, a, set_attrs);
  /* depthwise, vertical stride 2, stride 1 along rows (dX gathers) */
  C = (cfg){.nsp = 2, .group = 2, .pads = {1, 1, 0, 1}, .has_pads = 1, .strides = {2, 1}, .has_strides = 1};
  a[0] = ARG(2, 2, 5, 7), a[1] = ARG(2, 1, 3, 3), a[2] = ARG(2);
  f += gradcheck("Conv depthwise stride (2, 1)", "Conv", NULL, 3, a, set_attrs);
  /* depthwise 7x7, pad 3 (ConvNeXt's; dW one lane per tap) on a grid smaller than the kernel */
  C = (cfg){.nsp = 2, .group = 2, .pads = {3, 3, 3, 3}, .has_pads = 1};
  a[0] = ARG(2, 2, 4, 5), a[1] = ARG(2, 1, 7, 7), a[2] = ARG(2);
  f += gradcheck("Conv depthwise 7x7", "Conv", NULL, 3, a, set_attrs);
  /* depthwise, stride 2 */
  C = (cfg){.nsp = 2, .group = 3, .strides = {2, 2}, .has_strides = 1};
  a[0] = ARG(1, 3, 6, 5), a[1] = ARG(3, 1, 2, 2);
  f += gradcheck("Conv depthwise stride 2, no bias", "Conv", NULL, 2, a, set_attrs);
  /* 1-D */
  C = (cfg){.nsp = 1, .pads = {1, 2}, .has_pads = 1, .strides = {2}, .has_strides = 1};
  a[0] = ARG(2, 2, 9), a[1] = ARG(3, 2, 3), a[2] = ARG(3);
  f += gradcheck("Conv 1-D stride 2 pads 1,2", "Conv", NULL, 3, a, set_attrs);
  /* 3-D */
  C = (cfg){.nsp = 3, .pads = {1, 0, 1, 0, 1, 0}, .has_pads = 1, .dil = {1, 2, 1}, .has_dil = 1};
  a[0] = ARG(1, 2, 3, 5, 3), a[1] = ARG(2, 2, 2, 2, 2), a[2] = ARG(2);
  f += gradcheck("Conv 3-D pads/dilations", "Conv", NULL, 3, a, set_attrs);
  /* auto_pad SAME_UPPER / SAME_LOWER with stride 2 (odd total pad) */
  C = (cfg){.nsp = 2, .auto_pad = "SAME_UPPER", .strides = {2, 2}, .has_strides = 1};
  a[0] = ARG(1, 2, 5, 6), a[1] = ARG(2, 2, 3, 2), a[2] = ARG(2);
  f += gradcheck("Conv SAME_UPPER stride 2", "Conv", NULL, 3, a, set_attrs);
  C.auto_pad = "SAME_LOWER";
  f += gradcheck("Conv SAME_LOWER stride 2", "Conv", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 2, .auto_pad = "VALID"};
  f += gradcheck("Conv VALID", "Conv", NULL, 3, a, set_attrs);
  /* pointwise (no im2col) */
  C = (cfg){.nsp = 2};
  a[0] = ARG(2, 3, 4, 4), a[1] = ARG(5, 3, 1, 1), a[2] = ARG(5);
  f += gradcheck("Conv 1x1 pointwise", "Conv", NULL, 3, a, set_attrs);
  /* only some gradients: X constant (dX omitted), then W constant (dW omitted) */
  C = (cfg){.nsp = 2, .pads = {1, 1, 1, 1}, .has_pads = 1};
  a[0] = ARG(2, 2, 4, 4), a[1] = ARG(3, 2, 3, 3), a[2] = ARG(3);
  a[0].constant = 1;
  f += gradcheck("Conv dW + dB only (dX omitted)", "Conv", NULL, 3, a, set_attrs);
  a[0].constant = 0, a[1].constant = 1, a[2].constant = 1;
  f += gradcheck("Conv dX only", "Conv", NULL, 3, a, set_attrs);
  a[0].constant = 1;
  a[2].constant = 0;
  f += gradcheck("Conv dB only (dX, dW omitted)", "Conv", NULL, 3, a, set_attrs);
  a[0].constant = 0, a[1].constant = 0, a[2].absent = 1;
  f += gradcheck("Conv omitted bias input", "Conv", NULL, 3, a, set_attrs);
  return f;
}

static int conv_transpose_checks(void) {
  int f = 0;
  gc_arg a[3];
  C = (cfg){.nsp = 2, .pads = {1, 1, 1, 1}, .has_pads = 1, .strides = {2, 2}, .has_strides = 1,
            .opad = {1, 0}, .has_opad = 1};
  a[0] = ARG(1, 2, 3, 3), a[1] = ARG(2, 3, 3, 3), a[2] = ARG(3);
  f += gradcheck("ConvTranspose stride 2 pads output_padding", "ConvTranspose", NULL, 3, a,
                 set_attrs);
  C = (cfg){.nsp = 2, .group = 2};
  a[0] = ARG(2, 4, 3, 2), a[1] = ARG(4, 1, 2, 2), a[2] = ARG(2);
  f += gradcheck("ConvTranspose group 2", "ConvTranspose", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 1, .dil = {2}, .has_dil = 1, .strides = {3}, .has_strides = 1,
            .pads = {0, 1}, .has_pads = 1};
  a[0] = ARG(2, 2, 4), a[1] = ARG(2, 3, 2);
  f += gradcheck("ConvTranspose 1-D dilation stride 3", "ConvTranspose", NULL, 2, a, set_attrs);
  C = (cfg){.nsp = 2, .strides = {2, 2}, .has_strides = 1, .oshape = {6, 5}, .has_oshape = 1};
  a[0] = ARG(1, 1, 3, 3), a[1] = ARG(1, 2, 3, 3), a[2] = ARG(2);
  f += gradcheck("ConvTranspose output_shape", "ConvTranspose", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 2, .strides = {2, 2}, .has_strides = 1, .auto_pad = "SAME_LOWER"};
  f += gradcheck("ConvTranspose SAME_LOWER", "ConvTranspose", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 3, .strides = {1, 2, 1}, .has_strides = 1};
  a[0] = ARG(1, 2, 2, 2, 3), a[1] = ARG(2, 2, 2, 1, 2), a[2] = ARG(2);
  f += gradcheck("ConvTranspose 3-D", "ConvTranspose", NULL, 3, a, set_attrs);
  C = (cfg){.nsp = 2};
  a[0] = ARG(2, 3, 3, 3), a[1] = ARG(3, 2, 1, 1), a[2] = ARG(2);
  f += gradcheck("ConvTranspose 1x1 pointwise", "ConvTranspose", NULL, 3, a, set_attrs);
  a[0].constant = 1;
  f += gradcheck("ConvTranspose dW + dB only", "ConvTranspose", NULL, 3, a, set_attrs);
  return f;
}

static int pool_check(const char *label, const char *op, gc_arg x) {
  float *data = NULL;
  if (op[0] == 'M' || strcmp(op, "GlobalMaxPool") == 0) {
    data = distinct(wt_shape_numel(x.rank, x.dims), 99u + (unsigned)x.dims[x.rank - 1]);
    x.data = data;
  }
  int f = gradcheck(label, op, NULL, 1, &x, set_attrs);
  free(data);
  return f;
}

/* Without a declared dX shape (see pool.c), MaxPoolGrad / AveragePoolGrad guess X's spatial
 * size from dY's when strides make it ambiguous: these shapes are the guessed ones. */
static int pool_checks(void) {
  int f = 0;
  C = (cfg){.nsp = 2, .kernel = {2, 2}, .has_kernel = 1, .strides = {2, 2}, .has_strides = 1};
  f += pool_check("MaxPool 2x2 stride 2", "MaxPool", ARG(2, 3, 6, 4));
  C = (cfg){.nsp = 2, .kernel = {3, 3}, .has_kernel = 1, .pads = {1, 1, 1, 1}, .has_pads = 1};
  f += pool_check("MaxPool 3x3 pads 1 (overlapping)", "MaxPool", ARG(1, 2, 5, 5));
  C = (cfg){.nsp = 1, .kernel = {3}, .has_kernel = 1, .strides = {2}, .has_strides = 1,
            .dil = {2}, .has_dil = 1};
  f += pool_check("MaxPool 1-D dilation", "MaxPool", ARG(2, 2, 10));
  C = (cfg){.nsp = 3, .kernel = {2, 2, 2}, .has_kernel = 1, .strides = {2, 1, 2}, .has_strides = 1};
  f += pool_check("MaxPool 3-D", "MaxPool", ARG(1, 2, 4, 3, 4));
  C = (cfg){.nsp = 2, .kernel = {3, 3}, .has_kernel = 1, .strides = {2, 2}, .has_strides = 1,
            .ceil_mode = 1};
  f += pool_check("MaxPool ceil_mode", "MaxPool", ARG(1, 1, 6, 6));
  C = (cfg){.nsp = 2, .kernel = {3, 2}, .has_kernel = 1, .auto_pad = "SAME_UPPER"};
  f += pool_check("MaxPool SAME_UPPER", "MaxPool", ARG(1, 2, 4, 5));

  C = (cfg){.nsp = 2, .kernel = {2, 2}, .has_kernel = 1, .strides = {2, 2}, .has_strides = 1};
  f += pool_check("AveragePool 2x2 stride 2", "AveragePool", ARG(2, 3, 4, 6));
  C = (cfg){.nsp = 2, .kernel = {3, 3}, .has_kernel = 1, .pads = {1, 1, 1, 1}, .has_pads = 1};
  f += pool_check("AveragePool pads 1 exclude pad", "AveragePool", ARG(1, 2, 5, 4));
  C.count_include_pad = 1;
  f += pool_check("AveragePool pads 1 count_include_pad", "AveragePool", ARG(1, 2, 5, 4));
  C = (cfg){.nsp = 2, .kernel = {3, 3}, .has_kernel = 1, .strides = {2, 2}, .has_strides = 1,
            .pads = {0, 1, 1, 0}, .has_pads = 1, .ceil_mode = 1, .count_include_pad = 1};
  f += pool_check("AveragePool ceil_mode asym pads include pad", "AveragePool", ARG(1, 1, 6, 6));
  C = (cfg){.nsp = 1, .kernel = {2}, .has_kernel = 1, .dil = {3}, .has_dil = 1};
  f += pool_check("AveragePool 1-D dilation", "AveragePool", ARG(2, 2, 7));
  C = (cfg){.nsp = 3, .kernel = {2, 3, 2}, .has_kernel = 1, .pads = {1, 1, 0, 0, 1, 1},
            .has_pads = 1, .strides = {1, 2, 2}, .has_strides = 1};
  f += pool_check("AveragePool 3-D", "AveragePool", ARG(1, 2, 3, 6, 4));
  C = (cfg){.nsp = 2, .kernel = {3, 3}, .has_kernel = 1, .strides = {2, 2}, .has_strides = 1,
            .auto_pad = "SAME_LOWER"};
  f += pool_check("AveragePool SAME_LOWER", "AveragePool", ARG(1, 1, 6, 4));

  C = (cfg){0};
  f += pool_check("GlobalAveragePool 2-D", "GlobalAveragePool", ARG(2, 3, 4, 5));
  f += pool_check("GlobalAveragePool 1-D", "GlobalAveragePool", ARG(2, 2, 7));
  f += pool_check("GlobalAveragePool 3-D", "GlobalAveragePool", ARG(1, 2, 2, 3, 2));
  f += pool_check("GlobalMaxPool 2-D", "GlobalMaxPool", ARG(2, 3, 4, 5));
  f += pool_check("GlobalMaxPool 3-D", "GlobalMaxPool", ARG(1, 2, 2, 3, 2));
  return f;
}

/* MaxPoolGrad's kernel directly: scatter-add through indices, -1 skipped, bad index an error. */
static void maxpool_grad_unit(void) {
  wt_graph *g = wt_graph_new();
  int node = harness_node(g, "MaxPoolGrad", "", 2, 1);
  wt_node_set_ints(g, node, "kernel_shape", (int64_t[]){2, 2}, 2);
  wt_node_set_ints(g, node, "strides", (int64_t[]){1, 1}, 2);
  float dy[4] = {1, 2, 3, 4};
  int64_t ind[4] = {4, 4, -1, 8}; /* dX [1, 1, 3, 3] */
  wt_tensor in[2] = {harness_f32(4, (int64_t[]){1, 1, 2, 2}, dy),
                     harness_i64(4, (int64_t[]){1, 1, 2, 2}, ind)};
  wt_tensor out[1];
  CHECK(harness_run(g, node, 17, 2, in, 1, out) == WT_OK);
  CHECK(out[0].rank == 4 && out[0].dims[2] == 3 && out[0].dims[3] == 3);
  const float *dx = out[0].data;
  float want[9] = {0, 0, 0, 0, 3, 0, 0, 0, 4};
  for (int i = 0; i < 9; i++) CHECK(dx[i] == want[i]);
  harness_free(1, out);
  ind[0] = 9;
  CHECK(harness_run(g, node, 17, 2, in, 1, out) == WT_ERR_RUNTIME);
  harness_free(1, out);
  wt_graph_free(g);
}

/* MaxPool's Indices (the fast interior path and the bounds-checked border path) against its
 * own values: y[i] == x[Indices[i]], and y equal to the Indices-free MaxPool's. */
static void maxpool_indices_unit(void) {
  static const struct {
    int nsp;
    int64_t dims[5], k[3], s[3], d[3], pads[6];
  } cases[] = {
      {2, {2, 3, 8, 9}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {2, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {2, {1, 1, 9, 11}, {2, 3}, {1, 2}, {2, 2}, {1, 2, 0, 1}},
      {1, {2, 2, 12}, {4}, {3}, {1}, {2, 1}},
      {3, {1, 2, 4, 5, 6}, {2, 2, 3}, {2, 1, 2}, {1, 1, 1}, {0, 1, 1, 1, 0, 1}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int rank = cases[c].nsp + 2;
    int64_t n = wt_shape_numel(rank, cases[c].dims);
    float *x = distinct(n, 7u + (unsigned)c);
    wt_tensor in[1] = {harness_f32(rank, cases[c].dims, x)}, o1[2], o2[1];
    wt_graph *g = wt_graph_new();
    int node = harness_node(g, "MaxPool", "", 1, 2), node1 = harness_node(g, "MaxPool", "", 1, 1);
    for (int k = 0; k < 2; k++) {
      int nd = k ? node1 : node;
      wt_node_set_ints(g, nd, "kernel_shape", cases[c].k, cases[c].nsp);
      wt_node_set_ints(g, nd, "strides", cases[c].s, cases[c].nsp);
      wt_node_set_ints(g, nd, "dilations", cases[c].d, cases[c].nsp);
      wt_node_set_ints(g, nd, "pads", cases[c].pads, 2 * cases[c].nsp);
    }
    CHECK_OK(harness_run(g, node, 17, 1, in, 2, o1));
    CHECK_OK(harness_run(g, node1, 17, 1, in, 1, o2));
    int64_t ny = wt_numel(&o1[0]);
    const float *y = o1[0].data, *y1 = o2[0].data;
    const int64_t *ind = o1[1].data;
    for (int64_t i = 0; i < ny; i++) {
      CHECK(ind[i] >= 0 && ind[i] < n);
      if (ind[i] >= 0 && ind[i] < n) CHECK(x[ind[i]] == y[i]);
      CHECK(y[i] == y1[i]);
    }
    harness_free(2, o1);
    harness_free(1, o2);
    wt_graph_free(g);
    free(x);
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* progress survives a sanitizer abort */
  int failed = conv_checks();
  failed += conv_transpose_checks();
  failed += pool_checks();
  CHECK(failed == 0);
  maxpool_grad_unit();
  maxpool_indices_unit();
  CHECK_DONE();
}
