/* A small 4 x float32 vector vocabulary shared by every kernel.
 *   - Emscripten with -msimd128: wasm_simd128.h intrinsics.
 *   - Native GCC/Clang: vector extensions (same semantics, runs under sanitizers).
 *   - WT_SIMD_SCALAR defined: a plain struct of four floats (the scalar reference build).
 * Kernels written against this header are tested natively and in wasm with the same code.
 * wt_f32x4_fma is mul + add (two roundings) on every target, so results match bit for bit
 * across targets, except in the relaxed-SIMD build (-mrelaxed-simd: dist/fma/): there it is
 * Relaxed SIMD's f32x4.relaxed_madd, which engines run fused where the CPU has FMA (one
 * rounding; last bits differ from the other builds, the same at any thread count). */
#ifndef WT_KERNELS_SIMD_H
#define WT_KERNELS_SIMD_H

#include <stdint.h>
#include <string.h>

#if defined(__wasm_simd128__) && !defined(WT_SIMD_SCALAR)
#include <wasm_simd128.h>
typedef v128_t wt_f32x4;
#if defined(__wasm_relaxed_simd__)
#define WT_SIMD_NAME "wasm-relaxed-simd"
#else
#define WT_SIMD_NAME "wasm-simd128"
#endif
static inline wt_f32x4 wt_f32x4_load(const float *p) { return wasm_v128_load(p); }
static inline void wt_f32x4_store(float *p, wt_f32x4 v) { wasm_v128_store(p, v); }
/* Lanes 0-1 (lo) or 2-3 (hi) to p[0..1]: one 64-bit store. */
static inline void wt_f32x4_store_lo2(float *p, wt_f32x4 v) { wasm_v128_store64_lane(p, v, 0); }
static inline void wt_f32x4_store_hi2(float *p, wt_f32x4 v) { wasm_v128_store64_lane(p, v, 1); }
static inline wt_f32x4 wt_f32x4_splat(float x) { return wasm_f32x4_splat(x); }
static inline wt_f32x4 wt_f32x4_zero(void) { return wasm_f32x4_splat(0.0f); }
static inline wt_f32x4 wt_f32x4_add(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_add(a, b); }
static inline wt_f32x4 wt_f32x4_sub(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_sub(a, b); }
static inline wt_f32x4 wt_f32x4_mul(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_mul(a, b); }
static inline wt_f32x4 wt_f32x4_div(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_div(a, b); }
static inline wt_f32x4 wt_f32x4_sqrt(wt_f32x4 a) { return wasm_f32x4_sqrt(a); }
static inline wt_f32x4 wt_f32x4_abs(wt_f32x4 a) { return wasm_f32x4_abs(a); }
static inline wt_f32x4 wt_f32x4_neg(wt_f32x4 a) { return wasm_f32x4_neg(a); }
/* NaN-propagating like fmaxf is not guaranteed; pmax = (a < b) ? b : a. */
static inline wt_f32x4 wt_f32x4_max(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_pmax(a, b); }
static inline wt_f32x4 wt_f32x4_min(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_pmin(a, b); }
/* Lanes where a > b are all ones. */
static inline wt_f32x4 wt_f32x4_gt(wt_f32x4 a, wt_f32x4 b) { return wasm_f32x4_gt(a, b); }
/* mask ? a : b, lane-wise (mask lanes all ones or all zeros). */
static inline wt_f32x4 wt_f32x4_select(wt_f32x4 mask, wt_f32x4 a, wt_f32x4 b) {
  return wasm_v128_bitselect(a, b, mask);
}
static inline float wt_f32x4_lane(wt_f32x4 v, int i) {
  float t[4];
  wasm_v128_store(t, v);
  return t[i];
}
/* Bit-level helpers (for the exponent tricks of vmath.h): lanes as raw 32-bit patterns. */
static inline wt_f32x4 wt_f32x4_bits_splat(uint32_t bits) { return wasm_i32x4_splat((int32_t)bits); }
static inline wt_f32x4 wt_f32x4_and(wt_f32x4 a, wt_f32x4 b) { return wasm_v128_and(a, b); }
static inline wt_f32x4 wt_f32x4_or(wt_f32x4 a, wt_f32x4 b) { return wasm_v128_or(a, b); }
/* Integer left shift of each lane's bit pattern. */
static inline wt_f32x4 wt_f32x4_shl_bits(wt_f32x4 a, int n) { return wasm_i32x4_shl(a, (uint32_t)n); }
/* Deinterleave of the 8 floats a, b: even {a0, a2, b0, b2}, odd {a1, a3, b1, b3}. */
static inline wt_f32x4 wt_f32x4_even(wt_f32x4 a, wt_f32x4 b) { return wasm_i32x4_shuffle(a, b, 0, 2, 4, 6); }
static inline wt_f32x4 wt_f32x4_odd(wt_f32x4 a, wt_f32x4 b) { return wasm_i32x4_shuffle(a, b, 1, 3, 5, 7); }
/* Interleave of a and b: lo {a0, b0, a1, b1}, hi {a2, b2, a3, b3}. */
static inline wt_f32x4 wt_f32x4_zip_lo(wt_f32x4 a, wt_f32x4 b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }
static inline wt_f32x4 wt_f32x4_zip_hi(wt_f32x4 a, wt_f32x4 b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(WT_SIMD_SCALAR)
typedef float wt_f32x4 __attribute__((vector_size(16)));
typedef int wt_i32x4_ __attribute__((vector_size(16)));
#define WT_SIMD_NAME "gnu-vector-128"
static inline wt_f32x4 wt_f32x4_load(const float *p) {
  wt_f32x4 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void wt_f32x4_store(float *p, wt_f32x4 v) { memcpy(p, &v, sizeof v); }
static inline void wt_f32x4_store_lo2(float *p, wt_f32x4 v) { memcpy(p, &v, 2 * sizeof(float)); }
static inline void wt_f32x4_store_hi2(float *p, wt_f32x4 v) { memcpy(p, (const char *)&v + 8, 2 * sizeof(float)); }
static inline wt_f32x4 wt_f32x4_splat(float x) { return (wt_f32x4){x, x, x, x}; }
static inline wt_f32x4 wt_f32x4_zero(void) { return (wt_f32x4){0, 0, 0, 0}; }
static inline wt_f32x4 wt_f32x4_add(wt_f32x4 a, wt_f32x4 b) { return a + b; }
static inline wt_f32x4 wt_f32x4_sub(wt_f32x4 a, wt_f32x4 b) { return a - b; }
static inline wt_f32x4 wt_f32x4_mul(wt_f32x4 a, wt_f32x4 b) { return a * b; }
static inline wt_f32x4 wt_f32x4_div(wt_f32x4 a, wt_f32x4 b) { return a / b; }
static inline wt_f32x4 wt_f32x4_sqrt(wt_f32x4 a) {
  return (wt_f32x4){__builtin_sqrtf(a[0]), __builtin_sqrtf(a[1]), __builtin_sqrtf(a[2]),
                    __builtin_sqrtf(a[3])};
}
static inline wt_f32x4 wt_f32x4_select(wt_f32x4 mask, wt_f32x4 a, wt_f32x4 b) {
  wt_i32x4_ m, ai, bi, r;
  memcpy(&m, &mask, 16);
  memcpy(&ai, &a, 16);
  memcpy(&bi, &b, 16);
  r = (ai & m) | (bi & ~m);
  memcpy(&a, &r, 16);
  return a;
}
static inline wt_f32x4 wt_f32x4_gt(wt_f32x4 a, wt_f32x4 b) {
  wt_i32x4_ m = a > b;
  wt_f32x4 r;
  memcpy(&r, &m, 16);
  return r;
}
static inline wt_f32x4 wt_f32x4_abs(wt_f32x4 a) {
  wt_i32x4_ ai;
  memcpy(&ai, &a, 16);
  ai &= 0x7fffffff;
  memcpy(&a, &ai, 16);
  return a;
}
static inline wt_f32x4 wt_f32x4_neg(wt_f32x4 a) { return -a; }
static inline wt_f32x4 wt_f32x4_max(wt_f32x4 a, wt_f32x4 b) { return wt_f32x4_select(wt_f32x4_gt(b, a), b, a); }
static inline wt_f32x4 wt_f32x4_min(wt_f32x4 a, wt_f32x4 b) { return wt_f32x4_select(wt_f32x4_gt(a, b), b, a); }
static inline float wt_f32x4_lane(wt_f32x4 v, int i) { return v[i]; }
static inline wt_f32x4 wt_f32x4_bits_splat(uint32_t bits) {
  wt_i32x4_ m = {(int)bits, (int)bits, (int)bits, (int)bits};
  wt_f32x4 r;
  memcpy(&r, &m, 16);
  return r;
}
static inline wt_f32x4 wt_f32x4_and(wt_f32x4 a, wt_f32x4 b) {
  wt_i32x4_ ai, bi;
  memcpy(&ai, &a, 16);
  memcpy(&bi, &b, 16);
  ai &= bi;
  memcpy(&a, &ai, 16);
  return a;
}
static inline wt_f32x4 wt_f32x4_or(wt_f32x4 a, wt_f32x4 b) {
  wt_i32x4_ ai, bi;
  memcpy(&ai, &a, 16);
  memcpy(&bi, &b, 16);
  ai |= bi;
  memcpy(&a, &ai, 16);
  return a;
}
static inline wt_f32x4 wt_f32x4_shl_bits(wt_f32x4 a, int n) {
  typedef unsigned wt_u32x4_ __attribute__((vector_size(16)));
  wt_u32x4_ ai;
  memcpy(&ai, &a, 16);
  ai <<= (unsigned)n;
  memcpy(&a, &ai, 16);
  return a;
}
static inline wt_f32x4 wt_f32x4_even(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){a[0], a[2], b[0], b[2]}; }
static inline wt_f32x4 wt_f32x4_odd(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){a[1], a[3], b[1], b[3]}; }
static inline wt_f32x4 wt_f32x4_zip_lo(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){a[0], b[0], a[1], b[1]}; }
static inline wt_f32x4 wt_f32x4_zip_hi(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){a[2], b[2], a[3], b[3]}; }
#else
typedef struct wt_f32x4 { float v[4]; } wt_f32x4;
#define WT_SIMD_NAME "scalar"
static inline wt_f32x4 wt_f32x4_load(const float *p) {
  wt_f32x4 r;
  memcpy(r.v, p, sizeof r.v);
  return r;
}
static inline void wt_f32x4_store(float *p, wt_f32x4 v) { memcpy(p, v.v, sizeof v.v); }
static inline void wt_f32x4_store_lo2(float *p, wt_f32x4 v) { memcpy(p, v.v, 2 * sizeof(float)); }
static inline void wt_f32x4_store_hi2(float *p, wt_f32x4 v) { memcpy(p, v.v + 2, 2 * sizeof(float)); }
static inline wt_f32x4 wt_f32x4_splat(float x) { return (wt_f32x4){{x, x, x, x}}; }
static inline wt_f32x4 wt_f32x4_zero(void) { return wt_f32x4_splat(0.0f); }
#define WT_F32X4_MAP2_(name, expr)                                  \
  static inline wt_f32x4 name(wt_f32x4 a, wt_f32x4 b) {             \
    wt_f32x4 r;                                                     \
    for (int i = 0; i < 4; i++) r.v[i] = (expr);                    \
    return r;                                                       \
  }
