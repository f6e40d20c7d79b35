/* Op family: shape (part 2, its own table wt_ops_shape_build). Ops that assemble or create tensors:
 * Concat, Split, Constant, ConstantOfShape, Range, and the Concat / Split gradient rules.
 * Data movement works on element size. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/shape_build_params.h"
#include "ops/shape_util.h"

/* ---- Concat / Split --------------------------------------------------------------------- */

/* An input of shape [0] next to higher-rank inputs: exporters emit these; it adds nothing. */
static int legacy_empty(const wt_tensor *t, int rank) {
  return t->rank == 1 && t->dims[0] == 0 && rank != 1;
}

static int concat_infer(wt_infer_ctx *ctx) {
  axis_params *p = WT_PARAMS(ctx, axis_params);
  const wt_attr *a = wt_node_attr(ctx->node, "axis");
  if (!a && ctx->opset >= 4) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axis' is required");
  int64_t axis = a ? a->i : 1;
  int ref = 0;
  for (int i = 0; i < ctx->n_in; i++)
    if (!(ctx->in[i].rank == 1 && ctx->in[i].dims[0] == 0)) {
      ref = i;
      break;
    }
  const wt_tensor *r = &ctx->in[ref];
  if (!wt_su_elem(ctx, ref)) return WT_ERR_UNSUPPORTED;
  int ax = wt_axis(axis, r->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axis' = %lld is out of range for rank %d",
                     (long long)axis, r->rank);
  int64_t dims[WT_MAX_RANK];
  for (int k = 0; k < r->rank; k++) dims[k] = r->dims[k];
  dims[ax] = 0;
  char s1[160], s2[160];
  for (int i = 0; i < ctx->n_in; i++) {
    const wt_tensor *t = &ctx->in[i];
    if (t->dtype != r->dtype)
      return wt_errorf(WT_ERR_SHAPE, "input %d has dtype %s; expected %s like input %d", i,
                       wt_dtype_name(t->dtype), wt_dtype_name(r->dtype), ref);
    if (legacy_empty(t, r->rank)) continue;
    int bad = t->rank != r->rank;
    for (int k = 0; k < r->rank && !bad; k++) bad = k != ax && t->dims[k] != r->dims[k];
    if (bad)
      return wt_errorf(WT_ERR_SHAPE, "input %d has shape %s; expected %s except on axis %d", i,
                       wt_shape_str(t->rank, t->dims, s1, sizeof s1),
                       wt_shape_str(r->rank, r->dims, s2, sizeof s2), ax);
    dims[ax] += t->dims[ax];
  }
  p->axis = ax;
  wt_set_shape(&ctx->out[0], r->dtype, r->rank, dims);
  return WT_OK;
}

static int split_infer(wt_infer_ctx *ctx) {
  axis_params *p = WT_PARAMS(ctx, axis_params);
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t axis = wt_attr_int(ctx->node, "axis", 0);
  int ax = wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axis' = %lld is out of range for rank %d",
                     (long long)axis, x->rank);
  int64_t split[64];
  int n = -1, nout = ctx->n_out;
  if (nout > 64) return wt_errorf(WT_ERR_UNSUPPORTED, "%d outputs; at most 64 supported", nout);
  if (ctx->opset < 13) {
    const int64_t *sp;
    n = wt_attr_ints(ctx->node, "split", &sp);
    if (n > 64) return wt_errorf(WT_ERR_UNSUPPORTED, "attribute 'split' has too many values");
    if (n > 0) memcpy(split, sp, sizeof *sp * (size_t)n);
  } else if (wt_has_input(ctx->in, ctx->n_in, 1)) {
    WT_TRY(wt_su_known_ints(ctx, 1, "split", 64, split, &n));
  }
  int64_t d = x->dims[ax];
  if (n >= 0) {
    if (n != nout)
      return wt_errorf(WT_ERR_SHAPE, "'split' has %d values; expected %d (the number of outputs)",
                       n, nout);
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
      if (split[i] < 0)
        return wt_errorf(WT_ERR_SHAPE, "'split' has negative value %lld", (long long)split[i]);
      sum += split[i];
    }
    if (sum != d)
      return wt_errorf(WT_ERR_SHAPE, "'split' sums to %lld; expected %lld (size of axis %d)",
                       (long long)sum, (long long)d, ax);
  } else if (ctx->opset >= 18 && wt_node_attr(ctx->node, "num_outputs")) {
    int64_t chunk = (d + nout - 1) / nout;
    for (int i = 0; i < nout; i++) {
      int64_t rest = d - chunk * i;
      split[i] = rest < 0 ? 0 : rest < chunk ? rest : chunk;
    }
  } else {
    if (d % nout != 0)
      return wt_errorf(WT_ERR_SHAPE, "axis %d of size %lld cannot be split into %d equal parts",
                       ax, (long long)d, nout);
    for (int i = 0; i < nout; i++) split[i] = d / nout;
  }
  for (int i = 0; i < nout; i++) {
    wt_set_shape(&ctx->out[i], x->dtype, x->rank, x->dims);
    ctx->out[i].dims[ax] = split[i];
  }
  p->axis = ax;
  return WT_OK;
}

