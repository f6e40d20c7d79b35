/* Op family: unary elementwise ops — math and activations (float kernels in
 * backend/cpu/elementwise_unary.c), their integer variants (Neg Abs Sign Relu Clip), Not, IsNaN,
 * IsInf, Cast, CastLike, Identity, Dropout, and the com.microsoft activations Gelu, FastGelu,
 * BiasGelu and QuickGelu. Gradient rules and the *Grad ops live in unary_grad.c. */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "ops/dtype_set.h"
#include "ops/op.h"
#include "ops/unary_ops.h"

static int check_scalar_input(const wt_infer_ctx *ctx, int i, const char *name) {
  if (!wt_has_input(ctx->in, ctx->n_in, i)) return WT_OK;
  if (wt_numel(&ctx->in[i]) != 1) {
    char b[128];
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has shape %s; expected a scalar", name,
                     i, wt_shape_str(ctx->in[i].rank, ctx->in[i].dims, b, sizeof b));
  }
  return WT_OK;
}

static int infer_dropout(wt_infer_ctx *ctx, un_params *p) {
  p->opset = ctx->opset;
  p->ratio = wt_attr_float(ctx->node, "ratio", 0.5f);
  /* No seed: a fixed one, so runs are reproducible (see the PRNG note at run_dropout). */
  p->seed = (uint64_t)wt_attr_int(ctx->node, "seed", 0x5eed);
  if (ctx->opset < 7) p->training = wt_attr_int(ctx->node, "is_test", 0) == 0;
  if (ctx->opset >= 12) {
    WT_TRY(check_scalar_input(ctx, 1, "ratio"));
    WT_TRY(check_scalar_input(ctx, 2, "training_mode"));
    if (wt_has_input(ctx->in, ctx->n_in, 1)) WT_TRY(wt_expect_float(&ctx->in[1], "ratio", 1));
    if (wt_has_input(ctx->in, ctx->n_in, 2))
      WT_TRY(wt_expect_dtype(&ctx->in[2], "training_mode", 2, WT_BOOL));
  } else if (ctx->n_in > 1) {
    return wt_errorf(WT_ERR_INVALID_ARG, "%d inputs; expected 1 before opset 12", ctx->n_in);
  }
  if (!(p->ratio >= 0.0f && p->ratio <= 1.0f))
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'ratio' is %g; expected a value in [0, 1]",
                     (double)p->ratio);
  wt_set_shape(&ctx->out[0], ctx->in[0].dtype, ctx->in[0].rank, ctx->in[0].dims);
  /* The mask is bool from opset 10, the data type before. */
  if (ctx->n_out > 1)
    wt_set_shape(&ctx->out[1], ctx->opset >= 10 ? WT_BOOL : ctx->in[0].dtype, ctx->in[0].rank,
                 ctx->in[0].dims);
  return WT_OK;
}

