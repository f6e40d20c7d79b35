/* Element types. Values are ONNX TensorProto.DataType codes so they cross the file format as is. */
#ifndef WT_BASE_DTYPE_H
#define WT_BASE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum wt_dtype {
  WT_UNDEFINED = 0,
  WT_FLOAT = 1,
  WT_INT32 = 6,
  WT_INT64 = 7,
  WT_BOOL = 9
} wt_dtype;

/* Size in bytes of one element, 0 for a dtype webtrain does not support. */
size_t wt_dtype_size(int dtype);
/* True for the four supported dtypes. */
int wt_dtype_supported(int dtype);
/* ONNX name of any TensorProto.DataType code ("float", "int64", "float16", ...). */
const char *wt_dtype_name(int dtype);

#endif
