/* Training-model fusions (artifacts/fuse.c): PyTorch's exported GELU chain becomes one
 * com.microsoft Gelu in the training model, while the eval model keeps the plain ONNX ops; a
 * chain whose intermediate is read elsewhere stays as it is; the fused model trains to the same
 * loss as the unfused chain computes; a SiLU becomes QuickGelu(alpha 1) the same way. And
 * MatMul(x, Transpose(W)) stays so in the models while the plans run without its Transpose
 * (runtime/plan_fuse.c folds it into the GEMM's trans flag): the loss and W's gradient as
 * computed by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "check.h"
#include "io/onnx_io.h"
#include "runtime/planner.h"
#include "runtime/state.h"
#include "webtrain.h"

static int constant(wt_graph *g, const char *name, float v) {
  int out = wt_graph_value(g, name);
  int n = wt_graph_add_node(g, "Constant", "", name, 0, NULL, 1, &out);
  wt_node_set_float(g, n, "value_float", v);
  return out;
}

static int value(wt_graph *g, const char *name) { return wt_graph_value(g, name); }

/* y = gelu(x @ W) as PyTorch exports it; with `leak`, the output is y + (1 + erf), so the
 * chain's intermediate has a second reader. */
static wt_graph *gelu_model(int leak) {
  wt_graph *g = wt_graph_new();
  wt_graph_set_opset(g, "", 17);
  int x = value(g, "x"), w = value(g, "W"), h = value(g, "h");
  g->values[x].dtype = WT_FLOAT;
  wt_value_set_shape(g, x, 2, (const int64_t[]){2, 4});
  wt_graph_add_input(g, x);
  wt_value *wv = &g->values[w];
  wv->flags |= WT_VALUE_INITIALIZER;
  wv->dtype = WT_FLOAT;
  wt_value_set_shape(g, w, 2, (const int64_t[]){4, 4});
  wv->nbytes = 16 * sizeof(float);
  wv->data = malloc(wv->nbytes);
  for (int i = 0; i < 16; i++) ((float *)wv->data)[i] = (float)(i % 5) * 0.25f - 0.5f;
  wt_graph_add_node(g, "MatMul", "", "mm", 2, (int[]){x, w}, 1, &h);
  int s2 = constant(g, "sqrt2", 1.41421356f), one = constant(g, "one", 1.0f), half = constant(g, "half", 0.5f);
  int d = value(g, "d"), e = value(g, "e"), a = value(g, "a"), m = value(g, "m"), y = value(g, "y");
  wt_graph_add_node(g, "Div", "", "div", 2, (int[]){h, s2}, 1, &d);
  wt_graph_add_node(g, "Erf", "", "erf", 1, &d, 1, &e);
  wt_graph_add_node(g, "Add", "", "add", 2, (int[]){e, one}, 1, &a);
  wt_graph_add_node(g, "Mul", "", "mul", 2, (int[]){h, a}, 1, &m);
  wt_graph_add_node(g, "Mul", "", "mul_half", 2, (int[]){m, half}, 1, &y);
  if (leak) {
    int z = value(g, "z");
    wt_graph_add_node(g, "Add", "", "leak", 2, (int[]){y, a}, 1, &z);
    y = z;
  }
  wt_graph_add_output(g, y);
  return g;
}

static int count_op(const wt_bytes *model, const char *op_type) {
  wt_graph *g = NULL;
  if (wt_onnx_read(model->data, model->len, NULL, &g)) return -1;
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += !strcmp(g->nodes[i].op_type, op_type);
  wt_graph_free(g);
  return n;
}

/* The Transposes of a model that its plan (inputs' symbolic dims 2) runs: every one it has,
 * less those the planner folded into the steps reading them; -1 on error. */
static int transposes_run(const wt_bytes *model) {
  wt_graph *g = NULL;
  if (wt_onnx_read(model->data, model->len, NULL, &g)) return -1;
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += !strcmp(g->nodes[i].op_type, "Transpose");
  wt_tensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
  for (int k = 0; in && k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    in[k].dtype = v->dtype;
    in[k].rank = v->rank;
    for (int d = 0; d < v->rank; d++) in[k].dims[d] = v->dims[d] < 0 ? 2 : v->dims[d];
  }
  wt_plan *p = NULL;
  int rc = in ? wt_plan_build(g, in, NULL, &p) : WT_ERR_NO_MEMORY;
  if (rc == WT_OK) n -= wt_plan_fused_count(p);
  wt_plan_free(p);
  free(in);
  wt_graph_free(g);
  return rc == WT_OK ? n : -1;
}

