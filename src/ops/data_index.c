/* Op family: data (part 2, its own table wt_ops_data_index). Indexed reads and writes: Gather,
 * GatherElements, GatherND, ScatterElements (and its deprecated alias Scatter), ScatterND, their
 * gradient rules and the scatter-add gradient ops com.microsoft GatherGrad, GatherElementsGrad,
 * GatherNDGrad. Every index is bounds-checked at run time; negative indices count from the end. */
#include <assert.h>
#include <string.h>

#include "base/half.h"
#include "grad/grad.h"
#include "ops/op.h"
#include "ops/data_index_params.h"
#include "ops/shape_util.h"

static int parse_reduction(wt_infer_ctx *ctx, int dtype, int *out) {
  const char *r = ctx->opset >= 16 ? wt_attr_string(ctx->node, "reduction", "none") : "none";
  if (strcmp(r, "none") == 0) *out = RED_NONE;
  else if (strcmp(r, "add") == 0) *out = RED_ADD;
  else if (strcmp(r, "mul") == 0) *out = RED_MUL;
  else if (strcmp(r, "max") == 0 && ctx->opset >= 18) *out = RED_MAX;
  else if (strcmp(r, "min") == 0 && ctx->opset >= 18) *out = RED_MIN;
  else return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'reduction' = '%s'; expected none, add or "
                        "mul", r);
  if (*out != RED_NONE && dtype == WT_BOOL)
    return wt_errorf(WT_ERR_UNSUPPORTED, "reduction '%s' on bool data is not supported", r);
  return WT_OK;
}

static int get_axis(wt_infer_ctx *ctx, int rank, int *out) {
  int64_t axis = wt_attr_int(ctx->node, "axis", 0);
  *out = wt_axis(axis, rank);
  if (*out < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axis' = %lld is out of range for rank %d",
                     (long long)axis, rank);
  return WT_OK;
}

/* ---- Gather ----------------------------------------------------------------------------- */

static int gather_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  WT_TRY(wt_su_index_dtype(ctx, 1, "indices"));
  if (x->rank < 1) return wt_errorf(WT_ERR_SHAPE, "input 'data' is a scalar; expected rank >= 1");
  WT_TRY(get_axis(ctx, x->rank, &p->axis));
  int r = x->rank - 1 + ind->rank;
  if (r > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "output rank %d exceeds the maximum %d", r, WT_MAX_RANK);
  int64_t dims[WT_MAX_RANK];
  int k = 0;
  for (int i = 0; i < p->axis; i++) dims[k++] = x->dims[i];
  for (int i = 0; i < ind->rank; i++) dims[k++] = ind->dims[i];
  for (int i = p->axis + 1; i < x->rank; i++) dims[k++] = x->dims[i];
  p->widen = x->dtype == WT_FLOAT16; /* a float16 frozen embedding (half_inputs) */
  wt_set_shape(&ctx->out[0], p->widen ? WT_FLOAT : x->dtype, r, dims);
  return WT_OK;
}

/* ---- GatherElements / ScatterElements --------------------------------------------------- */

/* The element ops' indices fit x (called `what`): x's rank, no longer than x but along axis. */
static int indices_fit(const wt_tensor *ind, const wt_tensor *x, int axis, const char *what) {
  char a[160], b[160];
  wt_shape_str(ind->rank, ind->dims, a, sizeof a);
  wt_shape_str(x->rank, x->dims, b, sizeof b);
  if (ind->rank != x->rank)
    return wt_errorf(WT_ERR_SHAPE, "'indices' %s must have the rank of %s %s", a, what, b);
  for (int i = 0; i < x->rank; i++)
    if (i != axis && ind->dims[i] > x->dims[i])
      return wt_errorf(WT_ERR_SHAPE, "'indices' %s exceeds %s %s on axis %d", a, what, b, i);
  return WT_OK;
}

