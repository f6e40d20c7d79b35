/* The eval model (the forward graph with its loss, Dropout off, BatchNormalization in
 * inference mode) and the optimizer model (one AdamWOptimizer or SGDOptimizerV2 node over
 * sequences of parameters, gradients and moments), as ONNX Runtime writes them. */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/status.h"
#include "io/onnx_io.h"

int wt_artifacts_eval_model(const wt_graph *train, const char *const *forward, int n_forward, wt_bytes *out) {
  wt_graph *g;
  WT_TRY(wt_graph_clone(train, &g));
  for (int i = 0; i < n_forward; i++) {
    int v = wt_graph_find(g, forward[i]);
    if (v < 0 || (g->values[v].flags & WT_VALUE_GRAPH_OUTPUT)) continue;
    if (wt_graph_add_output(g, v)) goto oom;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    wt_node *n = &g->nodes[i];
    if (!strcmp(n->domain, "") && !strcmp(n->op_type, "Dropout")) {
      if (n->n_inputs > 2) n->n_inputs = 2; /* training_mode absent: inference */
    } else if (!strcmp(n->domain, "") && !strcmp(n->op_type, "BatchNormalization")) {
      /* In inference mode BatchNormalization has one output: nothing may read the others. */
      for (int k = 1; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        int used = v >= 0 && (g->values[v].flags & WT_VALUE_GRAPH_OUTPUT);
        for (int j = 0; v >= 0 && !used && j < g->n_nodes; j++)
          for (int q = 0; q < g->nodes[j].n_inputs && !used; q++) used = g->nodes[j].inputs[q] == v;
        if (used) {
          int rc = wt_errorf(WT_ERR_UNSUPPORTED, "%s: its running-statistics output '%s' is read by the "
                             "loss or the model, but the eval model runs BatchNormalization in inference "
                             "mode, which has no such output", wt_node_label(n), g->values[v].name);
          wt_graph_free(g);
          return rc;
        }
      }
      if (wt_node_set_int(g, i, "training_mode", 0)) goto oom;
      n = &g->nodes[i];
      for (int k = 1; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) g->values[n->outputs[k]].producer = -1;
      n->n_outputs = 1; /* the running statistics are outputs only in training mode */
    }
  }
  int rc = wt_graph_prune(g);
  if (rc == WT_OK) rc = wt_onnx_write(g, &out->data, &out->len);
  wt_graph_free(g);
  return rc;
oom:
  wt_graph_free(g);
  return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
}

static int seq_input(wt_graph *g, const char *name, int dtype) {
  int v = wt_graph_value(g, name);
  if (v < 0) return -1;
  g->values[v].dtype = dtype;
  g->values[v].flags |= WT_VALUE_SEQUENCE;
  if (wt_graph_add_input(g, v)) return -1;
  return v;
}

static int tensor_input(wt_graph *g, const char *name, int dtype, int64_t d0) {
  int v = wt_graph_value(g, name);
  if (v < 0) return -1;
  g->values[v].dtype = dtype;
  if (wt_value_set_shape(g, v, 1, &d0) || wt_graph_add_input(g, v)) return -1;
  return v;
}

