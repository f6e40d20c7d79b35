/* Graph IR construction, lookup and topological ordering. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

char *wt_strndup(const char *s, size_t n) {
  char *r = malloc(n + 1);
  if (!r) return NULL;
  if (n) memcpy(r, s, n);
  r[n] = '\0';
  return r;
}

char *wt_strdup(const char *s) { return wt_strndup(s ? s : "", s ? strlen(s) : 0); }

void wt_const_tensor_free(wt_const_tensor *t) {
  if (!t) return;
  free(t->name);
  free(t->t.data);
  free(t);
}

static int in_slab(const wt_graph *g, const void *p) {
  uintptr_t at = (uintptr_t)p, lo = (uintptr_t)g->slab;
  return g->slab && at >= lo && at - lo < g->slab_bytes;
}

void wt_graph_release(const wt_graph *g, void *p) {
  if (!in_slab(g, p)) free(p);
}

/* realloc for a piece the graph owns (a fresh copy when it lies in the slab) */
static void *graph_realloc(const wt_graph *g, void *p, size_t old_bytes, size_t new_bytes) {
  if (!in_slab(g, p)) return realloc(p, new_bytes);
  void *q = malloc(new_bytes);
  if (q) memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
  return q;
}

void wt_attr_clear(const wt_graph *g, wt_attr *a) {
  wt_graph_release(g, a->name);
  switch (a->type) {
    case WT_ATTR_STRING: wt_graph_release(g, a->s); break;
    case WT_ATTR_FLOATS: wt_graph_release(g, a->floats); break;
    case WT_ATTR_INTS: wt_graph_release(g, a->ints); break;
    case WT_ATTR_TENSOR:
      if (a->t) {
        wt_graph_release(g, a->t->name);
        wt_graph_release(g, a->t->t.data);
        wt_graph_release(g, a->t);
      }
      break;
    case WT_ATTR_STRINGS:
      if (a->strings)
        for (int i = 0; i < a->n; i++) wt_graph_release(g, a->strings[i]);
      wt_graph_release(g, a->strings);
      break;
    default:
      break;
  }
  memset(a, 0, sizeof *a);
}

static void clear_dim_params(const wt_graph *g, wt_value *v) {
  if (!v->dim_param) return;
  for (int d = 0; d < v->rank; d++) wt_graph_release(g, v->dim_param[d]);
  wt_graph_release(g, v->dim_param);
  v->dim_param = NULL;
}

static void clear_shape(const wt_graph *g, wt_value *v) {
  clear_dim_params(g, v);
  wt_graph_release(g, v->dims);
  v->dims = NULL;
}

int wt_value_set_shape(wt_graph *g, int v, int rank, const int64_t *dims) {
  wt_value *val = &g->values[v];
  if (rank > WT_MAX_RANK)
    return wt_errorf(WT_ERR_INTERNAL, "value '%s': rank %d is more than %d", val->name, rank, WT_MAX_RANK);
  int64_t *nd = NULL;
  if (rank > 0) { /* dims may be val->dims itself */
    nd = malloc(sizeof *nd * (size_t)rank);
    if (!nd) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    for (int d = 0; d < rank; d++) nd[d] = dims ? dims[d] : -1;
  }
  clear_shape(g, val);
  val->rank = rank < 0 ? -1 : rank;
  val->dims = nd;
  return WT_OK;
}

int wt_value_set_dim_param(wt_graph *g, int v, int d, const char *name) {
  wt_value *val = &g->values[v];
  if (d < 0 || d >= val->rank)
    return wt_errorf(WT_ERR_INTERNAL, "value '%s' has no dim %d", val->name, d);
  if (!val->dim_param && !name) return WT_OK;
  if (!val->dim_param && !(val->dim_param = calloc((size_t)val->rank, sizeof(char *))))
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  char *copy = NULL;
  if (name && !(copy = wt_strdup(name))) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  wt_graph_release(g, val->dim_param[d]);
  val->dim_param[d] = copy;
  return WT_OK;
}

