/* The shape pass (see shape.h): node inference and constant folding.
 *
 * Storage of a value is one of: a graph input (the caller's buffer), an initializer (the
 * graph's bytes), a folded constant (owned by the pass, computed once here: Constant nodes,
 * Shape/Size of known shapes, any node whose inputs are all known), or the output of a step
 * left to run, possibly a view of its input (Reshape-like ops). Folding is eager for nodes
 * whose inputs are all known and lazy for small values an op asks for later (wt_shape_value):
 * Range(0, Cast(n)) folds Cast only when Range wants n. */
#include "shape/shape.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"

/* With stand-ins for symbolic dims, a node is folded only when its outputs and scratch are at
 * most this many bytes: what shapes need (Shape, Range(0, seq), ...) is small; a [batch, seq]
 * mask or a transposed weight is not, and is left as a step. */
#define STAND_IN_FOLD_BYTES ((uint64_t)1 << 16)

/* The params of ops that keep none: run may still read its struct, which must then be zeros. */
static _Alignas(16) const unsigned char no_params[WT_PARAMS_MAX];

int wt_node_error(int rc, const wt_node *n, int opset) {
  return wt_error_context(rc, "%s (%s, opset %d)", wt_node_label(n),
                          n->domain[0] ? n->domain : "ai.onnx", opset);
}

void wt_shape_step_release(wt_shape_step *st, const void *params_block) {
  free(st->out);
  if (st->params != no_params && !params_block) free(st->params);
}

void wt_shape_pass_release(wt_shape_pass *sp) {
  for (int s = 0; s < sp->n_steps; s++) wt_shape_step_release(wt_shape_step_at(sp, s), sp->params_block);
  free(sp->steps);
  for (int i = 0; i < sp->n_statics; i++) free(sp->statics[i]);
  free(sp->statics);
  free(sp->vals);
  free(sp->storage);
  free(sp->keyed);
  memset(sp, 0, sizeof *sp);
}

static int value_input_index(const wt_graph *g, int v) {
  for (int k = 0; k < g->n_inputs; k++)
    if (g->inputs[k] == v) return k;
  return -1;
}

static int fold_node(wt_shape_pass *sp, wt_shape_step *st, wt_tensor *in, wt_tensor *out);

/* The descriptions (and data pointers, where known) of a walked step's inputs and outputs;
 * omitted inputs are WT_UNDEFINED, omitted outputs have no data yet. */
static void step_io(const wt_shape_pass *sp, const wt_shape_step *st, wt_tensor *in, wt_tensor *out) {
  const wt_node *n = st->node;
  for (int i = 0; i < st->n_in; i++) {
    int v = n->inputs[i];
    if (v >= 0) in[i] = sp->vals[v];
    else in[i] = (wt_tensor){.dtype = WT_UNDEFINED};
  }
  for (int o = 0; o < st->n_out; o++) {
    int v = n->outputs[o];
    if (v >= 0) out[o] = sp->vals[v];
    else out[o] = st->out[o];
  }
}

/* wt_shape_value; depth bounds a chain of steps folded lazily. */
static const wt_tensor *value_of(wt_shape_pass *sp, int v, int depth) {
  switch (sp->storage[v]) {
    case WT_ST_INIT:
      return wt_value_unloaded(&sp->g->values[v]) ? NULL : &sp->vals[v]; /* by reference: no bytes */
    case WT_ST_STATIC:
      return &sp->vals[v];
    case WT_ST_INPUT: {
      int k = value_input_index(sp->g, v);
      if (k < 0 || !sp->inputs[k].data) return NULL;
      sp->keyed[k] = 1;
      sp->vals[v].data = sp->inputs[k].data;
      return &sp->vals[v];
    }
    case WT_ST_ARENA:
    case WT_ST_VIEW: {
      if (depth > 16 || wt_numel(&sp->vals[v]) > 4096) return NULL;
      int s = sp->n_steps - 1;
      while (s >= 0) {
        const wt_node *n = wt_shape_step_at(sp, s)->node;
        int hit = 0;
        for (int o = 0; o < n->n_outputs; o++) hit |= n->outputs[o] == v;
        if (hit) break;
        s--;
      }
      if (s < 0) return NULL;
      const wt_node *n = wt_shape_step_at(sp, s)->node;
      for (int j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] >= 0 && !value_of(sp, n->inputs[j], depth + 1)) return NULL;
      /* Folding earlier steps may have moved this one: find it again. */
      for (s = 0; s < sp->n_steps && wt_shape_step_at(sp, s)->node != n; s++) {}
      if (s == sp->n_steps) return NULL;
      wt_shape_step *st = wt_shape_step_at(sp, s);
      wt_tensor *io = calloc((size_t)(n->n_inputs + n->n_outputs) + 1, sizeof *io);
      if (io) step_io(sp, st, io, io + n->n_inputs);
      int rc = io ? fold_node(sp, st, io, io + n->n_inputs) : WT_ERR_NO_MEMORY;
      free(io);
      if (rc != WT_OK) return NULL;
      wt_shape_step_release(st, sp->params_block);
      memmove(st, wt_shape_step_at(sp, s + 1), sp->step_size * (size_t)(sp->n_steps - s - 1));
      sp->n_steps--;
      return &sp->vals[v];
    }
    default:
      return NULL;
  }
}

