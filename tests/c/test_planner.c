/* Planner and session: buffer reuse in the arena, constant folding of shape computations,
 * plans keyed by input shapes and by the values of shape-determining integer inputs. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/onnx_io.h"
#include "runtime/planner.h"
#include "shape/shape.h"
#include "webtrain.h"

static wt_session *session_of(wt_graph *g) {
  uint8_t *bytes;
  size_t len;
  wt_session *s = NULL;
  CHECK_OK(wt_onnx_write(g, &bytes, &len));
  CHECK_OK(wt_session_create(bytes, len, &s));
  free(bytes);
  wt_graph_free(g);
  return s;
}

static int input(wt_graph *g, const char *name, int dtype, int rank, int64_t d0) {
  int v = wt_graph_value(g, name);
  g->values[v].dtype = dtype;
  wt_value_set_shape(g, v, rank, NULL);
  if (rank > 0) {
    g->values[v].dims[0] = d0;
    if (d0 < 0) wt_value_set_dim_param(g, v, 0, "n");
  }
  wt_graph_add_input(g, v);
  return v;
}

/* An initializer holding a copy of data (rank dims, nbytes). */
static int initializer(wt_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
                       const void *data, size_t nbytes) {
  int v = wt_graph_value(g, name);
  g->values[v].flags |= WT_VALUE_INITIALIZER;
  g->values[v].dtype = (int8_t)dtype;
  wt_value_set_shape(g, v, rank, dims);
  g->values[v].data = malloc(nbytes ? nbytes : 1);
  if (nbytes) memcpy(g->values[v].data, data, nbytes);
  g->values[v].nbytes = nbytes;
  return v;
}

/* n floats from -n/2 upwards (malloc'd). */
static float *ramp(int n) {
  float *v = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; v && i < n; i++) v[i] = (float)(i - n / 2);
  return v;
}

static const float *run_1d(wt_session *s, const float *in, int64_t n) {
  int64_t dims[1] = {n};
  int32_t dt, rank;
  const int64_t *od;
  const void *data = NULL;
  CHECK_OK(wt_session_set_input(s, 0, WT_FLOAT, 1, dims, in));
  CHECK_OK(wt_session_run(s));
  CHECK_OK(wt_session_output(s, 0, &dt, &rank, &od, &data));
  return data;
}

/* A chain of 12 elementwise ops over [n] floats runs in one buffer: each writes in place over
 * its input, which dies there. */
static void test_arena_reuse(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, -1);
  int prev = x;
  for (int i = 0; i < 12; i++) {
    char name[16];
    snprintf(name, sizeof name, "t%d", i);
    int y = wt_graph_value(g, name);
    wt_graph_add_node(g, i % 2 ? "Neg" : "Relu", "", name, 1, &prev, 1, &y);
    prev = y;
  }
  wt_graph_add_output(g, prev);
  wt_session *s = session_of(g);
  if (!s) return;
  enum { N = 1000 };
  float *in = ramp(N);
  const float *y = run_1d(s, in, N);
  /* Relu then Neg six times: -relu(x) after the first pair, then relu(-relu) = 0 ... */
  CHECK(y && y[0] == 0.0f && y[N - 1] == 0.0f);
  size_t arena = wt_session_arena_bytes(s);
  CHECK(arena > 0 && arena <= N * sizeof(float) + 64);
  /* A second batch size gets its own plan; the first stays cached. */
  CHECK(run_1d(s, in, 10) != NULL);
  CHECK(wt_session_arena_bytes(s) > arena);
  free(in);
  wt_session_free(s);
}

/* In place only over an input read for the last time: a = Relu(x); b = Neg(a); c = Add(a, b)
 * must not let Neg overwrite a (Add reads it after), and c = Add(c0, bias[1]) broadcasting a
 * scalar may take c0's buffer. Omitted optional outputs (Dropout's mask) need no buffer of
 * their own either. */
