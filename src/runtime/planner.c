/* Plan building and execution (see planner.h).
 *
 * Storage of a value is one of: a graph input (the caller's buffer, patched at every run), an
 * initializer (the graph's bytes), a folded constant (owned by the plan, computed once while
 * planning: Constant nodes, Shape/Size of known shapes, any node whose inputs are all known),
 * an arena slot (offset fixed at plan time, reused once the value is dead), or a view of its
 * input (Reshape-like ops).
 *
 * Building works on full descriptions of every value (vals); a built plan keeps 8 bytes per
 * value (wt_pval: offset or pointer, and where its shape is in a packed table of the distinct
 * ones), the steps, one block of op params and one of folded constants (compact_values,
 * gather_params), moved down into the room the build freed (settle). */
#include "runtime/planner.h"

/* Upper bound on any value's element count (far beyond a wasm heap; checked before products
 * can overflow). */
#define WT_PLAN_MAX_ELEMS ((int64_t)1 << 40)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/arena_alloc.h"

/* ST_ALIAS: written straight into a graph input's buffer (see alias_accumulators) */
enum storage { ST_NONE, ST_INPUT, ST_INIT, ST_STATIC, ST_ARENA, ST_VIEW, ST_ALIAS };

typedef struct wt_step {
  const wt_op_def *op;
  const wt_node *node;
  wt_tensor *out;                /* NULL, or the outputs' descriptions when some are omitted (no
                                    value holds those): inputs and outputs are the values' own */
  size_t scratch_off, scratch_bytes;
  long omitted_at;               /* where omitted optional outputs start in the scratch; -1: none */
  void *params;                  /* the op's params (see WT_PARAMS): own allocation while the
                                    plan is built, then in the plan's params block */
  uint16_t n_in, n_out;          /* the node's (checked to fit) */
  uint16_t params_bytes;         /* <= WT_PARAMS_MAX */
  uint8_t view;                  /* output 0 shares input 0's buffer */
  uint8_t absorbed;              /* the step before runs it (fuse_steps): skipped */
} wt_step;

/* The params of ops that keep none: run may still read its struct, which must then be zeros. */
static _Alignas(16) const unsigned char no_params[WT_PARAMS_MAX];

/* A value of a built plan: its dtype and shape (an entry of the plan's table of the distinct
 * ones) and where its bytes are. */
typedef struct wt_pval {
  union {
    void *ptr;                   /* the data (inputs, views and aliases: set by each run) */
    size_t off;                  /* ST_ARENA: offset in the arena */
  } at;
  uint32_t type;
} wt_pval;

struct wt_plan {
  const wt_graph *g;
  int n_values;
  wt_tensor *vals;               /* while building: shape, dtype and (once resolved) data of every
                                    value; then compacted into pv and types (compact_values) */
  wt_pval *pv;                   /* .type: where the value's entry starts in types */
  int64_t *types;                /* the distinct (dtype, shape)s of the values, packed: per entry
                                    int32 dtype and rank, then rank dims */
  wt_tensor *outs;               /* the graph outputs' descriptions (data NULL) */
  uint8_t *storage;
  int n_steps;
  wt_step *steps;
  uint8_t *arena;                /* the arena it is bound to (the session's, not owned) */
  size_t arena_bytes;
  size_t live_peak;              /* most arena bytes live at once (arena_bytes less fragmentation) */
  void **statics;                /* while building: the folded constants, one allocation each */
  int n_statics;
  void *static_block;            /* once built: the folded constants a run reads */
  /* what the plan was built for */
  uint8_t *keyed;                /* graph input k's values determine shapes */
  void **keyed_data;
  int *alias;                    /* pairs (value, graph input value) it is written into */
  int n_alias;
  void *params_block;            /* every step's params, once the plan is built */
  int n_fused;                   /* steps run by the step before them (fuse_steps) */
  wt_tensor *io;                 /* a run's inputs and outputs of the current step */
};

typedef struct builder {
  wt_plan *p;
  const wt_tensor *inputs;       /* data NULL when only shapes are being inferred */
  const wt_node *node;           /* node being inferred */
  wt_tensor *io;                 /* its inputs' and outputs' descriptions */
  int io_cap;
} builder;

static int value_input_index(const wt_graph *g, int v) {
  for (int k = 0; k < g->n_inputs; k++)
    if (g->inputs[k] == v) return k;
  return -1;
}

static int fold_node(wt_plan *p, wt_step *st, wt_tensor *in, wt_tensor *out);

/* Frees what a step owns; its params unless they are in the plan's block. */
static void step_release(wt_step *st, const void *params_block) {
  free(st->out);
  if (st->params != no_params && !params_block) free(st->params);
}

/* The descriptions (and data pointers, where known) of a planned step's inputs and outputs;
 * omitted inputs are WT_UNDEFINED, omitted outputs have no data yet. */
static void step_io(const wt_plan *p, const wt_step *st, wt_tensor *in, wt_tensor *out) {
  const wt_node *n = st->node;
  for (int i = 0; i < st->n_in; i++) {
    int v = n->inputs[i];
    if (v >= 0) in[i] = p->vals[v];
    else in[i] = (wt_tensor){.dtype = WT_UNDEFINED};
  }
  for (int o = 0; o < st->n_out; o++) {
    int v = n->outputs[o];
    if (v >= 0) out[o] = p->vals[v];
    else out[o] = st->out[o];
  }
}

/* The value of v before the run, if it can be had: initializers and folded constants; integer
 * graph inputs (the plan is then keyed on their values); or small values computed by steps
 * already planned whose own inputs can be had (Range(0, Cast(n)) ...), which are folded now
 * and leave the plan. NULL otherwise. */
