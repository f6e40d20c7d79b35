/* Building a GPU program (gpu_program.h) from the shape pass's steps and the WebGPU backend's
 * kernels. */
#include "runtime/gpu_program.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu_arena.h"
#include "shape/shape.h"

struct wt_gpu_program {
  wt_shape_pass sp;              /* owns the folded constants the uploads point into */
  wt_gpu_region *at;             /* per value: where it lives (buffer -1: nowhere yet) */
  int *root;                     /* per value: the value whose room it is (a view's, an
                                    accumulator's buffer), else itself */
  int *last;                     /* per root: the last step reading it (INT_MAX: an output) */
  uint8_t *freed;                /* per root: its arena room was given back */
  wt_gpu_arena arena;
  wt_gpu_limits limits;
  uint64_t bytes[WT_GPU_BUFFERS];
  wt_gpu_upload *uploads;
  int n_uploads;
  wt_gpu_step *steps;
  int n_steps, cap_steps;
};

static uint64_t align256(uint64_t n) { return (n + 255) / 256 * 256; }
static uint64_t round4(uint64_t n) { return n < 4 ? 4 : (n + 3) / 4 * 4; }

static wt_gpu_region take(wt_gpu_program *p, int buffer, uint64_t bytes) {
  wt_gpu_region r = {.buffer = buffer, .bytes = round4(bytes)};
  if (buffer == WT_GPU_ARENA) {
    r.offset = wt_gpu_arena_take(&p->arena, r.bytes);
  } else {
    r.offset = p->bytes[buffer];
    p->bytes[buffer] = align256(r.offset + r.bytes);
  }
  return r;
}

static int give(wt_gpu_program *p, wt_gpu_region r) {
  return r.buffer == WT_GPU_ARENA ? wt_gpu_arena_give(&p->arena, r.offset, r.bytes) : WT_OK;
}

/* Gives back root value v's room once its last reader ran (step s), or at once when nothing
 * reads it. */
static int retire(wt_gpu_program *p, int v, int s) {
  int r = p->root[v];
  if (p->freed[r] || p->last[r] > s || p->at[r].buffer != WT_GPU_ARENA) return WT_OK;
  p->freed[r] = 1;
  return give(p, p->at[r]);
}

/* The value whose bytes an accumulator step overwrites its buffer with, when its producer can
 * write them into the buffer's room instead (as the CPU plan aliases them, plan_fuse.c): the
 * overwrite flag is true in this program (programs are keyed on it), the buffer is read by this
 * step alone, and the value (back through views read once) is computed by a step, read once, no
 * graph output, and as large as the buffer. Else -1. */
static int overwritten_by(wt_gpu_program *p, const wt_node *n, const int *readers, const int *prod) {
  if (n->n_inputs < 3 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->inputs[2] < 0) return -1;
  int buf = n->inputs[0], v = n->inputs[1];
  const wt_tensor *f = wt_shape_value(&p->sp, n->inputs[2]);
  if (!f || f->dtype != WT_BOOL || wt_numel(f) != 1 || !f->data || !*(const uint8_t *)f->data) return -1;
  if (p->sp.storage[buf] != WT_ST_INPUT || readers[buf] != 1) return -1;
  while (p->sp.storage[v] == WT_ST_VIEW && readers[v] == 1 && prod[v] >= 0)
    v = wt_shape_step_at(&p->sp, prod[v])->node->inputs[0];
  if (p->sp.storage[v] != WT_ST_ARENA || readers[v] != 1 || (p->sp.g->values[v].flags & WT_VALUE_GRAPH_OUTPUT) ||
      p->sp.vals[v].dtype != p->sp.vals[buf].dtype || wt_nbytes(&p->sp.vals[v]) != wt_nbytes(&p->sp.vals[buf]))
    return -1;
  return v;
}