static void test_in_place(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, -1);
  int a = wt_graph_value(g, "a"), b = wt_graph_value(g, "b"), c0 = wt_graph_value(g, "c0");
  int c = wt_graph_value(g, "c"), d = wt_graph_value(g, "d");
  static const float one_f = 1.0f;
  int one = initializer(g, "one", WT_FLOAT, 1, (const int64_t[]){1}, &one_f, sizeof one_f);
  wt_graph_add_node(g, "Relu", "", "relu", 1, &x, 1, &a);
  wt_graph_add_node(g, "Neg", "", "neg", 1, &a, 1, &b);
  wt_graph_add_node(g, "Add", "", "add", 2, (int[]){a, b}, 1, &c0);
  wt_graph_add_node(g, "Add", "", "bias", 2, (int[]){c0, one}, 1, &c);
  wt_graph_add_node(g, "Dropout", "", "drop", 1, &c, 2, (int[]){d, -1});
  wt_graph_add_output(g, d);
  wt_session *s = session_of(g);
  if (!s) return;
  enum { N = 1000 };
  float *in = ramp(N);
  const float *y = run_1d(s, in, N);
  int bad = 0;
  for (int i = 0; y && i < N; i++) bad += y[i] != 1.0f;
  CHECK(y && bad == 0);
  CHECK(in[N - 1] == 499.0f); /* the caller's input is never written */
  /* a and b live together; everything else reuses their buffers */
  CHECK(wt_session_arena_bytes(s) <= 2 * N * sizeof(float) + 128);
  free(in);
  wt_session_free(s);
}

/* Row-wise ops write in place too: dx = SoftmaxGrad_13(Neg(g), Softmax(x)) needs two buffers
 * (y and Neg(g); dx takes one of theirs), and the values are right. */
static void test_in_place_rows(void) {
  enum { R = 4, C = 8 };
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  wt_graph_set_opset(g, "com.microsoft", 1);
  int x = input(g, "x", WT_FLOAT, 2, R), gr = input(g, "g", WT_FLOAT, 2, R);
  g->values[x].dims[1] = g->values[gr].dims[1] = C;
  int y = wt_graph_value(g, "y"), ng = wt_graph_value(g, "ng"), dx = wt_graph_value(g, "dx");
  wt_graph_add_node(g, "Softmax", "", "softmax", 1, &x, 1, &y);
  wt_graph_add_node(g, "Neg", "", "neg", 1, &gr, 1, &ng);
  wt_graph_add_node(g, "SoftmaxGrad_13", "com.microsoft", "softmax_grad", 2, (int[]){ng, y}, 1, &dx);
  wt_graph_add_output(g, dx);
  wt_session *s = session_of(g);
  if (!s) return;
  float xs[R * C], gs[R * C], want[R * C];
  for (int i = 0; i < R * C; i++) xs[i] = (float)((i * 7) % 11) * 0.3f - 1.0f, gs[i] = (float)(i % 5) - 2.0f;
  for (int r = 0; r < R; r++) {
    float m = xs[r * C], sum = 0.0f, dot = 0.0f, yr[C];
    for (int c = 1; c < C; c++) m = xs[r * C + c] > m ? xs[r * C + c] : m;
    for (int c = 0; c < C; c++) sum += yr[c] = expf(xs[r * C + c] - m);
    for (int c = 0; c < C; c++) dot += (yr[c] /= sum) * -gs[r * C + c];
    for (int c = 0; c < C; c++) want[r * C + c] = yr[c] * (-gs[r * C + c] - dot);
  }
  int64_t dims[2] = {R, C};
  int32_t dt, rank;
  const int64_t *od;
  const void *data = NULL;
  CHECK_OK(wt_session_set_input(s, 0, WT_FLOAT, 2, dims, xs));
  CHECK_OK(wt_session_set_input(s, 1, WT_FLOAT, 2, dims, gs));
  CHECK_OK(wt_session_run(s));
  CHECK_OK(wt_session_output(s, 0, &dt, &rank, &od, &data));
  const float *got = data;
  float err = 0.0f;
  for (int i = 0; got && i < R * C; i++) err = fmaxf(err, fabsf(got[i] - want[i]));
  CHECK(got && err < 1e-6f);
  CHECK(wt_session_arena_bytes(s) <= 2 * 128); /* two 128-byte buffers, not three */
  wt_session_free(s);
}

