/* Element types. Values are ONNX TensorProto.DataType codes so they cross the file format as is. */
#ifndef WT_BASE_DTYPE_H
#define WT_BASE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* The codes (wt_dtype) are the public header's. */
#include "webtrain.h"

/* Size in bytes of one element, 0 for a dtype webtrain does not support. */
size_t wt_dtype_size(int dtype);
/* True for the dtypes webtrain holds: float, int32, int64, bool, and float16 as a storage dtype
 * (frozen weights; only the ops whose kernel says so read it: backend/cpu/kernel.h half_inputs). */
int wt_dtype_supported(int dtype);
/* ONNX name of any TensorProto.DataType code ("float", "int64", "float16", ...). */
const char *wt_dtype_name(int dtype);

#endif
