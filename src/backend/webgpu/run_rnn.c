/* The rnn family on the GPU: LSTM, GRU and their training forms forward, LSTMGrad and GRUGrad
 * (the CPU kernels: backend/cpu/rnn.c). Default activations, no clip, no peepholes, no
 * sequence_lens, layout 0: what training runs (wt_rnn_default_training). The input projections
 * and the weight gradients are GEMMs over all time steps (gemm.wgsl); the recurrences run in
 * lstm.wgsl, lstm_grad.wgsl, gru.wgsl and gru_grad.wgsl, one workgroup per batch row and
 * direction; the rest are sums and copies. */
#include "backend/webgpu/kernel.h"
#include "ops/rnn_ops.h"

/* The recurrences keep a row's vectors in workgroup memory: 6 H floats (LSTM), 7 H (GRUGrad). */
#define GPU_MAX_HIDDEN_LSTM 640
#define GPU_MAX_HIDDEN_GRU 512

enum { X_IN, W_IN, R_IN, B_IN, SL_IN, H0_IN, C0_IN, P_IN };
enum { Y_OUT, YH_OUT, YC_OUT, CALL_OUT, IOFC_OUT };
enum { DX_OUT, DW_OUT, DR_OUT, DB_OUT, DH0_OUT, DC0_OUT, DP_OUT };

/* peep: the peepholes' input index (-1: none); lens: sequence_lens'. */
static int refuse(const wt_gpu_ctx *c, int peep, int lens, int64_t max_hidden) {
  const wt_rnn_params *p = c->params;
  const char *why = NULL;
  if (!wt_rnn_default_training(&p->cfg, &why))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%s with %s is not on the webgpu backend; run it with backend 'wasm'",
                       c->node->op_type, why);
  if (peep >= 0 && wt_has_input(c->in, c->n_in, peep))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%s with peepholes (input P) is not on the webgpu backend; run it "
                       "with backend 'wasm'", c->node->op_type);
  if (wt_has_input(c->in, c->n_in, lens))
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%s with sequence_lens is not on the webgpu backend; run it with "
                       "backend 'wasm'", c->node->op_type);
  if (p->cfg.hidden > max_hidden)
    return WT_GPU_FAIL(WT_ERR_UNSUPPORTED, "%s's hidden size is %lld; the webgpu backend runs at most %lld",
                       c->node->op_type, (long long)p->cfg.hidden, (long long)max_hidden);
  return wt_gpu_check_elems(p->cfg.seq * p->cfg.batch * p->cfg.dirs * 4 * p->cfg.hidden, "the gates");
}

static void set_sizes(wt_gpu_dispatch *d, const wt_rnn_cfg *cfg, uint32_t flags) {
  d->groups[0] = (uint32_t)cfg->batch;
  d->groups[1] = (uint32_t)cfg->dirs;
  d->groups[2] = 1;
  d->uniform[0] = (uint32_t)cfg->seq;
  d->uniform[1] = (uint32_t)cfg->batch;
  d->uniform[2] = (uint32_t)cfg->hidden;
  d->uniform[3] = (uint32_t)cfg->dirs;
  d->uniform[4] = (uint32_t)cfg->reverse;
  d->uniform[5] = flags;
}

/* The last step's state of each direction, [dirs, batch, hidden], from an all-steps one
 * ([seq, dirs, batch, hidden] at element `off` of binding `from`) into binding `to`: the last
 * step is seq - 1 forward, 0 backward. */
static int last_step(wt_gpu_dispatch *d, const wt_rnn_cfg *c, int8_t from, int64_t off, int8_t to) {
  const int64_t S = c->seq, D = c->dirs, BH = c->batch * c->hidden;
  const int rev0 = D == 1 && c->reverse;
  int64_t first = ((rev0 ? 0 : S - 1) * D) * BH; /* direction 0's last step */
  int64_t second = (0 * D + 1) * BH;             /* direction 1 (backward): step 0 */
  int64_t dims[2] = {D, BH}, xs[2] = {second - first, 1}, ys[2] = {BH, 1};
  return wt_gpu_strided_dispatch(d, from, to, 2, dims, off + first, xs, 0, ys, 1);
}

