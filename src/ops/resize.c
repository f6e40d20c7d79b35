/* Op family: resize. Resize (opsets 10, 11, 13, 18: roi / scales / sizes inputs, axes and
 * keep_aspect_ratio_policy at 18; nearest (every nearest_mode), linear and cubic in N-D, every
 * coordinate_transformation_mode), the deprecated Upsample (7: scales attribute, 9: input), and
 * com.microsoft ResizeGrad (ONNX Runtime's name and inputs: dY, X, roi, scales), the gradient
 * both forward ops emit. Kernels in backend/cpu/resize.c. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/resize_params.h"

static int pick(const char *s, const char *const *names, int n, const char *attr, int *out) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) {
      *out = i;
      return WT_OK;
    }
  return wt_errorf(WT_ERR_UNSUPPORTED, "attribute '%s' is \"%s\"; unsupported", attr, s);
}

/* Attributes shared by Resize, Upsample and ResizeGrad. `legacy` (Upsample, Resize-10): the
 * asymmetric transform with floor rounding, no other knobs. */
static int parse_cfg(const wt_node *n, int legacy, int opset18, rs_params *p) {
  static const char *modes[3] = {"nearest", "linear", "cubic"};
  static const char *coords[6] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                  "asymmetric", "tf_half_pixel_for_nearest", "tf_crop_and_resize"};
  static const char *nmodes[4] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  wt_resize_cfg *c = &p->cfg;
  const char *mode = wt_attr_string(n, "mode", "nearest");
  if (legacy && strcmp(mode, "bilinear") == 0) mode = "linear";
  WT_TRY(pick(mode, modes, legacy ? 2 : 3, "mode", &c->mode));
  if (legacy) {
    c->coord = WT_RESIZE_ASYMMETRIC;
    c->nearest_mode = WT_NEAREST_FLOOR;
    return WT_OK;
  }
  WT_TRY(pick(wt_attr_string(n, "coordinate_transformation_mode", "half_pixel"), coords, 6,
              "coordinate_transformation_mode", &c->coord));
  WT_TRY(pick(wt_attr_string(n, "nearest_mode", "round_prefer_floor"), nmodes, 4, "nearest_mode",
              &c->nearest_mode));
  c->cubic_a = wt_attr_float(n, "cubic_coeff_a", -0.75f);
  c->exclude_outside = wt_attr_int(n, "exclude_outside", 0) != 0;
  p->extrap = wt_attr_float(n, "extrapolation_value", 0.0f);
  if (opset18 && wt_attr_int(n, "antialias", 0) != 0)
    return wt_errorf(WT_ERR_UNSUPPORTED, "antialias=1 is not supported");
  return WT_OK;
}

/* The axes scales / sizes / roi refer to: attribute 'axes' (opset 18) or all. */
static int parse_axes(const wt_node *n, int rank, rs_params *p) {
  const int64_t *axes;
  int na = wt_attr_ints(n, "axes", &axes);
  p->n_axes = na < 0 ? rank : na;
  if (p->n_axes > rank)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'axes' has %d values for rank %d", na, rank);
  for (int i = 0; i < p->n_axes; i++) {
    int a = na < 0 ? i : wt_axis(axes[i], rank);
    if (a < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "axes[%d] = %lld is out of range for rank %d", i,
                       (long long)axes[i], rank);
    for (int j = 0; j < i; j++)
      if (p->axes[j] == a) return wt_errorf(WT_ERR_INVALID_ARG, "axis %d is repeated in 'axes'", a);
    p->axes[i] = a;
  }
  return WT_OK;
}

static int known_input(wt_infer_ctx *ctx, int i, const char *name, const wt_tensor **out) {
  *out = NULL;
  if (!wt_has_input(ctx->in, ctx->n_in, i) || wt_numel(&ctx->in[i]) == 0) return WT_OK;
  const wt_tensor *v = wt_infer_value(ctx, i);
  if (!v || !v->data)
    return wt_errorf(WT_ERR_UNSUPPORTED, "input '%s' (index %d) must be known before the run (an "
                     "initializer or constant) to size the output", name, i);
  *out = v;
  return WT_OK;
}

