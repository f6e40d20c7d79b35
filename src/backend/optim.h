/* What a backend provides for the optimizer step, besides the op kernels its plans run
 * (wt_backend.optim, backend/backend.h): the in-place updates of a parameter tensor and the
 * reductions gradient clipping needs, over buffers in that backend's memory. The runtime's
 * optimizer (runtime/optimizer.c) calls them through this table only, so that a backend whose parameters live elsewhere (a GPU's buffers)
 * provides its own. Semantics follow ONNX Runtime's com.microsoft AdamWOptimizer /
 * SGDOptimizerV2 / InplaceClipGradNorm kernels. The scalars every backend's step shares (the
 * clipping coefficient, the learning-rate schedule) are computed on the host, below. */
#ifndef WT_BACKEND_OPTIM_H
#define WT_BACKEND_OPTIM_H

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

/* AdamW's per-element constants for one update, computed once on the host (in double, then
 * rounded, where ONNX Runtime computes them so) and read by every backend's update kernel:
 *   kind 0 (adam_mode 0, PyTorch): f = {1 - lr wd, b1, 1 - b1, b2, 1 - b2, -lr / bc1, sqrt(bc2),
 *     eps}: p = p f0; m = m f1 + f2 g; v = v f3 + (f4 g) g; p = p + (f5 m) / (sqrt(v) / f6 + f7)
 *   kind 1 (adam_mode 1, HuggingFace): f = {b1, 1 - b1, b2, 1 - b2, -lr sqrt(bc2) / bc1, eps,
 *     -lr wd}: m, v alike; p = p + (f4 m) / (sqrt(v) + f5), then p = p + f6 p where decay
 * with bc1 = 1 - b1^t, bc2 = 1 - b2^t when correct_bias, else 1. */
typedef struct wt_adamw_consts {
  int kind;
  int decay;                   /* kind 1: weight decay is not 0 */
  float f[8];
} wt_adamw_consts;

void wt_adamw_consts_of(const wt_adamw_params *hp, wt_adamw_consts *c);

typedef struct wt_backend_optim {
  /* p, g, m, v: n floats; p, m and v are updated in place. */
  void (*adamw_update)(float *p, const float *g, float *m, float *v, int64_t n,
                       const wt_adamw_params *hp);
  /* p -= lr * g */
  void (*sgd_update)(float *p, const float *g, int64_t n, float lr);
  /* Sum of squares of g (accumulated in double), for gradient-norm clipping across tensors. */
  double (*sum_squares)(const float *g, int64_t n);
  /* g *= coef */
  void (*scale)(float *g, int64_t n, float coef);
} wt_backend_optim;

/* The CPU backend's (backend/cpu/optim.c). */
extern const wt_backend_optim wt_backend_optim_cpu;

/* ONNX Runtime's clipping coefficient: min(max_norm / (total_norm + 1e-6), 1). A NaN norm gives
 * a NaN coefficient (as in ONNX Runtime and PyTorch): it is not hidden. */
static inline float wt_clip_coef(double total_norm, float max_norm) {
  double c = (double)max_norm / (total_norm + 1e-6);
  return c > 1.0 ? 1.0f : (float)c;
}

/* LinearLRScheduler factor at scheduler step s (ONNX Runtime's linear schedule with warmup). Denominators clamped to 1
 * (as in ONNX Runtime and HuggingFace) so warmup 0 or total == warmup give a finite factor. */
static inline double wt_linear_lr_factor(int64_t s, int64_t warmup, int64_t total) {
  if (s < warmup) return (double)s / (double)(warmup > 1 ? warmup : 1);
  int64_t span = total - warmup;
  double f = (double)(total - s) / (double)(span > 1 ? span : 1);
  return f > 0.0 ? f : 0.0;
}

#endif
