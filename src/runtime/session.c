/* Inference session: a graph, the caller's inputs, and a small cache of plans keyed by input
 * shapes (a model run at a few batch sizes keeps one plan per size). The plans share one arena
 * for their activations, grown to the largest; a module's training and eval sessions share it
 * too (they never run at the same time), so a model's activations cost one arena. */
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "io/onnx_io.h"
#include "backend/cpu/conv_winograd.h"
#include "backend/cpu/simd.h"
#include "ops/op.h"
#include "runtime/planner.h"
#include "runtime/session.h"
#include "shape/shape.h"
#include "webtrain.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
#endif

#define WT_PLAN_CACHE 8

/* Reference-counted activation arena. `user` is the session whose last run's outputs it holds. */
typedef struct wt_arena_buf {
  uint8_t *base;
  size_t bytes;
  int refs;
  const wt_session *user;
} wt_arena_buf;

struct wt_session {
  wt_graph *g;
  wt_tensor *inputs;             /* what wt_session_set_input gave */
  uint8_t *input_set;
  wt_plan *plans[WT_PLAN_CACHE]; /* most recently used first */
  int n_plans;
  wt_plan *last;                 /* the plan of the last successful run */
  wt_arena_buf *arena;
  wt_exec exec;                  /* what its plans' steps see (ops/exec.h) */
  uint64_t draws;                /* exec.draws: its steps' random draws so far */
};

static void arena_unref(wt_arena_buf *a) {
  if (!a || --a->refs > 0) return;
  free(a->base);
  free(a);
}

const char *wt_last_error(void) { return wt_error_message(); }

/* A fixed-size array, not a bare literal: the static data of the SIMD128 and relaxed-SIMD wasm
 * builds then has the same layout, which their shared JavaScript glue relies on (it embeds
 * static addresses; cmake/wasm-fma.cmake). */
static const char simd_name[32] = WT_SIMD_NAME;
const char *wt_simd_name(void) { return simd_name; }

