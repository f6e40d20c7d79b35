/* Loss blocks appended to the forward graph, as ONNX Runtime's onnxblock builds them
 * (onnxblock/loss/loss.py): MSELoss, CrossEntropyLoss, BCEWithLogitsLoss (the numerically
 * stable form), L1Loss, loss=None, or a custom loss the caller built into the graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/status.h"

typedef struct lb {
  wt_graph *g;
  int count;
  int rc;
  int reuse_targets;            /* a target input of the same name is shared (loss blocks) */
} lb;

static int fresh(lb *b, const char *what) {
  char name[256];
  snprintf(name, sizeof name, "loss/%s_%d", what, b->count++);
  int v = wt_graph_fresh_value(b->g, name);
  if (v < 0 && !b->rc) b->rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  return v;
}

/* One node with one fresh output; returns the output (or -1 after an error). */
static int op(lb *b, const char *type, int n_in, const int *ins) {
  if (b->rc) return -1;
  int out = fresh(b, type);
  if (out < 0) return -1;
  char name[256];
  snprintf(name, sizeof name, "%s_node", b->g->values[out].name);
  if (wt_graph_add_node(b->g, type, "", name, n_in, ins, 1, &out) < 0) {
    if (!b->rc) b->rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    return -1;
  }
  return out;
}

static int last_node(lb *b) { return b->g->n_nodes - 1; }

static int const_f32(lb *b, const char *what, const float *v, int64_t n, int scalar) {
  if (b->rc) return -1;
  int c = fresh(b, what);
  if (c < 0) return -1;
  wt_value *val = &b->g->values[c];
  val->data = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (!val->data) return b->rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), -1;
  memcpy(val->data, v, sizeof(float) * (size_t)n);
  val->nbytes = sizeof(float) * (size_t)n;
  val->dtype = WT_FLOAT;
  val->flags |= WT_VALUE_INITIALIZER;
  int64_t d0 = n;
  if ((b->rc = wt_value_set_shape(b->g, c, scalar ? 0 : 1, &d0))) return -1;
  return c;
}

/* A target input shaped like `like` (dims and symbols), or without axis `drop` (>= 0). */
static int target_input(lb *b, const char *name, int dtype, int like, int drop) {
  if (b->rc) return -1;
  int existing = wt_graph_find(b->g, name);
  if (existing >= 0 && (b->g->values[existing].flags & WT_VALUE_GRAPH_INPUT) && b->reuse_targets) return existing;
  if (existing >= 0) {
    b->rc = wt_errorf(WT_ERR_INVALID_ARG, "the loss needs an input named '%s', but the model "
                      "already has a value of that name", name);
    return -1;
  }
  int t = wt_graph_add_value(b->g, name);
  if (t < 0) return b->rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), -1;
  if ((b->rc = wt_value_copy_type(b->g, t, b->g, like, drop))) return -1;
  b->g->values[t].dtype = dtype;
  if ((b->rc = wt_graph_add_input(b->g, t))) return -1;
  return t;
}

static int reduce(lb *b, int x, const char *reduction) {
  if (!strcmp(reduction, "none")) return x;
  int r = op(b, !strcmp(reduction, "sum") ? "ReduceSum" : "ReduceMean", 1, &x);
  if (r >= 0 && (b->rc = wt_node_set_int(b->g, last_node(b), "keepdims", 0))) return -1;
  return r;
}

static int mse_or_l1(lb *b, int x, const char *target, const char *reduction, int l1) {
  int t = target_input(b, target, WT_FLOAT, x, -1);
  int d = op(b, "Sub", 2, (int[]){x, t});
  int e;
  if (l1) {
    e = op(b, "Abs", 1, &d);
  } else {
    float two = 2.0f;
    e = op(b, "Pow", 2, (int[]){d, const_f32(b, "two", &two, 1, 1)});
  }
  return reduce(b, e, reduction);
}