int wt_value_copy_type(wt_graph *g, int v, const wt_graph *sg, int src, int drop) {
  const wt_value *s = &sg->values[src];
  if (g == sg && v == src) return WT_OK;
  if (drop >= s->rank) drop = -1;
  int64_t dims[WT_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < s->rank; d++)
    if (d != drop) dims[rank++] = s->dims[d];
  WT_TRY(wt_value_set_shape(g, v, s->rank < 0 ? -1 : rank, dims));
  g->values[v].dtype = s->dtype;
  for (int d = 0, j = 0; d < s->rank; d++) {
    if (d == drop) continue;
    if (wt_value_dim_param(s, d)) WT_TRY(wt_value_set_dim_param(g, v, j, s->dim_param[d]));
    j++;
  }
  return WT_OK;
}

void wt_node_clear(const wt_graph *g, wt_node *n) {
  wt_graph_release(g, n->name);
  wt_graph_release(g, n->op_type);
  wt_graph_release(g, n->domain);
  wt_graph_release(g, n->inputs);
  wt_graph_release(g, n->outputs);
  for (int a = 0; a < n->n_attrs; a++) wt_attr_clear(g, &n->attrs[a]);
  wt_graph_release(g, n->attrs);
  memset(n, 0, sizeof *n);
}

static int replace_string(const wt_graph *g, char **field, const char *s) {
  char *copy = wt_strdup(s);
  if (!copy) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  wt_graph_release(g, *field);
  *field = copy;
  return WT_OK;
}

int wt_value_set_name(wt_graph *g, int v, const char *name) { return replace_string(g, &g->values[v].name, name); }

int wt_node_set_name(wt_graph *g, int node, const char *name) { return replace_string(g, &g->nodes[node].name, name); }

int wt_node_set_op(wt_graph *g, int node, const char *op_type, const char *domain) {
  wt_node *n = &g->nodes[node];
  WT_TRY(replace_string(g, &n->op_type, op_type));
  return replace_string(g, &n->domain, domain && strcmp(domain, "ai.onnx") != 0 ? domain : "");
}

int wt_node_set_n_outputs(wt_graph *g, int node, int count) {
  wt_node *n = &g->nodes[node];
  if (count <= n->n_outputs) {
    n->n_outputs = count;
    return WT_OK;
  }
  int *o = graph_realloc(g, n->outputs, sizeof(int) * (size_t)n->n_outputs, sizeof(int) * (size_t)count);
  if (!o) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int i = n->n_outputs; i < count; i++) o[i] = -1;
  n->outputs = o;
  n->n_outputs = count;
  return WT_OK;
}

void wt_node_remove_attr(wt_graph *g, int node, const char *name) {
  wt_node *n = &g->nodes[node];
  for (int i = 0; i < n->n_attrs; i++)
    if (!strcmp(n->attrs[i].name, name)) {
      wt_attr_clear(g, &n->attrs[i]);
      memmove(&n->attrs[i], &n->attrs[i + 1], sizeof n->attrs[0] * (size_t)(n->n_attrs - i - 1));
      n->n_attrs--;
      return;
    }
}

wt_graph *wt_graph_new(void) {
  wt_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->name = wt_strdup("");
  g->producer_name = wt_strdup("");
  g->producer_version = wt_strdup("");
  g->ir_version = 8;
  return g;
}

void wt_graph_free(wt_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) {
    wt_value *v = &g->values[i];
    wt_graph_release(g, v->name);
    if (!(v->flags & WT_VALUE_BORROWED)) wt_graph_release(g, v->data);
    clear_shape(g, v);
  }
  for (int i = 0; i < g->n_nodes; i++) wt_node_clear(g, &g->nodes[i]);
  for (int i = 0; i < g->n_opsets; i++) wt_graph_release(g, g->opsets[i].domain);
  wt_graph_release(g, g->opsets);
  free(g->values);
  free(g->nodes);
  wt_graph_release(g, g->inputs);
  wt_graph_release(g, g->outputs);
  wt_graph_release(g, g->name);
  wt_graph_release(g, g->producer_name);
  wt_graph_release(g, g->producer_version);
  wt_graph_free_external(g);
  free(g->slab);
  free(g);
}

