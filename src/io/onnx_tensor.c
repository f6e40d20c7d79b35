/* TensorProto <-> tensors with owned data: every storage field ONNX allows (raw_data, typed
 * fields, external data), checked against dims and dtype before any byte is trusted. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"
#include "io/onnx_tensor.h"
#include "onnx.pb-c.h"

/* Upper bound on one tensor's elements: products that overflow or exceed what a 32-bit wasm
 * heap could hold are rejected before any allocation. */
#define WT_MAX_TENSOR_ELEMS ((int64_t)1 << 32)

int wt_check_dims(const char *what, const char *name, int rank, const int64_t *dims,
                  int64_t *numel) {
  if (rank > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s '%s' has rank %d; webtrain supports rank <= %d",
                     what, name, rank, WT_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return wt_errorf(WT_ERR_PARSE, "%s '%s' has negative dimension %lld at axis %d", what,
                       name, (long long)dims[i], i);
    /* a zero dim does not excuse a huge one (strides would still overflow) */
    if (dims[i] > WT_MAX_TENSOR_ELEMS || (dims[i] != 0 && n > WT_MAX_TENSOR_ELEMS / dims[i]))
      return wt_errorf(WT_ERR_PARSE, "%s '%s' is too large (more than 2^32 elements)", what,
                       name);
    n *= dims[i];
  }
  *numel = n;
  return WT_OK;
}

static int copy_typed(const Onnx__TensorProto *tp, int dtype, int64_t n, void *dst,
                      const char *name) {
  size_t have;
  switch (dtype) {
    case WT_FLOAT:
      have = tp->n_float_data;
      if ((int64_t)have != n) break;
      if (n) memcpy(dst, tp->float_data, (size_t)n * 4);
      return WT_OK;
    case WT_INT32:
      have = tp->n_int32_data;
      if ((int64_t)have != n) break;
      if (n) memcpy(dst, tp->int32_data, (size_t)n * 4);
      return WT_OK;
    case WT_BOOL:
      have = tp->n_int32_data;
      if ((int64_t)have != n) break;
      for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
      return WT_OK;
    case WT_INT64:
      have = tp->n_int64_data;
      if ((int64_t)have != n) break;
      if (n) memcpy(dst, tp->int64_data, (size_t)n * 8);
      return WT_OK;
    default:
      return wt_errorf(WT_ERR_INTERNAL, "bad dtype");
  }
  return wt_errorf(WT_ERR_PARSE, "tensor '%s' has %zu values in its %s field; its dims say %lld",
                   name, have, dtype == WT_INT64 ? "int64_data" :
                   dtype == WT_FLOAT ? "float_data" : "int32_data", (long long)n);
}

int wt_tensor_from_proto(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                         const char *what, wt_const_tensor *out) {
  const char *name = tp->name ? tp->name : "";
  memset(out, 0, sizeof *out);
  int dtype = tp->has_data_type ? tp->data_type : 0;
  if (!wt_dtype_supported(dtype))
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "%s '%s' has dtype %s; webtrain supports float, int32, int64 and bool", what,
                     name, wt_dtype_name(dtype));
  if (tp->segment)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s '%s' is segmented; segments are not supported", what,
                     name);
  int64_t n;
  WT_TRY(wt_check_dims(what, name, (int)tp->n_dims, tp->dims, &n));
  size_t nbytes = (size_t)n * wt_dtype_size(dtype);
  out->name = wt_strdup(name);
  out->t.dtype = dtype;
  out->t.rank = (int)tp->n_dims;
  for (size_t i = 0; i < tp->n_dims; i++) out->t.dims[i] = tp->dims[i];
  out->t.data = nbytes ? malloc(nbytes) : NULL;
  if (!out->name || (nbytes && !out->t.data)) {
    free(out->name);
    free(out->t.data);
    memset(out, 0, sizeof *out);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory reading %s '%s' (%zu bytes)", what, name,
                     nbytes);
  }
  int rc;
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    rc = wt_external_read(tp, opts, out->t.data, nbytes, name);
  } else if (tp->has_raw_data) {
    if (tp->raw_data.len != nbytes) {
      char shape[160];
      wt_shape_str(out->t.rank, out->t.dims, shape, sizeof shape);
      rc = wt_errorf(WT_ERR_PARSE, "%s '%s' has %zu bytes of raw_data; %s %s needs %zu", what,
                     name, tp->raw_data.len, wt_dtype_name(dtype), shape, nbytes);
    } else {
      if (nbytes) memcpy(out->t.data, tp->raw_data.data, nbytes);
      rc = WT_OK;
    }
  } else {
    rc = copy_typed(tp, dtype, n, out->t.data, name);
  }
  if (rc) {
    free(out->name);
    free(out->t.data);
    memset(out, 0, sizeof *out);
  }
  return rc;
}

void wt_tensor_to_proto(const wt_const_tensor *t, Onnx__TensorProto *tp, int64_t *dims_buf) {
  onnx__tensor_proto__init(tp);
  tp->name = t->name;
  tp->has_data_type = 1;
  tp->data_type = t->t.dtype;
  tp->n_dims = (size_t)t->t.rank;
  for (int i = 0; i < t->t.rank; i++) dims_buf[i] = t->t.dims[i];
  tp->dims = dims_buf;
  tp->has_raw_data = 1;
  static uint8_t empty[1];
  tp->raw_data.len = wt_nbytes(&t->t);
  /* an empty tensor has no data pointer; protobuf-c copies len bytes from data even when 0 */
  tp->raw_data.data = t->t.data && tp->raw_data.len ? t->t.data : empty;
  if (!t->t.data) tp->raw_data.len = 0;
}

