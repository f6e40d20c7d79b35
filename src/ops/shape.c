/* Op family: shape. Ops that re-describe or re-arrange a tensor without arithmetic:
 * Reshape, Flatten, Squeeze, Unsqueeze (views), Transpose, Expand, Tile, Shape, Size.
 * Concat, Split, Constant, ConstantOfShape and Range live in shape_build.c. Also the gradient
 * rules of these ops and com.microsoft BroadcastGradientArgs (Expand's dynamic gradient).
 * Everything works on element size, so all dtypes share one path. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/shape_params.h"
#include "ops/shape_util.h"

/* ---- views: output 0 is input 0's bytes ---------------------------------------------- */

static int reshape_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t shape[WT_MAX_RANK];
  int n = 0;
  if (ctx->opset < 5) {
    const int64_t *p;
    n = wt_attr_ints(ctx->node, "shape", &p);
    if (n < 0) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'shape' is required");
    if (n > WT_MAX_RANK)
      return wt_errorf(WT_ERR_UNSUPPORTED, "attribute 'shape' has %d dims; at most %d supported",
                       n, WT_MAX_RANK);
    if (n > 0) memcpy(shape, p, sizeof *p * (size_t)n);
  } else {
    if (!wt_has_input(ctx->in, ctx->n_in, 1))
      return wt_errorf(WT_ERR_INVALID_ARG, "input 'shape' (index 1) is required");
    WT_TRY(wt_su_known_ints(ctx, 1, "shape", WT_MAX_RANK, shape, &n));
  }
  int allowzero = ctx->opset >= 14 ? (int)wt_attr_int(ctx->node, "allowzero", 0) : 0;
  int64_t dims[WT_MAX_RANK], prod = 1;
  int neg = -1, has_zero = 0;
  char a[160], b[160];
  wt_shape_str(n, shape, b, sizeof b);
  for (int i = 0; i < n; i++) {
    int64_t v = shape[i];
    if (v == 0 && !allowzero) {
      if (i >= x->rank)
        return wt_errorf(WT_ERR_SHAPE, "shape %s: 0 at position %d copies an input dim, but the "
                         "input %s has rank %d", b, i, wt_shape_str(x->rank, x->dims, a, sizeof a),
                         x->rank);
      v = x->dims[i];
    } else if (v == -1) {
      if (neg >= 0) return wt_errorf(WT_ERR_SHAPE, "shape %s has more than one -1", b);
      neg = i;
      continue;
    } else if (v < -1) {
      return wt_errorf(WT_ERR_SHAPE, "shape %s has invalid value %lld at position %d", b,
                       (long long)v, i);
    }
    if (v == 0) has_zero = 1;
    if (v > 0 && prod > INT64_MAX / v)
      return wt_errorf(WT_ERR_SHAPE, "shape %s has more elements than int64 can count", b);
    dims[i] = v;
    prod *= v;
  }
  int64_t total = wt_numel(x);
  wt_shape_str(x->rank, x->dims, a, sizeof a);
  if (neg >= 0) {
    if (has_zero && allowzero)
      return wt_errorf(WT_ERR_SHAPE, "shape %s has both 0 and -1 with allowzero=1", b);
    if (prod == 0 || total % prod != 0)
      return wt_errorf(WT_ERR_SHAPE, "cannot reshape input %s (%lld elements) to %s", a,
                       (long long)total, b);
    dims[neg] = total / prod;
    prod *= dims[neg];
  }
  if (prod != total)
    return wt_errorf(WT_ERR_SHAPE, "cannot reshape input %s (%lld elements) to %s (%lld elements)",
                     a, (long long)total, b, (long long)prod);
  wt_set_shape(&ctx->out[0], x->dtype, n, dims);
  return WT_OK;
}

