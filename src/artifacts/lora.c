/* LoRA at artifact generation: for each targeted weight W of a MatMul or Gemm, two trainable
 * adapters W.lora_A [rank, in] (Kaiming-uniform, a = sqrt(5), as PEFT) and W.lora_B
 * [out, rank] (zeros), marked as such (ir.h WT_VALUE_LORA_A / _B), and every node using W computes x·W + (x·Aᵀ·Bᵀ)·(alpha/rank) with plain
 * ONNX ops (Transpose, MatMul or Gemm, Mul, Add), so the training and eval models stay plain
 * ONNX. The base weights are frozen (frozen parameters of the checkpoint, or, held by reference
 * in external data, initializers of the models as without LoRA); the adapters and the caller's
 * requires_grad are trained. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "artifacts/node_match.h"
#include "base/status.h"
#include "io/onnx_io.h"

/* How node n uses its input `operand` as a matrix: 1 when the node sees it as [out, in]
 * (W·x), 0 as [in, out] (x·W), -1 when that input is no MatMul/Gemm matrix operand. */
static int node_view(const wt_node *n, int operand) {
  if (wt_is_onnx_op(n, "MatMul") && operand <= 1) return operand == 0;
  if (wt_is_onnx_op(n, "Gemm") && operand == 1) return wt_attr_int(n, "transB", 0) != 0;
  if (wt_is_onnx_op(n, "Gemm") && operand == 0) return wt_attr_int(n, "transA", 0) == 0;
  return -1;
}

int wt_lora_operand_view(const wt_node *n, int operand) { return node_view(n, operand); }

static int graph_output(const wt_graph *g, int v) { return (g->values[v].flags & WT_VALUE_GRAPH_OUTPUT) != 0; }

static const char *node_label(const wt_node *n) { return n->name && n->name[0] ? n->name : n->op_type; }

/* A Cast to float of a float16 value (a half-precision weight read as float). */
static int is_widen(const wt_graph *g, const wt_node *n) {
  return wt_is_onnx_op(n, "Cast") && n->n_inputs == 1 && n->n_outputs == 1 && n->outputs[0] >= 0 &&
         g->values[n->inputs[0]].dtype == WT_FLOAT16 && wt_attr_int(n, "to", 0) == WT_FLOAT;
}

typedef struct uses_of {
  const char *name;               /* the weight's, for messages */
  int seen, n;                    /* the orientation so far (-1: none), the uses found */
  int *uses;                      /* (node, operand) pairs, or NULL */
} uses_of;

/* The readers of v (the weight, or what a Cast to float or a 2-D Transpose made of it: `flip`
 * when transposed): MatMul/Gemm operands are recorded; a Shape reads no values. */
static int visit(const wt_graph *g, int v, int flip, int depth, const wt_node *via, uses_of *u) {
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *nd = &g->nodes[i];
    for (int k = 0; k < nd->n_inputs; k++) {
      if (nd->inputs[k] != v || wt_is_onnx_op(nd, "Shape")) continue;
      int view = node_view(nd, k);
      if (view < 0 && depth < 2 && k == 0 && (wt_is_matrix_swap(nd) || is_widen(g, nd)) && !graph_output(g, nd->outputs[0])) {
        /* W -> Transpose (the consumers see Wᵀ) or Cast to float -> MatMul/Gemm */
        WT_TRY(visit(g, nd->outputs[0], flip ^ wt_is_matrix_swap(nd), depth + 1, nd, u));
        continue;
      }
      if (view < 0 && via)
        return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' is %s by '%s' and then read by %s node '%s' "
                         "(input %d), which is not a MatMul/Gemm matrix operand; LoRA adapts weights that only "
                         "MatMul/Gemm multiply by (directly, through a Transpose or a Cast): remove it from "
                         "lora.targets", u->name, wt_is_matrix_swap(via) ? "transposed" : "cast", node_label(via),
                         nd->op_type, node_label(nd), k);
      if (view < 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' is input %d of %s node '%s', which is not a "
                         "MatMul/Gemm matrix operand; LoRA adapts weights that only MatMul/Gemm multiply by "
                         "(directly, through a Transpose or a Cast): remove it from lora.targets", u->name, k,
                         nd->op_type, node_label(nd));
      view ^= flip;
      if (u->seen >= 0 && view != u->seen)
        return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' is multiplied as [in, out] by one node and as "
                         "[out, in] by another, so one adapter B·A cannot follow both; remove it from "
                         "lora.targets", u->name);
      u->seen = view;
      if (u->uses) u->uses[2 * u->n] = i, u->uses[2 * u->n + 1] = k;
      u->n++;
    }
  }
  return WT_OK;
}

