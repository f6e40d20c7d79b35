/* The C ABI for checkpoints with external data (io/checkpoint.h: ONNX Runtime's layout for
 * checkpoints over 2 GB). Loading: JS asks whether the flatbuffer has an external data file,
 * gives its length, then fills each pending tensor buffer from the file at its offset (file
 * handles, fetch streams, Blobs: straight into the heap, no copy of the whole file) and says
 * done. Saving: the flatbuffer, and the list of (offset, bytes, heap pointer) JS writes the
 * side file from. Offsets and lengths cross as doubles (exact up to 2^53). */
#include <stdlib.h>

#include "base/dtype.h"
#include "io/checkpoint.h"
#include "runtime/state.h"
#include "webtrain.h"

/* The bytes of the tensors a save writes: parameters, and the moments with the optimizer state. */
double wtw_state_tensor_bytes(const wt_state *s, int include_optimizer_state) {
  double total = 0;
  for (int i = 0; i < s->n_params; i++) {
    const wt_param *p = &s->params[i];
    double bytes = (double)wt_numel(&p->t) * (double)wt_dtype_size(p->t.dtype);
    total += bytes;
    if (include_optimizer_state && s->has_optimizer && p->requires_grad) total += bytes * (s->n_moments ? s->n_moments : 1);
  }
  return total;
}

int wtw_checkpoint_has_external(const uint8_t *bytes, size_t len) {
  return wt_checkpoint_has_external(bytes, len);
}

/* Like wtw_state_load_owned (frees `bytes` in every case), with an external data file of
 * ext_len bytes (0: none). */
wt_state *wtw_state_load_ext(uint8_t *bytes, size_t len, double ext_len) {
  wt_state *s = NULL;
  return wt_state_load_ext(bytes, len, bytes, (uint64_t)ext_len, &s) == WT_OK ? s : NULL;
}

int wtw_state_pending_count(const wt_state *s) { return s->n_pending; }
double wtw_state_pending_offset(const wt_state *s, int i) { return (double)s->pending[i].offset; }
double wtw_state_pending_bytes(const wt_state *s, int i) { return (double)s->pending[i].nbytes; }
void *wtw_state_pending_data(const wt_state *s, int i) { return s->pending[i].data; }
void wtw_state_pending_done(wt_state *s) { wt_state_pending_done(s); }

/* A saved checkpoint with external data: the flatbuffer and the side file's segments. */
typedef struct ext_save {
  uint8_t *head;
  size_t head_len;
  wt_ckpt_segment *segs;
  int n;
  uint64_t ext_len;
} ext_save;

ext_save *wtw_state_save_ext(const wt_state *s, int include_optimizer_state) {
  ext_save *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  if (wt_state_save_ext(s, include_optimizer_state, &x->head, &x->head_len, &x->segs, &x->n,
                        &x->ext_len)) {
    free(x);
    return NULL;
  }
  return x;
}
const uint8_t *wtw_ext_save_head(const ext_save *x) { return x->head; }
double wtw_ext_save_head_size(const ext_save *x) { return (double)x->head_len; }
double wtw_ext_save_data_size(const ext_save *x) { return (double)x->ext_len; }
int wtw_ext_save_count(const ext_save *x) { return x->n; }
double wtw_ext_save_offset(const ext_save *x, int i) { return (double)x->segs[i].offset; }
double wtw_ext_save_bytes(const ext_save *x, int i) { return (double)x->segs[i].nbytes; }
/* NULL: zeros (the moments of an optimizer that has not stepped yet) */
const void *wtw_ext_save_data(const ext_save *x, int i) { return x->segs[i].data; }
void wtw_ext_save_free(ext_save *x) {
  if (!x) return;
  free(x->head);
  free(x->segs);
  free(x);
}
