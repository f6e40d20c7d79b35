/* Gradient rules of the unary family (ONNX Runtime's emissions where it has a rule, standard-op
 * decompositions elsewhere) and the com.microsoft gradient ops they emit: ReluGrad, SigmoidGrad,
 * TanhGrad, LeakyReluGrad, GeluGrad, FastGeluGrad, QuickGeluGrad, Bias(Fast)GeluGrad_dX, DropoutGrad. */
#include <float.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/unary_ops.h"

/* ---- emit helpers --------------------------------------------------------------------------- */

static int op1(wt_grad_ctx *c, const char *type, int a) { return wt_grad_op1(c, type, "", 1, &a); }
#define op2 wt_grad_op2 /* shorthand for the formulas below */
static int mul(wt_grad_ctx *c, int a, int b) { return op2(c, "Mul", a, b); }
static int cf(wt_grad_ctx *c, float v) { return wt_grad_const_f32(c, v); }
static int where(wt_grad_ctx *c, int cond, int a, int b) {
  return wt_grad_op1(c, "Where", "", 3, (int[]){cond, a, b});
}
/* Sets the gradient of input 0 and returns the status. */
static int set0(wt_grad_ctx *c, int v) {
  wt_grad_set(c, 0, v);
  return wt_grad_status(c);
}
/* Inputs that carry no gradient (Dropout's ratio, CastLike's target) get zeros if asked for. */
static void zero_grad(wt_grad_ctx *c, int i) {
  if (wt_grad_need(c, i)) wt_grad_set(c, i, wt_grad_expand_like(c, cf(c, 0.0f), I(i)));
}
static float attr_f(const wt_grad_ctx *c, const char *name, float dflt) {
  return wt_attr_float(wt_grad_node(c), name, dflt);
}
/* The op's float attributes alpha / beta as its list entry names them (with their defaults). */
static float alpha(const wt_grad_ctx *c) {
  const un_spec *s = c->op->spec;
  return attr_f(c, s->alpha.name, s->alpha.dflt);
}
static float beta(const wt_grad_ctx *c) {
  const un_spec *s = c->op->spec;
  return attr_f(c, s->beta.name, s->beta.dflt);
}
/* An emitted com.microsoft op dX = op(GO, t) with an optional float attribute. */
static int ms_grad(wt_grad_ctx *c, const char *type, int t, const char *attr, float v) {
  int dx = wt_grad_op1(c, type, WT_MS, 2, (int[]){GO(0), t});
  if (dx >= 0 && attr) wt_grad_attr_float(c, wt_grad_last(c), attr, v);
  return dx;
}

/* ---- rules with an ONNX Runtime counterpart ------------------------------------------------- */

int wt_unary_grad_Neg(wt_grad_ctx *c) { return set0(c, op1(c, "Neg", GO(0))); }
int wt_unary_grad_Abs(wt_grad_ctx *c) { return set0(c, mul(c, GO(0), op1(c, "Sign", I(0)))); }
int wt_unary_grad_Exp(wt_grad_ctx *c) { return set0(c, mul(c, GO(0), O(0))); }
int wt_unary_grad_Log(wt_grad_ctx *c) { return set0(c, op2(c, "Div", GO(0), I(0))); }
int wt_unary_grad_Sin(wt_grad_ctx *c) { return set0(c, mul(c, GO(0), op1(c, "Cos", I(0)))); }
int wt_unary_grad_Cos(wt_grad_ctx *c) {
  return set0(c, mul(c, GO(0), op1(c, "Neg", op1(c, "Sin", I(0)))));
}
/* 0.5 / Y */
int wt_unary_grad_Sqrt(wt_grad_ctx *c) {
  return set0(c, mul(c, GO(0), op2(c, "Div", cf(c, 0.5f), O(0))));
}
/* -Y^2 */
int wt_unary_grad_Reciprocal(wt_grad_ctx *c) {
  return set0(c, mul(c, GO(0), op1(c, "Neg", mul(c, O(0), O(0)))));
}
/* 2/sqrt(pi) exp(-x^2) */
int wt_unary_grad_Erf(wt_grad_ctx *c) {
  int e = op1(c, "Exp", op1(c, "Neg", mul(c, I(0), I(0))));
  return set0(c, mul(c, GO(0), mul(c, cf(c, 1.12837916709551257f), e)));
}
/* 1 / (1 + x^2) */
int wt_unary_grad_Atan(wt_grad_ctx *c) {
  return set0(c, op2(c, "Div", GO(0), op2(c, "Add", mul(c, I(0), I(0)), cf(c, 1.0f))));
}
int wt_unary_grad_Tanh(wt_grad_ctx *c) { return set0(c, ms_grad(c, "TanhGrad", O(0), NULL, 0)); }
int wt_unary_grad_Sigmoid(wt_grad_ctx *c) {
  return set0(c, ms_grad(c, "SigmoidGrad", O(0), NULL, 0));
}
/* ReluGrad(dY, Y): Y > 0 exactly where X > 0, and Y is usually kept for the next layer. */
int wt_unary_grad_Relu(wt_grad_ctx *c) { return set0(c, ms_grad(c, "ReluGrad", O(0), NULL, 0)); }

