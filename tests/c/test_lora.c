/* LoRA at artifact generation (artifacts/lora.c, lora_export.c): on a model using its weights in
 * every orientation (MatMul x·W, batched MatMul, a weight shared by two nodes, Gemm with transA,
 * transB and alpha, W -> Transpose -> MatMul, MatMul W·x, W as Gemm's A), the adapters' shapes, Kaiming-uniform
 * values (seeded) and zero B; the eval model equals the base model at initialization; adapter
 * gradients against central differences (B made non-zero first); training moves the adapters
 * and nothing else; the merged export and the base model fed the adapters equal the module's
 * eval output; bad options are errors naming what was wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "check.h"
#include "io/adapter.h"
#include "io/onnx_io.h"
#include "runtime/session.h"
#include "runtime/state.h"
#include "webtrain.h"

static int value(wt_graph *g, const char *name) { return wt_graph_value(g, name); }

static int init(wt_graph *g, const char *name, int64_t d0, int64_t d1, float scale) {
  int v = value(g, name);
  wt_value *wv = &g->values[v];
  wv->flags |= WT_VALUE_INITIALIZER;
  wv->dtype = WT_FLOAT;
  int rank = d1 ? 2 : 1;
  wt_value_set_shape(g, v, rank, (const int64_t[]){d0, d1});
  int64_t n = d0 * (d1 ? d1 : 1);
  wv = &g->values[v];
  wv->nbytes = sizeof(float) * (size_t)n;
  wv->data = malloc(wv->nbytes);
  for (int64_t i = 0; i < n; i++) ((float *)wv->data)[i] = scale * (float)((i * 7 + 3) % 11 - 5) / 5.0f;
  return v;
}

/* x [4,6], z [2,4,6] -> y [2,4]:
 *   h1 = x·l1 + ReduceMean_0(z·l1)       l1 [6,5]   (x·W, batched)
 *   h3 = (h1·l2)·l2                       l2 [5,5]   (shared by two nodes)
 *   h4 = Gemm(h3ᵀ, l3, l3.bias, transA, transB, alpha .7)  l3 [3,5] (PyTorch Linear)
 *   h5 = h3·Transpose(l4)                 l4 [3,5]
 *   y  = MatMul(l5, Transpose(h4 + h5)) + Gemm(l6, h4 + h5, transB, alpha .5) [2,4]
 *                                         l5, l6 [2,3]  (W·x, W as Gemm's A) */
