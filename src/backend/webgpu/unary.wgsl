// y = f(x), elementwise over n floats. The op codes are run_unary.c's gpu_unary enum.
struct U {
  n: u32, gx: u32, op: u32, pad: u32,
  alpha: f32, beta: f32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

// include: math

fn f(v: f32) -> f32 {
  switch u.op {
    case 0u: { return -v; }                                   // Neg
    case 1u: { return abs(v); }                               // Abs
    case 2u: { return sqrt(v); }                              // Sqrt
    case 3u: { return pmax(v, 0.0); }                         // Relu
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
    case 15u: { return v * clamp(v * (1.0 / 6.0) + 0.5, 0.0, 1.0); } // HardSwish
    case 16u: { return v * sigmoid(u.alpha * v); }           // QuickGelu, Swish
    case 17u: { return clamp(u.alpha * v + u.beta, 0.0, 1.0); } // HardSigmoid
    case 18u: { return v / (1.0 + abs(v)); }                  // Softsign
    case 19u: { return floor(v); }                            // Floor
    case 20u: { return ceil(v); }                             // Ceil
    case 21u: { return round(v); }                            // Round (halves to even)
    case 22u: { return select(v, u.alpha * (exp(v) - 1.0), v < 0.0); } // Elu
    case 23u: {                                               // Gelu, approximate = tanh
      return 0.5 * v * (1.0 + tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
    }
    case 24u: { return pmin(pmax(v, u.alpha), u.beta); }      // Clip (as the CPU: not clamp())
    default: { return v; }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i < u.n) { y[i] = f(x[i]); }
}
