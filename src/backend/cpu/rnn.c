/* Recurrent kernels: ONNX LSTM / GRU / RNN forward, LSTM and GRU backward (see rnn.h).
 * One wt_sgemm projects every time step's input at once; each step then does one recurrent
 * wt_sgemm ([B,H] x R^T) and the per-row gate math. Transcendentals use libm (accuracy);
 * the arithmetic around them uses the 4-lane SIMD vocabulary with a scalar tail. */
#include "backend/cpu/rnn.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/gemm.h"
#include "backend/cpu/simd.h"

static float sigmoidf(float x) {
  if (x >= 0) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

/* Applies an activation in place over n floats (the switch is hoisted out of the loop). */
static void act_apply(const wt_rnn_act *a, float *x, int64_t n) {
  const float al = a->alpha, be = a->beta;
  switch (a->kind) {
    case WT_ACT_SIGMOID: for (int64_t i = 0; i < n; i++) x[i] = sigmoidf(x[i]); break;
    case WT_ACT_TANH: for (int64_t i = 0; i < n; i++) x[i] = tanhf(x[i]); break;
    case WT_ACT_RELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0; break;
    case WT_ACT_AFFINE: for (int64_t i = 0; i < n; i++) x[i] = al * x[i] + be; break;
    case WT_ACT_LEAKYRELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * x[i]; break;
    case WT_ACT_THRESHOLDEDRELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] > al ? x[i] : 0; break;
    case WT_ACT_SCALEDTANH: for (int64_t i = 0; i < n; i++) x[i] = al * tanhf(be * x[i]); break;
    case WT_ACT_HARDSIGMOID:
      for (int64_t i = 0; i < n; i++) {
        float v = al * x[i] + be;
        x[i] = v < 0 ? 0 : v > 1 ? 1 : v;
      }
      break;
    case WT_ACT_ELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * (expf(x[i]) - 1); break;
    case WT_ACT_SOFTSIGN: for (int64_t i = 0; i < n; i++) x[i] = x[i] / (1 + fabsf(x[i])); break;
    case WT_ACT_SOFTPLUS:
      for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] + log1pf(expf(-x[i])) : log1pf(expf(x[i]));
      break;
    default: break;
  }
}

/* ---- small SIMD row helpers ------------------------------------------------------------- */

/* y = a + b */
static void row_add(float *y, const float *a, const float *b, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(y + i, wt_f32x4_add(wt_f32x4_load(a + i), wt_f32x4_load(b + i)));
  for (; i < n; i++) y[i] = a[i] + b[i];
}
/* y += p * c (peepholes) */
static void row_fma(float *y, const float *p, const float *c, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(y + i, wt_f32x4_fma(wt_f32x4_load(p + i), wt_f32x4_load(c + i), wt_f32x4_load(y + i)));
  for (; i < n; i++) y[i] += p[i] * c[i];
}
static void row_clip(float *y, float clip, int64_t n) {
  if (clip <= 0) return;
  wt_f32x4 lo = wt_f32x4_splat(-clip), hi = wt_f32x4_splat(clip);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(y + i, wt_f32x4_min(wt_f32x4_max(wt_f32x4_load(y + i), lo), hi));
  for (; i < n; i++) y[i] = y[i] < -clip ? -clip : y[i] > clip ? clip : y[i];
}
/* c = f * c + i * g */
static void row_cell(float *c, const float *f, const float *in, const float *g, int64_t n) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    wt_f32x4 v = wt_f32x4_mul(wt_f32x4_load(f + j), wt_f32x4_load(c + j));
    wt_f32x4_store(c + j, wt_f32x4_fma(wt_f32x4_load(in + j), wt_f32x4_load(g + j), v));
  }
  for (; j < n; j++) c[j] = f[j] * c[j] + in[j] * g[j];
}
/* y = a * b */
static void row_mul(float *y, const float *a, const float *b, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(y + i, wt_f32x4_mul(wt_f32x4_load(a + i), wt_f32x4_load(b + i)));
  for (; i < n; i++) y[i] = a[i] * b[i];
}
/* h = hh + z * (h - hh)  (GRU: (1 - z) * hh + z * h) */
static void row_gru_mix(float *h, const float *z, const float *hh, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    wt_f32x4 c = wt_f32x4_load(hh + i);
    wt_f32x4_store(h + i, wt_f32x4_fma(wt_f32x4_load(z + i), wt_f32x4_sub(wt_f32x4_load(h + i), c), c));
  }
  for (; i < n; i++) h[i] = hh[i] + z[i] * (h[i] - hh[i]);
}