static wt_graph *model(const char *odd) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = value(g, "x"), z = value(g, "z");
  g->values[x].dtype = g->values[z].dtype = WT_FLOAT;
  wt_value_set_shape(g, x, 2, (const int64_t[]){4, 6});
  wt_value_set_shape(g, z, 3, (const int64_t[]){2, 4, 6});
  wt_graph_add_input(g, x);
  wt_graph_add_input(g, z);
  int l1 = init(g, "l1.weight", 6, 5, 0.4f), l2 = init(g, "l2.weight", 5, 5, 0.3f);
  int l3 = init(g, "l3.weight", 3, 5, 0.5f), b3 = init(g, "l3.bias", 3, 0, 0.1f);
  int l4 = init(g, "l4.weight", 3, 5, 0.2f), l5 = init(g, "l5.weight", 2, 3, 0.6f);
  int a = value(g, "a"), bz = value(g, "bz"), m = value(g, "m"), h1 = value(g, "h1"), h2 = value(g, "h2");
  int h3 = value(g, "h3"), h4 = value(g, "h4"), t4 = value(g, "t4"), h5 = value(g, "h5"), s = value(g, "s");
  int st = value(g, "st"), y = value(g, "y");
  wt_graph_add_node(g, "MatMul", "", "mm1", 2, (int[]){x, l1}, 1, &a);
  wt_graph_add_node(g, "MatMul", "", "mm1b", 2, (int[]){z, l1}, 1, &bz);
  int n = wt_graph_add_node(g, "ReduceMean", "", "mean", 1, &bz, 1, &m);
  wt_node_set_ints(g, n, "axes", (const int64_t[]){0}, 1);
  wt_node_set_int(g, n, "keepdims", 0);
  wt_graph_add_node(g, "Add", "", "add1", 2, (int[]){a, m}, 1, &h1);
  wt_graph_add_node(g, "MatMul", "", "mm2", 2, (int[]){h1, l2}, 1, &h2);
  wt_graph_add_node(g, "MatMul", "", "mm2b", 2, (int[]){h2, l2}, 1, &h3);
  int h3t = value(g, "h3t");
  wt_graph_add_node(g, "Transpose", "", "trh3", 1, &h3, 1, &h3t);
  n = wt_graph_add_node(g, "Gemm", "", "gemm3", 3, (int[]){h3t, l3, b3}, 1, &h4);
  wt_node_set_int(g, n, "transA", 1);
  wt_node_set_int(g, n, "transB", 1);
  wt_node_set_float(g, n, "alpha", 0.7f);
  wt_graph_add_node(g, "Transpose", "", "tr4", 1, &l4, 1, &t4);
  wt_graph_add_node(g, "MatMul", "", "mm4", 2, (int[]){h3, t4}, 1, &h5);
  wt_graph_add_node(g, "Add", "", "add45", 2, (int[]){h4, h5}, 1, &s);
  wt_graph_add_node(g, "Transpose", "", "trs", 1, &s, 1, &st);
  int y5 = value(g, "y5"), y6 = value(g, "y6"), l6 = init(g, "l6.weight", 2, 3, 0.5f);
  wt_graph_add_node(g, "MatMul", "", "mm5", 2, (int[]){l5, st}, 1, &y5);
  n = wt_graph_add_node(g, "Gemm", "", "gemm6", 2, (int[]){l6, s}, 1, &y6);
  wt_node_set_int(g, n, "transB", 1);
  wt_node_set_float(g, n, "alpha", 0.5f);
  wt_graph_add_node(g, "Add", "", "addy", 2, (int[]){y5, y6}, 1, &y);
  if (odd && !strcmp(odd, "t4-add")) { /* l4's transpose also read by an Add */
    int q = value(g, "q");
    wt_graph_add_node(g, "Add", "", "odd_add", 2, (int[]){t4, t4}, 1, &q);
    wt_graph_add_output(g, q);
  }
  if (odd && !strcmp(odd, "both")) { /* l3 as both operands of one Gemm */
    int q = value(g, "q");
    n = wt_graph_add_node(g, "Gemm", "", "odd_gemm", 2, (int[]){l3, l3}, 1, &q);
    wt_node_set_int(g, n, "transB", 1);
    wt_graph_add_output(g, q);
  }
  if (odd && !strcmp(odd, "user-lora")) { /* a weight of the model's own named like an adapter */
    int q = value(g, "q"), l7 = init(g, "l7.lora_A", 4, 3, 0.3f);
    wt_graph_add_node(g, "MatMul", "", "mm7", 2, (int[]){y, l7}, 1, &q);
    wt_graph_add_output(g, q);
  }
  if (odd && !strcmp(odd, "mixed")) { /* l2 also multiplied from the left */
    int q = value(g, "q");
    wt_graph_add_node(g, "MatMul", "", "odd_mm", 2, (int[]){l2, l2}, 1, &q);
    wt_graph_add_output(g, q);
  }
  wt_graph_add_output(g, y);
  return g;
}

static uint8_t *model_bytes(const char *odd, size_t *len) {
  wt_graph *g = model(odd);
  uint8_t *b = NULL;
  CHECK_OK(wt_onnx_write(g, &b, len));
  wt_graph_free(g);
  return b;
}

static const char *const TARGETS[] = {"weight"};
static const char *const OUTS[] = {"y"};

static int generate(const char *odd, const wt_lora_opts *lo, const char *const *rg, int n_rg, wt_artifacts *art) {
  size_t len;
  uint8_t *b = model_bytes(odd, &len);
  wt_artifacts_opts o = {.loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_ADAMW},
                         .additional_output_names = OUTS, .n_additional_outputs = 1, .lora = *lo,
                         .requires_grad = rg, .n_requires_grad = n_rg};
  int rc = wt_generate_artifacts(b, len, &o, art);
  free(b);
  return rc;
}

static float X[24], Z[48], T[8];

static int find_input(const wt_module *m, int eval, const char *name) {
  for (int i = 0; i < wt_module_input_count(m, eval); i++)
    if (!strcmp(wt_module_input_name(m, eval, i), name)) return i;
  return -1;
}

