/* Lookup of a backend's kernels by the op they run (see backend.h). */
#include <string.h>

#include "backend/backend.h"

#define ENTRIES(kt, t, e) \
  for (const char *e = (kt)->tables[t]; ((const wt_kernel_key *)e)->op_type; e += (kt)->stride)

const void *wt_kernel_tables_find(const wt_kernel_tables *kt, const char *domain,
                                  const char *op_type) {
  if (!domain) domain = "";
  for (int t = 0; t < kt->n_tables; t++)
    ENTRIES(kt, t, e) {
      const wt_kernel_key *k = (const wt_kernel_key *)e;
      if (!strcmp(k->op_type, op_type) && !strcmp(k->domain, domain)) return e;
    }
  return NULL;
}

void wt_kernel_tables_each(const wt_kernel_tables *kt,
                           void (*fn)(const wt_kernel_key *key, void *user), void *user) {
  for (int t = 0; t < kt->n_tables; t++)
    ENTRIES(kt, t, e) fn((const wt_kernel_key *)e, user);
}
