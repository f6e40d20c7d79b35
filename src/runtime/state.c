/* Checkpoint state: parameters (trainable and frozen), their gradient buffers and optimizer
 * moments, the optimizer step and initial learning rate, and the property bag. Loaded from and
 * saved to ONNX Runtime's checkpoint format. */
#include "runtime/state.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "io/checkpoint.h"

void wt_free(void *p) { free(p); }

/* Whether p lies in the checkpoint bytes the state was loaded in place from (not freed alone). */
static int borrowed(const wt_state *s, const void *p) {
  return wt_checkpoint_borrows(s->backing, s->backing_len, p);
}

wt_param *wt_state_find(const wt_state *s, const char *name) {
  for (int i = 0; i < s->n_params; i++)
    if (!strcmp(s->params[i].name, name)) return &s->params[i];
  return NULL;
}

static int adopt(wt_param *p, wt_const_tensor *t, int requires_grad) {
  if (!t->t.data && wt_numel(&t->t) > 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint parameter '%s' has no data (a nominal "
                     "checkpoint cannot be trained from)", t->name);
  if (requires_grad && t->t.dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_UNSUPPORTED, "trainable parameter '%s' is %s; only float parameters train",
                     t->name, wt_dtype_name(t->t.dtype));
  p->name = t->name;
  p->t = t->t;
  p->requires_grad = requires_grad;
  t->name = NULL;
  t->t.data = NULL;
  if (!p->t.data) p->t.data = calloc(1, 1);
  if (requires_grad) {
    int64_t n = wt_numel(&p->t);
    p->grad = calloc((size_t)(n ? n : 1), sizeof(float));
    if (!p->grad) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory for the gradient of '%s'", p->name);
  }
  return p->t.data ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
}

static int adopt_moments(wt_state *s, wt_checkpoint *c) {
  s->has_optimizer = c->has_optimizer;
  s->step = c->step;
  s->initial_lr = c->initial_lr;
  s->n_moments = 0;
  for (int i = 0; i < c->n_param_states; i++) {
    wt_ckpt_param_state *ps = &c->param_states[i];
    wt_param *p = wt_state_find(s, ps->param_name);
    if (!p || !p->requires_grad)
      return wt_errorf(WT_ERR_PARSE, "checkpoint: optimizer state for '%s', which is not a trainable "
                       "parameter", ps->param_name);
    for (int k = 0; k < ps->n_momentums; k++) {
      wt_const_tensor *m = &ps->momentums[k];
      if (!wt_same_shape(&m->t, &p->t) || m->t.dtype != WT_FLOAT)
        return wt_errorf(WT_ERR_PARSE, "checkpoint: momentum '%s' of '%s' does not match the parameter's "
                         "shape", m->name, p->name);
      float **slot = !strcmp(m->name, "momentum0") ? &p->m : !strcmp(m->name, "momentum1") ? &p->v : NULL;
      if (!slot) return wt_errorf(WT_ERR_PARSE, "checkpoint: unknown optimizer state '%s' for '%s'", m->name, p->name);
      if (*slot)
        return wt_errorf(WT_ERR_PARSE, "checkpoint: optimizer state '%s' of '%s' is given twice", m->name, p->name);
      *slot = m->t.data;
      m->t.data = NULL;
      if (s->n_moments < k + 1) s->n_moments = k + 1;
    }
  }
  return WT_OK;
}

/* `owned`, when given, is `bytes` as malloc'd by the caller, taken: the parameters and moments
 * stay where they are in it (read in place) and it becomes the state's backing, so that loading
 * holds them once, not the file beside copies (in wasm, whose heap never shrinks, the copies
 * would leave a checkpoint-sized hole for good); it is freed at once when nothing lies in it. */
static int state_load(const uint8_t *bytes, size_t len, uint8_t *owned, uint64_t ext_len,
                      wt_state **out) {
  *out = NULL;
  wt_checkpoint *c;
  int rc0 = owned ? wt_checkpoint_read_in_place(bytes, len, ext_len, &c) : wt_checkpoint_read_ext(bytes, len, ext_len, &c);
  if (rc0) {
    free(owned);
    return rc0;
  }
  wt_state *s = calloc(1, sizeof *s);
  int rc = s ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (s) s->backing = owned, s->backing_len = len;
  else free(owned);
  if (rc == WT_OK) {
    s->params = calloc((size_t)(c->n_trainable + c->n_frozen) + 1, sizeof *s->params);
    s->props = calloc((size_t)(c->n_ints + c->n_floats + c->n_strings) + 1, sizeof *s->props);
    if (!s->params || !s->props) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  for (int i = 0; rc == WT_OK && i < c->n_trainable; i++) rc = adopt(&s->params[s->n_params++], &c->trainable[i], 1);
  for (int i = 0; rc == WT_OK && i < c->n_frozen; i++) rc = adopt(&s->params[s->n_params++], &c->frozen[i], 0);
  if (rc == WT_OK) rc = adopt_moments(s, c);
  for (int i = 0; rc == WT_OK && i < c->n_ints; i++) {
    wt_prop *p = &s->props[s->n_props++];
    p->type = WT_PROPERTY_INT, p->name = c->ints[i].name, p->i = c->ints[i].value, c->ints[i].name = NULL;
  }
  for (int i = 0; rc == WT_OK && i < c->n_floats; i++) {
    wt_prop *p = &s->props[s->n_props++];
    p->type = WT_PROPERTY_FLOAT, p->name = c->floats[i].name, p->f = c->floats[i].value, c->floats[i].name = NULL;
  }
  for (int i = 0; rc == WT_OK && i < c->n_strings; i++) {
    wt_prop *p = &s->props[s->n_props++];
    p->type = WT_PROPERTY_STRING, p->name = c->strings[i].name, p->s = c->strings[i].value;
    c->strings[i].name = c->strings[i].value = NULL;
  }
  if (rc == WT_OK) {
    /* the buffers moved into the state: the list stays valid */
    s->pending = c->segments;
    s->n_pending = c->n_segments;
    c->segments = NULL;
  }
  wt_checkpoint_free(c);
  if (rc) {
    wt_state_free(s);
    return rc;
  }
  int used = 0;
  for (int i = 0; i < s->n_params && !used; i++) {
    const wt_param *p = &s->params[i];
    used = borrowed(s, p->t.data) || borrowed(s, p->m) || borrowed(s, p->v);
  }
  if (!used) {
    free(s->backing);
    s->backing = NULL;
  }
  *out = s;
  return WT_OK;
}

int wt_state_load(const uint8_t *bytes, size_t len, wt_state **out) { return state_load(bytes, len, NULL, 0, out); }

int wt_state_load_owned(uint8_t *bytes, size_t len, wt_state **out) { return state_load(bytes, len, bytes, 0, out); }

int wt_state_load_ext(const uint8_t *bytes, size_t len, uint8_t *owned, uint64_t ext_len, wt_state **out) {
  return state_load(bytes, len, owned, ext_len, out);
}

void wt_state_pending_done(wt_state *s) {
  free(s->pending);
  s->pending = NULL;
  s->n_pending = 0;
}

void wt_state_free(wt_state *s) {
  if (!s) return;
  for (int i = 0; i < s->n_params; i++) {
    wt_param *p = &s->params[i];
    free(p->name);
    if (!borrowed(s, p->t.data)) free(p->t.data);
    free(p->grad);
    if (!borrowed(s, p->m)) free(p->m);
    if (!borrowed(s, p->v)) free(p->v);
  }
  free(s->backing);
  for (int i = 0; i < s->n_props; i++) {
    free(s->props[i].name);
    free(s->props[i].s);
  }
  free(s->params);
  free(s->order);
  free(s->props);
  free(s->pending);
  free(s);
}

int wt_state_set_order(wt_state *s, const char *const *names, int n_names) {
  int *order = malloc(sizeof(int) * (size_t)(s->n_params + 1));
  char *taken = calloc((size_t)s->n_params + 1, 1);
  if (!order || !taken) {
    free(order);
    free(taken);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  int n = 0;
  for (int k = 0; k < n_names; k++) {
    const wt_param *p = wt_state_find(s, names[k]);
    if (!p || taken[p - s->params]) continue;
    taken[p - s->params] = 1;
    order[n++] = (int)(p - s->params);
  }
  for (int j = 0; j < s->n_params; j++) {
    int i = s->order ? s->order[j] : j;
    if (!taken[i]) order[n++] = i;
  }
  free(taken);
  free(s->order);
  s->order = order;
  return WT_OK;
}

static int state_save(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len,
                      wt_ckpt_segment **segs, int *n_segs, uint64_t *ext_len);

int wt_state_save(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len) {
  return state_save(s, include_optimizer_state, out, len, NULL, NULL, NULL);
}

int wt_state_save_ext(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len,
                      wt_ckpt_segment **segs, int *n_segs, uint64_t *ext_len) {
  return state_save(s, include_optimizer_state, out, len, segs, n_segs, ext_len);
}

/* The checkpoint view of the state borrows every buffer: only its arrays are freed. With segs,
 * the external-data layout. */
static int state_save(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len,
                      wt_ckpt_segment **segs, int *n_segs, uint64_t *ext_len) {
  wt_checkpoint c = {.version = 2, .has_optimizer = s->has_optimizer, .step = s->step,
                     .initial_lr = s->initial_lr, .group_name = "group0"};
  int n = s->n_params;
  c.trainable = calloc((size_t)n + 1, sizeof *c.trainable);
  c.frozen = calloc((size_t)n + 1, sizeof *c.frozen);
  c.param_states = calloc((size_t)n + 1, sizeof *c.param_states);
  wt_const_tensor *moments = calloc((size_t)n * 2 + 1, sizeof *moments);
  c.ints = calloc((size_t)s->n_props + 1, sizeof *c.ints);
  c.floats = calloc((size_t)s->n_props + 1, sizeof *c.floats);
  c.strings = calloc((size_t)s->n_props + 1, sizeof *c.strings);
  /* moments an optimizer has not allocated yet (before its first step) are zeros */
  int64_t most = 0;
  for (int i = 0; i < n; i++)
    if (s->params[i].requires_grad && !s->params[i].m && wt_numel(&s->params[i].t) > most) most = wt_numel(&s->params[i].t);
  float *zeros = s->has_optimizer && most ? calloc((size_t)most, sizeof(float)) : NULL;
  int rc = WT_OK;
  if (!c.trainable || !c.frozen || !c.param_states || !moments || !c.ints || !c.floats || !c.strings ||
      (s->has_optimizer && most && !zeros)) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  for (int i = 0; i < n; i++) {
    const wt_param *p = &s->params[i];
    wt_const_tensor *t = p->requires_grad ? &c.trainable[c.n_trainable++] : &c.frozen[c.n_frozen++];
    t->name = p->name;
    t->t = p->t;
    if (!p->requires_grad || !s->has_optimizer) continue;
    int two = p->m ? p->v != NULL : s->n_moments == 2;
    wt_ckpt_param_state *ps = &c.param_states[c.n_param_states++];
    ps->param_name = p->name;
    ps->momentums = &moments[2 * i];
    ps->n_momentums = two ? 2 : 1;
    moments[2 * i] = (wt_const_tensor){.name = "momentum0", .t = p->t};
    moments[2 * i].t.data = p->m ? p->m : zeros;
    if (two) {
      moments[2 * i + 1] = (wt_const_tensor){.name = "momentum1", .t = p->t};
      moments[2 * i + 1].t.data = p->m ? p->v : zeros;
    }
  }
  for (int i = 0; i < s->n_props; i++) {
    const wt_prop *p = &s->props[i];
    if (p->type == WT_PROPERTY_INT) c.ints[c.n_ints++] = (wt_ckpt_int_prop){p->name, p->i};
    else if (p->type == WT_PROPERTY_FLOAT) c.floats[c.n_floats++] = (wt_ckpt_float_prop){p->name, p->f};
    else c.strings[c.n_strings++] = (wt_ckpt_string_prop){p->name, p->s};
  }
  rc = segs ? wt_checkpoint_write_ext(&c, include_optimizer_state, out, len, segs, n_segs, ext_len)
             : wt_checkpoint_write(&c, include_optimizer_state, out, len);
  /* moments not allocated yet are zeros: a segment without data (zeros is freed below) */
  for (int i = 0; rc == WT_OK && segs && i < *n_segs; i++)
    if ((*segs)[i].data == zeros) (*segs)[i].data = NULL;
out:
  free(zeros);
  free(c.trainable);
  free(c.frozen);
  free(c.param_states);
  free(moments);
  free(c.ints);
  free(c.floats);
  free(c.strings);
  return rc;
}

int32_t wt_state_param_count(const wt_state *s) { return s->n_params; }
int32_t wt_state_param_index(const wt_state *s, const char *name) {
  const wt_param *p = wt_state_find(s, name);
  if (!p) return -1;
  int32_t i = (int32_t)(p - s->params);
  if (!s->order) return i;
  for (int32_t j = 0; j < s->n_params; j++)
    if (s->order[j] == i) return j;
  return -1;
}
/* The i-th parameter in the logical order (see wt_state.order). */
static const wt_param *param(const wt_state *s, int32_t i) {
  if (i < 0 || i >= s->n_params) return NULL;
  return &s->params[s->order ? s->order[i] : i];
}
const char *wt_state_param_name(const wt_state *s, int32_t i) { return param(s, i) ? param(s, i)->name : NULL; }
int32_t wt_state_param_requires_grad(const wt_state *s, int32_t i) { return param(s, i) ? param(s, i)->requires_grad : 0; }
int32_t wt_state_param_rank(const wt_state *s, int32_t i) { return param(s, i) ? param(s, i)->t.rank : -1; }
int64_t wt_state_param_dim(const wt_state *s, int32_t i, int32_t axis) {
  const wt_param *p = param(s, i);
  return p && axis >= 0 && axis < p->t.rank ? p->t.dims[axis] : -1;
}
const wt_tensor *wt_state_param_tensor(const wt_state *s, int32_t i) { return param(s, i) ? &param(s, i)->t : NULL; }
float *wt_state_param_data(const wt_state *s, int32_t i) {
  const wt_param *p = param(s, i);
  return p && p->t.dtype == WT_FLOAT ? p->t.data : NULL;
}
float *wt_state_param_grad(const wt_state *s, int32_t i) { return param(s, i) ? param(s, i)->grad : NULL; }

int wt_state_param_update(wt_state *s, int32_t i, const float *data, int64_t count) {
  wt_param *p = (wt_param *)param(s, i);
  if (!p) return wt_errorf(WT_ERR_INVALID_ARG, "parameter index %d is out of range", i);
  if (p->t.dtype != WT_FLOAT || count != wt_numel(&p->t))
    return wt_errorf(WT_ERR_INVALID_ARG, "parameter '%s' holds %lld float values; %lld were given",
                     p->name, (long long)wt_numel(&p->t), (long long)count);
  memcpy(p->t.data, data, sizeof(float) * (size_t)count);
  s->params_gen++;
  return WT_OK;
}

int64_t wt_state_params_size(const wt_state *s, int32_t trainable_only) {
  int64_t n = 0;
  for (int i = 0; i < s->n_params; i++)
    if ((!trainable_only || s->params[i].requires_grad) && s->params[i].t.dtype == WT_FLOAT)
      n += wt_numel(&s->params[i].t);
  return n;
}

static int params_copy(wt_state *s, int32_t trainable_only, float *buf, int64_t count, int to_buf) {
  int64_t need = wt_state_params_size(s, trainable_only);
  if (count != need)
    return wt_errorf(WT_ERR_INVALID_ARG, "the parameter buffer holds %lld floats; the %sparameters "
                     "need %lld", (long long)count, trainable_only ? "trainable " : "", (long long)need);
  int64_t off = 0;
  for (int i = 0; i < s->n_params; i++) {
    wt_param *p = (wt_param *)param(s, i);
    if ((trainable_only && !p->requires_grad) || p->t.dtype != WT_FLOAT) continue;
    int64_t n = wt_numel(&p->t);
    if (to_buf) memcpy(buf + off, p->t.data, sizeof(float) * (size_t)n);
    else memcpy(p->t.data, buf + off, sizeof(float) * (size_t)n);
    off += n;
  }
  if (!to_buf) s->params_gen++;
  return WT_OK;
}

int wt_state_params_copy_to(const wt_state *s, int32_t trainable_only, float *dst, int64_t count) {
  return params_copy((wt_state *)s, trainable_only, dst, count, 1);
}

int wt_state_params_copy_from(wt_state *s, int32_t trainable_only, const float *src, int64_t count) {
  return params_copy(s, trainable_only, (float *)src, count, 0);
}

static int set_prop(wt_state *s, const char *name, int type, int64_t i, float f, const char *str) {
  if (!name || !name[0]) return wt_errorf(WT_ERR_INVALID_ARG, "a property needs a name");
  wt_prop *p = NULL;
  for (int k = 0; k < s->n_props; k++)
    if (!strcmp(s->props[k].name, name)) p = &s->props[k];
  if (!p) {
    wt_prop *np = realloc(s->props, sizeof *np * (size_t)(s->n_props + 1));
    if (!np) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    s->props = np;
    p = &np[s->n_props];
    memset(p, 0, sizeof *p);
    if (!(p->name = wt_strdup(name))) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    s->n_props++;
  }
  char *copy = NULL;
  if (type == WT_PROPERTY_STRING && !(copy = wt_strdup(str))) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  free(p->s);
  p->s = copy;
  p->type = type;
  p->i = i;
  p->f = f;
  return WT_OK;
}

int wt_state_set_int_property(wt_state *s, const char *name, int64_t v) { return set_prop(s, name, WT_PROPERTY_INT, v, 0, NULL); }
int wt_state_set_float_property(wt_state *s, const char *name, float v) { return set_prop(s, name, WT_PROPERTY_FLOAT, 0, v, NULL); }
int wt_state_set_string_property(wt_state *s, const char *name, const char *v) { return set_prop(s, name, WT_PROPERTY_STRING, 0, 0, v); }
int32_t wt_state_property_count(const wt_state *s) { return s->n_props; }
static const wt_prop *prop(const wt_state *s, int32_t i) { return i >= 0 && i < s->n_props ? &s->props[i] : NULL; }
const char *wt_state_property_name(const wt_state *s, int32_t i) { return prop(s, i) ? prop(s, i)->name : NULL; }
int32_t wt_state_property_type(const wt_state *s, int32_t i) { return prop(s, i) ? prop(s, i)->type : 0; }
int64_t wt_state_property_int(const wt_state *s, int32_t i) { return prop(s, i) ? prop(s, i)->i : 0; }
float wt_state_property_float(const wt_state *s, int32_t i) { return prop(s, i) ? prop(s, i)->f : 0; }
const char *wt_state_property_string(const wt_state *s, int32_t i) { return prop(s, i) ? prop(s, i)->s : NULL; }
