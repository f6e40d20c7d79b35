/* Gradient rules of the unary family (defined in unary_grad.c, named by the op definitions in
 * unary.c) and the com.microsoft gradient ops they emit (listed in unary.c's table). */
#ifndef WT_OPS_UNARY_GRAD_H
#define WT_OPS_UNARY_GRAD_H

#include "ops/op.h"

struct wt_grad_ctx;

#define WT_UNARY_GRAD_RULES(X)                                                                   \
  X(Neg) X(Abs) X(Sign) X(Relu) X(Clip) X(Sqrt) X(Reciprocal) X(LeakyRelu) X(Exp) X(Log) X(Sin) \
  X(Cos) X(Tanh) X(Erf) X(Sigmoid) X(Softplus) X(Softsign) X(Floor) X(Ceil) X(Round) X(Elu)     \
  X(Selu) X(HardSigmoid) X(HardSwish) X(Gelu) X(Mish) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh)    \
  X(Cosh) X(Asinh) X(Acosh) X(Atanh) X(Celu) X(ThresholdedRelu) X(Shrink) X(Cast) X(CastLike)    \
  X(Identity) X(Dropout) X(FastGelu) X(BiasGelu) X(QuickGelu)

#define WT_UNARY_GRAD_DECLARE(NAME) int wt_unary_grad_##NAME(struct wt_grad_ctx *c);
WT_UNARY_GRAD_RULES(WT_UNARY_GRAD_DECLARE)
#undef WT_UNARY_GRAD_DECLARE

extern const wt_op_def wt_op_ReluGrad, wt_op_SigmoidGrad, wt_op_TanhGrad, wt_op_LeakyReluGrad,
    wt_op_GeluGrad, wt_op_FastGeluGrad, wt_op_QuickGeluGrad, wt_op_BiasGeluGrad_dX,
    wt_op_BiasFastGeluGrad_dX, wt_op_DropoutGrad;

#define WT_UNARY_GRAD_OPS                                                                    \
  &wt_op_ReluGrad, &wt_op_SigmoidGrad, &wt_op_TanhGrad, &wt_op_LeakyReluGrad, &wt_op_GeluGrad, \
      &wt_op_FastGeluGrad, &wt_op_QuickGeluGrad, &wt_op_BiasGeluGrad_dX,                      \
      &wt_op_BiasFastGeluGrad_dX, &wt_op_DropoutGrad,

#endif
