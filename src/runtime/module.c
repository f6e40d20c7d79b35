/* Module: the training and eval sessions over one checkpoint state. Parameters and gradient
 * buffers are bound to the state's memory once; a step copies nothing but the user's inputs
 * and outputs. BatchNormalization running statistics computed by a train step are written back
 * into the state with PyTorch's rule (unbiased batch variance), see docs/api.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "io/onnx_io.h"
#include "backend/cpu/gemm_prepack.h"
#include "ops/op.h"
#include "runtime/module_external.h"
#include "runtime/session.h"
#include "runtime/state.h"

#define SUFFIX_BUF "_grad.accumulation.buffer"
#define SUFFIX_OUT "_grad.accumulation.out"

typedef struct bn_writeback {
  wt_param *mean, *var;
  int out_mean, out_var, out_count;  /* graph output indices */
  float momentum;
} bn_writeback;

typedef struct mode {
  wt_session *sess;
  int n_in, n_out;
  int *in;                      /* graph input index of user input i */
  int *out;                     /* graph output index of user output i */
  int n_model_out;              /* the model's own outputs (the BatchNorm write-back adds more after them) */
  int ran;
} mode;

struct wt_module {
  wt_state *s;
  mode m[3];                    /* WT_MODE_TRAIN, WT_MODE_EVAL, WT_MODE_PREDICT */
  char *predict_names;          /* the predict graph's outputs, NUL-separated (its key) */
  size_t predict_names_len;
  uint8_t reset;                /* lazy_reset_grad fed to the training graph */
  bn_writeback *bn;
  int n_bn;
  /* Frozen weights packed once for the GEMM (backend/cpu/gemm_prepack.h): the module's table (NULL
   * when it could not be made: nothing is packed), which both its sessions' runs read, the
   * buffers given after the first step, and the state's params_gen they were packed for. */
  wt_prepack *prepack;
  float **packed;
  int n_packed, prepacked;
  int prepack_overflow;         /* more candidates than the table holds: a large base, none packed */
  int64_t packed_bytes;
  uint32_t packed_gen;
};

/* Frozen weights packed once: candidates of at least WT_PREPACK_MIN elements, packed only when
 * the packed copies of all the weights the GEMMs ask for fit in WT_PREPACK_BUDGET bytes: a small
 * frozen base (frozen_base_1024x8: 32 MiB) trades that much memory for speed, a large one (a
 * 100M base, a SmolLM2-sized LoRA base) keeps its weights once and packs per product, as the
 * memory goals for large models ask. A packed copy spares packing op(B) in every product of
 * every step: 7-14% of a batch-64 product with N = K = 1024 (tests/bench/gemm_bench.c, `base`
 * rows). */
#ifndef WT_PREPACK_MIN
#define WT_PREPACK_MIN ((int64_t)1 << 16)
#endif
#ifndef WT_PREPACK_BUDGET
#define WT_PREPACK_BUDGET ((int64_t)64 << 20)
#endif

static void prepack_candidate(wt_module *m, const void *data, int dtype, int rank, const int64_t *dims) {
  if (!m->prepack || !data || (dtype != WT_FLOAT && dtype != WT_FLOAT16) || rank != 2 ||
      dims[0] * dims[1] < WT_PREPACK_MIN)
    return;
  if (wt_prepack_add(m->prepack, data, dtype == WT_FLOAT16, dims[0], dims[1]) < 0) m->prepack_overflow = 1;
}

/* The candidates: frozen parameters (written only by loads and updates: params_gen), and the
 * training model's initializers (frozen weights held in the model, never written). */
static void prepack_candidates(wt_module *m) {
  for (int i = 0; i < m->s->n_params; i++) {
    const wt_param *p = &m->s->params[i];
    if (!p->requires_grad) prepack_candidate(m, p->t.data, p->t.dtype, p->t.rank, p->t.dims);
  }
  const wt_graph *g = wt_session_graph(m->m[0].sess);
  for (int v = 0; v < g->n_values; v++) {
    const wt_value *x = &g->values[v];
    if ((x->flags & WT_VALUE_INITIALIZER) && x->rank == 2 && x->dims)
      prepack_candidate(m, x->data, x->dtype, x->rank, x->dims);
  }
  m->packed_gen = m->s->params_gen;
}

/* After the first train step: buffers for the candidates its GEMMs asked for, all of them or
 * none: within the budget and while the heap stays under 3/4 of the memory the build can have
 * (room for plans of other shapes); best effort: a buffer malloc cannot give is left out.
 * Packed at their next use. */
