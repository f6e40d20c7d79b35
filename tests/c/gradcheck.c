/* Finite-difference gradient checker (see gradcheck.h). */
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "base/status.h"
#include "io/onnx_io.h"
#include "shape/shape.h"
#include "webtrain.h"

/* Per-op ctests: WT_GRADCHECK_MODE=list prints the op of every check ("gradcheck-op: <op_type>
 * <domain>", read by CMake and by unit/test_grad_coverage) and runs none;
 * WT_GRADCHECK_OP=Name runs only the checks of that op (and fails if there is none). */
static int g_matched = 0;
static void require_match(void) {
  if (getenv("WT_GRADCHECK_OP") && !getenv("WT_GRADCHECK_MODE") && g_matched == 0) {
    fprintf(stderr, "no gradcheck of op %s in this test\n", getenv("WT_GRADCHECK_OP"));
    _Exit(1);
  }
}

static int selected(const char *op_type, const char *domain) {
  static int registered = 0;
  const char *mode = getenv("WT_GRADCHECK_MODE");
  if (mode && !strcmp(mode, "list")) {
    printf("gradcheck-op: %s %s\n", op_type, domain && domain[0] ? domain : "ai.onnx");
    return 0;
  }
  const char *only = getenv("WT_GRADCHECK_OP");
  if (!only) return 1;
  if (!registered) {
    atexit(require_match);
    registered = 1;
  }
  if (strcmp(only, op_type)) return 0;
  g_matched++;
  return 1;
}

static unsigned rng_state;
static float frand(float lo, float hi) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)((rng_state >> 8) & 0xffffff) / (float)0xffffff;
}

static int add_init(wt_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
                    const void *data) {
  int v = wt_graph_value(g, name);
  wt_value *val = &g->values[v];
  wt_tensor t = {.dtype = dtype, .rank = rank};
  memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
  val->nbytes = wt_nbytes(&t);
  val->data = malloc(val->nbytes ? val->nbytes : 1);
  if (val->nbytes) memcpy(val->data, data, val->nbytes);
  val->dtype = dtype;
  wt_value_set_shape(g, v, rank, dims);
  val->flags |= WT_VALUE_INITIALIZER;
  return v;
}

static double run_loss(wt_session *s, int n_diff, float **xs, const gc_arg **da, int *ok) {
  for (int k = 0; k < n_diff; k++)
    if (wt_session_set_input(s, k, WT_FLOAT, da[k]->rank, da[k]->dims, xs[k])) *ok = 0;
  if (!*ok || wt_session_run(s)) {
    fprintf(stderr, "  run failed: %s\n", wt_last_error());
    *ok = 0;
    return 0;
  }
  int32_t dt, rank;
  const int64_t *dims;
  const void *data;
  wt_session_output(s, 0, &dt, &rank, &dims, &data);
  return *(const float *)data;
}

