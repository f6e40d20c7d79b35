/* Runs one op node directly through its infer + run (no planner): for op unit tests.
 *   wt_graph *g = wt_graph_new();
 *   int node = harness_node(g, "Conv", "", 3, 1);   // inputs in0..in2, outputs out0
 *   wt_node_set_ints(g, node, "pads", pads, 4);
 *   wt_tensor out[1];
 *   rc = harness_run(g, node, 17, 3, in, 1, out);    // in[] carry data; out[].data malloc'd
 *   harness_free(1, out); wt_graph_free(g); */
#ifndef WT_TESTS_OP_HARNESS_H
#define WT_TESTS_OP_HARNESS_H

#include "ir/ir.h"
#include "backend/cpu/kernel.h"
#include "ops/op.h"

int harness_node(wt_graph *g, const char *op_type, const char *domain, int n_in, int n_out);
int harness_run(wt_graph *g, int node, int opset, int n_in, const wt_tensor *in, int n_out,
                wt_tensor *out);
void harness_free(int n_out, wt_tensor *out);
/* A float tensor view over caller data. */
wt_tensor harness_f32(int rank, const int64_t *dims, float *data);
wt_tensor harness_i64(int rank, const int64_t *dims, int64_t *data);

#endif
