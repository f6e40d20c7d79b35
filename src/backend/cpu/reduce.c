/* Reduction, arg-extremum, cumsum and top-k kernels (see reduce.h). The float reductions have
 * two SIMD shapes: a contiguous row (inner == 1, e.g. a mean over the last dim) and a block of
 * rows combined element-wise (inner > 1, e.g. a mean over the sequence dim). Integer kernels
 * use wrap-around (unsigned) arithmetic so overflow is defined, like numpy's. */
#include "backend/cpu/reduce.h"

#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "base/pool.h"
#include "backend/cpu/simd.h"

wt_reduce_kind wt_reduce_next_kind(wt_reduce_kind first) {
  switch (first) {
    case WT_RED_SUMSQ:
    case WT_RED_ABSSUM: return WT_RED_SUM;
    default: return first;
  }
}

/* ---- float ------------------------------------------------------------------------------ */

static float lse_finish(float m, float s) {
  if (isinf(m)) return m; /* all -inf (or n == 0), or a +inf term: avoid inf - inf */
  return m + logf(s);
}

static float row_max_f32(const float *x, int64_t n, int is_max) {
  float init = is_max ? -INFINITY : INFINITY;
  wt_f32x4 a = wt_f32x4_splat(init);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    a = is_max ? wt_f32x4_max(a, wt_f32x4_load(x + i)) : wt_f32x4_min(a, wt_f32x4_load(x + i));
  float m = is_max ? wt_f32x4_hmax(a) : -wt_f32x4_hmax(wt_f32x4_neg(a));
  for (; i < n; i++) m = is_max ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  return m;
}

static float row_reduce_f32(wt_reduce_kind k, const float *x, int64_t n) {
  switch (k) {
    case WT_RED_MAX: return row_max_f32(x, n, 1);
    case WT_RED_MIN: return row_max_f32(x, n, 0);
    case WT_RED_PROD: {
      float p = 1.0f;
      for (int64_t i = 0; i < n; i++) p *= x[i];
      return p;
    }
    case WT_RED_LOGSUMEXP: {
      float m = row_max_f32(x, n, 1);
      if (isinf(m)) return m;
      double s = 0;
      for (int64_t i = 0; i < n; i++) s += expf(x[i] - m);
      return lse_finish(m, (float)s);
    }
    default: break;
  }
  /* Sums: two vector accumulators (8 partial sums) for throughput and a little accuracy. */
  wt_f32x4 a0 = wt_f32x4_zero(), a1 = wt_f32x4_zero();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    wt_f32x4 v0 = wt_f32x4_load(x + i), v1 = wt_f32x4_load(x + i + 4);
    if (k == WT_RED_SUMSQ) {
      v0 = wt_f32x4_mul(v0, v0);
      v1 = wt_f32x4_mul(v1, v1);
    } else if (k == WT_RED_ABSSUM) {
      v0 = wt_f32x4_abs(v0);
      v1 = wt_f32x4_abs(v1);
    }
    a0 = wt_f32x4_add(a0, v0);
    a1 = wt_f32x4_add(a1, v1);
  }
  float s = wt_f32x4_hsum(wt_f32x4_add(a0, a1));
  for (; i < n; i++) s += k == WT_RED_SUMSQ ? x[i] * x[i] : k == WT_RED_ABSSUM ? fabsf(x[i]) : x[i];
  return s;
}

/* y[0..m) op= x[0..m) for the block shape. */
static void combine_f32(wt_reduce_kind k, const float *x, float *y, int64_t m) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    wt_f32x4 v = wt_f32x4_load(x + i), a = wt_f32x4_load(y + i);
    switch (k) {
      case WT_RED_SUMSQ: a = wt_f32x4_fma(v, v, a); break;
      case WT_RED_ABSSUM: a = wt_f32x4_add(a, wt_f32x4_abs(v)); break;
      case WT_RED_MAX: a = wt_f32x4_max(a, v); break;
      case WT_RED_MIN: a = wt_f32x4_min(a, v); break;
      case WT_RED_PROD: a = wt_f32x4_mul(a, v); break;
      default: a = wt_f32x4_add(a, v); break;
    }
    wt_f32x4_store(y + i, a);
  }
  for (; i < m; i++) {
    float v = x[i];
    switch (k) {
      case WT_RED_SUMSQ: y[i] += v * v; break;
      case WT_RED_ABSSUM: y[i] += fabsf(v); break;
      case WT_RED_MAX: y[i] = v > y[i] ? v : y[i]; break;
      case WT_RED_MIN: y[i] = v < y[i] ? v : y[i]; break;
      case WT_RED_PROD: y[i] *= v; break;
      default: y[i] += v; break;
    }
  }
}