/* The loss for one batch, from fresh artifacts: a training step (eval 0) or an eval step. */
static float loss_of(const wt_artifacts *art, int eval) {
  wt_state *s = NULL;
  wt_module *m = NULL;
  float loss = -1.0f;
  static const float x[8] = {-2.0f, -0.5f, 0.0f, 0.3f, 1.0f, 2.5f, -1.2f, 0.7f};
  static const float t[8] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
  int64_t dims[2] = {2, 4};
  int32_t dt, rank;
  const int64_t *od;
  const void *data;
  if (!wt_state_load(art->checkpoint.data, art->checkpoint.len, &s) &&
      !wt_module_create(s, art->training_model.data, art->training_model.len,
                        art->eval_model.data, art->eval_model.len, &m) &&
      !wt_module_set_input(m, eval, 0, WT_FLOAT, 2, dims, x) &&
      !wt_module_set_input(m, eval, 1, WT_FLOAT, 2, dims, t) &&
      !(eval ? wt_module_eval_step(m) : wt_module_train_step(m)) &&
      !wt_module_output(m, eval, 0, &dt, &rank, &od, &data))
    loss = *(const float *)data;
  wt_module_free(m);
  wt_state_free(s);
  return loss;
}
static float train_loss(const wt_artifacts *art) { return loss_of(art, 0); }
static float eval_loss(const wt_artifacts *art) { return loss_of(art, 1); }

/* h = MatMul(x, Transpose(W)), x [batch, 3, 4], W [5, 4] (PyTorch's Linear on a 3-D input) with
 * an MSE loss against t: the plans read W in place (the GEMM's trans flag), no step writing W's
 * transpose, and the step gives the loss and dL/dW computed here from the definition. */
static void transposed_weight(void) {
  wt_graph *g = wt_graph_new();
  CHECK_OK(wt_graph_set_opset(g, "", 17));
  int x = value(g, "x"), w = value(g, "W"), wt = value(g, "Wt"), h = value(g, "h");
  g->values[x].dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, x, 3, (const int64_t[]){-1, 3, 4}));
  CHECK_OK(wt_value_set_dim_param(g, x, 0, "batch"));
  CHECK_OK(wt_graph_add_input(g, x));
  wt_value *wv = &g->values[w];
  wv->flags |= WT_VALUE_INITIALIZER;
  wv->dtype = WT_FLOAT;
  CHECK_OK(wt_value_set_shape(g, w, 2, (const int64_t[]){5, 4}));
  wv->nbytes = 20 * sizeof(float);
  wv->data = malloc(wv->nbytes);
  float W[20], X[24], T[30];
  for (int i = 0; i < 20; i++) W[i] = ((float *)wv->data)[i] = (float)(i % 7) * 0.25f - 0.6f;
  for (int i = 0; i < 24; i++) X[i] = (float)((i * 5) % 11) * 0.2f - 1.0f;
  for (int i = 0; i < 30; i++) T[i] = (float)(i % 4) * 0.3f;
  CHECK(wt_graph_add_node(g, "Transpose", "", "tr", 1, &w, 1, &wt) >= 0);
  CHECK(wt_graph_add_node(g, "MatMul", "", "mm", 2, (int[]){x, wt}, 1, &h) >= 0);
  CHECK_OK(wt_graph_add_output(g, h));
  const char *params[] = {"W"};
  wt_artifacts_opts o = {.requires_grad = params, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  wt_artifacts art;
  CHECK_OK(wt_generate_artifacts_graph(g, &o, &art));
  CHECK(count_op(&art.eval_model, "Transpose") == 1 && count_op(&art.eval_model, "MatMul") == 1);
  CHECK(transposes_run(&art.eval_model) == 0);
  CHECK(count_op(&art.training_model, "Transpose") >= 1 && transposes_run(&art.training_model) == 0);
  /* by hand: h = x Wᵀ, L = mean((h - t)^2), dL/dW[o][i] = sum_r 2 (h - t)[r][o] x[r][i] / 30 */
  double loss = 0, dw[20] = {0};
  for (int r = 0; r < 6; r++)
    for (int oo = 0; oo < 5; oo++) {
      double hv = 0;
      for (int i = 0; i < 4; i++) hv += (double)X[r * 4 + i] * W[oo * 4 + i];
      double e = hv - T[r * 5 + oo];
      loss += e * e / 30.0;
      for (int i = 0; i < 4; i++) dw[oo * 4 + i] += 2.0 * e * X[r * 4 + i] / 30.0;
    }
  wt_state *s = NULL;
  wt_module *m = NULL;
  int32_t dt, rank;
  const int64_t *od;
  const void *data;
  CHECK_OK(wt_state_load(art.checkpoint.data, art.checkpoint.len, &s));
  CHECK_OK(wt_module_create(s, art.training_model.data, art.training_model.len, art.eval_model.data,
                            art.eval_model.len, &m));
  CHECK_OK(wt_module_set_input(m, 0, 0, WT_FLOAT, 3, (const int64_t[]){2, 3, 4}, X));
  CHECK_OK(wt_module_set_input(m, 0, 1, WT_FLOAT, 3, (const int64_t[]){2, 3, 5}, T));
  CHECK_OK(wt_module_train_step(m));
  CHECK_OK(wt_module_output(m, 0, 0, &dt, &rank, &od, &data));
  CHECK(fabs(*(const float *)data - loss) <= 1e-6 * (1 + loss));
  const wt_param *p = wt_state_find(s, "W");
  CHECK(p && p->grad);
  for (int i = 0; p && p->grad && i < 20; i++) CHECK(fabs(p->grad[i] - dw[i]) <= 1e-6);
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&art);
}

