/* Shared between the rnn family's files (rnn.c: ops, rnn_grad.c: gradient rules). */
#ifndef WT_OPS_RNN_OPS_H
#define WT_OPS_RNN_OPS_H

#include "grad/grad.h"
#include "backend/cpu/rnn.h"
#include "ops/op.h"

typedef struct wt_rnn_params {
  wt_rnn_cfg cfg;
  int training;                 /* LSTMTraining / GRUTraining */
  int has_lens;
  size_t lens_off;              /* byte offset of the int32 sequence lengths in the scratch */
} wt_rnn_params;

/* Parses direction, layout, clip, linear_before_reset, input_forget, activations (+alpha/beta). */
int wt_rnn_parse_attrs(const wt_node *n, int cell, wt_rnn_cfg *c);
/* True when the configuration is one ORT's training kernels support (default activations, no
 * clip, no input_forget, layout 0); else *why names what is not. */
int wt_rnn_default_training(const wt_rnn_cfg *c, const char **why);

int wt_rnn_lstm_grad(wt_grad_ctx *c);
int wt_rnn_gru_grad(wt_grad_ctx *c);

#endif