static int flatten_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t axis = wt_attr_int(ctx->node, "axis", 1);
  if (axis < -x->rank || axis > x->rank)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axis' = %lld is out of range for rank %d "
                     "(expected [%d, %d])", (long long)axis, x->rank, -x->rank, x->rank);
  if (axis < 0) axis += x->rank;
  int64_t dims[2] = {wt_dims_prod(x->dims, 0, (int)axis), wt_dims_prod(x->dims, (int)axis, x->rank)};
  wt_set_shape(&ctx->out[0], x->dtype, 2, dims);
  return WT_OK;
}

/* Squeeze / Unsqueeze axes: attribute before opset 13, input 1 from 13. *n = -1 when absent. */
static int get_axes(wt_infer_ctx *ctx, int64_t *axes, int *n) {
  if (ctx->opset < 13) {
    const int64_t *p;
    *n = wt_attr_ints(ctx->node, "axes", &p);
    if (*n > WT_MAX_RANK)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axes' has %d values; at most %d", *n,
                       WT_MAX_RANK);
    if (*n > 0) memcpy(axes, p, sizeof *p * (size_t)*n);
    return WT_OK;
  }
  *n = -1;
  if (!wt_has_input(ctx->in, ctx->n_in, 1)) return WT_OK;
  return wt_su_known_ints(ctx, 1, "axes", WT_MAX_RANK, axes, n);
}

static int squeeze_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t axes[WT_MAX_RANK], dims[WT_MAX_RANK];
  int n, norm[WT_MAX_RANK], drop[WT_MAX_RANK] = {0};
  WT_TRY(get_axes(ctx, axes, &n));
  char a[160];
  if (n < 0) {
    for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
  } else {
    WT_TRY(wt_su_axes(axes, n, x->rank, "axes", norm));
    for (int k = 0; k < n; k++) {
      if (x->dims[norm[k]] != 1)
        return wt_errorf(WT_ERR_SHAPE, "cannot squeeze axis %lld of input %s: its size is %lld, "
                         "expected 1", (long long)axes[k],
                         wt_shape_str(x->rank, x->dims, a, sizeof a),
                         (long long)x->dims[norm[k]]);
      drop[norm[k]] = 1;
    }
  }
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (!drop[i]) dims[r++] = x->dims[i];
  wt_set_shape(&ctx->out[0], x->dtype, r, dims);
  return WT_OK;
}

static int unsqueeze_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t axes[WT_MAX_RANK], dims[WT_MAX_RANK];
  int n, norm[WT_MAX_RANK], ins[WT_MAX_RANK] = {0};
  WT_TRY(get_axes(ctx, axes, &n));
  if (n < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, ctx->opset < 13 ? "attribute 'axes' is required"
                                                         : "input 'axes' (index 1) is required");
  int r = x->rank + n;
  if (r > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "output rank %d exceeds the maximum %d", r, WT_MAX_RANK);
  WT_TRY(wt_su_axes(axes, n, r, "axes", norm));
  for (int k = 0; k < n; k++) ins[norm[k]] = 1;
  for (int i = 0, j = 0; i < r; i++) dims[i] = ins[i] ? 1 : x->dims[j++];
  wt_set_shape(&ctx->out[0], x->dtype, r, dims);
  return WT_OK;
}

/* ---- Shape / Size ----------------------------------------------------------------------- */

static int shape_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  shape_params *p = WT_PARAMS(ctx, shape_params);
  int r = x->rank;
  int64_t s = 0, e = r;
  if (ctx->opset >= 15) {
    s = wt_attr_int(ctx->node, "start", 0);
    e = wt_attr_int(ctx->node, "end", r);
  }
  /* Negative counts from the back; both clamp to [0, rank]. */
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = s < 0 ? 0 : s > r ? r : s;
  e = e < 0 ? 0 : e > r ? r : e;
  if (e < s) e = s;
  p->start = (int)s;
  p->end = (int)e;
  int64_t d = e - s;
  wt_set_shape(&ctx->out[0], WT_INT64, 1, &d);
  return WT_OK;
}

