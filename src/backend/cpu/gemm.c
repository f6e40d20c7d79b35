/* Packed, cache-blocked, register-blocked SGEMM on the simd.h 4 x f32 vocabulary.
 *
 * Structure (the classic Goto/BLIS loop nest):
 *   jc: NC columns of op(B) ........ B block (KC x NC) packed once per (jc, pc), lives in L2
 *   pc: KC deep slice of K ........... first slice applies the caller's beta, later ones beta = 1
 *   ic: MC rows of op(A) ............. A block (MC x KC) packed, lives in L2
 *   jr / ir: NR x MR register tiles .. one B micro-panel (KC x NR) stays in L1 across ir
 * Transposes are absorbed by the packing routines, so the microkernel only ever sees
 * k-major micro-panels: A as MR floats per k, B as NR floats per k. Edge tiles are packed
 * with zero padding and computed into a local tile, then merged into C (a last panel of <= 4
 * columns uses an MR x 4 kernel). Thin shapes (M < MR, N < 4) skip packing, and so do small
 * ones that fit in L1: gemm_small.c. The tile and block sizes are in gemm_tile.h; the
 * relaxed-SIMD build has a second, 6-row tile for large products (tile_rows). Products of at
 * most 32 rows run transposed with the weight read in place (thin_m, gemm_job.ct). Tile, path
 * and loop order never change an element's sum: the bits are the same on every path.
 *
 * The microkernel is a separate noinline function: V8 tiers functions up individually, so a
 * small hot function called many times is optimized early, and the register allocator sees
 * one loop with MR * NR / 4 accumulators (8 here; 16 spill in V8 on x64).
 *
 * No allocation: the caller's packing buffers are static, a pool worker's are its scratch
 * (allocated when the pool starts). Large shapes are split over blocks of C on the pool
 * (packed_task); nothing in webtrain calls wt_sgemm from two threads outside the pool. */
#include "backend/cpu/gemm.h"

#include "base/half.h"
#include "base/pool.h"
#include "backend/cpu/gemm_tile.h"



/* C[ROWS x NR] (row stride ldc) = alpha * sum_k a_k b_k^T + beta * C; beta == 0: C not read.
 * Value i of step k of A at a[i * A_RS] with a advancing A_KS per step (a packed panel: A_KS =
 * MR, A_RS = 1); b: kc steps of NR floats. A macro, so that each kernel below compiles to its own
 * loop (an inlined function with stride parameters made V8's code for the packed kernel 30%
 * slower). */
#define TILE_BODY(ROWS, A_KS, A_RS)                                                                \
  do {                                                                                           \
    wt_f32x4 acc[ROWS][NV];                                                                        \
    UNROLL for (int i = 0; i < ROWS; i++) UNROLL for (int v = 0; v < NV; v++) acc[i][v] =          \
        wt_f32x4_zero();                                                                         \
    KUNROLL for (int64_t k = 0; k < kc; k++) {                                                   \
      wt_f32x4 bv[NV];                                                                           \
      UNROLL for (int v = 0; v < NV; v++) bv[v] = wt_f32x4_load(b + 4 * v);                      \
      UNROLL for (int i = 0; i < ROWS; i++) {                                                      \
        wt_f32x4 ai = wt_f32x4_splat(a[i * (A_RS)]);                                             \
        UNROLL for (int v = 0; v < NV; v++) acc[i][v] = wt_f32x4_fma(ai, bv[v], acc[i][v]);      \
      }                                                                                          \
      a += (A_KS);                                                                               \
      b += NR;                                                                                   \
    }                                                                                            \
    wt_f32x4 va = wt_f32x4_splat(alpha);                                                         \
    if (beta == 0.0f) {                                                                          \
      UNROLL for (int i = 0; i < ROWS; i++) UNROLL for (int v = 0; v < NV; v++)                    \
        wt_f32x4_store(c + i * ldc + 4 * v, wt_f32x4_mul(va, acc[i][v]));                        \
    } else {                                                                                     \
      wt_f32x4 vb = wt_f32x4_splat(beta);                                                        \
      UNROLL for (int i = 0; i < ROWS; i++) UNROLL for (int v = 0; v < NV; v++) {                  \
        float *p = c + i * ldc + 4 * v;                                                          \
        wt_f32x4_store(p, wt_f32x4_add(wt_f32x4_mul(va, acc[i][v]),                              \
                                       wt_f32x4_mul(vb, wt_f32x4_load(p))));                     \
      }                                                                                          \
    }                                                                                            \
  } while (0)

/* a: kc steps of MR floats (a packed panel). */
__attribute__((noinline)) static void micro_kernel(int64_t kc, const float *restrict a,
                                                   const float *restrict b, float *restrict c,
                                                   int64_t ldc, float alpha, float beta) {
  TILE_BODY(MR, MR, 1);
}

/* op(A) = A^T read in place (see a_inplace below): the MR values of step k at a + k * lda, as
 * in a packed panel but lda apart. The same products in the same order as micro_kernel. */
__attribute__((noinline)) static void micro_kernel_at(int64_t kc, const float *restrict a,
                                                      int64_t lda, const float *restrict b,
                                                      float *restrict c, int64_t ldc, float alpha,
                                                      float beta) {
  TILE_BODY(MR, lda, 1);
}

/* op(A) = A read in place: row i of the tile at a + i * lda, contiguous along k (the weight of a
 * product with few rows computed transposed, see thin_m_job). Same products, same order. */
