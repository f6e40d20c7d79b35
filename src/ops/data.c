/* Op family: data. Region ops: Slice, Pad, Trilu. (Indexed gathers and scatters live in
 * data_index.c.) Copies work on element size, so every dtype shares one path. */
#include <assert.h>
#include <string.h>

#include "kernels/copy.h"
#include "ops/op.h"
#include "ops/shape_util.h"

/* ---- Slice ------------------------------------------------------------------------------ */

typedef struct slice_params {
  int64_t start[WT_MAX_RANK], step[WT_MAX_RANK];
} slice_params;

/* Reads starts/ends/axes/steps: attributes before opset 10, inputs 1..4 from 10. n* = -1 when
 * absent. */
static int slice_lists(wt_infer_ctx *ctx, int64_t v[4][WT_MAX_RANK], int n[4]) {
  static const char *const names[4] = {"starts", "ends", "axes", "steps"};
  for (int k = 0; k < 4; k++) {
    n[k] = -1;
    if (ctx->opset < 10) {
      if (k == 3) continue;
      const int64_t *p;
      n[k] = wt_attr_ints(ctx->node, names[k], &p);
      if (n[k] > WT_MAX_RANK)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute '%s' has %d values; at most %d",
                         names[k], n[k], WT_MAX_RANK);
      if (n[k] > 0) memcpy(v[k], p, sizeof *p * (size_t)n[k]);
    } else if (wt_has_input(ctx->in, ctx->n_in, k + 1)) {
      WT_TRY(wt_su_known_ints(ctx, k + 1, names[k], WT_MAX_RANK, v[k], &n[k]));
    }
    if (k < 2 && n[k] < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, ctx->opset < 10 ? "attribute '%s' is required"
                                                           : "input '%s' is required", names[k]);
  }
  return WT_OK;
}

static int slice_infer(wt_infer_ctx *ctx) {
  slice_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0];
  if (!wt_su_elem(ctx, 0)) return WT_ERR_UNSUPPORTED;
  int64_t v[4][WT_MAX_RANK];
  int n[4], axes[WT_MAX_RANK];
  WT_TRY(slice_lists(ctx, v, n));
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
  int64_t dims[WT_MAX_RANK];
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
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, dims);
  return WT_OK;
}

static int slice_run(const wt_run_ctx *ctx) {
  const slice_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  if (wt_numel(y) == 0) return WT_OK;
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK], ss[WT_MAX_RANK], off = 0;
  wt_strides(x->rank, x->dims, xs);
  wt_strides(y->rank, y->dims, ys);
  for (int i = 0; i < x->rank; i++) {
    off += p->start[i] * xs[i];
    ss[i] = xs[i] * p->step[i];
  }
  size_t elem = wt_dtype_size(x->dtype);
  wt_copy_strided(y->data, ys, (const char *)x->data + off * (int64_t)elem, ss, y->rank, y->dims,
                  elem);
  return WT_OK;
}

/* ---- Pad -------------------------------------------------------------------------------- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_params {
  int64_t begin[WT_MAX_RANK];
  int mode;
  unsigned char value[8]; /* constant from the 'value' attribute (before opset 11) */
} pad_params;

static int pad_infer(wt_infer_ctx *ctx) {
  pad_params *p = ctx->params;
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

/* Input coordinate read by output coordinate o along an axis of size d (non-constant modes). */
static int64_t pad_src(int64_t o, int64_t begin, int64_t d, int mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < d) return i;
  if (mode == PAD_EDGE) return i < 0 ? 0 : d - 1;
  if (mode == PAD_WRAP) return ((i % d) + d) % d;
  if (d == 1) return 0;
  int64_t period = 2 * (d - 1);
  i = ((i % period) + period) % period;
  return i < d ? i : period - i;
}

