/* The public C entry of artifact generation (include/webtrain.h: wt_artifacts_generate): its
 * options mapped onto the generator's (artifacts.h), which also serves the JavaScript layer. */
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "io/onnx_io.h"
#include "webtrain.h"

struct wt_artifacts_out {
  wt_artifacts a;
};

static void map_options(const wt_artifact_options *p, wt_artifacts_opts *o) {
  memset(o, 0, sizeof *o);
  if (!p) return;
  o->requires_grad = p->requires_grad;
  o->n_requires_grad = p->n_requires_grad;
  o->frozen_params = p->frozen_params;
  o->n_frozen_params = p->n_frozen_params;
  o->loss.type = p->loss;
  o->loss.reduction = p->loss_reduction;
  o->optimizer.type = p->optimizer;
  o->optimizer.lr = p->learning_rate;
  o->additional_output_names = p->additional_output_names;
  o->n_additional_outputs = p->n_additional_outputs;
  o->nominal_checkpoint = p->nominal_checkpoint;
}

static int generate(wt_graph *g, const wt_artifact_options *p, wt_artifacts_out **out) {
  wt_artifacts_opts o;
  map_options(p, &o);
  wt_artifacts_out *r = calloc(1, sizeof *r);
  if (!r) {
    wt_graph_free(g);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  int rc = wt_generate_artifacts_graph(g, &o, &r->a); /* g is consumed */
  if (rc) {
    free(r);
    return rc;
  }
  *out = r;
  return WT_OK;
}

int wt_artifacts_generate(const uint8_t *model, size_t len, const wt_artifact_options *o,
                          wt_artifacts_out **out) {
  *out = NULL;
  if (!model) return wt_errorf(WT_ERR_INVALID_ARG, "wt_artifacts_generate: no model bytes given");
  wt_graph *g = NULL;
  int rc = wt_onnx_read(model, len, NULL, &g);
  return rc ? wt_error_context(rc, "generate_artifacts") : generate(g, o, out);
}

int wt_artifacts_generate_from_file(const char *path, const wt_artifact_options *o,
                                    wt_artifacts_out **out) {
  *out = NULL;
  if (!path) return wt_errorf(WT_ERR_INVALID_ARG, "wt_artifacts_generate_from_file: no path given");
  wt_graph *g = NULL;
  int rc = wt_onnx_read_file(path, &g);
  return rc ? wt_error_context(rc, "generate_artifacts") : generate(g, o, out);
}

const uint8_t *wt_artifacts_out_bytes(const wt_artifacts_out *r, int32_t which, size_t *len) {
  const wt_bytes *b = NULL;
  switch (which) {
    case WT_ARTIFACT_TRAINING_MODEL: b = &r->a.training_model; break;
    case WT_ARTIFACT_EVAL_MODEL: b = &r->a.eval_model; break;
    case WT_ARTIFACT_OPTIMIZER_MODEL: b = &r->a.optimizer_model; break;
    case WT_ARTIFACT_CHECKPOINT: b = &r->a.checkpoint; break;
    case WT_ARTIFACT_NOMINAL_CHECKPOINT: b = &r->a.nominal_checkpoint; break;
    default: break;
  }
  if (len) *len = b && b->data ? b->len : 0;
  return b && b->data ? b->data : NULL;
}

void wt_artifacts_out_free(wt_artifacts_out *r) {
  if (!r) return;
  wt_artifacts_free(&r->a);
  free(r);
}
