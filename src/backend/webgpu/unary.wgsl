// y = f(x), elementwise over n floats. The op codes are run_unary.c's gpu_unary enum.
struct U {
  n: u32, gx: u32, op: u32, pad: u32,
  alpha: f32, beta: f32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

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

fn f(v: f32) -> f32 {
  switch u.op {
    case 0u: { return -v; }                                   // Neg
    case 1u: { return abs(v); }                               // Abs
    case 2u: { return sqrt(v); }                              // Sqrt
    case 3u: { return max(v, 0.0); }                          // Relu
    case 4u: { return 1.0 / v; }                              // Reciprocal
    case 5u: { return select(u.alpha * v, v, v >= 0.0); }     // LeakyRelu
    case 6u: { return exp(v); }                               // Exp
    case 7u: { return log(v); }                               // Log
    case 8u: { return tanh(v); }                              // Tanh
    case 9u: { return sigmoid(v); }                           // Sigmoid
    case 10u: { return erf_(v); }                             // Erf
    case 11u: { return 0.5 * v * (1.0 + erf_(v * 0.70710678118654752)); } // Gelu
    case 12u: { return v; }                                   // a copy
    case 13u: { return sign(v); }                             // Sign
    case 14u: { return max(v, 0.0) + log(1.0 + exp(-abs(v))); } // Softplus
    default: { return v; }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i < u.n) { y[i] = f(x[i]); }
}
