/* The flat C ABI for training (js/ calls it): artifact generation through an options builder,
 * checkpoint state, module, optimizer. Same conventions as api.c: 0 handle or non-zero status
 * means failure, message in wtw_last_error(); dims cross as doubles. */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/status.h"
#include "io/onnx_io.h"
#include "shape/shape.h"
#include "runtime/state.h"
#include "wasm/abi.h"
#include "webtrain.h"

/* ---- buffers returned to JS ------------------------------------------------------------------ */

typedef struct buf {
  uint8_t *data;
  size_t len;
} buf;
const uint8_t *wtw_buf_data(const buf *b) { return b->data; }
double wtw_buf_size(const buf *b) { return (double)b->len; }
void wtw_buf_free(buf *b) {
  if (!b) return;
  free(b->data);
  free(b);
}

/* ---- generate_artifacts --------------------------------------------------------------------- */

typedef struct gen {
  wt_artifacts_opts o;
  char **names[5];              /* by enum wtw_name_list */
  int n_names[5];
  float *weight, *pos_weight;
  char *reduction;
  char *custom_value;
  wt_graph *g;                  /* the forward model, extended by custom-loss builders */
  wt_artifacts out;
  int keep_external;            /* float/float16 initializers in external data held by reference */
  char *base_location;          /* loaded from a scanned record: the file's fingerprint (o.base) */
} gen;

gen *wtw_gen_new(void) { return calloc(1, sizeof(gen)); }

void wtw_gen_free(gen *g) {
  if (!g) return;
  for (int k = 0; k < 5; k++) {
    for (int i = 0; i < g->n_names[k]; i++) free(g->names[k][i]);
    free(g->names[k]);
  }
  free(g->weight);
  free(g->pos_weight);
  free(g->reduction);
  free(g->custom_value);
  wt_graph_free(g->g);
  wt_artifacts_free(&g->out);
  free(g->base_location);
  free(g);
}

static int push(char ***list, int *n, const char *name) {
  char **l = realloc(*list, sizeof(char *) * (size_t)(*n + 1));
  if (!l) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  *list = l;
  if (!(l[*n] = wt_strdup(name))) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  (*n)++;
  return WT_OK;
}

/* kind: enum wtw_name_list */
int wtw_gen_add_name(gen *g, int kind, const char *name) {
  if (kind < WTW_NAMES_REQUIRES_GRAD || kind > WTW_NAMES_LORA_TARGETS) return wt_errorf(WT_ERR_INVALID_ARG, "bad name list %d", kind);
  return push(&g->names[kind], &g->n_names[kind], name);
}

int wtw_gen_set_loss(gen *g, int type, const char *reduction, int has_ignore_index, double ignore_index) {
  g->o.loss.type = type;
  free(g->reduction);
  g->reduction = reduction && reduction[0] ? wt_strdup(reduction) : NULL;
  g->o.loss.has_ignore_index = has_ignore_index;
  g->o.loss.ignore_index = (int64_t)ignore_index;
  return WT_OK;
}

/* which: enum wtw_loss_weights */
int wtw_gen_set_loss_weights(gen *g, int which, const float *w, int n) {
  if (which != WTW_WEIGHTS_WEIGHT && which != WTW_WEIGHTS_POS_WEIGHT) return wt_errorf(WT_ERR_INVALID_ARG, "bad loss weights %d", which);
  float **slot = which == WTW_WEIGHTS_POS_WEIGHT ? &g->pos_weight : &g->weight;
  free(*slot);
  *slot = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (!*slot) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(*slot, w, sizeof(float) * (size_t)n);
  if (which == WTW_WEIGHTS_POS_WEIGHT) g->o.loss.n_pos_weight = n;
  else g->o.loss.n_weight = n;
  return WT_OK;
}

/* ---- building a custom loss on the forward model (onnxblock) ------------------------------- */

/* on: the next load keeps the float initializers stored in external data by reference: the
 * artifacts refer to the same file ranges instead of holding the bytes (those that become
 * checkpoint parameters are read by wtw_gen_run, through the external reader set then). */