/* Checks that indices (input ii) and updates (input ui, or -1) fit data for the element ops. */
static int elements_check(wt_infer_ctx *ctx, int ii, int ui) {
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[ii];
  index_params *p = WT_PARAMS(ctx, index_params);
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  WT_TRY(wt_su_index_dtype(ctx, ii, "indices"));
  if (x->rank < 1) return wt_errorf(WT_ERR_SHAPE, "input 'data' is a scalar; expected rank >= 1");
  WT_TRY(get_axis(ctx, x->rank, &p->axis));
  WT_TRY(indices_fit(ind, x, p->axis, "'data'"));
  if (ui >= 0) {
    const wt_tensor *u = &ctx->in[ui];
    char a[160], b[160];
    wt_shape_str(ind->rank, ind->dims, a, sizeof a);
    if (u->dtype != x->dtype)
      return wt_errorf(WT_ERR_SHAPE, "'updates' has dtype %s; expected %s like 'data'",
                       wt_dtype_name(u->dtype), wt_dtype_name(x->dtype));
    if (!wt_same_shape(u, ind))
      return wt_errorf(WT_ERR_SHAPE, "'updates' %s must have the shape of 'indices' %s",
                       wt_shape_str(u->rank, u->dims, b, sizeof b), a);
  }
  return WT_OK;
}

static int gather_elements_infer(wt_infer_ctx *ctx) {
  WT_TRY(elements_check(ctx, 1, -1));
  wt_set_shape(&ctx->out[0], ctx->in[0].dtype, ctx->in[1].rank, ctx->in[1].dims);
  return WT_OK;
}

static int scatter_elements_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  WT_TRY(elements_check(ctx, 1, 2));
  WT_TRY(parse_reduction(ctx, ctx->in[0].dtype, &p->reduction));
  wt_set_shape(&ctx->out[0], ctx->in[0].dtype, ctx->in[0].rank, ctx->in[0].dims);
  return WT_OK;
}

/* ---- GatherND / ScatterND --------------------------------------------------------------- */

/* GatherND's output shape for data x, indices ind and batch_dims b (also checked by GatherNDGrad). */
static int nd_shape(const wt_tensor *x, const wt_tensor *ind, int64_t b, int *orank, int64_t *dims) {
  int r = x->rank, q = ind->rank;
  if (r < 1 || q < 1)
    return wt_errorf(WT_ERR_SHAPE, "'data' (rank %d) and 'indices' (rank %d) must have rank >= 1",
                     r, q);
  if (b < 0 || b >= r || b >= q)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'batch_dims' = %lld; expected [0, %d)",
                     (long long)b, (r < q ? r : q));
  int64_t last = ind->dims[q - 1];
  if (last < 1 || last > r - b)
    return wt_errorf(WT_ERR_SHAPE, "last dim of 'indices' is %lld; expected [1, %lld]",
                     (long long)last, (long long)(r - b));
  for (int i = 0; i < b; i++)
    if (ind->dims[i] != x->dims[i])
      return wt_errorf(WT_ERR_SHAPE, "batch dim %d differs: 'data' %lld, 'indices' %lld", i,
                       (long long)x->dims[i], (long long)ind->dims[i]);
  *orank = q - 1 + r - (int)b - (int)last;
  if (*orank > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "output rank %d exceeds the maximum %d", *orank,
                     WT_MAX_RANK);
  int k = 0;
  for (int i = 0; i < q - 1; i++) dims[k++] = ind->dims[i];
  for (int i = (int)(b + last); i < r; i++) dims[k++] = x->dims[i];
  return WT_OK;
}

static int gather_nd_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  if (ind->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 'indices' has dtype %s; expected int64",
                     wt_dtype_name(ind->dtype));
  int64_t b = ctx->opset >= 12 ? wt_attr_int(ctx->node, "batch_dims", 0) : 0;
  int64_t dims[WT_MAX_RANK];
  int orank;
  WT_TRY(nd_shape(x, ind, b, &orank, dims));
  p->axis = (int)b;
  wt_set_shape(&ctx->out[0], x->dtype, orank, dims);
  return WT_OK;
}