static int cross_entropy(lb *b, int x, const char *target, const wt_loss_opts *o) {
  int labels = target_input(b, target, WT_INT32, x, 1);
  int ins[3] = {x, labels, -1};
  int n_in = 2;
  if (o->weight) {
    ins[2] = const_f32(b, "weight", o->weight, o->n_weight, 0);
    n_in = 3;
  }
  if (b->rc) return -1;
  int loss = fresh(b, "ce_loss"), log_prob = fresh(b, "log_prob");
  if (b->rc) return -1;
  int node = wt_graph_add_node(b->g, "SoftmaxCrossEntropyLoss", "", "loss/SoftmaxCrossEntropyLoss",
                               n_in, ins, 2, (int[]){loss, log_prob});
  if (node < 0) return b->rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory"), -1;
  if ((b->rc = wt_node_set_string(b->g, node, "reduction", o->reduction))) return -1;
  if (o->has_ignore_index && (b->rc = wt_node_set_int(b->g, node, "ignore_index", o->ignore_index))) return -1;
  return loss;
}

/* max(x,0) - x*t + log(1 + exp(-|x|)), with pos_weight p:
 * (1-t)*x + (1 + (p-1)*t) * (log(1 + exp(-|x|)) + max(-x, 0)). */
static int bce_with_logits(lb *b, int x, const char *target, const wt_loss_opts *o) {
  int t = target_input(b, target, WT_FLOAT, x, -1);
  int ax = op(b, "Abs", 1, &x);
  int nax = op(b, "Neg", 1, &ax);
  int sp = op(b, "Softplus", 1, &nax);
  int e;
  if (o->pos_weight) {
    float one = 1.0f;
    int c1 = const_f32(b, "one", &one, 1, 1);
    int pw = const_f32(b, "pos_weight", o->pos_weight, o->n_pos_weight, 0);
    int omt = op(b, "Sub", 2, (int[]){c1, t});
    int a = op(b, "Mul", 2, (int[]){omt, x});
    int pm1 = op(b, "Sub", 2, (int[]){pw, c1});
    int lw = op(b, "Add", 2, (int[]){c1, op(b, "Mul", 2, (int[]){pm1, t})});
    int nx = op(b, "Neg", 1, &x);
    int tail = op(b, "Add", 2, (int[]){sp, op(b, "Relu", 1, &nx)});
    e = op(b, "Add", 2, (int[]){a, op(b, "Mul", 2, (int[]){lw, tail})});
  } else {
    int rx = op(b, "Relu", 1, &x);
    int xt = op(b, "Mul", 2, (int[]){x, t});
    e = op(b, "Add", 2, (int[]){op(b, "Sub", 2, (int[]){rx, xt}), sp});
  }
  if (o->weight) e = op(b, "Mul", 2, (int[]){e, const_f32(b, "weight", o->weight, o->n_weight, 0)});
  return reduce(b, e, o->reduction);
}

/* One built-in loss on value x; target NULL: ONNX Runtime's name ("labels" for
 * CrossEntropyLoss, "target" otherwise). */
static int builtin_loss(lb *b, int type, int x, const char *target, const wt_loss_opts *o, int *loss) {
  const wt_graph *g = b->g;
  if (g->values[x].dtype != WT_FLOAT || g->values[x].rank < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "the loss input '%s' must be a float tensor of known rank",
                     g->values[x].name);
  if (!target) target = type == WT_LOSS_TYPE_CE ? "labels" : "target";
  switch (type) {
    case WT_LOSS_TYPE_MSE: *loss = mse_or_l1(b, x, target, o->reduction, 0); break;
    case WT_LOSS_TYPE_L1: *loss = mse_or_l1(b, x, target, o->reduction, 1); break;
    case WT_LOSS_TYPE_CE:
      if (g->values[x].rank < 2)
        return wt_errorf(WT_ERR_INVALID_ARG, "CrossEntropyLoss needs scores of rank >= 2 ([N, C, ...]); "
                         "'%s' has rank %d", g->values[x].name, g->values[x].rank);
      *loss = cross_entropy(b, x, target, o);
      break;
    case WT_LOSS_TYPE_BCE: *loss = bce_with_logits(b, x, target, o); break;
    default: return wt_errorf(WT_ERR_INVALID_ARG, "unknown loss type %d", type);
  }
  return b->rc;
}

