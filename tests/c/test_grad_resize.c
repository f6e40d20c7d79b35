/* Finite-difference checks of the Resize / Upsample gradient rule (through com.microsoft
 * ResizeGrad) over modes, coordinate transforms, scales vs sizes, 1-D / 2-D / 3-D resizes,
 * opsets 10-18; plus ResizeGrad run directly against ONNX Runtime's own test values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "op_harness.h"

/* A floats attribute, given in hundredths. */
/* Float attributes written as hundredths (e.g. scales {150, 200} -> {1.5f, 2.0f}). */
static void attr_floats100(const char *name, int n, const int64_t *v) {
  float f[8];
  for (int i = 0; i < n && i < 8; i++) f[i] = (float)v[i] / 100.0f;
  gc_attr_floats(name, n, f);
}

static int g_failed;
static void gc(const char *label, const char *op, int opset, int n_in, const gc_arg *args) {
  gc_opts o = {.opset = opset};
  g_failed += gradcheck(label, op, &o, n_in, args, gc_set_attrs);
}

static const gc_arg ABSENT = {.absent = 1};

static gc_arg scales_arg(int n, const float *s) {
  gc_arg a = {.rank = 1, .dims = {n}, .data = s, .constant = 1};
  return a;
}
static gc_arg sizes_arg(int n, const int64_t *s) {
  gc_arg a = {.dtype = WT_INT64, .rank = 1, .dims = {n}, .data = s, .constant = 1};
  return a;
}

static void resize_checks(void) {
  static const float up2[4] = {1, 1, 2, 2}, up15[4] = {1, 1, 1.5f, 1.7f}, down[4] = {1, 1, 0.6f, 0.5f};
  static const int64_t sz[4] = {2, 2, 5, 3}, sz1[3] = {2, 3, 7};
  gc_arg x4 = {.rank = 4, .dims = {2, 2, 3, 4}};
  gc_arg a[4];
  const char *coords[5] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                           "tf_half_pixel_for_nearest"};
  const char *modes[3] = {"nearest", "linear", "cubic"};
  char label[160];
  for (int m = 0; m < 3; m++)
    for (int cidx = 0; cidx < 5; cidx++) {
      if (cidx == 4 && m != 0) continue;
      gc_attrs_reset();
      gc_attr_string("mode", modes[m]);
      gc_attr_string("coordinate_transformation_mode", coords[cidx]);
      a[0] = x4;
      a[1] = ABSENT;
      a[2] = scales_arg(4, up15);
      snprintf(label, sizeof label, "Resize-13 %s %s scales 1.5x1.7", modes[m], coords[cidx]);
      gc(label, "Resize", 13, 3, a);
      a[2] = scales_arg(4, down);
      snprintf(label, sizeof label, "Resize-13 %s %s downsample scales", modes[m], coords[cidx]);
      gc(label, "Resize", 13, 3, a);
      a[2] = (gc_arg){.rank = 1, .dims = {0}, .constant = 1, .data = up2};
      a[3] = sizes_arg(4, sz);
      snprintf(label, sizeof label, "Resize-13 %s %s sizes", modes[m], coords[cidx]);
      gc(label, "Resize", 13, 4, a);
    }
  const char *nmodes[4] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (int k = 0; k < 4; k++) {
    gc_attrs_reset();
    gc_attr_string("mode", "nearest");
    gc_attr_string("nearest_mode", nmodes[k]);
    a[0] = x4;
    a[1] = ABSENT;
    a[2] = scales_arg(4, up15);
    snprintf(label, sizeof label, "Resize-13 nearest_mode %s", nmodes[k]);
    gc(label, "Resize", 13, 3, a);
  }
  /* cubic with exclude_outside and another A. */
  gc_attrs_reset();
  gc_attr_string("mode", "cubic");
  gc_attr_float("cubic_coeff_a", -0.5f);
  gc_attr_int("exclude_outside", 1);
  a[0] = x4;
  a[1] = ABSENT;
  a[2] = scales_arg(4, up15);
  gc("Resize-13 cubic A=-0.5 exclude_outside", "Resize", 13, 3, a);
  /* tf_crop_and_resize with a roi reaching outside: extrapolated points get no gradient. */
  static const float roi[8] = {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
  gc_attrs_reset();
  gc_attr_string("mode", "linear");
  gc_attr_string("coordinate_transformation_mode", "tf_crop_and_resize");
  gc_attr_float("extrapolation_value", 3.0f);
  a[0] = x4;
  a[1] = (gc_arg){.rank = 1, .dims = {8}, .data = roi, .constant = 1};
  a[2] = (gc_arg){.rank = 1, .dims = {0}, .constant = 1, .data = up2};
  a[3] = sizes_arg(4, sz);
  gc("Resize-13 linear tf_crop_and_resize roi outside", "Resize", 13, 4, a);
  /* 1-D and 3-D (N-D) linear. */
  gc_attrs_reset();
  gc_attr_string("mode", "linear");
  a[0] = (gc_arg){.rank = 3, .dims = {2, 3, 4}};
  a[1] = ABSENT;
  a[2] = (gc_arg){.rank = 1, .dims = {0}, .constant = 1, .data = up2};
  a[3] = sizes_arg(3, sz1);
  gc("Resize-13 linear 1-D (last axis only)", "Resize", 13, 4, a);
  static const float s3[5] = {1, 1, 1.5f, 2, 0.7f};
  a[0] = (gc_arg){.rank = 5, .dims = {1, 2, 3, 2, 4}};
  a[2] = scales_arg(5, s3);
  gc("Resize-13 linear 3-D", "Resize", 13, 3, a);
  /* opset 11 (roi required, empty), opset 10 (X, scales), opset 18 (axes). */
  gc_attrs_reset();
  gc_attr_string("mode", "linear");
  gc_attr_string("coordinate_transformation_mode", "align_corners");
  a[0] = x4;
  a[1] = (gc_arg){.rank = 1, .dims = {0}, .constant = 1, .data = up2};
  a[2] = scales_arg(4, up15);
  gc("Resize-11 linear align_corners empty roi", "Resize", 11, 3, a);
  gc_attrs_reset();
  gc_attr_string("mode", "linear");
  a[1] = scales_arg(4, up15);
  gc("Resize-10 linear (asymmetric)", "Resize", 10, 2, a);
  gc_attrs_reset();
  gc_attr_string("mode", "nearest");
  gc("Resize-10 nearest (floor)", "Resize", 10, 2, a);
  static const int64_t axes[2] = {3, -2};
  static const float s2[2] = {1.5f, 2.0f};
  gc_attrs_reset();
  gc_attr_string("mode", "linear");
  gc_attr_ints("axes", 2, axes);
  a[0] = x4;
  a[1] = ABSENT;
  a[2] = scales_arg(2, s2);
  gc("Resize-18 linear axes [3, -2]", "Resize", 18, 3, a);
}