static int scatter_nd_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  const wt_tensor *x = &ctx->in[0], *ind = &ctx->in[1], *u = &ctx->in[2];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  if (ind->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 'indices' has dtype %s; expected int64",
                     wt_dtype_name(ind->dtype));
  if (u->dtype != x->dtype)
    return wt_errorf(WT_ERR_SHAPE, "'updates' has dtype %s; expected %s like 'data'",
                     wt_dtype_name(u->dtype), wt_dtype_name(x->dtype));
  int r = x->rank, q = ind->rank;
  if (r < 1 || q < 1)
    return wt_errorf(WT_ERR_SHAPE, "'data' (rank %d) and 'indices' (rank %d) must have rank >= 1",
                     r, q);
  int64_t last = ind->dims[q - 1];
  if (last < 1 || last > r)
    return wt_errorf(WT_ERR_SHAPE, "last dim of 'indices' is %lld; expected [1, %d]",
                     (long long)last, r);
  int64_t want[2 * WT_MAX_RANK];
  int k = 0;
  for (int i = 0; i < q - 1; i++) want[k++] = ind->dims[i];
  for (int i = (int)last; i < r; i++) want[k++] = x->dims[i];
  int bad = u->rank != k;
  for (int i = 0; i < k && !bad; i++) bad = u->dims[i] != want[i];
  if (bad) {
    char a[160], b[160];
    return wt_errorf(WT_ERR_SHAPE, "'updates' has shape %s; expected %s",
                     wt_shape_str(u->rank, u->dims, a, sizeof a), wt_shape_str(k, want, b, sizeof b));
  }
  WT_TRY(parse_reduction(ctx, x->dtype, &p->reduction));
  wt_set_shape(&ctx->out[0], x->dtype, r, x->dims);
  return WT_OK;
}

/* ---- gradient ops (com.microsoft): zeros of the data shape, dY scatter-added ------------- */

/* Reads the data shape (input i, known at plan time) into *x as a float tensor description. */
static int grad_shape(wt_infer_ctx *ctx, int i, int dy, wt_tensor *x) {
  WT_TRY(wt_expect_float(&ctx->in[dy], "dY", dy));
  *x = (wt_tensor){.dtype = WT_FLOAT};
  WT_TRY(wt_su_known_ints(ctx, i, "shape", WT_MAX_RANK, x->dims, &x->rank));
  for (int k = 0; k < x->rank; k++)
    if (x->dims[k] < 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'shape' has negative value %lld", (long long)x->dims[k]);
  if (x->rank < 1) return wt_errorf(WT_ERR_SHAPE, "input 'shape' is empty; expected rank >= 1");
  return WT_OK;
}

static int check_dy(const wt_tensor *dy, int rank, const int64_t *dims) {
  if (dy->rank == rank && (rank == 0 || memcmp(dy->dims, dims, sizeof(int64_t) * (size_t)rank) == 0))
    return WT_OK;
  char a[160], b[160];
  return wt_errorf(WT_ERR_SHAPE, "input 'dY' has shape %s; expected %s",
                   wt_shape_str(dy->rank, dy->dims, a, sizeof a), wt_shape_str(rank, dims, b, sizeof b));
}

/* GatherGrad(shape, indices, dY), attribute axis. */
static int gather_grad_op_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  const wt_tensor *ind = &ctx->in[1];
  wt_tensor x;
  WT_TRY(grad_shape(ctx, 0, 2, &x));
  WT_TRY(wt_su_index_dtype(ctx, 1, "indices"));
  WT_TRY(get_axis(ctx, x.rank, &p->axis));
  int r = x.rank - 1 + ind->rank;
  if (r > WT_MAX_RANK)
    return wt_errorf(WT_ERR_UNSUPPORTED, "rank %d exceeds the maximum %d", r, WT_MAX_RANK);
  int64_t dims[WT_MAX_RANK];
  int k = 0;
  for (int i = 0; i < p->axis; i++) dims[k++] = x.dims[i];
  for (int i = 0; i < ind->rank; i++) dims[k++] = ind->dims[i];
  for (int i = p->axis + 1; i < x.rank; i++) dims[k++] = x.dims[i];
  WT_TRY(check_dy(&ctx->in[2], r, dims));
  wt_set_shape(&ctx->out[0], WT_FLOAT, x.rank, x.dims);
  return WT_OK;
}