/* Each value's room and the last step that reads it. */
static int lifetimes(wt_gpu_program *p) {
  const wt_graph *g = p->sp.g;
  int *readers = calloc((size_t)g->n_values + 1, sizeof *readers);
  int *prod = malloc(((size_t)g->n_values + 1) * sizeof *prod);
  if (!readers || !prod) {
    free(readers);
    free(prod);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  for (int v = 0; v < g->n_values; v++) p->root[v] = v, p->last[v] = -1, prod[v] = -1;
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_node *n = wt_shape_step_at(&p->sp, s)->node;
    for (int i = 0; i < n->n_inputs; i++)
      if (n->inputs[i] >= 0) readers[n->inputs[i]]++;
    for (int o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0) prod[n->outputs[o]] = s;
  }
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_shape_step *st = wt_shape_step_at(&p->sp, s);
    int v = (st->op->flags & WT_OP_ACCUMULATOR) ? overwritten_by(p, st->node, readers, prod) : -1;
    if (v >= 0) p->root[v] = st->node->inputs[0]; /* a graph input: its own root */
  }
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_shape_step *st = wt_shape_step_at(&p->sp, s);
    const wt_node *n = st->node;
    if (st->view) p->root[n->outputs[0]] = p->root[n->inputs[0]];
    if ((st->op->flags & WT_OP_ACCUMULATOR) && n->n_outputs > 1 && n->outputs[1] >= 0)
      p->root[n->outputs[1]] = p->root[n->inputs[0]];
    for (int i = 0; i < n->n_inputs; i++)
      if (n->inputs[i] >= 0) p->last[p->root[n->inputs[i]]] = s;
  }
  for (int k = 0; k < g->n_outputs; k++) p->last[p->root[g->outputs[k]]] = INT_MAX;
  free(readers);
  free(prod);
  return WT_OK;
}

static int fits_binding(const wt_gpu_program *p, const wt_gpu_region *r, const char *what) {
  if (!p->limits.max_binding || r->bytes <= p->limits.max_binding) return WT_OK;
  return wt_errorf(WT_ERR_UNSUPPORTED, "%s is %llu bytes; this GPU binds at most %llu bytes to a dispatch "
                   "(maxStorageBufferBindingSize): use a smaller batch or the wasm backend",
                   what, (unsigned long long)r->bytes, (unsigned long long)p->limits.max_binding);
}

/* The region of value v for a dispatch to read: an initializer or folded constant gets its
 * room in the constant buffer (and an upload) the first time. */
static int region_of(wt_gpu_program *p, int v, wt_gpu_region *out) {
  if (p->at[v].buffer >= 0) {
    *out = p->at[v];
    return WT_OK;
  }
  const wt_tensor *t = &p->sp.vals[v];
  int st = p->sp.storage[v];
  if (st != WT_ST_INIT && st != WT_ST_STATIC)
    return wt_errorf(WT_ERR_INTERNAL, "value '%s' is read before it is written", p->sp.g->values[v].name);
  size_t nb = wt_nbytes(t);
  if (nb && !t->data)
    return wt_errorf(WT_ERR_UNSUPPORTED, "initializer '%s' has no data in memory (external data is not on the webgpu backend yet)",
                     p->sp.g->values[v].name);
  wt_gpu_upload *u = realloc(p->uploads, sizeof *u * (size_t)(p->n_uploads + 1));
  if (!u) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  p->uploads = u;
  p->at[v] = take(p, WT_GPU_CONST, nb);
  u[p->n_uploads++] = (wt_gpu_upload){.offset = p->at[v].offset, .data = t->data, .bytes = nb};
  *out = p->at[v];
  return WT_OK;
}

static int overlap(const wt_gpu_region *a, const wt_gpu_region *b) {
  return a->buffer >= 0 && a->buffer == b->buffer && a->offset < b->offset + b->bytes &&
         b->offset < a->offset + a->bytes;
}

static wt_gpu_step *add_step(wt_gpu_program *p) {
  if (p->n_steps == p->cap_steps) {
    int cap = p->cap_steps ? 2 * p->cap_steps : 16;
    wt_gpu_step *s = realloc(p->steps, sizeof *s * (size_t)cap);
    if (!s) return NULL;
    p->steps = s;
    p->cap_steps = cap;
  }
  return memset(&p->steps[p->n_steps++], 0, sizeof *p->steps);
}

/* A dispatch's bindings as regions. WebGPU refuses two bindings of one dispatch that overlap
 * (Mul(x, x) binds x twice): a later input that overlaps an earlier binding is read from a copy
 * made by a dispatch before it. */
