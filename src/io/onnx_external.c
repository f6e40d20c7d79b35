/* External tensor data: a TensorProto whose bytes live in a side file beside the model
 * (`external_data` entries location / offset / length, as onnx.save_model(...,
 * save_as_external_data=True) and PyTorch write them). The one parser of those entries, the
 * listing of what a model references (the JS layer reads it to fetch only what is needed
 * before a model is parsed), and the reader a parse uses when its options give none: natively
 * none (an error), in wasm the JavaScript layer's (src/wasm/api_external.c installs it).
 *
 * A location is a relative path inside the model's directory: not absolute, no '\', no ':'
 * (a drive letter or a URL scheme), no '..' component. Offsets and lengths are decimal
 * integers; a length, when given, is what the tensor's dims and dtype need. */
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"
#include "io/onnx_external.h"
#include "io/pb_wire.h"
#include "onnx.pb-c.h"

static wt_external_read_fn g_default_read;
static void *g_default_user;

void wt_onnx_set_default_external(wt_external_read_fn fn, void *user) {
  g_default_read = fn;
  g_default_user = user;
}

/* A decimal integer of 1 to 19 digits (below 2^63); 0 when s is anything else. */
static int parse_u64(const char *s, uint64_t *out) {
  size_t n = strlen(s);
  if (n == 0 || n > 19) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return 1;
}

/* A relative path that stays inside the model's directory. */
static int location_ok(const char *loc) {
  if (loc[0] == '/' || strchr(loc, '\\') || strchr(loc, ':')) return 0;
  for (const char *p = loc; *p;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.') return 0;
    p += n;
    if (*p == '/') p++;
  }
  return 1;
}

int wt_external_parse(const Onnx__TensorProto *tp, size_t nbytes, const char *name,
                      wt_external_ref *out) {
  const char *location = NULL, *offset = NULL, *length = NULL;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = tp->external_data[i];
    if (!e->key || !e->value) continue;
    if (strcmp(e->key, "location") == 0) location = e->value;
    else if (strcmp(e->key, "offset") == 0) offset = e->value;
    else if (strcmp(e->key, "length") == 0) length = e->value;
  }
  if (!location || !location[0])
    return wt_errorf(WT_ERR_PARSE, "tensor '%s' has external data without a location", name);
  if (!location_ok(location))
    return wt_errorf(WT_ERR_PARSE,
                     "tensor '%s': external data location '%s' must be a relative path inside "
                     "the model's directory (no absolute path, '..', '\\' or ':')", name, location);
  uint64_t off = 0, len = nbytes;
  if (offset && !parse_u64(offset, &off))
    return wt_errorf(WT_ERR_PARSE, "tensor '%s': external data offset '%s' is not a whole "
                     "number of bytes", name, offset);
  if (length && !parse_u64(length, &len))
    return wt_errorf(WT_ERR_PARSE, "tensor '%s': external data length '%s' is not a whole "
                     "number of bytes", name, length);
  if (len != nbytes)
    return wt_errorf(WT_ERR_PARSE, "tensor '%s': external data length %llu; its dims and dtype "
                     "need %zu bytes", name, (unsigned long long)len, nbytes);
  *out = (wt_external_ref){.tensor = name, .location = location, .offset = off, .length = len};
  return WT_OK;
}

int wt_external_read(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts, void *dst,
                     size_t nbytes, const char *name) {
  wt_external_ref r;
  WT_TRY(wt_external_parse(tp, nbytes, name, &r));
  wt_external_read_fn fn = opts && opts->read_external ? opts->read_external : g_default_read;
  void *user = opts && opts->read_external ? opts->user : g_default_user;
  if (!fn)
    return wt_errorf(WT_ERR_IO, "tensor '%s' is stored in external file '%s', but no way to "
                     "read external data was given", name, r.location);
  if (nbytes == 0) return WT_OK;
  int rc = fn(user, r.location, r.offset, r.length, dst);
  return rc ? wt_error_context(rc, "tensor '%s'", name) : WT_OK;
}

/* ---- listing what a model references --------------------------------------------------------- */

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_EXTERNAL_DATA = 13 };