/* ---- Resize / Upsample ---------------------------------------------------------------------- */

static int resize_infer(wt_infer_ctx *ctx) {
  rs_params *p = WT_PARAMS(ctx, rs_params);
  const wt_node *n = ctx->node;
  const wt_tensor *x = &ctx->in[0];
  int upsample = ctx->op->variant;
  int legacy = upsample || ctx->opset < 11;
  p->rank = x->rank;
  p->is_float = x->dtype == WT_FLOAT;
  p->esize = wt_dtype_size(x->dtype);
  if (!p->esize)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' has dtype %s; expected float, int32, int64 or bool",
                     wt_dtype_name(x->dtype));
  WT_TRY(parse_cfg(n, legacy, !upsample && ctx->opset >= 18, p));
  if (!p->is_float && p->cfg.mode != WT_RESIZE_NEAREST)
    return wt_errorf(WT_ERR_UNSUPPORTED, "mode '%s' on %s input; only nearest is supported for "
                     "non-float data", p->cfg.mode == WT_RESIZE_LINEAR ? "linear" : "cubic",
                     wt_dtype_name(x->dtype));
  if (!upsample && ctx->opset >= 18) {
    WT_TRY(parse_axes(n, x->rank, p));
  } else {
    p->n_axes = x->rank;
    for (int d = 0; d < x->rank; d++) p->axes[d] = d;
  }
  p->roi_input = legacy ? -1 : 1;
  p->scales_input = -1;
  int scales_idx = upsample || ctx->opset < 11 ? 1 : 2, sizes_idx = legacy ? -1 : 3;

  double sc[WT_MAX_RANK];
  int64_t sz[WT_MAX_RANK];
  int have_scales = 0, have_sizes = 0;
  if (upsample && ctx->opset < 9) {
    const float *s;
    int ns = wt_attr_floats(n, "scales", &s);
    if (ns != x->rank)
      return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'scales' has %d values; expected %d (the "
                       "rank of X)", ns, x->rank);
    for (int i = 0; i < ns; i++) sc[i] = s[i];
    have_scales = 1;
  } else {
    const wt_tensor *s = NULL, *z = NULL;
    if (ctx->n_in > scales_idx) {
      if (wt_has_input(ctx->in, ctx->n_in, scales_idx) && ctx->in[scales_idx].dtype != WT_FLOAT)
        return wt_errorf(WT_ERR_SHAPE, "input 'scales' (index %d) has dtype %s; expected float",
                         scales_idx, wt_dtype_name(ctx->in[scales_idx].dtype));
      WT_TRY(known_input(ctx, scales_idx, "scales", &s));
    }
    if (sizes_idx >= 0 && ctx->n_in > sizes_idx) {
      if (wt_has_input(ctx->in, ctx->n_in, sizes_idx) && ctx->in[sizes_idx].dtype != WT_INT64)
        return wt_errorf(WT_ERR_SHAPE, "input 'sizes' (index 3) has dtype %s; expected int64",
                         wt_dtype_name(ctx->in[sizes_idx].dtype));
      WT_TRY(known_input(ctx, sizes_idx, "sizes", &z));
    }
    if (s && z) return wt_errorf(WT_ERR_INVALID_ARG, "both 'scales' and 'sizes' are given; expected one");
    if (!s && !z) return wt_errorf(WT_ERR_INVALID_ARG, "neither 'scales' nor 'sizes' is given");
    const wt_tensor *v = s ? s : z;
    if (wt_numel(v) != p->n_axes)
      return wt_errorf(WT_ERR_SHAPE, "input '%s' has %lld values; expected %d", s ? "scales" : "sizes",
                       (long long)wt_numel(v), p->n_axes);
    for (int i = 0; i < p->n_axes; i++) {
      if (s) sc[i] = wt_get_double(s, i);
      else sz[i] = wt_get_int(z, i);
    }
    have_scales = s != NULL;
    have_sizes = z != NULL;
  }
  for (int d = 0; d < x->rank; d++) {
    p->in_dims[d] = x->dims[d];
    p->out_dims[d] = x->dims[d];
    p->scale[d] = 1.0;
  }
  if (have_scales) {
    for (int i = 0; i < p->n_axes; i++) {
      int d = p->axes[i];
      if (!(sc[i] > 0) || !isfinite(sc[i]))
        return wt_errorf(WT_ERR_INVALID_ARG, "scales[%d] = %g; expected a positive value", i, sc[i]);
      double od = floor(sc[i] * (double)x->dims[d]);
      if (od > (double)((int64_t)1 << 32))
        return wt_errorf(WT_ERR_INVALID_ARG, "scales[%d] = %g makes output dimension %d %.0f; "
                         "at most 2^32 is supported", i, sc[i], d, od);
      p->scale[d] = sc[i];
      p->out_dims[d] = (int64_t)od;
    }
  } else if (have_sizes) {
    const char *policy = ctx->opset >= 18 ? wt_attr_string(n, "keep_aspect_ratio_policy", "stretch")
                                          : "stretch";
    int keep = strcmp(policy, "not_larger") == 0 ? 1 : strcmp(policy, "not_smaller") == 0 ? 2 : 0;
    if (!keep && strcmp(policy, "stretch") != 0)
      return wt_errorf(WT_ERR_UNSUPPORTED, "keep_aspect_ratio_policy \"%s\"; expected stretch, "
                       "not_larger or not_smaller", policy);
    double common = keep == 1 ? INFINITY : 0;
    for (int i = 0; i < p->n_axes; i++) {
      int d = p->axes[i];
      if (sz[i] <= 0 || x->dims[d] <= 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "sizes[%d] = %lld for an axis of %lld; expected "
                         "positive sizes", i, (long long)sz[i], (long long)x->dims[d]);
      double r = (double)sz[i] / (double)x->dims[d];
      if (keep == 1 && r < common) common = r;
      if (keep == 2 && r > common) common = r;
      p->scale[d] = r;
      p->out_dims[d] = sz[i];
    }
    if (keep)
      for (int i = 0; i < p->n_axes; i++) {
        int d = p->axes[i];
        p->scale[d] = common;
        p->out_dims[d] = (int64_t)floor(common * (double)x->dims[d] + 0.5);
      }
  }
  wt_set_shape(&ctx->out[0], x->dtype, x->rank, p->out_dims);
  return WT_OK;
}

