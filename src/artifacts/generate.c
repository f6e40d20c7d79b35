/* generate_artifacts: forward model -> training model, eval model, optimizer model and
 * checkpoint (ONNX Runtime's conventions, docs/api.md). Steps: pick the parameters, add the
 * loss, derive the eval model, differentiate, add the gradient accumulators, write. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "autodiff/autodiff.h"
#include "base/status.h"
#include "io/checkpoint.h"
#include "io/onnx_io.h"
#include "shape/shape.h"

static int listed(const char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return 1;
  return 0;
}

/* BatchNormalization running statistics in training mode are state the train step updates:
 * webtrain keeps them as frozen parameters (ONNX Runtime leaves them constant, its #19370). */
static int is_bn_running_stat(const wt_graph *g, int v) {
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    if (strcmp(n->op_type, "BatchNormalization") || n->domain[0]) continue;
    if (!wt_attr_int(n, "training_mode", 0)) continue;
    if ((n->n_inputs > 3 && n->inputs[3] == v) || (n->n_inputs > 4 && n->inputs[4] == v)) return 1;
  }
  return 0;
}

/* How to export a PyTorch model whose weights stay named initializers (said when they did not). */
#define EXPORT_FOR_TRAINING "export it for training: torch.onnx.export(..., " \
  "training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)"

/* A float initializer: what can be trained. */
static int is_float_param(const wt_graph *g, int v) {
  return (g->values[v].flags & WT_VALUE_INITIALIZER) && g->values[v].dtype == WT_FLOAT;
}

/* PyTorch's name for a value it made up ("onnx::MatMul_123"): a weight constant folding rewrote. */
static int is_anonymous(const char *name) { return !strncmp(name, "onnx::", 6); }

/* Levenshtein distance in half steps, capped (anything beyond `cap` counts as cap + 1): an
 * insertion, deletion or substitution costs 2, a change of case only 1 ('w' is nearer 'W' than 'B'). */
static int edit_distance(const char *a, const char *b, int cap) {
  size_t la = strlen(a), lb = strlen(b);
  if (2 * (la > lb ? la - lb : lb - la) > (size_t)cap) return cap + 1;
  int *row = malloc(sizeof(int) * (lb + 1));
  if (!row) return cap + 1;
  for (size_t j = 0; j <= lb; j++) row[j] = 2 * (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = 2 * (int)i;
    for (size_t j = 1; j <= lb; j++) {
      char x = a[i - 1], y = b[j - 1];
      int up = row[j], best = diag + (x == y ? 0 : tolower((unsigned char)x) == tolower((unsigned char)y) ? 1 : 2);
      if (up + 2 < best) best = up + 2;
      if (row[j - 1] + 2 < best) best = row[j - 1] + 2;
      diag = up;
      row[j] = best;
    }
  }
  int d = row[lb];
  free(row);
  return d > cap ? cap + 1 : d;
}

/* "; did you mean 'a' or 'b'? (parameters: a, b, c, ... 12 more)" for a name that is no
 * parameter: the float initializers nearest to it by edit distance, then the first few; the
 * export advice when they are anonymous (folded) constants. */
static void suggest_params(const wt_graph *g, const char *name, char *buf, size_t cap) {
  enum { LISTED = 8, TIES = 3 };
  /* near: at most a third of the name's characters (2 at least) edited, in half steps, and
   * fewer edits than the name has characters (an 'X' is near no 'W') */
  int len = (int)strlen(name), limit = 2 * (len / 3 > 2 ? len / 3 : 2);
  if (limit > 2 * len - 1) limit = 2 * len - 1;
  int best = limit + 1, n = 0, anonymous = 0;
  for (int v = 0; v < g->n_values; v++) {
    if (!is_float_param(g, v)) continue;
    int d = edit_distance(name, g->values[v].name, limit);
    if (d < best) best = d;
    n++;
    anonymous += is_anonymous(g->values[v].name);
  }
  size_t k = 0;
#define PUT(...) (k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, __VA_ARGS__), k = k < cap ? k : cap)
  buf[0] = 0;
  if (best <= limit) {
    int shown = 0;
    PUT("; did you mean");
    for (int v = 0; v < g->n_values && shown < TIES; v++)
      if (is_float_param(g, v) && edit_distance(name, g->values[v].name, limit) == best)
        PUT("%s '%s'", shown++ ? " or" : "", g->values[v].name);
    PUT("?");
  }
  if (n == 0) {
    PUT("; the model has no float initializers (its weights were folded into constants: " EXPORT_FOR_TRAINING ")");
    return;
  }
  PUT(" (parameters: ");
  int shown = 0;
  for (int v = 0; v < g->n_values && shown < LISTED; v++)
    if (is_float_param(g, v)) PUT("%s%s", shown++ ? ", " : "", g->values[v].name);
  if (n > LISTED) PUT(", ... %d more", n - LISTED);
  PUT(")");
  if (anonymous == n) PUT("; these are anonymous constants, not named weights: " EXPORT_FOR_TRAINING);
#undef PUT
}

