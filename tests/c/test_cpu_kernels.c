/* The seam between op definitions and backends:
 *  - every op webtrain defines has a CPU kernel with a run function, and every CPU kernel runs
 *    an op that is defined (a family's kernel table that lost or gained an entry fails here);
 *  - the planner's list of ops a backend lacks names each missing op once, in the order of the
 *    first node using it, and its error names the backend and every op (a backend lacking some
 *    ops, as a second backend will, stands in for one). */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/kernel.h"
#include "check.h"
#include "runtime/planner.h"

static int g_defs = 0, g_kernels = 0;

static void check_def(const wt_op_def *op, void *user) {
  (void)user;
  g_defs++;
  const wt_cpu_kernel *k = wt_cpu_kernel_find(op);
  if (!k || !k->run) {
    fprintf(stderr, "%s%s%s is defined but has no CPU kernel (add it to its family's table in "
            "src/backend/cpu/)\n", op->domain, op->domain[0] ? "::" : "", op->op_type);
    wt_check_failures++;
  }
}

static void check_kernel(const wt_kernel_key *key, void *user) {
  (void)user;
  g_kernels++;
  if (!wt_op_find(key->domain, key->op_type)) {
    fprintf(stderr, "the CPU kernel of %s%s%s runs no defined op\n", key->domain,
            key->domain[0] ? "::" : "", key->op_type);
    wt_check_failures++;
  }
}

/* A backend with the CPU's kernels but for MatMul and Relu. */
static const void *partial_kernel(const wt_op_def *op) {
  if (!strcmp(op->op_type, "MatMul") || !strcmp(op->op_type, "Relu")) return NULL;
  return wt_backend_cpu.kernel(op);
}
static const wt_backend g_partial = {.name = "partial", .kernel = partial_kernel,
                                     .each = NULL};

static int node(wt_graph *g, const char *type, const char *name, int a, int b, const char *out) {
  int ins[2] = {a, b}, y = wt_graph_value(g, out);
  if (wt_graph_add_node(g, type, "", name, b >= 0 ? 2 : 1, ins, 1, &y) < 0) return -1;
  return y;
}

static void test_missing(void) {
  wt_graph *g = wt_graph_new();
  int x = wt_graph_value(g, "x"), w = wt_graph_value(g, "w");
  int h = node(g, "Relu", "relu0", x, -1, "h");
  int m = node(g, "MatMul", "mm", h, w, "m");
  int s = node(g, "Add", "add", m, x, "s");
  CHECK(node(g, "Relu", "relu1", s, -1, "y") >= 0);
  const wt_op_def *missing[4] = {NULL};
  CHECK(wt_plan_missing_kernels(g, &g_partial, missing, 4) == 2);
  CHECK(missing[0] == wt_op_find("", "Relu"));
  CHECK(missing[1] == wt_op_find("", "MatMul"));
  CHECK(wt_plan_missing_kernels(g, &g_partial, NULL, 0) == 2);
  CHECK(wt_plan_check_kernels(g, &g_partial) == WT_ERR_UNSUPPORTED);
  const char *msg = wt_error_message();
  CHECK(strstr(msg, "partial backend") && strstr(msg, "2 ops") && strstr(msg, "Relu (ai.onnx; node 'relu0')") &&
        strstr(msg, "MatMul (ai.onnx; node 'mm')") && !strstr(msg, "Add"));
  CHECK(wt_plan_missing_kernels(g, &wt_backend_cpu, missing, 4) == 0);
  CHECK_OK(wt_plan_check_kernels(g, &wt_backend_cpu));
  wt_graph_free(g);
}

int main(void) {
  wt_op_each(check_def, NULL);
  wt_backend_cpu.each(check_kernel, NULL);
  CHECK(g_defs > 100);
  CHECK(g_kernels == g_defs);
  test_missing();
  CHECK_DONE();
}
