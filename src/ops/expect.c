/* infer's shared input checks (op.h): one message and one error code per kind of mismatch. */
#include "ops/op.h"

int wt_expect_dtype(const wt_tensor *t, const char *name, int idx, int dtype) {
  if (t->dtype == dtype) return WT_OK;
  return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has dtype %s; expected %s", name, idx,
                   wt_dtype_name(t->dtype), wt_dtype_name(dtype));
}

int wt_expect_shape_like(const wt_tensor *t, const char *name, int idx, const wt_tensor *like,
                         const char *like_name) {
  int same = t->rank == like->rank;
  for (int i = 0; same && i < t->rank; i++) same = t->dims[i] == like->dims[i];
  if (same) return WT_OK;
  char a[128], b[128];
  return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has shape %s; expected %s's shape %s", name,
                   idx, wt_shape_str(t->rank, t->dims, a, sizeof a), like_name,
                   wt_shape_str(like->rank, like->dims, b, sizeof b));
}