static int feed(wt_module *m, int eval) {
  int nt = wt_module_input_count(m, eval) - 1;
  WT_TRY(wt_module_set_input(m, eval, find_input(m, eval, "x"), WT_FLOAT, 2, (const int64_t[]){4, 6}, X));
  WT_TRY(wt_module_set_input(m, eval, find_input(m, eval, "z"), WT_FLOAT, 3, (const int64_t[]){2, 4, 6}, Z));
  return wt_module_set_input(m, eval, nt, WT_FLOAT, 2, (const int64_t[]){2, 4}, T);
}

static double eval_loss(wt_module *m, float *y) {
  int32_t dt, rank;
  const int64_t *dims;
  const void *data;
  if (feed(m, 1) || wt_module_eval_step(m) || wt_module_output(m, 1, 0, &dt, &rank, &dims, &data)) return NAN;
  double l = *(const float *)data;
  if (y && !wt_module_output(m, 1, 1, &dt, &rank, &dims, &data)) memcpy(y, data, sizeof(float) * 8);
  return l;
}

/* The model's y through a plain session (inputs fed by name; extra named inputs optional). */
static int run_plain(const uint8_t *b, size_t len, const wt_state *adapters, float *y) {
  wt_session *s;
  WT_TRY(wt_session_create(b, len, &s));
  int rc = WT_OK;
  for (int i = 0; i < wt_session_input_count(s) && rc == WT_OK; i++) {
    const char *name = wt_session_input_name(s, i);
    if (!strcmp(name, "x")) rc = wt_session_set_input(s, i, WT_FLOAT, 2, (const int64_t[]){4, 6}, X);
    else if (!strcmp(name, "z")) rc = wt_session_set_input(s, i, WT_FLOAT, 3, (const int64_t[]){2, 4, 6}, Z);
    else {
      wt_param *p = adapters ? wt_state_find(adapters, name) : NULL;
      rc = p ? wt_session_set_input(s, i, WT_FLOAT, p->t.rank, p->t.dims, p->t.data)
             : wt_errorf(WT_ERR_INVALID_ARG, "unexpected input %s", name);
    }
  }
  if (rc == WT_OK) rc = wt_session_run(s);
  int32_t dt, rank;
  const int64_t *dims;
  const void *data;
  if (rc == WT_OK) rc = wt_session_output(s, 0, &dt, &rank, &dims, &data);
  if (rc == WT_OK) memcpy(y, data, sizeof(float) * 8);
  wt_session_free(s);
  return rc;
}

static int close8(const float *a, const float *b, float tol) {
  for (int i = 0; i < 8; i++)
    if (!(fabsf(a[i] - b[i]) <= tol * (1 + fabsf(b[i])))) {
      fprintf(stderr, "  y[%d]: %.7g vs %.7g\n", i, a[i], b[i]);
      return 0;
    }
  return 1;
}

static void expect_error(const char *odd, const wt_lora_opts *lo, const char *const *rg, int n_rg, const char *want) {
  wt_artifacts art;
  int rc = generate(odd, lo, rg, n_rg, &art);
  CHECK(rc != WT_OK);
  if (rc == WT_OK) {
    wt_artifacts_free(&art);
    return;
  }
  if (!strstr(wt_error_message(), want)) fprintf(stderr, "error '%s' lacks '%s'\n", wt_error_message(), want);
  CHECK(strstr(wt_error_message(), want) != NULL);
}

/* Adapters are what lora.c marked, whatever the names: the model's own weight "l7.lora_A" is
 * no adapter (the merge leaves it, the adapter model does not take it as an input, the state
 * does not list it), and the marks survive the artifacts' files and the exported model. A model
 * without marks (written by another tool) has its adapters by their names. */
