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
  /* A LoRA adapter's A or B (WT_VALUE_LORA_A / _B, ir.h), as the training model of a module
   * over the state marks its input (module.c); 0: none, or no module yet. */
  uint8_t lora;
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
  int grad_pending;            /* a train step computed gradients the optimizer has not applied */
  int64_t step;
  /* Bumped whenever parameters are written other than by the optimizer (loads, updates, copies
   * from a buffer): a module's frozen weights packed once (backend/cpu/gemm_prepack.h) are packed
   * again when it changed. */
  uint32_t params_gen;
  float initial_lr;
  wt_prop *props;
  int n_props;
  /* After a load with external data: the parameter and moment buffers still to be filled from
   * the external data file (wt_state_load_ext), until wt_state_pending_done. */
  struct wt_ckpt_segment *pending;
  int n_pending;
  /* The checkpoint bytes a load took (wt_state_load_owned): parameters and moments read in
   * place point into them. NULL when none does. */
  uint8_t *backing;
  size_t backing_len;
  /* The training graph of a module over this state, while it lives (wt_module_create sets it,
   * wt_module_free clears it): its weights held by reference (a frozen base in external data,
   * in no checkpoint) are part of the base a trainable-only checkpoint is fingerprinted with. */
  const struct wt_graph *base_graph;
};

wt_param *wt_state_find(const wt_state *s, const char *name);
/* Parameter i (in the state's logical order) as a tensor of any dtype (a float16 frozen weight
 * too, which wt_state_param_data does not give), or NULL. */
const wt_tensor *wt_state_param_tensor(const wt_state *s, int32_t i);
/* wt_state_load that takes `bytes` (malloc'd): the parameters (and moments) stay in it, read in
 * place where aligned, and it is kept as their storage (freed at once when nothing lies in it):
 * loading holds them once, no checkpoint-sized hole in the heap. */
int wt_state_load_owned(uint8_t *bytes, size_t len, wt_state **out);
/* wt_state_load(_owned) of a checkpoint that may keep tensors in an external data file of
 * ext_len bytes (io/checkpoint.h): their buffers are allocated and listed in s->pending; the
 * caller fills each (data, nbytes) from the file at its offset, then calls
 * wt_state_pending_done. A state with pending buffers must not be used before that. */
int wt_state_load_ext(const uint8_t *bytes, size_t len, uint8_t *owned, uint64_t ext_len,
                      wt_state **out);
void wt_state_pending_done(wt_state *s);
/* wt_state_save with every tensor of WT_CKPT_EXTERNAL_MIN bytes or more in the external data
 * file: *segs (malloc'd, pointing into the state) lists where each goes in that file of
 * *ext_len bytes (a segment without data: zeros, the moments of an optimizer that has not
 * stepped yet); the caller writes it (zeros between segments) beside the flatbuffer. */
int wt_state_save_ext(const wt_state *s, int include_optimizer_state, uint8_t **out, size_t *len,
                      struct wt_ckpt_segment **segs, int *n_segs, uint64_t *ext_len);
/* Orders the parameters as the given names (graph inputs; names that are not parameters are
 * skipped), the others after them in their current order. */
int wt_state_set_order(wt_state *s, const char *const *names, int n_names);

#endif
