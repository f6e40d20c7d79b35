/* Running a plan (see planner.h), and what a caller reads of a built one. A run allocates
 * nothing: values' bytes are where the plan put them (an arena offset, a constant, the caller's
 * buffer patched in here), each step's descriptions are rebuilt in one buffer (p->io). */
#include "runtime/plan_internal.h"

#include "base/pool.h"

/* Where value v's bytes are, in a built plan. */
static inline void *pval_data(const wt_plan *p, int v) {
  if (p->sp.storage[v] != WT_ST_ARENA) return p->pv[v].at.ptr;
  return p->arena ? p->arena + p->pv[v].at.off : NULL;
}

static inline void pval_get(const wt_plan *p, int v, wt_tensor *t) {
  type_of(p, v, t);
  t->data = pval_data(p, v);
}

int wt_plan_value(const wt_plan *p, int v, wt_tensor *out) {
  if (v < 0 || v >= p->sp.g->n_values || p->sp.storage[v] == WT_ST_NONE) return 0;
  pval_get(p, v, out);
  return 1;
}

int wt_plan_matches(const wt_plan *p, const wt_tensor *inputs) {
  for (int k = 0; k < p->sp.g->n_inputs; k++) {
    wt_tensor built_for, *d = &built_for;
    type_of(p, p->sp.g->inputs[k], d);
    if (d->dtype != inputs[k].dtype || !wt_same_shape(d, &inputs[k])) return 0;
    if (p->sp.keyed[k] && memcmp(p->keyed_data[k], inputs[k].data, wt_nbytes(d)) != 0) return 0;
  }
  return 1;
}

void wt_plan_bind_arena(wt_plan *p, void *arena) { p->arena = arena; }

static int run_steps(wt_plan *p);

/* The steps run holding the runner's thread pool (base/pool.h): their kernels split their work
 * over it, the calling thread's GEMM buffers are its, and a plan run on another thread with the
 * same pool waits for this one. */
int wt_plan_run(wt_plan *p, const wt_tensor *inputs) {
  const wt_graph *g = p->sp.g;
  if (!p->arena && p->arena_bytes)
    return wt_errorf(WT_ERR_INTERNAL, "the plan has no arena bound (wt_plan_bind_arena)");
  for (int k = 0; k < g->n_inputs; k++) p->pv[g->inputs[k]].at.ptr = inputs[k].data;
  struct wt_pool *pool = p->sp.exec ? p->sp.exec->pool : NULL;
  if (wt_pool_hold(pool) != 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory starting the thread pool");
  int rc = run_steps(p);
  wt_pool_release(pool);
  return rc;
}

static int run_steps(wt_plan *p) {
  const wt_graph *g = p->sp.g;
  for (int i = 0; i < p->n_alias; i++) p->pv[p->alias[2 * i]].at.ptr = p->pv[p->alias[2 * i + 1]].at.ptr;
  for (int s = 0; s < p->sp.n_steps; s++) {
    wt_step *st = &plan_steps(p)[s];
    const wt_node *n = st->s.node;
    wt_tensor *in = p->io, *out = p->io + st->s.n_in;
    if (st->s.view) p->pv[n->outputs[0]].at.ptr = pval_data(p, n->inputs[0]);
    if (st->s.mark) continue;
    for (int i = 0; i < st->s.n_in; i++) {
      if (n->inputs[i] >= 0) pval_get(p, n->inputs[i], &in[i]);
      else in[i] = (wt_tensor){.dtype = WT_UNDEFINED};
    }
    uint8_t *scratch = st->s.scratch_bytes ? p->arena + st->scratch_off : NULL;
    size_t omitted = (size_t)st->omitted_at;
    for (int o = 0; o < st->s.n_out; o++) {
      if (n->outputs[o] >= 0) {
        pval_get(p, n->outputs[o], &out[o]);
      } else {
        out[o] = st->s.out[o];
        out[o].data = scratch + omitted;
        omitted += omitted_bytes(&out[o]);
      }
    }
    wt_run_ctx rc = {.node = n, .params = st->s.params, .n_in = st->s.n_in, .in = in,
                     .n_out = st->s.n_out, .out = out, .scratch = scratch, .exec = p->sp.exec};
    int r = st->s.kernel->run(&rc);
    if (r) return wt_node_error(r, n, (int)wt_graph_opset(g, n->domain));
  }
  return WT_OK;
}

const wt_tensor *wt_plan_output(const wt_plan *p, int k, void **data) {
  int v = p->sp.g->outputs[k];
  *data = pval_data(p, v);
  return &p->outs[k];
}

size_t wt_plan_arena_bytes(const wt_plan *p) { return p->arena_bytes; }

int wt_plan_fused_count(const wt_plan *p) { return p->n_fused; }

size_t wt_plan_live_peak_bytes(const wt_plan *p) { return p->live_peak; }
