/* The op registry: every family's table, listed in (domain, op_type) order.
 * Adding an op: its definition in its family file with one line in that family's table (or
 * list, where the family generates its table from one: see op.h), and its kernel in each
 * backend that runs it: for the CPU, one entry in the family's wt_cpu_kernels_<family>[]
 * (src/backend/cpu/run_<family>.c). Adding a family: a file of src/ops/ with its table, a
 * kernel file per backend with its kernel table, and one line in WT_OP_FAMILIES (families.h).
 * test_cpu_kernels fails on a definition without a CPU kernel or a kernel without a definition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"
#include "ops/op.h"

#define DECLARE(f) extern const wt_op_def *const wt_ops_##f[];
WT_OP_FAMILIES(DECLARE)
#undef DECLARE

static const wt_op_def *const *const g_families[] = {
#define LIST(f) wt_ops_##f,
    WT_OP_FAMILIES(LIST)
#undef LIST
};

#define WT_MAX_OPS 512

static int cmp_def(const void *a, const void *b) {
  const wt_op_def *x = *(const wt_op_def *const *)a, *y = *(const wt_op_def *const *)b;
  int c = strcmp(x->domain, y->domain);
  return c ? c : strcmp(x->op_type, y->op_type);
}

static const char *canonical_domain(const char *domain) {
  if (!domain || strcmp(domain, "ai.onnx") == 0) return "";
  return domain;
}

/* A scan of the const tables, with no index to build or guard: lookups happen at load and plan
 * time only, a few per node, and most entries differ from the key in their first character. */
const wt_op_def *wt_op_find(const char *domain, const char *op_type) {
  domain = canonical_domain(domain);
  for (size_t f = 0; f < sizeof g_families / sizeof g_families[0]; f++)
    for (const wt_op_def *const *p = g_families[f]; *p; p++)
      if ((*p)->op_type[0] == op_type[0] && !strcmp((*p)->op_type, op_type) && !strcmp((*p)->domain, domain))
        return *p;
  return NULL;
}

void wt_op_each(void (*fn)(const wt_op_def *op, void *user), void *user) {
  const wt_op_def *sorted[WT_MAX_OPS];
  size_t n = 0;
  for (size_t f = 0; f < sizeof g_families / sizeof g_families[0]; f++)
    for (const wt_op_def *const *p = g_families[f]; *p; p++)
      if (n < WT_MAX_OPS) sorted[n++] = *p;
  qsort(sorted, n, sizeof sorted[0], cmp_def);
  for (size_t i = 0; i < n; i++) fn(sorted[i], user);
}

/* One error naming every op of g webtrain lacks, with the nodes that use it. */
int wt_graph_check_ops(const wt_graph *g) {
  char msg[1536];
  size_t used = 0;
  int n_missing = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    if (wt_op_find(n->domain, n->op_type)) continue;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = !strcmp(g->nodes[j].op_type, n->op_type) && !strcmp(g->nodes[j].domain, n->domain);
    if (seen) continue;
    n_missing++;
    if (used >= sizeof msg - 64) continue;
    used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s (%s, opset %lld; node%s", n_missing > 1 ? ", " : "",
                             n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                             (long long)wt_graph_opset(g, n->domain), "");
    int listed = 0, more = 0;
    for (int j = i; j < g->n_nodes; j++) {
      const wt_node *m = &g->nodes[j];
      if (strcmp(m->op_type, n->op_type) || strcmp(m->domain, n->domain)) continue;
      if (listed < 3 && used < sizeof msg - 64)
        used += (size_t)snprintf(msg + used, sizeof msg - used, "%s '%s'", listed ? "," : "", m->name), listed++;
      else
        more++;
    }
    if (more && used < sizeof msg - 32) used += (size_t)snprintf(msg + used, sizeof msg - used, " and %d more", more);
    if (used < sizeof msg - 2) used += (size_t)snprintf(msg + used, sizeof msg - used, ")");
  }
  if (!n_missing) return WT_OK;
  return wt_errorf(WT_ERR_UNSUPPORTED, "webtrain does not support %d op%s of this model: %s", n_missing,
                   n_missing > 1 ? "s" : "", msg);
}