/* Every use of weight w: storage orientation *oi (1: w is [out, in], PyTorch's Linear layout;
 * 0: [in, out]) and the sizes. With `uses`, the (node, operand) pairs that multiply by w, by its
 * transpose or by its float cast are stored there (room for 2 * the nodes' input count). With
 * `none`: *none = 1 and WT_OK when w has no matmul use at all (a bias matched by a substring). */
static int weight_layout(const wt_graph *g, int w, int *none, int *oi, int64_t *in, int64_t *out,
                         int *uses, int *n_uses) {
  const char *name = g->values[w].name;
  uses_of u = {.name = name, .seen = -1, .uses = uses};
  int any = 0; /* a MatMul/Gemm (or Transpose, Cast) reads it at all */
  for (int i = 0; i < g->n_nodes && !any; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == w &&
          (node_view(&g->nodes[i], k) >= 0 || wt_is_matrix_swap(&g->nodes[i]) || is_widen(g, &g->nodes[i])))
        any = 1;
  if (none) *none = !any;
  if (none && !any) return WT_OK;
  WT_TRY(visit(g, w, 0, 0, NULL, &u));
  if (u.n == 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' is read by no MatMul or Gemm node; "
                     "remove it from lora.targets", name);
  if (g->values[w].rank != 2)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' has rank %d; LoRA adapts 2-D MatMul/Gemm "
                     "weights: remove it from lora.targets", name, g->values[w].rank);
  if (graph_output(g, w))
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' is also a graph output; remove it from "
                     "lora.targets", name);
  *oi = u.seen;
  *in = g->values[w].dims[u.seen ? 1 : 0];
  *out = g->values[w].dims[u.seen ? 0 : 1];
  if (n_uses) *n_uses = u.n;
  return WT_OK;
}

int wt_lora_weight_layout(const wt_graph *g, int w, int *oi, int64_t *in, int64_t *out) {
  return weight_layout(g, w, 0, oi, in, out, NULL, NULL);
}

int wt_lora_is_matmul_weight(const wt_graph *g, int v) {
  const wt_value *val = &g->values[v];
  if (!(val->flags & WT_VALUE_INITIALIZER) || (val->dtype != WT_FLOAT && val->dtype != WT_FLOAT16)) return 0;
  int none = 1, oi;
  int64_t in, out;
  int rc = weight_layout(g, v, &none, &oi, &in, &out, NULL, NULL);
  if (rc) wt_error_clear();
  return rc != WT_OK || !none;
}

/* ---- the rewrite -------------------------------------------------------------------------- */

/* splitmix64: the seeded stream A is drawn from */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Adapter `mark` (WT_VALUE_LORA_A / _B: what later steps and exports know it by) of weight base. */
static int add_param(wt_graph *g, const char *base, const char *suffix, uint8_t mark, int64_t d0,
                     int64_t d1, int *out) {
  char name[1024];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  if (wt_graph_find(g, name) >= 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora: the model already has a value named '%s', the name of "
                     "the adapter of weight '%s'; rename that value or remove the weight from lora.targets",
                     name, base);
  int v = wt_graph_add_value(g, name);
  if (v < 0) return WT_ERR_NO_MEMORY;
  size_t nb = sizeof(float) * (size_t)d0 * (size_t)d1;
  wt_value *val = &g->values[v];
  val->dtype = WT_FLOAT;
  val->data = calloc(1, nb ? nb : 1);
  if (!val->data) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  val->nbytes = nb;
  val->flags |= WT_VALUE_INITIALIZER | mark;
  WT_TRY(wt_value_set_shape(g, v, 2, (const int64_t[]){d0, d1}));
  *out = v;
  return WT_OK;
}

/* A new value named after `base` with `suffix` (made unique) and one node producing it. */
static int node1(wt_graph *g, const char *op, const char *base, const char *suffix, int n_in,
                 const int *ins, int *node) {
  char name[1024];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  int v = wt_graph_fresh_value(g, name);
  if (v < 0) return -1;
  *node = wt_graph_add_node(g, op, "", name, n_in, ins, 1, &v);
  return *node < 0 ? -1 : v;
}

