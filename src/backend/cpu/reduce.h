/* Reduction kernels over a tensor viewed as [outer, n, inner] (reduce the middle dim), plus
 * arg-extremum, cumulative sum and top-k along one axis of the same view. Ops collapse their
 * axes into this view (several reduced blocks become several passes); kernels know no nodes. */
#ifndef WT_KERNELS_REDUCE_H
#define WT_KERNELS_REDUCE_H

#include <stdint.h>

#include "ops/reduce_kind.h"

/* The kind that combines partial results of `first` (e.g. SUMSQ partials are then summed). */
wt_reduce_kind wt_reduce_next_kind(wt_reduce_kind first);

/* y[o, i] = reduce_r x[o, r, i]. n may be 0 (identity: 0, 1, -inf, +inf). */
void wt_reduce_f32(wt_reduce_kind k, const float *x, int64_t outer, int64_t n, int64_t inner,
                   float *y);
void wt_reduce_i32(wt_reduce_kind k, const int32_t *x, int64_t outer, int64_t n, int64_t inner,
                   int32_t *y);
void wt_reduce_i64(wt_reduce_kind k, const int64_t *x, int64_t outer, int64_t n, int64_t inner,
                   int64_t *y);

/* Index along the middle dim of the max (is_max) or min; ties: first index, or the last one
 * with select_last. n must be >= 1. */
void wt_argext_f32(const float *x, int64_t outer, int64_t n, int64_t inner, int is_max,
                   int select_last, int64_t *y);
void wt_argext_i32(const int32_t *x, int64_t outer, int64_t n, int64_t inner, int is_max,
                   int select_last, int64_t *y);
void wt_argext_i64(const int64_t *x, int64_t outer, int64_t n, int64_t inner, int is_max,
                   int select_last, int64_t *y);

/* Cumulative sum along the middle dim; exclusive shifts by one (first element 0), reverse
 * sums from the end. */
void wt_cumsum_f32(const float *x, int64_t outer, int64_t n, int64_t inner, int exclusive,
                   int reverse, float *y);
void wt_cumsum_i32(const int32_t *x, int64_t outer, int64_t n, int64_t inner, int exclusive,
                   int reverse, int32_t *y);
void wt_cumsum_i64(const int64_t *x, int64_t outer, int64_t n, int64_t inner, int exclusive,
                   int reverse, int64_t *y);

/* Top k along the middle dim: values [outer, k, inner] and their int64 indices. Ties keep the
 * smaller index first. `sorted` == 0 still returns sorted order (allowed by the spec).
 * scratch: 2 * n int64. dtype: WT_FLOAT / WT_INT32 / WT_INT64 for x and values. */
void wt_topk(int dtype, const void *x, int64_t outer, int64_t n, int64_t inner, int64_t k,
             int largest, void *values, int64_t *indices, int64_t *scratch);

#endif