/* Nesting allowed in ONNX messages (model > graph > node > attribute > graph ... > tensor). */
#define WT_PB_MAX_DEPTH 64

static int pb_varint(const uint8_t *p, size_t len, size_t *at, uint64_t *v, int max_bytes) {
  uint64_t r = 0;
  for (int i = 0; i < max_bytes; i++) {
    if (*at >= len) return 0;
    uint8_t b = p[(*at)++];
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return 1;
    }
  }
  return 0;
}

static int pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                    int depth, const char *what) {
  if (depth > WT_PB_MAX_DEPTH)
    return wt_errorf(WT_ERR_PARSE, "%s: messages are nested more than %d deep", what,
                     WT_PB_MAX_DEPTH);
  size_t at = 0;
  while (at < len) {
    size_t tag_at = at;
    uint64_t tag, n;
    if (!pb_varint(p, len, &at, &tag, 4))
      return wt_errorf(WT_ERR_PARSE, "%s: malformed field tag at byte %zu", what, tag_at);
    uint32_t id = (uint32_t)(tag >> 3);
    int wire = (int)(tag & 7);
    const ProtobufCFieldDescriptor *f = NULL;
    for (unsigned i = 0; d && i < d->n_fields; i++)
      if (d->fields[i].id == id) f = &d->fields[i];
    switch (wire) {
      case 0:
        if (!pb_varint(p, len, &at, &n, 10))
          return wt_errorf(WT_ERR_PARSE, "%s: malformed varint at byte %zu", what, at);
        break;
      case 1:
        if (len - at < 8) return wt_errorf(WT_ERR_PARSE, "%s: truncated at byte %zu", what, at);
        at += 8;
        break;
      case 5:
        if (len - at < 4) return wt_errorf(WT_ERR_PARSE, "%s: truncated at byte %zu", what, at);
        at += 4;
        break;
      case 2:
        if (!pb_varint(p, len, &at, &n, 10) || n > len - at)
          return wt_errorf(WT_ERR_PARSE, "%s: field %u at byte %zu has a length beyond the end",
                           what, id, tag_at);
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE)
          WT_TRY(pb_check(f->descriptor, p + at, (size_t)n, depth + 1, what));
        else if (f && f->label == PROTOBUF_C_LABEL_REPEATED && f->type != PROTOBUF_C_TYPE_STRING &&
                 f->type != PROTOBUF_C_TYPE_BYTES && n == 0)
          return wt_errorf(WT_ERR_PARSE, "%s: empty packed field '%s' at byte %zu", what, f->name,
                           tag_at);
        at += (size_t)n;
        break;
      default:
        return wt_errorf(WT_ERR_PARSE, "%s: field %u at byte %zu has wire type %d", what, id,
                         tag_at, wire);
    }
  }
  return WT_OK;
}

int wt_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *bytes, size_t len,
                const char *what) {
  if (!bytes && len) return wt_errorf(WT_ERR_INVALID_ARG, "%s: NULL buffer", what);
  return pb_check(d, bytes, len, 0, what);
}

int wt_pb_next(const uint8_t *p, size_t len, size_t *at, wt_pb_field *f) {
  uint64_t tag, n;
  if (*at >= len || !pb_varint(p, len, at, &tag, 4)) return 0;
  *f = (wt_pb_field){.id = (uint32_t)(tag >> 3), .wire = (int)(tag & 7)};
  switch (f->wire) { /* bounds hold: the message passed wt_pb_check */
    case 0: return pb_varint(p, len, at, &n, 10);
    case 1: *at += 8; return *at <= len;
    case 5: *at += 4; return *at <= len;
    case 2:
      if (!pb_varint(p, len, at, &n, 10) || n > len - *at) return 0;
      f->payload = p + *at;
      f->len = (size_t)n;
      *at += (size_t)n;
      return 1;
    default: return 0;
  }
}

int wt_pb_without(const uint8_t *bytes, size_t len, const uint32_t *drop, int n_drop, uint8_t **out,
                  size_t *out_len) {
  *out = malloc(len ? len : 1);
  if (!*out) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  size_t at = 0, n = 0, start = 0;
  wt_pb_field f;
  while (wt_pb_next(bytes, len, &at, &f)) {
    int keep = 1;
    for (int i = 0; i < n_drop; i++) keep &= f.id != drop[i];
    if (keep) memcpy(*out + n, bytes + start, at - start), n += at - start;
    start = at;
  }
  *out_len = n;
  return WT_OK;
}

int wt_tensor_pb_read(const uint8_t *bytes, size_t len, wt_const_tensor **out) {
  *out = NULL;
  int crc = wt_pb_check(&onnx__tensor_proto__descriptor, bytes, len, "TensorProto");
  if (crc) return wt_error_context(crc, "not a valid serialized TensorProto (%zu bytes)", len);
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, bytes);
  if (!tp) return wt_errorf(WT_ERR_PARSE, "not a valid serialized TensorProto (%zu bytes)", len);
  wt_const_tensor *t = calloc(1, sizeof *t);
  int rc = t ? wt_tensor_from_proto(tp, NULL, "tensor", t)
             : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  onnx__tensor_proto__free_unpacked(tp, NULL);
  if (rc) {
    free(t);
    return rc;
  }
  *out = t;
  return WT_OK;
}

int wt_tensor_pb_write(const wt_const_tensor *t, uint8_t **out, size_t *len) {
  Onnx__TensorProto tp;
  int64_t dims[WT_MAX_RANK];
  wt_tensor_to_proto(t, &tp, dims);
  size_t n = onnx__tensor_proto__get_packed_size(&tp);
  *out = malloc(n ? n : 1);
  if (!*out) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  *len = onnx__tensor_proto__pack(&tp, *out);
  return WT_OK;
}
