/* Pooling kernels (see pool.h). Max / average pooling reduce the window's valid image rows
 * into one row first (SIMD over the whole row width), then reduce along the row per output
 * column: SIMD for stride-1 interior columns, scalar at the borders and for other strides. */
#include "backend/cpu/pool.h"

#include <float.h>
#include <string.h>

#include "base/pool.h"
#include "backend/cpu/simd.h"

int64_t wt_pool_scratch_floats(const wt_conv_geom *g) { return g->img[2]; }

/* Interior output columns: every tap of the window lies inside the row. */
static void interior_cols(const wt_conv_geom *g, int64_t *lo, int64_t *hi) {
  int64_t lo0, hi0, lo1, hi1;
  wt_conv_valid_range(-g->pad[2], g->stride[2], g->img[2], g->grid[2], &lo0, &hi0);
  wt_conv_valid_range((g->k[2] - 1) * g->dil[2] - g->pad[2], g->stride[2], g->img[2],
                      g->grid[2], &lo1, &hi1);
  *lo = lo0 > lo1 ? lo0 : lo1;
  *hi = hi0 < hi1 ? hi0 : hi1;
  if (*hi < *lo) *hi = *lo;
}

/* Reduces the valid rows of the (od, oh) window of plane xp into a row. Returns the row (a
 * row of xp itself when only one is valid, else tmp) and the number of valid rows in *nrows. */
static const float *reduce_rows(const wt_conv_geom *g, const float *xp, int64_t od, int64_t oh,
                                int is_max, float *tmp, int64_t *nrows) {
  const int64_t I2 = g->img[2];
  const float *first = NULL;
  int64_t n = 0;
  wt_pool_rows r;
  wt_pool_rows_init(&r, g, od, oh);
  for (int64_t off; wt_pool_rows_next(&r, &off);) {
    const float *row = xp + off;
    n++;
    if (n == 1) {
      first = row;
      continue;
    }
    /* The second row combines with the first straight into tmp (no copy pass). */
    const float *acc = n == 2 ? first : tmp;
    int64_t i = 0;
    if (is_max) {
      for (; i + 4 <= I2; i += 4)
        wt_f32x4_store(tmp + i, wt_f32x4_max(wt_f32x4_load(acc + i), wt_f32x4_load(row + i)));
      for (; i < I2; i++) tmp[i] = acc[i] < row[i] ? row[i] : acc[i];
    } else {
      for (; i + 4 <= I2; i += 4)
        wt_f32x4_store(tmp + i, wt_f32x4_add(wt_f32x4_load(acc + i), wt_f32x4_load(row + i)));
      for (; i < I2; i++) tmp[i] = acc[i] + row[i];
    }
  }
  *nrows = n;
  return n <= 1 ? first : tmp;
}

/* Max along a reduced row r for every output column: interior columns [lo, hi) without
 * bounds checks (four at a time for stride 1), border columns with them. */
static void max_cols(const wt_conv_geom *g, const float *r, int64_t lo, int64_t hi, float *out) {
  const int64_t G2 = g->grid[2], I2 = g->img[2];
  const int64_t k2 = g->k[2], s2 = g->stride[2], d2 = g->dil[2], p2 = g->pad[2];
  int64_t ow = lo;
  if (s2 == 1)
    for (; ow + 4 <= hi; ow += 4) {
      wt_f32x4 m = wt_f32x4_load(r + (ow - p2));
      for (int64_t kw = 1; kw < k2; kw++)
        m = wt_f32x4_max(m, wt_f32x4_load(r + (ow - p2 + kw * d2)));
      wt_f32x4_store(out + ow, m);
    }
  for (; ow < hi; ow++) {
    const float *w = r + (ow * s2 - p2);
    float m = w[0];
    for (int64_t kw = 1; kw < k2; kw++) m = m < w[kw * d2] ? w[kw * d2] : m;
    out[ow] = m;
  }
  for (ow = 0; ow < G2; ow++) {
    if (ow == lo) ow = hi; /* border columns only */
    if (ow >= G2) break;
    float m = -FLT_MAX;
    for (int64_t kw = 0; kw < k2; kw++) {
      int64_t iw = ow * s2 - p2 + kw * d2;
      if (iw >= 0 && iw < I2 && m < r[iw]) m = r[iw];
    }
    out[ow] = m;
  }
}

