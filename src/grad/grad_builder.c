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
  if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0) wt_grad_use_domain(c, domain);
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
    if (r >= 0) wt_grad_attr_ints(c, wt_grad_last(c), "axes", axes, n_axes);
  }
  if (r >= 0) wt_grad_attr_int(c, wt_grad_last(c), "keepdims", keepdims);
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
  if (r >= 0) wt_grad_attr_ints(c, wt_grad_last(c), "axes", axes, n_axes);
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

/* ---- shared helpers of the rules ------------------------------------------------------------ */

int wt_grad_op2(wt_grad_ctx *c, const char *op_type, int a, int b) {
  return wt_grad_op1(c, op_type, "", 2, (int[]){a, b});
}

static int attr_listed(const char *name, const char *const *names, int n) {
  if (!names) return 1;
  for (int i = 0; i < n; i++)
    if (!strcmp(name, names[i])) return 1;
  return 0;
}

static int copy_attr(wt_graph *g, int dst, const wt_attr *s) {
  switch (s->type) {
    case WT_ATTR_INT: return wt_node_set_int(g, dst, s->name, s->i);
    case WT_ATTR_FLOAT: return wt_node_set_float(g, dst, s->name, s->f);
    case WT_ATTR_STRING: return wt_node_set_string(g, dst, s->name, s->s);
    case WT_ATTR_INTS: return wt_node_set_ints(g, dst, s->name, s->ints, s->n);
    case WT_ATTR_FLOATS:
    case WT_ATTR_STRINGS: {
      wt_attr *a = wt_node_add_attr(g, dst, s->name, s->type);
      if (!a) return WT_ERR_NO_MEMORY;
      size_t k = (size_t)(s->n ? s->n : 1);
      if (s->type == WT_ATTR_FLOATS) {
        if (!(a->floats = malloc(sizeof(float) * k))) return WT_ERR_NO_MEMORY;
        if (s->n) memcpy(a->floats, s->floats, sizeof(float) * (size_t)s->n);
      } else {
        if (!(a->strings = calloc(k, sizeof(char *)))) return WT_ERR_NO_MEMORY;
        for (int j = 0; j < s->n; j++)
          if (!(a->strings[j] = wt_strdup(s->strings[j]))) return WT_ERR_NO_MEMORY;
      }
      a->n = s->n;
      return WT_OK;
    }
    default: return WT_OK; /* tensors and graphs are not copied */
  }
}

int wt_grad_copy_attrs(wt_grad_ctx *c, int dst, const char *const *names, int n) {
  for (int i = 0; !c->rc && i < wt_grad_node(c)->n_attrs; i++) {
    const wt_attr *a = &wt_grad_node(c)->attrs[i];
    if (!attr_listed(a->name, names, n)) continue;
    if (copy_attr(c->g, dst, a)) wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory copying attribute '%s'", a->name);
  }
  return c->rc;
}

void wt_grad_omit_output(wt_grad_ctx *c, int node, int k) {
  if (c->rc || node < 0) return;
  int v = c->g->nodes[node].outputs[k];
  c->g->nodes[node].outputs[k] = -1;
  if (v >= 0) c->g->values[v].producer = -1;
}

int wt_grad_op_grads(wt_grad_ctx *c, const char *op_type, const char *domain, int n_in, const int *ins,
                     int n_out, const int *map) {
  int outs[16];
  if (n_out > 16) return wt_grad_fail(c, WT_ERR_INTERNAL, "%s: %d outputs", op_type, n_out), -1;
  int last = n_out;
  while (last > 1 && !wt_grad_need(c, map ? map[last - 1] : last - 1)) last--; /* trailing omitted */
  int node = wt_grad_op(c, op_type, domain, n_in, ins, last, outs);
  if (node < 0) return -1;
  for (int k = 0; k < last; k++) {
    int i = map ? map[k] : k;
    if (wt_grad_need(c, i)) wt_grad_set(c, i, outs[k]);
    else wt_grad_omit_output(c, node, k);
  }
  return node;
}

int wt_grad_fill_like(wt_grad_ctx *c, int v, float value) {
  int shape = wt_grad_op1(c, "Shape", "", 1, &v);
  int r = wt_grad_op1(c, "ConstantOfShape", "", 1, &shape);
  if (r < 0 || value == 0.0f) return r; /* ConstantOfShape's default value is float 0 */
  wt_attr *a = wt_node_add_attr(c->g, wt_grad_last(c), "value", WT_ATTR_TENSOR);
  if (!a || !(a->t = calloc(1, sizeof *a->t)) || !(a->t->name = wt_strdup("")) ||
      !(a->t->t.data = malloc(sizeof(float))))
    return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory"), -1;
  a->t->t.dtype = WT_FLOAT;
  a->t->t.rank = 1;
  a->t->t.dims[0] = 1;
  *(float *)a->t->t.data = value;
  return r;
}

/* One attribute setter's status into the rule's sticky one. */
static void attr_status(wt_grad_ctx *c, int rc, const char *name) {
  if (rc) wt_grad_fail(c, rc, "out of memory setting attribute '%s'", name);
}

void wt_grad_attr_int(wt_grad_ctx *c, int node, const char *name, int64_t v) {
  if (!c->rc && node >= 0) attr_status(c, wt_node_set_int(c->g, node, name, v), name);
}

void wt_grad_attr_float(wt_grad_ctx *c, int node, const char *name, float v) {
  if (!c->rc && node >= 0) attr_status(c, wt_node_set_float(c->g, node, name, v), name);
}

void wt_grad_attr_ints(wt_grad_ctx *c, int node, const char *name, const int64_t *v, int n) {
  if (!c->rc && node >= 0) attr_status(c, wt_node_set_ints(c->g, node, name, v, n), name);
}

void wt_grad_use_domain(wt_grad_ctx *c, const char *domain) {
  if (!c->rc && wt_graph_opset(c->g, domain) == 0) attr_status(c, wt_graph_set_opset(c->g, domain, 1), domain);
}
