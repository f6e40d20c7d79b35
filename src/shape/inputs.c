/* The caller's inputs against the graph's declared ones (wt_check_inputs, see shape.h): every
 * plan is built, and every run fed, only after this. */
#include <stdio.h>
#include <string.h>

#include "shape/shape.h"

int wt_check_inputs(const wt_graph *g, int n_inputs, const wt_tensor *in) {
  if (n_inputs != g->n_inputs)
    return wt_errorf(WT_ERR_INVALID_ARG, "the model takes %d inputs; %d were given", g->n_inputs,
                     n_inputs);
  /* Symbolic dims with the same name must agree across inputs ("batch"). */
  const char *sym_name[64];
  int64_t sym_value[64];
  int n_sym = 0;
  for (int k = 0; k < n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    char want[256], got[256];
    if (v->flags & WT_VALUE_SEQUENCE)
      return wt_errorf(WT_ERR_UNSUPPORTED, "input '%s' is a sequence of tensors: only optimizer "
                       "models take sequences (load them as an optimizer)", v->name);
    if (!wt_dtype_supported(in[k].dtype))
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has dtype %s; expected %s", v->name,
                       wt_dtype_name(in[k].dtype), wt_dtype_name(v->dtype));
    if (v->dtype && in[k].dtype != v->dtype)
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has dtype %s; expected %s", v->name,
                       wt_dtype_name(in[k].dtype), wt_dtype_name(v->dtype));
    if (in[k].rank < 0 || in[k].rank > WT_MAX_RANK)
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has rank %d; at most %d is supported",
                       v->name, in[k].rank, WT_MAX_RANK);
    for (int d = 0; d < in[k].rank; d++)
      if (in[k].dims[d] < 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has a negative dimension", v->name);
    /* the product bounded, zero dims counted as 1 (a zero does not excuse a huge dim: strides) */
    int64_t numel = 1;
    int ok = 1;
    for (int d = 0; d < in[k].rank && ok; d++) {
      int64_t x = in[k].dims[d] ? in[k].dims[d] : 1;
      ok = numel <= WT_MAX_ELEMS / x;
      numel *= x;
    }
    if (!ok) {
      wt_shape_str(in[k].rank, in[k].dims, got, sizeof got);
      return wt_errorf(WT_ERR_SHAPE, "input '%s' has shape %s: more than 2^40 elements", v->name,
                       got);
    }
    if (v->rank < 0) continue;
    int bad = v->rank != in[k].rank;
    for (int d = 0; !bad && d < v->rank; d++) {
      if (v->dims[d] >= 0) {
        bad = v->dims[d] != in[k].dims[d];
      } else if (wt_value_dim_param(v, d)) {
        int s = 0;
        while (s < n_sym && strcmp(sym_name[s], wt_value_dim_param(v, d)) != 0) s++;
        if (s < n_sym) bad = sym_value[s] != in[k].dims[d];
        else if (n_sym < 64) {
          sym_name[n_sym] = wt_value_dim_param(v, d);
          sym_value[n_sym++] = in[k].dims[d];
        }
      }
    }
    if (!bad) continue;
    size_t used = 0;
    used += (size_t)snprintf(want + used, sizeof want - used, "[");
    for (int d = 0; d < v->rank && used < sizeof want; d++) {
      if (v->dims[d] >= 0)
        used += (size_t)snprintf(want + used, sizeof want - used, d ? ",%lld" : "%lld",
                                 (long long)v->dims[d]);
      else
        used += (size_t)snprintf(want + used, sizeof want - used, d ? ",%s" : "%s",
                                 wt_value_dim_param(v, d) ? wt_value_dim_param(v, d) : "?");
    }
    if (used < sizeof want) snprintf(want + used, sizeof want - used, "]");
    wt_shape_str(in[k].rank, in[k].dims, got, sizeof got);
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has shape %s; expected %s", v->name, got, want);
  }
  return WT_OK;
}