/* Reshape whose target shape is a graph input: the plan depends on that input's values. */
static void test_keyed_shape_input(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, 6);
  int shape = input(g, "shape", WT_INT64, 1, 2);
  int y = wt_graph_value(g, "y");
  int ins[2] = {x, shape};
  wt_graph_add_node(g, "Reshape", "", "r", 2, ins, 1, &y);
  wt_graph_add_output(g, y);
  wt_session *s = session_of(g);
  if (!s) return;
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t xd[1] = {6}, sd[1] = {2};
  int64_t s23[2] = {2, 3}, s32[2] = {3, -1};
  int32_t dt, rank;
  const int64_t *od;
  const void *out;
  CHECK_OK(wt_session_set_input(s, 0, WT_FLOAT, 1, xd, data));
  CHECK_OK(wt_session_set_input(s, 1, WT_INT64, 1, sd, s23));
  CHECK_OK(wt_session_run(s));
  CHECK_OK(wt_session_output(s, 0, &dt, &rank, &od, &out));
  CHECK(rank == 2 && od[0] == 2 && od[1] == 3);
  CHECK_OK(wt_session_set_input(s, 1, WT_INT64, 1, sd, s32));
  CHECK_OK(wt_session_run(s));
  CHECK_OK(wt_session_output(s, 0, &dt, &rank, &od, &out));
  CHECK(rank == 2 && od[0] == 3 && od[1] == 2);
  CHECK(((const float *)out)[5] == 6.0f);
  wt_session_free(s);
}

/* Shape -> Reshape chains are folded at plan time, for any batch size. */
static void test_shape_folding(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, -1);
  int shp = wt_graph_value(g, "shp"), y = wt_graph_value(g, "y"), z = wt_graph_value(g, "z");
  wt_graph_add_node(g, "Shape", "", "shape", 1, &x, 1, &shp);
  wt_graph_add_node(g, "Relu", "", "relu", 1, &x, 1, &y);
  int ins[2] = {y, shp};
  wt_graph_add_node(g, "Reshape", "", "reshape", 2, ins, 1, &z);
  wt_graph_add_output(g, z);
  wt_session *s = session_of(g);
  if (!s) return;
  float data[5] = {-1, 2, -3, 4, -5};
  for (int64_t n = 1; n <= 5; n++) {
    int64_t d[1] = {n};
    CHECK_OK(wt_session_set_input(s, 0, WT_FLOAT, 1, d, data));
    CHECK_OK(wt_session_run(s));
    int32_t dt, rank;
    const int64_t *od;
    const void *out;
    int rc = wt_session_output(s, 0, &dt, &rank, &od, &out);
    CHECK_OK(rc);
    if (rc) break;
    CHECK(rank == 1 && od[0] == n);
    CHECK(((const float *)out)[0] == 0.0f);
  }
  wt_session_free(s);
}

