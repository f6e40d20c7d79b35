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
 * columns uses an MR x 4 kernel). Thin shapes (M < MR, N < 4) skip packing (thin_gemm), and so
 * do small ones that fit in L1 (direct_gemm).
 *
 * The microkernel is a separate noinline function: V8 tiers functions up individually, so a
 * small hot function called many times is optimized early, and the register allocator sees
 * one loop with MR * NR / 4 accumulators (8 here; 16 spill in V8 on x64).
 *
 * No allocation: the caller's packing buffers are static, a pool worker's are its scratch
 * (allocated when the pool starts). Large shapes are split over blocks of C on the pool
 * (packed_task); nothing in webtrain calls wt_sgemm from two threads outside the pool. */
#include "kernels/gemm.h"

#include "base/half.h"
#include "base/pool.h"
#include "kernels/simd.h"

/* Register tile: MR rows x NR columns (NR / 4 vectors per row), and the k loop unrolled KU
 * times. Measured in Node 20 on this project's 2-core AMD EPYC hosts (gemm_bench, n = 512,
 * best of interleaved runs): the k step is bound by the front end, not the vector ports.
 * - SIMD128 (a multiply and an add per 4-lane step): 4 x 8 with k unrolled by 2, 61-64 GFLOP/s
 *   (55 without the unroll: per k, 2 loads, 4 broadcasts, 16 arithmetic and ~8 loop/bounds
 *   instructions; the unroll halves the last). 6 x 8 spills in V8 (12 accumulators, 2 B vectors,
 *   a broadcast and the product's temporary exceed the 16 xmm registers): 34.
 * - Relaxed SIMD (one fused madd per step, no temporary): 6 x 8, 64-68 GFLOP/s (4 x 8: 60-62;
 *   unrolling k: 46-60, worse). 12 independent accumulators also cover the FMA latency that
 *   8 barely did.
 * On the Intel hosts of earlier measurements the SIMD128 kernel was port-bound instead (mul and add
 * on shared ports) and neither the unroll nor 6 x 8 helped there.
 * 4 x 8 also wastes least on narrow edges (N = 10 output layers). The -D overrides exist for
 * tuning with tests/bench/gemm_bench.c. */
#ifndef WT_GEMM_MR
#if defined(__wasm_relaxed_simd__)
#define WT_GEMM_MR 6
#else
#define WT_GEMM_MR 4
#endif
#endif
#ifndef WT_GEMM_NR
#define WT_GEMM_NR 8
#endif
#ifndef WT_GEMM_KU
#if defined(__wasm_relaxed_simd__)
#define WT_GEMM_KU 1
#else
#define WT_GEMM_KU 2
#endif
#endif
#define MR WT_GEMM_MR
#define NR WT_GEMM_NR
#define NV (NR / 4)
/* Cache blocks: KC * NR floats of B (16 KiB) stay in L1, MC * KC of A (128 KiB) and KC * NC of
 * B (512 KiB) in L2. Measured in Node 20 (n = 256..1024, NN/TN/NT): KC = 512 beats 256 by 1-3%
 * at n >= 512 (half the passes over C); NC = 256 and MC = 64 are as fast as NC = 2048 and
 * MC = 128, and every wasm instance carries these buffers in its memory (640 KiB, was 2.1 MiB);
 * NC = 128 / MC = 32 lose 1-3% at n = 1024. */
#ifndef WT_GEMM_KC
#define WT_GEMM_KC 512
#endif
#ifndef WT_GEMM_MC
#define WT_GEMM_MC 64
#endif
#ifndef WT_GEMM_NC
#define WT_GEMM_NC 256
#endif
#define KC WT_GEMM_KC
/* MC rounded up to whole register tiles: with 6-row tiles a batch of 64 rows stays one block
 * (60 would leave a 4-row block that packs all of op(B) again for 4 rows). */
#define MC (((WT_GEMM_MC + MR - 1) / MR) * MR)
#define NC ((WT_GEMM_NC / NR) * NR)