int wt_session_create_from_graph(wt_graph *g, wt_session **out) {
  /* every op the model lacks is named now, not at the first run */
  int rc = wt_graph_check_ops(g);
  if (rc) {
    wt_graph_free(g);
    return rc;
  }
  wt_session *s = calloc(1, sizeof *s);
  if (!s) {
    wt_graph_free(g);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  s->g = g;
  /* The one place the setting is read: kernels take it from the plan (benchmarks set it). */
  s->exec.winograd = wt_conv_winograd_mode(getenv("WT_WINOGRAD"));
  s->exec.draws = &s->draws;
  s->exec.pool = wt_pool_default();
  s->inputs = calloc((size_t)g->n_inputs + 1, sizeof *s->inputs);
  s->input_set = calloc((size_t)g->n_inputs + 1, 1);
  s->arena = calloc(1, sizeof *s->arena);
  if (s->arena) s->arena->refs = 1;
  if (!s->inputs || !s->input_set || !s->arena) {
    wt_session_free(s);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  *out = s;
  return WT_OK;
}

int wt_session_create(const uint8_t *model, size_t len, wt_session **out) {
  *out = NULL;
  wt_graph *g;
  WT_TRY(wt_onnx_read(model, len, NULL, &g));
  return wt_session_create_from_graph(g, out);
}

int wt_session_create_from_file(const char *path, wt_session **out) {
  *out = NULL;
  wt_graph *g;
  WT_TRY(wt_onnx_read_file(path, &g));
  return wt_session_create_from_graph(g, out);
}

void wt_session_free(wt_session *s) {
  if (!s) return;
  for (int i = 0; i < s->n_plans; i++) wt_plan_free(s->plans[i]);
  if (s->arena && s->arena->user == s) s->arena->user = NULL;
  arena_unref(s->arena);
  wt_graph_free(s->g);
  free(s->inputs);
  free(s->input_set);
  free(s);
}

int32_t wt_session_input_count(const wt_session *s) { return s->g->n_inputs; }
int32_t wt_session_output_count(const wt_session *s) { return s->g->n_outputs; }

static const wt_value *input_value(const wt_session *s, int32_t i) {
  return i >= 0 && i < s->g->n_inputs ? &s->g->values[s->g->inputs[i]] : NULL;
}

const char *wt_session_input_name(const wt_session *s, int32_t i) {
  const wt_value *v = input_value(s, i);
  return v ? v->name : NULL;
}

const char *wt_session_output_name(const wt_session *s, int32_t i) {
  return i >= 0 && i < s->g->n_outputs ? s->g->values[s->g->outputs[i]].name : NULL;
}

int32_t wt_session_input_dtype(const wt_session *s, int32_t i) {
  const wt_value *v = input_value(s, i);
  return v ? v->dtype : 0;
}

int32_t wt_session_input_rank(const wt_session *s, int32_t i) {
  const wt_value *v = input_value(s, i);
  return v ? v->rank : -1;
}

int64_t wt_session_input_dim(const wt_session *s, int32_t i, int32_t axis) {
  const wt_value *v = input_value(s, i);
  return v && axis >= 0 && axis < v->rank ? v->dims[axis] : -1;
}

int wt_session_set_input(wt_session *s, int32_t index, int32_t dtype, int32_t rank,
                         const int64_t *dims, const void *data) {
  if (index < 0 || index >= s->g->n_inputs)
    return wt_errorf(WT_ERR_INVALID_ARG, "input index %d is out of range (the model has %d inputs)",
                     index, s->g->n_inputs);
  const char *name = s->g->values[s->g->inputs[index]].name;
  if (rank < 0 || rank > WT_MAX_RANK)
    return wt_errorf(WT_ERR_INVALID_ARG, "input '%s': rank %d is out of range 0..%d", name, rank,
                     WT_MAX_RANK);
  wt_tensor *t = &s->inputs[index];
  t->dtype = dtype;
  t->rank = rank;
  int has_zero = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s': dimension %d is negative (%lld)", name, i,
                       (long long)dims[i]);
    t->dims[i] = dims[i];
    has_zero |= dims[i] == 0;
  }
  t->data = (void *)data;
  if (!data && !has_zero)
    return wt_errorf(WT_ERR_INVALID_ARG, "input '%s': no data", name);
  s->input_set[index] = 1;
  return WT_OK;
}

/* The most bytes a run may need: the build's maximum memory (wasm32: 4 GiB at most), or a test's
 * smaller limit; natively 1 TiB, as the planner's own bound. */
static uint64_t g_memory_limit;
void wt_session_memory_limit_set(uint64_t bytes) { g_memory_limit = bytes; }
static uint64_t memory_limit(void) {
  if (g_memory_limit) return g_memory_limit;
#ifdef __EMSCRIPTEN__
  return (uint64_t)emscripten_get_heap_max();
#else
  return (uint64_t)1 << 40;
#endif
}
uint64_t wt_session_memory_limit(void) { return memory_limit(); }
uint64_t wt_session_heap_in_use(void) {
#ifdef __EMSCRIPTEN__
  return wt_mallinfo_bytes(mallinfo().uordblks);
#else
  return 0;
#endif
}

/* Limits up front: the weights (initializers and the bytes fed to the inputs, parameters
 * included) plus the plan's activations must fit in the memory the build can have, else the
 * run fails before its arena is allocated, saying what it needs and what would help. */