/* Input checks: count, dtype, shape (fixed and symbolic) with names in the message. */
static void test_input_errors(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int a = input(g, "a", WT_FLOAT, 1, -1);
  int b = input(g, "b", WT_FLOAT, 1, -1);
  int y = wt_graph_value(g, "y");
  int ins[2] = {a, b};
  wt_graph_add_node(g, "Add", "", "add", 2, ins, 1, &y);
  wt_graph_add_output(g, y);
  wt_session *s = session_of(g);
  if (!s) return;
  float data[4] = {0};
  int64_t d3[1] = {3}, d4[1] = {4};
  CHECK(wt_session_run(s) == WT_ERR_INVALID_ARG);
  CHECK(strstr(wt_last_error(), "input 'a' was not set") != NULL);
  CHECK_OK(wt_session_set_input(s, 0, WT_FLOAT, 1, d3, data));
  CHECK_OK(wt_session_set_input(s, 1, WT_FLOAT, 1, d4, data));
  CHECK(wt_session_run(s) == WT_ERR_SHAPE);
  CHECK(strstr(wt_last_error(), "input 'b' has shape [4]; expected [n]") != NULL);
  CHECK_OK(wt_session_set_input(s, 1, WT_INT64, 1, d3, data));
  CHECK(wt_session_run(s) == WT_ERR_INVALID_ARG);
  CHECK(strstr(wt_last_error(), "input 'b' has dtype int64; expected float") != NULL);
  CHECK(wt_session_set_input(s, 5, WT_FLOAT, 1, d3, data) == WT_ERR_INVALID_ARG);
  wt_session_free(s);
}

/* Symbolic inference on the tiny transformer: the logits are [batch,4]; intermediate
 * activations keep "batch" where they follow it. */
static void test_symbolic_inference(void) {
  wt_graph *g = NULL;
  CHECK_OK(wt_onnx_read_file(WT_SOURCE_DIR "/tests/golden/cases/tiny_transformer_frozen_adamw/model.onnx", &g));
  if (!g) return;
  CHECK_OK(wt_graph_infer_shapes(g));
  const wt_value *out = &g->values[g->outputs[0]];
  CHECK(out->dtype == WT_FLOAT && out->rank == 2 && out->dims[0] == -1 && out->dims[1] == 4);
  CHECK(wt_value_dim_param(out, 0) && strcmp(wt_value_dim_param(out, 0), "batch") == 0);
  int with_batch = 0;
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].rank >= 2 && wt_value_dim_param(&g->values[v], 0) && strcmp(wt_value_dim_param(&g->values[v], 0), "batch") == 0)
      with_batch++;
  CHECK(with_batch > 10);
  wt_graph_free(g);
}

/* Every unsupported op is named at once, with its nodes. */
static void test_all_unsupported_named(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, 4);
  int a = wt_graph_value(g, "a"), b = wt_graph_value(g, "b"), c = wt_graph_value(g, "c");
  wt_graph_add_node(g, "Frobnicate", "", "f1", 1, &x, 1, &a);
  wt_graph_add_node(g, "Relu", "", "r", 1, &a, 1, &b);
  wt_graph_add_node(g, "Frobnicate", "", "f2", 1, &b, 1, &c);
  int d = wt_graph_value(g, "d");
  wt_graph_add_node(g, "Twiddle", "com.example", "t", 1, &c, 1, &d);
  wt_graph_add_output(g, d);
  CHECK(wt_graph_check_ops(g) == WT_ERR_UNSUPPORTED);
  CHECK(strstr(wt_error_message(), "does not support 2 ops of this model: Frobnicate (ai.onnx, opset 17; "
                                   "node 'f1', 'f2'), Twiddle (com.example, opset 0; node 't')") != NULL);
  wt_graph_free(g);
}

/* A dim derived linearly from a symbol is named by its expression ("n*4"), and an input that
 * carries that name (a loss target) gets the matching stand-in. */
