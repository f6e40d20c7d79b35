/* Dead-node elimination: keeps the nodes the graph outputs depend on, drops the rest and the
 * initializers nothing reads any more. Graph inputs stay (they are the interface). */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "ir/ir.h"

int wt_graph_prune(wt_graph *g) {
  unsigned char *live_v = calloc((size_t)g->n_values + 1, 1);
  unsigned char *live_n = calloc((size_t)g->n_nodes + 1, 1);
  if (!live_v || !live_n) {
    free(live_v);
    free(live_n);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  for (int i = 0; i < g->n_outputs; i++) live_v[g->outputs[i]] = 1;
  for (int n = g->n_nodes - 1; n >= 0; n--) {
    const wt_node *nd = &g->nodes[n];
    for (int k = 0; k < nd->n_outputs && !live_n[n]; k++)
      if (nd->outputs[k] >= 0 && live_v[nd->outputs[k]]) live_n[n] = 1;
    if (!live_n[n]) continue;
    for (int k = 0; k < nd->n_inputs; k++)
      if (nd->inputs[k] >= 0) live_v[nd->inputs[k]] = 1;
  }
  int w = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    if (live_n[n]) {
      g->nodes[w++] = g->nodes[n];
      continue;
    }
    wt_node *nd = &g->nodes[n];
    for (int k = 0; k < nd->n_outputs; k++)
      if (nd->outputs[k] >= 0) g->values[nd->outputs[k]].producer = -1;
    wt_node_clear(g, nd);
  }
  g->n_nodes = w;
  for (int n = 0; n < g->n_nodes; n++)
    for (int k = 0; k < g->nodes[n].n_outputs; k++)
      if (g->nodes[n].outputs[k] >= 0) g->values[g->nodes[n].outputs[k]].producer = n;
  for (int v = 0; v < g->n_values; v++) {
    wt_value *val = &g->values[v];
    if ((val->flags & WT_VALUE_INITIALIZER) && !live_v[v] && !(val->flags & WT_VALUE_GRAPH_INPUT)) {
      val->flags &= ~(uint32_t)WT_VALUE_INITIALIZER;
      wt_value_drop_data(g, val);
    }
  }
  free(live_v);
  free(live_n);
  return WT_OK;
}
