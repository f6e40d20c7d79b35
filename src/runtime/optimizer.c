/* Optimizer: reads the optimizer model's single AdamWOptimizer / SGDOptimizerV2 node (and an
 * optional InplaceClipGradNorm) for its hyperparameters, then updates every trainable
 * parameter of the state in one pass with its backend's update kernels (backend/optim.h:
 * the CPU's fused kernels of src/backend/cpu/optim.c).
 * LinearLRScheduler lives here too: it only moves the learning rate, following the optimizer's
 * step count as ONNX Runtime's does (so a scheduler made after reloading a checkpoint saved with
 * its optimizer state continues the schedule where it was). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "io/onnx_io.h"
#include "backend/cpu/kernel.h"
#include "backend/optim.h"
#include "runtime/optimizer.h"
#include "runtime/state.h"

#define WT_DEFAULT_LR 1e-3f     /* ONNX Runtime's default before set_learning_rate */

struct wt_optimizer {
  wt_state *s;
  const wt_backend_optim *be;   /* where the state's parameters live: the CPU */
  int adamw;                    /* else SGD */
  wt_adamw_params hp;           /* lr and t set per step */
  float clip_max_norm;          /* 0: no clipping */
  float lr;
  int fixed_lr;                 /* the model feeds its optimizer node a constant learning rate */
  float fixed_lr_value;
  int scheduler;                /* a linear schedule is registered */
  int64_t warmup, total;
  float sched_initial_lr;
};

static const wt_node *find_node(const wt_graph *g, const char *op) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!strcmp(g->nodes[i].op_type, op) && !strcmp(g->nodes[i].domain, "com.microsoft")) return &g->nodes[i];
  return NULL;
}

static int alloc_moment(wt_param *p, float **slot) {
  if (*slot) return WT_OK;
  int64_t n = wt_numel(&p->t);
  *slot = calloc((size_t)(n ? n : 1), sizeof(float));
  return *slot ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory for the optimizer state of '%s'", p->name);
}

/* AdamW's moments not loaded from a checkpoint start at zero, allocated at the first step: by
 * then the module's plans and activation arena exist, and the moments fill the room their
 * building left below the arena instead of sitting under it (a checkpoint saved before writes
 * zeros for them). SGD reads none: ONNX Runtime's SGD checkpoints carry a momentum0 per
 * parameter, which a save writes as zeros without holding them (a parameter's worth of memory
 * per trained parameter: 45 MB for resnet18, 112 MB for ConvNeXt-tiny). */
static int alloc_moments(const wt_optimizer *o) {
  wt_state *s = o->s;
  for (int i = 0; i < s->n_params && o->adamw; i++) {
    wt_param *p = &s->params[i];
    if (!p->requires_grad) continue;
    WT_TRY(alloc_moment(p, &p->m));
    WT_TRY(alloc_moment(p, &p->v));
  }
  return WT_OK;
}