const wt_tensor *wt_shape_value(wt_shape_pass *sp, int v) { return value_of(sp, v, 0); }

/* wt_infer_value for the node being inferred (wt_infer_ctx.value). */
typedef struct node_ref {
  wt_shape_pass *sp;
  const wt_node *node;
} node_ref;

static const wt_tensor *input_value(void *user, int i) {
  node_ref *r = user;
  int v = r->node->inputs[i];
  return v < 0 ? NULL : value_of(r->sp, v, 0);
}

static int add_static(wt_shape_pass *sp, void *buf) {
  void **s = realloc(sp->statics, sizeof *s * (size_t)(sp->n_statics + 1));
  if (!s) {
    free(buf);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  sp->statics = s;
  s[sp->n_statics++] = buf;
  return WT_OK;
}

/* True when every reader of value v reads float16 itself at that input (its CPU kernel's
 * half_inputs) or reads only its shape, and v is no graph output: a Cast from float16 to float
 * producing v can leave the float16 bytes as they are. */
static int read_as_half(const wt_graph *g, int v) {
  if (g->values[v].flags & WT_VALUE_GRAPH_OUTPUT) return 0;
  int readers = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != v) continue;
      const wt_op_def *op = wt_op_find(n->domain, n->op_type);
      const wt_cpu_kernel *kn = op ? wt_cpu_kernel_find(op) : NULL;
      if (!kn || (k < 32 && !(kn->half_inputs >> k & 1u) && !(op->flags & WT_OP_SHAPE_ONLY))) return 0;
      if (k >= 32) return 0;
      readers++;
    }
  }
  return readers > 0;
}

/* float16 reaches only the inputs whose op reads it (half_inputs), a Cast, or an op of shapes. */
static int check_half_inputs(const wt_graph *g, const wt_node *n, const wt_op_def *op,
                             const wt_cpu_kernel *kn, const wt_tensor *in, int opset) {
  if (op->flags & (WT_OP_WIDEN | WT_OP_SHAPE_ONLY)) return WT_OK;
  for (int i = 0; i < n->n_inputs; i++) {
    int v = n->inputs[i];
    if (v < 0 || in[i].dtype != WT_FLOAT16) continue;
    /* at a half input, only what a skipped Cast to float left (a float16 weight read as float) */
    int p = g->values[v].producer;
    const wt_op_def *by = p >= 0 && p < g->n_nodes ? wt_op_find(g->nodes[p].domain, g->nodes[p].op_type) : NULL;
    if (i < 32 && (kn->half_inputs >> i & 1u) && by && (by->flags & WT_OP_WIDEN)) continue;
    return wt_node_error(wt_errorf(WT_ERR_SHAPE, "input %d '%s' is float16, which %s does not read: "
                                   "webtrain holds float16 only as weights read through a Cast to float "
                                   "by MatMul (A, B), Gemm (A, B), Gather (data) and Conv (W); convert "
                                   "the model's float16 tensors to float32", i, g->values[v].name,
                                   n->op_type),
                         n, opset);
  }
  return WT_OK;
}