static void prepack_give(wt_module *m) {
  m->prepacked = 1;
  if (m->prepack_overflow || !m->prepack) return;
  int64_t sizes[64];
  int n = wt_prepack_wanted(m->prepack, sizes, 64);
  if (n > 64) return; /* more frozen GEMM weights than the table follows: a large base */
  int64_t bytes = 0;
  for (int i = 0; i < n; i++) bytes += sizes[i] * (int64_t)sizeof(float);
  uint64_t room = wt_session_memory_limit() / 4 * 3, used = wt_session_heap_in_use();
  if (n == 0 || bytes > WT_PREPACK_BUDGET || used + (uint64_t)bytes > room) return;
  m->packed = calloc((size_t)n + 1, sizeof *m->packed);
  if (!m->packed) return;
  for (int i = n - 1; i >= 0; i--) { /* from the last: giving one renumbers those after it */
    float *buf = aligned_alloc(64, (size_t)(sizes[i] * (int64_t)sizeof(float) + 63) / 64 * 64);
    if (!buf) continue;
    m->packed[m->n_packed++] = buf;
    m->packed_bytes += sizes[i] * (int64_t)sizeof(float);
    wt_prepack_give(m->prepack, i, buf);
  }
}

/* Before a step: weights written since they were packed (by this module's optimizer, a load,
 * or another module over this state) are packed again at their next use. */
static void prepack_check(wt_module *m) {
  if (m->s->params_gen == m->packed_gen) return;
  if (m->prepack) wt_prepack_stale(m->prepack);
  m->packed_gen = m->s->params_gen;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

/* What graph input k of a mode's model is bound to (WT_MODULE_INPUT_*), and its parameter. */
static int classify(const wt_module *mod, const wt_graph *g, int k, int train, wt_param **param) {
  const wt_value *v = &g->values[g->inputs[k]];
  *param = wt_state_find(mod->s, v->name);
  if (*param) return WT_MODULE_INPUT_PARAM;
  if (train && ends_with(v->name, SUFFIX_BUF)) {
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(v->name) - strlen(SUFFIX_BUF)), v->name);
    *param = wt_state_find(mod->s, name);
    return WT_MODULE_INPUT_GRAD;
  }
  if (train && !strcmp(v->name, "lazy_reset_grad")) return WT_MODULE_INPUT_RESET;
  return WT_MODULE_INPUT_USER;
}

/* Binds parameters, gradient buffers and lazy_reset_grad; the rest are user inputs. */
static int bind_inputs(wt_module *mod, mode *md, int train) {
  const wt_graph *g = wt_session_graph(md->sess);
  md->in = calloc((size_t)g->n_inputs + 1, sizeof(int));
  md->out = calloc((size_t)g->n_outputs + 1, sizeof(int));
  if (!md->in || !md->out) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  int marked = wt_graph_lora_marked(g);
  for (int k = 0; k < g->n_inputs; k++) {
    const wt_value *v = &g->values[g->inputs[k]];
    wt_param *p;
    int kind = classify(mod, g, k, train, &p);
    if (kind == WT_MODULE_INPUT_PARAM) {
      int same = p->t.dtype == v->dtype && (v->rank < 0 || v->rank == p->t.rank);
      for (int d = 0; same && v->rank >= 0 && d < v->rank; d++)
        same = v->dims[d] < 0 || v->dims[d] == p->t.dims[d];
      if (!same) {
        char want[160], got[160];
        wt_shape_str(p->t.rank, p->t.dims, got, sizeof got);
        wt_value_shape_str(v, want, sizeof want);
        return wt_errorf(WT_ERR_SHAPE, "checkpoint parameter '%s' is %s %s; the %s model expects %s %s "
                         "(is this the checkpoint of another model?)", v->name, wt_dtype_name(p->t.dtype),
                         got, train ? "training" : "eval", wt_dtype_name(v->dtype), want);
      }
      WT_TRY(wt_session_set_input(md->sess, k, p->t.dtype, p->t.rank, p->t.dims, p->t.data));
      if (train) p->lora = (uint8_t)wt_value_lora_role(g, g->inputs[k], marked);
      continue;
    }
    if (kind == WT_MODULE_INPUT_GRAD) {
      if (!p || !p->requires_grad)
        return wt_errorf(WT_ERR_INVALID_ARG, "input '%s': '%.*s' is not a trainable parameter of the checkpoint",
                         v->name, (int)(strlen(v->name) - strlen(SUFFIX_BUF)), v->name);
      WT_TRY(wt_session_set_input(md->sess, k, WT_FLOAT, p->t.rank, p->t.dims, p->grad));
      continue;
    }
    if (kind == WT_MODULE_INPUT_RESET) {
      int64_t one = 1;
      WT_TRY(wt_session_set_input(md->sess, k, WT_BOOL, 1, &one, &mod->reset));
      continue;
    }
    md->in[md->n_in++] = k;
  }
  /* The user's outputs: the model's own (the loss, then the additional outputs), without the
   * gradient accumulators' flags and the running statistics the module added for itself. */
  for (int k = 0; k < md->n_model_out; k++)
    if (!ends_with(g->values[g->outputs[k]].name, SUFFIX_OUT)) md->out[md->n_out++] = k;
  return WT_OK;
}

