/* The small builder gradient rules use to emit nodes (see grad.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad/grad.h"
#include "base/status.h"

const wt_node *wt_grad_node(const wt_grad_ctx *c) { return &c->g->nodes[c->node]; }
int wt_grad_I(const wt_grad_ctx *c, int i) {
  const wt_node *n = wt_grad_node(c);
  return i < n->n_inputs ? n->inputs[i] : -1;
}
int wt_grad_O(const wt_grad_ctx *c, int i) {
  const wt_node *n = wt_grad_node(c);
  return i < n->n_outputs ? n->outputs[i] : -1;
}
int wt_grad_GO(const wt_grad_ctx *c, int i) { return i >= 0 && i < c->n_go ? c->go[i] : -1; }
int wt_grad_need(const wt_grad_ctx *c, int i) { return i < wt_grad_node(c)->n_inputs && c->need[i]; }
const wt_value *wt_grad_value(const wt_grad_ctx *c, int v) { return &c->g->values[v]; }
int wt_grad_status(const wt_grad_ctx *c) { return c->rc; }

int wt_grad_fail(wt_grad_ctx *c, int code, const char *fmt, ...) {
  if (c->rc) return c->rc;
  va_list ap;
  va_start(ap, fmt);
  wt_verrorf(code, fmt, ap);
  va_end(ap);
  c->rc = code;
  return code;
}

static int fresh_value(wt_grad_ctx *c, const char *op_type) {
  char name[512];
  const wt_node *n = wt_grad_node(c);
  snprintf(name, sizeof name, "%s_Grad/%s_%d", n->name, op_type, (*c->counter)++);
  int v = wt_graph_fresh_value(c->g, name);
  if (v < 0) wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
  return v;
}

int wt_grad_op(wt_grad_ctx *c, const char *op_type, const char *domain, int n_in, const int *ins,
               int n_out, int *outs) {
  if (c->rc) return -1;
  for (int i = 0; i < n_in; i++)
    if (ins[i] < -1 || ins[i] >= c->g->n_values) {
      wt_grad_fail(c, WT_ERR_INTERNAL, "gradient rule emitted %s with an invalid input", op_type);
      return -1;
    }
  int tmp[16];
  int *o = outs ? outs : tmp;
  if (n_out > 16 && !outs) {
    wt_grad_fail(c, WT_ERR_INTERNAL, "too many outputs");
    return -1;
  }
  for (int i = 0; i < n_out; i++)
    if ((o[i] = fresh_value(c, op_type)) < 0) return -1;
  char name[512];
  snprintf(name, sizeof name, "%s_Grad/%s_%d", wt_grad_node(c)->name, op_type, (*c->counter)++);
  int node = wt_graph_add_node(c->g, op_type, domain, name, n_in, ins, n_out, o);
  if (node < 0) {
    wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
    return -1;
  }
  if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0 && wt_graph_opset(c->g, domain) == 0)
    wt_graph_set_opset(c->g, domain, 1);
  c->last_node = node;
  return node;
}

int wt_grad_op1(wt_grad_ctx *c, const char *op_type, const char *domain, int n_in, const int *ins) {
  int out;
  return wt_grad_op(c, op_type, domain, n_in, ins, 1, &out) < 0 ? -1 : out;
}

int wt_grad_last(const wt_grad_ctx *c) { return c->last_node; }

static int add_initializer(wt_grad_ctx *c, int dtype, int rank, const int64_t *dims, const void *data,
                           size_t nbytes) {
  if (c->rc) return -1;
  int v = fresh_value(c, "Const");
  if (v < 0) return -1;
  wt_value *val = &c->g->values[v];
  val->data = malloc(nbytes ? nbytes : 1);
  if (!val->data) {
    wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
    return -1;
  }
  if (nbytes) memcpy(val->data, data, nbytes);
  val->nbytes = nbytes;
  val->dtype = dtype;
  val->flags |= WT_VALUE_INITIALIZER;
  if (wt_value_set_shape(c->g, v, rank, dims)) {
    wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
    return -1;
  }
  return v;
}

int wt_grad_const_f32(wt_grad_ctx *c, float v) { return add_initializer(c, WT_FLOAT, 0, NULL, &v, sizeof v); }

int wt_grad_const_i64s(wt_grad_ctx *c, const int64_t *v, int n) {
  int64_t dims[1] = {n};
  return add_initializer(c, WT_INT64, 1, dims, v, sizeof(int64_t) * (size_t)n);
}

void wt_grad_set(wt_grad_ctx *c, int i, int value) {
  if (c->rc || i >= wt_grad_node(c)->n_inputs) return;
  c->gi[i] = value;
}

int wt_grad_reduce_sum(wt_grad_ctx *c, int x, const int64_t *axes, int n_axes, int keepdims) {
  int r;
  if (c->opset >= 13) {
    int ax = wt_grad_const_i64s(c, axes, n_axes);
    r = wt_grad_op1(c, "ReduceSum", "", 2, (int[]){x, ax});
  } else {
    r = wt_grad_op1(c, "ReduceSum", "", 1, &x);
    if (r >= 0) wt_node_set_ints(c->g, wt_grad_last(c), "axes", axes, n_axes);
  }
  if (r >= 0) wt_node_set_int(c->g, wt_grad_last(c), "keepdims", keepdims);
  return r;
}

int wt_grad_reshape_like(wt_grad_ctx *c, int x, int like) {
  int shape = wt_grad_op1(c, "Shape", "", 1, &like);
  return wt_grad_op1(c, "Reshape", "", 2, (int[]){x, shape});
}

/* Same dim for sure: equal fixed sizes, or the same named symbol. */
static int same_dim(const wt_value *a, int i, const wt_value *b, int j) {
  if (a->dims[i] >= 0 || b->dims[j] >= 0) return a->dims[i] == b->dims[j];
  return wt_value_dim_param(a, i) && wt_value_dim_param(b, j) && strcmp(wt_value_dim_param(a, i), wt_value_dim_param(b, j)) == 0;
}