static int forward_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_rnn_params *p = c->params;
  const wt_rnn_cfg *cfg = &p->cfg;
  int r = refuse(c, P_IN, SL_IN, GPU_MAX_HIDDEN_LSTM);
  if (r) return r;
  (void)cap;
  const int64_t S = cfg->seq, B = cfg->batch, I = cfg->input, H = cfg->hidden, D = cfg->dirs, G = 4 * H;
  const int has_y = wt_gpu_wants(c, Y_OUT), has_call = p->training && wt_gpu_wants(c, CALL_OUT);
  const int64_t xw = D * S * B * G, all = S * D * B * H;
  c->scratch[0] = (uint64_t)(xw + (has_call ? 0 : all)) * sizeof(float);
  if (!has_y) c->scratch[1] = (uint64_t)all * sizeof(float);
  int n = 0;
  /* x W^T of every step, per direction */
  wt_gpu_gemm_dispatch(&d[n++], WT_GPU_IN(X_IN), 0, 0, 0, WT_GPU_IN(W_IN), 0, G * I, 1, WT_GPU_SCRATCH(0), 0, S * B, G, I, D);
  const int8_t hall = has_y ? WT_GPU_OUT(Y_OUT) : WT_GPU_SCRATCH(1);
  const int has_iofc = p->training && wt_gpu_wants(c, IOFC_OUT);
  uint32_t flags = (wt_has_input(c->in, c->n_in, B_IN) ? 1u : 0u) | (wt_has_input(c->in, c->n_in, H0_IN) ? 2u : 0u) |
                   (wt_has_input(c->in, c->n_in, C0_IN) ? 4u : 0u) | (has_iofc ? 8u : 0u) | (has_call ? 0u : 16u);
  wt_gpu_dispatch *k = &d[n++];
  *k = (wt_gpu_dispatch){.program = "lstm", .n_bind = 8,
                         .bind = {WT_GPU_SCRATCH(0), WT_GPU_IN(R_IN), flags & 1u ? WT_GPU_IN(B_IN) : WT_GPU_NONE,
                                  flags & 2u ? WT_GPU_IN(H0_IN) : WT_GPU_NONE, flags & 4u ? WT_GPU_IN(C0_IN) : WT_GPU_NONE,
                                  hall, has_call ? WT_GPU_OUT(CALL_OUT) : WT_GPU_NONE,
                                  has_iofc ? WT_GPU_OUT(IOFC_OUT) : WT_GPU_NONE}};
  set_sizes(k, cfg, flags);
  k->uniform[6] = (uint32_t)xw;
  if (wt_gpu_wants(c, YH_OUT) && (r = last_step(&d[n++], cfg, hall, 0, WT_GPU_OUT(YH_OUT))) < 0) return r;
  if (wt_gpu_wants(c, YC_OUT) &&
      (r = last_step(&d[n++], cfg, has_call ? WT_GPU_OUT(CALL_OUT) : WT_GPU_SCRATCH(0), has_call ? 0 : xw, WT_GPU_OUT(YC_OUT))) < 0)
    return r;
  return n;
}

static int too_many(const wt_gpu_ctx *c) {
  return WT_GPU_FAIL(WT_ERR_INTERNAL, "%s needs more dispatches than the webgpu backend gives a step", c->node->op_type);
}

/* dX = the sum over directions of dA W (dA in scratch 0 as [D, S B, G], W the step's binding w):
 * one GEMM into output 0, or with two directions one each into scratch 1 and their sum. The
 * dispatches written, or -1 when `room` is fewer. */
static int dx_dispatches(wt_gpu_dispatch *d, int room, int8_t w, int64_t SB, int64_t I, int64_t G, int64_t D) {
  if (room < (D == 1 ? 1 : 2)) return -1;
  if (D == 1) {
    wt_gpu_gemm_dispatch(&d[0], WT_GPU_SCRATCH(0), 0, 0, 0, w, 0, 0, 0, WT_GPU_OUT(0), 0, SB, I, G, 1);
    return 1;
  }
  wt_gpu_gemm_dispatch(&d[0], WT_GPU_SCRATCH(0), 0, SB * G, 0, w, 0, G * I, 0, WT_GPU_SCRATCH(1), 0, SB, I, G, D);
  wt_gpu_reduce_dispatch(&d[1], WT_GPU_SCRATCH(1), WT_GPU_OUT(0), 1, D, SB * I, 0, 0.0f);
  return 2;
}

/* The gradient encoders' next dispatch d[n] = `call` (a count, or WT_GPU_FAIL's value), counted;
 * its failure, or no room left in d, returns from the encoder. */
#define ADD(call)                   \
  do {                              \
    if (n >= cap) return too_many(c); \
    if ((r = (call)) < 0) return r; \
    n++;                            \
  } while (0)

/* A copy of n floats from binding `from` (at xoff) into `to` (at yoff). */
static int copy(wt_gpu_dispatch *d, int8_t from, int64_t xoff, int8_t to, int64_t yoff, int64_t n) {
  int64_t dims[1] = {n}, s[1] = {1};
  return wt_gpu_strided_dispatch(d, from, to, 1, dims, xoff, s, yoff, s, 1);
}