int wtw_gen_set_keep_external(gen *g, int on) {
  g->keep_external = on;
  return WT_OK;
}

int wtw_gen_load(gen *g, const uint8_t *bytes, size_t len) {
  wt_graph_free(g->g);
  g->g = NULL;
  wt_onnx_read_opts opts = {.keep_external = g->keep_external};
  int rc = wt_onnx_read(bytes, len, &opts, &g->g);
  if (rc == WT_OK) rc = wt_graph_infer_shapes(g->g);
  return rc ? wt_error_context(rc, "generate_artifacts") : WT_OK;
}

/* Loads the model a record holds (io/onnx_scan.h: no copy of it). A scanned record's model is
 * the skeleton of a file holding its weights inside: by reference, the artifacts carry that
 * file's fingerprint. */
int wtw_gen_load_record(gen *g, const wt_model_record *r) {
  WT_TRY(wtw_gen_load(g, r->bytes, r->len));
  free(g->base_location);
  g->base_location = NULL;
  g->o.base = (wt_base_print){0};
  if (!r->scanned || !g->keep_external) return WT_OK;
  if (!(g->base_location = wt_strdup(r->self.location))) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  g->o.base = (wt_base_print){.location = g->base_location, .size = r->self.size, .hash = r->self.hash};
  return WT_OK;
}

static int need_graph(const gen *g) {
  return g->g ? WT_OK : wt_errorf(WT_ERR_INVALID_ARG, "no model loaded");
}

/* 1 when the model has a value of this name (then its dtype and rank are readable). */
int wtw_gen_has_value(const gen *g, const char *name) { return g->g && wt_graph_find(g->g, name) >= 0; }
int wtw_gen_value_dtype(const gen *g, const char *name) {
  int v = g->g ? wt_graph_find(g->g, name) : -1;
  return v < 0 ? 0 : g->g->values[v].dtype;
}
int wtw_gen_value_rank(const gen *g, const char *name) {
  int v = g->g ? wt_graph_find(g->g, name) : -1;
  return v < 0 ? -1 : g->g->values[v].rank;
}
int wtw_gen_output_count(const gen *g) { return g->g ? g->g->n_outputs : 0; }
int wtw_gen_input_count(const gen *g) { return g->g ? g->g->n_inputs : 0; }
const char *wtw_gen_input_name(const gen *g, int i) {
  return g->g && i >= 0 && i < g->g->n_inputs ? g->g->values[g->g->inputs[i]].name : NULL;
}
const char *wtw_gen_output_name(const gen *g, int i) {
  return g->g && i >= 0 && i < g->g->n_outputs ? g->g->values[g->g->outputs[i]].name : NULL;
}

/* A new graph input `name` with the dtype and shape of value `like`, without axis `drop` (>= 0). */
int wtw_gen_add_input_like(gen *g, const char *name, const char *like, int dtype, int drop) {
  WT_TRY(need_graph(g));
  int src = wt_graph_find(g->g, like);
  if (src < 0) return wt_errorf(WT_ERR_INVALID_ARG, "'%s' is not a value of the model", like);
  if (wt_graph_find(g->g, name) >= 0) return wt_errorf(WT_ERR_INVALID_ARG, "the model already has a value '%s'", name);
  int v = wt_graph_add_value(g->g, name);
  if (v < 0) return WT_ERR_NO_MEMORY;
  WT_TRY(wt_value_copy_type(g->g, v, g->g, src, drop));
  if (dtype) g->g->values[v].dtype = dtype;
  return wt_graph_add_input(g->g, v);
}

