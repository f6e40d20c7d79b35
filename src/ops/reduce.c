/* Op family: reduce. ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSumExp/LogSum (axes: attribute,
 * or as input 1 for ReduceSum-13+ and every reduce op at 18+), ArgMax/ArgMin, CumSum, TopK.
 * Infer collapses the reduced axes into a few [outer, n, inner] passes (one per block of
 * adjacent reduced dims) so run is a straight sequence of kernel calls. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/reduce_params.h"

/* ---- Reduce* ------------------------------------------------------------------------------ */

typedef struct reduce_spec {
  int kind, final;
  int axes_input_since;
} reduce_spec;

static int reduce_infer(wt_infer_ctx *ctx) {
  reduce_params *p = WT_PARAMS(ctx, reduce_params);
  const wt_tensor *x = &ctx->in[0];
  const reduce_spec *spec = ctx->op->spec;
  p->kind = spec->kind;
  p->final = spec->final;
  if (x->dtype != WT_FLOAT && x->dtype != WT_INT32 && x->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 'data' has dtype %s; expected float, int32 or int64",
                     wt_dtype_name(x->dtype));
  int axes_as_input = ctx->opset >= spec->axes_input_since;
  int64_t keepdims = wt_attr_int(ctx->node, "keepdims", 1);
  int64_t noop_empty = wt_attr_int(ctx->node, "noop_with_empty_axes", 0);
  int rank = x->rank;
  int mask[WT_MAX_RANK] = {0};
  int n_axes = 0;
  if (axes_as_input) {
    if (wt_has_input(ctx->in, ctx->n_in, 1)) {
      const wt_tensor *a = wt_infer_value(ctx, 1);
      if (ctx->in[1].dtype != WT_INT64)
        return wt_errorf(WT_ERR_SHAPE, "input 'axes' (index 1) has dtype %s; expected int64",
                         wt_dtype_name(ctx->in[1].dtype));
      if (!a && wt_numel(&ctx->in[1]) == 0) a = &ctx->in[1]; /* empty: no values needed */
      if (!a)
        return wt_errorf(WT_ERR_UNSUPPORTED,
                         "input 'axes' (index 1) must be known before the run (an initializer "
                         "or constant)");
      if (a->rank > 1)
        return wt_errorf(WT_ERR_SHAPE, "input 'axes' has rank %d; expected 1", a->rank);
      n_axes = (int)wt_numel(a);
      for (int i = 0; i < n_axes; i++) {
        int ax = wt_axis(wt_get_int(a, i), rank);
        if (ax < 0)
          return wt_errorf(WT_ERR_INVALID_ARG, "axes[%d] = %lld is out of range for rank %d", i,
                           (long long)wt_get_int(a, i), rank);
        mask[ax] = 1;
      }
    }
  } else {
    if (wt_has_input(ctx->in, ctx->n_in, 1))
      return wt_errorf(WT_ERR_INVALID_ARG,
                       "axes is an attribute at this opset; expected 1 input, got 2");
    const int64_t *axes;
    n_axes = wt_attr_ints(ctx->node, "axes", &axes);
    if (n_axes < 0) n_axes = 0;
    for (int i = 0; i < n_axes; i++) {
      int ax = wt_axis(axes[i], rank);
      if (ax < 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute axes[%d] = %lld is out of range for rank %d",
                         i, (long long)axes[i], rank);
      mask[ax] = 1;
    }
  }
  if (n_axes == 0) {
    if (noop_empty) {
      p->noop = 1;
      wt_set_shape(&ctx->out[0], x->dtype, rank, x->dims);
      return WT_OK;
    }
    for (int i = 0; i < rank; i++) mask[i] = 1;
  }
  /* Output shape. */
  wt_tensor *y = &ctx->out[0];
  y->dtype = x->dtype;
  y->rank = 0;
  for (int i = 0; i < rank; i++) {
    if (!mask[i]) y->dims[y->rank++] = x->dims[i];
    else if (keepdims) y->dims[y->rank++] = 1;
  }
  /* Blocks of adjacent dims with the same reducedness; size-1 dims are dropped. */
  int64_t bsize[WT_MAX_RANK];
  int bred[WT_MAX_RANK], nb = 0;
  p->count = 1;
  for (int i = 0; i < rank; i++) {
    if (mask[i]) p->count *= x->dims[i];
    if (x->dims[i] == 1) continue;
    if (nb > 0 && bred[nb - 1] == mask[i]) {
      bsize[nb - 1] *= x->dims[i];
    } else {
      bsize[nb] = x->dims[i];
      bred[nb++] = mask[i];
    }
  }
  /* One pass per reduced block, innermost first. */
  p->n_pass = 0;
  for (int b = nb - 1; b >= 0; b--) {
    if (!bred[b]) continue;
    int k = p->n_pass++;
    p->outer[k] = wt_dims_prod(bsize, 0, b);
    p->n[k] = bsize[b];
    p->inner[k] = wt_dims_prod(bsize, b + 1, nb);
    bsize[b] = 1;
  }
  if (p->n_pass == 0) { /* only size-1 dims reduced: one trivial pass (L2 of x is |x|) */
    p->n_pass = 1;
    p->outer[0] = wt_numel(x);
    p->n[0] = 1;
    p->inner[0] = 1;
  }
  /* Pass k < last writes bufs[k % 2]; the last pass writes the output. */
  for (int k = 0; k + 1 < p->n_pass; k++) {
    int64_t sz = p->outer[k] * p->inner[k];
    int64_t *buf = k % 2 ? &p->buf1 : &p->buf0;
    if (sz > *buf) *buf = sz;
  }
  if (p->kind == WT_RED_LOGSUMEXP && x->dtype != WT_FLOAT && p->n_pass > 1)
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "ReduceLogSumExp on integers over non-adjacent axes is not supported");
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* A reduced value (dY, or Y) brought back to the keepdims=1 shape: unsqueezed at the reduced
 * axes when keepdims=0 (a full reduction without axes gives a scalar, which broadcasts as is).
 * Sets *identity for noop_with_empty_axes with no axes (Y is X; v is returned as is). */