/* Makes value v a graph output of g (if it is not one) and returns its output index. */
static int output_index(wt_graph *g, int v) {
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == v) return k;
  if (wt_graph_add_output(g, v)) return -1;
  return g->n_outputs - 1;
}

/* Finds BatchNormalization nodes in training mode whose running statistics are state, and
 * exposes their updated statistics and element count per channel as (internal) outputs. */
static int plan_bn_writeback(wt_module *mod, wt_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    wt_node *n = &g->nodes[i];
    /* BatchNormalization, and the BatchNormInternal its gradient rule turns it into (ONNX
     * Runtime's form), keep running mean/var at outputs 1, 2 (WT_OP_RUNNING_STATS). */
    const wt_op_def *op = wt_op_find(n->domain, n->op_type);
    if (!op || !(op->flags & WT_OP_RUNNING_STATS) || !wt_attr_int(n, "training_mode", 0)) continue;
    if (n->n_inputs < 5 || n->inputs[3] < 0 || n->inputs[4] < 0) continue;
    wt_param *mean = wt_state_find(mod->s, g->values[n->inputs[3]].name);
    wt_param *var = wt_state_find(mod->s, g->values[n->inputs[4]].name);
    if (!mean || !var) continue;
    int outs[3];
    for (int k = 0; k < 3; k++) outs[k] = k < n->n_outputs ? n->outputs[k] : -1;
    for (int k = 1; k < 3; k++) {
      if (outs[k] >= 0) continue;
      char name[512];
      snprintf(name, sizeof name, "%s_running_stat_%d", n->name, k);
      outs[k] = wt_graph_fresh_value(g, name);
      if (outs[k] < 0) return WT_ERR_NO_MEMORY;
      n = &g->nodes[i];
    }
    if (n->n_outputs < 3) {
      WT_TRY(wt_node_set_n_outputs(g, i, 3));
      n = &g->nodes[i];
    }
    for (int k = 1; k < 3; k++) {
      n->outputs[k] = outs[k];
      g->values[outs[k]].producer = i;
    }
    /* elements per channel = Size(X) / C, computed (and folded) in the graph: Size(X) output */
    char name[512];
    snprintf(name, sizeof name, "%s_input_size", n->name);
    int size = wt_graph_fresh_value(g, name);
    int x = n->inputs[0];
    snprintf(name, sizeof name, "%s_Size", n->name);
    if (size < 0 || wt_graph_add_node(g, "Size", "", name, 1, &x, 1, &size) < 0)
      return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    n = &g->nodes[i];
    bn_writeback *nb = realloc(mod->bn, sizeof *nb * (size_t)(mod->n_bn + 1));
    if (!nb) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    mod->bn = nb;
    bn_writeback *w = &nb[mod->n_bn++];
    w->mean = mean;
    w->var = var;
    w->momentum = wt_attr_float(n, "momentum", 0.9f);
    w->out_mean = output_index(g, outs[1]);
    w->out_var = output_index(g, outs[2]);
    w->out_count = output_index(g, size);
    if (w->out_mean < 0 || w->out_var < 0 || w->out_count < 0) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  return WT_OK;
}

/* A view of graph output k of the last run of md, written into *t. */
static int graph_output(const mode *md, int k, wt_tensor *t) {
  int32_t dtype, rank;
  const int64_t *dims;
  const void *data;
  WT_TRY(wt_session_output(md->sess, k, &dtype, &rank, &dims, &data));
  t->dtype = dtype;
  t->rank = rank;
  memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->data = (void *)data;
  return WT_OK;
}

/* One BatchNormalization's write-back from its updated statistics (ONNX's) and the elements per
 * channel: running_var: ONNX gives m*old + (1-m)*var_pop; PyTorch wants
 * m*old + (1-m)*var_pop*n/(n-1). */
static void apply_bn(const bn_writeback *w, const float *mean, const float *onnx, double n) {
  int64_t channels = wt_numel(&w->mean->t);
  double corr = n > 1 ? n / (n - 1) : 1.0;
  memcpy(w->mean->t.data, mean, sizeof(float) * (size_t)channels);
  float *old = w->var->t.data;
  for (int64_t c = 0; c < channels; c++) {
    double keep = (double)w->momentum * old[c];
    old[c] = (float)(keep + ((double)onnx[c] - keep) * corr);
  }
}