/* Row pointers of the (od, oh) window's valid rows, up to cap; returns the count (may
 * exceed cap, then rows holds only the first cap). */
static int64_t window_rows(const wt_conv_geom *g, const float *xp, int64_t od, int64_t oh,
                           const float **rows, int64_t cap) {
  wt_pool_rows r;
  wt_pool_rows_init(&r, g, od, oh);
  for (int64_t off, i = 0; i < cap && wt_pool_rows_next(&r, &off); i++) rows[i] = xp + off;
  return r.n;
}

#define WT_POOL_DIRECT_ROWS 4

/* Max over a few rows and a small strided window (the 2x2 / stride-2 CNN pool): reading the
 * taps directly beats a reduced-row pass there. */
static void max_direct(const wt_conv_geom *g, const float *const *rows, int64_t nrows,
                       int64_t lo, int64_t hi, float *out) {
  const int64_t G2 = g->grid[2], I2 = g->img[2];
  const int64_t k2 = g->k[2], s2 = g->stride[2], d2 = g->dil[2], p2 = g->pad[2];
  if (nrows == 2 && k2 == 2) {
    const float *a = rows[0], *b = rows[1];
    int64_t ow = lo;
    if (s2 == 2 && d2 == 1)
      /* The 2x2 / stride-2 pool: 4 outputs from 8 consecutive floats of each row, split
       * into left and right taps; same max order as the scalar loop. */
      for (; ow + 4 <= hi; ow += 4) {
        int64_t i = ow * 2 - p2;
        wt_f32x4 a0 = wt_f32x4_load(a + i), a1 = wt_f32x4_load(a + i + 4);
        wt_f32x4 b0 = wt_f32x4_load(b + i), b1 = wt_f32x4_load(b + i + 4);
        wt_f32x4 m0 = wt_f32x4_max(wt_f32x4_even(a0, a1), wt_f32x4_odd(a0, a1));
        wt_f32x4 m1 = wt_f32x4_max(wt_f32x4_even(b0, b1), wt_f32x4_odd(b0, b1));
        wt_f32x4_store(out + ow, wt_f32x4_max(m0, m1));
      }
    for (; ow < hi; ow++) {
      int64_t i = ow * s2 - p2;
      float m0 = a[i] < a[i + d2] ? a[i + d2] : a[i];
      float m1 = b[i] < b[i + d2] ? b[i + d2] : b[i];
      out[ow] = m0 < m1 ? m1 : m0;
    }
  } else {
    /* Tap-outer order keeps the max chains of different columns independent. */
    for (int64_t j = 0; j < nrows; j++)
      for (int64_t kw = 0; kw < k2; kw++) {
        const float *src = rows[j];
        int64_t off = kw * d2 - p2;
        for (int64_t ow = lo; ow < hi; ow++) {
          float v = src[off + ow * s2];
          out[ow] = (j == 0 && kw == 0) || out[ow] < v ? v : out[ow];
        }
      }
  }
  for (int64_t ow = 0; ow < G2; ow++) {
    if (ow == lo) ow = hi; /* border columns, with bounds checks */
    if (ow >= G2) break;
    float m = -FLT_MAX;
    for (int64_t j = 0; j < nrows; j++)
      for (int64_t kw = 0; kw < k2; kw++) {
        int64_t iw = ow * s2 - p2 + kw * d2;
        if (iw >= 0 && iw < I2 && m < rows[j][iw]) m = rows[j][iw];
      }
    out[ow] = m;
  }
}

