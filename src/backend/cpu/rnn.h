/* Recurrent kernels (ONNX LSTM / GRU / RNN, and the backward passes of LSTM and GRU used by
 * com.microsoft LSTMGrad / GRUGrad). Plain functions over pointers: the input projection of
 * all time steps is one wt_sgemm, each step one recurrent wt_sgemm, then the gate math.
 * Weight layouts are ONNX's: W [dirs, G*H, I], R [dirs, G*H, H], B [dirs, 2*G*H],
 * gate order iofc (LSTM), zrh (GRU), i (RNN). */
#ifndef WT_KERNELS_RNN_H
#define WT_KERNELS_RNN_H

#include <stddef.h>
#include <stdint.h>

enum wt_rnn_cell { WT_RNN_PLAIN = 0, WT_RNN_LSTM = 1, WT_RNN_GRU = 2 };

/* ONNX's RNN activation functions. */
enum wt_rnn_act_kind {
  WT_ACT_SIGMOID, WT_ACT_TANH, WT_ACT_RELU, WT_ACT_AFFINE, WT_ACT_LEAKYRELU,
  WT_ACT_THRESHOLDEDRELU, WT_ACT_SCALEDTANH, WT_ACT_HARDSIGMOID, WT_ACT_ELU, WT_ACT_SOFTSIGN,
  WT_ACT_SOFTPLUS
};

typedef struct wt_rnn_act {
  int kind;
  float alpha, beta;
} wt_rnn_act;

typedef struct wt_rnn_cfg {
  int cell;                     /* wt_rnn_cell */
  int64_t seq, batch, input, hidden;
  int dirs;                     /* 1 or 2 */
  int reverse;                  /* dirs == 1: process the sequence backwards */
  int layout;                   /* 0: X [S,B,I], Y [S,D,B,H]; 1: X [B,S,I], Y [B,S,D,H] */
  float clip;                   /* <= 0: no clipping of gate pre-activations */
  int lbr;                      /* GRU linear_before_reset */
  int input_forget;             /* LSTM: f = 1 - i */
  wt_rnn_act act[2][3];         /* per direction: f, g, h (LSTM); f, g (GRU); f (RNN) */
} wt_rnn_cfg;

/* Number of gates: 4 (LSTM), 3 (GRU), 1 (RNN). */
int wt_rnn_gates(int cell);
/* Parses an ONNX activation name (case-insensitive); -1 when unknown. Sets ONNX's default
 * alpha/beta and reports whether the function takes them (activation_alpha/beta are consumed
 * in order by the functions that take them). */
int wt_rnn_act_parse(const char *name, wt_rnn_act *out, int *uses_alpha, int *uses_beta);

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
