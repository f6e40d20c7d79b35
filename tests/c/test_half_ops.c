/* float16 frozen weights through the planner: a float16 initializer read through Cast(to=float)
 * by MatMul (as A or B, 2-D, folded and batched), Gemm (every transA/transB, as A or B, with a
 * float bias, with a fused Relu), Gather (rows), Conv (W, im2col and pointwise), against the same graph whose float32 weight holds
 * the float16 values (rounded): equal at float32 tolerance, bit-identical at 1, 2 and 4 threads,
 * and the Cast is skipped (the plan's arena has no room for a float copy of the weight). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/half.h"
#include "check.h"
#include "io/onnx_io.h"
#include "runtime/session.h"
#include "webtrain.h"

typedef struct spec {
  const char *op;            /* "MatMul", "Gemm", "Gather" */
  int w_slot;                /* which input of op is the weight */
  int x_rank, w_rank;
  int64_t x_dims[4], w_dims[4];
  int trans_a, trans_b;      /* Gemm */
  int bias;                  /* Gemm: C [N] */
  int relu;                  /* a Relu after the op (fused as the GEMM's epilogue) */
} spec;

static uint32_t g_seed = 1;
static float rnd(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return (float)((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int64_t count(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  return n;
}

static int init_value(wt_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
                      const void *data, size_t nbytes) {
  int v = wt_graph_add_value(g, name);
  g->values[v].flags |= WT_VALUE_INITIALIZER;
  g->values[v].dtype = (int8_t)dtype;
  if (wt_value_set_shape(g, v, rank, dims)) return -1;
  g->values[v].data = malloc(nbytes ? nbytes : 1);
  memcpy(g->values[v].data, data, nbytes);
  g->values[v].nbytes = nbytes;
  return v;
}

/* Runs the spec's graph on x with weight w16 (as float16 through a Cast when half, else widened
 * into a float32 initializer). *out: malloc'd output, *arena: the plan's arena bytes. */
static int run(const spec *s, const float *xdata, const uint16_t *w16, int half, int64_t *y_n,
               float **out, size_t *arena) {
  wt_graph *g = wt_graph_new();
  int64_t nw = count(s->w_rank, s->w_dims);
  int x = wt_graph_add_value(g, "X");
  int is_gather = !strcmp(s->op, "Gather");
  g->values[x].dtype = is_gather ? WT_INT64 : WT_FLOAT;
  if (wt_value_set_shape(g, x, s->x_rank, s->x_dims) || wt_graph_add_input(g, x)) return -1;
  int w;
  if (half) {
    int w16v = init_value(g, "W", WT_FLOAT16, s->w_rank, s->w_dims, w16, (size_t)nw * 2);
    w = wt_graph_add_value(g, "W_float");
    int c = wt_graph_add_node(g, "Cast", "", "cast_W", 1, &w16v, 1, &w);
    if (c < 0 || wt_node_set_int(g, c, "to", WT_FLOAT)) return -1;
  } else {
    float *wf = malloc(sizeof(float) * (size_t)nw);
    wt_f16_to_f32_n(wf, w16, (size_t)nw);
    w = init_value(g, "W", WT_FLOAT, s->w_rank, s->w_dims, wf, sizeof(float) * (size_t)nw);
    free(wf);
  }
  int ins[3] = {x, x, -1}, n_in = 2;
  ins[s->w_slot] = w;
  if (s->bias) {
    int64_t nb = s->trans_b ? s->w_dims[0] : s->w_dims[1];
    float b[4096];
    for (int64_t i = 0; i < nb; i++) b[i] = (float)i * 0.25f - 1.0f;
    ins[2] = init_value(g, "C", WT_FLOAT, 1, &nb, b, sizeof(float) * (size_t)nb);
    n_in = 3;
  }
  int y = wt_graph_add_value(g, s->relu ? "Z" : "Y");
  int node = wt_graph_add_node(g, s->op, "", "op", n_in, ins, 1, &y);
  if (node < 0) return -1;
  if (s->trans_a && wt_node_set_int(g, node, "transA", 1)) return -1;
  if (s->trans_b && wt_node_set_int(g, node, "transB", 1)) return -1;
  /* Conv: group = C / W.dims[1] (depthwise when W has one input channel) */
  if (!strcmp(s->op, "Conv") && s->x_dims[1] != s->w_dims[1] &&
      wt_node_set_int(g, node, "group", s->x_dims[1] / s->w_dims[1]))
    return -1;
  if (s->relu) {
    int z = y;
    y = wt_graph_add_value(g, "Y");
    if (wt_graph_add_node(g, "Relu", "", "relu", 1, &z, 1, &y) < 0) return -1;
  }
  if (wt_graph_add_output(g, y) || wt_graph_set_opset(g, "", 17)) return -1;
  wt_session *sess;
  WT_TRY(wt_session_create_from_graph(g, &sess));
  int64_t nx = count(s->x_rank, s->x_dims);
  int64_t *idx = NULL;
  const void *xd = xdata;
  if (is_gather) { /* indices spread over the rows, negative ones too */
    idx = malloc(sizeof(int64_t) * (size_t)nx);
    for (int64_t i = 0; i < nx; i++) idx[i] = (i * 7) % s->w_dims[0] - (i % 3 == 0 ? s->w_dims[0] : 0);
    xd = idx;
  }
  int rc = wt_session_set_input(sess, 0, is_gather ? WT_INT64 : WT_FLOAT, s->x_rank, s->x_dims, xd);
  if (!rc) rc = wt_session_run(sess);
  if (!rc) {
    int32_t dt, rank;
    const int64_t *dims;
    const void *data;
    rc = wt_session_output(sess, 0, &dt, &rank, &dims, &data);
    *y_n = count(rank, dims);
    *out = malloc(sizeof(float) * (size_t)(*y_n + 1));
    memcpy(*out, data, sizeof(float) * (size_t)*y_n);
    *arena = wt_session_arena_bytes(sess);
    if (dt != WT_FLOAT) rc = -2;
  }
  free(idx);
  wt_session_free(sess);
  return rc;
}

static void check_spec(const char *label, const spec *s) {
  int64_t nx = count(s->x_rank, s->x_dims), nw = count(s->w_rank, s->w_dims);
  float *x = malloc(sizeof(float) * (size_t)nx);
  uint16_t *w16 = malloc(sizeof(uint16_t) * (size_t)nw);
  for (int64_t i = 0; i < nx; i++) x[i] = rnd();
  for (int64_t i = 0; i < nw; i++) w16[i] = wt_f32_to_f16(rnd() * 0.5f);
  float *ref = NULL, *got[3] = {NULL, NULL, NULL};
  int64_t n_ref = 0, n_got = 0;
  size_t arena_ref, arena;
  wt_set_threads(1);
  CHECK_OK(run(s, x, w16, 0, &n_ref, &ref, &arena_ref));
  const int threads[3] = {1, 2, 4};
  for (int t = 0; t < 3; t++) {
    wt_set_threads(threads[t]);
    CHECK_OK(run(s, x, w16, 1, &n_got, &got[t], &arena));
    /* the float16 weight was read in place: the arena holds no float copy of it */
    if ((size_t)nw * 4 > arena_ref + 64 && arena > arena_ref) {
      fprintf(stderr, "%s: arena %zu bytes with the float16 weight, %zu with float32\n", label, arena, arena_ref);
      CHECK(0);
    }
  }
  wt_set_threads(1);
  CHECK(n_got == n_ref);
  double worst = 0;
  for (int64_t i = 0; ref && got[0] && i < n_ref && n_got == n_ref; i++) {
    double d = fabs((double)got[0][i] - ref[i]), tol = 1e-5 * (1 + fabs(ref[i])) * 8;
    if (d > worst) worst = d;
    if (!(d <= tol)) {
      fprintf(stderr, "%s: element %lld: float16 weights %.9g, rounded float32 %.9g\n", label,
              (long long)i, got[0][i], ref[i]);
      CHECK(0);
      break;
    }
  }
  for (int t = 1; t < 3; t++)
    if (got[0] && got[t] && memcmp(got[0], got[t], sizeof(float) * (size_t)n_got) != 0) {
      fprintf(stderr, "%s: results differ between 1 and %d threads\n", label, threads[t]);
      CHECK(0);
    }
  printf("%-44s max |diff| %.3g\n", label, worst);
  free(x);
  free(w16);
  free(ref);
  for (int t = 0; t < 3; t++) free(got[t]);
}

/* frozen_dtype float16 at generation (wt_artifacts_frozen_half): what converts, what stays
 * float32 and the reason given for it. */
static void check_generation(void) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_add_value(g, "X");
  g->values[x].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, x, 2, (const int64_t[]){2, 4}));
  CHECK_OK(wt_graph_add_input(g, x));
  float big[12] = {1, 2, 3, 1e5f, -7e4f, 0.5f}, ok[12] = {0.1f, -0.2f, 65504.0f}, bias[3] = {1, 2, 3};
  int wb = init_value(g, "W_big", WT_FLOAT, 2, (const int64_t[]){4, 3}, big, sizeof big);
  int wo = init_value(g, "W_ok", WT_FLOAT, 2, (const int64_t[]){4, 3}, ok, sizeof ok);
  int b = init_value(g, "B", WT_FLOAT, 1, (const int64_t[]){3}, bias, sizeof bias);
  int h1 = wt_graph_add_value(g, "h1"), h2 = wt_graph_add_value(g, "h2"), y = wt_graph_add_value(g, "y");
  CHECK(wt_graph_add_node(g, "MatMul", "", "mm_big", 2, (int[]){x, wb}, 1, &h1) >= 0);
  CHECK(wt_graph_add_node(g, "MatMul", "", "mm_ok", 2, (int[]){x, wo}, 1, &h2) >= 0);
  int s = wt_graph_add_value(g, "s");
  CHECK(wt_graph_add_node(g, "Add", "", "add_h", 2, (int[]){h1, h2}, 1, &s) >= 0);
  CHECK(wt_graph_add_node(g, "Add", "", "add_b", 2, (int[]){s, b}, 1, &y) >= 0);
  CHECK_OK(wt_graph_add_output(g, y));
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  int frozen[3] = {wb, wo, b};
  char *kept = NULL;
  CHECK_OK(wt_artifacts_frozen_half(g, NULL, 0, frozen, 3, &kept));
  printf("kept float32:\n%s", kept ? kept : "");
  CHECK(kept && strstr(kept, "W_big: 2 values beyond float16's range (largest 65504), e.g. 100000 at index 3\n"));
  CHECK(kept && strstr(kept, "B: read by Add 'add_b' (input 1), which reads float only\n"));
  CHECK(kept && !strstr(kept, "W_ok"));
  int v = wt_graph_find(g, "W_ok");
  CHECK(v >= 0 && g->values[v].dtype == WT_FLOAT16 && g->values[v].nbytes == 24);
  CHECK(v >= 0 && ((const uint16_t *)g->values[v].data)[2] == 0x7bff); /* 65504: the largest float16 */
  CHECK(wt_graph_find(g, "W_ok_float") >= 0 && g->values[wb].dtype == WT_FLOAT);
  free(kept);
  CHECK(wt_artifacts_frozen_half(g, (const int[]){wb, wo, b}, 3, NULL, 0, &kept) == WT_ERR_INVALID_ARG);
  CHECK(strstr(wt_error_message(), "no frozen float parameters") != NULL);
  free(kept);
  wt_graph_free(g);
}

