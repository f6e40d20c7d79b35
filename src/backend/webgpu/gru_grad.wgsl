// GRUGrad's recurrence (the CPU kernel's wt_gru_backward, default activations): one workgroup
// per batch row (x) and direction (y), its time steps from the last. A step's gate gradients
// (dA: z, r, h, into `work0` as [dirs, seq * batch, 3H]) come from the gradient reaching its
// hidden state (dh: dHAll plus what the later step sent back) and the gates the forward kept
// (zrh); the recurrent weights' gradient needs, per step, the previous hidden state (into
// `work1` from off) and the candidate's pair lh, rin (lh into `work1` after it, rin into
// `work0` from off2): dR's candidate rows are lh^T rin. `work1` starts with dh ([dirs, batch,
// H]): dHt where flag 4 says, dH0 after. linear_before_reset recomputes q = h Rh^T + Rbh.
// flags: 1 dHAll, 4 dh in work1, 16 h0, 32 linear_before_reset, 64 bias
// include: rnn_uniform
@group(0) @binding(1) var<storage, read_write> r: array<f32>;
@group(0) @binding(2) var<storage, read_write> hall: array<f32>;
@group(0) @binding(3) var<storage, read_write> h0: array<f32>;
@group(0) @binding(4) var<storage, read_write> zrh: array<f32>;
@group(0) @binding(5) var<storage, read_write> dhall: array<f32>;
@group(0) @binding(6) var<storage, read_write> bias: array<f32>;
@group(0) @binding(7) var<storage, read_write> work0: array<f32>;
@group(0) @binding(8) var<storage, read_write> work1: array<f32>;

// (the encoder refuses H > 512: 7 H floats of workgroup memory)
var<workgroup> das: array<f32, 1536>;
var<workgroup> dh: array<f32, 512>;
var<workgroup> dn: array<f32, 512>;
var<workgroup> hp: array<f32, 512>;
var<workgroup> lh: array<f32, 512>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let b = wg.x;
  let d = wg.y;
  let H = u.H;
  let G = 3u * H;
  let SB = u.S * u.B;
  let rev = backwards(d);
  let lbr = (u.flags & 32u) != 0u;
  let s0 = (d * u.B + b) * H;
  let lh_off = u.off + u.D * SB * H; // lh after the previous hidden states in work1
  for (var j = li; j < H; j += 256u) {
    var v = 0.0;
    if ((u.flags & 4u) != 0u) { v = work1[s0 + j]; }
    dh[j] = v;
  }
  workgroupBarrier();
  for (var k = u.S; k > 0u; k--) {
    let t = select(k - 1u, u.S - k, rev);
    let row = (t * u.D + d) * u.B + b;
    let tp = select(t - 1u, t + 1u, rev); // the step before, when k > 1
    let prow = (tp * u.D + d) * u.B + b;
    let srow = d * SB + t * u.B + b; // this step's row of the scratch tables
    for (var j = li; j < H; j += 256u) {
      var h = 0.0;
      if (k > 1u) { h = hall[prow * H + j]; } else if ((u.flags & 16u) != 0u) { h = h0[s0 + j]; }
      hp[j] = h;
      work1[u.off + srow * H + j] = h;
      if ((u.flags & 1u) != 0u) { dh[j] = dh[j] + dhall[row * H + j]; }
    }
    workgroupBarrier();
    for (var j = li; j < H; j += 256u) {
      let z = zrh[row * G + j];
      let rr = zrh[row * G + H + j];
      let hh = zrh[row * G + 2u * H + j];
      let dz = dh[j] * (hp[j] - hh);
      let dah = dh[j] * (1.0 - z) * (1.0 - hh * hh);
      das[j] = dz * z * (1.0 - z);
      das[2u * H + j] = dah;
      dn[j] = dh[j] * z;
      if (lbr) {
        let rrow = (d * G + 2u * H + j) * H;
        var q = 0.0;
        for (var i = 0u; i < H; i++) { q = fma(hp[i], r[rrow + i], q); }
        if ((u.flags & 64u) != 0u) { q = q + bias[d * 2u * G + G + 2u * H + j]; }
        das[H + j] = dah * q * rr * (1.0 - rr);
        lh[j] = dah * rr;
        work0[u.off2 + srow * H + j] = hp[j];
      } else {
        lh[j] = dah;
        work0[u.off2 + srow * H + j] = rr * hp[j];
      }
      work1[lh_off + srow * H + j] = lh[j];
    }
    workgroupBarrier();
    // what the candidate's gradient sends to h: through r (lh Rh), or through r and h (dah Rh)
    for (var c = li; c < H; c += 256u) {
      var acc = 0.0;
      for (var j = 0u; j < H; j++) { acc = fma(lh[j], r[(d * G + 2u * H + j) * H + c], acc); }
      if (lbr) {
        dn[c] = dn[c] + acc;
      } else {
        let rr = zrh[row * G + H + c];
        das[H + c] = acc * hp[c] * rr * (1.0 - rr);
        dn[c] = dn[c] + acc * rr;
      }
    }
    workgroupBarrier();
    for (var c = li; c < H; c += 256u) {
      var acc = 0.0;
      for (var g = 0u; g < 2u * H; g++) { acc = fma(das[g], r[(d * G + g) * H + c], acc); }
      dh[c] = dn[c] + acc;
    }
    let arow = srow * G;
    for (var g = li; g < G; g += 256u) { work0[arow + g] = das[g]; }
    workgroupBarrier();
  }
  for (var j = li; j < H; j += 256u) { work1[s0 + j] = dh[j]; }
}
