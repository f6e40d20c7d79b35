/* Inference session: a graph, the caller's inputs, and a small cache of plans keyed by input
 * shapes (a model run at a few batch sizes keeps one plan per size). */
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"
#include "kernels/simd.h"
#include "runtime/planner.h"
#include "runtime/session.h"
#include "webtrain.h"

#define WT_PLAN_CACHE 8

struct wt_session {
  wt_graph *g;
  wt_tensor *inputs;             /* what wt_session_set_input gave */
  uint8_t *input_set;
  wt_plan *plans[WT_PLAN_CACHE]; /* most recently used first */
  int n_plans;
  wt_plan *last;                 /* the plan of the last successful run */
};

const char *wt_last_error(void) { return wt_error_message(); }

const char *wt_simd_name(void) { return WT_SIMD_NAME; }

int wt_session_create_from_graph(wt_graph *g, wt_session **out) {
  wt_session *s = calloc(1, sizeof *s);
  if (!s) {
    wt_graph_free(g);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  s->g = g;
  s->inputs = calloc((size_t)g->n_inputs + 1, sizeof *s->inputs);
  s->input_set = calloc((size_t)g->n_inputs + 1, 1);
  if (!s->inputs || !s->input_set) {
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
  for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
  t->data = (void *)data;
  if (!data && wt_numel(t) != 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "input '%s': no data", name);
  s->input_set[index] = 1;
  return WT_OK;
}

static int find_plan(wt_session *s, wt_plan **out) {
  for (int i = 0; i < s->n_plans; i++) {
    if (!wt_plan_matches(s->plans[i], s->inputs)) continue;
    wt_plan *p = s->plans[i];
    memmove(&s->plans[1], &s->plans[0], sizeof(wt_plan *) * (size_t)i);
    s->plans[0] = p;
    *out = p;
    return WT_OK;
  }
  wt_plan *p;
  WT_TRY(wt_plan_build(s->g, s->inputs, &p));
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

int wt_session_run(wt_session *s) {
  s->last = NULL;
  for (int k = 0; k < s->g->n_inputs; k++)
    if (!s->input_set[k])
      return wt_errorf(WT_ERR_INVALID_ARG, "input '%s' was not set",
                       s->g->values[s->g->inputs[k]].name);
  WT_TRY(wt_check_inputs(s->g, s->g->n_inputs, s->inputs));
  wt_plan *p;
  WT_TRY(find_plan(s, &p));
  WT_TRY(wt_plan_run(p, s->inputs));
  s->last = p;
  return WT_OK;
}

int wt_session_output(const wt_session *s, int32_t index, int32_t *dtype, int32_t *rank,
                      const int64_t **dims, const void **data) {
  if (!s->last) return wt_errorf(WT_ERR_INVALID_ARG, "no successful run yet: outputs are not available");
  if (index < 0 || index >= s->g->n_outputs)
    return wt_errorf(WT_ERR_INVALID_ARG, "output index %d is out of range (the model has %d outputs)",
                     index, s->g->n_outputs);
  const wt_tensor *t = wt_plan_output(s->last, index);
  *dtype = t->dtype;
  *rank = t->rank;
  *dims = t->dims;
  *data = t->data;
  return WT_OK;
}

size_t wt_session_arena_bytes(const wt_session *s) {
  size_t n = 0;
  for (int i = 0; i < s->n_plans; i++) n += wt_plan_arena_bytes(s->plans[i]);
  return n;
}

const wt_graph *wt_session_graph(const wt_session *s) { return s->g; }
