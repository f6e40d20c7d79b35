/* Unit tests of the rnn family: LSTM / GRU / RNN forward (hand-checked cells, layout 1 against
 * layout 0, non-uniform sequence_lens against per-row runs, activations and clip), the
 * training ops' extra outputs, and bad inputs (shapes, attributes, lengths) failing cleanly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static unsigned g_seed = 7;
static float frand(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (float)((g_seed >> 8) & 0xffff) / 65535.0f * 2.0f - 1.0f;
}
static float *rnd(int64_t n) {
  float *p = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) p[i] = frand();
  return p;
}
static float sig(float x) { return 1.0f / (1.0f + expf(-x)); }
static const wt_tensor NONE = {0};

/* One LSTM step, hidden 1, input 1, all W = 0.5, R = 0, no bias: every gate sees 0.5. */
static void lstm_hand(void) {
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "LSTM", "", 3, 3);
  wt_node_set_int(g, n, "hidden_size", 1);
  float x[1] = {1}, w[4] = {0.5f, 0.5f, 0.5f, 0.5f}, r[4] = {0};
  wt_tensor in[3] = {harness_f32(3, (int64_t[]){1, 1, 1}, x), harness_f32(3, (int64_t[]){1, 4, 1}, w),
                     harness_f32(3, (int64_t[]){1, 4, 1}, r)};
  wt_tensor out[3];
  CHECK_OK(harness_run(g, n, 17, 3, in, 3, out));
  float i = sig(0.5f), c = i * tanhf(0.5f), h = i * tanhf(c);
  CHECK(out[0].rank == 4 && out[0].dims[0] == 1 && out[0].dims[1] == 1 && out[0].dims[2] == 1);
  CHECK_NEAR(((float *)out[0].data)[0], h, 1e-6);
  CHECK_NEAR(((float *)out[1].data)[0], h, 1e-6);
  CHECK_NEAR(((float *)out[2].data)[0], c, 1e-6);
  harness_free(3, out);
  wt_graph_free(g);
}

/* RNN with Relu and clip 0.3: h = relu(clip(x w + h r)). */
static void rnn_relu_clip(void) {
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "RNN", "", 3, 2);
  wt_node_set_int(g, n, "hidden_size", 1);
  wt_node_set_float(g, n, "clip", 0.3f);
  wt_attr *a = wt_node_add_attr(g, n, "activations", WT_ATTR_STRINGS);
  a->strings = calloc(1, sizeof(char *));
  a->strings[0] = wt_strdup("Relu");
  a->n = 1;
  float x[3] = {0.1f, -1.0f, 2.0f}, w[1] = {1.0f}, r[1] = {0.5f};
  wt_tensor in[3] = {harness_f32(3, (int64_t[]){3, 1, 1}, x), harness_f32(3, (int64_t[]){1, 1, 1}, w),
                     harness_f32(3, (int64_t[]){1, 1, 1}, r)};
  wt_tensor out[2];
  CHECK_OK(harness_run(g, n, 17, 3, in, 2, out));
  const float *y = out[0].data;
  CHECK_NEAR(y[0], 0.1f, 1e-6);   /* 0.1 */
  CHECK_NEAR(y[1], 0.0f, 1e-6);   /* relu(clip(-1 + 0.05)) */
  CHECK_NEAR(y[2], 0.3f, 1e-6);   /* clip(2) */
  CHECK_NEAR(((float *)out[1].data)[0], 0.3f, 1e-6);
  harness_free(2, out);
  wt_graph_free(g);
}

/* Runs an LSTM (G = 4) or GRU (G = 3) with random weights; returns outputs in out[]. */
typedef struct rcase {
  const char *op, *dir;
  int64_t S, B, I, H;
  int layout, lbr, n_out;
  const int32_t *lens;
} rcase;