static int pad_run(const wt_run_ctx *ctx) {
  const pad_params *p = ctx->params;
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  int r = x->rank;
  size_t elem = wt_dtype_size(x->dtype);
  int64_t ny = wt_numel(y);
  if (ny == 0) return WT_OK;
  int64_t xs[WT_MAX_RANK], ys[WT_MAX_RANK];
  wt_strides(r, x->dims, xs);
  wt_strides(r, y->dims, ys);
  if (p->mode == PAD_CONSTANT) {
    const void *value = p->value;
    if (wt_has_input(ctx->in, ctx->n_in, 2) && wt_numel(&ctx->in[2]) == 1) value = ctx->in[2].data;
    wt_fill(y->data, ny, value, elem);
    /* Copy the part of the input that survives (negative pads crop). */
    int64_t dims[WT_MAX_RANK], xoff = 0, yoff = 0;
    for (int i = 0; i < r; i++) {
      int64_t lo = p->begin[i] < 0 ? -p->begin[i] : 0;
      int64_t hi = y->dims[i] - p->begin[i];
      if (hi > x->dims[i]) hi = x->dims[i];
      if (hi <= lo) return WT_OK;
      dims[i] = hi - lo;
      xoff += lo * xs[i];
      yoff += (lo + p->begin[i]) * ys[i];
    }
    wt_copy_strided((char *)y->data + yoff * (int64_t)elem, ys,
                    (const char *)x->data + xoff * (int64_t)elem, xs, r, dims, elem);
    return WT_OK;
  }
  if (r == 0) {
    memcpy(y->data, x->data, elem);
    return WT_OK;
  }
  /* reflect / edge / wrap: map every output coordinate back to the input. */
  int64_t idx[WT_MAX_RANK] = {0}, n = y->dims[r - 1], rows = ny / n;
  const char *src = x->data;
  char *dst = y->data;
  for (int64_t row = 0; row < rows; row++) {
    int64_t base = 0;
    for (int k = 0; k < r - 1; k++) base += pad_src(idx[k], p->begin[k], x->dims[k], p->mode) * xs[k];
    for (int64_t j = 0; j < n; j++) {
      int64_t s = base + pad_src(j, p->begin[r - 1], x->dims[r - 1], p->mode);
      memcpy(dst + (row * n + j) * (int64_t)elem, src + s * (int64_t)elem, elem);
    }
    for (int k = r - 2; k >= 0; k--) {
      if (++idx[k] < y->dims[k]) break;
      idx[k] = 0;
    }
  }
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

static int trilu_run(const wt_run_ctx *ctx) {
  const wt_tensor *x = &ctx->in[0], *y = &ctx->out[0];
  int upper = (int)wt_attr_int(ctx->node, "upper", 1);
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t k = 0;
  if (wt_has_input(ctx->in, ctx->n_in, 1)) k = wt_get_int(&ctx->in[1], 0);
  /* Clamp so that i + k cannot overflow; beyond +-(rows+cols) nothing changes. */
  int64_t lim = rows + cols;
  if (k > lim) k = lim;
  if (k < -lim) k = -lim;
  size_t elem = wt_dtype_size(x->dtype);
  int64_t mats = rows * cols > 0 ? wt_numel(x) / (rows * cols) : 0;
  const char *src = x->data;
  char *dst = y->data;
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++) {
      /* Kept columns are [lo, hi): upper keeps j - i >= k, lower keeps j - i <= k. */
      int64_t lo = upper ? i + k : 0, hi = upper ? cols : i + k + 1;
      lo = lo < 0 ? 0 : lo > cols ? cols : lo;
      hi = hi < lo ? lo : hi > cols ? cols : hi;
      size_t off = (size_t)((m * rows + i) * cols) * elem;
      memset(dst + off, 0, (size_t)lo * elem);
      wt_copy_bytes(dst + off + (size_t)lo * elem, src + off + (size_t)lo * elem,
                    (size_t)(hi - lo) * elem);
      memset(dst + off + (size_t)hi * elem, 0, (size_t)(cols - hi) * elem);
    }
  return WT_OK;
}

static_assert(sizeof(slice_params) <= WT_PARAMS_MAX, "params");
static_assert(sizeof(pad_params) <= WT_PARAMS_MAX, "params");

const wt_op_def wt_op_Slice = {.domain = "", .op_type = "Slice", .min_inputs = 1, .max_inputs = 5,
                               .min_outputs = 1, .max_outputs = 1, .infer = slice_infer,
                               .run = slice_run};
const wt_op_def wt_op_Pad = {.domain = "", .op_type = "Pad", .min_inputs = 1, .max_inputs = 4,
                             .min_outputs = 1, .max_outputs = 1, .infer = pad_infer,
                             .run = pad_run};
const wt_op_def wt_op_Trilu = {.domain = "", .op_type = "Trilu", .min_inputs = 1, .max_inputs = 2,
                               .min_outputs = 1, .max_outputs = 1, .infer = trilu_infer,
                               .run = trilu_run};

/* Defined in data_index.c; one table keeps registry.c's family list unchanged. */
extern const wt_op_def wt_op_Gather, wt_op_GatherElements, wt_op_ScatterElements, wt_op_Scatter,
    wt_op_GatherND, wt_op_ScatterND;

const wt_op_def *const wt_ops_data[] = {
    &wt_op_Slice,   &wt_op_Pad,     &wt_op_Trilu,     &wt_op_Gather,    &wt_op_GatherElements,
    &wt_op_ScatterElements, &wt_op_Scatter, &wt_op_GatherND, &wt_op_ScatterND, NULL,
};
