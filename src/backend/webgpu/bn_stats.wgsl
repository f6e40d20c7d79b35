// Batch norm's batch statistics, one workgroup per channel c of x [batch, C, S]: the mean, then
// the biased variance as the mean of squared deviations from it (two passes: a large mean does
// not cancel the variance). Each of the 64 threads sums a fixed strided share in order, and a
// tree reduction in workgroup memory adds the shares in a fixed order: the same bits run to run.
struct U { n: u32, gx: u32, C: u32, S: u32, eps: f32, momentum: f32, flags: u32, batch: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> mean: array<f32>;
@group(0) @binding(3) var<storage, read_write> vars: array<f32>;

// include: tree

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let c = wg.y * u.gx + wg.x;
  if (c >= u.C) { return; }
  let m = u.batch * u.S;
  var s = 0.0;
  for (var j = li; j < m; j += 64u) { s += x[((j / u.S) * u.C + c) * u.S + j % u.S]; }
  let mu = select(0.0, tree_sum(li, s) / f32(m), m > 0u);
  var q = 0.0;
  for (var j = li; j < m; j += 64u) {
    let d = x[((j / u.S) * u.C + c) * u.S + j % u.S] - mu;
    q = fma(d, d, q);
  }
  let v = select(0.0, tree_sum(li, q) / f32(m), m > 0u);
  if (li == 0u) {
    mean[c] = mu;
    vars[c] = v;
  }
}