static int check_names(const wt_graph *g, const char *what, const char *const *names, int n) {
  for (int i = 0; i < n; i++) {
    int v = wt_graph_find(g, names[i]);
    if (v < 0 || !(g->values[v].flags & WT_VALUE_INITIALIZER)) {
      char hint[1024];
      suggest_params(g, names[i], hint, sizeof hint);
      return wt_errorf(WT_ERR_INVALID_ARG, "%s: '%s' is not an initializer (parameter) of the model%s",
                       what, names[i], hint);
    }
    /* a frozen weight may be float16 (kept as it is: read through a Cast to float) */
    int frozen_half = g->values[v].dtype == WT_FLOAT16 && !strcmp(what, "frozen_params");
    if (g->values[v].dtype != WT_FLOAT && !frozen_half)
      return wt_errorf(WT_ERR_INVALID_ARG, "%s: parameter '%s' is %s; only float parameters can be "
                       "trained", what, names[i], wt_dtype_name(g->values[v].dtype));
  }
  return WT_OK;
}

/* With no requires_grad list, every float initializer is trained: none, or only anonymous ones,
 * means the weights were folded away at export (eval mode, constant folding). */
static int check_trainable(const wt_graph *g, const int *trainable, int n) {
  int anonymous = 0, constants = 0, floats = 0;
  for (int i = 0; i < n; i++) anonymous += is_anonymous(g->values[trainable[i]].name);
  for (int v = 0; v < g->n_values; v++) floats += is_float_param(g, v);
  for (int i = 0; i < g->n_nodes; i++) constants += !strcmp(g->nodes[i].op_type, "Constant") && !g->nodes[i].domain[0];
  if (floats == 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "the model has no float initializers to train%s: its weights were "
                     "folded into constants (exported in eval mode or with constant folding?); "
                     EXPORT_FOR_TRAINING, constants ? " (only Constant nodes)" : "");
  if (n > 0 && anonymous == n)
    return wt_errorf(WT_ERR_INVALID_ARG, "the model's %d float initializers all have made-up names such as "
                     "'%s': its weights were folded into anonymous constants (exported in eval mode or "
                     "with constant folding?); %s, or name the ones to train in requires_grad", n,
                     g->values[trainable[0]].name, EXPORT_FOR_TRAINING);
  return WT_OK;
}

/* Sorts parameters into trainable and frozen, in initializer order. */
static int select_params(const wt_graph *g, const wt_artifacts_opts *o, int *trainable, int *n_tr,
                         int *frozen, int *n_fr) {
  WT_TRY(check_names(g, "requires_grad", o->requires_grad, o->n_requires_grad));
  WT_TRY(check_names(g, "frozen_params", o->frozen_params, o->n_frozen_params));
  for (int i = 0; i < o->n_requires_grad; i++)
    if (listed(o->frozen_params, o->n_frozen_params, o->requires_grad[i]))
      return wt_errorf(WT_ERR_INVALID_ARG, "parameter '%s' is listed in both requires_grad and "
                       "frozen_params", o->requires_grad[i]);
  int all = o->n_requires_grad == 0 && o->n_frozen_params == 0;
  *n_tr = *n_fr = 0;
  for (int v = 0; v < g->n_values; v++) {
    const wt_value *val = &g->values[v];
    if (!(val->flags & WT_VALUE_INITIALIZER)) continue;
    if (listed(o->requires_grad, o->n_requires_grad, val->name)) trainable[(*n_tr)++] = v;
    else if (listed(o->frozen_params, o->n_frozen_params, val->name)) frozen[(*n_fr)++] = v;
    else if (is_bn_running_stat(g, v)) frozen[(*n_fr)++] = v;
    else if (all && val->dtype == WT_FLOAT) trainable[(*n_tr)++] = v;
  }
  if (all) WT_TRY(check_trainable(g, trainable, *n_tr));
  return WT_OK;
}

