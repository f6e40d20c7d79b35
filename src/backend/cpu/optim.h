/* Optimizer kernels: one call updates one parameter tensor in place. The runtime calls them
 * for every trainable parameter in one optimizer step (src/runtime). Semantics follow ONNX
 * Runtime's com.microsoft AdamWOptimizer / SGDOptimizerV2 / InplaceClipGradNorm kernels. */
#ifndef WT_KERNELS_OPTIM_H
#define WT_KERNELS_OPTIM_H

#include <stdint.h>

typedef struct wt_adamw_params {
  float lr;
  float beta1, beta2;          /* ONNX Runtime's attributes alpha, beta */
  float eps;
  float weight_decay;
  int adam_mode;               /* 0: PyTorch torch.optim.AdamW; 1: HuggingFace AdamW */
  int correct_bias;
  int64_t t;                   /* 1-based step count of this update */
} wt_adamw_params;

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
/* ONNX Runtime's clipping coefficient: min(max_norm / (total_norm + 1e-6), 1). */
float wt_clip_coef(double total_norm, float max_norm);
/* LinearLRScheduler factor at scheduler step s (see ORT-COMPAT.md). */
double wt_linear_lr_factor(int64_t s, int64_t warmup, int64_t total);

#endif