/* GatherElementsGrad(dY, shape, indices), attribute axis. */
static int gather_elements_grad_op_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  const wt_tensor *ind = &ctx->in[2];
  wt_tensor x;
  WT_TRY(grad_shape(ctx, 1, 0, &x));
  WT_TRY(wt_su_index_dtype(ctx, 2, "indices"));
  WT_TRY(get_axis(ctx, x.rank, &p->axis));
  WT_TRY(indices_fit(ind, &x, p->axis, "the data shape"));
  WT_TRY(check_dy(&ctx->in[0], ind->rank, ind->dims));
  wt_set_shape(&ctx->out[0], WT_FLOAT, x.rank, x.dims);
  return WT_OK;
}

/* GatherNDGrad(shape, indices, update), attribute batch_dims. */
static int gather_nd_grad_op_infer(wt_infer_ctx *ctx) {
  index_params *p = WT_PARAMS(ctx, index_params);
  const wt_tensor *ind = &ctx->in[1];
  wt_tensor x;
  WT_TRY(grad_shape(ctx, 0, 2, &x));
  if (ind->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 'indices' has dtype %s; expected int64",
                     wt_dtype_name(ind->dtype));
  int64_t b = wt_attr_int(ctx->node, "batch_dims", 0), dims[WT_MAX_RANK];
  int orank;
  WT_TRY(nd_shape(&x, ind, b, &orank, dims));
  WT_TRY(check_dy(&ctx->in[2], orank, dims));
  p->axis = (int)b;
  wt_set_shape(&ctx->out[0], WT_FLOAT, x.rank, x.dims);
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* Gather: GatherGrad(Shape(X), indices, dY) with the same axis (ONNX Runtime's form). */
static int gather_grad(wt_grad_ctx *c) {
  int64_t axis = wt_attr_int(wt_grad_node(c), "axis", 0);
  int shape = wt_grad_op1(c, "Shape", "", 1, (int[]){I(0)});
  int d = wt_grad_op1(c, "GatherGrad", WT_MS, 3, (int[]){shape, I(1), GO(0)});
  if (d >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", axis);
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}

/* GatherElements: GatherElementsGrad(dY, Shape(X), indices) with the same axis. */
static int gather_elements_grad(wt_grad_ctx *c) {
  int64_t axis = wt_attr_int(wt_grad_node(c), "axis", 0);
  int shape = wt_grad_op1(c, "Shape", "", 1, (int[]){I(0)});
  int d = wt_grad_op1(c, "GatherElementsGrad", WT_MS, 3, (int[]){GO(0), shape, I(1)});
  if (d >= 0) wt_grad_attr_int(c, wt_grad_last(c), "axis", axis);
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}

/* GatherND: GatherNDGrad(Shape(X), indices, dY) with the same batch_dims. */
static int gather_nd_grad(wt_grad_ctx *c) {
  int64_t b = c->opset >= 12 ? wt_attr_int(wt_grad_node(c), "batch_dims", 0) : 0;
  int shape = wt_grad_op1(c, "Shape", "", 1, (int[]){I(0)});
  int d = wt_grad_op1(c, "GatherNDGrad", WT_MS, 3, (int[]){shape, I(1), GO(0)});
  if (d >= 0) wt_grad_attr_int(c, wt_grad_last(c), "batch_dims", b);
  wt_grad_set(c, 0, d);
  return wt_grad_status(c);
}

/* ScatterElements / ScatterND (ONNX Runtime's form): d data = dY with the scattered positions
 * zeroed (reduction 'none'; unchanged for 'add'), d updates = the matching gather of dY. */
static int scatter_grad(wt_grad_ctx *c, int nd) {
  const wt_node *n = wt_grad_node(c);
  const char *red = c->opset >= 16 ? wt_attr_string(n, "reduction", "none") : "none";
  int add = strcmp(red, "add") == 0;
  if (!add && strcmp(red, "none") != 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "no gradient for reduction '%s' (only none and add)", red);
  int64_t axis = wt_attr_int(n, "axis", 0);
  if (wt_grad_need(c, 0)) {
    int d = GO(0);
    if (!add) {
      int zeros = wt_grad_fill_like(c, I(2), 0.0f);
      d = wt_grad_op1(c, nd ? "ScatterND" : "ScatterElements", "", 3, (int[]){GO(0), I(1), zeros});
      if (d >= 0 && !nd) wt_grad_attr_int(c, wt_grad_last(c), "axis", axis);
    }
    wt_grad_set(c, 0, d);
  }
  if (wt_grad_need(c, 2)) {
    int d = wt_grad_op1(c, nd ? "GatherND" : "GatherElements", "", 2, (int[]){GO(0), I(1)});
    if (d >= 0 && !nd) wt_grad_attr_int(c, wt_grad_last(c), "axis", axis);
    wt_grad_set(c, 2, d);
  }
  return wt_grad_status(c);
}
static int scatter_elements_grad(wt_grad_ctx *c) { return scatter_grad(c, 0); }
static int scatter_nd_grad(wt_grad_ctx *c) { return scatter_grad(c, 1); }


static const wt_op_def wt_op_Gather = {.domain = "", .op_type = "Gather", .min_inputs = 2,
                                .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                .infer = gather_infer, .grad = gather_grad};
static const wt_op_def wt_op_GatherElements = {.domain = "", .op_type = "GatherElements",
                                        .min_inputs = 2, .max_inputs = 2, .min_outputs = 1,
                                        .max_outputs = 1, .infer = gather_elements_infer, .grad = gather_elements_grad};
static const wt_op_def wt_op_ScatterElements = {.domain = "", .op_type = "ScatterElements",
                                         .min_inputs = 3, .max_inputs = 3, .min_outputs = 1,
                                         .max_outputs = 1, .infer = scatter_elements_infer, .grad = scatter_elements_grad};
/* Scatter (opsets 9-10) is ScatterElements under its old name. */
static const wt_op_def wt_op_Scatter = {.domain = "", .op_type = "Scatter", .min_inputs = 3,
                                 .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
                                 .infer = scatter_elements_infer, .grad = scatter_elements_grad};
static const wt_op_def wt_op_GatherND = {.domain = "", .op_type = "GatherND", .min_inputs = 2,
                                  .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                                  .infer = gather_nd_infer, .grad = gather_nd_grad};
static const wt_op_def wt_op_ScatterND = {.domain = "", .op_type = "ScatterND", .min_inputs = 3,
                                   .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
                                   .infer = scatter_nd_infer, .grad = scatter_nd_grad};
static const wt_op_def wt_op_ms_GatherGrad = {.domain = WT_MS, .op_type = "GatherGrad", .min_inputs = 3,
                                       .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
                                       .infer = gather_grad_op_infer,
                                       .flags = WT_OP_GRADIENT};
static const wt_op_def wt_op_ms_GatherElementsGrad = {.domain = WT_MS, .op_type = "GatherElementsGrad",
                                               .min_inputs = 3, .max_inputs = 3, .min_outputs = 1,
                                               .max_outputs = 1,
                                               .infer = gather_elements_grad_op_infer,
                                               .flags = WT_OP_GRADIENT};
static const wt_op_def wt_op_ms_GatherNDGrad = {.domain = WT_MS, .op_type = "GatherNDGrad",
                                         .min_inputs = 3, .max_inputs = 3, .min_outputs = 1,
                                         .max_outputs = 1, .infer = gather_nd_grad_op_infer, .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_data_index[] = {
    &wt_op_Gather, &wt_op_GatherElements, &wt_op_ScatterElements, &wt_op_Scatter, &wt_op_GatherND,
    &wt_op_ScatterND, &wt_op_ms_GatherGrad, &wt_op_ms_GatherElementsGrad, &wt_op_ms_GatherNDGrad,
    NULL,
};
