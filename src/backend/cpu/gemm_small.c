/* The GEMM's unpacked paths: thin shapes (M or N below the register tile), where packing would
 * pad most of a tile, and small ones whose operands fit in L1, where packing costs as much as
 * it saves. They read the operands in place (a transposed B is first copied k-major) with the
 * packed path's per-element arithmetic, so a result does not depend on the path taken. */
#include "base/pool.h"
#include "backend/cpu/gemm_tile.h"

/* ---- Thin shapes: M or N below the register tile --------------------------------------
 * Packing pays off when each packed element is reused across a tile; with M or N of 1-3 it
 * is not, and the tile would be mostly padding. These paths read the operands in place. */


/* C[i, j] (strides c_rs, c_cs) = alpha * sum_k a[i * a_rs + k * a_ks] * b[k * ldb + j] + beta * C:
 * rows of b are contiguous along j, so it vectorizes along j with a in broadcasts. */
static void rows_kernel(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t a_rs,
                        int64_t a_ks, const float *b, int64_t ldb, float beta, float *c,
                        int64_t c_rs, int64_t c_cs) {
  for (int64_t i = 0; i < M; i++) {
    const float *ai = a + i * a_rs;
    float *ci = c + i * c_rs;
    int64_t j = 0;
    for (; j + 16 <= N; j += 16) {
      wt_f32x4 acc[4] = {wt_f32x4_zero(), wt_f32x4_zero(), wt_f32x4_zero(), wt_f32x4_zero()};
      for (int64_t k = 0; k < K; k++) {
        wt_f32x4 av = wt_f32x4_splat(ai[k * a_ks]);
        const float *bk = b + k * ldb + j;
        UNROLL for (int v = 0; v < 4; v++) acc[v] = wt_f32x4_fma(av, wt_f32x4_load(bk + 4 * v), acc[v]);
      }
      UNROLL for (int v = 0; v < 4; v++)
        UNROLL for (int l = 0; l < 4; l++) store_c(ci + (j + 4 * v + l) * c_cs, wt_f32x4_lane(acc[v], l), alpha, beta);
    }
    for (; j + 4 <= N; j += 4) {
      wt_f32x4 acc = wt_f32x4_zero();
      for (int64_t k = 0; k < K; k++)
        acc = wt_f32x4_fma(wt_f32x4_splat(ai[k * a_ks]), wt_f32x4_load(b + k * ldb + j), acc);
      UNROLL for (int l = 0; l < 4; l++) store_c(ci + (j + l) * c_cs, wt_f32x4_lane(acc, l), alpha, beta);
    }
    for (; j < N; j++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; k++) acc += ai[k * a_ks] * b[k * ldb + j];
      store_c(ci + j * c_cs, acc, alpha, beta);
    }
  }
}

/* C[i, j] = alpha * dot(a + i * lda, b + j * ldb) + beta * C: both operands contiguous along k. */
static void dots_kernel(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                        const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      const float *ai = a + i * lda, *bj = b + j * ldb;
      wt_f32x4 s0 = wt_f32x4_zero(), s1 = wt_f32x4_zero();
      int64_t k = 0;
      for (; k + 8 <= K; k += 8) {
        s0 = wt_f32x4_fma(wt_f32x4_load(ai + k), wt_f32x4_load(bj + k), s0);
        s1 = wt_f32x4_fma(wt_f32x4_load(ai + k + 4), wt_f32x4_load(bj + k + 4), s1);
      }
      float acc = wt_f32x4_hsum(wt_f32x4_add(s0, s1));
      for (; k < K; k++) acc += ai[k] * bj[k];
      store_c(c + i * ldc + j, acc, alpha, beta);
    }
}

/* ---- Small shapes: no packing ---------------------------------------------------------
 * When all of A, B and C fit in L1 (attention heads, small layers), packing costs as much as
 * it saves. op(B) must be k-major here (B, or a transposed copy): the tiles then read B rows in
 * place and A by scalars, with the same k order and arithmetic as micro_kernel, so the result
 * does not depend on the path. */