static int check_fits(const wt_session *s, const wt_tensor *inputs, const wt_plan *p) {
#ifdef __EMSCRIPTEN__
  if (!g_memory_limit) { /* what the heap holds now (weights, models, state) but this arena */
    uint64_t in_use = wt_session_heap_in_use(), arena = s->arena->base ? s->arena->bytes + 64 : 0;
    uint64_t held = in_use > arena ? in_use - arena : 0, act = wt_plan_arena_bytes(p);
    uint64_t limit = memory_limit();
    if (held + act + 64 <= limit) return WT_OK;
    return wt_errorf(WT_ERR_NO_MEMORY, "the model needs %llu bytes (%llu MiB: %llu MiB in use for its "
                     "weights, models and state, %llu MiB of activations at these input shapes), more "
                     "than this build's memory can hold (%llu MiB); what would help: a smaller batch or "
                     "input, float16 frozen weights (generateArtifacts(model, { frozenDtype: 'float16' })), "
                     "which halves them", (unsigned long long)(held + act),
                     (unsigned long long)((held + act) >> 20), (unsigned long long)(held >> 20),
                     (unsigned long long)(act >> 20), (unsigned long long)(limit >> 20));
  }
#endif
  uint64_t weights = 0, half = 0;
  for (int v = 0; v < s->g->n_values; v++)
    if (s->g->values[v].flags & WT_VALUE_INITIALIZER) {
      weights += s->g->values[v].nbytes;
      if (s->g->values[v].dtype == WT_FLOAT16) half += s->g->values[v].nbytes;
    }
  for (int k = 0; k < s->g->n_inputs; k++) {
    weights += wt_nbytes(&inputs[k]);
    if (inputs[k].dtype == WT_FLOAT16) half += wt_nbytes(&inputs[k]);
  }
  uint64_t act = wt_plan_arena_bytes(p), need = weights + act, limit = memory_limit();
  if (need <= limit) return WT_OK;
  return wt_errorf(WT_ERR_NO_MEMORY, "the model needs %llu bytes (%llu MiB: %llu MiB of weights and "
                   "inputs%s, %llu MiB of activations at these input shapes), more than this build's "
                   "memory can hold (%llu MiB); what would help: a smaller batch or input, %s",
                   (unsigned long long)need, (unsigned long long)(need >> 20),
                   (unsigned long long)(weights >> 20), half ? " (float16 ones included)" : "",
                   (unsigned long long)(act >> 20), (unsigned long long)(limit >> 20),
                   half == weights ? "fewer or smaller weights" :
                   "float16 frozen weights (generateArtifacts(model, { frozenDtype: 'float16' })), "
                   "which halves them");
}

static int find_plan(wt_session *s, const wt_tensor *inputs, wt_plan **out) {
  for (int i = 0; i < s->n_plans; i++) {
    if (!wt_plan_matches(s->plans[i], inputs)) continue;
    wt_plan *p = s->plans[i];
    memmove(&s->plans[1], &s->plans[0], sizeof(wt_plan *) * (size_t)i);
    s->plans[0] = p;
    *out = p;
    return WT_OK;
  }
  wt_plan *p;
  WT_TRY(wt_plan_build(s->g, inputs, &s->exec, &p));
  int rc = check_fits(s, inputs, p);
  if (rc) {
    wt_plan_free(p);
    return rc;
  }
  if (s->n_plans == WT_PLAN_CACHE) {
    if (s->last == s->plans[WT_PLAN_CACHE - 1]) s->last = NULL;
    wt_plan_free(s->plans[--s->n_plans]);
  }
  memmove(&s->plans[1], &s->plans[0], sizeof(wt_plan *) * (size_t)s->n_plans);
  s->plans[0] = p;
  s->n_plans++;
  *out = p;
  return WT_OK;
}

/* Grows the arena to `bytes` (contents are not kept: they are the last run's activations). */
static int arena_reserve(wt_arena_buf *a, size_t bytes) {
  if (a->base && a->bytes >= bytes) return WT_OK;
  free(a->base);
  a->user = NULL;
  a->bytes = 0;
  /* 64 bytes of slack past the end, as kernels may touch a vector past a value */
  a->base = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!a->base)
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory: the plan needs an arena of %zu bytes (%zu MiB) "
                     "for the activations at these input shapes, more than is available; use a smaller "
                     "batch", bytes, bytes >> 20);
  a->bytes = bytes;
  return WT_OK;
}