/* exact: to `need`, else doubling */
static int grow(void **arr, int *cap, int need, size_t elem, int exact) {
  if (need <= *cap) return WT_OK;
  int nc = exact ? need : *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *p = realloc(*arr, (size_t)nc * elem);
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory growing the graph");
  memset((char *)p + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *arr = p;
  *cap = nc;
  return WT_OK;
}

int wt_graph_reserve(wt_graph *g, int n_values, int n_nodes) {
  WT_TRY(grow((void **)&g->values, &g->cap_values, n_values, sizeof *g->values, 1));
  return grow((void **)&g->nodes, &g->cap_nodes, n_nodes, sizeof *g->nodes, 1);
}

int wt_graph_find(const wt_graph *g, const char *name) {
  /* Linear scan from the end: recent values are looked up most. Graphs are at most a few
   * thousand values; io builds a hash index when it reads large models. */
  for (int i = g->n_values - 1; i >= 0; i--)
    if (strcmp(g->values[i].name, name) == 0) return i;
  return -1;
}

static int append_value(wt_graph *g, const char *name) {
  if (grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values, 0)) return -1;
  wt_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = wt_strdup(name);
  if (!v->name) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory growing the graph"), -1;
  v->rank = -1;
  v->producer = -1;
  return g->n_values++;
}

int wt_graph_value(wt_graph *g, const char *name) {
  int i = wt_graph_find(g, name);
  return i >= 0 ? i : append_value(g, name);
}

int wt_graph_add_value(wt_graph *g, const char *name) {
  return wt_graph_find(g, name) >= 0 ? -1 : append_value(g, name);
}

int wt_graph_fresh_value(wt_graph *g, const char *name) {
  if (wt_graph_find(g, name) < 0) return append_value(g, name);
  size_t len = strlen(name) + 24;
  char *buf = malloc(len);
  if (!buf) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory growing the graph"), -1;
  int v = -1;
  for (long k = 1; v < 0; k++) {
    snprintf(buf, len, "%s_%ld", name, k);
    if (wt_graph_find(g, buf) < 0) {
      v = append_value(g, buf);
      break;
    }
  }
  free(buf);
  return v;
}

int wt_graph_add_node(wt_graph *g, const char *op_type, const char *domain, const char *name,
                      int n_inputs, const int *inputs, int n_outputs, const int *outputs) {
  if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes, 0)) return -1;
  wt_node *n = &g->nodes[g->n_nodes];
  memset(n, 0, sizeof *n);
  n->op_type = wt_strdup(op_type);
  n->domain = wt_strdup(domain && strcmp(domain, "ai.onnx") != 0 ? domain : "");
  n->name = wt_strdup(name);
  n->inputs = malloc(sizeof(int) * (size_t)(n_inputs ? n_inputs : 1));
  n->outputs = malloc(sizeof(int) * (size_t)(n_outputs ? n_outputs : 1));
  if (!n->op_type || !n->domain || !n->name || !n->inputs || !n->outputs) {
    wt_errorf(WT_ERR_NO_MEMORY, "out of memory adding node '%s'", name ? name : "");
    return -1;
  }
  n->n_inputs = n_inputs;
  n->n_outputs = n_outputs;
  if (n_inputs) memcpy(n->inputs, inputs, sizeof(int) * (size_t)n_inputs);
  if (n_outputs) memcpy(n->outputs, outputs, sizeof(int) * (size_t)n_outputs);
  for (int i = 0; i < n_outputs; i++)
    if (outputs[i] >= 0) g->values[outputs[i]].producer = g->n_nodes;
  return g->n_nodes++;
}