/* ---- Constant / ConstantOfShape --------------------------------------------------------- */

static const char *const const_attrs[] = {"value", "value_float", "value_floats", "value_int",
                                          "value_ints", "value_string", "value_strings",
                                          "sparse_value"};

static int constant_infer(wt_infer_ctx *ctx) {
  const wt_attr *a = NULL;
  int found = 0;
  for (size_t k = 0; k < sizeof const_attrs / sizeof const_attrs[0]; k++) {
    const wt_attr *b = wt_node_attr(ctx->node, const_attrs[k]);
    if (b) {
      a = b;
      found++;
    }
  }
  if (found != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "expected exactly one of the attributes value, "
                     "value_float, value_floats, value_int, value_ints; found %d", found);
  wt_tensor *y = &ctx->out[0];
  if (strcmp(a->name, "value") == 0) {
    if (a->type != WT_ATTR_TENSOR || !a->t)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'value' is not a tensor");
    if (!wt_dtype_supported(a->t->t.dtype))
      return wt_errorf(WT_ERR_UNSUPPORTED, "attribute 'value' has dtype %s; supported: float, "
                       "int32, int64, bool", wt_dtype_name(a->t->t.dtype));
    wt_set_shape(y, a->t->t.dtype, a->t->t.rank, a->t->t.dims);
  } else if (strcmp(a->name, "value_float") == 0) {
    if (a->type != WT_ATTR_FLOAT) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'value_float' is not a float");
    wt_set_shape(y, WT_FLOAT, 0, NULL);
  } else if (strcmp(a->name, "value_int") == 0) {
    if (a->type != WT_ATTR_INT) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'value_int' is not an int");
    wt_set_shape(y, WT_INT64, 0, NULL);
  } else if (strcmp(a->name, "value_floats") == 0 || strcmp(a->name, "value_ints") == 0) {
    int floats = a->name[6] == 'f';
    if (a->type != (floats ? WT_ATTR_FLOATS : WT_ATTR_INTS))
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute '%s' is not a list of %s", a->name, floats ? "floats" : "ints");
    int64_t n = a->n;
    wt_set_shape(y, floats ? WT_FLOAT : WT_INT64, 1, &n);
  } else {
    return wt_errorf(WT_ERR_UNSUPPORTED, "attribute '%s' is not supported (string and sparse "
                     "constants have no webtrain dtype)", a->name);
  }
  return WT_OK;
}

static int cos_infer(wt_infer_ctx *ctx) {
  cos_params *p = WT_PARAMS(ctx, cos_params);
  int64_t dims[WT_MAX_RANK];
  int n;
  WT_TRY(wt_su_known_ints(ctx, 0, "input", WT_MAX_RANK, dims, &n));
  for (int i = 0; i < n; i++)
    if (dims[i] < 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'input' has negative dim %lld at position %d",
                       (long long)dims[i], i);
  int dtype = WT_FLOAT;
  const wt_attr *a = wt_node_attr(ctx->node, "value");
  if (a) {
    if (a->type != WT_ATTR_TENSOR || !a->t)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'value' is not a tensor");
    const wt_tensor *v = &a->t->t;
    if (!wt_dtype_supported(v->dtype))
      return wt_errorf(WT_ERR_UNSUPPORTED, "attribute 'value' has dtype %s; supported: float, "
                       "int32, int64, bool", wt_dtype_name(v->dtype));
    if (wt_numel(v) != 1 || !v->data)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'value' has %lld elements; expected 1",
                       (long long)wt_numel(v));
    dtype = v->dtype;
    memcpy(p->value, v->data, wt_dtype_size(dtype));
  }
  wt_set_shape(&ctx->out[0], dtype, n, dims);
  return WT_OK;
}

