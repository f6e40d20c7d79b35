/* The CPU kernels of the unary family's com.microsoft gradient ops (definitions:
 * src/ops/unary_grad.c): activation gradients and DropoutGrad. */
#include <float.h>
#include <string.h>

#include "backend/cpu/elementwise.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"
#include "ops/unary_ops.h"

/* DropoutGrad: dY where nothing was dropped (inference, ratio 0), else dY * mask / (1 - ratio). */
static void run_dropout_grad(const wt_run_ctx *ctx, int64_t n, const float *dy, float *dx) {
  float ratio = wt_has_input(ctx->in, ctx->n_in, 2) ? *(const float *)ctx->in[2].data : 0.5f;
  int training = wt_has_input(ctx->in, ctx->n_in, 3) && *(const uint8_t *)ctx->in[3].data != 0;
  if (!training || ratio == 0.0f) {
    if (dx != dy) memcpy(dx, dy, sizeof(float) * (size_t)n);
    return;
  }
  const uint8_t *mask = ctx->in[1].data;
  float scale = ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f;
  for (int64_t i = 0; i < n; i++) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
}

static int gop_run(const wt_run_ctx *ctx) {
  const gop_params *p = ctx->params;
  int64_t n = wt_numel(&ctx->in[0]);
  const float *dy = ctx->in[0].data;
  float *dx = ctx->out[0].data;
  if (n == 0) return WT_OK;
  switch (p->form) {
    case G_DROPOUT: run_dropout_grad(ctx, n, dy, dx); break;
    case G_BIAS: {
      /* X + B in chunks through a stack buffer: safe whatever buffers dX shares. */
      const float *x = ctx->in[1].data, *b = ctx->in[2].data;
      int64_t nb = ctx->in[2].dims[0];
      float t[256];
      for (int64_t r = 0; r < n; r += nb)
        for (int64_t j = 0; j < nb; j += 256) {
          int64_t len = nb - j < 256 ? nb - j : 256;
          wt_ew_add_bias_f32(len, x + r + j, b + j, len, t);
          wt_ew_grad_f32(p->kind, len, dy + r + j, t, dx + r + j, p->alpha);
        }
      break;
    }
    default: wt_ew_grad_f32(p->kind, n, dy, ctx->in[1].data, dx, p->alpha); break;
  }
  return WT_OK;
}

#define KERNEL_GOP(NAME, ...) {.key = {"com.microsoft", #NAME}, .run = gop_run},
const wt_cpu_kernel wt_cpu_kernels_unary_grad[] = {WT_UNARY_GRAD_OPS(KERNEL_GOP)WT_CPU_KERNELS_END};
