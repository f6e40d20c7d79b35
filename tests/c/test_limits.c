/* Limits up front: a model whose weights plus planned activations pass the build's memory fails
 * at plan time, before its arena is allocated, saying how many bytes it needs and what would
 * help (a smaller batch; float16 frozen weights). The limit is lowered here (natively it is the
 * planner's 1 TiB; in wasm32 the build's maximum memory, 4 GiB): shapes that imply more. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
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
  CHECK_DONE();
}
