// LSTM's recurrence (ONNX's gates i, o, f, c; the default activations sigmoid, tanh, tanh), one
// workgroup per batch row (x) and direction (y), its time steps in order: a step's gate
// pre-activations are h R^T + (x W^T + (Wb + Rb)), as the CPU kernel associates them, with x W^T
// of every step computed before by one GEMM into `work` ([dirs, seq * batch, 4H]). h R^T: one
// thread per gate sums its H products in order; then one thread per unit updates c and h.
// Writes every step's hidden state (hall), cell state (call, or `work` from u.off) and, for
// LSTMTraining, its activated gates (iofc), in ONNX's [seq, dirs, batch, ...] layout.
// flags: 1 bias, 2 h0, 4 c0, 8 iofc, 16 the cell states into `work` from u.off
// include: rnn_uniform
@group(0) @binding(1) var<storage, read_write> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> r: array<f32>;
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> h0: array<f32>;
@group(0) @binding(5) var<storage, read_write> c0: array<f32>;
@group(0) @binding(6) var<storage, read_write> hall: array<f32>;
@group(0) @binding(7) var<storage, read_write> call: array<f32>;
@group(0) @binding(8) var<storage, read_write> iofc: array<f32>;

// include: math

// (the encoder refuses H > 640: 6 H floats of workgroup memory)
var<workgroup> gates: array<f32, 2560>;
var<workgroup> hs: array<f32, 640>;
var<workgroup> cs: array<f32, 640>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let b = wg.x;
  let d = wg.y;
  let H = u.H;
  let G = 4u * H;
  let rev = backwards(d);
  let s0 = (d * u.B + b) * H;
  for (var j = li; j < H; j += 256u) {
    var h = 0.0;
    var c = 0.0;
    if ((u.flags & 2u) != 0u) { h = h0[s0 + j]; }
    if ((u.flags & 4u) != 0u) { c = c0[s0 + j]; }
    hs[j] = h;
    cs[j] = c;
  }
  workgroupBarrier();
  for (var k = 0u; k < u.S; k++) {
    let t = select(k, u.S - 1u - k, rev);
    let xrow = (d * u.S * u.B + t * u.B + b) * G;
    for (var g = li; g < G; g += 256u) {
      let rrow = (d * G + g) * H;
      var acc = 0.0;
      for (var q = 0u; q < H; q++) { acc = fma(hs[q], r[rrow + q], acc); }
      var xb = work[xrow + g];
      if ((u.flags & 1u) != 0u) { xb = xb + (bias[d * 2u * G + g] + bias[d * 2u * G + G + g]); }
      gates[g] = acc + xb;
    }
    workgroupBarrier();
    let row = (t * u.D + d) * u.B + b;
    for (var j = li; j < H; j += 256u) {
      let gi = sigmoid(gates[j]);
      let go = sigmoid(gates[H + j]);
      let gf = sigmoid(gates[2u * H + j]);
      let gc = tanh(gates[3u * H + j]);
      let c = gf * cs[j] + gi * gc;
      let h = go * tanh(c);
      cs[j] = c;
      hs[j] = h;
      hall[row * H + j] = h;
      if ((u.flags & 16u) != 0u) { work[u.off + row * H + j] = c; } else { call[row * H + j] = c; }
      if ((u.flags & 8u) != 0u) {
        iofc[row * G + j] = gi;
        iofc[row * G + H + j] = go;
        iofc[row * G + 2u * H + j] = gf;
        iofc[row * G + 3u * H + j] = gc;
      }
    }
    workgroupBarrier();
  }
}