static int write_back_bn(wt_module *mod) {
  mode *md = &mod->m[0];
  for (int b = 0; b < mod->n_bn; b++) {
    bn_writeback *w = &mod->bn[b];
    wt_tensor tc, tm, tv;
    WT_TRY(graph_output(md, w->out_count, &tc));
    WT_TRY(graph_output(md, w->out_mean, &tm));
    WT_TRY(graph_output(md, w->out_var, &tv));
    int64_t channels = wt_numel(&w->mean->t);
    if (wt_numel(&tm) != channels || wt_numel(&tv) != channels)
      return wt_errorf(WT_ERR_SHAPE, "BatchNormalization running statistics have the wrong size");
    apply_bn(w, tm.data, tv.data, channels ? (double)wt_get_int(&tc, 0) / (double)channels : 0);
  }
  return WT_OK;
}

int wt_module_external_bn(const wt_module *m, int b, int what) {
  if (b < 0 || b >= m->n_bn) return -1;
  const bn_writeback *w = &m->bn[b];
  switch (what) {
  case WT_MODULE_BN_OUT_MEAN: return w->out_mean;
  case WT_MODULE_BN_OUT_VAR: return w->out_var;
  case WT_MODULE_BN_OUT_COUNT: return w->out_count;
  case WT_MODULE_BN_MEAN: return wt_state_param_index(m->s, w->mean->name);
  case WT_MODULE_BN_VAR: return wt_state_param_index(m->s, w->var->name);
  default: return -1;
  }
}

int wt_module_external_bn_count(const wt_module *m) { return m->n_bn; }

float wt_module_external_bn_momentum(const wt_module *m, int b) {
  return b >= 0 && b < m->n_bn ? m->bn[b].momentum : -1.0f;
}

/* Limits up front for a training model's weights in external data (a frozen base by reference):
 * when they cannot fit beside what the heap holds, the load fails before any is allocated,
 * saying how many bytes they need and what would help (a step's check adds the activations). */
static int check_weights_fit(const uint8_t *bytes, size_t len) {
  wt_external_ref *refs;
  int n;
  WT_TRY(wt_onnx_list_external(bytes, len, &refs, &n));
  uint64_t need = 0, half = 0;
  for (int i = 0; i < n; i++) {
    need += refs[i].length;
    if (refs[i].dtype == WT_FLOAT16) half += refs[i].length;
  }
  wt_external_refs_free(refs, n);
  uint64_t held = wt_session_heap_in_use(), limit = wt_session_memory_limit();
  if (held + need <= limit) return WT_OK;
  /* float16 helps only where halving the float weights would make them fit */
  return wt_errorf(WT_ERR_NO_MEMORY, "its weights in external data need %llu bytes (%llu MiB%s) "
                   "beside the %llu MiB in use, more than this build's memory can hold (%llu MiB); "
                   "what would help: %s", (unsigned long long)need, (unsigned long long)(need >> 20),
                   half ? (half == need ? ", all float16" : ", float16 ones included") : "",
                   (unsigned long long)(held >> 20), (unsigned long long)(limit >> 20),
                   held + half + (need - half) / 2 > limit ? "a smaller base (fewer or narrower frozen layers)" :
                   "float16 frozen weights (generateArtifacts(model, { frozenDtype: 'float16' })), "
                   "which halves the float ones, or a smaller base");
}

/* owned: bytes are the caller's malloc'd copy, to be freed once parsed */
static int load_mode(wt_module *mod, int eval, const uint8_t *bytes, size_t len, int owned) {
  wt_graph *g;
  /* The eval model's external initializers share the training model's bytes of the same file
   * range (a frozen base's weights): held once. */
  wt_onnx_read_opts opts = {.share = eval && mod->m[0].sess ? wt_session_graph(mod->m[0].sess) : NULL};
  if (!eval) { /* the eval model's weights are the training model's */
    int rc = check_weights_fit(bytes, len);
    if (rc) {
      if (owned) free((void *)bytes);
      return rc;
    }
  }
  WT_TRY(owned ? wt_onnx_read_owned((uint8_t *)bytes, len, &opts, &g) : wt_onnx_read(bytes, len, &opts, &g));
  mod->m[eval].n_model_out = g->n_outputs;
  if (!eval) {
    int rc = plan_bn_writeback(mod, g);
    if (rc) {
      wt_graph_free(g);
      return rc;
    }
  }
  WT_TRY(wt_session_create_from_graph(g, &mod->m[eval].sess));
  wt_session_set_prepack(mod->m[eval].sess, mod->prepack);
  WT_TRY(bind_inputs(mod, &mod->m[eval], !eval));
  if (!eval) { /* a training model accumulates gradients; an eval or inference model does not */
    const wt_graph *tg = wt_session_graph(mod->m[0].sess);
    int buffers = 0;
    for (int k = 0; k < tg->n_inputs; k++) buffers += ends_with(tg->values[tg->inputs[k]].name, SUFFIX_BUF);
    if (!buffers)
      return wt_errorf(WT_ERR_INVALID_ARG, "the training model has no gradient accumulation inputs "
                       "('<param>_grad.accumulation.buffer'): is it an eval or inference model?");
  }
  return WT_OK;
}

