/* Op family: einsum. */
#include "ops/op.h"

const wt_op_def *const wt_ops_einsum[] = {
    NULL,
};