int wt_grad_unbroadcast(wt_grad_ctx *c, int dy, int out_index, int in_index) {
  if (c->rc) return -1;
  const wt_value *y = wt_grad_value(c, O(out_index));
  const wt_value *x = wt_grad_value(c, I(in_index));
  if (y->rank < 0 || x->rank < 0)
    return wt_grad_fail(c, WT_ERR_SHAPE, "input %d: the shapes of '%s' and '%s' must be known to "
                        "reduce a broadcast gradient", in_index, x->name, y->name), -1;
  int64_t axes[WT_MAX_RANK];
  int n = 0, lead = y->rank - x->rank;
  for (int i = 0; i < y->rank; i++) {
    if (i < lead) {
      axes[n++] = i;
      continue;
    }
    int j = i - lead;
    if (same_dim(y, i, x, j)) continue;
    if (x->dims[j] == 1) {
      axes[n++] = i;
      continue;
    }
    return wt_grad_fail(c, WT_ERR_SHAPE, "input %d ('%s'): cannot tell statically whether dimension "
                        "%d is broadcast", in_index, x->name, j), -1;
  }
  if (n == 0) return dy;
  int r = wt_grad_reduce_sum(c, dy, axes, n, 1);
  /* Reduced size-1 axes keep their place; dropped leading axes need a reshape. */
  return lead > 0 ? wt_grad_reshape_like(c, r, I(in_index)) : r;
}

int wt_grad_unsqueeze(wt_grad_ctx *c, int x, const int64_t *axes, int n_axes) {
  if (c->opset >= 13) {
    int ax = wt_grad_const_i64s(c, axes, n_axes);
    return wt_grad_op1(c, "Unsqueeze", "", 2, (int[]){x, ax});
  }
  int r = wt_grad_op1(c, "Unsqueeze", "", 1, &x);
  if (r >= 0) wt_node_set_ints(c->g, wt_grad_last(c), "axes", axes, n_axes);
  return r;
}

int wt_grad_expand_like(wt_grad_ctx *c, int x, int like) {
  int shape = wt_grad_op1(c, "Shape", "", 1, &like);
  return wt_grad_op1(c, "Expand", "", 2, (int[]){x, shape});
}

int wt_grad_const_ints(const wt_grad_ctx *c, int v, int64_t *out, int cap) {
  wt_tensor t;
  if (!wt_graph_const_value(c->g, v, &t) || !t.data || (t.dtype != WT_INT64 && t.dtype != WT_INT32))
    return -1;
  int64_t n = wt_numel(&t);
  if (n > cap) return -1;
  for (int64_t i = 0; i < n; i++)
    out[i] = t.dtype == WT_INT64 ? ((const int64_t *)t.data)[i] : ((const int32_t *)t.data)[i];
  return (int)n;
}

int wt_grad_forward_output(wt_grad_ctx *c, int index) {
  if (c->rc) return -1;
  wt_node *n = &c->g->nodes[c->node];
  if (index < n->n_outputs && n->outputs[index] >= 0) return n->outputs[index];
  if (index >= 16) return wt_grad_fail(c, WT_ERR_INTERNAL, "output index %d", index), -1;
  if (index >= n->n_outputs) {
    if (wt_node_set_n_outputs(c->g, c->node, index + 1)) return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory"), -1;
    n = &c->g->nodes[c->node];
  }
  char name[512];
  snprintf(name, sizeof name, "%s_output_%d", n->name, index);
  int v = wt_graph_fresh_value(c->g, name); /* never a value the model already has */
  if (v < 0) return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory"), -1;
  n = &c->g->nodes[c->node];
  n->outputs[index] = v;
  c->g->values[v].producer = c->node;
  return v;
}