static void marked_adapters(void) {
  wt_lora_opts lo = {.enabled = 1, .rank = 2, .alpha = 3.0f, .targets = TARGETS, .n_targets = 1, .seed = 7};
  wt_artifacts art;
  CHECK_OK(generate("user-lora", &lo, NULL, 0, &art));
  wt_graph *g;
  CHECK_OK(wt_onnx_read(art.training_model.data, art.training_model.len, NULL, &g));
  CHECK(g->values[wt_graph_find(g, "l1.weight.lora_A")].flags & WT_VALUE_LORA_A);
  CHECK(g->values[wt_graph_find(g, "l1.weight.lora_B")].flags & WT_VALUE_LORA_B);
  CHECK(!(g->values[wt_graph_find(g, "l7.lora_A")].flags & (WT_VALUE_LORA_A | WT_VALUE_LORA_B)));
  wt_graph_free(g);
  wt_state *s;
  CHECK_OK(wt_state_load(art.checkpoint.data, art.checkpoint.len, &s));
  wt_module *m;
  CHECK_OK(wt_module_create(s, art.training_model.data, art.training_model.len, art.eval_model.data,
                            art.eval_model.len, &m));
  CHECK(wt_state_find(s, "l1.weight.lora_A")->lora == WT_VALUE_LORA_A);
  CHECK(wt_state_find(s, "l6.weight.lora_B")->lora == WT_VALUE_LORA_B);
  CHECK(wt_state_find(s, "l7.lora_A")->lora == 0);
  uint8_t *inf;
  size_t inf_len;
  static const char *const outs[] = {"y", "q"};
  CHECK_OK(wt_module_export_for_inference(m, outs, 2, &inf, &inf_len));
  CHECK_OK(wt_onnx_read(inf, inf_len, NULL, &g));
  CHECK_OK(wt_lora_merge(g));
  int l7 = wt_graph_find(g, "l7.lora_A");
  CHECK(l7 >= 0 && (g->values[l7].flags & WT_VALUE_INITIALIZER));
  wt_graph_free(g);
  CHECK_OK(wt_onnx_read(inf, inf_len, NULL, &g));
  wt_const_tensor *ap;
  int n_ap;
  CHECK_OK(wt_lora_adapter_model(g, &ap, &n_ap));
  CHECK(n_ap == 12);
  for (int i = 0; i < n_ap; i++) CHECK(strcmp(ap[i].name, "l7.lora_A") != 0);
  wt_lora_params_free(ap, n_ap);
  wt_graph_free(g);
  /* without marks: the names tell (and l7.lora_A, named so, is then taken for one) */
  CHECK_OK(wt_onnx_read(inf, inf_len, NULL, &g));
  for (int v = 0; v < g->n_values; v++) g->values[v].flags &= (uint8_t)~(WT_VALUE_LORA_A | WT_VALUE_LORA_B);
  CHECK(!wt_graph_lora_marked(g));
  CHECK(wt_lora_merge(g) != WT_OK && strstr(wt_error_message(), "'l7.lora_A' has no base weight"));
  wt_graph_free(g);
  free(inf);
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&art);
  /* a model without marks whose adapters follow the names merges by them */
  CHECK_OK(generate(NULL, &lo, NULL, 0, &art));
  CHECK_OK(wt_state_load(art.checkpoint.data, art.checkpoint.len, &s));
  CHECK_OK(wt_module_create(s, art.training_model.data, art.training_model.len, art.eval_model.data,
                            art.eval_model.len, &m));
  CHECK_OK(wt_module_export_for_inference(m, OUTS, 1, &inf, &inf_len));
  CHECK_OK(wt_onnx_read(inf, inf_len, NULL, &g));
  for (int v = 0; v < g->n_values; v++) g->values[v].flags &= (uint8_t)~(WT_VALUE_LORA_A | WT_VALUE_LORA_B);
  CHECK_OK(wt_lora_merge(g));
  for (int v = 0; v < g->n_values; v++) CHECK(!strstr(g->values[v].name, "lora") || !(g->values[v].flags & WT_VALUE_INITIALIZER));
  wt_graph_free(g);
  free(inf);
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&art);
}

/* ONNX Runtime's adapter file: the committed one reads and writes back the same bytes; cut,
 * mislabelled or inconsistent files are errors saying what is wrong. */