static void upsample_checks(void) {
  static const float s[4] = {1, 1, 2, 3};
  gc_arg a[2] = {{.rank = 4, .dims = {1, 2, 3, 2}}, scales_arg(4, s)};
  gc_attrs_reset();
  gc_attr_string("mode", "nearest");
  gc("Upsample-9 nearest", "Upsample", 9, 2, a);
  gc_attrs_reset();
  gc_attr_string("mode", "linear");
  gc("Upsample-9 linear", "Upsample", 9, 2, a);
  static const int64_t s100[4] = {100, 100, 200, 300};
  gc_attrs_reset();
  gc_attr_string("mode", "nearest");
  attr_floats100("scales", 4, s100);
  gc("Upsample-7 nearest (scales attribute)", "Upsample", 7, 1, a);
}

/* ResizeGrad run directly on ONNX Runtime's ResizeGrad test cases (dY = 1). */
static void resize_grad_ort_values(void) {
  static const float ac_sizes[16] = {2.9388f, 3.9184f, 3.9184f, 2.9388f, 3.9184f, 5.2245f,
                                     5.2245f, 3.9184f, 3.9184f, 5.2245f, 5.2245f, 3.9184f,
                                     2.9388f, 3.9184f, 3.9184f, 2.9388f};
  static const float hp_scales[16] = {2.7128f, 2.9550f, 2.7612f, 1.4533f, 2.9550f, 3.2189f,
                                       3.0078f, 1.5830f, 2.7612f, 3.0078f, 2.8106f, 1.4792f,
                                       1.4533f, 1.5830f, 1.4792f, 0.7785f};
  static const float ac_scales[16] = {1.96f, 2.24f, 2.24f, 1.96f, 2.24f, 2.56f, 2.56f, 2.24f,
                                      2.24f, 2.56f, 2.56f, 2.24f, 1.96f, 2.24f, 2.24f, 1.96f};
  struct {
    const char *coord;
    int64_t out;
    int with_scales;
    const float *expect; /* NULL: all 4 */
  } cases[4] = {{"half_pixel", 8, 0, NULL},
                {"align_corners", 8, 0, ac_sizes},
                {"half_pixel", 6, 1, hp_scales},
                /* ORT's CUDA kernel takes (in - 1) / (out - 1) here, ONNX's reference (and so
                 * webtrain's forward) (in - 1) / (scale * in - 1): only the total is shared. */
                {"align_corners", 6, 1, NULL}};
  (void)ac_scales;
  for (int k = 0; k < 4; k++) {
    int64_t dyd[4] = {1, 2, cases[k].out, cases[k].out}, xd[4] = {1, 2, 4, 4}, sd[1] = {4}, rd[1] = {0};
    float dy[128], x[32], scales[4] = {1, 1, 1.7f, 1.7f}, roi[1] = {0};
    for (int i = 0; i < 128; i++) dy[i] = 1;
    for (int i = 0; i < 32; i++) x[i] = 1;
    wt_graph *g = wt_graph_new();
    int n_in = cases[k].with_scales ? 4 : 2;
    int node = harness_node(g, "ResizeGrad", "com.microsoft", n_in, 1);
    wt_node_set_string(g, node, "mode", "linear");
    wt_node_set_string(g, node, "coordinate_transformation_mode", cases[k].coord);
    wt_tensor in[4] = {harness_f32(4, dyd, dy), harness_f32(4, xd, x), harness_f32(1, rd, roi),
                       harness_f32(1, sd, scales)}, out[1];
    CHECK_OK(harness_run(g, node, 1, n_in, in, 1, out));
    const float *y = out[0].data;
    double total = 0;
    for (int i = 0; y && i < 32; i++) {
      total += y[i];
      if (k == 3) continue;
      float e = cases[k].expect ? cases[k].expect[i % 16] : 4.0f;
      CHECK_NEAR(y[i], e, 1e-3);
    }
    CHECK_NEAR(total, 2.0 * (double)(cases[k].out * cases[k].out), 1e-3);
    harness_free(1, out);
    wt_graph_free(g);
  }
}

int main(void) {
  resize_checks();
  upsample_checks();
  resize_grad_ort_values();
  CHECK(g_failed == 0);
  CHECK_DONE();
}
