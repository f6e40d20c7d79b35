/* The WebGPU backend's program (runtime/gpu_program.h) for JavaScript's device bridge (js/gpu/):
 * built for a session's current inputs, read field by field. */
#include <stdlib.h>

#include "runtime/gpu_program.h"
#include "runtime/module_external.h"
#include "runtime/optimizer.h"
#include "runtime/state.h"
#include "runtime/session.h"
#include "ops/exec.h"
#include "shape/shape.h"
#include "webtrain.h"

/* The program for the inputs set on s (wtw_session_set_input), fitting the device's largest
 * binding and buffer (bytes; 0: no limit), with the inputs `placed` names (NULL, or per graph
 * input its buffer (-1: not placed), offset and bytes) in the caller's buffers; or 0
 * (wtw_last_error says why). */
wt_gpu_program *wtw_gpu_program_build(wt_session *s, double max_binding, double max_buffer, const double *placed) {
  const wt_graph *g = wt_session_graph(s);
  wt_tensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
  if (!in) {
    wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    return NULL;
  }
  wt_gpu_program *p = NULL;
  int rc = WT_OK;
  for (int k = 0; k < g->n_inputs && rc == WT_OK; k++) {
    const wt_tensor *t = wt_session_input(s, k);
    if (!t) rc = wt_errorf(WT_ERR_INVALID_ARG, "input '%s' was not set", g->values[g->inputs[k]].name);
    else in[k] = *t;
  }
  if (rc == WT_OK) rc = wt_check_inputs(g, g->n_inputs, in);
  wt_gpu_limits limits = {.max_binding = (uint64_t)max_binding, .max_buffer = (uint64_t)max_buffer};
  wt_gpu_region *at = placed ? calloc((size_t)g->n_inputs + 1, sizeof *at) : NULL;
  if (placed && !at) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int k = 0; at && k < g->n_inputs; k++)
    at[k] = (wt_gpu_region){.buffer = (int)placed[3 * k], .offset = (uint64_t)placed[3 * k + 1], .bytes = (uint64_t)placed[3 * k + 2]};
  if (rc == WT_OK) wt_gpu_program_build(g, in, &limits, at, &p);
  free(at);
  free(in);
  return p;
}

void wtw_gpu_program_free(wt_gpu_program *p) { wt_gpu_program_free(p); }

/* ---- a module's graphs on the GPU (runtime/module_external.h) ---- */

wt_session *wtw_module_session(wt_module *m, int eval) { return wt_module_session(m, eval); }
/* Graph input k of the mode's model: kind (WT_MODULE_INPUT_*) * 65536 + parameter index + 1 (0:
 * none), or -1. */
int wtw_module_input_binding(const wt_module *m, int eval, int k) {
  int param;
  int kind = wt_module_input_binding(m, eval, k, &param);
  return kind < 0 ? -1 : kind * 65536 + param + 1;
}
/* Parameter i's dtype and bytes, whatever its dtype (a float16 frozen weight lives on the GPU
 * as float16): the trainer places and uploads them. */
int wtw_state_param_dtype(const wt_state *s, int i) {
  const wt_tensor *t = wt_state_param_tensor(s, i);
  return t ? t->dtype : -1;
}
const void *wtw_state_param_raw(const wt_state *s, int i) {
  const wt_tensor *t = wt_state_param_tensor(s, i);
  return t ? t->data : NULL;
}
int wtw_module_output_graph_index(const wt_module *m, int eval, int i) { return wt_module_output_graph_index(m, eval, i); }
int wtw_module_external_train_step(wt_module *m, int finite) { return wt_module_external_train_step(m, finite); }
/* The BatchNormalization running statistics of a train step (runtime/module_external.h): how
 * many; the b-th one's graph output or state parameter index (what: WT_MODULE_BN_*), and its
 * momentum: the GPU writes them back. */
int wtw_module_bn_count(const wt_module *m) { return wt_module_external_bn_count(m); }
int wtw_module_bn(const wt_module *m, int b, int what) { return wt_module_external_bn(m, b, what); }
double wtw_module_bn_momentum(const wt_module *m, int b) { return wt_module_external_bn_momentum(m, b); }
/* An update's constants (runtime/optimizer.h) as optim.wgsl reads them, into out[10]: kind (0,
 * 1: AdamW's modes; 2: SGD), decay, then AdamW's f[8] or SGD's learning rate. */
static void pack_consts(const wt_adamw_consts *c, float lr, float *out) {
  out[0] = c->kind < 0 ? 2.0f : (float)c->kind;
  out[1] = (float)c->decay;
  for (int i = 0; i < 8; i++) out[2 + i] = c->kind < 0 ? (i == 0 ? lr : 0.0f) : c->f[i];
}

/* The next update's constants, changing nothing. */
void wtw_optimizer_update_consts(const wt_optimizer *o, float *out) {
  wt_adamw_consts c;
  float lr;
  wt_optimizer_next_update(o, &c, &lr);
  pack_consts(&c, lr, out);
}