__attribute__((noinline)) static void micro_kernel_ar(int64_t kc, const float *restrict a,
                                                      int64_t lda, const float *restrict b,
                                                      float *restrict c, int64_t ldc, float alpha,
                                                      float beta) {
  TILE_BODY(MR, 1, lda);
}

#if MR_WIDE
/* The taller tile (MR_WIDE rows, see gemm_tile.h), packed panels only. */
__attribute__((noinline)) static void micro_kernel_w(int64_t kc, const float *restrict a,
                                                     const float *restrict b, float *restrict c,
                                                     int64_t ldc, float alpha, float beta) {
  TILE_BODY(MR_WIDE, MR_WIDE, 1);
}

/* The first MR rows of a taller tile's packed panel (steps MR_WIDE apart): the last row tile
 * of 130 rows in 6-row tiles is 4 rows, computed as such instead of as a 6-row tile into a local
 * buffer merged row by row (ViT: one tile in 22 of every column panel). Same products, order. */
__attribute__((noinline)) static void micro_kernel_w4(int64_t kc, const float *restrict a,
                                                      const float *restrict b, float *restrict c,
                                                      int64_t ldc, float alpha, float beta) {
  TILE_BODY(MR, MR_WIDE, 1);
}
#endif

/* The full tile of mr rows from a packed panel. */
static inline void tile_packed(int mr, int64_t kc, const float *a, const float *b, float *c,
                               int64_t ldc, float alpha, float beta) {
#if MR_WIDE
  if (mr == MR_WIDE) {
    micro_kernel_w(kc, a, b, c, ldc, alpha, beta);
    return;
  }
#endif
  (void)mr;
  micro_kernel(kc, a, b, c, ldc, alpha, beta);
}

/* MR x 4 variant for a last column panel with at most 4 valid columns (N = 10 output layers):
 * reads the first vector of each packed B step and skips the padding. Writes t[MR x 4]. */
__attribute__((noinline)) static void micro_kernel_n4(int64_t kc, const float *restrict a,
                                                      const float *restrict b, float *restrict t) {
  wt_f32x4 acc[MR];
  UNROLL for (int i = 0; i < MR; i++) acc[i] = wt_f32x4_zero();
  for (int64_t k = 0; k < kc; k++) {
    wt_f32x4 bv = wt_f32x4_load(b);
    UNROLL for (int i = 0; i < MR; i++) acc[i] = wt_f32x4_fma(wt_f32x4_splat(a[i]), bv, acc[i]);
    a += MR;
    b += NR;
  }
  UNROLL for (int i = 0; i < MR; i++) wt_f32x4_store(t + 4 * i, acc[i]);
}

/* Partial tile (m < mr or n < NR): full tile into a local buffer, then merge the valid part. */
static void edge_tile(int mr, int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                      int64_t m, int64_t n, float alpha, float beta) {
  _Alignas(16) float t[MR_MAX * NR];
  int64_t ldt = NR;
  if (n <= 4 && mr == MR) {
    micro_kernel_n4(kc, a, b, t);
    ldt = 4;
  } else {
    tile_packed(mr, kc, a, b, t, NR, 1.0f, 0.0f);
  }
  for (int64_t i = 0; i < m; i++) {
    float *ci = c + i * ldc;
    const float *ti = t + i * ldt;
    if (beta == 0.0f)
      for (int64_t j = 0; j < n; j++) ci[j] = alpha * ti[j];
    else
      for (int64_t j = 0; j < n; j++) ci[j] = alpha * ti[j] + beta * ci[j];
  }
}

/* Packs n columns x kc rows of a k-major source (row k at src + k * ld) into w-wide micro-panels
 * (panel p at dst + p * w * kc, zero-padded past n). Columns go 16 at a time (a 64-byte line,
 * several panels when w < 16): panel by panel, each w-float piece of a row would use part of
 * a line, and with a power-of-two ld (n = 512, 1024) the kc rows all map to one L1 set, so the
 * next panel fetched the same lines again from L2. */
static inline void pack_kmajor(const float *src, int64_t ld, int64_t kc, int64_t n, int w,
                               float *restrict dst) {
  int64_t j = 0;
  if (w % 4 == 0 && 16 % w == 0)
    for (; j + 16 <= n; j += 16)
      for (int64_t k = 0; k < kc; k++)
        UNROLL for (int v = 0; v < 16; v += 4)
          wt_f32x4_store(dst + (j + v) / w * w * kc + k * w + v % w, wt_f32x4_load(src + k * ld + j + v));
  if (w == 6) /* the taller tile's panels (MR_WIDE): two per 12 columns, a vector and a pair each */
    for (; j + 12 <= n; j += 12)
      for (int64_t k = 0; k < kc; k++) {
        const float *sk = src + k * ld + j;
        wt_f32x4 v0 = wt_f32x4_load(sk), v1 = wt_f32x4_load(sk + 4), v2 = wt_f32x4_load(sk + 8);
        float *d0 = dst + j * kc + k * 6, *d1 = d0 + 6 * kc;
        wt_f32x4_store(d0, v0);
        wt_f32x4_store_lo2(d0 + 4, v1);
        wt_f32x4_store_hi2(d1, v1);
        wt_f32x4_store(d1 + 2, v2);
      }
  if (w % 4 == 0)
    for (; j + w <= n; j += w)
      for (int64_t k = 0; k < kc; k++)
        UNROLL for (int v = 0; v < w; v += 4)
          wt_f32x4_store(dst + j * kc + k * w + v, wt_f32x4_load(src + k * ld + j + v));
  for (; j < n; j += w) {
    int64_t m = min64(w, n - j);
    float *d = dst + j * kc;
    for (int64_t k = 0; k < kc; k++) {
      const float *s = src + k * ld + j;
      int64_t i = 0;
      for (; i < m; i++) d[k * w + i] = s[i];
      for (; i < w; i++) d[k * w + i] = 0.0f;
    }
  }
}

