/* frozenDtype float16 (generate_artifacts' frozen_dtype): the frozen float32 weights that only
 * GEMM inputs and Gather read are stored as float16 and read through a Cast to float, which keeps
 * every artifact valid ONNX (ONNX Runtime loads the eval and exported inference models as they
 * are) while webtrain's shape pass skips the Cast and its kernels widen the float16 bytes where
 * they read them. A weight keeps float32, and is named with the reason in the report, when
 * another op reads it, when its gradient rule would transpose it (a batched MatMul operand), or
 * when a value lies beyond float16's range (it would become infinite). A weight read only through
 * a Transpose into GEMM inputs (PyTorch's Linear) is transposed here first (fold_transpose). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/half.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"

/* Appends a line to the report (*kept, malloc'd). */
static int report(char **kept, size_t *len, const char *fmt, ...) {
  char line[768];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return WT_OK;
  size_t add = strlen(line);
  char *k = realloc(*kept, *len + add + 2);
  if (!k) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(k + *len, line, add);
  k[*len + add] = '\n';
  k[*len + add + 1] = 0;
  *len += add + 1;
  *kept = k;
  return WT_OK;
}

/* NULL when every reader of v reads it as float16 through the Cast, else why not (in buf). */
static const char *why_not(const wt_graph *g, int v, char *buf, size_t cap) {
  if (g->values[v].flags & WT_VALUE_GRAPH_OUTPUT) return "it is a graph output";
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != v) continue;
      const wt_op_def *op = wt_op_find(n->domain, n->op_type);
      const wt_cpu_kernel *kn = op ? wt_cpu_kernel_find(op) : NULL;
      if (!kn || k >= 32 || !(kn->half_inputs >> k & 1u)) {
        snprintf(buf, cap, "read by %s '%s' (input %d), which reads float only", n->op_type, n->name, k);
        return buf;
      }
      /* MatMul's gradient reads a 2-D weight through Gemm; a batched or 1-D operand through a
       * Transpose, which would need a float copy */
      int other = n->inputs[1 - k];
      int ro = other >= 0 ? g->values[other].rank : -1, rv = g->values[v].rank;
      if (!strcmp(op->op_type, "MatMul") && !op->domain[0] &&
          !(rv == 2 && (k == 1 ? ro >= 2 : ro == 2))) {
        snprintf(buf, cap, "read by MatMul '%s' as a %s operand (its gradient transposes it)", n->name,
                 rv == 2 ? "batched" : "batched or 1-D");
        return buf;
      }
    }
  }
  return NULL;
}

/* How many of v's float values float16 cannot hold (|x| >= 65520 rounds to infinity); *first:
 * the index of the first. */
static size_t beyond_half(const wt_value *val, size_t *first) {
  const float *x = val->data;
  size_t n = val->nbytes / 4, bad = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i]) && fabsf(x[i]) >= 65520.0f && !bad++) *first = i;
  return bad;
}

/* Stores initializer v as float16 and gives its readers a Cast of it to float. */
static int convert(wt_graph *g, int v) {
  wt_value *val = &g->values[v];
  size_t n = val->nbytes / 4;
  uint16_t *h = malloc(n ? n * 2 : 1);
  if (!h) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory converting '%s' to float16", val->name);
  (void)wt_f32_to_f16_n(h, val->data, n);
  wt_graph_release(g, val->data);
  val->data = h;
  val->nbytes = n * 2;
  val->dtype = WT_FLOAT16;
  char name[512];
  snprintf(name, sizeof name, "%s_float", g->values[v].name);
  int f = wt_graph_fresh_value(g, name);
  if (f < 0) return WT_ERR_NO_MEMORY;
  WT_TRY(wt_value_copy_type(g, f, g, v, -1));
  g->values[f].dtype = WT_FLOAT;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) g->nodes[i].inputs[k] = f;
  snprintf(name, sizeof name, "%s_Cast", g->values[v].name);
  int c = wt_graph_add_node(g, "Cast", "", name, 1, &v, 1, &f);
  if (c < 0) return WT_ERR_NO_MEMORY;
  return wt_node_set_int(g, c, "to", WT_FLOAT);
}

