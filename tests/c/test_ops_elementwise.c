/* Unit tests for the unary and binary elementwise op families (src/ops/unary.c, binary.c)
 * and their broadcast iteration (src/backend/cpu/elementwise.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static wt_tensor tensor(int dtype, int rank, const int64_t *dims, void *data) {
  wt_tensor t = {.dtype = dtype, .rank = rank, .data = data};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}

/* Runs a node with n_in inputs and n_out outputs; returns the status. */
static int run_node(const char *op, int opset, int n_in, const wt_tensor *in, int n_out,
                    wt_tensor *out, wt_graph **gp) {
  wt_graph *g = wt_graph_new();
  harness_node(g, op, "", n_in, n_out);
  int rc = harness_run(g, 0, opset, n_in, in, n_out, out);
  if (gp) *gp = g;
  else wt_graph_free(g);
  return rc;
}

static int expect_error(const char *op, int opset, int n_in, const wt_tensor *in, int n_out) {
  wt_tensor out[4];
  int rc = run_node(op, opset, n_in, in, n_out, out, NULL);
  harness_free(n_out, out);
  return rc != WT_OK;
}

static double ref_unary(const char *op, double x) {
  if (!strcmp(op, "Neg")) return -x;
  if (!strcmp(op, "Abs")) return fabs(x);
  if (!strcmp(op, "Sqrt")) return sqrt(fabs(x));
  if (!strcmp(op, "Exp")) return exp(x);
  if (!strcmp(op, "Log")) return log(fabs(x));
  if (!strcmp(op, "Reciprocal")) return 1.0 / x;
  if (!strcmp(op, "Sin")) return sin(x);
  if (!strcmp(op, "Cos")) return cos(x);
  if (!strcmp(op, "Tanh")) return tanh(x);
  if (!strcmp(op, "Erf")) return erf(x);
  if (!strcmp(op, "Sigmoid")) return 1.0 / (1.0 + exp(-x));
  if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
  if (!strcmp(op, "LeakyRelu")) return x > 0 ? x : 0.01 * x;
  if (!strcmp(op, "Elu")) return x > 0 ? x : exp(x) - 1;
  if (!strcmp(op, "Selu"))
    return x > 0 ? 1.0507009873554805 * x : 1.0507009873554805 * 1.6732632423543772 * (exp(x) - 1);
  if (!strcmp(op, "Softplus")) return log(1 + exp(x));
  if (!strcmp(op, "Softsign")) return x / (1 + fabs(x));
  if (!strcmp(op, "Swish")) return x / (1 + exp(-x));
  if (!strcmp(op, "HardSigmoid")) return fmax(0, fmin(1, 0.2 * x + 0.5));
  if (!strcmp(op, "HardSwish")) return x * fmax(0, fmin(1, x / 6 + 0.5));
  if (!strcmp(op, "Gelu")) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  if (!strcmp(op, "Floor")) return floor(x);
  if (!strcmp(op, "Ceil")) return ceil(x);
  if (!strcmp(op, "Sign")) return x > 0 ? 1 : x < 0 ? -1 : 0;
  return NAN;
}

