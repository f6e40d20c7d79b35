/* Limits up front: a model whose weights plus planned activations pass the build's memory fails
 * at plan time, before its arena is allocated, saying how many bytes it needs and what would
 * help (a smaller batch; float16 frozen weights). The limit is lowered here (natively it is the
 * planner's 1 TiB; in wasm32 the build's maximum memory, 4 GiB): shapes that imply more. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/checkpoint.h"
#include "io/onnx_io.h"
#include "runtime/session.h"
#include "webtrain.h"

/* Y = Sum(X @ W1, X @ W2, X @ W3): X [batch, 1], Wi [1, n] (initializers). */
static wt_session *model(int64_t n) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_add_value(g, "X"), y = wt_graph_add_value(g, "Y"), parts[3];
  g->values[x].dtype = WT_FLOAT;
  if (wt_value_set_shape(g, x, 2, (const int64_t[]){-1, 1}) || wt_graph_add_input(g, x)) return NULL;
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "W%d", i);
    int w = wt_graph_add_value(g, name);
    g->values[w].flags |= WT_VALUE_INITIALIZER;
    g->values[w].dtype = WT_FLOAT;
    if (wt_value_set_shape(g, w, 2, (const int64_t[]){1, n})) return NULL;
    g->values[w].nbytes = sizeof(float) * (size_t)n;
    g->values[w].data = calloc((size_t)n, sizeof(float));
    snprintf(name, sizeof name, "P%d", i);
    parts[i] = wt_graph_add_value(g, name);
    if (wt_graph_add_node(g, "MatMul", "", name, 2, (int[]){x, w}, 1, &parts[i]) < 0) return NULL;
  }
  if (wt_graph_add_node(g, "Sum", "", "sum", 3, parts, 1, &y) < 0 || wt_graph_add_output(g, y) ||
      wt_graph_set_opset(g, "", 17))
    return NULL;
  wt_session *s;
  return wt_session_create_from_graph(g, &s) ? NULL : s;
}

static int run(wt_session *s, int64_t batch) {
  float *x = calloc((size_t)batch, sizeof(float));
  int rc = wt_session_set_input(s, 0, WT_FLOAT, 2, (const int64_t[]){batch, 1}, x);
  if (!rc) rc = wt_session_run(s);
  free(x);
  return rc;
}

/* A training model whose one weight W [rows, 1024] of dtype is held by reference in 'w.data'
 * (written as the reference; no side file exists), and an empty state: Module.create's
 * up-front check on the weights in external data. Returns the status; the message is kept. */
static int create_by_reference(int dtype, int64_t rows) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_add_value(g, "X"), w = wt_graph_add_value(g, "W"), y = wt_graph_add_value(g, "Y");
  g->values[x].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, x, 2, (const int64_t[]){1, rows}));
  CHECK_OK(wt_graph_add_input(g, x));
  g->values[w].flags |= WT_VALUE_INITIALIZER | WT_VALUE_EXTERNAL;
  g->values[w].dtype = (int8_t)dtype;
  CHECK_OK(wt_value_set_shape(g, w, 2, (const int64_t[]){rows, 1024}));
  g->values[w].nbytes = (size_t)rows * 1024 * (dtype == WT_FLOAT16 ? 2 : 4);
  CHECK_OK(wt_graph_set_external(g, "W", "w.data", 0));
  CHECK(wt_graph_add_node(g, "MatMul", "", "mm", 2, (int[]){x, w}, 1, &y) >= 0);
  CHECK_OK(wt_graph_add_output(g, y));
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  uint8_t *model = NULL, *ckpt = NULL;
  size_t model_len = 0, ckpt_len = 0;
  CHECK_OK(wt_onnx_write(g, &model, &model_len));
  wt_graph_free(g);
  wt_checkpoint empty = {0};
  CHECK_OK(wt_checkpoint_write(&empty, 0, &ckpt, &ckpt_len));
  wt_state *st = NULL;
  CHECK_OK(wt_state_load(ckpt, ckpt_len, &st));
  wt_module *m = NULL;
  int rc = wt_module_create(st, model, model_len, NULL, 0, &m);
  wt_module_free(m);
  wt_state_free(st);
  free(model);
  free(ckpt);
  return rc;
}

/* The weights by reference past the limit fail before any is allocated, saying what would help;
 * under it, the load goes on (and fails later here: there is no side file). */
