// y[b] = alpha * op(a[b]) op(b[b]) + beta * bias (+ Relu): op(a) is M x K, op(b) is K x N, both
// read transposed or not in place (the tile loads do it). A workgroup computes a 64 x 64 tile
// of one matrix of the batch (workgroup z), its 16 x 16 threads 4 x 4 outputs each, over slices
// of 16 along K staged in workgroup memory (on an H200 twice the rate of 32 x 32 tiles from
// n = 1024 on: docs/performance.md). Each output sums its K products in order, in one
// thread: the bits do not depend on the grid. A float16 operand (a frozen weight, flag 16 for
// a, 32 for b) is two to a word, widened as the tiles load it.
struct U {
  M: u32, N: u32, K: u32, flags: u32,  // flags: 1 trans a, 2 trans b, 4 bias, 8 relu, 16/32 a/b float16
  alpha: f32, beta: f32, bias_rs: u32, bias_cs: u32,
  nb: u32, a_off: u32, b_off: u32, y_off: u32, // where a's, b's and y's first matrix starts
  batch: array<vec4u, 2>,              // the output's batch dims, outermost first (nb used)
  a_stride: array<vec4u, 2>,           // a's and b's matrix stride per batch dim (0: broadcast)
  b_stride: array<vec4u, 2>,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> a: array<u32>;
@group(0) @binding(2) var<storage, read_write> b: array<u32>;
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

const TM = 64u;
const TN = 64u;
const TK = 16u;
const THREADS = 256u;
var<workgroup> As: array<f32, 1024>;  // TK x TM
var<workgroup> Bs: array<f32, 1024>;  // TK x TN

// include: bcast

// include: half
fn load_a(i: u32) -> f32 {
  let half = (u.flags & 16u) != 0u;
  return widen(a[select(i, i / 2u, half)], i, half);
}
fn load_b(i: u32) -> f32 {
  let half = (u.flags & 32u) != 0u;
  return widen(b[select(i, i / 2u, half)], i, half);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(local_invocation_index) li: u32) {
  // where this matrix of the batch starts in a and b
  var rest = wg.z;
  var a0 = u.a_off;
  var b0 = u.b_off;
  for (var d = 0u; d < u.nb; d++) {
    let axis = u.nb - 1u - d;
    let size = at(u.batch, axis);
    let k = rest % size;
    rest = rest / size;
    a0 += k * at(u.a_stride, axis);
    b0 += k * at(u.b_stride, axis);
  }
  let ta = (u.flags & 1u) != 0u;
  let tb = (u.flags & 2u) != 0u;
  let row0 = wg.y * TM;
  let col0 = wg.x * TN;
  var acc: array<f32, 16>;
  for (var k0 = 0u; k0 < u.K; k0 += TK) {
    for (var i = li; i < TM * TK; i += THREADS) {
      // consecutive threads read consecutive elements of a row of op(a) (along k, or along m
      // when a is read transposed)
      let m = select(i / TK, i % TM, ta);
      let k = select(i % TK, i / TM, ta);
      let gm = row0 + m;
      let gk = k0 + k;
      var v = 0.0;
      if (gm < u.M && gk < u.K) { v = load_a(a0 + select(gm * u.K + gk, gk * u.M + gm, ta)); }
      As[k * TM + m] = v;
    }
    for (var i = li; i < TN * TK; i += THREADS) {
      let n = select(i % TN, i / TK, tb);
      let k = select(i / TN, i % TK, tb);
      let gn = col0 + n;
      let gk = k0 + k;
      var v = 0.0;
      if (gn < u.N && gk < u.K) { v = load_b(b0 + select(gk * u.N + gn, gn * u.K + gk, tb)); }
      Bs[k * TN + n] = v;
    }
    workgroupBarrier();
    for (var k = 0u; k < TK; k++) {
      var av: array<f32, 4>;
      var bv: array<f32, 4>;
      for (var r = 0u; r < 4u; r++) { av[r] = As[k * TM + lid.y + r * 16u]; }
      for (var c = 0u; c < 4u; c++) { bv[c] = Bs[k * TN + lid.x + c * 16u]; }
      for (var r = 0u; r < 4u; r++) {
        for (var c = 0u; c < 4u; c++) { acc[r * 4u + c] = fma(av[r], bv[c], acc[r * 4u + c]); }
      }
    }
    workgroupBarrier();
  }
  let y0 = u.y_off + wg.z * u.M * u.N;
  for (var r = 0u; r < 4u; r++) {
    let gm = row0 + lid.y + r * 16u;
    if (gm >= u.M) { continue; }
    for (var c = 0u; c < 4u; c++) {
      let gn = col0 + lid.x + c * 16u;
      if (gn >= u.N) { continue; }
      var v = u.alpha * acc[r * 4u + c];
      if ((u.flags & 4u) != 0u) { v += u.beta * bias[gm * u.bias_rs + gn * u.bias_cs]; }
      if ((u.flags & 8u) != 0u) { v = select(v, 0.0, v < 0.0); } // a fused Relu: NaN kept, as on the CPU
      y[y0 + gm * u.N + gn] = v;
    }
  }
}