wt_attr *wt_node_add_attr(wt_graph *g, int node, const char *name, wt_attr_type type) {
  wt_node *n = &g->nodes[node];
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      wt_attr_clear(g, &n->attrs[i]);
      n->attrs[i].name = wt_strdup(name);
      n->attrs[i].type = type;
      return n->attrs[i].name ? &n->attrs[i] : NULL;
    }
  wt_attr *p = graph_realloc(g, n->attrs, sizeof *p * (size_t)n->n_attrs, sizeof *p * (size_t)(n->n_attrs + 1));
  if (!p) return NULL;
  n->attrs = p;
  wt_attr *a = &p[n->n_attrs];
  memset(a, 0, sizeof *a);
  a->name = wt_strdup(name);
  if (!a->name) return NULL;
  a->type = type;
  n->n_attrs++;
  return a;
}

int wt_node_set_int(wt_graph *g, int node, const char *name, int64_t v) {
  wt_attr *a = wt_node_add_attr(g, node, name, WT_ATTR_INT);
  if (!a) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  a->i = v;
  return WT_OK;
}

int wt_node_set_float(wt_graph *g, int node, const char *name, float v) {
  wt_attr *a = wt_node_add_attr(g, node, name, WT_ATTR_FLOAT);
  if (!a) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  a->f = v;
  return WT_OK;
}

int wt_node_set_ints(wt_graph *g, int node, const char *name, const int64_t *v, int n) {
  wt_attr *a = wt_node_add_attr(g, node, name, WT_ATTR_INTS);
  if (!a) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  a->ints = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!a->ints) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (n) memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
  a->n = n;
  return WT_OK;
}

int wt_node_set_string(wt_graph *g, int node, const char *name, const char *s) {
  wt_attr *a = wt_node_add_attr(g, node, name, WT_ATTR_STRING);
  if (!a) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  a->s = wt_strdup(s);
  if (!a->s) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  a->s_len = strlen(a->s);
  return WT_OK;
}

static int append_index(const wt_graph *g, int **arr, int *n, int v) {
  int *p = graph_realloc(g, *arr, sizeof(int) * (size_t)*n, sizeof(int) * (size_t)(*n + 1));
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  p[(*n)++] = v;
  *arr = p;
  return WT_OK;
}

int wt_graph_add_input(wt_graph *g, int value) {
  g->values[value].flags |= WT_VALUE_GRAPH_INPUT;
  return append_index(g, &g->inputs, &g->n_inputs, value);
}

int wt_graph_add_output(wt_graph *g, int value) {
  g->values[value].flags |= WT_VALUE_GRAPH_OUTPUT;
  return append_index(g, &g->outputs, &g->n_outputs, value);
}

int wt_graph_set_opset(wt_graph *g, const char *domain, int64_t version) {
  const char *d = domain && strcmp(domain, "ai.onnx") != 0 ? domain : "";
  for (int i = 0; i < g->n_opsets; i++)
    if (strcmp(g->opsets[i].domain, d) == 0) {
      g->opsets[i].version = version;
      return WT_OK;
    }
  wt_opset *p = graph_realloc(g, g->opsets, sizeof *p * (size_t)g->n_opsets, sizeof *p * (size_t)(g->n_opsets + 1));
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  g->opsets = p;
  p[g->n_opsets].domain = wt_strdup(d);
  p[g->n_opsets].version = version;
  g->n_opsets++;
  return WT_OK;
}

int64_t wt_graph_opset(const wt_graph *g, const char *domain) {
  const char *d = domain && strcmp(domain, "ai.onnx") != 0 ? domain : "";
  for (int i = 0; i < g->n_opsets; i++)
    if (strcmp(g->opsets[i].domain, d) == 0) return g->opsets[i].version;
  return 0;
}

