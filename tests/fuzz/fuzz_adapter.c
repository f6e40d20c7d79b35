/* libFuzzer: wt_adapter_read (ONNX Runtime's .onnx_adapter flatbuffer) on fuzzed bytes. A file
 * that reads must write back to a file that reads to the same tensors. */
#include "fuzz_common.h"
#include "io/adapter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wt_const_tensor *p = NULL, *q = NULL;
  int n = 0, nq = 0, av = 0, mv = 0;
  if (wt_adapter_read(data, size, &p, &n, &av, &mv) == WT_OK) {
    uint8_t *b = NULL;
    size_t bl = 0;
    FUZZ_ASSERT(wt_adapter_write(p, n, av, mv, &b, &bl) == WT_OK, "an adapter that reads writes back");
    FUZZ_ASSERT(wt_adapter_read(b, bl, &q, &nq, NULL, NULL) == WT_OK && nq == n, "and reads again");
    for (int i = 0; i < n && i < nq; i++) {
      FUZZ_ASSERT(!strcmp(p[i].name, q[i].name) && p[i].t.rank == q[i].t.rank, "same names and ranks");
      FUZZ_ASSERT(!memcmp(p[i].t.data, q[i].t.data, wt_nbytes(&p[i].t)), "same data");
    }
    wt_adapter_free(q, nq);
    free(b);
    wt_adapter_free(p, n);
  }
  wt_error_clear();
  return 0;
}