WT_F32X4_MAP2_(wt_f32x4_add, a.v[i] + b.v[i])
WT_F32X4_MAP2_(wt_f32x4_sub, a.v[i] - b.v[i])
WT_F32X4_MAP2_(wt_f32x4_mul, a.v[i] * b.v[i])
WT_F32X4_MAP2_(wt_f32x4_div, a.v[i] / b.v[i])
WT_F32X4_MAP2_(wt_f32x4_max, a.v[i] < b.v[i] ? b.v[i] : a.v[i])
WT_F32X4_MAP2_(wt_f32x4_min, b.v[i] < a.v[i] ? b.v[i] : a.v[i])
static inline wt_f32x4 wt_f32x4_gt(wt_f32x4 a, wt_f32x4 b) {
  wt_f32x4 r;
  for (int i = 0; i < 4; i++) {
    unsigned m = a.v[i] > b.v[i] ? 0xffffffffu : 0u;
    memcpy(&r.v[i], &m, 4);
  }
  return r;
}
static inline wt_f32x4 wt_f32x4_select(wt_f32x4 mask, wt_f32x4 a, wt_f32x4 b) {
  wt_f32x4 r;
  for (int i = 0; i < 4; i++) {
    unsigned m;
    memcpy(&m, &mask.v[i], 4);
    r.v[i] = m ? a.v[i] : b.v[i];
  }
  return r;
}
static inline wt_f32x4 wt_f32x4_sqrt(wt_f32x4 a) {
  for (int i = 0; i < 4; i++) a.v[i] = __builtin_sqrtf(a.v[i]);
  return a;
}
static inline wt_f32x4 wt_f32x4_abs(wt_f32x4 a) {
  for (int i = 0; i < 4; i++) a.v[i] = a.v[i] < 0 ? -a.v[i] : a.v[i];
  return a;
}
static inline wt_f32x4 wt_f32x4_neg(wt_f32x4 a) {
  for (int i = 0; i < 4; i++) a.v[i] = -a.v[i];
  return a;
}
static inline float wt_f32x4_lane(wt_f32x4 v, int i) { return v.v[i]; }
static inline wt_f32x4 wt_f32x4_bits_splat(uint32_t bits) {
  wt_f32x4 r;
  for (int i = 0; i < 4; i++) memcpy(&r.v[i], &bits, 4);
  return r;
}
#define WT_F32X4_BITS2_(name, OP)                                   \
  static inline wt_f32x4 name(wt_f32x4 a, wt_f32x4 b) {             \
    for (int i = 0; i < 4; i++) {                                   \
      uint32_t x, y;                                                \
      memcpy(&x, &a.v[i], 4);                                       \
      memcpy(&y, &b.v[i], 4);                                       \
      x = x OP y;                                                   \
      memcpy(&a.v[i], &x, 4);                                       \
    }                                                               \
    return a;                                                       \
  }
