/* ONNX protobuf <-> IR. The protobuf-c message tree is read once and dropped; the IR owns
 * copies of everything it keeps. Errors name the tensor, node or file and what was expected. */
#ifndef WT_IO_ONNX_IO_H
#define WT_IO_ONNX_IO_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

/* Reads `length` bytes at `offset` of the external data file `location` (relative to the
 * model) into dst. Returns WT_OK or an error status with a message. dst is the tensor's own
 * buffer and stays where it is for the graph's life (never packed or moved), so a reader may
 * also fill it after the read returns, before anything uses the graph's data (js/external.js
 * does, streaming side files into a module's weights). */
typedef int (*wt_external_read_fn)(void *user, const char *location, uint64_t offset,
                                   uint64_t length, void *dst);

typedef struct wt_onnx_read_opts {
  const char *base_dir;               /* directory of the model file, for external data */
  wt_external_read_fn read_external;  /* NULL: files under base_dir (native) or an error */
  void *user;
  /* Float and float16 initializers in external data are held by reference, their bytes not read
   * (WT_VALUE_EXTERNAL with data NULL; wt_onnx_load_external reads one when needed). */
  int keep_external;
  /* External initializers whose file range this graph has loaded already borrow its bytes
   * (WT_VALUE_BORROWED): a module's eval model shares the training model's frozen weights. The
   * graph must outlive the one read. */
  const wt_graph *share;
} wt_onnx_read_opts;

/* The reader of external data used when a read's options give none (process-wide; NULL:
 * such reads fail). The wasm layer installs the JavaScript one at startup. */
void wt_onnx_set_default_external(wt_external_read_fn fn, void *user);

/* One tensor's external data, as its external_data entries say (checked, see onnx_external.c). */
typedef struct wt_external_ref {
  const char *tensor;
  const char *location; /* relative to the model's directory */
  uint64_t offset;
  uint64_t length;      /* what the tensor's dims and dtype need */
  int32_t dtype;        /* the tensor's (wt_onnx_list_external) */
} wt_external_ref;
/* What the initializers of a model reference, in order, without reading any tensor's data.
 * *refs (strings included) is freed with wt_external_refs_free. */
WT_NODISCARD int wt_onnx_list_external(const uint8_t *bytes, size_t len, wt_external_ref **refs,
                                       int *n);
void wt_external_refs_free(wt_external_ref *refs, int n);

WT_NODISCARD int wt_onnx_read(const uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts,
                 wt_graph **out);
/* The same taking bytes (malloc'd), freed once unpacked (also on error): the graph kept for a
 * long life can then reuse their room. */
WT_NODISCARD int wt_onnx_read_owned(uint8_t *bytes, size_t len, const wt_onnx_read_opts *opts, wt_graph **out);
/* Reads a model file (native builds); external data is read relative to its directory. */
WT_NODISCARD int wt_onnx_read_file(const char *path, wt_graph **out);
/* Reads the bytes of initializer v, held by reference (wt_value_unloaded), through opts' reader
 * (NULL: the default one); it is then loaded (and still WT_VALUE_EXTERNAL). */
WT_NODISCARD int wt_onnx_load_external(wt_graph *g, int v, const wt_onnx_read_opts *opts);
/* The largest ONNX file written: protobuf's limit for one message (2 GiB - 1). */
#define WT_ONNX_FILE_MAX ((uint64_t)INT32_MAX)
/* Serializes the graph as a ModelProto (initializers as raw_data; those held by reference as
 * external data, their reference as read). *out is malloc'd. A model past WT_ONNX_FILE_MAX is
 * refused (WT_ERR_INVALID_ARG), naming its size and keepExternalData. */
WT_NODISCARD int wt_onnx_write(const wt_graph *g, uint8_t **out, size_t *len);

/* wt_onnx_write with every external initializer written as its reference, loaded or not. */
WT_NODISCARD int wt_onnx_write_by_reference(const wt_graph *g, uint8_t **out, size_t *len);
/* A copy of g whose external initializers borrow g's bytes (or stay references where g has
 * none): the weights are not copied. g must outlive it. */
WT_NODISCARD int wt_graph_clone_shared(const wt_graph *g, wt_graph **out);
/* A deep copy of g (through its serialized form: what is written is what is copied; initializers
 * held by reference stay so). */
WT_NODISCARD int wt_graph_clone(const wt_graph *g, wt_graph **out);

/* A serialized TensorProto (the backend tests' .pb files) <-> a tensor with owned data. */
WT_NODISCARD int wt_tensor_pb_read(const uint8_t *bytes, size_t len, wt_const_tensor **out);
WT_NODISCARD int wt_tensor_pb_write(const wt_const_tensor *t, uint8_t **out, size_t *len);

/* Whole-file read for native tools and tests; *out malloc'd. */
WT_NODISCARD int wt_read_file(const char *path, uint8_t **out, size_t *len);

#endif
