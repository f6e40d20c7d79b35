/* LoRA exports from an inference graph that holds the adapters as initializers (what a module
 * exports): the merged model (W + (alpha/rank)·B·A written into W, the adapter branches gone)
 * and the base model that takes the adapters as inputs (ONNX Runtime's LoraAdapter feeds them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/half.h"
#include "base/status.h"

static const char SUF_A[] = ".lora_A";

/* The weight whose adapter A is value a ("W.lora_A" -> W; *w -1 when no initializer has that
 * name: see base_by_branch), its B and scale: -1 when a is no adapter A (its mark says so, or
 * in a graph without marks its name: wt_value_lora_role; marked: wt_graph_lora_marked). */
static int adapter_of(const wt_graph *g, int a, int marked, int *w, int *b, float *scale) {
  const wt_value *va = &g->values[a];
  if (!(va->flags & WT_VALUE_INITIALIZER) || wt_value_lora_role(g, a, marked) != WT_VALUE_LORA_A) return -1;
  size_t n = strlen(va->name), ns = sizeof SUF_A - 1;
  if (n <= ns || strcmp(va->name + n - ns, SUF_A))
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: adapter '%s' was renamed: its base weight, lora_B and "
                     "lora_scale are found by the name '<weight>.lora_A' it was given; export the eval "
                     "model generated with the lora option", va->name);
  char name[1024];
  if (n - ns + 16 > sizeof name)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: adapter name '%s' is too long", va->name);
  memcpy(name, va->name, n - ns);
  name[n - ns] = 0;
  *w = wt_graph_find(g, name);
  strcpy(name + n - ns, ".lora_B");
  *b = wt_graph_find(g, name);
  strcpy(name + n - ns, ".lora_scale");
  int s = wt_graph_find(g, name);
  wt_tensor t;
  if (*w >= 0 && !(g->values[*w].flags & WT_VALUE_INITIALIZER)) *w = -1;
  if (*b < 0 || s < 0 || !(g->values[*b].flags & WT_VALUE_INITIALIZER) || !wt_graph_const_value(g, s, &t) ||
      t.dtype != WT_FLOAT || wt_shape_numel(t.rank, t.dims) != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: '%s' has no base weight, lora_B or lora_scale constant "
                     "beside it in the model; export the eval model generated with the lora option",
                     va->name);
  *scale = *(const float *)t.data;
  return WT_OK;
}

/* The base weight of the adapters of `wname` when no initializer bears that name (frozen float16
 * weights: stored pre-transposed under another name, read through a Cast): the initializer
 * the node under "<wname>.lora_add" multiplies by; *view as wt_lora_operand_view. -1: none. */
static int base_by_branch(const wt_graph *g, const char *wname, size_t wlen, int *view) {
  char name[1024];
  snprintf(name, sizeof name, "%.*s.lora_add", (int)wlen, wname);
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    if (!n->name || strcmp(n->name, name) || n->n_inputs != 2 || n->inputs[0] < 0) continue;
    int p = g->values[n->inputs[0]].producer;
    if (p < 0) return -1;
    const wt_node *pn = &g->nodes[p];
    for (int k = 0; k < pn->n_inputs && k < 2; k++) {
      int v = pn->inputs[k], c = v >= 0 ? g->values[v].producer : -1;
      if (c >= 0 && !strcmp(g->nodes[c].op_type, "Cast") && g->nodes[c].n_inputs == 1) v = g->nodes[c].inputs[0];
      if (v >= 0 && (g->values[v].flags & WT_VALUE_INITIALIZER) && g->values[v].rank == 2 &&
          (*view = wt_lora_operand_view(pn, k)) >= 0)
        return v;
    }
    return -1;
  }
  return -1;
}