/* A full 6-row panel (the taller tile's) of rows s, ld apart, kc long: rows 0-3 as in
 * interleave4, rows 4-5 transposed with themselves and stored two floats a k. */
static void pack_rows6(const float *s, int64_t ld, int64_t kc, float *restrict dst) {
  const float *s0 = s, *s1 = s + ld, *s2 = s + 2 * ld, *s3 = s + 3 * ld, *s4 = s + 4 * ld, *s5 = s + 5 * ld;
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    wt_f32x4 r0 = wt_f32x4_load(s0 + k), r1 = wt_f32x4_load(s1 + k);
    wt_f32x4 r2 = wt_f32x4_load(s2 + k), r3 = wt_f32x4_load(s3 + k);
    wt_f32x4 r4 = wt_f32x4_load(s4 + k), r5 = wt_f32x4_load(s5 + k);
    wt_f32x4 e01 = wt_f32x4_even(r0, r1), e23 = wt_f32x4_even(r2, r3);
    wt_f32x4 o01 = wt_f32x4_odd(r0, r1), o23 = wt_f32x4_odd(r2, r3);
    wt_f32x4 e45 = wt_f32x4_even(r4, r5), o45 = wt_f32x4_odd(r4, r5); /* {r4[0], r4[2], r5[0], r5[2]} ... */
    wt_f32x4 e = wt_f32x4_even(e45, e45), o = wt_f32x4_even(o45, o45);   /* {r4[0], r5[0], r4[0], r5[0]} ... */
    wt_f32x4 e2 = wt_f32x4_odd(e45, e45), o2 = wt_f32x4_odd(o45, o45);   /* {r4[2], r5[2], ...} {r4[3], r5[3], ...} */
    float *d = dst + k * 6;
    wt_f32x4_store(d, wt_f32x4_even(e01, e23));
    wt_f32x4_store_lo2(d + 4, e);
    wt_f32x4_store(d + 6, wt_f32x4_even(o01, o23));
    wt_f32x4_store_lo2(d + 10, o);
    wt_f32x4_store(d + 12, wt_f32x4_odd(e01, e23));
    wt_f32x4_store_lo2(d + 16, e2);
    wt_f32x4_store(d + 18, wt_f32x4_odd(o01, o23));
    wt_f32x4_store_lo2(d + 22, o2);
  }
  for (; k < kc; k++) {
    float *d = dst + k * 6;
    d[0] = s0[k];
    d[1] = s1[k];
    d[2] = s2[k];
    d[3] = s3[k];
    d[4] = s4[k];
    d[5] = s5[k];
  }
}

/* Packs `rows` rows of src (each contiguous along k, ld apart) into w-wide micro-panels: the
 * w values of one k side by side, zero-padding rows past the last. */
static void pack_rows(const float *src, int64_t ld, int64_t rows, int64_t kc, int64_t w, float *dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += w) {
    int64_t m = min64(w, rows - r0);
    const float *s = src + r0 * ld;
    if (w == 6 && m == 6) {
      pack_rows6(s, ld, kc, dst);
      dst += w * kc;
      continue;
    }
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) interleave4(dst + i, w, s + i * ld, ld, kc);
    for (; i < m; i++)
      for (int64_t k = 0; k < kc; k++) dst[k * w + i] = s[i * ld + k];
    for (; i < w; i++)
      for (int64_t k = 0; k < kc; k++) dst[k * w + i] = 0.0f;
    dst += w * kc;
  }
}

/* Packs op(A)[i0 .. i0+mc, k0 .. k0+kc] into mr-row micro-panels, zero-padding rows past mc. */
static void pack_a(int trans_a, const float *A, int64_t lda, int64_t i0, int64_t k0, int64_t mc,
                   int64_t kc, int mr, float *dst) {
  if (trans_a) pack_kmajor(A + k0 * lda + i0, lda, kc, mc, mr, dst); /* mr values of a k adjacent */
  else pack_rows(A + i0 * lda + k0, lda, mc, kc, mr, dst);          /* rows contiguous along k */
}

/* Packs op(B)[k0 .. k0+kc, j0 .. j0+nc] into NR-column micro-panels, zero-padding past nc. */
static void pack_b(int trans_b, const float *B, int64_t ldb, int64_t k0, int64_t j0, int64_t kc,
                   int64_t nc, float *dst) {
  if (!trans_b) pack_kmajor(B + k0 * ldb + j0, ldb, kc, nc, NR, dst); /* NR values of a k adjacent */
  else pack_rows(B + j0 * ldb + k0, ldb, nc, kc, NR, dst);           /* B^T: rows along k */
}

/* C = beta * C (beta == 0: C = 0 without reading it). */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    if (beta == 0.0f)
      for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
    else if (beta != 1.0f)
      for (int64_t j = 0; j < N; j++) c[j] *= beta;
  }
}

static void sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                  int64_t ldc, int relu);

void wt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc) {
  sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 0);
}

void wt_sgemm_relu(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                   int64_t ldc) {
  sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 1);
}

