/* Softmax, log-softmax and softmax cross-entropy kernels (see softmax.h). Every pass uses
 * simd.h, exp is vmath.h's vector exp; row sums of exp are accumulated in float vectors that
 * are flushed into a double every 64 elements, which keeps long rows accurate. */
#include "backend/cpu/softmax.h"

#include <math.h>
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/vmath.h"

static float row_max(const float *x, int64_t n) {
  wt_f32x4 a = wt_f32x4_splat(-INFINITY);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) a = wt_f32x4_max(a, wt_f32x4_load(x + i));
  float m = wt_f32x4_hmax(a);
  for (; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

/* y[i] = x[i] * s */
static void scale_row(float *y, int64_t n, float s) {
  wt_f32x4 v = wt_f32x4_splat(s);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wt_f32x4_store(y + i, wt_f32x4_mul(wt_f32x4_load(y + i), v));
  for (; i < n; i++) y[i] *= s;
}

/* y[i] = (x[i] - a) - b: keeps (x - max) exact before the log-sum is subtracted. */
static void shift_row(const float *x, float *y, int64_t n, float a, float b) {
  wt_f32x4 va = wt_f32x4_splat(a), vb = wt_f32x4_splat(b);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(y + i, wt_f32x4_sub(wt_f32x4_sub(wt_f32x4_load(x + i), va), vb));
  for (; i < n; i++) y[i] = (x[i] - a) - b;
}

/* y[i] = exp(x[i] - m) when y is not NULL; returns the sum of those. The tail runs the vector
 * code on a copy padded with -inf (exp -> 0), so every element gets the same bits. */
static double exp_row(const float *x, float *y, int64_t n, float m) {
  wt_f32x4 vm = wt_f32x4_splat(m);
  double s = 0;
  int64_t i = 0;
  while (i + 4 <= n) {
    wt_f32x4 acc = wt_f32x4_zero();
    for (int64_t end = i + 64 < n ? i + 64 : n; i + 4 <= end; i += 4) {
      wt_f32x4 e = wt_f32x4_exp(wt_f32x4_sub(wt_f32x4_load(x + i), vm));
      if (y) wt_f32x4_store(y + i, e);
      acc = wt_f32x4_add(acc, e);
    }
    s += wt_f32x4_hsum(acc);
  }
  if (i < n) {
    float b[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    memcpy(b, x + i, (size_t)(n - i) * sizeof(float));
    wt_f32x4 e = wt_f32x4_exp(wt_f32x4_sub(wt_f32x4_load(b), vm));
    wt_f32x4_store(b, e);
    if (y) memcpy(y + i, b, (size_t)(n - i) * sizeof(float));
    s += wt_f32x4_hsum(e);
  }
  return s;
}

static void softmax_row(const float *x, float *y, int64_t n, int log_out) {
  float m = row_max(x, n);
  if (isinf(m) && m < 0) m = 0; /* all -inf: avoid -inf - -inf; yields NaN like the reference */
  if (log_out) {
    shift_row(x, y, n, m, logf((float)exp_row(x, NULL, n, m)));
  } else {
    scale_row(y, n, (float)(1.0 / exp_row(x, y, n, m)));
  }
}

typedef struct rows_job {
  const float *x;
  float *y;
  int64_t n;
  int log_out;
} rows_job;

static void softmax_rows(void *ctx, int64_t r0, int64_t rows) {
  const rows_job *j = ctx;
  for (int64_t o = r0; o < r0 + rows; o++) softmax_row(j->x + o * j->n, j->y + o * j->n, j->n, j->log_out);
}

void wt_softmax_f32(const float *x, float *y, int64_t outer, int64_t n, int64_t inner,
                    int log_out, float *tmp) {
  if (inner == 1) {
    /* Rows are independent: large ones run on the thread pool, each row as it runs alone. */
    rows_job j = {x, y, n, log_out};
    wt_parallel_rows(outer, n, WT_ROWS_HEAVY_BLOCK, WT_ROWS_HEAVY_THREAD_MIN, softmax_rows, &j);
    return;
  }
  /* Columns: vectorize across inner, walking the n rows of each outer block. */
  float *mx = tmp, *sm = tmp + inner;
  for (int64_t o = 0; o < outer; o++) {
    const float *xo = x + o * n * inner;
    float *yo = y + o * n * inner;
    for (int64_t i = 0; i < inner; i++) {
      mx[i] = -INFINITY;
      sm[i] = 0;
    }
    for (int64_t r = 0; r < n; r++) {
      const float *xr = xo + r * inner;
      int64_t i = 0;
      for (; i + 4 <= inner; i += 4)
        wt_f32x4_store(mx + i, wt_f32x4_max(wt_f32x4_load(mx + i), wt_f32x4_load(xr + i)));
      for (; i < inner; i++) mx[i] = xr[i] > mx[i] ? xr[i] : mx[i];
    }
    for (int64_t i = 0; i < inner; i++)
      if (isinf(mx[i]) && mx[i] < 0) mx[i] = 0;
    for (int64_t r = 0; r < n; r++) {
      const float *xr = xo + r * inner;
      float *yr = yo + r * inner;
      int64_t i = 0;
      for (; i + 4 <= inner; i += 4) {
        wt_f32x4 e = wt_f32x4_exp(wt_f32x4_sub(wt_f32x4_load(xr + i), wt_f32x4_load(mx + i)));
        wt_f32x4_store(sm + i, wt_f32x4_add(wt_f32x4_load(sm + i), e));
        if (!log_out) wt_f32x4_store(yr + i, e);
      }
      for (; i < inner; i++) {
        float e = wt_vm_expf(xr[i] - mx[i]);
        sm[i] += e;
        if (!log_out) yr[i] = e;
      }
    }
    if (log_out) {
      for (int64_t i = 0; i < inner; i++) sm[i] = logf(sm[i]);
    } else {
      for (int64_t i = 0; i < inner; i++) sm[i] = 1.0f / sm[i];
    }
    for (int64_t r = 0; r < n; r++) {
      const float *xr = xo + r * inner;
      float *yr = yo + r * inner;
      int64_t i = 0;
      if (log_out) {
        for (; i + 4 <= inner; i += 4) {
          wt_f32x4 v = wt_f32x4_sub(wt_f32x4_load(xr + i), wt_f32x4_load(mx + i));
          wt_f32x4_store(yr + i, wt_f32x4_sub(v, wt_f32x4_load(sm + i)));
        }
        for (; i < inner; i++) yr[i] = (xr[i] - mx[i]) - sm[i];
      } else {
        for (; i + 4 <= inner; i += 4)
          wt_f32x4_store(yr + i, wt_f32x4_mul(wt_f32x4_load(yr + i), wt_f32x4_load(sm + i)));
        for (; i < inner; i++) yr[i] *= sm[i];
      }
    }
  }
}

/* ---- the losses over labels (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss) ------------ */

/* Label t's weight in *w: 1 or weight[t] (returns 1), 0 for the ignored label (returns 0); -1 when
 * t is outside [0, C). */
static int label_weight(int64_t t, int64_t C, const float *weight, int has_ignore,
                        int64_t ignore_index, float *w) {
  *w = 0.0f;
  if (has_ignore && t == ignore_index) return 0;
  if (t < 0 || t >= C) return -1;
  *w = weight ? weight[t] : 1.0f;
  return 1;
}

typedef struct loss_sums {
  double lsum, wsum;
} loss_sums;

/* One label's term l (weight w): written out per label, or summed. */
static void add_label(loss_sums *a, int64_t li, float l, float w, int reduction, float *loss) {
  if (reduction == WT_LOSS_NONE) loss[li] = l;
  a->lsum += l;
  a->wsum += w;
}

/* The reduced loss: the sum, or the weighted mean. */
static void finish_loss(const loss_sums *a, int reduction, float *loss) {
  if (reduction == WT_LOSS_SUM) loss[0] = (float)a->lsum;
  else if (reduction == WT_LOSS_MEAN) loss[0] = (float)(a->lsum / a->wsum);
}

int64_t wt_softmax_xent_f32(const float *scores, int64_t N, int64_t C, int64_t D,
                            const int32_t *labels32, const int64_t *labels64, const float *weight,
                            int has_ignore, int64_t ignore_index, int reduction, float *loss,
                            float *log_prob) {
  loss_sums acc = {0, 0};
  for (int64_t nn = 0; nn < N; nn++) {
    const float *xs = scores + nn * C * D;
    for (int64_t d = 0; d < D; d++) {
      int64_t li = nn * D + d;
      int64_t t = labels64 ? labels64[li] : labels32[li];
      const float *x = xs + d;
      float m, lse; /* log-softmax(x)[c] = (x[c] - m) - lse */
      if (D == 1) {
        m = row_max(x, C);
        lse = logf((float)exp_row(x, NULL, C, m));
        if (log_prob) shift_row(x, log_prob + nn * C, C, m, lse);
      } else {
        m = -INFINITY;
        for (int64_t c = 0; c < C; c++) m = x[c * D] > m ? x[c * D] : m;
        double s = 0;
        for (int64_t c = 0; c < C; c++) s += wt_vm_expf(x[c * D] - m);
        lse = logf((float)s);
        if (log_prob)
          for (int64_t c = 0; c < C; c++) log_prob[nn * C * D + c * D + d] = (x[c * D] - m) - lse;
      }
      float w;
      int take = label_weight(t, C, weight, has_ignore, ignore_index, &w);
      if (take < 0) return li;
      add_label(&acc, li, take ? -w * ((x[t * D] - m) - lse) : 0.0f, w, reduction, loss);
    }
  }
  finish_loss(&acc, reduction, loss);
  return -1;
}

int64_t wt_nll_loss_f32(const float *log_prob, int64_t N, int64_t C, int64_t D,
                        const int32_t *labels32, const int64_t *labels64, const float *weight,
                        int has_ignore, int64_t ignore_index, int reduction, float *loss) {
  loss_sums acc = {0, 0};
  for (int64_t li = 0; li < N * D; li++) {
    int64_t t = labels64 ? labels64[li] : labels32[li];
    float w;
    int take = label_weight(t, C, weight, has_ignore, ignore_index, &w);
    if (take < 0) return li;
    add_label(&acc, li, take ? -w * log_prob[(li / D) * C * D + t * D + li % D] : 0.0f, w, reduction,
              loss);
  }
  finish_loss(&acc, reduction, loss);
  return -1;
}

/* ---- backward ---------------------------------------------------------------------------- */

static float row_dot(const float *a, const float *b, int64_t n) {
  wt_f32x4 s0 = wt_f32x4_zero(), s1 = wt_f32x4_zero();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 = wt_f32x4_fma(wt_f32x4_load(a + i), wt_f32x4_load(b + i), s0);
    s1 = wt_f32x4_fma(wt_f32x4_load(a + i + 4), wt_f32x4_load(b + i + 4), s1);
  }
  float s = wt_f32x4_hsum(wt_f32x4_add(s0, s1));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

static float row_sum(const float *a, int64_t n) {
  wt_f32x4 s0 = wt_f32x4_zero();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) s0 = wt_f32x4_add(s0, wt_f32x4_load(a + i));
  float s = wt_f32x4_hsum(s0);
  for (; i < n; i++) s += a[i];
  return s;
}

/* dx = y * (dy - s) */
static void softmax_bwd_row(const float *dy, const float *y, float *dx, int64_t n, float s) {
  wt_f32x4 vs = wt_f32x4_splat(s);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wt_f32x4_store(dx + i, wt_f32x4_mul(wt_f32x4_load(y + i),
                                        wt_f32x4_sub(wt_f32x4_load(dy + i), vs)));
  for (; i < n; i++) dx[i] = y[i] * (dy[i] - s);
}

void wt_softmax_grad_f32(const float *dy, const float *y, float *dx, int64_t outer, int64_t n,
                         int64_t inner, int log_out, float *tmp) {
  if (inner == 1) {
    for (int64_t o = 0; o < outer; o++) {
      const float *g = dy + o * n, *yr = y + o * n;
      float *d = dx + o * n;
      if (log_out) {
        float s = row_sum(g, n);
        wt_f32x4 vs = wt_f32x4_splat(s);
        int64_t i = 0;
        for (; i + 4 <= n; i += 4)
          wt_f32x4_store(d + i, wt_f32x4_sub(wt_f32x4_load(g + i),
                                             wt_f32x4_mul(wt_f32x4_exp(wt_f32x4_load(yr + i)), vs)));
        for (; i < n; i++) d[i] = g[i] - wt_vm_expf(yr[i]) * s;
      } else {
        softmax_bwd_row(g, yr, d, n, row_dot(g, yr, n));
      }
    }
    return;
  }
  /* Columns: the sums across the n rows of a block are vectors over inner. */
  for (int64_t o = 0; o < outer; o++) {
    const float *g = dy + o * n * inner, *yo = y + o * n * inner;
    float *d = dx + o * n * inner;
    for (int64_t i = 0; i < inner; i++) tmp[i] = 0;
    for (int64_t r = 0; r < n; r++) {
      const float *gr = g + r * inner, *yr = yo + r * inner;
      int64_t i = 0;
      for (; i + 4 <= inner; i += 4) {
        wt_f32x4 v = log_out ? wt_f32x4_load(gr + i)
                             : wt_f32x4_mul(wt_f32x4_load(gr + i), wt_f32x4_load(yr + i));
        wt_f32x4_store(tmp + i, wt_f32x4_add(wt_f32x4_load(tmp + i), v));
      }
      for (; i < inner; i++) tmp[i] += log_out ? gr[i] : gr[i] * yr[i];
    }
    for (int64_t r = 0; r < n; r++) {
      const float *gr = g + r * inner, *yr = yo + r * inner;
      float *dr = d + r * inner;
      if (log_out) {
        for (int64_t i = 0; i < inner; i++) dr[i] = gr[i] - wt_vm_expf(yr[i]) * tmp[i];
      } else {
        int64_t i = 0;
        for (; i + 4 <= inner; i += 4)
          wt_f32x4_store(dr + i, wt_f32x4_mul(wt_f32x4_load(yr + i),
                                              wt_f32x4_sub(wt_f32x4_load(gr + i),
                                                           wt_f32x4_load(tmp + i))));
        for (; i < inner; i++) dr[i] = yr[i] * (gr[i] - tmp[i]);
      }
    }
  }
}

int64_t wt_softmax_xent_grad_f32(const float *dy, const float *log_prob, int64_t N, int64_t C,
                                 int64_t D, const int32_t *labels32, const int64_t *labels64,
                                 const float *weight, int has_ignore, int64_t ignore_index,
                                 int reduction, float *dx) {
  int64_t nd = N * D;
  float g = reduction == WT_LOSS_NONE ? 0.0f : dy[0];
  /* Validate first (nothing valid is written on a bad label) and sum the weights. */
  double wsum = 0;
  for (int64_t li = 0; li < nd; li++) {
    int64_t t = labels64 ? labels64[li] : labels32[li];
    if (has_ignore && t == ignore_index) continue;
    if (t < 0 || t >= C) return li;
    wsum += weight ? weight[t] : 1.0f;
  }
  if (reduction == WT_LOSS_MEAN && wsum != 0) g = (float)(g / wsum);
  for (int64_t li = 0; li < nd; li++) {
    int64_t nn = li / D, d = li % D;
    int64_t t = labels64 ? labels64[li] : labels32[li];
    const float *lp = log_prob + nn * C * D + d;
    float *o = dx + nn * C * D + d;
    if (has_ignore && t == ignore_index) {
      for (int64_t c = 0; c < C; c++) o[c * D] = 0.0f;
      continue;
    }
    float s = (weight ? weight[t] : 1.0f) * (reduction == WT_LOSS_NONE ? dy[li] : g);
    if (D == 1) {
      wt_f32x4 vs = wt_f32x4_splat(s);
      int64_t c = 0;
      for (; c + 4 <= C; c += 4)
        wt_f32x4_store(o + c, wt_f32x4_mul(wt_f32x4_exp(wt_f32x4_load(lp + c)), vs));
      for (; c < C; c++) o[c] = wt_vm_expf(lp[c]) * s;
      o[t] = (wt_vm_expf(lp[t]) - 1.0f) * s;
    } else {
      for (int64_t c = 0; c < C; c++) o[c * D] = (wt_vm_expf(lp[c * D]) - (c == t ? 1.0f : 0.0f)) * s;
    }
  }
  return -1;
}
