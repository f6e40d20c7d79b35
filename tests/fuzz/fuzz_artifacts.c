/* libFuzzer: wt_generate_artifacts on a fuzzed model with fuzzed options. Input: 8 control
 * bytes then the model. Control: [0] loss (MSE, CE, BCE, L1, and reduction), [1] optimizer
 * (none, AdamW, SGD; clip norm; nominal checkpoint), [2] requires_grad mask over the first 8
 * initializers, [3] frozen_params mask, [4] additional output / loss input picks; [1] & 0x80:
 * frozen_dtype float16 ([6] == 0xff: an invalid frozen dtype); [6] LoRA (bit 0 on, bits 1-3
 * rank 0..7, bit 4 exact names, bits 5-7 alpha), [7] LoRA targets mask over the first 8
 * initializers (exact names, or their first 3 characters). Artifacts
 * that are generated must load: models parse, the checkpoint parses and loads as a state, and
 * the module and optimizer are created or refused with an error; with LoRA, the merged and
 * adapter exports of the module are made or refused, and the adapter file reads back. */
#include "artifacts/artifacts.h"
#include "fuzz_common.h"
#include "io/adapter.h"
#include "io/checkpoint.h"
#include "webtrain.h"

/* The merged model and the adapter model + file of a LoRA module: made or refused, never a
 * crash; an adapter file that is written reads back. */
static void lora_exports(const wt_module *m) {
  const char *out = wt_module_output_count(m, 1) > 0 ? wt_module_output_name(m, 1, 0) : NULL;
  uint8_t *inf = NULL;
  size_t inf_len = 0;
  if (!out || wt_module_export_for_inference(m, &out, 1, &inf, &inf_len) != WT_OK) return;
  for (int kind = 0; kind < 2; kind++) {
    wt_graph *g = NULL;
    if (wt_onnx_read(inf, inf_len, NULL, &g) != WT_OK) continue;
    wt_const_tensor *p = NULL;
    int n = 0;
    if (kind == 0) {
      (void)wt_lora_merge(g);
    } else if (wt_lora_adapter_model(g, &p, &n) == WT_OK) {
      uint8_t *b = NULL, *b2 = NULL;
      size_t bl = 0, bl2 = 0;
      if (wt_adapter_write(p, n, 1, 2, &b, &bl) == WT_OK) {
        wt_const_tensor *q = NULL;
        int nq = 0, av = 0, mv = 0;
        FUZZ_ASSERT(wt_adapter_read(b, bl, &q, &nq, &av, &mv) == WT_OK && nq == n && av == 1 && mv == 2,
                    "a written adapter file reads back");
        FUZZ_ASSERT(wt_adapter_write(q, nq, 1, 2, &b2, &bl2) == WT_OK && bl2 == bl && !memcmp(b, b2, bl),
                    "an adapter file read back writes the same bytes");
        wt_adapter_free(q, nq);
      }
      free(b);
      free(b2);
      wt_lora_params_free(p, n);
    }
    wt_graph_free(g);
  }
  free(inf);
}

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

  char parts[8][4];
  const char *targets[8];
  int n_targets = 0;
  static const float alphas[8] = {1.0f, 2.0f, 16.0f, 0.5f, 0.0f, -1.0f, 1e30f, 8.0f};
  if (ctrl[6] & 1) {
    o.lora.enabled = 1;
    o.lora.rank = (ctrl[6] >> 1) & 7;
    o.lora.exact = (ctrl[6] >> 4) & 1;
    o.lora.alpha = alphas[ctrl[6] >> 5];
    o.lora.seed = ctrl[5];
    for (int i = 0; i < n_init; i++) {
      if (!(ctrl[7] & (1u << i))) continue;
      if (o.lora.exact) {
        targets[n_targets++] = inits[i];
      } else {
        snprintf(parts[i], sizeof parts[i], "%s", inits[i]);
        targets[n_targets++] = parts[i];
      }
    }
    o.lora.targets = targets;
    o.lora.n_targets = n_targets;
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
      if (o.lora.enabled) lora_exports(m);
      wt_module_free(m);
    }
    wt_state_free(s);
    wt_artifacts_free(&a);
  }
  wt_graph_free(g);
  wt_error_clear();
  return 0;
}
