/* Initializers held by reference (weights held once): a model's float initializers in
 * external data read without their bytes (keep_external) and written back as the same
 * references; read later on demand (wt_onnx_load_external); borrowed by a second graph of the
 * same file range (share) instead of read again, and never freed through it; not folded as
 * constants while unloaded. Embedded initializers equal to the shared graph's (same name, dtype,
 * dims and bytes, above WT_PACK_DATA_MAX) are borrowed too; any difference keeps a copy. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/onnx_io.h"
#include "shape/shape.h"

/* a side file: byte i is i * 7 + 3 */
static uint8_t side[256];
static int reads;
static void *last_dst;

static int read_side(void *user, const char *location, uint64_t offset, uint64_t length, void *dst) {
  (void)user;
  reads++;
  last_dst = dst;
  if (strcmp(location, "w.bin") || offset + length > sizeof side) return wt_errorf(WT_ERR_IO, "no such range");
  memcpy(dst, side + offset, (size_t)length);
  return WT_OK;
}

/* y = MatMul(x, Transpose(W)), W [3, 2] float at offset 16 of w.bin, held by reference. */
/* g with output y, opset 17, serialized (g freed). */
static uint8_t *written(wt_graph *g, int y, size_t *len) {
  CHECK_OK(wt_graph_add_output(g, y));
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  uint8_t *bytes = NULL;
  CHECK_OK(wt_onnx_write(g, &bytes, len));
  wt_graph_free(g);
  return bytes;
}

static uint8_t *model_bytes(size_t *len) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_value(g, "x"), w = wt_graph_value(g, "W"), wt = wt_graph_value(g, "Wt"), y = wt_graph_value(g, "y");
  CHECK(x >= 0 && w >= 0 && wt >= 0 && y >= 0);
  g->values[x].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, x, 2, (const int64_t[]){4, 2}));
  CHECK_OK(wt_graph_add_input(g, x));
  g->values[w].dtype = WT_FLOAT;
  g->values[w].flags |= WT_VALUE_INITIALIZER | WT_VALUE_EXTERNAL;
  g->values[w].nbytes = 3 * 2 * sizeof(float);
  CHECK_OK(wt_value_set_shape(g, w, 2, (const int64_t[]){3, 2}));
  CHECK_OK(wt_graph_set_external(g, "W", "w.bin", 16));
  CHECK(wt_graph_add_node(g, "Transpose", "", "t", 1, &w, 1, &wt) >= 0);
  CHECK(wt_graph_add_node(g, "MatMul", "", "mm", 2, (int[]){x, wt}, 1, &y) >= 0);
  return written(g, y, len);
}

static void test_by_reference(void) {
  size_t len;
  uint8_t *bytes = model_bytes(&len);
  /* written as a reference: the listing sees it, with its offset and length */
  wt_external_ref *refs;
  int n;
  CHECK_OK(wt_onnx_list_external(bytes, len, &refs, &n));
  CHECK(n == 1 && !strcmp(refs[0].location, "w.bin") && refs[0].offset == 16 && refs[0].length == 24);
  wt_external_refs_free(refs, n);

  /* kept by reference: no read, no bytes; a clone and a write keep the reference */
  reads = 0;
  wt_onnx_read_opts keep = {.keep_external = 1, .read_external = read_side};
  wt_graph *g;
  CHECK_OK(wt_onnx_read(bytes, len, &keep, &g));
  int w = wt_graph_find(g, "W");
  CHECK(reads == 0 && w >= 0 && wt_value_unloaded(&g->values[w]) && g->values[w].nbytes == 24);
  CHECK((g->values[w].flags & WT_VALUE_EXTERNAL) && wt_graph_external(g, "W")->offset == 16);
  wt_tensor t;
  CHECK(!wt_graph_const_value(g, w, &t)); /* no bytes to give */
  CHECK_OK(wt_graph_infer_shapes(g));     /* Transpose(W) is not folded: W has no bytes here */
  CHECK(wt_graph_find(g, "Wt") >= 0 && !(g->values[wt_graph_find(g, "Wt")].flags & WT_VALUE_INITIALIZER));
  wt_graph *c;
  CHECK_OK(wt_graph_clone(g, &c));
  CHECK(wt_value_unloaded(&c->values[wt_graph_find(c, "W")]) && reads == 0);
  wt_graph_free(c);

  /* read on demand: the side file's bytes at its offset; then written with its bytes */
  CHECK_OK(wt_onnx_load_external(g, w, &keep));
  CHECK(reads == 1 && g->values[w].data && !memcmp(g->values[w].data, side + 16, 24));
  uint8_t *again;
  size_t again_len;
  CHECK_OK(wt_onnx_write(g, &again, &again_len));
  CHECK_OK(wt_onnx_list_external(again, again_len, &refs, &n));
  CHECK(n == 0);
  wt_external_refs_free(refs, n);
  free(again);
  wt_graph_free(g);

  /* loaded, then shared: the second graph borrows the first's bytes (no read), and freeing or
   * pruning it leaves them (ASan would see a double free) */
  wt_onnx_read_opts plain = {.read_external = read_side};
  wt_graph *train;
  reads = 0;
  CHECK_OK(wt_onnx_read(bytes, len, &plain, &train));
  int tw = wt_graph_find(train, "W");
  CHECK(reads == 1 && (train->values[tw].flags & WT_VALUE_EXTERNAL) && !(train->values[tw].flags & WT_VALUE_BORROWED));
  /* the buffer the reader was given is the tensor's, not packed away after the read (a
   * deferred reader fills it later) */
  CHECK(train->values[tw].data == last_dst);
  wt_onnx_read_opts share = {.read_external = read_side, .share = train};
  wt_graph *ev;
  CHECK_OK(wt_onnx_read(bytes, len, &share, &ev));
  int ew = wt_graph_find(ev, "W");
  CHECK(reads == 1 && ev->values[ew].data == train->values[tw].data && (ev->values[ew].flags & WT_VALUE_BORROWED));
  CHECK_OK(wt_graph_infer_shapes(ev)); /* borrowed bytes fold like any constant */
  ev->n_outputs = 0;                   /* nothing left to compute: W is pruned */
  CHECK_OK(wt_graph_prune(ev));
  wt_graph_free(ev);
  CHECK(!memcmp(train->values[tw].data, side + 16, 24));

  /* another file range is not shared */
  wt_graph *other = wt_graph_new();
  CHECK_OK(wt_graph_set_external(other, "W", "w.bin", 20));
  wt_onnx_read_opts elsewhere = {.read_external = read_side, .share = other};
  CHECK_OK(wt_onnx_read(bytes, len, &elsewhere, &ev));
  CHECK(reads == 2 && !(ev->values[wt_graph_find(ev, "W")].flags & WT_VALUE_BORROWED));
  wt_graph_free(ev);
  wt_graph_free(other);
  wt_graph_free(train);
  free(bytes);
}

