/* Printing a value's declared shape for messages: fixed dims as numbers, symbolic ones by name
 * ("[batch,784]"), unknown ones as '?'. */
#include <stdio.h>

#include "ir/ir.h"

char *wt_value_shape_str(const wt_value *v, char *buf, size_t cap) {
  size_t used = 0;
  if (cap == 0) return buf;
  if (v->rank < 0) {
    snprintf(buf, cap, "of unknown shape");
    return buf;
  }
  used += (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < v->rank && used < cap; d++) {
    const char *sep = d ? "," : "";
    if (v->dims[d] >= 0) used += (size_t)snprintf(buf + used, cap - used, "%s%lld", sep, (long long)v->dims[d]);
    else used += (size_t)snprintf(buf + used, cap - used, "%s%s", sep, wt_value_dim_param(v, d) ? wt_value_dim_param(v, d) : "?");
  }
  if (used < cap) snprintf(buf + used, cap - used, "]");
  return buf;
}