static void test_float_unary(void) {
  static const char *ops[] = {"Neg", "Abs", "Sqrt", "Exp", "Log", "Reciprocal", "Sin", "Cos",
                              "Tanh", "Erf", "Sigmoid", "Relu", "LeakyRelu", "Elu", "Selu",
                              "Softplus", "Softsign", "Swish", "HardSigmoid", "HardSwish", "Gelu",
                              "Floor", "Ceil", "Sign"};
  enum { N = 23 };  /* not a multiple of 4: exercises SIMD body and scalar tail */
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i - 11) * 0.37f + 0.05f;
  int64_t dims[2] = {1, N};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    const char *op = ops[k];
    float xin[N];
    for (int i = 0; i < N; i++)
      xin[i] = (!strcmp(op, "Sqrt") || !strcmp(op, "Log")) ? fabsf(x[i]) : x[i];
    wt_tensor in = harness_f32(2, dims, xin), out[1];
    CHECK_OK(run_node(op, 17, 1, &in, 1, out, NULL));
    CHECK(out[0].dtype == WT_FLOAT && out[0].rank == 2 && out[0].dims[1] == N);
    for (int i = 0; i < N && out[0].data; i++) {
      double e = ref_unary(op, xin[i]);
      double got = ((float *)out[0].data)[i];
      if (!(fabs(got - e) <= 1e-5 + 1e-4 * fabs(e))) {
        fprintf(stderr, "%s(%g) = %g, expected %g\n", op, (double)xin[i], got, e);
        wt_check_failures++;
      }
    }
    harness_free(1, out);
    /* Bad input: float-only ops reject bool; numeric ones too. */
    uint8_t b[2] = {1, 0};
    int64_t d1[1] = {2};
    wt_tensor bad = tensor(WT_BOOL, 1, d1, b);
    CHECK(expect_error(op, 17, 1, &bad, 1));
  }
}

static void test_unary_special(void) {
  int64_t d4[1] = {4}, d6[1] = {6};
  /* Round: halves to even. */
  float r[6] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f}, re[6] = {0, 2, 2, -0.0f, -2, 2};
  wt_tensor in = harness_f32(1, d6, r), out[2];
  CHECK_OK(run_node("Round", 11, 1, &in, 1, out, NULL));
  for (int i = 0; i < 6; i++) CHECK(((float *)out[0].data)[i] == re[i]);
  harness_free(1, out);

  /* Clip opset 13: bounds as inputs, either optional. */
  float x[4] = {-3, -1, 1, 3}, lo = -2, hi = 2;
  wt_tensor ci[3] = {harness_f32(1, d4, x), harness_f32(0, NULL, &lo), harness_f32(0, NULL, &hi)};
  CHECK_OK(run_node("Clip", 13, 3, ci, 1, out, NULL));
  CHECK(((float *)out[0].data)[0] == -2 && ((float *)out[0].data)[3] == 2);
  harness_free(1, out);
  ci[1].dtype = WT_UNDEFINED;
  CHECK_OK(run_node("Clip", 13, 3, ci, 1, out, NULL));
  CHECK(((float *)out[0].data)[0] == -3 && ((float *)out[0].data)[3] == 2);
  harness_free(1, out);
  /* Clip opset 6: attributes. */
  wt_graph *g = wt_graph_new();
  harness_node(g, "Clip", "", 1, 1);
  wt_node_set_float(g, 0, "min", -0.5f);
  CHECK_OK(harness_run(g, 0, 6, 1, ci, 1, out));
  CHECK(((float *)out[0].data)[0] == -0.5f && ((float *)out[0].data)[3] == 3);
  harness_free(1, out);
  wt_graph_free(g);
  /* Clip int64, and a non-scalar bound is an error. */
  int64_t xi[4] = {-30, -1, 1, 30}, loi = -5;
  wt_tensor cii[2] = {harness_i64(1, d4, xi), harness_i64(0, NULL, &loi)};
  CHECK_OK(run_node("Clip", 13, 2, cii, 1, out, NULL));
  CHECK(((int64_t *)out[0].data)[0] == -5 && ((int64_t *)out[0].data)[3] == 30);
  harness_free(1, out);
  cii[1] = harness_i64(1, d4, xi);
  CHECK(expect_error("Clip", 13, 2, cii, 1));

  /* Relu on int32 from opset 14 only; Neg/Abs on int64. */
  int32_t xr[4] = {-3, 0, 2, -1};
  wt_tensor ri = tensor(WT_INT32, 1, d4, xr);
  CHECK_OK(run_node("Relu", 14, 1, &ri, 1, out, NULL));
  CHECK(((int32_t *)out[0].data)[0] == 0 && ((int32_t *)out[0].data)[2] == 2);
  harness_free(1, out);
  CHECK(expect_error("Relu", 13, 1, &ri, 1));
  int64_t xn[4] = {INT64_MIN, -2, 0, 5};
  wt_tensor ni = harness_i64(1, d4, xn);
  CHECK_OK(run_node("Abs", 13, 1, &ni, 1, out, NULL));
  CHECK(((int64_t *)out[0].data)[1] == 2 && ((int64_t *)out[0].data)[3] == 5);
  harness_free(1, out);
  CHECK_OK(run_node("Neg", 13, 1, &ni, 1, out, NULL));
  CHECK(((int64_t *)out[0].data)[1] == 2 && ((int64_t *)out[0].data)[3] == -5);
  harness_free(1, out);

  /* LeakyRelu alpha attribute. */
  g = wt_graph_new();
  harness_node(g, "LeakyRelu", "", 1, 1);
  wt_node_set_float(g, 0, "alpha", 0.5f);
  CHECK_OK(harness_run(g, 0, 16, 1, ci, 1, out));
  CHECK(((float *)out[0].data)[0] == -1.5f && ((float *)out[0].data)[2] == 1.0f);
  harness_free(1, out);
  wt_graph_free(g);

  /* Not. */
  uint8_t bv[4] = {1, 0, 0, 1};
  wt_tensor bt = tensor(WT_BOOL, 1, d4, bv);
  CHECK_OK(run_node("Not", 1, 1, &bt, 1, out, NULL));
  CHECK(((uint8_t *)out[0].data)[0] == 0 && ((uint8_t *)out[0].data)[1] == 1);
  harness_free(1, out);
  CHECK(expect_error("Not", 1, 1, ci, 1));

  /* Identity copies when not aliased. */
  CHECK_OK(run_node("Identity", 16, 1, &bt, 1, out, NULL));
  CHECK(out[0].dtype == WT_BOOL && memcmp(out[0].data, bv, 4) == 0);
  harness_free(1, out);
}

