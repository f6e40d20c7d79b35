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

#include "base/status.h"
#include "ir/ir.h"

typedef struct wt_ckpt_param_state {
  char *param_name;
  int n_momentums;
  wt_const_tensor *momentums;  /* named "momentum0" (m), "momentum1" (v, AdamW) */
} wt_ckpt_param_state;

/* A tensor whose bytes live in the checkpoint's external data file (ONNX Runtime's layout for
 * checkpoints over 2 GB: module_state.has_external_data set, Tensor.external_data_offset the
 * position of its bytes in the file named after the checkpoint + ".data"; each tensor starts at
 * a multiple of 4 bytes, 8 for 8-byte types, zero padding between). */
typedef struct wt_ckpt_segment {
  const char *name;  /* the tensor's (borrowed) */
  void *data;        /* its bytes in memory (borrowed): to fill after a read, to copy when
                      * writing (NULL from wt_state_save_ext: zeros) */
  uint64_t offset, nbytes;
} wt_ckpt_segment;

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
  int has_external_data;       /* as read */
  int n_segments;              /* read: the tensors whose bytes are in the external data file, */
  wt_ckpt_segment *segments;   /* their buffers allocated but not yet filled (the caller's job) */
  /* wt_checkpoint_read_in_place: tensor data lying in these bytes (the file's own) is borrowed,
   * not freed with the checkpoint */
  const uint8_t *in_place;
  size_t in_place_len;
} wt_checkpoint;

/* Whether p lies in the bytes c borrows its tensors from (wt_checkpoint_read_in_place). */
static inline int wt_checkpoint_borrows(const uint8_t *base, size_t len, const void *p) {
  return base && (const uint8_t *)p >= base && (const uint8_t *)p < base + len;
}

/* Parses a checkpoint (versions 1 and 2). Tensors keep the file's order (ONNX Runtime's own
 * generate_artifacts files list parameters in model order). Errors: WT_ERR_PARSE for malformed
 * bytes (the message names the tensor/field and what was wrong), WT_ERR_UNSUPPORTED for other
 * versions, dtypes other than float/int32/int64/bool, rank > WT_MAX_RANK, external data (see
 * wt_checkpoint_read_ext) and
 * more than one optimizer group, WT_ERR_NO_MEMORY. Free *out with wt_checkpoint_free. */
WT_NODISCARD int wt_checkpoint_read(const uint8_t *bytes, size_t len, wt_checkpoint **out);
/* The same for a checkpoint that may keep tensors in an external data file of ext_len bytes (0:
 * none given, and a checkpoint that needs one is an error saying so): every such tensor must lie
 * within the file, and together they may not claim more bytes than it has. Their buffers are
 * allocated and listed in (*out)->segments, to be filled from the file by the caller. */
WT_NODISCARD int wt_checkpoint_read_ext(const uint8_t *bytes, size_t len, uint64_t ext_len,
                                        wt_checkpoint **out);
/* wt_checkpoint_read_ext whose tensors point into `bytes` instead of copies where their data is
 * aligned for its dtype and overlaps no other tensor's (the rest are copied): for a caller that
 * keeps the bytes as long as the tensors (the state: loading then holds the parameters once, not
 * the file beside copies of them). */
WT_NODISCARD int wt_checkpoint_read_in_place(const uint8_t *bytes, size_t len, uint64_t ext_len,
                                             wt_checkpoint **out);
/* Whether bytes look like a checkpoint whose module state says it has an external data file
 * (0 for anything else: wt_checkpoint_read then says what is wrong). */
int wt_checkpoint_has_external(const uint8_t *bytes, size_t len);
/* Serializes c as version 2: parameters sorted by name (trainable and frozen separately),
 * optimizer states sorted by param_name and their momentums by name; properties in the given
 * order, the property bag omitted when empty; optimizer groups omitted unless
 * include_optimizer_state and c->has_optimizer (group_name NULL -> "group0"). In a nominal
 * checkpoint no raw_data is written. Malformed input is WT_ERR_INVALID_ARG. *out is malloc'd. */
WT_NODISCARD int wt_checkpoint_write(const wt_checkpoint *c, int include_optimizer_state, uint8_t **out,
                        size_t *len);
/* As wt_checkpoint_write, with every tensor of WT_CKPT_EXTERNAL_MIN bytes or more (as ONNX
 * Runtime) kept out of the flatbuffer: has_external_data is set, and *segs (malloc'd, *n_segs
 * entries, in file order, pointing into c) says where each tensor's bytes go in the external
 * data file of *ext_len bytes, which the caller writes (zeros between segments). */
#define WT_CKPT_EXTERNAL_MIN 64
WT_NODISCARD int wt_checkpoint_write_ext(const wt_checkpoint *c, int include_optimizer_state,
                                         uint8_t **out, size_t *len, wt_ckpt_segment **segs,
                                         int *n_segs, uint64_t *ext_len);
/* Frees c, every name/value string and every tensor's data (NULL is fine). */
void wt_checkpoint_free(wt_checkpoint *c);

#endif
