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
  int type;                    /* 1 int, 2 float, 3 string */
  int64_t i;
  float f;
  char *s;
} wt_prop;

struct wt_state {
  wt_param *params;
  int n_params;
  int has_optimizer;           /* optimizer state present (loaded or created) */
  int n_moments;               /* 1 (SGD) or 2 (AdamW) when has_optimizer */
  int64_t step;
  float initial_lr;
  wt_prop *props;
  int n_props;
};

wt_param *wt_state_find(const wt_state *s, const char *name);

#endif
