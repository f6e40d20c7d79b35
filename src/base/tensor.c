/* Shape arithmetic shared by every layer. */
#include "base/tensor.h"

#include <stdio.h>
#include <string.h>

int64_t wt_shape_numel(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  return n;
}

int64_t wt_numel(const wt_tensor *t) { return wt_shape_numel(t->rank, t->dims); }

size_t wt_nbytes(const wt_tensor *t) { return (size_t)wt_numel(t) * wt_dtype_size(t->dtype); }

int wt_same_shape(const wt_tensor *a, const wt_tensor *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

char *wt_shape_str(int rank, const int64_t *dims, char *buf, size_t cap) {
  size_t used = 0;
  if (cap == 0) return buf;
  buf[0] = '\0';
  used += (size_t)snprintf(buf + used, cap - used, "[");
  for (int i = 0; i < rank && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, i ? ",%lld" : "%lld", (long long)dims[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
  return buf;
}

void wt_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

int64_t wt_dims_prod(const int64_t *dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; i++) n *= dims[i];
  return n;
}

int wt_axis(int64_t axis, int rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  return (int)axis;
}

int64_t wt_get_int(const wt_tensor *t, int64_t i) {
  switch (t->dtype) {
    case WT_INT64: return ((const int64_t *)t->data)[i];
    case WT_INT32: return ((const int32_t *)t->data)[i];
    case WT_BOOL: return ((const uint8_t *)t->data)[i];
    case WT_FLOAT: return (int64_t)((const float *)t->data)[i];
    default: return 0;
  }
}

double wt_get_double(const wt_tensor *t, int64_t i) {
  switch (t->dtype) {
    case WT_FLOAT: return ((const float *)t->data)[i];
    case WT_INT64: return (double)((const int64_t *)t->data)[i];
    case WT_INT32: return ((const int32_t *)t->data)[i];
    case WT_BOOL: return ((const uint8_t *)t->data)[i];
    default: return 0;
  }
}
