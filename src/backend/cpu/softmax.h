/* Softmax / log-softmax along the middle dim of an [outer, n, inner] view, and the fused
 * softmax cross-entropy loss (the usual classification loss) and the plain NLL loss. Numerically stable: every
 * exponent is taken after subtracting the max. */
#ifndef WT_KERNELS_SOFTMAX_H
#define WT_KERNELS_SOFTMAX_H

#include <stdint.h>

#include "ops/loss_reduction.h"

/* y = softmax(x) (or log_softmax when log_out) over n; y may alias x.
 * tmp: 2 * inner floats, used only when inner > 1. */
void wt_softmax_f32(const float *x, float *y, int64_t outer, int64_t n, int64_t inner,
                    int log_out, float *tmp);

/* Softmax cross-entropy of scores [N, C, D] (D = product of the trailing dims) against labels
 * [N, D] (exactly one of labels32 / labels64 non-NULL). weight [C] may be NULL. Labels equal to
 * ignore_index (when has_ignore) contribute nothing. loss: [N, D] for WT_LOSS_NONE, else one
 * value (mean divides by the summed weights of the non-ignored targets). log_prob [N, C, D]
 * may be NULL. Returns -1, or the flat label index of an out-of-range label (nothing valid is
 * written then). */
int64_t wt_softmax_xent_f32(const float *scores, int64_t N, int64_t C, int64_t D,
                            const int32_t *labels32, const int64_t *labels64, const float *weight,
                            int has_ignore, int64_t ignore_index, int reduction, float *loss,
                            float *log_prob);

/* Negative log-likelihood of log-probabilities [N, C, D] (NegativeLogLikelihoodLoss): the same
 * targets, weights, ignore_index, reduction and return value as wt_softmax_xent_f32. */
int64_t wt_nll_loss_f32(const float *log_prob, int64_t N, int64_t C, int64_t D,
                        const int32_t *labels32, const int64_t *labels64, const float *weight,
                        int has_ignore, int64_t ignore_index, int reduction, float *loss);

/* Softmax backward along the middle dim of [outer, n, inner], from the forward output y:
 *   softmax:      dx = y * (dy - sum_n(dy * y))
 *   log-softmax:  dx = dy - exp(y) * sum_n(dy)          (log_out; y = log-softmax output)
 * dx may alias dy. tmp: inner floats, used only when inner > 1. */
void wt_softmax_grad_f32(const float *dy, const float *y, float *dx, int64_t outer, int64_t n,
                         int64_t inner, int log_out, float *tmp);

/* SoftmaxCrossEntropyLossGrad (ONNX Runtime's semantics) over log_prob [N, C, D]:
 *   dx[n, c, d] = (exp(log_prob[n, c, d]) - (c == t)) * w[t] * g,   t = label[n, d]
 * with w = 1 without weight, 0 for labels equal to ignore_index (when has_ignore), and
 * g = dy[n, d] for WT_LOSS_NONE, else dy[0], divided for WT_LOSS_MEAN by the summed weights
 * of the non-ignored labels (the count without weight) when that sum is not 0.
 * Returns -1, or the flat index of a non-ignored out-of-range label. */
int64_t wt_softmax_xent_grad_f32(const float *dy, const float *log_prob, int64_t N, int64_t C,
                                 int64_t D, const int32_t *labels32, const int64_t *labels64,
                                 const float *weight, int has_ignore, int64_t ignore_index,
                                 int reduction, float *dx);

#endif
