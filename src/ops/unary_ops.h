/* The unary family's op list: the one place an op of the family is named. unary.c generates
 * from it the op definitions (each with its spec: kernel kind, dtypes, float attributes) and the
 * family table, backend/cpu/run_unary*.c the CPU kernel tables; this header holds the params and
 * the declarations of the gradient rules (defined in unary_grad.c).
 * Adding an activation: one ACT line here, its float kernel (a wt_ew_unop of
 * ops/elementwise_kinds.h and its case in backend/cpu/elementwise_unary.c), its rule in
 * unary_grad.c, its tests.
 *
 *   ACT(Name, kind, dtypes, int_since, grad[, attrs])
 *       ai.onnx op Name: one input, one output, may run in place.
 *   OP(id, domain, "OpType", kind, dtypes, int_since, min_in, max_in, max_out, flags, grad[, attrs])
 *       any other op (id names the C definition wt_op_<id> and the rule wt_unary_grad_<id>).
 *   kind:      a float map of wt_ew_unop (WT_EW_*), or one of the family's own kinds below.
 *   dtypes:    DT_* set of input 0 (ops/dtype_set.h); int_since: the opset from which the
 *              int32/int64 members of dtypes are allowed (0: always).
 *   grad:      RULE (wt_unary_grad_<id>) or NO_RULE.
 *   attrs:     .alpha = {"name", default}, .beta = {...}: float attributes parsed into the
 *              kernel's alpha / beta (the rules read them from the spec too: one default).
 *
 *   GOP(Name, form, kernel, min_in, max_in, alpha) the com.microsoft gradient ops the rules emit. */
#ifndef WT_OPS_UNARY_OPS_H
#define WT_OPS_UNARY_OPS_H

#include <assert.h>
#include <stdint.h>

#include "ops/dtype_set.h"
#include "ops/elementwise_kinds.h"
#include "ops/op.h"

/* Op kinds beyond the float maps of wt_ew_unop. */
enum { K_NOT = WT_EW_UNOP_COUNT, K_CAST, K_CASTLIKE, K_IDENTITY, K_DROPOUT, K_ISNAN, K_ISINF,
       K_FASTGELU, K_BIASGELU };