static int resolve(wt_gpu_program *p, const wt_shape_step *st, const wt_gpu_dispatch *d,
                   const wt_gpu_region *scratch) {
  wt_gpu_region r[WT_GPU_MAX_BINDS], copies[WT_GPU_MAX_BINDS];
  int n_copies = 0;
  for (int b = 0; b < d->n_bind; b++) {
    int code = d->bind[b];
    if (code == WT_GPU_NONE) {
      r[b] = (wt_gpu_region){.buffer = -1, .bytes = 256};
      continue;
    }
    if (code >= WT_GPU_SCRATCH(0)) {
      if (code >= WT_GPU_SCRATCH(WT_GPU_SCRATCHES) || scratch[code - WT_GPU_SCRATCH(0)].buffer < 0)
        return wt_errorf(WT_ERR_INTERNAL, "a webgpu kernel binds scratch it did not ask for");
      r[b] = scratch[code - WT_GPU_SCRATCH(0)];
      WT_TRY(fits_binding(p, &r[b], "the step's scratch"));
      continue;
    }
    int is_out = code >= WT_GPU_OUT(0);
    int idx = is_out ? code - WT_GPU_OUT(0) : code;
    int v = is_out ? st->node->outputs[idx] : st->node->inputs[idx];
    if (idx >= (is_out ? st->n_out : st->n_in) || v < 0)
      return wt_errorf(WT_ERR_INTERNAL, "a webgpu kernel binds a missing %s %d", is_out ? "output" : "input", idx);
    WT_TRY(region_of(p, v, &r[b]));
    char what[160];
    snprintf(what, sizeof what, "value '%s'", p->sp.g->values[v].name);
    WT_TRY(fits_binding(p, &r[b], what));
    for (int e = 0; e < b; e++) {
      if (!overlap(&r[b], &r[e])) continue;
      if (is_out) return wt_errorf(WT_ERR_INTERNAL, "a webgpu dispatch writes into a value it reads");
      wt_gpu_region copy = take(p, WT_GPU_ARENA, r[b].bytes);
      wt_gpu_step *c = add_step(p);
      if (!c) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      wt_gpu_copy_dispatch(&c->d, (int64_t)(r[b].bytes / 4));
      c->regions[0] = r[b];
      c->regions[1] = copy;
      r[b] = copies[n_copies++] = copy;
      break;
    }
  }
  wt_gpu_step *s = add_step(p);
  if (!s) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  s->d = *d;
  memcpy(s->regions, r, sizeof r[0] * (size_t)d->n_bind);
  for (int i = 0; i < n_copies; i++) WT_TRY(give(p, copies[i]));
  return WT_OK;
}

/* One error naming every op of the steps without a GPU kernel, with a node using it. */
static int check_kernels(const wt_shape_pass *sp) {
  char msg[1024];
  size_t used = 0;
  int count = 0;
  for (int s = 0; s < sp->n_steps; s++) {
    const wt_shape_step *st = wt_shape_step_at(sp, s);
    if (wt_gpu_kernel_find(st->op)) continue;
    int seen = 0;
    for (int e = 0; e < s && !seen; e++) seen = wt_shape_step_at(sp, e)->op == st->op;
    if (seen) continue;
    count++;
    if (used < sizeof msg - 96)
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s (%s; node '%s')", count > 1 ? ", " : "",
                               st->op->op_type, st->op->domain[0] ? st->op->domain : "ai.onnx", st->node->name);
  }
  if (!count) return WT_OK;
  return wt_errorf(WT_ERR_UNSUPPORTED, "the webgpu backend has no kernel for %d op%s of this model: %s", count,
                   count > 1 ? "s" : "", msg);
}