/* LeakyReluGrad tests Y > 0, which matches X > 0 only for alpha >= 0. */
int wt_unary_grad_LeakyRelu(wt_grad_ctx *c) {
  float a = alpha(c);
  if (a >= 0.0f) return set0(c, ms_grad(c, "LeakyReluGrad", O(0), "alpha", a));
  int pos = op2(c, "Greater", I(0), cf(c, 0.0f));
  return set0(c, where(c, pos, GO(0), mul(c, GO(0), cf(c, a))));
}

/* Subgradient 1 on the bounds (as ONNX Runtime and PyTorch); the bounds, when they need a
 * gradient, get the dY that fell outside them. */
int wt_unary_grad_Clip(wt_grad_ctx *c) {
  int lo = -1, hi = -1;
  if (c->opset < 11) {
    int has_lo = wt_node_attr(wt_grad_node(c), "min") != NULL;
    int has_hi = wt_node_attr(wt_grad_node(c), "max") != NULL;
    if (has_lo) lo = cf(c, attr_f(c, "min", -FLT_MAX));
    if (has_hi) hi = cf(c, attr_f(c, "max", FLT_MAX));
  } else {
    lo = I(1);
    hi = I(2);
  }
  int below = lo >= 0 ? op2(c, "Less", I(0), lo) : -1;
  int above = hi >= 0 ? op2(c, "Greater", I(0), hi) : -1;
  int outside = below >= 0 && above >= 0 ? op2(c, "Or", below, above) : below >= 0 ? below : above;
  int zero = outside >= 0 ? cf(c, 0.0f) : -1;
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, outside >= 0 ? where(c, outside, zero, GO(0)) : GO(0));
  for (int i = 1; i <= 2 && c->opset >= 11; i++) {
    if (!wt_grad_need(c, i)) continue;
    int d = where(c, i == 1 ? below : above, GO(0), zero);
    wt_grad_set(c, i, wt_grad_unbroadcast(c, d, 0, i));
  }
  return wt_grad_status(c);
}

int wt_unary_grad_Identity(wt_grad_ctx *c) { return set0(c, GO(0)); }

/* Reached only for float -> float (the autodiff follows float values only): the identity. */
int wt_unary_grad_Cast(wt_grad_ctx *c) {
  if (wt_grad_value(c, I(0))->dtype != WT_FLOAT || wt_grad_value(c, O(0))->dtype != WT_FLOAT)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "only float -> float casts carry a gradient");
  return set0(c, GO(0));
}
int wt_unary_grad_CastLike(wt_grad_ctx *c) {
  zero_grad(c, 1);
  return wt_unary_grad_Cast(c);
}

/* DropoutGrad(dY, mask, ratio, training_mode) when the node can train (opset >= 12 with a
 * training_mode input); the identity in inference. Before opset 12 only is_test=0 (opset < 7)
 * trains, with a float mask: dY * mask / (1 - ratio) in standard ops. */
