/* Finite-difference check of a gradient rule: builds the one-node graph
 *   loss = sum_j ReduceSum(Y_j * W_j)   (W_j fixed random weights, float outputs only)
 * differentiates it with webtrain's autodiff, runs it through the planner, and compares every
 * element of every differentiable input's gradient with a central difference
 * (L(x+eps) - L(x-eps)) / 2eps, accumulated in double:
 *   |analytic - numeric| <= atol + rtol * max(|analytic|, |numeric|).
 * The forward runs in float32, so eps is large-ish (default 1e-2) and inputs are chosen away
 * from kinks by the caller (lo/hi ranges, or explicit data). */
#ifndef WT_TESTS_GRADCHECK_H
#define WT_TESTS_GRADCHECK_H

#include "ir/ir.h"

typedef struct gc_arg {
  int dtype;                    /* WT_FLOAT (default when 0), WT_INT64, WT_INT32, WT_BOOL */
  int rank;
  int64_t dims[8];
  const void *data;             /* NULL: uniform random floats in [lo, hi] */
  float lo, hi;                 /* default [-1, 1] */
  int constant;                 /* not differentiated: stored as an initializer */
  int absent;                   /* an omitted optional input */
} gc_arg;

typedef struct gc_opts {
  int opset;                    /* default 17 */
  const char *domain;           /* default "" */
  int n_out;                    /* default 1 */
  double eps, rtol, atol;       /* defaults 1e-2, 2e-2, 2e-3 */
  unsigned seed;
} gc_opts;

typedef void (*gc_attrs_fn)(wt_graph *g, int node);

/* Attributes for the next checks: collect them, then pass gc_set_attrs as the attrs callback. */
void gc_attrs_reset(void);
void gc_attr_int(const char *name, int64_t v);
void gc_attr_float(const char *name, float v);
void gc_attr_string(const char *name, const char *v);
void gc_attr_ints(const char *name, int n, const int64_t *v);
void gc_attr_floats(const char *name, int n, const float *v);
void gc_set_attrs(wt_graph *g, int node);

/* Returns 0 when every gradient element matches; prints the first mismatches otherwise. */
int gradcheck(const char *label, const char *op_type, const gc_opts *opts, int n_in,
              const gc_arg *args, gc_attrs_fn attrs);

#endif