static void test_derived_dim_names(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = wt_graph_value(g, "x");
  g->values[x].dtype = WT_FLOAT;
  wt_value_set_shape(g, x, 3, (const int64_t[]){-1, 4, 3});
  wt_value_set_dim_param(g, x, 0, "n");
  wt_graph_add_input(g, x);
  int64_t shape[2] = {-1, 3};
  int sv = initializer(g, "shape", WT_INT64, 1, (const int64_t[]){2}, shape, sizeof shape);
  int y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "Reshape", "", "r", 2, (int[]){x, sv}, 1, &y);
  CHECK_OK(wt_graph_infer_shapes(g));
  CHECK(g->values[y].dims[0] == -1 && wt_value_dim_param(&g->values[y], 0) && !strcmp(wt_value_dim_param(&g->values[y], 0), "n*4"));
  /* a target shaped like y: Sub(y, t) must infer */
  int t = wt_graph_value(g, "t");
  g->values[t].dtype = WT_FLOAT;
  wt_value_set_shape(g, t, 2, (const int64_t[]){-1, 3});
  wt_value_set_dim_param(g, t, 0, "n*4");
  wt_graph_add_input(g, t);
  int d = wt_graph_value(g, "d");
  wt_graph_add_node(g, "Sub", "", "s", 2, (int[]){y, t}, 1, &d);
  CHECK_OK(wt_graph_infer_shapes(g));
  CHECK(wt_value_dim_param(&g->values[d], 0) && !strcmp(wt_value_dim_param(&g->values[d], 0), "n*4"));
  wt_graph_free(g);
}

/* A folded constant a step reads may be empty (value_floats = []): it still gets an address in
 * the plan's block of constants (fuzz_artifacts: the block was NULL and the plan offset it). */
static void test_empty_constant(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, -1), c = wt_graph_value(g, "c"), y = wt_graph_value(g, "y");
  int k = wt_graph_add_node(g, "Constant", "", "empty", 0, NULL, 1, &c);
  wt_node_set_ints(g, k, "value_ints", NULL, 0);
  wt_graph_add_node(g, "Cast", "", "cast", 1, &c, 1, (int[]){wt_graph_value(g, "cf")});
  wt_node_set_int(g, g->n_nodes - 1, "to", WT_FLOAT);
  int cf = wt_graph_find(g, "cf");
  k = wt_graph_add_node(g, "Concat", "", "concat", 2, (int[]){x, cf}, 1, &y);
  wt_node_set_int(g, k, "axis", 0);
  wt_graph_add_output(g, y);
  CHECK_OK(wt_graph_infer_shapes(g));
  float in[3] = {1, 2, 3};
  wt_tensor t = {.dtype = WT_FLOAT, .rank = 1, .dims = {3}, .data = in}, ct;
  wt_plan *p;
  CHECK_OK(wt_plan_build(g, &t, NULL, &p));
  CHECK(wt_plan_value(p, cf, &ct) && ct.rank == 1 && ct.dims[0] == 0 && ct.data != NULL);
  wt_plan_free(p);
  wt_session *s = session_of(g);
  if (!s) return;
  const float *out = run_1d(s, in, 3);
  CHECK(out && out[0] == 1 && out[2] == 3);
  wt_session_free(s);
}

/* y = Relu(x @ W): the Relu runs as the GEMM's epilogue (one step fused) and gives the same
 * bits as a Relu of its own (an Identity between them prevents the fusion); a MatMul output
 * that something else reads too is not fused. */
static wt_graph *matmul_relu(int mode) { /* 0: fused, 1: Identity between, 2: a second reader */
  enum { R = 5, K = 7, N = 6 };
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 2, R);
  g->values[x].dims[1] = K;
  float wd[K * N];
  for (int i = 0; i < K * N; i++) wd[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  int w = initializer(g, "W", WT_FLOAT, 2, (const int64_t[]){K, N}, wd, sizeof wd);
  int h = wt_graph_value(g, "h"), hi = wt_graph_value(g, "hi"), y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "MatMul", "", "mm", 2, (int[]){x, w}, 1, &h);
  if (mode == 1) wt_graph_add_node(g, "Identity", "", "id", 1, &h, 1, &hi);
  wt_graph_add_node(g, "Relu", "", "relu", 1, (int[]){mode == 1 ? hi : h}, 1, &y);
  wt_graph_add_output(g, y);
  if (mode == 2) wt_graph_add_output(g, h);
  return g;
}