static const wt_tensor *value_of(builder *b, int v, int depth) {
  wt_plan *p = b->p;
  switch (p->storage[v]) {
    case ST_INIT:
    case ST_STATIC:
      return &p->vals[v];
    case ST_INPUT: {
      int k = value_input_index(p->g, v);
      if (k < 0 || !b->inputs[k].data) return NULL;
      p->keyed[k] = 1;
      p->vals[v].data = b->inputs[k].data;
      return &p->vals[v];
    }
    case ST_ARENA:
    case ST_VIEW: {
      if (depth > 16 || wt_numel(&p->vals[v]) > 4096) return NULL;
      int s = p->n_steps - 1;
      while (s >= 0) {
        const wt_node *n = p->steps[s].node;
        int hit = 0;
        for (int o = 0; o < n->n_outputs; o++) hit |= n->outputs[o] == v;
        if (hit) break;
        s--;
      }
      if (s < 0) return NULL;
      const wt_node *n = p->steps[s].node;
      for (int j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] >= 0 && !value_of(b, n->inputs[j], depth + 1)) return NULL;
      /* Folding earlier steps may have moved this one: find it again. */
      for (s = 0; s < p->n_steps && p->steps[s].node != n; s++) {}
      if (s == p->n_steps) return NULL;
      wt_tensor *io = calloc((size_t)(n->n_inputs + n->n_outputs) + 1, sizeof *io);
      if (io) step_io(p, &p->steps[s], io, io + n->n_inputs);
      int rc = io ? fold_node(p, &p->steps[s], io, io + n->n_inputs) : WT_ERR_NO_MEMORY;
      free(io);
      if (rc != WT_OK) return NULL;
      step_release(&p->steps[s], p->params_block);
      memmove(&p->steps[s], &p->steps[s + 1], sizeof *p->steps * (size_t)(p->n_steps - s - 1));
      p->n_steps--;
      return &p->vals[v];
    }
    default:
      return NULL;
  }
}

const wt_tensor *wt_planner_value(void *planner, wt_infer_ctx *ctx, int i) {
  builder *b = planner;
  (void)ctx;
  int v = b->node->inputs[i];
  return v < 0 ? NULL : value_of(b, v, 0);
}

int wt_check_inputs(const wt_graph *g, int n_inputs, const wt_tensor *in) {
  if (n_inputs != g->n_inputs)
    return wt_errorf(WT_ERR_INVALID_ARG, "the model takes %d inputs; %d were given", g->n_inputs,
                     n_inputs);
  /* Symbolic dims with the same name must agree across inputs ("batch"). */
  const char *sym_name[64];
  int64_t sym_value[64];
  int n_sym = 0;
  for (int k = 0; k < n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    char want[256], got[256];
    if (v->flags & WT_VALUE_SEQUENCE)
      return wt_errorf(WT_ERR_UNSUPPORTED, "input '%s' is a sequence of tensors: only optimizer "
                       "models take sequences (load them as an optimizer)", v->name);
    if (!wt_dtype_supported(in[k].dtype))
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has dtype %s; expected %s", v->name,
                       wt_dtype_name(in[k].dtype), wt_dtype_name(v->dtype));
    if (v->dtype && in[k].dtype != v->dtype)
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has dtype %s; expected %s", v->name,
                       wt_dtype_name(in[k].dtype), wt_dtype_name(v->dtype));
    if (in[k].rank < 0 || in[k].rank > WT_MAX_RANK)
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has rank %d; at most %d is supported",
                       v->name, in[k].rank, WT_MAX_RANK);
    for (int d = 0; d < in[k].rank; d++)
      if (in[k].dims[d] < 0)
        return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' has a negative dimension", v->name);
    /* the product bounded, zero dims counted as 1 (a zero does not excuse a huge dim: strides) */
    int64_t numel = 1;
    int ok = 1;
    for (int d = 0; d < in[k].rank && ok; d++) {
      int64_t x = in[k].dims[d] ? in[k].dims[d] : 1;
      ok = numel <= WT_PLAN_MAX_ELEMS / x;
      numel *= x;
    }
    if (!ok) {
      wt_shape_str(in[k].rank, in[k].dims, got, sizeof got);
      return wt_errorf(WT_ERR_SHAPE, "input '%s' has shape %s: more than 2^40 elements", v->name,
                       got);
    }
    if (v->rank < 0) continue;
    int bad = v->rank != in[k].rank;
    for (int d = 0; !bad && d < v->rank; d++) {
      if (v->dims[d] >= 0) {
        bad = v->dims[d] != in[k].dims[d];
      } else if (wt_value_dim_param(v, d)) {
        int s = 0;
        while (s < n_sym && strcmp(sym_name[s], wt_value_dim_param(v, d)) != 0) s++;
        if (s < n_sym) bad = sym_value[s] != in[k].dims[d];
        else if (n_sym < 64) {
          sym_name[n_sym] = wt_value_dim_param(v, d);
          sym_value[n_sym++] = in[k].dims[d];
        }
      }
    }
    if (!bad) continue;
    size_t used = 0;
    used += (size_t)snprintf(want + used, sizeof want - used, "[");
    for (int d = 0; d < v->rank && used < sizeof want; d++) {
      if (v->dims[d] >= 0)
        used += (size_t)snprintf(want + used, sizeof want - used, d ? ",%lld" : "%lld",
                                 (long long)v->dims[d]);
      else
        used += (size_t)snprintf(want + used, sizeof want - used, d ? ",%s" : "%s",
                                 wt_value_dim_param(v, d) ? wt_value_dim_param(v, d) : "?");
    }
    if (used < sizeof want) snprintf(want + used, sizeof want - used, "]");
    wt_shape_str(in[k].rank, in[k].dims, got, sizeof got);
    return wt_errorf(WT_ERR_SHAPE, "input '%s' has shape %s; expected %s", v->name, got, want);
  }
  return WT_OK;
}