int wt_unary_grad_Dropout(wt_grad_ctx *c) {
  int training = c->opset >= 12 ? I(2) >= 0
                                 : c->opset < 7 && wt_attr_int(wt_grad_node(c), "is_test", 0) == 0;
  float ratio = attr_f(c, "ratio", 0.5f);
  zero_grad(c, 1);
  if (!training) return set0(c, GO(0));
  if (c->opset >= 12) {
    int ins[4] = {GO(0), -1, I(1), I(2)};
    ins[1] = wt_grad_forward_output(c, 1);
    return set0(c, wt_grad_op1(c, "DropoutGrad", WT_MS, 4, ins));
  }
  int mask = wt_grad_forward_output(c, 1);
  float scale = ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f;
  return set0(c, mul(c, mul(c, GO(0), mask), cf(c, scale)));
}

/* ai.onnx Gelu (approximate none / tanh) and com.microsoft Gelu. */
int wt_unary_grad_Gelu(wt_grad_ctx *c) {
  const char *a = wt_attr_string(wt_grad_node(c), "approximate", "none");
  if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "Gelu approximate='%s'", a);
  return set0(c, ms_grad(c, strcmp(a, "tanh") == 0 ? "FastGeluGrad" : "GeluGrad", I(0), NULL, 0));
}

int wt_unary_grad_MsGelu(wt_grad_ctx *c) { return wt_unary_grad_Gelu(c); }

/* dX from Bias(Fast)GeluGrad_dX, dB its sum over the leading axes. */
static int bias_gelu_grad(wt_grad_ctx *c, const char *type) {
  int dx = wt_grad_op1(c, type, WT_MS, 3, (int[]){GO(0), I(0), I(1)});
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, dx);
  if (wt_grad_need(c, 1)) wt_grad_set(c, 1, wt_grad_unbroadcast(c, dx, 0, 1));
  return wt_grad_status(c);
}
int wt_unary_grad_FastGelu(wt_grad_ctx *c) {
  if (wt_grad_node(c)->n_inputs > 1 && I(1) >= 0) return bias_gelu_grad(c, "BiasFastGeluGrad_dX");
  return set0(c, ms_grad(c, "FastGeluGrad", I(0), NULL, 0));
}
int wt_unary_grad_BiasGelu(wt_grad_ctx *c) { return bias_gelu_grad(c, "BiasGeluGrad_dX"); }
int wt_unary_grad_QuickGelu(wt_grad_ctx *c) {
  return set0(c, ms_grad(c, "QuickGeluGrad", I(0), "alpha", alpha(c)));
}
/* Swish (ai.onnx, opset 24) is QuickGelu's x * sigmoid(alpha * x) with alpha defaulting to 1. */
int wt_unary_grad_Swish(wt_grad_ctx *c) { return wt_unary_grad_QuickGelu(c); }

/* ---- decompositions (no ONNX Runtime rule) -------------------------------------------------- */

/* Floor, Ceil, Round, Sign: zero almost everywhere. */
static int zero_rule(wt_grad_ctx *c) {
  return set0(c, wt_grad_expand_like(c, cf(c, 0.0f), I(0)));
}
int wt_unary_grad_Sign(wt_grad_ctx *c) { return zero_rule(c); }
int wt_unary_grad_Floor(wt_grad_ctx *c) { return zero_rule(c); }
int wt_unary_grad_Ceil(wt_grad_ctx *c) { return zero_rule(c); }
int wt_unary_grad_Round(wt_grad_ctx *c) { return zero_rule(c); }

