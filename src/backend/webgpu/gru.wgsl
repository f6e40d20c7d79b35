// GRU's recurrence (ONNX's gates z, r, h; the default activations sigmoid, tanh), one workgroup
// per batch row (x) and direction (y), its time steps in order, as the CPU kernel computes it:
// z and r from h R^T + (x W^T + (Wb + Rb)); the candidate tanh((r h) Rh^T + (x Wh^T + (Wbh +
// Rbh))), or with linear_before_reset tanh(r (h Rh^T + Rbh) + (x Wh^T + Wbh)); h = hh + z (h -
// hh). x W^T of every step comes from one GEMM before, in `work` ([dirs, seq * batch, 3H]). Writes
// every step's hidden state (hall) and, for GRUTraining, its gates z, r, hh (zrh), in ONNX's
// [seq, dirs, batch, ...] layout.
// flags: 1 bias, 2 h0, 8 zrh, 32 linear_before_reset
// include: rnn_uniform
@group(0) @binding(1) var<storage, read_write> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> r: array<f32>;
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> h0: array<f32>;
@group(0) @binding(5) var<storage, read_write> hall: array<f32>;
@group(0) @binding(6) var<storage, read_write> zrh: array<f32>;

// include: math

// (the encoder refuses H > 640: 5 H floats of workgroup memory)
var<workgroup> gates: array<f32, 1920>;
var<workgroup> hs: array<f32, 640>;
var<workgroup> rh: array<f32, 640>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let b = wg.x;
  let d = wg.y;
  let H = u.H;
  let G = 3u * H;
  let rev = backwards(d);
  let lbr = (u.flags & 32u) != 0u;
  let has_bias = (u.flags & 1u) != 0u;
  let b0 = d * 2u * G; // this direction's Wb; its Rb from b0 + G
  let s0 = (d * u.B + b) * H;
  for (var j = li; j < H; j += 256u) {
    var h = 0.0;
    if ((u.flags & 2u) != 0u) { h = h0[s0 + j]; }
    hs[j] = h;
  }
  workgroupBarrier();
  for (var k = 0u; k < u.S; k++) {
    let t = select(k, u.S - 1u - k, rev);
    let xrow = (d * u.S * u.B + t * u.B + b) * G;
    // z and r: h R^T + (x W^T + (Wb + Rb)); with linear_before_reset also q = h Rh^T
    let rows = select(2u * H, G, lbr);
    for (var g = li; g < rows; g += 256u) {
      let rrow = (d * G + g) * H;
      var acc = 0.0;
      for (var q = 0u; q < H; q++) { acc = fma(hs[q], r[rrow + q], acc); }
      if (g < 2u * H) {
        var xb = work[xrow + g];
        if (has_bias) { xb = xb + (bias[b0 + g] + bias[b0 + G + g]); }
        gates[g] = sigmoid(acc + xb);
      } else {
        gates[g] = acc; // q
      }
    }
    workgroupBarrier();
    if (!lbr) {
      for (var j = li; j < H; j += 256u) { rh[j] = gates[H + j] * hs[j]; }
      workgroupBarrier();
    }
    let row = (t * u.D + d) * u.B + b;
    for (var j = li; j < H; j += 256u) {
      var xh = work[xrow + 2u * H + j];
      var pre: f32;
      if (lbr) {
        if (has_bias) { xh = xh + bias[b0 + 2u * H + j]; }
        var q = gates[2u * H + j];
        if (has_bias) { q = q + bias[b0 + G + 2u * H + j]; }
        pre = gates[H + j] * q + xh;
      } else {
        if (has_bias) { xh = xh + (bias[b0 + 2u * H + j] + bias[b0 + G + 2u * H + j]); }
        let rrow = (d * G + 2u * H + j) * H;
        var acc = 0.0;
        for (var q = 0u; q < H; q++) { acc = fma(rh[q], r[rrow + q], acc); }
        pre = acc + xh;
      }
      let hh = tanh(pre);
      let z = gates[j];
      let h = hh + z * (hs[j] - hh);
      hall[row * H + j] = h;
      if ((u.flags & 8u) != 0u) {
        zrh[row * G + j] = z;
        zrh[row * G + H + j] = gates[H + j];
        zrh[row * G + 2u * H + j] = hh;
      }
      hs[j] = h; // (only this thread reads hs[j] in this phase)
    }
    workgroupBarrier();
  }
}
