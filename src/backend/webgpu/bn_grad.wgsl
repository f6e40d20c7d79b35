// BatchNormalizationGrad, one workgroup per channel c of x [batch, C, S] (mean and inv_std the
// forward's batch statistics): dBias = sum dy, dScale = inv_std * sum dy (x - mean), each a
// fixed strided share per thread and a fixed-order tree reduction (the same bits run to run);
// then the channel's dX = k (m dy - dBias - (x - mean) inv_std dScale), k = scale inv_std / m,
// m = batch * S. flags: 1 dX, 2 dScale, 4 dBias wanted.
struct U { C: u32, gx: u32, batch: u32, S: u32, flags: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> scale: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> inv_std: array<f32>;
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;
@group(0) @binding(7) var<storage, read_write> dscale: array<f32>;
@group(0) @binding(8) var<storage, read_write> dbias: array<f32>;

// include: tree

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let c = wg.y * u.gx + wg.x;
  if (c >= u.C) { return; }
  let m = u.batch * u.S;
  let mu = mean[c];
  let inv = inv_std[c];
  var sb = 0.0;
  var sx = 0.0;
  for (var j = li; j < m; j += 64u) {
    let i = ((j / u.S) * u.C + c) * u.S + j % u.S;
    sb += dy[i];
    sx = fma(dy[i], x[i] - mu, sx);
  }
  let db = tree_sum(li, sb);
  let ds = tree_sum(li, sx) * inv;
  if (li == 0u) {
    if ((u.flags & 4u) != 0u) { dbias[c] = db; }
    if ((u.flags & 2u) != 0u) { dscale[c] = ds; }
  }
  if ((u.flags & 1u) == 0u || m == 0u) { return; }
  // dx = a dy + b x + b0
  let k = scale[c] * inv / f32(m);
  let a = k * f32(m);
  let b = -k * inv * ds;
  let b0 = -k * db - b * mu;
  for (var j = li; j < m; j += 64u) {
    let i = ((j / u.S) * u.C + c) * u.S + j % u.S;
    dx[i] = fma(dy[i], a, b0) + x[i] * b;
  }
}
