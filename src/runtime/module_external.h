/* The module for a backend that runs its graphs itself (the WebGPU backend): which of a graph's
 * inputs are the state's parameters, their gradient buffers and the reset flag, and the
 * bookkeeping of a train step run elsewhere. */
#ifndef WT_RUNTIME_MODULE_EXTERNAL_H
#define WT_RUNTIME_MODULE_EXTERNAL_H

#include "runtime/session.h"
#include "webtrain.h"

enum { WT_MODULE_INPUT_USER, WT_MODULE_INPUT_PARAM, WT_MODULE_INPUT_GRAD, WT_MODULE_INPUT_RESET };

/* The session of a mode's model (its inputs bound as the module binds them), or NULL. */
wt_session *wt_module_session(wt_module *m, int32_t eval);
/* Graph input k of a mode's model: WT_MODULE_INPUT_*, with *param the state parameter it holds
 * (or whose gradient; its index as wt_state_param_* count them) or -1; -1 for no such input. */
int wt_module_input_binding(const wt_module *m, int32_t eval, int k, int *param);
/* The graph output index of a mode's user output i, or -1. */
int wt_module_output_graph_index(const wt_module *m, int32_t eval, int i);
/* After a train step that ran elsewhere: as wt_module_train_step's end (a loss that is not
 * finite discards its gradients and is an error saying so). */
int wt_module_external_train_step(wt_module *m, int loss_finite);

/* The BatchNormalization running statistics a train step updates (the module writes them back
 * into the state after its own steps; a backend running the step elsewhere writes them back
 * itself, as module.c's apply_bn does): how many, and of the b-th a graph output index
 * (WT_MODULE_BN_OUT_*: the updated mean, var, and the input's element count) or a state
 * parameter index (WT_MODULE_BN_MEAN, _VAR), or -1. */
enum { WT_MODULE_BN_OUT_MEAN, WT_MODULE_BN_OUT_VAR, WT_MODULE_BN_OUT_COUNT, WT_MODULE_BN_MEAN, WT_MODULE_BN_VAR };
int wt_module_external_bn_count(const wt_module *m);
int wt_module_external_bn(const wt_module *m, int b, int what);
/* The b-th write-back's momentum (the weight of the old running statistics), or -1. */
float wt_module_external_bn_momentum(const wt_module *m, int b);

#endif
