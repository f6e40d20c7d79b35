// BatchNormInternal's statistic outputs, one thread per channel, each written where its flag
// asks: 1 running mean = input_mean * momentum + batch mean * (1 - momentum), 2 running var
// likewise from the biased batch variance, 4 the batch mean, 8 1 / sqrt(batch var + eps).
struct U { n: u32, gx: u32, C: u32, S: u32, eps: f32, momentum: f32, flags: u32, batch: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> in_mean: array<f32>;
@group(0) @binding(2) var<storage, read_write> in_var: array<f32>;
@group(0) @binding(3) var<storage, read_write> bmean: array<f32>;
@group(0) @binding(4) var<storage, read_write> bvar: array<f32>;
@group(0) @binding(5) var<storage, read_write> run_mean: array<f32>;
@group(0) @binding(6) var<storage, read_write> run_var: array<f32>;
@group(0) @binding(7) var<storage, read_write> saved_mean: array<f32>;
@group(0) @binding(8) var<storage, read_write> inv_std: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let c = (wg.y * u.gx + wg.x) * 64u + li;
  if (c >= u.C) { return; }
  let keep = 1.0 - u.momentum;
  if ((u.flags & 1u) != 0u) { run_mean[c] = in_mean[c] * u.momentum + bmean[c] * keep; }
  if ((u.flags & 2u) != 0u) { run_var[c] = in_var[c] * u.momentum + bvar[c] * keep; }
  if ((u.flags & 4u) != 0u) { saved_mean[c] = bmean[c]; }
  if ((u.flags & 8u) != 0u) { inv_std[c] = 1.0 / sqrt(bvar[c] + u.eps); }
}
