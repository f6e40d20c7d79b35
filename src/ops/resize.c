/* Op family: resize. */
#include "ops/op.h"

const wt_op_def *const wt_ops_resize[] = {
    NULL,
};