static void maxpool_planes(const wt_conv_geom *g, int64_t nc0, int64_t nc1, const float *x, float *y,
                           float *tmp) {
  const int64_t G0 = g->grid[0], G1 = g->grid[1], G2 = g->grid[2];
  const int64_t isize = wt_conv_img_size(g), gsize = wt_conv_grid_size(g);
  int64_t lo, hi;
  interior_cols(g, &lo, &hi);
  for (int64_t nc = nc0; nc < nc1; nc++) {
    const float *xp = x + nc * isize;
    for (int64_t od = 0; od < G0; od++)
      for (int64_t oh = 0; oh < G1; oh++) {
        float *out = y + nc * gsize + (od * G1 + oh) * G2;
        const float *rows[WT_POOL_DIRECT_ROWS];
        int64_t nrows = window_rows(g, xp, od, oh, rows, WT_POOL_DIRECT_ROWS);
        if (nrows == 0) {
          for (int64_t ow = 0; ow < G2; ow++) out[ow] = -FLT_MAX;
          continue;
        }
        if (g->stride[2] != 1 && nrows <= WT_POOL_DIRECT_ROWS && g->k[2] <= 4) {
          max_direct(g, rows, nrows, lo, hi, out);
          continue;
        }
        const float *r = reduce_rows(g, xp, od, oh, 1, tmp, &nrows);
        max_cols(g, r, lo, hi, out);
      }
  }
}

/* The generic argmax over one window (bounds-checked): index within the plane, -1 if empty. */
static int64_t argmax_window(const wt_conv_geom *g, const float *xp, int storage_order,
                             int64_t od, int64_t oh, int64_t ow, float *best_out) {
  const int64_t I0 = g->img[0], I1 = g->img[1], I2 = g->img[2];
  float best = -FLT_MAX;
  int64_t bi = -1;
  wt_pool_rows r;
  wt_pool_rows_init(&r, g, od, oh);
  for (int64_t off; wt_pool_rows_next(&r, &off);)
    for (int64_t kw = 0; kw < g->k[2]; kw++) {
      int64_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dil[2];
      if (iw < 0 || iw >= I2) continue;
      float v = xp[off + iw];
      if (bi < 0 || v > best) {
        int64_t row = off / I2; /* id * I1 + ih */
        best = v;
        bi = storage_order ? (iw * I1 + row % I1) * I0 + row / I1 : off + iw;
      }
    }
  *best_out = best;
  return bi;
}

#define WT_POOL_MAX_ROWS 64

