/* Trainable-only checkpoints (runtime/state_part.h): a view of the state without its frozen
 * parameters saved through wt_state_save, and the loader that copies a checkpoint's
 * parameters into a state after checking every name, shape and the base fingerprint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/status.h"
#include "io/adapter.h"
#include "io/checkpoint.h"
#include "ir/ir.h"
#include "runtime/state.h"
#include "runtime/state_part.h"

/* 64-bit FNV-1a over 8-byte words (then the tail bytes), names and shapes included: the frozen
 * parameters as they are in s. */
static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static void fingerprint(const wt_state *s, char out[17]) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < s->n_params; i++) {
    const wt_param *p = &s->params[i];
    if (p->requires_grad) continue;
    h = mix(h, p->name, strlen(p->name) + 1);
    h = mix(h, &p->t.dtype, sizeof p->t.dtype);
    h = mix(h, p->t.dims, sizeof(int64_t) * (size_t)p->t.rank);
    if (p->t.data) h = mix(h, p->t.data, wt_nbytes(&p->t));
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The same over the weights a module's training graph holds by reference (loaded: a frozen
 * base in external data, which no checkpoint holds); 0 when there are none (or no module). */
static int weights_fingerprint(const wt_state *s, char out[17]) {
  const wt_graph *g = s->base_graph;
  uint64_t h = 0xcbf29ce484222325ull;
  int n = 0;
  for (int v = 0; g && v < g->n_values; v++) {
    const wt_value *val = &g->values[v];
    if (!(val->flags & WT_VALUE_INITIALIZER) || !(val->flags & WT_VALUE_EXTERNAL) || !val->data) continue;
    h = mix(h, val->name, strlen(val->name) + 1);
    h = mix(h, &val->dtype, sizeof val->dtype);
    h = mix(h, val->dims, sizeof(int64_t) * (size_t)(val->rank > 0 ? val->rank : 0));
    h = mix(h, val->data, val->nbytes);
    n++;
  }
  if (n) snprintf(out, 17, "%016llx", (unsigned long long)h);
  return n > 0;
}