static int size_infer(wt_infer_ctx *ctx) {
  wt_set_shape(&ctx->out[0], WT_INT64, 0, NULL);
  return WT_OK;
}

/* ---- Transpose -------------------------------------------------------------------------- */

static int transpose_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  transpose_params *p = WT_PARAMS(ctx, transpose_params);
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  const int64_t *perm;
  int n = wt_attr_ints(ctx->node, "perm", &perm);
  int seen[WT_MAX_RANK] = {0};
  int64_t dims[WT_MAX_RANK];
  if (n < 0) {
    for (int i = 0; i < x->rank; i++) p->perm[i] = x->rank - 1 - i;
  } else {
    if (n != x->rank)
      return wt_errorf(WT_ERR_SHAPE, "attribute 'perm' has %d values; expected %d (the input rank)",
                       n, x->rank);
    for (int i = 0; i < n; i++) {
      int64_t v = perm[i];
      if (v < 0) v += n; /* not in the spec, but harmless and common in exporters */
      if (v < 0 || v >= n || seen[v])
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'perm' is not a permutation of 0..%d "
                         "(value %lld at position %d)", n - 1, (long long)perm[i], i);
      seen[v] = 1;
      p->perm[i] = (int)v;
    }
  }
  for (int i = 0; i < x->rank; i++) dims[i] = x->dims[p->perm[i]];
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, dims);
  return WT_OK;
}

/* ---- Expand / Tile ---------------------------------------------------------------------- */

static int expand_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  wt_tensor s = {.dtype = x->dtype};
  int n;
  WT_TRY(wt_su_known_ints(ctx, 1, "shape", WT_MAX_RANK, s.dims, &n));
  s.rank = n;
  for (int i = 0; i < n; i++)
    if (s.dims[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'shape' has negative value %lld at position %d",
                       (long long)s.dims[i], i);
  const wt_tensor *ts[2] = {x, &s};
  int r;
  int64_t dims[WT_MAX_RANK];
  WT_TRY(wt_broadcast_shapes(2, ts, &r, dims));
  wt_set_shape(&ctx->out[0], x->dtype, r, dims);
  return WT_OK;
}

static int tile_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t reps[WT_MAX_RANK], dims[WT_MAX_RANK];
  int n;
  WT_TRY(wt_su_known_ints(ctx, 1, "repeats", WT_MAX_RANK, reps, &n));
  if (n != x->rank)
    return wt_errorf(WT_ERR_SHAPE, "input 'repeats' has %d values; expected %d (the input rank)",
                     n, x->rank);
  for (int i = 0; i < n; i++) {
    if (reps[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'repeats' has negative value %lld at position %d",
                       (long long)reps[i], i);
    dims[i] = x->dims[i] * reps[i];
  }
  wt_set_shape(&ctx->out[0], x->dtype, n, dims);
  return WT_OK;
}

/* ---- BroadcastGradientArgs (com.microsoft) ---------------------------------------------- */

