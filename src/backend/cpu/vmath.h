/* Vector transcendental functions on the simd.h vocabulary: exp, erf, tanh, sigmoid.
 * Every step is an IEEE float operation (no FMA, no libm), so wasm, GNU vectors and the scalar
 * build give the same bits; the scalar wrappers (wt_vm_*f) run the same vector code on one lane
 * so that loop tails match the vector body. Accuracy (tests/c/test_vmath.c, against libm in
 * double): exp relative error <= ~2 ulp (denormal results rounded once), erf absolute <= ~1.5e-7,
 * tanh and sigmoid within a few ulp. Inf, -inf, NaN and -0 behave like libm.
 * Polynomial coefficients were fitted for this file (weighted least squares on Chebyshev nodes
 * with mpmath, 40 digits); the fit residuals are far below float rounding. */
#ifndef WT_KERNELS_VMATH_H
#define WT_KERNELS_VMATH_H

#include "backend/cpu/simd.h"

/* Adding 1.5 * 2^23 rounds a float in (-2^22, 2^22) to an integer (nearest, ties to even) and
 * leaves that integer in the low mantissa bits. */
#define WT_VM_MAGIC_ 12582912.0f

/* 2^n for an integral float n in [-126, 127]: (n + 127) lands in the low bits of
 * n + MAGIC + 127, and shifting those bits left by 23 moves them into the exponent field (the
 * magic's own bits all shift out). */
static inline wt_f32x4 wt_vm_pow2i_(wt_f32x4 n) {
  return wt_f32x4_shl_bits(wt_f32x4_add(n, wt_f32x4_splat(WT_VM_MAGIC_ + 127.0f)), 23);
}

/* exp(x) = p * 2^n: sets *n (integral) and returns p = exp(x - n ln2) in [0.7, 1.42]. */
static inline wt_f32x4 wt_vm_exp_parts_(wt_f32x4 x, wt_f32x4 *n_out) {
  wt_f32x4 magic = wt_f32x4_splat(WT_VM_MAGIC_);
  wt_f32x4 n = wt_f32x4_sub(wt_f32x4_fma(x, wt_f32x4_splat(1.44269504088896341f), magic), magic);
  /* r = x - n ln2 in two steps (Cody-Waite): n * 0.693359375 is exact for |n| <= 150. */
  wt_f32x4 r = wt_f32x4_sub(x, wt_f32x4_mul(n, wt_f32x4_splat(0.693359375f)));
  r = wt_f32x4_sub(r, wt_f32x4_mul(n, wt_f32x4_splat(-2.12194440e-4f)));
  /* exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2 (fit residual 3.6e-9 relative). */
  wt_f32x4 p = wt_f32x4_splat(1.37514078958e-3f);
  p = wt_f32x4_fma(p, r, wt_f32x4_splat(8.36891634138e-3f));
  p = wt_f32x4_fma(p, r, wt_f32x4_splat(4.16695331092e-2f));
  p = wt_f32x4_fma(p, r, wt_f32x4_splat(1.66665184600e-1f));
  p = wt_f32x4_fma(p, r, wt_f32x4_splat(4.99999885951e-1f));
  *n_out = n;
  return wt_f32x4_add(wt_f32x4_fma(p, wt_f32x4_mul(r, r), r), wt_f32x4_splat(1.0f));
}

static inline wt_f32x4 wt_f32x4_exp(wt_f32x4 x) {
  /* Beyond these, exp is inf or rounds to 0; pmax/pmin keep a NaN x (it is the first operand). */
  x = wt_f32x4_max(x, wt_f32x4_splat(-104.0f));
  x = wt_f32x4_min(x, wt_f32x4_splat(88.8f));
  wt_f32x4 n, p = wt_vm_exp_parts_(x, &n);
  /* n is in [-150, 128]: scale by 2^n1 * 2^n2 with both halves normal, so a subnormal result
   * is rounded once (by the last multiply) and n = 128 still overflows to inf. */
  wt_f32x4 magic = wt_f32x4_splat(WT_VM_MAGIC_);
  wt_f32x4 n1 = wt_f32x4_sub(wt_f32x4_fma(n, wt_f32x4_splat(0.5f), magic), magic);
  wt_f32x4 n2 = wt_f32x4_sub(n, n1);
  return wt_f32x4_mul(wt_f32x4_mul(p, wt_vm_pow2i_(n1)), wt_vm_pow2i_(n2));
}