static int run_case(const rcase *c, float *X, float *W, float *R, float *Bv, float *H0, wt_tensor *out) {
  int lstm = !strcmp(c->op, "LSTM");
  int64_t G = lstm ? 4 : 3, D = strcmp(c->dir, "bidirectional") ? 1 : 2;
  int n_in = 6;
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, c->op, "", n_in, c->n_out);
  wt_node_set_int(g, n, "hidden_size", c->H);
  wt_node_set_string(g, n, "direction", c->dir);
  if (c->layout) wt_node_set_int(g, n, "layout", 1);
  if (c->lbr) wt_node_set_int(g, n, "linear_before_reset", 1);
  wt_tensor in[6] = {
      c->layout ? harness_f32(3, (int64_t[]){c->B, c->S, c->I}, X) : harness_f32(3, (int64_t[]){c->S, c->B, c->I}, X),
      harness_f32(3, (int64_t[]){D, G * c->H, c->I}, W), harness_f32(3, (int64_t[]){D, G * c->H, c->H}, R),
      harness_f32(2, (int64_t[]){D, 2 * G * c->H}, Bv), NONE,
      c->layout ? harness_f32(3, (int64_t[]){c->B, D, c->H}, H0) : harness_f32(3, (int64_t[]){D, c->B, c->H}, H0)};
  if (c->lens) in[4] = (wt_tensor){.dtype = WT_INT32, .rank = 1, .dims = {c->B}, .data = (void *)c->lens};
  int rc = harness_run(g, n, 17, n_in, in, c->n_out, out);
  wt_graph_free(g);
  return rc;
}

/* layout 1 gives the transposed layout-0 results. */
static void layout_one(const char *op) {
  const int64_t S = 3, B = 2, I = 3, H = 4, D = 2, G = strcmp(op, "LSTM") ? 3 : 4;
  float *X = rnd(S * B * I), *W = rnd(D * G * H * I), *R = rnd(D * G * H * H), *Bv = rnd(D * 2 * G * H);
  float *H0 = rnd(D * B * H), *X1 = malloc(sizeof(float) * (size_t)(S * B * I)), *H01 = malloc(sizeof(float) * (size_t)(D * B * H));
  for (int64_t s = 0; s < S; s++)
    for (int64_t b = 0; b < B; b++) memcpy(X1 + (b * S + s) * I, X + (s * B + b) * I, sizeof(float) * (size_t)I);
  for (int64_t d = 0; d < D; d++)
    for (int64_t b = 0; b < B; b++) memcpy(H01 + (b * D + d) * H, H0 + (d * B + b) * H, sizeof(float) * (size_t)H);
  rcase c0 = {op, "bidirectional", S, B, I, H, 0, 0, 2, NULL}, c1 = c0;
  c1.layout = 1;
  wt_tensor o0[2], o1[2];
  CHECK_OK(run_case(&c0, X, W, R, Bv, H0, o0));
  CHECK_OK(run_case(&c1, X1, W, R, Bv, H01, o1));
  CHECK(o1[0].dims[0] == B && o1[0].dims[1] == S && o1[0].dims[2] == D && o1[0].dims[3] == H);
  const float *y0 = o0[0].data, *y1 = o1[0].data, *h0 = o0[1].data, *h1 = o1[1].data;
  int bad = 0;
  for (int64_t s = 0; s < S; s++)
    for (int64_t d = 0; d < D; d++)
      for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++)
          bad += fabsf(y0[((s * D + d) * B + b) * H + j] - y1[((b * S + s) * D + d) * H + j]) > 1e-6f;
  for (int64_t d = 0; d < D; d++)
    for (int64_t b = 0; b < B; b++)
      for (int64_t j = 0; j < H; j++) bad += fabsf(h0[(d * B + b) * H + j] - h1[(b * D + d) * H + j]) > 1e-6f;
  CHECK(bad == 0);
  harness_free(2, o0);
  harness_free(2, o1);
  free(X), free(W), free(R), free(Bv), free(H0), free(X1), free(H01);
}

