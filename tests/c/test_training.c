/* The training runtime natively (so under the sanitizers too): artifacts for a golden model,
 * train steps, optimizer steps, checkpoint save/reload bit-identical with and without
 * optimizer state, training that continues identically after a reload, properties, export. */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "check.h"
#include "io/onnx_io.h"
#include "runtime/session.h"
#include "webtrain.h"

#define CASE WT_SOURCE_DIR "/tests/golden/cases/regression_mse_adamw/"

typedef struct run {
  wt_state *s;
  wt_module *m;
  wt_optimizer *o;
} run;

static wt_artifacts g_art;
static float g_x[8 * 16], g_t[8 * 3];

static int open_run(run *r, const uint8_t *ckpt, size_t len) {
  memset(r, 0, sizeof *r);
  int rc = wt_state_load(ckpt, len, &r->s);
  if (!rc) rc = wt_module_create(r->s, g_art.training_model.data, g_art.training_model.len,
                                 g_art.eval_model.data, g_art.eval_model.len, &r->m);
  if (!rc) rc = wt_optimizer_create(r->s, g_art.optimizer_model.data, g_art.optimizer_model.len, &r->o);
  if (!rc) rc = wt_optimizer_set_lr(r->o, 1e-2f);
  return rc;
}

static void close_run(run *r) {
  wt_optimizer_free(r->o);
  wt_module_free(r->m);
  wt_state_free(r->s);
}

static int step(run *r, int k) {
  int64_t xd[2] = {8, 16}, td[2] = {8, 3};
  for (int i = 0; i < 8 * 16; i++) g_x[i] = (float)((i * 37 + k * 11) % 17) / 17.0f - 0.5f;
  for (int i = 0; i < 8 * 3; i++) g_t[i] = (float)((i * 7 + k) % 5) / 5.0f;
  WT_TRY(wt_module_set_input(r->m, 0, 0, WT_FLOAT, 2, xd, g_x));
  WT_TRY(wt_module_set_input(r->m, 0, 1, WT_FLOAT, 2, td, g_t));
  WT_TRY(wt_module_train_step(r->m));
  WT_TRY(wt_optimizer_step(r->o));
  return wt_module_lazy_reset_grad(r->m);
}

static int same_params(const run *a, const run *b) {
  int64_t n = wt_state_params_size(a->s, 0);
  if (n != wt_state_params_size(b->s, 0)) return 0;
  float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
  wt_state_params_copy_to(a->s, 0, x, n);
  wt_state_params_copy_to(b->s, 0, y, n);
  int same = memcmp(x, y, sizeof(float) * (size_t)n) == 0;
  free(x);
  free(y);
  return same;
}

/* SGD reads no moment: its steps allocate none, yet its checkpoint carries ONNX Runtime's
 * momentum0 per parameter (zeros, written without being held) and training continues from it
 * identically. */
static void test_sgd_holds_no_moments(void) {
  uint8_t *model;
  size_t len;
  CHECK_OK(wt_read_file(CASE "model.onnx", &model, &len));
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  CHECK_OK(wt_generate_artifacts(model, len, &o, &g_art));
  free(model);
  run a, b;
  CHECK_OK(open_run(&a, g_art.checkpoint.data, g_art.checkpoint.len));
  for (int k = 0; k < 2; k++) CHECK_OK(step(&a, k));
  wt_module_mem mm;
  wt_module_memory(a.m, &mm);
  CHECK(mm.moments == 0 && mm.params > 0);
  uint8_t *saved, *plain;
  size_t saved_len, plain_len;
  CHECK_OK(wt_state_save(a.s, 1, &saved, &saved_len));
  CHECK_OK(wt_state_save(a.s, 0, &plain, &plain_len));
  CHECK(plain_len + sizeof(float) * (size_t)wt_state_params_size(a.s, 1) < saved_len);
  CHECK_OK(open_run(&b, saved, saved_len));
  for (int k = 2; k < 4; k++) {
    CHECK_OK(step(&a, k));
    CHECK_OK(step(&b, k));
  }
  CHECK(same_params(&a, &b));
  free(saved);
  free(plain);
  close_run(&a);
  close_run(&b);
  wt_artifacts_free(&g_art);
}