/* ---- Range ------------------------------------------------------------------------------ */

static int range_infer(wt_infer_ctx *ctx) {
  range_params *p = WT_PARAMS(ctx, range_params);
  static const char *const names[3] = {"start", "limit", "delta"};
  int dt = ctx->in[0].dtype;
  if (dt != WT_FLOAT && dt != WT_INT32 && dt != WT_INT64)
    return wt_errorf(WT_ERR_UNSUPPORTED, "input 'start' has dtype %s; expected float, int32 or "
                     "int64", wt_dtype_name(dt));
  const wt_tensor *v[3];
  for (int i = 0; i < 3; i++) {
    if (ctx->in[i].dtype != dt)
      return wt_errorf(WT_ERR_SHAPE, "input '%s' has dtype %s; expected %s like 'start'", names[i],
                       wt_dtype_name(ctx->in[i].dtype), wt_dtype_name(dt));
    if (wt_numel(&ctx->in[i]) != 1)
      return wt_errorf(WT_ERR_SHAPE, "input '%s' has %lld elements; expected a scalar", names[i],
                       (long long)wt_numel(&ctx->in[i]));
    v[i] = wt_infer_value(ctx, i);
    if (!v[i] || !v[i]->data)
      return wt_errorf(WT_ERR_UNSUPPORTED, "shape input '%s' (index %d) must be known before the "
                       "run (a constant or computed from shapes)", names[i], i);
  }
  int64_t n;
  if (dt == WT_FLOAT) {
    double s = wt_get_double(v[0], 0), l = wt_get_double(v[1], 0), d = wt_get_double(v[2], 0);
    if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
      return wt_errorf(WT_ERR_INVALID_ARG, "start %g, limit %g, delta %g do not give a finite "
                       "range", s, l, d);
    double c = ceil((l - s) / d);
    if (c > 1e12) return wt_errorf(WT_ERR_INVALID_ARG, "range of %g elements is too large", c);
    n = c > 0 ? (int64_t)c : 0;
    p->fstart = s;
    p->fdelta = d;
  } else {
    int64_t s = wt_get_int(v[0], 0), l = wt_get_int(v[1], 0), d = wt_get_int(v[2], 0);
    if (d == 0) return wt_errorf(WT_ERR_INVALID_ARG, "input 'delta' is 0");
    int64_t diff;
    if (__builtin_sub_overflow(l, s, &diff) || diff == INT64_MIN)
      return wt_errorf(WT_ERR_INVALID_ARG, "range from %lld to %lld is too large", (long long)s,
                       (long long)l);
    if (d > 0) n = diff <= 0 ? 0 : (diff - 1) / d + 1;
    else n = diff >= 0 ? 0 : (-diff - 1) / -d + 1;
    p->istart = s;
    p->idelta = d;
  }
  wt_set_shape(&ctx->out[0], dt, 1, &n);
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* Concat: dY split back along the axis with the input sizes — constants when every size is
 * fixed, else (opset >= 13, ONNX Runtime's form) read from Shape(X_i), which the planner folds,
 * so symbolic batch dims off the axis and symbolic sizes on it both work. */
static int concat_grad(wt_grad_ctx *c) {
  const wt_node *n = wt_grad_node(c);
  int nin = n->n_inputs, rank = wt_grad_value(c, O(0))->rank;
  if (nin > 64) return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "%d inputs; at most 64 supported", nin);
  if (rank < 1) return wt_grad_fail(c, WT_ERR_SHAPE, "the rank of the output must be known");
  const wt_attr *a = wt_node_attr(n, "axis");
  int64_t axis = a ? a->i : 1;
  int ax = (int)(axis < 0 ? axis + rank : axis);
  if (ax < 0 || ax >= rank) return wt_grad_fail(c, WT_ERR_INVALID_ARG, "axis %lld out of range", (long long)axis);
  int64_t sizes[64];
  int fixed = 1;
  for (int i = 0; i < nin; i++) {
    const wt_value *v = wt_grad_value(c, I(i));
    if (v->rank != rank)
      return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "input %d ('%s') has rank %d, not the output's %d "
                          "(legacy empty inputs have no gradient rule)", i, v->name, v->rank, rank);
    sizes[i] = v->dims[ax];
    if (sizes[i] < 0) fixed = 0;
  }
  int ins[2] = {GO(0), -1}, outs[64];
  if (!fixed) {
    if (c->opset < 13)
      return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "symbolic sizes along the concat axis need "
                          "opset >= 13 (Split's sizes input)");
    int idx = wt_grad_const_i64s(c, (int64_t[]){ax}, 1), parts[64];
    for (int i = 0; i < nin; i++) {
      int shape = wt_grad_op1(c, "Shape", "", 1, (int[]){I(i)});
      parts[i] = wt_grad_op1(c, "Gather", "", 2, (int[]){shape, idx});
      if (parts[i] >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", 0);
    }
    ins[1] = wt_grad_op1(c, "Concat", "", nin, parts);
    if (ins[1] >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", 0);
  } else if (c->opset >= 13) {
    ins[1] = wt_grad_const_i64s(c, sizes, nin);
  }
  int node = wt_grad_op(c, "Split", "", ins[1] >= 0 ? 2 : 1, ins, nin, outs);
  if (node < 0) return wt_grad_status(c);
  wt_grad_attr_int(c, node, "axis", ax);
  if (ins[1] < 0) wt_grad_attr_ints(c, node, "split", sizes, nin);
  for (int i = 0; i < nin; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, outs[i]);
  return wt_grad_status(c);
}

/* Split: dX = Concat of the output gradients along the axis; an output without a gradient
 * contributes zeros of its shape. */
static int split_grad(wt_grad_ctx *c) {
  int n = c->n_go, parts[64];
  if (n > 64) return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "%d outputs; at most 64 supported", n);
  for (int i = 0; i < n; i++) {
    parts[i] = GO(i);
    if (parts[i] >= 0) continue;
    if (O(i) < 0) return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "output %d is omitted", i);
    parts[i] = wt_grad_fill_like(c, O(i), 0.0f);
  }
  int d = wt_grad_op1(c, "Concat", "", n, parts);
  if (d >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", wt_attr_int(wt_grad_node(c), "axis", 0));
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}


