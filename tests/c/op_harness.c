/* One-node runner for op unit tests (see op_harness.h). */
#include "op_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int harness_node(wt_graph *g, const char *op_type, const char *domain, int n_in, int n_out) {
  int ins[16], outs[16];
  char name[32];
  for (int i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%d", i);
    ins[i] = wt_graph_value(g, name);
  }
  for (int i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%d", i);
    outs[i] = wt_graph_value(g, name);
  }
  return wt_graph_add_node(g, op_type, domain, "n0", n_in, ins, n_out, outs);
}

int harness_run(wt_graph *g, int node, int opset, int n_in, const wt_tensor *in, int n_out,
                wt_tensor *out) {
  const wt_node *n = &g->nodes[node];
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  if (!op) return wt_errorf(WT_ERR_UNSUPPORTED, "no op %s", n->op_type);
  _Alignas(16) unsigned char params[WT_PARAMS_MAX];
  memset(params, 0, sizeof params);
  memset(out, 0, sizeof *out * (size_t)n_out);
  wt_infer_ctx ic = {.node = n, .op = op, .opset = opset, .n_in = n_in, .in = in, .n_out = n_out,
                     .out = out, .params = params};
  int rc = op->infer(&ic);
  if (rc) return rc;
  const wt_cpu_kernel *kn = wt_cpu_kernel_find(op);
  if (!kn) return wt_errorf(WT_ERR_INTERNAL, "no cpu kernel for %s", n->op_type);
  size_t scratch_bytes = kn->scratch ? kn->scratch(&ic) : 0;
  for (int i = 0; i < n_out; i++) {
    size_t nb = wt_nbytes(&out[i]);
    out[i].data = calloc(nb ? nb : 1, 1);
  }
  void *scratch = NULL;
  if (scratch_bytes) scratch = aligned_alloc(64, (scratch_bytes + 63) / 64 * 64);
  wt_run_ctx rcx = {.node = n, .params = params, .n_in = n_in, .in = in, .n_out = n_out,
                    .out = out, .scratch = scratch};
  rc = kn->run(&rcx);
  free(scratch);
  return rc;
}

void harness_free(int n_out, wt_tensor *out) {
  for (int i = 0; i < n_out; i++) {
    free(out[i].data);
    out[i].data = NULL;
  }
}

wt_tensor harness_f32(int rank, const int64_t *dims, float *data) {
  wt_tensor t = {.dtype = WT_FLOAT, .rank = rank, .data = data};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}

wt_tensor harness_i64(int rank, const int64_t *dims, int64_t *data) {
  wt_tensor t = {.dtype = WT_INT64, .rank = rank, .data = data};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}
