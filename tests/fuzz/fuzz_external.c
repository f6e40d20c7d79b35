/* libFuzzer: external data (tensors whose bytes live in a side file: location / offset / length
 * entries). Byte 0 sizes a synthetic side file (0 to 4 KiB of a known pattern), the rest is a
 * model. wt_onnx_list_external and wt_onnx_read (with a reader over that side file, refusing
 * ranges past its end) run on it; when both succeed, every listed tensor is an initializer of
 * the graph holding exactly the side file's bytes at its offset, and its length is its size. */
#include "fuzz_common.h"

typedef struct side {
  uint8_t *bytes;
  size_t len;
} side;

static int read_side(void *user, const char *location, uint64_t offset, uint64_t length, void *dst) {
  const side *s = user;
  FUZZ_ASSERT(location && location[0] && location[0] != '/', "only checked locations are read");
  if (offset > s->len || length > s->len - offset)
    return wt_errorf(WT_ERR_IO, "side file has %zu bytes", s->len);
  memcpy(dst, s->bytes + offset, (size_t)length);
  return WT_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  side s = {.len = data[0] % 13 == 12 ? 0 : (size_t)1 << (data[0] % 13)};
  s.bytes = malloc(s.len + 1);
  for (size_t i = 0; i < s.len; i++) s.bytes[i] = (uint8_t)(i * 31 + 7);
  const uint8_t *model = data + 1;
  size_t len = size - 1;
  wt_external_ref *refs = NULL;
  int n = 0;
  int listed = wt_onnx_list_external(model, len, &refs, &n) == WT_OK;
  wt_onnx_read_opts opts = {.read_external = read_side, .user = &s};
  wt_graph *g = NULL;
  if (wt_onnx_read(model, len, &opts, &g) == WT_OK && listed) {
    for (int i = 0; i < n; i++) {
      int v = wt_graph_find(g, refs[i].tensor);
      FUZZ_ASSERT(v >= 0 && (g->values[v].flags & WT_VALUE_INITIALIZER), "a listed tensor is an initializer");
      FUZZ_ASSERT(g->values[v].nbytes == refs[i].length, "the listed length is the tensor's size");
      FUZZ_ASSERT(refs[i].offset + refs[i].length <= s.len, "a read tensor lies inside the side file");
      FUZZ_ASSERT(refs[i].length == 0 || memcmp(g->values[v].data, s.bytes + refs[i].offset, refs[i].length) == 0,
                  "a tensor holds the side file's bytes at its offset");
    }
  }
  wt_graph_free(g);
  wt_external_refs_free(refs, n);
  free(s.bytes);
  wt_error_clear();
  return 0;
}
