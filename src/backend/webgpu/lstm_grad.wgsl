// LSTMGrad's recurrence (the CPU kernel's wt_lstm_backward, default activations, no
// peepholes): one workgroup per batch row (x) and direction (y), its time steps from the last.
// A step's gate gradients (dA: i, o, f, c, into `da` as [dirs, seq * batch, 4H]) come from the
// gradient reaching its hidden state (dh: the later step's dA R, plus dHAll) and cell state (dc),
// and the gates and cell states the forward kept (iofc, call); dh for the step before is then
// dA R, one thread per unit summing its 4H products in order. `state` holds dh then dc
// ([2, dirs, batch, H]): the initial ones where the flags say (dHt, dCt copied there), the
// final ones (dH0, dC0) after. The weight gradients are GEMMs over dA after this; for dR's, it
// writes each direction's first step's previous hidden state (H0, or zeros) into `state` from
// u.off, where the steps' previous hidden states are gathered ([dirs, seq * batch, H]).
// flags: 1 dHAll, 2 c0, 4 dh in state, 8 dc in state, 16 h0
// include: rnn_uniform
@group(0) @binding(1) var<storage, read_write> r: array<f32>;
@group(0) @binding(2) var<storage, read_write> call: array<f32>;
@group(0) @binding(3) var<storage, read_write> iofc: array<f32>;
@group(0) @binding(4) var<storage, read_write> dhall: array<f32>;
@group(0) @binding(5) var<storage, read_write> c0: array<f32>;
@group(0) @binding(6) var<storage, read_write> h0: array<f32>;
@group(0) @binding(7) var<storage, read_write> da: array<f32>;
@group(0) @binding(8) var<storage, read_write> state: array<f32>;

// (the encoder refuses H > 640: 6 H floats of workgroup memory)
var<workgroup> das: array<f32, 2560>;
var<workgroup> dh: array<f32, 640>;
var<workgroup> dc: array<f32, 640>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let b = wg.x;
  let d = wg.y;
  let H = u.H;
  let G = 4u * H;
  let rev = backwards(d);
  let s0 = (d * u.B + b) * H;
  let dcs = u.D * u.B * H; // where dc starts in state
  let first = select(0u, u.S - 1u, rev);
  for (var j = li; j < H; j += 256u) {
    var hp = 0.0;
    if ((u.flags & 16u) != 0u) { hp = h0[s0 + j]; }
    state[u.off + (d * u.S * u.B + first * u.B + b) * H + j] = hp;
    var h = 0.0;
    var c = 0.0;
    if ((u.flags & 4u) != 0u) { h = state[s0 + j]; }
    if ((u.flags & 8u) != 0u) { c = state[dcs + s0 + j]; }
    dh[j] = h;
    dc[j] = c;
  }
  workgroupBarrier();
  for (var k = u.S; k > 0u; k--) {
    let t = select(k - 1u, u.S - k, rev);
    let row = (t * u.D + d) * u.B + b;
    let tp = select(t - 1u, t + 1u, rev); // the step before, when k > 1
    let prow = (tp * u.D + d) * u.B + b;
    let arow = (d * u.S * u.B + t * u.B + b) * G;
    for (var j = li; j < H; j += 256u) {
      var dhj = dh[j];
      if ((u.flags & 1u) != 0u) { dhj = dhj + dhall[row * H + j]; }
      let gi = iofc[row * G + j];
      let go = iofc[row * G + H + j];
      let gf = iofc[row * G + 2u * H + j];
      let gg = iofc[row * G + 3u * H + j];
      var cp = 0.0;
      if (k > 1u) { cp = call[prow * H + j]; } else if ((u.flags & 2u) != 0u) { cp = c0[s0 + j]; }
      let tc = tanh(call[row * H + j]);
      let dao = dhj * tc * go * (1.0 - go);
      let dct = dc[j] + dhj * go * (1.0 - tc * tc);
      let dai = dct * gg * gi * (1.0 - gi);
      let daf = dct * cp * gf * (1.0 - gf);
      let dag = dct * gi * (1.0 - gg * gg);
      dc[j] = dct * gf;
      das[j] = dai;
      das[H + j] = dao;
      das[2u * H + j] = daf;
      das[3u * H + j] = dag;
      da[arow + j] = dai;
      da[arow + H + j] = dao;
      da[arow + 2u * H + j] = daf;
      da[arow + 3u * H + j] = dag;
    }
    workgroupBarrier();
    for (var q = li; q < H; q += 256u) {
      var acc = 0.0;
      for (var g = 0u; g < G; g++) { acc = fma(das[g], r[(d * G + g) * H + q], acc); }
      dh[q] = acc;
    }
    workgroupBarrier();
  }
  for (var j = li; j < H; j += 256u) {
    state[s0 + j] = dh[j];
    state[dcs + s0 + j] = dc[j];
  }
}
