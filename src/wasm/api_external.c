/* External tensor data from JavaScript (js/external.js). Two halves:
 *  - wtw_external_list: what a model's initializers reference (tensor, location, offset,
 *    length), read before the model is parsed, so that JS fetches only those side files and
 *    ranges (a URL, a Blob) and can refuse an externalData entry no tensor references;
 *  - the reader every model parse uses (installed at startup as the io layer's default): it
 *    calls Module.wtReadExternal(location, offset, length, dst), which JS sets around each
 *    synchronous call that parses a model, and which writes the bytes straight into dst, the
 *    tensor's own heap buffer (Node: fs.readSync into the heap; no JS copy of a side file).
 * The JS function returns 0, or a malloc'd message (taken and freed here). Same ABI
 * conventions as api.c. */
#include <stdlib.h>

#include "base/status.h"
#include "io/onnx_io.h"

typedef struct ext_list {
  wt_external_ref *refs;
  int n;
} ext_list;

ext_list *wtw_external_list(const uint8_t *bytes, size_t len) {
  ext_list *l = calloc(1, sizeof *l);
  if (!l) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), NULL;
  if (wt_onnx_list_external(bytes, len, &l->refs, &l->n)) {
    free(l);
    return NULL;
  }
  return l;
}
int wtw_external_count(const ext_list *l) { return l->n; }
const char *wtw_external_tensor(const ext_list *l, int i) { return l->refs[i].tensor; }
const char *wtw_external_location(const ext_list *l, int i) { return l->refs[i].location; }
double wtw_external_offset(const ext_list *l, int i) { return (double)l->refs[i].offset; }
double wtw_external_length(const ext_list *l, int i) { return (double)l->refs[i].length; }
int wtw_external_dtype(const ext_list *l, int i) { return l->refs[i].dtype; }
void wtw_external_list_free(ext_list *l) {
  if (!l) return;
  wt_external_refs_free(l->refs, l->n);
  free(l);
}

#ifdef __EMSCRIPTEN__
#include <emscripten.h>

/* Pointers cross as unsigned (>>> 0: the heap may pass 2 GB); 64-bit numbers as doubles. -1: no
 * reader is set (a parse outside js/external.js). */
EM_JS(char *, wtw_js_read_external, (const char *location, double offset, double length, void *dst), {
  var read = Module['wtReadExternal'];
  return read ? read(location >>> 0, offset, length, dst >>> 0) : -1;
});

static int read_js(void *user, const char *location, uint64_t offset, uint64_t length, void *dst) {
  (void)user;
  char *msg = wtw_js_read_external(location, (double)offset, (double)length, dst);
  if (!msg) return WT_OK;
  if (msg == (char *)-1)
    return wt_errorf(WT_ERR_IO, "stored in external file '%s', but no way to read external data "
                     "was given", location);
  int rc = wt_errorf(WT_ERR_IO, "%s", msg);
  free(msg);
  return rc;
}

__attribute__((constructor)) static void install_reader(void) {
  wt_onnx_set_default_external(read_js, NULL);
}
#endif
