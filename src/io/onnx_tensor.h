/* Internal to src/io: TensorProto conversion shared by the model reader and writer. */
#ifndef WT_IO_ONNX_TENSOR_H
#define WT_IO_ONNX_TENSOR_H

#include "base/status.h"
#include "io/onnx_io.h"
#include "io/pb_wire.h"
#include "onnx.pb-c.h"

WT_NODISCARD int wt_tensor_from_proto(const Onnx__TensorProto *tp, const wt_onnx_read_opts *opts,
                         const char *what, wt_const_tensor *out);
/* Fills tp pointing into t (no copies); dims_buf holds WT_MAX_RANK int64. */
void wt_tensor_to_proto(const wt_const_tensor *t, Onnx__TensorProto *tp, int64_t *dims_buf);

#endif