static int grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_rnn_params *p = c->params;
  const wt_rnn_cfg *cfg = &p->cfg;
  int r = refuse(c, LG_P, LG_SL, GPU_MAX_HIDDEN_LSTM);
  if (r) return r;
  const int64_t S = cfg->seq, B = cfg->batch, I = cfg->input, H = cfg->hidden, D = cfg->dirs, G = 4 * H;
  const int64_t SB = S * B, BH = B * H, state = 2 * D * BH;
  /* scratch 0: dA [D, S B, 4H]; scratch 1: dh and dc [2, D, B, H], then (from `state` on) the
   * steps' previous hidden states [D, S B, H], then dB's sums or dX's per-direction terms */
  int64_t work = D * SB * H;
  if (D * G > work) work = D * G;
  if (D > 1 && D * SB * I > work) work = D * SB * I;
  c->scratch[0] = (uint64_t)(D * SB * G) * sizeof(float);
  c->scratch[1] = (uint64_t)(state + work) * sizeof(float);
  const int8_t S0 = WT_GPU_SCRATCH(0), S1 = WT_GPU_SCRATCH(1);
  int n = 0;
  const int has_dht = wt_has_input(c->in, c->n_in, LG_DHT), has_dct = wt_has_input(c->in, c->n_in, LG_DCT);
  if (has_dht) ADD(copy(&d[n], WT_GPU_IN(LG_DHT), 0, S1, 0, D * BH));
  if (has_dct) ADD(copy(&d[n], WT_GPU_IN(LG_DCT), 0, S1, D * BH, D * BH));
  const int has_dhall = wt_has_input(c->in, c->n_in, LG_DHALL), has_c0 = wt_has_input(c->in, c->n_in, LG_C0);
  const int has_h0 = wt_has_input(c->in, c->n_in, LG_H0);
  uint32_t flags = (has_dhall ? 1u : 0u) | (has_c0 ? 2u : 0u) | (has_dht ? 4u : 0u) | (has_dct ? 8u : 0u) |
                   (has_h0 ? 16u : 0u);
  if (n >= cap) return too_many(c);
  d[n] = (wt_gpu_dispatch){.program = "lstm_grad", .n_bind = 8,
                           .bind = {WT_GPU_IN(LG_R), WT_GPU_IN(LG_CALL), WT_GPU_IN(LG_IOFC),
                                    has_dhall ? WT_GPU_IN(LG_DHALL) : WT_GPU_NONE, has_c0 ? WT_GPU_IN(LG_C0) : WT_GPU_NONE,
                                    has_h0 ? WT_GPU_IN(LG_H0) : WT_GPU_NONE, S0, S1}};
  set_sizes(&d[n], cfg, flags);
  d[n++].uniform[6] = (uint32_t)state;
  if (wt_gpu_wants(c, DH0_OUT)) ADD(copy(&d[n], S1, 0, WT_GPU_OUT(DH0_OUT), 0, D * BH));
  if (wt_gpu_wants(c, DC0_OUT)) ADD(copy(&d[n], S1, D * BH, WT_GPU_OUT(DC0_OUT), 0, D * BH));
  if (wt_gpu_wants(c, DR_OUT)) {
    /* each step's previous hidden state: HAll one step back (the recurrence wrote the first
     * step's, H0 or zeros) */
    for (int64_t dir = 0; dir < D && S > 1; dir++) {
      const int rev = D == 2 ? dir == 1 : cfg->reverse;
      int64_t dims[2] = {S - 1, BH}, xs[2] = {D * BH, 1}, ys[2] = {BH, 1};
      /* forward: steps 1.. read HAll at 0..; backward: steps 0.. read HAll at 1.. */
      int64_t xoff = ((rev ? 1 : 0) * D + dir) * BH, yoff = state + dir * SB * H + (rev ? 0 : BH);
      ADD(wt_gpu_strided_dispatch(&d[n], WT_GPU_IN(LG_HALL), S1, 2, dims, xoff, xs, yoff, ys, 1));
    }
    ADD((wt_gpu_gemm_dispatch(&d[n], S0, 0, SB * G, 1, S1, state, SB * H, 0, WT_GPU_OUT(DR_OUT), 0, G, H, SB, D), 0));
  }
  if (wt_gpu_wants(c, DW_OUT))
    ADD((wt_gpu_gemm_dispatch(&d[n], S0, 0, SB * G, 1, WT_GPU_IN(LG_X), 0, 0, 0, WT_GPU_OUT(DW_OUT), 0, G, I, SB, D), 0));
  if (wt_gpu_wants(c, DB_OUT)) {
    /* column sums of each direction's dA, into both halves (Wb and Rb) of its bias gradient */
    ADD((wt_gpu_reduce_dispatch(&d[n], S0, S1, D, SB, G, 0, 0.0f), 0));
    int64_t dims[3] = {D, 2, G}, xs[3] = {G, 0, 1}, ys[3] = {2 * G, G, 1};
    ADD(wt_gpu_strided_dispatch(&d[n], S1, WT_GPU_OUT(DB_OUT), 3, dims, 0, xs, 0, ys, 1));
  }
  if (wt_gpu_wants(c, DX_OUT)) {
    int k = dx_dispatches(&d[n], cap - n, WT_GPU_IN(LG_W), SB, I, G, D);
    if (k < 0) return too_many(c);
    n += k;
  }
  return n;
}