static const wt_op_def wt_op_Concat = {.domain = "", .op_type = "Concat", .min_inputs = 1,
                                .max_inputs = 1 << 20, .min_outputs = 1, .max_outputs = 1,
                                .infer = concat_infer, .grad = concat_grad};
static const wt_op_def wt_op_Split = {.domain = "", .op_type = "Split", .min_inputs = 1, .max_inputs = 2,
                               .min_outputs = 1, .max_outputs = 64, .infer = split_infer, .grad = split_grad};
static const wt_op_def wt_op_Constant = {.domain = "", .op_type = "Constant", .min_inputs = 0,
                                  .max_inputs = 0, .min_outputs = 1, .max_outputs = 1,
                                  .infer = constant_infer};
static const wt_op_def wt_op_ConstantOfShape = {.domain = "", .op_type = "ConstantOfShape",
                                         .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
                                         .max_outputs = 1, .infer = cos_infer};
static const wt_op_def wt_op_Range = {.domain = "", .op_type = "Range", .min_inputs = 3, .max_inputs = 3,
                               .min_outputs = 1, .max_outputs = 1, .infer = range_infer};

const wt_op_def *const wt_ops_shape_build[] = {
    &wt_op_Concat, &wt_op_Split, &wt_op_Constant, &wt_op_ConstantOfShape, &wt_op_Range, NULL,
};