static float identity_f32(wt_reduce_kind k) {
  switch (k) {
    case WT_RED_MAX:
    case WT_RED_LOGSUMEXP: return -INFINITY;
    case WT_RED_MIN: return INFINITY;
    case WT_RED_PROD: return 1.0f;
    default: return 0.0f;
  }
}

/* Columns [c0, c1) of one block of n rows of `inner` (the inner > 1 shape). */
static void reduce_columns(wt_reduce_kind k, const float *xo, int64_t n, int64_t inner, float *yo,
                           int64_t c0, int64_t c1) {
  wt_reduce_kind pass = k == WT_RED_LOGSUMEXP ? WT_RED_MAX : k;
  float id = identity_f32(k);
  for (int64_t i = c0; i < c1; i++) yo[i] = id;
  for (int64_t r = 0; r < n; r++) combine_f32(pass, xo + r * inner + c0, yo + c0, c1 - c0);
  if (k != WT_RED_LOGSUMEXP) return;
  /* Second pass over the block: sum of exp(x - max) per column, in chunks on the stack. */
  enum { CH = 64 };
  double acc[CH];
  for (int64_t i0 = c0; i0 < c1; i0 += CH) {
    int64_t m = c1 - i0 < CH ? c1 - i0 : CH;
    for (int64_t i = 0; i < m; i++) acc[i] = 0;
    for (int64_t r = 0; r < n; r++) {
      const float *xr = xo + r * inner + i0;
      for (int64_t i = 0; i < m; i++)
        if (!isinf(yo[i0 + i])) acc[i] += expf(xr[i] - yo[i0 + i]);
    }
    for (int64_t i = 0; i < m; i++) yo[i0 + i] = lse_finish(yo[i0 + i], (float)acc[i]);
  }
}

/* On the thread pool (base/pool.h), split over outputs only, each computed as in one pass: rows
 * (inner == 1) whole, and blocks (inner > 1) in pieces of `width` columns, a multiple of 4 from
 * column 0, so a column takes the vector or the scalar-tail path it takes in one pass. */
typedef struct reduce_job {
  wt_reduce_kind k;
  const float *x;
  int64_t n, inner, width, pieces; /* pieces of `width` columns per block */
  float *y;
} reduce_job;

static void reduce_rows(void *ctx, int64_t o0, int64_t count) {
  const reduce_job *j = ctx;
  for (int64_t o = o0; o < o0 + count; o++) j->y[o] = row_reduce_f32(j->k, j->x + o * j->n, j->n);
}

static void reduce_pieces(void *ctx, int64_t i0, int64_t count) {
  const reduce_job *j = ctx;
  for (int64_t i = i0; i < i0 + count; i++) {
    int64_t o = i / j->pieces, c0 = i % j->pieces * j->width;
    int64_t c1 = c0 + j->width < j->inner ? c0 + j->width : j->inner;
    reduce_columns(j->k, j->x + o * j->n * j->inner, j->n, j->inner, j->y + o * j->inner, c0, c1);
  }
}

