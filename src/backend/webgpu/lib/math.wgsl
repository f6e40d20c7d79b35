// Functions several programs share, pasted where a program says `// include: math`
// (scripts/embed_wgsl.mjs).

// max and min as the CPU kernels compute them (SIMD128's pmax and pmin): a NaN in `a` is kept,
// so a NaN reaches the loss as it does there (WGSL's max and min return the other operand).
fn pmax(a: f32, b: f32) -> f32 { return select(a, b, a < b); }
fn pmin(a: f32, b: f32) -> f32 { return select(a, b, b < a); }

fn sigmoid(v: f32) -> f32 {
  // exp of a non-positive argument only: no overflow for large |v|
  let e = exp(-abs(v));
  return select(e / (1.0 + e), 1.0 / (1.0 + e), v >= 0.0);
}

// erf: x P(x^2) for |x| <= 1; beyond, 1 - exp(-x^2) Q(1/x - 0.625) (Q fits erfc(x) exp(x^2) on
// [1, 4]; past 4 erf rounds to 1). The wasm backend's fits (backend/cpu/vmath.h).
fn erf_(v: f32) -> f32 {
  let a = abs(v);
  if (a <= 1.0) {
    let s = v * v;
    var p = 7.64065733979e-5;
    p = fma(p, s, -7.94025706744e-4);
    p = fma(p, s, 5.17948720202e-3);
    p = fma(p, s, -2.68484339517e-2);
    p = fma(p, s, 1.12834255305e-1);
    p = fma(p, s, -3.76126054120e-1);
    p = fma(p, s, 1.12837915821);
    return v * p;
  }
  let b = min(a, 4.0);
  let u = 1.0 / b - 0.625;
  var q = -1.83039334914e-2;
  q = fma(q, u, 4.13988985480e-2);
  q = fma(q, u, -4.72132315855e-2);
  q = fma(q, u, 2.34422524821e-2);
  q = fma(q, u, 4.37634104909e-2);
  q = fma(q, u, -1.72396011878e-1);
  q = fma(q, u, 3.82283837259e-1);
  q = fma(q, u, 3.05952993590e-1);
  return sign(v) * (1.0 - exp(-b * b) * q);
}