static void test_fused_relu(void) {
  enum { R = 5, K = 7 };
  float x[R * K];
  for (int i = 0; i < R * K; i++) x[i] = (float)((i * 5) % 9) / 4.0f - 1.0f;
  wt_tensor t = {.dtype = WT_FLOAT, .rank = 2, .dims = {R, K}, .data = x};
  float got[3][R * 6];
  for (int mode = 0; mode < 3; mode++) {
    wt_graph *g = matmul_relu(mode);
    CHECK_OK(wt_graph_infer_shapes(g));
    wt_plan *p;
    CHECK_OK(wt_plan_build(g, &t, NULL, &p));
    CHECK(wt_plan_fused_count(p) == (mode == 0));
    void *arena = aligned_alloc(64, (wt_plan_arena_bytes(p) + 127) / 64 * 64);
    wt_plan_bind_arena(p, arena);
    CHECK_OK(wt_plan_run(p, &t));
    void *data;
    const wt_tensor *y = wt_plan_output(p, 0, &data);
    CHECK(y->rank == 2 && y->dims[0] == R && y->dims[1] == 6);
    memcpy(got[mode], data, sizeof got[mode]);
    free(arena);
    wt_plan_free(p);
    wt_graph_free(g);
  }
  int negatives = 0;
  for (int i = 0; i < R * 6; i++) negatives += got[0][i] == 0.0f;
  CHECK(negatives > 0 && !memcmp(got[0], got[1], sizeof got[0]) && !memcmp(got[0], got[2], sizeof got[0]));
}

/* Transposes the GEMMs take over: W^T of a Linear layer read through MatMul's trans flag, a
 * batched operand's last two axes swapped (K^T in attention), a Gemm's output transposed as a
 * weight gradient is (the Gemm writes it so). The plan without fusions computes the same bits.
 * A Transpose that is also a graph output (mode 1) or read by an op without a trans flag
 * (mode 2) still runs. */
static wt_graph *transposes(int mode) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 3, 2);
  g->values[x].dims[1] = 3;
  g->values[x].dims[2] = 8;
  int w = input(g, "W", WT_FLOAT, 2, 6); /* a trained weight is a graph input */
  g->values[w].dims[1] = 8;
  int s2 = initializer(g, "s68", WT_INT64, 1, (const int64_t[]){2}, (const int64_t[]){6, 8}, 16);
  int s6 = initializer(g, "s66", WT_INT64, 1, (const int64_t[]){2}, (const int64_t[]){6, 6}, 16);
  int t = wt_graph_value(g, "Wt"), h = wt_graph_value(g, "h"), x2 = wt_graph_value(g, "x2");
  int h2 = wt_graph_value(g, "h2"), gg = wt_graph_value(g, "G"), u = wt_graph_value(g, "u");
  int y1 = wt_graph_value(g, "y1"), k = wt_graph_value(g, "xT"), y2 = wt_graph_value(g, "y2");
  int n = wt_graph_add_node(g, "Transpose", "", "wt", 1, &w, 1, &t);
  wt_node_set_ints(g, n, "perm", (const int64_t[]){1, 0}, 2);
  wt_graph_add_node(g, "MatMul", "", "linear", 2, (int[]){x, t}, 1, &h);
  wt_graph_add_node(g, "Reshape", "", "r1", 2, (int[]){x, s2}, 1, &x2);
  wt_graph_add_node(g, "Reshape", "", "r2", 2, (int[]){h, s6}, 1, &h2);
  n = wt_graph_add_node(g, "Gemm", "", "dw", 2, (int[]){x2, h2}, 1, &gg);
  wt_node_set_int(g, n, "transA", 1);
  n = wt_graph_add_node(g, "Transpose", "", "gt", 1, &gg, 1, &u);
  wt_node_set_ints(g, n, "perm", (const int64_t[]){1, 0}, 2);
  wt_graph_add_node(g, "Neg", "", "neg", 1, &u, 1, &y1);
  n = wt_graph_add_node(g, "Transpose", "", "kt", 1, &x, 1, &k);
  wt_node_set_ints(g, n, "perm", (const int64_t[]){0, 2, 1}, 3);
  wt_graph_add_node(g, "MatMul", "", "scores", 2, (int[]){k, x}, 1, &y2);
  wt_graph_add_output(g, h);
  wt_graph_add_output(g, y1);
  wt_graph_add_output(g, y2);
  if (mode == 1) wt_graph_add_output(g, t);
  if (mode == 2) {
    int z = wt_graph_value(g, "z");
    wt_graph_add_node(g, "Neg", "", "leak", 1, &t, 1, &z);
    wt_graph_add_output(g, z);
  }
  return g;
}