static int copy_param(const wt_graph *g, int v, wt_const_tensor *t, int with_data) {
  const wt_value *val = &g->values[v];
  t->name = wt_strdup(val->name);
  t->t.dtype = val->dtype;
  t->t.rank = val->rank;
  if (val->rank > 0) memcpy(t->t.dims, val->dims, sizeof *val->dims * (size_t)val->rank);
  t->t.data = NULL;
  if (with_data && val->nbytes) {
    t->t.data = malloc(val->nbytes);
    if (!t->t.data) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    memcpy(t->t.data, val->data, val->nbytes);
  }
  return t->name ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
}

/* lr > 0 records the initial learning rate in an optimizer group (step 0, no moments yet). */
static int write_checkpoint(const wt_graph *g, const int *tr, int n_tr, const int *fr, int n_fr,
                            int nominal, float lr, wt_bytes *out) {
  wt_checkpoint *c = calloc(1, sizeof *c);
  if (!c) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  c->version = 2;
  c->is_nominal = nominal;
  c->trainable = calloc((size_t)n_tr + 1, sizeof *c->trainable);
  c->frozen = calloc((size_t)n_fr + 1, sizeof *c->frozen);
  int rc = c->trainable && c->frozen ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int i = 0; rc == WT_OK && i < n_tr; i++, c->n_trainable++) rc = copy_param(g, tr[i], &c->trainable[i], !nominal);
  for (int i = 0; rc == WT_OK && i < n_fr; i++, c->n_frozen++) rc = copy_param(g, fr[i], &c->frozen[i], !nominal);
  if (lr > 0) {
    c->has_optimizer = 1;
    c->initial_lr = lr;
  }
  if (rc == WT_OK) rc = wt_checkpoint_write(c, lr > 0, &out->data, &out->len);
  wt_checkpoint_free(c);
  return rc;
}

/* Moves parameters from initializers to graph inputs (their bytes stay in the checkpoint). */
static int params_to_inputs(wt_graph *g, const int *vals, int n) {
  for (int i = 0; i < n; i++) {
    wt_value *v = &g->values[vals[i]];
    v->flags &= ~(uint32_t)WT_VALUE_INITIALIZER;
    wt_value_drop_data(g, v);
    v->flags &= ~(uint8_t)WT_VALUE_EXTERNAL;
    WT_TRY(wt_graph_add_input(g, vals[i]));
  }
  return WT_OK;
}

/* A value the training model must name exactly as ONNX Runtime does (its runtime and
 * checkpoints find them by name): an error naming the clash when the model has one already. */
static int ort_value(wt_graph *g, const char *name, const char *what, const char *param, int *out) {
  if (wt_graph_find(g, name) >= 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "the model already has a value named '%s', the name ONNX "
                     "Runtime's convention gives %s%s%s; rename that value in the model and export it "
                     "again", name, what, param ? " of parameter " : "", param ? param : "");
  *out = wt_graph_add_value(g, name);
  return *out < 0 ? WT_ERR_NO_MEMORY : WT_OK;
}

/* p_grad.accumulation.buffer inputs, lazy_reset_grad, InPlaceAccumulatorV2 nodes and their
 * p_grad.accumulation.out outputs. */
static int add_accumulators(wt_graph *g, const int *params, const int *grads, int n) {
  char name[512];
  int reset = -1, rc;
  WT_TRY(ort_value(g, "lazy_reset_grad", "the flag that resets gradient accumulation", NULL, &reset));
  int *bufs = malloc(sizeof(int) * (size_t)(n + 1));
  if (!bufs) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  rc = WT_OK;
  for (int i = 0; i < n && rc == WT_OK; i++) {
    snprintf(name, sizeof name, "%s_grad.accumulation.buffer", g->values[params[i]].name);
    rc = ort_value(g, name, "the gradient accumulation buffer", g->values[params[i]].name, &bufs[i]);
    if (rc == WT_OK) rc = wt_value_copy_type(g, bufs[i], g, params[i], -1);
    if (rc == WT_OK) rc = wt_graph_add_input(g, bufs[i]);
  }
  if (rc == WT_OK) {
    g->values[reset].dtype = WT_BOOL;
    rc = wt_value_set_shape(g, reset, 1, (const int64_t[]){1});
  }
  if (rc == WT_OK) rc = wt_graph_add_input(g, reset);
  for (int i = 0; i < n && rc == WT_OK; i++) {
    int out;
    snprintf(name, sizeof name, "%s_grad.accumulation.out", g->values[params[i]].name);
    if ((rc = ort_value(g, name, "the gradient accumulator's output", g->values[params[i]].name, &out)))
      break;
    g->values[out].dtype = WT_BOOL;
    if ((rc = wt_value_set_shape(g, out, 1, (const int64_t[]){1}))) break;
    snprintf(name, sizeof name, "GradientAccumulator%d", i);
    if (wt_graph_add_node(g, "InPlaceAccumulatorV2", "com.microsoft", name, 3,
                          (int[]){bufs[i], grads[i], reset}, 1, &out) < 0)
      rc = WT_ERR_NO_MEMORY;
    else
      rc = wt_graph_add_output(g, out);
  }
  free(bufs);
  return rc;
}