/* Largest M * N * K taken unpacked, with K <= 256 (KC was 256 when this was measured; a deeper
 * B no longer fits in L1 next to A and C). Measured in Node 20 (tests/bench shapes): up to
 * 128 x 128 x 64 the direct tiles beat packing (16 x 12 x 16: 30 vs 16 GFLOP/s, 48 x 32 x 32:
 * 37 vs 31, 128 x 128 x 64: 39 vs 37); with op(A) = A^T, whose rows are strided, only up to a
 * quarter of that (128 x 64 x 128 TN: 35 vs 36), except on the relaxed-SIMD build's 6-row
 * tiles (DIRECT_TN_MAX: 128 x 64 x 128 TN 57-58 packed, 63-65 direct; the SIMD128 build is even
 * at 57-58 either way). */
#ifndef WT_GEMM_DIRECT_MAX
#define WT_GEMM_DIRECT_MAX (128 * 128 * 64)
#endif
#define DIRECT_KMAX (KC < 256 ? KC : 256)
#define DIRECT_TN_MAX (MR_WIDE ? WT_GEMM_DIRECT_MAX : WT_GEMM_DIRECT_MAX / 4)

/* C[ROWS x (4 * NVEC)] tile: a row i, step k at a[i * a_rs + k * a_ks]; b row k at b + k * ldb. */
#define DIRECT_TILE(ROWS, NVEC)                                                                     \
  do {                                                                                          \
    wt_f32x4 acc[ROWS][NVEC];                                                                   \
    UNROLL for (int i = 0; i < ROWS; i++) UNROLL for (int v = 0; v < NVEC; v++) acc[i][v] =       \
        wt_f32x4_zero();                                                                        \
    const float *ap[ROWS], *bp = b + j;                                                         \
    UNROLL for (int i = 0; i < ROWS; i++) ap[i] = a + i * a_rs;                                   \
    for (int64_t k = 0; k < K; k++) {                                                           \
      wt_f32x4 bv[NVEC];                                                                        \
      UNROLL for (int v = 0; v < NVEC; v++) bv[v] = wt_f32x4_load(bp + 4 * v);                  \
      UNROLL for (int i = 0; i < ROWS; i++) {                                                     \
        wt_f32x4 ai = wt_f32x4_splat(*ap[i]);                                                   \
        ap[i] += a_ks;                                                                          \
        UNROLL for (int v = 0; v < NVEC; v++) acc[i][v] = wt_f32x4_fma(ai, bv[v], acc[i][v]);   \
      }                                                                                         \
      bp += ldb;                                                                                \
    }                                                                                           \
    UNROLL for (int i = 0; i < ROWS; i++) UNROLL for (int v = 0; v < NVEC; v++) {                 \
      float *p = c + i * ldc + j + 4 * v;                                                       \
      wt_f32x4 r = wt_f32x4_mul(va, acc[i][v]);                                                 \
      if (beta != 0.0f) r = wt_f32x4_add(r, wt_f32x4_mul(vb, wt_f32x4_load(p)));                \
      wt_f32x4_store(p, r);                                                                     \
    }                                                                                           \
  } while (0)

/* C[i, j] for j < N, ROWS rows. N not a multiple of 4 (N >= 4, beta == 0 only: see
 * direct_gemm): the last tile is the 4 columns ending at N, overlapping the tile before it,
 * whose columns it writes again with the same values. */
#define DIRECT_ROWS(ROWS)                                                                       \
  do {                                                                                          \
    wt_f32x4 va = wt_f32x4_splat(alpha), vb = wt_f32x4_splat(beta);                             \
    int64_t j = 0;                                                                              \
    for (; j + NR <= N; j += NR) DIRECT_TILE(ROWS, NV);                                         \
    for (; j + 4 <= N; j += 4) DIRECT_TILE(ROWS, 1);                                            \
    if (j < N) {                                                                                \
      j = N - 4;                                                                                \
      DIRECT_TILE(ROWS, 1);                                                                     \
    }                                                                                           \
  } while (0)

typedef void direct_rows_fn(int64_t N, int64_t K, float alpha, const float *restrict a,
                            int64_t a_rs, int64_t a_ks, const float *restrict b, int64_t ldb,
                            float beta, float *restrict c, int64_t ldc);

