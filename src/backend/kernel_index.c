/* Sorted lookup of a backend's kernels by the op they run (see backend.h). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

static int cmp_key(const void *a, const void *b) {
  const wt_kernel_key *x = *(const wt_kernel_key *const *)a, *y = *(const wt_kernel_key *const *)b;
  int c = strcmp(x->domain, y->domain);
  return c ? c : strcmp(x->op_type, y->op_type);
}

static void build(wt_kernel_index *ix) {
  int n = 0;
  for (int t = 0; t < ix->n_tables; t++)
    for (const char *e = ix->tables[t]; ((const wt_kernel_key *)e)->op_type; e += ix->stride)
      if (n < ix->cap) ix->sorted[n++] = (const wt_kernel_key *)e;
  qsort(ix->sorted, (size_t)n, sizeof ix->sorted[0], cmp_key);
  ix->count = n;
}

const void *wt_kernel_index_find(wt_kernel_index *ix, const char *domain, const char *op_type) {
  if (ix->count < 0) build(ix);
  wt_kernel_key key = {.domain = domain ? domain : "", .op_type = op_type};
  const wt_kernel_key *kp = &key;
  const wt_kernel_key *const *hit =
      bsearch(&kp, ix->sorted, (size_t)ix->count, sizeof ix->sorted[0], cmp_key);
  return hit ? *hit : NULL;
}

void wt_kernel_index_each(wt_kernel_index *ix, void (*fn)(const wt_kernel_key *key, void *user),
                          void *user) {
  if (ix->count < 0) build(ix);
  for (int i = 0; i < ix->count; i++) fn(ix->sorted[i], user);
}
