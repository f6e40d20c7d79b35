/* The elementwise maps by kind: what an elementwise op's spec names (unary_ops.h, binary.c)
 * and its kernels apply (backend/cpu/elementwise.h). */
#ifndef WT_OPS_ELEMENTWISE_KINDS_H
#define WT_OPS_ELEMENTWISE_KINDS_H

/* Binary arithmetic. */
typedef enum wt_ew_binop {
  WT_EW_ADD, WT_EW_SUB, WT_EW_MUL, WT_EW_DIV, WT_EW_MIN, WT_EW_MAX, WT_EW_POW,
  WT_EW_MOD,   /* integer: result has the divisor's sign (Python %) */
  WT_EW_FMOD,  /* C fmod / %: result has the dividend's sign */
  WT_EW_PRELU  /* a < 0 ? a * b : a */
} wt_ew_binop;

/* Comparisons (bool results). */
typedef enum wt_ew_cmpop { WT_EW_EQ, WT_EW_LT, WT_EW_GT, WT_EW_LE, WT_EW_GE } wt_ew_cmpop;

/* Logic on bools. */
typedef enum wt_ew_logicop { WT_EW_AND, WT_EW_OR, WT_EW_XOR } wt_ew_logicop;

/* Float unary maps y = f(x). */
typedef enum wt_ew_unop {
  WT_EW_NEG, WT_EW_ABS, WT_EW_SQRT, WT_EW_RELU, WT_EW_RECIPROCAL,
  WT_EW_LEAKYRELU,    /* alpha */
  WT_EW_CLIP,         /* alpha = min, beta = max */
  WT_EW_EXP, WT_EW_LOG, WT_EW_SIN, WT_EW_COS, WT_EW_TANH, WT_EW_ERF, WT_EW_SIGMOID,
  WT_EW_SOFTPLUS, WT_EW_SOFTSIGN, WT_EW_FLOOR, WT_EW_CEIL, WT_EW_ROUND, WT_EW_SIGN,
  WT_EW_ELU,          /* alpha */
  WT_EW_SELU,         /* alpha, gamma = beta */
  WT_EW_HARDSIGMOID,  /* alpha, beta */
  WT_EW_HARDSWISH,
  WT_EW_GELU,         /* exact (erf) form */
  WT_EW_GELU_TANH,    /* tanh approximation */
  WT_EW_MISH,
  WT_EW_TAN, WT_EW_ASIN, WT_EW_ACOS, WT_EW_ATAN, WT_EW_SINH, WT_EW_COSH, WT_EW_ASINH,
  WT_EW_ACOSH, WT_EW_ATANH,
  WT_EW_CELU,         /* alpha */
  WT_EW_THRESHOLDEDRELU, /* alpha */
  WT_EW_SHRINK,       /* alpha = lambd, beta = bias */
  WT_EW_QUICKGELU,    /* x * sigmoid(alpha * x) (com.microsoft QuickGelu) */
  WT_EW_UNOP_COUNT
} wt_ew_unop;

/* Activation gradients dx = dy * f'(.) (ONNX Runtime's com.microsoft *Grad ops); t is the
 * forward input X or output Y, as noted. */
typedef enum wt_ew_gradop {
  WT_EW_RELU_GRAD,       /* t = X (or Y): t > 0 ? dy : 0 */
  WT_EW_SIGMOID_GRAD,    /* t = Y: dy * y * (1 - y) */
  WT_EW_TANH_GRAD,       /* t = Y: dy * (1 - y * y) */
  WT_EW_LEAKYRELU_GRAD,  /* t = Y: y > 0 ? dy : alpha * dy */
  WT_EW_GELU_GRAD,       /* t = X: exact (erf) Gelu */
  WT_EW_FASTGELU_GRAD,   /* t = X: tanh-approximated Gelu */
  WT_EW_QUICKGELU_GRAD   /* t = X: x * sigmoid(alpha * x) */
} wt_ew_gradop;

#endif
