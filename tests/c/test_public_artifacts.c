/* Artifact generation through the public header alone: the four artifacts of a model, a
 * training step on them with the public training API, and the errors a C user gets. Only
 * include/webtrain.h is included, as a user of the library would. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webtrain.h"

#ifndef WT_SOURCE_DIR
#define WT_SOURCE_DIR "."
#endif
#define MODEL WT_SOURCE_DIR "/tests/golden/cases/regression_mse_adamw/model.onnx"

static int failures;
#define EXPECT(cond)                                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "%s:%d: failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              wt_last_error());                                                   \
      failures++;                                                                 \
    }                                                                             \
  } while (0)

static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(*len);
  if (fread(p, 1, *len, f) != *len) *len = 0;
  fclose(f);
  return p;
}

/* One training step on the artifacts: the loss is finite and the parameters move. */
static void train_once(const wt_artifacts_out *a, const uint8_t *model, size_t len) {
  size_t n_train, n_eval, n_opt, n_ckpt;
  const uint8_t *train = wt_artifacts_out_bytes(a, WT_ARTIFACT_TRAINING_MODEL, &n_train);
  const uint8_t *eval = wt_artifacts_out_bytes(a, WT_ARTIFACT_EVAL_MODEL, &n_eval);
  const uint8_t *opt = wt_artifacts_out_bytes(a, WT_ARTIFACT_OPTIMIZER_MODEL, &n_opt);
  const uint8_t *ckpt = wt_artifacts_out_bytes(a, WT_ARTIFACT_CHECKPOINT, &n_ckpt);
  EXPECT(train && eval && opt && ckpt && n_train && n_eval && n_opt && n_ckpt);
  /* the model's input and output shapes, from an inference session on it */
  wt_session *s = NULL;
  EXPECT(wt_session_create(model, len, &s) == WT_OK);
  if (!s) return;
  int64_t xd[8];
  int32_t rank = wt_session_input_rank(s, 0);
  int64_t xn = 1;
  for (int i = 0; i < rank; i++) xn *= (xd[i] = wt_session_input_dim(s, 0, i) > 0 ? wt_session_input_dim(s, 0, i) : 2);
  float *x = malloc(sizeof(float) * (size_t)xn);
  for (int64_t i = 0; i < xn; i++) x[i] = (float)(i % 7) * 0.1f;
  EXPECT(wt_session_set_input(s, 0, WT_FLOAT, rank, xd, x) == WT_OK && wt_session_run(s) == WT_OK);
  int32_t ydt, yrank;
  const int64_t *yd;
  const void *y;
  EXPECT(wt_session_output(s, 0, &ydt, &yrank, &yd, &y) == WT_OK);
  int64_t yn = 1, ydims[8];
  for (int i = 0; i < yrank; i++) yn *= (ydims[i] = yd[i]);
  float *target = calloc((size_t)yn, sizeof(float));
  wt_state *st = NULL;
  wt_module *m = NULL;
  wt_optimizer *o = NULL;
  EXPECT(wt_state_load(ckpt, n_ckpt, &st) == WT_OK);
  EXPECT(st && wt_module_create(st, train, n_train, eval, n_eval, &m) == WT_OK);
  EXPECT(st && wt_optimizer_create(st, opt, n_opt, &o) == WT_OK);
  if (m && o) {
    EXPECT(wt_module_input_count(m, WT_MODE_TRAIN) == 2);
    float before = wt_state_param_data(st, 0)[0];
    EXPECT(wt_module_set_input(m, WT_MODE_TRAIN, 0, WT_FLOAT, rank, xd, x) == WT_OK);
    EXPECT(wt_module_set_input(m, WT_MODE_TRAIN, 1, WT_FLOAT, yrank, ydims, target) == WT_OK);
    EXPECT(wt_module_train_step(m) == WT_OK && wt_optimizer_step(o) == WT_OK);
    int32_t ldt, lrank;
    const int64_t *ld;
    const void *loss;
    EXPECT(wt_module_output(m, WT_MODE_TRAIN, 0, &ldt, &lrank, &ld, &loss) == WT_OK && isfinite(*(const float *)loss));
    EXPECT(wt_state_param_data(st, 0)[0] != before);
  }
  wt_optimizer_free(o);
  wt_module_free(m);
  wt_state_free(st);
  wt_session_free(s);
  free(x);
  free(target);
}

int main(void) {
  size_t len = 0;
  uint8_t *model = read_all(MODEL, &len);
  EXPECT(model && len);
  if (!model) return 1;
  wt_artifact_options o;
  memset(&o, 0, sizeof o);
  o.loss = WT_LOSS_TYPE_MSE;
  o.optimizer = WT_OPTIM_ADAMW;
  o.learning_rate = 0.01f;
  wt_artifacts_out *a = NULL, *f = NULL;
  EXPECT(wt_artifacts_generate(model, len, &o, &a) == WT_OK);
  EXPECT(wt_artifacts_generate_from_file(MODEL, &o, &f) == WT_OK);
  if (a && f) {
    /* from bytes and from the file: the same artifacts */
    for (int32_t k = WT_ARTIFACT_TRAINING_MODEL; k <= WT_ARTIFACT_CHECKPOINT; k++) {
      size_t na, nf;
      const uint8_t *pa = wt_artifacts_out_bytes(a, k, &na), *pf = wt_artifacts_out_bytes(f, k, &nf);
      EXPECT(pa && pf && na == nf && !memcmp(pa, pf, na));
    }
    size_t nn = 1;
    EXPECT(wt_artifacts_out_bytes(a, WT_ARTIFACT_NOMINAL_CHECKPOINT, &nn) == NULL && nn == 0);
    EXPECT(wt_artifacts_out_bytes(a, 99, &nn) == NULL && nn == 0);
    train_once(a, model, len);
  }
  wt_artifacts_out_free(a);
  wt_artifacts_out_free(f);

  /* no optimizer: no optimizer model; a nominal checkpoint when asked */
  wt_artifact_options plain;
  memset(&plain, 0, sizeof plain);
  plain.loss = WT_LOSS_TYPE_MSE;
  plain.nominal_checkpoint = 1;
  EXPECT(wt_artifacts_generate(model, len, &plain, &a) == WT_OK);
  if (a) {
    size_t n;
    EXPECT(wt_artifacts_out_bytes(a, WT_ARTIFACT_OPTIMIZER_MODEL, &n) == NULL && n == 0);
    EXPECT(wt_artifacts_out_bytes(a, WT_ARTIFACT_NOMINAL_CHECKPOINT, &n) != NULL && n > 0);
  }
  wt_artifacts_out_free(a);

  /* errors name what is wrong */
  const char *typo[1] = {"no_such_weight"};
  o.requires_grad = typo;
  o.n_requires_grad = 1;
  EXPECT(wt_artifacts_generate(model, len, &o, &a) != WT_OK && a == NULL);
  EXPECT(strstr(wt_last_error(), "no_such_weight") != NULL);
  EXPECT(wt_artifacts_generate(model, len / 3, NULL, &a) == WT_ERR_PARSE && a == NULL);
  EXPECT(strstr(wt_last_error(), "generate_artifacts") != NULL);
  EXPECT(wt_artifacts_generate_from_file(WT_SOURCE_DIR "/tests/data/missing.onnx", NULL, &a) != WT_OK && a == NULL);
  EXPECT(strstr(wt_last_error(), "missing.onnx") != NULL);
  free(model);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