/* sigmoid(x) */
int wt_unary_grad_Softplus(wt_grad_ctx *c) {
  return set0(c, mul(c, GO(0), op1(c, "Sigmoid", I(0))));
}
/* 1 / (1 + |x|)^2 */
int wt_unary_grad_Softsign(wt_grad_ctx *c) {
  int d = op2(c, "Add", op1(c, "Abs", I(0)), cf(c, 1.0f));
  return set0(c, op2(c, "Div", GO(0), mul(c, d, d)));
}
/* x < 0: y + alpha; else 1 */
int wt_unary_grad_Elu(wt_grad_ctx *c) {
  int neg = op2(c, "Less", I(0), cf(c, 0.0f));
  int dn = mul(c, GO(0), op2(c, "Add", O(0), cf(c, alpha(c))));
  return set0(c, where(c, neg, dn, GO(0)));
}
/* x > 0: gamma; else y + gamma * alpha */
int wt_unary_grad_Selu(wt_grad_ctx *c) {
  float gamma = beta(c);
  int pos = op2(c, "Greater", I(0), cf(c, 0.0f));
  int dp = mul(c, GO(0), cf(c, gamma));
  int dn = mul(c, GO(0), op2(c, "Add", O(0), cf(c, gamma * alpha(c))));
  return set0(c, where(c, pos, dp, dn));
}
/* x > 0: 1; else exp(x / alpha) = y / alpha + 1 */
int wt_unary_grad_Celu(wt_grad_ctx *c) {
  int pos = op2(c, "Greater", I(0), cf(c, 0.0f));
  int dn = mul(c, GO(0), op2(c, "Add", mul(c, O(0), cf(c, 1.0f / alpha(c))), cf(c, 1.0f)));
  return set0(c, where(c, pos, GO(0), dn));
}
/* alpha where 0 < y < 1 */
int wt_unary_grad_HardSigmoid(wt_grad_ctx *c) {
  int zero = cf(c, 0.0f);
  int inside = op2(c, "And", op2(c, "Greater", O(0), zero), op2(c, "Less", O(0), cf(c, 1.0f)));
  return set0(c, where(c, inside, mul(c, GO(0), cf(c, alpha(c))), zero));
}
/* x < -3: 0; x > 3: 1; else x / 3 + 1 / 2 */
int wt_unary_grad_HardSwish(wt_grad_ctx *c) {
  int mid = mul(c, GO(0), op2(c, "Add", mul(c, I(0), cf(c, 1.0f / 3.0f)), cf(c, 0.5f)));
  int upper = where(c, op2(c, "Greater", I(0), cf(c, 3.0f)), GO(0), mid);
  return set0(c, where(c, op2(c, "Less", I(0), cf(c, -3.0f)), cf(c, 0.0f), upper));
}
/* t = tanh(softplus(x)): t + x sigmoid(x) (1 - t^2) */
int wt_unary_grad_Mish(wt_grad_ctx *c) {
  int t = op1(c, "Tanh", op1(c, "Softplus", I(0)));
  int sech2 = op2(c, "Sub", cf(c, 1.0f), mul(c, t, t));
  int d = op2(c, "Add", t, mul(c, mul(c, I(0), op1(c, "Sigmoid", I(0))), sech2));
  return set0(c, mul(c, GO(0), d));
}
/* 1 + y^2 */
int wt_unary_grad_Tan(wt_grad_ctx *c) {
  return set0(c, mul(c, GO(0), op2(c, "Add", mul(c, O(0), O(0)), cf(c, 1.0f))));
}
/* +-1 / sqrt(1 - x^2) */
static int asin_acos(wt_grad_ctx *c, int negate) {
  int r = op1(c, "Sqrt", op2(c, "Sub", cf(c, 1.0f), mul(c, I(0), I(0))));
  int d = op2(c, "Div", GO(0), r);
  return set0(c, negate ? op1(c, "Neg", d) : d);
}
int wt_unary_grad_Asin(wt_grad_ctx *c) { return asin_acos(c, 0); }
int wt_unary_grad_Acos(wt_grad_ctx *c) { return asin_acos(c, 1); }
int wt_unary_grad_Sinh(wt_grad_ctx *c) { return set0(c, mul(c, GO(0), op1(c, "Cosh", I(0)))); }
int wt_unary_grad_Cosh(wt_grad_ctx *c) { return set0(c, mul(c, GO(0), op1(c, "Sinh", I(0)))); }
/* 1 / sqrt(x^2 + 1), 1 / sqrt(x^2 - 1), 1 / (1 - x^2) */
int wt_unary_grad_Asinh(wt_grad_ctx *c) {
  int r = op1(c, "Sqrt", op2(c, "Add", mul(c, I(0), I(0)), cf(c, 1.0f)));
  return set0(c, op2(c, "Div", GO(0), r));
}
int wt_unary_grad_Acosh(wt_grad_ctx *c) {
  int r = op1(c, "Sqrt", op2(c, "Sub", mul(c, I(0), I(0)), cf(c, 1.0f)));
  return set0(c, op2(c, "Div", GO(0), r));
}
int wt_unary_grad_Atanh(wt_grad_ctx *c) {
  return set0(c, op2(c, "Div", GO(0), op2(c, "Sub", cf(c, 1.0f), mul(c, I(0), I(0)))));
}
/* 1 where x > alpha */
int wt_unary_grad_ThresholdedRelu(wt_grad_ctx *c) {
  int on = op2(c, "Greater", I(0), cf(c, alpha(c)));
  return set0(c, where(c, on, GO(0), cf(c, 0.0f)));
}
/* 1 where |x| > lambd */
int wt_unary_grad_Shrink(wt_grad_ctx *c) {
  float lambd = alpha(c);
  int on = op2(c, "Or", op2(c, "Less", I(0), cf(c, -lambd)), op2(c, "Greater", I(0), cf(c, lambd)));
  return set0(c, where(c, on, GO(0), cf(c, 0.0f)));
}

