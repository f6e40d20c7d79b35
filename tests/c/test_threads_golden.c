/* Every golden model (tests/golden/cases/<name>/model.onnx, with its loss, optimizer, frozen
 * parameters and recorded step inputs from case.json) trained natively for 3 steps at 1, 2, 3
 * and 4 threads: the losses, every gradient, and every parameter and buffer after each
 * optimizer step are bit-identical to the single-threaded run. The threaded runs split even
 * small kernels (wt_pool_set_split_small), so these small models take the threaded paths.
 * In the plain native tree (WT_COUNT_ALLOCS) it also counts heap allocations on every thread
 * during each step after the first (train step, optimizer step, gradient reset): none. The tiny
 * transformer is also trained with float16 frozen weights (test_frozen_half). */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/half.h"
#include "base/pool.h"
#include "check.h"
#ifdef WT_COUNT_ALLOCS
#include "alloc_count.h"
#define COUNTED "; no step after the first allocates"
#else /* a sanitizer tree: its allocator stays */
static void wt_alloc_count_start(void) {}
static long wt_alloc_count_stop(void) { return 0; }
#define COUNTED ""
#endif
#include "io/onnx_io.h"
#include "runtime/planner.h"
#include "webtrain.h"

#define CASES WT_SOURCE_DIR "/tests/golden/cases/"
#define STEPS 3

/* ---- just enough of case.json --------------------------------------------------------------- */

/* The string value after `"key": "` at or after p, copied into out; NULL when absent. */
static const char *json_string(const char *p, const char *key, char *out, size_t cap) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  const char *q = strstr(p, pat);
  if (!q) return NULL;
  q += strlen(pat);
  size_t n = 0;
  while (q[n] && q[n] != '"' && n + 1 < cap) n++;
  memcpy(out, q, n);
  out[n] = 0;
  return q + n;
}

/* The strings of the list `"key": [...]` (names without quotes or escapes), at most max. */
static int json_strings(const char *p, const char *key, char names[][64], int max) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\": [", key);
  const char *q = strstr(p, pat);
  if (!q) return 0;
  q += strlen(pat);
  int n = 0;
  while (*q && *q != ']' && n < max) {
    const char *a = strchr(q, '"');
    if (!a || a > strchr(q, ']')) break;
    const char *b = strchr(a + 1, '"');
    size_t len = (size_t)(b - a - 1) < 63 ? (size_t)(b - a - 1) : 63;
    memcpy(names[n], a + 1, len);
    names[n++][len] = 0;
    q = b + 1;
  }
  return n;
}

typedef struct feed {
  int32_t dtype, rank;
  int64_t dims[8];
  void *data;
} feed;

static int dtype_code(const char *s) {
  if (!strcmp(s, "float32")) return WT_FLOAT;
  if (!strcmp(s, "int32")) return WT_INT32;
  if (!strcmp(s, "int64")) return WT_INT64;
  return 0;
}

/* Input `name` of step k: "file": "step<k>__<name>.bin", then its dtype and shape. */
static int load_feed(const char *dir, const char *json, int k, const char *name, feed *f) {
  char file[160], pat[200], dt[32], path[512];
  snprintf(file, sizeof file, "step%d__%s.bin", k, name);
  snprintf(pat, sizeof pat, "\"file\": \"%s\"", file);
  const char *q = strstr(json, pat);
  if (!q || !json_string(q, "dtype", dt, sizeof dt)) return -1;
  f->dtype = dtype_code(dt);
  const char *sh = strstr(q, "\"shape\": [");
  if (!f->dtype || !sh) return -1;
  sh += strlen("\"shape\": [");
  f->rank = 0;
  while (isspace((unsigned char)*sh)) sh++;
  while (*sh != ']' && f->rank < 8) {
    f->dims[f->rank++] = strtoll(sh, (char **)&sh, 10);
    while (*sh == ',' || isspace((unsigned char)*sh)) sh++;
  }
  snprintf(path, sizeof path, "%s%s", dir, file);
  uint8_t *bytes;
  size_t len;
  if (wt_read_file(path, &bytes, &len)) return -1;
  f->data = bytes;
  return 0;
}