__attribute__((noinline)) static void direct_rows(int64_t N, int64_t K, float alpha,
                                                  const float *restrict a, int64_t a_rs,
                                                  int64_t a_ks, const float *restrict b,
                                                  int64_t ldb, float beta, float *restrict c,
                                                  int64_t ldc) {
  DIRECT_ROWS(MR);
}

#if MR_WIDE
/* The relaxed-SIMD build's taller tile (gemm_tile.h): 12 accumulators keep both FMA pipes busy
 * where MR rows' 8 only just cover their latency (wasm FMA build in Node 20, ViT's heads: 65 x 65
 * x 48 NT 49 -> 54-57 GFLOP/s, 65 x 48 x 65 NN 55 -> 61-64; the same bits). */
__attribute__((noinline)) static void direct_rows_w(int64_t N, int64_t K, float alpha,
                                                    const float *restrict a, int64_t a_rs,
                                                    int64_t a_ks, const float *restrict b,
                                                    int64_t ldb, float beta, float *restrict c,
                                                    int64_t ldc) {
  DIRECT_ROWS(MR_WIDE);
}
#endif

/* The last r < 4 columns of C for G groups of 4 rows (the last one with only `rows` valid):
 * vectors run along M, C^T[j, i..i+3] += splat(op(B)[k, j]) * op(A)[i..i+3, k], so no lane
 * is padding (a 4-wide tile over 2 valid columns would waste half its work). at holds op(A)'s
 * rows transposed, 4 * G floats per k. Every lane still sums its k products in order with a
 * mul and an add, as the other tiles do. */
#define TAIL_TILE(G, R)                                                                         \
  do {                                                                                          \
    wt_f32x4 acc[G][R];                                                                         \
    UNROLL for (int g = 0; g < G; g++) UNROLL for (int j = 0; j < R; j++) acc[g][j] =           \
        wt_f32x4_zero();                                                                        \
    const float *bp = b, *ap = at;                                                              \
    for (int64_t k = 0; k < K; k++) {                                                           \
      wt_f32x4 bv[R];                                                                           \
      UNROLL for (int j = 0; j < R; j++) bv[j] = wt_f32x4_splat(bp[j]);                         \
      UNROLL for (int g = 0; g < G; g++) {                                                      \
        wt_f32x4 av = wt_f32x4_load(ap + 4 * g);                                                \
        UNROLL for (int j = 0; j < R; j++) acc[g][j] = wt_f32x4_fma(av, bv[j], acc[g][j]);      \
      }                                                                                         \
      bp += ldb;                                                                                \
      ap += 4 * G;                                                                              \
    }                                                                                           \
    UNROLL for (int g = 0; g < G; g++) UNROLL for (int j = 0; j < R; j++) {                     \
      _Alignas(16) float v[4];                                                                  \
      wt_f32x4_store(v, acc[g][j]);                                                             \
      for (int64_t l = 0; l < 4 && 4 * g + l < rows; l++)                                       \
        store_c(c + (4 * g + l) * ldc + j, v[l], alpha, beta);                                  \
    }                                                                                           \
  } while (0)

#define TAIL_SWITCH(G)                  \
  do {                                  \
    if (r == 1) TAIL_TILE(G, 1);        \
    else if (r == 2) TAIL_TILE(G, 2);   \
    else TAIL_TILE(G, 3);               \
  } while (0)

/* C[0..M, 0..r] for r < 4, op(A) = A (rows contiguous along k, lda apart); op(B)'s columns
 * are read in place (row k at b + k * ldb). 8 rows per pass: 2r accumulators (16 rows for
 * r = 1 gained 1-4% for a 16 KiB stack buffer: not kept). at: 8 KiB of stack, K <= 256. */