static int unreduce(wt_grad_ctx *c, int v, int *identity) {
  const wt_node *n = wt_grad_node(c);
  const wt_value *x = wt_grad_value(c, I(0));
  int64_t axes[WT_MAX_RANK];
  int n_axes = -1;
  const int64_t *attr;
  int na = wt_attr_ints(n, "axes", &attr);
  *identity = 0;
  if (na >= 0) {
    if (na > WT_MAX_RANK)
      return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "%d axes (at most %d)", na, WT_MAX_RANK), -1;
    n_axes = na;
    for (int i = 0; i < n_axes; i++) axes[i] = attr[i];
  } else if (n->n_inputs > 1 && I(1) >= 0) {
    n_axes = wt_grad_const_ints(c, I(1), axes, WT_MAX_RANK);
    if (n_axes < 0)
      return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "the axes input must be a constant to differentiate"), -1;
  } else {
    n_axes = 0;
  }
  int keepdims = (int)wt_attr_int(n, "keepdims", 1);
  *identity = n_axes == 0 && wt_attr_int(n, "noop_with_empty_axes", 0);
  if (*identity || keepdims || n_axes == 0) return v;
  if (x->rank < 0) return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of the input must be known"), -1;
  for (int i = 0; i < n_axes; i++)
    if (axes[i] < 0) axes[i] += x->rank;
  /* Unsqueeze wants sorted axes. */
  for (int i = 1; i < n_axes; i++)
    for (int j = i; j > 0 && axes[j - 1] > axes[j]; j--) {
      int64_t t = axes[j];
      axes[j] = axes[j - 1];
      axes[j - 1] = t;
    }
  return wt_grad_unsqueeze(c, v, axes, n_axes);
}

/* dY brought back to X's shape: unreduced, then expanded. Sets *identity like unreduce. */
static int spread_grad(wt_grad_ctx *c, int *identity) {
  int dy = unreduce(c, GO(0), identity);
  return *identity ? dy : wt_grad_expand_like(c, dy, I(0));
}

static int reduce_sum_grad(wt_grad_ctx *c) {
  int identity;
  wt_grad_set(c, 0, spread_grad(c, &identity));
  return wt_grad_status(c);
}