static void maxpool_indices_planes(const wt_conv_geom *g, int64_t nc0, int64_t nc1, int storage_order,
                                   const float *x, float *y, int64_t *indices) {
  const int64_t G0 = g->grid[0], G1 = g->grid[1], G2 = g->grid[2];
  const int64_t k2 = g->k[2], s2 = g->stride[2], d2 = g->dil[2], p2 = g->pad[2];
  const int64_t isize = wt_conv_img_size(g), gsize = wt_conv_grid_size(g);
  int64_t lo, hi;
  interior_cols(g, &lo, &hi);
  for (int64_t nc = nc0; nc < nc1; nc++) {
    const float *xp = x + nc * isize;
    for (int64_t od = 0; od < G0; od++)
      for (int64_t oh = 0; oh < G1; oh++) {
        int64_t o = nc * gsize + (od * G1 + oh) * G2;
        float *yo = y + o;
        int64_t *io = indices + o;
        const float *rows[WT_POOL_MAX_ROWS];
        int64_t nrows = window_rows(g, xp, od, oh, rows, WT_POOL_MAX_ROWS);
        int64_t ow = 0, flo = lo, fhi = hi;
        /* Interior columns of row-major windows: no bounds checks, first maximum wins. */
        if (storage_order == 0 && nrows > 0 && nrows <= WT_POOL_MAX_ROWS) {
          if (nrows == 2 && k2 == 2) {
            const float *r0 = rows[0], *r1 = rows[1];
            int64_t b0 = r0 - xp, b1 = r1 - xp;
            ow = lo;
            if (s2 == 2 && d2 == 1 && b1 - b0 < (1 << 24)) {
              /* 2x2 / stride 2, 4 outputs at a time: the winning tap's offset from r0[i] is
               * tracked as a float (exact below 2^24), with the scalar loop's strict > order. */
              const wt_f32x4 one = wt_f32x4_splat(1.0f), dr = wt_f32x4_splat((float)(b1 - b0));
              const wt_f32x4 dr1 = wt_f32x4_splat((float)(b1 - b0 + 1));
              for (; ow + 4 <= hi; ow += 4) {
                int64_t i = ow * 2 - p2;
                wt_f32x4 a0 = wt_f32x4_load(r0 + i), a1 = wt_f32x4_load(r0 + i + 4);
                wt_f32x4 c0 = wt_f32x4_load(r1 + i), c1 = wt_f32x4_load(r1 + i + 4);
                wt_f32x4 m = wt_f32x4_even(a0, a1), off = wt_f32x4_zero(), v, c;
                v = wt_f32x4_odd(a0, a1), c = wt_f32x4_gt(v, m);
                m = wt_f32x4_select(c, v, m), off = wt_f32x4_select(c, one, off);
                v = wt_f32x4_even(c0, c1), c = wt_f32x4_gt(v, m);
                m = wt_f32x4_select(c, v, m), off = wt_f32x4_select(c, dr, off);
                v = wt_f32x4_odd(c0, c1), c = wt_f32x4_gt(v, m);
                m = wt_f32x4_select(c, v, m), off = wt_f32x4_select(c, dr1, off);
                float offs[4];
                wt_f32x4_store(yo + ow, m);
                wt_f32x4_store(offs, off);
                for (int l = 0; l < 4; l++) io[ow + l] = nc * isize + b0 + i + 2 * l + (int64_t)offs[l];
              }
            }
            for (; ow < hi; ow++) {
              int64_t i = ow * s2 - p2;
              float m = r0[i];
              int64_t bi = b0 + i;
              if (r0[i + d2] > m) m = r0[i + d2], bi = b0 + i + d2;
              if (r1[i] > m) m = r1[i], bi = b1 + i;
              if (r1[i + d2] > m) m = r1[i + d2], bi = b1 + i + d2;
              yo[ow] = m;
              io[ow] = nc * isize + bi;
            }
          } else {
            for (ow = lo; ow < hi; ow++) {
              int64_t i = ow * s2 - p2;
              float m = rows[0][i];
              int64_t bi = (rows[0] - xp) + i;
              for (int64_t j = 0; j < nrows; j++)
                for (int64_t kw = j == 0; kw < k2; kw++) {
                  float v = rows[j][i + kw * d2];
                  if (v > m) m = v, bi = (rows[j] - xp) + i + kw * d2;
                }
              yo[ow] = m;
              io[ow] = nc * isize + bi;
            }
          }
        } else {
          flo = fhi = 0; /* every column through the generic path */
        }
        for (ow = 0; ow < G2; ow++) {
          if (ow == flo) ow = fhi; /* border columns */
          if (ow >= G2) break;
          float m;
          int64_t bi = argmax_window(g, xp, storage_order, od, oh, ow, &m);
          yo[ow] = m;
          io[ow] = bi < 0 ? -1 : nc * isize + bi;
        }
      }
  }
}