static void test_cast(void) {
  int64_t d4[1] = {4};
  float x[4] = {-2.7f, 0.0f, 3.9f, 1e20f};
  wt_tensor in = harness_f32(1, d4, x), out[1];
  wt_graph *g = wt_graph_new();
  harness_node(g, "Cast", "", 1, 1);
  wt_node_set_int(g, 0, "to", WT_INT32);
  CHECK_OK(harness_run(g, 0, 13, 1, &in, 1, out));
  CHECK(out[0].dtype == WT_INT32);
  CHECK(((int32_t *)out[0].data)[0] == -2 && ((int32_t *)out[0].data)[2] == 3);
  CHECK(((int32_t *)out[0].data)[3] == INT32_MAX);
  harness_free(1, out);
  wt_graph_free(g);

  g = wt_graph_new();
  harness_node(g, "Cast", "", 1, 1);
  wt_node_set_int(g, 0, "to", WT_BOOL);
  CHECK_OK(harness_run(g, 0, 13, 1, &in, 1, out));
  CHECK(((uint8_t *)out[0].data)[0] == 1 && ((uint8_t *)out[0].data)[1] == 0);
  harness_free(1, out);
  wt_graph_free(g);

  int64_t xi[4] = {-5, 0, 7, 1LL << 40};
  wt_tensor ii = harness_i64(1, d4, xi);
  g = wt_graph_new();
  harness_node(g, "Cast", "", 1, 1);
  wt_node_set_int(g, 0, "to", WT_FLOAT);
  CHECK_OK(harness_run(g, 0, 13, 1, &ii, 1, out));
  CHECK(((float *)out[0].data)[0] == -5.0f && ((float *)out[0].data)[3] == 1099511627776.0f);
  harness_free(1, out);
  wt_graph_free(g);

  /* Unsupported target (double) is an error. */
  g = wt_graph_new();
  harness_node(g, "Cast", "", 1, 1);
  wt_node_set_int(g, 0, "to", 11);
  CHECK(harness_run(g, 0, 13, 1, &ii, 1, out) != WT_OK);
  wt_graph_free(g);

  /* CastLike takes the target type from input 1. */
  int32_t like = 0;
  wt_tensor cl[2] = {in, tensor(WT_INT32, 0, NULL, &like)};
  CHECK_OK(run_node("CastLike", 15, 2, cl, 1, out, NULL));
  CHECK(out[0].dtype == WT_INT32 && ((int32_t *)out[0].data)[0] == -2);
  harness_free(1, out);
}

