// A train step's BatchNormalization running statistics into the parameters they update, as
// the CPU backend's module does after its steps: the mean as the step computed it; the variance
// ONNX's momentum * old + (1 - momentum) * var_pop, corrected to PyTorch's unbiased estimate:
// keep + (onnx - keep) * n / (n - 1), keep = momentum * old, n the elements per channel (in
// float32 here, in float64 there). The old values go to `backup` first: a step taken back
// restores them. A step whose loss was not finite (loss_check.wgsl's status 0) writes nothing.
struct U { C: u32, gx: u32, momentum: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> status: array<u32>;
@group(0) @binding(2) var<storage, read> out_mean: array<f32>;
@group(0) @binding(3) var<storage, read> out_var: array<f32>;
@group(0) @binding(4) var<storage, read> count: array<u32>; // an int64 or int32: its low word
@group(0) @binding(5) var<storage, read_write> run_mean: array<f32>;
@group(0) @binding(6) var<storage, read_write> run_var: array<f32>;
@group(0) @binding(7) var<storage, read_write> backup: array<f32>; // [mean C | var C]

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let c = (wg.y * u.gx + wg.x) * 64u + li;
  if (c >= u.C) { return; }
  let old = run_var[c];
  backup[c] = run_mean[c];
  backup[u.C + c] = old;
  if (status[0] == 0u) { return; }
  let n = f32(count[0]) / f32(u.C);
  let corr = select(1.0, n / (n - 1.0), n > 1.0);
  let keep = u.momentum * old;
  run_mean[c] = out_mean[c];
  run_var[c] = keep + (out_var[c] - keep) * corr;
}
