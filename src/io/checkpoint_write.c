/* ONNX Runtime training checkpoint: wt_checkpoint -> the "ODTC" flatbuffer (version 2), inline
 * or with the tensors in an external data file (io/checkpoint.h), through flatbuf.c's builder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/status.h"
#include "io/checkpoint.h"
#include "io/checkpoint_format.h"
#include "io/flatbuf.h"

static int cmp_tensor_ptr(const void *a, const void *b) {
  const wt_const_tensor *x = *(const wt_const_tensor *const *)a;
  const wt_const_tensor *y = *(const wt_const_tensor *const *)b;
  return strcmp(x->name, y->name);
}

static int cmp_state_ptr(const void *a, const void *b) {
  const wt_ckpt_param_state *x = *(const wt_ckpt_param_state *const *)a;
  const wt_ckpt_param_state *y = *(const wt_ckpt_param_state *const *)b;
  return strcmp(x->param_name, y->param_name);
}

static int check_tensor(const wt_const_tensor *t, int nominal, const char *where) {
  if (!t->name) return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: a tensor of %s has no name", where);
  if (!wt_dtype_supported(t->t.dtype))
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: tensor '%s' has unsupported data type %s "
                     "(%d)", t->name, wt_dtype_name(t->t.dtype), t->t.dtype);
  if (t->t.rank < 0 || t->t.rank > WT_MAX_RANK)
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: tensor '%s' has rank %d", t->name, t->t.rank);
  for (int i = 0; i < t->t.rank; i++)
    if (t->t.dims[i] < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: tensor '%s' has a negative dimension",
                       t->name);
  uint64_t n;
  if (element_count(&t->t, &n))
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: tensor '%s' has more than 2^32 elements",
                     t->name);
  if (!nominal && n && !t->t.data)
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: tensor '%s' has no data", t->name);
  return WT_OK;
}

/* Where the tensors of an external-data checkpoint go in its external data file. */
typedef struct ck_ext_writer {
  wt_ckpt_segment *segs;
  int n, cap;
  uint64_t pos;  /* the file's length so far */
} ck_ext_writer;

/* Appends t's bytes to the external data file at the next multiple of 4 (8 for 8-byte
 * types); -1 when out of memory. */
static int64_t ext_place(ck_ext_writer *x, const wt_const_tensor *t, uint64_t bytes) {
  if (x->n == x->cap) {
    int cap = x->cap ? 2 * x->cap : 16;
    wt_ckpt_segment *s = realloc(x->segs, sizeof *s * (size_t)cap);
    if (!s) return -1;
    x->segs = s;
    x->cap = cap;
  }
  uint64_t align = wt_dtype_size(t->t.dtype) == 8 ? 8 : 4;
  uint64_t at = (x->pos + align - 1) / align * align;
  x->segs[x->n++] = (wt_ckpt_segment){t->name, t->t.data, at, bytes};
  x->pos = at + bytes;
  return (int64_t)at;
}

static wt_fb_ref_t write_tensor(wt_fb_builder *b, const wt_const_tensor *t, int nominal,
                                ck_ext_writer *ext) {
  uint64_t n = 0;
  element_count(&t->t, &n);  /* checked by check_tensor */
  uint64_t bytes = n * wt_dtype_size(t->t.dtype);
  wt_fb_ref_t raw = 0;
  int64_t offset = -1;
  if (!nominal && ext && bytes >= WT_CKPT_EXTERNAL_MIN) {
    offset = ext_place(ext, t, bytes);
    if (offset < 0) b->failed = 1;
  } else if (!nominal) {
    if (bytes > UINT32_MAX) b->failed = 1;
    else raw = wt_fb_create_vector(b, t->t.data, (uint32_t)bytes, 1);
  }
  wt_fb_ref_t dims = wt_fb_create_vector(b, t->t.dims, (uint32_t)t->t.rank, 8);
  wt_fb_ref_t name = wt_fb_create_string(b, t->name);
  int32_t dtype = t->t.dtype;
  wt_fb_start_table(b);
  if (offset >= 0) wt_fb_add_scalar(b, T_EXTERNAL_DATA_OFFSET, &offset, 8);
  if (raw) wt_fb_add_ref(b, T_RAW_DATA, raw);
  wt_fb_add_ref(b, T_DIMS, dims);
  wt_fb_add_ref(b, T_NAME, name);
  wt_fb_add_scalar(b, T_DATA_TYPE, &dtype, 4);
  return wt_fb_end_table(b);
}