int main(void) {
  uint8_t *model;
  size_t len;
  CHECK_OK(wt_read_file(CASE "model.onnx", &model, &len));
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW}};
  CHECK_OK(wt_generate_artifacts(model, len, &o, &g_art));
  free(model);

  /* 5 uninterrupted steps */
  run a, b, c;
  CHECK_OK(open_run(&a, g_art.checkpoint.data, g_art.checkpoint.len));
  wt_module_mem mm;
  wt_module_memory(a.m, &mm);
  CHECK(mm.live_peak[0] == 0 && mm.live_peak[1] == 0);
  for (int k = 0; k < 5; k++) {
    CHECK_OK(step(&a, k));
    /* the first training step plans the eval model too, for the same batch shape */
    wt_module_memory(a.m, &mm);
    CHECK(mm.live_peak[0] > 0 && mm.live_peak[1] > 0);
  }

  /* 2 steps, save with optimizer state, reload, 3 more: identical parameters */
  CHECK_OK(open_run(&b, g_art.checkpoint.data, g_art.checkpoint.len));
  for (int k = 0; k < 2; k++) CHECK_OK(step(&b, k));
  CHECK_OK(wt_state_set_int_property(b.s, "epoch", 2));
  CHECK_OK(wt_state_set_float_property(b.s, "best", 0.25f));
  CHECK_OK(wt_state_set_string_property(b.s, "note", "halfway"));
  uint8_t *saved, *saved2, *plain, *plain2;
  size_t saved_len, saved2_len, plain_len, plain2_len;
  CHECK_OK(wt_state_save(b.s, 1, &saved, &saved_len));
  CHECK_OK(wt_state_save(b.s, 0, &plain, &plain_len));
  CHECK(plain_len < saved_len);
  CHECK_OK(open_run(&c, saved, saved_len));
  CHECK_OK(wt_state_save(c.s, 1, &saved2, &saved2_len));
  CHECK(saved_len == saved2_len && memcmp(saved, saved2, saved_len) == 0);
  CHECK(wt_state_property_count(c.s) == 3);
  CHECK(wt_state_property_type(c.s, 0) == 1 && wt_state_property_int(c.s, 0) == 2);
  CHECK(!strcmp(wt_state_property_string(c.s, 2), "halfway"));
  for (int k = 2; k < 5; k++) CHECK_OK(step(&c, k));
  CHECK(same_params(&a, &c));
  close_run(&c);

  /* saved before the first optimizer step (its moments are allocated by that step): the
   * checkpoint still carries the optimizer state, zero moments, and reloads bit-identically;
   * training from it matches the uninterrupted run */
  run d, e;
  CHECK_OK(open_run(&d, g_art.checkpoint.data, g_art.checkpoint.len));
  uint8_t *fresh, *fresh2, *fresh_plain;
  size_t fresh_len, fresh2_len, fresh_plain_len;
  CHECK_OK(wt_state_save(d.s, 1, &fresh, &fresh_len));
  CHECK_OK(wt_state_save(d.s, 0, &fresh_plain, &fresh_plain_len));
  CHECK(fresh_plain_len + 2 * sizeof(float) * (size_t)wt_state_params_size(d.s, 1) < fresh_len);
  CHECK_OK(open_run(&e, fresh, fresh_len));
  CHECK_OK(wt_state_save(e.s, 1, &fresh2, &fresh2_len));
  CHECK(fresh_len == fresh2_len && memcmp(fresh, fresh2, fresh_len) == 0);
  for (int k = 0; k < 5; k++) CHECK_OK(step(&e, k));
  CHECK(same_params(&a, &e));
  close_run(&d);
  close_run(&e);
  free(fresh);
  free(fresh2);
  free(fresh_plain);

  /* without optimizer state: reloads bit-identically, and the optimizer starts afresh */
  wt_state *p;
  CHECK_OK(wt_state_load(plain, plain_len, &p));
  CHECK_OK(wt_state_save(p, 0, &plain2, &plain2_len));
  CHECK(plain_len == plain2_len && memcmp(plain, plain2, plain_len) == 0);
  wt_state_free(p);

  /* export for inference: a plain model whose output matches the eval path */
  const char *outs[1] = {"output"};
  uint8_t *inf;
  size_t inf_len;
  CHECK_OK(wt_module_export_for_inference(a.m, outs, 1, &inf, &inf_len));
  wt_session *s;
  CHECK_OK(wt_session_create(inf, inf_len, &s));
  CHECK(wt_session_input_count(s) == 1);
  wt_session_free(s);

  /* bad checkpoint bytes: an error, not a crash */
  wt_state *bad;
  CHECK(wt_state_load(saved, saved_len / 2, &bad) != WT_OK);

  free(inf);
  free(saved);
  free(saved2);
  free(plain);
  free(plain2);
  close_run(&a);
  close_run(&b);
  wt_artifacts_free(&g_art);
  test_sgd_holds_no_moments();
  CHECK_DONE();
}
