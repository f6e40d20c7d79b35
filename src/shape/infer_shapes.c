/* Symbolic shape inference over the IR (see wt_graph_infer_shapes in shape.h): the shape pass
 * (concrete sizes), run with stand-in sizes for symbolic dims, three times, so that every op's
 * own infer function is the only definition of its shapes. The pass neither refuses nor
 * allocates values of stand-in sizes (wt_shape_pass.stand_ins): they are nobody's sizes.
 *
 * A dim that follows one symbol linearly (Reshape of [batch, 8, V] to [batch*8, V]) is named
 * by its expression, "batch*8" (or "batch*8+1"); a graph input whose dim carries such a name
 * (a loss target shaped like that output) gets the matching stand-in, so the two agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

#define MAX_SYMS 64

typedef struct syms {
  const char *name[MAX_SYMS];
  int n;
} syms;

static int sym_find(const syms *s, const char *name, size_t len) {
  for (int i = 0; i < s->n; i++)
    if (s->name[i] && strlen(s->name[i]) == len && !strncmp(s->name[i], name, len)) return i;
  return -1;
}

static int sym_index(syms *s, const char *name) {
  int i = name ? sym_find(s, name, strlen(name)) : -1;
  if (i >= 0) return i;
  if (s->n == MAX_SYMS) return -1;
  s->name[s->n] = name; /* NULL: an anonymous dim, its own symbol */
  return s->n++;
}

/* Stand-ins: distinct sizes per symbol, different in each of the PASSES passes, unlikely as real
 * sizes. A model may cap a symbolic dim (rotary tables or position embeddings sliced to seq:
 * seq <= 512 for BERT), so when a level's passes fail, the next tries smaller ones. */
#define PASSES 3
#define LEVELS 3
static const int64_t stand_in_base[LEVELS][PASSES] = {{1009, 1511, 2003}, {101, 131, 163}, {11, 17, 23}};
static int64_t stand_in(int level, int pass, int sym) {
  return stand_in_base[level][pass] + 2 * (int64_t)sym * (pass + 1);
}

/* "sym*a" or "sym*a+b" / "sym*a-b" with sym a known symbol: its stand-in in this pass. */
static int expr_stand_in(const syms *s, const char *e, int level, int pass, int64_t *out) {
  const char *star = e ? strchr(e, '*') : NULL;
  if (!star) return 0;
  int sym = sym_find(s, e, (size_t)(star - e));
  if (sym < 0) return 0;
  char *end;
  long long a = strtoll(star + 1, &end, 10), b = 0;
  if (end == star + 1 || a <= 0) return 0;
  if (*end == '+' || *end == '-') b = strtoll(end, &end, 10);
  if (*end) return 0;
  *out = a * stand_in(level, pass, sym) + b;
  return 1;
}

/* Names a dim that changed between passes (d[p] in pass p): the symbol it follows linearly in
 * every pass, if exactly one. */
static const char *name_dim(const syms *s, int level, const int64_t *d, char *buf, size_t cap) {
  int hit = -1;
  long long a = 0, b = 0;
  for (int k = 0; k < s->n; k++) {
    if (!s->name[k]) continue;
    int64_t s0 = stand_in(level, 0, k), s1 = stand_in(level, 1, k);
    if ((d[1] - d[0]) % (s1 - s0)) continue;
    long long ak = (d[1] - d[0]) / (s1 - s0), bk = d[0] - ak * s0;
    if (ak <= 0 || bk < -1000000 || bk > 1000000) continue;
    int linear = 1;
    for (int p = 2; p < PASSES; p++) linear &= d[p] == ak * stand_in(level, p, k) + bk;
    if (!linear) continue;
    if (hit >= 0) return NULL; /* ambiguous */
    hit = k, a = ak, b = bk;
  }
  if (hit < 0) return NULL;
  if (a == 1 && b == 0) return s->name[hit];
  if (b) snprintf(buf, cap, "%s*%lld%+lld", s->name[hit], a, b);
  else snprintf(buf, cap, "%s*%lld", s->name[hit], a);
  return buf;
}

/* The passes of one level: graph input k described with the level's stand-ins in in[p][k];
 * sym[k * WT_MAX_RANK + d] is the symbol of its dim d (an anonymous dim has its own). */
