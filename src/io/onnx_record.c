/* The record of a model (see onnx_scan.h): read from the bytes the core will parse, without
 * unpacking the graph's nodes or any initializer's data: the top-level fields are walked, and
 * only metadata_props entries and the graph's input and output ValueInfoProtos are unpacked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_scan.h"
#include "io/pb_wire.h"
#include "onnx.pb-c.h"

enum { MODEL_GRAPH = 7, MODEL_METADATA = 14, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12 };

static void io_free(wt_io_desc *d, int n) {
  for (int i = 0; d && i < n; i++) {
    free(d[i].name);
    free(d[i].dims);
    for (int k = 0; d[i].dim_params && k < d[i].rank; k++) free(d[i].dim_params[k]);
    free(d[i].dim_params);
  }
  free(d);
}

void wt_model_record_free(wt_model_record *r) {
  if (!r) return;
  free(r->bytes);
  wt_inside_refs_free(r->inside, r->n_inside);
  free(r->self.location);
  wt_external_refs_free(r->external, r->n_external);
  for (int i = 0; i < r->n_prints; i++) free(r->prints[i].location);
  free(r->prints);
  io_free(r->inputs, r->n_inputs);
  io_free(r->outputs, r->n_outputs);
  free(r);
}

#define NO_MEMORY() wt_errorf(WT_ERR_NO_MEMORY, "out of memory")

/* A metadata_props entry: a base file's fingerprint when its key says so ("size hash"). */
static int read_print(wt_model_record *r, const uint8_t *p, size_t n) {
  Onnx__StringStringEntryProto *e = onnx__string_string_entry_proto__unpack(NULL, n, p);
  if (!e) return wt_errorf(WT_ERR_PARSE, "a metadata_props entry does not parse");
  size_t klen = strlen(WT_BASE_PRINT_KEY);
  unsigned long long size;
  unsigned hash;
  int rc = WT_OK;
  if (e->key && e->value && !strncmp(e->key, WT_BASE_PRINT_KEY, klen) &&
      sscanf(e->value, "%llu %8x", &size, &hash) == 2) {
    wt_base_print *grown = realloc(r->prints, sizeof *grown * (size_t)(r->n_prints + 1));
    if (!grown) rc = NO_MEMORY();
    else {
      r->prints = grown;
      grown[r->n_prints] = (wt_base_print){.location = wt_strdup(e->key + klen), .size = size, .hash = hash};
      if (!grown[r->n_prints++].location) rc = NO_MEMORY();
    }
  }
  onnx__string_string_entry_proto__free_unpacked(e, NULL);
  return rc;
}

static int read_io(wt_io_desc *d, const uint8_t *p, size_t n) {
  Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, n, p);
  if (!vi) return wt_errorf(WT_ERR_PARSE, "a graph input or output does not parse as a ValueInfoProto");
  int rc = WT_OK;
  d->rank = -1;
  if (!(d->name = wt_strdup(vi->name ? vi->name : ""))) rc = NO_MEMORY();
  const Onnx__TypeProto *tp = vi->type;
  if (rc == WT_OK && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
    d->sequence = 1;
    tp = tp->sequence_type->elem_type;
  }
  const Onnx__TypeProto__Tensor *tt = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
  if (rc == WT_OK && tt) {
    d->dtype = tt->has_elem_type ? tt->elem_type : 0;
    if (tt->shape && tt->shape->n_dim > WT_MAX_RANK)
      rc = wt_errorf(WT_ERR_UNSUPPORTED, "'%s' has rank %zu; webtrain supports rank <= %d", d->name, tt->shape->n_dim, WT_MAX_RANK);
    else if (tt->shape) {
      d->rank = (int32_t)tt->shape->n_dim;
      d->dims = calloc((size_t)d->rank + 1, sizeof *d->dims);
      d->dim_params = calloc((size_t)d->rank + 1, sizeof *d->dim_params);
      if (!d->dims || !d->dim_params) rc = NO_MEMORY();
      for (int i = 0; rc == WT_OK && i < d->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *x = tt->shape->dim[i];
        int fixed = x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && x->dim_value >= 0;
        d->dims[i] = fixed ? x->dim_value : -1;
        if (!fixed && x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && x->dim_param &&
            !(d->dim_params[i] = wt_strdup(x->dim_param)))
          rc = NO_MEMORY();
      }
    }
  }
  onnx__value_info_proto__free_unpacked(vi, NULL);
  return rc;
}