int wt_optimizer_create(wt_state *s, const uint8_t *model, size_t len, wt_optimizer **out) {
  *out = NULL;
  wt_graph *g;
  WT_TRY(wt_onnx_read(model, len, NULL, &g));
  wt_optimizer *o = calloc(1, sizeof *o);
  int rc = o ? WT_OK : wt_errorf(WT_ERR_NO_MEMORY, "out of memory");
  const wt_node *n;
  if (rc == WT_OK && (n = find_node(g, "AdamWOptimizer"))) {
    o->adamw = 1;
    o->hp.beta1 = wt_attr_float(n, "alpha", 0.9f);
    o->hp.beta2 = wt_attr_float(n, "beta", 0.999f);
    o->hp.eps = wt_attr_float(n, "epsilon", 1e-8f);
    o->hp.weight_decay = wt_attr_float(n, "weight_decay", 0.01f);
    o->hp.adam_mode = (int)wt_attr_int(n, "adam_mode", 0);
    o->hp.correct_bias = (int)wt_attr_int(n, "correct_bias", 1);
    if (o->hp.adam_mode != 0 && o->hp.adam_mode != 1)
      rc = wt_errorf(WT_ERR_UNSUPPORTED, "AdamWOptimizer: adam_mode %d (expected 0 or 1)", o->hp.adam_mode);
  } else if (rc == WT_OK && !find_node(g, "SGDOptimizerV2")) {
    rc = wt_errorf(WT_ERR_UNSUPPORTED, "optimizer model: no com.microsoft AdamWOptimizer or SGDOptimizerV2 node");
  }
  /* Input 0 of the optimizer node is the learning rate. ONNX Runtime feeds whatever the graph
   * computes there: the `learning_rate` input (what generate_artifacts emits) or a constant baked
   * into the model (used by runtimes with no learning-rate control, e.g. onnxruntime-web, whose
   * rate is stuck at 1e-3). webtrain runs the optimizer node itself, so it honors a constant
   * and refuses any other computation instead of silently training at another rate. */
  const wt_node *opt = rc == WT_OK ? find_node(g, o->adamw ? "AdamWOptimizer" : "SGDOptimizerV2") : NULL;
  if (opt && opt->n_inputs > 0 && opt->inputs[0] >= 0) {
    const wt_value *v = &g->values[opt->inputs[0]];
    if ((v->flags & WT_VALUE_INITIALIZER) && v->data && v->dtype == WT_FLOAT && v->nbytes == sizeof(float)) {
      o->fixed_lr = 1;
      memcpy(&o->fixed_lr_value, v->data, sizeof(float));
    } else if (!((v->flags & WT_VALUE_GRAPH_INPUT) && !strcmp(v->name, "learning_rate"))) {
      rc = wt_errorf(WT_ERR_UNSUPPORTED, "optimizer model: %s takes its learning rate from '%s', computed in "
                     "the graph; webtrain supports the 'learning_rate' input or a constant",
                     opt->op_type, v->name);
    }
  }
  if (rc == WT_OK && (n = find_node(g, "InplaceClipGradNorm"))) {
    const char *type = wt_attr_string(n, "norm_type", "fro");
    if (strcmp(type, "fro")) rc = wt_errorf(WT_ERR_UNSUPPORTED, "InplaceClipGradNorm: norm_type '%s' (only 'fro')", type);
    o->clip_max_norm = wt_attr_float(n, "max_norm", 1.0f);
  }
  wt_graph_free(g);
  if (rc) {
    free(o);
    return rc;
  }
  o->s = s;
  o->be = wt_backend_cpu.optim;
  if (!s->has_optimizer) {
    s->has_optimizer = 1;
    s->step = 0;
    s->initial_lr = WT_DEFAULT_LR;
  }
  s->n_moments = o->adamw ? 2 : 1;
  o->lr = o->fixed_lr ? o->fixed_lr_value : s->initial_lr;
  *out = o;
  return WT_OK;
}

void wt_optimizer_free(wt_optimizer *o) { free(o); }

/* The hyperparameters of the next update: the rate in force, the 1-based step it will be. */
static wt_adamw_params next_params(const wt_optimizer *o) {
  wt_adamw_params hp = o->hp;
  hp.lr = o->fixed_lr ? o->fixed_lr_value : o->lr;
  hp.t = o->s->step + 1;
  return hp;
}

void wt_optimizer_next_update(const wt_optimizer *o, wt_adamw_consts *consts, float *sgd_lr) {
  wt_adamw_params hp = next_params(o);
  memset(consts, 0, sizeof *consts);
  *sgd_lr = 0.0f;
  if (o->adamw) {
    wt_adamw_consts_of(&hp, consts);
  } else {
    consts->kind = -1;
    *sgd_lr = hp.lr;
  }
}

/* Whether a step may apply the gradients. */
static int check_step(const wt_optimizer *o) {
  const wt_state *s = o->s;
  if (s->bad_grads)
    return wt_errorf(WT_ERR_RUNTIME, "optimizer step refused: the last train step's loss was not finite, "
                     "so its gradients were discarded; run a train step on a good batch first");
  /* Without gradients the update would still apply weight decay (AdamW) and count a step. */
  if (!s->grad_pending)
    return wt_errorf(WT_ERR_INVALID_ARG, "no gradients to apply: no train step ran since the "
                     "last optimizer step or lazy gradient reset (an eval step computes none); run a train "
                     "step (module.train(), then module.run(inputs, labels)) first");
  return WT_OK;
}

