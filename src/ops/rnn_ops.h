/* Shared between the rnn family's files (rnn.c: ops, rnn_grad.c: gradient rules) and its
 * kernels (backend/cpu/run_rnn.c). */
#ifndef WT_OPS_RNN_OPS_H
#define WT_OPS_RNN_OPS_H

#include "grad/grad.h"
#include "ops/op.h"
#include "ops/rnn_cfg.h"

typedef struct wt_rnn_params {
  wt_rnn_cfg cfg;
  int training;                 /* LSTMTraining / GRUTraining */
  int has_lens;
  size_t lens_off;              /* byte offset of the int32 sequence lengths in the scratch */
} wt_rnn_params;

/* The inputs of the gradient ops, by index. */
/* LSTMGrad (ORT): X W R SL H0 C0 HAll CAll IOFC dHAll dHt dCt [P] -> dX dW dR dB dH0 dC0 dP.
 * Input 12, P, is a webtrain extension (ORT's LSTMGrad has none and so ignores the peepholes'
 * path through the cell state); webtrain's rule passes it only when the forward has P. */
enum { LG_X, LG_W, LG_R, LG_SL, LG_H0, LG_C0, LG_HALL, LG_CALL, LG_IOFC, LG_DHALL, LG_DHT, LG_DCT, LG_P };
/* GRUGrad (ORT): X W R B SL H0 HAll ZRH dHAll dHt -> dX dW dR dB dH0. */
enum { GG_X, GG_W, GG_R, GG_B, GG_SL, GG_H0, GG_HALL, GG_ZRH, GG_DHALL, GG_DHT };

/* Parses direction, layout, clip, linear_before_reset, input_forget, activations (+alpha/beta). */
int wt_rnn_parse_attrs(const wt_node *n, int cell, wt_rnn_cfg *c);
/* True when the configuration is one ORT's training kernels support (default activations, no
 * clip, no input_forget, layout 0); else *why names what is not. */
int wt_rnn_default_training(const wt_rnn_cfg *c, const char **why);

int wt_rnn_lstm_grad(wt_grad_ctx *c);
int wt_rnn_gru_grad(wt_grad_ctx *c);

#endif