/* names: NUL-separated; an empty name is an omitted optional input. Returns the node index. */
int wtw_gen_add_node(gen *g, const char *op_type, const char *domain, const char *name, const char *ins,
                     int n_in, const char *outs, int n_out) {
  if (need_graph(g) || n_in > 64 || n_out > 64) return wt_errorf(WT_ERR_INVALID_ARG, "bad node"), -1;
  int vi[64], vo[64];
  for (int i = 0; i < n_in; i++, ins += strlen(ins) + 1) {
    vi[i] = ins[0] ? wt_graph_find(g->g, ins) : -1;
    if (ins[0] && vi[i] < 0) return wt_errorf(WT_ERR_INVALID_ARG, "%s node '%s': input '%s' is not a value of the model", op_type, name, ins), -1;
  }
  for (int i = 0; i < n_out; i++, outs += strlen(outs) + 1) {
    if (wt_graph_find(g->g, outs) >= 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "%s node '%s': output '%s' already exists", op_type, name, outs), -1;
    if ((vo[i] = wt_graph_add_value(g->g, outs)) < 0) return -1;
  }
  int n = wt_graph_add_node(g->g, op_type, domain, name, n_in, vi, n_out, vo);
  if (n >= 0 && domain && domain[0] && wt_graph_opset(g->g, domain) == 0 &&
      wt_graph_set_opset(g->g, domain, 1))
    return -1;
  return n;
}

int wtw_gen_attr_int(gen *g, int node, const char *name, double v) { return wt_node_set_int(g->g, node, name, (int64_t)v); }
int wtw_gen_attr_float(gen *g, int node, const char *name, double v) { return wt_node_set_float(g->g, node, name, (float)v); }
int wtw_gen_attr_string(gen *g, int node, const char *name, const char *v) { return wt_node_set_string(g->g, node, name, v); }
int wtw_gen_attr_ints(gen *g, int node, const char *name, const double *v, int n) {
  int64_t buf[64];
  if (n > 64) return wt_errorf(WT_ERR_INVALID_ARG, "too many ints");
  for (int i = 0; i < n; i++) buf[i] = (int64_t)v[i];
  return wt_node_set_ints(g->g, node, name, buf, n);
}
/* A tensor attribute (Constant's value): dtype, dims, raw bytes. */
int wtw_gen_attr_tensor(gen *g, int node, const char *name, int dtype, int rank, const double *dims,
                        const void *data) {
  wt_attr *a = wt_node_add_attr(g->g, node, name, WT_ATTR_TENSOR);
  if (!a || !(a->t = calloc(1, sizeof *a->t))) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  a->t->name = wt_strdup("");
  a->t->t.dtype = dtype;
  a->t->t.rank = rank;
  for (int i = 0; i < rank; i++) a->t->t.dims[i] = (int64_t)dims[i];
  size_t nb = wt_nbytes(&a->t->t);
  a->t->t.data = malloc(nb ? nb : 1);
  if (!a->t->t.data) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(a->t->t.data, data, nb);
  return WT_OK;
}

/* One built-in loss (onnxblock's loss blocks) on value `input`: returns the loss value's
 * name, or NULL. target "" = ONNX Runtime's default name; weights may be NULL. */
const char *wtw_gen_loss_block(gen *g, int type, const char *input, const char *target, const char *reduction,
                               int has_ignore_index, double ignore_index, const float *weight, int n_weight,
                               const float *pos_weight, int n_pos_weight) {
  if (need_graph(g)) return NULL;
  wt_loss_opts o = {.type = type, .reduction = reduction && reduction[0] ? reduction : NULL,
                    .has_ignore_index = has_ignore_index, .ignore_index = (int64_t)ignore_index,
                    .weight = weight, .n_weight = n_weight, .pos_weight = pos_weight, .n_pos_weight = n_pos_weight};
  int v;
  if (wt_artifacts_loss_block(g->g, type, input, target && target[0] ? target : NULL, &o, &v)) return NULL;
  return g->g->values[v].name;
}

int wtw_gen_set_custom_loss(gen *g, const char *value) {
  free(g->custom_value);
  g->custom_value = wt_strdup(value);
  return g->custom_value ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
}

/* Makes `outputs` (NUL-separated names) the graph outputs of the loaded model, prunes what they
 * no longer need, and returns the model's bytes (onnxblock.buildModel: a forward model built on
 * a base model). */
