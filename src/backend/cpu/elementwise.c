/* Broadcast iteration and binary row kernels (arithmetic, comparison, logic); see
 * elementwise.h. Float arithmetic rows use the simd.h vocabulary with a scalar tail. */
#include "backend/cpu/elementwise.h"

#include <math.h>
#include <stdatomic.h>

#include "base/pool.h"
#include "backend/cpu/simd.h"

void wt_bcast_init(wt_bcast *p, int out_rank, const int64_t *out_dims, int n_in,
                   const int *in_ranks, const int64_t *const *in_dims) {
  int64_t full[WT_BCAST_MAX_IN][WT_BCAST_MAX_RANK];
  for (int k = 0; k < n_in; k++) {
    int64_t s = 1;
    for (int i = out_rank - 1; i >= 0; i--) {
      int j = i - (out_rank - in_ranks[k]);
      int64_t d = j >= 0 ? in_dims[k][j] : 1;
      full[k][i] = d == 1 ? 0 : s;
      s *= d;
    }
  }
  /* Size-1 output dims carry no iteration; then merge dim i into the previous kept dim when
   * every operand walks them as one contiguous (or jointly broadcast) run. */
  int r = 0;
  p->n_in = n_in;
  for (int i = 0; i < out_rank; i++) {
    if (out_dims[i] == 1) continue;
    if (r > 0) {
      int merge = 1;
      for (int k = 0; k < n_in && merge; k++)
        merge = p->strides[k][r - 1] == full[k][i] * out_dims[i];
      if (merge) {
        p->dims[r - 1] *= out_dims[i];
        for (int k = 0; k < n_in; k++) p->strides[k][r - 1] = full[k][i];
        continue;
      }
    }
    p->dims[r] = out_dims[i];
    for (int k = 0; k < n_in; k++) p->strides[k][r] = full[k][i];
    r++;
  }
  if (r == 0) {
    p->dims[0] = 1;
    for (int k = 0; k < n_in; k++) p->strides[k][0] = 0;
    r = 1;
  }
  p->rank = r;
}

/* Rows [r0, r1) of the iteration, columns [c0, c1) of each (operands' offsets and the output
 * position found from r0). */
static int bcast_rows(const wt_bcast *p, const void *const *ins, const size_t *elem_size, void *out,
                      size_t out_elem_size, wt_bcast_row_fn fn, void *user, int64_t r0, int64_t r1,
                      int64_t c0, int64_t c1) {
  int rank = p->rank, n_in = p->n_in;
  int64_t inner = p->dims[rank - 1];
  int64_t idx[WT_BCAST_MAX_RANK] = {0}, off[WT_BCAST_MAX_IN] = {0};
  const void *ptrs[WT_BCAST_MAX_IN];
  int st[WT_BCAST_MAX_IN];
  for (int k = 0; k < n_in; k++) {
    st[k] = (int)p->strides[k][rank - 1];
    off[k] = c0 * st[k];
  }
  for (int64_t d = rank - 2, r = r0; d >= 0; d--) {
    idx[d] = r % p->dims[d];
    r /= p->dims[d];
    for (int k = 0; k < n_in; k++) off[k] += idx[d] * p->strides[k][d];
  }
  char *o = (char *)out + (r0 * inner + c0) * (int64_t)out_elem_size;
  for (int64_t row = r0; row < r1; row++) {
    for (int k = 0; k < n_in; k++) ptrs[k] = (const char *)ins[k] + off[k] * (int64_t)elem_size[k];
    int rc = fn(user, c1 - c0, ptrs, st, o);
    if (rc) return rc;
    o += inner * (int64_t)out_elem_size;
    for (int d = rank - 2; d >= 0; d--) {
      for (int k = 0; k < n_in; k++) off[k] += p->strides[k][d];
      if (++idx[d] < p->dims[d]) break;
      for (int k = 0; k < n_in; k++) off[k] -= p->strides[k][d] * p->dims[d];
      idx[d] = 0;
    }
  }
  return 0;
}

static int64_t bcast_count_rows(const wt_bcast *p) {
  int64_t rows = 1;
  for (int d = 0; d < p->rank - 1; d++) rows *= p->dims[d];
  return rows;
}

