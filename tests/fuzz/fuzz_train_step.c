/* libFuzzer: a fuzzed model with fuzzed input shapes. Input: 8 control bytes then the model.
 * Inference: the session plans and runs the model on inputs built from its declared inputs
 * (symbolic dims from the control bytes, consistent by name; optionally a perturbed dim, a
 * wrong dtype, NaN/Inf), twice (the cached plan), and every output is read; the WebGPU
 * backend's program for the same inputs, when it builds, places every bound value inside its
 * buffer, 256-byte aligned, with no two bindings of a dispatch overlapping. Training, when
 * artifacts can be generated from the model: state, module, optimizer, two train steps with
 * an optimizer step and a lazy gradient reset between them, an eval step, a save; with control
 * bit ctrl[1] & 0x80, only the first float initializer is trained and the others are frozen as
 * float16 (frozen_dtype). */
#include "artifacts/artifacts.h"
#include "fuzz_common.h"
#include "runtime/gpu_program.h"
#include "runtime/session.h"
#include "webtrain.h"

static void read_outputs(int32_t n, int (*get)(const void *, int32_t, int32_t *, int32_t *,
                                               const int64_t **, const void **),
                         const void *h) {
  for (int32_t i = 0; i < n; i++) {
    int32_t dt, rank;
    const int64_t *dims;
    const void *p;
    if (get(h, i, &dt, &rank, &dims, &p) != WT_OK) continue;
    wt_tensor t = {.dtype = dt, .rank = rank};
    for (int a = 0; a < rank && a < WT_MAX_RANK; a++) t.dims[a] = dims[a];
    if (p) wt_fuzz_touch(p, wt_nbytes(&t));
  }
}

static int session_out(const void *h, int32_t i, int32_t *dt, int32_t *rank, const int64_t **dims,
                       const void **p) {
  return wt_session_output((const wt_session *)h, i, dt, rank, dims, p);
}

static const wt_module *g_mod;
static int g_eval;
static int module_out(const void *h, int32_t i, int32_t *dt, int32_t *rank, const int64_t **dims,
                      const void **p) {
  (void)h;
  return wt_module_output(g_mod, g_eval, i, dt, rank, dims, p);
}

static void check_region(const wt_gpu_program *p, wt_gpu_region r) {
  if (r.buffer < 0) return;
  FUZZ_ASSERT(r.buffer < WT_GPU_BUFFERS, "a region names a buffer of the program");
  FUZZ_ASSERT(r.offset % 256 == 0 && r.bytes % 4 == 0, "a region is 256-byte aligned, whole words");
  FUZZ_ASSERT(r.offset + r.bytes <= wt_gpu_program_buffer_bytes(p, r.buffer), "a region lies in its buffer");
}

static void gpu_program(const wt_session *s, const wt_tensor *in) {
  const wt_graph *g = wt_session_graph(s);
  wt_gpu_program *p = NULL;
  /* small limits now and then: a value over them is refused, never laid out */
  wt_gpu_limits small = {.max_binding = 1 << 16, .max_buffer = 1 << 20};
  if (wt_gpu_program_build(g, in, (g->n_values & 3) == 0 ? &small : NULL, NULL, &p) != WT_OK) return;
  const wt_gpu_step *st;
  int n = wt_gpu_program_steps(p, &st);
  for (int i = 0; i < n; i++) {
    FUZZ_ASSERT(st[i].d.n_bind >= 1 && st[i].d.n_bind <= WT_GPU_MAX_BINDS, "a dispatch binds 1..8 values");
    for (int b = 0; b < st[i].d.n_bind; b++) {
      wt_gpu_region r = st[i].regions[b];
      check_region(p, r);
      for (int e = 0; e < b && r.buffer >= 0; e++) {
        wt_gpu_region o = st[i].regions[e];
        FUZZ_ASSERT(o.buffer != r.buffer || o.offset >= r.offset + r.bytes || r.offset >= o.offset + o.bytes,
                    "no two bindings of a dispatch overlap");
      }
    }
  }
  for (int k = 0; k < g->n_inputs; k++) check_region(p, wt_gpu_program_input(p, k));
  for (int k = 0; k < g->n_outputs; k++) {
    const wt_tensor *t;
    check_region(p, wt_gpu_program_output(p, k, &t));
  }
  wt_gpu_program_free(p);
}

static void infer(const uint8_t *model, size_t len, const wt_graph *g, const uint8_t *ctrl) {
  wt_tensor in[64];
  wt_fuzz_dims dm = {0};
  if (g->n_inputs > 64) return;
  if (wt_fuzz_inputs(g, ctrl, &dm, in)) {
    wt_session *s = NULL;
    if (wt_session_create(model, len, &s) == WT_OK) {
      for (int rep = 0; rep < 2; rep++) {
        int ok = 1;
        for (int k = 0; k < g->n_inputs && ok; k++)
          ok = wt_session_set_input(s, k, in[k].dtype, in[k].rank, in[k].dims, in[k].data) == WT_OK;
        if (ok && wt_session_run(s) == WT_OK) read_outputs(wt_session_output_count(s), session_out, s);
      }
      gpu_program(s, in);
      wt_session_free(s);
    }
  }
  wt_fuzz_free_inputs(in, g->n_inputs);
}

