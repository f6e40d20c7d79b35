/* IEEE 754 binary16 (float16) <-> binary32, the one definition webtrain converts with: float16 is
 * a storage dtype (frozen weights), widened where a kernel reads it (GEMM packing, Gather rows)
 * and narrowed once, when artifacts generation stores float32 weights as float16.
 * Widening is exact (every float16 is a float); narrowing rounds to nearest, ties to even, as
 * IEEE 754 and numpy's astype(float16) do: overflow gives +-inf, NaN stays NaN (quiet, the top
 * payload bits kept), tiny values become float16 subnormals or +-0. */
#ifndef WT_BASE_HALF_H
#define WT_BASE_HALF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Branch-free, so that loops over it vectorize (GEMM packing, Gather rows): exponent and
 * mantissa moved to float's places, then one multiply by 2^112 rebiases the exponent, exactly for
 * normals and subnormals alike (WebAssembly and the native builds keep subnormals); exponent 31
 * (inf, NaN; 65536 and up after the multiply) gets float's all-ones exponent, the mantissa (NaN
 * payload) kept. */
static inline float wt_f16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)(h & 0x7fffu) << 13;
  float f;
  memcpy(&f, &bits, 4);
  f *= 0x1p112f;
  memcpy(&bits, &f, 4);
  bits |= f >= 65536.0f ? 0x7f800000u : 0u;
  bits |= (uint32_t)(h & 0x8000u) << 16;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t wt_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint16_t o;
  if (x >= 0x47800000u) {          /* >= 2^16 (beyond rounding range), inf or NaN */
    o = x > 0x7f800000u ? (uint16_t)(0x7e00u | ((x >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (x < 0x38800000u) {    /* below float16's smallest normal, 2^-14: subnormal or 0 */
    /* adding 0.5 puts the float16 subnormal's bits at the bottom of the mantissa, rounded by
     * the float addition itself (to nearest even) */
    const uint32_t magic_bits = 126u << 23;
    float v, magic;
    memcpy(&v, &x, 4);
    memcpy(&magic, &magic_bits, 4);
    v += magic;
    uint32_t b;
    memcpy(&b, &v, 4);
    o = (uint16_t)(b - magic_bits);
  } else {
    uint32_t odd = (x >> 13) & 1u;  /* ties to even */
    x += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
    o = (uint16_t)(x >> 13);       /* a carry past 65504 rounds up to inf: right */
  }
  return (uint16_t)(o | (sign >> 16));
}

/* dst[i] = widen(src[i]), i < n. */
void wt_f16_to_f32_n(float *dst, const uint16_t *src, size_t n);
/* dst[i] = narrow(src[i]), i < n. Returns how many finite values became +-inf (|x| >= 65520). */
size_t wt_f32_to_f16_n(uint16_t *dst, const float *src, size_t n);

#endif