/* ---- The packed path, split over blocks of C for the thread pool ------------------------
 * Every element of C gets the same arithmetic whichever block (and thread) computes it: the K
 * slices are the global KC slices, and the full and edge tiles sum the same products in the same
 * order (edge_tile is micro_kernel into a local tile, then the same alpha / beta merge). So the
 * block grid may be anything; it is a function of the shape alone, so the same blocks run at
 * any thread count. Each block packs its own rows of op(A) and columns of op(B) into its
 * thread's buffers: thread 0 (the caller) uses the static ones, workers their pool scratch. */
typedef struct gemm_job {
  int trans_a, trans_b, relu;
  int64_t M, N, K;
  float alpha, beta;
  const float *A, *B;
  int64_t lda, ldb, ldc;
  float *C;
  int64_t mb, nb;      /* block of C: mb rows (a multiple of MC or all of M), nb columns */
  int64_t mblocks;     /* blocks along M */
  int half;            /* WT_GEMM_A_HALF | WT_GEMM_B_HALF: A / B hold float16 (else float) */
  const float *Bp;     /* op(B) prepacked (wt_gemm_pack_b), or NULL: packed per block */
  /* op(A) = A^T read in place by full tiles instead of packed (float A, one column panel:
   * N <= NR, where each packed value would be read once: conv's dX on small grids, whose A is
   * the weight). Edge tiles pack their rows into a local panel. Not for op(A) = A: reading 4
   * rows in place (4 pointers) ran slower in V8 than packing them; but see ct. */
  int a_inplace;
  /* C is stored transposed: element (i, j) of this job's C at C[j * ldc + i]. A product with few
   * rows computed as C^T = op(B)^T op(A)^T (thin_m_job): op(A) here is the caller's op(B),
   * read in place (a_inplace, either orientation: each value is read once from memory instead
   * of being packed and then read once or a few times), op(B) the caller's op(A), packed. */
  int ct;
  int mr; /* register tile rows: MR, or MR_WIDE (tile_rows) */
} gemm_job;

/* ---- float16 operands (frozen weights): widened while their panels are packed, so the
 * microkernel, the blocking and the block split are the float path's (bit-identical at any
 * thread count) and no float copy of the operand is ever made. Always the packed path: the
 * thin and direct paths read their operands in place. */

/* pack_kmajor from a float16 source. */
static void pack_kmajor_h(const uint16_t *src, int64_t ld, int64_t kc, int64_t n, int w,
                          float *restrict dst) {
  for (int64_t j = 0; j < n; j += w) {
    int64_t m = min64(w, n - j);
    float *d = dst + j * kc;
    for (int64_t k = 0; k < kc; k++) {
      const uint16_t *s = src + k * ld + j;
      int64_t i = 0;
      for (; i < m; i++) d[k * w + i] = wt_f16_to_f32(s[i]);
      for (; i < w; i++) d[k * w + i] = 0.0f;
    }
  }
}

/* pack_rows from a float16 source: row r read along k, written w apart. */
static void pack_rows_h(const uint16_t *src, int64_t ld, int64_t rows, int64_t kc, int64_t w,
                        float *restrict dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += w) {
    int64_t m = min64(w, rows - r0);
    for (int64_t i = 0; i < w; i++) {
      const uint16_t *s = src + (r0 + i) * ld;
      if (i < m)
        for (int64_t k = 0; k < kc; k++) dst[k * w + i] = wt_f16_to_f32(s[k]);
      else
        for (int64_t k = 0; k < kc; k++) dst[k * w + i] = 0.0f;
    }
    dst += w * kc;
  }
}

/* op(A)[i0 .. i0+mc, k0 .. k0+kc] of g into mr-row micro-panels, widening a float16 A. */
static void pack_a_job(const gemm_job *g, int64_t i0, int64_t k0, int64_t mc, int64_t kc,
                       float *dst) {
  if (!(g->half & WT_GEMM_A_HALF)) {
    pack_a(g->trans_a, g->A, g->lda, i0, k0, mc, kc, g->mr, dst);
    return;
  }
  const uint16_t *A = (const uint16_t *)(const void *)g->A;
  if (g->trans_a) pack_kmajor_h(A + k0 * g->lda + i0, g->lda, kc, mc, g->mr, dst);
  else pack_rows_h(A + i0 * g->lda + k0, g->lda, mc, kc, g->mr, dst);
}

/* op(B)[k0 .. k0+kc, j0 .. j0+nc] of g into NR-column micro-panels, widening a float16 B. */
static void pack_b_job(const gemm_job *g, int64_t k0, int64_t j0, int64_t kc, int64_t nc,
                       float *dst) {
  if (g->Bp) return; /* b_slice reads the prepacked panels instead */
  if (!(g->half & WT_GEMM_B_HALF)) {
    pack_b(g->trans_b, g->B, g->ldb, k0, j0, kc, nc, dst);
    return;
  }
  const uint16_t *B = (const uint16_t *)(const void *)g->B;
  if (!g->trans_b) pack_kmajor_h(B + k0 * g->ldb + j0, g->ldb, kc, nc, NR, dst);
  else pack_rows_h(B + j0 * g->ldb + k0, g->ldb, nc, kc, NR, dst);
}

/* Where the packed slice of op(B) for rows k0.. and columns j0.. is: the block's buffer, or
 * in the prepacked copy (slice k0 starts at k0 * Npad, its panels kc * NR floats each). */
static const float *b_slice(const gemm_job *g, int64_t k0, int64_t j0, int64_t kc, const float *buf_b) {
  if (!g->Bp) return buf_b;
  return g->Bp + k0 * ((g->N + NR - 1) / NR * NR) + j0 * kc;
}

/* C[row .. row+m, col .. col+n] (C transposed: see ct) = alpha * the tile + beta * C, from t
 * (MR x ldt): the merge of edge_tile. */
