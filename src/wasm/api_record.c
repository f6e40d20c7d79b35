/* The model record from JavaScript (js/model-record.js): a model source streamed through the
 * scanner a window at a time, or a model handed over whole, and what the record says of it (see
 * io/onnx_scan.h). Same ABI conventions as api.c: a 0 handle or a non-zero status is a failure,
 * the message in wtw_last_error(); 64-bit numbers cross as doubles. */
#include <stdlib.h>

#include "base/status.h"
#include "io/onnx_scan.h"
#include "wasm/abi.h"

/* size < 0: not known (a stream without Content-Length). */
wt_scan *wtw_scan_new(const char *location, double size, double inside_min) {
  wt_scan *s = NULL;
  return wt_scan_new(location, size < 0 ? WT_SCAN_SIZE_UNKNOWN : (uint64_t)size, (uint64_t)inside_min, &s) ? NULL : s;
}
void wtw_scan_free(wt_scan *s) { wt_scan_free(s); }
/* 0, or the status: WT_ERR_PARSE (the bytes do not scan as a model), WT_ERR_IO (a tensor past
 * the file's end), WT_ERR_NO_MEMORY. */
int wtw_scan_push(wt_scan *s, const uint8_t *bytes, size_t n) { return wt_scan_push(s, bytes, n); }
double wtw_scan_skip(const wt_scan *s) { return (double)wt_scan_skip(s); }
int wtw_scan_pass(wt_scan *s, double n) { return wt_scan_pass(s, (uint64_t)n); }
double wtw_scan_offset(const wt_scan *s) { return (double)wt_scan_offset(s); }
int wtw_scan_finish(wt_scan *s) { return wt_scan_finish(s); }
double wtw_scan_hash(const wt_scan *s) { return (double)wt_scan_hash(s); }
int wtw_scan_inside_count(const wt_scan *s) { return wt_scan_inside_count(s); }
const char *wtw_scan_inside_tensor(const wt_scan *s, int i) { return wt_scan_inside(s, i) ? wt_scan_inside(s, i)->tensor : NULL; }
double wtw_scan_inside_offset(const wt_scan *s, int i) { return wt_scan_inside(s, i) ? (double)wt_scan_inside(s, i)->offset : -1; }
double wtw_scan_inside_length(const wt_scan *s, int i) { return wt_scan_inside(s, i) ? (double)wt_scan_inside(s, i)->length : -1; }
int wtw_scan_inside_dtype(const wt_scan *s, int i) { return wt_scan_inside(s, i) ? wt_scan_inside(s, i)->dtype : 0; }

/* The record of a finished scan (its skeleton and ranges move into it). */
wt_model_record *wtw_scan_record(wt_scan *s) {
  wt_model_record *r = NULL;
  return wt_model_record_of_scan(s, &r) ? NULL : r;
}
/* The record of a whole model; bytes (wtw_malloc'd) are taken unless it fails. */
wt_model_record *wtw_record_read(uint8_t *bytes, size_t len) {
  wt_model_record *r = NULL;
  return wt_model_record_read(bytes, len, &r) ? NULL : r;
}
void wtw_record_free(wt_model_record *r) { wt_model_record_free(r); }

const uint8_t *wtw_record_bytes(const wt_model_record *r) { return r->bytes; }
double wtw_record_size(const wt_model_record *r) { return (double)r->len; }
int wtw_record_scanned(const wt_model_record *r) { return r->scanned; }
const char *wtw_record_self_location(const wt_model_record *r) { return r->self.location; }
double wtw_record_self_size(const wt_model_record *r) { return (double)r->self.size; }
double wtw_record_self_hash(const wt_model_record *r) { return (double)r->self.hash; }

int wtw_record_inside_count(const wt_model_record *r) { return r->n_inside; }
const char *wtw_record_inside_tensor(const wt_model_record *r, int i) { return r->inside[i].tensor; }
double wtw_record_inside_offset(const wt_model_record *r, int i) { return (double)r->inside[i].offset; }
double wtw_record_inside_length(const wt_model_record *r, int i) { return (double)r->inside[i].length; }
int wtw_record_inside_dtype(const wt_model_record *r, int i) { return r->inside[i].dtype; }

int wtw_record_external_count(const wt_model_record *r) { return r->n_external; }
const char *wtw_record_external_tensor(const wt_model_record *r, int i) { return r->external[i].tensor; }
const char *wtw_record_external_location(const wt_model_record *r, int i) { return r->external[i].location; }
double wtw_record_external_offset(const wt_model_record *r, int i) { return (double)r->external[i].offset; }
double wtw_record_external_length(const wt_model_record *r, int i) { return (double)r->external[i].length; }
int wtw_record_external_dtype(const wt_model_record *r, int i) { return r->external[i].dtype; }

int wtw_record_print_count(const wt_model_record *r) { return r->n_prints; }
const char *wtw_record_print_location(const wt_model_record *r, int i) { return r->prints[i].location; }
double wtw_record_print_size(const wt_model_record *r, int i) { return (double)r->prints[i].size; }
double wtw_record_print_hash(const wt_model_record *r, int i) { return (double)r->prints[i].hash; }

/* which: enum wtw_io_side */
static const wt_io_desc *io(const wt_model_record *r, int which, int i) {
  int out = which == WTW_IO_OUTPUTS;
  return i >= 0 && i < (out ? r->n_outputs : r->n_inputs) ? &(out ? r->outputs : r->inputs)[i] : NULL;
}
int wtw_record_io_count(const wt_model_record *r, int which) { return which == WTW_IO_OUTPUTS ? r->n_outputs : r->n_inputs; }
const char *wtw_record_io_name(const wt_model_record *r, int which, int i) { return io(r, which, i) ? io(r, which, i)->name : NULL; }
/* enum wtw_io_kind */
int wtw_record_io_kind(const wt_model_record *r, int which, int i) {
  return io(r, which, i) && io(r, which, i)->sequence ? WTW_KIND_SEQUENCE : WTW_KIND_TENSOR;
}
int wtw_record_io_dtype(const wt_model_record *r, int which, int i) { return io(r, which, i) ? io(r, which, i)->dtype : 0; }
int wtw_record_io_rank(const wt_model_record *r, int which, int i) { return io(r, which, i) ? io(r, which, i)->rank : -1; }
double wtw_record_io_dim(const wt_model_record *r, int which, int i, int axis) {
  const wt_io_desc *d = io(r, which, i);
  return d && axis >= 0 && axis < d->rank ? (double)d->dims[axis] : -1;
}
const char *wtw_record_io_dim_param(const wt_model_record *r, int which, int i, int axis) {
  const wt_io_desc *d = io(r, which, i);
  return d && axis >= 0 && axis < d->rank ? d->dim_params[axis] : NULL;
}
