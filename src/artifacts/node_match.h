/* Node predicates shared by the artifact passes (fuse.c, lora.c). */
#ifndef WT_ARTIFACTS_NODE_MATCH_H
#define WT_ARTIFACTS_NODE_MATCH_H

#include <string.h>

#include "ir/ir.h"

/* An ai.onnx node of this op type. */
static inline int wt_is_onnx_op(const wt_node *n, const char *op_type) {
  return !n->domain[0] && !strcmp(n->op_type, op_type);
}

/* A Transpose that swaps two axes (perm absent or [1, 0]). */
static inline int wt_is_matrix_swap(const wt_node *n) {
  if (!wt_is_onnx_op(n, "Transpose")) return 0;
  const int64_t *perm;
  int k = wt_attr_ints(n, "perm", &perm);
  return k < 0 || (k == 2 && perm[0] == 1 && perm[1] == 0);
}

#endif
