/* Finite-difference checks of the shape and data family gradient rules (Reshape Flatten Squeeze
 * Unsqueeze Transpose Expand Tile Concat Split Slice Pad Trilu Gather GatherElements GatherND
 * ScatterElements ScatterND) and unit tests of the com.microsoft gradient ops they emit
 * (SliceGrad GatherGrad GatherElementsGrad GatherNDGrad Trilu): values and run-time bounds checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "check.h"
#include "gradcheck.h"
#include "io/onnx_io.h"
#include "op_harness.h"
#include "shape/shape.h"
#include "webtrain.h"

#define F(r, ...) {.rank = r, .dims = {__VA_ARGS__}}
#define I64(n, ...) {.dtype = WT_INT64, .rank = 1, .dims = {n}, .data = (int64_t[]){__VA_ARGS__}}

static int g_int;                 /* a single int attribute value for the attr callbacks */
static const char *g_name;
static const int64_t *g_ints;
static int g_n;
static void set_int(wt_graph *g, int node) { wt_node_set_int(g, node, g_name, g_int); }
static void set_ints(wt_graph *g, int node) { wt_node_set_ints(g, node, g_name, g_ints, g_n); }

static int check1(const char *label, const char *op, int opset, int n_in, const gc_arg *args,
                  gc_attrs_fn fn) {
  gc_opts o = {.opset = opset};
  return gradcheck(label, op, &o, n_in, args, fn);
}

static int views(void) {
  int f = 0;
  gc_arg r[2] = {F(3, 2, 3, 4), I64(2, 6, -1)};
  f += check1("Reshape", "Reshape", 17, 2, r, NULL);
  gc_arg x[1] = {F(3, 2, 3, 4)};
  g_name = "axis";
  g_int = -1;
  f += check1("Flatten axis -1", "Flatten", 17, 1, x, set_int);
  gc_arg sq[2] = {F(4, 2, 1, 3, 1), I64(1, -1)};
  f += check1("Squeeze axes input", "Squeeze", 17, 2, sq, NULL);
  f += check1("Squeeze no axes", "Squeeze", 17, 1, sq, NULL);
  g_name = "axes";
  g_ints = (int64_t[]){1};
  g_n = 1;
  f += check1("Squeeze opset 11 attribute", "Squeeze", 11, 1, sq, set_ints);
  gc_arg us[2] = {F(2, 2, 3), I64(2, 0, -1)};
  f += check1("Unsqueeze", "Unsqueeze", 17, 2, us, NULL);
  g_ints = (int64_t[]){0, 3};
  g_n = 2;
  f += check1("Unsqueeze opset 11", "Unsqueeze", 11, 1, us, set_ints);
  g_name = "perm";
  g_ints = (int64_t[]){2, 0, 1};
  g_n = 3;
  f += check1("Transpose perm", "Transpose", 17, 1, x, set_ints);
  f += check1("Transpose default", "Transpose", 17, 1, x, NULL);
  return f;
}

static int expand_tile(void) {
  int f = 0;
  gc_arg e1[2] = {F(2, 3, 1), I64(3, 2, 3, 4)};
  f += check1("Expand new and size-1 axes", "Expand", 17, 2, e1, NULL);
  gc_arg e2[2] = {F(3, 2, 1, 4), I64(2, 3, 1)};
  f += check1("Expand shape smaller than input", "Expand", 17, 2, e2, NULL);
  gc_arg t1[2] = {F(2, 2, 3), I64(2, 2, 3)};
  f += check1("Tile", "Tile", 17, 2, t1, NULL);
  gc_arg t2[2] = {F(3, 2, 1, 3), I64(3, 1, 4, 1)};
  f += check1("Tile 3-D", "Tile", 11, 2, t2, NULL);
  return f;
}

static void split11(wt_graph *g, int node) {
  wt_node_set_int(g, node, "axis", -1);
  wt_node_set_ints(g, node, "split", (int64_t[]){1, 4, 1}, 3);
}