static int has_field(const uint8_t *p, size_t len, uint32_t id) {
  size_t at = 0;
  wt_pb_field f;
  while (wt_pb_next(p, len, &at, &f))
    if (f.id == id) return 1;
  return 0;
}

void wt_external_refs_free(wt_external_ref *refs, int n) {
  for (int i = 0; refs && i < n; i++) {
    free((char *)refs[i].tensor);
    free((char *)refs[i].location);
  }
  free(refs);
}

/* Appends tensor tp's reference when its data is external. */
static int list_one(const Onnx__TensorProto *tp, wt_external_ref **refs, int *n) {
  if (!tp->has_data_location || tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return WT_OK;
  const char *name = tp->name ? tp->name : "";
  int dtype = tp->has_data_type ? tp->data_type : 0;
  if (!wt_dtype_supported(dtype))
    return wt_errorf(WT_ERR_UNSUPPORTED, "initializer '%s' has dtype %s; webtrain supports "
                     "float, int32, int64 and bool", name, wt_dtype_name(dtype));
  int64_t numel;
  WT_TRY(wt_check_dims("initializer", name, (int)tp->n_dims, tp->dims, &numel));
  wt_external_ref r;
  WT_TRY(wt_external_parse(tp, (size_t)numel * wt_dtype_size(dtype), name, &r));
  r.dtype = dtype;
  wt_external_ref *grown = realloc(*refs, sizeof **refs * (size_t)(*n + 1));
  if (!grown) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  *refs = grown;
  r.tensor = wt_strdup(r.tensor);
  r.location = wt_strdup(r.location);
  grown[(*n)++] = r;
  if (!r.tensor || !r.location) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  return WT_OK;
}

int wt_onnx_list_external(const uint8_t *bytes, size_t len, wt_external_ref **out, int *count) {
  *out = NULL;
  *count = 0;
  int rc = wt_pb_check(&onnx__model_proto__descriptor, bytes, len, "ModelProto");
  if (rc) return wt_error_context(rc, "not a valid ONNX model (%zu bytes)", len);
  wt_external_ref *refs = NULL;
  int n = 0;
  size_t at = 0;
  wt_pb_field f;
  while (rc == WT_OK && wt_pb_next(bytes, len, &at, &f)) {
    if (f.id != MODEL_GRAPH || f.wire != 2) continue;
    size_t gat = 0;
    wt_pb_field t;
    while (rc == WT_OK && wt_pb_next(f.payload, f.len, &gat, &t)) {
      /* only tensors with external_data entries are unpacked: the others may hold their bytes */
      if (t.id != GRAPH_INITIALIZER || t.wire != 2 || !has_field(t.payload, t.len, TENSOR_EXTERNAL_DATA))
        continue;
      Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, t.len, t.payload);
      rc = tp ? list_one(tp, &refs, &n)
              : wt_errorf(WT_ERR_PARSE, "an initializer does not parse as a TensorProto");
      onnx__tensor_proto__free_unpacked(tp, NULL);
    }
  }
  if (rc) {
    wt_external_refs_free(refs, n);
    return rc;
  }
  *out = refs;
  *count = n;
  return WT_OK;
}

/* ---- loading an initializer held by reference ------------------------------------------------ */

int wt_onnx_load_external(wt_graph *g, int v, const wt_onnx_read_opts *opts) {
  wt_value *val = &g->values[v];
  if (!wt_value_unloaded(val)) return WT_OK;
  const wt_external_init *e = wt_graph_external(g, val->name);
  if (!e) return wt_errorf(WT_ERR_INTERNAL, "initializer '%s' is held by reference but has none", val->name);
  wt_external_read_fn fn = opts && opts->read_external ? opts->read_external : g_default_read;
  void *user = opts && opts->read_external ? opts->user : g_default_user;
  if (!fn)
    return wt_errorf(WT_ERR_IO, "tensor '%s' is stored in external file '%s', but no way to "
                     "read external data was given", val->name, e->location);
  void *data = malloc(val->nbytes);
  if (!data) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory reading initializer '%s' (%zu bytes)", val->name, val->nbytes);
  int rc = fn(user, e->location, e->offset, val->nbytes, data);
  if (rc) {
    free(data);
    return wt_error_context(rc, "tensor '%s'", val->name);
  }
  g->values[v].data = data;
  return WT_OK;
}