static void avgpool_planes(const wt_conv_geom *g, const int64_t *pad_end, int count_include_pad,
                           int64_t nc0, int64_t nc1, const float *x, float *y, float *tmp) {
  const int64_t G0 = g->grid[0], G1 = g->grid[1], G2 = g->grid[2], I2 = g->img[2];
  const int64_t k2 = g->k[2], s2 = g->stride[2], d2 = g->dil[2], p2 = g->pad[2];
  const int64_t isize = wt_conv_img_size(g), gsize = wt_conv_grid_size(g);
  int64_t lo, hi;
  interior_cols(g, &lo, &hi);
  for (int64_t nc = nc0; nc < nc1; nc++) {
    const float *xp = x + nc * isize;
    for (int64_t od = 0; od < G0; od++)
      for (int64_t oh = 0; oh < G1; oh++) {
        float *out = y + nc * gsize + (od * G1 + oh) * G2;
        int64_t nrows;
        const float *r = reduce_rows(g, xp, od, oh, 0, tmp, &nrows);
        int64_t rows_div = wt_avgpool_rows_div(g, pad_end, count_include_pad, od, oh, nrows);
        if (nrows == 0) {
          memset(out, 0, sizeof(float) * (size_t)G2);
          continue;
        }
        /* Interior windows lie fully inside the row, so both counts are k2 there. */
        float div = (float)(rows_div * k2);
        int64_t ow = lo;
        if (s2 == 1) {
          wt_f32x4 dv = wt_f32x4_splat(div);
          for (; ow + 4 <= hi; ow += 4) {
            wt_f32x4 s = wt_f32x4_load(r + (ow - p2));
            for (int64_t kw = 1; kw < k2; kw++)
              s = wt_f32x4_add(s, wt_f32x4_load(r + (ow - p2 + kw * d2)));
            wt_f32x4_store(out + ow, wt_f32x4_div(s, dv));
          }
        }
        for (; ow < hi; ow++) {
          const float *w = r + (ow * s2 - p2);
          float s = w[0];
          for (int64_t kw = 1; kw < k2; kw++) s += w[kw * d2];
          out[ow] = s / div;
        }
        for (ow = 0; ow < G2; ow++) {
          if (ow == lo) ow = hi; /* border columns only */
          if (ow >= G2) break;
          float s = 0.0f;
          int64_t n = 0, start = ow * s2 - p2;
          for (int64_t kw = 0; kw < k2; kw++) {
            int64_t iw = start + kw * d2;
            if (iw >= 0 && iw < I2) {
              s += r[iw];
              n++;
            }
          }
          if (count_include_pad) n = wt_pool_count_taps(start, k2, d2, -p2, I2 + pad_end[2]);
          /* A window wholly in the padding (pads >= kernel) averages nothing: 0. */
          out[ow] = rows_div * n > 0 ? s / (float)(rows_div * n) : 0.0f;
        }
      }
  }
}

/* ---- planes on the thread pool --------------------------------------------------------------
 * The pooling kernels work plane by plane (one (n, c) image each): planes are split over the
 * pool, each whole on one thread, so the bits do not depend on the thread count. A row buffer
 * (tmp) is the caller's on the calling thread and a worker's scratch elsewhere. */
typedef struct planes_job {
  wt_planes_fn fn;
  void *ctx;
  float *tmp;
} planes_job;

static void planes_task(void *ctx, int64_t nc0, int64_t count) {
  const planes_job *j = ctx;
  int32_t t = wt_pool_thread_index();
  j->fn(j->ctx, nc0, nc0 + count, t > 0 ? wt_pool_scratch(t) : j->tmp);
}

void wt_pool_planes(int64_t NC, int64_t plane_elems, int64_t tmp_floats, float *tmp, wt_planes_fn fn,
                    void *ctx) {
  planes_job j = {fn, ctx, tmp};
  if ((size_t)tmp_floats * sizeof(float) > WT_POOL_SCRATCH_BYTES) { /* no worker could hold it */
    fn(ctx, 0, NC, tmp);
    return;
  }
  wt_parallel_rows(NC, plane_elems, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, planes_task, &j);
}

typedef struct pool_args {
  const wt_conv_geom *g;
  const int64_t *pad_end;
  int count_include_pad, storage_order;
  const float *x;
  float *y;
  int64_t *indices;
} pool_args;