/* Infers one node; fills step (params, shapes). Sets *foldable when its outputs can be computed now. */
static int infer_node(wt_shape_pass *sp, const wt_node *n, wt_shape_step *st, wt_tensor *in,
                      wt_tensor *out, int *foldable) {
  const wt_graph *g = sp->g;
  int opset = (int)wt_graph_opset(g, n->domain);
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  if (!op)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s: op %s (domain %s, opset %d) is not supported by "
                     "webtrain", wt_node_label(n), n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                     opset);
  if (n->n_inputs < op->min_inputs || n->n_inputs > op->max_inputs ||
      n->n_outputs < op->min_outputs || n->n_outputs > op->max_outputs)
    return wt_node_error(wt_errorf(WT_ERR_INVALID_ARG, "has %d inputs and %d outputs; expected "
                                   "%d..%d inputs and %d..%d outputs", n->n_inputs, n->n_outputs,
                                   op->min_inputs, op->max_inputs, op->min_outputs, op->max_outputs),
                         n, opset);
  if (n->n_inputs > UINT16_MAX || n->n_outputs > UINT16_MAX)
    return wt_node_error(wt_errorf(WT_ERR_UNSUPPORTED, "has %d inputs and %d outputs; at most %d each are "
                                   "supported", n->n_inputs, n->n_outputs, UINT16_MAX), n, opset);
  const wt_cpu_kernel *kn = wt_cpu_kernel_find(op);
  if (!kn)
    return wt_node_error(wt_errorf(WT_ERR_INTERNAL, "the cpu backend has no kernel for this op"), n,
                         opset);
  st->op = op;
  st->kernel = kn;
  st->node = n;
  st->n_in = (uint16_t)n->n_inputs;
  st->n_out = (uint16_t)n->n_outputs;
  int all_known = 1, big = 0;
  for (int i = 0; i < n->n_inputs; i++) {
    int v = n->inputs[i];
    if (v < 0) continue;
    if (sp->storage[v] == WT_ST_NONE)
      return wt_node_error(wt_errorf(WT_ERR_INTERNAL, "input '%s' has no producer", g->values[v].name),
                           n, opset);
    in[i] = sp->vals[v];
    in[i].data = NULL;
    if (sp->storage[v] != WT_ST_INIT && sp->storage[v] != WT_ST_STATIC) all_known = 0;
    if (wt_value_unloaded(&g->values[v])) all_known = 0; /* held by reference: cannot be folded */
  }
  /* Outputs start as declared (value_info), so ops whose output shape the inputs cannot
   * determine (MaxPoolGrad's dX: 28 and 29 both pool to 14) can read it; every op's infer
   * then sets its outputs. */
  for (int i = 0; i < n->n_outputs; i++) {
    int v = n->outputs[i];
    if (v < 0 || g->values[v].rank < 0 || g->values[v].rank > WT_MAX_RANK) continue;
    out[i].dtype = g->values[v].dtype;
    out[i].rank = g->values[v].rank;
    if (out[i].rank > 0) memcpy(out[i].dims, g->values[v].dims, sizeof *out[i].dims * (size_t)out[i].rank);
  }
  WT_TRY(check_half_inputs(g, n, op, kn, in, opset));
  node_ref ref = {sp, n};
  _Alignas(16) unsigned char params[WT_PARAMS_MAX] = {0};
  wt_infer_ctx ic = {.node = n, .opset = opset, .n_in = st->n_in, .in = in, .n_out = st->n_out,
                     .op = op,
                     .out = out, .params = params, .value = input_value, .value_user = &ref,
                     .exec = sp->exec};
  int rc = op->infer(&ic);
  if (rc) return wt_node_error(rc, n, opset);
  size_t scratch_bytes = kn->scratch ? kn->scratch(&ic) : 0;
  /* A float16 frozen weight's Cast to float whose readers widen it themselves: a view. */
  int widened = (op->flags & WT_OP_WIDEN) && n->n_outputs == 1 && n->outputs[0] >= 0 &&
                in[0].dtype == WT_FLOAT16 && out[0].dtype == WT_FLOAT && read_as_half(g, n->outputs[0]);
  if (widened) out[0].dtype = WT_FLOAT16;
  for (size_t i = ic.params_bytes; i < WT_PARAMS_MAX; i++)
    if (params[i])
      return wt_node_error(wt_errorf(WT_ERR_INTERNAL, "infer wrote params past the %zu bytes it took "
                                     "with WT_PARAMS", ic.params_bytes), n, opset);
  st->params = (void *)no_params;
  if (ic.params_bytes) {
    st->params = aligned_alloc(16, (ic.params_bytes + 15) / 16 * 16);
    if (!st->params) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    memcpy(st->params, params, ic.params_bytes);
    st->params_bytes = (uint16_t)ic.params_bytes;
  }
  for (int i = 0; i < n->n_outputs; i++) {
    const wt_tensor *o = &out[i];
    if (n->outputs[i] < 0) continue;
    if (!wt_dtype_supported(o->dtype) || o->rank < 0 || o->rank > WT_MAX_RANK)
      return wt_node_error(wt_errorf(WT_ERR_INTERNAL, "output %d was not inferred", i), n, opset);
    int64_t numel = 1, max_elems = sp->stand_ins ? WT_MAX_ELEMS_STAND_IN : WT_MAX_ELEMS;
    for (int d = 0; d < o->rank; d++) {
      /* zero dims count as 1 here: a huge dim beside a zero one still overflows strides */
      int64_t x = o->dims[d] ? o->dims[d] : 1;
      if (o->dims[d] < 0 || numel > max_elems / x)
        return wt_node_error(wt_errorf(WT_ERR_SHAPE, "output '%s' would have an invalid or too "
                                       "large shape", g->values[n->outputs[i]].name), n, opset);
      numel *= x;
    }
    /* The bytes must fit this build's address space (wasm32: 32-bit size_t, a 4 GiB heap);
     * stand-in sizes are nobody's: checked when real ones arrive. */
    uint64_t bytes = (uint64_t)wt_shape_numel(o->rank, o->dims) * wt_dtype_size(o->dtype);
    if (sp->stand_ins) {
      if (bytes > STAND_IN_FOLD_BYTES) big = 1;
    } else if (bytes > (uint64_t)(SIZE_MAX / 2)) {
      char shape[160];
      return wt_node_error(wt_errorf(WT_ERR_NO_MEMORY, "output '%s' (%s %s) would need %llu bytes: more "
                                     "than this build can address (%llu MiB); use a smaller batch or input",
                                     g->values[n->outputs[i]].name, wt_dtype_name(o->dtype),
                                     wt_shape_str(o->rank, o->dims, shape, sizeof shape),
                                     (unsigned long long)bytes, (unsigned long long)(SIZE_MAX / 2 >> 20)),
                           n, opset);
    }
  }
  st->scratch_bytes = scratch_bytes;
  st->view = ((op->flags & WT_OP_VIEW) || widened) && n->n_inputs > 0 && n->inputs[0] >= 0 &&
             n->n_outputs > 0 && n->outputs[0] >= 0;
  if (sp->stand_ins && scratch_bytes > STAND_IN_FOLD_BYTES) big = 1;
  *foldable = !widened && ((all_known && !big) || (op->flags & WT_OP_SHAPE_ONLY));
  return WT_OK;
}