static void adapter_file(void) {
  uint8_t *b;
  size_t len;
  CHECK_OK(wt_read_file(WT_SOURCE_DIR "/tests/data/lora/q_proj_rank2.onnx_adapter", &b, &len));
  wt_const_tensor *p = NULL;
  int n = 0, av = 0, mv = 0;
  CHECK_OK(wt_adapter_read(b, len, &p, &n, &av, &mv));
  CHECK(n == 2 && av == 1 && mv == 1);
  if (n == 2) {
    CHECK(!strcmp(p[0].name, "q_proj.weight.lora_A") && p[0].t.rank == 2 && p[0].t.dims[0] == 2);
    CHECK(!strcmp(p[1].name, "q_proj.weight.lora_B") && p[1].t.dims[1] == 2);
  }
  uint8_t *w;
  size_t wl;
  CHECK_OK(wt_adapter_write(p, n, av, mv, &w, &wl));
  CHECK(wl == len && !memcmp(w, b, len));
  free(w);
  wt_adapter_free(p, n);
  CHECK(wt_adapter_read(b, 6, &p, &n, NULL, NULL) != WT_OK);
  CHECK(strstr(wt_error_message(), "not an ONNX Runtime adapter file") != NULL);
  CHECK(wt_adapter_read(b, len - 40, &p, &n, NULL, NULL) != WT_OK && strstr(wt_error_message(), "adapter"));
  b[4] = 'X';
  CHECK(wt_adapter_read(b, len, &p, &n, NULL, NULL) != WT_OK);
  CHECK(strstr(wt_error_message(), "identifier 'TORT'") != NULL);
  free(b);
  /* dims whose product overflows 64 bits with a zero among them (a fuzz finding) */
  CHECK_OK(wt_read_file(WT_SOURCE_DIR "/tests/data/lora/bad-dims-overflow.onnx_adapter", &b, &len));
  CHECK(wt_adapter_read(b, len, &p, &n, NULL, NULL) != WT_OK);
  CHECK(strstr(wt_error_message(), "is too large") != NULL);
  free(b);
}