/* ---- forward ---------------------------------------------------------------------------- */

size_t wt_rnn_forward_scratch(const wt_rnn_cfg *c) {
  int64_t G = wt_rnn_gates(c->cell), H = c->hidden, B = c->batch;
  return (size_t)(c->seq * B * G * H + B * G * H + 5 * B * H + G * H + 16);
}

void wt_rnn_forward(const wt_rnn_cfg *c, const float *X, const float *W, const float *R,
                    const float *Bias, const int32_t *lens, const float *H0, const float *C0,
                    const float *P, float *Y, float *Yh, float *Yc, float *call, float *gates,
                    float *scratch) {
  const int64_t S = c->seq, B = c->batch, I = c->input, H = c->hidden, D = c->dirs;
  const int64_t G = wt_rnn_gates(c->cell), GH = G * H;
  const int lstm = c->cell == WT_RNN_LSTM, gru = c->cell == WT_RNN_GRU;
  float *xw = scratch, *gm = xw + S * B * GH, *h = gm + B * GH, *cs = h + B * H, *tmp = cs + B * H;
  float *q = tmp + B * H, *rh = q + B * H, *brow = rh + B * H;
  for (int64_t d = 0; d < D; d++) {
    const float *Wd = W + d * GH * I, *Rd = R + d * GH * H;
    const float *Bd = Bias ? Bias + d * 2 * GH : NULL, *Pd = P ? P + d * 3 * H : NULL;
    const wt_rnn_act *act = c->act[d];
    const int rev = D == 2 ? d == 1 : c->reverse;
    /* all time steps' input projections at once, plus the constant biases */
    wt_sgemm(0, 1, S * B, GH, I, 1.0f, X, I, Wd, I, 0.0f, xw, GH);
    if (Bd) {
      row_add(brow, Bd, Bd + GH, GH);
      if (gru && c->lbr) memcpy(brow + 2 * H, Bd + 2 * H, sizeof(float) * (size_t)H); /* Rbh goes inside r * (.) */
      for (int64_t r = 0; r < S * B; r++) row_add(xw + r * GH, xw + r * GH, brow, GH);
    }
    for (int64_t b = 0; b < B; b++) {
      int64_t so = c->layout ? (b * D + d) * H : (d * B + b) * H;
      for (int64_t j = 0; j < H; j++) {
        h[b * H + j] = H0 ? H0[so + j] : 0.0f;
        cs[b * H + j] = C0 ? C0[so + j] : 0.0f;
      }
    }
    for (int64_t k = 0; k < S; k++) {
      const int64_t t = rev ? S - 1 - k : k;
      if (gru) {
        wt_sgemm(0, 1, B, 2 * H, H, 1.0f, h, H, Rd, H, 0.0f, gm, GH);
        if (c->lbr) wt_sgemm(0, 1, B, H, H, 1.0f, h, H, Rd + 2 * H * H, H, 0.0f, q, H);
      } else {
        wt_sgemm(0, 1, B, GH, H, 1.0f, h, H, Rd, H, 0.0f, gm, GH);
      }
      /* phase 1: the gates that only need the recurrent GEMM */
      for (int64_t b = 0; b < B; b++) {
        const float *xr = xw + (c->layout ? b * S + t : t * B + b) * GH;
        float *g = gm + b * GH, *hb = h + b * H, *cb = cs + b * H;
        if (lstm) {
          row_add(g, g, xr, GH);
          float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
          if (Pd) {
            row_fma(gi, Pd, cb, H);
            row_fma(gf, Pd + 2 * H, cb, H);
          }
          row_clip(gi, c->clip, H);
          act_apply(&act[0], gi, H);
          if (c->input_forget) {
            for (int64_t j = 0; j < H; j++) gf[j] = 1.0f - gi[j];
          } else {
            row_clip(gf, c->clip, H);
            act_apply(&act[0], gf, H);
          }
          row_clip(gc, c->clip, H);
          act_apply(&act[1], gc, H);
          if (lens && t >= lens[b]) continue;
          row_cell(cb, gf, gi, gc, H);
          if (Pd) row_fma(go, Pd + H, cb, H);
          row_clip(go, c->clip, H);
          act_apply(&act[0], go, H);
          float *th = tmp + b * H;
          memcpy(th, cb, sizeof(float) * (size_t)H);
          act_apply(&act[2], th, H);
          row_mul(hb, go, th, H);
        } else if (gru) {
          row_add(g, g, xr, 2 * H);
          row_clip(g, c->clip, 2 * H);
          act_apply(&act[0], g, 2 * H);
          if (!c->lbr) row_mul(rh + b * H, g + H, hb, H);
        } else {
          row_add(g, g, xr, H);
          row_clip(g, c->clip, H);
          act_apply(&act[0], g, H);
          if (!(lens && t >= lens[b])) memcpy(hb, g, sizeof(float) * (size_t)H);
        }
      }
      if (gru) {
        /* phase 2: the candidate needs r first: g(x Wh + (r . h) Rh^T + ...) or g(... + r . (h Rh^T + Rbh)) */
        if (!c->lbr) wt_sgemm(0, 1, B, H, H, 1.0f, rh, H, Rd + 2 * H * H, H, 0.0f, q, H);
        for (int64_t b = 0; b < B; b++) {
          const float *xr = xw + (c->layout ? b * S + t : t * B + b) * GH;
          float *g = gm + b * GH, *hh = g + 2 * H, *qb = q + b * H;
          if (c->lbr) {
            if (Bd) row_add(qb, qb, Bd + GH + 2 * H, H);
            row_mul(hh, g + H, qb, H);
            row_add(hh, hh, xr + 2 * H, H);
          } else {
            row_add(hh, qb, xr + 2 * H, H);
          }
          row_clip(hh, c->clip, H);
          act_apply(&act[1], hh, H);
          if (lens && t >= lens[b]) continue;
          row_gru_mix(h + b * H, g, hh, H);
        }
      }
      /* outputs of this step */
      for (int64_t b = 0; b < B; b++) {
        const int skip = lens && t >= lens[b];
        if (Y) {
          float *y = Y + (c->layout ? (b * S + t) * D + d : (t * D + d) * B + b) * H;
          if (skip) memset(y, 0, sizeof(float) * (size_t)H);
          else memcpy(y, h + b * H, sizeof(float) * (size_t)H);
        }
        int64_t to = (t * D + d) * B + b;
        if (call) memcpy(call + to * H, cs + b * H, sizeof(float) * (size_t)H);
        if (gates) {
          float *go = gates + to * GH;
          if (skip) memset(go, 0, sizeof(float) * (size_t)GH);
          else memcpy(go, gm + b * GH, sizeof(float) * (size_t)GH);
        }
      }
    }
    for (int64_t b = 0; b < B; b++) {
      int64_t so = c->layout ? (b * D + d) * H : (d * B + b) * H;
      if (Yh) memcpy(Yh + so, h + b * H, sizeof(float) * (size_t)H);
      if (Yc && lstm) memcpy(Yc + so, cs + b * H, sizeof(float) * (size_t)H);
    }
  }
}