/* Runs a node now (constant folding) into pass-owned buffers. */
static int fold_node(wt_shape_pass *sp, wt_shape_step *st, wt_tensor *in, wt_tensor *out) {
  const wt_node *n = st->node;
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0) in[i].data = sp->vals[n->inputs[i]].data;
  for (int i = 0; i < n->n_outputs; i++) {
    int v = n->outputs[i];
    size_t nb = wt_nbytes(&out[i]);
    void *buf = calloc(nb ? nb : 1, 1);
    if (!buf) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory folding constants");
    WT_TRY(add_static(sp, buf));
    out[i].data = buf;
    if (v >= 0) {
      sp->vals[v] = out[i];
      sp->storage[v] = WT_ST_STATIC;
    }
  }
  void *scratch = NULL;
  if (st->scratch_bytes) {
    scratch = aligned_alloc(64, (st->scratch_bytes + 63) / 64 * 64);
    if (!scratch) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory folding constants");
  }
  wt_run_ctx rc = {.node = n, .params = st->params, .n_in = st->n_in, .in = in,
                   .n_out = st->n_out, .out = out, .scratch = scratch};
  /* Run holding the pool, as a plan's run does (runtime/plan_run.c). */
  int r;
  struct wt_pool *pool = sp->exec ? sp->exec->pool : NULL;
  if (wt_pool_hold(pool) == 0) {
    r = st->kernel->run(&rc);
    wt_pool_release(pool);
  } else {
    r = wt_errorf(WT_ERR_NO_MEMORY, "out of memory starting the thread pool");
  }
  free(scratch);
  if (r) return wt_node_error(r, n, (int)wt_graph_opset(sp->g, n->domain));
  return WT_OK;
}

