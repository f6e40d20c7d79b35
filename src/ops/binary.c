/* Op family: binary elementwise ops with numpy broadcasting — arithmetic (Add Sub Mul Div Pow
 * Mod PRelu), variadic Min/Max/Sum/Mean, comparisons (Equal Less Greater LessOrEqual GreaterOrEqual), logic
 * (And Or Xor) and Where; their gradient rules, and com.microsoft DivGrad. The broadcast walk
 * and row kernels live in backend/cpu/elementwise.c (DivGrad's in backend/cpu/elementwise_grad.c). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "grad/grad.h"
#include "ops/dtype_set.h"
#include "ops/binary_ops.h"
#include "ops/elementwise_kinds.h"
#include "ops/op.h"

typedef struct bin_spec {
  int kind;
  int op;            /* wt_ew_binop / wt_ew_cmpop / wt_ew_logicop */
  unsigned dtypes;   /* allowed dtypes of the (first) data input */
} bin_spec;

static int check_dtype(const wt_tensor *t, int i, unsigned allowed) {
  if (dt_bit(t->dtype) & allowed) return WT_OK;
  return wt_errorf(WT_ERR_SHAPE, "input %d has dtype %s; expected %s", i,
                   wt_dtype_name(t->dtype), dt_list(allowed));
}

static int infer(wt_infer_ctx *ctx) {
  const bin_spec *s = ctx->op->spec;
  if (ctx->opset < 7 && wt_node_attr(ctx->node, "broadcast"))
    return wt_errorf(WT_ERR_UNSUPPORTED,
                     "legacy 'broadcast'/'axis' attributes (opset < 7) are not supported");
  bin_params *p = WT_PARAMS(ctx, bin_params);
  p->kind = s->kind == K_MEAN ? K_ARITH : s->kind;
  p->op = s->op;
  p->mean = s->kind == K_MEAN;
  if (s->op == WT_EW_PRELU && ctx->opset < 16 && ctx->in[0].dtype != WT_FLOAT)
    return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) has dtype %s; expected float before opset 16",
                     wt_dtype_name(ctx->in[0].dtype));
  int out_dtype = ctx->in[0].dtype;
  if (s->kind == K_WHERE) {
    WT_TRY(wt_expect_dtype(&ctx->in[0], "condition", 0, WT_BOOL));
    WT_TRY(check_dtype(&ctx->in[1], 1, s->dtypes));
    if (ctx->in[2].dtype != ctx->in[1].dtype)
      return wt_errorf(WT_ERR_SHAPE, "inputs 'X' and 'Y' have dtypes %s and %s; expected the same",
                       wt_dtype_name(ctx->in[1].dtype), wt_dtype_name(ctx->in[2].dtype));
    out_dtype = ctx->in[1].dtype;
  } else {
    for (int i = 0; i < ctx->n_in; i++) {
      if (!wt_has_input(ctx->in, ctx->n_in, i))
        return wt_errorf(WT_ERR_INVALID_ARG, "input %d is missing", i);
      WT_TRY(check_dtype(&ctx->in[i], i, s->dtypes));
      /* Pow's exponent (T1) may differ from the base type; everything else is homogeneous. */
      if (i > 0 && ctx->in[i].dtype != ctx->in[0].dtype && s->op != WT_EW_POW)
        return wt_errorf(WT_ERR_SHAPE, "input %d has dtype %s but input 0 has %s; expected the same",
                         i, wt_dtype_name(ctx->in[i].dtype), wt_dtype_name(ctx->in[0].dtype));
    }
    if (s->kind == K_CMP) out_dtype = WT_BOOL;
    if (s->op == WT_EW_MOD) {
      int fmod = (int)wt_attr_int(ctx->node, "fmod", 0);
      if (fmod != 0 && fmod != 1)
        return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'fmod' is %d; expected 0 or 1", fmod);
      if (!fmod && ctx->in[0].dtype == WT_FLOAT)
        return wt_errorf(WT_ERR_INVALID_ARG, "float Mod requires attribute fmod=1");
      p->op = fmod ? WT_EW_FMOD : WT_EW_MOD;
    }
  }
  const wt_tensor *ts[64];
  if (ctx->n_in > (int)(sizeof ts / sizeof ts[0]))
    return wt_errorf(WT_ERR_UNSUPPORTED, "%d inputs; at most %d supported", ctx->n_in,
                     (int)(sizeof ts / sizeof ts[0]));
  for (int i = 0; i < ctx->n_in; i++) ts[i] = &ctx->in[i];
  int rank;
  int64_t dims[WT_MAX_RANK];
  WT_TRY(wt_broadcast_shapes(ctx->n_in, ts, &rank, dims));
  if (s->op == WT_EW_PRELU && (rank != ctx->in[0].rank ||
                               wt_shape_numel(rank, dims) != wt_numel(&ctx->in[0]))) {
    char a[128], b[128];
    return wt_errorf(WT_ERR_SHAPE, "input 'slope' (index 1) has shape %s; expected a shape that broadcasts to X's %s",
                     wt_shape_str(ctx->in[1].rank, ctx->in[1].dims, b, sizeof b),
                     wt_shape_str(ctx->in[0].rank, ctx->in[0].dims, a, sizeof a));
  }
  wt_set_shape(&ctx->out[0], out_dtype, rank, dims);
  return WT_OK;
}