static int bga_infer(wt_infer_ctx *ctx) {
  int64_t a[WT_MAX_RANK], b[WT_MAX_RANK], ax[WT_MAX_RANK], bx[WT_MAX_RANK];
  int na, nb, nax, nbx;
  WT_TRY(wt_su_known_ints(ctx, 0, "a_shape", WT_MAX_RANK, a, &na));
  WT_TRY(wt_su_known_ints(ctx, 1, "b_shape", WT_MAX_RANK, b, &nb));
  WT_TRY(wt_su_broadcast_axes(a, na, b, nb, ax, &nax, bx, &nbx));
  int64_t d0 = nax, d1 = nbx;
  wt_set_shape(&ctx->out[0], WT_INT64, 1, &d0);
  if (ctx->n_out > 1) wt_set_shape(&ctx->out[1], WT_INT64, 1, &d1);
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* Reshape, Flatten, Squeeze, Unsqueeze: dX = Reshape(dY, Shape(X)). */
static int view_grad(wt_grad_ctx *c) {
  wt_grad_set(c, 0, wt_grad_reshape_like(c, GO(0), I(0)));
  return wt_grad_status(c);
}

/* Transpose: dX = Transpose(dY, inverse perm); no perm (reversal) is its own inverse. */
static int transpose_grad(wt_grad_ctx *c) {
  const int64_t *perm;
  int n = wt_attr_ints(wt_grad_node(c), "perm", &perm);
  int64_t inv[WT_MAX_RANK];
  if (n > WT_MAX_RANK) return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "perm has %d values", n);
  for (int i = 0; i < n; i++) {
    int64_t p = perm[i] < 0 ? perm[i] + n : perm[i];
    if (p < 0 || p >= n) return wt_grad_fail(c, WT_ERR_INVALID_ARG, "perm is not a permutation");
    inv[p] = i;
  }
  int d = wt_grad_op1(c, "Transpose", "", 1, (int[]){GO(0)});
  if (d >= 0 && n >= 0) wt_grad_attr_ints(c, wt_grad_last(c), "perm", inv, n);
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}

/* True when the axes X was broadcast along are known from the static shapes. */
static int static_broadcast(const wt_value *x, const wt_value *y) {
  if (x->rank < 0 || y->rank < x->rank) return 0;
  for (int j = 0; j < x->rank; j++) {
    int i = j + y->rank - x->rank;
    if (x->dims[j] == 1 || (x->dims[j] >= 0 && x->dims[j] == y->dims[i])) continue;
    if (x->dims[j] < 0 && y->dims[i] < 0 && wt_value_dim_param(x, j) && wt_value_dim_param(y, i) &&
        strcmp(wt_value_dim_param(x, j), wt_value_dim_param(y, i)) == 0)
      continue;
    return 0;
  }
  return 1;
}

/* Expand: dY summed over the broadcast axes; when the static shapes cannot tell them, ONNX
 * Runtime's dynamic form: ReduceSum(dY, BroadcastGradientArgs(Shape(X), Shape(Y)),
 * noop_with_empty_axes) reshaped to Shape(X) (all folded at plan time). */
static int expand_grad(wt_grad_ctx *c) {
  if (static_broadcast(wt_grad_value(c, I(0)), wt_grad_value(c, O(0)))) {
    wt_grad_set(c, 0, wt_grad_unbroadcast(c, GO(0), 0, 0));
    return wt_grad_status(c);
  }
  if (c->opset < 13)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "the broadcast axes are not known statically; the "
                        "dynamic form needs opset >= 13 (ReduceSum's axes input)");
  int xs = wt_grad_op1(c, "Shape", "", 1, (int[]){I(0)});
  int ys = wt_grad_op1(c, "Shape", "", 1, (int[]){O(0)});
  int axes = wt_grad_op1(c, "BroadcastGradientArgs", WT_MS, 2, (int[]){xs, ys});
  int r = wt_grad_op1(c, "ReduceSum", "", 2, (int[]){GO(0), axes});
  if (r >= 0) {
    wt_grad_attr_int(c, wt_grad_last(c), "keepdims", 1);
    wt_grad_attr_int(c, wt_grad_last(c), "noop_with_empty_axes", 1);
  }
  wt_grad_set(c, 0, wt_grad_op1(c, "Reshape", "", 2, (int[]){r, xs}));
  return wt_grad_status(c);
}

/* Tile (ONNX Runtime's form): dY viewed as [r0, d0, r1, d1, ...] — the shape interleaved from
 * Unsqueeze(repeats) and Unsqueeze(Shape(X)) — then summed over the repeat axes. */
