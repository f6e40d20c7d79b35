/* Einsum kernels (see einsum.h). */
#include "backend/cpu/einsum.h"

#include <string.h>

#define EINSUM_LOOP(T, ACC)                                                                  \
  do {                                                                                       \
    T *out = y;                                                                              \
    int64_t oc[WT_EINSUM_MAX_IDS] = {0}, sc[WT_EINSUM_MAX_IDS] = {0};                        \
    int64_t base[WT_EINSUM_MAX_OPS] = {0}, off[WT_EINSUM_MAX_OPS];                           \
    for (int64_t o = 0; o < n_out_el; o++) {                                                 \
      ACC acc = 0;                                                                           \
      for (int k = 0; k < n_ops; k++) off[k] = base[k];                                      \
      for (int64_t s = 0; s < n_sum; s++) {                                                  \
        ACC p = (ACC)((const T *)ops[0])[off[0]];                                            \
        for (int k = 1; k < n_ops; k++) p *= (ACC)((const T *)ops[k])[off[k]];               \
        acc += p;                                                                            \
        for (int i = n_ids - 1; i >= n_out; i--) {                                           \
          for (int k = 0; k < n_ops; k++) off[k] += strides[k][i];                           \
          if (++sc[i] < dims[i]) break;                                                      \
          for (int k = 0; k < n_ops; k++) off[k] -= strides[k][i] * dims[i];                 \
          sc[i] = 0;                                                                         \
        }                                                                                    \
      }                                                                                      \
      out[o] = (T)acc;                                                                       \
      for (int i = n_out - 1; i >= 0; i--) {                                                 \
        for (int k = 0; k < n_ops; k++) base[k] += strides[k][i];                            \
        if (++oc[i] < dims[i]) break;                                                        \
        for (int k = 0; k < n_ops; k++) base[k] -= strides[k][i] * dims[i];                  \
        oc[i] = 0;                                                                           \
      }                                                                                      \
    }                                                                                        \
  } while (0)

void wt_einsum_generic(int dtype, int n_ops, const void *const *ops,
                       const int64_t (*strides)[WT_EINSUM_MAX_IDS], int n_ids, int n_out,
                       const int64_t *dims, void *y) {
  int64_t n_out_el = 1, n_sum = 1;
  for (int i = 0; i < n_out; i++) n_out_el *= dims[i];
  for (int i = n_out; i < n_ids; i++) n_sum *= dims[i];
  if (n_out_el == 0) return;
  if (dtype == 1) EINSUM_LOOP(float, double);
  else if (dtype == 6) EINSUM_LOOP(int32_t, int64_t);
  else EINSUM_LOOP(int64_t, int64_t);
}

void wt_strided_copy_f32(const float *src, int rank, const int64_t *dims, const int64_t *strides,
                         float *dst) {
  int64_t total = 1;
  for (int d = 0; d < rank; d++) total *= dims[d];
  if (total == 0) return;
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  int64_t inner = dims[rank - 1], is = strides[rank - 1];
  int64_t c[WT_EINSUM_MAX_IDS] = {0}, off = 0;
  for (int64_t done = 0; done < total; done += inner) {
    const float *s = src + off;
    if (is == 1) memcpy(dst, s, sizeof(float) * (size_t)inner);
    else
      for (int64_t i = 0; i < inner; i++) dst[i] = s[i * is];
    dst += inner;
    for (int d = rank - 2; d >= 0; d--) {
      off += strides[d];
      if (++c[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      c[d] = 0;
    }
  }
}
