/* A tensor view: dtype, shape and a data pointer it does not own.
 * Kernels and ops see only views; who owns the bytes is the planner's business. */
#ifndef WT_BASE_TENSOR_H
#define WT_BASE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"

#define WT_MAX_RANK 8

typedef struct wt_tensor {
  int dtype;                    /* wt_dtype; WT_UNDEFINED for an absent optional input */
  int rank;
  int64_t dims[WT_MAX_RANK];
  void *data;                   /* NULL when not (yet) known */
} wt_tensor;

/* Number of elements (1 for a scalar). */
int64_t wt_numel(const wt_tensor *t);
size_t wt_nbytes(const wt_tensor *t);
int64_t wt_shape_numel(int rank, const int64_t *dims);
/* Same rank and dims. */
int wt_same_shape(const wt_tensor *a, const wt_tensor *b);
/* Writes "[2,3,4]" into buf (always terminated). Returns buf. */
char *wt_shape_str(int rank, const int64_t *dims, char *buf, size_t cap);
/* Row-major strides (in elements) of dims. */
void wt_strides(int rank, const int64_t *dims, int64_t *strides);
/* Product of dims[begin..end). */
int64_t wt_dims_prod(const int64_t *dims, int begin, int end);
/* Normalizes a possibly negative axis for a tensor of `rank`; returns -1 when out of range. */
int wt_axis(int64_t axis, int rank);
/* Reads element i of an int32/int64 tensor as int64 (for shape-like inputs). */
int64_t wt_get_int(const wt_tensor *t, int64_t i);
/* Reads element i of a float/int/bool tensor as double. */
double wt_get_double(const wt_tensor *t, int64_t i);

#endif