/* ---- one run -------------------------------------------------------------------------------- */

typedef struct trace {
  float *v;
  int64_t n, cap;
} trace;

static void record(trace *t, const float *v, int64_t n) {
  if (t->n + n > t->cap) { /* outside the counted calls */
    t->cap = (t->n + n) * 2;
    t->v = realloc(t->v, sizeof(float) * (size_t)t->cap);
  }
  memcpy(t->v + t->n, v, sizeof(float) * (size_t)n);
  t->n += n;
}

static int64_t numel(const wt_state *s, int32_t i) {
  int64_t n = 1;
  for (int32_t a = 0; a < wt_state_param_rank(s, i); a++) n *= wt_state_param_dim(s, i, a);
  return n;
}

/* Record only the trained parameters (not frozen ones: float16 ones have no float data). */
static int g_trained_only;

/* The allocations of steps after the first are added to *allocs (where they are counted). */
static int train(const wt_artifacts *art, const char *dir, const char *json, trace *t, long *allocs) {
  wt_state *s = NULL;
  wt_module *m = NULL;
  wt_optimizer *o = NULL;
  int rc = wt_state_load(art->checkpoint.data, art->checkpoint.len, &s);
  if (!rc) rc = wt_module_create(s, art->training_model.data, art->training_model.len,
                                 art->eval_model.data, art->eval_model.len, &m);
  if (!rc) rc = wt_optimizer_create(s, art->optimizer_model.data, art->optimizer_model.len, &o);
  if (!rc) rc = wt_optimizer_set_lr(o, 1e-2f);
  for (int k = 0; k < STEPS && !rc; k++) {
    feed f[8] = {{0}};
    int32_t n_in = wt_module_input_count(m, WT_MODE_TRAIN);
    for (int32_t i = 0; i < n_in && i < 8 && !rc; i++) {
      rc = load_feed(dir, json, k, wt_module_input_name(m, WT_MODE_TRAIN, i), &f[i]);
      if (rc) {
        fprintf(stderr, "%s: no step %d input %s\n", dir, k, wt_module_input_name(m, WT_MODE_TRAIN, i));
        break;
      }
      rc = wt_module_set_input(m, WT_MODE_TRAIN, i, f[i].dtype, f[i].rank, f[i].dims, f[i].data);
    }
    if (k > 0) wt_alloc_count_start();
    if (!rc) rc = wt_module_train_step(m);
    if (k > 0) *allocs += wt_alloc_count_stop();
    for (int32_t i = 0; i < 8; i++) free(f[i].data);
    for (int32_t i = 0; i < wt_module_output_count(m, WT_MODE_TRAIN) && !rc; i++) {
      int32_t dtype, rank;
      const int64_t *dims;
      const void *data;
      rc = wt_module_output(m, WT_MODE_TRAIN, i, &dtype, &rank, &dims, &data);
      int64_t n = 1;
      for (int32_t a = 0; a < rank; a++) n *= dims[a];
      if (!rc && dtype == WT_FLOAT) record(t, data, n);
    }
    for (int32_t i = 0; i < wt_state_param_count(s) && !rc; i++)
      if (wt_state_param_grad(s, i)) record(t, wt_state_param_grad(s, i), numel(s, i));
    if (k > 0) wt_alloc_count_start();
    if (!rc) rc = wt_optimizer_step(o);
    if (!rc) rc = wt_module_lazy_reset_grad(m);
    if (k > 0) *allocs += wt_alloc_count_stop();
    for (int32_t i = 0; i < wt_state_param_count(s) && !rc; i++)
      if (wt_state_param_data(s, i) && (!g_trained_only || wt_state_param_requires_grad(s, i)))
        record(t, wt_state_param_data(s, i), numel(s, i)); /* float ones */
  }
  wt_optimizer_free(o);
  wt_module_free(m);
  wt_state_free(s);
  return rc;
}

/* Trains art at 1 thread into *ref, then at 2-4 threads (small kernels split and not): the same
 * bits every time, and no allocation in a step after the first. */
