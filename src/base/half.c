/* Row conversions between float16 and float32 (the element conversions: half.h). */
#include "base/half.h"

void wt_f16_to_f32_n(float *dst, const uint16_t *src, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = wt_f16_to_f32(src[i]);
}

size_t wt_f32_to_f16_n(uint16_t *dst, const float *src, size_t n) {
  size_t overflow = 0;
  for (size_t i = 0; i < n; i++) {
    dst[i] = wt_f32_to_f16(src[i]);
    overflow += (dst[i] & 0x7fffu) == 0x7c00u && src[i] - src[i] == 0.0f;
  }
  return overflow;
}
