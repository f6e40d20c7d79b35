/* Op family: rnn. */
#include "ops/op.h"

const wt_op_def *const wt_ops_rnn[] = {
    NULL,
};
