// c = a op b with numpy broadcasting, over n output floats of rank <= 8. Strides are in
// elements, 0 along a broadcast axis. The op codes are kernel.h's wt_gpu_binop: arithmetic,
// the activations' gradients (a = dy, b = the forward input or output), a copy of a (Expand).
// include: math
struct U {
  n: u32, gx: u32, op: u32, rank: u32,
  dims: array<vec4u, 2>,     // output dims, innermost last
  sa: array<vec4u, 2>,       // a's strides
  sb: array<vec4u, 2>,       // b's strides
  alpha: f32,                // LeakyReluGrad's slope, QuickGeluGrad's alpha
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

// a quiet NaN (a run-time value: WGSL refuses NaN in constant expressions)
var<private> nan_bits: u32 = 0x7fc00000u;

// include: bcast

// x^y: a whole exponent up to 64 in magnitude by repeated squaring (exact where the products
// are: x^2 = x * x, as the CPU computes it), others through exp2 / log2 of |x| (a negative x
// with a fractional y is NaN).
fn pow_(x: f32, y: f32) -> f32 {
  if (y == floor(y) && abs(y) <= 64.0) {
    var e = u32(abs(y));
    var b = x;
    var r = 1.0;
    loop {
      if ((e & 1u) != 0u) { r = r * b; }
      e = e >> 1u;
      if (e == 0u) { break; }
      b = b * b;
    }
    return select(r, 1.0 / r, y < 0.0);
  }
  if (x < 0.0) { return bitcast<f32>(nan_bits); }
  return exp2(y * log2(x));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let ia = bcast_offset(i, u.rank, u.dims, u.sa);
  let ib = bcast_offset(i, u.rank, u.dims, u.sb);
  let x = a[ia];
  let y = b[ib];
  var r: f32;
  switch u.op {
    case 0u: { r = x + y; }
    case 1u: { r = x - y; }
    case 2u: { r = x * y; }
    case 3u: { r = x / y; }
    case 4u: { r = pmin(x, y); }
    case 5u: { r = pmax(x, y); }
    case 6u: { r = select(x, x * y, x < 0.0); }             // PRelu
    case 7u: { r = select(0.0, x, y > 0.0); }               // ReluGrad
    case 8u: { r = x * y * (1.0 - y); }                     // SigmoidGrad
    case 9u: { r = x * (1.0 - y * y); }                     // TanhGrad
    case 10u: { r = select(u.alpha * x, x, y > 0.0); }      // LeakyReluGrad
    case 11u: { r = x; }                                    // a copy of a, broadcast
    case 12u: { r = pow_(x, y); }                           // Pow
    case 13u: {                                             // GeluGrad: Gelu'(y) = Phi(y) + y phi(y)
      r = x * (0.5 * (1.0 + erf_(y * 0.70710678118654752)) + y * 0.39894228040143268 * exp(-0.5 * y * y));
    }
    case 14u: {                                             // QuickGeluGrad: s (1 + v (1 - s)), v = alpha y
      let v = u.alpha * y;
      let s = sigmoid(v);
      r = x * (s * (1.0 + v * (1.0 - s)));
    }
    default: {                                              // FastGeluGrad (tanh Gelu)
      let a = 0.79788456080286536 * y;
      let g = a * 0.044715 * y * y;
      let t = tanh(a + g);
      r = x * (0.5 * ((1.0 + t) + (1.0 - t * t) * (a + 3.0 * g)));
    }
  }
  c[i] = r;
}