static void merge_ct(const gemm_job *g, const float *t, int64_t ldt, int64_t row, int64_t col,
                     int64_t m, int64_t n, float beta) {
  if (m == 4 && MR == 4) {
    /* Four rows: each column of the tile is a vector of C^T, by two 4 x 4 transposes; the same
     * multiplies and add per element as below. */
    wt_f32x4 va = wt_f32x4_splat(g->alpha), vb = wt_f32x4_splat(beta);
    for (int64_t h = 0; h < n; h += 4) {
      wt_f32x4 r0 = wt_f32x4_load(t + h), r1 = wt_f32x4_load(t + ldt + h);
      wt_f32x4 r2 = wt_f32x4_load(t + 2 * ldt + h), r3 = wt_f32x4_load(t + 3 * ldt + h);
      wt_f32x4 e01 = wt_f32x4_even(r0, r1), e23 = wt_f32x4_even(r2, r3);
      wt_f32x4 o01 = wt_f32x4_odd(r0, r1), o23 = wt_f32x4_odd(r2, r3);
      wt_f32x4 col4[4] = {wt_f32x4_even(e01, e23), wt_f32x4_even(o01, o23), wt_f32x4_odd(e01, e23),
                          wt_f32x4_odd(o01, o23)};
      for (int64_t j = h; j < n && j < h + 4; j++) {
        float *cj = g->C + (col + j) * g->ldc + row;
        wt_f32x4 v = wt_f32x4_mul(va, col4[j - h]);
        if (beta != 0.0f) v = wt_f32x4_add(v, wt_f32x4_mul(vb, wt_f32x4_load(cj)));
        wt_f32x4_store(cj, v);
      }
    }
    return;
  }
  for (int64_t j = 0; j < n; j++) {
    float *cj = g->C + (col + j) * g->ldc + row;
    if (beta == 0.0f)
      for (int64_t i = 0; i < m; i++) cj[i] = g->alpha * t[i * ldt + j];
    else
      for (int64_t i = 0; i < m; i++) cj[i] = g->alpha * t[i * ldt + j] + beta * cj[i];
  }
}

/* The register tile of C at rows row.. (m of them) and columns col.. (n) for one KC slice
 * from k0: op(B)'s micro-panel at pb, op(A)'s at pa (packed), or pa NULL: op(A) read in place
 * (a_inplace; edge tiles pack their rows into a local panel). */
static void one_tile(const gemm_job *g, int64_t row, int64_t col, int64_t m, int64_t n,
                     int64_t k0, int64_t kc, float beta_k, const float *pa, const float *pb) {
  _Alignas(16) float lpa[MR * KC];
  if (!pa && (m < MR || (!g->ct && n < NR))) { /* in place: 4-row tiles only */
    pack_a(g->trans_a, g->A, g->lda, row, k0, m, kc, MR, lpa);
    pa = lpa;
  }
  if (g->ct) {
    _Alignas(16) float t[MR * NR];
    if (pa) micro_kernel(kc, pa, pb, t, NR, 1.0f, 0.0f);
    else if (g->trans_a) micro_kernel_at(kc, g->A + k0 * g->lda + row, g->lda, pb, t, NR, 1.0f, 0.0f);
    else micro_kernel_ar(kc, g->A + row * g->lda + k0, g->lda, pb, t, NR, 1.0f, 0.0f);
    merge_ct(g, t, NR, row, col, m, n, beta_k);
    return;
  }
  float *c = g->C + row * g->ldc + col;
  if (m == g->mr && n == NR) {
    if (pa) tile_packed(g->mr, kc, pa, pb, c, g->ldc, g->alpha, beta_k);
    else micro_kernel_at(kc, g->A + k0 * g->lda + row, g->lda, pb, c, g->ldc, g->alpha, beta_k);
#if MR_WIDE
  } else if (m == MR && g->mr == MR_WIDE && n == NR && pa) {
    micro_kernel_w4(kc, pa, pb, c, g->ldc, g->alpha, beta_k);
#endif
  } else {
    edge_tile(g->mr, kc, pa, pb, c, g->ldc, m, n, g->alpha, beta_k);
  }
}

/* Slices at most this deep run their row tiles outermost (see packed_tiles). */
#ifndef WT_GEMM_SHALLOW_K
#define WT_GEMM_SHALLOW_K 32
#endif
/* One KC slice (from row k0 of op(B)) of C[ic .. ic+mc, jc .. jc+nc]: op(B)'s slice packed in
 * buf_b, op(A)'s in buf_a (or read in place: a_inplace). Column panels outermost (each packed
 * panel of op(B) stays in L1 across the row tiles), except
 * - where op(A) is read in place: there each row tile's values come from memory once and stay in
 *   L1 across the column panels;
 * - in a shallow slice (kc <= WT_GEMM_SHALLOW_K: weight gradients at batch 2 and 4 x 4 / 2 x 2
 *   grids, K = 32 and 8), where the work is writing C: row tiles outermost write each row of the
 *   block in one sweep, where column panels outermost wrote 32 bytes of each of 64 rows (rows
 *   12 KiB apart all fall in one L1 set) and came back for the next 32 (wasm, M = 768, N = 3072,
 *   K = 8: 29 -> 36 GFLOP/s FMA, 29 -> 31 SIMD128; all the panels of the slice fit in L1). */