static int run_level(const wt_graph *g, const syms *sy, const int *sym, int level,
                     wt_tensor *in[PASSES], wt_shape_pass sp[PASSES]) {
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    for (int pass = 0; pass < PASSES; pass++) {
      in[pass][k] = (wt_tensor){.dtype = v->dtype, .rank = v->rank};
      for (int d = 0; d < v->rank; d++) {
        int64_t e;
        if (v->dims[d] >= 0) in[pass][k].dims[d] = v->dims[d];
        else if (expr_stand_in(sy, wt_value_dim_param(v, d), level, pass, &e)) in[pass][k].dims[d] = e;
        else in[pass][k].dims[d] = stand_in(level, pass, sym[k * WT_MAX_RANK + d]);
      }
    }
  }
  int rc = WT_OK;
  for (int pass = 0; pass < PASSES && rc == WT_OK; pass++) {
    rc = wt_shape_pass_begin(&sp[pass], g, in[pass], sizeof(wt_shape_step));
    sp[pass].stand_ins = 1;
    if (rc == WT_OK) rc = wt_shape_pass_walk(&sp[pass]);
  }
  return rc;
}

int wt_graph_infer_shapes(wt_graph *g) {
  syms sy = {0};
  wt_tensor *in[PASSES];
  wt_shape_pass sp[PASSES] = {{0}};
  int *sym = calloc((size_t)g->n_inputs * WT_MAX_RANK + 1, sizeof(int));
  char *first = NULL; /* the first level's error, said when every level fails */
  int rc = sym ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int p = 0; p < PASSES; p++) {
    in[p] = calloc((size_t)g->n_inputs + 1, sizeof(wt_tensor));
    if (!in[p]) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  if (rc) goto out;
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    if (!wt_dtype_supported(v->dtype) || v->rank < 0) {
      rc = wt_errorf(WT_ERR_SHAPE, "cannot infer shapes: graph input '%s' has no declared %s",
                     v->name, v->rank < 0 ? "shape" : "element type");
      goto out;
    }
  }
  /* Plain symbols first, so expressions over them can be evaluated. */
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    for (int d = 0; d < v->rank; d++)
      if (v->dims[d] < 0 && !(wt_value_dim_param(v, d) && strchr(wt_value_dim_param(v, d), '*')))
        sym[k * WT_MAX_RANK + d] = sym_index(&sy, wt_value_dim_param(v, d));
  }
  int level = 0;
  for (; level < LEVELS; level++) {
    rc = run_level(g, &sy, sym, level, in, sp);
    if (rc == WT_OK) break;
    if (rc == WT_ERR_NO_MEMORY || rc == WT_ERR_UNSUPPORTED) goto out; /* not the sizes */
    if (!first) first = wt_strdup(wt_error_message());
    for (int p = 0; p < PASSES; p++) wt_shape_pass_release(&sp[p]);
  }
  if (rc) {
    if (first) rc = wt_errorf(rc, "%s (inferring shapes for symbolic dims, which took stand-in sizes from "
                              "%lld down to %lld)", first, (long long)stand_in_base[0][0],
                              (long long)stand_in_base[LEVELS - 1][0]);
    goto out;
  }
  for (int v = 0; v < g->n_values; v++) {
    wt_value *val = &g->values[v];
    int absent = 0;
    for (int p = 0; p < PASSES; p++) absent |= sp[p].storage[v] == WT_ST_NONE;
    if (absent || (val->flags & (WT_VALUE_INITIALIZER | WT_VALUE_GRAPH_INPUT))) continue;
    const wt_tensor *a = &sp[0].vals[v];
    val->dtype = a->dtype;
    /* a Cast the pass left as a float16 view (WT_OP_WIDEN) still declares its own type */
    int p = val->producer;
    if (a->dtype == WT_FLOAT16 && p >= 0 && p < g->n_nodes) {
      const wt_op_def *op = wt_op_find(g->nodes[p].domain, g->nodes[p].op_type);
      if (op && (op->flags & WT_OP_WIDEN)) val->dtype = (int8_t)wt_attr_int(&g->nodes[p], "to", a->dtype);
    }
    int64_t dims[WT_MAX_RANK], across[WT_MAX_RANK][PASSES];
    for (int d = 0; d < a->rank; d++) {
      dims[d] = a->dims[d];
      for (int q = 0; q < PASSES; q++) {
        across[d][q] = sp[q].vals[v].dims[d];
        if (across[d][q] != a->dims[d]) dims[d] = -1;
      }
    }
    rc = wt_value_set_shape(g, v, a->rank, dims);
    for (int d = 0; d < a->rank && rc == WT_OK; d++) {
      char buf[256];
      if (dims[d] < 0) rc = wt_value_set_dim_param(g, v, d, name_dim(&sy, level, across[d], buf, sizeof buf));
    }
    if (rc) goto out;
  }
out:
  for (int p = 0; p < PASSES; p++) {
    wt_shape_pass_release(&sp[p]);
    free(in[p]);
  }
  free(sym);
  free(first);
  return rc;
}