buf *wtw_gen_model_bytes(gen *g, const char *outputs, int n) {
  if (need_graph(g)) return NULL;
  wt_graph *m = g->g;
  int vals[64];
  if (n < 1 || n > 64) return wt_errorf(WT_ERR_INVALID_ARG, "a model needs 1..64 outputs"), NULL;
  for (int i = 0; i < n; i++, outputs += strlen(outputs) + 1) {
    vals[i] = wt_graph_find(m, outputs);
    if (vals[i] < 0) return wt_errorf(WT_ERR_INVALID_ARG, "output '%s' is not a value of the model", outputs), NULL;
  }
  for (int k = 0; k < m->n_outputs; k++) m->values[m->outputs[k]].flags &= ~(uint32_t)WT_VALUE_GRAPH_OUTPUT;
  m->n_outputs = 0;
  for (int i = 0; i < n; i++)
    if (wt_graph_add_output(m, vals[i])) return NULL;
  if (wt_graph_prune(m) || wt_graph_infer_shapes(m)) return NULL;
  buf *b = calloc(1, sizeof *b);
  if (!b) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), NULL;
  if (wt_onnx_write(m, &b->data, &b->len)) {
    free(b);
    return NULL;
  }
  return b;
}

int wtw_gen_set_optimizer(gen *g, int type, int has_betas, double beta1, double beta2, int has_eps,
                          double eps, int has_wd, double wd, int has_mode, int mode, int no_bias_correction,
                          double clip_max_norm) {
  wt_optim_opts *o = &g->o.optimizer;
  o->type = type;
  o->has_betas = has_betas, o->beta1 = (float)beta1, o->beta2 = (float)beta2;
  o->has_eps = has_eps, o->eps = (float)eps;
  o->has_weight_decay = has_wd, o->weight_decay = (float)wd;
  o->has_adam_mode = has_mode, o->adam_mode = mode;
  o->no_bias_correction = no_bias_correction;
  o->clip_max_norm = (float)clip_max_norm;
  return WT_OK;
}

/* The initial learning rate to record in the checkpoint (0: none, ONNX Runtime's default). */
int wtw_gen_set_lr(gen *g, double lr) {
  if (!(lr >= 0)) return wt_errorf(WT_ERR_INVALID_ARG, "optimizer lr %g: expected a number >= 0", lr);
  g->o.optimizer.lr = (float)lr;
  return WT_OK;
}

int wtw_gen_set_flags(gen *g, int nominal_checkpoint, int ort_format, int custom_op_library) {
  g->o.nominal_checkpoint = nominal_checkpoint;
  g->o.ort_format = ort_format;
  g->o.custom_op_library = custom_op_library ? "given" : NULL;
  return WT_OK;
}

/* LoRA: rank, alpha, the seed (an integer below 2^53), and whether the LORA_TARGETS names are
 * whole weight names (1) or parts of them (0). */
int wtw_gen_set_lora(gen *g, double rank, double alpha, double seed, int exact) {
  g->o.lora.enabled = 1;
  g->o.lora.rank = rank >= 0 && rank < 1e9 && rank == (double)(int64_t)rank ? (int64_t)rank : -1;
  g->o.lora.alpha = (float)alpha;
  g->o.lora.seed = (uint64_t)seed;
  g->o.lora.exact = exact;
  return WT_OK;
}

/* The loaded model's float initializers that a MatMul or Gemm multiplies by (LoRA candidates,
 * js resolves RegExp and function targets over them): their names, NUL-terminated one after
 * the other. */
buf *wtw_gen_lora_weights(const gen *g) {
  if (need_graph(g)) return NULL;
  buf *b = calloc(1, sizeof *b);
  size_t cap = 1;
  for (int v = 0; v < g->g->n_values; v++) cap += strlen(g->g->values[v].name) + 1;
  if (b) b->data = malloc(cap);
  if (!b || !b->data) {
    free(b);
    wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    return NULL;
  }
  for (int v = 0; v < g->g->n_values; v++)
    if (wt_lora_is_matmul_weight(g->g, v)) {
      size_t n = strlen(g->g->values[v].name) + 1;
      memcpy(b->data + b->len, g->g->values[v].name, n);
      b->len += n;
    }
  return b;
}
/* dtype: 0 (frozen weights as they are), WT_FLOAT or WT_FLOAT16 (see wt_artifacts_opts). */
int wtw_gen_set_frozen_dtype(gen *g, int dtype) {
  if (dtype != 0 && dtype != WT_FLOAT && dtype != WT_FLOAT16)
    return wt_errorf(WT_ERR_INVALID_ARG, "frozen dtype %s; expected float16 or float", wt_dtype_name(dtype));
  g->o.frozen_dtype = dtype == WT_FLOAT ? 0 : dtype;
  return WT_OK;
}