/* y = Add(x, B) with B [n] float embedded (raw_data), its values i * scale. */
static uint8_t *embedded_bytes(size_t *len, int n, int8_t dtype, float scale) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_value(g, "x"), b = wt_graph_value(g, "B"), y = wt_graph_value(g, "y");
  CHECK(x >= 0 && b >= 0 && y >= 0);
  g->values[x].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, x, 1, (const int64_t[]){n}));
  CHECK_OK(wt_graph_add_input(g, x));
  g->values[b].dtype = dtype;
  g->values[b].flags |= WT_VALUE_INITIALIZER;
  g->values[b].nbytes = (size_t)n * (dtype == WT_FLOAT ? 4 : 2);
  g->values[b].data = malloc(g->values[b].nbytes);
  for (int i = 0; i < n; i++) {
    if (dtype == WT_FLOAT) ((float *)g->values[b].data)[i] = (float)i * scale;
    else ((uint16_t *)g->values[b].data)[i] = (uint16_t)(i * (int)scale);
  }
  CHECK_OK(wt_value_set_shape(g, b, 1, (const int64_t[]){n}));
  CHECK(wt_graph_add_node(g, "Add", "", "add", 2, (int[]){x, b}, 1, &y) >= 0);
  return written(g, y, len);
}

static void test_same_bytes(void) {
  size_t len, len2;
  uint8_t *bytes = embedded_bytes(&len, 2048, WT_FLOAT, 0.5f); /* 8 KiB */
  wt_graph *train, *ev;
  CHECK_OK(wt_onnx_read(bytes, len, NULL, &train));
  int tb = wt_graph_find(train, "B");
  wt_onnx_read_opts share = {.share = train};
  /* the same bytes: borrowed; freeing and pruning the borrower leaves them */
  CHECK_OK(wt_onnx_read(bytes, len, &share, &ev));
  int eb = wt_graph_find(ev, "B");
  CHECK(ev->values[eb].data == train->values[tb].data && (ev->values[eb].flags & WT_VALUE_BORROWED));
  ev->n_outputs = 0;
  CHECK_OK(wt_graph_prune(ev));
  wt_graph_free(ev);
  CHECK(((float *)train->values[tb].data)[2047] == 1023.5f);
  /* other values, another dtype, another size, or at most WT_PACK_DATA_MAX bytes: a copy */
  struct { int n; int8_t dtype; float scale; } other[] = {{2048, WT_FLOAT, 0.25f}, {4096, WT_FLOAT16, 1.0f}, {1024, WT_FLOAT, 0.5f}};
  for (size_t k = 0; k < sizeof other / sizeof other[0]; k++) {
    uint8_t *b2 = embedded_bytes(&len2, other[k].n, other[k].dtype, other[k].scale);
    CHECK_OK(wt_onnx_read(b2, len2, &share, &ev));
    eb = wt_graph_find(ev, "B");
    CHECK(ev->values[eb].data != train->values[tb].data && !(ev->values[eb].flags & WT_VALUE_BORROWED));
    wt_graph_free(ev);
    free(b2);
  }
  wt_graph_free(train);
  free(bytes);
  /* at the pack threshold: never borrowed (compaction moves such data) */
  bytes = embedded_bytes(&len, WT_PACK_DATA_MAX / 4, WT_FLOAT, 0.5f);
  CHECK_OK(wt_onnx_read(bytes, len, NULL, &train));
  share.share = train;
  CHECK_OK(wt_onnx_read(bytes, len, &share, &ev));
  CHECK(!(ev->values[wt_graph_find(ev, "B")].flags & WT_VALUE_BORROWED));
  wt_graph_free(ev);
  wt_graph_free(train);
  free(bytes);
}

int main(void) {
  for (size_t i = 0; i < sizeof side; i++) side[i] = (uint8_t)(i * 7 + 3);
  test_by_reference();
  test_same_bytes();
  return wt_check_failures ? 1 : 0;
}