int main(void) {
  check_generation();
  /* MatMul: W as B (a layer), as A, folded batches, batched weights, thin, threaded sizes */
  check_spec("MatMul X[5,37] W[37,19]", &(spec){"MatMul", 1, 2, 2, {5, 37}, {37, 19}, 0, 0, 0, 0});
  check_spec("MatMul X[1,64] W[64,10] (thin)", &(spec){"MatMul", 1, 2, 2, {1, 64}, {64, 10}, 0, 0, 0, 0});
  check_spec("MatMul X[64,600] W[600,96] (threads)", &(spec){"MatMul", 1, 2, 2, {64, 600}, {600, 96}, 0, 0, 0, 0});
  check_spec("MatMul W[19,37] X[37,5] (W as A)", &(spec){"MatMul", 0, 2, 2, {37, 5}, {19, 37}, 0, 0, 0, 0});
  check_spec("MatMul X[2,3,33] W[33,20] (folded)", &(spec){"MatMul", 1, 3, 2, {2, 3, 33}, {33, 20}, 0, 0, 0, 0});
  check_spec("MatMul X[2,6,9] W[2,9,7] (batched)", &(spec){"MatMul", 1, 3, 3, {2, 6, 9}, {2, 9, 7}, 0, 0, 0, 0});
  check_spec("MatMul X[16,40] W[40,24] + Relu", &(spec){"MatMul", 1, 2, 2, {16, 40}, {40, 24}, 0, 0, 0, 1});
  /* Gemm: every transpose, W as B and as A, bias, Relu */
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      char label[96];
      spec b = {"Gemm", 1, 2, 2, {0}, {0}, ta, tb, 1, 0};
      b.x_dims[0] = ta ? 45 : 13; b.x_dims[1] = ta ? 13 : 45;
      b.w_dims[0] = tb ? 21 : 45; b.w_dims[1] = tb ? 45 : 21;
      snprintf(label, sizeof label, "Gemm W as B transA=%d transB=%d + C", ta, tb);
      check_spec(label, &b);
      spec a = {"Gemm", 0, 2, 2, {0}, {0}, ta, tb, 0, ta ^ tb};
      a.w_dims[0] = ta ? 45 : 13; a.w_dims[1] = ta ? 13 : 45;
      a.x_dims[0] = tb ? 21 : 45; a.x_dims[1] = tb ? 45 : 21;
      snprintf(label, sizeof label, "Gemm W as A transA=%d transB=%d%s", ta, tb, ta ^ tb ? " + Relu" : "");
      check_spec(label, &a);
    }
  check_spec("Gemm X[70,300] W[128,300] transB (threads)", &(spec){"Gemm", 1, 2, 2, {70, 300}, {128, 300}, 0, 1, 1, 0});
  /* Gather: an embedding's rows, indices negative too */
  check_spec("Gather W[50,24] idx[3,7]", &(spec){"Gather", 0, 2, 2, {3, 7}, {50, 24}, 0, 0, 0, 0});
  check_spec("Gather W[9] idx[4]", &(spec){"Gather", 0, 1, 1, {4}, {9}, 0, 0, 0, 0});
  /* Conv: W as the GEMM's A (im2col and pointwise), threaded over images */
  check_spec("Conv X[2,3,7,7] W[4,3,3,3]", &(spec){"Conv", 1, 4, 4, {2, 3, 7, 7}, {4, 3, 3, 3}, 0, 0, 0, 0});
  check_spec("Conv X[2,5,4,4] W[6,5,1,1] (pointwise)", &(spec){"Conv", 1, 4, 4, {2, 5, 4, 4}, {6, 5, 1, 1}, 0, 0, 0, 0});
  check_spec("Conv X[8,16,12,12] W[32,16,3,3] + Relu", &(spec){"Conv", 1, 4, 4, {8, 16, 12, 12}, {32, 16, 3, 3}, 0, 0, 0, 1});
  /* depthwise: float32 W runs the direct kernels, float16 W the GEMM path */
  check_spec("Conv depthwise X[2,4,6,6] W[4,1,3,3] group 4", &(spec){"Conv", 1, 4, 4, {2, 4, 6, 6}, {4, 1, 3, 3}, 0, 0, 0, 0});
  CHECK_DONE();
}
