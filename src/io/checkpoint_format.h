/* Internal to src/io: the checkpoint flatbuffer's field ids and limits, shared by its reader
 * (checkpoint.c) and writer (checkpoint_write.c). */
#ifndef WT_IO_CHECKPOINT_FORMAT_H
#define WT_IO_CHECKPOINT_FORMAT_H

#include <stdint.h>

#include "base/status.h"
#include "base/tensor.h"

/* Field ids (declaration order in the .fbs files; none are deprecated). */
enum { CK_VERSION = 0, CK_MODULE_STATE = 1, CK_OPTIMIZER_GROUPS = 2, CK_PROPERTY_BAG = 3 };
enum { MS_REQUIRES_GRAD = 0, MS_FROZEN = 1, MS_IS_NOMINAL = 2, MS_HAS_EXTERNAL = 3 };
enum { OG_GROUP_NAME = 0, OG_STEP = 1, OG_INITIAL_LR = 2, OG_OPTIMIZER_STATES = 3 };
enum { PS_PARAM_NAME = 0, PS_MOMENTUMS = 1 };
enum { PB_INTS = 0, PB_FLOATS = 1, PB_STRINGS = 2 };
enum { PROP_NAME = 0, PROP_VALUE = 1 };
enum { T_NAME = 0, T_DOC_STRING = 1, T_DIMS = 2, T_DATA_TYPE = 3, T_RAW_DATA = 4,
       T_STRING_DATA = 5, T_EXTERNAL_DATA_OFFSET = 6 };

#define CK_WRITE_VERSION 2
#define CK_MAX_ELEMENTS (UINT64_C(1) << 32)
static const char CK_IDENT[] = "ODTC";

/* Element count of t (dims already known non-negative); error if over 2^32. */
static inline int element_count(const wt_tensor *t, uint64_t *n) {
  /* Bounded with zero dims counted as 1: a zero beside huge dims must not let their product
   * overflow wherever the shape is used later. */
  uint64_t p = 1, bound = 1;
  for (int i = 0; i < t->rank; i++) {
    uint64_t d = (uint64_t)t->dims[i];
    uint64_t x = d ? d : 1;
    if (x > CK_MAX_ELEMENTS || bound > CK_MAX_ELEMENTS / x) return 1;
    bound *= x;
    p = d ? p * d : 0;
  }
  *n = p;
  return 0;
}

static inline int ck_oom(void) { return wt_errorf(WT_ERR_NO_MEMORY, "checkpoint: out of memory"); }

#endif
