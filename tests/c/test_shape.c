/* The shape pass on its own (no planner): storage classes, eager folding of shape-only nodes,
 * lazy folding of a step whose output an op asks for (keying the input it came from), the
 * caller's per-step fields, errors naming the node, and stand-ins for symbolic dims (nothing
 * of their size is folded or refused). */
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

/* y = x + ReduceSum(ConstantOfShape(Concat(Shape(x), [131072])), axis 2): x [batch, seq]. Every
 * input of the ConstantOfShape is known, so a pass folds it: at the stand-ins of
 * wt_graph_infer_shapes (~1000-2000 squared) that would be 2 TB (calloc fails, generation with it);
 * with stand-ins the pass leaves it a step and still folds the small Concat. */
static wt_graph *wide_constant_model(int *big, int *cat, int *y) {
  wt_graph *g = wt_graph_new();
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  int x = input(g, "x", WT_FLOAT, 2, (const int64_t[]){-1, -1});
  CHECK_OK(wt_value_set_dim_param(g, x, 0, "batch"));
  CHECK_OK(wt_value_set_dim_param(g, x, 1, "seq"));
  static const int64_t width[1] = {131072}, axes[1] = {2};
  int w = wt_graph_value(g, "width"), ax = wt_graph_value(g, "axes");
  for (int k = 0; k < 2; k++) {
    int v = k ? ax : w;
    g->values[v].flags |= WT_VALUE_INITIALIZER;
    g->values[v].dtype = WT_INT64;
    CHECK_OK(wt_value_set_shape(g, v, 1, (const int64_t[]){1}));
    g->values[v].data = malloc(sizeof(int64_t));
    memcpy(g->values[v].data, k ? axes : width, sizeof(int64_t));
    g->values[v].nbytes = sizeof(int64_t);
  }
  int sh = wt_graph_value(g, "sh"), sum = wt_graph_value(g, "sum");
  *cat = wt_graph_value(g, "cat");
  *big = wt_graph_value(g, "big");
  *y = wt_graph_value(g, "y");
  CHECK(wt_graph_add_node(g, "Shape", "", "shape", 1, &x, 1, &sh) >= 0);
  int concat = wt_graph_add_node(g, "Concat", "", "concat", 2, (int[]){sh, w}, 1, cat);
  CHECK(concat >= 0);
  CHECK_OK(wt_node_set_int(g, concat, "axis", 0));
  CHECK(wt_graph_add_node(g, "ConstantOfShape", "", "fill", 1, cat, 1, big) >= 0);
  int reduce = wt_graph_add_node(g, "ReduceSum", "", "reduce", 2, (int[]){*big, ax}, 1, &sum);
  CHECK(reduce >= 0);
  CHECK_OK(wt_node_set_int(g, reduce, "keepdims", 0));
  CHECK(wt_graph_add_node(g, "Add", "", "add", 2, (int[]){x, sum}, 1, y) >= 0);
  CHECK_OK(wt_graph_add_output(g, *y));
  return g;
}

static void test_stand_ins(void) {
  int big, cat, y;
  wt_graph *g = wide_constant_model(&big, &cat, &y);
  /* stand-ins: the 2 TB value is a step (its bytes nobody's), the Concat folded */
  wt_tensor in = desc(WT_FLOAT, 2, (const int64_t[]){2003, 2009}, NULL);
  wt_shape_pass sp;
  CHECK_OK(wt_shape_pass_begin(&sp, g, &in, sizeof(wt_shape_step)));
  sp.stand_ins = 1;
  CHECK_OK(wt_shape_pass_walk(&sp));
  CHECK(sp.storage[cat] == WT_ST_STATIC && sp.storage[big] == WT_ST_ARENA);
  CHECK(sp.vals[big].rank == 3 && sp.vals[big].dims[0] == 2003 && sp.vals[big].dims[2] == 131072);
  wt_shape_pass_release(&sp);
  /* real sizes: folded as before (a 3 MB constant) */
  in = desc(WT_FLOAT, 2, (const int64_t[]){2, 3}, NULL);
  CHECK_OK(wt_shape_pass_begin(&sp, g, &in, sizeof(wt_shape_step)));
  CHECK_OK(wt_shape_pass_walk(&sp));
  CHECK(sp.storage[big] == WT_ST_STATIC && sp.storage[y] == WT_ST_ARENA);
  wt_shape_pass_release(&sp);
  /* generation's symbolic inference: every dim that follows batch or seq stays symbolic */
  CHECK_OK(wt_graph_infer_shapes(g));
  const wt_value *b = &g->values[big], *out = &g->values[y];
  CHECK(b->rank == 3 && b->dims[0] == -1 && b->dims[1] == -1 && b->dims[2] == 131072);
  CHECK(out->rank == 2 && wt_value_dim_param(out, 0) && !strcmp(wt_value_dim_param(out, 0), "batch") &&
        wt_value_dim_param(out, 1) && !strcmp(wt_value_dim_param(out, 1), "seq"));
  wt_graph_free(g);
}

