/* Seed corpora for the fuzz targets (run by scripts/fuzz.sh):
 *   fuzz_seedgen CORPUS_DIR FILE...
 * Each model file becomes a seed of fuzz_onnx_load, and, behind a few control-byte prefixes,
 * of fuzz_train_step and fuzz_artifacts. Artifacts generated from each model (training, eval,
 * optimizer models; checkpoint with and without optimizer state after a train step) become
 * seeds of fuzz_onnx_load and fuzz_checkpoint. Non-model files (checkpoints) go to
 * fuzz_checkpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts/artifacts.h"
#include "fuzz_common.h"
#include "io/checkpoint.h"
#include "runtime/state.h"
#include "webtrain.h"

static const char *g_dir;
static int g_n;

static void put(const char *target, const char *tag, const uint8_t *pre, size_t pre_len,
                const uint8_t *b, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/seed-%04d-%s", g_dir, target, g_n, tag);
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  if (pre_len) fwrite(pre, 1, pre_len, f);
  fwrite(b, 1, len, f);
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: fuzz_seedgen CORPUS_DIR FILE...\n");
    return 2;
  }
  g_dir = argv[1];
  static const uint8_t ctrls[5][WT_FUZZ_CTRL] = {
      {0, 1, 0, 0, 1, 2, 3, 4},       /* MSE, AdamW, defaults */
      {1, 2, 0x03, 0, 3, 1, 2, 0},    /* CE, SGD, requires_grad = first two */
      {2, 1, 0x01, 0x02, 0, 0, 0, 0}, /* BCE, some frozen */
      {3, 0x12, 0xff, 0, 0x05, 3, 1, 1}, /* L1, SGD + clip, additional output */
      {1, 0x81, 0x01, 0x06, 0, 1, 0, 0}, /* CE, AdamW, frozen weights as float16 */
  };
  for (int i = 2; i < argc; i++) {
    uint8_t *b;
    size_t len;
    if (wt_read_file(argv[i], &b, &len)) {
      fprintf(stderr, "%s\n", wt_last_error());
      continue;
    }
    g_n++;
    wt_graph *g = NULL;
    if (wt_onnx_read(b, len, NULL, &g) != WT_OK) {
      put("fuzz_checkpoint", "ckpt", NULL, 0, b, len);
      free(b);
      continue;
    }
    wt_graph_free(g);
    put("fuzz_onnx_load", "model", NULL, 0, b, len);
    for (int k = 0; k < 5; k++) {
      char tag[16];
      snprintf(tag, sizeof tag, "c%d", k);
      put("fuzz_train_step", tag, ctrls[k], WT_FUZZ_CTRL, b, len);
      put("fuzz_artifacts", tag, ctrls[k], WT_FUZZ_CTRL, b, len);
      wt_artifacts_opts o;
      memset(&o, 0, sizeof o);
      o.loss.type = 1 + k;
      o.optimizer.type = 1 + k % 2;
      o.nominal_checkpoint = k == 0;
      wt_artifacts a;
      if (wt_generate_artifacts(b, len, &o, &a) != WT_OK) continue;
      snprintf(tag, sizeof tag, "train%d", k);
      put("fuzz_onnx_load", tag, NULL, 0, a.training_model.data, a.training_model.len);
      snprintf(tag, sizeof tag, "eval%d", k);
      put("fuzz_onnx_load", tag, NULL, 0, a.eval_model.data, a.eval_model.len);
      snprintf(tag, sizeof tag, "optim%d", k);
      put("fuzz_onnx_load", tag, NULL, 0, a.optimizer_model.data, a.optimizer_model.len);
      snprintf(tag, sizeof tag, "ckpt%d", k);
      put("fuzz_checkpoint", tag, NULL, 0, a.checkpoint.data, a.checkpoint.len);
      if (a.nominal_checkpoint.data)
        put("fuzz_checkpoint", "nominal", NULL, 0, a.nominal_checkpoint.data, a.nominal_checkpoint.len);
      /* a checkpoint with optimizer state and properties */
      wt_state *s = NULL;
      wt_optimizer *op = NULL;
      if (wt_state_load(a.checkpoint.data, a.checkpoint.len, &s) == WT_OK &&
          wt_optimizer_create(s, a.optimizer_model.data, a.optimizer_model.len, &op) == WT_OK) {
        wt_state_set_int_property(s, "epoch", 3);
        wt_state_set_float_property(s, "best", 0.5f);
        wt_state_set_string_property(s, "note", "seed");
        uint8_t *c;
        size_t cl;
        if (wt_state_save(s, 1, &c, &cl) == WT_OK) {
          snprintf(tag, sizeof tag, "ckptopt%d", k);
          put("fuzz_checkpoint", tag, NULL, 0, c, cl);
          wt_free(c);
        }
        /* the header of the same checkpoint with external data */
        wt_ckpt_segment *sg = NULL;
        int nsg = 0;
        uint64_t ext_len = 0;
        if (wt_state_save_ext(s, 1, &c, &cl, &sg, &nsg, &ext_len) == WT_OK) {
          snprintf(tag, sizeof tag, "ckptext%d", k);
          put("fuzz_checkpoint", tag, NULL, 0, c, cl);
          wt_free(c);
          free(sg);
        }
      }
      wt_optimizer_free(op);
      wt_state_free(s);
      wt_artifacts_free(&a);
    }
    free(b);
  }
  return 0;
}
