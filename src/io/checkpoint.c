/* ONNX Runtime training checkpoint ("ODTC" flatbuffer) <-> wt_checkpoint, through the tiny
 * verifying reader/builder in flatbuf.c. Field ids follow ort_training_checkpoint.fbs and the
 * Tensor table of ort.fbs (checkpoint_format.h); read versions 1 and 2 (the writer:
 * checkpoint_write.c). */
#include "io/checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/status.h"
#include "io/flatbuf.h"
#include "io/checkpoint_format.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void dims_str(const wt_tensor *t, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < t->rank && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? "," : "", t->dims[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

void wt_checkpoint_free(wt_checkpoint *c) {
  if (!c) return;
  wt_const_tensor *lists[2] = {c->trainable, c->frozen};
  int counts[2] = {c->n_trainable, c->n_frozen};
  for (int l = 0; l < 2; l++) {
    for (int i = 0; lists[l] && i < counts[l]; i++) {
      free(lists[l][i].name);
      if (!wt_checkpoint_borrows(c->in_place, c->in_place_len, lists[l][i].t.data)) free(lists[l][i].t.data);
    }
    free(lists[l]);
  }
  free(c->group_name);
  for (int i = 0; c->param_states && i < c->n_param_states; i++) {
    wt_ckpt_param_state *ps = &c->param_states[i];
    free(ps->param_name);
    for (int m = 0; ps->momentums && m < ps->n_momentums; m++) {
      free(ps->momentums[m].name);
      if (!wt_checkpoint_borrows(c->in_place, c->in_place_len, ps->momentums[m].t.data)) free(ps->momentums[m].t.data);
    }
    free(ps->momentums);
  }
  free(c->param_states);
  for (int i = 0; c->ints && i < c->n_ints; i++) free(c->ints[i].name);
  for (int i = 0; c->floats && i < c->n_floats; i++) free(c->floats[i].name);
  for (int i = 0; c->strings && i < c->n_strings; i++) {
    free(c->strings[i].name);
    free(c->strings[i].value);
  }
  free(c->ints);
  free(c->floats);
  free(c->strings);
  free(c->segments);
  free(c);
}

/* ---- reader ------------------------------------------------------------------------------ */

typedef struct ck_reader {
  wt_fb_reader r;
  uint64_t budget;  /* bytes still allowed to be copied out: shared (aliased) strings or data
                     * cannot make the decoded checkpoint larger than the file */
  int external;             /* module_state.has_external_data */
  uint64_t ext_len;         /* the external data file's size (0: none given) */
  uint64_t ext_budget;      /* its bytes not yet claimed by a tensor */
  wt_ckpt_segment *segs;    /* the tensors read from it so far */
  int n_segs, cap_segs;
  int in_place;             /* tensors may point into the bytes (wt_checkpoint_read_in_place) */
  uint64_t lo, hi;          /* every in-place tensor's bytes lie in [lo, hi); lo == hi: none yet */
} ck_reader;

static int ck_take(ck_reader *cr, uint64_t n, const char *what) {
  if (n > cr->budget)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: objects are shared more than once (decoded "
                     "size would exceed the file size)", what);
  cr->budget -= n;
  return WT_OK;
}

/* Required string field id of t, copied into *out. */
static int ck_string(ck_reader *cr, const wt_fb_table *t, int id, const char *what, char **out) {
  const char *s;
  uint32_t n;
  WT_TRY(wt_fb_string(&cr->r, t, id, what, &s, &n));
  if (!s) return wt_errorf(WT_ERR_PARSE, "checkpoint: %s is missing", what);
  WT_TRY(ck_take(cr, (uint64_t)n + 1, what));
  *out = malloc((size_t)n + 1);
  if (!*out) return ck_oom();
  memcpy(*out, s, n);
  (*out)[n] = 0;
  return WT_OK;
}

/* A vector of tables: element count, allocated zeroed array of `elem` bytes each. */
static int ck_table_vector(ck_reader *cr, const wt_fb_table *t, int id, const char *what,
                           size_t elem, wt_fb_vec *v, void **arr, int *n) {
  int present;
  *arr = NULL;
  *n = 0;
  WT_TRY(wt_fb_vector(&cr->r, t, id, 4, what, v, &present));
  if (v->n > 0x7fffffff / elem) return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: too many", what);
  if (v->n == 0) return WT_OK;
  *arr = calloc(v->n, elem);
  if (!*arr) return ck_oom();
  *n = (int)v->n;
  return WT_OK;
}

