/* What the optimizer's next update computes with, for a backend that runs the update itself
 * (the WebGPU backend: its parameters live in GPU buffers). */
#ifndef WT_RUNTIME_OPTIMIZER_H
#define WT_RUNTIME_OPTIMIZER_H

#include "backend/optim.h"
#include "webtrain.h"

/* The next step's update: AdamW's constants (consts, *sgd_lr 0) or SGD's learning rate
 * (*sgd_lr, consts zeroed and kind -1), at the current learning rate and step count. Changes
 * nothing. */
void wt_optimizer_next_update(const wt_optimizer *o, wt_adamw_consts *consts, float *sgd_lr);

/* A step whose update runs elsewhere: the checks of wt_optimizer_step (gradients pending and
 * finite), the moments made for a later checkpoint, the update's constants as above, and the
 * step counted. Gradient clipping is refused. */
int wt_optimizer_step_external(wt_optimizer *o, wt_adamw_consts *consts, float *sgd_lr);

/* The last external step's update did not run: its train step's loss was not finite, which the
 * backend checks before the update and reports only when the loss is read, after the step was
 * counted. Uncounts it (the next update's constants are those it would have had). */
void wt_optimizer_external_skipped(wt_optimizer *o);

#endif