/* ReduceMean: the spread gradient times |Y| / |X| (sizes folded at plan time). */
static int reduce_mean_grad(wt_grad_ctx *c) {
  int identity;
  int d = spread_grad(c, &identity);
  if (!identity && d >= 0) {
    int sx = wt_grad_op1(c, "Size", "", 1, (int[]){I(0)});
    int sy = wt_grad_op1(c, "Size", "", 1, (int[]){O(0)});
    int fy = wt_grad_op1(c, "Cast", "", 1, &sy);
    if (fy >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
    int fx = wt_grad_op1(c, "Cast", "", 1, &sx);
    if (fx >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
    int scale = wt_grad_op1(c, "Div", "", 2, (int[]){fy, fx});
    d = wt_grad_op1(c, "Mul", "", 2, (int[]){d, scale});
  }
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}

/* ReduceMax / ReduceMin, like ONNX Runtime: dY flows to every element equal to Y (ties all
 * get it): dX = unreduce(dY) * Cast(Equal(X, unreduce(Y))). */
static int reduce_max_grad(wt_grad_ctx *c) {
  int identity;
  int dy = unreduce(c, GO(0), &identity);
  if (identity) {
    wt_grad_set(c, 0, dy);
    return wt_grad_status(c);
  }
  int y = unreduce(c, O(0), &identity);
  int eq = wt_grad_op1(c, "Equal", "", 2, (int[]){I(0), y});
  int mask = wt_grad_op1(c, "Cast", "", 1, &eq);
  if (mask >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  wt_grad_set(c, 0, wt_grad_op1(c, "Mul", "", 2, (int[]){dy, mask}));
  return wt_grad_status(c);
}

/* X-shaped f(X, Y) * unreduce(dY) for the kinds whose local derivative is elementwise. */
enum { D_L2, D_LOGSUMEXP, D_SUMSQ, D_L1, D_LOGSUM };

static int reduce_elem_grad(wt_grad_ctx *c, int kind) {
  int identity;
  int dy = unreduce(c, GO(0), &identity);
  if (identity) {
    wt_grad_set(c, 0, dy);
    return wt_grad_status(c);
  }
  int x = I(0), dx = -1;
  switch (kind) {
    case D_L2: { /* X * dY / Y, 0 where Y == 0 (ONNX Runtime's rule) */
      int y = unreduce(c, O(0), &identity);
      int zero = wt_grad_const_f32(c, 0.0f);
      int q = wt_grad_op1(c, "Div", "", 2, (int[]){dy, y});
      int z = wt_grad_op1(c, "Equal", "", 2, (int[]){y, zero});
      int m = wt_grad_op1(c, "Where", "", 3, (int[]){z, zero, q});
      dx = wt_grad_op1(c, "Mul", "", 2, (int[]){x, m});
      break;
    }
    case D_LOGSUMEXP: { /* exp(X - Y) * dY */
      int y = unreduce(c, O(0), &identity);
      int d = wt_grad_op1(c, "Sub", "", 2, (int[]){x, y});
      int e = wt_grad_op1(c, "Exp", "", 1, &d);
      dx = wt_grad_op1(c, "Mul", "", 2, (int[]){e, dy});
      break;
    }
    case D_SUMSQ: { /* 2 X dY */
      int t = wt_grad_op1(c, "Mul", "", 2, (int[]){x, wt_grad_const_f32(c, 2.0f)});
      dx = wt_grad_op1(c, "Mul", "", 2, (int[]){t, dy});
      break;
    }
    case D_L1: { /* sign(X) dY */
      int sg = wt_grad_op1(c, "Sign", "", 1, &x);
      dx = wt_grad_op1(c, "Mul", "", 2, (int[]){sg, dy});
      break;
    }
    default: { /* LogSum: dY / exp(Y), spread to X's shape */
      int y = unreduce(c, O(0), &identity);
      int e = wt_grad_op1(c, "Exp", "", 1, &y);
      int q = wt_grad_op1(c, "Div", "", 2, (int[]){dy, e});
      dx = wt_grad_expand_like(c, q, x);
      break;
    }
  }
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

static int reduce_l2_grad(wt_grad_ctx *c) { return reduce_elem_grad(c, D_L2); }
static int reduce_lse_grad(wt_grad_ctx *c) { return reduce_elem_grad(c, D_LOGSUMEXP); }
static int reduce_sumsq_grad(wt_grad_ctx *c) { return reduce_elem_grad(c, D_SUMSQ); }
static int reduce_l1_grad(wt_grad_ctx *c) { return reduce_elem_grad(c, D_L1); }
static int reduce_logsum_grad(wt_grad_ctx *c) { return reduce_elem_grad(c, D_LOGSUM); }

#define REDUCE_DEF(NAME, KIND, FINAL, AXES_SINCE, GRAD)                                     \
  static const wt_op_def wt_op_##NAME = {                                                    \
      .domain = "", .op_type = #NAME, .min_inputs = 1, .max_inputs = 2, .min_outputs = 1,    \
      .max_outputs = 1, .infer = reduce_infer, GRAD,                             \
      .spec = &(const reduce_spec){KIND, FINAL, AXES_SINCE}};
REDUCE_OPS(REDUCE_DEF)

/* ---- shared: one axis as [outer, n, inner] ------------------------------------------------ */

static int check_numeric(const wt_tensor *x, const char *name) {
  if (x->dtype != WT_FLOAT && x->dtype != WT_INT32 && x->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has dtype %s; expected float, int32 or int64",
                     name, wt_dtype_name(x->dtype));
  return WT_OK;
}

/* ---- ArgMax / ArgMin ---------------------------------------------------------------------- */

static int argext_infer(wt_infer_ctx *ctx) {
  axis_params *p = WT_PARAMS(ctx, axis_params);
  const wt_tensor *x = &ctx->in[0];
  WT_TRY(check_numeric(x, "data"));
  int64_t axis = wt_attr_int(ctx->node, "axis", 0);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d",
                     (long long)axis, x->rank);
  if (x->dims[ax] == 0)
    return wt_errorf(WT_ERR_SHAPE, "the reduced dim %d is empty; expected at least 1 element", ax);
  split_at_axis(x, ax, p);
  p->a = ctx->op->variant;
  p->b = wt_attr_int(ctx->node, "select_last_index", 0) != 0;
  int keepdims = wt_attr_int(ctx->node, "keepdims", 1) != 0;
  wt_tensor *y = &ctx->out[0];
  y->dtype = WT_INT64;
  y->rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i != ax) y->dims[y->rank++] = x->dims[i];
    else if (keepdims) y->dims[y->rank++] = 1;
  }
  return WT_OK;
}

