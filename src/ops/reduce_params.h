/* The reduce family's params: what its ops' infer (src/ops/reduce.c) hands their kernels. */
#ifndef WT_OPS_REDUCE_PARAMS_H
#define WT_OPS_REDUCE_PARAMS_H

#include <assert.h>
#include <stdint.h>

#include "ops/op.h"
#include "ops/reduce_kind.h"

/* The Reduce* ops: one line each, the single source of their definitions and the family table.
 * X(Name, first pass kind, final step, opset from which axes is input 1, gradient rule or, for
 *   an op that has none by design, WT_NO_GRAD(why and what to do instead)) */
#define REDUCE_OPS(X)                                                                          \
  X(ReduceSum, WT_RED_SUM, FINAL_NONE, 13, WT_GRAD(reduce_sum_grad))                           \
  X(ReduceMean, WT_RED_SUM, FINAL_MEAN, 18, WT_GRAD(reduce_mean_grad))                         \
  X(ReduceMax, WT_RED_MAX, FINAL_NONE, 18, WT_GRAD(reduce_max_grad))                           \
  X(ReduceMin, WT_RED_MIN, FINAL_NONE, 18, WT_GRAD(reduce_max_grad))                           \
  X(ReduceProd, WT_RED_PROD, FINAL_NONE, 18,                                                   \
    WT_NO_GRAD("Y / X fails at zeros (ONNX Runtime has none either); write the product as "    \
               "Exp(ReduceSum(Log(X))) for positive X"))                                       \
  X(ReduceSumSquare, WT_RED_SUMSQ, FINAL_NONE, 18, WT_GRAD(reduce_sumsq_grad))                 \
  X(ReduceL1, WT_RED_ABSSUM, FINAL_NONE, 18, WT_GRAD(reduce_l1_grad))                          \
  X(ReduceL2, WT_RED_SUMSQ, FINAL_SQRT, 18, WT_GRAD(reduce_l2_grad))                           \
  X(ReduceLogSumExp, WT_RED_LOGSUMEXP, FINAL_NONE, 18, WT_GRAD(reduce_lse_grad))               \
  X(ReduceLogSum, WT_RED_SUM, FINAL_LOG, 18, WT_GRAD(reduce_logsum_grad))

enum { FINAL_NONE, FINAL_MEAN, FINAL_SQRT, FINAL_LOG };

typedef struct reduce_params {
  int kind;                       /* wt_reduce_kind of the first pass */
  int final;                      /* FINAL_* applied to the output */
  int noop;                       /* copy input to output */
  int n_pass;
  int64_t outer[WT_MAX_RANK], n[WT_MAX_RANK], inner[WT_MAX_RANK];
  int64_t count;                  /* reduced elements per output (for the mean) */
  int64_t buf0, buf1;             /* elements of the two ping-pong intermediates */
} reduce_params;
static_assert(sizeof(reduce_params) <= WT_PARAMS_MAX, "reduce_params too large");

typedef struct axis_params {
  int64_t outer, n, inner;
  int64_t k;                      /* TopK */
  int a, b;                       /* ArgMax: is_max, select_last; CumSum: exclusive, reverse;
                                     TopK: largest, sorted */
} axis_params;
static_assert(sizeof(axis_params) <= WT_PARAMS_MAX, "axis_params too large");

/* x as [outer, n, inner] around axis ax. */
static inline void split_at_axis(const wt_tensor *x, int ax, axis_params *p) {
  p->outer = wt_dims_prod(x->dims, 0, ax);
  p->n = x->dims[ax];
  p->inner = wt_dims_prod(x->dims, ax + 1, x->rank);
}

#endif
