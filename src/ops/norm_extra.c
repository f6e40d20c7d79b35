/* Op family: norm_extra. */
#include "ops/op.h"

const wt_op_def *const wt_ops_norm_extra[] = {
    NULL,
};
