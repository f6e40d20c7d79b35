/* A recurrent op's configuration (ONNX LSTM / GRU / RNN attributes and sizes), as the rnn
 * family's infer parses it and its kernels (backend/cpu/rnn.h) run it. */
#ifndef WT_OPS_RNN_CFG_H
#define WT_OPS_RNN_CFG_H

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
static inline int wt_rnn_gates(int cell) {
  return cell == WT_RNN_LSTM ? 4 : cell == WT_RNN_GRU ? 3 : 1;
}
/* Parses an ONNX activation name (case-insensitive); -1 when unknown. Sets ONNX's default
 * alpha/beta and reports whether the function takes them (activation_alpha/beta are consumed
 * in order by the functions that take them). */
int wt_rnn_act_parse(const char *name, wt_rnn_act *out, int *uses_alpha, int *uses_beta);

#endif