static int add_eval(wt_module *m, const uint8_t *eval, size_t eval_len, int owned) {
  if (m->m[1].sess) {
    if (owned) free((void *)eval);
    return wt_errorf(WT_ERR_INVALID_ARG, "the module has an eval model already");
  }
  int rc = load_mode(m, 1, eval, eval_len, owned);
  if (rc) {
    wt_session_free(m->m[1].sess);
    m->m[1] = (mode){0};
    return wt_error_context(rc, "eval model");
  }
  /* Train and eval steps never overlap: one activation arena serves both. */
  return wt_session_share_arena(m->m[1].sess, m->m[0].sess);
}

int wt_module_add_eval_owned(wt_module *m, uint8_t *eval, size_t eval_len) {
  return add_eval(m, eval, eval_len, 1);
}

static int module_create(wt_state *s, const uint8_t *train, size_t train_len, const uint8_t *eval,
                         size_t eval_len, int owned, wt_module **out) {
  *out = NULL;
  wt_module *m = calloc(1, sizeof *m);
  if (!m) {
    if (owned) free((void *)train), free((void *)eval);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  }
  m->s = s;
  m->reset = 1;
  m->prepack = wt_prepack_new(); /* NULL: nothing is packed once, products pack per step */
  int rc = load_mode(m, 0, train, train_len, owned);
  if (rc) rc = wt_error_context(rc, "training model");
  if (rc == WT_OK) {
    /* The state's parameters take the training model's input order, as in ONNX Runtime's
     * contiguous parameter buffers (Module::CopyParametersToBuffer walks the training
     * model's inputs). */
    const wt_graph *g = wt_session_graph(m->m[0].sess);
    const char **names = malloc(sizeof(char *) * (size_t)(g->n_inputs + 1));
    if (!names) rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
    for (int k = 0; names && k < g->n_inputs; k++) names[k] = g->values[g->inputs[k]].name;
    if (names) rc = wt_state_set_order(s, names, g->n_inputs);
    free(names);
  }
  if (rc == WT_OK) prepack_candidates(m);
  if (rc == WT_OK) s->base_graph = wt_session_graph(m->m[0].sess);
  if (rc == WT_OK && eval && eval_len) rc = add_eval(m, eval, eval_len, owned);
  else if (owned)
    free((void *)eval); /* not read */
  if (rc) {
    wt_module_free(m);
    return rc;
  }
  *out = m;
  return WT_OK;
}

int wt_module_create(wt_state *s, const uint8_t *train, size_t train_len, const uint8_t *eval,
                     size_t eval_len, wt_module **out) {
  return module_create(s, train, train_len, eval, eval_len, 0, out);
}

int wt_module_create_owned(wt_state *s, uint8_t *train, size_t train_len, uint8_t *eval,
                           size_t eval_len, wt_module **out) {
  return module_create(s, train, train_len, eval, eval_len, 1, out);
}

void wt_module_free(wt_module *m) {
  if (!m) return;
  for (int i = 0; i < m->n_packed; i++) free(m->packed[i]);
  free(m->packed);
  if (m->m[0].sess && m->s->base_graph == wt_session_graph(m->m[0].sess)) m->s->base_graph = NULL;
  free(m->predict_names);
  for (int e = 2; e >= 0; e--) { /* predict borrows from eval, eval from the training model */
    wt_session_free(m->m[e].sess);
    free(m->m[e].in);
    free(m->m[e].out);
  }
  free(m->bn);
  wt_prepack_free(m->prepack); /* after the sessions that read it */
  free(m);
}

static const char *mode_name(int32_t mode) {
  return mode == WT_MODE_PREDICT ? "predict" : mode == WT_MODE_EVAL ? "eval" : "training";
}

static const mode *get_mode(const wt_module *m, int32_t eval) {
  return eval >= WT_MODE_TRAIN && eval <= WT_MODE_PREDICT && m->m[eval].sess ? &m->m[eval] : NULL;
}

int32_t wt_module_input_count(const wt_module *m, int32_t eval) {
  const mode *md = get_mode(m, eval);
  return md ? md->n_in : 0;
}
const char *wt_module_input_name(const wt_module *m, int32_t eval, int32_t i) {
  const mode *md = get_mode(m, eval);
  return md && i >= 0 && i < md->n_in ? wt_session_input_name(md->sess, md->in[i]) : NULL;
}
int32_t wt_module_input_dtype(const wt_module *m, int32_t eval, int32_t i) {
  const mode *md = get_mode(m, eval);
  return md && i >= 0 && i < md->n_in ? wt_session_input_dtype(md->sess, md->in[i]) : 0;
}
int32_t wt_module_output_count(const wt_module *m, int32_t eval) {
  const mode *md = get_mode(m, eval);
  return md ? md->n_out : 0;
}
const char *wt_module_output_name(const wt_module *m, int32_t eval, int32_t i) {
  const mode *md = get_mode(m, eval);
  return md && i >= 0 && i < md->n_out ? wt_session_output_name(md->sess, md->out[i]) : NULL;
}