__attribute__((noinline)) static void direct_tail(int64_t M, int64_t K, float alpha,
                                                  const float *restrict a, int64_t lda,
                                                  const float *restrict b, int64_t ldb, int64_t r,
                                                  float beta, float *restrict c, int64_t ldc) {
  _Alignas(16) float at[DIRECT_KMAX * 8];
  int64_t i = 0, rows = 8;
  for (; i + 8 <= M; i += 8, a += 8 * lda, c += 8 * ldc) {
    interleave4(at, 8, a, lda, K);
    interleave4(at + 4, 8, a + 4 * lda, lda, K);
    TAIL_SWITCH(2);
  }
  if (i < M) {
    rows = M - i;
    if (rows >= 4) {
      interleave4(at, 4, a, lda, K);
      TAIL_SWITCH(1);
      a += 4 * lda;
      c += 4 * ldc;
      rows -= 4;
    }
    if (rows > 0) {
      for (int64_t k = 0; k < K; k++) /* zero rows past M: their lanes are not stored */
        for (int64_t t = 0; t < 4; t++) at[k * 4 + t] = t < rows ? a[t * lda + k] : 0.0f;
      TAIL_SWITCH(1);
    }
  }
}

/* op(B) = B is k-major (row k at B + k * ldb); when op(B) = B^T the caller made it so. The last
 * N % 4 columns go by vectors along M: with op(A) = A^T, rows of A are contiguous along M and
 * rows_kernel computes C^T = op(B)^T A^T in place; otherwise direct_tail transposes A first. */
static void direct_gemm(int trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                        int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                        int64_t ldc) {
  int64_t a_rs = trans_a ? 1 : lda, a_ks = trans_a ? lda : 1;
  int64_t n4 = N & ~(int64_t)3, r = N - n4;
  int64_t i = 0;
  if (beta == 0.0f && M >= MR && N >= 4) {
    /* C not read (every MatMul): the last rows (M % MR) and columns (N % 4) are tiles that end
     * at M and N, overlapping the full ones, whose elements they write again with the same
     * value (the same products in the same order). Vector tiles instead of a row at a time and
     * a transposed copy of A for the columns: attention's 65 x 65 heads at 48 and 65 rows. */
    direct_rows_fn *rows_fn = direct_rows;
    int64_t rows = MR;
#if MR_WIDE
    if (M >= MR_WIDE) rows_fn = direct_rows_w, rows = MR_WIDE;
#endif
    for (; i < M; i += rows) {
      int64_t i0 = i + rows <= M ? i : M - rows;
      rows_fn(N, K, alpha, A + i0 * a_rs, a_rs, a_ks, B, ldb, beta, C + i0 * ldc, ldc);
    }
    return;
  }
  if (n4 > 0) {
    for (; i + MR <= M; i += MR)
      direct_rows(n4, K, alpha, A + i * a_rs, a_rs, a_ks, B, ldb, beta, C + i * ldc, ldc);
    if (i < M) rows_kernel(M - i, n4, K, alpha, A + i * a_rs, a_rs, a_ks, B, ldb, beta, C + i * ldc, ldc, 1);
  }
  if (r == 0) return;
  if (trans_a) /* C^T[j, i] = sum_k B[k, n4 + j] A[k, i]. */
    rows_kernel(r, M, K, alpha, B + n4, 1, ldb, A, lda, beta, C + n4, 1, ldc);
  else
    direct_tail(M, K, alpha, A, lda, B + n4, ldb, r, beta, C + n4, ldc);
}

/* Which thin kernel takes a shape (0: none). */
enum { THIN_NONE, THIN_ROWS, THIN_ROWS_T, THIN_DOTS };
static int thin_kind(int trans_a, int trans_b, int64_t M, int64_t N, int64_t lda, int64_t ldb) {
  if (M < MR && !trans_b) return THIN_ROWS;  /* rows of op(B) = B are contiguous: along N */
  if (N < 4 && trans_a) return THIN_ROWS_T; /* C^T = op(B)^T A': rows of A contiguous along M */
  int64_t a_ks = trans_a ? lda : 1, b_ks = trans_b ? 1 : ldb;
  /* Rows of op(A) and columns of op(B) contiguous along k (e.g. matrix x vector). */
  if ((M < MR || N < 4) && a_ks == 1 && b_ks == 1) return THIN_DOTS;
  return THIN_NONE;
}