/* After a run with frozen dtype float16: the weights kept float32, "name: why" per line, or "". */
const char *wtw_gen_frozen_kept(const gen *g) { return g->out.frozen_kept ? g->out.frozen_kept : ""; }

/* Generates from the loaded (and possibly extended) model; the model is consumed. */
int wtw_gen_run(gen *g) {
  WT_TRY(need_graph(g));
  wt_artifacts_free(&g->out);
  g->o.requires_grad = (const char *const *)g->names[WTW_NAMES_REQUIRES_GRAD];
  g->o.n_requires_grad = g->n_names[WTW_NAMES_REQUIRES_GRAD];
  g->o.frozen_params = (const char *const *)g->names[WTW_NAMES_FROZEN_PARAMS];
  g->o.n_frozen_params = g->n_names[WTW_NAMES_FROZEN_PARAMS];
  g->o.additional_output_names = (const char *const *)g->names[WTW_NAMES_ADDITIONAL_OUTPUTS];
  g->o.n_additional_outputs = g->n_names[WTW_NAMES_ADDITIONAL_OUTPUTS];
  g->o.loss_input_names = (const char *const *)g->names[WTW_NAMES_LOSS_INPUTS];
  g->o.n_loss_inputs = g->n_names[WTW_NAMES_LOSS_INPUTS];
  g->o.loss.reduction = g->reduction;
  g->o.loss.weight = g->weight;
  g->o.loss.pos_weight = g->pos_weight;
  g->o.loss.custom_value = g->custom_value;
  g->o.lora.targets = (const char *const *)g->names[WTW_NAMES_LORA_TARGETS];
  g->o.lora.n_targets = g->n_names[WTW_NAMES_LORA_TARGETS];
  wt_graph *graph = g->g;
  g->g = NULL;
  return wt_generate_artifacts_graph(graph, &g->o, &g->out);
}

/* which: enum wtw_gen_result */
static const wt_bytes *result(const gen *g, int which) {
  switch (which) {
    case WTW_RESULT_TRAINING_MODEL: return &g->out.training_model;
    case WTW_RESULT_EVAL_MODEL: return &g->out.eval_model;
    case WTW_RESULT_OPTIMIZER_MODEL: return &g->out.optimizer_model;
    case WTW_RESULT_CHECKPOINT: return &g->out.checkpoint;
    case WTW_RESULT_NOMINAL_CHECKPOINT: return &g->out.nominal_checkpoint;
    default: return NULL;
  }
}
const uint8_t *wtw_gen_result_data(const gen *g, int which) { return result(g, which) ? result(g, which)->data : NULL; }
double wtw_gen_result_size(const gen *g, int which) { return result(g, which) ? (double)result(g, which)->len : 0; }

/* ---- state ----------------------------------------------------------------------------------- */