int wt_module_set_input(wt_module *m, int32_t eval, int32_t i, int32_t dtype, int32_t rank,
                        const int64_t *dims, const void *data) {
  const mode *md = get_mode(m, eval);
  if (!md) return wt_errorf(WT_ERR_INVALID_ARG, "the module has no %s model", mode_name(eval));
  if (i < 0 || i >= md->n_in)
    return wt_errorf(WT_ERR_INVALID_ARG, "input index %d is out of range (%d inputs)", i, md->n_in);
  return wt_session_set_input(md->sess, md->in[i], dtype, rank, dims, data);
}

/* A non-finite loss poisons this step's gradients: they are discarded (the next step
 * overwrites the buffers) and the optimizer refuses to apply them, so parameters and
 * BatchNorm statistics are never corrupted by one bad batch. */
static int check_loss(wt_module *m) {
  wt_tensor tv;
  const wt_tensor *t = &tv;
  if (m->m[0].n_out == 0) return WT_OK;
  WT_TRY(graph_output(&m->m[0], m->m[0].out[0], &tv));
  if (t->dtype != WT_FLOAT) return WT_OK;
  const float *v = t->data;
  for (int64_t i = 0, n = wt_numel(t); i < n; i++) {
    if (v[i] - v[i] == 0.0f) continue; /* finite */
    m->s->bad_grads = 1;
    m->reset = 1;
    return wt_errorf(WT_ERR_RUNTIME, "the loss is %s at this train step (a bad batch, or a learning rate "
                     "too high); its gradients are discarded and the optimizer will not apply them",
                     v[i] != v[i] ? "NaN" : "infinite");
  }
  m->s->bad_grads = 0;
  return WT_OK;
}

/* Plans the eval model for the training batch's shapes (eval inputs named like training inputs
 * take their tensors). Best effort: skipped when an eval input has no training namesake. */
static void prepare_eval(wt_module *m) {
  const mode *tr = &m->m[0], *ev = &m->m[1];
  int *idx = malloc(sizeof(int) * (size_t)(ev->n_in + 1));
  wt_tensor *t = malloc(sizeof *t * (size_t)(ev->n_in + 1));
  int ok = idx && t;
  for (int i = 0; ok && i < ev->n_in; i++) {
    const char *name = wt_session_input_name(ev->sess, ev->in[i]);
    const wt_tensor *src = NULL;
    for (int j = 0; j < tr->n_in && !src; j++)
      if (!strcmp(name, wt_session_input_name(tr->sess, tr->in[j]))) src = wt_session_input(tr->sess, tr->in[j]);
    ok = src != NULL;
    if (ok) idx[i] = ev->in[i], t[i] = *src;
  }
  if (ok) wt_session_prepare(ev->sess, ev->n_in, idx, t); /* a failure shows again at eval */
  free(idx);
  free(t);
}

int wt_module_train_step(wt_module *m) {
  mode *md = &m->m[0];
  md->ran = 0;
  /* The first step: the training plan, then the eval plan for the same shapes, are built before
   * the shared arena is allocated, so that their build memory is reused by the arena instead of
   * growing the heap past it at the first eval (and that eval step starts planned). Only the
   * first: with shapes that change every batch, planning eval each time would double the cost. */
  if (m->m[1].sess && wt_session_plan_count(m->m[1].sess) == 0 && !wt_session_planned(md->sess)) {
    WT_TRY(wt_session_prepare(md->sess, 0, NULL, NULL));
    prepare_eval(m);
  }
  prepack_check(m);
  WT_TRY(wt_session_run(md->sess));
  md->ran = 1;
  if (!m->prepacked) prepack_give(m);
  WT_TRY(check_loss(m));
  m->reset = 0;
  m->s->grad_pending = 1;
  return write_back_bn(m);
}

/* A forward-only step: eval, or predict. */
static int forward_step(wt_module *m, mode *md) {
  md->ran = 0;
  prepack_check(m);
  WT_TRY(wt_session_run(md->sess));
  md->ran = 1;
  return WT_OK;
}

int wt_module_eval_step(wt_module *m) {
  if (!m->m[1].sess) return wt_errorf(WT_ERR_INVALID_ARG, "the module was created without an eval model");
  return forward_step(m, &m->m[1]);
}