#define UN_INPLACE WT_OP_INPLACE /* in the list below */
#define WT_UNARY_OPS(ACT, OP)                                                                      \
  ACT(Neg, WT_EW_NEG, DT_NUM, 6, RULE)                                                             \
  ACT(Abs, WT_EW_ABS, DT_NUM, 6, RULE)                                                             \
  ACT(Sign, WT_EW_SIGN, DT_NUM, 9, RULE)                                                           \
  OP(Relu, "", "Relu", WT_EW_RELU, DT_NUM, 14, 1, 1, 1, UN_INPLACE | WT_OP_RELU, RULE)             \
  OP(Clip, "", "Clip", WT_EW_CLIP, DT_NUM, 12, 1, 3, 1, UN_INPLACE, RULE)                          \
  ACT(Sqrt, WT_EW_SQRT, DT_F, 0, RULE)                                                             \
  ACT(Reciprocal, WT_EW_RECIPROCAL, DT_F, 0, RULE)                                                 \
  ACT(LeakyRelu, WT_EW_LEAKYRELU, DT_F, 0, RULE, .alpha = {"alpha", 0.01f})                        \
  ACT(Exp, WT_EW_EXP, DT_F, 0, RULE)                                                               \
  ACT(Log, WT_EW_LOG, DT_F, 0, RULE)                                                               \
  ACT(Sin, WT_EW_SIN, DT_F, 0, RULE)                                                               \
  ACT(Cos, WT_EW_COS, DT_F, 0, RULE)                                                               \
  ACT(Tanh, WT_EW_TANH, DT_F, 0, RULE)                                                             \
  ACT(Erf, WT_EW_ERF, DT_F, 0, RULE)                                                               \
  ACT(Sigmoid, WT_EW_SIGMOID, DT_F, 0, RULE)                                                       \
  ACT(Softplus, WT_EW_SOFTPLUS, DT_F, 0, RULE)                                                     \
  ACT(Softsign, WT_EW_SOFTSIGN, DT_F, 0, RULE)                                                     \
  ACT(Floor, WT_EW_FLOOR, DT_F, 0, RULE)                                                           \
  ACT(Ceil, WT_EW_CEIL, DT_F, 0, RULE)                                                             \
  ACT(Round, WT_EW_ROUND, DT_F, 0, RULE)                                                           \
  ACT(Elu, WT_EW_ELU, DT_F, 0, RULE, .alpha = {"alpha", 1.0f})                                     \
  ACT(Selu, WT_EW_SELU, DT_F, 0, RULE, .alpha = {"alpha", 1.67326319217681884765625f},             \
      .beta = {"gamma", 1.05070102214813232421875f})                                               \
  ACT(HardSigmoid, WT_EW_HARDSIGMOID, DT_F, 0, RULE,                                               \
      .alpha = {"alpha", 0.2f}, .beta = {"beta", 0.5f})                                            \
  ACT(HardSwish, WT_EW_HARDSWISH, DT_F, 0, RULE)                                                   \
  ACT(Gelu, WT_EW_GELU, DT_F, 0, RULE)                                                             \
  ACT(Mish, WT_EW_MISH, DT_F, 0, RULE)                                                             \
  ACT(Tan, WT_EW_TAN, DT_F, 0, RULE)                                                               \
  ACT(Asin, WT_EW_ASIN, DT_F, 0, RULE)                                                             \
  ACT(Acos, WT_EW_ACOS, DT_F, 0, RULE)                                                             \
  ACT(Atan, WT_EW_ATAN, DT_F, 0, RULE)                                                             \
  ACT(Sinh, WT_EW_SINH, DT_F, 0, RULE)                                                             \
  ACT(Cosh, WT_EW_COSH, DT_F, 0, RULE)                                                             \
  ACT(Asinh, WT_EW_ASINH, DT_F, 0, RULE)                                                           \
  ACT(Acosh, WT_EW_ACOSH, DT_F, 0, RULE)                                                           \
  ACT(Atanh, WT_EW_ATANH, DT_F, 0, RULE)                                                           \
  ACT(Celu, WT_EW_CELU, DT_F, 0, RULE, .alpha = {"alpha", 1.0f})                                   \
  ACT(ThresholdedRelu, WT_EW_THRESHOLDEDRELU, DT_F, 0, RULE, .alpha = {"alpha", 1.0f})             \
  ACT(Shrink, WT_EW_SHRINK, DT_F, 0, RULE, .alpha = {"lambd", 0.5f}, .beta = {"bias", 0.0f})       \
  ACT(Swish, WT_EW_QUICKGELU, DT_F, 0, RULE, .alpha = {"alpha", 1.0f}) /* opset 24 */              \
  ACT(IsNaN, K_ISNAN, DT_F, 0, NO_RULE)                                                            \
  ACT(IsInf, K_ISINF, DT_F, 0, NO_RULE)                                                            \
  ACT(Not, K_NOT, DT_B, 0, NO_RULE)                                                                \
  OP(Cast, "", "Cast", K_CAST, DT_ALL | DT_H, 0, 1, 1, 1, UN_INPLACE | WT_OP_WIDEN, RULE)           \
  OP(CastLike, "", "CastLike", K_CASTLIKE, DT_ALL, 0, 2, 2, 1, UN_INPLACE, RULE)                   \
  OP(Identity, "", "Identity", K_IDENTITY, DT_ALL, 0, 1, 1, 1, WT_OP_VIEW, RULE)                   \
  OP(Dropout, "", "Dropout", K_DROPOUT, DT_F, 0, 1, 3, 2, UN_INPLACE, RULE)                        \
  OP(MsGelu, "com.microsoft", "Gelu", WT_EW_GELU, DT_F, 0, 1, 1, 1, UN_INPLACE, RULE)              \
  OP(FastGelu, "com.microsoft", "FastGelu", K_FASTGELU, DT_F, 0, 1, 2, 1, UN_INPLACE, RULE)        \
  OP(BiasGelu, "com.microsoft", "BiasGelu", K_BIASGELU, DT_F, 0, 2, 2, 1, UN_INPLACE, RULE)        \
  OP(QuickGelu, "com.microsoft", "QuickGelu", WT_EW_QUICKGELU, DT_F, 0, 1, 1, 1, UN_INPLACE, RULE, \
      .alpha = {"alpha", 1.702f})

