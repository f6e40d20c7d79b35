/* Reads per value, which the planner's passes ask of a plan's steps (plan_fuse.c,
 * plan_compact.c): the lowest of its files, so that none of them calls another's. */
#include <stdlib.h>

#include "runtime/plan_internal.h"

static void count_read(uint8_t *readers, int v, int n) {
  readers[v] = readers[v] > 255 - n ? 255 : (uint8_t)(readers[v] + n);
}

/* How many times each value is read (up to 255: callers ask 0, 1 or more): once per step
 * input, twice for a graph output (the caller reads those too). calloc'd; NULL when out of
 * memory. One byte per value: it is built beside the plan's other arrays. */
uint8_t *wt_pl_value_readers(const wt_plan *p) {
  const wt_graph *g = p->sp.g;
  const wt_step *steps = plan_steps(p);
  uint8_t *readers = calloc((size_t)g->n_values + 1, 1);
  if (!readers) return NULL;
  for (int s = 0; s < p->sp.n_steps; s++)
    for (int i = 0; i < steps[s].s.n_in; i++)
      if (steps[s].s.node->inputs[i] >= 0) count_read(readers, steps[s].s.node->inputs[i], 1);
  for (int k = 0; k < g->n_outputs; k++) count_read(readers, g->outputs[k], 2);
  return readers;
}