static void test_fold_transposes(void) {
  float x[2 * 3 * 8], wd[6 * 8];
  for (int i = 0; i < 48; i++) x[i] = (float)((i * 5) % 11) / 4.0f - 1.2f;
  for (int i = 0; i < 6 * 8; i++) wd[i] = (float)((i * 7) % 13) / 6.0f - 1.0f;
  wt_tensor in[2] = {{.dtype = WT_FLOAT, .rank = 3, .dims = {2, 3, 8}, .data = x},
                     {.dtype = WT_FLOAT, .rank = 2, .dims = {6, 8}, .data = wd}};
  static const int64_t sizes[3] = {2 * 3 * 6, 6 * 8, 2 * 8 * 8};
  for (int mode = 0; mode < 3; mode++) {
    float got[2][3][128];
    for (int fuse = 1; fuse >= 0; fuse--) {
      wt_plan_set_fusion(fuse);
      wt_graph *g = transposes(mode);
      CHECK_OK(wt_graph_infer_shapes(g));
      wt_plan *p;
      CHECK_OK(wt_plan_build(g, in, NULL, &p));
      CHECK(wt_plan_fused_count(p) == (fuse ? (mode == 0 ? 3 : 2) : 0));
      void *arena = aligned_alloc(64, (wt_plan_arena_bytes(p) + 127) / 64 * 64);
      wt_plan_bind_arena(p, arena);
      CHECK_OK(wt_plan_run(p, in));
      for (int o = 0; o < 3; o++) {
        void *data;
        const wt_tensor *y = wt_plan_output(p, o, &data);
        CHECK(wt_numel(y) == sizes[o]);
        memcpy(got[fuse][o], data, sizeof(float) * (size_t)sizes[o]);
      }
      free(arena);
      wt_plan_free(p);
      wt_graph_free(g);
    }
    wt_plan_set_fusion(1);
    for (int o = 0; o < 3; o++)
      CHECK(!memcmp(got[0][o], got[1][o], sizeof(float) * (size_t)sizes[o]));
    /* and the numbers themselves: h[0, 0, j] = sum_k x[0, 0, k] W[j, k] */
    for (int j = 0; j < 6; j++) {
      float want = 0.0f;
      for (int kk = 0; kk < 8; kk++) want += x[kk] * wd[j * 8 + kk];
      CHECK(fabsf(got[1][0][j] - want) < 1e-5f);
    }
  }
}

/* A training-mode Dropout draws from its session's own sequence: successive runs draw fresh
 * masks, and another session of the same model draws the first one's masks again in order,
 * whatever ran in the process between. */
static wt_session *dropout_session(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 13);
  int x = input(g, "x", WT_FLOAT, 1, -1);
  static const float half = 0.5f;
  static const uint8_t on = 1;
  int ratio = initializer(g, "ratio", WT_FLOAT, 0, NULL, &half, sizeof half);
  int training = initializer(g, "training", WT_BOOL, 0, NULL, &on, sizeof on);
  int y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "Dropout", "", "drop", 3, (int[]){x, ratio, training}, 1, &y);
  wt_graph_add_output(g, y);
  return session_of(g);
}

