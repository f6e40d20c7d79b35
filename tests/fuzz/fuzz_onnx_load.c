/* libFuzzer: wt_onnx_read on arbitrary bytes; a graph that loads is written back, and the
 * bytes read and written twice more: what webtrain writes it reads, sizes are kept, and after
 * one round trip the bytes are a fixed point. The same bytes as a serialized TensorProto (the
 * backend tests' .pb files). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wt_graph *g = NULL;
  if (wt_onnx_read(data, size, NULL, &g) == WT_OK) {
    /* The first write may order value_info differently from the input (values are numbered in
     * order of appearance); after one round trip the bytes are a fixed point. */
    uint8_t *b[3] = {NULL, NULL, NULL};
    size_t l[3] = {0, 0, 0};
    FUZZ_ASSERT(wt_onnx_write(g, &b[0], &l[0]) == WT_OK, "a graph that was read can be written");
    for (int k = 1; k < 3; k++) {
      wt_graph *g2 = NULL;
      FUZZ_ASSERT(wt_onnx_read(b[k - 1], l[k - 1], NULL, &g2) == WT_OK, "what webtrain writes, it reads");
      FUZZ_ASSERT(wt_onnx_write(g2, &b[k], &l[k]) == WT_OK, "a re-read graph can be written");
      wt_graph_free(g2);
    }
    FUZZ_ASSERT(l[0] == l[1], "a round trip keeps the size");
    FUZZ_ASSERT(l[1] == l[2] && memcmp(b[1], b[2], l[1]) == 0, "write(read(x)) is a fixed point");
    for (int k = 0; k < 3; k++) free(b[k]);
    wt_graph_free(g);
  }
  wt_const_tensor *t = NULL;
  if (wt_tensor_pb_read(data, size, &t) == WT_OK) {
    wt_fuzz_touch(t->t.data, wt_nbytes(&t->t));
    uint8_t *b = NULL;
    size_t l = 0;
    FUZZ_ASSERT(wt_tensor_pb_write(t, &b, &l) == WT_OK, "tensor write");
    wt_const_tensor *t2 = NULL;
    FUZZ_ASSERT(wt_tensor_pb_read(b, l, &t2) == WT_OK, "tensor re-read");
    FUZZ_ASSERT(wt_nbytes(&t2->t) == wt_nbytes(&t->t), "tensor size round trip");
    wt_const_tensor_free(t2);
    free(b);
    wt_const_tensor_free(t);
  }
  wt_error_clear();
  return 0;
}
