/* How Softmax-family ops see their input: [outer, n, inner] around `axis`. Before opset 13 the
 * input is coerced to 2-D at axis (n = every dim from axis on, inner = 1); from 13 the op runs
 * along that one axis. Shared by the forward ops and their gradient ops. */
#ifndef WT_OPS_SOFTMAX_LAYOUT_H
#define WT_OPS_SOFTMAX_LAYOUT_H

#include <string.h>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/ir.h"
#include "ops/loss_reduction.h"

/* The plan-time parameters of (Log)Softmax and of their gradient ops. */
typedef struct wt_softmax_params {
  int64_t outer, n, inner;
  int log_out;
} wt_softmax_params;

static inline int wt_softmax_layout(const wt_tensor *x, int64_t axis, int coerce, int64_t *outer,
                                    int64_t *n, int64_t *inner) {
  /* Coercion allows axis == rank (an empty trailing block). */
  int ax = coerce && (axis == x->rank || (x->rank == 0 && axis == 0)) ? x->rank : wt_axis(axis, x->rank);
  if (ax < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
  *outer = wt_dims_prod(x->dims, 0, ax);
  if (coerce) {
    *n = wt_dims_prod(x->dims, ax, x->rank);
    *inner = 1;
  } else {
    *n = x->dims[ax];
    *inner = wt_dims_prod(x->dims, ax + 1, x->rank);
  }
  return WT_OK;
}

/* The loss ops' attribute 'reduction' (default mean) as WT_LOSS_*. */
static inline int wt_loss_reduction(const wt_node *n, int *reduction) {
  const char *red = wt_attr_string(n, "reduction", "mean");
  if (strcmp(red, "none") == 0) *reduction = WT_LOSS_NONE;
  else if (strcmp(red, "sum") == 0) *reduction = WT_LOSS_SUM;
  else if (strcmp(red, "mean") == 0) *reduction = WT_LOSS_MEAN;
  else return wt_errorf(WT_ERR_INVALID_ARG, "reduction '%s'; expected 'none', 'sum' or 'mean'", red);
  return WT_OK;
}

/* Cross-entropy inputs: scores (or log-probabilities) [N, C, d1...] float, labels [N, d1...]
 * int32/int64, optional weights [C] float. Gives N, C and D = d1*d2*... Names are for messages. */
static inline int wt_ce_layout(const wt_tensor *x, const char *xn, const wt_tensor *t, const char *tn,
                               const wt_tensor *w, const char *wn, int64_t *N, int64_t *C, int64_t *D) {
  char b1[96], b2[96];
  if (x->rank < 2)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has rank %d; expected [N, C, d1...] (rank >= 2)", xn, x->rank);
  if (t->dtype != WT_INT32 && t->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has dtype %s; expected int32 or int64", tn, wt_dtype_name(t->dtype));
  int ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
  for (int i = 1; ok && i < t->rank; i++) ok = t->dims[i] == x->dims[i + 1];
  if (!ok)
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has shape %s; expected [N, d1...] matching %s %s", tn,
                     wt_shape_str(t->rank, t->dims, b1, sizeof b1), xn, wt_shape_str(x->rank, x->dims, b2, sizeof b2));
  *N = x->dims[0];
  *C = x->dims[1];
  *D = wt_dims_prod(x->dims, 2, x->rank);
  if (w && (w->dtype != WT_FLOAT || w->rank != 1 || w->dims[0] != *C))
    return wt_errorf(WT_ERR_SHAPE, "input '%s' is %s %s; expected float [%lld]", wn, wt_dtype_name(w->dtype),
                     wt_shape_str(w->rank, w->dims, b1, sizeof b1), (long long)*C);
  return WT_OK;
}

#endif
