/* The binary family's op list and params, shared by its definitions (binary.c) and its CPU
 * kernels (backend/cpu/run_binary.c). */
#ifndef WT_OPS_BINARY_OPS_H
#define WT_OPS_BINARY_OPS_H

#include <assert.h>

#include "ops/dtype_set.h"
#include "ops/elementwise_kinds.h"
#include "ops/op.h"

enum { K_ARITH, K_MEAN /* Sum, then divided by the input count */, K_CMP, K_LOGIC, K_WHERE };

/* The family's ops: one line each, the single source of their definitions (with their spec)
 * and the family table. X(Name, kind, kernel op, dtypes of the data inputs, min_in, max_in,
 * gradient rule or NULL) */
#define BINARY_OPS(X)                                            \
  X(Add, K_ARITH, WT_EW_ADD, DT_NUM, 2, 2, add_grad)             \
  X(Sub, K_ARITH, WT_EW_SUB, DT_NUM, 2, 2, sub_grad)             \
  X(Mul, K_ARITH, WT_EW_MUL, DT_NUM, 2, 2, mul_grad)             \
  X(Div, K_ARITH, WT_EW_DIV, DT_NUM, 2, 2, div_grad)             \
  X(Pow, K_ARITH, WT_EW_POW, DT_NUM, 2, 2, pow_grad)             \
  X(Mod, K_ARITH, WT_EW_MOD, DT_NUM, 2, 2, NULL)                 \
  X(Min, K_ARITH, WT_EW_MIN, DT_NUM, 1, 64, min_max_grad)        \
  X(Max, K_ARITH, WT_EW_MAX, DT_NUM, 1, 64, min_max_grad)        \
  X(Sum, K_ARITH, WT_EW_ADD, DT_F, 1, 64, sum_grad)              \
  X(Mean, K_MEAN, WT_EW_ADD, DT_F, 1, 64, mean_grad)             \
  X(PRelu, K_ARITH, WT_EW_PRELU, DT_NUM, 2, 2, prelu_grad)       \
  X(Equal, K_CMP, WT_EW_EQ, DT_NUM | DT_B, 2, 2, NULL)           \
  X(Less, K_CMP, WT_EW_LT, DT_NUM, 2, 2, NULL)                   \
  X(Greater, K_CMP, WT_EW_GT, DT_NUM, 2, 2, NULL)                \
  X(LessOrEqual, K_CMP, WT_EW_LE, DT_NUM, 2, 2, NULL)            \
  X(GreaterOrEqual, K_CMP, WT_EW_GE, DT_NUM, 2, 2, NULL)         \
  X(And, K_LOGIC, WT_EW_AND, DT_B, 2, 2, NULL)                   \
  X(Or, K_LOGIC, WT_EW_OR, DT_B, 2, 2, NULL)                     \
  X(Xor, K_LOGIC, WT_EW_XOR, DT_B, 2, 2, NULL)                   \
  X(Where, K_WHERE, 0, DT_NUM | DT_B, 3, 3, where_grad)

typedef struct bin_params {
  int kind;
  int op;
  int mean;  /* Mean: Sum, then divide by the input count */
} bin_params;
static_assert(sizeof(bin_params) <= WT_PARAMS_MAX, "params too large");

#endif
