/* Helpers shared by the shape / data op families (shape.c, shape_build.c, data.c,
 * data_index.c): reading shape-determining inputs at plan time, axis lists, dtype checks. */
#ifndef WT_OPS_SHAPE_UTIL_H
#define WT_OPS_SHAPE_UTIL_H

#include "ops/op.h"

/* Reads the values of int32/int64 input i (rank 0 or 1, at most max values) at plan time.
 * An empty input needs no data; otherwise the value must be known before the run (else
 * WT_ERR_UNSUPPORTED naming `name`). */
int wt_su_known_ints(wt_infer_ctx *ctx, int i, const char *name, int max, int64_t *vals, int *n);

/* Normalizes n axes (negative counts from the end) for a tensor of `rank` into out[], checking
 * range and duplicates; `what` names the list in errors ("attribute 'axes'"). */
int wt_su_axes(const int64_t *axes, int n, int rank, const char *what, int *out);

/* Element size of input i's dtype, or 0 after setting an error for an unsupported dtype. */
size_t wt_su_elem(const wt_infer_ctx *ctx, int i);

/* Error unless input i is int32 or int64 (index tensors). */
int wt_su_index_dtype(const wt_infer_ctx *ctx, int i, const char *name);

/* For shapes a and b (int64 1-D), the axes of their broadcast result that each must be summed
 * over (ONNX Runtime's order: from the last axis down), for BroadcastGradientArgs: its infer
 * (folded at plan time: its inputs come from Shape) and its kernel. Returns the error for shapes
 * that do not broadcast. */
int wt_su_broadcast_axes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *ax,
                         int *nax, int64_t *bx, int *nbx);

/* Reads element k of an int32/int64 tensor. */
static inline int64_t wt_su_idx(const void *data, int is64, int64_t k) {
  return is64 ? ((const int64_t *)data)[k] : (int64_t)((const int32_t *)data)[k];
}

#endif