static int add_static(wt_plan *p, void *buf) {
  void **s = realloc(p->statics, sizeof *s * (size_t)(p->n_statics + 1));
  if (!s) {
    free(buf);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  p->statics = s;
  s[p->n_statics++] = buf;
  return WT_OK;
}

static int node_error(int rc, const wt_node *n, int opset) {
  return wt_error_context(rc, "%s (%s, opset %d)", wt_node_label(n),
                          n->domain[0] ? n->domain : "ai.onnx", opset);
}

/* Infers one node; fills step (params, shapes). Sets *foldable when its outputs can be computed now. */
static int infer_node(builder *b, const wt_node *n, wt_step *st, wt_tensor *in, wt_tensor *out,
                      int *foldable) {
  wt_plan *p = b->p;
  const wt_graph *g = p->g;
  int opset = (int)wt_graph_opset(g, n->domain);
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  if (!op)
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s: op %s (domain %s, opset %d) is not supported by "
                     "webtrain", wt_node_label(n), n->op_type, n->domain[0] ? n->domain : "ai.onnx",
                     opset);
  if (n->n_inputs < op->min_inputs || n->n_inputs > op->max_inputs ||
      n->n_outputs < op->min_outputs || n->n_outputs > op->max_outputs)
    return node_error(wt_errorf(WT_ERR_INVALID_ARG, "has %d inputs and %d outputs; expected "
                                "%d..%d inputs and %d..%d outputs", n->n_inputs, n->n_outputs,
                                op->min_inputs, op->max_inputs, op->min_outputs, op->max_outputs),
                      n, opset);
  if (n->n_inputs > UINT16_MAX || n->n_outputs > UINT16_MAX)
    return node_error(wt_errorf(WT_ERR_UNSUPPORTED, "has %d inputs and %d outputs; at most %d each are "
                                "supported", n->n_inputs, n->n_outputs, UINT16_MAX), n, opset);
  st->op = op;
  st->node = n;
  st->n_in = (uint16_t)n->n_inputs;
  st->n_out = (uint16_t)n->n_outputs;
  int all_known = 1;
  for (int i = 0; i < n->n_inputs; i++) {
    int v = n->inputs[i];
    if (v < 0) continue;
    if (p->storage[v] == ST_NONE)
      return node_error(wt_errorf(WT_ERR_INTERNAL, "input '%s' has no producer", g->values[v].name),
                        n, opset);
    in[i] = p->vals[v];
    in[i].data = NULL;
    if (p->storage[v] != ST_INIT && p->storage[v] != ST_STATIC) all_known = 0;
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
  b->node = n;
  _Alignas(16) unsigned char params[WT_PARAMS_MAX] = {0};
  wt_infer_ctx ic = {.node = n, .opset = opset, .n_in = st->n_in, .in = in, .n_out = st->n_out,
                     .out = out, .params = params, .planner = b};
  int rc = op->infer(&ic);
  if (rc) return node_error(rc, n, opset);
  for (size_t i = ic.params_bytes; i < WT_PARAMS_MAX; i++)
    if (params[i])
      return node_error(wt_errorf(WT_ERR_INTERNAL, "infer wrote params past the %zu bytes it took "
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
      return node_error(wt_errorf(WT_ERR_INTERNAL, "output %d was not inferred", i), n, opset);
    int64_t numel = 1;
    for (int d = 0; d < o->rank; d++) {
      /* zero dims count as 1 here: a huge dim beside a zero one still overflows strides */
      int64_t x = o->dims[d] ? o->dims[d] : 1;
      if (o->dims[d] < 0 || numel > WT_PLAN_MAX_ELEMS / x)
        return node_error(wt_errorf(WT_ERR_SHAPE, "output '%s' would have an invalid or too "
                                    "large shape", g->values[n->outputs[i]].name), n, opset);
      numel *= x;
    }
    /* The bytes must fit this build's address space (wasm32: 32-bit size_t, a 4 GiB heap). */
    uint64_t bytes = (uint64_t)wt_shape_numel(o->rank, o->dims) * wt_dtype_size(o->dtype);
    if (bytes > (uint64_t)(SIZE_MAX / 2)) {
      char shape[160];
      return node_error(wt_errorf(WT_ERR_NO_MEMORY, "output '%s' (%s %s) would need %llu bytes: more "
                                  "than this build can address (%llu MiB); use a smaller batch or input",
                                  g->values[n->outputs[i]].name, wt_dtype_name(o->dtype),
                                  wt_shape_str(o->rank, o->dims, shape, sizeof shape),
                                  (unsigned long long)bytes, (unsigned long long)(SIZE_MAX / 2 >> 20)),
                        n, opset);
    }
  }
  st->scratch_bytes = ic.scratch_bytes;
  st->view = (op->flags & WT_OP_VIEW) && n->n_inputs > 0 && n->inputs[0] >= 0 &&
             n->n_outputs > 0 && n->outputs[0] >= 0;
  *foldable = all_known || (op->flags & WT_OP_SHAPE_ONLY);
  return WT_OK;
}

/* Runs a node now (constant folding) into plan-owned buffers. */
static int fold_node(wt_plan *p, wt_step *st, wt_tensor *in, wt_tensor *out) {
  const wt_node *n = st->node;
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0) in[i].data = p->vals[n->inputs[i]].data;
  for (int i = 0; i < n->n_outputs; i++) {
    int v = n->outputs[i];
    size_t nb = wt_nbytes(&out[i]);
    void *buf = calloc(nb ? nb : 1, 1);
    if (!buf) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory folding constants");
    WT_TRY(add_static(p, buf));
    out[i].data = buf;
    if (v >= 0) {
      p->vals[v] = out[i];
      p->storage[v] = ST_STATIC;
    }
  }
  void *scratch = NULL;
  if (st->scratch_bytes) {
    scratch = aligned_alloc(64, (st->scratch_bytes + 63) / 64 * 64);
    if (!scratch) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory folding constants");
  }
  wt_run_ctx rc = {.node = n, .params = st->params, .n_in = st->n_in, .in = in,
                   .n_out = st->n_out, .out = out, .scratch = scratch};
  int r = st->op->run(&rc);
  free(scratch);
  if (r) return node_error(r, n, (int)wt_graph_opset(p->g, n->domain));
  return WT_OK;
}

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }
static size_t omitted_bytes(const wt_tensor *t) { return round64(wt_nbytes(t) ? wt_nbytes(t) : 1); }

/* An omitted optional output (ConvGrad's dX of a first layer ...) is still written by kernels
 * that do not skip it: it gets room after the step's scratch, live for that step only. */
static int reserve_omitted(wt_step *st, const wt_tensor *out) {
  size_t at = round64(st->scratch_bytes), end = at;
  for (int o = 0; o < st->n_out; o++) /* an empty one still gets a (valid) address */
    if (st->node->outputs[o] < 0) end += omitted_bytes(&out[o]);
  st->omitted_at = end == at ? -1 : (long)at;
  if (end == at) return WT_OK;
  st->scratch_bytes = end;
  st->out = malloc(sizeof *st->out * (size_t)st->n_out);
  if (!st->out) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  memcpy(st->out, out, sizeof *st->out * (size_t)st->n_out);
  return WT_OK;
}

static uint32_t bytes_hash(const void *b, size_t n) {
  uint32_t h = 2166136261u ^ (uint32_t)n;
  for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)b)[i]) * 16777619u;
  return h;
}

static void count_read(uint8_t *readers, int v, int n) {
  readers[v] = readers[v] > 255 - n ? 255 : (uint8_t)(readers[v] + n);
}

/* How many times each value is read (up to 255: callers ask 0, 1 or more): once per step
 * input, twice for a graph output (the caller reads those too). calloc'd; NULL when out of
 * memory. One byte per value: it is built beside the plan's other arrays. */
