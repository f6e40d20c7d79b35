/* Reading a model as a stream, and the record of what it holds (onnx_scan.c, onnx_record.c).
 *
 * The scanner takes a ModelProto's bytes in pieces of any size, in order, and keeps its
 * "skeleton": the model with the data of every initializer holding at least inside_min bytes
 * (raw_data, or packed float_data) left out, and external_data entries saying where those bytes
 * are in the model file itself (location, offset, length). A weights-inside model is then held
 * like one saved with external data, its own file playing the side file, and a file larger than
 * memory is read through a fixed window: the skipped bytes are never kept, and a reader with
 * positional access need not read them at all (wt_scan_skip / wt_scan_pass).
 *
 * The record is what a caller needs to know of a model before it parses it: the model bytes the
 * core parses (the skeleton, or the model as it is), the tensors it references in side files,
 * the ranges left out of a scanned file with that file's fingerprint (its size and the FNV-1a of
 * its skeleton), the fingerprints of base files the model carries in its metadata_props (what
 * artifacts generated from a weights-inside base refer to), and its inputs and outputs. */
#ifndef WT_IO_ONNX_SCAN_H
#define WT_IO_ONNX_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "io/onnx_io.h"

/* Size of a source whose size is not known (a stream without Content-Length). */
#define WT_SCAN_SIZE_UNKNOWN UINT64_MAX
/* The metadata_props key prefix of a base file's fingerprint: key + location, "size hash". */
#define WT_BASE_PRINT_KEY "webtrain.base:"

/* A range of the model file left out of the skeleton: one initializer's data. */
typedef struct wt_inside_ref {
  char *tensor;
  uint64_t offset, length;
  int32_t dtype;
} wt_inside_ref;

typedef struct wt_scan wt_scan;

/* A scanner for a model file of `size` bytes (or WT_SCAN_SIZE_UNKNOWN) whose skeleton names the
 * file `location`. */
WT_NODISCARD int wt_scan_new(const char *location, uint64_t size, uint64_t inside_min, wt_scan **out);
void wt_scan_free(wt_scan *s);
/* The next n bytes of the file. An error leaves the scanner failed: WT_ERR_IO when a tensor's
 * data runs past the file's known size (the file is truncated), WT_ERR_PARSE when the bytes do
 * not scan as a model (the caller may hand the model over as it is, for the parser to say why). */
WT_NODISCARD int wt_scan_push(wt_scan *s, const uint8_t *bytes, size_t n);
/* Bytes the scanner drops next (it is inside a left-out range), 0 when none. */
uint64_t wt_scan_skip(const wt_scan *s);
/* Passes n <= wt_scan_skip(s) of those bytes without their being pushed. */
WT_NODISCARD int wt_scan_pass(wt_scan *s, uint64_t n);
/* Bytes of the file taken so far (pushed or passed). */
uint64_t wt_scan_offset(const wt_scan *s);
const char *wt_scan_location(const wt_scan *s);
/* The ranges found so far, in file order (each is found where its data starts). */
int wt_scan_inside_count(const wt_scan *s);
const wt_inside_ref *wt_scan_inside(const wt_scan *s, int i);
/* Ends the file: an error when it ends inside a field or message. */
WT_NODISCARD int wt_scan_finish(wt_scan *s);
/* The skeleton's FNV-1a (after wt_scan_finish). */
uint32_t wt_scan_hash(const wt_scan *s);
/* Moves the skeleton (malloc'd) and the ranges (wt_inside_refs_free) out of a finished scan. */
WT_NODISCARD int wt_scan_take(wt_scan *s, uint8_t **bytes, size_t *len, wt_inside_ref **refs, int *n);
void wt_inside_refs_free(wt_inside_ref *refs, int n);
/* FNV-1a (32 bits) of bytes. */
uint32_t wt_fnv1a(const uint8_t *bytes, size_t len);

/* A base file's fingerprint as a model's metadata_props carry it. */
typedef struct wt_base_print {
  char *location;
  uint64_t size;
  uint32_t hash;
} wt_base_print;

/* A graph input or output: dims[i] < 0 is symbolic (dim_params[i] its name, or NULL). */
typedef struct wt_io_desc {
  char *name;
  int32_t sequence;             /* a sequence of tensors of this dtype and shape (optimizer models) */
  int32_t dtype;
  int32_t rank;                 /* -1: no shape given */
  int64_t *dims;
  char **dim_params;
} wt_io_desc;

typedef struct wt_model_record {
  uint8_t *bytes;               /* the model the core parses (owned) */
  size_t len;
  int scanned;                  /* 1: bytes is a skeleton, the ranges below left out */
  wt_inside_ref *inside;
  int n_inside;
  wt_base_print self;           /* scanned: the file's location, size and skeleton hash */
  wt_external_ref *external;    /* every tensor in external data (the left-out ranges too) */
  int n_external;
  wt_base_print *prints;        /* base files whose fingerprints the model carries */
  int n_prints;
  wt_io_desc *inputs, *outputs;
  int n_inputs, n_outputs;
} wt_model_record;

/* The record of a model as it is; bytes (malloc'd) are taken when it reads (on error they stay
 * the caller's, for the parser to say more of what is wrong). */
WT_NODISCARD int wt_model_record_read(uint8_t *bytes, size_t len, wt_model_record **out);
/* The record of a finished scan: its skeleton and ranges are moved out of s. */
WT_NODISCARD int wt_model_record_of_scan(wt_scan *s, wt_model_record **out);
void wt_model_record_free(wt_model_record *r);

/* Appends a metadata_props entry (key, value) to a serialized ModelProto (*bytes realloc'd). */
WT_NODISCARD int wt_onnx_append_metadata(uint8_t **bytes, size_t *len, const char *key, const char *value);
/* Appends the fingerprint of base file p (WT_BASE_PRINT_KEY + location, "size hash"). */
WT_NODISCARD int wt_onnx_append_base_print(uint8_t **bytes, size_t *len, const wt_base_print *p);

#endif