/* ONNX Runtime's rule: ResizeGrad(dY, X, roi, scales) with the forward node's attributes. For
 * Upsample and Resize-10 (no such attributes: asymmetric coordinates, floor rounding) the
 * equivalent attributes are written out, and the scales input is passed on. */
static int resize_grad(wt_grad_ctx *c) {
  if (!wt_grad_need(c, 0)) return wt_grad_status(c);
  const wt_node *n = wt_grad_node(c);
  int upsample = c->op->variant;
  int legacy = upsample || c->opset < 11;
  int x = I(0), roi = -1, scales = -1;
  if (c->opset >= 18 &&
      strcmp(wt_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                        "keep_aspect_ratio_policy other than stretch is not differentiable here");
  if (!legacy) {
    roi = n->n_inputs > 1 ? n->inputs[1] : -1;
    scales = n->n_inputs > 2 ? n->inputs[2] : -1;
  } else if (n->n_inputs > 1) {
    scales = n->inputs[1];
  } else {
    /* Upsample-7 keeps scales in an attribute: ResizeGrad then uses out / in, exact only when
     * every scaled length is whole. */
    const float *s;
    int ns = wt_attr_floats(n, "scales", &s);
    const wt_value *xv = wt_grad_value(c, x);
    for (int d = 0; d < ns; d++) {
      double len = (double)s[d] * (double)(xv->rank == ns ? xv->dims[d] : -1);
      if (xv->rank != ns || xv->dims[d] < 0 || len != floor(len))
        return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                            "Upsample-7 with scales whose products with the input dims are not "
                            "whole (or unknown) is not differentiable");
    }
  }
  int n_in = scales >= 0 ? 4 : roi >= 0 ? 3 : 2;
  int dx = wt_grad_op1(c, "ResizeGrad", WT_MS, n_in, (int[]){GO(0), x, roi, scales});
  int node = wt_grad_last(c);
  if (dx < 0) return wt_grad_status(c);
  n = wt_grad_node(c);
  int rc = WT_OK;
  if (legacy) {
    const char *mode = wt_attr_string(n, "mode", "nearest");
    rc = wt_node_set_string(c->g, node, "mode", strcmp(mode, "bilinear") == 0 ? "linear" : mode);
    if (!rc) rc = wt_node_set_string(c->g, node, "coordinate_transformation_mode", "asymmetric");
    if (!rc) rc = wt_node_set_string(c->g, node, "nearest_mode", "floor");
  } else {
    wt_grad_copy_attrs(c, node, NULL, 0); /* ResizeGrad takes Resize's attributes */
  }
  if (rc) return wt_grad_fail(c, rc, "out of memory");
  wt_grad_set(c, 0, dx);
  return wt_grad_status(c);
}

