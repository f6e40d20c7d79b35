/* The bad-input suite, the streamed model reader (io/onnx_scan.h: what js/inside.js feeds a
 * model source through): files cut short inside their weights or inside a message, bytes that
 * are no model, misuse of the scanner, and the fuzzers' findings, each with the status and the
 * exact error text expected (the table runner: bad_input_harness.h). */
#include <stdlib.h>

#include "bad_input_harness.h"
#include "io/onnx_io.h"
#include "io/onnx_scan.h"

/* Weights inside are left out of 4 KiB on. */
#define GOLDEN WT_SOURCE_DIR "/tests/golden/cases/regression_mse_adamw/model.onnx"

/* Scans the first n bytes of p in pieces of 64 (size: the file's, or WT_SCAN_SIZE_UNKNOWN). */
static int scan_bytes(const uint8_t *p, size_t n, uint64_t size) {
  wt_scan *s = NULL;
  int rc = wt_scan_new("model.onnx", size, 4096, &s);
  for (size_t at = 0; rc == WT_OK && at < n; at += 64) rc = wt_scan_push(s, p + at, n - at < 64 ? n - at : 64);
  if (rc == WT_OK) rc = wt_scan_finish(s);
  wt_scan_free(s);
  return rc;
}
static int scan_golden_cut(uint64_t known) {
  uint8_t *b;
  size_t len;
  WT_TRY(wt_read_file(GOLDEN, &b, &len));
  int rc = scan_bytes(b, len - 1500, known ? len - 1500 : WT_SCAN_SIZE_UNKNOWN);
  free(b);
  return rc;
}
static int c_scan_truncated(void) { return scan_golden_cut(1); }
static int c_scan_stream_cut(void) { return scan_golden_cut(0); }
static int c_scan_garbage(void) {
  const uint8_t b[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  return scan_bytes(b, sizeof b, sizeof b);
}
static int c_scan_field_zero(void) { return scan_bytes((const uint8_t[]){0x02, 0x00}, 2, 2); }
static int c_scan_wire_type(void) { return scan_bytes((const uint8_t[]){0x0f, 0x00}, 2, 2); }
static int c_scan_overrun(void) {
  /* a graph of 2 bytes holding a 4-byte field */
  return scan_bytes((const uint8_t[]){0x3a, 0x02, 0x12, 0x02, 'a', 'b'}, 6, 6);
}
static int c_scan_pass_beyond(void) {
  wt_scan *s = NULL;
  WT_TRY(wt_scan_new("model.onnx", 100, 4096, &s));
  int rc = wt_scan_pass(s, 1);
  wt_scan_free(s);
  return rc;
}
static int c_scan_record_of_unfinished(void) {
  wt_scan *s = NULL;
  WT_TRY(wt_scan_new("model.onnx", WT_SCAN_SIZE_UNKNOWN, 4096, &s));
  int rc = wt_scan_push(s, (const uint8_t[]){0x3a, 0x05}, 2);
  wt_model_record *r = NULL;
  if (rc == WT_OK) rc = wt_model_record_of_scan(s, &r);
  wt_model_record_free(r);
  wt_scan_free(s);
  return rc;
}
/* the fuzzer's finding: a fixed32 after a tensor's name was copied into the name */
static int c_scan_fixed_after_name(void) {
  const uint8_t b[] = {0x3a, 0x0c, 0x2a, 0x0a, 0x42, 0x01, 'a', 0x25, 1, 2, 3, 4, 0x10, 0x01, 0x08, 0x01};
  return scan_bytes(b, sizeof b, sizeof b);
}

/* ==== the table ============================================================================ */

static const bad_case CASES[] = {
  {"scan/truncated", c_scan_truncated, WT_ERR_IO, "tensor 'fc2.weight' has 4096 bytes at offset 2745, past the file's end (5992 bytes): the file is truncated (copy or download it again)"},
  {"scan/stream-cut", c_scan_stream_cut, WT_ERR_PARSE, "the model ends at byte 5992, inside a message"},
  {"scan/garbage", c_scan_garbage, WT_ERR_PARSE, "a varint longer than 10 bytes at byte 10"},
  {"scan/field-zero", c_scan_field_zero, WT_ERR_PARSE, "field number 0 at byte 1"},
  {"scan/wire-type", c_scan_wire_type, WT_ERR_PARSE, "wire type 7 at byte 1"},
  {"scan/overrun", c_scan_overrun, WT_ERR_PARSE, "a field of 2 bytes at byte 4 runs past its message"},
  {"scan/pass-beyond", c_scan_pass_beyond, WT_ERR_INVALID_ARG, "passing 1 bytes of the model where 0 are to be skipped"},
  {"scan/record-unfinished", c_scan_record_of_unfinished, WT_ERR_INVALID_ARG, "the model scan is not finished"},
  {"fuzz/scan-fixed-after-name", c_scan_fixed_after_name, WT_OK, ""},
};

int main(int argc, char **argv) {
  return bad_input_main(argc, argv, CASES, (int)(sizeof CASES / sizeof CASES[0]));
}