static void test_dropout(void) {
  enum { N = 1000 };
  static float x[N];
  for (int i = 0; i < N; i++) x[i] = 1.0f + (float)i;
  int64_t d[1] = {N};
  wt_tensor out[2];
  /* Inference: identity, mask all true. */
  wt_tensor in = harness_f32(1, d, x);
  CHECK_OK(run_node("Dropout", 13, 1, &in, 2, out, NULL));
  CHECK(out[1].dtype == WT_BOOL);
  CHECK(memcmp(out[0].data, x, sizeof x) == 0);
  int all = 1;
  for (int i = 0; i < N; i++) all &= ((uint8_t *)out[1].data)[i] == 1;
  CHECK(all);
  harness_free(2, out);

  /* Training with ratio 0.25: about a quarter dropped, kept values scaled by 4/3. */
  float ratio = 0.25f;
  uint8_t train = 1;
  wt_tensor ti[3] = {in, harness_f32(0, NULL, &ratio), tensor(WT_BOOL, 0, NULL, &train)};
  CHECK_OK(run_node("Dropout", 13, 3, ti, 2, out, NULL));
  int dropped = 0, ok = 1;
  for (int i = 0; i < N; i++) {
    float y = ((float *)out[0].data)[i];
    int m = ((uint8_t *)out[1].data)[i];
    dropped += !m;
    ok &= m ? fabsf(y - x[i] / 0.75f) <= 1e-3f * x[i] : y == 0.0f;
  }
  CHECK(ok);
  CHECK(dropped > 180 && dropped < 320);
  harness_free(2, out);

  /* Training with ratio 0 is the identity. */
  ratio = 0.0f;
  CHECK_OK(run_node("Dropout", 13, 3, ti, 1, out, NULL));
  CHECK(memcmp(out[0].data, x, sizeof x) == 0);
  harness_free(1, out);

  /* Bad: non-scalar ratio. */
  ti[1] = in;
  CHECK(expect_error("Dropout", 13, 3, ti, 1));
}

/* ---- binary ------------------------------------------------------------------------------ */

