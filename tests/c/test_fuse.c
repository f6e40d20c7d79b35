/* Training-model fusions (artifacts/fuse.c): PyTorch's exported GELU chain becomes one
 * com.microsoft Gelu in the training model, while the eval model keeps the plain ONNX ops; a
 * chain whose intermediate is read elsewhere stays as it is; the fused model trains to the same
 * loss as the unfused chain computes. */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "check.h"
#include "io/onnx_io.h"
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
  CHECK_DONE();
}