const wt_attr *wt_node_attr(const wt_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

int64_t wt_attr_int(const wt_node *n, const char *name, int64_t dflt) {
  const wt_attr *a = wt_node_attr(n, name);
  return a && a->type == WT_ATTR_INT ? a->i : dflt;
}

float wt_attr_float(const wt_node *n, const char *name, float dflt) {
  const wt_attr *a = wt_node_attr(n, name);
  if (a && a->type == WT_ATTR_FLOAT) return a->f;
  if (a && a->type == WT_ATTR_INT) return (float)a->i;
  return dflt;
}

const char *wt_attr_string(const wt_node *n, const char *name, const char *dflt) {
  const wt_attr *a = wt_node_attr(n, name);
  return a && a->type == WT_ATTR_STRING ? a->s : dflt;
}

int wt_attr_ints(const wt_node *n, const char *name, const int64_t **out) {
  const wt_attr *a = wt_node_attr(n, name);
  if (!a || a->type != WT_ATTR_INTS) return -1;
  *out = a->ints;
  return a->n;
}

int wt_attr_floats(const wt_node *n, const char *name, const float **out) {
  const wt_attr *a = wt_node_attr(n, name);
  if (!a || a->type != WT_ATTR_FLOATS) return -1;
  *out = a->floats;
  return a->n;
}

const char *wt_node_label(const wt_node *n) {
  static char buf[384];
  snprintf(buf, sizeof buf, "%s%s%s node '%s'", n->domain[0] ? n->domain : "",
           n->domain[0] ? "::" : "", n->op_type, n->name);
  return buf;
}

/* Kahn's algorithm over value producers; keeps the original order where it is already valid. */
int wt_graph_toposort(wt_graph *g) {
  int nn = g->n_nodes, nv = g->n_values;
  int rc = WT_OK;
  char *ready = calloc((size_t)nv + 1, 1);
  char *done = calloc((size_t)nn + 1, 1);
  wt_node *sorted = malloc(sizeof *sorted * (size_t)(nn ? nn : 1));
  if (!ready || !done || !sorted) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory sorting the graph");
    goto out;
  }
  for (int v = 0; v < nv; v++)
    if (g->values[v].flags & (WT_VALUE_GRAPH_INPUT | WT_VALUE_INITIALIZER)) ready[v] = 1;
  int count = 0;
  for (int progress = 1; progress && count < nn;) {
    progress = 0;
    for (int i = 0; i < nn; i++) {
      if (done[i]) continue;
      const wt_node *n = &g->nodes[i];
      int ok = 1;
      for (int k = 0; k < n->n_inputs && ok; k++)
        if (n->inputs[k] >= 0 && !ready[n->inputs[k]]) ok = 0;
      if (!ok) continue;
      for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) ready[n->outputs[k]] = 1;
      done[i] = 1;
      sorted[count++] = *n;
      progress = 1;
    }
  }
  if (count < nn) {
    for (int i = 0; i < nn; i++) {
      if (done[i]) continue;
      const wt_node *n = &g->nodes[i];
      for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        if (v < 0 || ready[v]) continue;
        int produced = 0;
        for (int j = 0; j < nn && !produced; j++)
          for (int o = 0; o < g->nodes[j].n_outputs; o++)
            if (g->nodes[j].outputs[o] == v) produced = 1;
        rc = wt_errorf(WT_ERR_PARSE,
                       produced ? "%s: input '%s' is part of a cycle"
                                : "%s: input '%s' is not a graph input, an initializer or the "
                                  "output of any node",
                       wt_node_label(n), g->values[v].name);
        goto out;
      }
    }
    rc = wt_errorf(WT_ERR_PARSE, "graph has a cycle");
    goto out;
  }
  if (nn > 0) memcpy(g->nodes, sorted, sizeof *sorted * (size_t)nn);
  for (int v = 0; v < nv; v++) g->values[v].producer = -1;
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k] >= 0) g->values[g->nodes[i].outputs[k]].producer = i;
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    if (!ready[v]) {
      rc = wt_errorf(WT_ERR_PARSE, "graph output '%s' is not produced by any node",
                     g->values[v].name);
      goto out;
    }
  }