int wt_state_save_trainable(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len) {
  wt_state v = *s;
  char fp[17], wfp[17];
  int has_wfp = weights_fingerprint(s, wfp);
  fingerprint(s, fp);
  v.params = malloc(sizeof *v.params * ((size_t)s->n_params + 1));
  v.props = malloc(sizeof *v.props * ((size_t)s->n_props + 2));
  if (!v.params || !v.props) {
    free(v.params);
    free(v.props);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  v.n_params = 0;
  v.order = NULL;
  v.pending = NULL;
  v.n_pending = 0;
  for (int i = 0; i < s->n_params; i++)
    if (s->params[i].requires_grad) v.params[v.n_params++] = s->params[i];
  v.n_props = 0;
  for (int i = 0; i < s->n_props; i++)
    if (strcmp(s->props[i].name, WT_BASE_FINGERPRINT) && strcmp(s->props[i].name, WT_BASE_WEIGHTS_FINGERPRINT))
      v.props[v.n_props++] = s->props[i];
  v.props[v.n_props++] = (wt_prop){.name = WT_BASE_FINGERPRINT, .type = WT_PROPERTY_STRING, .s = fp};
  if (has_wfp) v.props[v.n_props++] = (wt_prop){.name = WT_BASE_WEIGHTS_FINGERPRINT, .type = WT_PROPERTY_STRING, .s = wfp};
  int rc = v.n_params ? wt_state_save(&v, include_optimizer_state, out, len)
                      : wt_errorf(WT_ERR_INVALID_ARG, "the checkpoint state has no trainable parameters to save");
  free(v.params);
  free(v.props);
  return rc;
}

static int check_tensor(const wt_state *s, const wt_const_tensor *t, int trainable) {
  const wt_param *p = wt_state_find(s, t->name);
  if (!p)
    return wt_errorf(WT_ERR_INVALID_ARG, "parameter '%s' of the checkpoint is not a parameter of this state; "
                     "load it into the state of the model it was trained with", t->name);
  char a[128], b[128];
  if (p->t.dtype != t->t.dtype || !wt_same_shape(&p->t, &t->t))
    return wt_errorf(WT_ERR_INVALID_ARG, "parameter '%s' is %s %s in the checkpoint but %s %s in this state: it "
                     "was trained on a different base model or with another LoRA rank", t->name,
                     wt_dtype_name(t->t.dtype), wt_shape_str(t->t.rank, t->t.dims, a, sizeof a),
                     wt_dtype_name(p->t.dtype), wt_shape_str(p->t.rank, p->t.dims, b, sizeof b));
  if (trainable && !p->requires_grad)
    return wt_errorf(WT_ERR_INVALID_ARG, "parameter '%s' is trainable in the checkpoint but frozen in this state; "
                     "generate the artifacts with the same lora / requires_grad options", t->name);
  if (!t->t.data && wt_nbytes(&t->t))
    return wt_errorf(WT_ERR_INVALID_ARG, "parameter '%s' has no values in the checkpoint (a nominal checkpoint)", t->name);
  return WT_OK;
}

/* An .onnx_adapter file (ONNX Runtime's LoRA adapter format): its tensors into s. */
static int load_adapter(wt_state *s, const uint8_t *bytes, size_t len) {
  wt_const_tensor *p = NULL;
  int n = 0;
  WT_TRY(wt_adapter_read(bytes, len, &p, &n, NULL, NULL));
  int rc = WT_OK;
  for (int i = 0; rc == WT_OK && i < n; i++) rc = check_tensor(s, &p[i], 0);
  for (int i = 0; rc == WT_OK && i < n; i++) memcpy(wt_state_find(s, p[i].name)->t.data, p[i].t.data, wt_nbytes(&p[i].t));
  s->params_gen++;
  wt_adapter_free(p, n);
  return rc;
}

int wt_state_load_params(wt_state *s, const uint8_t *bytes, size_t len) {
  if (len >= 8 && !memcmp(bytes + 4, "TORT", 4)) return load_adapter(s, bytes, len);
  wt_checkpoint *c = NULL;
  WT_TRY(wt_checkpoint_read(bytes, len, &c));
  int rc = c->has_external_data ? wt_errorf(WT_ERR_UNSUPPORTED, "the checkpoint keeps its tensors in an external "
                                            "data file; load it with CheckpointState.loadCheckpoint") : WT_OK;
  for (int i = 0; rc == WT_OK && i < c->n_trainable; i++) rc = check_tensor(s, &c->trainable[i], 1);
  for (int i = 0; rc == WT_OK && i < c->n_frozen; i++) rc = check_tensor(s, &c->frozen[i], 0);
  for (int i = 0; rc == WT_OK && i < c->n_strings; i++) {
    char fp[17];
    if (!strcmp(c->strings[i].name, WT_BASE_FINGERPRINT)) {
      fingerprint(s, fp);
      if (strcmp(fp, c->strings[i].value))
        rc = wt_errorf(WT_ERR_INVALID_ARG, "the checkpoint's parameters were trained on another base model: its "
                       "frozen parameters' fingerprint is %s, this state's %s; load them into the state "
                       "of the base model they were trained with", c->strings[i].value, fp);
    } else if (!strcmp(c->strings[i].name, WT_BASE_WEIGHTS_FINGERPRINT) && weights_fingerprint(s, fp) &&
               strcmp(fp, c->strings[i].value)) {
      /* checked when a module over this state holds its base by reference (else unknown here) */
      rc = wt_errorf(WT_ERR_INVALID_ARG, "the checkpoint's parameters were trained on another base model: the "
                     "fingerprint of the weights its module read from external data is %s, this module's %s; "
                     "load them into the state of the base model they were trained with", c->strings[i].value, fp);
    }
  }
  for (int i = 0; rc == WT_OK && i < c->n_trainable + c->n_frozen; i++) {
    const wt_const_tensor *t = i < c->n_trainable ? &c->trainable[i] : &c->frozen[i - c->n_trainable];
    wt_param *p = wt_state_find(s, t->name);
    memcpy(p->t.data, t->t.data, wt_nbytes(&t->t));
  }
  s->params_gen++;
  for (int i = 0; rc == WT_OK && i < c->n_ints; i++) rc = wt_state_set_int_property(s, c->ints[i].name, c->ints[i].value);
  for (int i = 0; rc == WT_OK && i < c->n_floats; i++) rc = wt_state_set_float_property(s, c->floats[i].name, c->floats[i].value);
  for (int i = 0; rc == WT_OK && i < c->n_strings; i++)
    if (strcmp(c->strings[i].name, WT_BASE_FINGERPRINT) && strcmp(c->strings[i].name, WT_BASE_WEIGHTS_FINGERPRINT))
      rc = wt_state_set_string_property(s, c->strings[i].name, c->strings[i].value);
  wt_checkpoint_free(c);
  return rc;
}