#define MK(var, op, suffix, n, ...)                                                     \
  do {                                                                                 \
    if ((var = node1(g, op, wname, suffix, n, (const int[]){__VA_ARGS__}, &nd)) < 0)   \
      return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");                             \
  } while (0)

/* Node `ni` reads weight (or its transpose) as input `k`: y = node(...) + s·delta. */
static int add_branch(wt_graph *g, const char *wname, int ni, int k, int a, int b, int scale, int u) {
  int nd, t1, t2, at, bt, delta, y0;
  const wt_node *n = &g->nodes[ni];
  int x = n->inputs[1 - k], y = n->outputs[0];
  if (wt_is_onnx_op(n, "MatMul")) {
    if (k == 1) { /* x·W + x·Aᵀ·Bᵀ */
      MK(at, "Transpose", ".lora_At", 1, a);
      MK(bt, "Transpose", ".lora_Bt", 1, b);
      MK(t1, "MatMul", ".lora_xA", 2, x, at);
      MK(t2, "MatMul", ".lora_xAB", 2, t1, bt);
    } else { /* W·x + B·A·x */
      MK(t1, "MatMul", ".lora_Ax", 2, a, x);
      MK(t2, "MatMul", ".lora_BAx", 2, b, t1);
    }
  } else { /* Gemm: alpha·op(x)·op(W) (+ beta·C) gains alpha·op(x)·Aᵀ·Bᵀ, or alpha·B·A·op(x) */
    int64_t ta = wt_attr_int(n, "transA", 0), tb = wt_attr_int(n, "transB", 0);
    float alpha = wt_attr_float(n, "alpha", 1.0f);
    if (k == 1) {
      MK(t1, "Gemm", ".lora_xA", 2, x, a);
      if (wt_node_set_int(g, nd, "transA", ta) || wt_node_set_int(g, nd, "transB", 1)) return WT_ERR_NO_MEMORY;
      MK(t2, "Gemm", ".lora_xAB", 2, t1, b);
      if (wt_node_set_int(g, nd, "transB", 1) || wt_node_set_float(g, nd, "alpha", alpha)) return WT_ERR_NO_MEMORY;
    } else {
      MK(t1, "Gemm", ".lora_Ax", 2, a, x);
      if (wt_node_set_int(g, nd, "transB", tb)) return WT_ERR_NO_MEMORY;
      MK(t2, "Gemm", ".lora_BAx", 2, b, t1);
      if (wt_node_set_float(g, nd, "alpha", alpha)) return WT_ERR_NO_MEMORY;
    }
  }
  MK(delta, "Mul", ".lora_delta", 2, t2, scale);
  /* the node now writes y0; the Add writes y, so readers and graph outputs are unchanged */
  char name[1024];
  snprintf(name, sizeof name, "%s.lora_base", g->values[y].name);
  if ((y0 = wt_graph_fresh_value(g, name)) < 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  g->nodes[ni].outputs[0] = y0;
  if (u == 0) snprintf(name, sizeof name, "%s.lora_add", wname); /* lora_export.c finds the first by name */
  else snprintf(name, sizeof name, "%s.lora_add_%d", wname, u);
  if (wt_graph_add_node(g, "Add", "", name, 2, (const int[]){y0, delta}, 1, &y) < 0)
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  return WT_OK;
}
#undef MK

/* Adapters for weight w: parameters, the scale constant, one branch per use. */
static int adapt(wt_graph *g, int w, const wt_lora_opts *lo, uint64_t *rng, int *uses) {
  int oi = 0, n_uses = 0, a = -1, b = -1, nd, scale = -1;
  int64_t in = 0, out = 0, r = lo->rank;
  WT_TRY(weight_layout(g, w, 0, &oi, &in, &out, uses, &n_uses));
  for (int u = 0; u < n_uses; u++)
    for (int v = 0; v < u; v++)
      if (uses[2 * u] == uses[2 * v])
        return wt_errorf(WT_ERR_INVALID_ARG, "lora: weight '%s' is both operands of %s node '%s'; LoRA adapts "
                         "a weight that multiplies an activation: remove it from lora.targets",
                         g->values[w].name, g->nodes[uses[2 * u]].op_type, node_label(&g->nodes[uses[2 * u]]));
  char *wname = wt_strdup(g->values[w].name);
  if (!wname) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  int rc = add_param(g, wname, ".lora_A", WT_VALUE_LORA_A, r, in, &a);
  if (rc == WT_OK) rc = add_param(g, wname, ".lora_B", WT_VALUE_LORA_B, out, r, &b);
  if (rc == WT_OK) {
    /* torch.nn.init.kaiming_uniform_(A, a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound
     * gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in), fan_in = A.size(1) = in */
    float *pa = g->values[a].data, bound = 1.0f / sqrtf((float)in);
    for (int64_t i = 0; i < r * in; i++)
      pa[i] = (float)((double)(next_u64(rng) >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0) * bound;
    char name[1024];
    snprintf(name, sizeof name, "%s.lora_scale", wname);
    int sv = wt_graph_add_value(g, name);
    if (sv < 0) rc = wt_errorf(WT_ERR_INVALID_ARG, "lora: the model already has a value named '%s'; "
                                "rename it or remove '%s' from lora.targets", name, wname);
    else if ((nd = wt_graph_add_node(g, "Constant", "", name, 0, NULL, 1, &sv)) < 0 ||
             wt_node_set_float(g, nd, "value_float", lo->alpha / (float)lo->rank))
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    scale = sv;
  }
  for (int u = 0; u < n_uses && rc == WT_OK; u++) rc = add_branch(g, wname, uses[2 * u], uses[2 * u + 1], a, b, scale, u);
  free(wname);
  return rc;
}

static int listed(const char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return 1;
  return 0;
}

/* The weights the targets select, in initializer order: 1 in sel[v]. */
static int select_targets(wt_graph *g, const wt_lora_opts *lo, unsigned char *sel) {
  int oi;
  int64_t in, out;
  for (int t = 0; t < lo->n_targets; t++) {
    const char *tg = lo->targets[t];
    if (!tg || !tg[0]) return wt_errorf(WT_ERR_INVALID_ARG, "lora.targets[%d] is empty; give a weight name or a part of one", t);
    int hits = 0, skipped = -1;
    for (int v = 0; v < g->n_values; v++) {
      const wt_value *val = &g->values[v];
      if (!(val->flags & WT_VALUE_INITIALIZER)) continue;
      if (lo->exact ? strcmp(val->name, tg) : !strstr(val->name, tg)) continue;
      if (val->dtype != WT_FLOAT && val->dtype != WT_FLOAT16)
        return wt_errorf(WT_ERR_INVALID_ARG, "lora: target '%s' selects weight '%s' of type %s; LoRA adapts "
                         "float (or float16, read through a Cast to float) weights", tg, val->name,
                         wt_dtype_name(val->dtype));
      int none = 0;
      int rc = weight_layout(g, v, lo->exact ? NULL : &none, &oi, &in, &out, NULL, NULL);
      if (rc) return rc;
      if (none) { /* a substring hit that no matmul reads (a bias): skipped */
        skipped = v;
        continue;
      }
      sel[v] = 1;
      hits++;
    }
    if (!hits && skipped >= 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "lora: target '%s' matches no MatMul/Gemm weight (it matches '%s', "
                       "which no MatMul or Gemm multiplies by); name the projection weights to adapt", tg,
                       g->values[skipped].name);
    if (!hits)
      return wt_errorf(WT_ERR_INVALID_ARG, "lora: target '%s' matches no weight of the model; targets are %s of "
                       "initializer names such as '%s'", tg, lo->exact ? "exact" : "parts",
                       g->n_values ? g->values[0].name : "");
  }
  return WT_OK;
}

static int check_opts(const wt_lora_opts *lo) {
  if (lo->rank < 1 || lo->rank > 65536)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora.rank is %lld; give an integer from 1 to 65536 (8 or 16 "
                     "are usual)", (long long)lo->rank);
  if (!(lo->alpha > 0) || !isfinite(lo->alpha))
    return wt_errorf(WT_ERR_INVALID_ARG, "lora.alpha is %g; give a finite number > 0 (the adapters are "
                     "scaled by alpha / rank; alpha = 2 * rank is usual)", (double)lo->alpha);
  if (lo->n_targets <= 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "lora.targets is empty; name the weights to adapt (e.g. "
                     "['q_proj', 'v_proj'])");
  return WT_OK;
}

/* Inserts the adapters and sorts the parameters: requires_grad = the caller's + the adapters;
 * frozen_params = the caller's + every other float initializer (the base) but those held by
 * reference. */
static int rewrite(wt_graph *g, const wt_artifacts_opts *o, wt_artifacts_opts *d, const char ***names) {
  const wt_lora_opts *lo = &o->lora;
  WT_TRY(check_opts(lo));
  int n0 = g->n_values;
  unsigned char *sel = calloc((size_t)n0 + 1, 1);
  size_t slots = 1; /* a use per node input at most */
  for (int i = 0; i < g->n_nodes; i++) slots += (size_t)g->nodes[i].n_inputs;
  int *uses = malloc(sizeof(int) * 2 * slots);
  int rc = sel && uses ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (rc == WT_OK) rc = select_targets(g, lo, sel);
  for (int i = 0; i < o->n_requires_grad && rc == WT_OK; i++) {
    int v = wt_graph_find(g, o->requires_grad[i]);
    if (v >= 0 && v < n0 && sel[v])
      rc = wt_errorf(WT_ERR_INVALID_ARG, "'%s' is listed in requires_grad and is a LoRA target, whose base "
                     "stays frozen; remove it from one of them", o->requires_grad[i]);
  }
  uint64_t rng = lo->seed;
  for (int v = 0; v < n0 && rc == WT_OK; v++)
    if (sel[v]) rc = adapt(g, v, lo, &rng, uses);
  free(uses);
  if (rc == WT_OK) rc = wt_graph_toposort(g);
  /* the name lists point into the graph's values (their names no longer change) */
  int cap = o->n_requires_grad + o->n_frozen_params + g->n_values + 1;
  const char **l = rc ? NULL : malloc(sizeof(char *) * (size_t)cap);
  if (!rc && !l) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (rc) {
    free(sel);
    return rc;
  }
  int n_tr = 0, n_fr = 0;
  const char **tr = l, **fr;
  for (int i = 0; i < o->n_requires_grad; i++) tr[n_tr++] = o->requires_grad[i];
  for (int v = n0; v < g->n_values; v++)
    if (g->values[v].flags & WT_VALUE_INITIALIZER) tr[n_tr++] = g->values[v].name;
  fr = tr + n_tr;
  for (int i = 0; i < o->n_frozen_params; i++) fr[n_fr++] = o->frozen_params[i];
  /* a base held by reference (external data, not read) stays there: initializers of the
   * models that Module.create reads into the heap once (frozen parameters would be read into
   * the checkpoint here: a second copy of the base). Not when they become float16: that reads
   * them, and the checkpoint then holds them once. */
  int by_ref = o->frozen_dtype != WT_FLOAT16;
  for (int v = 0; v < n0; v++) {
    const wt_value *val = &g->values[v];
    if ((val->flags & WT_VALUE_INITIALIZER) && val->dtype == WT_FLOAT && !(by_ref && wt_value_unloaded(val)) &&
        !listed(tr, n_tr, val->name) && !listed(o->frozen_params, o->n_frozen_params, val->name))
      fr[n_fr++] = val->name;
  }
  free(sel);
  *d = *o;
  memset(&d->lora, 0, sizeof d->lora);
  d->requires_grad = tr;
  d->n_requires_grad = n_tr;
  d->frozen_params = fr;
  d->n_frozen_params = n_fr;
  *names = l;
  return WT_OK;
}

int wt_artifacts_lora(wt_graph *g, const wt_artifacts_opts *o, wt_artifacts_opts *d, char ***owned) {
  const char **names = NULL;
  *owned = NULL;
  WT_TRY(rewrite(g, o, d, &names));
  /* the names point into g's values, which later steps prune: copies, NULL-terminated */
  int n = d->n_requires_grad + d->n_frozen_params;
  char **copy = calloc((size_t)n + 1, sizeof *copy);
  int rc = copy ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int i = 0; rc == WT_OK && i < n; i++)
    if (!(copy[i] = wt_strdup(names[i]))) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  free(names);
  if (rc) {
    wt_artifacts_lora_free(copy);
    return rc;
  }
  d->requires_grad = (const char *const *)copy;
  d->frozen_params = (const char *const *)copy + d->n_requires_grad;
  *owned = copy;
  return WT_OK;
}

void wt_artifacts_lora_free(char **owned) {
  for (char **p = owned; p && *p; p++) free(*p);
  free(owned);
}