/* An omitted optional output (ConvGrad's dX of a first layer ...) is still written by kernels
 * that do not skip it: the step keeps its description (the caller gives it room). */
static int keep_omitted(wt_shape_step *st, const wt_tensor *out) {
  int any = 0;
  for (int o = 0; o < st->n_out; o++) any |= st->node->outputs[o] < 0;
  if (!any) return WT_OK;
  st->out = malloc(sizeof *st->out * (size_t)st->n_out);
  if (!st->out) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(st->out, out, sizeof *st->out * (size_t)st->n_out);
  return WT_OK;
}

int wt_shape_pass_begin(wt_shape_pass *sp, const wt_graph *g, const wt_tensor *inputs,
                        size_t step_size) {
  memset(sp, 0, sizeof *sp);
  WT_TRY(wt_graph_check_ops(g));
  WT_TRY(wt_check_inputs(g, g->n_inputs, inputs));
  sp->g = g;
  sp->inputs = inputs;
  sp->step_size = step_size;
  sp->vals = calloc((size_t)g->n_values + 1, sizeof *sp->vals);
  sp->storage = calloc((size_t)g->n_values + 1, 1);
  sp->steps = calloc((size_t)g->n_nodes + 1, step_size);
  sp->keyed = calloc((size_t)g->n_inputs + 1, 1);
  if (!sp->vals || !sp->storage || !sp->steps || !sp->keyed) {
    wt_shape_pass_release(sp);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  for (int v = 0; v < g->n_values; v++) {
    const wt_value *val = &g->values[v];
    if (!(val->flags & WT_VALUE_INITIALIZER)) continue;
    sp->storage[v] = WT_ST_INIT;
    sp->vals[v].dtype = val->dtype;
    sp->vals[v].rank = val->rank;
    if (val->rank > 0) memcpy(sp->vals[v].dims, val->dims, sizeof *val->dims * (size_t)val->rank);
    sp->vals[v].data = val->data;
  }
  for (int k = 0; k < g->n_inputs; k++) {
    int v = g->inputs[k];
    sp->storage[v] = WT_ST_INPUT;
    sp->vals[v] = inputs[k];
    sp->vals[v].data = NULL;
  }
  return WT_OK;
}

int wt_shape_pass_walk(wt_shape_pass *sp) {
  const wt_graph *g = sp->g;
  wt_tensor *io = NULL; /* a node's inputs' and outputs' descriptions */
  int io_cap = 0, rc = WT_OK;
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    /* Built outside sp->steps: inferring it may fold (and so remove) earlier steps. */
    wt_shape_step st = {0};
    int foldable = 0, need = n->n_inputs + n->n_outputs + 2;
    if (need > io_cap) {
      free(io);
      io_cap = need > 2 * io_cap ? need : 2 * io_cap;
      io = malloc(sizeof *io * (size_t)io_cap);
      if (!io) {
        rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
        break;
      }
    }
    wt_tensor *in = io, *out = io + n->n_inputs + 1;
    memset(io, 0, sizeof *io * (size_t)need);
    rc = infer_node(sp, n, &st, in, out, &foldable);
    if (rc == WT_OK && foldable) rc = fold_node(sp, &st, in, out);
    if (rc == WT_OK && !foldable) rc = keep_omitted(&st, out);
    if (rc || foldable) {
      wt_shape_step_release(&st, NULL);
      if (rc) break;
      continue;
    }
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o];
      if (v < 0) continue;
      sp->vals[v] = out[o];
      sp->vals[v].data = NULL;
      sp->storage[v] = (o == 0 && st.view) ? WT_ST_VIEW : WT_ST_ARENA;
    }
    wt_shape_step *slot = wt_shape_step_at(sp, sp->n_steps++);
    memset(slot, 0, sp->step_size); /* the caller's fields too: a folded step may have left some */
    *slot = st;
  }
  free(io);
  if (rc) return rc;
  /* give back the room of the nodes folded away */
  void *fit = realloc(sp->steps, sp->step_size * (size_t)(sp->n_steps + 1));
  if (fit) sp->steps = fit;
  return WT_OK;
}