int main(void) {
  marked_adapters();
  adapter_file();
  for (int i = 0; i < 24; i++) X[i] = (float)((i * 5) % 9 - 4) / 4.0f;
  for (int i = 0; i < 48; i++) Z[i] = (float)((i * 3) % 7 - 3) / 3.0f;
  for (int i = 0; i < 8; i++) T[i] = (float)i / 8.0f - 0.4f;
  wt_lora_opts lo = {.enabled = 1, .rank = 2, .alpha = 3.0f, .targets = TARGETS, .n_targets = 1, .seed = 7};
  wt_artifacts art;
  CHECK_OK(generate(NULL, &lo, NULL, 0, &art));

  /* the state: 12 adapters trainable, the 6 weights and the bias frozen */
  wt_state *s;
  CHECK_OK(wt_state_load(art.checkpoint.data, art.checkpoint.len, &s));
  int n_tr = 0, n_fr = 0;
  for (int i = 0; i < s->n_params; i++) {
    const wt_param *p = &s->params[i];
    int adapter = strstr(p->name, ".lora_") != NULL;
    CHECK(p->requires_grad == adapter);
    n_tr += adapter;
    n_fr += !adapter;
  }
  CHECK(n_tr == 12 && n_fr == 7);
  static const struct { const char *w; int64_t in, out; } shapes[] = {
      {"l1.weight", 6, 5}, {"l2.weight", 5, 5}, {"l3.weight", 5, 3}, {"l4.weight", 5, 3}, {"l5.weight", 3, 2}, {"l6.weight", 3, 2}};
  for (int k = 0; k < 6; k++) {
    char name[64];
    snprintf(name, sizeof name, "%s.lora_A", shapes[k].w);
    wt_param *pa = wt_state_find(s, name);
    snprintf(name, sizeof name, "%s.lora_B", shapes[k].w);
    wt_param *pb = wt_state_find(s, name);
    CHECK(pa && pb);
    if (!pa || !pb) continue;
    CHECK(pa->t.rank == 2 && pa->t.dims[0] == 2 && pa->t.dims[1] == shapes[k].in);
    CHECK(pb->t.rank == 2 && pb->t.dims[0] == shapes[k].out && pb->t.dims[1] == 2);
    float bound = 1.0f / sqrtf((float)shapes[k].in), mx = 0;
    for (int64_t i = 0; i < 2 * shapes[k].in; i++) mx = fmaxf(mx, fabsf(((float *)pa->t.data)[i]));
    CHECK(mx <= bound && mx > 0.3f * bound);
    for (int64_t i = 0; i < 2 * shapes[k].out; i++) CHECK(((float *)pb->t.data)[i] == 0.0f);
  }
  /* seeded: the same seed gives the same checkpoint, another seed another A */
  wt_artifacts art2, art3;
  CHECK_OK(generate(NULL, &lo, NULL, 0, &art2));
  CHECK(art2.checkpoint.len == art.checkpoint.len && !memcmp(art2.checkpoint.data, art.checkpoint.data, art.checkpoint.len));
  wt_lora_opts lo2 = lo;
  lo2.seed = 8;
  CHECK_OK(generate(NULL, &lo2, NULL, 0, &art3));
  CHECK(art3.checkpoint.len == art.checkpoint.len && memcmp(art3.checkpoint.data, art.checkpoint.data, art.checkpoint.len));
  wt_artifacts_free(&art2);
  wt_artifacts_free(&art3);

  /* at initialization (B = 0) the eval model's y is the base model's */
  wt_module *m;
  CHECK_OK(wt_module_create(s, art.training_model.data, art.training_model.len, art.eval_model.data,
                            art.eval_model.len, &m));
  float y[8], yb[8];
  size_t blen;
  uint8_t *base = model_bytes(NULL, &blen);
  CHECK_OK(run_plain(base, blen, NULL, yb));
  CHECK(!isnan(eval_loss(m, y)));
  CHECK(memcmp(y, yb, sizeof y) == 0 || close8(y, yb, 1e-6f));

  /* gradients: B non-zero, then every adapter element against a central difference */
  for (int i = 0; i < s->n_params; i++) {
    wt_param *p = &s->params[i];
    if (!strstr(p->name, ".lora_B")) continue;
    for (int64_t k = 0; k < wt_shape_numel(p->t.rank, p->t.dims); k++)
      ((float *)p->t.data)[k] = (float)((k * 13 + i) % 9 - 4) / 8.0f;
  }
  CHECK_OK(feed(m, 0));
  CHECK_OK(wt_module_lazy_reset_grad(m));
  CHECK_OK(wt_module_train_step(m));
  int bad = 0, checked = 0;
  for (int i = 0; i < s->n_params; i++) {
    wt_param *p = &s->params[i];
    if (!p->requires_grad) continue;
    float *d = p->t.data;
    for (int64_t k = 0; k < wt_shape_numel(p->t.rank, p->t.dims); k++) {
      const float eps = 1e-2f;
      float v = d[k];
      d[k] = v + eps;
      double lp = eval_loss(m, NULL);
      d[k] = v - eps;
      double lm = eval_loss(m, NULL);
      d[k] = v;
      double num = (lp - lm) / (2.0 * eps), ana = p->grad[k];
      checked++;
      if (!(fabs(num - ana) <= 2e-3 + 2e-2 * fmax(fabs(num), fabs(ana)))) {
        if (bad++ < 5) fprintf(stderr, "  grad %s[%lld]: autodiff %.6g, central difference %.6g\n", p->name, (long long)k, ana, num);
      }
    }
  }
  CHECK(bad == 0 && checked == 2 * (6 + 5) + 2 * (5 + 5) + 2 * (5 + 3) * 2 + 2 * (3 + 2) * 2);

  /* training moves the adapters only and lowers the loss */
  wt_optimizer *opt;
  CHECK_OK(wt_optimizer_create(s, art.optimizer_model.data, art.optimizer_model.len, &opt));
  CHECK_OK(wt_optimizer_set_lr(opt, 2e-2f));
  float *before = malloc(sizeof(float) * 84);
  memcpy(before, wt_state_find(s, "l2.weight")->t.data, sizeof(float) * 25);
  double l0 = eval_loss(m, NULL);
  for (int k = 0; k < 20; k++) {
    CHECK_OK(feed(m, 0));
    CHECK_OK(wt_module_train_step(m));
    CHECK_OK(wt_optimizer_step(opt));
    CHECK_OK(wt_module_lazy_reset_grad(m));
  }
  double l1 = eval_loss(m, y);
  CHECK(l1 < 0.8 * l0);
  CHECK(!memcmp(before, wt_state_find(s, "l2.weight")->t.data, sizeof(float) * 25));
  free(before);

  /* merged export and the base model fed the adapters both give the module's y */
  uint8_t *inf;
  size_t inf_len;
  CHECK_OK(wt_module_export_for_inference(m, OUTS, 1, &inf, &inf_len));
  wt_graph *g;
  CHECK_OK(wt_onnx_read(inf, inf_len, NULL, &g));
  CHECK_OK(wt_lora_merge(g));
  for (int v = 0; v < g->n_values; v++) CHECK(!strstr(g->values[v].name, "lora") || !(g->values[v].flags & WT_VALUE_INITIALIZER));
  int n_nodes_merged = g->n_nodes;
  uint8_t *merged;
  size_t merged_len;
  CHECK_OK(wt_onnx_write(g, &merged, &merged_len));
  wt_graph_free(g);
  float ym[8];
  CHECK_OK(run_plain(merged, merged_len, NULL, ym));
  CHECK(close8(ym, y, 1e-5f));
  if (n_nodes_merged != 15 + 8) fprintf(stderr, "merged nodes: %d\n", n_nodes_merged);
  /* the model's 15 nodes, and an Identity where each branch was added */
  CHECK(n_nodes_merged == 15 + 8);
  CHECK_OK(wt_onnx_read(inf, inf_len, NULL, &g));
  wt_const_tensor *ap;
  int n_ap;
  CHECK_OK(wt_lora_adapter_model(g, &ap, &n_ap));
  CHECK(n_ap == 12);
  uint8_t *am;
  size_t am_len;
  CHECK_OK(wt_onnx_write(g, &am, &am_len));
  wt_graph_free(g);
  float ya[8];
  CHECK_OK(run_plain(am, am_len, s, ya));
  CHECK(close8(ya, y, 1e-5f));
  wt_lora_params_free(ap, n_ap);
  free(am);
  free(merged);
  free(inf);
  free(base);
  wt_optimizer_free(opt);
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&art);

  /* bad options: errors naming what was wrong */
  wt_lora_opts bad_o = lo;
  bad_o.rank = 0;
  expect_error(NULL, &bad_o, NULL, 0, "lora.rank is 0");
  bad_o = lo;
  bad_o.alpha = -1;
  expect_error(NULL, &bad_o, NULL, 0, "lora.alpha is -1");
  bad_o = lo;
  bad_o.n_targets = 0;
  expect_error(NULL, &bad_o, NULL, 0, "lora.targets is empty");
  static const char *const nothing[] = {"q_proj"}, *const bias[] = {"bias"}, *const exact_bias[] = {"l3.bias"};
  static const char *const l2[] = {"l2"}, *const l4[] = {"l4"};
  bad_o = lo;
  bad_o.targets = nothing;
  expect_error(NULL, &bad_o, NULL, 0, "target 'q_proj' matches no weight");
  bad_o.targets = bias;
  expect_error(NULL, &bad_o, NULL, 0, "matches 'l3.bias', which no MatMul or Gemm multiplies by");
  bad_o.targets = exact_bias;
  bad_o.exact = 1;
  expect_error(NULL, &bad_o, NULL, 0, "weight 'l3.bias' is input 2 of Gemm node 'gemm3', which is not a MatMul/Gemm matrix operand");
  bad_o = lo;
  bad_o.targets = l4;
  expect_error("t4-add", &bad_o, NULL, 0, "weight 'l4.weight' is transposed by 'tr4' and then read by Add node 'odd_add'");
  bad_o.targets = l2;
  expect_error("mixed", &bad_o, NULL, 0, "weight 'l2.weight' is multiplied as [in, out] by one node and as [out, in]");
  static const char *const l3[] = {"l3.weight"};
  bad_o.targets = l3;
  bad_o.exact = 1;
  expect_error("both", &bad_o, NULL, 0, "weight 'l3.weight' is both operands of Gemm node 'odd_gemm'");
  bad_o.targets = l2;
  bad_o.exact = 0;
  static const char *const rg[] = {"l2.weight"};
  expect_error(NULL, &bad_o, rg, 1, "'l2.weight' is listed in requires_grad and is a LoRA target");
  /* other requires_grad entries train beside the adapters */
  static const char *const bias_rg[] = {"l3.bias"};
  CHECK_OK(generate(NULL, &lo, bias_rg, 1, &art));
  CHECK_OK(wt_state_load(art.checkpoint.data, art.checkpoint.len, &s));
  CHECK(wt_state_find(s, "l3.bias")->requires_grad == 1 && wt_state_find(s, "l3.weight")->requires_grad == 0);
  wt_state_free(s);
  wt_artifacts_free(&art);
  return wt_check_failures != 0;
}