int gradcheck(const char *label, const char *op_type, const gc_opts *opts, int n_in,
              const gc_arg *args, gc_attrs_fn attrs) {
  if (!selected(op_type, opts ? opts->domain : NULL)) return 0;
  gc_opts o = opts ? *opts : (gc_opts){0};
  if (!o.opset) o.opset = 17;
  if (!o.domain) o.domain = "";
  if (!o.n_out) o.n_out = 1;
  if (o.eps == 0) o.eps = 1e-2;
  if (o.rtol == 0) o.rtol = 2e-2;
  if (o.atol == 0) o.atol = 2e-3;
  rng_state = o.seed ? o.seed : 12345u;

  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", o.opset);
  if (o.domain[0]) wt_graph_set_opset(g, o.domain, 1);
  int ins[16], outs[8], diff_vals[16];
  float *xs[16] = {0}, *grads[16] = {0};
  const gc_arg *da[16];
  int n_diff = 0, failed = 0;
  char name[64];
  for (int i = 0; i < n_in; i++) {
    const gc_arg *a = &args[i];
    int dtype = a->dtype ? a->dtype : WT_FLOAT;
    if (a->absent) {
      ins[i] = -1;
      continue;
    }
    snprintf(name, sizeof name, "x%d", i);
    wt_tensor t = {.dtype = dtype, .rank = a->rank};
    memcpy(t.dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
    int64_t n = wt_numel(&t);
    if (a->constant || dtype != WT_FLOAT) {
      float *tmp = NULL;
      const void *data = a->data;
      if (!data) {
        tmp = malloc(sizeof(float) * (size_t)(n ? n : 1));
        for (int64_t e = 0; e < n; e++) tmp[e] = frand(a->hi > a->lo ? a->lo : -1, a->hi > a->lo ? a->hi : 1);
        data = tmp;
      }
      ins[i] = add_init(g, name, dtype, a->rank, a->dims, data);
      free(tmp);
      continue;
    }
    int v = wt_graph_value(g, name);
    g->values[v].dtype = WT_FLOAT;
    wt_value_set_shape(g, v, a->rank, a->dims);
    wt_graph_add_input(g, v);
    ins[i] = v;
    xs[n_diff] = malloc(sizeof(float) * (size_t)(n ? n : 1));
    grads[n_diff] = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t e = 0; e < n; e++)
      xs[n_diff][e] = a->data ? ((const float *)a->data)[e]
                              : frand(a->hi > a->lo ? a->lo : -1, a->hi > a->lo ? a->hi : 1);
    da[n_diff] = a;
    diff_vals[n_diff++] = v;
  }
  for (int j = 0; j < o.n_out; j++) {
    snprintf(name, sizeof name, "y%d", j);
    outs[j] = wt_graph_value(g, name);
  }
  int node = wt_graph_add_node(g, op_type, o.domain, "op", n_in, ins, o.n_out, outs);
  if (attrs) attrs(g, node);
  /* loss = sum_j ReduceSum(Y_j * W_j) over the float outputs */
  int rc = wt_graph_infer_shapes(g);
  int terms[8], n_terms = 0;
  for (int j = 0; rc == WT_OK && j < o.n_out; j++) {
    const wt_value *y = &g->values[outs[j]];
    if (y->dtype != WT_FLOAT) continue;
    int64_t n = wt_shape_numel(y->rank, y->dims);
    float *w = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t e = 0; e < n; e++) w[e] = frand(-1, 1);
    snprintf(name, sizeof name, "w%d", j);
    int64_t dims[8];
    if (y->rank > 0) memcpy(dims, y->dims, sizeof *dims * (size_t)y->rank);
    int wv = add_init(g, name, WT_FLOAT, y->rank, dims, w);
    free(w);
    snprintf(name, sizeof name, "p%d", j);
    int pv = wt_graph_value(g, name);
    wt_graph_add_node(g, "Mul", "", name, 2, (int[]){outs[j], wv}, 1, &pv);
    snprintf(name, sizeof name, "s%d", j);
    int sv = wt_graph_value(g, name);
    int rs = wt_graph_add_node(g, "ReduceSum", "", name, 1, &pv, 1, &sv);
    wt_node_set_int(g, rs, "keepdims", 0);
    terms[n_terms++] = sv;
  }
  int loss = -1;
  if (rc == WT_OK) {
    loss = wt_graph_value(g, "loss");
    wt_graph_add_node(g, "Sum", "", "loss_sum", n_terms, terms, 1, &loss);
    rc = wt_graph_infer_shapes(g);
  }
  int grad_vals[16];
  if (rc == WT_OK) rc = wt_autodiff(g, loss, n_diff, diff_vals, grad_vals);
  if (rc) {
    fprintf(stderr, "%s: building the gradient failed: %s\n", label, wt_error_message());
    failed = 1;
    goto out;
  }
  wt_graph_add_output(g, loss);
  for (int k = 0; k < n_diff; k++) {
    if (grad_vals[k] >= 0) {
      wt_graph_add_output(g, grad_vals[k]);
    } else { /* no dependence: the gradient is zero; compare against that */
      free(grads[k]);
      grads[k] = NULL;
    }
  }
  uint8_t *bytes;
  size_t len;
  wt_session *s = NULL;
  if (wt_onnx_write(g, &bytes, &len) || wt_session_create(bytes, len, &s)) {
    fprintf(stderr, "%s: %s\n", label, wt_last_error());
    failed = 1;
    goto out;
  }
  free(bytes);
  /* Outputs: the loss, then the gradients that exist, in input order. */
  int ok = 1;
  for (int k = 0; k < n_diff; k++)
    if (wt_session_set_input(s, k, WT_FLOAT, da[k]->rank, da[k]->dims, xs[k])) ok = 0;
  if (ok && wt_session_run(s) == WT_OK) {
    for (int k = 0, out = 1; k < n_diff; k++) {
      if (!grads[k]) continue;
      int32_t dt, rank;
      const int64_t *dims;
      const void *data;
      wt_session_output(s, out++, &dt, &rank, &dims, &data);
      wt_tensor t = {.dtype = dt, .rank = rank};
      memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
      if (dt != WT_FLOAT || wt_numel(&t) != wt_shape_numel(da[k]->rank, da[k]->dims)) {
        fprintf(stderr, "%s: the gradient of x%d has the wrong type or size\n", label, k);
        ok = 0;
        break;
      }
      memcpy(grads[k], data, wt_nbytes(&t));
    }
  } else {
    fprintf(stderr, "%s: run failed: %s\n", label, wt_last_error());
    ok = 0;
  }
  int reported = 0;
  for (int k = 0; ok && k < n_diff; k++) {
    int64_t n = wt_shape_numel(da[k]->rank, da[k]->dims);
    for (int64_t e = 0; e < n; e++) {
      float keep = xs[k][e];
      xs[k][e] = (float)(keep + o.eps);
      double lp = run_loss(s, n_diff, xs, da, &ok);
      xs[k][e] = (float)(keep - o.eps);
      double lm = run_loss(s, n_diff, xs, da, &ok);
      double h = ((double)(float)(keep + o.eps) - (double)(float)(keep - o.eps));
      xs[k][e] = keep;
      if (!ok) break;
      double num = (lp - lm) / h;
      double ana = grads[k] ? grads[k][e] : 0.0;
      double tol = o.atol + o.rtol * fmax(fabs(ana), fabs(num));
      if (fabs(ana - num) > tol) {
        if (reported++ < 5)
          fprintf(stderr, "%s: d loss / d x%d[%lld]: autodiff %.7g, finite difference %.7g\n", label,
                  k, (long long)e, ana, num);
        failed = 1;
      }
    }
  }
  if (!ok) failed = 1;
  wt_session_free(s);
