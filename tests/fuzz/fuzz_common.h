/* Shared by the libFuzzer targets: the control-byte prefix, input tensors for a graph's
 * declared inputs, and small checks that turn a broken invariant into a crash libFuzzer keeps. */
#ifndef WT_FUZZ_COMMON_H
#define WT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "base/tensor.h"
#include "io/onnx_io.h"
#include "ir/ir.h"

/* Targets that take options read this many control bytes before the model bytes. */
#define WT_FUZZ_CTRL 8
/* Fuzzed inputs stay small: the planner and kernels are exercised, not the machine's memory. */
#define WT_FUZZ_MAX_INPUT_ELEMS (1 << 16)

/* An invariant the code promises (e.g. what it writes, it reads back): abort so libFuzzer
 * saves the input. */
#define FUZZ_ASSERT(cond, what)                                                       \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "fuzz invariant failed: %s (%s) last error: %s\n", what, #cond, \
              wt_error_message());                                                    \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

/* Touch every byte of a result so ASan sees reads of freed or unallocated memory. */
static inline uint8_t wt_fuzz_touch(const void *p, size_t n) {
  const volatile uint8_t *b = (const volatile uint8_t *)p;
  uint8_t acc = 0;
  for (size_t i = 0; i < n; i++) acc ^= b[i];
  return acc;
}

typedef struct wt_fuzz_dims {
  const char *names[32];
  int64_t values[32];
  int n;
} wt_fuzz_dims;

/* Concrete value of a symbolic dim: the same name gets the same value everywhere. */
static inline int64_t wt_fuzz_dim(wt_fuzz_dims *m, const char *name, const uint8_t *ctrl, int k) {
  int64_t v = 1 + ctrl[4 + (k & 3)] % 4;
  if (!name) return v;
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->names[i], name)) return m->values[i];
  if (m->n < 32) {
    m->names[m->n] = name;
    m->values[m->n++] = v;
  }
  return v;
}

/* Tensors for the declared inputs of g (malloc'd data; free with wt_fuzz_free_inputs).
 * ctrl[3] bit 0: perturb one fixed dim, bit 1: float inputs hold NaN/Inf, bit 2: one input
 * gets a wrong dtype. Integer inputs hold small non-negative values (valid labels/indices,
 * mostly). Returns 0 when the inputs would be too large. */
static inline int wt_fuzz_tensors(const wt_value *const *vals, int n_vals, const uint8_t *ctrl,
                                  wt_fuzz_dims *dm, wt_tensor *ts) {
  for (int k = 0; k < n_vals; k++) {
    const wt_value *v = vals[k];
    wt_tensor *t = &ts[k];
    memset(t, 0, sizeof *t);
    t->dtype = v->dtype ? v->dtype : WT_FLOAT;
    if ((ctrl[3] & 4) && k == ctrl[2] % (n_vals ? n_vals : 1))
      t->dtype = t->dtype == WT_FLOAT ? WT_INT64 : WT_FLOAT;
    t->rank = v->rank >= 0 ? v->rank : 1 + ctrl[2] % 3;
    if (t->rank > WT_MAX_RANK) t->rank = WT_MAX_RANK;
    for (int i = 0; i < t->rank; i++) {
      if (v->rank >= 0 && v->dims[i] >= 0) t->dims[i] = v->dims[i];
      else t->dims[i] = wt_fuzz_dim(dm, v->rank >= 0 ? wt_value_dim_param(v, i) : NULL, ctrl, k + i);
    }
    if ((ctrl[3] & 1) && t->rank > 0 && k == 0) t->dims[ctrl[5] % t->rank] += 1;
  }
  for (int k = 0; k < n_vals; k++) {
    wt_tensor *t = &ts[k];
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
      if (t->dims[i] > WT_FUZZ_MAX_INPUT_ELEMS) return 0;
      n *= t->dims[i];
      if (n > WT_FUZZ_MAX_INPUT_ELEMS) return 0;
    }
  }
  for (int k = 0; k < n_vals; k++) {
    wt_tensor *t = &ts[k];
    int64_t n = wt_numel(t);
    size_t es = wt_dtype_size(t->dtype);
    if (!es) es = 1;
    t->data = calloc((size_t)n + 1, es);
    if (!t->data) return 0;
    for (int64_t i = 0; i < n; i++) {
      switch (t->dtype) {
        case WT_FLOAT: {
          float x = (float)((i * 7 + k * 3) % 11) / 11.0f - 0.5f;
          if ((ctrl[3] & 2) && i == 0) x = (ctrl[6] & 1) ? __builtin_nanf("") : __builtin_inff();
          ((float *)t->data)[i] = x;
          break;
        }
        case WT_INT32: ((int32_t *)t->data)[i] = (int32_t)((i + k) % 2); break;
        case WT_INT64: ((int64_t *)t->data)[i] = (int64_t)((i + k) % 2); break;
        case WT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(i & 1); break;
        default: break;
      }
    }
  }
  return 1;
}

static inline int wt_fuzz_inputs(const wt_graph *g, const uint8_t *ctrl, wt_fuzz_dims *dm,
                                 wt_tensor *ts) {
  const wt_value *vals[64];
  if (g->n_inputs > 64) return 0;
  for (int k = 0; k < g->n_inputs; k++) vals[k] = &g->values[g->inputs[k]];
  return wt_fuzz_tensors(vals, g->n_inputs, ctrl, dm, ts);
}

static inline void wt_fuzz_free_inputs(wt_tensor *ts, int n) {
  for (int k = 0; k < n; k++) free(ts[k].data);
}

/* Splits a target's input into the control bytes (*ctrl) and the model bytes, and reads the
 * model: its graph, or NULL (error cleared) when the bytes are no model. */
static inline wt_graph *wt_fuzz_model(const uint8_t *data, size_t size, const uint8_t **ctrl,
                                      const uint8_t **model, size_t *model_len) {
  static const uint8_t zero[WT_FUZZ_CTRL];
  *ctrl = size < WT_FUZZ_CTRL ? zero : data;
  *model = size < WT_FUZZ_CTRL ? data : data + WT_FUZZ_CTRL;
  *model_len = size < WT_FUZZ_CTRL ? 0 : size - WT_FUZZ_CTRL;
  wt_graph *g = NULL;
  if (wt_onnx_read(*model, *model_len, NULL, &g) != WT_OK) {
    wt_error_clear();
    return NULL;
  }
  return g;
}

#endif