static void check_threads(const char *name, const wt_artifacts *art, const char *dir,
                          const char *json, trace *ref) {
  trace t = {0};
  wt_set_threads(1);
  wt_pool_set_split_small(0);
  long allocs = 0;
  CHECK_OK(train(art, dir, json, ref, &allocs));
  CHECK(ref->n > 0);
  for (int32_t threads = 2; threads <= 4; threads++) {
    wt_set_threads(threads);
    for (int split = 0; split < 2; split++) {
      wt_pool_set_split_small(split);
      t.n = 0;
      CHECK_OK(train(art, dir, json, &t, &allocs));
      int same = t.n == ref->n && !memcmp(t.v, ref->v, sizeof(float) * (size_t)ref->n);
      if (!same) fprintf(stderr, "%s: %d threads (split %d) differ from 1 thread\n", name, threads, split);
      CHECK(same);
    }
  }
  wt_pool_set_split_small(0);
  /* The plan's fusions (a Relu in a GEMM, transposes read through a GEMM's trans flags or
   * written by one) against every step run as its op alone: the same bits. */
  wt_set_threads(1);
  wt_plan_set_fusion(0);
  t.n = 0;
  CHECK_OK(train(art, dir, json, &t, &allocs));
  wt_plan_set_fusion(1);
  int plain_same = t.n == ref->n && !memcmp(t.v, ref->v, sizeof(float) * (size_t)ref->n);
  if (!plain_same) {
    double worst = 0;
    int64_t at = -1, nd = 0;
    for (int64_t i = 0; i < t.n && i < ref->n; i++) {
      double d = fabs((double)t.v[i] - ref->v[i]) / (fabs(ref->v[i]) + 1e-6);
      nd += t.v[i] != ref->v[i];
      if (d > worst) worst = d, at = i;
    }
    fprintf(stderr, "%s: the plan without fusions differs from the fused one (%lld of %lld, worst rel %g at %lld)\n", name, (long long)nd, (long long)ref->n, worst, (long long)at);
  }
  CHECK(plain_same);
  if (allocs) fprintf(stderr, "%s: %ld heap allocations in steps after the first\n", name, allocs);
  CHECK(allocs == 0);
  printf("%s: %lld values bit-identical at 1, 2, 3, 4 threads and without the plan's fusions" COUNTED "\n", name, (long long)ref->n);
  free(t.v);
}

/* ---- every case ----------------------------------------------------------------------------- */

static int loss_type(const char *json) {
  char loss[64];
  if (!json_string(json, "loss", loss, sizeof loss)) return WT_LOSS_TYPE_NONE;
  if (!strcmp(loss, "CrossEntropyLoss")) return WT_LOSS_TYPE_CE;
  if (!strcmp(loss, "MSELoss")) return WT_LOSS_TYPE_MSE;
  if (!strcmp(loss, "L1Loss")) return WT_LOSS_TYPE_L1;
  if (!strcmp(loss, "BCEWithLogitsLoss")) return WT_LOSS_TYPE_BCE;
  return WT_LOSS_TYPE_NONE;
}