static int plan_steps(wt_gpu_program *p, const wt_gpu_region *placed) {
  const wt_graph *g = p->sp.g;
  for (int k = 0; k < g->n_inputs; k++) {
    int v = g->inputs[k];
    if (p->sp.storage[v] != WT_ST_INPUT) continue;
    if (placed && placed[k].buffer >= 0) {
      if (placed[k].buffer < WT_GPU_BUFFERS || placed[k].offset % 256 || placed[k].bytes < wt_nbytes(&p->sp.vals[v]))
        return wt_errorf(WT_ERR_INVALID_ARG, "input '%s': placed at buffer %d, offset %llu, %llu bytes; expected a "
                         "caller's buffer, 256-byte aligned, of at least %llu bytes", g->values[v].name, placed[k].buffer,
                         (unsigned long long)placed[k].offset, (unsigned long long)placed[k].bytes,
                         (unsigned long long)wt_nbytes(&p->sp.vals[v]));
      p->at[v] = placed[k];
      p->at[v].bytes = round4(wt_nbytes(&p->sp.vals[v]));
    } else {
      p->at[v] = take(p, WT_GPU_ARENA, wt_nbytes(&p->sp.vals[v]));
    }
  }
  for (int s = 0; s < p->sp.n_steps; s++) {
    const wt_shape_step *st = wt_shape_step_at(&p->sp, s);
    const wt_node *n = st->node;
    if (st->view) {
      int in = n->inputs[0], out = n->outputs[0];
      if (p->sp.vals[in].dtype != p->sp.vals[out].dtype)
        return wt_node_error(wt_errorf(WT_ERR_UNSUPPORTED, "a view from %s to %s: the webgpu backend has none",
                                       wt_dtype_name(p->sp.vals[in].dtype), wt_dtype_name(p->sp.vals[out].dtype)),
                             n, (int)wt_graph_opset(g, n->domain));
      WT_TRY(region_of(p, p->root[out], &p->at[out]));
      continue;
    }
    const wt_gpu_kernel *k = wt_gpu_kernel_find(st->op);
    if (!k->encode)
      return wt_node_error(wt_errorf(WT_ERR_INTERNAL, "the webgpu backend runs this op only as a view"), n,
                           (int)wt_graph_opset(g, n->domain));
    /* Room for each output, or its root's (an accumulator's output 1 is its buffer, input 0). */
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o];
      if (v < 0) continue;
      if (p->root[v] == v) p->at[v] = take(p, WT_GPU_ARENA, wt_nbytes(&p->sp.vals[v]));
      else WT_TRY(region_of(p, p->root[v], &p->at[v]));
    }
    wt_tensor in[WT_GPU_MAX_BINDS * 2], out[WT_GPU_MAX_BINDS];
    if (st->n_in > (int)(sizeof in / sizeof in[0]) || st->n_out > WT_GPU_MAX_BINDS)
      return wt_node_error(wt_errorf(WT_ERR_UNSUPPORTED, "has more inputs or outputs than the webgpu backend binds"),
                           n, (int)wt_graph_opset(g, n->domain));
    for (int i = 0; i < st->n_in; i++)
      in[i] = n->inputs[i] >= 0 ? p->sp.vals[n->inputs[i]] : (wt_tensor){.dtype = WT_UNDEFINED};
    for (int o = 0; o < st->n_out; o++) out[o] = n->outputs[o] >= 0 ? p->sp.vals[n->outputs[o]] : st->out[o];
    wt_gpu_ctx ctx = {.node = n, .params = st->params, .n_in = st->n_in, .in = in, .n_out = st->n_out, .out = out};
    for (int i = 1; i < st->n_in && i < 32; i++)
      if (n->inputs[0] >= 0 && n->inputs[i] >= 0 && p->root[n->inputs[i]] == p->root[n->inputs[0]])
        ctx.same_room |= 1u << i;
    wt_gpu_dispatch d[WT_GPU_MAX_DISPATCHES];
    int nd = k->encode(&ctx, d, WT_GPU_MAX_DISPATCHES);
    if (nd < 0) return wt_node_error(-nd, n, (int)wt_graph_opset(g, n->domain));
    if (nd == 0 || nd > WT_GPU_MAX_DISPATCHES)
      return wt_node_error(wt_errorf(WT_ERR_INTERNAL, "a webgpu kernel gave %d dispatches", nd), n,
                           (int)wt_graph_opset(g, n->domain));
    wt_gpu_region scratch[WT_GPU_SCRATCHES];
    for (int i = 0; i < WT_GPU_SCRATCHES; i++)
      scratch[i] = ctx.scratch[i] ? take(p, WT_GPU_ARENA, ctx.scratch[i]) : (wt_gpu_region){.buffer = -1};
    for (int i = 0; i < nd; i++) {
      int rc = resolve(p, st, &d[i], scratch);
      if (rc) return wt_node_error(rc, n, (int)wt_graph_opset(g, n->domain));
    }
    for (int i = 0; i < WT_GPU_SCRATCHES; i++) WT_TRY(give(p, scratch[i]));
    for (int i = 0; i < n->n_inputs; i++)
      if (n->inputs[i] >= 0) WT_TRY(retire(p, n->inputs[i], s));
    for (int o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0) WT_TRY(retire(p, n->outputs[o], s));
  }
  for (int k = 0; k < g->n_outputs; k++) {
    wt_gpu_region r;
    WT_TRY(region_of(p, g->outputs[k], &r));
  }
  p->bytes[WT_GPU_ARENA] = p->arena.peak;
  static const char *const names[WT_GPU_BUFFERS] = {"a constant buffer", "an arena buffer"};
  for (int b = 0; b < WT_GPU_BUFFERS; b++)
    if (p->limits.max_buffer && p->bytes[b] > p->limits.max_buffer)
      return wt_errorf(WT_ERR_UNSUPPORTED, "the model needs %s of %llu bytes on the GPU; this GPU's buffers "
                       "hold at most %llu (maxBufferSize): use a smaller batch or the wasm backend",
                       names[b], (unsigned long long)p->bytes[b], (unsigned long long)p->limits.max_buffer);
  return WT_OK;
}