static int concat_split(void) {
  int f = 0;
  gc_arg c3[3] = {F(2, 2, 3), F(2, 2, 1), F(2, 2, 4)};
  g_name = "axis";
  g_int = -1;
  f += check1("Concat 3 inputs axis -1", "Concat", 17, 3, c3, set_int);
  f += check1("Concat opset 11", "Concat", 11, 3, c3, set_int);
  gc_arg c2[2] = {F(3, 1, 2, 2), {.rank = 3, .dims = {2, 2, 2}, .constant = 1}};
  g_int = 0;
  f += check1("Concat with a constant", "Concat", 17, 2, c2, set_int);
  gc_arg s1[2] = {F(2, 5, 2), I64(2, 2, 3)};
  gc_opts o = {.opset = 17, .n_out = 2};
  f += gradcheck("Split sizes input", "Split", &o, 2, s1, NULL);
  gc_arg s2[1] = {F(2, 2, 6)};
  o.n_out = 3;
  g_int = 1;
  f += gradcheck("Split equal axis 1", "Split", &o, 1, s2, set_int);
  o.opset = 11;
  f += gradcheck("Split opset 11 attribute", "Split", &o, 1, s2, split11);
  return f;
}

static void slice9(wt_graph *g, int node) {
  wt_node_set_ints(g, node, "starts", (int64_t[]){1, 0}, 2);
  wt_node_set_ints(g, node, "ends", (int64_t[]){100, -1}, 2);
  wt_node_set_ints(g, node, "axes", (int64_t[]){0, 2}, 2);
}
static void pad9(wt_graph *g, int node) { wt_node_set_ints(g, node, "pads", (int64_t[]){1, 0, 0, 2}, 4); }

static int region(void) {
  int f = 0;
  gc_arg s1[5] = {F(3, 3, 4, 5), I64(2, -1, 1), I64(2, -100, 4), I64(2, -1, 1), I64(2, -2, 2)};
  f += check1("Slice negative step, axes, steps", "Slice", 17, 5, s1, NULL);
  f += check1("Slice starts/ends only", "Slice", 17, 3, s1, NULL);
  f += check1("Slice opset 9", "Slice", 9, 1, s1, slice9);
  gc_arg p1[2] = {F(2, 2, 3), I64(4, 1, 0, 2, 1)};
  f += check1("Pad constant", "Pad", 17, 2, p1, NULL);
  gc_arg p2[2] = {F(2, 3, 4), I64(4, -1, 1, 0, -2)};
  f += check1("Pad negative pads", "Pad", 17, 2, p2, NULL);
  gc_arg p3[3] = {F(2, 2, 3), I64(4, 1, 0, 2, 1), F(0, 0)};
  f += check1("Pad differentiable constant_value", "Pad", 17, 3, p3, NULL);
  gc_arg p4[4] = {F(3, 2, 3, 2), I64(2, 1, 2), {.absent = 1}, I64(1, -2)};
  f += check1("Pad axes opset 18", "Pad", 18, 4, p4, NULL);
  f += check1("Pad opset 9", "Pad", 9, 1, p1, pad9);
  gc_arg tr[2] = {F(3, 2, 3, 4), {.dtype = WT_INT64, .rank = 0, .data = (int64_t[]){1}}};
  f += check1("Trilu upper k=1", "Trilu", 17, 2, tr, NULL);
  g_name = "upper";
  g_int = 0;
  f += check1("Trilu lower", "Trilu", 17, 1, tr, set_int);
  gc_opts o = {.domain = "com.microsoft"};
  f += gradcheck("com.microsoft Trilu lower", "Trilu", &o, 1, tr, set_int);
  return f;
}

