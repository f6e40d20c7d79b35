/* Op family: training plumbing of ONNX Runtime's training graphs.
 * com.microsoft InPlaceAccumulatorV2(buffer, value, overwrite?) -> (updated: bool[1], buffer_out?)
 * accumulates a gradient into its buffer in place: buffer = value when overwrite is true (the
 * first step after lazy_reset_grad), buffer += value otherwise. The buffer is a graph input
 * bound to the checkpoint state's gradient memory, so writing through input 0 is the point. */
#include <string.h>

#include "ops/op.h"

static int accumulate_infer(wt_infer_ctx *ctx) {
  const wt_tensor *buf = &ctx->in[0], *val = &ctx->in[1];
  if (buf->dtype != WT_FLOAT || val->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_UNSUPPORTED, "buffer and value must be float (got %s and %s)",
                     wt_dtype_name(buf->dtype), wt_dtype_name(val->dtype));
  if (!wt_same_shape(buf, val)) {
    char a[128], b[128];
    return wt_errorf(WT_ERR_SHAPE, "the value %s must have the buffer's shape %s",
                     wt_shape_str(val->rank, val->dims, a, sizeof a), wt_shape_str(buf->rank, buf->dims, b, sizeof b));
  }
  if (wt_has_input(ctx->in, ctx->n_in, 2) && (ctx->in[2].dtype != WT_BOOL || wt_numel(&ctx->in[2]) != 1))
    return wt_errorf(WT_ERR_SHAPE, "the overwrite flag must be a bool tensor of one element");
  int64_t one = 1;
  wt_set_shape(&ctx->out[0], WT_BOOL, 1, &one);
  if (ctx->n_out > 1) wt_set_shape(&ctx->out[1], WT_FLOAT, buf->rank, buf->dims);
  return WT_OK;
}

static const wt_op_def wt_op_InPlaceAccumulatorV2 = {
    .domain = "com.microsoft", .op_type = "InPlaceAccumulatorV2", .min_inputs = 2, .max_inputs = 3,
    .min_outputs = 1, .max_outputs = 2, .infer = accumulate_infer,
    .flags = WT_OP_GRADIENT | WT_OP_ACCUMULATOR};

const wt_op_def *const wt_ops_training[] = {
    &wt_op_InPlaceAccumulatorV2,
    NULL,
};