static uint8_t *value_readers(const wt_plan *p) {
  uint8_t *readers = calloc((size_t)p->n_values + 1, 1);
  if (!readers) return NULL;
  for (int s = 0; s < p->n_steps; s++)
    for (int i = 0; i < p->steps[s].n_in; i++)
      if (p->steps[s].node->inputs[i] >= 0) count_read(readers, p->steps[s].node->inputs[i], 1);
  for (int k = 0; k < p->g->n_outputs; k++) count_read(readers, p->g->outputs[k], 2);
  return readers;
}

/* Lets a step take over the next one when its op can (wt_op_def.absorb: a Relu as a GEMM's
 * epilogue): the next step must be the only reader of the step's single output, read it as its
 * only input and write one value of the same type. That step is then skipped and its output is a
 * view of the first's. Returns how many steps were absorbed. */
static int fuse_steps(wt_plan *p) {
  int fused = 0;
  uint8_t *readers = value_readers(p);
  if (!readers) return 0; /* an optimization only */
  for (int s = 0; s + 1 < p->n_steps; s++) {
    wt_step *st = &p->steps[s], *nx = NULL;
    if (!st->op->absorb || st->n_out != 1 || st->params == no_params || st->absorbed) continue;
    int v = st->node->outputs[0];
    if (v < 0 || p->storage[v] != ST_ARENA || readers[v] != 1) continue;
    for (int t = s + 1; t < p->n_steps && !nx; t++)
      for (int i = 0; i < p->steps[t].n_in; i++)
        if (p->steps[t].node->inputs[i] == v) nx = &p->steps[t];
    if (!nx || nx->n_in != 1 || nx->n_out != 1 || nx->scratch_bytes || nx->out) continue;
    int w = nx->node->outputs[0];
    if (w < 0 || p->storage[w] != ST_ARENA || p->vals[w].dtype != p->vals[v].dtype ||
        !wt_same_shape(&p->vals[w], &p->vals[v]) || !st->op->absorb(st->params, nx->node))
      continue;
    nx->view = nx->absorbed = 1;
    p->storage[w] = ST_VIEW;
    fused++;
  }
  free(readers);
  return fused;
}

/* Moves every step's params into one block (no allocation per step in a kept plan); steps with
 * the same params (a forward and a backward MatMul of one shape, Transposes, Identities ...)
 * share one copy: run only reads them. */
static void gather_params(wt_plan *p) {
  int ns = p->n_steps;
  size_t cap = 16;
  while (cap < 2 * (size_t)ns) cap *= 2;
  int *first = malloc(sizeof(int) * cap);  /* hash slot -> the step holding those params, -1 */
  int *same = malloc(sizeof(int) * (size_t)(ns + 1)); /* step -> earlier step with equal params, or itself */
  if (!first || !same) goto out;
  for (size_t i = 0; i < cap; i++) first[i] = -1;
  size_t total = 0;
  for (int s = 0; s < ns; s++) {
    const wt_step *st = &p->steps[s];
    same[s] = s;
    if (st->params == no_params) continue;
    size_t i = bytes_hash(st->params, st->params_bytes) & (cap - 1);
    for (; first[i] >= 0; i = (i + 1) & (cap - 1)) {
      const wt_step *o = &p->steps[first[i]];
      if (o->params_bytes == st->params_bytes && !memcmp(o->params, st->params, st->params_bytes)) break;
    }
    if (first[i] >= 0) {
      same[s] = first[i];
    } else {
      first[i] = s;
      total += (st->params_bytes + 15) / 16 * 16;
    }
  }
  unsigned char *block = total ? aligned_alloc(16, total) : NULL;
  if (!block) goto out; /* nothing to gather, or no memory: the steps keep their own */
  size_t at = 0;
  for (int s = 0; s < ns; s++) {
    wt_step *st = &p->steps[s];
    if (st->params == no_params) continue;
    void *own = st->params;
    if (same[s] == s) {
      memcpy(block + at, own, st->params_bytes);
      st->params = block + at;
      at += (st->params_bytes + 15) / 16 * 16;
    } else {
      st->params = p->steps[same[s]].params; /* already in the block */
    }
    free(own);
  }
  p->params_block = block;
out:
  free(first);
  free(same);
}

/* The run's room for one step's input and output descriptions. */
static int size_io(wt_plan *p) {
  int most = 0;
  for (int s = 0; s < p->n_steps; s++)
    if (p->steps[s].n_in + p->steps[s].n_out > most) most = p->steps[s].n_in + p->steps[s].n_out;
  p->io = calloc((size_t)most + 1, sizeof *p->io);
  return p->io ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
}

static void free_steps(wt_step *steps, int n, const void *params_block) {
  for (int i = 0; i < n; i++) step_release(&steps[i], params_block);
  free(steps);
}

void wt_plan_free(wt_plan *p) {
  if (!p) return;
  free_steps(p->steps, p->n_steps, p->params_block);
  free(p->params_block);
  free(p->io);
  for (int i = 0; i < p->n_statics; i++) free(p->statics[i]);
  free(p->statics);
  free(p->static_block);
  free(p->vals);
  free(p->pv);
  free(p->types);
  free(p->outs);
  free(p->storage);
  free(p->alias);
  if (p->keyed_data)
    for (int k = 0; k < p->g->n_inputs; k++) free(p->keyed_data[k]);
  free(p->keyed_data);
  free(p->keyed);
  free(p);
}

static void type_of(const wt_plan *p, int v, wt_tensor *t);

static size_t value_bytes(const wt_plan *p, int v) {
  wt_tensor t;
  type_of(p, v, &t);
  return wt_nbytes(&t);
}

static int find_root(const int *root, int v) {
  while (root[v] != v) v = root[v];
  return v;
}

/* A WT_OP_INPLACE step whose input dies there writes output 0 into that input's buffer: the
 * output joins the input's root (like a view) and extends its life. Steps are taken in order,
 * so a chain of such steps (Add, Relu, ReluGrad ...) shares one buffer. */