static void test_dropout_draws(void) {
  enum { N = 256 };
  static float in[N], first[N], second[N];
  for (int i = 0; i < N; i++) in[i] = 1.0f;
  wt_session *a = dropout_session(), *b = dropout_session();
  if (!a || !b) return;
  const float *y = run_1d(a, in, N);
  if (y) memcpy(first, y, sizeof first);
  y = run_1d(a, in, N);
  if (y) memcpy(second, y, sizeof second);
  CHECK(memcmp(first, second, sizeof first) != 0);
  y = run_1d(b, in, N);
  CHECK(y && memcmp(y, first, sizeof first) == 0);
  y = run_1d(b, in, N);
  CHECK(y && memcmp(y, second, sizeof second) == 0);
  wt_session_free(a);
  wt_session_free(b);
}

/* Two modules stepping on two threads at once: each session's products come out as they do
 * alone (the calling thread's GEMM buffers are the pool's holder's, not shared). */
enum { MM_M = 96, MM_K = 384, MM_N = 320, MM_RUNS = 12 };

static wt_session *matmul_session(const float *w) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 2, MM_M);
  g->values[x].dims[1] = MM_K;
  int wv = initializer(g, "w", WT_FLOAT, 2, (const int64_t[]){MM_K, MM_N}, w, sizeof(float) * MM_K * MM_N);
  int y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "MatMul", "", "mm", 2, (int[]){x, wv}, 1, &y);
  wt_graph_add_output(g, y);
  return session_of(g);
}

typedef struct mm_job {
  wt_session *s;
  const float *x, *want;
  int bad;
} mm_job;

static const float *run_mm(wt_session *s, const float *x) {
  int32_t dt, rank;
  const int64_t *od;
  const void *data = NULL;
  if (wt_session_set_input(s, 0, WT_FLOAT, 2, (const int64_t[]){MM_M, MM_K}, x) ||
      wt_session_run(s) || wt_session_output(s, 0, &dt, &rank, &od, &data))
    return NULL;
  return data;
}

static void *mm_runs(void *arg) {
  mm_job *j = arg;
  for (int r = 0; r < MM_RUNS; r++) {
    const float *y = run_mm(j->s, j->x);
    j->bad += !y || memcmp(y, j->want, sizeof(float) * MM_M * MM_N) != 0;
  }
  return NULL;
}

static void test_concurrent_sessions(void) {
  float *w[2], *x[2], *want[2];
  wt_session *s[2];
  for (int k = 0; k < 2; k++) {
    w[k] = ramp(MM_K * MM_N);
    x[k] = ramp(MM_M * MM_K);
    want[k] = malloc(sizeof(float) * MM_M * MM_N);
    for (int i = 0; i < MM_K * MM_N; i++) w[k][i] = (float)((i * (k + 3)) % 13) * 0.125f - 0.75f;
    for (int i = 0; i < MM_M * MM_K; i++) x[k][i] = (float)((i * (k + 5)) % 11) * 0.25f - 1.25f;
    s[k] = matmul_session(w[k]);
    const float *y = s[k] ? run_mm(s[k], x[k]) : NULL;
    CHECK(y != NULL);
    if (y) memcpy(want[k], y, sizeof(float) * MM_M * MM_N);
  }
  if (s[0] && s[1]) {
    mm_job jobs[2] = {{s[0], x[0], want[0], 0}, {s[1], x[1], want[1], 0}};
    pthread_t other;
    CHECK(pthread_create(&other, NULL, mm_runs, &jobs[1]) == 0);
    mm_runs(&jobs[0]);
    pthread_join(other, NULL);
    CHECK(jobs[0].bad == 0 && jobs[1].bad == 0);
  }
  for (int k = 0; k < 2; k++) {
    wt_session_free(s[k]);
    free(w[k]);
    free(x[k]);
    free(want[k]);
  }
}

int main(void) {
  test_fold_transposes();
  test_fused_relu();
  test_empty_constant();
  test_derived_dim_names();
  test_all_unsupported_named();
  test_symbolic_inference();
  test_arena_reuse();
  test_in_place();
  test_in_place_rows();
  test_keyed_shape_input();
  test_shape_folding();
  test_input_errors();
  test_dropout_draws();
  test_concurrent_sessions();
  CHECK_DONE();
}
