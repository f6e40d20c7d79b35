/* wt_infer_value outside a planner (op unit tests): every input that carries data is known. */
#include "ops/op.h"
#include "runtime/planner.h"

const wt_tensor *wt_infer_value(wt_infer_ctx *ctx, int i) {
  if (i >= ctx->n_in || ctx->in[i].dtype == WT_UNDEFINED) return NULL;
  if (ctx->planner) return wt_planner_value(ctx->planner, ctx, i);
  return ctx->in[i].data ? &ctx->in[i] : NULL;
}