int wt_bcast_run(const wt_bcast *p, const void *const *ins, const size_t *elem_size, void *out,
                 size_t out_elem_size, wt_bcast_row_fn fn, void *user) {
  int64_t inner = p->dims[p->rank - 1], rows = bcast_count_rows(p);
  if (inner == 0 || rows == 0) return 0;
  return bcast_rows(p, ins, elem_size, out, out_elem_size, fn, user, 0, rows, 0, inner);
}

typedef struct bcast_job {
  const wt_bcast *p;
  const void *const *ins;
  const size_t *elem_size;
  void *out;
  size_t out_elem_size;
  wt_bcast_row_fn fn;
  void *user;
  int64_t inner, pieces; /* pieces per row: 1, or a long row cut into WT_EW_BLOCK columns */
  atomic_int rc;
} bcast_job;

/* Items [i0, i0 + count): whole rows, or (row, piece) pairs of a long row. */
static void bcast_range(void *ctx, int64_t i0, int64_t count) {
  bcast_job *j = ctx;
  int rc = 0;
  if (j->pieces == 1) {
    rc = bcast_rows(j->p, j->ins, j->elem_size, j->out, j->out_elem_size, j->fn, j->user, i0,
                    i0 + count, 0, j->inner);
  } else {
    for (int64_t i = i0; i < i0 + count && !rc; i++) {
      int64_t row = i / j->pieces, c0 = i % j->pieces * WT_EW_BLOCK;
      int64_t c1 = c0 + WT_EW_BLOCK < j->inner ? c0 + WT_EW_BLOCK : j->inner;
      rc = bcast_rows(j->p, j->ins, j->elem_size, j->out, j->out_elem_size, j->fn, j->user, row,
                      row + 1, c0, c1);
    }
  }
  int none = 0;
  if (rc) atomic_compare_exchange_strong(&j->rc, &none, rc);
}

int wt_bcast_run_pool(const wt_bcast *p, const void *const *ins, const size_t *elem_size,
                      void *out, size_t out_elem_size, wt_bcast_row_fn fn, void *user) {
  int64_t inner = p->dims[p->rank - 1], rows = bcast_count_rows(p);
  if (inner == 0 || rows == 0) return 0;
  if (rows * inner < WT_EW_THREAD_MIN && !wt_pool_split_small())
    return bcast_rows(p, ins, elem_size, out, out_elem_size, fn, user, 0, rows, 0, inner);
  bcast_job j = {p, ins, elem_size, out, out_elem_size, fn, user, inner,
                 inner > WT_EW_BLOCK ? (inner + WT_EW_BLOCK - 1) / WT_EW_BLOCK : 1, 0};
  int64_t per = j.pieces > 1 ? 1 : (WT_EW_BLOCK + inner - 1) / inner; /* items per block */
  wt_parallel_range(rows * j.pieces, per, 0, bcast_range, &j);
  return atomic_load(&j.rc);
}

/* ---- float arithmetic rows ------------------------------------------------------------- */

/* One row for each (sa, sb) combination; the broadcast operand is splatted once. */
#define F32_ROW(NAME, VOP, SEXPR)                                                        \
  static void NAME(int64_t n, const float *a, int sa, const float *b, int sb, float *o) { \
    int64_t i = 0;                                                                       \
    if (sa && sb) {                                                                      \
      for (; i + 4 <= n; i += 4)                                                         \
        wt_f32x4_store(o + i, VOP(wt_f32x4_load(a + i), wt_f32x4_load(b + i)));          \
      for (; i < n; i++) {                                                               \
        float x = a[i], y = b[i];                                                        \
        o[i] = (SEXPR);                                                                  \
      }                                                                                  \
    } else if (sa) {                                                                     \
      float y = b[0];                                                                    \
      wt_f32x4 vb = wt_f32x4_splat(y);                                                   \
      for (; i + 4 <= n; i += 4) wt_f32x4_store(o + i, VOP(wt_f32x4_load(a + i), vb));   \
      for (; i < n; i++) {                                                               \
        float x = a[i];                                                                  \
        o[i] = (SEXPR);                                                                  \
      }                                                                                  \
    } else if (sb) {                                                                     \
      float x = a[0];                                                                    \
      wt_f32x4 va = wt_f32x4_splat(x);                                                   \
      for (; i + 4 <= n; i += 4) wt_f32x4_store(o + i, VOP(va, wt_f32x4_load(b + i)));   \
      for (; i < n; i++) {                                                               \
        float y = b[i];                                                                  \
        o[i] = (SEXPR);                                                                  \
      }                                                                                  \
    } else {                                                                             \
      float x = a[0], y = b[0], r = (SEXPR);                                             \
      for (; i < n; i++) o[i] = r;                                                       \
    }                                                                                    \
  }