static const wt_op_def wt_op_ArgMax = {.domain = "", .op_type = "ArgMax", .min_inputs = 1,
                                .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                .infer = argext_infer, .variant = 1 /* max */};
static const wt_op_def wt_op_ArgMin = {.domain = "", .op_type = "ArgMin", .min_inputs = 1,
                                .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
                                .infer = argext_infer};

/* ---- CumSum ------------------------------------------------------------------------------- */

static int cumsum_infer(wt_infer_ctx *ctx) {
  axis_params *p = WT_PARAMS(ctx, axis_params);
  const wt_tensor *x = &ctx->in[0], *a = &ctx->in[1];
  WT_TRY(check_numeric(x, "x"));
  if (a->dtype != WT_INT32 && a->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 'axis' (index 1) has dtype %s; expected int32 or int64",
                     wt_dtype_name(a->dtype));
  if (wt_numel(a) != 1 || a->rank > 1)
    return wt_errorf(WT_ERR_SHAPE, "input 'axis' must be a scalar (or 1 element)");
  if (x->rank == 0) return wt_errorf(WT_ERR_SHAPE, "input 'x' is a scalar; expected rank >= 1");
  p->a = wt_attr_int(ctx->node, "exclusive", 0) != 0;
  p->b = wt_attr_int(ctx->node, "reverse", 0) != 0;
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, x->dims);
  return WT_OK;
}