/* The one reader of v when it is a Transpose of a 2-D v swapping its axes, else -1. */
static int sole_transpose(const wt_graph *g, int v) {
  int found = -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) {
        if (found >= 0) return -1;
        found = i;
      }
  if (found < 0 || g->values[v].rank != 2) return -1;
  const wt_node *n = &g->nodes[found];
  const int64_t *perm;
  int np = wt_attr_ints(n, "perm", &perm);
  if (strcmp(n->op_type, "Transpose") || n->domain[0] || n->n_outputs != 1 || n->outputs[0] < 0 ||
      (np >= 0 && !(np == 2 && perm[0] == 1 && perm[1] == 0)))
    return -1;
  return found;
}

/* PyTorch exports a Linear layer on a 3-D input as MatMul(x, Transpose(W)) when it does not
 * fold constants (as training exports do): a frozen W read only so is transposed here, once,
 * and the Transpose's output becomes the frozen weight (the parameter then carries that value's
 * name and the [in, out] layout), so that MatMul reads it directly. Returns the new value. */
static int fold_transpose(wt_graph *g, int v, int node, int *frozen, int n_fr) {
  int t = g->nodes[node].outputs[0];
  wt_value *val = &g->values[v];
  int64_t r = val->dims[0], c = val->dims[1];
  float *x = val->data, *y = malloc((size_t)(r * c) * sizeof(float) + 1);
  if (!y) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), -1;
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) y[j * r + i] = x[i * c + j];
  wt_node_clear(g, &g->nodes[node]);
  memmove(&g->nodes[node], &g->nodes[node + 1], sizeof *g->nodes * (size_t)(g->n_nodes - node - 1));
  g->n_nodes--;
  wt_value *tv = &g->values[t];
  tv->flags |= WT_VALUE_INITIALIZER;
  tv->data = y;
  tv->nbytes = val->nbytes;
  tv->dtype = WT_FLOAT;
  if (wt_value_set_shape(g, t, 2, (const int64_t[]){c, r})) return -1;
  val = &g->values[v];
  val->flags &= ~(uint32_t)WT_VALUE_INITIALIZER;
  wt_graph_release(g, val->data);
  val->data = NULL;
  val->nbytes = 0;
  for (int i = 0; i < n_fr; i++)
    if (frozen[i] == v) frozen[i] = t;
  if (wt_graph_toposort(g)) return -1; /* producers renumbered */
  return t;
}

int wt_artifacts_frozen_half(wt_graph *g, const int *trainable, int n_tr, int *frozen, int n_fr,
                             char **kept) {
  *kept = NULL;
  size_t len = 0;
  int converted = 0, candidates = 0, nv = g->n_values;
  for (int v = 0; v < nv; v++) { /* Transpose(W) into MatMul: W transposed here (see above) */
    const wt_value *val = &g->values[v];
    int tr = 0;
    for (int i = 0; i < n_tr; i++) tr |= trainable[i] == v;
    if (tr || !(val->flags & WT_VALUE_INITIALIZER) || val->dtype != WT_FLOAT) continue;
    int node = sole_transpose(g, v);
    char buf[512];
    size_t first;
    if (node >= 0 && !why_not(g, g->nodes[node].outputs[0], buf, sizeof buf) && !beyond_half(val, &first) &&
        fold_transpose(g, v, node, frozen, n_fr) < 0)
      return wt_error_context(WT_ERR_NO_MEMORY, "frozen_dtype float16");
  }
  nv = g->n_values;
  for (int v = 0; v < nv; v++) {
    const wt_value *val = &g->values[v];
    int tr = 0;
    for (int i = 0; i < n_tr; i++) tr |= trainable[i] == v;
    if (tr || !(val->flags & WT_VALUE_INITIALIZER) || val->dtype != WT_FLOAT) continue;
    candidates++;
    char buf[512];
    const char *why = why_not(g, v, buf, sizeof buf);
    size_t first = 0, bad = why ? 0 : beyond_half(val, &first);
    if (bad) {
      snprintf(buf, sizeof buf, "%zu value%s beyond float16's range (largest 65504), e.g. %g at "
               "index %zu", bad, bad == 1 ? "" : "s", (double)((const float *)val->data)[first], first);
      why = buf;
    }
    if (why) {
      WT_TRY(report(kept, &len, "%s: %s", val->name, why));
      continue;
    }
    WT_TRY(convert(g, v));
    converted++;
  }
  if (candidates == 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "frozen_dtype float16: the model has no frozen float "
                     "parameters (every float initializer is trained); name the ones to train in "
                     "requires_grad");
  (void)converted;
  return wt_graph_toposort(g);
}
