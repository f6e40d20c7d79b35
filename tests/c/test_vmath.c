/* Accuracy of the vector math of src/backend/cpu/vmath.h against libm in double, over every
 * 1021st float of each sign plus special values (inf, NaN, -0, overflow/underflow edges).
 * Prints a hash of all results: it must be the same in the native, scalar (WT_SIMD_SCALAR) and
 * wasm builds. Also checks the vectorized 2x2 / stride-2 max pool (with argmax) against a
 * brute-force reference, ties and NaN included. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "backend/cpu/pool.h"
#include "backend/cpu/vmath.h"

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* Evaluates 4 inputs at once (different lanes, so lane mix-ups would show). */
typedef wt_f32x4 (*vfn)(wt_f32x4);
static void eval4(vfn f, const float *x, float *y) { wt_f32x4_store(y, f(wt_f32x4_load(x))); }

typedef struct {
  double max_rel, max_abs;
  float at_rel, at_abs;
} errs;

/* Sweeps all finite floats of both signs (stride 1021 over the bit patterns). rel counts only
 * where the reference is a normal float; abs everywhere. */
static errs sweep(vfn f, double (*ref)(double), uint32_t max_bits) {
  errs e = {0, 0, 0, 0};
  float x[4], y[4];
  int k = 0;
  for (int sign = 0; sign < 2; sign++) {
    for (uint32_t b = 0; b <= max_bits; b += 1021) {
      x[k++] = from_bits(b | (sign ? 0x80000000u : 0));
      if (k < 4) continue;
      k = 0;
      eval4(f, x, y);
      for (int i = 0; i < 4; i++) {
        double r = ref(x[i]);
        double rf = (float)r;
        if (isinf(rf) || isnan(r)) {
          if (!(y[i] == rf || (isnan(r) && isnan(y[i])))) {
            fprintf(stderr, "f(%.9g) = %.9g; expected %.9g\n", x[i], y[i], rf);
            wt_check_failures++;
          }
          continue;
        }
        double ab = fabs(y[i] - r);
        if (ab > e.max_abs) e.max_abs = ab, e.at_abs = x[i];
        if (fabs(r) >= FLT_MIN) {
          double rel = ab / fabs(r);
          if (rel > e.max_rel) e.max_rel = rel, e.at_rel = x[i];
        }
      }
    }
  }
  return e;
}

static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

static int same_bits(float a, float b) { return memcmp(&a, &b, 4) == 0; }

static uint64_t hash_results(void) {
  vfn fs[5] = {wt_f32x4_exp, wt_f32x4_erf, wt_f32x4_tanh, wt_f32x4_sigmoid, wt_f32x4_erf_rational};
  uint64_t h = 1469598103934665603u;
  for (int f = 0; f < 5; f++)
    for (uint32_t b = 0; b < 0xfff00000u; b += 4093 * 4) {
      float x[4] = {from_bits(b), from_bits(b + 4093), from_bits(b + 2 * 4093), from_bits(b + 3 * 4093)}, y[4];
      eval4(fs[f], x, y);
      for (int i = 0; i < 4; i++) {
        uint32_t u;
        memcpy(&u, &y[i], 4);
        if (y[i] != y[i]) u = 0x7fc00000u; /* NaN payloads may differ between targets */
        h = (h ^ u) * 1099511628211u;
      }
    }
  return h;
}

