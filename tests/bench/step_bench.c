/* Native training-step benchmark at several thread counts (not a ctest): ms per step (train
 * step + optimizer step + reset) of a forward model turned into artifacts here, CE loss over
 * `classes` classes, random inputs, best median of 3 runs of `steps` steps.
 *   build/native/wt_step_bench MODEL.onnx BATCH DIMS CLASSES adamw|sgd STEPS THREADS...
 *   e.g. build/native/wt_step_bench build/bench-models/mlp_784_256_256_10.onnx 64 784 10 adamw 50 1 2
 * DIMS: the input's dims after the batch, comma-separated (1,28,28). Trainable: every float
 * initializer of rank >= 1 (BatchNorm's running statistics are buffers either way).
 * WT_STEP_BENCH_PLAIN=1: plans without the planner's fusions (wt_plan_set_fusion), for A/B.
 * WT_WINOGRAD=0 / 1 / 2: 3x3 convolutions by im2col + GEMM only / Winograd where it wins (the
 * default) / Winograd wherever the geometry allows (backend/cpu/conv_winograd.h), read by each session. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifacts/artifacts.h"
#include "io/onnx_io.h"
#include "ir/ir.h"
#include "runtime/planner.h"
#include "webtrain.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: %s MODEL BATCH DIMS CLASSES adamw|sgd STEPS THREADS...\n", argv[0]);
    return 2;
  }
  int64_t batch = atoll(argv[2]), dims[8] = {batch};
  int rank = 1;
  for (char *p = argv[3]; *p && rank < 8;) {
    dims[rank++] = strtoll(p, &p, 10);
    if (*p == ',') p++;
  }
  int classes = atoi(argv[4]), sgd = !strcmp(argv[5], "sgd"), steps = atoi(argv[6]);
  const char *plain = getenv("WT_STEP_BENCH_PLAIN");
  if (plain && *plain == '1') wt_plan_set_fusion(0);
  uint8_t *model;
  size_t len;
  if (wt_read_file(argv[1], &model, &len)) return fprintf(stderr, "%s\n", wt_last_error()), 1;
  /* every float initializer trainable */
  wt_graph *g;
  if (wt_onnx_read(model, len, NULL, &g)) return fprintf(stderr, "%s\n", wt_last_error()), 1;
  const char **names = malloc(sizeof(char *) * (size_t)g->n_values);
  int n_names = 0;
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i].data && g->values[i].dtype == WT_FLOAT && g->values[i].rank > 0)
      names[n_names++] = g->values[i].name;
  wt_artifacts_opts o = {.requires_grad = names, .n_requires_grad = n_names,
                         .loss = {.type = WT_LOSS_TYPE_CE},
                         .optimizer = {.type = sgd ? WT_OPTIM_SGD : WT_OPTIM_ADAMW}};
  wt_artifacts art;
  if (wt_generate_artifacts(model, len, &o, &art)) return fprintf(stderr, "%s\n", wt_last_error()), 1;
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  float *x = malloc(sizeof(float) * (size_t)n);
  int32_t *y = malloc(sizeof(int32_t) * (size_t)batch);
  unsigned seed = 1;
  for (int64_t i = 0; i < n; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 9) / 8388608.0f - 0.5f;
  for (int64_t i = 0; i < batch; i++) y[i] = (int32_t)(((seed = seed * 1664525u + 1013904223u) >> 9) % (unsigned)classes);
  printf("%s batch %lld:", argv[1], (long long)batch);
  for (int a = 7; a < argc; a++) {
    int32_t t = wt_set_threads(atoi(argv[a]));
    wt_state *s;
    wt_module *m;
    wt_optimizer *op;
    if (wt_state_load(art.checkpoint.data, art.checkpoint.len, &s) ||
        wt_module_create(s, art.training_model.data, art.training_model.len, NULL, 0, &m) ||
        wt_optimizer_create(s, art.optimizer_model.data, art.optimizer_model.len, &op) ||
        wt_optimizer_set_lr(op, 1e-4f))
      return fprintf(stderr, "%s\n", wt_last_error()), 1;
    int64_t ydims[1] = {batch};
    double best = 1e30;
    for (int run = 0; run < 4; run++) {
      double *ms = malloc(sizeof(double) * (size_t)steps);
      for (int k = 0; k < steps; k++) {
        double t0 = now();
        if (wt_module_set_input(m, WT_MODE_TRAIN, 0, WT_FLOAT, rank, dims, x) ||
            wt_module_set_input(m, WT_MODE_TRAIN, 1, WT_INT32, 1, ydims, y) ||
            wt_module_train_step(m) || wt_optimizer_step(op) || wt_module_lazy_reset_grad(m))
          return fprintf(stderr, "%s\n", wt_last_error()), 1;
        ms[k] = (now() - t0) * 1e3;
      }
      qsort(ms, (size_t)steps, sizeof(double), cmp);
      if (run > 0 && ms[steps / 2] < best) best = ms[steps / 2]; /* run 0 warms up */
      free(ms);
    }
    printf("  %d thread%s %.3f ms", t, t == 1 ? "" : "s", best);
    fflush(stdout);
    wt_optimizer_free(op);
    wt_module_free(m);
    wt_state_free(s);
  }
  printf("\n");
  return 0;
}
