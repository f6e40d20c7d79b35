/* Read-only model inspection for the CLI and tools: the IR of a model without planning it, so
 * models with ops webtrain cannot run can still be described. Same ABI conventions as api.c. */
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/kernel.h"
#include "base/status.h"
#include "io/onnx_io.h"
#include "ops/op.h"
#include "wasm/abi.h"

typedef struct info {
  wt_graph *g;
  int n_ops;                    /* distinct (domain, op_type), first-seen order */
  int *op_first;                /* node index of the first node of each */
  int *op_nodes;                /* node count of each */
} info;

info *wtw_model_info_read(const uint8_t *bytes, size_t len) {
  info *m = calloc(1, sizeof *m);
  if (!m) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), NULL;
  if (wt_onnx_read(bytes, len, NULL, &m->g)) {
    free(m);
    return NULL;
  }
  m->op_first = calloc((size_t)m->g->n_nodes + 1, sizeof(int));
  m->op_nodes = calloc((size_t)m->g->n_nodes + 1, sizeof(int));
  if (!m->op_first || !m->op_nodes) {
    wt_graph_free(m->g);
    free(m->op_first);
    free(m->op_nodes);
    free(m);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), NULL;
  }
  for (int i = 0; i < m->g->n_nodes; i++) {
    const wt_node *n = &m->g->nodes[i];
    int k = 0;
    while (k < m->n_ops && (strcmp(m->g->nodes[m->op_first[k]].op_type, n->op_type) ||
                            strcmp(m->g->nodes[m->op_first[k]].domain, n->domain)))
      k++;
    if (k == m->n_ops) m->op_first[m->n_ops++] = i;
    m->op_nodes[k]++;
  }
  return m;
}

void wtw_model_info_free(info *m) {
  if (!m) return;
  wt_graph_free(m->g);
  free(m->op_first);
  free(m->op_nodes);
  free(m);
}

/* which: enum wtw_io_side */
static const wt_value *io_value(const info *m, int which, int i) {
  const wt_graph *g = m->g;
  int out = which == WTW_IO_OUTPUTS;
  int n = out ? g->n_outputs : g->n_inputs;
  if (i < 0 || i >= n) return NULL;
  return &g->values[out ? g->outputs[i] : g->inputs[i]];
}
int wtw_model_info_io_count(const info *m, int which) { return which == WTW_IO_OUTPUTS ? m->g->n_outputs : m->g->n_inputs; }
const char *wtw_model_info_io_name(const info *m, int which, int i) {
  const wt_value *v = io_value(m, which, i);
  return v ? v->name : NULL;
}
int wtw_model_info_io_dtype(const info *m, int which, int i) {
  const wt_value *v = io_value(m, which, i);
  return v ? v->dtype : 0;
}
/* enum wtw_io_kind */
int wtw_model_info_io_kind(const info *m, int which, int i) {
  const wt_value *v = io_value(m, which, i);
  return v && (v->flags & WT_VALUE_SEQUENCE) ? WTW_KIND_SEQUENCE : WTW_KIND_TENSOR;
}
int wtw_model_info_io_rank(const info *m, int which, int i) {
  const wt_value *v = io_value(m, which, i);
  return v ? v->rank : -1;
}
double wtw_model_info_io_dim(const info *m, int which, int i, int axis) {
  const wt_value *v = io_value(m, which, i);
  return v && axis >= 0 && axis < v->rank ? (double)v->dims[axis] : -1;
}
const char *wtw_model_info_io_dim_param(const info *m, int which, int i, int axis) {
  const wt_value *v = io_value(m, which, i);
  return v && axis >= 0 && axis < v->rank ? wt_value_dim_param(v, axis) : NULL;
}

int wtw_model_info_op_count(const info *m) { return m->n_ops; }
const char *wtw_model_info_op_type(const info *m, int k) {
  return k >= 0 && k < m->n_ops ? m->g->nodes[m->op_first[k]].op_type : NULL;
}
const char *wtw_model_info_op_domain(const info *m, int k) {
  return k >= 0 && k < m->n_ops ? m->g->nodes[m->op_first[k]].domain : NULL;
}
int wtw_model_info_op_nodes(const info *m, int k) { return k >= 0 && k < m->n_ops ? m->op_nodes[k] : 0; }
/* enum wtw_op_support: FORWARD when webtrain implements the op, GRADIENT when it also has a
 * gradient rule for it. */