/* Sets the outputs to [loss, additional outputs...], naming the loss "loss" when it is ours. */
static int set_outputs(wt_graph *g, int loss, const wt_artifacts_opts *o) {
  int *extra = malloc(sizeof(int) * (size_t)(o->n_additional_outputs + 1));
  if (!extra) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int i = 0; i < o->n_additional_outputs; i++) {
    extra[i] = wt_graph_find(g, o->additional_output_names[i]);
    if (extra[i] < 0) {
      free(extra);
      return wt_errorf(WT_ERR_INVALID_ARG, "additional_output_names: '%s' is not a value of the model",
                       o->additional_output_names[i]);
    }
  }
  for (int i = 0; i < g->n_outputs; i++) g->values[g->outputs[i]].flags &= ~(uint32_t)WT_VALUE_GRAPH_OUTPUT;
  g->n_outputs = 0;
  int rc = WT_OK;
  if (!strncmp(g->values[loss].name, "loss/", 5) && wt_graph_find(g, "loss") < 0)
    rc = wt_value_set_name(g, loss, "loss");
  if (rc == WT_OK) rc = wt_graph_add_output(g, loss);
  for (int i = 0; i < o->n_additional_outputs && rc == WT_OK; i++) rc = wt_graph_add_output(g, extra[i]);
  free(extra);
  return rc;
}

int wt_generate_artifacts(const uint8_t *model, size_t len, const wt_artifacts_opts *o,
                          wt_artifacts *out) {
  wt_graph *g;
  memset(out, 0, sizeof *out);
  int rc = wt_onnx_read(model, len, NULL, &g);
  if (rc) return wt_error_context(rc, "generate_artifacts");
  return wt_generate_artifacts_graph(g, o, out);
}

