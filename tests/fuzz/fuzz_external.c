/* libFuzzer: external data (tensors whose bytes live in a side file: location / offset / length
 * entries). Byte 0 sizes a synthetic side file (0 to 4 KiB of a known pattern), the rest is a
 * model. wt_onnx_list_external and wt_onnx_read (with a reader over that side file, refusing
 * ranges past its end) run on it; when both succeed, every listed tensor is an initializer of
 * the graph holding exactly the side file's bytes at its offset, and its length is its size.
 * Held by reference: a second read sharing the first graph borrows every listed
 * tensor's bytes (reading nothing); a read that keeps float tensors by reference loads each on
 * demand with the same bytes, and writes and re-reads (a clone) without loading any. Byte 0 of
 * 0xC0 or more: the side file is the model itself (weights inside referenced in place). A
 * second read sharing the first graph borrows embedded initializers only when they are the
 * first graph's, above the pack size. */
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
  const uint8_t *model = data + 1;
  size_t len = size - 1;
  side s = {.len = data[0] % 13 == 12 ? 0 : (size_t)1 << (data[0] % 13)};
  /* byte 0 >= 0xC0: the side file is the model file itself (a base whose weights are inside,
   * referenced in place at their raw_data offsets: js/inside.js) */
  if (data[0] >= 0xC0) s.len = len;
  s.bytes = malloc(s.len + 1);
  for (size_t i = 0; i < s.len; i++) s.bytes[i] = data[0] >= 0xC0 ? model[i] : (uint8_t)(i * 31 + 7);
  wt_external_ref *refs = NULL;
  int n = 0;
  int listed = wt_onnx_list_external(model, len, &refs, &n) == WT_OK;
  wt_onnx_read_opts opts = {.read_external = read_side, .user = &s};
  wt_graph *g = NULL;
  int read_ok = wt_onnx_read(model, len, &opts, &g) == WT_OK;
  wt_onnx_read_opts keep = {.read_external = read_side, .user = &s, .keep_external = 1};
  wt_graph *k = NULL;
  if (wt_onnx_read(model, len, &keep, &k) == WT_OK) {
    wt_graph *c = NULL;
    if (wt_graph_clone(k, &c) == WT_OK)
      for (int v = 0; v < k->n_values; v++)
        if (wt_value_unloaded(&k->values[v])) {
          int cv = wt_graph_find(c, k->values[v].name);
          FUZZ_ASSERT(cv >= 0 && wt_value_unloaded(&c->values[cv]), "a clone keeps a reference a reference");
        }
    wt_graph_free(c);
    for (int v = 0; v < k->n_values; v++) {
      if (!wt_value_unloaded(&k->values[v])) continue;
      const wt_external_init *e = wt_graph_external(k, k->values[v].name);
      FUZZ_ASSERT(e != NULL, "a value held by reference has its reference");
      if (wt_onnx_load_external(k, v, &keep) == WT_OK)
        FUZZ_ASSERT(!memcmp(k->values[v].data, s.bytes + e->offset, k->values[v].nbytes), "loaded on demand: the side file's bytes");
    }
  }
  wt_graph_free(k);
  wt_error_clear();
  if (read_ok) {
    wt_onnx_read_opts share = {.share = g}; /* no reader: every listed tensor must be borrowed */
    wt_graph *b = NULL;
    if (listed && wt_onnx_read(model, len, &share, &b) == WT_OK)
      for (int i = 0; i < n; i++) {
        int v = wt_graph_find(b, refs[i].tensor), gv = wt_graph_find(g, refs[i].tensor);
        FUZZ_ASSERT(v >= 0 && gv >= 0 && (refs[i].length == 0 || b->values[v].data == g->values[gv].data),
                    "a shared tensor borrows the loaded bytes");
      }
    /* embedded initializers equal to g's are borrowed (only those, and only above the pack size) */
    for (int v = 0; b && v < b->n_values; v++) {
      const wt_value *bv = &b->values[v];
      int gv = wt_graph_find(g, bv->name);
      if (!(bv->flags & WT_VALUE_BORROWED)) continue;
      FUZZ_ASSERT(gv >= 0 && bv->data == g->values[gv].data && bv->nbytes == g->values[gv].nbytes,
                  "a borrowed initializer is the shared graph's");
      FUZZ_ASSERT((bv->flags & WT_VALUE_EXTERNAL) || bv->nbytes > WT_PACK_DATA_MAX, "only weights above the pack size are borrowed by content");
    }
    wt_graph_free(b);
    /* a shared clone (the export's) borrows every loaded external tensor of g */
    wt_graph *c = NULL;
    if (wt_graph_clone_shared(g, &c) == WT_OK)
      for (int v = 0; v < c->n_values; v++) {
        const wt_value *cv = &c->values[v];
        int gv = wt_graph_find(g, cv->name);
        if ((cv->flags & WT_VALUE_EXTERNAL) && (cv->flags & WT_VALUE_INITIALIZER) && gv >= 0 && g->values[gv].data)
          FUZZ_ASSERT(cv->data == g->values[gv].data, "a shared clone borrows the loaded bytes");
      }
    wt_graph_free(c);
  }
  if (read_ok && listed) {
    for (int i = 0; i < n; i++) {
      int v = wt_graph_find(g, refs[i].tensor);
      FUZZ_ASSERT(v >= 0 && (g->values[v].flags & WT_VALUE_INITIALIZER), "a listed tensor is an initializer");
      FUZZ_ASSERT(g->values[v].nbytes == refs[i].length, "the listed length is the tensor's size");
      /* (an empty tensor reads nothing: its offset is not checked against the file) */
      FUZZ_ASSERT(refs[i].length == 0 || refs[i].offset + refs[i].length <= s.len, "a read tensor lies inside the side file");
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