static int indexed(void) {
  int f = 0;
  gc_arg g1[2] = {F(2, 4, 3), {.dtype = WT_INT64, .rank = 2, .dims = {2, 3}, .data = (int64_t[]){0, 3, -1, 1, 1, 0}}};
  f += check1("Gather axis 0, repeated and negative indices", "Gather", 17, 2, g1, NULL);
  gc_arg g2[2] = {F(3, 2, 4, 3), {.dtype = WT_INT32, .rank = 1, .dims = {3}, .data = (int32_t[]){2, -4, 2}}};
  g_name = "axis";
  g_int = 1;
  f += check1("Gather axis 1 int32 indices", "Gather", 17, 2, g2, set_int);
  gc_arg g3[2] = {F(1, 5), {.dtype = WT_INT64, .rank = 0, .data = (int64_t[]){3}}};
  f += check1("Gather scalar index", "Gather", 17, 2, g3, NULL);
  gc_arg ge[2] = {F(2, 3, 3), {.dtype = WT_INT64, .rank = 2, .dims = {2, 3}, .data = (int64_t[]){0, 2, 2, -1, 0, 2}}};
  f += check1("GatherElements axis 1", "GatherElements", 17, 2, ge, set_int);
  g_int = 0;
  gc_arg ge0[2] = {F(2, 3, 3), {.dtype = WT_INT64, .rank = 2, .dims = {2, 2}, .data = (int64_t[]){2, 0, 2, 1}}};
  f += check1("GatherElements axis 0 smaller indices", "GatherElements", 17, 2, ge0, set_int);
  gc_arg gn[2] = {F(3, 2, 3, 2), {.dtype = WT_INT64, .rank = 2, .dims = {3, 2}, .data = (int64_t[]){0, 1, 1, 2, 0, 1}}};
  f += check1("GatherND", "GatherND", 17, 2, gn, NULL);
  gc_arg gb[2] = {F(3, 2, 3, 2), {.dtype = WT_INT64, .rank = 3, .dims = {2, 2, 1}, .data = (int64_t[]){2, 2, 0, -1}}};
  g_name = "batch_dims";
  g_int = 1;
  f += check1("GatherND batch_dims 1", "GatherND", 17, 2, gb, set_int);
  gc_arg se[3] = {F(2, 3, 4), {.dtype = WT_INT64, .rank = 2, .dims = {2, 2}, .data = (int64_t[]){3, 0, 1, -1}}, F(2, 2, 2)};
  g_name = "axis";
  g_int = 1;
  f += check1("ScatterElements axis 1", "ScatterElements", 17, 3, se, set_int);
  f += check1("Scatter (opset 10 alias)", "Scatter", 10, 3, se, set_int);
  gc_arg sn[3] = {F(2, 3, 2), {.dtype = WT_INT64, .rank = 2, .dims = {2, 1}, .data = (int64_t[]){2, 0}}, F(2, 2, 2)};
  f += check1("ScatterND", "ScatterND", 17, 3, sn, NULL);
  return f;
}

static void reduction_add(wt_graph *g, int node) { wt_node_set_string(g, node, "reduction", "add"); }

static int scatter_add(void) {
  gc_arg se[3] = {F(2, 3, 2), {.dtype = WT_INT64, .rank = 2, .dims = {2, 2}, .data = (int64_t[]){1, 1, 1, 0}}, F(2, 2, 2)};
  int f = check1("ScatterElements reduction add", "ScatterElements", 17, 3, se, reduction_add);
  gc_arg sn[3] = {F(2, 3, 2), {.dtype = WT_INT64, .rank = 2, .dims = {2, 1}, .data = (int64_t[]){1, 1}}, F(2, 2, 2)};
  f += check1("ScatterND reduction add", "ScatterND", 17, 3, sn, reduction_add);
  return f;
}

/* ---- symbolic dims: rules must not bake in sizes the model leaves open ----------------- */

/* Declared input: dims with -1 where sym[d] names a symbolic dim. */
typedef struct sym_in {
  int rank;
  int64_t dims[8];
  const char *sym[8];
} sym_in;

/* loss = sum over outputs in use_mask of ReduceSum(Exp(Y_j)) (Exp: no broadcasting analysis of
 * sizes the output leaves unnamed), with inputs declared symbolic;
 * runs at the actual sizes and compares every gradient element with a central difference.
 * Outputs not in use_mask get no gradient (the rule must supply zeros for them). */
static const int64_t *g_const; /* an int64 1-D constant appended as the last input, or NULL */
static int g_const_n;

