/* The flat C ABI for LoRA exports (js/training.js): the merged inference model, the base model
 * taking the adapters as inputs, and the adapters in ONNX Runtime's adapter format. Same
 * conventions as api.c: NULL on failure, message in wtw_last_error(). */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "base/status.h"
#include "io/adapter.h"
#include "io/onnx_io.h"
#include "runtime/state.h"
#include "runtime/state_part.h"
#include "webtrain.h"

typedef struct buf {
  uint8_t *data;
  size_t len;
} buf;

static buf *new_buf(void) {
  buf *b = calloc(1, sizeof *b);
  if (!b) wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  return b;
}

/* kind 0: merged (W + (alpha/rank)·B·A, plain ONNX); 1: the base model with the adapters as
 * inputs (lora_B defaulting to zeros). `names`: n NUL-separated output names. */
buf *wtw_module_export_lora(const wt_module *m, const char *names, int n, int kind) {
  const char **list = malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1));
  buf *b = new_buf();
  if (!list || !b) {
    free(list);
    free(b);
    wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++, names += strlen(names) + 1) list[i] = names;
  uint8_t *inf = NULL;
  size_t inf_len = 0;
  wt_graph *g = NULL;
  wt_const_tensor *p = NULL;
  int n_p = 0;
  int rc = wt_module_export_for_inference(m, list, n, &inf, &inf_len);
  free(list);
  if (rc == WT_OK) rc = wt_onnx_read(inf, inf_len, NULL, &g);
  free(inf);
  if (rc == WT_OK) rc = kind == 0 ? wt_lora_merge(g) : wt_lora_adapter_model(g, &p, &n_p);
  wt_lora_params_free(p, n_p);
  if (rc == WT_OK) rc = wt_onnx_write(g, &b->data, &b->len);
  wt_graph_free(g);
  if (rc) {
    wt_error_context(rc, kind == 0 ? "exporting the merged LoRA model" : "exporting the LoRA base model");
    free(b);
    return NULL;
  }
  return b;
}

/* The state's adapters (parameters its module's training model marks as adapters, wt_param.lora)
 * as an .onnx_adapter file. */
buf *wtw_state_lora_adapter(const wt_state *s, int adapter_version, int model_version) {
  wt_const_tensor *p = calloc((size_t)s->n_params + 1, sizeof *p);
  buf *b = new_buf();
  int n = 0;
  for (int i = 0; p && i < s->n_params; i++)
    if (s->params[i].lora) p[n].name = s->params[i].name, p[n++].t = s->params[i].t;
  int rc = !p || !b ? wt_errorf(WT_ERR_NO_MEMORY, "out of memory")
           : n == 0 ? wt_errorf(WT_ERR_INVALID_ARG, "the checkpoint state has no LoRA adapters (no "
                                "parameter its training model marks or names as one, "
                                "'<weight>.lora_A'); generate the artifacts with the lora option")
                    : wt_adapter_write(p, n, adapter_version, model_version, &b->data, &b->len);
  free(p);
  if (rc) {
    free(b);
    return NULL;
  }
  return b;
}

/* A checkpoint of the trainable parameters alone (runtime/state_part.h). */
buf *wtw_state_save_trainable(const wt_state *s, int include_optimizer_state) {
  buf *b = new_buf();
  if (b && wt_state_save_trainable(s, include_optimizer_state, &b->data, &b->len) != WT_OK) {
    free(b);
    return NULL;
  }
  return b;
}

int wtw_state_load_params(wt_state *s, const uint8_t *bytes, size_t len) {
  return wt_state_load_params(s, bytes, len);
}
