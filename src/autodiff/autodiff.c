/* Reverse-mode autodiff (see autodiff.h): pass 1 marks, pass 2 emits, fan-out is summed. */
#include "autodiff/autodiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad/grad.h"
#include "base/status.h"
#include "ops/op.h"

typedef struct parts {
  int *v;
  int n, cap;
} parts;

static int parts_add(parts *p, int v) {
  if (p->n == p->cap) {
    int nc = p->cap ? p->cap * 2 : 2;
    int *nv = realloc(p->v, sizeof(int) * (size_t)nc);
    if (!nv) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    p->v = nv;
    p->cap = nc;
  }
  p->v[p->n++] = v;
  return WT_OK;
}

/* Gives value v's gradient one value: the single contribution, or their Sum. */
static int settle(wt_grad_ctx *c, parts *p) {
  if (p->n <= 1) return p->n ? p->v[0] : -1;
  int s = wt_grad_op1(c, "Sum", "", p->n, p->v);
  if (s < 0) return -1;
  p->v[0] = s;
  p->n = 1;
  return s;
}

static int is_float(const wt_graph *g, int v) { return v >= 0 && g->values[v].dtype == WT_FLOAT; }

/* Gives the gradient of a parameter its own value, named "<param>_grad" as ONNX Runtime names it
 * (or with a suffix when the model already has a value of that name: the name is internal, the
 * accumulator's buffer and output are what carry the parameter's name outward). An Identity (a
 * view at run time) gives the name without renaming a value that may also be another value's
 * gradient. Returns the value, or -1 with the error set. */
static int name_param_grad(wt_grad_ctx *c, int param, int grad) {
  char name[512];
  snprintf(name, sizeof name, "%s_grad", c->g->values[param].name);
  int out = wt_graph_fresh_value(c->g, name);
  if (out < 0) return -1;
  char node_name[560];
  snprintf(node_name, sizeof node_name, "%s_Identity", c->g->values[out].name);
  if (wt_graph_add_node(c->g, "Identity", "", node_name, 1, &grad, 1, &out) < 0) return -1;
  return out;
}