int wt_gpu_program_build(const wt_graph *g, const wt_tensor *inputs, const wt_gpu_limits *limits,
                         const wt_gpu_region *placed, wt_gpu_program **out) {
  *out = NULL;
  wt_gpu_program *p = calloc(1, sizeof *p);
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  if (limits) p->limits = *limits;
  int rc = wt_shape_pass_begin(&p->sp, g, inputs, sizeof(wt_shape_step));
  if (rc) {
    free(p);
    return rc;
  }
  rc = wt_shape_pass_walk(&p->sp);
  if (rc == WT_OK) rc = check_kernels(&p->sp);
  if (rc == WT_OK) {
    size_t n = (size_t)g->n_values + 1;
    p->at = malloc(sizeof *p->at * n);
    p->root = malloc(sizeof *p->root * n);
    p->last = malloc(sizeof *p->last * n);
    p->freed = calloc(n, 1);
    if (!p->at || !p->root || !p->last || !p->freed) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  if (rc == WT_OK) {
    for (int v = 0; v < g->n_values; v++) p->at[v] = (wt_gpu_region){.buffer = -1};
    rc = lifetimes(p);
    if (rc == WT_OK) rc = plan_steps(p, placed);
  }
  /* what a run reads of the build: the regions, steps and uploads */
  free(p->root);
  free(p->last);
  free(p->freed);
  p->root = p->last = NULL;
  p->freed = NULL;
  wt_gpu_arena_release(&p->arena);
  p->sp.inputs = NULL; /* the caller's */
  if (rc) {
    wt_gpu_program_free(p);
    return rc;
  }
  *out = p;
  return WT_OK;
}

void wt_gpu_program_free(wt_gpu_program *p) {
  if (!p) return;
  wt_shape_pass_release(&p->sp);
  free(p->at);
  free(p->uploads);
  free(p->steps);
  free(p);
}

uint64_t wt_gpu_program_buffer_bytes(const wt_gpu_program *p, int buffer) {
  return buffer >= 0 && buffer < WT_GPU_BUFFERS ? p->bytes[buffer] : 0;
}

int wt_gpu_program_uploads(const wt_gpu_program *p, const wt_gpu_upload **out) {
  *out = p->uploads;
  return p->n_uploads;
}

int wt_gpu_program_steps(const wt_gpu_program *p, const wt_gpu_step **out) {
  *out = p->steps;
  return p->n_steps;
}

wt_gpu_region wt_gpu_program_input(const wt_gpu_program *p, int k) {
  return p->at[p->sp.g->inputs[k]];
}

wt_gpu_region wt_gpu_program_output(const wt_gpu_program *p, int k, const wt_tensor **type) {
  int v = p->sp.g->outputs[k];
  *type = &p->sp.vals[v];
  return p->at[v];
}