/* ---- backward --------------------------------------------------------------------------- */

/* Column sums of a [rows, n] matrix (row stride ld) into out[n]. */
static void col_sums(float *out, const float *a, int64_t rows, int64_t n, int64_t ld) {
  memset(out, 0, sizeof(float) * (size_t)n);
  for (int64_t r = 0; r < rows; r++) row_add(out, out, a + r * ld, n);
}

size_t wt_lstm_backward_scratch(const wt_rnn_cfg *c) {
  int64_t S = c->seq, B = c->batch, H = c->hidden;
  return (size_t)(S * B * 4 * H + S * B * H + 3 * B * H + 16);
}

void wt_lstm_backward(const wt_rnn_cfg *c, const float *X, const float *W, const float *R,
                      const float *H0, const float *C0, const float *P, const float *HAll,
                      const float *CAll, const float *IOFC, const float *dHAll, const float *dHt,
                      const float *dCt, float *dX, float *dW, float *dR, float *dB, float *dH0,
                      float *dC0, float *dP, float *scratch) {
  const int64_t S = c->seq, B = c->batch, I = c->input, H = c->hidden, D = c->dirs, GH = 4 * H;
  float *dA = scratch, *hp = dA + S * B * GH, *dh = hp + S * B * H, *dc = dh + B * H;
  if (dP) memset(dP, 0, sizeof(float) * (size_t)(D * 3 * H));
  for (int64_t d = 0; d < D; d++) {
    const float *Wd = W + d * GH * I, *Rd = R + d * GH * H, *Pd = P ? P + d * 3 * H : NULL;
    float *dPd = dP ? dP + d * 3 * H : NULL;
    const int rev = D == 2 ? d == 1 : c->reverse;
    for (int64_t i = 0; i < B * H; i++) {
      dh[i] = dHt ? dHt[d * B * H + i] : 0.0f;
      dc[i] = dCt ? dCt[d * B * H + i] : 0.0f;
    }
    for (int64_t k = S - 1; k >= 0; k--) {
      const int64_t t = rev ? S - 1 - k : k, tp = k == 0 ? -1 : rev ? t + 1 : t - 1;
      for (int64_t b = 0; b < B; b++) {
        const int64_t row = (t * D + d) * B + b, prow = (tp * D + d) * B + b;
        const float *g = IOFC + row * GH, *ct = CAll + row * H;
        const float *cp = tp >= 0 ? CAll + prow * H : C0 ? C0 + (d * B + b) * H : NULL;
        const float *hpv = tp >= 0 ? HAll + prow * H : H0 ? H0 + (d * B + b) * H : NULL;
        float *da = dA + (t * B + b) * GH, *dhb = dh + b * H, *dcb = dc + b * H;
        if (hpv) memcpy(hp + (t * B + b) * H, hpv, sizeof(float) * (size_t)H);
        else memset(hp + (t * B + b) * H, 0, sizeof(float) * (size_t)H);
        if (dHAll) row_add(dhb, dhb, dHAll + row * H, H);
        for (int64_t j = 0; j < H; j++) {
          const float i_ = g[j], o = g[H + j], f = g[2 * H + j], gg = g[3 * H + j];
          const float cpj = cp ? cp[j] : 0.0f, tc = tanhf(ct[j]);
          const float dao = dhb[j] * tc * o * (1 - o);
          const float dct = dcb[j] + dhb[j] * o * (1 - tc * tc) + (Pd ? Pd[H + j] * dao : 0.0f);
          const float dai = dct * gg * i_ * (1 - i_), daf = dct * cpj * f * (1 - f);
          const float dag = dct * i_ * (1 - gg * gg);
          dcb[j] = dct * f + (Pd ? Pd[j] * dai + Pd[2 * H + j] * daf : 0.0f);
          da[j] = dai, da[H + j] = dao, da[2 * H + j] = daf, da[3 * H + j] = dag;
          if (dPd) {
            dPd[j] += dai * cpj;
            dPd[H + j] += dao * ct[j];
            dPd[2 * H + j] += daf * cpj;
          }
        }
      }
      wt_sgemm(0, 0, B, H, GH, 1.0f, dA + t * B * GH, GH, Rd, H, 0.0f, dh, H);
    }
    if (dH0) memcpy(dH0 + d * B * H, dh, sizeof(float) * (size_t)(B * H));
    if (dC0) memcpy(dC0 + d * B * H, dc, sizeof(float) * (size_t)(B * H));
    if (dX) wt_sgemm(0, 0, S * B, I, GH, 1.0f, dA, GH, Wd, I, d ? 1.0f : 0.0f, dX, I);
    if (dW) wt_sgemm(1, 0, GH, I, S * B, 1.0f, dA, GH, X, I, 0.0f, dW + d * GH * I, I);
    if (dR) wt_sgemm(1, 0, GH, H, S * B, 1.0f, dA, GH, hp, H, 0.0f, dR + d * GH * H, H);
    if (dB) {
      col_sums(dB + d * 2 * GH, dA, S * B, GH, GH);
      memcpy(dB + d * 2 * GH + GH, dB + d * 2 * GH, sizeof(float) * (size_t)GH);
    }
  }
}

