/* IR construction, attributes, topological sort, and creating values under taken names. */
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

  /* Creating values: an exact name never reuses a value; a made-up one steps aside. */
  CHECK(wt_graph_add_value(g, "x") == -1);
  int n_before = g->n_values;
  int a = wt_graph_add_value(g, "x_grad");
  CHECK(a == n_before && strcmp(g->values[a].name, "x_grad") == 0);
  int b = wt_graph_fresh_value(g, "x_grad");
  CHECK(b != a && strcmp(g->values[b].name, "x_grad_1") == 0);
  int c = wt_graph_fresh_value(g, "x_grad");
  CHECK(c != b && strcmp(g->values[c].name, "x_grad_2") == 0);
  CHECK(strcmp(g->values[wt_graph_fresh_value(g, "fresh")].name, "fresh") == 0);
  wt_graph_free(g);
  CHECK_DONE();
}