/* Scalar min/max mirror the vector pmin/pmax definitions so tails agree with bodies. */
F32_ROW(f32_add, wt_f32x4_add, x + y)
F32_ROW(f32_sub, wt_f32x4_sub, x - y)
F32_ROW(f32_mul, wt_f32x4_mul, x * y)
F32_ROW(f32_div, wt_f32x4_div, x / y)
F32_ROW(f32_max, wt_f32x4_max, x < y ? y : x)
F32_ROW(f32_min, wt_f32x4_min, y < x ? y : x)

static inline wt_f32x4 v_prelu(wt_f32x4 x, wt_f32x4 y) {
  return wt_f32x4_select(wt_f32x4_gt(wt_f32x4_zero(), x), wt_f32x4_mul(x, y), x);
}
F32_ROW(f32_prelu, v_prelu, x < 0.0f ? x * y : x)

static float py_fmodf(float x, float y) {
  float r = fmodf(x, y);
  if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r += y;
  return r;
}

void wt_ew_binary_f32(wt_ew_binop op, int64_t n, const float *a, int sa, const float *b, int sb,
                      float *out) {
  switch (op) {
    case WT_EW_ADD: f32_add(n, a, sa, b, sb, out); return;
    case WT_EW_SUB: f32_sub(n, a, sa, b, sb, out); return;
    case WT_EW_MUL: f32_mul(n, a, sa, b, sb, out); return;
    case WT_EW_DIV: f32_div(n, a, sa, b, sb, out); return;
    case WT_EW_MAX: f32_max(n, a, sa, b, sb, out); return;
    case WT_EW_MIN: f32_min(n, a, sa, b, sb, out); return;
    case WT_EW_PRELU: f32_prelu(n, a, sa, b, sb, out); return;
    case WT_EW_POW:
      /* x^2 (LayerNorm / MSE decompositions) and x^1 are common and exact as products. */
      if (!sb && b[0] == 2.0f) {
        f32_mul(n, a, sa, a, sa, out);
        return;
      }
      if (!sb && b[0] == 1.0f) {
        for (int64_t i = 0; i < n; i++) out[i] = a[i * sa];
        return;
      }
      for (int64_t i = 0; i < n; i++) out[i] = powf(a[i * sa], b[i * sb]);
      return;
    case WT_EW_FMOD:
      for (int64_t i = 0; i < n; i++) out[i] = fmodf(a[i * sa], b[i * sb]);
      return;
    case WT_EW_MOD:
      for (int64_t i = 0; i < n; i++) out[i] = py_fmodf(a[i * sa], b[i * sb]);
      return;
  }
}