/* ---- gradient rules --------------------------------------------------------------------- */

/* dA = unbroadcast(dY), dB = unbroadcast(+-dY) */
static int add_sub_grad(wt_grad_ctx *c, int negate_b) {
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, wt_grad_unbroadcast(c, GO(0), 0, 0));
  if (wt_grad_need(c, 1)) {
    int d = negate_b ? wt_grad_op1(c, "Neg", "", 1, (int[]){GO(0)}) : GO(0);
    wt_grad_set(c, 1, wt_grad_unbroadcast(c, d, 0, 1));
  }
  return wt_grad_status(c);
}
static int add_grad(wt_grad_ctx *c) { return add_sub_grad(c, 0); }
static int sub_grad(wt_grad_ctx *c) { return add_sub_grad(c, 1); }

/* dA = unbroadcast(dY * B), dB = unbroadcast(dY * A) */
static int mul_grad(wt_grad_ctx *c) {
  for (int i = 0; i < 2; i++) {
    if (!wt_grad_need(c, i)) continue;
    int d = wt_grad_op1(c, "Mul", "", 2, (int[]){GO(0), I(1 - i)});
    wt_grad_set(c, i, wt_grad_unbroadcast(c, d, 0, i));
  }
  return wt_grad_status(c);
}

/* Sum(x0..xn): every input gets dY (unbroadcast). */
static int sum_grad(wt_grad_ctx *c) {
  for (int i = 0; i < wt_grad_node(c)->n_inputs; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, wt_grad_unbroadcast(c, GO(0), 0, i));
  return wt_grad_status(c);
}


/* Div: ONNX Runtime's DivGrad(dY, A, B) -> (dA, dB) when B needs a gradient (dA is then
 * computed even if unused, as in ONNX Runtime); dA = unbroadcast(dY / B) alone otherwise. */
static int div_grad(wt_grad_ctx *c) {
  if (!wt_grad_need(c, 1)) {
    wt_grad_set(c, 0, wt_grad_unbroadcast(c, wt_grad_op2(c, "Div", GO(0), I(1)), 0, 0));
    return wt_grad_status(c);
  }
  int outs[2];
  if (wt_grad_op(c, "DivGrad", WT_MS, 3, (int[]){GO(0), I(0), I(1)}, 2, outs) < 0)
    return wt_grad_status(c);
  if (wt_grad_need(c, 0)) wt_grad_set(c, 0, outs[0]);
  wt_grad_set(c, 1, outs[1]);
  return wt_grad_status(c);
}

/* Pow: dA = dY * B * A^(B - 1) (ONNX Runtime's); dB = dY * Y * log(A), taken as 0 where A == 0
 * (as PyTorch); meaningful for A > 0. An integer exponent is cast to float first. */