/* The base weight w of adapter a (by name, or by branch), its orientation and sizes. */
static int find_base(const wt_graph *g, int a, int *w, int *oi, int64_t *in, int64_t *out) {
  if (*w >= 0 && (g->values[*w].dtype == WT_FLOAT || g->values[*w].dtype == WT_FLOAT16))
    return wt_lora_weight_layout(g, *w, oi, in, out);
  const char *an = g->values[a].name;
  *w = base_by_branch(g, an, strlen(an) - (sizeof SUF_A - 1), oi);
  if (*w < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: the base weight of '%s' is not in the model (no initializer of "
                     "its name, none under its branch); export the eval model generated with the lora option", an);
  *in = g->values[*w].dims[*oi ? 1 : 0];
  *out = g->values[*w].dims[*oi ? 0 : 1];
  return WT_OK;
}

static int check_shapes(const wt_graph *g, int w, int a, int b, int64_t in, int64_t out, int64_t *r) {
  const wt_value *va = &g->values[a], *vb = &g->values[b], *vw = &g->values[w];
  size_t wsize = vw->dtype == WT_FLOAT16 ? 2 : 4;
  if (va->dtype != WT_FLOAT || vb->dtype != WT_FLOAT || (vw->dtype != WT_FLOAT && vw->dtype != WT_FLOAT16) || va->rank != 2 ||
      vb->rank != 2 || va->dims[1] != in || vb->dims[0] != out || va->dims[0] != vb->dims[1] ||
      va->nbytes != sizeof(float) * (size_t)(va->dims[0] * in) ||
      vb->nbytes != sizeof(float) * (size_t)(out * va->dims[0]) ||
      vw->nbytes != wsize * (size_t)(in * out))
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: adapters '%s' and '%s' do not fit weight '%s' (%lld inputs, "
                     "%lld outputs): expected float [rank, %lld] and [%lld, rank]", va->name, vb->name,
                     vw->name, (long long)in, (long long)out, (long long)in, (long long)out);
  *r = va->dims[0];
  return WT_OK;
}

int wt_lora_merge(wt_graph *g) {
  int found = 0, n0 = g->n_values, marked = wt_graph_lora_marked(g);
  for (int a = 0; a < n0; a++) {
    int w, b, oi;
    float s;
    int64_t in, out, r;
    int rc = adapter_of(g, a, marked, &w, &b, &s);
    if (rc < 0) continue;
    WT_TRY(rc);
    WT_TRY(find_base(g, a, &w, &oi, &in, &out));
    WT_TRY(check_shapes(g, w, a, b, in, out, &r));
    const float *pa = g->values[a].data, *pb = g->values[b].data;
    int half = g->values[w].dtype == WT_FLOAT16; /* a float16 base stays float16 (rounded once) */
    for (int64_t o = 0; o < out; o++)
      for (int64_t i = 0; i < in; i++) {
        double d = 0;
        for (int64_t k = 0; k < r; k++) d += (double)pb[o * r + k] * pa[k * in + i];
        int64_t at = oi ? o * in + i : i * out + o;
        if (half) {
          uint16_t *x = (uint16_t *)g->values[w].data + at;
          *x = wt_f32_to_f16((float)((double)wt_f16_to_f32(*x) + (double)s * d));
        } else {
          float *x = (float *)g->values[w].data + at;
          *x = (float)((double)*x + (double)s * d);
        }
      }
    /* y = Add(y0, Mul(delta, scale)) -> Identity(y0) */
    int sv = -1;
    char name[1024];
    snprintf(name, sizeof name, "%.*s.lora_scale", (int)(strlen(g->values[a].name) - (sizeof SUF_A - 1)),
             g->values[a].name);
    sv = wt_graph_find(g, name);
    for (int i = 0; i < g->n_nodes; i++) {
      wt_node *n = &g->nodes[i];
      if (n->domain[0] || strcmp(n->op_type, "Add") || n->n_inputs != 2 || n->inputs[1] < 0) continue;
      int p = g->values[n->inputs[1]].producer;
      if (p < 0 || strcmp(g->nodes[p].op_type, "Mul") || g->nodes[p].n_inputs != 2 || g->nodes[p].inputs[1] != sv)
        continue;
      WT_TRY(wt_node_set_op(g, i, "Identity", ""));
      g->nodes[i].n_inputs = 1;
    }
    found++;
  }
  if (!found)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: the model has no LoRA adapters (no initializer marked or "
                     "named as an adapter, '<weight>.lora_A'); generate the artifacts with the lora option");
  WT_TRY(wt_graph_toposort(g));
  return wt_graph_prune(g);
}

void wt_lora_params_free(wt_const_tensor *p, int n) {
  for (int i = 0; p && i < n; i++) {
    free(p[i].name);
    free(p[i].t.data);
  }
  free(p);
}

static int take_param(const wt_value *v, wt_const_tensor *t) {
  t->name = wt_strdup(v->name);
  t->t.dtype = v->dtype;
  t->t.rank = v->rank;
  memcpy(t->t.dims, v->dims, sizeof(int64_t) * (size_t)v->rank);
  t->t.data = malloc(v->nbytes ? v->nbytes : 1);
  if (!t->name || !t->t.data) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(t->t.data, v->data, v->nbytes);
  return WT_OK;
}

int wt_lora_adapter_model(wt_graph *g, wt_const_tensor **params, int *n_params) {
  *params = NULL;
  *n_params = 0;
  int n0 = g->n_values, cap = 0;
  for (int a = 0; a < n0; a++) cap += 2 * (g->values[a].flags & WT_VALUE_INITIALIZER ? 1 : 0);
  wt_const_tensor *p = calloc((size_t)cap + 1, sizeof *p);
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  int n = 0, rc = WT_OK, marked = wt_graph_lora_marked(g);
  for (int a = 0; a < n0 && rc == WT_OK; a++) {
    int w, b, oi;
    float s;
    int64_t in, out, r;
    int k = adapter_of(g, a, marked, &w, &b, &s);
    if (k < 0) continue;
    if ((rc = k) || (rc = find_base(g, a, &w, &oi, &in, &out)) || (rc = check_shapes(g, w, a, b, in, out, &r)))
      break;
    if ((rc = take_param(&g->values[a], &p[n++])) || (rc = take_param(&g->values[b], &p[n++]))) break;
    /* plain inputs, the rank symbolic: ONNX Runtime's LoraAdapter feeds them, and zero-rank
     * tensors ([0, in], [out, 0]) give the base model */
    for (int q = 0; q < 2 && rc == WT_OK; q++) {
      int v = q ? b : a;
      wt_value *val = &g->values[v];
      int64_t dims[2] = {val->dims[0], val->dims[1]};
      dims[q] = -1;
      val->flags &= ~(uint32_t)WT_VALUE_INITIALIZER;
      wt_graph_release(g, val->data);
      val->data = NULL;
      val->nbytes = 0;
      if ((rc = wt_value_set_shape(g, v, 2, dims)) || (rc = wt_value_set_dim_param(g, v, q, "lora_rank"))) break;
      rc = wt_graph_add_input(g, v);
    }
  }
  if (rc == WT_OK && n == 0)
    rc = wt_errorf(WT_ERR_INVALID_ARG, "lora: the model has no LoRA adapters (no initializer marked or "
                   "named as an adapter, '<weight>.lora_A'); generate the artifacts with the lora option");
  /* the branches' values had the trained rank in their shapes: now it is the input's */
  for (int v = 0; v < g->n_values && rc == WT_OK; v++)
    if (g->values[v].producer >= 0 && strstr(g->values[v].name, ".lora_") &&
        !(g->values[v].flags & WT_VALUE_GRAPH_OUTPUT))
      rc = wt_value_set_shape(g, v, -1, NULL);
  if (rc) {
    wt_lora_params_free(p, n);
    return rc;
  }
  *params = p;
  *n_params = n;
  return WT_OK;
}