static int push_io(wt_io_desc **list, int *n, const uint8_t *p, size_t len) {
  wt_io_desc *grown = realloc(*list, sizeof *grown * (size_t)(*n + 1));
  if (!grown) return NO_MEMORY();
  *list = grown;
  memset(&grown[*n], 0, sizeof *grown);
  (*n)++;
  return read_io(&grown[*n - 1], p, len);
}

static int read_record(wt_model_record *r) {
  /* checks the wire format, and lists the tensors in side files */
  WT_TRY(wt_onnx_list_external(r->bytes, r->len, &r->external, &r->n_external));
  size_t at = 0;
  wt_pb_field f;
  while (wt_pb_next(r->bytes, r->len, &at, &f)) {
    if (f.wire != 2) continue;
    if (f.id == MODEL_METADATA) WT_TRY(read_print(r, f.payload, f.len));
    if (f.id != MODEL_GRAPH) continue;
    size_t gat = 0;
    wt_pb_field t;
    while (wt_pb_next(f.payload, f.len, &gat, &t)) {
      if (t.wire == 2 && t.id == GRAPH_INPUT) WT_TRY(push_io(&r->inputs, &r->n_inputs, t.payload, t.len));
      if (t.wire == 2 && t.id == GRAPH_OUTPUT) WT_TRY(push_io(&r->outputs, &r->n_outputs, t.payload, t.len));
    }
  }
  return WT_OK;
}

int wt_model_record_read(uint8_t *bytes, size_t len, wt_model_record **out) {
  *out = NULL;
  wt_model_record *r = calloc(1, sizeof *r);
  if (!r) return NO_MEMORY();
  r->bytes = bytes;
  r->len = len;
  int rc = read_record(r);
  if (rc) {
    r->bytes = NULL;
    wt_model_record_free(r);
    return rc;
  }
  *out = r;
  return WT_OK;
}

int wt_model_record_of_scan(wt_scan *s, wt_model_record **out) {
  *out = NULL;
  uint8_t *bytes;
  size_t len;
  wt_inside_ref *refs;
  int n;
  uint32_t hash = wt_scan_hash(s);
  uint64_t size = wt_scan_offset(s);
  WT_TRY(wt_scan_take(s, &bytes, &len, &refs, &n));
  wt_model_record *r;
  int rc = wt_model_record_read(bytes, len, &r);
  if (rc) {
    free(bytes);
    wt_inside_refs_free(refs, n);
    return wt_error_context(rc, "the model's skeleton");
  }
  r->scanned = 1;
  r->inside = refs;
  r->n_inside = n;
  r->self = (wt_base_print){.location = wt_strdup(wt_scan_location(s)), .size = size, .hash = hash};
  if (!r->self.location) {
    wt_model_record_free(r);
    return NO_MEMORY();
  }
  *out = r;
  return WT_OK;
}

/* ---- writing metadata_props ------------------------------------------------------------------ */

int wt_onnx_append_metadata(uint8_t **bytes, size_t *len, const char *key, const char *value) {
  Onnx__StringStringEntryProto e = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  e.key = (char *)key;
  e.value = (char *)value;
  size_t n = onnx__string_string_entry_proto__get_packed_size(&e);
  uint8_t head[11];
  size_t h = 0;
  head[h++] = MODEL_METADATA << 3 | 2;
  for (uint64_t v = n; ; v >>= 7) {
    head[h++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
    if (v < 0x80) break;
  }
  uint8_t *grown = realloc(*bytes, *len + h + n);
  if (!grown) return NO_MEMORY();
  memcpy(grown + *len, head, h);
  onnx__string_string_entry_proto__pack(&e, grown + *len + h);
  *bytes = grown;
  *len += h + n;
  return WT_OK;
}

int wt_onnx_append_base_print(uint8_t **bytes, size_t *len, const wt_base_print *p) {
  size_t n = strlen(WT_BASE_PRINT_KEY) + strlen(p->location) + 1;
  char *key = malloc(n);
  if (!key) return NO_MEMORY();
  snprintf(key, n, "%s%s", WT_BASE_PRINT_KEY, p->location);
  char value[40];
  snprintf(value, sizeof value, "%llu %08x", (unsigned long long)p->size, (unsigned)p->hash);
  int rc = wt_onnx_append_metadata(bytes, len, key, value);
  free(key);
  return rc;
}
