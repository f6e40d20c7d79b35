/* Symbolic shape inference over the IR (see wt_graph_infer_shapes in planner.h): the planner's
 * concrete inference, run with stand-in sizes for symbolic dims, twice, so that every op's
 * own infer function is the only definition of its shapes. */
#include <stdlib.h>
#include <string.h>

#include "runtime/planner.h"

#define MAX_SYMS 64

typedef struct syms {
  const char *name[MAX_SYMS];
  int n;
} syms;

static int sym_index(syms *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (name && s->name[i] && strcmp(s->name[i], name) == 0) return i;
  if (s->n == MAX_SYMS) return -1;
  s->name[s->n] = name; /* NULL: an anonymous dim, its own symbol */
  return s->n++;
}

/* Stand-ins: distinct primes, different between the two passes, unlikely as real sizes. */
static int64_t stand_in(int pass, int sym) { return (pass ? 2003 : 1009) + 2 * (int64_t)sym * (pass ? 3 : 1); }

int wt_graph_infer_shapes(wt_graph *g) {
  syms sy = {0};
  int *sym_of = calloc((size_t)g->n_inputs * WT_MAX_RANK + 1, sizeof(int));
  wt_tensor *in[2] = {calloc((size_t)g->n_inputs + 1, sizeof(wt_tensor)),
                      calloc((size_t)g->n_inputs + 1, sizeof(wt_tensor))};
  wt_plan *p[2] = {NULL, NULL};
  int rc = WT_OK;
  if (!sym_of || !in[0] || !in[1]) {
    rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    goto out;
  }
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    if (!wt_dtype_supported(v->dtype) || v->rank < 0) {
      rc = wt_errorf(WT_ERR_SHAPE, "cannot infer shapes: graph input '%s' has no declared %s",
                     v->name, v->rank < 0 ? "shape" : "element type");
      goto out;
    }
    for (int d = 0; d < v->rank; d++) sym_of[k * WT_MAX_RANK + d] = v->dims[d] >= 0 ? -1 : sym_index(&sy, v->dim_param[d]);
    for (int pass = 0; pass < 2; pass++) {
      in[pass][k].dtype = v->dtype;
      in[pass][k].rank = v->rank;
      for (int d = 0; d < v->rank; d++) {
        int s = sym_of[k * WT_MAX_RANK + d];
        in[pass][k].dims[d] = s < 0 ? v->dims[d] : stand_in(pass, s);
      }
    }
  }
  for (int pass = 0; pass < 2 && rc == WT_OK; pass++) rc = wt_plan_build_shapes(g, in[pass], &p[pass]);
  if (rc) goto out;
  for (int v = 0; v < g->n_values; v++) {
    wt_value *val = &g->values[v];
    const wt_tensor *a = wt_plan_value(p[0], v), *b = wt_plan_value(p[1], v);
    if (!a || !b || (val->flags & (WT_VALUE_INITIALIZER | WT_VALUE_GRAPH_INPUT))) continue;
    val->dtype = a->dtype;
    val->rank = a->rank;
    for (int d = 0; d < a->rank; d++) {
      free(val->dim_param[d]);
      val->dim_param[d] = NULL;
      if (a->dims[d] == b->dims[d]) {
        val->dims[d] = a->dims[d];
        continue;
      }
      val->dims[d] = -1;
      for (int s = 0; s < sy.n; s++)
        if (a->dims[d] == stand_in(0, s) && b->dims[d] == stand_in(1, s) && sy.name[s])
          val->dim_param[d] = wt_strdup(sy.name[s]);
    }
  }
out:
  wt_plan_free(p[0]);
  wt_plan_free(p[1]);
  free(in[0]);
  free(in[1]);
  free(sym_of);
  return rc;
}
