/* Multidirectional (numpy-style) broadcasting of shapes, shared by the elementwise ops. */
#include <stdio.h>

#include "ops/op.h"

int wt_broadcast_shapes(int n, const wt_tensor *const *ts, int *rank, int64_t *dims) {
  int r = 0;
  for (int k = 0; k < n; k++)
    if (ts[k]->rank > r) r = ts[k]->rank;
  for (int i = 0; i < r; i++) {
    int64_t d = 1;
    for (int k = 0; k < n; k++) {
      int j = i - (r - ts[k]->rank);
      if (j < 0) continue;
      int64_t e = ts[k]->dims[j];
      if (e == d || e == 1) continue;
      if (d == 1) {
        d = e;
        continue;
      }
      char a[128], b[128];
      wt_shape_str(ts[0]->rank, ts[0]->dims, a, sizeof a);
      wt_shape_str(ts[k]->rank, ts[k]->dims, b, sizeof b);
      return wt_errorf(WT_ERR_SHAPE, "shapes %s and %s cannot be broadcast (dimension %d: %lld vs %lld)",
                       a, b, i, (long long)d, (long long)e);
    }
    dims[i] = d;
  }
  *rank = r;
  return WT_OK;
}