enum { GRU_ZRH_OUT = 2 };

static int gru_forward_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_rnn_params *p = c->params;
  const wt_rnn_cfg *cfg = &p->cfg;
  int r = refuse(c, -1, SL_IN, GPU_MAX_HIDDEN_GRU);
  if (r) return r;
  (void)cap;
  const int64_t S = cfg->seq, B = cfg->batch, I = cfg->input, H = cfg->hidden, D = cfg->dirs, G = 3 * H;
  const int has_y = wt_gpu_wants(c, Y_OUT), has_zrh = p->training && wt_gpu_wants(c, GRU_ZRH_OUT);
  c->scratch[0] = (uint64_t)(D * S * B * G) * sizeof(float);
  if (!has_y) c->scratch[1] = (uint64_t)(S * D * B * H) * sizeof(float);
  int n = 0;
  wt_gpu_gemm_dispatch(&d[n++], WT_GPU_IN(X_IN), 0, 0, 0, WT_GPU_IN(W_IN), 0, G * I, 1, WT_GPU_SCRATCH(0), 0, S * B, G, I, D);
  const int8_t hall = has_y ? WT_GPU_OUT(Y_OUT) : WT_GPU_SCRATCH(1);
  const int has_b = wt_has_input(c->in, c->n_in, B_IN), has_h0 = wt_has_input(c->in, c->n_in, H0_IN);
  uint32_t flags = (has_b ? 1u : 0u) | (has_h0 ? 2u : 0u) | (has_zrh ? 8u : 0u) | (cfg->lbr ? 32u : 0u);
  wt_gpu_dispatch *k = &d[n++];
  *k = (wt_gpu_dispatch){.program = "gru", .n_bind = 6,
                         .bind = {WT_GPU_SCRATCH(0), WT_GPU_IN(R_IN), has_b ? WT_GPU_IN(B_IN) : WT_GPU_NONE,
                                  has_h0 ? WT_GPU_IN(H0_IN) : WT_GPU_NONE, hall,
                                  has_zrh ? WT_GPU_OUT(GRU_ZRH_OUT) : WT_GPU_NONE}};
  set_sizes(k, cfg, flags);
  if (wt_gpu_wants(c, YH_OUT) && (r = last_step(&d[n++], cfg, hall, 0, WT_GPU_OUT(YH_OUT))) < 0) return r;
  return n;
}

