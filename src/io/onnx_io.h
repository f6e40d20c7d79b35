/* ONNX protobuf <-> IR. The protobuf-c message tree is read once and dropped; the IR owns
 * copies of everything it keeps. Errors name the tensor, node or file and what was expected. */
#ifndef WT_IO_ONNX_IO_H
#define WT_IO_ONNX_IO_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

/* Reads `length` bytes at `offset` of the external data file `location` (relative to the
 * model) into dst. Returns WT_OK or an error status with a message. */
typedef int (*wt_external_read_fn)(void *user, const char *location, uint64_t offset,
                                   uint64_t length, void *dst);

typedef struct wt_onnx_read_opts {
  const char *base_dir;               /* directory of the model file, for external data */
  wt_external_read_fn read_external;  /* NULL: files under base_dir (native) or an error */
  void *user;
} wt_onnx_read_opts;

WT_NODISCARD int wt_onnx_read(const uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts,
                 wt_graph **out);
/* The same taking bytes (malloc'd), freed once unpacked (also on error): the graph kept for a
 * long life can then reuse their room. */
WT_NODISCARD int wt_onnx_read_owned(uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts, wt_graph **out);
/* Reads a model file (native builds); external data is read relative to its directory. */
WT_NODISCARD int wt_onnx_read_file(const char *path, wt_graph **out);
/* Serializes the graph as a ModelProto (initializers as raw_data). *out is malloc'd. */
WT_NODISCARD int wt_onnx_write(const wt_graph *g, uint8_t **out, size_t *len);

/* A deep copy of g (through its serialized form: what is written is what is copied). */
WT_NODISCARD int wt_graph_clone(const wt_graph *g, wt_graph **out);

/* A serialized TensorProto (the backend tests' .pb files) <-> a tensor with owned data. */
WT_NODISCARD int wt_tensor_pb_read(const uint8_t *bytes, size_t len, wt_const_tensor **out);
WT_NODISCARD int wt_tensor_pb_write(const wt_const_tensor *t, uint8_t **out, size_t *len);

/* Whole-file read for native tools and tests; *out malloc'd. */
WT_NODISCARD int wt_read_file(const char *path, uint8_t **out, size_t *len);

#endif