size_t wt_gru_backward_scratch(const wt_rnn_cfg *c) {
  int64_t S = c->seq, B = c->batch, H = c->hidden;
  return (size_t)(S * B * 3 * H + 3 * S * B * H + 3 * B * H + 16);
}

void wt_gru_backward(const wt_rnn_cfg *c, const float *X, const float *W, const float *R,
                     const float *Bias, const float *H0, const float *HAll, const float *ZRH,
                     const float *dHAll, const float *dHt, float *dX, float *dW, float *dR,
                     float *dB, float *dH0, float *scratch) {
  const int64_t S = c->seq, B = c->batch, I = c->input, H = c->hidden, D = c->dirs, GH = 3 * H;
  float *dA = scratch, *hp = dA + S * B * GH, *lh = hp + S * B * H, *rin = lh + S * B * H;
  float *dh = rin + S * B * H, *dn = dh + B * H, *q = dn + B * H;
  for (int64_t d = 0; d < D; d++) {
    const float *Wd = W + d * GH * I, *Rd = R + d * GH * H, *Rh = Rd + 2 * H * H;
    const float *Rbh = Bias ? Bias + d * 2 * GH + GH + 2 * H : NULL;
    const int rev = D == 2 ? d == 1 : c->reverse;
    for (int64_t i = 0; i < B * H; i++) dh[i] = dHt ? dHt[d * B * H + i] : 0.0f;
    for (int64_t k = S - 1; k >= 0; k--) {
      const int64_t t = rev ? S - 1 - k : k, tp = k == 0 ? -1 : rev ? t + 1 : t - 1;
      float *hpt = hp + t * B * H, *dat = dA + t * B * GH;
      for (int64_t b = 0; b < B; b++) {
        const float *hpv = tp >= 0 ? HAll + ((tp * D + d) * B + b) * H : H0 ? H0 + (d * B + b) * H : NULL;
        if (hpv) memcpy(hpt + b * H, hpv, sizeof(float) * (size_t)H);
        else memset(hpt + b * H, 0, sizeof(float) * (size_t)H);
        if (dHAll) row_add(dh + b * H, dh + b * H, dHAll + ((t * D + d) * B + b) * H, H);
      }
      if (c->lbr) {
        /* the pre-reset recurrent term q = h Rh^T + Rbh is recomputed, not stored */
        wt_sgemm(0, 1, B, H, H, 1.0f, hpt, H, Rh, H, 0.0f, q, H);
        if (Rbh)
          for (int64_t b = 0; b < B; b++) row_add(q + b * H, q + b * H, Rbh, H);
      }
      for (int64_t b = 0; b < B; b++) {
        const float *g = ZRH + ((t * D + d) * B + b) * GH, *hpb = hpt + b * H;
        float *da = dat + b * GH, *dhb = dh + b * H, *dnb = dn + b * H;
        float *lhb = lh + (t * B + b) * H, *rinb = rin + (t * B + b) * H;
        for (int64_t j = 0; j < H; j++) {
          const float z = g[j], r = g[H + j], hh = g[2 * H + j];
          const float dz = dhb[j] * (hpb[j] - hh);
          const float dah = dhb[j] * (1 - z) * (1 - hh * hh);
          da[j] = dz * z * (1 - z);
          da[2 * H + j] = dah;
          dnb[j] = dhb[j] * z;
          if (c->lbr) {
            const float qj = q[b * H + j];
            da[H + j] = dah * qj * r * (1 - r);
            lhb[j] = dah * r; /* dq */
            rinb[j] = hpb[j];
          } else {
            lhb[j] = dah;
            rinb[j] = r * hpb[j];
          }
        }
      }
      if (c->lbr) {
        wt_sgemm(0, 0, B, H, H, 1.0f, lh + t * B * H, H, Rh, H, 1.0f, dn, H);
      } else {
        /* d(r . h) = dah Rh, then split into dr and dh */
        wt_sgemm(0, 0, B, H, H, 1.0f, dat + 2 * H, GH, Rh, H, 0.0f, q, H);
        for (int64_t b = 0; b < B; b++) {
          const float *g = ZRH + ((t * D + d) * B + b) * GH, *hpb = hpt + b * H;
          float *da = dat + b * GH;
          for (int64_t j = 0; j < H; j++) {
            const float r = g[H + j], drh = q[b * H + j];
            da[H + j] = drh * hpb[j] * r * (1 - r);
            dn[b * H + j] += drh * r;
          }
        }
      }
      wt_sgemm(0, 0, B, H, 2 * H, 1.0f, dat, GH, Rd, H, 1.0f, dn, H);
      float *sw = dh;
      dh = dn;
      dn = sw;
    }
    if (dH0) memcpy(dH0 + d * B * H, dh, sizeof(float) * (size_t)(B * H));
    if (dX) wt_sgemm(0, 0, S * B, I, GH, 1.0f, dA, GH, Wd, I, d ? 1.0f : 0.0f, dX, I);
    if (dW) wt_sgemm(1, 0, GH, I, S * B, 1.0f, dA, GH, X, I, 0.0f, dW + d * GH * I, I);
    if (dR) {
      wt_sgemm(1, 0, 2 * H, H, S * B, 1.0f, dA, GH, hp, H, 0.0f, dR + d * GH * H, H);
      wt_sgemm(1, 0, H, H, S * B, 1.0f, lh, H, rin, H, 0.0f, dR + d * GH * H + 2 * H * H, H);
    }
    if (dB) {
      float *db = dB + d * 2 * GH;
      col_sums(db, dA, S * B, GH, GH);
      memcpy(db + GH, db, sizeof(float) * (size_t)(2 * H));
      if (c->lbr) col_sums(db + GH + 2 * H, lh, S * B, H, H);
      else memcpy(db + GH + 2 * H, db + 2 * H, sizeof(float) * (size_t)H);
    }
  }
}
