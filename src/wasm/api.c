/* The flat C ABI the JavaScript layer calls (js/core.js). Handles are pointers; a 0 handle or a
 * non-zero status means failure, with the message in wtw_last_error(). Dims cross as doubles
 * (exact up to 2^53) because Emscripten 3.1.6 without WASM_BIGINT cannot pass int64 to JS.
 * The exported names are listed in src/wasm/exports.txt. */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "io/onnx_io.h"
#include "runtime/session.h"
#include "runtime/state.h"
#include "wasm/abi.h"
#include "webtrain.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
/* dlmalloc's (Emscripten's default malloc): the most bytes ever taken from sbrk. */
size_t malloc_max_footprint(void);
extern unsigned char __heap_base;
#endif

const char *wtw_last_error(void) { return wt_last_error(); }
const char *wtw_simd_name(void) { return wt_simd_name(); }
void *wtw_malloc(size_t n) { return malloc(n ? n : 1); }
void wtw_free(void *p) { free(p); }

/* ---- memory reports ------------------------------------------------------------------------ */

/* The heap's figures, out[enum wtw_heap_stat] (abi.h). Natively (tests) all 0. */
void wtw_heap_stats(double *out) {
  for (int i = 0; i < WTW_HEAP_COUNT; i++) out[i] = 0;
#ifdef __EMSCRIPTEN__
  struct mallinfo mi = mallinfo();
  out[WTW_HEAP_MEMORY] = (double)emscripten_get_heap_size();
  out[WTW_HEAP_HEAP_BASE] = (double)(uintptr_t)&__heap_base;
  out[WTW_HEAP_HEAP_TOP] = (double)*emscripten_get_sbrk_ptr();
  out[WTW_HEAP_MALLOC_IN_USE] = (double)(unsigned)mi.uordblks;
  out[WTW_HEAP_MALLOC_FOOTPRINT] = (double)(unsigned)mi.arena;
  out[WTW_HEAP_MALLOC_PEAK] = (double)malloc_max_footprint();
#endif
}

/* The module's memory, out[enum wtw_module_mem] (abi.h). */
void wtw_module_memory(const wt_module *m, double *out) {
  wt_module_mem mm;
  wt_module_memory(m, &mm);
  out[WTW_MEM_ARENA] = (double)mm.arena;
  out[WTW_MEM_LIVE_PEAK_TRAIN] = (double)mm.live_peak[WT_MODE_TRAIN];
  out[WTW_MEM_LIVE_PEAK_EVAL] = (double)mm.live_peak[WT_MODE_EVAL];
  out[WTW_MEM_SAVED] = (double)mm.saved;
  out[WTW_MEM_PARAMS] = (double)mm.params;
  out[WTW_MEM_GRADS] = (double)mm.grads;
  out[WTW_MEM_MOMENTS] = (double)mm.moments;
  out[WTW_MEM_PACKED] = (double)mm.packed;
}

/* Loads a checkpoint from `bytes` (from wtw_malloc), which it frees in every case: parsed, then
 * freed before the gradient buffers are allocated (see wt_state_load_owned). */
wt_state *wtw_state_load_owned(uint8_t *bytes, size_t len) {
  wt_state *s = NULL;
  return wt_state_load_owned(bytes, len, &s) == WT_OK ? s : NULL;
}

/* ---- sessions ---------------------------------------------------------------------------- */

wt_session *wtw_session_create(const uint8_t *bytes, size_t len) {
  wt_session *s = NULL;
  return wt_session_create(bytes, len, &s) == WT_OK ? s : NULL;
}

void wtw_session_free(wt_session *s) { wt_session_free(s); }
int wtw_session_input_count(const wt_session *s) { return wt_session_input_count(s); }
int wtw_session_output_count(const wt_session *s) { return wt_session_output_count(s); }
const char *wtw_session_input_name(const wt_session *s, int i) { return wt_session_input_name(s, i); }
const char *wtw_session_output_name(const wt_session *s, int i) { return wt_session_output_name(s, i); }
int wtw_session_input_dtype(const wt_session *s, int i) { return wt_session_input_dtype(s, i); }
int wtw_session_input_rank(const wt_session *s, int i) { return wt_session_input_rank(s, i); }
double wtw_session_input_dim(const wt_session *s, int i, int axis) {
  return (double)wt_session_input_dim(s, i, axis);
}

int wtw_session_set_input(wt_session *s, int index, int dtype, int rank, const double *dims,
                          const void *data) {
  int64_t d[16];
  if (rank < 0 || rank > 16) return wt_errorf(WT_ERR_INVALID_ARG, "rank %d is out of range", rank);
  for (int i = 0; i < rank; i++) d[i] = (int64_t)dims[i];
  return wt_session_set_input(s, index, dtype, rank, d, data);
}

int wtw_session_run(wt_session *s) { return wt_session_run(s); }

/* Output accessors of the last run. */
static int output(const wt_session *s, int i, int32_t *dtype, int32_t *rank, const int64_t **dims,
                  const void **data) {
  return wt_session_output(s, i, dtype, rank, dims, data);
}
int wtw_session_output_dtype(const wt_session *s, int i) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  return output(s, i, &dt, &r, &d, &p) ? 0 : dt;
}
int wtw_session_output_rank(const wt_session *s, int i) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  return output(s, i, &dt, &r, &d, &p) ? -1 : r;
}
double wtw_session_output_dim(const wt_session *s, int i, int axis) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  if (output(s, i, &dt, &r, &d, &p) || axis < 0 || axis >= r) return -1;
  return (double)d[axis];
}
const void *wtw_session_output_data(const wt_session *s, int i) {
  int32_t dt, r;
  const int64_t *d;
  const void *p;
  return output(s, i, &dt, &r, &d, &p) ? NULL : p;
}
double wtw_session_arena_bytes(const wt_session *s) { return (double)wt_session_arena_bytes(s); }

/* ---- serialized TensorProto (the ONNX test layout's .pb files) ------------------------------ */

wt_const_tensor *wtw_tensor_pb_read(const uint8_t *bytes, size_t len) {
  wt_const_tensor *t = NULL;
  return wt_tensor_pb_read(bytes, len, &t) == WT_OK ? t : NULL;
}
void wtw_tensor_free(wt_const_tensor *t) { wt_const_tensor_free(t); }
const char *wtw_tensor_name(const wt_const_tensor *t) { return t->name; }
int wtw_tensor_dtype(const wt_const_tensor *t) { return t->t.dtype; }
int wtw_tensor_rank(const wt_const_tensor *t) { return t->t.rank; }
double wtw_tensor_dim(const wt_const_tensor *t, int axis) { return (double)t->t.dims[axis]; }
const void *wtw_tensor_data(const wt_const_tensor *t) { return t->t.data; }
