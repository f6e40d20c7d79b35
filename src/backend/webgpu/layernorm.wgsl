// Layer normalization, one workgroup per row of n: the mean, then the variance as the mean of
// squared deviations, each a fixed strided share per thread and a fixed-order tree reduction
// (the same bits run to run); y = (x - mean) * inv_std * scale (+ bias, flags 1); the row's
// mean (flags 2) and inv_std = 1 / sqrt(var + eps) (flags 4) where the node asks for them.
struct U { rows: u32, gx: u32, n: u32, eps: f32, flags: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> scale: array<f32>;
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read_write> mean: array<f32>;
@group(0) @binding(6) var<storage, read_write> inv_std: array<f32>;

// include: tree

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let r = wg.y * u.gx + wg.x;
  if (r >= u.rows) { return; }
  let base = r * u.n;
  var s = 0.0;
  for (var j = li; j < u.n; j += 64u) { s += x[base + j]; }
  let mu = select(0.0, tree_sum(li, s) / f32(u.n), u.n > 0u);
  var q = 0.0;
  for (var j = li; j < u.n; j += 64u) {
    let d = x[base + j] - mu;
    q = fma(d, d, q);
  }
  let inv = 1.0 / sqrt(select(0.0, tree_sum(li, q) / f32(u.n), u.n > 0u) + u.eps);
  for (var j = li; j < u.n; j += 64u) {
    var v = (x[base + j] - mu) * inv * scale[j];
    if ((u.flags & 1u) != 0u) { v += bias[j]; }
    y[base + j] = v;
  }
  if (li == 0u) {
    if ((u.flags & 2u) != 0u) { mean[r] = mu; }
    if ((u.flags & 4u) != 0u) { inv_std[r] = inv; }
  }
}