/* Row b with length L behaves like a batch-1 run on its first L steps; Y is 0 past L. */
static void seq_lens(const char *op, const char *dir, int lbr) {
  const int64_t S = 4, B = 2, I = 3, H = 4, D = strcmp(dir, "bidirectional") ? 1 : 2, G = strcmp(op, "LSTM") ? 3 : 4;
  const int32_t lens[2] = {4, 2};
  float *X = rnd(S * B * I), *W = rnd(D * G * H * I), *R = rnd(D * G * H * H), *Bv = rnd(D * 2 * G * H);
  float *H0 = rnd(D * B * H);
  rcase c = {op, dir, S, B, I, H, 0, lbr, 2, lens};
  wt_tensor o[2];
  CHECK_OK(run_case(&c, X, W, R, Bv, H0, o));
  for (int64_t b = 0; b < B; b++) {
    float x1[4 * 3], h01[2 * 4];
    for (int64_t s = 0; s < lens[b]; s++) memcpy(x1 + s * I, X + (s * B + b) * I, sizeof(float) * (size_t)I);
    for (int64_t d = 0; d < D; d++) memcpy(h01 + d * H, H0 + (d * B + b) * H, sizeof(float) * (size_t)H);
    rcase c1 = {op, dir, lens[b], 1, I, H, 0, lbr, 2, NULL};
    wt_tensor r[2];
    CHECK_OK(run_case(&c1, x1, W, R, Bv, h01, r));
    const float *y = o[0].data, *yr = r[0].data, *yh = o[1].data, *yhr = r[1].data;
    int bad = 0;
    for (int64_t s = 0; s < S; s++)
      for (int64_t d = 0; d < D; d++)
        for (int64_t j = 0; j < H; j++) {
          float want = s < lens[b] ? yr[(s * D + d) * H + j] : 0.0f;
          bad += fabsf(y[((s * D + d) * B + b) * H + j] - want) > 1e-6f;
        }
    for (int64_t d = 0; d < D; d++)
      for (int64_t j = 0; j < H; j++) bad += fabsf(yh[(d * B + b) * H + j] - yhr[d * H + j]) > 1e-6f;
    CHECK(bad == 0);
    harness_free(2, r);
  }
  harness_free(2, o);
  free(X), free(W), free(R), free(Bv), free(H0);
}

/* LSTMTraining: Y equals LSTM's, all cell states end with Y_c, the gates are in (0, 1) / (-1, 1). */
static void lstm_training_outputs(void) {
  const int64_t S = 3, B = 2, I = 3, H = 4;
  float *X = rnd(S * B * I), *W = rnd(4 * H * I), *R = rnd(4 * H * H);
  wt_tensor in[3] = {harness_f32(3, (int64_t[]){S, B, I}, X), harness_f32(3, (int64_t[]){1, 4 * H, I}, W),
                     harness_f32(3, (int64_t[]){1, 4 * H, H}, R)};
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "LSTMTraining", "com.microsoft", 3, 5);
  wt_node_set_int(g, n, "hidden_size", H);
  int n2 = harness_node(g, "LSTM", "", 3, 3);
  wt_node_set_int(g, n2, "hidden_size", H);
  wt_tensor o[5], ref[3];
  CHECK_OK(harness_run(g, n, 17, 3, in, 5, o));
  CHECK_OK(harness_run(g, n2, 17, 3, in, 3, ref));
  CHECK(o[3].rank == 4 && o[3].dims[3] == H && o[4].rank == 4 && o[4].dims[3] == 4 * H);
  CHECK(memcmp(o[0].data, ref[0].data, sizeof(float) * (size_t)(S * B * H)) == 0);
  CHECK(memcmp(o[2].data, ref[2].data, sizeof(float) * (size_t)(B * H)) == 0);
  CHECK(memcmp((float *)o[3].data + (S - 1) * B * H, ref[2].data, sizeof(float) * (size_t)(B * H)) == 0);
  const float *gt = o[4].data;
  int bad = 0;
  for (int64_t e = 0; e < S * B; e++)
    for (int64_t j = 0; j < 4 * H; j++) {
      float v = gt[e * 4 * H + j];
      bad += j < 3 * H ? !(v > 0 && v < 1) : !(v > -1 && v < 1);
    }
  CHECK(bad == 0);
  harness_free(5, o);
  harness_free(3, ref);
  wt_graph_free(g);
  free(X), free(W), free(R);
}