static int symcheck(const char *label, const char *op, int opset, int n_in, const sym_in *decl,
                    const int64_t (*actual)[8], int n_out, unsigned use_mask, gc_attrs_fn attrs) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", opset);
  int ins[8], outs[8], terms[8], nt = 0, grads[8], failed = 0;
  char name[32];
  for (int i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "x%d", i);
    ins[i] = wt_graph_value(g, name);
    wt_value *v = &g->values[ins[i]];
    v->dtype = WT_FLOAT;
    int64_t dims[WT_MAX_RANK];
    for (int d = 0; d < decl[i].rank; d++) dims[d] = decl[i].sym[d] ? -1 : decl[i].dims[d];
    wt_value_set_shape(g, ins[i], decl[i].rank, dims);
    for (int d = 0; d < decl[i].rank; d++) wt_value_set_dim_param(g, ins[i], d, decl[i].sym[d]);
    wt_graph_add_input(g, ins[i]);
  }
  for (int j = 0; j < n_out; j++) {
    snprintf(name, sizeof name, "y%d", j);
    outs[j] = wt_graph_value(g, name);
  }
  int n_node_in = n_in;
  if (g_const) {
    int c = ins[n_node_in++] = wt_graph_value(g, "const");
    wt_value *v = &g->values[c];
    v->dtype = WT_INT64;
    wt_value_set_shape(g, c, 1, (const int64_t[]){g_const_n});
    v->nbytes = sizeof(int64_t) * (size_t)g_const_n;
    v->data = malloc(v->nbytes);
    memcpy(v->data, g_const, v->nbytes);
    v->flags |= WT_VALUE_INITIALIZER;
  }
  int node = wt_graph_add_node(g, op, "", "op", n_node_in, ins, n_out, outs);
  if (attrs) attrs(g, node);
  for (int j = 0; j < n_out; j++) {
    if (!(use_mask >> j & 1)) continue;
    snprintf(name, sizeof name, "sq%d", j);
    int sq = wt_graph_value(g, name);
    wt_graph_add_node(g, "Exp", "", name, 1, &outs[j], 1, &sq);
    snprintf(name, sizeof name, "s%d", j);
    terms[nt] = wt_graph_value(g, name);
    int rs = wt_graph_add_node(g, "ReduceSum", "", name, 1, &sq, 1, &terms[nt]);
    wt_node_set_int(g, rs, "keepdims", 0);
    nt++;
  }
  int loss = wt_graph_value(g, "loss");
  wt_graph_add_node(g, "Sum", "", "loss_sum", nt, terms, 1, &loss);
  wt_session *s = NULL;
  float *xs[8] = {0};
  int64_t ns[8];
  if (wt_graph_infer_shapes(g) || wt_autodiff(g, loss, n_in, ins, grads)) {
    fprintf(stderr, "%s: %s\n", label, wt_error_message());
    failed = 1;
    goto out;
  }
  wt_graph_add_output(g, loss);
  for (int i = 0; i < n_in; i++) wt_graph_add_output(g, grads[i]);
  uint8_t *bytes;
  size_t len;
  if (wt_onnx_write(g, &bytes, &len) || wt_session_create(bytes, len, &s)) {
    fprintf(stderr, "%s: %s\n", label, wt_last_error());
    failed = 1;
    goto out;
  }
  free(bytes);
  for (int i = 0; i < n_in; i++) {
    ns[i] = wt_shape_numel(decl[i].rank, actual[i]);
    xs[i] = malloc(sizeof(float) * (size_t)(ns[i] ? ns[i] : 1));
    for (int64_t e = 0; e < ns[i]; e++) xs[i][e] = (float)((e * 37 + i * 11) % 17) / 16.0f - 0.5f;
  }
  for (int i = 0; i < n_in && !failed; i++) {
    for (int k = 0; k < n_in; k++) wt_session_set_input(s, k, WT_FLOAT, decl[k].rank, actual[k], xs[k]);
    if (wt_session_run(s)) {
      fprintf(stderr, "%s: %s\n", label, wt_last_error());
      failed = 1;
      break;
    }
    int32_t dt, rank;
    const int64_t *od;
    const void *data;
    wt_session_output(s, 1 + i, &dt, &rank, &od, &data);
    float *ana = malloc(sizeof(float) * (size_t)(ns[i] ? ns[i] : 1));
    memcpy(ana, data, sizeof(float) * (size_t)ns[i]);
    for (int64_t e = 0; e < ns[i]; e++) {
      double l[2];
      float keep = xs[i][e];
      for (int sg = 0; sg < 2; sg++) {
        xs[i][e] = keep + (sg ? -0.0078125f : 0.0078125f);
        for (int k = 0; k < n_in; k++) wt_session_set_input(s, k, WT_FLOAT, decl[k].rank, actual[k], xs[k]);
        wt_session_run(s);
        wt_session_output(s, 0, &dt, &rank, &od, &data);
        l[sg] = *(const float *)data;
      }
      xs[i][e] = keep;
      double num = (l[0] - l[1]) / 0.015625;
      if (fabs(num - ana[e]) > 2e-3 + 2e-3 * fabs(num)) {
        if (!failed) fprintf(stderr, "%s: d/dx%d[%lld]: autodiff %g, finite difference %g\n", label, i,
                             (long long)e, ana[e], num);
        failed = 1;
      }
    }
    free(ana);
  }