/* exp(x) for x in [-80, 80], where the result is a normal float: one scaling multiply. Equal
 * bit for bit to wt_f32x4_exp there (scaling a normal p by powers of two is exact). */
static inline wt_f32x4 wt_vm_exp_normal_(wt_f32x4 x) {
  wt_f32x4 n, p = wt_vm_exp_parts_(x, &n);
  return wt_f32x4_mul(p, wt_vm_pow2i_(n));
}

static inline wt_f32x4 wt_vm_sign_bits_(wt_f32x4 x) {
  return wt_f32x4_and(x, wt_f32x4_bits_splat(0x80000000u));
}

static inline wt_f32x4 wt_f32x4_erf(wt_f32x4 x) {
  wt_f32x4 one = wt_f32x4_splat(1.0f);
  wt_f32x4 a = wt_f32x4_abs(x);
  /* |x| <= 1: erf(x) = x P(x^2) (odd, so -0 stays -0; fit residual 5.9e-10). */
  wt_f32x4 s = wt_f32x4_mul(x, x);
  wt_f32x4 p = wt_f32x4_splat(7.64065733979e-5f);
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(-7.94025706744e-4f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(5.17948720202e-3f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(-2.68484339517e-2f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(1.12834255305e-1f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(-3.76126054120e-1f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(1.12837915821f));
  wt_f32x4 small = wt_f32x4_mul(x, p);
  /* |x| > 1: erf = 1 - exp(-x^2) Q(1/x - 0.625), Q ~ erfc(x) exp(x^2) on [1, 4] (residual
   * 3e-10 after the exp(-x^2) factor); beyond 4, erf rounds to 1. Clamping keeps 1/b finite
   * in the lanes that take the other branch, and a NaN passes through. */
  wt_f32x4 b = wt_f32x4_min(wt_f32x4_max(a, one), wt_f32x4_splat(4.0f));
  wt_f32x4 u = wt_f32x4_sub(wt_f32x4_div(one, b), wt_f32x4_splat(0.625f));
  wt_f32x4 q = wt_f32x4_splat(-1.83039334914e-2f);
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(4.13988985480e-2f));
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(-4.72132315855e-2f));
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(2.34422524821e-2f));
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(4.37634104909e-2f));
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(-1.72396011878e-1f));
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(3.82283837259e-1f));
  q = wt_f32x4_fma(q, u, wt_f32x4_splat(3.05952993590e-1f));
  wt_f32x4 e = wt_vm_exp_normal_(wt_f32x4_neg(wt_f32x4_mul(b, b))); /* b^2 in [1, 16] */
  wt_f32x4 big = wt_f32x4_sub(one, wt_f32x4_mul(e, q));
  big = wt_f32x4_or(big, wt_vm_sign_bits_(x));
  return wt_f32x4_select(wt_f32x4_gt(a, one), big, small);
}

/* An odd function that saturates at +-1: x P(x^2) / Q(x^2) for |x| <= lim, sign(x) beyond (erf
 * here, GELU's 2 gelu' - 1 in elementwise_grad.c). p and q: np and nq coefficients from the
 * highest power down (Horner), q's last 1. Odd (-0 stays -0), +-inf give +-1, NaN passes
 * through (the clamps keep a NaN first operand). Inlined with constant coefficients, it is the
 * straight-line code written out. */
static inline wt_f32x4 wt_vm_odd_rational_(wt_f32x4 x, float lim_, const float *p, int np,
                                           const float *q, int nq) {
  wt_f32x4 lim = wt_f32x4_splat(lim_);
  wt_f32x4 c = wt_f32x4_min(wt_f32x4_max(x, wt_f32x4_neg(lim)), lim);
  wt_f32x4 t = wt_f32x4_mul(c, c);
  wt_f32x4 pv = wt_f32x4_splat(p[0]), qv = wt_f32x4_splat(q[0]);
  for (int i = 1; i < np; i++) pv = wt_f32x4_fma(pv, t, wt_f32x4_splat(p[i]));
  for (int i = 1; i < nq; i++) qv = wt_f32x4_fma(qv, t, wt_f32x4_splat(q[i]));
  wt_f32x4 r = wt_f32x4_div(wt_f32x4_mul(c, pv), qv);
  wt_f32x4 one = wt_f32x4_or(wt_f32x4_splat(1.0f), wt_vm_sign_bits_(x));
  return wt_f32x4_select(wt_f32x4_gt(wt_f32x4_abs(x), lim), one, r);
}