/* Float Add/Mul/Sub/Div/Max/Min checked against a scalar broadcast reference. */
static void check_bcast_f32(const char *op, int ra, const int64_t *da, int rb, const int64_t *db) {
  wt_tensor a = {.dtype = WT_FLOAT, .rank = ra}, b = {.dtype = WT_FLOAT, .rank = rb};
  for (int i = 0; i < ra; i++) a.dims[i] = da[i];
  for (int i = 0; i < rb; i++) b.dims[i] = db[i];
  int64_t na = wt_numel(&a), nb = wt_numel(&b);
  float *xa = malloc((size_t)na * 4), *xb = malloc((size_t)nb * 4);
  for (int64_t i = 0; i < na; i++) xa[i] = (float)((i * 7) % 13) - 6.0f;
  for (int64_t i = 0; i < nb; i++) xb[i] = (float)((i * 5) % 11) + 0.5f;
  a.data = xa;
  b.data = xb;
  wt_tensor in[2] = {a, b}, out[1];
  CHECK_OK(run_node(op, 14, 2, in, 1, out, NULL));
  int r = out[0].rank;
  int64_t n = wt_numel(&out[0]);
  int bad = 0;
  for (int64_t i = 0; i < n && out[0].data; i++) {
    /* Unravel i in the output shape, index each operand with its broadcast rules. */
    int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int d = r - 1; d >= 0; d--) {
      int64_t c = rem % out[0].dims[d];
      rem /= out[0].dims[d];
      int ja = d - (r - ra), jb = d - (r - rb);
      if (ja >= 0) {
        ia += (da[ja] == 1 ? 0 : c) * sa;
        sa *= da[ja];
      }
      if (jb >= 0) {
        ib += (db[jb] == 1 ? 0 : c) * sb;
        sb *= db[jb];
      }
    }
    float x = xa[ia], y = xb[ib], e;
    switch (op[0]) {
      case 'A': e = x + y; break;
      case 'S': e = x - y; break;
      case 'D': e = x / y; break;
      default: e = op[1] == 'u' ? x * y : op[1] == 'a' ? fmaxf(x, y) : fminf(x, y); break;
    }
    bad += ((float *)out[0].data)[i] != e;
  }
  if (bad) fprintf(stderr, "%s: %d mismatches\n", op, bad);
  CHECK(bad == 0);
  harness_free(1, out);
  free(xa);
  free(xb);
}

static void test_broadcast_f32(void) {
  const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  int64_t s37[1] = {37}, m[2] = {5, 37}, row[1] = {37}, col[2] = {5, 1}, one[1] = {1};
  int64_t nchw[4] = {2, 3, 4, 5}, c11[3] = {3, 1, 1}, a3[3] = {2, 1, 3}, b2[2] = {4, 1};
  for (int k = 0; k < 6; k++) {
    check_bcast_f32(ops[k], 1, s37, 1, s37);     /* same shape */
    check_bcast_f32(ops[k], 2, m, 1, row);       /* bias row */
    check_bcast_f32(ops[k], 1, row, 2, m);       /* row on the left */
    check_bcast_f32(ops[k], 2, m, 0, NULL);      /* scalar */
    check_bcast_f32(ops[k], 0, NULL, 2, m);      /* scalar on the left */
    check_bcast_f32(ops[k], 2, m, 2, col);       /* column */
    check_bcast_f32(ops[k], 4, nchw, 3, c11);    /* per-channel */
    check_bcast_f32(ops[k], 3, a3, 2, b2);       /* both broadcast: general strides */
    check_bcast_f32(ops[k], 1, one, 1, s37);
  }
  /* Bad: incompatible shapes, mixed dtypes. */
  float f[6] = {0};
  int64_t d23[2] = {2, 3}, d2[1] = {2};
  wt_tensor bad[2] = {harness_f32(2, d23, f), harness_f32(1, d2, f)};
  CHECK(expect_error("Add", 14, 2, bad, 1));
  int64_t iv[3] = {0};
  bad[1] = harness_i64(1, d2 + 0, iv);
  bad[1].dims[0] = 3;
  CHECK(expect_error("Mul", 14, 2, bad, 1));
}

