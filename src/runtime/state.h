/* Checkpoint state internals shared by the module and the optimizer. */
#ifndef WT_RUNTIME_STATE_H
#define WT_RUNTIME_STATE_H

#include "base/tensor.h"
#include "ir/ir.h"
#include "webtrain.h"

typedef struct wt_param {
  char *name;
  int requires_grad;
  wt_tensor t;                 /* data owned */
  float *grad;                 /* trainable: gradient accumulation buffer (owned) */
  float *m, *v;                /* optimizer moments, NULL until an optimizer needs them */
} wt_param;

typedef struct wt_prop {
  char *name;
  int type;                    /* enum wt_property_type */
  int64_t i;
  float f;
  char *s;
} wt_prop;

struct wt_state {
  wt_param *params;
  int n_params;
  /* Logical order of the parameters (a permutation of params[], NULL = as stored): the order of
   * the training model's parameter inputs once a module is created, as ONNX Runtime orders
   * them for GetParametersSize / CopyParametersToBuffer / CopyBufferToParameters, so that a
   * contiguous parameter buffer means the same in both runtimes. Index-based accessors
   * (wt_state_param_*) and the contiguous buffer follow it. */
  int *order;
  int has_optimizer;           /* optimizer state present (loaded or created) */
  int n_moments;               /* 1 (SGD) or 2 (AdamW) when has_optimizer */
  int bad_grads;               /* the last train step's loss was not finite: no update until a good step */
  int64_t step;
  float initial_lr;
  wt_prop *props;
  int n_props;
};

wt_param *wt_state_find(const wt_state *s, const char *name);
/* wt_state_load that takes `bytes` (malloc'd) and frees it once parsed, before allocating the
 * gradient buffers, which can then reuse its memory: no checkpoint-sized hole in the heap. */
int wt_state_load_owned(uint8_t *bytes, size_t len, wt_state **out);
/* Orders the parameters as the given names (graph inputs; names that are not parameters are
 * skipped), the others after them in their current order. */
int wt_state_set_order(wt_state *s, const char *const *names, int n_names);

#endif