out:
  for (int k = 0; k < n_diff; k++) {
    free(xs[k]);
    free(grads[k]);
  }
  wt_graph_free(g);
  if (!failed) printf("ok   gradcheck %s\n", label);
  else printf("FAIL gradcheck %s\n", label);
  return failed;
}

/* ---- attributes for the next checks ---------------------------------------------------------- */

typedef struct gc_attr {
  const char *name;
  int type;
  int64_t i;
  float f;
  const char *s;
  int64_t ints[8];
  float floats[8];
  int n;
} gc_attr;

static gc_attr g_attrs[16];
static int g_n_attrs;

void gc_attrs_reset(void) { g_n_attrs = 0; }

static gc_attr *next_attr(const char *name, int type) {
  if (g_n_attrs == 16) {
    fprintf(stderr, "gradcheck: too many attributes\n");
    abort();
  }
  gc_attr *a = &g_attrs[g_n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->type = type;
  return a;
}

void gc_attr_int(const char *name, int64_t v) { next_attr(name, WT_ATTR_INT)->i = v; }
void gc_attr_float(const char *name, float v) { next_attr(name, WT_ATTR_FLOAT)->f = v; }
void gc_attr_string(const char *name, const char *v) { next_attr(name, WT_ATTR_STRING)->s = v; }
void gc_attr_ints(const char *name, int n, const int64_t *v) {
  gc_attr *a = next_attr(name, WT_ATTR_INTS);
  a->n = n < 8 ? n : 8;
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)a->n);
}
void gc_attr_floats(const char *name, int n, const float *v) {
  gc_attr *a = next_attr(name, WT_ATTR_FLOATS);
  a->n = n < 8 ? n : 8;
  memcpy(a->floats, v, sizeof(float) * (size_t)a->n);
}

void gc_set_attrs(wt_graph *g, int node) {
  for (int k = 0; k < g_n_attrs; k++) {
    const gc_attr *a = &g_attrs[k];
    if (a->type == WT_ATTR_INT) wt_node_set_int(g, node, a->name, a->i);
    else if (a->type == WT_ATTR_FLOAT) wt_node_set_float(g, node, a->name, a->f);
    else if (a->type == WT_ATTR_STRING) wt_node_set_string(g, node, a->name, a->s);
    else if (a->type == WT_ATTR_INTS) wt_node_set_ints(g, node, a->name, a->ints, a->n);
    else {
      wt_attr *at = wt_node_add_attr(g, node, a->name, WT_ATTR_FLOATS);
      at->n = a->n;
      at->floats = malloc(sizeof(float) * (size_t)(a->n ? a->n : 1));
      memcpy(at->floats, a->floats, sizeof(float) * (size_t)a->n);
    }
  }
}
