/* Initializers stored in external data files: the graph's record of where each one's bytes are
 * (location and offset, by value name), so that a graph read with its weights by reference can
 * write the same references back (artifact generation), and a module's eval model can find the
 * training model's already loaded bytes of the same file range (src/io/onnx_read.c). */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

int wt_graph_set_external(wt_graph *g, const char *name, const char *location, uint64_t offset) {
  char *n = wt_strdup(name), *l = wt_strdup(location);
  wt_external_init *grown = n && l ? realloc(g->ext, sizeof *g->ext * (size_t)(g->n_ext + 1)) : NULL;
  if (!grown) {
    free(n);
    free(l);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  g->ext = grown;
  for (int i = 0; i < g->n_ext; i++)
    if (!strcmp(g->ext[i].name, name)) {
      free(g->ext[i].name);
      free(g->ext[i].location);
      g->ext[i] = (wt_external_init){n, l, offset};
      return WT_OK;
    }
  g->ext[g->n_ext++] = (wt_external_init){n, l, offset};
  return WT_OK;
}

const wt_external_init *wt_graph_external(const wt_graph *g, const char *name) {
  for (int i = 0; i < g->n_ext; i++)
    if (!strcmp(g->ext[i].name, name)) return &g->ext[i];
  return NULL;
}

void wt_value_drop_data(const wt_graph *g, wt_value *v) {
  if (!(v->flags & WT_VALUE_BORROWED)) wt_graph_release(g, v->data);
  v->flags &= ~(uint8_t)WT_VALUE_BORROWED;
  v->data = NULL;
  v->nbytes = 0;
}

void wt_graph_free_external(wt_graph *g) {
  for (int i = 0; i < g->n_ext; i++) {
    free(g->ext[i].name);
    free(g->ext[i].location);
  }
  free(g->ext);
  g->ext = NULL;
  g->n_ext = 0;
}