static int infer(wt_infer_ctx *ctx) {
  const un_spec *s = ctx->op->spec;
  un_params *p = WT_PARAMS(ctx, un_params);
  p->kind = s->kind;
  if (s->alpha.name) p->alpha = wt_attr_float(ctx->node, s->alpha.name, s->alpha.dflt);
  if (s->beta.name) p->beta = wt_attr_float(ctx->node, s->beta.name, s->beta.dflt);
  const wt_tensor *x = &ctx->in[0];
  unsigned allowed = s->dtypes;
  if (s->int_since && ctx->opset < s->int_since) allowed = DT_F;
  if (!(dt_bit(x->dtype) & allowed))
    return wt_errorf(WT_ERR_SHAPE, "input 0 has dtype %s; expected %s",
                     wt_dtype_name(x->dtype), dt_list(allowed));
  int out_dtype = x->dtype;
  switch (s->kind) {
    case K_ISNAN: out_dtype = WT_BOOL; break;
    case K_ISINF:
      out_dtype = WT_BOOL;
      p->alpha = (float)wt_attr_int(ctx->node, "detect_negative", 1);
      p->beta = (float)wt_attr_int(ctx->node, "detect_positive", 1);
      break;
    case WT_EW_GELU: {
      const char *a = wt_attr_string(ctx->node, "approximate", "none");
      if (strcmp(a, "tanh") == 0) p->kind = WT_EW_GELU_TANH;
      else if (strcmp(a, "none") != 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'approximate' is '%s'; expected 'none' or 'tanh'", a);
      break;
    }
    case WT_EW_CLIP:
      if (ctx->opset < 11) {
        p->alpha = wt_attr_float(ctx->node, "min", -FLT_MAX);
        p->beta = wt_attr_float(ctx->node, "max", FLT_MAX);
        if (ctx->n_in > 1)
          return wt_errorf(WT_ERR_INVALID_ARG, "%d inputs; expected 1 before opset 11", ctx->n_in);
      } else {
        p->clip_inputs = 1;
        for (int i = 1; i < ctx->n_in; i++) {
          WT_TRY(check_scalar_input(ctx, i, i == 1 ? "min" : "max"));
          if (wt_has_input(ctx->in, ctx->n_in, i))
            WT_TRY(wt_expect_dtype(&ctx->in[i], i == 1 ? "min" : "max", i, x->dtype));
        }
      }
      break;
    case K_CAST:
    case K_CASTLIKE:
      out_dtype = s->kind == K_CAST ? (int)wt_attr_int(ctx->node, "to", 0) : ctx->in[1].dtype;
      if (!dt_bit(out_dtype))
        return wt_errorf(WT_ERR_UNSUPPORTED, "target dtype %s; expected float, float16, int32, int64 or "
                         "bool", wt_dtype_name(out_dtype));
      p->to = out_dtype;
      break;
    case K_DROPOUT:
      return infer_dropout(ctx, p);
    case K_FASTGELU:
    case K_BIASGELU:
      p->kind = s->kind == K_FASTGELU ? WT_EW_GELU_TANH : WT_EW_GELU;
      if (wt_has_input(ctx->in, ctx->n_in, 1)) {
        const wt_tensor *b = &ctx->in[1];
        if (b->dtype != WT_FLOAT || b->rank != 1 || x->rank < 1 || b->dims[0] != x->dims[x->rank - 1]) {
          char sb[128], sx[128];
          return wt_errorf(WT_ERR_SHAPE, "input 'bias' (index 1) is %s %s; expected a 1-D float tensor "
                           "matching the last dim of input 0 %s", wt_dtype_name(b->dtype),
                           wt_shape_str(b->rank, b->dims, sb, sizeof sb),
                           wt_shape_str(x->rank, x->dims, sx, sizeof sx));
        }
        p->bias = 1;
      }
      break;
    default: break;
  }
  wt_set_shape(&ctx->out[0], out_dtype, x->rank, x->dims);
  return WT_OK;
}

/* The op definitions and the family table, from the list in unary_ops.h. */
#define GRAD_RULE(ID) wt_unary_grad_##ID
#define GRAD_NO_RULE(ID) NULL
#define DEF_OP(ID, DOM, TYPE, KIND, DT, SINCE, MIN_IN, MAX_IN, MAX_OUT, FLAGS, GRAD, ...)        \
  static const wt_op_def wt_op_##ID = {                                                          \
      .domain = DOM, .op_type = TYPE, .min_inputs = MIN_IN, .max_inputs = MAX_IN,                 \
      .min_outputs = 1, .max_outputs = MAX_OUT, .infer = infer,                                   \
      .grad = GRAD_##GRAD(ID), .flags = FLAGS,                                                    \
      .spec = &(const un_spec){.kind = KIND, .dtypes = DT, .int_since = SINCE, __VA_ARGS__}};
#define DEF_ACT(ID, KIND, DT, SINCE, GRAD, ...) \
  DEF_OP(ID, "", #ID, KIND, DT, SINCE, 1, 1, 1, WT_OP_INPLACE, GRAD, __VA_ARGS__)
WT_UNARY_OPS(DEF_ACT, DEF_OP)

#define LIST_OP(ID, ...) &wt_op_##ID,
#define LIST_ACT(ID, ...) &wt_op_##ID,
const wt_op_def *const wt_ops_unary[] = {WT_UNARY_OPS(LIST_ACT, LIST_OP) NULL};