out:
  for (int i = 0; i < n_in; i++) free(xs[i]);
  wt_session_free(s);
  wt_graph_free(g);
  printf("%s symbolic check %s\n", failed ? "FAIL" : "ok  ", label);
  return failed;
}

static void axis1(wt_graph *g, int node) { wt_node_set_int(g, node, "axis", 1); }
static void axis0(wt_graph *g, int node) { wt_node_set_int(g, node, "axis", 0); }

static int symbolic(void) {
  int f = 0;
  sym_in bt[3] = {{2, {-1, 2}, {"batch"}}, {2, {-1, 3}, {"batch"}}, {2, {-1, 1}, {"batch"}}};
  const int64_t a3[3][8] = {{3, 2}, {3, 3}, {3, 1}};
  f += symcheck("Concat axis 1, symbolic batch", "Concat", 17, 3, bt, a3, 1, 1, axis1);
  sym_in ba[2] = {{2, {-1, 2}, {"n"}}, {2, {-1, 2}, {"m"}}};
  const int64_t a2[2][8] = {{2, 2}, {3, 2}};
  f += symcheck("Concat along symbolic axis", "Concat", 17, 2, ba, a2, 1, 1, axis0);
  sym_in sp[1] = {{2, {-1, 6}, {"batch"}}};
  const int64_t as[1][8] = {{2, 6}};
  f += symcheck("Split, output 1 unused (zeros)", "Split", 17, 1, sp, as, 3, 5, axis1);
  sym_in m3[2] = {{3, {-1, 3, 4}, {"batch"}}, {2, {4, 5}, {NULL}}};
  const int64_t am3[2][8] = {{2, 3, 4}, {4, 5}};
  f += symcheck("MatMul [batch,3,4] x [4,5]", "MatMul", 17, 2, m3, am3, 1, 1, NULL);
  sym_in m4[2] = {{4, {-1, 2, 3, 4}, {"batch"}}, {4, {-1, 2, 4, 3}, {"batch"}}};
  const int64_t am4[2][8] = {{2, 2, 3, 4}, {2, 2, 4, 3}};
  f += symcheck("MatMul [batch,2,3,4] x [batch,2,4,3]", "MatMul", 17, 2, m4, am4, 1, 1, NULL);
  sym_in mk[2] = {{3, {2, 3, -1}, {NULL, NULL, "k"}}, {2, {-1, -1}, {"k", "n"}}};
  const int64_t amk[2][8] = {{2, 3, 4}, {4, 2}};
  f += symcheck("MatMul symbolic K and N", "MatMul", 17, 2, mk, amk, 1, 1, NULL);
  sym_in rs[1] = {{3, {-1, 3, 4}, {"batch"}}};
  const int64_t ars[1][8] = {{2, 3, 4}};
  f += symcheck("Flatten, symbolic batch", "Flatten", 17, 1, rs, ars, 1, 1, NULL);
  f += symcheck("Transpose, symbolic batch", "Transpose", 17, 1, rs, ars, 1, 1, NULL);
  return f;
}

/* Expand(x[m], Shape(z[k])): whether x is broadcast is only known at run time, so the rule emits
 * BroadcastGradientArgs. dx = sum over the broadcast of exp(y). */