static void maxpool_task(void *ctx, int64_t nc0, int64_t nc1, float *tmp) {
  const pool_args *a = ctx;
  maxpool_planes(a->g, nc0, nc1, a->x, a->y, tmp);
}

void wt_maxpool(const wt_conv_geom *g, int64_t NC, const float *x, float *y, float *tmp) {
  pool_args a = {.g = g, .x = x, .y = y};
  wt_pool_planes(NC, wt_conv_img_size(g), g->img[2], tmp, maxpool_task, &a);
}

static void maxpool_indices_task(void *ctx, int64_t nc0, int64_t nc1, float *tmp) {
  (void)tmp;
  const pool_args *a = ctx;
  maxpool_indices_planes(a->g, nc0, nc1, a->storage_order, a->x, a->y, a->indices);
}

void wt_maxpool_indices(const wt_conv_geom *g, int64_t NC, int storage_order, const float *x,
                        float *y, int64_t *indices) {
  pool_args a = {.g = g, .storage_order = storage_order, .x = x, .y = y, .indices = indices};
  wt_pool_planes(NC, wt_conv_img_size(g), 0, NULL, maxpool_indices_task, &a);
}

static void avgpool_task(void *ctx, int64_t nc0, int64_t nc1, float *tmp) {
  const pool_args *a = ctx;
  avgpool_planes(a->g, a->pad_end, a->count_include_pad, nc0, nc1, a->x, a->y, tmp);
}

void wt_avgpool(const wt_conv_geom *g, const int64_t *pad_end, int count_include_pad,
                int64_t NC, const float *x, float *y, float *tmp) {
  pool_args a = {.g = g, .pad_end = pad_end, .count_include_pad = count_include_pad, .x = x, .y = y};
  wt_pool_planes(NC, wt_conv_img_size(g), g->img[2], tmp, avgpool_task, &a);
}

/* Sum of p[0..n) in float SIMD blocks folded into a double, so long planes stay accurate. */
static double plane_sum(const float *p, int64_t n) {
  double total = 0.0;
  int64_t i = 0;
  while (i < n) {
    int64_t end = n - i > 1024 ? i + 1024 : n;
    wt_f32x4 acc = wt_f32x4_zero();
    for (; i + 4 <= end; i += 4) acc = wt_f32x4_add(acc, wt_f32x4_load(p + i));
    float s = wt_f32x4_hsum(acc);
    for (; i < end; i++) s += p[i];
    total += s;
  }
  return total;
}

typedef struct global_job {
  int max;
  int64_t S;
  const float *x;
  float *y;
} global_job;

/* Planes [c0, c0 + count): one output each. */
static void global_planes(void *ctx, int64_t c0, int64_t count) {
  const global_job *j = ctx;
  const int64_t S = j->S;
  for (int64_t c = c0; c < c0 + count; c++) {
    const float *p = j->x + c * S;
    if (!j->max) {
      j->y[c] = S > 0 ? (float)(plane_sum(p, S) / (double)S) : 0.0f;
      continue;
    }
    float m = -FLT_MAX;
    int64_t i = 0;
    if (S >= 4) {
      wt_f32x4 acc = wt_f32x4_load(p);
      for (i = 4; i + 4 <= S; i += 4) acc = wt_f32x4_max(acc, wt_f32x4_load(p + i));
      m = wt_f32x4_hmax(acc);
    }
    for (; i < S; i++) m = m < p[i] ? p[i] : m;
    j->y[c] = m;
  }
}

/* Each plane whole on one thread (the same bits at any thread count). */
void wt_global_avgpool(int64_t NC, int64_t S, const float *x, float *y) {
  global_job j = {0, S, x, y};
  wt_parallel_rows(NC, S, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, global_planes, &j);
}

void wt_global_maxpool(int64_t NC, int64_t S, const float *x, float *y) {
  global_job j = {1, S, x, y};
  wt_parallel_rows(NC, S, WT_ROWS_BLOCK, WT_ROWS_THREAD_MIN, global_planes, &j);
}