/* The optimizer's step whose update the caller runs: its constants into out[10]. */
int wtw_optimizer_step_external(wt_optimizer *o, float *out) {
  wt_adamw_consts c = {0};
  float lr = 0.0f;
  int rc = wt_optimizer_step_external(o, &c, &lr);
  pack_consts(&c, lr, out);
  return rc;
}
/* The last step's update did not run on the GPU: its loss was not finite (runtime/optimizer.h). */
void wtw_optimizer_external_skipped(wt_optimizer *o) { wt_optimizer_external_skipped(o); }
/* The session's random draws so far, and setting them back (a GPU run taken back). */
double wtw_session_draws(const wt_session *s) { return (double)wt_session_draws(s); }
void wtw_session_set_draws(wt_session *s, double draws) { wt_session_set_draws(s, (uint64_t)draws); }

/* Graph input k as set on s: its data's address and bytes (0 when not set). */
const void *wtw_session_input_data(const wt_session *s, int k) {
  const wt_tensor *t = wt_session_input(s, k);
  return t ? t->data : NULL;
}
double wtw_session_input_bytes(const wt_session *s, int k) {
  const wt_tensor *t = wt_session_input(s, k);
  return t ? (double)wt_nbytes(t) : 0;
}
/* Its dtype (axis -2), rank (-1) or dim `axis`, as set (-1 when not set). */
double wtw_session_input_set(const wt_session *s, int k, int axis) {
  const wt_tensor *t = wt_session_input(s, k);
  if (!t) return -1;
  return axis == -2 ? t->dtype : axis == -1 ? t->rank : (double)t->dims[axis];
}
/* A parameter's optimizer moment k (0: m, 1: v), or 0 when it has none. */
const float *wtw_state_param_moment(const wt_state *s, int i, int k) {
  const char *name = wt_state_param_name(s, i);
  const wt_param *p = name ? wt_state_find(s, name) : NULL;
  return p ? (k ? p->v : p->m) : NULL;
}

double wtw_gpu_buffer_bytes(const wt_gpu_program *p, int buffer) {
  return (double)wt_gpu_program_buffer_bytes(p, buffer);
}

int wtw_gpu_upload_count(const wt_gpu_program *p) {
  const wt_gpu_upload *u;
  return wt_gpu_program_uploads(p, &u);
}
/* field 0: offset in the constant buffer, 1: bytes; the data: wtw_gpu_upload_data. */
double wtw_gpu_upload(const wt_gpu_program *p, int i, int field) {
  const wt_gpu_upload *u;
  wt_gpu_program_uploads(p, &u);
  return field == 0 ? (double)u[i].offset : (double)u[i].bytes;
}
const void *wtw_gpu_upload_data(const wt_gpu_program *p, int i) {
  const wt_gpu_upload *u;
  wt_gpu_program_uploads(p, &u);
  return u[i].data;
}

int wtw_gpu_step_count(const wt_gpu_program *p) {
  const wt_gpu_step *s;
  return wt_gpu_program_steps(p, &s);
}
static const wt_gpu_step *step(const wt_gpu_program *p, int i) {
  const wt_gpu_step *s;
  wt_gpu_program_steps(p, &s);
  return &s[i];
}
const char *wtw_gpu_step_program(const wt_gpu_program *p, int i) { return step(p, i)->d.program; }
int wtw_gpu_step_groups(const wt_gpu_program *p, int i, int axis) { return (int)step(p, i)->d.groups[axis]; }
const uint32_t *wtw_gpu_step_uniform(const wt_gpu_program *p, int i) { return step(p, i)->d.uniform; }
int wtw_gpu_step_bind_count(const wt_gpu_program *p, int i) { return step(p, i)->d.n_bind; }
int wtw_gpu_step_draws(const wt_gpu_program *p, int i) { return step(p, i)->d.draws; }

/* A run's Dropout key for a dispatch that draws (kernel.h): wt_dropout_key(seed, the session's
 * next draw) into out[2], low word first. */
void wtw_session_dropout_key(wt_session *s, uint32_t seed_lo, uint32_t seed_hi, uint32_t *out) {
  uint64_t key = wt_dropout_key((uint64_t)seed_hi << 32 | seed_lo, wt_session_next_draw(s));
  out[0] = (uint32_t)key;
  out[1] = (uint32_t)(key >> 32);
}

/* A region's field (0: buffer, -1 for the placeholder; 1: offset; 2: bytes) of: what 0, step i's
 * binding b; what 1, graph input i; what 2, graph output i. */
double wtw_gpu_region(const wt_gpu_program *p, int what, int i, int b, int field) {
  const wt_tensor *type;
  wt_gpu_region r = what == 0 ? step(p, i)->regions[b]
                    : what == 1 ? wt_gpu_program_input(p, i)
                                : wt_gpu_program_output(p, i, &type);
  return field == 0 ? (double)r.buffer : field == 1 ? (double)r.offset : (double)r.bytes;
}

/* Graph output i's dtype (field -1), rank (-2) or dim `field`. */
double wtw_gpu_output_type(const wt_gpu_program *p, int i, int field) {
  const wt_tensor *t;
  wt_gpu_program_output(p, i, &t);
  return field == -1 ? t->dtype : field == -2 ? t->rank : (double)t->dims[field];
}
