/* The CPU kernels of the rnn family (definitions: src/ops/rnn.c): LSTM, GRU and RNN forward
 * (with the training forms) and LSTMGrad / GRUGrad. */
#include <assert.h>
#include <ctype.h>
#include <string.h>

#include "backend/cpu/kernel.h"
#include "backend/cpu/rnn.h"
#include "ops/op.h"
#include "ops/rnn_ops.h"

/* Copies sequence_lens into int32 scratch, checking 0 <= len <= seq. */
static int load_lens(const wt_run_ctx *ctx, int i, const wt_rnn_params *p, int32_t *out, int uniform) {
  const wt_tensor *t = &ctx->in[i];
  for (int64_t b = 0; b < p->cfg.batch; b++) {
    int64_t v = t->dtype == WT_INT64 ? ((const int64_t *)t->data)[b] : ((const int32_t *)t->data)[b];
    if (v < 0 || v > p->cfg.seq)
      return wt_errorf(WT_ERR_RUNTIME, "sequence_lens[%lld] is %lld; expected 0..%lld", (long long)b,
                       (long long)v, (long long)p->cfg.seq);
    if (uniform && v != p->cfg.seq)
      return wt_errorf(WT_ERR_UNSUPPORTED,
                       "sequence_lens[%lld] is %lld: varying sequence lengths are not supported in training "
                       "(every length must equal the sequence length %lld)", (long long)b, (long long)v,
                       (long long)p->cfg.seq);
    out[b] = (int32_t)v;
  }
  return WT_OK;
}

static const float *fin(const wt_run_ctx *ctx, int i) {
  return wt_has_input(ctx->in, ctx->n_in, i) ? ctx->in[i].data : NULL;
}

static float *fout(const wt_run_ctx *ctx, int i) {
  return i < ctx->n_out && ctx->node->outputs[i] >= 0 ? ctx->out[i].data : NULL;
}

static int forward_run(const wt_run_ctx *ctx) {
  const wt_rnn_params *p = ctx->params;
  const wt_rnn_cfg *c = &p->cfg;
  const int lstm = c->cell == WT_RNN_LSTM;
  int32_t *lens = NULL;
  if (p->has_lens) {
    lens = (int32_t *)((char *)ctx->scratch + p->lens_off);
    WT_TRY(load_lens(ctx, 4, p, lens, 0));
  }
  float *Y = fout(ctx, 0), *Yh = fout(ctx, 1), *Yc = lstm ? fout(ctx, 2) : NULL;
  float *call = NULL, *gates = NULL;
  if (p->training) {
    Y = ctx->out[0].data; /* ORT: all hidden states are always produced */
    call = lstm ? fout(ctx, 3) : NULL;
    gates = fout(ctx, lstm ? 4 : 2);
  }
  wt_rnn_forward(c, ctx->in[0].data, ctx->in[1].data, ctx->in[2].data, fin(ctx, 3), lens, fin(ctx, 5),
                 lstm ? fin(ctx, 6) : NULL, lstm ? fin(ctx, 7) : NULL, Y, Yh, Yc, call, gates, ctx->scratch);
  return WT_OK;
}

static int grad_run(const wt_run_ctx *ctx) {
  const wt_rnn_params *p = ctx->params;
  const wt_rnn_cfg *c = &p->cfg;
  const int lstm = c->cell == WT_RNN_LSTM;
  if (p->has_lens)
    WT_TRY(load_lens(ctx, lstm ? LG_SL : GG_SL, p, (int32_t *)((char *)ctx->scratch + p->lens_off), 1));
  const float *X = ctx->in[0].data, *W = ctx->in[1].data, *R = ctx->in[2].data;
  if (lstm)
    wt_lstm_backward(c, X, W, R, fin(ctx, LG_H0), fin(ctx, LG_C0), fin(ctx, LG_P), ctx->in[LG_HALL].data,
                     ctx->in[LG_CALL].data, ctx->in[LG_IOFC].data, fin(ctx, LG_DHALL), fin(ctx, LG_DHT),
                     fin(ctx, LG_DCT), fout(ctx, 0), fout(ctx, 1), fout(ctx, 2), fout(ctx, 3), fout(ctx, 4),
                     fout(ctx, 5), fout(ctx, 6), ctx->scratch);
  else
    wt_gru_backward(c, X, W, R, fin(ctx, GG_B), fin(ctx, GG_H0), ctx->in[GG_HALL].data, ctx->in[GG_ZRH].data,
                    fin(ctx, GG_DHALL), fin(ctx, GG_DHT), fout(ctx, 0), fout(ctx, 1), fout(ctx, 2),
                    fout(ctx, 3), fout(ctx, 4), ctx->scratch);
  return WT_OK;
}

/* The kernel's floats, then the sequence lengths (their offset recorded for run). */
static size_t forward_scratch(const wt_infer_ctx *ctx) {
  wt_rnn_params *p = ctx->params;
  p->lens_off = wt_rnn_forward_scratch(&p->cfg) * sizeof(float);
  return p->lens_off + (size_t)p->cfg.batch * sizeof(int32_t);
}

static size_t grad_scratch(const wt_infer_ctx *ctx) {
  wt_rnn_params *p = ctx->params;
  const wt_rnn_cfg *c = &p->cfg;
  size_t f = c->cell == WT_RNN_LSTM ? wt_lstm_backward_scratch(c) : wt_gru_backward_scratch(c);
  p->lens_off = f * sizeof(float);
  return p->lens_off + (size_t)c->batch * sizeof(int32_t);
}

const wt_cpu_kernel wt_cpu_kernels_rnn[] = {
    {.key = {"", "LSTM"}, .run = forward_run, .scratch = forward_scratch},
    {.key = {"", "GRU"}, .run = forward_run, .scratch = forward_scratch},
    {.key = {"", "RNN"}, .run = forward_run, .scratch = forward_scratch},
    {.key = {"com.microsoft", "LSTMTraining"}, .run = forward_run, .scratch = forward_scratch},
    {.key = {"com.microsoft", "GRUTraining"}, .run = forward_run, .scratch = forward_scratch},
    {.key = {"com.microsoft", "LSTMGrad"}, .run = grad_run, .scratch = grad_scratch},
    {.key = {"com.microsoft", "GRUGrad"}, .run = grad_run, .scratch = grad_scratch},
    WT_CPU_KERNELS_END};