int wt_artifacts_optimizer_model(const wt_graph *train, const int *params, int n_params,
                                 const wt_optim_opts *o, wt_bytes *out) {
  if (n_params == 0) return wt_errorf(WT_ERR_INVALID_ARG, "an optimizer needs at least one trainable parameter");
  int dtype = train->values[params[0]].dtype;
  wt_graph *g = wt_graph_new();
  if (!g) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  wt_graph_release(g, g->name);
  g->name = wt_strdup(o->type == WT_OPTIM_SGD ? "SGD Optimizer Model" : "AdamW Optimizer Model");
  wt_graph_release(g, g->producer_name);
  g->producer_name = wt_strdup("webtrain");
  g->ir_version = 8;
  int rc = wt_graph_set_opset(g, "com.microsoft", 1);
  if (rc == WT_OK) rc = wt_graph_set_opset(g, "", 14);
  int lr = tensor_input(g, "learning_rate", WT_FLOAT, 1);
  int step = tensor_input(g, "step", WT_INT64, 1);
  int ps = seq_input(g, "params", dtype);
  int gs = seq_input(g, "gradients", dtype);
  int m1 = seq_input(g, "first_order_moments", dtype);
  int m2 = o->type == WT_OPTIM_ADAMW ? seq_input(g, "second_order_moments", dtype) : 0;
  int done = wt_graph_value(g, o->type == WT_OPTIM_SGD ? "sgd.updated_flag" : "adamw.updated_flag");
  if (rc || lr < 0 || step < 0 || ps < 0 || gs < 0 || m1 < 0 || m2 < 0 || done < 0) {
    wt_graph_free(g);
    return rc ? rc : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  /* SGD's flag is declared without a shape: ONNX Runtime's SGDOptimizerV2 schema infers a
   * scalar (training_op_defs.cc) and rejects a declared bool[1] ("Mismatch between number of
   * inferred and declared dimensions. inferred=0 declared=1" — onnxblock's own SGD model has
   * that bug), while its CPU kernel returns bool[1], which a declared scalar makes it warn about
   * at every step. AdamWOptimizer's flag takes the shape of `step`, [1]. */
  g->values[done].dtype = WT_BOOL;
  WT_TRY(wt_value_set_shape(g, done, o->type == WT_OPTIM_SGD ? -1 : 1, (const int64_t[]){1}));
  int grads = gs;
  if (o->clip_max_norm > 0) {
    int clipped = wt_graph_value(g, "clipped_gradients");
    g->values[clipped].dtype = dtype;
    g->values[clipped].flags |= WT_VALUE_SEQUENCE;
    int n = wt_graph_add_node(g, "InplaceClipGradNorm", "com.microsoft", "InplaceClipGradNorm", 1, &gs, 1,
                              &clipped);
    if (n < 0 || wt_node_set_float(g, n, "max_norm", o->clip_max_norm) ||
        wt_node_set_string(g, n, "norm_type", "fro"))
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    grads = clipped;
  }
  if (rc == WT_OK && o->type == WT_OPTIM_ADAMW) {
    int n = wt_graph_add_node(g, "AdamWOptimizer", "com.microsoft", "AdamWOptimizer", 6,
                              (int[]){lr, step, ps, grads, m1, m2}, 1, &done);
    if (n < 0 || wt_node_set_float(g, n, "alpha", o->has_betas ? o->beta1 : 0.9f) ||
        wt_node_set_float(g, n, "beta", o->has_betas ? o->beta2 : 0.999f) ||
        wt_node_set_float(g, n, "epsilon", o->has_eps ? o->eps : 1e-6f) ||
        wt_node_set_float(g, n, "weight_decay", o->has_weight_decay ? o->weight_decay : 0.0f) ||
        wt_node_set_int(g, n, "correct_bias", o->no_bias_correction ? 0 : 1) ||
        wt_node_set_int(g, n, "adam_mode", o->has_adam_mode ? o->adam_mode : 1))
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  } else if (rc == WT_OK && o->type == WT_OPTIM_SGD) {
    if (wt_graph_add_node(g, "SGDOptimizerV2", "com.microsoft", "SGDOptimizerV2", 3,
                          (int[]){lr, ps, grads}, 1, &done) < 0)
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  } else if (rc == WT_OK) {
    rc = wt_errorf(WT_ERR_INVALID_ARG, "unknown optimizer type %d (expected AdamW=1 or SGD=2)", o->type);
  }
  if (rc == WT_OK) rc = wt_graph_add_output(g, done);
  if (rc == WT_OK) rc = wt_onnx_write(g, &out->data, &out->len);
  wt_graph_free(g);
  return rc;
}