int wt_module_output(const wt_module *m, int32_t eval, int32_t i, int32_t *dtype, int32_t *rank,
                     const int64_t **dims, const void **data) {
  const mode *md = get_mode(m, eval);
  if (!md || !md->ran)
    return wt_errorf(WT_ERR_INVALID_ARG, "no %s step has run yet", eval == WT_MODE_TRAIN ? "train" : mode_name(eval));
  if (i < 0 || i >= md->n_out)
    return wt_errorf(WT_ERR_INVALID_ARG, "output index %d is out of range (%d outputs)", i, md->n_out);
  return wt_session_output(md->sess, md->out[i], dtype, rank, dims, data);
}

void wt_module_memory(const wt_module *m, wt_module_mem *out) {
  memset(out, 0, sizeof *out);
  out->arena = wt_session_arena_capacity(m->m[0].sess);
  for (int e = 0; e < 2; e++)
    if (m->m[e].sess) out->live_peak[e] = wt_session_live_peak_bytes(m->m[e].sess);
  out->saved = wt_session_saved_bytes(m->m[0].sess, m->m[0].n_in, m->m[0].in);
  for (int i = 0; i < m->s->n_params; i++) {
    const wt_param *p = &m->s->params[i];
    size_t nb = wt_nbytes(&p->t);
    out->params += nb;
    if (p->grad) out->grads += nb;
    out->moments += (p->m ? nb : 0) + (p->v ? nb : 0);
  }
  out->packed = (size_t)m->packed_bytes;
}

/* ---- a backend that runs the module's graphs itself (runtime/module_external.h) ---------- */

wt_session *wt_module_session(wt_module *m, int32_t eval) {
  const mode *md = get_mode(m, eval);
  return md ? md->sess : NULL;
}

int wt_module_input_binding(const wt_module *m, int32_t eval, int k, int *param) {
  const mode *md = get_mode(m, eval);
  *param = -1;
  if (!md || k < 0 || k >= wt_session_input_count(md->sess)) return -1;
  wt_param *p;
  int kind = classify(m, wt_session_graph(md->sess), k, eval == WT_MODE_TRAIN, &p);
  if (p) *param = wt_state_param_index(m->s, p->name); /* the state API's index */
  return kind;
}

int wt_module_output_graph_index(const wt_module *m, int32_t eval, int i) {
  const mode *md = get_mode(m, eval);
  return md && i >= 0 && i < md->n_out ? md->out[i] : -1;
}

int wt_module_external_train_step(wt_module *m, int loss_finite) {
  m->m[0].ran = 0;
  if (!loss_finite) {
    m->s->bad_grads = 1;
    m->reset = 1;
    return wt_errorf(WT_ERR_RUNTIME, "the loss is not finite at this train step (a bad batch, or a learning rate "
                     "too high); its gradients are discarded and the optimizer will not apply them");
  }
  m->s->bad_grads = 0;
  m->reset = 0;
  m->s->grad_pending = 1;
  return WT_OK;
}

int wt_module_lazy_reset_grad(wt_module *m) {
  m->reset = 1;
  m->s->grad_pending = 0;
  return WT_OK;
}

int wt_module_export_for_inference(const wt_module *m, const char *const *output_names,
                                   int32_t n_outputs, uint8_t **out, size_t *len) {
  return wt_module_export_for_inference_ext(m, output_names, n_outputs, 0, out, len);
}

/* The eval graph computing output_names[0..n) (the loss and the labels dropped by prune_inputs):
 * the graph of an export and of predict; `what` names the caller in errors. */
static int forward_graph(const wt_module *m, const char *const *output_names, int32_t n_outputs,
                         const char *what, wt_graph **out) {
  const mode *md = get_mode(m, WT_MODE_EVAL);
  *out = NULL;
  if (!md) return wt_errorf(WT_ERR_INVALID_ARG, "%s needs the eval model (give one to the module)", what);
  if (n_outputs <= 0) return wt_errorf(WT_ERR_INVALID_ARG, "name at least one output to %s", what);
  wt_graph *g;
  /* the eval graph's external weights are borrowed, not copied */
  WT_TRY(wt_graph_clone_shared(wt_session_graph(md->sess), &g));
  int rc = WT_OK;
  for (int k = 0; k < g->n_outputs; k++) g->values[g->outputs[k]].flags &= ~(uint32_t)WT_VALUE_GRAPH_OUTPUT;
  g->n_outputs = 0;
  for (int i = 0; i < n_outputs && rc == WT_OK; i++) {
    int v = wt_graph_find(g, output_names[i]);
    if (v < 0) rc = wt_errorf(WT_ERR_INVALID_ARG, "%s: '%s' is not a value of the eval model", what, output_names[i]);
    else rc = wt_graph_add_output(g, v);
  }
  if (rc) wt_graph_free(g);
  else *out = g;
  return rc;
}