static void packed_tiles(const gemm_job *g, int64_t ic, int64_t mc, int64_t jc, int64_t nc,
                         int64_t k0, int64_t kc, float beta_k, const float *buf_a, const float *buf_b) {
  /* Full tiles of a packed op(A) call the kernel straight (one_tile's checks, frame and call
   * were 1-2% of a tile at kc = 192); edge tiles and in-place op(A) go through one_tile. */
  const int64_t mfull = g->a_inplace ? 0 : mc - mc % g->mr, nfull = nc - nc % NR;
  float *c0 = g->C + ic * g->ldc + jc;
  if (g->a_inplace || kc <= WT_GEMM_SHALLOW_K) {
    for (int64_t ir = 0; ir < mc; ir += g->mr) {
      int64_t jr = 0;
      if (ir < mfull)
        for (; jr < nfull; jr += NR)
          tile_packed(g->mr, kc, buf_a + ir * kc, buf_b + jr * kc, c0 + ir * g->ldc + jr, g->ldc,
                      g->alpha, beta_k);
      for (; jr < nc; jr += NR)
        one_tile(g, ic + ir, jc + jr, min64(g->mr, mc - ir), min64(NR, nc - jr), k0, kc, beta_k,
                 g->a_inplace ? NULL : buf_a + ir * kc, buf_b + jr * kc);
    }
    return;
  }
  for (int64_t jr = 0; jr < nc; jr += NR) {
    int64_t ir = 0;
    if (jr < nfull)
      for (; ir < mfull; ir += g->mr)
        tile_packed(g->mr, kc, buf_a + ir * kc, buf_b + jr * kc, c0 + ir * g->ldc + jr, g->ldc,
                    g->alpha, beta_k);
    for (; ir < mc; ir += g->mr)
      one_tile(g, ic + ir, jc + jr, min64(g->mr, mc - ir), min64(NR, nc - jr), k0, kc, beta_k,
               buf_a + ir * kc, buf_b + jr * kc);
  }
}

/* C[i0 .. i1, j0 .. j1] by the Goto loop nest. A block whose rows of op(A) fit the A buffer
 * for a whole slice (at most MC rows, or more when K is short: ViT's 130 rows at K = 192) takes
 * the K slices outermost instead, so its rows of op(A) are packed once per slice rather than
 * once per slice and NC columns; each element of C still sums the slices in order. */
static void ct_block(const gemm_job *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float *buf_b);

static void packed_block(const gemm_job *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                         float *buf_a, float *buf_b) {
  if (g->ct && !g->trans_a) {
    ct_block(g, i0, i1, j0, j1, buf_b);
    return;
  }
  const int64_t mcb = MC_ROWS(g->mr);
  if (i1 - i0 <= mcb || (i1 - i0 + g->mr - 1) / g->mr * g->mr * min64(g->K, KC) <= MC * KC) {
    int64_t mc = i1 - i0;
    for (int64_t pc = 0; pc < g->K; pc += KC) {
      int64_t kc = min64(KC, g->K - pc);
      float beta_k = pc == 0 ? g->beta : 1.0f;
      if (!g->a_inplace) pack_a_job(g, i0, pc, mc, kc, buf_a);
      for (int64_t jc = j0; jc < j1; jc += NC) {
        int64_t nc = min64(NC, j1 - jc);
        pack_b_job(g, pc, jc, kc, nc, buf_b);
        packed_tiles(g, i0, mc, jc, nc, pc, kc, beta_k, buf_a, b_slice(g, pc, jc, kc, buf_b));
        if (g->relu && !g->ct && pc + kc == g->K) relu_block(g->C + i0 * g->ldc + jc, mc, nc, g->ldc);
      }
    }
    return;
  }
  for (int64_t jc = j0; jc < j1; jc += NC) {
    int64_t nc = min64(NC, j1 - jc);
    for (int64_t pc = 0; pc < g->K; pc += KC) {
      int64_t kc = min64(KC, g->K - pc);
      float beta_k = pc == 0 ? g->beta : 1.0f;
      pack_b_job(g, pc, jc, kc, nc, buf_b);
      for (int64_t ic = i0; ic < i1; ic += mcb) {
        int64_t mc = min64(mcb, i1 - ic);
        if (!g->a_inplace) pack_a_job(g, ic, pc, mc, kc, buf_a);
        packed_tiles(g, ic, mc, jc, nc, pc, kc, beta_k, buf_a, b_slice(g, pc, jc, kc, buf_b));
        if (g->relu && !g->ct && pc + kc == g->K) relu_block(g->C + ic * g->ldc + jc, mc, nc, g->ldc);
      }
    }
  }
}

/* A block of a transposed job (ct, see thin_m) whose op(A) = A, rows contiguous along k (the
 * caller's B^T: a Linear weight [N, K]): its few columns of op(B) (the caller's rows of op(A))
 * are packed whole, every KC slice (thin_m checks that they fit in buf_b), then each row tile of
 * op(A) (4 rows of the weight, read in place) runs through all of K before the next, so that the
 * weight streams from memory once, in order (slice by slice, the row tiles restarted 4 streams
 * every KC floats: 29 -> 43 GFLOP/s at M = 8, N = 768, K = 3072). Each element still sums the
 * slices in order, as the packed path does. A k-major op(A) (the caller's B [K, N]) keeps the
 * slices outermost: consecutive row tiles read the same lines of its rows. */
