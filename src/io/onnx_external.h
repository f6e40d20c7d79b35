/* Internal to src/io: external tensor data (onnx_external.c). */
#ifndef WT_IO_ONNX_EXTERNAL_H
#define WT_IO_ONNX_EXTERNAL_H

#include "base/status.h"
#include "io/onnx_io.h"
#include "onnx.pb-c.h"

/* The external_data entries of tp (a tensor of nbytes) checked: location inside the model's
 * directory, decimal offset and length, length == nbytes. out's strings point into tp. */
WT_NODISCARD int wt_external_parse(const Onnx__TensorProto *tp, size_t nbytes, const char *name,
                                   wt_external_ref *out);
/* Reads tp's external bytes into dst through opts' reader, or the default one (see
 * wt_onnx_set_default_external); errors name the tensor. */
WT_NODISCARD int wt_external_read(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                                  void *dst, size_t nbytes, const char *name);
#endif
