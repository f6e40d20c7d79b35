/* A weight multiplied through a Transpose (PyTorch's Linear on an input of rank >= 2 exports
 * MatMul(x, Transpose(W)), W [out, in]) is read in place by Gemm(transB = 1) instead, on 2-D
 * views: MatMul(x, Transpose(W)) -> Reshape(Gemm(Reshape(x, [-1, in]), W, transB=1), [x's
 * leading dims..., out]). Run as it is, the Transpose writes a copy of W into the activations at
 * every step, which the backward pass keeps until it has used it (dX = dY·W): for a frozen base
 * read by reference that is a second copy of all its weights, for the tied embedding of a
 * language model [vocab, hidden] floats. The Gemm's gradients need no transposed copy either
 * (dX = Gemm(dY, W), dW = Gemm(dYᵀ, x)). The same products, so the same values; plain ONNX, so
 * the eval and exported models keep it too. W may be read through a Cast (a float16 weight):
 * Gemm reads the float16 bytes itself. */
#include <stdio.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "artifacts/node_match.h"
#include "base/status.h"

/* node i is a Transpose swapping the axes of a 2-D value of fixed dims into a non-output */
static int swaps_matrix(const wt_graph *g, const wt_node *n) {
  if (!wt_is_matrix_swap(n) || n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0)
    return 0;
  const wt_value *w = &g->values[n->inputs[0]];
  if (w->rank != 2 || w->dims[0] < 0 || w->dims[1] < 0) return 0;
  if (g->values[n->outputs[0]].flags & WT_VALUE_GRAPH_OUTPUT) return 0;
  /* LoRA's adapters (marked by lora.c) stay as they are: rank x in_features, small, and an
   * exported adapter model (lora_export.c) takes them as inputs of any rank */
  return !(w->flags & (WT_VALUE_LORA_A | WT_VALUE_LORA_B));
}

/* Every reader of t is a MatMul reading it as B only, with an A of known rank >= 2 (and, above
 * 2, an opset whose Shape takes `end`): how many, or 0 when any is not. */
static int matmul_readers(const wt_graph *g, int t, int opset) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *m = &g->nodes[i];
    for (int k = 0; k < m->n_inputs; k++) {
      if (m->inputs[k] != t) continue;
      if (!wt_is_onnx_op(m, "MatMul") || k != 1 || m->inputs[0] == t || m->outputs[0] < 0) return 0;
      int r = g->values[m->inputs[0]].rank;
      if (r < 2 || (r > 2 && opset < 15)) return 0;
      n++;
    }
  }
  return n;
}

/* A new value named `base` + `suffix` and the node `op` making it; -1 when out of memory. */
static int add1(wt_graph *g, const char *op, const char *base, const char *suffix, int n_in, const int *in,
                int *node) {
  char name[1024];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  int v = wt_graph_fresh_value(g, name);
  if (v < 0) return -1;
  *node = wt_graph_add_node(g, op, "", name, n_in, in, 1, &v);
  return *node < 0 ? -1 : v;
}

/* MatMul node i = MatMul(x, Transpose(w)) -> the Gemm form; its old node is left writing a
 * value nobody reads (pruned). */
static int rewrite(wt_graph *g, int i, int w) {
  char base[900];
  snprintf(base, sizeof base, "%s", g->nodes[i].name && g->nodes[i].name[0] ? g->nodes[i].name : g->values[g->nodes[i].outputs[0]].name);
  int x = g->nodes[i].inputs[0], y = g->nodes[i].outputs[0], r = g->values[x].rank, nd;
  int64_t in = g->values[w].dims[1];
  int dead = wt_graph_fresh_value(g, "unused");
  if (dead < 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  g->nodes[i].outputs[0] = dead;
  g->values[dead].producer = i;
  g->values[y].producer = -1;
  int a = x;
  if (r > 2) {
    int shape2 = add1(g, "Constant", base, "/gemm_in_shape", 0, NULL, &nd);
    if (shape2 < 0 || wt_node_set_ints(g, nd, "value_ints", (const int64_t[]){-1, in}, 2))
      return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    if ((a = add1(g, "Reshape", base, "/gemm_in", 2, (const int[]){x, shape2}, &nd)) < 0)
      return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  int y2 = r > 2 ? add1(g, "Gemm", base, "/gemm", 2, (const int[]){a, w}, &nd) : -1;
  if (r == 2) { /* the Gemm writes y itself */
    if ((nd = wt_graph_add_node(g, "Gemm", "", base, 2, (const int[]){a, w}, 1, &y)) < 0)
      return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  } else if (y2 < 0) {
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  if (wt_node_set_int(g, nd, "transB", 1)) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (r == 2) return WT_OK;
  /* y's shape: x's leading dims, then W's first (folded at plan time; read from W, not fixed
   * here: an exported adapter model feeds a LoRA A of any rank, 0 included) */
  int lead = add1(g, "Shape", base, "/gemm_lead", 1, &x, &nd), outc, shape;
  if (lead < 0 || wt_node_set_int(g, nd, "end", -1)) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if ((outc = add1(g, "Shape", base, "/gemm_out_dim", 1, &w, &nd)) < 0 || wt_node_set_int(g, nd, "end", 1))
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if ((shape = add1(g, "Concat", base, "/gemm_out_shape", 2, (const int[]){lead, outc}, &nd)) < 0 ||
      wt_node_set_int(g, nd, "axis", 0))
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  /* allowzero: a 0 in the shape is a size (a rank-0 adapter's), not "copy the input's dim" */
  if ((nd = wt_graph_add_node(g, "Reshape", "", base, 2, (const int[]){y2, shape}, 1, &y)) < 0 ||
      wt_node_set_int(g, nd, "allowzero", 1))
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  return WT_OK;
}

int wt_artifacts_gemm_transposed(wt_graph *g) {
  int opset = (int)wt_graph_opset(g, ""), changed = 0, n0 = g->n_nodes;
  for (int t = 0; t < n0; t++) {
    if (!swaps_matrix(g, &g->nodes[t])) continue;
    int tv = g->nodes[t].outputs[0], w = g->nodes[t].inputs[0];
    if (!matmul_readers(g, tv, opset)) continue;
    for (int i = 0; i < n0; i++) {
      if (g->nodes[i].n_inputs != 2 || g->nodes[i].inputs[1] != tv || !wt_is_onnx_op(&g->nodes[i], "MatMul")) continue;
      WT_TRY(rewrite(g, i, w));
      changed = 1;
    }
  }
  if (!changed) return WT_OK;
  WT_TRY(wt_graph_toposort(g));
  return wt_graph_prune(g);
}