wt_state *wtw_state_load(const uint8_t *bytes, size_t len) {
  wt_state *s = NULL;
  return wt_state_load(bytes, len, &s) == WT_OK ? s : NULL;
}
void wtw_state_free(wt_state *s) { wt_state_free(s); }
buf *wtw_state_save(const wt_state *s, int include_optimizer_state) {
  buf *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  if (wt_state_save(s, include_optimizer_state, &b->data, &b->len)) {
    free(b);
    return NULL;
  }
  return b;
}
int wtw_state_param_count(const wt_state *s) { return wt_state_param_count(s); }
int wtw_state_param_index(const wt_state *s, const char *name) { return wt_state_param_index(s, name); }
const char *wtw_state_param_name(const wt_state *s, int i) { return wt_state_param_name(s, i); }
int wtw_state_param_requires_grad(const wt_state *s, int i) { return wt_state_param_requires_grad(s, i); }
int wtw_state_param_rank(const wt_state *s, int i) { return wt_state_param_rank(s, i); }
double wtw_state_param_dim(const wt_state *s, int i, int axis) { return (double)wt_state_param_dim(s, i, axis); }
float *wtw_state_param_data(const wt_state *s, int i) { return wt_state_param_data(s, i); }
float *wtw_state_param_grad(const wt_state *s, int i) { return wt_state_param_grad(s, i); }
int wtw_state_param_update(wt_state *s, int i, const float *data, double count) {
  return wt_state_param_update(s, i, data, (int64_t)count);
}
double wtw_state_params_size(const wt_state *s, int trainable_only) {
  return (double)wt_state_params_size(s, trainable_only);
}
int wtw_state_params_copy_to(const wt_state *s, int trainable_only, float *dst, double count) {
  return wt_state_params_copy_to(s, trainable_only, dst, (int64_t)count);
}
int wtw_state_params_copy_from(wt_state *s, int trainable_only, const float *src, double count) {
  return wt_state_params_copy_from(s, trainable_only, src, (int64_t)count);
}
int wtw_state_set_int_property(wt_state *s, const char *name, double v) {
  return wt_state_set_int_property(s, name, (int64_t)v);
}
int wtw_state_set_float_property(wt_state *s, const char *name, double v) {
  return wt_state_set_float_property(s, name, (float)v);
}
int wtw_state_set_string_property(wt_state *s, const char *name, const char *v) {
  return wt_state_set_string_property(s, name, v);
}
int wtw_state_property_count(const wt_state *s) { return wt_state_property_count(s); }
const char *wtw_state_property_name(const wt_state *s, int i) { return wt_state_property_name(s, i); }
int wtw_state_property_type(const wt_state *s, int i) { return wt_state_property_type(s, i); }
double wtw_state_property_int(const wt_state *s, int i) { return (double)wt_state_property_int(s, i); }
double wtw_state_property_float(const wt_state *s, int i) { return wt_state_property_float(s, i); }
const char *wtw_state_property_string(const wt_state *s, int i) { return wt_state_property_string(s, i); }

/* Optimizer state held by the checkpoint state (for inspection). */
int wtw_state_has_optimizer_state(const wt_state *s) { return s->has_optimizer; }
double wtw_state_optimizer_step(const wt_state *s) { return (double)s->step; }
double wtw_state_optimizer_initial_lr(const wt_state *s) { return s->initial_lr; }
int wtw_state_optimizer_moment_count(const wt_state *s) { return s->has_optimizer ? s->n_moments : 0; }

/* ---- module ---------------------------------------------------------------------------------- */

