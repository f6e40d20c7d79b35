/* Op family: shape. */
#include "ops/op.h"

const wt_op_def *const wt_ops_shape[] = {
    NULL,
};
