/* The protobuf wire format, below protobuf-c: checking a message before it is unpacked, walking
 * its top-level fields, and dims bounds shared by everything that reads tensors. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "io/pb_wire.h"

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