/* 2x2 / stride-2 max pool on [2, H, W] with few distinct values (ties) and a NaN. */
static void check_maxpool(int64_t H, int64_t W, int64_t pad) {
  wt_conv_geom g = {.img = {1, H, W}, .k = {1, 2, 2}, .stride = {1, 2, 2}, .dil = {1, 1, 1},
                    .pad = {0, pad, pad}};
  g.grid[0] = 1;
  g.grid[1] = (H + 2 * pad - 2) / 2 + 1;
  g.grid[2] = (W + 2 * pad - 2) / 2 + 1;
  enum { CAP = 2 * 40 * 40 };
  float x[CAP], y[CAP], y2[CAP], tmp[64];
  int64_t idx[CAP];
  unsigned seed = 7;
  for (int64_t i = 0; i < 2 * H * W; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 16) % 5);
  }
  x[3] = NAN;
  wt_maxpool_indices(&g, 2, 0, x, y, idx);
  wt_maxpool(&g, 2, x, y2, tmp);
  int64_t G1 = g.grid[1], G2 = g.grid[2];
  for (int64_t c = 0; c < 2; c++)
    for (int64_t oh = 0; oh < G1; oh++)
      for (int64_t ow = 0; ow < G2; ow++) {
        float m = 0;
        int64_t bi = -1;
        int has_nan = 0;
        for (int64_t kh = 0; kh < 2; kh++)
          for (int64_t kw = 0; kw < 2; kw++) {
            int64_t ih = oh * 2 - pad + kh, iw = ow * 2 - pad + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            float v = x[c * H * W + ih * W + iw];
            has_nan |= isnan(v);
            if (bi < 0 || v > m) m = v, bi = c * H * W + ih * W + iw;
          }
        int64_t o = c * G1 * G2 + oh * G2 + ow;
        CHECK(idx[o] == bi);
        CHECK(same_bits(y[o], m));
        if (!has_nan) CHECK(y2[o] == m); /* without indices, NaN order is not specified */
      }
}

