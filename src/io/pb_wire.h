/* Internal to src/io: the protobuf wire format below protobuf-c (pb_wire.c). */
#ifndef WT_IO_PB_WIRE_H
#define WT_IO_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "base/tensor.h"
#include "protobuf-c/protobuf-c.h"

/* Checks dims (non-negative, product bounded) and returns the element count. */
WT_NODISCARD int wt_check_dims(const char *what, const char *name, int rank, const int64_t *dims,
                  int64_t *numel);
/* Checks the protobuf wire format of bytes against message descriptor d before protobuf-c
 * unpacks them: nesting depth (a deeply nested model would exhaust the stack, the wasm one
 * first), tags longer than 4 bytes (no ONNX field number needs them; protobuf-c 1.4.1 shifts
 * them into the sign bit), and empty packed fields (protobuf-c indexes a NULL array for them).
 * `what` names the message in errors ("ONNX model"). */
WT_NODISCARD int wt_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *bytes, size_t len,
                const char *what);

/* Walking the top-level fields of a message wt_pb_check passed (so that its parts can be
 * unpacked one at a time): field number, and for length-delimited fields the payload. */
typedef struct wt_pb_field {
  uint32_t id;
  int wire;
  const uint8_t *payload;
  size_t len;
} wt_pb_field;
/* The field at *at (then past it); 0 at the end. */
WT_NODISCARD int wt_pb_next(const uint8_t *bytes, size_t len, size_t *at, wt_pb_field *f);
/* A copy of the message without the fields numbered drop[0..n_drop) (*out malloc'd). */
WT_NODISCARD int wt_pb_without(const uint8_t *bytes, size_t len, const uint32_t *drop, int n_drop, uint8_t **out,
                  size_t *out_len);

#endif