/* 0: trained (or not a case), 1: skipped. */
static int test_case(const char *name, int *trained) {
  char dir[512], path[600];
  snprintf(dir, sizeof dir, CASES "%s/", name);
  snprintf(path, sizeof path, "%scase.json", dir);
  uint8_t *raw, *model;
  size_t raw_len, model_len;
  if (wt_read_file(path, &raw, &raw_len)) return 0; /* not a case */
  char *json = realloc(raw, raw_len + 1);
  json[raw_len] = 0;
  snprintf(path, sizeof path, "%smodel.onnx", dir);
  CHECK_OK(wt_read_file(path, &model, &model_len));

  static char frozen[32][64], trained_names[64][64];
  const char *frozen_p[32], *trained_p[64];
  int n_frozen = json_strings(json, "frozen_params", frozen, 32);
  int n_trained = json_strings(json, "requires_grad", trained_names, 64);
  for (int i = 0; i < n_frozen; i++) frozen_p[i] = frozen[i];
  for (int i = 0; i < n_trained; i++) trained_p[i] = trained_names[i];
  wt_artifacts_opts o = {.requires_grad = trained_p, .n_requires_grad = n_trained,
                         .frozen_params = frozen_p, .n_frozen_params = n_frozen};
  /* LoRA cases: the adapters as generated (their case values do not matter for bit-identity) */
  static char targets[16][64];
  const char *targets_p[16];
  const char *lora = strstr(json, "\"lora\": {");
  if (lora) {
    o.lora.enabled = 1;
    o.lora.rank = strtol(strstr(lora, "\"rank\": ") + 8, NULL, 10);
    o.lora.alpha = strtof(strstr(lora, "\"alpha\": ") + 9, NULL);
    o.lora.n_targets = json_strings(lora, "targets", targets, 16);
    for (int i = 0; i < o.lora.n_targets; i++) targets_p[i] = targets[i];
    o.lora.targets = targets_p;
  }
  o.loss.type = loss_type(json);
  if (o.loss.type == WT_LOSS_TYPE_NONE) {
    /* A custom loss (two_output_custom_loss: built with onnxblock in tests/golden/golden.mjs). */
    printf("%s: custom loss, not trained here\n", name);
    free(model);
    free(json);
    return 1;
  }
  const char *opt = strstr(json, "\"optimizer\"");
  o.optimizer.type = opt && !strncmp(strstr(opt, "\"type\": ") + 8, "\"SGD\"", 5) ? WT_OPTIM_SGD : WT_OPTIM_ADAMW;
  wt_artifacts art;
  int rc = wt_generate_artifacts(model, model_len, &o, &art);
  free(model);
  if (rc) {
    fprintf(stderr, "%s: artifacts not generated (%s): not trained\n", name, wt_error_message());
    free(json);
    return 0;
  }
  trace ref = {0};
  check_threads(name, &art, dir, json, &ref);
  (*trained)++;
  free(ref.v);
  wt_artifacts_free(&art);
  free(json);
  return 0;
}

/* ---- float16 frozen weights ------------------------------------------------------------------
 * The tiny transformer with its embedding and projection weights frozen as float16 (frozen_dtype:
 * some in the checkpoint, some left as the models' initializers) and LayerNorm ln1 and the head
 * trained, so gradients flow back through every frozen GEMM: losses, gradients and parameters
 * over 3 steps agree with the same model whose float32 weights hold the float16 values, and are
 * bit-identical at 1-4 threads with no allocation in a step. */
static void round_to_half(wt_graph *g, const char *name) {
  int v = wt_graph_find(g, name);
  CHECK(v >= 0 && g->values[v].dtype == WT_FLOAT);
  if (v < 0) return;
  float *x = g->values[v].data;
  for (size_t i = 0; i < g->values[v].nbytes / 4; i++) x[i] = wt_f16_to_f32(wt_f32_to_f16(x[i]));
}

typedef struct half_case {
  const char *name;
  int n_trained, n_frozen, n_half, optim;
  const char *trained[8], *frozen[8], *half[8]; /* half: the weights that become float16 */
  const char *kept;                             /* a line the report must have */
  int n_half_in_ckpt;                           /* frozen float16 parameters in the checkpoint */
} half_case;