static void test_int_arith(void) {
  int64_t d4[1] = {4}, out_v[4];
  int64_t a[4] = {-7, 7, -7, 9}, b[4] = {2, -2, -2, 3};
  wt_tensor in[2] = {harness_i64(1, d4, a), harness_i64(1, d4, b)}, out[1];
  CHECK_OK(run_node("Div", 14, 2, in, 1, out, NULL));
  memcpy(out_v, out[0].data, sizeof out_v);
  CHECK(out_v[0] == -3 && out_v[1] == -3 && out_v[2] == 3 && out_v[3] == 3);
  harness_free(1, out);
  CHECK_OK(run_node("Mod", 13, 2, in, 1, out, NULL));
  memcpy(out_v, out[0].data, sizeof out_v);
  CHECK(out_v[0] == 1 && out_v[1] == -1 && out_v[2] == -1 && out_v[3] == 0);
  harness_free(1, out);
  wt_graph *g = wt_graph_new();
  harness_node(g, "Mod", "", 2, 1);
  wt_node_set_int(g, 0, "fmod", 1);
  CHECK_OK(harness_run(g, 0, 13, 2, in, 1, out));
  memcpy(out_v, out[0].data, sizeof out_v);
  CHECK(out_v[0] == -1 && out_v[1] == 1 && out_v[2] == -1 && out_v[3] == 0);
  harness_free(1, out);
  wt_graph_free(g);
  CHECK_OK(run_node("Pow", 15, 2, in, 1, out, NULL));
  memcpy(out_v, out[0].data, sizeof out_v);
  CHECK(out_v[0] == 49 && out_v[1] == 0 && out_v[3] == 729);
  harness_free(1, out);
  /* Division by zero is a run-time error, not a crash. */
  b[1] = 0;
  CHECK(expect_error("Div", 14, 2, in, 1));
  CHECK(expect_error("Mod", 13, 2, in, 1));
  /* int32 Sub wraps instead of overflowing. */
  int32_t x32[1] = {INT32_MIN}, y32[1] = {1};
  int64_t d1[1] = {1};
  wt_tensor i32[2] = {tensor(WT_INT32, 1, d1, x32), tensor(WT_INT32, 1, d1, y32)};
  CHECK_OK(run_node("Sub", 14, 2, i32, 1, out, NULL));
  CHECK(((int32_t *)out[0].data)[0] == INT32_MAX);
  harness_free(1, out);
  /* Mixed Pow: float base, int64 exponent; int32 base, float exponent. */
  float fb[4] = {2, 3, -2, 0.5f};
  int64_t ie[4] = {3, 2, 3, 2};
  wt_tensor mp[2] = {harness_f32(1, d4, fb), harness_i64(1, d4, ie)};
  CHECK_OK(run_node("Pow", 15, 2, mp, 1, out, NULL));
  CHECK(out[0].dtype == WT_FLOAT && ((float *)out[0].data)[0] == 8 &&
        ((float *)out[0].data)[2] == -8 && ((float *)out[0].data)[3] == 0.25f);
  harness_free(1, out);
  int32_t ib[4] = {1, 2, 3, 4};
  float fe[4] = {4, 5, 6, 0.5f};
  wt_tensor mp2[2] = {tensor(WT_INT32, 1, d4, ib), harness_f32(1, d4, fe)};
  CHECK_OK(run_node("Pow", 15, 2, mp2, 1, out, NULL));
  CHECK(out[0].dtype == WT_INT32 && ((int32_t *)out[0].data)[1] == 32 &&
        ((int32_t *)out[0].data)[2] == 729 && ((int32_t *)out[0].data)[3] == 2);
  harness_free(1, out);
  /* Float Pow with a scalar exponent 2 (fast path) and 0.5. */
  float p2 = 2.0f, ph = 0.5f, base[5] = {1, -2, 3, 4, 9};
  int64_t d5[1] = {5};
  wt_tensor fp[2] = {harness_f32(1, d5, base), harness_f32(0, NULL, &p2)};
  CHECK_OK(run_node("Pow", 15, 2, fp, 1, out, NULL));
  CHECK(((float *)out[0].data)[1] == 4 && ((float *)out[0].data)[4] == 81);
  harness_free(1, out);
  fp[1].data = &ph;
  CHECK_OK(run_node("Pow", 15, 2, fp, 1, out, NULL));
  CHECK_NEAR(((float *)out[0].data)[4], 3.0, 1e-6);
  harness_free(1, out);
}