static void write_in_place(wt_plan *p, int s, int *root, int *last) {
  const wt_step *st = &p->steps[s];
  int v = st->n_out > 0 ? st->node->outputs[0] : -1;
  if (!(st->op->flags & WT_OP_INPLACE) || v < 0 || root[v] != v || p->storage[v] != ST_ARENA)
    return;
  wt_tensor out_t, in_t, *out = &out_t, *in = &in_t;
  type_of(p, v, out);
  for (int i = 0; i < st->n_in; i++) {
    int u = st->node->inputs[i];
    if (u < 0) continue;
    int r = find_root(root, u);
    type_of(p, u, in);
    if (p->storage[r] != ST_ARENA || last[r] != s || in->dtype != out->dtype ||
        !wt_same_shape(in, out) || value_bytes(p, r) != wt_nbytes(out))
      continue;
    root[v] = r;
    last[r] = last[v] > s ? last[v] : s;
    return;
  }
}

/* Assigns arena offsets: a value lives from the step that writes it to its last reader (graph
 * outputs to the end); views extend their root's life. Scratch lives for its step only. */
static int assign_arena(wt_plan *p) {
  const wt_graph *g = p->g;
  int nv = p->n_values, ns = p->n_steps;
  int rc = WT_OK;
  int *root = malloc(sizeof(int) * (size_t)(nv + 1));
  int *last = malloc(sizeof(int) * (size_t)(nv + 1));
  size_t *off = calloc((size_t)nv + 1, sizeof(size_t));
  /* every buffer's lifetime, for the offline layout (wt_arena_pack) tried after this one */
  wt_arena_item *items = malloc(sizeof *items * (size_t)(nv + ns + 1));
  int *item_key = malloc(sizeof(int) * (size_t)(nv + ns + 1)); /* value, or -1 - step (scratch) */
  int n_items = 0;
  wt_arena_alloc aa;
  wt_arena_alloc_init(&aa);
  if (!root || !last || !off || !items || !item_key) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory planning");
    goto out;
  }
  for (int v = 0; v < nv; v++) {
    root[v] = v;
    last[v] = -1;
  }
  for (int s = 0; s < ns; s++) {
    const wt_step *st = &p->steps[s];
    if (st->view) root[st->node->outputs[0]] = root[st->node->inputs[0]];
    for (int i = 0; i < st->n_in; i++) {
      int v = st->node->inputs[i];
      if (v >= 0) last[root[v]] = s;
    }
  }
  for (int k = 0; k < g->n_outputs; k++) last[root[g->outputs[k]]] = ns;
  for (int s = 0; s < ns; s++) write_in_place(p, s, root, last);
  for (int v = 0; v < nv; v++) root[v] = find_root(root, v);
  for (int s = 0; s < ns; s++) {
    wt_step *st = &p->steps[s];
    for (int i = 0; i < st->n_out; i++) {
      int v = st->node->outputs[i];
      if (v < 0 || root[v] != v || p->storage[v] == ST_ALIAS) continue;
      size_t nb = value_bytes(p, v);
      if (last[v] < 0) last[v] = s; /* unused output: still written by the kernel */
      if (wt_arena_alloc_take(&aa, nb, &off[v])) {
        rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory: the activations at these input shapes pass "
                       "what this build can address (at '%s', %zu bytes); use a smaller batch",
                       g->values[v].name, nb);
        goto out;
      }
      items[n_items] = (wt_arena_item){.size = nb, .first = s, .last = last[v]};
      item_key[n_items++] = v;
    }
    if (st->scratch_bytes && wt_arena_alloc_take(&aa, st->scratch_bytes, &st->scratch_off)) {
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory: %s needs %zu bytes of scratch at these input "
                     "shapes, more than this build can address; use a smaller batch",
                     wt_node_label(st->node), st->scratch_bytes);
      goto out;
    }
    if (st->scratch_bytes) {
      wt_arena_alloc_give(&aa, st->scratch_off, st->scratch_bytes);
      items[n_items] = (wt_arena_item){.size = st->scratch_bytes, .first = s, .last = s};
      item_key[n_items++] = -1 - s;
    }
    /* Free what dies here: inputs read for the last time, and outputs nobody reads. */
    for (int i = 0; i < st->n_in; i++) {
      int v = st->node->inputs[i];
      if (v < 0) continue;
      int r = root[v];
      if (last[r] == s && p->storage[r] == ST_ARENA) {
        wt_arena_alloc_give(&aa, off[r], value_bytes(p, r));
        last[r] = -2; /* given back once */
      }
    }
    for (int i = 0; i < st->n_out; i++) {
      int v = st->node->outputs[i];
      if (v >= 0 && root[v] == v && last[v] == s && p->storage[v] == ST_ARENA) {
        wt_arena_alloc_give(&aa, off[v], value_bytes(p, v));
        last[v] = -2;
      }
    }
  }
  /* The plan does not own its arena: the session binds one (shared by its plans, and by the
   * training and eval sessions of a module) before each run, see wt_plan_bind_arena. */
  p->arena_bytes = aa.high_water;
  p->live_peak = aa.peak_in_use;
  /* The step-order layout above leaves holes (a big value freed early, then smaller ones); the
   * offline greedy-by-size layout usually packs tighter: keep whichever is smaller. */
  size_t packed;
  if (wt_arena_pack(items, n_items, &packed) == 0 && packed < p->arena_bytes) {
    for (int i = 0; i < n_items; i++) {
      if (item_key[i] >= 0) off[item_key[i]] = items[i].off;
      else p->steps[-1 - item_key[i]].scratch_off = items[i].off;
    }
    p->arena_bytes = packed;
  }
  /* The session allocates the arena at run time; a layout no machine this targets could hold
   * (natively 1 TiB; wasm32 stops at half its address space above) fails here, at plan time. */
  if ((uint64_t)p->arena_bytes > ((uint64_t)1 << 40)) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory: the plan needs an arena of %zu bytes (%zu MiB) "
                   "for the activations at these input shapes; use a smaller batch", p->arena_bytes,
                   p->arena_bytes >> 20);
    goto out;
  }
  for (int v = 0; v < nv; v++) /* outputs written in place share their root's offset */
    if (p->storage[v] == ST_ARENA) p->pv[v].at.off = off[root[v]];
out:
  wt_arena_alloc_release(&aa);
  free(root);
  free(last);
  free(off);
  free(items);
  free(item_key);
  return rc;
}

/* Gradient accumulation without temporaries. When its overwrite flag (lazy_reset_grad) is true,
 * InPlaceAccumulatorV2 sets its buffer (a graph input bound to the state's gradient memory) to
 * the gradient, so the step computing the gradient can write it straight into the buffer, and
 * the accumulator's copy vanishes (it skips buffer == value): parameter-sized temporaries leave
 * the arena. Only where the buffer and the gradient (and the views between) have no other
 * reader. The plan is then keyed on the flag: a step that accumulates (flag false) gets its own
 * plan, with the temporaries in the arena. An optimization only: skipped when out of memory. */