static int set_module_inputs(wt_module *m, int eval, const wt_graph *tg, const uint8_t *ctrl,
                             wt_fuzz_dims *dm, wt_tensor *in, int *n_in) {
  const wt_value *vals[64];
  int n = wt_module_input_count(m, eval);
  *n_in = 0;
  if (n < 0 || n > 64) return 0;
  for (int i = 0; i < n; i++) {
    int v = wt_graph_find(tg, wt_module_input_name(m, eval, i));
    if (v < 0) return 0;
    vals[i] = &tg->values[v];
  }
  *n_in = n;
  if (!wt_fuzz_tensors(vals, n, ctrl, dm, in)) return 0;
  for (int i = 0; i < n; i++)
    if (wt_module_set_input(m, eval, i, in[i].dtype, in[i].rank, in[i].dims, in[i].data) != WT_OK)
      return 0;
  return 1;
}

static void train(const uint8_t *model, size_t len, const uint8_t *ctrl) {
  wt_artifacts_opts o;
  memset(&o, 0, sizeof o);
  o.loss.type = 1 + ctrl[0] % 4;
  o.optimizer.type = 1 + ctrl[1] % 2;
  /* float16 frozen weights: train the first float initializer only, freeze the rest as float16 */
  static char first[256];
  const char *req[1] = {first};
  wt_graph *fg = NULL;
  if ((ctrl[1] & 0x80) && wt_onnx_read(model, len, NULL, &fg) == WT_OK) {
    for (int v = 0; v < fg->n_values; v++)
      if ((fg->values[v].flags & WT_VALUE_INITIALIZER) && fg->values[v].dtype == WT_FLOAT) {
        snprintf(first, sizeof first, "%s", fg->values[v].name);
        o.requires_grad = req;
        o.n_requires_grad = 1;
        o.frozen_dtype = WT_FLOAT16;
        break;
      }
  }
  wt_graph_free(fg);
  wt_artifacts a;
  if (wt_generate_artifacts(model, len, &o, &a) != WT_OK) return;
  wt_state *s = NULL;
  wt_module *m = NULL;
  wt_optimizer *op = NULL;
  wt_graph *tg = NULL;
  wt_tensor in[64];
  int n_in = 0;
  wt_fuzz_dims dm = {0};
  if (wt_state_load(a.checkpoint.data, a.checkpoint.len, &s) != WT_OK) goto done;
  if (wt_module_create(s, a.training_model.data, a.training_model.len, a.eval_model.data,
                       a.eval_model.len, &m) != WT_OK)
    goto done;
  if (wt_optimizer_create(s, a.optimizer_model.data, a.optimizer_model.len, &op) != WT_OK) goto done;
  wt_optimizer_set_lr(op, 1e-2f);
  if (wt_onnx_read(a.training_model.data, a.training_model.len, NULL, &tg) != WT_OK) goto done;
  if (set_module_inputs(m, 0, tg, ctrl, &dm, in, &n_in)) {
    g_mod = m;
    g_eval = 0;
    for (int step = 0; step < 2; step++) {
      if (wt_module_train_step(m) != WT_OK) break;
      read_outputs(wt_module_output_count(m, 0), module_out, NULL);
      if (wt_optimizer_step(op) != WT_OK) break;
      wt_module_lazy_reset_grad(m);
    }
  }
  wt_fuzz_free_inputs(in, n_in);
  n_in = 0;
  if (set_module_inputs(m, 1, tg, ctrl, &dm, in, &n_in) && wt_module_eval_step(m) == WT_OK) {
    g_mod = m;
    g_eval = 1;
    read_outputs(wt_module_output_count(m, 1), module_out, NULL);
  }
  uint8_t *b = NULL;
  size_t l = 0;
  if (wt_state_save(s, 1, &b, &l) == WT_OK) wt_free(b);
done:
  wt_fuzz_free_inputs(in, n_in);
  wt_graph_free(tg);
  wt_optimizer_free(op);
  wt_module_free(m);
  wt_state_free(s);
  wt_artifacts_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *ctrl, *model;
  size_t len;
  wt_graph *g = wt_fuzz_model(data, size, &ctrl, &model, &len);
  if (!g) return 0;
  infer(model, len, g, ctrl);
  if (!(ctrl[3] & 8)) train(model, len, ctrl);
  wt_graph_free(g);
  wt_error_clear();
  return 0;
}