int main(void) {
  errs e;
  /* up to 2^7 = 128 in magnitude: beyond that every function is saturated (checked below) */
  const uint32_t to128 = 0x43000000u;

  e = sweep(wt_f32x4_exp, exp, to128);
  printf("exp: max rel %.3g at %.9g, max abs %.3g at %.9g\n", e.max_rel, e.at_rel, e.max_abs, e.at_abs);
  CHECK(e.max_rel <= 2.0e-7);
  CHECK(e.max_abs <= 2e-45 || e.at_abs > 1.0f); /* subnormal results: within one 2^-149 step */
  e = sweep(wt_f32x4_erf, erf, 0x7f7fffffu);
  printf("erf: max abs %.3g at %.9g, max rel %.3g at %.9g\n", e.max_abs, e.at_abs, e.max_rel, e.at_rel);
  CHECK(e.max_abs <= 1.5e-7);
  CHECK(e.max_rel <= 3e-7);
  /* GELU's erf (x P(x^2) / Q(x^2)): every float, and a dense sweep of [-5, 5] (2^21 points) */
  e = sweep(wt_f32x4_erf_rational, erf, 0x7f7fffffu);
  double dense = 0;
  float dense_at = 0;
  for (int i = -(1 << 20); i <= (1 << 20); i += 4) {
    float x[4], y[4];
    for (int k = 0; k < 4; k++) x[k] = 5.0f * (float)(i + k) / (float)(1 << 20);
    eval4(wt_f32x4_erf_rational, x, y);
    for (int k = 0; k < 4; k++)
      if (fabs(y[k] - erf(x[k])) > dense) dense = fabs(y[k] - erf(x[k])), dense_at = x[k];
  }
  printf("erf (rational, GELU's): max abs %.3g at %.9g, dense sweep of [-5, 5] %.3g at %.9g\n", e.max_abs,
         e.at_abs, dense, dense_at);
  CHECK(e.max_abs <= 4.5e-7 && dense <= 4.5e-7);
  CHECK(wt_vm_erf_rationalf(INFINITY) == 1.0f && wt_vm_erf_rationalf(-INFINITY) == -1.0f);
  CHECK(same_bits(wt_vm_erf_rationalf(-0.0f), -0.0f) && isnan(wt_vm_erf_rationalf(NAN)));
  for (float x = -4.0f; x <= 4.0f; x += 0.125f) CHECK(wt_vm_erf_rationalf(-x) == -wt_vm_erf_rationalf(x));
  e = sweep(wt_f32x4_tanh, tanh, 0x7f7fffffu);
  printf("tanh: max abs %.3g at %.9g, max rel %.3g at %.9g\n", e.max_abs, e.at_abs, e.max_rel, e.at_rel);
  CHECK(e.max_abs <= 1.5e-7);
  CHECK(e.max_rel <= 3e-7);
  e = sweep(wt_f32x4_sigmoid, sigmoid_d, 0x7f7fffffu);
  printf("sigmoid: max abs %.3g at %.9g, max rel %.3g at %.9g\n", e.max_abs, e.at_abs, e.max_rel, e.at_rel);
  CHECK(e.max_abs <= 1.5e-7);
  CHECK(e.max_rel <= 3e-7);

  /* Exp: overflow and underflow edges, specials. */
  CHECK(isinf(wt_vm_expf(88.7228394f)) && wt_vm_expf(88.7228394f) > 0);
  CHECK(isfinite(wt_vm_expf(88.7228317f)));
  CHECK(wt_vm_expf(INFINITY) == INFINITY);
  CHECK(wt_vm_expf(1e30f) == INFINITY);
  CHECK(wt_vm_expf(-INFINITY) == 0.0f);
  CHECK(wt_vm_expf(-1e30f) == 0.0f);
  CHECK(wt_vm_expf(-103.0f) > 0.0f);      /* subnormal, not flushed */
  CHECK(wt_vm_expf(-104.0f) == 0.0f);
  CHECK(wt_vm_expf(0.0f) == 1.0f && wt_vm_expf(-0.0f) == 1.0f);
  CHECK(isnan(wt_vm_expf(NAN)) && isnan(wt_vm_expf(-NAN)));
  CHECK_NEAR(wt_vm_expf(-87.5f), expf(-87.5f), 2e-45);
  /* Erf / tanh: odd, saturated, -0 kept, NaN through. */
  CHECK(wt_vm_erff(INFINITY) == 1.0f && wt_vm_erff(-INFINITY) == -1.0f);
  CHECK(wt_vm_erff(5.0f) == 1.0f && wt_vm_erff(-1e30f) == -1.0f);
  CHECK(same_bits(wt_vm_erff(-0.0f), -0.0f) && same_bits(wt_vm_erff(0.0f), 0.0f));
  CHECK(isnan(wt_vm_erff(NAN)));
  CHECK_NEAR(wt_vm_erff(1e-30f) / (1.1283791670955126 * 1e-30), 1.0, 1.2e-7);
  CHECK(wt_vm_tanhf(INFINITY) == 1.0f && wt_vm_tanhf(-INFINITY) == -1.0f);
  CHECK(wt_vm_tanhf(20.0f) == 1.0f && wt_vm_tanhf(-1e30f) == -1.0f);
  CHECK(same_bits(wt_vm_tanhf(-0.0f), -0.0f));
  CHECK(isnan(wt_vm_tanhf(NAN)));
  CHECK(wt_vm_tanhf(1e-20f) == 1e-20f);
  for (float x = -3.0f; x <= 3.0f; x += 0.125f) CHECK(wt_vm_tanhf(-x) == -wt_vm_tanhf(x));
  for (float x = -3.0f; x <= 3.0f; x += 0.125f) CHECK(wt_vm_erff(-x) == -wt_vm_erff(x));
  /* Sigmoid: saturation without NaN, tiny tails, specials. */
  CHECK(wt_vm_sigmoidf(INFINITY) == 1.0f && wt_vm_sigmoidf(-INFINITY) == 0.0f);
  CHECK(wt_vm_sigmoidf(0.0f) == 0.5f && wt_vm_sigmoidf(-0.0f) == 0.5f);
  CHECK(isnan(wt_vm_sigmoidf(NAN)));
  CHECK_NEAR(wt_vm_sigmoidf(-80.0f) / 1.80485139e-35, 1.0, 3e-7);
  CHECK(wt_vm_sigmoidf(-95.0f) > 0.0f); /* subnormal */
  /* Lanes are independent: a NaN or inf in one lane leaves the others alone. */
  {
    float x[4] = {NAN, 1.0f, -INFINITY, 0.5f}, y[4];
    eval4(wt_f32x4_exp, x, y);
    CHECK(isnan(y[0]) && y[1] == wt_vm_expf(1.0f) && y[2] == 0.0f && y[3] == wt_vm_expf(0.5f));
    eval4(wt_f32x4_erf, x, y);
    CHECK(isnan(y[0]) && y[1] == wt_vm_erff(1.0f) && y[2] == -1.0f && y[3] == wt_vm_erff(0.5f));
  }
  check_maxpool(8, 8, 0);
  check_maxpool(9, 21, 0);
  check_maxpool(12, 26, 1);
  check_maxpool(40, 40, 0);
  printf("hash %016llx (%s)\n", (unsigned long long)hash_results(), WT_SIMD_NAME);
  CHECK_DONE();
}
