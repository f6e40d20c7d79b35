/* Plan building (see planner.h): the shape pass, then the planner's passes in order, each in
 * its file (plan_internal.h). The order is part of the memory budget: a built plan sits in
 * room the build's big temporaries freed (wt_pl_compact_values, wt_pl_settle). */
#include <stdlib.h>

#include "runtime/plan_internal.h"

/* An omitted optional output (ConvGrad's dX of a first layer ...) is still written by kernels
 * that do not skip it (the shape pass kept its description): it gets room after the step's
 * scratch, live for that step only. */
static void reserve_omitted(wt_step *st) {
  size_t at = round64(st->s.scratch_bytes), end = at;
  for (int o = 0; o < st->s.n_out; o++) /* an empty one still gets a (valid) address */
    if (st->s.node->outputs[o] < 0) end += omitted_bytes(&st->s.out[o]);
  st->omitted_at = end == at ? -1 : (long)at;
  st->s.scratch_bytes = end;
}

/* The run's room for one step's input and output descriptions. */
static int size_io(wt_plan *p) {
  p->io = calloc((size_t)most_io(p) + 1, sizeof *p->io);
  return p->io ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
}

void wt_plan_free(wt_plan *p) {
  if (!p) return;
  const wt_graph *g = p->sp.g;
  void *params_block = p->sp.params_block;
  wt_shape_pass_release(&p->sp); /* the steps (their params not, once in the block) */
  free(params_block);
  free(p->io);
  free(p->static_block);
  free(p->pv);
  free(p->types);
  free(p->outs);
  free(p->alias);
  if (p->keyed_data)
    for (int k = 0; k < g->n_inputs; k++) free(p->keyed_data[k]);
  free(p->keyed_data);
  free(p);
}

int wt_plan_build(const wt_graph *g, const wt_tensor *inputs, const wt_exec *exec, wt_plan **out) {
  *out = NULL;
  WT_TRY(wt_plan_check_kernels(g, &wt_backend_cpu));
  wt_plan *p = calloc(1, sizeof *p);
  if (!p) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  int rc = wt_shape_pass_begin(&p->sp, g, inputs, sizeof(wt_step));
  if (rc) {
    free(p);
    return rc;
  }
  p->keyed_data = calloc((size_t)g->n_inputs + 1, sizeof(void *));
  if (!p->keyed_data) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  p->sp.exec = exec;
  if ((rc = wt_shape_pass_walk(&p->sp))) goto fail;
  for (int s = 0; s < p->sp.n_steps; s++) reserve_omitted(&plan_steps(p)[s]);
  p->n_fused = wt_pl_fuse_steps(p);
  p->n_fused += wt_pl_fold_transposes(p);
  wt_pl_gather_params(p);
  wt_pl_alias_accumulators(p);
  /* Values read by the graph only through keyed inputs: remember those inputs' bytes. */
  for (int k = 0; k < g->n_inputs; k++) {
    if (!p->sp.keyed[k]) continue;
    size_t nb = wt_nbytes(&inputs[k]);
    p->keyed_data[k] = malloc(nb ? nb : 1);
    if (!p->keyed_data[k]) {
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      goto fail;
    }
    if (nb) memcpy(p->keyed_data[k], inputs[k].data, nb);
    p->sp.vals[g->inputs[k]].data = NULL;
  }
  p->sp.inputs = NULL; /* the caller's: the pass is done with them */
  rc = size_io(p);
  /* compacted first: the arena layout's temporaries then take the room of the full descriptions */
  if (rc == WT_OK) rc = wt_pl_compact_values(p);
  if (rc == WT_OK) rc = wt_pl_assign_arena(p);
  if (rc) goto fail;
  wt_pl_settle(p);
  *out = p;
  return WT_OK;
fail:
  wt_plan_free(p);
  return rc;
}