/* y = h * Sigmoid(h), h = x @ W (a SiLU as PyTorch exports F.silu): one QuickGelu(alpha 1) in
 * the training model, the eval model's Sigmoid and Mul kept; the same loss either way. */
static void silu(void) {
  wt_graph *g = gelu_model(0);
  /* reuse the GELU model's x, W and h; a new output y2 = h * Sigmoid(h) */
  int h = wt_graph_find(g, "h"), sg = value(g, "sg"), y2 = value(g, "y2");
  CHECK(wt_graph_add_node(g, "Sigmoid", "", "sig", 1, &h, 1, &sg) >= 0);
  CHECK(wt_graph_add_node(g, "Mul", "", "silu", 2, (int[]){sg, h}, 1, &y2) >= 0);
  g->values[g->outputs[0]].flags &= ~(uint32_t)WT_VALUE_GRAPH_OUTPUT;
  g->n_outputs = 0;
  CHECK_OK(wt_graph_add_output(g, y2));
  CHECK_OK(wt_graph_prune(g));
  const char *params[] = {"W"};
  wt_artifacts_opts o = {.requires_grad = params, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  wt_artifacts art;
  CHECK_OK(wt_generate_artifacts_graph(g, &o, &art));
  CHECK(count_op(&art.training_model, "QuickGelu") == 1 && count_op(&art.training_model, "QuickGeluGrad") == 1);
  CHECK(count_op(&art.training_model, "Sigmoid") == 0);
  CHECK(count_op(&art.eval_model, "Sigmoid") == 1 && count_op(&art.eval_model, "QuickGelu") == 0);
  float a = train_loss(&art), b = eval_loss(&art);
  CHECK(a > 0.0f && fabsf(a - b) <= 1e-6f * (1.0f + b));
  wt_artifacts_free(&art);
}

int main(void) {
  const char *params[] = {"W"};
  wt_artifacts_opts o = {.requires_grad = params, .n_requires_grad = 1,
                         .loss = {.type = WT_LOSS_TYPE_MSE}, .optimizer = {.type = WT_OPTIM_SGD}};
  wt_artifacts fused, kept;
  CHECK_OK(wt_generate_artifacts_graph(gelu_model(0), &o, &fused));
  CHECK(count_op(&fused.training_model, "Gelu") == 1);
  CHECK(count_op(&fused.training_model, "GeluGrad") == 1);
  CHECK(count_op(&fused.training_model, "Erf") == 0);
  CHECK(count_op(&fused.eval_model, "Erf") == 1); /* the eval (and exported) model stays plain ONNX */
  CHECK(count_op(&fused.eval_model, "Gelu") == 0);

  /* 1 + erf is read outside the chain: the chain must stay. */
  CHECK_OK(wt_generate_artifacts_graph(gelu_model(1), &o, &kept));
  CHECK(count_op(&kept.training_model, "Gelu") == 0);
  CHECK(count_op(&kept.training_model, "Erf") == 1);

  /* Same function: the fused Gelu and the plain chain (the eval model, its forward as exported)
   * give the same loss. */
  float a = train_loss(&fused), b = eval_loss(&fused);
  CHECK(a > 0.0f && b > 0.0f && a - b < 1e-6f && b - a < 1e-6f);
  wt_artifacts_free(&fused);
  wt_artifacts_free(&kept);
  transposed_weight();
  silu();
  CHECK_DONE();
}