void wt_reduce_f32(wt_reduce_kind k, const float *x, int64_t outer, int64_t n, int64_t inner,
                   float *y) {
  reduce_job j = {k, x, n, inner, inner, 1, y};
  if (inner == 1) {
    wt_parallel_rows(outer, n, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, reduce_rows, &j);
    return;
  }
  /* A piece of about WT_ROWS_BLOCK elements: width columns of n rows. */
  int64_t want = n > 0 ? (WT_ROWS_BLOCK / n + 3) / 4 * 4 : inner;
  if (want < inner) {
    j.width = want < 4 ? 4 : want;
    j.pieces = (inner + j.width - 1) / j.width;
  }
  wt_parallel_rows(outer * j.pieces, n * j.width, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN,
                   reduce_pieces, &j);
}

/* ---- integers ---------------------------------------------------------------------------- */

#define WT_DEFINE_REDUCE_INT(NAME, T, UT, TMAX, TMIN)                                         \
  void NAME(wt_reduce_kind k, const T *x, int64_t outer, int64_t n, int64_t inner, T *y) {    \
    for (int64_t o = 0; o < outer; o++)                                                       \
      for (int64_t i = 0; i < inner; i++) {                                                   \
        const T *p = x + o * n * inner + i;                                                   \
        if (k == WT_RED_LOGSUMEXP) {                                                          \
          double m = -INFINITY, s = 0;                                                        \
          for (int64_t r = 0; r < n; r++) m = (double)p[r * inner] > m ? (double)p[r * inner] : m; \
          for (int64_t r = 0; r < n; r++) s += exp((double)p[r * inner] - m);                 \
          y[o * inner + i] = n ? (T)(m + log(s)) : (T)0;                                       \
          continue;                                                                           \
        }                                                                                     \
        UT acc = k == WT_RED_PROD ? 1u : 0u;                                                  \
        T ext = k == WT_RED_MAX ? TMIN : TMAX;                                                \
        for (int64_t r = 0; r < n; r++) {                                                     \
          T v = p[r * inner];                                                                 \
          switch (k) {                                                                        \
            case WT_RED_SUMSQ: acc += (UT)v * (UT)v; break;                                   \
            case WT_RED_ABSSUM: acc += v < 0 ? (UT)0 - (UT)v : (UT)v; break;                  \
            case WT_RED_PROD: acc *= (UT)v; break;                                            \
            case WT_RED_MAX: ext = v > ext ? v : ext; break;                                  \
            case WT_RED_MIN: ext = v < ext ? v : ext; break;                                  \
            default: acc += (UT)v; break;                                                     \
          }                                                                                   \
        }                                                                                     \
        T out;                                                                                \
        if (k == WT_RED_MAX || k == WT_RED_MIN) out = ext;                                    \
        else memcpy(&out, &acc, sizeof out); /* two's complement reinterpretation */          \
        y[o * inner + i] = out;                                                               \
      }                                                                                       \
  }

WT_DEFINE_REDUCE_INT(wt_reduce_i32, int32_t, uint32_t, INT32_MAX, INT32_MIN)
WT_DEFINE_REDUCE_INT(wt_reduce_i64, int64_t, uint64_t, INT64_MAX, INT64_MIN)

/* ---- arg max / min ------------------------------------------------------------------------ */

#define WT_DEFINE_ARGEXT(NAME, T)                                                              \
  void NAME(const T *x, int64_t outer, int64_t n, int64_t inner, int is_max, int select_last, \
            int64_t *y) {                                                                     \
    for (int64_t o = 0; o < outer; o++)                                                       \
      for (int64_t i = 0; i < inner; i++) {                                                   \
        const T *p = x + o * n * inner + i;                                                   \
        T best = p[0];                                                                        \
        int64_t bi = 0;                                                                       \
        for (int64_t r = 1; r < n; r++) {                                                     \
          T v = p[r * inner];                                                                 \
          int better = is_max ? (select_last ? v >= best : v > best)                          \
                              : (select_last ? v <= best : v < best);                         \
          if (better) {                                                                       \
            best = v;                                                                         \
            bi = r;                                                                           \
          }                                                                                   \
        }                                                                                     \
        y[o * inner + i] = bi;                                                                \
      }                                                                                       \
  }

WT_DEFINE_ARGEXT(wt_argext_f32, float)
WT_DEFINE_ARGEXT(wt_argext_i32, int32_t)
WT_DEFINE_ARGEXT(wt_argext_i64, int64_t)

