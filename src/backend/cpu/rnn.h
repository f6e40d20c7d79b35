/* Recurrent kernels (ONNX LSTM / GRU / RNN, and the backward passes of LSTM and GRU used by
 * com.microsoft LSTMGrad / GRUGrad). Plain functions over pointers: the input projection of
 * all time steps is one wt_sgemm, each step one recurrent wt_sgemm, then the gate math.
 * Weight layouts are ONNX's: W [dirs, G*H, I], R [dirs, G*H, H], B [dirs, 2*G*H],
 * gate order iofc (LSTM), zrh (GRU), i (RNN). */
#ifndef WT_KERNELS_RNN_H
#define WT_KERNELS_RNN_H

#include <stddef.h>
#include <stdint.h>

#include "ops/rnn_cfg.h"

/* Scratch floats wt_rnn_forward needs. */
size_t wt_rnn_forward_scratch(const wt_rnn_cfg *c);
/* Forward pass. B, seq_lens, H0, C0, P may be NULL (zeros / full length). Outputs may be NULL:
 * Y (all hidden states), Yh (last), Yc (last cell, LSTM). Training extras (layout 0 only,
 * [S, D, B, ...]): call (LSTM all cell states) and gates (activated iofc / zrh values). */
void wt_rnn_forward(const wt_rnn_cfg *c, const float *X, const float *W, const float *R,
                    const float *B, const int32_t *seq_lens, const float *H0, const float *C0,
                    const float *P, float *Y, float *Yh, float *Yc, float *call, float *gates,
                    float *scratch);

/* Scratch floats of the backward passes. */
size_t wt_lstm_backward_scratch(const wt_rnn_cfg *c);
size_t wt_gru_backward_scratch(const wt_rnn_cfg *c);

/* LSTM backward (layout 0, default activations, no clip). Inputs: X W R, H0 C0 P (NULL: zero),
 * HAll CAll IOFC from the forward, dHAll dHt dCt (NULL: zero). Outputs may be NULL when not
 * wanted: dX [S,B,I], dW, dR, dB [D,8H], dH0, dC0, dP [D,3H]. */
void wt_lstm_backward(const wt_rnn_cfg *c, const float *X, const float *W, const float *R,
                      const float *H0, const float *C0, const float *P, const float *HAll,
                      const float *CAll, const float *IOFC, const float *dHAll, const float *dHt,
                      const float *dCt, float *dX, float *dW, float *dR, float *dB, float *dH0,
                      float *dC0, float *dP, float *scratch);

/* GRU backward (layout 0, default activations, no clip, either linear_before_reset). */
void wt_gru_backward(const wt_rnn_cfg *c, const float *X, const float *W, const float *R,
                     const float *B, const float *H0, const float *HAll, const float *ZRH,
                     const float *dHAll, const float *dHt, float *dX, float *dW, float *dR,
                     float *dB, float *dH0, float *scratch);

#endif
