/* Op family: data. Region ops: Slice, Pad, Trilu, their gradient rules, and the gradient ops
 * com.microsoft SliceGrad and Trilu. (Indexed gathers and scatters live in data_index.c.)
 * Copies work on element size, so every dtype shares one path. */
#include <assert.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/data_params.h"
#include "ops/shape_util.h"

/* ---- Slice ------------------------------------------------------------------------------ */

/* Reads starts/ends/axes/steps: attributes when first == 0 (Slice before opset 10), else inputs
 * first..first+3. n* = -1 when absent. */
static int slice_lists(wt_infer_ctx *ctx, int first, int64_t v[4][WT_MAX_RANK], int n[4]) {
  static const char *const names[4] = {"starts", "ends", "axes", "steps"};
  for (int k = 0; k < 4; k++) {
    n[k] = -1;
    if (first == 0) {
      if (k == 3) continue;
      const int64_t *p;
      n[k] = wt_attr_ints(ctx->node, names[k], &p);
      if (n[k] > WT_MAX_RANK)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute '%s' has %d values; at most %d",
                         names[k], n[k], WT_MAX_RANK);
      if (n[k] > 0) memcpy(v[k], p, sizeof *p * (size_t)n[k]);
    } else if (wt_has_input(ctx->in, ctx->n_in, k + first)) {
      WT_TRY(wt_su_known_ints(ctx, k + first, names[k], WT_MAX_RANK, v[k], &n[k]));
    }
    if (k < 2 && n[k] < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, first == 0 ? "attribute '%s' is required"
                                                      : "input '%s' is required", names[k]);
  }
  return WT_OK;
}

/* Start/step per axis of the sliced tensor x (given by its shape) and the slice's dims. */
static int slice_plan(wt_infer_ctx *ctx, int first, const wt_tensor *x, slice_params *p,
                      int64_t *dims) {
  int64_t v[4][WT_MAX_RANK];
  int n[4], axes[WT_MAX_RANK];
  WT_TRY(slice_lists(ctx, first, v, n));
  int cnt = n[0];
  if (n[1] != cnt || (n[2] >= 0 && n[2] != cnt) || (n[3] >= 0 && n[3] != cnt))
    return wt_errorf(WT_ERR_SHAPE, "starts, ends, axes and steps must have the same length "
                     "(got %d, %d, %d, %d)", n[0], n[1], n[2], n[3]);
  if (n[2] >= 0) {
    WT_TRY(wt_su_axes(v[2], cnt, x->rank, "axes", axes));
  } else {
    if (cnt > x->rank)
      return wt_errorf(WT_ERR_SHAPE, "%d starts for an input of rank %d", cnt, x->rank);
    for (int k = 0; k < cnt; k++) axes[k] = k;
  }
  for (int i = 0; i < x->rank; i++) {
    p->start[i] = 0;
    p->step[i] = 1;
    dims[i] = x->dims[i];
  }
  for (int k = 0; k < cnt; k++) {
    int a = axes[k];
    int64_t d = x->dims[a], s = v[0][k], e = v[1][k], st = n[3] >= 0 ? v[3][k] : 1;
    if (st == 0) return wt_errorf(WT_ERR_INVALID_ARG, "steps[%d] is 0", k);
    if (s < 0) s += d;
    if (e < 0) e += d;
    int64_t c;
    if (st > 0) {
      s = s < 0 ? 0 : s > d ? d : s;
      e = e < 0 ? 0 : e > d ? d : e;
      c = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
      e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
      int64_t ns = st == INT64_MIN ? INT64_MAX : -st;
      c = s > e ? (s - e - 1) / ns + 1 : 0;
    }
    if (d == 0) c = s = 0;
    p->start[a] = s;
    p->step[a] = st;
    dims[a] = c;
  }
  return WT_OK;
}

static int slice_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t dims[WT_MAX_RANK];
  WT_TRY(slice_plan(ctx, ctx->opset < 10 ? 0 : 1, x, WT_PARAMS(ctx, slice_params), dims));
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, dims);
  return WT_OK;
}

/* SliceGrad (com.microsoft): dX = zeros(shape) with dY written where Slice read it.
 * Inputs dY, shape, starts, ends[, axes[, steps]]. */