/* ---- cumsum ------------------------------------------------------------------------------- */

/* ACC is the accumulator type: float sums sequentially in float like numpy's cumsum; integers
 * wrap in unsigned arithmetic. */
#define WT_DEFINE_CUMSUM(NAME, T, ACC)                                                         \
  void NAME(const T *x, int64_t outer, int64_t n, int64_t inner, int exclusive, int reverse,  \
            T *y) {                                                                           \
    for (int64_t o = 0; o < outer; o++)                                                       \
      for (int64_t i = 0; i < inner; i++) {                                                   \
        const T *p = x + o * n * inner + i;                                                   \
        T *q = y + o * n * inner + i;                                                         \
        ACC acc = 0;                                                                          \
        for (int64_t t = 0; t < n; t++) {                                                     \
          int64_t r = reverse ? n - 1 - t : t;                                                \
          if (exclusive) {                                                                    \
            q[r * inner] = (T)acc;                                                            \
            acc += (ACC)p[r * inner];                                                         \
          } else {                                                                            \
            acc += (ACC)p[r * inner];                                                         \
            q[r * inner] = (T)acc;                                                            \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
  }

WT_DEFINE_CUMSUM(wt_cumsum_f32, float, float)
WT_DEFINE_CUMSUM(wt_cumsum_i32, int32_t, uint32_t)
WT_DEFINE_CUMSUM(wt_cumsum_i64, int64_t, uint64_t)

/* ---- top-k -------------------------------------------------------------------------------- */

/* Reads element j of a row as a comparable key: floats and int32 fit a double exactly; int64
 * is compared as int64 via the separate path below. */
typedef struct topk_row {
  int dtype;
  const void *base;
  int64_t stride;
  int largest;
} topk_row;

/* True when element a must come before element b (a, b indices along the axis). */
static int topk_before(const topk_row *row, int64_t a, int64_t b) {
  int c; /* sign of (va - vb) */
  if (row->dtype == WT_INT64) {
    int64_t va = ((const int64_t *)row->base)[a * row->stride];
    int64_t vb = ((const int64_t *)row->base)[b * row->stride];
    c = (va > vb) - (va < vb);
  } else if (row->dtype == WT_INT32) {
    int32_t va = ((const int32_t *)row->base)[a * row->stride];
    int32_t vb = ((const int32_t *)row->base)[b * row->stride];
    c = (va > vb) - (va < vb);
  } else {
    float va = ((const float *)row->base)[a * row->stride];
    float vb = ((const float *)row->base)[b * row->stride];
    /* NaN sorts as the largest value (numpy's order). */
    if (isnan(va) || isnan(vb)) c = isnan(va) - isnan(vb);
    else c = (va > vb) - (va < vb);
  }
  if (c == 0) return a < b;
  return row->largest ? c > 0 : c < 0;
}

/* Bottom-up merge sort of idx[0..n) (stable, allocation-free) using tmp[0..n). */
static void topk_sort(const topk_row *row, int64_t *idx, int64_t *tmp, int64_t n) {
  int64_t *src = idx, *dst = tmp;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) dst[o++] = topk_before(row, src[b], src[a]) ? src[b++] : src[a++];
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
}

void wt_topk(int dtype, const void *x, int64_t outer, int64_t n, int64_t inner, int64_t k,
             int largest, void *values, int64_t *indices, int64_t *scratch) {
  size_t es = wt_dtype_size(dtype);
  int64_t *idx = scratch, *tmp = scratch + n;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const char *base = (const char *)x + (size_t)(o * n * inner + i) * es;
      topk_row row = {dtype, base, inner, largest};
      for (int64_t r = 0; r < n; r++) idx[r] = r;
      topk_sort(&row, idx, tmp, n);
      for (int64_t r = 0; r < k; r++) {
        int64_t dst = o * k * inner + r * inner + i;
        memcpy((char *)values + (size_t)dst * es, base + (size_t)(idx[r] * inner) * es, es);
        indices[dst] = idx[r];
      }
    }
}