/* A tensor whose `need` bytes are at `offset` of the external data file: its buffer is
 * allocated and listed for the caller to fill. */
static int read_external(ck_reader *cr, wt_const_tensor *out, const char *what, const char *shape,
                         uint64_t offset, uint32_t raw_n, uint64_t need, int nominal) {
  if (!cr->external)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s has external_data_offset %" PRIu64 " but "
                     "module_state.has_external_data is not set", what, offset);
  if (raw_n || nominal)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s has both external_data_offset and %s", what,
                     nominal ? "a nominal state" : "raw_data");
  if (!cr->ext_len)
    return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: its tensors (%s, ...) are stored in its "
                     "external data file, the checkpoint's name + '.data': keep that file beside "
                     "the checkpoint, or pass its bytes (externalData)", what);
  if (offset > cr->ext_len || need > cr->ext_len - offset)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s (%s, %" PRIu64 " bytes) lies at offset %" PRIu64
                     " of the external data file, past its end (%" PRIu64 " bytes): the file is "
                     "truncated or belongs to another checkpoint", what, shape, need, offset, cr->ext_len);
  if (need > cr->ext_budget)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: tensors claim more bytes of the external data "
                     "file than it has (%" PRIu64 ")", what, cr->ext_len);
  cr->ext_budget -= need;
  if (need == 0) return WT_OK;
  if (cr->n_segs == cr->cap_segs) {
    int cap = cr->cap_segs ? 2 * cr->cap_segs : 16;
    wt_ckpt_segment *s = realloc(cr->segs, sizeof *s * (size_t)cap);
    if (!s) return ck_oom();
    cr->segs = s;
    cr->cap_segs = cap;
  }
  if (need > SIZE_MAX || !(out->t.data = malloc((size_t)need))) return ck_oom();
  cr->segs[cr->n_segs++] = (wt_ckpt_segment){out->name, out->t.data, offset, need};
  return WT_OK;
}

static int read_tensor(ck_reader *cr, const wt_fb_table *t, int nominal, const char *where,
                       uint32_t index, wt_const_tensor *out) {
  char what[200], name_what[96];
  uint64_t v;
  int present;
  snprintf(name_what, sizeof name_what, "name of tensor #%u of %s", index, where);
  WT_TRY(ck_string(cr, t, T_NAME, name_what, &out->name));
  snprintf(what, sizeof what, "tensor '%.120s'", out->name);

  WT_TRY(wt_fb_scalar(&cr->r, t, T_EXTERNAL_DATA_OFFSET, 8, what, &v, &present));
  int64_t ext_offset = present ? (int64_t)v : -1;
  WT_TRY(wt_fb_scalar(&cr->r, t, T_DATA_TYPE, 4, what, &v, &present));
  int dtype = (int)(int32_t)v;
  if (!wt_dtype_supported(dtype))
    return wt_errorf(WT_ERR_UNSUPPORTED, "checkpoint: %s has data type %s (%d); webtrain "
                     "supports float, int32, int64 and bool", what, wt_dtype_name(dtype), dtype);
  out->t.dtype = dtype;

  wt_fb_vec dims;
  WT_TRY(wt_fb_vector(&cr->r, t, T_DIMS, 8, what, &dims, &present));
  if (!present) return wt_errorf(WT_ERR_PARSE, "checkpoint: %s has no dims", what);
  if (dims.n > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "checkpoint: %s has rank %u; webtrain supports up to %d",
                     what, dims.n, WT_MAX_RANK);
  out->t.rank = (int)dims.n;
  for (uint32_t i = 0; i < dims.n; i++) {
    int64_t d = (int64_t)wt_fb_u64(cr->r.p + dims.pos + 8 * (uint64_t)i);
    if (d < 0)
      return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: dimension %u is negative (%" PRId64 ")",
                       what, i, d);
    out->t.dims[i] = d;
  }
  char shape[160];
  dims_str(&out->t, shape, sizeof shape);
  uint64_t count;
  if (element_count(&out->t, &count))
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: shape %s has more than 2^32 elements", what,
                     shape);

  wt_fb_vec sdata;
  WT_TRY(wt_fb_vector(&cr->r, t, T_STRING_DATA, 4, what, &sdata, &present));
  if (sdata.n)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: %s tensor has string_data", what,
                     wt_dtype_name(dtype));

  wt_fb_vec raw;
  WT_TRY(wt_fb_vector(&cr->r, t, T_RAW_DATA, 1, what, &raw, &present));
  if (ext_offset >= 0) return read_external(cr, out, what, shape, (uint64_t)ext_offset, raw.n,
                                            count * wt_dtype_size(dtype), nominal);
  if (nominal) {
    if (raw.n)
      return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: nominal state tensor has %u bytes of data",
                       what, raw.n);
    return WT_OK;
  }
  uint64_t need = count * wt_dtype_size(dtype);
  if (raw.n != need)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: %s: raw_data has %u bytes; %s %s needs %" PRIu64,
                     what, raw.n, wt_dtype_name(dtype), shape, need);
  if (need == 0) return WT_OK;
  /* in place when aligned for the dtype and clear of every other in-place tensor (a file whose
   * tensors share bytes gets copies: no two parameters alias) */
  const uint8_t *src = cr->r.p + raw.pos;
  size_t align = wt_dtype_size(dtype);
  uint64_t end = raw.pos + need;
  if (cr->in_place && (uintptr_t)src % align == 0 && (cr->lo == cr->hi || end <= cr->lo || raw.pos >= cr->hi)) {
    cr->lo = cr->lo == cr->hi || raw.pos < cr->lo ? raw.pos : cr->lo;
    cr->hi = end > cr->hi ? end : cr->hi;
    out->t.data = (void *)src;
    return WT_OK;
  }
  WT_TRY(ck_take(cr, need, what));
  out->t.data = malloc((size_t)need);
  if (!out->t.data) return ck_oom();
  memcpy(out->t.data, cr->r.p + raw.pos, (size_t)need);
  return WT_OK;
}