static int pow_grad(wt_grad_ctx *c) {
  int e = I(1);
  if (wt_grad_value(c, e)->dtype != WT_FLOAT) {
    e = wt_grad_op1(c, "Cast", "", 1, &e);
    if (e >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  }
  if (wt_grad_need(c, 0)) {
    int p = wt_grad_op2(c, "Pow", I(0), wt_grad_op2(c, "Sub", e, wt_grad_const_f32(c, 1.0f)));
    int d = wt_grad_op2(c, "Mul", GO(0), wt_grad_op2(c, "Mul", e, p));
    wt_grad_set(c, 0, wt_grad_unbroadcast(c, d, 0, 0));
  }
  if (wt_grad_need(c, 1)) {
    int zero = wt_grad_const_f32(c, 0.0f);
    int ylog = wt_grad_op2(c, "Mul", O(0), wt_grad_op1(c, "Log", "", 1, (int[]){I(0)}));
    int safe = wt_grad_op1(c, "Where", "", 3, (int[]){wt_grad_op2(c, "Equal", I(0), zero), zero, ylog});
    wt_grad_set(c, 1, wt_grad_unbroadcast(c, wt_grad_op2(c, "Mul", GO(0), safe), 0, 1));
  }
  return wt_grad_status(c);
}

/* Min / Max (ONNX Runtime's rule): input i gets dY * [x_i == y] / #{j : x_j == y}, so ties
 * share the gradient equally. */
static int min_max_grad(wt_grad_ctx *c) {
  int n = wt_grad_node(c)->n_inputs;
  if (n == 1) {
    wt_grad_set(c, 0, GO(0));
    return wt_grad_status(c);
  }
  int masks[64];
  for (int i = 0; i < n; i++) {
    int eq = wt_grad_op2(c, "Equal", I(i), O(0));
    masks[i] = wt_grad_op1(c, "Cast", "", 1, &eq);
    if (masks[i] >= 0) wt_grad_attr_int(c, wt_grad_last(c), "to", WT_FLOAT);
  }
  if (wt_grad_status(c)) return wt_grad_status(c);
  int count = wt_grad_op1(c, "Sum", "", n, masks);
  int scaled = wt_grad_op2(c, "Div", GO(0), count);
  for (int i = 0; i < n; i++)
    if (wt_grad_need(c, i))
      wt_grad_set(c, i, wt_grad_unbroadcast(c, wt_grad_op2(c, "Mul", scaled, masks[i]), 0, i));
  return wt_grad_status(c);
}

/* Mean: every input gets dY / n (unbroadcast). */
static int mean_grad(wt_grad_ctx *c) {
  int n = wt_grad_node(c)->n_inputs;
  int d = n == 1 ? GO(0) : wt_grad_op2(c, "Div", GO(0), wt_grad_const_f32(c, (float)n));
  for (int i = 0; i < n; i++)
    if (wt_grad_need(c, i)) wt_grad_set(c, i, wt_grad_unbroadcast(c, d, 0, i));
  return wt_grad_status(c);
}

/* PRelu: y = x < 0 ? x * slope : x. dX = x < 0 ? dY * slope : dY; dSlope = unbroadcast(x < 0 ?
 * dY * x : 0). */
static int prelu_grad(wt_grad_ctx *c) {
  int zero = wt_grad_const_f32(c, 0.0f);
  int neg = wt_grad_op2(c, "Less", I(0), zero);
  if (wt_grad_need(c, 0)) {
    int d = wt_grad_op1(c, "Where", "", 3, (int[]){neg, wt_grad_op2(c, "Mul", GO(0), I(1)), GO(0)});
    wt_grad_set(c, 0, d);
  }
  if (wt_grad_need(c, 1)) {
    int d = wt_grad_op1(c, "Where", "", 3, (int[]){neg, wt_grad_op2(c, "Mul", GO(0), I(0)), zero});
    wt_grad_set(c, 1, wt_grad_unbroadcast(c, d, 0, 1));
  }
  return wt_grad_status(c);
}

/* Where(cond, X, Y): X gets dY where cond, Y elsewhere (ONNX Runtime's), each unbroadcast. */
static int where_grad(wt_grad_ctx *c) {
  int zero = wt_grad_const_f32(c, 0.0f);
  for (int i = 1; i <= 2; i++) {
    if (!wt_grad_need(c, i)) continue;
    int ins[3] = {I(0), i == 1 ? GO(0) : zero, i == 1 ? zero : GO(0)};
    wt_grad_set(c, i, wt_grad_unbroadcast(c, wt_grad_op1(c, "Where", "", 3, ins), 0, i));
  }
  return wt_grad_status(c);
}

/* ---- DivGrad (com.microsoft): (dY, A, B) -> (dA, dB) ----------------------------------------- */

static int div_grad_infer(wt_infer_ctx *ctx) {
  const char *names[3] = {"dY", "A", "B"};
  for (int i = 0; i < 3; i++) WT_TRY(wt_expect_float(&ctx->in[i], names[i], i));
  const wt_tensor *ab[2] = {&ctx->in[1], &ctx->in[2]};
  int rank;
  int64_t dims[WT_MAX_RANK];
  WT_TRY(wt_broadcast_shapes(2, ab, &rank, dims));
  const wt_tensor *dy = &ctx->in[0];
  int same = rank == dy->rank;
  for (int i = 0; same && i < rank; i++) same = dims[i] == dy->dims[i];
  if (!same) {
    char a[128], b[128];
    return wt_errorf(WT_ERR_SHAPE, "input 'dY' has shape %s; expected A and B's broadcast shape %s",
                     wt_shape_str(dy->rank, dy->dims, a, sizeof a), wt_shape_str(rank, dims, b, sizeof b));
  }
  for (int o = 0; o < ctx->n_out; o++)
    wt_set_shape(&ctx->out[o], WT_FLOAT, ab[o]->rank, ab[o]->dims);
  return WT_OK;
}

static const wt_op_def wt_op_DivGrad = {.domain = WT_MS, .op_type = "DivGrad", .min_inputs = 3,
                                 .max_inputs = 3, .min_outputs = 1, .max_outputs = 2,
                                 .infer = div_grad_infer,
                                 .flags = WT_OP_GRADIENT};

#define BIN_DEF(NAME, KIND, OP, DTYPES, MIN_IN, MAX_IN, GRAD)                               \
  static const wt_op_def wt_op_##NAME = {                                                    \
      .domain = "", .op_type = #NAME, .min_inputs = MIN_IN, .max_inputs = MAX_IN,             \
      .min_outputs = 1, .max_outputs = 1, .infer = infer, .grad = GRAD,                       \
      .flags = WT_OP_INPLACE, .spec = &(const bin_spec){KIND, OP, DTYPES}};
BINARY_OPS(BIN_DEF)

#define BIN_LIST(NAME, ...) &wt_op_##NAME,
const wt_op_def *const wt_ops_binary[] = {BINARY_OPS(BIN_LIST) &wt_op_DivGrad, NULL};
