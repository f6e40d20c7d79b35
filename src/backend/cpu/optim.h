/* Optimizer kernels: one call updates one parameter tensor in place. The runtime calls them
 * for every trainable parameter in one optimizer step, through wt_backend_optim_cpu
 * (backend/optim.h). Semantics follow ONNX
 * Runtime's com.microsoft AdamWOptimizer / SGDOptimizerV2 / InplaceClipGradNorm kernels. */
#ifndef WT_KERNELS_OPTIM_H
#define WT_KERNELS_OPTIM_H

#include <stdint.h>

#include "backend/optim.h"  /* wt_adamw_params; wt_backend_optim_cpu holds the functions below */

/* p, g, m, v: n floats; m and v are updated in place. */
void wt_adamw_update_f32(float *p, const float *g, float *m, float *v, int64_t n,
                         const wt_adamw_params *hp);
/* buf += g (gradient accumulation). */
void wt_accumulate_f32(float *buf, const float *g, int64_t n);
/* p -= lr * g */
void wt_sgd_update_f32(float *p, const float *g, int64_t n, float lr);
/* Sum of squares of g (accumulated in double), for gradient-norm clipping across tensors. */
double wt_sum_squares_f32(const float *g, int64_t n);
/* g *= coef */
void wt_scale_f32(float *g, int64_t n, float coef);

#endif