static int read_tensors(ck_reader *cr, const wt_fb_table *t, int id, int nominal,
                        const char *where, wt_const_tensor **arr, int *n) {
  wt_fb_vec v;
  int present;
  WT_TRY(wt_fb_vector(&cr->r, t, id, 4, where, &v, &present));
  if (!present) return wt_errorf(WT_ERR_PARSE, "checkpoint: %s is missing", where);
  WT_TRY(ck_table_vector(cr, t, id, where, sizeof **arr, &v, (void **)arr, n));
  for (uint32_t i = 0; i < v.n; i++) {
    wt_fb_table tt;
    char what[96];
    snprintf(what, sizeof what, "tensor #%u of %s", i, where);
    WT_TRY(wt_fb_vec_table(&cr->r, &v, i, what, &tt));
    WT_TRY(read_tensor(cr, &tt, nominal, where, i, &(*arr)[i]));
  }
  return WT_OK;
}

static int cmp_name_ptr(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Parameter names are unique across trainable and frozen (sorted copy: O(n log n)). */
static int check_unique_names(const wt_checkpoint *c) {
  size_t n = (size_t)c->n_trainable + (size_t)c->n_frozen;
  if (n < 2) return WT_OK;
  const char **names = malloc(n * sizeof *names);
  if (!names) return ck_oom();
  for (int i = 0; i < c->n_trainable; i++) names[i] = c->trainable[i].name;
  for (int i = 0; i < c->n_frozen; i++) names[c->n_trainable + i] = c->frozen[i].name;
  qsort(names, n, sizeof *names, cmp_name_ptr);
  int rc = WT_OK;
  for (size_t i = 1; i < n && rc == WT_OK; i++)
    if (strcmp(names[i - 1], names[i]) == 0)
      rc = wt_errorf(WT_ERR_PARSE, "checkpoint: parameter '%.120s' appears more than once in "
                     "the module state", names[i]);
  free(names);
  return rc;
}

static int read_module_state(ck_reader *cr, const wt_fb_table *ms, wt_checkpoint *c) {
  uint64_t v;
  int present;
  WT_TRY(wt_fb_scalar(&cr->r, ms, MS_HAS_EXTERNAL, 1, "module_state.has_external_data", &v,
                      &present));
  cr->external = c->has_external_data = v != 0;
  WT_TRY(wt_fb_scalar(&cr->r, ms, MS_IS_NOMINAL, 1, "module_state.is_nominal_state", &v,
                      &present));
  if (present && c->version < 2)
    return wt_errorf(WT_ERR_PARSE, "checkpoint: version %d has no is_nominal_state field but "
                     "the module state sets it", c->version);
  c->is_nominal = v != 0;
  WT_TRY(read_tensors(cr, ms, MS_REQUIRES_GRAD, c->is_nominal, "module_state.requires_grad_params",
                      &c->trainable, &c->n_trainable));
  WT_TRY(read_tensors(cr, ms, MS_FROZEN, c->is_nominal, "module_state.frozen_params", &c->frozen,
                      &c->n_frozen));
  return check_unique_names(c);
}

static int read_optimizer(ck_reader *cr, const wt_fb_table *root, wt_checkpoint *c) {
  wt_fb_vec groups;
  int present;
  WT_TRY(wt_fb_vector(&cr->r, root, CK_OPTIMIZER_GROUPS, 4, "optimizer_groups", &groups, &present));
  if (groups.n == 0) return WT_OK;
  if (groups.n > 1)
    return wt_errorf(WT_ERR_UNSUPPORTED, "checkpoint: %u optimizer groups; webtrain supports one",
                     groups.n);
  wt_fb_table g;
  uint64_t v;
  WT_TRY(wt_fb_vec_table(&cr->r, &groups, 0, "optimizer group", &g));
  c->has_optimizer = 1;
  WT_TRY(ck_string(cr, &g, OG_GROUP_NAME, "optimizer group name", &c->group_name));
  WT_TRY(wt_fb_scalar(&cr->r, &g, OG_STEP, 8, "optimizer group step", &v, &present));
  c->step = (int64_t)v;
  WT_TRY(wt_fb_scalar(&cr->r, &g, OG_INITIAL_LR, 4, "optimizer group initial_learning_rate", &v,
                      &present));
  uint32_t bits = (uint32_t)v;
  memcpy(&c->initial_lr, &bits, 4);
  wt_fb_vec states;
  const char *where = "optimizer group optimizer_states";
  WT_TRY(wt_fb_vector(&cr->r, &g, OG_OPTIMIZER_STATES, 4, where, &states, &present));
  if (!present) return wt_errorf(WT_ERR_PARSE, "checkpoint: %s is missing", where);
  WT_TRY(ck_table_vector(cr, &g, OG_OPTIMIZER_STATES, where, sizeof *c->param_states, &states,
                         (void **)&c->param_states, &c->n_param_states));
  for (uint32_t i = 0; i < states.n; i++) {
    wt_fb_table ps;
    char what[200];
    snprintf(what, sizeof what, "optimizer state #%u", i);
    WT_TRY(wt_fb_vec_table(&cr->r, &states, i, what, &ps));
    wt_ckpt_param_state *s = &c->param_states[i];
    snprintf(what, sizeof what, "param_name of optimizer state #%u", i);
    WT_TRY(ck_string(cr, &ps, PS_PARAM_NAME, what, &s->param_name));
    snprintf(what, sizeof what, "momentums of parameter '%.120s'", s->param_name);
    WT_TRY(read_tensors(cr, &ps, PS_MOMENTUMS, 0, what, &s->momentums, &s->n_momentums));
  }
  return WT_OK;
}

static int read_properties(ck_reader *cr, const wt_fb_table *root, wt_checkpoint *c) {
  wt_fb_table bag;
  int present;
  WT_TRY(wt_fb_subtable(&cr->r, root, CK_PROPERTY_BAG, "property_bag", &bag, &present));
  if (!present) return WT_OK;
  static const char *const kinds[3] = {"int", "float", "string"};
  void *arrs[3] = {NULL, NULL, NULL};
  size_t elems[3] = {sizeof *c->ints, sizeof *c->floats, sizeof *c->strings};
  int *counts[3] = {&c->n_ints, &c->n_floats, &c->n_strings};
  wt_fb_vec vecs[3];
  for (int k = 0; k < 3; k++) {
    char what[64];
    snprintf(what, sizeof what, "property_bag %s properties", kinds[k]);
    int rc = ck_table_vector(cr, &bag, PB_INTS + k, what, elems[k], &vecs[k], &arrs[k], counts[k]);
    c->ints = arrs[0];
    c->floats = arrs[1];
    c->strings = arrs[2];
    WT_TRY(rc);
  }
  for (int k = 0; k < 3; k++) {
    for (uint32_t i = 0; i < vecs[k].n; i++) {
      wt_fb_table p;
      char what[200];
      uint64_t v;
      snprintf(what, sizeof what, "%s property #%u", kinds[k], i);
      WT_TRY(wt_fb_vec_table(&cr->r, &vecs[k], i, what, &p));
      char **name = k == 0 ? &c->ints[i].name : k == 1 ? &c->floats[i].name : &c->strings[i].name;
      WT_TRY(ck_string(cr, &p, PROP_NAME, what, name));
      snprintf(what, sizeof what, "value of %s property '%.120s'", kinds[k], *name);
      if (k == 2) {
        WT_TRY(ck_string(cr, &p, PROP_VALUE, what, &c->strings[i].value));
      } else {
        WT_TRY(wt_fb_scalar(&cr->r, &p, PROP_VALUE, k == 0 ? 8 : 4, what, &v, &present));
        if (k == 0) {
          c->ints[i].value = (int64_t)v;
        } else {
          uint32_t bits = (uint32_t)v;
          memcpy(&c->floats[i].value, &bits, 4);
        }
      }
    }
  }
  return WT_OK;
}

static int checkpoint_read(const uint8_t *bytes, size_t len, uint64_t ext_len, int in_place,
                           uint64_t *need, wt_checkpoint **out);

int wt_checkpoint_read(const uint8_t *bytes, size_t len, wt_checkpoint **out) {
  return wt_checkpoint_read_ext(bytes, len, 0, out);
}

static int read_checked(const uint8_t *bytes, size_t len, uint64_t ext_len, int in_place,
                        wt_checkpoint **out);

int wt_checkpoint_read_ext(const uint8_t *bytes, size_t len, uint64_t ext_len, wt_checkpoint **out) {
  return read_checked(bytes, len, ext_len, 0, out);
}

int wt_checkpoint_read_in_place(const uint8_t *bytes, size_t len, uint64_t ext_len, wt_checkpoint **out) {
  return read_checked(bytes, len, ext_len, 1, out);
}

static int read_checked(const uint8_t *bytes, size_t len, uint64_t ext_len, int in_place,
                        wt_checkpoint **out) {
  *out = NULL;
  if (!bytes && len) return wt_errorf(WT_ERR_INVALID_ARG, "checkpoint: NULL buffer");
  uint64_t need = 0;
  int rc = checkpoint_read(bytes, len, ext_len, in_place, &need, out);
  if (rc == WT_ERR_PARSE && need > len) {
    /* a read past the end: most likely a file cut short (an interrupted download or save) */
    char detail[512];
    const char *msg = wt_error_message();
    if (!strncmp(msg, "checkpoint: ", 12)) msg += 12;
    snprintf(detail, sizeof detail, "%s", msg);
    return wt_errorf(WT_ERR_PARSE, "truncated or corrupt checkpoint: %zu bytes, expected at least %llu "
                     "(%s)", len, (unsigned long long)need, detail);
  }
  return rc;
}

int wt_checkpoint_has_external(const uint8_t *bytes, size_t len) {
  uint64_t need = 0, v = 0;
  wt_fb_reader r = {bytes, len, "checkpoint", &need};
  wt_fb_table root, ms;
  int present = 0;
  if (!bytes || wt_fb_root(&r, CK_IDENT, &root) ||
      wt_fb_subtable(&r, &root, CK_MODULE_STATE, "module_state", &ms, &present) || !present ||
      wt_fb_scalar(&r, &ms, MS_HAS_EXTERNAL, 1, "module_state.has_external_data", &v, &present)) {
    wt_error_clear();
    return 0;
  }
  return v != 0;
}

static int checkpoint_read(const uint8_t *bytes, size_t len, uint64_t ext_len, int in_place,
                           uint64_t *need, wt_checkpoint **out) {
  ck_reader cr = {{bytes, len, "checkpoint", need}, len, .ext_len = ext_len, .ext_budget = ext_len,
                  .in_place = in_place};
  wt_fb_table root, ms;
  uint64_t v;
  int present;
  WT_TRY(wt_fb_root(&cr.r, CK_IDENT, &root));
  WT_TRY(wt_fb_scalar(&cr.r, &root, CK_VERSION, 4, "version", &v, &present));
  int version = (int)(int32_t)v;
  if (version != 1 && version != 2)
    return wt_errorf(WT_ERR_UNSUPPORTED, "checkpoint: format version %d is not supported "
                     "(webtrain reads versions 1 and 2)", version);
  WT_TRY(wt_fb_subtable(&cr.r, &root, CK_MODULE_STATE, "module_state", &ms, &present));
  if (!present) return wt_errorf(WT_ERR_PARSE, "checkpoint: module_state is missing");

  wt_checkpoint *c = calloc(1, sizeof *c);
  if (!c) return ck_oom();
  c->version = version;
  if (in_place) c->in_place = bytes, c->in_place_len = len;
  int rc = read_module_state(&cr, &ms, c);
  if (rc == WT_OK) rc = read_optimizer(&cr, &root, c);
  if (rc == WT_OK) rc = read_properties(&cr, &root, c);
  c->segments = cr.segs;
  c->n_segments = cr.n_segs;
  if (rc != WT_OK) {
    wt_checkpoint_free(c);
    return rc;
  }
  *out = c;
  return WT_OK;
}
