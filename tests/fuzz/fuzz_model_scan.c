/* libFuzzer: the streamed model reader (io/onnx_scan.h) and the record. Byte 0 picks the piece
 * size the file is pushed in (1 to 256 bytes) and whether a positional reader passes the left-out
 * ranges instead of pushing them, byte 1 the size below which initializers stay in the skeleton;
 * the rest is a model file. The same file pushed whole must scan the same: same outcome, same
 * skeleton hash, same ranges. A finished scan's ranges lie inside the file, in order, and do not
 * overlap; when its skeleton reads as a record, each is listed there as external data of the
 * file itself at the same offset and length. The same bytes read whole as a record leave nothing
 * out. */
#include "fuzz_common.h"
#include "io/onnx_scan.h"

typedef struct outcome {
  int rc;
  uint32_t hash;
  int n;
} outcome;

static outcome scan(const uint8_t *p, size_t len, size_t piece, int pass, uint64_t inside_min, wt_scan **out) {
  wt_scan *s = NULL;
  FUZZ_ASSERT(wt_scan_new("m.onnx", len, inside_min, &s) == WT_OK, "a scanner is made");
  int rc = WT_OK;
  for (size_t at = 0; at < len && rc == WT_OK;) {
    uint64_t skip = pass ? wt_scan_skip(s) : 0;
    if (skip) {
      FUZZ_ASSERT(skip <= len - at, "a range to skip lies inside the file (its size is known)");
      rc = wt_scan_pass(s, skip);
      at += (size_t)skip;
      continue;
    }
    size_t n = len - at < piece ? len - at : piece;
    rc = wt_scan_push(s, p + at, n);
    at += n;
  }
  if (rc == WT_OK) rc = wt_scan_finish(s);
  outcome o = {.rc = rc, .hash = rc ? 0 : wt_scan_hash(s), .n = wt_scan_inside_count(s)};
  *out = s;
  return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const uint8_t *model = data + 2;
  size_t len = size - 2;
  size_t piece = (size_t)(data[0] & 0x7f) * 2 + 1;
  int pass = data[0] >> 7;
  uint64_t inside_min = (uint64_t)data[1] * 4 + 1;
  wt_scan *a = NULL, *b = NULL;
  outcome x = scan(model, len, piece, pass, inside_min, &a);
  outcome y = scan(model, len, len ? len : 1, 0, inside_min, &b);
  FUZZ_ASSERT((x.rc == WT_OK) == (y.rc == WT_OK), "the piece size does not change whether a file scans");
  if (x.rc == WT_OK) {
    FUZZ_ASSERT(x.hash == y.hash && x.n == y.n, "the piece size does not change the skeleton");
    uint64_t end = 0;
    for (int i = 0; i < x.n; i++) {
      const wt_inside_ref *r = wt_scan_inside(a, i), *q = wt_scan_inside(b, i);
      FUZZ_ASSERT(r->offset == q->offset && r->length == q->length && !strcmp(r->tensor, q->tensor), "same ranges");
      FUZZ_ASSERT(r->offset >= end && r->length >= inside_min && r->length <= len - r->offset, "ranges inside the file, in order");
      end = r->offset + r->length;
    }
    wt_model_record *rec = NULL;
    if (wt_model_record_of_scan(a, &rec) == WT_OK) {
      FUZZ_ASSERT(rec->scanned && rec->n_inside == x.n && rec->self.hash == x.hash && rec->self.size == len, "the record is the scan's");
      for (int i = 0; i < rec->n_inside; i++) {
        int listed = 0;
        for (int k = 0; k < rec->n_external; k++)
          listed |= !strcmp(rec->external[k].location, "m.onnx") && rec->external[k].offset == rec->inside[i].offset &&
                    rec->external[k].length == rec->inside[i].length;
        /* a range is listed unless its tensor's dims and dtype do not match its length (the
         * listing refuses such a skeleton as a whole) */
        FUZZ_ASSERT(listed, "each range is external data of the file itself");
      }
      for (int k = 0; k < rec->n_inputs; k++) (void)wt_fuzz_touch(rec->inputs[k].name, strlen(rec->inputs[k].name));
      wt_model_record_free(rec);
    }
  }
  wt_scan_free(a);
  wt_scan_free(b);
  /* the record of the bytes as they are: what it lists lies inside them or names a side file */
  uint8_t *copy = malloc(len ? len : 1);
  memcpy(copy, model, len);
  wt_model_record *whole = NULL;
  if (wt_model_record_read(copy, len, &whole) == WT_OK) {
    FUZZ_ASSERT(!whole->scanned && whole->n_inside == 0, "a record read whole left nothing out");
    for (int i = 0; i < whole->n_prints; i++) (void)wt_fuzz_touch(whole->prints[i].location, strlen(whole->prints[i].location));
    for (int i = 0; i < whole->n_outputs; i++) (void)wt_fuzz_touch(whole->outputs[i].name, strlen(whole->outputs[i].name));
    wt_model_record_free(whole);
  } else {
    free(copy);
  }
  return 0;
}
