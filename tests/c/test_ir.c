/* IR construction, attributes and topological sort. */
#include <string.h>

#include "check.h"
#include "ir/ir.h"

int main(void) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_value(g, "x"), y = wt_graph_value(g, "y"), z = wt_graph_value(g, "z");
  CHECK(wt_graph_value(g, "x") == x);
  CHECK_OK(wt_graph_add_input(g, x));
  /* z = Relu(y) is added before y = Neg(x): toposort must reorder. */
  int n1 = wt_graph_add_node(g, "Relu", "", "r", 1, &y, 1, &z);
  int n2 = wt_graph_add_node(g, "Neg", "ai.onnx", "n", 1, &x, 1, &y);
  CHECK(n1 == 0 && n2 == 1);
  CHECK_OK(wt_node_set_int(g, n1, "axis", -1));
  CHECK(wt_attr_int(&g->nodes[n1], "axis", 0) == -1);
  CHECK(wt_attr_int(&g->nodes[n1], "missing", 7) == 7);
  CHECK_OK(wt_graph_add_output(g, z));
  CHECK_OK(wt_graph_toposort(g));
  CHECK(strcmp(g->nodes[0].op_type, "Neg") == 0);
  CHECK(strcmp(g->nodes[0].domain, "") == 0);
  CHECK(g->values[z].producer == 1);
  CHECK(wt_attr_int(&g->nodes[1], "axis", 0) == -1);

  /* A node reading a value nothing produces is an error that names both. */
  int w = wt_graph_value(g, "w"), u = wt_graph_value(g, "u");
  wt_graph_add_node(g, "Abs", "", "bad", 1, &w, 1, &u);
  CHECK(wt_graph_toposort(g) != 0);
  wt_graph_free(g);
  CHECK_DONE();
}
