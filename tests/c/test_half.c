/* float16 <-> float32 (base/half.h): widening checked exhaustively over all 65536 float16 values
 * against a plain arithmetic definition (subnormals, zeros, inf, NaN payloads); narrowing
 * checked at every float16 value, at every midpoint between neighbours (ties to even) and just
 * either side of it, at the overflow edge, and against the compiler's own _Float16 conversion on
 * a sample of bit patterns where the compiler has one. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/half.h"
#include "check.h"

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* The value of float16 h by its definition (not by bit moves). */
static double ref_value(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

static void widen_all(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = wt_f16_to_f32((uint16_t)h);
    double r = ref_value((uint16_t)h);
    if (isnan(r)) {
      /* NaN: sign and payload kept in the top mantissa bits */
      uint32_t want = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
      if (bits_of(f) != want) bad++;
    } else if ((double)f != r || !signbit(f) != !signbit(r)) {
      bad++;
    }
  }
  CHECK(bad == 0);
  float buf[3];
  wt_f16_to_f32_n(buf, (const uint16_t[]){0x3c00, 0xc000, 0x0001}, 3);
  CHECK(buf[0] == 1.0f && buf[1] == -2.0f && buf[2] == ldexpf(1, -24));
}

static void narrow_edges(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 0x7c00; h++) {
    for (int neg = 0; neg < 2; neg++) {
      uint16_t sign = neg ? 0x8000 : 0;
      float a = wt_f16_to_f32((uint16_t)(h | sign));
      if (wt_f32_to_f16(a) != (uint16_t)(h | sign)) bad++;               /* exact values */
      float b = h + 1 == 0x7c00 ? (neg ? -65536.0f : 65536.0f) : wt_f16_to_f32((uint16_t)((h + 1) | sign));
      float mid = (float)(((double)a + (double)b) / 2); /* exact: one bit more than float16 */
      uint16_t even = (uint16_t)(((h & 1) ? h + 1 : h) | sign);
      if (wt_f32_to_f16(mid) != even) bad++;                              /* ties to even */
      float toward_b = nextafterf(mid, b), toward_a = nextafterf(mid, a);
      if (wt_f32_to_f16(toward_b) != (uint16_t)((h + 1) | sign)) bad++;   /* past the midpoint */
      if (wt_f32_to_f16(toward_a) != (uint16_t)(h | sign)) bad++;
    }
  }
  CHECK(bad == 0);
  CHECK(wt_f32_to_f16(65504.0f) == 0x7bff);
  CHECK(wt_f32_to_f16(65519.996f) == 0x7bff);
  CHECK(wt_f32_to_f16(65520.0f) == 0x7c00);  /* the tie above the largest float16 goes to inf */
  CHECK(wt_f32_to_f16(1e10f) == 0x7c00 && wt_f32_to_f16(-1e10f) == 0xfc00);
  CHECK(wt_f32_to_f16(INFINITY) == 0x7c00 && wt_f32_to_f16(-INFINITY) == 0xfc00);
  CHECK(wt_f32_to_f16(ldexpf(1, -25)) == 0x0000);             /* tie between 0 and 2^-24: even */
  CHECK(wt_f32_to_f16(nextafterf(ldexpf(1, -25), 1)) == 0x0001);
  CHECK(wt_f32_to_f16(-0.0f) == 0x8000 && wt_f32_to_f16(1e-30f) == 0);
  uint16_t q = wt_f32_to_f16(NAN);
  CHECK((q & 0x7c00) == 0x7c00 && (q & 0x3ff) != 0 && (q & 0x200));   /* a quiet NaN */
  uint32_t snan_bits = 0x7f800001u;                                    /* payload only in low bits */
  float snan;
  memcpy(&snan, &snan_bits, 4);
  uint16_t s = wt_f32_to_f16(snan);
  CHECK((s & 0x7c00) == 0x7c00 && (s & 0x3ff) != 0);                   /* still NaN, not inf */
  /* every float16 NaN survives a round trip as a NaN with its payload */
  int bad_nan = 0;
  for (uint32_t m = 1; m < 1024; m++) {
    uint16_t h = (uint16_t)(0x7c00 | m), back = wt_f32_to_f16(wt_f16_to_f32(h));
    if ((back & 0x7c00) != 0x7c00 || (back & 0x1ff) != (m & 0x1ff)) bad_nan++;
  }
  CHECK(bad_nan == 0);
  uint16_t out[3];
  CHECK(wt_f32_to_f16_n(out, (const float[]){1e6f, 1.0f, INFINITY}, 3) == 1); /* only 1e6 overflowed */
  CHECK(out[0] == 0x7c00 && out[1] == 0x3c00 && out[2] == 0x7c00);
}

#if defined(__FLT16_MANT_DIG__) && !defined(__EMSCRIPTEN__)
/* The compiler's conversion (x86-64 SSE2 / F16C, rounding to nearest even) on 2^24 patterns
 * spread over every exponent. */
static void against_compiler(void) {
  int bad = 0;
  uint32_t x = 12345;
  for (int i = 0; i < (1 << 24); i++) {
    x = x * 1664525u + 1013904223u;
    float f;
    memcpy(&f, &x, 4);
    if (isnan(f)) continue;
    _Float16 c = (_Float16)f;
    uint16_t want;
    memcpy(&want, &c, 2);
    if (wt_f32_to_f16(f) != want) bad++;
  }
  CHECK(bad == 0);
}
#endif

int main(void) {
  widen_all();
  narrow_edges();
#if defined(__FLT16_MANT_DIG__) && !defined(__EMSCRIPTEN__)
  against_compiler();
#endif
  CHECK_DONE();
}
