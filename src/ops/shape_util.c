/* Helpers shared by the shape / data op families (see shape_util.h). */
#include "ops/shape_util.h"

int wt_su_known_ints(wt_infer_ctx *ctx, int i, const char *name, int max, int64_t *vals, int *n) {
  const wt_tensor *in = &ctx->in[i];
  if (in->dtype != WT_INT64 && in->dtype != WT_INT32)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has dtype %s; expected int64", name, i,
                     wt_dtype_name(in->dtype));
  if (in->rank > 1)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has rank %d; expected rank 1", name, i,
                     in->rank);
  int64_t count = wt_numel(in);
  if (count > max)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has %lld values; at most %d supported",
                     name, i, (long long)count, max);
  *n = (int)count;
  if (count == 0) return WT_OK;
  const wt_tensor *v = wt_infer_value(ctx, i);
  if (!v || !v->data)
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "shape input '%s' (index %d) must be known before the run (a constant or "
                     "computed from shapes)", name, i);
  for (int k = 0; k < *n; k++) vals[k] = wt_get_int(v, k);
  return WT_OK;
}

int wt_su_axes(const int64_t *axes, int n, int rank, const char *what, int *out) {
  for (int k = 0; k < n; k++) {
    int a = wt_axis(axes[k], rank);
    if (a < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "%s: axis %lld is out of range for rank %d (expected "
                       "[%d, %d])", what, (long long)axes[k], rank, -rank, rank - 1);
    for (int j = 0; j < k; j++)
      if (out[j] == a)
        return wt_errorf(WT_ERR_INVALID_ARG, "%s: axis %lld is repeated", what,
                         (long long)axes[k]);
    out[k] = a;
  }
  return WT_OK;
}

size_t wt_su_elem(const wt_infer_ctx *ctx, int i) {
  size_t e = wt_dtype_size(ctx->in[i].dtype);
  if (!e)
    wt_errorf(WT_ERR_UNSUPPORTED, "input %d has dtype %s; supported: float, int32, int64, bool", i,
              wt_dtype_name(ctx->in[i].dtype));
  return e;
}

int wt_su_index_dtype(const wt_infer_ctx *ctx, int i, const char *name) {
  int dt = ctx->in[i].dtype;
  if (dt != WT_INT32 && dt != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has dtype %s; expected int32 or int64",
                     name, i, wt_dtype_name(dt));
  return WT_OK;
}

/* For shapes a and b (int64 1-D), the axes of their broadcast result that each must be summed
 * over (BroadcastGradientArgs). */
int wt_su_broadcast_axes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *ax,
                         int *nax, int64_t *bx, int *nbx) {
  int i = na - 1, j = nb - 1, k = (na > nb ? na : nb) - 1;
  *nax = *nbx = 0;
  for (; i >= 0 && j >= 0; i--, j--, k--) {
    if (a[i] == b[j]) continue;
    if (a[i] == 1) ax[(*nax)++] = k;
    else if (b[j] == 1) bx[(*nbx)++] = k;
    else
      return wt_errorf(WT_ERR_SHAPE, "dims %lld and %lld (axis %d) do not broadcast",
                       (long long)a[i], (long long)b[j], k);
  }
  for (; k >= 0; k--) {
    if (i < 0) ax[(*nax)++] = k;
    else bx[(*nbx)++] = k;
  }
  return WT_OK;
}
