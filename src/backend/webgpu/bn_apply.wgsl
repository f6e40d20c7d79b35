// Batch normalization with given statistics, one thread per element of x [batch, C, S]:
// y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a per channel.
struct U { n: u32, gx: u32, C: u32, S: u32, eps: f32, momentum: f32, flags: u32, batch: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> scale: array<f32>;
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> vars: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let c = (i / u.S) % u.C;
  let a = scale[c] / sqrt(vars[c] + u.eps);
  let b = bias[c] - mean[c] * a;
  y[i] = fma(x[i], a, b);
}