/* erf(x) = x P(x^2) / Q(x^2) for |x| < 3.8325, +-1 beyond (where erf rounds to +-1): GELU's and
 * its gradient's erf (elementwise_unary.c, elementwise_grad.c), with about half the operations
 * of wt_f32x4_erf (no exp, one division). Coefficients fitted for this file (Lawson iterations
 * toward minimax absolute error on [0, 3.8325], 3.3e-8 in double); in float, max absolute error
 * 4.2e-7 (7 ulp of 1) over a dense sweep of [-5, 5] (tests/c/test_vmath.c, mul + add; 1.3e-7
 * for wt_f32x4_erf): like wt_f32x4_erf, no
 * relative accuracy where erf is near -1 (GELU's far negative tail, |gelu| < 1e-5 there). */
static inline wt_f32x4 wt_f32x4_erf_rational(wt_f32x4 x) {
  static const float p[7] = {2.085096718e-08f, -2.010664730e-06f, 1.427265233e-04f, 3.647064790e-03f,
                             5.033994839e-02f, 1.980321109e-01f, 1.128378868e+00f};
  static const float q[5] = {9.501129389e-04f, 1.421321649e-02f, 1.142367423e-01f, 5.088311434e-01f, 1.0f};
  return wt_vm_odd_rational_(x, 3.8325f, p, 7, q, 5);
}

static inline wt_f32x4 wt_f32x4_tanh(wt_f32x4 x) {
  wt_f32x4 one = wt_f32x4_splat(1.0f), lim = wt_f32x4_splat(0.55f);
  wt_f32x4 a = wt_f32x4_abs(x);
  /* |x| <= 0.55: x + x^3 P(x^2) (relative residual 1.1e-9); 1 - 2/(e^2x + 1) would cancel. */
  wt_f32x4 s = wt_f32x4_mul(x, x);
  wt_f32x4 p = wt_f32x4_splat(-6.26436795552e-3f);
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(2.10641370667e-2f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(-5.38502963907e-2f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(1.33325644499e-1f));
  p = wt_f32x4_fma(p, s, wt_f32x4_splat(-3.33333167990e-1f));
  wt_f32x4 small = wt_f32x4_fma(wt_f32x4_mul(x, s), p, x);
  /* Otherwise 1 - 2/(exp(2|x|) + 1) with x's sign; exp overflows to inf for large |x| -> 1. */
  wt_f32x4 e = wt_f32x4_exp(wt_f32x4_add(a, a));
  wt_f32x4 big = wt_f32x4_sub(one, wt_f32x4_div(wt_f32x4_splat(2.0f), wt_f32x4_add(e, one)));
  /* The result has x's sign (also -0 for -0, which the polynomial would turn into +0). */
  return wt_f32x4_or(wt_f32x4_select(wt_f32x4_gt(a, lim), big, small), wt_vm_sign_bits_(x));
}

/* 1 / (1 + exp(-x)), from e = exp(-|x|) <= 1 so nothing overflows: sigmoid(|x|) = 1/(1+e),
 * sigmoid(-|x|) = e/(1+e) (which keeps tiny results accurate). */
static inline wt_f32x4 wt_f32x4_sigmoid(wt_f32x4 x) {
  wt_f32x4 e = wt_f32x4_exp(wt_f32x4_neg(wt_f32x4_abs(x)));
  wt_f32x4 r = wt_f32x4_div(wt_f32x4_splat(1.0f), wt_f32x4_add(wt_f32x4_splat(1.0f), e));
  return wt_f32x4_select(wt_f32x4_gt(wt_f32x4_zero(), x), wt_f32x4_mul(e, r), r);
}

/* Scalar forms: the vector code on lane 0 (loop tails then match the vector body bit for bit). */
static inline float wt_vm_expf(float x) { return wt_f32x4_lane(wt_f32x4_exp(wt_f32x4_splat(x)), 0); }
static inline float wt_vm_erff(float x) { return wt_f32x4_lane(wt_f32x4_erf(wt_f32x4_splat(x)), 0); }
static inline float wt_vm_erf_rationalf(float x) {
  return wt_f32x4_lane(wt_f32x4_erf_rational(wt_f32x4_splat(x)), 0);
}
static inline float wt_vm_tanhf(float x) { return wt_f32x4_lane(wt_f32x4_tanh(wt_f32x4_splat(x)), 0); }
static inline float wt_vm_sigmoidf(float x) {
  return wt_f32x4_lane(wt_f32x4_sigmoid(wt_f32x4_splat(x)), 0);
}

#endif
