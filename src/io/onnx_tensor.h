/* Internal to src/io: TensorProto conversion shared by the model reader and writer. */
#ifndef WT_IO_ONNX_TENSOR_H
#define WT_IO_ONNX_TENSOR_H

#include "base/status.h"
#include "io/onnx_io.h"
#include "onnx.pb-c.h"

/* Checks dims (non-negative, product bounded) and returns the element count. */
WT_NODISCARD int wt_check_dims(const char *what, const char *name, int rank, const int64_t *dims,
                  int64_t *numel);
WT_NODISCARD int wt_tensor_from_proto(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                         const char *what, wt_const_tensor *out);
/* The external_data entries of tp (a tensor of nbytes) checked: location inside the model's
 * directory, decimal offset and length, length == nbytes. out's strings point into tp. */
WT_NODISCARD int wt_external_parse(const Onnx__TensorProto *tp, size_t nbytes, const char *name,
                                   wt_external_ref *out);
/* Reads tp's external bytes into dst through opts' reader, or the default one (see
 * wt_onnx_set_default_external); errors name the tensor. */
WT_NODISCARD int wt_external_read(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                                  void *dst, size_t nbytes, const char *name);
/* Fills tp pointing into t (no copies); dims_buf holds WT_MAX_RANK int64. */
void wt_tensor_to_proto(const wt_const_tensor *t, Onnx__TensorProto *tp, int64_t *dims_buf);

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