int wt_autodiff(wt_graph *g, int loss, int n_params, const int *params, int *grads) {
  int nv0 = g->n_values, nn0 = g->n_nodes;
  int rc = WT_OK, counter = 0;
  wt_grad_ctx c = {.g = g, .opset = (int)wt_graph_opset(g, ""), .counter = &counter};
  unsigned char *requires = calloc((size_t)nv0 + 1, 1);
  unsigned char *useful = calloc((size_t)nv0 + 1, 1);
  parts *gparts = calloc((size_t)nv0 + 1, sizeof *gparts);
  if (!requires || !useful || !gparts) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  if (loss < 0 || loss >= nv0 || g->values[loss].dtype != WT_FLOAT) {
    rc = wt_errorf(WT_ERR_INVALID_ARG, "the loss must be a float value of the graph");
    goto out;
  }
  /* Pass 1a: what depends on a parameter (through float values). */
  for (int i = 0; i < n_params; i++) {
    grads[i] = -1;
    if (is_float(g, params[i])) requires[params[i]] = 1;
  }
  for (int n = 0; n < nn0; n++) {
    const wt_node *nd = &g->nodes[n];
    int any = 0;
    for (int k = 0; k < nd->n_inputs; k++)
      if (nd->inputs[k] >= 0 && requires[nd->inputs[k]]) any = 1;
    if (!any) continue;
    for (int k = 0; k < nd->n_outputs; k++)
      if (is_float(g, nd->outputs[k])) requires[nd->outputs[k]] = 1;
  }
  /* Pass 1b: what the loss depends on. */
  useful[loss] = 1;
  for (int n = nn0 - 1; n >= 0; n--) {
    const wt_node *nd = &g->nodes[n];
    int any = 0;
    for (int k = 0; k < nd->n_outputs; k++)
      if (nd->outputs[k] >= 0 && useful[nd->outputs[k]]) any = 1;
    if (!any) continue;
    for (int k = 0; k < nd->n_inputs; k++)
      if (nd->inputs[k] >= 0) useful[nd->inputs[k]] = 1;
  }
  if (!requires[loss]) goto name_grads; /* the loss depends on no parameter */

  /* Every node on a path from a parameter to the loss needs a rule: name all that lack one. */
  {
    char msg[1024];
    size_t used = 0;
    int missing = 0;
    for (int n = 0; n < nn0; n++) {
      const wt_node *nd = &g->nodes[n];
      int on_path_out = 0, on_path_in = 0;
      for (int k = 0; k < nd->n_outputs; k++)
        if (nd->outputs[k] >= 0 && requires[nd->outputs[k]] && useful[nd->outputs[k]]) on_path_out = 1;
      for (int k = 0; k < nd->n_inputs; k++)
        if (nd->inputs[k] >= 0 && requires[nd->inputs[k]] && useful[nd->inputs[k]]) on_path_in = 1;
      const wt_op_def *op = wt_op_find(nd->domain, nd->op_type);
      if (!on_path_out || !on_path_in || (op && op->grad)) continue;
      if (used < sizeof msg - 128)
        used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s (node '%s'%s%s)",
                                 missing ? ", " : "", nd->op_type, nd->name,
                                 op && op->no_grad ? ": " : "", op && op->no_grad ? op->no_grad : "");
      missing++;
    }
    if (missing) {
      rc = wt_errorf(WT_ERR_UNSUPPORTED, "webtrain has no gradient yet for %d node%s between the parameters "
                     "and the loss: %s", missing, missing > 1 ? "s" : "", msg);
      goto out;
    }
  }
  /* Seed: d loss / d loss = 1, shaped like the loss. */
  {
    c.node = g->values[loss].producer >= 0 ? g->values[loss].producer : 0;
    int seed;
    if (g->values[loss].rank == 0) {
      seed = wt_grad_const_f32(&c, 1.0f);
    } else {
      int shape = wt_grad_op1(&c, "Shape", "", 1, &loss);
      seed = wt_grad_op1(&c, "ConstantOfShape", "", 1, &shape);
      if (seed >= 0) {
        wt_attr *a = wt_node_add_attr(g, wt_grad_last(&c), "value", WT_ATTR_TENSOR);
        if (a && (a->t = calloc(1, sizeof *a->t)) && (a->t->t.data = malloc(4))) {
          a->t->name = wt_strdup("");
          a->t->t.dtype = WT_FLOAT;
          a->t->t.rank = 1;
          a->t->t.dims[0] = 1;
          *(float *)a->t->t.data = 1.0f;
        } else {
          wt_grad_fail(&c, WT_ERR_NO_MEMORY, "out of memory");
        }
      }
    }
    if (c.rc) {
      rc = c.rc;
      goto out;
    }
    WT_TRY(parts_add(&gparts[loss], seed));
  }
  /* Pass 2: reverse walk over the forward nodes. */
  for (int n = nn0 - 1; n >= 0; n--) {
    const wt_node *nd = &g->nodes[n];
    int go[64], gi[64];
    unsigned char need[64];
    int any_go = 0, any_need = 0;
    if (nd->n_inputs > 64 || nd->n_outputs > 64) continue;
    c.node = n;
    for (int k = 0; k < nd->n_outputs; k++) {
      int v = nd->outputs[k];
      go[k] = v >= 0 && gparts[v].n ? settle(&c, &gparts[v]) : -1;
      nd = &g->nodes[n];
      if (go[k] >= 0) any_go = 1;
    }
    for (int k = 0; k < nd->n_inputs; k++) {
      int v = nd->inputs[k];
      need[k] = v >= 0 && requires[v] && useful[v];
      gi[k] = -1;
      if (need[k]) any_need = 1;
    }
    if (c.rc) {
      rc = c.rc;
      goto out;
    }
    if (!any_go || !any_need) continue;
    const wt_op_def *op = wt_op_find(nd->domain, nd->op_type);
    if (!op || !op->grad) {
      int k = 0;
      while (!need[k]) k++;
      rc = wt_errorf(WT_ERR_UNSUPPORTED, "%s: webtrain has no gradient for op %s (domain %s) yet; "
                     "the gradient toward its input '%s' is needed by the loss", wt_node_label(nd),
                     nd->op_type, nd->domain[0] ? nd->domain : "ai.onnx", g->values[nd->inputs[k]].name);
      goto out;
    }
    c.go = go;
    c.n_go = nd->n_outputs;
    c.gi = gi;
    c.need = need;
    c.op = op;
    rc = op->grad(&c);
    if (rc == WT_OK) rc = c.rc;
    nd = &g->nodes[n];
    if (rc) {
      rc = wt_error_context(rc, "gradient of %s", wt_node_label(nd));
      goto out;
    }
    for (int k = 0; k < nd->n_inputs; k++) {
      if (!need[k]) continue;
      if (gi[k] < 0) {
        rc = wt_errorf(WT_ERR_UNSUPPORTED, "gradient of %s: no gradient toward input %d ('%s'), which "
                       "the loss needs", wt_node_label(nd), k, g->values[nd->inputs[k]].name);
        goto out;
      }
      WT_TRY(parts_add(&gparts[nd->inputs[k]], gi[k]));
    }
  }
name_grads:
  for (int i = 0; i < n_params; i++) {
    int p = params[i];
    if (p < 0 || p >= nv0 || !gparts[p].n) continue;
    c.node = 0;
    int gv = settle(&c, &gparts[p]);
    if (c.rc || gv < 0) {
      rc = c.rc ? c.rc : wt_errorf(WT_ERR_INTERNAL, "no gradient value");
      goto out;
    }
    if ((grads[i] = name_param_grad(&c, p, gv)) < 0) {
      rc = WT_ERR_NO_MEMORY;
      goto out;
    }
  }
out:
  if (gparts)
    for (int v = 0; v < nv0; v++) free(gparts[v].v);
  free(gparts);
  free(requires);
  free(useful);
  return rc;
}