static void test_frozen_half(const half_case *hc) {
  const char *name = hc->name;
  char dir[512], path[600];
  snprintf(dir, sizeof dir, CASES "%s/", name);
  snprintf(path, sizeof path, "%scase.json", dir);
  uint8_t *raw, *model;
  size_t raw_len, model_len;
  CHECK_OK(wt_read_file(path, &raw, &raw_len));
  char *json = realloc(raw, raw_len + 1);
  json[raw_len] = 0;
  snprintf(path, sizeof path, "%smodel.onnx", dir);
  CHECK_OK(wt_read_file(path, &model, &model_len));
  wt_artifacts_opts o = {.requires_grad = hc->trained, .n_requires_grad = hc->n_trained,
                         .frozen_params = hc->frozen, .n_frozen_params = hc->n_frozen,
                         .frozen_dtype = WT_FLOAT16};
  o.loss.type = WT_LOSS_TYPE_CE;
  o.optimizer.type = hc->optim;
  wt_artifacts art, rounded;
  CHECK_OK(wt_generate_artifacts(model, model_len, &o, &art));
  CHECK(art.frozen_kept && strstr(art.frozen_kept, hc->kept));
  for (int i = 0; i < hc->n_half; i++) {
    char line[128];
    snprintf(line, sizeof line, "%s:", hc->half[i]);
    CHECK(!strstr(art.frozen_kept, line)); /* converted */
  }
  /* float16 in the checkpoint: no float data to read (a weight PyTorch reads through a
   * Transpose is there transposed, under the Transpose output's name) */
  wt_state *s = NULL;
  CHECK_OK(wt_state_load(art.checkpoint.data, art.checkpoint.len, &s));
  int n_half = 0;
  for (int32_t i = 0; s && i < wt_state_param_count(s); i++) n_half += !wt_state_param_data(s, i);
  CHECK(n_half == hc->n_half_in_ckpt);
  wt_state_free(s);
  wt_graph *g;
  CHECK_OK(wt_onnx_read(model, model_len, NULL, &g));
  for (int i = 0; i < hc->n_half; i++) round_to_half(g, hc->half[i]);
  o.frozen_dtype = 0;
  CHECK_OK(wt_generate_artifacts_graph(g, &o, &rounded));
  trace a = {0}, b = {0};
  g_trained_only = 1;
  char label[160];
  snprintf(label, sizeof label, "%s, float16 frozen weights", name);
  check_threads(label, &art, dir, json, &a);
  long allocs = 0;
  wt_set_threads(1);
  CHECK_OK(train(&rounded, dir, json, &b, &allocs));
  CHECK(a.n == b.n && a.n > 0);
  double worst = 0;
  for (int64_t i = 0; a.n == b.n && i < a.n; i++) {
    double d = fabs((double)a.v[i] - b.v[i]) / (1 + fabs(b.v[i]));
    if (d > worst) worst = d;
  }
  printf("%s vs float32 holding them: %lld values, max relative difference %.3g\n", label,
         (long long)a.n, worst);
  CHECK(worst <= 1e-5);
  g_trained_only = 0;
  free(a.v);
  free(b.v);
  wt_artifacts_free(&art);
  wt_artifacts_free(&rounded);
  free(model);
  free(json);
}

int main(void) {
  DIR *d = opendir(CASES);
  CHECK(d != NULL);
  int trained = 0, cases = 0, skipped = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    cases++;
    skipped += test_case(e->d_name, &trained);
  }
  if (d) closedir(d);
  CHECK(cases > 0 && trained + skipped == cases && skipped <= 1);
  /* the transformer: embeddings and projections (through PyTorch's Transpose, some in the
   * checkpoint, some left in the models) float16, LayerNorm ln1 and the head trained */
  test_frozen_half(&(half_case){"tiny_transformer_frozen_adamw", 4, 4, 7, WT_OPTIM_ADAMW,
                                {"ln1.weight", "ln1.bias", "head.weight", "head.bias"},
                                {"tok_emb.weight", "q_proj.weight", "k_proj.weight", "pos_emb"},
                                {"tok_emb.weight", "q_proj.weight", "k_proj.weight", "v_proj.weight",
                                 "out_proj.weight", "ff1.weight", "ff2.weight"},
                                "pos_emb: read by Add", 3});
  /* the CNN: conv2's weight float16 while conv1 trains, so ConvGrad reads it for dX */
  test_frozen_half(&(half_case){"cnn_bn_ce_sgd", 4, 1, 1, WT_OPTIM_SGD,
                                {"conv1.weight", "conv1.bias", "fc.weight", "fc.bias"},
                                {"conv2.weight"}, {"conv2.weight"},
                                "bn1.weight: read by BatchNormalization", 1});
  wt_set_threads(1);
  CHECK_DONE();
}