static void test_expand_dynamic(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = wt_graph_value(g, "x"), z = wt_graph_value(g, "z");
  const char *sym[2] = {NULL, NULL}; /* unnamed: shape inference cannot relate them */
  int in[2] = {x, z};
  for (int i = 0; i < 2; i++) {
    wt_value *v = &g->values[in[i]];
    v->dtype = WT_FLOAT;
    wt_value_set_shape(g, in[i], 1, NULL);
    wt_value_set_dim_param(g, in[i], 0, sym[i]);
    wt_graph_add_input(g, in[i]);
  }
  int s = wt_graph_value(g, "s"), y = wt_graph_value(g, "y"), e = wt_graph_value(g, "e");
  int loss = wt_graph_value(g, "loss"), grad;
  wt_graph_add_node(g, "Shape", "", "shape", 1, &z, 1, &s);
  wt_graph_add_node(g, "Expand", "", "expand", 2, (int[]){x, s}, 1, &y);
  wt_graph_add_node(g, "Exp", "", "exp", 1, &y, 1, &e);
  int rs = wt_graph_add_node(g, "ReduceSum", "", "sum", 1, &e, 1, &loss);
  wt_node_set_int(g, rs, "keepdims", 0);
  /* Shape inference gives unrelated symbolic dims distinct sizes and would reject the Expand:
   * describe the values by hand, as an exporter would. */
  int vals[4] = {s, y, e, loss};
  for (int i = 0; i < 4; i++) {
    wt_value *v = &g->values[vals[i]];
    v->dtype = i == 0 ? WT_INT64 : WT_FLOAT;
    wt_value_set_shape(g, vals[i], i == 3 ? 0 : 1, (const int64_t[]){i == 0 ? 1 : -1});
  }
  CHECK_OK(wt_autodiff(g, loss, 1, &x, &grad));
  wt_graph_add_output(g, loss);
  wt_graph_add_output(g, grad);
  int found = 0;
  for (int n = 0; n < g->n_nodes; n++) found |= strcmp(g->nodes[n].op_type, "BroadcastGradientArgs") == 0;
  CHECK(found);
  uint8_t *bytes;
  size_t len;
  wt_session *ss = NULL;
  CHECK_OK(wt_onnx_write(g, &bytes, &len));
  CHECK_OK(wt_session_create(bytes, len, &ss));
  free(bytes);
  float xv[3] = {0.5f, -0.25f, 0.125f}, zv[3] = {0};
  for (int m = 1; ss && m <= 3; m += 2) {
    int64_t dm[1] = {m}, dk[1] = {3};
    CHECK_OK(wt_session_set_input(ss, 0, WT_FLOAT, 1, dm, xv));
    CHECK_OK(wt_session_set_input(ss, 1, WT_FLOAT, 1, dk, zv));
    CHECK_OK(wt_session_run(ss));
    int32_t dt, rank;
    const int64_t *od;
    const void *data;
    wt_session_output(ss, 1, &dt, &rank, &od, &data);
    CHECK(rank == 1 && od[0] == m);
    for (int i = 0; i < m; i++)
      CHECK_NEAR(((const float *)data)[i], (m == 1 ? 3.0 : 1.0) * exp(xv[i]), 1e-5);
  }
  wt_session_free(ss);
  wt_graph_free(g);
}

/* ---- the com.microsoft gradient ops against plain loops ---------------------------------- */