static void test_variadic_where_compare(void) {
  float a[6] = {1, 5, 3, 7, 2, 0}, b[3] = {4, 4, 4}, c = 2.5f;
  int64_t d23[2] = {2, 3}, d3[1] = {3};
  wt_tensor in[3] = {harness_f32(2, d23, a), harness_f32(1, d3, b), harness_f32(0, NULL, &c)}, out[1];
  CHECK_OK(run_node("Max", 13, 3, in, 1, out, NULL));
  float emax[6] = {4, 5, 4, 7, 4, 4};
  CHECK(memcmp(out[0].data, emax, sizeof emax) == 0);
  harness_free(1, out);
  CHECK_OK(run_node("Min", 13, 3, in, 1, out, NULL));
  float emin[6] = {1, 2.5f, 2.5f, 2.5f, 2, 0};
  CHECK(memcmp(out[0].data, emin, sizeof emin) == 0);
  harness_free(1, out);
  /* Max with a broadcast first input: the output is the full shape. */
  wt_tensor rev[2] = {in[1], in[0]};
  CHECK_OK(run_node("Max", 13, 2, rev, 1, out, NULL));
  CHECK(out[0].rank == 2 && memcmp(out[0].data, emax, sizeof emax) == 0);
  harness_free(1, out);
  CHECK_OK(run_node("Min", 13, 1, in, 1, out, NULL));
  CHECK(memcmp(out[0].data, a, sizeof a) == 0);
  harness_free(1, out);

  /* Comparisons. */
  const char *cmp[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
  uint8_t ecmp[5][3] = {{0, 0, 0}, {1, 0, 1}, {0, 1, 0}, {1, 0, 1}, {0, 1, 0}};
  for (int k = 0; k < 5; k++) {
    CHECK_OK(run_node(cmp[k], 13, 2, in, 1, out, NULL));
    CHECK(out[0].dtype == WT_BOOL && memcmp(out[0].data, ecmp[k], 3) == 0);
    harness_free(1, out);
    wt_tensor mixed[2] = {in[0], harness_i64(0, NULL, (int64_t[]){1})};
    CHECK(expect_error(cmp[k], 13, 2, mixed, 1));
  }
  float four = 4.0f;
  wt_tensor eq[2] = {in[1], harness_f32(0, NULL, &four)};
  CHECK_OK(run_node("Equal", 13, 2, eq, 1, out, NULL));
  CHECK(((uint8_t *)out[0].data)[0] == 1 && ((uint8_t *)out[0].data)[2] == 1);
  harness_free(1, out);

  /* Logic with broadcasting. */
  uint8_t p[4] = {1, 1, 0, 0}, q[2] = {1, 0};
  int64_t d22[2] = {2, 2}, d2[1] = {2};
  wt_tensor lg[2] = {tensor(WT_BOOL, 2, d22, p), tensor(WT_BOOL, 1, d2, q)};
  uint8_t eand[4] = {1, 0, 0, 0}, eor[4] = {1, 1, 1, 0}, exor[4] = {0, 1, 1, 0};
  CHECK_OK(run_node("And", 7, 2, lg, 1, out, NULL));
  CHECK(memcmp(out[0].data, eand, 4) == 0);
  harness_free(1, out);
  CHECK_OK(run_node("Or", 7, 2, lg, 1, out, NULL));
  CHECK(memcmp(out[0].data, eor, 4) == 0);
  harness_free(1, out);
  CHECK_OK(run_node("Xor", 7, 2, lg, 1, out, NULL));
  CHECK(memcmp(out[0].data, exor, 4) == 0);
  harness_free(1, out);
  CHECK_OK(run_node("Equal", 13, 2, lg, 1, out, NULL));
  CHECK(memcmp(out[0].data, exor, 4) != 0 && ((uint8_t *)out[0].data)[0] == 1);
  harness_free(1, out);
  wt_tensor fl[2] = {in[0], in[0]};
  CHECK(expect_error("And", 7, 2, fl, 1));

  /* Where: bool condition [2,2], X [2,1] int64, Y scalar. */
  int64_t xw[2] = {10, 20}, yw = -1, d21[2] = {2, 1};
  wt_tensor w[3] = {tensor(WT_BOOL, 2, d22, p), harness_i64(2, d21, xw), harness_i64(0, NULL, &yw)};
  CHECK_OK(run_node("Where", 16, 3, w, 1, out, NULL));
  int64_t ew[4] = {10, 10, -1, -1};
  CHECK(out[0].dtype == WT_INT64 && memcmp(out[0].data, ew, sizeof ew) == 0);
  harness_free(1, out);
  w[0] = in[0];
  CHECK(expect_error("Where", 16, 3, w, 1));
}

static void test_extras(void) {
  /* PRelu: slope broadcast to X; a slope that would grow X is an error. */
  float x[6] = {-2, -1, 0, 1, 2, -4}, slope[3] = {0.5f, 2, 3};
  int64_t d23[2] = {2, 3}, d3[1] = {3};
  wt_tensor in[3] = {harness_f32(2, d23, x), harness_f32(1, d3, slope), harness_f32(2, d23, x)};
  wt_tensor out[1];
  CHECK_OK(run_node("PRelu", 16, 2, in, 1, out, NULL));
  float ep[6] = {-1, -2, 0, 1, 2, -12};
  CHECK(memcmp(out[0].data, ep, sizeof ep) == 0);
  harness_free(1, out);
  wt_tensor big[2] = {in[1], in[0]};
  big[1].dims[0] = 2;
  CHECK(expect_error("PRelu", 16, 2, big, 1));

  /* Sum / Mean of three with broadcasting. */
  CHECK_OK(run_node("Sum", 13, 3, in, 1, out, NULL));
  CHECK(((float *)out[0].data)[0] == -3.5f && ((float *)out[0].data)[5] == -5.0f);
  harness_free(1, out);
  CHECK_OK(run_node("Mean", 13, 3, in, 1, out, NULL));
  CHECK_NEAR(((float *)out[0].data)[0], -3.5 / 3, 1e-6);
  harness_free(1, out);
  int64_t iv[3] = {1, 2, 3};
  wt_tensor ints[2] = {harness_i64(1, d3, iv), harness_i64(1, d3, iv)};
  CHECK(expect_error("Sum", 13, 2, ints, 1));

  /* IsInf with detect_negative = 0, IsNaN. */
  float s[4] = {INFINITY, -INFINITY, NAN, 1};
  int64_t d4[1] = {4};
  wt_tensor si = harness_f32(1, d4, s);
  wt_graph *g = wt_graph_new();
  harness_node(g, "IsInf", "", 1, 1);
  wt_node_set_int(g, 0, "detect_negative", 0);
  CHECK_OK(harness_run(g, 0, 10, 1, &si, 1, out));
  uint8_t einf[4] = {1, 0, 0, 0};
  CHECK(out[0].dtype == WT_BOOL && memcmp(out[0].data, einf, 4) == 0);
  harness_free(1, out);
  wt_graph_free(g);
  CHECK_OK(run_node("IsNaN", 13, 1, &si, 1, out, NULL));
  uint8_t enan[4] = {0, 0, 1, 0};
  CHECK(memcmp(out[0].data, enan, 4) == 0);
  harness_free(1, out);
  CHECK(expect_error("IsNaN", 13, 1, ints, 1));

  /* Shrink defaults: lambd 0.5, bias 0. */
  float sh[4] = {-1, -0.4f, 0.4f, 2};
  wt_tensor shi = harness_f32(1, d4, sh);
  CHECK_OK(run_node("Shrink", 9, 1, &shi, 1, out, NULL));
  float esh[4] = {-1, 0, 0, 2};
  CHECK(memcmp(out[0].data, esh, sizeof esh) == 0);
  harness_free(1, out);
}

int main(void) {
  test_extras();
  test_float_unary();
  test_unary_special();
  test_cast();
  test_dropout();
  test_broadcast_f32();
  test_int_arith();
  test_variadic_where_compare();
  CHECK_DONE();
}
