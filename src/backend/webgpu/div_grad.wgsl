// DivGrad's gradients, each summed over the axes its operand was broadcast along: one thread
// per element of the operand's gradient adds its terms in order.
//   which 0: dA = sum dy / b
//   which 1: dB = sum -(dy a / (b b))
struct U {
  n: u32, gx: u32, which: u32, rank: u32,
  dims: array<vec4u, 2>,     // dy's dims, innermost last
  sa: array<vec4u, 2>,       // a's strides in dy's axes, 0 along a broadcast axis
  sb: array<vec4u, 2>,
  reduced: u32,              // bit k: the gradient sums over dy's axis k
  m: u32,                    // the terms of each sum (the product of the reduced dims)
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> g: array<f32>;

// include: bcast

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let t = (wg.y * u.gx + wg.x) * 256u + li;
  if (t >= u.n) { return; }
  // the kept axes' part of dy's, a's and b's offsets
  var rest = t;
  var stride = 1u;
  var i0 = 0u;
  var a0 = 0u;
  var b0 = 0u;
  for (var d = 0u; d < u.rank; d++) {
    let axis = u.rank - 1u - d;
    let size = at(u.dims, axis);
    if ((u.reduced & (1u << axis)) == 0u) {
      let k = rest % size;
      rest = rest / size;
      i0 += k * stride;
      a0 += k * at(u.sa, axis);
      b0 += k * at(u.sb, axis);
    }
    stride *= size;
  }
  var s = 0.0;
  for (var j = 0u; j < u.m; j++) {
    var r = j;
    var st = 1u;
    var i = i0;
    var ia = a0;
    var ib = b0;
    for (var d = 0u; d < u.rank; d++) {
      let axis = u.rank - 1u - d;
      let size = at(u.dims, axis);
      if ((u.reduced & (1u << axis)) != 0u) {
        let k = r % size;
        r = r / size;
        i += k * st;
        ia += k * at(u.sa, axis);
        ib += k * at(u.sb, axis);
      }
      st *= size;
    }
    let bv = b[ib];
    if (u.which == 0u) { s += dy[i] / bv; } else { s -= dy[i] * a[ia] / (bv * bv); }
  }
  g[t] = s;
}
