/* One reduction pass, as the Reduce* definitions name it (reduce.c) and the kernels run it
 * (backend/cpu/reduce.h). Multi-pass reductions combine partial results with a follow-up kind
 * (see wt_reduce_next_kind) and a final step (divide by count, sqrt). */
#ifndef WT_OPS_REDUCE_KIND_H
#define WT_OPS_REDUCE_KIND_H

typedef enum wt_reduce_kind {
  WT_RED_SUM,
  WT_RED_SUMSQ,     /* sum of squares */
  WT_RED_ABSSUM,    /* sum of |x| */
  WT_RED_MAX,
  WT_RED_MIN,
  WT_RED_PROD,
  WT_RED_LOGSUMEXP  /* log(sum(exp(x))), computed as max + log(sum(exp(x - max))) */
} wt_reduce_kind;

#endif
