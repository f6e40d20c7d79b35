/* The planner's private parts, shared by its passes (one file each):
 *   plan_build.c    the order of the passes (wt_plan_build), the omitted outputs' room, freeing
 *   plan_readers.c  how many times each value is read (the passes below ask)
 *   plan_fuse.c     steps absorbing the next one (GEMM + Relu), transposes read in place,
 *                   accumulators written in place
 *   plan_arena.c    arena offsets: lifetimes, in-place ops, the offline layout
 *   plan_compact.c  a built plan's 8 bytes per value, params and constants in one block each,
 *                   everything kept moved down into the room the build freed
 *   plan_run.c      running a plan, and what a caller reads of it
 * Shapes, folding and the steps to run come from the shape pass (shape/shape.h).
 *
 * Storage of a value is a wt_storage class of the shape pass (graph input: the caller's buffer,
 * patched at every run; initializer; folded constant; arena slot, its offset fixed at plan time
 * and reused once the value is dead; view of its input) or ST_ALIAS below. */
#ifndef WT_RUNTIME_PLAN_INTERNAL_H
#define WT_RUNTIME_PLAN_INTERNAL_H

#include <string.h>

#include "runtime/planner.h"
#include "shape/shape.h"

/* Written straight into a graph input's buffer (see wt_pl_alias_accumulators): the planner's own
 * storage class, after the shape pass's. */
enum { ST_ALIAS = WT_ST_VIEW + 1 };

/* A step of the plan: the shape pass's, then where its scratch is. */
typedef struct wt_step {
  wt_shape_step s;               /* s.mark: the step before runs it (wt_pl_fuse_steps): skipped */
  size_t scratch_off;
  long omitted_at;               /* where omitted optional outputs start in the scratch; -1: none */
} wt_step;

/* A value of a built plan: its dtype and shape (an entry of the plan's table of the distinct
 * ones) and where its bytes are. */
typedef struct wt_pval {
  union {
    void *ptr;                   /* the data (inputs, views and aliases: set by each run) */
    size_t off;                  /* WT_ST_ARENA: offset in the arena */
  } at;
  uint32_t type;
} wt_pval;

struct wt_plan {
  wt_shape_pass sp;              /* the graph, every value's storage class, the steps (wt_step);
                                    while building also the values' full descriptions (sp.vals)
                                    and the folded constants, until wt_pl_compact_values */
  wt_pval *pv;                   /* .type: where the value's entry starts in types */
  int64_t *types;                /* the distinct (dtype, shape)s of the values, packed: per entry
                                    int32 dtype and rank, then rank dims */
  wt_tensor *outs;               /* the graph outputs' descriptions (data NULL) */
  uint8_t *arena;                /* the arena it is bound to (the session's, not owned) */
  size_t arena_bytes;
  size_t live_peak;              /* most arena bytes live at once (arena_bytes less fragmentation) */
  void *static_block;            /* once built: the folded constants a run reads */
  /* what the plan was built for: sp.keyed, and */
  void **keyed_data;             /* those inputs' bytes */
  int *alias;                    /* pairs (value, graph input value) it is written into */
  int n_alias;
  int n_fused;                   /* steps not run (wt_pl_fuse_steps, wt_pl_fold_transposes) */
  wt_tensor *io;                 /* a run's inputs and outputs of the current step */
};

static inline wt_step *plan_steps(const wt_plan *p) { return p->sp.steps; }

static inline size_t round64(size_t n) { return (n + 63) / 64 * 64; }
/* The room of an omitted output in its step's scratch. */
static inline size_t omitted_bytes(const wt_tensor *t) { return round64(wt_nbytes(t) ? wt_nbytes(t) : 1); }

/* Value v's dtype and shape in a built plan (dims past the rank zero, data NULL). */
static inline void type_of(const wt_plan *p, int v, wt_tensor *t) {
  const int64_t *e = &p->types[p->pv[v].type];
  int32_t head[2];
  memcpy(head, e, sizeof head);
  t->dtype = head[0];
  t->rank = head[1];
  for (int d = 0; d < WT_MAX_RANK; d++) t->dims[d] = d < head[1] ? e[1 + d] : 0;
  t->data = NULL;
}

/* The most inputs and outputs a step has: the room of a run's descriptions (p->io). */
static inline int most_io(const wt_plan *p) {
  const wt_step *steps = plan_steps(p);
  int most = 0;
  for (int s = 0; s < p->sp.n_steps; s++)
    if (steps[s].s.n_in + steps[s].s.n_out > most) most = steps[s].s.n_in + steps[s].s.n_out;
  return most;
}

/* The passes, in the order wt_plan_build runs them (each explained where defined). */
uint8_t *wt_pl_value_readers(const wt_plan *p); /* plan_readers.c: reads per value, for the rest */
int wt_pl_fuse_steps(wt_plan *p);               /* plan_fuse.c */
int wt_pl_fold_transposes(wt_plan *p);          /* plan_fuse.c */
void wt_pl_gather_params(wt_plan *p);           /* plan_compact.c */
void wt_pl_alias_accumulators(wt_plan *p);      /* plan_fuse.c */
int wt_pl_compact_values(wt_plan *p);           /* plan_compact.c */
int wt_pl_assign_arena(wt_plan *p);             /* plan_arena.c */
void wt_pl_settle(wt_plan *p);                  /* plan_compact.c */

#endif