/* 64-byte aligned for cache lines; 16-byte alignment is all the vector loads need. */
static _Alignas(64) float g_pack_a[MC * KC];
static _Alignas(64) float g_pack_b[KC * NC];

#define UNROLL _Pragma("GCC unroll 16")
#define KU_PRAGMA(x) _Pragma(#x)
#define KU_PRAGMA2(n) KU_PRAGMA(GCC unroll n)
#define KUNROLL KU_PRAGMA2(WT_GEMM_KU)

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* C[MR x NR] (row stride ldc) = alpha * sum_k a_k b_k^T + beta * C; beta == 0: C not read.
 * a: kc steps of MR floats; b: kc steps of NR floats. */
__attribute__((noinline)) static void micro_kernel(int64_t kc, const float *restrict a,
                                                   const float *restrict b, float *restrict c,
                                                   int64_t ldc, float alpha, float beta) {
  wt_f32x4 acc[MR][NV];
  UNROLL for (int i = 0; i < MR; i++) UNROLL for (int v = 0; v < NV; v++) acc[i][v] = wt_f32x4_zero();
  KUNROLL for (int64_t k = 0; k < kc; k++) {
    wt_f32x4 bv[NV];
    UNROLL for (int v = 0; v < NV; v++) bv[v] = wt_f32x4_load(b + 4 * v);
    UNROLL for (int i = 0; i < MR; i++) {
      wt_f32x4 ai = wt_f32x4_splat(a[i]);
      UNROLL for (int v = 0; v < NV; v++) acc[i][v] = wt_f32x4_fma(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += NR;
  }
  wt_f32x4 va = wt_f32x4_splat(alpha);
  if (beta == 0.0f) {
    UNROLL for (int i = 0; i < MR; i++) UNROLL for (int v = 0; v < NV; v++)
      wt_f32x4_store(c + i * ldc + 4 * v, wt_f32x4_mul(va, acc[i][v]));
  } else {
    wt_f32x4 vb = wt_f32x4_splat(beta);
    UNROLL for (int i = 0; i < MR; i++) UNROLL for (int v = 0; v < NV; v++) {
      float *p = c + i * ldc + 4 * v;
      wt_f32x4_store(p, wt_f32x4_add(wt_f32x4_mul(va, acc[i][v]),
                                     wt_f32x4_mul(vb, wt_f32x4_load(p))));
    }
  }
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

/* Partial tile (m < MR or n < NR): full tile into a local buffer, then merge the valid part. */
static void edge_tile(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                      int64_t m, int64_t n, float alpha, float beta) {
  _Alignas(16) float t[MR * NR];
  int64_t ldt = NR;
  if (n <= 4) {
    micro_kernel_n4(kc, a, b, t);
    ldt = 4;
  } else {
    micro_kernel(kc, a, b, t, NR, 1.0f, 0.0f);
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

/* dst[k * stride + r] = src[r * ld + k] for r < 4, k < kc: a transposing pack. Four rows are
 * read 4 k at a time and turned into four k-major groups by a 4 x 4 transpose in registers
 * (8 shuffles), so each k costs one vector store instead of four scalar loads and stores. */
static inline void interleave4(float *restrict dst, int64_t stride, const float *src, int64_t ld,
                               int64_t kc) {
  const float *s0 = src, *s1 = src + ld, *s2 = src + 2 * ld, *s3 = src + 3 * ld;
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    wt_f32x4 r0 = wt_f32x4_load(s0 + k), r1 = wt_f32x4_load(s1 + k);
    wt_f32x4 r2 = wt_f32x4_load(s2 + k), r3 = wt_f32x4_load(s3 + k);
    /* e01 = {r0[0], r0[2], r1[0], r1[2]} ...; even(e01, e23) = {r0[0], r1[0], r2[0], r3[0]}. */
    wt_f32x4 e01 = wt_f32x4_even(r0, r1), e23 = wt_f32x4_even(r2, r3);
    wt_f32x4 o01 = wt_f32x4_odd(r0, r1), o23 = wt_f32x4_odd(r2, r3);
    float *d = dst + k * stride;
    wt_f32x4_store(d, wt_f32x4_even(e01, e23));
    wt_f32x4_store(d + stride, wt_f32x4_even(o01, o23));
    wt_f32x4_store(d + 2 * stride, wt_f32x4_odd(e01, e23));
    wt_f32x4_store(d + 3 * stride, wt_f32x4_odd(o01, o23));
  }
  for (; k < kc; k++) {
    float *d = dst + k * stride;
    d[0] = s0[k];
    d[1] = s1[k];
    d[2] = s2[k];
    d[3] = s3[k];
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

/* Packs `rows` rows of src (each contiguous along k, ld apart) into w-wide micro-panels: the
 * w values of one k side by side, zero-padding rows past the last. */
static void pack_rows(const float *src, int64_t ld, int64_t rows, int64_t kc, int64_t w, float *dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += w) {
    int64_t m = min64(w, rows - r0);
    const float *s = src + r0 * ld;
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) interleave4(dst + i, w, s + i * ld, ld, kc);
    for (; i < m; i++)
      for (int64_t k = 0; k < kc; k++) dst[k * w + i] = s[i * ld + k];
    for (; i < w; i++)
      for (int64_t k = 0; k < kc; k++) dst[k * w + i] = 0.0f;
    dst += w * kc;
  }
}

/* Packs op(A)[i0 .. i0+mc, k0 .. k0+kc] into MR-row micro-panels, zero-padding rows past mc. */
static void pack_a(int trans_a, const float *A, int64_t lda, int64_t i0, int64_t k0, int64_t mc,
                   int64_t kc, float *dst) {
  if (trans_a) pack_kmajor(A + k0 * lda + i0, lda, kc, mc, MR, dst); /* MR values of a k adjacent */
  else pack_rows(A + i0 * lda + k0, lda, mc, kc, MR, dst);          /* rows contiguous along k */
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

/* ---- Thin shapes: M or N below the register tile --------------------------------------
 * Packing pays off when each packed element is reused across a tile; with M or N of 1-3 it
 * is not, and the tile would be mostly padding. These paths read the operands in place. */

static inline void store_c(float *c, float v, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * v : alpha * v + beta * *c;
}

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
 * quarter of that (128 x 64 x 128 TN: 35 vs 36). */
#ifndef WT_GEMM_DIRECT_MAX
#define WT_GEMM_DIRECT_MAX (128 * 128 * 64)
#endif
#define DIRECT_KMAX (KC < 256 ? KC : 256)

/* C[MR x (4 * nv)] tile: a row i, step k at a[i * a_rs + k * a_ks]; b row k at b + k * ldb. */
#define DIRECT_TILE(NVEC)                                                                       \
  do {                                                                                          \
    wt_f32x4 acc[MR][NVEC];                                                                     \
    UNROLL for (int i = 0; i < MR; i++) UNROLL for (int v = 0; v < NVEC; v++) acc[i][v] =       \
        wt_f32x4_zero();                                                                        \
    const float *ap[MR], *bp = b + j;                                                           \
    UNROLL for (int i = 0; i < MR; i++) ap[i] = a + i * a_rs;                                   \
    for (int64_t k = 0; k < K; k++) {                                                           \
      wt_f32x4 bv[NVEC];                                                                        \
      UNROLL for (int v = 0; v < NVEC; v++) bv[v] = wt_f32x4_load(bp + 4 * v);                  \
      UNROLL for (int i = 0; i < MR; i++) {                                                     \
        wt_f32x4 ai = wt_f32x4_splat(*ap[i]);                                                   \
        ap[i] += a_ks;                                                                          \
        UNROLL for (int v = 0; v < NVEC; v++) acc[i][v] = wt_f32x4_fma(ai, bv[v], acc[i][v]);   \
      }                                                                                         \
      bp += ldb;                                                                                \
    }                                                                                           \
    UNROLL for (int i = 0; i < MR; i++) UNROLL for (int v = 0; v < NVEC; v++) {                 \
      float *p = c + i * ldc + j + 4 * v;                                                       \
      wt_f32x4 r = wt_f32x4_mul(va, acc[i][v]);                                                 \
      if (beta != 0.0f) r = wt_f32x4_add(r, wt_f32x4_mul(vb, wt_f32x4_load(p)));                \
      wt_f32x4_store(p, r);                                                                     \
    }                                                                                           \
  } while (0)

/* C[i, j] for j < n (n a multiple of 4), MR rows. */
__attribute__((noinline)) static void direct_rows(int64_t N, int64_t K, float alpha,
                                                  const float *restrict a, int64_t a_rs,
                                                  int64_t a_ks, const float *restrict b,
                                                  int64_t ldb, float beta, float *restrict c,
                                                  int64_t ldc) {
  wt_f32x4 va = wt_f32x4_splat(alpha), vb = wt_f32x4_splat(beta);
  int64_t j = 0;
  for (; j + NR <= N; j += NR) DIRECT_TILE(NV);
  for (; j + 4 <= N; j += 4) DIRECT_TILE(1);
}

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

/* Handles thin shapes without packing; returns 0 when the shape should take the packed path. */
static int thin_gemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc) {
  if (M < MR && !trans_b) {
    /* Rows of op(B) = B are contiguous: vectorize along N. */
    rows_kernel(M, N, K, alpha, A, trans_a ? 1 : lda, trans_a ? lda : 1, B, ldb, beta, C, ldc, 1);
    return 1;
  }
  if (N < 4 && trans_a) {
    /* C^T = op(B)^T A': rows of A (= op(A)^T) are contiguous along M. */
    rows_kernel(N, M, K, alpha, B, trans_b ? ldb : 1, trans_b ? 1 : ldb, A, lda, beta, C, 1, ldc);
    return 1;
  }
  int64_t a_ks = trans_a ? lda : 1, b_ks = trans_b ? 1 : ldb;
  if ((M < MR || N < 4) && a_ks == 1 && b_ks == 1) {
    /* Rows of op(A) and columns of op(B) are contiguous along k (e.g. matrix x vector). */
    dots_kernel(M, N, K, alpha, A, trans_a ? 1 : lda, B, trans_b ? ldb : 1, beta, C, ldc);
    return 1;
  }
  return 0;
}

/* C[rows x cols] = max(C, 0) (the fused ReLU epilogue; NaN is kept, as Relu keeps it). */
static void relu_block(float *C, int64_t rows, int64_t cols, int64_t ldc) {
  const wt_f32x4 zero = wt_f32x4_splat(0.0f);
  for (int64_t i = 0; i < rows; i++) {
    float *c = C + i * ldc;
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) wt_f32x4_store(c + j, wt_f32x4_max(wt_f32x4_load(c + j), zero)); /* as Relu's kernel */
    for (; j < cols; j++) c[j] = c[j] < 0.0f ? 0.0f : c[j];
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
} gemm_job;

_Static_assert(sizeof(float) * (MC * KC + KC * NC) <= WT_POOL_SCRATCH_BYTES,
               "GEMM packing buffers fit in a pool thread's scratch");

static void thread_buffers(int32_t thread, float **pa, float **pb) {
  float *s = thread > 0 ? (float *)wt_pool_scratch(thread) : NULL;
  if (!s) {
    *pa = g_pack_a;
    *pb = g_pack_b;
    return;
  }
  *pa = s;
  *pb = s + MC * KC; /* MC * KC floats: a multiple of 16, so still 64-byte aligned */
}

/* One KC slice of C[ic .. ic+mc, jc .. jc+nc]: op(B)'s slice packed in buf_b, op(A)'s in buf_a. */
static void packed_tiles(const gemm_job *g, int64_t ic, int64_t mc, int64_t jc, int64_t nc,
                         int64_t kc, float beta_k, const float *buf_a, const float *buf_b) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    int64_t n = min64(NR, nc - jr);
    const float *pb = buf_b + jr * kc;
    for (int64_t ir = 0; ir < mc; ir += MR) {
      int64_t m = min64(MR, mc - ir);
      const float *pa = buf_a + ir * kc;
      float *c = g->C + (ic + ir) * g->ldc + jc + jr;
      if (m == MR && n == NR)
        micro_kernel(kc, pa, pb, c, g->ldc, g->alpha, beta_k);
      else
        edge_tile(kc, pa, pb, c, g->ldc, m, n, g->alpha, beta_k);
    }
  }
}

/* C[i0 .. i1, j0 .. j1] by the Goto loop nest. A block of at most MC rows (a training batch)
 * takes the K slices outermost instead, so its rows of op(A) are packed once per slice rather
 * than once per slice and NC columns; each element of C still sums the slices in order. */
static void packed_block(const gemm_job *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                         float *buf_a, float *buf_b) {
  if (i1 - i0 <= MC) {
    int64_t mc = i1 - i0;
    for (int64_t pc = 0; pc < g->K; pc += KC) {
      int64_t kc = min64(KC, g->K - pc);
      float beta_k = pc == 0 ? g->beta : 1.0f;
      pack_a(g->trans_a, g->A, g->lda, i0, pc, mc, kc, buf_a);
      for (int64_t jc = j0; jc < j1; jc += NC) {
        int64_t nc = min64(NC, j1 - jc);
        pack_b(g->trans_b, g->B, g->ldb, pc, jc, kc, nc, buf_b);
        packed_tiles(g, i0, mc, jc, nc, kc, beta_k, buf_a, buf_b);
        if (g->relu && pc + kc == g->K) relu_block(g->C + i0 * g->ldc + jc, mc, nc, g->ldc);
      }
    }
    return;
  }
  for (int64_t jc = j0; jc < j1; jc += NC) {
    int64_t nc = min64(NC, j1 - jc);
    for (int64_t pc = 0; pc < g->K; pc += KC) {
      int64_t kc = min64(KC, g->K - pc);
      float beta_k = pc == 0 ? g->beta : 1.0f;
      pack_b(g->trans_b, g->B, g->ldb, pc, jc, kc, nc, buf_b);
      for (int64_t ic = i0; ic < i1; ic += MC) {
        int64_t mc = min64(MC, i1 - ic);
        pack_a(g->trans_a, g->A, g->lda, ic, pc, mc, kc, buf_a);
        packed_tiles(g, ic, mc, jc, nc, kc, beta_k, buf_a, buf_b);
        if (g->relu && pc + kc == g->K) relu_block(g->C + ic * g->ldc + jc, mc, nc, g->ldc);
      }
    }
  }
}

static void packed_task(void *ctx, int64_t block, int32_t thread) {
  const gemm_job *g = ctx;
  int64_t bi = block % g->mblocks, bj = block / g->mblocks;
  int64_t i0 = bi * g->mb, j0 = bj * g->nb;
  float *pa, *pb;
  thread_buffers(thread, &pa, &pb);
  packed_block(g, i0, min64(i0 + g->mb, g->M), j0, min64(j0 + g->nb, g->N), pa, pb);
}

/* Fewest multiply-adds (M * N * K) worth splitting over threads. Measured natively with
 * tests/bench/gemm_bench.c at 2 threads (see the commit). */
#ifndef WT_GEMM_THREAD_MIN
#define WT_GEMM_THREAD_MIN ((int64_t)1 << 20)
#endif
/* Blocks of C the packed path aims for: two per thread (a thread delayed by the machine's other
 * work leaves its second block to the others), at most 8; never narrower than 4 register tiles.
 * Fewer blocks pack less: each block packs its own rows of op(A) (all of them when M is a
 * batch of <= MC rows) and columns of op(B). The bits do not depend on the grid. */
#define WT_GEMM_BLOCKS 8

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
  if (thin_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) {
    if (relu) relu_block(C, M, N, ldc);
    return;
  }
  if (K <= DIRECT_KMAX && K * N <= KC * NC && M * N * K <= (trans_a ? WT_GEMM_DIRECT_MAX / 4 : WT_GEMM_DIRECT_MAX)) {
    if (trans_b) {
      /* B is [N, K]: a k-major copy (K x N) for the tiles; 4 rows of B per pass. */
      float *pa, *copy;
      thread_buffers(wt_pool_thread_index(), &pa, &copy);
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
      return;
    }
    direct_gemm(trans_a, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (relu) relu_block(C, M, N, ldc);
    return;
  }
  gemm_job g = {trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C,
                M, N, 1};
  /* One thread: one block, so each packed panel of op(B) serves all of M (blocks of C would pack
   * it again per block; the bits are the same either way, see above). */
  if ((M * N * K >= WT_GEMM_THREAD_MIN && wt_pool_threads() > 1) || wt_pool_split_small()) {
    /* Blocks of MC rows; the columns cut as well until there are about two per thread. */
    int64_t target = 2 * (int64_t)wt_pool_threads();
    if (target > WT_GEMM_BLOCKS) target = WT_GEMM_BLOCKS;
    if (target < 2) target = 2;
    g.mb = MC;
    g.mblocks = (M + MC - 1) / MC;
    int64_t nsplit = (target + g.mblocks - 1) / g.mblocks;
    int64_t nb = (N + nsplit - 1) / nsplit;
    nb = (nb + NR - 1) / NR * NR;
    if (nb < 4 * NR) nb = 4 * NR;
    g.nb = nb < N ? nb : N;
  }
  int64_t blocks = g.mblocks * ((N + g.nb - 1) / g.nb);
  wt_parallel_for(blocks, packed_task, &g);
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

void wt_sgemm_batch(int trans_a, int trans_b, int64_t nbatch, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float beta, float *C, int64_t ldc, int relu, wt_gemm_offsets_fn offsets,
                    const void *ctx) {
  batch_job b = {{trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C, 0, 0, 0},
                 offsets, ctx};
  int64_t work = M * N * K;
  /* Products that split themselves (or one alone, or too little work) go one after another. */
  if (nbatch > 1 && work < WT_GEMM_THREAD_MIN &&
      (nbatch * work >= WT_GEMM_THREAD_MIN || wt_pool_split_small())) {
    wt_parallel_for(nbatch, batch_task, &b);
    return;
  }
  for (int64_t t = 0; t < nbatch; t++) batch_task(&b, t, wt_pool_thread_index());
}

/* ---- float16 operands (frozen weights) ---------------------------------------------------
 * A float16 A or B is widened to float while its panels are packed, so the microkernel, the
 * blocking and the block split over threads are the float path's (bit-identical at any thread
 * count, as above) and no float copy of the operand is ever made. Always the packed path: the
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

typedef struct gemm_half_job {
  gemm_job g;          /* g.A / g.B: float or float16 as half says */
  int half;            /* WT_GEMM_A_HALF | WT_GEMM_B_HALF */
} gemm_half_job;

static void pack_a_any(const gemm_half_job *h, int64_t i0, int64_t k0, int64_t mc, int64_t kc,
                       float *dst) {
  const gemm_job *g = &h->g;
  if (!(h->half & WT_GEMM_A_HALF)) {
    pack_a(g->trans_a, g->A, g->lda, i0, k0, mc, kc, dst);
    return;
  }
  const uint16_t *A = (const uint16_t *)(const void *)g->A;
  if (g->trans_a) pack_kmajor_h(A + k0 * g->lda + i0, g->lda, kc, mc, MR, dst);
  else pack_rows_h(A + i0 * g->lda + k0, g->lda, mc, kc, MR, dst);
}

static void pack_b_any(const gemm_half_job *h, int64_t k0, int64_t j0, int64_t kc, int64_t nc,
                       float *dst) {
  const gemm_job *g = &h->g;
  if (!(h->half & WT_GEMM_B_HALF)) {
    pack_b(g->trans_b, g->B, g->ldb, k0, j0, kc, nc, dst);
    return;
  }
  const uint16_t *B = (const uint16_t *)(const void *)g->B;
  if (!g->trans_b) pack_kmajor_h(B + k0 * g->ldb + j0, g->ldb, kc, nc, NR, dst);
  else pack_rows_h(B + j0 * g->ldb + k0, g->ldb, nc, kc, NR, dst);
}

/* packed_block with the packing above, in one loop nest: K slices outermost (each element of C
 * sums them in order, as there), a batch of at most MC rows packs its rows of op(A) once per
 * slice, and op(B) and larger A are packed as often as packed_block packs them. */
static void packed_block_half(const gemm_half_job *h, int64_t i0, int64_t i1, int64_t j0,
                              int64_t j1, float *buf_a, float *buf_b) {
  const gemm_job *g = &h->g;
  const int batch = i1 - i0 <= MC;
  for (int64_t pc = 0; pc < g->K; pc += KC) {
    int64_t kc = min64(KC, g->K - pc);
    float beta_k = pc == 0 ? g->beta : 1.0f;
    if (batch) pack_a_any(h, i0, pc, i1 - i0, kc, buf_a);
    for (int64_t jc = j0; jc < j1; jc += NC) {
      int64_t nc = min64(NC, j1 - jc);
      pack_b_any(h, pc, jc, kc, nc, buf_b);
      for (int64_t ic = i0; ic < i1; ic += MC) {
        int64_t mc = min64(MC, i1 - ic);
        if (!batch) pack_a_any(h, ic, pc, mc, kc, buf_a);
        packed_tiles(g, ic, mc, jc, nc, kc, beta_k, buf_a, buf_b);
        if (g->relu && pc + kc == g->K) relu_block(g->C + ic * g->ldc + jc, mc, nc, g->ldc);
      }
    }
  }
}

static void packed_task_half(void *ctx, int64_t block, int32_t thread) {
  const gemm_half_job *h = ctx;
  const gemm_job *g = &h->g;
  int64_t bi = block % g->mblocks, bj = block / g->mblocks;
  int64_t i0 = bi * g->mb, j0 = bj * g->nb;
  float *pa, *pb;
  thread_buffers(thread, &pa, &pb);
  packed_block_half(h, i0, min64(i0 + g->mb, g->M), j0, min64(j0 + g->nb, g->N), pa, pb);
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
  gemm_half_job h = {{trans_a, trans_b, relu, M, N, K, alpha, beta, A, B, lda, ldb, ldc, C, M, N, 1},
                     half};
  gemm_job *g = &h.g;
  /* the float path's split (see sgemm): one block on one thread, else MC rows by columns */
  if ((M * N * K >= WT_GEMM_THREAD_MIN && wt_pool_threads() > 1) || wt_pool_split_small()) {
    int64_t target = 2 * (int64_t)wt_pool_threads();
    if (target > WT_GEMM_BLOCKS) target = WT_GEMM_BLOCKS;
    if (target < 2) target = 2;
    g->mb = MC;
    g->mblocks = (M + MC - 1) / MC;
    int64_t nsplit = (target + g->mblocks - 1) / g->mblocks;
    int64_t nb = (N + nsplit - 1) / nsplit;
    nb = (nb + NR - 1) / NR * NR;
    if (nb < 4 * NR) nb = 4 * NR;
    g->nb = nb < N ? nb : N;
  }
  wt_parallel_for(g->mblocks * ((N + g->nb - 1) / g->nb), packed_task_half, &h);
}