/* Writes n tensors sorted by name; returns the vector's ref (0 and an error set on failure). */
static int write_tensors(wt_fb_builder *b, const wt_const_tensor *ts, int n, int nominal,
                         ck_ext_writer *ext, const char *where, wt_fb_ref_t *vec) {
  if (n < 0 || (n && !ts))
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: %s: %d tensors but no array", where, n);
  const wt_const_tensor **order = malloc(((size_t)n + 1) * sizeof *order);
  wt_fb_ref_t *refs = malloc(((size_t)n + 1) * sizeof *refs);
  int rc = WT_OK;
  if (!order || !refs) rc = ck_oom();
  for (int i = 0; rc == WT_OK && i < n; i++) {
    rc = check_tensor(&ts[i], nominal, where);
    order[i] = &ts[i];
  }
  if (rc == WT_OK) {
    qsort(order, (size_t)n, sizeof *order, cmp_tensor_ptr);
    for (int i = 0; i < n; i++) refs[i] = write_tensor(b, order[i], nominal, ext);
    *vec = wt_fb_create_ref_vector(b, refs, (uint32_t)n);
  }
  free(order);
  free(refs);
  return rc;
}

static int write_optimizer(wt_fb_builder *b, const wt_checkpoint *c, ck_ext_writer *ext,
                           wt_fb_ref_t *vec) {
  int n = c->n_param_states;
  if (n < 0 || (n && !c->param_states))
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: %d optimizer states but no array", n);
  const wt_ckpt_param_state **order = malloc(((size_t)n + 1) * sizeof *order);
  wt_fb_ref_t *refs = malloc(((size_t)n + 1) * sizeof *refs);
  int rc = order && refs ? WT_OK : ck_oom();
  for (int i = 0; rc == WT_OK && i < n; i++) {
    order[i] = &c->param_states[i];
    if (!order[i]->param_name)
      rc = wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: optimizer state #%d has no param_name", i);
  }
  if (rc == WT_OK) qsort(order, (size_t)n, sizeof *order, cmp_state_ptr);
  for (int i = 0; rc == WT_OK && i < n; i++) {
    wt_fb_ref_t moms = 0;
    char where[200];
    snprintf(where, sizeof where, "momentums of parameter '%.120s'", order[i]->param_name);
    rc = write_tensors(b, order[i]->momentums, order[i]->n_momentums, 0, ext, where, &moms);
    if (rc != WT_OK) break;
    wt_fb_ref_t pname = wt_fb_create_string(b, order[i]->param_name);
    wt_fb_start_table(b);
    wt_fb_add_ref(b, PS_MOMENTUMS, moms);
    wt_fb_add_ref(b, PS_PARAM_NAME, pname);
    refs[i] = wt_fb_end_table(b);
  }
  if (rc == WT_OK) {
    wt_fb_ref_t states = wt_fb_create_ref_vector(b, refs, (uint32_t)n);
    wt_fb_ref_t gname = wt_fb_create_string(b, c->group_name ? c->group_name : "group0");
    wt_fb_start_table(b);
    if (c->step != 0) wt_fb_add_scalar(b, OG_STEP, &c->step, 8);
    wt_fb_add_ref(b, OG_OPTIMIZER_STATES, states);
    wt_fb_add_ref(b, OG_GROUP_NAME, gname);
    uint32_t lr_bits;
    memcpy(&lr_bits, &c->initial_lr, 4);
    if (lr_bits != 0) wt_fb_add_scalar(b, OG_INITIAL_LR, &c->initial_lr, 4);
    wt_fb_ref_t group = wt_fb_end_table(b);
    *vec = wt_fb_create_ref_vector(b, &group, 1);
  }
  free(order);
  free(refs);
  return rc;
}

/* One kind of property: k = 0 ints, 1 floats, 2 strings. */
static int write_props(wt_fb_builder *b, const wt_checkpoint *c, int k, wt_fb_ref_t *vec) {
  int n = k == 0 ? c->n_ints : k == 1 ? c->n_floats : c->n_strings;
  const void *arr = k == 0 ? (const void *)c->ints : k == 1 ? (const void *)c->floats
                                                           : (const void *)c->strings;
  if (n < 0 || (n && !arr))
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: %d properties but no array", n);
  wt_fb_ref_t *refs = malloc(((size_t)n + 1) * sizeof *refs);
  if (!refs) return ck_oom();
  for (int i = 0; i < n; i++) {
    const char *name = k == 0 ? c->ints[i].name : k == 1 ? c->floats[i].name : c->strings[i].name;
    if (!name || (k == 2 && !c->strings[i].value)) {
      free(refs);
      return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: property #%d has no name or value", i);
    }
    wt_fb_ref_t sval = k == 2 ? wt_fb_create_string(b, c->strings[i].value) : 0;
    wt_fb_ref_t nref = wt_fb_create_string(b, name);
    wt_fb_start_table(b);
    if (k == 0 && c->ints[i].value != 0) wt_fb_add_scalar(b, PROP_VALUE, &c->ints[i].value, 8);
    wt_fb_add_ref(b, PROP_NAME, nref);
    if (k == 1) {
      uint32_t bits;
      memcpy(&bits, &c->floats[i].value, 4);
      if (bits != 0) wt_fb_add_scalar(b, PROP_VALUE, &c->floats[i].value, 4);
    }
    if (k == 2) wt_fb_add_ref(b, PROP_VALUE, sval);
    refs[i] = wt_fb_end_table(b);
  }
  *vec = wt_fb_create_ref_vector(b, refs, (uint32_t)n);
  free(refs);
  return WT_OK;
}