static int checked_plan(wt_session *s, const wt_tensor *inputs, const uint8_t *set, wt_plan **p) {
  for (int k = 0; k < s->g->n_inputs; k++)
    if (!set[k])
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' was not set",
                       s->g->values[s->g->inputs[k]].name);
  WT_TRY(wt_check_inputs(s->g, s->g->n_inputs, inputs));
  return find_plan(s, inputs, p);
}

int wt_session_planned(const wt_session *s) {
  for (int k = 0; k < s->g->n_inputs; k++)
    if (!s->input_set[k]) return 0;
  for (int i = 0; i < s->n_plans; i++)
    if (wt_plan_matches(s->plans[i], s->inputs)) return 1;
  return 0;
}

const wt_tensor *wt_session_input(const wt_session *s, int k) {
  return k >= 0 && k < s->g->n_inputs && s->input_set[k] ? &s->inputs[k] : NULL;
}

int wt_session_prepare(wt_session *s, int n, const int *index, const wt_tensor *tensors) {
  wt_tensor *in = malloc(sizeof *in * (size_t)(s->g->n_inputs + 1));
  uint8_t *set = malloc((size_t)s->g->n_inputs + 1);
  if (!in || !set) {
    free(in);
    free(set);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  memcpy(in, s->inputs, sizeof *in * (size_t)s->g->n_inputs);
  memcpy(set, s->input_set, (size_t)s->g->n_inputs);
  for (int i = 0; i < n; i++) {
    in[index[i]] = tensors[i];
    set[index[i]] = 1;
  }
  wt_plan *p;
  int rc = checked_plan(s, in, set, &p);
  free(in);
  free(set);
  return rc;
}

int wt_session_plan_count(const wt_session *s) { return s->n_plans; }

int wt_session_run(wt_session *s) {
  s->last = NULL;
  wt_plan *p;
  WT_TRY(checked_plan(s, s->inputs, s->input_set, &p));
  WT_TRY(arena_reserve(s->arena, wt_plan_arena_bytes(p)));
  wt_plan_bind_arena(p, s->arena->base);
  s->arena->user = s;
  WT_TRY(wt_plan_run(p, s->inputs));
  s->last = p;
  return WT_OK;
}

int wt_session_output(const wt_session *s, int32_t index, int32_t *dtype, int32_t *rank,
                      const int64_t **dims, const void **data) {
  if (!s->last) return wt_errorf(WT_ERR_INVALID_ARG, "no successful run yet: outputs are not available");
  if (s->arena->user != s)
    return wt_errorf(WT_ERR_INVALID_ARG, "the outputs of the last run are gone: a run of another model "
                     "sharing this one's memory (the eval model of a training model) came after it");
  if (index < 0 || index >= s->g->n_outputs)
    return wt_errorf(WT_ERR_INVALID_ARG, "output index %d is out of range (the model has %d outputs)",
                     index, s->g->n_outputs);
  void *bytes;
  const wt_tensor *t = wt_plan_output(s->last, index, &bytes);
  *dtype = t->dtype;
  *rank = t->rank;
  *dims = t->dims;
  *data = bytes;
  return WT_OK;
}

size_t wt_session_arena_bytes(const wt_session *s) {
  size_t n = 0;
  for (int i = 0; i < s->n_plans; i++) n += wt_plan_arena_bytes(s->plans[i]);
  return n;
}

size_t wt_session_arena_capacity(const wt_session *s) { return s->arena->bytes; }

size_t wt_session_live_peak_bytes(const wt_session *s) {
  size_t n = 0;
  for (int i = 0; i < s->n_plans; i++)
    if (wt_plan_live_peak_bytes(s->plans[i]) > n) n = wt_plan_live_peak_bytes(s->plans[i]);
  return n;
}

/* A node of the backward pass: emitted by the autodiff ("<node>_Grad/..."), or a gradient op. */
static int is_backward(const wt_node *n) {
  const wt_op_def *op = wt_op_find(n->domain, n->op_type);
  return strstr(n->name, "_Grad/") != NULL || (op && (op->flags & WT_OP_GRADIENT));
}

typedef struct buf_ref {
  uintptr_t at;
  size_t bytes;
} buf_ref;

static int cmp_buf(const void *a, const void *b) {
  const buf_ref *x = a, *y = b;
  return x->at < y->at ? -1 : x->at > y->at;
}

size_t wt_session_saved_bytes(const wt_session *s, int n_user, const int *user_inputs) {
  const wt_plan *p = s->last ? s->last : s->n_plans ? s->plans[0] : NULL;
  const wt_graph *g = s->g;
  if (!p || !s->arena->base) return 0;
  /* the backward pass starts at the first gradient node (autodiff names them "<node>_Grad/...") */
  int b = 0;
  while (b < g->n_nodes && !is_backward(&g->nodes[b])) b++;
  if (b == g->n_nodes) return 0;
  int *prod = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  buf_ref *bufs = malloc(sizeof *bufs * (size_t)(g->n_values + 1));
  size_t total = 0;
  if (prod && bufs) {
    for (int v = 0; v < g->n_values; v++) prod[v] = -1;
    for (int i = 0; i < g->n_nodes; i++)
      for (int o = 0; o < g->nodes[i].n_outputs; o++)
        if (g->nodes[i].outputs[o] >= 0) prod[g->nodes[i].outputs[o]] = i;
    for (int k = 0; k < n_user; k++) /* the batch itself (X of a first layer's weight gradient) */
      if (user_inputs[k] >= 0 && user_inputs[k] < g->n_inputs) prod[g->inputs[user_inputs[k]]] = -2;
    int n = 0;
    for (int i = b; i < g->n_nodes; i++)
      for (int k = 0; k < g->nodes[i].n_inputs; k++) {
        int v = g->nodes[i].inputs[k];
        if (v < 0 || prod[v] == -1 || prod[v] >= b) continue;
        wt_tensor t;
        const uint8_t *d = wt_plan_value(p, v, &t) ? t.data : NULL;
        if (d && (prod[v] == -2 || (d >= s->arena->base && d < s->arena->base + s->arena->bytes)))
          bufs[n++] = (buf_ref){(uintptr_t)d, wt_nbytes(&t)};
        prod[v] = -1; /* counted once */
      }
    /* a view shares its root's buffer: one buffer per address, the largest view of it */
    qsort(bufs, (size_t)n, sizeof *bufs, cmp_buf);
    for (int i = 0; i < n; i++) {
      size_t nb = bufs[i].bytes;
      while (i + 1 < n && bufs[i + 1].at == bufs[i].at) {
        i++;
        if (bufs[i].bytes > nb) nb = bufs[i].bytes;
      }
      total += nb;
    }
  }
  free(prod);
  free(bufs);
  return total;
}

int wt_session_share_arena(wt_session *dst, wt_session *src) {
  if (dst->arena == src->arena) return WT_OK;
  if (dst->arena->user == dst) dst->last = NULL;
  arena_unref(dst->arena);
  dst->arena = src->arena;
  dst->arena->refs++;
  return WT_OK;
}

const wt_graph *wt_session_graph(const wt_session *s) { return s->g; }

uint64_t wt_session_next_draw(wt_session *s) { return wt_exec_draw(&s->exec); }
uint64_t wt_session_draws(const wt_session *s) { return s->draws; }
void wt_session_set_draws(wt_session *s, uint64_t draws) { s->draws = draws; }

void wt_session_set_prepack(wt_session *s, wt_prepack *t) { s->exec.prepack = t; }