static void alias_accumulators(builder *b) {
  wt_plan *p = b->p;
  int nv = p->n_values;
  uint8_t *uses = value_readers(p);
  int *prod = malloc(sizeof(int) * (size_t)(nv + 1));
  int *pairs = malloc(sizeof(int) * 2 * (size_t)(p->n_steps + 1));
  if (!uses || !prod || !pairs) goto out;
  for (int v = 0; v < nv; v++) prod[v] = -1;
  for (int s = 0; s < p->n_steps; s++) {
    const wt_node *n = p->steps[s].node;
    for (int o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0) prod[n->outputs[o]] = s;
  }
  int n_pairs = 0;
  for (int s = 0; s < p->n_steps; s++) {
    const wt_node *n = p->steps[s].node;
    if (strcmp(n->op_type, "InPlaceAccumulatorV2") || strcmp(n->domain, "com.microsoft") || n->n_inputs < 3)
      continue;
    int buf = n->inputs[0], v = n->inputs[1], flag = n->inputs[2];
    if (buf < 0 || v < 0 || flag < 0 || p->storage[buf] != ST_INPUT || uses[buf] != 1) continue;
    int ok = 1; /* back through the views (Identity, Reshape) to the step that writes the bytes */
    while (ok && p->storage[v] == ST_VIEW) {
      ok = uses[v] == 1 && prod[v] >= 0;
      if (ok) v = p->steps[prod[v]].node->inputs[0];
    }
    if (!ok || p->storage[v] != ST_ARENA || uses[v] != 1 || prod[v] < 0 || prod[v] >= s ||
        p->vals[v].dtype != p->vals[buf].dtype || wt_nbytes(&p->vals[v]) != wt_nbytes(&p->vals[buf]))
      continue;
    const wt_tensor *f = value_of(b, flag, 0); /* keys the plan on the flag */
    if (!f || f->dtype != WT_BOOL || wt_numel(f) != 1 || !f->data || !*(const uint8_t *)f->data) continue;
    p->storage[v] = ST_ALIAS;
    pairs[2 * n_pairs] = v;
    pairs[2 * n_pairs + 1] = buf;
    n_pairs++;
  }
  if (n_pairs) {
    p->alias = pairs;
    p->n_alias = n_pairs;
    pairs = NULL;
  }
out:
  free(uses);
  free(prod);
  free(pairs);
}

/* Value v's dtype and shape in a built plan (dims past the rank zero, data NULL). */
static void type_of(const wt_plan *p, int v, wt_tensor *t) {
  const int64_t *e = &p->types[p->pv[v].type];
  int32_t head[2];
  memcpy(head, e, sizeof head);
  t->dtype = head[0];
  t->rank = head[1];
  for (int d = 0; d < WT_MAX_RANK; d++) t->dims[d] = d < head[1] ? e[1 + d] : 0;
  t->data = NULL;
}


/* Once built, a plan keeps per value only an index into a table of the distinct (dtype, shape)s
 * and where its bytes are (an arena offset, or a pointer); the folded constants a run reads move
 * into one block and those only folding read are dropped (their shapes stay). A kept plan then
 * costs a few bytes per value instead of a full description. */