/* dX is the cumulative sum of dY the other way: same axis and exclusive, reverse flipped. */
static int cumsum_grad(wt_grad_ctx *c) {
  int dx = wt_grad_op1(c, "CumSum", "", 2, (int[]){GO(0), I(1)});
  if (dx >= 0) {
    const wt_node *n = wt_grad_node(c);
    int64_t exclusive = wt_attr_int(n, "exclusive", 0), reverse = wt_attr_int(n, "reverse", 0);
    int node = wt_grad_last(c);
    if (exclusive) wt_grad_attr_int(c, node, "exclusive", 1);
    if (!reverse) wt_grad_attr_int(c, node, "reverse", 1);
  }
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_CumSum = {.domain = "", .op_type = "CumSum", .min_inputs = 2,
                                .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                .infer = cumsum_infer, .grad = cumsum_grad};

/* ---- TopK --------------------------------------------------------------------------------- */

static int topk_infer(wt_infer_ctx *ctx) {
  axis_params *p = WT_PARAMS(ctx, axis_params);
  const wt_tensor *x = &ctx->in[0];
  WT_TRY(check_numeric(x, "X"));
  int64_t k;
  if (ctx->opset < 10) {
    if (ctx->n_in > 1) return wt_errorf(WT_ERR_INVALID_ARG, "k is an attribute before opset 10");
    const wt_attr *ka = wt_node_attr(ctx->node, "k");
    if (!ka) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'k' is required");
    k = ka->i;
  } else {
    if (!wt_has_input(ctx->in, ctx->n_in, 1))
      return wt_errorf(WT_ERR_INVALID_ARG, "input 'K' (index 1) is required at opset >= 10");
    const wt_tensor *kt = &ctx->in[1];
    if (kt->dtype != WT_INT64 || wt_numel(kt) != 1)
      return wt_errorf(WT_ERR_SHAPE, "input 'K' must hold one int64");
    const wt_tensor *kv = wt_infer_value(ctx, 1);
    if (!kv)
      return wt_errorf(WT_ERR_UNSUPPORTED,
                       "input 'K' (index 1) must be known before the run (an initializer or "
                       "constant)");
    k = wt_get_int(kv, 0);
  }
  int64_t axis = wt_attr_int(ctx->node, "axis", -1);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d",
                     (long long)axis, x->rank);
  if (k < 0 || k > x->dims[ax])
    return wt_errorf(WT_ERR_INVALID_ARG, "k = %lld; expected 0 <= k <= %lld (dim %d)",
                     (long long)k, (long long)x->dims[ax], ax);
  split_at_axis(x, ax, p);
  p->k = k;
  p->a = ctx->opset >= 11 ? wt_attr_int(ctx->node, "largest", 1) != 0 : 1;
  p->b = ctx->opset >= 11 ? wt_attr_int(ctx->node, "sorted", 1) != 0 : 1;
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, x->dims);
  ctx->out[0].dims[ax] = k;
  wt_set_shape(&ctx->out[1], WT_INT64, x->rank, ctx->out[0].dims);
  return WT_OK;
}

/* ONNX Runtime's rule: dY scattered to the Indices along the axis,
 * GatherElementsGrad(dY, Shape(X), Indices) with TopK's axis (default -1). */
static int topk_grad(wt_grad_ctx *c) {
  int64_t axis = wt_attr_int(wt_grad_node(c), "axis", -1);
  int x = I(0);
  int shape = wt_grad_op1(c, "Shape", "", 1, &x);
  int dx = wt_grad_op1(c, "GatherElementsGrad", WT_MS, 3, (int[]){GO(0), shape, O(1)});
  if (dx >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", axis);
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_TopK = {.domain = "", .op_type = "TopK", .min_inputs = 1,
                              .max_inputs = 2, .min_outputs = 2, .max_outputs = 2,
                              .infer = topk_infer, .grad = topk_grad};

#define REDUCE_LIST(NAME, ...) &wt_op_##NAME,
const wt_op_def *const wt_ops_reduce[] = {
    REDUCE_OPS(REDUCE_LIST) &wt_op_ArgMax, &wt_op_ArgMin, &wt_op_CumSum, &wt_op_TopK, NULL,
};