/* Handles thin shapes without packing; returns 0 when the shape should take the packed path. */
static int thin_gemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc) {
  switch (thin_kind(trans_a, trans_b, M, N, lda, ldb)) {
  case THIN_ROWS:
    rows_kernel(M, N, K, alpha, A, trans_a ? 1 : lda, trans_a ? lda : 1, B, ldb, beta, C, ldc, 1);
    return 1;
  case THIN_ROWS_T:
    rows_kernel(N, M, K, alpha, B, trans_b ? ldb : 1, trans_b ? 1 : ldb, A, lda, beta, C, 1, ldc);
    return 1;
  case THIN_DOTS:
    dots_kernel(M, N, K, alpha, A, trans_a ? 1 : lda, B, trans_b ? ldb : 1, beta, C, ldc);
    return 1;
  default:
    return 0;
  }
}

/* Small enough for the direct tiles (see WT_GEMM_DIRECT_MAX). */
static int direct_fits(int trans_a, int64_t M, int64_t N, int64_t K) {
  return K <= DIRECT_KMAX && K * N <= KC * NC &&
         M * N * K <= (trans_a ? DIRECT_TN_MAX : WT_GEMM_DIRECT_MAX);
}

int wt_gemm_unpacked_shape(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                           int64_t lda, int64_t ldb) {
  return thin_kind(trans_a, trans_b, M, N, lda, ldb) != THIN_NONE || direct_fits(trans_a, M, N, K);
}

/* Fewest multiply-adds for which the unpacked (direct) path splits its rows over threads. */
#ifndef WT_GEMM_DIRECT_THREAD_MIN
#define WT_GEMM_DIRECT_THREAD_MIN ((int64_t)1 << 18)
#endif

typedef struct direct_job {
  int trans_a, relu;
  int64_t M, N, K;
  float alpha, beta;
  const float *A;
  int64_t lda;
  const float *B; /* k-major */
  int64_t ldb;
  float *C;
  int64_t ldc, rows;
} direct_job;

static void direct_task(void *ctx, int64_t block, int32_t thread) {
  (void)thread;
  const direct_job *d = ctx;
  int64_t i0 = block * d->rows, m = min64(d->rows, d->M - i0);
  const float *a = d->A + (d->trans_a ? i0 : i0 * d->lda);
  float *c = d->C + i0 * d->ldc;
  direct_gemm(d->trans_a, m, d->N, d->K, d->alpha, a, d->lda, d->B, d->ldb, d->beta, c, d->ldc);
  if (d->relu) relu_block(c, m, d->N, d->ldc);
}

int wt_gemm_unpacked(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc, int relu) {
  if (thin_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) {
    if (relu) relu_block(C, M, N, ldc);
    return 1;
  }
  if (direct_fits(trans_a, M, N, K)) {
    if (trans_b) {
      /* B is [N, K]: a k-major copy (K x N) for the tiles; 4 rows of B per pass. */
      float *pa, *copy;
      wt_gemm_thread_buffers(wt_pool_thread_index(), &pa, &copy);
      int64_t j = 0;
      for (; j + 4 <= N; j += 4) interleave4(copy + j, N, B + j * ldb, ldb, K);
      for (; j < N; j++)
        for (int64_t k = 0; k < K; k++) copy[k * N + j] = B[j * ldb + k];
      B = copy;
      ldb = N;
    }
    if (M >= 16 && ((M * N * K >= WT_GEMM_DIRECT_THREAD_MIN && wt_pool_threads() > 1) ||
                    wt_pool_split_small())) {
      /* Blocks of rows (a multiple of 8, at most WT_GEMM_BLOCKS of them): every element gets
       * the same tile arithmetic whichever rows it shares a block with. */
      int64_t groups = (M + 7) / 8, per = (groups + WT_GEMM_BLOCKS - 1) / WT_GEMM_BLOCKS;
      direct_job d = {trans_a, relu, M, N, K, alpha, beta, A, lda, B, ldb, C, ldc, 8 * per};
      wt_parallel_for((M + d.rows - 1) / d.rows, direct_task, &d);
      return 1;
    }
    direct_gemm(trans_a, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (relu) relu_block(C, M, N, ldc);
    return 1;
  }
  return 0;
}