static void ct_block(const gemm_job *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float *buf_b) {
  int64_t nc = j1 - j0, npad = (nc + NR - 1) / NR * NR;
  for (int64_t pc = 0; pc < g->K; pc += KC) pack_b_job(g, pc, j0, min64(KC, g->K - pc), nc, buf_b + pc * npad);
  _Alignas(16) float pa[MR * KC];
  for (int64_t ir = i0; ir < i1; ir += MR) {
    int64_t m = min64(MR, i1 - ir);
    for (int64_t pc = 0; pc < g->K; pc += KC) {
      int64_t kc = min64(KC, g->K - pc);
      const float *pb = buf_b + pc * npad;
      /* Several column panels: the tile's rows packed once for them (V8's code for the in-place
       * kernel is slower than the packed one in the SIMD128 build: 35 against 48 GFLOP/s at
       * M = 32, N = 1536, K = 384); one panel: read in place. */
      if (nc > NR) pack_a(g->trans_a, g->A, g->lda, ir, pc, m, kc, MR, pa);
      for (int64_t jr = 0; jr < nc; jr += NR)
        one_tile(g, ir, j0 + jr, m, min64(NR, nc - jr), pc, kc, pc == 0 ? g->beta : 1.0f,
                 nc > NR ? pa : NULL, pb + jr * kc);
    }
  }
}

static void packed_task(void *ctx, int64_t block, int32_t thread) {
  const gemm_job *g = ctx;
  int64_t bi = block % g->mblocks, bj = block / g->mblocks;
  int64_t i0 = bi * g->mb, j0 = bj * g->nb;
  float *pa, *pb;
  wt_gemm_thread_buffers(thread, &pa, &pb);
  packed_block(g, i0, min64(i0 + g->mb, g->M), j0, min64(j0 + g->nb, g->N), pa, pb);
}

/* Fewest multiply-adds (M * N * K) worth splitting over threads. Measured natively with
 * tests/bench/gemm_bench.c at 2 threads (see the commit). */
#ifndef WT_GEMM_THREAD_MIN
#define WT_GEMM_THREAD_MIN ((int64_t)1 << 20)
#endif

/* Whether thin-N products read op(A) in place (a_inplace); 0 for measuring against packing. */
#ifndef WT_GEMM_A_INPLACE
#define WT_GEMM_A_INPLACE 1
#endif

/* The register tile's rows for a job: the taller tile (MR_WIDE, relaxed-SIMD build) where each
 * packed panel of op(A) serves several column panels and there are rows enough to fill it (any
 * K: in ConvNeXt's weight gradients at K = 8 a third fewer tiles, and calls, wrote the same C:
 * 32-34 -> 36-39 GFLOP/s);
 * 4 rows where op(A) is read in place or the columns are few (conv's dX on small grids, where
 * packing 6-row panels was most of the work). A function of the shape: the same at any thread
 * count (and the tile does not change the bits: each element sums the same products in the
 * same order). */
#ifndef WT_GEMM_WIDE_MIN_K
#define WT_GEMM_WIDE_MIN_K 1
#endif
#ifndef WT_GEMM_WIDE_MIN_N
#define WT_GEMM_WIDE_MIN_N 64
#endif
static int tile_rows(const gemm_job *g) {
  if (!MR_WIDE || g->a_inplace || g->ct) return MR;
  return g->M >= 4 * MR_WIDE && g->N >= WT_GEMM_WIDE_MIN_N && g->K >= WT_GEMM_WIDE_MIN_K ? MR_WIDE : MR;
}

/* Runs the packed path for g (its block fields set here). One thread: one block, so each packed
 * panel of op(B) serves all of M (blocks of C would pack it again per block; the bits are the
 * same either way, see above). */
static void run_packed(gemm_job *g) {
  g->a_inplace = g->ct || (WT_GEMM_A_INPLACE && g->trans_a && g->N <= NR && !(g->half & WT_GEMM_A_HALF));
  g->mr = tile_rows(g);
  g->mb = g->M;
  g->nb = g->N;
  g->mblocks = 1;
  if ((g->M * g->N * g->K >= WT_GEMM_THREAD_MIN && wt_pool_threads() > 1) || wt_pool_split_small()) {
    /* Blocks of MC rows; the columns cut as well until there are about two per thread. */
    int64_t target = 2 * (int64_t)wt_pool_threads();
    if (target > WT_GEMM_BLOCKS) target = WT_GEMM_BLOCKS;
    if (target < 2) target = 2;
    g->mb = MC_ROWS(g->mr);
    g->mblocks = (g->M + g->mb - 1) / g->mb;
    int64_t nsplit = (target + g->mblocks - 1) / g->mblocks;
    int64_t nb = (g->N + nsplit - 1) / nsplit;
    nb = (nb + NR - 1) / NR * NR;
    if (nb < 4 * NR) nb = 4 * NR;
    g->nb = nb < g->N ? nb : g->N;
  }
  wt_parallel_for(g->mblocks * ((g->N + g->nb - 1) / g->nb), packed_task, g);
}

/* Products of at most WT_GEMM_THIN_M rows (ConvNeXt's last stages at batch 2: 8 and 32 rows
 * against weights of 0.6-2.4M floats) run as C^T = op(B)^T op(A)^T with op(B) read in place
 * (gemm_job.ct): packing op(B) cost as much as the few row tiles that read it. Every element of C
 * sums the same products in the same order (the KC slices and the alpha / beta merge too), so
 * the bits are the packed path's. */
#ifndef WT_GEMM_THIN_M
#define WT_GEMM_THIN_M 32
#endif
static int thin_m(int64_t M, int64_t N, int64_t K) {
  return M <= WT_GEMM_THIN_M && N >= 4 * NR && K >= 16 && K * ((M + NR - 1) / NR * NR) <= KC * NC;
}