static int checkpoint_write(const wt_checkpoint *c, int include_optimizer_state,
                            ck_ext_writer *ext, uint8_t **out, size_t *len);

int wt_checkpoint_write(const wt_checkpoint *c, int include_optimizer_state, uint8_t **out,
                        size_t *len) {
  return checkpoint_write(c, include_optimizer_state, NULL, out, len);
}

int wt_checkpoint_write_ext(const wt_checkpoint *c, int include_optimizer_state, uint8_t **out,
                            size_t *len, wt_ckpt_segment **segs, int *n_segs, uint64_t *ext_len) {
  ck_ext_writer x = {0};
  int rc = checkpoint_write(c, include_optimizer_state, &x, out, len);
  if (rc != WT_OK) {
    free(x.segs);
    x = (ck_ext_writer){0};
  }
  *segs = x.segs;
  *n_segs = x.n;
  *ext_len = x.pos;
  return rc;
}

static int checkpoint_write(const wt_checkpoint *c, int include_optimizer_state,
                            ck_ext_writer *ext, uint8_t **out, size_t *len) {
  *out = NULL;
  *len = 0;
  if (!c) return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: NULL checkpoint");
  wt_fb_builder b;
  wt_fb_builder_init(&b);
  wt_fb_ref_t trainable = 0, frozen = 0, groups = 0, bag = 0, props[3] = {0, 0, 0};
  int nominal = c->is_nominal != 0;
  int rc = write_tensors(&b, c->trainable, c->n_trainable, nominal, ext,
                         "module_state.requires_grad_params", &trainable);
  if (rc == WT_OK)
    rc = write_tensors(&b, c->frozen, c->n_frozen, nominal, ext, "module_state.frozen_params",
                       &frozen);
  if (rc == WT_OK && include_optimizer_state && c->has_optimizer)
    rc = write_optimizer(&b, c, ext, &groups);
  int has_props = c->n_ints > 0 || c->n_floats > 0 || c->n_strings > 0;
  for (int k = 0; rc == WT_OK && has_props && k < 3; k++) rc = write_props(&b, c, k, &props[k]);
  if (rc != WT_OK) {
    wt_fb_builder_free(&b);
    return rc;
  }
  if (has_props) {
    wt_fb_start_table(&b);
    wt_fb_add_ref(&b, PB_STRINGS, props[2]);
    wt_fb_add_ref(&b, PB_FLOATS, props[1]);
    wt_fb_add_ref(&b, PB_INTS, props[0]);
    bag = wt_fb_end_table(&b);
  }
  wt_fb_start_table(&b);
  wt_fb_add_ref(&b, MS_FROZEN, frozen);
  wt_fb_add_ref(&b, MS_REQUIRES_GRAD, trainable);
  if (nominal) {
    uint8_t one = 1;
    wt_fb_add_scalar(&b, MS_IS_NOMINAL, &one, 1);
  }
  if (ext && ext->n > 0) { /* the momentums of a nominal state's optimizer can be there too */
    uint8_t one = 1;
    wt_fb_add_scalar(&b, MS_HAS_EXTERNAL, &one, 1);
  }
  wt_fb_ref_t ms = wt_fb_end_table(&b);

  int32_t version = CK_WRITE_VERSION;
  wt_fb_start_table(&b);
  if (has_props) wt_fb_add_ref(&b, CK_PROPERTY_BAG, bag);
  if (groups) wt_fb_add_ref(&b, CK_OPTIMIZER_GROUPS, groups);
  wt_fb_add_ref(&b, CK_MODULE_STATE, ms);
  wt_fb_add_scalar(&b, CK_VERSION, &version, 4);
  wt_fb_ref_t root = wt_fb_end_table(&b);
  rc = wt_fb_finish(&b, root, CK_IDENT, out, len);
  wt_fb_builder_free(&b);
  if (rc != WT_OK && !ext)
    return wt_error_context(rc, "checkpoint (over 2 GB: save it with external data)");
  return rc;
}
