/* Symbolic shape inference over the IR (see wt_graph_infer_shapes in shape.h): the shape pass
 * (concrete sizes), run with stand-in sizes for symbolic dims, twice, so that every op's own
 * infer function is the only definition of its shapes.
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

/* Stand-ins: distinct primes, different between the two passes, unlikely as real sizes. */
static int64_t stand_in(int pass, int sym) { return (pass ? 2003 : 1009) + 2 * (int64_t)sym * (pass ? 3 : 1); }

/* "sym*a" or "sym*a+b" / "sym*a-b" with sym a known symbol: its stand-in in this pass. */
static int expr_stand_in(const syms *s, const char *e, int pass, int64_t *out) {
  const char *star = e ? strchr(e, '*') : NULL;
  if (!star) return 0;
  int sym = sym_find(s, e, (size_t)(star - e));
  if (sym < 0) return 0;
  char *end;
  long long a = strtoll(star + 1, &end, 10), b = 0;
  if (end == star + 1 || a <= 0) return 0;
  if (*end == '+' || *end == '-') b = strtoll(end, &end, 10);
  if (*end) return 0;
  *out = a * stand_in(pass, sym) + b;
  return 1;
}

/* Names a dim that changed between passes: the symbol it follows linearly, if exactly one. */
static const char *name_dim(const syms *s, int64_t d0, int64_t d1, char *buf, size_t cap) {
  int hit = -1;
  long long a = 0, b = 0;
  for (int k = 0; k < s->n; k++) {
    if (!s->name[k]) continue;
    int64_t s0 = stand_in(0, k), s1 = stand_in(1, k);
    if ((d1 - d0) % (s1 - s0)) continue;
    long long ak = (d1 - d0) / (s1 - s0), bk = d0 - ak * s0;
    if (ak <= 0 || bk < -1000000 || bk > 1000000) continue;
    if (hit >= 0) return NULL; /* ambiguous */
    hit = k, a = ak, b = bk;
  }
  if (hit < 0) return NULL;
  if (a == 1 && b == 0) return s->name[hit];
  if (b) snprintf(buf, cap, "%s*%lld%+lld", s->name[hit], a, b);
  else snprintf(buf, cap, "%s*%lld", s->name[hit], a);
  return buf;
}

int wt_graph_infer_shapes(wt_graph *g) {
  syms sy = {0};
  wt_tensor *in[2] = {calloc((size_t)g->n_inputs + 1, sizeof(wt_tensor)),
                      calloc((size_t)g->n_inputs + 1, sizeof(wt_tensor))};
  wt_shape_pass sp[2] = {{0}, {0}};
  int rc = WT_OK;
  if (!in[0] || !in[1]) {
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
  }
  /* Plain symbols first, so expressions over them can be evaluated. */
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    for (int d = 0; d < v->rank; d++)
      if (v->dims[d] < 0 && !(wt_value_dim_param(v, d) && strchr(wt_value_dim_param(v, d), '*'))) sym_index(&sy, wt_value_dim_param(v, d));
  }
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    for (int pass = 0; pass < 2; pass++) {
      in[pass][k].dtype = v->dtype;
      in[pass][k].rank = v->rank;
      for (int d = 0; d < v->rank; d++) {
        int64_t e;
        if (v->dims[d] >= 0) in[pass][k].dims[d] = v->dims[d];
        else if (expr_stand_in(&sy, wt_value_dim_param(v, d), pass, &e)) in[pass][k].dims[d] = e;
        else in[pass][k].dims[d] = stand_in(pass, sym_index(&sy, wt_value_dim_param(v, d)));
      }
    }
  }
  for (int pass = 0; pass < 2 && rc == WT_OK; pass++) {
    rc = wt_shape_pass_begin(&sp[pass], g, in[pass], sizeof(wt_shape_step));
    if (rc == WT_OK) rc = wt_shape_pass_walk(&sp[pass]);
  }
  if (rc) goto out;
  for (int v = 0; v < g->n_values; v++) {
    wt_value *val = &g->values[v];
    const wt_tensor *a = &sp[0].vals[v], *b = &sp[1].vals[v];
    if (sp[0].storage[v] == WT_ST_NONE || sp[1].storage[v] == WT_ST_NONE ||
        (val->flags & (WT_VALUE_INITIALIZER | WT_VALUE_GRAPH_INPUT)))
      continue;
    val->dtype = a->dtype;
    /* a Cast the pass left as a float16 view (WT_OP_WIDEN) still declares its own type */
    int p = val->producer;
    if (a->dtype == WT_FLOAT16 && p >= 0 && p < g->n_nodes) {
      const wt_op_def *op = wt_op_find(g->nodes[p].domain, g->nodes[p].op_type);
      if (op && (op->flags & WT_OP_WIDEN)) val->dtype = (int8_t)wt_attr_int(&g->nodes[p], "to", a->dtype);
    }
    int64_t dims[WT_MAX_RANK];
    for (int d = 0; d < a->rank; d++) dims[d] = a->dims[d] == b->dims[d] ? a->dims[d] : -1;
    rc = wt_value_set_shape(g, v, a->rank, dims);
    for (int d = 0; d < a->rank && rc == WT_OK; d++) {
      char buf[256];
      if (dims[d] < 0) rc = wt_value_set_dim_param(g, v, d, name_dim(&sy, a->dims[d], b->dims[d], buf, sizeof buf));
    }
    if (rc) goto out;
  }
out:
  wt_shape_pass_release(&sp[0]);
  wt_shape_pass_release(&sp[1]);
  free(in[0]);
  free(in[1]);
  return rc;
}