/* The unpacked paths (thin or small shapes) write all of C at once: small enough to be in
 * cache for the epilogue. The packed path applies it per MC x NC block after its last K slice. */
static void sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                  int64_t ldc, int relu) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    scale_c(M, N, beta, C, ldc);
    if (relu) relu_block(C, M, N, ldc);
    return;
  }
  if (wt_gemm_unpacked(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, relu)) return;
  if (thin_m(M, N, K)) {
    /* C^T = op(B)^T op(A)^T: the caller's op(B) read in place as this job's op(A). */
    gemm_job t = {!trans_b, !trans_a, 0, N, M, K, alpha, beta, B, A, ldb, lda, ldc, C,
                  N, M, 1, 0, NULL, 0, 1, 0};
    run_packed(&t);
    if (relu) relu_block(C, M, N, ldc);
    return;
  }
  gemm_job g = {trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C,
                M, N, 1, 0, NULL, 0, 0, 0};
  run_packed(&g);
}
typedef struct batch_job {
  gemm_job g; /* one product's arguments (its block fields unused) */
  wt_gemm_offsets_fn offsets;
  const void *ctx;
} batch_job;

static void batch_task(void *ctx, int64_t t, int32_t thread) {
  (void)thread; /* a nested wt_parallel_for inside runs on this thread, with its buffers */
  const batch_job *b = ctx;
  const gemm_job *g = &b->g;
  int64_t off[3];
  b->offsets(b->ctx, t, off);
  sgemm(g->trans_a, g->trans_b, g->M, g->N, g->K, g->alpha, g->A + off[0], g->lda, g->B + off[1],
        g->ldb, g->beta, g->C + off[2], g->ldc, g->relu);
}

/* Whether a batch of products splits over the threads by product (each whole on one thread)
 * rather than each product splitting itself, one after another: products too small to split, and
 * products of less than WT_GEMM_BATCH_WORK_MAX multiply-adds when there are at least two per
 * thread and they share out evenly. Attention's heads are the case: at batch 8, 4 heads, seq 128,
 * d 64, 32 products of 2^20 multiply-adds each, which split one by one paid a fork and join and
 * packed A again in every block of every product. Either way a product's sums are the same: the
 * bits do not depend on this choice (tests/c/test_threads.c, test_gemm_batch). */
#ifndef WT_GEMM_BATCH_WORK_MAX
#define WT_GEMM_BATCH_WORK_MAX ((int64_t)1 << 23)
#endif
static int batch_splits(int64_t nbatch, int64_t work) {
  if (nbatch <= 1) return 0;
  if (work < WT_GEMM_THREAD_MIN) return nbatch * work >= WT_GEMM_THREAD_MIN || wt_pool_split_small();
  int64_t threads = wt_pool_threads();
  return work < WT_GEMM_BATCH_WORK_MAX && threads > 1 && nbatch >= 2 * threads &&
         (nbatch % threads == 0 || nbatch >= 4 * threads);
}

void wt_sgemm_batch(int trans_a, int trans_b, int64_t nbatch, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float beta, float *C, int64_t ldc, int relu, wt_gemm_offsets_fn offsets,
                    const void *ctx) {
  batch_job b = {{trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C, 0, 0, 0, 0, NULL, 0, 0, 0},
                 offsets, ctx};
  if (batch_splits(nbatch, M * N * K)) {
    wt_parallel_for(nbatch, batch_task, &b);
    return;
  }
  for (int64_t t = 0; t < nbatch; t++) batch_task(&b, t, wt_pool_thread_index());
}

void wt_sgemm_half(int half, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                   float alpha, const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                   float *C, int64_t ldc, int relu) {
  if (!half) {
    sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, relu);
    return;
  }
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    scale_c(M, N, beta, C, ldc);
    if (relu) relu_block(C, M, N, ldc);
    return;
  }
  gemm_job g = {trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C,
                M, N, 1, half, NULL, 0, 0, 0};
  run_packed(&g);
}

/* ---- op(B) packed once (a weight read by many products) -------------------------------- */

int64_t wt_gemm_packed_b_floats(int64_t K, int64_t N) {
  return K * ((N + NR - 1) / NR * NR);
}

void wt_gemm_pack_b(int half, int trans_b, int64_t K, int64_t N, const void *B, int64_t ldb,
                    float *dst) {
  gemm_job g = {0, trans_b, 0, 0, N, K, 1.0f, 0.0f, NULL, B, 0, ldb, 0, NULL,
                0, N, 1, half & WT_GEMM_B_HALF, NULL, 0, 0, 0};
  int64_t npad = (N + NR - 1) / NR * NR;
  for (int64_t pc = 0; pc < K; pc += KC) pack_b_job(&g, pc, 0, min64(KC, K - pc), N, dst + pc * npad);
}

int wt_gemm_packs_b(int half, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                    int64_t lda, int64_t ldb) {
  if (M <= 0 || N <= 0 || K <= 0) return 0;
  return half || !wt_gemm_unpacked_shape(trans_a, trans_b, M, N, K, lda, ldb);
}

void wt_sgemm_prepacked(int half, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                        float alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                        const float *Bp, float beta, float *C, int64_t ldc, int relu) {
  if (!Bp || alpha == 0.0f || !wt_gemm_packs_b(half, trans_a, trans_b, M, N, K, lda, ldb)) {
    wt_sgemm_half(half, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, relu);
    return;
  }
  gemm_job g = {trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C,
                M, N, 1, half & WT_GEMM_A_HALF, Bp, 0, 0, 0};
  run_packed(&g);
}