/* Bad inputs return errors, not crashes. */
static void bad_inputs(void) {
  float buf[256] = {0};
  wt_tensor X = harness_f32(3, (int64_t[]){2, 1, 3}, buf);
  wt_tensor W = harness_f32(3, (int64_t[]){1, 16, 3}, buf), R = harness_f32(3, (int64_t[]){1, 16, 4}, buf);
  wt_tensor Wbad = harness_f32(3, (int64_t[]){1, 12, 3}, buf);
  wt_tensor out[7];
  wt_graph *g = wt_graph_new();
  int n = harness_node(g, "LSTM", "", 3, 1);
  wt_node_set_int(g, n, "hidden_size", 4);
  CHECK(harness_run(g, n, 17, 3, (wt_tensor[]){X, Wbad, R}, 1, out) == WT_ERR_SHAPE);
  CHECK(strstr(wt_error_message(), "input 'W'") != NULL);
  int n2 = harness_node(g, "GRU", "", 3, 1);
  wt_node_set_int(g, n2, "hidden_size", 4);
  wt_node_set_string(g, n2, "direction", "sideways");
  CHECK(harness_run(g, n2, 17, 3, (wt_tensor[]){X, Wbad, harness_f32(3, (int64_t[]){1, 12, 4}, buf)}, 1, out) ==
        WT_ERR_INVALID_ARG);
  int n3 = harness_node(g, "RNN", "", 3, 1);
  wt_attr *a = wt_node_add_attr(g, n3, "activations", WT_ATTR_STRINGS);
  a->strings = calloc(1, sizeof(char *));
  a->strings[0] = wt_strdup("Gelu");
  a->n = 1;
  CHECK(harness_run(g, n3, 17, 3, (wt_tensor[]){X, harness_f32(3, (int64_t[]){1, 4, 3}, buf),
                                                harness_f32(3, (int64_t[]){1, 4, 4}, buf)}, 1, out) == WT_ERR_UNSUPPORTED);
  CHECK(strstr(wt_error_message(), "Gelu") != NULL);
  /* sequence_lens beyond the sequence: a run-time error */
  int32_t lens[1] = {5};
  wt_tensor L = {.dtype = WT_INT32, .rank = 1, .dims = {1}, .data = lens};
  CHECK(harness_run(g, n, 17, 5, (wt_tensor[]){X, W, R, NONE, L}, 1, out) == WT_ERR_RUNTIME);
  harness_free(1, out);
  /* the training ops refuse what ORT's refuse */
  int n4 = harness_node(g, "LSTMTraining", "com.microsoft", 3, 5);
  wt_node_set_int(g, n4, "hidden_size", 4);
  wt_node_set_float(g, n4, "clip", 2.0f);
  CHECK(harness_run(g, n4, 17, 3, (wt_tensor[]){X, W, R}, 5, out) == WT_ERR_UNSUPPORTED);
  /* LSTMGrad: varying lengths are refused at run time; missing iofc at plan time */
  int n5 = harness_node(g, "LSTMGrad", "com.microsoft", 12, 7);
  wt_node_set_int(g, n5, "hidden_size", 4);
  wt_tensor all = harness_f32(4, (int64_t[]){2, 1, 1, 4}, buf), iofc = harness_f32(4, (int64_t[]){2, 1, 1, 16}, buf);
  lens[0] = 1;
  wt_tensor gin[12] = {X, W, R, L, NONE, NONE, all, all, iofc, all, NONE, NONE};
  CHECK(harness_run(g, n5, 17, 12, gin, 7, out) == WT_ERR_UNSUPPORTED);
  CHECK(strstr(wt_error_message(), "varying sequence lengths") != NULL);
  harness_free(7, out);
  gin[3] = NONE;
  gin[8] = NONE;
  CHECK(harness_run(g, n5, 17, 12, gin, 7, out) == WT_ERR_INVALID_ARG);
  wt_graph_free(g);
}

int main(void) {
  lstm_hand();
  rnn_relu_clip();
  layout_one("LSTM");
  layout_one("GRU");
  seq_lens("LSTM", "forward", 0);
  seq_lens("LSTM", "bidirectional", 0);
  seq_lens("GRU", "reverse", 0);
  seq_lens("GRU", "bidirectional", 1);
  lstm_training_outputs();
  bad_inputs();
  CHECK_DONE();
}