static void weights_up_front(void) {
  wt_session_memory_limit_set((uint64_t)64 << 20);
  CHECK(create_by_reference(WT_FLOAT, 24 << 10) == WT_ERR_NO_MEMORY); /* 96 MiB of float */
  const char *m = wt_error_message();
  printf("%s\n", m);
  CHECK(strstr(m, "training model: its weights in external data need 100663296 bytes (96 MiB) ") &&
        strstr(m, "more than this build's memory can hold (64 MiB)") && strstr(m, "frozenDtype: 'float16'"));
  CHECK(create_by_reference(WT_FLOAT16, 48 << 10) == WT_ERR_NO_MEMORY); /* 96 MiB of float16 */
  m = wt_error_message();
  printf("%s\n", m);
  CHECK(strstr(m, "(96 MiB, all float16)") && strstr(m, "a smaller base") && !strstr(m, "frozenDtype"));
  CHECK(create_by_reference(WT_FLOAT16, 16 << 10) != WT_OK); /* 32 MiB: past the check */
  m = wt_error_message();
  printf("%s\n", m);
  CHECK(strstr(m, "more than this build's memory") == NULL && strstr(m, "w.data") != NULL);
  wt_session_memory_limit_set(0);
}

/* A model whose weights inside would pass protobuf's 2 GiB is refused when written, naming its
 * size and keepExternalData (a 1B-parameter float16 base exported with its weights inside). The
 * 3 GiB weight is a length over a small buffer: sizing the message reads no bytes. */
static void write_past_2gib(void) {
  static float small[4];
  wt_graph *g = wt_graph_new();
  int x = wt_graph_add_value(g, "X"), w = wt_graph_add_value(g, "W"), y = wt_graph_add_value(g, "Y");
  g->values[x].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, x, 1, (const int64_t[]){1}));
  CHECK_OK(wt_graph_add_input(g, x));
  g->values[w].flags |= WT_VALUE_INITIALIZER | WT_VALUE_BORROWED;
  g->values[w].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, w, 1, (const int64_t[]){(int64_t)3 << 28}));
  g->values[w].nbytes = (size_t)3 << 30;
  g->values[w].data = small;
  CHECK(wt_graph_add_node(g, "Add", "", "add", 2, (int[]){x, w}, 1, &y) >= 0);
  CHECK_OK(wt_graph_add_output(g, y));
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  uint8_t *bytes = NULL;
  size_t len = 0;
  CHECK(wt_onnx_write(g, &bytes, &len) == WT_ERR_INVALID_ARG);
  const char *m = wt_error_message();
  printf("%s\n", m);
  CHECK(bytes == NULL && len == 0);
  CHECK(strstr(m, "the model with its weights inside would be 32212") && strstr(m, "past the 2 GiB protobuf allows") &&
        strstr(m, "keepExternalData: true"));
  g->values[w].data = NULL;
  g->values[w].nbytes = 0;
  wt_graph_free(g);
}

int main(void) {
  wt_session_memory_limit_set((uint64_t)64 << 20);
  /* weights 3 x 1 MiB; at batch 8 the activations are 4 x 8 MiB... too much for 64 MiB at 16 */
  wt_session *s = model(1 << 18);
  CHECK(s != NULL);
  CHECK_OK(run(s, 4));
  size_t before = wt_session_arena_capacity(s);
  int rc = run(s, 64);
  CHECK(rc == WT_ERR_NO_MEMORY);
  const char *m = wt_error_message();
  printf("%s\n", m);
  CHECK(strstr(m, "the model needs ") && strstr(m, "MiB of activations at these input shapes") &&
        strstr(m, "more than this build's memory can hold (64 MiB)") && strstr(m, "a smaller batch") &&
        strstr(m, "frozenDtype: 'float16'"));
  CHECK(wt_session_arena_capacity(s) == before); /* nothing allocated for the refused plan */
  CHECK_OK(run(s, 4));                            /* and the session still runs */
  wt_session_free(s);
  /* weights alone past the limit: 3 x 32 MiB */
  s = model(1 << 23);
  CHECK(s != NULL);
  CHECK(run(s, 1) == WT_ERR_NO_MEMORY);
  m = wt_error_message();
  printf("%s\n", m);
  CHECK(strstr(m, "96 MiB of weights and inputs") != NULL);
  wt_session_free(s);
  wt_session_memory_limit_set(0);
  /* the heap in use past 2 GiB (a 1B-parameter float16 base: 2.0 GiB of weights): mallinfo's
   * int is negative there, and was read as 16 EiB in use */
  CHECK(wt_mallinfo_bytes(-2144700680) == 2150266616ull);
  CHECK(wt_mallinfo_bytes(-1) == 4294967295ull);
  CHECK(wt_mallinfo_bytes(1 << 30) == 1073741824ull);
  weights_up_front();
  if (sizeof(size_t) == 8) write_past_2gib(); /* natively: wasm32 cannot describe 3 GiB */
  CHECK_DONE();
}