static void test_gather_grad_op(void) {
  float dy[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3}, idx[3] = {2, -1, 0}, d1[1] = {2}, d3[1] = {3}, dyd[2] = {2, 3};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "GatherGrad", "com.microsoft", 3, 1);
  wt_node_set_int(g, n, "axis", 1);
  wt_tensor in[3] = {harness_i64(1, d1, shape), harness_i64(1, d3, idx), harness_f32(2, dyd, dy)}, out[1];
  CHECK_OK(harness_run(g, n, 1, 3, in, 1, out));
  /* columns: 0 gets dy[.,2]; 2 gets dy[.,0] + dy[.,1]; 1 gets nothing */
  float want[6] = {3, 0, 3, 6, 0, 9};
  for (int i = 0; i < 6; i++) CHECK_NEAR(((float *)out[0].data)[i], want[i], 0);
  harness_free(1, out);
  idx[1] = 3;
  CHECK(harness_run(g, n, 1, 3, in, 1, out) != 0); /* out of range at run time */
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_gather_elements_grad_op(void) {
  float dy[4] = {1, 2, 3, 4};
  int64_t shape[2] = {2, 3}, idx[4] = {2, 2, 0, -3}, d1[1] = {2}, dd[2] = {2, 2};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "GatherElementsGrad", "com.microsoft", 3, 1);
  wt_node_set_int(g, n, "axis", -1);
  wt_tensor in[3] = {harness_f32(2, dd, dy), harness_i64(1, d1, shape), harness_i64(2, dd, idx)}, out[1];
  CHECK_OK(harness_run(g, n, 1, 3, in, 1, out));
  float want[6] = {0, 0, 3, 7, 0, 0};
  for (int i = 0; i < 6; i++) CHECK_NEAR(((float *)out[0].data)[i], want[i], 0);
  harness_free(1, out);
  idx[0] = -4;
  CHECK(harness_run(g, n, 1, 3, in, 1, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_gather_nd_grad_op(void) {
  float dy[4] = {1, 2, 3, 4};
  int64_t shape[2] = {3, 2}, idx[2] = {1, 1}, d1[1] = {2}, id[2] = {2, 1}, dd[2] = {2, 2};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "GatherNDGrad", "com.microsoft", 3, 1);
  wt_tensor in[3] = {harness_i64(1, d1, shape), harness_i64(2, id, idx), harness_f32(2, dd, dy)}, out[1];
  CHECK_OK(harness_run(g, n, 1, 3, in, 1, out));
  float want[6] = {0, 0, 4, 6, 0, 0};
  for (int i = 0; i < 6; i++) CHECK_NEAR(((float *)out[0].data)[i], want[i], 0);
  harness_free(1, out);
  idx[0] = 3;
  CHECK(harness_run(g, n, 1, 3, in, 1, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

static void test_broadcast_gradient_args_op(void) {
  int64_t a[3] = {2, 1, 3}, b[2] = {4, 3}, d3[1] = {3}, d2[1] = {2};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "BroadcastGradientArgs", "com.microsoft", 2, 2);
  wt_tensor in[2] = {harness_i64(1, d3, a), harness_i64(1, d2, b)}, out[2];
  CHECK_OK(harness_run(g, n, 1, 2, in, 2, out));
  CHECK(out[0].dims[0] == 1 && ((int64_t *)out[0].data)[0] == 1);
  CHECK(out[1].dims[0] == 1 && ((int64_t *)out[1].data)[0] == 0);
  harness_free(2, out);
  in[0] = harness_i64(1, d2, b); /* [4,3] vs [2,1,3]: b's leading axis is now a's */
  in[1] = harness_i64(1, d3, a);
  CHECK_OK(harness_run(g, n, 1, 2, in, 2, out));
  CHECK(out[0].dims[0] == 1 && ((int64_t *)out[0].data)[0] == 0);
  CHECK(out[1].dims[0] == 1 && ((int64_t *)out[1].data)[0] == 1);
  harness_free(2, out);
  int64_t c[2] = {5, 3};
  in[1] = harness_i64(1, d2, c); /* [4,3] vs [5,3] */
  CHECK(harness_run(g, n, 1, 2, in, 2, out) != 0);
  harness_free(2, out);
  wt_graph_free(g);
}

static void test_slice_grad_op(void) {
  float dy[4] = {1, 2, 3, 4};
  int64_t shape[2] = {3, 4}, st[2] = {2, 0}, en[2] = {0, 4}, ax[2] = {0, 1}, sp[2] = {-1, 2};
  int64_t d1[1] = {2}, dd[2] = {2, 2};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "SliceGrad", "com.microsoft", 6, 1);
  wt_tensor in[6] = {harness_f32(2, dd, dy), harness_i64(1, d1, shape), harness_i64(1, d1, st),
                     harness_i64(1, d1, en), harness_i64(1, d1, ax), harness_i64(1, d1, sp)}, out[1];
  CHECK_OK(harness_run(g, n, 1, 6, in, 1, out));
  /* rows 2, 1 (reversed), columns 0, 2 */
  float want[12] = {0, 0, 0, 0, 3, 0, 4, 0, 1, 0, 2, 0};
  CHECK(out[0].rank == 2 && out[0].dims[0] == 3 && out[0].dims[1] == 4);
  for (int i = 0; i < 12; i++) CHECK_NEAR(((float *)out[0].data)[i], want[i], 0);
  harness_free(1, out);
  int64_t bad[2] = {3, 2};
  in[0] = harness_f32(2, bad, dy); /* dY does not match the slice */
  CHECK(harness_run(g, n, 1, 6, in, 1, out) != 0);
  harness_free(1, out);
  wt_graph_free(g);
}

int main(void) {
  int failed = 0;
  failed += views();
  failed += expand_tile();
  failed += concat_split();
  failed += region();
  failed += indexed();
  failed += scatter_add();
  failed += symbolic();
  CHECK(failed == 0);
  test_expand_dynamic();
  test_gather_grad_op();
  test_gather_elements_grad_op();
  test_gather_nd_grad_op();
  test_slice_grad_op();
  test_broadcast_gradient_args_op();
  CHECK_DONE();
}