static int compact_values(wt_plan *p) {
  const wt_graph *g = p->g;
  int nv = p->n_values, rc = WT_OK;
  uint32_t cap = 16;
  while (cap < 2u * (uint32_t)nv) cap *= 2;
  uint32_t *slot = calloc(cap, sizeof *slot); /* type index + 1, 0 = empty */
  uint8_t *read = value_readers(p);           /* read by a step or the caller */
  uint32_t n_types = 0, types_cap = 16;        /* grown: distinct types are few */
  wt_tensor *types = malloc(sizeof *types * types_cap);
  p->pv = calloc((size_t)nv + 1, sizeof *p->pv);
  if (!slot || !read || !types || !p->pv) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  for (int v = 0; v < nv; v++) {
    if (p->storage[v] == ST_NONE) continue;
    wt_tensor t; /* zeroed whole, padding too: hashed and compared as bytes */
    memset(&t, 0, sizeof t);
    t.dtype = p->vals[v].dtype;
    t.rank = p->vals[v].rank;
    memcpy(t.dims, p->vals[v].dims, sizeof *t.dims * (size_t)t.rank);
    uint32_t i = bytes_hash(&t, sizeof t) & (cap - 1);
    while (slot[i] && memcmp(&types[slot[i] - 1], &t, sizeof t) != 0) i = (i + 1) & (cap - 1);
    if (!slot[i]) {
      if (n_types == types_cap) {
        wt_tensor *more = realloc(types, sizeof *types * (types_cap *= 2));
        if (!more) {
          rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
          goto out;
        }
        types = more;
      }
      types[n_types] = t;
      slot[i] = ++n_types;
    }
    p->pv[v].type = slot[i] - 1;
  }
  size_t static_bytes = 0;
  int any_static = 0;
  for (int v = 0; v < nv; v++)
    if (p->storage[v] == ST_STATIC && read[v]) {
      static_bytes += (wt_nbytes(&p->vals[v]) + 15) / 16 * 16;
      any_static = 1;
    }
  /* empty constants get an address too (at least 16 bytes) */
  if (any_static && !(p->static_block = aligned_alloc(16, static_bytes ? static_bytes : 16))) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  size_t at = 0;
  for (int v = 0; v < nv; v++) {
    switch (p->storage[v]) {
      case ST_ARENA: /* assign_arena sets the offset */
        break;
      case ST_STATIC:
        if (read[v]) {
          size_t nb = wt_nbytes(&p->vals[v]);
          p->pv[v].at.ptr = (uint8_t *)p->static_block + at;
          if (nb) memcpy(p->pv[v].at.ptr, p->vals[v].data, nb);
          at += (nb + 15) / 16 * 16;
        }
        break;
      case ST_INIT:
        p->pv[v].at.ptr = p->vals[v].data;
        break;
      default:
        break;
    }
  }
  for (int i = 0; i < p->n_statics; i++) free(p->statics[i]);
  free(p->statics);
  p->statics = NULL;
  p->n_statics = 0;
  free(p->vals);
  p->vals = NULL;
  /* packed, and allocated after the build's big arrays are freed, so that they take their room */
  size_t words = 0;
  for (uint32_t t = 0; t < n_types; t++) words += 1 + (size_t)types[t].rank;
  uint32_t *at_word = malloc(sizeof *at_word * (n_types ? n_types : 1));
  p->types = malloc(sizeof *p->types * (words ? words : 1));
  p->outs = calloc((size_t)g->n_outputs + 1, sizeof *p->outs);
  if (!at_word || !p->types || !p->outs || words > UINT32_MAX) {
    free(at_word);
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  words = 0;
  for (uint32_t t = 0; t < n_types; t++) {
    at_word[t] = (uint32_t)words;
    int32_t head[2] = {types[t].dtype, types[t].rank};
    memcpy(&p->types[words], head, sizeof head);
    memcpy(&p->types[words + 1], types[t].dims, sizeof *types[t].dims * (size_t)types[t].rank);
    words += 1 + (size_t)types[t].rank;
  }
  for (int v = 0; v < nv; v++)
    if (p->storage[v] != ST_NONE) p->pv[v].type = at_word[p->pv[v].type];
  free(at_word);
  for (int k = 0; k < g->n_outputs; k++) type_of(p, g->outputs[k], &p->outs[k]);
out:
  free(types);
  free(slot);
  free(read);
  return rc;
}

/* The piece p (n bytes) moved to a lower address when malloc has room there, else p. */
static void *lower(void *p, size_t n, size_t align) {
  if (!p || !n) return p;
  void *q = align > 8 ? aligned_alloc(align, (n + align - 1) / align * align) : malloc(n);
  if (!q) return p;
  if ((uintptr_t)q > (uintptr_t)p) {
    free(q);
    return p;
  }
  memcpy(q, p, n);
  free(p);
  return q;
}

static int in_block(const void *x, const void *block, size_t bytes) {
  return block && (uintptr_t)x >= (uintptr_t)block && (uintptr_t)x - (uintptr_t)block < bytes;
}

/* Building frees big temporaries (vals) below pieces the plan keeps; those move down into the
 * room, so that the kept plan sits low and the arena, allocated next, can start where the
 * temporaries were (a hole under the arena would stay for the module's life). */
static void settle(wt_plan *p) {
  const wt_graph *g = p->g;
  size_t params_bytes = 0, static_bytes = 0;
  for (int s = 0; s < p->n_steps; s++)
    if (in_block(p->steps[s].params, p->params_block, SIZE_MAX)) {
      size_t end = (uintptr_t)p->steps[s].params - (uintptr_t)p->params_block + (p->steps[s].params_bytes + 15) / 16 * 16;
      if (end > params_bytes) params_bytes = end;
    }
  for (int v = 0; v < p->n_values; v++)
    if (p->storage[v] == ST_STATIC && p->pv[v].at.ptr && in_block(p->pv[v].at.ptr, p->static_block, SIZE_MAX)) {
      wt_tensor t;
      type_of(p, v, &t);
      size_t end = (uintptr_t)p->pv[v].at.ptr - (uintptr_t)p->static_block + (wt_nbytes(&t) + 15) / 16 * 16;
      if (end > static_bytes) static_bytes = end;
    }
  p->steps = lower(p->steps, sizeof *p->steps * (size_t)p->n_steps, 8);
  void *old = p->params_block;
  p->params_block = lower(old, params_bytes, 16);
  for (int s = 0; s < p->n_steps && p->params_block != old; s++)
    if (in_block(p->steps[s].params, old, params_bytes))
      p->steps[s].params = (uint8_t *)p->params_block + ((uintptr_t)p->steps[s].params - (uintptr_t)old);
  old = p->static_block;
  p->static_block = lower(old, static_bytes, 16);
  for (int v = 0; v < p->n_values && p->static_block != old; v++)
    if (p->storage[v] == ST_STATIC && in_block(p->pv[v].at.ptr, old, static_bytes))
      p->pv[v].at.ptr = (uint8_t *)p->static_block + ((uintptr_t)p->pv[v].at.ptr - (uintptr_t)old);
  p->pv = lower(p->pv, sizeof *p->pv * (size_t)p->n_values, 8);
  p->storage = lower(p->storage, (size_t)p->n_values, 1);
  p->keyed = lower(p->keyed, (size_t)g->n_inputs, 1);
  p->alias = lower(p->alias, sizeof(int) * 2 * (size_t)p->n_alias, 4);
  int most = 0;
  for (int s = 0; s < p->n_steps; s++)
    if (p->steps[s].n_in + p->steps[s].n_out > most) most = p->steps[s].n_in + p->steps[s].n_out;
  p->io = lower(p->io, sizeof *p->io * (size_t)(most + 1), 8);
}

static int plan_build(const wt_graph *g, const wt_tensor *inputs, int shapes_only, wt_plan **out) {
  *out = NULL;
  WT_TRY(wt_graph_check_ops(g));
  WT_TRY(wt_check_inputs(g, g->n_inputs, inputs));
  wt_plan *p = calloc(1, sizeof *p);
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  p->g = g;
  p->n_values = g->n_values;
  p->vals = calloc((size_t)g->n_values + 1, sizeof *p->vals);
  p->storage = calloc((size_t)g->n_values + 1, 1);
  p->steps = calloc((size_t)g->n_nodes + 1, sizeof *p->steps);
  p->keyed = calloc((size_t)g->n_inputs + 1, 1);
  p->keyed_data = calloc((size_t)g->n_inputs + 1, sizeof(void *));
  builder b = {.p = p, .inputs = inputs};
  int rc = WT_OK;
  if (!p->vals || !p->storage || !p->steps || !p->keyed || !p->keyed_data) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  for (int v = 0; v < g->n_values; v++) {
    const wt_value *val = &g->values[v];
    if (!(val->flags & WT_VALUE_INITIALIZER)) continue;
    p->storage[v] = ST_INIT;
    p->vals[v].dtype = val->dtype;
    p->vals[v].rank = val->rank;
    if (val->rank > 0) memcpy(p->vals[v].dims, val->dims, sizeof *val->dims * (size_t)val->rank);
    p->vals[v].data = val->data;
  }
  for (int k = 0; k < g->n_inputs; k++) {
    int v = g->inputs[k];
    p->storage[v] = ST_INPUT;
    p->vals[v] = inputs[k];
    p->vals[v].data = NULL;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const wt_node *n = &g->nodes[i];
    /* Built outside p->steps: inferring it may fold (and so remove) earlier steps. */
    wt_step st = {0};
    int foldable = 0, need = n->n_inputs + n->n_outputs + 2;
    if (need > b.io_cap) {
      free(b.io);
      b.io_cap = need > 2 * b.io_cap ? need : 2 * b.io_cap;
      b.io = malloc(sizeof *b.io * (size_t)b.io_cap);
      if (!b.io) {
        rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
        goto fail;
      }
    }
    wt_tensor *in = b.io, *out = b.io + n->n_inputs + 1;
    memset(b.io, 0, sizeof *b.io * (size_t)need);
    rc = infer_node(&b, n, &st, in, out, &foldable);
    if (rc == WT_OK && foldable) rc = fold_node(p, &st, in, out);
    if (rc == WT_OK && !foldable) rc = reserve_omitted(&st, out);
    if (rc || foldable) {
      step_release(&st, NULL);
      if (rc) goto fail;
      continue;
    }
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o];
      if (v < 0) continue;
      p->vals[v] = out[o];
      p->vals[v].data = NULL;
      p->storage[v] = (o == 0 && st.view) ? ST_VIEW : ST_ARENA;
    }
    p->steps[p->n_steps++] = st;
  }
  free(b.io);
  b.io = NULL;
  { /* give back the room of the nodes folded away */
    wt_step *fit = realloc(p->steps, sizeof *p->steps * (size_t)(p->n_steps + 1));
    if (fit) p->steps = fit;
  }
  if (!shapes_only) p->n_fused = fuse_steps(p);
  gather_params(p);
  if (!shapes_only) alias_accumulators(&b);
  /* Values read by the graph only through keyed inputs: remember those inputs' bytes. */
  for (int k = 0; k < g->n_inputs; k++) {
    if (!p->keyed[k]) continue;
    size_t nb = wt_nbytes(&inputs[k]);
    p->keyed_data[k] = malloc(nb ? nb : 1);
    if (!p->keyed_data[k]) {
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      goto fail;
    }
    if (nb) memcpy(p->keyed_data[k], inputs[k].data, nb);
    p->vals[g->inputs[k]].data = NULL;
  }
  rc = size_io(p);
  /* compacted first: the arena layout's temporaries then take the room of the full descriptions */
  if (rc == WT_OK) rc = compact_values(p);
  if (rc == WT_OK && !shapes_only) rc = assign_arena(p);
  if (rc) goto fail;
  if (!shapes_only) settle(p);
  *out = p;
  return WT_OK;