int64_t wt_ew_ipow(int64_t a, int64_t e) {
  if (e < 0) {
    if (a == 1) return 1;
    if (a == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t base = (uint64_t)a, r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return (int64_t)r;
}

/* ---- integer arithmetic rows ----------------------------------------------------------- */

#define INT_LOOP(T, EXPR)                                        \
  do {                                                           \
    if (sa && sb) {                                              \
      for (int64_t i = 0; i < n; i++) {                          \
        T x = a[i], y = b[i];                                    \
        EXPR;                                                    \
      }                                                          \
    } else {                                                     \
      for (int64_t i = 0; i < n; i++) {                          \
        T x = a[i * sa], y = b[i * sb];                          \
        EXPR;                                                    \
      }                                                          \
    }                                                            \
  } while (0)

/* Signed overflow is computed in the unsigned type (wraps) to stay clear of UB. */
#define INT_ROW(NAME, T, UT)                                                                  \
  int NAME(wt_ew_binop op, int64_t n, const T *a, int sa, const T *b, int sb, T *o) {        \
    switch (op) {                                                                             \
      case WT_EW_ADD: INT_LOOP(T, o[i] = (T)((UT)x + (UT)y)); return 0;                       \
      case WT_EW_SUB: INT_LOOP(T, o[i] = (T)((UT)x - (UT)y)); return 0;                       \
      case WT_EW_MUL: INT_LOOP(T, o[i] = (T)((UT)x * (UT)y)); return 0;                       \
      case WT_EW_MAX: INT_LOOP(T, o[i] = x < y ? y : x); return 0;                            \
      case WT_EW_MIN: INT_LOOP(T, o[i] = y < x ? y : x); return 0;                            \
      case WT_EW_POW: INT_LOOP(T, o[i] = (T)wt_ew_ipow(x, y)); return 0;                      \
      case WT_EW_PRELU: INT_LOOP(T, o[i] = x < 0 ? (T)((UT)x * (UT)y) : x); return 0;         \
      case WT_EW_DIV:                                                                         \
        INT_LOOP(T, if (y == 0) return 1; o[i] = y == -1 ? (T)((UT)0 - (UT)x) : (T)(x / y));  \
        return 0;                                                                             \
      case WT_EW_FMOD:                                                                        \
        INT_LOOP(T, if (y == 0) return 1; o[i] = y == -1 ? 0 : (T)(x % y));                   \
        return 0;                                                                             \
      case WT_EW_MOD:                                                                         \
        INT_LOOP(T, if (y == 0) return 1; T r = y == -1 ? 0 : (T)(x % y);                     \
                 if (r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y); o[i] = r);               \
        return 0;                                                                             \
    }                                                                                         \
    return 0;                                                                                 \
  }

INT_ROW(wt_ew_binary_i32, int32_t, uint32_t)
INT_ROW(wt_ew_binary_i64, int64_t, uint64_t)

/* ---- comparisons and logic ------------------------------------------------------------- */

#define CMP_ROW(NAME, T)                                                                  \
  void NAME(wt_ew_cmpop op, int64_t n, const T *a, int sa, const T *b, int sb, uint8_t *o) { \
    switch (op) {                                                                         \
      case WT_EW_EQ: INT_LOOP(T, o[i] = x == y); return;                                  \
      case WT_EW_LT: INT_LOOP(T, o[i] = x < y); return;                                   \
      case WT_EW_GT: INT_LOOP(T, o[i] = x > y); return;                                   \
      case WT_EW_LE: INT_LOOP(T, o[i] = x <= y); return;                                  \
      case WT_EW_GE: INT_LOOP(T, o[i] = x >= y); return;                                  \
    }                                                                                     \
  }

CMP_ROW(wt_ew_compare_f32, float)
CMP_ROW(wt_ew_compare_i32, int32_t)
CMP_ROW(wt_ew_compare_i64, int64_t)

void wt_ew_compare_bool(wt_ew_cmpop op, int64_t n, const uint8_t *a, int sa, const uint8_t *b,
                        int sb, uint8_t *o) {
  switch (op) {
    case WT_EW_EQ: INT_LOOP(int, o[i] = (x != 0) == (y != 0)); return;
    case WT_EW_LT: INT_LOOP(int, o[i] = (x != 0) < (y != 0)); return;
    case WT_EW_GT: INT_LOOP(int, o[i] = (x != 0) > (y != 0)); return;
    case WT_EW_LE: INT_LOOP(int, o[i] = (x != 0) <= (y != 0)); return;
    case WT_EW_GE: INT_LOOP(int, o[i] = (x != 0) >= (y != 0)); return;
  }
}

void wt_ew_logic(wt_ew_logicop op, int64_t n, const uint8_t *a, int sa, const uint8_t *b, int sb,
                 uint8_t *o) {
  switch (op) {
    case WT_EW_AND: INT_LOOP(int, o[i] = (x != 0) & (y != 0)); return;
    case WT_EW_OR: INT_LOOP(int, o[i] = (x != 0) | (y != 0)); return;
    case WT_EW_XOR: INT_LOOP(int, o[i] = (x != 0) ^ (y != 0)); return;
  }
}
