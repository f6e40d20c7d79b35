/* Sets of element types an op accepts, as bit masks, and their names for messages. Shared by
 * the elementwise op families. */
#ifndef WT_OPS_DTYPE_SET_H
#define WT_OPS_DTYPE_SET_H

#include <stdint.h>

#include "base/dtype.h"
#include "base/half.h"

enum { DT_F = 1, DT_I32 = 2, DT_I64 = 4, DT_B = 8, DT_NUM = DT_F | DT_I32 | DT_I64, DT_ALL = DT_NUM | DT_B,
       DT_H = 16 /* float16: storage only (Cast reads and writes it) */ };

static inline unsigned dt_bit(int dtype) {
  switch (dtype) {
    case WT_FLOAT: return DT_F;
    case WT_INT32: return DT_I32;
    case WT_INT64: return DT_I64;
    case WT_BOOL: return DT_B;
    case WT_FLOAT16: return DT_H;
    default: return 0;
  }
}

static inline const char *dt_list(unsigned m) {
  switch (m) {
    case DT_F: return "float";
    case DT_B: return "bool";
    case DT_NUM: return "float, int32 or int64";
    case DT_ALL | DT_H: return "float, float16, int32, int64 or bool";
    default: return "float, int32, int64 or bool";
  }
}

/* Element i of a float / float16 / int32 / int64 / bool buffer as a double (bool: 0 or 1). */
static inline double dt_load_d(const void *p, int dtype, int64_t i) {
  switch (dtype) {
    case WT_FLOAT: return ((const float *)p)[i];
    case WT_INT32: return ((const int32_t *)p)[i];
    case WT_INT64: return (double)((const int64_t *)p)[i];
    case WT_FLOAT16: return wt_f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const uint8_t *)p)[i] != 0;
  }
}

/* Float -> integer without the undefined behaviour of an out-of-range C conversion: saturates
 * to [lo, hi], NaN -> 0. */
static inline int64_t dt_sat_i64(double v, int64_t lo, int64_t hi) {
  if (v != v) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi;
  return (int64_t)v;
}

#endif
