/* Gradient rules of LSTM and GRU, as ONNX Runtime builds them: the forward node becomes
 * com.microsoft LSTMTraining / GRUTraining (same inputs and attributes; extra outputs: all
 * cell states and the activated iofc gates / the zrh gates), and one LSTMGrad / GRUGrad node
 * with ORT's inputs, the forward's attributes and one output per differentiable input. */
#include <stdlib.h>
#include <string.h>

#include "ops/rnn_ops.h"

/* Copies every attribute of the forward node to node `dst` (ORT passes SrcNodeAttributes). */
/* Checks the configuration, then turns the forward node into `train_type` (com.microsoft),
 * dropping 'layout' (ORT's training ops have none; only 0 is accepted here). */
static int to_training(wt_grad_ctx *c, int cell, const char *train_type) {
  wt_rnn_cfg cfg;
  memset(&cfg, 0, sizeof cfg);
  const char *why = NULL;
  if (wt_rnn_parse_attrs(wt_grad_node(c), cell, &cfg))
    return wt_grad_fail(c, WT_ERR_INVALID_ARG, "%s", wt_error_message());
  if (!wt_rnn_default_training(&cfg, &why))
    return wt_grad_fail(c, WT_ERR_UNSUPPORTED,
                        "the gradient of %s with %s is not supported (ONNX Runtime's %s supports only "
                        "default activations, no clip, no input_forget, layout 0)",
                        wt_grad_node(c)->op_type, why, train_type);
  /* ORT's training kernels require hidden_size; ONNX lets it default to R's last dim. */
  if (!wt_node_attr(wt_grad_node(c), "hidden_size")) {
    const wt_value *r = wt_grad_value(c, I(2));
    if (r->rank != 3 || r->dims[2] < 0)
      return wt_grad_fail(c, WT_ERR_UNSUPPORTED, "attribute 'hidden_size' is missing and R's shape is not known");
    wt_grad_attr_int(c, c->node, "hidden_size", r->dims[2]);
  }
  if (c->op->flags & WT_OP_TRAINING) return WT_OK;
  if (wt_node_set_op(c->g, c->node, train_type, WT_MS)) return wt_grad_fail(c, WT_ERR_NO_MEMORY, "out of memory");
  wt_node_remove_attr(c->g, c->node, "layout");
  wt_grad_use_domain(c, WT_MS);
  return WT_OK;
}

/* Emits grad_type(ins) with one output per forward input listed in `map` (output k is the
 * gradient of forward input map[k]); outputs nobody needs are omitted (empty names). */
static int emit(wt_grad_ctx *c, const char *grad_type, int n_in, const int *ins, int n_out, const int *map) {
  int node = wt_grad_op_grads(c, grad_type, WT_MS, n_in, ins, n_out, map);
  if (node >= 0) wt_grad_copy_attrs(c, node, NULL, 0);
  return wt_grad_status(c);
}

/* LSTMGrad(X, W, R, SL, H0, C0, HAll, CAll, IOFC, dHAll, dHt, dCt [, P]) ->
 *   dX, dW, dR, dB, dH0, dC0, dP. The trailing P is webtrain's extension (see rnn.c), passed
 * only when the forward has peepholes so the cell-state path through them is exact. */
int wt_rnn_lstm_grad(wt_grad_ctx *c) {
  if (to_training(c, WT_RNN_LSTM, "LSTMTraining")) return wt_grad_status(c);
  int hall = wt_grad_forward_output(c, 0), call = wt_grad_forward_output(c, 3);
  int iofc = wt_grad_forward_output(c, 4);
  if (wt_grad_status(c)) return wt_grad_status(c);
  int ins[13] = {I(0), I(1), I(2), I(4), I(5), I(6), hall, call, iofc, GO(0), GO(1), GO(2), I(7)};
  int n_in = I(7) >= 0 ? 13 : 12;
  while (n_in > 9 && ins[n_in - 1] < 0) n_in--;
  static const int map[7] = {0, 1, 2, 3, 5, 6, 7};
  return emit(c, "LSTMGrad", n_in, ins, 7, map);
}

/* GRUGrad(X, W, R, B, SL, H0, HAll, ZRH, dHAll, dHt) -> dX, dW, dR, dB, dH0. */
int wt_rnn_gru_grad(wt_grad_ctx *c) {
  if (to_training(c, WT_RNN_GRU, "GRUTraining")) return wt_grad_status(c);
  int hall = wt_grad_forward_output(c, 0), zrh = wt_grad_forward_output(c, 2);
  if (wt_grad_status(c)) return wt_grad_status(c);
  int ins[10] = {I(0), I(1), I(2), I(3), I(4), I(5), hall, zrh, GO(0), GO(1)};
  int n_in = 10;
  while (n_in > 8 && ins[n_in - 1] < 0) n_in--;
  static const int map[5] = {0, 1, 2, 3, 5};
  return emit(c, "GRUGrad", n_in, ins, 5, map);
}
