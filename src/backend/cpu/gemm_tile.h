/* The GEMM's internal vocabulary, shared by its packed path (gemm.c) and its unpacked paths
 * for thin and small shapes (gemm_small.c): the register tile and cache blocks, and the helpers
 * both use. Not part of the kernels' interface (that is gemm.h). */
#ifndef WT_KERNELS_GEMM_TILE_H
#define WT_KERNELS_GEMM_TILE_H

#include <stdint.h>

#include "backend/cpu/simd.h"

/* Register tile: MR rows x NR columns (NR / 4 vectors per row), and the k loop unrolled KU
 * times. Measured in Node 20 on this project's 2-core AMD EPYC hosts (gemm_bench, n = 512,
 * best of interleaved runs): the k step is bound by the front end, not the vector ports.
 * - SIMD128 (a multiply and an add per 4-lane step): 4 x 8 with k unrolled by 2, 61-64 GFLOP/s
 *   (55 without the unroll: per k, 2 loads, 4 broadcasts, 16 arithmetic and ~8 loop/bounds
 *   instructions; the unroll halves the last). 6 x 8 spills in V8 (12 accumulators, 2 B vectors,
 *   a broadcast and the product's temporary exceed the 16 xmm registers): 34.
 * - Relaxed SIMD (one fused madd per step, no temporary): 4 x 8, 60-62 GFLOP/s. 6 x 8 reached
 *   64-68 on large squares but packs its 6-row panels of A slower, and where a product has few
 *   columns (conv's forward and dX on small grids: resnet18's last stage at batch 2) packing is
 *   most of the work: resnet18's step went 0.80x -> 0.98x PyTorch's. Unrolling k: 46-60, worse.
 *   So 4 x 8 stays the tile, and 6 x 8 (MR_WIDE below) is a second one for large products only,
 *   with its own packing of 6-wide panels from a k-major source (two per 12 columns).
 * On the Intel hosts of earlier measurements the SIMD128 kernel was port-bound instead (mul and add
 * on shared ports) and neither the unroll nor 6 x 8 helped there.
 * 4 x 8 also wastes least on narrow edges (N = 10 output layers). The -D overrides exist for
 * tuning with tests/bench/gemm_bench.c and tests/bench/conv_bench.c. */
#ifndef WT_GEMM_MR
#define WT_GEMM_MR 4
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
/* A second, taller tile for large products in the relaxed-SIMD build (0: none): 6 x 8 keeps 12
 * accumulators, 2 B vectors and a broadcast in the 16 xmm registers when each step is one fused
 * multiply-add. On ViT's products (130-768 rows, 192-768 columns) in Chromium 156: 58-63 GFLOP/s
 * against 53-60 with 4 x 8 (Node 20: +3-7%). It packs 6-row panels of op(A), which cost more
 * where a product has few columns, so gemm.c picks it per product (tile_rows). */
#ifndef WT_GEMM_MR_WIDE
#if defined(__wasm_relaxed_simd__)
#define WT_GEMM_MR_WIDE 6
#else
#define WT_GEMM_MR_WIDE 0
#endif
#endif
#define MR WT_GEMM_MR
#define MR_WIDE WT_GEMM_MR_WIDE
#define MR_MAX (MR_WIDE > MR ? MR_WIDE : MR)
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
/* MC rounded up to whole register tiles of mr rows: with 6-row tiles a batch of 64 rows stays
 * one block (60 would leave a 4-row block that packs all of op(B) again for 4 rows). MC: the
 * largest, which the packing buffers hold. */
#define MC_ROWS(mr) (((WT_GEMM_MC + (mr) - 1) / (mr)) * (mr))
#define MC MC_ROWS(MR_MAX)
#define NC ((WT_GEMM_NC / NR) * NR)

#define UNROLL _Pragma("GCC unroll 16")
#define KU_PRAGMA(x) _Pragma(#x)
#define KU_PRAGMA2(n) KU_PRAGMA(GCC unroll n)
#define KUNROLL KU_PRAGMA2(WT_GEMM_KU)

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Blocks of C the packed path aims for: two per thread (a thread delayed by the machine's other
 * work leaves its second block to the others), at most 8; never narrower than 4 register tiles.
 * Fewer blocks pack less: each block packs its own rows of op(A) (all of them when M is a
 * batch of <= MC rows) and columns of op(B). The bits do not depend on the grid. */
#define WT_GEMM_BLOCKS 8

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

static inline void store_c(float *c, float v, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * v : alpha * v + beta * *c;
}

/* C[rows x cols] = max(C, 0) (the fused ReLU epilogue; NaN is kept, as Relu keeps it). */
static inline void relu_block(float *C, int64_t rows, int64_t cols, int64_t ldc) {
  const wt_f32x4 zero = wt_f32x4_splat(0.0f);
  for (int64_t i = 0; i < rows; i++) {
    float *c = C + i * ldc;
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) wt_f32x4_store(c + j, wt_f32x4_max(wt_f32x4_load(c + j), zero)); /* as Relu's kernel */
    for (; j < cols; j++) c[j] = c[j] < 0.0f ? 0.0f : c[j];
  }
}

/* Packing buffers for a thread of the pool: MC * KC floats for op(A), KC * NC for op(B) (the
 * caller's static ones for thread 0, a worker's scratch otherwise). */
void wt_gemm_thread_buffers(int32_t thread, float **pa, float **pb);

/* C = alpha * op(A) op(B) + beta * C (ReLU after when relu) without packing, when the shape is
 * thin (M or N below the register tile) or small enough for L1; returns 0 (C untouched) when
 * it should take the packed path. Same arithmetic per element as the packed path. */
int wt_gemm_unpacked(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc, int relu);
/* Whether wt_gemm_unpacked takes the shape (1) or leaves it to the packed path (0). */
int wt_gemm_unpacked_shape(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                           int64_t lda, int64_t ldb);

#endif
