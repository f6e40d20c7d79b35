/* The planner: concrete input shapes -> per-node kernels, output shapes, arena offsets. */
#ifndef WT_RUNTIME_PLANNER_H
#define WT_RUNTIME_PLANNER_H

#include "ops/op.h"

struct wt_planner;
const wt_tensor *wt_planner_value(void *planner, wt_infer_ctx *ctx, int i);

#endif