fail:
  free(b.io);
  wt_plan_free(p);
  return rc;
}

int wt_plan_build(const wt_graph *g, const wt_tensor *inputs, wt_plan **out) {
  return plan_build(g, inputs, 0, out);
}

int wt_plan_build_shapes(const wt_graph *g, const wt_tensor *inputs, wt_plan **out) {
  return plan_build(g, inputs, 1, out);
}

/* Where value v's bytes are, in a built plan. */
static inline void *pval_data(const wt_plan *p, int v) {
  if (p->storage[v] != ST_ARENA) return p->pv[v].at.ptr;
  return p->arena ? p->arena + p->pv[v].at.off : NULL;
}

static inline void pval_get(const wt_plan *p, int v, wt_tensor *t) {
  type_of(p, v, t);
  t->data = pval_data(p, v);
}

int wt_plan_value(const wt_plan *p, int v, wt_tensor *out) {
  if (v < 0 || v >= p->n_values || p->storage[v] == ST_NONE) return 0;
  pval_get(p, v, out);
  return 1;
}

int wt_plan_matches(const wt_plan *p, const wt_tensor *inputs) {
  for (int k = 0; k < p->g->n_inputs; k++) {
    wt_tensor built_for, *d = &built_for;
    type_of(p, p->g->inputs[k], d);
    if (d->dtype != inputs[k].dtype || !wt_same_shape(d, &inputs[k])) return 0;
    if (p->keyed[k] && memcmp(p->keyed_data[k], inputs[k].data, wt_nbytes(d)) != 0) return 0;
  }
  return 1;
}

void wt_plan_bind_arena(wt_plan *p, void *arena) { p->arena = arena; }

int wt_plan_run(wt_plan *p, const wt_tensor *inputs) {
  const wt_graph *g = p->g;
  if (!p->arena && p->arena_bytes)
    return wt_errorf(WT_ERR_INTERNAL, "the plan has no arena bound (wt_plan_bind_arena)");
  for (int k = 0; k < g->n_inputs; k++) p->pv[g->inputs[k]].at.ptr = inputs[k].data;
  for (int i = 0; i < p->n_alias; i++) p->pv[p->alias[2 * i]].at.ptr = p->pv[p->alias[2 * i + 1]].at.ptr;
  for (int s = 0; s < p->n_steps; s++) {
    wt_step *st = &p->steps[s];
    const wt_node *n = st->node;
    wt_tensor *in = p->io, *out = p->io + st->n_in;
    if (st->view) p->pv[n->outputs[0]].at.ptr = pval_data(p, n->inputs[0]);
    if (st->absorbed) continue;
    for (int i = 0; i < st->n_in; i++) {
      if (n->inputs[i] >= 0) pval_get(p, n->inputs[i], &in[i]);
      else in[i] = (wt_tensor){.dtype = WT_UNDEFINED};
    }
    uint8_t *scratch = st->scratch_bytes ? p->arena + st->scratch_off : NULL;
    size_t omitted = (size_t)st->omitted_at;
    for (int o = 0; o < st->n_out; o++) {
      if (n->outputs[o] >= 0) {
        pval_get(p, n->outputs[o], &out[o]);
      } else {
        out[o] = st->out[o];
        out[o].data = scratch + omitted;
        omitted += omitted_bytes(&out[o]);
      }
    }
    wt_run_ctx rc = {.node = n, .params = st->params, .n_in = st->n_in, .in = in,
                     .n_out = st->n_out, .out = out, .scratch = scratch};
    int r = st->op->run(&rc);
    if (r) return node_error(r, n, (int)wt_graph_opset(g, n->domain));
  }
  return WT_OK;
}

const wt_tensor *wt_plan_output(const wt_plan *p, int k, void **data) {
  int v = p->g->outputs[k];
  *data = pval_data(p, v);
  return &p->outs[k];
}

size_t wt_plan_arena_bytes(const wt_plan *p) { return p->arena_bytes; }

int wt_plan_fused_count(const wt_plan *p) { return p->n_fused; }

size_t wt_plan_live_peak_bytes(const wt_plan *p) { return p->live_peak; }
