/* How Softmax-family ops see their input: [outer, n, inner] around `axis`. Before opset 13 the
 * input is coerced to 2-D at axis (n = every dim from axis on, inner = 1); from 13 the op runs
 * along that one axis. Shared by the forward ops and their gradient ops. */
#ifndef WT_OPS_SOFTMAX_LAYOUT_H
#define WT_OPS_SOFTMAX_LAYOUT_H

#include "base/status.h"
#include "base/tensor.h"

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

#endif