static int gru_grad_encode(wt_gpu_ctx *c, wt_gpu_dispatch *d, int cap) {
  const wt_rnn_params *p = c->params;
  const wt_rnn_cfg *cfg = &p->cfg;
  int r = refuse(c, -1, GG_SL, GPU_MAX_HIDDEN_GRU);
  if (r) return r;
  const int64_t S = cfg->seq, B = cfg->batch, I = cfg->input, H = cfg->hidden, D = cfg->dirs, G = 3 * H;
  const int64_t SB = S * B, BH = B * H;
  /* scratch 0: dA [D, S B, 3H], then rin [D, S B, H]; scratch 1: dh [D, B, H], the previous
   * hidden states [D, S B, H], lh [D, S B, H]; later dB's sums, or dX's per-direction terms */
  const int64_t rin = D * SB * G, hp = D * BH, lh = hp + D * SB * H;
  int64_t s1 = lh + D * SB * H;
  if (D > 1 && D * SB * I > s1) s1 = D * SB * I;
  c->scratch[0] = (uint64_t)(rin + D * SB * H) * sizeof(float);
  c->scratch[1] = (uint64_t)s1 * sizeof(float);
  const int8_t S0 = WT_GPU_SCRATCH(0), S1 = WT_GPU_SCRATCH(1);
  int n = 0;
  const int has_dht = wt_has_input(c->in, c->n_in, GG_DHT), has_dhall = wt_has_input(c->in, c->n_in, GG_DHALL);
  const int has_h0 = wt_has_input(c->in, c->n_in, GG_H0), has_b = wt_has_input(c->in, c->n_in, GG_B);
  if (has_dht) ADD(copy(&d[n], WT_GPU_IN(GG_DHT), 0, S1, 0, D * BH));
  uint32_t flags = (has_dhall ? 1u : 0u) | (has_dht ? 4u : 0u) | (has_h0 ? 16u : 0u) | (cfg->lbr ? 32u : 0u) |
                   (has_b ? 64u : 0u);
  if (n >= cap) return too_many(c);
  d[n] = (wt_gpu_dispatch){.program = "gru_grad", .n_bind = 8,
                           .bind = {WT_GPU_IN(GG_R), WT_GPU_IN(GG_HALL), has_h0 ? WT_GPU_IN(GG_H0) : WT_GPU_NONE,
                                    WT_GPU_IN(GG_ZRH), has_dhall ? WT_GPU_IN(GG_DHALL) : WT_GPU_NONE,
                                    has_b ? WT_GPU_IN(GG_B) : WT_GPU_NONE, S0, S1}};
  set_sizes(&d[n], cfg, flags);
  d[n].uniform[6] = (uint32_t)hp;
  d[n++].uniform[7] = (uint32_t)rin;
  if (wt_gpu_wants(c, DH0_OUT)) ADD(copy(&d[n], S1, 0, WT_GPU_OUT(DH0_OUT), 0, D * BH));
  if (wt_gpu_wants(c, DR_OUT)) {
    /* every row from dA^T h_prev, then the candidate's rows, lh^T rin, over them */
    ADD((wt_gpu_gemm_dispatch(&d[n], S0, 0, SB * G, 1, S1, hp, SB * H, 0, WT_GPU_OUT(DR_OUT), 0, G, H, SB, D), 0));
    for (int64_t dir = 0; dir < D; dir++)
      ADD((wt_gpu_gemm_dispatch(&d[n], S1, lh + dir * SB * H, 0, 1, S0, rin + dir * SB * H, 0, 0, WT_GPU_OUT(DR_OUT),
                                dir * G * H + 2 * H * H, H, H, SB, 1), 0));
  }
  if (wt_gpu_wants(c, DW_OUT))
    ADD((wt_gpu_gemm_dispatch(&d[n], S0, 0, SB * G, 1, WT_GPU_IN(GG_X), 0, 0, 0, WT_GPU_OUT(DW_OUT), 0, G, I, SB, D), 0));
  if (wt_gpu_wants(c, DB_OUT)) {
    /* Wb's gradient: dA's column sums, into Rb's too; with linear_before_reset Rbh's is lh's */
    if (cfg->lbr) ADD((wt_gpu_sum_dispatch(&d[n], S1, lh, S0, rin, D, SB, H), 0));
    ADD((wt_gpu_sum_dispatch(&d[n], S0, 0, S1, 0, D, SB, G), 0));
    int64_t dims[3] = {D, 2, G}, xs[3] = {G, 0, 1}, ys[3] = {2 * G, G, 1};
    ADD(wt_gpu_strided_dispatch(&d[n], S1, WT_GPU_OUT(DB_OUT), 3, dims, 0, xs, 0, ys, 1));
    if (cfg->lbr) {
      int64_t hd[2] = {D, H}, hx[2] = {H, 1}, hy[2] = {2 * G, 1};
      ADD(wt_gpu_strided_dispatch(&d[n], S0, WT_GPU_OUT(DB_OUT), 2, hd, rin, hx, G + 2 * H, hy, 1));
    }
  }
  if (wt_gpu_wants(c, DX_OUT)) {
    int k = dx_dispatches(&d[n], cap - n, WT_GPU_IN(GG_W), SB, I, G, D);
    if (k < 0) return too_many(c);
    n += k;
  }
  return n;
}

#undef ADD

const wt_gpu_kernel wt_gpu_kernels_rnn[] = {
    {.key = {"", "LSTM"}, .encode = forward_encode},
    {.key = {"com.microsoft", "LSTMTraining"}, .encode = forward_encode},
    {.key = {"com.microsoft", "LSTMGrad"}, .encode = grad_encode},
    {.key = {"", "GRU"}, .encode = gru_forward_encode},
    {.key = {"com.microsoft", "GRUTraining"}, .encode = gru_forward_encode},
    {.key = {"com.microsoft", "GRUGrad"}, .encode = gru_grad_encode},
    {.key = {0}},
};