int wt_optimizer_step_external(wt_optimizer *o, wt_adamw_consts *consts, float *sgd_lr) {
  WT_TRY(check_step(o));
  if (o->clip_max_norm > 0)
    return wt_errorf(WT_ERR_UNSUPPORTED, "optimizer step: gradient clipping (InplaceClipGradNorm) is not on the "
                     "webgpu backend yet; train this model with backend 'wasm'");
  wt_state *s = o->s;
  WT_TRY(alloc_moments(o)); /* what a later checkpoint reads the GPU's moments back into */
  wt_optimizer_next_update(o, consts, sgd_lr);
  s->step++;
  s->grad_pending = 0;
  return WT_OK;
}

void wt_optimizer_external_skipped(wt_optimizer *o) {
  if (o->s->step > 0) o->s->step--;
}

int wt_optimizer_step(wt_optimizer *o) {
  wt_state *s = o->s;
  WT_TRY(check_step(o));
  if (o->clip_max_norm > 0) {
    double sq = 0;
    for (int i = 0; i < s->n_params; i++)
      if (s->params[i].requires_grad) sq += o->be->sum_squares(s->params[i].grad, wt_numel(&s->params[i].t));
    float coef = wt_clip_coef(sqrt(sq), o->clip_max_norm);
    for (int i = 0; i < s->n_params; i++)
      if (s->params[i].requires_grad) o->be->scale(s->params[i].grad, wt_numel(&s->params[i].t), coef);
  }
  WT_TRY(alloc_moments(o));
  wt_adamw_params hp = next_params(o);
  for (int i = 0; i < s->n_params; i++) {
    wt_param *p = &s->params[i];
    if (!p->requires_grad) continue;
    int64_t n = wt_numel(&p->t);
    if (o->adamw) o->be->adamw_update(p->t.data, p->grad, p->m, p->v, n, &hp);
    else o->be->sgd_update(p->t.data, p->grad, n, hp.lr);
  }
  s->step++;
  s->grad_pending = 0;
  return WT_OK;
}

int wt_optimizer_set_lr(wt_optimizer *o, float lr) {
  if (!(lr >= 0)) return wt_errorf(WT_ERR_INVALID_ARG, "learning rate %g: expected a number >= 0", lr);
  if (o->fixed_lr)
    return wt_errorf(WT_ERR_INVALID_ARG, "the optimizer model fixes the learning rate at %g (a constant in "
                     "the graph); it cannot be set", o->fixed_lr_value);
  o->lr = lr;
  if (o->s->step == 0 && !o->scheduler) o->s->initial_lr = lr;
  return WT_OK;
}

float wt_optimizer_get_lr(const wt_optimizer *o) { return o->lr; }

int wt_optimizer_set_linear_scheduler(wt_optimizer *o, int64_t warmup_steps, int64_t total_steps,
                                      float initial_lr) {
  if (warmup_steps < 0 || total_steps < 0)
    return wt_errorf(WT_ERR_INVALID_ARG, "LinearLRScheduler: warmup_step_count %lld and total_step_count %lld "
                     "must be >= 0", (long long)warmup_steps, (long long)total_steps);
  if (o->fixed_lr)
    return wt_errorf(WT_ERR_INVALID_ARG, "LinearLRScheduler: the optimizer model fixes the learning rate at %g "
                     "(a constant in the graph)", o->fixed_lr_value);
  o->scheduler = 1;
  o->warmup = warmup_steps;
  o->total = total_steps;
  o->sched_initial_lr = initial_lr;
  o->s->initial_lr = initial_lr;
  return wt_optimizer_scheduler_step(o);
}

/* The rate for the optimizer's step count (the state's: a reloaded checkpoint's step counts). */
int wt_optimizer_scheduler_step(wt_optimizer *o) {
  if (!o->scheduler) return wt_errorf(WT_ERR_INVALID_ARG, "no learning-rate scheduler is registered");
  o->lr = (float)(o->sched_initial_lr * wt_linear_lr_factor(o->s->step, o->warmup, o->total));
  return WT_OK;
}