WT_F32X4_BITS2_(wt_f32x4_and, &)
WT_F32X4_BITS2_(wt_f32x4_or, |)
static inline wt_f32x4 wt_f32x4_shl_bits(wt_f32x4 a, int n) {
  for (int i = 0; i < 4; i++) {
    uint32_t x;
    memcpy(&x, &a.v[i], 4);
    x <<= (unsigned)n;
    memcpy(&a.v[i], &x, 4);
  }
  return a;
}
static inline wt_f32x4 wt_f32x4_even(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){{a.v[0], a.v[2], b.v[0], b.v[2]}}; }
static inline wt_f32x4 wt_f32x4_odd(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){{a.v[1], a.v[3], b.v[1], b.v[3]}}; }
static inline wt_f32x4 wt_f32x4_zip_lo(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){{a.v[0], b.v[0], a.v[1], b.v[1]}}; }
static inline wt_f32x4 wt_f32x4_zip_hi(wt_f32x4 a, wt_f32x4 b) { return (wt_f32x4){{a.v[2], b.v[2], a.v[3], b.v[3]}}; }
#endif

/* a * b + c: two roundings, or one in the relaxed-SIMD build (fused where the CPU has FMA). */
static inline wt_f32x4 wt_f32x4_fma(wt_f32x4 a, wt_f32x4 b, wt_f32x4 c) {
#if defined(__wasm_relaxed_simd__) && !defined(WT_SIMD_SCALAR) && __clang_major__ >= 16
  return __builtin_wasm_relaxed_madd_f32x4(a, b, c);
#elif defined(__wasm_relaxed_simd__) && !defined(WT_SIMD_SCALAR)
  /* clang 14 (Emscripten 3.1.6's) knows only the relaxed-SIMD prototype, f32x4.fma(x, y, z) =
   * x + y * z under the obsolete opcode 0xfd 0xaf, which engines no longer accept (binaryen 108
   * folds constants with that meaning too). scripts/wasm-relaxed.mjs rewrites each one in the
   * linked module to the final f32x4.relaxed_madd(y, z, x) = y * z + x. */
  return __builtin_wasm_fma_f32x4(c, a, b);
#else
  return wt_f32x4_add(wt_f32x4_mul(a, b), c);
#endif
}
/* Sum of the four lanes, in the fixed order (l0 + l2) + (l1 + l3). */
static inline float wt_f32x4_hsum(wt_f32x4 v) {
  return (wt_f32x4_lane(v, 0) + wt_f32x4_lane(v, 2)) + (wt_f32x4_lane(v, 1) + wt_f32x4_lane(v, 3));
}
static inline float wt_f32x4_hmax(wt_f32x4 v) {
  float a = wt_f32x4_lane(v, 0), b = wt_f32x4_lane(v, 1), c = wt_f32x4_lane(v, 2), d = wt_f32x4_lane(v, 3);
  float m1 = a < b ? b : a, m2 = c < d ? d : c;
  return m1 < m2 ? m2 : m1;
}

#endif