/* ---- com.microsoft gradient ops --------------------------------------------------------------- */

typedef struct gop_spec {
  int form;
  int kind;        /* wt_ew_gradop for G_ACT / G_BIAS */
  float alpha;     /* default of attribute 'alpha' */
} gop_spec;

/* Input i has dtype `dtype` and, when like is given, dY's shape. */
static int expect(const wt_tensor *t, int i, const char *name, int dtype, const wt_tensor *like) {
  WT_TRY(wt_expect_dtype(t, name, i, dtype));
  return like ? wt_expect_shape_like(t, name, i, like, "dY") : WT_OK;
}

static int gop_infer(wt_infer_ctx *ctx) {
  const gop_spec *s = ctx->op->spec;
  gop_params *p = WT_PARAMS(ctx, gop_params);
  p->form = s->form;
  p->kind = s->kind;
  p->alpha = wt_attr_float(ctx->node, "alpha", s->alpha);
  const wt_tensor *dy = &ctx->in[0];
  WT_TRY(expect(dy, 0, "dY", WT_FLOAT, NULL));
  if (s->form == G_DROPOUT) {
    WT_TRY(expect(&ctx->in[1], 1, "mask", WT_BOOL, dy));
    if (wt_has_input(ctx->in, ctx->n_in, 2)) {
      WT_TRY(expect(&ctx->in[2], 2, "ratio", WT_FLOAT, NULL));
      if (wt_numel(&ctx->in[2]) != 1) return wt_errorf(WT_ERR_SHAPE, "input 'ratio' must be a scalar");
    }
    if (wt_has_input(ctx->in, ctx->n_in, 3)) {
      WT_TRY(expect(&ctx->in[3], 3, "training_mode", WT_BOOL, NULL));
      if (wt_numel(&ctx->in[3]) != 1)
        return wt_errorf(WT_ERR_SHAPE, "input 'training_mode' must be a scalar");
    }
  } else {
    WT_TRY(expect(&ctx->in[1], 1, "X", WT_FLOAT, dy));
  }
  if (s->form == G_BIAS) {
    const wt_tensor *b = &ctx->in[2];
    WT_TRY(expect(b, 2, "B", WT_FLOAT, NULL));
    if (b->rank != 1 || dy->rank < 1 || b->dims[0] != dy->dims[dy->rank - 1])
      return wt_errorf(WT_ERR_SHAPE, "input 'B' (index 2) must be 1-D and match the last dim of X");
  }
  wt_set_shape(&ctx->out[0], WT_FLOAT, dy->rank, dy->dims);
  return WT_OK;
}

/* The definitions and the family table, from the list in unary_ops.h. */
#define DEF_GOP(NAME, FORM, KIND, MIN_IN, MAX_IN, ALPHA)                                        \
  static const wt_op_def wt_op_##NAME = {                                                      \
      .domain = WT_MS, .op_type = #NAME, .min_inputs = MIN_IN, .max_inputs = MAX_IN,            \
      .min_outputs = 1, .max_outputs = 1, .infer = gop_infer,                                   \
      .flags = WT_OP_INPLACE | WT_OP_GRADIENT, .spec = &(const gop_spec){FORM, KIND, ALPHA}};
WT_UNARY_GRAD_OPS(DEF_GOP)

#define LIST_GOP(NAME, ...) &wt_op_##NAME,
const wt_op_def *const wt_ops_unary_grad[] = {WT_UNARY_GRAD_OPS(LIST_GOP) NULL};
