/* The CPU kernels of the training family (definitions: src/ops/training.c): gradient accumulation. */
#include <string.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/optim.h"
#include "ops/op.h"

static int accumulate_run(const wt_run_ctx *ctx) {
  float *buf = ctx->in[0].data; /* in place, by the op's definition */
  const float *val = ctx->in[1].data;
  int64_t n = wt_numel(&ctx->in[0]);
  int overwrite = wt_has_input(ctx->in, ctx->n_in, 2) && *(const uint8_t *)ctx->in[2].data;
  if (overwrite) {
    if (buf != val) memcpy(buf, val, sizeof(float) * (size_t)n);
  } else {
    wt_accumulate_f32(buf, val, n);
  }
  *(uint8_t *)ctx->out[0].data = 1;
  if (ctx->n_out > 1 && ctx->out[1].data && ctx->out[1].data != buf)
    memcpy(ctx->out[1].data, buf, sizeof(float) * (size_t)n);
  return WT_OK;
}

const wt_cpu_kernel wt_cpu_kernels_training[] = {
    {.key = {"com.microsoft", "InPlaceAccumulatorV2"}, .run = accumulate_run},
    WT_CPU_KERNELS_END};