static const wt_op_def wt_op_Resize = {
    .domain = "", .op_type = "Resize", .min_inputs = 1, .max_inputs = 4, .min_outputs = 1,
    .max_outputs = 1, .infer = resize_infer, .grad = resize_grad};
static const wt_op_def wt_op_Upsample = {
    .domain = "", .op_type = "Upsample", .min_inputs = 1, .max_inputs = 2, .min_outputs = 1,
    .max_outputs = 1, .infer = resize_infer, .grad = resize_grad,
    .variant = 1 /* Upsample: the legacy form */};

/* ---- ResizeGrad (com.microsoft) ------------------------------------------------------------- */

static int resize_grad_infer(wt_infer_ctx *ctx) {
  rs_params *p = WT_PARAMS(ctx, rs_params);
  const wt_tensor *dy = &ctx->in[0], *x = &ctx->in[1];
  char b1[96], b2[96];
  if (dy->dtype != WT_FLOAT || x->dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "inputs 'dY' and 'X' are %s and %s; expected float",
                     wt_dtype_name(dy->dtype), wt_dtype_name(x->dtype));
  if (dy->rank != x->rank)
    return wt_errorf(WT_ERR_SHAPE, "input 'dY' has shape %s and 'X' %s; expected the same rank",
                     wt_shape_str(dy->rank, dy->dims, b1, sizeof b1),
                     wt_shape_str(x->rank, x->dims, b2, sizeof b2));
  WT_TRY(parse_cfg(ctx->node, 0, 1, p));
  WT_TRY(parse_axes(ctx->node, x->rank, p));
  p->rank = x->rank;
  p->is_float = 1;
  p->esize = sizeof(float);
  p->roi_input = 2;
  p->scales_input = 3;
  if (wt_has_input(ctx->in, ctx->n_in, 3) && ctx->in[3].dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'scales' (index 3) has dtype %s; expected float",
                     wt_dtype_name(ctx->in[3].dtype));
  for (int d = 0; d < x->rank; d++) {
    p->in_dims[d] = x->dims[d];
    p->out_dims[d] = dy->dims[d];
    if (x->dims[d] <= 0 && dy->dims[d] > 0)
      return wt_errorf(WT_ERR_SHAPE, "input 'X' has an empty axis %d that 'dY' does not", d);
  }
  wt_set_shape(&ctx->out[0], WT_FLOAT, x->rank, x->dims);
  return WT_OK;
}

static const wt_op_def wt_op_ResizeGrad = {
    .domain = WT_MS, .op_type = "ResizeGrad", .min_inputs = 2, .max_inputs = 4, .min_outputs = 1,
    .max_outputs = 1, .infer = resize_grad_infer, .flags = WT_OP_GRADIENT};

const wt_op_def *const wt_ops_resize[] = {
    &wt_op_Resize,
    &wt_op_Upsample,
    &wt_op_ResizeGrad,
    NULL,
};