/* The com.microsoft gradient ops: dX = dY * f'(t) through wt_ew_grad_f32 (G_ACT), the same of
 * X + B (G_BIAS: Bias(Fast)GeluGrad_dX), DropoutGrad. alpha: the default of attribute 'alpha'. */
enum { G_ACT, G_BIAS, G_DROPOUT };
#define WT_UNARY_GRAD_OPS(GOP)                                                                     \
  GOP(ReluGrad, G_ACT, WT_EW_RELU_GRAD, 2, 2, 0)                                                   \
  GOP(SigmoidGrad, G_ACT, WT_EW_SIGMOID_GRAD, 2, 2, 0)                                             \
  GOP(TanhGrad, G_ACT, WT_EW_TANH_GRAD, 2, 2, 0)                                                   \
  GOP(LeakyReluGrad, G_ACT, WT_EW_LEAKYRELU_GRAD, 2, 2, 0.01f)                                     \
  GOP(GeluGrad, G_ACT, WT_EW_GELU_GRAD, 2, 2, 0)                                                   \
  GOP(FastGeluGrad, G_ACT, WT_EW_FASTGELU_GRAD, 2, 2, 0)                                           \
  GOP(QuickGeluGrad, G_ACT, WT_EW_QUICKGELU_GRAD, 2, 2, 1.702f)                                    \
  GOP(BiasGeluGrad_dX, G_BIAS, WT_EW_GELU_GRAD, 3, 3, 0)                                           \
  GOP(BiasFastGeluGrad_dX, G_BIAS, WT_EW_FASTGELU_GRAD, 3, 3, 0)                                   \
  GOP(DropoutGrad, G_DROPOUT, 0, 2, 4, 0)

/* A float attribute of the op: its name (NULL: none) and its default. */
typedef struct un_attr {
  const char *name;
  float dflt;
} un_attr;

/* What the op list says of one op (wt_op_def.spec). */
typedef struct un_spec {
  int kind;
  unsigned dtypes;
  int int_since;
  un_attr alpha, beta;
} un_spec;

/* What infer hands the kernels (backend/cpu/run_unary*.c): of the ops of the list ... */
typedef struct un_params {
  int kind;
  int to;             /* Cast / CastLike target dtype */
  float alpha, beta;  /* activation attributes; Clip bounds before opset 11 */
  int clip_inputs;    /* Clip opset >= 11: bounds come from inputs 1 and 2 */
  int bias;           /* FastGelu / BiasGelu: input 1 is a bias along the last axis */
  /* Dropout */
  int opset;
  int training;       /* opset < 12: fixed by attributes */
  float ratio;
  uint64_t seed;
} un_params;
static_assert(sizeof(un_params) <= WT_PARAMS_MAX, "params too large");

/* ... and of the gradient ops. */
typedef struct gop_params {
  int form, kind;
  float alpha;
} gop_params;

/* Gradient rules: declared for RULE entries. */
struct wt_grad_ctx;
#define WT_UNARY_DECL_RULE(ID) int wt_unary_grad_##ID(struct wt_grad_ctx *c);
#define WT_UNARY_DECL_NO_RULE(ID)
#define WT_UNARY_DECL_ACT(ID, KIND, DT, SINCE, GRAD, ...) WT_UNARY_DECL_##GRAD(ID)
#define WT_UNARY_DECL_OP(ID, DOM, TYPE, KIND, DT, SINCE, MIN_IN, MAX_IN, MAX_OUT, FLAGS, GRAD, ...) \
  WT_UNARY_DECL_##GRAD(ID)
WT_UNARY_OPS(WT_UNARY_DECL_ACT, WT_UNARY_DECL_OP)

#endif
