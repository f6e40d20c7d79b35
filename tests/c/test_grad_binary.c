/* Finite-difference checks of the binary elementwise gradient rules, with broadcasting. */
#include <string.h>

#include "autodiff/autodiff.h"
#include "check.h"
#include "gradcheck.h"
#include "shape/shape.h"

static int64_t g_axes[2];
static int g_n_axes, g_keepdims;
static void reduce_attrs(wt_graph *g, int node) {
  if (g_n_axes) wt_node_set_ints(g, node, "axes", g_axes, g_n_axes);
  wt_node_set_int(g, node, "keepdims", g_keepdims);
}

/* ReduceProd has no gradient rule by design: building one fails and names the op. */
static void reduce_prod_refused(void) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = wt_graph_value(g, "x"), y = wt_graph_value(g, "y");
  g->values[x].dtype = WT_FLOAT;
  wt_value_set_shape(g, x, 1, (const int64_t[]){3});
  wt_graph_add_input(g, x);
  int n = wt_graph_add_node(g, "ReduceProd", "", "prod", 1, &x, 1, &y);
  wt_node_set_int(g, n, "keepdims", 0);
  CHECK_OK(wt_graph_infer_shapes(g));
  int grad;
  CHECK(wt_autodiff(g, y, 1, &x, &grad) == WT_ERR_UNSUPPORTED);
  CHECK(strstr(wt_error_message(), "webtrain has no gradient yet for 1 node between the parameters "
                                   "and the loss: ReduceProd (node 'prod': Y / X fails at zeros (ONNX "
                                   "Runtime has none either); write the product as "
                                   "Exp(ReduceSum(Log(X))) for positive X)") != NULL);
  wt_graph_free(g);
}

int main(void) {
  int failed = 0;
  gc_arg same[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 2, .dims = {3, 4}}};
  gc_arg bias[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 1, .dims = {4}}};
  gc_arg col[2] = {{.rank = 3, .dims = {2, 3, 1}}, {.rank = 2, .dims = {1, 4}}};
  const char *ops[] = {"Add", "Sub", "Mul"};
  for (int i = 0; i < 3; i++) {
    char label[64];
    snprintf(label, sizeof label, "%s same shape", ops[i]);
    failed += gradcheck(label, ops[i], NULL, 2, same, NULL);
    snprintf(label, sizeof label, "%s bias broadcast", ops[i]);
    failed += gradcheck(label, ops[i], NULL, 2, bias, NULL);
    snprintf(label, sizeof label, "%s both broadcast", ops[i]);
    failed += gradcheck(label, ops[i], NULL, 2, col, NULL);
  }
  gc_arg three[3] = {{.rank = 2, .dims = {2, 3}}, {.rank = 1, .dims = {3}}, {.rank = 0}};
  failed += gradcheck("Sum of three, broadcast", "Sum", NULL, 3, three, NULL);
  /* a constant operand gets no gradient, the other one does */
  gc_arg with_const[2] = {{.rank = 2, .dims = {2, 3}}, {.rank = 1, .dims = {3}, .constant = 1}};
  failed += gradcheck("Mul by a constant", "Mul", NULL, 2, with_const, NULL);
  /* ReduceSum / ReduceMean (opset 11: axes attribute), all axes, some axes, keepdims 0/1 */
  gc_arg r3[1] = {{.rank = 3, .dims = {2, 3, 4}}};
  gc_opts o11 = {.opset = 11};
  const char *reds[] = {"ReduceSum", "ReduceMean"};
  for (int i = 0; i < 2; i++) {
    char label[64];
    g_n_axes = 0, g_keepdims = 0;
    snprintf(label, sizeof label, "%s all axes", reds[i]);
    failed += gradcheck(label, reds[i], &o11, 1, r3, reduce_attrs);
    g_n_axes = 2, g_axes[0] = 0, g_axes[1] = -1, g_keepdims = 0;
    snprintf(label, sizeof label, "%s axes 0,-1", reds[i]);
    failed += gradcheck(label, reds[i], &o11, 1, r3, reduce_attrs);
    g_n_axes = 1, g_axes[0] = 1, g_keepdims = 1;
    snprintf(label, sizeof label, "%s axis 1 keepdims", reds[i]);
    failed += gradcheck(label, reds[i], &o11, 1, r3, reduce_attrs);
  }
  /* opset 13+: ReduceSum's axes as a constant input */
  int64_t ax1[1] = {1};
  gc_arg with_axes[2] = {{.rank = 3, .dims = {2, 3, 4}}, {.dtype = WT_INT64, .rank = 1, .dims = {1}, .data = ax1, .constant = 1}};
  g_n_axes = 0, g_keepdims = 0;
  failed += gradcheck("ReduceSum axes input", "ReduceSum", NULL, 2, with_axes, reduce_attrs);
  reduce_prod_refused();
  CHECK(failed == 0);
  CHECK_DONE();
}