/* Drops the nodes the outputs do not need, then the inputs nothing reads any more (the loss
 * targets). */
static int prune_inputs(wt_graph *g) {
  WT_TRY(wt_graph_prune(g));
  unsigned char *used = calloc((size_t)g->n_values + 1, 1);
  if (!used) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int n = 0; n < g->n_nodes; n++)
    for (int k = 0; k < g->nodes[n].n_inputs; k++)
      if (g->nodes[n].inputs[k] >= 0) used[g->nodes[n].inputs[k]] = 1;
  for (int k = 0; k < g->n_outputs; k++) used[g->outputs[k]] = 1;
  int kept = 0;
  for (int k = 0; k < g->n_inputs; k++)
    if (used[g->inputs[k]]) g->inputs[kept++] = g->inputs[k];
    else g->values[g->inputs[k]].flags &= ~(uint32_t)WT_VALUE_GRAPH_INPUT;
  g->n_inputs = kept;
  free(used);
  return WT_OK;
}

/* Whether output_names[0..n) are the predict graph's outputs (compared without allocating). */
static int same_predict_names(const wt_module *m, const char *const *output_names, int32_t n) {
  if (!m->m[2].sess) return 0;
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    size_t k = strlen(output_names[i]) + 1;
    if (at + k > m->predict_names_len || memcmp(m->predict_names + at, output_names[i], k)) return 0;
    at += k;
  }
  return at == m->predict_names_len;
}

int wt_module_predict_outputs(wt_module *m, const char *const *output_names, int32_t n_outputs) {
  /* the graph for these outputs is built: its plans are reused */
  if (same_predict_names(m, output_names, n_outputs)) return WT_OK;
  size_t len = 0;
  for (int i = 0; i < n_outputs; i++) len += strlen(output_names[i]) + 1;
  char *key = malloc(len + 1);
  if (!key) return wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  for (int i = 0, at = 0; i < n_outputs; i++) at += sprintf(key + at, "%s", output_names[i]) + 1;
  wt_graph *g;
  int rc = forward_graph(m, output_names, n_outputs, "predict", &g);
  if (rc == WT_OK && (rc = prune_inputs(g))) wt_graph_free(g);
  mode md = {0};
  if (rc == WT_OK) {
    md.n_model_out = g->n_outputs;
    rc = wt_session_create_from_graph(g, &md.sess);
  }
  mode old = m->m[2];
  m->m[2] = md;
  if (rc == WT_OK) rc = bind_inputs(m, &m->m[2], 0);
  /* Never at the same time as a train or eval step: their activation arena serves it. */
  if (rc == WT_OK) rc = wt_session_share_arena(m->m[2].sess, m->m[0].sess);
  if (rc) {
    mode bad = m->m[2];
    m->m[2] = old;
    wt_session_free(bad.sess);
    free(bad.in), free(bad.out);
    free(key);
    return rc;
  }
  wt_session_free(old.sess);
  free(old.in), free(old.out);
  free(m->predict_names);
  m->predict_names = key;
  m->predict_names_len = len;
  return WT_OK;
}

int wt_module_predict_step(wt_module *m) {
  if (!m->m[2].sess) return wt_errorf(WT_ERR_INVALID_ARG, "predict: no outputs were chosen (wt_module_predict_outputs)");
  return forward_step(m, &m->m[2]);
}

int wt_module_export_for_inference_ext(const wt_module *m, const char *const *output_names,
                                       int32_t n_outputs, int32_t by_reference, uint8_t **out,
                                       size_t *len) {
  wt_graph *g;
  WT_TRY(forward_graph(m, output_names, n_outputs, "export", &g));
  int rc = WT_OK;
  /* parameters become initializers holding the current values */
  int kept = 0;
  for (int k = 0; k < g->n_inputs && rc == WT_OK; k++) {
    wt_value *v = &g->values[g->inputs[k]];
    wt_param *p = wt_state_find(m->s, v->name);
    if (!p) {
      g->inputs[kept++] = g->inputs[k];
      continue;
    }
    size_t nb = wt_nbytes(&p->t);
    v->data = malloc(nb ? nb : 1);
    if (!v->data) {
      rc = wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
      break;
    }
    memcpy(v->data, p->t.data, nb);
    v->nbytes = nb;
    v->flags = (v->flags & ~(uint32_t)WT_VALUE_GRAPH_INPUT) | WT_VALUE_INITIALIZER;
  }
  if (rc == WT_OK) g->n_inputs = kept;
  if (rc == WT_OK) rc = prune_inputs(g);
  if (rc == WT_OK) rc = by_reference ? wt_onnx_write_by_reference(g, out, len) : wt_onnx_write(g, out, len);
  wt_graph_free(g);
  return rc;
}