static int tile_grad(wt_grad_ctx *c) {
  int r = wt_grad_value(c, I(0))->rank;
  if (r < 0) return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of the input must be known");
  if (r == 0) {
    wt_grad_set(c, 0, GO(0));
    return wt_grad_status(c);
  }
  const int64_t one[1] = {1};
  int shape = wt_grad_op1(c, "Shape", "", 1, (int[]){I(0)});
  int s2 = wt_grad_unsqueeze(c, shape, one, 1);
  int r2 = wt_grad_unsqueeze(c, I(1), one, 1);
  int both = wt_grad_op1(c, "Concat", "", 2, (int[]){r2, s2});
  if (both >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", 1);
  int flat = wt_grad_op1(c, "Reshape", "", 2, (int[]){both, wt_grad_const_i64s(c, (int64_t[]){-1}, 1)});
  int dy = wt_grad_op1(c, "Reshape", "", 2, (int[]){GO(0), flat});
  int64_t even[WT_MAX_RANK];
  for (int i = 0; i < r; i++) even[i] = 2 * i;
  wt_grad_set(c, 0, wt_grad_reduce_sum(c, dy, even, r, 0));
  return wt_grad_status(c);
}


static const wt_op_def wt_op_Reshape = {.domain = "", .op_type = "Reshape", .min_inputs = 1,
                                 .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                 .infer = reshape_infer, .grad = view_grad,
                                 .flags = WT_OP_VIEW};
static const wt_op_def wt_op_Flatten = {.domain = "", .op_type = "Flatten", .min_inputs = 1,
                                 .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                 .infer = flatten_infer, .grad = view_grad,
                                 .flags = WT_OP_VIEW};
static const wt_op_def wt_op_Squeeze = {.domain = "", .op_type = "Squeeze", .min_inputs = 1,
                                 .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                 .infer = squeeze_infer, .grad = view_grad,
                                 .flags = WT_OP_VIEW};
static const wt_op_def wt_op_Unsqueeze = {.domain = "", .op_type = "Unsqueeze", .min_inputs = 1,
                                   .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                   .infer = unsqueeze_infer, .grad = view_grad,
                                   .flags = WT_OP_VIEW};
static const wt_op_def wt_op_Shape = {.domain = "", .op_type = "Shape", .min_inputs = 1, .max_inputs = 1,
                               .min_outputs = 1, .max_outputs = 1, .infer = shape_infer, .flags = WT_OP_SHAPE_ONLY};
static const wt_op_def wt_op_Size = {.domain = "", .op_type = "Size", .min_inputs = 1, .max_inputs = 1,
                              .min_outputs = 1, .max_outputs = 1, .infer = size_infer, .flags = WT_OP_SHAPE_ONLY};
static const wt_op_def wt_op_Transpose = {.domain = "", .op_type = "Transpose", .min_inputs = 1,
                                   .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                   .infer = transpose_infer, .grad = transpose_grad,
                                   .flags = WT_OP_TRANSPOSE};
static const wt_op_def wt_op_Expand = {.domain = "", .op_type = "Expand", .min_inputs = 2,
                                .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                .infer = expand_infer, .grad = expand_grad};
static const wt_op_def wt_op_Tile = {.domain = "", .op_type = "Tile", .min_inputs = 2, .max_inputs = 2,
                              .min_outputs = 1, .max_outputs = 1, .infer = tile_infer, .grad = tile_grad};

static const wt_op_def wt_op_ms_BroadcastGradientArgs = {.domain = WT_MS, .op_type = "BroadcastGradientArgs",
                                                  .min_inputs = 2, .max_inputs = 2, .min_outputs = 1,
                                                  .max_outputs = 2, .infer = bga_infer,
                                                  .flags = WT_OP_GRADIENT};

/* Defined in shape_build.c; one table keeps registry.c's family list unchanged. */
const wt_op_def *const wt_ops_shape[] = {
    &wt_op_Reshape, &wt_op_Flatten,  &wt_op_Squeeze,  &wt_op_Unsqueeze,       &wt_op_Shape,
    &wt_op_Size,    &wt_op_Transpose, &wt_op_Expand,  &wt_op_Tile,
    &wt_op_ms_BroadcastGradientArgs, NULL,
};
