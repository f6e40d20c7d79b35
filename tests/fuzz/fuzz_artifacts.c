/* libFuzzer: wt_generate_artifacts on a fuzzed model with fuzzed options. Input: 8 control
 * bytes then the model. Control: [0] loss (MSE, CE, BCE, L1, and reduction), [1] optimizer
 * (none, AdamW, SGD; clip norm; nominal checkpoint), [2] requires_grad mask over the first 8
 * initializers, [3] frozen_params mask, [4] additional output / loss input picks; [1] & 0x80:
 * frozen_dtype float16 ([6] == 0xff: an invalid frozen dtype). Artifacts
 * that are generated must load: models parse, the checkpoint parses and loads as a state, and
 * the module and optimizer are created or refused with an error. */
#include "artifacts/artifacts.h"
#include "fuzz_common.h"
#include "io/checkpoint.h"
#include "webtrain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *ctrl, *model;
  size_t len;
  wt_graph *g = wt_fuzz_model(data, size, &ctrl, &model, &len);
  if (!g) return 0;
  /* names of the first 8 initializers and of a few values, for the option lists */
  const char *inits[8], *req[8], *frz[8], *extra[2];
  int n_init = 0, n_req = 0, n_frz = 0, n_extra = 0;
  for (int v = 0; v < g->n_values && n_init < 8; v++)
    if (g->values[v].flags & WT_VALUE_INITIALIZER) inits[n_init++] = g->values[v].name;
  for (int i = 0; i < n_init; i++) {
    if (ctrl[2] & (1u << i)) req[n_req++] = inits[i];
    if (ctrl[3] & (1u << i)) frz[n_frz++] = inits[i];
  }
  if ((ctrl[4] & 3) == 1 && g->n_values) extra[n_extra++] = g->values[(ctrl[4] >> 2) % g->n_values].name;
  if ((ctrl[4] & 3) == 2) extra[n_extra++] = "no such value";

  static const char *reductions[] = {"mean", "sum", "none", "bogus"};
  static const float weights[4] = {1.0f, 0.5f, 2.0f, 1.0f};
  wt_artifacts_opts o;
  memset(&o, 0, sizeof o);
  o.requires_grad = req;
  o.n_requires_grad = n_req;
  o.frozen_params = frz;
  o.n_frozen_params = n_frz;
  o.loss.type = 1 + ctrl[0] % 4;
  o.loss.reduction = (ctrl[0] & 0x30) ? reductions[(ctrl[0] >> 4) & 3] : NULL;
  if (ctrl[0] & 0x40) {
    o.loss.has_ignore_index = 1;
    o.loss.ignore_index = (int64_t)(int8_t)ctrl[5];
  }
  if (ctrl[0] & 0x80) {
    o.loss.weight = weights;
    o.loss.n_weight = 1 + ctrl[5] % 4;
  }
  o.optimizer.type = ctrl[1] % 3;
  if (ctrl[1] & 0x10) o.optimizer.clip_max_norm = 1.0f;
  if (ctrl[1] & 0x20) {
    o.optimizer.has_weight_decay = 1;
    o.optimizer.weight_decay = 0.1f;
  }
  o.nominal_checkpoint = (ctrl[1] & 0x40) != 0;
  /* frozen weights as float16; now and then a dtype that is no choice (a clear error) */
  if (ctrl[1] & 0x80) o.frozen_dtype = ctrl[6] == 0xff ? WT_INT64 : WT_FLOAT16;
  o.additional_output_names = extra;
  o.n_additional_outputs = n_extra;
  if ((ctrl[4] & 0xc0) == 0xc0 && g->n_outputs) {
    o.loss_input_names = extra;  /* reuse: the picked value as the loss input */
    o.n_loss_inputs = n_extra;
    o.n_additional_outputs = 0;
  }

  wt_artifacts a;
  if (wt_generate_artifacts(model, len, &o, &a) == WT_OK) {
    wt_graph *t = NULL;
    FUZZ_ASSERT(wt_onnx_read(a.training_model.data, a.training_model.len, NULL, &t) == WT_OK,
                "generated training model loads");
    wt_graph_free(t);
    FUZZ_ASSERT(wt_onnx_read(a.eval_model.data, a.eval_model.len, NULL, &t) == WT_OK,
                "generated eval model loads");
    wt_graph_free(t);
    if (a.optimizer_model.data) {
      FUZZ_ASSERT(wt_onnx_read(a.optimizer_model.data, a.optimizer_model.len, NULL, &t) == WT_OK,
                  "generated optimizer model loads");
      wt_graph_free(t);
    }
    wt_checkpoint *c = NULL;
    FUZZ_ASSERT(wt_checkpoint_read(a.checkpoint.data, a.checkpoint.len, &c) == WT_OK,
                "generated checkpoint parses");
    wt_checkpoint_free(c);
    if (a.nominal_checkpoint.data) {
      FUZZ_ASSERT(wt_checkpoint_read(a.nominal_checkpoint.data, a.nominal_checkpoint.len, &c) == WT_OK,
                  "generated nominal checkpoint parses");
      wt_checkpoint_free(c);
    }
    wt_state *s = NULL;
    FUZZ_ASSERT(wt_state_load(a.checkpoint.data, a.checkpoint.len, &s) == WT_OK,
                "generated checkpoint loads as a state");
    wt_module *m = NULL;
    if (wt_module_create(s, a.training_model.data, a.training_model.len, a.eval_model.data,
                         a.eval_model.len, &m) == WT_OK) {
      wt_optimizer *op = NULL;
      if (a.optimizer_model.data &&
          wt_optimizer_create(s, a.optimizer_model.data, a.optimizer_model.len, &op) == WT_OK)
        wt_optimizer_free(op);
      wt_module_free(m);
    }
    wt_state_free(s);
    wt_artifacts_free(&a);
  }
  wt_graph_free(g);
  wt_error_clear();
  return 0;
}