out:
  free(ready);
  free(done);
  free(sorted);
  return rc;
}

int wt_graph_const_value(const wt_graph *g, int v, wt_tensor *out) {
  if (v < 0 || v >= g->n_values) return 0;
  const wt_value *val = &g->values[v];
  *out = (wt_tensor){.dtype = val->dtype, .rank = val->rank, .data = val->data};
  if (val->flags & WT_VALUE_INITIALIZER) {
    if (wt_value_unloaded(val)) return 0; /* held by reference: its bytes are not here */
    if (val->rank > 0) memcpy(out->dims, val->dims, sizeof *val->dims * (size_t)val->rank);
    return val->rank >= 0;
  }
  if (val->producer < 0) return 0;
  const wt_node *n = &g->nodes[val->producer];
  if (strcmp(n->op_type, "Constant") || n->domain[0] || n->n_attrs < 1) return 0;
  const wt_attr *a = &n->attrs[0];
  if (a->type == WT_ATTR_TENSOR && a->t && !strcmp(a->name, "value")) {
    *out = a->t->t;
  } else if (a->type == WT_ATTR_FLOAT) {
    *out = (wt_tensor){.dtype = WT_FLOAT, .rank = 0, .data = (void *)&a->f};
  } else if (a->type == WT_ATTR_INT) {
    *out = (wt_tensor){.dtype = WT_INT64, .rank = 0, .data = (void *)&a->i};
  } else if (a->type == WT_ATTR_FLOATS || a->type == WT_ATTR_INTS) {
    int f = a->type == WT_ATTR_FLOATS;
    *out = (wt_tensor){.dtype = f ? WT_FLOAT : WT_INT64, .rank = 1, .dims = {a->n},
                       .data = f ? (void *)a->floats : (void *)a->ints};
  } else {
    return 0;
  }
  return 1;
}

/* ---- initializers stored in external data files ----------------------------------------------
 * The graph's record of where each one's bytes are (location and offset, by value name), so that
 * a graph read with its weights by reference can write the same references back (artifact
 * generation), and a module's eval model can find the training model's already loaded bytes of
 * the same file range (src/io/onnx_read.c). */
int wt_graph_set_external(wt_graph *g, const char *name, const char *location, uint64_t offset) {
  char *n = wt_strdup(name), *l = wt_strdup(location);
  wt_external_init *grown = n && l ? realloc(g->ext, sizeof *g->ext * (size_t)(g->n_ext + 1)) : NULL;
  if (!grown) {
    free(n);
    free(l);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  g->ext = grown;
  for (int i = 0; i < g->n_ext; i++)
    if (!strcmp(g->ext[i].name, name)) {
      free(g->ext[i].name);
      free(g->ext[i].location);
      g->ext[i] = (wt_external_init){n, l, offset};
      return WT_OK;
    }
  g->ext[g->n_ext++] = (wt_external_init){n, l, offset};
  return WT_OK;
}

const wt_external_init *wt_graph_external(const wt_graph *g, const char *name) {
  for (int i = 0; i < g->n_ext; i++)
    if (!strcmp(g->ext[i].name, name)) return &g->ext[i];
  return NULL;
}

void wt_value_drop_data(const wt_graph *g, wt_value *v) {
  if (!(v->flags & WT_VALUE_BORROWED)) wt_graph_release(g, v->data);
  v->flags &= ~(uint8_t)WT_VALUE_BORROWED;
  v->data = NULL;
  v->nbytes = 0;
}

void wt_graph_free_external(wt_graph *g) {
  for (int i = 0; i < g->n_ext; i++) {
    free(g->ext[i].name);
    free(g->ext[i].location);
  }
  free(g->ext);
  g->ext = NULL;
  g->n_ext = 0;
}
