/* Element type sizes and names. */
#include "base/dtype.h"

size_t wt_dtype_size(int dtype) {
  switch (dtype) {
    case WT_FLOAT: return 4;
    case WT_INT32: return 4;
    case WT_INT64: return 8;
    case WT_BOOL: return 1;
    case WT_FLOAT16: return 2;
    default: return 0;
  }
}

int wt_dtype_supported(int dtype) { return wt_dtype_size(dtype) != 0; }

const char *wt_dtype_name(int dtype) {
  static const char *const names[] = {
      "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
      "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16"};
  if (dtype >= 0 && dtype < (int)(sizeof names / sizeof names[0])) return names[dtype];
  return "unknown";
}