int wt_artifacts_loss_block(wt_graph *g, int type, const char *input, const char *target,
                            const wt_loss_opts *o, int *loss_value) {
  lb b = {.g = g, .reuse_targets = 1};
  wt_loss_opts dflt = *o;
  if (!dflt.reduction) dflt.reduction = "mean";
  if (strcmp(dflt.reduction, "mean") && strcmp(dflt.reduction, "sum") && strcmp(dflt.reduction, "none"))
    return wt_errorf(WT_ERR_INVALID_ARG, "loss reduction '%s': expected mean, sum or none", dflt.reduction);
  int x = wt_graph_find(g, input);
  if (x < 0) return wt_errorf(WT_ERR_INVALID_ARG, "loss input '%s' is not a value of the model", input);
  return builtin_loss(&b, type, x, target, &dflt, loss_value);
}

int wt_artifacts_add_loss(wt_graph *g, const wt_artifacts_opts *o, int *loss_value) {
  lb b = {.g = g};
  const wt_loss_opts *lo = &o->loss;
  wt_loss_opts dflt = *lo;
  if (!dflt.reduction) dflt.reduction = "mean";
  if (strcmp(dflt.reduction, "mean") && strcmp(dflt.reduction, "sum") && strcmp(dflt.reduction, "none"))
    return wt_errorf(WT_ERR_INVALID_ARG, "loss reduction '%s': expected mean, sum or none", dflt.reduction);
  /* Which model outputs feed the loss. */
  int inputs[64], n = 0;
  if (o->n_loss_inputs > 0) {
    for (int i = 0; i < o->n_loss_inputs && n < 64; i++) {
      int v = wt_graph_find(g, o->loss_input_names[i]);
      if (v < 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "loss_input_names: '%s' is not a value of the model",
                         o->loss_input_names[i]);
      inputs[n++] = v;
    }
  } else {
    for (int i = 0; i < g->n_outputs && n < 64; i++) inputs[n++] = g->outputs[i];
  }
  if (n == 0) return wt_errorf(WT_ERR_INVALID_ARG, "the model has no output to compute a loss from");
  int loss;
  if (lo->custom_value) {
    loss = wt_graph_find(g, lo->custom_value);
    if (loss < 0 || g->values[loss].dtype != WT_FLOAT)
      return wt_errorf(WT_ERR_INVALID_ARG, "custom loss: '%s' is not a float value of the graph", lo->custom_value);
  } else if (lo->type == WT_LOSS_TYPE_NONE) {
    loss = inputs[0];
    const wt_value *lv = &g->values[loss];
    int scalar = lv->rank >= 0;
    for (int d = 0; scalar && d < lv->rank; d++) scalar = lv->dims[d] == 1;
    if (lv->dtype != WT_FLOAT || !scalar) {
      char shape[160];
      wt_value_shape_str(lv, shape, sizeof shape);
      return wt_errorf(WT_ERR_INVALID_ARG, "loss=None: the model's output '%s' must be a scalar float loss "
                       "(it is %s %s); give a loss, or reduce it in the model", lv->name,
                       wt_dtype_name(lv->dtype), shape);
    }
  } else {
    if (o->n_loss_inputs > 1)
      return wt_errorf(WT_ERR_INVALID_ARG, "a built-in loss takes one model output; %d loss_input_names "
                       "were given", o->n_loss_inputs);
    WT_TRY(builtin_loss(&b, lo->type, inputs[0], NULL, &dflt, &loss));
  }
  if (b.rc) return b.rc;
  *loss_value = loss;
  return WT_OK;
}