static int slice_grad_op_infer(wt_infer_ctx *ctx) {
  const wt_tensor *dy = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  wt_tensor x = {.dtype = dy->dtype};
  WT_TRY(wt_su_known_ints(ctx, 1, "shape", WT_MAX_RANK, x.dims, &x.rank));
  for (int i = 0; i < x.rank; i++)
    if (x.dims[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'shape' has negative value %lld", (long long)x.dims[i]);
  int64_t dims[WT_MAX_RANK];
  WT_TRY(slice_plan(ctx, 2, &x, WT_PARAMS(ctx, slice_params), dims));
  if (dy->rank != x.rank || wt_shape_numel(x.rank, dims) != wt_numel(dy) ||
      memcmp(dims, dy->dims, sizeof(int64_t) * (size_t)x.rank) != 0) {
    char a[160], b[160], d[160];
    return wt_errorf(WT_ERR_SHAPE, "input 'dY' has shape %s; the slice of %s is %s",
                     wt_shape_str(dy->rank, dy->dims, a, sizeof a),
                     wt_shape_str(x.rank, x.dims, b, sizeof b), wt_shape_str(x.rank, dims, d, sizeof d));
  }
  wt_set_shape(&ctx->out[0], dy->dtype, x.rank, x.dims);
  return WT_OK;
}

/* ---- Pad -------------------------------------------------------------------------------- */

static int pad_infer(wt_infer_ctx *ctx) {
  pad_params *p = WT_PARAMS(ctx, pad_params);
  const wt_tensor *x = &ctx->in[0];
  size_t elem = wt_su_elem(ctx, 0);
  if (!elem) return WT_ERR_UNSUPPORTED;
  const char *mode = wt_attr_string(ctx->node, "mode", "constant");
  if (strcmp(mode, "constant") == 0) p->mode = PAD_CONSTANT;
  else if (strcmp(mode, "reflect") == 0) p->mode = PAD_REFLECT;
  else if (strcmp(mode, "edge") == 0) p->mode = PAD_EDGE;
  else if (strcmp(mode, "wrap") == 0 && ctx->opset >= 19) p->mode = PAD_WRAP;
  else
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'mode' = '%s'; expected constant, reflect or "
                     "edge", mode);
  int r = x->rank, axes[WT_MAX_RANK], na = r, np, has_axes = 0;
  int64_t pads[2 * WT_MAX_RANK];
  if (ctx->opset < 11) {
    const int64_t *pp;
    np = wt_attr_ints(ctx->node, "pads", &pp);
    if (np < 0) np = wt_attr_ints(ctx->node, "paddings", &pp);
    if (np < 0) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'pads' is required");
    if (np > 2 * WT_MAX_RANK) np = 2 * WT_MAX_RANK + 1; /* reported as a length mismatch below */
    else if (np > 0) memcpy(pads, pp, sizeof *pp * (size_t)np);
    float f = wt_attr_float(ctx->node, "value", 0.0f);
    if (x->dtype == WT_FLOAT) memcpy(p->value, &f, 4);
    else if (x->dtype == WT_INT32) { int32_t v = (int32_t)f; memcpy(p->value, &v, 4); }
    else if (x->dtype == WT_INT64) { int64_t v = (int64_t)f; memcpy(p->value, &v, 8); }
    else p->value[0] = f != 0.0f;
  } else {
    if (!wt_has_input(ctx->in, ctx->n_in, 1))
      return wt_errorf(WT_ERR_INVALID_ARG, "input 'pads' (index 1) is required");
    WT_TRY(wt_su_known_ints(ctx, 1, "pads", 2 * WT_MAX_RANK, pads, &np));
    if (wt_has_input(ctx->in, ctx->n_in, 2)) {
      const wt_tensor *c = &ctx->in[2];
      if (c->dtype != x->dtype)
        return wt_errorf(WT_ERR_SHAPE, "input 'constant_value' has dtype %s; expected %s like "
                         "'data'", wt_dtype_name(c->dtype), wt_dtype_name(x->dtype));
      if (wt_numel(c) > 1)
        return wt_errorf(WT_ERR_SHAPE, "input 'constant_value' has %lld elements; expected a "
                         "scalar", (long long)wt_numel(c));
    }
    if (wt_has_input(ctx->in, ctx->n_in, 3)) {
      int64_t av[WT_MAX_RANK];
      WT_TRY(wt_su_known_ints(ctx, 3, "axes", WT_MAX_RANK, av, &na));
      WT_TRY(wt_su_axes(av, na, r, "axes", axes));
      has_axes = 1;
    }
  }
  if (!has_axes)
    for (int i = 0; i < r; i++) axes[i] = i;
  if (np != 2 * na)
    return wt_errorf(WT_ERR_SHAPE, "'pads' has %d values; expected %d (2 per padded axis)", np,
                     2 * na);
  int64_t dims[WT_MAX_RANK], end[WT_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) {
    p->begin[i] = 0;
    dims[i] = x->dims[i];
  }
  for (int k = 0; k < na; k++) {
    p->begin[axes[k]] = pads[k];
    end[axes[k]] = pads[k + na];
  }
  for (int i = 0; i < r; i++) {
    dims[i] = x->dims[i] + p->begin[i] + end[i];
    if (dims[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "pads %lld, %lld on axis %d of size %lld give a negative "
                       "size", (long long)p->begin[i], (long long)end[i], i,
                       (long long)x->dims[i]);
    if (p->mode != PAD_CONSTANT && x->dims[i] == 0 && dims[i] > 0)
      return wt_errorf(WT_ERR_SHAPE, "mode '%s' cannot pad axis %d of size 0", mode, i);
  }
  wt_set_shape(&ctx->out[0], x->dtype, r, dims);
  return WT_OK;
}

/* ---- Trilu ------------------------------------------------------------------------------ */

static int trilu_infer(wt_infer_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  if (x->rank < 2)
    return wt_errorf(WT_ERR_SHAPE, "input has rank %d; expected rank >= 2", x->rank);
  if (wt_has_input(ctx->in, ctx->n_in, 1)) {
    WT_TRY(wt_su_index_dtype(ctx, 1, "k"));
    if (wt_numel(&ctx->in[1]) != 1)
      return wt_errorf(WT_ERR_SHAPE, "input 'k' has %lld elements; expected a scalar",
                       (long long)wt_numel(&ctx->in[1]));
  }
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, x->dims);
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* Slice: SliceGrad(dY, Shape(X), starts, ends[, axes[, steps]]) (ONNX Runtime's form; before
 * opset 10 the attribute lists become constants). */
static int slice_grad(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  int ins[6] = {GO(0), -1, -1, -1, -1, -1}, n_in = 2;
  if (c->opset < 10) {
    static const char *const names[3] = {"starts", "ends", "axes"};
    int64_t v[3][WT_MAX_RANK];
    int cnt[3];
    for (int k = 0; k < 3; k++) {
      const int64_t *p;
      cnt[k] = wt_attr_ints(wt_grad_node(c), names[k], &p);
      if (cnt[k] > WT_MAX_RANK) return wt_grad_fail(c, WT_ERR_INVALID_ARG, "too many %s", names[k]);
      if (cnt[k] > 0) memcpy(v[k], p, sizeof *p * (size_t)cnt[k]);
    }
    for (int k = 0; k < 3; k++)
      if (cnt[k] >= 0) ins[n_in++] = wt_grad_const_i64s(c, v[k], cnt[k]);
  } else {
    for (int k = 1; k < n->n_inputs; k++) ins[n_in++] = I(k);
  }
  ins[1] = wt_grad_op1(c, "Shape", "", 1, (int[]){I(0)});
  wt_grad_set(c, 0, wt_grad_op1(c, "SliceGrad", WT_MS, n_in, ins));
  return wt_grad_status(c);
}

/* Pad (constant mode, as in ONNX Runtime): dX = Pad(dY, -pads), which crops. A differentiable
 * constant_value gets sum(dY) - sum(dX), the part of dY that fell on padding. */
static int pad_grad(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  const char *mode = wt_attr_string(n, "mode", "constant");
  if (strcmp(mode, "constant") != 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "Pad's gradient supports mode 'constant' only "
                        "(this node has mode '%s')", mode);
  int64_t pads[2 * WT_MAX_RANK];
  int np, dx;
  if (c->opset < 11) {
    const int64_t *p;
    np = wt_attr_ints(n, "pads", &p);
    if (np < 0) np = wt_attr_ints(n, "paddings", &p);
    if (np < 0 || np > 2 * WT_MAX_RANK)
      return wt_grad_fail(c, WT_ERR_INVALID_ARG, "attribute 'pads' is missing or too long");
    for (int i = 0; i < np; i++) pads[i] = -p[i];
    dx = wt_grad_op1(c, "Pad", "", 1, (int[]){GO(0)});
    if (dx >= 0) wt_grad_attr_ints(c, wt_grad_last(c), "pads", pads, np);
  } else {
    int axes = n->n_inputs > 3 ? I(3) : -1, neg;
    np = wt_grad_const_ints(c, I(1), pads, 2 * WT_MAX_RANK);
    if (np >= 0) {
      for (int i = 0; i < np; i++) pads[i] = -pads[i];
      neg = wt_grad_const_i64s(c, pads, np);
    } else {
      neg = wt_grad_op1(c, "Neg", "", 1, (int[]){I(1)});
    }
    dx = wt_grad_op1(c, "Pad", "", axes >= 0 ? 4 : 2, (int[]){GO(0), neg, -1, axes});
  }
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, dx);
  if (wt_grad_need(c, 2)) {
    int sy = wt_grad_op1(c, "ReduceSum", "", 1, (int[]){GO(0)});
    if (sy >= 0) wt_grad_attr_int(c, wt_grad_last(c), "keepdims", 0);
    int sx = wt_grad_op1(c, "ReduceSum", "", 1, &dx);
    if (sx >= 0) wt_grad_attr_int(c, wt_grad_last(c), "keepdims", 0);
    int d = wt_grad_op1(c, "Sub", "", 2, (int[]){sy, sx});
    wt_grad_set(c, 2, wt_grad_reshape_like(c, d, I(2)));
  }
  return wt_grad_status(c);
}

/* Trilu: dX = Trilu(dY[, k]) with the same 'upper', emitted as com.microsoft Trilu like ONNX
 * Runtime. */
static int trilu_grad(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  int64_t upper = wt_attr_int(n, "upper", 1);
  int k = n->n_inputs > 1 ? I(1) : -1;
  int d = wt_grad_op1(c, "Trilu", WT_MS, k >= 0 ? 2 : 1, (int[]){GO(0), k});
  if (d >= 0) wt_grad_attr_int(c, wt_grad_last(c), "upper", upper);
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}


static const wt_op_def wt_op_Slice = {.domain = "", .op_type = "Slice", .min_inputs = 1, .max_inputs = 5,
                               .min_outputs = 1, .max_outputs = 1, .infer = slice_infer, .grad = slice_grad};
static const wt_op_def wt_op_Pad = {.domain = "", .op_type = "Pad", .min_inputs = 1, .max_inputs = 4,
                             .min_outputs = 1, .max_outputs = 1, .infer = pad_infer, .grad = pad_grad};
static const wt_op_def wt_op_Trilu = {.domain = "", .op_type = "Trilu", .min_inputs = 1, .max_inputs = 2,
                               .min_outputs = 1, .max_outputs = 1, .infer = trilu_infer, .grad = trilu_grad};
static const wt_op_def wt_op_ms_SliceGrad = {.domain = WT_MS, .op_type = "SliceGrad", .min_inputs = 4,
                                      .max_inputs = 6, .min_outputs = 1, .max_outputs = 1,
                                      .infer = slice_grad_op_infer,
                                      .flags = WT_OP_GRADIENT};
static const wt_op_def wt_op_ms_Trilu = {.domain = WT_MS, .op_type = "Trilu", .min_inputs = 1,
                                  .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                  .infer = trilu_infer, .grad = trilu_grad};

/* Defined in data_index.c; one table keeps registry.c's family list unchanged. */

const wt_op_def *const wt_ops_data[] = {
    &wt_op_Slice, &wt_op_Pad, &wt_op_Trilu, &wt_op_ms_SliceGrad, &wt_op_ms_Trilu, NULL,
};