/* Takes train and eval (wtw_malloc'd copies): each is freed once parsed. */
wt_module *wtw_module_create_owned(wt_state *s, uint8_t *train, size_t train_len, uint8_t *eval,
                                   size_t eval_len) {
  wt_module *m = NULL;
  return wt_module_create_owned(s, train, train_len, eval, eval_len, &m) == WT_OK ? m : NULL;
}
int wtw_module_add_eval_owned(wt_module *m, uint8_t *eval, size_t eval_len) {
  return wt_module_add_eval_owned(m, eval, eval_len);
}
void wtw_module_free(wt_module *m) { wt_module_free(m); }
int wtw_module_input_count(const wt_module *m, int eval) { return wt_module_input_count(m, eval); }
const char *wtw_module_input_name(const wt_module *m, int eval, int i) { return wt_module_input_name(m, eval, i); }
int wtw_module_input_dtype(const wt_module *m, int eval, int i) { return wt_module_input_dtype(m, eval, i); }
int wtw_module_output_count(const wt_module *m, int eval) { return wt_module_output_count(m, eval); }
const char *wtw_module_output_name(const wt_module *m, int eval, int i) { return wt_module_output_name(m, eval, i); }
int wtw_module_set_input(wt_module *m, int eval, int i, int dtype, int rank, const double *dims,
                         const void *data) {
  int64_t d[16];
  if (rank < 0 || rank > 16) return wt_errorf(WT_ERR_INVALID_ARG, "rank %d is out of range", rank);
  for (int k = 0; k < rank; k++) d[k] = (int64_t)dims[k];
  return wt_module_set_input(m, eval, i, dtype, rank, d, data);
}
int wtw_module_train_step(wt_module *m) { return wt_module_train_step(m); }
int wtw_module_eval_step(wt_module *m) { return wt_module_eval_step(m); }
int wtw_module_lazy_reset_grad(wt_module *m) { return wt_module_lazy_reset_grad(m); }
/* names: n NUL-terminated names one after the other. */
int wtw_module_predict_outputs(wt_module *m, const char *names, int n) {
  const char *list[64];
  if (n < 1 || n > 64) return wt_errorf(WT_ERR_INVALID_ARG, "predict: %d outputs named; expected 1 to 64", n);
  for (int i = 0; i < n; i++) {
    list[i] = names;
    names += strlen(names) + 1;
  }
  return wt_module_predict_outputs(m, list, n);
}
int wtw_module_predict_step(wt_module *m) { return wt_module_predict_step(m); }

static int mout(const wt_module *m, int eval, int i, int32_t *dt, int32_t *r, const int64_t **d, const void **p) {
  return wt_module_output(m, eval, i, dt, r, d, p);
}
int wtw_module_output_dtype(const wt_module *m, int eval, int i) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  return mout(m, eval, i, &dt, &r, &d, &p) ? 0 : dt;
}
int wtw_module_output_rank(const wt_module *m, int eval, int i) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  return mout(m, eval, i, &dt, &r, &d, &p) ? -1 : r;
}
double wtw_module_output_dim(const wt_module *m, int eval, int i, int axis) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  if (mout(m, eval, i, &dt, &r, &d, &p) || axis < 0 || axis >= r) return -1;
  return (double)d[axis];
}
const void *wtw_module_output_data(const wt_module *m, int eval, int i) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  return mout(m, eval, i, &dt, &r, &d, &p) ? NULL : p;
}

/* names: a NUL-separated list of n output names */
/* by_reference: weights read from external data files stay references to them */
buf *wtw_module_export(const wt_module *m, const char *names, int n, int by_reference) {
  const char **list = malloc(sizeof(char *) * (size_t)(n ? n : 1));
  buf *b = calloc(1, sizeof *b);
  if (!list || !b) {
    free(list);
    free(b);
    wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    list[i] = names;
    names += strlen(names) + 1;
  }
  int rc = wt_module_export_for_inference_ext(m, list, n, by_reference, &b->data, &b->len);
  free(list);
  if (rc) {
    free(b);
    return NULL;
  }
  return b;
}

/* ---- optimizer ------------------------------------------------------------------------------- */

wt_optimizer *wtw_optimizer_create(wt_state *s, const uint8_t *bytes, size_t len) {
  wt_optimizer *o = NULL;
  return wt_optimizer_create(s, bytes, len, &o) == WT_OK ? o : NULL;
}
void wtw_optimizer_free(wt_optimizer *o) { wt_optimizer_free(o); }
int wtw_optimizer_step(wt_optimizer *o) { return wt_optimizer_step(o); }
int wtw_optimizer_set_lr(wt_optimizer *o, double lr) { return wt_optimizer_set_lr(o, (float)lr); }
double wtw_optimizer_get_lr(const wt_optimizer *o) { return wt_optimizer_get_lr(o); }
int wtw_optimizer_set_linear_scheduler(wt_optimizer *o, double warmup, double total, double initial_lr) {
  return wt_optimizer_set_linear_scheduler(o, (int64_t)warmup, (int64_t)total, (float)initial_lr);
}
int wtw_optimizer_scheduler_step(wt_optimizer *o) { return wt_optimizer_scheduler_step(o); }
