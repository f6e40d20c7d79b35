// SoftmaxCrossEntropyLoss, per row (n, d) of scores [N, C, D]: the row's log-softmax
// (x - max - log sum exp, the sum in order) and its loss term and weight (0 and 0 for an
// ignored label; NaN for a label outside [0, C), which poisons the loss).
struct U {
  rows: u32, C: u32, D: u32, gx: u32,
  lstride: u32, has_ignore: u32, ignore: i32, write_lp: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> labels: array<i32>;  // int32, or int64's low words
@group(0) @binding(3) var<storage, read_write> lp: array<f32>;
@group(0) @binding(4) var<storage, read_write> terms: array<vec2f>;  // (loss, weight) per row

// a quiet NaN (a run-time value: WGSL refuses NaN in constant expressions)
var<private> nan_bits: u32 = 0x7fc00000u;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let r = (wg.y * u.gx + wg.x) * 64u + li;
  if (r >= u.rows) { return; }
  let n = r / u.D;
  let d = r % u.D;
  let base = n * u.C * u.D + d;
  var m = -3.402823466e38;
  for (var c = 0u; c < u.C; c++) { m = max(m, x[base + c * u.D]); }
  var s = 0.0;
  for (var c = 0u; c < u.C; c++) { s += exp(x[base + c * u.D] - m); }
  let lse = log(s);
  if (u.write_lp != 0u) {
    for (var c = 0u; c < u.C; c++) { lp[base + c * u.D] = (x[base + c * u.D] - m) - lse; }
  }
  let t = labels[r * u.lstride];
  if (u.has_ignore != 0u && t == u.ignore) {
    terms[r] = vec2f(0.0, 0.0);
  } else if (t < 0 || u32(t) >= u.C) {
    terms[r] = vec2f(bitcast<f32>(nan_bits), 1.0);
  } else {
    terms[r] = vec2f(-((x[base + u32(t) * u.D] - m) - lse), 1.0);
  }
}
