/* Op family: recurrent networks. ONNX LSTM, GRU and RNN (all directions, layouts 0/1, biases,
 * sequence_lens, initial states, peepholes, the ONNX activation set, clip, linear_before_reset),
 * and ONNX Runtime's training pair for each of LSTM and GRU: com.microsoft LSTMTraining /
 * GRUTraining (the forward with the extra outputs the backward reads: all cell states, the
 * activated gate values) and LSTMGrad / GRUGrad. Gradient rules live in rnn_grad.c. */
#include <assert.h>
#include <ctype.h>
#include <string.h>

#include "ops/rnn_ops.h"

static_assert(sizeof(wt_rnn_params) <= WT_PARAMS_MAX, "params too large");

/* The cell is the op's variant (LSTM, GRU, RNN and their training / gradient forms). */
static int cell_of(const wt_infer_ctx *ctx) { return ctx->op->variant; }

static int name_eq(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

int wt_rnn_act_parse(const char *name, wt_rnn_act *out, int *uses_alpha, int *uses_beta) {
  static const struct { const char *name; int kind, ua, ub; float a, b; } k[] = {
      {"Sigmoid", WT_ACT_SIGMOID, 0, 0, 0, 0},
      {"Tanh", WT_ACT_TANH, 0, 0, 0, 0},
      {"Relu", WT_ACT_RELU, 0, 0, 0, 0},
      {"Affine", WT_ACT_AFFINE, 1, 1, 1.0f, 0.0f},
      {"LeakyRelu", WT_ACT_LEAKYRELU, 1, 0, 0.01f, 0},
      {"ThresholdedRelu", WT_ACT_THRESHOLDEDRELU, 1, 0, 1.0f, 0},
      {"ScaledTanh", WT_ACT_SCALEDTANH, 1, 1, 1.0f, 1.0f},
      {"HardSigmoid", WT_ACT_HARDSIGMOID, 1, 1, 0.2f, 0.5f},
      {"Elu", WT_ACT_ELU, 1, 0, 1.0f, 0},
      {"Softsign", WT_ACT_SOFTSIGN, 0, 0, 0, 0},
      {"Softplus", WT_ACT_SOFTPLUS, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (name_eq(name, k[i].name)) {
      out->kind = k[i].kind;
      out->alpha = k[i].a;
      out->beta = k[i].b;
      *uses_alpha = k[i].ua;
      *uses_beta = k[i].ub;
      return 0;
    }
  return -1;
}

static int n_acts(int cell) { return cell == WT_RNN_LSTM ? 3 : cell == WT_RNN_GRU ? 2 : 1; }

int wt_rnn_parse_attrs(const wt_node *n, int cell, wt_rnn_cfg *c) {
  const char *dir = wt_attr_string(n, "direction", "forward");
  c->cell = cell;
  c->dirs = 1;
  if (!strcmp(dir, "reverse")) c->reverse = 1;
  else if (!strcmp(dir, "bidirectional")) c->dirs = 2;
  else if (strcmp(dir, "forward"))
    return wt_errorf(WT_ERR_INVALID_ARG,
                     "attribute 'direction' is \"%s\"; expected forward, reverse or bidirectional", dir);
  c->layout = (int)wt_attr_int(n, "layout", 0);
  if (c->layout != 0 && c->layout != 1)
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'layout' is %d; expected 0 or 1", c->layout);
  const wt_attr *clip = wt_node_attr(n, "clip");
  c->clip = clip ? clip->f : 0.0f;
  if (clip && !(clip->f > 0))
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'clip' is %g; expected a positive threshold", (double)clip->f);
  c->lbr = (int)wt_attr_int(n, "linear_before_reset", 0);
  c->input_forget = (int)wt_attr_int(n, "input_forget", 0);
  const int na = n_acts(cell);
  static const char *defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh"}};
  const wt_attr *acts = wt_node_attr(n, "activations");
  if (acts && (acts->type != WT_ATTR_STRINGS || (acts->n != na && acts->n != na * c->dirs)))
    return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'activations' has %d names; expected %d (%d per direction)",
                     acts->type == WT_ATTR_STRINGS ? acts->n : 0, na * c->dirs, na);
  const float *alpha = NULL, *beta = NULL;
  int n_alpha = wt_attr_floats(n, "activation_alpha", &alpha), n_beta = wt_attr_floats(n, "activation_beta", &beta);
  int ia = 0, ib = 0;
  for (int d = 0; d < c->dirs; d++)
    for (int k = 0; k < na; k++) {
      const char *name = acts ? acts->strings[acts->n == na ? k : d * na + k] : defaults[cell][k];
      int ua, ub;
      if (wt_rnn_act_parse(name, &c->act[d][k], &ua, &ub))
        return wt_errorf(WT_ERR_UNSUPPORTED,
                         "activation \"%s\" is not supported; expected one of Sigmoid, Tanh, Relu, Affine, "
                         "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus", name);
      if (ua && ia < n_alpha) c->act[d][k].alpha = alpha[ia++];
      if (ub && ib < n_beta) c->act[d][k].beta = beta[ib++];
    }
  return WT_OK;
}

int wt_rnn_default_training(const wt_rnn_cfg *c, const char **why) {
  for (int d = 0; d < c->dirs; d++)
    for (int k = 0; k < n_acts(c->cell); k++)
      if (c->act[d][k].kind != (k == 0 ? WT_ACT_SIGMOID : WT_ACT_TANH)) {
        *why = "non-default activations";
        return 0;
      }
  if (c->clip > 0) return *why = "clip", 0;
  if (c->input_forget) return *why = "input_forget=1", 0;
  if (c->layout) return *why = "layout=1", 0;
  return 1;
}

static int check_f32(const wt_infer_ctx *ctx, int i, const char *name) {
  return wt_expect_float(&ctx->in[i], name, i);
}

/* Checks that input i (when present) has exactly the given shape. */
static int check_shape(const wt_infer_ctx *ctx, int i, const char *name, int rank, const int64_t *dims) {
  if (!wt_has_input(ctx->in, ctx->n_in, i)) return WT_OK;
  WT_TRY(check_f32(ctx, i, name));
  const wt_tensor *t = &ctx->in[i];
  int ok = t->rank == rank;
  for (int k = 0; ok && k < rank; k++) ok = t->dims[k] == dims[k];
  if (!ok) {
    char a[128], b[128];
    return wt_errorf(WT_ERR_SHAPE, "input '%s' (index %d) has shape %s; expected %s", name, i,
                     wt_shape_str(t->rank, t->dims, a, sizeof a), wt_shape_str(rank, dims, b, sizeof b));
  }
  return WT_OK;
}

/* Validates X W R (inputs 0..2) and fills sizes. layout from cfg. */
static int infer_sizes(wt_infer_ctx *ctx, wt_rnn_cfg *c) {
  const int64_t G = wt_rnn_gates(c->cell);
  const wt_tensor *X = &ctx->in[0], *W = &ctx->in[1], *R = &ctx->in[2];
  WT_TRY(check_f32(ctx, 0, "X"));
  if (X->rank != 3) return wt_errorf(WT_ERR_SHAPE, "input 'X' (index 0) has rank %d; expected 3", X->rank);
  c->seq = X->dims[c->layout ? 1 : 0];
  c->batch = X->dims[c->layout ? 0 : 1];
  c->input = X->dims[2];
  WT_TRY(check_f32(ctx, 2, "R"));
  int64_t H = wt_attr_int(ctx->node, "hidden_size", R->rank == 3 ? R->dims[2] : 0);
  if (H <= 0) return wt_errorf(WT_ERR_INVALID_ARG, "attribute 'hidden_size' is %lld; expected > 0", (long long)H);
  c->hidden = H;
  WT_TRY(check_shape(ctx, 1, "W", 3, (int64_t[]){c->dirs, G * H, c->input}));
  (void)W;
  return check_shape(ctx, 2, "R", 3, (int64_t[]){c->dirs, G * H, H});
}

static int infer_lens(wt_infer_ctx *ctx, int i, wt_rnn_params *p) {
  if (!wt_has_input(ctx->in, ctx->n_in, i)) return WT_OK;
  const wt_tensor *t = &ctx->in[i];
  if (t->dtype != WT_INT32 && t->dtype != WT_INT64)
    return wt_errorf(WT_ERR_SHAPE, "input 'sequence_lens' (index %d) has dtype %s; expected int32", i,
                     wt_dtype_name(t->dtype));
  if (t->rank != 1 || t->dims[0] != p->cfg.batch)
    return wt_errorf(WT_ERR_SHAPE, "input 'sequence_lens' (index %d) has rank %d / %lld elements; expected shape [%lld]",
                     i, t->rank, (long long)wt_numel(t), (long long)p->cfg.batch);
  p->has_lens = 1;
  return WT_OK;
}

/* ---- forward: ONNX LSTM / GRU / RNN and com.microsoft LSTMTraining / GRUTraining --------- */

static int forward_infer(wt_infer_ctx *ctx) {
  wt_rnn_params *p = WT_PARAMS(ctx, wt_rnn_params);
  wt_rnn_cfg *c = &p->cfg;
  const int cell = cell_of(ctx);
  p->training = (ctx->op->flags & WT_OP_TRAINING) != 0;
  WT_TRY(wt_rnn_parse_attrs(ctx->node, cell, c));
  if (p->training) {
    const char *why = NULL;
    if (!wt_rnn_default_training(c, &why))
      return wt_errorf(WT_ERR_UNSUPPORTED, "%s is not supported by %s", why, ctx->node->op_type);
  }
  WT_TRY(infer_sizes(ctx, c));
  const int64_t G = wt_rnn_gates(cell), H = c->hidden, D = c->dirs, S = c->seq, B = c->batch;
  WT_TRY(check_shape(ctx, 3, "B", 2, (int64_t[]){D, 2 * G * H}));
  WT_TRY(infer_lens(ctx, 4, p));
  const int64_t *sd = c->layout ? (int64_t[]){B, D, H} : (int64_t[]){D, B, H};
  WT_TRY(check_shape(ctx, 5, "initial_h", 3, sd));
  if (cell == WT_RNN_LSTM) {
    WT_TRY(check_shape(ctx, 6, "initial_c", 3, sd));
    WT_TRY(check_shape(ctx, 7, "P", 2, (int64_t[]){D, 3 * H}));
  }
  if (ctx->n_out < 1) return WT_OK;
  if (c->layout) wt_set_shape(&ctx->out[0], WT_FLOAT, 4, (int64_t[]){B, S, D, H});
  else wt_set_shape(&ctx->out[0], WT_FLOAT, 4, (int64_t[]){S, D, B, H});
  for (int o = 1; o < ctx->n_out; o++) wt_set_shape(&ctx->out[o], WT_FLOAT, 3, sd);
  if (p->training) {
    int i_call = cell == WT_RNN_LSTM ? 3 : -1, i_gates = cell == WT_RNN_LSTM ? 4 : 2;
    if (i_call < ctx->n_out && i_call >= 0) wt_set_shape(&ctx->out[i_call], WT_FLOAT, 4, (int64_t[]){S, D, B, H});
    if (i_gates < ctx->n_out) wt_set_shape(&ctx->out[i_gates], WT_FLOAT, 4, (int64_t[]){S, D, B, G * H});
  }
  return WT_OK;
}

/* ---- com.microsoft LSTMGrad / GRUGrad --------------------------------------------------- */

static int grad_infer(wt_infer_ctx *ctx) {
  wt_rnn_params *p = WT_PARAMS(ctx, wt_rnn_params);
  wt_rnn_cfg *c = &p->cfg;
  const int cell = cell_of(ctx), lstm = cell == WT_RNN_LSTM;
  WT_TRY(wt_rnn_parse_attrs(ctx->node, cell, c));
  const char *why = NULL;
  if (!wt_rnn_default_training(c, &why))
    return wt_errorf(WT_ERR_UNSUPPORTED, "%s is not supported by %s", why, ctx->node->op_type);
  WT_TRY(infer_sizes(ctx, c));
  const int64_t G = wt_rnn_gates(cell), H = c->hidden, D = c->dirs, S = c->seq, B = c->batch;
  const int64_t sd[3] = {D, B, H}, all[4] = {S, D, B, H}, gates[4] = {S, D, B, G * H};
  if (lstm) {
    WT_TRY(infer_lens(ctx, LG_SL, p));
    WT_TRY(check_shape(ctx, LG_H0, "initial_h", 3, sd));
    WT_TRY(check_shape(ctx, LG_C0, "initial_c", 3, sd));
    WT_TRY(check_shape(ctx, LG_HALL, "all_hidden_states", 4, all));
    WT_TRY(check_shape(ctx, LG_CALL, "all_cell_states", 4, all));
    WT_TRY(check_shape(ctx, LG_IOFC, "iofc", 4, gates));
    WT_TRY(check_shape(ctx, LG_DHALL, "grad_all_hidden_states", 4, all));
    WT_TRY(check_shape(ctx, LG_DHT, "grad_final_hidden_state", 3, sd));
    WT_TRY(check_shape(ctx, LG_DCT, "grad_final_cell_state", 3, sd));
    WT_TRY(check_shape(ctx, LG_P, "P", 2, (int64_t[]){D, 3 * H}));
    for (int i = LG_HALL; i <= LG_IOFC; i++)
      if (!wt_has_input(ctx->in, ctx->n_in, i))
        return wt_errorf(WT_ERR_INVALID_ARG, "input %d (all hidden states, all cell states, iofc) is required", i);
  } else {
    WT_TRY(check_shape(ctx, GG_B, "B", 2, (int64_t[]){D, 2 * G * H}));
    WT_TRY(infer_lens(ctx, GG_SL, p));
    WT_TRY(check_shape(ctx, GG_H0, "initial_h", 3, sd));
    WT_TRY(check_shape(ctx, GG_HALL, "all_hidden_states", 4, all));
    WT_TRY(check_shape(ctx, GG_ZRH, "zrh", 4, gates));
    WT_TRY(check_shape(ctx, GG_DHALL, "grad_all_hidden_states", 4, all));
    WT_TRY(check_shape(ctx, GG_DHT, "grad_final_hidden_state", 3, sd));
    for (int i = GG_HALL; i <= GG_ZRH; i++)
      if (!wt_has_input(ctx->in, ctx->n_in, i))
        return wt_errorf(WT_ERR_INVALID_ARG, "input %d (all hidden states, zrh) is required", i);
  }
  const int64_t shapes[7][3] = {{S, B, c->input}, {D, G * H, c->input}, {D, G * H, H}, {D, 2 * G * H},
                                {D, B, H}, {D, B, H}, {D, 3 * H}};
  const int ranks[7] = {3, 3, 3, 2, 3, 3, 2};
  for (int o = 0; o < ctx->n_out; o++) wt_set_shape(&ctx->out[o], WT_FLOAT, ranks[o], shapes[o]);
  return WT_OK;
}

static const wt_op_def wt_op_LSTM = {.domain = "", .op_type = "LSTM", .min_inputs = 3, .max_inputs = 8,
                              .min_outputs = 1, .max_outputs = 3, .infer = forward_infer, .grad = wt_rnn_lstm_grad,
                              .variant = WT_RNN_LSTM};
static const wt_op_def wt_op_GRU = {.domain = "", .op_type = "GRU", .min_inputs = 3, .max_inputs = 6,
                             .min_outputs = 1, .max_outputs = 2, .infer = forward_infer, .grad = wt_rnn_gru_grad,
                             .variant = WT_RNN_GRU};
static const wt_op_def wt_op_RNN = {.domain = "", .op_type = "RNN", .min_inputs = 3, .max_inputs = 6,
                             .min_outputs = 1, .max_outputs = 2, .infer = forward_infer, .variant = WT_RNN_PLAIN};
static const wt_op_def wt_op_LSTMTraining = {.domain = "com.microsoft", .op_type = "LSTMTraining",
                                      .min_inputs = 3, .max_inputs = 8, .min_outputs = 1,
                                      .max_outputs = 5, .infer = forward_infer,
                                      .grad = wt_rnn_lstm_grad, .flags = WT_OP_TRAINING,
                                      .variant = WT_RNN_LSTM};
static const wt_op_def wt_op_GRUTraining = {.domain = "com.microsoft", .op_type = "GRUTraining",
                                     .min_inputs = 3, .max_inputs = 6, .min_outputs = 1,
                                     .max_outputs = 3, .infer = forward_infer,
                                     .grad = wt_rnn_gru_grad, .flags = WT_OP_TRAINING,
                                     .variant = WT_RNN_GRU};
static const wt_op_def wt_op_LSTMGrad = {.domain = "com.microsoft", .op_type = "LSTMGrad", .min_inputs = 9,
                                  .max_inputs = 13, .min_outputs = 1, .max_outputs = 7,
                                  .infer = grad_infer, .flags = WT_OP_GRADIENT,
                                  .variant = WT_RNN_LSTM};
static const wt_op_def wt_op_GRUGrad = {.domain = "com.microsoft", .op_type = "GRUGrad", .min_inputs = 8,
                                 .max_inputs = 10, .min_outputs = 1, .max_outputs = 5,
                                 .infer = grad_infer, .flags = WT_OP_GRADIENT,
                                 .variant = WT_RNN_GRU};

const wt_op_def *const wt_ops_rnn[] = {
    &wt_op_LSTM, &wt_op_GRU, &wt_op_RNN, &wt_op_LSTMTraining, &wt_op_GRUTraining,
    &wt_op_LSTMGrad, &wt_op_GRUGrad, NULL,
};