/* y = x + Slice(table [1, cap], 0, seq, axis 1): seq must stay <= cap (a position table), so the
 * stand-ins (~1000) are too big below 1000: a smaller level names batch and seq all the same;
 * a cap below every level fails with the first level's error, saying so. */
static void test_capped_dim(int64_t cap, int ok) {
  wt_graph *g = wt_graph_new();
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  int x = input(g, "x", WT_FLOAT, 2, (const int64_t[]){-1, -1});
  CHECK_OK(wt_value_set_dim_param(g, x, 0, "batch"));
  CHECK_OK(wt_value_set_dim_param(g, x, 1, "seq"));
  int vals[3];
  const char *names[3] = {"table", "starts", "axes"};
  for (int k = 0; k < 3; k++) {
    int v = vals[k] = wt_graph_value(g, names[k]);
    g->values[v].flags |= WT_VALUE_INITIALIZER;
    g->values[v].dtype = k ? WT_INT64 : WT_FLOAT;
    CHECK_OK(wt_value_set_shape(g, v, k ? 1 : 2, k ? (const int64_t[]){1} : (const int64_t[]){1, cap}));
    g->values[v].nbytes = k ? sizeof(int64_t) : sizeof(float) * (size_t)cap;
    g->values[v].data = calloc(1, g->values[v].nbytes);
    if (k == 2) *(int64_t *)g->values[v].data = 1;
  }
  int sh = wt_graph_value(g, "sh"), part = wt_graph_value(g, "part"), y = wt_graph_value(g, "y");
  int shape = wt_graph_add_node(g, "Shape", "", "shape", 1, &x, 1, &sh);
  CHECK(shape >= 0);
  CHECK_OK(wt_node_set_int(g, shape, "start", 1));
  CHECK(wt_graph_add_node(g, "Slice", "", "slice", 4, (int[]){vals[0], vals[1], sh, vals[2]}, 1, &part) >= 0);
  CHECK(wt_graph_add_node(g, "Add", "", "add", 2, (int[]){x, part}, 1, &y) >= 0);
  CHECK_OK(wt_graph_add_output(g, y));
  int rc = wt_graph_infer_shapes(g);
  if (ok) {
    CHECK_OK(rc);
    const wt_value *out = &g->values[y];
    CHECK(out->rank == 2 && out->dims[0] == -1 && out->dims[1] == -1);
    CHECK(wt_value_dim_param(out, 0) && !strcmp(wt_value_dim_param(out, 0), "batch"));
    CHECK(wt_value_dim_param(out, 1) && !strcmp(wt_value_dim_param(out, 1), "seq"));
    CHECK(wt_value_dim_param(&g->values[part], 1) && !strcmp(wt_value_dim_param(&g->values[part], 1), "seq"));
  } else {
    CHECK(rc == WT_ERR_SHAPE);
    CHECK(strstr(wt_error_message(), "Add node 'add'") && strstr(wt_error_message(), "1009") &&
          strstr(wt_error_message(), "stand-in sizes from 1009 down to 11"));
  }
  wt_graph_free(g);
}

int main(void) {
  test_fold_and_steps();
  test_lazy_fold_keys_input();
  test_begin_checks_inputs();
  test_stand_ins();
  test_capped_dim(100000, 1);
  test_capped_dim(512, 1);
  test_capped_dim(64, 1);
  test_capped_dim(5, 0);
  return wt_check_failures != 0;
}