static void free_names(char **names, int n) {
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

int wt_generate_artifacts_graph(wt_graph *g, const wt_artifacts_opts *o, wt_artifacts *out) {
  memset(out, 0, sizeof *out);
  int *tr = NULL, *fr = NULL, *grads = NULL;
  int n_tr = 0, n_fr = 0, loss = -1;
  char **forward = NULL;
  int n_forward = 0;
  int rc = WT_OK;
  wt_artifacts_opts lora_opts; /* LoRA: adapters inserted, parameters re-sorted (lora.c) */
  char **lora_names = NULL;
  if (o->ort_format) {
    rc = wt_errorf(WT_ERR_UNSUPPORTED, "ort_format: webtrain writes ONNX artifacts only (ORT format "
                   "is not supported)");
    goto fail;
  }
  if (o->custom_op_library && o->custom_op_library[0]) {
    rc = wt_errorf(WT_ERR_UNSUPPORTED, "custom_op_library: custom op libraries are not supported");
    goto fail;
  }
  if (o->lora.enabled && (rc = wt_artifacts_lora(g, o, &lora_opts, &lora_names))) goto fail;
  if (lora_names) o = &lora_opts;
  tr = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  fr = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  grads = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  if (!tr || !fr || !grads) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  if ((rc = select_params(g, o, tr, &n_tr, fr, &n_fr))) goto fail;
  /* parameters held by reference (external data) are read now: the checkpoint holds them; with
   * float16 frozen weights every float initializer is (converted, it is held in the models) */
  for (int i = 0; i < n_tr + n_fr && rc == WT_OK; i++) rc = wt_onnx_load_external(g, i < n_tr ? tr[i] : fr[i - n_tr], NULL);
  for (int v = 0; o->frozen_dtype == WT_FLOAT16 && v < g->n_values && rc == WT_OK; v++) rc = wt_onnx_load_external(g, v, NULL);
  if (rc) goto fail;
  if (o->frozen_dtype && o->frozen_dtype != WT_FLOAT16 && o->frozen_dtype != WT_FLOAT) {
    rc = wt_errorf(WT_ERR_INVALID_ARG, "frozen_dtype: %s; expected float16 or float",
                   wt_dtype_name(o->frozen_dtype));
    goto fail;
  }
  if (o->frozen_dtype == WT_FLOAT16 && ((rc = wt_graph_infer_shapes(g)) ||
                                        (rc = wt_artifacts_frozen_half(g, tr, n_tr, fr, n_fr, &out->frozen_kept))))
    goto fail;
  if ((rc = write_checkpoint(g, tr, n_tr, fr, n_fr, 0, o->optimizer.lr, &out->checkpoint))) goto fail;
  if (o->nominal_checkpoint && (rc = write_checkpoint(g, tr, n_tr, fr, n_fr, 1, o->optimizer.lr, &out->nominal_checkpoint)))
    goto fail;
  if ((rc = wt_graph_infer_shapes(g))) goto fail;
  /* the model's own outputs, which the eval model outputs too (the training model's are set below) */
  forward = calloc((size_t)g->n_outputs + 1, sizeof *forward);
  rc = forward ? WT_OK : WT_ERR_NO_MEMORY;
  for (int i = 0; rc == WT_OK && i < g->n_outputs; i++)
    if (!(forward[n_forward++] = wt_strdup(g->values[g->outputs[i]].name))) rc = WT_ERR_NO_MEMORY;
  if (rc) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  if ((rc = wt_artifacts_add_loss(g, o, &loss))) goto fail;
  if ((rc = set_outputs(g, loss, o))) goto fail;
  if ((rc = params_to_inputs(g, tr, n_tr)) || (rc = params_to_inputs(g, fr, n_fr))) goto fail;
  if ((rc = wt_graph_infer_shapes(g))) goto fail;
  if ((rc = wt_artifacts_eval_model(g, (const char *const *)forward, n_forward, &out->eval_model))) goto fail;
  if ((rc = wt_artifacts_fuse_gelu(g))) goto fail;
  if ((rc = wt_autodiff(g, loss, n_tr, tr, grads))) goto fail;
  for (int i = 0; i < n_tr; i++)
    if (grads[i] < 0) {
      rc = wt_errorf(WT_ERR_INVALID_ARG, "the loss does not depend on parameter '%s' (list it in "
                     "frozen_params instead of requires_grad)", g->values[tr[i]].name);
      goto fail;
    }
  if ((rc = add_accumulators(g, tr, grads, n_tr))) goto fail;
  if (wt_graph_opset(g, "com.microsoft") == 0 && (rc = wt_graph_set_opset(g, "com.microsoft", 1))) goto fail;
  if ((rc = wt_graph_prune(g))) goto fail;
  if ((rc = wt_onnx_write(g, &out->training_model.data, &out->training_model.len))) goto fail;
  if (o->base.location && ((rc = wt_onnx_append_base_print(&out->training_model.data, &out->training_model.len, &o->base)) ||
                           (rc = wt_onnx_append_base_print(&out->eval_model.data, &out->eval_model.len, &o->base))))
    goto fail;
  if (o->optimizer.type != WT_OPTIM_NONE &&
      (rc = wt_artifacts_optimizer_model(g, tr, n_tr, &o->optimizer, &out->optimizer_model)))
    goto fail;
  wt_graph_free(g);
  free(tr);
  free(fr);
  free(grads);
  free_names(forward, n_forward);
  wt_artifacts_lora_free(lora_names);
  return WT_OK;
fail:
  wt_graph_free(g);
  free(tr);
  free(fr);
  free(grads);
  free_names(forward, n_forward);
  wt_artifacts_lora_free(lora_names);
  wt_artifacts_free(out);
  return wt_error_context(rc, "generate_artifacts");
}

void wt_artifacts_free(wt_artifacts *a) {
  free(a->training_model.data);
  free(a->eval_model.data);
  free(a->optimizer_model.data);
  free(a->checkpoint.data);
  free(a->nominal_checkpoint.data);
  free(a->frozen_kept);
  memset(a, 0, sizeof *a);
}
