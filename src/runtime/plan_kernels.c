/* Which ops of a graph a backend has no kernel for: asked before a plan is built, so that a
 * backend lacking some refuses (or its caller falls back) with every op named at once, not at
 * the first node that fails. */
#include <stdio.h>
#include <string.h>

#include "runtime/planner.h"

/* The op of node i when webtrain defines it and b lacks its kernel and no earlier node has it. */
static const wt_op_def *missing_at(const wt_graph *g, const wt_backend *b, int i) {
  const wt_node *n = &g->nodes[i];
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  if (!op || b->kernel(op)) return NULL;
  for (int j = 0; j < i; j++)
    if (wt_op_find(g->nodes[j].domain, g->nodes[j].op_type) == op) return NULL;
  return op;
}

int wt_plan_missing_kernels(const wt_graph *g, const wt_backend *b, const wt_op_def **missing,
                            int cap) {
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_op_def *op = missing_at(g, b, i);
    if (!op) continue;
    if (count < cap) missing[count] = op;
    count++;
  }
  return count;
}

int wt_plan_check_kernels(const wt_graph *g, const wt_backend *b) {
  char msg[1024];
  size_t used = 0;
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_op_def *op = missing_at(g, b, i);
    if (!op) continue;
    count++;
    if (used < sizeof msg - 96)
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s (%s; node '%s')",
                               count > 1 ? ", " : "", op->op_type,
                               op->domain[0] ? op->domain : "ai.onnx", g->nodes[i].name);
  }
  if (!count) return WT_OK;
  return wt_errorf(WT_ERR_UNSUPPORTED, "the %s backend has no kernel for %d op%s of this model: %s",
                   b->name, count, count > 1 ? "s" : "", msg);
}