int wtw_model_info_op_support(const info *m, int k) {
  if (k < 0 || k >= m->n_ops) return WTW_SUPPORT_NONE;
  const wt_node *n = &m->g->nodes[m->op_first[k]];
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  return op ? (op->grad ? WTW_SUPPORT_GRADIENT : WTW_SUPPORT_FORWARD) : WTW_SUPPORT_NONE;
}

static int is_init(const wt_value *v) { return (v->flags & WT_VALUE_INITIALIZER) != 0; }
int wtw_model_info_initializer_count(const info *m) {
  int n = 0;
  for (int v = 0; v < m->g->n_values; v++) n += is_init(&m->g->values[v]);
  return n;
}
static const wt_value *initializer(const info *m, int i) {
  for (int v = 0; v < m->g->n_values; v++)
    if (is_init(&m->g->values[v]) && i-- == 0) return &m->g->values[v];
  return NULL;
}
const char *wtw_model_info_initializer_name(const info *m, int i) {
  const wt_value *v = initializer(m, i);
  return v ? v->name : NULL;
}
int wtw_model_info_initializer_dtype(const info *m, int i) {
  const wt_value *v = initializer(m, i);
  return v ? v->dtype : 0;
}
int wtw_model_info_initializer_rank(const info *m, int i) {
  const wt_value *v = initializer(m, i);
  return v ? v->rank : -1;
}
double wtw_model_info_initializer_dim(const info *m, int i, int axis) {
  const wt_value *v = initializer(m, i);
  return v && axis >= 0 && axis < v->rank ? (double)v->dims[axis] : -1;
}

int wtw_model_info_opset_count(const info *m) { return m->g->n_opsets; }
const char *wtw_model_info_opset_domain(const info *m, int i) {
  return i >= 0 && i < m->g->n_opsets ? m->g->opsets[i].domain : NULL;
}
double wtw_model_info_opset_version(const info *m, int i) {
  return i >= 0 && i < m->g->n_opsets ? (double)m->g->opsets[i].version : 0;
}
const char *wtw_model_info_producer(const info *m) { return m->g->producer_name; }
double wtw_model_info_ir_version(const info *m) { return (double)m->g->ir_version; }

/* ---- the op registry (for the generated op table) ------------------------------------------- */

typedef struct op_list {
  const wt_op_def *ops[1024];
  int n;
} op_list;

static op_list g_ops;

static void collect(const wt_op_def *op, void *user) {
  op_list *l = user;
  if (l->n < 1024) l->ops[l->n++] = op;
}

int wtw_registry_count(void) {
  if (!g_ops.n) wt_op_each(collect, &g_ops);
  return g_ops.n;
}
const char *wtw_registry_op_type(int i) { return i >= 0 && i < wtw_registry_count() ? g_ops.ops[i]->op_type : NULL; }
const char *wtw_registry_op_domain(int i) { return i >= 0 && i < wtw_registry_count() ? g_ops.ops[i]->domain : NULL; }
int wtw_registry_op_has_grad(int i) { return i >= 0 && i < wtw_registry_count() && g_ops.ops[i]->grad != NULL; }
/* 1 where the WebGPU backend has a kernel for the op (or runs it as a view). */
int wtw_registry_op_webgpu(int i) {
  return i >= 0 && i < wtw_registry_count() && wt_backend_webgpu.kernel(g_ops.ops[i]) != NULL;
}
/* 1 for an op of training graphs only: a gradient op or the training form of a forward op. */
int wtw_registry_op_is_gradient(int i) {
  return i >= 0 && i < wtw_registry_count() && (g_ops.ops[i]->flags & (WT_OP_GRADIENT | WT_OP_TRAINING)) != 0;
}
