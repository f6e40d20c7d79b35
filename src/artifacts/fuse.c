/* Fusions applied to the training model only (the eval and exported inference models keep the
 * user's plain ONNX ops).
 *
 * GELU: PyTorch (opset < 20) exports nn.GELU as Div(x, sqrt 2) -> Erf -> Add(., 1) -> Mul(x, .)
 * -> Mul(., 0.5). Differentiated as is, the backward pass keeps x/sqrt 2 and 1 + erf alive
 * besides x: for a transformer's feed-forward layer that is two more [batch, seq, 4d] tensors,
 * and ten gradient nodes. One com.microsoft Gelu node (ONNX Runtime's contrib op, with its
 * GeluGrad) keeps only x and computes the same function. SiLU (Mul(x, Sigmoid(x))) likewise
 * becomes QuickGelu(x, alpha = 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "artifacts/node_match.h"
#include "base/status.h"

/* The float value of a scalar (or one-element) constant; NAN otherwise. */
static float scalar_of(const wt_graph *g, int v) {
  wt_tensor t;
  if (!wt_graph_const_value(g, v, &t) || !t.data || t.dtype != WT_FLOAT || wt_numel(&t) != 1)
    return NAN;
  return *(const float *)t.data;
}

/* The single node reading v (and nothing else: not a graph output), or -1. */
static int only_reader(const int *uses, const int *reader, int v) {
  return v >= 0 && uses[v] == 1 ? reader[v] : -1;
}

/* For a binary node with inputs {v, other} in either order: the other input, or -1. */
static int other_input(const wt_node *n, int v) {
  if (n->n_inputs != 2) return -1;
  return n->inputs[0] == v ? n->inputs[1] : n->inputs[1] == v ? n->inputs[0] : -1;
}

static int near(float a, double b) { return fabs((double)a - b) <= 1e-6 * fabs(b); }

/* SiLU: Mul(x, Sigmoid(x)) (PyTorch's F.silu, a Llama MLP's gate) -> com.microsoft QuickGelu(x,
 * alpha = 1), x·sigmoid(x), whose gradient reads x alone: the backward pass no longer keeps
 * sigmoid(x) ([batch, seq, mlp] floats per layer). Node s is the Sigmoid. */
static int fuse_silu(wt_graph *g, int *uses, const int *reader, int s) {
  const wt_node *sig = &g->nodes[s];
  if (!wt_is_onnx_op(sig, "Sigmoid") || sig->n_inputs != 1 || sig->n_outputs != 1 || sig->outputs[0] < 0) return WT_OK;
  int x = sig->inputs[0], m = only_reader(uses, reader, sig->outputs[0]);
  if (x < 0 || g->values[x].dtype != WT_FLOAT || m < 0 || !wt_is_onnx_op(&g->nodes[m], "Mul") ||
      other_input(&g->nodes[m], sig->outputs[0]) != x)
    return WT_OK;
  size_t len = strlen(g->nodes[m].name) + sizeof "/FusedSilu";
  char *name = malloc(len);
  if (!name) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  snprintf(name, len, "%s/FusedSilu", g->nodes[m].name);
  int rc = wt_node_set_name(g, m, name);
  free(name);
  if (rc == WT_OK) rc = wt_node_set_op(g, m, "QuickGelu", "com.microsoft");
  if (rc == WT_OK) rc = wt_node_set_float(g, m, "alpha", 1.0f);
  if (rc) return rc;
  g->nodes[m].inputs[0] = x;
  g->nodes[m].n_inputs = 1;
  uses[sig->outputs[0]] = 0; /* the Sigmoid is dead */
  return WT_OK;
}

int wt_artifacts_fuse_gelu(wt_graph *g) {
  int *uses = calloc((size_t)g->n_values + 1, sizeof(int));
  int *reader = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  if (!uses || !reader) {
    free(uses);
    free(reader);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++) {
      int v = g->nodes[i].inputs[k];
      if (v >= 0) uses[v]++, reader[v] = i;
    }
  for (int k = 0; k < g->n_outputs; k++) uses[g->outputs[k]] += 2;
  int rc = WT_OK;
  for (int e = 0; e < g->n_nodes && rc == WT_OK; e++) {
    const wt_node *erf = &g->nodes[e];
    if (!wt_is_onnx_op(erf, "Erf") || erf->n_inputs != 1 || erf->n_outputs != 1) continue;
    int scaled = erf->inputs[0];
    if (scaled < 0 || uses[scaled] != 1 || g->values[scaled].producer < 0) continue;
    const wt_node *div = &g->nodes[g->values[scaled].producer];
    if (!wt_is_onnx_op(div, "Div") || div->n_inputs != 2 || !near(scalar_of(g, div->inputs[1]), sqrt(2.0)))
      continue;
    int x = div->inputs[0];
    if (x < 0 || g->values[x].dtype != WT_FLOAT) continue;
    int a = only_reader(uses, reader, erf->outputs[0]);
    if (a < 0 || !wt_is_onnx_op(&g->nodes[a], "Add") ||
        !near(scalar_of(g, other_input(&g->nodes[a], erf->outputs[0])), 1.0))
      continue;
    int m1 = only_reader(uses, reader, g->nodes[a].outputs[0]);
    if (m1 < 0 || !wt_is_onnx_op(&g->nodes[m1], "Mul") || other_input(&g->nodes[m1], g->nodes[a].outputs[0]) != x)
      continue;
    int m2 = only_reader(uses, reader, g->nodes[m1].outputs[0]);
    if (m2 < 0 || !wt_is_onnx_op(&g->nodes[m2], "Mul") ||
        !near(scalar_of(g, other_input(&g->nodes[m2], g->nodes[m1].outputs[0])), 0.5))
      continue;
    /* The last Mul becomes Gelu(x); the other four nodes are left for wt_graph_prune. */
    wt_node *n = &g->nodes[m2];
    size_t len = strlen(n->name) + sizeof "/FusedGelu";
    char *name = malloc(len);
    if (!name) {
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      break;
    }
    snprintf(name, len, "%s/FusedGelu", n->name);
    rc = wt_node_set_name(g, m2, name);
    free(name);
    if (rc == WT_OK) rc = wt_node_set_op(g, m2, "Gelu", "com.microsoft");
    if (rc) break;
    n->inputs[0] = x;
    n->n_inputs = 1;
    uses[g->nodes[m1].outputs[0]] = 0; /* not read any more: m1's chain is dead */
  }
  for (int i = 0; i < g->n_nodes && rc == WT_OK; i++) rc = fuse_silu(g, uses, reader, i);
  free(uses);
  free(reader);
  if (rc == WT_OK) rc = wt_graph_prune(g);
  return rc;
}
