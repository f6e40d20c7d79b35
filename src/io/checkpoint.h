/* The training checkpoint: ONNX Runtime's on-device training flatbuffer ("ODTC", file
 * identifier at bytes 4..7), read in format versions 1 and 2, written in version 2.
 * Layout (onnxruntime/core/flatbuffers/schema/ort_training_checkpoint.fbs + ort.fbs Tensor):
 * module state (trainable and frozen parameters, nominal flag), one optimizer group (name,
 * step, initial learning rate, per-parameter momentums), and a property bag.
 * Every offset, size and string is bounds-checked before use: a malformed file is an error
 * with a message, never a crash. */
#ifndef WT_IO_CHECKPOINT_H
#define WT_IO_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct wt_ckpt_param_state {
  char *param_name;
  int n_momentums;
  wt_const_tensor *momentums;  /* named "momentum0" (m), "momentum1" (v, AdamW) */
} wt_ckpt_param_state;

typedef struct wt_ckpt_int_prop { char *name; int64_t value; } wt_ckpt_int_prop;
typedef struct wt_ckpt_float_prop { char *name; float value; } wt_ckpt_float_prop;
typedef struct wt_ckpt_string_prop { char *name; char *value; } wt_ckpt_string_prop;

typedef struct wt_checkpoint {
  int version;                 /* as read; written as 2 */
  int n_trainable, n_frozen;
  wt_const_tensor *trainable;  /* requires_grad parameters (data NULL in a nominal state) */
  wt_const_tensor *frozen;
  int is_nominal;
  int has_optimizer;           /* an optimizer group is present */
  char *group_name;            /* "group0" */
  int64_t step;
  float initial_lr;
  int n_param_states;
  wt_ckpt_param_state *param_states;
  int n_ints, n_floats, n_strings;
  wt_ckpt_int_prop *ints;
  wt_ckpt_float_prop *floats;
  wt_ckpt_string_prop *strings;
} wt_checkpoint;

int wt_checkpoint_read(const uint8_t *bytes, size_t len, wt_checkpoint **out);
/* Serializes c (tensors sorted by name as ONNX Runtime does; optimizer groups omitted unless
 * include_optimizer_state and c->has_optimizer). *out is malloc'd. */
int wt_checkpoint_write(const wt_checkpoint *c, int include_optimizer_state, uint8_t **out,
                        size_t *len);
void wt_checkpoint_free(wt_checkpoint *c);

#endif
