/* The shape pass on its own (no planner): storage classes, eager folding of shape-only nodes,
 * lazy folding of a step whose output an op asks for (keying the input it came from), the
 * caller's per-step fields, and errors naming the node. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "shape/shape.h"

static int input(wt_graph *g, const char *name, int dtype, int rank, const int64_t *dims) {
  int v = wt_graph_value(g, name);
  g->values[v].dtype = (int8_t)dtype;
  wt_value_set_shape(g, v, rank, dims);
  wt_graph_add_input(g, v);
  return v;
}

static wt_tensor desc(int dtype, int rank, const int64_t *dims, const void *data) {
  wt_tensor t = {.dtype = dtype, .rank = rank, .data = (void *)data};
  for (int d = 0; d < rank; d++) t.dims[d] = dims[d];
  return t;
}

/* The caller's step: the pass's, then its own fields, which the pass leaves zeroed. */
typedef struct my_step {
  wt_shape_step s;
  double mine;
} my_step;

/* y = Relu(Reshape(x, Shape(x))): Shape folds (shape-only), Reshape is a view step. */
static void test_fold_and_steps(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 2, (const int64_t[]){-1, 4});
  int s = wt_graph_value(g, "s"), r = wt_graph_value(g, "r"), y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "Shape", "", "shape", 1, &x, 1, &s);
  wt_graph_add_node(g, "Reshape", "", "reshape", 2, (int[]){x, s}, 1, &r);
  wt_graph_add_node(g, "Relu", "", "relu", 1, &r, 1, &y);
  wt_graph_add_output(g, y);
  wt_tensor in = desc(WT_FLOAT, 2, (const int64_t[]){3, 4}, NULL);
  wt_shape_pass sp;
  CHECK_OK(wt_shape_pass_begin(&sp, g, &in, sizeof(my_step)));
  CHECK_OK(wt_shape_pass_walk(&sp));
  CHECK(sp.storage[x] == WT_ST_INPUT && sp.storage[s] == WT_ST_STATIC);
  CHECK(sp.storage[r] == WT_ST_VIEW && sp.storage[y] == WT_ST_ARENA);
  CHECK(sp.vals[s].data && ((const int64_t *)sp.vals[s].data)[0] == 3);
  CHECK(sp.vals[y].dtype == WT_FLOAT && sp.vals[y].rank == 2 && sp.vals[y].dims[0] == 3 &&
        sp.vals[y].dims[1] == 4);
  CHECK(sp.n_steps == 2);
  if (sp.n_steps == 2) {
    const my_step *st = sp.steps;
    CHECK(st[0].s.node == &g->nodes[1] && st[0].s.view && st[0].mine == 0.0);
    CHECK(wt_shape_step_at(&sp, 1) == &st[1].s && !st[1].s.view && !strcmp(st[1].s.op->op_type, "Relu"));
  }
  CHECK(!sp.keyed[0]);
  wt_shape_pass_release(&sp);
  wt_graph_free(g);
}

/* z = Reshape(x, Identity(shape)) with shape a graph input: Identity is a step until Reshape
 * asks for its output, then folds from the input's data (which keys the result) and leaves the
 * steps. Without the data, Reshape cannot be inferred. */
static void test_lazy_fold_keys_input(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, (const int64_t[]){6});
  int shape = input(g, "shape", WT_INT64, 1, (const int64_t[]){2});
  int t = wt_graph_value(g, "t"), z = wt_graph_value(g, "z");
  wt_graph_add_node(g, "Identity", "", "id", 1, &shape, 1, &t);
  wt_graph_add_node(g, "Reshape", "", "reshape", 2, (int[]){x, t}, 1, &z);
  wt_graph_add_output(g, z);
  static const int64_t to[2] = {2, 3};
  wt_tensor in[2] = {desc(WT_FLOAT, 1, (const int64_t[]){6}, NULL),
                     desc(WT_INT64, 1, (const int64_t[]){2}, to)};
  wt_shape_pass sp;
  CHECK_OK(wt_shape_pass_begin(&sp, g, in, sizeof(wt_shape_step)));
  CHECK_OK(wt_shape_pass_walk(&sp));
  CHECK(sp.storage[t] == WT_ST_STATIC && sp.storage[z] == WT_ST_VIEW);
  CHECK(sp.vals[z].rank == 2 && sp.vals[z].dims[0] == 2 && sp.vals[z].dims[1] == 3);
  CHECK(sp.n_steps == 1 && wt_shape_step_at(&sp, 0)->node == &g->nodes[1]);
  CHECK(!sp.keyed[0] && sp.keyed[1]);
  CHECK(wt_shape_value(&sp, x) == NULL && wt_shape_value(&sp, t) == &sp.vals[t]);
  wt_shape_pass_release(&sp);

  in[1].data = NULL;
  CHECK_OK(wt_shape_pass_begin(&sp, g, in, sizeof(wt_shape_step)));
  CHECK(wt_shape_pass_walk(&sp) != WT_OK && strstr(wt_error_message(), "reshape"));
  wt_shape_pass_release(&sp);
  wt_graph_free(g);
}

/* Inputs are checked before anything is allocated. */
static void test_begin_checks_inputs(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = input(g, "x", WT_FLOAT, 1, (const int64_t[]){6});
  int y = wt_graph_value(g, "y");
  wt_graph_add_node(g, "Relu", "", "relu", 1, &x, 1, &y);
  wt_graph_add_output(g, y);
  wt_tensor in = desc(WT_FLOAT, 1, (const int64_t[]){5}, NULL);
  wt_shape_pass sp;
  CHECK(wt_shape_pass_begin(&sp, g, &in, sizeof(wt_shape_step)) == WT_ERR_SHAPE);
  CHECK(strstr(wt_error_message(), "input 'x' has shape [5]; expected [6]") != NULL);
  CHECK(!sp.vals && !sp.steps);
  wt_shape_pass_release(&sp);
  wt_graph_free(g);
}

int main(void) {
  test_fold_and_steps();
  test_lazy_fold_keys_input();
  test_begin_checks_inputs();
  return wt_check_failures != 0;
}
